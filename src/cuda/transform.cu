/* transform.cu: CUDA layout changes.

   cuda:transpose_tiled serves the elementwise copies whose two innermost dimensions (in y's
   order) are transposed between x and y: y walks the last with unit stride, x the one before
   it. That is NCHW <-> NHWC (dims (N, HW, C) or (N, C, HW)), on the tiled kernel of
   cuda/transpose.cuh in the widest word the views allow. Bytes moved: x read once, y written
   once (and read once when beta != 0).

   cuda:fold_gather computes each destination element of a padding/folding transform from its
   source (problem/transform.h); these transforms are small and run once per model, so the kernel
   is simple: one thread per element, the data types read at run time. */
#include "problem/ewise.h"

#include "core/dtype.h"
#include "core/handle.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/transpose.cuh"
#include "cuda/types.cuh"
#include "problem/transform.h"

#define THREADS 256

/* ---- the tiled transpose --------------------------------------------------------------------- */

/* What a store of the transpose does (cuda/transpose.cuh's Put): y = alpha * word (+ beta * y). */
template <typename T> struct transpose_put_scaled {
    typedef typename ocd_compute_pair<T, T>::type C;
    ocd_cuda_scales<C> s;
    template <int V> __device__ __forceinline__ void operator()(T *dst, const ocd_vec<T, V> &w) const
    {
        ocd_vec<T, V> out;
        if (s.beta != C(0)) out = *reinterpret_cast<const ocd_vec<T, V> *>(dst);
#pragma unroll
        for (int k = 0; k < V; k++)
            ocd_cuda_ewise_apply<T, C>(OCD_EWISE_COPY, s, &out.v[k], ocd_cuda_load_in<C, T>(&w.v[k]), C(0));
        *reinterpret_cast<ocd_vec<T, V> *>(dst) = out;
    }
};

/* Below this many elements along either side, most of a tile would idle: the strided path
   serves such shapes (a few channels, say) better. */
#define MIN_SIDE 8

extern "C" const char *ocd_cuda_ewise_transpose_applies(cudnnHandle_t handle, const void *problem)
{
    (void)handle;
    const struct ocd_ewise *e = (const struct ocd_ewise *)problem;
    int r = e->rank;
    if (e->op != OCD_EWISE_COPY) return OCD_REASON_MODE;
    if (r < 2 || e->y.strides[r - 1] != 1 || e->a.strides[r - 2] != 1 || e->a.strides[r - 1] <= 1)
        return OCD_REASON_LAYOUT;
    if (e->dims[r - 1] < MIN_SIDE || e->dims[r - 2] < MIN_SIDE) return OCD_REASON_SHAPE;
    if (e->y.dtype != e->a.dtype || !ocd_cuda_pair_supported(e->y.dtype, e->a.dtype)) return OCD_REASON_DTYPE;
    return NULL;
}

template <typename T, int V>
static void launch_transpose(cudnnHandle_t handle, const struct ocd_ewise *e, const ocd_transpose_args &g,
                             uint32_t batches)
{
    typedef typename transpose_put_scaled<T>::C C;
    const transpose_put_scaled<T> put = {ocd_cuda_scales_of<C>(e)};
    const dim3 block(OCD_TRANSPOSE_TILE, OCD_TRANSPOSE_TILE_ROWS);
    ocd_transpose_tiled<T, V><<<g.tiles_p * g.tiles_q * batches, block, 0, handle->stream>>>(
        g, put, (T *)e->y.data, (const T *)e->a.data);
}

extern "C" cudnnStatus_t ocd_cuda_ewise_transpose_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                                size_t workspace_bytes)
{
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_ewise *e = (const struct ocd_ewise *)problem;
    const int r = e->rank;
    ocd_transpose_args g = ocd_transpose_plan((uint32_t)e->dims[r - 2], (uint32_t)e->dims[r - 1], e->a.strides[r - 1],
                                              e->y.strides[r - 2]);
    g.batch_rank = r - 2;
    uint32_t batches = 1;
    for (int d = 0; d < r - 2; d++) {
        g.batch_dims[d] = ocd_fastdiv_make((uint32_t)e->dims[d]);
        g.x_batch[d] = e->a.strides[d];
        g.y_batch[d] = e->y.strides[d];
        batches *= (uint32_t)e->dims[d];
    }
    const size_t size = ocd_dtype_scalar_size(e->y.dtype);
    const int v = ocd_transpose_words(&g, e->a.data, e->y.data, size, size == 1 ? 4 : size <= 4 ? 2 : 1);
    ocd_cuda_dispatch<OCD_CUDA_ALL>(e->y.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        if constexpr (sizeof(T) == 1) {
            if (v == 4) return launch_transpose<T, 4>(handle, e, g, batches);
        }
        if constexpr (sizeof(T) <= 4) {
            if (v >= 2) return launch_transpose<T, 2>(handle, e, g, batches);
        }
        launch_transpose<T, 1>(handle, e, g, batches);
    });
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the fold gather ------------------------------------------------------------------------ */

/* A view for the device: dims, scalar strides and the vector width, as in core/tensor.h; the
   two data types, which may differ (a fold may convert too). */
struct fold_args {
    int rank, vect_src, vect_dst;
    cudnnDataType_t src_type, dst_type;
    bool unfold;
    uint32_t count;
    ocd_fastdiv dst_dims[OCD_MAX_DIMS], factor[OCD_MAX_DIMS], padded_c;
    int64_t src_dims[OCD_MAX_DIMS], src_strides[OCD_MAX_DIMS], dst_strides[OCD_MAX_DIMS];
    int64_t pad_before[OCD_MAX_DIMS];
};

__device__ __forceinline__ int64_t view_offset(int rank, int vect, const int64_t strides[], const int64_t idx[])
{
    int64_t off = 0;
    for (int d = 0; d < rank; d++)
        off += d == 1 && vect > 1 ? (idx[1] / vect) * strides[1] + idx[1] % vect : idx[d] * strides[d];
    return off;
}

/* One kernel for every pair of types: loads and stores switch on the run-time types
   (cuda/types.cuh) and the blend is computed in double, so that a conversion rounds once. */
__global__ void fold_gather(fold_args g, double alpha, double beta, void *y, const void *x)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < g.count; i += gridDim.x * blockDim.x) {
        int64_t o[OCD_MAX_DIMS], src[OCD_MAX_DIMS];
        uint32_t rest = i;
        for (int d = g.rank - 1; d >= 0; d--) {
            uint32_t q = d > 0 ? ocd_fastdiv_div(g.dst_dims[d], rest) : 0;
            o[d] = rest - q * g.dst_dims[d].d;
            rest = q;
        }
        if (g.unfold) {
            uint32_t blk = 0;
            for (int d = 2; d < g.rank; d++) {
                uint32_t xp = (uint32_t)(o[d] + g.pad_before[d]), q = ocd_fastdiv_div(g.factor[d], xp);
                src[d] = q;
                blk = blk * g.factor[d].d + (xp - q * g.factor[d].d);
            }
            src[0] = o[0] + g.pad_before[0];
            src[1] = (int64_t)blk * g.padded_c.d + o[1] + g.pad_before[1];
        } else {
            uint32_t blk = ocd_fastdiv_div(g.padded_c, (uint32_t)o[1]);
            int64_t cp = o[1] - (int64_t)blk * g.padded_c.d;
            for (int d = g.rank - 1; d >= 2; d--) {
                uint32_t q = ocd_fastdiv_div(g.factor[d], blk);
                src[d] = o[d] * g.factor[d].d + (blk - q * g.factor[d].d) - g.pad_before[d];
                blk = q;
            }
            src[0] = o[0] - g.pad_before[0];
            src[1] = cp - g.pad_before[1];
        }
        bool inside = true;
        for (int d = 0; d < g.rank; d++) inside &= src[d] >= 0 && src[d] < g.src_dims[d];
        const int64_t from = view_offset(g.rank, g.vect_src, g.src_strides, src);
        const int64_t to = view_offset(g.rank, g.vect_dst, g.dst_strides, o);
        double v = inside ? alpha * ocd_cuda_load_as<double>(g.src_type, x, from) : 0;
        if (beta != 0) v += beta * ocd_cuda_load_as<double>(g.dst_type, y, to);
        ocd_cuda_store_as(g.dst_type, y, to, v);
    }
}

extern "C" cudnnStatus_t ocd_cuda_fold(cudnnHandle_t handle, const void *problem, void *workspace,
                                       size_t workspace_bytes)
{
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_fold *f = (const struct ocd_fold *)problem;
    fold_args g;
    g.rank = f->dst.rank;
    g.vect_src = f->src.vect;
    g.vect_dst = f->dst.vect;
    g.unfold = f->unfold;
    g.src_type = f->src.dtype;
    g.dst_type = f->dst.dtype;
    g.count = (uint32_t)ocd_view_count(&f->dst);
    g.padded_c = ocd_fastdiv_make((uint32_t)f->padded_c);
    for (int d = 0; d < OCD_MAX_DIMS; d++) {
        bool in = d < g.rank;
        g.dst_dims[d] = ocd_fastdiv_make(in ? (uint32_t)f->dst.dims[d] : 1);
        g.factor[d] = ocd_fastdiv_make(in ? (uint32_t)f->factor[d] : 1);
        g.src_dims[d] = in ? f->src.dims[d] : 1;
        g.src_strides[d] = in ? f->src.strides[d] : 0;
        g.dst_strides[d] = in ? f->dst.strides[d] : 0;
        g.pad_before[d] = in ? f->pad_before[d] : 0;
    }
    int64_t blocks = ((int64_t)g.count + THREADS - 1) / THREADS, most = (int64_t)handle->sm_count * 8;
    unsigned grid = (unsigned)(blocks < most ? blocks : most);
    fold_gather<<<grid, THREADS, 0, handle->stream>>>(g, f->alpha, f->beta, f->y, f->x);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
