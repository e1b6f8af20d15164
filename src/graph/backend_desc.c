/* backend_desc.c: cudnnBackendCreateDescriptor, DestroyDescriptor, Initialize, SetAttribute,
   GetAttribute and Finalize: the generic machine over the kinds' attribute tables
   (backend_desc.h), and the helpers the kinds' finalize functions and getters share.

   Statuses (the cuDNN 8.2 reference; ../shared/api/backend-8.2.md section 2.1): a Set on a
   finalized descriptor and a Get on one that is not finalized are NOT_INITIALIZED; an attribute
   of another kind, a read-only attribute, a wrong attribute type, an element count out of the
   attribute's range or an illegal element are BAD_PARAM; a kind 8.2 does not have is
   NOT_SUPPORTED. A Get writes min(requested, total) elements and reports the total when
   requested is 0, the written count otherwise (cuDNN's own behaviour; the same for every client
   that asks for the count first). */
#include "graph/backend_desc.h"

#include <stdlib.h>
#include <string.h>

static const struct ocd_bk_type *const kinds[OCD_BK_KINDS] = {
    [CUDNN_BACKEND_POINTWISE_DESCRIPTOR] = &ocd_bk_pointwise_type,
    [CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR] = &ocd_bk_convolution_type,
    [CUDNN_BACKEND_ENGINE_DESCRIPTOR] = &ocd_bk_engine_type,
    [CUDNN_BACKEND_ENGINECFG_DESCRIPTOR] = &ocd_bk_enginecfg_type,
    [CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR] = &ocd_bk_engineheur_type,
    [CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR] = &ocd_bk_plan_type,
    [CUDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR] = &ocd_bk_intermediate_info_type,
    [CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR] = &ocd_bk_knob_choice_type,
    [CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR] = &ocd_bk_knob_info_type,
    [CUDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR] = &ocd_bk_layout_info_type,
    [CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR] = &ocd_bk_conv_fwd_type,
    [CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR] = &ocd_bk_conv_bwd_filter_type,
    [CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR] = &ocd_bk_conv_bwd_data_type,
    [CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR] = &ocd_bk_op_pointwise_type,
    [CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR] = &ocd_bk_op_gen_stats_type,
    [CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR] = &ocd_bk_graph_type,
    [CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR] = &ocd_bk_variant_pack_type,
    [CUDNN_BACKEND_TENSOR_DESCRIPTOR] = &ocd_bk_tensor_type,
    [CUDNN_BACKEND_MATMUL_DESCRIPTOR] = &ocd_bk_matmul_type,
    [CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR] = &ocd_bk_op_matmul_type,
    [CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR] = &ocd_bk_op_bn_finalize_type,
    [CUDNN_BACKEND_REDUCTION_DESCRIPTOR] = &ocd_bk_reduction_type,
    [CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR] = &ocd_bk_op_reduction_type,
    [CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR] = &ocd_bk_op_bn_bwd_weights_type,
};

/* ---- element types --------------------------------------------------------------------------- */

static size_t element_size(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_HANDLE: return sizeof(cudnnHandle_t);
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_INT64: return sizeof(int64_t);
    case CUDNN_TYPE_FLOAT: return sizeof(float);
    case CUDNN_TYPE_DOUBLE: return sizeof(double);
    case CUDNN_TYPE_VOID_PTR: return sizeof(void *);
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(cudnnBackendDescriptor_t);
    default: return sizeof(int); /* the enumerations */
    }
}

static bool pointwise_mode_valid(int m)
{
    return (m >= CUDNN_POINTWISE_ADD && m <= CUDNN_POINTWISE_SQRT) ||
           (m >= CUDNN_POINTWISE_RELU_FWD && m <= CUDNN_POINTWISE_SWISH_FWD) ||
           (m >= CUDNN_POINTWISE_RELU_BWD && m <= CUDNN_POINTWISE_SWISH_BWD);
}

/* The legal values of each enumeration element type that has a fixed set: one range, or the
   pointwise modes' three. A table, not a switch: GCC 13.3 at -O3 lost the data-type case of the
   switch this replaces (an illegal data type was accepted), which GCC 12 compiled correctly. */
struct enum_range {
    bool checked;
    int lo, hi;
};
static const struct enum_range enum_ranges[] = {
    [CUDNN_TYPE_DATA_TYPE] = {true, CUDNN_DATA_FLOAT, CUDNN_DATA_INT64},
    [CUDNN_TYPE_CONVOLUTION_MODE] = {true, CUDNN_CONVOLUTION, CUDNN_CROSS_CORRELATION},
    [CUDNN_TYPE_HEUR_MODE] = {true, 0, CUDNN_HEUR_MODES_COUNT - 1},
    [CUDNN_TYPE_KNOB_TYPE] = {true, 0, CUDNN_KNOB_TYPE_COUNTS - 1},
    [CUDNN_TYPE_NAN_PROPOGATION] = {true, CUDNN_NOT_PROPAGATE_NAN, CUDNN_PROPAGATE_NAN},
    [CUDNN_TYPE_NUMERICAL_NOTE] = {true, 0, CUDNN_NUMERICAL_NOTE_TYPE_COUNT - 1},
    [CUDNN_TYPE_LAYOUT_TYPE] = {true, 0, CUDNN_LAYOUT_TYPE_COUNT - 1},
    [CUDNN_TYPE_POINTWISE_MODE] = {true, 0, 0}, /* three ranges: pointwise_mode_valid */
    [CUDNN_TYPE_GENSTATS_MODE] = {true, CUDNN_GENSTATS_SUM_SQSUM, CUDNN_GENSTATS_SUM_SQSUM},
    [CUDNN_TYPE_BN_FINALIZE_STATS_MODE] = {true, CUDNN_BN_FINALIZE_STATISTICS_TRAINING,
                                           CUDNN_BN_FINALIZE_STATISTICS_INFERENCE},
    [CUDNN_TYPE_REDUCTION_OPERATOR_TYPE] = {true, CUDNN_REDUCE_TENSOR_ADD, CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS},
    [CUDNN_TYPE_BEHAVIOR_NOTE] = {true, 0, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT - 1},
};

/* Whether v is a legal value of element type t (true for the types without a fixed set). */
static bool enum_valid(cudnnBackendAttributeType_t t, int v)
{
    if ((size_t)t >= OCD_ARRAY_LEN(enum_ranges) || !enum_ranges[t].checked) return true;
    if (t == CUDNN_TYPE_POINTWISE_MODE) return pointwise_mode_valid(v);
    return v >= enum_ranges[t].lo && v <= enum_ranges[t].hi;
}

static bool is_enum_type(cudnnBackendAttributeType_t t)
{
    return element_size(t) == sizeof(int) && t != CUDNN_TYPE_FLOAT;
}

/* ---- descriptors ------------------------------------------------------------------------------ */

static struct ocd_bk_desc *desc_of(cudnnBackendDescriptor_t p)
{
    return ocd_object_alive(OCD_OBJ_BACKEND, p) ? (struct ocd_bk_desc *)p : NULL;
}

static void reset(struct ocd_bk_desc *d)
{
    if (d->finalized && d->type->release != NULL) d->type->release(ocd_bk_state(d));
    memset(ocd_bk_state(d), 0, d->type->state_size);
    if (d->type->init != NULL) d->type->init(ocd_bk_state(d));
    d->finalized = false;
    d->set = 0;
}

static const struct ocd_bk_attr *find_attr(const struct ocd_bk_desc *d, cudnnBackendAttributeName_t name,
                                           size_t *index)
{
    for (size_t i = 0; i < d->type->n_attrs; i++) {
        if (d->type->attrs[i].name == name) {
            if (index != NULL) *index = i;
            return &d->type->attrs[i];
        }
    }
    return NULL;
}

size_t ocd_bk_type_value_size(cudnnBackendDescriptorType_t kind)
{
    return kinds[kind]->value_size;
}

bool ocd_bk_is_set(const struct ocd_bk_desc *d, cudnnBackendAttributeName_t name)
{
    size_t i;
    return find_attr(d, name, &i) != NULL && (d->set >> i & 1u);
}

cudnnStatus_t ocd_bk_child(cudnnBackendDescriptor_t child, uint32_t kind_mask, const char *what,
                           const void **value)
{
    const struct ocd_bk_desc *c = desc_of(child);
    if (c == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is no longer a live backend descriptor", what);
    if (!(kind_mask & OCD_BK_KIND(c->type->kind)))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is a %s descriptor, of a kind it does not take", what,
                        c->type->name);
    if (!c->finalized) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not finalized", what);
    *value = ocd_bk_state(c);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_bk_fill(cudnnBackendDescriptor_t target, cudnnBackendDescriptorType_t kind,
                          const void *value)
{
    struct ocd_bk_desc *d = desc_of(target);
    if (d == NULL || d->type->kind != kind)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output descriptor is not a live %s descriptor",
                        kinds[kind]->name);
    reset(d);
    memcpy(ocd_bk_state(d), value, d->type->value_size);
    if (d->type->retain != NULL) d->type->retain(ocd_bk_state(d));
    d->finalized = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_bk_check_target(cudnnBackendDescriptor_t target, cudnnBackendDescriptorType_t kind, int64_t index)
{
    const struct ocd_bk_desc *d = desc_of(target);
    if (d == NULL || d->type->kind != kind)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "output descriptor %lld is not a live %s descriptor", (long long)index,
                        kinds[kind]->name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_bk_fill_array(cudnnBackendDescriptorType_t kind, const void *values, size_t stride,
                                int64_t n, int64_t req, int64_t *total, void *out)
{
    int64_t w = ocd_bk_written(n, req);
    cudnnBackendDescriptor_t *targets = out;
    for (int64_t i = 0; i < w; i++) OCD_TRY(ocd_bk_check_target(targets[i], kind, i)); /* before any is written */
    for (int64_t i = 0; i < w; i++) OCD_TRY(ocd_bk_fill(targets[i], kind, (const char *)values + i * stride));
    *total = n;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the API ---------------------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t descriptorType,
                                                       cudnnBackendDescriptor_t *descriptor)
{
    OCD_LOG_API("descriptorType=%d descriptor=%p", (int)descriptorType, (void *)descriptor);
    if (descriptor == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "descriptor is NULL");
    if ((int)descriptorType < 0 || (int)descriptorType >= OCD_BK_KINDS)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "descriptor type %d is not one of cuDNN 8.2",
                        (int)descriptorType);
    const struct ocd_bk_type *type = kinds[descriptorType];
    struct ocd_bk_desc *d;
    OCD_TRY(ocd_object_create(OCD_OBJ_BACKEND, sizeof *d + type->state_size, (void **)&d));
    d->type = type;
    reset(d);
    *descriptor = d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
    OCD_LOG_API("descriptor=%p", descriptor);
    struct ocd_bk_desc *d = desc_of(descriptor);
    if (d == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "descriptor is %s",
                        descriptor == NULL ? "NULL" : "not a live backend descriptor");
    if (d->finalized && d->type->release != NULL) d->type->release(ocd_bk_state(d));
    return ocd_object_destroy(OCD_OBJ_BACKEND, d);
}

cudnnStatus_t CUDNNWINAPI cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor)
{
    OCD_LOG_API("descriptor=%p", descriptor);
    struct ocd_bk_desc *d = desc_of(descriptor);
    if (d == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "descriptor is %s",
                        descriptor == NULL ? "NULL" : "not a live backend descriptor");
    reset(d);
    return CUDNN_STATUS_SUCCESS;
}

/* Checks one element a Set gives. */
static cudnnStatus_t check_element(const struct ocd_bk_attr *a, cudnnBackendAttributeType_t type,
                                   const void *elem, int64_t i)
{
    if (type == CUDNN_TYPE_HANDLE) {
        cudnnHandle_t h;
        memcpy(&h, elem, sizeof h);
        if (!ocd_object_alive(OCD_OBJ_HANDLE, h))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s: element %lld is not a live handle", a->label,
                            (long long)i);
    } else if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        cudnnBackendDescriptor_t p;
        memcpy(&p, elem, sizeof p);
        const struct ocd_bk_desc *c = desc_of(p);
        if (c == NULL)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s: element %lld is not a live backend descriptor",
                            a->label, (long long)i);
        if (!(a->kinds & OCD_BK_KIND(c->type->kind)))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s: element %lld is a %s descriptor, of a kind it does not take",
                            a->label, (long long)i, c->type->name);
    } else if (is_enum_type(type)) {
        int v;
        memcpy(&v, elem, sizeof v);
        if (!enum_valid(type, v))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s: element %lld has the illegal value %d", a->label,
                            (long long)i, v);
    }
    return CUDNN_STATUS_SUCCESS;
}

static bool type_matches(const struct ocd_bk_attr *a, cudnnBackendAttributeType_t t)
{
    if (a->flags & OCD_BA_REAL) return t == CUDNN_TYPE_FLOAT || t == CUDNN_TYPE_DOUBLE;
    return t == a->type;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                                   cudnnBackendAttributeName_t attributeName,
                                                   cudnnBackendAttributeType_t attributeType,
                                                   int64_t elementCount, const void *arrayOfElements)
{
    OCD_LOG_API("descriptor=%p attributeName=%d attributeType=%d elementCount=%lld arrayOfElements=%p",
                descriptor, (int)attributeName, (int)attributeType, (long long)elementCount, arrayOfElements);
    struct ocd_bk_desc *d = desc_of(descriptor);
    if (d == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "descriptor is %s",
                        descriptor == NULL ? "NULL" : "not a live backend descriptor");
    size_t index;
    const struct ocd_bk_attr *a = find_attr(d, attributeName, &index);
    if (a == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attribute %d is not one of a %s descriptor", (int)attributeName,
                        d->type->name);
    if (d->finalized)
        return OCD_FAIL(CUDNN_STATUS_NOT_INITIALIZED, "%s: the %s descriptor is already finalized", a->label,
                        d->type->name);
    if (a->flags & OCD_BA_RO) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is read-only", a->label);
    if (!type_matches(a, attributeType))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s takes attribute type %d%s, not %d", a->label, (int)a->type,
                        (a->flags & OCD_BA_REAL) ? " or FLOAT" : "", (int)attributeType);
    if (elementCount < a->min || elementCount > a->max)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s takes %lld to %lld elements, not %lld", a->label,
                        (long long)a->min, (long long)a->max, (long long)elementCount);
    if (elementCount > 0 && arrayOfElements == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s: arrayOfElements is NULL", a->label);
    size_t size = element_size(attributeType);
    for (int64_t i = 0; i < elementCount; i++)
        OCD_TRY(check_element(a, attributeType, (const char *)arrayOfElements + i * size, i));

    unsigned char *dst = (unsigned char *)ocd_bk_state(d) + a->offset;
    for (int64_t i = 0; i < elementCount; i++) {
        const unsigned char *src = (const unsigned char *)arrayOfElements + i * size;
        if (a->flags & OCD_BA_REAL) {
            double v;
            if (attributeType == CUDNN_TYPE_FLOAT) {
                float f;
                memcpy(&f, src, sizeof f);
                v = f;
            } else {
                memcpy(&v, src, sizeof v);
            }
            memcpy(dst + i * sizeof v, &v, sizeof v);
        } else if (attributeType == CUDNN_TYPE_BOOLEAN) {
            dst[i] = *src != 0; /* any non-zero byte is true; a bool holds 0 or 1 */
        } else {
            memcpy(dst + i * size, src, size);
        }
    }
    if (a->count_offset >= 0) memcpy((char *)ocd_bk_state(d) + a->count_offset, &elementCount, sizeof elementCount);
    d->set |= (uint64_t)1 << index;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                                   cudnnBackendAttributeName_t attributeName,
                                                   cudnnBackendAttributeType_t attributeType,
                                                   int64_t requestedElementCount, int64_t *elementCount,
                                                   void *arrayOfElements)
{
    OCD_LOG_API("descriptor=%p attributeName=%d attributeType=%d requestedElementCount=%lld elementCount=%p "
                "arrayOfElements=%p",
                descriptor, (int)attributeName, (int)attributeType, (long long)requestedElementCount,
                (void *)elementCount, arrayOfElements);
    const struct ocd_bk_desc *d = desc_of(descriptor);
    if (d == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "descriptor is %s",
                        descriptor == NULL ? "NULL" : "not a live backend descriptor");
    const struct ocd_bk_attr *a = find_attr(d, attributeName, NULL);
    if (a == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attribute %d is not one of a %s descriptor", (int)attributeName,
                        d->type->name);
    if (!d->finalized)
        return OCD_FAIL(CUDNN_STATUS_NOT_INITIALIZED, "%s: the %s descriptor is not finalized", a->label,
                        d->type->name);
    if (!type_matches(a, attributeType))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has attribute type %d, not %d", a->label, (int)a->type,
                        (int)attributeType);
    if (requestedElementCount < 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "requestedElementCount is %lld", (long long)requestedElementCount);
    /* A NULL array is a count query whatever the requested count: cudnn-frontend 1.x sizes its
       note vectors so, asking for the note type count with no array (cuDNN 9 answers it). */
    if (arrayOfElements == NULL) {
        if (elementCount == NULL)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s: arrayOfElements and elementCount are both NULL", a->label);
        requestedElementCount = 0;
    }

    int64_t total = 0;
    if (a->get != NULL) {
        OCD_TRY(a->get(d, a, requestedElementCount, &total, arrayOfElements));
    } else if (a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s cannot be read back", a->label);
    } else {
        const unsigned char *src = (const unsigned char *)ocd_bk_state(d) + a->offset;
        total = 1;
        if (a->count_offset >= 0) memcpy(&total, (const char *)ocd_bk_state(d) + a->count_offset, sizeof total);
        int64_t w = ocd_bk_written(total, requestedElementCount);
        size_t size = element_size(attributeType);
        for (int64_t i = 0; i < w; i++) {
            unsigned char *dst = (unsigned char *)arrayOfElements + i * size;
            if (a->flags & OCD_BA_REAL) {
                double v;
                memcpy(&v, src + i * sizeof v, sizeof v);
                if (attributeType == CUDNN_TYPE_FLOAT) {
                    float f = (float)v;
                    memcpy(dst, &f, sizeof f);
                } else {
                    memcpy(dst, &v, sizeof v);
                }
            } else {
                memcpy(dst, src + i * size, size);
            }
        }
    }
    if (elementCount != NULL) *elementCount = requestedElementCount == 0 ? total : ocd_bk_written(total, requestedElementCount);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
    OCD_LOG_API("descriptor=%p", descriptor);
    struct ocd_bk_desc *d = desc_of(descriptor);
    if (d == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "descriptor is %s",
                        descriptor == NULL ? "NULL" : "not a live backend descriptor");
    if (d->finalized) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the %s descriptor is already finalized", d->type->name);
    if (d->type->finalize == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "a %s descriptor is filled by the library, not finalized by the user",
                        d->type->name);
    for (size_t i = 0; i < d->type->n_attrs; i++) {
        if ((d->type->attrs[i].flags & OCD_BA_REQUIRED) && !(d->set >> i & 1u))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was not set", d->type->attrs[i].label);
    }
    OCD_TRY(d->type->finalize(d));
    d->finalized = true;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- plans and variant packs for cudnnBackendExecute ----------------------------------------- */

static cudnnStatus_t finalized_of(cudnnBackendDescriptor_t p, cudnnBackendDescriptorType_t kind,
                                  const char *name, const struct ocd_bk_desc **out)
{
    const struct ocd_bk_desc *d = desc_of(p);
    if (d == NULL || d->type->kind != kind)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live %s descriptor", name, kinds[kind]->name);
    if (!d->finalized) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not finalized", name);
    *out = d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_backend_plan_of(cudnnBackendDescriptor_t p, const char *name, const struct ocd_graph_exec **out)
{
    const struct ocd_bk_desc *d = NULL;
    OCD_TRY(finalized_of(p, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, name, &d));
    *out = ocd_bk_state(d); /* the plan kind's value begins with its struct ocd_graph_exec */
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_backend_variant_of(cudnnBackendDescriptor_t p, const char *name, struct ocd_graph_variant *out)
{
    const struct ocd_bk_desc *d = NULL;
    OCD_TRY(finalized_of(p, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, name, &d));
    *out = *(const struct ocd_graph_variant *)ocd_bk_state(d); /* the pack's value begins with it */
    return CUDNN_STATUS_SUCCESS;
}
