/* ref/activation.h: reference activation math in double, written from the cuDNN documentation
   alone (independent of src/). */
#ifndef OCD_TESTS_REF_ACTIVATION_H
#define OCD_TESTS_REF_ACTIVATION_H

#include <stdbool.h>

#include <cudnn.h>

/* f(x) of an activation mode. propagate: CUDNN_PROPAGATE_NAN; coef: ceiling (clipped ReLU) or
   alpha (ELU); swish_beta: the swish slope. */
double ref_activation(cudnnActivationMode_t mode, bool propagate, double coef, double swish_beta, double x);
/* df/dx at x, times dy (the backward op's result before alpha/beta). */
double ref_activation_grad(cudnnActivationMode_t mode, bool propagate, double coef, double swish_beta,
                           double x, double dy);

#endif /* OCD_TESTS_REF_ACTIVATION_H */
