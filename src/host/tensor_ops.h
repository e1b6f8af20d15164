/* tensor_ops.h: the host backend's elementwise engine (src/host/tensor_ops.c), which serves
   cudnnSetTensor, cudnnScaleTensor, cudnnAddTensor, cudnnOpTensor and cudnnTransformTensor. */
#ifndef OCD_HOST_TENSOR_OPS_H
#define OCD_HOST_TENSOR_OPS_H

#include "core/ewise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs a struct ocd_ewise (any op, types, strides); always applies. */
cudnnStatus_t ocd_host_ewise_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                 size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_TENSOR_OPS_H */
