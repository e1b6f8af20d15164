/* conv_winograd.cu: WINOGRAD and WINOGRAD_NONFUSED on CUDA, every direction, on the plan of
   problem/conv_winograd.h (problem/conv.h declares the entries).

   Main decision: four steps on the handle's stream, the GEMM in between on cuBLAS:
     1. filter role -> U: one thread per (o, i) filter (forward, backward data) or per (k, t) dy
        tile (backward filter) computes G g G^T;
     2. input role -> V: one thread per (channel, tile) computes B^T d B;
     3. M = U * V (or U * V^T) as one strided-batched cuBLAS GEMM over alpha^2 x groups;
     4. output role: one thread per (o, tile) computes A^T M A and stores the m x m outputs
        through the convolution store (alpha, beta, the fused epilogue); backward filter: one
        thread per (k, c) stores the R x R filter.
   Each thread writes (or reads) element e of every transformed position xi at xi * count + e,
   and consecutive threads take consecutive e, so every access to the workspace is coalesced.
   The sizes (m, r) are template parameters: the transforms unroll into registers with the
   matrices read from the kernel's parameters. The per-thread functions are __host__ __device__
   so that tests/emulate/conv_winograd.cu runs them on the CPU.

   The _tc flavour (the 4x4 tiles only: F(2x2, 3x3), F(3x3, 2x2)) keeps U and V in half for half
   data (fp32 accumulation on tensor cores) and runs float data as TF32 (forward and backward data
   only); the plain flavour keeps U and V in float and computes fp32. */
#include "problem/conv.h"

#include "problem/conv_winograd.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/conv_store.cuh"
#include "cuda/cublas_loader.h"

#include <cuda_fp16.h>
#include <string.h>

namespace {

const int kThreads = 256;
const int kSq = OCD_WINO_MAX_ALPHA * OCD_WINO_MAX_ALPHA;

/* What every thread reads, by value in the kernel's parameters. "Input role", "filter role" and
   "output role" as in problem/conv_winograd.h. */
struct wino_args {
    int dir, rotate, flip, step, shift[2];
    int64_t tiles[2], ntiles, in_ch, out_ch, ig, og, cg;
    int64_t in_lim[2];  /* plane of the input role (x, or dy for backward data) */
    int64_t out_lim[2]; /* plane of the output role (y or dx); dy's plane for backward filter */
    int64_t in_str[4], f_str[4], out_str[4]; /* strides of the input role, filter role (w, or dy), destination */
    const void *in, *f;
    void *u, *v; /* U and V, in the flavour's storage type */
    float *m;
    float at[kSq], g[kSq], bt[kSq];
};

__host__ __device__ __forceinline__ float to_float(float v)
{
    return v;
}
__host__ __device__ __forceinline__ float to_float(__half v)
{
    return __half2float(v);
}
template <typename S> __host__ __device__ __forceinline__ S from_float(float v);
template <> __host__ __device__ __forceinline__ float from_float<float>(float v)
{
    return v;
}
template <> __host__ __device__ __forceinline__ __half from_float<__half>(float v)
{
    return __float2half_rn(v);
}

template <typename T> __host__ __device__ __forceinline__ float load(const void *p, int64_t off)
{
    return to_float(((const T *)p)[off]);
}

/* out = mat * in * mat^T: mat ROWS x COLS, in COLS x COLS, out ROWS x ROWS (row-major). */
template <int ROWS, int COLS>
__host__ __device__ __forceinline__ void xform(const float *mat, const float *in, float *out)
{
    float tmp[ROWS * COLS];
#pragma unroll
    for (int i = 0; i < ROWS; i++)
#pragma unroll
        for (int b = 0; b < COLS; b++) {
            float acc = 0;
#pragma unroll
            for (int a = 0; a < COLS; a++) acc += mat[i * COLS + a] * in[a * COLS + b];
            tmp[i * COLS + b] = acc;
        }
#pragma unroll
    for (int i = 0; i < ROWS; i++)
#pragma unroll
        for (int j = 0; j < ROWS; j++) {
            float acc = 0;
#pragma unroll
            for (int b = 0; b < COLS; b++) acc += mat[j * COLS + b] * tmp[i * COLS + b];
            out[i * ROWS + j] = acc;
        }
}

__host__ __device__ __forceinline__ void tile_of(const wino_args &a, int64_t t, int64_t &n, int64_t &ty, int64_t &tx)
{
    tx = t % a.tiles[1];
    ty = t / a.tiles[1] % a.tiles[0];
    n = t / (a.tiles[0] * a.tiles[1]);
}

/* Writes the ALPHA^2 transformed values of element e to dst[xi * count + e]. */
template <int ALPHA, typename S>
__host__ __device__ __forceinline__ void put(void *dst, int64_t count, int64_t e, const float *vals)
{
#pragma unroll
    for (int xi = 0; xi < ALPHA * ALPHA; xi++) ((S *)dst)[xi * count + e] = from_float<S>(vals[xi]);
}

/* ---- the per-thread steps ------------------------------------------------------------------------ */

/* Step 1, forward and backward data: U[xi][o][i] = G g G^T of filter (o, i), e = o * ig + i. */
template <int M, int R, typename T, typename S> __host__ __device__ void filter_thread(const wino_args &a, int64_t e)
{
    const int A = M + R - 1;
    int64_t o = e / a.ig, i = e % a.ig, k = o, c = i;
    if (a.dir == OCD_CONV_BWD_DATA) k = o / a.og * a.ig + i, c = o % a.og;
    const int64_t off = k * a.f_str[0] + c * a.f_str[1];
    float g[R * R], u[A * A];
#pragma unroll
    for (int y = 0; y < R; y++)
#pragma unroll
        for (int x = 0; x < R; x++) {
            int fy = a.rotate ? R - 1 - y : y, fx = a.rotate ? R - 1 - x : x;
            g[y * R + x] = load<T>(a.f, off + fy * a.f_str[2] + fx * a.f_str[3]);
        }
    xform<A, R>(a.g, g, u);
    put<A, S>(a.u, a.out_ch * a.ig, e, u);
}

/* Step 1, backward filter: U[xi][k][t] = G g G^T of the R x R dy tile t of channel k, e = k * T + t. */
template <int M, int R, typename T, typename S> __host__ __device__ void dy_thread(const wino_args &a, int64_t e)
{
    const int A = M + R - 1;
    int64_t k = e / a.ntiles, n, ty, tx;
    tile_of(a, e % a.ntiles, n, ty, tx);
    const int64_t off = n * a.f_str[0] + k * a.f_str[1];
    float g[R * R], u[A * A];
#pragma unroll
    for (int y = 0; y < R; y++)
#pragma unroll
        for (int x = 0; x < R; x++) {
            int64_t py = ty * R + y, px = tx * R + x;
            g[y * R + x] = py < a.out_lim[0] && px < a.out_lim[1] ? load<T>(a.f, off + py * a.f_str[2] + px * a.f_str[3]) : 0.0f;
        }
    xform<A, R>(a.g, g, u);
    put<A, S>(a.u, a.out_ch * a.ntiles, e, u);
}

/* Step 2: V[xi][ch][t] = B^T d B of the window of tile t of channel ch, e = ch * T + t. */
template <int M, int R, typename T, typename S> __host__ __device__ void input_thread(const wino_args &a, int64_t e)
{
    const int A = M + R - 1;
    int64_t ch = e / a.ntiles, n, ty, tx;
    tile_of(a, e % a.ntiles, n, ty, tx);
    const int64_t y0 = ty * a.step - a.shift[0], x0 = tx * a.step - a.shift[1];
    const int64_t off = n * a.in_str[0] + ch * a.in_str[1];
    float d[A * A], v[A * A];
#pragma unroll
    for (int y = 0; y < A; y++)
#pragma unroll
        for (int x = 0; x < A; x++) {
            bool in = (uint64_t)(y0 + y) < (uint64_t)a.in_lim[0] && (uint64_t)(x0 + x) < (uint64_t)a.in_lim[1];
            d[y * A + x] = in ? load<T>(a.in, off + (y0 + y) * a.in_str[2] + (x0 + x) * a.in_str[3]) : 0.0f;
        }
    xform<A, A>(a.bt, d, v);
    put<A, S>(a.v, a.in_ch * a.ntiles, e, v);
}

/* Reads the ALPHA^2 products of element e from M[xi * count + e]. */
template <int ALPHA> __host__ __device__ __forceinline__ void take(const float *src, int64_t count, int64_t e, float *vals)
{
#pragma unroll
    for (int xi = 0; xi < ALPHA * ALPHA; xi++) vals[xi] = src[xi * count + e];
}

/* Step 4, forward and backward data: the M x M outputs of tile t of channel o, e = o * T + t,
   handed to store(offset, channel, value) where they fall inside the destination. */
#pragma nv_exec_check_disable
template <int M, int R, typename Store>
__host__ __device__ void output_thread(const wino_args &a, int64_t e, const Store &store)
{
    const int A = M + R - 1;
    int64_t o = e / a.ntiles, n, ty, tx;
    tile_of(a, e % a.ntiles, n, ty, tx);
    float mm[A * A], y[M * M];
    take<A>(a.m, a.out_ch * a.ntiles, e, mm);
    xform<M, A>(a.at, mm, y);
    const int64_t off = n * a.out_str[0] + o * a.out_str[1];
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < M; j++) {
            int64_t py = ty * M + i, px = tx * M + j;
            if (py < a.out_lim[0] && px < a.out_lim[1]) store(off + py * a.out_str[2] + px * a.out_str[3], o, y[i * M + j]);
        }
}

/* Step 4, backward filter: the M x M filter (k, c), e = k * C/G + c. */
#pragma nv_exec_check_disable
template <int M, int R, typename Store>
__host__ __device__ void dw_thread(const wino_args &a, int64_t e, const Store &store)
{
    const int A = M + R - 1;
    const int64_t k = e / a.cg, c = e % a.cg;
    float mm[A * A], y[M * M];
    take<A>(a.m, a.out_ch * a.cg, e, mm);
    xform<M, A>(a.at, mm, y);
    const int64_t off = k * a.out_str[0] + c * a.out_str[1];
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < M; j++) {
            int fi = a.flip ? M - 1 - i : i, fj = a.flip ? M - 1 - j : j;
            store(off + fi * a.out_str[2] + fj * a.out_str[3], 0, y[i * M + j]);
        }
}

/* The launch sizes of the steps: threads of step 1, 2 and 4. */
struct wino_counts {
    int64_t filter, input, output;
};

wino_counts counts_of(const wino_args &a)
{
    const bool dw = a.dir == OCD_CONV_BWD_FILTER;
    return {dw ? a.out_ch * a.ntiles : a.out_ch * a.ig, a.in_ch * a.ntiles, dw ? a.out_ch * a.cg : a.out_ch * a.ntiles};
}

void strides4(const struct ocd_tensor_view *v, int64_t *dst)
{
    for (int d = 0; d < 4; d++) dst[d] = v->strides[d];
}

/* The arguments of a problem and its plan, with U, V and M at their plan offsets from ws (256-byte
   aligned). */
wino_args args_of(const struct ocd_conv_problem *p, const struct ocd_conv_wino_plan *pl, char *ws)
{
    wino_args a;
    memset(&a, 0, sizeof a);
    const struct ocd_conv_shape *s = &p->s;
    const bool dgrad = p->dir == OCD_CONV_BWD_DATA, dw = p->dir == OCD_CONV_BWD_FILTER;
    a.dir = p->dir, a.rotate = pl->rotate, a.flip = s->flip, a.step = (int)pl->step;
    a.shift[0] = pl->shift[0], a.shift[1] = pl->shift[1];
    a.tiles[0] = pl->tiles[0], a.tiles[1] = pl->tiles[1], a.ntiles = pl->ntiles;
    a.in_ch = pl->in_ch, a.out_ch = pl->out_ch, a.ig = pl->in_ch / s->groups, a.og = pl->out_ch / s->groups;
    a.cg = s->c / s->groups;
    for (int d = 0; d < 2; d++) {
        a.in_lim[d] = dgrad ? s->out[d] : s->in[d];
        a.out_lim[d] = dgrad ? s->in[d] : s->out[d];
    }
    strides4(dgrad ? &p->y : &p->x, a.in_str);
    strides4(dw ? &p->y : &p->w, a.f_str);
    strides4(ocd_conv_dst_view(p), a.out_str);
    a.in = dgrad ? p->y_data : p->x_data;
    a.f = dw ? p->y_data : p->w_data;
    float *base = (float *)ws;
    a.u = base, a.v = base + ocd_conv_wino_v_offset(pl), a.m = base + ocd_conv_wino_m_offset(pl);
    memcpy(a.at, pl->at, sizeof a.at);
    memcpy(a.g, pl->g, sizeof a.g);
    memcpy(a.bt, pl->bt, sizeof a.bt);
    return a;
}

/* ---- kernels and launches --------------------------------------------------------------------- */

#define GRID_STRIDE(total) \
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < (total); e += (int64_t)gridDim.x * blockDim.x)

template <int M, int R, typename T, typename S> __global__ void filter_kernel(wino_args a, int64_t total)
{
    GRID_STRIDE(total)
    {
        if (a.dir == OCD_CONV_BWD_FILTER) dy_thread<M, R, T, S>(a, e);
        else filter_thread<M, R, T, S>(a, e);
    }
}

template <int M, int R, typename T, typename S> __global__ void input_kernel(wino_args a, int64_t total)
{
    GRID_STRIDE(total) input_thread<M, R, T, S>(a, e);
}

/* The output kernel's store: the shared call (conv_store.cuh) on the store's parameters where
   the kernel received them (a __grid_constant__ parameter: a by-value one would be copied to
   every thread's stack, 472 bytes, for the call's reference). */
struct device_store {
    ocd_cuda_conv_store s;
    __device__ void operator()(int64_t off, int64_t channel, float v) const
    {
        ocd_cuda_conv_finish_call<float>(s, off, channel, v);
    }
};

template <int M, int R>
__global__ void output_kernel(wino_args a, int64_t total, const __grid_constant__ device_store st)
{
    GRID_STRIDE(total)
    {
        if (a.dir == OCD_CONV_BWD_FILTER) dw_thread<M, R>(a, e, st);
        else output_thread<M, R>(a, e, st);
    }
}

unsigned blocks_for(int64_t total)
{
    return (unsigned)OCD_MAX((int64_t)1, OCD_MIN((total + kThreads - 1) / kThreads, (int64_t)1 << 20));
}

/* The flavour of an entry: U and V storage, and cuBLAS's compute type. */
struct flavour {
    bool half_operands; /* U and V in half */
    cublasComputeType_t compute;
};

template <int M, int R, typename T, typename S>
cudnnStatus_t run_sizes(cudnnHandle_t h, const struct ocd_conv_problem *p, const struct ocd_conv_wino_plan *pl,
                        cublasHandle_t blas, char *ws, cublasComputeType_t compute)
{
    const wino_args a = args_of(p, pl, ws);
    const wino_counts c = counts_of(a);
    filter_kernel<M, R, T, S><<<blocks_for(c.filter), kThreads, 0, h->stream>>>(a, c.filter);
    OCD_CUDA_LAUNCHED();
    input_kernel<M, R, T, S><<<blocks_for(c.input), kThreads, 0, h->stream>>>(a, c.input);
    OCD_CUDA_LAUNCHED();
    /* row-major M_b = U_b * op(V_b) is column-major M_b^T = op(V_b)^T * U_b^T */
    const cudaDataType st = sizeof(S) == 2 ? CUDA_R_16F : CUDA_R_32F;
    const float one = 1, zero = 0;
    OCD_CUBLAS_TRY(ocd_cublas_api()->gemm_strided_batched(
        blas, pl->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)pl->gn, (int)pl->gm, (int)pl->gk, &one, a.v, st,
        (int)pl->ldb, pl->stride_b, a.u, st, (int)pl->lda, pl->stride_a, &zero, a.m, CUDA_R_32F, (int)pl->ldc,
        pl->stride_c, (int)pl->batch, compute, CUBLAS_GEMM_DEFAULT));
    device_store store = {ocd_cuda_conv_store_of(p)};
    output_kernel<M, R><<<blocks_for(c.output), kThreads, 0, h->stream>>>(a, c.output, store);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <typename T, typename S>
cudnnStatus_t run_types(cudnnHandle_t h, const struct ocd_conv_problem *p, const struct ocd_conv_wino_plan *pl,
                        cublasHandle_t blas, char *ws, cublasComputeType_t compute)
{
    switch (pl->m * 8 + pl->r) {
    case 2 * 8 + 3: return run_sizes<2, 3, T, S>(h, p, pl, blas, ws, compute);
    case 4 * 8 + 3: return run_sizes<4, 3, T, S>(h, p, pl, blas, ws, compute);
    case 2 * 8 + 5: return run_sizes<2, 5, T, S>(h, p, pl, blas, ws, compute);
    case 3 * 8 + 2: return run_sizes<3, 2, T, S>(h, p, pl, blas, ws, compute);
    default: return run_sizes<5, 2, T, S>(h, p, pl, blas, ws, compute);
    }
}

/* The plan and flavour of an entry, or why it does not apply. */
const char *plan_of(cudnnHandle_t h, const struct ocd_conv_problem *p, bool nonfused, bool tc,
                    struct ocd_conv_wino_plan *pl, flavour *fl)
{
    if (const char *why = ocd_conv_wino_plan_init(pl, p, nonfused)) return why;
    const bool half = p->x.dtype == CUDNN_DATA_HALF;
    if (!half && p->x.dtype != CUDNN_DATA_FLOAT) return OCD_REASON_DTYPE;
    /* 10-bit operands (half, TF32) cost F(2x2, 3x3) and the filter gradient's F(3x3, 2x2) about
       5e-4 of the largest output (tests/emulate/conv_winograd.cu), the alpha-6 tiles, whose
       transforms reach 5/2 and 8, 2e-3 to 4e-3: those run on the fp32 entry only */
    if (tc && pl->alpha > 4) return "the 6x6 Winograd tiles lose too much in half or TF32 operands";
    fl->half_operands = tc && half;
    fl->compute = CUBLAS_COMPUTE_32F;
    if (tc && !half) {
        /* the filter gradient sums a product over every tile of every image: with TF32 operands
           its error grows past 5e-3 on the H200 (3x3, many tiles); float runs it in fp32 */
        if (p->dir == OCD_CONV_BWD_FILTER) return "the filter gradient's tile sums lose too much in TF32";
        if (h->cc_major < 8) return OCD_REASON_ARCH;
        if (const char *no = ocd_conv_tensor_ops_rejects(p)) return no;
        fl->compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    }
    /* cuBLAS takes int extents, leading dimensions and batch counts */
    const int64_t lim = INT32_MAX;
    if (pl->gm > lim || pl->gn > lim || pl->gk > lim || pl->lda > lim || pl->ldb > lim || pl->ldc > lim ||
        pl->batch > lim)
        return OCD_REASON_SHAPE;
    return ocd_cublas_handle(h, NULL);
}

/* The plan of an entry (core/impl.h): the transforms' plan and the flavour. */
struct entry_plan {
    struct ocd_conv_wino_plan wino;
    flavour fl;
};
OCD_IMPL_PLAN_FITS(entry_plan);

template <bool NONFUSED, bool TC> const char *plan(cudnnHandle_t h, const void *problem, void *out)
{
    entry_plan *e = (entry_plan *)out;
    return plan_of(h, (const struct ocd_conv_problem *)problem, NONFUSED, TC, &e->wino, &e->fl);
}

size_t workspace(cudnnHandle_t h, const void *problem, const void *plan)
{
    return ocd_conv_wino_workspace(&((const entry_plan *)plan)->wino) + 256; /* room to align the user's pointer */
}

cudnnStatus_t run(cudnnHandle_t h, const void *problem, const void *plan, void *workspace, size_t workspace_bytes)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const struct ocd_conv_wino_plan *pl = &((const entry_plan *)plan)->wino;
    const flavour &fl = ((const entry_plan *)plan)->fl;
    cublasHandle_t blas = NULL;
    char *ws = NULL;
    OCD_TRY(OCD_CUBLAS_RUN_START(h, "Winograd entry", workspace, workspace_bytes, ocd_conv_wino_workspace(pl) + 256,
                                 &blas, &ws));
    if (p->x.dtype == CUDNN_DATA_FLOAT) return run_types<float, float>(h, p, pl, blas, ws, fl.compute);
    if (fl.half_operands) return run_types<__half, __half>(h, p, pl, blas, ws, fl.compute);
    return run_types<__half, float>(h, p, pl, blas, ws, fl.compute);
}

} // namespace

extern "C" const struct ocd_impl_planned ocd_cuda_conv_winograd_planned = {plan<false, false>, workspace, run};
extern "C" const struct ocd_impl_planned ocd_cuda_conv_winograd_tc_planned = {plan<false, true>, workspace, run};
extern "C" const struct ocd_impl_planned ocd_cuda_conv_winograd_nonfused_planned = {plan<true, false>, workspace, run};
extern "C" const struct ocd_impl_planned ocd_cuda_conv_winograd_nonfused_tc_planned = {plan<true, true>, workspace,
                                                                                       run};
