/* ref/batchnorm.c: double-precision reference of batch normalization (see batchnorm.h).
   Backward uses the chain rule through the variance and the mean term by term (the form of the
   original paper), not the folded form of the library. */
#include "ref/batchnorm.h"

#include <math.h>
#include <stdlib.h>

#include <cudnn.h>

int64_t ref_bn_slots(const struct ref_bn_shape *sh)
{
    return sh->per_activation ? sh->c * sh->s : sh->c;
}

int64_t ref_bn_reduced(const struct ref_bn_shape *sh)
{
    return sh->per_activation ? sh->n : sh->n * sh->s;
}

static int64_t slot_of(const struct ref_bn_shape *sh, int64_t i)
{
    int64_t c = (i / sh->s) % sh->c, s = i % sh->s;
    return sh->per_activation ? c * sh->s + s : c;
}

void ref_bn_stats(const struct ref_bn_shape *sh, const double *x, double *mean, double *var)
{
    int64_t k = ref_bn_slots(sh), total = sh->n * sh->c * sh->s;
    double m = (double)ref_bn_reduced(sh);
    for (int64_t j = 0; j < k; j++) mean[j] = var[j] = 0;
    for (int64_t i = 0; i < total; i++) mean[slot_of(sh, i)] += x[i];
    for (int64_t j = 0; j < k; j++) mean[j] /= m;
    for (int64_t i = 0; i < total; i++) {
        double d = x[i] - mean[slot_of(sh, i)];
        var[slot_of(sh, i)] += d * d;
    }
    for (int64_t j = 0; j < k; j++) var[j] /= m;
}

double ref_act(int mode, double coef, double v)
{
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return 1 / (1 + exp(-v));
    case CUDNN_ACTIVATION_RELU: return v > 0 ? v : 0;
    case CUDNN_ACTIVATION_TANH: return tanh(v);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return v < 0 ? 0 : v > coef ? coef : v;
    case CUDNN_ACTIVATION_ELU: return v > 0 ? v : coef * (exp(v) - 1);
    case CUDNN_ACTIVATION_SWISH: return v / (1 + exp(-coef * v));
    default: return v;
    }
}

double ref_act_grad(int mode, double coef, double v)
{
    switch (mode) {
    case CUDNN_ACTIVATION_SIGMOID: return exp(-v) / ((1 + exp(-v)) * (1 + exp(-v)));
    case CUDNN_ACTIVATION_RELU: return v > 0 ? 1 : 0;
    case CUDNN_ACTIVATION_TANH: return 1 / (cosh(v) * cosh(v));
    case CUDNN_ACTIVATION_CLIPPED_RELU: return v > 0 && v < coef ? 1 : 0;
    case CUDNN_ACTIVATION_ELU: return v > 0 ? 1 : coef * exp(v);
    case CUDNN_ACTIVATION_SWISH: { /* d/dv of v * s(coef v) */
        double sg = 1 / (1 + exp(-coef * v));
        return sg + coef * v * sg * (1 - sg);
    }
    default: return 1;
    }
}

void ref_bn_forward(const struct ref_bn_shape *sh, const double *x, const double *z,
                    const double *scale, const double *bias, const double *mean, const double *var,
                    double eps, int act_mode, double coef, double *pre, double *out)
{
    int64_t total = sh->n * sh->c * sh->s;
    for (int64_t i = 0; i < total; i++) {
        int64_t k = slot_of(sh, i);
        double v = scale[k] * (x[i] - mean[k]) / sqrt(var[k] + eps) + bias[k];
        if (z) v += z[i];
        if (pre) pre[i] = v;
        out[i] = act_mode < 0 ? v : ref_act(act_mode, coef, v);
    }
}

void ref_bn_backward(const struct ref_bn_shape *sh, const double *x, const double *dy,
                     const double *pre, int act_mode, double coef, const double *scale,
                     const double *mean, const double *var, double eps, double *dpre, double *dx,
                     double *dscale, double *dbias)
{
    int64_t k = ref_bn_slots(sh), total = sh->n * sh->c * sh->s;
    double m = (double)ref_bn_reduced(sh);
    double *dvar = calloc((size_t)k, sizeof *dvar), *dmean = calloc((size_t)k, sizeof *dmean);
    double *sumdev = calloc((size_t)k, sizeof *sumdev);
    for (int64_t j = 0; j < k; j++) dscale[j] = dbias[j] = 0;
    for (int64_t i = 0; i < total; i++) {
        int64_t j = slot_of(sh, i);
        double sd = sqrt(var[j] + eps);
        dpre[i] = act_mode < 0 ? dy[i] : dy[i] * ref_act_grad(act_mode, coef, pre[i]);
        double xhat = (x[i] - mean[j]) / sd, dxhat = dpre[i] * scale[j];
        dbias[j] += dpre[i];
        dscale[j] += dpre[i] * xhat;
        dvar[j] += dxhat * (x[i] - mean[j]) * -0.5 * pow(var[j] + eps, -1.5);
        dmean[j] += -dxhat / sd;
        sumdev[j] += -2 * (x[i] - mean[j]);
    }
    for (int64_t j = 0; j < k; j++) dmean[j] += dvar[j] * sumdev[j] / m;
    for (int64_t i = 0; i < total; i++) {
        int64_t j = slot_of(sh, i);
        double dxhat = dpre[i] * scale[j];
        dx[i] = dxhat / sqrt(var[j] + eps) + dvar[j] * 2 * (x[i] - mean[j]) / m + dmean[j] / m;
    }
    free(dvar);
    free(dmean);
    free(sumdev);
}

void ref_bn_finalize(int64_t c, const double *mean, const double *var, double count, const double *scale,
                     const double *bias, const double *prev_mean, const double *prev_var, double eps, double factor,
                     double *invstd, double *eq_scale, double *eq_bias, double *upd_mean, double *upd_var)
{
    for (int64_t j = 0; j < c; j++) {
        double sd = sqrt(var[j] + eps);
        invstd[j] = 1 / sd;
        eq_scale[j] = scale[j] / sd;
        eq_bias[j] = bias[j] - scale[j] * mean[j] / sd;
        if (prev_mean == NULL) continue;
        upd_mean[j] = prev_mean[j] + factor * (mean[j] - prev_mean[j]);
        upd_var[j] = prev_var[j] + factor * (var[j] * count / (count - 1) - prev_var[j]);
    }
}
