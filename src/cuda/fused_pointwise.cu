/* fused_pointwise.cu: the CUDA engine of pointwise chains (problem/pointwise.h).

   Main decision: one kernel interprets any chain, a thread per element (grid-stride): the chain
   (at most a few KB) is a kernel parameter, so every thread reads the same steps from the
   constant bank, and the mode switch is uniform across a warp. A chain is memory-bound: it reads
   its inputs and writes its outputs once, which is the whole point of fusing it, and the
   interpretation costs a few instructions a step against several hundred cycles of DRAM
   latency per element. A thread splits its element number over the normalized dims once (a
   packed chain has one) and finds each operand's offset from the coordinates. Compute is float,
   or double for a double chain. */
#include "problem/pointwise.h"

#include "core/handle.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"

/* Scalar offset in operand o of the element at coordinates idx (rank 1: idx[0] alone). */
static __host__ __device__ __forceinline__ int64_t pw_offset(const ocd_pw_chain &c, const ocd_pw_operand &o,
                                                             const int64_t *idx)
{
    int64_t off = 0;
    for (int d = 0; d < c.rank; d++) off += idx[d] * o.strides[d];
    return off;
}

/* What a thread does for element i (host-callable: tests/emulate/fused_pointwise.cu runs it).
   The element's coordinates are found once, then every operand's offset is a dot product. */
template <typename C> static __host__ __device__ __forceinline__ void pw_chain_element(const ocd_pw_chain &c, int64_t i)
{
    int64_t idx[OCD_MAX_DIMS];
    for (int d = c.rank - 1; d > 0; d--) {
        idx[d] = i % c.dims[d];
        i /= c.dims[d];
    }
    idx[0] = i;
    C slots[OCD_PW_MAX_SLOTS];
    for (int t = 0; t < c.ninputs; t++) slots[t] = ocd_cuda_load_as<C>(c.in[t].dtype, c.in[t].data, pw_offset(c, c.in[t], idx));
    for (int s = 0; s < c.nsteps; s++) {
        const ocd_pw_step *st = &c.steps[s];
        C x = slots[st->x];
        slots[c.ninputs + s] = ocd_pw_apply<C>(st, x, st->b >= 0 ? slots[st->b] : x);
    }
    for (int t = 0; t < c.noutputs; t++)
        ocd_cuda_store_as(c.out[t].dtype, (void *)c.out[t].data, pw_offset(c, c.out[t], idx), (double)slots[c.out_slot[t]]);
}

template <typename C> __global__ void pw_chain_kernel(const ocd_pw_chain c)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.count; i += (int64_t)gridDim.x * blockDim.x)
        pw_chain_element<C>(c, i);
}

cudnnStatus_t ocd_cuda_pw_chain(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws, (void)ws_bytes;
    const struct ocd_pw_chain *c = (const struct ocd_pw_chain *)problem;
    const int block = 256;
    int64_t want = (c->count + block - 1) / block;
    unsigned blocks = (unsigned)(want < 65535 * 8 ? (want < 1 ? 1 : want) : 65535 * 8);
    if (c->double_compute)
        pw_chain_kernel<double><<<blocks, block, 0, handle->stream>>>(*c);
    else
        pw_chain_kernel<float><<<blocks, block, 0, handle->stream>>>(*c);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
