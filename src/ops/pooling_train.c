/* pooling_train.c: cudnnPoolingBackward (libcudnn_ops_train), run through the pooling table of
   ops_infer (ocd_pooling_run).

   dx = alpha * g + beta * dx, where g gathers dy back over the windows (pooling.h). The maximum
   of each window is found again in x, so y is not read (its pointer may be NULL; its descriptor
   is checked), nor is x for the average modes. cuDNN 8.2 rules implemented here: BAD_PARAM when
   the dims or strides of y and dy differ, when the dims or strides of x and dx differ, when the
   data types of the four tensors differ; and, since each dx element is computed from many inputs,
   when dx overlaps dy, or x in the MAX modes. dx on x when averaging, or on y (never read), is
   accepted: frameworks pass y as dy and x as dx to the average backward, and NVIDIA's library
   runs it (ocd_check_alias). */
#include "ops/pooling.h"

#include "core/argcheck.h"

cudnnStatus_t CUDNNWINAPI cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                               const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
                                               const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                               const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                               const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    OCD_LOG_API("handle=%p poolingDesc=%p alpha=%p yDesc=%p y=%p dyDesc=%p dy=%p xDesc=%p x=%p beta=%p dxDesc=%p "
                "dx=%p",
                (void *)handle, (void *)poolingDesc, alpha, (void *)yDesc, y, (void *)dyDesc, dy, (void *)xDesc, x,
                beta, (void *)dxDesc, dx);
    OCD_CHECK_HANDLE(handle);
    const struct cudnnPoolingStruct *d;
    OCD_TRY(ocd_pooling_get(poolingDesc, "poolingDesc", &d));
    OCD_TRY(ocd_check_scaling(alpha, beta));
    struct ocd_tensor_view yv, dyv, xv, dxv;
    OCD_TRY(ocd_tensor_get(yDesc, "yDesc", &yv));
    OCD_TRY(ocd_tensor_get(dyDesc, "dyDesc", &dyv));
    OCD_TRY(ocd_tensor_get(xDesc, "xDesc", &xv));
    OCD_TRY(ocd_tensor_get(dxDesc, "dxDesc", &dxv));
    bool max = d->mode == CUDNN_POOLING_MAX || d->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    if (max) OCD_TRY(ocd_check_data(x, "x"));
    OCD_TRY(ocd_check_data(dy, "dy"));
    OCD_TRY(ocd_check_data(dx, "dx"));
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_BAD_PARAM, &yv, "yDesc", &dyv, "dyDesc"));
    if (!ocd_view_same_strides(&yv, &dyv)) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the strides of yDesc and dyDesc differ");
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_BAD_PARAM, &xv, "xDesc", &dxv, "dxDesc"));
    if (!ocd_view_same_strides(&xv, &dxv)) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the strides of xDesc and dxDesc differ");
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_BAD_PARAM, &yv, "yDesc", &dyv, "dyDesc"));
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_BAD_PARAM, &xv, "xDesc", &dxv, "dxDesc"));
    OCD_TRY(ocd_check_alias(dx, &dxv, "dx", dy, &dyv, "dy", OCD_READ_MANY));
    OCD_TRY(ocd_check_alias(dx, &dxv, "dx", x, &xv, "x", max ? OCD_READ_MANY : OCD_READ_NONE));
    OCD_TRY(ocd_check_alias(dx, &dxv, "dx", y, &yv, "y", OCD_READ_NONE));
    OCD_TRY(ocd_check_float_type(&xv, "xDesc")); /* integer pooling is forward only */
    struct ocd_pooling_problem p;
    OCD_TRY(ocd_pooling_prepare(&p, d, &xv, &yv, alpha, beta));
    p.backward = true;
    p.x = x;
    p.dy = dy;
    p.dx = dx;
    return ocd_pooling_run_checked(handle, &p, __func__, &xv, &yv, d);
}
