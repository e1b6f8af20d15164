/* conv_igemm_sm90.cuh: what the implicit-GEMM convolution's two sm_90a kernels share (the
   cp.async one, conv_igemm_sm90.cu, and the warp-specialized TMA one, conv_igemm_tma_sm90.cu):
   the CTA tile, the shared-memory stages wgmma reads (wgmma.cuh's 128-byte-swizzled layout),
   one K tile's wgmma of a warpgroup, and its accumulators' epilogue (conv_igemm.cuh's
   igemm_store_frags). Host-callable where the CPU emulations call it. */
#ifndef OCD_CUDA_CONV_IGEMM_SM90_CUH
#define OCD_CUDA_CONV_IGEMM_SM90_CUH

#include "cuda/conv_igemm.cuh"
#include "cuda/wgmma.cuh"

#include <type_traits>

/* A CTA tile: BM x BN, two warpgroups of BM / 2 rows, each MI slices of 64 rows (one wgmma
   each per k-step), STAGES K tiles of 64 elements in the ring. Slice q (warpgroup q / MI) holds
   rows 64 q .. 64 q + 63. */
template <int BM_, int BN_, int STAGES_> struct igemm_wgmma_tile {
    static constexpr int BM = BM_, BN = BN_, STAGES = STAGES_, THREADS = 256, MI = BM / 128;
    static_assert(BM == 128 || BM == 256, "two warpgroups of one or two 64-row slices");
};

/* The pixels along a row of the fp32 filter gradient's K tile (wgmma.cuh's ocd_wgmma_smem_kq):
   Tile::KQ where the tile has one (the TMA kernel's), else 8. */
template <class Tile, class = void> struct igemm_tile_kq {
    static constexpr int value = 8;
};
template <class Tile> struct igemm_tile_kq<Tile, std::void_t<decltype(Tile::KQ)>> {
    static constexpr int value = Tile::KQ;
};

/* The shared memory of a CTA, from a 1024-byte aligned base: STAGES A stages, then STAGES B
   stages, K-major (forward, backward data) or MN-major (the filter gradient, whose K runs over
   pixels; fp32's, which TF32 wgmma takes K-major only, in the TMA kernel's planes of pixel rows,
   igemm_tile_kq's pixels a row); the dynamic allocation has 1024 bytes more, to align its start. */
template <class Tile, typename T, bool MN> struct igemm_wgmma_shape {
    /* the filter gradient's fp32 operands: K-major pixel rows (wgmma.cuh's ocd_wgmma_smem_kq) */
    static constexpr bool K32 = MN && sizeof(T) == 4;
    static constexpr int KQ = K32 ? igemm_tile_kq<Tile>::value : 0; /* 0: not the k32 form */
    typedef typename std::conditional<
        K32, ocd_wgmma_smem_kq<Tile::BM, 64, igemm_tile_kq<Tile>::value>,
        typename std::conditional<MN, ocd_wgmma_smem_mn<T, Tile::BM>, ocd_wgmma_smem<T, Tile::BM>>::type>::type SA;
    typedef typename std::conditional<
        K32, ocd_wgmma_smem_kq<Tile::BN, Tile::BN, igemm_tile_kq<Tile>::value>,
        typename std::conditional<MN, ocd_wgmma_smem_mn<T, Tile::BN>, ocd_wgmma_smem<T, Tile::BN>>::type>::type SB;
    static constexpr uint32_t A_BYTES = Tile::STAGES * SA::STAGE_BYTES;
    static constexpr size_t SMEM = (size_t)Tile::STAGES * (SA::STAGE_BYTES + SB::STAGE_BYTES) + 1024;
    static_assert(SA::STAGE_BYTES % 1024 == 0 && SB::STAGE_BYTES % 1024 == 0, "stages keep 1024-byte alignment");

    static __host__ __device__ __forceinline__ uint32_t a_stage(int s)
    {
        return (uint32_t)s * SA::STAGE_BYTES;
    }
    static __host__ __device__ __forceinline__ uint32_t b_stage(int s)
    {
        return A_BYTES + (uint32_t)s * SB::STAGE_BYTES;
    }
    /* Descriptors of k-step ks of stage s, for the smem base at shared address base: slice q's
       64 rows of A (8 KB on in either layout: 64 rows, or one 64-element block), and all of B. */
    static __host__ __device__ __forceinline__ uint64_t desc_a(uint32_t base, int s, int q, int ks)
    {
        return SA::desc(base + a_stage(s) + (uint32_t)q * 64 * 128, ks);
    }
    static __host__ __device__ __forceinline__ uint64_t desc_b(uint32_t base, int s, int ks)
    {
        return SB::desc(base + b_stage(s), ks);
    }
};

/* Warpgroup wg's wgmma of the K tile in stage s (shared memory at shared address base): every
   k-step of its MI slices of 64 rows, as one wgmma group (fenced before, committed after). */
template <class Tile, typename T, bool MN>
__device__ __forceinline__ void igemm_wgmma_issue(float (&d)[Tile::MI][Tile::BN / 2], uint32_t base, int s, int wg)
{
    typedef igemm_wgmma_shape<Tile, T, MN> Shape;
#pragma unroll
    for (int mi = 0; mi < Tile::MI; mi++) ocd_wgmma_fence_operands(d[mi]);
    ocd_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < Shape::SA::BK / Shape::SA::KSTEP; ks++)
#pragma unroll
        for (int mi = 0; mi < Tile::MI; mi++) {
            const uint64_t da = Shape::desc_a(base, s, wg * Tile::MI + mi, ks), db = Shape::desc_b(base, s, ks);
            if constexpr (Shape::SA::MN)
                ocd_wgmma<Tile::BN, T>::ss_mn(d[mi], da, db, 1);
            else
                ocd_wgmma<Tile::BN, T>::ss(d[mi], da, db, 1);
        }
    ocd_wgmma_commit();
#pragma unroll
    for (int mi = 0; mi < Tile::MI; mi++) ocd_wgmma_fence_operands(d[mi]);
}

/* The epilogue of warpgroup wg's accumulators for the tile at (m0, n0) of group g: thread t
   (tid % 128) holds, of slice q = wg * MI + mi, rows 64 q + 16 (t / 32) + ...: a warp's 16 x BN
   slice laid out as mma.sync's (wgmma.cuh). */
#pragma nv_exec_check_disable
template <class Tile, typename T>
__host__ __device__ __forceinline__ void igemm_wgmma_store(const igemm_params &p, const float (&d)[Tile::MI][Tile::BN / 2],
                                                           int m0, int n0, int g, int split, int wg, int tid)
{
#pragma unroll
    for (int mi = 0; mi < Tile::MI; mi++)
        igemm_store_frags<T, 1, Tile::BN / 8>(p, [&](int, int j, int e) { return d[mi][j * 4 + e]; },
                                              m0 + (wg * Tile::MI + mi) * 64 + ((tid & 127) >> 5) * 16, n0, g, split,
                                              tid & 31);
}

#endif /* OCD_CUDA_CONV_IGEMM_SM90_CUH */
