/* ref/pointwise.c: reference pointwise math (see pointwise.h). Derivatives in closed form; the
   tests check them against finite differences of the forward modes. */
#include "pointwise.h"

#include <math.h>

static double logistic(double t)
{
    return 0.5 + 0.5 * tanh(0.5 * t);
}

struct ref_pw ref_pw_mode(cudnnPointwiseMode_t mode)
{
    struct ref_pw p = {mode, 1, 1, false, 0, INFINITY, 0, 1, 1, 1};
    return p;
}

struct ref_pw ref_pw_mode_varied(cudnnPointwiseMode_t mode)
{
    struct ref_pw p = {mode, 0.75, 1, false, -0.5, 1.5, 0.1, 0.7, 1.5, 0.8};
    return p;
}

bool ref_pw_binary(cudnnPointwiseMode_t mode)
{
    return mode == CUDNN_POINTWISE_ADD || mode == CUDNN_POINTWISE_MUL || mode == CUDNN_POINTWISE_MIN ||
           mode == CUDNN_POINTWISE_MAX || (int)mode >= 200;
}

/* The forward function of a forward mode at t (parameters of p). */
static double forward(const struct ref_pw *p, cudnnPointwiseMode_t mode, double t)
{
    switch (mode) {
    case CUDNN_POINTWISE_SQRT: return sqrt(t);
    case CUDNN_POINTWISE_RELU_FWD:
        if (isnan(t)) return p->propagate_nan ? t : p->lower_clip;
        if (t < p->lower_clip) return p->lower_clip + p->slope * (t - p->lower_clip);
        return fmin(t, p->upper_clip);
    case CUDNN_POINTWISE_TANH_FWD: return tanh(t);
    case CUDNN_POINTWISE_SIGMOID_FWD: return logistic(t);
    case CUDNN_POINTWISE_ELU_FWD: return t > 0 ? t : p->elu_alpha * (exp(t) - 1);
    case CUDNN_POINTWISE_GELU_FWD: return 0.5 * t * (1 + erf(t / sqrt(2.0)));
    case CUDNN_POINTWISE_SOFTPLUS_FWD: return log1p(exp(p->softplus_beta * t)) / p->softplus_beta;
    case CUDNN_POINTWISE_SWISH_FWD: return t * logistic(p->swish_beta * t);
    default: return t;
    }
}

double ref_pw(const struct ref_pw *p, double x, double b)
{
    const double t = p->alpha1 * x, u = p->alpha2 * b;
    const double pi = 3.14159265358979323846;
    double s;
    switch (p->mode) {
    case CUDNN_POINTWISE_ADD: return t + u;
    case CUDNN_POINTWISE_MUL: return t * u;
    case CUDNN_POINTWISE_MIN:
    case CUDNN_POINTWISE_MAX:
        if (isnan(t) || isnan(u)) return p->propagate_nan ? NAN : isnan(t) ? u : t;
        return p->mode == CUDNN_POINTWISE_MIN ? fmin(t, u) : fmax(t, u);
    case CUDNN_POINTWISE_RELU_BWD:
        if (x <= p->lower_clip) return p->slope * b;
        return x > p->upper_clip ? 0 : b;
    case CUDNN_POINTWISE_TANH_BWD: s = tanh(x); return b * (1 - s * s);
    case CUDNN_POINTWISE_SIGMOID_BWD: s = logistic(x); return b * s * (1 - s);
    case CUDNN_POINTWISE_ELU_BWD: return x > 0 ? b : b * p->elu_alpha * exp(x);
    case CUDNN_POINTWISE_GELU_BWD:
        return b * (0.5 * (1 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2 * pi));
    case CUDNN_POINTWISE_SOFTPLUS_BWD: return b * logistic(p->softplus_beta * x);
    case CUDNN_POINTWISE_SWISH_BWD:
        s = logistic(p->swish_beta * x);
        return b * (s + p->swish_beta * x * s * (1 - s));
    default: return forward(p, p->mode, t);
    }
}
