/* tensor_ops.h: reference layouts and elementwise references for the tensor-operation tests.

   Independent of src/: a struct rtensor describes a tensor the way the tests hand it to cuDNN
   (dims, strides in elements, where an element of INT8x4/UINT8x4/INT8x32 is a whole vector along
   C), and rt_offset finds a logical element's scalar in memory. The references compute in
   double over host copies of the buffers. */
#ifndef OCD_TESTS_REF_TENSOR_OPS_H
#define OCD_TESTS_REF_TENSOR_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include <cudnn.h>

#define RT_MAX_DIMS 8

struct rtensor {
    cudnnDataType_t dtype;
    int rank, vect;
    int dims[RT_MAX_DIMS];
    int strides[RT_MAX_DIMS];
};

/* Scalars per element of the type (4 or 32 for the vector types, else 1). */
int rt_vect(cudnnDataType_t t);
/* A packed layout as cuDNN's formats define them: NCHW row-major, NHWC channels innermost,
   NCHW_VECT_C row-major over C/vect with the vector innermost (strides in vectors). */
void rt_packed(struct rtensor *t, cudnnDataType_t dtype, cudnnTensorFormat_t format, int rank, const int dims[]);
/* Strides with gaps: dims ordered outermost first by order[], each stride its inner span plus
   gap elements. */
void rt_gapped(struct rtensor *t, cudnnDataType_t dtype, int rank, const int dims[], const int order[], int gap);
/* Scalar offset of logical element idx from element (0,...,0) (an index is ignored on a
   dimension of extent 1, which is how a broadcast operand is read); negative strides (a
   reversed view) give negative offsets. */
int64_t rt_offset(const struct rtensor *t, const int idx[]);
int64_t rt_count(const struct rtensor *t);
/* Scalars from the lowest element to past the highest one: a buffer of the layout holds this
   many, element (0,...,0) rt_origin of them from its start (0 unless a stride is negative; the
   pointer cuDNN is given is the buffer's start plus rt_origin scalars). */
int64_t rt_span(const struct rtensor *t);
int64_t rt_origin(const struct rtensor *t);
/* Advances idx over dims row-major; false after the last. */
bool rt_next(int rank, const int dims[], int idx[]);

/* v rounded to type t (nearest even, integers saturated, NaN to 0), as double. */
double ref_quantize(cudnnDataType_t t, double v);

/* Elementwise ops of the references: the cudnnOpTensorOp_t values, and REF_COPY for
   alpha1 * A (cudnnAddTensor, cudnnScaleTensor, cudnnTransformTensor). */
#define REF_COPY (-1)
double ref_op(int op, bool propagate_nan, double a, double b);

/* Buffers a, b, c_before and want hold their layouts' spans from the start (rt_origin).
   want[] (rt_span(ct) scalars) = c_before everywhere, then for every logical element of C:
   quantize(op(alpha1 * A, alpha2 * B) + beta * C) with A and B broadcast where their dims are 1
   (bt and b may be NULL for unary ops; C is not read when beta == 0). */
void ref_ewise(int op, bool propagate_nan, double alpha1, const struct rtensor *at, const void *a, double alpha2,
               const struct rtensor *bt, const void *b, double beta, const struct rtensor *ct,
               const void *c_before, double *want);

#endif /* OCD_TESTS_REF_TENSOR_OPS_H */
