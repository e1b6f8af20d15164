/* activation_train.c: cudnnActivationBackward (libcudnn_ops_train), run through the activation
   table of ops_infer (ocd_activation_run).

   dx = alpha * dy * f'(.) + beta * dx. f' is taken from y for SIGMOID and TANH and from x for
   the other modes (activation.h), so each call reads two tensors and writes one; the pointer of
   the tensor a mode does not read may be NULL, its descriptor is still checked. cuDNN 8.2 rules
   implemented here: NOT_SUPPORTED when the dims or the data types of the tensors differ; BAD_PARAM
   when the call is in place (dx == dy, or dx on the one of x and y the mode reads) with different
   strides; dx on the tensor the mode does not read is accepted whatever its layout
   (ocd_check_alias). The 8.2 text also lists "the strides of x and dx (or y and dy) differ" under
   NOT_SUPPORTED; opencudnn serves those layouts instead, as it serves any legal layout. */
#include "ops/activation.h"

#include "core/argcheck.h"
#include "core/check.h"

cudnnStatus_t CUDNNWINAPI cudnnActivationBackward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc,
                                                  const void *alpha, const cudnnTensorDescriptor_t yDesc,
                                                  const void *y, const cudnnTensorDescriptor_t dyDesc,
                                                  const void *dy, const cudnnTensorDescriptor_t xDesc,
                                                  const void *x, const void *beta,
                                                  const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    OCD_LOG_API("handle=%p activationDesc=%p alpha=%p yDesc=%p y=%p dyDesc=%p dy=%p xDesc=%p x=%p beta=%p "
                "dxDesc=%p dx=%p",
                (void *)handle, (void *)activationDesc, alpha, (void *)yDesc, y, (void *)dyDesc, dy,
                (void *)xDesc, x, beta, (void *)dxDesc, dx);
    OCD_CHECK_HANDLE(handle);
    struct ocd_activation_problem p = {0};
    OCD_TRY(ocd_activation_get_standalone(activationDesc, &p.act));
    OCD_TRY(ocd_check_scaling(alpha, beta));
    struct ocd_tensor_view yv, dyv, xv, dxv;
    OCD_TRY(ocd_tensor_get(yDesc, "yDesc", &yv));
    OCD_TRY(ocd_tensor_get(dyDesc, "dyDesc", &dyv));
    OCD_TRY(ocd_tensor_get(xDesc, "xDesc", &xv));
    OCD_TRY(ocd_tensor_get(dxDesc, "dxDesc", &dxv));
    bool uses_y = ocd_act_uses_y(p.act.mode);
    OCD_TRY(ocd_check_data(uses_y ? y : x, uses_y ? "y" : "x"));
    OCD_TRY(ocd_check_data(dy, "dy"));
    OCD_TRY(ocd_check_data(dx, "dx"));
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_NOT_SUPPORTED, &yv, "yDesc", &dyv, "dyDesc"));
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_NOT_SUPPORTED, &xv, "xDesc", &dxv, "dxDesc"));
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_NOT_SUPPORTED, &yv, "yDesc", &xv, "xDesc"));
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_NOT_SUPPORTED, &yv, "yDesc", &dyv, "dyDesc"));
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_NOT_SUPPORTED, &xv, "xDesc", &dxv, "dxDesc"));
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_NOT_SUPPORTED, &yv, "yDesc", &xv, "xDesc"));
    OCD_TRY(ocd_check_alias(dx, &dxv, "dx", dy, &dyv, "dy", OCD_READ_SAME));
    OCD_TRY(ocd_check_alias(dx, &dxv, "dx", x, &xv, "x", uses_y ? OCD_READ_NONE : OCD_READ_SAME));
    OCD_TRY(ocd_check_alias(dx, &dxv, "dx", y, &yv, "y", uses_y ? OCD_READ_SAME : OCD_READ_NONE));
    OCD_TRY(ocd_check_float_type(&dxv, "dxDesc"));

    p.backward = true;
    ocd_map_io_set(&p.io, dxv.dtype, alpha, beta, uses_y ? y : x, dy, dx);
    const struct ocd_tensor_view *views[] = {uses_y ? &yv : &xv, &dyv, &dxv};
    ocd_dim_group_build(&p.g, 3, views, ~0u);
    struct ocd_check_call check;
    return ocd_activation_run_checked(handle, &p, ocd_activation_check(&check, &p, __func__, views), __func__);
}
