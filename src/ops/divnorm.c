/* divnorm.c: cudnnDivisiveNormalizationForward, and the validation backward (divnorm_train.c)
   shares.

   Documented rules (cuDNN 8.2): BAD_PARAM for a NULL x, y (dx), temp, temp2, alpha or beta, a rank
   outside [4,5], dims that differ between the tensors, and an output in place of x with other
   strides; NOT_SUPPORTED when the input and output strides differ. Beyond the list: differing
   data types and types other than float, double, half and bfloat16 are NOT_SUPPORTED; temp and
   temp2 must be two buffers and dMeans must not be dx (BAD_PARAM). */
#include "ops/divnorm.h"

#include "core/dtype.h"
#include "ops/lrn.h"

static const struct ocd_impl divnorm_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:divnorm_direct", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_divnorm),
#endif
    OCD_IMPL_ENTRY("host:divnorm_reference", OCD_BACKEND_HOST, NULL, NULL, ocd_host_divnorm),
};

cudnnStatus_t ocd_divnorm_run(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnDivNormMode_t mode,
                              const void *alpha, const void *beta, cudnnTensorDescriptor_t x_desc,
                              cudnnTensorDescriptor_t out_desc, struct ocd_divnorm_problem *p, const char *op)
{
    OCD_CHECK_HANDLE(handle);
    const struct cudnnLRNStruct *d;
    OCD_TRY(ocd_lrn_get(normDesc, &d));
    if (mode != CUDNN_DIVNORM_PRECOMPUTED_MEANS)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid divisive-normalization mode %d", (int)mode);
    if (alpha == NULL || beta == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "alpha or beta is NULL");
    const char *out_name = p->backward ? "dXdMeansDesc" : "yDesc";
    OCD_TRY(ocd_tensor_get(x_desc, "xDesc", &p->x));
    OCD_TRY(ocd_tensor_get(out_desc, out_name, &p->out));
    if (p->x_ptr == NULL || p->out_ptr == NULL || p->temp == NULL || p->temp2 == NULL ||
        (p->backward && p->dy_ptr == NULL))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x, %s, temp or temp2 is NULL", p->backward ? "dy, dx" : "y");
    if (p->x.rank < 4 || p->x.rank > 5 || p->out.rank < 4 || p->out.rank > 5)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "divisive normalization takes 4-D or 5-D tensors");
    if (!ocd_view_same_dims(&p->x, &p->out))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the dimensions of xDesc and %s differ", out_name);
    bool strides_differ = !ocd_view_same_strides(&p->x, &p->out);
    if (strides_differ && (p->out_ptr == p->x_ptr || (p->backward && p->out_ptr == p->dy_ptr)))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "in place with different strides");
    if (p->temp == p->temp2) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "temp and temp2 are the same buffer");
    if (p->dmeans != NULL && p->dmeans == p->out_ptr)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dMeans and dx are the same buffer");
    if (strides_differ)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the strides of xDesc and %s differ", out_name);
    if (p->x.dtype != p->out.dtype)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the data types of xDesc and %s differ", out_name);
    if (p->x.dtype != CUDNN_DATA_FLOAT && p->x.dtype != CUDNN_DATA_DOUBLE && p->x.dtype != CUDNN_DATA_HALF &&
        p->x.dtype != CUDNN_DATA_BFLOAT16)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported by divisive normalization",
                        ocd_dtype_name(p->x.dtype));
    p->dtype = p->x.dtype;
    p->n = d->n;
    p->lrn_alpha = d->alpha;
    p->lrn_beta = d->beta;
    p->lrn_k = d->k;
    p->alpha = ocd_scaling_value(p->dtype, alpha);
    p->beta = ocd_scaling_value(p->dtype, beta);
    return ocd_impl_run(handle, divnorm_impls, OCD_ARRAY_LEN(divnorm_impls), p, op);
}

cudnnStatus_t CUDNNWINAPI cudnnDivisiveNormalizationForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                            cudnnDivNormMode_t mode, const void *alpha,
                                                            const cudnnTensorDescriptor_t xDesc, const void *x,
                                                            const void *means, void *temp, void *temp2,
                                                            const void *beta, const cudnnTensorDescriptor_t yDesc,
                                                            void *y)
{
    OCD_LOG_API("handle=%p normDesc=%p mode=%d xDesc=%p x=%p means=%p temp=%p temp2=%p yDesc=%p y=%p",
                (void *)handle, (void *)normDesc, (int)mode, (void *)xDesc, x, means, temp, temp2,
                (void *)yDesc, y);
    struct ocd_divnorm_problem p = {.backward = false, .x_ptr = x, .means = means, .temp = temp,
                                    .temp2 = temp2, .out_ptr = y};
    return ocd_divnorm_run(handle, normDesc, mode, alpha, beta, xDesc, yDesc, &p,
                           "cudnnDivisiveNormalizationForward");
}
