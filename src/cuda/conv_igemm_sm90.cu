/* conv_igemm_sm90.cu: the implicit-GEMM convolution's sm_90a kernel, every direction in fp16 and
   bf16, forward and backward data in tf32 (fp32 data) (entries cuda:{fwd,dgrad,wgrad}_igemm_wgmma_*,
   planned by conv_igemm.cu's make_plan like the sm_80 ones). Compiled for sm_90a alone
   (CMakeLists.txt), whatever the build's architectures, where the toolkit has it (OCD_SM90A; else
   the kernels are empty and ocd_igemm_wgmma_built false); the entries ask for compute capability
   9.0.

   Main decision: it replaces the sm_80 kernel's mainloop and nothing else. The plan, the
   kernel arguments, the loaders' address arithmetic (conv_igemm.cuh, given wgmma.cuh's
   swizzled stage layout), the epilogue and split-K are the sm_80 kernel's. A CTA of two
   warpgroups computes a BM x BN tile, each warpgroup BM / 2 rows with wgmma.mma_async m64nBNk16
   (m64nBNk8 for tf32) from shared memory (operands K-major, or both MN-major for the filter
   gradient, whose K runs over pixels: 16-bit types only, as tf32 has no MN-major operands); all
   256 threads also load, with 16-byte cp.async (zero-filled at padding, edges and past K), K
   tiles of 128 bytes (64 elements, 32 of fp32) into a ring of STAGES stages (wgmma.cuh's
   ocd_wgmma_kloop: the schedule and why no stage is overwritten before it is read). With fp32
   data each thread rounds the chunks it copied to tf32 (cvt.rna, as the sm_80 kernel rounds
   its fragments) once they land, before the proxy fence: wgmma would otherwise truncate them.
   Operands that come from the workspace (NCHW activations transposed, the filter packed) were
   rounded by the copy and are not rounded again (igemm_params round_a, round_b). A
   producer warp with TMA im2col loads, clusters with multicast and a persistent scheduler are
   the next steps (issue 24). */
#include "cuda/conv_igemm_sm90.cuh"

/* Rounds to tf32 the chunks thread tid copied into a K-major fp32 stage of ROWS rows (layout L):
   the loaders' fixed assignment (conv_igemm.cuh), chunk tid % CPR of rows tid / CPR + i THREADS
   / CPR. Host-callable for the emulation. */
template <class L, int ROWS, int THREADS>
__host__ __device__ __forceinline__ void igemm_wgmma_round_tf32(unsigned char *stage, int tid)
{
    constexpr int STEP = THREADS / L::CPR;
    static_assert(ROWS % STEP == 0, "the rows cover the threads");
#pragma unroll
    for (int i = 0; i < ROWS / STEP; i++) {
        uint4 *c = (uint4 *)(stage + sizeof(float) * L::offset(tid / L::CPR + i * STEP, tid % L::CPR));
        uint4 v = *c;
        v.x = ocd_mma_to_tf32(v.x), v.y = ocd_mma_to_tf32(v.y), v.z = ocd_mma_to_tf32(v.z), v.w = ocd_mma_to_tf32(v.w);
        *c = v;
    }
}

/* The operations ocd_wgmma_kloop runs, as this thread issues them. */
template <class Tile, typename T, bool MN, class ALoad, class BLoad> struct igemm_wgmma_ops {
    typedef igemm_wgmma_shape<Tile, T, MN> Shape;
    unsigned char *smem;
    uint32_t base; /* smem's shared address */
    const ALoad &al;
    const BLoad &bl;
    const igemm_params &p;
    int kt0, wg, tid;
    float (&d)[Tile::MI][Tile::BN / 2];

    __device__ __forceinline__ void fence_operands()
    {
#pragma unroll
        for (int mi = 0; mi < Tile::MI; mi++) ocd_wgmma_fence_operands(d[mi]);
    }

    __device__ __forceinline__ void load(int tile, int s)
    {
        al.load((T *)(smem + Shape::a_stage(s)), kt0 + tile, p);
        bl.load((T *)(smem + Shape::b_stage(s)), kt0 + tile, p);
    }
    __device__ __forceinline__ void cp_commit()
    {
        ocd_mma_cp_commit();
    }
    template <int N> __device__ __forceinline__ void cp_wait()
    {
        ocd_mma_cp_wait<N>();
    }
    __device__ __forceinline__ void convert(int s)
    {
        if constexpr (std::is_same<T, float>::value) {
            if (p.round_a) igemm_wgmma_round_tf32<typename Shape::SA, Tile::BM, Tile::THREADS>(smem + Shape::a_stage(s), tid);
            if (p.round_b) igemm_wgmma_round_tf32<typename Shape::SB, Tile::BN, Tile::THREADS>(smem + Shape::b_stage(s), tid);
        }
    }
    __device__ __forceinline__ void fence_async()
    {
        ocd_bulk_fence_writes();
    }
    __device__ __forceinline__ void sync()
    {
        __syncthreads();
    }
    __device__ __forceinline__ void mma(int s)
    {
        igemm_wgmma_issue<Tile, T, MN>(d, base, s, wg);
    }
    template <int N> __device__ __forceinline__ void mma_wait()
    {
        ocd_wgmma_wait<N>();
        fence_operands();
    }
};

/* grid = (ceil(M / BM), ceil(N / BN), groups * splits), 256 threads, igemm_wgmma_shape::SMEM
   bytes of dynamic shared memory. */
template <class Tile, typename T, class Dir>
__global__ void __launch_bounds__(256, 1) igemm_wgmma_kernel(const __grid_constant__ igemm_params p)
{
#ifdef OCD_WGMMA_ARCH_OK
    typedef igemm_wgmma_shape<Tile, T, !Dir::A_KMAJOR> Shape;
    typedef typename Shape::SA SA;
    typedef typename Shape::SB SB;
    extern __shared__ __align__(16) unsigned char igemm_wgmma_smem_raw[];
    const uint32_t raw = ocd_wgmma_smem_addr(igemm_wgmma_smem_raw);
    const uint32_t pad = (1024u - (raw & 1023u)) & 1023u;

    const int tid = threadIdx.x, wg = tid >> 7;
    const igemm_cta c = igemm_cta_of(p, blockIdx.x, blockIdx.y, blockIdx.z, Tile::BM, Tile::BN, SA::BK);
    typename Dir::template ALoad<T, Tile::BM, Tile::THREADS, SA> al;
    typename Dir::template BLoad<T, Tile::BN, Tile::THREADS, SB> bl;
    al.setup(p, c.m0, c.n0, c.g, tid);
    bl.setup(p, c.m0, c.n0, c.g, tid);

    float d[Tile::MI][Tile::BN / 2];
#pragma unroll
    for (int mi = 0; mi < Tile::MI; mi++)
#pragma unroll
        for (int i = 0; i < Tile::BN / 2; i++) d[mi][i] = 0.f;
    igemm_wgmma_ops<Tile, T, !Dir::A_KMAJOR, decltype(al), decltype(bl)> ops = {igemm_wgmma_smem_raw + pad, raw + pad, al, bl, p,
                                                                c.kt0, wg, tid, d};
    ocd_wgmma_kloop<Tile::STAGES>(ops, c.nkt);

    igemm_wgmma_store<Tile, T>(p, d, c.m0, c.n0, c.g, c.split, wg, tid);
#endif
}

template <class Tile, typename T, class Dir> struct igemm_wgmma_launch {
    static cudnnStatus_t run(const igemm_params *p, int device, cudaStream_t stream)
    {
        static unsigned long long smem_opted;
        return igemm_launch_kernel<T>(igemm_wgmma_kernel<Tile, T, Dir>, Tile::BM, Tile::BN, Tile::THREADS,
                                      igemm_wgmma_shape<Tile, T, !Dir::A_KMAJOR>::SMEM, &smem_opted, p, device, stream);
    }
};

extern const bool ocd_igemm_wgmma_built = OCD_WGMMA_BUILT;

#define IGEMM_WGMMA_ROW(i, bm, bn, st)                                                              \
    {OCD_IGEMM_LAUNCH_TYPES(igemm_wgmma_launch, igemm_dir_fwd, igemm_wgmma_tile<bm, bn, st>),           \
     OCD_IGEMM_LAUNCH_TYPES(igemm_wgmma_launch, igemm_dir_dgrad, igemm_wgmma_tile<bm, bn, st>),         \
     OCD_IGEMM_LAUNCH_TYPES(igemm_wgmma_launch, igemm_dir_wgrad, igemm_wgmma_tile<bm, bn, st>)},
const igemm_launch_fn ocd_igemm_wgmma_launch[OCD_IGEMM_WGMMA_NTILES][OCD_CONV_DIRS][IGEMM_NTYPES] = {
    OCD_IGEMM_WGMMA_TILES(IGEMM_WGMMA_ROW)};
#undef IGEMM_WGMMA_ROW
