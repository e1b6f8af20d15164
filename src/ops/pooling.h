/* pooling.h: the pooling descriptor and the entry-layer helpers both directions share (the
   descriptor checks, the run through the implementation table). The problem, the window math and
   the implementations are in problem/pooling.h. */
#ifndef OCD_OPS_POOLING_H
#define OCD_OPS_POOLING_H

#include "problem/pooling.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_POOL_MAX_DIMS (CUDNN_DIM_MAX - 2) /* spatial dims a descriptor can hold */

struct cudnnPoolingStruct {
    struct ocd_object obj;
    bool set;
    cudnnPoolingMode_t mode;
    cudnnNanPropagation_t nan_opt;
    int nb_dims; /* spatial */
    int window[OCD_POOL_MAX_DIMS], pad[OCD_POOL_MAX_DIMS], stride[OCD_POOL_MAX_DIMS];
};

/* A live, set pooling descriptor; BAD_PARAM otherwise. For cudnnPoolingBackward. */
cudnnStatus_t ocd_pooling_get(cudnnPoolingDescriptor_t desc, const char *name, const struct cudnnPoolingStruct **out);

/* Checks the descriptor against x's and y's views and fills everything of p but the pointers and
   the direction. The rules both directions share: ranks match the descriptor (BAD_PARAM), N and C
   of x and y agree (BAD_PARAM), at most 3 spatial dims and a floating-point type (NOT_SUPPORTED). */
cudnnStatus_t ocd_pooling_prepare(struct ocd_pooling_problem *p, const struct cudnnPoolingStruct *desc,
                                  const struct ocd_tensor_view *x, const struct ocd_tensor_view *y,
                                  const void *alpha, const void *beta);

/* Runs a validated problem through the implementation table (pooling.c). */
cudnnStatus_t ocd_pooling_run(cudnnHandle_t handle, const struct ocd_pooling_problem *p, const char *op);

/* ocd_pooling_run under OPENCUDNN_CHECK (core/check.h) when it is on; the views of x and y (for
   the backward, dx and dy share them), the descriptor for the replay string. */
cudnnStatus_t ocd_pooling_run_checked(cudnnHandle_t handle, const struct ocd_pooling_problem *p, const char *op,
                                      const struct ocd_tensor_view *x, const struct ocd_tensor_view *y,
                                      const struct cudnnPoolingStruct *desc);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_POOLING_H */
