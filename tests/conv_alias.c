/* conv_alias.c: the aliasing rule of the convolutions (ocd_check_alias, docs/compatibility.md).

   Every output element sums many elements of each input, so an output that overlaps an input
   would read what it has already written: BAD_PARAM, nothing written, in each direction, for the
   same buffer and for one shifted by an element. (z may be y in the bias-activation forward:
   tests/conv.c runs that in place.) */
#include "tensors.h"
#include "test.h"

#include <stdlib.h>

TEST(conv_output_overlapping_an_input_is_refused)
{
    cudnnHandle_t h = test_handle();
    /* n1 c4 6x6, k4 3x3 pad 1: x, y, dx and dy all 1x4x6x6 */
    const int dims[4] = {1, 4, 6, 6};
    cudnnTensorDescriptor_t t;
    cudnnFilterDescriptor_t f;
    cudnnConvolutionDescriptor_t conv;
    cudnnCreateTensorDescriptor(&t);
    cudnnCreateFilterDescriptor(&f);
    cudnnCreateConvolutionDescriptor(&conv);
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, dims[0], dims[1], dims[2], dims[3]));
    CHECK_OK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 4, 3, 3));
    CHECK_OK(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    const size_t tb = 144 * sizeof(float), fb = 144 * sizeof(float);
    float vals[145];
    for (int i = 0; i < 145; i++) vals[i] = (float)trand_uniform(-1, 1);
    void *a = tbuf_from(vals, tb + sizeof(float)), *w = tbuf_from(vals, fb), *other = tbuf_from(vals, tb);
    void *snap_a = tbuf_snapshot(a, tb + sizeof(float)), *snap_w = tbuf_snapshot(w, fb);
    float one = 1, zero = 0;
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM;
    for (int shift = 0; shift < 2; shift++) {
        float *out = (float *)a + shift; /* the same buffer, then one element into it */
        CHECK_STATUS(cudnnConvolutionForward(h, &one, t, a, f, w, conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL,
                                             0, &zero, t, out),
                     BAD); /* y on x */
        CHECK_STATUS(cudnnConvolutionBackwardData(h, &one, f, w, t, a, conv, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0,
                                                  &zero, t, out),
                     BAD); /* dx on dy */
        CHECK_STATUS(cudnnConvolutionBackwardFilter(h, &one, t, a, t, other, conv, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
                                                    NULL, 0, &zero, f, out),
                     BAD); /* dw on x */
    }
    CHECK_STATUS(cudnnConvolutionForward(h, &one, t, other, f, w, conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                         &zero, t, w),
                 BAD); /* y on w */
    tbuf_unchanged(a, snap_a, tb + sizeof(float), "the input written as output");
    tbuf_unchanged(w, snap_w, fb, "the filter written as output");
    tbuf_free(a);
    tbuf_free(w);
    tbuf_free(other);
    free(snap_a);
    free(snap_w);
    cudnnDestroyTensorDescriptor(t);
    cudnnDestroyFilterDescriptor(f);
    cudnnDestroyConvolutionDescriptor(conv);
}
