/* desc_util.c: descriptors and tensors that many tests set up the same way (see desc_util.h). */
#include "desc_util.h"

#include <stdlib.h>

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

struct tfused tfused_create(cudnnFusedOps_t ops, cudnnBatchNormMode_t mode)
{
    struct tfused f;
    CHECK_OK(cudnnCreateFusedOpsConstParamPack(&f.c, ops));
    CHECK_OK(cudnnCreateFusedOpsVariantParamPack(&f.v, ops));
    CHECK_OK(cudnnCreateFusedOpsPlan(&f.plan, ops));
    CHECK_OK(cudnnSetFusedOpsConstParamPackAttribute(f.c, CUDNN_PARAM_BN_MODE, &mode));
    return f;
}

void tfused_destroy(struct tfused f)
{
    cudnnDestroyFusedOpsPlan(f.plan), cudnnDestroyFusedOpsConstParamPack(f.c), cudnnDestroyFusedOpsVariantParamPack(f.v);
}

void tfused_const(cudnnFusedOpsConstParamPack_t c, cudnnFusedOpsConstParamLabel_t label, const void *param)
{
    CHECK_OK(cudnnSetFusedOpsConstParamPackAttribute(c, label, param));
}

void tfused_ptr(cudnnFusedOpsVariantParamPack_t v, cudnnFusedOpsVariantParamLabel_t label, void *ptr)
{
    CHECK_OK(cudnnSetFusedOpsVariantParamPackAttribute(v, label, ptr));
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

void treduce_init(struct treduce *r, int rank, const int ad[], const int cd[], double lo, double hi)
{
    rt_packed(&r->at, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, rank, ad);
    rt_packed(&r->ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, rank, cd);
    r->adesc = tdesc(&r->at);
    r->cdesc = tdesc(&r->ct);
    r->a = thost_random(&r->at, lo, hi);
    r->c0 = thost_poison(&r->ct);
    r->pa = tbuf_from(r->a, rt_bytes(&r->at));
    r->pc = tbuf_alloc(rt_bytes(&r->ct));
    r->want = malloc(sizeof(double) * (size_t)rt_span(&r->ct));
}

void treduce_free(struct treduce *r)
{
    cudnnDestroyTensorDescriptor(r->adesc);
    cudnnDestroyTensorDescriptor(r->cdesc);
    tbuf_free(r->pa);
    tbuf_free(r->pc);
    free(r->a), free(r->c0), free(r->want);
}
