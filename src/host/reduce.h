/* reduce.h: the host backend's reduction (src/host/reduce.c), which serves cudnnReduceTensor. */
#ifndef OCD_HOST_REDUCE_H
#define OCD_HOST_REDUCE_H

#include "core/handle.h"
#include "core/reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs a struct ocd_reduce (its plan's workspace is in problem->partials); always applies. */
cudnnStatus_t ocd_host_reduce_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                  size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_REDUCE_H */
