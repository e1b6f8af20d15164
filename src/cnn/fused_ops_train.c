/* fused_ops_train.c: the FusedOps API of cnn_train: constant and variant parameter packs, plans,
   execution.

   Main decision: the packs are complete (every label of the 8.2 headers can be set and read back)
   and keep copies of the descriptors they are given, not the handles, so that a descriptor the
   application destroys or changes afterwards does not alter a pack; Get writes the copy back into
   a descriptor the caller created. An activation descriptor is kept as its parameters (it is
   private to the activation file; see core/activation_desc.h). No fused operation is executed
   yet: cudnnMakeFusedOpsPlan answers NOT_SUPPORTED with the reason (ops 4 to 6 are reserved for
   future use by the 8.2 headers themselves), so cudnnFusedOpsExecute never finds a made plan. */
#include "cnn/conv.h"

#include "core/activation_desc.h"

#include <string.h>

#define NB_CONST_LABELS (CUDNN_PARAM_BN_DBIAS_PLACEHOLDER + 1)
#define NB_PTR_LABELS (CUDNN_PTR_BN_DBIAS + 1)

enum label_kind { TENSOR_DESC, FILTER_DESC, CONV_DESC, ACT_DESC, PLACEHOLDER, BN_MODE };

struct cudnnFusedOpsConstParamStruct {
    struct ocd_object obj;
    cudnnFusedOps_t ops;
    bool has[NB_CONST_LABELS]; /* a descriptor was stored for the label */
    struct cudnnTensorStruct tensors[NB_CONST_LABELS];
    struct cudnnFilterStruct filters[NB_CONST_LABELS];
    struct cudnnConvolutionStruct conv;
    struct ocd_activation_params act;
    cudnnFusedOpsPointerPlaceHolder_t placeholders[NB_CONST_LABELS];
    cudnnBatchNormMode_t bn_mode;
};

struct cudnnFusedOpsVariantParamStruct {
    struct ocd_object obj;
    cudnnFusedOps_t ops;
    void *ptrs[NB_PTR_LABELS];
    size_t workspace_bytes;
    int64_t accumulation_count;
    double exp_avg_factor, epsilon;
};

struct cudnnFusedOpsPlanStruct {
    struct ocd_object obj;
    cudnnFusedOps_t ops;
};

static bool ops_valid(cudnnFusedOps_t ops)
{
    return ops >= CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS && ops <= CUDNN_FUSED_DACTIVATION_FORK_DBATCHNORM;
}

static enum label_kind kind_of(cudnnFusedOpsConstParamLabel_t l)
{
    switch (l) {
    case CUDNN_PARAM_XDESC: case CUDNN_PARAM_BN_EQSCALEBIAS_DESC: case CUDNN_PARAM_YDESC: case CUDNN_PARAM_DYDESC:
    case CUDNN_PARAM_YSTATS_DESC: case CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC: case CUDNN_PARAM_ZDESC:
    case CUDNN_PARAM_BN_Z_EQSCALEBIAS_DESC: case CUDNN_PARAM_ACTIVATION_BITMASK_DESC: case CUDNN_PARAM_DXDESC:
    case CUDNN_PARAM_DZDESC: return TENSOR_DESC;
    case CUDNN_PARAM_WDESC: case CUDNN_PARAM_DWDESC: return FILTER_DESC;
    case CUDNN_PARAM_CONV_DESC: return CONV_DESC;
    case CUDNN_PARAM_ACTIVATION_DESC: return ACT_DESC;
    case CUDNN_PARAM_BN_MODE: return BN_MODE;
    default: return PLACEHOLDER;
    }
}

/* ---- constant parameter packs -------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateFusedOpsConstParamPack(cudnnFusedOpsConstParamPack_t *constPack, cudnnFusedOps_t ops)
{
    OCD_LOG_API("constPack=%p ops=%d", (void *)constPack, (int)ops);
    if (constPack == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "constPack is NULL");
    if (!ops_valid(ops)) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid fused ops %d", (int)ops);
    cudnnFusedOpsConstParamPack_t p;
    OCD_TRY(ocd_object_create(OCD_OBJ_FUSED_CONST_PACK, sizeof *p, (void **)&p));
    p->ops = ops;
    p->bn_mode = CUDNN_BATCHNORM_PER_ACTIVATION; /* the documented default; placeholders are PTR_NULL (0) */
    *constPack = p;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyFusedOpsConstParamPack(cudnnFusedOpsConstParamPack_t constPack)
{
    OCD_LOG_API("constPack=%p", (void *)constPack);
    if (constPack == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_FUSED_CONST_PACK, constPack);
}

/* Copies a descriptor's contents but not its object header. */
#define COPY_DESC(dst, src)                                                                     \
    do {                                                                                        \
        struct ocd_object keep_ = (dst)->obj;                                                   \
        *(dst) = *(src);                                                                        \
        (dst)->obj = keep_;                                                                     \
    } while (0)

cudnnStatus_t CUDNNWINAPI cudnnSetFusedOpsConstParamPackAttribute(cudnnFusedOpsConstParamPack_t constPack,
                                                                  cudnnFusedOpsConstParamLabel_t paramLabel,
                                                                  const void *param)
{
    OCD_LOG_API("constPack=%p paramLabel=%d param=%p", (void *)constPack, (int)paramLabel, param);
    OCD_CHECK_OBJECT(OCD_OBJ_FUSED_CONST_PACK, constPack);
    if ((int)paramLabel < 0 || paramLabel >= NB_CONST_LABELS)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid label %d", (int)paramLabel);
    enum label_kind kind = kind_of(paramLabel);
    if (param == NULL && (kind == PLACEHOLDER || kind == BN_MODE))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "param is NULL for label %d", (int)paramLabel);
    struct ocd_tensor_view v;
    struct ocd_activation_params act;
    switch (kind) {
    case TENSOR_DESC:
        if (param != NULL) {
            OCD_TRY(ocd_tensor_get((cudnnTensorDescriptor_t)param, "param", &v));
            COPY_DESC(&constPack->tensors[paramLabel], (const struct cudnnTensorStruct *)param);
        }
        break;
    case FILTER_DESC:
        if (param != NULL) {
            OCD_TRY(ocd_filter_get((cudnnFilterDescriptor_t)param, "param", &v));
            COPY_DESC(&constPack->filters[paramLabel], (const struct cudnnFilterStruct *)param);
        }
        break;
    case CONV_DESC:
        if (param != NULL) {
            OCD_TRY(ocd_conv_desc_get((cudnnConvolutionDescriptor_t)param, "param"));
            COPY_DESC(&constPack->conv, (const struct cudnnConvolutionStruct *)param);
        }
        break;
    case ACT_DESC:
        if (param != NULL) {
            OCD_TRY(ocd_activation_params((cudnnActivationDescriptor_t)param, "param", &act));
            constPack->act = act;
        }
        break;
    case PLACEHOLDER: {
        cudnnFusedOpsPointerPlaceHolder_t ph = *(const cudnnFusedOpsPointerPlaceHolder_t *)param;
        if (ph != CUDNN_PTR_NULL && ph != CUDNN_PTR_ELEM_ALIGNED && ph != CUDNN_PTR_16B_ALIGNED)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid pointer placeholder %d", (int)ph);
        constPack->placeholders[paramLabel] = ph;
        return CUDNN_STATUS_SUCCESS;
    }
    case BN_MODE: {
        cudnnBatchNormMode_t mode = *(const cudnnBatchNormMode_t *)param;
        if (mode != CUDNN_BATCHNORM_PER_ACTIVATION && mode != CUDNN_BATCHNORM_SPATIAL &&
            mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid batch normalization mode %d", (int)mode);
        constPack->bn_mode = mode;
        return CUDNN_STATUS_SUCCESS;
    }
    }
    constPack->has[paramLabel] = param != NULL; /* a NULL descriptor clears the label */
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetFusedOpsConstParamPackAttribute(const cudnnFusedOpsConstParamPack_t constPack,
                                                                  cudnnFusedOpsConstParamLabel_t paramLabel,
                                                                  void *param, int *isNULL)
{
    OCD_LOG_API("constPack=%p paramLabel=%d param=%p isNULL=%p", (void *)constPack, (int)paramLabel, param,
                (void *)isNULL);
    OCD_CHECK_OBJECT(OCD_OBJ_FUSED_CONST_PACK, constPack);
    if ((int)paramLabel < 0 || paramLabel >= NB_CONST_LABELS)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid label %d", (int)paramLabel);
    if (param == NULL || isNULL == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "param or isNULL is NULL");
    enum label_kind kind = kind_of(paramLabel);
    bool has = constPack->has[paramLabel];
    switch (kind) {
    case TENSOR_DESC:
        OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, (cudnnTensorDescriptor_t)param);
        if (has) COPY_DESC((struct cudnnTensorStruct *)param, &constPack->tensors[paramLabel]);
        break;
    case FILTER_DESC:
        OCD_CHECK_OBJECT(OCD_OBJ_FILTER, (cudnnFilterDescriptor_t)param);
        if (has) COPY_DESC((struct cudnnFilterStruct *)param, &constPack->filters[paramLabel]);
        break;
    case CONV_DESC:
        OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, (cudnnConvolutionDescriptor_t)param);
        if (has) COPY_DESC((struct cudnnConvolutionStruct *)param, &constPack->conv);
        break;
    case ACT_DESC:
        if (has) OCD_TRY(ocd_activation_set_params((cudnnActivationDescriptor_t)param, "param", &constPack->act));
        else OCD_TRY(ocd_activation_params((cudnnActivationDescriptor_t)param, "param", &(struct ocd_activation_params){0}));
        break;
    case PLACEHOLDER:
        *(cudnnFusedOpsPointerPlaceHolder_t *)param = constPack->placeholders[paramLabel];
        has = true;
        break;
    case BN_MODE:
        *(cudnnBatchNormMode_t *)param = constPack->bn_mode;
        has = true;
        break;
    }
    *isNULL = !has;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- variant parameter packs ---------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateFusedOpsVariantParamPack(cudnnFusedOpsVariantParamPack_t *varPack,
                                                              cudnnFusedOps_t ops)
{
    OCD_LOG_API("varPack=%p ops=%d", (void *)varPack, (int)ops);
    if (varPack == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "varPack is NULL");
    if (!ops_valid(ops)) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid fused ops %d", (int)ops);
    cudnnFusedOpsVariantParamPack_t p;
    OCD_TRY(ocd_object_create(OCD_OBJ_FUSED_VARIANT_PACK, sizeof *p, (void **)&p));
    p->ops = ops;
    *varPack = p;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyFusedOpsVariantParamPack(cudnnFusedOpsVariantParamPack_t varPack)
{
    OCD_LOG_API("varPack=%p", (void *)varPack);
    if (varPack == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_FUSED_VARIANT_PACK, varPack);
}

/* PTR labels pass the pointer itself to Set and a void ** to Get; SCALAR labels a host pointer to
   the scalar both ways. `set` chooses the direction; the scalar's bytes are copied. */
static cudnnStatus_t variant_access(cudnnFusedOpsVariantParamPack_t p, cudnnFusedOpsVariantParamLabel_t label,
                                    void *ptr, bool set)
{
    void *field;
    size_t bytes;
    switch (label) {
    case CUDNN_SCALAR_SIZE_T_WORKSPACE_SIZE_IN_BYTES: field = &p->workspace_bytes, bytes = sizeof(size_t); break;
    case CUDNN_SCALAR_INT64_T_BN_ACCUMULATION_COUNT: field = &p->accumulation_count, bytes = sizeof(int64_t); break;
    case CUDNN_SCALAR_DOUBLE_BN_EXP_AVG_FACTOR: field = &p->exp_avg_factor, bytes = sizeof(double); break;
    case CUDNN_SCALAR_DOUBLE_BN_EPSILON: field = &p->epsilon, bytes = sizeof(double); break;
    default:
        if ((int)label < 0 || label >= NB_PTR_LABELS)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid label %d", (int)label);
        if (set) p->ptrs[label] = ptr;
        else if (ptr == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "ptr is NULL");
        else *(void **)ptr = p->ptrs[label];
        return CUDNN_STATUS_SUCCESS;
    }
    if (ptr == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "ptr is NULL for scalar label %d", (int)label);
    if (set) memcpy(field, ptr, bytes);
    else memcpy(ptr, field, bytes);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetFusedOpsVariantParamPackAttribute(cudnnFusedOpsVariantParamPack_t varPack,
                                                                    cudnnFusedOpsVariantParamLabel_t paramLabel,
                                                                    void *ptr)
{
    OCD_LOG_API("varPack=%p paramLabel=%d ptr=%p", (void *)varPack, (int)paramLabel, ptr);
    OCD_CHECK_OBJECT(OCD_OBJ_FUSED_VARIANT_PACK, varPack);
    return variant_access(varPack, paramLabel, ptr, true);
}

cudnnStatus_t CUDNNWINAPI cudnnGetFusedOpsVariantParamPackAttribute(const cudnnFusedOpsVariantParamPack_t varPack,
                                                                    cudnnFusedOpsVariantParamLabel_t paramLabel,
                                                                    void *ptr)
{
    OCD_LOG_API("varPack=%p paramLabel=%d ptr=%p", (void *)varPack, (int)paramLabel, ptr);
    OCD_CHECK_OBJECT(OCD_OBJ_FUSED_VARIANT_PACK, varPack);
    return variant_access(varPack, paramLabel, ptr, false);
}

/* ---- plans ---------------------------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateFusedOpsPlan(cudnnFusedOpsPlan_t *plan, cudnnFusedOps_t ops)
{
    OCD_LOG_API("plan=%p ops=%d", (void *)plan, (int)ops);
    if (plan == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "plan is NULL");
    if (!ops_valid(ops)) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid fused ops %d", (int)ops);
    cudnnFusedOpsPlan_t p;
    OCD_TRY(ocd_object_create(OCD_OBJ_FUSED_PLAN, sizeof *p, (void **)&p));
    p->ops = ops;
    *plan = p;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyFusedOpsPlan(cudnnFusedOpsPlan_t plan)
{
    OCD_LOG_API("plan=%p", (void *)plan);
    if (plan == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_FUSED_PLAN, plan);
}

cudnnStatus_t CUDNNWINAPI cudnnMakeFusedOpsPlan(cudnnHandle_t handle, cudnnFusedOpsPlan_t plan,
                                                const cudnnFusedOpsConstParamPack_t constPack,
                                                size_t *workspaceSizeInBytes)
{
    OCD_LOG_API("handle=%p plan=%p constPack=%p", (void *)handle, (void *)plan, (void *)constPack);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_FUSED_PLAN, plan);
    OCD_CHECK_OBJECT(OCD_OBJ_FUSED_CONST_PACK, constPack);
    if (workspaceSizeInBytes == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "workspaceSizeInBytes is NULL");
    if (plan->ops != constPack->ops)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the plan is for fused ops %d, the pack for %d", (int)plan->ops,
                        (int)constPack->ops);
    if (plan->ops >= CUDNN_FUSED_CONV_SCALE_BIAS_ADD_ACTIVATION)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "fused ops %d is reserved for future use in cuDNN 8.2", (int)plan->ops);
    return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "fused ops %d has no implementation on the %s backend yet",
                    (int)plan->ops, handle->backend->name);
}

cudnnStatus_t CUDNNWINAPI cudnnFusedOpsExecute(cudnnHandle_t handle, const cudnnFusedOpsPlan_t plan,
                                               cudnnFusedOpsVariantParamPack_t varPack)
{
    OCD_LOG_API("handle=%p plan=%p varPack=%p", (void *)handle, (void *)plan, (void *)varPack);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_FUSED_PLAN, plan);
    OCD_CHECK_OBJECT(OCD_OBJ_FUSED_VARIANT_PACK, varPack);
    if (plan->ops != varPack->ops)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the plan is for fused ops %d, the pack for %d", (int)plan->ops,
                        (int)varPack->ops);
    /* cudnnMakeFusedOpsPlan succeeds for no fused operation yet, so no plan here was made */
    return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the plan was not made by a successful cudnnMakeFusedOpsPlan");
}
