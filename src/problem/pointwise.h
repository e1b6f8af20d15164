/* pointwise.h: a chain of the backend API's pointwise operations run as one elementwise pass, and
   the math of every cuDNN 8.2 pointwise mode, shared by the host and the CUDA kernels
   (src/host/fused_pointwise.c, src/cuda/fused_pointwise.cu).

   A chain is a small program over value slots, evaluated once per element of its shape:
   slots 0 .. ninputs-1 hold the inputs (tensors in memory, read at the element, a broadcast
   input with stride 0), and step s writes slot ninputs + s from one or two earlier slots. Each
   output stores one slot. So a graph's tail "conv -> add z -> add bias -> relu" is, after the
   convolution has written its result into memory, one pass reading three tensors and writing
   one: no intermediate of the chain touches memory. A virtual tensor of the graph is a slot; a
   tensor that is both consumed by a later step and not virtual is a slot that is also stored.

   Normalization (ocd_pw_chain_build) is the elementwise one (core/dimgroup.h): dims of extent 1
   dropped, the rest ordered by the first output's strides and merged wherever every operand
   continues the run, so a packed chain of any layout is one dimension of unit strides.

   Math: every step computes in the chain's compute type (double on the host; on CUDA float, or
   double when the chain's math precision or any operand is double), inputs converted from their
   tensor types and outputs rounded once to theirs. The modes (t = alpha1 * x, u = alpha2 * b, a
   scale of 0 giving 0 whatever its operand holds):
     ADD t + u   MUL t * u   MIN, MAX of t and u (a NaN wins under PROPAGATE_NAN, else the other)
     SQRT sqrt t
     RELU_FWD   t below the lower clip lo: lo + slope * (t - lo); above the upper clip: up; else t
                (NaN: kept under PROPAGATE_NAN, else lo)
     TANH_FWD, SIGMOID_FWD; ELU_FWD t > 0 ? t : elu_alpha (e^t - 1); GELU_FWD 0.5 t (1 + erf(t/sqrt 2))
     SOFTPLUS_FWD log(1 + e^(beta t)) / beta; SWISH_FWD t * sigmoid(beta t)
     *_BWD      dx = dy * f'(x) of the forward mode, x the forward input and dy the gradient
                (the alphas are not applied, as the frontend sets them to 1 and 8.2 gives them no
                role); RELU_BWD: slope * dy where x <= lo, 0 where x > up, else dy. */
#ifndef OCD_PROBLEM_POINTWISE_H
#define OCD_PROBLEM_POINTWISE_H

#include "core/hostdev.h"
#include "core/impl.h"
#include "core/tensor.h"

#include <cudnn_backend.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_PW_MAX_INPUTS 8
#define OCD_PW_MAX_OUTPUTS 4
#define OCD_PW_MAX_STEPS 12
#define OCD_PW_MAX_SLOTS (OCD_PW_MAX_INPUTS + OCD_PW_MAX_STEPS)
#define OCD_PW_MAX_OPERANDS (OCD_PW_MAX_INPUTS + OCD_PW_MAX_OUTPUTS)

/* One step: slot out = mode(slot x [, slot b]). For *_BWD modes b is dy. */
struct ocd_pw_step {
    cudnnPointwiseMode_t mode;
    int x, b; /* slots read (b: -1 for unary modes) */
    double alpha1, alpha2;
    bool propagate_nan;
    double lower_clip, upper_clip, clip_slope; /* RELU_*: defaults 0, +inf, 0 */
    double elu_alpha, softplus_beta, swish_beta; /* defaults 1 */
};

/* An operand in memory after normalization: type, data and a stride per dim (in scalars, 0 where
   broadcast). */
struct ocd_pw_operand {
    cudnnDataType_t dtype;
    const void *data;
    int64_t strides[OCD_MAX_DIMS];
};

struct ocd_pw_chain {
    int rank; /* >= 1 */
    int64_t dims[OCD_MAX_DIMS];
    int64_t count;
    bool double_compute;
    int ninputs, nsteps, noutputs;
    struct ocd_pw_operand in[OCD_PW_MAX_INPUTS];
    struct ocd_pw_operand out[OCD_PW_MAX_OUTPUTS]; /* data written through a cast of `data` */
    int out_slot[OCD_PW_MAX_OUTPUTS];
    struct ocd_pw_step steps[OCD_PW_MAX_STEPS];
};

/* True for the modes that read two slots (binary ones and the *_BWD ones). */
OCD_HOST_DEVICE bool ocd_pw_binary(cudnnPointwiseMode_t mode)
{
    return mode <= CUDNN_POINTWISE_MAX || mode >= CUDNN_POINTWISE_RELU_BWD;
}

/* A step before it is normalized: what ocd_pw_chain_build takes. The views of the inputs and
   outputs have the rank of `shape`; an input's dim equals the shape's or is 1 (broadcast), an
   output has the shape's dims. */
struct ocd_pw_chain_desc {
    struct ocd_tensor_view shape;
    int ninputs, nsteps, noutputs;
    struct ocd_tensor_view in[OCD_PW_MAX_INPUTS], out[OCD_PW_MAX_OUTPUTS];
    int out_slot[OCD_PW_MAX_OUTPUTS];
    struct ocd_pw_step steps[OCD_PW_MAX_STEPS];
    bool double_compute;
};

/* Normalizes a described chain into c (data pointers NULL: set c->in[i].data and c->out[i].data
   before running). */
void ocd_pw_chain_build(struct ocd_pw_chain *c, const struct ocd_pw_chain_desc *d);

/* A step with the defaults of its mode's parameters (alphas 1, clips 0 and +inf, betas 1). */
void ocd_pw_step_defaults(struct ocd_pw_step *s, cudnnPointwiseMode_t mode, int x, int b);

/* Runs a chain through its implementation table (op names the API call in logs). */
cudnnStatus_t ocd_pw_chain_run(cudnnHandle_t handle, const struct ocd_pw_chain *c, const char *op);

/* Implementations: (handle, const struct ocd_pw_chain *). */
cudnnStatus_t ocd_host_pw_chain(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_pw_chain(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

/* ---- the math of one step, for host (double) and device (float, double) ----------------------- */

#define OCD_PW_FN OCD_REAL_TEMPLATE OCD_HOST_DEVICE OCD_R

OCD_PW_FN ocd_pw_sigmoid(OCD_R t)
{
    return (OCD_R)1 / ((OCD_R)1 + exp(-t));
}

/* The standard normal density and distribution function, for GELU. */
OCD_PW_FN ocd_pw_phi(OCD_R t)
{
    return (OCD_R)0.3989422804014327 * exp((OCD_R)-0.5 * t * t);
}

OCD_PW_FN ocd_pw_cdf(OCD_R t)
{
    return (OCD_R)0.5 * ((OCD_R)1 + erf(t * (OCD_R)0.7071067811865476));
}

/* The value of step s given its operand values x and b (b unused by unary modes). */
OCD_PW_FN ocd_pw_apply(const struct ocd_pw_step *s, OCD_R x, OCD_R b)
{
    /* a scale of 0 drops its operand, NaN or not, as a beta of 0 does (TensorFlow passes the
       output buffer, whatever it holds, as a side input scaled by 0) */
    const OCD_R t = s->alpha1 != 0 ? (OCD_R)s->alpha1 * x : (OCD_R)0;
    const OCD_R u = s->alpha2 != 0 ? (OCD_R)s->alpha2 * b : (OCD_R)0;
    const OCD_R lo = (OCD_R)s->lower_clip, up = (OCD_R)s->upper_clip;
    switch (s->mode) {
    case CUDNN_POINTWISE_ADD: return t + u;
    case CUDNN_POINTWISE_MUL: return t * u;
    case CUDNN_POINTWISE_MIN:
    case CUDNN_POINTWISE_MAX: {
        if (t != t || u != u) return s->propagate_nan ? (t != t ? t : u) : (t != t ? u : t);
        bool less = t < u;
        return (s->mode == CUDNN_POINTWISE_MIN) == less ? t : u;
    }
    case CUDNN_POINTWISE_SQRT: return sqrt(t);
    case CUDNN_POINTWISE_RELU_FWD:
        if (t != t) return s->propagate_nan ? t : lo;
        if (t < lo) return lo + (OCD_R)s->clip_slope * (t - lo);
        return t > up ? up : t;
    case CUDNN_POINTWISE_TANH_FWD: return tanh(t);
    case CUDNN_POINTWISE_SIGMOID_FWD: return ocd_pw_sigmoid(t);
    case CUDNN_POINTWISE_ELU_FWD: return t > (OCD_R)0 ? t : (OCD_R)s->elu_alpha * expm1(t);
    case CUDNN_POINTWISE_GELU_FWD: return t * ocd_pw_cdf(t);
    case CUDNN_POINTWISE_SOFTPLUS_FWD: {
        OCD_R bt = (OCD_R)s->softplus_beta * t; /* log(1 + e^bt) without overflow */
        return (bt > (OCD_R)0 ? bt + log1p(exp(-bt)) : log1p(exp(bt))) / (OCD_R)s->softplus_beta;
    }
    case CUDNN_POINTWISE_SWISH_FWD: return t * ocd_pw_sigmoid((OCD_R)s->swish_beta * t);
    /* backward: x is the forward input, b the incoming gradient dy */
    case CUDNN_POINTWISE_RELU_BWD:
        if (x != x) return s->propagate_nan ? x : (OCD_R)0;
        if (x <= lo) return (OCD_R)s->clip_slope * b;
        return x > up ? (OCD_R)0 : b;
    case CUDNN_POINTWISE_TANH_BWD: {
        OCD_R y = tanh(x);
        return b * ((OCD_R)1 - y * y);
    }
    case CUDNN_POINTWISE_SIGMOID_BWD: {
        OCD_R y = ocd_pw_sigmoid(x);
        return b * y * ((OCD_R)1 - y);
    }
    case CUDNN_POINTWISE_ELU_BWD: return x > (OCD_R)0 ? b : b * (OCD_R)s->elu_alpha * exp(x);
    case CUDNN_POINTWISE_GELU_BWD: return b * (ocd_pw_cdf(x) + x * ocd_pw_phi(x));
    case CUDNN_POINTWISE_SOFTPLUS_BWD: return b * ocd_pw_sigmoid((OCD_R)s->softplus_beta * x);
    case CUDNN_POINTWISE_SWISH_BWD: {
        OCD_R bx = (OCD_R)s->swish_beta * x, sg = ocd_pw_sigmoid(bx);
        return b * (sg + bx * sg * ((OCD_R)1 - sg));
    }
    default: return t;
    }
}

#undef OCD_PW_FN

#endif /* OCD_PROBLEM_POINTWISE_H */
