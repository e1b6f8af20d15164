/* typed.cuh: scalar types on the device, and passing tensor views to kernels.

   ocd_cuda_load<T>/ocd_cuda_store<T, C> convert between a storage type and the compute type C
   (float, or double); every store rounds once, to nearest even, and stores to integer types
   saturate, NaN giving 0, as the host backend's ocd_host_store does (host/typed.h): the one
   device store every kernel uses. A double goes to half and bfloat16 through core/dtype.h's
   round-to-odd float, so that it is not rounded twice. struct ocd_cuda_view is a
   kernel-argument copy of a host ocd_tensor_view. */
#ifndef OCD_CUDA_TYPED_CUH
#define OCD_CUDA_TYPED_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <type_traits>

#include "core/dtype.h"
#include "core/tensor.h"

/* The compute type of a storage type: double for double, float for everything else. */
template <typename T> struct ocd_compute { typedef float type; };
template <> struct ocd_compute<double> { typedef double type; };

/* The compute type of an elementwise kernel that writes Ty from Ta (and reads y back as Ty):
   double when either is double or int32, float otherwise. Through float an int32 would be
   rounded before the result's own rounding (2^24 + 1 to 2^24, and an int32 -> bfloat16
   conversion could meet a tie that its value was not on); double holds every value of every
   storage type exactly. */
template <typename Ty, typename Ta> struct ocd_compute_pair {
    static constexpr bool wide = std::is_same<Ty, double>::value || std::is_same<Ta, double>::value ||
                                 std::is_same<Ty, int32_t>::value || std::is_same<Ta, int32_t>::value;
    typedef typename std::conditional<wide, double, float>::type type;
};

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

/* *p in the compute type C (ocd_compute_pair): exact for every storage type when C is double. */
template <typename C, typename T> __host__ __device__ __forceinline__ C ocd_cuda_load_in(const T *p)
{
    if constexpr (std::is_same<T, int32_t>::value) return (C)*p; /* not through float */
    else return (C)ocd_cuda_load<T>(p);
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
__host__ __device__ __forceinline__ int ocd_cuda_round_clamp(double v, int lo, int hi)
{
#ifdef __CUDA_ARCH__
    return min(max(__double2int_rn(v), lo), hi); /* saturates to the int range; NaN gives 0 */
#else
    if (v != v) return 0;
    double r = rint(v);
    return r <= (double)lo ? lo : r >= (double)hi ? hi : (int)r;
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
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<__half, double>(__half *p, double v)
{
    *p = __float2half_rn(ocd_double_to_float_odd(v));
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<__nv_bfloat16, double>(__nv_bfloat16 *p, double v)
{
    *p = __float2bfloat16_rn(ocd_double_to_float_odd(v));
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<int8_t, double>(int8_t *p, double v)
{
    *p = (int8_t)ocd_cuda_round_clamp(v, -128, 127);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<uint8_t, double>(uint8_t *p, double v)
{
    *p = (uint8_t)ocd_cuda_round_clamp(v, 0, 255);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<int32_t, double>(int32_t *p, double v)
{
    *p = ocd_cuda_round_clamp(v, INT32_MIN, INT32_MAX);
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
