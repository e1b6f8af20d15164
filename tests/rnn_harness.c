/* rnn_harness.c: one RNN case end to end (rnn_harness.h). The reference takes its weights in
   its own layout; the harness writes them into the weight space through the addresses
   cudnnGetRNNWeightParams returns (a missing matrix or bias: the reference's block is zeroed),
   so the cuDNN weight layout is tested on the way. Inputs hold NaN at padding positions (they
   must not be read); outputs are poisoned. */
#include "rnn_harness.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rnn_unpacked(cudnnRNNDataLayout_t l)
{
    return l != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
}

/* Position of step t of sequence n, as the 8.2 API reference describes the layouts. */
static int64_t pos_of(const struct rnn_case *c, int t, int n)
{
    switch (c->layout) {
    case CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED: return (int64_t)t * c->N + n;
    case CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED: return (int64_t)n * c->T + t;
    default: {
        int64_t at = 0;
        for (int u = 0; u < t; u++)
            for (int m = 0; m < c->N; m++) at += c->lengths[m] > u;
        return at + n;
    }
    }
}

static int64_t positions(const struct rnn_case *c)
{
    if (rnn_unpacked(c->layout)) return (int64_t)c->T * c->N;
    int64_t n = 0;
    for (int i = 0; i < c->N; i++) n += c->lengths[i];
    return n;
}

/* [pos][vec] values to the reference's [T][N][vec] (0 past a length), and back. */
double *rnn_to_ref(const struct rnn_case *c, const double *v, int vec)
{
    double *r = calloc((size_t)c->T * c->N * vec, sizeof(double));
    for (int n = 0; n < c->N; n++)
        for (int t = 0; t < c->lengths[n]; t++)
            memcpy(r + ((int64_t)t * c->N + n) * vec, v + pos_of(c, t, n) * vec, sizeof(double) * (size_t)vec);
    return r;
}

static double *from_ref(const struct rnn_case *c, const double *r, int vec, double pad)
{
    int64_t np = positions(c);
    double *v = malloc(sizeof(double) * (size_t)(np * vec));
    for (int64_t i = 0; i < np * vec; i++) v[i] = pad;
    for (int n = 0; n < c->N; n++)
        for (int t = 0; t < c->lengths[n]; t++)
            memcpy(v + pos_of(c, t, n) * vec, r + ((int64_t)t * c->N + n) * vec, sizeof(double) * (size_t)vec);
    return v;
}

/* Random data at the valid positions, NaN at the padding. */
double *rnn_random_data(const struct rnn_case *c, int vec)
{
    double *r = tview_random((int64_t)c->T * c->N * vec, -1, 1);
    double *v = from_ref(c, r, vec, NAN);
    free(r);
    return v;
}

cudnnDataType_t rnn_math_prec(cudnnDataType_t t)
{
    return t == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

cudnnTensorDescriptor_t rnn_state_desc(cudnnDataType_t t, int a, int b, int w)
{
    cudnnTensorDescriptor_t d;
    int dims[3] = {a, b, w}, strides[3] = {b * w, w, 1};
    cudnnCreateTensorDescriptor(&d);
    cudnnSetTensorNdDescriptor(d, t, 3, dims, strides);
    return d;
}

/* Maps every matrix and bias of the weight space to the reference's parameters. */
static bool map_weights(struct rnn_run *u)
{
    const struct rnn_case *c = u->c;
    cudnnHandle_t h = test_handle();
    size_t es = tdtype_size(c->dtype);
    u->ref_of = malloc(sizeof(int64_t) * (size_t)u->wcount);
    for (int64_t i = 0; i < u->wcount; i++) u->ref_of[i] = -1;
    cudnnTensorDescriptor_t md, bd;
    cudnnCreateTensorDescriptor(&md);
    cudnnCreateTensorDescriptor(&bd);
    bool ok = true;
    int ids = c->mode == CUDNN_LSTM ? 9 : 2 * u->G;
    for (int pl = 0; ok && pl < c->layers * u->D; pl++) {
        int layer = pl / u->D, in = ref_rnn_layer_input(&u->r, layer);
        for (int id = 0; ok && id < ids; id++) {
            bool projection = id == 8;
            if (projection && c->proj == c->hidden) continue;
            void *ma = NULL, *ba = NULL;
            ok = CHECK_OK(cudnnGetRNNWeightParams(h, u->d, pl, u->wbytes, u->pw, id, md, &ma, bd, &ba));
            if (!ok) break;
            enum ref_rnn_block mb = projection ? REF_RNN_WP : id < u->G ? REF_RNN_W : REF_RNN_R;
            int g = projection ? 0 : id % u->G;
            int rows = projection ? c->proj : c->hidden, cols = projection ? c->hidden : id < u->G ? in : u->P;
            int64_t base = ref_rnn_param(&u->r, pl, mb, g);
            if (ma) {
                int64_t off = ((char *)ma - (char *)u->pw) / (int64_t)es;
                if (!CHECK(off >= 0 && off + (int64_t)rows * cols <= u->wcount)) return false;
                for (int64_t k = 0; k < (int64_t)rows * cols; k++) {
                    if (!CHECK(u->ref_of[off + k] < 0)) return false; /* two matrices overlap */
                    u->ref_of[off + k] = base + k;
                }
            } else {
                for (int64_t k = 0; k < (int64_t)rows * cols; k++) u->w_ref[base + k] = 0;
            }
            if (projection) continue;
            int64_t bbase = ref_rnn_param(&u->r, pl, id < u->G ? REF_RNN_BW : REF_RNN_BR, g);
            if (ba) {
                int64_t off = ((char *)ba - (char *)u->pw) / (int64_t)es;
                if (!CHECK(off >= 0 && off + c->hidden <= u->wcount)) return false;
                for (int k = 0; k < c->hidden; k++) {
                    if (!CHECK(u->ref_of[off + k] < 0)) return false;
                    u->ref_of[off + k] = bbase + k;
                }
            } else {
                for (int k = 0; k < c->hidden; k++) u->w_ref[bbase + k] = 0;
            }
        }
    }
    cudnnDestroyTensorDescriptor(md);
    cudnnDestroyTensorDescriptor(bd);
    return ok;
}

/* Weight space values from the reference's (rounded to the type; the reference gets the
   rounded values back), unmapped elements 0. */
static void upload_weights(struct rnn_run *u)
{
    for (int64_t i = 0; i < u->wcount; i++) u->w_space[i] = u->ref_of[i] >= 0 ? u->w_ref[u->ref_of[i]] : 0;
    tbuf_free(u->pw);
    u->pw = tvalues_upload(u->c->dtype, u->w_space, u->wcount);
    for (int64_t i = 0; i < u->wcount; i++)
        if (u->ref_of[i] >= 0) u->w_ref[u->ref_of[i]] = u->w_space[i];
}

/* The legacy calls' descriptors (per-step tensors, the weight filter) and their size queries,
   which must agree with the v8 ones. */
static bool legacy_init(struct rnn_run *u)
{
    const struct rnn_case *c = u->c;
    u->xs = calloc((size_t)c->T, sizeof *u->xs);
    u->ys = calloc((size_t)c->T, sizeof *u->ys);
    for (int t = 0; t < c->T; t++) {
        int batch = 0;
        for (int n = 0; n < c->N; n++) batch += c->lengths[n] > t;
        int dx[3] = {batch, c->input, 1}, sx[3] = {c->input, 1, 1};
        int dy[3] = {batch, c->dirs * c->proj, 1}, sy[3] = {c->dirs * c->proj, 1, 1};
        cudnnCreateTensorDescriptor(&u->xs[t]);
        cudnnCreateTensorDescriptor(&u->ys[t]);
        cudnnSetTensorNdDescriptor(u->xs[t], c->dtype, 3, dx, sx);
        cudnnSetTensorNdDescriptor(u->ys[t], c->dtype, 3, dy, sy);
    }
    int wdims[3] = {(int)(u->wbytes / tdtype_size(c->dtype)), 1, 1};
    cudnnCreateFilterDescriptor(&u->wd);
    bool ok = CHECK_OK(cudnnSetFilterNdDescriptor(u->wd, c->dtype, CUDNN_TENSOR_NCHW, 3, wdims));
    if (c->api == API_LEGACY) {
        size_t ws = 0, rs = 0, params = 0;
        ok = ok && CHECK_OK(cudnnGetRNNWorkspaceSize(test_handle(), u->d, c->T, u->xs, &ws)) &&
             CHECK_OK(cudnnGetRNNTrainingReserveSize(test_handle(), u->d, c->T, u->xs, &rs)) &&
             CHECK_OK(cudnnGetRNNParamsSize(test_handle(), u->d, u->xs[0], &params, c->dtype));
        ok = ok && CHECK(ws == u->ws_bytes && rs == u->rs_bytes && params == u->wbytes);
    }
    return ok;
}

/* The cell clip range: [-0.4, 0.5], which many cells of the tests' recurrences cross. In 16-bit
   data a cell within a rounding error of a bound can land on the other side of it than in the
   double reference, and the clip's derivative (0 or 1) then moves dw wholesale (about 1 seed in
   150): there the range is one no cell reaches (|c| <= |cx| + T <= 1 + T), and clipping's effect
   is checked in float and double. */
static void clip_range(const struct rnn_case *c, double *lclip, double *rclip)
{
    const bool coarse = c->dtype == CUDNN_DATA_HALF || c->dtype == CUDNN_DATA_BFLOAT16;
    *lclip = coarse ? -2.0 - c->T : -0.4;
    *rclip = coarse ? 2.0 + c->T : 0.5;
}

bool rnn_run_init(struct rnn_run *u, const struct rnn_case *c)
{
    memset(u, 0, sizeof *u);
    u->c = c;
    cudnnHandle_t h = test_handle();
    u->G = ref_rnn_gates(c->mode);
    u->D = c->dirs;
    u->P = c->proj;
    u->pos = positions(c);
    double lclip, rclip;
    clip_range(c, &lclip, &rclip);
    u->r = (struct ref_rnn){c->mode, c->layers, c->dirs, c->input, c->hidden, c->proj, c->input_mode == CUDNN_SKIP_INPUT,
                            c->clip, lclip, rclip, c->T, c->N, c->lengths};
    cudnnCreateRNNDescriptor(&u->d);
    bool ok = CHECK_OK(cudnnSetRNNDescriptor_v8(
        u->d, c->algo, c->mode, c->bias, c->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
        c->input_mode, c->dtype, rnn_math_prec(c->dtype), CUDNN_DEFAULT_MATH, c->input, c->hidden, c->proj, c->layers, NULL,
        rnn_unpacked(c->layout) ? CUDNN_RNN_PADDED_IO_ENABLED : 0));
    if (ok && c->clip) ok = CHECK_OK(cudnnRNNSetClip_v8(u->d, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, lclip, rclip));
    if (ok && c->algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC) {
        /* the plan for the batch: NVIDIA's sample makes a legacy plan, the v8 API builds */
        if (c->api == API_LEGACY)
            ok = CHECK_OK(cudnnCreatePersistentRNNPlan(u->d, c->N, c->dtype, &u->plan)) &&
                 CHECK_OK(cudnnSetPersistentRNNPlan(u->d, u->plan));
        else
            ok = CHECK_OK(cudnnBuildRNNDynamic(h, u->d, c->N));
    }
    cudnnCreateRNNDataDescriptor(&u->xd);
    cudnnCreateRNNDataDescriptor(&u->yd);
    u->fill = 7.0;
    double fill_store[1];
    char fill[8];
    fill_store[0] = u->fill;
    tstore(c->dtype, fill, 0, fill_store[0]);
    ok = ok && CHECK_OK(cudnnSetRNNDataDescriptor(u->xd, c->dtype, c->layout, c->T, c->N, c->input, c->lengths, NULL));
    ok = ok && CHECK_OK(cudnnSetRNNDataDescriptor(u->yd, c->dtype, c->layout, c->T, c->N, c->dirs * c->proj, c->lengths,
                                                  fill));
    u->hd = rnn_state_desc(c->dtype, c->layers * c->dirs, c->N, c->proj);
    u->cd = rnn_state_desc(c->dtype, c->layers * c->dirs, c->N, c->hidden);
    ok = ok && CHECK_OK(cudnnGetRNNWeightSpaceSize(h, u->d, &u->wbytes));
    ok = ok && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, u->d, CUDNN_FWD_MODE_TRAINING, u->xd, &u->ws_bytes, &u->rs_bytes));
    if (!ok) return false;
    size_t infer_ws = 0, infer_rs = 1;
    ok = CHECK_OK(cudnnGetRNNTempSpaceSizes(h, u->d, CUDNN_FWD_MODE_INFERENCE, u->xd, &infer_ws, &infer_rs)) &&
         CHECK(infer_rs == 0);
    if (infer_ws > u->ws_bytes) u->ws_bytes = infer_ws;
    if (ok && c->api != API_V8) ok = legacy_init(u);
    u->wcount = (int64_t)(u->wbytes / tdtype_size(c->dtype));
    u->pw = tbuf_alloc(u->wbytes ? u->wbytes : 1);
    u->w_ref = tview_random(ref_rnn_param_count(&u->r), -0.6, 0.6);
    u->w_space = malloc(sizeof(double) * (size_t)(u->wcount + 1));
    ok = ok && map_weights(u);
    if (!ok) return false;
    upload_weights(u);
    u->x = rnn_random_data(c, c->input);
    u->px = tvalues_upload(c->dtype, u->x, u->pos * c->input);
    int64_t hn = (int64_t)c->layers * c->dirs * c->N;
    if (c->states) {
        u->hx = tview_random(hn * c->proj, -1, 1);
        u->cx = tview_random(hn * c->hidden, -1, 1);
        u->phx = tvalues_upload(c->dtype, u->hx, hn * c->proj);
        u->pcx = tvalues_upload(c->dtype, u->cx, hn * c->hidden);
    }
    u->plen = tbuf_from(c->lengths, sizeof(int) * (size_t)c->N);
    rnn_run_spaces(u, u->ws_bytes, u->rs_bytes);
    return true;
}

bool rnn_run_open(struct rnn_run *u, const struct rnn_case *c)
{
    if (rnn_run_init(u, c)) return true;
    rnn_run_free(u);
    return false;
}

void rnn_run_spaces(struct rnn_run *u, size_t ws_bytes, size_t rs_bytes)
{
    tbuf_free(u->pws), tbuf_free(u->prs);
    u->ws_bytes = ws_bytes, u->rs_bytes = rs_bytes;
    u->pws = tbuf_alloc(ws_bytes ? ws_bytes : 1);
    u->prs = tbuf_alloc(rs_bytes ? rs_bytes : 1);
}

void rnn_run_free(struct rnn_run *u)
{
    cudnnDestroyRNNDescriptor(u->d);
    cudnnDestroyRNNDataDescriptor(u->xd);
    cudnnDestroyRNNDataDescriptor(u->yd);
    cudnnDestroyTensorDescriptor(u->hd);
    cudnnDestroyTensorDescriptor(u->cd);
    for (int t = 0; u->xs && t < u->c->T; t++) cudnnDestroyTensorDescriptor(u->xs[t]), cudnnDestroyTensorDescriptor(u->ys[t]);
    if (u->wd) cudnnDestroyFilterDescriptor(u->wd);
    if (u->dd) cudnnDestroyDropoutDescriptor(u->dd);
    if (u->plan) cudnnDestroyPersistentRNNPlan(u->plan);
    if (u->d_bwd) cudnnDestroyRNNDescriptor(u->d_bwd);
    if (u->pstates) tbuf_free(u->pstates);
    free(u->states_snap);
    free(u->xs), free(u->ys);
    free(u->w_ref), free(u->w_space), free(u->ref_of), free(u->x), free(u->hx), free(u->cx);
    void *bufs[] = {u->pw, u->px, u->phx, u->pcx, u->plen, u->pws, u->prs};
    for (size_t i = 0; i < TLEN(bufs); i++)
        if (bufs[i]) tbuf_free(bufs[i]);
}

double rnn_tol_of(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE: return 1e-10;
    case CUDNN_DATA_HALF: return 2e-2;
    case CUDNN_DATA_BFLOAT16: return 8e-2;
    default: return 2e-5;
    }
}

/* A case's tolerance: its data type's, widened by the length of its longest dot product (a
   layer's input row and its recurrent row) past the 64 that rnn_tol_of is set for. Float
   rounding grows with it (an LSTM of hidden 512 differs from the double reference by up to about
   3e-5 over 7 steps, in an order of sums that a threaded CBLAS may change from run to run). In
   16-bit data the error is h's rounding to the type at every step, summed over the recurrent
   row as independent errors, so it grows as the row's square root (the half LSTM of hidden 512
   differs by up to 0.024 over 7 steps: about one seed in several hundred passes 0.02). */
double rnn_case_tol(const struct rnn_case *c)
{
    double tol = rnn_tol_of(c->dtype);
    const int row = (c->input > c->dirs * c->proj ? c->input : c->dirs * c->proj) + c->proj;
    if (row <= 64 || c->dtype == CUDNN_DATA_DOUBLE) return tol;
    return c->dtype == CUDNN_DATA_FLOAT ? tol * (row / 64.0) : tol * sqrt(row / 64.0);
}

bool rnn_compare(const char *what, const struct rnn_case *c, const double *got, const double *want, int64_t n,
                    double tol)
{
    for (int64_t i = 0; i < n; i++) {
        bool ok = isnan(want[i]) ? isnan(got[i]) : fabs(got[i] - want[i]) <= tol * fmax(1, fabs(want[i]));
        if (!ok) {
            FAIL("%s %s: element %lld is %.9g, expected %.9g", c->name, what, (long long)i, got[i], want[i]);
            return false;
        }
    }
    return true;
}


void rnn_fwd_free(struct fwd_out *o)
{
    free(o->y), free(o->hy), free(o->cy);
}

void rnn_reference_forward(const struct rnn_run *u, struct fwd_out *o)
{
    const struct rnn_case *c = u->c;
    int64_t hn = (int64_t)c->layers * c->dirs * c->N;
    double *xr = rnn_to_ref(c, u->x, c->input), *yr = calloc((size_t)c->T * c->N * c->dirs * c->proj, sizeof(double));
    o->hy = malloc(sizeof(double) * (size_t)(hn * c->proj));
    o->cy = malloc(sizeof(double) * (size_t)(hn * c->hidden));
    ref_rnn_forward(&u->r, u->w_ref, xr, u->hx, u->cx, yr, o->hy, o->cy);
    o->y = from_ref(c, yr, c->dirs * c->proj, u->fill);
    free(xr), free(yr);
}

/* One forward call through the case's API. */
bool rnn_call_forward(struct rnn_run *u, cudnnForwardMode_t mode, void *py, void *phy, void *pcy)
{
    const struct rnn_case *c = u->c;
    cudnnHandle_t h = test_handle();
    bool train = mode == CUDNN_FWD_MODE_TRAINING;
    switch (c->api) {
    case API_LEGACY:
        if (train)
            return CHECK_OK(cudnnRNNForwardTraining(h, u->d, c->T, u->xs, u->px, u->hd, u->phx, u->cd, u->pcx, u->wd,
                                                    u->pw, u->ys, py, u->hd, phy, u->cd, pcy, u->pws, u->ws_bytes,
                                                    u->prs, u->rs_bytes));
        return CHECK_OK(cudnnRNNForwardInference(h, u->d, c->T, u->xs, u->px, u->hd, u->phx, u->cd, u->pcx, u->wd,
                                                 u->pw, u->ys, py, u->hd, phy, u->cd, pcy, u->pws, u->ws_bytes));
    case API_EX:
        if (train)
            return CHECK_OK(cudnnRNNForwardTrainingEx(h, u->d, u->xd, u->px, u->hd, u->phx, u->cd, u->pcx, u->wd,
                                                      u->pw, u->yd, py, u->hd, phy, u->cd, pcy, NULL, NULL, NULL, NULL,
                                                      NULL, NULL, NULL, NULL, u->pws, u->ws_bytes, u->prs,
                                                      u->rs_bytes));
        return CHECK_OK(cudnnRNNForwardInferenceEx(h, u->d, u->xd, u->px, u->hd, u->phx, u->cd, u->pcx, u->wd, u->pw,
                                                   u->yd, py, u->hd, phy, u->cd, pcy, NULL, NULL, NULL, NULL, NULL,
                                                   NULL, NULL, NULL, u->pws, u->ws_bytes));
    default:
        return CHECK_OK(cudnnRNNForward(h, u->d, mode, u->plen, u->xd, u->px, u->yd, py, u->hd, u->phx, phy, u->cd,
                                        u->pcx, pcy, u->wbytes, u->pw, u->ws_bytes, u->pws, u->rs_bytes, u->prs));
    }
}

/* Backward data and weights through the case's API (the weights' gradients added to pdw). */
bool rnn_call_backward(struct rnn_run *u, void *py, void *pdy, void *pdhy, void *pdcy, void *pdx, void *pdhx,
                          void *pdcx, void *pdw)
{
    const struct rnn_case *c = u->c;
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d = u->d_bwd ? u->d_bwd : u->d;
    switch (c->api) {
    case API_LEGACY:
        return CHECK_OK(cudnnRNNBackwardData(h, d, c->T, u->ys, py, u->ys, pdy, u->hd, pdhy, u->cd, pdcy, u->wd,
                                             u->pw, u->hd, u->phx, u->cd, u->pcx, u->xs, pdx, u->hd, pdhx, u->cd,
                                             pdcx, u->pws, u->ws_bytes, u->prs, u->rs_bytes)) &&
               CHECK_OK(cudnnRNNBackwardWeights(h, d, c->T, u->xs, u->px, u->hd, u->phx, u->ys, py, u->pws,
                                                u->ws_bytes, u->wd, pdw, u->prs, u->rs_bytes));
    case API_EX:
        return CHECK_OK(cudnnRNNBackwardDataEx(h, d, u->yd, py, u->yd, pdy, NULL, NULL, u->hd, pdhy, u->cd, pdcy,
                                               u->wd, u->pw, u->hd, u->phx, u->cd, u->pcx, u->xd, pdx, u->hd, pdhx,
                                               u->cd, pdcx, NULL, NULL, u->pws, u->ws_bytes, u->prs, u->rs_bytes)) &&
               CHECK_OK(cudnnRNNBackwardWeightsEx(h, d, u->xd, u->px, u->hd, u->phx, u->yd, py, u->pws,
                                                  u->ws_bytes, u->wd, pdw, u->prs, u->rs_bytes));
    default:
        return CHECK_OK(cudnnRNNBackwardData_v8(h, d, u->plen, u->yd, py, pdy, u->xd, pdx, u->hd, u->phx, pdhy,
                                                pdhx, u->cd, u->pcx, pdcy, pdcx, u->wbytes, u->pw, u->ws_bytes,
                                                u->pws, u->rs_bytes, u->prs)) &&
               CHECK_OK(cudnnRNNBackwardWeights_v8(h, d, CUDNN_WGRAD_MODE_ADD, u->plen, u->xd, u->px, u->hd,
                                                   u->phx, u->yd, py, u->wbytes, pdw, u->ws_bytes, u->pws,
                                                   u->rs_bytes, u->prs));
    }
}

/* One forward call; y, hy, cy poisoned first and read back. */
bool rnn_library_forward(struct rnn_run *u, cudnnForwardMode_t mode, struct fwd_out *o, void **py_out)
{
    const struct rnn_case *c = u->c;
    int64_t hn = (int64_t)c->layers * c->dirs * c->N, ny = u->pos * c->dirs * c->proj;
    size_t es = tdtype_size(c->dtype);
    void *py = tbuf_alloc((size_t)ny * es), *phy = tbuf_alloc((size_t)(hn * c->proj) * es);
    void *pcy = tbuf_alloc((size_t)(hn * c->hidden) * es);
    bool ok = rnn_call_forward(u, mode, py, phy, pcy);
    o->y = tvalues_download(c->dtype, py, ny);
    o->hy = tvalues_download(c->dtype, phy, hn * c->proj);
    o->cy = tvalues_download(c->dtype, pcy, hn * c->hidden);
    if (py_out) *py_out = py;
    else tbuf_free(py);
    tbuf_free(phy), tbuf_free(pcy);
    return ok;
}

bool rnn_check_forward(const struct rnn_run *u, const struct fwd_out *got, const struct fwd_out *want,
                          const char *mode)
{
    const struct rnn_case *c = u->c;
    int64_t hn = (int64_t)c->layers * c->dirs * c->N;
    double tol = rnn_case_tol(c);
    char what[64];
    snprintf(what, sizeof what, "%s y", mode);
    bool ok = rnn_compare(what, c, got->y, want->y, u->pos * c->dirs * c->proj, tol);
    snprintf(what, sizeof what, "%s hy", mode);
    ok = ok && rnn_compare(what, c, got->hy, want->hy, hn * c->proj, tol);
    snprintf(what, sizeof what, "%s cy", mode);
    if (c->mode == CUDNN_LSTM) ok = ok && rnn_compare(what, c, got->cy, want->cy, hn * c->hidden, tol);
    return ok;
}

/* Forward (both modes), then backward data and weights against the reference. */
bool rnn_check_case(const struct rnn_case *c)
{
    struct rnn_run u;
    bool ok = rnn_run_init(&u, c) && rnn_check_run(&u);
    rnn_run_free(&u);
    return ok;
}

bool rnn_check_run(struct rnn_run *u)
{
    const struct rnn_case *c = u->c;
    struct fwd_out want = {0}, inf = {0}, train = {0};
    void *py = NULL;
    rnn_reference_forward(u, &want);
    bool ok = rnn_library_forward(u, CUDNN_FWD_MODE_INFERENCE, &inf, NULL) &&
              rnn_check_forward(u, &inf, &want, "inference");
    ok = ok && rnn_library_forward(u, CUDNN_FWD_MODE_TRAINING, &train, &py) &&
         rnn_check_forward(u, &train, &want, "training");
    if (ok) {
        int64_t hn = (int64_t)c->layers * c->dirs * c->N, ny = u->pos * c->dirs * c->proj;
        size_t es = tdtype_size(c->dtype);
        double *dy = rnn_random_data(c, c->dirs * c->proj), *dhy = NULL, *dcy = NULL;
        void *pdy = tvalues_upload(c->dtype, dy, ny), *pdhy = NULL, *pdcy = NULL;
        if (c->states) {
            dhy = tview_random(hn * c->proj, -1, 1);
            dcy = tview_random(hn * c->hidden, -1, 1);
            pdhy = tvalues_upload(c->dtype, dhy, hn * c->proj);
            pdcy = tvalues_upload(c->dtype, dcy, hn * c->hidden);
        }
        void *pdx = tbuf_alloc((size_t)(u->pos * c->input) * es), *pdhx = tbuf_alloc((size_t)(hn * c->proj) * es);
        void *pdcx = tbuf_alloc((size_t)(hn * c->hidden) * es);
        /* dw: a random base the call adds to */
        double *base = tview_random(u->wcount, -1, 1);
        void *pdw = tvalues_upload(c->dtype, base, u->wcount);
        ok = rnn_call_backward(u, py, pdy, pdhy, pdcy, pdx, pdhx, pdcx, pdw);
        /* the reference */
        double *xr = rnn_to_ref(c, u->x, c->input), *dyr = rnn_to_ref(c, dy, c->dirs * c->proj);
        double *dxr = calloc((size_t)c->T * c->N * c->input, sizeof(double));
        double *dhx = calloc((size_t)(hn * c->proj), sizeof(double)), *dcx = calloc((size_t)(hn * c->hidden), sizeof(double));
        double *dwr = calloc((size_t)ref_rnn_param_count(&u->r), sizeof(double));
        ref_rnn_backward(&u->r, u->w_ref, xr, u->hx, u->cx, dyr, dhy, dcy, dxr, dhx, dcx, dwr);
        double *want_dx = from_ref(c, dxr, c->input, 0);
        double *want_dw = malloc(sizeof(double) * (size_t)(u->wcount + 1));
        for (int64_t i = 0; i < u->wcount; i++) want_dw[i] = base[i] + (u->ref_of[i] >= 0 ? dwr[u->ref_of[i]] : 0);
        double *got_dx = tvalues_download(c->dtype, pdx, u->pos * c->input);
        double *got_dhx = tvalues_download(c->dtype, pdhx, hn * c->proj);
        double *got_dcx = tvalues_download(c->dtype, pdcx, hn * c->hidden);
        double *got_dw = tvalues_download(c->dtype, pdw, u->wcount);
        double tol = 4 * rnn_case_tol(c);
        ok = ok && rnn_compare("dx", c, got_dx, want_dx, u->pos * c->input, tol);
        ok = ok && rnn_compare("dhx", c, got_dhx, dhx, hn * c->proj, tol);
        if (c->mode == CUDNN_LSTM) ok = ok && rnn_compare("dcx", c, got_dcx, dcx, hn * c->hidden, tol);
        ok = ok && rnn_compare("dw", c, got_dw, want_dw, u->wcount, tol);
        free(dy), free(dhy), free(dcy), free(base), free(xr), free(dyr), free(dxr), free(dhx), free(dcx), free(dwr);
        free(want_dx), free(want_dw), free(got_dx), free(got_dhx), free(got_dcx), free(got_dw);
        void *bufs[] = {pdy, pdhy, pdcy, pdx, pdhx, pdcx, pdw};
        for (size_t i = 0; i < TLEN(bufs); i++)
            if (bufs[i]) tbuf_free(bufs[i]);
    }
    if (py) tbuf_free(py);
    rnn_fwd_free(&want), rnn_fwd_free(&inf), rnn_fwd_free(&train);
    return ok;
}

/* ---- a float training pass driven by a test (the compat_rnn* replays) ---------------------- */

/* The legacy backward passes of a run checked against the reference: dx (the packed positions
   read back into the reference's order) from dy and the final states' gradients dhy, dcy (NULL:
   zero), and the weight gradient added to `base` (the values pdw held before the call). */
void rnn_check_train_backward(const struct rnn_run *u, const double *dy, const double *dhy, const double *dcy,
                              const void *pdx, const void *pdw, double *base, const char *who)
{
    const struct rnn_case *c = u->c;
    const int64_t hn = (int64_t)c->layers * c->dirs * c->N, nref = (int64_t)c->T * c->N * c->input;
    double *xr = rnn_to_ref(c, u->x, c->input), *dyr = rnn_to_ref(c, dy, c->dirs * c->proj);
    double *dxr = calloc((size_t)nref, sizeof(double));
    double *dhx = calloc((size_t)(hn * c->proj), sizeof(double)), *dcx = calloc((size_t)(hn * c->hidden), sizeof(double));
    double *dwr = calloc((size_t)ref_rnn_param_count(&u->r), sizeof(double));
    ref_rnn_backward(&u->r, u->w_ref, xr, u->hx, u->cx, dyr, dhy, dcy, dxr, dhx, dcx, dwr);
    double *got = tvalues_download(CUDNN_DATA_FLOAT, pdx, u->pos * c->input), *got_ref = rnn_to_ref(c, got, c->input);
    char what[64];
    snprintf(what, sizeof what, "%s dx", who);
    CHECK(rnn_compare(what, c, got_ref, dxr, nref, 4 * rnn_tol_of(CUDNN_DATA_FLOAT)));
    for (int64_t i = 0; i < u->wcount; i++) base[i] += u->ref_of[i] >= 0 ? dwr[u->ref_of[i]] : 0;
    snprintf(what, sizeof what, "%s dw (added)", who);
    tvalues_check(CUDNN_DATA_FLOAT, pdw, base, u->wcount, 4 * rnn_tol_of(CUDNN_DATA_FLOAT), what);
    free(xr), free(dyr), free(dxr), free(dhx), free(dcx), free(dwr), free(got), free(got_ref);
}

void rnn_train_bufs_init(struct rnn_train_bufs *b, const struct rnn_run *u)
{
    const struct rnn_case *c = u->c;
    const int64_t hn = (int64_t)c->layers * c->dirs * c->N, ny = u->pos * c->dirs * c->proj;
    const size_t hb = sizeof(float) * (size_t)(hn * c->hidden);
    b->dy = rnn_random_data(c, c->dirs * c->proj);
    b->dhy = tview_random(hn * c->hidden, -1, 1);
    b->dcy = c->mode == CUDNN_LSTM ? tview_random(hn * c->hidden, -1, 1) : NULL;
    b->zeros = tview_fill(u->wcount, 0);
    b->py = tbuf_alloc(sizeof(float) * (size_t)ny), b->pdx = tbuf_alloc(sizeof(float) * (size_t)(u->pos * c->input));
    b->phy = tbuf_alloc(hb), b->pcy = tbuf_alloc(hb), b->pdhx = tbuf_alloc(hb), b->pdcx = tbuf_alloc(hb);
    b->pdy = tvalues_upload(CUDNN_DATA_FLOAT, b->dy, ny);
    b->pdhy = tvalues_upload(CUDNN_DATA_FLOAT, b->dhy, hn * c->hidden);
    b->pdcy = b->dcy ? tvalues_upload(CUDNN_DATA_FLOAT, b->dcy, hn * c->hidden) : NULL;
    b->pdw = tvalues_upload(CUDNN_DATA_FLOAT, b->zeros, u->wcount);
}

void rnn_train_bufs_free(struct rnn_train_bufs *b)
{
    void *bufs[] = {b->py, b->pdx, b->phy, b->pcy, b->pdhx, b->pdcx, b->pdy, b->pdhy, b->pdcy, b->pdw};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(b->dy), free(b->dhy), free(b->dcy), free(b->zeros);
}

/* A training forward's y in b (projection-free: dirs x hidden values a position) against the
   reference's. */
bool rnn_train_y_matches(const struct rnn_run *u, const struct rnn_train_bufs *b, const double *want_y,
                         const char *what)
{
    const struct rnn_case *c = u->c;
    const int64_t width = (int64_t)c->dirs * c->hidden;
    double *got = tvalues_download(CUDNN_DATA_FLOAT, b->py, u->pos * width), *got_ref = rnn_to_ref(c, got, (int)width);
    double *want_ref = rnn_to_ref(c, want_y, (int)width);
    const bool ok = CHECK(rnn_compare(what, c, got_ref, want_ref, (int64_t)c->T * c->N * width, rnn_tol_of(CUDNN_DATA_FLOAT)));
    free(got), free(got_ref), free(want_ref);
    return ok;
}
