/* conv.h (host): the host backend's convolution kernels, entries of the tables in
   src/cnn/conv_registry.c. Each takes a struct ocd_conv_problem (src/cnn/conv.h) and serves every
   direction (p->dir), every data-type configuration and every layout a view can describe.

   conv_direct.c: plain loops in double, the reference entry of every table; Im2Col; the bias
   gradient. conv_gemm.c: the shared packed GEMM engine (gemm_engine.h) in the three strategies
   that the cuDNN algorithm enums name: implicit (index tables built per block, no workspace),
   implicit precomputed (index tables for the whole problem in the workspace) and explicit (the
   gathered operand materialised in the workspace, im2col style). conv_winograd.c: WINOGRAD and
   WINOGRAD_NONFUSED (plan: cnn/conv_winograd.h), transforms around a batched GEMM of the packed
   engine. conv_fft.c: FFT and FFT_TILING on the built-in FFT engine (conv_fft_engine.c).
   conv_cblas.c (built when a CBLAS library was found): the forward im2col + CBLAS GEMM, for the
   NCHW-like float and double problems where it wins its race with the packed engine. */
#ifndef OCD_HOST_CONV_H
#define OCD_HOST_CONV_H

#include "cnn/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

cudnnStatus_t ocd_host_conv_direct(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

cudnnStatus_t ocd_host_conv_gemm_implicit(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_conv_gemm_precomp(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
size_t ocd_host_conv_gemm_precomp_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_host_conv_gemm_explicit(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
size_t ocd_host_conv_gemm_explicit_workspace(cudnnHandle_t handle, const void *problem);

/* conv_winograd.c: WINOGRAD (F(2x2, 3x3)) and WINOGRAD_NONFUSED (F(4x4, 3x3), F(2x2, 5x5); the
   filter gradient F(3x3, 2x2), F(5x5, 2x2)). */
const char *ocd_host_conv_winograd_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_host_conv_winograd_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_host_conv_winograd(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
const char *ocd_host_conv_winograd_nonfused_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_host_conv_winograd_nonfused_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_host_conv_winograd_nonfused(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

/* conv_fft.c: FFT and FFT_TILING (plan: cnn/conv_fft.h). */
const char *ocd_host_conv_fft_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_host_conv_fft_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_host_conv_fft(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
const char *ocd_host_conv_fft_tiling_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_host_conv_fft_tiling_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_host_conv_fft_tiling(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

#ifdef OCD_HAVE_CBLAS
const char *ocd_host_conv_cblas_applies(cudnnHandle_t handle, const void *problem);
enum ocd_conv_race ocd_host_conv_cblas_race(cudnnHandle_t handle, const struct ocd_conv_problem *p);
size_t ocd_host_conv_cblas_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_host_conv_cblas(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

cudnnStatus_t ocd_host_conv_im2col(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_conv_bias_grad(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

/* Stores one result of a convolution at scalar offset `off` of the destination of p, applying
   alpha/beta or, for the fused forward, alpha, z, the bias of output channel `channel` and the
   activation. beta == 0 never reads the destination. */
void ocd_host_conv_store(const struct ocd_conv_problem *p, int64_t off, int64_t channel, double acc);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_CONV_H */
