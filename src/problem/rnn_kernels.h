/* rnn_kernels.h: the pointwise part of the recurrent networks (cudnnRNNForward, the backward
   calls and their legacy forms): the cell math both backends share, and the per-backend
   kernels the layer loop (adv/rnn_exec.h) calls between its GEMMs.

   The layer loop computes, for one layer and direction, the input projection of every position
   as one GEMM (gx), then per step the recurrent GEMM over the batch (gh) and one fused pointwise
   step (ocd_*_rnn_fwd_step): the gates' nonlinearities, the cell update, the new state and the
   output. Backwards, one fused step per time step turns the gradient of a step's output into the
   gradients of the gates' pre-activations (dpre_x for the part W x sees, dpre_h for the part
   R h sees: they differ only in GRU's new-memory gate) and of the previous cell state; GEMMs
   then carry them to the previous state, the input and the weights.

   Buffers (element offsets, types): "data" is the network's data type, "compute" float (double
   for double data). A position is where step t of sequence n lies in an RNN data tensor
   (ocd_rnn_pos): its layout's order, packed or not. Gate g of a row of G gates is at g * H.
     gx       compute  [position][G H]   W x + b_W of every position (skip input: none)
     gh       compute  [n][G H]          R h + b_R of the step (the bias added by the step)
     h states data     [n][P]            the state read (hprev) and written (hnext)
     c states compute  [n][H]            LSTM, clipped as the next step reads them (a
                                         sequence's last: before the clip, cy)
     saved    compute  [n][S][H]         training: the gate values, S = ocd_rnn_saved_gates
     y, x     data     [position][stride] the output's half of direction dir at dir * P
   A sequence n is active at step s when s < length[n]; it reads position t = s forwards and
   length[n] - 1 - s backwards (the reverse direction). An inactive sequence carries its states
   unchanged, so that after the last step the states are each sequence's final ones. */
#ifndef OCD_PROBLEM_RNN_KERNELS_H
#define OCD_PROBLEM_RNN_KERNELS_H

#include "core/handle.h"
#include "core/hostdev.h"
#include "problem/activation.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Position of (t, n) in a tensor of the layout: T steps (maxSeqLength), N sequences; packed:
   offsets[t] is the number of positions before step t. */
OCD_HOST_DEVICE int64_t ocd_rnn_pos(cudnnRNNDataLayout_t layout, int T, int N, const int32_t *offsets, int t, int n)
{
    switch (layout) {
    case CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED: return (int64_t)n * T + t;
    case CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED: return (int64_t)offsets[t] + n;
    default: return (int64_t)t * N + n;
    }
}

/* Gates of a mode, and what a training step saves per unit: the G gate values, plus the
   cell before the clip (LSTM: the clip's derivative, the clipped cell's tanh) or R_h h + b_Rh
   (GRU). */
OCD_HOST_DEVICE int ocd_rnn_gates(cudnnRNNMode_t mode)
{
    return mode == CUDNN_LSTM ? 4 : mode == CUDNN_GRU ? 3 : 1;
}

OCD_HOST_DEVICE int ocd_rnn_saved_gates(cudnnRNNMode_t mode)
{
    return mode == CUDNN_LSTM ? 5 : mode == CUDNN_GRU ? 4 : 1;
}

/* ---- the kernels of one step ----------------------------------------------------------------- */

/* What a step kernel reads and writes; which fields it uses is said by each. */
struct ocd_rnn_step {
    cudnnRNNMode_t mode;
    cudnnDataType_t dtype;          /* data; the compute type is double for double, else float */
    cudnnRNNDataLayout_t layout;
    int T, N, H, P;                 /* P: the state's size (the projection's, else H) */
    int s, dir;                     /* step (0 first), direction (1: reverse) */
    bool proj;                      /* LSTM with a projection */
    const int32_t *lengths;         /* N lengths, backend memory */
    const int32_t *offsets;         /* packed layout: T offsets (ocd_rnn_offsets) */
    /* forward */
    const void *gx;                 /* compute [position][G H]; NULL with skip input */
    const void *x;                  /* skip input: data [position][x_stride], x_t for every gate */
    int64_t x_stride;
    const void *gh;                 /* compute [n][G H] */
    const void *bw[4], *br[4];      /* data [H] per gate, or NULL */
    const void *hprev;              /* data [n][P] */
    void *hnext;                    /* data [n][P]: without a projection */
    void *hfull;                    /* data [n][H]: with a projection (0 where inactive) */
    const void *cprev;              /* compute [n][H], LSTM */
    void *cnext;
    void *saved;                    /* compute [n][S][H], or NULL (inference) */
    void *y;                        /* data [position][y_stride]: the output (+ dir P) */
    int64_t y_stride;
    bool clip, clip_nan;
    double lclip, rclip;
    /* backward (with saved, hprev, cprev, y/dy alike) */
    const void *dy;                 /* data [position][y_stride]: without a projection */
    const void *dh;                 /* compute [n][P]: the gradient carried from later steps
                                       (with a projection: [n][H], W_p^T of the step's total) */
    const void *dc;                 /* compute [n][H] */
    void *dhprev;                   /* compute [n][P]: the direct part (none with a projection) */
    void *dcprev;                   /* compute [n][H] */
    void *dpre_x;                   /* data [position][G H]: also 0 at the padding position (s, n) */
    void *dpre_h;                   /* data [n][G H]: 0 where inactive */
};

/* Whether step s->s is sequence n's last: the step that writes its final states (hy, cy). */
OCD_HOST_DEVICE bool ocd_rnn_last_step(const struct ocd_rnn_step *s, int n)
{
    return s->s == s->lengths[n] - 1;
}

/* Auxiliary passes of the layer loop. */
enum ocd_rnn_aux_op {
    OCD_RNN_CONVERT,    /* dst[i] = src[i] converted (or value when src is NULL), i < count */
    OCD_RNN_PAD_FILL,   /* unpacked layouts: every position (t, n) with t >= length[n]: the
                           `count` values of the row (dst, stride) set to value */
    OCD_RNN_OFFSETS,    /* dst (int32 [T]): the positions before each step of a packed tensor */
    OCD_RNN_PROJ_STORE, /* forward with a projection: where active, hnext = y(+dir P) = src
                           (data [n][P]), else hnext = hprev */
    OCD_RNN_PROJ_DTOT,  /* backward with a projection: where active, dst[n] = dh + dy and
                           dhprev = 0, else dst[n] = 0 and dhprev = dh (dst: data [n][P]) */
    OCD_RNN_SKIP_DX     /* skip input: dst (data [position][count]) (+= when add) the sum over
                           gates of src (data dpre_x [position][G H]), `rows` positions */
};

struct ocd_rnn_aux {
    enum ocd_rnn_aux_op op;
    void *dst;
    const void *src;
    cudnnDataType_t dst_type, src_type;
    int64_t count, rows, stride;
    double value;
    bool add;
    struct ocd_rnn_step step; /* PAD_FILL, OFFSETS, PROJ_*, SKIP_DX: shapes, lengths, states */
};

/* ---- the persistent recurrence (CUDA, inference) ------------------------------------------- */

/* One pseudo-layer's steps 0 .. T-1 in one cooperative kernel (ocd_cuda_rnn_persist): what the
   recurrent GEMM and the pointwise step compute per step, without a launch per step. step holds
   the fields of ocd_rnn_step that every step shares (s unused), with the two state slots of
   the inference layout: step t reads hprev and cprev when t is even, hnext and cnext when odd,
   and writes the other pair, so that the final states lie in slot T % 2 as the step loop leaves
   them. saved is NULL and proj false. r: the recurrent matrices of every gate, data [G H][P]
   row-major (the weight space's R block). exchange: ocd_rnn_persist_exchange_bytes of
   workspace (8-byte aligned, any contents) through which the blocks pass h from step to step;
   the kernel keeps the state there in float, so that only y and the final hy are rounded to the
   data type. hx, cx, hy, cy: the call's states of the pseudo-layer (data type [N][P] and
   [N][H]; NULL where not given: zero initial states, final ones not stored), which the
   pipelined form reads and writes itself where the first form uses the state slots. */
struct ocd_rnn_seq {
    struct ocd_rnn_step step;
    const void *r;
    void *exchange;
    const void *hx, *cx;
    void *hy, *cy;
};

/* The persistent kernel's exchange for a batch of N states of P: two slots of N P 8-byte words
   (the state in float and the step's tag; src/cuda/rnn_persist.cu). */
static inline size_t ocd_rnn_persist_exchange_bytes(int64_t N, int64_t P)
{
    return (size_t)(2 * N * P * 8);
}

/* The persistent kernel's launch: `blocks` blocks of `threads`, co-resident; block b owns the
   hidden units [b units, (b + 1) units) and keeps their rows of R (every gate) in `smem` bytes
   of shared memory for the whole sequence, with the states of `chunk` sequences at a time.
   pipelined: the kernel's pipelined form (one block barrier a step, the gate inputs loaded while
   the block waits for h; src/cuda/rnn_persist.cu), unproven: planned where OPENCUDNN_UNPROVEN=1. */
struct ocd_rnn_persist_plan {
    int units, blocks, threads, chunk, pipelined;
    size_t smem;
};

/* The persistent recurrence's cluster form (sm_90: src/cuda/rnn_persist_cluster.cu): one
   thread-block cluster of `ctas` blocks, block b owning the hidden units [b units, (b + 1)
   units) with their rows of R (every gate) in the registers of its warps as tensor-core
   fragments, h passed from block to block through the cluster's shared memory in the data type;
   `smem` bytes of shared memory a block. */
struct ocd_rnn_cluster_plan {
    int units, ctas;
    size_t smem;
};

cudnnStatus_t ocd_host_rnn_fwd_step(cudnnHandle_t handle, const struct ocd_rnn_step *s);
cudnnStatus_t ocd_host_rnn_bwd_step(cudnnHandle_t handle, const struct ocd_rnn_step *s);
cudnnStatus_t ocd_host_rnn_aux(cudnnHandle_t handle, const struct ocd_rnn_aux *a);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_rnn_fwd_step(cudnnHandle_t handle, const struct ocd_rnn_step *s);
cudnnStatus_t ocd_cuda_rnn_bwd_step(cudnnHandle_t handle, const struct ocd_rnn_step *s);
cudnnStatus_t ocd_cuda_rnn_aux(cudnnHandle_t handle, const struct ocd_rnn_aux *a);
/* The persistent kernel's plan for q on the handle's device, of its pipelined form or not:
   NULL, or why it does not serve there (the weights of a block's units do not fit in shared
   memory, the grid would not be co-resident, a step's recurrent product is large enough for the
   step loop's GEMM to win, a data type it does not take: double, a workspace not 8-byte
   aligned). */
const char *ocd_cuda_rnn_persist_plan(cudnnHandle_t handle, const struct ocd_rnn_seq *q, bool pipelined,
                                      struct ocd_rnn_persist_plan *plan);
cudnnStatus_t ocd_cuda_rnn_persist(cudnnHandle_t handle, const struct ocd_rnn_seq *q,
                                   const struct ocd_rnn_persist_plan *plan);
/* The cluster form's plan for q: NULL, or why it does not serve (a device before sm_90, data
   other than half or bfloat16, R not 4-byte aligned, an odd hidden size, a batch or hidden size
   beyond what one cluster's registers and threads hold, no cluster of that size fitting the
   GPU). */
const char *ocd_cuda_rnn_cluster_plan(cudnnHandle_t handle, const struct ocd_rnn_seq *q,
                                      struct ocd_rnn_cluster_plan *plan);
cudnnStatus_t ocd_cuda_rnn_cluster(cudnnHandle_t handle, const struct ocd_rnn_seq *q,
                                   const struct ocd_rnn_cluster_plan *plan);
#endif

#ifdef __cplusplus
}
#endif

/* ---- the cell math (one unit), in the compute type (templates: outside the C block) ---------- */

/* The clip of cudnnRNNSetClip_v8 (CUDNN_RNN_CLIP_MINMAX): c into [lclip, rclip]; NaN stays NaN
   under CUDNN_PROPAGATE_NAN and becomes lclip otherwise. */
OCD_REAL_TEMPLATE OCD_HOST_DEVICE OCD_R ocd_rnn_clip(OCD_R c, OCD_R lclip, OCD_R rclip, bool propagate)
{
    if (c != c) return propagate ? c : lclip;
    return c < lclip ? lclip : c > rclip ? rclip : c;
}

/* One unit of one step forwards. ax[g]: W_g x + b_Wg; ah[g]: R_g h + b_Rg (GRU's gate 2 kept
   apart, as r (R_h h + b_Rh)). Writes the gate values and the saved extra (saved[G]), the new
   cell (LSTM) and the unit's output (before any projection). With clip, the clipped cell gives
   the output and the next step's cell, but the cell written at the sequence's last step (last)
   is the one before the clip: cy, as NVIDIA's library returns it (bench/parity.c's clip probes;
   docs/compatibility.md). */
OCD_REAL_TEMPLATE OCD_HOST_DEVICE void ocd_rnn_cell_fwd(cudnnRNNMode_t mode, const OCD_R *ax, const OCD_R *ah,
                                                        OCD_R cprev, OCD_R hprev, bool clip, OCD_R lclip,
                                                        OCD_R rclip, bool clip_nan, bool last, OCD_R *saved,
                                                        OCD_R *c, OCD_R *h)
{
    switch (mode) {
    case CUDNN_RNN_RELU: {
        OCD_R v = ax[0] + ah[0];
        saved[0] = *h = v > 0 ? v : (v != v ? v : (OCD_R)0);
        break;
    }
    case CUDNN_RNN_TANH: saved[0] = *h = tanh(ax[0] + ah[0]); break;
    case CUDNN_LSTM: {
        OCD_R i = ocd_act_sigmoid(ax[0] + ah[0]), f = ocd_act_sigmoid(ax[1] + ah[1]);
        OCD_R g = tanh(ax[2] + ah[2]), o = ocd_act_sigmoid(ax[3] + ah[3]);
        OCD_R cn = f * cprev + i * g, cc = clip ? ocd_rnn_clip(cn, lclip, rclip, clip_nan) : cn;
        saved[0] = i, saved[1] = f, saved[2] = g, saved[3] = o, saved[4] = cn;
        *c = last ? cn : cc;
        *h = o * tanh(cc);
        break;
    }
    default: { /* GRU */
        OCD_R r = ocd_act_sigmoid(ax[0] + ah[0]), z = ocd_act_sigmoid(ax[1] + ah[1]);
        OCD_R n = tanh(ax[2] + r * ah[2]);
        saved[0] = r, saved[1] = z, saved[2] = n, saved[3] = ah[2];
        *h = ((OCD_R)1 - z) * n + z * hprev;
        break;
    }
    }
}

/* One unit of one step backwards. dh: the gradient of the unit's output (before the
   projection), dc: of the cell the step wrote (LSTM: at the sequence's last step, last, dcy, the
   gradient of the cell before the clip; else that of the clipped cell the next step read);
   saved: what the forward saved; cprev: the cell read, hprev: the state read (GRU). Writes dax[g]
   and dah[g] (the gradients of the pre-activation parts W x and R h), the gradient of the
   previous cell and the part of the previous state's gradient that does not go through R (GRU:
   z dh). The clip's derivative is 1 inside [lclip, rclip] and 0 outside (or at a NaN): the exact
   derivative of ocd_rnn_cell_fwd, which reproduces NVIDIA's gradients. */
OCD_REAL_TEMPLATE OCD_HOST_DEVICE void ocd_rnn_cell_bwd(cudnnRNNMode_t mode, OCD_R dh, OCD_R dc, const OCD_R *saved,
                                                        OCD_R cprev, OCD_R hprev, bool clip, OCD_R lclip,
                                                        OCD_R rclip, bool clip_nan, bool last, OCD_R *dax,
                                                        OCD_R *dah, OCD_R *dcprev, OCD_R *dhprev)
{
    *dcprev = 0;
    *dhprev = 0;
    switch (mode) {
    case CUDNN_RNN_RELU: dax[0] = dah[0] = saved[0] > 0 ? dh : (OCD_R)0; break;
    case CUDNN_RNN_TANH: dax[0] = dah[0] = dh * ((OCD_R)1 - saved[0] * saved[0]); break;
    case CUDNN_LSTM: {
        OCD_R i = saved[0], f = saved[1], g = saved[2], o = saved[3], cn = saved[4];
        OCD_R tc = tanh(clip ? ocd_rnn_clip(cn, lclip, rclip, clip_nan) : cn);
        bool inside = !clip || (cn >= lclip && cn <= rclip);
        OCD_R dclipped = dh * o * ((OCD_R)1 - tc * tc) + (last ? (OCD_R)0 : dc);
        OCD_R d = (inside ? dclipped : (OCD_R)0) + (last ? dc : (OCD_R)0);
        dax[0] = dah[0] = d * g * i * ((OCD_R)1 - i);
        dax[1] = dah[1] = d * cprev * f * ((OCD_R)1 - f);
        dax[2] = dah[2] = d * i * ((OCD_R)1 - g * g);
        dax[3] = dah[3] = dh * tc * o * ((OCD_R)1 - o);
        *dcprev = d * f;
        break;
    }
    default: { /* GRU */
        OCD_R r = saved[0], z = saved[1], n = saved[2], rh = saved[3];
        OCD_R dn = dh * ((OCD_R)1 - z) * ((OCD_R)1 - n * n);
        dax[0] = dah[0] = dn * rh * r * ((OCD_R)1 - r);
        dax[1] = dah[1] = dh * (hprev - n) * z * ((OCD_R)1 - z);
        dax[2] = dn;
        dah[2] = dn * r;
        *dhprev = dh * z;
        break;
    }
    }
}

#endif /* OCD_PROBLEM_RNN_KERNELS_H */
