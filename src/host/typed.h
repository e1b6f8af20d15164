/* typed.h: reading and writing scalars of any cudnnDataType_t on the host, and walking a view.

   Generic paths load every scalar as float (or double for double data), compute, and store with
   one rounding to the destination type (half and bfloat16 through core/dtype.h's round-to-odd
   float, so that a double result is not rounded twice); integer stores round to nearest even and
   saturate, NaN giving 0, as cuDNN's conversions do. Fast paths for a particular type should be written beside them, not instead. */
#ifndef OCD_HOST_TYPED_H
#define OCD_HOST_TYPED_H

#include <math.h>

#include "core/dtype.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline double ocd_host_load(cudnnDataType_t t, const void *base, int64_t i)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return ((const float *)base)[i];
    case CUDNN_DATA_DOUBLE: return ((const double *)base)[i];
    case CUDNN_DATA_HALF: return ocd_half_to_float(((const uint16_t *)base)[i]);
    case CUDNN_DATA_BFLOAT16: return ocd_bf16_to_float(((const uint16_t *)base)[i]);
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32: return ((const int8_t *)base)[i];
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: return ((const uint8_t *)base)[i];
    case CUDNN_DATA_INT32: return ((const int32_t *)base)[i];
    case CUDNN_DATA_INT64: return (double)((const int64_t *)base)[i];
    }
    return 0;
}

static inline double ocd_host_saturate(double v, double lo, double hi)
{
    if (v != v) return 0; /* NaN converts to 0 */
    v = nearbyint(v);
    return v < lo ? lo : v > hi ? hi : v;
}

static inline void ocd_host_store(cudnnDataType_t t, void *base, int64_t i, double v)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: ((float *)base)[i] = (float)v; return;
    case CUDNN_DATA_DOUBLE: ((double *)base)[i] = v; return;
    case CUDNN_DATA_HALF: ((uint16_t *)base)[i] = ocd_double_to_half(v); return;
    case CUDNN_DATA_BFLOAT16: ((uint16_t *)base)[i] = ocd_double_to_bf16(v); return;
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32:
        ((int8_t *)base)[i] = (int8_t)ocd_host_saturate(v, -128, 127); return;
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4:
        ((uint8_t *)base)[i] = (uint8_t)ocd_host_saturate(v, 0, 255); return;
    case CUDNN_DATA_INT32: ((int32_t *)base)[i] = (int32_t)ocd_host_saturate(v, -2147483648.0, 2147483647.0); return;
    case CUDNN_DATA_INT64: ((int64_t *)base)[i] = (int64_t)ocd_host_saturate(v, -9.2233720368547748e18, 9.2233720368547748e18); return;
    }
}

/* dst = alpha * v + beta * dst at scalar i, without reading dst when beta is 0 (DESIGN.md 2: NaN
   already in an output must not leak through a zero beta). */
static inline void ocd_host_blend(cudnnDataType_t t, void *base, int64_t i, double alpha, double beta, double v)
{
    double out = alpha * v;
    if (beta != 0) out += beta * ocd_host_load(t, base, i);
    ocd_host_store(t, base, i, out);
}

/* Scalar offset of the element with coordinates idx[0..rank-1] (tensor.h: the vector split). */
static inline int64_t ocd_view_offset_of(const struct ocd_tensor_view *v, const int64_t idx[])
{
    int64_t off = 0;
    for (int d = 0; d < v->rank; d++) {
        if (d == 1 && v->vect > 1) off += (idx[1] / v->vect) * v->strides[1] + idx[1] % v->vect;
        else off += idx[d] * v->strides[d];
    }
    return off;
}

/* Coordinates of the element at row-major linear position `linear` of the view's dims. */
static inline void ocd_view_coords(const struct ocd_tensor_view *v, int64_t linear, int64_t idx[])
{
    for (int d = v->rank - 1; d >= 0; d--) {
        idx[d] = linear % v->dims[d];
        linear /= v->dims[d];
    }
}

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_TYPED_H */
