/* gemm_mma.cu: the CUDA GEMM on the shared tensor-core mainloop (cuda:gemm_mma, mma.cuh), for
   fp16 and bf16 (fp32 accumulation) and fp32 data as TF32, on sm_80 and newer.

   Main decision: the problem's operands are read as they lie by the dense loaders of mma.cuh:
   op(A) is K-major when A is transposed (a row of op(A) is contiguous) and MN-major otherwise;
   op(B) is K-major when B is not transposed, MN-major otherwise; MN-major needs 16-bit types
   (ldmatrix.trans), so TF32 takes only transposed A and plain B. Whole 16-byte chunks are
   copied, so the contiguous dimension of each operand, its leading dimension and its batch
   stride must be multiples of 16 bytes and the pointers 16-byte aligned (arrays of batch
   pointers cannot be checked on the host: declined). One CTA tile of 64 x 64 outputs, 4 warps,
   4 stages (40 KB of shared memory, no opt-in); grid (M tiles, N tiles, batch). The epilogue
   (gemm.cuh) writes C column-major with alpha, beta, bias and activation (either kind). */
#include "core/handle.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/gemm.cuh"
#include "cuda/mma.cuh"

typedef ocd_mma_tile<64, 64, 2, 2, 4> mma_tile;

struct mma_args {
    int M, N, K;
    const void *a, *b;
    void *c;
    int64_t lda, ldb, ldc, sa, sb, sc;
    int c_float; /* C is float (else the operands' type) */
    gemm_epi e;
};

template <typename T, bool AK, bool BK> struct mma_shape {
    typedef ocd_mma_smem<T, mma_tile::BM, AK> SA;
    typedef ocd_mma_smem<T, mma_tile::BN, BK> SB;
    static constexpr size_t SMEM = (size_t)mma_tile::STAGES * (SA::STAGE + SB::STAGE) * sizeof(T);
};

/* The loaders of the CTA tile at (m0, n0) of batch `batch`, for thread tid. Host-callable, as
   the rest of a thread's logic, for the CPU emulation (tests/emulate/gemm_mma.cu). */
template <typename T, bool AK, bool BK> struct mma_loaders {
    typename ocd_mma_dense_loader<AK, T, mma_tile::BM, mma_tile::THREADS>::type a;
    typename ocd_mma_dense_loader<BK, T, mma_tile::BN, mma_tile::THREADS>::type b;

    __host__ __device__ __forceinline__ void setup(const mma_args &p, int m0, int n0, int64_t batch, int tid)
    {
        a.setup((const T *)p.a + batch * p.sa, p.lda, p.M, m0, p.K, tid);
        b.setup((const T *)p.b + batch * p.sb, p.ldb, p.N, n0, p.K, tid);
    }
};

/* Stores thread `lane`'s accumulators of the warp tile at (wm, wn) of the CTA tile (m0, n0)
   through the epilogue: C column-major, rows and columns past the problem skipped. */
template <typename T>
__host__ __device__ __forceinline__ void mma_store(const mma_args &p, const float (&acc)[mma_tile::MI][mma_tile::NI][4],
                                                   int m0, int n0, int wm, int wn, int lane, int64_t batch)
{
#pragma unroll
    for (int i = 0; i < mma_tile::MI; i++)
#pragma unroll
        for (int j = 0; j < mma_tile::NI; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int m = m0 + wm + ocd_mma_acc_row(i, e, lane), n = n0 + wn + ocd_mma_acc_col(j, e, lane);
                if (m >= p.M || n >= p.N) continue;
                int64_t off = batch * p.sc + m + (int64_t)n * p.ldc;
                if (p.c_float) gemm_epi_store<float, float>(p.e, (float *)p.c, off, m, n, acc[i][j][e], true);
                else gemm_epi_store<T, float>(p.e, (T *)p.c, off, m, n, acc[i][j][e], true);
            }
}

template <typename T, bool AK, bool BK>
__global__ void __launch_bounds__(mma_tile::THREADS) gemm_mma_kernel(const __grid_constant__ mma_args p)
{
#ifdef OCD_MMA_ARCH_OK
    typedef mma_shape<T, AK, BK> Shape;
    extern __shared__ __align__(16) unsigned char gemm_mma_smem[];
    T *sa = (T *)gemm_mma_smem;
    T *sb = sa + mma_tile::STAGES * Shape::SA::STAGE;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp % mma_tile::WARPS_M) * mma_tile::WTM, wn = (warp / mma_tile::WARPS_M) * mma_tile::WTN;
    const int m0 = blockIdx.x * mma_tile::BM, n0 = blockIdx.y * mma_tile::BN;
    mma_loaders<T, AK, BK> ld;
    ld.setup(p, m0, n0, blockIdx.z, tid);
    float acc[mma_tile::MI][mma_tile::NI][4];
    ocd_mma_mainloop<mma_tile, T, AK, BK>(acc, sa, sb, ld.a, ld.b, p, 0, (p.K + Shape::SA::BK - 1) / Shape::SA::BK, wm,
                                          wn, lane);
    mma_store<T>(p, acc, m0, n0, wm, wn, lane, blockIdx.z);
#endif
}

template <typename T, bool AK, bool BK> static cudnnStatus_t launch(const mma_args &a, int batch, cudaStream_t s)
{
    dim3 grid((unsigned)((a.M + mma_tile::BM - 1) / mma_tile::BM), (unsigned)((a.N + mma_tile::BN - 1) / mma_tile::BN),
              (unsigned)batch);
    gemm_mma_kernel<T, AK, BK><<<grid, mma_tile::THREADS, mma_shape<T, AK, BK>::SMEM, s>>>(a);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <typename T> static cudnnStatus_t launch_16bit(const mma_args &a, bool ak, bool bk, int batch, cudaStream_t s)
{
    if (ak) return bk ? launch<T, true, true>(a, batch, s) : launch<T, true, false>(a, batch, s);
    return bk ? launch<T, false, true>(a, batch, s) : launch<T, false, false>(a, batch, s);
}

static bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

const char *ocd_cuda_gemm_mma_applies(cudnnHandle_t handle, const void *call_)
{
    const struct ocd_gemm_call *call = (const struct ocd_gemm_call *)call_;
    const struct ocd_gemm_problem *p = call->p;
    if (handle->cc_major < 8) return OCD_REASON_ARCH;
    bool tf32 = p->ab_type == CUDNN_DATA_FLOAT;
    if (tf32 ? p->compute != OCD_GEMM_COMPUTE_TF32 : p->ab_type != CUDNN_DATA_HALF && p->ab_type != CUDNN_DATA_BFLOAT16)
        return "the tensor-core GEMM takes half and bfloat16 data, and float as TF32";
    bool ak = p->trans_a, bk = !p->trans_b;
    if (tf32 && !(ak && bk)) return "TF32 needs A transposed and B not (both K-major)";
    if (p->pointer_array) return "arrays of batch pointers: their alignment is not known on the host";
    if (p->batch > 65535) return OCD_REASON_SHAPE;
    int64_t e = 16 / (tf32 ? 4 : 2);
    if ((ak ? p->k : p->m) % e || (bk ? p->k : p->n) % e || p->lda % e || p->ldb % e) return OCD_REASON_ALIGNMENT;
    if (p->batch > 1 && (p->stride_a % e || p->stride_b % e)) return OCD_REASON_ALIGNMENT;
    if (!aligned16(call->a) || !aligned16(call->b)) return OCD_REASON_ALIGNMENT;
    return NULL;
}

/* The kernel arguments of a call. */
static mma_args args_of(const struct ocd_gemm_call *call)
{
    const struct ocd_gemm_problem *p = call->p;
    mma_args a;
    a.M = (int)p->m, a.N = (int)p->n, a.K = (int)p->k;
    a.a = call->a, a.b = call->b, a.c = call->c;
    a.lda = p->lda, a.ldb = p->ldb, a.ldc = p->ldc;
    bool strided = p->batch > 1;
    a.sa = strided ? p->stride_a : 0, a.sb = strided ? p->stride_b : 0, a.sc = strided ? p->stride_c : 0;
    a.c_float = p->c_type == CUDNN_DATA_FLOAT;
    a.e = gemm_epi_of(call);
    return a;
}

cudnnStatus_t ocd_cuda_gemm_mma(cudnnHandle_t handle, const void *call_, void *ws, size_t ws_bytes)
{
    const struct ocd_gemm_call *call = (const struct ocd_gemm_call *)call_;
    const struct ocd_gemm_problem *p = call->p;
    mma_args a = args_of(call);
    int batch = (int)p->batch;
    bool ak = p->trans_a, bk = !p->trans_b;
    switch (p->ab_type) {
    case CUDNN_DATA_HALF: return launch_16bit<__half>(a, ak, bk, batch, handle->stream);
    case CUDNN_DATA_BFLOAT16: return launch_16bit<__nv_bfloat16>(a, ak, bk, batch, handle->stream);
    default: return launch<float, true, true>(a, batch, handle->stream);
    }
}
