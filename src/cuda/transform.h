/* transform.h: the CUDA layout kernels (src/cuda/transform.cu): the tiled transpose entry of
   the elementwise table (core/ewise.h), and the padding and folding gather (core/transform.h). */
#ifndef OCD_CUDA_TRANSFORM_H
#define OCD_CUDA_TRANSFORM_H

#include "core/ewise.h"
#include "core/transform.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *ocd_cuda_transpose_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_transpose_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                     size_t workspace_bytes);
cudnnStatus_t ocd_cuda_fold_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_TRANSFORM_H */
