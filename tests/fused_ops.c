/* fused_ops.c: tests of the FusedOps API: parameter packs (every label set and read back,
   descriptors kept as copies), plans and their statuses, and the four fused operations of
   cuDNN 8.2 against references in double (tests/ref/conv.c for the convolutions). */
#include "desc_util.h"
#include "test.h"
#include "tensors.h"

#include "ref/conv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TEST_ONCE(fused_ops_const_pack_every_label)
{
    cudnnFusedOpsConstParamPack_t pack;
    CHECK_STATUS(cudnnCreateFusedOpsConstParamPack(&pack, (cudnnFusedOps_t)7), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnCreateFusedOpsConstParamPack(NULL, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS), CUDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(cudnnCreateFusedOpsConstParamPack(&pack, CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS))) return;
    cudnnTensorDescriptor_t t, t2;
    cudnnFilterDescriptor_t f, f2;
    cudnnConvolutionDescriptor_t c, c2;
    CHECK_OK(cudnnCreateTensorDescriptor(&t)), CHECK_OK(cudnnCreateTensorDescriptor(&t2));
    CHECK_OK(cudnnCreateFilterDescriptor(&f)), CHECK_OK(cudnnCreateFilterDescriptor(&f2));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&c)), CHECK_OK(cudnnCreateConvolutionDescriptor(&c2));
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 2, 8, 5, 4));
    CHECK_OK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 16, 8, 3, 3));
    CHECK_OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionMathType(c, CUDNN_TENSOR_OP_MATH));
    int isnull = -1;
    /* defaults: descriptors absent, placeholders PTR_NULL, BN mode PER_ACTIVATION */
    CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_XDESC, t2, &isnull));
    CHECK(isnull == 1);
    cudnnFusedOpsPointerPlaceHolder_t ph = CUDNN_PTR_16B_ALIGNED;
    CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_XDATA_PLACEHOLDER, &ph, &isnull));
    CHECK(ph == CUDNN_PTR_NULL && isnull == 0);
    cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL;
    CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_BN_MODE, &mode, &isnull));
    CHECK(mode == CUDNN_BATCHNORM_PER_ACTIVATION);
    /* every tensor-descriptor label keeps a copy, independent of the original */
    static const cudnnFusedOpsConstParamLabel_t tensor_labels[] = {
        CUDNN_PARAM_XDESC, CUDNN_PARAM_BN_EQSCALEBIAS_DESC, CUDNN_PARAM_YDESC, CUDNN_PARAM_DYDESC,
        CUDNN_PARAM_YSTATS_DESC, CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC, CUDNN_PARAM_ZDESC,
        CUDNN_PARAM_BN_Z_EQSCALEBIAS_DESC, CUDNN_PARAM_ACTIVATION_BITMASK_DESC, CUDNN_PARAM_DXDESC, CUDNN_PARAM_DZDESC};
    for (size_t i = 0; i < sizeof tensor_labels / sizeof tensor_labels[0]; i++) {
        CHECK_OK(cudnnSetFusedOpsConstParamPackAttribute(pack, tensor_labels[i], t));
        CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, tensor_labels[i], t2, &isnull));
        CHECK(isnull == 0);
    }
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, 1)); /* the pack keeps its copy */
    CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_YDESC, t2, &isnull));
    cudnnDataType_t dt;
    int n, ch, h, w, ns, cs, hs, ws;
    CHECK_OK(cudnnGetTensor4dDescriptor(t2, &dt, &n, &ch, &h, &w, &ns, &cs, &hs, &ws));
    CHECK(dt == CUDNN_DATA_HALF && n == 2 && ch == 8 && h == 5 && w == 4 && cs == 1 && ws == 8);
    CHECK_OK(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_YDESC, NULL)); /* clears */
    CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_YDESC, t2, &isnull));
    CHECK(isnull == 1);
    /* filters, the convolution */
    CHECK_OK(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_WDESC, f));
    CHECK_OK(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_DWDESC, f));
    CHECK_OK(cudnnDestroyFilterDescriptor(f));
    CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_WDESC, f2, &isnull));
    cudnnTensorFormat_t fmt;
    int k;
    CHECK_OK(cudnnGetFilter4dDescriptor(f2, &dt, &fmt, &k, &ch, &h, &w));
    CHECK(isnull == 0 && dt == CUDNN_DATA_HALF && fmt == CUDNN_TENSOR_NHWC && k == 16 && ch == 8 && h == 3);
    CHECK_OK(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_CONV_DESC, c));
    CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_CONV_DESC, c2, &isnull));
    cudnnMathType_t math;
    CHECK_OK(cudnnGetConvolutionMathType(c2, &math));
    CHECK(isnull == 0 && math == CUDNN_TENSOR_OP_MATH);
    /* a descriptor of the wrong kind, an unset one, a bad label, a bad placeholder */
    CHECK_STATUS(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_WDESC, t), CUDNN_STATUS_BAD_PARAM);
    cudnnTensorDescriptor_t unset;
    CHECK_OK(cudnnCreateTensorDescriptor(&unset));
    CHECK_STATUS(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_XDESC, unset), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetFusedOpsConstParamPackAttribute(pack, (cudnnFusedOpsConstParamLabel_t)39, t), CUDNN_STATUS_BAD_PARAM);
    ph = (cudnnFusedOpsPointerPlaceHolder_t)3;
    CHECK_STATUS(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_WDATA_PLACEHOLDER, &ph), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_XDESC, t2, NULL), CUDNN_STATUS_BAD_PARAM);
    /* every placeholder label round-trips */
    for (int l = 0; l <= CUDNN_PARAM_BN_DBIAS_PLACEHOLDER; l++) {
        cudnnFusedOpsConstParamLabel_t label = (cudnnFusedOpsConstParamLabel_t)l;
        int isn = 0;
        cudnnFusedOpsPointerPlaceHolder_t in = (cudnnFusedOpsPointerPlaceHolder_t)(1 + l % 2), out = CUDNN_PTR_NULL;
        if (cudnnSetFusedOpsConstParamPackAttribute(pack, label, &in) != CUDNN_STATUS_SUCCESS) continue; /* a desc label */
        CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, label, &out, &isn));
        CHECK(out == in || label == CUDNN_PARAM_BN_MODE);
    }
    mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    CHECK_OK(cudnnSetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_BN_MODE, &mode));
    mode = CUDNN_BATCHNORM_PER_ACTIVATION;
    CHECK_OK(cudnnGetFusedOpsConstParamPackAttribute(pack, CUDNN_PARAM_BN_MODE, &mode, &isnull));
    CHECK(mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT);
    CHECK_OK(cudnnDestroyFusedOpsConstParamPack(pack));
    CHECK_OK(cudnnDestroyFusedOpsConstParamPack(NULL));
    cudnnDestroyTensorDescriptor(t), cudnnDestroyTensorDescriptor(t2), cudnnDestroyTensorDescriptor(unset);
    cudnnDestroyFilterDescriptor(f2);
    cudnnDestroyConvolutionDescriptor(c), cudnnDestroyConvolutionDescriptor(c2);
}

TEST_ONCE(fused_ops_variant_pack_pointers_and_scalars)
{
    cudnnFusedOpsVariantParamPack_t v;
    CHECK_STATUS(cudnnCreateFusedOpsVariantParamPack(&v, (cudnnFusedOps_t)-1), CUDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(cudnnCreateFusedOpsVariantParamPack(&v, CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING))) return;
    char buffers[24];
    for (int l = 0; l <= CUDNN_PTR_BN_DBIAS; l++)
        CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, (cudnnFusedOpsVariantParamLabel_t)l, &buffers[l]));
    for (int l = 0; l <= CUDNN_PTR_BN_DBIAS; l++) {
        void *p = NULL;
        CHECK_OK(cudnnGetFusedOpsVariantParamPackAttribute(v, (cudnnFusedOpsVariantParamLabel_t)l, &p));
        CHECK(p == &buffers[l]);
    }
    size_t ws = 1234, ws_out = 0;
    int64_t count = 987654321012LL, count_out = 0;
    double factor = 0.125, eps = 1e-5, out = 0;
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES, &ws));
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_INT64_T_BN_ACCUMULATION_COUNT, &count));
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_DOUBLE_BN_EXP_AVG_FACTOR, &factor));
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_DOUBLE_BN_EPSILON, &eps));
    CHECK_OK(cudnnGetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES, &ws_out));
    CHECK_OK(cudnnGetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_INT64_T_BN_ACCUMULATION_COUNT, &count_out));
    CHECK(ws_out == ws && count_out == count);
    CHECK_OK(cudnnGetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_DOUBLE_BN_EXP_AVG_FACTOR, &out));
    CHECK(out == factor);
    CHECK_OK(cudnnGetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_DOUBLE_BN_EPSILON, &out));
    CHECK(out == eps);
    CHECK_STATUS(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_DOUBLE_BN_EPSILON, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetFusedOpsVariantParamPackAttribute(v, (cudnnFusedOpsVariantParamLabel_t)24, &ws), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetFusedOpsVariantParamPackAttribute(v, CUDNN_PTR_XDATA, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_PTR_WORKSPACE, NULL)); /* NULL pointers are legal */
    CHECK_OK(cudnnDestroyFusedOpsVariantParamPack(v));
    CHECK_OK(cudnnDestroyFusedOpsVariantParamPack(NULL));
}

TEST(fused_ops_plan_statuses)
{
    cudnnHandle_t h = test_handle();
    cudnnFusedOpsPlan_t plan;
    CHECK_STATUS(cudnnCreateFusedOpsPlan(&plan, (cudnnFusedOps_t)9), CUDNN_STATUS_BAD_PARAM);
    for (int ops = 0; ops <= CUDNN_FUSED_DACTIVATION_FORK_DBATCHNORM; ops++) {
        cudnnFusedOpsConstParamPack_t c, other;
        cudnnFusedOpsVariantParamPack_t v;
        if (!CHECK_OK(cudnnCreateFusedOpsPlan(&plan, (cudnnFusedOps_t)ops))) continue;
        CHECK_OK(cudnnCreateFusedOpsConstParamPack(&c, (cudnnFusedOps_t)ops));
        CHECK_OK(cudnnCreateFusedOpsConstParamPack(&other, (cudnnFusedOps_t)((ops + 1) % 7)));
        CHECK_OK(cudnnCreateFusedOpsVariantParamPack(&v, (cudnnFusedOps_t)ops));
        size_t ws = 77;
        CHECK_STATUS(cudnnMakeFusedOpsPlan(h, plan, other, &ws), CUDNN_STATUS_BAD_PARAM); /* ops differ */
        CHECK_STATUS(cudnnMakeFusedOpsPlan(h, plan, c, NULL), CUDNN_STATUS_BAD_PARAM);
        /* an empty pack lacks what ops 0 to 3 need; ops 4 to 6 are reserved by the 8.2 headers */
        CHECK_STATUS(cudnnMakeFusedOpsPlan(h, plan, c, &ws), ops < 4 ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_NOT_SUPPORTED);
        CHECK(ws == 77);
        CHECK_STATUS(cudnnFusedOpsExecute(h, plan, v), CUDNN_STATUS_BAD_PARAM); /* never made */
        CHECK_STATUS(cudnnFusedOpsExecute(h, plan, NULL), CUDNN_STATUS_BAD_PARAM);
        CHECK_OK(cudnnDestroyFusedOpsPlan(plan));
        cudnnDestroyFusedOpsConstParamPack(c), cudnnDestroyFusedOpsConstParamPack(other);
        cudnnDestroyFusedOpsVariantParamPack(v);
    }
    CHECK_OK(cudnnDestroyFusedOpsPlan(NULL));
}

/* ---- numeric checks ------------------------------------------------------------------------------ */

static cudnnTensorDescriptor_t channel_tensor(cudnnDataType_t t, int c)
{
    cudnnTensorDescriptor_t d;
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    CHECK_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, t, 1, c, 1, 1));
    return d;
}


/* BN finalize, training (op 2) and inference (op 3): per-channel math against doubles. */
static void check_bn_finalize(bool training)
{
    cudnnHandle_t h = test_handle();
    const int C = 7;
    const long m = 50;
    cudnnFusedOps_t ops = training ? CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING : CUDNN_FUSED_BN_FINALIZE_STATISTICS_INFERENCE;
    cudnnTensorDescriptor_t stats = channel_tensor(CUDNN_DATA_FLOAT, C), params = channel_tensor(CUDNN_DATA_FLOAT, C);
    cudnnTensorDescriptor_t eq = channel_tensor(CUDNN_DATA_HALF, C);
    double *mean = tview_random(C, -1, 1), *var = tview_random(C, 0.5, 2), *scale = tview_random(C, -2, 2), *bias = tview_random(C, -1, 1);
    double *rmean = tview_random(C, -1, 1), *rvar = tview_random(C, 0.5, 2), ysum[7], ysq[7];
    for (int k = 0; k < C; k++) ysum[k] = mean[k] * m, ysq[k] = (var[k] + mean[k] * mean[k]) * m;
    void *d_ysum = tvalues_upload(CUDNN_DATA_FLOAT, ysum, C), *d_ysq = tvalues_upload(CUDNN_DATA_FLOAT, ysq, C);
    void *d_scale = tvalues_upload(CUDNN_DATA_FLOAT, scale, C), *d_bias = tvalues_upload(CUDNN_DATA_FLOAT, bias, C);
    void *d_rmean = tvalues_upload(CUDNN_DATA_FLOAT, rmean, C), *d_rvar = tvalues_upload(CUDNN_DATA_FLOAT, rvar, C);
    void *d_smean = tbuf_alloc(C * 4), *d_sinv = tbuf_alloc(C * 4), *d_eqs = tbuf_alloc(C * 2), *d_eqb = tbuf_alloc(C * 2);
    struct tfused f = tfused_create(ops, CUDNN_BATCHNORM_SPATIAL);
    cudnnFusedOpsConstParamPack_t c = f.c;
    cudnnFusedOpsVariantParamPack_t v = f.v;
    cudnnFusedOpsPlan_t plan = f.plan;
    cudnnFusedOpsPointerPlaceHolder_t ph = CUDNN_PTR_ELEM_ALIGNED;
    tfused_const(c, CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC, params);
    tfused_const(c, CUDNN_PARAM_BN_EQSCALEBIAS_DESC, eq);
    static const cudnnFusedOpsConstParamLabel_t all[] = {CUDNN_PARAM_BN_SCALE_PLACEHOLDER, CUDNN_PARAM_BN_BIAS_PLACEHOLDER,
                                                         CUDNN_PARAM_BN_RUNNING_MEAN_PLACEHOLDER,
                                                         CUDNN_PARAM_BN_RUNNING_VAR_PLACEHOLDER,
                                                         CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER, CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER,
                                                         CUDNN_PARAM_YSUM_PLACEHOLDER, CUDNN_PARAM_YSQSUM_PLACEHOLDER,
                                                         CUDNN_PARAM_BN_SAVED_MEAN_PLACEHOLDER,
                                                         CUDNN_PARAM_BN_SAVED_INVSTD_PLACEHOLDER};
    for (int i = 0; i < (training ? 10 : 6); i++) tfused_const(c, all[i], &ph);
    size_t ws = 1;
    if (training) {
        tfused_const(c, CUDNN_PARAM_YSTATS_DESC, stats);
        CHECK_OK(cudnnMakeFusedOpsPlan(h, plan, c, &ws));
    } else {
        CHECK_OK(cudnnMakeFusedOpsPlan(h, plan, c, &ws));
    }
    CHECK(ws == 0);
    tfused_ptr(v, CUDNN_PTR_BN_SCALE, d_scale), tfused_ptr(v, CUDNN_PTR_BN_BIAS, d_bias);
    tfused_ptr(v, CUDNN_PTR_BN_RUNNING_MEAN, d_rmean), tfused_ptr(v, CUDNN_PTR_BN_RUNNING_VAR, d_rvar);
    tfused_ptr(v, CUDNN_PTR_BN_EQSCALE, d_eqs), tfused_ptr(v, CUDNN_PTR_BN_EQBIAS, d_eqb);
    int64_t count = m;
    double factor = 0.25, eps = 1e-3;
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_INT64_T_BN_ACCUMULATION_COUNT, &count));
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_DOUBLE_BN_EXP_AVG_FACTOR, &factor));
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_DOUBLE_BN_EPSILON, &eps));
    if (training) {
        /* a pointer its placeholder promised is missing: BAD_PARAM */
        CHECK_STATUS(cudnnFusedOpsExecute(h, plan, v), CUDNN_STATUS_BAD_PARAM);
        tfused_ptr(v, CUDNN_PTR_YSUM, d_ysum), tfused_ptr(v, CUDNN_PTR_YSQSUM, d_ysq);
        tfused_ptr(v, CUDNN_PTR_BN_SAVED_MEAN, d_smean), tfused_ptr(v, CUDNN_PTR_BN_SAVED_INVSTD, d_sinv);
    }
    if (!CHECK_OK(cudnnFusedOpsExecute(h, plan, v))) return;
    double want_s[7], want_b[7], want_rm[7], want_rv[7], want_inv[7], want_mean[7];
    for (int k = 0; k < C; k++) {
        double mu = training ? ysum[k] / m : rmean[k], va = training ? ysq[k] / m - mu * mu : rvar[k];
        double inv = 1 / sqrt(va + eps);
        want_mean[k] = mu, want_inv[k] = inv;
        want_s[k] = scale[k] * inv, want_b[k] = bias[k] - mu * scale[k] * inv;
        want_rm[k] = training ? (1 - factor) * rmean[k] + factor * mu : rmean[k];
        want_rv[k] = training ? (1 - factor) * rvar[k] + factor * va * m / (m - 1) : rvar[k];
    }
    tvalues_check(CUDNN_DATA_HALF, d_eqs, want_s, C, 1e-3, "eqScale");
    tvalues_check(CUDNN_DATA_HALF, d_eqb, want_b, C, 1e-3, "eqBias");
    tvalues_check(CUDNN_DATA_FLOAT, d_rmean, want_rm, C, 1e-5, "running mean");
    tvalues_check(CUDNN_DATA_FLOAT, d_rvar, want_rv, C, 1e-5, "running variance");
    if (training) {
        tvalues_check(CUDNN_DATA_FLOAT, d_smean, want_mean, C, 1e-5, "saved mean");
        tvalues_check(CUDNN_DATA_FLOAT, d_sinv, want_inv, C, 1e-5, "saved inverse std");
    }
    tfused_destroy(f);
    cudnnDestroyTensorDescriptor(stats), cudnnDestroyTensorDescriptor(params), cudnnDestroyTensorDescriptor(eq);
    void *bufs[] = {d_ysum, d_ysq, d_scale, d_bias, d_rmean, d_rvar, d_smean, d_sinv, d_eqs, d_eqb};
    for (int i = 0; i < 10; i++) tbuf_free(bufs[i]);
    free(mean), free(var), free(scale), free(bias), free(rmean), free(rvar);
}

TEST(fused_ops_bn_finalize_training_and_inference)
{
    check_bn_finalize(true);
    check_bn_finalize(false);
}

/* Ops 0 and 1: x' = x * eqScale + eqBias (rounded to x's type), then the forward convolution with
   per-channel statistics of y, or the filter gradient with dy. NCHW tensors of type t. */
static void check_conv_op(bool wgrad, cudnnDataType_t t)
{
    cudnnHandle_t h = test_handle();
    struct ref_conv r = {2, 2, 4, 6, 1, {6, 5}, {3, 3}, {0}, {0, 1}, {2, 1}, {1, 1}, false};
    ref_conv_out_dims(&r);
    long nx = ref_conv_x_count(&r), nw = ref_conv_w_count(&r), ny = ref_conv_y_count(&r);
    cudnnTensorDescriptor_t xd, yd, eqd = channel_tensor(t, r.c), sd = channel_tensor(CUDNN_DATA_FLOAT, r.k);
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK_OK(cudnnCreateTensorDescriptor(&xd)), CHECK_OK(cudnnCreateTensorDescriptor(&yd));
    CHECK_OK(cudnnCreateFilterDescriptor(&wd)), CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
    CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, t, r.n, r.c, r.in[0], r.in[1]));
    CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, t, r.n, r.k, r.out[0], r.out[1]));
    CHECK_OK(cudnnSetFilter4dDescriptor(wd, t, CUDNN_TENSOR_NCHW, r.k, r.c, r.filt[0], r.filt[1]));
    CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 0, 1, 2, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    /* float: FMA math, so that no backend rounds the operands to TF32 and fp32's tolerance holds */
    if (t == CUDNN_DATA_FLOAT) CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
    double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *y = tview_random(ny, -1, 1);
    double *s = tview_random(r.c, 0.5, 1.5), *b = tview_random(r.c, -0.5, 0.5);
    void *dx = tvalues_upload(t, x, nx), *dw = wgrad ? tbuf_alloc((size_t)nw * tdtype_size(t)) : tvalues_upload(t, w, nw);
    void *dy = wgrad ? tvalues_upload(t, y, ny) : tbuf_alloc((size_t)ny * tdtype_size(t));
    void *ds = tvalues_upload(t, s, r.c), *db = tvalues_upload(t, b, r.c), *dsum = tbuf_alloc(r.k * 4), *dsq = tbuf_alloc(r.k * 4);
    cudnnFusedOps_t ops = wgrad ? CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD : CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS;
    struct tfused f = tfused_create(ops, CUDNN_BATCHNORM_SPATIAL_PERSISTENT);
    cudnnFusedOpsConstParamPack_t c = f.c;
    cudnnFusedOpsVariantParamPack_t v = f.v;
    cudnnFusedOpsPlan_t plan = f.plan;
    cudnnFusedOpsPointerPlaceHolder_t ph = CUDNN_PTR_16B_ALIGNED;
    tfused_const(c, CUDNN_PARAM_XDESC, xd), tfused_const(c, CUDNN_PARAM_XDATA_PLACEHOLDER, &ph);
    tfused_const(c, CUDNN_PARAM_BN_EQSCALEBIAS_DESC, eqd);
    tfused_const(c, CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER, &ph), tfused_const(c, CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER, &ph);
    tfused_const(c, CUDNN_PARAM_CONV_DESC, cd);
    tfused_const(c, wgrad ? CUDNN_PARAM_DWDESC : CUDNN_PARAM_WDESC, wd);
    tfused_const(c, wgrad ? CUDNN_PARAM_DWDATA_PLACEHOLDER : CUDNN_PARAM_WDATA_PLACEHOLDER, &ph);
    tfused_const(c, wgrad ? CUDNN_PARAM_DYDESC : CUDNN_PARAM_YDESC, yd);
    tfused_const(c, wgrad ? CUDNN_PARAM_DYDATA_PLACEHOLDER : CUDNN_PARAM_YDATA_PLACEHOLDER, &ph);
    if (!wgrad) {
        tfused_const(c, CUDNN_PARAM_YSTATS_DESC, sd);
        tfused_const(c, CUDNN_PARAM_YSUM_PLACEHOLDER, &ph), tfused_const(c, CUDNN_PARAM_YSQSUM_PLACEHOLDER, &ph);
    }
    size_t ws_bytes = 0;
    if (!CHECK_OK(cudnnMakeFusedOpsPlan(h, plan, c, &ws_bytes))) return;
    CHECK(ws_bytes >= (size_t)nx * tdtype_size(t)); /* holds the scaled input */
    void *ws = tbuf_alloc(ws_bytes);
    tfused_ptr(v, CUDNN_PTR_XDATA, dx), tfused_ptr(v, CUDNN_PTR_BN_EQSCALE, ds), tfused_ptr(v, CUDNN_PTR_BN_EQBIAS, db);
    tfused_ptr(v, wgrad ? CUDNN_PTR_DWDATA : CUDNN_PTR_WDATA, dw), tfused_ptr(v, wgrad ? CUDNN_PTR_DYDATA : CUDNN_PTR_YDATA, dy);
    if (!wgrad) tfused_ptr(v, CUDNN_PTR_YSUM, dsum), tfused_ptr(v, CUDNN_PTR_YSQSUM, dsq);
    tfused_ptr(v, CUDNN_PTR_WORKSPACE, ws);
    size_t small = ws_bytes - 1;
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES, &small));
    CHECK_STATUS(cudnnFusedOpsExecute(h, plan, v), CUDNN_STATUS_BAD_PARAM); /* too little workspace */
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES, &ws_bytes));
    if (CHECK_OK(cudnnFusedOpsExecute(h, plan, v))) {
        unsigned char tmp[8];
        long per = nx / ((long)r.n * r.c);
        for (long i = 0; i < nx; i++) { /* the scaled input is stored in x's type */
            tstore(t, tmp, 0, x[i] * s[i / per % r.c] + b[i / per % r.c]);
            x[i] = tload(t, tmp, 0);
        }
        double tol = t == CUDNN_DATA_FLOAT ? 1e-4 : 2e-2;
        if (wgrad) {
            double *want = malloc(sizeof *want * (size_t)nw);
            ref_conv_bwd_filter(&r, x, y, want);
            tvalues_check(t, dw, want, nw, tol, "fused wgrad");
            free(want);
        } else {
            double *want = malloc(sizeof *want * (size_t)ny), *got = tvalues_download(t, dy, ny), sum[6] = {0}, sq[6] = {0};
            ref_conv_fwd(&r, x, w, want);
            tcompare(CUDNN_DATA_DOUBLE, got, want, ny, tol, "fused forward");
            long pq = ny / ((long)r.n * r.k);
            for (long i = 0; i < ny; i++) sum[i / pq % r.k] += got[i], sq[i / pq % r.k] += got[i] * got[i];
            tvalues_check(CUDNN_DATA_FLOAT, dsum, sum, r.k, 1e-4, "ySum");
            tvalues_check(CUDNN_DATA_FLOAT, dsq, sq, r.k, 1e-4, "ySqSum");
            free(want), free(got);
        }
    }
    tfused_destroy(f);
    cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(yd), cudnnDestroyTensorDescriptor(eqd);
    cudnnDestroyTensorDescriptor(sd), cudnnDestroyFilterDescriptor(wd), cudnnDestroyConvolutionDescriptor(cd);
    void *bufs[] = {dx, dw, dy, ds, db, dsum, dsq, ws};
    for (int i = 0; i < 8; i++) tbuf_free(bufs[i]);
    free(x), free(w), free(y), free(s), free(b);
}

TEST(fused_ops_scale_bias_conv_bnstats_and_wgrad)
{
    check_conv_op(false, CUDNN_DATA_FLOAT);
    check_conv_op(true, CUDNN_DATA_FLOAT);
    check_conv_op(false, CUDNN_DATA_HALF);
    check_conv_op(true, CUDNN_DATA_HALF);
}
