/* fused_ops.c: tests of the FusedOps API: parameter packs (every label set and read back,
   descriptors kept as copies), plans and their statuses. */
#include "test.h"

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

TEST(fused_ops_plans_report_not_supported)
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
        CHECK_STATUS(cudnnMakeFusedOpsPlan(h, plan, c, &ws), CUDNN_STATUS_NOT_SUPPORTED);
        CHECK(ws == 77);
        CHECK_STATUS(cudnnFusedOpsExecute(h, plan, v), CUDNN_STATUS_BAD_PARAM); /* never made */
        CHECK_STATUS(cudnnFusedOpsExecute(h, plan, NULL), CUDNN_STATUS_BAD_PARAM);
        CHECK_OK(cudnnDestroyFusedOpsPlan(plan));
        cudnnDestroyFusedOpsConstParamPack(c), cudnnDestroyFusedOpsConstParamPack(other);
        cudnnDestroyFusedOpsVariantParamPack(v);
    }
    CHECK_OK(cudnnDestroyFusedOpsPlan(NULL));
}
