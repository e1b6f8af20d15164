/* compat_ops.c: call patterns of real programs (docs/compatibility.md) around convolution, batch
   normalization and dropout that the op tests do not make: darknet's half-precision convolution
   with fixed algorithms and its algorithm choice under a workspace limit, its batch norm on half
   data accumulating the parameter gradients; CuPy's dropout re-set without states before each
   call and its first-result algorithm choice; MXNet's 1-D convolution as a 2-D one whose dummy
   dim shares a stride; ONNX Runtime's instance normalization through the running averages, its
   ceil-mode and 1-D pooling and 5-D LRN; TVM's group count set before the descriptor and its
   log-softmax over a middle axis; NNabla's batch-norm backward with the gradients it does not
   want in one scratch buffer, and its 1-D channels-last deconvolution with a convolution
   descriptor per direction. Each result against the double references of tests/ref/.
   (compat_core.c: the logging and version patterns.) */
#include "desc_util.h"
#include "ref/batchnorm.h"
#include "ref/conv.h"
#include "ref/lrn.h"
#include "ref/pooling.h"
#include "ref/softmax.h"
#include "ref/spatial_tf.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The descriptors of one 2-D convolution: x, y (tensors), w (filter), conv. */
struct cdescs {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
};

/* Packed NCHW descriptors of type t for rc (2-D), the convolution's compute type float. */
static void cdescs_init(struct cdescs *d, const struct ref_conv *rc, cudnnDataType_t t, cudnnMathType_t math)
{
    CHECK_OK(cudnnCreateTensorDescriptor(&d->x));
    CHECK_OK(cudnnCreateTensorDescriptor(&d->y));
    CHECK_OK(cudnnCreateFilterDescriptor(&d->w));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&d->conv));
    CHECK_OK(cudnnSetTensor4dDescriptor(d->x, CUDNN_TENSOR_NCHW, t, rc->n, rc->c, rc->in[0], rc->in[1]));
    CHECK_OK(cudnnSetTensor4dDescriptor(d->y, CUDNN_TENSOR_NCHW, t, rc->n, rc->k, rc->out[0], rc->out[1]));
    CHECK_OK(cudnnSetFilter4dDescriptor(d->w, t, CUDNN_TENSOR_NCHW, rc->k, rc->c / rc->groups, rc->filt[0],
                                        rc->filt[1]));
    CHECK_OK(cudnnSetConvolution2dDescriptor(d->conv, rc->pad[0], rc->pad[1], rc->stride[0], rc->stride[1],
                                             rc->dil[0], rc->dil[1], CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionGroupCount(d->conv, rc->groups));
    CHECK_OK(cudnnSetConvolutionMathType(d->conv, math));
}

static void cdescs_destroy(struct cdescs *d)
{
    cudnnDestroyTensorDescriptor(d->x);
    cudnnDestroyTensorDescriptor(d->y);
    cudnnDestroyFilterDescriptor(d->w);
    cudnnDestroyConvolutionDescriptor(d->conv);
}

/* darknet (convolutional_layer.c, convolutional_kernels.cu): with cudnn_half the layer runs on
   half copies of its tensors with algorithms fixed in advance (IMPLICIT_PRECOMP_GEMM forward,
   ALGO_1 for both backward passes), the descriptor's compute type float and TENSOR_OP_MATH,
   groups and dilation as configured (pad = pad * dilation); one workspace, the largest of the
   three; the weight gradient accumulated (beta 1) into the half copy of the previous updates. */
TEST(compat_conv_darknet_half_fixed_algorithms)
{
    static const struct { int groups, dil; } cases[] = {{1, 1}, {2, 2}};
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH);
    for (size_t k = 0; k < TLEN(cases); k++) {
        int g = cases[k].groups, dil = cases[k].dil;
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 16, .k = 8, .groups = g, .in = {6, 5}, .filt = {3, 3},
                              .pad = {dil, dil}, .stride = {1, 1}, .dil = {dil, dil}};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
        double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *dy = tview_random(ny, -1, 1);
        double *dw0 = tview_random(nw, -1, 1), *y = malloc(sizeof(double) * (size_t)ny);
        double *dx = malloc(sizeof(double) * (size_t)nx), *dw = malloc(sizeof(double) * (size_t)nw);
        void *px = tvalues_upload(t, x, nx), *pw = tvalues_upload(t, w, nw), *pdy = tvalues_upload(t, dy, ny);
        void *pdw = tvalues_upload(t, dw0, nw), *py = tbuf_alloc(2 * (size_t)ny), *pdx = tbuf_alloc(2 * (size_t)nx);
        ref_conv_fwd(&rc, x, w, y);
        ref_conv_bwd_data(&rc, dy, w, dx);
        ref_conv_bwd_filter(&rc, x, dy, dw);
        for (long i = 0; i < nw; i++) dw[i] += dw0[i];
        struct cdescs d;
        cdescs_init(&d, &rc, t, CUDNN_TENSOR_OP_MATH);
        size_t ws = 0, s = 0;
        bool ok = CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y,
                                                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &s));
        ws = s > ws ? s : ws;
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w,
                                                                           CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &s));
        ws = s > ws ? s : ws;
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                                         CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, &s));
        ws = s > ws ? s : ws;
        void *work = ws ? tbuf_alloc(ws) : NULL;
        const float one = 1, zero = 0;
        if (ok && CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work, ws, &zero,
                                                   d.y, py)))
            tvalues_check(t, py, y, ny, tol, "darknet half forward");
        if (ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, d.x, px, d.y, pdy, d.conv,
                                                          CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, work, ws, &one, d.w,
                                                          pdw)))
            tvalues_check(t, pdw, dw, nw, tol, "darknet half weight updates (beta 1)");
        if (ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, d.w, pw, d.y, pdy, d.conv,
                                                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, work, ws, &zero, d.x, pdx)))
            tvalues_check(t, pdx, dx, nx, tol, "darknet half delta");
        tbuf_free(work);
        cdescs_destroy(&d);
        void *bufs[] = {px, pw, pdy, pdw, py, pdx};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        free(x), free(w), free(dy), free(dw0), free(y), free(dx), free(dw);
    }
}

/* darknet's float path with cuDNN 8 (cudnn_convolutional_setup): each direction's *_v7 asked
   for MaxCount results; the one taken is SUCCESS, not WINOGRAD_NONFUSED (forward), its memory
   within the limit and its time the least. The "cudnn_smallest" preference sets the limit to 0:
   every direction must offer a SUCCESS result needing no workspace, which then runs without
   one. The backward passes accumulate (beta 1) into dx and dw as darknet's do. */
TEST(compat_conv_darknet_v7_choice_without_workspace)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 6, .k = 4, .groups = 2, .in = {7, 6}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {2, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *dy = tview_random(ny, -1, 1);
    double *dx0 = tview_random(nx, -1, 1), *dw0 = tview_random(nw, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)ny), *dx = malloc(sizeof(double) * (size_t)nx);
    double *dw = malloc(sizeof(double) * (size_t)nw);
    void *px = tvalues_upload(t, x, nx), *pw = tvalues_upload(t, w, nw), *pdy = tvalues_upload(t, dy, ny);
    void *pdx = tvalues_upload(t, dx0, nx), *pdw = tvalues_upload(t, dw0, nw), *py = tbuf_alloc(4 * (size_t)ny);
    ref_conv_fwd(&rc, x, w, y);
    ref_conv_bwd_data(&rc, dy, w, dx);
    ref_conv_bwd_filter(&rc, x, dy, dw);
    for (long i = 0; i < nx; i++) dx[i] += dx0[i];
    for (long i = 0; i < nw; i++) dw[i] += dw0[i];
    struct cdescs d;
    cdescs_init(&d, &rc, t, CUDNN_TENSOR_OP_MATH);
    const float one = 1, zero = 0;
    int req = 0, got = 0, best = -1;
    float least = 1e6f;

    cudnnConvolutionFwdAlgoPerf_t fp[100];
    CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &req));
    if (CHECK(req > 0 && req <= 100) && CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, req,
                                                                                        &got, fp)))
        for (int i = 0; i < got; i++)
            if (fp[i].status == CUDNN_STATUS_SUCCESS && fp[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED &&
                fp[i].memory <= 0 && fp[i].time < least)
                best = i, least = fp[i].time;
    if (CHECK(best >= 0)) {
        CHECK_OK(cudnnSetConvolutionMathType(d.conv, fp[best].mathType));
        if (CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, fp[best].algo, NULL, 0, &zero, d.y, py)))
            tvalues_check(t, py, y, ny, tconv_tolerance(t, t, fp[best].mathType), "forward without workspace");
    }

    cudnnConvolutionBwdDataAlgoPerf_t dp[100];
    best = -1, least = 1e6f;
    CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &req));
    if (CHECK(req > 0 && req <= 100) &&
        CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, req, &got, dp)))
        for (int i = 0; i < got; i++)
            if (dp[i].status == CUDNN_STATUS_SUCCESS && dp[i].memory <= 0 && dp[i].time < least)
                best = i, least = dp[i].time;
    if (CHECK(best >= 0)) {
        CHECK_OK(cudnnSetConvolutionMathType(d.conv, dp[best].mathType));
        if (CHECK_OK(cudnnConvolutionBackwardData(h, &one, d.w, pw, d.y, pdy, d.conv, dp[best].algo, NULL, 0, &one,
                                                  d.x, pdx)))
            tvalues_check(t, pdx, dx, nx, tconv_tolerance(t, t, dp[best].mathType), "backward data, beta 1");
    }

    cudnnConvolutionBwdFilterAlgoPerf_t wp[100];
    best = -1, least = 1e6f;
    CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &req));
    if (CHECK(req > 0 && req <= 100) &&
        CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, req, &got, wp)))
        for (int i = 0; i < got; i++)
            if (wp[i].status == CUDNN_STATUS_SUCCESS && wp[i].memory <= 0 && wp[i].time < least)
                best = i, least = wp[i].time;
    if (CHECK(best >= 0)) {
        CHECK_OK(cudnnSetConvolutionMathType(d.conv, wp[best].mathType));
        if (CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, d.x, px, d.y, pdy, d.conv, wp[best].algo, NULL, 0, &one,
                                                    d.w, pdw)))
            tvalues_check(t, pdw, dw, nw, tconv_tolerance(t, t, wp[best].mathType), "backward filter, beta 1");
    }
    cdescs_destroy(&d);
    void *bufs[] = {px, pw, pdy, pdx, pdw, py};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(x), free(w), free(dy), free(dx0), free(dw0), free(y), free(dx), free(dw);
}

/* darknet's batch norm after a half convolution: cudnnBatchNormalizationForwardTraining in
   SPATIAL mode on half x and y with float 1 x C x 1 x 1 parameters, factor .01, epsilon 1e-5,
   the running averages and the saved statistics given; cudnnBatchNormalizationBackward with
   alphaDataDiff 1, betaDataDiff 0, alphaParamDiff 1 and betaParamDiff 1 (the scale and bias
   gradients added to the updates kept from before), the saved statistics of the forward. */
TEST(compat_bn_darknet_half_accumulated_updates)
{
    const int d[4] = {3, 4, 3, 5}, pd[4] = {1, 4, 1, 1};
    const int64_t c = d[1];
    const double eps = 1e-5, factor = .01;
    cudnnHandle_t h = test_handle();
    struct tview x, p;
    tview_init(&x, CUDNN_DATA_HALF, 4, d, TV_NCHW);
    tview_init(&p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
    struct ref_bn_shape sh = {d[0], c, d[2] * d[3], false};
    double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
    double *scale = tview_random(c, 0.5, 1.5), *bias = tview_random(c, -0.5, 0.5);
    double *rmean = tview_random(c, -1, 1), *rvar = tview_random(c, 0.5, 2);
    double *ds0 = tview_random(c, -1, 1), *db0 = tview_random(c, -1, 1);
    double *mean = malloc(sizeof(double) * (size_t)c), *var = malloc(sizeof(double) * (size_t)c);
    double *y = malloc(sizeof(double) * (size_t)x.count), *dx = malloc(sizeof(double) * (size_t)x.count);
    double *ds = malloc(sizeof(double) * (size_t)c), *db = malloc(sizeof(double) * (size_t)c);
    double *want_rm = malloc(sizeof(double) * (size_t)c), *want_rv = malloc(sizeof(double) * (size_t)c);
    double *invstd = malloc(sizeof(double) * (size_t)c);
    void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
    void *pdx = tview_upload(&x, NULL), *ps = tview_upload(&p, scale), *pb = tview_upload(&p, bias);
    void *prm = tview_upload(&p, rmean), *prv = tview_upload(&p, rvar), *psm = tview_upload(&p, NULL);
    void *psv = tview_upload(&p, NULL), *pds = tview_upload(&p, ds0), *pdb = tview_upload(&p, db0);
    ref_bn_stats(&sh, xv, mean, var);
    ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
    const double m = (double)ref_bn_reduced(&sh);
    for (int64_t i = 0; i < c; i++) {
        want_rm[i] = (1 - factor) * rmean[i] + factor * mean[i];
        want_rv[i] = (1 - factor) * rvar[i] + factor * var[i] * m / (m - 1);
        invstd[i] = 1 / sqrt(var[i] + eps);
    }
    double *dpre = malloc(sizeof(double) * (size_t)x.count);
    ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, scale, mean, var, eps, dpre, dx, ds, db);
    free(dpre);
    for (int64_t i = 0; i < c; i++) ds[i] += ds0[i], db[i] += db0[i];
    const float one = 1, zero = 0;
    if (CHECK_OK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x.desc, px, x.desc, py,
                                                        p.desc, ps, pb, factor, prm, prv, eps, psm, psv))) {
        tview_check(&x, py, y, "half y");
        tview_check(&p, prm, want_rm, "running mean");
        tview_check(&p, prv, want_rv, "running variance (unbiased)");
        tview_check(&p, psm, mean, "saved mean");
        tview_check(&p, psv, invstd, "saved inverse deviation");
        if (CHECK_OK(cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &one, x.desc, px,
                                                     x.desc, pdy, x.desc, pdx, p.desc, ps, pds, pdb, eps, psm, psv))) {
            tview_check(&x, pdx, dx, "half dx");
            tview_check(&p, pds, ds, "scale updates (betaParamDiff 1)");
            tview_check(&p, pdb, db, "bias updates (betaParamDiff 1)");
        }
    }
    void *xb[] = {px, pdy, py, pdx}, *pbufs[] = {ps, pb, prm, prv, psm, psv, pds, pdb};
    for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
    for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
    double *hv[] = {xv, dyv, scale, bias, rmean, rvar, ds0, db0, mean, var, y, dx, ds, db, want_rm, want_rv, invstd};
    for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
    tview_destroy(&x);
    tview_destroy(&p);
}

/* ONNX Runtime's InstanceNormalization (onnxruntime/core/providers/cuda/nn/instance_norm.cc)
   for N > 1: x viewed as 1 x NC x HW x 1, the per-instance statistics taken from the running
   averages of cudnnBatchNormalizationForwardTraining (SPATIAL, factor 1, both zeroed first,
   epsilon CUDNN_BN_MIN_EPSILON, scale and bias zero, y written and discarded), the variance
   unbiased as cuDNN keeps it; half data with float statistics too. For N == 1 the 3-D input
   padded to 4-D and the parameters' descriptor from cudnnDeriveBNTensorDescriptor. */
TEST(compat_bn_onnxruntime_instance_norm_running_stats)
{
    static const struct { cudnnDataType_t t; int n, c, hw; } cases[] = {
        {CUDNN_DATA_FLOAT, 3, 2, 10}, {CUDNN_DATA_HALF, 2, 3, 7}, {CUDNN_DATA_DOUBLE, 2, 2, 6}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t, st = t == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : t;
        const int nc = cases[k].n * cases[k].c, hw = cases[k].hw;
        const int d[4] = {1, nc, hw, 1}, pd[4] = {1, nc, 1, 1};
        struct tview x, p;
        tview_init(&x, t, 4, d, TV_NCHW);
        tview_init(&p, st, 4, pd, TV_NCHW);
        struct ref_bn_shape sh = {1, nc, hw, false};
        double *xv = tview_random(x.count, -2, 2), *zeros = tview_fill(nc, 0);
        double *mean = malloc(sizeof(double) * (size_t)nc), *var = malloc(sizeof(double) * (size_t)nc);
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *pz = tview_upload(&p, zeros);
        void *prm = tview_upload(&p, zeros), *prv = tview_upload(&p, zeros);
        ref_bn_stats(&sh, xv, mean, var);
        for (int i = 0; i < nc; i++) var[i] *= (double)hw / (hw - 1);
        struct tscale one, zero;
        if (CHECK_OK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, tscale(&one, t, 1),
                                                            tscale(&zero, t, 0), x.desc, px, x.desc, py, p.desc, pz, pz,
                                                            1.0, prm, prv, CUDNN_BN_MIN_EPSILON, NULL, NULL))) {
            tview_check(&p, prm, mean, "per-instance mean");
            tview_check(&p, prv, var, "per-instance unbiased variance");
        }
        void *pbufs[] = {pz, prm, prv};
        tview_free(&x, px), tview_free(&x, py);
        for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
        free(xv), free(zeros), free(mean), free(var);
        tview_destroy(&x);
        tview_destroy(&p);
    }

    /* N == 1: {1, C, L} padded to {1, C, L, 1}, the statistics' descriptor derived (float for half) */
    const int d[4] = {1, 3, 9, 1};
    struct tview x;
    tview_init(&x, CUDNN_DATA_HALF, 4, d, TV_NCHW);
    cudnnTensorDescriptor_t sd;
    CHECK_OK(cudnnCreateTensorDescriptor(&sd));
    cudnnDataType_t dt;
    int sn, sc, shh, sw, s0, s1, s2, s3;
    if (CHECK_OK(cudnnDeriveBNTensorDescriptor(sd, x.desc, CUDNN_BATCHNORM_SPATIAL)) &&
        CHECK_OK(cudnnGetTensor4dDescriptor(sd, &dt, &sn, &sc, &shh, &sw, &s0, &s1, &s2, &s3)) &&
        CHECK(dt == CUDNN_DATA_FLOAT && sn == 1 && sc == 3 && shh == 1 && sw == 1)) {
        struct ref_bn_shape sh = {1, 3, 9, false};
        double *xv = tview_random(x.count, -2, 2), *scale = tview_random(3, 0.5, 1.5), *bias = tview_random(3, -1, 1);
        double *mean = malloc(sizeof(double) * 3), *var = malloc(sizeof(double) * 3);
        double *y = malloc(sizeof(double) * (size_t)x.count);
        float sf[3], bf[3];
        for (int i = 0; i < 3; i++) sf[i] = (float)scale[i], bf[i] = (float)bias[i], scale[i] = sf[i], bias[i] = bf[i];
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL);
        void *ps = tbuf_from(sf, sizeof sf), *pb = tbuf_from(bf, sizeof bf);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, 1e-5, -1, 0, NULL, y);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x.desc, px, x.desc,
                                                            py, sd, ps, pb, 1.0, NULL, NULL, 1e-5, NULL, NULL)))
            tview_check(&x, py, y, "instance norm of one image");
        tview_free(&x, px), tview_free(&x, py), tbuf_free(ps), tbuf_free(pb);
        free(xv), free(scale), free(bias), free(mean), free(var), free(y);
    }
    cudnnDestroyTensorDescriptor(sd);
    tview_destroy(&x);
}

/* CuPy's DropoutStates (cupy/cudnn.pyx): the states initialised once through a descriptor set
   with probability 0, then before each forward and backward the descriptor re-set with the
   ratio and states NULL, 0 bytes, seed 0 ("random state is not updated"); x viewed as
   N x (size / N) x 1 x 1, the reserve sized by cudnnDropoutGetReserveSpaceSize. */
TEST(compat_dropout_cupy_reset_without_states)
{
    cudnnHandle_t h = test_handle();
    const int d[4] = {4, 50, 1, 1};
    const float ratio = 0.3f;
    struct tview x;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
    size_t state_bytes = 0, reserve_bytes = 0;
    cudnnDropoutDescriptor_t dd;
    CHECK_OK(cudnnCreateDropoutDescriptor(&dd));
    CHECK_OK(cudnnDropoutGetStatesSize(h, &state_bytes));
    void *states = tbuf_alloc(state_bytes);
    CHECK_OK(cudnnSetDropoutDescriptor(dd, h, 0.f, states, state_bytes, 7));
    double *xv = tview_random(x.count, 1, 2), *dyv = tview_random(x.count, 1, 2);
    double *y = malloc(sizeof(double) * (size_t)x.count), *dx = malloc(sizeof(double) * (size_t)x.count);
    void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
    void *pdx = tview_upload(&x, NULL);
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(x.desc, &reserve_bytes));
    void *reserve = tbuf_alloc(reserve_bytes);
    bool ok = CHECK_OK(cudnnSetDropoutDescriptor(dd, h, ratio, NULL, 0, 0)) &&
              CHECK_OK(cudnnDropoutForward(h, dd, x.desc, px, x.desc, py, reserve, reserve_bytes)) &&
              CHECK_OK(cudnnSetDropoutDescriptor(dd, h, ratio, NULL, 0, 0)) &&
              CHECK_OK(cudnnDropoutBackward(h, dd, x.desc, pdy, x.desc, pdx, reserve, reserve_bytes));
    if (ok) {
        tview_download(&x, py, y);
        tview_download(&x, pdx, dx);
        int dropped = 0;
        for (int64_t i = 0; i < x.count && ok; i++) {
            bool kept = y[i] != 0;
            dropped += !kept;
            double want_y = kept ? xv[i] / (1 - ratio) : 0, want_dx = kept ? dyv[i] / (1 - ratio) : 0;
            ok = CHECK(fabs(y[i] - want_y) <= 1e-5 * fabs(want_y)) && CHECK(fabs(dx[i] - want_dx) <= 1e-5 * fabs(want_dx));
        }
        CHECK(dropped > 20 && dropped < 100); /* 60 expected of 200 */
        float p = -1;
        void *st = NULL;
        unsigned long long seed = 0;
        CHECK_OK(cudnnGetDropoutDescriptor(dd, h, &p, &st, &seed));
        CHECK(p == ratio && st == states);
    }
    tbuf_free(reserve), tbuf_free(states);
    void *bufs[] = {px, pdy, py, pdx};
    for (size_t i = 0; i < TLEN(bufs); i++) tview_free(&x, bufs[i]);
    free(xv), free(dyv), free(y), free(dx);
    cudnnDestroyDropoutDescriptor(dd);
    tview_destroy(&x);
}

/* CuPy's non-autotuned algorithm choice (cupy/cudnn.pyx, _get_algorithm_fwd and the backward
   ones): *_v7 asked for 10 results and the FIRST whose memory fits the 8 MiB limit taken,
   its status never read; then the math type set from it, a workspace of its memory, and the
   call. So the results must list every SUCCESS before any failure. The autotuned one:
   cudnnFind*AlgorithmEx asked for 1 result, into the real output. */
TEST(compat_conv_cupy_first_fitting_result)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 1, .in = {5, 6}, .filt = {3, 2},
                          .pad = {1, 0}, .stride = {1, 1}, .dil = {2, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    const size_t limit = 8u << 20;
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *dy = tview_random(ny, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)ny), *dx = malloc(sizeof(double) * (size_t)nx);
    double *dw = malloc(sizeof(double) * (size_t)nw);
    void *px = tvalues_upload(t, x, nx), *pw = tvalues_upload(t, w, nw), *pdy = tvalues_upload(t, dy, ny);
    void *py = tbuf_alloc(4 * (size_t)ny), *pdx = tbuf_alloc(4 * (size_t)nx), *pdw = tbuf_alloc(4 * (size_t)nw);
    ref_conv_fwd(&rc, x, w, y);
    ref_conv_bwd_data(&rc, dy, w, dx);
    ref_conv_bwd_filter(&rc, x, dy, dw);
    struct cdescs d;
    cdescs_init(&d, &rc, t, CUDNN_DEFAULT_MATH);
    const float one = 1, zero = 0;
    int got = 0, i;

    cudnnConvolutionFwdAlgoPerf_t fp[10];
    if (CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, 10, &got, fp))) {
        for (i = 0; i < got && fp[i].memory > limit; i++) continue;
        if (CHECK(i < got) && CHECK_OK(cudnnSetConvolutionMathType(d.conv, fp[i].mathType))) {
            void *work = fp[i].memory ? tbuf_alloc(fp[i].memory) : NULL;
            if (CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, fp[i].algo, work, fp[i].memory,
                                                 &zero, d.y, py)))
                tvalues_check(t, py, y, ny, tconv_tolerance(t, t, fp[i].mathType), "first fitting forward");
            tbuf_free(work);
        }
    }
    cudnnConvolutionBwdDataAlgoPerf_t dp[10];
    if (CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, 10, &got, dp))) {
        for (i = 0; i < got && dp[i].memory > limit; i++) continue;
        if (CHECK(i < got) && CHECK_OK(cudnnSetConvolutionMathType(d.conv, dp[i].mathType))) {
            void *work = dp[i].memory ? tbuf_alloc(dp[i].memory) : NULL;
            if (CHECK_OK(cudnnConvolutionBackwardData(h, &one, d.w, pw, d.y, pdy, d.conv, dp[i].algo, work,
                                                      dp[i].memory, &zero, d.x, pdx)))
                tvalues_check(t, pdx, dx, nx, tconv_tolerance(t, t, dp[i].mathType), "first fitting backward data");
            tbuf_free(work);
        }
    }
    cudnnConvolutionBwdFilterAlgoPerf_t wp[10];
    if (CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, 10, &got, wp))) {
        for (i = 0; i < got && wp[i].memory > limit; i++) continue;
        if (CHECK(i < got) && CHECK_OK(cudnnSetConvolutionMathType(d.conv, wp[i].mathType))) {
            void *work = wp[i].memory ? tbuf_alloc(wp[i].memory) : NULL;
            if (CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, d.x, px, d.y, pdy, d.conv, wp[i].algo, work,
                                                        wp[i].memory, &zero, d.w, pdw)))
                tvalues_check(t, pdw, dw, nw, tconv_tolerance(t, t, wp[i].mathType), "first fitting backward filter");
            tbuf_free(work);
        }
    }
    /* autotuned: FindEx for one result with an 8 MiB workspace, into y itself */
    CHECK_OK(cudnnSetConvolutionMathType(d.conv, CUDNN_DEFAULT_MATH));
    void *work = tbuf_alloc(limit);
    if (CHECK_OK(cudnnFindConvolutionForwardAlgorithmEx(h, d.x, px, d.w, pw, d.conv, d.y, py, 1, &got, fp, work,
                                                        limit)) &&
        CHECK(got == 1 && fp[0].status == CUDNN_STATUS_SUCCESS && fp[0].memory <= limit) &&
        CHECK_OK(cudnnSetConvolutionMathType(d.conv, fp[0].mathType))) {
        tbuf_poison(py, 4 * (size_t)ny);
        if (CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, fp[0].algo, work, fp[0].memory, &zero,
                                             d.y, py)))
            tvalues_check(t, py, y, ny, tconv_tolerance(t, t, fp[0].mathType), "found forward");
    }
    tbuf_free(work);
    cdescs_destroy(&d);
    void *bufs[] = {px, pw, pdy, py, pdx, pdw};
    for (size_t k = 0; k < TLEN(bufs); k++) tbuf_free(bufs[k]);
    free(x), free(w), free(dy), free(y), free(dx), free(dw);
}

/* MXNet's 1-D convolution (src/operator/nn/cudnn/cudnn_convolution-inl.h): NCW data run as NCHW
   with H = 1, the dummy dim given the channel stride ({C W, W, W, 1}; NWC: {W C, 1, 1, C}),
   cudnnSetTensorNdDescriptor for x and y, a 2-D descriptor with pad 0, stride 1, dilation 1 on
   H, TENSOR_OP_MATH_ALLOW_CONVERSION on float data, groups; the bias 1 x K x 1 x 1 with strides
   {K, 1, 1, 1} added by cudnnAddTensor (beta 1) and its gradient by
   cudnnConvolutionBackwardBias. */
TEST(compat_conv_mxnet_1d_as_2d_shared_strides)
{
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    for (int nwc = 0; nwc < 2; nwc++) {
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 2, .in = {1, 9}, .filt = {1, 3},
                              .pad = {0, 1}, .stride = {1, 2}, .dil = {1, 1}};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        const int c = rc.c, k = rc.k, W = rc.in[1], Wo = rc.out[1];
        const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
        double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *b = tview_random(k, -1, 1);
        double *dy = tview_random(ny, -1, 1), *y = malloc(sizeof(double) * (size_t)ny);
        double *db = calloc((size_t)k, sizeof(double));
        /* the buffers in the program's layout: NCW or NWC */
        const int xdims[4] = {rc.n, c, 1, W}, ydims[4] = {rc.n, k, 1, Wo};
        int xs[4], ys[4];
        if (nwc) {
            int a[4] = {W * c, 1, 1, c}, o[4] = {Wo * k, 1, 1, k};
            memcpy(xs, a, sizeof a), memcpy(ys, o, sizeof o);
        } else {
            int a[4] = {c * W, W, W, 1}, o[4] = {k * Wo, Wo, Wo, 1};
            memcpy(xs, a, sizeof a), memcpy(ys, o, sizeof o);
        }
        float *xf = malloc(sizeof(float) * (size_t)nx), *dyf = malloc(sizeof(float) * (size_t)ny);
        for (int n = 0; n < rc.n; n++)
            for (int ch = 0; ch < c; ch++)
                for (int i = 0; i < W; i++) {
                    xf[n * xs[0] + ch * xs[1] + i * xs[3]] = (float)x[(n * c + ch) * W + i];
                    x[(n * c + ch) * W + i] = xf[n * xs[0] + ch * xs[1] + i * xs[3]];
                }
        for (int n = 0; n < rc.n; n++)
            for (int ch = 0; ch < k; ch++)
                for (int i = 0; i < Wo; i++) {
                    dyf[n * ys[0] + ch * ys[1] + i * ys[3]] = (float)dy[(n * k + ch) * Wo + i];
                    dy[(n * k + ch) * Wo + i] = dyf[n * ys[0] + ch * ys[1] + i * ys[3]];
                }
        for (long i = 0; i < nw; i++) w[i] = (float)w[i];
        for (int i = 0; i < k; i++) b[i] = (float)b[i];
        ref_conv_fwd(&rc, x, w, y);
        for (long i = 0; i < ny; i++) y[i] += b[(i / Wo) % k], db[(i / Wo) % k] += dy[i];
        cudnnTensorDescriptor_t xd, yd, bd;
        cudnnFilterDescriptor_t fd;
        cudnnConvolutionDescriptor_t cd;
        tconv_descs_create(&xd, &yd, &bd, &fd, &cd);
        const int bdims[4] = {1, k, 1, 1}, bstr[4] = {k, 1, 1, 1};
        bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(xd, t, 4, xdims, xs)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptor(yd, t, 4, ydims, ys)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptor(bd, t, 4, bdims, bstr)) &&
                  CHECK_OK(cudnnSetFilter4dDescriptor(fd, t, nwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, k,
                                                      c / rc.groups, 1, 3)) &&
                  CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 0, 1, 1, 2, 1, 1, CUDNN_CROSS_CORRELATION, t)) &&
                  CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)) &&
                  CHECK_OK(cudnnSetConvolutionGroupCount(cd, rc.groups));
        /* the filter in the program's layout: K C R S or K R S C (R = 1) */
        float *wf = malloc(sizeof(float) * (size_t)nw);
        const int cg = c / rc.groups;
        for (int o = 0; o < k; o++)
            for (int ch = 0; ch < cg; ch++)
                for (int s = 0; s < 3; s++) {
                    long at = nwc ? (o * 3 + s) * cg + ch : (o * cg + ch) * 3 + s;
                    wf[at] = (float)w[(o * cg + ch) * 3 + s];
                }
        float *bf = malloc(sizeof(float) * (size_t)k);
        for (int i = 0; i < k; i++) bf[i] = (float)b[i];
        void *px = tbuf_from(xf, sizeof(float) * (size_t)nx), *pw = tbuf_from(wf, sizeof(float) * (size_t)nw);
        void *pb = tbuf_from(bf, sizeof(float) * (size_t)k), *pdy = tbuf_from(dyf, sizeof(float) * (size_t)ny);
        void *py = tbuf_alloc(sizeof(float) * (size_t)ny), *pdb = tbuf_alloc(sizeof(float) * (size_t)k);
        int got = 0;
        cudnnConvolutionFwdAlgoPerf_t fp[8];
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, fd, cd, yd, 8, &got, fp)) &&
             CHECK(got > 0 && fp[0].status == CUDNN_STATUS_SUCCESS);
        const float one = 1, zero = 0;
        if (ok) {
            void *work = fp[0].memory ? tbuf_alloc(fp[0].memory) : NULL;
            ok = CHECK_OK(cudnnConvolutionForward(h, &one, xd, px, fd, pw, cd, fp[0].algo, work, fp[0].memory, &zero,
                                                  yd, py)) &&
                 CHECK_OK(cudnnAddTensor(h, &one, bd, pb, &one, yd, py)) &&
                 CHECK_OK(cudnnConvolutionBackwardBias(h, &one, yd, pdy, &zero, bd, pdb));
            tbuf_free(work);
        }
        if (ok) {
            float *yf = malloc(sizeof(float) * (size_t)ny);
            double *yl = malloc(sizeof(double) * (size_t)ny);
            tbuf_download(yf, py, sizeof(float) * (size_t)ny);
            for (int n = 0; n < rc.n; n++)
                for (int ch = 0; ch < k; ch++)
                    for (int i = 0; i < Wo; i++) yl[(n * k + ch) * Wo + i] = yf[n * ys[0] + ch * ys[1] + i * ys[3]];
            CHECK(tcompare(CUDNN_DATA_DOUBLE, yl, y, ny, tconv_tolerance(t, t, fp[0].mathType),
                           nwc ? "NWC 1-D convolution plus bias" : "NCW 1-D convolution plus bias"));
            tvalues_check(t, pdb, db, k, 1e-5, "bias gradient");
            free(yf), free(yl);
        }
        void *bufs[] = {px, pw, pb, pdy, py, pdb};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        tconv_descs_destroy(xd, yd, bd, fd, cd);
        free(x), free(w), free(b), free(dy), free(y), free(db), free(xf), free(dyf), free(wf), free(bf);
    }
}

/* TVM (src/runtime/contrib/cudnn/cudnn_utils.cc, SetConvDescriptors): cudnnSetConvolutionGroupCount
   on the reused descriptor BEFORE cudnnSetConvolution2dDescriptor (which must keep it), NHWC
   tensors and filter from cudnnSetTensor4dDescriptor / cudnnSetFilter4dDescriptor with the
   format, half data with a float convolution, TENSOR_OP_MATH set after; the workspace of the
   algorithm the program picked (IMPLICIT_PRECOMP_GEMM here) queried and allocated. */
TEST(compat_conv_tvm_group_count_before_descriptor)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 6, .k = 4, .groups = 2, .in = {5, 6}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    const int cg = rc.c / rc.groups, H = rc.in[0], W = rc.in[1], Ho = rc.out[0], Wo = rc.out[1];
    const int xd[4] = {rc.n, rc.c, H, W}, yd[4] = {rc.n, rc.k, Ho, Wo}, wd[4] = {rc.k, cg, 3, 3};
    struct tview x, y, w;
    tview_init(&x, t, 4, xd, TV_NHWC);
    tview_init(&y, t, 4, yd, TV_NHWC);
    tview_init(&w, t, 4, wd, TV_NHWC);
    double *xv = tview_random(x.count, -1, 1), *wv = tview_random(w.count, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)y.count);
    void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *py = tview_upload(&y, NULL);
    ref_conv_fwd(&rc, xv, wv, want);
    cudnnTensorDescriptor_t xdesc, ydesc;
    cudnnFilterDescriptor_t fdesc;
    cudnnConvolutionDescriptor_t cd;
    tconv_descs_create(&xdesc, &ydesc, NULL, &fdesc, &cd);
    bool ok = CHECK_OK(cudnnSetConvolutionGroupCount(cd, rc.groups)) &&
              CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(xdesc, CUDNN_TENSOR_NHWC, t, rc.n, rc.c, H, W)) &&
              CHECK_OK(cudnnSetFilter4dDescriptor(fdesc, t, CUDNN_TENSOR_NHWC, rc.k, cg, 3, 3)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(ydesc, CUDNN_TENSOR_NHWC, t, rc.n, rc.k, Ho, Wo)) &&
              CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
    int groups = 0;
    ok = ok && CHECK_OK(cudnnGetConvolutionGroupCount(cd, &groups)) && CHECK(groups == rc.groups);
    size_t ws = 0;
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    ok = ok && CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, fdesc, cd, ydesc, algo, &ws));
    if (ok) {
        void *work = ws ? tbuf_alloc(ws) : NULL;
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnConvolutionForward(h, &one, xdesc, px, fdesc, pw, cd, algo, work, ws, &zero, ydesc, py))) {
            double *got = malloc(sizeof(double) * (size_t)y.count);
            tview_download(&y, py, got);
            CHECK(tcompare(CUDNN_DATA_DOUBLE, got, want, y.count, tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH),
                           "grouped NHWC half convolution"));
            free(got);
        }
        tbuf_free(work);
    }
    tconv_descs_destroy(xdesc, ydesc, NULL, fdesc, cd);
    tview_free(&x, px), tview_free(&w, pw), tview_free(&y, py);
    free(xv), free(wv), free(want);
    tview_destroy(&x);
    tview_destroy(&y);
    tview_destroy(&w);
}

/* TVM's softmax and log_softmax (src/runtime/contrib/cudnn/softmax.cc): over a middle axis the
   tensor is described as pre x axis x post x 1 in CHANNEL mode, over the last as N x C x 1 x 1
   in INSTANCE mode; CUDNN_SOFTMAX_LOG for log_softmax, ACCURATE for softmax. */
TEST(compat_softmax_tvm_axis_views)
{
    static const struct { int pre, axis, post; cudnnSoftmaxMode_t mode; cudnnSoftmaxAlgorithm_t algo; } cases[] = {
        {6, 5, 7, CUDNN_SOFTMAX_MODE_CHANNEL, CUDNN_SOFTMAX_LOG},
        {6, 5, 7, CUDNN_SOFTMAX_MODE_CHANNEL, CUDNN_SOFTMAX_ACCURATE},
        {12, 9, 1, CUDNN_SOFTMAX_MODE_INSTANCE, CUDNN_SOFTMAX_LOG},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int d[4] = {cases[k].pre, cases[k].axis, cases[k].post, 1};
        struct tview x;
        tview_init(&x, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
        double *xv = tview_random(x.count, -4, 4), *want = malloc(sizeof(double) * (size_t)x.count);
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL);
        ref_softmax_forward(cases[k].algo, cases[k].mode, 4, d, xv, want);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnSoftmaxForward(h, cases[k].algo, cases[k].mode, &one, x.desc, px, &zero, x.desc, py)))
            tview_check(&x, py, want, cases[k].algo == CUDNN_SOFTMAX_LOG ? "log_softmax" : "softmax");
        tview_free(&x, px), tview_free(&x, py);
        free(xv), free(want);
        tview_destroy(&x);
    }
}

/* ONNX Runtime's pooling (onnxruntime/core/providers/cuda/nn/pool.cc): cudnnSetPoolingNdDescriptor
   with CUDNN_PROPAGATE_NAN and the begin pads only; a 1-D pooling padded to 2-D (x and y get a
   trailing dim of 1, window 1, pad 0, stride 1 added); ceil_mode: y one element longer than
   the floor formula gives, its last window reaching past the padded input (MAX over what it
   covers); GlobalAveragePool: the window the whole image. */
TEST(compat_pooling_onnxruntime_ceil_and_1d)
{
    static const struct { cudnnPoolingMode_t mode; int in, win, pad, stride, out; } cases[] = {
        {CUDNN_POOLING_MAX, 10, 3, 0, 2, 5},                          /* floor gives 4 */
        {CUDNN_POOLING_MAX, 9, 2, 1, 3, 4},                           /* floor gives 3 */
        {CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, 11, 3, 1, 2, 6}, /* floor gives 6: exact */
        {CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, 11, 11, 0, 1, 1}, /* global average */
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int n = 2, c = 3, in[2] = {cases[k].in, 1}, out[2] = {cases[k].out, 1};
        const int xd[4] = {n, c, in[0], 1}, yd[4] = {n, c, out[0], 1};
        struct tview x, y;
        tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
        tview_init(&y, CUDNN_DATA_FLOAT, 4, yd, TV_NCHW);
        double *xv = tview_random(x.count, -2, 2), *want = malloc(sizeof(double) * (size_t)y.count);
        void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL);
        struct ref_pool rp = {.mode = cases[k].mode, .propagate = true, .nb = 2, .window = {cases[k].win, 1},
                              .pad = {cases[k].pad, 0}, .stride = {cases[k].stride, 1}};
        ref_pooling_forward(&rp, n, c, in, out, xv, want);
        const int win[2] = {cases[k].win, 1}, pad[2] = {cases[k].pad, 0}, str[2] = {cases[k].stride, 1};
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnSetPoolingNdDescriptor(pd, cases[k].mode, CUDNN_PROPAGATE_NAN, 2, win, pad, str)) &&
            CHECK_OK(cudnnPoolingForward(h, pd, &one, x.desc, px, &zero, y.desc, py)))
            tview_check(&y, py, want, "ONNX Runtime pooling");
        cudnnDestroyPoolingDescriptor(pd);
        tview_free(&x, px), tview_free(&y, py);
        free(xv), free(want);
        tview_destroy(&x);
        tview_destroy(&y);
    }
}

/* Average pooling counting the padding when y is longer than the floor formula (ceil mode), so
   that the last windows hang over the padding's end. ONNX Runtime passed such calls to cuDNN
   (pool.cc, begin pads only, ceil_mode) and its pull request 29631 quotes what NVIDIA's library
   returned: x = 1 .. 9, window 7, stride 3, pad 0, three outputs, CUDNN_POOLING_AVERAGE_COUNT_
   INCLUDE_PADDING gives 4, 6.5, 8: each window divides by its taps inside the padded input, not
   by 7. Caffe's average pooling (CuDNNPoolingLayer, y by Caffe's ceil formula) makes the same
   call in 2-D: 6 x 6, window 3, stride 2, pad 1 gives 4 x 4, the last row and column of windows
   counting 2 taps (rows 5 and 6, the pad) instead of 3. Forward and backward against the
   reference, which counts the same way; the 1-D values also as numbers. */
TEST(compat_pooling_include_padding_ceil_overhang)
{
    cudnnHandle_t h = test_handle();
    const float one = 1, zero = 0;
    { /* ONNX Runtime's observed case */
        const int xd[4] = {1, 1, 9, 1}, yd[4] = {1, 1, 3, 1}, win[2] = {7, 1}, pad[2] = {0, 0}, str[2] = {3, 1};
        struct tview x, y;
        tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
        tview_init(&y, CUDNN_DATA_FLOAT, 4, yd, TV_NCHW);
        double xv[9], want[3] = {4, 6.5, 8};
        for (int i = 0; i < 9; i++) xv[i] = i + 1;
        void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL);
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        if (CHECK_OK(cudnnSetPoolingNdDescriptor(pd, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_PROPAGATE_NAN,
                                                 2, win, pad, str)) &&
            CHECK_OK(cudnnPoolingForward(h, pd, &one, x.desc, px, &zero, y.desc, py)))
            tview_check(&y, py, want, "k 7 s 3 over 1..9 (NVIDIA: 4, 6.5, 8)");
        cudnnDestroyPoolingDescriptor(pd);
        tview_free(&x, px), tview_free(&y, py);
        tview_destroy(&x), tview_destroy(&y);
    }
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    for (size_t ti = 0; ti < TLEN(types); ti++) { /* Caffe's 2-D ceil-mode average */
        const int n = 2, c = 3, in[2] = {6, 6}, out[2] = {4, 4};
        const int xd[4] = {n, c, 6, 6}, yd[4] = {n, c, 4, 4};
        struct tview x, y;
        tview_init(&x, types[ti], 4, xd, TV_NCHW);
        tview_init(&y, types[ti], 4, yd, TV_NCHW);
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(y.count, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)y.count), *dxw = malloc(sizeof(double) * (size_t)x.count);
        struct ref_pool rp = {.mode = CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, .propagate = false, .nb = 2,
                              .window = {3, 3}, .pad = {1, 1}, .stride = {2, 2}};
        ref_pooling_forward(&rp, n, c, in, out, xv, want);
        ref_pooling_backward(&rp, n, c, in, out, xv, dyv, dxw);
        /* the corner window (rows and columns 5, 6) averages one input over 4 taps */
        CHECK(fabs(want[15] - xv[35] / 4) < 1e-12);
        void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL), *pdy = tview_upload(&y, dyv);
        void *pdx = tview_upload(&x, NULL);
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        bool ok = CHECK_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                                       CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 2, 2)) &&
                  CHECK_OK(cudnnPoolingForward(h, pd, &one, x.desc, px, &zero, y.desc, py)) &&
                  tview_check(&y, py, want, "Caffe ceil-mode average pooling");
        ok = ok && CHECK_OK(cudnnPoolingBackward(h, pd, &one, y.desc, py, y.desc, pdy, x.desc, px, &zero, x.desc, pdx)) &&
             tview_check(&x, pdx, dxw, "Caffe ceil-mode average pooling gradient");
        (void)ok;
        cudnnDestroyPoolingDescriptor(pd);
        tview_free(&x, px), tview_free(&y, py), tview_free(&y, pdy), tview_free(&x, pdx);
        free(xv), free(dyv), free(want), free(dxw);
        tview_destroy(&x), tview_destroy(&y);
    }
}

/* MXNet's quantized pooling on the GPU (src/operator/quantization/quantized_pooling.cu,
   QuantizedCuDNNPoolingOp): x and y int8 NCHW by cudnnSetTensor4dDescriptor(CUDNN_DATA_INT8),
   cudnnSetPooling2dDescriptor MAX or AVERAGE_COUNT_INCLUDE_PADDING with NaN not propagated, the
   window the whole image for global pooling, float alpha 1 and beta 0; MXNet's quantization tests
   run it on NVIDIA's library. y against the reference, the averages rounded to nearest even and
   saturated; with alpha 2 the maxima saturate at 127 / -128. Also channels-last int8 (any
   layout pools). */
TEST(compat_pooling_mxnet_quantized_int8)
{
    static const struct { cudnnPoolingMode_t mode; int win, pad, stride, layout; float alpha; } cases[] = {
        {CUDNN_POOLING_MAX, 3, 1, 2, TV_NCHW, 1},
        {CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, 3, 1, 2, TV_NCHW, 1},
        {CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, 7, 0, 1, TV_NCHW, 1}, /* global: 7 x 7 */
        {CUDNN_POOLING_MAX, 2, 0, 2, TV_NHWC, 2},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int n = 2, c = 3, in[2] = {7, 7};
        const int o = (7 + 2 * cases[k].pad - cases[k].win) / cases[k].stride + 1, out[2] = {o, o};
        const int xd[4] = {n, c, 7, 7}, yd[4] = {n, c, o, o};
        struct tview x, y;
        tview_init(&x, CUDNN_DATA_INT8, 4, xd, cases[k].layout);
        tview_init(&y, CUDNN_DATA_INT8, 4, yd, cases[k].layout);
        double *xv = tview_random(x.count, -128, 127), *want = malloc(sizeof(double) * (size_t)y.count);
        for (int64_t i = 0; i < x.count; i++) xv[i] = nearbyint(xv[i]);
        struct ref_pool rp = {.mode = cases[k].mode, .propagate = false, .nb = 2, .window = {cases[k].win, cases[k].win},
                              .pad = {cases[k].pad, cases[k].pad}, .stride = {cases[k].stride, cases[k].stride}};
        ref_pooling_forward(&rp, n, c, in, out, xv, want);
        for (int64_t i = 0; i < y.count; i++) { /* alpha, then rounded to nearest even and saturated */
            double v = nearbyint(want[i] * cases[k].alpha);
            want[i] = v < -128 ? -128 : v > 127 ? 127 : v;
        }
        void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL);
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        const float alpha = cases[k].alpha, zero = 0;
        if (CHECK_OK(cudnnSetPooling2dDescriptor(pd, cases[k].mode, CUDNN_NOT_PROPAGATE_NAN, cases[k].win, cases[k].win,
                                                 cases[k].pad, cases[k].pad, cases[k].stride, cases[k].stride)) &&
            CHECK_OK(cudnnPoolingForward(h, pd, &alpha, x.desc, px, &zero, y.desc, py)))
            tview_check(&y, py, want, "MXNet quantized pooling (int8)");
        cudnnDestroyPoolingDescriptor(pd);
        tview_free(&x, px), tview_free(&y, py);
        free(xv), free(want);
        tview_destroy(&x), tview_destroy(&y);
    }
}

/* ONNX Runtime's LRN (onnxruntime/core/providers/cuda/nn/lrn.cc): cudnnSetLRNDescriptor(size,
   alpha, beta, bias) from the ONNX attributes, cudnnLRNCrossChannelForward on a 4-D or 5-D
   tensor of float, double or half. */
TEST(compat_lrn_onnxruntime_5d)
{
    static const struct { cudnnDataType_t t; int rank, dims[5]; unsigned size; } cases[] = {
        {CUDNN_DATA_FLOAT, 5, {2, 7, 2, 3, 2}, 5},
        {CUDNN_DATA_HALF, 4, {2, 6, 3, 4}, 3},
        {CUDNN_DATA_DOUBLE, 5, {1, 5, 3, 2, 2}, 3},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        struct tview x;
        tview_init(&x, cases[k].t, cases[k].rank, cases[k].dims, TV_NCHW);
        const int64_t c = cases[k].dims[1], s = x.count / cases[k].dims[0] / c;
        struct ref_lrn_params q = {(int)cases[k].size, 1e-3, 0.75, 2.0};
        double *xv = tview_random(x.count, -3, 3), *want = malloc(sizeof(double) * (size_t)x.count);
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL);
        ref_lrn_forward(cases[k].dims[0], c, s, &q, xv, want);
        cudnnLRNDescriptor_t ld;
        CHECK_OK(cudnnCreateLRNDescriptor(&ld));
        struct tscale one, zero;
        if (CHECK_OK(cudnnSetLRNDescriptor(ld, cases[k].size, q.alpha, q.beta, q.k)) &&
            CHECK_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, tscale(&one, cases[k].t, 1), x.desc,
                                                 px, tscale(&zero, cases[k].t, 0), x.desc, py)))
            tview_check(&x, py, want, "ONNX Runtime LRN");
        cudnnDestroyLRNDescriptor(ld);
        tview_free(&x, px), tview_free(&x, py);
        free(xv), free(want);
        tview_destroy(&x);
    }
}

/* CUDA.jl's cudnnNormalizationForward (lib/cudnn/normalization.jl) with its defaults:
   PER_CHANNEL, CUDNN_NORM_OPS_NORM, ALGO_STANDARD, groupCnt 1, factor 0.1, epsilon 1e-5; the
   activation, z and (without running averages) the mean-variance descriptor passed as NULL
   (`something(x, C_NULL)`) to the workspace and reserve queries and to the training call, the
   running and saved statistics then all NULL; with running averages, the saved ones given and
   handed to cudnnNormalizationBackward (zDesc and dz NULL, betaParamDiff 0, the forward's
   reserve); inference with zDesc, z and the activation NULL. */
TEST(compat_normalization_cudajl_null_optionals)
{
    const int d[4] = {3, 2, 3, 4}, pd[4] = {1, 2, 1, 1};
    const int64_t c = d[1];
    const double eps = 1e-5, factor = 0.1;
    cudnnHandle_t h = test_handle();
    struct tview x, p;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
    tview_init(&p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
    struct ref_bn_shape sh = {d[0], c, d[2] * d[3], false};
    double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
    double *scale = tview_random(c, 0.5, 1.5), *bias = tview_random(c, -0.5, 0.5);
    double *rmean = tview_random(c, -1, 1), *rvar = tview_random(c, 0.5, 2);
    double *mean = malloc(sizeof(double) * 2), *var = malloc(sizeof(double) * 2), *inv = malloc(sizeof(double) * 2);
    double *want_rm = malloc(sizeof(double) * 2), *want_rv = malloc(sizeof(double) * 2);
    double *y = malloc(sizeof(double) * (size_t)x.count), *yi = malloc(sizeof(double) * (size_t)x.count);
    double *dx = malloc(sizeof(double) * (size_t)x.count), *dpre = malloc(sizeof(double) * (size_t)x.count);
    double *ds = malloc(sizeof(double) * 2), *db = malloc(sizeof(double) * 2);
    void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
    void *pdx = tview_upload(&x, NULL), *ps = tview_upload(&p, scale), *pb = tview_upload(&p, bias);
    void *prm = tview_upload(&p, rmean), *prv = tview_upload(&p, rvar), *psm = tview_upload(&p, NULL);
    void *psv = tview_upload(&p, NULL), *pds = tview_upload(&p, NULL), *pdb = tview_upload(&p, NULL);
    ref_bn_stats(&sh, xv, mean, var);
    ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
    ref_bn_forward(&sh, xv, NULL, scale, bias, rmean, rvar, eps, -1, 0, NULL, yi);
    ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, scale, mean, var, eps, dpre, dx, ds, db);
    const double m = (double)ref_bn_reduced(&sh);
    for (int64_t i = 0; i < c; i++) {
        want_rm[i] = (1 - factor) * rmean[i] + factor * mean[i];
        want_rv[i] = (1 - factor) * rvar[i] + factor * var[i] * m / (m - 1);
        inv[i] = 1 / sqrt(var[i] + eps);
    }
    const cudnnNormMode_t mode = CUDNN_NORM_PER_CHANNEL;
    const cudnnNormOps_t ops = CUDNN_NORM_OPS_NORM;
    const cudnnNormAlgo_t algo = CUDNN_NORM_ALGO_STANDARD;
    const float one = 1, zero = 0;
    for (int with_stats = 0; with_stats < 2; with_stats++) {
        cudnnTensorDescriptor_t mv = with_stats ? p.desc : NULL;
        size_t ws = 0, rs = 0;
        if (!CHECK_OK(cudnnGetNormalizationForwardTrainingWorkspaceSize(h, mode, ops, algo, x.desc, NULL, x.desc, p.desc,
                                                                         NULL, mv, &ws, 1)) ||
            !CHECK_OK(cudnnGetNormalizationTrainingReserveSpaceSize(h, mode, ops, algo, NULL, x.desc, &rs, 1)))
            break;
        void *work = ws ? tbuf_alloc(ws) : NULL, *reserve = rs ? tbuf_alloc(rs) : NULL;
        tbuf_poison(py, tview_bytes(&x));
        if (CHECK_OK(cudnnNormalizationForwardTraining(h, mode, ops, algo, &one, &zero, x.desc, px, p.desc, ps, pb, factor,
                                                       mv, with_stats ? prm : NULL, with_stats ? prv : NULL, eps,
                                                       with_stats ? psm : NULL, with_stats ? psv : NULL, NULL, NULL,
                                                       NULL, x.desc, py, work, ws, reserve, rs, 1))) {
            tview_check(&x, py, y, with_stats ? "training y" : "training y, no statistics");
            if (with_stats) {
                tview_check(&p, prm, want_rm, "running mean");
                tview_check(&p, prv, want_rv, "running variance");
                tview_check(&p, psm, mean, "saved mean");
                tview_check(&p, psv, inv, "saved inverse deviation");
                size_t bws = 0;
                if (CHECK_OK(cudnnGetNormalizationBackwardWorkspaceSize(h, mode, ops, algo, x.desc, x.desc, x.desc, NULL,
                                                                        x.desc, p.desc, NULL, p.desc, &bws, 1))) {
                    void *bwork = bws ? tbuf_alloc(bws) : NULL;
                    if (CHECK_OK(cudnnNormalizationBackward(h, mode, ops, algo, &one, &zero, &one, &zero, x.desc, px,
                                                            x.desc, py, x.desc, pdy, NULL, NULL, x.desc, pdx, p.desc, ps,
                                                            pb, pds, pdb, eps, p.desc, psm, psv, NULL, bwork, bws,
                                                            reserve, rs, 1))) {
                        tview_check(&x, pdx, dx, "dx");
                        tview_check(&p, pds, ds, "dscale");
                        tview_check(&p, pdb, db, "dbias");
                    }
                    tbuf_free(bwork);
                }
            }
        }
        tbuf_free(work);
        tbuf_free(reserve);
    }
    /* inference: the running averages as they are now */
    double *rm_now = malloc(sizeof(double) * 2), *rv_now = malloc(sizeof(double) * 2);
    tview_download(&p, prm, rm_now);
    tview_download(&p, prv, rv_now);
    ref_bn_forward(&sh, xv, NULL, scale, bias, rm_now, rv_now, eps, -1, 0, NULL, yi);
    if (CHECK_OK(cudnnNormalizationForwardInference(h, mode, ops, algo, &one, &zero, x.desc, px, p.desc, ps, pb, p.desc,
                                                    prm, prv, NULL, NULL, NULL, x.desc, py, eps, 1)))
        tview_check(&x, py, yi, "inference y");
    void *xb[] = {px, pdy, py, pdx}, *pbufs[] = {ps, pb, prm, prv, psm, psv, pds, pdb};
    for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
    for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
    double *hv[] = {xv, dyv, scale, bias, rmean, rvar, mean, var, inv, want_rm, want_rv, y, yi, dx, dpre, ds, db,
                    rm_now, rv_now};
    for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
    tview_destroy(&x);
    tview_destroy(&p);
}

/* dlib's batch norm (dlib/cuda/cudnn_dlibapi.cpp): batch_normalize (PER_ACTIVATION, parameters
   1 x K x R x C) and batch_normalize_conv (SPATIAL) train with the running averages set to 0 and
   1 first when the factor is 1; their gradients ADD into src_grad (alphaDataDiff 1,
   betaDataDiff 1) and overwrite the parameter gradients (alphaParamDiff 1, betaParamDiff 0). */
TEST(compat_bn_dlib_gradient_added_to_src_grad)
{
    const int d[4] = {4, 3, 2, 3};
    cudnnHandle_t h = test_handle();
    for (int spatial = 0; spatial < 2; spatial++) {
        const int pd[4] = {1, d[1], spatial ? 1 : d[2], spatial ? 1 : d[3]};
        struct tview x, p;
        tview_init(&x, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
        tview_init(&p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
        struct ref_bn_shape sh = {d[0], d[1], d[2] * d[3], !spatial};
        const int64_t k = ref_bn_slots(&sh);
        const double eps = 1e-5;
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
        double *dx0 = tview_random(x.count, -1, 1), *scale = tview_random(k, 0.5, 1.5);
        double *bias = tview_random(k, -0.5, 0.5), *zeros = tview_fill(k, 0), *ones = tview_fill(k, 1);
        double *mean = malloc(sizeof(double) * (size_t)k), *var = malloc(sizeof(double) * (size_t)k);
        double *y = malloc(sizeof(double) * (size_t)x.count), *dx = malloc(sizeof(double) * (size_t)x.count);
        double *dpre = malloc(sizeof(double) * (size_t)x.count);
        double *ds = malloc(sizeof(double) * (size_t)k), *db = malloc(sizeof(double) * (size_t)k);
        void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
        void *pdx = tview_upload(&x, dx0), *ps = tview_upload(&p, scale), *pb = tview_upload(&p, bias);
        void *prm = tview_upload(&p, zeros), *prv = tview_upload(&p, ones), *pm = tview_upload(&p, NULL);
        void *pi = tview_upload(&p, NULL), *pds = tview_upload(&p, NULL), *pdb = tview_upload(&p, NULL);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
        ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, scale, mean, var, eps, dpre, dx, ds, db);
        for (int64_t i = 0; i < x.count; i++) dx[i] += dx0[i];
        const cudnnBatchNormMode_t mode = spatial ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_PER_ACTIVATION;
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnBatchNormalizationForwardTraining(h, mode, &one, &zero, x.desc, px, x.desc, py, p.desc, ps, pb,
                                                            1.0, prm, prv, eps, pm, pi)) &&
            tview_check(&x, py, y, "dlib batch_normalize") &&
            CHECK_OK(cudnnBatchNormalizationBackward(h, mode, &one, &one, &one, &zero, x.desc, px, x.desc, pdy, x.desc,
                                                     pdx, p.desc, ps, pds, pdb, eps, pm, pi))) {
            tview_check(&x, pdx, dx, "src_grad + gradient (betaDataDiff 1)");
            tview_check(&p, pds, ds, "gamma_grad");
            tview_check(&p, pdb, db, "beta_grad");
        }
        void *xb[] = {px, pdy, py, pdx}, *pbufs[] = {ps, pb, prm, prv, pm, pi, pds, pdb};
        for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
        for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
        double *hv[] = {xv, dyv, dx0, scale, bias, zeros, ones, mean, var, y, dx, dpre, ds, db};
        for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
        tview_destroy(&x);
        tview_destroy(&p);
    }
}

/* NNabla's batch norm (sony/nnabla-ext-cuda src/nbla/cuda/cudnn/function/generic/
   batch_normalization.cu): x through cudnnSetTensor4dDescriptor, an (N, C) input as NHWC N x C x 1
   x 1 in PER_ACTIVATION mode, a channels-last one as NHWC N x C x (the rest) x 1 in
   SPATIAL_PERSISTENT mode, else NCHW N x C x (the rest) x 1 in SPATIAL mode; the parameters'
   descriptor derived; epsilon max(eps, CUDNN_BN_MIN_EPSILON). A gradient not asked for goes to
   **one scratch buffer shared by every such output**: with no scale and no bias (a scale of ones
   and a bias of zeros made for the call) dscale and dbias are the same buffer (alphaParamDiff and
   betaParamDiff 0); without the input's gradient dx (alphaDataDiff and betaDataDiff 0) lies on
   the same scratch as dbias when the bias is not trained, or alone when it is, and the scale's
   gradient is then added to its prior contents (betaParamDiff 1). The gradients asked for must
   come out right. */
TEST(compat_bn_nnabla_unwanted_gradients_share_a_buffer)
{
    static const struct { int n, c, s; cudnnTensorFormat_t f; cudnnBatchNormMode_t mode; } shapes[] = {
        {4, 3, 6, CUDNN_TENSOR_NCHW, CUDNN_BATCHNORM_SPATIAL},
        {5, 3, 1, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_PER_ACTIVATION},
        {2, 4, 6, CUDNN_TENSOR_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT},
    };
    enum { NO_PARAMS, SCALE_ONLY_NO_DX, BOTH_ADDED_NO_DX, VARIANTS };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(shapes); k++)
        for (int v = 0; v < VARIANTS; v++) {
            const int d[4] = {shapes[k].n, shapes[k].c, shapes[k].s, 1};
            const bool per_act = shapes[k].mode == CUDNN_BATCHNORM_PER_ACTIVATION;
            struct tview x;
            tview_init(&x, CUDNN_DATA_FLOAT, 4, d, shapes[k].f == CUDNN_TENSOR_NHWC ? TV_NHWC : TV_NCHW);
            struct ref_bn_shape sh = {d[0], d[1], d[2], per_act};
            const int64_t slots = ref_bn_slots(&sh);
            cudnnTensorDescriptor_t xd, pd;
            CHECK_OK(cudnnCreateTensorDescriptor(&xd));
            CHECK_OK(cudnnCreateTensorDescriptor(&pd));
            bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(xd, shapes[k].f, CUDNN_DATA_FLOAT, d[0], d[1], d[2], 1)) &&
                      CHECK_OK(cudnnDeriveBNTensorDescriptor(pd, xd, shapes[k].mode));
            const double eps = fmax(1e-5, CUDNN_BN_MIN_EPSILON);
            double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
            double *scale = v == NO_PARAMS ? tview_fill(slots, 1) : tview_random(slots, 0.5, 1.5);
            double *bias = v == NO_PARAMS ? tview_fill(slots, 0) : tview_random(slots, -0.5, 0.5);
            double *prior = tview_random(slots, -1, 1), *mean = malloc(sizeof(double) * (size_t)slots);
            double *var = malloc(sizeof(double) * (size_t)slots), *y = malloc(sizeof(double) * (size_t)x.count);
            double *dx = malloc(sizeof(double) * (size_t)x.count), *dpre = malloc(sizeof(double) * (size_t)x.count);
            double *ds = malloc(sizeof(double) * (size_t)slots), *db = malloc(sizeof(double) * (size_t)slots);
            ref_bn_stats(&sh, xv, mean, var);
            ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
            ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, scale, mean, var, eps, dpre, dx, ds, db);
            const size_t pbytes = sizeof(float) * (size_t)slots;
            void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
            void *ps = tvalues_upload(CUDNN_DATA_FLOAT, scale, slots), *pb = tvalues_upload(CUDNN_DATA_FLOAT, bias, slots);
            void *prm = tbuf_alloc(pbytes), *prv = tbuf_alloc(pbytes), *pm = tbuf_alloc(pbytes), *pi = tbuf_alloc(pbytes);
            tbuf_upload(prm, (const float[8]){0}, pbytes);
            tbuf_upload(prv, (const float[8]){1, 1, 1, 1, 1, 1, 1, 1}, pbytes);
            /* the scratch: parameters' size when dx is wanted, x's otherwise */
            void *scratch = tbuf_alloc(v == NO_PARAMS ? pbytes : sizeof(float) * (size_t)x.count);
            void *pdx = v == NO_PARAMS ? tview_upload(&x, NULL) : scratch;
            void *pds = v == NO_PARAMS ? scratch : tvalues_upload(CUDNN_DATA_FLOAT, prior, slots);
            void *pdb = v == SCALE_ONLY_NO_DX || v == NO_PARAMS ? scratch : tvalues_upload(CUDNN_DATA_FLOAT, prior, slots);
            const float one = 1, zero = 0;
            const float a_data = v == NO_PARAMS ? 1 : 0, a_param = v == NO_PARAMS ? 0 : 1;
            const float b_param = v == BOTH_ADDED_NO_DX ? 1 : 0;
            ok = ok && CHECK_OK(cudnnBatchNormalizationForwardTraining(h, shapes[k].mode, &one, &zero, xd, px, xd, py, pd,
                                                                       ps, pb, 0.1, prm, prv, eps, pm, pi)) &&
                 tview_check(&x, py, y, "NNabla's batch norm forward") &&
                 CHECK_OK(cudnnBatchNormalizationBackward(h, shapes[k].mode, &a_data, &zero, &a_param, &b_param, xd,
                                                          px, xd, pdy, xd, pdx, pd, ps, pds, pdb, eps, pm, pi));
            if (ok && v == NO_PARAMS) tview_check(&x, pdx, dx, "NNabla's dx, dscale and dbias on one scratch");
            if (ok && v != NO_PARAMS) {
                for (int64_t i = 0; i < slots; i++) ds[i] += b_param * prior[i], db[i] += prior[i];
                tvalues_check(CUDNN_DATA_FLOAT, pds, ds, slots, 1e-4, "NNabla's dscale, dx on a scratch");
                if (v == BOTH_ADDED_NO_DX) tvalues_check(CUDNN_DATA_FLOAT, pdb, db, slots, 1e-4, "NNabla's dbias added");
            }
            void *bufs[] = {ps, pb, prm, prv, pm, pi, scratch};
            for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
            tview_free(&x, px), tview_free(&x, pdy), tview_free(&x, py);
            if (v == NO_PARAMS) tview_free(&x, pdx);
            else tbuf_free(pds);
            if (v == BOTH_ADDED_NO_DX) tbuf_free(pdb);
            double *hv[] = {xv, dyv, scale, bias, prior, mean, var, y, dx, dpre, ds, db};
            for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
            tview_destroy(&x);
            cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(pd);
        }
}

/* NNabla's convolution resource (sony/nnabla-ext-cuda src/nbla/cuda/cudnn/cudnn.cpp,
   CudnnConvResource): a 1-D convolution as a 2-D one, the descriptor
   cudnnSetConvolutionNdDescriptor with the second dim's pad 0, stride 1 and dilation 1 appended,
   FLOAT compute for half data, then TENSOR_OP_MATH and the group count; channels-last (N, L, C)
   tensors padded to (N, L, 1, C) and set by **cudnnSetTensorNdDescriptorEx(NHWC, 4 dims {N, C,
   L, 1})**, the filter {O, C/g, k, 1} by cudnnSetFilterNdDescriptor(NHWC, 4 dims); **one
   convolution descriptor per direction**; each direction's non-Ex cudnnFind*Algorithm over its
   MaxCount, and for each SUCCESS result in turn its mathType set on that direction's descriptor
   and its workspace asked, the first that fits kept (with its math type set again). The
   deconvolution runs cudnnConvolutionBackwardData as its forward and adds its bias {1, C, 1, 1}
   (NHWC through the same setter) by cudnnAddTensor; its gradients are cudnnConvolutionForward
   and cudnnConvolutionBackwardFilter (x the deconvolution's output gradient) and
   cudnnConvolutionBackwardBias. Against tests/ref/conv.c. */
TEST(compat_conv_nnabla_1d_channels_last_per_direction_descriptors)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(types); k++) {
        const cudnnDataType_t t = types[k];
        /* the convolution: x (N, C, L) -> y (N, O, L'); the deconvolution maps y back to x */
        struct ref_conv rc = {2, 2, 4, 6, 2, {9, 1}, {3, 1}, {0}, {1, 0}, {2, 1}, {1, 1}, false};
        ref_conv_out_dims(&rc);
        const int xd[4] = {rc.n, rc.c, rc.in[0], 1}, yd[4] = {rc.n, rc.k, rc.out[0], 1};
        const int wd4[4] = {rc.k, rc.c / rc.groups, rc.filt[0], 1}, bd[4] = {1, rc.c, 1, 1};
        struct tview x, y, w, b;
        tview_init(&x, t, 4, xd, TV_NHWC);
        tview_init(&y, t, 4, yd, TV_NHWC);
        tview_init(&w, t, 4, wd4, TV_NHWC);
        tview_init(&b, t, 4, bd, TV_NHWC);
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd[3]; /* forward, backward data, backward filter */
        CHECK_OK(cudnnCreateFilterDescriptor(&wd));
        bool ok = CHECK_OK(cudnnSetTensorNdDescriptorEx(x.desc, CUDNN_TENSOR_NHWC, t, 4, xd)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptorEx(y.desc, CUDNN_TENSOR_NHWC, t, 4, yd)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptorEx(b.desc, CUDNN_TENSOR_NHWC, t, 4, bd)) &&
                  CHECK_OK(cudnnSetFilterNdDescriptor(wd, t, CUDNN_TENSOR_NHWC, 4, wd4));
        const int pad[2] = {rc.pad[0], 0}, stride[2] = {rc.stride[0], 1}, dil[2] = {1, 1};
        for (int d = 0; d < 3; d++)
            ok = CHECK_OK(cudnnCreateConvolutionDescriptor(&cd[d])) && ok &&
                 CHECK_OK(cudnnSetConvolutionNdDescriptor(cd[d], 2, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                                          CUDNN_DATA_FLOAT)) &&
                 CHECK_OK(cudnnSetConvolutionMathType(cd[d], CUDNN_TENSOR_OP_MATH)) &&
                 CHECK_OK(cudnnSetConvolutionGroupCount(cd[d], rc.groups));
        /* each direction: the first SUCCESS result, its math type set, its workspace */
        int n = 0, m = 0;
        size_t ws[3] = {0};
        cudnnConvolutionFwdAlgo_t fa = 0;
        cudnnConvolutionBwdDataAlgo_t da = 0;
        cudnnConvolutionBwdFilterAlgo_t wa = 0;
        cudnnConvolutionFwdAlgoPerf_t fp[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        cudnnConvolutionBwdDataAlgoPerf_t dp[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        cudnnConvolutionBwdFilterAlgoPerf_t wp[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        bool found[3] = {false, false, false};
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &m)) &&
             CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, x.desc, wd, cd[0], y.desc, m, &n, fp));
        for (int i = 0; ok && i < n && !found[0]; i++) {
            if (fp[i].status != CUDNN_STATUS_SUCCESS) continue;
            ok = CHECK_OK(cudnnSetConvolutionMathType(cd[0], fp[i].mathType)) &&
                 CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, x.desc, wd, cd[0], y.desc, fp[i].algo, &ws[0]));
            fa = fp[i].algo, found[0] = true;
        }
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &m)) &&
             CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, wd, y.desc, cd[1], x.desc, m, &n, dp));
        for (int i = 0; ok && i < n && !found[1]; i++) {
            if (dp[i].status != CUDNN_STATUS_SUCCESS) continue;
            ok = CHECK_OK(cudnnSetConvolutionMathType(cd[1], dp[i].mathType)) &&
                 CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, y.desc, cd[1], x.desc, dp[i].algo, &ws[1]));
            da = dp[i].algo, found[1] = true;
        }
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &m)) &&
             CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, x.desc, y.desc, cd[2], wd, m, &n, wp));
        for (int i = 0; ok && i < n && !found[2]; i++) {
            if (wp[i].status != CUDNN_STATUS_SUCCESS) continue;
            ok = CHECK_OK(cudnnSetConvolutionMathType(cd[2], wp[i].mathType)) &&
                 CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x.desc, y.desc, cd[2], wd, wp[i].algo,
                                                                         &ws[2]));
            wa = wp[i].algo, found[2] = true;
        }
        ok = ok && CHECK(found[0] && found[1] && found[2]);
        /* the deconvolution of y into x, its bias, and its gradients from dx (the conv's x) */
        double *yv = tview_random(y.count, -1, 1), *wv = tview_random(w.count, -1, 1), *bv = tview_random(b.count, -1, 1);
        double *dxv = tview_random(x.count, -1, 1), *xw = malloc(sizeof(double) * (size_t)x.count);
        double *dyw = malloc(sizeof(double) * (size_t)y.count), *dww = malloc(sizeof(double) * (size_t)w.count);
        double *dbw = calloc((size_t)b.count, sizeof(double));
        ref_conv_bwd_data(&rc, yv, wv, xw);
        ref_conv_fwd(&rc, dxv, wv, dyw);
        ref_conv_bwd_filter(&rc, dxv, yv, dww);
        for (int64_t i = 0; i < x.count; i++) xw[i] += bv[i / rc.in[0] % rc.c], dbw[i / rc.in[0] % rc.c] += dxv[i];
        void *py = tview_upload(&y, yv), *pw = tview_upload(&w, wv), *pb = tview_upload(&b, bv);
        void *pdx = tview_upload(&x, dxv), *px = tview_upload(&x, NULL), *pdy = tview_upload(&y, NULL);
        void *pdw = tview_upload(&w, NULL), *pdb = tview_upload(&b, NULL);
        void *pws = tbuf_alloc(ws[0] > ws[1] ? (ws[0] > ws[2] ? ws[0] : ws[2]) : (ws[1] > ws[2] ? ws[1] : ws[2]));
        const float one = 1, zero = 0;
        const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH);
        if (ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, wd, pw, y.desc, py, cd[1], da, pws, ws[1], &zero, x.desc,
                                                        px)) &&
            CHECK_OK(cudnnAddTensor(h, &one, b.desc, pb, &one, x.desc, px)))
            tview_check_blend(&x, px, xw, NULL, 1, 0, tol, "NNabla deconvolution with its bias, 1-D channels-last");
        if (ok && CHECK_OK(cudnnConvolutionForward(h, &one, x.desc, pdx, wd, pw, cd[0], fa, pws, ws[0], &zero, y.desc, pdy)))
            tview_check_blend(&y, pdy, dyw, NULL, 1, 0, tol, "NNabla deconvolution's input gradient (a forward)");
        if (ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, x.desc, pdx, y.desc, py, cd[2], wa, pws, ws[2], &zero,
                                                          wd, pdw)))
            tview_check_blend(&w, pdw, dww, NULL, 1, 0, tol, "NNabla deconvolution's filter gradient");
        if (ok && CHECK_OK(cudnnConvolutionBackwardBias(h, &one, x.desc, pdx, &zero, b.desc, pdb)))
            tview_check(&b, pdb, dbw, "NNabla deconvolution's bias gradient");
        tbuf_free(pws);
        tview_free(&y, py), tview_free(&y, pdy), tview_free(&w, pw), tview_free(&w, pdw);
        tview_free(&b, pb), tview_free(&b, pdb), tview_free(&x, pdx), tview_free(&x, px);
        free(yv), free(wv), free(bv), free(dxv), free(xw), free(dyw), free(dww), free(dbw);
        for (int d = 0; d < 3; d++) cudnnDestroyConvolutionDescriptor(cd[d]);
        cudnnDestroyFilterDescriptor(wd);
        tview_destroy(&x), tview_destroy(&y), tview_destroy(&w), tview_destroy(&b);
    }
}

/* MXNet's SpatialTransformer (src/operator/cudnn_spatial_transformer-inl.h) and BilinearSampler
   (cudnn_bilinear_sampler-inl.h): the affine grid from cudnnSpatialTfGridGeneratorForward, the
   sampler forward, then cudnnSpatialTfSamplerBackward with **dgrid the grid buffer itself**
   ("we can reuse grid for inplace operator"), dx blended with beta 1 where the gradient is
   added (kAddTo), and cudnnSpatialTfGridGeneratorBackward from that buffer into dtheta. */
TEST(compat_stn_mxnet_dgrid_over_grid)
{
    const int n = 2, c = 3, hin = 5, win = 6, h = 4, w = 5;
    const int dims[4] = {n, c, h, w}, xd[4] = {n, c, hin, win};
    cudnnHandle_t hd = test_handle();
    struct tview x, y;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
    tview_init(&y, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    const int64_t ng = (int64_t)n * h * w * 2;
    double theta[12] = {0.9, 0.1, 0.05, -0.1, 1.1, -0.1, 1.2, -0.2, 0.1, 0.15, 0.8, 0.05};
    double *xv = tview_random(x.count, -1, 1), *dyv = tview_random(y.count, -1, 1), *dx0 = tview_random(x.count, -1, 1);
    double *grid = malloc(sizeof(double) * (size_t)ng), *dgrid = malloc(sizeof(double) * (size_t)ng);
    double *yv = malloc(sizeof(double) * (size_t)y.count), *dx = malloc(sizeof(double) * (size_t)x.count);
    double dtheta[12];
    float th[12];
    for (int i = 0; i < 12; i++) th[i] = (float)theta[i], theta[i] = th[i];
    void *pth = tbuf_from(th, sizeof th), *pgrid = tbuf_alloc(sizeof(float) * (size_t)ng), *pdth = tbuf_alloc(sizeof th);
    void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL), *pdy = tview_upload(&y, dyv);
    void *pdx = tview_upload(&x, dx0);
    cudnnSpatialTransformerDescriptor_t st;
    CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    const float one = 1, zero = 0;
    bool ok = CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims)) &&
              CHECK_OK(cudnnSpatialTfGridGeneratorForward(hd, st, pth, pgrid));
    if (ok) { /* the reference samples where the library's grid points (float) */
        double *g = tvalues_download(CUDNN_DATA_FLOAT, pgrid, ng);
        ref_stn_grid(n, h, w, theta, grid);
        ok = tvalues_check(CUDNN_DATA_FLOAT, pgrid, grid, ng, 1e-5, "affine grid");
        memcpy(grid, g, sizeof(double) * (size_t)ng);
        free(g);
    }
    ref_stn_sample(n, c, hin, win, xv, h, w, grid, yv);
    ref_stn_sample_backward(n, c, hin, win, xv, h, w, grid, dyv, dx, dgrid);
    for (int64_t i = 0; i < x.count; i++) dx[i] += dx0[i];
    ref_stn_grid_backward(n, h, w, dgrid, dtheta);
    if (ok && CHECK_OK(cudnnSpatialTfSamplerForward(hd, st, &one, x.desc, px, pgrid, &zero, y.desc, py)))
        tview_check(&y, py, yv, "sampled y");
    if (ok && CHECK_OK(cudnnSpatialTfSamplerBackward(hd, st, &one, x.desc, px, &one, x.desc, pdx, &one, y.desc, pdy,
                                                     pgrid, &zero, pgrid))) {
        tview_check(&x, pdx, dx, "dx added (kAddTo)");
        tvalues_check(CUDNN_DATA_FLOAT, pgrid, dgrid, ng, 1e-4, "dgrid written over the grid");
        if (CHECK_OK(cudnnSpatialTfGridGeneratorBackward(hd, st, pgrid, pdth)))
            tvalues_check(CUDNN_DATA_FLOAT, pdth, dtheta, 12, 1e-4, "dtheta");
    }
    cudnnDestroySpatialTransformerDescriptor(st);
    tbuf_free(pth), tbuf_free(pgrid), tbuf_free(pdth);
    tview_free(&x, px), tview_free(&y, py), tview_free(&y, pdy), tview_free(&x, pdx);
    free(xv), free(dyv), free(dx0), free(grid), free(dgrid), free(yv), free(dx);
    tview_destroy(&x);
    tview_destroy(&y);
}

/* MatConvNet's bilinear sampler (matlab/src/bits/impl/nnbilinearsampler_cudnn.cu): MATLAB's
   column-major arrays described as one image (n 1) with the dims **n, c, W, H** and the strides
   H W C, H W, H, 1 (cudnnSetTensor4dDescriptorEx), the sampler descriptor
   (cudnnSetSpatialTransformerNdDescriptor) {1, c, W, H} of the output; **double** data with
   double alpha and beta; then one call per image and per grid of that image (several
   transforms per image), the pointers advanced; the backward into a zeroed dx with **dataBeta 1**
   (the gradients of an image's transforms summed across the calls) and gridBeta 0. */
TEST(compat_stn_matconvnet_per_image_calls_summed)
{
    enum { N = 2, G = 2, C = 3, HIN = 5, WIN = 4, HO = 4, WO = 3 };
    cudnnHandle_t hd = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_DOUBLE;
    /* cuDNN's view: H' = MATLAB width, W' = MATLAB height (stride 1) */
    const int hin = WIN, win = HIN, ho = WO, wo = HO;
    const int64_t nx = (int64_t)C * hin * win, ny = (int64_t)C * ho * wo, ng = (int64_t)ho * wo * 2;
    double *x = tview_random(N * nx, -1, 1), *grid = tview_random(N * G * ng, -1.2, 1.2);
    double *dy = tview_random(N * G * ny, -1, 1), *y = malloc(sizeof(double) * (size_t)(N * G * ny));
    double *dx = calloc((size_t)(N * nx), sizeof(double)), *dgrid = malloc(sizeof(double) * (size_t)(N * G * ng));
    double *dxi = malloc(sizeof(double) * (size_t)nx);
    for (int im = 0; im < N; im++)
        for (int ig = 0; ig < G; ig++) {
            const int64_t k = (int64_t)im * G + ig;
            ref_stn_sample(1, C, hin, win, x + im * nx, ho, wo, grid + k * ng, y + k * ny);
            ref_stn_sample_backward(1, C, hin, win, x + im * nx, ho, wo, grid + k * ng, dy + k * ny, dxi, dgrid + k * ng);
            for (int64_t i = 0; i < nx; i++) dx[im * nx + i] += dxi[i];
        }
    double *zeros = calloc((size_t)(N * nx), sizeof(double));
    void *px = tvalues_upload(t, x, N * nx), *pgrid = tvalues_upload(t, grid, N * G * ng);
    void *pdy = tvalues_upload(t, dy, N * G * ny), *pdx = tvalues_upload(t, zeros, N * nx);
    void *py = tbuf_alloc(sizeof(double) * (size_t)(N * G * ny)), *pdgrid = tbuf_alloc(sizeof(double) * (size_t)(N * G * ng));
    cudnnTensorDescriptor_t od, dd;
    cudnnSpatialTransformerDescriptor_t st;
    CHECK_OK(cudnnCreateTensorDescriptor(&od));
    CHECK_OK(cudnnCreateTensorDescriptor(&dd));
    CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    const int dim_out[4] = {1, C, ho, wo};
    bool ok = CHECK_OK(cudnnSetTensor4dDescriptorEx(od, t, 1, C, ho, wo, ho * wo * C, ho * wo, wo, 1)) &&
              CHECK_OK(cudnnSetTensor4dDescriptorEx(dd, t, 1, C, hin, win, hin * win * C, hin * win, win, 1)) &&
              CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, t, 4, dim_out));
    const double one = 1, zero = 0;
    for (int im = 0; im < N && ok; im++)
        for (int ig = 0; ig < G && ok; ig++) {
            const int64_t k = (int64_t)im * G + ig;
            ok = CHECK_OK(cudnnSpatialTfSamplerForward(hd, st, &one, dd, (double *)px + im * nx, (double *)pgrid + k * ng,
                                                       &zero, od, (double *)py + k * ny));
        }
    ok = ok && tvalues_check(t, py, y, N * G * ny, 1e-12, "MatConvNet sampled outputs");
    for (int im = 0; im < N && ok; im++)
        for (int ig = 0; ig < G && ok; ig++) {
            const int64_t k = (int64_t)im * G + ig;
            ok = CHECK_OK(cudnnSpatialTfSamplerBackward(hd, st, &one, dd, (double *)px + im * nx, &one, dd,
                                                        (double *)pdx + im * nx, &one, od, (double *)pdy + k * ny,
                                                        (double *)pgrid + k * ng, &zero, (double *)pdgrid + k * ng));
        }
    ok = ok && tvalues_check(t, pdx, dx, N * nx, 1e-12, "MatConvNet dx summed over each image's grids") &&
         tvalues_check(t, pdgrid, dgrid, N * G * ng, 1e-12, "MatConvNet dgrid");
    (void)ok;
    cudnnDestroySpatialTransformerDescriptor(st);
    cudnnDestroyTensorDescriptor(od);
    cudnnDestroyTensorDescriptor(dd);
    void *bufs[] = {px, pgrid, pdy, pdx, py, pdgrid};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(x), free(grid), free(dy), free(y), free(dx), free(dgrid), free(dxi), free(zeros);
}

/* Caffe2's CuDNNTransposeOp (caffe2/operators/transpose_op_cudnn.cc): the permutation as x's
   strides, y packed, both padded to 4 dims with trailing extents 1 and strides 1; int32 data
   transposed as CUDNN_DATA_FLOAT and int64 as CUDNN_DATA_DOUBLE ("Hack, since CUDNN only
   supports float types"), alpha 1 and beta 0. The bits must move unchanged: small integers are
   subnormal floats, and -1 .. -8388607 (or any int64 below 0 near -1) are NaN patterns. */
TEST(compat_transform_caffe2_transpose_moves_bits)
{
    cudnnHandle_t h = test_handle();
    const int d0 = 2, d1 = 3, d2 = 4, n = d0 * d1 * d2; /* x: d0 x d1 x d2, axes {2, 0, 1} */
    const int ydims[4] = {d2, d0, d1, 1}, ys[4] = {d0 * d1, d1, 1, 1}, xs[4] = {1, d1 * d2, d2, 1};
    for (int wide = 0; wide < 2; wide++) {
        const size_t es = wide ? 8 : 4;
        uint8_t *x = malloc(es * (size_t)n), *want = malloc(es * (size_t)n), *got = malloc(es * (size_t)n);
        static const int64_t specials[] = {-1, 1, 2, -2, INT32_MIN, INT32_MAX, 0x7F800001, -5000000, -8388607,
                                           0x7FBFFFFF, 0x7FF0000000000001LL, INT64_MIN, 0};
        for (int i = 0; i < n; i++) {
            int64_t v = i < (int)TLEN(specials) ? specials[i] : (int64_t)trand_u64();
            if (wide) memcpy(x + 8 * i, &v, 8);
            else {
                int32_t v32 = (int32_t)v;
                memcpy(x + 4 * i, &v32, 4);
            }
        }
        for (int a = 0; a < d0; a++)
            for (int b = 0; b < d1; b++)
                for (int c = 0; c < d2; c++)
                    memcpy(want + es * (size_t)((c * d0 + a) * d1 + b), x + es * (size_t)((a * d1 + b) * d2 + c), es);
        void *px = tbuf_from(x, es * (size_t)n), *py = tbuf_alloc(es * (size_t)n);
        cudnnTensorDescriptor_t xd, yd;
        CHECK_OK(cudnnCreateTensorDescriptor(&xd));
        CHECK_OK(cudnnCreateTensorDescriptor(&yd));
        const cudnnDataType_t t = wide ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        const float one = 1, zero = 0;
        const double oned = 1, zerod = 0;
        if (CHECK_OK(cudnnSetTensorNdDescriptor(xd, t, 4, ydims, xs)) &&
            CHECK_OK(cudnnSetTensorNdDescriptor(yd, t, 4, ydims, ys)) &&
            CHECK_OK(cudnnTransformTensor(h, wide ? (const void *)&oned : &one, xd, px, wide ? (const void *)&zerod : &zero,
                                          yd, py))) {
            tbuf_download(got, py, es * (size_t)n);
            for (int i = 0; i < n; i++)
                if (memcmp(got + es * (size_t)i, want + es * (size_t)i, es) != 0) {
                    FAIL("%s transpose: element %d changed its bits", wide ? "int64-as-double" : "int32-as-float", i);
                    break;
                }
        }
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroyTensorDescriptor(yd);
        tbuf_free(px), tbuf_free(py);
        free(x), free(want), free(got);
    }
}
