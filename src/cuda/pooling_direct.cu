/* pooling_direct.cu: the direct pooling kernels, for every problem that the fixed and tile kernels
   (pooling_fixed.cu, pooling_tile.cu) do not serve: 3-D, windows or rows too large for shared
   memory, other layouts. Threads are laid along the contiguous dim (C when innermost, else W),
   windows scanned in chunks of positions whose loads issue together (scan):
   - forward: one window per thread;
   - backward, windows at most twice the stride (2x2/2, 3x3/2, ...): one thread per output owns
     the inputs of its stride cell and finds, together, the maxima of the at most 2 windows per
     dim that reach into the cell;
   - backward, larger windows: one thread per input gathers from every output that covers it,
     finding each window's maximum again.
   cuda:pooling_nhwc_vec16 gives each thread 16 bytes of channels (8 half or bfloat16, 4 float, 2
   double) loaded as one vector; cuda:pooling_direct takes every other layout, one channel per
   thread. Indices are decoded with ocd_fastdiv (cuda/types.cuh). */
#include "cuda/pooling.cuh"

namespace {

/* Decodes thread index i over (n, c, d, h, w) of the walked tensor (extents e), channels fastest
   (CLAST, in groups of V) or w fastest. */
template <int V, bool CLAST, typename C>
__device__ __forceinline__ void decode(uint32_t i, const pool_args<C> &a, const int e[3], uint32_t &n, uint32_t &c,
                                       int p[3])
{
    uint32_t q;
    if (CLAST) {
        q = ocd_fastdiv_div(a.div_c, i);
        c = (i - q * a.cv) * V;
        i = q;
    }
    q = ocd_fastdiv_div(a.div_w, i);
    p[2] = (int)(i - q * (uint32_t)e[2]);
    i = q;
    q = ocd_fastdiv_div(a.div_h, i);
    p[1] = (int)(i - q * (uint32_t)e[1]);
    i = q;
    q = ocd_fastdiv_div(a.div_d, i);
    p[0] = (int)(i - q * (uint32_t)e[0]);
    i = q;
    if (!CLAST) {
        q = ocd_fastdiv_div(a.div_c, i);
        c = i - q * a.c;
        i = q;
    }
    n = i;
}

/* W windows scanned together, so that their loads are in flight at once: window j starts at
   s[j] (o * stride - pad per dim, possibly outside the input) at scalar offset off[j]. */
template <int W> struct windows {
    bool valid[W];
    int s[W][3];
    int64_t off[W];
};

template <typename C> __device__ __forceinline__ bool inside(const pool_args<C> &a, int d, int h, int w)
{
    return (unsigned)d < (unsigned)a.in[0] && (unsigned)h < (unsigned)a.in[1] && (unsigned)w < (unsigned)a.in[2];
}

/* MAX: acc = the first maximum of each window per channel (pooling.h), at = its position
   (d * in_h + h) * in_w + w, -1 for an empty window. Averages: acc = the sums. The window is
   walked in chunks of CH positions whose loads, for all W windows, issue before any is used. */
template <typename T, int V, int W, typename C>
__device__ __forceinline__ void scan(const T *x, const pool_args<C> &a, const windows<W> &w, C (&acc)[W][V],
                                     int (&at)[W][V])
{
    constexpr int CH = 16 / (W * V) < 1 ? 1 : 16 / (W * V) > 4 ? 4 : 16 / (W * V);
#pragma unroll
    for (int j = 0; j < W; j++)
#pragma unroll
        for (int v = 0; v < V; v++) {
            acc[j][v] = (C)0;
            at[j][v] = -1;
        }
    int vol = a.win[0] * a.win[1] * a.win[2], k[3] = {0, 0, 0};
    for (int t0 = 0; t0 < vol; t0 += CH) {
        C v[CH][W][V];
        int pos[CH][W];
#pragma unroll
        for (int t = 0; t < CH; t++) {
            int64_t delta = k[0] * a.xs[2] + k[1] * a.xs[3] + k[2] * a.xs[4];
#pragma unroll
            for (int j = 0; j < W; j++) {
                int d = w.s[j][0] + k[0], h = w.s[j][1] + k[1], kw = w.s[j][2] + k[2];
                pos[t][j] = -1;
                if (t0 + t >= vol || !w.valid[j] || !inside(a, d, h, kw)) continue;
                pos[t][j] = (d * a.in[1] + h) * a.in[2] + kw;
                ocd_cuda_load_n<T, V>(x + w.off[j] + delta, v[t][j]);
            }
            if (++k[2] == a.win[2]) { /* the next position of the window, row-major */
                k[2] = 0;
                if (++k[1] == a.win[1]) {
                    k[1] = 0;
                    k[0]++;
                }
            }
        }
#pragma unroll
        for (int t = 0; t < CH; t++)
#pragma unroll
            for (int j = 0; j < W; j++) {
                if (pos[t][j] < 0) continue;
#pragma unroll
                for (int u = 0; u < V; u++) {
                    if (!a.max) acc[j][u] += v[t][j][u];
                    else if (at[j][u] < 0 || ocd_pool_better(v[t][j][u], acc[j][u], a.nan)) {
                        acc[j][u] = v[t][j][u];
                        at[j][u] = pos[t][j];
                    }
                }
            }
    }
}

/* Thread t of block b takes outputs b * 256 * W + t + 256 j, j < W. */
template <typename T, int V, bool CLAST, int W>
__global__ void __launch_bounds__(256)
pool_forward(const T *x, T *y, pool_args<typename ocd_compute<T>::type> a, uint32_t total)
{
    typedef typename ocd_compute<T>::type C;
    windows<W> w;
    int64_t yoff[W];
    uint32_t first = blockIdx.x * (256u * W) + threadIdx.x;
#pragma unroll
    for (int j = 0; j < W; j++) {
        uint32_t i = first + 256u * j, n, c;
        int o[3];
        w.valid[j] = i < total;
        if (!w.valid[j]) continue;
        decode<V, CLAST>(i, a, a.out, n, c, o);
        w.off[j] = n * a.xs[0] + c * a.xs[1];
        yoff[j] = n * a.ys[0] + c * a.ys[1];
#pragma unroll
        for (int d = 0; d < 3; d++) {
            w.s[j][d] = o[d] * a.str[d] - a.pad[d];
            w.off[j] += w.s[j][d] * a.xs[2 + d];
            yoff[j] += o[d] * a.ys[2 + d];
        }
    }
    C acc[W][V];
    int at[W][V];
    scan<T, V, W>(x, a, w, acc, at);
#pragma unroll
    for (int j = 0; j < W; j++) {
        if (!w.valid[j]) continue;
        C div = a.max ? (C)1 : divisor(a, w.s[j]);
#pragma unroll
        for (int u = 0; u < V; u++)
            acc[j][u] = a.max ? (at[j][u] < 0 ? (C)0 : acc[j][u]) : div > (C)0 ? acc[j][u] / div : (C)0;
        ocd_cuda_blend_n<T, V>(y + yoff[j], acc[j], a.alpha, a.beta, a.blend);
    }
}

/* The outputs [lo, hi) whose windows cover input i of dim k. */
template <typename C> __device__ __forceinline__ void covering(const pool_args<C> &a, int k, int i, int &lo, int &hi)
{
    int64_t l, h;
    ocd_pool_covering(i, a.str[k], a.pad[k], a.win[k], a.out[k], &l, &h);
    lo = (int)l;
    hi = (int)h;
}

/* Backward for windows no larger than twice the stride: one thread per output o, which writes
   the inputs of its cell, [o * stride - pad, (o + 1) * stride - pad) per dim (the first cell
   reaching down to 0, the last up to the input's end, so that cells partition the input). Those
   inputs lie in the windows of at most 2 outputs per dim (ND along d, 2 along h and w), whose
   maxima are found once, together; each input of the cell is written once. */
template <typename T, int V, bool CLAST, int ND>
__global__ void __launch_bounds__(256)
pool_backward_cells(const T *x, const T *dy, T *dx, pool_args<typename ocd_compute<T>::type> a, uint32_t total)
{
    typedef typename ocd_compute<T>::type C;
    constexpr int W = ND * 4;
    uint32_t i = blockIdx.x * 256u + threadIdx.x, n, c;
    if (i >= total) return;
    int o[3];
    decode<V, CLAST>(i, a, a.out, n, c, o);
    int lo[3], hi[3], first[3], last[3];
#pragma unroll
    for (int d = 0; d < 3; d++) {
        int l = o[d] * a.str[d] - a.pad[d], h = l + a.str[d];
        lo[d] = o[d] == 0 ? 0 : l < 0 ? 0 : l > a.in[d] ? a.in[d] : l;
        hi[d] = o[d] == a.out[d] - 1 ? a.in[d] : h < 0 ? 0 : h > a.in[d] ? a.in[d] : h;
        if (lo[d] >= hi[d]) return; /* an empty cell */
        int unused;
        covering(a, d, lo[d], first[d], unused);
        covering(a, d, hi[d] - 1, unused, last[d]);
    }
    int64_t base_x = n * a.xs[0] + c * a.xs[1], base_y = n * a.ys[0] + c * a.ys[1];
    windows<W> w;
#pragma unroll
    for (int j = 0; j < W; j++) {
        int on[3] = {first[0] + j / 4, first[1] + (j / 2) % 2, first[2] + j % 2};
        w.valid[j] = on[0] < last[0] && on[1] < last[1] && on[2] < last[2];
        w.off[j] = base_x;
#pragma unroll
        for (int d = 0; d < 3; d++) {
            w.s[j][d] = on[d] * a.str[d] - a.pad[d];
            w.off[j] += w.s[j][d] * a.xs[2 + d];
        }
    }
    C val[W][V];
    int at[W][V];
    if (a.max) scan<T, V, W>(x, a, w, val, at);
#pragma unroll
    for (int j = 0; j < W; j++) {
        if (!w.valid[j]) continue;
        int on[3] = {first[0] + j / 4, first[1] + (j / 2) % 2, first[2] + j % 2};
        C g[V];
        ocd_cuda_load_n<T, V>(dy + base_y + on[0] * a.ys[2] + on[1] * a.ys[3] + on[2] * a.ys[4], g);
        C div = a.max ? (C)1 : divisor(a, w.s[j]);
#pragma unroll
        for (int u = 0; u < V; u++) val[j][u] = a.max ? g[u] : div > (C)0 ? g[u] / div : (C)0;
    }
    for (int pd = lo[0]; pd < hi[0]; pd++)
        for (int ph = lo[1]; ph < hi[1]; ph++)
            for (int pw = lo[2]; pw < hi[2]; pw++) {
                int pos = (pd * a.in[1] + ph) * a.in[2] + pw;
                C r[V];
#pragma unroll
                for (int u = 0; u < V; u++) r[u] = (C)0;
#pragma unroll
                for (int j = 0; j < W; j++) {
                    if (!w.valid[j] || (unsigned)(pd - w.s[j][0]) >= (unsigned)a.win[0] ||
                        (unsigned)(ph - w.s[j][1]) >= (unsigned)a.win[1] ||
                        (unsigned)(pw - w.s[j][2]) >= (unsigned)a.win[2])
                        continue;
#pragma unroll
                    for (int u = 0; u < V; u++)
                        if (!a.max || at[j][u] == pos) r[u] += val[j][u];
                }
                ocd_cuda_blend_n<T, V>(dx + base_x + pd * a.xs[2] + ph * a.xs[3] + pw * a.xs[4], r, a.alpha, a.beta,
                                       a.blend);
            }
}

/* Backward for any window: one thread per input, gathering from every output whose window
   covers it (for MAX, finding that window's maximum again). */
template <typename T, int V, bool CLAST>
__global__ void __launch_bounds__(256)
pool_backward_gather(const T *x, const T *dy, T *dx, pool_args<typename ocd_compute<T>::type> a, uint32_t total)
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
    int64_t base_x = n * a.xs[0] + c * a.xs[1];
    const T *dyp = dy + n * a.ys[0] + c * a.ys[1];
    int me = (p[0] * a.in[1] + p[1]) * a.in[2] + p[2];
    C g[V];
#pragma unroll
    for (int j = 0; j < V; j++) g[j] = (C)0;
    int o[3];
    for (o[0] = lo[0]; o[0] < hi[0]; o[0]++)
        for (o[1] = lo[1]; o[1] < hi[1]; o[1]++)
            for (o[2] = lo[2]; o[2] < hi[2]; o[2]++) {
                C d[V];
                ocd_cuda_load_n<T, V>(dyp + o[0] * a.ys[2] + o[1] * a.ys[3] + o[2] * a.ys[4], d);
                windows<1> w;
                w.valid[0] = true;
                w.off[0] = base_x;
#pragma unroll
                for (int k = 0; k < 3; k++) {
                    w.s[0][k] = o[k] * a.str[k] - a.pad[k];
                    w.off[0] += w.s[0][k] * a.xs[2 + k];
                }
                if (a.max) {
                    C best[1][V];
                    int at[1][V];
                    scan<T, V, 1>(x, a, w, best, at);
#pragma unroll
                    for (int j = 0; j < V; j++)
                        if (at[0][j] == me) g[j] += d[j];
                } else {
                    C div = divisor(a, w.s[0]);
#pragma unroll
                    for (int j = 0; j < V; j++) g[j] += d[j] / div;
                }
            }
    ocd_cuda_blend_n<T, V>(dx + base_x + p[0] * a.xs[2] + p[1] * a.xs[3] + p[2] * a.xs[4], g, a.alpha, a.beta, a.blend);
}

/* Whether the cells backward serves the problem: windows at most twice the stride in every dim
   (3 x 3 with stride 2 included); with 16-byte vectors of channels, only when windows do not
   overlap along d (eight windows of vectors would not fit in registers). */
bool cells_apply(const ocd_pooling_problem *p, int v)
{
    for (int i = 0; i < OCD_POOL_DIMS; i++)
        if (p->window[i] > 2 * p->stride[i]) return false;
    return v == 1 || p->window[0] <= p->stride[0];
}

template <typename T, int V, bool CLAST> cudnnStatus_t launch(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    pool_args<typename ocd_compute<T>::type> a = args_of<T, V, CLAST>(p);
    const int *e = p->backward ? a.in : a.out; /* the tensor the threads walk */
    uint32_t total = (uint32_t)(p->n * a.cv * e[0] * e[1] * e[2]);
    const T *x = (const T *)p->x, *dy = (const T *)p->dy;
    if (!p->backward) {
        constexpr int W = 1; /* windows per thread: more hold more registers than they save */
        pool_forward<T, V, CLAST, W><<<ocd_cuda_blocks(total, 256 * W), 256, 0, h->stream>>>(x, (T *)p->y, a, total);
    } else if (cells_apply(p, V)) {
        total = (uint32_t)(p->n * a.cv * a.out[0] * a.out[1] * a.out[2]);
        a.div_w = ocd_fastdiv_make((uint32_t)a.out[2]); /* cells walk the outputs */
        a.div_h = ocd_fastdiv_make((uint32_t)a.out[1]);
        a.div_d = ocd_fastdiv_make((uint32_t)a.out[0]);
        unsigned blocks = ocd_cuda_blocks(total, 256);
        bool deep = p->window[0] > p->stride[0]; /* windows overlap along d: only with V == 1 */
        if constexpr (V == 1)
            if (deep) pool_backward_cells<T, V, CLAST, 2><<<blocks, 256, 0, h->stream>>>(x, dy, (T *)p->dx, a, total);
        if (!deep) pool_backward_cells<T, V, CLAST, 1><<<blocks, 256, 0, h->stream>>>(x, dy, (T *)p->dx, a, total);
    } else {
        pool_backward_gather<T, V, CLAST><<<ocd_cuda_blocks(total, 256), 256, 0, h->stream>>>(x, dy, (T *)p->dx, a, total);
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C" const char *ocd_cuda_pooling_nhwc_vec_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (p->dtype == CUDNN_DATA_INT8) return OCD_REASON_DTYPE; /* int8: the scalar kernel below */
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

extern "C" cudnnStatus_t ocd_cuda_pooling_nhwc_vec(cudnnHandle_t handle, const void *problem, void *ws,
                                                       size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return launch<T, ocd_vec16<T>::N, true>(handle, p);
    });
}

/* int8 forward (MXNet's quantized pooling): one window per thread in float, the result rounded to
   nearest even after alpha and beta and saturated (ocd_cuda_store). */
template <bool CLAST> cudnnStatus_t launch_int8_forward(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    pool_args<float> a = args_of<int8_t, 1, CLAST>(p);
    uint32_t total = (uint32_t)(p->n * a.cv * a.out[0] * a.out[1] * a.out[2]);
    pool_forward<int8_t, 1, CLAST, 1><<<ocd_cuda_blocks(total, 256), 256, 0, h->stream>>>((const int8_t *)p->x,
                                                                                         (int8_t *)p->y, a, total);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t ocd_cuda_pooling(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    bool clast = p->xs[1] == 1 && p->c > 1;
    if (p->dtype == CUDNN_DATA_INT8) {
        if (p->backward) return CUDNN_STATUS_NOT_SUPPORTED; /* the API refuses it first */
        return clast ? launch_int8_forward<true>(handle, p) : launch_int8_forward<false>(handle, p);
    }
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return clast ? launch<T, 1, true>(handle, p) : launch<T, 1, false>(handle, p);
    });
}
