/* engine_plan.c: the execution plans of the backend API: which stages run a graph under an
   engine, the rewrites that fuse them, and the workspace they need (engine_exec.c runs them).

   Main decision: a plan is a short list of stages, each one call of an implementation table the
   legacy API already has: a convolution (the registry entry the engine chose), a GEMM
   (ocd_gemm), a reduction, channel statistics (the bias-gradient kernels with their sum of
   squares), the batch-norm passes (engine_bn.c: the backward sums, the per-channel finalize),
   or a pointwise chain (problem/pointwise.h): every run of consecutive pointwise ops
   of one output shape is one elementwise pass, its virtual tensors kept in registers. A virtual
   tensor between stages lives in the workspace, in the layout its descriptor gives, stored in
   the type of its producer's data (a convolution of half data writes half; of int8 data, the
   FLOAT it is declared). Two rewrites make
   the common fusions cheaper:
   - epilogue fusion: a forward convolution followed by a chain of the form
     act(s * alpha1 * conv + alpha2 * z + bias) (ADD of a tensor shaped like the output, ADD of a
     per-channel bias, at most one MUL by a per-channel scale s anywhere before a final forward
     activation) runs as one convolution with the registry's epilogue (struct
     ocd_conv_epilogue), when the implementation the engine chose takes it (every host entry
     that stores through it; on CUDA the implicit GEMM and direct kernels, for z, bias and a
     default RELU_FWD only): ConvBiasAct, ConvScaleBiasAddAct, ConvBiasScaleAct in one kernel;
     and a matmul followed by act(alpha1 * matmul + bias) (an optional bias per row or column,
     an optional forward activation) runs as one GEMM with its epilogue (problem/gemm.h), when
     an implementation of the backend takes it (every activation: on CUDA cuBLASLt's epilogue
     adds the bias and a default RELU_FWD, and a pass over C applies any other): MatmulBiasAct;
   - in place: otherwise, when the chain writes a tensor laid out like the anchor's (the
     convolution's or GEMM's) output, the anchor writes there and the chain runs in place, so
     the intermediate needs no workspace (a variant pack that puts another input of the anchor
     or the chain in that output's memory runs with the intermediate in a temporary instead).
   A plan is immutable once built. */
#include "graph/engine_plan.h"

#include "core/dtype.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ---------------------------------------------------------------------------------- */

struct builder {
    cudnnHandle_t handle;
    const struct ocd_graph *g;
    const struct ocd_engine_id *id;
    struct ocd_graph_plan *pl;
    int chain_of[OCD_GRAPH_MAX_OPS];   /* pointwise op -> its chain, else -1 */
    int *buf_of_node;                  /* graph node -> its buffer, else -1 */
};

static bool is_pw(const struct ocd_graph_op *op)
{
    return op->kind == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR;
}

static bool pw_backward(const struct ocd_graph_op *op)
{
    return op->p.pw.mode >= CUDNN_POINTWISE_RELU_BWD;
}

/* The output slot of a pointwise op. */
static int pw_out(const struct ocd_graph_op *op)
{
    return pw_backward(op) ? OCD_GT_PW_DX : OCD_GT_PW_Y;
}

static int node_index(const struct ocd_graph *g, int64_t uid)
{
    const struct ocd_graph_node *n = ocd_graph_find(g, uid);
    return n ? (int)(n - g->nodes) : -1;
}

/* Whether the op reads the tensor of uid. */
static bool op_reads(const struct ocd_graph_op *op, int64_t uid)
{
    for (int s = 0; s < OCD_GRAPH_OP_MAX_TENSORS; s++)
        if ((op->present & (1u << s)) && !(op->outputs & (1u << s)) && op->t[s].uid == uid) return true;
    return false;
}

/* Whether the tensor of uid is read only as the B operand of pointwise ops whose ALPHA2 is 0:
   OpenVINO's fused convolution passes such a side input with a NULL pointer, or leaves it out of
   the variant pack, when there is none to add; its value cannot matter, so Execute reads zeros. */
static bool zero_scaled_only(const struct ocd_graph *g, int64_t uid)
{
    bool read = false;
    for (int i = 0; i < g->n_ops; i++) {
        const struct ocd_graph_op *op = &g->ops[i];
        if (!op_reads(op, uid)) continue;
        if (!is_pw(op) || !(op->present & (1u << OCD_GT_PW_B)) || op->t[OCD_GT_PW_B].uid != uid || op->beta != 0)
            return false;
        for (int t = 0; t < OCD_GRAPH_OP_MAX_TENSORS; t++)
            if (t != OCD_GT_PW_B && (op->present & (1u << t)) && op->t[t].uid == uid) return false;
        read = true;
    }
    return read;
}

/* A virtual tensor made and read inside one pointwise chain needs no memory. */
static bool needs_memory(const struct builder *bd, int node)
{
    const struct ocd_graph_node *n = &bd->g->nodes[node];
    if (!n->t.is_virtual || n->producer < 0) return true;
    int chain = bd->chain_of[n->producer];
    if (chain < 0) return true;
    for (int i = 0; i < bd->g->n_ops; i++)
        if (op_reads(&bd->g->ops[i], n->t.uid) && bd->chain_of[i] != chain) return true;
    return false;
}

static cudnnStatus_t view_of(const struct ocd_graph_tensor *t, struct ocd_tensor_view *v)
{
    return ocd_graph_tensor_view(t, v);
}

/* A new buffer of a kind holding a view (its memory: the view's span). */
static cudnnStatus_t new_buffer(struct builder *bd, enum ocd_plan_buf_kind kind, const struct ocd_tensor_view *v,
                                int *out)
{
    struct ocd_graph_plan *pl = bd->pl;
    if (pl->nbufs == OCD_PLAN_MAX_BUFS)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the graph has more than %d tensors in memory", OCD_PLAN_MAX_BUFS);
    struct ocd_plan_buf *b = &pl->bufs[pl->nbufs];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->view = *v;
    b->bytes = (size_t)ocd_view_span_bytes(v);
    *out = pl->nbufs++;
    return CUDNN_STATUS_SUCCESS;
}

/* The buffer of a tensor, made on first use with the given stored view (a virtual tensor is
   stored as its producer writes it). */
static cudnnStatus_t buffer(struct builder *bd, const struct ocd_graph_tensor *t, const struct ocd_tensor_view *stored,
                            int *out)
{
    int node = node_index(bd->g, t->uid);
    if (node >= 0 && bd->buf_of_node[node] >= 0) {
        *out = bd->buf_of_node[node];
        return CUDNN_STATUS_SUCCESS;
    }
    struct ocd_tensor_view v;
    if (stored) v = *stored;
    else OCD_TRY(view_of(t, &v));
    OCD_TRY(new_buffer(bd, t->is_virtual ? OCD_BUF_WORK : OCD_BUF_USER, &v, out));
    struct ocd_plan_buf *b = &bd->pl->bufs[*out];
    b->uid = t->uid;
    b->by_value = t->by_value;
    b->zero_scaled = !t->is_virtual && zero_scaled_only(bd->g, t->uid);
    b->alignment = t->by_value ? 0 : t->alignment; /* a by-value scalar lies in host memory */
    if (node >= 0) bd->buf_of_node[node] = *out;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t new_stage(struct builder *bd, enum ocd_plan_stage_kind kind, struct ocd_plan_stage **out)
{
    struct ocd_graph_plan *pl = bd->pl;
    if (pl->nstages == OCD_PLAN_MAX_STAGES)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the graph needs more than %d stages", OCD_PLAN_MAX_STAGES);
    struct ocd_plan_stage *s = &pl->stages[pl->nstages++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    for (int i = 0; i < OCD_STAGE_BUFS; i++) s->b[i] = -1;
    *out = s;
    return CUDNN_STATUS_SUCCESS;
}

/* The stage moving x between its own view and the zero-padded one an asymmetrically padded
   convolution runs on (ocd_graph_conv_problem): pad (crop false: x into the workspace) or crop
   (the data gradient out of it, blended into dx by beta). */
static cudnnStatus_t add_pad(struct builder *bd, const struct ocd_graph_op *op, const struct ocd_tensor_view *own,
                             int own_buf, const struct ocd_tensor_view *padded, int padded_buf, bool crop, double beta)
{
    struct ocd_plan_stage *s = NULL;
    OCD_TRY(new_stage(bd, OCD_ST_PAD, &s));
    struct ocd_fold *f = &s->u.fold;
    f->src = crop ? *padded : *own;
    f->dst = crop ? *own : *padded;
    f->unfold = crop;
    f->padded_c = own->dims[1];
    for (int d = 0; d < own->rank; d++) {
        f->pad_before[d] = d >= 2 ? op->p.conv.pre[d - 2] : 0;
        f->factor[d] = 1;
    }
    f->alpha = 1;
    f->beta = beta;
    s->b[0] = crop ? padded_buf : own_buf;
    s->b[1] = crop ? own_buf : padded_buf;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t add_conv(struct builder *bd, const struct ocd_graph_op *op)
{
    struct ocd_conv_problem p;
    OCD_TRY(ocd_engine_conv_problem(op, &p));
    char why[1024];
    const struct ocd_conv_impl *impl = ocd_engine_conv_pick(bd->handle, bd->id, &p, why, sizeof why);
    if (impl == NULL) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s: %s", ocd_graph_op_name(op->kind), why);
    int xb = -1;
    const bool asym = ocd_graph_conv_asymmetric(&op->p.conv), crop = asym && p.dir == OCD_CONV_BWD_DATA;
    struct ocd_tensor_view own;
    if (asym) { /* x in its own view, and the zero-padded copy in the workspace the convolution runs on */
        int ob = -1;
        OCD_TRY(view_of(&op->t[OCD_GT_CONV_X], &own));
        if (op->t[OCD_GT_CONV_X].is_virtual) own.dtype = p.x.dtype;
        OCD_TRY(buffer(bd, &op->t[OCD_GT_CONV_X], &own, &ob));
        own = bd->pl->bufs[ob].view;
        OCD_TRY(new_buffer(bd, OCD_BUF_WORK, &p.x, &xb));
        if (!crop) OCD_TRY(add_pad(bd, op, &own, ob, &p.x, xb, false, 0));
        if (crop) {
            const double beta = p.beta;
            p.beta = 0; /* dx blends in the crop */
            struct ocd_plan_stage *s = NULL;
            OCD_TRY(new_stage(bd, OCD_ST_CONV, &s));
            s->u.conv = p, s->impl = impl;
            s->scratch = ocd_conv_impl_workspace(bd->handle, impl, &p, NULL);
            s->b[0] = xb;
            OCD_TRY(buffer(bd, &op->t[OCD_GT_CONV_W], &p.w, &s->b[1]));
            OCD_TRY(buffer(bd, &op->t[OCD_GT_CONV_Y], &p.y, &s->b[2]));
            return add_pad(bd, op, &own, ob, &p.x, xb, true, beta);
        }
    }
    struct ocd_plan_stage *s = NULL;
    OCD_TRY(new_stage(bd, OCD_ST_CONV, &s));
    s->u.conv = p, s->impl = impl;
    s->scratch = ocd_conv_impl_workspace(bd->handle, impl, &p, NULL);
    if (xb >= 0) s->b[0] = xb;
    else OCD_TRY(buffer(bd, &op->t[OCD_GT_CONV_X], &p.x, &s->b[0]));
    OCD_TRY(buffer(bd, &op->t[OCD_GT_CONV_W], &p.w, &s->b[1]));
    OCD_TRY(buffer(bd, &op->t[OCD_GT_CONV_Y], &p.y, &s->b[2]));
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t add_matmul(struct builder *bd, const struct ocd_graph_op *op)
{
    struct ocd_tensor_view a, b, c;
    OCD_TRY(view_of(&op->t[OCD_GT_MM_A], &a));
    OCD_TRY(view_of(&op->t[OCD_GT_MM_B], &b));
    OCD_TRY(view_of(&op->t[OCD_GT_MM_C], &c));
    if (a.rank != 3 || b.rank != 3 || c.rank != 3)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "matmul runs tensors of rank 3 ([batch, rows, cols])");
    if (a.dtype != b.dtype) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "matmul operands of different types");
    if (a.dtype != CUDNN_DATA_FLOAT && a.dtype != CUDNN_DATA_DOUBLE && a.dtype != CUDNN_DATA_HALF &&
        a.dtype != CUDNN_DATA_BFLOAT16) /* the GEMM table's operand types (ops/gemm.c): refused here, not at Execute */
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "matmul of %s operands: no GEMM runs them", ocd_dtype_name(a.dtype));
    const bool sixteen = a.dtype == CUDNN_DATA_HALF || a.dtype == CUDNN_DATA_BFLOAT16;
    if (op->t[OCD_GT_MM_C].is_virtual) c.dtype = sixteen ? CUDNN_DATA_FLOAT : a.dtype;
    struct ocd_plan_stage *s = NULL;
    OCD_TRY(new_stage(bd, OCD_ST_GEMM, &s));
    struct ocd_gemm_problem *g = &s->u.gemm;
    const int64_t M = c.dims[1], N = c.dims[2], K = a.dims[2];
    /* C row-major: C^T = B^T A^T in column-major terms; C column-major: C = A B */
    const bool swap = ocd_engine_row_major_c(&c);
    const struct ocd_tensor_view *ba = swap ? &b : &a, *bb = swap ? &a : &b;
    g->m = swap ? N : M, g->n = swap ? M : N, g->k = K;
    bool ok = swap ? ocd_engine_blas_operand(N, K, b.strides[2], b.strides[1], &g->trans_a, &g->lda) &&
                         ocd_engine_blas_operand(K, M, a.strides[2], a.strides[1], &g->trans_b, &g->ldb)
                   : ocd_engine_blas_operand(M, K, a.strides[1], a.strides[2], &g->trans_a, &g->lda) &&
                         ocd_engine_blas_operand(K, N, b.strides[1], b.strides[2], &g->trans_b, &g->ldb);
    int64_t ldc_rows = g->m;
    bool ctrans;
    ok = ok && (swap ? ocd_engine_blas_operand(N, M, c.strides[2], c.strides[1], &ctrans, &g->ldc)
                     : ocd_engine_blas_operand(M, N, c.strides[1], c.strides[2], &ctrans, &g->ldc)) && !ctrans && g->ldc >= ldc_rows;
    if (!ok) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "matmul tensors need a unit stride in one of their two matrix dims");
    g->batch = c.dims[0];
    g->stride_a = ba->dims[0] == 1 ? 0 : ba->strides[0];
    g->stride_b = bb->dims[0] == 1 ? 0 : bb->strides[0];
    g->stride_c = c.strides[0];
    g->ab_type = a.dtype;
    g->c_type = c.dtype;
    g->compute = a.dtype == CUDNN_DATA_DOUBLE ? OCD_GEMM_COMPUTE_F64 : OCD_GEMM_COMPUTE_F32;
    g->alpha = 1;
    OCD_TRY(buffer(bd, &op->t[swap ? OCD_GT_MM_B : OCD_GT_MM_A], NULL, &s->b[0]));
    OCD_TRY(buffer(bd, &op->t[swap ? OCD_GT_MM_A : OCD_GT_MM_B], NULL, &s->b[1]));
    OCD_TRY(buffer(bd, &op->t[OCD_GT_MM_C], &c, &s->b[2]));
    return CUDNN_STATUS_SUCCESS;
}

static bool reducible(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16 || t == CUDNN_DATA_INT8;
}

/* The stored view of an input: its buffer's when a stage made it already. */
static cudnnStatus_t input_view(struct builder *bd, const struct ocd_graph_tensor *t, struct ocd_tensor_view *v)
{
    int node = node_index(bd->g, t->uid);
    if (node >= 0 && bd->buf_of_node[node] >= 0) {
        *v = bd->pl->bufs[bd->buf_of_node[node]].view;
        return CUDNN_STATUS_SUCCESS;
    }
    return view_of(t, v);
}

static cudnnStatus_t add_reduction(struct builder *bd, const struct ocd_graph_op *op)
{
    struct ocd_tensor_view x, y;
    OCD_TRY(input_view(bd, &op->t[OCD_GT_RED_X], &x));
    OCD_TRY(view_of(&op->t[OCD_GT_RED_Y], &y));
    if (x.rank != y.rank) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "reduction between tensors of different ranks");
    for (int d = 0; d < x.rank; d++)
        if (y.dims[d] != x.dims[d] && y.dims[d] != 1)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "reduction output dim %d is neither the input's nor 1", d);
    const bool dbl = op->p.red.comp == CUDNN_DATA_DOUBLE;
    if ((x.dtype == CUDNN_DATA_DOUBLE) != (y.dtype == CUDNN_DATA_DOUBLE) || (!dbl && (!reducible(x.dtype) || !reducible(y.dtype))))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "reductions of %s into %s with compute %s are not supported",
                        ocd_dtype_name(x.dtype), ocd_dtype_name(y.dtype), ocd_dtype_name(op->p.red.comp));
    struct ocd_plan_stage *s = NULL;
    OCD_TRY(new_stage(bd, OCD_ST_REDUCE, &s));
    ocd_reduce_build(&s->u.red, &x, &y);
    s->u.red.op = op->p.red.op;
    s->u.red.double_compute = dbl;
    s->u.red.alpha = 1;
    s->scratch = ocd_reduce_workspace(&s->u.red);
    OCD_TRY(buffer(bd, &op->t[OCD_GT_RED_X], NULL, &s->b[0]));
    OCD_TRY(buffer(bd, &op->t[OCD_GT_RED_Y], NULL, &s->b[1]));
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t add_genstats(struct builder *bd, const struct ocd_graph_op *op)
{
    struct ocd_tensor_view x, sum, sq;
    OCD_TRY(input_view(bd, &op->t[OCD_GT_GS_X], &x));
    OCD_TRY(view_of(&op->t[OCD_GT_GS_SUM], &sum));
    OCD_TRY(view_of(&op->t[OCD_GT_GS_SQSUM], &sq));
    bool shape = sum.rank == x.rank && x.rank >= 3 && sum.dims[1] == x.dims[1] && ocd_view_same_dims(&sum, &sq) &&
                 sum.dtype == sq.dtype && ocd_view_same_strides(&sum, &sq);
    for (int d = 0; d < sum.rank && shape; d++) shape = d == 1 || sum.dims[d] == 1;
    if (!shape)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "statistics need sum and square-sum tensors 1 x C x 1... of one layout");
    struct ocd_plan_stage *s = NULL;
    OCD_TRY(new_stage(bd, OCD_ST_GENSTATS, &s));
    s->u.gs.dy = x;
    s->u.gs.db = sum;
    s->u.gs.alpha = 1;
    OCD_TRY(buffer(bd, &op->t[OCD_GT_GS_X], NULL, &s->b[0]));
    OCD_TRY(buffer(bd, &op->t[OCD_GT_GS_SUM], NULL, &s->b[1]));
    OCD_TRY(buffer(bd, &op->t[OCD_GT_GS_SQSUM], NULL, &s->b[2]));
    return CUDNN_STATUS_SUCCESS;
}

/* BN_FINALIZE_STATISTICS: one channel pass; BN_BWD_WEIGHTS: the sums pass (its unused data
   gradient in the workspace), then the channel pass (engine_bn.c). */
static cudnnStatus_t add_bn(struct builder *bd, const struct ocd_graph_op *op)
{
    struct ocd_plan_stage *s = NULL;
    if (op->kind == CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR) {
        struct ocd_tensor_view x, dy;
        OCD_TRY(input_view(bd, &op->t[OCD_GT_BNW_X], &x));
        OCD_TRY(input_view(bd, &op->t[OCD_GT_BNW_DY], &dy));
        OCD_TRY(new_stage(bd, OCD_ST_BN_SUMS, &s));
        OCD_TRY(ocd_engine_bn_sums_problem(op, &x, &dy, &s->u.bn));
        s->scratch = ocd_bn_problem_workspace(bd->handle, &s->u.bn, "cudnnBackendFinalize");
        static const int slots[] = {[OCD_BNS_X] = OCD_GT_BNW_X, [OCD_BNS_DY] = OCD_GT_BNW_DY,
                                    [OCD_BNS_SCALE] = OCD_GT_BNW_SCALE, [OCD_BNS_MEAN] = OCD_GT_BNW_MEAN,
                                    [OCD_BNS_INVSTD] = OCD_GT_BNW_INVSTD, [OCD_BNS_DSCALE] = OCD_GT_BNW_DSCALE,
                                    [OCD_BNS_DBIAS] = OCD_GT_BNW_DBIAS};
        for (int k = 0; k < OCD_BNS_DX; k++)
            OCD_TRY(buffer(bd, &op->t[slots[k]], k == OCD_BNS_X ? &x : k == OCD_BNS_DY ? &dy : NULL, &s->b[k]));
        OCD_TRY(new_buffer(bd, OCD_BUF_WORK, &s->u.bn.dx, &s->b[OCD_BNS_DX]));
    }
    int tensor_of[OCD_BNF_SLOTS];
    OCD_TRY(new_stage(bd, OCD_ST_BN_CHANNELS, &s));
    OCD_TRY(ocd_engine_bnf_problem(op, &s->u.bnf, tensor_of));
    for (int k = 0; k < OCD_BNF_SLOTS; k++)
        if (tensor_of[k] >= 0) OCD_TRY(buffer(bd, &op->t[tensor_of[k]], NULL, &s->b[k]));
    return CUDNN_STATUS_SUCCESS;
}

/* ---- pointwise chains -------------------------------------------------------------------------- */

/* The slot of a chain operand: a step's result when a step of [first, i) produced it, else an
   input (added on first use, with its stored view). */
static cudnnStatus_t chain_operand(struct builder *bd, int first, int i, const struct ocd_graph_tensor *t,
                                   struct ocd_pw_chain_desc *d, int inputs_buf[], int step_slot_base, int *slot)
{
    for (int j = first; j < i; j++)
        if (bd->g->ops[j].t[pw_out(&bd->g->ops[j])].uid == t->uid) {
            *slot = step_slot_base + (j - first);
            return CUDNN_STATUS_SUCCESS;
        }
    for (int k = 0; k < d->ninputs; k++)
        if (bd->pl->bufs[inputs_buf[k]].uid == t->uid) {
            *slot = k;
            return CUDNN_STATUS_SUCCESS;
        }
    if (d->ninputs == OCD_PW_MAX_INPUTS)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "a pointwise chain reads more than %d tensors", OCD_PW_MAX_INPUTS);
    struct ocd_tensor_view v;
    OCD_TRY(input_view(bd, t, &v));
    if (v.rank != d->shape.rank || v.vect != 1)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "pointwise operand %lld: rank %d (the chain's is %d) or a vector type",
                        (long long)t->uid, v.rank, d->shape.rank);
    for (int k = 0; k < v.rank; k++)
        if (v.dims[k] != d->shape.dims[k] && v.dims[k] != 1)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "pointwise operand %lld does not broadcast to the output",
                            (long long)t->uid);
    OCD_TRY(buffer(bd, t, &v, &inputs_buf[d->ninputs]));
    d->in[d->ninputs] = v;
    *slot = d->ninputs++;
    return CUDNN_STATUS_SUCCESS;
}

/* One pass over ops [first, last): inputs are collected first (so that steps' slots follow
   them), then the steps and the outputs that need memory. */
static cudnnStatus_t add_chain(struct builder *bd, int first, int last)
{
    const struct ocd_graph *g = bd->g;
    struct ocd_pw_chain_desc d;
    memset(&d, 0, sizeof d);
    OCD_TRY(view_of(&g->ops[first].t[pw_out(&g->ops[first])], &d.shape));
    if (last - first > OCD_PW_MAX_STEPS)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "a pointwise chain of more than %d ops", OCD_PW_MAX_STEPS);
    int in_buf[OCD_PW_MAX_INPUTS];
    for (int pass = 0; pass < 2; pass++)
        for (int i = first; i < last; i++) {
            const struct ocd_graph_op *op = &g->ops[i];
            const bool bwd = pw_backward(op);
            struct ocd_pw_step *st = &d.steps[i - first];
            int x, b = -1;
            const int base = pass == 0 ? OCD_PW_MAX_SLOTS : d.ninputs; /* pass 0: slots are not final */
            OCD_TRY(chain_operand(bd, first, i, &op->t[OCD_GT_PW_X], &d, in_buf, base, &x));
            if (ocd_pw_binary(op->p.pw.mode))
                OCD_TRY(chain_operand(bd, first, i, &op->t[bwd ? OCD_GT_PW_DY : OCD_GT_PW_B], &d, in_buf, base, &b));
            if (pass == 0) continue;
            ocd_pw_step_defaults(st, op->p.pw.mode, x, b);
            st->alpha1 = op->alpha, st->alpha2 = op->beta;
            st->propagate_nan = op->p.pw.nan == CUDNN_PROPAGATE_NAN;
            st->lower_clip = op->p.pw.relu_lower, st->upper_clip = op->p.pw.relu_upper;
            st->clip_slope = op->p.pw.relu_slope;
            st->elu_alpha = op->p.pw.elu_alpha, st->softplus_beta = op->p.pw.softplus_beta;
            st->swish_beta = op->p.pw.swish_beta;
            if (op->p.pw.math_prec == CUDNN_DATA_DOUBLE) d.double_compute = true;
            const struct ocd_graph_tensor *out = &op->t[pw_out(op)];
            struct ocd_tensor_view ov;
            OCD_TRY(view_of(out, &ov));
            if (!ocd_view_same_dims(&ov, &d.shape) || ov.vect != 1)
                return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "pointwise output %lld is not shaped as the chain",
                                (long long)out->uid);
            int node = node_index(g, out->uid);
            if (node >= 0 && needs_memory(bd, node)) {
                if (d.noutputs == OCD_PW_MAX_OUTPUTS)
                    return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "a pointwise chain writes more than %d tensors",
                                    OCD_PW_MAX_OUTPUTS);
                d.out[d.noutputs] = ov;
                d.out_slot[d.noutputs++] = d.ninputs + (i - first);
            }
        }
    d.nsteps = last - first;
    struct ocd_plan_stage *s = NULL;
    OCD_TRY(new_stage(bd, OCD_ST_CHAIN, &s));
    for (int k = 0; k < d.ninputs; k++) s->b[k] = in_buf[k];
    int o = 0;
    for (int k = 0; k < last - first; k++) {
        const struct ocd_graph_tensor *out = &g->ops[first + k].t[pw_out(&g->ops[first + k])];
        int node = node_index(g, out->uid);
        if (node < 0 || !needs_memory(bd, node)) continue;
        OCD_TRY(buffer(bd, out, &d.out[o], &s->b[d.ninputs + o]));
        o++;
    }
    ocd_pw_chain_build(&s->u.chain, &d);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- rewrites ---------------------------------------------------------------------------------- */

/* Whether any stage but `except1` and `except2` uses buffer b. */
static bool used_elsewhere(const struct ocd_graph_plan *pl, int b, const struct ocd_plan_stage *except1,
                           const struct ocd_plan_stage *except2)
{
    for (int k = 0; k < pl->nstages; k++) {
        const struct ocd_plan_stage *s = &pl->stages[k];
        if (s == except1 || s == except2) continue;
        for (int i = 0; i < OCD_PW_MAX_OPERANDS; i++)
            if (s->b[i] == b) return true;
    }
    return false;
}

/* A 1 x K x 1... tensor for an output of K channels. */
static bool per_channel(const struct ocd_tensor_view *v, const struct ocd_tensor_view *out)
{
    if (v->rank != out->rank || v->rank < 3 || v->dims[1] != out->dims[1]) return false;
    for (int d = 0; d < v->rank; d++)
        if (d != 1 && v->dims[d] != 1) return false;
    return true;
}

/* A unary forward activation of the pointwise modes, applied to slot run. */
static bool activation_of(const struct ocd_pw_step *st, int run)
{
    return st->x == run && st->mode >= CUDNN_POINTWISE_RELU_FWD && st->mode <= CUDNN_POINTWISE_SWISH_FWD;
}

/* A RELU_FWD step with its defaults (alpha1 1, no clip, no slope): the plain ReLU every epilogue
   takes. */
static bool plain_relu(const struct ocd_pw_step *st)
{
    return st->mode == CUDNN_POINTWISE_RELU_FWD && st->alpha1 == 1 && st->lower_clip == 0 && st->clip_slope == 0 &&
           st->upper_clip >= FLT_MAX;
}

/* Whether a chain operand v may be the bias (or the scale) of an anchor whose output is out. */
typedef bool (*operand_test)(const struct ocd_tensor_view *v, const struct ocd_tensor_view *out);

/* A chain read as the epilogue of its anchor's output y (buffer ybuf, read by no other stage):
   act(A * y + Z * z + B * bias) with z a tensor laid out as the chain's one output, bias one
   that is_bias accepts, at most one MUL by a tensor s that is_scale accepts (none when is_scale
   is NULL) anywhere before the activation, and at most one forward activation, last. The running
   value is tracked through the ADDs and the MUL, whose factor multiplies the terms added before
   it. Every operand has the output's type. */
struct chain_epilogue {
    int ob;               /* the chain's output */
    double A, Z, B;
    int zb, bb, sb;       /* the buffers of z, the bias and s; -1: none */
    bool scale_z, scale_bias; /* s multiplies z, the bias (they were added before the MUL) */
    bool act;
    struct ocd_pw_step act_step;
};

static bool read_epilogue(const struct ocd_graph_plan *pl, const struct ocd_plan_stage *an,
                          const struct ocd_plan_stage *ch, int ybuf, operand_test is_bias, operand_test is_scale,
                          struct chain_epilogue *e)
{
    const struct ocd_pw_chain *c = &ch->u.chain;
    if (c->noutputs != 1 || pl->bufs[ybuf].kind != OCD_BUF_WORK || used_elsewhere(pl, ybuf, an, ch)) return false;
    memset(e, 0, sizeof *e);
    e->ob = ch->b[c->ninputs];
    e->A = 1, e->zb = e->bb = e->sb = -1;
    const struct ocd_tensor_view *out = &pl->bufs[e->ob].view;
    int run = -1;
    for (int k = 0; k < c->ninputs; k++)
        if (ch->b[k] == ybuf) run = k;
    for (int s = 0; s < c->nsteps && run >= 0; s++) {
        const struct ocd_pw_step *st = &c->steps[s];
        if (e->act) return false; /* the activation comes last */
        if (st->mode == CUDNN_POINTWISE_MUL && e->sb < 0 && is_scale != NULL) {
            const int other = st->x == run ? st->b : st->x;
            if ((st->x == run) == (st->b == run) || other >= c->ninputs || ch->b[other] == ybuf) return false;
            const struct ocd_tensor_view *v = &pl->bufs[ch->b[other]].view;
            if (!is_scale(v, out) || v->dtype != out->dtype) return false;
            const double k = st->alpha1 * st->alpha2;
            e->A *= k, e->Z *= k, e->B *= k;
            e->sb = ch->b[other], e->scale_z = e->zb >= 0, e->scale_bias = e->bb >= 0;
        } else if (st->mode == CUDNN_POINTWISE_ADD) {
            int other;
            double ka, ko;
            if (st->x == run && st->b != run) other = st->b, ka = st->alpha1, ko = st->alpha2;
            else if (st->b == run && st->x != run) other = st->x, ka = st->alpha2, ko = st->alpha1;
            else return false;
            if (other >= c->ninputs || ch->b[other] == ybuf) return false;
            e->A *= ka, e->Z *= ka, e->B *= ka;
            const struct ocd_tensor_view *v = &pl->bufs[ch->b[other]].view;
            if (v->dtype != out->dtype) return false;
            if (ocd_view_same_dims(v, out) && e->zb < 0 && ocd_view_same_strides(v, out))
                e->zb = ch->b[other], e->Z = ko;
            else if (is_bias(v, out) && e->bb < 0)
                e->bb = ch->b[other], e->B = ko;
            else
                return false;
        } else if (activation_of(st, run)) {
            e->act = true, e->act_step = *st;
        } else {
            return false;
        }
        run = c->ninputs + s;
    }
    return run >= 0 && c->out_slot[0] == run;
}

/* Folds chain stage ch into forward convolution stage cv when the chain is
   act(s * alpha1 * conv + alpha2 * z + bias) with a per-channel bias and an optional
   per-channel s, and the chosen implementation takes that epilogue. */
static bool fold_conv_epilogue(struct builder *bd, struct ocd_plan_stage *cv, const struct ocd_plan_stage *ch)
{
    struct ocd_graph_plan *pl = bd->pl;
    const int ybuf = cv->b[2];
    struct chain_epilogue e;
    if (!read_epilogue(pl, cv, ch, ybuf, per_channel, per_channel, &e)) return false;
    const struct ocd_tensor_view *out = &pl->bufs[e.ob].view;
    if (e.bb < 0 || e.B != 1 || out->dtype != cv->u.conv.y.dtype || !ocd_view_same_dims(out, &cv->u.conv.y))
        return false;
    struct ocd_conv_problem p = cv->u.conv;
    p.y = *out;
    p.alpha *= e.A;
    p.beta = 0;
    p.ep.on = true;
    p.ep.alpha2 = e.Z;
    p.ep.bias_view = pl->bufs[e.bb].view;
    p.ep.relu = e.act && plain_relu(&e.act_step);
    p.ep.act_on = e.act && !p.ep.relu;
    if (p.ep.act_on) p.ep.act = e.act_step;
    p.ep.scale_on = e.sb >= 0, p.ep.scale_z = e.scale_z && e.Z != 0, p.ep.scale_bias = e.scale_bias;
    if (e.sb >= 0) p.ep.scale_view = pl->bufs[e.sb].view;
    if (ocd_engine_conv_rejects(bd->handle, cv->impl, &p, NULL) != NULL) return false;
    cv->u.conv = p;
    cv->scratch = ocd_conv_impl_workspace(bd->handle, cv->impl, &p, NULL);
    cv->b[2] = e.ob;
    cv->b[3] = e.Z != 0 ? e.zb : -1;
    cv->b[4] = e.bb;
    cv->b[5] = e.sb;
    pl->bufs[ybuf].kind = OCD_BUF_ALIAS; /* no stage uses it any more */
    pl->bufs[ybuf].alias = e.ob;
    return true;
}

/* Folds chain stage ch into backward-data stage cv when the chain is one RELU_BWD step with its
   defaults (DgradDrelu) whose gradient is cv's dx and whose forward input is laid out and typed
   as its output, and the chosen entry's stores take the gradient (problem/conv.h's relu_grad).
   The gradient selects values without rounding: a dx stored in another type first gives the
   same result. */
static bool fold_dgrad_relu(struct builder *bd, struct ocd_plan_stage *cv, const struct ocd_plan_stage *ch)
{
    struct ocd_graph_plan *pl = bd->pl;
    const struct ocd_pw_chain *c = &ch->u.chain;
    const struct ocd_pw_step *st = &c->steps[0];
    const int dxbuf = cv->b[0];
    if (cv->u.conv.dir != OCD_CONV_BWD_DATA || c->nsteps != 1 || c->noutputs != 1 || c->out_slot[0] != c->ninputs ||
        pl->bufs[dxbuf].kind != OCD_BUF_WORK || used_elsewhere(pl, dxbuf, cv, ch))
        return false;
    if (st->mode != CUDNN_POINTWISE_RELU_BWD || st->lower_clip != 0 || st->upper_clip < FLT_MAX ||
        st->clip_slope != 0 || st->propagate_nan || st->b < 0 || st->b >= c->ninputs || st->x < 0 ||
        st->x >= c->ninputs || ch->b[st->b] != dxbuf || ch->b[st->x] == dxbuf)
        return false;
    const int ob = ch->b[c->ninputs], xb = ch->b[st->x];
    const struct ocd_tensor_view *out = &pl->bufs[ob].view, *fx = &pl->bufs[xb].view;
    if (out->dtype != cv->u.conv.x.dtype || !ocd_view_same_dims(out, &cv->u.conv.x) || fx->dtype != out->dtype ||
        !ocd_view_same_dims(fx, out) || !ocd_view_same_strides(fx, out))
        return false;
    struct ocd_conv_problem p = cv->u.conv;
    p.x = *out;
    p.beta = 0;
    p.relu_grad = true;
    if (ocd_engine_conv_rejects(bd->handle, cv->impl, &p, NULL) != NULL) return false;
    cv->u.conv = p;
    cv->scratch = ocd_conv_impl_workspace(bd->handle, cv->impl, &p, NULL);
    cv->b[0] = ob;
    cv->b[3] = xb;
    pl->bufs[dxbuf].kind = OCD_BUF_ALIAS; /* no stage uses it any more */
    pl->bufs[dxbuf].alias = ob;
    return true;
}

/* A matmul's bias: one value per row ([1, M, 1]) or per column ([1, 1, N]) of C, shared by
   the batches, its values consecutive. */
static bool matmul_bias(const struct ocd_tensor_view *v, const struct ocd_tensor_view *out)
{
    if (v->rank != 3 || out->rank != 3 || v->dims[0] != 1) return false;
    if (v->dims[2] == 1 && v->dims[1] == out->dims[1]) return v->dims[1] == 1 || v->strides[1] == 1;
    return v->dims[1] == 1 && v->dims[2] == out->dims[2] && (v->dims[2] == 1 || v->strides[2] == 1);
}

/* Folds chain stage ch into GEMM stage gm when the chain is act(alpha1 * matmul + bias), with
   an optional bias per row or column of C and an optional forward activation, its output is
   laid out as C in a type the GEMM may write, and an implementation of the backend takes that
   epilogue (MatmulBiasAct). A plain RELU_FWD is the ReLU activation mode, any other activation
   the pointwise step itself. */
static bool fold_gemm_epilogue(struct builder *bd, struct ocd_plan_stage *gm, const struct ocd_plan_stage *ch)
{
    struct ocd_graph_plan *pl = bd->pl;
    const int ybuf = gm->b[2];
    struct chain_epilogue e;
    if (!read_epilogue(pl, gm, ch, ybuf, matmul_bias, NULL, &e) || e.zb >= 0 || (e.bb >= 0 && e.B != 1)) return false;
    const struct ocd_tensor_view *out = &pl->bufs[e.ob].view, *c = &pl->bufs[ybuf].view;
    if (!ocd_view_same_dims(out, c) || !ocd_view_same_strides(out, c)) return false;
    struct ocd_gemm_problem p = gm->u.gemm;
    p.c_type = out->dtype;
    p.alpha *= e.A;
    if (e.bb >= 0) {
        const struct ocd_tensor_view *v = &pl->bufs[e.bb].view;
        const bool per_row = v->dims[2] == 1 && v->dims[1] == c->dims[1]; /* of the graph's C */
        p.bias = per_row != ocd_engine_row_major_c(c) ? OCD_GEMM_BIAS_ROW : OCD_GEMM_BIAS_COL;
    }
    if (e.act && plain_relu(&e.act_step)) {
        p.act_on = true;
        p.act.mode = CUDNN_ACTIVATION_RELU;
        p.act.nan_opt = e.act_step.propagate_nan ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN;
    } else if (e.act) {
        p.pw_act_on = true;
        p.pw_act = e.act_step;
    }
    if (!ocd_gemm_served(bd->handle, &p)) return false;
    gm->u.gemm = p;
    gm->b[2] = e.ob;
    gm->b[3] = e.bb;
    pl->bufs[ybuf].kind = OCD_BUF_ALIAS; /* no stage uses it any more */
    pl->bufs[ybuf].alias = e.ob;
    return true;
}

/* The anchor writes straight into a chain output laid out as its own output, and the chain runs
   in place there (it reads each element before it writes it; engine_exec.c, separate_in_place,
   guards the pack). */
static void place_in_output(struct ocd_graph_plan *pl, struct ocd_plan_stage *an, const struct ocd_plan_stage *ch)
{
    const int vb = ocd_plan_anchor_output(an);
    if (pl->bufs[vb].kind != OCD_BUF_WORK || used_elsewhere(pl, vb, an, ch)) return;
    const struct ocd_tensor_view *v = &pl->bufs[vb].view;
    for (int o = 0; o < ch->u.chain.noutputs; o++) {
        const int ob = ch->b[ch->u.chain.ninputs + o];
        const struct ocd_tensor_view *w = &pl->bufs[ob].view;
        if (pl->bufs[ob].kind == OCD_BUF_USER && w->dtype == v->dtype && ocd_view_same_dims(w, v) &&
            ocd_view_same_strides(w, v)) {
            pl->bufs[vb].kind = OCD_BUF_ALIAS;
            pl->bufs[vb].alias = ob;
            an->in_place = 1 + ob;
            return;
        }
    }
}

/* ---- the plan ---------------------------------------------------------------------------------- */

static bool same_shape(const struct ocd_graph_tensor *a, const struct ocd_graph_tensor *b)
{
    return a->rank == b->rank && memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]) == 0;
}

static cudnnStatus_t build(struct builder *bd)
{
    const struct ocd_graph *g = bd->g;
    int chains = 0;
    for (int i = 0; i < g->n_ops; i++) {
        bd->chain_of[i] = -1;
        if (!is_pw(&g->ops[i])) continue;
        const struct ocd_graph_op *prev = i > 0 ? &g->ops[i - 1] : NULL;
        bool join = prev && is_pw(prev) && same_shape(&prev->t[pw_out(prev)], &g->ops[i].t[pw_out(&g->ops[i])]);
        bd->chain_of[i] = join ? bd->chain_of[i - 1] : chains++;
    }
    for (int i = 0; i < g->n_ops; i++) {
        const struct ocd_graph_op *op = &g->ops[i];
        switch (op->kind) {
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR: OCD_TRY(add_conv(bd, op)); break;
        case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: OCD_TRY(add_matmul(bd, op)); break;
        case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: OCD_TRY(add_reduction(bd, op)); break;
        case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR: OCD_TRY(add_genstats(bd, op)); break;
        case CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR:
        case CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR: OCD_TRY(add_bn(bd, op)); break;
        case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: {
            if (i > 0 && bd->chain_of[i - 1] == bd->chain_of[i]) break; /* part of the chain begun before */
            int last = i + 1;
            while (last < g->n_ops && bd->chain_of[last] == bd->chain_of[i]) last++;
            OCD_TRY(add_chain(bd, i, last));
            break;
        }
        default:
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "no engine runs %s operations yet", ocd_graph_op_name(op->kind));
        }
    }
    struct ocd_graph_plan *pl = bd->pl;
    /* a kernel cannot read host memory: on CUDA only the channel pass takes by-value tensors */
    for (int k = 0; k < pl->nstages && pl->backend == OCD_BACKEND_CUDA; k++)
        for (int i = 0; i < OCD_STAGE_BUFS; i++) {
            const int b = pl->stages[k].b[i];
            if (b >= 0 && pl->bufs[b].by_value && pl->stages[k].kind != OCD_ST_BN_CHANNELS)
                return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "tensor uid %lld is passed by value (host memory) to a "
                                "kernel of the CUDA backend", (long long)pl->bufs[b].uid);
        }
    for (int k = 0; k + 1 < pl->nstages; k++) {
        struct ocd_plan_stage *an = &pl->stages[k], *ch = &pl->stages[k + 1];
        if (ch->kind != OCD_ST_CHAIN || (an->kind != OCD_ST_CONV && an->kind != OCD_ST_GEMM)) continue;
        const bool folded = an->kind == OCD_ST_GEMM ? fold_gemm_epilogue(bd, an, ch)
                            : an->u.conv.dir == OCD_CONV_FWD ? fold_conv_epilogue(bd, an, ch)
                                                             : fold_dgrad_relu(bd, an, ch);
        if (folded) {
            memmove(ch, ch + 1, (size_t)(pl->nstages - k - 2) * sizeof *ch);
            pl->nstages--;
            continue;
        }
        place_in_output(pl, an, ch);
    }
    size_t total = 0, scratch = 0;
    for (int b = 0; b < pl->nbufs; b++)
        if (pl->bufs[b].kind == OCD_BUF_WORK) {
            pl->bufs[b].off = total;
            total = ocd_plan_align_up(total + pl->bufs[b].bytes);
        }
    for (int k = 0; k < pl->nstages; k++) scratch = OCD_MAX(scratch, pl->stages[k].scratch);
    pl->scratch_off = total;
    pl->total = scratch > 0 ? total + scratch : total;
    return CUDNN_STATUS_SUCCESS;
}

/* One info line per plan: its stages (and what each runs) and its workspace. */
static void log_plan(const struct ocd_graph_plan *pl)
{
    static const char *const names[] = {"conv", "gemm", "pointwise chain", "reduction", "statistics",
                                        "batch-norm sums", "batch-norm channels", "zero padding"};
    char line[512];
    size_t n = (size_t)snprintf(line, sizeof line, "plan of %d stage(s), %zu bytes of workspace:", pl->nstages, pl->total);
    for (int k = 0; k < pl->nstages && n < sizeof line; k++) {
        const struct ocd_plan_stage *s = &pl->stages[k];
        n += (size_t)snprintf(line + n, sizeof line - n, " %s%s%s%s", k ? "-> " : "", names[s->kind],
                              s->kind == OCD_ST_CONV ? " " : "", s->kind == OCD_ST_CONV ? s->impl->base.name : "");
        const struct ocd_conv_epilogue *ep = &s->u.conv.ep;
        const struct ocd_gemm_problem *gp = &s->u.gemm;
        if (s->kind == OCD_ST_CONV && s->u.conv.relu_grad && n < sizeof line)
            n += (size_t)snprintf(line + n, sizeof line - n, " with the ReLU gradient in its stores");
        if (s->kind == OCD_ST_CONV && ep->on && n < sizeof line)
            n += (size_t)snprintf(line + n, sizeof line - n, " with its epilogue (%s%sbias%s%s)",
                                  ep->scale_on ? "scale, " : "", ep->alpha2 != 0 ? "z, " : "", ep->relu ? ", relu" : "",
                                  ep->act_on ? ", activation" : "");
        if (s->kind == OCD_ST_GEMM && (gp->bias != OCD_GEMM_BIAS_NONE || gp->act_on || gp->pw_act_on) &&
            n < sizeof line)
            n += (size_t)snprintf(line + n, sizeof line - n, " with its epilogue (%s%s%s)",
                                  gp->bias != OCD_GEMM_BIAS_NONE ? "bias" : "",
                                  gp->bias != OCD_GEMM_BIAS_NONE && (gp->act_on || gp->pw_act_on) ? ", " : "",
                                  gp->act_on ? "relu" : gp->pw_act_on ? "activation" : "");
    }
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s", line);
}

int ocd_engine_plan_stages(const struct ocd_graph_plan *plan)
{
    return plan->nstages;
}

cudnnStatus_t ocd_engine_plan(cudnnHandle_t handle, struct ocd_graph *g, const struct ocd_engine_id *id,
                              struct ocd_graph_plan **plan, int64_t *workspace_bytes)
{
    *plan = NULL;
    if (g->n_ops > OCD_GRAPH_MAX_OPS) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "too many operations");
    struct builder bd = {handle, g, id, ocd_calloc(1, sizeof(struct ocd_graph_plan)), {0}, ocd_malloc((size_t)OCD_MAX(g->n_nodes, 1) * sizeof(int))};
    if (bd.pl == NULL || bd.buf_of_node == NULL) {
        free(bd.pl);
        free(bd.buf_of_node);
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for a plan");
    }
    for (int n = 0; n < g->n_nodes; n++) bd.buf_of_node[n] = -1;
    bd.pl->backend = ocd_handle_kind(handle);
    cudnnStatus_t st = build(&bd);
    free(bd.buf_of_node);
    if (st != CUDNN_STATUS_SUCCESS) {
        free(bd.pl);
        return st;
    }
    bd.pl->g = ocd_graph_ref(g);
    log_plan(bd.pl);
    *plan = bd.pl;
    *workspace_bytes = (int64_t)bd.pl->total;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_graph_plan_build(cudnnHandle_t handle, struct ocd_graph *g, const struct ocd_graph_config *cfg,
                                   struct ocd_graph_plan **plan, int64_t *workspace_bytes)
{
    *plan = NULL;
    OCD_TRY(ocd_graph_config_check(g, cfg));
    struct ocd_engine_id id;
    ocd_engine_decode(ocd_engine_graph_dir(g), cfg->engine, &id);
    return ocd_engine_plan(handle, g, &id, plan, workspace_bytes);
}

void ocd_graph_plan_free(struct ocd_graph_plan *plan)
{
    if (plan == NULL) return;
    ocd_graph_unref(plan->g);
    free(plan);
}
