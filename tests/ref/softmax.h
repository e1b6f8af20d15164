/* ref/softmax.h: reference softmax in double over dense row-major arrays, written from the cuDNN
   documentation alone (independent of src/). INSTANCE: one softmax per n over everything else;
   CHANNEL: one per (n, spatial position) over C. */
#ifndef OCD_TESTS_REF_SOFTMAX_H
#define OCD_TESTS_REF_SOFTMAX_H

#include <cudnn.h>

void ref_softmax_forward(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, int rank, const int dims[],
                         const double *x, double *y);
/* dx from the forward output y and the gradient dy. */
void ref_softmax_backward(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, int rank, const int dims[],
                          const double *y, const double *dy, double *dx);

#endif /* OCD_TESTS_REF_SOFTMAX_H */
