/* ceilings.cu: what a GPU's memory moves at, per access pattern, for reading the benchmark's "%
   copy" column. The benchmark compares every op with one ceiling, the device-to-device copy
   (cudaMemcpy, bytes read + written); ops whose pattern is not a copy's may have another: a
   pass that only reads (a reduction's), one that reads and writes the same buffer in place
   (cudnnScaleTensor, cudnnAddTensor with beta = 1), one of three streams (a binary op). This
   program times one plain streaming kernel per pattern (16-byte vectors, a grid-stride loop with
   U = 4 vectors in flight per thread, one wave of resident blocks) beside cudaMemcpy, and the
   copy and in-place patterns also with U = 8 and 16 and with streaming stores (st.global.cs):
   whether more bytes in flight or another store policy brings a pattern closer to cudaMemcpy.
   On sm_90 the read, copy and in-place patterns are also timed through the tensor memory
   accelerator: each block streams tiles of 16 KB through a ring of shared-memory stages filled by
   bulk copies (cp.async.bulk, completion counted by an mbarrier), its threads reading (and
   rewriting) a stage from shared memory, the result going out as per-thread stores or as a bulk
   copy back (cp.async.bulk shared -> global): whether loads in flight that hold no registers, or
   bulk stores, move more than per-thread vectors do.
   Each prints as GB/s and as a share of cudaMemcpy's. The kernels are ours, so a figure is what
   a simple kernel reaches there, not a bound proven for the hardware.

     opencudnn_ceilings [MiB per buffer (default 512)] [repetitions (default 20)]

   Standalone: CUDA runtime only, no cuDNN. Every CUDA call and launch is checked. */
#include "cuda/bulk.cuh"

#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t err_ = (call);                                                             \
        if (err_ != cudaSuccess) {                                                             \
            fprintf(stderr, "ceilings: %s: %s (%s:%d)\n", #call, cudaGetErrorString(err_), __FILE__, \
                    __LINE__);                                                                 \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

enum { THREADS = 256 };

/* The patterns: which of the three buffers a pass reads and which it writes. */
enum Pattern { READ, WRITE, COPY, IN_PLACE, THREE };

/* Stores v at p: a streaming store (evict first) when CS. */
template <bool CS> __device__ __forceinline__ void put(float4 *p, float4 v)
{
    if (CS) __stcs(p, v);
    else *p = v;
}

/* One step: U vectors a thread, all loads issued before any use. */
template <int P, int U, bool CS>
__global__ void __launch_bounds__(THREADS) stream_kernel(const float4 *__restrict__ a, const float4 *__restrict__ b,
                                                         float4 *__restrict__ c, float4 *sink, size_t n4)
{
    const size_t stride = (size_t)gridDim.x * THREADS * U;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (size_t base = (size_t)blockIdx.x * THREADS * U + threadIdx.x; base < n4; base += stride) {
        float4 va[U], vb[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            size_t i = base + (size_t)u * THREADS;
            if (i >= n4) break;
            if (P == READ || P == COPY || P == THREE) va[u] = a[i];
            if (P == IN_PLACE) va[u] = c[i];
            if (P == THREE) vb[u] = b[i];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            size_t i = base + (size_t)u * THREADS;
            if (i >= n4) break;
            float4 v = va[u];
            if (P == READ) acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
            else if (P == WRITE) put<CS>(c + i, make_float4(0.5f, 0.5f, 0.5f, 0.5f));
            else if (P == COPY) put<CS>(c + i, v);
            else if (P == IN_PLACE) put<CS>(c + i, make_float4(-v.x, -v.y, -v.z, -v.w));
            else put<CS>(c + i, make_float4(v.x + vb[u].x, v.y + vb[u].y, v.z + vb[u].z, v.w + vb[u].w));
        }
    }
    if (P == READ && acc.x + acc.y + acc.z + acc.w == 12345.f) *sink = acc; /* keeps the reads; never true */
}

/* ---- the tensor memory accelerator's patterns (sm_90) ------------------------------------------ */

enum { TILE = 16384, TILE4 = TILE / 16 }; /* bytes, float4 of a tile */

/* Tiles of the buffer through a ring of S stages: block b takes tiles b, b + grid, ...; thread 0
   keeps S bulk loads ahead. P: READ sums the stage; COPY and IN_PLACE write it (negated in
   place) to c, by the threads' own stores (BULK_STORE false) or, rewritten in shared memory, as
   a bulk copy of the stage (the stage refilled once that copy has read it). */
template <int P, int S, bool BULK_STORE, bool RANGE = false>
__global__ void __launch_bounds__(THREADS) bulk_kernel(const float4 *__restrict__ a, const float4 *__restrict__ b,
                                                       float4 *__restrict__ c, float4 *sink, size_t n4)
{
    (void)b;
    extern __shared__ float4 stages[]; /* [S][TILE4] */
    __shared__ __align__(8) uint64_t full[S];
    const float4 *src = P == IN_PLACE ? c : a;
    const size_t tiles = n4 / TILE4; /* the buffers are whole tiles (main) */
    /* step k's tile, or `tiles` past the block's last: RANGE, a contiguous range a block */
    const size_t per = (tiles + gridDim.x - 1) / gridDim.x, end = RANGE ? min(tiles, (blockIdx.x + 1) * per) : tiles;
    auto tile_of = [&](size_t k) -> size_t {
        size_t t = RANGE ? blockIdx.x * per + k : blockIdx.x + k * gridDim.x;
        return t < end ? t : tiles;
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++) {
            ocd_mbar_init(&full[s], 1), ocd_mbar_init_fence();
            const size_t t = tile_of(s);
            if (t < tiles) ocd_bulk_load(stages + s * TILE4, src + t * TILE4, TILE, &full[s]);
        }
    }
    __syncthreads();
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (size_t k = 0;; k++) {
        const size_t t = tile_of(k);
        if (t >= tiles) break;
        const int s = (int)(k % S);
        float4 *stage = stages + s * TILE4;
        ocd_mbar_wait(&full[s], (uint32_t)(k / S) & 1);
#pragma unroll
        for (int u = 0; u < TILE4 / THREADS; u++) {
            const int i = u * THREADS + threadIdx.x;
            float4 v = stage[i];
            if (P == READ) acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
            else if (!BULK_STORE) c[t * TILE4 + i] = P == COPY ? v : make_float4(-v.x, -v.y, -v.z, -v.w);
            else if (P == IN_PLACE) stage[i] = make_float4(-v.x, -v.y, -v.z, -v.w);
        }
        if (BULK_STORE) ocd_bulk_fence_writes(); /* the writes, to the bulk copy */
        __syncthreads(); /* every thread is done with the stage */
        if (threadIdx.x != 0) continue;
        if (!BULK_STORE) {
            const size_t next = tile_of(k + S);
            if (next < tiles) ocd_bulk_load(stage, src + next * TILE4, TILE, &full[s]);
            continue;
        }
        ocd_bulk_store(c + t * TILE4, stage, TILE);
        /* the stage of the step before, once its store has read it, takes its next tile */
        ocd_bulk_store_wait<1, true>();
        if (k > 0) {
            const int sp = (int)((k - 1) % S);
            const size_t prev_next = tile_of(k - 1 + S);
            if (prev_next < tiles) ocd_bulk_load(stages + sp * TILE4, src + prev_next * TILE4, TILE, &full[sp]);
        }
    }
    if (BULK_STORE && threadIdx.x == 0) ocd_bulk_store_wait<0, false>();
    if (P == READ && acc.x + acc.y + acc.z + acc.w == 12345.f) *sink = acc; /* keeps the reads; never true */
}

typedef void (*kernel_fn)(const float4 *, const float4 *, float4 *, float4 *, size_t);

struct Case {
    const char *name;
    kernel_fn kernel; /* NULL: cudaMemcpy */
    int transfers;    /* buffer-sized transfers a pass moves (reads + writes) */
    int stages;       /* bulk kernels: shared-memory stages of TILE bytes a block; 0 for the others */
};

static const Case cases[] = {
    {"cudaMemcpy (the benchmark's ceiling)", NULL, 2},
    {"read (a reduction)", stream_kernel<READ, 4, false>, 1},
    {"write (a set)", stream_kernel<WRITE, 4, false>, 1},
    {"copy kernel", stream_kernel<COPY, 4, false>, 2},
    {"copy kernel, U = 8", stream_kernel<COPY, 8, false>, 2},
    {"copy kernel, U = 16", stream_kernel<COPY, 16, false>, 2},
    {"copy kernel, streaming stores", stream_kernel<COPY, 4, true>, 2},
    {"read + write in place (scale, add with beta 1)", stream_kernel<IN_PLACE, 4, false>, 2},
    {"in place, U = 8", stream_kernel<IN_PLACE, 8, false>, 2},
    {"in place, U = 16", stream_kernel<IN_PLACE, 16, false>, 2},
    {"in place, streaming stores", stream_kernel<IN_PLACE, 4, true>, 2},
    {"two reads + one write (a binary op)", stream_kernel<THREE, 4, false>, 3},
    {"bulk read, 2 stages", bulk_kernel<READ, 2, false>, 1, 2},
    {"bulk read, 4 stages", bulk_kernel<READ, 4, false>, 1, 4},
    {"bulk read, 6 stages", bulk_kernel<READ, 6, false>, 1, 6},
    {"bulk load, thread stores: copy, 4 stages", bulk_kernel<COPY, 4, false>, 2, 4},
    {"bulk load, thread stores: in place, 4 stages", bulk_kernel<IN_PLACE, 4, false>, 2, 4},
    {"bulk load and store: copy, 4 stages", bulk_kernel<COPY, 4, true>, 2, 4},
    {"bulk load and store: in place, 4 stages", bulk_kernel<IN_PLACE, 4, true>, 2, 4},
    {"bulk load and store: in place, 6 stages", bulk_kernel<IN_PLACE, 6, true>, 2, 6},
    {"bulk read, 4 stages, a range a block", bulk_kernel<READ, 4, false, true>, 1, 4},
    {"bulk load and store: in place, 4 stages, a range a block", bulk_kernel<IN_PLACE, 4, true, true>, 2, 4},
};

/* One wave of case k's resident blocks (its kernel's grid-stride loop covers the rest). */
static int wave_of(const Case &k, int sms)
{
    int per_sm = 0;
    if (k.kernel == NULL) return 0;
    const size_t smem = (size_t)k.stages * TILE;
    if (smem > 0) CHECK(cudaFuncSetAttribute(k.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.kernel, THREADS, smem));
    return sms * per_sm;
}

/* One pass of case k on `grid` blocks. */
static void run_case(const Case &k, int grid, float4 *a, float4 *b, float4 *c, float4 *sink, size_t n4)
{
    if (k.kernel == NULL) {
        CHECK(cudaMemcpyAsync(c, a, n4 * sizeof(float4), cudaMemcpyDeviceToDevice));
        return;
    }
    k.kernel<<<grid, THREADS, (size_t)k.stages * TILE>>>(a, b, c, sink, n4);
    CHECK(cudaGetLastError());
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 512;
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    if (mib < 1 || mib > 65536 || reps < 1 || reps > 10000) {
        fprintf(stderr, "usage: %s [MiB per buffer, 1..65536] [repetitions, 1..10000]\n", argv[0]);
        return 2;
    }
    int dev;
    cudaDeviceProp prop;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaGetDeviceProperties(&prop, dev));
    const size_t n4 = (mib << 20) / sizeof(float4), bytes = n4 * sizeof(float4);

    float4 *a, *b, *c, *sink;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMalloc(&c, bytes));
    CHECK(cudaMalloc(&sink, sizeof(float4)));
    CHECK(cudaMemset(a, 0, bytes));
    CHECK(cudaMemset(b, 0, bytes));
    CHECK(cudaMemset(c, 0, bytes));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));

    printf("ceilings: %s (sm_%d%d, %d SMs), buffers of %zu MiB, blocks of %d threads, median of %d\n", prop.name,
           prop.major, prop.minor, prop.multiProcessorCount, mib, THREADS, reps);
    printf("| pattern | ms | GB/s | of cudaMemcpy |\n|---|---:|---:|---:|\n");
    double memcpy_gbs = 0;
    for (const Case &k : cases) {
        if (k.stages > 0 && prop.major < 9) continue; /* bulk copies: sm_90 and later */
        const int grid = wave_of(k, prop.multiProcessorCount); /* outside the timed window */
        run_case(k, grid, a, b, c, sink, n4);                    /* warm-up */
        std::vector<float> ms(reps);
        for (int r = 0; r < reps; r++) {
            CHECK(cudaEventRecord(t0));
            run_case(k, grid, a, b, c, sink, n4);
            CHECK(cudaEventRecord(t1));
            CHECK(cudaEventSynchronize(t1));
            CHECK(cudaEventElapsedTime(&ms[r], t0, t1));
        }
        std::sort(ms.begin(), ms.end());
        double med = ms[reps / 2], gbs = (double)k.transfers * bytes / (med * 1e6);
        if (k.kernel == NULL) memcpy_gbs = gbs;
        printf("| %s | %.4f | %.0f | %.0f%% |\n", k.name, med, gbs, 100 * gbs / memcpy_gbs);
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaFree(sink));
    return 0;
}
