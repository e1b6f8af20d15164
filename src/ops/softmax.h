/* softmax.h: the problem the softmax kernels take, for both directions.

   A softmax runs over slices: INSTANCE mode has one slice per image n (all of C, D, H, W),
   CHANNEL mode one per position (n, d, h, w) (the C values there). The problem keeps two dim
   groups (core/dimgroup.h) over the same tensors: `slice`, the dims one softmax reduces over, and
   `batch`, the dims that number the slices; the order in which either is walked does not matter.
   Math, with m the slice's maximum and S = sum over the slice of e^(x - m):
     forward  FAST, ACCURATE   y = e^(x - m) / S       (FAST is computed as ACCURATE: same value,
              LOG              y = x - m - log S         no overflow)
     backward FAST, ACCURATE   dx = y (dy - sum(dy y))
              LOG              dx = dy - e^y sum(dy)
   each result blended as alpha * r + beta * dst. */
#ifndef OCD_OPS_SOFTMAX_H
#define OCD_OPS_SOFTMAX_H

#include "core/dimgroup.h"
#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forward: src[0] = x, dst = y. Backward: src[0] = y, src[1] = dy, dst = dx (io), walked by the
   groups in that order. */
struct ocd_softmax_problem {
    bool log; /* CUDNN_SOFTMAX_LOG */
    bool backward;
    struct ocd_map_io io;
    struct ocd_dim_group slice, batch;
};

/* Runs a validated problem through the implementation table (softmax.c); exported for
   cudnnSoftmaxBackward in ops_train. */
cudnnStatus_t ocd_softmax_run(cudnnHandle_t handle, const struct ocd_softmax_problem *p, const char *op);

/* ocd_softmax_run under OPENCUDNN_CHECK (core/check.h) when it is on: views as the problem's
   groups walk them; algo and mode for the replay string (the benchmark's softmaxfwd/bwd). */
cudnnStatus_t ocd_softmax_run_checked(cudnnHandle_t handle, const struct ocd_softmax_problem *p, const char *op,
                                      const struct ocd_tensor_view *const views[], cudnnSoftmaxAlgorithm_t algo,
                                      cudnnSoftmaxMode_t mode);

/* Validates what both directions take: the algorithm and mode enumerants (BAD_PARAM). */
cudnnStatus_t ocd_softmax_check_enums(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode);
/* Fills the slice and batch groups of p for the mode, over views[0..count-1] (the sources, then
   the destination), which have the same dims. */
void ocd_softmax_groups(struct ocd_softmax_problem *p, cudnnSoftmaxMode_t mode, int count,
                        const struct ocd_tensor_view *const views[]);

/* Implementations. */
cudnnStatus_t ocd_softmax_run_host(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
const char *ocd_softmax_applies_cuda_rows_packed(cudnnHandle_t handle, const void *problem);
const char *ocd_softmax_applies_cuda_rows_lanes(cudnnHandle_t handle, const void *problem);
const char *ocd_softmax_applies_cuda_rows_warp(cudnnHandle_t handle, const void *problem);
const char *ocd_softmax_applies_cuda_rows_block(cudnnHandle_t handle, const void *problem);
const char *ocd_softmax_applies_cuda_cols_regs(cudnnHandle_t handle, const void *problem);
const char *ocd_softmax_applies_cuda_tile_vec(cudnnHandle_t handle, const void *problem);
const char *ocd_softmax_applies_cuda_tile(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_softmax_run_cuda_rows_packed(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_softmax_run_cuda_rows_lanes(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_softmax_run_cuda_rows_warp(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_softmax_run_cuda_rows_block(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_softmax_run_cuda_cols_regs(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_softmax_run_cuda_tile_vec(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_softmax_run_cuda_tile(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_softmax_run_cuda_generic(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_SOFTMAX_H */
