/* reduce.cu: the CUDA reduction (problem/reduce.h holds the problem, its plan and the semantics).

   A work item is one (output, range of its reduced elements). Two kernels cover the layouts:
   - rows: a group of lanes (a warp, or fewer for short ranges) per work item, striding over the
     range and combining by shuffles; for reductions along A's unit stride (the lanes read
     consecutive elements).
   - columns: one thread per work item, walking its range with an odometer; for reductions
     across A's unit stride, where consecutive outputs are consecutive in memory (consecutive
     threads then read consecutive elements).
   With one range per output the kernel finishes the output (alpha, beta, index); otherwise the
   partials go to the workspace and a third kernel combines them, a warp per output. */
#include "problem/reduce.h"

#include "core/handle.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"

#define THREADS 256

struct reduce_args {
    cudnnReduceTensorOp_t op;
    bool propagate, indices;
    int kept_rank, red_rank;
    cudnnDataType_t c_type;
    uint32_t outputs, reduced, splits, chunk;
    uint32_t lanes; /* rows: lanes per work item */
    ocd_fastdiv kept_dims[OCD_MAX_DIMS], red_dims[OCD_MAX_DIMS], splits_div;
    int64_t a_kept[OCD_MAX_DIMS], c_kept[OCD_MAX_DIMS], a_red[OCD_MAX_DIMS];
    double alpha, beta;
    void *c;
    uint32_t *idx;
    struct ocd_reduce_partial *partials;
};

/* Offsets in A and C of output o. */
__device__ __forceinline__ void output_offsets(const reduce_args &g, uint32_t o, int64_t *a_off, int64_t *c_off)
{
    *a_off = *c_off = 0;
    for (int d = g.kept_rank - 1; d >= 0; d--) {
        uint32_t q = d > 0 ? ocd_fastdiv_div(g.kept_dims[d], o) : 0, r = o - q * g.kept_dims[d].d;
        o = q;
        *a_off += (int64_t)r * g.a_kept[d];
        *c_off += (int64_t)r * g.c_kept[d];
    }
}

/* Offset in A, from an output's base, of the reduced element at flattened index i. */
__device__ __forceinline__ int64_t reduced_offset(const reduce_args &g, uint32_t i)
{
    int64_t off = 0;
    for (int d = g.red_rank - 1; d >= 0; d--) {
        uint32_t q = d > 0 ? ocd_fastdiv_div(g.red_dims[d], i) : 0, r = i - q * g.red_dims[d].d;
        i = q;
        off += (int64_t)r * g.a_red[d];
    }
    return off;
}

/* The reduction of output o's range in work slot `slot` is p: leave it in the workspace when
   the output has several ranges, else finish the output. */
__device__ void finish_item(const reduce_args &g, uint32_t o, uint32_t slot, struct ocd_reduce_partial p, bool partial)
{
    if (partial) {
        g.partials[slot] = p;
        return;
    }
    int64_t a_off, c_off;
    output_offsets(g, o, &a_off, &c_off);
    double v = g.alpha * ocd_reduce_result(g.op, p, g.reduced);
    if (g.beta != 0) v += g.beta * ocd_cuda_load_as<double>(g.c_type, g.c, c_off);
    ocd_cuda_store_as(g.c_type, g.c, c_off, v);
    if (g.indices) g.idx[o] = p.index;
}

__device__ __forceinline__ struct ocd_reduce_partial shfl_down(struct ocd_reduce_partial p, int by)
{
    struct ocd_reduce_partial q;
    q.value = __shfl_down_sync(0xffffffffu, p.value, by);
    q.index = __shfl_down_sync(0xffffffffu, p.index, by);
    q.unused = 0;
    return q;
}

/* LOADS elements per thread are loaded before any is folded in, so that each thread keeps that
   many loads in flight. */
#define LOADS 4

/* One group of g.lanes lanes (a power of two up to a warp) per work item: its lanes stride over
   the range, then combine by shuffles within the group. Short ranges take small groups, so that
   lanes are not left idle. */
template <typename Ta> __global__ void reduce_rows(reduce_args g, const Ta *a)
{
    const uint32_t items = g.outputs * g.splits, lanes = g.lanes, lane = threadIdx.x % lanes;
    const uint32_t groups = gridDim.x * (blockDim.x / lanes);
    /* every lane of a warp runs the same number of iterations, so that the shuffles see them all */
    const uint32_t per_warp = 32 / lanes, warp_first = (blockIdx.x * blockDim.x + threadIdx.x) / 32 * per_warp;
    for (uint32_t base = warp_first; base < items; base += groups) {
        uint32_t t = base + (threadIdx.x % 32) / lanes;
        struct ocd_reduce_partial p = ocd_reduce_start(g.op);
        uint32_t o = 0, s = 0;
        if (t < items) {
            o = ocd_fastdiv_div(g.splits_div, t);
            s = t - o * g.splits;
            uint32_t begin = s * g.chunk, end = min(begin + g.chunk, g.reduced);
            int64_t a_off, c_off;
            output_offsets(g, o, &a_off, &c_off);
            uint32_t i = begin + lane;
            for (; i + (LOADS - 1) * lanes < end; i += LOADS * lanes) {
                double v[LOADS];
#pragma unroll
                for (int k = 0; k < LOADS; k++)
                    v[k] = (double)ocd_cuda_load<Ta>(a + a_off + reduced_offset(g, i + k * lanes));
#pragma unroll
                for (int k = 0; k < LOADS; k++) ocd_reduce_step(g.op, g.propagate, &p, v[k], i + k * lanes);
            }
            for (; i < end; i += lanes)
                ocd_reduce_step(g.op, g.propagate, &p, (double)ocd_cuda_load<Ta>(a + a_off + reduced_offset(g, i)), i);
        }
        for (uint32_t by = lanes / 2; by > 0; by /= 2) ocd_reduce_merge(g.op, g.propagate, &p, shfl_down(p, by));
        if (t < items && lane == 0) finish_item(g, o, t, p, g.splits > 1);
    }
}

template <typename Ta> __global__ void reduce_columns(reduce_args g, const Ta *a)
{
    const uint32_t items = g.outputs * g.splits;
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < items; t += gridDim.x * blockDim.x) {
        /* items are ordered range-major here, so that neighbouring threads take neighbouring outputs */
        uint32_t s = t / g.outputs, o = t - s * g.outputs;
        uint32_t begin = s * g.chunk, end = min(begin + g.chunk, g.reduced);
        int64_t a_off, c_off;
        output_offsets(g, o, &a_off, &c_off);
        struct ocd_reduce_partial p = ocd_reduce_start(g.op);
        uint32_t i = begin;
        for (; i + LOADS <= end; i += LOADS) {
            double v[LOADS];
#pragma unroll
            for (int k = 0; k < LOADS; k++) v[k] = (double)ocd_cuda_load<Ta>(a + a_off + reduced_offset(g, i + k));
#pragma unroll
            for (int k = 0; k < LOADS; k++) ocd_reduce_step(g.op, g.propagate, &p, v[k], i + k);
        }
        for (; i < end; i++)
            ocd_reduce_step(g.op, g.propagate, &p, (double)ocd_cuda_load<Ta>(a + a_off + reduced_offset(g, i)), i);
        finish_item(g, o, o * g.splits + s, p, g.splits > 1);
    }
}

/* One warp per output: the lanes take the ranges' partials in turn, then combine by shuffles. */
__global__ void reduce_combine(reduce_args g)
{
    const uint32_t lane = threadIdx.x % 32, warps = gridDim.x * (blockDim.x / 32);
    for (uint32_t o = (blockIdx.x * blockDim.x + threadIdx.x) / 32; o < g.outputs; o += warps) {
        struct ocd_reduce_partial p = ocd_reduce_start(g.op);
        for (uint32_t s = lane; s < g.splits; s += 32)
            ocd_reduce_merge(g.op, g.propagate, &p, g.partials[(size_t)o * g.splits + s]);
        for (int by = 16; by > 0; by /= 2) ocd_reduce_merge(g.op, g.propagate, &p, shfl_down(p, by));
        if (lane == 0) finish_item(g, o, o, p, false);
    }
}

/* Columns when A's unit stride runs along the outputs rather than along the reduction, or when
   the reductions are too short to keep a warp's lanes busy. */
static bool by_columns(const struct ocd_reduce *r)
{
    if (r->kept_rank == 0) return false;
    return r->a_kept_strides[r->kept_rank - 1] < r->a_red_strides[r->red_rank - 1] || r->chunk < 16;
}

extern "C" cudnnStatus_t ocd_cuda_reduce_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                             size_t workspace_bytes)
{
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_reduce *r = (const struct ocd_reduce *)problem;
    reduce_args g;
    memset(&g, 0, sizeof g);
    g.op = r->op;
    g.propagate = r->propagate_nan;
    g.indices = r->want_indices;
    g.kept_rank = r->kept_rank;
    g.red_rank = r->red_rank;
    g.c_type = r->c_type;
    g.outputs = (uint32_t)r->outputs;
    g.reduced = (uint32_t)r->reduced;
    g.splits = (uint32_t)r->splits;
    g.chunk = (uint32_t)r->chunk;
    g.splits_div = ocd_fastdiv_make(g.splits);
    g.lanes = 32;
    while (g.lanes > 1 && g.lanes * LOADS > g.chunk) g.lanes /= 2;
    for (int d = 0; d < OCD_MAX_DIMS; d++) {
        g.kept_dims[d] = ocd_fastdiv_make(d < r->kept_rank ? (uint32_t)r->kept_dims[d] : 1);
        g.red_dims[d] = ocd_fastdiv_make(d < r->red_rank ? (uint32_t)r->red_dims[d] : 1);
        g.a_kept[d] = d < r->kept_rank ? r->a_kept_strides[d] : 0;
        g.c_kept[d] = d < r->kept_rank ? r->c_strides[d] : 0;
        g.a_red[d] = d < r->red_rank ? r->a_red_strides[d] : 0;
    }
    g.alpha = r->alpha;
    g.beta = r->beta;
    g.c = r->c;
    g.idx = r->indices;
    g.partials = r->partials;
    int64_t items = r->outputs * r->splits, most = (int64_t)handle->sm_count * (2048 / THREADS);
    bool columns = by_columns(r);
    int64_t blocks = (items * (columns ? 1 : g.lanes) + THREADS - 1) / THREADS;
    unsigned grid = (unsigned)(blocks < most ? blocks : most);
    cudnnStatus_t st = ocd_cuda_dispatch<OCD_CUDA_ALL>(r->a_type, [&](auto ta) {
        typedef typename decltype(ta)::type Ta;
        if (columns) reduce_columns<Ta><<<grid, THREADS, 0, handle->stream>>>(g, (const Ta *)r->a);
        else reduce_rows<Ta><<<grid, THREADS, 0, handle->stream>>>(g, (const Ta *)r->a);
    });
    if (st != CUDNN_STATUS_SUCCESS) return OCD_FAIL(st, "%s", OCD_REASON_DTYPE);
    OCD_CUDA_LAUNCHED();
    if (r->splits > 1) {
        int64_t cb = (r->outputs * 32 + THREADS - 1) / THREADS;
        reduce_combine<<<(unsigned)(cb < most ? cb : most), THREADS, 0, handle->stream>>>(g);
        OCD_CUDA_LAUNCHED();
    }
    return CUDNN_STATUS_SUCCESS;
}
