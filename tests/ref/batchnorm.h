/* ref/batchnorm.h: double-precision reference of batch normalization (and so of the 8.x
   normalization API), written from the cuDNN formulas, independent of src/.

   Tensors are logical row-major arrays (n, c, s) where s runs over the spatial positions
   (D*H*W). A slot is a channel (spatial mode) or a (c, s) pair (per activation); per-slot arrays
   are indexed by slot. act_mode < 0 means no activation; coef is the ceiling of CLIPPED_RELU, the
   alpha of ELU and the beta of SWISH. */
#ifndef OCD_TESTS_REF_BATCHNORM_H
#define OCD_TESTS_REF_BATCHNORM_H

#include <stdbool.h>
#include <stdint.h>

struct ref_bn_shape {
    int64_t n, c, s;
    bool per_activation;
};

int64_t ref_bn_slots(const struct ref_bn_shape *sh);
/* Elements reduced per slot. */
int64_t ref_bn_reduced(const struct ref_bn_shape *sh);
/* Mean and biased variance of every slot. */
void ref_bn_stats(const struct ref_bn_shape *sh, const double *x, double *mean, double *var);
double ref_act(int mode, double coef, double v);
double ref_act_grad(int mode, double coef, double v);
/* pre = scale * (x - mean) / sqrt(var + eps) + bias (+ z), out = act(pre); pre may be NULL. */
void ref_bn_forward(const struct ref_bn_shape *sh, const double *x, const double *z,
                    const double *scale, const double *bias, const double *mean, const double *var,
                    double eps, int act_mode, double coef, double *pre, double *out);
/* Gradients of out = act(pre) for the output gradient dy, the batch statistics being functions
   of x (mean and var given, as forward computed them): dpre (= dz), dx, dscale, dbias. */
void ref_bn_backward(const struct ref_bn_shape *sh, const double *x, const double *dy,
                     const double *pre, int act_mode, double coef, const double *scale,
                     const double *mean, const double *var, double eps, double *dpre, double *dx,
                     double *dscale, double *dbias);

/* The graph API's BN_FINALIZE_STATISTICS over c channels, from each channel's mean and biased
   variance (training: of the batch, `count` elements; inference: the running ones) and scale and
   bias: the inverse standard deviation, the equivalent scale and bias of bn(y) = eq_scale * y +
   eq_bias and, in training with prev_mean given, the running averages as
   cudnnBatchNormalizationForwardTraining updates them (unbiased variance). */
void ref_bn_finalize(int64_t c, const double *mean, const double *var, double count, const double *scale,
                     const double *bias, const double *prev_mean, const double *prev_var, double eps, double factor,
                     double *invstd, double *eq_scale, double *eq_bias, double *upd_mean, double *upd_var);

#endif
