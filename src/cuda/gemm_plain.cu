/* gemm_plain.cu: the CUDA GEMM's reference entry (cuda:gemm_plain, last in the table of
   src/ops/gemm.c) and the epilogue pass the cuBLAS entry runs after the library's GEMM.

   Plain and direct: one thread per element of C, a grid-stride loop over every element of every
   batch (so any size fits the grid), the dot product over K in the accumulator type (float for
   float, TF32, half and bfloat16 data; double for double), then the shared epilogue (gemm.cuh).
   Every type combination, transposition and batch form of the problem is served, with either
   kind of activation (gemm.cuh).

   The epilogue pass is memory-bound, and written so: each thread carries several elements with
   their loads in flight, and finds their coordinates by multiply-high division. Its vectorized form
   moves whole 16-byte vectors of V consecutive rows of a column, where every column starts on a
   16-byte boundary: C's pointer aligned, m, ldc and the batch stride multiples of V, a bias per row
   aligned too (it is read as vectors beside C's). A thread then issues EPI_VECS such loads (64
   bytes, with the bias's) before its first store, and finds the vector's row group, column and
   batch by multiply-high division once per V elements. The activation GELU_FWD (the graph's
   MatmulBiasAct) is a kernel of its own, ocd_pw_apply inlined with its mode known, instead of the
   out-of-line call of pw_step.cuh that every other step takes. */
#include "core/dtype.h"
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

/* The vectorized pass's arguments: vectors numbered row group fastest (m / V of them a column),
   then column, then batch; every number fits 32 bits (vec_fits). */
struct epilogue_vec_args {
    plain_args p;
    uint32_t total;
    ocd_fastdiv groups, cols;
};

/* 16-byte vectors of C a thread of the vectorized pass carries at once. */
#define EPI_VECS 4

/* The activation of the vectorized pass: GELU_FWD with the step's mode fixed, so that
   ocd_pw_apply's switch folds away and its erf form runs inline; else gemm_epi_act. */
template <typename Acc, bool GELU> __host__ __device__ __forceinline__ Acc epi_vec_act(const gemm_epi &e, Acc v)
{
    if (!GELU) return gemm_epi_act<Acc>(e, v);
    struct ocd_pw_step s = e.pw;
    s.mode = CUDNN_POINTWISE_GELU_FWD;
    return ocd_pw_apply<Acc>(&s, v, v);
}

/* What thread `tid` of a block of `threads` does for the block's span starting at vector base
   (host-callable: tests/emulate/gemm_epilogue.cu runs it). */
template <typename C, typename Acc, bool GELU>
__host__ __device__ __forceinline__ void gemm_epilogue_vec_span(const epilogue_vec_args &a, uint32_t base, unsigned tid,
                                                                unsigned threads)
{
    constexpr int V = ocd_vec16<C>::N;
    const plain_args &p = a.p;
    const bool row_bias = p.e.bias_mode == OCD_GEMM_BIAS_ROW, col_bias = p.e.bias_mode == OCD_GEMM_BIAS_COL;
    ocd_vec16<C> *c[EPI_VECS];
    ocd_vec16<C> v[EPI_VECS], bias[EPI_VECS];
    uint32_t col[EPI_VECS];
#pragma unroll
    for (int e = 0; e < EPI_VECS; e++) {
        const uint32_t x = base + (uint32_t)e * threads + tid;
        if (x >= a.total) break;
        uint32_t g, j;
        const uint32_t b = ocd_fastdiv_divmod(a.cols, ocd_fastdiv_divmod(a.groups, x, &g), &j);
        c[e] = reinterpret_cast<ocd_vec16<C> *>((C *)p.c + b * p.sc + (int64_t)g * V + j * p.ldc);
        col[e] = j;
        v[e] = *c[e];
        if (row_bias) bias[e] = reinterpret_cast<const ocd_vec16<C> *>(p.e.bias)[g];
    }
#pragma unroll
    for (int e = 0; e < EPI_VECS; e++) {
        if (base + (uint32_t)e * threads + tid >= a.total) break;
        const Acc cb = col_bias ? (Acc)ocd_cuda_load((const C *)p.e.bias + col[e]) : (Acc)0;
#pragma unroll
        for (int k = 0; k < V; k++) {
            Acc t = ocd_cuda_load(&v[e].v[k]);
            if (row_bias) t += ocd_cuda_load(&bias[e].v[k]);
            else if (col_bias) t += cb;
            ocd_cuda_store(&v[e].v[k], epi_vec_act<Acc, GELU>(p.e, t));
        }
        *c[e] = v[e];
    }
}

template <typename C, typename Acc, bool GELU>
__global__ void gemm_epilogue_vec_kernel(const __grid_constant__ epilogue_vec_args a)
{
    ocd_cuda_each_span<EPI_VECS>(a.total, [&](int64_t base) {
        gemm_epilogue_vec_span<C, Acc, GELU>(a, (uint32_t)base, threadIdx.x, blockDim.x);
    });
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

/* Whether the vectorized pass takes the call: strided batches whose columns all start on a
   16-byte boundary (V = 16 / the size of C's type), a bias per row on one too, fewer than 2^31
   elements. */
static bool vec_fits(const struct ocd_gemm_call *call)
{
    const struct ocd_gemm_problem *p = call->p;
    const int64_t V = 16 / (int64_t)ocd_dtype_scalar_size(p->c_type);
    return !p->pointer_array && p->m % V == 0 && p->ldc % V == 0 && (p->batch == 1 || p->stride_c % V == 0) &&
           ocd_cuda_aligned16(call->c) && (p->bias != OCD_GEMM_BIAS_ROW || ocd_cuda_aligned16(call->bias)) &&
           p->m * p->n * p->batch < ((int64_t)1 << 31);
}

static epilogue_vec_args epilogue_vec_args_of(const struct ocd_gemm_call *call)
{
    const int64_t V = 16 / (int64_t)ocd_dtype_scalar_size(call->p->c_type);
    epilogue_vec_args a;
    a.p = args_of(call);
    a.total = (uint32_t)(a.p.m / V * a.p.n * a.p.batch);
    a.groups = ocd_fastdiv_make((uint32_t)(a.p.m / V));
    a.cols = ocd_fastdiv_make((uint32_t)a.p.n);
    return a;
}

template <typename C, typename Acc> static void launch_vec(const epilogue_vec_args &a, cudaStream_t s)
{
    const unsigned grid = ocd_cuda_span_blocks(a.total, EPI_VECS, 256);
    if (a.p.e.pw_on && a.p.e.pw.mode == CUDNN_POINTWISE_GELU_FWD)
        gemm_epilogue_vec_kernel<C, Acc, true><<<grid, 256, 0, s>>>(a);
    else
        gemm_epilogue_vec_kernel<C, Acc, false><<<grid, 256, 0, s>>>(a);
}

static cudnnStatus_t epilogue_vec(cudnnHandle_t handle, const struct ocd_gemm_call *call)
{
    const epilogue_vec_args a = epilogue_vec_args_of(call);
    cudaStream_t s = handle->stream;
    switch (call->p->c_type) {
    case CUDNN_DATA_HALF: launch_vec<__half, float>(a, s); break;
    case CUDNN_DATA_BFLOAT16: launch_vec<__nv_bfloat16, float>(a, s); break;
    case CUDNN_DATA_DOUBLE: launch_vec<double, double>(a, s); break;
    default: launch_vec<float, float>(a, s); break;
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_cuda_gemm_epilogue(cudnnHandle_t handle, const struct ocd_gemm_call *call)
{
    if (vec_fits(call)) return epilogue_vec(handle, call);
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
