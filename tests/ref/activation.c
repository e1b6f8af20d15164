/* ref/activation.c: reference activation math (see activation.h). Derivatives are taken from x,
   in closed form. */
#include "activation.h"

#include <math.h>

static double logistic(double t)
{
    return 0.5 + 0.5 * tanh(0.5 * t); /* = 1 / (1 + e^-t), without overflow */
}

double ref_activation(cudnnActivationMode_t mode, bool propagate, double coef, double swish_beta, double x)
{
    if (isnan(x)) {
        if (mode == CUDNN_ACTIVATION_RELU || mode == CUDNN_ACTIVATION_CLIPPED_RELU) return propagate ? NAN : 0.0;
        return NAN;
    }
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return logistic(x);
    case CUDNN_ACTIVATION_RELU: return fmax(x, 0.0);
    case CUDNN_ACTIVATION_TANH: return tanh(x);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return fmin(fmax(x, 0.0), coef);
    case CUDNN_ACTIVATION_ELU: return x > 0 ? x : coef * (exp(x) - 1.0);
    case CUDNN_ACTIVATION_SWISH: return x * logistic(swish_beta * x);
    default: return x;
    }
}

double ref_activation_grad(cudnnActivationMode_t mode, bool propagate, double coef, double swish_beta,
                           double x, double dy)
{
    if (isnan(x)) {
        if (mode == CUDNN_ACTIVATION_RELU || mode == CUDNN_ACTIVATION_CLIPPED_RELU) return propagate ? NAN : 0.0;
        return NAN;
    }
    double s, t;
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: s = logistic(x); return dy * s * (1.0 - s);
    case CUDNN_ACTIVATION_RELU: return x > 0 ? dy : 0.0;
    case CUDNN_ACTIVATION_TANH: t = tanh(x); return dy * (1.0 - t * t);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return x > 0 && x < coef ? dy : 0.0;
    case CUDNN_ACTIVATION_ELU: return x > 0 ? dy : dy * coef * exp(x);
    case CUDNN_ACTIVATION_SWISH:
        s = logistic(swish_beta * x);
        return dy * (s + swish_beta * x * s * (1.0 - s));
    default: return dy;
    }
}
