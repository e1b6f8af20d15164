/* softmax.cuh: what the CUDA softmax kernel files share (the math is in problem/softmax.h).

   Every kernel reads each input once from memory and writes the output once, except where a
   slice is too long to stay on chip. A softmax moves little data per element, so what decides
   the speed is how many bytes each multiprocessor keeps in flight: the first entry of each
   layout keeps several 16-byte loads in flight per thread. The kernels come in two families:
   contiguous slices (softmax_rows.cu, with the any-layout fallback) and slices strided over a
   contiguous inner dim (softmax_cols.cu).

   Statistics are those of problem/softmax.h, in float (double for double data); where the slice
   stays on chip, the forward computes each e^(x - m) once and keeps it for the output (16-bit
   tiles compute it twice rather than round it). 16-bit data use the fast __expf (rows_packed
   2^x, of the same accuracy). An element of -inf (a masked logit) adds nothing to the sums; a NaN
   makes its slice NaN.

   Here: the kernel arguments (sm_args), the statistics and their warp and block reductions. */
#ifndef OCD_CUDA_SOFTMAX_CUH
#define OCD_CUDA_SOFTMAX_CUH

#include <type_traits>

#include "core/dtype.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/softmax.h"

namespace {

template <typename T> struct sm_args {
    typedef typename ocd_compute<T>::type C;
    const T *src0, *src1; /* forward x; backward y, dy */
    T *dst;
    ocd_dim_group slice, batch;
    uint32_t len, rows; /* elements per slice, slices */
    C alpha, beta;
    bool blend, log;
};

template <typename T> sm_args<T> args_of(const ocd_softmax_problem *p)
{
    typedef typename ocd_compute<T>::type C;
    sm_args<T> a;
    a.src0 = (const T *)p->io.src[0];
    a.src1 = (const T *)p->io.src[1];
    a.dst = (T *)p->io.dst;
    a.slice = p->slice;
    a.batch = p->batch;
    a.len = (uint32_t)ocd_dim_group_size(&p->slice);
    a.rows = (uint32_t)ocd_dim_group_size(&p->batch);
    a.alpha = (C)p->io.alpha;
    a.beta = (C)p->io.beta;
    a.blend = p->io.beta != 0;
    a.log = p->log;
    return a;
}

/* ---- statistics ------------------------------------------------------------------------------- */

/* e^x in the compute type of storage type T: the fast __expf for 16-bit data, whose error lies
   below their rounding (softmax would otherwise be bound by arithmetic there); exact otherwise. */
template <typename T> struct sm_math {
    static __device__ __forceinline__ typename ocd_compute<T>::type ex(typename ocd_compute<T>::type x) { return exp(x); }
};
template <> struct sm_math<__half> {
    static __device__ __forceinline__ float ex(float x) { return __expf(x); }
};
template <> struct sm_math<__nv_bfloat16> {
    static __device__ __forceinline__ float ex(float x) { return __expf(x); }
};

/* Forward: the running maximum m and the sum s of e^(v - m). Backward: s alone. */
template <typename C> struct stat {
    C m, s;
};

template <typename C> __device__ __forceinline__ C neg_inf()
{
    return -(C)INFINITY;
}

/* e^(v - m), 0 for v = -inf (so that -inf - -inf never appears). */
template <typename T, typename C> __device__ __forceinline__ C term(C v, C m)
{
    return v == neg_inf<C>() ? (C)0 : sm_math<T>::ex(v - m);
}

template <typename T, typename C> __device__ __forceinline__ void add(stat<C> &st, C v)
{
    if (v > st.m) {
        st.s = st.s * term<T>(st.m, v) + (C)1;
        st.m = v;
    } else {
        st.s += term<T>(v, st.m);
    }
}

/* s rescaled from maximum m to maximum to (m <= to); 0 stays 0 (an empty part). */
template <typename T, typename C> __device__ __forceinline__ C rescale(C s, C m, C to)
{
    return s == (C)0 ? (C)0 : s * term<T>(m, to);
}

/* Sum or maximum over each aligned group of W lanes (a power of two, at most 32), in every lane of
   the group; the whole warp takes part. With LO > 1, over the lanes of the group that agree in
   their lane index modulo LO (a power of two below W). */
template <int W = 32, int LO = 1, typename C> __device__ __forceinline__ C warp_sum(C v)
{
#pragma unroll
    for (int o = W / 2; o >= LO; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <int W = 32, int LO = 1, typename C> __device__ __forceinline__ C warp_max(C v)
{
#pragma unroll
    for (int o = W / 2; o >= LO; o >>= 1) {
        C w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w > v ? w : v;
    }
    return v;
}

/* The combination of the lanes' forward statistics, in every lane. */
template <typename T, typename C> __device__ __forceinline__ stat<C> warp_combine(stat<C> st)
{
    C m = warp_max(st.m);
    return stat<C>{m, warp_sum(rescale<T>(st.s, st.m, m))};
}

/* Sum or maximum over the block, in every thread; red holds 33 values. */
template <bool MAX, typename C> __device__ C block_reduce(C v, C *red)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? red[lane] : MAX ? neg_inf<C>() : (C)0;
        v = MAX ? warp_max(v) : warp_sum(v);
        if (lane == 0) red[32] = v;
    }
    __syncthreads();
    v = red[32];
    __syncthreads(); /* red may be used again */
    return v;
}

template <typename T, typename C> __device__ stat<C> block_combine(stat<C> st, C *red)
{
    C m = block_reduce<true>(st.m, red);
    return stat<C>{m, block_reduce<false>(rescale<T>(st.s, st.m, m), red)};
}

/* What the output pass needs: forward (m, 1 / S) or, for LOG, (m, m + log S); backward (-, sum). */
template <bool BWD, typename C> __device__ __forceinline__ stat<C> finish(const stat<C> &st, bool lg)
{
    if (BWD) return st;
    return stat<C>{st.m, lg ? st.m + log(st.s) : (C)1 / st.s};
}

/* The result at one element, from a = x (forward) or y, b = dy (backward). PRE: the forward
   (but LOG) has already replaced a by e^(a - m). */
template <typename T, bool BWD, bool PRE, typename C> __device__ __forceinline__ C result(const stat<C> &k, bool lg, C a, C b)
{
    if (BWD) return lg ? b - sm_math<T>::ex(a) * k.s : a * (b - k.s);
    if (lg) return a - k.s;
    return (PRE ? a : sm_math<T>::ex(a - k.m)) * k.s;
}

/* The backward statistic of one element. */
template <typename C> __device__ __forceinline__ C dot_term(bool lg, C a, C b)
{
    return lg ? b : a * b;
}

constexpr int WARP_ROWS = 8; /* warps per block */

const ocd_softmax_problem *problem_of(const void *problem)
{
    return (const ocd_softmax_problem *)problem;
}

/* int8 data (the forward only) runs in cuda:softmax_generic alone: the other entries decline it. */
const char *not_int8(const ocd_softmax_problem *p)
{
    return p->io.dtype == CUDNN_DATA_INT8 ? OCD_REASON_DTYPE : NULL;
}

} // namespace

#endif /* OCD_CUDA_SOFTMAX_CUH */
