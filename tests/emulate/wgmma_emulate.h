/* wgmma_emulate.h: what only Hopper's warpgroup tensor cores do, emulated for one warpgroup from
   the PTX ISA's definitions, for the emulation tests of sm_90a kernels (wgmma.cu,
   conv_igemm_sm90.cu, attn_flash_sm90.cu, attn_flash_bwd_sm90.cu): where a matrix descriptor
   says an operand element lies in shared memory
   (the K-major and MN-major canonical layouts with the 128-byte swizzle: rows 8 to an atom, SBO
   bytes from one 8-row group to the next, 128 bytes per row inside the atom, LBO bytes between
   the 64-element blocks of an MN-major operand's N, and the hardware's XOR of address bits 7-9
   into bits 4-6; and the K-major one with the 32-byte swizzle: rows 32 bytes apart, bit 7 into
   bit 4), and wgmma.mma_async m64nNk16 (fp16, bf16) and m64nNk8 (.tf32: fp32 bits of
   which the tensor cores keep sign, exponent and the 10 high mantissa bits, the 13 low ones
   dropped) with fp32 accumulators, whose result goes to thread t's register i at the ISA's
   D-fragment position (row 16 (t / 32) + 8 ((i / 2) % 2) + (t % 32) / 4, column 8 (i / 4) +
   2 (t % 4) + i % 2), and the phase parity an mbarrier wait passes at. A k-step is 32 bytes of
   K: 16 elements of a 16-bit type, 8 of tf32. Shared memory is a byte array indexed by shared
   address. */
#ifndef OCD_TESTS_EMULATE_WGMMA_EMULATE_H
#define OCD_TESTS_EMULATE_WGMMA_EMULATE_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda/types.cuh"

namespace {

/* The fields of a descriptor (bits 0-13 start, 16-29 LBO, 32-45 SBO, each in 16-byte units;
   49-51 base offset; 62-63 swizzle mode). */
struct emu_desc {
    uint32_t start, lbo, sbo, base, swizzle;
};

/* Whether a 128-byte-swizzled descriptor of the kernels' kind (base offset 0) is one the ISA
   reads as the emulation does: base offset 0 is the ISA's value only for a start address in the
   first 128 bytes of its 1024-byte swizzle pattern ((start >> 7) & 7 == 0); the K-step advances
   of 32 bytes and the 64-byte half-row starts stay there. */
bool emu_desc_sw128(const struct emu_desc &e)
{
    return e.swizzle == 1 && e.base == 0 && (e.start >> 7 & 7) == 0;
}

emu_desc emu_desc_decode(uint64_t d)
{
    emu_desc e;
    e.start = (uint32_t)(d & 0x3FFF) << 4;
    e.lbo = (uint32_t)(d >> 16 & 0x3FFF) << 4;
    e.sbo = (uint32_t)(d >> 32 & 0x3FFF) << 4;
    e.base = (uint32_t)(d >> 49 & 7);
    e.swizzle = (uint32_t)(d >> 62 & 3);
    return e;
}

/* The same for a 32-byte-swizzled one (mode 3): base offset 0 for a start address on the
   pattern's 256-byte boundary, which the k32 stages' k-step planes keep. */
bool emu_desc_sw32(const struct emu_desc &e)
{
    return e.swizzle == 3 && e.base == 0 && (e.start & 255) == 0;
}

/* The shared address of element (row, k) of a K-major operand, k within the k-step's 32 bytes,
   with the 128-byte swizzle (rows 128 bytes apart in an atom) or the 32-byte one (rows 32
   bytes apart, address bit 7 into bit 4), element size esize; false when the descriptor is of
   neither kind. */
bool emu_desc_addr(uint64_t desc, int row, int k, int esize, uint32_t *addr)
{
    emu_desc e = emu_desc_decode(desc);
    if (emu_desc_sw32(e)) {
        if ((k + 1) * esize > 32) return false;
        uint32_t a = e.start + (uint32_t)(row / 8) * e.sbo + (uint32_t)(row % 8) * 32 + (uint32_t)(k * esize);
        *addr = a ^ ((a >> 7 & 1) << 4);
        return true;
    }
    if (!emu_desc_sw128(e)) return false;
    uint32_t a = e.start + (uint32_t)(row / 8) * e.sbo + (uint32_t)(row % 8) * 128 + (uint32_t)(k * esize);
    *addr = a ^ ((a >> 7 & 7) << 4);
    return true;
}

/* The same for element (n, k) of an MN-major (transposed) B operand with the 128-byte swizzle,
   the ISA's canonical layout ((T, 8, m), (8, k)) : ((1, T, LBO), (8 T, SBO)), T elements to 16
   bytes: 64 elements of N per 128-byte row, the next 64 LBO bytes on, 8 K rows to an atom, SBO
   bytes from one 8-row group to the next. */
bool emu_desc_addr_mn(uint64_t desc, int n, int k, int esize, uint32_t *addr)
{
    emu_desc e = emu_desc_decode(desc);
    if (!emu_desc_sw128(e)) return false;
    uint32_t a = e.start + (uint32_t)(n / 64) * e.lbo + (uint32_t)((n % 64) * esize) + (uint32_t)(k / 8) * e.sbo +
                 (uint32_t)(k % 8) * 128;
    *addr = a ^ ((a >> 7 & 7) << 4);
    return true;
}

/* tf32 operands that reached a wgmma with any of their 13 low mantissa bits set (which the
   hardware drops: a kernel that rounds its operands first keeps this at 0). */
long emu_tf32_unrounded = 0;

/* An operand element as the tensor cores take it: a 16-bit value, or the tf32 part of fp32 bits. */
template <typename T> float emu_elem(const uint8_t *p)
{
    T v;
    memcpy(&v, p, sizeof v);
    return ocd_cuda_load(&v);
}
template <> float emu_elem<float>(const uint8_t *p)
{
    uint32_t u;
    memcpy(&u, p, 4);
    if (u & 0x1fffu) emu_tf32_unrounded++;
    u &= 0xffffe000u;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Elements of K per k-step. */
template <typename T> constexpr int emu_kstep()
{
    return 32 / (int)sizeof(T);
}

/* The D-fragment position of register i of warpgroup thread t, as the ISA's figure draws it. */
int emu_d_row(int t, int i)
{
    return 16 * (t / 32) + 8 * ((i / 2) % 2) + (t % 32) / 4;
}
int emu_d_col(int t, int i)
{
    return 8 * (i / 4) + 2 * (t % 4) + i % 2;
}

/* The 64 x k-step A operand read through its descriptor, K-major, or MN-major when A_MN
   (imm-trans-a 1: the layout of emu_desc_addr_mn with M for N). */
template <typename T, bool A_MN = false> bool emu_read_a(float a[64][16], const std::vector<uint8_t> &smem, uint64_t da)
{
    for (int m = 0; m < 64; m++)
        for (int k = 0; k < emu_kstep<T>(); k++) {
            uint32_t addr;
            bool ok = A_MN ? emu_desc_addr_mn(da, m, k, (int)sizeof(T), &addr)
                           : emu_desc_addr(da, m, k, (int)sizeof(T), &addr);
            if (!ok || addr + sizeof(T) > smem.size()) return false;
            a[m][k] = emu_elem<T>(&smem[addr]);
        }
    return true;
}

/* Adds A (64 x k-step) * B^T (B: N x k-step through db, K-major, or MN-major when B_MN:
   imm-trans-b 1) into the warpgroup's accumulators d[t][i] (or sets them when !scale_d). False
   when a descriptor is malformed or reads outside smem. */
template <typename T, int N, bool B_MN = false>
bool emu_wgmma(float (*d)[N / 2], const float a[64][16], const std::vector<uint8_t> &smem, uint64_t db, bool scale_d)
{
    static_assert(sizeof(T) == 2 || !B_MN, "tf32 operands are K-major");
    static float b[N][16];
    for (int n = 0; n < N; n++)
        for (int k = 0; k < emu_kstep<T>(); k++) {
            uint32_t addr;
            bool ok = B_MN ? emu_desc_addr_mn(db, n, k, (int)sizeof(T), &addr)
                           : emu_desc_addr(db, n, k, (int)sizeof(T), &addr);
            if (!ok || addr + sizeof(T) > smem.size()) return false;
            b[n][k] = emu_elem<T>(&smem[addr]);
        }
    for (int t = 0; t < 128; t++)
        for (int i = 0; i < N / 2; i++) {
            int m = emu_d_row(t, i), n = emu_d_col(t, i);
            float s = scale_d ? d[t][i] : 0.f;
            for (int k = 0; k < emu_kstep<T>(); k++) s += a[m][k] * b[n][k];
            d[t][i] = s;
        }
    return true;
}

/* wgmma with A from shared memory: both operands K-major, or both MN-major when MN (ss_mn). */
template <typename T, int N, bool MN = false>
bool emu_wgmma_ss(float (*d)[N / 2], const std::vector<uint8_t> &smem, uint64_t da, uint64_t db, bool scale_d)
{
    float a[64][16];
    return emu_read_a<T, MN>(a, smem, da) && emu_wgmma<T, N, MN>(d, a, smem, db, scale_d);
}

/* wgmma with A from registers: areg[t][r] is thread t's register r, two 16-bit elements, the
   lower in the low half, at the ISA's A-fragment positions (row 16 (t / 32) + (t % 32) / 4 +
   8 (r % 2), column 2 (t % 4) + h + 8 (r / 2) for half h; 16-bit types); B as emu_wgmma
   takes it. */
template <typename T, int N, bool B_MN = false>
bool emu_wgmma_rs(float (*d)[N / 2], const uint32_t areg[128][4], const std::vector<uint8_t> &smem, uint64_t db,
                  bool scale_d)
{
    static_assert(sizeof(T) == 2, "the register A fragment emulated is the 16-bit one");
    float a[64][16];
    for (int t = 0; t < 128; t++)
        for (int r = 0; r < 4; r++)
            for (int h = 0; h < 2; h++) {
                uint16_t bits = (uint16_t)(h ? areg[t][r] >> 16 : areg[t][r] & 0xffff);
                a[16 * (t / 32) + (t % 32) / 4 + 8 * (r % 2)][2 * (t % 4) + h + 8 * (r / 2)] =
                    emu_elem<T>((const uint8_t *)&bits);
            }
    return emu_wgmma<T, N, B_MN>(d, a, smem, db, scale_d);
}

/* True when an mbarrier wait with this parity passes once the barrier has completed
   `completions` phases and blocks at one fewer (try_wait.parity passes once the phase of that
   parity has completed). */
bool emu_mbar_phase_ok(int completions, unsigned parity)
{
    return (unsigned)(completions & 1) != parity && (unsigned)((completions - 1) & 1) == parity;
}

} // namespace

#endif /* OCD_TESTS_EMULATE_WGMMA_EMULATE_H */
