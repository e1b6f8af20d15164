/* attn_flash_bwd_sm90.cu: the Hopper attention backward (src/cuda/attn_core_flash_bwd_sm90.cu, as
   the sm_90a object library compiles it: OCD_SM90A) with every thread's own logic run on the
   CPU, against the double-precision reference gradients (attn_emulate_bwd.h): the entry's
   applicability (compute capability 9.0 only), the kernel
   argument and its workspace places, the prologue's D_i, the producer's walk over the query
   blocks that reach the block's keys (its vote done here over the threads' rows), its tile
   loads into the 128-byte-swizzled layout (cp.async as a host copy) and the rows and slot it
   leaves with each stage, the mbarrier phases each use of a stage waits for, the descriptors of
   K, V, Q, dO and dS read back through the PTX ISA's canonical layouts (wgmma_emulate.h: K-major
   for S^T and dP~^T, N-major for dV, dK and dQ's B, MN-major for dQ's A), the consumers'
   products by the emulated wgmma in the kernel's order (S^T and dP~^T, then dV and dK with A
   from the registers flash_p_frag packs, then, once both consumers' dS^T is in shared memory,
   each consumer's half of dQ into the float dQ block), the recomputed probabilities and dropout
   of each thread, the dq accumulation (each row that reaches the keys, as the bulk reduction's
   host form adds it), the dk and dv stores and the final dq conversion.

   Cases: half and bfloat16, heads of 64 and 128, several key blocks and query blocks, partial
   ones and odd lengths, per-sequence lengths, causal and sliding windows and rows without keys,
   both query maps, the time-major layout, accumulation into prior gradients, dropout, and a
   query range that is not every step. Prints a line per case with the largest error; exits 1
   if any is out of tolerance. */
#define OCD_SM90A /* the entry as the sm_90a object library builds it */
#include "cuda/attn_core_flash_bwd_sm90.cu"

#include "attn_emulate_bwd.h"
#include "emu_handle.h"
#include "wgmma_emulate.h"

#include <cstdlib>

namespace {

emu_rng emu_random{97u};

/* Runs the three kernels of the launch the entry makes; the main one block by block, its
   producer's step and then each consumer's, thread by thread, one query block after the other. */
template <typename T, int D> bool emulate(const ocd_attn_dev &d)
{
    typedef bwd90_smem<D> L;
    constexpr int NS = BQ / 8, NO = D / 8, KS = D / 16, NQ = D / 16;
    const ocd_attn_core_problem &p = d.p;
    int64_t nrows = (int64_t)p.batch * p.beams * p.heads * p.q_count;
    memset(d.dq_acc, 0, bwd_acc_bytes(d));
    for (int64_t r = 0; r < nrows; r++) bwd_prep_row<T>(d, r);

    dim3 grid = bwd_grid<BN>(d);
    std::vector<uint8_t> smem(L::ROWS); /* shared address 0 is the aligned start */
    static bwd_row rows[STAGES][BQ];
    static int slot[STAGES];
    static float dk[2][128][NO][4], dv[2][128][NO][4], s[2][128][NS][4], dp[2][128][NS][4], dq[128][NQ][4];
    static uint32_t pf[2][BQ / 16][128][4], sf[2][BQ / 16][128][4]; /* [consumer][k-step][thread] */
    const float scale2 = (float)(p.sm_scaler * 1.4426950408889634);
    for (unsigned bx = 0; bx < grid.x; bx++)
        for (unsigned u = 0; u < grid.y; u++) {
            int h = u % p.heads, mk = u / p.heads % d.kv_beams, b = u / p.heads / d.kv_beams;
            int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
            int j0 = bx * BN;
            const bwd_walk w = bwd_walk_of(d, mk, j0, lkv, BQ);
            memset(smem.data(), 0xff, smem.size()); /* NaN-like bytes wherever nothing was copied */
            memset(dk, 0, sizeof dk), memset(dv, 0, sizeof dv);
            if (w.nit > 0)
                for (int wt = 0; wt < 128; wt++) {
                    flash_load_tile<D, BN, true>((T *)(smem.data() + L::K0), p.k, b, mk, h, j0, lkv, wt);
                    flash_load_tile<D, BN, true>((T *)(smem.data() + L::V0), p.v, b, mk, h, j0, lkv, wt);
                }
            bwd_lq lqc; /* every producer thread's cache holds the same */
            int filled[STAGES] = {}, emptied[STAGES] = {};
            for (int n = 0, it = 0;; n++, it++) {
                const int st = n % STAGES, buf = n % 2;
                /* the producer: bwd_next with its vote, the wait for the stage's release, the
                   loads, rows and slot, the arrival */
                bwd_row mine[BQ];
                for (; it < w.nit; it++) {
                    int m = w.m0 + it / w.nqb, i0 = p.q_first + (it % w.nqb) * BQ;
                    bool any = false;
                    for (int wt = 0; wt < BQ; wt++) {
                        mine[wt] = bwd_row_info(d, b, m, h, i0 + wt, lqc.of(p, b, m), lkv);
                        any |= bwd_reaches<BN>(mine[wt], j0);
                    }
                    if (any) break;
                }
                if (n >= STAGES && !emu_mbar_phase_ok(emptied[st], bwd90_parity(n - STAGES))) {
                    printf("  the producer's mbarrier parity at step %d\n", n);
                    return false;
                }
                if (it < w.nit) {
                    int m = w.m0 + it / w.nqb, i0 = p.q_first + (it % w.nqb) * BQ;
                    int qend = std::min(p.q_first + p.q_count, lqc.of(p, b, m));
                    for (int wt = 0; wt < 128; wt++) {
                        flash_load_tile<D, BQ, true>((T *)(smem.data() + L::tile(st, 0)), p.q, b, m, h, i0, qend, wt);
                        flash_load_tile<D, BQ, true>((T *)(smem.data() + L::tile(st, 1)), p.d_o, b, m, h, i0, qend, wt);
                    }
                    memcpy(rows[st], mine, sizeof mine);
                }
                slot[st] = it < w.nit ? it : -1;
                filled[st]++;
                /* the consumers: the wait for the stage's fill, then the block's products */
                if (!emu_mbar_phase_ok(filled[st], bwd90_parity(n))) {
                    printf("  the consumers' mbarrier parity at step %d\n", n);
                    return false;
                }
                const int cit = slot[st];
                if (cit < 0) break;
                const int m = w.m0 + cit / w.nqb, i0 = p.q_first + (cit % w.nqb) * BQ;
                const bwd_row *cr = rows[st];
                for (int g = 0; g < 2; g++) {
                    float(*sflat)[BQ / 2] = reinterpret_cast<float(*)[BQ / 2]>(s[g]);
                    float(*dpflat)[BQ / 2] = reinterpret_cast<float(*)[BQ / 2]>(dp[g]);
                    float(*dkflat)[D / 2] = reinterpret_cast<float(*)[D / 2]>(dk[g]);
                    float(*dvflat)[D / 2] = reinterpret_cast<float(*)[D / 2]>(dv[g]);
                    for (int ks = 0; ks < KS; ks++)
                        if (!emu_wgmma_ss<T, BQ>(sflat, smem, bwd90_desc_kv<D>(0, L::K0, g, ks),
                                                 bwd90_desc_qt<D>(0, st, 0, ks), ks > 0) ||
                            !emu_wgmma_ss<T, BQ>(dpflat, smem, bwd90_desc_kv<D>(0, L::V0, g, ks),
                                                 bwd90_desc_qt<D>(0, st, 1, ks), ks > 0)) {
                            printf("  a descriptor of S^T or dP^T reads outside the tiles\n");
                            return false;
                        }
                    /* S^T has landed: P, the A registers of P~^T, dV (dP~^T still in flight) */
                    static uint32_t keep[128];
                    for (int wt = 0; wt < 128; wt++) {
                        int cw = g * 4 + wt / 32, lane = wt % 32;
                        keep[wt] = p.dropout > 0 ? bwd_probs_p<true>(d, s[g][wt], cr, b, m, h, i0, j0 + cw * 16, lane, scale2)
                                                 : bwd_probs_p<false>(d, s[g][wt], cr, b, m, h, i0, j0 + cw * 16, lane, scale2);
                        for (int kk = 0; kk < BQ / 16; kk++)
                            if (p.dropout > 0) bwd_p_frag<T, true>(pf[g][kk][wt], d, s[g][wt], keep[wt], kk);
                            else bwd_p_frag<T, false>(pf[g][kk][wt], d, s[g][wt], keep[wt], kk);
                    }
                    for (int kk = 0; kk < BQ / 16; kk++)
                        if (!emu_wgmma_rs<T, D, true>(dvflat, pf[g][kk], smem, bwd90_desc_qt_mn<D>(0, st, 1, kk), true)) {
                            printf("  a descriptor of dO (N-major) reads outside the tiles\n");
                            return false;
                        }
                    /* dP~^T has landed: dS^T, its A registers and its stores, dK (dV in flight) */
                    for (int wt = 0; wt < 128; wt++) {
                        int cw = g * 4 + wt / 32, lane = wt % 32;
                        if (p.dropout > 0) bwd_probs_ds<true>(d, s[g][wt], dp[g][wt], cr, keep[wt], lane);
                        else bwd_probs_ds<false>(d, s[g][wt], dp[g][wt], cr, keep[wt], lane);
                        for (int kk = 0; kk < BQ / 16; kk++) flash_p_frag<T>(sf[g][kk][wt], dp[g][wt], kk);
                        bwd90_store_ds<T>((T *)(smem.data() + L::DS0 + buf * L::DS), dp[g][wt], cw, lane);
                    }
                    for (int kk = 0; kk < BQ / 16; kk++)
                        if (!emu_wgmma_rs<T, D, true>(dkflat, sf[g][kk], smem, bwd90_desc_qt_mn<D>(0, st, 0, kk), true)) {
                            printf("  a descriptor of Q (N-major) reads outside the tiles\n");
                            return false;
                        }
                }
                /* the consumers' meeting: both halves of dS^T are in shared memory */
                for (int g = 0; g < 2; g++) {
                    float(*dqflat)[D / 4] = reinterpret_cast<float(*)[D / 4]>(dq);
                    for (int ks = 0; ks < BN / 16; ks++)
                        if (!emu_wgmma_ss<T, D / 2, true>(dqflat, smem, bwd90_desc_ds<D>(0, buf, ks),
                                                          bwd90_desc_k_mn<D>(0, g, ks), ks > 0)) {
                            printf("  a descriptor of dS or K (MN-major) reads outside the tiles\n");
                            return false;
                        }
                    /* each warp's rows of this half through the dQ block, one bulk reduction each */
                    float *sdq = (float *)(smem.data() + L::DQ0);
                    for (int wt = 0; wt < 128; wt++) bwd90_store_dq<L::DQP>(sdq, dq[wt], wt / 32, g * (D / 2), wt % 32);
                    for (int wq = 0; wq < 4; wq++)
                        for (int lane = 0; lane < 16; lane++) {
                            int r = wq * 16 + lane, c0 = g * (D / 2);
                            float *acc_row = bwd90_dq_row(d, cr, b, m, h, i0, j0, r);
                            if (acc_row != nullptr) ocd_bulk_reduce_add_f32(acc_row + c0, sdq + r * L::DQP + c0, D / 2 * 4);
                        }
                }
                emptied[st]++; /* both consumers have arrived */
            }
            for (int g = 0; g < 2; g++)
                for (int wt = 0; wt < 128; wt++) {
                    bwd_store_kv<T>(d, p.dk, b, mk, h, j0, lkv, dk[g][wt], (float)p.sm_scaler, g * 4 + wt / 32, wt % 32);
                    bwd_store_kv<T>(d, p.dv, b, mk, h, j0, lkv, dv[g][wt], 1.f, g * 4 + wt / 32, wt % 32);
                }
        }
    for (int64_t t = 0; t < nrows * p.head_qk; t++) bwd_dq_elem<T>(d, t);
    return true;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 0);
    /* {name, type, batch, beams, heads, max_q, max_kv, head, kv_shared, lengths, time_major,
       accumulate, window, dropout, q_first, q_count} */
    const emu_bwd_case cases[] = {
        {"f16_d64_blocks", CUDNN_DATA_HALF, 1, 1, 2, 200, 300, 64, false, true, false, false, 0, 0},
        {"bf16_d64_causal_time_major", CUDNN_DATA_BFLOAT16, 1, 2, 1, 130, 270, 64, false, true, true, false, 1, 0},
        {"f16_d128_all_to_one_sliding", CUDNN_DATA_HALF, 2, 2, 1, 100, 150, 128, true, true, false, false, 2, 0},
        {"bf16_d128_accumulate", CUDNN_DATA_BFLOAT16, 1, 1, 2, 40, 200, 128, false, false, true, true, 0, 0},
        {"f16_d64_dropout", CUDNN_DATA_HALF, 1, 2, 1, 80, 140, 64, false, true, false, false, 1, 0.3},
        {"bf16_d128_all_to_one_dropout", CUDNN_DATA_BFLOAT16, 1, 3, 1, 50, 70, 128, true, true, false, true, 2, 0.2},
        {"f16_d64_query_range", CUDNN_DATA_HALF, 2, 1, 1, 90, 100, 64, false, true, true, false, 2, 0.1, 17, 50},
        {"bf16_d128_causal_odd", CUDNN_DATA_BFLOAT16, 1, 1, 1, 257, 261, 128, false, false, false, false, 1, 0},
        {"f16_d128_query_range", CUDNN_DATA_HALF, 1, 2, 1, 60, 80, 128, true, false, false, true, 1, 0, 33, 20},
    };
    bool ok = attn_emu_sm90_declines(&ctx, ocd_cuda_attn_bwd_sm90_applies,
                                     [](ocd_attn_core_problem &p, bool on) { p.head_qk = p.head_v = on ? 96 : 64; });
    ok &= attn_emu_run_cases(cases, &ctx, emu_random, ocd_cuda_attn_bwd_sm90_applies,
                                  [](auto t, auto dd, const ocd_attn_dev &d) {
                                      return emulate<typename decltype(t)::type, decltype(dd)::value>(d);
                                  });
    return ok ? 0 : 1;
}
