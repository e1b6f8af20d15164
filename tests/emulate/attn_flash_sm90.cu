/* attn_flash_sm90.cu: the Hopper attention forward (src/cuda/attn_core_flash_sm90.cu, as the
   sm_90a object library compiles it: OCD_SM90A) with every thread's own logic run on the CPU,
   against a double-precision reference: the entry's applicability (compute capability 9.0 only,
   no dropout), the kernel argument, the producer's tile
   loads into the 128-byte-swizzled layout (cp.async as a host copy), the descriptors of Q, K and
   V read back through the PTX ISA's canonical layouts (K-major for Q and K, N-major for V:
   wgmma_emulate.h), the S = Q K^T and O += P V products of each consumer warpgroup by the
   emulated wgmma (A from shared memory, then from the probability registers flash_p_frag packs
   from the score accumulators), in the kernel's order (O += P V of a key tile after the scores
   of the next, before its rescale), each warp's masking, online softmax and rescaling across
   key tiles (the kernel's flash_softmax_step, the quad shuffles done here in its order), the
   mbarrier phases each use of a stage waits for, and the output and statistics stores. The
   block's key range is the minimum and maximum of the consumer threads' windows, as the
   kernel's shared atomics make it.

   Cases: half and bfloat16, heads of 64 and 128, several query blocks and key tiles, partial
   ones, per-sequence lengths, causal and sliding windows and rows without keys, both query
   maps, the query range of an inference step and the time-major layout. Prints a line per case;
   exits 1 if any differs. */
#define OCD_SM90A /* the entry as the sm_90a object library builds it */
#include "cuda/attn_core_flash_sm90.cu"

#include "attn_emulate.h"
#include "emu_handle.h"
#include "wgmma_emulate.h"

#include <cstdlib>

namespace {

emu_rng emu_random{93u};

/* Runs every block of the launch the entry makes: the producer's loads, then each consumer
   warpgroup's steps, thread by thread, one key tile after the other. */
template <typename T, int D> bool emulate(const ocd_attn_dev &d)
{
    typedef sm90_smem<D> L;
    constexpr int NS = BN / 8, NO = D / 8;
    const ocd_attn_core_problem &p = d.p;
    dim3 grid = flash_fwd_grid<BM>(p);
    std::vector<uint8_t> smem(L::BAR); /* shared address 0 is the aligned start */
    static float s[2][128][NS][4], acc[2][128][NO][4], mx[2][128][2], lsum[2][128][2], corr[128][2];
    static int rlo[2][128][2], rhi[2][128][2];
    static uint32_t pf[2][128][BN / 16][4];
    for (unsigned bx = 0; bx < grid.x; bx++)
        for (unsigned u = 0; u < grid.y; u++) {
            int h = u % p.heads, m = u / p.heads % p.beams, b = u / p.heads / p.beams, mk = p.kv_shared ? 0 : m;
            int lq = ocd_attn_core_clamp(p.len_q[b * p.beams + m], p.max_q);
            int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
            int i0 = p.q_first + bx * BM, iend = p.q_first + p.q_count;
            int k0 = INT_MAX, k1 = 0;
            for (int g = 0; g < 2; g++)
                for (int wt = 0; wt < 128; wt++) {
                    flash_windows(d, i0, iend, lq, lkv, g * 4 + wt / 32, wt % 32, rlo[g][wt], rhi[g][wt]);
                    for (int hr = 0; hr < 2; hr++)
                        if (rlo[g][wt][hr] < rhi[g][wt][hr])
                            k0 = std::min(k0, rlo[g][wt][hr]), k1 = std::max(k1, rhi[g][wt][hr]);
                }
            int tiles = k0 < k1 ? (k1 - k0 + BN - 1) / BN : 0, filled[STAGES] = {}, emptied[STAGES] = {};
            memset(smem.data(), 0xff, smem.size()); /* NaN-like bytes wherever nothing was copied */
            for (int wt = 0; wt < 128; wt++)
                flash_load_tile<D, BM, true>((T *)smem.data(), p.q, b, m, h, i0, std::min(iend, lq), wt);
            float scale2 = 0;
            for (int g = 0; g < 2; g++)
                for (int wt = 0; wt < 128; wt++) scale2 = flash_rows_init(p, acc[g][wt], mx[g][wt], lsum[g][wt]);
            /* step t: the producer's fill of tile t; each consumer's S of tile t, O += P V of tile
               t - 1, then the softmax of tile t, the rescale and the new P (the kernel's order) */
            for (int t = 0; t <= tiles; t++) {
                int st = t % STAGES, sp = (t + STAGES - 1) % STAGES, kt = k0 + t * BN;
                /* the mbarrier phases: the producer's wait on the stage's release of tile
                   t - STAGES, the consumers' on its fill for tile t (K), and for tile t - 1 (V) */
                if ((t < tiles && t >= STAGES && !emu_mbar_phase_ok(emptied[st], sm90_parity(t - STAGES))) ||
                    (t < tiles && !emu_mbar_phase_ok(++filled[st], sm90_parity(t))) ||
                    (t > 0 && !emu_mbar_phase_ok(filled[sp], sm90_parity(t - 1)))) {
                    printf("  the mbarrier parities of step %d\n", t);
                    return false;
                }
                for (int wt = 0; t < tiles && wt < 128; wt++) {
                    flash_load_tile<D, BN, true>((T *)(smem.data() + L::K0 + st * L::TILE), p.k, b, mk, h, kt, lkv, wt);
                    flash_load_tile<D, BN, true>((T *)(smem.data() + L::V0 + st * L::TILE), p.v, b, mk, h, kt, lkv, wt);
                }
                for (int g = 0; g < 2; g++) {
                    float(*sf)[BN / 2] = reinterpret_cast<float(*)[BN / 2]>(s[g]);
                    float(*af)[D / 2] = reinterpret_cast<float(*)[D / 2]>(acc[g]);
                    for (int ks = 0; t < tiles && ks < D / 16; ks++)
                        if (!emu_wgmma_ss<T, BN>(sf, smem, sm90_desc_q<D>(0, g, ks), sm90_desc_k<D>(0, st, ks), ks > 0)) {
                            printf("  a descriptor of S reads outside the tiles\n");
                            return false;
                        }
                    for (int kk = 0; t > 0 && kk < BN / 16; kk++) {
                        uint32_t areg[128][4];
                        for (int wt = 0; wt < 128; wt++) memcpy(areg[wt], pf[g][wt][kk], sizeof areg[wt]);
                        if (!emu_wgmma_rs<T, D, true>(af, areg, smem, sm90_desc_v<D>(0, sp, kk), true)) {
                            printf("  a descriptor of V reads outside the tiles\n");
                            return false;
                        }
                    }
                    if (t == tiles) continue;
                    for (int w = 0; w < 4; w++)
                        for (int hr = 0; hr < 2; hr++)
                            attn_emu_softmax_step(&s[g][w * 32], hr, kt, &rlo[g][w * 32], &rhi[g][w * 32], scale2,
                                                  &mx[g][w * 32], &lsum[g][w * 32], &corr[w * 32]);
                    for (int wt = 0; wt < 128; wt++) {
                        flash_rescale(acc[g][wt], corr[wt]);
                        for (int kk = 0; kk < BN / 16; kk++) flash_p_frag<T>(pf[g][wt][kk], s[g][wt], kk);
                    }
                }
                if (t > 0) emptied[sp]++; /* both consumers have arrived */
            }
            for (int g = 0; g < 2; g++)
                for (int wt = 0; wt < 128; wt++)
                    for (int hr = 0; hr < 2; hr++) {
                        int i = flash_row(i0, g * 4 + wt / 32, wt % 32, hr);
                        if (i < iend) flash_store<T>(d, b, m, h, i, acc[g][wt], hr, lsum[g][wt][hr], mx[g][wt][hr], wt % 32);
                    }
        }
    return true;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 0);
    const emu_fwd_case cases[] = {
        {"f16_d64_blocks_tiles", CUDNN_DATA_HALF, 1, 1, 2, 300, 330, 64, false, true, false, 0, 0, 300, 0},
        {"bf16_d64_causal_time_major", CUDNN_DATA_BFLOAT16, 1, 2, 1, 200, 200, 64, false, true, true, 1, 0, 200, 0},
        {"f16_d128_all_to_one_sliding", CUDNN_DATA_HALF, 2, 2, 1, 150, 290, 128, true, true, false, 2, 0, 150, 0},
        {"bf16_d128_inference_step", CUDNN_DATA_BFLOAT16, 1, 1, 2, 40, 300, 128, false, false, true, 0, 37, 1, 0},
        {"bf16_d128_partial", CUDNN_DATA_BFLOAT16, 1, 1, 1, 70, 90, 128, false, false, false, 1, 0, 70, 0},
    };
    bool ok = attn_emu_sm90_declines(&ctx, ocd_cuda_attn_fwd_sm90_applies,
                                     [](ocd_attn_core_problem &p, bool on) { p.dropout = on ? 0.1 : 0; });
    ok &= attn_emu_run_cases(cases, &ctx, emu_random, ocd_cuda_attn_fwd_sm90_applies,
                                 [](auto t, auto dd, const ocd_attn_dev &d) {
                                     return emulate<typename decltype(t)::type, decltype(dd)::value>(d);
                                 });
    return ok ? 0 : 1;
}
