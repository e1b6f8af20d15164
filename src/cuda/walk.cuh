/* walk.cuh: what the CUDA kernels of several ops share: calling a templated launcher with the
   storage type of a cudnnDataType_t, 16-byte vectors of a storage type, the offsets of an element
   of a dim group (core/dimgroup.h), and the alpha/beta blend.

   Index arithmetic: a tensor holds at most 2^31 - 1 elements (tensor.c), so element positions
   and dims fit in 32 bits and are divided as such; offsets are 64-bit, since strides may spread
   those elements over more than 2^31 scalars. */
#ifndef OCD_CUDA_WALK_CUH
#define OCD_CUDA_WALK_CUH

#include "core/dimgroup.h"
#include "cuda/check.cuh"
#include "cuda/typed.cuh"

/* Calls f with a null T* for the storage type T of a floating-point cudnnDataType_t and returns
   its status: ocd_cuda_dispatch_float(t, [&](auto *tag) { ... }). For the ops that take float,
   double, half and bfloat16 only (the API has checked t): unlike ocd_cuda_dispatch_type
   (cuda/ewise.cuh) it instantiates no integer kernels. */
template <typename F> static inline cudnnStatus_t ocd_cuda_dispatch_float(cudnnDataType_t t, F &&f)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE: return f((double *)nullptr);
    case CUDNN_DATA_HALF: return f((__half *)nullptr);
    case CUDNN_DATA_BFLOAT16: return f((__nv_bfloat16 *)nullptr);
    default: return f((float *)nullptr);
    }
}

/* 16 bytes of a storage type, loaded and stored as one access. */
template <typename T> struct alignas(16) ocd_vec16 {
    static constexpr int N = 16 / sizeof(T);
    T v[N];
};

/* V consecutive scalars at p (V = 1, or a whole 16-byte vector, V = ocd_vec16<T>::N) in the
   compute type. */
template <typename T, int V>
__device__ __forceinline__ void ocd_cuda_load_n(const T *p, typename ocd_compute<T>::type *out)
{
    if (V == 1) {
        out[0] = ocd_cuda_load(p);
    } else {
        ocd_vec16<T> v = *reinterpret_cast<const ocd_vec16<T> *>(p);
#pragma unroll
        for (int k = 0; k < V; k++) out[k] = ocd_cuda_load(&v.v[k]);
    }
}

static inline bool ocd_cuda_aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* Offset in tensor t of the element at row-major position `linear` of the group. */
__device__ __forceinline__ int64_t ocd_cuda_group_offset(const ocd_dim_group &g, int t, uint32_t linear)
{
    int64_t off = 0;
    for (int d = g.rank - 1; d >= 0; d--) {
        uint32_t n = (uint32_t)g.dims[d];
        off += (int64_t)(linear % n) * g.strides[t][d];
        linear /= n;
    }
    return off;
}

/* alpha * r + beta * *y, where y is read only when blend (beta != 0). */
template <typename T, typename C> __device__ __forceinline__ void ocd_cuda_blend(T *y, C r, C alpha, C beta, bool blend)
{
    ocd_cuda_store(y, blend ? alpha * r + beta * ocd_cuda_load(y) : alpha * r);
}

/* p[k] = alpha * r[k] + beta * p[k] for k < V (as ocd_cuda_load_n), p read only when blend. */
template <typename T, int V, typename C>
__device__ __forceinline__ void ocd_cuda_blend_n(T *p, const C *r, C alpha, C beta, bool blend)
{
    if (V == 1) {
        ocd_cuda_blend(p, r[0], alpha, beta, blend);
    } else {
        ocd_vec16<T> v;
        if (blend) v = *reinterpret_cast<const ocd_vec16<T> *>(p);
#pragma unroll
        for (int k = 0; k < V; k++) ocd_cuda_blend(&v.v[k], r[k], alpha, beta, blend);
        *reinterpret_cast<ocd_vec16<T> *>(p) = v;
    }
}

/* Blocks for n items at `per_block` items a block, at least 1. */
static inline unsigned ocd_cuda_blocks(int64_t n, int64_t per_block)
{
    int64_t b = (n + per_block - 1) / per_block;
    return (unsigned)(b < 1 ? 1 : b);
}

#endif /* OCD_CUDA_WALK_CUH */
