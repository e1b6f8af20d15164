/* rnn_unit.cuh: what the recurrent networks' CUDA kernels (cuda/rnn.cu, the step loop's
   pointwise steps; cuda/rnn_persist.cu and rnn_persist_cluster.cu, the persistent recurrence) ask
   of one unit of a step: whether its sequence is active and at which time of its own, the
   position of that time in the packed or padded layout, and the gate input W x + b_W. __host__
   __device__, so that the emulations under tests/emulate run them on the CPU. */
#ifndef OCD_CUDA_RNN_UNIT_CUH
#define OCD_CUDA_RNN_UNIT_CUH

#include "cuda/types.cuh"
#include "problem/rnn_kernels.h"

namespace {

/* Whether a sequence of length len is active at step `step`, and at which time t of its own. */
__host__ __device__ __forceinline__ bool step_active_at(const ocd_rnn_step &s, int step, int len, int *t)
{
    *t = s.dir ? len - 1 - step : step;
    return step < len;
}

__host__ __device__ __forceinline__ int64_t step_pos(const ocd_rnn_step &s, int t, int n)
{
    return ocd_rnn_pos(s.layout, s.T, s.N, s.offsets, t, n);
}

/* What the cells of a sequence take at a step of the persistent recurrence (cuda/rnn_persist.cu,
   cuda/rnn_persist_cluster.cu): its position (when active) and whether the step is its last. */
struct persist_seq_at {
    int64_t pos;
    int on, last;
};

/* Sequence n of length len at step t. */
__host__ __device__ inline persist_seq_at persist_seq_of(const ocd_rnn_step &s, int t, int n, int len)
{
    int tn;
    persist_seq_at a = {0, step_active_at(s, t, len, &tn), t == len - 1 /* ocd_rnn_last_step */};
    if (a.on) a.pos = step_pos(s, tn, n);
    return a;
}

template <typename T, typename C> __host__ __device__ __forceinline__ C load_bias(const void *b, int j)
{
    return b ? (C)ocd_cuda_load((const T *)b + j) : (C)0;
}

/* W_g x of unit j at position pos: from gx, or x itself (skip input). */
template <typename T>
__host__ __device__ __forceinline__ typename ocd_compute<T>::type gate_product(const ocd_rnn_step &s, int64_t pos, int g,
                                                                               int j)
{
    typedef typename ocd_compute<T>::type C;
    const int GH = ocd_rnn_gates(s.mode) * s.H;
    return s.gx ? ((const C *)s.gx)[pos * GH + g * s.H + j] : (C)ocd_cuda_load((const T *)s.x + pos * s.x_stride + j);
}

/* W_g x + b_Wg of unit j at position pos. */
template <typename T>
__host__ __device__ __forceinline__ typename ocd_compute<T>::type gate_input(const ocd_rnn_step &s, int64_t pos, int g,
                                                                             int j)
{
    return gate_product<T>(s, pos, g, j) + load_bias<T, typename ocd_compute<T>::type>(s.bw[g], j);
}

} // namespace

#endif /* OCD_CUDA_RNN_UNIT_CUH */
