/* attention.h: the multi-head attention problem of cudnnMultiHeadAttnForward and its backward
   calls, as the entries (src/adv/attn*.c) build it from the attention and sequence-data
   descriptors: the configuration, the weight buffer's layout (cudnnGetMultiHeadAttnWeights), the
   layout of sequence data, and the layout of the workspace and reserve space. No API struct
   appears here. The attention core between the projections is problem/attn_core.h.

   The math (cuDNN 8.2). With H heads, per head h and query vector q (qSize), keys k (kSize) and
   values v (vSize):
       qbar_h = W_Q,h q + b_Q,h      (qProj values; q itself when qProjSize is 0)
       kbar_h = W_K,h k + b_K,h      (kProj; k itself when kProjSize is 0)
       vbar_h = W_V,h v + b_V,h      (vProj; v itself when vProjSize is 0)
       hbar_h = attention core of (qbar_h, kbar_h, vbar_h)   (head_v = vProj or vSize values)
       out    = sum_h W_O,h hbar_h + b_O   (oProj values; the concatenation of the hbar_h,
                                            H * head_v values, when oProjSize is 0)
   then post-projection dropout (training only) and out += residuals. Sizes after projection:
   head_qk = qProj or qSize, which must equal kProj or kSize; oSize = oProj or H * head_v.

   Weight layout, in elements of the data type, no padding: the Q, K, V and O weights, then the Q,
   K, V and O biases, each present only when its projection is (biases only with
   CUDNN_ATTN_ENABLE_PROJ_BIASES). W_Q is one column-major (H qProj) x qSize matrix, head h's
   rows h qProj .. (h + 1) qProj - 1: cudnnGetMultiHeadAttnWeights describes it as dims
   [H, qProj, qSize], strides [qProj, 1, H qProj] (K and V alike). W_O is one column-major
   oProj x (H head_v) matrix, head h's columns h head_v ..: dims [H, oProj, head_v], strides
   [oProj head_v, 1, oProj]. Biases: dims [H, proj, 1] strides [proj, 1, 1]; b_O [1, oProj, 1].
   So each projection is one GEMM over all tokens with the heads stacked.

   Sequence data is packed in its axes order, VECT innermost: a token (time t, batch b, beam m)
   starts at t st + b sb + m sm elements, every stride a multiple of the vector size, so the
   tokens of a buffer form one column-major vect x tokens matrix in memory order. Projections
   keep that order: the projected buffer of an input holds, at token index (offset / vect), its
   H x proj values; the core then reads every buffer through strides. */
#ifndef OCD_PROBLEM_ATTENTION_H
#define OCD_PROBLEM_ATTENTION_H

#include "core/dtype.h"
#include "problem/attn_core.h"
#include "problem/gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the attention descriptor holds besides its dropout descriptors. */
struct ocd_attn_config {
    bool one_to_one; /* CUDNN_ATTN_QUERYMAP_ONE_TO_ONE: one K/V beam per query beam */
    bool biases;     /* CUDNN_ATTN_ENABLE_PROJ_BIASES */
    int heads;
    double sm_scaler;
    cudnnDataType_t dtype, comp;
    cudnnMathType_t math;
    int q_size, k_size, v_size;
    int q_proj, k_proj, v_proj, o_proj; /* 0: no projection */
    int qo_max, kv_max, max_batch, max_beam;
};

static inline int ocd_attn_head_qk(const struct ocd_attn_config *c)
{
    return c->q_proj > 0 ? c->q_proj : c->q_size;
}

static inline int ocd_attn_head_v(const struct ocd_attn_config *c)
{
    return c->v_proj > 0 ? c->v_proj : c->v_size;
}

static inline int ocd_attn_o_size(const struct ocd_attn_config *c)
{
    return c->o_proj > 0 ? c->o_proj : c->heads * ocd_attn_head_v(c);
}

/* One weight or bias tensor of the weight buffer (kind: a cudnnMultiHeadAttnWeightKind_t). */
struct ocd_attn_weight {
    bool present;
    int64_t offset; /* elements from the start of the buffer */
    int64_t count;  /* elements */
    int dims[3], strides[3];
};

static inline void ocd_attn_weight_shape(const struct ocd_attn_config *c, int kind, struct ocd_attn_weight *w)
{
    int H = c->heads, hv = ocd_attn_head_v(c);
    int proj[4] = {c->q_proj, c->k_proj, c->v_proj, c->o_proj};
    int size[4] = {c->q_size, c->k_size, c->v_size, hv};
    int i = kind % 4;
    w->present = proj[i] > 0 && (kind < 4 || c->biases);
    w->offset = 0;
    if (!w->present) {
        w->count = 0;
        for (int d = 0; d < 3; d++) w->dims[d] = 0, w->strides[d] = 0;
        return;
    }
    int p = proj[i];
    if (kind < 3) { /* input projection weights */
        w->dims[0] = H, w->dims[1] = p, w->dims[2] = size[i];
        w->strides[0] = p, w->strides[1] = 1, w->strides[2] = H * p;
    } else if (kind == 3) { /* output projection weights */
        w->dims[0] = H, w->dims[1] = p, w->dims[2] = hv;
        w->strides[0] = p * hv, w->strides[1] = 1, w->strides[2] = p;
    } else { /* biases */
        w->dims[0] = kind == 7 ? 1 : H, w->dims[1] = p, w->dims[2] = 1;
        w->strides[0] = p, w->strides[1] = 1, w->strides[2] = 1;
    }
    w->count = (int64_t)w->dims[0] * w->dims[1] * w->dims[2];
}

/* The tensor of a kind with its offset in the buffer (kinds in enum order, packed). */
static inline void ocd_attn_weight_of(const struct ocd_attn_config *c, int kind, struct ocd_attn_weight *w)
{
    int64_t at = 0;
    for (int k = 0; k < kind; k++) {
        struct ocd_attn_weight before;
        ocd_attn_weight_shape(c, k, &before);
        at += before.count;
    }
    ocd_attn_weight_shape(c, kind, w);
    w->offset = w->present ? at : 0;
}

/* Elements of the whole weight buffer. */
static inline int64_t ocd_attn_weight_count(const struct ocd_attn_config *c)
{
    int64_t at = 0;
    for (int k = 0; k < 8; k++) {
        struct ocd_attn_weight w;
        ocd_attn_weight_shape(c, k, &w);
        at += w.count;
    }
    return at;
}

/* A sequence-data buffer: extents and element strides of time, batch and beam (vect stride 1),
   and its host sequence lengths, [b * beams + m]. */
struct ocd_attn_seq {
    int T, B, M, V;
    int64_t st, sb, sm;
    const int *len;
    bool full; /* every length equals T */
};

/* The reserve and workspace, as offsets in bytes, each region on a 256-byte boundary. Sizes
   come from the descriptor's maxima (qo_max, kv_max, max_batch, max_beam), so one layout serves
   every call of a descriptor. The projected buffers live in the reserve in training and in the
   workspace for inference; the backward's gradients of the projected buffers stay in the reserve
   for cudnnMultiHeadAttnBackwardWeights. The workspace holds what the forward uses first (its
   first `workspace_fwd` bytes, the core's forward workspace included), then what only the
   backward calls use, so that an inference caller's buffer covers the forward alone. */
struct ocd_attn_layout {
    /* reserve */
    size_t core_reserve;          /* the core's saved row statistics */
    size_t r_qbar, r_kbar, r_vbar, r_hbar, r_dqbar, r_dkbar, r_dvbar, r_post_mask;
    size_t reserve;
    /* workspace */
    size_t w_qbar, w_kbar, w_vbar, w_hbar; /* inference */
    size_t w_core, w_dhbar, w_dout, w_ones;
    size_t core_workspace_fwd, core_workspace; /* the forward's, and the larger of both directions' */
    size_t workspace_fwd, workspace;
    int64_t qo_tokens, kv_tokens;
};

static inline size_t ocd_attn_round(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* The core problem's sizes at the descriptor's maxima (what the layout reserves room for). */
static inline void ocd_attn_core_at_max(const struct ocd_attn_config *c, struct ocd_attn_core_problem *p)
{
    p->dtype = c->dtype;
    p->batch = c->max_batch;
    p->beams = c->max_beam;
    p->heads = c->heads;
    p->max_q = c->qo_max;
    p->max_kv = c->kv_max;
    p->head_qk = ocd_attn_head_qk(c);
    p->head_v = ocd_attn_head_v(c);
}

/* post_dropout_bytes: the post-projection dropout mask's reserve (0 without one). */
static inline void ocd_attn_layout_of(const struct ocd_attn_config *c, size_t post_dropout_bytes,
                                      struct ocd_attn_layout *l)
{
    size_t e = ocd_dtype_scalar_size(c->dtype);
    int64_t H = c->heads, qk = ocd_attn_head_qk(c), hv = ocd_attn_head_v(c), o = ocd_attn_o_size(c);
    l->qo_tokens = (int64_t)c->qo_max * c->max_batch * c->max_beam;
    l->kv_tokens = (int64_t)c->kv_max * c->max_batch * (c->one_to_one ? c->max_beam : 1);
    size_t qbar = ocd_attn_round(e * (size_t)(l->qo_tokens * H * qk));
    size_t kbar = ocd_attn_round(e * (size_t)(l->kv_tokens * H * qk));
    size_t vbar = ocd_attn_round(e * (size_t)(l->kv_tokens * H * hv));
    size_t hbar = ocd_attn_round(e * (size_t)(l->qo_tokens * H * hv));
    struct ocd_attn_core_problem core = {0};
    ocd_attn_core_at_max(c, &core);
    size_t at = 0;
    l->core_reserve = ocd_attn_round(ocd_attn_core_reserve_bytes(&core));
    at += l->core_reserve;
    l->r_qbar = at, at += c->q_proj > 0 ? qbar : 0;
    l->r_kbar = at, at += c->k_proj > 0 ? kbar : 0;
    l->r_vbar = at, at += c->v_proj > 0 ? vbar : 0;
    l->r_hbar = at, at += hbar;
    l->r_dqbar = at, at += qbar;
    l->r_dkbar = at, at += kbar;
    l->r_dvbar = at, at += vbar;
    l->r_post_mask = at, at += ocd_attn_round(post_dropout_bytes);
    l->reserve = at;
    at = 0;
    l->w_qbar = at, at += c->q_proj > 0 ? qbar : 0;
    l->w_kbar = at, at += c->k_proj > 0 ? kbar : 0;
    l->w_vbar = at, at += c->v_proj > 0 ? vbar : 0;
    l->w_hbar = at, at += hbar;
    size_t fwd = ocd_attn_core_workspace_bytes(&core, false), bwd = ocd_attn_core_workspace_bytes(&core, true);
    l->core_workspace_fwd = ocd_attn_round(fwd);
    l->core_workspace = ocd_attn_round(OCD_MAX(fwd, bwd));
    l->w_core = at;
    l->workspace_fwd = at + l->core_workspace_fwd;
    at += l->core_workspace;
    l->w_dhbar = at, at += hbar;
    l->w_dout = at, at += ocd_attn_round(e * (size_t)(l->qo_tokens * o));
    l->w_ones = at, at += ocd_attn_round(e * (size_t)OCD_MAX(l->qo_tokens, l->kv_tokens));
    l->workspace = at;
}

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_ATTENTION_H */
