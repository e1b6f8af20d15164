/* conv_support.h: one convolution problem set up for the tests of an algorithm family (FFT,
   Winograd): descriptors, random inputs rounded to the data type, the double references of the
   three directions (tests/ref/conv.c), and a call that runs one direction with a forced
   algorithm on poisoned (or prior-filled) outputs and compares the result.

   x and y (dy) live in any tview layout; the filter is packed in NCHW or NHWC format. Values are
   drawn in [-1, 1]; the references are computed once, at setup, for every direction. */
#ifndef OCD_TESTS_CONV_SUPPORT_H
#define OCD_TESTS_CONV_SUPPORT_H

#include "ref/conv.h"
#include "tensors.h"

enum conv_dir { CONV_FWD, CONV_BWD_DATA, CONV_BWD_FILTER, CONV_DIRS };

/* A shape: nsp spatial dims (2 or 3); unset dilations and strides count as 1. */
struct conv_shape {
    const char *name;
    int nsp, n, c, k, groups;
    int in[3], filt[3], pad[3], stride[3], dil[3];
    bool convolution; /* CUDNN_CONVOLUTION mode (mirrored filter) */
};

/* A data-type configuration: data type of x, w and y, the compute type and the math type. */
struct conv_config {
    const char *name;
    cudnnDataType_t data, compute;
    cudnnMathType_t math;
};

struct conv_setup {
    struct ref_conv r;
    const struct conv_config *cf;
    struct tview x, y, w; /* w: only its buffer layout (packed, filter format) is used */
    cudnnFilterDescriptor_t wdesc;
    cudnnConvolutionDescriptor_t conv;
    double *xv, *wv, *yv;        /* inputs: x, w, dy (rounded to the type) */
    double *want[CONV_DIRS];     /* y, dx and dw from the references */
    void *xb, *wb, *yb;          /* the inputs' buffers on the backend under test */
};

/* Sets s up; false (failure recorded) when a descriptor call fails. x_layout and y_layout are
   tview layouts; nhwc_filter picks the filter format. */
bool conv_setup_init(struct conv_setup *s, const struct conv_shape *sh, const struct conv_config *cf, int x_layout,
                     int y_layout, bool nhwc_filter);
void conv_setup_free(struct conv_setup *s);

/* Number of elements of the direction's destination (y, dx or dw). */
int64_t conv_setup_dst_count(const struct conv_setup *s, enum conv_dir d);
/* The scale of direction d's results: max(1, max |want|) over its reference. An error bound
   stated relative to the largest result is, per element, that bound times this scale. */
double conv_setup_result_scale(const struct conv_setup *s, enum conv_dir d);

/* The workspace size query of direction d for algo. */
cudnnStatus_t conv_setup_workspace(const struct conv_setup *s, enum conv_dir d, int algo, size_t *bytes);

/* Runs direction d with `algo` on the setup's input buffers into a fresh destination buffer,
   with a workspace of the queried size, alpha and beta (beta != 0: the destination first holds
   random prior values, else poison; the inputs are never overwritten),
   and compares alpha * reference + beta * prior at relative tolerance tol (max(1, |want|)
   scaled). Returns the status of the call (the comparison is only made on SUCCESS); *err, when
   not NULL, receives the largest |got - want| / max(1, max |alpha * want|) over the destination. */
cudnnStatus_t conv_setup_run(struct conv_setup *s, enum conv_dir d, int algo, double alpha, double beta, double tol,
                             double *err, const char *what);

/* cudnnGet*Algorithm_v7 of direction d: the algorithm enum and status of each result, in
   order; returns the count. */
int conv_setup_heuristic(const struct conv_setup *s, enum conv_dir d, int *algos, cudnnStatus_t *status, size_t *memory);
/* cudnnFind*Algorithm of direction d, the same way. */
int conv_setup_find(const struct conv_setup *s, enum conv_dir d, int *algos, cudnnStatus_t *status, size_t *memory);

#endif /* OCD_TESTS_CONV_SUPPORT_H */
