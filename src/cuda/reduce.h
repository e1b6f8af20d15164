/* reduce.h: the CUDA reduction (src/cuda/reduce.cu), which serves cudnnReduceTensor. */
#ifndef OCD_CUDA_REDUCE_H
#define OCD_CUDA_REDUCE_H

#include "core/reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs a struct ocd_reduce (its plan's workspace is in problem->partials); always applies. */
cudnnStatus_t ocd_cuda_reduce_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                  size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_REDUCE_H */
