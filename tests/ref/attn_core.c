/* ref/attn_core.c: the reference attention core (ref/attn_core.h). */
#include "ref/attn_core.h"

#include "ref/dropout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The dropout factor of mask element e: 1 / (1 - p) when kept, 0 when dropped. */
static double mask(const struct ref_attn *a, uint64_t e)
{
    if (a->dropout <= 0) return 1;
    uint32_t counter[4] = {(uint32_t)(e / 4), (uint32_t)(e / 4 >> 32), (uint32_t)a->offset,
                           (uint32_t)(a->offset >> 32)};
    uint32_t key[2] = {(uint32_t)a->seed, (uint32_t)(a->seed >> 32)}, w[4];
    ref_philox4x32_10(counter, key, w);
    return (double)w[e % 4] >= floor(a->dropout * 4294967296.0 + 0.5) ? 1 / (1 - a->dropout) : 0;
}

/* One row's probabilities p[j] (0 outside its keys) and dropout factors f[j]; false when the row
   has no keys or lies past its length. */
static bool row_probs(const struct ref_attn *a, int b, int m, int h, int i, const double *q, const double *k,
                      double *p, double *f)
{
    int kvb = a->kv_shared ? 1 : a->beams, mk = a->kv_shared ? 0 : m;
    int lq = clampi(a->len_q[b * a->beams + m], 0, a->max_q), lk = clampi(a->len_kv[b * kvb + mk], 0, a->max_kv);
    int lo = a->lo_win[i] > 0 ? a->lo_win[i] : 0, hi = a->hi_win[i] < lk ? a->hi_win[i] : lk;
    if (i >= lq || lo >= hi) return false;
    const double *qi = q + ((((int64_t)b * a->beams + m) * a->heads + h) * a->max_q + i) * a->dqk;
    const double *kb = k + (((int64_t)b * kvb + mk) * a->heads + h) * a->max_kv * a->dqk;
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < a->max_kv; j++) {
        p[j] = -INFINITY;
        if (j < lo || j >= hi) continue;
        double s = 0;
        for (int x = 0; x < a->dqk; x++) s += qi[x] * kb[(int64_t)j * a->dqk + x];
        p[j] = a->scaler * s;
        if (p[j] > mx) mx = p[j];
    }
    for (int j = 0; j < a->max_kv; j++) sum += p[j] = j < lo || j >= hi ? 0 : exp(p[j] - mx);
    uint64_t r = (((uint64_t)b * a->beams + m) * a->heads + h) * a->max_q + i;
    for (int j = 0; j < a->max_kv; j++) {
        p[j] /= sum;
        f[j] = mask(a, r * a->max_kv + j);
    }
    return true;
}

void ref_attn_forward(const struct ref_attn *a, const double *q, const double *k, const double *v, double *o)
{
    int kvb = a->kv_shared ? 1 : a->beams;
    double *p = malloc(sizeof(double) * 2 * a->max_kv), *f = p + a->max_kv;
    for (int b = 0; b < a->batch; b++)
        for (int m = 0; m < a->beams; m++)
            for (int h = 0; h < a->heads; h++)
                for (int i = a->q_first; i < a->q_first + a->q_count; i++) {
                    double *oi = o + ((((int64_t)b * a->beams + m) * a->heads + h) * a->max_q + i) * a->dv;
                    const double *vb =
                        v + (((int64_t)b * kvb + (a->kv_shared ? 0 : m)) * a->heads + h) * a->max_kv * a->dv;
                    bool any = row_probs(a, b, m, h, i, q, k, p, f);
                    for (int x = 0; x < a->dv; x++) {
                        double s = 0;
                        for (int j = 0; any && j < a->max_kv; j++) s += p[j] * f[j] * vb[(int64_t)j * a->dv + x];
                        oi[x] = s;
                    }
                }
    free(p);
}

void ref_attn_backward(const struct ref_attn *a, const double *q, const double *k, const double *v,
                       const double *d_o, double *dq, double *dk, double *dv)
{
    int kvb = a->kv_shared ? 1 : a->beams;
    int64_t kv_n = (int64_t)a->batch * kvb * a->heads * a->max_kv;
    double *gk = calloc((size_t)kv_n * (a->dqk + a->dv), sizeof(double)), *gv = gk + kv_n * a->dqk;
    double *p = malloc(sizeof(double) * 4 * a->max_kv), *f = p + a->max_kv, *dp = f + a->max_kv,
           *ds = dp + a->max_kv;
    for (int b = 0; b < a->batch; b++)
        for (int m = 0; m < a->beams; m++)
            for (int h = 0; h < a->heads; h++)
                for (int i = a->q_first; i < a->q_first + a->q_count; i++) {
                    int64_t row = (((int64_t)b * a->beams + m) * a->heads + h) * a->max_q + i;
                    int64_t kv0 = (((int64_t)b * kvb + (a->kv_shared ? 0 : m)) * a->heads + h) * a->max_kv;
                    const double *qi = q + row * a->dqk, *gi = d_o + row * a->dv;
                    double *dqi = dq + row * a->dqk;
                    bool any = row_probs(a, b, m, h, i, q, k, p, f);
                    if (!a->accumulate)
                        for (int x = 0; x < a->dqk; x++) dqi[x] = 0;
                    if (!any) continue;
                    /* dP~ = dO V^T, dP = dP~ * mask; dS = P (dP - sum_j P dP) */
                    double pdp = 0;
                    for (int j = 0; j < a->max_kv; j++) {
                        double s = 0;
                        for (int x = 0; x < a->dv; x++) s += gi[x] * v[(kv0 + j) * a->dv + x];
                        dp[j] = s * f[j];
                        pdp += p[j] * dp[j];
                    }
                    for (int j = 0; j < a->max_kv; j++) {
                        ds[j] = p[j] * (dp[j] - pdp) * a->scaler;
                        for (int x = 0; x < a->dqk; x++) {
                            dqi[x] += ds[j] * k[(kv0 + j) * a->dqk + x];
                            gk[(kv0 + j) * a->dqk + x] += ds[j] * qi[x];
                        }
                        for (int x = 0; x < a->dv; x++) gv[(kv0 + j) * a->dv + x] += p[j] * f[j] * gi[x];
                    }
                }
    for (int b = 0; b < a->batch; b++)
        for (int mk = 0; mk < kvb; mk++) {
            int lk = clampi(a->len_kv[b * kvb + mk], 0, a->max_kv);
            for (int h = 0; h < a->heads; h++)
                for (int j = 0; j < a->max_kv; j++) {
                    int64_t r = ((int64_t)(b * kvb + mk) * a->heads + h) * a->max_kv + j;
                    if (j >= lk && a->accumulate) continue;
                    for (int x = 0; x < a->dqk; x++) dk[r * a->dqk + x] = (a->accumulate ? dk[r * a->dqk + x] : 0) + gk[r * a->dqk + x];
                    for (int x = 0; x < a->dv; x++) dv[r * a->dv + x] = (a->accumulate ? dv[r * a->dv + x] : 0) + gv[r * a->dv + x];
                }
        }
    free(p);
    free(gk);
}
