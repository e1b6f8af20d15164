/* engine.h: what the engine list (engine.c), the plan builder (engine_plan.c), the executor
   (engine_exec.c) and the batch-norm stages (engine_bn.c) of the backend API share: how a global
   engine index decodes, which convolution implementation an engine runs for a convolution of the
   graph, how a matmul's operands map to a BLAS call, and the problems of the batch-norm
   operations' passes.

   The global index of a graph's engine (docs/engines.md is the list, append-only):
   - a graph without a convolution has one engine, 0: its ops run on the library's one
     implementation table each (the GEMM's, the reduction's, the pointwise chain's);
   - a graph whose convolutions have direction d has
       0                     "auto": the first implementation of the registry, in heuristic order,
                             that runs the convolution without workspace (the direct kernels
                             always can, so index 0 runs every convolution graph);
       1 .. A_d              cuDNN algorithm a = index - 1 of the direction (fwd 8, bwd data 6,
                             bwd filter 7), through the registry's pick as the legacy API does;
       A_d + 1 + j           implementation j of the direction's append-only list (engine.c),
                             pinned: it runs the convolution or the engine does not apply.
   Every other op of the graph (pointwise chains, matmul, reduction, statistics) runs the same
   way under every engine. */
#ifndef OCD_GRAPH_ENGINE_H
#define OCD_GRAPH_ENGINE_H

#include "cnn/conv.h"
#include "graph/graph.h"
#include "ops/batchnorm.h"
#include "problem/bn_finalize.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ocd_engine_kind { OCD_ENGINE_AUTO, OCD_ENGINE_ALGO, OCD_ENGINE_ENTRY };

struct ocd_engine_id {
    enum ocd_engine_kind kind;
    int dir;   /* enum ocd_conv_dir, or -1 for a graph without a convolution */
    int algo;  /* OCD_ENGINE_ALGO */
    const char *name; /* OCD_ENGINE_ENTRY: the implementation's name */
};

/* The direction of the graph's convolutions (-1: none), or -2 when they differ. */
int ocd_engine_graph_dir(const struct ocd_graph *g);

/* Decodes a global index for a graph of direction dir; false when out of range. */
bool ocd_engine_decode(int dir, int64_t index, struct ocd_engine_id *id);

/* Why entry e cannot run p at all (under any algorithm it serves: its documented restrictions,
   its own test, its table row), or NULL; its plan into plan (NULL: none kept). */
const char *ocd_engine_conv_rejects(cudnnHandle_t handle, const struct ocd_conv_impl *e,
                                    const struct ocd_conv_problem *p, struct ocd_impl_plan *plan);

/* The implementation engine id runs for problem p on the handle's backend, or NULL with *why.
   The result is what the plan runs; p's data pointers may be NULL. */
const struct ocd_conv_impl *ocd_engine_conv_pick(cudnnHandle_t handle, const struct ocd_engine_id *id,
                                                 const struct ocd_conv_problem *p, char *why, size_t why_size);

/* Another implementation for p, its data pointers bound, when *impl declines them for `why` (a
   kernel that reads a tensor in place needs more alignment than the pointer has): into *impl the
   first entry of the direction's table that takes p with at most `scratch` bytes of workspace,
   uses tensor cores only if *impl does and is nondeterministic only if *impl is (the engine's
   numerical notes stay true), its plan into plan, logged at info level; BAD_PARAM, logged, when
   none does. */
cudnnStatus_t ocd_engine_conv_rebind(cudnnHandle_t handle, const struct ocd_conv_impl **impl,
                                     const struct ocd_conv_problem *p, size_t scratch, struct ocd_impl_plan *plan,
                                     const char *why);

/* The legacy problem of a convolution op of the graph, its virtual output stored in the data
   type of its input (the intermediate an engine writes to its workspace). */
cudnnStatus_t ocd_engine_conv_problem(const struct ocd_graph_op *op, struct ocd_conv_problem *p);

/* A stored rows x cols matrix at row stride rs and column stride cs, as a column-major BLAS
   operand: *trans and *ld, or false when neither stride is 1 (an extent of 1 leaves its stride
   free). */
bool ocd_engine_blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans, int64_t *ld);
/* Whether a matmul's C ([batch, rows, cols]) is stored row-major, so that the GEMM computes its
   transpose (C^T = B^T A^T): the GEMM's rows are then C's columns. */
bool ocd_engine_row_major_c(const struct ocd_tensor_view *c);

/* Builds the plan engine id makes of the graph (engine_plan.c): the stages, the implementations
   they run and the workspace. NOT_SUPPORTED, logged, when the engine cannot run the graph. */
cudnnStatus_t ocd_engine_plan(cudnnHandle_t handle, struct ocd_graph *g, const struct ocd_engine_id *id,
                              struct ocd_graph_plan **plan, int64_t *workspace_bytes);

/* The number of passes (stages) of a plan: the heuristics' first key. */
int ocd_engine_plan_stages(const struct ocd_graph_plan *plan);

/* ---- batch-norm operations (engine_bn.c) ---- */

/* The channel pass of a BN_FINALIZE_STATISTICS or BN_BWD_WEIGHTS op (pointers unbound), and the
   op's tensor slot behind each of its operands (-1: none). NOT_SUPPORTED, logged, for a tensor
   type or layout it does not take. */
cudnnStatus_t ocd_engine_bnf_problem(const struct ocd_graph_op *op, struct ocd_bnf_problem *p,
                                     int tensor_of[OCD_BNF_SLOTS]);
/* Binds the operands' pointers (ptr[slot], NULL for none), reading by-value scalars from them. */
void ocd_engine_bnf_bind(struct ocd_bnf_problem *p, void *const ptr[OCD_BNF_SLOTS]);
cudnnStatus_t ocd_engine_bnf_run(cudnnHandle_t handle, const struct ocd_bnf_problem *p, const char *op);
/* The sums pass of a BN_BWD_WEIGHTS op, given x's and dy's stored views (pointers unbound; dx is
   laid out as x). NOT_SUPPORTED, logged, for what the batch-norm engine does not take. */
cudnnStatus_t ocd_engine_bn_sums_problem(const struct ocd_graph_op *op, const struct ocd_tensor_view *x,
                                         const struct ocd_tensor_view *dy, struct ocd_bn_problem *p);

/* The append-only list of pinned implementations of a direction (engine.c), for the test that
   checks it names every registry entry (reached through dlsym). */
int ocd_engine_entry_count(int dir);
const char *ocd_engine_entry_name(int dir, int j);

#ifdef __cplusplus
}
#endif

#endif /* OCD_GRAPH_ENGINE_H */
