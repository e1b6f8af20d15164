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
   product with its strides. Compute is float, or double for a double chain. */
#include "problem/pointwise.h"

#include "core/handle.h"
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
   Host-callable: tests/emulate/fused_pointwise.cu runs it. */
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

template <typename C> __global__ void pw_chain_kernel(const __grid_constant__ pw_chain_launch l)
{
    ocd_cuda_each_span<PW_ELEMS>(l.c.count,
                                 [&](int64_t base) { pw_chain_elements<C>(l, (uint32_t)base + threadIdx.x, blockDim.x); });
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
    if (l.c.double_compute)
        pw_chain_kernel<double><<<blocks, block, 0, handle->stream>>>(l);
    else
        pw_chain_kernel<float><<<blocks, block, 0, handle->stream>>>(l);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
