/* conv_igemm.h: the tensor-core convolution entries of the CUDA backend, as the registry
   (cnn/conv_registry.c) sees them: the implicit-GEMM kernel (conv_igemm.cu) in several tile
   configurations, and GEMMs through cuBLAS (conv_cublas.cu). C and C++.

   Entry functions follow struct ocd_impl (core/impl.h); `problem` is a struct ocd_conv_problem.
   The tile configurations are one X-macro, so that the kernel instances, their plans and the
   names in the tables come from the same row. */
#ifndef OCD_CUDA_CONV_IGEMM_H
#define OCD_CUDA_CONV_IGEMM_H

#include "cnn/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tile configurations: X(index, BM, BN, warps along M, warps along N, stages), largest first.
   The tables list them in this order; a large tile declines problems it would leave the GPU
   half idle on (conv_igemm.cu, tile_rejects), so the first that applies is the heuristic's pick. */
#define OCD_IGEMM_TILES(X)                                                                      \
    X(0, 128, 128, 2, 4, 3)                                                                     \
    X(1, 128, 64, 2, 2, 4)                                                                      \
    X(2, 64, 64, 2, 2, 4)
#define OCD_IGEMM_NTILES 3

/* "cuda:fwd_igemm_tc_128x128x32_s3": direction, variant (tc: fp16 and bf16 with a K tile of 32;
   tf32: fp32 data with a K tile of 16), BM x BN x BK, stages. */
#define OCD_IGEMM_NAME(dir, variant, bk, bm, bn, st) "cuda:" dir "_igemm_" variant "_" #bm "x" #bn "x" #bk "_s" #st

#define OCD_IGEMM_DECLARE(i, bm, bn, wm, wn, st)                                                \
    const char *ocd_cuda_conv_igemm_applies_tc_##i(cudnnHandle_t handle, const void *problem);  \
    const char *ocd_cuda_conv_igemm_applies_tf32_##i(cudnnHandle_t handle, const void *problem); \
    size_t ocd_cuda_conv_igemm_workspace_##i(cudnnHandle_t handle, const void *problem);        \
    cudnnStatus_t ocd_cuda_conv_igemm_run_##i(cudnnHandle_t handle, const void *problem, void *workspace, \
                                              size_t workspace_bytes);
OCD_IGEMM_TILES(OCD_IGEMM_DECLARE)
#undef OCD_IGEMM_DECLARE

/* cuBLAS entries (conv_cublas.cu), for every direction. "gemm1x1" applies to 1x1 filters with
   unit stride and no padding, where the activation itself is the GEMM operand (no workspace);
   "im2col_gemm" applies to the rest and expands the input (or collects the data gradient) in the
   workspace. The _tc functions use the tensor cores (fp16, bf16, and fp32 as TF32); the others
   compute fp32 and double data in plain precision. */
const char *ocd_cuda_conv_gemm1x1_applies_tc(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_conv_gemm1x1_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_conv_im2col_gemm_applies_tc(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_conv_im2col_gemm_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_conv_cublas_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_conv_cublas_run_tc(cudnnHandle_t handle, const void *problem, void *workspace,
                                          size_t workspace_bytes);
cudnnStatus_t ocd_cuda_conv_cublas_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                       size_t workspace_bytes);

/* Backward data with a stride, phase by phase (conv_igemm.cu says how); _tc for fp16 and bf16,
   _tf32 for fp32 data. */
const char *ocd_cuda_conv_igemm_phases_applies_tc(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_conv_igemm_phases_applies_tf32(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_conv_igemm_phases_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_conv_igemm_phases_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                             size_t workspace_bytes);

/* True when the implicit GEMM's smallest tile (fp16/bf16, or fp32 as TF32) serves the problem
   in one launch, without workspace: the cuBLAS 1x1 entry then leaves it small problems
   (conv_cublas.cu says why). */
bool ocd_cuda_conv_igemm_serves(cudnnHandle_t handle, const struct ocd_conv_problem *problem);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CONV_IGEMM_H */
