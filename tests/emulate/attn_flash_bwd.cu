/* attn_flash_bwd.cu: the fused attention backward (src/cuda/attn_core_flash_bwd.cu) with every
   thread's own logic run on the CPU, against a double-precision reference of dq, dk and dv: the
   entry's applicability (on a handle of compute capability 9.0), the kernel argument and its
   workspace places (ocd_attn_dev_init), the prologue's D_i per row, each block's walk over the
   query blocks that reach its keys (the __syncthreads_or of the kernel done here over the
   threads' rows), the tile loads (cp.async as a host copy) into both stages, the ldmatrix
   addresses of K, V, Q, dO and dS, the recomputed probabilities, dropout and dS of each thread's
   accumulators, dS through shared memory, the dq accumulation (atomicAdd as a plain add), the dk
   and dv stores and the final dq conversion. ldmatrix and mma.sync are emulated from the PTX ISA
   (mma_emulate.h). The forward's output and row statistics come from the reference, rounded as
   the forward stores them.

   Cases: half and bfloat16, heads of 64 and 128, partial query and key tiles, per-sequence
   lengths, causal and sliding windows and rows without keys, both query maps, the time-major
   layout, accumulation into prior gradients, dropout, and a query range that is not every step. Prints a line per case with the largest
   error; exits 1 if any is out of tolerance. */
#include "cuda/attn_core_flash_bwd.cu"

#include "attn_emulate_bwd.h"
#include "emu_handle.h"
#include "mma_emulate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

emu_rng emu_random{91u};

/* One warp's ldmatrix.x4: lane l's row address from addr(l). */
template <typename F> void ldm(uint32_t out[32][4], bool trans, F addr)
{
    const void *a[32];
    for (int l = 0; l < 32; l++) a[l] = addr(l);
    ldmatrix_x4(out, a, trans);
}

/* One warp's two mma.sync of an ldmatrix.x4 B pair: c[l][2 j] += a b{0, 1}, c[l][2 j + 1] += a b{2, 3}. */
template <typename T, int N> void mma_pair(float (*c)[N][4], int j, const uint32_t a[32][4], const uint32_t b[32][4])
{
    uint32_t b0[32][2], b1[32][2];
    float c0[32][4], c1[32][4];
    for (int l = 0; l < 32; l++) {
        b0[l][0] = b[l][0], b0[l][1] = b[l][1], b1[l][0] = b[l][2], b1[l][1] = b[l][3];
        memcpy(c0[l], c[l][2 * j], 16), memcpy(c1[l], c[l][2 * j + 1], 16);
    }
    mma<T>(c0, a, b0);
    mma<T>(c1, a, b1);
    for (int l = 0; l < 32; l++) memcpy(c[l][2 * j], c0[l], 16), memcpy(c[l][2 * j + 1], c1[l], 16);
}

/* Runs the three kernels of the launch the entry makes, thread by thread. */
template <typename T, int D> bool emulate(const ocd_attn_dev &d)
{
    typedef bwd_smem<D> L;
    constexpr int BQ = L::BQ, KS = D / 16, NS = BQ / 8, NO = D / 8, QG = BQ / 16;
    const ocd_attn_core_problem &p = d.p;
    int64_t rows = (int64_t)p.batch * p.beams * p.heads * p.q_count;
    memset(d.dq_acc, 0, bwd_acc_bytes(d));
    for (int64_t r = 0; r < rows; r++) bwd_prep_row<T>(d, r);

    dim3 grid = bwd_grid<BK>(d);
    std::vector<T> sm(L::BYTES / sizeof(T));
    T *sk = sm.data() + L::K, *sv = sm.data() + L::V, *sds = sm.data() + L::DS;
    static bwd_row brows[2][BQ];
    static float dk[WARPS][32][NO][4], dv[WARPS][32][NO][4], s[32][NS][4], dp[32][NS][4], dq[32][DQW / 8][4];
    for (unsigned bx = 0; bx < grid.x; bx++)
        for (unsigned u = 0; u < grid.y; u++) {
            int h = u % p.heads, mk = u / p.heads % d.kv_beams, b = u / p.heads / d.kv_beams;
            int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
            int j0 = bx * BK;
            const bwd_walk w = bwd_walk_of(d, mk, j0, lkv, BQ);
            const float scale2 = (float)(p.sm_scaler * 1.4426950408889634);
            memset(dk, 0, sizeof dk), memset(dv, 0, sizeof dv);
            if (w.nit > 0)
                for (int tid = 0; tid < THREADS; tid++) {
                    flash_load_tile<D, BK>(sk, p.k, b, mk, h, j0, lkv, tid);
                    flash_load_tile<D, BK>(sv, p.v, b, mk, h, j0, lkv, tid);
                }
            /* bwd_next, every thread's row and the block's vote */
            bwd_lq lqc; /* every thread's cache holds the same */
            auto next = [&](int it, bwd_row *mine) {
                for (; it < w.nit; it++) {
                    int m = w.m0 + it / w.nqb, i0 = p.q_first + (it % w.nqb) * BQ;
                    bool any = false;
                    for (int tid = 0; tid < BQ; tid++) {
                        mine[tid] = bwd_row_info(d, b, m, h, i0 + tid, lqc.of(p, b, m), lkv);
                        any |= bwd_reaches<BK>(mine[tid], j0);
                    }
                    if (any) break;
                }
                return it;
            };
            auto load = [&](int it, int st) {
                int m = w.m0 + it / w.nqb, i0 = p.q_first + (it % w.nqb) * BQ;
                int qend = std::min(p.q_first + p.q_count, lqc.of(p, b, m));
                T *sq = sm.data() + L::Q + st * L::STAGE;
                for (int tid = 0; tid < THREADS; tid++) {
                    flash_load_tile<D, BQ>(sq, p.q, b, m, h, i0, qend, tid);
                    flash_load_tile<D, BQ>(sq + BQ * L::LD, p.d_o, b, m, h, i0, qend, tid);
                }
            };
            bwd_row mine[BQ];
            int cur = next(0, mine);
            if (cur < w.nit) memcpy(brows[0], mine, sizeof mine), load(cur, 0);
            for (int st = 0; cur < w.nit; st ^= 1) {
                int nxt = next(cur + 1, mine);
                if (nxt < w.nit) memcpy(brows[st ^ 1], mine, sizeof mine), load(nxt, st ^ 1);
                int m = w.m0 + cur / w.nqb, i0 = p.q_first + (cur % w.nqb) * BQ;
                const T *cq = sm.data() + L::Q + st * L::STAGE, *cdo = cq + BQ * L::LD;
                const bwd_row *cr = brows[st];
                for (int wp = 0; wp < WARPS; wp++) {
                    memset(s, 0, sizeof s), memset(dp, 0, sizeof dp);
                    for (int ks = 0; ks < KS; ks++) {
                        uint32_t kf[32][4], vf[32][4];
                        ldm(kf, false, [&](int l) { return flash_a_addr<L::LD>((const T *)sk, wp * 16, ks * 16, l); });
                        ldm(vf, false, [&](int l) { return flash_a_addr<L::LD>((const T *)sv, wp * 16, ks * 16, l); });
                        for (int j = 0; j < NS / 2; j++) {
                            uint32_t qf[32][4], of[32][4];
                            ldm(qf, false, [&](int l) { return flash_b_addr<L::LD>(cq, j * 16, ks * 16, l); });
                            mma_pair<T>(s, j, kf, qf);
                            ldm(of, false, [&](int l) { return flash_b_addr<L::LD>(cdo, j * 16, ks * 16, l); });
                            mma_pair<T>(dp, j, vf, of);
                        }
                    }
                    for (int l = 0; l < 32; l++)
                        if (p.dropout > 0) bwd_probs<true>(d, s[l], dp[l], cr, b, m, h, i0, j0 + wp * 16, l, scale2);
                        else bwd_probs<false>(d, s[l], dp[l], cr, b, m, h, i0, j0 + wp * 16, l, scale2);
                    for (int kk = 0; kk < BQ / 16; kk++) {
                        uint32_t pf[32][4], sf[32][4];
                        for (int l = 0; l < 32; l++) flash_p_frag<T>(pf[l], s[l], kk), flash_p_frag<T>(sf[l], dp[l], kk);
                        for (int j = 0; j < NO / 2; j++) {
                            uint32_t of[32][4], qf[32][4];
                            ldm(of, true, [&](int l) { return flash_bt_addr<L::LD>(cdo, kk * 16, j * 16, l); });
                            mma_pair<T>(dv[wp], j, pf, of);
                            ldm(qf, true, [&](int l) { return flash_bt_addr<L::LD>(cq, kk * 16, j * 16, l); });
                            mma_pair<T>(dk[wp], j, sf, qf);
                        }
                    }
                    for (int l = 0; l < 32; l++) bwd_store_ds<T, L::LDS>(sds, dp[l], wp, l);
                }
                /* the barrier: every warp's dS is in shared memory */
                for (int wp = 0; wp < WARPS; wp++) {
                    int qg = wp % QG, c0 = wp / QG * DQW;
                    memset(dq, 0, sizeof dq);
                    for (int kk = 0; kk < BK / 16; kk++) {
                        uint32_t af[32][4];
                        ldm(af, false, [&](int l) { return flash_a_addr<L::LDS>((const T *)sds, qg * 16, kk * 16, l); });
                        for (int j = 0; j < DQW / 16; j++) {
                            uint32_t kf[32][4];
                            ldm(kf, true, [&](int l) { return flash_bt_addr<L::LD>((const T *)sk, kk * 16, c0 + j * 16, l); });
                            mma_pair<T>(dq, j, af, kf);
                        }
                    }
                    for (int l = 0; l < 32; l++) bwd_add_dq<BK>(d, dq[l], cr, b, m, h, i0, j0, qg, c0, l);
                }
                cur = nxt;
            }
            for (int wp = 0; wp < WARPS; wp++)
                for (int l = 0; l < 32; l++) {
                    bwd_store_kv<T>(d, p.dk, b, mk, h, j0, lkv, dk[wp][l], (float)p.sm_scaler, wp, l);
                    bwd_store_kv<T>(d, p.dv, b, mk, h, j0, lkv, dv[wp][l], 1.f, wp, l);
                }
        }
    for (int64_t t = 0; t < rows * p.head_qk; t++) bwd_dq_elem<T>(d, t);
    return true;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 0);
    const emu_bwd_case cases[] = {
        {"f16_d64_partial_tiles", CUDNN_DATA_HALF, 2, 1, 2, 70, 90, 64, false, true, false, false, 0, 0},
        {"bf16_d64_causal_time_major", CUDNN_DATA_BFLOAT16, 1, 2, 2, 130, 130, 64, false, true, true, false, 1, 0},
        {"f16_d128_all_to_one_sliding", CUDNN_DATA_HALF, 2, 2, 1, 100, 150, 128, true, true, false, false, 2, 0},
        {"bf16_d128_accumulate", CUDNN_DATA_BFLOAT16, 1, 1, 2, 40, 200, 128, false, false, true, true, 0, 0},
        {"f16_d64_dropout", CUDNN_DATA_HALF, 1, 2, 1, 80, 100, 64, false, true, false, false, 1, 0.3},
        {"bf16_d128_all_to_one_dropout", CUDNN_DATA_BFLOAT16, 1, 3, 1, 50, 70, 128, true, true, false, true, 2, 0.2},
        {"f16_d64_query_range", CUDNN_DATA_HALF, 2, 1, 1, 90, 100, 64, false, true, true, false, 2, 0.1, 17, 50},
        {"bf16_d128_query_range", CUDNN_DATA_BFLOAT16, 1, 2, 1, 60, 80, 128, true, false, false, true, 1, 0, 33, 20},
    };
    bool ok = attn_emu_run_cases(cases, &ctx, emu_random, ocd_cuda_attn_bwd_flash_applies,
                                      [](auto t, auto dd, const ocd_attn_dev &d) {
                                          return emulate<typename decltype(t)::type, decltype(dd)::value>(d);
                                      });
    return ok ? 0 : 1;
}
