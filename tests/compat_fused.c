/* compat_fused.c: the FusedOps call patterns of real programs (docs/compatibility.md): Paddle's
   norm convolution (a convolution and its statistics, no scale, bias or activation), MXNet's
   NormConvolution and BNStatsFinalize and Chainer's fused ops (the equivalent scale, bias and ReLU
   before the convolution and its filter gradient, the statistics finalized by the fused op).
   Each result against the double references of tests/ref/. */
#include "conv_harness.h"
#include "desc_util.h"
#include "ref/conv.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* A K x C x (RS) filter's values w, rounded to type t (w updated), stored in K, R, S, C order as
   channels-last filters are; returns the buffer. */
static void *krsc_filter_upload(cudnnDataType_t t, double *w, int K, int C, int RS)
{
    unsigned char *host = malloc(tdtype_size(t) * (size_t)K * C * RS);
    for (int k = 0; k < K; k++)
        for (int c = 0; c < C; c++)
            for (int rs = 0; rs < RS; rs++) {
                long at = ((long)k * C + c) * RS + rs, to = ((long)k * RS + rs) * C + c;
                tstore(t, host, to, w[at]);
                w[at] = tload(t, host, to);
            }
    void *dev = tbuf_from(host, tdtype_size(t) * (size_t)K * C * RS);
    free(host);
    return dev;
}

/* A K, R, S, C filter gradient of type t against want (K x C x RS). */
static bool krsc_filter_check(cudnnDataType_t t, const void *dev, const double *want, int K, int C, int RS,
                              const char *what)
{
    double *got = tvalues_download(t, dev, (int64_t)K * C * RS);
    bool ok = true;
    for (int k = 0; k < K && ok; k++)
        for (int c = 0; c < C && ok; c++)
            for (int rs = 0; rs < RS && ok; rs++) {
                double g = got[((long)k * RS + rs) * C + c], e = want[((long)k * C + c) * RS + rs];
                if (!(fabs(g - e) <= 2e-2 * fmax(1, fabs(e))))
                    ok = false, FAIL("%s[%d][%d][%d] is %g, expected %g", what, k, c, rs, g, e);
            }
    free(got);
    return ok;
}

/* The half NHWC problem both programs' tests run: an N x C x H x W input, K filters R x R, pad 1,
   stride 1 (rc), x and y as channels-last views (cudnnSetTensorNdDescriptor with NHWC strides). */
static void nhwc_problem(struct ref_conv *rc, int N, int C, int H, int W, int K, int R, struct tview *tx,
                         struct tview *ty)
{
    *rc = (struct ref_conv){.nsp = 2, .n = N, .c = C, .k = K, .groups = 1, .in = {H, W}, .filt = {R, R},
                            .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}};
    CHECK(ref_conv_out_dims(rc));
    tconv_views(rc, CUDNN_DATA_HALF, TV_NHWC, TV_NHWC, tx, NULL, ty);
}

/* ---- PaddlePaddle (paddle/fluid/operators/fused/cudnn_norm_conv.cu.h) --------------------------- */

/* PaddlePaddle's "norm convolution" (paddle/fluid/operators/fused/cudnn_norm_conv.cu.h,
   cudnn_fusion_helper.h): CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS with no scale, bias or
   activation (a convolution and its per-channel sums), and CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD
   likewise; half NHWC tensors described by cudnnSetTensorNdDescriptorEx in NHWC format, the
   statistics as a float {1, K, 1, 1} NHWC tensor, BN_MODE SPATIAL_PERSISTENT, every placeholder
   16-byte aligned, the plan's workspace rounded up to 512 bytes and passed through the scalar
   label; then dgrad through cudnnConvolutionBackwardData (ALGO_1) adding into dx (beta 1). */
TEST(compat_fused_ops_paddle_norm_conv)
{
    enum { N = 2, C = 8, H = 4, W = 4, K = 32, R = 3 };
    struct ref_conv rc;
    struct tview tx, ty;
    nhwc_problem(&rc, N, C, H, W, K, R, &tx, &ty);
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    cudnnHandle_t h = test_handle();
    double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -0.5, 0.5), *dy = tview_random(ny, -1, 1);
    double *dx0 = tview_random(nx, -1, 1);
    void *px = tview_upload(&tx, x), *pdy = tview_upload(&ty, dy), *py = tview_upload(&ty, NULL);
    void *pdx = tview_upload(&tx, dx0);
    void *pw = krsc_filter_upload(t, w, K, C, R * R), *pdw = tbuf_alloc((size_t)nw * tdtype_size(t));
    void *psum = tbuf_alloc(K * sizeof(float)), *psq = tbuf_alloc(K * sizeof(float));
    cudnnTensorDescriptor_t xd, yd, sd;
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    tconv_descs_create(&xd, &yd, &sd, &fd, &cd);
    CHECK_OK(cudnnSetTensorNdDescriptorEx(xd, CUDNN_TENSOR_NHWC, t, 4, (const int[]){N, C, H, W}));
    CHECK_OK(cudnnSetTensorNdDescriptorEx(yd, CUDNN_TENSOR_NHWC, t, 4, (const int[]){N, K, H, W}));
    CHECK_OK(cudnnSetTensorNdDescriptorEx(sd, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 4, (const int[]){1, K, 1, 1}));
    CHECK_OK(cudnnSetFilterNdDescriptor(fd, t, CUDNN_TENSOR_NHWC, 4, (const int[]){K, C, R, R}));
    CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 2, (const int[]){1, 1}, (const int[]){1, 1}, (const int[]){1, 1},
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
    const cudnnFusedOpsPointerPlaceHolder_t aligned = CUDNN_PTR_16B_ALIGNED;
    const cudnnBatchNormMode_t bn = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    bool ok = true;
    for (int wgrad = 0; wgrad < 2 && ok; wgrad++) {
        cudnnFusedOps_t ops = wgrad ? CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD
                                    : CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS;
        cudnnFusedOpsPlan_t plan;
        cudnnFusedOpsConstParamPack_t c;
        cudnnFusedOpsVariantParamPack_t v;
        CHECK_OK(cudnnCreateFusedOpsPlan(&plan, ops));
        CHECK_OK(cudnnCreateFusedOpsConstParamPack(&c, ops));
        CHECK_OK(cudnnCreateFusedOpsVariantParamPack(&v, ops));
        tfused_const(c, CUDNN_PARAM_XDATA_PLACEHOLDER, &aligned);
        tfused_const(c, wgrad ? CUDNN_PARAM_DWDATA_PLACEHOLDER : CUDNN_PARAM_WDATA_PLACEHOLDER, &aligned);
        tfused_const(c, wgrad ? CUDNN_PARAM_DYDATA_PLACEHOLDER : CUDNN_PARAM_YDATA_PLACEHOLDER, &aligned);
        tfused_const(c, CUDNN_PARAM_CONV_DESC, cd);
        tfused_const(c, CUDNN_PARAM_XDESC, xd);
        tfused_const(c, wgrad ? CUDNN_PARAM_DWDESC : CUDNN_PARAM_WDESC, fd);
        tfused_const(c, wgrad ? CUDNN_PARAM_DYDESC : CUDNN_PARAM_YDESC, yd);
        if (!wgrad) {
            tfused_const(c, CUDNN_PARAM_YSUM_PLACEHOLDER, &aligned);
            tfused_const(c, CUDNN_PARAM_YSQSUM_PLACEHOLDER, &aligned);
            tfused_const(c, CUDNN_PARAM_YSTATS_DESC, sd);
        }
        tfused_const(c, CUDNN_PARAM_BN_MODE, &bn);
        size_t need = 0;
        ok = CHECK_OK(cudnnMakeFusedOpsPlan(h, plan, c, &need));
        size_t ws = (need + 511) / 512 * 512;
        void *pws = tbuf_alloc(ws ? ws : 512);
        CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_PTR_XDATA, px));
        CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, wgrad ? CUDNN_PTR_DWDATA : CUDNN_PTR_WDATA,
                                                           wgrad ? pdw : pw));
        CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, wgrad ? CUDNN_PTR_DYDATA : CUDNN_PTR_YDATA,
                                                           wgrad ? pdy : py));
        CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES, &ws));
        if (!wgrad) {
            CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_PTR_YSUM, psum));
            CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_PTR_YSQSUM, psq));
        }
        CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_PTR_WORKSPACE, pws));
        ok = ok && CHECK_OK(cudnnFusedOpsExecute(h, plan, v));
        if (ok && !wgrad) {
            double *want = malloc(sizeof(double) * (size_t)ny), *got = malloc(sizeof(double) * (size_t)ny);
            double sum[K] = {0}, sq[K] = {0};
            ref_conv_fwd(&rc, x, w, want);
            ok = tview_check(&ty, py, want, "norm conv y");
            tview_download(&ty, py, got);
            for (long i = 0; i < ny; i++) sum[i / (H * W) % K] += got[i], sq[i / (H * W) % K] += got[i] * got[i];
            ok = ok && tvalues_check(CUDNN_DATA_FLOAT, psum, sum, K, 1e-4, "ySum") &&
                 tvalues_check(CUDNN_DATA_FLOAT, psq, sq, K, 1e-4, "ySqSum");
            free(want), free(got);
        } else if (ok) {
            double *want = malloc(sizeof(double) * (size_t)nw);
            ref_conv_bwd_filter(&rc, x, dy, want);
            ok = krsc_filter_check(t, pdw, want, K, C, R * R, "norm conv dw");
            free(want);
        }
        tbuf_free(pws);
        cudnnDestroyFusedOpsVariantParamPack(v);
        cudnnDestroyFusedOpsConstParamPack(c);
        cudnnDestroyFusedOpsPlan(plan);
    }
    /* dgrad, adding into dx */
    size_t ds = 0;
    const float one = 1;
    ok = ok && CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, fd, yd, cd, xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                                                     &ds));
    void *pds = tbuf_alloc((ds + 511) / 512 * 512 + 512);
    ok = ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, fd, pw, yd, pdy, cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, pds,
                                                     (ds + 511) / 512 * 512, &one, xd, pdx));
    if (ok) {
        double *want = malloc(sizeof(double) * (size_t)nx);
        ref_conv_bwd_data(&rc, dy, w, want);
        for (long i = 0; i < nx; i++) want[i] += dx0[i];
        tview_check(&tx, pdx, want, "dx added to");
        free(want);
    }
    tbuf_free(pds);
    void *bufs[] = {pw, pdw, psum, psq};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    tview_free(&tx, px), tview_free(&tx, pdx), tview_free(&ty, pdy), tview_free(&ty, py);
    free(x), free(w), free(dy), free(dx0);
    tconv_descs_destroy(xd, yd, sd, fd, cd);
    tview_destroy(&tx);
    tview_destroy(&ty);
}

/* ---- MXNet (src/operator/nn/cudnn/cudnn_norm_convolution-inl.h, cudnn_bn_stats_finalize-inl.h),
        Chainer (anaruse/chainer chainer/functions/fused_ops/fused_ops.py) ----------------------- */

/* A 1 x c x 1 x 1 tensor of type t: MXNet's per-channel descriptors by cudnnSetTensorNdDescriptor
   with strides {c, 1, 1, 1} (nd), the others by cudnnSetTensor4dDescriptor in NHWC format. */
static cudnnTensorDescriptor_t channels_desc(cudnnDataType_t t, int c, bool nd)
{
    cudnnTensorDescriptor_t d;
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    if (nd) CHECK_OK(cudnnSetTensorNdDescriptor(d, t, 4, (const int[]){1, c, 1, 1}, (const int[]){c, 1, 1, 1}));
    else CHECK_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, t, 1, c, 1, 1));
    return d;
}

/* The placeholders of n labels, all of one kind. */
static void fused_placeholders(cudnnFusedOpsConstParamPack_t c, const cudnnFusedOpsConstParamLabel_t *labels, size_t n,
                               cudnnFusedOpsPointerPlaceHolder_t ph)
{
    for (size_t i = 0; i < n; i++) tfused_const(c, labels[i], &ph);
}

/* The convolution of a normalized input as MXNet's NormConvolution (on Ampere and later, cuDNN
   8.0.4+) and Chainer's FusedScaleBiasActConvBnFunction drive it, training a ResNet in half NHWC:
   CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS with the previous layer's **equivalent scale and
   bias and a ReLU** (RELU, NaN not propagated) applied to x before the convolution, BN_MODE
   SPATIAL, every data placeholder 16-byte aligned, the statistics float {1, K, 1, 1}; then
   CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING on them (the accumulation count N H W, the factor
   1 - momentum) into the saved statistics, the running averages and the next layer's half
   equivalent scale and bias; MXNet's inference graph CUDNN_FUSED_BN_FINALIZE_STATISTICS_INFERENCE
   from the running averages; and CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD with the same scale, bias
   and ReLU. MXNet describes x, y by cudnnSetTensorNdDescriptor with NHWC strides and the per-channel
   tensors by Nd (strides {C, 1, 1, 1}) or 4-D NHWC descriptors, gives the finalize ops
   CUDNN_PTR_ELEM_ALIGNED placeholders, a plan it asserts needs no workspace, and **the workspace
   pointer twice, NULL and then the address of a host size_t, the size scalar never set**; Chainer
   describes every tensor with cudnnSetTensor4dDescriptor(NHWC) and the filter with
   cudnnSetFilter4dDescriptor(NHWC), 16-byte placeholders throughout, a workspace of the plan's size
   (none: NULL, 0) with its size. */
TEST(compat_fused_ops_mxnet_chainer_scale_bias_relu_and_finalize)
{
    enum { N = 2, C = 8, H = 5, W = 5, K = 16, R = 3 };
    struct ref_conv rc;
    struct tview tx, ty;
    nhwc_problem(&rc, N, C, H, W, K, R, &tx, &ty);
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    const long m = (long)N * H * W;
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    const cudnnFusedOpsPointerPlaceHolder_t aligned = CUDNN_PTR_16B_ALIGNED;
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t relu;
    CHECK_OK(cudnnCreateActivationDescriptor(&relu));
    CHECK_OK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    bool ok = true;
    for (int mxnet = 1; mxnet >= 0 && ok; mxnet--) {
        const char *who = mxnet ? "MXNet" : "Chainer";
        const double eps = mxnet ? 1e-3 : 2.5e-5, factor = 0.1;
        double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -0.5, 0.5), *dy = tview_random(ny, -1, 1);
        double *s = tview_random(C, 0.5, 1.5), *b = tview_random(C, -0.5, 0.5);
        double *gamma = tview_random(K, 0.5, 1.5), *beta = tview_random(K, -0.5, 0.5);
        double *rmean = tview_random(K, -0.5, 0.5), *rvar = tview_random(K, 0.5, 1.5);
        void *px = tview_upload(&tx, x), *pdy = tview_upload(&ty, dy), *py = tview_upload(&ty, NULL);
        void *pw = krsc_filter_upload(t, w, K, C, R * R), *pdw = tbuf_alloc((size_t)nw * tdtype_size(t));
        void *ps = tvalues_upload(t, s, C), *pb = tvalues_upload(t, b, C);
        void *pgamma = tvalues_upload(CUDNN_DATA_FLOAT, gamma, K), *pbeta = tvalues_upload(CUDNN_DATA_FLOAT, beta, K);
        void *prmean = tvalues_upload(CUDNN_DATA_FLOAT, rmean, K), *prvar = tvalues_upload(CUDNN_DATA_FLOAT, rvar, K);
        void *psum = tbuf_alloc(K * 4), *psq = tbuf_alloc(K * 4), *psmean = tbuf_alloc(K * 4), *psinv = tbuf_alloc(K * 4);
        void *peqs = tbuf_alloc(K * 2), *peqb = tbuf_alloc(K * 2);
        /* the input the convolution sees: relu(x s + b), rounded to half */
        double *xn = malloc(sizeof(double) * (size_t)nx);
        for (long i = 0; i < nx; i++) {
            unsigned char one[2];
            long ch = i / (H * W) % C;
            tstore(t, one, 0, fmax(0, x[i] * s[ch] + b[ch]));
            xn[i] = tload(t, one, 0);
        }
        cudnnTensorDescriptor_t xd = tx.desc, yd = ty.desc, x4 = NULL, y4 = NULL;
        if (!mxnet) {
            CHECK_OK(cudnnCreateTensorDescriptor(&x4)), CHECK_OK(cudnnCreateTensorDescriptor(&y4));
            CHECK_OK(cudnnSetTensor4dDescriptor(x4, CUDNN_TENSOR_NHWC, t, N, C, H, W));
            CHECK_OK(cudnnSetTensor4dDescriptor(y4, CUDNN_TENSOR_NHWC, t, N, K, H, W));
            xd = x4, yd = y4;
        }
        cudnnTensorDescriptor_t eqd = channels_desc(t, C, mxnet), statsd = channels_desc(CUDNN_DATA_FLOAT, K, mxnet);
        cudnnTensorDescriptor_t paramd = channels_desc(CUDNN_DATA_FLOAT, K, false), nextd = channels_desc(t, K, false);
        cudnnFilterDescriptor_t fd;
        cudnnConvolutionDescriptor_t cd;
        CHECK_OK(cudnnCreateFilterDescriptor(&fd)), CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
        CHECK_OK(cudnnSetFilter4dDescriptor(fd, t, CUDNN_TENSOR_NHWC, K, C, R, R));
        CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));

        /* the convolution of the normalized input, with its statistics; then its filter gradient */
        double *y = NULL;
        for (int wgrad = 0; wgrad < 2 && ok; wgrad++) {
            struct tfused f = tfused_create(wgrad ? CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD
                                                  : CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS,
                                            CUDNN_BATCHNORM_SPATIAL);
            const cudnnFusedOpsConstParamLabel_t data[] = {
                CUDNN_PARAM_XDATA_PLACEHOLDER, wgrad ? CUDNN_PARAM_DWDATA_PLACEHOLDER : CUDNN_PARAM_WDATA_PLACEHOLDER,
                wgrad ? CUDNN_PARAM_DYDATA_PLACEHOLDER : CUDNN_PARAM_YDATA_PLACEHOLDER,
                CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER, CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER, CUDNN_PARAM_YSUM_PLACEHOLDER,
                CUDNN_PARAM_YSQSUM_PLACEHOLDER};
            fused_placeholders(f.c, data, wgrad ? 5 : 7, aligned);
            tfused_const(f.c, CUDNN_PARAM_BN_EQSCALEBIAS_DESC, eqd);
            tfused_const(f.c, CUDNN_PARAM_ACTIVATION_DESC, relu);
            tfused_const(f.c, CUDNN_PARAM_XDESC, xd);
            tfused_const(f.c, CUDNN_PARAM_CONV_DESC, cd);
            tfused_const(f.c, wgrad ? CUDNN_PARAM_DWDESC : CUDNN_PARAM_WDESC, fd);
            tfused_const(f.c, wgrad ? CUDNN_PARAM_DYDESC : CUDNN_PARAM_YDESC, yd);
            if (!wgrad) tfused_const(f.c, CUDNN_PARAM_YSTATS_DESC, statsd);
            size_t need = 0;
            ok = CHECK_OK(cudnnMakeFusedOpsPlan(h, f.plan, f.c, &need));
            /* MXNet hands over its temporary space, larger than the plan asks */
            size_t ws = mxnet ? need + 1024 : need;
            void *pws = ws ? tbuf_alloc(ws) : NULL;
            tfused_ptr(f.v, CUDNN_PTR_XDATA, px);
            tfused_ptr(f.v, wgrad ? CUDNN_PTR_DWDATA : CUDNN_PTR_WDATA, wgrad ? pdw : pw);
            tfused_ptr(f.v, wgrad ? CUDNN_PTR_DYDATA : CUDNN_PTR_YDATA, wgrad ? pdy : py);
            tfused_ptr(f.v, CUDNN_PTR_BN_EQSCALE, ps), tfused_ptr(f.v, CUDNN_PTR_BN_EQBIAS, pb);
            if (!wgrad) tfused_ptr(f.v, CUDNN_PTR_YSUM, psum), tfused_ptr(f.v, CUDNN_PTR_YSQSUM, psq);
            tfused_ptr(f.v, CUDNN_PTR_WORKSPACE, pws);
            tfused_ptr(f.v, CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES, &ws);
            ok = ok && CHECK_OK(cudnnFusedOpsExecute(h, f.plan, f.v));
            if (ok && !wgrad) {
                double *want = malloc(sizeof(double) * (size_t)ny), sum[K] = {0}, sq[K] = {0};
                ref_conv_fwd(&rc, xn, w, want);
                ok = tview_check(&ty, py, want, who);
                y = malloc(sizeof(double) * (size_t)ny);
                tview_download(&ty, py, y);
                for (long i = 0; i < ny; i++) sum[i / (H * W) % K] += y[i], sq[i / (H * W) % K] += y[i] * y[i];
                ok = ok && tvalues_check(CUDNN_DATA_FLOAT, psum, sum, K, 1e-4, "ySum") &&
                     tvalues_check(CUDNN_DATA_FLOAT, psq, sq, K, 1e-4, "ySqSum");
                free(want);
            } else if (ok) {
                double *want = malloc(sizeof(double) * (size_t)nw);
                ref_conv_bwd_filter(&rc, xn, dy, want);
                ok = krsc_filter_check(t, pdw, want, K, C, R * R, "normalized-input dw");
                free(want);
            }
            if (pws) tbuf_free(pws);
            tfused_destroy(f);
        }

        /* the statistics finalized: training (both), inference from the running averages (MXNet) */
        for (int training = 1; ok && training >= (mxnet ? 0 : 1); training--) {
            struct tfused f = tfused_create(training ? CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING
                                                     : CUDNN_FUSED_BN_FINALIZE_STATISTICS_INFERENCE,
                                            CUDNN_BATCHNORM_SPATIAL);
            const cudnnFusedOpsConstParamLabel_t labels[] = {
                CUDNN_PARAM_BN_SCALE_PLACEHOLDER,      CUDNN_PARAM_BN_BIAS_PLACEHOLDER,
                CUDNN_PARAM_BN_RUNNING_MEAN_PLACEHOLDER, CUDNN_PARAM_BN_RUNNING_VAR_PLACEHOLDER,
                CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER,    CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER,
                CUDNN_PARAM_YSUM_PLACEHOLDER,          CUDNN_PARAM_YSQSUM_PLACEHOLDER,
                CUDNN_PARAM_BN_SAVED_MEAN_PLACEHOLDER, CUDNN_PARAM_BN_SAVED_INVSTD_PLACEHOLDER};
            fused_placeholders(f.c, labels, training ? 10 : 6, mxnet ? CUDNN_PTR_ELEM_ALIGNED : aligned);
            tfused_const(f.c, CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC, paramd);
            tfused_const(f.c, CUDNN_PARAM_BN_EQSCALEBIAS_DESC, nextd);
            if (training) tfused_const(f.c, CUDNN_PARAM_YSTATS_DESC, paramd);
            size_t need = 1, none = 0;
            ok = CHECK_OK(cudnnMakeFusedOpsPlan(h, f.plan, f.c, &need)) && CHECK(need == 0);
            if (mxnet) {
                size_t workspace_size_bytes = need;
                tfused_ptr(f.v, CUDNN_PTR_WORKSPACE, NULL);
                tfused_ptr(f.v, CUDNN_PTR_WORKSPACE, &workspace_size_bytes);
            } else {
                tfused_ptr(f.v, CUDNN_PTR_WORKSPACE, NULL);
                tfused_ptr(f.v, CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES, &none);
            }
            tfused_ptr(f.v, CUDNN_PTR_BN_SCALE, pgamma), tfused_ptr(f.v, CUDNN_PTR_BN_BIAS, pbeta);
            tfused_ptr(f.v, CUDNN_PTR_BN_RUNNING_MEAN, prmean), tfused_ptr(f.v, CUDNN_PTR_BN_RUNNING_VAR, prvar);
            tfused_ptr(f.v, CUDNN_PTR_BN_EQSCALE, peqs), tfused_ptr(f.v, CUDNN_PTR_BN_EQBIAS, peqb);
            tfused_ptr(f.v, CUDNN_SCALAR_DOUBLE_BN_EPSILON, (void *)&eps);
            int64_t count = m;
            if (training) {
                tfused_ptr(f.v, CUDNN_PTR_YSUM, psum), tfused_ptr(f.v, CUDNN_PTR_YSQSUM, psq);
                tfused_ptr(f.v, CUDNN_PTR_BN_SAVED_MEAN, psmean), tfused_ptr(f.v, CUDNN_PTR_BN_SAVED_INVSTD, psinv);
                tfused_ptr(f.v, CUDNN_SCALAR_INT64_T_BN_ACCUMULATION_COUNT, &count);
                tfused_ptr(f.v, CUDNN_SCALAR_DOUBLE_BN_EXP_AVG_FACTOR, (void *)&factor);
            }
            tbuf_poison(peqs, K * 2), tbuf_poison(peqb, K * 2);
            ok = ok && CHECK_OK(cudnnFusedOpsExecute(h, f.plan, f.v));
            /* the statistics of the y the convolution wrote, in double */
            double mean[K] = {0}, var[K] = {0}, inv[K], eqs[K], eqb[K];
            for (long i = 0; i < ny; i++) mean[i / (H * W) % K] += y[i] / m;
            for (long i = 0; i < ny; i++) var[i / (H * W) % K] += (y[i] - mean[i / (H * W) % K]) * (y[i] - mean[i / (H * W) % K]) / m;
            if (training)
                for (int k = 0; k < K; k++) {
                    rmean[k] = (1 - factor) * rmean[k] + factor * mean[k];
                    rvar[k] = (1 - factor) * rvar[k] + factor * var[k] * m / (m - 1);
                }
            for (int k = 0; k < K; k++) {
                double mu = training ? mean[k] : rmean[k], va = training ? var[k] : rvar[k];
                inv[k] = 1 / sqrt(va + eps), eqs[k] = gamma[k] * inv[k], eqb[k] = beta[k] - mu * eqs[k];
            }
            ok = ok && tvalues_check(t, peqs, eqs, K, 2e-3, "equivalent scale") &&
                 tvalues_check(t, peqb, eqb, K, 2e-3, "equivalent bias") &&
                 tvalues_check(CUDNN_DATA_FLOAT, prmean, rmean, K, 1e-4, "running mean") &&
                 tvalues_check(CUDNN_DATA_FLOAT, prvar, rvar, K, 1e-4, "running variance");
            if (training)
                ok = ok && tvalues_check(CUDNN_DATA_FLOAT, psmean, mean, K, 1e-4, "saved mean") &&
                     tvalues_check(CUDNN_DATA_FLOAT, psinv, inv, K, 1e-4, "saved inverse deviation");
            tfused_destroy(f);
        }
        free(y);
        if (x4) cudnnDestroyTensorDescriptor(x4), cudnnDestroyTensorDescriptor(y4);
        cudnnTensorDescriptor_t descs[] = {eqd, statsd, paramd, nextd};
        for (size_t i = 0; i < TLEN(descs); i++) cudnnDestroyTensorDescriptor(descs[i]);
        cudnnDestroyFilterDescriptor(fd), cudnnDestroyConvolutionDescriptor(cd);
        tview_free(&tx, px), tview_free(&ty, pdy), tview_free(&ty, py);
        void *bufs[] = {pw, pdw, ps, pb, pgamma, pbeta, prmean, prvar, psum, psq, psmean, psinv, peqs, peqb};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        free(x), free(w), free(dy), free(s), free(b), free(gamma), free(beta), free(rmean), free(rvar), free(xn);
    }
    cudnnDestroyActivationDescriptor(relu);
    tview_destroy(&tx);
    tview_destroy(&ty);
}
