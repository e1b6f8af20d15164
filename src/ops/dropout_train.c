/* dropout_train.c: cudnnDropoutBackward (ops_train).

   It applies the mask the forward call left in the reserve space, with the same scale:
   dx = dy / (1 - p) where the forward kept the element, 0 elsewhere. The checks are the
   forward's (ocd_dropout_problem_init in dropout.c), as the documentation lists the same ones. */
#include "ops/dropout.h"

static const struct ocd_impl backward_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:dropout_bwd_vec4", OCD_BACKEND_CUDA, ocd_dropout_applies_vec4, NULL,
                   ocd_cuda_dropout_bwd_vec4),
    OCD_IMPL_ENTRY("cuda:dropout_bwd_strided", OCD_BACKEND_CUDA, ocd_dropout_applies, NULL,
                   ocd_cuda_dropout_bwd_strided),
#endif
    OCD_IMPL_ENTRY("host:dropout_bwd", OCD_BACKEND_HOST, ocd_dropout_applies, NULL, ocd_host_dropout_bwd),
};

cudnnStatus_t CUDNNWINAPI cudnnDropoutBackward(cudnnHandle_t handle,
                                               const cudnnDropoutDescriptor_t dropoutDesc,
                                               const cudnnTensorDescriptor_t dydesc, const void *dy,
                                               const cudnnTensorDescriptor_t dxdesc, void *dx,
                                               void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p dropoutDesc=%p dydesc=%p dy=%p dxdesc=%p dx=%p reserveSpace=%p "
                "reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)dropoutDesc, (void *)dydesc, dy, (void *)dxdesc, dx,
                reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_dropout_problem p;
    OCD_TRY(ocd_dropout_problem_init(handle, dropoutDesc, dydesc, dy, dxdesc, dx, reserveSpace,
                                     reserveSpaceSizeInBytes, false, &p));
    return ocd_dropout_backward_run(handle, &p, "cudnnDropoutBackward");
}

cudnnStatus_t ocd_dropout_backward_run(cudnnHandle_t handle, const struct ocd_dropout_problem *p, const char *op)
{
    if (!ocd_check_enabled()) return ocd_impl_run(handle, backward_impls, OCD_ARRAY_LEN(backward_impls), p, op);
    struct ocd_check_call call;
    ocd_dropout_describe(p, false, op, &call);
    return ocd_impl_run_checked(handle, backward_impls, OCD_ARRAY_LEN(backward_impls), p, &call);
}
