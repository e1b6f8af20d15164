/* activation.h: the activation problem, the math of each activation mode, and the declarations
   of the activation implementations.

   The math is written once, for host C (double) and CUDA (float or double, templated), so that
   every backend and every op that fuses an activation (convolution bias-activation, batch norm
   Ex, normalization) computes the same function with the same NaN rules:
     mode           forward f(x)                      backward, from v = y or x (ocd_act_uses_y)
     SIGMOID        1 / (1 + e^-x)                    dy * y * (1 - y)
     RELU           max(0, x)                         dy if x > 0, else 0
     TANH           tanh x                            dy * (1 - y^2)
     CLIPPED_RELU   min(max(0, x), coef)              dy if 0 < x < coef, else 0
     ELU            x if x > 0, else coef (e^x - 1)   dy if x > 0, else dy * coef * e^x
     SWISH          x * sigmoid(b x), b = swish beta  dy * (s + b x s (1 - s)), s = sigmoid(b x)
     IDENTITY       x                                 dy
   coef is ignored by the other modes: the 8.2 text calls it an upper bound for RELU too, but
   frameworks pass coef = 0 with RELU, so honouring it would zero every output. The NaN option
   matters to RELU and CLIPPED_RELU only (the smooth modes propagate NaN by arithmetic):
   CUDNN_NOT_PROPAGATE_NAN maps a NaN input to 0, as fmax/fmin would, and gives it gradient 0;
   CUDNN_PROPAGATE_NAN keeps NaN in both directions. Gradients at the kinks (x == 0, x == coef)
   are 0, that of ELU at 0 is coef. */
#ifndef OCD_PROBLEM_ACTIVATION_H
#define OCD_PROBLEM_ACTIVATION_H

#include "core/activation_desc.h"
#include "core/dimgroup.h"
#include "core/handle.h"
#include "core/hostdev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True for the modes whose backward reads the forward output y rather than the input x. */
OCD_HOST_DEVICE bool ocd_act_uses_y(cudnnActivationMode_t mode)
{
    return mode == CUDNN_ACTIVATION_SIGMOID || mode == CUDNN_ACTIVATION_TANH;
}

/* One activation call. Forward: src[0] = x, dst = y. Backward: src[0] = y or x (ocd_act_uses_y),
   src[1] = dy, dst = dx (io), walked by the group in that order. */
struct ocd_activation_problem {
    struct ocd_activation_params act;
    bool backward;
    struct ocd_map_io io;
    struct ocd_dim_group g;
};

/* ---- implementations (table in src/ops/activation.c) ---------------------------------------- */
cudnnStatus_t ocd_host_activation(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
const char *ocd_cuda_activation_vec_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_activation_vec(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_activation_strided(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

/* ---- the math, for host (double) and device (float, double): see core/hostdev.h ---------- */

#define OCD_ACT_FN OCD_REAL_TEMPLATE OCD_HOST_DEVICE OCD_R

OCD_ACT_FN ocd_act_sigmoid(OCD_R x)
{
    return (OCD_R)1 / ((OCD_R)1 + exp(-x));
}

/* f(x) of a mode; coef and sb (swish beta) as described above. */
OCD_ACT_FN ocd_act_forward(int mode, bool propagate_nan, OCD_R coef, OCD_R sb, OCD_R x)
{
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return ocd_act_sigmoid(x);
    case CUDNN_ACTIVATION_RELU:
        if (isnan(x)) return propagate_nan ? x : (OCD_R)0;
        return x > (OCD_R)0 ? x : (OCD_R)0;
    case CUDNN_ACTIVATION_TANH: return tanh(x);
    case CUDNN_ACTIVATION_CLIPPED_RELU:
        if (isnan(x)) return propagate_nan ? x : (OCD_R)0;
        return x > (OCD_R)0 ? (x < coef ? x : coef) : (OCD_R)0 < coef ? (OCD_R)0 : coef;
    case CUDNN_ACTIVATION_ELU: return x > (OCD_R)0 ? x : coef * expm1(x);
    case CUDNN_ACTIVATION_SWISH: return x * ocd_act_sigmoid(sb * x);
    default: return x; /* IDENTITY */
    }
}

/* The gradient dy * f'(.) of a mode, from v = y (ocd_act_uses_y) or x. */
OCD_ACT_FN ocd_act_backward(int mode, bool propagate_nan, OCD_R coef, OCD_R sb, OCD_R v, OCD_R dy)
{
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return dy * v * ((OCD_R)1 - v);
    case CUDNN_ACTIVATION_RELU:
        if (isnan(v)) return propagate_nan ? v : (OCD_R)0;
        return v > (OCD_R)0 ? dy : (OCD_R)0;
    case CUDNN_ACTIVATION_TANH: return dy * ((OCD_R)1 - v * v);
    case CUDNN_ACTIVATION_CLIPPED_RELU:
        if (isnan(v)) return propagate_nan ? v : (OCD_R)0;
        return v > (OCD_R)0 && v < coef ? dy : (OCD_R)0;
    case CUDNN_ACTIVATION_ELU: return v > (OCD_R)0 ? dy : dy * coef * exp(v);
    case CUDNN_ACTIVATION_SWISH: {
        OCD_R s = ocd_act_sigmoid(sb * v);
        return dy * (s + sb * v * s * ((OCD_R)1 - s));
    }
    default: return dy; /* IDENTITY */
    }
}

/* f'(x) of a mode at an input x, for ops that keep the pre-activations rather than y (batch
   normalization's reserve space). It has no NaN option: a NaN x gets gradient 0 in RELU and
   CLIPPED_RELU, as CUDNN_NOT_PROPAGATE_NAN gives, and NaN in the smooth modes. */
OCD_ACT_FN ocd_act_derivative(int mode, OCD_R coef, OCD_R sb, OCD_R x)
{
    OCD_R v = ocd_act_uses_y((cudnnActivationMode_t)mode) ? ocd_act_forward(mode, false, coef, sb, x) : x;
    return ocd_act_backward(mode, false, coef, sb, v, (OCD_R)1);
}

#undef OCD_ACT_FN

#endif /* OCD_PROBLEM_ACTIVATION_H */
