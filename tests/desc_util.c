/* desc_util.c: descriptors that many tests set up the same way (see desc_util.h). */
#include "desc_util.h"

cudnnDropoutDescriptor_t tdropout_make(cudnnHandle_t h, float p, unsigned long long seed, void **states)
{
    cudnnDropoutDescriptor_t dd = NULL;
    size_t bytes = 0;
    CHECK_OK(cudnnCreateDropoutDescriptor(&dd));
    CHECK_OK(cudnnDropoutGetStatesSize(h, &bytes));
    *states = tbuf_alloc(bytes);
    CHECK_OK(cudnnSetDropoutDescriptor(dd, h, p, *states, bytes, seed));
    return dd;
}

void tdropout_free(cudnnDropoutDescriptor_t dd, void *states)
{
    if (dd == NULL) return;
    cudnnDestroyDropoutDescriptor(dd);
    tbuf_free(states);
}

void tconv_descs_create(cudnnTensorDescriptor_t *x, cudnnTensorDescriptor_t *y, cudnnTensorDescriptor_t *b,
                        cudnnFilterDescriptor_t *w, cudnnConvolutionDescriptor_t *c)
{
    CHECK_OK(cudnnCreateTensorDescriptor(x));
    CHECK_OK(cudnnCreateTensorDescriptor(y));
    if (b) CHECK_OK(cudnnCreateTensorDescriptor(b));
    CHECK_OK(cudnnCreateFilterDescriptor(w));
    CHECK_OK(cudnnCreateConvolutionDescriptor(c));
}

void tconv_descs_destroy(cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t y, cudnnTensorDescriptor_t b,
                         cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t c)
{
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    if (b) cudnnDestroyTensorDescriptor(b);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(c);
}

void trnn_data_descs_create(cudnnRNNDataDescriptor_t *x, cudnnRNNDataDescriptor_t *y, cudnnTensorDescriptor_t *h,
                            cudnnTensorDescriptor_t *c)
{
    CHECK_OK(cudnnCreateRNNDataDescriptor(x));
    CHECK_OK(cudnnCreateRNNDataDescriptor(y));
    if (h) CHECK_OK(cudnnCreateTensorDescriptor(h));
    if (c) CHECK_OK(cudnnCreateTensorDescriptor(c));
}

void trnn_data_descs_destroy(cudnnRNNDataDescriptor_t x, cudnnRNNDataDescriptor_t y, cudnnTensorDescriptor_t h,
                             cudnnTensorDescriptor_t c)
{
    cudnnDestroyRNNDataDescriptor(x);
    cudnnDestroyRNNDataDescriptor(y);
    if (h) cudnnDestroyTensorDescriptor(h);
    if (c) cudnnDestroyTensorDescriptor(c);
}
