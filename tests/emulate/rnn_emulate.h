/* rnn_emulate.h: what the emulations of the persistent RNN kernels (tests/emulate/rnn_persist.cu,
   rnn_persist_cluster.cu) share: a one-layer bidirectional network with its weights, inputs,
   lengths and input projection (gx = W x in double, as the layer loop's GEMM leaves it), the
   schedules the blocks run under, the outputs of a run, the double-precision reference network's and the host backend's step loop's
   outputs on the same weights and inputs, and their comparison. Include it after the kernel's
   source (it uses the step fields and src/cuda/types.cuh's conversions). */
#ifndef OCD_TESTS_EMULATE_RNN_EMULATE_H
#define OCD_TESTS_EMULATE_RNN_EMULATE_H

extern "C" {
#include "ref/rnn.h"
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

namespace {

uint32_t emu_seed = 1234;
double emu_random(double lo, double hi)
{
    emu_seed = emu_seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * (double)(emu_seed >> 8) / (double)(1u << 24);
}

template <typename T> T to_t(double v)
{
    T r;
    ocd_cuda_store(&r, (float)v);
    return r;
}

template <typename T> double of_t(const T &v)
{
    return (double)ocd_cuda_load(&v);
}

struct emu_case {
    const char *name;
    cudnnRNNMode_t mode;
    cudnnRNNDataLayout_t layout;
    bool clip, skip;
    int steps;
    int hidden; /* 0: 7 (odd: the products a column an access; even: two) */
    int batch;  /* 0: 5 */
};

/* One case's network, inputs and both sides' outputs. */
template <typename T> struct net {
    emu_case c;
    int G, I, H = 7, P = 7, T_, N = 5, D = 2;
    std::vector<int32_t> lengths, offsets;
    int64_t pos = 0;
    ref_rnn r;
    std::vector<double> w;                   /* ref layout, values of T */
    std::vector<T> x, R[2], bias[2][2], hx, cx_t;
    std::vector<float> gx[2], cx;            /* gx per pseudo-layer: [pos][G H] */

    explicit net(const emu_case &k) : c(k)
    {
        if (c.hidden) H = P = c.hidden;
        if (c.batch) N = c.batch;
        G = ocd_rnn_gates(c.mode);
        I = c.skip ? H : 3;
        T_ = c.steps;
        bool packed = c.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
        const int32_t cycle[5] = {T_, T_ / 2, 0, T_, 1}; /* packed: sorted longest first */
        for (int n = 0; n < N; n++) lengths.push_back(cycle[n % 5]);
        if (packed) std::sort(lengths.begin(), lengths.end(), std::greater<int32_t>());
        offsets.assign((size_t)T_, 0);
        for (int t = 0; t < T_; t++)
            for (int n = 0; n < N; n++) offsets[(size_t)t] += std::min(lengths[(size_t)n], t);
        for (int n = 0; n < N; n++) pos += packed ? lengths[(size_t)n] : T_;
        r = ref_rnn{c.mode, 1, D, I, H, P, c.skip, c.clip, -0.6, 0.7, T_, N, lengths.data()};
        w.assign((size_t)ref_rnn_param_count(&r), 0.0);
        for (auto &v : w) v = of_t(to_t<T>(emu_random(-0.6, 0.6)));
        x.resize((size_t)(pos * I));
        for (auto &v : x) v = to_t<T>(emu_random(-1, 1));
        hx.resize((size_t)D * N * P), cx_t.resize((size_t)D * N * H), cx.resize(cx_t.size());
        for (auto &v : hx) v = to_t<T>(emu_random(-1, 1));
        for (size_t i = 0; i < cx_t.size(); i++) cx_t[i] = to_t<T>(emu_random(-1, 1)), cx[i] = (float)of_t(cx_t[i]);
        for (int pl = 0; pl < D; pl++) {
            R[pl].resize((size_t)G * H * P);
            for (int g = 0; g < G; g++)
                for (int j = 0; j < H; j++)
                    for (int k = 0; k < P; k++)
                        R[pl][((size_t)g * H + j) * P + k] = to_t<T>(w[(size_t)(ref_rnn_param(&r, pl, REF_RNN_R, g) + j * P + k)]);
            for (int set = 0; set < 2; set++) {
                bias[pl][set].resize((size_t)G * H);
                for (int i = 0; i < G * H; i++)
                    bias[pl][set][(size_t)i] = to_t<T>(w[(size_t)(ref_rnn_param(&r, pl, set ? REF_RNN_BR : REF_RNN_BW, 0) + i)]);
            }
            gx[pl].assign((size_t)(pos * G * H), NAN);
            if (c.skip) continue;
            for (int t = 0; t < T_; t++)
                for (int n = 0; n < N; n++) {
                    if (t >= lengths[(size_t)n] && packed) continue;
                    int64_t p = ocd_rnn_pos(c.layout, T_, N, offsets.data(), t, n);
                    for (int g = 0; g < G; g++)
                        for (int j = 0; j < H; j++) {
                            double v = 0;
                            for (int k = 0; k < I; k++)
                                v += w[(size_t)(ref_rnn_param(&r, pl, REF_RNN_W, g) + j * I + k)] * of_t(x[(size_t)(p * I + k)]);
                            gx[pl][(size_t)(p * G * H + g * H + j)] = (float)v;
                        }
                }
        }
    }

    /* The step fields of pseudo-layer pl, y the output, hs and cs its two state slots (slot 0
       set to its initial states). */
    ocd_rnn_step step_of(int pl, T *y, T *hs, float *cs) const
    {
        ocd_rnn_step s;
        memset(&s, 0, sizeof s);
        s.mode = c.mode, s.layout = c.layout;
        s.dtype = sizeof(T) == 4                            ? CUDNN_DATA_FLOAT
                  : std::is_same<T, __nv_bfloat16>::value ? CUDNN_DATA_BFLOAT16
                                                          : CUDNN_DATA_HALF;
        s.T = T_, s.N = N, s.H = H, s.P = P, s.dir = pl;
        s.lengths = lengths.data(), s.offsets = offsets.data();
        s.gx = c.skip ? NULL : gx[pl].data();
        s.x = x.data(), s.x_stride = I;
        for (int g = 0; g < G; g++) s.bw[g] = &bias[pl][0][(size_t)g * H], s.br[g] = &bias[pl][1][(size_t)g * H];
        s.y = y, s.y_stride = (int64_t)D * P;
        s.clip = c.clip, s.clip_nan = true, s.lclip = -0.6, s.rclip = 0.7;
        s.hprev = hs, s.hnext = hs + (size_t)N * P;
        s.cprev = cs, s.cnext = cs + (size_t)N * H;
        for (int i = 0; i < N * P; i++) hs[i] = hx[(size_t)pl * N * P + i], hs[N * P + i] = to_t<T>(NAN);
        for (int i = 0; i < N * H; i++) cs[i] = cx[(size_t)pl * N * H + i], cs[N * H + i] = NAN;
        return s;
    }
};

/* What a run leaves: y, and the final states of both pseudo-layers in the data type. */
struct outputs {
    std::vector<double> y, hy, cy;
};

template <typename T>
void collect(const net<T> &m, const std::vector<T> &y, const std::vector<T> *hy, const std::vector<T> *cy, outputs *o)
{
    for (const T &v : y) o->y.push_back(of_t(v));
    for (int pl = 0; pl < m.D; pl++) {
        for (const T &v : hy[pl]) o->hy.push_back(of_t(v));
        for (const T &v : cy[pl]) o->cy.push_back(of_t(v));
    }
}

/* The final states in the state slots (slot T % 2: h in the data type, c in float) as the
   library's caller delivers them: c converted to the data type. */
template <typename T>
void slot_states(const net<T> &m, const std::vector<T> *hs, const std::vector<float> *cs, std::vector<T> *hy,
                 std::vector<T> *cy)
{
    const size_t last = (size_t)(m.T_ % 2), np = (size_t)m.N * m.P, nh = (size_t)m.N * m.H;
    for (int pl = 0; pl < m.D; pl++) {
        hy[pl].assign(hs[pl].begin() + (std::ptrdiff_t)(last * np), hs[pl].begin() + (std::ptrdiff_t)((last + 1) * np));
        cy[pl].clear();
        for (size_t i = 0; i < nh; i++) cy[pl].push_back(to_t<T>(cs[pl][last * nh + i]));
    }
}

/* The blocks of a persistent kernel run under schedule `order`, each block's next phase by
   advance(b, split) (false when the block must wait for another or is done; split: it may run
   its phase in parts), step(b) the step block b is at (T when done):
     0, 1  each block in turn runs a whole step, first to last or last to first;
     2, 3  the lowest (highest) numbered block that can go on runs its next phase: one block
           runs ahead until it waits for the others;
     4     a random block runs its next phase, often in parts (split).
   false, with a line printed, where a block waits under a whole-step order or every block
   waits (a deadlock). */
template <class Advance, class Step> bool emu_schedule(int blocks, int T, int order, Advance advance, Step step)
{
    if (order < 2) {
        for (int t = 0; t < T; t++)
            for (int i = 0; i < blocks; i++) {
                const int b = order ? blocks - 1 - i : i;
                while (step(b) == t)
                    if (!advance(b, false)) {
                        printf("  block %d waits at step %d under a whole-step order\n", b, t);
                        return false;
                    }
            }
        return true;
    }
    for (;;) {
        bool done = true, moved = false;
        for (int b = 0; b < blocks; b++) done = done && step(b) == T;
        if (done) return true;
        if (order == 4)
            for (int tries = 0; tries < 8 * blocks && !moved; tries++) {
                const int b = (int)emu_random(0, blocks);
                moved = advance(b, emu_random(0, 1) < 0.5);
            }
        for (int i = 0; i < blocks && !moved; i++) moved = advance(order == 3 ? blocks - 1 - i : i, false);
        if (!moved) {
            printf("  every block waits: deadlock\n");
            return false;
        }
    }
}

/* The host backend's step loop on the same buffers: R h in double, then its pointwise step. */
template <typename T> void run_host_steps(const net<T> &m, outputs *o)
{
    std::vector<T> y((size_t)(m.pos * m.D * m.P), to_t<T>(NAN)), hs[2];
    std::vector<float> cs[2], gh((size_t)m.N * m.G * m.H);
    for (int pl = 0; pl < m.D; pl++) {
        hs[pl].resize((size_t)2 * m.N * m.P), cs[pl].resize((size_t)2 * m.N * m.H);
        ocd_rnn_step s = m.step_of(pl, y.data(), hs[pl].data(), cs[pl].data());
        s.gh = gh.data();
        for (int t = 0; t < m.T_; t++) {
            s.s = t;
            s.hprev = hs[pl].data() + (size_t)(t % 2) * m.N * m.P, s.hnext = hs[pl].data() + (size_t)((t + 1) % 2) * m.N * m.P;
            s.cprev = cs[pl].data() + (size_t)(t % 2) * m.N * m.H, s.cnext = cs[pl].data() + (size_t)((t + 1) % 2) * m.N * m.H;
            for (int n = 0; n < m.N; n++)
                for (int row = 0; row < m.G * m.H; row++) {
                    double v = 0;
                    for (int k = 0; k < m.P; k++)
                        v += of_t(m.R[pl][(size_t)row * m.P + k]) * of_t(((const T *)s.hprev)[n * m.P + k]);
                    gh[(size_t)n * m.G * m.H + row] = (float)v;
                }
            ocd_host_rnn_fwd_step(NULL, &s);
        }
    }
    std::vector<T> hy[2], cy[2];
    slot_states(m, hs, cs, hy, cy);
    collect(m, y, hy, cy, o);
}

/* The reference's y ([pos][D P] at the case's positions; NaN at padding) and states. */
template <typename T> void run_reference(const net<T> &m, outputs *o)
{
    int64_t TN = (int64_t)m.T_ * m.N;
    std::vector<double> x((size_t)(TN * m.I), 0.0), y((size_t)(TN * m.D * m.P), 0.0), hx, cx;
    for (int t = 0; t < m.T_; t++)
        for (int n = 0; n < m.N; n++)
            if (t < m.lengths[(size_t)n]) {
                int64_t p = ocd_rnn_pos(m.c.layout, m.T_, m.N, m.offsets.data(), t, n);
                for (int k = 0; k < m.I; k++) x[(size_t)(((int64_t)t * m.N + n) * m.I + k)] = of_t(m.x[(size_t)(p * m.I + k)]);
            }
    for (const T &v : m.hx) hx.push_back(of_t(v));
    for (float v : m.cx) cx.push_back(v);
    o->hy.assign(hx.size(), 0.0), o->cy.assign(cx.size(), 0.0);
    ref_rnn_forward(&m.r, m.w.data(), x.data(), hx.data(), cx.data(), y.data(), o->hy.data(), o->cy.data());
    if (m.c.mode != CUDNN_LSTM) o->cy = std::vector<double>(cx.size(), NAN);
    o->y.assign((size_t)(m.pos * m.D * m.P), NAN);
    for (int t = 0; t < m.T_; t++)
        for (int n = 0; n < m.N; n++)
            if (t < m.lengths[(size_t)n]) {
                int64_t p = ocd_rnn_pos(m.c.layout, m.T_, m.N, m.offsets.data(), t, n);
                for (int k = 0; k < m.D * m.P; k++)
                    o->y[(size_t)(p * m.D * m.P + k)] = y[(size_t)(((int64_t)t * m.N + n) * m.D * m.P + k)];
            }
}

/* tol for "a is b rounded once to half": within one ulp of half at b (plus float arithmetic). */
constexpr double ONE_HALF_ROUNDING = -1;

/* a against b: NaN where b is NaN (a poisoned position left alone), else within tol (tol 0:
   the same bits). */
bool same(const char *what, const char *side, const std::vector<double> &a, const std::vector<double> &b, double tol)
{
    for (size_t i = 0; i < a.size(); i++) {
        int e;
        frexp(b[i], &e);
        bool ok = std::isnan(b[i]) ? std::isnan(a[i])
                  : tol == 0       ? memcmp(&a[i], &b[i], sizeof a[i]) == 0
                  : tol == ONE_HALF_ROUNDING
                      ? fabs(a[i] - b[i]) <= ldexp(1, std::max(e - 1, -14) - 10) + 1e-6 * fmax(1, fabs(b[i]))
                      : fabs(a[i] - b[i]) <= tol * fmax(1, fabs(b[i]));
        if (!ok) {
            printf("  %s[%zu]: persistent %.9g, %s %.9g\n", what, i, a[i], side, b[i]);
            return false;
        }
    }
    return true;
}

/* y and hy within tol, cy (float in every case) within cell_tol. */
bool same_outputs(const outputs &a, const outputs &b, const char *side, double tol, double cell_tol, bool states)
{
    return same("y", side, a.y, b.y, tol) && same("hy", side, a.hy, b.hy, tol) &&
           (!states || same("cy", side, a.cy, b.cy, cell_tol));
}

} // namespace

#endif /* OCD_TESTS_EMULATE_RNN_EMULATE_H */
