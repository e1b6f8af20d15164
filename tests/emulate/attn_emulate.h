/* attn_emulate.h: what the fused attention emulations (attn_flash*.cu) share: their random
   numbers and the geometry of a case, which emu_fwd_case and emu_bwd_case give by the same
   field names (batch, beams, heads, max_q, max_kv, kv_shared, lengths, time_major, win), the
   emulated softmax step of a warp, the entry's call as the prologue sets it up (attn_emu_call),
   the dispatch of cases on data type and head size, and the forward emulation's driver and
   double reference (the backward's: attn_emulate_bwd.h). Included after the kernel file, which
   brings the problem, the kernel argument and the per-thread pieces. */
#ifndef OCD_TESTS_EMULATE_ATTN_EMULATE_H
#define OCD_TESTS_EMULATE_ATTN_EMULATE_H

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace {

/* A linear congruential stream of floats in [-1, 1) from a seed. */
struct emu_rng {
    uint32_t state;
    float operator()()
    {
        state = state * 1664525u + 1013904223u;
        return -1 + 2 * (float)(state >> 8) / (float)(1u << 24);
    }
};

/* Strides of operand x of a case with heads of D: packed [b][m][h][t][D], or time-major
   [t][b][m][h][D]; returns its element count. */
template <typename C> size_t attn_emu_layout(const C &c, int D, ocd_attn_operand &x, int beams, int T)
{
    int64_t *s = x.stride;
    s[4] = 1;
    if (c.time_major)
        s[2] = D, s[1] = (int64_t)c.heads * D, s[0] = (int64_t)beams * c.heads * D,
        s[3] = (int64_t)c.batch * beams * c.heads * D;
    else
        s[3] = D, s[2] = (int64_t)T * D, s[1] = (int64_t)c.heads * T * D, s[0] = (int64_t)beams * c.heads * T * D;
    return (size_t)c.batch * beams * c.heads * T * D;
}

/* The case's sequence lengths (queries, keys: full, or shortened per sequence when c.lengths)
   and windows (win 0: every key; 1: causal; 2: sliding, with rows without keys). */
template <typename C>
void attn_emu_sequences(const C &c, std::vector<int> &lq, std::vector<int> &lk, std::vector<int> &lo,
                        std::vector<int> &hi)
{
    lq.assign((size_t)c.batch * c.beams, 0), lk.assign((size_t)c.batch * (c.kv_shared ? 1 : c.beams), 0);
    lo.assign(c.max_q, 0), hi.assign(c.max_q, 0);
    for (size_t i = 0; i < lq.size(); i++) lq[i] = c.lengths ? c.max_q - 13 * (int)i % c.max_q : c.max_q;
    for (size_t i = 0; i < lk.size(); i++) lk[i] = c.lengths ? c.max_kv - 29 * (int)i % c.max_kv : c.max_kv;
    for (int i = 0; i < c.max_q; i++) {
        lo[i] = c.win == 2 ? i - 40 : 0;
        hi[i] = c.win == 0 ? c.max_kv : c.win == 1 ? i + 1 : i % 7 == 3 ? lo[i] : i + 50;
    }
}

/* The problem fields every case sets alike from the case c and head size D: the shape, the
   scaler, dropout, the query range as given and the sequence arrays (filled here, the problem
   pointing into them). */
template <typename C>
void attn_emu_problem(const C &c, int D, ocd_attn_core_problem &p, std::vector<int> &lq, std::vector<int> &lk,
                      std::vector<int> &lo, std::vector<int> &hi)
{
    attn_emu_sequences(c, lq, lk, lo, hi);
    p.dtype = c.t, p.batch = c.batch, p.beams = c.beams, p.heads = c.heads, p.max_q = c.max_q, p.max_kv = c.max_kv;
    p.head_qk = p.head_v = D, p.kv_shared = c.kv_shared, p.q_first = c.q_first, p.q_count = c.q_count;
    p.sm_scaler = 1.0 / sqrt((double)D) * 2;
    p.dropout = c.dropout;
    p.len_q = lq.data(), p.len_kv = lk.data(), p.lo_win = lo.data(), p.hi_win = hi.data();
}

/* flash_softmax_step (cuda/attn_core_flash.cuh) for the 32 lanes of a warp, row half hr: s[l],
   lo[l], hi[l], mx[l], lsum[l] are lane l's, corr[l][hr] receives its factor; the two xor
   shuffles of a quad are done here, in the kernel's order. */
template <int NS>
void attn_emu_softmax_step(float (*s)[NS][4], int hr, int kt, const int (*lo)[2], const int (*hi)[2], float scale2,
                           float (*mx)[2], float (*lsum)[2], float (*corr)[2])
{
    float tmax[32], qmax[32], sum[32], qsum[32];
    for (int l = 0; l < 32; l++) tmax[l] = flash_mask_max(s[l], hr, kt, lo[l][hr], hi[l][hr], l, scale2);
    for (int l = 0; l < 32; l++) qmax[l] = fmaxf(fmaxf(tmax[l], tmax[l ^ 1]), fmaxf(tmax[l ^ 2], tmax[l ^ 3]));
    for (int l = 0; l < 32; l++) {
        float nm = fmaxf(mx[l][hr], qmax[l]), base = flash_base(nm);
        corr[l][hr] = exp2f(mx[l][hr] - base);
        sum[l] = flash_exp_sum(s[l], hr, base);
        mx[l][hr] = nm;
    }
    for (int l = 0; l < 32; l++) qsum[l] = (sum[l] + sum[l ^ 1]) + (sum[l ^ 2] + sum[l ^ 3]);
    for (int l = 0; l < 32; l++) lsum[l][hr] = lsum[l][hr] * corr[l][hr] + qsum[l];
}

/* The entry's call on p, forward or backward, its workspace and reserve (sized by the core's
   rules) allocated in ws and reserve: false when applies(handle, call) declines it (said under
   the case's name); else d as the prologue leaves it, the windows lo and hi copied where the
   prologue copies them. */
template <class Applies>
bool attn_emu_call(const char *name, cudnnHandle_t handle, Applies applies, ocd_attn_core_problem &p, bool forward,
                   const std::vector<int> &lo, const std::vector<int> &hi, std::vector<char> &ws,
                   std::vector<char> &reserve, ocd_attn_dev &d)
{
    ws.assign(ocd_attn_core_workspace_bytes(&p, !forward), 0);
    reserve.assign(ocd_attn_core_reserve_bytes(&p), 0);
    ocd_attn_core_call call = {&p, reserve.data(), ws.data()};
    const char *why = applies(handle, &call);
    if (why != NULL) {
        printf("  %-30s the entry declines: %s\n", name, why);
        return false;
    }
    ocd_attn_dev_init(&call, forward, &d);
    memcpy((void *)d.p.lo_win, lo.data(), sizeof(int) * p.max_q);
    memcpy((void *)d.p.hi_win, hi.data(), sizeof(int) * p.max_q);
    return true;
}

/* A case of the forward emulations. */
struct emu_fwd_case {
    const char *name;
    cudnnDataType_t t;
    int batch, beams, heads, max_q, max_kv, d;
    bool kv_shared, lengths, time_major;
    int win; /* 0 full, 1 causal, 2 sliding with rows without keys */
    int q_first, q_count;
    double dropout;
};

/* A forward case through an entry: the case's operands with random values, o poisoned with NaN;
   the entry's applicability, applies(handle, call) (false when it declines); the kernel argument
   as the prologue leaves it; emulate(d) (false: the emulation found a fault); then every element
   of o and every row statistic against a double reference (rows outside the query range must
   stay NaN). */
template <typename T, int D, class Applies, class Emulate>
bool attn_emu_case(const emu_fwd_case &c, cudnnHandle_t handle, emu_rng &random, Applies applies, Emulate emulate)
{
    int kvb = c.kv_shared ? 1 : c.beams;
    auto layout = [&](ocd_attn_operand &x, int beams, int steps) { return attn_emu_layout(c, D, x, beams, steps); };
    ocd_attn_core_problem p;
    memset(&p, 0, sizeof p);
    size_t nq = layout(p.q, c.beams, c.max_q), nk = layout(p.k, kvb, c.max_kv);
    layout(p.v, kvb, c.max_kv), layout(p.o, c.beams, c.max_q);
    std::vector<T> q(nq), k(nk), v(nk), o(nq);
    for (auto &x : q) x = (T)random();
    for (auto &x : k) x = (T)random();
    for (auto &x : v) x = (T)random();
    for (auto &x : o) x = (T)NAN;
    std::vector<int> lq, lk, lo, hi;
    attn_emu_problem(c, D, p, lq, lk, lo, hi);
    p.q.data = q.data(), p.k.data = k.data(), p.v.data = v.data(), p.o.data = o.data();
    std::vector<char> ws, reserve;
    ocd_attn_dev d;
    if (!attn_emu_call(c.name, handle, applies, p, true, lo, hi, ws, reserve, d)) return false;
    const uint64_t gen[2] = {0x1234567890abcdefull, 42}; /* what the prologue's thread copies from rng */
    memcpy((void *)d.gen, gen, sizeof gen);
    if (!emulate(d)) {
        printf("  %-28s FAILED in the emulation\n", c.name);
        return false;
    }

    auto at = [&](const ocd_attn_operand &x, int b, int m, int h, int t, int e) {
        return ocd_attn_core_row(&x, b, m, h, t) + e;
    };
    std::vector<double> s(c.max_kv);
    for (int b = 0; b < c.batch; b++)
        for (int m = 0; m < c.beams; m++)
            for (int h = 0; h < c.heads; h++)
                for (int i = 0; i < c.max_q; i++) {
                    int mk = c.kv_shared ? 0 : m, len_kv = lk[b * kvb + mk];
                    int a = std::max(lo[i], 0), z = std::min(hi[i], len_kv);
                    bool in = i >= c.q_first && i < c.q_first + c.q_count, any = in && i < lq[b * c.beams + m] && a < z;
                    double mxs = -INFINITY, sum = 0;
                    for (int j = a; any && j < z; j++) {
                        double dot = 0;
                        for (int e = 0; e < D; e++)
                            dot += (double)ocd_cuda_load(&q[at(p.q, b, m, h, i, e)]) * ocd_cuda_load(&k[at(p.k, b, mk, h, j, e)]);
                        s[j] = dot * p.sm_scaler, mxs = std::max(mxs, s[j]);
                    }
                    for (int j = a; any && j < z; j++) sum += s[j] = exp(s[j] - mxs);
                    for (int e = 0; e < D; e++) {
                        double want = 0, got = ocd_cuda_load(&o[at(p.o, b, m, h, i, e)]);
                        int64_t ri = ((int64_t)(b * c.beams + m) * c.heads + h) * c.max_q + i;
                        for (int j = a; any && j < z; j++) {
                            bool keep = c.dropout == 0 || ocd_attn_core_keep(gen[0], gen[1], d.threshold, (uint64_t)ri * c.max_kv + j);
                            want += keep ? s[j] / sum * d.drop_scale * ocd_cuda_load(&v[at(p.v, b, mk, h, j, e)]) : 0;
                        }
                        if (!in ? !std::isnan(got) : !(fabs(got - want) <= 1.5e-2 * std::max(1.0, fabs(want)))) {
                            printf("  %-28s FAILED at b %d m %d h %d i %d e %d: got %.6g, want %.6g\n", c.name, b, m, h,
                                   i, e, got, in ? want : NAN);
                            return false;
                        }
                    }
                    if (!in) continue;
                    float lse = ((const float *)(reserve.data() + 16))[((b * c.beams + m) * c.heads + h) * c.max_q + i];
                    double wl = any ? mxs + log(sum) : -INFINITY;
                    if (!(lse == wl || fabs(lse - wl) <= 1e-3 * std::max(1.0, fabs(wl)))) {
                        printf("  %-28s FAILED: statistics of row b %d m %d h %d i %d: %.6g, want %.6g\n", c.name, b, m,
                               h, i, lse, wl);
                        return false;
                    }
                }
    printf("  %-28s ok\n", c.name);
    return true;
}

/* one(c, ocd_type_tag<T>(), std::integral_constant<int, D>()) for every case c, T its data type
   (half or bfloat16) and D its head size (64 or 128); true when all return true. */
template <class C, size_t N, class One> bool attn_emu_cases(const C (&cases)[N], One one)
{
    bool ok = true;
    std::integral_constant<int, 64> d64;
    std::integral_constant<int, 128> d128;
    for (const C &c : cases) {
        bool wide = c.d == 128;
        if (c.t == CUDNN_DATA_HALF) ok &= wide ? one(c, ocd_type_tag<__half>(), d128) : one(c, ocd_type_tag<__half>(), d64);
        else ok &= wide ? one(c, ocd_type_tag<__nv_bfloat16>(), d128) : one(c, ocd_type_tag<__nv_bfloat16>(), d64);
    }
    return ok;
}

/* Every case through its driver (attn_emu_case: the forward's above, the backward's in
   attn_emulate_bwd.h), emulate(ocd_type_tag<T>(), std::integral_constant<int, D>(), d) the
   emulation of the case's data type T and head size D (false: it found a fault); true when all
   pass. */
template <class C, size_t N, class Applies, class Emulate>
bool attn_emu_run_cases(const C (&cases)[N], cudnnHandle_t handle, emu_rng &random, Applies applies, Emulate emulate)
{
    return attn_emu_cases(cases, [&](const C &c, auto t, auto dd) {
        return attn_emu_case<typename decltype(t)::type, decltype(dd)::value>(
            c, handle, random, applies, [&](const ocd_attn_dev &d) { return emulate(t, dd, d); });
    });
}

/* The applicability of a Hopper entry (applies) on a small half problem of head 64 that it
   serves: served; declined on compute capability 9.9, declined once change(p, true) has made the
   problem one it does not serve (change(p, false) undoes it). Prints the check's line; true when it passes. */
template <class Applies, class Change> bool attn_emu_sm90_declines(cudnnHandle_t handle, Applies applies, Change change)
{
    ocd_attn_core_problem p;
    memset(&p, 0, sizeof p);
    std::vector<__half> buf(64 * 64);
    p.dtype = CUDNN_DATA_HALF, p.batch = p.beams = p.heads = 1, p.max_q = p.max_kv = p.q_count = 64;
    p.head_qk = p.head_v = 64;
    ocd_attn_operand x = {buf.data(), {0, 0, 0, 64, 1}};
    p.q = p.k = p.v = p.o = p.d_o = x;
    ocd_attn_core_call call = {&p, nullptr, nullptr};
    bool ok = applies(handle, &call) == nullptr;
    handle->cc_minor = 9;
    ok &= applies(handle, &call) != nullptr;
    handle->cc_minor = 0;
    change(p, true);
    ok &= applies(handle, &call) != nullptr;
    change(p, false);
    printf("  %-28s %s\n", "applicability", ok ? "ok" : "FAILED");
    return ok;
}

} // namespace

#endif /* OCD_TESTS_EMULATE_ATTN_EMULATE_H */
