/* rnn.c (host): the pointwise steps and auxiliary passes of the recurrent networks
   (problem/rnn_kernels.h), sequences spread over the worker threads, the cell math of
   rnn_kernels.h computed in double whatever the data type (one rounding when stored). */
#include "problem/rnn_kernels.h"

#include "host/parallel.h"
#include "host/typed.h"

/* The compute type of a data type's buffers (gx, gh, c states, saved gates, carried gradients). */
static cudnnDataType_t compute_of(cudnnDataType_t t)
{
    return t == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

static int64_t pos_of(const struct ocd_rnn_step *s, int t, int n)
{
    return ocd_rnn_pos(s->layout, s->T, s->N, s->offsets, t, n);
}

/* Whether sequence n takes part in this step (it is longer than the step's index); *pos: its row
   in x and y at this step, counted from its end in the reverse direction (0 where not active). */
static bool active(const struct ocd_rnn_step *s, int n, int64_t *pos)
{
    const int len = s->lengths[n];
    const bool on = s->s < len;
    *pos = on ? pos_of(s, s->dir ? len - 1 - s->s : s->s, n) : 0;
    return on;
}

static double bias(const void *b, cudnnDataType_t t, int j)
{
    return b ? ocd_host_load(t, b, j) : 0.0;
}

static void fwd_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_rnn_step *s = ctx;
    cudnnDataType_t dt = s->dtype, ct = compute_of(dt);
    int G = ocd_rnn_gates(s->mode), S = ocd_rnn_saved_gates(s->mode), H = s->H, P = s->P;
    for (int n = (int)begin; n < (int)end; n++) {
        int64_t pos;
        const bool on = active(s, n, &pos);
        for (int j = 0; j < H; j++) {
            int64_t hi = (int64_t)n * P + j, ci = (int64_t)n * H + j;
            double cprev = s->mode == CUDNN_LSTM ? ocd_host_load(ct, s->cprev, ci) : 0;
            if (!on) {
                if (s->mode == CUDNN_LSTM) ocd_host_store(ct, s->cnext, ci, cprev);
                if (s->proj) ocd_host_store(dt, s->hfull, ci, 0);
                else ocd_host_store(dt, s->hnext, hi, ocd_host_load(dt, s->hprev, hi));
                continue;
            }
            double ax[4], ah[4], saved[5], c = 0, h;
            for (int g = 0; g < G; g++) {
                ax[g] = (s->gx ? ocd_host_load(ct, s->gx, pos * G * H + g * H + j)
                               : ocd_host_load(dt, s->x, pos * s->x_stride + j)) +
                        bias(s->bw[g], dt, j);
                ah[g] = ocd_host_load(ct, s->gh, ((int64_t)n * G + g) * H + j) + bias(s->br[g], dt, j);
            }
            double hprev = s->mode == CUDNN_GRU ? ocd_host_load(dt, s->hprev, hi) : 0;
            ocd_rnn_cell_fwd(s->mode, ax, ah, cprev, hprev, s->clip, s->lclip, s->rclip, s->clip_nan,
                             ocd_rnn_last_step(s, n), saved, &c, &h);
            if (s->mode == CUDNN_LSTM) ocd_host_store(ct, s->cnext, ci, c);
            if (s->saved)
                for (int g = 0; g < S; g++) ocd_host_store(ct, s->saved, ((int64_t)n * S + g) * H + j, saved[g]);
            if (s->proj) {
                ocd_host_store(dt, s->hfull, ci, h);
            } else {
                ocd_host_store(dt, s->hnext, hi, h);
                ocd_host_store(dt, s->y, pos * s->y_stride + (int64_t)s->dir * P + j, h);
            }
        }
    }
}

cudnnStatus_t ocd_host_rnn_fwd_step(cudnnHandle_t handle, const struct ocd_rnn_step *s)
{
    (void)handle;
    ocd_parallel_for(s->N, 1, fwd_range, (void *)s);
    return CUDNN_STATUS_SUCCESS;
}

static void bwd_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_rnn_step *s = ctx;
    cudnnDataType_t dt = s->dtype, ct = compute_of(dt);
    int G = ocd_rnn_gates(s->mode), S = ocd_rnn_saved_gates(s->mode), H = s->H, P = s->P;
    bool unpacked = s->layout != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
    for (int n = (int)begin; n < (int)end; n++) {
        int64_t pos;
        const bool on = active(s, n, &pos);
        for (int j = 0; j < H; j++) {
            int64_t hi = (int64_t)n * P + j, ci = (int64_t)n * H + j;
            if (!on) {
                for (int g = 0; g < G; g++) {
                    ocd_host_store(dt, s->dpre_h, ((int64_t)n * G + g) * H + j, 0);
                    /* the padding position (s, n) of this direction's dpre_x */
                    if (unpacked && s->s < s->T)
                        ocd_host_store(dt, s->dpre_x, pos_of(s, s->s, n) * G * H + g * H + j, 0);
                }
                if (s->mode == CUDNN_LSTM) ocd_host_store(ct, s->dcprev, ci, ocd_host_load(ct, s->dc, ci));
                if (!s->proj) ocd_host_store(ct, s->dhprev, hi, ocd_host_load(ct, s->dh, hi));
                continue;
            }
            double dh = ocd_host_load(ct, s->dh, s->proj ? ci : hi);
            if (!s->proj) dh += ocd_host_load(dt, s->dy, pos * s->y_stride + (int64_t)s->dir * P + j);
            double saved[5], dax[4], dah[4], dcprev, dhprev;
            for (int g = 0; g < S; g++) saved[g] = ocd_host_load(ct, s->saved, ((int64_t)n * S + g) * H + j);
            bool lstm = s->mode == CUDNN_LSTM;
            double dc = lstm ? ocd_host_load(ct, s->dc, ci) : 0, cprev = lstm ? ocd_host_load(ct, s->cprev, ci) : 0;
            double hprev = s->mode == CUDNN_GRU ? ocd_host_load(dt, s->hprev, hi) : 0;
            ocd_rnn_cell_bwd(s->mode, dh, dc, saved, cprev, hprev, s->clip, s->lclip, s->rclip, s->clip_nan,
                             ocd_rnn_last_step(s, n), dax, dah, &dcprev, &dhprev);
            for (int g = 0; g < G; g++) {
                ocd_host_store(dt, s->dpre_x, pos * G * H + g * H + j, dax[g]);
                ocd_host_store(dt, s->dpre_h, ((int64_t)n * G + g) * H + j, dah[g]);
            }
            if (lstm) ocd_host_store(ct, s->dcprev, ci, dcprev);
            if (!s->proj) ocd_host_store(ct, s->dhprev, hi, dhprev);
        }
    }
}

cudnnStatus_t ocd_host_rnn_bwd_step(cudnnHandle_t handle, const struct ocd_rnn_step *s)
{
    (void)handle;
    ocd_parallel_for(s->N, 1, bwd_range, (void *)s);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- auxiliary passes ---------------------------------------------------------------------- */

static void aux_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_rnn_aux *a = ctx;
    const struct ocd_rnn_step *s = &a->step;
    switch (a->op) {
    case OCD_RNN_CONVERT:
        for (int64_t i = begin; i < end; i++)
            ocd_host_store(a->dst_type, a->dst, i, a->src ? ocd_host_load(a->src_type, a->src, i) : a->value);
        break;
    case OCD_RNN_PAD_FILL:
        for (int64_t n = begin; n < end; n++)
            for (int t = s->lengths[n]; t < s->T; t++) {
                int64_t row = pos_of(s, t, (int)n) * a->stride;
                for (int64_t j = 0; j < a->count; j++) ocd_host_store(a->dst_type, a->dst, row + j, a->value);
            }
        break;
    case OCD_RNN_OFFSETS:
        for (int64_t t = begin; t < end; t++) {
            int64_t at = 0;
            for (int n = 0; n < s->N; n++) at += s->lengths[n] < t ? s->lengths[n] : t;
            ((int32_t *)a->dst)[t] = (int32_t)at;
        }
        break;
    case OCD_RNN_PROJ_STORE:
    case OCD_RNN_PROJ_DTOT: {
        cudnnDataType_t dt = s->dtype, ct = compute_of(dt);
        for (int64_t n = begin; n < end; n++) {
            int64_t pos;
            const bool on = active(s, (int)n, &pos);
            for (int j = 0; j < s->P; j++) {
                int64_t i = n * s->P + j, yi = pos * s->y_stride + (int64_t)s->dir * s->P + j;
                if (a->op == OCD_RNN_PROJ_STORE) {
                    double v = ocd_host_load(dt, on ? a->src : s->hprev, i);
                    ocd_host_store(dt, s->hnext, i, v);
                    if (on) ocd_host_store(dt, s->y, yi, v);
                } else {
                    double dh = ocd_host_load(ct, s->dh, i);
                    ocd_host_store(dt, a->dst, i, on ? dh + ocd_host_load(dt, s->dy, yi) : 0);
                    ocd_host_store(ct, s->dhprev, i, on ? 0 : dh);
                }
            }
        }
        break;
    }
    case OCD_RNN_SKIP_DX: {
        int G = ocd_rnn_gates(s->mode);
        for (int64_t p = begin; p < end; p++)
            for (int64_t j = 0; j < a->count; j++) {
                double v = a->add ? ocd_host_load(s->dtype, a->dst, p * a->count + j) : 0;
                for (int g = 0; g < G; g++) v += ocd_host_load(s->dtype, a->src, p * G * s->H + g * s->H + j);
                ocd_host_store(s->dtype, a->dst, p * a->count + j, v);
            }
        break;
    }
    }
}

cudnnStatus_t ocd_host_rnn_aux(cudnnHandle_t handle, const struct ocd_rnn_aux *a)
{
    (void)handle;
    int64_t n;
    switch (a->op) {
    case OCD_RNN_CONVERT: n = a->count; break;
    case OCD_RNN_OFFSETS: n = a->step.T; break;
    case OCD_RNN_SKIP_DX: n = a->rows; break;
    default: n = a->step.N; break;
    }
    ocd_parallel_for(n, a->op == OCD_RNN_CONVERT ? 4096 : 1, aux_range, (void *)a);
    return CUDNN_STATUS_SUCCESS;
}
