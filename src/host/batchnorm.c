/* batchnorm.c (host): the reference implementation of the normalization engine
   (problem/batchnorm.h).

   Slots are independent, so threads take ranges of slots and each slot is computed start to
   finish by one thread: statistics in double by two passes (mean, then squared deviations),
   then the per-element pass. An odometer over the reduced dimensions walks every tensor with its
   own strides, so any legal layout (NCHW, NHWC, padded, mixed between tensors) takes the same
   path. Any workspace is ignored: the host needs none. */
#include "problem/batchnorm.h"

#include "host/parallel.h"
#include "host/typed.h"

enum { TX, TY, TZ, TDY, TDX, TDZ, TRES, NT };

/* The reduced dimensions of one slot, and each tensor's offset at the current position. */
struct walk {
    int nd;
    int64_t dims[OCD_MAX_DIMS], idx[OCD_MAX_DIMS];
    int64_t strides[NT][OCD_MAX_DIMS];
    int64_t off[NT];
};

static const struct ocd_tensor_view *view_of(const struct ocd_bn_problem *p, int t)
{
    switch (t) {
    case TX: return &p->x;
    case TY: return &p->y;
    case TZ: return &p->z;
    case TDY: return &p->dy;
    case TDX: return &p->dx;
    case TDZ: return &p->dz;
    default: return &p->reserve;
    }
}

static bool is_slot_dim(const struct ocd_bn_problem *p, int d)
{
    return d == 1 || (d >= 2 && p->per_activation);
}

/* Offset of slot k's first element in a view: k is row-major over the slot dimensions. */
static int64_t slot_offset(const struct ocd_bn_problem *p, const struct ocd_tensor_view *v, int64_t k)
{
    int64_t off = 0;
    for (int d = v->rank - 1; d >= 1; d--) {
        if (!is_slot_dim(p, d)) continue;
        off += (k % p->x.dims[d]) * v->strides[d];
        k /= p->x.dims[d];
    }
    return off;
}

static void walk_start(struct walk *w, const struct ocd_bn_problem *p, int64_t k)
{
    w->nd = 0;
    for (int d = 0; d < p->x.rank; d++) {
        if (is_slot_dim(p, d)) continue;
        w->dims[w->nd] = p->x.dims[d];
        w->idx[w->nd] = 0;
        for (int t = 0; t < NT; t++) w->strides[t][w->nd] = view_of(p, t)->strides[d];
        w->nd++;
    }
    for (int t = 0; t < NT; t++) w->off[t] = slot_offset(p, view_of(p, t), k);
}

static void walk_next(struct walk *w)
{
    for (int i = w->nd - 1; i >= 0; i--) {
        for (int t = 0; t < NT; t++) w->off[t] += w->strides[t][i];
        if (++w->idx[i] < w->dims[i]) return;
        for (int t = 0; t < NT; t++) w->off[t] -= w->strides[t][i] * w->dims[i];
        w->idx[i] = 0;
    }
}

static double load_slot(const struct ocd_bn_problem *p, const struct ocd_tensor_view *v,
                        const void *base, int64_t k)
{
    return ocd_host_load(p->ptype, base, slot_offset(p, v, k));
}

static void store_slot(const struct ocd_bn_problem *p, const struct ocd_tensor_view *v, void *base,
                       int64_t k, double value)
{
    ocd_host_store(p->ptype, base, slot_offset(p, v, k), value);
}

/* Mean and biased variance of x over slot k. */
static void slot_stats(const struct ocd_bn_problem *p, int64_t k, double *mean, double *var)
{
    struct walk w;
    double sum = 0, sq = 0;
    walk_start(&w, p, k);
    for (int64_t i = 0; i < p->reduced; i++, walk_next(&w)) sum += ocd_host_load(p->dtype, p->x_ptr, w.off[TX]);
    *mean = sum / (double)p->reduced;
    walk_start(&w, p, k);
    for (int64_t i = 0; i < p->reduced; i++, walk_next(&w)) {
        double d = ocd_host_load(p->dtype, p->x_ptr, w.off[TX]) - *mean;
        sq += d * d;
    }
    *var = sq / (double)p->reduced;
}

/* The per-element forward pass of slot k: y = alpha * act(a * x + b (+ z)) + beta * y. */
static void slot_forward(const struct ocd_bn_problem *p, int64_t k, double mean, double invstd)
{
    double a = load_slot(p, &p->param, p->scale, k) * invstd;
    double b = load_slot(p, &p->param, p->bias, k) - mean * a;
    bool act = p->ops != OCD_BN_OPS_NORM;
    struct walk w;
    walk_start(&w, p, k);
    for (int64_t i = 0; i < p->reduced; i++, walk_next(&w)) {
        double v = a * ocd_host_load(p->dtype, p->x_ptr, w.off[TX]) + b;
        if (p->z_ptr) v += ocd_host_load(p->dtype, p->z_ptr, w.off[TZ]);
        if (act) {
            if (p->reserve_ptr) ocd_host_store(p->dtype, p->reserve_ptr, w.off[TRES], v);
            v = ocd_act_forward(p->act_mode, p->act_nan == CUDNN_PROPAGATE_NAN, p->act_coef, p->act_swish, v);
        }
        ocd_host_blend(p->dtype, p->y_ptr, w.off[TY], p->alpha, p->beta, v);
    }
}

static void slot_training(const struct ocd_bn_problem *p, int64_t k)
{
    double mean, var;
    slot_stats(p, k, &mean, &var);
    double invstd = 1.0 / sqrt(var + p->epsilon);
    if (p->save_mean) {
        store_slot(p, &p->stat, p->save_mean, k, mean);
        store_slot(p, &p->stat, p->save_invstd, k, invstd);
    }
    if (p->run_mean) {
        /* The running variance is the unbiased one; a factor of 1 does not read the old values. */
        double f = p->factor, unbiased = p->reduced > 1 ? var * (double)p->reduced / (double)(p->reduced - 1) : var;
        double rm = f * mean, rv = f * unbiased;
        if (f != 1) {
            rm += (1 - f) * load_slot(p, &p->stat, p->run_mean, k);
            rv += (1 - f) * load_slot(p, &p->stat, p->run_var, k);
        }
        store_slot(p, &p->stat, p->run_mean, k, rm);
        store_slot(p, &p->stat, p->run_var, k, rv);
    }
    slot_forward(p, k, mean, invstd);
}

static void slot_backward(const struct ocd_bn_problem *p, int64_t k)
{
    double mean, invstd;
    if (p->saved_mean) {
        mean = load_slot(p, &p->stat, p->saved_mean, k);
        invstd = load_slot(p, &p->stat, p->saved_invstd, k);
    } else {
        double var;
        slot_stats(p, k, &mean, &var);
        invstd = 1.0 / sqrt(var + p->epsilon);
    }
    bool act = p->ops != OCD_BN_OPS_NORM;
    double sdp = 0, sdpx = 0;
    struct walk w;
    walk_start(&w, p, k);
    for (int64_t i = 0; i < p->reduced; i++, walk_next(&w)) {
        double dp = ocd_host_load(p->dtype, p->dy_ptr, w.off[TDY]);
        if (act) dp *= ocd_act_derivative(p->act_mode, p->act_coef, p->act_swish, ocd_host_load(p->dtype, p->reserve_ptr, w.off[TRES]));
        sdp += dp;
        sdpx += dp * (ocd_host_load(p->dtype, p->x_ptr, w.off[TX]) - mean);
    }
    double scale = load_slot(p, &p->param, p->scale, k), A, B, C;
    OCD_BN_BACKWARD_COEFS(double, mean, invstd, scale, p->reduced, sdp, sdpx, A, B, C);
    walk_start(&w, p, k);
    for (int64_t i = 0; i < p->reduced; i++, walk_next(&w)) {
        double dp = ocd_host_load(p->dtype, p->dy_ptr, w.off[TDY]);
        if (act) dp *= ocd_act_derivative(p->act_mode, p->act_coef, p->act_swish, ocd_host_load(p->dtype, p->reserve_ptr, w.off[TRES]));
        double g = A * dp + B * ocd_host_load(p->dtype, p->x_ptr, w.off[TX]) + C;
        ocd_host_blend(p->dtype, p->dx_ptr, w.off[TDX], p->alpha, p->beta, g);
        if (p->dz_ptr) ocd_host_blend(p->dtype, p->dz_ptr, w.off[TDZ], p->alpha, p->beta, dp);
    }
    int64_t poff = slot_offset(p, &p->param, k);
    ocd_host_blend(p->ptype, p->dscale, poff, p->alpha_param, p->beta_param, sdpx * invstd);
    ocd_host_blend(p->ptype, p->dbias, poff, p->alpha_param, p->beta_param, sdp);
}

static void slot_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_bn_problem *p = ctx;
    for (int64_t k = begin; k < end; k++) {
        switch (p->dir) {
        case OCD_BN_INFERENCE: {
            double mean = load_slot(p, &p->stat, p->est_mean, k);
            double var = load_slot(p, &p->stat, p->est_var, k);
            slot_forward(p, k, mean, 1.0 / sqrt(var + p->epsilon));
            break;
        }
        case OCD_BN_TRAINING: slot_training(p, k); break;
        case OCD_BN_BACKWARD: slot_backward(p, k); break;
        }
    }
}

cudnnStatus_t ocd_host_bn(cudnnHandle_t handle, const void *problem, void *workspace,
                          size_t workspace_bytes)
{
    (void)handle;
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_bn_problem *p = problem;
    ocd_parallel_for(p->slots, OCD_MAX(1, 16384 / p->reduced), slot_range, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}
