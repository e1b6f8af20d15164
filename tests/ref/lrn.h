/* ref/lrn.h: double-precision references of cross-channel LRN and of divisive normalization,
   written from the cuDNN formulas, independent of src/. Tensors are logical row-major arrays:
   (n, c, s) for LRN (s: spatial positions), (n, c, d, h, w) for divisive normalization. The
   window of position p is [p - (N-1)/2, p + N - 1 - (N-1)/2], clipped; lrnAlpha is divided by N
   per windowed dimension. Outputs are unblended. */
#ifndef OCD_TESTS_REF_LRN_H
#define OCD_TESTS_REF_LRN_H

#include <stdint.h>

struct ref_lrn_params {
    int n;
    double alpha, beta, k;
};

void ref_lrn_forward(int64_t n, int64_t c, int64_t s, const struct ref_lrn_params *q, const double *x, double *y);
/* dx = d(sum dy * y)/dx, accumulated element by element of y. */
void ref_lrn_backward(int64_t n, int64_t c, int64_t s, const struct ref_lrn_params *q, const double *x,
                      const double *dy, double *dx);
/* dims: n, c, d, h, w (d = 1 for 4-D); spatial: 2 or 3. means may be NULL. */
void ref_divnorm_forward(const int64_t dims[5], int spatial, const struct ref_lrn_params *q, const double *x,
                         const double *means, double *y);
/* dx; dmeans = -dx. */
void ref_divnorm_backward(const int64_t dims[5], int spatial, const struct ref_lrn_params *q, const double *x,
                          const double *means, const double *dy, double *dx);

#endif
