/* tensor_ops.c: reference layouts and elementwise references (see tensor_ops.h). Plain loops in
   double, written from the cuDNN documentation, sharing nothing with src/. */
#include "ref/tensor_ops.h"

#include "test.h"

#include <math.h>
#include <string.h>

int rt_vect(cudnnDataType_t t)
{
    return t == CUDNN_DATA_INT8x32 ? 32 : (t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_UINT8x4) ? 4 : 1;
}

void rt_packed(struct rtensor *t, cudnnDataType_t dtype, cudnnTensorFormat_t format, int rank, const int dims[])
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    t->vect = rt_vect(dtype);
    memcpy(t->dims, dims, sizeof(int) * (size_t)rank);
    if (format == CUDNN_TENSOR_NHWC) {
        int s = dims[1];
        t->strides[1] = 1;
        for (int d = rank - 1; d >= 2; d--) {
            t->strides[d] = s;
            s *= dims[d];
        }
        t->strides[0] = s;
        return;
    }
    int s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        t->strides[d] = s;
        s *= d == 1 ? dims[d] / t->vect : dims[d];
    }
}

void rt_gapped(struct rtensor *t, cudnnDataType_t dtype, int rank, const int dims[], const int order[], int gap)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    t->vect = rt_vect(dtype);
    memcpy(t->dims, dims, sizeof(int) * (size_t)rank);
    int span = 1;
    for (int i = rank - 1; i >= 0; i--) {
        int d = order[i];
        t->strides[d] = span + (i == rank - 1 ? 0 : gap);
        span = t->strides[d] * (d == 1 ? dims[d] / t->vect : dims[d]);
    }
}

int64_t rt_offset(const struct rtensor *t, const int idx[])
{
    int64_t off = 0;
    for (int d = 0; d < t->rank; d++) {
        int i = t->dims[d] == 1 ? 0 : idx[d];
        if (d == 1 && t->vect > 1) off += (int64_t)(i / t->vect) * t->strides[1] * t->vect + i % t->vect;
        else off += (int64_t)i * t->strides[d] * t->vect;
    }
    return off;
}

int64_t rt_count(const struct rtensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= t->dims[d];
    return n;
}

/* The lowest and highest scalar offsets of an element's start (a negative stride reaches below
   element (0,...,0)). */
static void rt_bounds(const struct rtensor *t, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    for (int d = 0; d < t->rank; d++) {
        int64_t steps = d == 1 ? t->dims[d] / t->vect - 1 : t->dims[d] - 1;
        int64_t reach = steps * t->strides[d] * t->vect;
        if (reach < 0) *lo += reach;
        else *hi += reach;
    }
}

int64_t rt_span(const struct rtensor *t)
{
    /* from the lowest element to the highest, plus the rest of its vector */
    int64_t lo, hi;
    rt_bounds(t, &lo, &hi);
    return hi - lo + t->vect;
}

int64_t rt_origin(const struct rtensor *t)
{
    int64_t lo, hi;
    rt_bounds(t, &lo, &hi);
    return -lo;
}

bool rt_next(int rank, const int dims[], int idx[])
{
    for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d]) return true;
        idx[d] = 0;
    }
    return false;
}

double ref_quantize(cudnnDataType_t t, double v)
{
    unsigned char tmp[8];
    tstore(t, tmp, 0, v);
    return tload(t, tmp, 0);
}

double ref_op(int op, bool propagate_nan, double a, double b)
{
    switch (op) {
    case CUDNN_OP_TENSOR_ADD: return a + b;
    case CUDNN_OP_TENSOR_MUL: return a * b;
    case CUDNN_OP_TENSOR_MIN:
    case CUDNN_OP_TENSOR_MAX:
        if (isnan(a) || isnan(b)) return propagate_nan ? NAN : isnan(a) ? b : a;
        return op == CUDNN_OP_TENSOR_MIN ? (a < b ? a : b) : (a > b ? a : b);
    case CUDNN_OP_TENSOR_SQRT: return sqrt(a);
    case CUDNN_OP_TENSOR_NOT: return 1.0 - a; /* what the real library computes */
    default: return a;
    }
}

void ref_ewise(int op, bool propagate_nan, double alpha1, const struct rtensor *at, const void *a, double alpha2,
               const struct rtensor *bt, const void *b, double beta, const struct rtensor *ct,
               const void *c_before, double *want)
{
    int64_t span = rt_span(ct);
    for (int64_t i = 0; i < span; i++) want[i] = tload(ct->dtype, c_before, i);
    int idx[RT_MAX_DIMS] = {0};
    do {
        double x = alpha1 * tload(at->dtype, a, rt_origin(at) + rt_offset(at, idx));
        double y = bt ? alpha2 * tload(bt->dtype, b, rt_origin(bt) + rt_offset(bt, idx)) : 0;
        int64_t o = rt_origin(ct) + rt_offset(ct, idx);
        double r = ref_op(op, propagate_nan, x, y);
        if (beta != 0) r += beta * tload(ct->dtype, c_before, o);
        want[o] = ref_quantize(ct->dtype, r);
    } while (rt_next(ct->rank, ct->dims, idx));
}
