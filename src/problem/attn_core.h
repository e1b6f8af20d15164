/* attn_core.h: the attention core of multi-head attention (cudnnMultiHeadAttnForward,
   cudnnMultiHeadAttnBackwardData/Weights): what runs between the Q/K/V projections and the
   output projection, its reserve and workspace, the dropout rule both backends share, and the
   declarations of its implementations (table and entries in src/adv/attn_core.c). No API struct
   appears here: the API entry (src/adv/attn*.c) projects, then fills this problem.

   The math. For each batch item b, beam m, head h and query position i in [q_first, q_first +
   q_count) with i < len_q(b, m):
       keys j in [lo_win[i], hi_win[i]) intersected with [0, len_kv(b, m))
       s_ij = sm_scaler * <q_i, k_j>                 (q, k: head_qk elements)
       p_ij = exp(s_ij - max_j s) / sum_j exp(s_ij - max_j s)
       p~_ij = p_ij * keep_ij * scale                (dropout; p~ = p without it)
       o_i = sum_j p~_ij v_j                         (v, o: head_v elements)
   A row whose key range is empty gets o_i = 0 (and zero gradients). Rows i in the query range
   with i >= len_q(b, m) are written as zeros in o (and in dq when not accumulating), so that a
   projection GEMM over padded rows reads no garbage; rows outside [q_first, q_first + q_count)
   are not touched. Backward (FlashAttention-2's equations, P recomputed from the saved row
   statistics): with dP~ = dO V^T, dP = dP~ * keep * scale, D_i = <do_i, o_i> (= sum_j p~_ij dp~_ij),
   ds_ij = p_ij (dp_ij - D_i): dv_j += sum_i p~_ij do_i, dk_j += sm_scaler sum_i ds_ij q_i,
   dq_i += sm_scaler sum_j ds_ij k_j.

   Layout. Every operand is a base pointer plus element strides over (batch, beam, head, time,
   element), any non-negative values, so that the caller picks its projection layout. K, V, dK
   and dV either hold one beam per query beam (query map ONE_TO_ONE: kv_shared false) or one
   beam per batch item that all query beams attend to (ALL_TO_ONE: kv_shared true; their beam
   stride is then ignored, len_kv has one entry per batch item, and dK, dV sum the gradients of
   every query beam). Q, K, V, O, dO, dQ, dK, dV share one data type: float, half, bfloat16 or
   double; half and bfloat16 (and float) compute in float, double in double.

   Lengths and windows. len_q and len_kv live in the backend's memory (device arrays on CUDA:
   the API's devSeqLengthsQO / devSeqLengthsKV serve as they are): len_q[b * beams + m] and
   len_kv[b * kv_beams + m'] with kv_beams = kv_shared ? 1 : beams. lo_win and hi_win are HOST
   arrays of max_q entries indexed by the absolute query time step, as cudnnMultiHeadAttnForward
   takes them (start inclusive, end exclusive, clipped to [0, len_kv)); the CUDA implementations
   pass them by value to kernels that write them into the workspace, so that a call captured
   into a CUDA graph holds the call's windows.

   Dropout (dropout > 0). The mask is a pure function of the element, so that nothing is
   materialised and backward regenerates it: element e = (((b * beams + m) * heads + h) * max_q
   + i) * max_kv + j (64-bit) takes word e % 4 of Philox4x32-10 (core/philox.h) with counter
   (e / 4 low, e / 4 high, offset low, offset high) and key (seed low, seed high), and is dropped
   when that word is below round(dropout * 2^32) (ocd_attn_core_keep): the rule of the dropout
   op (problem/dropout.h) with the call number replaced by `offset`. Kept probabilities are
   multiplied by 1 / (1 - dropout) in the compute type (0 when dropout == 1). seed and offset
   are read by the forward from rng[0] and rng[1] (backend memory; a struct ocd_dropout_state's
   first two fields fit), saved in the reserve for the backward, and rng[1] is incremented on
   the stream when rng_advance is set.

   Reserve (ocd_attn_core_reserve_bytes, written by the forward, read by the backward): the
   saved seed and offset (two uint64), then per row (b, m, h, i over max_q) the log-sum-exp
   max_j s + log sum_j exp(s_ij - max_j s) in the compute type (float or double; -inf for an
   empty window). A forward for inference may pass a NULL reserve. */
#ifndef OCD_PROBLEM_ATTN_CORE_H
#define OCD_PROBLEM_ATTN_CORE_H

#include "core/handle.h"
#include "core/philox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Axes of an operand's strides. */
enum { OCD_ATTN_BATCH, OCD_ATTN_BEAM, OCD_ATTN_HEAD, OCD_ATTN_TIME, OCD_ATTN_ELEM, OCD_ATTN_AXES };

/* One operand: element (b, m, h, t, x) at data + sum of index * stride (in elements). */
struct ocd_attn_operand {
    void *data;
    int64_t stride[OCD_ATTN_AXES];
};

struct ocd_attn_core_problem {
    cudnnDataType_t dtype;   /* FLOAT, HALF, BFLOAT16 or DOUBLE */
    int batch, beams, heads; /* query beams per batch item */
    int max_q, max_kv;       /* time extents of the buffers */
    int head_qk, head_v;     /* head sizes: of q and k, of v and o */
    bool kv_shared;          /* ALL_TO_ONE: one K/V beam per batch item (see above) */
    int q_first, q_count;    /* the query time steps computed (training: 0, max_q) */
    double sm_scaler;
    const int *len_q, *len_kv; /* backend memory (see above) */
    const int *lo_win, *hi_win; /* host, max_q entries each */
    /* dropout on the probabilities; rng: {seed, offset} in backend memory, read when dropout > 0 */
    double dropout;
    uint64_t *rng;
    bool rng_advance;
    /* forward: q, k, v read, o written. backward: q, k, v, o, d_o read; dq, dk, dv written,
       added to when accumulate (else overwritten). */
    struct ocd_attn_operand q, k, v, o, d_o, dq, dk, dv;
    bool accumulate;
};

/* Reserve bytes the forward writes and the backward reads (0 is never returned). */
static inline size_t ocd_attn_core_reserve_bytes(const struct ocd_attn_core_problem *p)
{
    size_t elem = p->dtype == CUDNN_DATA_DOUBLE ? 8 : 4;
    return 16 + (size_t)p->batch * p->beams * p->heads * p->max_q * elem;
}

/* Workspace bytes a forward or a backward needs on any backend (CUDA: the windows' device copies,
   the generator words, the backward's per-row D_i and, for half and bfloat16, the fused
   backward's float dq accumulators; see cuda/attn_core.cuh). */
static inline size_t ocd_attn_core_workspace_bytes(const struct ocd_attn_core_problem *p, bool backward)
{
    size_t elem = p->dtype == CUDNN_DATA_DOUBLE ? 8 : 4;
    size_t rows = (size_t)p->batch * p->beams * p->heads * p->max_q;
    size_t win = ((size_t)2 * p->max_q * sizeof(int) + 255) / 256 * 256 + 256;
    if (!backward) return win;
    if (p->dtype != CUDNN_DATA_HALF && p->dtype != CUDNN_DATA_BFLOAT16) return win + rows * elem;
    return win + (rows * elem + 255) / 256 * 256 + rows * p->head_qk * sizeof(float);
}

/* The Philox threshold of a dropout probability: a word below it drops its element. */
static inline uint64_t ocd_attn_core_threshold(double dropout)
{
    return (uint64_t)(dropout * 4294967296.0 + 0.5);
}

/* True when mask element e (see the file comment) is kept. */
OCD_HOST_DEVICE bool ocd_attn_core_keep(uint64_t seed, uint64_t offset, uint64_t threshold, uint64_t e)
{
    uint64_t block = e / 4;
    struct ocd_philox4 r = ocd_philox4x32_10((uint32_t)block, (uint32_t)(block >> 32), (uint32_t)offset,
                                             (uint32_t)(offset >> 32), (uint32_t)seed, (uint32_t)(seed >> 32));
    return r.v[e % 4] >= threshold;
}

/* A length from the backend's arrays, clamped to [0, max]. */
OCD_HOST_DEVICE int ocd_attn_core_clamp(int len, int max)
{
    return len < 0 ? 0 : len > max ? max : len;
}

/* The keys [*lo, *hi) of a query step whose window is [lo_win, hi_win), for len_kv keys;
   *lo >= *hi when there are none. */
OCD_HOST_DEVICE void ocd_attn_core_keys(int lo_win, int hi_win, int len_kv, int *lo, int *hi)
{
    *lo = lo_win > 0 ? lo_win : 0;
    *hi = hi_win < len_kv ? hi_win : len_kv;
}

/* Offset of row (b, m, h, t) of an operand, in elements. */
OCD_HOST_DEVICE int64_t ocd_attn_core_row(const struct ocd_attn_operand *x, int b, int m, int h, int t)
{
    return b * x->stride[OCD_ATTN_BATCH] + m * x->stride[OCD_ATTN_BEAM] + h * x->stride[OCD_ATTN_HEAD] +
           t * x->stride[OCD_ATTN_TIME];
}

/* The forward: checks the problem (BAD_PARAM, logged, nothing written: sizes, windows, types,
   pointers, a reserve or workspace smaller than the functions above say; the reserve may be NULL
   only when nothing needs saving, i.e. an inference call), then runs the first implementation of
   the handle's backend that applies. On CUDA it only enqueues work on the handle's stream.
   Internal to the libraries (adv_infer); op names the API caller in logs. */
cudnnStatus_t ocd_attn_core_forward(cudnnHandle_t handle, const struct ocd_attn_core_problem *p, void *workspace,
                                    size_t workspace_bytes, void *reserve, size_t reserve_bytes, const char *op);

/* The backward: dq, dk, dv from d_o, with the reserve a forward of the same problem wrote. */
cudnnStatus_t ocd_attn_core_backward(cudnnHandle_t handle, const struct ocd_attn_core_problem *p, void *workspace,
                                     size_t workspace_bytes, const void *reserve, size_t reserve_bytes,
                                     const char *op);

/* ---- implementations: (handle, const struct ocd_attn_core_call *) --------------------------- */

/* What an implementation is given: the checked problem and the buffers. */
struct ocd_attn_core_call {
    const struct ocd_attn_core_problem *p;
    void *reserve; /* forward: may be NULL (inference) */
    void *workspace;
};

cudnnStatus_t ocd_host_attn_fwd(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_attn_bwd(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
const char *ocd_cuda_attn_fwd_sm90_applies(cudnnHandle_t handle, const void *call);
cudnnStatus_t ocd_cuda_attn_fwd_sm90(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
const char *ocd_cuda_attn_fwd_flash_applies(cudnnHandle_t handle, const void *call);
cudnnStatus_t ocd_cuda_attn_fwd_flash(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
const char *ocd_cuda_attn_bwd_sm90_applies(cudnnHandle_t handle, const void *call);
cudnnStatus_t ocd_cuda_attn_bwd_sm90(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
const char *ocd_cuda_attn_bwd_flash_applies(cudnnHandle_t handle, const void *call);
cudnnStatus_t ocd_cuda_attn_bwd_flash(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
const char *ocd_cuda_attn_rows_applies(cudnnHandle_t handle, const void *call);
cudnnStatus_t ocd_cuda_attn_fwd_rows(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_attn_bwd_rows(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_ATTN_CORE_H */
