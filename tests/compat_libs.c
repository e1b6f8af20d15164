/* compat_libs.c: call patterns of real programs (docs/compatibility.md) from the C and C++
   libraries that drive cuDNN 8 directly: dlib's convolution layer (algorithms found once per
   stride, padding and filter size and reused for every other shape, the bias fused with the
   bias's own descriptor passed as z). Each result against the double references of tests/ref/.
   (compat.c, compat_ops.c: the frameworks' patterns.) */
#include "desc_util.h"
#include "ref/conv.h"
#include "tensors.h"
#include "test.h"

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
        if (CHECK(req > 0 && req <= 16) && CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, x, w, conv, y, req, &nf, fp)))
            DLIB_PICK(fp, nf, fa);
        CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &req)); /* dlib's count for both */
        if (CHECK(req > 0 && req <= 16) && CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, w, y, conv, x, req, &nd, dp)))
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
        if (ok)
            CHECK_STATUS(cudnnConvolutionBiasActivationForward(h, &one, x, px, w, pw, conv,
                                                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work, ps,
                                                               &half, b, pb, b, pb, identity, y, pf),
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
