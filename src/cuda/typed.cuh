/* typed.cuh: scalar types on the device, and passing tensor views to kernels.

   ocd_cuda_load<T>/ocd_cuda_store<T> convert between a storage type and float (double stays
   double); stores to integer types round to nearest even and saturate, NaN giving 0, as the
   host backend's ocd_host_store does (host/typed.h): the one device store every kernel uses. struct ocd_cuda_view is a
   kernel-argument copy of a host ocd_tensor_view. */
#ifndef OCD_CUDA_TYPED_CUH
#define OCD_CUDA_TYPED_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "core/tensor.h"

/* The compute type of a storage type: double for double, float for everything else. */
template <typename T> struct ocd_compute { typedef float type; };
template <> struct ocd_compute<double> { typedef double type; };

/* Host-callable as well, for the CPU emulations of kernels (cuda/tensor_ops.cu): the host
   branch rounds to nearest even (rintf in the default rounding mode) and saturates as the
   device's cvt.rni does. */
template <typename T> __host__ __device__ __forceinline__ typename ocd_compute<T>::type ocd_cuda_load(const T *p)
{
    return (typename ocd_compute<T>::type)(*p);
}
template <> __host__ __device__ __forceinline__ float ocd_cuda_load<__half>(const __half *p)
{
    return __half2float(*p);
}
template <> __host__ __device__ __forceinline__ float ocd_cuda_load<__nv_bfloat16>(const __nv_bfloat16 *p)
{
    return __bfloat162float(*p);
}

/* v rounded to the nearest integer (ties to even), clamped to [lo, hi], NaN giving 0. */
__host__ __device__ __forceinline__ int ocd_cuda_round_clamp(float v, int lo, int hi)
{
#ifdef __CUDA_ARCH__
    return min(max(__float2int_rn(v), lo), hi);
#else
    if (v != v) return 0;
    float r = rintf(v);
    return r <= (float)lo ? lo : r >= (float)hi ? hi : (int)r;
#endif
}

template <typename T, typename C> __host__ __device__ __forceinline__ void ocd_cuda_store(T *p, C v)
{
    *p = (T)v;
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<__half, float>(__half *p, float v)
{
    *p = __float2half_rn(v);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<__nv_bfloat16, float>(__nv_bfloat16 *p, float v)
{
    *p = __float2bfloat16_rn(v);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<int8_t, float>(int8_t *p, float v)
{
    *p = (int8_t)ocd_cuda_round_clamp(v, -128, 127);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<uint8_t, float>(uint8_t *p, float v)
{
    *p = (uint8_t)ocd_cuda_round_clamp(v, 0, 255);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<int32_t, float>(int32_t *p, float v)
{
#ifdef __CUDA_ARCH__
    *p = __float2int_rn(v); /* saturates in hardware; NaN gives 0 */
#else
    *p = v != v ? 0 : v >= 2147483648.0f ? INT32_MAX : v <= -2147483648.0f ? INT32_MIN : (int32_t)rintf(v);
#endif
}

/* A tensor view, by value, for kernel arguments. */
struct ocd_cuda_view {
    int rank, vect;
    int64_t dims[OCD_MAX_DIMS];
    int64_t strides[OCD_MAX_DIMS];
};

static inline ocd_cuda_view ocd_cuda_view_of(const struct ocd_tensor_view *v)
{
    ocd_cuda_view c;
    c.rank = v->rank;
    c.vect = v->vect;
    for (int d = 0; d < OCD_MAX_DIMS; d++) {
        c.dims[d] = d < v->rank ? v->dims[d] : 1;
        c.strides[d] = d < v->rank ? v->strides[d] : 0;
    }
    return c;
}

/* Scalar offset of the element at row-major linear position `linear` of the view's dims. */
__device__ __forceinline__ int64_t ocd_cuda_offset(const ocd_cuda_view &v, int64_t linear)
{
    int64_t off = 0;
    for (int d = v.rank - 1; d >= 0; d--) {
        int64_t i = linear % v.dims[d];
        linear /= v.dims[d];
        off += (d == 1 && v.vect > 1) ? (i / v.vect) * v.strides[1] + i % v.vect : i * v.strides[d];
    }
    return off;
}

#endif /* OCD_CUDA_TYPED_CUH */
