/* attn_core.c (host): the attention core (problem/attn_core.h has the math), forward and backward,
   computed in double whatever the data type.

   Forward: the work is split into tasks of (batch item, beam, head) and a block of query rows;
   a task converts the keys and values of its sequence to double once, then each row's scores,
   softmax (exact: scores kept, max and sum in double), dropout and weighted sum. Backward: one
   task per (batch item, K/V beam, head), which owns its dk and dv rows (under ALL_TO_ONE it runs
   every query beam of the item) and the dq rows of its query beams, so no two tasks write the
   same element and the result does not depend on the threads. P is recomputed from the saved
   log-sum-exp of each row. */
#include "problem/attn_core.h"

#include "host/parallel.h"
#include "host/typed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROW_BLOCK 32

struct job {
    const struct ocd_attn_core_problem *p;
    int kv_beams;
    void *lse; /* the reserve's row statistics: float, or double for double data; NULL */
    uint64_t seed, offset, threshold;
    double scale; /* kept probabilities are multiplied by it */
};

static int64_t row_index(const struct ocd_attn_core_problem *p, int b, int m, int h, int i)
{
    return (((int64_t)b * p->beams + m) * p->heads + h) * p->max_q + i;
}

static double lse_load(const struct job *j, int64_t r)
{
    return j->p->dtype == CUDNN_DATA_DOUBLE ? ((const double *)j->lse)[r] : ((const float *)j->lse)[r];
}

static void lse_store(const struct job *j, int64_t r, double v)
{
    if (j->p->dtype == CUDNN_DATA_DOUBLE) ((double *)j->lse)[r] = v;
    else ((float *)j->lse)[r] = (float)v;
}

/* Row t of an operand's (b, m, h) sequence, d elements, into dst as doubles. */
static void load_row(const struct ocd_attn_core_problem *p, const struct ocd_attn_operand *x, int b, int m, int h,
                     int t, int d, double *dst)
{
    int64_t at = ocd_attn_core_row(x, b, m, h, t);
    for (int e = 0; e < d; e++) dst[e] = ocd_host_load(p->dtype, x->data, at + e * x->stride[OCD_ATTN_ELEM]);
}

/* Rows [0, n) of it into dst (n x d doubles). */
static void load_rows(const struct ocd_attn_core_problem *p, const struct ocd_attn_operand *x, int b, int m, int h,
                      int n, int d, double *dst)
{
    for (int t = 0; t < n; t++) load_row(p, x, b, m, h, t, d, dst + (int64_t)t * d);
}

/* Row t of an operand's (b, m, h) sequence: set to v (add: plus v; v NULL: zeros). */
static void store_row(const struct ocd_attn_core_problem *p, const struct ocd_attn_operand *x, int b, int m, int h,
                      int t, int d, const double *v, bool add)
{
    int64_t at = ocd_attn_core_row(x, b, m, h, t);
    for (int e = 0; e < d; e++) {
        int64_t i = at + e * x->stride[OCD_ATTN_ELEM];
        double s = v ? v[e] : 0;
        ocd_host_store(p->dtype, x->data, i, add ? ocd_host_load(p->dtype, x->data, i) + s : s);
    }
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0;
    for (int e = 0; e < n; e++) s += a[e] * b[e];
    return s;
}

/* The dropout factor of mask element e: the scale when kept, 0 when dropped, 1 without dropout. */
static double drop(const struct job *j, uint64_t e)
{
    if (j->p->dropout == 0) return 1;
    return ocd_attn_core_keep(j->seed, j->offset, j->threshold, e) ? j->scale : 0;
}

/* ---- forward --------------------------------------------------------------------------------- */

/* A forward task's scratch: the keys and values of its (batch, beam, head), one row's scores, a
   query and an output row. */
static size_t fwd_scratch_bytes(const struct ocd_attn_core_problem *p)
{
    return sizeof(double) * ((size_t)p->max_kv * (p->head_qk + p->head_v + 1) + p->head_qk + p->head_v);
}

static void fwd_tasks(void *ctx, int64_t t0, int64_t t1, void *scratch)
{
    struct job *j = ctx;
    const struct ocd_attn_core_problem *p = j->p;
    int dk = p->head_qk, dv = p->head_v;
    int64_t blocks = (p->q_count + ROW_BLOCK - 1) / ROW_BLOCK;
    double *k = scratch;
    double *v = k + (size_t)p->max_kv * dk, *s = v + (size_t)p->max_kv * dv, *q = s + p->max_kv, *o = q + dk;
    for (int64_t t = t0; t < t1; t++) {
        int64_t unit = t / blocks;
        int h = (int)(unit % p->heads), m = (int)(unit / p->heads % p->beams), b = (int)(unit / p->heads / p->beams);
        int mk = p->kv_shared ? 0 : m;
        int len_q = ocd_attn_core_clamp(p->len_q[b * p->beams + m], p->max_q);
        int len_kv = ocd_attn_core_clamp(p->len_kv[b * j->kv_beams + mk], p->max_kv);
        int i0 = p->q_first + (int)(t % blocks) * ROW_BLOCK, i1 = OCD_MIN(i0 + ROW_BLOCK, p->q_first + p->q_count);
        load_rows(p, &p->k, b, mk, h, len_kv, dk, k);
        load_rows(p, &p->v, b, mk, h, len_kv, dv, v);
        for (int i = i0; i < i1; i++) {
            int lo = 0, hi = 0;
            if (i < len_q) ocd_attn_core_keys(p->lo_win[i], p->hi_win[i], len_kv, &lo, &hi);
            int64_t r = row_index(p, b, m, h, i);
            if (lo >= hi) {
                store_row(p, &p->o, b, m, h, i, dv, NULL, false);
                if (j->lse) lse_store(j, r, -INFINITY);
                continue;
            }
            load_row(p, &p->q, b, m, h, i, dk, q);
            double mx = -INFINITY, sum = 0;
            for (int c = lo; c < hi; c++) {
                s[c] = p->sm_scaler * dot(q, k + (int64_t)c * dk, dk);
                mx = fmax(mx, s[c]);
            }
            for (int c = lo; c < hi; c++) sum += s[c] = exp(s[c] - mx);
            memset(o, 0, sizeof(double) * dv);
            for (int c = lo; c < hi; c++) {
                double w = s[c] / sum * drop(j, (uint64_t)r * p->max_kv + c);
                if (w != 0)
                    for (int e = 0; e < dv; e++) o[e] += w * v[(int64_t)c * dv + e];
            }
            store_row(p, &p->o, b, m, h, i, dv, o, false);
            if (j->lse) lse_store(j, r, mx + log(sum));
        }
    }
}

/* The generator words: read from rng, saved in the reserve, rng advanced (forward); read from
   the reserve (backward). */
static void job_init(struct job *j, const struct ocd_attn_core_call *c, bool forward)
{
    const struct ocd_attn_core_problem *p = c->p;
    memset(j, 0, sizeof *j);
    j->p = p;
    j->kv_beams = p->kv_shared ? 1 : p->beams;
    j->lse = c->reserve ? (char *)c->reserve + 16 : NULL;
    j->threshold = ocd_attn_core_threshold(p->dropout);
    j->scale = p->dropout < 1 ? 1 / (1 - p->dropout) : 0;
    if (p->dtype != CUDNN_DATA_DOUBLE) j->scale = (float)j->scale;
    uint64_t *saved = c->reserve;
    if (forward && p->dropout > 0) {
        j->seed = p->rng[0];
        j->offset = p->rng[1];
        if (p->rng_advance) p->rng[1] = j->offset + 1;
    } else if (!forward && saved) {
        j->seed = saved[0];
        j->offset = saved[1];
    }
    if (forward && saved) saved[0] = j->seed, saved[1] = j->offset;
}

cudnnStatus_t ocd_host_attn_fwd(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes)
{
    (void)handle, (void)ws, (void)ws_bytes;
    struct job j;
    job_init(&j, call, true);
    const struct ocd_attn_core_problem *p = j.p;
    int64_t tasks = (int64_t)p->batch * p->beams * p->heads * ((p->q_count + ROW_BLOCK - 1) / ROW_BLOCK);
    if (!ocd_parallel_for_scratch(tasks, 1, fwd_scratch_bytes(p), fwd_tasks, &j))
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "attention core: no host memory for the tasks");
    return CUDNN_STATUS_SUCCESS;
}

/* ---- backward -------------------------------------------------------------------------------- */

/* A backward task's scratch: keys, values and their gradients, then a query, its gradient, an
   output gradient row and an output row. */
static size_t bwd_scratch_bytes(const struct ocd_attn_core_problem *p)
{
    return sizeof(double) * (2 * (size_t)p->max_kv * (p->head_qk + p->head_v) + 2 * p->head_qk + 2 * p->head_v);
}

static void bwd_tasks(void *ctx, int64_t t0, int64_t t1, void *scratch)
{
    struct job *j = ctx;
    const struct ocd_attn_core_problem *p = j->p;
    int dk = p->head_qk, dv = p->head_v;
    size_t kv = (size_t)p->max_kv * (dk + dv);
    double *k = scratch;
    double *v = k + (size_t)p->max_kv * dk, *gk = v + (size_t)p->max_kv * dv, *gv = gk + (size_t)p->max_kv * dk;
    double *q = gv + (size_t)p->max_kv * dv, *gq = q + dk, *go = gq + dk, *o = go + dv;
    for (int64_t t = t0; t < t1; t++) {
        int h = (int)(t % p->heads), mk = (int)(t / p->heads % j->kv_beams), b = (int)(t / p->heads / j->kv_beams);
        int len_kv = ocd_attn_core_clamp(p->len_kv[b * j->kv_beams + mk], p->max_kv);
        load_rows(p, &p->k, b, mk, h, len_kv, dk, k);
        load_rows(p, &p->v, b, mk, h, len_kv, dv, v);
        memset(gk, 0, sizeof(double) * kv);
        int m0 = p->kv_shared ? 0 : mk, m1 = p->kv_shared ? p->beams : mk + 1;
        for (int m = m0; m < m1; m++) {
            int len_q = ocd_attn_core_clamp(p->len_q[b * p->beams + m], p->max_q);
            for (int i = p->q_first; i < p->q_first + p->q_count; i++) {
                int lo = 0, hi = 0;
                int64_t r = row_index(p, b, m, h, i);
                double lse = i < len_q ? lse_load(j, r) : -INFINITY;
                if (i < len_q) ocd_attn_core_keys(p->lo_win[i], p->hi_win[i], len_kv, &lo, &hi);
                if (lo >= hi || lse == -INFINITY) {
                    if (!p->accumulate) store_row(p, &p->dq, b, m, h, i, dk, NULL, false);
                    continue;
                }
                load_row(p, &p->q, b, m, h, i, dk, q);
                load_row(p, &p->d_o, b, m, h, i, dv, go);
                load_row(p, &p->o, b, m, h, i, dv, o);
                double d = dot(go, o, dv);
                memset(gq, 0, sizeof(double) * dk);
                for (int c = lo; c < hi; c++) {
                    const double *kc = k + (int64_t)c * dk, *vc = v + (int64_t)c * dv;
                    double pr = exp(p->sm_scaler * dot(q, kc, dk) - lse);
                    double f = drop(j, (uint64_t)r * p->max_kv + c);
                    double ds = pr * (f * dot(go, vc, dv) - d) * p->sm_scaler;
                    for (int e = 0; e < dk; e++) gq[e] += ds * kc[e], gk[(int64_t)c * dk + e] += ds * q[e];
                    if (f != 0)
                        for (int e = 0; e < dv; e++) gv[(int64_t)c * dv + e] += pr * f * go[e];
                }
                store_row(p, &p->dq, b, m, h, i, dk, gq, p->accumulate);
            }
        }
        for (int c = 0; c < p->max_kv; c++) {
            if (c >= len_kv && p->accumulate) break;
            store_row(p, &p->dk, b, mk, h, c, dk, c < len_kv ? gk + (int64_t)c * dk : NULL, p->accumulate);
            store_row(p, &p->dv, b, mk, h, c, dv, c < len_kv ? gv + (int64_t)c * dv : NULL, p->accumulate);
        }
    }
}

cudnnStatus_t ocd_host_attn_bwd(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes)
{
    (void)handle, (void)ws, (void)ws_bytes;
    struct job j;
    job_init(&j, call, false);
    const struct ocd_attn_core_problem *p = j.p;
    if (!ocd_parallel_for_scratch((int64_t)p->batch * j.kv_beams * p->heads, 1, bwd_scratch_bytes(p), bwd_tasks, &j))
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "attention core: no host memory for the tasks");
    return CUDNN_STATUS_SUCCESS;
}
