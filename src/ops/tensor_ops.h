/* tensor_ops.h: what the API files of the tensor operations share (src/ops/tensor_ops.c,
   transform.c, reduce.c): the elementwise implementation table and the argument checks they
   all make. */
#ifndef OCD_OPS_TENSOR_OPS_H
#define OCD_OPS_TENSOR_OPS_H

#include "problem/ewise.h"
#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BAD_PARAM, logged with the argument's name, when a pointer argument is NULL. */
#define OCD_CHECK_NOT_NULL(ptr)                                                                 \
    do {                                                                                        \
        if ((ptr) == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", #ptr);         \
    } while (0)

/* Runs an elementwise problem through the elementwise implementation table (op names the API
   function in the log). */
cudnnStatus_t ocd_ewise_run(cudnnHandle_t handle, const struct ocd_ewise *e, const char *op);

/* y = the bit pattern fill (its element's bytes, little-endian) over the view yv. */
cudnnStatus_t ocd_ewise_fill(cudnnHandle_t handle, const struct ocd_tensor_view *yv, void *y, uint64_t fill,
                             const char *op);

/* y = alpha * x + beta * y between views of the same dims (x may be broadcast along dims of
   extent 1): cudnnAddTensor and the layout-changing transforms. alpha and beta are the API's
   scaling pointers. */
cudnnStatus_t ocd_ewise_copy(cudnnHandle_t handle, const void *alpha, const struct ocd_tensor_view *xv, const void *x,
                             const void *beta, const struct ocd_tensor_view *yv, void *y, const char *op);

/* The argument checks of a call y = alpha * f(x) + beta * y (cudnnAddTensor,
   cudnnTransformTensor): a live handle, both descriptors live and set (their views are returned),
   y's elements apart (x, only read, may have elements that share memory) and no NULL pointer;
   BAD_PARAM, logged with the argument's name, otherwise. Either may have negative strides. */
cudnnStatus_t ocd_check_blend_args(cudnnHandle_t handle, const void *alpha, cudnnTensorDescriptor_t xDesc,
                                   const char *x_name, const void *x, const void *beta,
                                   cudnnTensorDescriptor_t yDesc, const char *y_name, const void *y,
                                   struct ocd_tensor_view *xv, struct ocd_tensor_view *yv);

/* NOT_SUPPORTED, logged, for a type no tensor operation computes with (INT64, a backend-API
   type): every other type of a set descriptor is served. */
cudnnStatus_t ocd_check_compute_type(const struct ocd_tensor_view *v, const char *name);

/* BAD_PARAM, logged, unless each dimension of `small` equals big's or is 1 (same rank). */
cudnnStatus_t ocd_check_broadcast(const struct ocd_tensor_view *small, const char *small_name,
                                  const struct ocd_tensor_view *big, const char *big_name);

/* BAD_PARAM, logged, when the byte ranges the two views can touch from x and y intersect. */
cudnnStatus_t ocd_check_no_overlap(const struct ocd_tensor_view *xv, const void *x,
                                   const struct ocd_tensor_view *yv, const void *y);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_TENSOR_OPS_H */
