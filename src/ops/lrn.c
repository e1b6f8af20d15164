/* lrn.c: the LRN descriptor (create, set, get, destroy) and cudnnLRNCrossChannelForward, with the
   validation cudnnLRNCrossChannelBackward (lrn_train.c) shares.

   Documented rules (cuDNN 8.2): Set takes lrnN in [CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N], lrnK >=
   CUDNN_LRN_MIN_K and lrnBeta >= CUDNN_LRN_MIN_BETA, else BAD_PARAM; Create sets n 5, alpha 1e-4,
   beta 0.75, k 2. The compute calls: BAD_PARAM for NULL pointers and a 5-D tensor that is not
   DHW-packed; NOT_SUPPORTED for data types or dims that differ between the tensors. (The
   documented BAD_PARAM for a rank of 2 or less cannot arise: no descriptor has fewer than 3
   dimensions.) Beyond the list: ranks 3 and above 5 are NOT_SUPPORTED (only 4-D and 5-D exist
   for these ops). An output overlapping x or dy is BAD_PARAM, since every output reads its
   neighbours; dx may lie on y, which the backward does not read (ocd_check_alias). */
#include "ops/lrn.h"

#include "core/dtype.h"

static const struct ocd_impl lrn_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:lrn_direct", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_lrn),
#endif
    OCD_IMPL_ENTRY("host:lrn_reference", OCD_BACKEND_HOST, NULL, NULL, ocd_host_lrn),
};

cudnnStatus_t ocd_lrn_get(cudnnLRNDescriptor_t desc, const struct cudnnLRNStruct **out)
{
    OCD_CHECK_OBJECT(OCD_OBJ_LRN, desc);
    *out = desc;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_lrn_run(cudnnHandle_t handle, const struct ocd_lrn_problem *p, const char *op)
{
    return ocd_impl_run(handle, lrn_impls, OCD_ARRAY_LEN(lrn_impls), p, op);
}

cudnnStatus_t CUDNNWINAPI cudnnCreateLRNDescriptor(cudnnLRNDescriptor_t *normDesc)
{
    OCD_LOG_API("normDesc=%p", (void *)normDesc);
    cudnnLRNDescriptor_t d;
    if (normDesc == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "normDesc is NULL");
    OCD_TRY(ocd_object_create(OCD_OBJ_LRN, sizeof *d, (void **)&d));
    d->n = 5;
    d->alpha = 1e-4;
    d->beta = 0.75;
    d->k = 2.0;
    *normDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyLRNDescriptor(cudnnLRNDescriptor_t lrnDesc)
{
    OCD_LOG_API("lrnDesc=%p", (void *)lrnDesc);
    if (lrnDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_LRN, lrnDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnSetLRNDescriptor(cudnnLRNDescriptor_t normDesc, unsigned lrnN,
                                                double lrnAlpha, double lrnBeta, double lrnK)
{
    OCD_LOG_API("normDesc=%p lrnN=%u lrnAlpha=%g lrnBeta=%g lrnK=%g", (void *)normDesc, lrnN, lrnAlpha,
                lrnBeta, lrnK);
    OCD_CHECK_OBJECT(OCD_OBJ_LRN, normDesc);
    if (lrnN < CUDNN_LRN_MIN_N || lrnN > CUDNN_LRN_MAX_N)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnN %u is outside [%d, %d]", lrnN, CUDNN_LRN_MIN_N,
                        CUDNN_LRN_MAX_N);
    if (!(lrnK >= CUDNN_LRN_MIN_K))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnK %g is below CUDNN_LRN_MIN_K (%g)", lrnK, CUDNN_LRN_MIN_K);
    if (!(lrnBeta >= CUDNN_LRN_MIN_BETA))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnBeta %g is below CUDNN_LRN_MIN_BETA (%g)", lrnBeta,
                        CUDNN_LRN_MIN_BETA);
    if (lrnAlpha != lrnAlpha) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "lrnAlpha is NaN");
    normDesc->n = lrnN;
    normDesc->alpha = lrnAlpha;
    normDesc->beta = lrnBeta;
    normDesc->k = lrnK;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetLRNDescriptor(cudnnLRNDescriptor_t normDesc, unsigned *lrnN,
                                                double *lrnAlpha, double *lrnBeta, double *lrnK)
{
    OCD_LOG_API("normDesc=%p", (void *)normDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_LRN, normDesc);
    /* any output may be NULL: that value is skipped */
    if (lrnN) *lrnN = normDesc->n;
    if (lrnAlpha) *lrnAlpha = normDesc->alpha;
    if (lrnBeta) *lrnBeta = normDesc->beta;
    if (lrnK) *lrnK = normDesc->k;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- validation shared with backward --------------------------------------------------------- */

static bool dhw_packed(const struct ocd_tensor_view *v)
{
    return v->strides[4] == 1 && v->strides[3] == v->dims[4] && v->strides[2] == v->dims[3] * v->dims[4];
}

cudnnStatus_t ocd_lrn_check_tensors(const struct ocd_lrn_tensor *t, int count, const void *alpha,
                                    const void *beta, struct ocd_lrn_problem *p)
{
    for (int i = 0; i < count; i++) {
        OCD_TRY(ocd_tensor_get(t[i].desc, t[i].name, t[i].view));
        if (t[i].ptr == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the data of %s is NULL", t[i].name);
    }
    for (int i = 0; i < count; i++) {
        const struct ocd_tensor_view *v = t[i].view;
        if (v->rank != 4 && v->rank != 5)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s has %d dimensions; LRN takes 4 or 5", t[i].name, v->rank);
        if (v->rank == 5 && !dhw_packed(v))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the 5-D %s is not DHW-packed", t[i].name);
    }
    const struct ocd_tensor_view *x = t[0].view;
    for (int i = 1; i < count; i++) {
        if (t[i].view->dtype != x->dtype)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the data types of %s and %s differ", t[0].name, t[i].name);
        if (!ocd_view_same_dims(t[i].view, x))
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the dimensions of %s and %s differ", t[0].name, t[i].name);
    }
    if (x->dtype != CUDNN_DATA_FLOAT && x->dtype != CUDNN_DATA_DOUBLE && x->dtype != CUDNN_DATA_HALF &&
        x->dtype != CUDNN_DATA_BFLOAT16)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported by LRN", ocd_dtype_name(x->dtype));
    /* the output is the last tensor */
    for (int i = 0; i < count - 1; i++)
        OCD_TRY(ocd_check_alias(t[count - 1].ptr, t[count - 1].view, t[count - 1].name, t[i].ptr, t[i].view, t[i].name,
                                t[i].read));
    p->dtype = x->dtype;
    p->alpha = ocd_scaling_value(p->dtype, alpha);
    p->beta = ocd_scaling_value(p->dtype, beta);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_lrn_prepare(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnLRNMode_t mode,
                              const void *alpha, const void *beta, struct ocd_lrn_problem *p)
{
    OCD_CHECK_HANDLE(handle);
    const struct cudnnLRNStruct *d;
    OCD_TRY(ocd_lrn_get(normDesc, &d));
    if (mode != CUDNN_LRN_CROSS_CHANNEL_DIM1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid LRN mode %d", (int)mode);
    if (alpha == NULL || beta == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "alpha or beta is NULL");
    p->n = d->n;
    p->lrn_alpha = d->alpha;
    p->lrn_beta = d->beta;
    p->lrn_k = d->k;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnLRNCrossChannelForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                      cudnnLRNMode_t lrnMode, const void *alpha,
                                                      const cudnnTensorDescriptor_t xDesc, const void *x,
                                                      const void *beta, const cudnnTensorDescriptor_t yDesc,
                                                      void *y)
{
    OCD_LOG_API("handle=%p normDesc=%p lrnMode=%d xDesc=%p x=%p yDesc=%p y=%p", (void *)handle,
                (void *)normDesc, (int)lrnMode, (void *)xDesc, x, (void *)yDesc, y);
    struct ocd_lrn_problem p = {.backward = false};
    OCD_TRY(ocd_lrn_prepare(handle, normDesc, lrnMode, alpha, beta, &p));
    const struct ocd_lrn_tensor t[] = {{xDesc, x, "xDesc", &p.x, OCD_READ_MANY}, {yDesc, y, "yDesc", &p.y, OCD_READ_NONE}};
    OCD_TRY(ocd_lrn_check_tensors(t, 2, alpha, beta, &p));
    p.x_ptr = x;
    p.y_ptr = y;
    return ocd_lrn_run(handle, &p, "cudnnLRNCrossChannelForward");
}
