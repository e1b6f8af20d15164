/* attn_flash.cu: the fused attention forward (src/cuda/attn_core_flash.cu) with every thread's
   own logic run on the CPU, against a double-precision reference: the entry's applicability
   (ocd_cuda_attn_fwd_flash_applies on a handle of compute capability 9.0), the kernel argument
   (ocd_attn_dev_init), each thread's windows, the tile loads (cp.async as a host copy), the
   ldmatrix addresses of Q, K and V, the masking, online softmax and rescaling of each thread's
   score accumulators, the probabilities re-packed as A fragments, and the output and
   statistics stores. ldmatrix and mma.sync are emulated from the PTX ISA (mma_emulate.h); the
   shuffles within a quad are done here, in the kernel's order; the block's key range is the
   minimum and maximum of the threads' windows, as the kernel's shared atomics make it.

   Cases: half and bfloat16, heads of 64 and 128, partial query and key tiles, per-sequence
   lengths, causal and sliding windows and rows without keys, both query maps, the query range
   of an inference step, the time-major layout, and dropout. Prints a line per case; exits 1 if any
   differs. */
#include "cuda/attn_core_flash.cu"

#include "attn_emulate.h"
#include "emu_handle.h"
#include "mma_emulate.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

emu_rng emu_random{77u};

/* Runs every block of the launch the entry makes, thread by thread. */
template <typename T, int D> void emulate(const ocd_attn_dev &d)
{
    typedef flash_smem<D> L;
    constexpr int KS = D / 16, NO = D / 8, NS = BN / 8;
    const ocd_attn_core_problem &p = d.p;
    dim3 grid = flash_fwd_grid<BM>(p);
    std::vector<T> sq(L::Q), sk(2 * L::TILE), sv(2 * L::TILE);
    for (unsigned bx = 0; bx < grid.x; bx++)
        for (unsigned u = 0; u < grid.y; u++) {
            int h = u % p.heads, m = u / p.heads % p.beams, b = u / p.heads / p.beams, mk = p.kv_shared ? 0 : m;
            int lq = ocd_attn_core_clamp(p.len_q[b * p.beams + m], p.max_q);
            int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
            int i0 = p.q_first + bx * BM, iend = p.q_first + p.q_count;
            static int rlo[WARPS][32][2], rhi[WARPS][32][2];
            int k0 = INT_MAX, k1 = 0;
            for (int w = 0; w < WARPS; w++)
                for (int l = 0; l < 32; l++) {
                    flash_windows(d, i0, iend, lq, lkv, w, l, rlo[w][l], rhi[w][l]);
                    for (int hr = 0; hr < 2; hr++)
                        if (rlo[w][l][hr] < rhi[w][l][hr]) k0 = std::min(k0, rlo[w][l][hr]), k1 = std::max(k1, rhi[w][l][hr]);
                }
            for (int tid = 0; tid < THREADS; tid++) flash_load_tile<D>(sq.data(), p.q, b, m, h, i0, std::min(iend, lq), tid);
            int tiles = k0 < k1 ? (k1 - k0 + BN - 1) / BN : 0;
            static float acc[WARPS][32][NO][4], s[WARPS][32][NS][4], mx[WARPS][32][2], lsum[WARPS][32][2];
            static uint32_t qf[WARPS][KS][32][4];
            memset(acc, 0, sizeof acc);
            for (int w = 0; w < WARPS; w++)
                for (int l = 0; l < 32; l++) mx[w][l][0] = mx[w][l][1] = -INFINITY, lsum[w][l][0] = lsum[w][l][1] = 0;
            for (int t = 0; t < tiles; t++) {
                T *ck = sk.data() + (t % 2) * L::TILE, *cv = sv.data() + (t % 2) * L::TILE;
                for (int tid = 0; tid < THREADS; tid++) {
                    flash_load_tile<D>(ck, p.k, b, mk, h, k0 + t * BN, lkv, tid);
                    flash_load_tile<D>(cv, p.v, b, mk, h, k0 + t * BN, lkv, tid);
                }
                for (int w = 0; w < WARPS; w++) {
                    const void *addr[32];
                    if (t == 0)
                        for (int ks = 0; ks < KS; ks++) {
                            for (int l = 0; l < 32; l++) addr[l] = flash_a_addr<L::LD>(sq.data(), w * 16, ks * 16, l);
                            ldmatrix_x4(qf[w][ks], addr, false);
                        }
                    memset(s[w], 0, sizeof s[w]);
                    for (int ks = 0; ks < KS; ks++)
                        for (int j = 0; j < NS / 2; j++) {
                            uint32_t kf[32][4], b0[32][2], b1[32][2];
                            for (int l = 0; l < 32; l++) addr[l] = flash_b_addr<L::LD>((const T *)ck, j * 16, ks * 16, l);
                            ldmatrix_x4(kf, addr, false);
                            for (int l = 0; l < 32; l++)
                                b0[l][0] = kf[l][0], b0[l][1] = kf[l][1], b1[l][0] = kf[l][2], b1[l][1] = kf[l][3];
                            float c0[32][4], c1[32][4];
                            for (int l = 0; l < 32; l++) memcpy(c0[l], s[w][l][2 * j], 16), memcpy(c1[l], s[w][l][2 * j + 1], 16);
                            mma<T>(c0, qf[w][ks], b0);
                            mma<T>(c1, qf[w][ks], b1);
                            for (int l = 0; l < 32; l++) memcpy(s[w][l][2 * j], c0[l], 16), memcpy(s[w][l][2 * j + 1], c1[l], 16);
                        }
                    const float scale2 = (float)(p.sm_scaler * 1.4426950408889634);
                    float corr[32][2];
                    for (int hr = 0; hr < 2; hr++) {
                        attn_emu_softmax_step(s[w], hr, k0 + t * BN, rlo[w], rhi[w], scale2, mx[w], lsum[w], corr);
                        if (p.dropout > 0)
                            for (int l = 0; l < 32; l++)
                                flash_dropout(s[w][l], hr, k0 + t * BN, ocd_attn_row_index(p, b, m, h, flash_row(i0, w, l, hr)), l, d);
                    }
                    for (int l = 0; l < 32; l++)
                        for (int j = 0; j < NO; j++)
                            for (int e = 0; e < 4; e++) acc[w][l][j][e] *= corr[l][e / 2];
                    for (int kk = 0; kk < BN / 16; kk++) {
                        uint32_t pf[32][4];
                        for (int l = 0; l < 32; l++) flash_p_frag<T>(pf[l], s[w][l], kk);
                        for (int j = 0; j < NO / 2; j++) {
                            uint32_t vf[32][4], b0[32][2], b1[32][2];
                            for (int l = 0; l < 32; l++) addr[l] = flash_bt_addr<L::LD>((const T *)cv, kk * 16, j * 16, l);
                            ldmatrix_x4(vf, addr, true);
                            for (int l = 0; l < 32; l++)
                                b0[l][0] = vf[l][0], b0[l][1] = vf[l][1], b1[l][0] = vf[l][2], b1[l][1] = vf[l][3];
                            float c0[32][4], c1[32][4];
                            for (int l = 0; l < 32; l++) memcpy(c0[l], acc[w][l][2 * j], 16), memcpy(c1[l], acc[w][l][2 * j + 1], 16);
                            mma<T>(c0, pf, b0);
                            mma<T>(c1, pf, b1);
                            for (int l = 0; l < 32; l++) memcpy(acc[w][l][2 * j], c0[l], 16), memcpy(acc[w][l][2 * j + 1], c1[l], 16);
                        }
                    }
                }
            }
            for (int w = 0; w < WARPS; w++)
                for (int l = 0; l < 32; l++)
                    for (int hr = 0; hr < 2; hr++) {
                        int i = flash_row(i0, w, l, hr);
                        if (i < iend) flash_store<T>(d, b, m, h, i, acc[w][l], hr, lsum[w][l][hr], mx[w][l][hr], l);
                    }
        }
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 0);
    const emu_fwd_case cases[] = {
        {"f16_d64_partial_tiles", CUDNN_DATA_HALF, 2, 1, 2, 70, 90, 64, false, true, false, 0, 0, 70, 0},
        {"bf16_d64_causal_time_major", CUDNN_DATA_BFLOAT16, 1, 2, 2, 130, 130, 64, false, true, true, 1, 0, 130, 0},
        {"f16_d128_all_to_one_sliding", CUDNN_DATA_HALF, 2, 2, 1, 100, 150, 128, true, true, false, 2, 0, 100, 0},
        {"bf16_d128_inference_step", CUDNN_DATA_BFLOAT16, 1, 1, 2, 40, 200, 128, false, false, true, 0, 37, 1, 0},
        {"f16_d64_dropout", CUDNN_DATA_HALF, 1, 2, 1, 80, 100, 64, false, true, false, 1, 0, 80, 0.3},
    };
    bool ok = attn_emu_run_cases(cases, &ctx, emu_random, ocd_cuda_attn_fwd_flash_applies,
                                     [](auto t, auto dd, const ocd_attn_dev &d) {
                                         emulate<typename decltype(t)::type, decltype(dd)::value>(d);
                                         return true;
                                     });
    return ok ? 0 : 1;
}
