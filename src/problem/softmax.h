/* softmax.h: the problem the softmax kernels take, for both directions, and the declarations of
   the softmax implementations.

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
#ifndef OCD_PROBLEM_SOFTMAX_H
#define OCD_PROBLEM_SOFTMAX_H

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

/* ---- implementations (table in src/ops/softmax.c) ------------------------------------------- */
cudnnStatus_t ocd_host_softmax(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
const char *ocd_cuda_softmax_rows_packed_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_softmax_rows_lanes_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_softmax_rows_warp_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_softmax_rows_block_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_softmax_cols_regs_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_softmax_tile_vec_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_softmax_tile_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_softmax_rows_packed(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_softmax_rows_lanes(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_softmax_rows_warp(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_softmax_rows_block(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_softmax_cols_regs(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_softmax_tile_vec(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_softmax_tile(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_softmax_generic(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_SOFTMAX_H */
