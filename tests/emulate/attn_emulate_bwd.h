/* attn_emulate_bwd.h: the fused attention backward emulations' driver (attn_flash_bwd.cu, the
   sm_80 kernel; attn_flash_bwd_sm90.cu, the Hopper one): a case's operands with random values,
   the outputs poisoned (or random priors when accumulating), the entry's applicability, the
   kernel argument and its workspace places, the forward's output and row statistics from a
   double reference (rounded as the forward stores them), the emulation, then dq, dk and dv
   against the double reference gradients. Included after the kernel file and attn_emulate.h. */
#ifndef OCD_TESTS_EMULATE_ATTN_EMULATE_BWD_H
#define OCD_TESTS_EMULATE_ATTN_EMULATE_BWD_H

#include "attn_emulate.h"

namespace {

/* A case of the backward emulations. */
struct emu_bwd_case {
    const char *name;
    cudnnDataType_t t;
    int batch, beams, heads, max_q, max_kv, d;
    bool kv_shared, lengths, time_major, accumulate;
    int win; /* 0 full, 1 causal, 2 sliding with rows without keys */
    double dropout;
    int q_first, q_count; /* q_count 0: every step */
};

template <typename T, int D, class Applies, class Emulate>
bool attn_emu_case(const emu_bwd_case &c, cudnnHandle_t handle, emu_rng &emu_random, Applies applies,
                       Emulate emulate)
{
    int kvb = c.kv_shared ? 1 : c.beams;
    auto layout = [&](ocd_attn_operand &x, int beams, int steps) { return attn_emu_layout(c, D, x, beams, steps); };
    ocd_attn_core_problem p;
    memset(&p, 0, sizeof p);
    size_t nq = layout(p.q, c.beams, c.max_q), nk = layout(p.k, kvb, c.max_kv);
    layout(p.v, kvb, c.max_kv), layout(p.o, c.beams, c.max_q), layout(p.d_o, c.beams, c.max_q);
    layout(p.dq, c.beams, c.max_q), layout(p.dk, kvb, c.max_kv), layout(p.dv, kvb, c.max_kv);
    std::vector<T> q(nq), k(nk), v(nk), o(nq), go(nq), dq(nq), dk(nk), dv(nk);
    for (auto *x : {&q, &k, &v, &go})
        for (auto &e : *x) e = (T)emu_random();
    for (auto *x : {&dq, &dk, &dv})
        for (auto &e : *x) e = c.accumulate ? (T)emu_random() : (T)NAN;
    std::vector<T> dq0 = dq, dk0 = dk, dv0 = dv;
    std::vector<int> lq, lk, lo, hi;
    attn_emu_problem(c, D, p, lq, lk, lo, hi);
    if (c.q_count == 0) p.q_count = c.max_q;
    p.accumulate = c.accumulate;
    p.q.data = q.data(), p.k.data = k.data(), p.v.data = v.data(), p.o.data = o.data(), p.d_o.data = go.data();
    p.dq.data = dq.data(), p.dk.data = dk.data(), p.dv.data = dv.data();
    std::vector<char> ws, reserve;
    ocd_attn_dev d;
    if (!attn_emu_call(c.name, handle, applies, p, false, lo, hi, ws, reserve, d)) return false;
    if ((char *)d.dq_acc + bwd_acc_bytes(d) > ws.data() + ws.size()) {
        printf("  %-30s FAILED: the dq accumulators overrun the workspace\n", c.name);
        return false;
    }
    const uint64_t gen[2] = {0x0fedcba987654321ull, 7}; /* what the forward saved in the reserve */
    memcpy(reserve.data(), gen, sizeof gen);

    /* the reference: forward (o and the statistics stored as the forward stores them), then the
       gradients in double */
    auto at = [&](const ocd_attn_operand &x, int b, int m, int h, int t, int e) {
        return ocd_attn_core_row(&x, b, m, h, t) + e;
    };
    auto ld = [](const std::vector<T> &x, int64_t i) { return (double)ocd_cuda_load(&x[i]); };
    std::vector<double> wq(nq, 0.0), wk(nk, 0.0), wv(nk, 0.0), pr(c.max_kv), fr(c.max_kv);
    float *lse = (float *)(reserve.data() + 16);
    for (int b = 0; b < c.batch; b++)
        for (int m = 0; m < c.beams; m++)
            for (int h = 0; h < c.heads; h++)
                for (int i = 0; i < c.max_q; i++) {
                    int mk = c.kv_shared ? 0 : m, len_kv = lk[b * kvb + mk];
                    int a = std::max(lo[i], 0), z = std::min(hi[i], len_kv);
                    bool in = i >= p.q_first && i < p.q_first + p.q_count;
                    bool any = in && i < lq[b * c.beams + m] && a < z;
                    int64_t ri = ((int64_t)(b * c.beams + m) * c.heads + h) * c.max_q + i;
                    double mxs = -INFINITY, sum = 0;
                    for (int j = a; any && j < z; j++) {
                        double dot = 0;
                        for (int e = 0; e < D; e++) dot += ld(q, at(p.q, b, m, h, i, e)) * ld(k, at(p.k, b, mk, h, j, e));
                        pr[j] = dot * p.sm_scaler, mxs = std::max(mxs, pr[j]);
                    }
                    for (int j = a; any && j < z; j++) sum += exp(pr[j] - mxs);
                    double l = any ? mxs + log(sum) : -INFINITY;
                    lse[ri] = (float)l;
                    for (int j = a; any && j < z; j++) {
                        pr[j] = exp(pr[j] - l);
                        bool keep = c.dropout == 0 || ocd_attn_core_keep(gen[0], gen[1], d.threshold, (uint64_t)ri * c.max_kv + j);
                        fr[j] = keep ? d.drop_scale : 0;
                    }
                    double Di = 0;
                    for (int e = 0; e < D; e++) {
                        double oe = 0;
                        for (int j = a; any && j < z; j++) oe += pr[j] * fr[j] * ld(v, at(p.v, b, mk, h, j, e));
                        o[at(p.o, b, m, h, i, e)] = (T)oe;
                        Di += oe * ld(go, at(p.d_o, b, m, h, i, e));
                    }
                    for (int j = a; any && j < z; j++) {
                        double dpj = 0;
                        for (int e = 0; e < D; e++) dpj += ld(go, at(p.d_o, b, m, h, i, e)) * ld(v, at(p.v, b, mk, h, j, e));
                        double ds = pr[j] * (fr[j] * dpj - Di) * p.sm_scaler;
                        for (int e = 0; e < D; e++) {
                            wv[at(p.dv, b, mk, h, j, e)] += pr[j] * fr[j] * ld(go, at(p.d_o, b, m, h, i, e));
                            wk[at(p.dk, b, mk, h, j, e)] += ds * ld(q, at(p.q, b, m, h, i, e));
                            wq[at(p.dq, b, m, h, i, e)] += ds * ld(k, at(p.k, b, mk, h, j, e));
                        }
                    }
                }
    if (!emulate(d)) {
        printf("  %-30s FAILED in the emulation\n", c.name);
        return false;
    }

    /* every element of dq (rows of the query range), dk and dv (rows of [0, max_kv)) is written:
       the gradient, plus the prior value when accumulating; past len_kv, zeros or untouched; dq
       rows outside the query range keep their bytes */
    double worst = 0;
    auto check = [&](const char *what, const std::vector<T> &got, const std::vector<T> &prior,
                     const std::vector<double> &want, const ocd_attn_operand &x, int beams, int T_, const int *len,
                     int len_beams) {
        for (int b = 0; b < c.batch; b++)
            for (int m = 0; m < beams; m++)
                for (int h = 0; h < c.heads; h++)
                    for (int t = 0; t < T_; t++)
                        for (int e = 0; e < D; e++) {
                            int64_t i = at(x, b, m, h, t, e);
                            if (len == nullptr && (t < p.q_first || t >= p.q_first + p.q_count)) {
                                if (memcmp(&got[i], &prior[i], sizeof(T)) == 0) continue;
                                printf("  %-30s FAILED: %s at b %d m %d h %d t %d outside the query range written\n",
                                       c.name, what, b, m, h, t);
                                return false;
                            }
                            bool past = len != nullptr && t >= len[b * len_beams + m];
                            double w = past ? (c.accumulate ? ld(prior, i) : 0) : want[i] + (c.accumulate ? ld(prior, i) : 0);
                            double g = ld(got, i), err = fabs(g - w) / std::max(1.0, fabs(w));
                            worst = std::max(worst, std::isnan(err) ? INFINITY : err);
                            if (!(err <= 1e-2)) {
                                printf("  %-30s FAILED: %s at b %d m %d h %d t %d e %d: got %.6g, want %.6g\n", c.name,
                                       what, b, m, h, t, e, g, w);
                                return false;
                            }
                        }
        return true;
    };
    if (!check("dq", dq, dq0, wq, p.dq, c.beams, c.max_q, nullptr, 0) ||
        !check("dk", dk, dk0, wk, p.dk, kvb, c.max_kv, lk.data(), kvb) ||
        !check("dv", dv, dv0, wv, p.dv, kvb, c.max_kv, lk.data(), kvb))
        return false;
    printf("  %-30s ok (largest relative error %.2g)\n", c.name, worst);
    return true;
}

} // namespace

#endif /* OCD_TESTS_EMULATE_ATTN_EMULATE_BWD_H */
