/* ref/pointwise.h: the backend API's pointwise modes in double, written from the cuDNN 8.2
   backend reference alone (independent of src/). */
#ifndef OCD_TESTS_REF_POINTWISE_H
#define OCD_TESTS_REF_POINTWISE_H

#include <stdbool.h>

#include <cudnn.h>

struct ref_pw {
    cudnnPointwiseMode_t mode;
    double alpha1, alpha2;
    bool propagate_nan;
    double lower_clip, upper_clip, slope; /* RELU_*: 0, +inf, 0 by default */
    double elu_alpha, softplus_beta, swish_beta; /* 1 by default */
};

/* A mode with its default parameters. */
struct ref_pw ref_pw_mode(cudnnPointwiseMode_t mode);
/* A mode with its parameters away from their defaults, so that each is seen to act: alpha1 0.75,
   clips -0.5 and 1.5 with slope 0.1, elu_alpha 0.7, softplus_beta 1.5, swish_beta 0.8. */
struct ref_pw ref_pw_mode_varied(cudnnPointwiseMode_t mode);
/* True for ADD, MUL, MIN, MAX and the *_BWD modes (two inputs). */
bool ref_pw_binary(cudnnPointwiseMode_t mode);
/* Forward modes: f(alpha1 x[, alpha2 b]). *_BWD modes: b * f'(x) of the forward mode (x the
   forward input, b the gradient dy; the alphas are not applied). */
double ref_pw(const struct ref_pw *p, double x, double b);

#endif
