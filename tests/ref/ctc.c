/* ref/ctc.c: see ref/ctc.h. */
#include "ref/ctc.h"

#include <math.h>
#include <stdlib.h>

/* Divides v[0..n) by its sum and returns the sum. */
static double rescale(double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++) sum += v[i];
    if (sum > 0)
        for (int i = 0; i < n; i++) v[i] /= sum;
    return sum;
}

static void one_sample(int T, int N, int A, int n, const double *y, const int *lab, int L, int Tn, double *cost,
                       double *grads)
{
    int S = 2 * L + 1;
    int *ext = malloc(sizeof(int) * (size_t)S);
    for (int s = 0; s < S; s++) ext[s] = s % 2 == 0 ? 0 : lab[(s - 1) / 2];
#define Y(t, k) y[((size_t)(t) * N + n) * A + (k)]
#define G(t, k) grads[((size_t)(t) * N + n) * A + (k)]
    for (int t = 0; t < T; t++)
        for (int k = 0; k < A; k++) G(t, k) = 0;
    if (Tn == 0) {
        *cost = L == 0 ? 0 : INFINITY;
        free(ext);
        return;
    }
    double *a = calloc((size_t)Tn * S, sizeof(double)), *b = calloc((size_t)Tn * S, sizeof(double));
    double logp = 0;
    bool feasible = true;
    /* alpha, y_t included, each step rescaled to sum 1 */
    a[0] = Y(0, ext[0]);
    if (S > 1) a[1] = Y(0, ext[1]);
    for (int t = 0; t < Tn && feasible; t++) {
        double *row = a + (size_t)t * S;
        if (t > 0) {
            const double *prev = row - S;
            for (int s = 0; s < S; s++) {
                double sum = prev[s];
                if (s > 0) sum += prev[s - 1];
                if (s > 1 && ext[s] != 0 && ext[s] != ext[s - 2]) sum += prev[s - 2];
                row[s] = sum * Y(t, ext[s]);
            }
        }
        double c = rescale(row, S);
        if (c <= 0) feasible = false;
        else logp += log(c);
    }
    const double *last = a + (size_t)(Tn - 1) * S;
    double tail = last[S - 1] + (S > 1 ? last[S - 2] : 0);
    if (!feasible || tail <= 0) {
        *cost = INFINITY;
        for (int t = 0; t < Tn; t++)
            for (int k = 0; k < A; k++) G(t, k) = NAN;
        free(a), free(b), free(ext);
        return;
    }
    *cost = -(logp + log(tail));
    /* beta, y_t included, rescaled likewise */
    double *row = b + (size_t)(Tn - 1) * S;
    row[S - 1] = Y(Tn - 1, ext[S - 1]);
    if (S > 1) row[S - 2] = Y(Tn - 1, ext[S - 2]);
    rescale(row, S);
    for (int t = Tn - 2; t >= 0; t--) {
        row = b + (size_t)t * S;
        const double *next = row + S;
        for (int s = 0; s < S; s++) {
            double sum = next[s];
            if (s + 1 < S) sum += next[s + 1];
            if (s + 2 < S && ext[s + 2] != 0 && ext[s + 2] != ext[s]) sum += next[s + 2];
            row[s] = sum * Y(t, ext[s]);
        }
        rescale(row, S);
    }
    /* occupancy of state s at t: alpha beta / y, normalized over the states (the scales cancel) */
    for (int t = 0; t < Tn; t++) {
        const double *ar = a + (size_t)t * S, *br = b + (size_t)t * S;
        double z = 0;
        for (int s = 0; s < S; s++) z += ar[s] * br[s] / Y(t, ext[s]);
        for (int k = 0; k < A; k++) G(t, k) = Y(t, k);
        for (int s = 0; s < S; s++) G(t, ext[s]) -= ar[s] * br[s] / Y(t, ext[s]) / z;
    }
#undef Y
#undef G
    free(a), free(b), free(ext);
}

void ref_ctc(int T, int N, int A, bool softmax, const double *x, const int *labels, const int *label_lengths,
             const int *input_lengths, double *costs, double *grads)
{
    size_t count = (size_t)T * N * A;
    double *y = malloc(sizeof(double) * count);
    for (size_t r = 0; r < (size_t)T * N; r++) {
        const double *in = x + r * A;
        double *out = y + r * A;
        if (!softmax) {
            for (int k = 0; k < A; k++) out[k] = in[k];
            continue;
        }
        double m = in[0], sum = 0;
        for (int k = 1; k < A; k++) m = in[k] > m ? in[k] : m;
        for (int k = 0; k < A; k++) sum += out[k] = exp(in[k] - m);
        for (int k = 0; k < A; k++) out[k] /= sum;
    }
    const int *lab = labels;
    for (int n = 0; n < N; n++) {
        one_sample(T, N, A, n, y, lab, label_lengths[n], input_lengths[n], &costs[n], grads);
        lab += label_lengths[n];
    }
    free(y);
}
