/* gemm.c: the host's GEMM (problem/gemm.h) on the packed engine (gemm_engine.h): the operands
   are dense engine operands at the problem's strides (any transposition, strided batches, arrays
   of batch pointers; half and bfloat16 converted as they are packed), and the store applies the
   epilogue in double: alpha, beta (C not read when beta == 0), the bias, the activation (either
   kind: ocd_host_gemm_finish, which the CBLAS entry shares), then rounds to C's type. float, half and bfloat16 compute in float (TF32 too: the host has no TF32
   unit), double in double. */
#include "problem/gemm.h"

#include "core/dtype.h"
#include "host/gemm_engine.h"
#include "host/typed.h"
#include "problem/activation.h"

#include <stdatomic.h>
#include <stdlib.h>

/* The matrix of batch `batch` of an operand: an array of batch pointers, or a strided batch. */
static const void *batch_base(const struct ocd_gemm_problem *p, const void *data, cudnnDataType_t t, int64_t stride,
                              int64_t batch)
{
    if (p->pointer_array) return ((const void *const *)data)[batch];
    return (const char *)data + batch * stride * (int64_t)ocd_dtype_scalar_size(t);
}

static void store(const void *ctx, const void *acc, int64_t ldacc, int64_t group, int64_t m0, int64_t n0, int64_t mc,
                  int64_t nc, struct ocd_host_gemm_table scratch[2])
{
    const struct ocd_gemm_call *call = ctx;
    const struct ocd_gemm_problem *p = call->p;
    void *c = (void *)batch_base(p, call->c, p->c_type, p->stride_c, group);
    bool dbl = p->compute == OCD_GEMM_COMPUTE_F64;
    for (int64_t j = 0; j < nc; j++) {
        for (int64_t i = 0; i < mc; i++) {
            int64_t off = (m0 + i) + (n0 + j) * p->ldc, at = i * ldacc + j;
            double v = p->alpha * (dbl ? ((const double *)acc)[at] : (double)((const float *)acc)[at]);
            if (p->beta != 0) v += p->beta * ocd_host_load(p->c_type, c, off);
            ocd_host_store(p->c_type, c, off, ocd_host_gemm_finish(call, m0 + i, n0 + j, v));
        }
    }
}

double ocd_host_gemm_finish(const struct ocd_gemm_call *call, int64_t i, int64_t j, double v)
{
    const struct ocd_gemm_problem *p = call->p;
    if (p->bias == OCD_GEMM_BIAS_ROW) v += ocd_host_load(p->c_type, call->bias, i);
    else if (p->bias == OCD_GEMM_BIAS_COL) v += ocd_host_load(p->c_type, call->bias, j);
    const struct ocd_activation_params *act = &p->act;
    if (p->act_on) return ocd_act_forward(act->mode, act->nan_opt == CUDNN_PROPAGATE_NAN, act->coef, act->swish_beta, v);
    return p->pw_act_on ? ocd_pw_apply(&p->pw_act, v, 0) : v;
}

/* A dense engine operand for a stored matrix: element (r, c) of op(X) at X[r + c * ld], or at
   X[c + r * ld] when transposed. */
static struct ocd_host_gemm_operand operand(const struct ocd_gemm_problem *p, const void *data, bool trans, int64_t ld,
                                            int64_t stride)
{
    struct ocd_host_gemm_operand o = {0};
    o.dense = true;
    o.dtype = p->ab_type;
    o.rs = trans ? ld : 1;
    o.cs = trans ? 1 : ld;
    if (p->pointer_array) o.ptrs = (const void *const *)data;
    else o.base = data, o.group_stride = p->batch > 1 ? stride : 0;
    return o;
}

/* ---- the tile scratch a handle keeps ---------------------------------------------------------------

   ocd_gemm_reserve gives a host handle one block of tile scratch per compute type (float, double),
   kept until the handle is destroyed: the GEMMs of a multi-step op (an RNN's layer loop,
   attention's projections, a graph's stages) then allocate nothing once the op has started, so a
   shortage shows at its start, before any output is written. A block serves one GEMM at a time
   (its busy flag): a GEMM that finds it taken (a handle shared between threads, as the
   OPENCUDNN_CHECK host handle is) allocates its own, as a handle without a reserve does. */
struct gemm_keep {
    _Atomic(void *) block[2]; /* [dbl] */
    atomic_bool busy[2];
};

cudnnStatus_t ocd_host_gemm_open(cudnnHandle_t handle)
{
    struct gemm_keep *k = ocd_calloc(1, sizeof *k);
    if (k == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the handle's GEMM state");
    handle->backend_data = k;
    return CUDNN_STATUS_SUCCESS;
}

void ocd_host_gemm_close(cudnnHandle_t handle)
{
    struct gemm_keep *k = handle->backend_data;
    if (k == NULL) return;
    free(atomic_load(&k->block[0]));
    free(atomic_load(&k->block[1]));
    free(k);
    handle->backend_data = NULL;
}

cudnnStatus_t ocd_host_gemm_reserve(cudnnHandle_t handle, bool dbl)
{
    struct gemm_keep *k = handle->backend_data;
    if (atomic_load(&k->block[dbl]) != NULL) return CUDNN_STATUS_SUCCESS;
    size_t bytes = ocd_host_gemm_tile_scratch_bytes(dbl);
    void *block = ocd_malloc(bytes), *none = NULL;
    if (block == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu bytes of GEMM scratch", bytes);
    if (!atomic_compare_exchange_strong(&k->block[dbl], &none, block)) free(block); /* another thread's came first */
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_host_gemm_packed(cudnnHandle_t handle, const void *call_, void *ws, size_t ws_bytes)
{
    const struct ocd_gemm_call *call = call_;
    const struct ocd_gemm_problem *p = call->p;
    struct ocd_host_gemm g = {0};
    g.m = p->m, g.n = p->n, g.k = p->k, g.groups = p->batch;
    g.dbl = p->compute == OCD_GEMM_COMPUTE_F64;
    g.a = operand(p, call->a, p->trans_a, p->lda, p->stride_a);
    g.b = operand(p, call->b, p->trans_b, p->ldb, p->stride_b);
    g.ctx = call;
    g.store = store;
    /* the CBLAS calibration (gemm_cblas.c) runs without a handle, hence without its kept block */
    struct gemm_keep *k = handle != NULL ? handle->backend_data : NULL;
    bool kept = k != NULL && atomic_load(&k->block[g.dbl]) != NULL && !atomic_exchange(&k->busy[g.dbl], true);
    if (kept) g.tile_scratch = atomic_load(&k->block[g.dbl]);
    cudnnStatus_t s = ocd_host_gemm_run(&g, NULL);
    if (kept) atomic_store(&k->busy[g.dbl], false);
    return s;
}
