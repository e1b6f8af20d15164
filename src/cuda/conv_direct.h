/* conv_direct.h: the CUDA backend's reference convolution kernels (conv_direct.cu), entries of the
   tables in src/cnn/conv_registry.c. C-callable: the registry is C. */
#ifndef OCD_CUDA_CONV_DIRECT_H
#define OCD_CUDA_CONV_DIRECT_H

#include "cnn/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Any direction, configuration and layout (struct ocd_conv_problem); one thread per element of
   the destination, accumulating in int (int8 configurations), double (double) or float. */
cudnnStatus_t ocd_cuda_conv_direct(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_conv_im2col(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_conv_bias_grad(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CONV_DIRECT_H */
