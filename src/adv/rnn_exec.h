/* rnn_exec.h: the layer loop of the recurrent networks, shared by every compute entry point
   (cudnnRNNForward and the backward _v8 calls in rnn_forward.c / rnn_train.c, the legacy calls
   and their Ex forms): the call (problem, data layouts, pointers), the workspace and reserve
   layouts behind cudnnGetRNNTempSpaceSizes and the legacy size queries, and the three passes.

   One algorithm, backend-independent: per layer and direction, the input projection of every
   position as one GEMM (ocd_gemm), then per step the recurrent GEMM over the batch and one fused
   pointwise step (problem/rnn_kernels.h, the handle's backend's kernels); with an LSTM
   projection, a GEMM by W_p and a store after the step. The steps after the input projection
   (a pseudo-layer's recurrence) are an implementation table of their own (rnn_exec.c): under
   the persistent algorithms, an inference on CUDA runs them as one cooperative kernel that
   keeps the recurrent weights in shared memory (cuda:rnn_persistent_pipelined, else
   cuda:rnn_persistent, its first form) where they fit. The backward data pass runs layers top
   down and steps last to first, saving the gates' gradients in the reserve; the weight pass is
   then a few large GEMMs over all positions and steps (ADD mode: accumulated into dw).

   Workspace (every call): gx, gh (in inference at least the persistent kernel's exchange,
   which it holds there: ocd_rnn_persist_exchange_bytes), the packed offsets, a copy of the lengths (legacy calls), the
   backward's carried gradients and a layer's output gradient, a vector of ones (bias gradients
   as GEMMs); inference also holds what it needs of the states the training keeps in the
   reserve: two steps of one pseudo-layer's states (ping-pong) and two layers' outputs (the
   last layer's output goes there when the call passes y NULL: ocd_rnn_check_y). Reserve
   (training): per pseudo-layer the states of every step, the saved gates, the projection's
   inputs and the gradients of the backward data pass; the outputs of every layer but the last
   (padding zeroed); a copy of x with its padding zeroed (the weight gradients' GEMMs read every
   position, so no padding may hold a NaN). */
#ifndef OCD_ADV_RNN_EXEC_H
#define OCD_ADV_RNN_EXEC_H

#include "problem/gemm.h"
#include "problem/rnn.h"
#include "problem/rnn_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_rnn_call {
    const struct ocd_rnn_problem *p;
    struct ocd_rnn_data x, y;   /* y: the output's layout (same steps and lengths as x) */
    bool training;              /* forward: keep what the backward needs in the reserve */
    const int32_t *dev_lengths; /* lengths in backend memory; NULL: copied from x.seq_lengths */
    const void *w;              /* the weight space */
    const void *xp, *hx, *cx;   /* hx, cx may be NULL (zeros) */
    void *yp, *hy, *cy;         /* hy, cy may be NULL (not written); yp too in inference */
    const void *dy, *dhy, *dcy; /* backward data: dhy, dcy may be NULL */
    void *dx, *dhx, *dcx;       /* dhx, dcx may be NULL */
    void *dw;                   /* backward weights: gradients added */
    void *drop_states;          /* a training forward with dropout: p->dropout_states, which its masks
                                   come from (here, so that OPENCUDNN_CHECK can give the host run a copy) */
    void *ws, *rs;
    size_t ws_bytes, rs_bytes;
};

/* Bytes of workspace and reserve a call of x's layout needs (training: the forward training
   pass and both backward passes; else inference). */
void ocd_rnn_space_sizes(const struct ocd_rnn_problem *p, const struct ocd_rnn_data *x, bool training, size_t *ws,
                         size_t *rs);

/* A pass as the API runs it (after its checks): with OPENCUDNN_CHECK, the second opinion
   (core/check.h's drivers: the pass again on the host with copies of every buffer it reads) on
   the pass's outputs: the forward's y, hy and cy, backward data's dx, dhx and dcx, backward
   weights' dw (the gradients added to a copy of the starting ones); and at info level the
   call's benchmark replay line (or nothing where the benchmark cannot express the call;
   rnn_forward.c says what it can). The pass follows from the call: dx set for backward data,
   dw for backward weights. A backward's reserve is copied like its inputs: its layout and
   contents (states, saved gates, the gates' gradients, dropout masks) are the same on every
   backend (the layout here, the cell math of problem/rnn_kernels.h, the masks of
   problem/dropout.h). A training forward with dropout between layers draws its masks from the
   dropout states, which hold the same seed and call number on every backend: the host run gets
   a copy of them (drop_states), and the states it leaves must equal the first run's byte for
   byte. run: the pass with the run signature of an
   implementation entry; name: its name in the log ("<backend>:<name>"). op names the API
   function. */
cudnnStatus_t ocd_rnn_run_checked(cudnnHandle_t handle, const struct ocd_rnn_call *c, const char *op, const char *name,
                                  cudnnStatus_t (*run)(cudnnHandle_t handle, const void *call, void *workspace,
                                                       size_t workspace_bytes));

/* ocd_rnn_run_checked with each pass (rnn_forward.c, rnn_backward_train.c). */
cudnnStatus_t ocd_rnn_forward_checked(cudnnHandle_t handle, const struct ocd_rnn_call *c, const char *op);
cudnnStatus_t ocd_rnn_backward_data_checked(cudnnHandle_t handle, const struct ocd_rnn_call *c, const char *op);
cudnnStatus_t ocd_rnn_backward_weights_checked(cudnnHandle_t handle, const struct ocd_rnn_call *c, const char *op);

/* The GEMMs' compute type of the network's passes. */
enum ocd_gemm_compute ocd_rnn_gemm_compute(const struct ocd_rnn_problem *p);

/* The passes. The API has checked the arguments, sizes included. */
cudnnStatus_t ocd_rnn_forward_run(cudnnHandle_t handle, const struct ocd_rnn_call *c);
cudnnStatus_t ocd_rnn_backward_data_run(cudnnHandle_t handle, const struct ocd_rnn_call *c);
cudnnStatus_t ocd_rnn_backward_weights_run(cudnnHandle_t handle, const struct ocd_rnn_call *c);

/* ---- the checks the entry points share (rnn_forward.c) -------------------------------------- */

/* True when v has at least `rank` dims and every one after them is 1 (the state and per-step
   descriptors of frameworks padded to more dims). */
bool ocd_rnn_trailing_ones(const struct ocd_tensor_view *v, int rank);
/* x and y of one call (types, widths, the same layout, steps, batch and lengths). */
cudnnStatus_t ocd_rnn_check_data_pair(const struct ocd_rnn_problem *p, const struct ocd_rnn_data *x,
                                      const struct ocd_rnn_data *y);
/* hDesc, and cDesc for LSTM (BAD_PARAM unless packed (layers dirs) x batch x width tensors),
   each unless it is NULL and its call passes none of its state pointers (h_used, c_used false):
   such a state is neither read nor written. */
cudnnStatus_t ocd_rnn_check_states(const struct ocd_rnn_problem *p, int batch, cudnnTensorDescriptor_t hDesc,
                                   bool h_used, cudnnTensorDescriptor_t cDesc, bool c_used);
/* y of a forward call: NULL is BAD_PARAM in training; in inference it is accepted (logged at
   info level): the last layer's output then goes to the workspace, the final states are
   computed as ever. */
cudnnStatus_t ocd_rnn_check_y(const void *y, bool training);
/* BAD_PARAM for dropout between layers in training without dropout states. */
cudnnStatus_t ocd_rnn_check_dropout(const struct ocd_rnn_problem *p);
/* The algorithm's conditions on the call (persistent algorithms: equal sequence lengths, no
   double data under the static ones, PERSIST_DYNAMIC's plan built for x's batch). */
cudnnStatus_t ocd_rnn_check_algo(const struct ocd_rnn_problem *p, const struct ocd_rnn_data *x);
/* BAD_PARAM when a space is smaller than needed, or NULL while needed (name: "workSpace", ...). */
cudnnStatus_t ocd_rnn_check_space(const char *name, size_t given, const void *ptr, size_t need);
/* What every v8 compute call checks: handle, descriptors, data pair, states (ocd_rnn_check_states:
   h_used / c_used say whether the call passes any pointer of that state), devSeqLengths, the
   weight space; fills p and c's problem, layouts, lengths and weights. */
cudnnStatus_t ocd_rnn_prepare_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, const int32_t *devSeqLengths,
                                 cudnnRNNDataDescriptor_t xDesc, cudnnRNNDataDescriptor_t yDesc,
                                 cudnnTensorDescriptor_t hDesc, bool h_used, cudnnTensorDescriptor_t cDesc,
                                 bool c_used, size_t weightSpaceSize, const void *weightSpace,
                                 struct ocd_rnn_problem *p, struct ocd_rnn_call *c);

/* ---- shared by the passes (rnn_exec.c) ----------------------------------------------------- */

/* Where everything lies, in bytes from the start of the workspace (ws_*) or reserve (rs_*); the
   per-pseudo-layer regions of the reserve repeat every rs_pseudo bytes (0 in inference: one set
   serves every pseudo-layer in turn). */
struct ocd_rnn_layout {
    int L, D, G, S, H, P, T, N;
    int64_t pos;           /* positions of x and y */
    size_t e, ce;          /* bytes of a data and a compute element */
    size_t ws_gx, ws_gh, ws_rtmp, ws_offsets, ws_lengths, ws_dh[2], ws_dc[2], ws_dhfull, ws_dout[2], ws_ones;
    size_t ws_states;      /* inference: where the reserve's regions lie in the workspace */
    size_t ws_total;
    size_t rs_hs, rs_cs, rs_saved, rs_hfull, rs_dpre_x, rs_dpre_h, rs_dtot; /* pseudo-layer 0 */
    size_t rs_pseudo;
    int state_slots;       /* per pseudo-layer: steps of states kept (training T + 1, inference 2:
                              step t reads slot t % state_slots, writes the next) */
    int hfull_slots;       /* of the projection's inputs (training T, inference 1) */
    int out_slots;         /* layer outputs kept (training L - 1, inference min(L, 2)) */
    size_t rs_outs, rs_out_stride; /* layer l's output (l < L - 1, or the last layer's in an
                                      inference with y NULL): ocd_rnn_layer_out */
    size_t rs_drops, rs_masks, rs_mask_stride; /* training with dropout: layer l's output after
                                                  dropout (rs_out_stride apart), and its mask */
    size_t rs_xcopy;
    size_t rs_total;       /* training: all of it; inference: the part placed at ws_states */
};

void ocd_rnn_layout_of(const struct ocd_rnn_problem *p, const struct ocd_rnn_data *x, bool training,
                       struct ocd_rnn_layout *l);

/* A call's pointers resolved: the state region (reserve, or the workspace in inference) and
   the lengths and offsets in backend memory. */
struct ocd_rnn_ctx {
    cudnnHandle_t h;
    const struct ocd_rnn_call *c;
    const struct ocd_rnn_problem *p;
    struct ocd_rnn_layout l;
    char *ws, *rs;
    const int32_t *lengths, *offsets;
    cudnnDataType_t ct;    /* the compute type */
    enum ocd_gemm_compute gemm_compute;
};

cudnnStatus_t ocd_rnn_ctx_init(cudnnHandle_t handle, const struct ocd_rnn_call *c, bool training,
                               struct ocd_rnn_ctx *x);

/* A step description of pseudo-layer pl with the shapes, lengths and modes filled. */
struct ocd_rnn_step ocd_rnn_step_of(const struct ocd_rnn_ctx *x, int pl);

/* The backend's kernels. */
cudnnStatus_t ocd_rnn_fwd_step(const struct ocd_rnn_ctx *x, const struct ocd_rnn_step *s);
cudnnStatus_t ocd_rnn_bwd_step(const struct ocd_rnn_ctx *x, const struct ocd_rnn_step *s);
cudnnStatus_t ocd_rnn_aux(const struct ocd_rnn_ctx *x, const struct ocd_rnn_aux *a);

/* C (m x n, column-major, ldc) = op(A) op(B) + beta C on the shared GEMM, A and B of the data
   type; C of c_type. */
cudnnStatus_t ocd_rnn_gemm(const struct ocd_rnn_ctx *x, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                           const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                           cudnnDataType_t c_type, double beta);

/* A layer's input: x (training: its copy with the padding zeroed) or the layer below's output
   (training with dropout: after the dropout). */
const char *ocd_rnn_layer_data(const struct ocd_rnn_ctx *x, int layer);

/* True when a training pass applies dropout between layers. */
bool ocd_rnn_dropout_on(const struct ocd_rnn_problem *p);

/* Dropout on layer l's output (forward: into the next layer's input, the mask kept in the
   reserve) or on the gradient of the next layer's input, in place (backward: by that mask). */
cudnnStatus_t ocd_rnn_dropout(const struct ocd_rnn_ctx *x, int layer, bool forward, void *grad);

/* Pointers into the regions. */
static inline char *ocd_rnn_rs(const struct ocd_rnn_ctx *x, size_t region, int pl)
{
    return x->rs + region + (size_t)pl * x->l.rs_pseudo;
}

/* Where layer l's output lies: slot l % out_slots (inference alternates two). */
static inline char *ocd_rnn_layer_out(const struct ocd_rnn_ctx *x, int layer)
{
    return x->rs + x->l.rs_outs + (size_t)(layer % x->l.out_slots) * x->l.rs_out_stride;
}

static inline const char *ocd_rnn_weight(const struct ocd_rnn_ctx *x, struct ocd_rnn_param m)
{
    return (const char *)x->c->w + (size_t)m.offset * x->l.e;
}

#ifdef __cplusplus
}
#endif

#endif /* OCD_ADV_RNN_EXEC_H */
