/* activation.cu: activation forward and backward on the GPU.

   Two entries. cuda:activation_flat_vec16 serves the common case, every tensor one dense run of
   the same layout (packed NCHW, NHWC, ...) with 16-byte aligned pointers: each thread moves
   4 x 16 bytes of each input, all loads issued before the first use, with the mode a template
   parameter so that the per-element math is straight-line code; a pure streaming kernel that
   should run at copy bandwidth. cuda:activation_strided serves every other legal layout, one
   thread per element with the dim group decoded per tensor. Half and bfloat16 data compute in
   float with the GPU's fast exp, tanh and division (fastf below), whose errors lie below the
   rounding to 16 bits; with the exact float functions the smooth modes would be bound by
   arithmetic, not memory. Bytes moved: forward x and y (plus y again when beta != 0); backward
   y or x, dy and dx (plus dx when beta != 0). */
#include <type_traits>

#include "core/impl.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/activation.h"

namespace {

/* float with fast approximations: __expf (2 + 1.2 |x| ulps), tanh.approx (about 2^-11 relative)
   and __fdividef; expm1 stays exact (ELU near 0 would lose its digits otherwise). */
struct fastf {
    float v;
    fastf() = default;
    __host__ __device__ constexpr fastf(float x) : v(x) {}
    __host__ __device__ explicit operator float() const { return v; }
};
__host__ __device__ __forceinline__ fastf operator+(fastf a, fastf b) { return a.v + b.v; }
__host__ __device__ __forceinline__ fastf operator-(fastf a, fastf b) { return a.v - b.v; }
__host__ __device__ __forceinline__ fastf operator-(fastf a) { return -a.v; }
__host__ __device__ __forceinline__ fastf operator*(fastf a, fastf b) { return a.v * b.v; }
__host__ __device__ __forceinline__ bool operator>(fastf a, fastf b) { return a.v > b.v; }
__host__ __device__ __forceinline__ bool operator<(fastf a, fastf b) { return a.v < b.v; }
/* not isnan(a.v): inside this namespace that would name this very function */
__host__ __device__ __forceinline__ bool isnan(fastf a) { return a.v != a.v; }
__host__ __device__ __forceinline__ fastf expm1(fastf a) { return expm1f(a.v); }
#ifdef __CUDA_ARCH__
__device__ __forceinline__ fastf operator/(fastf a, fastf b) { return __fdividef(a.v, b.v); }
__device__ __forceinline__ fastf exp(fastf a) { return __expf(a.v); }
__device__ __forceinline__ fastf tanh(fastf a)
{
    float r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(a.v));
    return r;
}
#else
__host__ __forceinline__ fastf operator/(fastf a, fastf b) { return a.v / b.v; }
__host__ __forceinline__ fastf exp(fastf a) { return expf(a.v); }
__host__ __forceinline__ fastf tanh(fastf a) { return tanhf(a.v); }
#endif

/* The type the activation math runs in for storage type T. */
template <typename T> struct act_math { typedef typename ocd_compute<T>::type type; };
template <> struct act_math<__half> { typedef fastf type; };
template <> struct act_math<__nv_bfloat16> { typedef fastf type; };

template <typename C> struct act_args {
    C coef, swish_beta, alpha, beta;
    bool nan, blend;
};

template <typename C> act_args<C> args_of(const ocd_activation_problem *p)
{
    act_args<C> a;
    a.coef = (C)p->act.coef;
    a.swish_beta = (C)p->act.swish_beta;
    a.alpha = (C)p->io.alpha;
    a.beta = (C)p->io.beta;
    a.nan = p->act.nan_opt == CUDNN_PROPAGATE_NAN;
    a.blend = p->io.beta != 0;
    return a;
}

/* f(v) or dy f'(v) in the math type M of the data. */
template <typename M, typename C>
__device__ __forceinline__ C act_value(int mode, bool bwd, const act_args<C> &a, C v, C dy)
{
    M r = bwd ? ocd_act_backward<M>(mode, a.nan, M(a.coef), M(a.swish_beta), M(v), M(dy))
              : ocd_act_forward<M>(mode, a.nan, M(a.coef), M(a.swish_beta), M(v));
    return (C)r;
}


constexpr int VEC_THREADS = 256, VEC_UNROLL = 4;

/* n elements in nvec = n / V::N whole vectors, the last n % V::N elements handled one by one by
   the first threads of block 0. src1 is dy for backward, unused for forward. */
template <typename T, int MODE, bool BWD>
__global__ void __launch_bounds__(VEC_THREADS)
activation_vec(const T *src0, const T *src1, T *dst, int64_t n, act_args<typename ocd_compute<T>::type> a)
{
    typedef typename ocd_compute<T>::type C;
    typedef typename act_math<T>::type M;
    typedef ocd_vec16<T> V;
    int64_t nvec = n / V::N;
    int64_t first = (int64_t)blockIdx.x * VEC_THREADS * VEC_UNROLL + threadIdx.x;
    V v0[VEC_UNROLL], v1[VEC_UNROLL], out[VEC_UNROLL];
#pragma unroll
    for (int u = 0; u < VEC_UNROLL; u++) {
        int64_t i = first + u * VEC_THREADS;
        if (i < nvec) {
            v0[u] = reinterpret_cast<const V *>(src0)[i];
            if (BWD) v1[u] = reinterpret_cast<const V *>(src1)[i];
            if (a.blend) out[u] = reinterpret_cast<const V *>(dst)[i];
        }
    }
#pragma unroll
    for (int u = 0; u < VEC_UNROLL; u++) {
        int64_t i = first + u * VEC_THREADS;
        if (i >= nvec) continue;
#pragma unroll
        for (int k = 0; k < V::N; k++) {
            C r = act_value<M>(MODE, BWD, a, ocd_cuda_load(&v0[u].v[k]), BWD ? ocd_cuda_load(&v1[u].v[k]) : (C)0);
            ocd_cuda_blend(&out[u].v[k], r, a.alpha, a.beta, a.blend);
        }
        reinterpret_cast<V *>(dst)[i] = out[u];
    }
    if (blockIdx.x == 0 && threadIdx.x < n % V::N) {
        int64_t i = nvec * V::N + threadIdx.x;
        C r = act_value<M>(MODE, BWD, a, ocd_cuda_load(src0 + i), BWD ? ocd_cuda_load(src1 + i) : (C)0);
        ocd_cuda_blend(dst + i, r, a.alpha, a.beta, a.blend);
    }
}

/* One thread per element of the group, the mode a run-time value. */
template <typename T, bool BWD>
__global__ void __launch_bounds__(256)
activation_strided(const T *src0, const T *src1, T *dst, ocd_dim_group g, uint32_t n, int mode,
                   act_args<typename ocd_compute<T>::type> a)
{
    typedef typename ocd_compute<T>::type C;
    uint32_t i = blockIdx.x * 256u + threadIdx.x;
    if (i >= n) return;
    C v = ocd_cuda_load(src0 + ocd_cuda_group_offset(g, 0, i));
    C r = act_value<typename act_math<T>::type>(mode, BWD, a, v,
                                                BWD ? ocd_cuda_load(src1 + ocd_cuda_group_offset(g, 1, i)) : (C)0);
    ocd_cuda_blend(dst + ocd_cuda_group_offset(g, BWD ? 2 : 1, i), r, a.alpha, a.beta, a.blend);
}

template <typename T, int MODE> cudnnStatus_t launch_vec(cudnnHandle_t h, const ocd_activation_problem *p)
{
    int64_t n = ocd_dim_group_size(&p->g);
    unsigned blocks = ocd_cuda_blocks(n / ocd_vec16<T>::N, VEC_THREADS * VEC_UNROLL);
    const T *s0 = (const T *)p->io.src[0], *s1 = (const T *)p->io.src[1];
    auto a = args_of<typename ocd_compute<T>::type>(p);
    if (p->backward)
        activation_vec<T, MODE, true><<<blocks, VEC_THREADS, 0, h->stream>>>(s0, s1, (T *)p->io.dst, n, a);
    else
        activation_vec<T, MODE, false><<<blocks, VEC_THREADS, 0, h->stream>>>(s0, s1, (T *)p->io.dst, n, a);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* The strided kernel for storage type T. */
template <typename T> cudnnStatus_t launch_strided(cudnnHandle_t handle, const ocd_activation_problem *p)
{
    uint32_t n = (uint32_t)ocd_dim_group_size(&p->g);
    auto a = args_of<typename ocd_compute<T>::type>(p);
    const T *s0 = (const T *)p->io.src[0], *s1 = (const T *)p->io.src[1];
    unsigned blocks = ocd_cuda_blocks(n, 256);
    if (p->backward)
        activation_strided<T, true><<<blocks, 256, 0, handle->stream>>>(s0, s1, (T *)p->io.dst, p->g, n, p->act.mode, a);
    else
        activation_strided<T, false><<<blocks, 256, 0, handle->stream>>>(s0, s1, (T *)p->io.dst, p->g, n, p->act.mode, a);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C" const char *ocd_cuda_activation_vec_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_activation_problem *p = (const ocd_activation_problem *)problem;
    if (p->io.dtype == CUDNN_DATA_INT8) return OCD_REASON_DTYPE; /* int8 runs strided */
    if (!ocd_dim_group_is_flat(&p->g)) return OCD_REASON_NOT_PACKED;
    for (int i = 0; i < p->io.nsrc; i++)
        if (!ocd_cuda_aligned16(p->io.src[i])) return OCD_REASON_ALIGNMENT;
    return ocd_cuda_aligned16(p->io.dst) ? NULL : OCD_REASON_ALIGNMENT;
}

extern "C" cudnnStatus_t ocd_cuda_activation_vec(cudnnHandle_t handle, const void *problem, void *ws,
                                                     size_t ws_bytes)
{
    const ocd_activation_problem *p = (const ocd_activation_problem *)problem;
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        switch (p->act.mode) {
        case CUDNN_ACTIVATION_SIGMOID: return launch_vec<T, CUDNN_ACTIVATION_SIGMOID>(handle, p);
        case CUDNN_ACTIVATION_RELU: return launch_vec<T, CUDNN_ACTIVATION_RELU>(handle, p);
        case CUDNN_ACTIVATION_TANH: return launch_vec<T, CUDNN_ACTIVATION_TANH>(handle, p);
        case CUDNN_ACTIVATION_CLIPPED_RELU: return launch_vec<T, CUDNN_ACTIVATION_CLIPPED_RELU>(handle, p);
        case CUDNN_ACTIVATION_ELU: return launch_vec<T, CUDNN_ACTIVATION_ELU>(handle, p);
        default: return launch_vec<T, CUDNN_ACTIVATION_SWISH>(handle, p);
        }
    });
}

extern "C" cudnnStatus_t ocd_cuda_activation_strided(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    const ocd_activation_problem *p = (const ocd_activation_problem *)problem;
    /* int8: the forward only (the API refuses the backward), in float, stored rounded and saturated */
    if (p->io.dtype == CUDNN_DATA_INT8) return launch_strided<int8_t>(handle, p);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return launch_strided<T>(handle, p);
    });
}
