/* ref/attention.c: see ref/attention.h. */
#include "ref/attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x as an operand of a product: rounded to TF32 (10 mantissa bits) when a->tf32 says so. */
static double op(const struct ref_mha *a, double x)
{
    if (a->tf32 == REF_TF32_OFF || x == 0 || !isfinite(x)) return x;
    int e;
    const double m = ldexp(frexp(x, &e), 11); /* 11 significant bits: the implicit one and 10 */
    return ldexp(a->tf32 == REF_TF32_NEAREST ? nearbyint(m) : trunc(m), e - 11);
}

int ref_mha_head_qk(const struct ref_mha *a)
{
    return a->q_proj > 0 ? a->q_proj : a->q_size;
}

int ref_mha_head_v(const struct ref_mha *a)
{
    return a->v_proj > 0 ? a->v_proj : a->v_size;
}

int ref_mha_o_size(const struct ref_mha *a)
{
    return a->o_proj > 0 ? a->o_proj : a->heads * ref_mha_head_v(a);
}

int ref_mha_kv_beams(const struct ref_mha *a)
{
    return a->one_to_one ? a->M : 1;
}

/* xb[tok][h][p] for n tokens of x[tok][e]: W_h x + b_h, or x itself for every head. */
static double *project(const struct ref_mha *a, int n, int E, int P, const double *x, const double *w,
                       const double *bias)
{
    int H = a->heads, width = P > 0 ? P : E;
    double *xb = calloc((size_t)n * H * width, sizeof(double));
    for (int t = 0; t < n; t++)
        for (int h = 0; h < H; h++)
            for (int p = 0; p < width; p++) {
                double s;
                if (P > 0) {
                    s = a->biases ? bias[h * P + p] : 0;
                    for (int e = 0; e < E; e++)
                        s += op(a, w[((size_t)h * P + p) * E + e]) * op(a, x[(size_t)t * E + e]);
                } else {
                    s = x[(size_t)t * E + p];
                }
                xb[((size_t)t * H + h) * width + p] = s;
            }
    return xb;
}

/* The projected buffers and the probabilities of one pass. */
struct pass {
    int qk, hv, o, mk;
    double *qb, *kb, *vb; /* [tok][h][x] */
    double *hb;           /* [qtok][h][hv] */
    double *p;            /* [qtok][h][Tk]: 0 outside the window */
};

static bool window(const struct ref_mha *a, int b, int m, int i, int *lo, int *hi)
{
    int mk = a->one_to_one ? m : 0;
    int lkv = a->len_kv[b * ref_mha_kv_beams(a) + mk];
    if (i >= a->len_q[b * a->M + m]) return false;
    *lo = a->lo[i] > 0 ? a->lo[i] : 0;
    *hi = a->hi[i] < lkv ? a->hi[i] : lkv;
    return true;
}

static void forward_pass(const struct ref_mha *a, const double *q, const double *k, const double *v, struct pass *s)
{
    int H = a->heads;
    s->qk = ref_mha_head_qk(a), s->hv = ref_mha_head_v(a), s->o = ref_mha_o_size(a), s->mk = ref_mha_kv_beams(a);
    int nq = a->B * a->M * a->Tq, nk = a->B * s->mk * a->Tk;
    s->qb = project(a, nq, a->q_size, a->q_proj, q, a->wq, a->bq);
    s->kb = project(a, nk, a->k_size, a->k_proj, k, a->wk, a->bk);
    s->vb = project(a, nk, a->v_size, a->v_proj, v, a->wv, a->bv);
    s->hb = calloc((size_t)nq * H * s->hv, sizeof(double));
    s->p = calloc((size_t)nq * H * a->Tk, sizeof(double));
    for (int b = 0; b < a->B; b++)
        for (int m = 0; m < a->M; m++)
            for (int i = 0; i < a->Tq; i++) {
                int lo, hi, qt = (b * a->M + m) * a->Tq + i, kt0 = (b * s->mk + (a->one_to_one ? m : 0)) * a->Tk;
                if (!window(a, b, m, i, &lo, &hi) || lo >= hi) continue;
                for (int h = 0; h < H; h++) {
                    double *p = s->p + ((size_t)qt * H + h) * a->Tk, mx = -INFINITY, sum = 0;
                    const double *qv = s->qb + ((size_t)qt * H + h) * s->qk;
                    for (int j = lo; j < hi; j++) {
                        const double *kv = s->kb + ((size_t)(kt0 + j) * H + h) * s->qk;
                        double dot = 0;
                        for (int x = 0; x < s->qk; x++) dot += op(a, qv[x]) * op(a, kv[x]);
                        p[j] = a->scaler * dot;
                        mx = fmax(mx, p[j]);
                    }
                    for (int j = lo; j < hi; j++) sum += (p[j] = exp(p[j] - mx));
                    double *hb = s->hb + ((size_t)qt * H + h) * s->hv;
                    for (int j = lo; j < hi; j++) {
                        p[j] /= sum;
                        const double *vv = s->vb + ((size_t)(kt0 + j) * H + h) * s->hv;
                        for (int x = 0; x < s->hv; x++) hb[x] += op(a, p[j]) * op(a, vv[x]);
                    }
                }
            }
}

static void pass_free(struct pass *s)
{
    free(s->qb), free(s->kb), free(s->vb), free(s->hb), free(s->p);
}

void ref_mha_forward(const struct ref_mha *a, const double *q, const double *k, const double *v, const double *res,
                      double *out)
{
    struct pass s;
    forward_pass(a, q, k, v, &s);
    int H = a->heads, nq = a->B * a->M * a->Tq;
    for (int t = 0; t < nq; t++) {
        bool valid = t % a->Tq < a->len_q[t / a->Tq];
        const double *hb = s.hb + (size_t)t * H * s.hv;
        for (int o = 0; o < s.o; o++) {
            double y = 0;
            if (a->o_proj > 0) {
                y = a->biases ? a->bo[o] : 0;
                for (int h = 0; h < H; h++)
                    for (int x = 0; x < s.hv; x++)
                        y += op(a, a->wo[((size_t)h * a->o_proj + o) * s.hv + x]) * op(a, hb[h * s.hv + x]);
            } else {
                y = hb[o];
            }
            if (res != NULL) y += res[(size_t)t * s.o + o];
            out[(size_t)t * s.o + o] = valid ? y : 0;
        }
    }
    pass_free(&s);
}

/* dx[tok][e] (+)= sum_h W_h^T dxb[tok][h]; dW_h += dxb x^T; db_h += dxb (or, without a
   projection, dx = sum_h dxb). */
static void unproject(const struct ref_mha *a, int n, int E, int P, const double *x, const double *w,
                      const double *dxb, double *dx, double *dw, double *db)
{
    int H = a->heads, width = P > 0 ? P : E;
    memset(dx, 0, sizeof(double) * (size_t)n * E);
    if (P > 0) {
        memset(dw, 0, sizeof(double) * (size_t)H * P * E);
        if (a->biases) memset(db, 0, sizeof(double) * (size_t)H * P);
    }
    for (int t = 0; t < n; t++)
        for (int h = 0; h < H; h++)
            for (int p = 0; p < width; p++) {
                double g = dxb[((size_t)t * H + h) * width + p];
                if (P == 0) {
                    dx[(size_t)t * E + p] += g;
                    continue;
                }
                if (a->biases) db[h * P + p] += g;
                for (int e = 0; e < E; e++) {
                    dx[(size_t)t * E + e] += op(a, w[((size_t)h * P + p) * E + e]) * op(a, g);
                    dw[((size_t)h * P + p) * E + e] += op(a, g) * op(a, x[(size_t)t * E + e]);
                }
            }
}

void ref_mha_backward(const struct ref_mha *a, const double *q, const double *k, const double *v,
                       const double *dout, double *dq, double *dk, double *dv, double *dwq, double *dwk, double *dwv,
                       double *dwo, double *dbq, double *dbk, double *dbv, double *dbo)
{
    struct pass s;
    forward_pass(a, q, k, v, &s);
    int H = a->heads, nq = a->B * a->M * a->Tq, nk = a->B * s.mk * a->Tk;
    double *dhb = calloc((size_t)nq * H * s.hv, sizeof(double));
    double *dqb = calloc((size_t)nq * H * s.qk, sizeof(double));
    double *dkb = calloc((size_t)nk * H * s.qk, sizeof(double));
    double *dvb = calloc((size_t)nk * H * s.hv, sizeof(double));
    if (a->o_proj > 0) {
        memset(dwo, 0, sizeof(double) * (size_t)H * a->o_proj * s.hv);
        if (a->biases) memset(dbo, 0, sizeof(double) * (size_t)a->o_proj);
    }
    for (int t = 0; t < nq; t++) {
        if (t % a->Tq >= a->len_q[t / a->Tq]) continue;
        const double *g = dout + (size_t)t * s.o, *hb = s.hb + (size_t)t * H * s.hv;
        double *d = dhb + (size_t)t * H * s.hv;
        if (a->o_proj == 0) {
            for (int x = 0; x < H * s.hv; x++) d[x] = g[x];
            continue;
        }
        for (int o = 0; o < a->o_proj; o++) {
            if (a->biases) dbo[o] += g[o];
            for (int h = 0; h < H; h++)
                for (int x = 0; x < s.hv; x++) {
                    size_t wi = ((size_t)h * a->o_proj + o) * s.hv + x;
                    d[h * s.hv + x] += op(a, a->wo[wi]) * op(a, g[o]);
                    dwo[wi] += op(a, g[o]) * op(a, hb[h * s.hv + x]);
                }
        }
    }
    double *dp = malloc(sizeof(double) * (size_t)a->Tk);
    for (int b = 0; b < a->B; b++)
        for (int m = 0; m < a->M; m++)
            for (int i = 0; i < a->Tq; i++) {
                int lo, hi, qt = (b * a->M + m) * a->Tq + i, kt0 = (b * s.mk + (a->one_to_one ? m : 0)) * a->Tk;
                if (!window(a, b, m, i, &lo, &hi) || lo >= hi) continue;
                for (int h = 0; h < H; h++) {
                    const double *p = s.p + ((size_t)qt * H + h) * a->Tk, *d = dhb + ((size_t)qt * H + h) * s.hv;
                    const double *qv = s.qb + ((size_t)qt * H + h) * s.qk;
                    double dot = 0;
                    for (int j = lo; j < hi; j++) {
                        const double *vv = s.vb + ((size_t)(kt0 + j) * H + h) * s.hv;
                        double *dvv = dvb + ((size_t)(kt0 + j) * H + h) * s.hv;
                        dp[j] = 0;
                        for (int x = 0; x < s.hv; x++) {
                            dp[j] += op(a, d[x]) * op(a, vv[x]);
                            dvv[x] += op(a, p[j]) * op(a, d[x]);
                        }
                        dot += p[j] * dp[j];
                    }
                    double *dqv = dqb + ((size_t)qt * H + h) * s.qk;
                    for (int j = lo; j < hi; j++) {
                        double ds = a->scaler * p[j] * (dp[j] - dot);
                        const double *kv = s.kb + ((size_t)(kt0 + j) * H + h) * s.qk;
                        double *dkv = dkb + ((size_t)(kt0 + j) * H + h) * s.qk;
                        for (int x = 0; x < s.qk; x++) {
                            dqv[x] += op(a, ds) * op(a, kv[x]);
                            dkv[x] += op(a, ds) * op(a, qv[x]);
                        }
                    }
                }
            }
    unproject(a, nq, a->q_size, a->q_proj, q, a->wq, dqb, dq, dwq, dbq);
    unproject(a, nk, a->k_size, a->k_proj, k, a->wk, dkb, dk, dwk, dbk);
    unproject(a, nk, a->v_size, a->v_proj, v, a->wv, dvb, dv, dwv, dbv);
    free(dp), free(dhb), free(dqb), free(dkb), free(dvb);
    pass_free(&s);
}
