/* attn_core.c: ocd_attn_core_forward and ocd_attn_core_backward, the attention core's entries
   (problem in problem/attn_core.h), and their implementation tables. Not API functions: the
   multi-head attention entries call them after projecting.

   Validation is the API layer's rule (check once, then trust): sizes, the query range, the
   dropout probability, pointers, strides, reserve and workspace sizes are checked here, so an
   implementation only says whether it serves the problem. Lengths live in the backend's memory
   and are not read here: the implementations clamp them to [0, max_q] and [0, max_kv]. Table
   order is the heuristic: on CUDA, the fused tensor-core kernels (forward and backward) for the
   16-bit problems they serve (the wgmma kernels first on compute capability 9.0),
   then the row kernels, which serve every problem whose head sizes
   fit their shared memory (2 (q + v head sizes) + 64 elements of the compute type within
   48 KiB); on the host, the row engine. */
#include "problem/attn_core.h"

#include "core/dtype.h"
#include "core/impl.h"

#include <math.h>

static const struct ocd_impl fwd_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:attn_fwd_sm90", OCD_BACKEND_CUDA, ocd_cuda_attn_fwd_sm90_applies, NULL,
                   ocd_cuda_attn_fwd_sm90),
    OCD_IMPL_ENTRY("cuda:attn_fwd_flash", OCD_BACKEND_CUDA, ocd_cuda_attn_fwd_flash_applies, NULL,
                   ocd_cuda_attn_fwd_flash),
    OCD_IMPL_ENTRY("cuda:attn_fwd_rows", OCD_BACKEND_CUDA, ocd_cuda_attn_rows_applies, NULL, ocd_cuda_attn_fwd_rows),
#endif
    OCD_IMPL_ENTRY("host:attn_fwd_rows", OCD_BACKEND_HOST, NULL, NULL, ocd_host_attn_fwd),
};

static const struct ocd_impl bwd_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:attn_bwd_sm90", OCD_BACKEND_CUDA, ocd_cuda_attn_bwd_sm90_applies, NULL,
                   ocd_cuda_attn_bwd_sm90),
    OCD_IMPL_ENTRY("cuda:attn_bwd_flash", OCD_BACKEND_CUDA, ocd_cuda_attn_bwd_flash_applies, NULL,
                   ocd_cuda_attn_bwd_flash),
    OCD_IMPL_ENTRY("cuda:attn_bwd_rows", OCD_BACKEND_CUDA, ocd_cuda_attn_rows_applies, NULL, ocd_cuda_attn_bwd_rows),
#endif
    OCD_IMPL_ENTRY("host:attn_bwd_rows", OCD_BACKEND_HOST, NULL, NULL, ocd_host_attn_bwd),
};

#define DIM_MAX ((int64_t)1 << 31)

static cudnnStatus_t check_operand(const char *name, const struct ocd_attn_operand *x)
{
    if (x->data == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core operand %s is NULL", name);
    for (int a = 0; a < OCD_ATTN_AXES; a++)
        if (x->stride[a] < 0 || x->stride[a] >= ((int64_t)1 << 40))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core operand %s: stride %d is %lld", name, a,
                            (long long)x->stride[a]);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check(const struct ocd_attn_core_problem *p, bool backward, size_t ws_bytes,
                           const void *ws, size_t reserve_bytes, const void *reserve)
{
    cudnnDataType_t t = p->dtype;
    if (t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16 && t != CUDNN_DATA_DOUBLE)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core on %s data", ocd_dtype_name(t));
    int64_t dims[] = {p->batch, p->beams, p->heads, p->max_q, p->max_kv, p->head_qk, p->head_v};
    for (size_t d = 0; d < OCD_ARRAY_LEN(dims); d++)
        if (dims[d] < 1 || dims[d] >= DIM_MAX)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                            "attention core sizes batch %d beams %d heads %d max_q %d max_kv %d heads %d/%d "
                            "out of [1, 2^31)",
                            p->batch, p->beams, p->heads, p->max_q, p->max_kv, p->head_qk, p->head_v);
    /* the rows (b, m, h, i) and the mask elements (rows x max_kv) must count in 62 bits */
    double rows = (double)p->batch * p->beams * p->heads * p->max_q;
    if (rows >= 0x1p31 || rows * p->max_kv >= 0x1p62)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core of %.0f rows of %d keys is too large", rows,
                        p->max_kv);
    if (p->q_first < 0 || p->q_count < 1 || p->q_first > p->max_q - p->q_count)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core query steps [%d, %d + %d) outside [0, %d)", p->q_first,
                        p->q_first, p->q_count, p->max_q);
    if (!isfinite(p->sm_scaler))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core smScaler %g", p->sm_scaler);
    if (!(p->dropout >= 0 && p->dropout <= 1))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core dropout %g outside [0, 1]", p->dropout);
    if (p->dropout > 0 && p->rng == NULL && !backward)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core dropout without a generator state");
    if (p->len_q == NULL || p->len_kv == NULL || p->lo_win == NULL || p->hi_win == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core lengths or windows are NULL");
    OCD_TRY(check_operand("q", &p->q));
    OCD_TRY(check_operand("k", &p->k));
    OCD_TRY(check_operand("v", &p->v));
    OCD_TRY(check_operand("o", &p->o));
    if (backward) {
        OCD_TRY(check_operand("do", &p->d_o));
        OCD_TRY(check_operand("dq", &p->dq));
        OCD_TRY(check_operand("dk", &p->dk));
        OCD_TRY(check_operand("dv", &p->dv));
    }
    size_t need = ocd_attn_core_workspace_bytes(p, backward);
    if (ws == NULL || ws_bytes < need)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core workspace %p of %zu bytes, %zu needed", ws, ws_bytes,
                        need);
    need = ocd_attn_core_reserve_bytes(p);
    if ((backward || reserve != NULL) && (reserve == NULL || reserve_bytes < need))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attention core reserve %p of %zu bytes, %zu needed", reserve,
                        reserve_bytes, need);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_attn_core_forward(cudnnHandle_t handle, const struct ocd_attn_core_problem *p, void *workspace,
                                    size_t workspace_bytes, void *reserve, size_t reserve_bytes, const char *op)
{
    OCD_TRY(check(p, false, workspace_bytes, workspace, reserve_bytes, reserve));
    struct ocd_attn_core_call call = {p, reserve, workspace};
    return ocd_impl_run(handle, fwd_impls, OCD_ARRAY_LEN(fwd_impls), &call, op);
}

cudnnStatus_t ocd_attn_core_backward(cudnnHandle_t handle, const struct ocd_attn_core_problem *p, void *workspace,
                                     size_t workspace_bytes, const void *reserve, size_t reserve_bytes,
                                     const char *op)
{
    OCD_TRY(check(p, true, workspace_bytes, workspace, reserve_bytes, reserve));
    struct ocd_attn_core_call call = {p, (void *)reserve, workspace};
    return ocd_impl_run(handle, bwd_impls, OCD_ARRAY_LEN(bwd_impls), &call, op);
}
