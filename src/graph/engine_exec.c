/* engine_exec.c: cudnnBackendExecute, which runs a plan of the backend API (engine_plan.c) with
   the pointers of a variant pack.

   Main decision: a plan is immutable once built; Execute copies each stage's problem, binds the
   pointers of the variant pack and runs the stages in order on the handle's stream. Every check
   (a UID without a pointer, a pointer not aligned to its elements, a NULL workspace the plan
   needs) and the temporaries' allocation (an anchor's output apart from an input lying in the
   chain output it writes in place; zeros for a side input scaled by 0 the pack leaves out)
   happen before the first stage runs: a failed Execute writes nothing. At info level, a plan
   whose graph is one of the benchmark's graphs logs the line that replays it (replay.c). */
#include "graph/engine_plan.h"

#include "core/argcheck.h"
#include "core/check.h"
#include "core/dtype.h"

#include <stdio.h>
#include <stdlib.h>

#define EXEC_OP "cudnnBackendExecute"

/* A pointer against its tensor's BYTE_ALIGNMENT: every kernel tests the pointers it gets, so one
   below the promise runs right (logged at info level; PyTorch 1.10-1.12's Conv_v8.cpp declares
   twice the true alignment of any address not a multiple of 16). Not aligned to its elements:
   BAD_PARAM. */
static cudnnStatus_t check_alignment(const struct ocd_plan_buf *bf, const void *p)
{
    if (bf->alignment <= 0 || (uintptr_t)p % (uintptr_t)bf->alignment == 0) return CUDNN_STATUS_SUCCESS;
    const size_t esize = ocd_dtype_scalar_size(bf->view.dtype);
    if ((uintptr_t)p % esize != 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the pointer %p of tensor UID %lld is not aligned to its %zu-byte elements",
                        p, (long long)bf->uid, esize);
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                    "the pointer %p of tensor UID %lld is below its declared %lld-byte alignment; run as it is", p,
                    (long long)bf->uid, (long long)bf->alignment);
    return CUDNN_STATUS_SUCCESS;
}

/* The pointer of every buffer: BAD_PARAM, logged, for a UID without a pointer (but a side input
   scaled by 0, left NULL for zeros_for_absent), a pointer not aligned to its elements, or a NULL
   workspace the plan needs. */
static cudnnStatus_t bind(const struct ocd_graph_plan *pl, const struct ocd_graph_variant *vp, void *ptr[])
{
    if (pl->total > 0 && vp->workspace == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the plan needs %zu bytes of workspace and the variant pack has none",
                        pl->total);
    for (int b = 0; b < pl->nbufs; b++) {
        const struct ocd_plan_buf *bf = &pl->bufs[b];
        ptr[b] = NULL;
        if (bf->kind == OCD_BUF_WORK) ptr[b] = (char *)vp->workspace + bf->off;
        if (bf->kind != OCD_BUF_USER) continue;
        for (int64_t i = 0; i < vp->n && ptr[b] == NULL; i++)
            if (vp->uids[i] == bf->uid) ptr[b] = vp->pointers[i];
        if (ptr[b] == NULL && bf->zero_scaled) continue;
        if (ptr[b] == NULL)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the variant pack has no pointer for tensor UID %lld",
                            (long long)bf->uid);
        OCD_TRY(check_alignment(bf, ptr[b]));
    }
    for (int b = 0; b < pl->nbufs; b++)
        if (pl->bufs[b].kind == OCD_BUF_ALIAS) ptr[b] = ptr[pl->bufs[b].alias];
    return CUDNN_STATUS_SUCCESS;
}

/* Whether buffer b, a user's input of an anchor (output out) or of its chain, meets the chain
   output ob the anchor writes in place. */
static bool meets_output(const struct ocd_graph_plan *pl, void *const ptr[], int ob, int out, int b)
{
    return b >= 0 && b != out && b != ob && pl->bufs[b].kind == OCD_BUF_USER &&
           ocd_spans_meet(ptr[ob], &pl->bufs[ob].view, ptr[b], &pl->bufs[b].view);
}

/* An anchor writing a chain's output in place (engine_plan.c, place_in_output) would overwrite
   another input of the anchor or of the chain lying in that output's memory before the chain
   reads it. For such a pack (cuDNN computes it from its separate intermediate) this execution
   gives the anchor's output a temporary of the handle's backend, *tmp, and the chain reads it
   from there; the plan's workspace stays what every other pack needs. */
static cudnnStatus_t separate_in_place(cudnnHandle_t handle, const struct ocd_graph_plan *pl, void *ptr[], void **tmp)
{
    size_t off[OCD_PLAN_MAX_STAGES], total = 0;
    for (int k = 0; k + 1 < pl->nstages; k++) {
        const struct ocd_plan_stage *an = &pl->stages[k], *ch = &pl->stages[k + 1];
        const int ob = an->in_place - 1, out = ocd_plan_anchor_output(an);
        bool meets = false;
        if (an->in_place) {
            for (int i = 0; i < OCD_STAGE_BUFS; i++) meets = meets || meets_output(pl, ptr, ob, out, an->b[i]);
            for (int i = 0; i < ch->u.chain.ninputs; i++) meets = meets || meets_output(pl, ptr, ob, out, ch->b[i]);
        }
        off[k] = meets ? total : SIZE_MAX;
        if (meets) total = ocd_plan_align_up(total + pl->bufs[out].bytes);
    }
    *tmp = NULL;
    if (total == 0) return CUDNN_STATUS_SUCCESS;
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "an input lies in the output the convolution or matmul "
                    "writes in place: this execution writes it to a temporary of %zu bytes", total);
    if (ocd_backend_alloc(handle, tmp, total) != CUDNN_STATUS_SUCCESS)
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for the %zu-byte intermediate of an input in an output "
                        "written in place", total);
    for (int k = 0; k + 1 < pl->nstages; k++)
        if (off[k] != SIZE_MAX) ptr[ocd_plan_anchor_output(&pl->stages[k])] = (char *)*tmp + off[k];
    return CUDNN_STATUS_SUCCESS;
}

/* A side input scaled by 0 that the pack gives no pointer for (bind) reads zeros: one temporary
   of the handle's backend, *tmp, zero-filled, serves every such buffer a stage reads. */
static cudnnStatus_t zeros_for_absent(cudnnHandle_t handle, const struct ocd_graph_plan *pl, void *ptr[], void **tmp)
{
    size_t bytes = 0;
    *tmp = NULL;
    for (int k = 0; k < pl->nstages; k++)
        for (int i = 0; i < OCD_STAGE_BUFS; i++) {
            const int b = pl->stages[k].b[i];
            if (b >= 0 && pl->bufs[b].kind == OCD_BUF_USER && ptr[b] == NULL) bytes = OCD_MAX(bytes, pl->bufs[b].bytes);
        }
    if (bytes == 0) return CUDNN_STATUS_SUCCESS;
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "a side input scaled by 0 has no pointer in the variant "
                    "pack: this execution reads %zu bytes of zeros for it", bytes);
    void *host = ocd_calloc(1, bytes);
    if (host == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for %zu bytes of zeros", bytes);
    cudnnStatus_t st = ocd_backend_alloc(handle, tmp, bytes);
    if (st == CUDNN_STATUS_SUCCESS) st = ocd_backend_copy(handle, *tmp, host, bytes, OCD_COPY_FROM_HOST);
    free(host);
    if (st != CUDNN_STATUS_SUCCESS) {
        ocd_backend_release(handle, *tmp);
        *tmp = NULL;
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for the %zu-byte zeros of a side input scaled by 0", bytes);
    }
    for (int b = 0; b < pl->nbufs; b++)
        if (pl->bufs[b].kind == OCD_BUF_USER && ptr[b] == NULL) ptr[b] = *tmp;
    return CUDNN_STATUS_SUCCESS;
}

#define PTR(i) (s->b[i] >= 0 ? ptr[s->b[i]] : NULL)

/* A stage as one execution binds it: the convolution's plan is made for the bound problem. */
struct bound_stage {
    struct ocd_plan_stage s;
    struct ocd_impl_plan plan; /* CONV: the entry's plan */
};

static cudnnStatus_t run_stage(cudnnHandle_t handle, struct bound_stage *bs, void *const ptr[], void *scratch)
{
    struct ocd_plan_stage *s = &bs->s;
    switch (s->kind) {
    case OCD_ST_CONV:
        return ocd_impl_exec(handle, &s->impl->base, &s->u.conv, &bs->plan, scratch, s->scratch);
    case OCD_ST_GEMM:
        return ocd_gemm(handle, &s->u.gemm, PTR(0), PTR(1), PTR(2), PTR(3), EXEC_OP);
    case OCD_ST_CHAIN:
        return ocd_pw_chain_run(handle, &s->u.chain, EXEC_OP);
    case OCD_ST_REDUCE:
        s->u.red.a = PTR(0);
        s->u.red.c = PTR(1);
        s->u.red.partials = s->scratch ? (struct ocd_reduce_partial *)scratch : NULL;
        return ocd_reduce_run(handle, &s->u.red, EXEC_OP);
    case OCD_ST_BN_SUMS: return ocd_bn_run_problem(handle, &s->u.bn, scratch, s->scratch, EXEC_OP);
    case OCD_ST_BN_CHANNELS: return ocd_engine_bnf_run(handle, &s->u.bnf, EXEC_OP);
    case OCD_ST_PAD:
        s->u.fold.x = PTR(0);
        s->u.fold.y = PTR(1);
        return ocd_fold_run(handle, &s->u.fold, EXEC_OP);
    default:
        s->u.gs.dy_data = PTR(0);
        s->u.gs.db_data = PTR(1);
        s->u.gs.sq_data = PTR(2);
        return ocd_impl_run(handle, ocd_conv_bias_grad_impls, ocd_conv_bias_grad_impl_count, &s->u.gs, EXEC_OP);
    }
}

/* Binds a stage's problem to the pointers (the convolution's and the chain's; the others bind
   as they run); a convolution entry that declines the pointers (a kernel reading a tensor in
   place at more alignment than it has) hands this execution to another (ocd_engine_conv_rebind). */
static cudnnStatus_t bind_stage(cudnnHandle_t handle, struct bound_stage *bs, void *const ptr[])
{
    struct ocd_plan_stage *s = &bs->s;
    if (s->kind == OCD_ST_CONV) {
        struct ocd_conv_problem *p = &s->u.conv;
        p->x_data = PTR(0), p->w_data = PTR(1), p->y_data = PTR(2);
        if (p->ep.on) p->ep.z = p->ep.alpha2 != 0 ? PTR(3) : NULL, p->ep.bias = PTR(4);
        if (p->ep.scale_on) p->ep.scale = PTR(5);
        if (p->relu_grad) p->relu_x = PTR(3);
        const char *why = ocd_impl_rejects(handle, &s->impl->base, p, &bs->plan);
        if (why != NULL) OCD_TRY(ocd_engine_conv_rebind(handle, &s->impl, p, s->scratch, &bs->plan, why));
    } else if (s->kind == OCD_ST_BN_SUMS) {
        struct ocd_bn_problem *p = &s->u.bn;
        p->x_ptr = PTR(OCD_BNS_X), p->dy_ptr = PTR(OCD_BNS_DY), p->dx_ptr = PTR(OCD_BNS_DX);
        p->scale = PTR(OCD_BNS_SCALE), p->dscale = PTR(OCD_BNS_DSCALE), p->dbias = PTR(OCD_BNS_DBIAS);
        p->saved_mean = PTR(OCD_BNS_MEAN), p->saved_invstd = PTR(OCD_BNS_INVSTD);
    } else if (s->kind == OCD_ST_BN_CHANNELS) {
        void *bound[OCD_BNF_SLOTS];
        for (int k = 0; k < OCD_BNF_SLOTS; k++) bound[k] = PTR(k);
        ocd_engine_bnf_bind(&s->u.bnf, bound);
    } else if (s->kind == OCD_ST_CHAIN) {
        struct ocd_pw_chain *c = &s->u.chain;
        for (int k = 0; k < c->ninputs; k++) c->in[k].data = PTR(k);
        for (int k = 0; k < c->noutputs; k++) c->out[k].data = PTR(c->ninputs + k);
    }
    return CUDNN_STATUS_SUCCESS;
}

#undef PTR

static cudnnStatus_t run_plan(cudnnHandle_t handle, const struct ocd_graph_plan *pl, const struct ocd_graph_variant *vp)
{
    void *ptr[OCD_PLAN_MAX_BUFS];
    OCD_TRY(bind(pl, vp, ptr));
    void *tmp = NULL, *zeros = NULL;
    OCD_TRY(zeros_for_absent(handle, pl, ptr, &zeros));
    cudnnStatus_t sep = separate_in_place(handle, pl, ptr, &tmp);
    if (sep != CUDNN_STATUS_SUCCESS) {
        ocd_backend_release(handle, zeros);
        return sep;
    }
    struct bound_stage *stages = ocd_malloc((size_t)OCD_MAX(pl->nstages, 1) * sizeof *stages);
    if (stages == NULL) {
        ocd_backend_release(handle, tmp);
        ocd_backend_release(handle, zeros);
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory to bind the plan's stages");
    }
    for (int k = 0; k < pl->nstages; k++) stages[k].s = pl->stages[k], stages[k].plan.impl = NULL;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    for (int k = 0; k < pl->nstages && st == CUDNN_STATUS_SUCCESS; k++) st = bind_stage(handle, &stages[k], ptr);
    void *scratch = pl->total > 0 ? (char *)vp->workspace + pl->scratch_off : NULL;
    for (int k = 0; k < pl->nstages && st == CUDNN_STATUS_SUCCESS; k++) st = run_stage(handle, &stages[k], ptr, scratch);
    free(stages);
    ocd_backend_release(handle, tmp);
    ocd_backend_release(handle, zeros);
    return st;
}

cudnnStatus_t CUDNNWINAPI cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                                              cudnnBackendDescriptor_t variantPack)
{
    OCD_LOG_API("handle=%p executionPlan=%p variantPack=%p", (void *)handle, executionPlan, variantPack);
    OCD_CHECK_HANDLE(handle);
    const struct ocd_graph_exec *ex;
    struct ocd_graph_variant vp;
    OCD_TRY(ocd_backend_plan_of(executionPlan, "executionPlan", &ex));
    OCD_TRY(ocd_backend_variant_of(variantPack, "variantPack", &vp));
    if (ex->plan == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "executionPlan holds no built plan");
    if (ocd_handle_kind(handle) != ex->plan->backend)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the plan was built for a handle of the %s backend",
                        ex->plan->backend == OCD_BACKEND_CUDA ? "cuda" : "host");
    if (ex->replay[0] != '\0' && ocd_check_replay_wanted()) {
        char entry[48];
        snprintf(entry, sizeof entry, "%s engine %lld", handle->backend->name, (long long)ex->cfg.engine);
        ocd_check_log_replay(EXEC_OP, entry, ex->replay);
    }
    return run_plan(handle, ex->plan, &vp);
}
