/* ref/pooling.h: reference pooling in double over dense row-major arrays [N, C, spatial...],
   written from the cuDNN documentation alone (independent of src/). Output o of a spatial dim
   pools inputs o * stride - pad .. + window - 1 that lie inside the input; MAX takes the first
   maximum in row-major window order (NaN loses to numbers unless propagate), the averages divide
   by the window's positions inside the padded input (INCLUDE: the window volume, less the part of
   a ceil-mode window past the padding's end, as NVIDIA's library computes it) or by the inputs
   inside (EXCLUDE); an empty window gives 0. */
#ifndef OCD_TESTS_REF_POOLING_H
#define OCD_TESTS_REF_POOLING_H

#include <stdbool.h>

#include <cudnn.h>

struct ref_pool {
    cudnnPoolingMode_t mode;
    bool propagate;
    int nb; /* spatial dims, 1..3 */
    int window[3], pad[3], stride[3];
};

void ref_pooling_forward(const struct ref_pool *p, int n, int c, const int in[], const int out[], const double *x,
                         double *y);
/* dx (dense, like x) from x and dy (like y). */
void ref_pooling_backward(const struct ref_pool *p, int n, int c, const int in[], const int out[], const double *x,
                          const double *dy, double *dx);

#endif /* OCD_TESTS_REF_POOLING_H */
