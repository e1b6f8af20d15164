/* ref/softmax.c: reference softmax (see softmax.h). Each slice is gathered into a list of
   indices, then the textbook formulas are applied to it. */
#include "softmax.h"

#include <math.h>
#include <stdlib.h>

/* The slices of the mode: slice s has `len` elements at index[s * len + k]. */
static long *slices(cudnnSoftmaxMode_t mode, int rank, const int dims[], long *count, long *len)
{
    long n = dims[0], c = rank > 1 ? dims[1] : 1, spatial = 1;
    for (int d = 2; d < rank; d++) spatial *= dims[d];
    long *index = malloc(sizeof(long) * (size_t)(n * c * spatial));
    long k = 0;
    if (mode == CUDNN_SOFTMAX_MODE_INSTANCE) {
        *count = n;
        *len = c * spatial;
        for (long i = 0; i < n * c * spatial; i++) index[k++] = i;
    } else {
        *count = n * spatial;
        *len = c;
        for (long in = 0; in < n; in++)
            for (long s = 0; s < spatial; s++)
                for (long ic = 0; ic < c; ic++) index[k++] = (in * c + ic) * spatial + s;
    }
    return index;
}

void ref_softmax_forward(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, int rank, const int dims[],
                         const double *x, double *y)
{
    long count, len;
    long *index = slices(mode, rank, dims, &count, &len);
    for (long s = 0; s < count; s++) {
        const long *ix = index + s * len;
        double m = -INFINITY, sum = 0;
        for (long k = 0; k < len; k++) m = fmax(m, x[ix[k]]);
        for (long k = 0; k < len; k++) sum += exp(x[ix[k]] - m);
        for (long k = 0; k < len; k++)
            y[ix[k]] = algo == CUDNN_SOFTMAX_LOG ? x[ix[k]] - m - log(sum) : exp(x[ix[k]] - m) / sum;
    }
    free(index);
}

void ref_softmax_backward(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, int rank, const int dims[],
                          const double *y, const double *dy, double *dx)
{
    long count, len;
    long *index = slices(mode, rank, dims, &count, &len);
    for (long s = 0; s < count; s++) {
        const long *ix = index + s * len;
        double dot = 0;
        for (long k = 0; k < len; k++) dot += algo == CUDNN_SOFTMAX_LOG ? dy[ix[k]] : dy[ix[k]] * y[ix[k]];
        for (long k = 0; k < len; k++)
            dx[ix[k]] = algo == CUDNN_SOFTMAX_LOG ? dy[ix[k]] - exp(y[ix[k]]) * dot : y[ix[k]] * (dy[ix[k]] - dot);
    }
    free(index);
}
