/* conv_dgrad_1x1s.cu: backward data of a 1x1 filter with a stride and no padding (ResNet's
   downsampling layers: 1x1, stride 2), fp16 and bf16 NHWC, as one cuBLAS GEMM and one pass over
   dx: entry cuda:dgrad_gemm1x1_strided_cublas_tc (problem/conv.h).

   Main decision: with a 1x1 filter, stride u and no padding, dx pixel (h, w) receives dy pixel
   (h / u, w / u) times the filter where u divides both coordinates, and nothing elsewhere. So
   cuBLAS computes dcol[N*P*Q][C] = alpha * dy[N*P*Q][K] w[K][C] (fp32 accumulation) packed in
   the workspace, and one pass writes every 16-byte vector of dx once, whole sectors: the dcol
   vector of its source pixel, or zeros, plus beta * dx. The stride phases entries instead zero
   all of dx with a memset and write the one phase with taps over it through the implicit GEMM,
   a pass more over dx, on a kernel slower than cuBLAS's. dcol is of dx's type at beta 0 (the
   GEMM's store is then the one rounding of each element, as a direct store's) and fp32 otherwise
   (the pass rounds alpha * sum + beta * dx once); the workspace is the fp32 one's size either
   way, since the workspace query knows no beta.

   Constraints (each a reason): compute capability 8.0 or newer; fp16 or bf16 data, all three
   tensors of one type; backward data, groups 1, a 1x1 (or 1x1x1) filter without padding and a
   stride above 1 in some dim (unit stride: cuda:dgrad_gemm1x1_cublas_tc); dx and dy packed NHWC
   with C a multiple of 8 (16-byte vectors) and dx 16-byte aligned; the filter packed ([K][C]
   whatever its format, at 1x1); dx below 2^31 elements; cuBLAS loadable.
   tests/emulate/conv_dgrad_1x1s.cu runs the pass's per-vector code on the CPU. */
#include "core/impl.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/cublas_loader.h"
#include "cuda/types.cuh"
#include "problem/conv.h"

#include <string.h>
#include <type_traits>

/* The pass over dx: vector i (of ocd_vec16's 8 elements) of dx, N x [D x] H x W pixels of C
   channels, its index's digits (vector of the pixel, w, h, d, n) fastest first. */
struct dg1x1s_geom {
    uint32_t vecs;         /* dx's vectors */
    ocd_fastdiv div[4];    /* vectors a pixel (C / 8), W, H, D */
    ocd_fastdiv stride[3]; /* the strides along w, h, d */
    uint32_t out[3];       /* dy's Q, P, Z */
    float beta;
};

/* The index of dcol's vector that dx vector i receives, or -1 where its pixel receives none. */
__host__ __device__ __forceinline__ int32_t dg1x1s_source(const dg1x1s_geom &g, uint32_t i)
{
    uint32_t cv, coord[3];
    uint32_t n = ocd_fastdiv_divmod(g.div[0], i, &cv);
#pragma unroll
    for (int d = 0; d < 3; d++) n = ocd_fastdiv_divmod(g.div[d + 1], n, &coord[d]);
    uint32_t src = n;
#pragma unroll
    for (int d = 2; d >= 0; d--) {
        uint32_t rem;
        const uint32_t o = ocd_fastdiv_divmod(g.stride[d], coord[d], &rem);
        if (rem != 0 || o >= g.out[d]) return -1;
        src = src * g.out[d] + o;
    }
    return (int32_t)(src * g.div[0].d + cv);
}

/* dx vector i from dcol (S: dx's type at beta 0, fp32 otherwise: the file comment). */
template <typename T, typename S>
__host__ __device__ __forceinline__ void dg1x1s_vector(T *dx, const S *dcol, const dg1x1s_geom &g, uint32_t i)
{
    typedef ocd_vec16<T> V;
    const int32_t src = dg1x1s_source(g, i);
    V *out = (V *)dx + i;
    V v;
    if (std::is_same<S, T>::value) {
        if (src >= 0) {
            v = ((const V *)dcol)[src];
        } else {
#pragma unroll
            for (int k = 0; k < V::N; k++) ocd_cuda_store(&v.v[k], 0.f);
        }
    } else {
        v = *out;
        const float *a = (const float *)dcol + (int64_t)(src >= 0 ? src : 0) * V::N;
#pragma unroll
        for (int k = 0; k < V::N; k++)
            ocd_cuda_store(&v.v[k], (src >= 0 ? a[k] : 0.f) + g.beta * ocd_cuda_load(&v.v[k]));
    }
    *out = v;
}

template <typename T, typename S> __global__ void dg1x1s_expand(T *dx, const S *dcol, const dg1x1s_geom g)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < g.vecs; i += gridDim.x * blockDim.x)
        dg1x1s_vector<T, S>(dx, dcol, g, i);
}

/* ---- the entry -------------------------------------------------------------------------------------- */

struct dg1x1s_plan {
    cudnnDataType_t dt;
    int64_t npq, c, k; /* the GEMM: dy's pixels, channels, filters */
    dg1x1s_geom g;
    size_t ws_bytes;
};
OCD_IMPL_PLAN_FITS(dg1x1s_plan);

/* The plan of p but for what it asks of the device (dg1x1s_plan_of), or why it has none. */
static const char *dg1x1s_geometry(const struct ocd_conv_problem *p, dg1x1s_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    if (p->dir != OCD_CONV_BWD_DATA) return "backward data only";
    const struct ocd_conv_shape *s = &p->s;
    bool strided = false;
    for (int d = 0; d < s->nsp; d++) {
        if (s->filt[d] != 1 || s->pad[d] != 0) return "not a 1x1 filter without padding";
        strided = strided || s->stride[d] != 1;
    }
    if (!strided) return "unit stride: the gemm1x1 entry serves it";
    if (s->groups != 1) return "groups";
    const cudnnDataType_t dt = p->x.dtype;
    if ((dt != CUDNN_DATA_HALF && dt != CUDNN_DATA_BFLOAT16) || p->y.dtype != dt || p->w.dtype != dt)
        return OCD_REASON_DTYPE;
    if (!ocd_view_is_packed_nhwc(&p->x) || !ocd_view_is_packed_nhwc(&p->y)) return "needs dx and dy packed NHWC";
    if (s->c % 8 != 0) return "channels not a multiple of 8 (16-byte vectors of dx)";
    if ((s->k > 1 && p->w.strides[0] != s->c) || (s->c > 1 && p->w.strides[1] != 1)) return OCD_REASON_LAYOUT;
    if (p->x_data != NULL && (uintptr_t)p->x_data % 16 != 0) return OCD_REASON_ALIGNMENT;
    const int64_t count = ocd_view_count(&p->x);
    if (count >= INT32_MAX || s->k >= INT32_MAX) return OCD_REASON_SHAPE;

    dg1x1s_geom &g = pl->g;
    g.vecs = (uint32_t)(count / 8);
    g.div[0] = ocd_fastdiv_make((uint32_t)(s->c / 8));
    int64_t npq = s->n;
    for (int d = 0; d < 3; d++) {
        const int sd = s->nsp - 1 - d; /* w, h, then d of a 3-D problem */
        const bool on = sd >= 0;
        g.div[d + 1] = ocd_fastdiv_make(on ? (uint32_t)s->in[sd] : 1u);
        g.stride[d] = ocd_fastdiv_make(on ? (uint32_t)s->stride[sd] : 1u);
        g.out[d] = on ? (uint32_t)s->out[sd] : 1u;
        npq *= g.out[d];
    }
    pl->dt = dt, pl->npq = npq, pl->c = s->c, pl->k = s->k;
    pl->ws_bytes = (size_t)(npq * s->c) * sizeof(float) + 256; /* room to align the user's pointer */
    return NULL;
}

static const char *dg1x1s_plan_of(cudnnHandle_t h, const void *problem, void *plan)
{
    if (const char *why = dg1x1s_geometry((const struct ocd_conv_problem *)problem, (dg1x1s_plan *)plan)) return why;
    if (h->cc_major < 8) return OCD_REASON_ARCH;
    return ocd_cublas_handle(h, NULL);
}

static size_t dg1x1s_workspace(cudnnHandle_t, const void *, const void *plan)
{
    return ((const dg1x1s_plan *)plan)->ws_bytes;
}

template <typename T>
static cudnnStatus_t dg1x1s_launch(cudnnHandle_t h, const struct ocd_conv_problem *p, const dg1x1s_plan &pl,
                                   cublasHandle_t blas, void *dcol)
{
    const bool blend = p->beta != 0;
    const cudaDataType dt = std::is_same<T, __half>::value ? CUDA_R_16F : CUDA_R_16BF;
    const float alpha = (float)p->alpha, zero = 0.f;
    /* row-major dcol[npq][c] = dy[npq][k] w[k][c]: column-major dcol^T = w^T dy^T */
    OCD_CUBLAS_TRY(ocd_cublas_api()->gemm_strided_batched(
        blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)pl.c, (int)pl.npq, (int)pl.k, &alpha, p->w_data, dt, (int)pl.c, 0,
        p->y_data, dt, (int)pl.k, 0, &zero, dcol, blend ? CUDA_R_32F : dt, (int)pl.c, 0, 1, CUBLAS_COMPUTE_32F,
        CUBLAS_GEMM_DEFAULT));
    dg1x1s_geom g = pl.g;
    g.beta = (float)p->beta;
    const unsigned blocks = ocd_cuda_span_blocks(g.vecs, 1, 256);
    if (blend) dg1x1s_expand<T, float><<<blocks, 256, 0, h->stream>>>((T *)p->x_data, (const float *)dcol, g);
    else dg1x1s_expand<T, T><<<blocks, 256, 0, h->stream>>>((T *)p->x_data, (const T *)dcol, g);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t dg1x1s_run(cudnnHandle_t h, const void *problem, const void *plan, void *workspace,
                                size_t workspace_bytes)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const dg1x1s_plan &pl = *(const dg1x1s_plan *)plan;
    cublasHandle_t blas = NULL;
    char *dcol = NULL;
    OCD_TRY(OCD_CUBLAS_RUN_START(h, "strided 1x1 backward-data entry", workspace, workspace_bytes, pl.ws_bytes, &blas,
                                 &dcol));
    return pl.dt == CUDNN_DATA_HALF ? dg1x1s_launch<__half>(h, p, pl, blas, dcol)
                                    : dg1x1s_launch<__nv_bfloat16>(h, p, pl, blas, dcol);
}

extern "C" const struct ocd_impl_planned ocd_cuda_conv_dgrad_1x1s_planned = {dg1x1s_plan_of, dg1x1s_workspace,
                                                                              dg1x1s_run};
