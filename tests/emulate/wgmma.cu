/* wgmma.cu (emulation): the index functions of src/cuda/wgmma.cuh against the PTX ISA's
   definitions (wgmma_emulate.h): the accumulator and A-register fragment maps against the ISA's
   figures, each a one-to-one map onto its tile; the 128-byte-swizzled K-major stage layout
   (ocd_wgmma_smem::offset, where a loader writes each 16-byte chunk) against the address the
   hardware reads each element from through the descriptors ocd_wgmma_desc_k128 builds, for every
   k-step, several 1024-byte aligned stage addresses and both warpgroups' A rows, and the same for
   the MN-major layout (ocd_wgmma_smem_mn, the filter gradient's operands); and whole
   K tiles multiplied by the emulated wgmma (A from shared memory, and A from registers) for
   N = 64, 128 and 256, fp16 and bf16, against a double-precision product. Prints a line per
   check; exits 1 if any fails. */
#include "cuda/wgmma.cuh"

#include "wgmma_emulate.h"
#include "conv_emulate.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

bool report(bool ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    return ok;
}

/* Every register of every thread at its ISA position, and each (row, column) of 64 x N once. */
template <int N> bool check_acc_map()
{
    std::vector<int> seen(64 * N, 0);
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < N / 2; i++) {
            int r = ocd_wgmma_acc_row(t, i), c = ocd_wgmma_acc_col(t, i);
            if (r != emu_d_row(t, i) || c != emu_d_col(t, i) || r < 0 || r >= 64 || c < 0 || c >= N) return false;
            seen[r * N + c]++;
        }
    for (int s : seen)
        if (s != 1) return false;
    return true;
}

bool check_afrag_map()
{
    int seen[64][16] = {};
    for (int t = 0; t < 128; t++)
        for (int e = 0; e < 8; e++) {
            int r = ocd_wgmma_afrag_row(t, e), c = ocd_wgmma_afrag_col(t, e);
            /* the ISA's figure: register e / 2 holds rows +8 for odd registers, columns +8 for
               registers 2 and 3 */
            int rr = 16 * (t / 32) + (t % 32) / 4 + 8 * ((e / 2) % 2), cc = 2 * (t % 4) + e % 2 + 8 * (e / 4);
            if (r != rr || c != cc) return false;
            seen[r][c]++;
        }
    for (auto &row : seen)
        for (int s : row)
            if (s != 1) return false;
    return true;
}

/* Each chunk of the stage written once, and each element read through a descriptor at the byte a
   loader wrote it to: stage at shared address base, A operand rows from row0 (a warpgroup's 64). */
template <typename T, int ROWS> bool check_layout(uint32_t base, int row0, int rows)
{
    typedef ocd_wgmma_smem<T, ROWS> L;
    std::vector<int> seen(L::STAGE / L::E, 0);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < L::CPR; c++) {
            int off = L::offset(r, c);
            if (off % L::E != 0 || off < 0 || off >= L::STAGE) return false;
            seen[off / L::E]++;
        }
    for (int s : seen)
        if (s != 1) return false;
    for (int ks = 0; ks < L::BK / L::KSTEP; ks++) {
        uint64_t desc = ocd_wgmma_desc_k128(base + (uint32_t)(row0 * L::BK * sizeof(T)), ks);
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < L::KSTEP; k++) {
                int kk = ks * L::KSTEP + k;
                uint32_t got, want = base + (uint32_t)((L::offset(row0 + r, kk / L::E) + kk % L::E) * sizeof(T));
                if (!emu_desc_addr(desc, r, k, (int)sizeof(T), &got) || got != want) {
                    printf("    base %u row %d k %d: read at %u, written at %u\n", base, row0 + r, kk, got, want);
                    return false;
                }
            }
    }
    return true;
}

/* The same for an MN-major stage (ocd_wgmma_smem_mn): each chunk written once, and each element
   (mn, k) of the operand whose first element is element mn0 (a multiple of 64) read at the byte
   a loader wrote it to. */
template <typename T, int ROWS> bool check_layout_mn(uint32_t base, int mn0, int extent)
{
    typedef ocd_wgmma_smem_mn<T, ROWS> L;
    std::vector<int> seen(L::STAGE / L::E, 0);
    for (int r = 0; r < L::BK; r++)
        for (int c = 0; c < ROWS / L::E; c++) {
            int off = L::offset(r, c);
            if (off % L::E != 0 || off < 0 || off >= L::STAGE) return false;
            seen[off / L::E]++;
        }
    for (int v : seen)
        if (v != 1) return false;
    for (int ks = 0; ks < L::BK / L::KSTEP; ks++) {
        uint64_t desc = L::desc(base + (uint32_t)(mn0 / 64) * L::BLOCK_BYTES, ks);
        for (int mn = 0; mn < extent; mn++)
            for (int k = 0; k < L::KSTEP; k++) {
                int kk = ks * L::KSTEP + k, e = mn0 + mn;
                uint32_t got, want = base + (uint32_t)((L::offset(kk, e / L::E) + e % L::E) * sizeof(T));
                if (!emu_desc_addr_mn(desc, mn, k, (int)sizeof(T), &got) || got != want) {
                    printf("    base %u element %d k %d: read at %u, written at %u\n", base, e, kk, got, want);
                    return false;
                }
            }
    }
    return true;
}

/* A (2 warpgroups x 64 rows) and B (N rows) by K tiles, each tile stored as a loader stores it,
   multiplied by both warpgroups' emulated wgmma; also, for warpgroup 0, with A in registers. */
template <typename T, int N> bool check_gemm(const char *name)
{
    typedef ocd_wgmma_smem<T, 128> LA;
    typedef ocd_wgmma_smem<T, N> LB;
    const int KT = 3, K = KT * LA::BK;
    emu_rng rng = {(uint32_t)(N * 7 + sizeof(T))};
    std::vector<T> a((size_t)128 * K), b((size_t)N * K);
    for (T &v : a) v = T(rng.next());
    for (T &v : b) v = T(rng.next());
    /* shared memory: A stage at 0, B stage after it (1024-aligned) */
    const uint32_t sa = 0, sb = LA::STAGE_BYTES;
    std::vector<uint8_t> smem(sb + LB::STAGE_BYTES);
    static float d[2][128][N / 2], dr[128][N / 2];
    bool ok = true;
    for (int kt = 0; kt < KT; kt++) {
        for (int r = 0; r < 128; r++)
            for (int c = 0; c < LA::CPR; c++)
                memcpy(&smem[sa + LA::offset(r, c) * sizeof(T)], &a[(size_t)r * K + kt * LA::BK + c * LA::E], 16);
        for (int r = 0; r < N; r++)
            for (int c = 0; c < LB::CPR; c++)
                memcpy(&smem[sb + LB::offset(r, c) * sizeof(T)], &b[(size_t)r * K + kt * LB::BK + c * LB::E], 16);
        for (int ks = 0; ks < LA::BK / LA::KSTEP; ks++) {
            bool first = kt == 0 && ks == 0;
            for (int wg = 0; wg < 2; wg++)
                ok = ok && emu_wgmma_ss<T, N>(d[wg], smem, ocd_wgmma_desc_k128(sa + wg * 64 * 128, ks),
                                              ocd_wgmma_desc_k128(sb, ks), !first);
            /* warpgroup 0's A fragment from registers, as ocd_wgmma_afrag_* places it */
            uint32_t areg[128][4];
            for (int t = 0; t < 128; t++)
                for (int e = 0; e < 8; e++) {
                    int m = ocd_wgmma_afrag_row(t, e), k = ocd_wgmma_afrag_col(t, e);
                    uint16_t bits;
                    memcpy(&bits, &a[(size_t)m * K + kt * LA::BK + ks * LA::KSTEP + k], 2);
                    if (e % 2 == 0) areg[t][e / 2] = bits;
                    else areg[t][e / 2] |= (uint32_t)bits << 16;
                }
            ok = ok && emu_wgmma_rs<T, N>(dr, areg, smem, ocd_wgmma_desc_k128(sb, ks), !first);
        }
    }
    double worst = 0;
    for (int wg = 0; wg < 2 && ok; wg++)
        for (int t = 0; t < 128; t++)
            for (int i = 0; i < N / 2; i++) {
                int m = wg * 64 + ocd_wgmma_acc_row(t, i), n = ocd_wgmma_acc_col(t, i);
                double ref = 0, mag = 0;
                for (int k = 0; k < K; k++) {
                    double p = (double)ocd_cuda_load(&a[(size_t)m * K + k]) * ocd_cuda_load(&b[(size_t)n * K + k]);
                    ref += p;
                    mag += fabs(p);
                }
                worst = fmax(worst, fabs(d[wg][t][i] - ref) / (mag + 1e-30));
                if (wg == 0) worst = fmax(worst, fabs(dr[t][i] - ref) / (mag + 1e-30));
            }
    ok = ok && worst < 1e-5;
    char what[96];
    snprintf(what, sizeof what, "%s 128x%d, %d K tiles: largest error %.2g of the magnitude", name, N, KT, worst);
    return report(ok, what);
}

} // namespace

int main()
{
    int failed = 0;
    failed += !report(check_acc_map<64>() && check_acc_map<128>() && check_acc_map<256>(),
                      "accumulator fragment map, N = 64, 128, 256");
    failed += !report(check_afrag_map(), "A register fragment map");
    bool ok = true;
    for (uint32_t base : {0u, 1024u, 7u * 1024u, 64u * 1024u})
        ok = ok && check_layout<__half, 128>(base, 0, 64) && check_layout<__half, 128>(base, 64, 64) &&
             check_layout<__nv_bfloat16, 256>(base, 0, 256) && check_layout<__half, 64>(base, 0, 64);
    failed += !report(ok, "swizzled stage layout against the descriptors' addresses");
    ok = true;
    for (uint32_t base : {0u, 1024u, 16u * 1024u})
        ok = ok && check_layout_mn<__half, 128>(base, 0, 64) && check_layout_mn<__half, 128>(base, 64, 64) &&
             check_layout_mn<__nv_bfloat16, 256>(base, 0, 256);
    failed += !report(ok, "MN-major swizzled stage layout against the descriptors' addresses");
    failed += !check_gemm<__half, 64>("fp16");
    failed += !check_gemm<__half, 128>("fp16");
    failed += !check_gemm<__half, 256>("fp16");
    failed += !check_gemm<__nv_bfloat16, 128>("bf16");
    failed += !check_gemm<__nv_bfloat16, 256>("bf16");
    printf("%d checks failed\n", failed);
    return failed ? 1 : 0;
}
