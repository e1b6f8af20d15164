/* spatial_tf.c: the spatial transformer descriptor, cudnnSpatialTfGridGeneratorForward and
   cudnnSpatialTfSamplerForward (ops_infer); the backward functions are in spatial_tf_train.c.

   Main decision: cuDNN 8.2 documents only a few statuses for these functions (BAD_PARAM for NULL
   arguments or a dy whose dims differ from the descriptor's, NOT_SUPPORTED for a transformed
   tensor of more than 4 dimensions). The other inconsistencies a caller can make (x and y of
   another batch or channel count than the descriptor, types that differ from the descriptor's,
   an output that is also an input) are rejected as BAD_PARAM too, before anything is written.
   Types the kernels do not compute in (integers) are NOT_SUPPORTED, through the tables. */
#include "ops/spatial_tf.h"

#include "core/argcheck.h"
#include "core/dtype.h"
#include "core/reasons.h"

cudnnStatus_t CUDNNWINAPI cudnnCreateSpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t *stDesc)
{
    OCD_LOG_API("stDesc=%p", (void *)stDesc);
    return ocd_object_create(OCD_OBJ_SPATIAL_TRANSFORMER, sizeof(struct cudnnSpatialTransformerStruct),
                             (void **)stDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroySpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t stDesc)
{
    OCD_LOG_API("stDesc=%p", (void *)stDesc);
    if (stDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_SPATIAL_TRANSFORMER, stDesc);
}

/* Documented: BAD_PARAM when stDesc or dimA is NULL or when samplerType or dataType is not a valid
   enumerant. Also BAD_PARAM: nbDims < 1 or a dimension < 1. As for tensors, nbDims above
   CUDNN_DIM_MAX and more than 2^31 - 1 elements (in the output or in its grid) are NOT_SUPPORTED.
   Any rank is stored; the compute functions take only 4 (ocd_stn_get). */
cudnnStatus_t CUDNNWINAPI cudnnSetSpatialTransformerNdDescriptor(cudnnSpatialTransformerDescriptor_t stDesc,
                                                                 cudnnSamplerType_t samplerType,
                                                                 cudnnDataType_t dataType,
                                                                 const int nbDims, const int dimA[])
{
    OCD_LOG_API("stDesc=%p samplerType=%d dataType=%d nbDims=%d dimA=%p", (void *)stDesc,
                (int)samplerType, (int)dataType, nbDims, (const void *)dimA);
    OCD_CHECK_OBJECT(OCD_OBJ_SPATIAL_TRANSFORMER, stDesc);
    if (dimA == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA is NULL");
    if (samplerType != CUDNN_SAMPLER_BILINEAR)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid samplerType %d", (int)samplerType);
    if (!ocd_dtype_valid(dataType))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid dataType %d", (int)dataType);
    if (nbDims < 1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims %d is below 1", nbDims);
    if (nbDims > CUDNN_DIM_MAX)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "nbDims %d is above CUDNN_DIM_MAX", nbDims);
    int64_t count = 1;
    for (int d = 0; d < nbDims; d++) {
        if (dimA[d] < 1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA[%d] is %d", d, dimA[d]);
        count *= dimA[d];
        if (count > INT32_MAX) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "more than 2^31-1 elements");
    }
    if (nbDims == 4 && (int64_t)dimA[0] * dimA[2] * dimA[3] * 2 > INT32_MAX)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the grid has more than 2^31-1 elements");
    stDesc->sampler = samplerType;
    stDesc->dtype = dataType;
    stDesc->nb_dims = nbDims;
    for (int d = 0; d < nbDims; d++) stDesc->dims[d] = dimA[d];
    stDesc->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_stn_get(cudnnSpatialTransformerDescriptor_t desc,
                          const struct cudnnSpatialTransformerStruct **st)
{
    OCD_CHECK_OBJECT(OCD_OBJ_SPATIAL_TRANSFORMER, desc);
    if (!desc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "stDesc was never set");
    if (desc->nb_dims != 4)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                        "stDesc describes a %d-D transformed tensor; only 4-D (2-D transforms) is supported",
                        desc->nb_dims);
    *st = desc;
    return CUDNN_STATUS_SUCCESS;
}

static const char *float_types_only(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: case CUDNN_DATA_DOUBLE: case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16:
        return NULL;
    default:
        return OCD_REASON_DTYPE;
    }
}

const char *ocd_stn_grid_applies(cudnnHandle_t handle, const void *problem)
{
    return float_types_only(((const struct ocd_stn_grid_problem *)problem)->dtype);
}

const char *ocd_stn_sampler_applies(cudnnHandle_t handle, const void *problem)
{
    return float_types_only(((const struct ocd_stn_sampler_problem *)problem)->dtype);
}

static const struct ocd_impl grid_fwd_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:stn_grid", OCD_BACKEND_CUDA, ocd_stn_grid_applies, NULL, ocd_cuda_stn_grid_fwd),
#endif
    OCD_IMPL_ENTRY("host:stn_grid", OCD_BACKEND_HOST, ocd_stn_grid_applies, NULL, ocd_host_stn_grid_fwd),
};

cudnnStatus_t ocd_stn_grid_problem_init(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t desc,
                                        const void *src, void *dst, struct ocd_stn_grid_problem *p)
{
    OCD_CHECK_HANDLE(handle);
    const struct cudnnSpatialTransformerStruct *st;
    OCD_TRY(ocd_stn_get(desc, &st));
    if (src == NULL || dst == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "theta or grid (or their gradient) is NULL");
    *p = (struct ocd_stn_grid_problem){st->dtype, st->dims[0], st->dims[2], st->dims[3], src, dst};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSpatialTfGridGeneratorForward(cudnnHandle_t handle,
                                                             const cudnnSpatialTransformerDescriptor_t stDesc,
                                                             const void *theta, void *grid)
{
    OCD_LOG_API("handle=%p stDesc=%p theta=%p grid=%p", (void *)handle, (void *)stDesc, theta, grid);
    struct ocd_stn_grid_problem p;
    OCD_TRY(ocd_stn_grid_problem_init(handle, stDesc, theta, grid, &p));
    return ocd_impl_run(handle, grid_fwd_impls, OCD_ARRAY_LEN(grid_fwd_impls), &p,
                        "cudnnSpatialTfGridGeneratorForward");
}

/* x is N x C x H_in x W_in, the output (y or dy) is the descriptor's N x C x H x W, both of the
   descriptor's type, in any layout. */
cudnnStatus_t ocd_stn_sampler_check(const struct cudnnSpatialTransformerStruct *st,
                                    const struct ocd_tensor_view *x, const struct ocd_tensor_view *y,
                                    const char *y_name)
{
    if (x->rank != 4) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc has %d dims, not 4", x->rank);
    for (int d = 0; d < 4; d++)
        if (y->rank != 4 || y->dims[d] != st->dims[d])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%sDesc's dims differ from stDesc's", y_name);
    if (x->dims[0] != st->dims[0] || x->dims[1] != st->dims[1])
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc's N and C (%lld, %lld) differ from stDesc's (%d, %d)",
                        (long long)x->dims[0], (long long)x->dims[1], st->dims[0], st->dims[1]);
    if (x->dtype != st->dtype || y->dtype != st->dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc (%s) or %sDesc (%s) is not of stDesc's type (%s)",
                        ocd_dtype_name(x->dtype), y_name, ocd_dtype_name(y->dtype), ocd_dtype_name(st->dtype));
    return CUDNN_STATUS_SUCCESS;
}

static const struct ocd_impl sampler_fwd_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:stn_sampler", OCD_BACKEND_CUDA, ocd_stn_sampler_applies, NULL, ocd_cuda_stn_sampler_fwd),
#endif
    OCD_IMPL_ENTRY("host:stn_sampler", OCD_BACKEND_HOST, ocd_stn_sampler_applies, NULL, ocd_host_stn_sampler_fwd),
};

cudnnStatus_t CUDNNWINAPI cudnnSpatialTfSamplerForward(cudnnHandle_t handle,
                                                       cudnnSpatialTransformerDescriptor_t stDesc,
                                                       const void *alpha,
                                                       const cudnnTensorDescriptor_t xDesc,
                                                       const void *x, const void *grid,
                                                       const void *beta,
                                                       cudnnTensorDescriptor_t yDesc, void *y)
{
    OCD_LOG_API("handle=%p stDesc=%p alpha=%p xDesc=%p x=%p grid=%p beta=%p yDesc=%p y=%p",
                (void *)handle, (void *)stDesc, alpha, (void *)xDesc, x, grid, beta, (void *)yDesc, y);
    OCD_CHECK_HANDLE(handle);
    const struct cudnnSpatialTransformerStruct *st;
    OCD_TRY(ocd_stn_get(stDesc, &st));
    struct ocd_stn_sampler_problem p = {0};
    OCD_TRY(ocd_tensor_get(xDesc, "xDesc", &p.x));
    OCD_TRY(ocd_tensor_get(yDesc, "yDesc", &p.y));
    if (alpha == NULL || beta == NULL || x == NULL || grid == NULL || y == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "alpha, beta, x, grid or y is NULL");
    OCD_TRY(ocd_stn_sampler_check(st, &p.x, &p.y, "y"));
    OCD_TRY(ocd_check_alias(y, &p.y, "y", x, &p.x, "x", OCD_READ_MANY)); /* y gathers from x */
    p.dtype = st->dtype;
    p.x_data = x;
    p.grid = grid;
    p.y_data = y;
    p.alpha = ocd_scaling_value(p.dtype, alpha);
    p.beta = ocd_scaling_value(p.dtype, beta);
    return ocd_impl_run(handle, sampler_fwd_impls, OCD_ARRAY_LEN(sampler_fwd_impls), &p,
                        "cudnnSpatialTfSamplerForward");
}
