/* tensor.c: tensor and filter descriptors of the API, and their views (see tensor.h).

   cuDNN 8.2 rules implemented here: dims must be positive (BAD_PARAM); a stride may be negative
   (a reversed view, its pointer at element (0,...,0) and the view reaching below it), as
   NVIDIA's library takes it (measured: cuDNN 9's setters accept it and its
   cudnnTransformTensor and cudnnAddTensor read such views right; grain and frameworks pass
   them); a stride of 0 is BAD_PARAM except on a dim of extent 1, as NVIDIA's library takes it
   (cudarc's tests); strides under which elements share memory are taken by Set, as NVIDIA's
   library takes them, and refused (BAD_PARAM) by every call that writes through them or has
   not been shown to read them right; negative strides are declined (NOT_SUPPORTED, logged) by
   every call but those whose engines walk signed strides (ocd_tensor_get_taking says which);
   nbDims is limited to CUDNN_DIM_MAX (NOT_SUPPORTED above it); cudnnSetTensorNdDescriptor takes
   3 to 8 dimensions ("NOT_SUPPORTED: nbDims is outside the range [4, CUDNN_DIM_MAX]", widened
   to 3 for the 3-D tensors the RNN API documents), the other setters answer BAD_PARAM below
   their minimum; the vector types go with NCHW_VECT_C and need C divisible by the vector width
   (BAD_PARAM), and the setters with explicit strides (4dEx, Nd) read a vector type as
   NCHW_VECT_C with strides counted in vectors, so that what cudnnGetTensor4dDescriptor returns
   can be set again; a tensor of more than 2^31 - 1 elements, its padding between dimensions
   included (the span from its lowest to its highest element), is NOT_SUPPORTED ("the total
   size of the tensor descriptor exceeds the maximum limit of 2 Giga-elements"). */
#include "core/tensor.h"

#include "core/dtype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ELEMENTS INT32_MAX

void ocd_packed_strides(cudnnTensorFormat_t format, int nb_dims, const int dims[], int vect,
                        int strides[])
{
    if (format == CUDNN_TENSOR_NHWC && nb_dims >= 3) {
        /* C innermost, then the spatial dims right to left, N outermost */
        int s = 1;
        strides[1] = s;
        s *= dims[1];
        for (int d = nb_dims - 1; d >= 2; d--) {
            strides[d] = s;
            s *= dims[d];
        }
        strides[0] = s;
        return;
    }
    int s = 1;
    for (int d = nb_dims - 1; d >= 0; d--) {
        strides[d] = s;
        s *= d == 1 && format == CUDNN_TENSOR_NCHW_VECT_C ? dims[d] / vect : dims[d];
    }
}

/* The steps a layout takes along dim d: dim 1 of a vector type counts whole vectors. */
static int64_t extent_of(int d, const int dims[], int vect)
{
    return d == 1 ? dims[d] / vect : dims[d];
}

static int64_t view_extent(const struct ocd_tensor_view *v, int d)
{
    return d == 1 ? v->dims[d] / v->vect : v->dims[d];
}

cudnnStatus_t ocd_check_layout(int nb_dims, const int dims[], const int strides[], int vect)
{
    for (int d = 0; d < nb_dims; d++) {
        if (dims[d] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimension %d is %d", d, dims[d]);
        /* A dim of extent 1 is never stepped along: its stride may be 0 (cudarc's descriptors).
           A negative stride is a reversed view. */
        if (strides[d] == 0 && extent_of(d, dims, vect) > 1)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "stride %d is %d", d, strides[d]);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_view_check_disjoint(const struct ocd_tensor_view *v, const char *name)
{
    /* Sort the dims of extent > 1 by the size of their stride (a reversed dim steps as far as a
       forward one); each must step over everything inside it. */
    int order[OCD_MAX_DIMS], n = 0;
    for (int d = 0; d < v->rank; d++) {
        if (view_extent(v, d) <= 1) continue;
        int i = n++;
        while (i > 0 && llabs(v->strides[order[i - 1]]) > llabs(v->strides[d])) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = d;
    }
    int64_t inner = v->vect; /* scalars spanned by the dims already placed: one element first */
    for (int i = 0; i < n; i++) {
        int d = order[i];
        const int64_t step = llabs(v->strides[d]);
        if (step < inner)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                            "%s's stride %d (%lld scalars) overlaps the dimensions inside it (span %lld): "
                            "two elements share memory",
                            name, d, (long long)v->strides[d], (long long)inner);
        inner = step * view_extent(v, d);
    }
    return CUDNN_STATUS_SUCCESS;
}

void ocd_tensor_view_of(const struct cudnnTensorStruct *t, struct ocd_tensor_view *v)
{
    memset(v, 0, sizeof *v);
    v->dtype = t->dtype;
    v->rank = t->nb_dims;
    v->vect = ocd_dtype_vector_width(t->dtype);
    for (int d = 0; d < t->nb_dims; d++) {
        v->dims[d] = t->dims[d];
        v->strides[d] = (int64_t)t->strides[d] * v->vect;
    }
    /* The stride of a dim of extent 1 is never stepped along: one of 0 or below becomes the
       packed row-major stride at that place, so that every layout test sees a positive stride
       there and a negative stride in a view always means a reversed dim. */
    for (int d = t->nb_dims - 1; d >= 0; d--)
        if (v->strides[d] <= 0 && extent_of(d, t->dims, v->vect) == 1)
            v->strides[d] = d + 1 == t->nb_dims ? v->vect
                                                : llabs(v->strides[d + 1]) * extent_of(d + 1, t->dims, v->vect);
}

void ocd_filter_view_of(const struct cudnnFilterStruct *f, struct ocd_tensor_view *v)
{
    int strides[OCD_MAX_DIMS];
    memset(v, 0, sizeof *v);
    v->dtype = f->dtype;
    v->rank = f->nb_dims;
    v->vect = ocd_dtype_vector_width(f->dtype);
    ocd_packed_strides(f->format, f->nb_dims, f->dims, v->vect, strides);
    for (int d = 0; d < f->nb_dims; d++) {
        v->dims[d] = f->dims[d];
        v->strides[d] = (int64_t)strides[d] * v->vect;
    }
}

int64_t ocd_view_count(const struct ocd_tensor_view *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->rank; d++) n *= v->dims[d];
    return n;
}

void ocd_view_bounds(const struct ocd_tensor_view *v, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    for (int d = 0; d < v->rank; d++) {
        const int64_t reach = (view_extent(v, d) - 1) * v->strides[d];
        if (reach < 0) *lo += reach;
        else *hi += reach;
    }
}

int64_t ocd_view_span_bytes(const struct ocd_tensor_view *v)
{
    int64_t lo, hi;
    ocd_view_bounds(v, &lo, &hi);
    return (hi - lo + v->vect) * (int64_t)ocd_dtype_scalar_size(v->dtype);
}

int64_t ocd_view_below_bytes(const struct ocd_tensor_view *v)
{
    int64_t lo, hi;
    ocd_view_bounds(v, &lo, &hi);
    return -lo * (int64_t)ocd_dtype_scalar_size(v->dtype);
}

int ocd_view_reversed_dim(const struct ocd_tensor_view *v)
{
    for (int d = 0; d < v->rank; d++)
        if (v->strides[d] < 0) return d;
    return -1;
}

bool ocd_view_same_dims(const struct ocd_tensor_view *a, const struct ocd_tensor_view *b)
{
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

bool ocd_view_same_strides(const struct ocd_tensor_view *a, const struct ocd_tensor_view *b)
{
    if (a->rank != b->rank || a->vect != b->vect) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] > 1 && a->strides[d] != b->strides[d]) return false;
    return true;
}

bool ocd_view_is_packed_rowmajor(const struct ocd_tensor_view *v)
{
    if (v->vect != 1) return false;
    int64_t s = 1;
    for (int d = v->rank - 1; d >= 0; d--) {
        if (v->dims[d] != 1 && v->strides[d] != s) return false;
        s *= v->dims[d];
    }
    return true;
}

bool ocd_view_is_packed_nhwc(const struct ocd_tensor_view *v)
{
    if (v->vect != 1 || v->rank < 3) return false;
    /* C innermost, then the spatial dims right to left, N outermost */
    int64_t s = v->dims[1];
    if (v->dims[1] != 1 && v->strides[1] != 1) return false;
    for (int d = v->rank - 1; d >= 2; d--) {
        if (v->dims[d] != 1 && v->strides[d] != s) return false;
        s *= v->dims[d];
    }
    return v->dims[0] == 1 || v->strides[0] == s;
}

void ocd_view_format(const struct ocd_tensor_view *v, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s[", ocd_dtype_name(v->dtype));
    for (int d = 0; d < v->rank && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "," : "", (long long)v->dims[d]);
    for (int d = 0; d < v->rank && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "," : "]/[", (long long)v->strides[d]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

cudnnStatus_t ocd_tensor_get_taking(cudnnTensorDescriptor_t desc, const char *name, unsigned takes,
                                    struct ocd_tensor_view *view)
{
    if (!ocd_object_alive(OCD_OBJ_TENSOR, desc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name,
                        desc == NULL ? "NULL" : "not a live tensor descriptor");
    if (!desc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was never set", name);
    if (desc->nb_dims == 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has no dims (an absent RNN weight)", name);
    ocd_tensor_view_of(desc, view);
    const int reversed = ocd_view_reversed_dim(view);
    if (reversed >= 0 && !(takes & OCD_TAKES_REVERSED))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                        "%s has a negative stride (%d on dimension %d): this call does not take reversed views "
                        "(cudnnTransformTensor, cudnnAddTensor, cudnnOpTensor, cudnnScaleTensor, cudnnSetTensor "
                        "and cudnnReduceTensor do)",
                        name, desc->strides[reversed], reversed);
    if (takes & OCD_TAKES_SHARED) return CUDNN_STATUS_SUCCESS;
    return ocd_view_check_disjoint(view, name);
}

cudnnStatus_t ocd_tensor_get_input(cudnnTensorDescriptor_t desc, const char *name,
                                   struct ocd_tensor_view *view)
{
    return ocd_tensor_get_taking(desc, name, OCD_TAKES_SHARED, view);
}

cudnnStatus_t ocd_tensor_get(cudnnTensorDescriptor_t desc, const char *name, struct ocd_tensor_view *view)
{
    return ocd_tensor_get_taking(desc, name, 0, view);
}

cudnnStatus_t ocd_filter_get(cudnnFilterDescriptor_t desc, const char *name,
                             struct ocd_tensor_view *view)
{
    if (!ocd_object_alive(OCD_OBJ_FILTER, desc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name,
                        desc == NULL ? "NULL" : "not a live filter descriptor");
    if (!desc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was never set", name);
    if (desc->nb_dims == 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has no dims (an absent RNN weight)", name);
    ocd_filter_view_of(desc, view);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- checks shared by the Set functions ------------------------------------------------------ */

static cudnnStatus_t check_type_and_format(cudnnDataType_t dtype, cudnnTensorFormat_t format,
                                           int nb_dims, const int dims[])
{
    if (!ocd_dtype_valid(dtype)) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid data type %d", (int)dtype);
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC && format != CUDNN_TENSOR_NCHW_VECT_C)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid tensor format %d", (int)format);
    int vect = ocd_dtype_vector_width(dtype);
    if ((format == CUDNN_TENSOR_NCHW_VECT_C) != (vect > 1))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "format NCHW_VECT_C goes with the types INT8x4, UINT8x4 and INT8x32 (type %s)",
                        ocd_dtype_name(dtype));
    if (vect > 1 && (nb_dims < 2 || dims[1] % vect != 0))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "C (%d) is not a multiple of the vector width %d",
                        nb_dims >= 2 ? dims[1] : 0, vect);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_element_count(int nb_dims, const int dims[])
{
    int64_t n = 1;
    for (int d = 0; d < nb_dims; d++) {
        n *= dims[d];
        if (n > MAX_ELEMENTS)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "more than 2^31-1 elements");
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Validates and stores a tensor layout; nothing is changed in t on failure. */
static cudnnStatus_t set_tensor(cudnnTensorDescriptor_t t, cudnnDataType_t dtype,
                                cudnnTensorFormat_t format, int nb_dims, const int dims[],
                                const int strides[])
{
    int vect = ocd_dtype_vector_width(dtype);
    OCD_TRY(ocd_check_layout(nb_dims, dims, strides, vect));
    OCD_TRY(check_element_count(nb_dims, dims));
    /* The limit counts the padding between dimensions too: the span of the strides from the
       lowest element to the highest (a negative stride reaches below element (0,...,0)), in
       elements (scalars for the vector types). Each term is below 2^62 in size (an int stride
       times an extent of at most 2^31 - 1), so checking the span after each one keeps it in
       64 bits. */
    int64_t span = 0;
    for (int d = 0; d < nb_dims; d++) {
        span += (extent_of(d, dims, vect) - 1) * llabs(strides[d]);
        if ((span + 1) * vect > MAX_ELEMENTS)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the strides span more than 2^31-1 elements");
    }
    t->dtype = dtype;
    t->format = format;
    t->nb_dims = nb_dims;
    for (int d = 0; d < nb_dims; d++) {
        t->dims[d] = dims[d];
        t->strides[d] = strides[d];
    }
    t->set = true;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_nb_dims(int nb_dims, int min)
{
    if (nb_dims > CUDNN_DIM_MAX)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "nbDims %d is above CUDNN_DIM_MAX", nb_dims);
    if (nb_dims < min) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims %d is below %d", nb_dims, min);
    return CUDNN_STATUS_SUCCESS;
}

/* The setters with explicit strides: a vector type is laid out as NCHW_VECT_C, the strides
   counting whole vectors. */
static cudnnStatus_t set_strided(cudnnTensorDescriptor_t t, cudnnDataType_t dtype, int nb_dims,
                                 const int dims[], const int strides[])
{
    if (!ocd_dtype_valid(dtype))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid data type %d", (int)dtype);
    cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
    if (ocd_dtype_vector_width(dtype) > 1) {
        format = CUDNN_TENSOR_NCHW_VECT_C;
        OCD_TRY(check_type_and_format(dtype, format, nb_dims, dims));
    }
    return set_tensor(t, dtype, format, nb_dims, dims, strides);
}

cudnnStatus_t ocd_tensor_set_packed(cudnnTensorDescriptor_t t, cudnnTensorFormat_t format,
                                    cudnnDataType_t dtype, int nb_dims, const int dims[])
{
    for (int d = 0; d < nb_dims; d++)
        if (dims[d] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimension %d is %d", d, dims[d]);
    OCD_TRY(check_type_and_format(dtype, format, nb_dims, dims));
    OCD_TRY(check_element_count(nb_dims, dims));
    int strides[OCD_MAX_DIMS];
    ocd_packed_strides(format, nb_dims, dims, ocd_dtype_vector_width(dtype), strides);
    return set_tensor(t, dtype, format, nb_dims, dims, strides);
}

/* ---- tensor descriptors ---------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc)
{
    OCD_LOG_API("tensorDesc=%p", (void *)tensorDesc);
    return ocd_object_create(OCD_OBJ_TENSOR, sizeof(struct cudnnTensorStruct), (void **)tensorDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc)
{
    OCD_LOG_API("tensorDesc=%p", (void *)tensorDesc);
    if (tensorDesc == NULL) return CUDNN_STATUS_SUCCESS; /* destroying NULL is a no-op */
    return ocd_object_destroy(OCD_OBJ_TENSOR, tensorDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc,
                                                     cudnnTensorFormat_t format,
                                                     cudnnDataType_t dataType, int n, int c, int h,
                                                     int w)
{
    OCD_LOG_API("tensorDesc=%p format=%d dataType=%d n=%d c=%d h=%d w=%d", (void *)tensorDesc,
                (int)format, (int)dataType, n, c, h, w);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, tensorDesc);
    int dims[4] = {n, c, h, w};
    for (int d = 0; d < 4; d++) /* checked here too, so that the log names this function */
        if (dims[d] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimension %d is %d", d, dims[d]);
    return ocd_tensor_set_packed(tensorDesc, format, dataType, 4, dims);
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t tensorDesc,
                                                       cudnnDataType_t dataType, int n, int c,
                                                       int h, int w, int nStride, int cStride,
                                                       int hStride, int wStride)
{
    OCD_LOG_API("tensorDesc=%p dataType=%d dims=[%d,%d,%d,%d] strides=[%d,%d,%d,%d]",
                (void *)tensorDesc, (int)dataType, n, c, h, w, nStride, cStride, hStride, wStride);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, tensorDesc);
    int dims[4] = {n, c, h, w}, strides[4] = {nStride, cStride, hStride, wStride};
    return set_strided(tensorDesc, dataType, 4, dims, strides);
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t tensorDesc,
                                                     cudnnDataType_t *dataType, int *n, int *c,
                                                     int *h, int *w, int *nStride, int *cStride,
                                                     int *hStride, int *wStride)
{
    OCD_LOG_API("tensorDesc=%p", (void *)tensorDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, tensorDesc);
    if (!tensorDesc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "tensorDesc was never set");
    if (tensorDesc->nb_dims != 4)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "tensorDesc has %d dims, not 4", tensorDesc->nb_dims);
    int *out[9] = {n, c, h, w, nStride, cStride, hStride, wStride, NULL};
    if (dataType == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType is NULL");
    for (int i = 0; i < 8; i++)
        if (out[i] == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "output %d is NULL", i);
    *dataType = tensorDesc->dtype;
    for (int i = 0; i < 4; i++) {
        *out[i] = tensorDesc->dims[i];
        *out[4 + i] = tensorDesc->strides[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc,
                                                     cudnnDataType_t dataType, int nbDims,
                                                     const int dimA[], const int strideA[])
{
    OCD_LOG_API("tensorDesc=%p dataType=%d nbDims=%d", (void *)tensorDesc, (int)dataType, nbDims);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, tensorDesc);
    if (nbDims < 3 || nbDims > CUDNN_DIM_MAX)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "nbDims %d is outside [3, CUDNN_DIM_MAX]", nbDims);
    if (dimA == NULL || strideA == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA or strideA is NULL");
    return set_strided(tensorDesc, dataType, nbDims, dimA, strideA);
}

cudnnStatus_t CUDNNWINAPI cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t tensorDesc,
                                                       cudnnTensorFormat_t format,
                                                       cudnnDataType_t dataType, int nbDims,
                                                       const int dimA[])
{
    OCD_LOG_API("tensorDesc=%p format=%d dataType=%d nbDims=%d", (void *)tensorDesc, (int)format,
                (int)dataType, nbDims);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, tensorDesc);
    OCD_TRY(check_nb_dims(nbDims, 3));
    if (dimA == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA is NULL");
    return ocd_tensor_set_packed(tensorDesc, format, dataType, nbDims, dimA);
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc,
                                                     int nbDimsRequested,
                                                     cudnnDataType_t *dataType, int *nbDims,
                                                     int dimA[], int strideA[])
{
    OCD_LOG_API("tensorDesc=%p nbDimsRequested=%d", (void *)tensorDesc, nbDimsRequested);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, tensorDesc);
    if (!tensorDesc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "tensorDesc was never set");
    if (nbDimsRequested < 0 || dataType == NULL || nbDims == NULL ||
        (nbDimsRequested > 0 && (dimA == NULL || strideA == NULL)))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested is negative or an output is NULL");
    *dataType = tensorDesc->dtype;
    *nbDims = tensorDesc->nb_dims;
    for (int d = 0; d < OCD_MIN(nbDimsRequested, tensorDesc->nb_dims); d++) {
        dimA[d] = tensorDesc->dims[d];
        strideA[d] = tensorDesc->strides[d];
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t tensorDesc,
                                                    size_t *size)
{
    OCD_LOG_API("tensorDesc=%p", (void *)tensorDesc);
    struct ocd_tensor_view v;
    OCD_TRY(ocd_tensor_get_taking(tensorDesc, "tensorDesc", OCD_TAKES_SHARED | OCD_TAKES_REVERSED, &v));
    if (size == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "size is NULL");
    /* From the lowest byte to the highest: with negative strides, ocd_view_below_bytes of it lie
       below the pointer to element (0,...,0). */
    *size = (size_t)ocd_view_span_bytes(&v);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- filter descriptors ---------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc)
{
    OCD_LOG_API("filterDesc=%p", (void *)filterDesc);
    return ocd_object_create(OCD_OBJ_FILTER, sizeof(struct cudnnFilterStruct), (void **)filterDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc)
{
    OCD_LOG_API("filterDesc=%p", (void *)filterDesc);
    if (filterDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_FILTER, filterDesc);
}

cudnnStatus_t ocd_filter_set(cudnnFilterDescriptor_t f, cudnnDataType_t dtype, cudnnTensorFormat_t format,
                             int nb_dims, const int dims[])
{
    OCD_TRY(check_nb_dims(nb_dims, 3));
    if (dims == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "filterDimA is NULL");
    for (int d = 0; d < nb_dims; d++)
        if (dims[d] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimension %d is %d", d, dims[d]);
    OCD_TRY(check_type_and_format(dtype, format, nb_dims, dims));
    OCD_TRY(check_element_count(nb_dims, dims));
    f->dtype = dtype;
    f->format = format;
    f->nb_dims = nb_dims;
    memcpy(f->dims, dims, sizeof(int) * (size_t)nb_dims);
    f->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc,
                                                     cudnnDataType_t dataType,
                                                     cudnnTensorFormat_t format, int k, int c,
                                                     int h, int w)
{
    OCD_LOG_API("filterDesc=%p dataType=%d format=%d k=%d c=%d h=%d w=%d", (void *)filterDesc,
                (int)dataType, (int)format, k, c, h, w);
    OCD_CHECK_OBJECT(OCD_OBJ_FILTER, filterDesc);
    int dims[4] = {k, c, h, w};
    return ocd_filter_set(filterDesc, dataType, format, 4, dims);
}

cudnnStatus_t CUDNNWINAPI cudnnGetFilter4dDescriptor(const cudnnFilterDescriptor_t filterDesc,
                                                     cudnnDataType_t *dataType,
                                                     cudnnTensorFormat_t *format, int *k, int *c,
                                                     int *h, int *w)
{
    OCD_LOG_API("filterDesc=%p", (void *)filterDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_FILTER, filterDesc);
    if (!filterDesc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "filterDesc was never set");
    if (filterDesc->nb_dims != 4)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "filterDesc has %d dims, not 4", filterDesc->nb_dims);
    if (!dataType || !format || !k || !c || !h || !w)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *dataType = filterDesc->dtype;
    *format = filterDesc->format;
    *k = filterDesc->dims[0];
    *c = filterDesc->dims[1];
    *h = filterDesc->dims[2];
    *w = filterDesc->dims[3];
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t filterDesc,
                                                     cudnnDataType_t dataType,
                                                     cudnnTensorFormat_t format, int nbDims,
                                                     const int filterDimA[])
{
    OCD_LOG_API("filterDesc=%p dataType=%d format=%d nbDims=%d", (void *)filterDesc, (int)dataType,
                (int)format, nbDims);
    OCD_CHECK_OBJECT(OCD_OBJ_FILTER, filterDesc);
    return ocd_filter_set(filterDesc, dataType, format, nbDims, filterDimA);
}

cudnnStatus_t CUDNNWINAPI cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t filterDesc,
                                                     int nbDimsRequested,
                                                     cudnnDataType_t *dataType,
                                                     cudnnTensorFormat_t *format, int *nbDims,
                                                     int filterDimA[])
{
    OCD_LOG_API("filterDesc=%p nbDimsRequested=%d", (void *)filterDesc, nbDimsRequested);
    OCD_CHECK_OBJECT(OCD_OBJ_FILTER, filterDesc);
    if (!filterDesc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "filterDesc was never set");
    if (nbDimsRequested < 0 || !dataType || !format || !nbDims ||
        (nbDimsRequested > 0 && filterDimA == NULL))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested is negative or an output is NULL");
    *dataType = filterDesc->dtype;
    *format = filterDesc->format;
    *nbDims = filterDesc->nb_dims;
    for (int d = 0; d < OCD_MIN(nbDimsRequested, filterDesc->nb_dims); d++)
        filterDimA[d] = filterDesc->dims[d];
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetFilterSizeInBytes(const cudnnFilterDescriptor_t filterDesc,
                                                    size_t *size)
{
    OCD_LOG_API("filterDesc=%p", (void *)filterDesc);
    struct ocd_tensor_view v;
    OCD_TRY(ocd_filter_get(filterDesc, "filterDesc", &v));
    if (size == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "size is NULL");
    *size = (size_t)ocd_view_span_bytes(&v);
    return CUDNN_STATUS_SUCCESS;
}
