/* desc_util.h: descriptors that many tests set up the same way (tests/desc_util.c): a dropout
   descriptor with its states on the backend under test, the empty descriptors of one
   convolution or of one RNN call, which each test then sets as the program or case it follows
   does, the three objects of one fused operation, and the tensors of one reduction. A call that
   must succeed is CHECK_OK'd inside. */
#ifndef OCD_TESTS_DESC_UTIL_H
#define OCD_TESTS_DESC_UTIL_H

#include "tensors.h"
#include "test.h"

/* A dropout descriptor of probability p and seed, its states (of cudnnDropoutGetStatesSize's
   size) allocated on the backend under test and returned in *states; free both with
   tdropout_free (a NULL descriptor: nothing). */
cudnnDropoutDescriptor_t tdropout_make(cudnnHandle_t h, float p, unsigned long long seed, void **states);
void tdropout_free(cudnnDropoutDescriptor_t dd, void *states);

/* The descriptors of one convolution, created and not set: x and y, a per-channel b (the bias or
   the scale; NULL: none), the filter w and the convolution c; tconv_descs_destroy destroys them
   (b NULL: none). */
void tconv_descs_create(cudnnTensorDescriptor_t *x, cudnnTensorDescriptor_t *y, cudnnTensorDescriptor_t *b,
                        cudnnFilterDescriptor_t *w, cudnnConvolutionDescriptor_t *c);
void tconv_descs_destroy(cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t y, cudnnTensorDescriptor_t b,
                         cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t c);

/* The descriptors of one RNN call's data, created and not set: x and y (RNN data), the hidden
   state h and the cell state c (NULL: none); trnn_data_descs_destroy destroys them (h or c NULL:
   none). */
void trnn_data_descs_create(cudnnRNNDataDescriptor_t *x, cudnnRNNDataDescriptor_t *y, cudnnTensorDescriptor_t *h,
                            cudnnTensorDescriptor_t *c);
void trnn_data_descs_destroy(cudnnRNNDataDescriptor_t x, cudnnRNNDataDescriptor_t y, cudnnTensorDescriptor_t h,
                             cudnnTensorDescriptor_t c);

/* The three objects of one fused operation (cudnnFusedOps*): its constant pack with BN_MODE set
   to mode, its variant pack and its plan; tfused_destroy destroys them. tfused_const and
   tfused_ptr set one label of a pack. */
struct tfused {
    cudnnFusedOpsConstParamPack_t c;
    cudnnFusedOpsVariantParamPack_t v;
    cudnnFusedOpsPlan_t plan;
};
struct tfused tfused_create(cudnnFusedOps_t ops, cudnnBatchNormMode_t mode);
void tfused_destroy(struct tfused f);
void tfused_const(cudnnFusedOpsConstParamPack_t c, cudnnFusedOpsConstParamLabel_t label, const void *param);
void tfused_ptr(cudnnFusedOpsVariantParamPack_t v, cudnnFusedOpsVariantParamLabel_t label, void *ptr);

/* One reduction's float tensors, packed row-major: A of rank dims ad (random in [lo, hi]) and C
   of dims cd, their descriptors, the host values (c0 all poison), copies on the backend under test (pc
   poisoned) and want, room for C's reference; treduce_free releases them all. */
struct treduce {
    struct rtensor at, ct;
    cudnnTensorDescriptor_t adesc, cdesc;
    void *a, *c0, *pa, *pc;
    double *want;
};
void treduce_init(struct treduce *r, int rank, const int ad[], const int cd[], double lo, double hi);
void treduce_free(struct treduce *r);

#endif /* OCD_TESTS_DESC_UTIL_H */
