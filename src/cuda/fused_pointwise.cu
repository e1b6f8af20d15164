/* fused_pointwise.cu: the CUDA engine of pointwise chains (problem/pointwise.h).

   Main decision: one kernel interprets any chain: the chain (at most a few KB) is a kernel
   parameter, so every thread reads the same steps from the constant bank, and the mode switch
   is uniform across a warp. A chain is memory-bound: it reads its inputs and writes its outputs
   once, which is the whole point of fusing it, provided the interpretation stays a few
   instructions a step and each thread keeps several loads in flight. So a thread carries
   PW_ELEMS elements a block width apart (a warp's loads of one input are consecutive), issues
   all their loads into registers before the first step, and splits each element number over the normalized
   dims (a packed chain has one) by 32-bit multiply-high division (types.cuh's ocd_fastdiv; a
   64-bit division is about a hundred instructions); each operand's offset is then a dot
   product with its strides. Compute is float, or double for a double chain.

   Interpreted element by element (pw_chain_elements), a step costs its mode's switch, its
   parameters read and converted from double, and its slots read and written in local memory,
   for each element: several times the step's own math, so a chain ran far below copy
   bandwidth. The unproven form (pw_chain_lanes; core/impl.h: only under OPENCUDNN_UNPROVEN=1)
   runs each step over all of a thread's elements at once: one switch, each case ocd_pw_apply
   with its mode a constant (the other modes' code folded away, the parameters converted once),
   a slot's values for the thread's elements one vector access of local memory, and the outputs
   rounded from float rather than through double. */
#include "problem/pointwise.h"

#include "core/handle.h"
#include "core/impl.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"

/* A chain as the kernel takes it: the chain and a fast divisor per dim (element numbers fit in
   32 bits: a tensor holds fewer than 2^31 elements, core/tensor.c). */
struct pw_chain_launch {
    ocd_pw_chain c;
    ocd_fastdiv div[OCD_MAX_DIMS];
};

/* Elements a thread carries at once: their loads are all issued before the first step, so that
   each thread keeps PW_ELEMS loads of every input in flight. */
#define PW_ELEMS 4

/* Scalar offset in operand o of the element at coordinates idx (rank 1: idx[0] alone). The dim
   loops run to OCD_MAX_DIMS, unrolled, so that idx stays in registers. */
static __host__ __device__ __forceinline__ int64_t pw_offset(const ocd_pw_chain &c, const ocd_pw_operand &o,
                                                             const uint32_t *idx)
{
    int64_t off = 0;
#pragma unroll
    for (int d = 0; d < OCD_MAX_DIMS; d++)
        if (d < c.rank) off += (int64_t)idx[d] * o.strides[d];
    return off;
}

/* The coordinates of element i, by the multiply-high divisions. */
static __host__ __device__ __forceinline__ void pw_coords(const pw_chain_launch &l, uint32_t i, uint32_t *idx)
{
#pragma unroll
    for (int d = OCD_MAX_DIMS - 1; d > 0; d--)
        if (d < l.c.rank) i = ocd_fastdiv_divmod(l.div[d], i, &idx[d]);
    idx[0] = i;
}

/* What a thread does for the elements first, first + stride, ... (PW_ELEMS of them, those below
   the chain's count): every input of every element loaded into registers, then element by
   element the steps run over the slots and the outputs are stored (the coordinates found
   again: cheaper than keeping them). An element reads and writes only its own positions, so a
   chain may write an output over an input it reads (the graph runs its tails in place).
   Host-callable: tests/emulate/fused_pointwise.cu runs it. The proven form; pw_chain_lanes is
   the unproven one. */
template <typename C>
static __host__ __device__ __forceinline__ void pw_chain_elements(const pw_chain_launch &l, uint32_t first,
                                                                  uint32_t stride)
{
    const ocd_pw_chain &c = l.c;
    const uint32_t count = (uint32_t)c.count;
    C in[PW_ELEMS][OCD_PW_MAX_INPUTS];
#pragma unroll
    for (int e = 0; e < PW_ELEMS; e++) {
        const uint32_t i = first + e * stride;
        if (i >= count) break;
        uint32_t idx[OCD_MAX_DIMS];
        pw_coords(l, i, idx);
#pragma unroll
        for (int t = 0; t < OCD_PW_MAX_INPUTS; t++)
            if (t < c.ninputs) in[e][t] = ocd_cuda_load_as<C>(c.in[t].dtype, c.in[t].data, pw_offset(c, c.in[t], idx));
    }
#pragma unroll
    for (int e = 0; e < PW_ELEMS; e++) {
        const uint32_t i = first + e * stride;
        if (i >= count) break;
        C slots[OCD_PW_MAX_SLOTS];
#pragma unroll
        for (int t = 0; t < OCD_PW_MAX_INPUTS; t++)
            if (t < c.ninputs) slots[t] = in[e][t];
        for (int s = 0; s < c.nsteps; s++) {
            const ocd_pw_step *st = &c.steps[s];
            const C x = slots[st->x];
            slots[c.ninputs + s] = ocd_pw_apply<C>(st, x, st->b >= 0 ? slots[st->b] : x);
        }
        uint32_t idx[OCD_MAX_DIMS];
        pw_coords(l, i, idx);
        for (int t = 0; t < c.noutputs; t++)
            ocd_cuda_store_as(c.out[t].dtype, (void *)c.out[t].data, pw_offset(c, c.out[t], idx),
                              (double)slots[c.out_slot[t]]);
    }
}

/* One slot's values for a thread's PW_ELEMS elements: one vector access of local memory. */
template <typename C> using pw_lane = ocd_vec<C, PW_ELEMS>;

/* One step over a thread's elements: the mode's switch taken once for all of them, each case
   ocd_pw_apply with its mode a constant (its switch folded away, the step's parameters read and
   converted once). */
template <typename C>
static __host__ __device__ __forceinline__ void pw_step_lanes(const ocd_pw_step *st, const pw_lane<C> &x_,
                                                              const pw_lane<C> &b_, pw_lane<C> &out)
{
    const pw_lane<C> x = x_, b = b_; /* whole vectors in, and out below */
    pw_lane<C> r;
    switch (st->mode) {
#define PW_MODE_CASE(m)                                                                            \
    case m: {                                                                                      \
        ocd_pw_step k = *st;                                                                       \
        k.mode = m;                                                                                \
        _Pragma("unroll") for (int e = 0; e < PW_ELEMS; e++) r.v[e] = ocd_pw_apply<C>(&k, x.v[e], b.v[e]); \
        break;                                                                                     \
    }
        PW_MODE_CASE(CUDNN_POINTWISE_ADD)
        PW_MODE_CASE(CUDNN_POINTWISE_MUL)
        PW_MODE_CASE(CUDNN_POINTWISE_MIN)
        PW_MODE_CASE(CUDNN_POINTWISE_MAX)
        PW_MODE_CASE(CUDNN_POINTWISE_SQRT)
        PW_MODE_CASE(CUDNN_POINTWISE_RELU_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_TANH_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SIGMOID_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_ELU_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_GELU_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SOFTPLUS_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SWISH_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_RELU_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_TANH_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SIGMOID_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_ELU_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_GELU_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SOFTPLUS_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SWISH_BWD)
#undef PW_MODE_CASE
    default:
#pragma unroll
        for (int e = 0; e < PW_ELEMS; e++) r.v[e] = ocd_pw_apply<C>(st, x.v[e], b.v[e]);
    }
    out = r;
}

/* What pw_chain_elements does, in the form of an unproven entry's path (core/impl.h: only under
   OPENCUDNN_UNPROVEN=1): every input of every element loaded into registers, then step by step
   over all the elements at once, the slots in local memory (a step's operands are slots chosen
   at run time), a slot's values for the thread's elements one vector access; then the outputs
   are stored (the coordinates found again: cheaper than keeping them), rounded once from the
   compute type. An element reads and writes only its own positions, so a chain may write an
   output over an input it reads (the graph runs its tails in place). Elements past the count
   compute on zeros and store nothing. Host-callable: tests/emulate/fused_pointwise.cu runs it. */
template <typename C>
static __host__ __device__ __forceinline__ void pw_chain_lanes(const pw_chain_launch &l, uint32_t first,
                                                               uint32_t stride)
{
    const ocd_pw_chain &c = l.c;
    const uint32_t count = (uint32_t)c.count;
    C in[OCD_PW_MAX_INPUTS][PW_ELEMS];
#pragma unroll
    for (int e = 0; e < PW_ELEMS; e++) {
        const uint32_t i = first + e * stride;
        const bool live = i < count;
        uint32_t idx[OCD_MAX_DIMS];
        pw_coords(l, live ? i : 0, idx);
#pragma unroll
        for (int t = 0; t < OCD_PW_MAX_INPUTS; t++)
            if (t < c.ninputs)
                in[t][e] = live ? ocd_cuda_load_as<C>(c.in[t].dtype, c.in[t].data, pw_offset(c, c.in[t], idx)) : (C)0;
    }
    pw_lane<C> slots[OCD_PW_MAX_SLOTS];
#pragma unroll
    for (int t = 0; t < OCD_PW_MAX_INPUTS; t++)
        if (t < c.ninputs) {
#pragma unroll
            for (int e = 0; e < PW_ELEMS; e++) slots[t].v[e] = in[t][e];
        }
    for (int s = 0; s < c.nsteps; s++) {
        const ocd_pw_step *st = &c.steps[s];
        pw_step_lanes<C>(st, slots[st->x], slots[st->b >= 0 ? st->b : st->x], slots[c.ninputs + s]);
    }
#pragma unroll
    for (int e = 0; e < PW_ELEMS; e++) {
        const uint32_t i = first + e * stride;
        if (i >= count) break;
        uint32_t idx[OCD_MAX_DIMS];
        pw_coords(l, i, idx);
        for (int t = 0; t < c.noutputs; t++)
            ocd_cuda_store_as(c.out[t].dtype, (void *)c.out[t].data, pw_offset(c, c.out[t], idx),
                              slots[c.out_slot[t]].v[e]);
    }
}

template <typename C, bool LANES> __global__ void pw_chain_kernel(const __grid_constant__ pw_chain_launch l)
{
    ocd_cuda_each_span<PW_ELEMS>(l.c.count, [&](int64_t base) {
        if (LANES) pw_chain_lanes<C>(l, (uint32_t)base + threadIdx.x, blockDim.x);
        else pw_chain_elements<C>(l, (uint32_t)base + threadIdx.x, blockDim.x);
    });
}

/* The launch of chain c: its divisors. */
static pw_chain_launch pw_chain_launch_of(const ocd_pw_chain *c)
{
    pw_chain_launch l;
    l.c = *c;
    for (int d = 0; d < OCD_MAX_DIMS; d++) l.div[d] = ocd_fastdiv_make(d < c->rank ? (uint32_t)c->dims[d] : 1);
    return l;
}

cudnnStatus_t ocd_cuda_pw_chain(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws, (void)ws_bytes;
    const pw_chain_launch l = pw_chain_launch_of((const struct ocd_pw_chain *)problem);
    const int block = 256;
    const unsigned blocks = ocd_cuda_span_blocks(l.c.count, PW_ELEMS, block);
    const bool lanes = ocd_impl_unproven() == NULL;
    if (l.c.double_compute)
        (lanes ? pw_chain_kernel<double, true> : pw_chain_kernel<double, false>)<<<blocks, block, 0, handle->stream>>>(l);
    else
        (lanes ? pw_chain_kernel<float, true> : pw_chain_kernel<float, false>)<<<blocks, block, 0, handle->stream>>>(l);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
