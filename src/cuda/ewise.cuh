/* ewise.cuh: what the CUDA elementwise engine (tensor_ops.cu), the transpose and fold kernels
   (transform.cu) and the reduction (reduce.cu) share: fast division by invariant divisors, the
   dispatch from cudnnDataType_t to storage types, and the ops of core/ewise.h on the device.

   Index arithmetic is 32-bit: a descriptor holds at most 2^31 - 1 elements and its strides span
   at most that many scalars (core/tensor.c), so every linear index and offset fits. Division by
   a tensor extent uses a multiply-high by a precomputed magic number instead of the much slower
   integer division. */
#ifndef OCD_CUDA_EWISE_CUH
#define OCD_CUDA_EWISE_CUH

#include <type_traits>

#include "core/ewise.h"
#include "core/impl.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/typed.cuh"

/* n / d and n % d for n < 2^31 and 1 <= d < 2^31 (round-up method: with s = ceil(log2 d) and
   m = floor(2^32 * (2^s - d) / d) + 1, n / d = (umulhi(n, m) + n) >> s). */
struct ocd_fastdiv {
    uint32_t d, m, s;
};

static inline ocd_fastdiv ocd_fastdiv_make(uint32_t d)
{
    ocd_fastdiv f;
    f.d = d;
    f.s = 0;
    while ((1ull << f.s) < d) f.s++;
    f.m = (uint32_t)(((1ull << 32) * ((1ull << f.s) - d)) / d + 1);
    return f;
}

/* Host-callable too: kernels whose index arithmetic also runs on the host (the convolution's
   loaders, see cuda/conv_igemm.cuh) share it. */
__host__ __device__ __forceinline__ uint32_t ocd_fastdiv_div(const ocd_fastdiv &f, uint32_t n)
{
#ifdef __CUDA_ARCH__
    return (__umulhi(n, f.m) + n) >> f.s;
#else
    return ((uint32_t)(((uint64_t)n * f.m) >> 32) + n) >> f.s;
#endif
}

/* n / d, with n % d in *rem. */
__host__ __device__ __forceinline__ uint32_t ocd_fastdiv_divmod(const ocd_fastdiv &f, uint32_t n, uint32_t *rem)
{
    uint32_t q = ocd_fastdiv_div(f, n);
    *rem = n - q * f.d;
    return q;
}

/* ---- data types ---------------------------------------------------------------------------- */

template <typename T> struct ocd_type_tag { typedef T type; };

/* Calls fn(ocd_type_tag<T>()) for the storage type of t; false for a type it does not know. */
template <typename F> static bool ocd_cuda_dispatch_type(cudnnDataType_t t, F fn)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: fn(ocd_type_tag<float>()); return true;
    case CUDNN_DATA_DOUBLE: fn(ocd_type_tag<double>()); return true;
    case CUDNN_DATA_HALF: fn(ocd_type_tag<__half>()); return true;
    case CUDNN_DATA_BFLOAT16: fn(ocd_type_tag<__nv_bfloat16>()); return true;
    case CUDNN_DATA_INT8: fn(ocd_type_tag<int8_t>()); return true;
    case CUDNN_DATA_UINT8: fn(ocd_type_tag<uint8_t>()); return true;
    case CUDNN_DATA_INT32: fn(ocd_type_tag<int32_t>()); return true;
    default: return false;
    }
}

/* Calls fn(tag<Ty>, tag<Ta>) for the (output, input) storage types the API lets through: equal
   types, and the mixed float / half, bfloat16, int8 pairs of cudnnOpTensor's table. Instantiating
   only these keeps the kernels few. */
template <typename F> static bool ocd_cuda_dispatch_pair(cudnnDataType_t ty, cudnnDataType_t ta, F fn)
{
    if (ty == ta) return ocd_cuda_dispatch_type(ty, [&](auto t) { fn(t, t); });
    if (ty == CUDNN_DATA_FLOAT)
        return ta != CUDNN_DATA_DOUBLE && ta != CUDNN_DATA_UINT8 && ta != CUDNN_DATA_INT32 &&
               ocd_cuda_dispatch_type(ta, [&](auto t) { fn(ocd_type_tag<float>(), t); });
    if (ta == CUDNN_DATA_FLOAT)
        return ty != CUDNN_DATA_DOUBLE && ty != CUDNN_DATA_UINT8 && ty != CUDNN_DATA_INT32 &&
               ocd_cuda_dispatch_type(ty, [&](auto t) { fn(t, ocd_type_tag<float>()); });
    return false;
}

/* Whether the pair is one the dispatch instantiates. */
static inline bool ocd_cuda_pair_supported(cudnnDataType_t ty, cudnnDataType_t ta)
{
    return ocd_cuda_dispatch_pair(ty, ta, [](auto, auto) {});
}

/* Calls fn(tag<Ty>, tag<Ta>) for any two storage types: the conversions of cudnnTransformTensor
   (and the copies of cudnnAddTensor), which the strided path alone instantiates for every pair. */
template <typename F> static bool ocd_cuda_dispatch_any_pair(cudnnDataType_t ty, cudnnDataType_t ta, F fn)
{
    bool known = false;
    ocd_cuda_dispatch_type(ty, [&](auto y) { known = ocd_cuda_dispatch_type(ta, [&](auto a) { fn(y, a); }); });
    return known;
}

/* ---- the ops ---------------------------------------------------------------------------------- */

/* r = op(x, y) for already scaled operands x = alpha1 * a, y = alpha2 * b. Host-callable, as
   are the next two, for the CPU emulation of the elementwise kernels. */
template <typename C> __host__ __device__ __forceinline__ C ocd_cuda_ewise_op(enum ocd_ewise_op op, bool propagate, C x, C y)
{
    switch (op) {
    case OCD_EWISE_ADD: return x + y;
    case OCD_EWISE_MUL: return x * y;
    case OCD_EWISE_MIN:
        if (propagate && (x != x || y != y)) return x + y; /* NaN */
        return x != x ? y : y != y ? x : (x < y ? x : y);
    case OCD_EWISE_MAX:
        if (propagate && (x != x || y != y)) return x + y;
        return x != x ? y : y != y ? x : (x > y ? x : y);
    case OCD_EWISE_SQRT: return sqrt(x);
    case OCD_EWISE_NOT: return C(1) - x;
    default: return x; /* COPY */
    }
}

/* The scalars of an elementwise problem in its compute type. */
template <typename C> struct ocd_cuda_scales {
    C alpha1, alpha2, beta;
    enum ocd_ewise_op op;
    bool propagate;
};

template <typename C> static inline ocd_cuda_scales<C> ocd_cuda_scales_of(const struct ocd_ewise *e)
{
    ocd_cuda_scales<C> s;
    s.alpha1 = (C)e->alpha1;
    s.alpha2 = (C)e->alpha2;
    s.beta = (C)e->beta;
    s.op = e->op;
    s.propagate = e->propagate_nan;
    return s;
}

/* op(alpha1 * a, alpha2 * b) + beta * y, y (the old value) used only when blend, which callers
   set to beta != 0 (b is ignored by the unary ops). Kernels that pass op, or blend, as a
   compile-time constant get the switch, or the test, folded away. */
template <typename C>
__host__ __device__ __forceinline__ C ocd_cuda_ewise_value(enum ocd_ewise_op op, const ocd_cuda_scales<C> &s, C a, C b,
                                                           C y, bool blend)
{
    C r = ocd_cuda_ewise_op<C>(op, s.propagate, s.alpha1 * a, s.alpha2 * b);
    if (blend) r += s.beta * y;
    return r;
}

/* One element: y = op(alpha1 * a, alpha2 * b) + beta * y, y read only when beta != 0. a and b
   are loaded by the caller. */
template <typename Ty, typename C>
__host__ __device__ __forceinline__ void ocd_cuda_ewise_apply(enum ocd_ewise_op op, const ocd_cuda_scales<C> &s, Ty *y,
                                                              C a, C b)
{
    const bool blend = s.beta != C(0);
    ocd_cuda_store<Ty, C>(y, ocd_cuda_ewise_value<C>(op, s, a, b, blend ? ocd_cuda_load_in<C, Ty>(y) : C(0), blend));
}

/* Calls fn(std::integral_constant<int, op>()) for the op, so that kernels can take it as a
   template argument. */
template <typename F> static void ocd_cuda_dispatch_op(enum ocd_ewise_op op, F fn)
{
    switch (op) {
    case OCD_EWISE_ADD: fn(std::integral_constant<int, OCD_EWISE_ADD>()); return;
    case OCD_EWISE_MUL: fn(std::integral_constant<int, OCD_EWISE_MUL>()); return;
    case OCD_EWISE_MIN: fn(std::integral_constant<int, OCD_EWISE_MIN>()); return;
    case OCD_EWISE_MAX: fn(std::integral_constant<int, OCD_EWISE_MAX>()); return;
    case OCD_EWISE_SQRT: fn(std::integral_constant<int, OCD_EWISE_SQRT>()); return;
    case OCD_EWISE_NOT: fn(std::integral_constant<int, OCD_EWISE_NOT>()); return;
    default: fn(std::integral_constant<int, OCD_EWISE_COPY>()); return;
    }
}

#endif /* OCD_CUDA_EWISE_CUH */
