/* transform.c: the tensor transform descriptor, cudnnTransformTensor, cudnnTransformTensorEx,
   cudnnInitTransformDest and cudnnTransformFilter.

   Main decision: a transform that only changes the layout or the data type (any strides, NCHW,
   NHWC, NCHW_VECT_C, INT8 <-> INT8x4/INT8x32, UINT8 <-> UINT8x4, float -> half...) is an
   elementwise copy y = alpha * x + beta * y and runs on the elementwise engines
   (src/ops/tensor_ops.c), whose CUDA side has a tiled transpose for NCHW <-> NHWC. Padding and
   folding run on a gather kernel per backend (problem/transform.h says what it computes).

   Documented rules implemented here (cuDNN 8.2 API reference):
   - cudnnTransformTensor: x and y of the same dimensions (BAD_PARAM); x and y must not overlap
     (BAD_PARAM). "Tensors can be converted to and from NCHW_VECT_C with cudnnTransformTensor".
     The text also asks for one data type; cuDNN 8 converts between any two (float, double,
     half, bfloat16, int8, uint8, int32 and the int8 vector types), as programs rely on, and so
     do all three transforms here (INT64: NOT_SUPPORTED). A conversion rounds once, to nearest
     even, and saturates integers (NaN giving 0), as core/dtype.h describes. x and y may have
     negative strides (reversed views), as NVIDIA's library takes them; cudnnTransformTensorEx
     declines them (NOT_SUPPORTED, ocd_tensor_get), its padding and folding gather not being
     written for them.
   - cudnnSetTensorTransformDescriptor: nbDims > 2 (BAD_PARAM), at most CUDNN_DIM_MAX
     (NOT_SUPPORTED); destFormat NCHW or NHWC (NOT_SUPPORTED otherwise); direction FOLD or
     UNFOLD (BAD_PARAM); NULL pads mean 0, NULL folds mean 1, folds <= 1 mean no folding (the
     direction is then ignored). Negative pads are refused (BAD_PARAM).
   - cudnnTransformTensorEx / cudnnTransformFilter: src, dest and the descriptor of one rank
     (BAD_PARAM); dest of the transformed shape (BAD_PARAM); folding and zero-padding need
     (alpha, beta) = (1, 0) (NOT_SUPPORTED otherwise); unfolding and plain layout changes take
     any alpha and beta.
   - cudnnInitTransformDest: the packed destination in destFormat with src's data type;
     nbDims different from the descriptor's: BAD_PARAM; anything but 4-D: NOT_SUPPORTED. */
#include "ops/tensor_ops.h"

#include "core/dtype.h"
#include "core/impl.h"
#include "ops/transform.h"

#include <limits.h>
#include <string.h>

struct cudnnTensorTransformStruct {
    struct ocd_object obj;
    bool set;
    int nb_dims;
    cudnnTensorFormat_t dest_format;
    int32_t pad_before[OCD_MAX_DIMS], pad_after[OCD_MAX_DIMS];
    uint32_t fold[OCD_MAX_DIMS]; /* for the spatial dims 2..nb_dims-1, as given */
    cudnnFoldingDirection_t direction;
};

static const struct ocd_impl fold_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:fold_gather", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_fold),
#endif
    OCD_IMPL_ENTRY("host:fold_gather", OCD_BACKEND_HOST, NULL, NULL, ocd_host_fold),
};

/* ---- the descriptor --------------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateTensorTransformDescriptor(cudnnTensorTransformDescriptor_t *transformDesc)
{
    OCD_LOG_API("transformDesc=%p", (void *)transformDesc);
    return ocd_object_create(OCD_OBJ_TENSOR_TRANSFORM, sizeof(struct cudnnTensorTransformStruct),
                             (void **)transformDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc)
{
    OCD_LOG_API("transformDesc=%p", (void *)transformDesc);
    if (transformDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_TENSOR_TRANSFORM, transformDesc);
}

cudnnStatus_t ocd_fold_run(cudnnHandle_t handle, const struct ocd_fold *f, const char *op)
{
    return ocd_impl_run(handle, fold_impls, OCD_ARRAY_LEN(fold_impls), f, op);
}

cudnnStatus_t ocd_transform_desc_set(cudnnTensorTransformDescriptor_t t, uint32_t nbDims,
                                     cudnnTensorFormat_t destFormat, const int32_t padBeforeA[],
                                     const int32_t padAfterA[], const uint32_t foldA[],
                                     cudnnFoldingDirection_t direction)
{
    if (nbDims <= 2) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims %u is not greater than 2", nbDims);
    if (nbDims > CUDNN_DIM_MAX)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "nbDims %u is above CUDNN_DIM_MAX", nbDims);
    if (direction != CUDNN_TRANSFORM_FOLD && direction != CUDNN_TRANSFORM_UNFOLD)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid direction %d", (int)direction);
    for (uint32_t d = 0; d < nbDims; d++)
        if ((padBeforeA && padBeforeA[d] < 0) || (padAfterA && padAfterA[d] < 0))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the padding of dimension %u is negative", d);
    if (destFormat != CUDNN_TENSOR_NCHW && destFormat != CUDNN_TENSOR_NHWC)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "destFormat %d is neither NCHW nor NHWC", (int)destFormat);
    t->nb_dims = (int)nbDims;
    t->dest_format = destFormat;
    for (int d = 0; d < OCD_MAX_DIMS; d++) {
        bool in = d < t->nb_dims;
        t->pad_before[d] = in && padBeforeA ? padBeforeA[d] : 0;
        t->pad_after[d] = in && padAfterA ? padAfterA[d] : 0;
        t->fold[d] = d + 2 < t->nb_dims && foldA ? foldA[d] : 1;
    }
    t->direction = direction;
    t->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc,
                                                            const uint32_t nbDims,
                                                            const cudnnTensorFormat_t destFormat,
                                                            const int32_t padBeforeA[], const int32_t padAfterA[],
                                                            const uint32_t foldA[],
                                                            const cudnnFoldingDirection_t direction)
{
    OCD_LOG_API("transformDesc=%p nbDims=%u destFormat=%d padBeforeA=%p padAfterA=%p foldA=%p direction=%d",
                (void *)transformDesc, nbDims, (int)destFormat, (const void *)padBeforeA,
                (const void *)padAfterA, (const void *)foldA, (int)direction);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR_TRANSFORM, transformDesc);
    return ocd_transform_desc_set(transformDesc, nbDims, destFormat, padBeforeA, padAfterA, foldA, direction);
}

/* Writes min(nbDimsRequested, nbDims) pads and two fewer fold factors; NULL arrays are skipped. */
cudnnStatus_t CUDNNWINAPI cudnnGetTensorTransformDescriptor(cudnnTensorTransformDescriptor_t transformDesc,
                                                            uint32_t nbDimsRequested,
                                                            cudnnTensorFormat_t *destFormat, int32_t padBeforeA[],
                                                            int32_t padAfterA[], uint32_t foldA[],
                                                            cudnnFoldingDirection_t *direction)
{
    OCD_LOG_API("transformDesc=%p nbDimsRequested=%u", (void *)transformDesc, nbDimsRequested);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR_TRANSFORM, transformDesc);
    if (nbDimsRequested < 3 || nbDimsRequested > CUDNN_DIM_MAX)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested %u is outside [3, CUDNN_DIM_MAX]", nbDimsRequested);
    if (!transformDesc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "transformDesc was never set");
    OCD_CHECK_NOT_NULL(destFormat);
    OCD_CHECK_NOT_NULL(direction);
    int n = OCD_MIN((int)nbDimsRequested, transformDesc->nb_dims);
    *destFormat = transformDesc->dest_format;
    *direction = transformDesc->direction;
    for (int d = 0; d < n; d++) {
        if (padBeforeA) padBeforeA[d] = transformDesc->pad_before[d];
        if (padAfterA) padAfterA[d] = transformDesc->pad_after[d];
        if (foldA && d + 2 < n) foldA[d] = transformDesc->fold[d];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the transform's shapes ------------------------------------------------------------------- */

static cudnnStatus_t get_transform(cudnnTensorTransformDescriptor_t t, const char *name)
{
    if (!ocd_object_alive(OCD_OBJ_TENSOR_TRANSFORM, t))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name, t == NULL ? "NULL" : "not a live transform descriptor");
    if (!t->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was never set", name);
    return CUDNN_STATUS_SUCCESS;
}

static int64_t fold_factor(const struct cudnnTensorTransformStruct *t, int d)
{
    return d >= 2 && t->fold[d - 2] > 1 ? t->fold[d - 2] : 1;
}

static bool folds(const struct cudnnTensorTransformStruct *t)
{
    for (int d = 2; d < t->nb_dims; d++)
        if (fold_factor(t, d) > 1) return true;
    return false;
}

static bool unfolds(const struct cudnnTensorTransformStruct *t)
{
    return folds(t) && t->direction == CUDNN_TRANSFORM_UNFOLD;
}

static bool pads(const struct cudnnTensorTransformStruct *t)
{
    for (int d = 0; d < t->nb_dims; d++)
        if (t->pad_before[d] || t->pad_after[d]) return true;
    return false;
}

/* The dims the transform makes of src's (see problem/transform.h); BAD_PARAM when src cannot be
   unfolded or the result has an empty or too large dimension. */
static cudnnStatus_t transformed_dims(const struct cudnnTensorTransformStruct *t, const struct ocd_tensor_view *src,
                                      int64_t out[], int64_t *padded_c)
{
    int64_t blocks = 1;
    for (int d = 2; d < t->nb_dims; d++) blocks *= fold_factor(t, d);
    for (int d = 0; d < t->nb_dims; d++) {
        int64_t pad = (int64_t)t->pad_before[d] + t->pad_after[d], x = src->dims[d], f = fold_factor(t, d);
        if (!unfolds(t)) out[d] = d == 1 ? (x + pad) * blocks : (x + pad + f - 1) / f;
        else if (d == 1) out[d] = x / blocks - pad;
        else out[d] = x * f - pad;
    }
    *padded_c = unfolds(t) ? src->dims[1] / blocks : src->dims[1] + t->pad_before[1] + t->pad_after[1];
    if (unfolds(t) && src->dims[1] % blocks != 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "C (%lld) is not a multiple of the %lld fold blocks to unfold",
                        (long long)src->dims[1], (long long)blocks);
    for (int d = 0; d < t->nb_dims; d++)
        if (out[d] <= 0 || out[d] > INT_MAX)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the transform makes dimension %d %lld", d, (long long)out[d]);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the transforms --------------------------------------------------------------------------- */

/* The data type rule of every transform: any two types a tensor operation computes with. The
   8.2 text asks for one data type, but cuDNN 8 converts, and programs convert weights from float
   to half this way: a conversion is accepted and logged at info level. */
static cudnnStatus_t check_types(const struct ocd_tensor_view *xv, const struct ocd_tensor_view *yv)
{
    OCD_TRY(ocd_check_compute_type(xv, "the source"));
    OCD_TRY(ocd_check_compute_type(yv, "the destination"));
    if (ocd_dtype_scalar(xv->dtype) != ocd_dtype_scalar(yv->dtype))
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "converting %s to %s (the 8.2 text asks for one type)",
                        ocd_dtype_name(xv->dtype), ocd_dtype_name(yv->dtype));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnTransformTensor(cudnnHandle_t handle, const void *alpha,
                                               const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                               const cudnnTensorDescriptor_t yDesc, void *y)
{
    OCD_LOG_API("handle=%p alpha=%p xDesc=%p x=%p beta=%p yDesc=%p y=%p", (void *)handle, alpha, (void *)xDesc, x,
                beta, (void *)yDesc, y);
    struct ocd_tensor_view xv, yv;
    OCD_TRY(ocd_check_blend_args(handle, alpha, xDesc, "xDesc", x, beta, yDesc, "yDesc", y, &xv, &yv));
    if (!ocd_view_same_dims(&xv, &yv))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc and yDesc have different dimensions");
    OCD_TRY(check_types(&xv, &yv));
    OCD_TRY(ocd_check_no_overlap(&xv, x, &yv, y));
    return ocd_ewise_copy(handle, alpha, &xv, x, beta, &yv, y, "cudnnTransformTensor");
}

/* What cudnnTransformTensorEx and cudnnTransformFilter share, from the views on: the checks of
   the pointers, shapes and types, and the run. */
static cudnnStatus_t transform_ex(cudnnHandle_t handle, const struct cudnnTensorTransformStruct *t,
                                  const void *alpha, const struct ocd_tensor_view *sv, const void *src,
                                  const void *beta, const struct ocd_tensor_view *dv, void *dst, const char *op)
{
    OCD_CHECK_NOT_NULL(alpha);
    OCD_CHECK_NOT_NULL(beta);
    OCD_CHECK_NOT_NULL(src);
    OCD_CHECK_NOT_NULL(dst);
    if (sv->rank != dv->rank || sv->rank != t->nb_dims)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the source has %d dimensions, the destination %d, the transform %d",
                        sv->rank, dv->rank, t->nb_dims);
    OCD_TRY(check_types(sv, dv));
    int64_t want[OCD_MAX_DIMS], padded_c;
    OCD_TRY(transformed_dims(t, sv, want, &padded_c));
    for (int d = 0; d < dv->rank; d++)
        if (dv->dims[d] != want[d])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimension %d of the destination is %lld; the transform makes %lld",
                            d, (long long)dv->dims[d], (long long)want[d]);
    OCD_TRY(ocd_check_no_overlap(sv, src, dv, dst));
    if (!pads(t) && !folds(t)) return ocd_ewise_copy(handle, alpha, sv, src, beta, dv, dst, op);
    struct ocd_fold f;
    memset(&f, 0, sizeof f);
    f.src = *sv;
    f.dst = *dv;
    f.x = src;
    f.y = dst;
    f.unfold = unfolds(t);
    f.padded_c = padded_c;
    for (int d = 0; d < t->nb_dims; d++) {
        f.pad_before[d] = t->pad_before[d];
        f.factor[d] = fold_factor(t, d);
    }
    f.alpha = ocd_scaling_value(dv->dtype, alpha);
    f.beta = ocd_scaling_value(dv->dtype, beta);
    if (!f.unfold && (f.alpha != 1 || f.beta != 0))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "folding and padding take alpha = 1 and beta = 0 only (%g, %g)",
                        f.alpha, f.beta);
    return ocd_impl_run(handle, fold_impls, OCD_ARRAY_LEN(fold_impls), &f, op);
}

cudnnStatus_t CUDNNWINAPI cudnnTransformTensorEx(cudnnHandle_t handle, const cudnnTensorTransformDescriptor_t transDesc,
                                                 const void *alpha, const cudnnTensorDescriptor_t srcDesc,
                                                 const void *srcData, const void *beta,
                                                 const cudnnTensorDescriptor_t destDesc, void *destData)
{
    OCD_LOG_API("handle=%p transDesc=%p alpha=%p srcDesc=%p srcData=%p beta=%p destDesc=%p destData=%p",
                (void *)handle, (void *)transDesc, alpha, (void *)srcDesc, srcData, beta, (void *)destDesc, destData);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(get_transform(transDesc, "transDesc"));
    struct ocd_tensor_view sv, dv;
    OCD_TRY(ocd_tensor_get(srcDesc, "srcDesc", &sv));
    OCD_TRY(ocd_tensor_get(destDesc, "destDesc", &dv));
    return transform_ex(handle, transDesc, alpha, &sv, srcData, beta, &dv, destData, "cudnnTransformTensorEx");
}

cudnnStatus_t CUDNNWINAPI cudnnTransformFilter(cudnnHandle_t handle, const cudnnTensorTransformDescriptor_t transDesc,
                                               const void *alpha, const cudnnFilterDescriptor_t srcDesc,
                                               const void *srcData, const void *beta,
                                               const cudnnFilterDescriptor_t destDesc, void *destData)
{
    OCD_LOG_API("handle=%p transDesc=%p alpha=%p srcDesc=%p srcData=%p beta=%p destDesc=%p destData=%p",
                (void *)handle, (void *)transDesc, alpha, (void *)srcDesc, srcData, beta, (void *)destDesc, destData);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(get_transform(transDesc, "transDesc"));
    struct ocd_tensor_view sv, dv;
    OCD_TRY(ocd_filter_get(srcDesc, "srcDesc", &sv));
    OCD_TRY(ocd_filter_get(destDesc, "destDesc", &dv));
    return transform_ex(handle, transDesc, alpha, &sv, srcData, beta, &dv, destData, "cudnnTransformFilter");
}

cudnnStatus_t CUDNNWINAPI cudnnInitTransformDest(const cudnnTensorTransformDescriptor_t transformDesc,
                                                 const cudnnTensorDescriptor_t srcDesc,
                                                 cudnnTensorDescriptor_t destDesc, size_t *destSizeInBytes)
{
    OCD_LOG_API("transformDesc=%p srcDesc=%p destDesc=%p destSizeInBytes=%p", (void *)transformDesc,
                (void *)srcDesc, (void *)destDesc, (void *)destSizeInBytes);
    OCD_TRY(get_transform(transformDesc, "transformDesc"));
    struct ocd_tensor_view sv;
    OCD_TRY(ocd_tensor_get(srcDesc, "srcDesc", &sv));
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, destDesc);
    OCD_CHECK_NOT_NULL(destSizeInBytes);
    if (sv.rank != transformDesc->nb_dims)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "srcDesc has %d dimensions and the transform %d", sv.rank,
                        transformDesc->nb_dims);
    if (sv.rank != 4) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "only 4-D transforms are supported");
    if (sv.vect > 1)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "a %s source has no destination in NCHW or NHWC",
                        ocd_dtype_name(sv.dtype));
    int64_t want[OCD_MAX_DIMS], padded_c;
    OCD_TRY(transformed_dims(transformDesc, &sv, want, &padded_c));
    int dims[OCD_MAX_DIMS];
    for (int d = 0; d < sv.rank; d++) dims[d] = (int)want[d];
    OCD_TRY(ocd_tensor_set_packed(destDesc, transformDesc->dest_format, sv.dtype, sv.rank, dims));
    struct ocd_tensor_view dv;
    ocd_tensor_view_of(destDesc, &dv);
    *destSizeInBytes = (size_t)ocd_view_span_bytes(&dv);
    return CUDNN_STATUS_SUCCESS;
}
