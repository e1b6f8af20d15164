/* fused_ops.c: the host kernels of the FusedOps building blocks (see problem/fused_ops.h): the
   per-channel affine + activation of a tensor, and the batch-normalization finalize. Generic over
   types and layouts through views; computed in double. */
#include "problem/fused_ops.h"

#include "host/parallel.h"
#include "host/typed.h"

#include <math.h>

/* Scalar offset of channel c of a 1 x C x 1 x 1 parameter view. */
static int64_t channel_offset(const struct ocd_tensor_view *v, int64_t c)
{
    int64_t idx[OCD_MAX_DIMS] = {0};
    idx[1] = c;
    return ocd_view_offset_of(v, idx);
}

static void affine_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_fused_affine *p = ctx;
    for (int64_t e = begin; e < end; e++) {
        int64_t idx[OCD_MAX_DIMS] = {0};
        ocd_view_coords(&p->v, e, idx);
        int64_t off = ocd_view_offset_of(&p->v, idx), pc = channel_offset(&p->pv, idx[1]);
        double r = ocd_host_load(p->v.dtype, p->src, off);
        if (p->scale != NULL) r *= ocd_host_load(p->pv.dtype, p->scale, pc);
        if (p->bias != NULL) r += ocd_host_load(p->pv.dtype, p->bias, pc);
        if (p->relu && r < 0) r = 0;
        ocd_host_store(p->v.dtype, p->dst, off, r);
    }
}

cudnnStatus_t ocd_host_fused_affine(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_fused_affine *p = problem;
    ocd_parallel_for(ocd_view_count(&p->v), 1024, affine_range, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_host_fused_bn_finalize(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_fused_bn_finalize *p = problem;
    cudnnDataType_t pt = p->pv.dtype;
    for (int64_t c = 0; c < p->pv.dims[1]; c++) {
        int64_t o = channel_offset(&p->pv, c);
        double mean, var;
        if (p->training) {
            int64_t so = channel_offset(&p->stats_v, c);
            double m = (double)p->count;
            mean = ocd_host_load(p->stats_v.dtype, p->ysum, so) / m;
            var = ocd_host_load(p->stats_v.dtype, p->ysqsum, so) / m - mean * mean;
        } else {
            mean = ocd_host_load(pt, p->running_mean, o);
            var = ocd_host_load(pt, p->running_var, o);
        }
        double inv_std = 1 / sqrt(var + p->epsilon), scale = ocd_host_load(pt, p->scale, o) * inv_std;
        if (p->training) {
            double m = (double)p->count, unbiased = m > 1 ? var * m / (m - 1) : var;
            if (p->saved_mean) ocd_host_store(pt, p->saved_mean, o, mean);
            if (p->saved_invstd) ocd_host_store(pt, p->saved_invstd, o, inv_std);
            if (p->running_mean)
                ocd_host_store(pt, p->running_mean, o, (1 - p->factor) * ocd_host_load(pt, p->running_mean, o) + p->factor * mean);
            if (p->running_var)
                ocd_host_store(pt, p->running_var, o, (1 - p->factor) * ocd_host_load(pt, p->running_var, o) + p->factor * unbiased);
        }
        int64_t eo = channel_offset(&p->eq_v, c);
        ocd_host_store(p->eq_v.dtype, p->eq_scale, eo, scale);
        ocd_host_store(p->eq_v.dtype, p->eq_bias, eo, ocd_host_load(pt, p->bias, o) - mean * scale);
    }
    return CUDNN_STATUS_SUCCESS;
}
