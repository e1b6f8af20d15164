/* tensor_ops.h: the CUDA elementwise engine (src/cuda/tensor_ops.cu): a vectorized path for
   problems that normalize to one unit-stride dimension, and a generic strided path. Both take a
   struct ocd_ewise (core/ewise.h). */
#ifndef OCD_CUDA_TENSOR_OPS_H
#define OCD_CUDA_TENSOR_OPS_H

#include "core/ewise.h"

#ifdef __cplusplus
extern "C" {
#endif

const char *ocd_cuda_ewise_vec_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_ewise_vec_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                     size_t workspace_bytes);
const char *ocd_cuda_ewise_strided_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_ewise_strided_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                         size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_TENSOR_OPS_H */
