/* compat_toolkits.c: call patterns of real programs (docs/compatibility.md) from the toolkits
   of the cuDNN 5-8 era that drive it through their own engines: Microsoft's CNTK (its
   convolution engine's search over every algorithm number up to 10, each direction on its own
   descriptor, the deterministic algorithms, tensors re-set for each batch size through a Get/Set
   round trip), Theano (tensors padded to 3 dims, its reductions on them), torch7's cudnn.torch
   (the convolution descriptor read back with CUDNN_DIM_MAX values asked for), DyNet (max pooling
   whose "same" padding leaves y longer than the floor formula), OpenCV's DNN module (its fused
   convolution on the algorithm it picked), KataGo (half NHWC convolutions on a fixed algorithm,
   the dilated ones with an NCHW filter), oneDNN's NVIDIA backend (its s8 eltwise and softmax
   forward, its pooling with the larger pad first and a y shorter than cuDNN's formula).
   Each result against the double references of tests/ref/. (compat_libs.c: the C
   and C++ libraries; compat.c, compat_ops.c, compat_conv.c: the frameworks; compat_rnn.c,
   compat_rnn_more.c: every program's RNN calls.) */
#include "conv_harness.h"
#include "desc_util.h"
#include "ref/activation.h"
#include "ref/conv.h"
#include "ref/pooling.h"
#include "ref/reduce.h"
#include "ref/softmax.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- CNTK (Source/Math/CuDnnConvolutionEngine.cu, CuDnnCommon.cpp) ---------------------------- */

/* CNTK's CuDnnTensor: cudnnSetTensorNdDescriptor with N = 1 and packed strides, then for each
   minibatch UpdateBatchSize: cudnnGetTensorNdDescriptor asked for 5 dims, dims[0] replaced by
   the batch size, the same strides set again. */
static bool cntk_tensor(cudnnTensorDescriptor_t d, int n, int c, int h, int w)
{
    int dims[5] = {1, c, h, w}, strides[5] = {c * h * w, h * w, w, 1}, nd = 0;
    cudnnDataType_t t;
    bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, strides));
    ok = ok && CHECK_OK(cudnnGetTensorNdDescriptor(d, 5, &t, &nd, dims, strides)) && CHECK(nd == 4);
    dims[0] = n;
    return ok && CHECK_OK(cudnnSetTensorNdDescriptor(d, t, nd, dims, strides));
}

/* One direction's search as CNTK's FindBestAlgo does it. The workspace finder: the direction's
   Get*WorkspaceSize for every algorithm number 0 .. 9 (MaxAlgoCount, past the enum's COUNT), the
   failures skipped, the largest size and the deterministic algorithm's size kept, at least one
   SUCCESS required. Deterministic (forceDeterministicAlgorithms): a workspace of the deterministic
   algorithm's size, Find*Ex asked for 10 results, the result of IMPLICIT_PRECOMP_GEMM (forward) or
   ALGO_1 (backward) required SUCCESS and taken. Otherwise: a workspace of the largest size and the
   first result taken whatever its status ("first returned algorithm is the fastest"). The
   backward passes search into a scratch buffer (CNTK accumulates into the real one). *pick and
   *ws_bytes: the algorithm and the workspace CNTK then passes (the buffer's whole size). */
struct cntk_dir {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    const void *px, *pw, *pdy;
    void *scratch;
};

static bool cntk_find(cudnnHandle_t h, const struct cntk_dir *c, enum dir d, bool deterministic, int *pick,
                      cudnnMathType_t *math, void **ws, size_t *ws_bytes)
{
    size_t largest = 0, det_size = 0;
    int found = 0, counts[] = {CUDNN_CONVOLUTION_FWD_ALGO_COUNT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                               CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT};
    const int det_algo = d == FWD ? (int)CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM : 1;
    for (int a = 0; a < 10; a++) {
        size_t bytes = 0;
        cudnnStatus_t s =
            d == FWD ? cudnnGetConvolutionForwardWorkspaceSize(h, c->x, c->w, c->conv, c->y,
                                                               (cudnnConvolutionFwdAlgo_t)a, &bytes)
            : d == BWD_DATA ? cudnnGetConvolutionBackwardDataWorkspaceSize(h, c->w, c->y, c->conv, c->x,
                                                                            (cudnnConvolutionBwdDataAlgo_t)a, &bytes)
                            : cudnnGetConvolutionBackwardFilterWorkspaceSize(
                                  h, c->x, c->y, c->conv, c->w, (cudnnConvolutionBwdFilterAlgo_t)a, &bytes);
        if (a >= counts[d]) CHECK_STATUS(s, CUDNN_STATUS_BAD_PARAM); /* no such algorithm */
        if (s != CUDNN_STATUS_SUCCESS) continue;
        found++;
        if (bytes > largest) largest = bytes;
        if (a == det_algo) det_size = bytes;
    }
    if (!CHECK(found > 0)) return false;
    *ws_bytes = deterministic ? det_size : largest;
    *ws = *ws_bytes ? tbuf_alloc(*ws_bytes) : NULL;
    struct perf res[10];
    int n = 0;
    cudnnStatus_t s;
    if (d == FWD) {
        cudnnConvolutionFwdAlgoPerf_t r[10];
        s = cudnnFindConvolutionForwardAlgorithmEx(h, c->x, c->px, c->w, c->pw, c->conv, c->y, c->scratch, 10, &n, r,
                                                   *ws, *ws_bytes);
        COPY_PERF(res, r, n);
    } else if (d == BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t r[10];
        s = cudnnFindConvolutionBackwardDataAlgorithmEx(h, c->w, c->pw, c->y, c->pdy, c->conv, c->x, c->scratch, 10,
                                                        &n, r, *ws, *ws_bytes);
        COPY_PERF(res, r, n);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t r[10];
        s = cudnnFindConvolutionBackwardFilterAlgorithmEx(h, c->x, c->px, c->y, c->pdy, c->conv, c->w, c->scratch, 10,
                                                          &n, r, *ws, *ws_bytes);
        COPY_PERF(res, r, n);
    }
    if (!CHECK_OK(s) || !CHECK(n > 0 && n <= counts[d])) return false;
    *pick = -1;
    for (int i = 0; i < n && *pick < 0; i++)
        if (!deterministic || (res[i].algo == det_algo && res[i].status == CUDNN_STATUS_SUCCESS)) *pick = i;
    /* CNTK throws when the deterministic algorithm fails, and runs the first result unchecked */
    if (!CHECK(*pick >= 0) || !CHECK(res[*pick].status == CUDNN_STATUS_SUCCESS)) return false;
    if (!CHECK(res[*pick].memory <= *ws_bytes)) return false;
    *math = res[*pick].math;
    *pick = res[*pick].algo;
    return true;
}

/* CNTK's convolution engine (the cuDNN 7 version, with groups): the filter
   cudnnSetFilterNdDescriptor(NCHW) padded to at least 4 dims ("minimum descriptor dim size is 4
   for cuDNN": a 1-D kernel k becomes K x C x 1 x k), the convolution cudnnSetConvolutionNdDescriptor
   with at least 2 dims (pad 0, stride 1 for the dummy one), FLOAT compute and CROSS_CORRELATION,
   one descriptor per direction, each given the group count before its search; the tensors set with
   N = 1 and re-set for the batch (cntk_tensor). Each direction searched (cntk_find),
   deterministically and not, DEFAULT_MATH set, then run: forward overwriting, backward data and
   filter accumulating (beta 1, accumulateGradient) with the workspace buffer's whole size. */
TEST(compat_conv_cntk_algorithm_numbers_past_count)
{
    static const struct ref_conv geometry[] = {
        {.nsp = 2, .n = 3, .c = 4, .k = 6, .groups = 2, .in = {7, 6}, .filt = {3, 3}, .pad = {1, 1},
         .stride = {2, 1}, .dil = {1, 1}},
        {.nsp = 2, .n = 2, .c = 3, .k = 5, .groups = 1, .in = {1, 11}, .filt = {1, 4}, .pad = {0, 1},
         .stride = {1, 2}, .dil = {1, 1}},
    };
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    const float one = 1, zero = 0;
    for (size_t g = 0; g < TLEN(geometry) * 2; g++) {
        struct ref_conv rc = geometry[g / 2];
        const bool deterministic = g % 2;
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        cudnnConvolutionDescriptor_t convs[3] = {r.cd, NULL, NULL};
        CHECK_OK(cudnnCreateConvolutionDescriptor(&convs[1]));
        CHECK_OK(cudnnCreateConvolutionDescriptor(&convs[2]));
        const int fdims[4] = {rc.k, rc.c / rc.groups, rc.filt[0], rc.filt[1]};
        bool ok = cntk_tensor(r.xd, rc.n, rc.c, rc.in[0], rc.in[1]) &&
                  cntk_tensor(r.yd, rc.n, rc.k, rc.out[0], rc.out[1]) &&
                  CHECK_OK(cudnnSetFilterNdDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, 4, fdims));
        for (int d = 0; d < 3 && ok; d++)
            ok = CHECK_OK(cudnnSetConvolutionNdDescriptor(convs[d], 2, rc.pad, rc.stride, rc.dil,
                                                          CUDNN_CROSS_CORRELATION, t));
        double *dx0 = tview_random(r.nx, -1, 1), *dw0 = tview_random(r.nw, -1, 1);
        void *pdx = tvalues_upload(t, dx0, r.nx), *pdw = tvalues_upload(t, dw0, r.nw);
        void *scratch = tbuf_alloc(sizeof(float) * (size_t)(r.nx > r.nw ? (r.nx > r.ny ? r.nx : r.ny)
                                                                            : (r.nw > r.ny ? r.nw : r.ny)));
        for (enum dir d = FWD; d <= BWD_FILTER && ok; d++) {
            struct cntk_dir c = {r.xd, r.yd, r.wd, convs[d], r.px, r.pw, r.pdy, scratch};
            int algo = -1;
            cudnnMathType_t math = CUDNN_DEFAULT_MATH; /* the math the result reports (TF32 allowed) */
            void *ws = NULL;
            size_t ws_bytes = 0;
            ok = CHECK_OK(cudnnSetConvolutionGroupCount(convs[d], rc.groups)) &&
                 cntk_find(h, &c, d, deterministic, &algo, &math, &ws, &ws_bytes) &&
                 CHECK_OK(cudnnSetConvolutionMathType(convs[d], CUDNN_DEFAULT_MATH));
            if (ok && d == FWD) {
                tbuf_poison(r.py, sizeof(float) * (size_t)r.ny);
                if (CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, r.px, r.wd, r.pw, convs[d],
                                                     (cudnnConvolutionFwdAlgo_t)algo, ws, ws_bytes, &zero, r.yd,
                                                     r.py)))
                    tvalues_check(t, r.py, r.y, r.ny, tconv_tolerance(t, t, math), "CNTK forward");
            } else if (ok && d == BWD_DATA) {
                for (long i = 0; i < r.nx; i++) r.dx[i] += dx0[i];
                if (CHECK_OK(cudnnConvolutionBackwardData(h, &one, r.wd, r.pw, r.yd, r.pdy, convs[d],
                                                          (cudnnConvolutionBwdDataAlgo_t)algo, ws, ws_bytes, &one,
                                                          r.xd, pdx)))
                    tvalues_check(t, pdx, r.dx, r.nx, tconv_tolerance(t, t, math), "CNTK backward data (beta 1)");
            } else if (ok) {
                for (long i = 0; i < r.nw; i++) r.dw[i] += dw0[i];
                if (CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, r.xd, r.px, r.yd, r.pdy, convs[d],
                                                            (cudnnConvolutionBwdFilterAlgo_t)algo, ws, ws_bytes,
                                                            &one, r.wd, pdw)))
                    tvalues_check(t, pdw, r.dw, r.nw, tconv_tolerance(t, t, math), "CNTK backward filter (beta 1)");
            }
            tbuf_free(ws);
        }
        tbuf_free(scratch), tbuf_free(pdx), tbuf_free(pdw);
        free(dx0), free(dw0);
        CHECK_OK(cudnnDestroyConvolutionDescriptor(convs[1]));
        CHECK_OK(cudnnDestroyConvolutionDescriptor(convs[2]));
        tconv_run_free(&r);
        if (!ok) return;
    }
}

/* ---- Theano (theano/gpuarray/dnn_base.c, dnn_redux.c) ----------------------------------------- */

/* Theano's c_set_tensorNd pads a tensor of fewer than 3 dims to 3 (trailing dims of 1, stride
   1), so its reductions (GpuDnnReduction: sum, max, argmax of any array) reach cuDNN on 3-D
   tensors: a matrix as a x b x 1, its reduction over the rows as 1 x b x 1 (the output's reduced
   dims given extent 1), a vector as n x 1 x 1 reduced to 1 x 1 x 1; NaN propagated, FLATTENED
   32-bit indices asked for when the op returns them (max with argmax), NO_INDICES and indices
   NULL otherwise; the workspace queried and NULL when its size is 0. */
TEST(compat_reduce_theano_3d_padded)
{
    static const struct { int a[3], c[3]; cudnnReduceTensorOp_t op; bool indices; } cases[] = {
        {{5, 7, 1}, {1, 7, 1}, CUDNN_REDUCE_TENSOR_MAX, true},
        {{5, 7, 1}, {5, 1, 1}, CUDNN_REDUCE_TENSOR_ADD, false},
        {{9, 1, 1}, {1, 1, 1}, CUDNN_REDUCE_TENSOR_MAX, true},
        {{9, 1, 1}, {1, 1, 1}, CUDNN_REDUCE_TENSOR_MUL, false},
    };
    cudnnHandle_t h = test_handle();
    cudnnReduceTensorDescriptor_t rd;
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd));
    const float one = 1, zero = 0;
    for (size_t k = 0; k < TLEN(cases); k++) {
        struct treduce r;
        treduce_init(&r, 3, cases[k].a, cases[k].c, 0.5, 1.5);
        const int64_t outputs = rt_count(&r.ct);
        uint32_t want_idx[16], got_idx[16];
        size_t isz = 1, wsz = 1;
        bool ok = CHECK_OK(cudnnSetReduceTensorDescriptor(
                      rd, cases[k].op, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                      cases[k].indices ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES : CUDNN_REDUCE_TENSOR_NO_INDICES,
                      CUDNN_32BIT_INDICES)) &&
                  CHECK_OK(cudnnGetReductionIndicesSize(h, rd, r.adesc, r.cdesc, &isz)) &&
                  CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, r.adesc, r.cdesc, &wsz)) &&
                  CHECK(isz == (cases[k].indices ? sizeof(uint32_t) * (size_t)outputs : 0));
        void *idx = cases[k].indices ? tbuf_alloc(isz) : NULL, *work = wsz ? tbuf_alloc(wsz) : NULL;
        ref_reduce(cases[k].op, true, 1, &r.at, r.a, 0, &r.ct, r.c0, r.want, cases[k].indices ? want_idx : NULL);
        if (ok && CHECK_OK(cudnnReduceTensor(h, rd, idx, cases[k].indices ? isz : 0, work, wsz, &one, r.adesc, r.pa,
                                             &zero, r.cdesc, r.pc))) {
            tcompare_span(&r.ct, r.pc, r.want, -1, "Theano's 3-D reduction");
            if (cases[k].indices) {
                tbuf_download(got_idx, idx, isz);
                CHECK(memcmp(got_idx, want_idx, isz) == 0);
            }
        }
        tbuf_free(idx);
        tbuf_free(work);
        treduce_free(&r);
    }
    cudnnDestroyReduceTensorDescriptor(rd);
}

/* ---- torch7's cudnn.torch (find.lua) ------------------------------------------------------------ */

/* cudnn.torch's half fallback (find.lua, defaultFallback): when no half algorithm is found it
   reads the descriptor back with cudnnGetConvolutionNdDescriptor asked for **CUDNN_DIM_MAX**
   values (getConvolutionDescriptor_ffi, arrays of CUDNN_DIM_MAX ints) and, the compute type being
   HALF, sets it again with FLOAT; the search (cudnnFindConvolutionForwardAlgorithm asked for 10
   results, the SUCCESS ones kept in order) then runs on the float-compute descriptor. The request
   past the descriptor's 2 values writes those 2 and leaves the rest of the arrays alone. Theano's
   requests (the tensor's rank with 0 values and NULL arrays, 8 filter values, 5 convolution
   values) are answered too. */
TEST(compat_conv_cudnntorch_get_nd_dim_max)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 2, .in = {6, 7}, .filt = {3, 2},
                          .pad = {1, 0}, .stride = {1, 2}, .dil = {2, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    struct tconv_run r;
    tconv_run_init(&r, &rc, t);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    const int xs[4] = {xd[1] * xd[2] * xd[3], xd[2] * xd[3], xd[3], 1}, ys[4] = {yd[1] * yd[2] * yd[3], yd[2] * yd[3], yd[3], 1};
    bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(r.xd, t, 4, xd, xs)) &&
              CHECK_OK(cudnnSetTensorNdDescriptor(r.yd, t, 4, yd, ys)) &&
              CHECK_OK(cudnnSetFilterNdDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, 4, wd)) &&
              CHECK_OK(cudnnSetConvolutionNdDescriptor(r.cd, 2, rc.pad, rc.stride, rc.dil, CUDNN_CROSS_CORRELATION, t)) &&
              CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups));
    int length = -1, pad[CUDNN_DIM_MAX], stride[CUDNN_DIM_MAX], dil[CUDNN_DIM_MAX];
    for (int i = 0; i < CUDNN_DIM_MAX; i++) pad[i] = stride[i] = dil[i] = -7;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    ok = ok && CHECK_OK(cudnnGetConvolutionNdDescriptor(r.cd, CUDNN_DIM_MAX, &length, pad, stride, dil, &mode, &compute)) &&
         CHECK(length == 2 && mode == CUDNN_CROSS_CORRELATION && compute == CUDNN_DATA_HALF) &&
         CHECK(pad[0] == 1 && pad[1] == 0 && stride[0] == 1 && stride[1] == 2 && dil[0] == 2 && dil[1] == 1) &&
         CHECK(pad[2] == -7 && stride[7] == -7 && dil[2] == -7);
    /* Theano's cache key (dnn_conv_base.c): the tensor's rank asked with 0 values and NULL arrays,
       the filter with 8 values, the convolution with 5 */
    int nb = -1, fnb = -1, fdims[8], clen = -1, cpad[5], cstr[5], cdil[5];
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    ok = ok && CHECK_OK(cudnnGetTensorNdDescriptor(r.xd, 0, &dt, &nb, NULL, NULL)) && CHECK(nb == 4) &&
         CHECK_OK(cudnnGetFilterNdDescriptor(r.wd, 8, &dt, &fmt, &fnb, fdims)) && CHECK(fnb == 4 && fdims[3] == 2) &&
         CHECK_OK(cudnnGetConvolutionNdDescriptor(r.cd, 5, &clen, cpad, cstr, cdil, &mode, &compute)) &&
         CHECK(clen == 2 && cdil[0] == 2);
    ok = ok && CHECK_OK(cudnnSetConvolutionNdDescriptor(r.cd, length, pad, stride, dil, mode, CUDNN_DATA_FLOAT));
    cudnnConvolutionFwdAlgoPerf_t res[10];
    int n = 0, groups = 0;
    ok = ok && CHECK_OK(cudnnGetConvolutionGroupCount(r.cd, &groups)) && CHECK(groups == rc.groups) &&
         CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, r.xd, r.wd, r.cd, r.yd, 10, &n, res)) && CHECK(n > 0);
    const float one = 1, zero = 0;
    for (int i = 0; i < n && ok; i++) {
        if (res[i].status != CUDNN_STATUS_SUCCESS) continue;
        void *ws = res[i].memory ? tbuf_alloc(res[i].memory) : NULL;
        tbuf_poison(r.py, 2 * (size_t)r.ny);
        ok = CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, res[i].algo, ws, res[i].memory,
                                              &zero, r.yd, r.py)) &&
             tvalues_check(t, r.py, r.y, r.ny, tconv_tolerance(t, t, res[i].mathType),
                           "cudnn.torch half data, FLOAT compute after the fallback");
        tbuf_free(ws);
    }
    tconv_run_free(&r);
}

/* ---- DyNet (dynet/cudnn-ops.cu) ------------------------------------------------------------------ */

/* DyNet's max pooling with "same" padding: its tensors are column-major H x W x C with the batch
   last, described to cuDNN as NCHW N x C x W x H (cudnnSetTensor4dDescriptor, H and W swapped);
   the pad is half the total, **rounded down** ((YH - 1) * stride + k - XH) / 2 on the top and
   left only, so when the total is odd y is one longer than the floor formula and its last window
   reaches past the padded input (DyNet's convolution pads the input itself in that case; its
   pooling relies on cuDNN). The backward writes into a scratch buffer (beta 0), then
   cudnnAddTensor (alpha 1, beta 1) adds it to the gradient kept. */
TEST(compat_pooling_dynet_same_odd_padding)
{
    static const struct { int xh, xw, k, s, yh, yw; } cases[] = {
        {5, 6, 2, 1, 5, 6}, /* totals 1 and 1: floor gives 4 x 5 */
        {7, 5, 3, 2, 4, 3}, /* totals 2 and 2: exact */
        {6, 4, 3, 2, 3, 2}, /* totals 1 and 1: floor gives 2 x 1 */
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int n = 2, c = 3, xh = cases[k].xh, xw = cases[k].xw, yh = cases[k].yh, yw = cases[k].yw;
        const int ph = ((yh - 1) * cases[k].s + cases[k].k - xh) / 2, pw = ((yw - 1) * cases[k].s + cases[k].k - xw) / 2;
        /* cuDNN sees W as its H */
        const int xd[4] = {n, c, xw, xh}, yd[4] = {n, c, yw, yh}, in[2] = {xw, xh}, out[2] = {yw, yh};
        struct tview x, y;
        tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
        tview_init(&y, CUDNN_DATA_FLOAT, 4, yd, TV_NCHW);
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(y.count, -1, 1), *kept = tview_random(x.count, -1, 1);
        double *yv = malloc(sizeof(double) * (size_t)y.count), *dxv = malloc(sizeof(double) * (size_t)x.count);
        struct ref_pool rp = {.mode = CUDNN_POOLING_MAX, .propagate = false, .nb = 2, .window = {cases[k].k, cases[k].k},
                              .pad = {pw, ph}, .stride = {cases[k].s, cases[k].s}};
        ref_pooling_forward(&rp, n, c, in, out, xv, yv);
        ref_pooling_backward(&rp, n, c, in, out, xv, dyv, dxv);
        for (int64_t i = 0; i < x.count; i++) dxv[i] += kept[i];
        void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL), *pdy = tview_upload(&y, dyv);
        void *pdx = tview_upload(&x, NULL), *pkept = tview_upload(&x, kept);
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        const float one = 1, zero = 0;
        bool ok = CHECK_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, cases[k].k,
                                                       cases[k].k, pw, ph, cases[k].s, cases[k].s)) &&
                  CHECK_OK(cudnnPoolingForward(h, pd, &one, x.desc, px, &zero, y.desc, py)) &&
                  tview_check(&y, py, yv, "DyNet max pooling, same padding");
        ok = ok && CHECK_OK(cudnnPoolingBackward(h, pd, &one, y.desc, py, y.desc, pdy, x.desc, px, &zero, x.desc, pdx)) &&
             CHECK_OK(cudnnAddTensor(h, &one, x.desc, pdx, &one, x.desc, pkept)) &&
             tview_check(&x, pkept, dxv, "DyNet max pooling gradient, added");
        cudnnDestroyPoolingDescriptor(pd);
        tview_free(&x, px), tview_free(&y, py), tview_free(&y, pdy), tview_free(&x, pdx), tview_free(&x, pkept);
        free(xv), free(dyv), free(kept), free(yv), free(dxv);
        tview_destroy(&x);
        tview_destroy(&y);
        if (!ok) return;
    }
}

/* ---- CTranslate2 (src/ops/conv1d_gpu.cu: Whisper's and Wav2Vec2's convolutions) ---------------- */

/* CTranslate2's Conv1D (faster-whisper's audio encoder): N x C x 1 x L tensors and a K x C/g x 1 x k
   filter by the 4-D setters, cudnnSetConvolution2dDescriptor(0, pad, 1, stride, 1, dilation) with
   FLOAT compute **whatever the data (float, half or bfloat16)**, DEFAULT_MATH then TENSOR_OP_MATH
   for half; with a bias IMPLICIT_PRECOMP_GEMM through cudnnConvolutionBiasActivationForward with
   the **IDENTITY** activation, alpha2 0 and **y as z**, without one IMPLICIT_GEMM through
   cudnnConvolutionForward, each with the workspace its query reports (NULL for 0). Whisper's two
   layers: k 3, pad 1, stride 1 then stride 2. y (poisoned, NaN: not read as z) against the
   reference. */
TEST(compat_conv_ctranslate2_conv1d_identity_bias)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    static const int strides[] = {1, 2};
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t ident;
    CHECK_OK(cudnnCreateActivationDescriptor(&ident));
    CHECK_OK(cudnnSetActivationDescriptor(ident, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0));
    for (size_t ti = 0; ti < TLEN(types); ti++)
        for (size_t si = 0; si < TLEN(strides); si++) {
            const cudnnDataType_t t = types[ti];
            const int st = strides[si], L = 19, k = 3, pad = 1;
            struct ref_conv rc = {.nsp = 2, .n = 2, .c = 6, .k = 8, .groups = 1, .in = {1, L}, .filt = {1, k},
                                  .pad = {0, pad}, .stride = {1, st}, .dil = {1, 1}};
            if (!CHECK(ref_conv_out_dims(&rc))) break;
            struct tconv_run r;
            tconv_run_init(&r, &rc, t);
            cudnnTensorDescriptor_t bd;
            CHECK_OK(cudnnCreateTensorDescriptor(&bd));
            const int lo = rc.out[1];
            bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(r.xd, CUDNN_TENSOR_NCHW, t, rc.n, rc.c, 1, L)) &&
                      CHECK_OK(cudnnSetTensor4dDescriptor(r.yd, CUDNN_TENSOR_NCHW, t, rc.n, rc.k, 1, lo)) &&
                      CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, rc.k, rc.c, 1, k)) &&
                      CHECK_OK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, t, 1, rc.k, 1, 1)) &&
                      CHECK_OK(cudnnSetConvolution2dDescriptor(r.cd, 0, pad, 1, st, 1, 1, CUDNN_CROSS_CORRELATION,
                                                               CUDNN_DATA_FLOAT)) &&
                      CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_DEFAULT_MATH)) &&
                      (t != CUDNN_DATA_HALF || CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH)));
            double *bias = tview_random(rc.k, -1, 1), *with_bias = malloc(sizeof(double) * (size_t)r.ny);
            for (int i = 0; i < rc.k; i++) bias[i] = ref_quantize(t, bias[i]);
            for (long i = 0; i < r.ny; i++) with_bias[i] = r.y[i] + bias[(i / lo) % rc.k];
            void *pb = tvalues_upload(t, bias, rc.k);
            const double tol = tconv_tolerance(t, t, t == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH);
            const float one = 1, zero = 0;
            for (int with = 0; with < 2 && ok; with++) {
                const cudnnConvolutionFwdAlgo_t algo = with ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
                                                            : CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
                size_t wsb = 1;
                ok = CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd, algo, &wsb));
                void *ws = ok && wsb ? tbuf_alloc(wsb) : NULL;
                char what[80];
                snprintf(what, sizeof what, "CTranslate2 conv1d %s stride %d%s", t == CUDNN_DATA_FLOAT ? "float"
                         : t == CUDNN_DATA_HALF ? "half" : "bfloat16", st, with ? " + bias (IDENTITY, y as z)" : "");
                tbuf_poison(r.py, tdtype_size(t) * (size_t)r.ny);
                if (with)
                    ok = ok && CHECK_OK(cudnnConvolutionBiasActivationForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, algo,
                                                                              ws, wsb, &zero, r.yd, r.py, bd, pb, ident,
                                                                              r.yd, r.py)) &&
                         tvalues_check(t, r.py, with_bias, r.ny, tol, what);
                else
                    ok = ok && CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, algo, ws, wsb, &zero,
                                                                r.yd, r.py)) &&
                         tvalues_check(t, r.py, r.y, r.ny, tol, what);
                if (ws) tbuf_free(ws);
            }
            tbuf_free(pb);
            free(bias), free(with_bias);
            cudnnDestroyTensorDescriptor(bd);
            tconv_run_free(&r);
            if (!ok) break;
        }
    cudnnDestroyActivationDescriptor(ident);
}

/* ---- Leela Chess Zero (src/neural/cuda/layers.cc, ConvLayer) ----------------------------------- */

/* lc0's cuDNN convolution layer, fp32 or fp16 without tensor cores (NCHW): the compute type the
   data's own (**HALF for half**: the true-half configuration), no math type set, the algorithm
   fixed in advance with no query of its support, **WINOGRAD_NONFUSED when C > 32 and the
   filter is larger than 1x1** (IMPLICIT_PRECOMP_GEMM otherwise), the whole scratch buffer passed
   as workspace (its size never asked for); the residual block's second convolution fused as
   cudnnConvolutionBiasActivationForward with ReLU, **alpha2 1 and the skip connection as z**
   (1 x K x 1 x 1 bias of the data's type), and a plain cudnnConvolutionForward (beta 0) when
   neither bias nor activation is asked for. */
TEST(compat_conv_lc0_fixed_winograd_true_half)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    static const int filters[] = {3, 1};
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t relu;
    CHECK_OK(cudnnCreateActivationDescriptor(&relu));
    CHECK_OK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    const size_t scratch_bytes = (size_t)16 << 20;
    void *scratch = tbuf_alloc(scratch_bytes);
    for (size_t ti = 0; ti < TLEN(types); ti++)
        for (size_t fi = 0; fi < TLEN(filters); fi++) {
            const cudnnDataType_t t = types[ti];
            const int f = filters[fi], pad = f / 2;
            struct ref_conv rc = {.nsp = 2, .n = 2, .c = 36, .k = 36, .groups = 1, .in = {8, 8}, .filt = {f, f},
                                  .pad = {pad, pad}, .stride = {1, 1}, .dil = {1, 1}};
            if (!CHECK(ref_conv_out_dims(&rc))) break;
            struct tconv_run r;
            tconv_run_init(&r, &rc, t);
            cudnnTensorDescriptor_t bd;
            CHECK_OK(cudnnCreateTensorDescriptor(&bd));
            bool ok = CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, rc.k, rc.c, f, f)) &&
                      CHECK_OK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, t, 1, rc.k, 1, 1)) &&
                      CHECK_OK(cudnnSetConvolution2dDescriptor(r.cd, pad, pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, t)) &&
                      CHECK_OK(cudnnSetTensor4dDescriptor(r.yd, CUDNN_TENSOR_NCHW, t, rc.n, rc.k, 8, 8)) &&
                      CHECK_OK(cudnnSetTensor4dDescriptor(r.xd, CUDNN_TENSOR_NCHW, t, rc.n, rc.c, 8, 8));
            const cudnnConvolutionFwdAlgo_t algo = rc.c > 32 && f > 1 ? CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED
                                                                     : CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
            const long per = r.ny / rc.n / rc.k;
            double *bias = tview_random(rc.k, -1, 1), *skip = tview_random(r.ny, -1, 1);
            double *fused = malloc(sizeof(double) * (size_t)r.ny);
            for (int i = 0; i < rc.k; i++) bias[i] = ref_quantize(t, bias[i]);
            for (long i = 0; i < r.ny; i++) skip[i] = ref_quantize(t, skip[i]);
            for (long i = 0; i < r.ny; i++) {
                double v = r.y[i] + bias[(i / per) % rc.k] + skip[i];
                fused[i] = v > 0 ? v : 0;
            }
            void *pb = tvalues_upload(t, bias, rc.k), *pskip = tvalues_upload(t, skip, r.ny);
            const float one = 1, zero = 0;
            /* Winograd's transforms: the tolerances of conv_winograd.c (1e-4 float, 2e-2 half) */
            const double tol = algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED ? (t == CUDNN_DATA_FLOAT ? 1e-4 : 2e-2)
                                                                                 : tconv_tolerance(t, t, CUDNN_DEFAULT_MATH);
            char what[96];
            snprintf(what, sizeof what, "lc0 %s %dx%d conv + bias + skip + ReLU", t == CUDNN_DATA_HALF ? "half" : "float", f, f);
            tbuf_poison(r.py, tdtype_size(t) * (size_t)r.ny);
            ok = ok && CHECK_OK(cudnnConvolutionBiasActivationForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, algo, scratch,
                                                                      scratch_bytes, &one, r.yd, pskip, bd, pb, relu,
                                                                      r.yd, r.py)) &&
                 tvalues_check(t, r.py, fused, r.ny, tol, what);
            tbuf_poison(r.py, tdtype_size(t) * (size_t)r.ny);
            snprintf(what, sizeof what, "lc0 %s %dx%d plain convolution", t == CUDNN_DATA_HALF ? "half" : "float", f, f);
            ok = ok && CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, algo, scratch,
                                                        scratch_bytes, &zero, r.yd, r.py)) &&
                 tvalues_check(t, r.py, r.y, r.ny, tol, what);
            tbuf_free(pb), tbuf_free(pskip);
            free(bias), free(skip), free(fused);
            cudnnDestroyTensorDescriptor(bd);
            tconv_run_free(&r);
            if (!ok) break;
        }
    tbuf_free(scratch);
    cudnnDestroyActivationDescriptor(relu);
}

/* ---- OpenCV's DNN module (modules/dnn/src/cuda4dnn/csl/cudnn/convolution.hpp) ----------------- */

/* OpenCV's cuDNN convolution (half or float): tensors by cudnnSetTensor4dDescriptor, the filter
   by cudnnSetFilter4dDescriptor, cudnnSetConvolution2dDescriptor with the data's type as compute
   type, the group count, TENSOR_OP_MATH for half; the algorithm the first result of
   cudnnGetConvolutionForwardAlgorithm_v7 (asked for its MaxCount) that is SUCCESS, not
   WINOGRAD_NONFUSED and within the free memory, with that result's memory as workspace; a bias
   (1 x K x 1 x 1 of the data's type) with ReLU fused by cudnnConvolutionBiasActivationForward
   (the coefficient 0), float scaling factors for half: alpha2 0 with **y passed as z**, or alpha2
   1 with the residual ("eltwise") as z; OpenCV falls back to its own kernels only on
   NOT_SUPPORTED, so the fused call must run with whatever algorithm was picked. */
TEST(compat_conv_opencv_fused_relu_picked_algorithm)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 8, .k = 8, .groups = 2, .in = {7, 6}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t relu;
    CHECK_OK(cudnnCreateActivationDescriptor(&relu));
    CHECK_OK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    for (size_t ti = 0; ti < TLEN(types); ti++) {
        const cudnnDataType_t t = types[ti];
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        cudnnTensorDescriptor_t bd;
        CHECK_OK(cudnnCreateTensorDescriptor(&bd));
        bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(r.xd, CUDNN_TENSOR_NCHW, t, rc.n, rc.c, rc.in[0], rc.in[1])) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(r.yd, CUDNN_TENSOR_NCHW, t, rc.n, rc.k, rc.out[0], rc.out[1])) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, t, 1, rc.k, 1, 1)) &&
                  CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, rc.k, rc.c / rc.groups, 3, 3)) &&
                  CHECK_OK(cudnnSetConvolution2dDescriptor(r.cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, t)) &&
                  CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups)) &&
                  (t != CUDNN_DATA_HALF || CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH)));
        int max = 0, n = 0, pick = -1;
        cudnnConvolutionFwdAlgoPerf_t res[16];
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max)) && CHECK(max > 0 && max <= 16) &&
             CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, r.xd, r.wd, r.cd, r.yd, max, &n, res));
        for (int i = 0; i < n && ok && pick < 0; i++)
            if (res[i].status == CUDNN_STATUS_SUCCESS && res[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED)
                pick = i;
        ok = ok && CHECK(pick >= 0);
        const long per = r.ny / rc.n / rc.k;
        double *bias = tview_random(rc.k, -1, 1), *z = tview_random(r.ny, -1, 1);
        double *fused = malloc(sizeof(double) * (size_t)r.ny), *residual = malloc(sizeof(double) * (size_t)r.ny);
        for (int i = 0; i < rc.k; i++) bias[i] = ref_quantize(t, bias[i]);
        for (long i = 0; i < r.ny; i++) z[i] = ref_quantize(t, z[i]);
        for (long i = 0; i < r.ny; i++) {
            double v = r.y[i] + bias[(i / per) % rc.k];
            fused[i] = v > 0 ? v : 0;
            residual[i] = v + z[i] > 0 ? v + z[i] : 0;
        }
        void *pb = tvalues_upload(t, bias, rc.k), *pz = tvalues_upload(t, z, r.ny);
        void *ws = ok && res[pick].memory ? tbuf_alloc(res[pick].memory) : NULL;
        const float one = 1, zero = 0;
        const double tol = ok ? tconv_tolerance(t, t, res[pick].mathType) : 0;
        if (ok) {
            tbuf_poison(r.py, tdtype_size(t) * (size_t)r.ny);
            if (CHECK_OK(cudnnConvolutionBiasActivationForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, res[pick].algo, ws,
                                                               res[pick].memory, &zero, r.yd, r.py, bd, pb, relu, r.yd,
                                                               r.py)))
                tvalues_check(t, r.py, fused, r.ny, tol, "OpenCV conv + bias + ReLU, y as z");
            if (CHECK_OK(cudnnConvolutionBiasActivationForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, res[pick].algo, ws,
                                                               res[pick].memory, &one, r.yd, pz, bd, pb, relu, r.yd,
                                                               r.py)))
                tvalues_check(t, r.py, residual, r.ny, tol, "OpenCV conv + bias + eltwise + ReLU");
        }
        tbuf_free(ws), tbuf_free(pb), tbuf_free(pz);
        free(bias), free(z), free(fused), free(residual);
        cudnnDestroyTensorDescriptor(bd);
        tconv_run_free(&r);
    }
    cudnnDestroyActivationDescriptor(relu);
}

/* ---- KataGo (cpp/neuralnet/cudabackend.cpp) ------------------------------------------------------ */

/* KataGo's convolution layers with FP16 on a tensor-core GPU: half NHWC tensors
   (cudnnSetTensor4dDescriptor), the filter in NHWC **unless the convolution is dilated, then in
   NCHW on the NHWC data**, cudnnSetConvolution2dDescriptor with pad (k / 2) x dilation and FLOAT
   compute, TENSOR_OP_MATH; undilated layers run IMPLICIT_PRECOMP_GEMM fixed in advance, dilated
   ones the first result of cudnnGetConvolutionForwardAlgorithm_v7 (its status not read); the
   workspace from cudnnGetConvolutionForwardWorkspaceSize; the residual layers add into the
   trunk (beta 1). */
TEST(compat_conv_katago_half_nhwc_fixed_algorithm)
{
    static const int dilations[] = {1, 2};
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    for (size_t d = 0; d < TLEN(dilations); d++) {
        const int dil = dilations[d];
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 16, .k = 8, .groups = 1, .in = {7, 7}, .filt = {3, 3},
                              .pad = {dil, dil}, .stride = {1, 1}, .dil = {dil, dil}};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        /* the reference's values are NCHW: reordered into KataGo's NHWC (and NHWC filter) buffers */
        const int hw = rc.in[0] * rc.in[1], ohw = rc.out[0] * rc.out[1];
        double *xn = malloc(sizeof(double) * (size_t)r.nx), *wn = malloc(sizeof(double) * (size_t)r.nw);
        double *y0 = tview_random(r.ny, -1, 1), *y0n = malloc(sizeof(double) * (size_t)r.ny);
        double *want = malloc(sizeof(double) * (size_t)r.ny);
        for (int n = 0; n < rc.n; n++)
            for (int c = 0; c < rc.c; c++)
                for (int p = 0; p < hw; p++) xn[((long)n * hw + p) * rc.c + c] = r.x[((long)n * rc.c + c) * hw + p];
        for (int n = 0; n < rc.n; n++)
            for (int k = 0; k < rc.k; k++)
                for (int p = 0; p < ohw; p++) {
                    long nchw = ((long)n * rc.k + k) * ohw + p, nhwc = ((long)n * ohw + p) * rc.k + k;
                    y0n[nhwc] = ref_quantize(t, y0[nchw]);
                    want[nhwc] = r.y[nchw] + y0n[nhwc];
                }
        const bool filter_nhwc = dil == 1;
        for (int k = 0; k < rc.k; k++)
            for (int c = 0; c < rc.c; c++)
                for (int p = 0; p < 9; p++)
                    wn[filter_nhwc ? ((long)k * 9 + p) * rc.c + c : ((long)k * rc.c + c) * 9 + p] =
                        r.w[((long)k * rc.c + c) * 9 + p];
        void *px = tvalues_upload(t, xn, r.nx), *pw = tvalues_upload(t, wn, r.nw), *py = tvalues_upload(t, y0n, r.ny);
        bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(r.xd, CUDNN_TENSOR_NHWC, t, rc.n, rc.c, rc.in[0], rc.in[1])) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(r.yd, CUDNN_TENSOR_NHWC, t, rc.n, rc.k, rc.out[0], rc.out[1])) &&
                  CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, t, filter_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, rc.k,
                                                      rc.c, 3, 3)) &&
                  CHECK_OK(cudnnSetConvolution2dDescriptor(r.cd, dil, dil, 1, 1, dil, dil, CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT)) &&
                  CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH));
        cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
        cudnnMathType_t math = CUDNN_TENSOR_OP_MATH;
        if (ok && dil > 1) {
            cudnnConvolutionFwdAlgoPerf_t res[2 * CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
            int n = -1;
            ok = CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, r.xd, r.wd, r.cd, r.yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                                 &n, res)) &&
                 CHECK(n > 0 && res[0].status == CUDNN_STATUS_SUCCESS);
            if (ok) algo = res[0].algo, math = res[0].mathType;
        }
        size_t wsb = 0;
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd, algo, &wsb));
        void *ws = wsb ? tbuf_alloc(wsb) : NULL;
        const float one = 1;
        if (ok && CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, px, r.wd, pw, r.cd, algo, ws, wsb, &one, r.yd, py)))
            tvalues_check(t, py, want, r.ny, tconv_tolerance(t, t, math), "KataGo half NHWC residual convolution");
        tbuf_free(ws), tbuf_free(px), tbuf_free(pw), tbuf_free(py);
        free(xn), free(wn), free(y0), free(y0n), free(want);
        tconv_run_free(&r);
        if (!ok) return;
    }
}

/* r rounded to nearest even and saturated to int8, as oneDNN's reference stores s8. */
static double s8_of(double r)
{
    r = nearbyint(r);
    return r < -128 ? -128 : r > 127 ? 127 : r;
}

/* oneDNN's eltwise on NVIDIA GPUs (src/gpu/nvidia/cudnn_eltwise_impl.hpp, cudnn_eltwise.hpp: "Forward
   pass supports f32, f16, bf16 and s8"): cudnnActivationForward on **INT8** x and y, one
   descriptor for both (plain NCHW or NHWC, y == x when the primitive runs in place), RELU with
   coef 0, TANH, ELU with its alpha as coef, SIGMOID, NaN propagated, float alpha 1 and beta 0.
   The result is f(x) rounded to nearest even and saturated, as oneDNN's reference rounds s8. */
TEST(compat_activation_onednn_int8_forward)
{
    static const struct { cudnnActivationMode_t mode; double coef; } modes[] = {
        {CUDNN_ACTIVATION_RELU, 0}, {CUDNN_ACTIVATION_TANH, 0}, {CUDNN_ACTIVATION_ELU, 1.0}, {CUDNN_ACTIVATION_SIGMOID, 0}};
    const int dims[4] = {2, 5, 3, 4};
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t ad;
    CHECK_OK(cudnnCreateActivationDescriptor(&ad));
    for (int layout = 0; layout < 2; layout++)
        for (size_t m = 0; m < TLEN(modes); m++) {
            struct tview v;
            tview_init(&v, CUDNN_DATA_INT8, 4, dims, layout ? TV_NHWC : TV_NCHW);
            double *x = tview_random(v.count, -128, 127), *want = malloc(sizeof(double) * (size_t)v.count);
            x[0] = -128, x[1] = 127, x[2] = 0, x[3] = -1;
            for (int64_t i = 0; i < v.count; i++) {
                x[i] = round(x[i]);
                want[i] = s8_of(ref_activation(modes[m].mode, true, modes[m].coef, 1.0, x[i]));
            }
            const bool in_place = layout == 1 && m % 2 == 1;
            void *px = tview_upload(&v, x), *py = in_place ? px : tview_upload(&v, NULL);
            const float one = 1, zero = 0;
            char what[96];
            snprintf(what, sizeof what, "oneDNN s8 eltwise, mode %d, %s%s", (int)modes[m].mode, layout ? "NHWC" : "NCHW",
                     in_place ? ", in place" : "");
            if (CHECK_OK(cudnnSetActivationDescriptor(ad, modes[m].mode, CUDNN_PROPAGATE_NAN, modes[m].coef)) &&
                CHECK_OK(cudnnActivationForward(h, ad, &one, v.desc, px, &zero, v.desc, py)))
                tview_holds(&v, py, want, what);
            tview_free(&v, px);
            if (!in_place) tview_free(&v, py);
            free(x), free(want);
            tview_destroy(&v);
        }
    cudnnDestroyActivationDescriptor(ad);
}

/* oneDNN's softmax on NVIDIA GPUs (src/gpu/nvidia/cudnn_softmax_impl.hpp; its README: "Forward pass
   supports f32, f16, bf16 and s8"): cudnnSoftmaxForward in CHANNEL mode (axis 1) on **INT8** x and
   y, one descriptor from cudnnSetTensor4dDescriptorEx's format form (NCHW or NHWC), ACCURATE or
   LOG, the primitive's output scale as alpha (a float), beta 0. The result is the scaled softmax
   rounded to an integer and saturated. */
TEST(compat_softmax_onednn_int8_forward)
{
    const int dims[4] = {2, 6, 3, 2};
    cudnnHandle_t h = test_handle();
    for (int nhwc = 0; nhwc < 2; nhwc++)
        for (int lg = 0; lg < 2; lg++) {
            const cudnnSoftmaxAlgorithm_t algo = lg ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
            const float scale = lg ? 8.0f : 127.0f;
            struct tview v;
            tview_init(&v, CUDNN_DATA_INT8, 4, dims, nhwc ? TV_NHWC : TV_NCHW);
            double *x = tview_random(v.count, -20, 20), *want = malloc(sizeof(double) * (size_t)v.count);
            for (int64_t i = 0; i < v.count; i++) x[i] = round(x[i]);
            ref_softmax_forward(algo, CUDNN_SOFTMAX_MODE_CHANNEL, 4, dims, x, want);
            for (int64_t i = 0; i < v.count; i++) /* saturated; the check allows either rounding */
                want[i] = fmin(127, fmax(-128, scale * want[i]));
            void *px = tview_upload(&v, x), *py = tview_upload(&v, NULL);
            cudnnTensorDescriptor_t d;
            CHECK_OK(cudnnCreateTensorDescriptor(&d));
            const float zero = 0;
            char what[64];
            snprintf(what, sizeof what, "oneDNN s8 %ssoftmax, %s", lg ? "log" : "", nhwc ? "NHWC" : "NCHW");
            if (CHECK_OK(cudnnSetTensor4dDescriptor(d, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, CUDNN_DATA_INT8,
                                                    dims[0], dims[1], dims[2], dims[3])) &&
                CHECK_OK(cudnnSoftmaxForward(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &scale, d, px, &zero, d, py)))
                tview_check(&v, py, want, what);
            cudnnDestroyTensorDescriptor(d);
            tview_free(&v, px), tview_free(&v, py);
            free(x), free(want);
            tview_destroy(&v);
        }
}

/* oneDNN's pooling on NVIDIA GPUs (src/gpu/nvidia/cudnn_pooling_impl.hpp; its README: "Configurations
   where padding in the beginning is larger than padding at the end are supported and work as
   expected"): the descriptor takes the begin pads, y keeps oneDNN's extent (in + pad_l + pad_r -
   window) / stride + 1, **shorter than cuDNN's output formula**; training copies x and y into the
   workspace with cudnnAddTensor (alpha 1, beta 0), the backward reads them from there. MAX and both
   averages, forward and backward against ref/pooling.c with the begin pads. */
TEST(compat_pooling_onednn_begin_pads_short_y)
{
    static const cudnnPoolingMode_t modes[] = {CUDNN_POOLING_MAX, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                               CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING};
    const int n = 2, c = 3, in[2] = {5, 6}, win[2] = {3, 3}, pad_l[2] = {1, 1}, str[2] = {2, 1};
    const int out[2] = {(5 + 1 + 0 - 3) / 2 + 1, (6 + 1 + 0 - 3) / 1 + 1}; /* pad_r 0: 2 x 5, cuDNN's 3 x 6 */
    const int xd[4] = {n, c, in[0], in[1]}, yd[4] = {n, c, out[0], out[1]};
    cudnnHandle_t h = test_handle();
    struct tview x, y;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
    tview_init(&y, CUDNN_DATA_FLOAT, 4, yd, TV_NCHW);
    cudnnPoolingDescriptor_t pd;
    CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
    for (size_t m = 0; m < TLEN(modes); m++) {
        int formula[4];
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(y.count, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)y.count), *dxw = malloc(sizeof(double) * (size_t)x.count);
        struct ref_pool rp = {.mode = modes[m], .propagate = false, .nb = 2, .window = {3, 3}, .pad = {1, 1},
                              .stride = {2, 1}};
        ref_pooling_forward(&rp, n, c, in, out, xv, want);
        ref_pooling_backward(&rp, n, c, in, out, xv, dyv, dxw);
        void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL), *pdy = tview_upload(&y, dyv);
        void *wsx = tview_upload(&x, NULL), *wsy = tview_upload(&y, NULL), *pdx = tview_upload(&x, NULL);
        const float one = 1, zero = 0;
        bool ok = CHECK_OK(cudnnSetPoolingNdDescriptor(pd, modes[m], CUDNN_NOT_PROPAGATE_NAN, 2, win, pad_l, str)) &&
                  CHECK_OK(cudnnGetPoolingNdForwardOutputDim(pd, x.desc, 4, formula)) &&
                  CHECK(formula[2] == out[0] + 1 && formula[3] == out[1] + 1) &&
                  CHECK_OK(cudnnPoolingForward(h, pd, &one, x.desc, px, &zero, y.desc, py)) &&
                  tview_check(&y, py, want, "oneDNN pooling, y shorter than the formula") &&
                  CHECK_OK(cudnnAddTensor(h, &one, x.desc, px, &zero, x.desc, wsx)) &&
                  CHECK_OK(cudnnAddTensor(h, &one, y.desc, py, &zero, y.desc, wsy));
        if (ok && CHECK_OK(cudnnPoolingBackward(h, pd, &one, y.desc, wsy, y.desc, pdy, x.desc, wsx, &zero, x.desc, pdx)))
            tview_check(&x, pdx, dxw, "oneDNN pooling backward from the workspace copies");
        void *bufs[] = {px, wsx, pdx};
        for (size_t i = 0; i < TLEN(bufs); i++) tview_free(&x, bufs[i]);
        tview_free(&y, py), tview_free(&y, pdy), tview_free(&y, wsy);
        free(xv), free(dyv), free(want), free(dxw);
    }
    cudnnDestroyPoolingDescriptor(pd);
    tview_destroy(&x), tview_destroy(&y);
}
