/* gemm_plain.cu: the CUDA GEMM's reference entry (cuda:gemm_plain, last in the table of
   src/ops/gemm.c) and the epilogue pass the cuBLAS entry runs after the library's GEMM.

   Plain and direct: one thread per element of C, a grid-stride loop over every element of every
   batch (so any size fits the grid), the dot product over K in the accumulator type (float for
   float, TF32, half and bfloat16 data; double for double), then the shared epilogue (gemm.cuh).
   Every type combination, transposition and batch form of the problem is served, with either
   kind of activation (gemm.cuh: a pointwise step only while OPENCUDNN_UNPROVEN=1).

   The epilogue pass is memory-bound, and written so: each thread carries several elements with
   their loads in flight, and finds their coordinates by multiply-high division. */
#include "core/handle.h"
#include "cuda/check.cuh"
#include "cuda/gemm.cuh"

struct plain_args {
    int64_t m, n, k, batch;
    int ta, tb, pointers;
    int64_t lda, ldb, ldc, sa, sb, sc;
    const void *a, *b;
    void *c;
    gemm_epi e;
};

template <typename AB, typename C, typename Acc> __global__ void gemm_plain_kernel(const __grid_constant__ plain_args p)
{
    const int64_t total = p.m * p.n * p.batch;
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < total; x += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = x % p.m, j = x / p.m % p.n, b = x / (p.m * p.n);
        const AB *a = gemm_batch_ptr<const AB>(p.a, p.pointers, p.sa, b);
        const AB *bm = gemm_batch_ptr<const AB>(p.b, p.pointers, p.sb, b);
        C *c = gemm_batch_ptr<C>(p.c, p.pointers, p.sc, b);
        /* op(A)(i, l) and op(B)(l, j): steps along l */
        const AB *ai = a + (p.ta ? i * p.lda : i), *bj = bm + (p.tb ? j : j * p.ldb);
        int64_t as = p.ta ? 1 : p.lda, bs = p.tb ? p.ldb : 1;
        Acc sum = 0;
        for (int64_t l = 0; l < p.k; l++) sum += (Acc)ocd_cuda_load(ai + l * as) * (Acc)ocd_cuda_load(bj + l * bs);
        gemm_epi_store<C, Acc>(p.e, c, i + j * p.ldc, i, j, sum, true);
    }
}

/* The epilogue pass's arguments: element numbers (row fastest, then column, then batch) are split
   by multiply-high division when they all fit 32 bits (fast), by 64-bit division otherwise,
   which costs about a hundred instructions a division. */
struct epilogue_args {
    plain_args p;
    bool fast;
    ocd_fastdiv rows, cols;
};

/* Elements a thread of the epilogue pass carries at once, their C values all loaded before the
   first store, so that each thread keeps that many loads in flight. */
#define EPI_ELEMS 4

/* What thread `tid` of a block of `threads` does for the block's span starting at element base
   (host-callable: tests/emulate/gemm_epilogue.cu runs it). */
template <typename C, typename Acc>
__host__ __device__ __forceinline__ void gemm_epilogue_span(const epilogue_args &a, int64_t base, unsigned tid,
                                                            unsigned threads)
{
    const plain_args &p = a.p;
    const int64_t total = p.m * p.n * p.batch;
    C *c[EPI_ELEMS];
    int64_t row[EPI_ELEMS], col[EPI_ELEMS];
    Acc v[EPI_ELEMS];
#pragma unroll
    for (int e = 0; e < EPI_ELEMS; e++) {
        const int64_t x = base + (int64_t)e * threads + tid;
        if (x >= total) break;
        int64_t b;
        if (a.fast) {
            uint32_t i, j;
            b = ocd_fastdiv_divmod(a.cols, ocd_fastdiv_divmod(a.rows, (uint32_t)x, &i), &j);
            row[e] = i, col[e] = j;
        } else {
            row[e] = x % p.m, col[e] = x / p.m % p.n, b = x / (p.m * p.n);
        }
        c[e] = gemm_batch_ptr<C>(p.c, p.pointers, p.sc, b) + row[e] + col[e] * p.ldc;
        v[e] = ocd_cuda_load(c[e]);
    }
#pragma unroll
    for (int e = 0; e < EPI_ELEMS; e++) {
        if (base + (int64_t)e * threads + tid >= total) break;
        gemm_epi_store<C, Acc>(p.e, c[e], 0, row[e], col[e], v[e], false);
    }
}

/* C = act(C + bias) over every element of every batch (cuBLAS has applied alpha and beta). */
template <typename C, typename Acc> __global__ void gemm_epilogue_kernel(const __grid_constant__ epilogue_args a)
{
    ocd_cuda_each_span<EPI_ELEMS>(a.p.m * a.p.n * a.p.batch,
                                  [&](int64_t base) { gemm_epilogue_span<C, Acc>(a, base, threadIdx.x, blockDim.x); });
}

static plain_args args_of(const struct ocd_gemm_call *call)
{
    const struct ocd_gemm_problem *p = call->p;
    plain_args a;
    a.m = p->m, a.n = p->n, a.k = p->k, a.batch = p->batch;
    a.ta = p->trans_a, a.tb = p->trans_b, a.pointers = p->pointer_array;
    a.lda = p->lda, a.ldb = p->ldb, a.ldc = p->ldc;
    a.sa = p->stride_a, a.sb = p->stride_b, a.sc = p->stride_c;
    a.a = call->a, a.b = call->b, a.c = call->c;
    a.e = gemm_epi_of(call);
    return a;
}

/* Blocks of 256 threads, enough to fill the device several times over; the loops stride. */
static unsigned grid_for(const plain_args &a)
{
    int64_t total = a.m * a.n * a.batch;
    return (unsigned)OCD_MIN((total + 255) / 256, (int64_t)65535 * 16);
}

template <typename AB, typename C, typename Acc> static cudnnStatus_t launch_plain(const plain_args &a, cudaStream_t s)
{
    gemm_plain_kernel<AB, C, Acc><<<grid_for(a), 256, 0, s>>>(a);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_cuda_gemm_plain(cudnnHandle_t handle, const void *call_, void *ws, size_t ws_bytes)
{
    const struct ocd_gemm_call *call = (const struct ocd_gemm_call *)call_;
    const struct ocd_gemm_problem *p = call->p;
    plain_args a = args_of(call);
    cudaStream_t s = handle->stream;
    bool cf = p->c_type == CUDNN_DATA_FLOAT;
    switch (p->ab_type) {
    case CUDNN_DATA_HALF: return cf ? launch_plain<__half, float, float>(a, s) : launch_plain<__half, __half, float>(a, s);
    case CUDNN_DATA_BFLOAT16:
        return cf ? launch_plain<__nv_bfloat16, float, float>(a, s)
                  : launch_plain<__nv_bfloat16, __nv_bfloat16, float>(a, s);
    case CUDNN_DATA_DOUBLE: return launch_plain<double, double, double>(a, s);
    default: return launch_plain<float, float, float>(a, s);
    }
}

static epilogue_args epilogue_args_of(const struct ocd_gemm_call *call)
{
    epilogue_args a;
    a.p = args_of(call);
    a.fast = a.p.m * a.p.n * a.p.batch < ((int64_t)1 << 31);
    a.rows = ocd_fastdiv_make(a.fast ? (uint32_t)a.p.m : 1);
    a.cols = ocd_fastdiv_make(a.fast ? (uint32_t)a.p.n : 1);
    return a;
}

cudnnStatus_t ocd_cuda_gemm_epilogue(cudnnHandle_t handle, const struct ocd_gemm_call *call)
{
    const epilogue_args a = epilogue_args_of(call);
    const unsigned grid = ocd_cuda_span_blocks(a.p.m * a.p.n * a.p.batch, EPI_ELEMS, 256);
    cudaStream_t s = handle->stream;
    switch (call->p->c_type) {
    case CUDNN_DATA_HALF: gemm_epilogue_kernel<__half, float><<<grid, 256, 0, s>>>(a); break;
    case CUDNN_DATA_BFLOAT16: gemm_epilogue_kernel<__nv_bfloat16, float><<<grid, 256, 0, s>>>(a); break;
    case CUDNN_DATA_DOUBLE: gemm_epilogue_kernel<double, double><<<grid, 256, 0, s>>>(a); break;
    default: gemm_epilogue_kernel<float, float><<<grid, 256, 0, s>>>(a); break;
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
