/* conv_igemm.h: what the CUDA backend's tensor-core convolution files (conv_igemm.cu,
   conv_cublas.cu) share beyond their entries, which problem/conv.h declares with the tile
   configurations (one X-macro, so that the kernel instances, their plans and the names in the
   tables come from the same row). C and C++. */
#ifndef OCD_CUDA_CONV_IGEMM_H
#define OCD_CUDA_CONV_IGEMM_H

#include "problem/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True when the implicit GEMM's smallest tile (fp16/bf16, or fp32 as TF32) serves the problem
   in one launch, without workspace: the cuBLAS 1x1 entry then leaves it small problems
   (conv_cublas.cu says why). */
bool ocd_cuda_conv_igemm_serves(cudnnHandle_t handle, const struct ocd_conv_problem *problem);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CONV_IGEMM_H */
