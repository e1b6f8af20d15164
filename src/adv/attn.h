/* attn.h: what the multi-head attention entries share (attn_desc.c and attn.c in adv_infer,
   attn_train.c in adv_train): the attention and sequence-data descriptor structs, and the call
   preparation and token GEMMs the forward and backward calls run on (defined in attn.c). */
#ifndef OCD_ADV_ATTN_H
#define OCD_ADV_ATTN_H

#include "ops/dropout.h"
#include "problem/attention.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cudnnAttnStruct {
    struct ocd_object obj;
    bool set; /* false until cudnnSetAttnDescriptor succeeded */
    struct ocd_attn_config c;
    cudnnDropoutDescriptor_t attn_dropout, post_dropout; /* NULL: none */
};

struct cudnnSeqDataStruct {
    struct ocd_object obj;
    bool set;
    cudnnDataType_t dtype;
    int dims[CUDNN_SEQDATA_DIM_COUNT];             /* by axis */
    cudnnSeqDataAxis_t axes[CUDNN_SEQDATA_DIM_COUNT]; /* outermost first, VECT last */
    int64_t strides[CUDNN_SEQDATA_DIM_COUNT];      /* by axis, in elements */
    int *lengths;                                  /* dims[BATCH] * dims[BEAM], [b * beams + m] */
    bool has_fill;
    unsigned char fill[8]; /* the padding fill value, in dtype */
};

/* The descriptors and buffers of one forward or backward call, checked. */
struct ocd_attn_call {
    cudnnHandle_t handle;
    const struct ocd_attn_config *c;
    struct ocd_attn_seq q, k, v, o;
    const struct cudnnSeqDataStruct *o_desc; /* for the padding fill */
    struct ocd_attn_layout l;
    float attn_dropout, post_dropout; /* probabilities (0 without a descriptor) */
    cudnnDropoutDescriptor_t attn_drop, post_drop;
    const char *op;
};

/* The checks every call makes of its attention descriptor and the four sequence-data
   descriptors (q, k, v, and o or do): BAD_PARAM, logged, when a descriptor is not live or set,
   when a data type differs from the attention descriptor's, when a vector size differs from
   qSize, kSize, vSize or the output size, when the time, batch or beam extents disagree (O
   with Q; K with V; K's batch with Q's; K's beams 1 under ALL_TO_ONE, Q's under ONE_TO_ONE) or
   exceed the descriptor's maxima, when O's sequence lengths differ from Q's or V's from K's.
   Fills call. */
cudnnStatus_t ocd_attn_prepare(cudnnHandle_t handle, cudnnAttnDescriptor_t attn, cudnnSeqDataDescriptor_t q,
                               cudnnSeqDataDescriptor_t k, cudnnSeqDataDescriptor_t v, cudnnSeqDataDescriptor_t o,
                               const char *op, struct ocd_attn_call *call);

/* The benchmark's replay string of a call (core/check.h) into buf: the forward (dir "fwd")
   with its currIdx, windows and residuals, or a backward call ("bwd": currIdx -1, its windows,
   or NULL for BackwardWeights, which has none; no residuals); "" where the benchmark cannot
   express the call (attn.c says what it can). */
void ocd_attn_replay(const struct ocd_attn_call *call, const char *dir, int currIdx, const int *lo, const int *hi,
                     const void *residuals, char *buf, size_t size);

/* BAD_PARAM, logged, when a buffer is shorter than needed or missing. */
cudnnStatus_t ocd_attn_check_buffer(const char *name, size_t bytes, size_t need, const void *ptr);

/* A token GEMM: Y (m x tokens) = op(W) X over the tokens of a sequence buffer's layout s, where
   X holds x_width values per token and Y y_width, both in s's token order (Y at index
   offset / s.V). t < 0: every token, t >= 0: the tokens of time step t. beta 0 or 1; bias NULL
   or m values added per token. */
cudnnStatus_t ocd_attn_gemm_tokens(const struct ocd_attn_call *call, const struct ocd_attn_seq *s, int t, int m,
                                   int k, bool trans_w, const void *w, int ldw, const void *x, int x_width, void *y,
                                   int y_width, const void *bias, double beta);

/* A weight-gradient GEMM over the valid tokens of s: dW (m x n) += dY (m x tokens) X^T (tokens
   x n) (X holding n values per token, dY m), first overwriting when !add; with ones (a vector
   of ones at least a sequence long), db (m) += the sum of dY's tokens instead when dw is a bias
   (x NULL). */
cudnnStatus_t ocd_attn_gemm_wgrad(const struct ocd_attn_call *call, const struct ocd_attn_seq *s, int m, int n,
                                  const void *dy, const void *x, void *dw, const void *ones, bool add);

/* Sums the heads of a per-head buffer (H blocks of width values per token, s's token order)
   into y (width values per token, s's layout): the gradient of an input the heads share when
   it has no projection. */
cudnnStatus_t ocd_attn_sum_heads(const struct ocd_attn_call *call, const struct ocd_attn_seq *s, const void *per_head,
                                 int width, void *y);

/* The core problem of a call: sizes from the descriptors, every query step, no dropout; the
   lengths (backend memory) and windows (host) given. */
void ocd_attn_core_init(const struct ocd_attn_call *call, struct ocd_attn_core_problem *p, const int *len_q,
                        const int *len_kv, const int *lo, const int *hi);

/* The core's q, k, v and o operands: the projected buffers (token order of their inputs, heads
   side by side) where the configuration projects, the inputs themselves where it does not; h
   holds H head_v values per output token. */
void ocd_attn_operands(const struct ocd_attn_call *call, struct ocd_attn_core_problem *p, const void *q,
                       const void *k, const void *v, const void *h);

/* The post-projection dropout of the output's tokens (src and dst in the output's layout; mask
   in the reserve), with the attention descriptor's postDropoutDesc. */
void ocd_attn_post_dropout(const struct ocd_attn_call *call, const void *src, void *dst, void *mask,
                           struct ocd_dropout_problem *p);

#ifdef __cplusplus
}
#endif

#endif /* OCD_ADV_ATTN_H */
