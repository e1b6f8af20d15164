/* fused_ops_train.c: the FusedOps API of cnn_train: constant and variant parameter packs, plans,
   execution.

   Main decision: the packs are complete (every label of the 8.2 headers can be set and read back)
   and keep copies of the descriptors they are given, not the handles, so that a descriptor the
   application destroys or changes afterwards does not alter a pack; Get writes the copy back into
   a descriptor the caller created. An activation descriptor is kept as its parameters (it is
   private to the activation file; see core/activation_desc.h). A plan keeps a copy of the pack it
   was made from. The four fused operations of cuDNN 8.2 are sequences of building blocks
   (problem/fused_ops.h) around the convolution registry, so they run on every backend and every
   configuration the convolution takes; the three the 8.2 headers reserve for future use answer
   NOT_SUPPORTED. The workspace holds the scaled and activated input of the convolution. */
#include "cnn/conv.h"
#include "problem/fused_ops.h"

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
    bool made;                                  /* a cudnnMakeFusedOpsPlan succeeded */
    struct cudnnFusedOpsConstParamStruct pack;  /* the pack it was made from */
    struct ocd_conv_problem conv;               /* ops 0 and 1: the convolution, without data */
    int algo;                                   /* ops 0 and 1: the convolution algorithm */
    bool scale, bias, relu, stats;              /* the optional steps that are on */
    size_t affine_bytes, workspace_bytes;       /* the scaled input, and all the workspace */
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

/* ---- making a plan ---------------------------------------------------------------------------------- */

static const struct ocd_impl affine_impls[] = {
    OCD_IMPL_ENTRY("host:fused_affine", OCD_BACKEND_HOST, NULL, NULL, ocd_host_fused_affine),
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:fused_affine", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_fused_affine),
#endif
};

static const struct ocd_impl bn_finalize_impls[] = {
    OCD_IMPL_ENTRY("host:fused_bn_finalize", OCD_BACKEND_HOST, NULL, NULL, ocd_host_fused_bn_finalize),
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:fused_bn_finalize", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_fused_bn_finalize),
#endif
};

/* Each pointer placeholder and the variant label of its pointer. */
static const struct {
    cudnnFusedOpsConstParamLabel_t placeholder;
    cudnnFusedOpsVariantParamLabel_t ptr;
} pointers[] = {
    {CUDNN_PARAM_XDATA_PLACEHOLDER, CUDNN_PTR_XDATA}, {CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER, CUDNN_PTR_BN_EQSCALE},
    {CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER, CUDNN_PTR_BN_EQBIAS}, {CUDNN_PARAM_WDATA_PLACEHOLDER, CUDNN_PTR_WDATA},
    {CUDNN_PARAM_DWDATA_PLACEHOLDER, CUDNN_PTR_DWDATA}, {CUDNN_PARAM_YDATA_PLACEHOLDER, CUDNN_PTR_YDATA},
    {CUDNN_PARAM_DYDATA_PLACEHOLDER, CUDNN_PTR_DYDATA}, {CUDNN_PARAM_YSUM_PLACEHOLDER, CUDNN_PTR_YSUM},
    {CUDNN_PARAM_YSQSUM_PLACEHOLDER, CUDNN_PTR_YSQSUM}, {CUDNN_PARAM_BN_SCALE_PLACEHOLDER, CUDNN_PTR_BN_SCALE},
    {CUDNN_PARAM_BN_BIAS_PLACEHOLDER, CUDNN_PTR_BN_BIAS}, {CUDNN_PARAM_BN_SAVED_MEAN_PLACEHOLDER, CUDNN_PTR_BN_SAVED_MEAN},
    {CUDNN_PARAM_BN_SAVED_INVSTD_PLACEHOLDER, CUDNN_PTR_BN_SAVED_INVSTD},
    {CUDNN_PARAM_BN_RUNNING_MEAN_PLACEHOLDER, CUDNN_PTR_BN_RUNNING_MEAN},
    {CUDNN_PARAM_BN_RUNNING_VAR_PLACEHOLDER, CUDNN_PTR_BN_RUNNING_VAR}, {CUDNN_PARAM_ZDATA_PLACEHOLDER, CUDNN_PTR_ZDATA},
    {CUDNN_PARAM_BN_Z_EQSCALE_PLACEHOLDER, CUDNN_PTR_BN_Z_EQSCALE}, {CUDNN_PARAM_BN_Z_EQBIAS_PLACEHOLDER, CUDNN_PTR_BN_Z_EQBIAS},
    {CUDNN_PARAM_ACTIVATION_BITMASK_PLACEHOLDER, CUDNN_PTR_ACTIVATION_BITMASK},
    {CUDNN_PARAM_DXDATA_PLACEHOLDER, CUDNN_PTR_DXDATA}, {CUDNN_PARAM_DZDATA_PLACEHOLDER, CUDNN_PTR_DZDATA},
    {CUDNN_PARAM_BN_DSCALE_PLACEHOLDER, CUDNN_PTR_BN_DSCALE}, {CUDNN_PARAM_BN_DBIAS_PLACEHOLDER, CUDNN_PTR_BN_DBIAS},
};

static bool on(const struct cudnnFusedOpsConstParamStruct *c, cudnnFusedOpsConstParamLabel_t placeholder)
{
    return c->placeholders[placeholder] != CUDNN_PTR_NULL;
}

/* A descriptor the operation needs, and the placeholders of the data that go with it. */
static cudnnStatus_t need(const struct cudnnFusedOpsConstParamStruct *c, cudnnFusedOpsConstParamLabel_t desc,
                          const cudnnFusedOpsConstParamLabel_t *placeholders, int n)
{
    if (!c->has[desc]) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the pack has no descriptor for label %d", (int)desc);
    for (int i = 0; i < n; i++)
        if (!on(c, placeholders[i]))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "placeholder %d is CUDNN_PTR_NULL but the operation needs it",
                            (int)placeholders[i]);
    return CUDNN_STATUS_SUCCESS;
}

/* A per-channel tensor: 1 x channels x 1 x 1 (x 1), of a floating-point type. */
static cudnnStatus_t channel_desc(const struct cudnnTensorStruct *t, int64_t channels, const char *name)
{
    bool ok = t->nb_dims >= 2 && t->dims[1] == channels;
    for (int d = 0; d < t->nb_dims && ok; d++) ok = d == 1 || t->dims[d] == 1;
    if (!ok) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s must be 1 x %lld x 1 x 1", name, (long long)channels);
    if (t->dtype != CUDNN_DATA_FLOAT && t->dtype != CUDNN_DATA_HALF && t->dtype != CUDNN_DATA_BFLOAT16 &&
        t->dtype != CUDNN_DATA_DOUBLE)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s must be of a floating-point type", name);
    return CUDNN_STATUS_SUCCESS;
}

/* The batch normalization of the fused operations is per channel. */
static cudnnStatus_t per_channel_mode(const struct cudnnFusedOpsConstParamStruct *c)
{
    if (c->bn_mode != CUDNN_BATCHNORM_SPATIAL && c->bn_mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the fused operations take per-channel (SPATIAL) batch normalization only");
    return CUDNN_STATUS_SUCCESS;
}

/* The scale, bias and activation applied to x before the convolution (ops 0 and 1). */
static cudnnStatus_t plan_affine(cudnnFusedOpsPlan_t plan)
{
    const struct cudnnFusedOpsConstParamStruct *c = &plan->pack;
    OCD_TRY(per_channel_mode(c));
    bool eq = c->has[CUDNN_PARAM_BN_EQSCALEBIAS_DESC];
    plan->scale = eq && on(c, CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER);
    plan->bias = eq && on(c, CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER);
    if (plan->scale || plan->bias)
        OCD_TRY(channel_desc(&c->tensors[CUDNN_PARAM_BN_EQSCALEBIAS_DESC], plan->conv.x.dims[1], "the BN_EQSCALEBIAS descriptor"));
    if (c->has[CUDNN_PARAM_ACTIVATION_DESC]) {
        if (c->act.mode != CUDNN_ACTIVATION_RELU && c->act.mode != CUDNN_ACTIVATION_IDENTITY)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the fused operations take RELU or IDENTITY activations only");
        plan->relu = c->act.mode == CUDNN_ACTIVATION_RELU;
    }
    if (plan->scale || plan->bias || plan->relu) /* the scaled input, in x's layout, 256-byte aligned */
        plan->affine_bytes = ocd_ws_round((size_t)ocd_view_span_bytes(&plan->conv.x));
    return CUDNN_STATUS_SUCCESS;
}

/* The convolution of ops 0 and 1: validated as the API validates it, with the first algorithm of
   the heuristic. */
static cudnnStatus_t plan_conv(cudnnHandle_t handle, cudnnFusedOpsPlan_t plan, enum ocd_conv_dir dir)
{
    const struct cudnnFusedOpsConstParamStruct *c = &plan->pack;
    cudnnFusedOpsConstParamLabel_t w = dir == OCD_CONV_FWD ? CUDNN_PARAM_WDESC : CUDNN_PARAM_DWDESC;
    cudnnFusedOpsConstParamLabel_t y = dir == OCD_CONV_FWD ? CUDNN_PARAM_YDESC : CUDNN_PARAM_DYDESC;
    const cudnnFusedOpsConstParamLabel_t xp[] = {CUDNN_PARAM_XDATA_PLACEHOLDER};
    const cudnnFusedOpsConstParamLabel_t wp[] = {dir == OCD_CONV_FWD ? CUDNN_PARAM_WDATA_PLACEHOLDER : CUDNN_PARAM_DWDATA_PLACEHOLDER};
    const cudnnFusedOpsConstParamLabel_t yp[] = {dir == OCD_CONV_FWD ? CUDNN_PARAM_YDATA_PLACEHOLDER : CUDNN_PARAM_DYDATA_PLACEHOLDER};
    OCD_TRY(need(c, CUDNN_PARAM_XDESC, xp, 1));
    OCD_TRY(need(c, w, wp, 1));
    OCD_TRY(need(c, y, yp, 1));
    OCD_TRY(need(c, CUDNN_PARAM_CONV_DESC, NULL, 0));
    OCD_TRY(ocd_conv_problem_of(&plan->conv, dir, &c->tensors[CUDNN_PARAM_XDESC], "XDESC", &c->filters[w], "WDESC",
                                &c->conv, &c->tensors[y], "YDESC"));
    OCD_TRY(plan_affine(plan));
    plan->algo = ocd_conv_preferred_algo(handle, &plan->conv);
    if (plan->algo < 0)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "no algorithm on the %s backend runs the convolution", handle->backend->name);
    char why[1024];
    struct ocd_impl_plan conv_plan;
    const struct ocd_conv_impl *impl = ocd_conv_pick(handle, &plan->conv, plan->algo, why, sizeof why, &conv_plan);
    plan->workspace_bytes = plan->affine_bytes + ocd_conv_impl_workspace(handle, impl, &plan->conv, &conv_plan);
    if (dir == OCD_CONV_FWD && c->has[CUDNN_PARAM_YSTATS_DESC] && on(c, CUDNN_PARAM_YSUM_PLACEHOLDER)) {
        OCD_TRY(channel_desc(&c->tensors[CUDNN_PARAM_YSTATS_DESC], plan->conv.y.dims[1], "YSTATS_DESC"));
        plan->stats = true;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* The batch-normalization finalize (ops 2 and 3): per-channel tensors of one channel count. */
static cudnnStatus_t plan_bn_finalize(cudnnFusedOpsPlan_t plan, bool training)
{
    const struct cudnnFusedOpsConstParamStruct *c = &plan->pack;
    const cudnnFusedOpsConstParamLabel_t stats[] = {CUDNN_PARAM_YSUM_PLACEHOLDER, CUDNN_PARAM_YSQSUM_PLACEHOLDER};
    const cudnnFusedOpsConstParamLabel_t params[] = {CUDNN_PARAM_BN_SCALE_PLACEHOLDER, CUDNN_PARAM_BN_BIAS_PLACEHOLDER,
                                                     CUDNN_PARAM_BN_RUNNING_MEAN_PLACEHOLDER,
                                                     CUDNN_PARAM_BN_RUNNING_VAR_PLACEHOLDER};
    const cudnnFusedOpsConstParamLabel_t eq[] = {CUDNN_PARAM_BN_EQSCALE_PLACEHOLDER, CUDNN_PARAM_BN_EQBIAS_PLACEHOLDER};
    OCD_TRY(need(c, CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC, params, training ? 2 : 4)); /* running ones optional in training */
    OCD_TRY(need(c, CUDNN_PARAM_BN_EQSCALEBIAS_DESC, eq, 2));
    if (training) OCD_TRY(need(c, CUDNN_PARAM_YSTATS_DESC, stats, 2));
    OCD_TRY(per_channel_mode(c));
    int64_t channels = c->tensors[CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC].dims[1];
    OCD_TRY(channel_desc(&c->tensors[CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC], channels, "BN_SCALEBIAS_MEANVAR_DESC"));
    OCD_TRY(channel_desc(&c->tensors[CUDNN_PARAM_BN_EQSCALEBIAS_DESC], channels, "BN_EQSCALEBIAS_DESC"));
    if (training) OCD_TRY(channel_desc(&c->tensors[CUDNN_PARAM_YSTATS_DESC], channels, "YSTATS_DESC"));
    return CUDNN_STATUS_SUCCESS;
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
    /* plan on a scratch copy: a failed make leaves the plan as it was */
    struct cudnnFusedOpsPlanStruct made;
    memset(&made, 0, sizeof made);
    made.ops = plan->ops;
    COPY_DESC(&made.pack, constPack);
    switch (plan->ops) {
    case CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS: OCD_TRY(plan_conv(handle, &made, OCD_CONV_FWD)); break;
    case CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD: OCD_TRY(plan_conv(handle, &made, OCD_CONV_BWD_FILTER)); break;
    case CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING: OCD_TRY(plan_bn_finalize(&made, true)); break;
    case CUDNN_FUSED_BN_FINALIZE_STATISTICS_INFERENCE: OCD_TRY(plan_bn_finalize(&made, false)); break;
    default:
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "fused ops %d is reserved for future use in cuDNN 8.2", (int)plan->ops);
    }
    made.made = true;
    COPY_DESC(plan, &made);
    *workspaceSizeInBytes = plan->workspace_bytes;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- execution ------------------------------------------------------------------------------------- */

/* Runs the affine step into the workspace when the plan has one; *src becomes its result. */
static cudnnStatus_t run_affine(cudnnHandle_t handle, cudnnFusedOpsPlan_t plan, cudnnFusedOpsVariantParamPack_t v,
                                const void **src)
{
    if (plan->affine_bytes == 0) return CUDNN_STATUS_SUCCESS;
    struct ocd_fused_affine a = {plan->conv.x, *src, v->ptrs[CUDNN_PTR_WORKSPACE], {0}, NULL, NULL, plan->relu};
    if (plan->scale || plan->bias) ocd_tensor_view_of(&plan->pack.tensors[CUDNN_PARAM_BN_EQSCALEBIAS_DESC], &a.pv);
    a.scale = plan->scale ? v->ptrs[CUDNN_PTR_BN_EQSCALE] : NULL;
    a.bias = plan->bias ? v->ptrs[CUDNN_PTR_BN_EQBIAS] : NULL;
    OCD_TRY(ocd_impl_run(handle, affine_impls, OCD_ARRAY_LEN(affine_impls), &a, "cudnnFusedOpsExecute"));
    *src = a.dst;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t run_conv(cudnnHandle_t handle, cudnnFusedOpsPlan_t plan, cudnnFusedOpsVariantParamPack_t v)
{
    struct ocd_conv_problem p = plan->conv;
    bool fwd = p.dir == OCD_CONV_FWD;
    const void *x = v->ptrs[CUDNN_PTR_XDATA];
    OCD_TRY(run_affine(handle, plan, v, &x));
    p.x_data = (void *)x;
    p.w_data = v->ptrs[fwd ? CUDNN_PTR_WDATA : CUDNN_PTR_DWDATA];
    p.y_data = v->ptrs[fwd ? CUDNN_PTR_YDATA : CUDNN_PTR_DYDATA];
    char *ws = v->ptrs[CUDNN_PTR_WORKSPACE];
    OCD_TRY(ocd_conv_execute(handle, &p, plan->algo, ws ? ws + plan->affine_bytes : NULL,
                             plan->workspace_bytes - plan->affine_bytes, "cudnnFusedOpsExecute"));
    if (!plan->stats) return CUDNN_STATUS_SUCCESS;
    struct ocd_conv_bias_problem st = {p.y, {0}, p.y_data, v->ptrs[CUDNN_PTR_YSUM], v->ptrs[CUDNN_PTR_YSQSUM], 1, 0};
    ocd_tensor_view_of(&plan->pack.tensors[CUDNN_PARAM_YSTATS_DESC], &st.db);
    return ocd_impl_run(handle, ocd_conv_bias_grad_impls, ocd_conv_bias_grad_impl_count, &st, "cudnnFusedOpsExecute");
}

static cudnnStatus_t run_bn_finalize(cudnnHandle_t handle, cudnnFusedOpsPlan_t plan, cudnnFusedOpsVariantParamPack_t v)
{
    const struct cudnnFusedOpsConstParamStruct *c = &plan->pack;
    struct ocd_fused_bn_finalize f;
    memset(&f, 0, sizeof f);
    f.training = plan->ops == CUDNN_FUSED_BN_FINALIZE_STATISTICS_TRAINING;
    if (f.training) {
        if (v->accumulation_count < 1)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "CUDNN_SCALAR_INT64_T_BN_ACCUMULATION_COUNT is %lld",
                            (long long)v->accumulation_count);
        ocd_tensor_view_of(&c->tensors[CUDNN_PARAM_YSTATS_DESC], &f.stats_v);
        f.ysum = v->ptrs[CUDNN_PTR_YSUM], f.ysqsum = v->ptrs[CUDNN_PTR_YSQSUM];
        f.saved_mean = v->ptrs[CUDNN_PTR_BN_SAVED_MEAN], f.saved_invstd = v->ptrs[CUDNN_PTR_BN_SAVED_INVSTD];
    }
    ocd_tensor_view_of(&c->tensors[CUDNN_PARAM_BN_SCALEBIAS_MEANVAR_DESC], &f.pv);
    ocd_tensor_view_of(&c->tensors[CUDNN_PARAM_BN_EQSCALEBIAS_DESC], &f.eq_v);
    f.scale = v->ptrs[CUDNN_PTR_BN_SCALE], f.bias = v->ptrs[CUDNN_PTR_BN_BIAS];
    f.running_mean = v->ptrs[CUDNN_PTR_BN_RUNNING_MEAN], f.running_var = v->ptrs[CUDNN_PTR_BN_RUNNING_VAR];
    f.eq_scale = v->ptrs[CUDNN_PTR_BN_EQSCALE], f.eq_bias = v->ptrs[CUDNN_PTR_BN_EQBIAS];
    f.count = v->accumulation_count, f.factor = v->exp_avg_factor, f.epsilon = v->epsilon;
    return ocd_impl_run(handle, bn_finalize_impls, OCD_ARRAY_LEN(bn_finalize_impls), &f, "cudnnFusedOpsExecute");
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
    if (!plan->made) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the plan was not made by a successful cudnnMakeFusedOpsPlan");
    /* every pointer as its placeholder promised: NULL for CUDNN_PTR_NULL, else set (and 16-byte
       aligned when promised so) */
    for (size_t i = 0; i < OCD_ARRAY_LEN(pointers); i++) {
        cudnnFusedOpsPointerPlaceHolder_t ph = plan->pack.placeholders[pointers[i].placeholder];
        const void *ptr = varPack->ptrs[pointers[i].ptr];
        if ((ph == CUDNN_PTR_NULL) != (ptr == NULL) || (ph == CUDNN_PTR_16B_ALIGNED && (uintptr_t)ptr % 16 != 0))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "pointer label %d disagrees with its placeholder (%d)",
                            (int)pointers[i].ptr, (int)ph);
    }
    if (plan->workspace_bytes > 0 &&
        (varPack->ptrs[CUDNN_PTR_WORKSPACE] == NULL || varPack->workspace_bytes < plan->workspace_bytes))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the plan needs %zu bytes of workspace; %zu given%s", plan->workspace_bytes,
                        varPack->workspace_bytes, varPack->ptrs[CUDNN_PTR_WORKSPACE] ? "" : " (NULL)");
    if (plan->ops == CUDNN_FUSED_SCALE_BIAS_ACTIVATION_CONV_BNSTATS || plan->ops == CUDNN_FUSED_SCALE_BIAS_ACTIVATION_WGRAD)
        return run_conv(handle, plan, varPack);
    return run_bn_finalize(handle, plan, varPack);
}
