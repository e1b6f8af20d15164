/* wgmma.cuh: Hopper's warpgroup tensor-core instructions (sm_90a) for the kernels that use them
   (the implicit-GEMM convolution's sm_90a mainloop, conv_igemm_sm90.cu; the attention core's
   Hopper forward and backward, attn_core_flash_sm90.cu and attn_core_flash_bwd_sm90.cu): the
   shared-memory layout wgmma reads, its matrix descriptors, the wgmma.mma_async wrappers with
   their fences and groups, bulk reductions from shared memory into global memory, and where each
   thread's accumulator and A-fragment registers sit in the tile. Everything here is written from
   the PTX ISA ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions" and
   "cp.reduce.async.bulk"), and the K loops of a cp.async ring and of a warp-specialized ring
   (the mbarriers and the other bulk operations are bulk.cuh's).

   Main decisions.
   - One operand layout: K-major with the 128-byte swizzle. A K tile is 128 bytes of K (64
     elements of a 16-bit type, 32 of fp32) per row; each group of 8 rows is one 1024-byte
     swizzle atom, and inside it the 16-byte chunk c of row r lies at chunk position c ^ (r % 8)
     (address bits 4-6 XORed with bits 7-9), so that the 8 rows of any 16-byte column of the
     atom fall in 8 different bank groups. An operand stage must start on a 1024-byte boundary (the matrix base
     offset is then 0). Its descriptor has SBO = 1024 (from one 8-row group to the next); the
     ISA ignores LBO for swizzled K-major layouts (it is set to 1, encoded). One wgmma k-step (32
     bytes: 16 elements of a 16-bit type, 8 of tf32) inside the 128-byte row is the
     descriptor's start address plus 32 bytes: the hardware applies the XOR to the address it
     forms, so the same atom serves all four.
   - wgmma.mma_async m64nNk16, fp32 accumulators, fp16 or bf16 inputs, N = 32, 64, 128 or 256
     (any multiple of 8 up to 256 is valid; these are the ones the kernels use): A and
     B from shared memory (both K-major, or both MN-major), or A from registers (the fragment map
     below) and B from shared memory. The accumulators of one thread are N / 2 floats, d[N / 2].
   - wgmma.mma_async m64nNk8 .f32.tf32.tf32 for fp32 data, A and B K-major in shared memory: the
     ISA has no transposed (MN-major) tf32 operands, and its tf32 form takes no imm-trans
     operands. An operand element is 32 bits of which the tensor cores use the tf32 part (sign,
     exponent, the 10 high mantissa bits): the 13 low bits are dropped, not rounded, so a kernel
     that wants cuDNN's rounded TF32 rounds its operands first (conv_igemm_sm90.cu: in the
     workspace copies, or in shared memory, with ocd_mma_to_tf32).
   - The K loop over a ring of stages filled by cp.async (ocd_wgmma_kloop, at the end), written
     over an operations object so that the emulation can check its schedule.
   - Where the device code cannot exist (host, or any architecture but sm_90a: the
     __CUDA_ARCH_FEAT_SM90_ALL feature macro) the wrappers compile to nothing, so that a file that
     includes this header builds for every architecture of the build; the index functions are
     host-callable for the CPU emulations (tests/emulate/wgmma.cu).

   Accumulator fragment (the ISA's figure for the m64nNk16 D matrix): thread t of the warpgroup
   (warp w = t / 32, lane l = t % 32) holds d[i], i < N / 2, at
     row = 16 w + 8 ((i / 2) % 2) + l / 4,   column = 8 (i / 4) + 2 (l % 4) + i % 2,
   that is the m16n8 mma.sync accumulator of warp w's 16 rows, repeated N / 8 times along N.
   A fragment (registers a[0..3], two 16-bit elements each, lower element in the low half):
   element e < 8 of thread t lies at row 16 w + l / 4 + 8 ((e / 2) % 2), column
   2 (l % 4) + e % 2 + 8 (e / 4) of the 64 x 16 A tile. */
#ifndef OCD_CUDA_WGMMA_CUH
#define OCD_CUDA_WGMMA_CUH

#include "core/handle.h"
#include "core/impl.h"
#include "cuda/bulk.cuh"
#include "cuda/check.cuh"
#include "cuda/emulated.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define OCD_WGMMA_ARCH_OK 1
#endif

/* Whether the including file has sm_90a code: CMakeLists.txt defines OCD_SM90A for the files it
   builds for sm_90a, where the toolkit has it (read at the first inclusion: a file that defines
   OCD_SM90A itself, as the emulations do, does so before its includes). */
#ifdef OCD_SM90A
#define OCD_WGMMA_BUILT true
#else
#define OCD_WGMMA_BUILT false
#endif

/* Why an entry on a wgmma kernel cannot serve on handle h, or NULL: its kernels' file built
   without sm_90a code (built: that file's OCD_WGMMA_BUILT), or a device other than compute
   capability 9.0, the one sm_90a code runs on. */
static inline const char *ocd_wgmma_entry_rejects(cudnnHandle_t h, bool built)
{
    if (!built) return "the wgmma kernels were built without sm_90a code (CUDA 12.0 or newer)";
    if (h->cc_major != 9 || h->cc_minor != 0) return "the wgmma kernels run on compute capability 9.0 (sm_90a) only";
    return nullptr;
}

/* ---- the shared-memory layout and descriptors -------------------------------------------------- */

/* One operand stage: ROWS rows (M for A, N for B) by one 128-byte K tile, K-major, 128-byte
   swizzle; 16-byte chunks (E elements) are the unit a loader copies. */
template <typename T, int ROWS> struct ocd_wgmma_smem {
    static constexpr int E = 16 / (int)sizeof(T);   /* elements per 16-byte chunk */
    static constexpr int BK = 128 / (int)sizeof(T); /* elements per K tile (one swizzled row) */
    static constexpr int CPR = 8;                   /* chunks per row */
    static constexpr int KSTEP = 32 / (int)sizeof(T); /* elements per wgmma k-step (32 bytes) */
    static constexpr int STAGE = ROWS * BK;         /* elements per stage */
    static constexpr int STAGE_BYTES = ROWS * 128;
    static_assert(ROWS % 8 == 0, "a stage holds whole 8-row swizzle atoms");

    static constexpr bool MN = false;

    /* Element offset, from the stage start, of chunk `chunk` (K elements chunk * E ..) of row `row`. */
    static __host__ __device__ __forceinline__ int offset(int row, int chunk)
    {
        return row * BK + ((chunk ^ (row & 7)) * E);
    }
    /* The descriptor of k-step ks of the operand whose row 0 is at addr (defined below). */
    static __host__ __device__ __forceinline__ uint64_t desc(uint32_t addr, int ks);
};

/* The 128-byte swizzle of a shared-memory byte address (bits 4-6 ^= bits 7-9), as the hardware
   applies it to the addresses it forms from a descriptor. */
__host__ __device__ __forceinline__ uint32_t ocd_wgmma_swizzle128(uint32_t addr)
{
    return addr ^ (((addr >> 7) & 7u) << 4);
}

/* Swizzle modes of the descriptor's bits 62-63. */
enum { OCD_WGMMA_SWIZZLE_NONE = 0, OCD_WGMMA_SWIZZLE_128B = 1, OCD_WGMMA_SWIZZLE_64B = 2, OCD_WGMMA_SWIZZLE_32B = 3 };

/* The 64-bit matrix descriptor: start address (bits 0-13), leading-dimension byte offset (16-29),
   stride-dimension byte offset (32-45), each as (x & 0x3FFFF) >> 4; base offset (49-51) 0;
   swizzle mode (62-63). addr is a shared-state-space byte address. */
__host__ __device__ __forceinline__ uint64_t ocd_wgmma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, int swizzle)
{
    return (uint64_t)((addr & 0x3FFFFu) >> 4) | (uint64_t)((lbo & 0x3FFFFu) >> 4) << 16 |
           (uint64_t)((sbo & 0x3FFFFu) >> 4) << 32 | (uint64_t)swizzle << 62;
}

/* The descriptor of a K-major, 128-byte-swizzled operand whose row 0 starts at shared address
   addr (1024-byte aligned), at k-step ks (0..3) of its K tile. */
__host__ __device__ __forceinline__ uint64_t ocd_wgmma_desc_k128(uint32_t addr, int ks)
{
    return ocd_wgmma_desc(addr + 32u * (uint32_t)ks, 16, 1024, OCD_WGMMA_SWIZZLE_128B);
}

template <typename T, int ROWS>
__host__ __device__ __forceinline__ uint64_t ocd_wgmma_smem<T, ROWS>::desc(uint32_t addr, int ks)
{
    return ocd_wgmma_desc_k128(addr, ks);
}

/* The descriptor of an MN-major (transposed) B operand in the same swizzled layout: the rows of
   the tile are K, each 128-byte row holds 64 elements of N, and N continues in blocks of 64
   whose row 0 lies block_bytes after the previous block's (the ISA's LBO for swizzled MN-major
   layouts); SBO = 1024 steps over 8 K rows. addr: K row 0 of the k-step (16 rows, two atoms),
   1024-byte aligned. */
__host__ __device__ __forceinline__ uint64_t ocd_wgmma_desc_mn128(uint32_t addr, uint32_t block_bytes)
{
    return ocd_wgmma_desc(addr, block_bytes, 1024, OCD_WGMMA_SWIZZLE_128B);
}

/* One MN-major operand stage (16-bit types): one K tile of 64 rows (K) by ROWS elements of M or
   N, in blocks of 64 elements (128 bytes, one swizzled row) each BLOCK_BYTES long: block b
   holds elements 64 b .. 64 b + 63 of all 64 K rows, each 8 K rows one 1024-byte swizzle atom.
   A loader copies 16-byte chunks: chunk c of K row r holds elements 8 c .. 8 c + 7. */
template <typename T, int ROWS> struct ocd_wgmma_smem_mn {
    static_assert(sizeof(T) == 2, "MN-major wgmma operands are 16-bit");
    static_assert(ROWS % 64 == 0, "a stage holds whole 64-element blocks");
    static constexpr bool MN = true;
    static constexpr int E = 8, BK = 64, KSTEP = 16;
    static constexpr int STAGE = ROWS * BK, STAGE_BYTES = ROWS * 128, BLOCK_BYTES = BK * 128;

    static __host__ __device__ __forceinline__ int offset(int krow, int chunk)
    {
        return (chunk >> 3) * (BLOCK_BYTES / 2) + krow * 64 + (((chunk & 7) ^ (krow & 7)) * E);
    }
    /* The descriptor of k-step ks of the operand whose element 0 (block 0, K row 0) is at addr. */
    static __host__ __device__ __forceinline__ uint64_t desc(uint32_t addr, int ks)
    {
        return ocd_wgmma_desc_mn128(addr + (uint32_t)ks * KSTEP * 128, BLOCK_BYTES);
    }
};

/* The descriptor of a K-major, 32-byte-swizzled operand whose row 0 of the k-step lies at shared
   address addr (256-byte aligned): 8 tf32 elements (32 bytes) of K a row, rows 32 bytes apart, 8
   rows a 256-byte atom (SBO 256), the hardware's XOR of address bit 7 into bit 4; one k-step of
   tf32 is the atom's whole width, so LBO is unused. */
__host__ __device__ __forceinline__ uint64_t ocd_wgmma_desc_k32(uint32_t addr)
{
    return ocd_wgmma_desc(addr, 16, 256, OCD_WGMMA_SWIZZLE_32B);
}

/* One K-major operand stage of tf32 whose K tile (32 elements) lies in planes of KQ elements
   (32 / KQ planes, [plane][row][KQ elements], each under the swizzle of its row's span: 8
   elements and the 32-byte swizzle, or 32 and the 128-byte one): the layout the TMA lands a box
   of KQ elements along K in (conv_igemm_tma.cuh's filter gradient on NCHW data, whose K, the
   pixels, is KQ along a row times 32 / KQ rows). With KQ 8 a k-step of tf32 is a plane's whole
   width (ocd_wgmma_desc_k32); with KQ 32 the plane is the 128-byte-swizzled K-major layout of
   ocd_wgmma_smem, k-step ks 32 bytes into its rows (ocd_wgmma_desc_k128). The
   rows come in blocks of RB (RB divides ROWS), each block's planes together (RB * 128 bytes a
   block): A's blocks of 64 filters, each one TMA box; B, RB = ROWS, one plane a row of pixels
   for all its rows. Only the TMA fills it (no cp.async loader, so no chunk offsets). */
template <int ROWS, int RB, int KQ> struct ocd_wgmma_smem_kq {
    static_assert(ROWS % RB == 0 && RB % 8 == 0, "whole blocks of whole 8-row atoms");
    static_assert(KQ == 8 || KQ == 32, "planes of one k-step under the 32-byte swizzle, or of four under the 128-byte one");
    static constexpr bool MN = false;
    static constexpr int BK = 32, KSTEP = 8;
    static constexpr int STAGE_BYTES = ROWS * 128, PLANE_BYTES = RB * KQ * 4;

    /* The descriptor of k-step ks of the rows whose block starts at addr. */
    static __host__ __device__ __forceinline__ uint64_t desc(uint32_t addr, int ks)
    {
        if constexpr (KQ == 32) return ocd_wgmma_desc_k128(addr, ks);
        else return ocd_wgmma_desc_k32(addr + (uint32_t)ks * PLANE_BYTES);
    }
};

/* The shared-state-space address of a generic pointer into shared memory. */
__host__ __device__ __forceinline__ uint32_t ocd_wgmma_smem_addr(const void *p)
{
#ifdef __CUDA_ARCH__
    return (uint32_t)__cvta_generic_to_shared(p);
#else
    return (uint32_t)(uintptr_t)p;
#endif
}

/* ---- fragment maps ------------------------------------------------------------------------------ */

/* Row and column in the warpgroup's 64 x N tile of accumulator d[i] of thread t (0..127). */
__host__ __device__ __forceinline__ int ocd_wgmma_acc_row(int t, int i)
{
    return (t >> 5) * 16 + ((i >> 1) & 1) * 8 + ((t & 31) >> 2);
}
__host__ __device__ __forceinline__ int ocd_wgmma_acc_col(int t, int i)
{
    return (i >> 2) * 8 + (t & 3) * 2 + (i & 1);
}

/* Row and column in the 64 x 16 A tile of element e (0..7: register e / 2, half e % 2) of the
   register A fragment of thread t. */
__host__ __device__ __forceinline__ int ocd_wgmma_afrag_row(int t, int e)
{
    return (t >> 5) * 16 + ((t & 31) >> 2) + ((e >> 1) & 1) * 8;
}
__host__ __device__ __forceinline__ int ocd_wgmma_afrag_col(int t, int e)
{
    return (t & 3) * 2 + (e & 1) + (e >> 2) * 8;
}

/* ---- wgmma ------------------------------------------------------------------------------------- */

/* Orders this thread's earlier register and shared-memory accesses before the warpgroup's next
   wgmma.mma_async (needed before the first wgmma, and whenever its accumulators or A registers
   were touched by other instructions). */
__device__ __forceinline__ void ocd_wgmma_fence()
{
#ifdef OCD_WGMMA_ARCH_OK
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

/* Closes the group of the wgmma.mma_async operations issued since the last commit. */
__device__ __forceinline__ void ocd_wgmma_commit()
{
#ifdef OCD_WGMMA_ARCH_OK
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/* Waits until at most N committed groups of this warpgroup are pending. */
template <int N> __device__ __forceinline__ void ocd_wgmma_wait()
{
#ifdef OCD_WGMMA_ARCH_OK
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

/* Keeps the compiler from moving accesses of accumulator registers across a wgmma fence or wait
   (the registers are written asynchronously, outside what the compiler sees). */
template <int COUNT> __device__ __forceinline__ void ocd_wgmma_fence_operands(float (&d)[COUNT])
{
#ifdef OCD_WGMMA_ARCH_OK
#pragma unroll
    for (int i = 0; i < COUNT; i++) asm volatile("" : "+f"(d[i])::"memory");
#endif
}

/* Operand lists of the wrappers: "{%0, ..., %(n - 1)}" and "+f"(d[0]) .. "+f"(d[n - 1]). */
#define OCD_WG_S10(t) "%" #t "0,%" #t "1,%" #t "2,%" #t "3,%" #t "4,%" #t "5,%" #t "6,%" #t "7,%" #t "8,%" #t "9"
#define OCD_WG_S0 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9"
#define OCD_WG_D16 "{" OCD_WG_S0 ",%10,%11,%12,%13,%14,%15}"
#define OCD_WG_D32 "{" OCD_WG_S0 "," OCD_WG_S10(1) "," OCD_WG_S10(2) ",%30,%31}"
#define OCD_WG_D64                                                                                 \
    "{" OCD_WG_S0 "," OCD_WG_S10(1) "," OCD_WG_S10(2) "," OCD_WG_S10(3) "," OCD_WG_S10(4) "," OCD_WG_S10(5) \
    ",%60,%61,%62,%63}"
#define OCD_WG_D128                                                                                \
    "{" OCD_WG_S0 "," OCD_WG_S10(1) "," OCD_WG_S10(2) "," OCD_WG_S10(3) "," OCD_WG_S10(4) "," OCD_WG_S10(5) \
    "," OCD_WG_S10(6) "," OCD_WG_S10(7) "," OCD_WG_S10(8) "," OCD_WG_S10(9) "," OCD_WG_S10(10) "," OCD_WG_S10(11) \
    ",%120,%121,%122,%123,%124,%125,%126,%127}"
#define OCD_WG_F8(d, i)                                                                            \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
        "+f"(d[i + 7])
#define OCD_WG_F32(d, i) OCD_WG_F8(d, i), OCD_WG_F8(d, i + 8), OCD_WG_F8(d, i + 16), OCD_WG_F8(d, i + 24)
#define OCD_WG_F_32(d) OCD_WG_F8(d, 0), OCD_WG_F8(d, 8)
#define OCD_WG_F_64(d) OCD_WG_F32(d, 0)
#define OCD_WG_F_128(d) OCD_WG_F32(d, 0), OCD_WG_F32(d, 32)
#define OCD_WG_F_256(d) OCD_WG_F32(d, 0), OCD_WG_F32(d, 32), OCD_WG_F32(d, 64), OCD_WG_F32(d, 96)

/* wgmma.mma_async with fp32 accumulators: d = A * B + (scale_d ? d : 0). T __half or
   __nv_bfloat16: m64nNk16, A (64 x 16) and B (N x 16) K-major in shared memory (ss) or both
   MN-major (ss_mn), or A from registers (rs, rs_mn). T float: m64nNk8 .tf32, A (64 x 8) and B
   (N x 8) K-major in shared memory (ss) only. */
template <int N, typename T> struct ocd_wgmma;

#ifdef OCD_WGMMA_ARCH_OK
/* The register-A form, B K-major (rs, imm-trans-b 0) or MN-major (rs_mn, imm-trans-b 1: see
   ocd_wgmma_desc_mn128). */
#define OCD_WGMMA_RS(n, ab, dlist, name, trans_b)                                                  \
    static __device__ __forceinline__ void name(float (&d)[n / 2], const uint32_t (&a)[4], uint64_t db, int scale_d) \
    {                                                                                              \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" OCD_WG_RS_##n##_SCALE ", 0;\n"             \
                     "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." ab "." ab " " dlist ", {"   \
                     OCD_WG_RS_##n##_A "}, %" OCD_WG_RS_##n##_B ", p, 1, 1, " trans_b ";\n}\n"     \
                     : OCD_WG_F_##n(d)                                                             \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));         \
    }
/* The shared-memory form, shape m64n<n><k>: A and B K-major (ss, imm-trans 0) or both MN-major
   (ss_mn, imm-trans 1); `trans` is the operand list's tail after imm-scale-a and imm-scale-b
   (", 0, 0", ", 1, 1", or nothing for tf32, which has no imm-trans operands). */
#define OCD_WGMMA_SS(n, k, ab, dlist, ia, ib, ir, name, trans)                                     \
    static __device__ __forceinline__ void name(float (&d)[n / 2], uint64_t da, uint64_t db, int scale_d) \
    {                                                                                              \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" ir ", 0;\n"                               \
                     "wgmma.mma_async.sync.aligned.m64n" #n #k ".f32." ab "." ab " " dlist ", %" ia ", %" ib \
                     ", p, 1, 1" trans ";\n}\n"                                                     \
                     : OCD_WG_F_##n(d)                                                             \
                     : "l"(da), "l"(db), "r"(scale_d));                                            \
    }
#define OCD_WGMMA_DEFINE(n, T, ab, dlist, ia, ib, ir)                                              \
    template <> struct ocd_wgmma<n, T> {                                                           \
        OCD_WGMMA_SS(n, k16, ab, dlist, ia, ib, ir, ss, ", 0, 0")                                  \
        OCD_WGMMA_SS(n, k16, ab, dlist, ia, ib, ir, ss_mn, ", 1, 1")                               \
        OCD_WGMMA_RS(n, ab, dlist, rs, "0")                                                        \
        OCD_WGMMA_RS(n, ab, dlist, rs_mn, "1")                                                     \
    };
/* tf32: "wgmma.mma_async.sync.aligned.shape.dtype.tf32.tf32 d, a-desc, b-desc, scale-d,
   imm-scale-a, imm-scale-b" (shapes m64nNk8), both operands K-major. */
#define OCD_WGMMA_DEFINE_TF32(n, dlist, ia, ib, ir)                                                \
    template <> struct ocd_wgmma<n, float> {                                                       \
        OCD_WGMMA_SS(n, k8, "tf32", dlist, ia, ib, ir, ss, "")                                     \
    };
/* operand numbers after the n / 2 accumulators: ss takes (a-desc, b-desc, scale-d), rs takes
   (a0..a3, b-desc, scale-d) */
#define OCD_WG_RS_32_A "%16,%17,%18,%19"
#define OCD_WG_RS_32_B "20"
#define OCD_WG_RS_32_SCALE "21"
#define OCD_WG_RS_64_A "%32,%33,%34,%35"
#define OCD_WG_RS_64_B "36"
#define OCD_WG_RS_64_SCALE "37"
#define OCD_WG_RS_128_A "%64,%65,%66,%67"
#define OCD_WG_RS_128_B "68"
#define OCD_WG_RS_128_SCALE "69"
#define OCD_WG_RS_256_A "%128,%129,%130,%131"
#define OCD_WG_RS_256_B "132"
#define OCD_WG_RS_256_SCALE "133"
OCD_WGMMA_DEFINE(32, __half, "f16", OCD_WG_D16, "16", "17", "18")
OCD_WGMMA_DEFINE(64, __half, "f16", OCD_WG_D32, "32", "33", "34")
OCD_WGMMA_DEFINE(128, __half, "f16", OCD_WG_D64, "64", "65", "66")
OCD_WGMMA_DEFINE(256, __half, "f16", OCD_WG_D128, "128", "129", "130")
OCD_WGMMA_DEFINE(32, __nv_bfloat16, "bf16", OCD_WG_D16, "16", "17", "18")
OCD_WGMMA_DEFINE(64, __nv_bfloat16, "bf16", OCD_WG_D32, "32", "33", "34")
OCD_WGMMA_DEFINE(128, __nv_bfloat16, "bf16", OCD_WG_D64, "64", "65", "66")
OCD_WGMMA_DEFINE(256, __nv_bfloat16, "bf16", OCD_WG_D128, "128", "129", "130")
OCD_WGMMA_DEFINE_TF32(64, OCD_WG_D32, "32", "33", "34")
OCD_WGMMA_DEFINE_TF32(128, OCD_WG_D64, "64", "65", "66")
OCD_WGMMA_DEFINE_TF32(256, OCD_WG_D128, "128", "129", "130")
#undef OCD_WGMMA_DEFINE_TF32
#undef OCD_WGMMA_DEFINE
#undef OCD_WGMMA_SS
#undef OCD_WGMMA_RS
#else
/* Without sm_90a: the same interface, no instruction (nothing that runs there calls it). */
template <int N, typename T> struct ocd_wgmma {
    static __host__ __device__ __forceinline__ void ss(float (&)[N / 2], uint64_t, uint64_t, int) {}
    static __host__ __device__ __forceinline__ void ss_mn(float (&)[N / 2], uint64_t, uint64_t, int) {}
    static __host__ __device__ __forceinline__ void rs(float (&)[N / 2], const uint32_t (&)[4], uint64_t, int) {}
    static __host__ __device__ __forceinline__ void rs_mn(float (&)[N / 2], const uint32_t (&)[4], uint64_t, int) {}
};
#endif

/* ---- warpgroup register reallocation ---------------------------------------------------------- */

/* setmaxnreg: every thread of the warpgroup gives registers back to the block's pool down to N
   (dec), or takes them from it up to N (inc, waiting until the pool has them); N a multiple of
   8 in [24, 256]. All warps of the warpgroup execute it. */
template <int N> __device__ __forceinline__ void ocd_wgmma_setmaxnreg_dec()
{
#ifdef OCD_WGMMA_ARCH_OK
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N> __device__ __forceinline__ void ocd_wgmma_setmaxnreg_inc()
{
#ifdef OCD_WGMMA_ARCH_OK
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

/* Named barrier id (1 .. 15; 0 is __syncthreads') of n threads, a multiple of 32: sync waits
   until n threads have arrived, counting its own warp's; arrive counts its warp's and goes on
   (bar.sync / bar.arrive; the ping-pong consumers' turns: n = 256, two warpgroups). */
__device__ __forceinline__ void ocd_named_bar_sync(int id, int n)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void ocd_named_bar_arrive(int id, int n)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

/* Host: that kernel's build leaves its setmaxnreg split a pool to take from. A CTA starts with
   `threads` x the registers a thread ptxas gave the kernel (cudaFuncGetAttributes' numRegs: 168
   for 384 threads under __launch_bounds__(384, 1)), and setmaxnreg.inc waits until the pool has
   what it asks for, so a build with fewer than `need` registers in all (the warpgroups' counts
   after the split, summed) would hang the kernel. EXECUTION_FAILED, naming the counts, instead;
   asked once (*checked set after a passing check). */
template <typename Kernel> cudnnStatus_t ocd_wgmma_pool_check(Kernel kernel, int threads, int need, int *checked)
{
    if (__atomic_load_n(checked, __ATOMIC_ACQUIRE)) return CUDNN_STATUS_SUCCESS;
    cudaFuncAttributes fa;
    OCD_CUDA_TRY(cudaFuncGetAttributes(&fa, (const void *)kernel));
    if (fa.numRegs * threads < need)
        return OCD_FAIL(CUDNN_STATUS_EXECUTION_FAILED,
                        "the kernel was built with %d registers a thread, %d for its %d threads: its setmaxnreg split "
                        "takes %d and would wait forever",
                        fa.numRegs, fa.numRegs * threads, threads, need);
    __atomic_store_n(checked, 1, __ATOMIC_RELEASE);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- bulk reductions from shared memory ----------------------------------------------------------- */

/* cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32: adds `bytes` (a multiple of 16;
   both addresses 16-byte aligned) of floats from shared memory into global memory, each element
   atomically, asynchronously (the source is read through the async proxy: fence the generic
   writes to it first, ocd_bulk_fence_writes; close the group with ocd_bulk_commit, bulk.cuh).
   Host code (the emulations) adds them at once. */
__host__ __device__ __forceinline__ void ocd_bulk_reduce_add_f32(float *gdst, const float *ssrc, unsigned bytes)
{
#ifdef OCD_WGMMA_ARCH_OK
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(gdst),
                 "r"(ocd_wgmma_smem_addr(ssrc)), "r"(bytes)
                 : "memory");
#elif !defined(__CUDA_ARCH__)
    OCD_EMULATED_ALIGNED(gdst, 16), OCD_EMULATED_ALIGNED(ssrc, 16), OCD_EMULATED_ALIGNED(bytes, 16);
    for (unsigned e = 0; e < bytes / 4; e++) gdst[e] += ssrc[e];
#endif
}

/* ---- the K loop over a ring of stages ----------------------------------------------------------
   STAGES stages (at least 3) of operand tiles in shared memory, filled by every thread with
   cp.async and read by wgmma, one __syncthreads per K tile. K tile kt lives in stage
   kt % STAGES; loads run STAGES - 2 tiles ahead of the multiplication, and each warpgroup keeps
   one K tile's wgmma group in flight while it issues the next. At step kt:
     1. wait until this thread's copies of tile kt have landed (all but STAGES - 3 groups),
        convert them in place where the operand type asks it (tf32: rounded), make them visible
        to the async proxy (wgmma reads through it), and __syncthreads: now every
        thread's copies of tile kt are visible to every warpgroup, and every warpgroup has
        passed step kt - 1's wait, so its wgmma of tile kt - 2 has completed;
     2. load tile kt + STAGES - 2 into stage (kt - 2) % STAGES, free by 1 (one commit per step,
        empty or not, keeps the group count uniform);
     3. issue tile kt's wgmma (a fence first, then the k-steps) and commit them;
     4. wait until at most one wgmma group is pending: tile kt - 1's has completed.
   The stages in use at step kt are those of tiles kt - 1 (wgmma maybe in flight) .. kt + STAGES
   - 2: STAGES of them, all distinct. Ops supplies the operations:
     load(tile, stage), cp_commit(), cp_wait<N>(), convert(stage) (this thread's own copies in
     the stage, just landed), fence_async(), sync(), mma(stage),
     mma_wait<N>(); the kernels' Ops issue the instructions (device functions), the emulation's
   check the order (host functions): the pragma lets the loop call either. */
#pragma nv_exec_check_disable
template <int STAGES, class Ops> __host__ __device__ __forceinline__ void ocd_wgmma_kloop(Ops &ops, int nkt)
{
    static_assert(STAGES >= 3, "the ring needs three stages at least");
#pragma unroll 1
    for (int t = 0; t < STAGES - 2; t++) {
        if (t < nkt) ops.load(t, t);
        ops.cp_commit();
    }
#pragma unroll 1
    for (int kt = 0; kt < nkt; kt++) {
        ops.template cp_wait<STAGES - 3>();
        ops.convert(kt % STAGES);
        ops.fence_async();
        ops.sync();
        const int pf = kt + STAGES - 2;
        if (pf < nkt) ops.load(pf, pf % STAGES);
        ops.cp_commit();
        ops.mma(kt % STAGES);
        ops.template mma_wait<1>();
    }
    ops.template mma_wait<0>();
    ops.template cp_wait<0>();
}

/* ---- the warp-specialized ring of a persistent kernel -----------------------------------------
   A producer (one thread) fills a ring of STAGES stages with asynchronous copies that complete
   on the stage's "full" mbarrier (TMA: expect_tx, then the copies); consumers (warpgroups
   issuing wgmma) wait on "full", multiply, and release a stage on its "empty" mbarrier once
   the wgmma that read it has completed. The CTA walks tiles first, first + step, ... below
   `tiles`, ops.nkt(tile) K tiles each; the ring runs on across tiles (use `it` of the CTA's K tiles, in
   order, is stage it % STAGES, that stage's (it / STAGES)-th use), so the producer loads the
   next tile's K tiles while the consumers store. Phase parities: use u of a stage completes
   "full"'s phase u (parity u & 1); the producer refills a stage after the consumers' release of
   its previous use, "empty"'s phase u - 1. Consumers release tile kt - 1's stage once at most
   one wgmma group is pending (tile kt's), and the last one after waiting for all. Ops supplies
     both: nkt(tile);
     producer: wait_empty(stage, parity), load(tile, kt, stage);
     consumer: wait_full(stage, parity), zero(), mma(stage), mma_wait<N>(), release(stage),
               store(tile); with TEAMS > 1, turn_wait() and turn_pass();
   the kernel's issue the instructions, the emulation's model them under a checker.
   Ping-pong (TEAMS = 2 consumers, `team` 0 or 1): the CTA's j-th unit is team j % 2's alone
   (its whole tile, its own accumulators), so one team's epilogue runs while the other's wgmma
   keep the tensor cores busy. A team counts the other's K tiles in `it` without touching their
   stages, and each stage's use is released by the one team that read it (the empty barriers
   count one warpgroup). The teams take turns on the mainloop: before unit j > 0 a team waits
   for its turn (turn_wait: a named barrier the other team arrives on), and once it has issued
   unit j's last wgmma it passes the turn (turn_pass) where a unit j + 1 follows; so the
   mainloops never interleave on the tensor cores, and the turn is also what keeps the parity
   waits sound: when a team starts unit j, every K tile before it has landed (the other team
   waited for each), so stage s's full barrier has completed the use before this one and no
   later one (that needs this use's release), and the parity wait cannot pass a phase early. */
#pragma nv_exec_check_disable
template <int STAGES, class Ops>
__host__ __device__ __forceinline__ void ocd_wgmma_ring_produce(Ops &ops, int first, int step, int tiles)
{
    int it = 0;
#pragma unroll 1
    for (int tile = first; tile < tiles; tile += step)
#pragma unroll 1
        for (int kt = 0, nkt = ops.nkt(tile); kt < nkt; kt++, it++) {
            const int s = it % STAGES;
            if (it >= STAGES) ops.wait_empty(s, (unsigned)(it / STAGES - 1) & 1u);
            ops.load(tile, kt, s);
        }
}

#pragma nv_exec_check_disable
template <int STAGES, int TEAMS = 1, class Ops>
__host__ __device__ __forceinline__ void ocd_wgmma_ring_consume(Ops &ops, int first, int step, int tiles, int team = 0)
{
    static_assert(TEAMS == 1 || TEAMS == 2, "one team of consumers, or two taking turns");
    int it = 0;
#pragma unroll 1
    for (int tile = first, j = 0; tile < tiles; tile += step, j++) {
        const int nkt = ops.nkt(tile);
        if (TEAMS > 1 && j % TEAMS != team) { /* the other team's unit: its K tiles, not this one's stages */
            it += nkt;
            continue;
        }
        if constexpr (TEAMS > 1)
            if (j > 0) ops.turn_wait();
        ops.zero();
#pragma unroll 1
        for (int kt = 0; kt < nkt; kt++, it++) {
            const int s = it % STAGES;
            ops.wait_full(s, (unsigned)(it / STAGES) & 1u);
            ops.mma(s);
            ops.template mma_wait<1>();
            if (kt > 0) ops.release((it - 1) % STAGES);
        }
        if constexpr (TEAMS > 1)
            if (tile + step < tiles) ops.turn_pass();
        ops.template mma_wait<0>();
        if (nkt > 0) ops.release((it - 1) % STAGES);
        ops.store(tile);
    }
}

#endif /* OCD_CUDA_WGMMA_CUH */
