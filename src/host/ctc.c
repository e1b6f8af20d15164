/* ctc.c (host): the CTC loss, samples spread over the worker threads, each sample's
   forward-backward recursion in log space (problem/ctc.h has the math) computed in double.

   A sample's steps run one after the other: the row normalizers first (SOFTMAX), then alpha step
   by step into the workspace (stored in float, the recursion carried in double rows), then beta
   backwards in double rows (the workspace's beta region is left unused), each step's gradient
   row written as soon as its beta is known:
   y for every symbol, less the occupancy of each state, summed in state order. Every sample has
   its own part of the workspace, so the result does not depend on the threads. */
#include "problem/ctc.h"

#include "host/parallel.h"

#include <math.h>

#define STATES (2 * OCD_CTC_MAX_LABEL + 1)

struct job {
    const struct ocd_ctc_problem *p;
    struct ocd_ctc_layout l;
    float *ws;
    int *offset; /* where each sample's labels start (ocd_ctc_offsets) */
};

/* log(e^a + e^b), NaN-propagating; -inf when both are. */
static double lse2(double a, double b)
{
    double m = a > b ? a : b;
    if (m == -INFINITY || isnan(a) || isnan(b)) return a + b;
    return m + log(exp(a - m) + exp(b - m));
}

static double prob_at(const struct ocd_ctc_problem *p, int t, int n, int k)
{
    return p->probs[t * p->probs_stride[0] + n * p->probs_stride[1] + k * p->probs_stride[2]];
}

static float *grad_at(const struct ocd_ctc_problem *p, int t, int n, int k)
{
    return &p->grads[t * p->grads_stride[0] + n * p->grads_stride[1] + k * p->grads_stride[2]];
}

/* log y_t(k) of sample n, the row normalizer lse given. */
static double log_y(const struct ocd_ctc_problem *p, int t, int n, int k, double lse)
{
    double v = prob_at(p, t, n, k);
    return p->softmax ? v - lse : log(v);
}

static void fill_rows(const struct ocd_ctc_problem *p, int n, int t0, int t1, float v)
{
    for (int t = t0; t < t1; t++)
        for (int k = 0; k < p->A; k++) *grad_at(p, t, n, k) = v;
}

/* The symbol of state s, and whether a path may reach s from s - 2. */
static int symbol(const int *lab, int s)
{
    return s % 2 ? lab[s / 2] : 0;
}

static bool skip_into(const int *lab, int s)
{
    return s % 2 && s >= 3 && lab[s / 2] != lab[s / 2 - 1];
}

/* log P of sample n, or NaN when the sample is invalid; fills alpha (and lse) in the workspace. */
static double forward(const struct job *j, int n, const int *lab, int tn, int S)
{
    const struct ocd_ctc_problem *p = j->p;
    float *lse = j->ws + j->l.lse, *alpha = j->ws + j->l.alpha + (int64_t)n * p->T * j->l.S;
    for (int t = 0; t < tn; t++) {
        double m = -INFINITY, sum = 0;
        if (p->softmax) {
            for (int k = 0; k < p->A; k++) m = fmax(m, prob_at(p, t, n, k));
            for (int k = 0; k < p->A; k++) sum += exp(prob_at(p, t, n, k) - m);
        }
        lse[(int64_t)t * p->N + n] = p->softmax ? (float)(m + log(sum)) : 0.0f;
    }
    if (tn == 0) return 0; /* the empty label, surely (lengths checked) */
    double row[2][STATES];
    for (int s = 0; s < S; s++) {
        double lse0 = lse[n];
        row[0][s] = s < 2 ? log_y(p, 0, n, symbol(lab, s), lse0) : -INFINITY;
        alpha[s] = (float)row[0][s];
    }
    for (int t = 1; t < tn; t++) {
        const double *prev = row[(t - 1) & 1];
        double *cur = row[t & 1], lset = lse[(int64_t)t * p->N + n];
        for (int s = 0; s < S; s++) {
            double v = prev[s];
            if (s >= 1) v = lse2(v, prev[s - 1]);
            if (skip_into(lab, s)) v = lse2(v, prev[s - 2]);
            cur[s] = v + log_y(p, t, n, symbol(lab, s), lset);
            alpha[(int64_t)t * j->l.S + s] = (float)cur[s];
        }
    }
    const double *last = row[(tn - 1) & 1];
    return S > 1 ? lse2(last[S - 1], last[S - 2]) : last[0];
}

/* beta backwards from step tn - 1, writing each step's gradient row. */
static void backward(const struct job *j, int n, const int *lab, int tn, int S, double logp)
{
    const struct ocd_ctc_problem *p = j->p;
    const float *lse = j->ws + j->l.lse, *alpha = j->ws + j->l.alpha + (int64_t)n * p->T * j->l.S;
    double row[2][STATES]; /* beta_t(s) + log y_t(l'(s)): what step t - 1 sums */
    double beta[STATES];
    for (int t = tn - 1; t >= 0; t--) {
        double *cur = row[t & 1];
        const double *next = row[(t + 1) & 1];
        double lset = lse[(int64_t)t * p->N + n];
        for (int s = 0; s < S; s++) {
            double b;
            if (t == tn - 1) {
                b = s >= S - 2 ? 0 : -INFINITY;
            } else {
                b = next[s];
                if (s + 1 < S) b = lse2(b, next[s + 1]);
                if (s + 2 < S && skip_into(lab, s + 2)) b = lse2(b, next[s + 2]);
            }
            beta[s] = b;
            cur[s] = b + log_y(p, t, n, symbol(lab, s), lset);
        }
        for (int k = 0; k < p->A; k++) {
            double v = prob_at(p, t, n, k);
            *grad_at(p, t, n, k) = (float)(p->softmax ? exp(v - lset) : v);
        }
        const float *a = alpha + (int64_t)t * j->l.S;
        for (int s = 0; s < S; s++) {
            float *g = grad_at(p, t, n, symbol(lab, s));
            *g = (float)(*g - exp(a[s] + beta[s] - logp));
        }
    }
}

static void samples(void *ctx, int64_t begin, int64_t end)
{
    const struct job *j = ctx;
    const struct ocd_ctc_problem *p = j->p;
    for (int64_t i = begin; i < end; i++) {
        int n = (int)i, tn = p->input_lengths[n], ln = p->label_lengths[n];
        bool valid = ocd_ctc_lengths_valid(tn, ln, p->T, p->max_label);
        const int *lab = valid ? p->labels + j->offset[n] : NULL;
        for (int q = 0; valid && q < ln; q++) valid = ocd_ctc_label_valid(lab[q], p->A);
        double logp = valid ? forward(j, n, lab, tn, 2 * ln + 1) : NAN;
        p->costs[n] = (float)-logp;
        if (!valid) {
            fill_rows(p, n, 0, p->T, p->propagate_nan ? NAN : 0.0f);
            continue;
        }
        fill_rows(p, n, tn, p->T, 0.0f);
        if (isfinite(logp)) backward(j, n, lab, tn, 2 * ln + 1, logp);
        else fill_rows(p, n, 0, tn, p->propagate_nan ? NAN : 0.0f);
    }
}

cudnnStatus_t ocd_ctc_run_host(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_ctc_problem *p = problem;
    struct job j = {p, {0}, ws, NULL};
    ocd_ctc_layout_of(p, &j.l);
    j.offset = (int *)ws + j.l.offset;
    ocd_ctc_offsets(p->label_lengths, p->N, j.offset);
    ocd_parallel_for(p->N, 1, samples, &j);
    return CUDNN_STATUS_SUCCESS;
}
