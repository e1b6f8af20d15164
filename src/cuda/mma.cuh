/* mma.cuh: the tensor-core GEMM mainloop (sm_80 and newer) every tensor-core GEMM of the CUDA
   backend runs: the implicit-GEMM convolution (conv_igemm.cuh) and the GEMM entry
   cuda:gemm_mma (gemm_mma.cu). A kernel supplies one loader per operand and its own epilogue;
   this header owns the PTX, the tile and shared-memory geometry, the fragment addressing and
   the pipelined K loop.

   Main decisions.
   - Operands move global -> shared with 16-byte cp.async (zero-filled where a loader says the
     chunk lies outside the operand), STAGES tiles deep, one barrier per K tile.
   - Shared memory holds an operand either K-major ([rows][BK], read with ldmatrix) or MN-major
     ([BK][rows], read with ldmatrix.trans, 16-bit types only). Each row is padded by 16 bytes so
     that the 8 row addresses of one ldmatrix fall in 8 different bank groups.
   - Tensor cores through mma.sync: m16n8k16 for fp16/bf16, m16n8k8 for tf32 (fp32 data, rounded
     to tf32 after ldmatrix), m16n8k32 for 8-bit integers (int8_t: both operands signed; uint8_t:
     A unsigned, B signed, the UINT8 configurations' data and int8 filter) with int32
     accumulators (ocd_mma_elem<T>::Acc). One mma k-step is always 32 bytes of K, so a fragment is
     loaded the same way for every type (ldmatrix's b16 rows are 16 bytes: 4 bytes a lane, the
     k32 fragment's 4 consecutive int8 K elements); a K tile is 64 bytes (BK = 32 for 16-bit
     types, 16 for fp32, 64 for 8-bit).
   - After the loop, thread `lane` of a warp holds, of each 16 x 8 mma tile (i, j) of its warp
     tile, rows lane / 4 and lane / 4 + 8 and columns 2 * (lane % 4) + {0, 1}: acc[i][j][2 * hr + c]
     is row (lane >> 2) + 8 * hr, column 2 * (lane & 3) + c (ocd_mma_acc_row, ocd_mma_acc_col).

   A loader is a struct with `void load(T *stage, int kt, const P &p) const` that issues the
   cp.async copies of K tile kt (kt counts from 0 over the whole K) into one stage laid out as
   ocd_mma_smem<T, ROWS, KMAJOR> says. The PTX wrappers and the address functions are
   host-callable too (a host copy stands in for cp.async, checking the alignment the GPU
   enforces: emulated.cuh), so that per-thread logic can be emulated on the CPU. */
#ifndef OCD_CUDA_MMA_CUH
#define OCD_CUDA_MMA_CUH

#include "cuda/emulated.cuh"

#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

/* ---- PTX wrappers (sm_80 and newer; the kernels compile to nothing below) -------------------- */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define OCD_MMA_ARCH_OK 1
#endif

/* One piece of BYTES bytes (16, or 4) global -> shared, zero-filled when !pred: cp.async, which
   bypasses L1 for whole 16-byte chunks (.cg) and goes through it for the 4-byte pieces (.ca, the
   only form that size has: the int8 loader's INT8x4 vectors, the TF32 filter gradient's NCHW
   elements). The loaders are host-callable too (a host copy then stands in for cp.async), so
   that their index arithmetic can be exercised without a GPU. */
template <int BYTES> __host__ __device__ __forceinline__ void ocd_mma_cp_async(void *smem, const void *gmem, bool pred)
{
    static_assert(BYTES == 16 || BYTES == 4, "cp.async pieces of 16 or 4 bytes");
#if defined(OCD_MMA_ARCH_OK)
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int bytes = pred ? BYTES : 0; /* 0: nothing is read, the piece is zero-filled */
    if constexpr (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes) : "memory");
#elif !defined(__CUDA_ARCH__)
    OCD_EMULATED_ALIGNED(smem, BYTES);
    if (pred) OCD_EMULATED_ALIGNED(gmem, BYTES);
    if (pred) memcpy(smem, gmem, BYTES);
    else memset(smem, 0, BYTES);
#endif
}

__device__ __forceinline__ void ocd_mma_cp_commit()
{
#ifdef OCD_MMA_ARCH_OK
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N> __device__ __forceinline__ void ocd_mma_cp_wait()
{
#ifdef OCD_MMA_ARCH_OK
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

template <bool TRANS> __device__ __forceinline__ void ocd_mma_ldmatrix_x4(uint32_t r[4], const void *smem)
{
#ifdef OCD_MMA_ARCH_OK
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    if (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(s)
                     : "memory");
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(s)
                     : "memory");
#endif
}

/* Per element type: chunk width, and the mma that consumes one 32-byte k-step. */
template <typename T> struct ocd_mma_elem;

/* mma.sync m16n8k16 with fp32 accumulators; ab names the input type (f16 or bf16). */
#ifdef OCD_MMA_ARCH_OK
#define OCD_MMA_16BIT(ab, c, a, b)                                                            \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." ab "." ab ".f32 {%0,%1,%2,%3}, "           \
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                                          \
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                     \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#else
#define OCD_MMA_16BIT(ab, c, a, b) ((void)0)
#endif

template <> struct ocd_mma_elem<__half> {
    static constexpr bool TF32 = false;
    typedef float Acc;
    static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], const uint32_t b[2])
    {
        OCD_MMA_16BIT("f16", c, a, b);
    }
};

template <> struct ocd_mma_elem<__nv_bfloat16> {
    static constexpr bool TF32 = false;
    typedef float Acc;
    static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], const uint32_t b[2])
    {
        OCD_MMA_16BIT("bf16", c, a, b);
    }
};

template <> struct ocd_mma_elem<float> {
    static constexpr bool TF32 = true;
    typedef float Acc;
    static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], const uint32_t b[2])
    {
#ifdef OCD_MMA_ARCH_OK
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
    }
};

/* mma.sync m16n8k32 with int32 accumulators (exact: no rounding, wrapping past 2^31); at names
   A's type (s8 or u8), B is s8. */
#ifdef OCD_MMA_ARCH_OK
#define OCD_MMA_INT8(at, c, a, b)                                                                   \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32." at ".s8.s32 {%0,%1,%2,%3}, "              \
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                                          \
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])                                     \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#else
#define OCD_MMA_INT8(at, c, a, b) ((void)0)
#endif

template <> struct ocd_mma_elem<int8_t> {
    static constexpr bool TF32 = false;
    typedef int Acc;
    static __device__ __forceinline__ void mma(int c[4], const uint32_t a[4], const uint32_t b[2])
    {
        OCD_MMA_INT8("s8", c, a, b);
    }
};

/* A unsigned (UINT8 data), B signed (the int8 filter). */
template <> struct ocd_mma_elem<uint8_t> {
    static constexpr bool TF32 = false;
    typedef int Acc;
    static __device__ __forceinline__ void mma(int c[4], const uint32_t a[4], const uint32_t b[2])
    {
        OCD_MMA_INT8("u8", c, a, b);
    }
};

/* fp32 bits -> tf32 bits, rounded to nearest (ties away), as the tensor cores expect. On the
   host (the emulations) the same rounding on the bits: half a tf32 unit (bit 12) added, the 13
   low mantissa bits cleared; infinities stay, NaNs stay NaN. */
__host__ __device__ __forceinline__ uint32_t ocd_mma_to_tf32(uint32_t x)
{
#ifdef OCD_MMA_ARCH_OK
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
    return r;
#elif !defined(__CUDA_ARCH__)
    if ((x & 0x7f800000u) == 0x7f800000u) return (x & 0x7fffffu) ? 0x7fc00000u : x;
    return (x + 0x1000u) & 0xffffe000u;
#else
    return x;
#endif
}

/* ---- tile shapes -------------------------------------------------------------------------------- */

/* A CTA tile of BM x BN outputs computed by WARPS_M x WARPS_N warps, STAGES K tiles in flight. */
template <int BM_, int BN_, int WARPS_M_, int WARPS_N_, int STAGES_> struct ocd_mma_tile {
    static constexpr int BM = BM_, BN = BN_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N; /* warp tile */
    static constexpr int MI = WTM / 16, NI = WTN / 8;            /* mma tiles per warp */
    static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile must be a multiple of 16x16");
    static_assert(STAGES >= 2, "the pipeline needs two stages at least");
};

/* Geometry of one operand's shared-memory stage: ROWS GEMM rows (M for A, N for B) by one K tile
   of 64 bytes, K-major or MN-major, each row padded by one 16-byte chunk. */
template <typename T, int ROWS, bool KMAJOR> struct ocd_mma_smem {
    static constexpr int E = 16 / (int)sizeof(T);  /* elements per 16-byte chunk */
    static constexpr int BK = 64 / (int)sizeof(T); /* elements per K tile */
    static constexpr int KSTEP = BK / 2;            /* elements per mma k-step (32 bytes) */
    static constexpr int LD = KMAJOR ? BK + E : ROWS + E;
    static constexpr int STAGE = KMAJOR ? ROWS * LD : BK * LD; /* elements per stage */
    static constexpr int CPR = BK / E;              /* K-major: chunks per row */
    static_assert(KMAJOR || sizeof(T) == 2, "MN-major operands need ldmatrix.trans: 16-bit types only");

    /* Element offset of chunk `chunk` of stage row `row`: K elements chunk * E .. of M or N row
       `row` (K-major), or elements chunk * E .. of K row `row` (MN-major). */
    static __host__ __device__ __forceinline__ int offset(int row, int chunk)
    {
        return row * LD + chunk * E;
    }
};

/* The row address lane `lane` gives ldmatrix.x4 for the A fragment of one 16 x KSTEP mma tile at
   rows m0.., K offset k0 (elements), of a K-major operand whose rows lie ld elements apart:
   matrices 0..3 are (rows 0-7, k lo), (rows 8-15, k lo), (rows 0-7, k hi), (rows 8-15, k hi),
   the order of a[0..3]. Row addresses must be 16-byte aligned. */
template <typename T>
__host__ __device__ __forceinline__ const T *ocd_mma_kmajor_a_addr(const T *s, int ld, int m0, int k0, int lane)
{
    return s + (m0 + (lane & 15)) * ld + k0 + (lane >> 4) * (16 / (int)sizeof(T));
}

/* Likewise for the B fragments of two 8-column mma tiles at columns n0.. and n0 + 8..: matrices
   (n 0-7, k lo), (n 0-7, k hi), (n 8-15, k lo), (n 8-15, k hi), i.e. b[0..1] and b[2..3]. */
template <typename T>
__host__ __device__ __forceinline__ const T *ocd_mma_kmajor_b_addr(const T *s, int ld, int n0, int k0, int lane)
{
    return s + (n0 + (lane >> 4) * 8 + (lane & 7)) * ld + k0 + ((lane >> 3) & 1) * (16 / (int)sizeof(T));
}

/* Likewise, read with ldmatrix.trans, for an MN-major operand of 16-bit elements whose K rows lie
   ld elements apart. */
template <typename T>
__host__ __device__ __forceinline__ const T *ocd_mma_mnmajor_a_addr(const T *s, int ld, int m0, int k0, int lane)
{
    return s + (k0 + (lane >> 4) * 8 + (lane & 7)) * ld + m0 + ((lane >> 3) & 1) * 8;
}

template <typename T>
__host__ __device__ __forceinline__ const T *ocd_mma_mnmajor_b_addr(const T *s, int ld, int n0, int k0, int lane)
{
    return s + (k0 + ((lane >> 3) & 1) * 8 + (lane & 7)) * ld + n0 + (lane >> 4) * 8;
}

/* The same addresses in an ocd_mma_smem stage, K-major or MN-major (read with .trans). */
template <typename T, int ROWS, bool KMAJOR>
__host__ __device__ __forceinline__ const T *ocd_mma_frag_a_addr(const T *s, int m0, int k0, int lane)
{
    typedef ocd_mma_smem<T, ROWS, KMAJOR> L;
    return KMAJOR ? ocd_mma_kmajor_a_addr(s, L::LD, m0, k0, lane) : ocd_mma_mnmajor_a_addr(s, L::LD, m0, k0, lane);
}

template <typename T, int ROWS, bool KMAJOR>
__host__ __device__ __forceinline__ const T *ocd_mma_frag_b_addr(const T *s, int n0, int k0, int lane)
{
    typedef ocd_mma_smem<T, ROWS, KMAJOR> L;
    return KMAJOR ? ocd_mma_kmajor_b_addr(s, L::LD, n0, k0, lane) : ocd_mma_mnmajor_b_addr(s, L::LD, n0, k0, lane);
}

template <typename T, int ROWS, bool KMAJOR>
__device__ __forceinline__ void ocd_mma_frag_a(uint32_t a[4], const T *s, int m0, int k0, int lane)
{
    ocd_mma_ldmatrix_x4<!KMAJOR>(a, ocd_mma_frag_a_addr<T, ROWS, KMAJOR>(s, m0, k0, lane));
}

template <typename T, int ROWS, bool KMAJOR>
__device__ __forceinline__ void ocd_mma_frag_b(uint32_t b[4], const T *s, int n0, int k0, int lane)
{
    ocd_mma_ldmatrix_x4<!KMAJOR>(b, ocd_mma_frag_b_addr<T, ROWS, KMAJOR>(s, n0, k0, lane));
}

/* ---- dense operand loaders ----------------------------------------------------------------------
   For an operand that lies as a matrix: element (row, k) at mat + row * ld + k (K-major) or
   mat + k * ld + row (MN-major), rows [0, rows) and k [0, kdim). A chunk is copied whole or
   zero-filled, so the contiguous dimension (kdim for K-major, rows for MN-major) and ld must be
   multiples of a chunk's elements (16 bytes), and mat 16-byte aligned. */

/* K-major stages have L::CPR chunks per row (4 here; 8 in the 128-byte rows of wgmma.cuh, whose
   layout L may be given instead): thread tid copies chunk tid % CPR of rows tid / CPR,
   tid / CPR + THREADS / CPR, ... to where L::offset places it. */
template <typename T, int ROWS, int THREADS, class L = ocd_mma_smem<T, ROWS, true>> struct ocd_mma_load_kmajor {
    static constexpr int CPR = L::CPR, ITERS = ROWS * CPR / THREADS, STEP = THREADS / CPR;
    static_assert(ITERS * THREADS == ROWS * CPR, "tile rows must cover the threads");
    const T *mat;
    int64_t off[ITERS]; /* -1: row past the operand */
    int row0, kc, kdim;

    /* The CTA's rows start at r0. */
    __host__ __device__ __forceinline__ void setup(const T *m, int64_t ld, int rows, int r0, int k, int tid)
    {
        mat = m, kdim = k, kc = tid % CPR, row0 = tid / CPR;
#pragma unroll
        for (int i = 0; i < ITERS; i++) {
            int r = r0 + row0 + i * STEP;
            off[i] = r < rows ? (int64_t)r * ld : -1;
        }
    }

    template <class P> __host__ __device__ __forceinline__ void load(T *s, int kt, const P &) const
    {
        int kk = kt * L::BK + kc * L::E;
#pragma unroll
        for (int i = 0; i < ITERS; i++) {
            bool ok = off[i] >= 0 && kk < kdim;
            ocd_mma_cp_async<16>(s + L::offset(row0 + i * STEP, kc), ok ? mat + off[i] + kk : mat, ok);
        }
    }
};

/* MN-major stages have ROWS / E chunks per K row: thread tid copies chunk tid % (ROWS / E) of K
   rows tid / (ROWS / E), plus multiples of THREADS / (ROWS / E). */
template <typename T, int ROWS, int THREADS> struct ocd_mma_load_mnmajor {
    typedef ocd_mma_smem<T, ROWS, false> L;
    static constexpr int CPR = ROWS / L::E, ITERS = L::BK * CPR / THREADS, STEP = THREADS / CPR;
    static_assert(THREADS % CPR == 0 && ITERS * THREADS == L::BK * CPR, "tile must cover the threads");
    const T *mat;
    int64_t ld;
    int krow0, cc, col, kdim;
    bool rok; /* the chunk's rows lie inside the operand */

    __host__ __device__ __forceinline__ void setup(const T *m, int64_t l, int rows, int r0, int k, int tid)
    {
        mat = m, ld = l, kdim = k, krow0 = tid / CPR, cc = tid % CPR;
        col = r0 + cc * L::E;
        rok = col < rows;
    }

    template <class P> __host__ __device__ __forceinline__ void load(T *s, int kt, const P &) const
    {
#pragma unroll
        for (int i = 0; i < ITERS; i++) {
            int kk = kt * L::BK + krow0 + i * STEP;
            bool ok = rok && kk < kdim;
            ocd_mma_cp_async<16>(s + (krow0 + i * STEP) * L::LD + cc * L::E,
                                 ok ? mat + (int64_t)kk * ld + col : mat, ok);
        }
    }
};

/* The dense loader of a layout. */
template <bool KMAJOR, typename T, int ROWS, int THREADS> struct ocd_mma_dense_loader {
    typedef ocd_mma_load_kmajor<T, ROWS, THREADS> type;
};
template <typename T, int ROWS, int THREADS> struct ocd_mma_dense_loader<false, T, ROWS, THREADS> {
    typedef ocd_mma_load_mnmajor<T, ROWS, THREADS> type;
};

/* ---- fp32 operands gathered element by element ---------------------------------------------------
   The tile of the kernels that gather fp32 operands one element at a time (4-byte cp.async, or a
   converting load) into K-major stages (conv_wgrad_tf32.cu, conv_gather.cu): 64 x 128, 4 warps
   of 32 x 64, 3 stages of K tiles of 16 (45 KB of shared memory, no opt-in); a thread gathers
   the K positions tid % 4 + 4 e (e < 4) of rows tid / 4 + STEP i, so that each K position is
   decoded once for its rows and the four threads of a row read neighbouring positions. */
struct ocd_mma_gather {
    typedef ocd_mma_tile<64, 128, 2, 2, 3> tile;
    typedef ocd_mma_smem<float, tile::BM, true> sa;
    typedef ocd_mma_smem<float, tile::BN, true> sb;
    static constexpr int BK = sa::BK, STEP = tile::THREADS / 4;
    static constexpr int SMEM = tile::STAGES * (sa::STAGE + sb::STAGE) * (int)sizeof(float);
    static_assert(SMEM <= 48 * 1024, "the stages must fit without the shared-memory opt-in");
};

/* Split-K of nkt K tiles: as many splits as want asks, at most cap, min_kt K tiles a split at
   least (one split where nkt is shorter), none empty: *kt_split K tiles a split, the last fewer. */
static inline void ocd_mma_split_k(int64_t nkt, int64_t want, int64_t min_kt, int64_t cap, int *kt_split, int *splits)
{
    int64_t n = nkt / min_kt > 1 ? nkt / min_kt : 1;
    n = want < n ? want : n;
    n = cap < n ? cap : n;
    n = n > 1 ? n : 1;
    *kt_split = (int)((nkt + n - 1) / n);
    *splits = (int)((nkt + *kt_split - 1) / *kt_split);
}

/* ---- the mainloop ------------------------------------------------------------------------------ */

/* Row and column, inside the warp tile, of accumulator element acc[i][j][e] of thread `lane`. */
__host__ __device__ __forceinline__ int ocd_mma_acc_row(int i, int e, int lane)
{
    return i * 16 + (lane >> 2) + (e >> 1) * 8;
}
__host__ __device__ __forceinline__ int ocd_mma_acc_col(int j, int e, int lane)
{
    return j * 8 + (lane & 3) * 2 + (e & 1);
}

/* The K loop of one CTA tile: K tiles kt0 .. kt0 + nkt - 1 are loaded by al and bl into the
   STAGES-deep shared buffers sa and sb (ocd_mma_smem stages of Tile::BM and Tile::BN rows) and
   multiplied into acc (ocd_mma_elem<T>::Acc: float, int for 8-bit types), the warp tile at
   (wm, wn) of the CTA tile; acc is zeroed first. Every thread of the CTA calls it. Returns with
   all copies landed. */
template <class Tile, typename T, bool A_KMAJOR, bool B_KMAJOR, class ALoad, class BLoad, class P>
__device__ __forceinline__ void ocd_mma_mainloop(typename ocd_mma_elem<T>::Acc (&acc)[Tile::MI][Tile::NI][4], T *sa,
                                                 T *sb, const ALoad &al,
                                                 const BLoad &bl, const P &p, int kt0, int nkt, int wm, int wn,
                                                 int lane)
{
    typedef ocd_mma_smem<T, Tile::BM, A_KMAJOR> SA;
    typedef ocd_mma_smem<T, Tile::BN, B_KMAJOR> SB;
    typedef ocd_mma_elem<T> Elem;
    constexpr int STAGES = Tile::STAGES, MI = Tile::MI, NI = Tile::NI;
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0;

    /* Prologue: STAGES - 1 tiles in flight. One commit per slot, empty or not, keeps the group
       count uniform so that wait_group<STAGES - 2> always means "tile kt has landed". */
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < nkt) {
            al.load(sa + st * SA::STAGE, kt0 + st, p);
            bl.load(sb + st * SB::STAGE, kt0 + st, p);
        }
        ocd_mma_cp_commit();
    }

    for (int kt = 0; kt < nkt; kt++) {
        ocd_mma_cp_wait<STAGES - 2>();
        /* tile kt is visible to all; and every warp is done with tile kt - 1, whose stage the
           prefetch below overwrites */
        __syncthreads();
        int pf = kt + STAGES - 1;
        if (pf < nkt) {
            int st = pf % STAGES;
            al.load(sa + st * SA::STAGE, kt0 + pf, p);
            bl.load(sb + st * SB::STAGE, kt0 + pf, p);
        }
        ocd_mma_cp_commit();

        const T *ca = sa + (kt % STAGES) * SA::STAGE;
        const T *cb = sb + (kt % STAGES) * SB::STAGE;
#pragma unroll
        for (int ks = 0; ks < 2; ks++) {
            uint32_t af[MI][4], bf[NI / 2][4];
#pragma unroll
            for (int i = 0; i < MI; i++)
                ocd_mma_frag_a<T, Tile::BM, A_KMAJOR>(af[i], ca, wm + i * 16, ks * SA::KSTEP, lane);
#pragma unroll
            for (int j = 0; j < NI / 2; j++)
                ocd_mma_frag_b<T, Tile::BN, B_KMAJOR>(bf[j], cb, wn + j * 16, ks * SB::KSTEP, lane);
            if (Elem::TF32) {
#pragma unroll
                for (int i = 0; i < MI; i++)
#pragma unroll
                    for (int e = 0; e < 4; e++) af[i][e] = ocd_mma_to_tf32(af[i][e]);
#pragma unroll
                for (int j = 0; j < NI / 2; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++) bf[j][e] = ocd_mma_to_tf32(bf[j][e]);
            }
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NI; j++) Elem::mma(acc[i][j], af[i], &bf[j / 2][(j % 2) * 2]);
        }
    }
    ocd_mma_cp_wait<0>();
}

#endif /* OCD_CUDA_MMA_CUH */
