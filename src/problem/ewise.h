/* ewise.h: the elementwise problem that cudnnSetTensor, cudnnScaleTensor, cudnnAddTensor,
   cudnnOpTensor and cudnnTransformTensor all reduce to, in the normalized form every backend's
   engine takes, and the declarations of those engines:

       y = op(alpha1 * a, alpha2 * b) + beta * y        (y is not read when beta == 0)

   Normalization (ocd_ewise_build) turns any legal set of views into plain strided loops: a
   vector type's channel dimension is split into (vectors, lanes) dimensions so that no engine
   ever deals with NCHW_VECT_C; a broadcast operand gets stride 0; dimensions of extent 1 are
   dropped; a dimension y walks backwards (a negative stride: a reversed view) is turned around
   in every operand, each operand's start moved to the element the walk begins at, so that y's
   strides are never negative (an input's may be, where it is reversed and y is not); the
   dimensions are ordered by y's strides (the last is y's fastest), and neighbours that every
   operand walks contiguously are merged. A packed problem of any layout, and one whose
   operands are all reversed alike, therefore arrives as one dimension with unit strides, which
   the engines' vectorized paths recognize. Engines compute offsets as signed 64-bit products
   of index and stride, or decline a problem with a negative stride. The normalization is
   src/ops/ewise.c. */
#ifndef OCD_PROBLEM_EWISE_H
#define OCD_PROBLEM_EWISE_H

#include "core/handle.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Splitting the channel dimension of a vector type adds at most two dimensions. */
#define OCD_EWISE_MAX_DIMS (OCD_MAX_DIMS + 2)

enum ocd_ewise_op {
    OCD_EWISE_FILL, /* y = the bit pattern in `fill` (cudnnSetTensor); no a, b, alpha or beta */
    OCD_EWISE_COPY, /* alpha1 * a */
    OCD_EWISE_ADD,  /* alpha1 * a + alpha2 * b */
    OCD_EWISE_MUL,  /* (alpha1 * a) * (alpha2 * b) */
    OCD_EWISE_MIN,  /* min(alpha1 * a, alpha2 * b), NaN per propagate_nan */
    OCD_EWISE_MAX,  /* max(alpha1 * a, alpha2 * b), NaN per propagate_nan */
    OCD_EWISE_SQRT, /* sqrt(alpha1 * a) */
    OCD_EWISE_NOT   /* 1 - alpha1 * a */
};

/* One operand after normalization: its scalar type, base pointer and a stride (in scalars of
   its type, 0 where it is broadcast, negative where it is reversed and y is not) for each of
   the problem's dimensions. */
struct ocd_ewise_operand {
    cudnnDataType_t dtype; /* a scalar type: vector types are given as their scalar type */
    const void *data;      /* the element the walk starts at (ocd_ewise_bind) */
    int64_t origin;        /* scalars from the caller's pointer (element (0,...,0)) to that element */
    int64_t strides[OCD_EWISE_MAX_DIMS];
};

struct ocd_ewise {
    enum ocd_ewise_op op;
    bool propagate_nan; /* MIN and MAX: NaN wins (true) or is ignored (false) */
    int rank;           /* >= 1 */
    int64_t dims[OCD_EWISE_MAX_DIMS];
    int64_t count;      /* product of dims */
    struct ocd_ewise_operand y, a, b; /* a and b are unused by the ops that do not name them */
    double alpha1, alpha2, beta;
    uint64_t fill;      /* FILL: the value's bytes (little-endian), as many as y's scalar size */
};

/* Number of inputs the op reads besides y: 0 (FILL), 1 (COPY, SQRT, NOT) or 2. */
int ocd_ewise_inputs(enum ocd_ewise_op op);

/* Builds the normalized problem from views of the same rank: y, then a and b where the op uses
   them (NULL otherwise). The API has checked that each dimension of a and b equals y's or is 1.
   The data pointers are given afterwards through ocd_ewise_bind, the scaling factors and the
   fill value set by the caller. */
void ocd_ewise_build(struct ocd_ewise *e, enum ocd_ewise_op op, const struct ocd_tensor_view *y,
                     const struct ocd_tensor_view *a, const struct ocd_tensor_view *b);

/* Sets the operands' data from the caller's pointers to their elements (0,...,0), moved by
   each operand's origin; a and b may be NULL where the op does not read them. */
void ocd_ewise_bind(struct ocd_ewise *e, void *y, const void *a, const void *b);

/* ---- the engines (entries of the elementwise table, src/ops/tensor_ops.c) -------------------------
   Each takes a struct ocd_ewise (any op, types, strides) and needs no workspace.
   host: src/host/tensor_ops.c, always applies.
   cuda: src/cuda/tensor_ops.cu, a vectorized path for problems that normalize to one unit-stride
   dimension and a generic strided path; src/cuda/transform.cu, the tiled transpose of copies
   that swap the two innermost dimensions between a and y. */

cudnnStatus_t ocd_host_ewise_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                 size_t workspace_bytes);
const char *ocd_cuda_ewise_vec_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_ewise_vec_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                     size_t workspace_bytes);
const char *ocd_cuda_ewise_strided_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_ewise_strided_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                         size_t workspace_bytes);
const char *ocd_cuda_ewise_transpose_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_ewise_transpose_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                           size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_EWISE_H */
