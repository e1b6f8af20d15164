/* attn.c: cudnnMultiHeadAttnForward (libcudnn_adv_infer), and what the backward calls of
   attn_train.c share with it: the call's checks (ocd_attn_prepare) and the token GEMMs.

   The driver is backend-independent: projections run on the shared GEMM (ocd_gemm), the
   attention between them on the core (ocd_attn_core_forward), copies, sums and fills on the
   elementwise engine (ocd_ewise_run); each of those picks its implementation for the handle's
   backend. Buffers follow problem/attention.h: a projected buffer keeps its input's token order,
   and the core reads every buffer through strides (a buffer without projection is read in place,
   every head seeing the whole vector: head stride 0). The forward pass (forward_pass) runs on
   the checked arguments alone, so that OPENCUDNN_CHECK can run it again on the host
   (core/check.h's drivers).

   cuDNN 8.2 rules implemented here (forward):
   - reserveSpace NULL is inference: no dropout, and currIdx >= 0 computes that query time step
     only (the others of out are left alone); currIdx < 0 computes every step. A training call
     (reserveSpace given) must compute every step: currIdx >= 0 is BAD_PARAM there, as is
     currIdx >= the query descriptor's time extent.
   - loWinIdx / hiWinIdx: host arrays of one entry per query time step (start inclusive, end
     exclusive, clipped to the keys of each sequence). devSeqLengthsQO / devSeqLengthsKV: the
     sequence lengths in the backend's memory, as the descriptors hold them (not compared).
   - out = dropout(projection) + residuals (residuals not NULL; the dropout in training only), which needs the output size to
     equal qSize (BAD_PARAM otherwise). Positions past a sequence's length are set to oDesc's
     padding fill when it has one.
   - BAD_PARAM, nothing written: the descriptor checks of ocd_attn_prepare, a NULL data or
     window pointer, weightSizeInBytes or reserveSpaceSizeInBytes below cudnnGetMultiHeadAttnBuffers'
     sizes, workSpaceSizeInBytes below its inference size (the forward needs no more in
     training), out overlapping an input. */
#include "adv/attn.h"

#include "core/argcheck.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/handle.h"
#include "ops/tensor_ops.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- preparing a call --------------------------------------------------------------------------- */

static cudnnStatus_t seq_of(cudnnSeqDataDescriptor_t d, const char *name, cudnnDataType_t dtype,
                            struct ocd_attn_seq *s)
{
    if (!ocd_object_alive(OCD_OBJ_SEQ_DATA, d))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name, d == NULL ? "NULL" : "not a live sequence descriptor");
    if (!d->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was never set", name);
    if (d->dtype != dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s holds %s, the attention descriptor %s", name,
                        ocd_dtype_name(d->dtype), ocd_dtype_name(dtype));
    s->T = d->dims[CUDNN_SEQDATA_TIME_DIM];
    s->B = d->dims[CUDNN_SEQDATA_BATCH_DIM];
    s->M = d->dims[CUDNN_SEQDATA_BEAM_DIM];
    s->V = d->dims[CUDNN_SEQDATA_VECT_DIM];
    s->st = d->strides[CUDNN_SEQDATA_TIME_DIM];
    s->sb = d->strides[CUDNN_SEQDATA_BATCH_DIM];
    s->sm = d->strides[CUDNN_SEQDATA_BEAM_DIM];
    s->len = d->lengths;
    s->full = true;
    for (int i = 0; i < s->B * s->M; i++) s->full = s->full && s->len[i] == s->T;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t same_sequences(const struct ocd_attn_seq *a, const char *an, const struct ocd_attn_seq *b,
                                    const char *bn)
{
    if (a->T != b->T || a->B != b->B || a->M != b->M)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %d x %d x %d (time, batch, beam), %s %d x %d x %d", an, a->T,
                        a->B, a->M, bn, b->T, b->B, b->M);
    if (memcmp(a->len, b->len, sizeof(int) * (size_t)a->B * a->M) != 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s and %s hold different sequence lengths", an, bn);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t dropout_of(cudnnDropoutDescriptor_t d, const char *name, float *p)
{
    *p = 0;
    if (d == NULL) return CUDNN_STATUS_SUCCESS;
    if (!ocd_object_alive(OCD_OBJ_DROPOUT, d))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the attention descriptor's %s was destroyed", name);
    *p = d->dropout;
    if (*p > 0 && d->states == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the attention descriptor's %s has no states", name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_attn_prepare(cudnnHandle_t handle, cudnnAttnDescriptor_t attn, cudnnSeqDataDescriptor_t q,
                               cudnnSeqDataDescriptor_t k, cudnnSeqDataDescriptor_t v, cudnnSeqDataDescriptor_t o,
                               const char *op, struct ocd_attn_call *call)
{
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_ATTN, attn);
    if (!attn->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attnDesc was never set");
    const struct ocd_attn_config *c = &attn->c;
    memset(call, 0, sizeof *call);
    call->handle = handle;
    call->c = c;
    call->op = op;
    OCD_TRY(seq_of(q, "the queries' descriptor", c->dtype, &call->q));
    OCD_TRY(seq_of(k, "the keys' descriptor", c->dtype, &call->k));
    OCD_TRY(seq_of(v, "the values' descriptor", c->dtype, &call->v));
    OCD_TRY(seq_of(o, "the output's descriptor", c->dtype, &call->o));
    call->o_desc = o;
    const struct ocd_attn_seq *sq = &call->q, *sk = &call->k;
    const int have[] = {sq->V, sk->V, call->v.V, call->o.V};
    const int want[] = {c->q_size, c->k_size, c->v_size, ocd_attn_o_size(c)};
    static const char *const names[] = {"queries", "keys", "values", "output"};
    for (int i = 0; i < 4; i++)
        if (have[i] != want[i])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the %s' vectors hold %d values, the attention descriptor says %d",
                            names[i], have[i], want[i]);
    OCD_TRY(same_sequences(&call->o, "the output", sq, "the queries"));
    OCD_TRY(same_sequences(&call->v, "the values", sk, "the keys"));
    int kv_beams = c->one_to_one ? sq->M : 1;
    if (sk->B != sq->B || sk->M != kv_beams)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the keys hold %d x %d (batch, beam) sequences, the %s query map needs %d x %d",
                        sk->B, sk->M, c->one_to_one ? "ONE_TO_ONE" : "ALL_TO_ONE", sq->B, kv_beams);
    if (sq->T > c->qo_max || sk->T > c->kv_max || sq->B > c->max_batch || sq->M > c->max_beam)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "query steps %d, key steps %d, batch %d or beam %d exceed the attention descriptor's %d, %d, %d, %d",
                        sq->T, sk->T, sq->B, sq->M, c->qo_max, c->kv_max, c->max_batch, c->max_beam);
    OCD_TRY(dropout_of(attn->attn_dropout, "attnDropoutDesc", &call->attn_dropout));
    OCD_TRY(dropout_of(attn->post_dropout, "postDropoutDesc", &call->post_dropout));
    call->attn_drop = attn->attn_dropout;
    call->post_drop = attn->post_dropout;
    size_t post = attn->post_dropout != NULL
                      ? ocd_dropout_reserve_bytes((int64_t)c->qo_max * c->max_batch * c->max_beam * ocd_attn_o_size(c))
                      : 0;
    ocd_attn_layout_of(c, post, &call->l);
    /* the projections' GEMMs then cannot fail for memory halfway through a call */
    return ocd_gemm_reserve(handle, ocd_gemm_compute_for(c->dtype, c->math));
}

cudnnStatus_t ocd_attn_check_buffer(const char *name, size_t bytes, size_t need, const void *ptr)
{
    if (bytes < need)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%sSizeInBytes %zu is less than the %zu bytes needed", name, bytes, need);
    if (need > 0 && ptr == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- token GEMMs ------------------------------------------------------------------------------ */

static void gemm_init(const struct ocd_attn_call *call, struct ocd_gemm_problem *g)
{
    memset(g, 0, sizeof *g);
    g->batch = 1;
    g->ab_type = g->c_type = call->c->dtype;
    g->compute = ocd_gemm_compute_for(call->c->dtype, call->c->math);
    g->alpha = 1;
}

/* The token axes of a sequence layout selected by t (all, or one time step), in token units,
   sorted by stride and merged where one continues another; extent-1 axes dropped. */
struct axes {
    int n;
    int64_t extent[3], stride[3];
    int64_t base; /* first token */
};

static void token_axes(const struct ocd_attn_seq *s, int t, struct axes *a)
{
    int64_t ext[3] = {s->T, s->B, s->M}, str[3] = {s->st / s->V, s->sb / s->V, s->sm / s->V};
    a->n = 0;
    a->base = t >= 0 ? t * str[0] : 0;
    for (int i = t >= 0 ? 1 : 0; i < 3; i++)
        if (ext[i] > 1) a->extent[a->n] = ext[i], a->stride[a->n] = str[i], a->n++;
    for (int i = 1; i < a->n; i++) /* insertion sort by stride */
        for (int j = i; j > 0 && a->stride[j] < a->stride[j - 1]; j--) {
            int64_t e = a->extent[j], st = a->stride[j];
            a->extent[j] = a->extent[j - 1], a->stride[j] = a->stride[j - 1];
            a->extent[j - 1] = e, a->stride[j - 1] = st;
        }
    int m = 0;
    for (int i = 0; i < a->n; i++) {
        if (m > 0 && a->stride[i] == a->stride[m - 1] * a->extent[m - 1]) {
            a->extent[m - 1] *= a->extent[i];
            continue;
        }
        a->extent[m] = a->extent[i], a->stride[m] = a->stride[i], m++;
    }
    a->n = m;
    if (a->n == 0) a->extent[0] = 1, a->stride[0] = 1, a->n = 1;
}

cudnnStatus_t ocd_attn_gemm_tokens(const struct ocd_attn_call *call, const struct ocd_attn_seq *s, int t, int m,
                                   int k, bool trans_w, const void *w, int ldw, const void *x, int x_width, void *y,
                                   int y_width, const void *bias, double beta)
{
    size_t e = ocd_dtype_scalar_size(call->c->dtype);
    struct axes a;
    token_axes(s, t, &a);
    struct ocd_gemm_problem g;
    gemm_init(call, &g);
    g.m = m, g.n = a.extent[0], g.k = k;
    g.trans_a = trans_w;
    g.lda = ldw;
    g.ldb = a.stride[0] * x_width;
    g.ldc = a.stride[0] * y_width;
    g.beta = beta;
    g.bias = bias != NULL ? OCD_GEMM_BIAS_ROW : OCD_GEMM_BIAS_NONE;
    if (a.n > 1) {
        g.batch = a.extent[1];
        g.stride_b = a.stride[1] * x_width;
        g.stride_c = a.stride[1] * y_width;
    }
    int64_t outer = a.n > 2 ? a.extent[2] : 1;
    for (int64_t i = 0; i < outer; i++) {
        int64_t tok = a.base + (a.n > 2 ? i * a.stride[2] : 0);
        const char *xp = (const char *)x + (size_t)(tok * x_width) * e;
        char *yp = (char *)y + (size_t)(tok * y_width) * e;
        OCD_TRY(ocd_gemm(call->handle, &g, w, xp, yp, bias, call->op));
    }
    return CUDNN_STATUS_SUCCESS;
}

/* y (rows x 1 vector, or m x n matrix) = 0: the gradient of tokens that do not exist. */
static cudnnStatus_t zero(const struct ocd_attn_call *call, void *y, int64_t count)
{
    struct ocd_tensor_view v = {.dtype = call->c->dtype, .rank = 1, .vect = 1, .dims = {count}, .strides = {1}};
    return ocd_ewise_fill(call->handle, &v, y, 0, call->op);
}

cudnnStatus_t ocd_attn_gemm_wgrad(const struct ocd_attn_call *call, const struct ocd_attn_seq *s, int m, int n,
                                  const void *dy, const void *x, void *dw, const void *ones, bool add)
{
    size_t e = ocd_dtype_scalar_size(call->c->dtype);
    bool bias = x == NULL;
    struct ocd_gemm_problem g;
    gemm_init(call, &g);
    g.m = m, g.n = bias ? 1 : n;
    g.trans_b = !bias;
    g.ldc = m;
    bool written = false;
    int64_t tokens = (int64_t)s->T * s->B * s->M;
    if (s->full) { /* every token, in memory order */
        g.k = tokens, g.lda = m, g.ldb = bias ? tokens : n, g.beta = add ? 1 : 0;
        return ocd_gemm(call->handle, &g, dy, bias ? ones : x, dw, NULL, call->op);
    }
    int64_t st = s->st / s->V;
    for (int b = 0; b < s->B; b++)
        for (int mm = 0; mm < s->M; mm++) {
            int len = s->len[b * s->M + mm];
            if (len == 0) continue;
            int64_t tok = (b * s->sb + mm * s->sm) / s->V;
            g.k = len, g.lda = st * m, g.ldb = bias ? len : st * n, g.beta = add || written ? 1 : 0;
            const void *bp = bias ? ones : (const void *)((const char *)x + (size_t)(tok * n) * e);
            OCD_TRY(ocd_gemm(call->handle, &g, (const char *)dy + (size_t)(tok * m) * e, bp, dw, NULL, call->op));
            written = true;
        }
    if (!written && !add) return zero(call, dw, (int64_t)m * (bias ? 1 : n));
    return CUDNN_STATUS_SUCCESS;
}

/* ---- elementwise passes over sequence data ---------------------------------------------------- */

/* The view of a token-ordered buffer of s's tokens holding `width` values per token (t >= 0:
   only time step t), and the offset of its first element. */
static void seq_view(const struct ocd_attn_call *call, const struct ocd_attn_seq *s, int t, int width,
                     struct ocd_tensor_view *v, int64_t *first)
{
    int64_t scale = width;
    memset(v, 0, sizeof *v);
    v->dtype = call->c->dtype;
    v->rank = 4;
    v->vect = 1;
    v->dims[0] = s->B, v->strides[0] = s->sb / s->V * scale;
    v->dims[1] = s->M, v->strides[1] = s->sm / s->V * scale;
    v->dims[2] = t >= 0 ? 1 : s->T, v->strides[2] = s->st / s->V * scale;
    v->dims[3] = width, v->strides[3] = 1;
    *first = t >= 0 ? t * v->strides[2] : 0;
}

/* y (+)= x over the elements of two views: beta 0 or 1. */
static cudnnStatus_t blend(const struct ocd_attn_call *call, const struct ocd_tensor_view *xv, const void *x,
                           const struct ocd_tensor_view *yv, void *y, double beta)
{
    struct ocd_ewise ew;
    ocd_ewise_build(&ew, OCD_EWISE_COPY, yv, xv, NULL);
    ocd_ewise_bind(&ew, y, x, NULL);
    ew.alpha1 = 1;
    ew.beta = beta;
    return ocd_ewise_run(call->handle, &ew, call->op);
}

cudnnStatus_t ocd_attn_sum_heads(const struct ocd_attn_call *call, const struct ocd_attn_seq *s, const void *per_head,
                                 int width, void *y)
{
    size_t e = ocd_dtype_scalar_size(call->c->dtype);
    struct ocd_tensor_view yv, xv;
    int64_t first;
    seq_view(call, s, -1, width, &yv, &first);
    seq_view(call, s, -1, width, &xv, &first);
    for (int d = 0; d < 3; d++) xv.strides[d] *= call->c->heads;
    for (int h = 0; h < call->c->heads; h++)
        OCD_TRY(blend(call, &xv, (const char *)per_head + (size_t)h * width * e, &yv, y, h > 0 ? 1 : 0));
    return CUDNN_STATUS_SUCCESS;
}

/* Sets the vectors of out past each sequence's length (only step t when t >= 0) to the fill. */
static cudnnStatus_t fill_padding(const struct ocd_attn_call *call, void *out, int t)
{
    const struct ocd_attn_seq *s = &call->o;
    size_t e = ocd_dtype_scalar_size(call->c->dtype);
    for (int b = 0; b < s->B; b++)
        for (int m = 0; m < s->M; m++) {
            int len = s->len[b * s->M + m], from = t >= 0 ? t : len, to = t >= 0 ? t + 1 : s->T;
            if (from < len) from = len;
            if (from >= to) continue;
            struct ocd_tensor_view v = {.dtype = call->c->dtype, .rank = 2, .vect = 1,
                                        .dims = {to - from, s->V}, .strides = {s->st, 1}};
            uint64_t fill = 0;
            memcpy(&fill, call->o_desc->fill, e);
            OCD_TRY(ocd_ewise_fill(call->handle, &v, (char *)out + (size_t)(b * s->sb + m * s->sm + from * s->st) * e,
                                   fill, call->op));
        }
    return CUDNN_STATUS_SUCCESS;
}

void ocd_attn_post_dropout(const struct ocd_attn_call *call, const void *src, void *dst, void *mask,
                           struct ocd_dropout_problem *p)
{
    int64_t first;
    memset(p, 0, sizeof *p);
    seq_view(call, &call->o, -1, call->o.V, &p->src, &first);
    p->dst = p->src;
    p->src_data = src;
    p->dst_data = dst;
    p->mask = mask;
    p->states = call->post_drop->states;
    p->count = ocd_view_count(&p->src);
    ocd_dropout_set_rate(p, call->post_dropout);
}

/* ---- the forward ---------------------------------------------------------------------------------- */

static bool overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a != NULL && b != NULL && x < y + b_bytes && y < x + a_bytes;
}

static size_t seq_bytes(const struct ocd_attn_call *call, const struct ocd_attn_seq *s)
{
    return (size_t)s->T * s->B * s->M * s->V * ocd_dtype_scalar_size(call->c->dtype);
}

/* The core operand of a buffer of s's tokens, `width` values a token per head: a projected
   buffer or the attention output (heads side by side; out itself holds H head_v values a token
   without an O projection), or an input read in place by every head (per_head false). */
static struct ocd_attn_operand operand(const struct ocd_attn_seq *s, const void *data, int width, bool per_head,
                                       int heads)
{
    int64_t token = per_head ? (int64_t)width * heads : width;
    struct ocd_attn_operand x = {.data = (void *)data};
    x.stride[OCD_ATTN_BATCH] = s->sb / s->V * token;
    x.stride[OCD_ATTN_BEAM] = s->sm / s->V * token;
    x.stride[OCD_ATTN_TIME] = s->st / s->V * token;
    x.stride[OCD_ATTN_HEAD] = per_head ? width : 0;
    x.stride[OCD_ATTN_ELEM] = 1;
    return x;
}

void ocd_attn_operands(const struct ocd_attn_call *call, struct ocd_attn_core_problem *p, const void *q,
                       const void *k, const void *v, const void *h)
{
    const struct ocd_attn_config *c = call->c;
    int qk = ocd_attn_head_qk(c), hv = ocd_attn_head_v(c);
    p->q = operand(&call->q, q, qk, c->q_proj > 0, c->heads);
    p->k = operand(&call->k, k, qk, c->k_proj > 0, c->heads);
    p->v = operand(&call->v, v, hv, c->v_proj > 0, c->heads);
    p->o = operand(&call->o, h, hv, true, c->heads);
}

void ocd_attn_core_init(const struct ocd_attn_call *call, struct ocd_attn_core_problem *p, const int *len_q,
                        const int *len_kv, const int *lo, const int *hi)
{
    const struct ocd_attn_config *c = call->c;
    memset(p, 0, sizeof *p);
    p->dtype = c->dtype;
    p->batch = call->q.B;
    p->beams = call->q.M;
    p->heads = c->heads;
    p->max_q = call->q.T;
    p->max_kv = call->k.T;
    p->head_qk = ocd_attn_head_qk(c);
    p->head_v = ocd_attn_head_v(c);
    p->kv_shared = !c->one_to_one;
    p->q_first = 0;
    p->q_count = call->q.T;
    p->sm_scaler = c->sm_scaler;
    p->len_q = len_q;
    p->len_kv = len_kv;
    p->lo_win = lo;
    p->hi_win = hi;
}

/* Sequence data laid out as the benchmark's: [batch, time, beam, vect], packed, one beam, every
   sequence full length. */
static bool bench_seq(const struct ocd_attn_seq *s, const struct ocd_attn_seq *q)
{
    return s->M == 1 && s->full && s->T == q->T && s->B == q->B && s->V == q->V && s->st == s->V &&
           s->sb == (int64_t)s->T * s->V;
}

/* The benchmark's mha problem string of a call (bench/ops_attn.c), or "" where the call has
   something its keys cannot say. The benchmark builds self-attention: queries, keys, values and
   output of one width, the same length and batch, ALL_TO_ONE, either with projection biases, each
   head width / heads wide and the output projection width wide (proj=1), or one head and no
   projections at all (proj=0); softmax scaler 1/sqrt(the head's width), computePrec float (double
   for f64 data), CUDNN_TENSOR_OP_MATH, no dropout, no residuals, every step at once (currIdx < 0)
   with full windows, sequence data as bench_seq says. Windows narrower than the keys, ragged
   lengths, beams, other layouts or projections log nothing. An inference call replays as the
   benchmark's training forward (dir=fwd): the same shapes; either backward call as dir=bwd, which
   times the pair on a training forward's reserve (BackwardWeights takes no windows: lo NULL). */
void ocd_attn_replay(const struct ocd_attn_call *call, const char *dir, int currIdx, const int *lo, const int *hi,
                     const void *residuals, char *buf, size_t size)
{
    const struct ocd_attn_config *c = call->c;
    int W = c->q_size, H = c->heads;
    buf[0] = '\0';
    bool f64 = c->dtype == CUDNN_DATA_DOUBLE;
    const bool projected = c->biases && W % H == 0 && c->q_proj == W / H && c->k_proj == W / H &&
                           c->v_proj == W / H && c->o_proj == W;
    const bool core_alone = !c->biases && H == 1 && c->q_proj == 0 && c->k_proj == 0 && c->v_proj == 0 &&
                            c->o_proj == 0;
    if (c->one_to_one || !(projected || core_alone) || c->k_size != W || c->v_size != W ||
        fabs(c->sm_scaler * sqrt(W / H) - 1) > 1e-6 || c->comp != (f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT) ||
        c->math != CUDNN_TENSOR_OP_MATH || call->attn_dropout != 0 || call->post_dropout != 0 ||
        residuals != NULL || currIdx >= 0 || !bench_seq(&call->q, &call->q) || !bench_seq(&call->k, &call->q) ||
        !bench_seq(&call->v, &call->q) || !bench_seq(&call->o, &call->q))
        return;
    if (c->dtype != CUDNN_DATA_HALF && c->dtype != CUDNN_DATA_FLOAT && !f64) return;
    for (int t = 0; lo != NULL && t < call->q.T; t++)
        if (lo[t] > 0 || hi[t] < call->k.T) return;
    snprintf(buf, size, "op=mha dir=%s dt=%s b=%d heads=%d width=%d seq=%d proj=%d", dir,
             ocd_check_dtype_name(c->dtype), call->q.B, H, W, call->q.T, projected ? 1 : 0);
}

/* A forward call's arguments once checked: the problem the pass runs on, whose pointers
   OPENCUDNN_CHECK copies (core/check.h). */
struct mha_forward {
    struct ocd_attn_call call;
    int t;                      /* the query step computed, -1 for every one */
    const int *lo, *hi;         /* the windows (host) */
    const int *len_qo, *len_kv; /* the sequence lengths (backend memory) */
    const void *queries, *residuals, *keys, *values, *weights;
    void *out, *ws, *rs;        /* rs: the reserve in training, NULL in inference */
    void *attn_states, *post_states; /* training with dropout: the descriptors' states buffers, which
                                        the masks come from (NULL without that dropout) */
};

/* The forward pass on the handle (the run signature of an implementation entry: the spaces are
   the arguments'). */
static cudnnStatus_t forward_pass(cudnnHandle_t handle, const void *args, void *workspace, size_t workspace_bytes)
{
    (void)workspace, (void)workspace_bytes;
    const struct mha_forward *a = args;
    struct ocd_attn_call call = a->call;
    call.handle = handle;
    const struct ocd_attn_config *c = call.c;
    const bool training = a->rs != NULL;
    const void *weights = a->weights;
    size_t e = ocd_dtype_scalar_size(c->dtype);
    int H = c->heads, qk = ocd_attn_head_qk(c), hv = ocd_attn_head_v(c), t = a->t;
    char *buf = training ? a->rs : a->ws;
    const struct ocd_attn_layout *l = &call.l;
    char *qbar = buf + (training ? l->r_qbar : l->w_qbar), *kbar = buf + (training ? l->r_kbar : l->w_kbar);
    char *vbar = buf + (training ? l->r_vbar : l->w_vbar), *hbar = buf + (training ? l->r_hbar : l->w_hbar);
    struct ocd_attn_weight w[8];
    for (int i = 0; i < 8; i++) ocd_attn_weight_of(c, i, &w[i]);
#define W(i) (w[i].present ? (const void *)((const char *)weights + (size_t)w[i].offset * e) : NULL)
    if (c->q_proj > 0)
        OCD_TRY(ocd_attn_gemm_tokens(&call, &call.q, t, H * qk, c->q_size, false, W(0), H * qk, a->queries, c->q_size,
                                     qbar, H * qk, W(4), 0));
    if (c->k_proj > 0)
        OCD_TRY(ocd_attn_gemm_tokens(&call, &call.k, -1, H * qk, c->k_size, false, W(1), H * qk, a->keys, c->k_size,
                                     kbar, H * qk, W(5), 0));
    if (c->v_proj > 0)
        OCD_TRY(ocd_attn_gemm_tokens(&call, &call.v, -1, H * hv, c->v_size, false, W(2), H * hv, a->values, c->v_size,
                                     vbar, H * hv, W(6), 0));
    bool h_in_out = !training && c->o_proj == 0;
    struct ocd_attn_core_problem core;
    ocd_attn_core_init(&call, &core, a->len_qo, a->len_kv, a->lo, a->hi);
    if (t >= 0) core.q_first = t, core.q_count = 1;
    ocd_attn_operands(&call, &core, c->q_proj > 0 ? qbar : a->queries, c->k_proj > 0 ? kbar : a->keys,
                      c->v_proj > 0 ? vbar : a->values, h_in_out ? a->out : hbar);
    if (training && call.attn_dropout > 0) {
        core.dropout = call.attn_dropout;
        core.rng = a->attn_states;
        core.rng_advance = true;
    }
    OCD_TRY(ocd_attn_core_forward(handle, &core, (char *)a->ws + l->w_core, l->core_workspace_fwd, a->rs,
                                  l->core_reserve, call.op));
    if (c->o_proj > 0) {
        OCD_TRY(ocd_attn_gemm_tokens(&call, &call.o, t, c->o_proj, H * hv, false, W(3), c->o_proj, hbar, H * hv, a->out,
                                     c->o_proj, W(7), 0));
    } else if (!h_in_out) {
        struct ocd_tensor_view hv_view, ov;
        int64_t hf, of;
        seq_view(&call, &call.o, t, H * hv, &hv_view, &hf);
        seq_view(&call, &call.o, t, H * hv, &ov, &of);
        OCD_TRY(blend(&call, &hv_view, hbar + (size_t)hf * e, &ov, (char *)a->out + (size_t)of * e, 0));
    }
#undef W
    if (training && call.post_dropout > 0) {
        struct ocd_dropout_problem drop;
        ocd_attn_post_dropout(&call, a->out, a->out, (char *)a->rs + l->r_post_mask, &drop);
        drop.states = a->post_states;
        OCD_TRY(ocd_dropout_forward_run(handle, &drop, call.op));
    }
    if (a->residuals != NULL) {
        struct ocd_tensor_view rv, ov;
        int64_t rf, of;
        seq_view(&call, &call.q, t, c->q_size, &rv, &rf);
        /* the residuals have the queries' layout, out its own */
        rv.strides[0] = call.q.sb, rv.strides[1] = call.q.sm, rv.strides[2] = call.q.st;
        rf = t >= 0 ? t * call.q.st : 0;
        seq_view(&call, &call.o, t, call.o.V, &ov, &of);
        OCD_TRY(blend(&call, &rv, (const char *)a->residuals + (size_t)rf * e, &ov, (char *)a->out + (size_t)of * e, 1));
    }
    if (call.o_desc->has_fill) OCD_TRY(fill_padding(&call, a->out, t));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnMultiHeadAttnForward(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc,
                                                    int currIdx, const int loWinIdx[], const int hiWinIdx[],
                                                    const int devSeqLengthsQO[], const int devSeqLengthsKV[],
                                                    const cudnnSeqDataDescriptor_t qDesc, const void *queries,
                                                    const void *residuals, const cudnnSeqDataDescriptor_t kDesc,
                                                    const void *keys, const cudnnSeqDataDescriptor_t vDesc,
                                                    const void *values, const cudnnSeqDataDescriptor_t oDesc,
                                                    void *out, size_t weightSizeInBytes, const void *weights,
                                                    size_t workSpaceSizeInBytes, void *workSpace,
                                                    size_t reserveSpaceSizeInBytes, void *reserveSpace)
{
    OCD_LOG_API("handle=%p attnDesc=%p currIdx=%d loWinIdx=%p hiWinIdx=%p devSeqLengthsQO=%p devSeqLengthsKV=%p "
                "qDesc=%p queries=%p residuals=%p kDesc=%p keys=%p vDesc=%p values=%p oDesc=%p out=%p "
                "weightSizeInBytes=%zu weights=%p workSpaceSizeInBytes=%zu workSpace=%p reserveSpaceSizeInBytes=%zu "
                "reserveSpace=%p",
                (void *)handle, (void *)attnDesc, currIdx, (const void *)loWinIdx, (const void *)hiWinIdx,
                (const void *)devSeqLengthsQO, (const void *)devSeqLengthsKV, (void *)qDesc, queries, residuals,
                (void *)kDesc, keys, (void *)vDesc, values, (void *)oDesc, out, weightSizeInBytes, weights,
                workSpaceSizeInBytes, workSpace, reserveSpaceSizeInBytes, reserveSpace);
    const char *op = "cudnnMultiHeadAttnForward";
    struct ocd_attn_call call;
    OCD_TRY(ocd_attn_prepare(handle, attnDesc, qDesc, kDesc, vDesc, oDesc, op, &call));
    const struct ocd_attn_config *c = call.c;
    bool training = reserveSpace != NULL;
    if (currIdx >= call.q.T)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "currIdx %d is past the queries' %d time steps", currIdx, call.q.T);
    if (training && currIdx >= 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "currIdx %d in training (reserveSpace given): every step runs", currIdx);
    if (queries == NULL || keys == NULL || values == NULL || out == NULL || loWinIdx == NULL || hiWinIdx == NULL ||
        devSeqLengthsQO == NULL || devSeqLengthsKV == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "a data, window or sequence-length pointer is NULL");
    if (residuals != NULL && ocd_attn_o_size(c) != c->q_size)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "residuals need the output size (%d) to equal qSize (%d)",
                        ocd_attn_o_size(c), c->q_size);
    size_t e = ocd_dtype_scalar_size(c->dtype), o_bytes = seq_bytes(&call, &call.o);
    OCD_TRY(ocd_attn_check_buffer("weight", weightSizeInBytes, (size_t)ocd_attn_weight_count(c) * e, weights));
    OCD_TRY(ocd_attn_check_buffer("workSpace", workSpaceSizeInBytes, call.l.workspace_fwd, workSpace));
    if (training) OCD_TRY(ocd_attn_check_buffer("reserveSpace", reserveSpaceSizeInBytes, call.l.reserve, reserveSpace));
    if (overlap(out, o_bytes, queries, seq_bytes(&call, &call.q)) || overlap(out, o_bytes, keys, seq_bytes(&call, &call.k)) ||
        overlap(out, o_bytes, values, seq_bytes(&call, &call.v)) ||
        overlap(out, o_bytes, residuals, seq_bytes(&call, &call.q)))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "out overlaps the queries, keys, values or residuals");
    struct mha_forward a = {call, currIdx < 0 ? -1 : currIdx, loWinIdx, hiWinIdx, devSeqLengthsQO, devSeqLengthsKV,
                            queries, residuals, keys, values, weights, out, workSpace, training ? reserveSpace : NULL,
                            training && call.attn_dropout > 0 ? call.attn_drop->states : NULL,
                            training && call.post_dropout > 0 ? call.post_drop->states : NULL};
    if (!ocd_check_enabled()) return forward_pass(handle, &a, NULL, 0);
    struct ocd_check_call check = {
        .op = op, .problem_size = sizeof a,
        .tolerance = ocd_check_driver_tolerance(c->dtype, ocd_gemm_compute_for(c->dtype, c->math) == OCD_GEMM_COMPUTE_TF32)};
    ocd_attn_replay(&call, "fwd", currIdx, loWinIdx, hiWinIdx, residuals, check.replay, sizeof check.replay);
#define FIELD(f) offsetof(struct mha_forward, f)
    ocd_check_add_array(&check, FIELD(out), c->dtype, (int64_t)(o_bytes / e), true);
    /* the dropout states: the host run draws the same masks from copies (one copy when both
       descriptors share a buffer) and must leave them as the first run did */
    if (a.attn_states != NULL) ocd_dropout_check_states(&check, FIELD(attn_states));
    if (a.post_states != NULL) ocd_dropout_check_states(&check, FIELD(post_states));
    ocd_check_add_array(&check, FIELD(queries), c->dtype, (int64_t)(seq_bytes(&call, &call.q) / e), false);
    ocd_check_add_array(&check, FIELD(residuals), c->dtype, (int64_t)(seq_bytes(&call, &call.q) / e), false);
    ocd_check_add_array(&check, FIELD(keys), c->dtype, (int64_t)(seq_bytes(&call, &call.k) / e), false);
    ocd_check_add_array(&check, FIELD(values), c->dtype, (int64_t)(seq_bytes(&call, &call.v) / e), false);
    ocd_check_add_array(&check, FIELD(weights), c->dtype, ocd_attn_weight_count(c), false);
    ocd_check_add_array(&check, FIELD(len_qo), CUDNN_DATA_INT32, (int64_t)call.q.B * call.q.M, false);
    ocd_check_add_array(&check, FIELD(len_kv), CUDNN_DATA_INT32, (int64_t)call.k.B * call.k.M, false);
    ocd_check_add_scratch(&check, FIELD(ws), call.l.workspace_fwd);
    if (training) ocd_check_add_scratch(&check, FIELD(rs), call.l.reserve);
#undef FIELD
    return ocd_check_run_driver(handle, "mha_forward", forward_pass, &a, &check);
}
