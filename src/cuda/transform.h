/* transform.h: the tiled transpose entry of the elementwise table (core/ewise.h), from the CUDA
   layout kernels (src/cuda/transform.cu; their padding and folding gather is declared in
   problem/transform.h). */
#ifndef OCD_CUDA_TRANSFORM_H
#define OCD_CUDA_TRANSFORM_H

#include "core/ewise.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *ocd_cuda_transpose_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_transpose_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                     size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_TRANSFORM_H */
