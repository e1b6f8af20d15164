/* bulk.cuh: bulk copies between global and shared memory by the tensor memory accelerator (sm_90
   and later), for kernels that stream a tensor through a ring of shared-memory stages: plain
   byte ranges, and boxes of a tensor map (tiled and im2col modes).

   A kernel's loads in flight otherwise wait in registers, so the bytes an SM keeps in flight
   are bounded by its warps' registers; a bulk copy is one instruction of one thread, whatever its
   size, and lands in shared memory, so a block keeps a few stages in flight at no register cost
   (bench/ceilings.cu: a read through 4 stages of 16 KB a block reaches what a plain read kernel
   with 8 blocks an SM does, 108% of cudaMemcpy on an H200). A stage's arrival is counted by an
   mbarrier: ocd_bulk_load announces the bytes and starts the copy, ocd_mbar_wait waits for the
   phase of the stage's use, whose parity alternates from one use of the stage to the next. The
   mbarrier operations (PTX ISA, "mbarrier") are here for every kernel that uses them, TMA or not,
   and so are the proxy fence and the bulk groups of stores and reductions.

   Device code only; on devices before sm_90 every function here traps, so a host must launch a
   kernel that uses them only where its code was built for sm_90 or later (ocd_bulk_built). */
#ifndef OCD_CUDA_BULK_CUH
#define OCD_CUDA_BULK_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define OCD_BULK_ASM(...) asm volatile(__VA_ARGS__)
#else
#define OCD_BULK_ASM(...) __trap()
#endif

__device__ __forceinline__ uint32_t ocd_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* ---- mbarriers ---------------------------------------------------------------------------------- */

/* An mbarrier (a 64-bit word in shared memory) expecting `count` arrivals per phase. Make the
   initialization visible (ocd_mbar_init_fence where asynchronous copies complete on it, then
   __syncthreads) before any other thread uses it. */
__device__ __forceinline__ void ocd_mbar_init(uint64_t *bar, unsigned count)
{
    OCD_BULK_ASM("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(ocd_smem_addr(bar)), "r"(count) : "memory");
}

/* Makes this thread's mbarrier initializations visible to the async proxy (bulk and TMA copies
   complete their bytes on them): after the inits, before the __syncthreads that publishes them. */
__device__ __forceinline__ void ocd_mbar_init_fence()
{
    OCD_BULK_ASM("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* This thread's arrival on the current phase (with no copy, it completes a stage with nothing
   to load). */
__device__ __forceinline__ void ocd_mbar_arrive(uint64_t *bar)
{
    OCD_BULK_ASM("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(ocd_smem_addr(bar)) : "memory");
}

/* An arrival that also raises the phase's expected transaction count by `bytes` (the bytes
   asynchronous copies such as TMA loads will complete on it). */
__device__ __forceinline__ void ocd_mbar_arrive_expect_tx(uint64_t *bar, unsigned bytes)
{
    OCD_BULK_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(ocd_smem_addr(bar)), "r"(bytes)
                 : "memory");
}

/* Raises the current phase's expected transaction count by `bytes`, without arriving. */
__device__ __forceinline__ void ocd_mbar_expect_tx(uint64_t *bar, unsigned bytes)
{
    OCD_BULK_ASM("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(ocd_smem_addr(bar)), "r"(bytes)
                 : "memory");
}

/* An arrival triggered when all of this thread's earlier cp.async copies have completed; it
   does not count as an arrival of its own (.noinc): `count` at init must include it. */
__device__ __forceinline__ void ocd_mbar_cp_async_arrive(uint64_t *bar)
{
    OCD_BULK_ASM("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ocd_smem_addr(bar)) : "memory");
}

/* Waits until the phase of parity `parity` (0 for the first phase, then alternating: a stage's
   k-th use waits for parity k & 1) has completed. */
__device__ __forceinline__ void ocd_mbar_wait(uint64_t *bar, unsigned parity)
{
    uint32_t done = 0;
    while (!done)
        OCD_BULK_ASM("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(ocd_smem_addr(bar)), "r"(parity)
                     : "memory");
}

/* ---- clusters (PTX ISA: "Cluster of Cooperative Thread Arrays", mapa, barrier.cluster) ---------- */

/* This CTA's rank in its cluster (%cluster_ctarank). */
__device__ __forceinline__ unsigned ocd_cluster_rank()
{
    unsigned r = 0;
    OCD_BULK_ASM("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* Every thread of the cluster's CTAs: barrier.cluster.arrive (release: this thread's earlier
   memory operations, its mbarrier initializations and remote arrivals included, are visible to
   the cluster's threads past the wait) and barrier.cluster.wait (acquire). A CTA's shared memory
   may be written and its mbarriers arrived on by its peers only once they are initialized and
   while the CTA runs (CUDA programming guide, distributed shared memory: every access must
   happen before the block that owns the memory exits), so a kernel whose CTAs reach into each
   other's shared memory syncs once after initializing its barriers and once before exiting. */
__device__ __forceinline__ void ocd_cluster_sync()
{
    OCD_BULK_ASM("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

/* An arrival on the mbarrier at bar's offset in the shared memory of the cluster's CTA `rank`
   (this one included): mapa gives that CTA's shared::cluster address of the same offset, and
   mbarrier.arrive on a shared::cluster address returns no state (the sink `_`). Release at
   cluster scope: this thread's earlier reads of shared memory are ordered before the arrival as
   a waiter in the other CTA observes it (ocd_mbar_wait_cluster). */
__device__ __forceinline__ void ocd_mbar_arrive_cluster(uint64_t *bar, unsigned rank)
{
    OCD_BULK_ASM("{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %0, %1; mbarrier.arrive.release.cluster.shared::cluster.b64 "
                 "_, [ra]; }" ::"r"(ocd_smem_addr(bar)),
                 "r"(rank)
                 : "memory");
}

/* A 16-byte store of v (16-byte aligned) into the shared memory of the cluster's CTA `rank` (this
   one included) at dst's offset, completing its 16 bytes on the mbarrier at bar's offset in that
   CTA (st.async: the complete-tx has release semantics at cluster scope, so the store is visible
   to a thread of that CTA once it has seen the phase complete, ocd_mbar_wait_cluster; the
   receiver announces the bytes of a phase with ocd_mbar_arrive_expect_tx). The launch must make
   a cluster of two CTAs or more (compute-sanitizer: "Cluster needs to have at least 2 blocks"). */
__device__ __forceinline__ void ocd_st_async_cluster(const void *dst, uint4 v, const uint64_t *bar, unsigned rank)
{
    OCD_BULK_ASM("{ .reg .b32 rd, rb; mapa.shared::cluster.u32 rd, %0, %2; mapa.shared::cluster.u32 rb, %1, %2; "
                 "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [rd], {%3, %4, %5, %6}, [rb]; }" ::"r"(
                     ocd_smem_addr(dst)),
                 "r"(ocd_smem_addr(bar)), "r"(rank), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}

/* ocd_mbar_wait with acquire at cluster scope: for a barrier that threads of other CTAs of the
   cluster arrive on (ocd_mbar_arrive_cluster). */
__device__ __forceinline__ void ocd_mbar_wait_cluster(uint64_t *bar, unsigned parity)
{
    uint32_t done = 0;
    while (!done)
        OCD_BULK_ASM("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, "
                     "1, 0, p; }"
                     : "=r"(done)
                     : "r"(ocd_smem_addr(bar)), "r"(parity)
                     : "memory");
}

/* ---- bulk copies ---------------------------------------------------------------------------------- */

/* Copies `bytes` (a multiple of 16, both addresses 16-byte aligned) from global src to shared
   dst, completing bar's current phase when they have landed. */
__device__ __forceinline__ void ocd_bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
    ocd_mbar_arrive_expect_tx(bar, bytes);
    OCD_BULK_ASM("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     ocd_smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(ocd_smem_addr(bar))
                 : "memory");
}

/* cp.async.bulk.tensor in tiled mode, rank 3: the box of the tensor map at tmap (the address of a
   __grid_constant__ kernel parameter) whose first element is at coordinates (c0, c1, c2),
   innermost first, into shared dst (128-byte aligned; 1024 for the 128-byte swizzle), its bytes
   completing on bar (announced by an arrive.expect_tx of the phase). Elements out of the tensor
   are filled (zeros, or NaN as the map says) and count as bytes. */
__device__ __forceinline__ void ocd_bulk_tensor_tile3(void *dst, const void *tmap, int c0, int c1, int c2, uint64_t *bar)
{
    OCD_BULK_ASM("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
                 "%4}], [%5];" ::"r"(ocd_smem_addr(dst)),
                 "l"(tmap), "r"(c0), "r"(c1), "r"(c2), "r"(ocd_smem_addr(bar))
                 : "memory");
}

/* The same at rank 4, coordinates (c0, c1, c2, c3). */
__device__ __forceinline__ void ocd_bulk_tensor_tile4(void *dst, const void *tmap, int c0, int c1, int c2, int c3,
                                                      uint64_t *bar)
{
    OCD_BULK_ASM("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
                 "%4, %5}], [%6];" ::"r"(ocd_smem_addr(dst)),
                 "l"(tmap), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(ocd_smem_addr(bar))
                 : "memory");
}

/* The same in im2col mode, rank 4 (NHWC): coordinates (c, w, h, n) with (w, h) the filter base,
   and the im2col offsets (ow, oh) added to it for every pixel (PTX ISA, "Tensors: im2col
   mode"). */
__device__ __forceinline__ void ocd_bulk_tensor_im2col4(void *dst, const void *tmap, int c, int w, int h, int n,
                                                        uint16_t ow, uint16_t oh, uint64_t *bar)
{
    OCD_BULK_ASM("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
                 "%3, %4, %5}], [%6], {%7, %8};" ::"r"(ocd_smem_addr(dst)),
                 "l"(tmap), "r"(c), "r"(w), "r"(h), "r"(n), "r"(ocd_smem_addr(bar)), "h"(ow), "h"(oh)
                 : "memory");
}

/* The same two loads multicast to the cluster's CTAs of `mask` (bit r: rank r): the box lands at
   dst's offset in each one's shared memory and completes its bytes on the mbarrier at bar's
   offset in that CTA (PTX ISA, cp.async.bulk.tensor: ".multicast::cluster", ctaMask; so each
   destination's barrier must expect the bytes every CTA sends it). sm_90a: the ISA marks
   multicast as optimized for it. */
__device__ __forceinline__ void ocd_bulk_tensor_tile3_multicast(void *dst, const void *tmap, int c0, int c1, int c2,
                                                                uint64_t *bar, uint16_t mask)
{
    OCD_BULK_ASM("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(ocd_smem_addr(dst)),
                 "l"(tmap), "r"(c0), "r"(c1), "r"(c2), "r"(ocd_smem_addr(bar)), "h"(mask)
                 : "memory");
}

__device__ __forceinline__ void ocd_bulk_tensor_im2col4_multicast(void *dst, const void *tmap, int c, int w, int h,
                                                                  int n, uint16_t ow, uint16_t oh, uint64_t *bar,
                                                                  uint16_t mask)
{
    OCD_BULK_ASM("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8}, %9;" ::"r"(ocd_smem_addr(dst)),
                 "l"(tmap), "r"(c), "r"(w), "r"(h), "r"(n), "r"(ocd_smem_addr(bar)), "h"(ow), "h"(oh), "h"(mask)
                 : "memory");
}

/* ---- the proxy fence and bulk groups -------------------------------------------------------------- */

/* Closes the bulk group of this thread's bulk operations (stores, reductions) issued since the
   last commit. */
__device__ __forceinline__ void ocd_bulk_commit()
{
    OCD_BULK_ASM("cp.async.bulk.commit_group;" ::: "memory");
}

/* Copies `bytes` from shared src to global dst, as a bulk group of the calling thread. What the
   block's threads wrote to src must be made visible to the copy first: each writer runs
   ocd_bulk_fence_writes(), then the block synchronizes. */
__device__ __forceinline__ void ocd_bulk_store(void *dst, const void *src, uint32_t bytes)
{
    OCD_BULK_ASM("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(ocd_smem_addr(src)),
                 "r"(bytes)
                 : "memory");
    ocd_bulk_commit();
}

/* Makes this thread's completed generic-proxy writes to shared memory (st.shared, landed
   cp.async copies) visible to the async proxy, through which bulk copies and wgmma read shared
   memory. */
__device__ __forceinline__ void ocd_bulk_fence_writes()
{
    OCD_BULK_ASM("fence.proxy.async.shared::cta;" ::: "memory");
}

/* Waits until at most N of the calling thread's bulk groups still read their shared memory
   (READ: the source may be written again) or are still incomplete (!READ: their writes done, as
   before the kernel exits). */
template <int N, bool READ> __device__ __forceinline__ void ocd_bulk_store_wait()
{
    if (READ) OCD_BULK_ASM("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
    else OCD_BULK_ASM("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

/* Host: whether kernel's loaded code was built for sm_90 or later, so that its bulk copies run. */
template <typename... Params> static bool ocd_bulk_built(void (*kernel)(Params...))
{
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, (const void *)kernel) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return fa.binaryVersion >= 90;
}

#endif
