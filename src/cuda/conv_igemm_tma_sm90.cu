/* conv_igemm_tma_sm90.cu: the implicit-GEMM convolution on a warp-specialized sm_90a kernel fed
   by the tensor memory accelerator: the forward pass (entries cuda:fwd_igemm_tma_*, and backward
   data with unit stride as a forward pass, cuda:dgrad_igemm_tma_*) and the filter gradient
   (cuda:wgrad_igemm_tma_*), planned by conv_igemm.cu's make_plan like the other tiles; fp16 and
   bf16, and fp32 data as TF32 forward and for backward data (cuda:{fwd,dgrad}_igemm_tma_tf32_*,
   and on clusters cuda:{fwd,dgrad}_igemm_tma_c2_tf32_*) and, on NCHW data, for the filter
   gradient (cuda:wgrad_igemm_tma_tf32_*, conv_igemm_tma.cuh's k32 form);
   NHWC activations (the TF32 filter gradient's NCHW), groups 1, 2-D. Compiled for sm_90a alone (CMakeLists.txt), where the
   toolkit has it (OCD_SM90A; else the kernel is empty and ocd_igemm_tma_built false).

   Main decision: one kernel, its direction a template parameter (WGRAD) that picks the stage
   layout and the loads; the ring, the producer, the consumers, the persistent scheduler and the
   epilogue are the same. The operands come from two tensor maps (conv_igemm_tma.cuh: the im2col
   map of the activations and a tiled map, of the KRSC filter forward or of dy for the filter
   gradient, all 128-byte swizzled, so that a landed stage is wgmma's operand as it is: K-major
   forward, MN-major for the filter gradient, whose K runs over pixels; the TF32 filter
   gradient's two rank-4 tiled maps K-major in swizzled rows of pixels), and a CTA of three
   warpgroups (two for the 64-row tile, below) splits the work: one thread of warpgroup 0 issues, per K tile, an
   arrive.expect_tx of the stage's bytes on its "full" mbarrier and the TMA loads (igemm_tma_kt:
   two forward, one per 64-row block of each operand for the filter gradient); warpgroups 1 and
   2 each multiply BM / 2 rows of the BM x BN tile with wgmma.mma_async from the stages and
   release each stage on its "empty" mbarrier once the wgmma that read it has completed
   (wgmma.cuh's ocd_wgmma_ring_*), each warp's lane 0 arriving (conv_igemm_tma.cuh's
   igemm_tma_releases: 4 arrivals a warpgroup instead of 128). The producer gives its registers
   to the consumers (setmaxnreg: 40 against 232), whose accumulators hold the whole tile. The
   kernel is persistent: min(units, SMs) CTAs walk the work units (each tile once per split)
   along M first, the ring running on across units, so the next unit's loads overlap this one's
   epilogue; the epilogue is the other kernels' (igemm_store_frags: alpha, beta, bias, ReLU, or
   the partial sums of split-K or a wide epilogue, and their reduction). The forward pass has no
   split-K: where its tiles are too few to fill most of the GPU, conv_igemm.cu's tile_rejects
   leaves the problem to the smaller tiles; the filter gradient, whose GEMM is small and whose
   K is long, splits K over the pixels as the cp.async kernel does.

   The filter gradient's 64-row tile (the _w64 tiles, entries cuda:wgrad_igemm_tma_64x*): a GEMM
   of M = 64 filters (ResNet's 64-channel layers) would leave a 128-row tile half padding, so
   this tile has one consumer warpgroup of one 64-row slice (m64n256 wgmma, the widest the ISA
   has, on 64 x 256 of dW) beside the producer: 256 threads, the empty barriers counting one
   warpgroup's arrivals, no register reallocation (each thread may have 256 at launch). Its
   stage (8 KB of dy, 32 KB of x) is smaller, so the ring has 5 stages. Swapping the GEMM's
   roles (dW^T, the filters as N) would have kept two warpgroups but made the epilogue write dW
   transposed and skip padding rows instead of columns. Its 64-wide twin (64 x 64, m64n64, 8
   stages of 16 KB) takes GEMMs of 64 columns, a 1x1 filter over 64 channels, which the 256-wide
   tile declines as three quarters padding.

   The narrow forward and backward-data tiles (OCD_IGEMM_TMA_NARROW_TILES: 128x128 in 7 stages,
   256x64 in 5, 128x64 in 9, each as many as fill the 227 KB; two consumer warpgroups, the
   256x64 one's of two m64n64 slices each) serve what the 128x256 and 256x128 tiles decline:
   GEMMs of 64 columns (ResNet's 64-channel layers, three quarters or half padding in them) and
   GEMMs whose wide tiles are too few to fill the GPU; fp16, bf16 and fp32 as TF32. What a tile
   costs per flop, with K tiles of 64 16-bit elements (128 bytes a row; TF32's 32 fp32 ones
   carry the same bytes for half the flops at half the tensor cores' rate: the same clocks),
   bounds how fast it can run:
   - L2 to shared memory: a K tile of a BM x BN tile loads (BM + BN) x 128 bytes for 2 BM BN 64
     flops, (BM + BN) / (BM BN) bytes a flop: 0.0117 for 128x256 and 256x128, 0.0156 for 128x128,
     0.0195 for 256x64, 0.0234 for 128x64; at the issue's goal of 450 TFLOP/s, 5.3, 7.0, 8.8 and
     10.5 TB/s of L2 reads. The im2col operand's R S re-reads of each input pixel and the filter
     (73 KB at 64 x 64 x 3 x 3) stay in L2, so the DRAM traffic is x and y once whatever the tile,
     and the L2's bandwidth is what the narrow tiles spend more of; hence the order, most
     bytes a flop last, each tried only where the ones before decline.
   - Shared memory to the tensor cores: a m64nNk16 wgmma reads 2 KB of A and 32 N bytes of B for
     2 x 64 x 16 N flops: 0.0195 bytes a flop at N = 256, 0.0234 at 128, 0.031 at 64. At the
     dense 16-bit rate of an SM (989 TFLOP/s on 132 SMs at 1.83 GHz: 4096 flops a clock), and if
     shared memory delivers 128 bytes a clock as on sm_80, an N = 64 wgmma's operand reads take
     as many clocks as its flops, leaving none for the TMA's writes: the 64-wide tiles would stay
     below the tensor cores' peak whatever the loads do (the 256x64 tile's two slices per
     warpgroup read B twice, as two warpgroups of 128x64 do).
   The ways past both for 64 columns, a transposed GEMM (the 64 filters as M, m64n256 over 256
   pixels, the epilogue writing y transposed) for the shared-memory reads and the filter resident
   in shared memory for the L2 reads, are among conv_igemm.cu's next steps (its last comment).
   The cp.async kernel's tiles of the same shapes pay the same costs plus their loads' address
   arithmetic on the consumer warps, so the narrow TMA tiles are listed ahead of those (a GPU run
   of the unproven entries decides where they win).

   Clusters (the _c2 entries; conv_igemm_tma.cuh says how the units pair up and B splits): the
   two CTAs of a cluster run the same ring in step, each producer loading its A and its half of
   B, that half multicast into both CTAs. So a stage of either CTA is written by both producers,
   and the protocol widens to the cluster: a CTA's full barrier expects its A bytes and all of
   B (the peer's multicast may complete on it before this CTA's own arrive.expect_tx: the
   ISA's tx-count may go negative meanwhile, and the phase cannot complete while the producer's
   arrival is pending); each consumer warp releases a stage on the empty barrier of both CTAs
   (mapa + mbarrier.arrive.release.cluster by its lane 0, each empty barrier counting 2 x 8
   arrivals), so neither producer refills a stage, its own or, through the
   multicast, its peer's, before the consumers of both have finished reading it; and that
   release, which follows this CTA's full phase, also keeps a peer's multicast of the next use
   from completing on a full barrier whose current phase is still waiting for this one. A
   cluster barrier after the mbarrier initializations (no multicast or remote arrival before the
   peer's barriers exist) and one before exiting (none into a CTA that has exited) close the
   kernel; every thread reaches both. Where no cluster fits the GPU at once (a MIG slice, an MPS
   limit: cudaOccupancyMaxActiveClusters 0), the plan declines the clustered tiles
   (igemm_tma_launch::clusters, asked once per device and kernel), so the next entry serves.

   TF32 (fp32 data, T float): the same kernel with wgmma.mma_async m64nNk8.tf32, a K tile of 32
   channels (still one 128-byte swizzled row, so the stages, boxes and bytes are the 16-bit
   kernel's); TF32 wgmma takes K-major operands only, which the forward pass (NHWC activations,
   KRSC filter) and backward data as a forward pass have, and the filter gradient (MN-major) has
   not. The operands reach wgmma as the TMA lands them, fp32 bits of which the tensor cores keep
   the tf32 part: truncated to 10 mantissa bits, not rounded as the cp.async kernel's cvt.rna pass
   rounds them. Rounding here would have the consumers read and write every stage once more
   (96 KB of shared-memory traffic a K tile of the 128x256 tile, more than wgmma's own 80 KB of
   reads of it), then a generic-to-async proxy fence and a barrier of both consumer warpgroups
   before each K tile's wgmma;
   truncation costs one more bit: each operand within 2^-10 of its value instead of 2^-11, a
   product within 2^-9, which is the bound tests/conv_fidelity.c holds TF32 results to (2^-9 of
   the sum of the products' magnitudes) and within the tests' TF32 tolerance
   (tests/emulate/conv_igemm_tma_tf32.cu checks both on the emulated truncating wgmma). Operands
   that pass through a workspace copy anyway (NCHW activations transposed, a filter packed,
   channels padded) are rounded by that copy (conv_igemm.cu's igemm_operand).

   The staged epilogue (igemm_tma_geom::staged, a template parameter of the kernel: the other
   instantiation is the epilogue of igemm_store_frags as it was). Storing straight from the
   wgmma fragments writes, per warp instruction, 4 bytes at 8 rows (two sectors touched for 16
   bytes each), and pays three fast divisions per element for the column map; the tensor cores
   idle meanwhile. Here each consumer warp stages its accumulators through a buffer of its own
   (16 rows x 32 fp32 columns, 2 KB; 16 KB for the eight consumer warps, past the barriers),
   a chunk of 32 columns at a time: every lane writes its fragment pairs (8-byte stores), then
   reads back 4 consecutive columns of 4 rows (16-byte loads) and applies the typed store's
   epilogue on the way out (conv_store.cuh's ocd_cuda_conv_epi_apply: alpha, beta with z read 4
   elements at once, the 4 rows' z before any of their stores, bias, the fused call's scale and
   ReLU, the ReLU gradient), storing 4 elements at
   once (8 bytes of fp16 or bf16, 16 of fp32): the 8 lanes of a row cover its 32 columns, whole
   32-byte sectors. The rows' offsets are mapped once per 64-row slice (4 per lane), the
   columns need none: the path is planned only where the output's columns are contiguous
   (NHWC y, or dx for backward data, its stride phases included; an NCHW one under the plain
   epilogue through packed NHWC in the workspace: conv_igemm.cu's plan_out), with neither split-K nor the
   wide epilogue (the forward pass has no split-K; the filter gradient, with its padded
   columns and split-K, keeps igemm_store_frags, as do NCHW outputs and the clustered tiles);
   4 elements misaligned or across N go element by element. The buffer's 16-byte chunks are
   XOR-swizzled (chunk ^ 2 (row % 4)), so that a half-warp's 8-byte writes (4 rows, 32 bytes
   each) and a quarter-warp's 16-byte reads (one row) touch every bank once. No barrier
   beyond __syncwarp: the buffer is the warp's. It needs 16 KB the ring of the 128x128 and
   128x64 tiles leaves not (their stages fill the shared memory), so those keep
   igemm_store_frags (ocd_igemm_tma_staged says which tiles have it).
   A TMA store (cp.async.bulk.tensor from shared memory) would write a packed NHWC tile with
   one instruction, but needs the whole BM x BN output tile in shared memory (64 KB at 16 bits
   on the 128x256 tile, beyond what the ring leaves) or a tensor map per chunk, and beta's z
   read back as well; the warps' own 32-byte-sector stores reach the same DRAM efficiency.

   Ping-pong consumers (igemm_tma_geom::pingpong, the plan's choice with the staged epilogue on
   the 16-bit forward tiles of 128 rows or more: the staged kernel's twin, Tile::PP). With both
   warpgroups splitting every tile, both reach the epilogue together and the tensor cores idle
   through it, once a tile, whose K loop is short on a 3x3 layer (9 K tiles at 64 channels).
   The twin's work unit is half the tile's rows (128x256 becomes units of 64x256, 256x128 and
   256x64 units of 128x128 and 128x64: the accumulators a thread holds are the tile's), each
   unit a whole warpgroup's, the CTA's units alternating between the two; so one warpgroup's
   epilogue runs while the other's wgmma keep the tensor cores busy. The ring is wgmma.cuh's
   with two teams: each counts the other's K tiles without touching their stages, a stage's use
   is released by the one warpgroup that read it (empty barriers of one warpgroup's arrivals),
   and the warpgroups take turns on the mainloop through two named barriers (bar.sync on its
   own, 1 or 2, before a unit's first wgmma; bar.arrive on the other's once its last one is
   issued), so their wgmma do not interleave and a unit's K tiles all land before the next
   unit's are waited for (which the parity waits need: wgmma.cuh). The units being half as tall,
   each K tile loads B for half the rows: the L2 bytes a flop of a 64x256 or 128x128 tile above,
   the price of the overlap; the stages are as many as fit beside the staged buffers
   (igemm_tma_pingpong_tile: 5 of 40 KB, 6 of 32 KB, 8 of 24 KB).

   The stride phases of strided backward data (conv_igemm.cu's phases_run) run as kernels of
   their own, chained (igemm_tma_geom::chain): each lets the next phase's kernel, launched early,
   start its CTAs once its own are resident (they then take the multiprocessors this one's last
   wave leaves), and waits at its end for the phase ahead, so that the last phase's completion is
   every phase's; the phases write disjoint parts of dx and read nothing another writes.

   The tensor maps hold the data pointers, so they are encoded per call on the host
   (cuTensorMapEncodeIm2col, cuTensorMapEncodeTiled: host arithmetic, no device work), through
   the driver entry points the runtime hands out (cudaGetDriverEntryPoint: the library never
   links the driver library), and passed as __grid_constant__ kernel parameters. */
#include "cuda/bulk.cuh"
#include "cuda/conv_igemm_sm90.cuh"
#include "cuda/conv_igemm_tma.cuh"
#include "cuda/launch.cuh"

#include <cudaTypedefs.h>
#include <stdlib.h>

/* A CTA tile: BM x BN, a producer warpgroup and CONSUMERS consumer warpgroups of BM / CONSUMERS
   rows (MI slices of 64, BN columns each: m64nBNk16 wgmma): two, or one for the 64-row tile,
   STAGES K tiles in the ring, clusters
   of CL CTAs along M. Two consumers take registers from the producer (setmaxnreg); one has the
   register file's 256 a thread at launch already (256 threads, one CTA a multiprocessor).
   PP: ping-pong consumers (the file comment; igemm_tma_pingpong_tile), two warpgroups each of
   the whole BM x BN unit (MI = BM / 64 slices), taking turns; a stage released by one
   (RELEASERS warpgroups a stage's use). slice(wg): warpgroup wg's first 64-row slice / MI.
   KQ: the TF32 filter gradient's pixels a row of its K tile (conv_igemm_tma.cuh's k32 form, 8 or
   32; the plan's kq picks the kernel, with_kq its tile). */
template <int BM_, int BN_, int STAGES_, int CL_ = 1, bool PP_ = false, int KQ_ = 8> struct igemm_tma_tile {
    static constexpr int BM = BM_, BN = BN_, STAGES = STAGES_, CL = CL_, KQ = KQ_;
    static constexpr bool PP = PP_;
    template <int K> using with_kq = igemm_tma_tile<BM, BN, STAGES, CL, PP, K>;
    static constexpr int CONSUMERS = BM == 64 && !PP ? 1 : 2, RELEASERS = PP ? 1 : CONSUMERS;
    static constexpr int THREADS = 128 * (1 + CONSUMERS), MI = PP ? BM / 64 : BM / 64 / CONSUMERS;
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232; /* 128 x 40 + 256 x 232 <= 64 Ki */
    static_assert(BM == 64 || BM == 128 || BM == 256, "consumer warpgroups of one or two 64-row slices");
    static_assert(BN <= 256, "a TMA box dimension is at most 256 elements");
    static_assert(CL == 1 || CL == 2, "clusters of one or two CTAs");
    static_assert(!PP || (CL == 1 && MI <= 2), "ping-pong units of one or two slices, unclustered");
    static __host__ __device__ __forceinline__ int slice(int wg)
    {
        return PP ? 0 : wg;
    }
};

/* The staged epilogue of the file comment: a consumer warp's buffer of 16 rows x COLS fp32
   accumulators (a chunk), the lanes' parts of it, and the loop over a unit's chunks. */
template <class Tile, typename T> struct igemm_tma_staged {
    static constexpr int COLS = 32;                                    /* 128 bytes of fp32 a row */
    static constexpr uint32_t WARP_BYTES = 16 * COLS * 4;              /* a warp's buffer */
    static constexpr uint32_t BYTES = Tile::CONSUMERS * 4 * WARP_BYTES; /* every consumer warp's */
    typedef ocd_vec<T, 4> vec4;
    /* A warp's chunks of a unit (MI slices of BN / COLS), and how many of them a lane's z is
       loaded ahead of its stores: 32 registers' worth (4 rows of 4 elements a chunk) */
    static constexpr int CHUNKS = Tile::BN / COLS, ALL = Tile::MI * CHUNKS;
    static constexpr int AHEAD = OCD_MIN(ALL, 32 * 4 / (4 * (int)sizeof(vec4)));
    /* What a lane keeps across the chunks: its accumulators, the output offsets of its 4 rows of
       the warp's 16 in each slice (rows lane / 8 + 4 i; -1 past M), and the z of its next AHEAD
       chunks (chunk q in z[q % AHEAD]). */
    struct lane {
        const float (*d)[Tile::BN / 2];
        int64_t roff[Tile::MI][4];
        vec4 z[AHEAD][4];
    };

    /* The byte offset of (row, col) in a warp's buffer: 16-byte chunk col / 4 of the row at
       chunk (col / 4) ^ 2 (row % 4). */
    static __host__ __device__ __forceinline__ uint32_t at(int row, int col)
    {
        return (uint32_t)row * (COLS * 4) + ((((uint32_t)col >> 2) ^ (((uint32_t)row & 3u) << 1)) << 4) +
               ((uint32_t)col & 3u) * 4;
    }
    /* The output offsets of the lane's rows of the warp's 16 from GEMM row mw. */
    static __host__ __device__ __forceinline__ void rows(const igemm_params &p, int mw, int ln, int64_t (&roff)[4])
    {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int m = mw + (ln >> 3) + 4 * i;
            roff[i] = m < p.M ? igemm_map_offset(p.epi.row, (uint32_t)m) : -1;
        }
    }
    /* Whether the lane's 4 columns from col of the row at output offset roff are stored as one
       vector (and their z, where the form reads it, loaded as one). */
    static __host__ __device__ __forceinline__ bool vector_row(const igemm_params &p, int64_t roff, int col, bool reads)
    {
        const igemm_epi &e = p.epi;
        return roff >= 0 && p.N - col >= 4 && ((uintptr_t)((T *)e.out + roff + col)) % sizeof(vec4) == 0 &&
               (!reads || ((uintptr_t)((const T *)e.z + roff + col)) % sizeof(vec4) == 0);
    }
    /* The z of the lane's vector rows of chunk q (columns from GEMM column n0 + COLS (q % CHUNKS)),
       into its slot. Loaded AHEAD chunks before their stores: a load right before the store that
       needs it would expose a memory latency a chunk, since no load can be moved above an
       earlier chunk's stores (z may be the output itself). */
    static __host__ __device__ __forceinline__ void load_z(const igemm_params &p, lane &l, int q, int n0, int ln)
    {
        const int col = n0 + (q % CHUNKS) * COLS + 4 * (ln & 7);
        if (col >= p.N) return;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int64_t roff = l.roff[q / CHUNKS][i];
            if (vector_row(p, roff, col, true)) l.z[q % AHEAD][i] = *(const vec4 *)((const T *)p.epi.z + roff + col);
        }
    }
    /* The lane's accumulators of chunk c (columns COLS c ..) of slice mi into the buffer: the
       fragments of wgmma's layout (conv_igemm_sm90.cuh's igemm_wgmma_store), pairs of adjacent
       columns, rows ln / 4 and ln / 4 + 8. */
    static __host__ __device__ __forceinline__ void put(unsigned char *buf, const lane &l, int mi, int c, int ln)
    {
#pragma unroll
        for (int jj = 0; jj < COLS / 8; jj++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int j = c * (COLS / 8) + jj, row = (ln >> 2) + 8 * h, col = 8 * jj + 2 * (ln & 3);
                float *dst = (float *)(buf + at(row, col));
                dst[0] = l.d[mi][j * 4 + 2 * h], dst[1] = l.d[mi][j * 4 + 2 * h + 1];
            }
    }
    /* The lane's 4 columns 4 (ln % 8) .. of chunk q (its first column GEMM column n), in its 4
       rows, through the epilogue of form FORM (igemm_epi_form) to the output (contiguous
       columns: make_plan's), z (where the form reads it) from the chunk's slot. */
    template <int FORM>
    static __host__ __device__ __forceinline__ void flush(const igemm_params &p, const unsigned char *buf, const lane &l,
                                                          int q, int n, int ln)
    {
        const igemm_epi &e = p.epi;
        const int k = ln & 7, col = n + 4 * k;
        if (col >= p.N) return;
        /* the 4 columns' channel values, loaded once for the 4 rows (conv_store.cuh's
           ocd_cuda_conv_chan; a column past N repeats the last): the vector stores' */
        ocd_cuda_conv_chan ch[4];
#pragma unroll
        for (int t = 0; t < 4; t++) ch[t] = igemm_epi_chan<T, FORM>(e, OCD_MIN(col + t, p.N - 1));
        const bool reads = igemm_epi_reads_z<FORM>(e);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int64_t roff = l.roff[q / CHUNKS][i];
            if (roff < 0) continue;
            const float *a = (const float *)(buf + at((ln >> 3) + 4 * i, 4 * k));
            if (!vector_row(p, roff, col, reads)) {
#pragma unroll 1
                for (int t = 0; t < 4 && col + t < p.N; t++) igemm_epi_store<T, FORM>(e, roff + col + t, col + t, a[t]);
                continue;
            }
            const vec4 &z = l.z[q % AHEAD][i];
            vec4 o;
#pragma unroll
            for (int t = 0; t < 4; t++)
                ocd_cuda_store(&o.v[t], igemm_epi_apply<FORM>(e, ch[t], a[t], reads ? ocd_cuda_load(&z.v[t]) : 0.f));
            *(vec4 *)((T *)e.out + roff + col) = o;
        }
    }
};

/* Consumer warp `warp` (0 .. 3) of warpgroup wg stores its rows of the unit at (m0, n0) through
   its buffer buf in epilogue form FORM: the lanes' rows of every slice and the z of their first
   AHEAD chunks, then chunk by chunk (the slices' chunks, in order; those inside N) the lanes'
   puts, then their flushes, each followed by the z of the chunk AHEAD further. lanes(f) runs f(lane, its state)
   on every lane of the warp and then synchronizes them (the kernel: its own lane and __syncwarp;
   an emulation: the 32 lanes in turn), so no lane reads the buffer before every put, or
   overwrites it before every flush, of the chunk. */
#pragma nv_exec_check_disable
template <class Tile, typename T, int FORM, class Lanes>
__host__ __device__ __forceinline__ void igemm_tma_store_staged_as(const igemm_params &p, int m0, int n0, int wg,
                                                                   int warp, unsigned char *buf, Lanes &&lanes)
{
    typedef igemm_tma_staged<Tile, T> E;
    const bool reads = igemm_epi_reads_z<FORM>(p.epi);
    lanes([&](int ln, typename E::lane &l) {
#pragma unroll
        for (int mi = 0; mi < Tile::MI; mi++)
            E::rows(p, m0 + (Tile::slice(wg) * Tile::MI + mi) * 64 + warp * 16, ln, l.roff[mi]);
        if (reads)
#pragma unroll
            for (int q = 0; q < E::AHEAD; q++) E::load_z(p, l, q, n0, ln);
    });
#pragma unroll
    for (int q = 0; q < E::ALL; q++) { /* unrolled: the accumulators and z stay registers */
        const int mi = q / E::CHUNKS, c = q % E::CHUNKS;
        const bool inside = n0 + c * E::COLS < p.N; /* (the next slice's chunks may be, so the z ahead still loads) */
        if (inside) lanes([&](int ln, typename E::lane &l) { E::put(buf, l, mi, c, ln); });
        lanes([&](int ln, typename E::lane &l) {
            if (inside) E::template flush<FORM>(p, buf, l, q, n0 + c * E::COLS, ln);
            if (reads && q + E::AHEAD < E::ALL) E::load_z(p, l, q + E::AHEAD, n0, ln);
        });
    }
}

/* igemm_tma_store_staged_as in the form the plan's epilogue is (epi.form). */
#pragma nv_exec_check_disable
template <class Tile, typename T, class Lanes>
__host__ __device__ __forceinline__ void igemm_tma_store_staged(const igemm_params &p, int m0, int n0, int wg, int warp,
                                                                unsigned char *buf, Lanes &&lanes)
{
    if (p.epi.form == IGEMM_EPI_PLAIN)
        igemm_tma_store_staged_as<Tile, T, IGEMM_EPI_PLAIN>(p, m0, n0, wg, warp, buf, lanes);
    else if (p.epi.form == IGEMM_EPI_BIAS)
        igemm_tma_store_staged_as<Tile, T, IGEMM_EPI_BIAS>(p, m0, n0, wg, warp, buf, lanes);
    else
        igemm_tma_store_staged_as<Tile, T, IGEMM_EPI_WHOLE>(p, m0, n0, wg, warp, buf, lanes);
}

/* The shared memory: the stages as igemm_wgmma_shape lays them out (A stages, then B stages, from
   a 1024-byte aligned base; K-major, or MN-major for the filter gradient: the same bytes), then
   the mbarriers full[STAGES] and empty[STAGES]; 1024 bytes more to align the start. The staged
   epilogue's kernel has its buffers after the barriers (STAGING, 128-byte aligned):
   SMEM_STAGED, where it fits (STAGED_FITS). */
template <class Tile, typename T, bool WGRAD> struct igemm_tma_smem {
    typedef igemm_wgmma_shape<Tile, T, WGRAD> Shape;
    typedef igemm_tma_kt<Tile::BM, Tile::BN, WGRAD, Tile::CL, Shape::KQ> Loads;
    static constexpr uint32_t BARS = Tile::STAGES * (Shape::SA::STAGE_BYTES + Shape::SB::STAGE_BYTES);
    static constexpr size_t SMEM = BARS + 2 * Tile::STAGES * sizeof(uint64_t) + 1024;
    static constexpr uint32_t STAGING = (BARS + 2 * Tile::STAGES * sizeof(uint64_t) + 127) / 128 * 128;
    static constexpr size_t SMEM_STAGED = STAGING + igemm_tma_staged<Tile, T>::BYTES + 1024;
    static constexpr bool STAGED_FITS = SMEM_STAGED <= 227 * 1024;
    static_assert(SMEM <= 227 * 1024, "the ring fits a multiprocessor's shared memory");
    static_assert(!WGRAD || Shape::K32 || Loads::BLOCK == Shape::SA::BK * 128u,
                  "a 16-bit filter-gradient box is one MN-major block");
};

/* The ping-pong twin of forward tile Tile (the file comment): units of BM / 2 x BN, each a
   consumer warpgroup's, in as many stages as fit beside the staged epilogue's buffers (and the
   barriers, 256 bytes at most). */
template <class Tile, typename T> struct igemm_tma_pingpong_tile {
    typedef igemm_tma_tile<Tile::BM / 2, Tile::BN, 1, 1, true> One;
    typedef igemm_wgmma_shape<One, T, false> Shape;
    static constexpr int STAGES = (int)((227 * 1024 - 1024 - 256 - igemm_tma_staged<One, T>::BYTES) /
                                        (Shape::SA::STAGE_BYTES + Shape::SB::STAGE_BYTES));
    typedef igemm_tma_tile<Tile::BM / 2, Tile::BN, STAGES, 1, true> type;
};

/* What producer and consumers share: the K tiles of a work unit. */
template <class Tile, bool WGRAD> struct igemm_tma_units {
    const igemm_params &p;
    const igemm_tma_geom &g;

    __device__ __forceinline__ int nkt(int tile) const
    {
        return igemm_tma_unit_at(g, tile, Tile::BM, Tile::BN).nkt;
    }
};

/* The producer's operations (one thread; rank: its CTA's in the cluster). */
template <class Tile, typename T, bool WGRAD> struct igemm_tma_producer : igemm_tma_units<Tile, WGRAD> {
    typedef igemm_tma_smem<Tile, T, WGRAD> L;
    static constexpr uint16_t ALL = (1u << Tile::CL) - 1; /* the multicast's CTAs: the cluster's */
    unsigned char *smem;
    uint64_t *full, *empty;
    const CUtensorMap *mi, *mt; /* the im2col map (k32: x's tiled map), the tiled map */
    int rank;

    __device__ __forceinline__ void wait_empty(int s, unsigned parity)
    {
        if (Tile::CL > 1) ocd_mbar_wait_cluster(&empty[s], parity);
        else ocd_mbar_wait(&empty[s], parity);
    }
    __device__ __forceinline__ void load(int tile, int kt, int s)
    {
        const typename L::Loads k(this->p, this->g, tile, kt, rank);
        ocd_mbar_arrive_expect_tx(&full[s], k.bytes);
#pragma unroll
        for (int i = 0; i < L::Loads::COPIES; i++) {
            if (!k.on(i)) continue;
            const igemm_tma_copy c = k.copy(this->p, this->g, i);
            unsigned char *dst = smem + (c.into_b ? L::Shape::b_stage(s) : L::Shape::a_stage(s)) + c.off;
            if (c.rank4) /* k32: x's map into B, dy's into A */
                ocd_bulk_tensor_tile4(dst, c.into_b ? mi : mt, c.c[0], c.c[1], c.c[2], c.c[3], &full[s]);
            else if (c.im2col && c.multicast)
                ocd_bulk_tensor_im2col4_multicast(dst, mi, c.c[0], c.c[1], c.c[2], c.c[3], c.ow, c.oh, &full[s], ALL);
            else if (c.im2col)
                ocd_bulk_tensor_im2col4(dst, mi, c.c[0], c.c[1], c.c[2], c.c[3], c.ow, c.oh, &full[s]);
            else if (c.multicast)
                ocd_bulk_tensor_tile3_multicast(dst, mt, c.c[0], c.c[1], c.c[2], &full[s], ALL);
            else
                ocd_bulk_tensor_tile3(dst, mt, c.c[0], c.c[1], c.c[2], &full[s]);
        }
    }
};

/* A consumer warpgroup's operations (wg 0 or 1, tid its thread 0..127 as the epilogue counts, or
   128 more in warpgroup 1); STAGED: the staged epilogue, through the buffers at staging. */
template <class Tile, typename T, bool WGRAD, bool STAGED> struct igemm_tma_consumer : igemm_tma_units<Tile, WGRAD> {
    uint64_t *full, *empty;
    uint32_t base; /* the stages' shared address */
    int wg, tid;
    unsigned char *staging;
    float (&d)[Tile::MI][Tile::BN / 2];

    __device__ __forceinline__ void wait_full(int s, unsigned parity)
    {
        ocd_mbar_wait(&full[s], parity);
    }
    __device__ __forceinline__ void zero()
    {
#pragma unroll
        for (int mi = 0; mi < Tile::MI; mi++)
#pragma unroll
            for (int i = 0; i < Tile::BN / 2; i++) d[mi][i] = 0.f;
    }
    __device__ __forceinline__ void mma(int s)
    {
        igemm_wgmma_issue<Tile, T, WGRAD>(d, base, s, Tile::slice(wg));
    }
    template <int N> __device__ __forceinline__ void mma_wait()
    {
        ocd_wgmma_wait<N>();
#pragma unroll
        for (int mi = 0; mi < Tile::MI; mi++) ocd_wgmma_fence_operands(d[mi]);
    }
    /* ping-pong: warpgroup wg waits for its turn on named barrier 1 + wg, and passes the turn
       to the other on its barrier (wgmma.cuh's ring) */
    __device__ __forceinline__ void turn_wait()
    {
        ocd_named_bar_sync(1 + wg, 256);
    }
    __device__ __forceinline__ void turn_pass()
    {
        ocd_named_bar_arrive(2 - wg, 256);
    }
    /* the stage's empty barrier in every CTA of the cluster: both producers write it; its
       warp's lane 0's arrival (conv_igemm_tma.cuh's igemm_tma_releases) */
    __device__ __forceinline__ void release(int s)
    {
        if (!igemm_tma_releases(tid & 31)) return;
        if (Tile::CL == 1) ocd_mbar_arrive(&empty[s]);
        else
#pragma unroll
            for (int r = 0; r < Tile::CL; r++) ocd_mbar_arrive_cluster(&empty[s], (unsigned)r);
    }
    __device__ __forceinline__ void store(int tile)
    {
        const igemm_tma_unit u = igemm_tma_unit_at(this->g, tile, Tile::BM, Tile::BN);
        if constexpr (STAGED) {
            typedef igemm_tma_staged<Tile, T> E;
            const int warp = (tid & 127) >> 5;
            typename E::lane l;
            l.d = d;
            igemm_tma_store_staged<Tile, T>(this->p, u.m0, u.n0, wg, warp, staging + (wg * 4 + warp) * E::WARP_BYTES,
                                            [&](auto f) {
                                                f(tid & 31, l);
                                                __syncwarp();
                                            });
        } else {
            igemm_wgmma_store<Tile, T>(this->p, d, u.m0, u.n0, 0, u.split, Tile::slice(wg), tid);
        }
    }
};

/* grid = min(units, SMs) (clustered: a multiple of CL, clusters of consecutive CTAs),
   Tile::THREADS threads, igemm_tma_smem::SMEM bytes of dynamic shared memory (SMEM_STAGED for
   the staged epilogue, STAGED). */
template <class Tile, typename T, bool WGRAD, bool STAGED = false>
__global__ void __launch_bounds__(Tile::THREADS, 1)
    igemm_tma_kernel(const __grid_constant__ igemm_params p, const __grid_constant__ CUtensorMap mi,
                     const __grid_constant__ CUtensorMap mt, const __grid_constant__ igemm_tma_geom g)
{
#ifdef OCD_WGMMA_ARCH_OK
    typedef igemm_tma_smem<Tile, T, WGRAD> L;
    extern __shared__ __align__(1024) unsigned char igemm_tma_smem_raw[];
    const uint32_t raw = ocd_wgmma_smem_addr(igemm_tma_smem_raw);
    unsigned char *smem = igemm_tma_smem_raw + ((1024u - (raw & 1023u)) & 1023u);
    uint64_t *full = (uint64_t *)(smem + L::BARS), *empty = full + Tile::STAGES;
    const int tid = threadIdx.x, wg = tid >> 7;
    if (tid == 0) {
        for (int s = 0; s < Tile::STAGES; s++)
            ocd_mbar_init(&full[s], 1),
                ocd_mbar_init(&empty[s], IGEMM_TMA_RELEASE_ARRIVALS * Tile::RELEASERS * Tile::CL);
        ocd_mbar_init_fence();
    }
    if (Tile::CL > 1) ocd_cluster_sync(); /* the peers' barriers too, before any multicast or remote arrival */
    else __syncthreads();
    if (g.chain) ocd_let_next_start(); /* a stride phase: the next phase's CTAs may take the SMs this one leaves */
    if (wg == 0) {
        if (Tile::CONSUMERS > 1) ocd_wgmma_setmaxnreg_dec<Tile::PRODUCER_REGS>();
        if (tid == 0) {
            igemm_tma_producer<Tile, T, WGRAD> ops = {{p, g}, smem, full, empty, &mi, &mt,
                                                      Tile::CL > 1 ? (int)ocd_cluster_rank() : 0};
            ocd_wgmma_ring_produce<Tile::STAGES>(ops, blockIdx.x, gridDim.x, g.units);
        }
    } else {
        if (Tile::CONSUMERS > 1) ocd_wgmma_setmaxnreg_inc<Tile::CONSUMER_REGS>();
        float d[Tile::MI][Tile::BN / 2];
        igemm_tma_consumer<Tile, T, WGRAD, STAGED> ops = {
            {p, g}, full, empty, ocd_wgmma_smem_addr(smem), wg - 1, tid - 128, smem + L::STAGING, d};
        ocd_wgmma_ring_consume<Tile::STAGES, Tile::PP ? 2 : 1>(ops, blockIdx.x, gridDim.x, g.units, Tile::PP ? wg - 1 : 0);
    }
    /* a stride phase completes after the phase ahead of it, so that the last one's completion, which
       the stream's next work waits for, is every phase's */
    if (g.chain) ocd_wait_ahead();
    if (Tile::CL > 1) ocd_cluster_sync(); /* no peer still writes this CTA's stages or arrives on its barriers */
#endif
}

/* ---- host: the tensor maps and the launch ------------------------------------------------------ */

/* The driver's encoders, from the runtime's entry-point query once per process; NULL members
   where the driver has none (a driver older than CUDA 12.0). */
struct igemm_tma_driver {
    PFN_cuTensorMapEncodeIm2col_v12000 im2col;
    PFN_cuTensorMapEncodeTiled_v12000 tiled;
};

static void *driver_entry(const char *name)
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return fn;
}

static const igemm_tma_driver &tma_driver()
{
    static const igemm_tma_driver drv = {
        (PFN_cuTensorMapEncodeIm2col_v12000)driver_entry("cuTensorMapEncodeIm2col"),
        (PFN_cuTensorMapEncodeTiled_v12000)driver_entry("cuTensorMapEncodeTiled")};
    return drv;
}

/* The two maps of g: the im2col map over the activations x, the tiled map over t (the filter
   forward, dy for the filter gradient); k32, two rank-4 tiled maps over x and dy, under the
   swizzle of the shape's rows (kq pixels: 32 or 128 bytes). conv_igemm_tma.cuh says why each
   parameter is what it is. */
static cudnnStatus_t encode_maps(const igemm_tma_geom &g, const void *x, const void *t, CUtensorMapDataType type,
                                 CUtensorMap *mi, CUtensorMap *mt)
{
    const igemm_tma_driver &drv = tma_driver();
    if (drv.im2col == NULL || drv.tiled == NULL)
        return OCD_FAIL(CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING, "the CUDA driver has no tensor map encoders (12.0 or newer)");
    if (g.k32) { /* both tiled, rank 4, rows of kq pixels under the swizzle of their span */
        const cuuint32_t ones[4] = {1, 1, 1, 1};
        const CUtensorMapSwizzle sw = g.kq == 32 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_32B;
        CUresult r = drv.tiled(mi, type, 4, (void *)x, g.im_dim, g.im_stride, g.im_box, g.im_estride,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r == CUDA_SUCCESS)
            r = drv.tiled(mt, type, 4, (void *)t, g.ti_dim, g.ti_stride, g.ti_box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          sw, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS) return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "cuTensorMapEncodeTiled failed (%d)", (int)r);
        return CUDNN_STATUS_SUCCESS;
    }
    CUresult r = drv.im2col(mi, type, 4, (void *)x, g.im_dim, g.im_stride, g.im_lower, g.im_upper, g.im_channels,
                            g.im_pixels, g.im_estride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "cuTensorMapEncodeIm2col failed (%d)", (int)r);
    const cuuint32_t ones[3] = {1, 1, 1};
    r = drv.tiled(mt, type, 3, (void *)t, g.ti_dim, g.ti_stride, g.ti_box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "cuTensorMapEncodeTiled failed (%d)", (int)r);
    return CUDNN_STATUS_SUCCESS;
}

/* Launches the kernel of Tile (a cluster of Tile::CL CTAs through the launch attribute) on as
   many CTAs as there are units, at most one per multiprocessor, and for clusters at most as many
   as fit on the GPU at once (clusters(): the multiprocessors of a cluster share a GPC, so an odd
   GPC leaves one idle), so that no persistent cluster waits for another to finish before it
   starts its share. The plan asks clusters() too, and declines a clustered tile where none fits
   (conv_igemm.cu); the launch's own check of it stays, as an error. The per-kernel state (the
   shared-memory opt-in, the register-pool check, the cluster count per device) is kept across
   calls (state()). STAGED: the staged epilogue's kernel, which the other's run() launches where
   the plan chose it (STAGED_OK: the unclustered forward tiles with room for its buffers). */
template <class Tile, typename T, bool WGRAD, bool STAGED = false> struct igemm_tma_launch {
    struct kept {
        unsigned long long smem_opted;
        int clusters_of[64]; /* ocd_active_clusters' cache, per device */
        int pool_checked;
    };
    static kept &state()
    {
        static kept k;
        return k;
    }
    typedef igemm_tma_smem<Tile, T, WGRAD> L;
    static constexpr bool STAGED_OK = !WGRAD && Tile::CL == 1 && L::STAGED_FITS;
    /* the ping-pong twin (staged): 16-bit forward tiles of 128 rows or more */
    static constexpr bool PINGPONG_OK = STAGED_OK && !Tile::PP && Tile::BM >= 128 && sizeof(T) == 2;
    static constexpr size_t SMEM = STAGED ? L::SMEM_STAGED : L::SMEM;
    static_assert(!STAGED || STAGED_OK, "a staged epilogue where it fits");

    /* The launch configuration but its grid and stream: the block, the dynamic shared memory
       and, for clusters, the cluster-dimension attribute (attr[0]; attr has room for one more,
       which run() may add). */
    static cudaLaunchConfig_t config(cudaLaunchAttribute attr[2])
    {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = Tile::CL, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.blockDim = dim3(Tile::THREADS);
        cfg.dynamicSmemBytes = SMEM;
        cfg.attrs = attr;
        cfg.numAttrs = Tile::CL > 1;
        return cfg;
    }
    /* The kernel, opted in to its shared memory on device (the current one). */
    static cudnnStatus_t opted(int device)
    {
        return ocd_smem_opt_in(igemm_tma_kernel<Tile, T, WGRAD, STAGED>, SMEM, false, &state().smem_opted, device);
    }
    /* How many clusters of the kernel fit on device (the current one) at once, into *clusters. */
    static cudnnStatus_t clusters(int device, int *clusters)
    {
        if (ocd_test_clusters(clusters)) return CUDNN_STATUS_SUCCESS;
        OCD_TRY(opted(device));
        cudaLaunchAttribute attr[2];
        cudaLaunchConfig_t cfg = config(attr);
        cfg.gridDim = dim3(Tile::CL); /* a multiple of the cluster, as the query asks */
        return ocd_active_clusters(igemm_tma_kernel<Tile, T, WGRAD, STAGED>, cfg, device, state().clusters_of, clusters);
    }
    static cudnnStatus_t run(const igemm_params *p, const igemm_tma_geom *g, int device, int sms, cudaStream_t stream)
    {
        if constexpr (WGRAD && sizeof(T) == 4 && Tile::KQ == 8)
            if (g->kq == 32)
                return igemm_tma_launch<typename Tile::template with_kq<32>, T, WGRAD>::run(p, g, device, sms, stream);
        if (WGRAD && sizeof(T) == 4 && g->kq != Tile::KQ)
            return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "a k32 shape of %d pixels a row without its kernel", g->kq);
        if constexpr (!STAGED && STAGED_OK)
            if (g->staged) return igemm_tma_launch<Tile, T, WGRAD, true>::run(p, g, device, sms, stream);
        if constexpr (STAGED && PINGPONG_OK)
            if (g->pingpong)
                return igemm_tma_launch<typename igemm_tma_pingpong_tile<Tile, T>::type, T, WGRAD, true>::run(p, g, device,
                                                                                                        sms, stream);
        if (g->staged && !STAGED)
            return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "a staged epilogue planned on a tile without one");
        if (g->pingpong && !Tile::PP)
            return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "ping-pong consumers planned on a tile without them");
        const CUtensorMapDataType type = std::is_same<T, __half>::value          ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                         : std::is_same<T, __nv_bfloat16>::value ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
        CUtensorMap mi, mt;
        OCD_TRY(encode_maps(*g, WGRAD ? p->b.ptr : p->a.ptr, WGRAD ? p->a.ptr : p->bmat, type, &mi, &mt));
        void (*kernel)(const igemm_params, const CUtensorMap, const CUtensorMap, const igemm_tma_geom) =
            igemm_tma_kernel<Tile, T, WGRAD, STAGED>;
        OCD_TRY(opted(device));
        const int split = 128 * (Tile::PRODUCER_REGS + Tile::CONSUMERS * Tile::CONSUMER_REGS); /* setmaxnreg's */
        if (Tile::CONSUMERS > 1) OCD_TRY(ocd_wgmma_pool_check(kernel, Tile::THREADS, split, &state().pool_checked));
        cudaLaunchAttribute attr[2];
        cudaLaunchConfig_t cfg = config(attr);
        cfg.stream = stream;
        int ctas = OCD_MAX(sms, 1);
        if (Tile::CL > 1) {
            int fit;
            OCD_TRY(clusters(device, &fit));
            if (fit < 1) return OCD_FAIL(CUDNN_STATUS_EXECUTION_FAILED, "no cluster of this kernel fits the GPU");
            ctas = OCD_MAX(OCD_MIN(ctas / Tile::CL, fit) * Tile::CL, Tile::CL);
        }
        cfg.gridDim = dim3((unsigned)OCD_MIN(g->units, ctas)); /* units: a multiple of CL */
        /* a later stride phase: launched early (launch.cuh), its CTAs starting as the phase ahead's
           leave their multiprocessors; where the stream or a capture refuses that, as it is */
        const bool early = g->chain > 1 && CUDART_VERSION >= 12030;
        if (early) {
            attr[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            attr[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
            cfg.numAttrs++;
        }
        if (!early || cudaLaunchKernelEx(&cfg, kernel, *p, mi, mt, *g) != cudaSuccess) {
            if (early) (void)cudaGetLastError(), cfg.numAttrs--;
            OCD_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, *p, mi, mt, *g));
        }
        return igemm_launch_reduce<T>(p, stream);
    }
};

extern const bool ocd_igemm_tma_built = OCD_WGMMA_BUILT;

/* The launcher and the cluster query of a table cell, or NULL where no entry plans it (ON
   false): TF32 runs forward (backward data as a forward pass), clustered or not, and the filter
   gradient's k32 form unclustered. */
template <class Tile, typename T, bool WGRAD, bool ON> struct igemm_tma_cell {
    static constexpr igemm_tma_launch_fn run = igemm_tma_launch<Tile, T, WGRAD>::run;
    static constexpr igemm_tma_clusters_fn clusters = igemm_tma_launch<Tile, T, WGRAD>::clusters;
};
template <class Tile, typename T, bool WGRAD> struct igemm_tma_cell<Tile, T, WGRAD, false> {
    static constexpr igemm_tma_launch_fn run = NULL;
    static constexpr igemm_tma_clusters_fn clusters = NULL;
};

/* A tile's cells of member m (run or clusters): fp16 and bf16 where on16, fp32 as TF32 where
   on32 (the filter gradient: its k32 form). */
#define IGEMM_TMA_TYPES(bm, bn, st, cl, wgrad, m, on16, on32)                                       \
    {igemm_tma_cell<igemm_tma_tile<bm, bn, st, cl>, __half, wgrad, on16>::m,                         \
     igemm_tma_cell<igemm_tma_tile<bm, bn, st, cl>, __nv_bfloat16, wgrad, on16>::m,                  \
     igemm_tma_cell<igemm_tma_tile<bm, bn, st, cl>, float, wgrad, on32>::m}
/* a table row: the forward pass's cells, then the filter gradient's */
#define IGEMM_TMA_DIRS(bm, bn, st, cl, m, fwd16, fwd32, wgrad16, wgrad32)                           \
    {IGEMM_TMA_TYPES(bm, bn, st, cl, false, m, fwd16, fwd32), IGEMM_TMA_TYPES(bm, bn, st, cl, true, m, wgrad16, wgrad32)},
#define IGEMM_TMA_ROW(i, bm, bn, st) IGEMM_TMA_DIRS(bm, bn, st, 1, run, true, true, true, true)
#define IGEMM_TMA_C2_ROW(i, bm, bn, st) IGEMM_TMA_DIRS(bm, bn, st, 2, run, true, true, true, false)
#define IGEMM_TMA_W64_ROW(i, bm, bn, st) IGEMM_TMA_DIRS(bm, bn, st, 1, run, false, false, true, true)
#define IGEMM_TMA_NARROW_ROW(i, bm, bn, st) IGEMM_TMA_DIRS(bm, bn, st, 1, run, true, true, false, false)
#define IGEMM_TMA_C2_QUERY(i, bm, bn, st) IGEMM_TMA_DIRS(bm, bn, st, 2, clusters, true, true, true, false)
const igemm_tma_launch_fn ocd_igemm_tma_launch[OCD_IGEMM_TMA_ALL_TILES][2][IGEMM_NTYPES] = {
    OCD_IGEMM_TMA_TILES(IGEMM_TMA_ROW) OCD_IGEMM_TMA_C2_TILES(IGEMM_TMA_C2_ROW) OCD_IGEMM_TMA_W64_TILES(IGEMM_TMA_W64_ROW)
        OCD_IGEMM_TMA_NARROW_TILES(IGEMM_TMA_NARROW_ROW)};
const igemm_tma_clusters_fn ocd_igemm_tma_clusters[OCD_IGEMM_TMA_C2_NTILES][2][IGEMM_NTYPES] = {
    OCD_IGEMM_TMA_C2_TILES(IGEMM_TMA_C2_QUERY)};
/* the forward kernels' staged epilogue (it does not depend on the type: fp32 buffers) */
#define IGEMM_TMA_STAGED(i, bm, bn, st) igemm_tma_launch<igemm_tma_tile<bm, bn, st>, __half, false>::STAGED_OK,
#define IGEMM_TMA_UNSTAGED(i, bm, bn, st) false,
const bool ocd_igemm_tma_staged[OCD_IGEMM_TMA_ALL_TILES] = {
    OCD_IGEMM_TMA_TILES(IGEMM_TMA_STAGED) OCD_IGEMM_TMA_C2_TILES(IGEMM_TMA_UNSTAGED)
        OCD_IGEMM_TMA_W64_TILES(IGEMM_TMA_UNSTAGED) OCD_IGEMM_TMA_NARROW_TILES(IGEMM_TMA_STAGED)};
/* the forward kernels' ping-pong twins (16-bit types) */
#define IGEMM_TMA_PINGPONG(i, bm, bn, st) igemm_tma_launch<igemm_tma_tile<bm, bn, st>, __half, false>::PINGPONG_OK,
const bool ocd_igemm_tma_pingpong[OCD_IGEMM_TMA_ALL_TILES] = {
    OCD_IGEMM_TMA_TILES(IGEMM_TMA_PINGPONG) OCD_IGEMM_TMA_C2_TILES(IGEMM_TMA_UNSTAGED)
        OCD_IGEMM_TMA_W64_TILES(IGEMM_TMA_UNSTAGED) OCD_IGEMM_TMA_NARROW_TILES(IGEMM_TMA_PINGPONG)};
#undef IGEMM_TMA_PINGPONG
#undef IGEMM_TMA_UNSTAGED
#undef IGEMM_TMA_STAGED
#undef IGEMM_TMA_C2_QUERY
#undef IGEMM_TMA_NARROW_ROW
#undef IGEMM_TMA_W64_ROW
#undef IGEMM_TMA_C2_ROW
#undef IGEMM_TMA_ROW
#undef IGEMM_TMA_DIRS
#undef IGEMM_TMA_TYPES
