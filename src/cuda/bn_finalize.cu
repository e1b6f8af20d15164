/* bn_finalize.cu: the CUDA engine of the batch-norm channel pass (problem/bn_finalize.h): one
   thread per channel, computing in double (a pass touches a few values per channel: its cost is
   the launch) with the math the host engine runs. */
#include "problem/bn_finalize.h"

#include "core/handle.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"

static __device__ __forceinline__ double bnf_load(const ocd_bnf_operand &o, int64_t c)
{
    if (o.immediate) return o.value;
    return o.data ? ocd_cuda_load_as<double>(o.dtype, o.data, c * o.stride) : 0.0;
}

__global__ void bnf_kernel(const ocd_bnf_problem p)
{
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= p.channels) return;
    double in[OCD_BNF_INPUTS], out[OCD_BNF_SLOTS];
    for (int s = 0; s < OCD_BNF_INPUTS; s++) in[s] = bnf_load(p.t[s], c);
    ocd_bnf_channel(&p, in, out);
    for (int s = OCD_BNF_INPUTS; s < OCD_BNF_SLOTS; s++)
        if (p.t[s].data) ocd_cuda_store_as(p.t[s].dtype, p.t[s].data, c * p.t[s].stride, out[s]);
}

cudnnStatus_t ocd_cuda_bn_finalize(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws, (void)ws_bytes;
    const struct ocd_bnf_problem *p = (const struct ocd_bnf_problem *)problem;
    const int block = 128;
    const unsigned blocks = (unsigned)((p->channels + block - 1) / block);
    bnf_kernel<<<blocks, block, 0, handle->stream>>>(*p);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
