/* reduce.h: the reduction problem of cudnnReduceTensor, as every backend takes it, its plan (how
   the reduced elements are split into ranges that run in parallel), and the declarations of the
   backends' reductions. Normalization and plan are built in src/ops/reduce.c.

   Normalization: the dimensions where C is 1 and A is not are the reduced ones, the others are
   kept (dimensions of extent 1 are dropped). Both lists keep the logical order, because an index
   is "relative to the reduced dimensions, flattened": the row-major position among the reduced
   dimensions. Neighbours in a list that A walks contiguously are merged, which changes no
   flattened index.

   The plan: when the outputs are few and the reductions long, each output's reduced range is
   cut into `splits` equal ranges whose partial results go to the workspace, and a second pass
   combines them in order. The plan depends only on the shapes, so cudnnGetReductionWorkspaceSize
   and cudnnReduceTensor agree, on either backend. */
#ifndef OCD_PROBLEM_REDUCE_H
#define OCD_PROBLEM_REDUCE_H

#include "core/handle.h"
#include "core/hostdev.h"
#include "core/tensor.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A partial result: a sum, product or sum of squares, or for MIN, MAX and AMAX the best value
   and its flattened index (OCD_REDUCE_EMPTY: no element seen yet). */
struct ocd_reduce_partial {
    double value;
    uint32_t index;
    uint32_t unused;
};

#define OCD_REDUCE_EMPTY UINT32_MAX

struct ocd_reduce {
    cudnnReduceTensorOp_t op;
    bool propagate_nan;   /* MIN, MAX, AMAX: NaN wins (true) or is skipped (false) */
    bool want_indices;    /* write one uint32 index per output */
    bool double_compute;  /* compute type DOUBLE (else FLOAT) */
    cudnnDataType_t a_type, c_type;
    int kept_rank, red_rank;
    int64_t kept_dims[OCD_MAX_DIMS], a_kept_strides[OCD_MAX_DIMS], c_strides[OCD_MAX_DIMS];
    int64_t red_dims[OCD_MAX_DIMS], a_red_strides[OCD_MAX_DIMS];
    int64_t outputs, reduced; /* products of the kept and of the reduced dims */
    int64_t splits, chunk;    /* ranges per output, and reduced elements per range */
    const void *a;
    void *c;
    uint32_t *indices;
    struct ocd_reduce_partial *partials; /* the workspace: [output][split], when splits > 1 */
    double alpha, beta;
};

/* ---- the reduction semantics, shared by the host and the CUDA kernels --------------------------

   Values are accumulated in double whatever the compute type, which is exact for every storage
   type and at least as precise as FLOAT compute. MIN and MAX keep the first (lowest flattened
   index) of equal values; with NaN propagation the first NaN wins, without it NaNs are skipped
   (a range of NaNs only gives NaN). MUL_NO_ZEROS skips zeros (a range of zeros gives 1, the empty
   product). AMAX is MAX of absolute values and reports its index like MAX. */

OCD_HOST_DEVICE bool ocd_reduce_selects(cudnnReduceTensorOp_t op)
{
    return op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX || op == CUDNN_REDUCE_TENSOR_AMAX;
}

OCD_HOST_DEVICE struct ocd_reduce_partial ocd_reduce_start(cudnnReduceTensorOp_t op)
{
    struct ocd_reduce_partial p;
    p.value = op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS ? 1.0 : 0.0;
    p.index = OCD_REDUCE_EMPTY;
    p.unused = 0;
    return p;
}

/* Whether candidate (v, i) replaces the best so far (b, j) of MIN/MAX/AMAX. */
OCD_HOST_DEVICE bool ocd_reduce_better(cudnnReduceTensorOp_t op, bool propagate_nan, double v, uint32_t i,
                                     double b, uint32_t j)
{
    if (j == OCD_REDUCE_EMPTY) return true;
    bool vnan = v != v, bnan = b != b;
    if (vnan || bnan) {
        if (vnan && bnan) return i < j;
        return propagate_nan ? vnan : bnan;
    }
    if (v != b) return op == CUDNN_REDUCE_TENSOR_MIN ? v < b : v > b;
    return i < j;
}

/* Folds element v, at flattened reduced index i, into p. */
OCD_HOST_DEVICE void ocd_reduce_step(cudnnReduceTensorOp_t op, bool propagate_nan, struct ocd_reduce_partial *p,
                                   double v, uint32_t i)
{
    switch (op) {
    case CUDNN_REDUCE_TENSOR_ADD: case CUDNN_REDUCE_TENSOR_AVG: p->value += v; return;
    case CUDNN_REDUCE_TENSOR_MUL: p->value *= v; return;
    case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: if (v != 0) p->value *= v; return;
    case CUDNN_REDUCE_TENSOR_NORM1: p->value += fabs(v); return;
    case CUDNN_REDUCE_TENSOR_NORM2: p->value += v * v; return;
    default: {
        double key = op == CUDNN_REDUCE_TENSOR_AMAX ? fabs(v) : v;
        if (ocd_reduce_better(op, propagate_nan, key, i, p->value, p->index)) {
            p->value = key;
            p->index = i;
        }
    }
    }
}

/* Folds partial q (of a later or earlier range) into p. */
OCD_HOST_DEVICE void ocd_reduce_merge(cudnnReduceTensorOp_t op, bool propagate_nan, struct ocd_reduce_partial *p,
                                    struct ocd_reduce_partial q)
{
    switch (op) {
    case CUDNN_REDUCE_TENSOR_MUL: case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: p->value *= q.value; return;
    default:
        if (!ocd_reduce_selects(op)) {
            p->value += q.value;
        } else if (q.index != OCD_REDUCE_EMPTY &&
                   ocd_reduce_better(op, propagate_nan, q.value, q.index, p->value, p->index)) {
            *p = q;
        }
    }
}

/* The reduction's value for the whole reduced set of `count` elements. */
OCD_HOST_DEVICE double ocd_reduce_result(cudnnReduceTensorOp_t op, struct ocd_reduce_partial p, int64_t count)
{
    if (op == CUDNN_REDUCE_TENSOR_AVG) return p.value / (double)count;
    if (op == CUDNN_REDUCE_TENSOR_NORM2) return sqrt(p.value);
    return p.value;
}

/* Builds the normalized problem and its plan from A's and C's views (the API has checked the
   shapes); data pointers, scaling and the options are set by the caller. */
void ocd_reduce_build(struct ocd_reduce *r, const struct ocd_tensor_view *a, const struct ocd_tensor_view *c);

/* Workspace bytes the plan needs. */
size_t ocd_reduce_workspace(const struct ocd_reduce *r);

/* Runs a complete problem (data, scaling, workspace set) through the reduction's implementation
   table (src/ops/reduce.c); op names the caller in logs. The graph API's reductions use it. */
cudnnStatus_t ocd_reduce_run(cudnnHandle_t handle, const struct ocd_reduce *r, const char *op);

/* The backends' reductions (src/host/reduce.c, src/cuda/reduce.cu): each runs a struct
   ocd_reduce (its plan's workspace is in problem->partials) and always applies. */
cudnnStatus_t ocd_host_reduce_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                  size_t workspace_bytes);
cudnnStatus_t ocd_cuda_reduce_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                  size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_REDUCE_H */
