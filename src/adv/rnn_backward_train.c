/* rnn_backward_train.c: the backward passes of the recurrent networks (adv/rnn_exec.h), in
   adv_train beside their entry points.

   Backward data runs the layers top down, each direction's steps last to first: the gradient
   carried to a step's output (dh, with the step's dy where the sequence is active) goes through
   the fused pointwise step into the gates' pre-activation gradients, saved in the reserve
   (dpre_x by position, dpre_h by step), and back to the previous state as R^T dpre_h (a GEMM
   adding to the step's direct part). A layer's input gradient is then one GEMM per direction
   over every position, W^T dpre_x (skip input: the sum over gates), the next layer down's dy.

   Backward weights adds, per pseudo-layer, dW = dpre_x^T input over every position, dR =
   dpre_h^T h over every step, the projection's dW_p = dtot^T h_full and the biases as dpre^T 1:
   GEMMs of K = positions or steps x batch. Padding positions and inactive steps carry zero
   gradients (written by the steps) and finite inputs (x's copy with zeroed padding, carried
   states), so they add nothing. The API runs both through ocd_rnn_run_checked (OPENCUDNN_CHECK's
   second opinion). */
#include "adv/rnn_exec.h"

static cudnnStatus_t convert(const struct ocd_rnn_ctx *x, void *dst, cudnnDataType_t dt, const void *src,
                             cudnnDataType_t st, int64_t count, double value)
{
    struct ocd_rnn_aux a = {.op = OCD_RNN_CONVERT, .dst = dst, .src = src, .dst_type = dt, .src_type = st,
                            .count = count, .value = value};
    return ocd_rnn_aux(x, &a);
}

/* One direction of one layer backwards through time; dy: the layer's output gradient. */
static cudnnStatus_t backward_pseudo(const struct ocd_rnn_ctx *x, int pl, const void *dy)
{
    const struct ocd_rnn_problem *p = x->p;
    const struct ocd_rnn_layout *l = &x->l;
    const struct ocd_rnn_call *c = x->c;
    int64_t G = l->G, H = l->H, P = l->P, N = l->N;
    size_t e = l->e, ce = l->ce;
    bool proj = ocd_rnn_has_projection(p), lstm = p->cell == CUDNN_LSTM;
    struct ocd_rnn_param R = ocd_rnn_matrix(p, pl, p->gates), Wp = ocd_rnn_matrix(p, pl, OCD_RNN_PROJECTION_ID);
    char *hs = ocd_rnn_rs(x, l->rs_hs, pl), *cs = ocd_rnn_rs(x, l->rs_cs, pl);
    char *dh[2] = {x->ws + l->ws_dh[0], x->ws + l->ws_dh[1]}, *dc[2] = {x->ws + l->ws_dc[0], x->ws + l->ws_dc[1]};
    OCD_TRY(convert(x, dh[0], x->ct, c->dhy ? (const char *)c->dhy + (size_t)pl * N * P * e : NULL, p->dtype, N * P,
                    0));
    if (lstm)
        OCD_TRY(convert(x, dc[0], x->ct, c->dcy ? (const char *)c->dcy + (size_t)pl * N * H * e : NULL, p->dtype,
                        N * H, 0));
    struct ocd_rnn_step s = ocd_rnn_step_of(x, pl);
    s.y = NULL;
    s.dy = dy;
    s.dpre_x = ocd_rnn_rs(x, l->rs_dpre_x, pl);
    int cur = 0;
    for (int t = l->T - 1; t >= 0; t--) {
        s.s = t;
        s.hprev = hs + (size_t)t * N * P * e;
        s.cprev = cs + (size_t)t * N * H * ce;
        s.saved = ocd_rnn_rs(x, l->rs_saved, pl) + (size_t)t * N * l->S * H * ce;
        s.dpre_h = ocd_rnn_rs(x, l->rs_dpre_h, pl) + (size_t)t * N * G * H * e;
        s.dh = dh[cur];
        s.dhprev = dh[1 - cur];
        s.dc = dc[cur];
        s.dcprev = dc[1 - cur];
        if (proj) {
            char *dtot = ocd_rnn_rs(x, l->rs_dtot, pl) + (size_t)t * N * P * e;
            struct ocd_rnn_aux a = {.op = OCD_RNN_PROJ_DTOT, .dst = dtot, .step = s};
            OCD_TRY(ocd_rnn_aux(x, &a));
            char *dhfull = x->ws + l->ws_dhfull;
            OCD_TRY(ocd_rnn_gemm(x, false, false, H, N, P, ocd_rnn_weight(x, Wp), H, dtot, P, dhfull, H, x->ct, 0));
            s.dh = dhfull;
        }
        OCD_TRY(ocd_rnn_bwd_step(x, &s));
        OCD_TRY(ocd_rnn_gemm(x, false, false, P, N, G * H, ocd_rnn_weight(x, R), P, s.dpre_h, G * H, dh[1 - cur], P,
                             x->ct, 1));
        cur = 1 - cur;
    }
    if (c->dhx) OCD_TRY(convert(x, (char *)c->dhx + (size_t)pl * N * P * e, p->dtype, dh[cur], x->ct, N * P, 0));
    if (c->dcx && lstm)
        OCD_TRY(convert(x, (char *)c->dcx + (size_t)pl * N * H * e, p->dtype, dc[cur], x->ct, N * H, 0));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_backward_data_run(cudnnHandle_t handle, const struct ocd_rnn_call *c)
{
    struct ocd_rnn_ctx x;
    OCD_TRY(ocd_rnn_ctx_init(handle, c, true, &x));
    const struct ocd_rnn_problem *p = c->p;
    const struct ocd_rnn_layout *l = &x.l;
    int64_t G = l->G, H = l->H;
    for (int layer = p->layers - 1; layer >= 0; layer--) {
        const void *dy = layer == p->layers - 1 ? c->dy : x.ws + l->ws_dout[(layer + 1) % 2];
        if (layer < p->layers - 1 && ocd_rnn_dropout_on(p)) OCD_TRY(ocd_rnn_dropout(&x, layer, false, (void *)dy));
        void *dx = layer == 0 ? c->dx : x.ws + l->ws_dout[layer % 2];
        int64_t in = ocd_rnn_layer_input(p, layer);
        for (int d = 0; d < p->dirs; d++) OCD_TRY(backward_pseudo(&x, layer * p->dirs + d, dy));
        for (int d = 0; d < p->dirs; d++) {
            int pl = layer * p->dirs + d;
            struct ocd_rnn_param W = ocd_rnn_matrix(p, pl, 0);
            const char *dpre_x = ocd_rnn_rs(&x, l->rs_dpre_x, pl);
            if (W.rows) {
                if (l->pos > 0)
                        OCD_TRY(ocd_rnn_gemm(&x, false, false, in, l->pos, G * H, ocd_rnn_weight(&x, W), in, dpre_x, G * H,
                                         dx, in, p->dtype, d > 0 ? 1 : 0));
            } else {
                struct ocd_rnn_aux a = {.op = OCD_RNN_SKIP_DX, .dst = dx, .src = dpre_x, .count = in, .rows = l->pos,
                                        .add = d > 0};
                a.step = ocd_rnn_step_of(&x, pl);
                OCD_TRY(ocd_rnn_aux(&x, &a));
            }
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

/* dw (the data type, m x n, ld) += A B^T, A m x k (lda), B n x k (ldb): a gradient over K rows. */
static cudnnStatus_t add_grad(const struct ocd_rnn_ctx *x, int64_t m, int64_t n, int64_t k, const void *a,
                              int64_t lda, const void *b, int64_t ldb, void *dw, int64_t ld)
{
    return ocd_rnn_gemm(x, false, true, m, n, k, a, lda, b, ldb, dw, ld, x->p->dtype, 1);
}

static char *grad_of(const struct ocd_rnn_ctx *x, struct ocd_rnn_param m)
{
    return (char *)x->c->dw + (size_t)m.offset * x->l.e;
}

cudnnStatus_t ocd_rnn_backward_weights_run(cudnnHandle_t handle, const struct ocd_rnn_call *c)
{
    struct ocd_rnn_ctx x;
    OCD_TRY(ocd_rnn_ctx_init(handle, c, true, &x));
    const struct ocd_rnn_problem *p = c->p;
    const struct ocd_rnn_layout *l = &x.l;
    int64_t G = l->G, H = l->H, P = l->P, TN = (int64_t)l->T * l->N;
    int64_t rows = l->pos > TN ? l->pos : TN;
    char *ones = x.ws + l->ws_ones;
    OCD_TRY(convert(&x, ones, p->dtype, NULL, p->dtype, rows, 1));
    for (int pl = 0; pl < p->layers * p->dirs; pl++) {
        int layer = pl / p->dirs;
        int64_t in = ocd_rnn_layer_input(p, layer);
        const char *dpre_x = ocd_rnn_rs(&x, l->rs_dpre_x, pl), *dpre_h = ocd_rnn_rs(&x, l->rs_dpre_h, pl);
        struct ocd_rnn_param W = ocd_rnn_matrix(p, pl, 0), R = ocd_rnn_matrix(p, pl, p->gates);
        struct ocd_rnn_param Wp = ocd_rnn_matrix(p, pl, OCD_RNN_PROJECTION_ID);
        struct ocd_rnn_param bw = ocd_rnn_bias(p, pl, 0), br = ocd_rnn_bias(p, pl, p->gates);
        if (W.rows && l->pos > 0)
            OCD_TRY(add_grad(&x, in, G * H, l->pos, ocd_rnn_layer_data(&x, layer), in, dpre_x, G * H, grad_of(&x, W),
                             in));
        OCD_TRY(add_grad(&x, P, G * H, TN, ocd_rnn_rs(&x, l->rs_hs, pl), P, dpre_h, G * H, grad_of(&x, R), P));
        if (Wp.rows)
            OCD_TRY(add_grad(&x, H, P, TN, ocd_rnn_rs(&x, l->rs_hfull, pl), H, ocd_rnn_rs(&x, l->rs_dtot, pl), P,
                             grad_of(&x, Wp), H));
        /* the biases: dpre (G H x K) times a column of ones */
        if (bw.rows && l->pos > 0)
            OCD_TRY(ocd_rnn_gemm(&x, false, false, G * H, 1, l->pos, dpre_x, G * H, ones, rows, grad_of(&x, bw),
                                 G * H, p->dtype, 1));
        if (br.rows)
            OCD_TRY(ocd_rnn_gemm(&x, false, false, G * H, 1, TN, dpre_h, G * H, ones, rows, grad_of(&x, br), G * H,
                                 p->dtype, 1));
    }
    return CUDNN_STATUS_SUCCESS;
}

/* The passes with the run signature of an implementation entry (core/check.h's drivers). */
static cudnnStatus_t backward_data_driver(cudnnHandle_t handle, const void *call, void *workspace,
                                          size_t workspace_bytes)
{
    (void)workspace, (void)workspace_bytes;
    return ocd_rnn_backward_data_run(handle, call);
}

static cudnnStatus_t backward_weights_driver(cudnnHandle_t handle, const void *call, void *workspace,
                                             size_t workspace_bytes)
{
    (void)workspace, (void)workspace_bytes;
    return ocd_rnn_backward_weights_run(handle, call);
}

cudnnStatus_t ocd_rnn_backward_data_checked(cudnnHandle_t handle, const struct ocd_rnn_call *c, const char *op)
{
    return ocd_rnn_run_checked(handle, c, op, "rnn_backward_data", backward_data_driver);
}

cudnnStatus_t ocd_rnn_backward_weights_checked(cudnnHandle_t handle, const struct ocd_rnn_call *c, const char *op)
{
    return ocd_rnn_run_checked(handle, c, op, "rnn_backward_weights", backward_weights_driver);
}
