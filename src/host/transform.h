/* transform.h: the host backend's padding and folding gather (src/host/transform.c), which
   serves cudnnTransformTensorEx and cudnnTransformFilter. */
#ifndef OCD_HOST_TRANSFORM_H
#define OCD_HOST_TRANSFORM_H

#include "core/transform.h"
#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs a struct ocd_fold; always applies. */
cudnnStatus_t ocd_host_fold_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_TRANSFORM_H */
