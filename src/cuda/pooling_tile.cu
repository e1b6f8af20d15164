/* pooling_tile.cu: the tile pooling kernels, for 2-D problems that the fixed kernels
   (pooling_fixed.cu) do not serve, when a band of rows fits in shared memory. Pooling moves little
   data per output, so what decides its speed is reading x once, coalesced, with many loads in
   flight, and not finding a window's maximum more than once. A block copies the rows of x (and
   dy) its band needs into shared memory, full width, each thread keeping up to 64 bytes of loads
   in flight; threads then compute from shared memory:
   - forward: each thread scans the windows of its outputs and writes them;
   - backward: the block finds the maximum of every window that covers its band of input rows
     once (their positions go to a shared tile), then each thread gathers, per input, the dy of
     the windows whose maximum it is, or of all covering windows when averaging.
   Entries: cuda:pooling_tile_nhwc_vec16 (channels innermost, 16-byte vectors of channels per
   element, a block taking 32 bytes of each pixel; backward only, forward being faster with one
   window a thread, cuda:pooling_nhwc_vec16, and MAX in half and bfloat16 going to
   cuda:pooling_fixed_nhwc_vec16 first) and cuda:pooling_tile_nchw (rows of W contiguous, one
   channel per element, several planes a block when planes are small). */
#include "cuda/pooling.cuh"

namespace {

/* One element of a tile: a 16-byte vector of channels (V > 1) or one scalar. */
template <typename T, int V> struct tile_elem { typedef ocd_vec16<T> type; };
template <typename T> struct tile_elem<T, 1> { typedef T type; };

template <typename T> __device__ __forceinline__ typename ocd_compute<T>::type lane(const T &v, int)
{
    return ocd_cuda_load(&v);
}
template <typename T> __device__ __forceinline__ typename ocd_compute<T>::type lane(const ocd_vec16<T> &v, int k)
{
    return ocd_cuda_load(&v.v[k]);
}

/* What the tile kernels add to pool_args. A block takes image n, a chunk of G = 1 << lg channel
   groups (of V channels; the last chunk may be partial) and a band of `rows` rows of the tensor
   its threads walk (y forward, x backward), full width. Its tiles hold rows of x, dy and the
   maxima's positions, laid out [row][w][group] when channels are innermost (CLAST), else
   [row][group][w], so that both the global loads and the threads' outputs are coalesced. */
struct tile_args {
    int lg, groups, chunks, bands, rows;
    uint32_t o_bytes, a_bytes;   /* bytes of the dy tile and of the positions tile (backward),
                                    16-byte aligned; the x tile follows them */
    int k[2];                    /* per dim (h, w): k * stride >= window - pad, so that the
                                    covering() numerators below are never negative */
    ocd_fastdiv div_iw, div_ow, div_s[2];
};

/* Tile index i -> row r, column w, group g of a tile `width` wide (layout of tile_args). */
template <bool CLAST>
__device__ __forceinline__ void tile_pos(uint32_t i, const ocd_fastdiv &width, int lg, int &r, int &w, int &g)
{
    if (CLAST) {
        g = (int)(i & ((1u << lg) - 1));
        uint32_t pix = i >> lg, q = ocd_fastdiv_div(width, pix);
        r = (int)q;
        w = (int)(pix - q * width.d);
    } else {
        uint32_t q = ocd_fastdiv_div(width, i);
        w = (int)(i - q * width.d);
        g = (int)(q & ((1u << lg) - 1));
        r = (int)(q >> lg);
    }
}

template <bool CLAST> __device__ __forceinline__ uint32_t tile_index(int r, int w, int g, int width, int lg)
{
    return CLAST ? (((uint32_t)r * width + w) << lg) + g : (((uint32_t)r << lg) + g) * width + w;
}

/* Copies `rows` rows of a tensor (from src + base, row stride rs, column stride cs, group
   stride gs) into the tile, `valid` groups of the chunk; each thread keeps U loads in flight. */
template <typename T, int V, bool CLAST>
__device__ __forceinline__ void load_tile(const T *__restrict__ src, int64_t base, int64_t rs, int64_t cs, int64_t gs,
                                          typename tile_elem<T, V>::type *tile, int rows, const ocd_fastdiv &width,
                                          int lg, int valid)
{
    typedef typename tile_elem<T, V>::type E;
    constexpr int U = 64 / sizeof(E) < 1 ? 1 : 64 / sizeof(E) > 16 ? 16 : 64 / sizeof(E);
    uint32_t count = ((uint32_t)rows * width.d) << lg;
    for (uint32_t i0 = threadIdx.x; i0 < count; i0 += 256u * U) {
        E v[U];
        bool ok[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            uint32_t i = i0 + 256u * u;
            int r, w, g;
            tile_pos<CLAST>(i, width, lg, r, w, g);
            ok[u] = i < count && g < valid;
            if (ok[u]) v[u] = *reinterpret_cast<const E *>(src + base + r * rs + w * cs + g * gs);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (ok[u]) tile[i0 + 256u * u] = v[u];
    }
}

/* The outputs [lo, hi) of spatial dim d (1: h, 2: w) whose windows cover input i (as
   ocd_pool_covering, with fast division). */
template <typename C>
__device__ __forceinline__ void tile_covering(const pool_args<C> &a, const tile_args &t, int d, int i, int &lo, int &hi)
{
    int k = t.k[d - 1], bias = k * a.str[d];
    lo = (int)ocd_fastdiv_div(t.div_s[d - 1], (uint32_t)(i + a.pad[d] - a.win[d] + bias)) - k + 1;
    hi = (int)ocd_fastdiv_div(t.div_s[d - 1], (uint32_t)(i + a.pad[d] + bias)) - k + 1;
    lo = lo < 0 ? 0 : lo;
    hi = hi > a.out[d] ? a.out[d] : hi;
}

/* The block's image, chunk and band (chunks vary fastest, so that blocks sharing the sectors of
   a pixel run together). */
__device__ __forceinline__ void tile_block(const tile_args &t, int &n, int &chunk, int &band)
{
    uint32_t b = blockIdx.x;
    chunk = (int)(b % (uint32_t)t.chunks);
    b /= (uint32_t)t.chunks;
    band = (int)(b % (uint32_t)t.bands);
    n = (int)(b / (uint32_t)t.bands);
}

/* The maximum (MAX) or the sum of window (hs, ws) in group g of the x tile, whose first row is
   input row xa; *at gets each lane's position in the window (kh * win_w + kw), -1 when the window
   holds no input. */
template <typename T, int V, bool CLAST, typename C>
__device__ __forceinline__ void tile_window(const typename tile_elem<T, V>::type *tile, const pool_args<C> &a,
                                            const tile_args &t, int xa, int hs, int ws, int g, C (&acc)[V],
                                            int (&at)[V])
{
    int h0 = hs < 0 ? 0 : hs, h1 = hs + a.win[1] < a.in[1] ? hs + a.win[1] : a.in[1];
    int w0 = ws < 0 ? 0 : ws, w1 = ws + a.win[2] < a.in[2] ? ws + a.win[2] : a.in[2];
#pragma unroll
    for (int k = 0; k < V; k++) {
        acc[k] = (C)0;
        at[k] = -1;
    }
    for (int h = h0; h < h1; h++)
        for (int w = w0; w < w1; w++) {
            typename tile_elem<T, V>::type e = tile[tile_index<CLAST>(h - xa, w, g, a.in[2], t.lg)];
            int pos = (h - hs) * a.win[2] + (w - ws);
#pragma unroll
            for (int k = 0; k < V; k++) {
                C v = lane(e, k);
                if (!a.max) acc[k] += v;
                else if (at[k] < 0 || ocd_pool_better(v, acc[k], a.nan)) {
                    acc[k] = v;
                    at[k] = pos;
                }
            }
        }
}

/* Forward: the block copies the x rows its band of outputs reads, then each thread computes
   outputs from shared memory. */
template <typename T, int V, bool CLAST>
__global__ void __launch_bounds__(256)
pool_tile_forward(const T *__restrict__ x, T *__restrict__ y, pool_args<typename ocd_compute<T>::type> a, tile_args t)
{
    typedef typename ocd_compute<T>::type C;
    typedef typename tile_elem<T, V>::type E;
    extern __shared__ __align__(16) unsigned char smem[];
    E *tile = reinterpret_cast<E *>(smem);
    int n, chunk, band;
    tile_block(t, n, chunk, band);
    int g0 = chunk << t.lg, valid = t.groups - g0 < (1 << t.lg) ? t.groups - g0 : 1 << t.lg;
    int o0 = band * t.rows, o1 = o0 + t.rows < a.out[1] ? o0 + t.rows : a.out[1];
    int xa = o0 * a.str[1] - a.pad[1], xb = (o1 - 1) * a.str[1] - a.pad[1] + a.win[1];
    xa = xa < 0 ? 0 : xa;
    xb = xb > a.in[1] ? a.in[1] : xb;
    int64_t gs = (int64_t)V * a.xs[1];
    if (xb > xa)
        load_tile<T, V, CLAST>(x, n * a.xs[0] + g0 * gs + xa * a.xs[3], a.xs[3], a.xs[4], gs, tile, xb - xa, t.div_iw,
                               t.lg, valid);
    __syncthreads();
    uint32_t count = ((uint32_t)(o1 - o0) * (uint32_t)a.out[2]) << t.lg;
    for (uint32_t j = threadIdx.x; j < count; j += 256u) {
        int r, ow, g;
        tile_pos<CLAST>(j, t.div_ow, t.lg, r, ow, g);
        if (g >= valid) continue;
        int oh = o0 + r, s[3] = {0, oh * a.str[1] - a.pad[1], ow * a.str[2] - a.pad[2]};
        C acc[V];
        int at[V];
        tile_window<T, V, CLAST>(tile, a, t, xa, s[1], s[2], g, acc, at);
        C div = a.max ? (C)1 : divisor(a, s);
#pragma unroll
        for (int k = 0; k < V; k++)
            acc[k] = a.max ? (at[k] < 0 ? (C)0 : acc[k]) : div > (C)0 ? acc[k] / div : (C)0;
        ocd_cuda_blend_n<T, V>(y + n * a.ys[0] + (g0 + g) * (int64_t)V * a.ys[1] + oh * a.ys[3] + ow * a.ys[4], acc,
                               a.alpha, a.beta, a.blend);
    }
}

/* Backward: the block owns a band of input rows. It copies dy of every output whose window
   covers the band and, for MAX, the x rows of those windows; finds each window's maximum once
   (its position goes to a tile of int16); then each thread gathers, per input, the gradient of
   the windows whose maximum it is (or, averaging, of every window covering it) and writes dx
   once. The sum runs over outputs in row-major order, as the host backend's. */
template <typename T, int V, bool CLAST>
__global__ void __launch_bounds__(256)
pool_tile_backward(const T *__restrict__ x, const T *__restrict__ dy, T *__restrict__ dx,
                   pool_args<typename ocd_compute<T>::type> a, tile_args t)
{
    typedef typename ocd_compute<T>::type C;
    typedef typename tile_elem<T, V>::type E;
    extern __shared__ __align__(16) unsigned char smem[];
    E *dyt = reinterpret_cast<E *>(smem);
    int16_t *arg = reinterpret_cast<int16_t *>(smem + t.o_bytes);
    E *xt = reinterpret_cast<E *>(smem + t.o_bytes + t.a_bytes);
    int n, chunk, band;
    tile_block(t, n, chunk, band);
    int g0 = chunk << t.lg, valid = t.groups - g0 < (1 << t.lg) ? t.groups - g0 : 1 << t.lg;
    int h0 = band * t.rows, h1 = h0 + t.rows < a.in[1] ? h0 + t.rows : a.in[1];
    int oa, ob, unused;
    tile_covering(a, t, 1, h0, oa, unused);
    tile_covering(a, t, 1, h1 - 1, unused, ob);
    int xa = oa * a.str[1] - a.pad[1], xb = (ob - 1) * a.str[1] - a.pad[1] + a.win[1];
    xa = xa < 0 ? 0 : xa;
    xb = xb > a.in[1] ? a.in[1] : xb;
    int64_t gsx = (int64_t)V * a.xs[1], gsy = (int64_t)V * a.ys[1];
    if (ob > oa) {
        load_tile<T, V, CLAST>(dy, n * a.ys[0] + g0 * gsy + oa * a.ys[3], a.ys[3], a.ys[4], gsy, dyt, ob - oa, t.div_ow,
                               t.lg, valid);
        if (a.max && xb > xa)
            load_tile<T, V, CLAST>(x, n * a.xs[0] + g0 * gsx + xa * a.xs[3], a.xs[3], a.xs[4], gsx, xt, xb - xa,
                                   t.div_iw, t.lg, valid);
    }
    __syncthreads();
    if (a.max) {
        uint32_t count = ((uint32_t)(ob > oa ? ob - oa : 0) * (uint32_t)a.out[2]) << t.lg;
        for (uint32_t j = threadIdx.x; j < count; j += 256u) {
            int r, ow, g;
            tile_pos<CLAST>(j, t.div_ow, t.lg, r, ow, g);
            if (g >= valid) continue;
            C acc[V];
            int at[V];
            tile_window<T, V, CLAST>(xt, a, t, xa, (oa + r) * a.str[1] - a.pad[1], ow * a.str[2] - a.pad[2], g, acc,
                                     at);
#pragma unroll
            for (int k = 0; k < V; k++) arg[j * V + k] = (int16_t)at[k];
        }
        __syncthreads();
    }
    uint32_t count = ((uint32_t)(h1 - h0) * (uint32_t)a.in[2]) << t.lg;
    for (uint32_t i = threadIdx.x; i < count; i += 256u) {
        int r, w, g;
        tile_pos<CLAST>(i, t.div_iw, t.lg, r, w, g);
        if (g >= valid) continue;
        int h = h0 + r, lo[2], hi[2];
        tile_covering(a, t, 1, h, lo[0], hi[0]);
        tile_covering(a, t, 2, w, lo[1], hi[1]);
        C sum[V];
#pragma unroll
        for (int k = 0; k < V; k++) sum[k] = (C)0;
        for (int oh = lo[0]; oh < hi[0]; oh++)
            for (int ow = lo[1]; ow < hi[1]; ow++) {
                int s[3] = {0, oh * a.str[1] - a.pad[1], ow * a.str[2] - a.pad[2]};
                uint32_t j = tile_index<CLAST>(oh - oa, ow, g, a.out[2], t.lg);
                E e = dyt[j];
                if (a.max) {
                    int pos = (h - s[1]) * a.win[2] + (w - s[2]);
#pragma unroll
                    for (int k = 0; k < V; k++)
                        if (arg[j * V + k] == pos) sum[k] += lane(e, k);
                } else {
                    C div = divisor(a, s); /* >= 1: the window holds input (h, w) */
#pragma unroll
                    for (int k = 0; k < V; k++) sum[k] += lane(e, k) / div;
                }
            }
        ocd_cuda_blend_n<T, V>(dx + n * a.xs[0] + (g0 + g) * gsx + h * a.xs[3] + w * a.xs[4], sum, a.alpha, a.beta,
                               a.blend);
    }
}

/* ---- the tile kernels' plan ------------------------------------------------------------------- */

constexpr int64_t TILE_SMEM = 40 * 1024; /* under the 48 KiB a block gets without opting in */

/* How a tile kernel runs a problem: G = 1 << lg channel groups a block, bands of `rows` rows of
   the walked tensor, and the bytes of each tile. The entries are planned (core/impl.h): this is
   their plan, made once per problem. */
struct tile_plan {
    int lg, rows, bands, chunks, groups;
    int64_t o_bytes, a_bytes, x_bytes;
};
OCD_IMPL_PLAN_FITS(tile_plan);

int64_t align16(int64_t b)
{
    return (b + 15) & ~(int64_t)15;
}

/* The tiles' bytes for bands of `rows` rows, from the most rows a band can need: forward, its
   outputs read (rows - 1) * stride + window input rows; backward, rows inputs are covered by at
   most (rows - 1 + window + stride - 1) / stride outputs (floor(a / s) - floor(b / s) <=
   floor((a - b + s - 1) / s)), whose windows read as many input rows as a forward band. */
int64_t tile_bytes(const ocd_pooling_problem *p, int v, int lg, int64_t rows, tile_plan *pl)
{
    int64_t s = p->stride[1], win = p->window[1], orows = 0, xrows = (rows - 1) * s + win;
    bool max = p->mode == CUDNN_POOLING_MAX || p->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    if (p->backward) {
        orows = OCD_MIN((rows - 1 + win + s - 1) / s, p->out[1]);
        xrows = max ? (orows - 1) * s + win : 0;
    }
    xrows = OCD_MIN(xrows, p->in[1]);
    int64_t elem = (int64_t)ocd_dtype_scalar_size(p->dtype) * v << lg;
    pl->o_bytes = align16(orows * p->out[2] * elem);
    pl->a_bytes = p->backward && max ? align16(orows * p->out[2] * ((int64_t)v << lg) * 2) : 0;
    pl->x_bytes = align16(xrows * p->in[2] * elem);
    return pl->o_bytes + pl->a_bytes + pl->x_bytes;
}

/* Plans a 2-D problem with groups of v channels for the tile kernels; NULL, or why they do not
   serve it. A block takes 32 bytes of each pixel when channels are innermost (a whole sector),
   and as many rows as fit in TILE_SMEM; a block that would then hold a whole plane of fewer than
   512 positions takes more groups, so that small images still fill it. Wide images take 16 bytes
   of each pixel when 32 would not fit one row. */
const char *tile_plan_of(const ocd_pooling_problem *p, int v, tile_plan *pl)
{
    if (p->in[0] != 1 || p->out[0] != 1 || p->window[0] != 1 || p->pad[0] != 0) return OCD_REASON_RANK;
    for (int i = 1; i < OCD_POOL_DIMS; i++) /* all window arithmetic fits in int */
        if (p->out[i] * p->stride[i] + p->in[i] + p->window[i] + (p->pad[i] < 0 ? -p->pad[i] : p->pad[i]) +
                p->stride[i] >= (int64_t)1 << 30)
            return OCD_REASON_SHAPE;
    if (p->window[1] * p->window[2] > INT16_MAX) return "window positions do not fit in 16 bits";
    int64_t walked = p->backward ? p->in[1] : p->out[1], width = p->backward ? p->in[2] : p->out[2];
    pl->groups = (int)(p->c / v);
    pl->lg = v > 1 && pl->groups % 2 == 0 && tile_bytes(p, v, 1, 1, pl) <= TILE_SMEM ? 1 : 0;
    if (tile_bytes(p, v, pl->lg, 1, pl) > TILE_SMEM) return "a band of one row does not fit in shared memory";
    int64_t lo = 1, hi = walked;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (tile_bytes(p, v, pl->lg, mid, pl) <= TILE_SMEM) lo = mid;
        else hi = mid - 1;
    }
    while (lo == walked && (walked * width << pl->lg) < 512 && (1 << pl->lg) < pl->groups &&
           tile_bytes(p, v, pl->lg + 1, lo, pl) <= TILE_SMEM)
        pl->lg++;
    tile_bytes(p, v, pl->lg, lo, pl);
    pl->rows = (int)lo;
    pl->bands = (int)((walked + lo - 1) / lo);
    pl->chunks = (pl->groups + (1 << pl->lg) - 1) >> pl->lg;
    return NULL;
}

template <typename T, int V, bool CLAST>
cudnnStatus_t launch_tile(cudnnHandle_t h, const ocd_pooling_problem *p, const tile_plan &pl)
{
    typedef typename ocd_compute<T>::type C;
    pool_args<C> a = args_of<T, V, CLAST>(p);
    tile_args t;
    t.lg = pl.lg;
    t.groups = pl.groups;
    t.chunks = pl.chunks;
    t.bands = pl.bands;
    t.rows = pl.rows;
    t.o_bytes = (uint32_t)pl.o_bytes;
    t.a_bytes = (uint32_t)pl.a_bytes;
    for (int d = 1; d < OCD_POOL_DIMS; d++) {
        int need = p->window[d] - p->pad[d];
        t.k[d - 1] = need > 0 ? (need + p->stride[d] - 1) / p->stride[d] : 0;
        t.div_s[d - 1] = ocd_fastdiv_make((uint32_t)p->stride[d]);
    }
    t.div_iw = ocd_fastdiv_make((uint32_t)p->in[2]);
    t.div_ow = ocd_fastdiv_make((uint32_t)p->out[2]);
    unsigned blocks = (unsigned)(p->n * pl.bands * pl.chunks); /* < 2^31: at most one per element */
    size_t smem = (size_t)(pl.o_bytes + pl.a_bytes + pl.x_bytes);
    if (p->backward)
        pool_tile_backward<T, V, CLAST><<<blocks, 256, smem, h->stream>>>((const T *)p->x, (const T *)p->dy, (T *)p->dx,
                                                                          a, t);
    else
        pool_tile_forward<T, V, CLAST><<<blocks, 256, smem, h->stream>>>((const T *)p->x, (T *)p->y, a, t);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

const char *plan_nhwc(cudnnHandle_t handle, const void *problem, void *plan)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (!p->backward)
        return "forward: the one-window-per-thread vec16 kernel is faster on channels-last data";
    const char *why = ocd_cuda_pooling_nhwc_vec_applies(handle, problem);
    return why != NULL ? why : tile_plan_of(p, 16 / (int)ocd_dtype_scalar_size(p->dtype), (tile_plan *)plan);
}

cudnnStatus_t run_nhwc(cudnnHandle_t handle, const void *problem, const void *plan, void *ws, size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return launch_tile<T, ocd_vec16<T>::N, true>(handle, p, *(const tile_plan *)plan);
    });
}

const char *plan_nchw(cudnnHandle_t handle, const void *problem, void *plan)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (p->dtype == CUDNN_DATA_INT8) return OCD_REASON_DTYPE; /* int8: cuda:pooling_direct */
    if (p->xs[4] != 1 || p->ys[4] != 1) return OCD_REASON_LAYOUT; /* rows of W must be contiguous */
    return tile_plan_of(p, 1, (tile_plan *)plan);
}

cudnnStatus_t run_nchw(cudnnHandle_t handle, const void *problem, const void *plan, void *ws, size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return launch_tile<T, 1, false>(handle, p, *(const tile_plan *)plan);
    });
}

} // namespace

extern "C" const struct ocd_impl_planned ocd_cuda_pooling_tile_nhwc_planned = {plan_nhwc, NULL, run_nhwc};
extern "C" const struct ocd_impl_planned ocd_cuda_pooling_tile_nchw_planned = {plan_nchw, NULL, run_nchw};
