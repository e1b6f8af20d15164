/* fused_ops.cu: the CUDA kernels of the FusedOps building blocks (see problem/fused_ops.h): the
   per-channel affine + activation of a tensor (one thread per element) and the
   batch-normalization finalize (one thread per channel). Types and layouts are read at run time,
   as in the reference convolution; the math is in float (double for double data). */
#include "problem/fused_ops.h"

#include "core/handle.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"

namespace {

const int kThreads = 256;

template <typename R> __global__ void affine_kernel(ocd_cuda_view v, cudnnDataType_t t, const void *src, void *dst,
                                                    ocd_cuda_view pv, cudnnDataType_t pt, const void *scale,
                                                    const void *bias, int relu, int64_t total)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t idx[OCD_MAX_DIMS] = {0};
        ocd_cuda_coords(v, e, idx);
        int64_t off = ocd_cuda_offset_of(v, idx), pc = ocd_cuda_channel_offset(pv, idx[1]);
        R r = ocd_cuda_load_as<R>(t, src, off);
        if (scale != nullptr) r *= ocd_cuda_load_as<R>(pt, scale, pc);
        if (bias != nullptr) r += ocd_cuda_load_as<R>(pt, bias, pc);
        if (relu && r < 0) r = 0;
        ocd_cuda_store_as(t, dst, off, (double)r);
    }
}

template <typename R> __global__ void bn_finalize_kernel(ocd_fused_bn_finalize p, ocd_cuda_view sv, ocd_cuda_view pv,
                                                         ocd_cuda_view ev)
{
    int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (c >= pv.dims[1]) return;
    cudnnDataType_t pt = p.pv.dtype;
    int64_t o = ocd_cuda_channel_offset(pv, c);
    R mean, var, m = (R)p.count;
    if (p.training) {
        int64_t so = ocd_cuda_channel_offset(sv, c);
        mean = ocd_cuda_load_as<R>(p.stats_v.dtype, p.ysum, so) / m;
        var = ocd_cuda_load_as<R>(p.stats_v.dtype, p.ysqsum, so) / m - mean * mean;
    } else {
        mean = ocd_cuda_load_as<R>(pt, p.running_mean, o);
        var = ocd_cuda_load_as<R>(pt, p.running_var, o);
    }
    R inv_std = (R)1 / sqrt(var + (R)p.epsilon), scale = ocd_cuda_load_as<R>(pt, p.scale, o) * inv_std, f = (R)p.factor;
    if (p.training) {
        R unbiased = m > 1 ? var * m / (m - 1) : var;
        if (p.saved_mean) ocd_cuda_store_as(pt, p.saved_mean, o, (double)mean);
        if (p.saved_invstd) ocd_cuda_store_as(pt, p.saved_invstd, o, (double)inv_std);
        if (p.running_mean)
            ocd_cuda_store_as(pt, p.running_mean, o, (double)((1 - f) * ocd_cuda_load_as<R>(pt, p.running_mean, o) + f * mean));
        if (p.running_var)
            ocd_cuda_store_as(pt, p.running_var, o, (double)((1 - f) * ocd_cuda_load_as<R>(pt, p.running_var, o) + f * unbiased));
    }
    int64_t eo = ocd_cuda_channel_offset(ev, c);
    ocd_cuda_store_as(p.eq_v.dtype, p.eq_scale, eo, (double)scale);
    ocd_cuda_store_as(p.eq_v.dtype, p.eq_bias, eo, (double)(ocd_cuda_load_as<R>(pt, p.bias, o) - mean * scale));
}

} // namespace

extern "C" cudnnStatus_t ocd_cuda_fused_affine(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_fused_affine *p = (const struct ocd_fused_affine *)problem;
    int64_t total = ocd_view_count(&p->v), blocks = (total + kThreads - 1) / kThreads;
    unsigned grid = (unsigned)(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
    ocd_cuda_view v = ocd_cuda_view_of(&p->v), pv = ocd_cuda_view_of(&p->pv);
    if (p->v.dtype == CUDNN_DATA_DOUBLE)
        affine_kernel<double><<<grid, kThreads, 0, handle->stream>>>(v, p->v.dtype, p->src, p->dst, pv, p->pv.dtype,
                                                                      p->scale, p->bias, p->relu, total);
    else
        affine_kernel<float><<<grid, kThreads, 0, handle->stream>>>(v, p->v.dtype, p->src, p->dst, pv, p->pv.dtype,
                                                                     p->scale, p->bias, p->relu, total);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t ocd_cuda_fused_bn_finalize(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_fused_bn_finalize *p = (const struct ocd_fused_bn_finalize *)problem;
    unsigned grid = (unsigned)((p->pv.dims[1] + kThreads - 1) / kThreads);
    ocd_cuda_view sv = ocd_cuda_view_of(&p->stats_v), pv = ocd_cuda_view_of(&p->pv), ev = ocd_cuda_view_of(&p->eq_v);
    if (p->pv.dtype == CUDNN_DATA_DOUBLE)
        bn_finalize_kernel<double><<<grid, kThreads, 0, handle->stream>>>(*p, sv, pv, ev);
    else
        bn_finalize_kernel<float><<<grid, kThreads, 0, handle->stream>>>(*p, sv, pv, ev);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
