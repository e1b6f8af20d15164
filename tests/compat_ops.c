/* compat_ops.c: call patterns of real programs (docs/compatibility.md) around batch
   normalization, dropout, softmax, pooling, LRN, the spatial transformer and tensor transforms
   that the op tests do not make: darknet's batch norm on half data accumulating the parameter
   gradients; CuPy's dropout re-set without states before each call; ONNX Runtime's instance
   normalization through the running averages, its ceil-mode and 1-D pooling and 5-D LRN;
   oneDNN's LRN backward from an unwritten y; TVM's log-softmax over a middle axis; NNabla's
   batch-norm backward with the gradients it does not want in one scratch buffer; MXNet's int8
   pooling and sampler gradient; CUDA.jl's normalization optionals; dlib's batch-norm gradient
   added to its source; MatConvNet's per-image sampler; oneDNN's resampling through the sampler,
   its backward given dx as x; Caffe2's transpose. Each result against the double references of
   tests/ref/. (compat_conv.c: the convolution patterns; compat_core.c: the logging and version
   patterns.) */
#include "desc_util.h"
#include "ref/batchnorm.h"
#include "ref/lrn.h"
#include "ref/pooling.h"
#include "ref/softmax.h"
#include "ref/spatial_tf.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* oneDNN's LRN on NVIDIA GPUs (src/gpu/nvidia/cudnn_lrn_impl.hpp, cudnn_lrn.cpp): the training
   forward keeps y for the backward by cudnnAddTensor(dst -> workspace) **with the workspace's
   descriptor never created** (NULL, the status not checked), so the workspace keeps whatever it
   held; the backward then passes that workspace as y. Our AddTensor refuses the NULL
   descriptor and writes nothing, and the backward recomputes the window sums from x without
   reading y, so dx is right whatever the workspace holds (here poison). */
TEST(compat_lrn_onednn_backward_from_unwritten_y)
{
    const int dims[4] = {2, 7, 3, 4};
    cudnnHandle_t h = test_handle();
    struct tview x;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    const int64_t s = (int64_t)dims[2] * dims[3];
    struct ref_lrn_params q = {5, 1e-4, 0.75, 1.0};
    double *xv = tview_random(x.count, -3, 3), *dyv = tview_random(x.count, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)x.count), *dx = malloc(sizeof(double) * (size_t)x.count);
    void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *pws = tview_upload(&x, NULL);
    void *pdy = tview_upload(&x, dyv), *pdx = tview_upload(&x, NULL), *ws_snap = tbuf_snapshot(pws, tview_bytes(&x));
    ref_lrn_forward(dims[0], dims[1], s, &q, xv, y);
    ref_lrn_backward(dims[0], dims[1], s, &q, xv, dyv, dx);
    cudnnLRNDescriptor_t ld;
    CHECK_OK(cudnnCreateLRNDescriptor(&ld));
    const float one = 1, zero = 0;
    if (CHECK_OK(cudnnSetLRNDescriptor(ld, (unsigned)q.n, q.alpha, q.beta, q.k)) &&
        CHECK_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x.desc, px, &zero, x.desc, py))) {
        tview_check(&x, py, y, "oneDNN's LRN forward");
        CHECK_STATUS(cudnnAddTensor(h, &one, x.desc, py, &zero, NULL, pws), CUDNN_STATUS_BAD_PARAM);
        CHECK(tbuf_unchanged(pws, ws_snap, tview_bytes(&x), "the workspace AddTensor was refused"));
        if (CHECK_OK(cudnnLRNCrossChannelBackward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x.desc, pws, x.desc, pdy,
                                                  x.desc, px, &zero, x.desc, pdx)))
            tview_check(&x, pdx, dx, "oneDNN's LRN backward, y an unwritten workspace");
    }
    cudnnDestroyLRNDescriptor(ld);
    void *bufs[] = {px, py, pws, pdy, pdx};
    for (size_t i = 0; i < TLEN(bufs); i++) tview_free(&x, bufs[i]);
    free(xv), free(dyv), free(y), free(dx), free(ws_snap);
    tview_destroy(&x);
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

/* oneDNN's linear resampling on NVIDIA GPUs (src/gpu/nvidia/cudnn_resampling.hpp,
   cudnn_resampling_impl.hpp): the grid made once by cudnnSpatialTfGridGeneratorForward from the
   scaling theta {IW (OW - 1) / (OW (IW - 1)), 0, 0; 0, IH (OH - 1) / (OH (IH - 1)), 0} of every
   image, in the data's type (half theta and grid for half data, the descriptor HALF), then
   clamped to [-1, 1] on the host; the sampler forward with alpha 1 and beta 0 then gives oneDNN's
   half-pixel linear resampling (source row (oh + 1/2) IH / OH - 1/2, clamped to the image). The
   backward (float) is cudnnSpatialTfSamplerBackward with **its dx buffer passed as x too**, beta
   0, alphaDgrid and betaDgrid 0 and a scratch dgrid ("cuDNN does not allow the dgrid to be NULL"):
   under alphaDgrid 0, x is not read, so the poison in that buffer must not reach dx. */
TEST(compat_stn_onednn_resampling_dx_as_x)
{
    enum { N = 2, C = 3, IH = 4, IW = 5, OH = 7, OW = 3 };
    cudnnHandle_t hd = test_handle();
    const int xd[4] = {N, C, IH, IW}, yd[4] = {N, C, OH, OW};
    const int64_t ng = (int64_t)N * OH * OW * 2;
    for (int half = 0; half < 2; half++) {
        const cudnnDataType_t t = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        struct tview x, y;
        tview_init(&x, t, 4, xd, half ? TV_NHWC : TV_NCHW);
        tview_init(&y, t, 4, yd, half ? TV_NHWC : TV_NCHW);
        double theta[6 * N] = {0};
        for (int i = 0; i < N; i++) {
            theta[6 * i] = (double)IW * (OW - 1) / ((double)OW * (IW - 1));
            theta[6 * i + 4] = (double)IH * (OH - 1) / ((double)OH * (IH - 1));
        }
        double *grid = malloc(sizeof(double) * (size_t)ng), *poison = tview_fill(ng, NAN);
        double *xv = tview_random(x.count, -1, 1), *dyv = tview_random(y.count, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)y.count), *dx = malloc(sizeof(double) * (size_t)x.count);
        double *dgrid = malloc(sizeof(double) * (size_t)ng), *zeros = calloc((size_t)ng, sizeof(double));
        void *pth = tvalues_upload(t, theta, 6 * N), *pgen = tvalues_upload(t, poison, ng), *pgrid = NULL;
        void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL);
        cudnnSpatialTransformerDescriptor_t st;
        CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
        const float one = 1, zero = 0;
        bool ok = CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, t, 4, yd)) &&
                  CHECK_OK(cudnnSpatialTfGridGeneratorForward(hd, st, pth, pgen));
        if (ok) {
            ref_stn_grid(N, OH, OW, theta, grid);
            ok = tvalues_check(t, pgen, grid, ng, half ? 2e-3 : 1e-6, "oneDNN's scaling grid");
            double *g = tvalues_download(t, pgen, ng);
            for (int64_t i = 0; i < ng; i++) grid[i] = fabs(g[i]) > 1 ? g[i] / fabs(g[i]) : g[i];
            free(g);
            pgrid = tvalues_upload(t, grid, ng); /* oneDNN's clamp, done on the host */
            ref_stn_sample(N, C, IH, IW, xv, OH, OW, grid, want);
        }
        if (ok && CHECK_OK(cudnnSpatialTfSamplerForward(hd, st, &one, x.desc, px, pgrid, &zero, y.desc, py)))
            tview_check(&y, py, want, "oneDNN's linear resampling");
        if (ok && !half) {
            void *pdy = tview_upload(&y, dyv), *pdx = tview_upload(&x, NULL), *pdg = tvalues_upload(t, poison, ng);
            ref_stn_sample_backward(N, C, IH, IW, xv, OH, OW, grid, dyv, dx, dgrid); /* dx does not depend on x */
            if (CHECK_OK(cudnnSpatialTfSamplerBackward(hd, st, &one, x.desc, pdx, &zero, x.desc, pdx, &zero, y.desc, pdy,
                                                       pgrid, &zero, pdg))) {
                tview_check(&x, pdx, dx, "oneDNN's resampling dx, written over x");
                tvalues_check(t, pdg, zeros, ng, 0, "the scratch dgrid under alphaDgrid 0 and betaDgrid 0");
            }
            tview_free(&y, pdy), tview_free(&x, pdx), tbuf_free(pdg);
        }
        cudnnDestroySpatialTransformerDescriptor(st);
        tbuf_free(pth), tbuf_free(pgen);
        if (pgrid) tbuf_free(pgrid);
        tview_free(&x, px), tview_free(&y, py);
        free(grid), free(poison), free(xv), free(dyv), free(want), free(dx), free(dgrid), free(zeros);
        tview_destroy(&x), tview_destroy(&y);
    }
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
