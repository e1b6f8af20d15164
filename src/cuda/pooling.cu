/* pooling.cu: pooling forward and backward on the GPU, with the window math of ops/pooling.h.

   Forward: one thread per output, scanning its window. Backward gathers: one thread per input,
   summing the dy of every output whose window covers it (for MAX, only those whose window's
   first maximum it is, found again in x), then blending into dx. No atomics: dx is written once,
   deterministically, for MAX and MAX_DETERMINISTIC alike. Threads are laid along the contiguous
   dim for coalesced access: along C when C is innermost (NHWC), along W otherwise (NCHW).
   Entries: cuda:pooling_nhwc_vec16 gives each thread 16 bytes of channels (8 half or bfloat16,
   4 float, 2 double) loaded as one vector; cuda:pooling_direct takes every other layout, one
   channel per thread. Indices are decoded with ocd_fastdiv. Bytes moved: forward x and y;
   backward dy, dx and, for MAX, x (y is not read). */
#include <type_traits>

#include "core/dtype.h"
#include "core/reasons.h"
#include "cuda/walk.cuh"
#include "ops/pooling.h"

namespace {

template <typename C> struct pool_args {
    uint32_t c, cv;                       /* channels, and channel groups of V */
    int in[OCD_POOL_DIMS], out[OCD_POOL_DIMS], win[OCD_POOL_DIMS], pad[OCD_POOL_DIMS], str[OCD_POOL_DIMS];
    int64_t xs[5], ys[5];
    ocd_fastdiv div_c, div_w, div_h, div_d; /* of cv or c, and of the walked tensor's d, h, w */
    C alpha, beta, volume;
    bool blend, nan, max, exclude;
};

/* Decodes thread index i over (n, c, d, h, w) of the walked tensor (extents e), channels fastest
   (CLAST, in groups of V) or w fastest. */
template <int V, bool CLAST, typename C>
__device__ __forceinline__ void decode(uint32_t i, const pool_args<C> &a, const int e[3], uint32_t &n, uint32_t &c,
                                       int p[3])
{
    uint32_t q;
    if (CLAST) {
        q = ocd_fastdiv_q(i, a.div_c);
        c = (i - q * a.cv) * V;
        i = q;
    }
    q = ocd_fastdiv_q(i, a.div_w);
    p[2] = (int)(i - q * (uint32_t)e[2]);
    i = q;
    q = ocd_fastdiv_q(i, a.div_h);
    p[1] = (int)(i - q * (uint32_t)e[1]);
    i = q;
    q = ocd_fastdiv_q(i, a.div_d);
    p[0] = (int)(i - q * (uint32_t)e[0]);
    i = q;
    if (!CLAST) {
        q = ocd_fastdiv_q(i, a.div_c);
        c = i - q * a.c;
        i = q;
    }
    n = i;
}

/* V consecutive channels at p, channel stride 1 when V > 1. */
template <typename T, int V>
__device__ __forceinline__ void load_c(const T *p, int64_t cstride, typename ocd_compute<T>::type *out)
{
    if (V == 1) {
        out[0] = ocd_cuda_load(p);
    } else {
        ocd_vec16<T> v = *reinterpret_cast<const ocd_vec16<T> *>(p);
#pragma unroll
        for (int k = 0; k < V; k++) out[k] = ocd_cuda_load(&v.v[k]);
    }
}

template <typename T, int V, typename C>
__device__ __forceinline__ void store_c(T *p, const C *r, const pool_args<C> &a)
{
    if (V == 1) {
        ocd_cuda_blend(p, r[0], a.alpha, a.beta, a.blend);
    } else {
        ocd_vec16<T> v;
        if (a.blend) v = *reinterpret_cast<const ocd_vec16<T> *>(p);
#pragma unroll
        for (int k = 0; k < V; k++) ocd_cuda_blend(&v.v[k], r[k], a.alpha, a.beta, a.blend);
        *reinterpret_cast<ocd_vec16<T> *>(p) = v;
    }
}

struct window {
    int lo[OCD_POOL_DIMS], hi[OCD_POOL_DIMS];
};

template <typename C> __device__ __forceinline__ window window_of(const pool_args<C> &a, const int o[3])
{
    window w;
#pragma unroll
    for (int i = 0; i < OCD_POOL_DIMS; i++) {
        int s = o[i] * a.str[i] - a.pad[i];
        w.lo[i] = s < 0 ? 0 : s;
        w.hi[i] = s + a.win[i] < a.in[i] ? s + a.win[i] : a.in[i];
    }
    return w;
}

template <typename C> __device__ __forceinline__ C divisor(const pool_args<C> &a, const window &w)
{
    if (!a.exclude) return a.volume;
    int n = 1;
#pragma unroll
    for (int i = 0; i < OCD_POOL_DIMS; i++) n *= w.hi[i] > w.lo[i] ? w.hi[i] - w.lo[i] : 0;
    return (C)n;
}

/* The window's maxima per channel and their positions (d * in_h + h) * in_w + w; false when the
   window is empty. */
template <typename T, int V, typename C>
__device__ __forceinline__ bool window_max(const T *xp, const pool_args<C> &a, const window &w, C *best, int *at)
{
    bool found = false;
    for (int d = w.lo[0]; d < w.hi[0]; d++)
        for (int h = w.lo[1]; h < w.hi[1]; h++)
            for (int k = w.lo[2]; k < w.hi[2]; k++) {
                C v[V];
                load_c<T, V>(xp + d * a.xs[2] + h * a.xs[3] + k * a.xs[4], a.xs[1], v);
                int pos = (d * a.in[1] + h) * a.in[2] + k;
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (!found || ocd_pool_better(v[j], best[j], a.nan)) {
                        best[j] = v[j];
                        at[j] = pos;
                    }
                found = true;
            }
    return found;
}

template <typename T, int V, bool CLAST>
__global__ void __launch_bounds__(256)
pool_forward(const T *x, T *y, pool_args<typename ocd_compute<T>::type> a, uint32_t total)
{
    typedef typename ocd_compute<T>::type C;
    uint32_t i = blockIdx.x * 256u + threadIdx.x;
    if (i >= total) return;
    uint32_t n, c;
    int o[3];
    decode<V, CLAST>(i, a, a.out, n, c, o);
    window w = window_of(a, o);
    const T *xp = x + n * a.xs[0] + c * a.xs[1];
    C r[V];
    if (a.max) {
        int at[V];
        if (!window_max<T, V>(xp, a, w, r, at))
#pragma unroll
            for (int j = 0; j < V; j++) r[j] = (C)0;
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) r[j] = (C)0;
        for (int d = w.lo[0]; d < w.hi[0]; d++)
            for (int h = w.lo[1]; h < w.hi[1]; h++)
                for (int k = w.lo[2]; k < w.hi[2]; k++) {
                    C v[V];
                    load_c<T, V>(xp + d * a.xs[2] + h * a.xs[3] + k * a.xs[4], a.xs[1], v);
#pragma unroll
                    for (int j = 0; j < V; j++) r[j] += v[j];
                }
        C div = divisor(a, w);
#pragma unroll
        for (int j = 0; j < V; j++) r[j] = div > (C)0 ? r[j] / div : (C)0;
    }
    store_c<T, V>(y + n * a.ys[0] + c * a.ys[1] + o[0] * a.ys[2] + o[1] * a.ys[3] + o[2] * a.ys[4], r, a);
}

/* The outputs [lo, hi) whose windows cover input i of dim k. */
template <typename C> __device__ __forceinline__ void covering(const pool_args<C> &a, int k, int i, int &lo, int &hi)
{
    int64_t l, h;
    ocd_pool_covering(i, a.str[k], a.pad[k], a.win[k], a.out[k], &l, &h);
    lo = (int)l;
    hi = (int)h;
}

template <typename T, int V, bool CLAST>
__global__ void __launch_bounds__(256)
pool_backward(const T *x, const T *dy, T *dx, pool_args<typename ocd_compute<T>::type> a, uint32_t total)
{
    typedef typename ocd_compute<T>::type C;
    uint32_t i = blockIdx.x * 256u + threadIdx.x;
    if (i >= total) return;
    uint32_t n, c;
    int p[3];
    decode<V, CLAST>(i, a, a.in, n, c, p);
    int lo[3], hi[3];
#pragma unroll
    for (int k = 0; k < 3; k++) covering(a, k, p[k], lo[k], hi[k]);
    const T *xp = x + n * a.xs[0] + c * a.xs[1], *dyp = dy + n * a.ys[0] + c * a.ys[1];
    int me = (p[0] * a.in[1] + p[1]) * a.in[2] + p[2];
    C g[V];
#pragma unroll
    for (int j = 0; j < V; j++) g[j] = (C)0;
    int o[3];
    for (o[0] = lo[0]; o[0] < hi[0]; o[0]++)
        for (o[1] = lo[1]; o[1] < hi[1]; o[1]++)
            for (o[2] = lo[2]; o[2] < hi[2]; o[2]++) {
                C d[V];
                load_c<T, V>(dyp + o[0] * a.ys[2] + o[1] * a.ys[3] + o[2] * a.ys[4], a.ys[1], d);
                window w = window_of(a, o);
                if (a.max) {
                    C best[V];
                    int at[V];
#pragma unroll
                    for (int j = 0; j < V; j++) at[j] = -1;
                    window_max<T, V>(xp, a, w, best, at);
#pragma unroll
                    for (int j = 0; j < V; j++)
                        if (at[j] == me) g[j] += d[j];
                } else {
                    C div = divisor(a, w);
#pragma unroll
                    for (int j = 0; j < V; j++) g[j] += d[j] / div;
                }
            }
    store_c<T, V>(dx + n * a.xs[0] + c * a.xs[1] + p[0] * a.xs[2] + p[1] * a.xs[3] + p[2] * a.xs[4], g, a);
}

template <typename T, int V, bool CLAST> cudnnStatus_t launch(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    typedef typename ocd_compute<T>::type C;
    pool_args<C> a;
    a.c = (uint32_t)p->c;
    a.cv = (uint32_t)(p->c / V);
    for (int i = 0; i < OCD_POOL_DIMS; i++) {
        a.in[i] = (int)p->in[i];
        a.out[i] = (int)p->out[i];
        a.win[i] = p->window[i];
        a.pad[i] = p->pad[i];
        a.str[i] = p->stride[i];
    }
    for (int i = 0; i < 5; i++) {
        a.xs[i] = p->xs[i];
        a.ys[i] = p->ys[i];
    }
    const int *e = p->backward ? a.in : a.out; /* the tensor the threads walk */
    a.div_c = ocd_fastdiv_of(CLAST ? a.cv : a.c);
    a.div_w = ocd_fastdiv_of((uint32_t)e[2]);
    a.div_h = ocd_fastdiv_of((uint32_t)e[1]);
    a.div_d = ocd_fastdiv_of((uint32_t)e[0]);
    a.alpha = (C)p->alpha;
    a.beta = (C)p->beta;
    a.volume = (C)((double)p->window[0] * p->window[1] * p->window[2]);
    a.blend = p->beta != 0;
    a.nan = p->propagate_nan;
    a.max = p->mode == CUDNN_POOLING_MAX || p->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    a.exclude = p->mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    uint32_t total = (uint32_t)(p->n * a.cv * e[0] * e[1] * e[2]);
    unsigned blocks = ocd_cuda_blocks(total, 256);
    if (p->backward)
        pool_backward<T, V, CLAST><<<blocks, 256, 0, h->stream>>>((const T *)p->x, (const T *)p->dy, (T *)p->dx, a,
                                                                  total);
    else
        pool_forward<T, V, CLAST><<<blocks, 256, 0, h->stream>>>((const T *)p->x, (T *)p->y, a, total);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

const ocd_pooling_problem *problem_of(const void *problem)
{
    return (const ocd_pooling_problem *)problem;
}

} // namespace

extern "C" const char *ocd_pooling_applies_cuda_nhwc_vec(cudnnHandle_t handle, const void *problem)
{
    const ocd_pooling_problem *p = problem_of(problem);
    int64_t n = 16 / (int64_t)ocd_dtype_scalar_size(p->dtype);
    if (p->xs[1] != 1 || p->ys[1] != 1) return OCD_REASON_LAYOUT;
    if (p->c % n != 0) return "channels are not a multiple of a 16-byte vector";
    for (int i = 0; i < 5; i++)
        if (i != 1 && (p->xs[i] % n != 0 || p->ys[i] % n != 0)) return OCD_REASON_ALIGNMENT;
    const void *ptrs[] = {p->x, p->y, p->dy, p->dx};
    for (int i = 0; i < 4; i++)
        if (ptrs[i] != NULL && !ocd_cuda_aligned16(ptrs[i])) return OCD_REASON_ALIGNMENT;
    return NULL;
}

extern "C" cudnnStatus_t ocd_pooling_run_cuda_nhwc_vec(cudnnHandle_t handle, const void *problem, void *ws,
                                                       size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    return ocd_cuda_dispatch(p->dtype, [&](auto *tag) {
        typedef typename std::remove_pointer<decltype(tag)>::type T;
        return launch<T, ocd_vec16<T>::N, true>(handle, p);
    });
}

extern "C" cudnnStatus_t ocd_pooling_run_cuda(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    bool clast = p->xs[1] == 1 && p->c > 1;
    return ocd_cuda_dispatch(p->dtype, [&](auto *tag) {
        typedef typename std::remove_pointer<decltype(tag)>::type T;
        return clast ? launch<T, 1, true>(handle, p) : launch<T, 1, false>(handle, p);
    });
}
