/* attn_train.c: cudnnMultiHeadAttnBackwardData and cudnnMultiHeadAttnBackwardWeights
   (libcudnn_adv_train), on the call preparation and token GEMMs of attn.c and the attention
   core's backward.

   Backward data: dhbar = W_O^T dout (dout itself without an O projection; dout through the
   post-projection dropout's mask first when there is one), the core's backward
   from the forward's saved buffers (the projected Q, K, V and the attention output, in the
   reserve) gives the gradients of the projected buffers, which stay in the reserve for the
   weight gradients, and dx = W_X^T dxbar (the sum over heads without a projection). dqueries
   holds the gradient through the attention only: with residuals taken from the queries, the
   caller adds dout, as cuDNN documents. Backward weights: dW_X (+)= dxbar x^T and
   db_X (+)= sum of dxbar over the valid tokens (padding excluded), dW_O (+)= dout hbar^T.
   Each call's pass (backward_data_pass, backward_weights_pass) runs on the checked arguments
   alone, so that OPENCUDNN_CHECK can run it again on the host with copies of them, the reserve
   included (core/check.h's drivers; the reserve is backend-independent).

   cuDNN 8.2 rules implemented here: both calls need the reserve a training forward of the same
   problem wrote (BackwardWeights after BackwardData); the descriptors are checked as the forward
   checks them (dq/dk/dv/do descriptors for q/k/v/o); BAD_PARAM, nothing written, for a NULL
   pointer, a buffer below cudnnGetMultiHeadAttnBuffers' sizes, an output overlapping another
   buffer of the call, and an addGrad that is not a cudnnWgradMode_t. CUDNN_WGRAD_MODE_ADD adds
   to dweights, CUDNN_WGRAD_MODE_SET overwrites it. */
#include "adv/attn.h"

#include "core/check.h"
#include "core/dtype.h"
#include "ops/tensor_ops.h"

#include <stddef.h>
#include <string.h>

static bool overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a != NULL && b != NULL && x < y + b_bytes && y < x + a_bytes;
}

static size_t seq_bytes(const struct ocd_attn_call *call, const struct ocd_attn_seq *s)
{
    return (size_t)s->T * s->B * s->M * s->V * ocd_dtype_scalar_size(call->c->dtype);
}

/* The common buffer checks of both calls. */
static cudnnStatus_t check_buffers(const struct ocd_attn_call *call, size_t weight_bytes, const void *weights,
                                   size_t ws_bytes, const void *ws, size_t rs_bytes, const void *rs)
{
    const struct ocd_attn_config *c = call->c;
    size_t e = ocd_dtype_scalar_size(c->dtype);
    OCD_TRY(ocd_attn_check_buffer("weight", weight_bytes, (size_t)ocd_attn_weight_count(c) * e, weights));
    OCD_TRY(ocd_attn_check_buffer("workSpace", ws_bytes, call->l.workspace, ws));
    OCD_TRY(ocd_attn_check_buffer("reserveSpace", rs_bytes, call->l.reserve, rs));
    if (rs == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "reserveSpace is NULL: a backward needs the forward's");
    return CUDNN_STATUS_SUCCESS;
}

/* dout through the post-projection dropout's mask into the workspace; dout itself without one. */
static cudnnStatus_t undrop(const struct ocd_attn_call *call, const void *dout, void *ws, void *rs, const void **d)
{
    *d = dout;
    if (call->post_dropout <= 0) return CUDNN_STATUS_SUCCESS;
    struct ocd_dropout_problem p;
    ocd_attn_post_dropout(call, dout, (char *)ws + call->l.w_dout, (char *)rs + call->l.r_post_mask, &p);
    p.states = NULL;
    *d = p.dst_data;
    return ocd_dropout_backward_run(call->handle, &p, call->op);
}

static const void *weight_at(const struct ocd_attn_config *c, const void *weights, int kind)
{
    struct ocd_attn_weight w;
    ocd_attn_weight_of(c, kind, &w);
    return w.present ? (const char *)weights + (size_t)w.offset * ocd_dtype_scalar_size(c->dtype) : NULL;
}

/* The second opinion's tolerance (core/check.h): the forward's. */
static double check_tolerance(const struct ocd_attn_config *c)
{
    return ocd_check_driver_tolerance(c->dtype, ocd_gemm_compute_for(c->dtype, c->math) == OCD_GEMM_COMPUTE_TF32);
}

/* A BackwardData call's arguments once checked: the problem its pass runs on, whose pointers
   OPENCUDNN_CHECK copies (core/check.h). */
struct mha_backward_data {
    struct ocd_attn_call call;
    const int *lo, *hi;         /* the windows (host) */
    const int *len_qo, *len_kv; /* the sequence lengths (backend memory) */
    const void *dout, *queries, *keys, *values, *weights;
    void *dq, *dk, *dv, *ws, *rs;
};

/* The pass on the handle (the run signature of an implementation entry: the spaces are the
   arguments'). */
static cudnnStatus_t backward_data_pass(cudnnHandle_t handle, const void *args, void *workspace,
                                        size_t workspace_bytes)
{
    (void)workspace, (void)workspace_bytes;
    const struct mha_backward_data *a = args;
    struct ocd_attn_call call = a->call;
    call.handle = handle;
    const void *weights = a->weights;
    const struct ocd_attn_config *c = call.c;
    const struct ocd_attn_layout *l = &call.l;
    int H = c->heads, qk = ocd_attn_head_qk(c), hv = ocd_attn_head_v(c);
    char *rs = a->rs, *ws = a->ws;
    const void *dh;
    OCD_TRY(undrop(&call, a->dout, ws, rs, &dh));
    if (c->o_proj > 0) {
        OCD_TRY(ocd_attn_gemm_tokens(&call, &call.o, -1, H * hv, c->o_proj, true, weight_at(c, weights, 3), c->o_proj,
                                     dh, c->o_proj, ws + l->w_dhbar, H * hv, NULL, 0));
        dh = ws + l->w_dhbar;
    }
    struct ocd_attn_core_problem core;
    ocd_attn_core_init(&call, &core, a->len_qo, a->len_kv, a->lo, a->hi);
    ocd_attn_operands(&call, &core, c->q_proj > 0 ? rs + l->r_qbar : a->queries,
                      c->k_proj > 0 ? rs + l->r_kbar : a->keys, c->v_proj > 0 ? rs + l->r_vbar : a->values,
                      rs + l->r_hbar);
    /* the gradients, and dout's heads, always per head */
    struct ocd_attn_core_problem grads;
    ocd_attn_core_init(&call, &grads, NULL, NULL, NULL, NULL);
    struct ocd_attn_config per_head = *c;
    if (per_head.q_proj == 0) per_head.q_proj = c->q_size;
    if (per_head.k_proj == 0) per_head.k_proj = c->k_size;
    if (per_head.v_proj == 0) per_head.v_proj = c->v_size;
    struct ocd_attn_call grad_call = call;
    grad_call.c = &per_head;
    ocd_attn_operands(&grad_call, &grads, rs + l->r_dqbar, rs + l->r_dkbar, rs + l->r_dvbar, dh);
    core.d_o = grads.o;
    core.dq = grads.q;
    core.dk = grads.k;
    core.dv = grads.v;
    core.dropout = call.attn_dropout;
    OCD_TRY(ocd_attn_core_backward(handle, &core, ws + l->w_core, l->core_workspace, rs, l->core_reserve, call.op));
    if (c->q_proj > 0)
        OCD_TRY(ocd_attn_gemm_tokens(&call, &call.q, -1, c->q_size, H * qk, true, weight_at(c, weights, 0), H * qk,
                                     rs + l->r_dqbar, H * qk, a->dq, c->q_size, NULL, 0));
    else
        OCD_TRY(ocd_attn_sum_heads(&call, &call.q, rs + l->r_dqbar, c->q_size, a->dq));
    if (c->k_proj > 0)
        OCD_TRY(ocd_attn_gemm_tokens(&call, &call.k, -1, c->k_size, H * qk, true, weight_at(c, weights, 1), H * qk,
                                     rs + l->r_dkbar, H * qk, a->dk, c->k_size, NULL, 0));
    else
        OCD_TRY(ocd_attn_sum_heads(&call, &call.k, rs + l->r_dkbar, c->k_size, a->dk));
    if (c->v_proj > 0)
        OCD_TRY(ocd_attn_gemm_tokens(&call, &call.v, -1, c->v_size, H * hv, true, weight_at(c, weights, 2), H * hv,
                                     rs + l->r_dvbar, H * hv, a->dv, c->v_size, NULL, 0));
    else
        OCD_TRY(ocd_attn_sum_heads(&call, &call.v, rs + l->r_dvbar, c->v_size, a->dv));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnMultiHeadAttnBackwardData(
    cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc, const int loWinIdx[], const int hiWinIdx[],
    const int devSeqLengthsDQDO[], const int devSeqLengthsDKDV[], const cudnnSeqDataDescriptor_t doDesc,
    const void *dout, const cudnnSeqDataDescriptor_t dqDesc, void *dqueries, const void *queries,
    const cudnnSeqDataDescriptor_t dkDesc, void *dkeys, const void *keys, const cudnnSeqDataDescriptor_t dvDesc,
    void *dvalues, const void *values, size_t weightSizeInBytes, const void *weights, size_t workSpaceSizeInBytes,
    void *workSpace, size_t reserveSpaceSizeInBytes, void *reserveSpace)
{
    OCD_LOG_API("handle=%p attnDesc=%p loWinIdx=%p hiWinIdx=%p devSeqLengthsDQDO=%p devSeqLengthsDKDV=%p doDesc=%p "
                "dout=%p dqDesc=%p dqueries=%p queries=%p dkDesc=%p dkeys=%p keys=%p dvDesc=%p dvalues=%p values=%p "
                "weightSizeInBytes=%zu weights=%p workSpaceSizeInBytes=%zu workSpace=%p reserveSpaceSizeInBytes=%zu "
                "reserveSpace=%p",
                (void *)handle, (void *)attnDesc, (const void *)loWinIdx, (const void *)hiWinIdx,
                (const void *)devSeqLengthsDQDO, (const void *)devSeqLengthsDKDV, (void *)doDesc, dout,
                (void *)dqDesc, dqueries, queries, (void *)dkDesc, dkeys, keys, (void *)dvDesc, dvalues, values,
                weightSizeInBytes, weights, workSpaceSizeInBytes, workSpace, reserveSpaceSizeInBytes, reserveSpace);
    const char *op = "cudnnMultiHeadAttnBackwardData";
    struct ocd_attn_call call;
    OCD_TRY(ocd_attn_prepare(handle, attnDesc, dqDesc, dkDesc, dvDesc, doDesc, op, &call));
    if (dout == NULL || dqueries == NULL || queries == NULL || dkeys == NULL || keys == NULL || dvalues == NULL ||
        values == NULL || loWinIdx == NULL || hiWinIdx == NULL || devSeqLengthsDQDO == NULL ||
        devSeqLengthsDKDV == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "a data, window or sequence-length pointer is NULL");
    OCD_TRY(check_buffers(&call, weightSizeInBytes, weights, workSpaceSizeInBytes, workSpace, reserveSpaceSizeInBytes,
                          reserveSpace));
    const void *outs[] = {dqueries, dkeys, dvalues};
    size_t out_bytes[] = {seq_bytes(&call, &call.q), seq_bytes(&call, &call.k), seq_bytes(&call, &call.v)};
    const void *ins[] = {dout, queries, keys, values, weights, dqueries, dkeys, dvalues};
    size_t in_bytes[] = {seq_bytes(&call, &call.o), out_bytes[0], out_bytes[1], out_bytes[2],
                         weightSizeInBytes, out_bytes[0], out_bytes[1], out_bytes[2]};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 8; j++)
            if (j != 5 + i && overlap(outs[i], out_bytes[i], ins[j], in_bytes[j]))
                return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dqueries, dkeys or dvalues overlaps another buffer of the call");
    struct mha_backward_data a = {call, loWinIdx, hiWinIdx, devSeqLengthsDQDO, devSeqLengthsDKDV, dout, queries,
                                  keys, values, weights, dqueries, dkeys, dvalues, workSpace, reserveSpace};
    if (!ocd_check_enabled()) return backward_data_pass(handle, &a, NULL, 0);
    const struct ocd_attn_config *c = call.c;
    size_t e = ocd_dtype_scalar_size(c->dtype);
    struct ocd_check_call check = {.op = op, .problem_size = sizeof a, .tolerance = check_tolerance(c)};
    ocd_attn_replay(&call, "bwd", -1, loWinIdx, hiWinIdx, NULL, check.replay, sizeof check.replay);
#define FIELD(f) offsetof(struct mha_backward_data, f)
    ocd_check_add_array(&check, FIELD(dq), c->dtype, (int64_t)(out_bytes[0] / e), true);
    ocd_check_add_array(&check, FIELD(dk), c->dtype, (int64_t)(out_bytes[1] / e), true);
    ocd_check_add_array(&check, FIELD(dv), c->dtype, (int64_t)(out_bytes[2] / e), true);
    ocd_check_add_array(&check, FIELD(dout), c->dtype, (int64_t)(in_bytes[0] / e), false);
    ocd_check_add_array(&check, FIELD(queries), c->dtype, (int64_t)(out_bytes[0] / e), false);
    ocd_check_add_array(&check, FIELD(keys), c->dtype, (int64_t)(out_bytes[1] / e), false);
    ocd_check_add_array(&check, FIELD(values), c->dtype, (int64_t)(out_bytes[2] / e), false);
    ocd_check_add_array(&check, FIELD(weights), c->dtype, ocd_attn_weight_count(c), false);
    ocd_check_add_array(&check, FIELD(len_qo), CUDNN_DATA_INT32, (int64_t)call.q.B * call.q.M, false);
    ocd_check_add_array(&check, FIELD(len_kv), CUDNN_DATA_INT32, (int64_t)call.k.B * call.k.M, false);
    ocd_check_add_scratch(&check, FIELD(ws), call.l.workspace);
    ocd_check_add_array(&check, FIELD(rs), CUDNN_DATA_INT8, (int64_t)call.l.reserve, false);
#undef FIELD
    return ocd_check_run_driver(handle, "mha_backward_data", backward_data_pass, &a, &check);
}

/* Fills n elements of the data type with 1 (the bias gradients' summing vector). */
static cudnnStatus_t ones(const struct ocd_attn_call *call, void *y, int64_t n)
{
    struct ocd_tensor_view v = {.dtype = call->c->dtype, .rank = 1, .vect = 1, .dims = {n}, .strides = {1}};
    const uint64_t one = call->c->dtype == CUDNN_DATA_DOUBLE ? 0x3ff0000000000000ull
                         : call->c->dtype == CUDNN_DATA_HALF ? 0x3c00
                                                             : 0x3f800000;
    return ocd_ewise_fill(call->handle, &v, y, one, call->op);
}

/* A BackwardWeights call's arguments once checked (see struct mha_backward_data). */
struct mha_backward_weights {
    struct ocd_attn_call call;
    bool add; /* CUDNN_WGRAD_MODE_ADD */
    const void *queries, *keys, *values, *dout;
    void *dweights, *ws, *rs;
};

static cudnnStatus_t backward_weights_pass(cudnnHandle_t handle, const void *args, void *workspace,
                                           size_t workspace_bytes)
{
    (void)workspace, (void)workspace_bytes;
    const struct mha_backward_weights *a = args;
    struct ocd_attn_call call = a->call;
    call.handle = handle;
    const struct ocd_attn_config *c = call.c;
    const struct ocd_attn_layout *l = &call.l;
    int H = c->heads, qk = ocd_attn_head_qk(c), hv = ocd_attn_head_v(c);
    char *rs = a->rs, *ws = a->ws;
    const void *dout = a->dout;
    void *one = ws + l->w_ones;
    if (c->biases) OCD_TRY(ones(&call, one, OCD_MAX(l->qo_tokens, l->kv_tokens)));
    if (c->o_proj > 0) OCD_TRY(undrop(&call, dout, ws, rs, &dout));
    const struct ocd_attn_seq *seqs[] = {&call.q, &call.k, &call.v, &call.o};
    const void *xs[] = {a->queries, a->keys, a->values, rs + l->r_hbar};
    const void *dys[] = {rs + l->r_dqbar, rs + l->r_dkbar, rs + l->r_dvbar, dout};
    const int rows[] = {H * qk, H * qk, H * hv, c->o_proj}, cols[] = {c->q_size, c->k_size, c->v_size, H * hv};
    for (int kind = 0; kind < 4; kind++) {
        void *dw = (void *)weight_at(c, a->dweights, kind), *db = (void *)weight_at(c, a->dweights, kind + 4);
        if (dw == NULL) continue;
        OCD_TRY(ocd_attn_gemm_wgrad(&call, seqs[kind], rows[kind], cols[kind], dys[kind], xs[kind], dw, NULL, a->add));
        if (db != NULL)
            OCD_TRY(ocd_attn_gemm_wgrad(&call, seqs[kind], rows[kind], 1, dys[kind], NULL, db, one, a->add));
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnMultiHeadAttnBackwardWeights(
    cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc, cudnnWgradMode_t addGrad,
    const cudnnSeqDataDescriptor_t qDesc, const void *queries, const cudnnSeqDataDescriptor_t kDesc, const void *keys,
    const cudnnSeqDataDescriptor_t vDesc, const void *values, const cudnnSeqDataDescriptor_t doDesc, const void *dout,
    size_t weightSizeInBytes, const void *weights, void *dweights, size_t workSpaceSizeInBytes, void *workSpace,
    size_t reserveSpaceSizeInBytes, void *reserveSpace)
{
    OCD_LOG_API("handle=%p attnDesc=%p addGrad=%d qDesc=%p queries=%p kDesc=%p keys=%p vDesc=%p values=%p doDesc=%p "
                "dout=%p weightSizeInBytes=%zu weights=%p dweights=%p workSpaceSizeInBytes=%zu workSpace=%p "
                "reserveSpaceSizeInBytes=%zu reserveSpace=%p",
                (void *)handle, (void *)attnDesc, (int)addGrad, (void *)qDesc, queries, (void *)kDesc, keys,
                (void *)vDesc, values, (void *)doDesc, dout, weightSizeInBytes, weights, dweights,
                workSpaceSizeInBytes, workSpace, reserveSpaceSizeInBytes, reserveSpace);
    const char *op = "cudnnMultiHeadAttnBackwardWeights";
    struct ocd_attn_call call;
    OCD_TRY(ocd_attn_prepare(handle, attnDesc, qDesc, kDesc, vDesc, doDesc, op, &call));
    if ((unsigned)addGrad > CUDNN_WGRAD_MODE_SET)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "addGrad %d is not a cudnnWgradMode_t", (int)addGrad);
    if (queries == NULL || keys == NULL || values == NULL || dout == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "queries, keys, values or dout is NULL");
    OCD_TRY(check_buffers(&call, weightSizeInBytes, weights, workSpaceSizeInBytes, workSpace, reserveSpaceSizeInBytes,
                          reserveSpace));
    const struct ocd_attn_config *c = call.c;
    size_t w_bytes = (size_t)ocd_attn_weight_count(c) * ocd_dtype_scalar_size(c->dtype);
    if (w_bytes > 0 && dweights == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dweights is NULL");
    const void *ins[] = {weights, queries, keys, values, dout};
    size_t in_bytes[] = {w_bytes, seq_bytes(&call, &call.q), seq_bytes(&call, &call.k), seq_bytes(&call, &call.v),
                         seq_bytes(&call, &call.o)};
    for (int j = 0; j < 5; j++)
        if (overlap(dweights, w_bytes, ins[j], in_bytes[j]))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dweights overlaps another buffer of the call");
    if (w_bytes == 0) { /* no projections: no weights */
        if (ocd_check_replay_wanted()) {
            char replay[128];
            ocd_attn_replay(&call, "bwd", -1, NULL, NULL, NULL, replay, sizeof replay);
            ocd_check_log_replay(op, handle->backend->name, replay);
        }
        return CUDNN_STATUS_SUCCESS;
    }
    struct mha_backward_weights a = {call, addGrad == CUDNN_WGRAD_MODE_ADD, queries, keys, values, dout, dweights,
                                     workSpace, reserveSpace};
    if (!ocd_check_enabled()) return backward_weights_pass(handle, &a, NULL, 0);
    size_t e = ocd_dtype_scalar_size(c->dtype);
    struct ocd_check_call check = {.op = op, .problem_size = sizeof a, .tolerance = check_tolerance(c)};
    ocd_attn_replay(&call, "bwd", -1, NULL, NULL, NULL, check.replay, sizeof check.replay);
#define FIELD(f) offsetof(struct mha_backward_weights, f)
    ocd_check_add_array(&check, FIELD(dweights), c->dtype, ocd_attn_weight_count(c), true); /* ADD: onto a copy */
    ocd_check_add_array(&check, FIELD(queries), c->dtype, (int64_t)(in_bytes[1] / e), false);
    ocd_check_add_array(&check, FIELD(keys), c->dtype, (int64_t)(in_bytes[2] / e), false);
    ocd_check_add_array(&check, FIELD(values), c->dtype, (int64_t)(in_bytes[3] / e), false);
    ocd_check_add_array(&check, FIELD(dout), c->dtype, (int64_t)(in_bytes[4] / e), false);
    ocd_check_add_scratch(&check, FIELD(ws), call.l.workspace);
    ocd_check_add_array(&check, FIELD(rs), CUDNN_DATA_INT8, (int64_t)call.l.reserve, false);
#undef FIELD
    return ocd_check_run_driver(handle, "mha_backward_weights", backward_weights_pass, &a, &check);
}
