/* bn_harness.c: one batch-normalization case run end to end (see bn_harness.h). */
#include "bn_harness.h"

#include "ref/batchnorm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-2

struct tbuf {
    struct tview t;
    void *dev;
    double *val;
};

static void tb_init(struct tbuf *b, cudnnDataType_t dtype, int rank, const int dims[], int layout)
{
    tview_init(&b->t, dtype, rank, dims, layout);
    b->val = calloc((size_t)b->t.count, sizeof(double));
    b->dev = NULL;
}

/* The values uploaded (rounded to the type), in a fresh buffer. */
static void tb_upload(struct tbuf *b)
{
    if (b->dev) tbuf_free(b->dev);
    b->dev = tview_upload(&b->t, b->val);
}

/* Fresh random values, uploaded. */
static void tb_random(struct tbuf *b, double lo, double hi)
{
    tfill_random(CUDNN_DATA_DOUBLE, b->val, b->t.count, lo, hi);
    tb_upload(b);
}

/* The ranges x and z are drawn from. */
#define X_LO (-2.0)
#define X_HI 3.0
#define Z_LO (-1.0)
#define Z_HI 1.0

/* An output: random prior values when they will be blended, else poison (NaN). */
static void tb_output(struct tbuf *b, double beta)
{
    if (beta != 0) {
        tb_random(b, -1, 1);
        return;
    }
    if (b->dev) tbuf_free(b->dev);
    b->dev = tview_upload(&b->t, NULL);
}

static void tb_free(struct tbuf *b)
{
    if (b->dev) tbuf_free(b->dev);
    free(b->val);
    tview_destroy(&b->t);
}

/* Compares a result with the reference at tolerance tol (that of the data type, also for the
   float per-slot results of 16-bit data), and checks that nothing was written between elements. */
static bool check(const struct tview *t, const void *buf, const double *want, double tol, const char *what)
{
    double *got = malloc((size_t)t->count * sizeof *got);
    tview_download(t, buf, got);
    bool ok = tcompare(CUDNN_DATA_DOUBLE, got, want, t->count, tol, what);
    free(got);
    return tview_gaps_intact(t, buf, what) && ok;
}

struct bn_case bn_case_default(enum bn_api api, cudnnDataType_t dtype, int rank, const int dims[])
{
    struct bn_case c;
    memset(&c, 0, sizeof c);
    c.api = api;
    c.dtype = dtype;
    c.rank = rank;
    for (int d = 0; d < rank; d++) c.dims[d] = dims[d];
    c.alpha = 1;
    c.alpha_param = 1;
    c.save = c.running = c.use_saved = true;
    c.steps = 2;
    return c;
}

struct run {
    const struct bn_case *c;
    cudnnHandle_t h;
    char what[256];
    struct ref_bn_shape sh;
    int64_t k, m, n;
    cudnnDataType_t ptype;
    struct tbuf x, z, y, dy, dx, dz;
    struct tbuf scale, bias, mean, var, rmean, rvar, smean, sinv, dscale, dbias;
    cudnnActivationDescriptor_t act;
    void *reserve;
    size_t reserve_bytes;
    int ref_act; /* -1: no activation */
    double tol;     /* of the data type, for every result but the parameter gradients */
    double sum_tol; /* dscale and dbias: sums of m terms that cancel, rounded in ptype */
};

static cudnnBatchNormMode_t bn_mode(const struct bn_case *c)
{
    return c->per_activation ? CUDNN_BATCHNORM_PER_ACTIVATION
           : c->persistent   ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT
                             : CUDNN_BATCHNORM_SPATIAL;
}

static cudnnNormMode_t norm_mode(const struct bn_case *c)
{
    return c->per_activation ? CUDNN_NORM_PER_ACTIVATION : CUDNN_NORM_PER_CHANNEL;
}

static cudnnNormAlgo_t norm_algo(const struct bn_case *c)
{
    return c->persistent ? CUDNN_NORM_ALGO_PERSIST : CUDNN_NORM_ALGO_STANDARD;
}

/* A workspace of the size the API asks for (NULL when the case runs without one). */
static void *workspace_for(const struct run *r, bool backward, size_t *bytes)
{
    const struct bn_case *c = r->c;
    *bytes = 0;
    if (c->no_workspace || c->api == BN_API_PLAIN) return NULL;
    cudnnStatus_t s;
    if (c->api == BN_API_EX && !backward)
        s = cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
            r->h, bn_mode(c), c->ops, r->x.t.desc, r->z.t.desc, r->y.t.desc, r->scale.t.desc, r->act, bytes);
    else if (c->api == BN_API_EX)
        s = cudnnGetBatchNormalizationBackwardExWorkspaceSize(r->h, bn_mode(c), c->ops, r->x.t.desc,
                                                              r->y.t.desc, r->dy.t.desc, r->dz.t.desc,
                                                              r->dx.t.desc, r->scale.t.desc, r->act, bytes);
    else if (!backward)
        s = cudnnGetNormalizationForwardTrainingWorkspaceSize(r->h, norm_mode(c), c->ops, norm_algo(c),
                                                              r->x.t.desc, r->z.t.desc, r->y.t.desc,
                                                              r->scale.t.desc, r->act, r->mean.t.desc,
                                                              bytes, 1);
    else
        s = cudnnGetNormalizationBackwardWorkspaceSize(r->h, norm_mode(c), c->ops, norm_algo(c),
                                                       r->x.t.desc, r->y.t.desc, r->dy.t.desc,
                                                       r->dz.t.desc, r->dx.t.desc, r->scale.t.desc,
                                                       r->act, r->mean.t.desc, bytes, 1);
    CHECK_OK(s);
    return *bytes ? tbuf_alloc(*bytes) : NULL;
}

static void run_inference(struct run *r)
{
    const struct bn_case *c = r->c;
    if (c->api == BN_API_EX && c->ops != 0) return; /* no Ex inference call exists */
    struct tscale sa, sb;
    const void *alpha = tscale(&sa, c->dtype, c->alpha), *beta = tscale(&sb, c->dtype, c->beta);
    tb_random(&r->x, X_LO, X_HI);
    tb_random(&r->mean, -1, 1);
    tb_random(&r->var, 0.5, 2);
    tb_output(&r->y, c->beta);
    double *prior = malloc((size_t)r->n * sizeof *prior), *want = malloc((size_t)r->n * sizeof *want);
    memcpy(prior, r->y.val, (size_t)r->n * sizeof *prior);
    cudnnStatus_t s;
    if (c->api == BN_API_NORM)
        s = cudnnNormalizationForwardInference(r->h, norm_mode(c), c->ops, norm_algo(c), alpha, beta,
                                               r->x.t.desc, r->x.dev, r->scale.t.desc, r->scale.dev,
                                               r->bias.dev, r->mean.t.desc, r->mean.dev, r->var.dev,
                                               r->z.t.desc, r->z.dev, r->act, r->y.t.desc, r->y.dev, EPS, 1);
    else
        s = cudnnBatchNormalizationForwardInference(r->h, bn_mode(c), alpha, beta, r->x.t.desc, r->x.dev,
                                                    r->y.t.desc, r->y.dev, r->scale.t.desc, r->scale.dev,
                                                    r->bias.dev, r->mean.dev, r->var.dev, EPS);
    if (CHECK_OK(s)) {
        ref_bn_forward(&r->sh, r->x.val, c->ops == 2 ? r->z.val : NULL, r->scale.val, r->bias.val,
                       r->mean.val, r->var.val, EPS, r->ref_act, c->act_coef, NULL, want);
        for (int64_t i = 0; i < r->n; i++) want[i] = c->alpha * want[i] + (c->beta ? c->beta * prior[i] : 0);
        char what[300];
        snprintf(what, sizeof what, "inference y, %s", r->what);
        check(&r->y.t, r->y.dev, want, r->tol, what);
    }
    free(prior);
    free(want);
}

/* Whether pre-activation v lies within KINK_GAP of a point where the fused activation's
   derivative jumps: 0 for the ReLUs and ELU, a clipped ReLU's ceiling too. */
#define KINK_GAP 1e-3
static bool near_kink(const struct bn_case *c, double v)
{
    if (c->act_mode == CUDNN_ACTIVATION_CLIPPED_RELU && fabs(v - c->act_coef) < KINK_GAP) return true;
    return (c->act_mode == CUDNN_ACTIVATION_RELU || c->act_mode == CUDNN_ACTIVATION_CLIPPED_RELU ||
            c->act_mode == CUDNN_ACTIVATION_ELU) &&
           fabs(v) < KINK_GAP;
}

/* Keeps the pre-activations of the fused ops off the activation's kinks: the backend computes
   pre in its own precision and takes the side of the kink its value falls on, the reference
   the side of the exact value, and where the two differ the element's gradient differs by a
   whole dy (measured: 1 of 214600 half elements, 1e-6 from 0, failed once on the GPU). Such an
   element gets a fresh z (which the statistics do not see) or, without z, a fresh x, until none
   is left (a slot of one element, whose pre is its bias, keeps its x). */
static void keep_off_kinks(struct run *r)
{
    const struct bn_case *c = r->c;
    if (c->ops == 0 || (c->ops == 1 && r->m == 1)) return;
    double *mean = malloc((size_t)r->k * sizeof *mean), *var = malloc((size_t)r->k * sizeof *var);
    double *pre = malloc((size_t)r->n * sizeof *pre), *out = malloc((size_t)r->n * sizeof *out);
    struct tbuf *redrawn = c->ops == 2 ? &r->z : &r->x;
    const double lo = c->ops == 2 ? Z_LO : X_LO, hi = c->ops == 2 ? Z_HI : X_HI;
    for (int round = 0; round < 8; round++) {
        ref_bn_stats(&r->sh, r->x.val, mean, var);
        ref_bn_forward(&r->sh, r->x.val, c->ops == 2 ? r->z.val : NULL, r->scale.val, r->bias.val, mean, var, EPS,
                       r->ref_act, c->act_coef, pre, out);
        int64_t moved = 0;
        for (int64_t i = 0; i < r->n; i++)
            if (near_kink(c, pre[i])) {
                tfill_random(CUDNN_DATA_DOUBLE, &redrawn->val[i], 1, lo, hi);
                moved++;
            }
        if (moved == 0) break;
        tb_upload(redrawn);
    }
    free(mean);
    free(var);
    free(pre);
    free(out);
}

/* One training step with a fresh x and the running-average factor f. */
static void run_training_step(struct run *r, double f)
{
    const struct bn_case *c = r->c;
    struct tscale sa, sb;
    const void *alpha = tscale(&sa, c->dtype, c->alpha), *beta = tscale(&sb, c->dtype, c->beta);
    tb_random(&r->x, X_LO, X_HI);
    keep_off_kinks(r);
    tb_output(&r->y, c->beta);
    tb_output(&r->smean, 0);
    tb_output(&r->sinv, 0);
    int64_t k = r->k;
    double *prior = malloc((size_t)r->n * sizeof *prior), *want = malloc((size_t)r->n * sizeof *want);
    double *rm0 = malloc((size_t)k * sizeof *rm0), *rv0 = malloc((size_t)k * sizeof *rv0);
    memcpy(prior, r->y.val, (size_t)r->n * sizeof *prior);
    memcpy(rm0, r->rmean.val, (size_t)k * sizeof *rm0);
    memcpy(rv0, r->rvar.val, (size_t)k * sizeof *rv0);
    void *rm = c->running ? r->rmean.dev : NULL, *rv = c->running ? r->rvar.dev : NULL;
    void *sm = c->save ? r->smean.dev : NULL, *si = c->save ? r->sinv.dev : NULL;
    size_t ws_bytes;
    void *ws = workspace_for(r, false, &ws_bytes);
    cudnnStatus_t s;
    switch (c->api) {
    case BN_API_PLAIN:
        s = cudnnBatchNormalizationForwardTraining(r->h, bn_mode(c), alpha, beta, r->x.t.desc, r->x.dev,
                                                   r->y.t.desc, r->y.dev, r->scale.t.desc, r->scale.dev,
                                                   r->bias.dev, f, rm, rv, EPS, sm, si);
        break;
    case BN_API_EX:
        s = cudnnBatchNormalizationForwardTrainingEx(
            r->h, bn_mode(c), c->ops, alpha, beta, r->x.t.desc, r->x.dev, r->z.t.desc, r->z.dev, r->y.t.desc,
            r->y.dev, r->scale.t.desc, r->scale.dev, r->bias.dev, f, rm, rv, EPS, sm, si, r->act, ws, ws_bytes,
            r->reserve, r->reserve_bytes);
        break;
    default:
        s = cudnnNormalizationForwardTraining(
            r->h, norm_mode(c), c->ops, norm_algo(c), alpha, beta, r->x.t.desc, r->x.dev, r->scale.t.desc,
            r->scale.dev, r->bias.dev, f, r->mean.t.desc, rm, rv, EPS, sm, si, r->act, r->z.t.desc, r->z.dev,
            r->y.t.desc, r->y.dev, ws, ws_bytes, r->reserve, r->reserve_bytes, 1);
        break;
    }
    if (ws) tbuf_free(ws);
    if (CHECK_OK(s)) {
        double *mean = malloc((size_t)k * sizeof *mean), *var = malloc((size_t)k * sizeof *var);
        ref_bn_stats(&r->sh, r->x.val, mean, var);
        ref_bn_forward(&r->sh, r->x.val, c->ops == 2 ? r->z.val : NULL, r->scale.val, r->bias.val, mean, var,
                       EPS, r->ref_act, c->act_coef, NULL, want);
        for (int64_t i = 0; i < r->n; i++) want[i] = c->alpha * want[i] + (c->beta ? c->beta * prior[i] : 0);
        char what[300];
        snprintf(what, sizeof what, "training y (f=%g), %s", f, r->what);
        check(&r->y.t, r->y.dev, want, r->tol, what);
        if (c->save) {
            double *inv = malloc((size_t)k * sizeof *inv);
            for (int64_t j = 0; j < k; j++) inv[j] = 1 / sqrt(var[j] + EPS);
            snprintf(what, sizeof what, "saved mean, %s", r->what);
            check(&r->smean.t, r->smean.dev, mean, r->tol, what);
            snprintf(what, sizeof what, "saved inverse std, %s", r->what);
            check(&r->sinv.t, r->sinv.dev, inv, r->tol, what);
            free(inv);
        }
        if (c->running) {
            for (int64_t j = 0; j < k; j++) {
                double unbiased = r->m > 1 ? var[j] * (double)r->m / (double)(r->m - 1) : var[j];
                r->rmean.val[j] = (1 - f) * rm0[j] + f * mean[j];
                r->rvar.val[j] = (1 - f) * rv0[j] + f * unbiased;
            }
            snprintf(what, sizeof what, "running mean (f=%g), %s", f, r->what);
            check(&r->rmean.t, r->rmean.dev, r->rmean.val, r->tol, what);
            snprintf(what, sizeof what, "running variance (f=%g), %s", f, r->what);
            check(&r->rvar.t, r->rvar.dev, r->rvar.val, r->tol, what);
        }
        free(mean);
        free(var);
    }
    free(prior);
    free(want);
    free(rm0);
    free(rv0);
}

/* Backward from the last training step's x, saved statistics and reserve space. */
static void run_backward(struct run *r)
{
    const struct bn_case *c = r->c;
    struct tscale s1, s2, s3, s4;
    const void *ad = tscale(&s1, c->dtype, c->alpha), *bd = tscale(&s2, c->dtype, c->beta);
    const void *ap = tscale(&s3, c->dtype, c->alpha_param), *bp = tscale(&s4, c->dtype, c->beta_param);
    int64_t k = r->k, n = r->n;
    tb_random(&r->dy, -1, 1);
    tb_output(&r->dx, c->beta);
    tb_output(&r->dz, c->beta);
    tb_output(&r->dscale, c->beta_param);
    tb_output(&r->dbias, c->beta_param);
    double *pdx = malloc((size_t)n * sizeof *pdx), *pdz = malloc((size_t)n * sizeof *pdz);
    double *pds = malloc((size_t)k * sizeof *pds), *pdb = malloc((size_t)k * sizeof *pdb);
    memcpy(pdx, r->dx.val, (size_t)n * sizeof *pdx);
    memcpy(pdz, r->dz.val, (size_t)n * sizeof *pdz);
    memcpy(pds, r->dscale.val, (size_t)k * sizeof *pds);
    memcpy(pdb, r->dbias.val, (size_t)k * sizeof *pdb);
    const void *sm = c->use_saved ? r->smean.dev : NULL, *si = c->use_saved ? r->sinv.dev : NULL;
    size_t ws_bytes;
    void *ws = workspace_for(r, true, &ws_bytes);
    cudnnStatus_t s;
    switch (c->api) {
    case BN_API_PLAIN:
        s = cudnnBatchNormalizationBackward(r->h, bn_mode(c), ad, bd, ap, bp, r->x.t.desc, r->x.dev, r->dy.t.desc,
                                            r->dy.dev, r->dx.t.desc, r->dx.dev, r->scale.t.desc, r->scale.dev,
                                            r->dscale.dev, r->dbias.dev, EPS, sm, si);
        break;
    case BN_API_EX:
        s = cudnnBatchNormalizationBackwardEx(
            r->h, bn_mode(c), c->ops, ad, bd, ap, bp, r->x.t.desc, r->x.dev, r->y.t.desc, r->y.dev, r->dy.t.desc,
            r->dy.dev, r->dz.t.desc, r->dz.dev, r->dx.t.desc, r->dx.dev, r->scale.t.desc, r->scale.dev,
            r->bias.dev, r->dscale.dev, r->dbias.dev, EPS, sm, si, r->act, ws, ws_bytes, r->reserve,
            r->reserve_bytes);
        break;
    default:
        s = cudnnNormalizationBackward(
            r->h, norm_mode(c), c->ops, norm_algo(c), ad, bd, ap, bp, r->x.t.desc, r->x.dev, r->y.t.desc, r->y.dev,
            r->dy.t.desc, r->dy.dev, r->dz.t.desc, r->dz.dev, r->dx.t.desc, r->dx.dev, r->scale.t.desc,
            r->scale.dev, r->bias.dev, r->dscale.dev, r->dbias.dev, EPS, r->mean.t.desc, sm, si, r->act, ws,
            ws_bytes, r->reserve, r->reserve_bytes, 1);
        break;
    }
    if (ws) tbuf_free(ws);
    if (CHECK_OK(s)) {
        double *mean = malloc((size_t)k * sizeof *mean), *var = malloc((size_t)k * sizeof *var);
        double *pre = malloc((size_t)n * sizeof *pre), *out = malloc((size_t)n * sizeof *out);
        double *dpre = malloc((size_t)n * sizeof *dpre), *dx = malloc((size_t)n * sizeof *dx);
        double *dsc = malloc((size_t)k * sizeof *dsc), *dbi = malloc((size_t)k * sizeof *dbi);
        ref_bn_stats(&r->sh, r->x.val, mean, var);
        ref_bn_forward(&r->sh, r->x.val, c->ops == 2 ? r->z.val : NULL, r->scale.val, r->bias.val, mean, var,
                       EPS, r->ref_act, c->act_coef, pre, out);
        ref_bn_backward(&r->sh, r->x.val, r->dy.val, pre, r->ref_act, c->act_coef, r->scale.val, mean, var,
                        EPS, dpre, dx, dsc, dbi);
        for (int64_t i = 0; i < n; i++) {
            dx[i] = c->alpha * dx[i] + (c->beta ? c->beta * pdx[i] : 0);
            dpre[i] = c->alpha * dpre[i] + (c->beta ? c->beta * pdz[i] : 0);
        }
        for (int64_t j = 0; j < k; j++) {
            dsc[j] = c->alpha_param * dsc[j] + (c->beta_param ? c->beta_param * pds[j] : 0);
            dbi[j] = c->alpha_param * dbi[j] + (c->beta_param ? c->beta_param * pdb[j] : 0);
        }
        char what[300];
        snprintf(what, sizeof what, "backward dx, %s", r->what);
        check(&r->dx.t, r->dx.dev, dx, r->tol, what);
        snprintf(what, sizeof what, "backward dscale, %s", r->what);
        check(&r->dscale.t, r->dscale.dev, dsc, r->sum_tol, what);
        snprintf(what, sizeof what, "backward dbias, %s", r->what);
        check(&r->dbias.t, r->dbias.dev, dbi, r->sum_tol, what);
        if (c->ops == 2) {
            snprintf(what, sizeof what, "backward dz, %s", r->what);
            check(&r->dz.t, r->dz.dev, dpre, r->tol, what);
        }
        free(mean);
        free(var);
        free(pre);
        free(out);
        free(dpre);
        free(dx);
        free(dsc);
        free(dbi);
    }
    free(pdx);
    free(pdz);
    free(pds);
    free(pdb);
}

bool bn_activations_exist(void)
{
    cudnnActivationDescriptor_t probe = NULL;
    cudnnStatus_t s = cudnnCreateActivationDescriptor(&probe);
    cudnnDestroyActivationDescriptor(probe);
    return s == CUDNN_STATUS_SUCCESS;
}

void bn_check_case(const struct bn_case *c)
{
    if (c->ops != 0 && !bn_activations_exist()) return;
    struct run r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.h = test_handle();
    static const char *const apis[] = {"BN", "BN Ex", "Norm"};
    int n = snprintf(r.what, sizeof r.what, "%s %s [", apis[c->api], tdtype_size(c->dtype) == 8 ? "double"
                     : c->dtype == CUDNN_DATA_FLOAT ? "float" : c->dtype == CUDNN_DATA_HALF ? "half" : "bf16");
    for (int d = 0; d < c->rank; d++) n += snprintf(r.what + n, sizeof r.what - (size_t)n, "%s%d", d ? "," : "", c->dims[d]);
    snprintf(r.what + n, sizeof r.what - (size_t)n, "] %s->%s %s%s ops %d act %d a=%g b=%g", tview_layout_name(c->layout),
             tview_layout_name(c->out_layout), c->per_activation ? "per-activation" : "spatial",
             c->persistent ? " persistent" : "", c->ops, c->act_mode, c->alpha, c->beta);

    r.sh.n = c->dims[0];
    r.sh.c = c->dims[1];
    r.sh.s = 1;
    for (int d = 2; d < c->rank; d++) r.sh.s *= c->dims[d];
    r.sh.per_activation = c->per_activation;
    r.k = ref_bn_slots(&r.sh);
    r.m = ref_bn_reduced(&r.sh);
    r.n = r.sh.n * r.sh.c * r.sh.s;
    r.ptype = c->dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    r.ref_act = c->ops ? c->act_mode : -1;
    r.tol = ttolerance(c->dtype);
    /* a sum of m rounded terms errs by about sqrt(m) roundings of their magnitude, which the
       sum itself (they cancel) does not bound: 1e-5 of |dscale| failed now and then on 5365
       float terms (1.3e-5 off) */
    r.sum_tol = fmax(r.tol, ttolerance(r.ptype) * sqrt((double)r.m));

    tb_init(&r.x, c->dtype, c->rank, c->dims, c->layout);
    tb_init(&r.z, c->dtype, c->rank, c->dims, c->layout);
    tb_init(&r.dy, c->dtype, c->rank, c->dims, c->layout);
    tb_init(&r.y, c->dtype, c->rank, c->dims, c->out_layout);
    tb_init(&r.dx, c->dtype, c->rank, c->dims, c->out_layout);
    tb_init(&r.dz, c->dtype, c->rank, c->dims, c->out_layout);
    int pdims[5] = {1, c->dims[1], 1, 1, 1};
    for (int d = 2; d < c->rank; d++) pdims[d] = c->per_activation ? c->dims[d] : 1;
    /* The BN API has one per-slot descriptor; the 8.x API gets two different layouts. */
    int play = c->slot_strided && c->api != BN_API_NORM ? TV_PADDED : TV_NCHW;
    int slay = c->slot_strided ? TV_PADDED : TV_NCHW;
    struct tbuf *params[] = {&r.scale, &r.bias, &r.dscale, &r.dbias};
    struct tbuf *stats[] = {&r.mean, &r.var, &r.rmean, &r.rvar, &r.smean, &r.sinv};
    for (size_t i = 0; i < 4; i++) tb_init(params[i], r.ptype, c->rank, pdims, play);
    for (size_t i = 0; i < 6; i++) tb_init(stats[i], r.ptype, c->rank, pdims, slay);
    tb_random(&r.scale, 0.5, 1.5);
    tb_random(&r.bias, -1, 1);
    tb_random(&r.rmean, -1, 1);
    tb_random(&r.rvar, 0.5, 2);
    if (c->ops == 2) tb_random(&r.z, Z_LO, Z_HI);
    if (c->ops) {
        CHECK_OK(cudnnCreateActivationDescriptor(&r.act));
        CHECK_OK(cudnnSetActivationDescriptor(r.act, c->act_mode, CUDNN_NOT_PROPAGATE_NAN, c->act_coef));
        if (c->act_mode == CUDNN_ACTIVATION_SWISH) CHECK_OK(cudnnSetActivationDescriptorSwishBeta(r.act, c->act_coef));
        if (c->api == BN_API_EX)
            CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(r.h, bn_mode(c), c->ops, r.act,
                                                                          r.x.t.desc, &r.reserve_bytes));
        else
            CHECK_OK(cudnnGetNormalizationTrainingReserveSpaceSize(r.h, norm_mode(c), c->ops, norm_algo(c), r.act,
                                                                   r.x.t.desc, &r.reserve_bytes, 1));
        r.reserve = tbuf_alloc(r.reserve_bytes);
    }

    run_inference(&r);
    for (int step = 0; step < c->steps; step++) run_training_step(&r, 1.0 / (1 + step));
    run_backward(&r);

    if (r.reserve) tbuf_free(r.reserve);
    cudnnDestroyActivationDescriptor(r.act);
    struct tbuf *all[] = {&r.x, &r.z, &r.y, &r.dy, &r.dx, &r.dz, &r.scale, &r.bias, &r.mean, &r.var,
                          &r.rmean, &r.rvar, &r.smean, &r.sinv, &r.dscale, &r.dbias};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tb_free(all[i]);
}
