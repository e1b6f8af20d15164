/* activation.c: the activation descriptor, cudnnActivationForward, and the implementation table
   that both directions run through (cudnnActivationBackward lives in activation_train.c).

   Both directions are one elementwise walk over a dim group (dimgroup.h): a packed tensor of any
   layout is a flat array, which the CUDA entries read with 16-byte vectors; every other legal
   layout, x and y with different strides included, goes to a strided path. cuDNN 8.2 rules
   implemented here: IDENTITY "does not work with cudnnActivationForward() or
   cudnnActivationBackward()" (BAD_PARAM, as an invalid mode for them); BAD_PARAM when the dims or
   the data types of input and output differ, or when the call is in place (x == y) with
   different strides. Beyond the text, the forward takes plain INT8 data (oneDNN's s8 eltwise
   makes the call on NVIDIA's library); the backward stays floating-point only. */
#include "ops/activation.h"

#include "core/argcheck.h"
#include "core/check.h"
#include "core/impl.h"

#include <stddef.h>
#include <stdio.h>

/* ---- the descriptor ------------------------------------------------------------------------- */

/* Private to this file: other ops go through core/activation_desc.h. A created descriptor is
   usable as it is (the zeroed SIGMOID, CUDNN_NOT_PROPAGATE_NAN, coef 0, swish beta 1), so there is
   no "never set" state. */
struct cudnnActivationStruct {
    struct ocd_object obj;
    struct ocd_activation_params act;
};

static cudnnStatus_t check_live(cudnnActivationDescriptor_t desc, const char *name)
{
    if (!ocd_object_alive(OCD_OBJ_ACTIVATION, desc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name,
                        desc == NULL ? "NULL" : "not a live activation descriptor");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_activation_params(cudnnActivationDescriptor_t desc, const char *name,
                                    struct ocd_activation_params *out)
{
    OCD_TRY(check_live(desc, name));
    *out = desc->act;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_activation_set_params(cudnnActivationDescriptor_t desc, const char *name,
                                        const struct ocd_activation_params *in)
{
    OCD_TRY(check_live(desc, name));
    desc->act = *in;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_activation_get_standalone(cudnnActivationDescriptor_t desc, struct ocd_activation_params *out)
{
    OCD_TRY(ocd_activation_params(desc, "activationDesc", out));
    if (out->mode == CUDNN_ACTIVATION_IDENTITY)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "CUDNN_ACTIVATION_IDENTITY is only for the fused convolution");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *activationDesc)
{
    OCD_LOG_API("activationDesc=%p", (void *)activationDesc);
    if (activationDesc == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "activationDesc is NULL");
    cudnnActivationDescriptor_t d;
    OCD_TRY(ocd_object_create(OCD_OBJ_ACTIVATION, sizeof *d, (void **)&d));
    /* Zeroed: SIGMOID, CUDNN_NOT_PROPAGATE_NAN, coef 0; swish's beta defaults to 1 (plain swish). */
    d->act.swish_beta = 1.0;
    *activationDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t activationDesc)
{
    OCD_LOG_API("activationDesc=%p", (void *)activationDesc);
    if (activationDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_ACTIVATION, activationDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnSetActivationDescriptor(cudnnActivationDescriptor_t activationDesc,
                                                       cudnnActivationMode_t mode,
                                                       cudnnNanPropagation_t reluNanOpt, double coef)
{
    OCD_LOG_API("activationDesc=%p mode=%d reluNanOpt=%d coef=%g", (void *)activationDesc, (int)mode,
                (int)reluNanOpt, coef);
    OCD_CHECK_OBJECT(OCD_OBJ_ACTIVATION, activationDesc);
    if ((unsigned)mode > CUDNN_ACTIVATION_SWISH)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mode %d is not a cudnnActivationMode_t", (int)mode);
    if (reluNanOpt != CUDNN_NOT_PROPAGATE_NAN && reluNanOpt != CUDNN_PROPAGATE_NAN)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "reluNanOpt %d is not a cudnnNanPropagation_t", (int)reluNanOpt);
    activationDesc->act.mode = mode;
    activationDesc->act.nan_opt = reluNanOpt;
    activationDesc->act.coef = coef;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetActivationDescriptor(const cudnnActivationDescriptor_t activationDesc,
                                                       cudnnActivationMode_t *mode,
                                                       cudnnNanPropagation_t *reluNanOpt, double *coef)
{
    OCD_LOG_API("activationDesc=%p", (void *)activationDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_ACTIVATION, activationDesc);
    if (mode == NULL || reluNanOpt == NULL || coef == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *mode = activationDesc->act.mode;
    *reluNanOpt = activationDesc->act.nan_opt;
    *coef = activationDesc->act.coef;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t activationDesc,
                                                                double swish_beta)
{
    OCD_LOG_API("activationDesc=%p swish_beta=%g", (void *)activationDesc, swish_beta);
    OCD_CHECK_OBJECT(OCD_OBJ_ACTIVATION, activationDesc);
    activationDesc->act.swish_beta = swish_beta;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetActivationDescriptorSwishBeta(cudnnActivationDescriptor_t activationDesc,
                                                                double *swish_beta)
{
    OCD_LOG_API("activationDesc=%p", (void *)activationDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_ACTIVATION, activationDesc);
    if (swish_beta == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "swish_beta is NULL");
    *swish_beta = activationDesc->act.swish_beta;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the implementation table ----------------------------------------------------------------- */

static const struct ocd_impl activation_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:activation_flat_vec16", OCD_BACKEND_CUDA, ocd_cuda_activation_vec_applies, NULL,
                   ocd_cuda_activation_vec),
    OCD_IMPL_ENTRY("cuda:activation_strided", OCD_BACKEND_CUDA, NULL, NULL,
                   ocd_cuda_activation_strided),
#endif
    OCD_IMPL_ENTRY("host:activation_runs", OCD_BACKEND_HOST, NULL, NULL, ocd_host_activation),
};

cudnnStatus_t ocd_activation_run(cudnnHandle_t handle, const struct ocd_activation_problem *p, const char *op)
{
    return ocd_impl_run(handle, activation_impls, OCD_ARRAY_LEN(activation_impls), p, op);
}

struct ocd_check_call *ocd_activation_check(struct ocd_check_call *call, const struct ocd_activation_problem *p,
                                            const char *op, const struct ocd_tensor_view *const views[])
{
    if (!ocd_check_enabled()) return NULL;
    *call = (struct ocd_check_call){.op = op, .problem_size = sizeof *p};
    ocd_check_map_io(call, offsetof(struct ocd_activation_problem, io), p->backward ? 2 : 1, views);
    const struct ocd_tensor_view *x = views[p->backward ? 2 : 0];
    char spec[96];
    ocd_check_tensor_spec(x, spec, sizeof spec);
    static const char *const modes[] = {"sigmoid", "relu", "tanh", "clipped_relu", "elu", "identity", "swish"};
    snprintf(call->replay, sizeof call->replay, "op=%s mode=%s dt=%s x=%s", p->backward ? "actbwd" : "actfwd",
             (unsigned)p->act.mode < OCD_ARRAY_LEN(modes) ? modes[p->act.mode] : "?", ocd_check_dtype_name(x->dtype),
             spec);
    return call;
}

cudnnStatus_t ocd_activation_run_checked(cudnnHandle_t handle, const struct ocd_activation_problem *p,
                                         const struct ocd_check_call *call, const char *op)
{
    if (call == NULL) return ocd_activation_run(handle, p, op);
    return ocd_impl_run_checked(handle, activation_impls, OCD_ARRAY_LEN(activation_impls), p, call);
}

/* ---- forward ---------------------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc,
                                                 const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                                 const void *x, const void *beta,
                                                 const cudnnTensorDescriptor_t yDesc, void *y)
{
    OCD_LOG_API("handle=%p activationDesc=%p alpha=%p xDesc=%p x=%p beta=%p yDesc=%p y=%p", (void *)handle,
                (void *)activationDesc, alpha, (void *)xDesc, x, beta, (void *)yDesc, y);
    OCD_CHECK_HANDLE(handle);
    struct ocd_activation_problem p = {0};
    OCD_TRY(ocd_activation_get_standalone(activationDesc, &p.act));
    OCD_TRY(ocd_check_scaling(alpha, beta));
    struct ocd_tensor_view xv, yv;
    OCD_TRY(ocd_check_map_any_type(xDesc, x, yDesc, y, &xv, &yv));
    /* int8 (plain, any layout) too, forward only: oneDNN's eltwise runs s8 data through this call
       on NVIDIA's library; computed in floating point, rounded to nearest even and saturated */
    if (!(xv.dtype == CUDNN_DATA_INT8 && xv.vect == 1)) OCD_TRY(ocd_check_float_type(&xv, "xDesc"));

    ocd_map_io_set(&p.io, xv.dtype, alpha, beta, x, NULL, y);
    const struct ocd_tensor_view *views[] = {&xv, &yv};
    ocd_dim_group_build(&p.g, 2, views, ~0u);
    struct ocd_check_call check;
    return ocd_activation_run_checked(handle, &p, ocd_activation_check(&check, &p, __func__, views), __func__);
}
