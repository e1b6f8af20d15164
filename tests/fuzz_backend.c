/* fuzz_backend.c: the backend graph API called at random, as fuzz.c calls the ops: descriptors of
   random kinds (now and then one that is none) created, their attributes set and read with random
   names, types, element counts and values (the attribute's own type mostly, any other now and
   then; descriptors from the ones at hand, mostly of the kind the attribute takes), finalized,
   executed and destroyed in random order. Half the iterations first build a whole graph the way
   cudnn-frontend does (tensors of one small shape, a pointwise, convolution, matmul or reduction
   operation, the graph, an engine, its configuration, a plan and a variant pack, every value of
   the right type but now and then odd, finalizing each step mostly), so that finalize and
   execute are reached and then fuzzed further. Tensors stay small (dims and strides of at most
   8, or the iteration executes nothing), and every data pointer is one of a few guarded buffers
   larger than any such tensor, so that fz_check can hold each call to the invariants of "bad
   input never crashes" (fuzz_util.h): a get writes nothing past the elements it was given room
   for and nothing when it fails, an execute nothing outside the buffers and nothing when it
   fails. A status of NOT_INITIALIZED (a descriptor used before it was finalized) is defined too. */
#include "fuzz_util.h"

#include <cudnn_backend.h>
#include <stdlib.h>
#include <string.h>

typedef cudnnBackendDescriptor_t fb_desc;

enum { FB_SLOTS = 12, FB_POOL = 6, FB_POOL_BYTES = 1 << 14, FB_MAX_ELEMS = 8, FB_SMALL = 8 };

/* Every attribute of cudnn_backend.h: its name, its type and the kind of descriptor it belongs to. */
struct fb_attr {
    cudnnBackendAttributeName_t name;
    cudnnBackendAttributeType_t type;
    cudnnBackendDescriptorType_t kind;
};
#define A(n, t, k) {CUDNN_ATTR_##n, CUDNN_TYPE_##t, CUDNN_BACKEND_##k##_DESCRIPTOR}
static const struct fb_attr fb_attrs[] = {
    A(POINTWISE_MODE, POINTWISE_MODE, POINTWISE), A(POINTWISE_MATH_PREC, DATA_TYPE, POINTWISE),
    A(POINTWISE_NAN_PROPAGATION, NAN_PROPOGATION, POINTWISE), A(POINTWISE_RELU_LOWER_CLIP, DOUBLE, POINTWISE),
    A(POINTWISE_RELU_UPPER_CLIP, DOUBLE, POINTWISE), A(POINTWISE_RELU_LOWER_CLIP_SLOPE, DOUBLE, POINTWISE),
    A(POINTWISE_ELU_ALPHA, DOUBLE, POINTWISE), A(POINTWISE_SOFTPLUS_BETA, DOUBLE, POINTWISE),
    A(POINTWISE_SWISH_BETA, DOUBLE, POINTWISE), A(CONVOLUTION_COMP_TYPE, DATA_TYPE, CONVOLUTION),
    A(CONVOLUTION_CONV_MODE, CONVOLUTION_MODE, CONVOLUTION), A(CONVOLUTION_DILATIONS, INT64, CONVOLUTION),
    A(CONVOLUTION_FILTER_STRIDES, INT64, CONVOLUTION), A(CONVOLUTION_POST_PADDINGS, INT64, CONVOLUTION),
    A(CONVOLUTION_PRE_PADDINGS, INT64, CONVOLUTION), A(CONVOLUTION_SPATIAL_DIMS, INT64, CONVOLUTION),
    A(ENGINEHEUR_MODE, HEUR_MODE, ENGINEHEUR), A(ENGINEHEUR_OPERATION_GRAPH, BACKEND_DESCRIPTOR, ENGINEHEUR),
    A(ENGINEHEUR_RESULTS, BACKEND_DESCRIPTOR, ENGINEHEUR), A(ENGINECFG_ENGINE, BACKEND_DESCRIPTOR, ENGINECFG),
    A(ENGINECFG_INTERMEDIATE_INFO, BACKEND_DESCRIPTOR, ENGINECFG),
    A(ENGINECFG_KNOB_CHOICES, BACKEND_DESCRIPTOR, ENGINECFG), A(EXECUTION_PLAN_HANDLE, HANDLE, EXECUTION_PLAN),
    A(EXECUTION_PLAN_ENGINE_CONFIG, BACKEND_DESCRIPTOR, EXECUTION_PLAN),
    A(EXECUTION_PLAN_WORKSPACE_SIZE, INT64, EXECUTION_PLAN),
    A(EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS, INT64, EXECUTION_PLAN),
    A(EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS, INT64, EXECUTION_PLAN),
    A(INTERMEDIATE_INFO_UNIQUE_ID, INT64, INTERMEDIATE_INFO), A(INTERMEDIATE_INFO_SIZE, INT64, INTERMEDIATE_INFO),
    A(INTERMEDIATE_INFO_DEPENDENT_DATA_UIDS, INT64, INTERMEDIATE_INFO),
    A(INTERMEDIATE_INFO_DEPENDENT_ATTRIBUTES, ATTRIB_NAME, INTERMEDIATE_INFO),
    A(KNOB_CHOICE_KNOB_TYPE, KNOB_TYPE, KNOB_CHOICE), A(KNOB_CHOICE_KNOB_VALUE, INT64, KNOB_CHOICE),
    A(OPERATION_CONVOLUTION_FORWARD_ALPHA, DOUBLE, OPERATION_CONVOLUTION_FORWARD),
    A(OPERATION_CONVOLUTION_FORWARD_BETA, DOUBLE, OPERATION_CONVOLUTION_FORWARD),
    A(OPERATION_CONVOLUTION_FORWARD_CONV_DESC, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_FORWARD),
    A(OPERATION_CONVOLUTION_FORWARD_W, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_FORWARD),
    A(OPERATION_CONVOLUTION_FORWARD_X, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_FORWARD),
    A(OPERATION_CONVOLUTION_FORWARD_Y, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_FORWARD),
    A(OPERATION_CONVOLUTION_BWD_DATA_ALPHA, DOUBLE, OPERATION_CONVOLUTION_BACKWARD_DATA),
    A(OPERATION_CONVOLUTION_BWD_DATA_BETA, DOUBLE, OPERATION_CONVOLUTION_BACKWARD_DATA),
    A(OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_BACKWARD_DATA),
    A(OPERATION_CONVOLUTION_BWD_DATA_W, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_BACKWARD_DATA),
    A(OPERATION_CONVOLUTION_BWD_DATA_DX, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_BACKWARD_DATA),
    A(OPERATION_CONVOLUTION_BWD_DATA_DY, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_BACKWARD_DATA),
    A(OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, DOUBLE, OPERATION_CONVOLUTION_BACKWARD_FILTER),
    A(OPERATION_CONVOLUTION_BWD_FILTER_BETA, DOUBLE, OPERATION_CONVOLUTION_BACKWARD_FILTER),
    A(OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_BACKWARD_FILTER),
    A(OPERATION_CONVOLUTION_BWD_FILTER_DW, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_BACKWARD_FILTER),
    A(OPERATION_CONVOLUTION_BWD_FILTER_X, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_BACKWARD_FILTER),
    A(OPERATION_CONVOLUTION_BWD_FILTER_DY, BACKEND_DESCRIPTOR, OPERATION_CONVOLUTION_BACKWARD_FILTER),
    A(OPERATION_POINTWISE_PW_DESCRIPTOR, BACKEND_DESCRIPTOR, OPERATION_POINTWISE),
    A(OPERATION_POINTWISE_XDESC, BACKEND_DESCRIPTOR, OPERATION_POINTWISE),
    A(OPERATION_POINTWISE_BDESC, BACKEND_DESCRIPTOR, OPERATION_POINTWISE),
    A(OPERATION_POINTWISE_YDESC, BACKEND_DESCRIPTOR, OPERATION_POINTWISE),
    A(OPERATION_POINTWISE_ALPHA1, DOUBLE, OPERATION_POINTWISE),
    A(OPERATION_POINTWISE_ALPHA2, DOUBLE, OPERATION_POINTWISE),
    A(OPERATION_POINTWISE_DXDESC, BACKEND_DESCRIPTOR, OPERATION_POINTWISE),
    A(OPERATION_POINTWISE_DYDESC, BACKEND_DESCRIPTOR, OPERATION_POINTWISE),
    A(OPERATION_GENSTATS_MODE, GENSTATS_MODE, OPERATION_GEN_STATS),
    A(OPERATION_GENSTATS_MATH_PREC, DATA_TYPE, OPERATION_GEN_STATS),
    A(OPERATION_GENSTATS_XDESC, BACKEND_DESCRIPTOR, OPERATION_GEN_STATS),
    A(OPERATION_GENSTATS_SUMDESC, BACKEND_DESCRIPTOR, OPERATION_GEN_STATS),
    A(OPERATION_GENSTATS_SQSUMDESC, BACKEND_DESCRIPTOR, OPERATION_GEN_STATS),
    A(OPERATION_BN_FINALIZE_STATS_MODE, BN_FINALIZE_STATS_MODE, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_MATH_PREC, DATA_TYPE, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_Y_SUM_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_SCALE_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_BIAS_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_SAVED_MEAN_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_EQ_SCALE_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_EQ_BIAS_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_EPSILON_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_FINALIZE_STATISTICS),
    A(OPERATIONGRAPH_HANDLE, HANDLE, OPERATIONGRAPH), A(OPERATIONGRAPH_OPS, BACKEND_DESCRIPTOR, OPERATIONGRAPH),
    A(OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, INT64, OPERATIONGRAPH), A(TENSOR_BYTE_ALIGNMENT, INT64, TENSOR),
    A(TENSOR_DATA_TYPE, DATA_TYPE, TENSOR), A(TENSOR_DIMENSIONS, INT64, TENSOR), A(TENSOR_STRIDES, INT64, TENSOR),
    A(TENSOR_VECTOR_COUNT, INT64, TENSOR), A(TENSOR_VECTORIZED_DIMENSION, INT64, TENSOR),
    A(TENSOR_UNIQUE_ID, INT64, TENSOR), A(TENSOR_IS_VIRTUAL, BOOLEAN, TENSOR), A(TENSOR_IS_BY_VALUE, BOOLEAN, TENSOR),
    A(VARIANT_PACK_UNIQUE_IDS, INT64, VARIANT_PACK), A(VARIANT_PACK_DATA_POINTERS, VOID_PTR, VARIANT_PACK),
    A(VARIANT_PACK_INTERMEDIATES, VOID_PTR, VARIANT_PACK), A(VARIANT_PACK_WORKSPACE, VOID_PTR, VARIANT_PACK),
    A(LAYOUT_INFO_TENSOR_UID, INT64, LAYOUT_INFO), A(LAYOUT_INFO_TYPES, LAYOUT_TYPE, LAYOUT_INFO),
    A(KNOB_INFO_TYPE, KNOB_TYPE, KNOB_INFO), A(KNOB_INFO_MAXIMUM_VALUE, INT64, KNOB_INFO),
    A(KNOB_INFO_MINIMUM_VALUE, INT64, KNOB_INFO), A(KNOB_INFO_STRIDE, INT64, KNOB_INFO),
    A(ENGINE_OPERATION_GRAPH, BACKEND_DESCRIPTOR, ENGINE), A(ENGINE_GLOBAL_INDEX, INT64, ENGINE),
    A(ENGINE_KNOB_INFO, BACKEND_DESCRIPTOR, ENGINE), A(ENGINE_NUMERICAL_NOTE, NUMERICAL_NOTE, ENGINE),
    A(ENGINE_LAYOUT_INFO, BACKEND_DESCRIPTOR, ENGINE), A(ENGINE_BEHAVIOR_NOTE, BEHAVIOR_NOTE, ENGINE),
    A(MATMUL_COMP_TYPE, DATA_TYPE, MATMUL), A(OPERATION_MATMUL_ADESC, BACKEND_DESCRIPTOR, OPERATION_MATMUL),
    A(OPERATION_MATMUL_BDESC, BACKEND_DESCRIPTOR, OPERATION_MATMUL),
    A(OPERATION_MATMUL_CDESC, BACKEND_DESCRIPTOR, OPERATION_MATMUL),
    A(OPERATION_MATMUL_DESC, BACKEND_DESCRIPTOR, OPERATION_MATMUL),
    A(OPERATION_MATMUL_IRREGULARLY_STRIDED_BATCH_COUNT, INT64, OPERATION_MATMUL),
    A(REDUCTION_OPERATOR, REDUCTION_OPERATOR_TYPE, REDUCTION), A(REDUCTION_COMP_TYPE, DATA_TYPE, REDUCTION),
    A(OPERATION_REDUCTION_XDESC, BACKEND_DESCRIPTOR, OPERATION_REDUCTION),
    A(OPERATION_REDUCTION_YDESC, BACKEND_DESCRIPTOR, OPERATION_REDUCTION),
    A(OPERATION_REDUCTION_DESC, BACKEND_DESCRIPTOR, OPERATION_REDUCTION),
    A(OPERATION_BN_BWD_WEIGHTS_MATH_PREC, DATA_TYPE, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_MEAN_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_X_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_DY_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
    A(OPERATION_BN_BWD_WEIGHTS_EQ_BIAS, BACKEND_DESCRIPTOR, OPERATION_BN_BWD_WEIGHTS),
};
#undef A

/* The descriptors of an iteration, the buffers every data pointer points into (uid u: pool[u - 1];
   the workspace: pool[0] or any other) and whether a value too large for them was set. */
struct fb_state {
    fb_desc d[FB_SLOTS];
    int kind[FB_SLOTS]; /* -1: the slot is empty */
    struct fz_tensor pool[FB_POOL];
    int64_t shape[5], rank; /* the tensors' shape, which the built graphs mostly share */
    int pack;               /* the uids and pointers a variant pack takes */
    unsigned turn;          /* the tensor fb_pick gives next */
    unsigned uids;          /* the uids given to tensors */
    bool odd; /* this iteration may set large values (one in four) */
    bool big;
    bool exact; /* the attribute being set takes the values it should */
    cudnnHandle_t h;
};

static size_t fb_elem_size(cudnnBackendAttributeType_t t)
{
    switch (t) {
    case CUDNN_TYPE_HANDLE: return sizeof(cudnnHandle_t);
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_INT64: return sizeof(int64_t);
    case CUDNN_TYPE_FLOAT: return sizeof(float);
    case CUDNN_TYPE_DOUBLE: return sizeof(double);
    case CUDNN_TYPE_VOID_PTR: return sizeof(void *);
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(fb_desc);
    default: return sizeof(int); /* the enums */
    }
}

/* The kind of descriptor an attribute of type BACKEND_DESCRIPTOR takes (-1: any; -2: any operation). */
static int fb_wants(cudnnBackendAttributeName_t n)
{
    switch (n) {
    case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
    case CUDNN_ATTR_ENGINE_OPERATION_GRAPH: return CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR;
    case CUDNN_ATTR_ENGINECFG_ENGINE: return CUDNN_BACKEND_ENGINE_DESCRIPTOR;
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES: return CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR;
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG: return CUDNN_BACKEND_ENGINECFG_DESCRIPTOR;
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC: return CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR;
    case CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR: return CUDNN_BACKEND_POINTWISE_DESCRIPTOR;
    case CUDNN_ATTR_OPERATION_MATMUL_DESC: return CUDNN_BACKEND_MATMUL_DESCRIPTOR;
    case CUDNN_ATTR_OPERATION_REDUCTION_DESC: return CUDNN_BACKEND_REDUCTION_DESCRIPTOR;
    case CUDNN_ATTR_OPERATIONGRAPH_OPS: return -2;
    case CUDNN_ATTR_ENGINEHEUR_RESULTS:
    case CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO:
    case CUDNN_ATTR_ENGINE_KNOB_INFO:
    case CUDNN_ATTR_ENGINE_LAYOUT_INFO: return -1;
    default: return CUDNN_BACKEND_TENSOR_DESCRIPTOR;
    }
}

static bool fb_is_operation(int kind)
{
    return (kind >= CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR &&
            kind <= CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR) ||
           kind == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR ||
           kind == CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR ||
           kind == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR || kind == CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR;
}

/* A descriptor at hand for an attribute that takes `want` (fb_wants): three times in four one of
   that kind (tensors in turn, so that an operation's tensors differ; of the other kinds the
   latest, now and then another), else (unless the set is exact) any slot, empty ones (NULL) included. */
static fb_desc fb_pick(struct fb_state *s, int want)
{
    if (s->exact || trand_int(0, 3) > 0) {
        int found[FB_SLOTS], n = 0;
        for (int i = 0; i < FB_SLOTS; i++)
            if (s->kind[i] >= 0 && (want == -1 || s->kind[i] == want || (want == -2 && fb_is_operation(s->kind[i]))))
                found[n++] = i;
        if (n > 0)
            return s->d[found[want == CUDNN_BACKEND_TENSOR_DESCRIPTOR ? (int)(s->turn++ % (unsigned)n)
                              : trand_int(0, 3)                     ? n - 1
                                                                    : trand_int(0, n - 1)]];
    }
    return s->d[trand_int(0, FB_SLOTS - 1)];
}

/* A small value: mostly 1 to 4, else -1 to FB_SMALL; in an odd iteration now and then (1 in 16)
   a large one, after which the iteration executes nothing. */
static int64_t fb_small(struct fb_state *s)
{
    if (s->odd && trand_int(0, 15) == 0) {
        s->big = true;
        static const int64_t large[] = {FB_SMALL + 1, 1 << 20, INT32_MAX, (int64_t)1 << 40, INT64_MAX, INT64_MIN};
        return large[trand_int(0, (int)TLEN(large) - 1)];
    }
    return trand_int(0, 1) ? trand_int(1, 4) : trand_int(-1, FB_SMALL);
}

/* The value of an INT64 attribute that a graph builder would give: the iteration's shape and its
   packed strides, a fresh uid, the usual alignment, no vectorization, paddings that keep a filter
   of the shape's size from shrinking the output (pre and post differing where it is even), 1
   elsewhere. */
static int64_t fb_int64_exact(struct fb_state *s, cudnnBackendAttributeName_t name, int64_t i, int64_t n)
{
    int64_t x = 1;
    switch (name) {
    case CUDNN_ATTR_TENSOR_DIMENSIONS: return i < s->rank ? s->shape[i] : 1;
    case CUDNN_ATTR_TENSOR_STRIDES: /* packed: the product of the dims after i */
        for (int64_t j = n - 1; j > i; j--) x *= j < s->rank ? s->shape[j] : 1;
        return x;
    case CUDNN_ATTR_TENSOR_UNIQUE_ID: return (int64_t)(s->uids++ % FB_POOL) + 1;
    case CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS: return i + 1;
    case CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT: return 16;
    case CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION: return -1;
    case CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS: return s->rank - 2;
    case CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS: /* "same" for a filter of the shape, the odd one after */
        return i + 2 < s->rank ? (s->shape[i + 2] - 1) / 2 : 0;
    case CUDNN_ATTR_CONVOLUTION_POST_PADDINGS: return i + 2 < s->rank ? s->shape[i + 2] / 2 : 0;
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX: return 0;
    default: return x;
    }
}

/* n elements of type t for attribute a into v (FB_MAX_ELEMS of 8 bytes): in an exact set the
   values a graph builder gives; otherwise those three times in four, odd ones else. */
static void fb_values(struct fb_state *s, const struct fb_attr *a, cudnnBackendAttributeType_t t, int64_t n, void *v)
{
    static const cudnnPointwiseMode_t pw[] = {
        CUDNN_POINTWISE_ADD, CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_MIN, CUDNN_POINTWISE_MAX, CUDNN_POINTWISE_SQRT,
        CUDNN_POINTWISE_RELU_FWD, CUDNN_POINTWISE_TANH_FWD, CUDNN_POINTWISE_SIGMOID_FWD, CUDNN_POINTWISE_ELU_FWD,
        CUDNN_POINTWISE_GELU_FWD, CUDNN_POINTWISE_SOFTPLUS_FWD, CUDNN_POINTWISE_SWISH_FWD, CUDNN_POINTWISE_RELU_BWD,
        CUDNN_POINTWISE_TANH_BWD, CUDNN_POINTWISE_SIGMOID_BWD, CUDNN_POINTWISE_ELU_BWD, CUDNN_POINTWISE_GELU_BWD,
        CUDNN_POINTWISE_SOFTPLUS_BWD, CUDNN_POINTWISE_SWISH_BWD, (cudnnPointwiseMode_t)7};
    static const double reals[] = {1, 0.5, 0, -2, 1e30, -0.0};
    const cudnnBackendAttributeName_t name = a->name;
    const bool exact = s->exact || trand_int(0, 3) > 0;
    for (int64_t i = 0; i < n && i < FB_MAX_ELEMS; i++) {
        switch (t) {
        case CUDNN_TYPE_HANDLE: ((cudnnHandle_t *)v)[i] = exact || trand_int(0, 1) ? s->h : NULL; break;
        case CUDNN_TYPE_BOOLEAN: ((bool *)v)[i] = !exact && trand_int(0, 1); break;
        case CUDNN_TYPE_FLOAT: ((float *)v)[i] = (float)reals[trand_int(0, exact ? 1 : (int)TLEN(reals) - 1)]; break;
        case CUDNN_TYPE_DOUBLE:
            ((double *)v)[i] = name == CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP && exact ? 0
                               : name == CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP && exact
                                   ? 1e30
                                   : reals[trand_int(0, exact ? 1 : (int)TLEN(reals) - 1)];
            break;
        case CUDNN_TYPE_VOID_PTR: /* mostly the pool's buffer of the uid the pack's element i names */
            ((void **)v)[i] = !exact && trand_int(0, 3) == 0
                                  ? (trand_int(0, 3) ? fz_at(&s->pool[trand_int(0, FB_POOL - 1)]) : NULL)
                                  : fz_at(&s->pool[i % FB_POOL]);
            break;
        case CUDNN_TYPE_BACKEND_DESCRIPTOR: ((fb_desc *)v)[i] = fb_pick(s, fb_wants(name)); break;
        case CUDNN_TYPE_DATA_TYPE: ((int *)v)[i] = exact ? CUDNN_DATA_FLOAT : trand_int(0, 1) ? (int)fz_type() : fz_mode(15); break;
        case CUDNN_TYPE_POINTWISE_MODE: ((int *)v)[i] = pw[trand_int(0, (int)TLEN(pw) - (exact ? 2 : 1))]; break;
        case CUDNN_TYPE_ATTRIB_NAME: ((int *)v)[i] = fb_attrs[trand_int(0, (int)TLEN(fb_attrs) - 1)].name; break;
        case CUDNN_TYPE_INT64: {
            int64_t x = exact ? fb_int64_exact(s, name, i, n) : fb_small(s);
            if (name == CUDNN_ATTR_TENSOR_VECTOR_COUNT && x > 4) s->big = true; /* spans past the pool's buffers */
            ((int64_t *)v)[i] = x;
            break;
        }
        default:
            ((int *)v)[i] = exact ? 0 : fz_mode(t == CUDNN_TYPE_KNOB_TYPE ? 20 : t == CUDNN_TYPE_REDUCTION_OPERATOR_TYPE ? 9 : 3);
        }
    }
}

/* An attribute: of the slot's kind three times in four, any other else. */
static const struct fb_attr *fb_attr_for(int kind)
{
    const struct fb_attr *a = &fb_attrs[trand_int(0, (int)TLEN(fb_attrs) - 1)];
    for (int tries = 0; tries < 32 && (int)a->kind != kind && trand_int(0, 3) > 0; tries++)
        a = &fb_attrs[trand_int(0, (int)TLEN(fb_attrs) - 1)];
    return a;
}

/* Sets attribute a of slot i: the attribute's type, its usual element count (the rank for a
   tensor's dims and strides, a few descriptors for a graph's operations, as many pointers as
   uids for a variant pack); unless `exact`, now and then another type or count. */
static void fb_set(struct fb_state *s, int i, const struct fb_attr *a, bool exact, int it)
{
    cudnnBackendAttributeType_t t = exact || trand_int(0, 15) ? a->type : (cudnnBackendAttributeType_t)fz_mode(20);
    int64_t n = 1;
    if (a->name == CUDNN_ATTR_TENSOR_DIMENSIONS || a->name == CUDNN_ATTR_TENSOR_STRIDES)
        n = exact || trand_int(0, 3) ? s->rank : trand_int(0, 7);
    else if (a->name == CUDNN_ATTR_OPERATIONGRAPH_OPS || a->name == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS ||
             a->name == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS || a->name == CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS ||
             a->name == CUDNN_ATTR_CONVOLUTION_POST_PADDINGS || a->name == CUDNN_ATTR_CONVOLUTION_DILATIONS ||
             a->name == CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES)
        n = a->name == CUDNN_ATTR_OPERATIONGRAPH_OPS ? (exact ? 1 : trand_int(1, 2))
            : a->name == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS || a->name == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS
                ? s->pack
                : s->rank - 2;
    if (!exact && trand_int(0, 15) == 0) n = trand_int(-1, FB_MAX_ELEMS);
    int64_t v[FB_MAX_ELEMS]; /* 8-byte elements: room for FB_MAX_ELEMS of any type */
    memset(v, 0, sizeof v);
    s->exact = exact;
    fb_values(s, a, t, n, v);
    struct fz_tensor in = {.host = true}; /* the API reads attribute values on the host */
    if (!fz_buffer_of(&in, v, sizeof v)) return;
    fz_check_with("backend set attribute", it,
                  cudnnBackendSetAttribute(s->d[i], a->name, t, n, exact || trand_int(0, 31) ? fz_at(&in) : NULL),
                  CUDNN_STATUS_NOT_INITIALIZED, NULL, 0, (struct fz_tensor *[]){&in}, 1);
    fz_tensor_free(&in);
}

/* Reads attribute a of slot i into room for `requested` elements; for descriptors, into ones
   created for the purpose (of the kind the attribute holds, mostly), which the array then names. */
static void fb_get(struct fb_state *s, int i, const struct fb_attr *a, int it)
{
    const cudnnBackendAttributeType_t t = trand_int(0, 15) ? a->type : (cudnnBackendAttributeType_t)fz_mode(20);
    const int64_t requested = trand_int(0, 7) ? trand_int(0, 4) : trand_int(-1, FB_MAX_ELEMS);
    const size_t bytes = requested > 0 ? (size_t)requested * fb_elem_size(t) : 0;
    fb_desc made[FB_MAX_ELEMS] = {0};
    struct fz_tensor out = {.host = true}, count = {.host = true}; /* written on the host */
    const bool descs = t == CUDNN_TYPE_BACKEND_DESCRIPTOR;
    if (descs) { /* the array is an input: the descriptors it names are filled */
        const int want = fb_wants(a->name);
        const int kind = want >= 0 && trand_int(0, 3) ? want : trand_int(0, CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR);
        for (int64_t j = 0; j < requested; j++) cudnnBackendCreateDescriptor((cudnnBackendDescriptorType_t)kind, &made[j]);
    }
    if ((descs ? fz_buffer_of(&out, made, bytes) : fz_buffer(&out, bytes, 0)) && fz_buffer(&count, sizeof(int64_t), 0)) {
        if (trand_int(0, 15) == 0) fz_drop(&count);
        if (requested == 0 && trand_int(0, 1)) fz_drop(&out);
        struct fz_tensor *outs[] = {&out, &count};
        fz_check_with("backend get attribute", it,
                      cudnnBackendGetAttribute(s->d[i], a->name, t, requested, fz_opt(&count), fz_opt(&out)),
                      CUDNN_STATUS_NOT_INITIALIZED, descs ? outs + 1 : outs, descs ? 1 : 2, descs ? outs : NULL,
                      descs ? 1 : 0);
    }
    for (int64_t j = 0; j < requested && descs; j++)
        if (made[j] != NULL) cudnnBackendDestroyDescriptor(made[j]);
    fz_tensor_free(&out);
    fz_tensor_free(&count);
}

/* Executes slot i as a plan with slot j as its variant pack, unless a value too large for the
   pool was set or the plan asks for more workspace than a buffer of the pool holds. */
static void fb_execute(struct fb_state *s, int i, int j, int it)
{
    int64_t ws = 0, n = 0;
    if (s->big) return;
    if (cudnnBackendGetAttribute(s->d[i], CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws) ==
            CUDNN_STATUS_SUCCESS &&
        ws > FB_POOL_BYTES)
        return;
    struct fz_tensor *outs[FB_POOL];
    for (int k = 0; k < FB_POOL; k++) outs[k] = &s->pool[k];
    fz_check_with("backend execute", it, cudnnBackendExecute(trand_int(0, 31) ? s->h : NULL, s->d[i], s->d[j]),
                  CUDNN_STATUS_NOT_INITIALIZED, outs, FB_POOL, NULL, 0);
    for (int k = 0; k < FB_POOL; k++) { /* fresh snapshots: a successful execute wrote the buffers */
        tbuf_download(s->pool[k].snap, s->pool[k].base, s->pool[k].lead + s->pool[k].bytes + GUARD);
    }
}

static void fb_destroy(struct fb_state *s, int i)
{
    if (s->kind[i] >= 0) CHECK_OK(cudnnBackendDestroyDescriptor(s->d[i]));
    s->d[i] = NULL;
    s->kind[i] = -1;
}

/* Creates a descriptor of `kind` in slot i (an empty one when the kind is none). */
static void fb_create(struct fb_state *s, int i, int kind, int it)
{
    fb_destroy(s, i);
    const cudnnStatus_t st = cudnnBackendCreateDescriptor((cudnnBackendDescriptorType_t)kind, &s->d[i]);
    fz_check("backend create descriptor", it, st, NULL, 0, NULL, 0);
    if (st == CUDNN_STATUS_SUCCESS) s->kind[i] = kind;
    else s->d[i] = NULL;
}

/* Sets the attributes of slot i's kind (in an odd iteration each three times in four, and now and
   then of another type or count) and finalizes it mostly. */
static void fb_build(struct fb_state *s, int i, int it)
{
    for (int k = 0; k < (int)TLEN(fb_attrs); k++)
        if ((int)fb_attrs[k].kind == s->kind[i] && (!s->odd || trand_int(0, 3) > 0))
            fb_set(s, i, &fb_attrs[k], !s->odd, it);
    if (trand_int(0, 15) > 0)
        fz_check_with("backend finalize", it, cudnnBackendFinalize(s->d[i]), CUDNN_STATUS_NOT_INITIALIZED, NULL, 0,
                      NULL, 0);
}

/* The kinds of the graphs the iterations build before fuzzing further: tensors, an operation's
   parameters and the operation, the graph, what runs it and the variant pack. */
static void fb_build_graph(struct fb_state *s, int it)
{
    static const cudnnBackendDescriptorType_t params[] = {CUDNN_BACKEND_POINTWISE_DESCRIPTOR,
                                                          CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR,
                                                          CUDNN_BACKEND_MATMUL_DESCRIPTOR,
                                                          CUDNN_BACKEND_REDUCTION_DESCRIPTOR};
    static const cudnnBackendDescriptorType_t ops[] = {CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                                                       CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                                       CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
                                                       CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR};
    const int op = trand_int(0, 3);
    const int kinds[] = {CUDNN_BACKEND_TENSOR_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR,
                         CUDNN_BACKEND_TENSOR_DESCRIPTOR, params[op], ops[op],
                         CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR,
                         trand_int(0, 3) ? CUDNN_BACKEND_ENGINE_DESCRIPTOR : CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
                         CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                         CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR};
    for (int k = 0; k < (int)TLEN(kinds); k++) {
        fb_create(s, k, trand_int(0, 15) ? kinds[k] : trand_int(0, CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR), it);
        if (s->kind[k] == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR) { /* its first configuration's engine, in the next slot */
            fb_build(s, k, it);
            fb_create(s, ++k, CUDNN_BACKEND_ENGINE_DESCRIPTOR, it);
        }
        if (s->kind[k] >= 0) fb_build(s, k, it);
    }
    int plan = -1, pack = -1;
    for (int i = 0; i < FB_SLOTS; i++) {
        if (s->kind[i] == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) plan = i;
        if (s->kind[i] == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR) pack = i;
    }
    if (plan >= 0 && pack >= 0) fb_execute(s, plan, pack, it);
}

TEST(fuzz_backend_with_random_descriptors)
{
    struct fb_state s;
    memset(&s, 0, sizeof s);
    s.h = test_handle();
    for (int it = 0; it < FZ_ITERATIONS(200) && !current_test_failed(); it++) {
        for (int i = 0; i < FB_SLOTS; i++) s.kind[i] = -1, s.d[i] = NULL;
        s.big = false;
        s.odd = trand_int(0, 3) == 0;
        s.pack = trand_int(0, 3) ? FB_POOL : trand_int(1, FB_POOL);
        s.turn = s.uids = 0;
        s.rank = trand_int(0, 7) ? 4 : trand_int(2, 5);
        for (int i = 0; i < 5; i++) s.shape[i] = trand_int(1, 3);
        bool sized = true;
        for (int i = 0; i < FB_POOL; i++) sized = fz_buffer(&s.pool[i], FB_POOL_BYTES, 0) && sized;
        if (sized && trand_int(0, 1)) fb_build_graph(&s, it);
        for (int step = 0, steps = trand_int(0, 24); sized && step < steps && !current_test_failed(); step++) {
            const int i = trand_int(0, FB_SLOTS - 1), action = trand_int(0, 15);
            if (action < 2) fb_create(&s, i, trand_int(0, 9) ? trand_int(0, CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR) : fz_mode(24), it);
            else if (action < 8) fb_set(&s, i, fb_attr_for(s.kind[i]), false, it);
            else if (action < 11) fb_get(&s, i, fb_attr_for(s.kind[i]), it);
            else if (action < 13)
                fz_check_with("backend finalize", it, cudnnBackendFinalize(s.d[i]), CUDNN_STATUS_NOT_INITIALIZED,
                              NULL, 0, NULL, 0);
            else if (action < 14) fb_build(&s, i, it);
            else if (action < 15) fb_execute(&s, i, trand_int(0, FB_SLOTS - 1), it);
            else fb_destroy(&s, i);
        }
        for (int i = 0; i < FB_SLOTS; i++) fb_destroy(&s, i);
        for (int i = 0; i < FB_POOL; i++) fz_tensor_free(&s.pool[i]);
    }
}
