/* conv.h: the convolution descriptor, the algorithm registry, and what the convolution API files
   share. The problem the kernels take, its math and the implementations' declarations are in
   problem/conv.h.

   The registry (conv_registry.c) is one table per direction of struct ocd_conv_impl. An entry
   serves a set of the cuDNN algorithm enums of its direction (the algorithm mask of struct
   ocd_impl): a specialised entry usually serves one algorithm, a reference entry serves every
   algorithm of the GEMM/direct family that its backend offers and comes last. For an algorithm
   ocd_conv_pick first applies the documented restrictions of the cuDNN 8.2 API reference
   (ocd_conv_algo_rejects: WINOGRAD needs 3x3 filters, FFT needs unit strides, ...), then asks
   the one walker of core/impl.h for the first entry that serves the algorithm, runs on the
   handle's backend, is not switched off (OPENCUDNN_DISABLE), applies, and passes convolution's
   further test (the math type, the workspace, a race it loses). A new kernel (say a
   tensor-core implicit GEMM for sm_90) is one new entry placed before the reference one. */
#ifndef OCD_CNN_CONV_H
#define OCD_CNN_CONV_H

#include "core/impl.h"
#include "problem/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Spatial dims a convolution descriptor can hold (the tensor rank minus N and C). Execution
   supports 2 (4-D tensors) and 3 (5-D tensors), as cuDNN 8.2 documents. */
#define OCD_CONV_MAX_ARRAY (OCD_MAX_DIMS - 2)

struct cudnnConvolutionStruct {
    struct ocd_object obj;
    bool set; /* false until a Set*Descriptor call succeeded */
    int array_length;
    int pad[OCD_CONV_MAX_ARRAY], stride[OCD_CONV_MAX_ARRAY], dilation[OCD_CONV_MAX_ARRAY];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    cudnnMathType_t math;
    int groups;
    cudnnReorderType_t reorder;
};

/* ---- the registry ------------------------------------------------------------------------------ */

struct ocd_conv_impl {
    /* name, backend, the algorithms it serves (bit a: algorithm enum a of the table's
       direction), applies, workspace, run */
    struct ocd_impl base;
    cudnnDeterminism_t determinism;
    bool tensor_ops; /* uses tensor cores: needs a math type that allows them */
    /* Optional, for an entry that differs from the next entry serving the same algorithm in
       speed only (the host's CBLAS GEMM against the built-in engine): asked after applies, an
       estimate (a measurement, a size rule) of whether it should run the problem. Find times
       both on the problem, and its verdict overrules the estimate (not FORCED). A racing entry is
       planned: plan is its plan for p (a plan that serves p). */
    enum ocd_conv_race (*race)(cudnnHandle_t handle, const struct ocd_conv_problem *p, const void *plan);
    /* takes a backward data's ReLU gradient (ocd_conv_problem.relu_grad): the entries whose
       stores evaluate it (the host's shared store, the implicit GEMM's typed epilogue, the CUDA
       direct kernel's store); the others never see such a problem */
    bool relu_grad;
};

struct ocd_conv_table {
    const struct ocd_conv_impl *impls;
    size_t count;
};

/* The table of a direction (conv_registry.c), typed and as the walker and the check see it. */
const struct ocd_conv_table *ocd_conv_table(enum ocd_conv_dir dir);
struct ocd_impl_table ocd_conv_impl_table(enum ocd_conv_dir dir);

/* Number of algorithm enums of the direction: 8, 6 or 7 (the *_ALGO_COUNT of the headers). */
int ocd_conv_algo_count(enum ocd_conv_dir dir);
const char *ocd_conv_algo_name(enum ocd_conv_dir dir, int algo);

/* Why the cuDNN 8.2 documentation rules algorithm `algo` out for this problem, or NULL. */
const char *ocd_conv_algo_rejects(const struct ocd_conv_problem *p, int algo);

/* The entry that runs `algo` for the problem on the handle's backend, or NULL with *why set
   (the documented restriction or the reasons of every entry). Logs each skipped entry. plan
   (optional: NULL) receives the plans of the walk, the chosen entry's last (core/impl.h). */
const struct ocd_conv_impl *ocd_conv_pick(cudnnHandle_t handle, const struct ocd_conv_problem *p,
                                          int algo, char *why, size_t why_size, struct ocd_impl_plan *plan);

/* For Find: when the entry the pick reaches first for `algo` races (and is not FORCED), that
   entry (*racer, whether its estimate won or lost) and the entry that runs when it is passed
   over (*rival); false when the algorithm has no such pair for the problem. */
bool ocd_conv_race_pair(cudnnHandle_t handle, const struct ocd_conv_problem *p, int algo,
                        const struct ocd_conv_impl **racer, const struct ocd_conv_impl **rival);

/* Find's verdicts on races (conv_find.c), per problem string and algorithm: recorded after Find
   timed a racer against its rival, followed by the pick from then on. A verdict lookup returns
   false when none exists. The epoch changes with every verdict recorded. */
void ocd_conv_race_record(const struct ocd_conv_problem *p, int algo, bool racer_won);
bool ocd_conv_race_verdict(const struct ocd_conv_problem *p, int algo, bool *racer_won);
unsigned ocd_conv_race_epoch(void);

/* Workspace bytes an entry needs for the problem (plan: NULL, or the pick's). */
size_t ocd_conv_impl_workspace(cudnnHandle_t handle, const struct ocd_conv_impl *impl,
                               const struct ocd_conv_problem *p, const struct ocd_impl_plan *plan);

/* The math type a perf result reports for an entry. */
cudnnMathType_t ocd_conv_reported_math(const struct ocd_conv_impl *impl, const struct ocd_conv_problem *p);

/* Why entry e cannot serve p for what its table row says (the math type: tensor cores; a ReLU
   gradient in the stores), or NULL; every walk over a table asks it after the entry's own test. */
const char *ocd_conv_entry_row_rejects(const struct ocd_conv_impl *e, const struct ocd_conv_problem *p);

/* The space-to-depth filter gradient (conv_s2d.c): entries host:wgrad_s2d and cuda:wgrad_s2d. */
extern const struct ocd_impl_planned ocd_conv_s2d_wgrad_planned;

/* Tables of the simple operations around convolution (ocd_impl_run picks from them): Im2Col
   (problem: a forward ocd_conv_problem whose y_data is the column buffer, groups 1) and the bias
   gradient (problem: struct ocd_conv_bias_problem). */
extern const struct ocd_impl ocd_conv_im2col_impls[];
extern const size_t ocd_conv_im2col_impl_count;
extern const struct ocd_impl ocd_conv_bias_grad_impls[];
extern const size_t ocd_conv_bias_grad_impl_count;

/* ---- shared by the API files (conv.c, conv_train.c, fused_ops_train.c) --------------------------- */

/* Validates descriptors for a direction and fills everything of the problem but data pointers
   and scalars. Statuses are those documented per direction (BAD_PARAM, NOT_SUPPORTED). x/w/y are
   named for the forward op whatever the direction (for backward data: x = dxDesc, y = dyDesc). */
cudnnStatus_t ocd_conv_problem_init(struct ocd_conv_problem *p, enum ocd_conv_dir dir,
                                    cudnnTensorDescriptor_t x_desc, const char *x_name,
                                    cudnnFilterDescriptor_t w_desc, const char *w_name,
                                    cudnnConvolutionDescriptor_t conv_desc,
                                    cudnnTensorDescriptor_t y_desc, const char *y_name);

/* The same for descriptors known to be set (copies kept by a fused-ops pack): the checks after
   the liveness of the descriptors. */
cudnnStatus_t ocd_conv_problem_of(struct ocd_conv_problem *p, enum ocd_conv_dir dir,
                                  const struct cudnnTensorStruct *x_desc, const char *x_name,
                                  const struct cudnnFilterStruct *w_desc, const char *w_name,
                                  const struct cudnnConvolutionStruct *conv_desc,
                                  const struct cudnnTensorStruct *y_desc, const char *y_name);

/* The canonical problem string (DESIGN.md practice 11): direction, shape, conv parameters, types
   and layouts; used in logs and as the key of the Find cache. */
void ocd_conv_problem_format(const struct ocd_conv_problem *p, char *buf, size_t size);

/* Runs algorithm `algo`: picks the entry (NOT_SUPPORTED, logged, when none), checks the
   workspace (BAD_PARAM when smaller than the entry needs; nothing is written) and runs it. */
cudnnStatus_t ocd_conv_execute(cudnnHandle_t handle, const struct ocd_conv_problem *p, int algo,
                               void *workspace, size_t workspace_bytes, const char *op);

/* Workspace query: SUCCESS with the size, or NOT_SUPPORTED (logged) when nothing runs `algo`. */
cudnnStatus_t ocd_conv_workspace_query(cudnnHandle_t handle, const struct ocd_conv_problem *p,
                                       int algo, size_t *bytes, const char *op);


/* One perf result, direction-independent (the three cuDNN perf structs differ only in the type of
   algo). */
struct ocd_conv_perf {
    int algo;
    cudnnStatus_t status;
    float time; /* ms; -1 when not timed */
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
};

/* The perf result of `algo` run by impl (NULL: NOT_SUPPORTED), untimed (plan: NULL, or the
   pick's). */
struct ocd_conv_perf ocd_conv_perf_of(cudnnHandle_t handle, const struct ocd_conv_problem *p, int algo,
                                      const struct ocd_conv_impl *impl, const struct ocd_impl_plan *plan);
/* The algorithm the heuristic ranks first for p where the table order alone would not, or -1:
   a measured exception (see conv_registry.c). */
int ocd_conv_heuristic_first(cudnnHandle_t handle, const struct ocd_conv_problem *p);

/* Every algorithm once: those with an entry first (ocd_conv_heuristic_first's choice, when it
   runs, then in the order of their first entry in the table: the heuristic), then the rest as
   NOT_SUPPORTED in enum order, with the entry of each (NULL for the rest). Returns the count. */
int ocd_conv_rank_algorithms(cudnnHandle_t handle, const struct ocd_conv_problem *p, struct ocd_conv_perf *out,
                             const struct ocd_conv_impl **impls);
/* Writes n results to the API's perf struct array of any direction (the three share one layout). */
void ocd_conv_export_perf(const struct ocd_conv_perf *src, int n, void *dst);

/* cudnnGet*Algorithm_v7: every algorithm once, those that run first in table order, then the
   others (NOT_SUPPORTED), at most `requested`, written to the API's perf struct array of the
   direction (the three share one layout). */
cudnnStatus_t ocd_conv_get_algorithms(cudnnHandle_t handle, const struct ocd_conv_problem *p, int requested,
                                      int *returned, void *perf_results);

/* The algorithm the heuristic ranks first, or -1 when none runs. */
int ocd_conv_preferred_algo(cudnnHandle_t handle, const struct ocd_conv_problem *p);

/* cudnnFind*Algorithm(Ex) (conv_find.c): times every algorithm that runs, fastest first, then the
   others. Each runs once untimed (library loading, thread start-up, first touch of memory), then
   its best of up to three timed runs is reported. Without user buffers it allocates samples and
   workspace itself (ALLOC_FAILED when it cannot); with them (Ex: p's data set) it runs in the
   user's buffers, and an algorithm needing more workspace than offered reports ALLOC_FAILED.
   Where a racing entry and its rival both serve an algorithm, both are timed, the faster is
   reported and recorded as the verdict. Results are cached per problem string. */
cudnnStatus_t ocd_conv_find_algorithms(cudnnHandle_t handle, struct ocd_conv_problem *p, int requested, int *returned,
                                       void *perf_results, bool user_buffers, void *workspace, size_t workspace_bytes,
                                       const char *op);

/* The checks the Get/Find entry points share: a live handle, outputs not NULL, requested >= 1. */
cudnnStatus_t ocd_conv_check_query_args(cudnnHandle_t handle, int requested, const int *returned, const void *perf);
/* cudnnGet*AlgorithmMaxCount: the handle, the output, and the algorithm count of the direction. */
cudnnStatus_t ocd_conv_max_count(cudnnHandle_t handle, int *count, enum ocd_conv_dir dir);
/* Reads alpha and beta (host pointers; double for double data, float otherwise) into p. */
cudnnStatus_t ocd_conv_set_scaling(struct ocd_conv_problem *p, const void *alpha, const void *beta);

/* Checks a convolution descriptor argument: BAD_PARAM unless live and set. */
cudnnStatus_t ocd_conv_desc_get(cudnnConvolutionDescriptor_t desc, const char *name);

/* Forward output dims of x (rank nb) convolved with w: out[] gets nb dims. BAD_PARAM when the
   descriptors disagree (rank, channels x groups, filter larger than the padded input). */
cudnnStatus_t ocd_conv_output_dims(const struct cudnnConvolutionStruct *conv, const struct ocd_tensor_view *x,
                                   const struct ocd_tensor_view *w, int64_t out[]);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CNN_CONV_H */
