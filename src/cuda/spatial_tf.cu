/* spatial_tf.cu: the spatial transformer's grid generator and bilinear sampler, forward and
   backward, on the CUDA backend.

   One thread per grid point everywhere but the grid generator's backward (one block per image,
   reducing the six sums of dtheta in a fixed order, hence deterministic). The sampler's point
   geometry comes from ocd_stn_taps_of (problem/spatial_tf.h), computed in double as on the host;
   the sums are in the compute type. The sampler's backward gathers dgrid over the channels in
   the point's thread and scatters dx with atomic additions, after a first kernel has applied
   beta to dx: without a workspace there is nowhere else to accumulate, and atomics make dx's
   rounding order (not its value) vary from run to run, as in cuDNN. */
#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/spatial_tf.h"

namespace {

const int THREADS = 256;

/* Blocks for a grid-stride loop over `count` items: enough to fill the device, no more. */
int blocks_for(cudnnHandle_t h, int64_t count)
{
    return (int)OCD_MAX((int64_t)1, OCD_MIN((count + THREADS - 1) / THREADS, (int64_t)h->sm_count * 16));
}

#define GRID_STRIDE(q, count)                                                                    \
    for (int64_t q = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; q < (count);                 \
         q += (int64_t)gridDim.x * blockDim.x)

/* ---- grid generator --------------------------------------------------------------------------- */

template <typename T> __global__ void grid_fwd(const T *theta, T *grid, int64_t n, int64_t h, int64_t w)
{
    typedef typename ocd_compute<T>::type C;
    GRID_STRIDE(q, n * h * w)
    {
        const T *th = theta + q / (h * w) * 6;
        C xt = (C)ocd_stn_linspace(q % w, w), yt = (C)ocd_stn_linspace(q / w % h, h);
        ocd_cuda_store(grid + 2 * q, ocd_cuda_load(th) * xt + ocd_cuda_load(th + 1) * yt + ocd_cuda_load(th + 2));
        ocd_cuda_store(grid + 2 * q + 1, ocd_cuda_load(th + 3) * xt + ocd_cuda_load(th + 4) * yt + ocd_cuda_load(th + 5));
    }
}

/* One block per image: each thread sums its points, then the block sums the threads'. */
template <typename T> __global__ void __launch_bounds__(THREADS)
grid_bwd(const T *dgrid, T *dtheta, int64_t h, int64_t w)
{
    typedef typename ocd_compute<T>::type C;
    __shared__ C part[6][THREADS / 32];
    C s[6] = {0, 0, 0, 0, 0, 0};
    const T *g = dgrid + blockIdx.x * h * w * 2;
    for (int64_t q = threadIdx.x; q < h * w; q += blockDim.x) {
        C xt = (C)ocd_stn_linspace(q % w, w), yt = (C)ocd_stn_linspace(q / w, h);
        for (int r = 0; r < 2; r++) {
            C d = ocd_cuda_load(g + 2 * q + r);
            s[3 * r] += d * xt;
            s[3 * r + 1] += d * yt;
            s[3 * r + 2] += d;
        }
    }
    for (int k = 0; k < 6; k++) {
        for (int o = 16; o > 0; o /= 2) s[k] += __shfl_xor_sync(0xffffffffu, s[k], o);
        if (threadIdx.x % 32 == 0) part[k][threadIdx.x / 32] = s[k];
    }
    __syncthreads();
    if (threadIdx.x < 6) {
        C t = 0;
        for (int i = 0; i < THREADS / 32; i++) t += part[threadIdx.x][i];
        ocd_cuda_store(dtheta + blockIdx.x * 6 + threadIdx.x, t);
    }
}

template <typename T> cudnnStatus_t grid_launch(cudnnHandle_t h, const ocd_stn_grid_problem *p, bool forward)
{
    const T *src = static_cast<const T *>(p->src);
    T *dst = static_cast<T *>(p->dst);
    if (forward)
        grid_fwd<T><<<blocks_for(h, p->n * p->h * p->w), THREADS, 0, h->stream>>>(src, dst, p->n, p->h, p->w);
    else
        grid_bwd<T><<<(unsigned)p->n, THREADS, 0, h->stream>>>(src, dst, p->h, p->w);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* ---- sampler ------------------------------------------------------------------------------------ */

/* A sample point's place and neighbours, in the compute type. */
template <typename T> struct point {
    typedef typename ocd_compute<T>::type C;
    int64_t n, i, j, x0, y0;
    C wx1, wy1;
    bool valid;
};

template <typename T>
__device__ __forceinline__ point<T> point_of(const T *grid, int64_t q, int64_t h, int64_t w,
                                             int64_t h_in, int64_t w_in)
{
    typedef typename ocd_compute<T>::type C;
    point<T> pt;
    pt.j = q % w;
    pt.i = q / w % h;
    pt.n = q / w / h;
    ocd_stn_taps t = ocd_stn_taps_of(ocd_cuda_load(grid + 2 * q), ocd_cuda_load(grid + 2 * q + 1), h_in, w_in);
    pt.x0 = t.x0;
    pt.y0 = t.y0;
    pt.wx1 = (C)t.wx1;
    pt.wy1 = (C)t.wy1;
    pt.valid = t.valid;
    return pt;
}

__device__ __forceinline__ int64_t offset4(const ocd_cuda_view &v, int64_t n, int64_t c, int64_t i, int64_t j)
{
    return n * v.strides[0] + c * v.strides[1] + i * v.strides[2] + j * v.strides[3];
}

/* v[b][a]: x at (y0 + b, x0 + a) in channel c, 0 outside the image. */
template <typename T>
__device__ __forceinline__ void neighbours(const T *x, const ocd_cuda_view &xv, const point<T> &pt, int64_t c,
                                           typename ocd_compute<T>::type v[2][2])
{
#pragma unroll
    for (int b = 0; b < 2; b++)
#pragma unroll
        for (int a = 0; a < 2; a++) {
            int64_t yy = pt.y0 + b, xx = pt.x0 + a;
            bool inside = yy >= 0 && yy < xv.dims[2] && xx >= 0 && xx < xv.dims[3];
            v[b][a] = inside ? ocd_cuda_load(x + offset4(xv, pt.n, c, yy, xx)) : 0;
        }
}

/* alpha * r + beta * *dst, where a zero beta does not read dst. */
template <typename T, typename C> __device__ __forceinline__ void blend_store(T *dst, C alpha, C r, C beta)
{
    ocd_cuda_store(dst, beta == C(0) ? alpha * r : alpha * r + beta * ocd_cuda_load(dst));
}

template <typename T>
__global__ void sampler_fwd(const T *x, ocd_cuda_view xv, const T *grid, T *y, ocd_cuda_view yv,
                            typename ocd_compute<T>::type alpha, typename ocd_compute<T>::type beta)
{
    typedef typename ocd_compute<T>::type C;
    GRID_STRIDE(q, yv.dims[0] * yv.dims[2] * yv.dims[3])
    {
        point<T> pt = point_of(grid, q, yv.dims[2], yv.dims[3], xv.dims[2], xv.dims[3]);
        C v[2][2];
        for (int64_t c = 0; c < yv.dims[1]; c++) {
            C r = 0;
            if (pt.valid) {
                neighbours(x, xv, pt, c, v);
                r = (1 - pt.wy1) * ((1 - pt.wx1) * v[0][0] + pt.wx1 * v[0][1]) +
                    pt.wy1 * ((1 - pt.wx1) * v[1][0] + pt.wx1 * v[1][1]);
            }
            blend_store(y + offset4(yv, pt.n, c, pt.i, pt.j), alpha, r, beta);
        }
    }
}

/* dx = beta * dx, or 0 when beta is 0 (dx not read): the first half of dx's blend. */
template <typename T> __global__ void scale_dx(T *dx, ocd_cuda_view dxv, typename ocd_compute<T>::type beta)
{
    typedef typename ocd_compute<T>::type C;
    GRID_STRIDE(i, dxv.dims[0] * dxv.dims[1] * dxv.dims[2] * dxv.dims[3])
    {
        T *d = dx + ocd_cuda_offset(dxv, i);
        ocd_cuda_store(d, beta == C(0) ? C(0) : beta * ocd_cuda_load(d));
    }
}

__device__ __forceinline__ void atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(__half *p, float v) { atomicAdd(p, __float2half_rn(v)); }
__device__ __forceinline__ void atomic_add(__nv_bfloat16 *p, float v) { atomicAdd(p, __float2bfloat16_rn(v)); }

/* Per sample point: adds alpha * weight * dy into dx's four neighbours (the second half of dx's
   blend) and writes the point's dgrid (problem/spatial_tf.h, host/spatial_tf.c for the formulas). */
template <typename T>
__global__ void sampler_bwd(const T *x, ocd_cuda_view xv, const T *grid, const T *dy, ocd_cuda_view dyv,
                            T *dx, ocd_cuda_view dxv, T *dgrid, typename ocd_compute<T>::type alpha,
                            typename ocd_compute<T>::type alpha_dgrid, typename ocd_compute<T>::type beta_dgrid)
{
    typedef typename ocd_compute<T>::type C;
    GRID_STRIDE(q, dyv.dims[0] * dyv.dims[2] * dyv.dims[3])
    {
        point<T> pt = point_of(grid, q, dyv.dims[2], dyv.dims[3], xv.dims[2], xv.dims[3]);
        C gx = 0, gy = 0, v[2][2];
        C wx[2] = {1 - pt.wx1, pt.wx1}, wy[2] = {1 - pt.wy1, pt.wy1};
        for (int64_t c = 0; pt.valid && c < dyv.dims[1]; c++) {
            C d = ocd_cuda_load(dy + offset4(dyv, pt.n, c, pt.i, pt.j));
            if (alpha_dgrid != C(0)) { /* otherwise x is not read: it may be dx */
                neighbours(x, xv, pt, c, v);
                gx += d * (wy[0] * (v[0][1] - v[0][0]) + wy[1] * (v[1][1] - v[1][0]));
                gy += d * (wx[0] * (v[1][0] - v[0][0]) + wx[1] * (v[1][1] - v[0][1]));
            }
#pragma unroll
            for (int b = 0; b < 2; b++)
#pragma unroll
                for (int a = 0; a < 2; a++) {
                    int64_t yy = pt.y0 + b, xx = pt.x0 + a;
                    if (yy >= 0 && yy < dxv.dims[2] && xx >= 0 && xx < dxv.dims[3])
                        atomic_add(dx + offset4(dxv, pt.n, c, yy, xx), alpha * wy[b] * wx[a] * d);
                }
        }
        gx *= (C)(xv.dims[3] - 1) * C(0.5);
        gy *= (C)(xv.dims[2] - 1) * C(0.5);
        blend_store(dgrid + 2 * q, alpha_dgrid, gx, beta_dgrid);
        blend_store(dgrid + 2 * q + 1, alpha_dgrid, gy, beta_dgrid);
    }
}

template <typename T> cudnnStatus_t sampler_launch(cudnnHandle_t h, const ocd_stn_sampler_problem *p, bool forward)
{
    typedef typename ocd_compute<T>::type C;
    const T *x = static_cast<const T *>(p->x_data), *grid = static_cast<const T *>(p->grid);
    ocd_cuda_view xv = ocd_cuda_view_of(&p->x), yv = ocd_cuda_view_of(&p->y);
    int64_t points = p->y.dims[0] * p->y.dims[2] * p->y.dims[3];
    if (forward) {
        sampler_fwd<T><<<blocks_for(h, points), THREADS, 0, h->stream>>>(
            x, xv, grid, static_cast<T *>(p->y_data), yv, (C)p->alpha, (C)p->beta);
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    }
    ocd_cuda_view dxv = ocd_cuda_view_of(&p->dx);
    T *dx = static_cast<T *>(p->dx_data);
    if (p->beta != 1.0) {
        scale_dx<T><<<blocks_for(h, ocd_view_count(&p->dx)), THREADS, 0, h->stream>>>(dx, dxv, (C)p->beta);
        OCD_CUDA_LAUNCHED();
    }
    sampler_bwd<T><<<blocks_for(h, points), THREADS, 0, h->stream>>>(
        x, xv, grid, static_cast<const T *>(p->dy_data), yv, dx, dxv, static_cast<T *>(p->dgrid), (C)p->alpha,
        (C)p->alpha_dgrid, (C)p->beta_dgrid);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* Runs F<T>(h, p, forward) for the problem's data type (applies() admitted only these). */
#define DISPATCH(F, dtype, ...)                                                                  \
    switch (dtype) {                                                                             \
    case CUDNN_DATA_FLOAT: return F<float>(__VA_ARGS__);                                         \
    case CUDNN_DATA_DOUBLE: return F<double>(__VA_ARGS__);                                       \
    case CUDNN_DATA_HALF: return F<__half>(__VA_ARGS__);                                         \
    case CUDNN_DATA_BFLOAT16: return F<__nv_bfloat16>(__VA_ARGS__);                              \
    default: return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "type %d passed applies()", (int)(dtype)); \
    }

} // namespace

extern "C" cudnnStatus_t ocd_cuda_stn_grid_fwd(cudnnHandle_t h, const void *problem, void *, size_t)
{
    const ocd_stn_grid_problem *p = static_cast<const ocd_stn_grid_problem *>(problem);
    DISPATCH(grid_launch, p->dtype, h, p, true)
}

extern "C" cudnnStatus_t ocd_cuda_stn_grid_bwd(cudnnHandle_t h, const void *problem, void *, size_t)
{
    const ocd_stn_grid_problem *p = static_cast<const ocd_stn_grid_problem *>(problem);
    DISPATCH(grid_launch, p->dtype, h, p, false)
}

extern "C" cudnnStatus_t ocd_cuda_stn_sampler_fwd(cudnnHandle_t h, const void *problem, void *, size_t)
{
    const ocd_stn_sampler_problem *p = static_cast<const ocd_stn_sampler_problem *>(problem);
    DISPATCH(sampler_launch, p->dtype, h, p, true)
}

extern "C" cudnnStatus_t ocd_cuda_stn_sampler_bwd(cudnnHandle_t h, const void *problem, void *, size_t)
{
    const ocd_stn_sampler_problem *p = static_cast<const ocd_stn_sampler_problem *>(problem);
    DISPATCH(sampler_launch, p->dtype, h, p, false)
}
