/* conv_direct.cu: the CUDA reference convolution (forward, backward data, backward filter, with
   the fused bias + activation epilogue), Im2Col and the bias gradient.

   Main decision: plain and general before fast. One thread computes one element of the
   destination straight from the documented formula, reading every tensor through its view with
   the data type decided at run time (a switch per load), so that one kernel per accumulator type
   (int for the int8 configurations, double for double, float otherwise) serves every
   configuration and layout; it is the fallback entry of every CUDA table and the baseline that
   faster kernels (tensor-core implicit GEMM) are validated against. Deterministic: no atomics;
   the bias gradient reduces each channel in one block in a fixed order. */
#include "problem/conv.h"

#include "core/dtype.h"
#include "core/handle.h"
#include "cuda/check.cuh"
#include "cuda/conv_store.cuh"

#include <string.h>

namespace {

const int kThreads = 256;

struct conv_params {
    int nsp, flip, dir;
    int64_t n, c, k, groups;
    int64_t in[OCD_CONV_MAX_SPATIAL], filt[OCD_CONV_MAX_SPATIAL], out[OCD_CONV_MAX_SPATIAL];
    int pad[OCD_CONV_MAX_SPATIAL], stride[OCD_CONV_MAX_SPATIAL], dil[OCD_CONV_MAX_SPATIAL];
    ocd_cuda_view x, w, y;
    cudnnDataType_t xt, wt, yt;
    const void *xp, *wp, *yp;
    ocd_cuda_conv_store dst; /* the destination of the direction (Im2Col: the columns) */
};

/* A sum of many products, in blocks of 32: each block is summed on its own and added to the
   total, so that the rounding error of float data grows with about 32 + n / 32 terms rather than
   n (the filter gradient of a batch sums n * P * Q products); the vendor's blocked GEMMs have
   that accuracy under CUDNN_FMA_MATH, and tests/conv_fidelity.c holds us to it. Exact for the
   integer configurations. */
template <typename Acc> struct block_sum {
    Acc total = 0, part = 0;
    int terms = 0;
    __device__ void add(Acc v)
    {
        part += v;
        if (++terms == 32) total += part, part = 0, terms = 0;
    }
    __device__ Acc value() const { return total + part; }
};

__device__ int64_t tap(const conv_params &p, int d, int64_t r)
{
    return p.flip ? p.filt[d] - 1 - r : r;
}

/* Advances a spatial counter; false when it wrapped around. */
__device__ bool next_index(int n, const int64_t *ext, int64_t *idx)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < ext[d]) return true;
        idx[d] = 0;
    }
    return false;
}

template <typename Acc> __global__ void fwd_kernel(conv_params p, int64_t total)
{
    int64_t cg = p.c / p.groups, kg = p.k / p.groups;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t yi[OCD_MAX_DIMS] = {0}, xi[OCD_MAX_DIMS] = {0}, wi[OCD_MAX_DIMS] = {0};
        ocd_cuda_coords(p.y, e, yi);
        int64_t g = yi[1] / kg;
        block_sum<Acc> acc;
        xi[0] = yi[0];
        wi[0] = yi[1];
        for (int64_t c = 0; c < cg; c++) {
            xi[1] = g * cg + c;
            wi[1] = c;
            int64_t r[OCD_CONV_MAX_SPATIAL] = {0, 0, 0};
            do {
                bool inside = true;
                for (int d = 0; d < p.nsp; d++) {
                    xi[d + 2] = yi[d + 2] * p.stride[d] - p.pad[d] + r[d] * p.dil[d];
                    inside &= xi[d + 2] >= 0 && xi[d + 2] < p.in[d];
                    wi[d + 2] = tap(p, d, r[d]);
                }
                if (inside)
                    acc.add(ocd_cuda_load_as<Acc>(p.xt, p.xp, ocd_cuda_offset_of(p.x, xi)) * ocd_cuda_load_as<Acc>(p.wt, p.wp, ocd_cuda_offset_of(p.w, wi)));
            } while (next_index(p.nsp, p.filt, r));
        }
        ocd_cuda_conv_finish<Acc>(p.dst, ocd_cuda_offset_of(p.y, yi), yi[1], acc.value());
    }
}

template <typename Acc> __global__ void bwd_data_kernel(conv_params p, int64_t total)
{
    int64_t cg = p.c / p.groups, kg = p.k / p.groups;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t xi[OCD_MAX_DIMS] = {0}, yi[OCD_MAX_DIMS] = {0}, wi[OCD_MAX_DIMS] = {0};
        ocd_cuda_coords(p.x, e, xi);
        int64_t g = xi[1] / cg;
        block_sum<Acc> acc;
        yi[0] = xi[0];
        wi[1] = xi[1] - g * cg;
        for (int64_t k = 0; k < kg; k++) {
            yi[1] = wi[0] = g * kg + k;
            int64_t r[OCD_CONV_MAX_SPATIAL] = {0, 0, 0};
            do {
                bool inside = true;
                for (int d = 0; d < p.nsp; d++) {
                    /* input position i meets output o at tap r when o * stride - pad + r * dilation == i */
                    int64_t t = xi[d + 2] + p.pad[d] - r[d] * p.dil[d];
                    inside &= t >= 0 && t % p.stride[d] == 0 && t / p.stride[d] < p.out[d];
                    yi[d + 2] = t / p.stride[d];
                    wi[d + 2] = tap(p, d, r[d]);
                }
                if (inside)
                    acc.add(ocd_cuda_load_as<Acc>(p.yt, p.yp, ocd_cuda_offset_of(p.y, yi)) * ocd_cuda_load_as<Acc>(p.wt, p.wp, ocd_cuda_offset_of(p.w, wi)));
            } while (next_index(p.nsp, p.filt, r));
        }
        ocd_cuda_conv_finish<Acc>(p.dst, ocd_cuda_offset_of(p.x, xi), xi[1], acc.value());
    }
}

template <typename Acc> __global__ void bwd_filter_kernel(conv_params p, int64_t total)
{
    int64_t cg = p.c / p.groups, kg = p.k / p.groups;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t wi[OCD_MAX_DIMS] = {0}, xi[OCD_MAX_DIMS] = {0}, yi[OCD_MAX_DIMS] = {0};
        ocd_cuda_coords(p.w, e, wi);
        int64_t g = wi[0] / kg;
        block_sum<Acc> acc;
        yi[1] = wi[0];
        xi[1] = g * cg + wi[1];
        for (int64_t n = 0; n < p.n; n++) {
            xi[0] = yi[0] = n;
            int64_t o[OCD_CONV_MAX_SPATIAL] = {0, 0, 0};
            do {
                bool inside = true;
                for (int d = 0; d < p.nsp; d++) {
                    xi[d + 2] = o[d] * p.stride[d] - p.pad[d] + tap(p, d, wi[d + 2]) * p.dil[d];
                    inside &= xi[d + 2] >= 0 && xi[d + 2] < p.in[d];
                    yi[d + 2] = o[d];
                }
                if (inside)
                    acc.add(ocd_cuda_load_as<Acc>(p.yt, p.yp, ocd_cuda_offset_of(p.y, yi)) * ocd_cuda_load_as<Acc>(p.xt, p.xp, ocd_cuda_offset_of(p.x, xi)));
            } while (next_index(p.nsp, p.out, o));
        }
        ocd_cuda_conv_finish<Acc>(p.dst, ocd_cuda_offset_of(p.w, wi), wi[0], acc.value());
    }
}

int blocks_for(int64_t total)
{
    int64_t b = (total + kThreads - 1) / kThreads;
    return (int)(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

template <typename Acc> cudnnStatus_t launch(cudnnHandle_t h, const conv_params &p, int64_t total)
{
    if (p.dir == OCD_CONV_FWD) fwd_kernel<Acc><<<blocks_for(total), kThreads, 0, h->stream>>>(p, total);
    else if (p.dir == OCD_CONV_BWD_DATA) bwd_data_kernel<Acc><<<blocks_for(total), kThreads, 0, h->stream>>>(p, total);
    else bwd_filter_kernel<Acc><<<blocks_for(total), kThreads, 0, h->stream>>>(p, total);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

__global__ void im2col_kernel(conv_params p, int64_t rows, int64_t cols)
{
    int64_t total = rows * cols;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t row = e / cols, col = e % cols;
        int64_t q = row % p.out[1], pp = row / p.out[1] % p.out[0], n = row / (p.out[0] * p.out[1]);
        int64_t s = col % p.filt[1], r = col / p.filt[1] % p.filt[0], c = col / (p.filt[0] * p.filt[1]);
        int64_t xi[OCD_MAX_DIMS] = {n, c, pp * p.stride[0] - p.pad[0] + tap(p, 0, r) * p.dil[0],
                                    q * p.stride[1] - p.pad[1] + tap(p, 1, s) * p.dil[1]};
        double v = 0;
        if (xi[2] >= 0 && xi[2] < p.in[0] && xi[3] >= 0 && xi[3] < p.in[1])
            v = ocd_cuda_load_as<double>(p.xt, p.xp, ocd_cuda_offset_of(p.x, xi));
        ocd_cuda_store_as(p.xt, p.dst.dst, e, v); /* exact: every type converts to double and back */
    }
}

/* One block per channel: each thread sums a strided share of (image, position) pairs, then the
   block reduces in shared memory in a fixed order; with sqp, the sums of squares as well. */
template <typename Acc> __global__ void bias_grad_kernel(ocd_cuda_view dy, cudnnDataType_t t, const void *dyp,
                                                         ocd_cuda_view db, cudnnDataType_t bt, void *dbp, void *sqp,
                                                         double alpha, double beta)
{
    __shared__ Acc part[kThreads], part2[kThreads];
    int64_t k = blockIdx.x, per_image = 1;
    for (int d = 2; d < dy.rank; d++) per_image *= dy.dims[d];
    Acc acc = 0, sq = 0;
    for (int64_t e = threadIdx.x; e < dy.dims[0] * per_image; e += blockDim.x) {
        int64_t idx[OCD_MAX_DIMS] = {0}, rest = e % per_image;
        idx[0] = e / per_image;
        idx[1] = k;
        for (int d = dy.rank - 1; d >= 2; d--) {
            idx[d] = rest % dy.dims[d];
            rest /= dy.dims[d];
        }
        Acc v = ocd_cuda_load_as<Acc>(t, dyp, ocd_cuda_offset_of(dy, idx));
        acc += v;
        sq += v * v;
    }
    part[threadIdx.x] = acc;
    part2[threadIdx.x] = sq;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) {
            part[threadIdx.x] += part[threadIdx.x + s];
            part2[threadIdx.x] += part2[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int64_t bidx[OCD_MAX_DIMS] = {0};
        bidx[1] = k;
        int64_t off = ocd_cuda_offset_of(db, bidx);
        Acc r = (Acc)alpha * part[0], r2 = (Acc)alpha * part2[0];
        if (beta != 0) r += (Acc)beta * ocd_cuda_load_as<Acc>(bt, dbp, off);
        ocd_cuda_store_as(bt, dbp, off, (double)r);
        if (sqp != nullptr) {
            if (beta != 0) r2 += (Acc)beta * ocd_cuda_load_as<Acc>(bt, sqp, off);
            ocd_cuda_store_as(bt, sqp, off, (double)r2);
        }
    }
}

conv_params params_of(const struct ocd_conv_problem *p)
{
    conv_params c;
    memset(&c, 0, sizeof c);
    const struct ocd_conv_shape *s = &p->s;
    c.nsp = s->nsp, c.flip = s->flip, c.dir = p->dir;
    c.n = s->n, c.c = s->c, c.k = s->k, c.groups = s->groups;
    for (int d = 0; d < s->nsp; d++) {
        c.in[d] = s->in[d], c.filt[d] = s->filt[d], c.out[d] = s->out[d];
        c.pad[d] = s->pad[d], c.stride[d] = s->stride[d], c.dil[d] = s->dilation[d];
    }
    c.x = ocd_cuda_view_of(&p->x), c.w = ocd_cuda_view_of(&p->w), c.y = ocd_cuda_view_of(&p->y);
    c.xt = p->x.dtype, c.wt = p->w.dtype, c.yt = p->y.dtype;
    c.xp = p->x_data, c.wp = p->w_data, c.yp = p->y_data;
    c.dst = ocd_cuda_conv_store_of(p);
    return c;
}

} // namespace

extern "C" cudnnStatus_t ocd_cuda_conv_direct(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    conv_params c = params_of(p);
    int64_t total = ocd_view_count(ocd_conv_dst_view(p));
    cudnnDataType_t scalar = ocd_dtype_scalar(p->x.dtype);
    if (scalar == CUDNN_DATA_DOUBLE) return launch<double>(handle, c, total);
    if (scalar == CUDNN_DATA_INT8 || scalar == CUDNN_DATA_UINT8) return launch<int>(handle, c, total);
    return launch<float>(handle, c, total);
}

extern "C" cudnnStatus_t ocd_cuda_conv_im2col(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    conv_params c = params_of(p);
    c.dst.dst = p->y_data;
    int64_t rows = p->s.n * p->s.out[0] * p->s.out[1], cols = p->s.c * p->s.filt[0] * p->s.filt[1];
    im2col_kernel<<<blocks_for(rows * cols), kThreads, 0, handle->stream>>>(c, rows, cols);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t ocd_cuda_conv_bias_grad(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_bias_problem *p = (const struct ocd_conv_bias_problem *)problem;
    ocd_cuda_view dy = ocd_cuda_view_of(&p->dy), db = ocd_cuda_view_of(&p->db);
    unsigned grid = (unsigned)p->dy.dims[1];
    if (p->dy.dtype == CUDNN_DATA_DOUBLE)
        bias_grad_kernel<double><<<grid, kThreads, 0, handle->stream>>>(dy, p->dy.dtype, p->dy_data, db, p->db.dtype,
                                                                         p->db_data, p->sq_data, p->alpha, p->beta);
    else
        bias_grad_kernel<float><<<grid, kThreads, 0, handle->stream>>>(dy, p->dy.dtype, p->dy_data, db, p->db.dtype,
                                                                        p->db_data, p->sq_data, p->alpha, p->beta);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
