/* ctc.cu: the per-thread rules of src/cuda/ctc.cu's recursion and label kernels (ctc_alpha_first,
   ctc_alpha_next, ctc_beta_last, ctc_beta_next, ctc_log_p, ctc_next_same, ctc_first_of_symbol)
   run on the CPU as the kernels' threads run them: every state of a step computed from the
   previous step's row, rows double-buffered as in shared memory and states past the label's
   holding -inf as the idle threads do, each step shifted by the largest value of the one before
   (ctc_shift); the blank's occupancy summed in the warp's order (lane i
   over states 2 (i + 32 m), then the xor tree), each other symbol's along its chain of repeats
   from its first state. Checked against brute force: every path of the sample's steps through
   the alphabet enumerated in double, those that collapse (repeats merged, blanks dropped) to the
   label summed, for the cost and the gradient of each (step, symbol), in both normalization
   modes; labels with repeats, a blank between repeats the only way through, the empty label, a
   label that cannot be aligned, and an input shorter than T. Prints a line per case; exits 1 if
   any differs. */
#include "cuda/ctc.cu"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

uint32_t emu_seed = 2024;
double emu_random(double lo, double hi)
{
    emu_seed = emu_seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * (double)(emu_seed >> 8) / (double)(1u << 24);
}

struct emu_case {
    const char *name;
    int T, A, tn;
    std::vector<int> label;
    bool softmax;
};

/* Brute force: cost and gradients (T x A, 0 past tn) from y (tn x A, double). */
void brute(const emu_case &c, const std::vector<double> &y, double *cost, std::vector<double> &grad)
{
    int paths = 1;
    for (int t = 0; t < c.tn; t++) paths *= c.A;
    double P = 0;
    std::vector<double> through((size_t)c.T * c.A, 0.0);
    std::vector<int> pi((size_t)c.tn), out;
    for (int id = 0; id < paths; id++) {
        int v = id;
        for (int t = 0; t < c.tn; t++) pi[(size_t)t] = v % c.A, v /= c.A;
        out.clear();
        for (int t = 0; t < c.tn; t++)
            if (pi[(size_t)t] != 0 && (t == 0 || pi[(size_t)t] != pi[(size_t)t - 1])) out.push_back(pi[(size_t)t]);
        if (out != c.label) continue;
        double prod = 1;
        for (int t = 0; t < c.tn; t++) prod *= y[(size_t)t * c.A + pi[(size_t)t]];
        P += prod;
        for (int t = 0; t < c.tn; t++) through[(size_t)t * c.A + pi[(size_t)t]] += prod;
    }
    *cost = -log(P);
    grad.assign((size_t)c.T * c.A, 0.0);
    for (int t = 0; t < c.tn; t++)
        for (int k = 0; k < c.A; k++)
            grad[(size_t)t * c.A + k] = y[(size_t)t * c.A + k] - through[(size_t)t * c.A + k] / P;
}

/* For inputs too long to enumerate: the forward-backward recursion in double, log space. */
void in_double(const emu_case &c, const std::vector<double> &y, double *cost, std::vector<double> &grad)
{
    const int L = (int)c.label.size(), S = 2 * L + 1, T = c.tn;
    std::vector<int> ext((size_t)S);
    for (int s = 0; s < S; s++) ext[(size_t)s] = s % 2 ? c.label[(size_t)s / 2] : 0;
    auto add = [](double a, double b) {
        double m = a > b ? a : b;
        return m == -INFINITY ? m : m + log(exp(a - m) + exp(b - m));
    };
    auto ly = [&](int t, int s) { return log(y[(size_t)t * c.A + ext[(size_t)s]]); };
    auto may_skip = [&](int s) { return s > 1 && ext[(size_t)s] != 0 && ext[(size_t)s] != ext[(size_t)s - 2]; };
    std::vector<double> a((size_t)T * S, -INFINITY), b((size_t)T * S, -INFINITY);
    a[0] = ly(0, 0);
    if (S > 1) a[1] = ly(0, 1);
    for (int t = 1; t < T; t++)
        for (int s = 0; s < S; s++) {
            const double *p = &a[(size_t)(t - 1) * S];
            double v = p[s];
            if (s > 0) v = add(v, p[s - 1]);
            if (may_skip(s)) v = add(v, p[s - 2]);
            a[(size_t)t * S + s] = v + ly(t, s);
        }
    const double *last = &a[(size_t)(T - 1) * S];
    double lp = S > 1 ? add(last[S - 1], last[S - 2]) : last[0];
    b[(size_t)(T - 1) * S + S - 1] = 0;
    if (S > 1) b[(size_t)(T - 1) * S + S - 2] = 0;
    for (int t = T - 2; t >= 0; t--)
        for (int s = 0; s < S; s++) {
            auto next = [&](int q) { return b[(size_t)(t + 1) * S + q] + ly(t + 1, q); };
            double v = next(s);
            if (s + 1 < S) v = add(v, next(s + 1));
            if (s + 2 < S && may_skip(s + 2)) v = add(v, next(s + 2));
            b[(size_t)t * S + s] = v;
        }
    *cost = -lp;
    grad.assign((size_t)c.T * c.A, 0.0);
    for (int t = 0; t < T; t++) {
        for (int k = 0; k < c.A; k++) grad[(size_t)t * c.A + k] = y[(size_t)t * c.A + k];
        for (int s = 0; s < S; s++)
            grad[(size_t)t * c.A + ext[(size_t)s]] -= exp(a[(size_t)t * S + s] + b[(size_t)t * S + s] - lp);
    }
}

bool run_case(const emu_case &c)
{
    const int L = (int)c.label.size(), S = 2 * L + 1, threads = (S + 31) / 32 * 32;
    /* inputs: x as the tensor holds it (float), y in double for brute force */
    std::vector<float> x((size_t)c.T * c.A), lse((size_t)c.T, 0.0f);
    std::vector<double> y((size_t)c.T * c.A);
    for (int t = 0; t < c.T; t++) {
        double sum = 0;
        for (int k = 0; k < c.A; k++) sum += exp(x[(size_t)t * c.A + k] = (float)emu_random(-2, 2));
        for (int k = 0; k < c.A; k++) {
            double p = exp((double)x[(size_t)t * c.A + k]) / sum;
            if (!c.softmax) x[(size_t)t * c.A + k] = (float)p;
            y[(size_t)t * c.A + k] = c.softmax ? p : (double)x[(size_t)t * c.A + k];
        }
        lse[(size_t)t] = (float)log(sum);
    }
    auto log_y = [&](int t, int s) {
        float v = x[(size_t)t * c.A + ctc_symbol(c.label.data(), s)];
        return c.softmax ? v - lse[(size_t)t] : logf(v);
    };
    const int *lab = c.label.data();
    /* launch 3, alpha and beta blocks: row[2][threads], one barrier per step, each step shifted
       down by the largest stored value of the step before (the max of the warps' maxima is the
       max of the states), the shifts summed in double */
    std::vector<float> alpha((size_t)c.tn * S), beta((size_t)c.tn * S), row(2 * (size_t)threads);
    std::vector<double> ashift((size_t)c.tn), bshift((size_t)c.tn);
    auto step_max = [&](const std::vector<float> &stored, int t) {
        float m = -INFINITY;
        for (int s = 0; s < S; s++) m = fmaxf(m, stored[(size_t)t * S + s]);
        return ctc_shift(m);
    };
    double shift = 0;
    for (int s = 0; s < threads; s++) {
        float v = ctc_alpha_first(s, S, s < S ? log_y(0, s) : 0.0f);
        if (s < S) alpha[(size_t)s] = v;
        row[(size_t)s] = v;
    }
    ashift[0] = 0;
    for (int t = 1; t < c.tn; t++) {
        float m = step_max(alpha, t - 1);
        shift += m;
        ashift[(size_t)t] = shift;
        for (int s = 0; s < threads; s++) {
            const float *prev = &row[(size_t)((t - 1) & 1) * threads];
            float v = s < S ? ctc_alpha_next(prev, s, ctc_skip_into(lab, s), log_y(t, s)) - m : -INFINITY;
            row[(size_t)(t & 1) * threads + s] = v;
            if (s < S) alpha[(size_t)t * S + s] = v;
        }
    }
    double lp = (double)ctc_log_p(&row[(size_t)((c.tn - 1) & 1) * threads], S) + shift;
    shift = 0;
    for (int s = 0; s < threads; s++) {
        float v = ctc_beta_last(s, S);
        if (s < S) beta[(size_t)(c.tn - 1) * S + s] = v;
        row[(size_t)((c.tn - 1) & 1) * threads + s] = s < S ? v + log_y(c.tn - 1, s) : v;
    }
    bshift[(size_t)c.tn - 1] = 0;
    for (int t = c.tn - 2; t >= 0; t--) {
        float m = step_max(beta, t + 1);
        shift += m;
        bshift[(size_t)t] = shift;
        for (int s = 0; s < threads; s++) {
            bool skip = s + 2 < S && ctc_skip_into(lab, s + 2);
            float v = s < S ? ctc_beta_next(&row[(size_t)((t + 1) & 1) * threads], s, S, skip) - m : -INFINITY;
            row[(size_t)(t & 1) * threads + s] = s < S ? v + log_y(t, s) : v;
            if (s < S) beta[(size_t)t * S + s] = v;
        }
    }
    double want_cost;
    std::vector<double> want;
    if (c.tn <= 8) brute(c, y, &want_cost, want);
    else in_double(c, y, &want_cost, want);
    char what[96];
    snprintf(what, sizeof what, "%s (%s)", c.name, c.softmax ? "SOFTMAX" : "NONE");
    if (!std::isfinite(want_cost)) {
        bool ok = std::isinf(lp) && lp < 0;
        printf("%-44s %s (log P %g)\n", what, ok ? "ok" : "DIFFERS", lp);
        return ok;
    }
    bool ok = fabs(-lp - want_cost) <= 1e-5 * fmax(1, want_cost);
    /* launch 2 and 4: y for every symbol, less the occupancies */
    std::vector<double> grad((size_t)c.T * c.A, 0.0);
    std::vector<float> occ((size_t)S);
    for (int t = 0; t < c.tn; t++) {
        for (int k = 0; k < c.A; k++) {
            float v = x[(size_t)t * c.A + k];
            grad[(size_t)t * c.A + k] = c.softmax ? expf(v - lse[(size_t)t]) : v;
        }
        float off = (float)(ashift[(size_t)t] + bshift[(size_t)t] - lp);
        for (int s = 0; s < S; s++) occ[(size_t)s] = expf(alpha[(size_t)t * S + s] + beta[(size_t)t * S + s] + off);
        float lane[32];
        for (int i = 0; i < 32; i++) {
            lane[i] = 0.0f;
            for (int s = 2 * i; s < S; s += 64) lane[i] += occ[(size_t)s];
        }
        for (int d = 16; d > 0; d /= 2) {
            float next[32];
            for (int i = 0; i < 32; i++) next[i] = lane[i] + lane[i ^ d];
            for (int i = 0; i < 32; i++) lane[i] = next[i];
        }
        grad[(size_t)t * c.A] = (float)grad[(size_t)t * c.A] - lane[0];
        for (int s = 1; s < S; s += 2) {
            if (!ctc_first_of_symbol(lab, s)) continue;
            float sum = 0.0f;
            for (int q = s; q >= 0; q = ctc_next_same(lab, L, q)) sum += occ[(size_t)q];
            int k = lab[s >> 1];
            grad[(size_t)t * c.A + k] = (float)grad[(size_t)t * c.A + k] - sum;
        }
    }
    double worst = 0;
    for (size_t i = 0; i < grad.size(); i++) worst = fmax(worst, fabs(grad[i] - want[i]));
    ok = ok && worst <= 2e-5 + 3e-7 * want_cost; /* tests/ctc.c's tolerance */
    printf("%-44s %s (cost %.6f vs %.6f, gradient off by %.2g)\n", what, ok ? "ok" : "DIFFERS", -lp, want_cost,
           worst);
    return ok;
}

} // namespace

int main()
{
    const emu_case cases[] = {
        {"distinct labels", 5, 4, 5, {1, 2, 3}, true},
        {"a repeat: blank between", 6, 3, 6, {1, 1, 2}, true},
        {"repeat needing every step", 3, 3, 3, {2, 2}, true},
        {"empty label", 4, 3, 4, {}, true},
        {"input shorter than T", 7, 4, 5, {3, 1}, true},
        {"unalignable repeats", 4, 3, 2, {1, 1}, true},
        {"one step", 1, 5, 1, {4}, true},
        {"long chain of one symbol", 8, 2, 8, {1, 1, 1}, true},
        {"600 steps, a label of 256", 600, 30, 600, {}, true},
    };
    int bad = 0;
    for (const emu_case &c : cases)
        for (int mode = 0; mode < 2; mode++) {
            emu_case m = c;
            if (m.T == 600)
                for (int j = 0; j < 256; j++) m.label.push_back(1 + (j * 7 + 3) % 29);
            m.softmax = mode == 0;
            bad += !run_case(m);
        }
    printf("%s\n", bad ? "emulate_ctc: FAILED" : "emulate_ctc: all cases agree");
    return bad ? 1 : 0;
}
