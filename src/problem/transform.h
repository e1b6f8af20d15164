/* transform.h: the padding and folding problem of cudnnTransformTensorEx and
   cudnnTransformFilter, as every backend's gather kernel takes it, and the declarations of the
   gather kernels.

   The destination is computed element by element from where it comes from (a gather), so each
   element is written exactly once, padding zeros included:
   - fold (and padding alone): the source is first zero-padded (padBefore/padAfter on every
     dimension, N and C included), then each spatial extent is cut into blocks of its fold
     factor f (the last block zero-filled). Destination element (n, c', x...) with
     c' = blk * Cp + cp takes padded source element (n, cp, x * f + t...), where Cp is the
     padded channel count and t... is blk written row-major over the fold factors.
   - unfold is the exact inverse, then the padding is cut away: destination (n, c, x...) takes
     source (n + pb0, blk * Cp + c + pb1, (x + pb) / f...) with blk from ((x + pb) % f...).
   A destination element whose source lies in the padding is 0. */
#ifndef OCD_PROBLEM_TRANSFORM_H
#define OCD_PROBLEM_TRANSFORM_H

#include "core/handle.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_fold {
    struct ocd_tensor_view src, dst; /* the same rank; dims[1] of a filter is C as for tensors */
    const void *x;
    void *y;
    bool unfold;
    int64_t pad_before[OCD_MAX_DIMS]; /* per dimension */
    int64_t factor[OCD_MAX_DIMS];     /* per dimension: 1 for N and C and unfolded dims */
    int64_t padded_c;                 /* Cp: channels of the padded, unfolded tensor */
    double alpha, beta;               /* y = alpha * gathered + beta * y (beta == 0: not read) */
};

/* Runs f on the handle's backend (the gather kernels below), for callers inside the library: the
   backend API's asymmetrically padded convolutions pad x into their workspace, or crop dx out of
   it (unfold with every factor 1). */
cudnnStatus_t ocd_fold_run(cudnnHandle_t handle, const struct ocd_fold *f, const char *op);

/* ---- implementations (table in src/ops/transform.c): each always applies ------------------- */
cudnnStatus_t ocd_host_fold(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_fold(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_TRANSFORM_H */
