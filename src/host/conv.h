/* conv.h (host): what the host backend's convolution kernels share. Their entry functions,
   entries of the tables in src/cnn/conv_registry.c, are declared in problem/conv.h; each takes a
   struct ocd_conv_problem and serves every direction (p->dir), every data-type configuration and
   every layout a view can describe.

   conv_direct.c: plain loops in double, the reference entry of every table; Im2Col; the bias
   gradient. conv_gemm.c: the shared packed GEMM engine (gemm_engine.h) in the three strategies
   that the cuDNN algorithm enums name: implicit (index tables built per block, no workspace),
   implicit precomputed (index tables for the whole problem in the workspace) and explicit (the
   gathered operand materialised in the workspace, im2col style). conv_winograd.c: WINOGRAD and
   WINOGRAD_NONFUSED (plan: problem/conv_winograd.h), transforms around a batched GEMM of the packed
   engine. conv_fft.c: FFT and FFT_TILING on the built-in FFT engine (conv_fft_engine.c).
   conv_cblas.c (built when a CBLAS library was found): the forward im2col + CBLAS GEMM, for the
   NCHW-like float and double problems where it wins its race with the packed engine. */
#ifndef OCD_HOST_CONV_H
#define OCD_HOST_CONV_H

#include "problem/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stores one result of a convolution at scalar offset `off` of the destination of p, applying
   alpha/beta or, for the fused forward, alpha, z, the bias of output channel `channel` and the
   activation; then a backward data's ReLU gradient (relu_grad). beta == 0 never reads the
   destination. */
void ocd_host_conv_store(const struct ocd_conv_problem *p, int64_t off, int64_t channel, double acc);

/* Runs p by the implicit GEMM strategy of conv_gemm.c (planned and run at once): the batched
   GEMM of the Winograd entries. */
cudnnStatus_t ocd_host_conv_gemm_implicit(const struct ocd_conv_problem *p);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_CONV_H */
