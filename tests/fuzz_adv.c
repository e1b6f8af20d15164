/* fuzz_adv.c: the adv sub-libraries called with random descriptors, mostly odd ones, as fuzz.c
   calls the ops: RNNs through the v8 calls (data descriptors, weight space, forward, backward
   data and weights, weight parameters) and the legacy ones (per-step tensor descriptors, filter
   weights, forward inference and training, backward, the matrix and bias getters), multi-head
   attention (the attention descriptor, sequence data, weights, forward, backward data and
   weights) and CTC loss (host labels and the _v8 call); and the getters and descriptor calls of
   all three (the RNN descriptor's v8 and v6, bias, padding, projection, math and clip getters, dynamic
   builds and persistent plans, the weight and temporary space sizes, the attention descriptor and
   its buffer sizes, the CTC descriptor's three getters) on descriptors set, never set or NULL,
   some outputs NULL; a second set of each descriptor, odd values as often as not, must leave it
   reading back as set when it succeeds and as it was when it fails. Every descriptor is set from
   random parameters (out-of-range modes and types, sizes of 0 and below, mismatched shapes,
   lengths past the maximum, states left out); sizes stay small, so that each call runs in
   microseconds, and every count the library reads an array by stays within the arrays given.
   Buffers come from the sizes the library reports (16 bytes where a query refuses), now and then
   halved. fz_check holds every call to the invariants of "bad input never crashes"
   (fuzz_util.h); a getter that returns an address within the weights must return one whose span
   lies in them. */
#include "desc_util.h"
#include "fuzz_util.h"

#include <stdlib.h>
#include <string.h>

enum fa_op {
    FA_RNN_FWD, FA_RNN_BWD_DATA, FA_RNN_BWD_WEIGHTS, FA_RNN_WEIGHT_PARAMS, FA_LEGACY_INFER, FA_LEGACY_TRAIN,
    FA_LEGACY_BWD_DATA, FA_LEGACY_BWD_WEIGHTS, FA_LEGACY_PARAMS, FA_ATTN_FWD, FA_ATTN_BWD_DATA,
    FA_ATTN_BWD_WEIGHTS, FA_ATTN_WEIGHTS, FA_CTC, FA_CTC_V8, FA_RNN_GETTERS, FA_ATTN_GETTERS, FA_CTC_GETTERS, FA_OPS
};

/* Batch sizes, steps and sequence lengths stay at most 4 (fa_int(1, 3) gives 0 to 3, trand_int
   past the maximum by one): the arrays the library reads by them hold FA_ARRAY entries. */
enum { FA_ARRAY = 32, FA_STEPS = 4 };

static double fa_fill; /* every padding fill (any type's bytes fit) */
static bool fa_odd;    /* this iteration's parameters may be odd (one in three), else they are valid */

static bool fa_rare(void)
{
    return fa_odd && trand_int(0, 7) == 0;
}

/* fz_int and fz_mode in an odd iteration; a value in range in the others. */
static int fa_int(int lo, int hi)
{
    return fa_odd ? fz_int(lo, hi) : trand_int(lo, hi);
}

static int fa_mode(int n)
{
    return fa_odd ? fz_mode(n) : trand_int(0, n - 1);
}

/* dt, now and then (in an odd iteration) any type. */
static cudnnDataType_t fa_type(cudnnDataType_t dt)
{
    return fa_odd && trand_int(0, 3) == 0 ? fz_type() : dt;
}

/* n at least 1: the upper bound of a draw. */
static int fa_pos(int n)
{
    return n > 0 ? n : 1;
}

/* A sequence length in [1, max], now and then 0, -1 or max + 1. */
static int fa_length(int max)
{
    return !fa_rare() ? trand_int(1, fa_pos(max)) : trand_int(-1, fa_pos(max) + 1);
}

/* The size a query gave halved now and then (the call must then refuse). */
static size_t fa_shrunk(size_t bytes)
{
    return fa_rare() ? bytes / 2 : bytes;
}

/* A buffer for the span [addr, addr + bytes) that a getter returned: within [base, base + size). */
static void fa_within(const char *op, int it, const void *addr, size_t bytes, const struct fz_tensor *w)
{
    const unsigned char *a = addr, *lo = fz_at(w);
    if (a != NULL && (a < lo || a + bytes > lo + w->bytes))
        FAIL("iteration %d, %s: an address of %zu bytes outside the %zu bytes of the weights", it, op, bytes, w->bytes);
}

/* A packed 3-d tensor descriptor a x b x c of type dt (now and then another type, one dim odd, or
   a random descriptor altogether); its buffer is allocated with fz_tensor_alloc. `bounded`: its
   dims stay at most 6, where the library reads host arrays by them (CTC's lengths). */
static void fa_tensor3(struct fz_tensor *t, cudnnDataType_t dt, int a, int b, int c, bool bounded)
{
    memset(t, 0, sizeof *t);
    if (cudnnCreateTensorDescriptor(&t->desc) != CUDNN_STATUS_SUCCESS) return;
    if (!bounded && fa_rare()) {
        fz_set(t, NULL);
        return;
    }
    int dims[3] = {a, b, c};
    if (fa_rare()) dims[trand_int(0, 2)] = bounded ? trand_int(-1, 6) : fz_dim();
    int strides[3] = {dims[1] * dims[2], dims[2], 1};
    cudnnSetTensorNdDescriptor(t->desc, fa_type(dt), 3, dims, strides);
}

/* ---- RNN ------------------------------------------------------------------------------------ */

/* An RNN descriptor and the sizes it holds (as the getter reads them back, else as set). */
struct fa_rnn {
    cudnnRNNDescriptor_t d;
    cudnnDataType_t dtype;
    int input, hidden, proj, layers, dirs;
};

static void fa_rnn_init(struct fa_rnn *r, cudnnHandle_t h, cudnnDropoutDescriptor_t drop, bool legacy)
{
    memset(r, 0, sizeof *r);
    if (cudnnCreateRNNDescriptor(&r->d) != CUDNN_STATUS_SUCCESS) return;
    const cudnnDataType_t dtype = fa_type(CUDNN_DATA_FLOAT);
    const cudnnDataType_t prec = fa_type(dtype);
    const int hidden = fa_int(1, 4), input = fa_rare() ? fz_dim() : trand_int(0, 3) ? fa_int(1, 4) : hidden;
    const int proj = trand_int(0, 3) ? hidden : fa_int(1, 4), layers = fa_int(1, 2);
    const cudnnRNNAlgo_t algo = (cudnnRNNAlgo_t)(trand_int(0, 3) ? CUDNN_RNN_ALGO_STANDARD : fa_mode(4));
    const cudnnRNNMode_t cell = (cudnnRNNMode_t)fa_mode(4);
    const cudnnDirectionMode_t dir = (cudnnDirectionMode_t)fa_mode(2);
    const cudnnRNNInputMode_t in_mode = (cudnnRNNInputMode_t)(trand_int(0, 3) ? CUDNN_LINEAR_INPUT : fa_mode(2));
    cudnnDropoutDescriptor_t dd = trand_int(0, 3) ? NULL : drop;
    r->dtype = dtype, r->input = input, r->hidden = hidden, r->proj = proj, r->layers = layers;
    r->dirs = dir == CUDNN_BIDIRECTIONAL ? 2 : 1;
    if (!legacy) {
        cudnnSetRNNDescriptor_v8(r->d, algo, cell, (cudnnRNNBiasMode_t)fa_mode(4), dir, in_mode, dtype, prec,
                                 (cudnnMathType_t)fa_mode(4), input, hidden, proj, layers, dd,
                                 (uint32_t)(fa_rare() ? trand_int(0, 7) : trand_int(0, 1)));
    } else {
        cudnnSetRNNDescriptor_v6(h, r->d, hidden, layers, dd, in_mode, dir, cell, algo, prec);
        if (trand_int(0, 3) == 0) cudnnSetRNNProjectionLayers(h, r->d, proj, 0);
        if (trand_int(0, 3) == 0) cudnnSetRNNBiasMode(r->d, (cudnnRNNBiasMode_t)fa_mode(4));
    }
    if (trand_int(0, 3) == 0)
        cudnnRNNSetClip_v8(r->d, (cudnnRNNClipMode_t)fa_mode(2), (cudnnNanPropagation_t)fa_mode(2),
                           trand_uniform(-2, 2), trand_uniform(-2, 2));
    cudnnRNNAlgo_t a;
    cudnnRNNMode_t m;
    cudnnRNNBiasMode_t b;
    cudnnDirectionMode_t dm;
    cudnnRNNInputMode_t im;
    cudnnDataType_t dt, mp;
    cudnnMathType_t mt;
    int32_t is, hs, ps, nl;
    cudnnDropoutDescriptor_t dro;
    uint32_t aux;
    if (cudnnGetRNNDescriptor_v8(r->d, &a, &m, &b, &dm, &im, &dt, &mp, &mt, &is, &hs, &ps, &nl, &dro, &aux) ==
        CUDNN_STATUS_SUCCESS) {
        r->dtype = dt, r->hidden = hs, r->proj = ps, r->layers = nl;
        r->dirs = dm == CUDNN_BIDIRECTIONAL ? 2 : 1;
        if (!legacy) r->input = is;
    }
}

/* An RNN data descriptor of `steps` x `batch` x `vec` (now and then another type or vector size). */
static cudnnRNNDataDescriptor_t fa_rnn_data(cudnnDataType_t dt, cudnnRNNDataLayout_t layout, int steps, int batch,
                                            int vec, const int *lengths)
{
    cudnnRNNDataDescriptor_t d = NULL;
    if (cudnnCreateRNNDataDescriptor(&d) == CUDNN_STATUS_SUCCESS)
        cudnnSetRNNDataDescriptor(d, fa_type(dt), layout, steps, batch,
                                  fa_rare() ? fz_dim() : vec, lengths, trand_int(0, 3) ? &fa_fill : NULL);
    return d;
}

/* The bytes of an RNN data descriptor's buffer (16 when the getter refuses). */
static size_t fa_rnn_data_bytes(cudnnRNNDataDescriptor_t d)
{
    cudnnDataType_t dt;
    cudnnRNNDataLayout_t layout;
    int steps, batch, vec, lengths[FA_ARRAY];
    double fill;
    if (d == NULL || cudnnGetRNNDataDescriptor(d, &dt, &layout, &steps, &batch, &vec, FA_ARRAY, lengths, &fill) !=
                         CUDNN_STATUS_SUCCESS)
        return 16;
    int64_t n = (int64_t)steps * batch * vec * (int64_t)tdtype_size(dt);
    return n < 0 ? 16 : n > MAX_BYTES ? (size_t)MAX_BYTES + 1 : (size_t)n;
}

/* One call of the v8 API. Buffers: x y hx hy cx cy w ws rs lens, dy dx dhy dhx dcy dcx dw. */
static void fa_rnn_v8(cudnnHandle_t h, cudnnDropoutDescriptor_t drop, enum fa_op op, int it)
{
    struct fa_rnn r;
    fa_rnn_init(&r, h, drop, false);
    const cudnnRNNDataLayout_t layout = (cudnnRNNDataLayout_t)fa_mode(3);
    const int steps = fa_int(1, 3), batch = fa_int(1, 3);
    int lengths[FA_ARRAY];
    for (int i = 0; i < FA_ARRAY; i++) lengths[i] = fa_length(steps);
    const int out = (r.proj > 0 && r.proj < r.hidden ? r.proj : r.hidden) * r.dirs;
    cudnnRNNDataDescriptor_t xd = fa_rnn_data(r.dtype, layout, steps, batch, r.input, lengths);
    cudnnRNNDataDescriptor_t yd =
        !fa_rare() ? fa_rnn_data(r.dtype, layout, steps, batch, out, lengths)
                   : fa_rnn_data(r.dtype, (cudnnRNNDataLayout_t)fa_mode(3), fa_int(1, 3), fa_int(1, 3), out, lengths);
    struct fz_tensor hs, cs, b[17];
    memset(b, 0, sizeof b);
    fa_tensor3(&hs, r.dtype, r.layers * r.dirs, batch, r.proj > 0 && r.proj < r.hidden ? r.proj : r.hidden, false);
    fa_tensor3(&cs, r.dtype, r.layers * r.dirs, batch, r.hidden, false);
    const cudnnForwardMode_t fmode = (cudnnForwardMode_t)fa_mode(2);
    size_t wbytes = 16, ws = 16, rs = 16, hbytes = 0, cbytes = 0;
    fz_queried(cudnnGetRNNWeightSpaceSize(h, r.d, &wbytes), &wbytes);
    fz_queried(cudnnGetRNNTempSpaceSizes(h, r.d, op == FA_RNN_FWD ? fmode : CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs),
               &ws);
    if (cudnnGetTensorSizeInBytes(hs.desc, &hbytes) != CUDNN_STATUS_SUCCESS) hbytes = 16;
    if (cudnnGetTensorSizeInBytes(cs.desc, &cbytes) != CUDNN_STATUS_SUCCESS) cbytes = 16;
    const size_t xbytes = fa_rnn_data_bytes(xd), ybytes = fa_rnn_data_bytes(yd);
    ws = fa_shrunk(ws), rs = fa_shrunk(rs), wbytes = fa_shrunk(wbytes);
    struct fz_tensor *x = &b[0], *y = &b[1], *hx = &b[2], *hy = &b[3], *cx = &b[4], *cy = &b[5], *w = &b[6],
                     *wsb = &b[7], *rsb = &b[8], *lens = &b[9], *dy = &b[10], *dx = &b[11], *dhy = &b[12],
                     *dhx = &b[13], *dcy = &b[14], *dcx = &b[15], *dw = &b[16];
    bool sized = fz_buffer(x, xbytes, 0) && fz_buffer(y, ybytes, 0) && fz_buffer(dy, ybytes, 0) &&
                 fz_buffer(dx, xbytes, 0) && fz_buffer(w, wbytes, 0) && fz_buffer(dw, wbytes, 0) &&
                 fz_buffer(wsb, ws, 0) && fz_buffer(rsb, rs, 0) && fz_buffer_of(lens, lengths, sizeof lengths);
    sized = sized && fz_buffers(hx, 2, hbytes) && fz_buffers(cx, 2, cbytes) && fz_buffers(dhy, 2, hbytes) &&
            fz_buffers(dcy, 2, cbytes);
    if (sized) {
        static const int optional[] = {2, 3, 4, 5, 9, 12, 13, 14, 15}; /* states, lengths, state gradients */
        const bool no_h = trand_int(0, 7) == 0, no_c = trand_int(0, 7) == 0;
        for (int i = 0; i < (int)TLEN(optional); i++)
            if (trand_int(0, 7) == 0) fz_drop(&b[optional[i]]);
        if (no_h) fz_drop(hx), fz_drop(hy), fz_drop(dhy), fz_drop(dhx);
        if (no_c) fz_drop(cx), fz_drop(cy), fz_drop(dcy), fz_drop(dcx);
        cudnnTensorDescriptor_t hd = no_h ? NULL : hs.desc, cd = no_c ? NULL : cs.desc;
        if (op == FA_RNN_FWD) {
            const bool infer = fmode == CUDNN_FWD_MODE_INFERENCE && trand_int(0, 1);
            if (infer) fz_drop(rsb);
            fz_check("RNN forward", it,
                     cudnnRNNForward(h, r.d, fmode, fz_opt(lens), xd, fz_at(x), yd, fz_at(y), hd, fz_opt(hx),
                                     fz_opt(hy), cd, fz_opt(cx), fz_opt(cy), wbytes, fz_at(w), ws, fz_at(wsb),
                                     infer ? 0 : rs, fz_opt(rsb)),
                     (struct fz_tensor *[]){y, hy, cy, wsb, rsb}, 5, (struct fz_tensor *[]){x, hx, cx, w, lens}, 5);
        } else if (op == FA_RNN_BWD_DATA) {
            fz_check("RNN backward data", it,
                     cudnnRNNBackwardData_v8(h, r.d, fz_opt(lens), yd, fz_at(y), fz_at(dy), xd, fz_at(dx), hd,
                                             fz_opt(hx), fz_opt(dhy), fz_opt(dhx), cd, fz_opt(cx), fz_opt(dcy),
                                             fz_opt(dcx), wbytes, fz_at(w), ws, fz_at(wsb), rs, fz_at(rsb)),
                     (struct fz_tensor *[]){dx, dhx, dcx, wsb, rsb}, 5,
                     (struct fz_tensor *[]){y, dy, hx, dhy, cx, dcy, w, lens}, 8);
        } else if (op == FA_RNN_BWD_WEIGHTS) {
            fz_check("RNN backward weights", it,
                     cudnnRNNBackwardWeights_v8(h, r.d, (cudnnWgradMode_t)fa_mode(2), fz_opt(lens), xd, fz_at(x), hd,
                                                fz_opt(hx), yd, fz_at(y), wbytes, fz_at(dw), ws, fz_at(wsb), rs,
                                                fz_at(rsb)),
                     (struct fz_tensor *[]){dw, wsb}, 2, (struct fz_tensor *[]){x, hx, y, rsb, lens}, 5);
        } else {
            cudnnTensorDescriptor_t md = NULL, bd = NULL;
            void *maddr = NULL, *baddr = NULL;
            size_t mbytes = 0, bbytes = 0;
            cudnnCreateTensorDescriptor(&md);
            cudnnCreateTensorDescriptor(&bd);
            const cudnnStatus_t s = cudnnGetRNNWeightParams(
                h, r.d, fa_int(0, 2 * r.layers * r.dirs), wbytes, fz_at(w), fa_int(0, 8), trand_int(0, 7) ? md : NULL,
                &maddr, trand_int(0, 7) ? bd : NULL, &baddr);
            fz_check("RNN weight params", it, s, NULL, 0, (struct fz_tensor *[]){w}, 1);
            if (s == CUDNN_STATUS_SUCCESS) {
                if (maddr != NULL && cudnnGetTensorSizeInBytes(md, &mbytes) != CUDNN_STATUS_SUCCESS) mbytes = 0;
                if (baddr != NULL && cudnnGetTensorSizeInBytes(bd, &bbytes) != CUDNN_STATUS_SUCCESS) bbytes = 0;
                fa_within("RNN weight params (matrix)", it, maddr, mbytes, w);
                fa_within("RNN weight params (bias)", it, baddr, bbytes, w);
            }
            cudnnDestroyTensorDescriptor(md);
            cudnnDestroyTensorDescriptor(bd);
        }
    }
    for (int i = 0; i < 17; i++) fz_tensor_free(&b[i]);
    fz_tensor_free(&hs);
    fz_tensor_free(&cs);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyRNNDescriptor(r.d);
}

/* One call of the legacy API: per-step descriptors of batch sizes that mostly do not grow. */
static void fa_rnn_legacy(cudnnHandle_t h, cudnnDropoutDescriptor_t drop, enum fa_op op, int it)
{
    struct fa_rnn r;
    fa_rnn_init(&r, h, drop, true);
    const int steps = fa_int(1, 3);
    cudnnTensorDescriptor_t xs[FA_STEPS], ys[FA_STEPS];
    struct fz_tensor t[2 * FA_STEPS];
    int batch = fa_int(1, 3), first = batch;
    size_t xbytes = 0, ybytes = 0;
    const int out = (r.proj > 0 && r.proj < r.hidden ? r.proj : r.hidden) * r.dirs;
    for (int s = 0; s < FA_STEPS; s++) {
        if (s > 0 && trand_int(0, 3) == 0) batch = fa_rare() ? batch + 1 : trand_int(1, fa_pos(batch));
        fa_tensor3(&t[s], r.dtype, batch, r.input, 1, false);
        fa_tensor3(&t[FA_STEPS + s], r.dtype, batch, out, 1, false);
        xs[s] = t[s].desc, ys[s] = t[FA_STEPS + s].desc;
        size_t xb = 16, yb = 16;
        fz_queried(cudnnGetTensorSizeInBytes(xs[s], &xb), &xb);
        fz_queried(cudnnGetTensorSizeInBytes(ys[s], &yb), &yb);
        if (s < steps) xbytes += xb, ybytes += yb;
    }
    struct fz_tensor hs, cs, b[16];
    memset(b, 0, sizeof b);
    fa_tensor3(&hs, r.dtype, r.layers * r.dirs, first, r.proj > 0 && r.proj < r.hidden ? r.proj : r.hidden, false);
    fa_tensor3(&cs, r.dtype, r.layers * r.dirs, first, r.hidden, false);
    size_t wbytes = 16, ws = 16, rs = 16, hbytes = 16, cbytes = 16;
    const cudnnDataType_t wtype = fa_type(r.dtype);
    fz_queried(cudnnGetRNNParamsSize(h, r.d, xs[0], &wbytes, wtype), &wbytes);
    fz_queried(cudnnGetRNNWorkspaceSize(h, r.d, steps, xs, &ws), &ws);
    fz_queried(cudnnGetRNNTrainingReserveSize(h, r.d, steps, xs, &rs), &rs);
    fz_queried(cudnnGetTensorSizeInBytes(hs.desc, &hbytes), &hbytes);
    fz_queried(cudnnGetTensorSizeInBytes(cs.desc, &cbytes), &cbytes);
    ws = fa_shrunk(ws), rs = fa_shrunk(rs);
    cudnnFilterDescriptor_t wd = NULL;
    cudnnCreateFilterDescriptor(&wd);
    const int welems = (int)(wbytes / tdtype_size(wtype)) / (fa_rare() ? 2 : 1);
    cudnnSetFilterNdDescriptor(wd, wtype, CUDNN_TENSOR_NCHW, 3, (int[]){welems, 1, 1});
    struct fz_tensor *x = &b[0], *y = &b[1], *hx = &b[2], *hy = &b[3], *cx = &b[4], *cy = &b[5], *w = &b[6],
                     *wsb = &b[7], *rsb = &b[8], *dy = &b[9], *dx = &b[10], *dhy = &b[11], *dhx = &b[12],
                     *dcy = &b[13], *dcx = &b[14], *dw = &b[15];
    bool sized = fz_buffer(x, xbytes, 0) && fz_buffer(y, ybytes, 0) && fz_buffer(dy, ybytes, 0) &&
                 fz_buffer(dx, xbytes, 0) && fz_buffer(w, wbytes, 0) && fz_buffer(dw, wbytes, 0) &&
                 fz_buffer(wsb, ws, 0) && fz_buffer(rsb, rs, 0) && fz_buffers(hx, 2, hbytes) &&
                 fz_buffers(cx, 2, cbytes) && fz_buffers(dhy, 2, hbytes) && fz_buffers(dcy, 2, cbytes);
    if (sized) {
        static const int optional[] = {2, 3, 4, 5, 11, 12, 13, 14}; /* states and their gradients */
        for (int i = 0; i < (int)TLEN(optional); i++)
            if (trand_int(0, 7) == 0) fz_drop(&b[optional[i]]);
        cudnnTensorDescriptor_t hd = hs.desc, cd = cs.desc;
        if (op == FA_LEGACY_INFER)
            fz_check("RNN forward inference", it,
                     cudnnRNNForwardInference(h, r.d, steps, xs, fz_at(x), hd, fz_opt(hx), cd, fz_opt(cx), wd,
                                              fz_at(w), ys, fz_at(y), hd, fz_opt(hy), cd, fz_opt(cy), fz_at(wsb), ws),
                     (struct fz_tensor *[]){y, hy, cy, wsb}, 4, (struct fz_tensor *[]){x, hx, cx, w}, 4);
        else if (op == FA_LEGACY_TRAIN)
            fz_check("RNN forward training", it,
                     cudnnRNNForwardTraining(h, r.d, steps, xs, fz_at(x), hd, fz_opt(hx), cd, fz_opt(cx), wd,
                                             fz_at(w), ys, fz_at(y), hd, fz_opt(hy), cd, fz_opt(cy), fz_at(wsb), ws,
                                             fz_at(rsb), rs),
                     (struct fz_tensor *[]){y, hy, cy, wsb, rsb}, 5, (struct fz_tensor *[]){x, hx, cx, w}, 4);
        else if (op == FA_LEGACY_BWD_DATA)
            fz_check("RNN backward data", it,
                     cudnnRNNBackwardData(h, r.d, steps, ys, fz_at(y), ys, fz_at(dy), hd, fz_opt(dhy), cd,
                                          fz_opt(dcy), wd, fz_at(w), hd, fz_opt(hx), cd, fz_opt(cx), xs, fz_at(dx), hd,
                                          fz_opt(dhx), cd, fz_opt(dcx), fz_at(wsb), ws, fz_at(rsb), rs),
                     (struct fz_tensor *[]){dx, dhx, dcx, wsb, rsb}, 5,
                     (struct fz_tensor *[]){y, dy, dhy, dcy, w, hx, cx}, 7);
        else if (op == FA_LEGACY_BWD_WEIGHTS)
            fz_check("RNN backward weights", it,
                     cudnnRNNBackwardWeights(h, r.d, steps, xs, fz_at(x), hd, fz_opt(hx), ys, fz_at(y), fz_at(wsb),
                                             ws, wd, fz_at(dw), fz_at(rsb), rs),
                     (struct fz_tensor *[]){dw, wsb}, 2, (struct fz_tensor *[]){x, hx, y, rsb}, 4);
        else {
            cudnnFilterDescriptor_t pd = NULL;
            void *addr = NULL;
            int pdims[3] = {0, 0, 0}, nd = 0;
            cudnnDataType_t pt;
            cudnnTensorFormat_t pf;
            cudnnCreateFilterDescriptor(&pd);
            const bool bias = trand_int(0, 1);
            const int pseudo = fa_int(0, 2 * r.layers * r.dirs), lin = fa_int(0, 8);
            const cudnnStatus_t s =
                bias ? cudnnGetRNNLinLayerBiasParams(h, r.d, pseudo, xs[0], wd, fz_at(w), lin, pd, &addr)
                     : cudnnGetRNNLinLayerMatrixParams(h, r.d, pseudo, xs[0], wd, fz_at(w), lin, pd, &addr);
            fz_check(bias ? "RNN lin layer bias params" : "RNN lin layer matrix params", it, s, NULL, 0,
                     (struct fz_tensor *[]){w}, 1);
            if (s == CUDNN_STATUS_SUCCESS && addr != NULL &&
                cudnnGetFilterNdDescriptor(pd, 3, &pt, &pf, &nd, pdims) == CUDNN_STATUS_SUCCESS)
                fa_within("RNN lin layer params", it, addr,
                          (size_t)pdims[0] * (size_t)pdims[1] * (size_t)pdims[2] * tdtype_size(pt), w);
            cudnnDestroyFilterDescriptor(pd);
        }
    }
    for (int i = 0; i < 16; i++) fz_tensor_free(&b[i]);
    for (int i = 0; i < 2 * FA_STEPS; i++) fz_tensor_free(&t[i]);
    fz_tensor_free(&hs);
    fz_tensor_free(&cs);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyRNNDescriptor(r.d);
}

/* ---- multi-head attention ------------------------------------------------------------------- */

/* A sequence data descriptor of dims (indexed by axis: time, batch, beam, vector), its axes in one
   of the usual orders (now and then any), and lengths for every batch and beam: like's (the
   queries' for the output, the keys' for the values), now and then (or without like) drawn. */
static cudnnSeqDataDescriptor_t fa_seq(cudnnDataType_t dt, int time, int batch, int beam, int vec, int *lengths,
                                       const int *like)
{
    static const cudnnSeqDataAxis_t orders[][4] = {
        {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_VECT_DIM},
        {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_VECT_DIM},
        {CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_VECT_DIM},
    };
    cudnnSeqDataAxis_t axes[4];
    memcpy(axes, orders[trand_int(0, 2)], sizeof axes);
    if (fa_rare()) axes[trand_int(0, 3)] = (cudnnSeqDataAxis_t)fa_mode(4);
    int dims[4] = {time, batch, beam, fa_rare() ? fz_dim() : vec};
    const bool same = like != NULL && !fa_rare();
    for (int i = 0; i < FA_ARRAY; i++) lengths[i] = same ? like[i] : fa_length(time);
    cudnnSeqDataDescriptor_t d = NULL;
    if (cudnnCreateSeqDataDescriptor(&d) == CUDNN_STATUS_SUCCESS)
        cudnnSetSeqDataDescriptor(d, fa_type(dt), fa_rare() ? fa_int(3, 5) : 4, dims,
                                  axes, (size_t)(batch > 0 && beam > 0 ? batch * beam : 1), lengths,
                                  trand_int(0, 3) ? &fa_fill : NULL);
    return d;
}

/* The bytes of a sequence data descriptor's buffer (16 when the getter refuses). */
static size_t fa_seq_bytes(cudnnSeqDataDescriptor_t d)
{
    cudnnDataType_t dt;
    int nd = 0, dims[4];
    cudnnSeqDataAxis_t axes[4];
    size_t nlen = 0;
    int lengths[FA_ARRAY];
    double fill;
    if (d == NULL || cudnnGetSeqDataDescriptor(d, &dt, &nd, 4, dims, axes, &nlen, FA_ARRAY, lengths, &fill) !=
                         CUDNN_STATUS_SUCCESS)
        return 16;
    int64_t n = (int64_t)tdtype_size(dt);
    for (int i = 0; i < 4 && i < nd; i++) n *= dims[i];
    return n < 0 ? 16 : n > MAX_BYTES ? (size_t)MAX_BYTES + 1 : (size_t)n;
}

static void fa_attention(cudnnHandle_t h, cudnnDropoutDescriptor_t drop, enum fa_op op, int it)
{
    cudnnAttnDescriptor_t ad = NULL;
    if (cudnnCreateAttnDescriptor(&ad) != CUDNN_STATUS_SUCCESS) return;
    static const double scalers[] = {1, 0.5, 0, -1};
    const unsigned mode = (unsigned)(fa_rare() ? trand_int(0, 15) : trand_int(0, 3));
    const int heads = fa_int(1, 2), qs = fa_int(1, 4), vs = fa_int(1, 4);
    const int qp = trand_int(0, 1) ? 0 : fa_int(1, 3), kp = fa_rare() ? fa_int(0, 3) : qp;
    const int ks = qp > 0 || fa_rare() ? fa_int(1, 4) : qs; /* unprojected, Q and K vectors match */
    const int vp = trand_int(0, 1) ? 0 : fa_int(1, 3), op_ = trand_int(0, 1) ? 0 : fa_int(1, 3);
    const int qo = fa_int(1, 3), kv = fa_int(1, 3), batch = fa_int(1, 2), beam = fa_int(1, 2);
    const cudnnDataType_t dt = fa_type(CUDNN_DATA_FLOAT);
    cudnnSetAttnDescriptor(ad, mode, heads, scalers[trand_int(0, fa_odd ? 3 : 1)], dt, fa_type(dt),
                           (cudnnMathType_t)fa_mode(4), trand_int(0, 3) ? NULL : drop, trand_int(0, 3) ? NULL : drop,
                           qs, ks, vs, qp, kp, vp, op_, qo, kv, batch, beam);
    const int kbeam = mode & CUDNN_ATTN_QUERYMAP_ONE_TO_ONE ? beam : 1;
    const int ovec = op_ > 0 ? op_ : heads * (vp > 0 ? vp : vs);
    int qlen[FA_ARRAY], klen[FA_ARRAY], vlen[FA_ARRAY], olen[FA_ARRAY];
    cudnnSeqDataDescriptor_t qd = fa_seq(dt, qo, batch, beam, qs, qlen, NULL);
    cudnnSeqDataDescriptor_t kd = fa_seq(dt, kv, batch, kbeam, ks, klen, NULL);
    cudnnSeqDataDescriptor_t vd = fa_seq(dt, kv, batch, kbeam, vs, vlen, klen);
    cudnnSeqDataDescriptor_t od = fa_seq(dt, qo, batch, beam, ovec, olen, qlen);
    size_t wbytes = 16, ws = 16, rs = 16;
    fz_queried(cudnnGetMultiHeadAttnBuffers(h, ad, &wbytes, &ws, &rs), &wbytes);
    ws = fa_shrunk(ws), rs = fa_shrunk(rs), wbytes = fa_shrunk(wbytes);
    const size_t qb = fa_seq_bytes(qd), kb = fa_seq_bytes(kd), vb = fa_seq_bytes(vd), ob = fa_seq_bytes(od);
    struct fz_tensor b[16];
    memset(b, 0, sizeof b);
    struct fz_tensor *q = &b[0], *k = &b[1], *v = &b[2], *o = &b[3], *res = &b[4], *w = &b[5], *wsb = &b[6],
                     *rsb = &b[7], *qol = &b[8], *kvl = &b[9], *dq = &b[10], *dk = &b[11], *dv = &b[12],
                     *dout = &b[13], *dw = &b[14];
    int lo[FA_ARRAY], hi[FA_ARRAY];
    for (int i = 0; i < FA_ARRAY; i++) {
        lo[i] = fa_rare() ? trand_int(-1, fa_pos(kv)) : 0;
        hi[i] = fa_rare() ? trand_int(-1, fa_pos(kv) + 1) : kv;
    }
    if (fz_buffer(q, qb, 0) && fz_buffer(k, kb, 0) && fz_buffer(v, vb, 0) && fz_buffer(o, ob, 0) &&
        fz_buffer(res, qb > ob ? qb : ob, 0) && fz_buffer(w, wbytes, 0) && fz_buffer(wsb, ws, 0) &&
        fz_buffer(rsb, rs, 0) && fz_buffer_of(qol, qlen, sizeof qlen) && fz_buffer_of(kvl, klen, sizeof klen) &&
        fz_buffer(dq, qb, 0) && fz_buffer(dk, kb, 0) && fz_buffer(dv, vb, 0) && fz_buffer(dout, ob, 0) &&
        fz_buffer(dw, wbytes, 0)) {
        if (op == FA_ATTN_FWD) {
            const bool infer = trand_int(0, 1);
            if (infer) fz_drop(rsb);
            if (ovec != qs ? !fa_rare() : trand_int(0, 1)) fz_drop(res); /* residuals need qSize outputs */
            if (trand_int(0, 7) == 0) fz_drop(trand_int(0, 1) ? qol : kvl);
            const int curr = infer && !fa_rare() ? trand_int(0, fa_pos(qo) - 1) : fa_rare() ? fa_int(0, qo) : -1;
            fz_check("multi-head attention forward", it,
                     cudnnMultiHeadAttnForward(h, ad, curr, lo, hi, fz_opt(qol), fz_opt(kvl), qd, fz_at(q), fz_opt(res),
                                               kd, fz_at(k), vd, fz_at(v), od, fz_at(o), wbytes, fz_at(w), ws,
                                               fz_at(wsb), infer ? 0 : rs, fz_opt(rsb)),
                     (struct fz_tensor *[]){o, wsb, rsb}, 3, (struct fz_tensor *[]){q, res, k, v, w, qol, kvl}, 7);
        } else if (op == FA_ATTN_BWD_DATA) {
            fz_check("multi-head attention backward data", it,
                     cudnnMultiHeadAttnBackwardData(h, ad, lo, hi, fz_at(qol), fz_at(kvl), od, fz_at(dout), qd,
                                                    fz_at(dq), fz_at(q), kd, fz_at(dk), fz_at(k), vd, fz_at(dv),
                                                    fz_at(v), wbytes, fz_at(w), ws, fz_at(wsb), rs, fz_at(rsb)),
                     (struct fz_tensor *[]){dq, dk, dv, wsb, rsb}, 5,
                     (struct fz_tensor *[]){dout, q, k, v, w, qol, kvl}, 7);
        } else if (op == FA_ATTN_BWD_WEIGHTS) {
            fz_check("multi-head attention backward weights", it,
                     cudnnMultiHeadAttnBackwardWeights(h, ad, (cudnnWgradMode_t)fa_mode(2), qd, fz_at(q), kd, fz_at(k),
                                                       vd, fz_at(v), od, fz_at(dout), wbytes, fz_at(w), fz_at(dw), ws,
                                                       fz_at(wsb), rs, fz_at(rsb)),
                     (struct fz_tensor *[]){dw, wsb, rsb}, 3, (struct fz_tensor *[]){q, k, v, dout, w}, 5);
        } else {
            cudnnTensorDescriptor_t wd = NULL;
            void *addr = NULL;
            size_t bytes = 0;
            cudnnCreateTensorDescriptor(&wd);
            const cudnnStatus_t s = cudnnGetMultiHeadAttnWeights(h, ad, (cudnnMultiHeadAttnWeightKind_t)fa_mode(8),
                                                                 wbytes, fz_at(w), wd, &addr);
            fz_check("multi-head attention weights", it, s, NULL, 0, (struct fz_tensor *[]){w}, 1);
            if (s == CUDNN_STATUS_SUCCESS && addr != NULL && cudnnGetTensorSizeInBytes(wd, &bytes) == CUDNN_STATUS_SUCCESS)
                fa_within("multi-head attention weights", it, addr, bytes, w);
            cudnnDestroyTensorDescriptor(wd);
        }
    }
    for (int i = 0; i < 16; i++) fz_tensor_free(&b[i]);
    cudnnDestroySeqDataDescriptor(qd);
    cudnnDestroySeqDataDescriptor(kd);
    cudnnDestroySeqDataDescriptor(vd);
    cudnnDestroySeqDataDescriptor(od);
    cudnnDestroyAttnDescriptor(ad);
}

/* ---- CTC loss --------------------------------------------------------------------------------- */

static void fa_ctc(cudnnHandle_t h, enum fa_op op, int it)
{
    cudnnCTCLossDescriptor_t cd = NULL;
    if (cudnnCreateCTCLossDescriptor(&cd) != CUDNN_STATUS_SUCCESS) return;
    const cudnnDataType_t comp = fa_type(CUDNN_DATA_FLOAT);
    const cudnnLossNormalizationMode_t norm = (cudnnLossNormalizationMode_t)fa_mode(2);
    const cudnnNanPropagation_t nan = (cudnnNanPropagation_t)fa_mode(2);
    switch (trand_int(0, 2)) {
    case 0: cudnnSetCTCLossDescriptor(cd, comp); break;
    case 1: cudnnSetCTCLossDescriptorEx(cd, comp, norm, nan); break;
    default: cudnnSetCTCLossDescriptor_v8(cd, comp, norm, nan, fa_int(1, 4)); break;
    }
    const int T = fa_int(1, 4), N = fa_int(1, 3), A = fa_int(1, 5);
    const cudnnDataType_t dt = fa_type(CUDNN_DATA_FLOAT);
    struct fz_tensor probs, grads, b[6];
    memset(b, 0, sizeof b);
    fa_tensor3(&probs, dt, T, N, A, true);
    if (!fa_rare()) fa_tensor3(&grads, dt, T, N, A, true);
    else fa_tensor3(&grads, dt, fa_int(1, 4), fa_int(1, 3), fa_int(1, 5), true);
    int labels[8 * FA_ARRAY], label_lengths[FA_ARRAY], input_lengths[FA_ARRAY];
    for (int i = 0; i < FA_ARRAY; i++) {
        label_lengths[i] = fa_rare() ? trand_int(-1, 5) : trand_int(1, 3);
        input_lengths[i] = trand_int(0, 3) ? T : fa_length(T);
    }
    for (int i = 0; i < 8 * FA_ARRAY; i++) labels[i] = fa_rare() ? trand_int(-1, A) : trand_int(1, fa_pos(A - 1));
    const cudnnCTCLossAlgo_t algo = (cudnnCTCLossAlgo_t)fa_mode(2);
    size_t ws = 16;
    if (op == FA_CTC)
        fz_queried(cudnnGetCTCLossWorkspaceSize(h, probs.desc, grads.desc, labels, label_lengths, input_lengths, algo,
                                                cd, &ws),
                   &ws);
    else
        fz_queried(cudnnGetCTCLossWorkspaceSize_v8(h, algo, cd, probs.desc, grads.desc, &ws), &ws);
    ws = fa_shrunk(ws);
    struct fz_tensor *costs = &b[0], *wsb = &b[1], *lab = &b[2], *llen = &b[3], *ilen = &b[4];
    cudnnDataType_t pt; /* costs: one of the probabilities' type per batch entry of their descriptor */
    int pn = 0, pdims[5], pstrides[5];
    const size_t cost_bytes = fz_shape(&probs, &pt, &pn, pdims, pstrides) && pn >= 2 && pdims[1] > 0
                                  ? (size_t)pdims[1] * tdtype_size(pt)
                                  : 16;
    if (fz_tensor_alloc(&probs) && fz_tensor_alloc(&grads) && fz_buffer(costs, cost_bytes, 0) &&
        fz_buffer(wsb, ws, 0) && fz_buffer_of(lab, labels, sizeof labels) &&
        fz_buffer_of(llen, label_lengths, sizeof label_lengths) &&
        fz_buffer_of(ilen, input_lengths, sizeof input_lengths)) {
        if (op == FA_CTC)
            fz_check("CTC loss", it,
                     cudnnCTCLoss(h, probs.desc, fz_at(&probs), labels, label_lengths, input_lengths, fz_at(costs),
                                  grads.desc, fz_at(&grads), algo, cd, fz_at(wsb), ws),
                     (struct fz_tensor *[]){costs, &grads, wsb}, 3, (struct fz_tensor *[]){&probs}, 1);
        else
            fz_check("CTC loss v8", it,
                     cudnnCTCLoss_v8(h, algo, cd, probs.desc, fz_at(&probs), fz_at(lab), fz_at(llen), fz_at(ilen),
                                     fz_at(costs), grads.desc, fz_at(&grads), ws, fz_at(wsb)),
                     (struct fz_tensor *[]){costs, &grads, wsb}, 3, (struct fz_tensor *[]){&probs, lab, llen, ilen}, 4);
    }
    for (int i = 0; i < 6; i++) fz_tensor_free(&b[i]);
    fz_tensor_free(&probs);
    fz_tensor_free(&grads);
    cudnnDestroyCTCLossDescriptor(cd);
}

/* ---- the getters and the descriptor calls ------------------------------------------------------ */

/* A getter's outputs: one 8-byte slot each, poisoned, given (or, in an odd iteration now and then,
   NULL) to the call; fa_outs_check then holds it to the invariants: a defined status, nothing
   written when it fails, nothing past an output's size nor into a slot not given when it succeeds. */
enum { FA_SLOTS = 20, FA_POISON = 0xA5 };
struct fa_outs {
    unsigned char b[FA_SLOTS][8];
    size_t size[FA_SLOTS];
    bool given[FA_SLOTS];
    int n;
    bool all; /* every output given */
};

static void fa_outs_init(struct fa_outs *o)
{
    memset(o, 0, sizeof *o);
    memset(o->b, FA_POISON, sizeof o->b);
    o->all = true;
}

static void *fa_out(struct fa_outs *o, size_t size)
{
    const int i = o->n++;
    o->size[i] = size;
    o->given[i] = !(fa_odd && trand_int(0, 5) == 0);
    o->all = o->all && o->given[i];
    return o->given[i] ? o->b[i] : NULL;
}

/* `must`: the call has what it needs (a valid descriptor, every output it requires) and must succeed. */
static void fa_outs_check(const char *op, int it, cudnnStatus_t s, const struct fa_outs *o, bool must)
{
    fz_check(op, it, s, NULL, 0, NULL, 0);
    if (must && s != CUDNN_STATUS_SUCCESS) FAIL("iteration %d, %s: status %d where it must succeed", it, op, (int)s);
    for (int i = 0; i < o->n; i++)
        for (size_t j = 0; j < sizeof o->b[i]; j++)
            if (o->b[i][j] != FA_POISON && (s != CUDNN_STATUS_SUCCESS || !o->given[i] || j >= o->size[i]))
                FAIL("iteration %d, %s: status %d, output %d written at byte %zu", it, op, (int)s, i, j);
}

/* An RNN descriptor for the getters: set as the calls' are (v8 or legacy), now and then never set
   or NULL. */
static cudnnRNNDescriptor_t fa_rnn_odd(struct fa_rnn *r, cudnnHandle_t h, cudnnDropoutDescriptor_t drop)
{
    memset(r, 0, sizeof *r);
    switch (trand_int(0, 7)) {
    case 0: cudnnCreateRNNDescriptor(&r->d); break;
    case 1: break;
    default: fa_rnn_init(r, h, drop, trand_int(0, 1)); break;
    }
    return r->d;
}

/* What an RNN descriptor's getters give (zeros where they refuse): a setter that fails must leave
   it as it was. */
struct fa_rnn_state {
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias;
    cudnnDirectionMode_t dir;
    cudnnRNNInputMode_t in_mode;
    cudnnDataType_t dtype, prec;
    cudnnMathType_t math;
    int32_t input, hidden, proj, layers;
    cudnnDropoutDescriptor_t drop;
    uint32_t aux;
    cudnnRNNClipMode_t clip;
    cudnnNanPropagation_t clip_nan;
    double lclip, rclip;
    unsigned padding;
    cudnnStatus_t s[3];
};

static void fa_rnn_state(cudnnRNNDescriptor_t d, struct fa_rnn_state *st)
{
    memset(st, 0, sizeof *st);
    st->s[0] = cudnnGetRNNDescriptor_v8(d, &st->algo, &st->cell, &st->bias, &st->dir, &st->in_mode, &st->dtype,
                                        &st->prec, &st->math, &st->input, &st->hidden, &st->proj, &st->layers,
                                        &st->drop, &st->aux);
    st->s[1] = cudnnRNNGetClip_v8(d, &st->clip, &st->clip_nan, &st->lclip, &st->rclip);
    st->s[2] = cudnnGetRNNPaddingMode(d, &st->padding);
}

/* One of the RNN descriptor's setters, given odd values as often as not: when it fails, the
   descriptor must read back as before; when it succeeds, with what it set (the whole descriptor
   for cudnnSetRNNDescriptor_v8, but its clip; one field for the others, the rest as before, the
   padding mode being auxFlags' PADDED_IO; v6's fields as the v8 getter has them vary, so not checked). */
static void fa_rnn_reset(cudnnHandle_t h, cudnnRNNDescriptor_t d, cudnnDropoutDescriptor_t drop, int it)
{
    struct fa_rnn_state before, after, want;
    fa_rnn_state(d, &before);
    memcpy(&want, &before, sizeof want); /* padding bytes too: the states are compared bytewise */
    cudnnStatus_t s;
    const int kind = trand_int(0, 6);
    switch (kind) {
    case 0:
        want.algo = (cudnnRNNAlgo_t)trand_int(-1, 4), want.cell = (cudnnRNNMode_t)trand_int(-1, 4);
        want.bias = (cudnnRNNBiasMode_t)trand_int(-1, 4), want.dir = (cudnnDirectionMode_t)trand_int(-1, 2);
        want.in_mode = (cudnnRNNInputMode_t)trand_int(-1, 2), want.dtype = fz_type(), want.prec = fz_type();
        want.math = (cudnnMathType_t)trand_int(-1, 4), want.input = trand_int(-1, 4), want.hidden = trand_int(-1, 4);
        want.proj = trand_int(-1, 4), want.layers = trand_int(-1, 2), want.drop = trand_int(0, 1) ? drop : NULL;
        want.aux = (uint32_t)trand_int(0, 2);
        s = cudnnSetRNNDescriptor_v8(d, want.algo, want.cell, want.bias, want.dir, want.in_mode, want.dtype, want.prec,
                                     want.math, want.input, want.hidden, want.proj, want.layers, want.drop, want.aux);
        want.s[0] = CUDNN_STATUS_SUCCESS;
        break;
    case 1:
        s = cudnnSetRNNDescriptor_v6(h, d, trand_int(-1, 4), trand_int(-1, 2), trand_int(0, 1) ? drop : NULL,
                                     (cudnnRNNInputMode_t)trand_int(-1, 2), (cudnnDirectionMode_t)trand_int(-1, 2),
                                     (cudnnRNNMode_t)trand_int(-1, 4), (cudnnRNNAlgo_t)trand_int(-1, 4), fz_type());
        break;
    case 2:
        want.clip = (cudnnRNNClipMode_t)trand_int(-1, 2), want.clip_nan = (cudnnNanPropagation_t)trand_int(-1, 2);
        want.lclip = trand_uniform(-2, 2), want.rclip = trand_uniform(-2, 2);
        s = cudnnRNNSetClip_v8(d, want.clip, want.clip_nan, want.lclip, want.rclip);
        break;
    case 3:
        want.bias = (cudnnRNNBiasMode_t)trand_int(-1, 4);
        s = cudnnSetRNNBiasMode(d, want.bias);
        break;
    case 4:
        want.padding = (unsigned)trand_int(0, 2);
        s = cudnnSetRNNPaddingMode(d, want.padding);
        want.aux = (want.aux & ~(uint32_t)CUDNN_RNN_PADDED_IO_ENABLED) | want.padding; /* the same flag */
        break;
    case 5:
        want.math = (cudnnMathType_t)trand_int(-1, 4);
        s = cudnnSetRNNMatrixMathType(d, want.math);
        break;
    default:
        want.proj = trand_int(-1, 5);
        s = cudnnSetRNNProjectionLayers(h, d, want.proj, trand_int(-1, 1));
        break;
    }
    fz_check("RNN descriptor setter", it, s, NULL, 0, NULL, 0);
    fa_rnn_state(d, &after);
    if (s != CUDNN_STATUS_SUCCESS && memcmp(&before, &after, sizeof before) != 0)
        FAIL("iteration %d: an RNN descriptor setter failed (status %d) but changed the descriptor", it, (int)s);
    if (s == CUDNN_STATUS_SUCCESS && kind != 1) {
        if (kind == 0) /* what cudnnSetRNNDescriptor_v8 does not set */
            want.clip = after.clip, want.clip_nan = after.clip_nan, want.lclip = after.lclip,
            want.rclip = after.rclip, want.padding = want.aux & CUDNN_RNN_PADDED_IO_ENABLED;
        if (memcmp(&want, &after, sizeof want) != 0)
            FAIL("iteration %d: an RNN descriptor setter succeeded but the getters read back other values", it);
    }
}

static void fa_rnn_getters(cudnnHandle_t h, cudnnDropoutDescriptor_t drop, int it)
{
    struct fa_rnn r;
    cudnnRNNDescriptor_t d = fa_rnn_odd(&r, h, drop);
    cudnnHandle_t hh = fa_rare() ? NULL : h;
    const bool ok = d != NULL, okh = ok && hh != NULL;
    struct fa_outs o;
    fa_outs_init(&o);
    void *v8[14]; /* every output of the v8 getter may be NULL */
    static const size_t v8_sizes[14] = {sizeof(cudnnRNNAlgo_t), sizeof(cudnnRNNMode_t), sizeof(cudnnRNNBiasMode_t),
                                        sizeof(cudnnDirectionMode_t), sizeof(cudnnRNNInputMode_t),
                                        sizeof(cudnnDataType_t), sizeof(cudnnDataType_t), sizeof(cudnnMathType_t),
                                        sizeof(int32_t), sizeof(int32_t), sizeof(int32_t), sizeof(int32_t),
                                        sizeof(cudnnDropoutDescriptor_t), sizeof(uint32_t)};
    for (int i = 0; i < 14; i++) v8[i] = fa_out(&o, v8_sizes[i]);
    cudnnStatus_t s = cudnnGetRNNDescriptor_v8(d, v8[0], v8[1], v8[2], v8[3], v8[4], v8[5], v8[6], v8[7], v8[8], v8[9],
                                               v8[10], v8[11], v8[12], v8[13]);
    fa_outs_check("RNN descriptor v8", it, s, &o, ok);
    fa_outs_init(&o);
    s = cudnnGetRNNDescriptor_v6(hh, d, fa_out(&o, sizeof(int)), fa_out(&o, sizeof(int)),
                                               fa_out(&o, sizeof(cudnnDropoutDescriptor_t)),
                                               fa_out(&o, sizeof(cudnnRNNInputMode_t)),
                                               fa_out(&o, sizeof(cudnnDirectionMode_t)),
                                               fa_out(&o, sizeof(cudnnRNNMode_t)), fa_out(&o, sizeof(cudnnRNNAlgo_t)),
                                               fa_out(&o, sizeof(cudnnDataType_t)));
    fa_outs_check("RNN descriptor v6", it, s, &o, okh && o.all);
    fa_outs_init(&o);
    s = cudnnGetRNNBiasMode(d, fa_out(&o, sizeof(cudnnRNNBiasMode_t)));
    fa_outs_check("RNN bias mode", it, s, &o, ok && o.all);
    fa_outs_init(&o);
    s = cudnnGetRNNPaddingMode(d, fa_out(&o, sizeof(unsigned)));
    fa_outs_check("RNN padding mode", it, s, &o, ok && o.all);
    fa_outs_init(&o);
    s = cudnnGetRNNMatrixMathType(d, fa_out(&o, sizeof(cudnnMathType_t)));
    fa_outs_check("RNN matrix math type", it, s, &o, ok && o.all);
    fa_outs_init(&o);
    s = cudnnGetRNNProjectionLayers(hh, d, fa_out(&o, sizeof(int)), fa_out(&o, sizeof(int)));
    fa_outs_check("RNN projection layers", it, s, &o, okh && o.all);
    for (int legacy = 0; legacy < 2; legacy++) {
        fa_outs_init(&o);
        void *mode = fa_out(&o, sizeof(cudnnRNNClipMode_t)), *nan = fa_out(&o, sizeof(cudnnNanPropagation_t));
        void *lclip = fa_out(&o, sizeof(double)), *rclip = fa_out(&o, sizeof(double));
        s = legacy ? cudnnRNNGetClip(hh, d, mode, nan, lclip, rclip) : cudnnRNNGetClip_v8(d, mode, nan, lclip, rclip);
        fa_outs_check(legacy ? "RNN clip" : "RNN clip v8", it, s, &o, (legacy ? okh : ok) && o.all);
    }
    fz_check("RNN build dynamic", it, cudnnBuildRNNDynamic(hh, d, fa_int(1, 4)), NULL, 0, NULL, 0);
    fa_outs_init(&o);
    cudnnPersistentRNNPlan_t *plan = fa_out(&o, sizeof(cudnnPersistentRNNPlan_t));
    s = cudnnCreatePersistentRNNPlan(d, fa_int(1, 4), fa_type(r.dtype), plan);
    fa_outs_check("RNN persistent plan", it, s, &o, false);
    if (s == CUDNN_STATUS_SUCCESS) {
        fz_check("RNN set persistent plan", it, cudnnSetPersistentRNNPlan(d, *plan), NULL, 0, NULL, 0);
        fz_check("RNN destroy persistent plan", it, cudnnDestroyPersistentRNNPlan(*plan), NULL, 0, NULL, 0);
    }
    fa_outs_init(&o);
    s = cudnnGetRNNWeightSpaceSize(hh, d, fa_out(&o, sizeof(size_t)));
    fa_outs_check("RNN weight space size", it, s, &o, false);
    int lengths[FA_ARRAY];
    const int steps = fa_int(1, 3);
    for (int i = 0; i < FA_ARRAY; i++) lengths[i] = fa_length(steps);
    cudnnRNNDataDescriptor_t xd = NULL;
    if (!fa_rare()) {
        if (fa_rare()) cudnnCreateRNNDataDescriptor(&xd);
        else xd = fa_rnn_data(r.dtype, (cudnnRNNDataLayout_t)fa_mode(3), steps, fa_int(1, 3), r.input, lengths);
    }
    fa_outs_init(&o);
    void *ws = fa_out(&o, sizeof(size_t)), *rs = trand_int(0, 3) ? fa_out(&o, sizeof(size_t)) : NULL;
    s = cudnnGetRNNTempSpaceSizes(hh, d, (cudnnForwardMode_t)fa_mode(2), xd, ws, rs);
    fa_outs_check("RNN temp space sizes", it, s, &o, false);
    cudnnDestroyRNNDataDescriptor(xd);
    if (d != NULL) fa_rnn_reset(h, d, drop, it);
    cudnnDestroyRNNDescriptor(d);
}

/* What the attention getter gives, every output asked for (zeros where it refuses). */
struct fa_attn_state {
    unsigned mode;
    double scaler;
    cudnnDataType_t dtype, comp;
    cudnnMathType_t math;
    cudnnDropoutDescriptor_t drop[2];
    int n[12]; /* heads, then the sizes: q k v, projections q k v o, lengths qo kv, batch, beam */
    cudnnStatus_t s;
};

static void fa_attn_state(cudnnAttnDescriptor_t ad, struct fa_attn_state *st)
{
    memset(st, 0, sizeof *st);
    int *n = st->n;
    st->s = cudnnGetAttnDescriptor(ad, &st->mode, &n[0], &st->scaler, &st->dtype, &st->comp, &st->math, &st->drop[0],
                                   &st->drop[1], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6], &n[7], &n[8], &n[9],
                                   &n[10], &n[11]);
}

/* Sets an attention descriptor from random parameters (odd ones in an odd iteration); `set`: what
   the getter must then give. */
static cudnnStatus_t fa_attn_set(cudnnAttnDescriptor_t ad, cudnnDropoutDescriptor_t drop, struct fa_attn_state *set)
{
    struct fa_attn_state st;
    memset(&st, 0, sizeof st);
    int *n = st.n;
    st.mode = (unsigned)(fa_rare() ? trand_int(0, 15) : trand_int(0, 3));
    st.dtype = fa_type(CUDNN_DATA_FLOAT), st.comp = fa_type(st.dtype), st.math = (cudnnMathType_t)fa_mode(4);
    st.scaler = fa_rare() ? -1 : 1;
    st.drop[0] = trand_int(0, 1) ? NULL : drop, st.drop[1] = trand_int(0, 1) ? NULL : drop;
    n[0] = fa_int(1, 2), n[1] = fa_int(1, 4), n[4] = trand_int(0, 1) ? 0 : fa_int(1, 3);
    n[2] = n[4] > 0 ? fa_int(1, 4) : n[1], n[3] = fa_int(1, 4), n[5] = fa_rare() ? fa_int(0, 3) : n[4];
    n[6] = trand_int(0, 1) ? 0 : fa_int(1, 3), n[7] = trand_int(0, 1) ? 0 : fa_int(1, 3);
    n[8] = fa_int(1, 3), n[9] = fa_int(1, 3), n[10] = fa_int(1, 2), n[11] = fa_int(1, 2);
    if (set != NULL) memcpy(set, &st, sizeof st); /* padding bytes too: states are compared bytewise */
    return cudnnSetAttnDescriptor(ad, st.mode, n[0], st.scaler, st.dtype, st.comp, st.math, st.drop[0], st.drop[1],
                                  n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9], n[10], n[11]);
}

/* The attention descriptor read back (every output may be NULL) and the buffer sizes it gives
   (the reserve's may be NULL), from a descriptor set from random parameters, never set, or NULL. */
static void fa_attn_getters(cudnnHandle_t h, cudnnDropoutDescriptor_t drop, int it)
{
    cudnnAttnDescriptor_t ad = NULL;
    if (!fa_rare() && cudnnCreateAttnDescriptor(&ad) == CUDNN_STATUS_SUCCESS && !fa_rare()) fa_attn_set(ad, drop, NULL);
    cudnnHandle_t hh = fa_rare() ? NULL : h;
    struct fa_outs o;
    fa_outs_init(&o);
    void *p[19]; /* the mode, heads, scaler, types, math, dropouts, then 11 sizes */
    static const size_t sizes[8] = {sizeof(unsigned), sizeof(int), sizeof(double), sizeof(cudnnDataType_t),
                                    sizeof(cudnnDataType_t), sizeof(cudnnMathType_t),
                                    sizeof(cudnnDropoutDescriptor_t), sizeof(cudnnDropoutDescriptor_t)};
    for (int i = 0; i < 19; i++) p[i] = fa_out(&o, i < 8 ? sizes[i] : sizeof(int));
    cudnnStatus_t s = cudnnGetAttnDescriptor(ad, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10],
                                             p[11], p[12], p[13], p[14], p[15], p[16], p[17], p[18]);
    fa_outs_check("attention descriptor", it, s, &o, ad != NULL);
    fa_outs_init(&o);
    void *wb = fa_out(&o, sizeof(size_t)), *wsb = fa_out(&o, sizeof(size_t));
    void *rsb = trand_int(0, 1) ? fa_out(&o, sizeof(size_t)) : NULL;
    s = cudnnGetMultiHeadAttnBuffers(hh, ad, wb, wsb, rsb);
    fa_outs_check("multi-head attention buffers", it, s, &o, false);
    if (ad != NULL) { /* a second set, odd parameters in an odd iteration: read back as set, or unchanged */
        struct fa_attn_state before, after, set;
        fa_attn_state(ad, &before);
        s = fa_attn_set(ad, drop, &set);
        fz_check("attention descriptor setter", it, s, NULL, 0, NULL, 0);
        fa_attn_state(ad, &after);
        if (s != CUDNN_STATUS_SUCCESS && memcmp(&before, &after, sizeof before) != 0)
            FAIL("iteration %d: cudnnSetAttnDescriptor failed (status %d) but changed the descriptor", it, (int)s);
        if (s == CUDNN_STATUS_SUCCESS && memcmp(&set, &after, sizeof set) != 0)
            FAIL("iteration %d: cudnnSetAttnDescriptor succeeded but the getter reads back other values", it);
    }
    cudnnDestroyAttnDescriptor(ad);
}

/* What the _v8 getter gives (zeros where it refuses). */
struct fa_ctc_state {
    cudnnDataType_t comp;
    cudnnLossNormalizationMode_t norm;
    cudnnNanPropagation_t nan;
    int max_label;
    cudnnStatus_t s;
};

static void fa_ctc_state(cudnnCTCLossDescriptor_t cd, struct fa_ctc_state *st)
{
    memset(st, 0, sizeof *st);
    st->s = cudnnGetCTCLossDescriptor_v8(cd, &st->comp, &st->norm, &st->nan, &st->max_label);
}

/* The longest label a descriptor allows unless cudnnSetCTCLossDescriptor_v8 says otherwise: what a
   fresh one reads back. */
static int fa_ctc_default_max_label(void)
{
    struct fa_ctc_state st;
    cudnnCTCLossDescriptor_t cd = NULL;
    memset(&st, 0, sizeof st);
    if (cudnnCreateCTCLossDescriptor(&cd) == CUDNN_STATUS_SUCCESS) fa_ctc_state(cd, &st);
    cudnnDestroyCTCLossDescriptor(cd);
    return st.max_label;
}

/* Sets a CTC loss descriptor through one of its three setters, from random parameters; `want`
   becomes what the getter must then give: the older setters set the fields they lack to their
   defaults (no normalization, NaN not propagated, the default longest label). */
static cudnnStatus_t fa_ctc_set(cudnnCTCLossDescriptor_t cd, struct fa_ctc_state *want)
{
    struct fa_ctc_state st;
    memset(&st, 0, sizeof st);
    st.comp = fa_type(CUDNN_DATA_FLOAT);
    const cudnnLossNormalizationMode_t norm = (cudnnLossNormalizationMode_t)fa_mode(2);
    const cudnnNanPropagation_t nan = (cudnnNanPropagation_t)fa_mode(2);
    const int max_label = fa_int(1, 4);
    cudnnStatus_t s;
    st.norm = CUDNN_LOSS_NORMALIZATION_NONE, st.nan = CUDNN_NOT_PROPAGATE_NAN;
    st.max_label = fa_ctc_default_max_label();
    switch (trand_int(0, 2)) {
    case 0: s = cudnnSetCTCLossDescriptor(cd, st.comp); break;
    case 1:
        s = cudnnSetCTCLossDescriptorEx(cd, st.comp, norm, nan);
        st.norm = norm, st.nan = nan;
        break;
    default:
        s = cudnnSetCTCLossDescriptor_v8(cd, st.comp, norm, nan, max_label);
        st.norm = norm, st.nan = nan, st.max_label = max_label;
        break;
    }
    st.s = CUDNN_STATUS_SUCCESS;
    if (want != NULL) memcpy(want, &st, sizeof st);
    return s;
}

/* The CTC loss descriptor read back through each getter, set by any of the setters, never set,
   or NULL. */
static void fa_ctc_getters(int it)
{
    cudnnCTCLossDescriptor_t cd = NULL;
    if (!fa_rare() && cudnnCreateCTCLossDescriptor(&cd) == CUDNN_STATUS_SUCCESS && trand_int(0, 3))
        fa_ctc_set(cd, NULL);
    for (int getter = 0; getter < 3; getter++) {
        struct fa_outs o;
        fa_outs_init(&o);
        void *comp = fa_out(&o, sizeof(cudnnDataType_t));
        cudnnStatus_t s;
        if (getter == 0) {
            s = cudnnGetCTCLossDescriptor(cd, comp);
        } else {
            void *norm = fa_out(&o, sizeof(cudnnLossNormalizationMode_t));
            void *nan = fa_out(&o, sizeof(cudnnNanPropagation_t));
            s = getter == 1 ? cudnnGetCTCLossDescriptorEx(cd, comp, norm, nan)
                            : cudnnGetCTCLossDescriptor_v8(cd, comp, norm, nan, fa_out(&o, sizeof(int)));
        }
        static const char *const names[] = {"CTC loss descriptor", "CTC loss descriptor Ex", "CTC loss descriptor v8"};
        fa_outs_check(names[getter], it, s, &o, cd != NULL && o.all);
    }
    if (cd != NULL) { /* a second set, odd parameters: read back as set, or unchanged */
        struct fa_ctc_state before, after, want;
        fa_ctc_state(cd, &before);
        memcpy(&want, &before, sizeof want);
        const bool odd = fa_odd;
        fa_odd = true;
        const cudnnStatus_t s = fa_ctc_set(cd, &want);
        fa_odd = odd;
        fz_check("CTC loss descriptor setter", it, s, NULL, 0, NULL, 0);
        fa_ctc_state(cd, &after);
        if (s != CUDNN_STATUS_SUCCESS && memcmp(&before, &after, sizeof before) != 0)
            FAIL("iteration %d: a CTC loss descriptor setter failed (status %d) but changed it", it, (int)s);
        if (s == CUDNN_STATUS_SUCCESS && memcmp(&want, &after, sizeof want) != 0)
            FAIL("iteration %d: a CTC loss descriptor setter succeeded but the getter reads back other values", it);
    }
    cudnnDestroyCTCLossDescriptor(cd);
}

TEST(fuzz_adv_with_random_descriptors)
{
    cudnnHandle_t h = test_handle();
    void *states;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.25f, trand_u64(), &states);
    for (int it = 0; it < FZ_ITERATIONS(150) && !current_test_failed(); it++) {
        const enum fa_op op = (enum fa_op)trand_int(0, FA_OPS - 1);
        fa_odd = trand_int(0, 2) == 0;
        if (op == FA_RNN_GETTERS) fa_rnn_getters(h, drop, it);
        else if (op == FA_ATTN_GETTERS) fa_attn_getters(h, drop, it);
        else if (op == FA_CTC_GETTERS) fa_ctc_getters(it);
        else if (op <= FA_RNN_WEIGHT_PARAMS) fa_rnn_v8(h, drop, op, it);
        else if (op <= FA_LEGACY_PARAMS) fa_rnn_legacy(h, drop, op, it);
        else if (op <= FA_ATTN_WEIGHTS) fa_attention(h, drop, op, it);
        else fa_ctc(h, op, it);
    }
    tdropout_free(drop, states);
}
