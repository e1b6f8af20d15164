/* mma_emulate.h: what only the tensor cores do, emulated for one warp from the PTX ISA's
   definitions, for the emulation tests of tensor-core kernels (gemm_mma.cu, attn_flash.cu):
   ldmatrix.x4 (and .trans; every row address 16-byte aligned, emulated.cuh) hands lane l of
   matrix q the elements (l / 4, 2 (l % 4) + {0, 1})
   (transposed: (2 (l % 4) + {0, 1}, l / 4)); mma.sync m16n8k16 (fp16, bf16), m16n8k8 (tf32,
   operands rounded by cvt.rna) and m16n8k32 (8-bit integers, int32 accumulators) take their
   fragments as the ISA lays them out; with mma.cuh included first, one K tile of its mainloop
   for a whole CTA (mma_ktile). */
#ifndef OCD_TESTS_EMULATE_MMA_EMULATE_H
#define OCD_TESTS_EMULATE_MMA_EMULATE_H

#include "cuda/emulated.cuh"

#include <cstdint>
#include <cstring>

#include "cuda/types.cuh"

namespace {

/* A 32-bit register holding two 16-bit elements (low = lower index) or one fp32. */
template <typename T> float reg_elem(uint32_t r, int half)
{
    if (sizeof(T) == 4) {
        float f;
        memcpy(&f, &r, 4);
        return f;
    }
    uint16_t b = (uint16_t)(half ? r >> 16 : r & 0xffff);
    T v;
    memcpy(&v, &b, 2);
    return ocd_cuda_load(&v);
}

/* cvt.rna.tf32.f32: the fp32 value rounded to 10 mantissa bits, ties away from zero. */
float to_tf32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

/* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 for one warp: addr[l] is lane l's row
   address (lanes 8q .. 8q + 7 give the rows of matrix q); out[l][q] is lane l's register q. */
void ldmatrix_x4(uint32_t out[32][4], const void *const addr[32], bool trans)
{
    for (int l = 0; l < 32; l++) OCD_EMULATED_ALIGNED(addr[l], 16); /* each row address */
    for (int q = 0; q < 4; q++)
        for (int l = 0; l < 32; l++) {
            uint16_t e[2];
            for (int h = 0; h < 2; h++) {
                int row = trans ? 2 * (l % 4) + h : l / 4, col = trans ? l / 4 : 2 * (l % 4) + h;
                memcpy(&e[h], (const char *)addr[8 * q + row] + 2 * col, 2);
            }
            out[l][q] = (uint32_t)e[0] | (uint32_t)e[1] << 16;
        }
}

/* mma.sync m16n8k16 (16-bit) or m16n8k8 (tf32) with fp32 accumulators, for one warp:
   a[l][0..3], b[l][0..1] and c[l][0..3] are lane l's fragments. */
template <typename T> void mma(float c[32][4], const uint32_t a[32][4], const uint32_t b[32][2])
{
    const bool tf32 = sizeof(T) == 4;
    const int K = tf32 ? 8 : 16;
    float A[16][16], B[16][8];
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int r = 0; r < 4; r++) {
            int row = g + (r & 1) * 8;
            for (int h = 0; h < (tf32 ? 1 : 2); h++) {
                int k = tf32 ? t + (r >> 1) * 4 : 2 * t + h + (r >> 1) * 8;
                A[row][k] = tf32 ? to_tf32(reg_elem<T>(a[l][r], h)) : reg_elem<T>(a[l][r], h);
            }
        }
        for (int r = 0; r < 2; r++)
            for (int h = 0; h < (tf32 ? 1 : 2); h++) {
                int k = tf32 ? t + r * 4 : 2 * t + h + r * 8;
                B[k][g] = tf32 ? to_tf32(reg_elem<T>(b[l][r], h)) : reg_elem<T>(b[l][r], h);
            }
    }
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int e = 0; e < 4; e++) {
            int row = g + (e >> 1) * 8, col = 2 * t + (e & 1);
            float s = c[l][e];
            for (int k = 0; k < K; k++) s += A[row][k] * B[k][col];
            c[l][e] = s;
        }
    }
}

/* mma.sync m16n8k32 with int32 accumulators, for one warp: T int8_t (.s8.s8) or uint8_t (.u8.s8:
   A unsigned, B signed). Register r of A holds row g + 8 (r % 2), K elements 4 t + 16 (r / 2)
   + {0..3} (lowest byte first); register r of B K elements 4 t + 16 r + {0..3} of column g
   (g = lane / 4, t = lane % 4). */
template <typename T> void mma(int c[32][4], const uint32_t a[32][4], const uint32_t b[32][2])
{
    int A[16][32], B[32][8];
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int r = 0; r < 4; r++)
            for (int q = 0; q < 4; q++) {
                uint8_t byte = (uint8_t)(a[l][r] >> (8 * q));
                A[g + (r & 1) * 8][4 * t + q + (r >> 1) * 16] = (T)byte;
            }
        for (int r = 0; r < 2; r++)
            for (int q = 0; q < 4; q++) B[4 * t + q + r * 16][g] = (int8_t)(uint8_t)(b[l][r] >> (8 * q));
    }
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int e = 0; e < 4; e++) {
            int row = g + (e >> 1) * 8, col = 2 * t + (e & 1);
            int s = c[l][e];
            for (int k = 0; k < 32; k++) s += A[row][k] * B[k][col];
            c[l][e] = s;
        }
    }
}

#ifdef OCD_CUDA_MMA_CUH
/* One K tile of ocd_mma_mainloop for every warp of a CTA of Tile: the two k-steps' fragments
   read from the stages ca and cb (ocd_mma_smem layouts, K-major or MN-major) at the addresses
   mma.cuh gives, multiplied into acc (float, or int for 8-bit T), thread tid's accumulators at
   acc + tid * MI * NI * 4 in acc[i][j][e] order. */
template <class Tile, typename T, bool AK, bool BK, typename Acc> void mma_ktile(Acc *acc, const T *ca, const T *cb)
{
    typedef ocd_mma_smem<T, Tile::BM, AK> SA;
    typedef ocd_mma_smem<T, Tile::BN, BK> SB;
    const int MI = Tile::MI, NI = Tile::NI;
    for (int warp = 0; warp < Tile::THREADS / 32; warp++) {
        int wm = (warp % Tile::WARPS_M) * Tile::WTM, wn = (warp / Tile::WARPS_M) * Tile::WTN;
        for (int ks = 0; ks < 2; ks++) {
            static uint32_t af[MI][32][4], bf[NI / 2][32][4];
            const void *addr[32];
            for (int i = 0; i < MI; i++) {
                for (int l = 0; l < 32; l++) addr[l] = ocd_mma_frag_a_addr<T, Tile::BM, AK>(ca, wm + i * 16, ks * SA::KSTEP, l);
                ldmatrix_x4(af[i], addr, !AK);
            }
            for (int j = 0; j < NI / 2; j++) {
                for (int l = 0; l < 32; l++) addr[l] = ocd_mma_frag_b_addr<T, Tile::BN, BK>(cb, wn + j * 16, ks * SB::KSTEP, l);
                ldmatrix_x4(bf[j], addr, !BK);
            }
            for (int i = 0; i < MI; i++)
                for (int j = 0; j < NI; j++) {
                    Acc c[32][4];
                    uint32_t b[32][2];
                    for (int l = 0; l < 32; l++) {
                        b[l][0] = bf[j / 2][l][(j % 2) * 2], b[l][1] = bf[j / 2][l][(j % 2) * 2 + 1];
                        for (int e = 0; e < 4; e++) c[l][e] = acc[(((size_t)(warp * 32 + l) * MI + i) * NI + j) * 4 + e];
                    }
                    mma<T>(c, af[i], b);
                    for (int l = 0; l < 32; l++)
                        for (int e = 0; e < 4; e++) acc[(((size_t)(warp * 32 + l) * MI + i) * NI + j) * 4 + e] = c[l][e];
                }
        }
    }
}
#endif

} // namespace

#endif /* OCD_TESTS_EMULATE_MMA_EMULATE_H */
