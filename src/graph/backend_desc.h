/* backend_desc.h: the descriptor objects of the backend API and the tables that drive them.

   Main decision: one generic machine serves every descriptor kind. A kind is a struct
   ocd_bk_type: the size of its state, a table of its attributes, and three functions (defaults,
   finalize, release). An attribute entry says its name, its element type, how many elements a
   Set may give, and where the elements live in the state (and where their count lives), so
   cudnnBackendSetAttribute and cudnnBackendGetAttribute are one walk over the table for every
   kind: type check, count check, element check (enum ranges, live handles, descriptors of the
   accepted kinds), then a copy. Only what is not a stored value has code of its own: finalize
   (validation, and turning the descriptors a Set named into copies of their finalized values)
   and the getters of descriptor-valued and derived attributes.

   A kind's state begins with its finalized value (value_size bytes: a tensor's struct
   ocd_graph_tensor, an operation's struct ocd_graph_op, a graph's reference); what follows it is
   only the pending input of finalize (descriptors named by Sets). A descriptor-valued Get fills
   the caller's descriptor with a copy of such a value (ocd_bk_fill), so the copy is finalized and
   independent of the descriptor it came from. */
#ifndef OCD_GRAPH_BACKEND_DESC_H
#define OCD_GRAPH_BACKEND_DESC_H

#include "graph/graph.h"

#include <stddef.h>

#define OCD_BK_KINDS (CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR + 1)
#define OCD_BK_KIND(k) (1u << (k))
#define OCD_BK_ANY_OPERATION                                                                    \
    (OCD_BK_KIND(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) |                      \
     OCD_BK_KIND(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR) |              \
     OCD_BK_KIND(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) |                \
     OCD_BK_KIND(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) |                                \
     OCD_BK_KIND(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR) |                                \
     OCD_BK_KIND(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) |                                   \
     OCD_BK_KIND(CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR) |                   \
     OCD_BK_KIND(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR) |                                \
     OCD_BK_KIND(CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR))

/* Attribute flags. */
#define OCD_BA_RO 1u       /* read-only: the library computes it; a Set is BAD_PARAM */
#define OCD_BA_REAL 2u     /* CUDNN_TYPE_FLOAT or CUDNN_TYPE_DOUBLE, kept as a double */
#define OCD_BA_REQUIRED 4u /* Finalize is BAD_PARAM while it is not set */

struct ocd_bk_desc;
struct ocd_bk_attr;

/* A Get of an attribute that is not a stored value: writes at most req elements to out (the
   caller checked out is not NULL when req > 0) and their total to *total. */
typedef cudnnStatus_t (*ocd_bk_getter)(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a,
                                       int64_t req, int64_t *total, void *out);

struct ocd_bk_attr {
    cudnnBackendAttributeName_t name;
    const char *label;
    cudnnBackendAttributeType_t type;
    unsigned flags;
    int64_t min, max;       /* element counts a Set may give */
    size_t offset;          /* the elements, in the state */
    ptrdiff_t count_offset; /* an int64_t element count in the state; -1: one element */
    uint32_t kinds;         /* BACKEND_DESCRIPTOR: kinds a Set accepts (OCD_BK_KIND bits) */
    ocd_bk_getter get;      /* NULL: a Get reads the stored elements */
    int arg;                /* the getter's parameter (an operation's tensor slot) */
};

struct ocd_bk_type {
    cudnnBackendDescriptorType_t kind;
    const char *name;
    size_t state_size, value_size;
    const struct ocd_bk_attr *attrs;
    size_t n_attrs;
    void (*init)(void *state); /* defaults; NULL: all zero */
    /* validates the pending state and fills the value; NULL: only the library fills it (a user
       Finalize is BAD_PARAM) */
    cudnnStatus_t (*finalize)(struct ocd_bk_desc *d);
    /* drops what a value owns; retain takes a new share of it after a copy (ocd_bk_fill) */
    void (*release)(void *value);
    void (*retain)(void *value);
};

struct ocd_bk_desc {
    struct ocd_object obj; /* OCD_OBJ_BACKEND */
    const struct ocd_bk_type *type;
    bool finalized;
    uint64_t set; /* bit i: attrs[i] was set */
    max_align_t state[];
};

/* The kinds' tables (backend_types.c, backend_ops.c, backend_graph.c, backend_engine.c). */
extern const struct ocd_bk_type ocd_bk_tensor_type, ocd_bk_convolution_type, ocd_bk_pointwise_type,
    ocd_bk_matmul_type, ocd_bk_reduction_type, ocd_bk_knob_choice_type, ocd_bk_knob_info_type,
    ocd_bk_layout_info_type, ocd_bk_intermediate_info_type, ocd_bk_variant_pack_type;
extern const struct ocd_bk_type ocd_bk_conv_fwd_type, ocd_bk_conv_bwd_data_type,
    ocd_bk_conv_bwd_filter_type, ocd_bk_op_pointwise_type, ocd_bk_op_gen_stats_type,
    ocd_bk_op_matmul_type, ocd_bk_op_reduction_type, ocd_bk_op_bn_finalize_type,
    ocd_bk_op_bn_bwd_weights_type;
extern const struct ocd_bk_type ocd_bk_graph_type, ocd_bk_engine_type, ocd_bk_enginecfg_type,
    ocd_bk_engineheur_type, ocd_bk_plan_type;

/* ---- table entries --------------------------------------------------------------------------- */

#define OCD_BK_ENTRY(NAME, TYPE, FLAGS, MIN, MAX, OFF, COUNT_OFF, KINDS, GET, ARG)               \
    {CUDNN_ATTR_##NAME, #NAME, CUDNN_TYPE_##TYPE, (FLAGS), (MIN), (MAX), (OFF), (COUNT_OFF),    \
     (KINDS), (GET), (ARG)}
/* one stored element */
#define OCD_BK_SCALAR(NAME, TYPE, FLAGS, S, FIELD)                                              \
    OCD_BK_ENTRY(NAME, TYPE, FLAGS, 1, 1, offsetof(S, FIELD), -1, 0, NULL, 0)
/* an array of MIN..MAX stored elements with its count */
#define OCD_BK_ARRAY(NAME, TYPE, FLAGS, MIN, MAX, S, FIELD, COUNT)                              \
    OCD_BK_ENTRY(NAME, TYPE, FLAGS, MIN, MAX, offsetof(S, FIELD), offsetof(S, COUNT), 0, NULL, 0)
/* one descriptor of the KINDS, read back by GET (with ARG) */
#define OCD_BK_DESC(NAME, FLAGS, KINDS, S, FIELD, GET, ARG)                                     \
    OCD_BK_ENTRY(NAME, BACKEND_DESCRIPTOR, FLAGS, 1, 1, offsetof(S, FIELD), -1, KINDS, GET, ARG)
/* an array of descriptors */
#define OCD_BK_DESCS(NAME, FLAGS, MIN, MAX, KINDS, S, FIELD, COUNT, GET)                        \
    OCD_BK_ENTRY(NAME, BACKEND_DESCRIPTOR, FLAGS, MIN, MAX, offsetof(S, FIELD), offsetof(S, COUNT), \
                 KINDS, GET, 0)
/* read-only, computed by GET */
#define OCD_BK_COMPUTED(NAME, TYPE, GET)                                                        \
    OCD_BK_ENTRY(NAME, TYPE, OCD_BA_RO, 0, 0, 0, -1, 0, GET, 0)

#define OCD_BK_TYPE(KIND, NAME, STATE, VALUE, ATTRS, INIT, FINALIZE, RELEASE, RETAIN)          \
    {CUDNN_BACKEND_##KIND, NAME, sizeof(STATE), sizeof(VALUE), ATTRS, OCD_ARRAY_LEN(ATTRS), INIT, \
     FINALIZE, RELEASE, RETAIN}

/* ---- helpers for finalize functions and getters ---------------------------------------------- */

static inline void *ocd_bk_state(const struct ocd_bk_desc *d)
{
    return (void *)d->state;
}

/* True when the attribute has been set on d. */
bool ocd_bk_is_set(const struct ocd_bk_desc *d, cudnnBackendAttributeName_t name);

/* The size of a kind's value (what ocd_bk_fill copies). */
size_t ocd_bk_type_value_size(cudnnBackendDescriptorType_t kind);

/* The finalized value of a descriptor a Set named (`what` names it in the log): BAD_PARAM when it
   was destroyed since, is not of the kinds (OCD_BK_KIND bits), or is not finalized. */
cudnnStatus_t ocd_bk_child(cudnnBackendDescriptor_t child, uint32_t kinds, const char *what,
                           const void **value);

/* Makes the caller's descriptor `target` (of kind) a finalized copy of value: BAD_PARAM when it
   is not a live descriptor of that kind. What it held before is released. */
cudnnStatus_t ocd_bk_fill(cudnnBackendDescriptor_t target, cudnnBackendDescriptorType_t kind,
                          const void *value);

/* BAD_PARAM unless target is a live descriptor of kind (`index`: its place in the caller's array). */
cudnnStatus_t ocd_bk_check_target(cudnnBackendDescriptor_t target, cudnnBackendDescriptorType_t kind, int64_t index);

/* The Get of an array of n descriptor values of kind, `stride` bytes apart. */
cudnnStatus_t ocd_bk_fill_array(cudnnBackendDescriptorType_t kind, const void *values, size_t stride,
                                int64_t n, int64_t req, int64_t *total, void *out);

/* Element count rule of every Get: at most req elements are written; *total gets n. */
static inline int64_t ocd_bk_written(int64_t n, int64_t req)
{
    return n < req ? n : req;
}

/* Tensor checks the operations share (backend_types.c). */
int64_t ocd_bk_tensor_channels(const struct ocd_graph_tensor *t); /* dims[1] in scalars */
bool ocd_bk_same_dims(const struct ocd_graph_tensor *a, const struct ocd_graph_tensor *b);
bool ocd_bk_same_tensor(const struct ocd_graph_tensor *a, const struct ocd_graph_tensor *b);

#endif /* OCD_GRAPH_BACKEND_DESC_H */
