/* compat_libs.c: call patterns of real programs (docs/compatibility.md) from the C and C++
   libraries that drive cuDNN 8 directly: dlib's convolution layer (algorithms found once per
   stride, padding and filter size and reused for every other shape, the bias fused with the
   bias's own descriptor passed as z), ONNX Runtime's reductions (indices asked for whatever the
   op), NVIDIA's Caffe (the compute type changed by a Get/Set round trip of the convolution
   descriptor), OneFlow's algorithm search (every result it scans must be SUCCESS),
   Deeplearning4j's max pooling backward (the output gradient passed as y) and convolutions
   (the non-Ex Find asked for one result, the filter's format not the data's), ArrayFire's
   convolution (CONVOLUTION mode, backward data's algorithm fixed), SINGA's batch norm
   with an epsilon of CUDNN_BN_MIN_EPSILON (0), OpenVINO's clamp and MVN as tensor ops, Caffe2's
   affine channel (tensor ops in place, channels-last, reductions into the scale). Each result
   against the double references of tests/ref/. (compat.c, compat_ops.c, compat_conv.c: the
   frameworks' patterns; compat_conv.c also holds MegEngine's fused convolution.) */
#include "conv_harness.h"
#include "desc_util.h"
#include "ref/batchnorm.h"
#include "ref/conv.h"
#include "ref/pooling.h"
#include "ref/reduce.h"
#include "ref/tensor_ops.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- dlib (dlib/cuda/cudnn_dlibapi.cpp) --------------------------------------------------- */

/* dlib's pick_best_algorithm: the first result must be SUCCESS; then the SUCCESS result with the
   least memory (the first of equals). */
#define DLIB_PICK(res, n, out)                                                                \
    do {                                                                                      \
        size_t least_ = (size_t)-1;                                                          \
        CHECK((n) > 0 && (res)[0].status == CUDNN_STATUS_SUCCESS);                           \
        for (int i_ = 0; i_ < (n); i_++)                                                     \
            if ((res)[i_].status == CUDNN_STATUS_SUCCESS && (res)[i_].memory < least_)       \
                least_ = (res)[i_].memory, (out) = (res)[i_].algo;                          \
    } while (0)

/* dlib's tensor_conv::setup: a filter K x C x R x S, cudnnSetConvolution2dDescriptor(pad, stride,
   1, 1, CROSS_CORRELATION, FLOAT), y's dims from cudnnGetConvolution2dForwardOutputDim. */
static bool dlib_setup(const struct ref_conv *rc, cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t y,
                       cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv)
{
    int n, k, p, q;
    bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, rc->n, rc->c, rc->in[0],
                                                  rc->in[1]));
    ok = ok && CHECK_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, rc->k, rc->c,
                                                   rc->filt[0], rc->filt[1]));
    ok = ok && CHECK_OK(cudnnSetConvolution2dDescriptor(conv, rc->pad[0], rc->pad[1], rc->stride[0], rc->stride[1],
                                                        1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    ok = ok && CHECK_OK(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &k, &p, &q));
    ok = ok && CHECK(n == rc->n && k == rc->k && p == rc->out[0] && q == rc->out[1]);
    return ok && CHECK_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, k, p, q));
}

/* dlib keeps the three algorithms it found in a cache keyed by stride, padding and filter size
   only (select_best_algorithms), so a layer of another batch, channel count or image size
   with the same geometry runs them without asking again. The Find calls: cudnnFind*Algorithm
   (not Ex) asked for the direction's MaxCount results, except backward data, asked for the
   backward filter's MaxCount (as dlib does); the first result must be SUCCESS, the one taken is
   the SUCCESS result with the least memory. Then, on the other shape: each algorithm's workspace,
   the forward adding into the output (beta 1: add_to_output), backward data adding into the
   data gradient, backward filter and cudnnConvolutionBackwardBias (assign_conv_bias_gradient)
   overwriting theirs. The layer's bias is fused (since PR 2839, only when the algorithm is
   IMPLICIT_PRECOMP_GEMM) as cudnnConvolutionBiasActivationForward with alpha2 = 0, the IDENTITY
   activation and the bias's 1 x K x 1 x 1 descriptor and pointer passed as zDesc and z: z is not
   read, so its descriptor need not be y's. */
TEST(compat_conv_dlib_algorithms_cached_across_shapes)
{
    static const struct { int f, stride, pad; } geometry[] = {{3, 1, 1}, {5, 2, 0}, {1, 1, 0}};
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    cudnnTensorDescriptor_t x, y, b;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    tconv_descs_create(&x, &y, &b, &w, &conv);
    cudnnActivationDescriptor_t identity;
    CHECK_OK(cudnnCreateActivationDescriptor(&identity));
    CHECK_OK(cudnnSetActivationDescriptor(identity, CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0));
    for (size_t g = 0; g < TLEN(geometry); g++) {
        int f = geometry[g].f, s = geometry[g].stride, pd = geometry[g].pad;
        struct ref_conv first = {.nsp = 2, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {9, 8}, .filt = {f, f},
                                 .pad = {pd, pd}, .stride = {s, s}, .dil = {1, 1}};
        struct ref_conv rc = {.nsp = 2, .n = 3, .c = 6, .k = 5, .groups = 1, .in = {13, 11}, .filt = {f, f},
                              .pad = {pd, pd}, .stride = {s, s}, .dil = {1, 1}};
        if (!CHECK(ref_conv_out_dims(&first) && ref_conv_out_dims(&rc))) break;
        if (!dlib_setup(&first, x, y, w, conv)) break;
        cudnnConvolutionFwdAlgoPerf_t fp[16];
        cudnnConvolutionBwdDataAlgoPerf_t dp[16];
        cudnnConvolutionBwdFilterAlgoPerf_t wp[16];
        int req = 0, nf = 0, nd = 0, nw = 0;
        cudnnConvolutionFwdAlgo_t fa = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
        cudnnConvolutionBwdDataAlgo_t da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
        cudnnConvolutionBwdFilterAlgo_t wa = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
        CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &req));
        if (CHECK(req > 0 && req <= 16) &&
            CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, x, w, conv, y, req, &nf, fp)))
            DLIB_PICK(fp, nf, fa);
        CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &req)); /* dlib's count for both */
        if (CHECK(req > 0 && req <= 16) &&
            CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, w, y, conv, x, req, &nd, dp)))
            DLIB_PICK(dp, nd, da);
        if (CHECK(req > 0 && req <= 16) &&
            CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, x, y, conv, w, req, &nw, wp)))
            DLIB_PICK(wp, nw, wa);
        if (current_test_failed() || !dlib_setup(&rc, x, y, w, conv)) break;
        CHECK_OK(cudnnSetTensor4dDescriptor(b, CUDNN_TENSOR_NCHW, t, 1, rc.k, 1, 1));

        const long nx = ref_conv_x_count(&rc), nwc = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
        const long per = ny / rc.n / rc.k;
        double *xv = tview_random(nx, -1, 1), *wv = tview_random(nwc, -1, 1), *dyv = tview_random(ny, -1, 1);
        double *y0 = tview_random(ny, -1, 1), *dx0 = tview_random(nx, -1, 1), *bv = tview_random(rc.k, -1, 1);
        double *yw = malloc(sizeof(double) * (size_t)ny), *dxw = malloc(sizeof(double) * (size_t)nx);
        double *dww = malloc(sizeof(double) * (size_t)nwc), *dbw = calloc((size_t)rc.k, sizeof(double));
        double *fused = malloc(sizeof(double) * (size_t)ny);
        void *px = tvalues_upload(t, xv, nx), *pw = tvalues_upload(t, wv, nwc), *pdy = tvalues_upload(t, dyv, ny);
        void *py = tvalues_upload(t, y0, ny), *pdx = tvalues_upload(t, dx0, nx), *pb = tvalues_upload(t, bv, rc.k);
        void *pdw = tbuf_alloc(sizeof(float) * (size_t)nwc), *pdb = tbuf_alloc(sizeof(float) * (size_t)rc.k);
        void *pf = tbuf_alloc(sizeof(float) * (size_t)ny);
        ref_conv_fwd(&rc, xv, wv, yw);
        ref_conv_bwd_data(&rc, dyv, wv, dxw);
        ref_conv_bwd_filter(&rc, xv, dyv, dww);
        for (long i = 0; i < ny; i++) {
            long k = (i / per) % rc.k;
            fused[i] = yw[i] + bv[k];
            dbw[k] += dyv[i];
            yw[i] += y0[i];
        }
        for (long i = 0; i < nx; i++) dxw[i] += dx0[i];

        size_t fs = 0, ds = 0, ws = 0, ps = 0;
        const float one = 1, zero = 0;
        bool ok = CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, x, w, conv, y, fa, &fs));
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, w, y, conv, x, da, &ds));
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x, y, conv, w, wa, &ws));
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(
                       h, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &ps));
        size_t most = fs > ds ? fs : ds;
        most = ws > most ? ws : most;
        most = ps > most ? ps : most;
        void *work = most ? tbuf_alloc(most) : NULL;
        const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH);
        if (ok && CHECK_OK(cudnnConvolutionForward(h, &one, x, px, w, pw, conv, fa, work, fs, &one, y, py)))
            tvalues_check(t, py, yw, ny, tol, "dlib forward, cached algorithm, beta 1");
        if (ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, w, pw, y, pdy, conv, da, work, ds, &one, x, pdx)))
            tvalues_check(t, pdx, dxw, nx, tol, "dlib backward data, cached algorithm, beta 1");
        if (ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, x, px, y, pdy, conv, wa, work, ws, &zero, w, pdw)))
            tvalues_check(t, pdw, dww, nwc, tol, "dlib backward filter, cached algorithm");
        if (CHECK_OK(cudnnConvolutionBackwardBias(h, &one, y, pdy, &zero, b, pdb)))
            tvalues_check(t, pdb, dbw, rc.k, tol, "dlib bias gradient");
        if (ok && CHECK_OK(cudnnConvolutionBiasActivationForward(h, &one, x, px, w, pw, conv,
                                                                 CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                                                 work, ps, &zero, b, pb, b, pb, identity, y, pf)))
            tvalues_check(t, pf, fused, ny, tol, "dlib fused bias, the bias as z with alpha2 0");
        /* a z that would be read must be y's shape: nothing written */
        const float half = 0.5f;
        void *snap = tbuf_snapshot(pf, sizeof(float) * (size_t)ny);
        const cudnnConvolutionFwdAlgo_t precomp = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
        if (ok)
            CHECK_STATUS(cudnnConvolutionBiasActivationForward(h, &one, x, px, w, pw, conv, precomp, work, ps, &half, b,
                                                               pb, b, pb, identity, y, pf),
                         CUDNN_STATUS_BAD_PARAM);
        tbuf_unchanged(pf, snap, sizeof(float) * (size_t)ny, "z of the bias's shape with alpha2 0.5");
        free(snap);
        tbuf_free(work);
        void *bufs[] = {px, pw, pdy, py, pdx, pb, pdw, pdb, pf};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        free(xv), free(wv), free(dyv), free(y0), free(dx0), free(bv);
        free(yw), free(dxw), free(dww), free(dbw), free(fused);
    }
    cudnnDestroyActivationDescriptor(identity);
    tconv_descs_destroy(x, y, b, w, conv);
}

/* ---- ONNX Runtime (onnxruntime/core/providers/cuda/reduction/reduction_ops.cc) -------------- */

/* ONNX Runtime's reductions: every descriptor set through CudnnReduceDescriptor::Set (NaN
   propagated, 32-bit indices). Its int32 kernels (ReduceSum, ReduceMean, ReduceProd, ReduceL1,
   ReduceL2, ReduceMax, ReduceMin) cast the data to float and ask for FLATTENED_INDICES whatever
   the op: the indices size is queried, a buffer of that size allocated (none for a size of 0,
   so NULL) and passed with it. ReduceLogSumExp reduces with MAX and NO_INDICES first, passing
   the indices buffer allocated for the ADD descriptor with the MAX descriptor's indices size.
   Each result, and MAX's indices, against the reference. */
TEST(compat_reduce_onnxruntime_indices_for_every_op)
{
    static const cudnnReduceTensorOp_t ops[] = {CUDNN_REDUCE_TENSOR_ADD, CUDNN_REDUCE_TENSOR_AVG,
                                                CUDNN_REDUCE_TENSOR_MUL, CUDNN_REDUCE_TENSOR_NORM1,
                                                CUDNN_REDUCE_TENSOR_NORM2, CUDNN_REDUCE_TENSOR_MAX,
                                                CUDNN_REDUCE_TENSOR_MIN};
    cudnnHandle_t h = test_handle();
    const int ad[4] = {3, 4, 5, 2}, cd[4] = {3, 1, 5, 1};
    struct treduce r;
    treduce_init(&r, 4, ad, cd, 0.5, 1.5);
    const int64_t outputs = rt_count(&r.ct);
    uint32_t *want_idx = malloc(sizeof(uint32_t) * (size_t)outputs);
    uint32_t *got_idx = malloc(sizeof(uint32_t) * (size_t)outputs);
    cudnnReduceTensorDescriptor_t rd, max_rd;
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd));
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&max_rd));
    const float one = 1, zero = 0;
    for (size_t k = 0; k < TLEN(ops); k++) {
        bool picks = ops[k] == CUDNN_REDUCE_TENSOR_MAX || ops[k] == CUDNN_REDUCE_TENSOR_MIN;
        size_t isz = 1, wsz = 0;
        if (!CHECK_OK(cudnnSetReduceTensorDescriptor(rd, ops[k], CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                                     CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES)) ||
            !CHECK_OK(cudnnGetReductionIndicesSize(h, rd, r.adesc, r.cdesc, &isz)) ||
            !CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, r.adesc, r.cdesc, &wsz)))
            break;
        CHECK(isz == (picks ? sizeof(uint32_t) * (size_t)outputs : 0));
        void *idx = isz ? tbuf_alloc(isz) : NULL, *work = wsz ? tbuf_alloc(wsz) : NULL;
        tbuf_poison(r.pc, rt_bytes(&r.ct));
        ref_reduce(ops[k], true, 1, &r.at, r.a, 0, &r.ct, r.c0, r.want, picks ? want_idx : NULL);
        char what[64];
        snprintf(what, sizeof what, "int32 path, op %d with FLATTENED_INDICES", (int)ops[k]);
        if (CHECK_OK(cudnnReduceTensor(h, rd, idx, isz, work, wsz, &one, r.adesc, r.pa, &zero, r.cdesc, r.pc))) {
            tcompare_span(&r.ct, r.pc, r.want, -1, what);
            if (picks) {
                tbuf_download(got_idx, idx, isz);
                CHECK(memcmp(got_idx, want_idx, isz) == 0);
            }
        }
        tbuf_free(idx);
        tbuf_free(work);
    }
    /* ReduceLogSumExp's maximum: the MAX descriptor's indices size with the ADD one's buffer */
    size_t add_isz = 1, max_isz = 1, wsz = 0;
    CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
    CHECK_OK(cudnnSetReduceTensorDescriptor(max_rd, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
    CHECK_OK(cudnnGetReductionIndicesSize(h, rd, r.adesc, r.cdesc, &add_isz));
    CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, r.adesc, r.cdesc, &wsz));
    CHECK_OK(cudnnGetReductionIndicesSize(h, max_rd, r.adesc, r.cdesc, &max_isz));
    void *idx = add_isz ? tbuf_alloc(add_isz) : NULL, *work = wsz ? tbuf_alloc(wsz) : NULL;
    tbuf_poison(r.pc, rt_bytes(&r.ct));
    ref_reduce(CUDNN_REDUCE_TENSOR_MAX, true, 1, &r.at, r.a, 0, &r.ct, r.c0, r.want, NULL);
    if (CHECK_OK(cudnnReduceTensor(h, max_rd, idx, max_isz, work, wsz, &one, r.adesc, r.pa, &zero, r.cdesc, r.pc)))
        tcompare_span(&r.ct, r.pc, r.want, -1, "ReduceLogSumExp's maximum");
    tbuf_free(idx);
    tbuf_free(work);
    cudnnDestroyReduceTensorDescriptor(rd);
    cudnnDestroyReduceTensorDescriptor(max_rd);
    treduce_free(&r);
    free(want_idx), free(got_idx);
}

/* ---- NVIDIA's Caffe (NVIDIA/caffe src/caffe/layers/cudnn_conv_layer.cpp) --------------------- */

/* NVIDIA's Caffe reads a convolution descriptor back and sets it again to change only its
   compute type (setConvolutionDescMath): cudnnGetConvolutionNdDescriptor with 2 dims requested,
   then cudnnSetConvolutionNdDescriptor with the same geometry and mode and the new type. */
static bool nvcaffe_set_math(cudnnConvolutionDescriptor_t conv, cudnnDataType_t compute)
{
    int pad[2], stride[2], upscale[2], length = 0;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t type;
    return CHECK_OK(cudnnGetConvolutionNdDescriptor(conv, 2, &length, pad, stride, upscale, &mode, &type)) &&
           CHECK(length == 2) &&
           CHECK_OK(cudnnSetConvolutionNdDescriptor(conv, 2, pad, stride, upscale, mode, compute));
}

/* NVIDIA's Caffe, half data: the group count set on the fresh descriptor (v7 grouping), the
   geometry later by cudnnSetConvolutionNdDescriptor with the half compute type, the tensors by
   cudnnSetTensor4dDescriptorEx with explicit strides, TENSOR_OP_MATH set before the search.
   cudnnFindConvolutionForwardAlgorithmEx is called until two calls in a row put the same
   algorithm first (at most 5), into the real output; then the "pseudo fp32" round: the compute
   type switched to FLOAT through the Get/Set round trip above and the search run again; the
   first SUCCESS result's math type set on the descriptor and the forward run with its
   workspace. Backward filter is searched the same way into a scratch weights buffer, then run
   into the real one. The round trip keeps the group count and the math type. */
TEST(compat_conv_nvcaffe_compute_type_round_trip)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 8, .k = 6, .groups = 2, .in = {7, 6}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    struct tconv_run r;
    tconv_run_init(&r, &rc, t);
    const int p = rc.out[0], q = rc.out[1];
    bool ok = CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups));
    const int pad[2] = {1, 1}, stride[2] = {1, 1}, upscale[2] = {1, 1};
    ok = ok && CHECK_OK(cudnnSetTensor4dDescriptorEx(r.xd, t, rc.n, rc.c, rc.in[0], rc.in[1],
                                                     rc.c * rc.in[0] * rc.in[1], rc.in[0] * rc.in[1], rc.in[1], 1));
    ok = ok && CHECK_OK(cudnnSetTensor4dDescriptorEx(r.yd, t, rc.n, rc.k, p, q, rc.k * p * q, p * q, q, 1));
    ok = ok && CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, rc.k, rc.c / rc.groups, 3, 3));
    ok = ok && CHECK_OK(cudnnSetConvolutionNdDescriptor(r.cd, 2, pad, stride, upscale, CUDNN_CROSS_CORRELATION, t));
    ok = ok && CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH));
    void *scratch = tbuf_alloc(2 * (size_t)r.nw);
    const size_t ws_bytes = 1 << 20;
    void *ws = tbuf_alloc(ws_bytes);
    cudnnConvolutionFwdAlgoPerf_t fr[8];
    cudnnConvolutionBwdFilterAlgoPerf_t br[8];
    int n = 0, prev = -1, best = -1;
    for (int round = 0; round < 2 && ok; round++) {
        if (round == 1 && !nvcaffe_set_math(r.cd, CUDNN_DATA_FLOAT)) break;
        for (int tries = 0; tries < 5; tries++) {
            if (!CHECK_OK(cudnnFindConvolutionForwardAlgorithmEx(h, r.xd, r.px, r.wd, r.pw, r.cd, r.yd, r.py, 8, &n, fr,
                                                                 ws, ws_bytes)))
                break;
            if (prev == (int)fr[0].algo) break;
            prev = (int)fr[0].algo;
        }
    }
    for (int i = 0; i < n && best < 0; i++)
        if (fr[i].status == CUDNN_STATUS_SUCCESS) best = i;
    int groups = 0;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    CHECK_OK(cudnnGetConvolutionGroupCount(r.cd, &groups));
    CHECK_OK(cudnnGetConvolutionMathType(r.cd, &math));
    CHECK(groups == rc.groups && math == CUDNN_TENSOR_OP_MATH);
    const float one = 1, zero = 0;
    if (ok && CHECK(best >= 0)) {
        CHECK_OK(cudnnSetConvolutionMathType(r.cd, fr[best].mathType));
        tbuf_poison(r.py, 2 * (size_t)r.ny);
        if (CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, fr[best].algo, ws, fr[best].memory,
                                             &zero, r.yd, r.py)))
            tvalues_check(t, r.py, r.y, r.ny, tconv_tolerance(t, t, fr[best].mathType), "NVIDIA Caffe half forward");
    }
    best = -1;
    if (ok && CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, r.xd, r.px, r.yd, r.pdy, r.cd, r.wd, scratch, 8,
                                                                     &n, br, ws, ws_bytes)))
        for (int i = 0; i < n && best < 0; i++)
            if (br[i].status == CUDNN_STATUS_SUCCESS) best = i;
    if (ok && CHECK(best >= 0)) {
        CHECK_OK(cudnnSetConvolutionMathType(r.cd, br[best].mathType));
        if (CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, r.xd, r.px, r.yd, r.pdy, r.cd, br[best].algo, ws,
                                                    br[best].memory, &zero, r.wd, r.pdw)))
            tvalues_check(t, r.pdw, r.dw, r.nw, tconv_tolerance(t, t, br[best].mathType),
                          "NVIDIA Caffe half backward filter");
    }
    tbuf_free(scratch);
    tbuf_free(ws);
    tconv_run_free(&r);
}

/* ---- OneFlow (oneflow/core/device/cudnn_conv_util.cpp) -------------------------------------- */

/* OneFlow's GetBestAlgorithm: the results scanned in order, each CHECK'ed to be SUCCESS (the
   program aborts otherwise), skipping those whose memory exceeds the workspace limit and, when
   determinism is asked for, the NON_DETERMINISTIC ones; the first left is taken. -1: none. */
#define ONEFLOW_PICK(res, n, limit, det, out)                                                  \
    do {                                                                                       \
        (out) = -1;                                                                            \
        for (int i_ = 0; i_ < (n) && (out) < 0; i_++) {                                      \
            if (!CHECK((res)[i_].status == CUDNN_STATUS_SUCCESS)) break;                      \
            if ((res)[i_].memory > (limit)) continue;                                          \
            if ((det) && (res)[i_].determinism == CUDNN_NON_DETERMINISTIC) continue;          \
            (out) = i_;                                                                        \
        }                                                                                      \
    } while (0)

/* OneFlow's convolutions: a 1-D convolution as cudnnSetConvolution2dDescriptor(pad, 0, stride, 1,
   dilation, 1) on N x C x L x 1 tensors, half data with the FLOAT compute type ("pseudo half")
   and TENSOR_OP_MATH, groups set only when not 1; the parameters read back (CudnnConvArgs) with
   cudnnGetTensorNdDescriptor and cudnnGetFilterNdDescriptor asked for 5 dims,
   cudnnGetConvolutionNdDescriptor for 3 and cudnnGetConvolutionGroupCount. The heuristic search
   is each direction's *_v7 asked for its MaxCount results, the exhaustive one its FindEx on
   scratch buffers with a workspace of the limit (NULL for a limit of 0); the pick as above,
   under a limit of 0 and of 1 MiB, deterministic for backward filter; then the call with the
   pick's workspace. */
TEST(compat_conv_oneflow_scanned_results_succeed)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 2, .in = {9, 1}, .filt = {3, 1},
                          .pad = {1, 0}, .stride = {2, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    struct tconv_run r;
    tconv_run_init(&r, &rc, t);
    cudnnTensorDescriptor_t x = r.xd, y = r.yd;
    cudnnFilterDescriptor_t w = r.wd;
    cudnnConvolutionDescriptor_t conv = r.cd;
    bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, t, rc.n, rc.c, rc.in[0], 1)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, t, rc.n, rc.k, rc.out[0], 1)) &&
              CHECK_OK(cudnnSetFilter4dDescriptor(w, t, CUDNN_TENSOR_NCHW, rc.k, rc.c / rc.groups, rc.filt[0], 1)) &&
              CHECK_OK(cudnnSetConvolution2dDescriptor(conv, rc.pad[0], 0, rc.stride[0], 1, 1, 1,
                                                       CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) &&
              CHECK_OK(cudnnSetConvolutionGroupCount(conv, rc.groups)) &&
              CHECK_OK(cudnnSetConvolutionMathType(conv, CUDNN_TENSOR_OP_MATH));
    int nd = 0, dims[5], strides[5], fnd = 0, fdims[5], cnd = 0, pad[3], stride[3], dil[3], groups = 0;
    cudnnDataType_t dt, ft, ct;
    cudnnTensorFormat_t fmt;
    cudnnConvolutionMode_t mode;
    ok = ok && CHECK_OK(cudnnGetTensorNdDescriptor(x, 5, &dt, &nd, dims, strides)) &&
         CHECK_OK(cudnnGetFilterNdDescriptor(w, 5, &ft, &fmt, &fnd, fdims)) &&
         CHECK_OK(cudnnGetConvolutionNdDescriptor(conv, 3, &cnd, pad, stride, dil, &mode, &ct)) &&
         CHECK_OK(cudnnGetConvolutionGroupCount(conv, &groups)) &&
         CHECK(nd == 4 && fnd == 4 && cnd == 2 && cnd + 2 == nd && groups == rc.groups && ct == CUDNN_DATA_FLOAT);
    void *sx = tbuf_alloc(2 * (size_t)r.nx), *sw = tbuf_alloc(2 * (size_t)r.nw), *sy = tbuf_alloc(2 * (size_t)r.ny);
    const float one = 1, zero = 0;
    static const size_t limits[] = {0, 1 << 20};
    for (size_t l = 0; l < TLEN(limits) && ok; l++) {
        const size_t limit = limits[l];
        void *ws = limit ? tbuf_alloc(limit) : NULL;
        for (int exhaustive = 0; exhaustive < 2; exhaustive++) {
            cudnnConvolutionFwdAlgoPerf_t fp[16];
            cudnnConvolutionBwdDataAlgoPerf_t dp[16];
            cudnnConvolutionBwdFilterAlgoPerf_t wp[16];
            int req = 0, n = 0, pick = -1;
            char what[96];
            CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &req));
            if (CHECK(req > 0 && req <= 16) &&
                CHECK_OK(exhaustive ? cudnnFindConvolutionForwardAlgorithmEx(h, x, sx, w, sw, conv, y, sy, req, &n, fp,
                                                                             ws, limit)
                                    : cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, req, &n, fp)))
                ONEFLOW_PICK(fp, n, limit, false, pick);
            snprintf(what, sizeof what, "OneFlow forward, limit %zu, %s search", limit,
                     exhaustive ? "exhaustive" : "heuristic");
            if (CHECK(pick >= 0) && CHECK_OK(cudnnConvolutionForward(h, &one, x, r.px, w, r.pw, conv, fp[pick].algo, ws,
                                                                     fp[pick].memory, &zero, y, r.py)))
                tvalues_check(t, r.py, r.y, r.ny, tconv_tolerance(t, t, fp[pick].mathType), what);
            CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &req));
            if (CHECK(req > 0 && req <= 16) &&
                CHECK_OK(exhaustive ? cudnnFindConvolutionBackwardDataAlgorithmEx(h, w, sw, y, sy, conv, x, sx, req, &n,
                                                                                  dp, ws, limit)
                                    : cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w, y, conv, x, req, &n, dp)))
                ONEFLOW_PICK(dp, n, limit, false, pick);
            snprintf(what, sizeof what, "OneFlow backward data, limit %zu, %s search", limit,
                     exhaustive ? "exhaustive" : "heuristic");
            if (CHECK(pick >= 0) && CHECK_OK(cudnnConvolutionBackwardData(h, &one, w, r.pw, y, r.pdy, conv,
                                                                          dp[pick].algo, ws, dp[pick].memory, &zero, x,
                                                                          r.pdx)))
                tvalues_check(t, r.pdx, r.dx, r.nx, tconv_tolerance(t, t, dp[pick].mathType), what);
            CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &req));
            if (CHECK(req > 0 && req <= 16) &&
                CHECK_OK(exhaustive ? cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x, sx, y, sy, conv, w, sw, req,
                                                                                    &n, wp, ws, limit)
                                    : cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x, y, conv, w, req, &n, wp)))
                ONEFLOW_PICK(wp, n, limit, true, pick);
            snprintf(what, sizeof what, "OneFlow deterministic backward filter, limit %zu, %s search", limit,
                     exhaustive ? "exhaustive" : "heuristic");
            if (CHECK(pick >= 0) && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, x, r.px, y, r.pdy, conv,
                                                                            wp[pick].algo,
                                                                            ws, wp[pick].memory, &zero, w, r.pdw)))
                tvalues_check(t, r.pdw, r.dw, r.nw, tconv_tolerance(t, t, wp[pick].mathType), what);
        }
        tbuf_free(ws);
    }
    tbuf_free(sx), tbuf_free(sw), tbuf_free(sy);
    tconv_run_free(&r);
}

/* ---- Deeplearning4j (libnd4j include/ops/declarable/platform/cudnn/cudnnUtils.cu) ----------- */

/* libnd4j's pooling2dBpCUDNN passes the output gradient as y too (the same descriptor and
   pointer for y and dy) in every mode, MAX included: maxpool2d_bp never has the forward output,
   so the gradient of each window goes to its maximum found in x. The tensors are channels-last
   through cudnnSetTensor4dDescriptor(NHWC), PROPAGATE_NAN, alpha 1 and beta 0. pooling3dBpCUDNN
   instead runs the forward first into a temporary of dy's shape ("cudnn maxpool2d_bp api requires
   ff output") and passes that as y, the 5-D tensors set by cudnnSetTensorNdDescriptorEx(NHWC)
   for NDHWC data. Both against tests/ref/pooling.c. Its batch norm, whose parameters take the
   data's type, is refused for half data (docs/compatibility.md, left alone): nothing written. */
TEST(compat_pool_dl4j_max_backward_gradient_as_y)
{
    cudnnHandle_t h = test_handle();
    const float one = 1, zero = 0;
    static const struct { int nb, in[3], out[3], win, pad, stride; } cases[] = {
        {2, {5, 6}, {3, 3}, 3, 1, 2},
        {3, {4, 5, 3}, {2, 3, 2}, 2, 1, 2},
    };
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int nb = cases[k].nb, n = 2, c = 3;
        struct ref_pool rp = {.mode = CUDNN_POOLING_MAX, .propagate = true, .nb = nb};
        int xd[5] = {n, c}, yd[5] = {n, c};
        for (int d = 0; d < nb; d++) {
            rp.window[d] = cases[k].win, rp.pad[d] = cases[k].pad, rp.stride[d] = cases[k].stride;
            xd[2 + d] = cases[k].in[d], yd[2 + d] = cases[k].out[d];
        }
        struct tview x, y;
        tview_init(&x, CUDNN_DATA_FLOAT, nb + 2, xd, TV_NHWC);
        tview_init(&y, CUDNN_DATA_FLOAT, nb + 2, yd, TV_NHWC);
        bool ok = nb == 2 ? CHECK_OK(cudnnSetTensor4dDescriptor(x.desc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, xd[0],
                                                                xd[1], xd[2], xd[3])) &&
                                CHECK_OK(cudnnSetTensor4dDescriptor(y.desc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, yd[0],
                                                                    yd[1], yd[2], yd[3]))
                          : CHECK_OK(cudnnSetTensorNdDescriptorEx(x.desc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 5, xd)) &&
                                CHECK_OK(cudnnSetTensorNdDescriptorEx(y.desc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 5, yd));
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        ok = ok && CHECK_OK(cudnnSetPoolingNdDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, nb, rp.window,
                                                        rp.pad, rp.stride));
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(y.count, -1, 1);
        double *yw = malloc(sizeof(double) * (size_t)y.count), *dxw = malloc(sizeof(double) * (size_t)x.count);
        void *px = tview_upload(&x, xv), *pdy = tview_upload(&y, dyv), *pdx = tview_upload(&x, NULL);
        void *py = nb == 3 ? tview_upload(&y, NULL) : pdy;
        ref_pooling_forward(&rp, n, c, cases[k].in, cases[k].out, xv, yw);
        ref_pooling_backward(&rp, n, c, cases[k].in, cases[k].out, xv, dyv, dxw);
        if (ok && nb == 3 && CHECK_OK(cudnnPoolingForward(h, pd, &one, x.desc, px, &zero, y.desc, py)))
            tview_check(&y, py, yw, "DL4J 3-D max pooling forward, NDHWC");
        if (ok && CHECK_OK(cudnnPoolingBackward(h, pd, &one, y.desc, py, y.desc, pdy, x.desc, px, &zero, x.desc, pdx)))
            tview_check(&x, pdx, dxw, nb == 2 ? "DL4J 2-D max pooling backward, y = dy, NHWC"
                                              : "DL4J 3-D max pooling backward after the forward, NDHWC");
        if (py != pdy) tview_free(&y, py);
        tview_free(&x, px), tview_free(&y, pdy), tview_free(&x, pdx);
        free(xv), free(dyv), free(yw), free(dxw);
        cudnnDestroyPoolingDescriptor(pd);
        tview_destroy(&x), tview_destroy(&y);
    }

    /* batchnormCUDNN for half data: the parameters' descriptor of the data's own type */
    const int bd[4] = {2, 3, 2, 2}, pdims[4] = {1, 3, 1, 1};
    struct tview bx, bp;
    tview_init(&bx, CUDNN_DATA_HALF, 4, bd, TV_NCHW);
    tview_init(&bp, CUDNN_DATA_HALF, 4, pdims, TV_NCHW);
    double *xv = tview_random(bx.count, -1, 1), *yv = tview_fill(bx.count, 3), *pv = tview_fill(bp.count, 1);
    void *px = tview_upload(&bx, xv), *py = tview_upload(&bx, yv), *pp = tview_upload(&bp, pv);
    CHECK_STATUS(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, bx.desc, px, bx.desc,
                                                         py, bp.desc, pp, pp, pp, pp, 1e-5),
                 CUDNN_STATUS_NOT_SUPPORTED);
    tview_holds(&bx, py, yv, "y after DL4J's half batch norm was refused");
    tview_free(&bx, px), tview_free(&bx, py), tview_free(&bp, pp);
    free(xv), free(yv), free(pv);
    tview_destroy(&bx), tview_destroy(&bp);
}

/* How a case picks its algorithms: the non-Ex Find asked for one result for every direction
   (DL4J), or ArrayFire's: the first of the _v7 heuristics for the forward and the filter
   gradient, backward data fixed to ALGO_1 (ALGO_0 for a dilated float or double convolution). */
enum conv_pick { PICK_FIND_ONE, PICK_ARRAYFIRE };

struct conv_round_trip {
    cudnnDataType_t t;
    bool nhwc, w_nhwc, mirror, bias;
    int groups, pad, stride, dil;
    enum conv_pick pick;
};

/* One convolution as a library drives it: the descriptors by the 4-D setters (compute type the
   data's own), the algorithms by c->pick with the workspace each one's query gives, the forward
   (with the bias {1, oC, 1, 1} NCHW added by cudnnAddTensor when c->bias, and its gradient by
   cudnnConvolutionBackwardBias), the filter and data gradients, each against tests/ref/conv.c
   (float within TF32's rounding, which DEFAULT_MATH allows); alpha and beta float for float and
   half data, double for double. */
static void check_conv_round_trip(const struct conv_round_trip *c, const char *who)
{
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = c->t;
    struct ref_conv rc = {2, 2, 4, 4, c->groups, {7, 6}, {3, 3}, {0}, {c->pad, c->pad}, {c->stride, c->stride},
                          {c->dil, c->dil}, c->mirror};
    ref_conv_out_dims(&rc);
    const int bdims[4] = {1, rc.k, 1, 1};
    const cudnnTensorFormat_t f = c->nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    struct tview x, y, w, b;
    tconv_views(&rc, t, c->nhwc ? TV_NHWC : TV_NCHW, c->w_nhwc ? TV_NHWC : TV_NCHW, &x, &w, &y);
    tview_init(&b, t, 4, bdims, TV_NCHW);
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
    bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(x.desc, f, t, x.dims[0], x.dims[1], x.dims[2], x.dims[3])) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(y.desc, f, t, y.dims[0], y.dims[1], y.dims[2], y.dims[3])) &&
              CHECK_OK(cudnnSetFilter4dDescriptor(wd, t, c->w_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, w.dims[0],
                                                  w.dims[1], w.dims[2], w.dims[3])) &&
              CHECK_OK(cudnnSetConvolution2dDescriptor(cd, rc.pad[0], rc.pad[1], rc.stride[0], rc.stride[1], rc.dil[0],
                                                       rc.dil[1], c->mirror ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                                       t)) &&
              (c->groups == 1 || CHECK_OK(cudnnSetConvolutionGroupCount(cd, rc.groups)));
    double *xv = tview_random(x.count, -1, 1), *wv = tview_random(w.count, -1, 1), *bv = tview_random(b.count, -1, 1);
    double *dyv = tview_random(y.count, -1, 1), *yw = malloc(sizeof(double) * (size_t)y.count);
    double *dxw = malloc(sizeof(double) * (size_t)x.count), *dww = malloc(sizeof(double) * (size_t)w.count);
    double *dbw = calloc((size_t)b.count, sizeof(double));
    ref_conv_fwd(&rc, xv, wv, yw);
    ref_conv_bwd_data(&rc, dyv, wv, dxw);
    ref_conv_bwd_filter(&rc, xv, dyv, dww);
    const int64_t sp = (int64_t)rc.out[0] * rc.out[1];
    for (int64_t i = 0; c->bias && i < y.count; i++) yw[i] += bv[i / sp % rc.k], dbw[i / sp % rc.k] += dyv[i];
    void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *pb = tview_upload(&b, bv);
    void *pdy = tview_upload(&y, dyv), *py = tview_upload(&y, NULL), *pdx = tview_upload(&x, NULL);
    void *pdw = tview_upload(&w, NULL), *pdb = tview_upload(&b, NULL);
    const float one32 = 1, zero32 = 0;
    const double one64 = 1, zero64 = 0;
    const void *one = t == CUDNN_DATA_DOUBLE ? (const void *)&one64 : (const void *)&one32;
    const void *zero = t == CUDNN_DATA_DOUBLE ? (const void *)&zero64 : (const void *)&zero32;
    int count = 0;
    cudnnConvolutionFwdAlgoPerf_t fp[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t fwp[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t dp[1];
    size_t wsf = 0, wsw = 0, wsd = 0;
    if (c->pick == PICK_FIND_ONE)
        ok = ok && CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, x.desc, wd, cd, y.desc, 1, &count, fp)) &&
             CHECK(count == 1) &&
             CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, x.desc, y.desc, cd, wd, 1, &count, fwp)) &&
             CHECK(count == 1) &&
             CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, wd, y.desc, cd, x.desc, 1, &count, dp)) &&
             CHECK(count == 1);
    else {
        ok = ok &&
             CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, x.desc, wd, cd, y.desc, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                             &count, fp)) &&
             CHECK(count >= 1) &&
             CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x.desc, y.desc, cd, wd,
                                                                    CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count,
                                                                    fwp)) &&
             CHECK(count >= 1);
        dp[0].algo = c->dil == 1 || t == CUDNN_DATA_HALF ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_1
                                                         : CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
    }
    ok = ok && CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, x.desc, wd, cd, y.desc, fp[0].algo, &wsf)) &&
         CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x.desc, y.desc, cd, wd, fwp[0].algo, &wsw)) &&
         CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, y.desc, cd, x.desc, dp[0].algo, &wsd));
    void *pwsf = wsf ? tbuf_alloc(wsf) : NULL, *pwsw = wsw ? tbuf_alloc(wsw) : NULL;
    void *pwsd = wsd ? tbuf_alloc(wsd) : NULL;
    char what[96];
    const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH); /* DEFAULT_MATH: TF32 allowed for float */
    snprintf(what, sizeof what, "%s forward%s", who, c->bias ? " with the bias" : "");
    if (ok && CHECK_OK(cudnnConvolutionForward(h, one, x.desc, px, wd, pw, cd, fp[0].algo, pwsf, wsf, zero, y.desc, py)) &&
        (!c->bias || CHECK_OK(cudnnAddTensor(h, one, b.desc, pb, one, y.desc, py))))
        tview_check_blend(&y, py, yw, NULL, 1, 0, tol, what);
    snprintf(what, sizeof what, "%s bias gradient", who);
    if (ok && c->bias && CHECK_OK(cudnnConvolutionBackwardBias(h, one, y.desc, pdy, zero, b.desc, pdb)))
        tview_check(&b, pdb, dbw, what);
    snprintf(what, sizeof what, "%s filter gradient", who);
    if (ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, one, x.desc, px, y.desc, pdy, cd, fwp[0].algo, pwsw, wsw, zero,
                                                      wd, pdw)))
        tview_check_blend(&w, pdw, dww, NULL, 1, 0, tol, what);
    snprintf(what, sizeof what, "%s input gradient", who);
    if (ok && CHECK_OK(cudnnConvolutionBackwardData(h, one, wd, pw, y.desc, pdy, cd, dp[0].algo, pwsd, wsd, zero, x.desc,
                                                    pdx)))
        tview_check_blend(&x, pdx, dxw, NULL, 1, 0, tol, what);
    tbuf_free(pwsf), tbuf_free(pwsw), tbuf_free(pwsd);
    tview_free(&x, px), tview_free(&x, pdx), tview_free(&w, pw), tview_free(&w, pdw);
    tview_free(&b, pb), tview_free(&b, pdb), tview_free(&y, pdy), tview_free(&y, py);
    free(xv), free(wv), free(bv), free(dyv), free(yw), free(dxw), free(dww), free(dbw);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    tview_destroy(&x), tview_destroy(&y), tview_destroy(&w), tview_destroy(&b);
}

/* libnd4j's conv2d (platform/cudnn/conv2d.cu) and depthwise_conv2d (depthwiseConv2d.cu, channel
   multiplier 1): x and y through cudnnSetTensor4dDescriptor in the op's format (NCHW or NHWC); the
   filter {oC, iC / groups, kH, kW} in **its own format, independent of the data's** (conv2d's
   wFormat 1 is NCHW, 2 NHWC, whatever the data; depthwise always NCHW) and, for depthwise,
   cudnnSetConvolutionGroupCount(iC) after cudnnSetConvolution2dDescriptor (cross-correlation,
   the data's type as compute type); each direction's algorithm from the non-Ex
   cudnnFind*Algorithm asked for 1 result, its status not read, its workspace from the
   direction's cudnnGet*WorkspaceSize; the bias {1, oC, 1, 1} NCHW added by cudnnAddTensor with
   alpha and beta 1 onto the (possibly NHWC) output, its gradient by cudnnConvolutionBackwardBias
   into that descriptor; alpha and beta float for float and half data, double for double. */
TEST(compat_conv_dl4j_found_non_ex_filter_format_free)
{
    static const struct conv_round_trip cases[] = {
        {CUDNN_DATA_FLOAT, false, false, false, true, 4, 1, 1, 1, PICK_FIND_ONE},
        {CUDNN_DATA_FLOAT, true, false, false, true, 4, 1, 2, 2, PICK_FIND_ONE},
        {CUDNN_DATA_DOUBLE, true, false, false, true, 4, 0, 1, 2, PICK_FIND_ONE},
        {CUDNN_DATA_HALF, true, false, false, true, 4, 1, 1, 1, PICK_FIND_ONE},
        {CUDNN_DATA_FLOAT, true, false, false, true, 1, 1, 1, 1, PICK_FIND_ONE},
        {CUDNN_DATA_FLOAT, false, true, false, true, 1, 1, 2, 1, PICK_FIND_ONE},
        {CUDNN_DATA_DOUBLE, true, true, false, true, 1, 0, 1, 1, PICK_FIND_ONE},
    };
    for (size_t k = 0; k < TLEN(cases); k++) check_conv_round_trip(&cases[k], "DL4J");
}

/* ---- ArrayFire (src/backend/cuda/convolveNN.cpp) --------------------------------------------- */

/* ArrayFire's convolve2 and its gradients: NCHW tensors and filter by the 4-D setters, the
   descriptor in **CONVOLUTION mode** (the filter mirrored) with the data's own type as compute
   type (HALF for half), stride, padding and dilation; the forward and filter-gradient algorithms
   chosen by the heuristics, **backward data fixed to ALGO_1, or ALGO_0 for a dilated float or
   double convolution** (half keeps ALGO_1 with dilation); the workspace of each query; alpha 1,
   beta 0, double scalars for double data. */
TEST(compat_conv_arrayfire_convolution_mode_fixed_backward_data)
{
    static const struct conv_round_trip cases[] = {
        {CUDNN_DATA_FLOAT, false, false, true, false, 1, 1, 1, 1, PICK_ARRAYFIRE},
        {CUDNN_DATA_FLOAT, false, false, true, false, 1, 1, 2, 2, PICK_ARRAYFIRE},
        {CUDNN_DATA_DOUBLE, false, false, true, false, 1, 0, 1, 2, PICK_ARRAYFIRE},
        {CUDNN_DATA_HALF, false, false, true, false, 1, 1, 2, 2, PICK_ARRAYFIRE},
    };
    for (size_t k = 0; k < TLEN(cases); k++) check_conv_round_trip(&cases[k], "ArrayFire");
}

/* ---- Apache SINGA (src/model/operation/batchnorm.cc) ------------------------------------------ */

/* SINGA's CudnnBatchNormHandle: a 2-D input N x C reshaped to N x C x 1 x 1 in PER_ACTIVATION
   mode (SPATIAL for 4-D input), x, y, dy and dx one cudnnSetTensor4dDescriptor and the
   parameters another, 1 x C x 1 x 1, all of the data's type; epsilon CUDNN_BN_MIN_EPSILON, which
   cuDNN 8 defines as 0.0, in training, inference and backward; the momentum as the factor; the
   backward reading the saved mean and inverse variance the training call returned, alpha 1 and
   beta 0 for the data and the parameters. */
TEST(compat_bn_singa_min_epsilon_zero)
{
    static const struct { int n, c, h, w; cudnnBatchNormMode_t mode; } cases[] = {
        {5, 6, 1, 1, CUDNN_BATCHNORM_PER_ACTIVATION},
        {3, 4, 3, 2, CUDNN_BATCHNORM_SPATIAL},
    };
    cudnnHandle_t h = test_handle();
    const float one = 1, zero = 0;
    const double eps = CUDNN_BN_MIN_EPSILON, factor = 0.9;
    CHECK(eps == 0);
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int xd[4] = {cases[k].n, cases[k].c, cases[k].h, cases[k].w}, pd[4] = {1, cases[k].c, 1, 1};
        const struct ref_bn_shape sh = {cases[k].n, cases[k].c, (int64_t)cases[k].h * cases[k].w,
                                        cases[k].mode == CUDNN_BATCHNORM_PER_ACTIVATION};
        const int64_t slots = ref_bn_slots(&sh);
        struct tview x, p;
        tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
        tview_init(&p, CUDNN_DATA_FLOAT, 4, sh.per_activation ? (const int[]){1, xd[1], xd[2], xd[3]} : pd, TV_NCHW);
        bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(x.desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, xd[0], xd[1],
                                                      xd[2], xd[3])) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(p.desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, xd[1], 1, 1));
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
        double *scale = tview_random(slots, 0.5, 1.5), *bias = tview_random(slots, -1, 1);
        double *rm = tview_random(slots, -1, 1), *rv = tview_random(slots, 0.5, 2);
        double *mean = malloc(sizeof(double) * (size_t)slots), *var = malloc(sizeof(double) * (size_t)slots);
        double *invstd = malloc(sizeof(double) * (size_t)slots), *eqs = malloc(sizeof(double) * (size_t)slots);
        double *eqb = malloc(sizeof(double) * (size_t)slots), *urm = malloc(sizeof(double) * (size_t)slots);
        double *urv = malloc(sizeof(double) * (size_t)slots), *y = malloc(sizeof(double) * (size_t)x.count);
        double *dx = malloc(sizeof(double) * (size_t)x.count), *ds = malloc(sizeof(double) * (size_t)slots);
        double *db = malloc(sizeof(double) * (size_t)slots), *yi = malloc(sizeof(double) * (size_t)x.count);
        double *dpre = malloc(sizeof(double) * (size_t)x.count);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_finalize(slots, mean, var, (double)ref_bn_reduced(&sh), scale, bias, rm, rv, eps, factor, invstd, eqs,
                        eqb, urm, urv);
        ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
        ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, scale, mean, var, eps, dpre, dx, ds, db);
        ref_bn_forward(&sh, xv, NULL, scale, bias, urm, urv, eps, -1, 0, NULL, yi);
        void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
        void *pdx = tview_upload(&x, NULL), *ps = tvalues_upload(CUDNN_DATA_FLOAT, scale, slots);
        void *pb = tvalues_upload(CUDNN_DATA_FLOAT, bias, slots), *prm = tvalues_upload(CUDNN_DATA_FLOAT, rm, slots);
        void *prv = tvalues_upload(CUDNN_DATA_FLOAT, rv, slots), *psm = tbuf_alloc(sizeof(float) * (size_t)slots);
        void *psi = tbuf_alloc(sizeof(float) * (size_t)slots), *pds = tbuf_alloc(sizeof(float) * (size_t)slots);
        void *pdb = tbuf_alloc(sizeof(float) * (size_t)slots);
        const double tol = 2e-4;
        if (ok && CHECK_OK(cudnnBatchNormalizationForwardTraining(h, cases[k].mode, &one, &zero, x.desc, px, x.desc, py,
                                                                  p.desc, ps, pb, factor, prm, prv, eps, psm, psi))) {
            tview_check(&x, py, y, "SINGA's training, epsilon 0");
            tvalues_check(CUDNN_DATA_FLOAT, psm, mean, slots, tol, "SINGA's saved mean");
            tvalues_check(CUDNN_DATA_FLOAT, psi, invstd, slots, tol, "SINGA's saved inverse variance");
            tvalues_check(CUDNN_DATA_FLOAT, prm, urm, slots, tol, "SINGA's running mean");
            tvalues_check(CUDNN_DATA_FLOAT, prv, urv, slots, tol, "SINGA's running variance");
        }
        if (ok && CHECK_OK(cudnnBatchNormalizationForwardInference(h, cases[k].mode, &one, &zero, x.desc, px, x.desc,
                                                                   py, p.desc, ps, pb, prm, prv, eps)))
            tview_check(&x, py, yi, "SINGA's inference, epsilon 0");
        if (ok && CHECK_OK(cudnnBatchNormalizationBackward(h, cases[k].mode, &one, &zero, &one, &zero, x.desc, px,
                                                           x.desc, pdy, x.desc, pdx, p.desc, ps, pds, pdb, eps, psm,
                                                           psi))) {
            tview_check(&x, pdx, dx, "SINGA's backward, epsilon 0");
            tvalues_check(CUDNN_DATA_FLOAT, pds, ds, slots, tol, "SINGA's scale gradient");
            tvalues_check(CUDNN_DATA_FLOAT, pdb, db, slots, tol, "SINGA's bias gradient");
        }
        tview_free(&x, px), tview_free(&x, pdy), tview_free(&x, py), tview_free(&x, pdx);
        tbuf_free(ps), tbuf_free(pb), tbuf_free(prm), tbuf_free(prv), tbuf_free(psm), tbuf_free(psi);
        tbuf_free(pds), tbuf_free(pdb);
        free(xv), free(dyv), free(scale), free(bias), free(rm), free(rv), free(mean), free(var), free(invstd);
        free(eqs), free(eqb), free(urm), free(urv), free(y), free(dx), free(ds), free(db), free(yi), free(dpre);
        tview_destroy(&x), tview_destroy(&p);
    }
}

/* ---- OpenVINO's NVIDIA plugin (openvino_contrib modules/nvidia_plugin/src/ops) ---------------- */

/* Its descriptors pad every shape with trailing 1s to 4 dims (cuda/descriptor_utils.cpp). Clamp
   (clamp_cudnn.cpp): cudnnOpTensor MAX of x and a one-element bound tensor {1} (1 x 1 x 1 x 1)
   into y, then MIN of y and the other bound into y itself (C on A, "works in-place despite the
   fact it isn't mentioned"), the op type FLOAT for int8, half and float data, PROPAGATE_NAN.
   MVN (mvn.cpp): cudnnReduceTensor AVG over the normalized axes into a reduced tensor, then
   cudnnOpTensor ADD with alpha2 = -1 and the reduced tensor as B (x minus its mean); with no axis
   left to reduce, x minus x (A and B one buffer). */
TEST(compat_op_tensor_openvino_clamp_and_mvn)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_INT8, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    const int d[4] = {2, 3, 4, 1}, one_d[4] = {1, 1, 1, 1};
    const double lo = -10, hi = 20;
    cudnnHandle_t h = test_handle();
    cudnnOpTensorDescriptor_t mx, mn, add;
    CHECK_OK(cudnnCreateOpTensorDescriptor(&mx));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&mn));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&add));
    CHECK_OK(cudnnSetOpTensorDescriptor(mx, CUDNN_OP_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN));
    CHECK_OK(cudnnSetOpTensorDescriptor(mn, CUDNN_OP_TENSOR_MIN, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN));
    CHECK_OK(cudnnSetOpTensorDescriptor(add, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN));
    const float one = 1, minus_one = -1, zero = 0;
    for (size_t k = 0; k < TLEN(types); k++) {
        struct tview x, b;
        tview_init(&x, types[k], 4, d, TV_NCHW);
        tview_init(&b, types[k], 4, one_d, TV_NCHW);
        double *xv = tview_random(x.count, -30, 30), lov = lo, hiv = hi;
        double *want = malloc(sizeof(double) * (size_t)x.count);
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *plo = tview_upload(&b, &lov);
        void *phi = tview_upload(&b, &hiv);
        for (int64_t i = 0; i < x.count; i++) want[i] = fmin(fmax(xv[i], lo), hi);
        if (CHECK_OK(cudnnOpTensor(h, mx, &one, x.desc, px, &one, b.desc, plo, &zero, x.desc, py)) &&
            CHECK_OK(cudnnOpTensor(h, mn, &one, x.desc, py, &one, b.desc, phi, &zero, x.desc, py)))
            tview_check(&x, py, want, "OpenVINO's clamp");
        tview_free(&x, px), tview_free(&x, py), tview_free(&b, plo), tview_free(&b, phi);
        free(xv), free(want);
        tview_destroy(&x), tview_destroy(&b);
    }
    /* MVN over the last two axes of half data, then with no axis (x - x) */
    const int rd[4] = {2, 3, 1, 1};
    struct tview x, r;
    tview_init(&x, CUDNN_DATA_HALF, 4, d, TV_NCHW);
    tview_init(&r, CUDNN_DATA_HALF, 4, rd, TV_NCHW);
    double *xv = tview_random(x.count, -2, 2), *mean = calloc((size_t)r.count, sizeof(double));
    double *want = malloc(sizeof(double) * (size_t)x.count);
    void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *pr = tview_upload(&r, NULL);
    const int64_t inner = x.count / r.count;
    for (int64_t i = 0; i < x.count; i++) mean[i / inner] += xv[i] / (double)inner;
    cudnnReduceTensorDescriptor_t avg;
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&avg));
    size_t ws = 0;
    bool ok = CHECK_OK(cudnnSetReduceTensorDescriptor(avg, CUDNN_REDUCE_TENSOR_AVG, CUDNN_DATA_FLOAT,
                                                      CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                                      CUDNN_32BIT_INDICES)) &&
              CHECK_OK(cudnnGetReductionWorkspaceSize(h, avg, x.desc, r.desc, &ws));
    void *pws = ws ? tbuf_alloc(ws) : NULL;
    if (ok && CHECK_OK(cudnnReduceTensor(h, avg, NULL, 0, pws, ws, &one, x.desc, px, &zero, r.desc, pr)) &&
        tview_check(&r, pr, mean, "OpenVINO's MVN mean")) {
        double *stored_mean = malloc(sizeof(double) * (size_t)r.count);
        tview_download(&r, pr, stored_mean);
        for (int64_t i = 0; i < x.count; i++) want[i] = xv[i] - stored_mean[i / inner];
        if (CHECK_OK(cudnnOpTensor(h, add, &one, x.desc, px, &minus_one, r.desc, pr, &zero, x.desc, py)))
            tview_check(&x, py, want, "OpenVINO's MVN x minus the mean");
        free(stored_mean);
    }
    for (int64_t i = 0; i < x.count; i++) want[i] = 0;
    if (CHECK_OK(cudnnOpTensor(h, add, &one, x.desc, px, &minus_one, x.desc, px, &zero, x.desc, py)))
        tview_check(&x, py, want, "OpenVINO's MVN with no axis: x minus x");
    tbuf_free(pws);
    tview_free(&x, px), tview_free(&x, py), tview_free(&r, pr);
    free(xv), free(mean), free(want);
    tview_destroy(&x), tview_destroy(&r);
    cudnnDestroyReduceTensorDescriptor(avg);
    cudnnDestroyOpTensorDescriptor(mx), cudnnDestroyOpTensorDescriptor(mn), cudnnDestroyOpTensorDescriptor(add);
}

/* ---- Caffe2 (pytorch/pytorch caffe2/operators/affine_channel_op_cudnn.cc) -------------------- */

/* CuDNNAffineChannelOp: y = x * scale + bias per channel, float. A 4-D input through
   cudnnSetTensor4dDescriptor in the op's order (NCHW or NHWC) for x and for the 1 x C x 1 x 1
   scale; an N-D one through cudnnSetTensorNdDescriptor with x's dims as stored (NHWC: N, D, H,
   W, C, packed) and the scale all 1s but C, its strides C before the channel dim and 1 from it
   on. cudnnOpTensor MUL (x, scale) into y, PROPAGATE_NAN, beta 0, **y on x** when the op runs
   in place (not learnable); then the bias by cudnnAddTensor (4-D) or cudnnOpTensor ADD with A
   and C both y (N-D). The gradient (always the N-D descriptors): dx = dy * scale by
   cudnnOpTensor MUL, dy * x into a temporary, then cudnnReduceTensor ADD (NO_INDICES, indices
   NULL and 0 bytes, the queried workspace) of it into dscale and of dy into dbias, the scale's
   descriptor as the output. */
TEST(compat_op_tensor_caffe2_affine_channel)
{
    static const struct { bool nhwc; int rank; int dims[5]; } cases[] = {
        {false, 4, {2, 3, 4, 5}}, {true, 4, {2, 4, 5, 3}}, {true, 5, {2, 2, 3, 2, 3}}, {false, 5, {2, 3, 2, 3, 2}},
    };
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t xd, sd;
    cudnnOpTensorDescriptor_t mul, add;
    cudnnReduceTensorDescriptor_t sum;
    CHECK_OK(cudnnCreateTensorDescriptor(&xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&sd));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&mul));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&add));
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&sum));
    CHECK_OK(cudnnSetOpTensorDescriptor(mul, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN));
    CHECK_OK(cudnnSetOpTensorDescriptor(add, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN));
    CHECK_OK(cudnnSetReduceTensorDescriptor(sum, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
    const float one = 1, zero = 0;
    const double tol = 1e-5;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int rank = cases[k].rank, *d = cases[k].dims, cdim = cases[k].nhwc ? rank - 1 : 1, C = d[cdim];
        int xs[5], sdims[5], ss[5];
        xs[rank - 1] = 1;
        for (int i = rank - 1; i > 0; i--) xs[i - 1] = xs[i] * d[i];
        for (int i = 0; i < rank; i++) sdims[i] = i == cdim ? C : 1, ss[i] = i < cdim ? C : 1;
        int64_t n = (int64_t)xs[0] * d[0];
        double *x = tview_random(n, -2, 2), *dy = tview_random(n, -1, 1), *scale = tview_random(C, -1.5, 1.5);
        double *bias = tview_random(C, -1, 1), *y = malloc(sizeof(double) * (size_t)n);
        double *dx = malloc(sizeof(double) * (size_t)n), *ds = calloc((size_t)C, sizeof(double));
        double *db = calloc((size_t)C, sizeof(double));
        for (int64_t i = 0; i < n; i++) {
            int c = (int)(i / xs[cdim] % C);
            y[i] = x[i] * scale[c] + bias[c];
            dx[i] = dy[i] * scale[c];
            ds[c] += dy[i] * x[i], db[c] += dy[i];
        }
        bool ok = rank == 4 ? CHECK_OK(cudnnSetTensor4dDescriptor(xd, cases[k].nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                                  CUDNN_DATA_FLOAT, d[0], C,
                                                                  cases[k].nhwc ? d[1] : d[2],
                                                                  cases[k].nhwc ? d[2] : d[3])) &&
                                  CHECK_OK(cudnnSetTensor4dDescriptor(sd, cases[k].nhwc ? CUDNN_TENSOR_NHWC
                                                                                        : CUDNN_TENSOR_NCHW,
                                                                      CUDNN_DATA_FLOAT, 1, C, 1, 1))
                            : CHECK_OK(cudnnSetTensorNdDescriptor(xd, CUDNN_DATA_FLOAT, rank, d, xs)) &&
                                  CHECK_OK(cudnnSetTensorNdDescriptor(sd, CUDNN_DATA_FLOAT, rank, sdims, ss));
        /* the forward in place: y on x */
        void *pxy = tvalues_upload(CUDNN_DATA_FLOAT, x, n), *ps = tvalues_upload(CUDNN_DATA_FLOAT, scale, C);
        void *pb = tvalues_upload(CUDNN_DATA_FLOAT, bias, C);
        ok = ok && CHECK_OK(cudnnOpTensor(h, mul, &one, xd, pxy, &one, sd, ps, &zero, xd, pxy)) &&
             (rank == 4 ? CHECK_OK(cudnnAddTensor(h, &one, sd, pb, &one, xd, pxy))
                        : CHECK_OK(cudnnOpTensor(h, add, &one, xd, pxy, &one, sd, pb, &zero, xd, pxy)));
        if (ok) tvalues_check(CUDNN_DATA_FLOAT, pxy, y, n, tol, "Caffe2's affine channel in place");
        /* the gradient, through the N-D descriptors */
        for (int i = 0; i < rank; i++) sdims[i] = i == cdim ? C : 1;
        ok = CHECK_OK(cudnnSetTensorNdDescriptor(xd, CUDNN_DATA_FLOAT, rank, d, xs)) &&
             CHECK_OK(cudnnSetTensorNdDescriptor(sd, CUDNN_DATA_FLOAT, rank, sdims, ss));
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, n), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, n);
        void *pdx = tbuf_alloc(sizeof(float) * (size_t)n), *pt = tbuf_alloc(sizeof(float) * (size_t)n);
        void *pds = tbuf_alloc(sizeof(float) * (size_t)C), *pdb = tbuf_alloc(sizeof(float) * (size_t)C);
        size_t ws = 0;
        ok = ok && CHECK_OK(cudnnGetReductionWorkspaceSize(h, sum, xd, sd, &ws));
        void *pws = ws ? tbuf_alloc(ws) : NULL;
        if (ok && CHECK_OK(cudnnOpTensor(h, mul, &one, xd, pdy, &one, sd, ps, &zero, xd, pdx)))
            tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, n, tol, "Caffe2's affine channel dx");
        if (ok && CHECK_OK(cudnnOpTensor(h, mul, &one, xd, pdy, &one, xd, px, &zero, xd, pt)) &&
            CHECK_OK(cudnnReduceTensor(h, sum, NULL, 0, pws, ws, &one, xd, pt, &zero, sd, pds)))
            tvalues_check(CUDNN_DATA_FLOAT, pds, ds, C, tol * (double)n, "Caffe2's affine channel dscale");
        if (ok && CHECK_OK(cudnnReduceTensor(h, sum, NULL, 0, pws, ws, &one, xd, pdy, &zero, sd, pdb)))
            tvalues_check(CUDNN_DATA_FLOAT, pdb, db, C, tol * (double)n, "Caffe2's affine channel dbias");
        void *bufs[] = {pxy, ps, pb, px, pdy, pdx, pt, pds, pdb, pws};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        free(x), free(dy), free(scale), free(bias), free(y), free(dx), free(ds), free(db);
    }
    cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(sd);
    cudnnDestroyOpTensorDescriptor(mul), cudnnDestroyOpTensorDescriptor(add);
    cudnnDestroyReduceTensorDescriptor(sum);
}

/* ---- MegEngine (dnn/src/cuda/conv_bias/cudnn_conv_bias_activation.cpp, helper.cpp) ----------- */
