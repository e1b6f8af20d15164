/* graph.h: what the backend (graph) API's descriptor layer hands to its engines: the finalized
   tensor, operation and operation-graph representations, engine configurations, the hooks the
   descriptor layer calls to ask the engines (implemented in src/graph/engine*.c), and the
   accessors cudnnBackendExecute uses to read a finalized plan and variant pack.

   Main decision: everything here is a finalized, immutable value. A finalized operation holds
   copies of its tensors (struct ocd_graph_tensor) and of its parameter descriptor; a finalized
   graph (struct ocd_graph) holds copies of its operations, is reference counted and is shared,
   never copied, by the engines, configurations, heuristics and plans made from it. So a user may
   destroy any descriptor once a descriptor that uses it is finalized, and a plan may run on many
   threads at once. The descriptor objects themselves (attributes being set, the table that says
   each attribute's type and count) are private to the descriptor layer (backend_desc.h). */
#ifndef OCD_GRAPH_GRAPH_H
#define OCD_GRAPH_GRAPH_H

#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Spatial dims a backend convolution descriptor holds (a tensor of rank 8 has 6). */
#define OCD_GRAPH_MAX_SPATIAL (OCD_MAX_DIMS - 2)
/* Tensors one operation names (BN_FINALIZE_STATISTICS has the most: 15). */
#define OCD_GRAPH_OP_MAX_TENSORS 16
/* Operations one graph holds. */
#define OCD_GRAPH_MAX_OPS 64
/* Knobs one engine offers (one per knob type at most) and chooses. */
#define OCD_GRAPH_MAX_KNOBS CUDNN_KNOB_TYPE_COUNTS
/* Notes one engine carries. */
#define OCD_GRAPH_MAX_NUMERICAL_NOTES CUDNN_NUMERICAL_NOTE_TYPE_COUNT
#define OCD_GRAPH_MAX_BEHAVIOR_NOTES CUDNN_BEHAVIOR_NOTE_TYPE_COUNT

/* ---- tensors ---------------------------------------------------------------------------------- */

/* A finalized TENSOR descriptor. dims and strides are as set: for a vectorized tensor
   (vect_count > 1, only INT8/UINT8 on dimension 1) dims[1] counts vectors and strides count
   vectors, as cuDNN 8.2 defines them; ocd_graph_tensor_view gives the library's scalar view. */
struct ocd_graph_tensor {
    int64_t uid;
    cudnnDataType_t dtype;
    int64_t alignment; /* bytes the data pointer is promised to be aligned to */
    int64_t rank;
    int64_t dims[OCD_MAX_DIMS];
    int64_t strides[OCD_MAX_DIMS];
    int64_t n_strides; /* equals rank once finalized */
    int64_t vect_count; /* 1, 4 or 32 */
    int64_t vect_dim;   /* -1 unless vect_count > 1 */
    bool is_virtual;
    bool by_value;
};

/* The library's view of a tensor (scalar dims; a vectorized INT8 tensor becomes the matching
   INT8x4 / INT8x32 view). NOT_SUPPORTED, logged, when a dimension or the span of the tensor does
   not fit the view's limits (int64 products are checked at finalize). */
cudnnStatus_t ocd_graph_tensor_view(const struct ocd_graph_tensor *t, struct ocd_tensor_view *v);

/* ---- parameter descriptors -------------------------------------------------------------------- */

struct ocd_graph_conv_desc {
    cudnnDataType_t comp;
    cudnnConvolutionMode_t mode;
    int64_t nsp; /* spatial dims */
    int64_t pre[OCD_GRAPH_MAX_SPATIAL], post[OCD_GRAPH_MAX_SPATIAL];
    int64_t dilation[OCD_GRAPH_MAX_SPATIAL], stride[OCD_GRAPH_MAX_SPATIAL];
    /* element counts as set (each equals nsp once finalized) */
    int64_t n_pre, n_post, n_dilation, n_stride;
};

struct ocd_graph_pointwise_desc {
    cudnnPointwiseMode_t mode;
    cudnnDataType_t math_prec;
    cudnnNanPropagation_t nan;
    double relu_lower, relu_upper, relu_slope; /* defaults 0, +inf (DBL_MAX), 0 */
    double elu_alpha, softplus_beta, swish_beta; /* defaults 1 */
};

struct ocd_graph_matmul_desc {
    cudnnDataType_t comp;
};

struct ocd_graph_reduction_desc {
    cudnnReduceTensorOp_t op;
    cudnnDataType_t comp;
};

/* ---- operations ------------------------------------------------------------------------------- */

/* Tensor slots of each operation kind (an index into ocd_graph_op.t). Convolutions name their
   tensors for the forward op whatever the direction, as the legacy problem does (x = dx in
   backward data, w = dw in backward filter, y = dy in both backward directions). */
enum {
    OCD_GT_CONV_X = 0, OCD_GT_CONV_W, OCD_GT_CONV_Y,
    OCD_GT_PW_X = 0, OCD_GT_PW_B, OCD_GT_PW_Y, OCD_GT_PW_DY, OCD_GT_PW_DX,
    OCD_GT_MM_A = 0, OCD_GT_MM_B, OCD_GT_MM_C,
    OCD_GT_RED_X = 0, OCD_GT_RED_Y,
    OCD_GT_GS_X = 0, OCD_GT_GS_SUM, OCD_GT_GS_SQSUM,
    /* BN_FINALIZE_STATISTICS, in attribute order */
    OCD_GT_BNF_Y_SUM = 0, OCD_GT_BNF_Y_SQ_SUM, OCD_GT_BNF_SCALE, OCD_GT_BNF_BIAS,
    OCD_GT_BNF_PREV_MEAN, OCD_GT_BNF_PREV_VAR, OCD_GT_BNF_UPDATED_MEAN, OCD_GT_BNF_UPDATED_VAR,
    OCD_GT_BNF_SAVED_MEAN, OCD_GT_BNF_SAVED_INV_STD, OCD_GT_BNF_EQ_SCALE, OCD_GT_BNF_EQ_BIAS,
    OCD_GT_BNF_ACCUM_COUNT, OCD_GT_BNF_EPSILON, OCD_GT_BNF_EXP_AVG_FACTOR,
    /* BN_BWD_WEIGHTS, in attribute order */
    OCD_GT_BNW_MEAN = 0, OCD_GT_BNW_INVSTD, OCD_GT_BNW_SCALE, OCD_GT_BNW_X, OCD_GT_BNW_DY,
    OCD_GT_BNW_DSCALE, OCD_GT_BNW_DBIAS, OCD_GT_BNW_EQ_DY_SCALE, OCD_GT_BNW_EQ_X_SCALE,
    OCD_GT_BNW_EQ_BIAS
};

/* A finalized OPERATION_* descriptor. kind is its descriptor type. Slot i holds a tensor when
   bit i of `present` is set; bit i of `outputs` says the op writes it. */
struct ocd_graph_op {
    cudnnBackendDescriptorType_t kind;
    uint32_t present, outputs;
    struct ocd_graph_tensor t[OCD_GRAPH_OP_MAX_TENSORS];
    union {
        struct ocd_graph_conv_desc conv;           /* the three convolutions */
        struct ocd_graph_pointwise_desc pw;        /* POINTWISE */
        struct ocd_graph_matmul_desc mm;           /* MATMUL */
        struct ocd_graph_reduction_desc red;       /* REDUCTION */
        cudnnGenStatsMode_t genstats;              /* GEN_STATS */
        cudnnBnFinalizeStatsMode_t bn_finalize;    /* BN_FINALIZE_STATISTICS */
    } p;
    cudnnDataType_t math_prec; /* GEN_STATS, BN_FINALIZE, BN_BWD_WEIGHTS */
    /* convolutions: alpha, beta; pointwise: alpha1, alpha2 */
    double alpha, beta;
    int64_t irregular_batch_count; /* MATMUL; 1 when not set */
};

/* "ConvFwd", "Pointwise", ...: for logs and plan tags. */
const char *ocd_graph_op_name(cudnnBackendDescriptorType_t kind);

/* ---- the operation graph ---------------------------------------------------------------------- */

/* One distinct tensor (by UID) of a graph, with who produces it and how many ops read it. */
struct ocd_graph_node {
    struct ocd_graph_tensor t;
    int producer;  /* op index, -1 for a graph input */
    int consumers; /* ops that read it */
};

/* A finalized OPERATIONGRAPH: ops in a topological order (each op after the producers of its
   inputs; the order they were given where that already is one), and every distinct tensor. */
struct ocd_graph {
    int refs; /* atomic; ocd_graph_ref / ocd_graph_unref */
    cudnnHandle_t handle;
    int n_ops;
    struct ocd_graph_op *ops;
    int n_nodes;
    struct ocd_graph_node *nodes;
    int64_t engine_count; /* ocd_graph_engine_count, asked once at finalize */
};

struct ocd_graph *ocd_graph_ref(struct ocd_graph *g);
void ocd_graph_unref(struct ocd_graph *g);
/* The node of a UID, or NULL. */
const struct ocd_graph_node *ocd_graph_find(const struct ocd_graph *g, int64_t uid);

/* ---- engines: the hooks the descriptor layer calls (src/graph/engine*.c) ---------------------- */

struct ocd_graph_knob_info {
    cudnnBackendKnobType_t type;
    int64_t min, max, stride;
};

struct ocd_graph_knob_choice {
    cudnnBackendKnobType_t type;
    int64_t value;
};

/* What an engine says of itself for one graph. */
struct ocd_graph_engine_info {
    int64_t n_knobs;
    struct ocd_graph_knob_info knobs[OCD_GRAPH_MAX_KNOBS];
    int64_t n_numerical;
    cudnnBackendNumericalNote_t numerical[OCD_GRAPH_MAX_NUMERICAL_NOTES];
    int64_t n_behavior;
    cudnnBackendBehaviorNote_t behavior[OCD_GRAPH_MAX_BEHAVIOR_NOTES];
};

/* An engine configuration: engine global index and knob choices (knobs not listed keep the
   engine's defaults). */
struct ocd_graph_config {
    int64_t engine;
    int64_t n_knobs;
    struct ocd_graph_knob_choice knobs[OCD_GRAPH_MAX_KNOBS];
};

/* CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT: how many global indices exist for the graph
   (0: no engine runs this pattern; the graph's finalize then fails with NOT_SUPPORTED; -1: memory
   ran out while finding out, logged, and the finalize fails with ALLOC_FAILED). */
int64_t ocd_graph_engine_count(const struct ocd_graph *g);

/* Engine `index` for the graph (ENGINE finalize): SUCCESS and its info, or NOT_SUPPORTED with a
   logged reason when the index is out of range or the engine cannot serve the graph. */
cudnnStatus_t ocd_graph_engine_describe(const struct ocd_graph *g, int64_t index,
                                        struct ocd_graph_engine_info *info);

/* ENGINECFG finalize: SUCCESS when the engine accepts the knob choices, else NOT_SUPPORTED
   (logged: a knob it does not offer, a value out of its range). */
cudnnStatus_t ocd_graph_config_check(const struct ocd_graph *g, const struct ocd_graph_config *cfg);

/* ENGINEHEUR finalize: the configurations, best expected first, at most cap of them written to
   out; *count gets how many the heuristic has in all (so cap 0 is a count query). The list is
   the same on every call for a graph and mode. ALLOC_FAILED (logged) when memory runs out while
   the engines are planned. */
cudnnStatus_t ocd_graph_heuristics(const struct ocd_graph *g, cudnnBackendHeurMode_t mode,
                                   struct ocd_graph_config *out, int64_t cap, int64_t *count);

/* A plan: what an engine compiled for one graph, configuration and handle. Opaque here; the
   engines define it. Immutable once built, so Execute may run it on many threads at once. */
struct ocd_graph_plan;

/* EXECUTION_PLAN finalize: builds the plan (kernel choice, runtime compilation, workspace size).
   NOT_SUPPORTED, logged, when the engine cannot run the graph with this configuration on the
   handle's device. The plan keeps its own reference to g. */
cudnnStatus_t ocd_graph_plan_build(cudnnHandle_t handle, struct ocd_graph *g,
                                   const struct ocd_graph_config *cfg, struct ocd_graph_plan **plan,
                                   int64_t *workspace_bytes);
void ocd_graph_plan_free(struct ocd_graph_plan *plan);

/* ---- finalized plans and variant packs, for cudnnBackendExecute ------------------------------- */

/* A finalized VARIANT_PACK: pointers by UID and the workspace. */
struct ocd_graph_variant {
    int64_t n;
    const int64_t *uids;
    void *const *pointers;
    void *workspace;
};

/* The bound of a graph's benchmark problem string, its NUL included. */
#define OCD_GRAPH_REPLAY_MAX 256

/* A finalized EXECUTION_PLAN descriptor's contents. */
struct ocd_graph_exec {
    cudnnHandle_t handle;
    struct ocd_graph *graph;
    struct ocd_graph_config cfg;
    struct ocd_graph_plan *plan;
    int64_t workspace_bytes;
    char replay[OCD_GRAPH_REPLAY_MAX]; /* ocd_graph_replay of graph, made at finalize */
};

/* The benchmark's problem string of g (replay.c), which Execute logs at info level as
   `replay: opencudnn_bench --problem "<string>"` (core/check.h), into buf: set when g is exactly
   one of the graphs of bench/ops_graph.c, empty for any other graph. */
void ocd_graph_replay(const struct ocd_graph *g, char *buf, size_t size);

/* BAD_PARAM, logged with the argument's name, unless d is a live, finalized descriptor of the
   kind; the views stay valid while the descriptor lives. */
cudnnStatus_t ocd_backend_plan_of(cudnnBackendDescriptor_t d, const char *name,
                                  const struct ocd_graph_exec **out);
cudnnStatus_t ocd_backend_variant_of(cudnnBackendDescriptor_t d, const char *name,
                                     struct ocd_graph_variant *out);

/* ---- problems for the executors --------------------------------------------------------------- */

struct ocd_conv_problem;
/* The legacy convolution problem (cnn/conv.h) of a finalized convolution op, data pointers NULL
   and alpha/beta from the op. NOT_SUPPORTED, logged, for what the legacy problem cannot hold
   (a layout no legacy filter format describes). Pre padding different from post padding gives
   the unpadded problem of x (dx) zero-padded, packed in x's order: the plan pads or crops. */
cudnnStatus_t ocd_graph_conv_problem(const struct ocd_graph_op *op, struct ocd_conv_problem *p);
/* Whether some spatial dim is padded differently before and after. */
bool ocd_graph_conv_asymmetric(const struct ocd_graph_conv_desc *c);

#ifdef __cplusplus
}
#endif

#endif /* OCD_GRAPH_GRAPH_H */
