/* backend_types.c: the backend descriptor kinds that hold values rather than other descriptors:
   TENSOR, the parameter descriptors (CONVOLUTION, POINTWISE, MATMUL, REDUCTION), KNOB_CHOICE,
   VARIANT_PACK, and the library-filled KNOB_INFO, LAYOUT_INFO and INTERMEDIATE_INFO: their
   attribute tables, defaults and finalize rules, and the tensor helpers the operations share. */
#include "graph/backend_desc.h"

#include "core/dtype.h"
#include "core/platform.h"

#include <float.h>
#include <string.h>

/* ---- TENSOR ---------------------------------------------------------------------------------- */

static const struct ocd_bk_attr tensor_attrs[] = {
    OCD_BK_SCALAR(TENSOR_UNIQUE_ID, INT64, OCD_BA_REQUIRED, struct ocd_graph_tensor, uid),
    OCD_BK_SCALAR(TENSOR_DATA_TYPE, DATA_TYPE, OCD_BA_REQUIRED, struct ocd_graph_tensor, dtype),
    OCD_BK_SCALAR(TENSOR_BYTE_ALIGNMENT, INT64, OCD_BA_REQUIRED, struct ocd_graph_tensor, alignment),
    OCD_BK_ARRAY(TENSOR_DIMENSIONS, INT64, OCD_BA_REQUIRED, 1, OCD_MAX_DIMS, struct ocd_graph_tensor, dims, rank),
    OCD_BK_ARRAY(TENSOR_STRIDES, INT64, OCD_BA_REQUIRED, 1, OCD_MAX_DIMS, struct ocd_graph_tensor, strides,
                 n_strides),
    OCD_BK_SCALAR(TENSOR_VECTOR_COUNT, INT64, 0, struct ocd_graph_tensor, vect_count),
    OCD_BK_SCALAR(TENSOR_VECTORIZED_DIMENSION, INT64, 0, struct ocd_graph_tensor, vect_dim),
    OCD_BK_SCALAR(TENSOR_IS_VIRTUAL, BOOLEAN, 0, struct ocd_graph_tensor, is_virtual),
    OCD_BK_SCALAR(TENSOR_IS_BY_VALUE, BOOLEAN, 0, struct ocd_graph_tensor, by_value),
};

static void tensor_init(void *state)
{
    struct ocd_graph_tensor *t = state;
    t->vect_count = 1;
    t->vect_dim = -1;
}

static cudnnStatus_t tensor_finalize(struct ocd_bk_desc *d)
{
    struct ocd_graph_tensor *t = ocd_bk_state(d);
    if (t->n_strides != t->rank)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the tensor has %lld dimensions but %lld strides",
                        (long long)t->rank, (long long)t->n_strides);
    if (t->dtype == CUDNN_DATA_INT8x4 || t->dtype == CUDNN_DATA_UINT8x4 || t->dtype == CUDNN_DATA_INT8x32)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                        "data type %s: a backend tensor is vectorized by VECTOR_COUNT, not by its type",
                        ocd_dtype_name(t->dtype));
    if (t->vect_count != 1) {
        if (t->dtype != CUDNN_DATA_INT8 && t->dtype != CUDNN_DATA_UINT8)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "only INT8 and UINT8 tensors are vectorized, not %s",
                            ocd_dtype_name(t->dtype));
        if (!(t->vect_count == 4 || (t->vect_count == 32 && t->dtype == CUDNN_DATA_INT8)))
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "vector count %lld (4 for INT8/UINT8, 32 for INT8)",
                            (long long)t->vect_count);
        if (t->vect_dim < 0 || t->vect_dim >= t->rank)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "vectorized dimension %lld is not one of the %lld",
                            (long long)t->vect_dim, (long long)t->rank);
        if (t->vect_dim != 1)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "only dimension 1 (channels) is vectorized, not %lld",
                            (long long)t->vect_dim);
    }
    int64_t esize = (int64_t)ocd_dtype_scalar_size(t->dtype);
    if (esize == 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "data type %d is not a tensor data type", (int)t->dtype);
    if (t->alignment <= 0 || t->alignment % esize != 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "byte alignment %lld is not a positive multiple of %lld",
                        (long long)t->alignment, (long long)esize);
    /* the byte offset of the last element, and each stride in bytes (a size-1 dimension's
       included), must fit 63 bits: so a finalized tensor's scalar view (dims[1] and every stride
       times vect_count), which the operations' shape checks and the engines use, never overflows */
    int64_t last = 0, scale = esize * t->vect_count;
    for (int64_t i = 0; i < t->rank; i++) {
        if (t->dims[i] <= 0 || t->strides[i] <= 0)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimension %lld is %lld with stride %lld: both must be >= 1",
                            (long long)i, (long long)t->dims[i], (long long)t->strides[i]);
        int64_t step;
        if (ocd_mul_overflow_i64(t->strides[i], scale, &step))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimension %lld's stride %lld overflows 64 bits in bytes",
                            (long long)i, (long long)t->strides[i]);
        if (ocd_mul_overflow_i64(t->dims[i] - 1, t->strides[i], &step) || ocd_add_overflow_i64(last, step, &last))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the tensor's extent overflows 64 bits");
    }
    int64_t bytes;
    if (ocd_add_overflow_i64(last, 1, &last) || ocd_mul_overflow_i64(last, scale, &bytes))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the tensor's extent overflows 64 bits");
    if (t->vect_count == 1) t->vect_dim = -1;
    return CUDNN_STATUS_SUCCESS;
}

const struct ocd_bk_type ocd_bk_tensor_type = OCD_BK_TYPE(TENSOR_DESCRIPTOR, "TENSOR", struct ocd_graph_tensor,
                                                          struct ocd_graph_tensor, tensor_attrs, tensor_init,
                                                          tensor_finalize, NULL, NULL);

int64_t ocd_bk_tensor_channels(const struct ocd_graph_tensor *t)
{
    return t->rank > 1 ? t->dims[1] * t->vect_count : 1;
}

bool ocd_bk_same_dims(const struct ocd_graph_tensor *a, const struct ocd_graph_tensor *b)
{
    return a->rank == b->rank && a->vect_count == b->vect_count &&
           memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) == 0;
}

bool ocd_bk_same_tensor(const struct ocd_graph_tensor *a, const struct ocd_graph_tensor *b)
{
    return ocd_bk_same_dims(a, b) && a->uid == b->uid && a->dtype == b->dtype && a->is_virtual == b->is_virtual &&
           a->by_value == b->by_value && memcmp(a->strides, b->strides, (size_t)a->rank * sizeof a->strides[0]) == 0;
}

cudnnStatus_t ocd_graph_tensor_view(const struct ocd_graph_tensor *t, struct ocd_tensor_view *v)
{
    memset(v, 0, sizeof *v);
    v->rank = (int)t->rank;
    v->vect = (int)t->vect_count;
    v->dtype = t->vect_count == 1 ? t->dtype
               : t->vect_count == 32 ? CUDNN_DATA_INT8x32
               : t->dtype == CUDNN_DATA_UINT8 ? CUDNN_DATA_UINT8x4
                                               : CUDNN_DATA_INT8x4;
    for (int64_t i = 0; i < t->rank; i++) {
        v->dims[i] = t->dims[i] * (i == 1 ? t->vect_count : 1);
        v->strides[i] = t->strides[i] * t->vect_count;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- CONVOLUTION ----------------------------------------------------------------------------- */

#define CONV_ARRAY(NAME, FIELD, COUNT)                                                          \
    OCD_BK_ARRAY(NAME, INT64, OCD_BA_REQUIRED, 1, OCD_GRAPH_MAX_SPATIAL, struct ocd_graph_conv_desc, FIELD, COUNT)
static const struct ocd_bk_attr conv_attrs[] = {
    OCD_BK_SCALAR(CONVOLUTION_COMP_TYPE, DATA_TYPE, OCD_BA_REQUIRED, struct ocd_graph_conv_desc, comp),
    OCD_BK_SCALAR(CONVOLUTION_CONV_MODE, CONVOLUTION_MODE, OCD_BA_REQUIRED, struct ocd_graph_conv_desc, mode),
    OCD_BK_SCALAR(CONVOLUTION_SPATIAL_DIMS, INT64, OCD_BA_REQUIRED, struct ocd_graph_conv_desc, nsp),
    CONV_ARRAY(CONVOLUTION_PRE_PADDINGS, pre, n_pre),
    CONV_ARRAY(CONVOLUTION_POST_PADDINGS, post, n_post),
    CONV_ARRAY(CONVOLUTION_DILATIONS, dilation, n_dilation),
    CONV_ARRAY(CONVOLUTION_FILTER_STRIDES, stride, n_stride),
};

static cudnnStatus_t conv_finalize(struct ocd_bk_desc *d)
{
    struct ocd_graph_conv_desc *c = ocd_bk_state(d);
    if (c->nsp < 1 || c->nsp > OCD_GRAPH_MAX_SPATIAL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "SPATIAL_DIMS is %lld, not in [1, %d]", (long long)c->nsp,
                        OCD_GRAPH_MAX_SPATIAL);
    if (c->n_pre != c->nsp || c->n_post != c->nsp || c->n_dilation != c->nsp || c->n_stride != c->nsp)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "%lld spatial dims but %lld pre paddings, %lld post paddings, %lld dilations, %lld strides",
                        (long long)c->nsp, (long long)c->n_pre, (long long)c->n_post, (long long)c->n_dilation,
                        (long long)c->n_stride);
    for (int64_t i = 0; i < c->nsp; i++) {
        if (c->pre[i] < 0 || c->post[i] < 0 || c->dilation[i] < 1 || c->stride[i] < 1)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                            "spatial dim %lld: paddings %lld/%lld must be >= 0, dilation %lld and stride %lld >= 1",
                            (long long)i, (long long)c->pre[i], (long long)c->post[i], (long long)c->dilation[i],
                            (long long)c->stride[i]);
    }
    return CUDNN_STATUS_SUCCESS;
}

const struct ocd_bk_type ocd_bk_convolution_type =
    OCD_BK_TYPE(CONVOLUTION_DESCRIPTOR, "CONVOLUTION", struct ocd_graph_conv_desc, struct ocd_graph_conv_desc,
                conv_attrs, NULL, conv_finalize, NULL, NULL);

/* ---- POINTWISE ------------------------------------------------------------------------------- */

#define PW_REAL(NAME, FIELD) OCD_BK_SCALAR(NAME, DOUBLE, OCD_BA_REAL, struct ocd_graph_pointwise_desc, FIELD)
static const struct ocd_bk_attr pointwise_attrs[] = {
    OCD_BK_SCALAR(POINTWISE_MODE, POINTWISE_MODE, OCD_BA_REQUIRED, struct ocd_graph_pointwise_desc, mode),
    OCD_BK_SCALAR(POINTWISE_MATH_PREC, DATA_TYPE, OCD_BA_REQUIRED, struct ocd_graph_pointwise_desc, math_prec),
    OCD_BK_SCALAR(POINTWISE_NAN_PROPAGATION, NAN_PROPOGATION, 0, struct ocd_graph_pointwise_desc, nan),
    PW_REAL(POINTWISE_RELU_LOWER_CLIP, relu_lower),
    PW_REAL(POINTWISE_RELU_UPPER_CLIP, relu_upper),
    PW_REAL(POINTWISE_RELU_LOWER_CLIP_SLOPE, relu_slope),
    PW_REAL(POINTWISE_ELU_ALPHA, elu_alpha),
    PW_REAL(POINTWISE_SOFTPLUS_BETA, softplus_beta),
    PW_REAL(POINTWISE_SWISH_BETA, swish_beta),
};

static void pointwise_init(void *state)
{
    struct ocd_graph_pointwise_desc *p = state;
    p->nan = CUDNN_NOT_PROPAGATE_NAN;
    p->relu_upper = DBL_MAX;
    p->elu_alpha = p->softplus_beta = p->swish_beta = 1.0;
}

static cudnnStatus_t pointwise_finalize(struct ocd_bk_desc *d)
{
    const struct ocd_graph_pointwise_desc *p = ocd_bk_state(d);
    if (!(p->relu_lower <= p->relu_upper))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "ReLU lower clip %g is above the upper clip %g", p->relu_lower,
                        p->relu_upper);
    return CUDNN_STATUS_SUCCESS;
}

const struct ocd_bk_type ocd_bk_pointwise_type =
    OCD_BK_TYPE(POINTWISE_DESCRIPTOR, "POINTWISE", struct ocd_graph_pointwise_desc, struct ocd_graph_pointwise_desc,
                pointwise_attrs, pointwise_init, pointwise_finalize, NULL, NULL);

/* ---- MATMUL, REDUCTION ----------------------------------------------------------------------- */

static cudnnStatus_t nothing_to_check(struct ocd_bk_desc *d)
{
    (void)d;
    return CUDNN_STATUS_SUCCESS;
}

static const struct ocd_bk_attr matmul_attrs[] = {
    OCD_BK_SCALAR(MATMUL_COMP_TYPE, DATA_TYPE, OCD_BA_REQUIRED, struct ocd_graph_matmul_desc, comp),
};
const struct ocd_bk_type ocd_bk_matmul_type =
    OCD_BK_TYPE(MATMUL_DESCRIPTOR, "MATMUL", struct ocd_graph_matmul_desc, struct ocd_graph_matmul_desc,
                matmul_attrs, NULL, nothing_to_check, NULL, NULL);

static const struct ocd_bk_attr reduction_attrs[] = {
    OCD_BK_SCALAR(REDUCTION_OPERATOR, REDUCTION_OPERATOR_TYPE, OCD_BA_REQUIRED, struct ocd_graph_reduction_desc, op),
    OCD_BK_SCALAR(REDUCTION_COMP_TYPE, DATA_TYPE, OCD_BA_REQUIRED, struct ocd_graph_reduction_desc, comp),
};
const struct ocd_bk_type ocd_bk_reduction_type =
    OCD_BK_TYPE(REDUCTION_DESCRIPTOR, "REDUCTION", struct ocd_graph_reduction_desc, struct ocd_graph_reduction_desc,
                reduction_attrs, NULL, nothing_to_check, NULL, NULL);

/* ---- KNOB_CHOICE, KNOB_INFO ------------------------------------------------------------------ */

static const struct ocd_bk_attr knob_choice_attrs[] = {
    OCD_BK_SCALAR(KNOB_CHOICE_KNOB_TYPE, KNOB_TYPE, OCD_BA_REQUIRED, struct ocd_graph_knob_choice, type),
    OCD_BK_SCALAR(KNOB_CHOICE_KNOB_VALUE, INT64, OCD_BA_REQUIRED, struct ocd_graph_knob_choice, value),
};
const struct ocd_bk_type ocd_bk_knob_choice_type =
    OCD_BK_TYPE(KNOB_CHOICE_DESCRIPTOR, "KNOB_CHOICE", struct ocd_graph_knob_choice, struct ocd_graph_knob_choice,
                knob_choice_attrs, NULL, nothing_to_check, NULL, NULL);

static const struct ocd_bk_attr knob_info_attrs[] = {
    OCD_BK_SCALAR(KNOB_INFO_TYPE, KNOB_TYPE, OCD_BA_RO, struct ocd_graph_knob_info, type),
    OCD_BK_SCALAR(KNOB_INFO_MAXIMUM_VALUE, INT64, OCD_BA_RO, struct ocd_graph_knob_info, max),
    OCD_BK_SCALAR(KNOB_INFO_MINIMUM_VALUE, INT64, OCD_BA_RO, struct ocd_graph_knob_info, min),
    OCD_BK_SCALAR(KNOB_INFO_STRIDE, INT64, OCD_BA_RO, struct ocd_graph_knob_info, stride),
};
const struct ocd_bk_type ocd_bk_knob_info_type =
    OCD_BK_TYPE(KNOB_INFO_DESCRIPTOR, "KNOB_INFO", struct ocd_graph_knob_info, struct ocd_graph_knob_info,
                knob_info_attrs, NULL, NULL, NULL, NULL);

/* ---- LAYOUT_INFO, INTERMEDIATE_INFO (filled by the library; our engines report none) ---------- */

struct layout_info {
    int64_t uid;
    cudnnBackendLayoutType_t types[CUDNN_LAYOUT_TYPE_COUNT];
    int64_t n_types;
};
static const struct ocd_bk_attr layout_info_attrs[] = {
    OCD_BK_SCALAR(LAYOUT_INFO_TENSOR_UID, INT64, OCD_BA_RO, struct layout_info, uid),
    OCD_BK_ARRAY(LAYOUT_INFO_TYPES, LAYOUT_TYPE, OCD_BA_RO, 0, 0, struct layout_info, types, n_types),
};
const struct ocd_bk_type ocd_bk_layout_info_type = OCD_BK_TYPE(
    LAYOUT_INFO_DESCRIPTOR, "LAYOUT_INFO", struct layout_info, struct layout_info, layout_info_attrs, NULL, NULL, NULL, NULL);

struct intermediate_info {
    int64_t uid, size;
    int64_t n_uids, n_attributes;
    int64_t uids[1];
    cudnnBackendAttributeName_t attributes[1];
};
static const struct ocd_bk_attr intermediate_info_attrs[] = {
    OCD_BK_SCALAR(INTERMEDIATE_INFO_UNIQUE_ID, INT64, OCD_BA_RO, struct intermediate_info, uid),
    OCD_BK_SCALAR(INTERMEDIATE_INFO_SIZE, INT64, OCD_BA_RO, struct intermediate_info, size),
    OCD_BK_ARRAY(INTERMEDIATE_INFO_DEPENDENT_DATA_UIDS, INT64, OCD_BA_RO, 0, 0, struct intermediate_info, uids, n_uids),
    OCD_BK_ARRAY(INTERMEDIATE_INFO_DEPENDENT_ATTRIBUTES, ATTRIB_NAME, OCD_BA_RO, 0, 0, struct intermediate_info,
                 attributes, n_attributes),
};
const struct ocd_bk_type ocd_bk_intermediate_info_type =
    OCD_BK_TYPE(INTERMEDIATE_INFO_DESCRIPTOR, "INTERMEDIATE_INFO", struct intermediate_info, struct intermediate_info,
                intermediate_info_attrs, NULL, NULL, NULL, NULL);

/* ---- VARIANT_PACK ---------------------------------------------------------------------------- */

#define OCD_GRAPH_MAX_VARIANT 256
struct variant_pack {
    struct ocd_graph_variant v; /* the value: points into the arrays below */
    int64_t uids[OCD_GRAPH_MAX_VARIANT];
    void *pointers[OCD_GRAPH_MAX_VARIANT];
    void *intermediates[OCD_GRAPH_MAX_VARIANT];
    int64_t n_uids, n_pointers, n_intermediates;
};
static const struct ocd_bk_attr variant_pack_attrs[] = {
    OCD_BK_ARRAY(VARIANT_PACK_UNIQUE_IDS, INT64, OCD_BA_REQUIRED, 0, OCD_GRAPH_MAX_VARIANT, struct variant_pack, uids,
                 n_uids),
    OCD_BK_ARRAY(VARIANT_PACK_DATA_POINTERS, VOID_PTR, OCD_BA_REQUIRED, 0, OCD_GRAPH_MAX_VARIANT, struct variant_pack,
                 pointers, n_pointers),
    OCD_BK_ARRAY(VARIANT_PACK_INTERMEDIATES, VOID_PTR, 0, 0, OCD_GRAPH_MAX_VARIANT, struct variant_pack,
                 intermediates, n_intermediates),
    OCD_BK_SCALAR(VARIANT_PACK_WORKSPACE, VOID_PTR, 0, struct variant_pack, v.workspace),
};

static cudnnStatus_t variant_pack_finalize(struct ocd_bk_desc *d)
{
    struct variant_pack *p = ocd_bk_state(d);
    if (p->n_uids != p->n_pointers)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%lld unique ids but %lld data pointers", (long long)p->n_uids,
                        (long long)p->n_pointers);
    for (int64_t i = 0; i < p->n_uids; i++)
        for (int64_t j = 0; j < i; j++)
            if (p->uids[i] == p->uids[j])
                return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "unique id %lld is given twice", (long long)p->uids[i]);
    p->v.n = p->n_uids;
    p->v.uids = p->uids;
    p->v.pointers = p->pointers;
    return CUDNN_STATUS_SUCCESS;
}

const struct ocd_bk_type ocd_bk_variant_pack_type =
    OCD_BK_TYPE(VARIANT_PACK_DESCRIPTOR, "VARIANT_PACK", struct variant_pack, struct variant_pack, variant_pack_attrs,
                NULL, variant_pack_finalize, NULL, NULL);
