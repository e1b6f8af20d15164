/* conv_winograd.h: the CUDA backend's WINOGRAD and WINOGRAD_NONFUSED convolution entries
   (conv_winograd.cu), every direction cuDNN 8.2 has them in, on the plan of cnn/conv_winograd.h.
   C-callable: the registry is C.

   The _tc entries run the batched GEMM on tensor cores (half data: the transformed operands in
   half, fp32 accumulation; float data: TF32) for the 4x4 tiles, so FMA_MATH skips them; the
   plain entries compute fp32. applies: the plan's reasons, cuBLAS missing, sizes beyond cuBLAS's int extents. */
#ifndef OCD_CUDA_CONV_WINOGRAD_H
#define OCD_CUDA_CONV_WINOGRAD_H

#include "cnn/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *ocd_cuda_conv_winograd_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_conv_winograd_tc_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_conv_winograd_nonfused_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_conv_winograd_nonfused_tc_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_conv_winograd_workspace(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_conv_winograd_nonfused_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_conv_winograd(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_conv_winograd_tc(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_conv_winograd_nonfused(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_conv_winograd_nonfused_tc(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CONV_WINOGRAD_H */
