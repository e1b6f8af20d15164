/* pooling.cu: pooling forward and backward on the GPU, with the window math of ops/pooling.h.
   Backward writes dx once, deterministically (MAX and MAX_DETERMINISTIC alike), without atomics.

   The common windows, 3x3 stride 2 pad 1 and 2x2 stride 2 pad 0 (2-D, float, half, bfloat16),
   go first to the fixed kernels (NCHW: float only), compiled for the window: measured on the
   H200, the general kernels below were bound by instructions (about 580 a fp32 output: index
   decoding, shared-memory index math and the NaN-aware tie rule per element), not by memory. With
   every offset a constant, a forward thread takes RH rows of R adjacent outputs along W and reads
   each input row of their windows once (rows that vertically adjacent windows share, once), as
   one span of columns held in registers (the middle of the span as 16-byte loads when W is
   contiguous and rows are aligned), every load issued without a branch (rows and columns outside
   the image read clamped into it); a maximum is fmax (max.NaN when NaN propagates), taken per
   input row over each window's columns, then over the window's rows, and on 16-bit channels as
   packed pairs (the previous forward, one row of outputs a thread, each row's loads behind a
   branch, measured 56% of copy bandwidth on 64x256x56x56 3x3/2 fp32, about 170 instructions an
   output; this one's SASS, about 35 fp32 and 14 16-bit NHWC).
   Backward NCHW, a thread owns the inputs of R = 2 stride cells along W, one 16-byte vector of
   floats a row, and walks down a few steps of S rows: each window row reaching a step is found
   once, separably: each x row gives per window its best and first position (a row that two window
   rows share, once), then the window's rows are compared in order, the last window row kept for
   the next step. The search cut the ALU-pipe instructions by a third (the kernel was bound by
   that pipe), and it needs every x row of a window row loaded before any is compared (each row's
   loads behind the previous row's compares: 0.169 ms; loaded first, 0.147 ms). The loads are
   software-pipelined: a step's x rows and dy go into registers during the step before, once its
   compares are done and before its sums and stores, and the step after's are prefetched into L1
   (0.147 -> 0.131 ms, 75% -> 85% of copy, on 64x256x56x56 3x3/2 fp32, H200; prefetching 1 or 3
   steps ahead measured 0.138 and 0.133, 4 stride cells a thread 0.157). What depends only on the
   thread's columns is found once, and rows outside the image are read without a branch. Then
   each input sums the gradient of the windows whose maximum it is, which window positions it can
   be being a compile-time constant, and dx rows are written once, as vectors, without atomics
   (the first kernel, 8 columns a thread with scalar stores and each window row's rows read
   twice, measured 0.58 ms; windows scanned whole, 0.158 ms; cuDNN 0.21 ms). Entries:
   cuda:pooling_fixed_nchw (rows of W contiguous, 4 x 4 outputs forward; float only) and
   cuda:pooling_fixed_nhwc_vec16 (16-byte vectors of channels per thread, 2 x 2 outputs forward;
   backward, MAX in half and bfloat16 only: one stride cell of 8 channels a thread, its windows
   found separably two channels an instruction, the first column of a row's maximum by packed
   not-equal compares and the rows' positions moved by arithmetic on the FMA pipe, since compares
   and selects take the ALU pipe the kernel was bound by: 442 -> 217 ALU instructions a step,
   0.084 -> 0.070 ms, 66% -> 79% of copy on 64x256x56x56 f16 3x3/2 (an L1 prefetch of the next
   step measured 0.072, 4 channels a thread at 80 registers and 3 blocks an SM 0.094, with the
   prefetch 0.076, eighth session; the next step's x rows copied a step ahead into the thread's
   own shared memory by cp.async, 0.0692-0.0696 against 0.0694-0.0696: the loads' latency is not
   what bounds it, tenth session). Fewer instructions helped: with alpha 1 and beta 0, an input
   that at most 2 windows reach (3 of a 3x3/2 cell's 4) takes their gradients added as pairs of
   T, bit for bit the float sum rounded once (fixed_pair_sum_direct), 0.0697-0.0702 -> 0.0683-0.0686
   ms (tenth session; rounding the float sums two at a time measured the same). It is launched
   early (cuda/launch.cuh: its blocks resident while the kernel ahead drains), 0.0679-0.0686 ->
   0.0668-0.0673 ms. Each window found once instead of by both strips it reaches, its positions
   passed on through shared memory (a barrier a step) or by warp shuffles (lanes of 4 or 8
   groups of channels and 8 or 4 strips), measured slower: 0.0718, 0.0815, 0.0829 ms; with no
   search at all (a diagnostic, wrong results) 0.0643, with no sums either 0.0627 (88% of copy):
   the search and the sums cost 5% over the floor of its loads and stores (eleventh session).
   Also no faster (twelfth session; Nsight Compute: 3.3 TB/s of DRAM traffic, L2 86% busy): 14
   steps a thread, 0.0668 against 0.0667-0.0669 (a quarter less read from L2, a sixth fewer
   instructions), 7 steps 0.0688 (a last wave 0.4 full); the next step's rows prefetched into L2
   by a bulk prefetch a warp, 0.0697-0.0736; dx out through shared memory by bulk copies, 0.0738;
   dx stored evict-first, 0.0668-0.0670 against 0.0666-0.0667. What did help (thirteenth
   session): a thread walking its whole column of cells where the columns fill a wave of
   resident threads, so that no window row is found twice and no wave drains behind another,
   0.0645-0.0648 against 0.0666-0.0670 ms, 86% of copy (fixed_plan; block timelines showed the
   4-step grid's drain costing 1.5 of its 68 us). The tile kernel takes the float and averaging
   backward, an earlier fixed NHWC backward of floats per channel having measured 0.311 ms
   against its 0.230 ms).

   Other 2-D problems go to the tile kernels when a band of rows fits in shared memory. Pooling moves
   little data per output, so what decides its speed is reading x once, coalesced, with many
   loads in flight, and not finding a window's maximum more than once. A block copies the rows of
   x (and dy) its band needs into shared memory, full width, each thread keeping up to 64 bytes
   of loads in flight; threads then compute from shared memory:
   - forward: each thread scans the windows of its outputs and writes them;
   - backward: the block finds the maximum of every window that covers its band of input rows
     once (their positions go to a shared tile), then each thread gathers, per input, the dy of
     the windows whose maximum it is, or of all covering windows when averaging.
   Entries: cuda:pooling_tile_nhwc_vec16 (channels innermost, 16-byte vectors of channels per
   element, a block taking 32 bytes of each pixel; backward only, cuda:pooling_nhwc_vec16 having
   measured faster forward, and MAX in half and bfloat16 going to cuda:pooling_fixed_nhwc_vec16
   first) and cuda:pooling_tile_nchw (rows of W contiguous, one channel per element, several
   planes a block when planes are small).

   Everything else (3-D, windows or rows too large for shared memory, other layouts) takes the
   direct kernels, threads laid along the contiguous dim (C when innermost, else W), windows
   scanned in chunks of positions whose loads issue together (scan):
   - forward: one window per thread;
   - backward, windows at most twice the stride (2x2/2, 3x3/2, ...): one thread per output owns
     the inputs of its stride cell and finds, together, the maxima of the at most 2 windows per
     dim that reach into the cell;
   - backward, larger windows: one thread per input gathers from every output that covers it,
     finding each window's maximum again.
   cuda:pooling_nhwc_vec16 gives each thread 16 bytes of channels (8 half or bfloat16, 4 float, 2
   double) loaded as one vector; cuda:pooling_direct takes every other layout, one channel per
   thread. Indices are decoded with ocd_fastdiv (cuda/types.cuh). Bytes moved: forward x and y;
   backward dy, dx and, for MAX, x (y is not read). */
#include <string.h>
#include <type_traits>

#include "core/dtype.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/types.cuh"
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

/* The divisor of the window starting at s: its volume, or for EXCLUDE_PADDING the inputs inside. */
template <typename C> __device__ __forceinline__ C divisor(const pool_args<C> &a, const int s[3])
{
    if (!a.exclude) return a.volume;
    int n = 1;
#pragma unroll
    for (int i = 0; i < OCD_POOL_DIMS; i++) {
        int lo = s[i] < 0 ? 0 : s[i], hi = s[i] + a.win[i] < a.in[i] ? s[i] + a.win[i] : a.in[i];
        n *= hi > lo ? hi - lo : 0;
    }
    return (C)n;
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

/* ---- tiles in shared memory (2-D pooling) ---------------------------------------------------- */

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

/* Whether the cells backward serves the problem: windows at most twice the stride in every dim
   (3 x 3 with stride 2 included); with 16-byte vectors of channels, only when windows do not
   overlap along d (eight windows of vectors would not fit in registers). */
bool cells_apply(const ocd_pooling_problem *p, int v)
{
    for (int i = 0; i < OCD_POOL_DIMS; i++)
        if (p->window[i] > 2 * p->stride[i]) return false;
    return v == 1 || p->window[0] <= p->stride[0];
}

/* The kernel arguments of a problem, with fast divisions by the dims of the tensor the threads
   of pool_forward and pool_backward_gather walk (y forward, x backward). */
template <typename T, int V, bool CLAST> pool_args<typename ocd_compute<T>::type> args_of(const ocd_pooling_problem *p)
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
    const int *e = p->backward ? a.in : a.out;
    a.div_c = ocd_fastdiv_make(CLAST ? a.cv : a.c);
    a.div_w = ocd_fastdiv_make((uint32_t)e[2]);
    a.div_h = ocd_fastdiv_make((uint32_t)e[1]);
    a.div_d = ocd_fastdiv_make((uint32_t)e[0]);
    a.alpha = (C)p->alpha;
    a.beta = (C)p->beta;
    a.volume = (C)((double)p->window[0] * p->window[1] * p->window[2]);
    a.blend = p->beta != 0;
    a.nan = p->propagate_nan;
    a.max = p->mode == CUDNN_POOLING_MAX || p->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    a.exclude = p->mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    return a;
}

template <typename T, int V, bool CLAST> cudnnStatus_t launch(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    pool_args<typename ocd_compute<T>::type> a = args_of<T, V, CLAST>(p);
    const int *e = p->backward ? a.in : a.out; /* the tensor the threads walk */
    uint32_t total = (uint32_t)(p->n * a.cv * e[0] * e[1] * e[2]);
    const T *x = (const T *)p->x, *dy = (const T *)p->dy;
    if (!p->backward) {
        constexpr int W = 1; /* windows per thread: more cost registers (measured slower at 4) */
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

/* ---- the tile kernels' plan ------------------------------------------------------------------- */

constexpr int64_t TILE_SMEM = 40 * 1024; /* under the 48 KiB a block gets without opting in */

/* How a tile kernel runs a problem: G = 1 << lg channel groups a block, bands of `rows` rows of
   the walked tensor, and the bytes of each tile. */
struct tile_plan {
    int lg, rows, bands, chunks, groups;
    int64_t o_bytes, a_bytes, x_bytes;
};

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

template <typename T, int V, bool CLAST> cudnnStatus_t launch_tile(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    typedef typename ocd_compute<T>::type C;
    tile_plan pl;
    tile_plan_of(p, V, &pl); /* applies: the plan exists */
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

/* ---- compile-time windows: the rows (forward) and cells (backward) kernels ------------------- */

/* floor(a / b) for b > 0, at compile time. */
constexpr int fixed_floordiv(int a, int b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* A window shape compiled with every offset a constant: K x K, stride S, padding P in both dims,
   R adjacent outputs (forward) or stride cells (backward) along W a thread. Backward, strip t
   owns the input columns [t R S, (t + 1) R S), reached by the windows t R + J0 .. t R + J1, and
   step s the input rows [s S, (s + 1) S), reached by the window rows s + J0 .. s + H1 (K <= 2 S:
   at most two). Forward, the R windows of strip t read the columns t R S - P + [0, FN). The
   aligned middle of both spans, [t R S, (t + 1) R S), is what 16-byte loads along W take. */
template <int K_, int S_, int P_, int R_> struct fixed_shape {
    enum : int { K = K_, S = S_, P = P_, R = R_ };
    enum : int { J0 = -fixed_floordiv(K - 1 - P, S), J1 = fixed_floordiv(R * S - 1 + P, S) };
    enum : int { H1 = fixed_floordiv(S - 1 + P, S) };
    enum : int { NW = J1 - J0 + 1, NH = H1 - J0 + 1, FN = (R - 1) * S + K, BN = (NW - 1) * S + K };
    static_assert(K <= 2 * S && P >= 0 && P < K, "windows reach at most two cells per dim");
    static_assert(K - S - P >= 0 && J1 * S + K - P - R * S >= 0 && P - J0 * S >= 0,
                  "the aligned middle lies inside both spans");
};

enum fixed_mode { FIXED_MAX, FIXED_MAX_NAN, FIXED_AVG }; /* FIXED_MAX_NAN: MAX, NaN propagated */

template <typename C> struct fixed_args {
    int in_h, in_w, out_h, out_w;
    int steps, cells_h;     /* backward: steps a thread walks, and ceil(in_h / S) in all */
    int64_t xs[4], ys[4];   /* strides of image, group of V channels, h, w, in scalars */
    ocd_fastdiv e0, e1, e2; /* extents of the thread index, fastest first (fixed_decode) */
    C alpha, beta;
    bool blend, exclude;
    bool vec; /* W contiguous, rows of x and dx (y forward) 16-byte aligned: spans' middles, dx (y) rows as vectors */
};

/* Scalars in the compute type, host-callable (the emulation of these kernels runs on a CPU). */
__host__ __device__ __forceinline__ float fixed_cvt(float v)
{
    return v;
}
__host__ __device__ __forceinline__ float fixed_cvt(__half v)
{
    return __half2float(v);
}
__host__ __device__ __forceinline__ float fixed_cvt(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}
__host__ __device__ __forceinline__ void fixed_put(float *p, float v)
{
    *p = v;
}
__host__ __device__ __forceinline__ void fixed_put(__half *p, float v)
{
    *p = __float2half_rn(v);
}
__host__ __device__ __forceinline__ void fixed_put(__nv_bfloat16 *p, float v)
{
    *p = __float2bfloat16_rn(v);
}

/* V lanes at p: one scalar, or a whole 16-byte vector. */
template <typename T, int V, typename C> __host__ __device__ __forceinline__ void fixed_lanes(const T *p, C (&v)[V])
{
    if constexpr (V == 1) {
        v[0] = fixed_cvt(*p);
    } else {
        ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(p);
#pragma unroll
        for (int u = 0; u < V; u++) v[u] = fixed_cvt(b.v[u]);
    }
}

/* p = alpha * r + beta * p, p read only when blending. */
template <typename T, int V, typename C>
__host__ __device__ __forceinline__ void fixed_blend(T *p, const C (&r)[V], const fixed_args<C> &a)
{
    C old[V];
    if (a.blend) fixed_lanes<T, V>(p, old);
    if constexpr (V == 1) {
        fixed_put(p, a.blend ? a.alpha * r[0] + a.beta * old[0] : a.alpha * r[0]);
    } else {
        ocd_vec16<T> b;
#pragma unroll
        for (int u = 0; u < V; u++) fixed_put(&b.v[u], a.blend ? a.alpha * r[u] + a.beta * old[u] : a.alpha * r[u]);
        *reinterpret_cast<ocd_vec16<T> *>(p) = b;
    }
}

/* The value a window's inputs are combined from, and that columns outside the input hold: it
   changes no result, and by ocd_pool_better it is never a better maximum than any value. MAX is
   fmax (a NaN loses, so NaN); MAX_NAN keeps NaN (-inf); sums add 0. */
template <int MODE, typename C> __host__ __device__ __forceinline__ C fixed_fill()
{
    return MODE == FIXED_MAX ? (C)NAN : MODE == FIXED_MAX_NAN ? -(C)INFINITY : (C)0;
}

/* Combines input v into acc (forward). The maximum's value so found is that of ocd_pool_better's
   first maximum (ops/pooling.h). */
template <int MODE, typename C> __host__ __device__ __forceinline__ C fixed_combine(C acc, C v)
{
    if (MODE == FIXED_AVG) return acc + v;
    if (MODE == FIXED_MAX) return fmax(acc, v);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (sizeof(C) == 4) {
        float r;
        asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(acc), "f"(v));
        return r;
    }
#endif
    return v > acc || v != v ? v : acc;
}

/* Inputs of [s, s + k) inside [0, n). */
__host__ __device__ __forceinline__ int fixed_count(int s, int k, int n)
{
    int lo = s < 0 ? 0 : s, hi = s + k < n ? s + k : n;
    return hi > lo ? hi - lo : 0;
}

/* The position kh K + kw that input (r, c) of a backward thread's stride cell holds in the window
   of window row wr and window j (fixed_shape's numbering: windows J0 + wr, J0 + j), or -1 where
   that window does not reach it. Every argument is an unrolled constant: it folds away. */
template <class F> __host__ __device__ constexpr int fixed_tap(int r, int c, int wr, int j)
{
    int kh = r - (F::J0 + wr) * F::S + F::P, kw = c - (F::J0 + j) * F::S + F::P;
    return kh < 0 || kh >= F::K || kw < 0 || kw >= F::K ? -1 : kh * F::K + kw;
}

/* How many windows of a backward thread's step reach input (r, c) of its stride cell. */
template <class F> __host__ __device__ constexpr int fixed_taps(int r, int c)
{
    int n = 0;
    for (int wr = 0; wr < F::NH; wr++)
        for (int j = 0; j < F::NW; j++) n += fixed_tap<F>(r, c, wr, j) >= 0;
    return n;
}

/* Asks for the line at p into L1 ahead of its load (no register waits on it); nothing on a CPU. */
__host__ __device__ __forceinline__ void fixed_prefetch(const void *p)
{
#if defined(__CUDA_ARCH__)
    asm volatile("prefetch.L1 [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

/* Backward: prefetches what window row o loads that the row before it did not: its dy row (at dyr),
   where inside y, and its last S rows of x (unless skip_x; xh: row o S - P + K - S at the strip's
   first own column, rows xs2 apart) where all inside the image (not at its bottom edge: one
   condition). */
template <class F, typename T, typename C>
__host__ __device__ __forceinline__ void fixed_prefetch_row(const T *xh, int xs2, const T *dyr,
                                                           const fixed_args<C> &a, int o, bool dy_in, bool skip_x)
{
    if ((unsigned)o < (unsigned)a.out_h && dy_in) fixed_prefetch(dyr);
    int ih = o * F::S - F::P + F::K - F::S;
    if (skip_x || ih < 0 || ih + F::S > a.in_h) return;
#pragma unroll
    for (int kh = 0; kh < F::S; kh++) fixed_prefetch(xh + kh * xs2);
}

/* The N columns of a span starting at `row` (W contiguous), `fill` where bit j of `in` is 0
   (outside the image). With vec (rows aligned, columns HEAD .. HEAD + M - 1 inside the row)
   those come as 16-byte vectors. */
template <typename T, int N, int HEAD, int M, typename C>
__host__ __device__ __forceinline__ void fixed_load(const T *row, uint32_t in, bool vec, C fill, C (&v)[N][1])
{
    if (vec) {
        constexpr int L = ocd_vec16<T>::N;
        static_assert(M % L == 0, "whole vectors");
#pragma unroll
        for (int j = 0; j < N; j++)
            if (j < HEAD || j >= HEAD + M) v[j][0] = in >> j & 1 ? fixed_cvt(row[j]) : fill;
#pragma unroll
        for (int q = 0; q < M / L; q++) {
            ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(row + HEAD + q * L);
#pragma unroll
            for (int l = 0; l < L; l++) v[HEAD + q * L + l][0] = fixed_cvt(b.v[l]);
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < N; j++) v[j][0] = in >> j & 1 ? fixed_cvt(row[j]) : fill;
}

/* Thread i -> image n, channel group g, row r (an output row forward, a chunk of steps
   backward) and strip t: channels-last, groups vary fastest, then strips, rows, images (a warp
   reads whole pixels); else strips, rows, groups, images (a warp reads along rows). */
template <bool CLAST, typename C>
__host__ __device__ __forceinline__ void fixed_decode(const fixed_args<C> &a, uint32_t i, int &n, int &g, int &r,
                                                      int &t)
{
    uint32_t q0 = ocd_fastdiv_div(a.e0, i), q1 = ocd_fastdiv_div(a.e1, q0), q2 = ocd_fastdiv_div(a.e2, q1);
    int p0 = (int)(i - q0 * a.e0.d), p1 = (int)(q0 - q1 * a.e1.d), p2 = (int)(q1 - q2 * a.e2.d);
    n = (int)q2;
    g = CLAST ? p0 : p2;
    t = CLAST ? p1 : p0;
    r = CLAST ? p2 : p1;
}

/* Forward: a thread takes RH output rows of the R outputs of its strip, reading each of the FH
   input rows of their windows once (a row that vertically adjacent windows share, loaded once). */
template <class F, int RH_> struct fixed_rows : F {
    enum : int { RH = RH_, FH = (RH_ - 1) * F::S + F::K };
};

/* The lanes a forward thread combines a column of input in: V values of the compute type, or for
   MAX on 8 channels of half or bfloat16 (PAIRED) 4 pairs of T, combined packed: a maximum is one
   of its inputs, so the value is that found in float. fixed_lane<T, true> is also the pair type
   of the channels-last backward. */
template <typename T, bool PAIRED> struct fixed_lane {
    typedef typename ocd_compute<T>::type type;
};
template <> struct fixed_lane<__half, true> {
    typedef __half2 type;
};
template <> struct fixed_lane<__nv_bfloat16, true> {
    typedef __nv_bfloat162 type;
};

/* fixed_combine of the MAX modes on lanes: __hmax2 returns the other input for a NaN, as fmax
   does, and __hmax2_nan NaN, as max.NaN does. */
template <int MODE> __host__ __device__ __forceinline__ float fixed_pick(float acc, float v)
{
    return fixed_combine<MODE>(acc, v);
}
template <int MODE> __host__ __device__ __forceinline__ __half2 fixed_pick(__half2 acc, __half2 v)
{
    return MODE == FIXED_MAX ? __hmax2(acc, v) : __hmax2_nan(acc, v);
}
template <int MODE> __host__ __device__ __forceinline__ __nv_bfloat162 fixed_pick(__nv_bfloat162 acc, __nv_bfloat162 v)
{
    return MODE == FIXED_MAX ? __hmax2(acc, v) : __hmax2_nan(acc, v);
}

/* The N lanes of one column (V channels) at p. */
template <typename T, int V, typename L, int N>
__host__ __device__ __forceinline__ void fixed_column(const T *p, L (&v)[N])
{
    if constexpr (N == V) {
        fixed_lanes<T, V>(p, v);
    } else {
        ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(p); /* one 16-byte load */
        memcpy(v, b.v, sizeof v);
    }
}

/* N lanes to V values of the compute type. */
template <typename L, int N, typename C, int V>
__host__ __device__ __forceinline__ void fixed_spread(const L (&l)[N], C (&v)[V])
{
#pragma unroll
    for (int k = 0; k < N; k++) {
        if constexpr (N == V) {
            v[k] = l[k];
        } else {
            v[2 * k] = __low2float(l[k]);
            v[2 * k + 1] = __high2float(l[k]);
        }
    }
}

/* Columns c0 + [0, FN) of input row ih (forward), in lanes. Rows and columns outside the image are
   read clamped into it: a maximum then sees again an input of the same window (the window of an
   output holds at least one input, P < K), which changes no maximum; sums take 0 there instead.
   With VEC (W contiguous, rows aligned, the span's middle inside the row) the middle comes as
   16-byte vectors. Without a branch, all of a thread's loads can be in flight together. */
template <typename T, int V, class F, int MODE, bool VEC, typename L, int N, typename C>
__host__ __device__ __forceinline__ void fixed_span(const T *xp, const fixed_args<C> &a, int ih, int c0,
                                                    L (&v)[F::FN][N])
{
    constexpr int M = F::R * F::S, LV = ocd_vec16<T>::N;
    bool in = (unsigned)ih < (unsigned)a.in_h;
    const T *row = xp + (ih < 0 ? 0 : in ? ih : a.in_h - 1) * a.xs[2];
#pragma unroll
    for (int j = 0; j < F::FN; j++) {
        if (VEC && j >= F::P && j < F::P + M) continue;
        int c = c0 + j;
        fixed_column<T, V>(row + (c < 0 ? 0 : c < a.in_w ? c : a.in_w - 1) * a.xs[3], v[j]);
        if constexpr (MODE == FIXED_AVG) {
            if (!in || (unsigned)c >= (unsigned)a.in_w)
#pragma unroll
                for (int u = 0; u < N; u++) v[j][u] = (L)0;
        }
    }
    if constexpr (VEC) {
        static_assert(V == 1 && M % LV == 0, "whole vectors of scalars");
#pragma unroll
        for (int q = 0; q < M / LV; q++) {
            ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(row + c0 + F::P + q * LV);
#pragma unroll
            for (int l = 0; l < LV; l++) v[F::P + q * LV + l][0] = MODE == FIXED_AVG && !in ? 0 : fixed_cvt(b.v[l]);
        }
    }
}

/* The FH input rows of a forward thread, combined into acc[output row][output][lane]: a maximum
   per input row over each window's K columns, then over the window's K rows (fmax and max.NaN
   give one value in any order); a sum adds each window's inputs in scan order (rows, then
   columns), as a window-at-a-time scan does (the 0 of a row outside the image leaves a sum
   started at +0 unchanged). */
template <typename T, int V, class F, int MODE, bool VEC, typename L, int N, typename C>
__host__ __device__ __forceinline__ void fixed_forward_rows(const T *xp, const fixed_args<C> &a, int h0, int c0,
                                                            L (&acc)[F::RH][F::R][N])
{
#pragma unroll
    for (int k = 0; k < F::FH; k++) {
        L v[F::FN][N], h[F::R][N];
        fixed_span<T, V, F, MODE, VEC>(xp, a, h0 + k, c0, v);
        if constexpr (MODE != FIXED_AVG) {
#pragma unroll
            for (int r = 0; r < F::R; r++)
#pragma unroll
                for (int u = 0; u < N; u++) {
                    h[r][u] = v[r * F::S][u];
#pragma unroll
                    for (int kw = 1; kw < F::K; kw++) h[r][u] = fixed_pick<MODE>(h[r][u], v[r * F::S + kw][u]);
                }
        }
#pragma unroll
        for (int o = 0; o < F::RH; o++) {
            if (k < o * F::S || k >= o * F::S + F::K) continue; /* input row k is not in output row o's windows */
#pragma unroll
            for (int r = 0; r < F::R; r++)
#pragma unroll
                for (int u = 0; u < N; u++) {
                    if constexpr (MODE == FIXED_AVG) {
                        if (k == o * F::S) acc[o][r][u] = 0;
#pragma unroll
                        for (int kw = 0; kw < F::K; kw++)
                            acc[o][r][u] = fixed_combine<MODE>(acc[o][r][u], v[r * F::S + kw][u]);
                    } else {
                        acc[o][r][u] = k == o * F::S ? h[r][u] : fixed_pick<MODE>(acc[o][r][u], h[r][u]);
                    }
                }
        }
    }
}

/* Forward, thread i: outputs t R .. t R + R - 1 of output rows r RH .. r RH + RH - 1, from the FH
   input rows of their windows, each read once as one span of FN columns (fixed_forward_rows).
   Float rows along W are stored as 16-byte vectors when whole; paired 16-bit maxima, unblended
   with alpha 1, are stored as found (alpha r is r). */
template <typename T, int V, bool CLAST, class F, int MODE, typename C>
__host__ __device__ __forceinline__ void fixed_forward_thread(const T *__restrict__ x, T *__restrict__ y,
                                                              const fixed_args<C> &a, uint32_t i)
{
    constexpr bool PAIRED = MODE != FIXED_AVG && sizeof(T) == 2 && V == 8;
    typedef typename fixed_lane<T, PAIRED>::type L;
    constexpr int N = PAIRED ? V / 2 : V;
    int n, g, rg, t;
    fixed_decode<CLAST>(a, i, n, g, rg, t);
    int ow0 = t * F::R, oh0 = rg * F::RH, c0 = ow0 * F::S - F::P, h0 = oh0 * F::S - F::P;
    const T *xp = x + n * a.xs[0] + g * a.xs[1];
    L acc[F::RH][F::R][N];
    if (!CLAST && a.vec && c0 + F::P + F::R * F::S <= a.in_w)
        fixed_forward_rows<T, V, F, MODE, !CLAST>(xp, a, h0, c0, acc);
    else
        fixed_forward_rows<T, V, F, MODE, false>(xp, a, h0, c0, acc);
    T *yp = y + n * a.ys[0] + g * a.ys[1];
#pragma unroll
    for (int o = 0; o < F::RH; o++) {
        int oh = oh0 + o;
        if (oh >= a.out_h) break;
        T *yr = yp + oh * a.ys[2];
        /* A window without input (an output larger than the image's windows reach) gives 0; a
           window starts at -P or later and ends past 0 (P < K). */
        bool none[F::R];
#pragma unroll
        for (int r = 0; r < F::R; r++) none[r] = h0 + o * F::S >= a.in_h || c0 + r * F::S >= a.in_w;
        if constexpr (PAIRED) {
            if (!a.blend && a.alpha == (C)1) {
#pragma unroll
                for (int r = 0; r < F::R; r++) {
                    if (ow0 + r >= a.out_w) break;
                    uint32_t w[N]; /* the pairs' bits; 0 is +0 */
                    memcpy(w, acc[o][r], sizeof w);
                    uint4 b = make_uint4(none[r] ? 0u : w[0], none[r] ? 0u : w[1], none[r] ? 0u : w[2],
                                         none[r] ? 0u : w[3]);
                    *reinterpret_cast<uint4 *>(yr + (ow0 + r) * a.ys[3]) = b;
                }
                continue;
            }
        }
        C out[F::R][V];
#pragma unroll
        for (int r = 0; r < F::R; r++) {
            fixed_spread(acc[o][r], out[r]);
            if constexpr (MODE == FIXED_AVG) {
                int count = fixed_count(h0 + o * F::S, F::K, a.in_h) * fixed_count(c0 + r * F::S, F::K, a.in_w);
                C div = a.exclude ? (C)count : (C)(F::K * F::K);
#pragma unroll
                for (int u = 0; u < V; u++) out[r][u] = out[r][u] / div;
            }
#pragma unroll
            for (int u = 0; u < V; u++) out[r][u] = none[r] ? (C)0 : out[r][u];
        }
        if constexpr (!CLAST && F::R == ocd_vec16<T>::N) {
            if (a.vec && ow0 + F::R <= a.out_w) { /* a whole strip: one vector */
                C q[F::R];
#pragma unroll
                for (int r = 0; r < F::R; r++) q[r] = out[r][0];
                fixed_blend<T, F::R>(yr + ow0, q, a);
                continue;
            }
        }
#pragma unroll
        for (int r = 0; r < F::R; r++) {
            if (ow0 + r >= a.out_w) break;
            fixed_blend<T, V>(yr + (ow0 + r) * a.ys[3], out[r], a);
        }
    }
}

/* Backward, one x row of the NW windows of a strip (span columns v, `lead` of them before the
   image): per window j, the best of its K columns in scan order and its position base + kw
   (ocd_pool_better, strict: the first maximum). A window's first column inside the image starts
   as the best, the columns before it holding `fill`, which nothing loses to (fixed_fill). A row
   outside the image (!in) gives `fill`, and, above it (TOP), the first column inside as the
   position. */
template <class F, int MODE, bool TOP, typename C>
__host__ __device__ __forceinline__ void fixed_row_best(const C (&v)[F::BN][1], bool in, int lead, int base,
                                                        C (&best)[F::NW], int (&pos)[F::NW])
{
#pragma unroll
    for (int j = 0; j < F::NW; j++) {
        /* window j starts before the image only where window 0 does, by lead - j S columns */
        int before = (F::J0 + j) * F::S - F::P >= 0 ? 0 : j == 0 ? lead : lead - j * F::S > 0 ? lead - j * F::S : 0;
        C b = v[j * F::S][0];
        int p = base + before;
#pragma unroll
        for (int kw = 1; kw < F::K; kw++) {
            C e = v[j * F::S + kw][0];
            bool take = ocd_pool_better(e, b, MODE == FIXED_MAX_NAN);
            b = take ? e : b;
            p = take ? base + kw : p;
        }
        best[j] = in ? b : fixed_fill<MODE, C>();
        pos[j] = !TOP || in ? p : base + before; /* below the image, never taken */
    }
}

/* Backward, what strip t needs at every step, found once: which columns of its span (first
   column c0 = (t R + J0) S - P) lie inside the image (in) and how many lie before it (lead),
   which of its windows lie inside y and hold input columns (ok) and how many (cols, averaging),
   whether its middle comes as a vector. */
template <class F> struct fixed_strip {
    bool vec;
    uint32_t in, ok; /* bit c: span column c inside the image; bit j: window j inside y, with input */
    int cols[F::NW], lead; /* lead: the columns of window 0 before the image (-c0, or 0) */
};

/* Backward, what a window row's search reads, loaded ahead of it (fixed_window_load): the x rows
   of the window row not kept from the row before (vals) and the dy of its windows (dy: 0 for a
   window outside y or without input). */
template <class F, typename C> struct fixed_loaded {
    C vals[F::K][F::BN][1];
    C dy[F::NW];
};

/* Backward, the loads of window row o of a strip, windows ow = t R + J0 + j: xo is x row o S - P
   at the span's first column, dyo dy row o at the first window. With vec the middle M columns
   (the strip's own) come as one vector; columns outside the image hold `fill`; a row outside it
   is read without a branch: above the image (TOP) at x0 (row 0, its results `fill`,
   fixed_window_row), below it as the image's last row, which the window row holds too (unless
   it has no input; o S - P >= 0): a maximum's first position is never in a row seen again. With
   `kept` the first K - S rows are not loaded (the row before found them). */
template <typename T, class F, int MODE, bool TOP, typename C>
__host__ __device__ __forceinline__ void fixed_window_load(const T *x0, const T *xo, const T *dyo,
                                                           const fixed_args<C> &a, int o, const fixed_strip<F> &st,
                                                           bool kept, fixed_loaded<F, C> &ld)
{
    int h0 = o * F::S - F::P;
    bool row_in = (unsigned)o < (unsigned)a.out_h && h0 < a.in_h && (!TOP || h0 + F::K > 0); /* holds input */
#pragma unroll
    for (int j = 0; j < F::NW; j++) ld.dy[j] = row_in && (st.ok >> j & 1) ? fixed_cvt(dyo[j]) : (C)0;
    if (MODE == FIXED_AVG) return;
    constexpr int HEAD = F::P - F::J0 * F::S, M = F::R * F::S, KEEP = F::K - F::S;
#pragma unroll
    for (int kh = 0; kh < F::K; kh++) {
        if (kept && kh < KEEP) continue;
        const T *row = xo + (kh < a.in_h - 1 - h0 ? kh : a.in_h - 1 - h0) * (int)a.xs[2];
        if (TOP) row = (unsigned)(h0 + kh) < (unsigned)a.in_h ? xo + kh * (int)a.xs[2] : x0;
        fixed_load<T, F::BN, HEAD, M>(row, st.in, st.vec, fixed_fill<MODE, C>(), ld.vals[kh]);
    }
}

/* Backward, window row o of a strip from its loads (fixed_window_load): per window, the gradient
   it passes on, gr[j] (dy, or dy / divisor averaging; 0 for a window outside y or without input,
   whose position then does not matter), and for MAX the position kh K + kw of its first maximum,
   at[j]. The maximum is found separably, the first maximum in row-major order being the first
   best of the rows' first bests: each x row of the window row gives per window its best and
   position (rv[kh], rp[kh], fixed_row_best; a row outside the image `fill`), then the rows are
   compared in order. With `kept` (window row o - 1 found last by this thread) the first K - S
   rows' results are that row's last ones; their positions, counted in that window row, are S K
   too large. TOP: the window row may start above the image (false: o S - P >= 0). */
template <class F, int MODE, bool TOP, typename C>
__host__ __device__ __forceinline__ void fixed_window_row(const fixed_loaded<F, C> &ld, const fixed_args<C> &a, int o,
                                                          const fixed_strip<F> &st, bool kept,
                                                          C (&rv)[F::K][F::NW], int (&rp)[F::K][F::NW],
                                                          int (&at)[F::NW], C (&gr)[F::NW])
{
    int h0 = o * F::S - F::P, nrows = MODE == FIXED_AVG ? fixed_count(h0, F::K, a.in_h) : 0;
#pragma unroll
    for (int j = 0; j < F::NW; j++) {
        C div = a.exclude ? (C)(nrows * st.cols[j]) : (C)(F::K * F::K);
        gr[j] = MODE != FIXED_AVG || ld.dy[j] == (C)0 ? ld.dy[j] : ld.dy[j] / div; /* 0: no window, perhaps no div */
    }
    if (MODE == FIXED_AVG) return;
    constexpr int KEEP = F::K - F::S;
    if (kept) {
#pragma unroll
        for (int kh = 0; kh < KEEP; kh++)
#pragma unroll
            for (int j = 0; j < F::NW; j++) {
                rv[kh][j] = rv[kh + F::S][j];
                rp[kh][j] = rp[kh + F::S][j];
            }
    }
    /* rows above the image hold `fill`: the position starts at the first row inside */
    int top = TOP && h0 < 0 ? -h0 * F::K : 0;
    C best[F::NW];
#pragma unroll
    for (int kh = 0; kh < F::K; kh++) { /* each row compared once found (fewer values live, measured in SASS) */
        if (!kept || kh >= KEEP)
            fixed_row_best<F, MODE, TOP>(ld.vals[kh], !TOP || (unsigned)(h0 + kh) < (unsigned)a.in_h, st.lead,
                                         kh * F::K, rv[kh], rp[kh]);
#pragma unroll
        for (int j = 0; j < F::NW; j++) {
            int p = rp[kh][j] - (kept && kh < KEEP ? F::S * F::K : 0);
            bool take = kh > 0 && ocd_pool_better(rv[kh][j], best[j], MODE == FIXED_MAX_NAN);
            best[j] = kh == 0 || take ? rv[kh][j] : best[j];
            at[j] = kh == 0 ? p + top : take ? p : at[j];
        }
    }
}

/* Backward, thread i: the inputs of strip t's M = R S columns (one 16-byte vector) in steps
   [chunk * steps, ...) of S rows, each row written once as a vector when W allows; the window
   rows reaching a step are found once, the last kept for the next step, and so are the x rows two
   window rows share. Each input sums, in y's row-major order as the host backend does, the
   gradient of the windows whose maximum it is (or of every window covering it, averaging); which
   window positions an input is, in which window, is a compile-time constant. What depends only
   on the strip's columns is found once (fixed_strip), and the rows of x, dy and dx a step reads
   and writes are pointers moved on by a step. Rows of W are contiguous in x and y (the NCHW
   entry's condition): columns are offsets from a row's pointer. A step's loads are software
   pipelined: issued into registers (fixed_loaded) during the step before, once its compares have
   consumed that step's, so that its sums and stores run while they arrive; the L1 prefetch runs
   PF steps ahead. */
template <typename T, class F, int MODE, typename C>
__host__ __device__ __forceinline__ void fixed_backward_thread(const T *__restrict__ x, const T *__restrict__ dy,
                                                               T *__restrict__ dx, const fixed_args<C> &a, uint32_t i)
{
    constexpr int M = F::R * F::S, HEAD = F::P - F::J0 * F::S;
    static_assert(ocd_vec16<T>::N == M, "a strip's row is one 16-byte vector");
    int n, g, chunk, t;
    fixed_decode<false>(a, i, n, g, chunk, t);
    int s0 = chunk * a.steps, s1 = s0 + a.steps < a.cells_h ? s0 + a.steps : a.cells_h;
    int ow0 = t * F::R + F::J0, c0 = ow0 * F::S - F::P, iw0 = t * M;
    const int xs2 = (int)a.xs[2], ys2 = (int)a.ys[2]; /* offsets inside an image fit an int (fixed_applies) */
    fixed_strip<F> st;
    st.vec = a.vec && iw0 + M <= a.in_w;
    st.in = st.ok = 0;
    st.lead = c0 < 0 ? -c0 : 0;
#pragma unroll
    for (int c = 0; c < F::BN; c++) st.in |= (uint32_t)((unsigned)(c0 + c) < (unsigned)a.in_w) << c;
#pragma unroll
    for (int j = 0; j < F::NW; j++) {
        st.cols[j] = fixed_count(c0 + j * F::S, F::K, a.in_w);
        st.ok |= (uint32_t)(st.cols[j] > 0 && (unsigned)(ow0 + j) < (unsigned)a.out_w) << j;
    }
#if defined(__CUDA_ARCH__)
    asm("" : "+r"(st.in), "+r"(st.ok), "+r"(st.lead)); /* opaque: else each step finds every bit again */
#endif
    /* x at the span's first column, dy at the first window; rows are added per window row */
    const T *xc = MODE == FIXED_AVG ? x : x + n * a.xs[0] + g * a.xs[1] + c0; /* x unread averaging */
    const T *dyc = dy + n * a.ys[0] + g * a.ys[1] + ow0;
    /* the address dy rows are prefetched at (dyo + dy_skip) and whether it lies inside a row of y */
    const int dy_skip = F::J0 < 0 && ow0 < 0 ? -ow0 : 0;
    bool dy_in = (unsigned)(ow0 + dy_skip) < (unsigned)a.out_w;
    constexpr int PF = 2; /* step s prefetches step s + PF's rows into L1 (it loads step s + 1's into registers) */
    C rv[F::K][F::NW]; /* per x row of the window row last found, each window's best and position */
    int rp[F::K][F::NW];
    int at[F::NH][F::NW];
    C gr[F::NH][F::NW];
    const T *xo = xc + ((s0 + F::H1) * F::S - F::P) * xs2, *dyo = dyc + (s0 + F::H1) * ys2;
    /* The window rows before the first step's, and that one's loads, all in flight together */
    fixed_loaded<F, C> pro[F::NH > 1 ? F::NH - 1 : 1], ld;
#pragma unroll
    for (int k = 0; k < F::NH - 1; k++) {
        int o = s0 + F::J0 + k;
        fixed_window_load<T, F, MODE, true>(xc, xc + (o * F::S - F::P) * xs2, dyc + o * ys2, a, o, st, k > 0, pro[k]);
    }
    fixed_window_load<T, F, MODE, false>(xc, xo, dyo, a, s0 + F::H1, st, F::NH > 1, ld);
#pragma unroll
    for (int k = 1; k < PF; k++) /* the steps the loop's prefetches do not reach */
        if (s0 + k < s1)
            fixed_prefetch_row<F>(xo + ((k * F::S + F::K - F::S) * xs2 + HEAD), xs2, dyo + (k * ys2 + dy_skip), a,
                                  s0 + k + F::H1, dy_in, MODE == FIXED_AVG);
#pragma unroll
    for (int k = 0; k < F::NH - 1; k++)
        fixed_window_row<F, MODE, true>(pro[k], a, s0 + F::J0 + k, st, k > 0, rv, rp, at[k], gr[k]);
    T *dxr = dx + n * a.xs[0] + g * a.xs[1] + s0 * F::S * xs2 + iw0;
    for (int s = s0; s < s1; s++) {
        if (PF > 0 && s + PF < s1) /* into L1 ahead of the loads into registers */
            fixed_prefetch_row<F>(xo + ((PF * F::S + F::K - F::S) * xs2 + HEAD), xs2, dyo + (PF * ys2 + dy_skip), a,
                                  s + PF + F::H1, dy_in, MODE == FIXED_AVG);
        fixed_window_row<F, MODE, false>(ld, a, s + F::H1, st, F::NH > 1 || s > s0, rv, rp, at[F::NH - 1],
                                         gr[F::NH - 1]);
        xo += F::S * xs2;
        dyo += ys2;
        if (s + 1 < s1) /* the next step's loads, in flight while this step's gradients are summed and stored */
            fixed_window_load<T, F, MODE, false>(xc, xo, dyo, a, s + 1 + F::H1, st, true, ld);
#pragma unroll
        for (int r = 0; r < F::S; r++) {
            if (r > 0 && s * F::S + r >= a.in_h) break; /* row s S is inside: s < cells_h */
            C sum[M];
#pragma unroll
            for (int c = 0; c < M; c++) {
                sum[c] = (C)0;
#pragma unroll
                for (int wr = 0; wr < F::NH; wr++)
#pragma unroll
                    for (int j = 0; j < F::NW; j++) {
                        int k = fixed_tap<F>(r, c, wr, j);
                        if (k >= 0 && (MODE == FIXED_AVG || at[wr][j] == k)) sum[c] += gr[wr][j];
                    }
            }
            T *row = dxr + r * xs2;
            if (st.vec) {
                fixed_blend<T, M>(row, sum, a);
                continue;
            }
#pragma unroll
            for (int c = 0; c < M; c++) {
                C one[1] = {sum[c]};
                if (st.in >> (HEAD + c) & 1) fixed_blend<T, 1>(row + c, one, a);
            }
        }
#pragma unroll
        for (int k = 0; k < F::NH - 1; k++) {
#pragma unroll
            for (int j = 0; j < F::NW; j++) {
                at[k][j] = at[k + 1][j];
                gr[k][j] = gr[k + 1][j];
            }
        }
        dxr += F::S * xs2;
    }
}

/* ---- backward, channels-last half and bfloat16: packed pairs of channels ------------------------
   A thread owns one stride cell along W (R = 1) of 8 channels (a 16-byte vector, 4 pairs) and walks
   down steps of S rows like the NCHW kernel above, finding each window row once, the last kept for
   the next step, two channels an instruction, the maxima's positions kept as numbers of T in the
   pair's halves. MAX finds them separably, as the NCHW kernel does, the x rows two window rows
   share found once; measured on the H200 (64x256x56x56 f16 3x3/2, 0.083 ms), the previous
   kernel, scanning each window whole with a compare and two bit selects an input, was bound by
   the ALU pipe (compares, min/max, bit operations, address arithmetic; 27M of its 44M warp
   instructions), so positions are moved by arithmetic on the FMA pipe. MAX_NAN, and MAX windows
   whose maximum is -inf or that hold a row of NaN, are scanned whole. dx is written once a pixel,
   as a 16-byte vector; the gradients are summed in float, in y's row-major order. */

template <typename P> __host__ __device__ __forceinline__ uint32_t fixed_bits(P v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    return b;
}
template <typename P> __host__ __device__ __forceinline__ P fixed_unbits(uint32_t b)
{
    P v;
    memcpy(&v, &b, 4);
    return v;
}

/* Window position k (0 <= k < 16) as a number of the 16-bit T, in both halves of a pair. */
template <typename T> __host__ __device__ constexpr uint32_t fixed_pos_bits(int k)
{
    constexpr int man = std::is_same<T, __half>::value ? 10 : 7, bias = std::is_same<T, __half>::value ? 15 : 127;
    int e = k >= 8 ? 3 : k >= 4 ? 2 : k >= 2 ? 1 : 0;
    uint32_t h = k <= 0 ? 0u : (uint32_t)((bias + e) << man) | (((uint32_t)k << (man - e)) & ((1u << man) - 1));
    return h | h << 16;
}

/* fixed_fill of MODE (NaN, or -inf when NaN propagates) in both halves of a pair of T. */
template <typename T, int MODE> __host__ __device__ constexpr uint32_t fixed_pair_fill()
{
    constexpr bool h = std::is_same<T, __half>::value;
    constexpr uint32_t b = MODE == FIXED_MAX ? (h ? 0x7e00u : 0x7fc0u) : (h ? 0xfc00u : 0xff80u);
    return b | b << 16;
}

/* One scan step of ocd_pool_better on a pair of channels: v, met at window position k2
   (fixed_pos_bits), becomes the best, lane by lane, where better. */
template <int MODE, typename P>
__host__ __device__ __forceinline__ void fixed_pair_scan(P &best, uint32_t &pos, P v, uint32_t k2)
{
    uint32_t take = __hgtu2_mask(v, best) & (MODE == FIXED_MAX_NAN ? __heq2_mask(best, best) : __heq2_mask(v, v));
    best = fixed_unbits<P>((fixed_bits(best) & ~take) | (fixed_bits(v) & take));
    pos = (pos & ~take) | (k2 & take);
}

/* Window j of window row o (x rows from h0, xo, columns from c0 + j S), scanned exactly: the
   position of its first maximum per lane, pos, scanning each input as it is loaded from the
   window's first input inside the image as the position (kept unless a later input is better)
   and `fill` as the best. EDGE: the window may reach outside the image, whose positions hold
   `fill`; else every input is loaded, without checks. */
template <typename T, class F, int MODE, bool EDGE, typename P, typename C>
__host__ __device__ __forceinline__ void fixed_pair_window(const T *xo, const fixed_args<C> &a, int h0, int c0, int j,
                                                           uint32_t (&pos)[4])
{
    int cj = c0 + j * F::S;
    uint32_t k2 = fixed_pos_bits<T>((h0 < 0 ? -h0 : 0) * F::K + (cj < 0 ? -cj : 0));
    P best[4];
#pragma unroll
    for (int q = 0; q < 4; q++) {
        best[q] = fixed_unbits<P>(fixed_pair_fill<T, MODE>());
        pos[q] = k2;
    }
#pragma unroll
    for (int kh = 0; kh < F::K; kh++) {
        bool row = (unsigned)(h0 + kh) < (unsigned)a.in_h;
#pragma unroll
        for (int kw = 0; kw < F::K; kw++) {
            int c = j * F::S + kw;
            P v[4];
            if (!EDGE || (row && (unsigned)(c0 + c) < (unsigned)a.in_w)) {
                ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(xo + (kh * (int)a.xs[2] + c * (int)a.xs[3]));
                memcpy(v, &b, 16);
            } else {
#pragma unroll
                for (int q = 0; q < 4; q++) v[q] = fixed_unbits<P>(fixed_pair_fill<T, MODE>());
            }
#pragma unroll
            for (int q = 0; q < 4; q++)
                fixed_pair_scan<MODE>(best[q], pos[q], v[q], fixed_pos_bits<T>(kh * F::K + kw));
        }
    }
}

/* a b + c on pairs: __hfma2 is device-only (bfloat16: sm_80 and later); elsewhere a product and
   a sum, the same for the small whole numbers that positions are. */
template <typename P> __host__ __device__ __forceinline__ P fixed_pair_fma(P a, P b, P c)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __hfma2(a, b, c);
#else
    return __hadd2(__hmul2(a, b), c);
#endif
}

/* MAX, one x row of the NW windows of a strip (span columns v, 4 pairs each): per window j and
   lane, the largest number of its K columns, bv (__hmax2: NaN only where all are), and the
   position base + kw of the first column holding it, rp, as a number of T: with ne[kw] 1 where
   column kw is not bv (or NaN), kw = ne[0] (1 + ne[1] (1 + ...)), on the FMA pipe (compares and
   bit selects take the ALU pipe, the one this kernel is bound by). */
template <typename T, class F, typename P>
__host__ __device__ __forceinline__ void fixed_pair_row_best(const P (&v)[F::BN][4], int base, P (&bv)[F::NW][4],
                                                             P (&rp)[F::NW][4])
{
    const P one = fixed_unbits<P>(fixed_pos_bits<T>(1));
#pragma unroll
    for (int j = 0; j < F::NW; j++)
#pragma unroll
        for (int q = 0; q < 4; q++) {
            P m = v[j * F::S][q];
#pragma unroll
            for (int kw = 1; kw < F::K; kw++) m = __hmax2(m, v[j * F::S + kw][q]);
            P p = one;
#pragma unroll
            for (int kw = F::K - 2; kw > 0; kw--) {
                P ne = __hneu2(v[j * F::S + kw][q], m);
                p = kw == F::K - 2 ? __hadd2(ne, one) : fixed_pair_fma(ne, p, one);
            }
            rp[j][q] = fixed_pair_fma(__hneu2(v[j * F::S][q], m), p, fixed_unbits<P>(fixed_pos_bits<T>(base)));
            bv[j][q] = m;
        }
}

/* Window row o of a strip: the position of each window's first maximum per lane, at[j] (x rows
   from o S - P, xo, columns from c0 + j S). MAX_NAN scans each window exactly (fixed_pair_window).
   MAX finds it separably (fixed_window_row): each x row gives per window its best and first
   position (fixed_pair_row_best; every row's loads are issued before any is compared), then the
   rows are compared in order, a row taken where its best is larger (t = 1: the position moved as
   pos + t (rp - pos), on the FMA pipe). Inputs outside the image (EDGE) hold -inf, never a first
   maximum above -inf; where a window's maximum is -inf, or a row of it is NaN throughout (its
   best, so the window's, NaN), the window row is scanned again, exactly (a NaN before the first
   -inf would have kept the position), which the sum of best + inf, NaN there, finds without a
   compare a lane. With kept (window row o - 1 found last by this thread), the first K - S rows'
   results are that row's last ones, not loaded again; their positions, counted in that window
   row, are S K too large. */
template <typename T, class F, int MODE, bool EDGE, typename P, typename C>
__host__ __device__ __forceinline__ void fixed_pair_window_row(const T *xo, const fixed_args<C> &a, int o, int c0,
                                                               bool kept, P (&rv)[F::K][F::NW][4],
                                                               P (&rp)[F::K][F::NW][4], uint32_t (&at)[F::NW][4])
{
    int h0 = o * F::S - F::P;
    if (MODE != FIXED_MAX) {
#pragma unroll
        for (int j = 0; j < F::NW; j++) fixed_pair_window<T, F, MODE, EDGE, P>(xo, a, h0, c0, j, at[j]);
        return;
    }
    constexpr int KEEP = F::K - F::S;
    if (kept) {
#pragma unroll
        for (int kh = 0; kh < KEEP; kh++) {
            memcpy(rv[kh], rv[kh + F::S], sizeof rv[kh]);
            memcpy(rp[kh], rp[kh + F::S], sizeof rp[kh]);
        }
    }
    P v[F::K][F::BN][4];
#pragma unroll
    for (int kh = 0; kh < F::K; kh++) {
        if (kept && kh < KEEP) continue;
        bool row = (unsigned)(h0 + kh) < (unsigned)a.in_h;
        const T *xr = xo + kh * (int)a.xs[2];
#pragma unroll
        for (int c = 0; c < F::BN; c++) {
            if (!EDGE || (row && (unsigned)(c0 + c) < (unsigned)a.in_w)) {
                ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(xr + c * (int)a.xs[3]);
                memcpy(v[kh][c], &b, 16);
            } else {
#pragma unroll
                for (int q = 0; q < 4; q++) v[kh][c][q] = fixed_unbits<P>(fixed_pair_fill<T, FIXED_MAX_NAN>());
            }
        }
    }
    /* each row compared as soon as found: a kept row's registers are free for the row replacing it */
    const P back = fixed_unbits<P>(fixed_pos_bits<T>(F::S * F::K));
    P best[F::NW][4], pos[F::NW][4];
#pragma unroll
    for (int kh = 0; kh < F::K; kh++) {
        if (!kept || kh >= KEEP) fixed_pair_row_best<T, F>(v[kh], kh * F::K, rv[kh], rp[kh]);
#pragma unroll
        for (int j = 0; j < F::NW; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                P r = kept && kh < KEEP ? __hsub2(rp[kh][j][q], back) : rp[kh][j][q];
                if (kh == 0) {
                    best[j][q] = rv[0][j][q];
                    pos[j][q] = r;
                } else {
                    pos[j][q] = fixed_pair_fma(__hgt2(rv[kh][j][q], best[j][q]), __hsub2(r, pos[j][q]), pos[j][q]);
                    best[j][q] = __hmax2_nan(best[j][q], rv[kh][j][q]);
                }
            }
    }
    P low = fixed_unbits<P>(fixed_pair_fill<T, FIXED_MAX_NAN>() & 0x7fff7fffu); /* +inf, the sum's start */
#pragma unroll
    for (int j = 0; j < F::NW; j++)
#pragma unroll
        for (int q = 0; q < 4; q++) {
            at[j][q] = fixed_bits(pos[j][q]);
            low = __hadd2(best[j][q], low);
        }
    if (!__hbgt2(low, fixed_unbits<P>(0u))) {
#pragma unroll
        for (int j = 0; j < F::NW; j++) fixed_pair_window<T, F, MODE, true, P>(xo, a, h0, c0, j, at[j]);
    }
}

/* The gradient each window of window row o passes on, gr (its dy, at dyo + j ys[3]; 0 for a
   window outside y or without input, bit j of ok saying which of the strip's columns are). */
template <typename T, class F, typename P, typename C>
__host__ __device__ __forceinline__ void fixed_pair_grad(const T *dyo, const fixed_args<C> &a, int o, uint32_t ok,
                                                         P (&gr)[F::NW][4])
{
    int h0 = o * F::S - F::P;
    bool rows = (unsigned)o < (unsigned)a.out_h && h0 < a.in_h && h0 + F::K > 0; /* with input rows */
#pragma unroll
    for (int j = 0; j < F::NW; j++) {
        if (rows && (ok >> j & 1)) {
            ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(dyo + j * (int)a.ys[3]);
            memcpy(gr[j], &b, 16);
        } else {
#pragma unroll
            for (int q = 0; q < 4; q++) gr[j][q] = fixed_unbits<P>(0u);
        }
    }
}

/* Calls fn(q, g, first) for each window of the step that reaches input (r, c) of the stride cell,
   in y's row-major order, and each pair q of its 8 channels: g, the window's gradients where
   (r, c) holds its first maximum (at: its position), else 0; first: the first such window. */
template <typename T, class F, typename P, typename Fn>
__host__ __device__ __forceinline__ void fixed_pair_terms(const uint32_t (&at)[F::NH][F::NW][4],
                                                          const P (&gr)[F::NH][F::NW][4], int r, int c, Fn fn)
{
    bool first = true;
#pragma unroll
    for (int wr = 0; wr < F::NH; wr++)
#pragma unroll
        for (int j = 0; j < F::NW; j++) {
            int k = fixed_tap<F>(r, c, wr, j);
            if (k < 0) continue;
#pragma unroll
            for (int q = 0; q < 4; q++) {
                uint32_t m = __heq2_mask(fixed_unbits<P>(at[wr][j][q]), fixed_unbits<P>(fixed_pos_bits<T>(k)));
                fn(q, fixed_unbits<P>(fixed_bits(gr[wr][j][q]) & m), first);
            }
            first = false;
        }
}

/* dx at p of input (r, c) of the stride cell, reached by at most 2 of the step's windows, where
   alpha is 1 and beta 0 (UNIT): its windows' gradients where it is their maximum, added as pairs
   of T. Bit for bit the float sum rounded once: two numbers of T whose exponents differ by at
   most 13 (bfloat16: 16) add exactly in float; further apart, the smaller is under half an ulp of
   the larger in T and in float alike, so both roundings give the larger. (One term: the
   gradient itself, no conversion either way.) */
template <typename T, class F, typename P>
__host__ __device__ __forceinline__ void fixed_pair_sum_direct(T *p, const uint32_t (&at)[F::NH][F::NW][4],
                                                              const P (&gr)[F::NH][F::NW][4], int r, int c)
{
    P acc[4];
    fixed_pair_terms<T, F>(at, gr, r, c, [&](int q, P g, bool first) { acc[q] = first ? g : __hadd2(acc[q], g); });
    ocd_vec16<T> b;
    memcpy(&b, acc, 16);
    *reinterpret_cast<ocd_vec16<T> *>(p) = b;
}

/* Backward MAX, channels-last, thread i: the S x S inputs of stride cell t (columns t S ..) in
   steps [chunk * steps, ...) of S rows, 8 channels each; BLEND: a.blend; UNIT: alpha 1 and no
   blend. What depends only on the cell's columns is found once, and the rows of x, dy and dx a
   step reads and writes are pointers moved on by a step, as in the NCHW kernel. Offsets inside
   an image are int (ocd_pooling_applies_cuda_fixed_nhwc). */
template <typename T, class F, int MODE, bool BLEND, bool UNIT, typename C>
__host__ __device__ __forceinline__ void fixed_backward_pairs_thread(const T *__restrict__ x, const T *__restrict__ dy,
                                                                     T *__restrict__ dx, const fixed_args<C> &a,
                                                                     uint32_t i)
{
    typedef typename fixed_lane<T, true>::type P;
    static_assert(F::R == 1 && ocd_vec16<T>::N == 8 && MODE != FIXED_AVG, "one cell of 8 channels, MAX");
    int n, g, chunk, t;
    fixed_decode<true>(a, i, n, g, chunk, t);
    int s0 = chunk * a.steps, s1 = s0 + a.steps < a.cells_h ? s0 + a.steps : a.cells_h;
    int ow0 = t + F::J0, c0 = ow0 * F::S - F::P;
    const int xs2 = (int)a.xs[2], xs3 = (int)a.xs[3], ys2 = (int)a.ys[2];
    /* bit j: window j inside y, with input columns; bit NW + c: the cell's column c inside the
       image; bit NW + S: the span inside it; bits SB on: s1 (a register fewer: else one spills;
       s1 < 2^27, an image's offsets fitting an int, 8 channels a pixel or more) */
    constexpr int SB = F::NW + F::S + 1;
    uint32_t ok = (uint32_t)s1 << SB | (uint32_t)(c0 >= 0 && c0 + F::BN <= a.in_w) << (F::NW + F::S);
#pragma unroll
    for (int j = 0; j < F::NW; j++)
        ok |= (uint32_t)(fixed_count(c0 + j * F::S, F::K, a.in_w) > 0 && (unsigned)(ow0 + j) < (unsigned)a.out_w) << j;
#pragma unroll
    for (int c = 0; c < F::S; c++) ok |= (uint32_t)(t * F::S + c < a.in_w) << (F::NW + c);
#if defined(__CUDA_ARCH__)
    asm("" : "+r"(ok)); /* opaque: else each step finds every bit again */
#endif
    /* x at the span's first column, dy at the first window, dx at the cell's first column */
    const T *xc = x + n * a.xs[0] + g * a.xs[1] + c0 * a.xs[3];
    const T *dyc = dy + n * a.ys[0] + g * a.ys[1] + ow0 * a.ys[3];
    P rv[F::K][F::NW][4], rp[F::K][F::NW][4]; /* MAX: per x row of the window row last found, fixed_pair_row_best */
    uint32_t at[F::NH][F::NW][4]; /* the window rows reaching the step, the last found at each step */
    P gr[F::NH][F::NW][4];        /* and their gradients, kept the same way */
    bool kept = false;
#pragma unroll
    for (int k = 0; k < F::NH - 1; k++, kept = true) {
        int o = s0 + F::J0 + k;
        fixed_pair_window_row<T, F, MODE, true>(xc + (o * F::S - F::P) * xs2, a, o, c0, kept, rv, rp, at[k]);
        fixed_pair_grad<T, F>(dyc + o * ys2, a, o, ok, gr[k]);
    }
    const T *xo = xc + ((s0 + F::H1) * F::S - F::P) * xs2, *dyo = dyc + (s0 + F::H1) * ys2;
    T *dxr = dx + n * a.xs[0] + g * a.xs[1] + t * F::S * a.xs[3] + s0 * F::S * xs2;
    for (int s = s0; s < (int)(ok >> SB); s++, kept = true) {
        int o = s + F::H1, h0 = o * F::S - F::P;
        fixed_pair_grad<T, F>(dyo, a, o, ok, gr[F::NH - 1]); /* issued before the scan: its latency hides */
        if ((ok >> (F::NW + F::S) & 1) && h0 >= 0 && h0 + F::K <= a.in_h) /* the windows inside the image (most) */
            fixed_pair_window_row<T, F, MODE, false>(xo, a, o, c0, kept, rv, rp, at[F::NH - 1]);
        else
            fixed_pair_window_row<T, F, MODE, true>(xo, a, o, c0, kept, rv, rp, at[F::NH - 1]);
#pragma unroll
        for (int r = 0; r < F::S; r++) {
            if (s * F::S + r >= a.in_h) break;
#pragma unroll
            for (int cc = 0; cc < F::S; cc++) {
                if (!(ok >> (F::NW + cc) & 1)) break;
                T *p = dxr + (r * xs2 + cc * xs3);
                if (UNIT && fixed_taps<F>(r, cc) <= 2) { /* folds: an unrolled constant */
                    fixed_pair_sum_direct<T, F>(p, at, gr, r, cc);
                    continue;
                }
                C sum[8] = {}; /* set by its first term (0 + g would only turn -0 into 0) */
                fixed_pair_terms<T, F>(at, gr, r, cc, [&](int q, P g, bool first) {
                    T h[2];
                    memcpy(h, &g, 4);
                    sum[2 * q] = first ? fixed_cvt(h[0]) : sum[2 * q] + fixed_cvt(h[0]);
                    sum[2 * q + 1] = first ? fixed_cvt(h[1]) : sum[2 * q + 1] + fixed_cvt(h[1]);
                });
                if constexpr (BLEND) {
                    fixed_blend<T, 8>(p, sum, a);
                } else { /* dx is not read (and fewer registers are live) */
                    ocd_vec16<T> b;
#pragma unroll
                    for (int u = 0; u < 8; u++) fixed_put(&b.v[u], UNIT ? sum[u] : a.alpha * sum[u]);
                    *reinterpret_cast<ocd_vec16<T> *>(p) = b;
                }
            }
        }
#pragma unroll
        for (int k = 0; k < F::NH - 1; k++) {
            memcpy(at[k], at[k + 1], sizeof at[k]);
            memcpy(gr[k], gr[k + 1], sizeof gr[k]);
        }
        xo += F::S * xs2;
        dyo += ys2;
        dxr += F::S * xs2;
    }
}

template <typename T, int V, bool CLAST, class F, int MODE>
__global__ void __launch_bounds__(256)
pool_fixed_forward(const T *__restrict__ x, T *__restrict__ y, fixed_args<typename ocd_compute<T>::type> a,
                   uint32_t total)
{
    uint32_t i = blockIdx.x * 256u + threadIdx.x;
    if (i < total) fixed_forward_thread<T, V, CLAST, F, MODE>(x, y, a, i);
}

template <typename T, class F, int MODE>
__global__ void __launch_bounds__(256, 3)
pool_fixed_backward(const T *__restrict__ x, const T *__restrict__ dy, T *__restrict__ dx,
                    fixed_args<typename ocd_compute<T>::type> a, uint32_t total)
{
    uint32_t i = blockIdx.x * 256u + threadIdx.x;
    if (i < total) fixed_backward_thread<T, F, MODE>(x, dy, dx, a, i);
}

/* 16 warps an SM (512 threads: up to 128 registers each): at 24 warps (80 registers) the kernel
   spilled; with 127 it keeps each window row's gradients across steps and measured 4% faster
   (0.0835 against 0.0866 ms, H200, 64x256x56x56 f16). In blocks of 128 threads, 4 an SM, it
   measured 0.0661-0.0662 ms against 0.0666-0.0668 in blocks of 256 (eleventh session). */
const unsigned FIXED_PAIRS_THREADS = 128, FIXED_PAIRS_PER_SM = 512;
template <typename T, class F, int MODE, bool BLEND, bool UNIT>
__global__ void __launch_bounds__(FIXED_PAIRS_THREADS, FIXED_PAIRS_PER_SM / FIXED_PAIRS_THREADS)
pool_fixed_backward_pairs(const T *__restrict__ x, const T *__restrict__ dy, T *__restrict__ dx,
                          fixed_args<typename ocd_compute<T>::type> a, uint32_t total)
{
    ocd_wait_ahead(); /* launched early, an op's first kernel (cuda/launch.cuh) */
    ocd_let_next_start();
    uint32_t i = blockIdx.x * FIXED_PAIRS_THREADS + threadIdx.x;
    if (i < total) fixed_backward_pairs_thread<T, F, MODE, BLEND, UNIT>(x, dy, dx, a, i);
}

/* Calls fn(blend, unit), each a std::bool_constant, with the channels-last backward kernel that
   arguments a take: blended (a.blend), unit (alpha 1 and no blend: the gradients of at most 2
   windows added as pairs of T, fixed_pair_sum_direct) or scaled. The launch's choice, and the
   CPU emulation's. */
template <typename C, typename Fn> void fixed_pairs_kernel_for(const fixed_args<C> &a, Fn fn)
{
    if (a.blend) fn(std::true_type(), std::false_type());
    else if (a.alpha == 1) fn(std::false_type(), std::true_type());
    else fn(std::false_type(), std::false_type());
}

/* Which compiled shape serves a 2-D problem: 3 for 3x3 stride 2 pad 1, 2 for 2x2 stride 2 pad 0,
   0 for none. */
int fixed_window_of(const ocd_pooling_problem *p)
{
    if (p->window[1] != p->window[2] || p->stride[1] != 2 || p->stride[2] != 2 || p->pad[1] != p->pad[2]) return 0;
    if (p->window[1] == 3 && p->pad[1] == 1) return 3;
    return p->window[1] == 2 && p->pad[1] == 0 ? 2 : 0;
}

/* Offsets inside an image of x and of y fit an int (the backward kernels' index math). */
bool fixed_int_offsets(const ocd_pooling_problem *p)
{
    int64_t xm = 0, ym = 0;
    for (int i = 1; i < 5; i++) {
        int64_t e = i == 1 ? p->c : p->in[i - 2], f = i == 1 ? p->c : p->out[i - 2];
        xm += e * (p->xs[i] < 0 ? -p->xs[i] : p->xs[i]);
        ym += f * (p->ys[i] < 0 ? -p->ys[i] : p->ys[i]);
    }
    return xm <= INT32_MAX && ym <= INT32_MAX;
}

/* Why the fixed kernels do not serve a problem, or NULL; the layout is the caller's check. */
const char *fixed_applies(const ocd_pooling_problem *p)
{
    if (p->in[0] != 1 || p->out[0] != 1 || p->window[0] != 1 || p->pad[0] != 0) return OCD_REASON_RANK;
    if (fixed_window_of(p) == 0) return "the window is not 3x3 stride 2 pad 1 or 2x2 stride 2 pad 0";
    if (p->backward && !fixed_int_offsets(p)) return "backward: an image spans 2^31 elements or more";
    return p->dtype == CUDNN_DATA_DOUBLE ? OCD_REASON_DTYPE : NULL;
}

/* Sets the extents of the thread index (fixed_decode) and returns the thread count. */
template <bool CLAST, typename C>
uint32_t fixed_extents(fixed_args<C> &a, int64_t n, int groups, int strips, int rows)
{
    int e[3] = {CLAST ? groups : strips, CLAST ? strips : rows, CLAST ? rows : groups};
    a.e0 = ocd_fastdiv_make((uint32_t)e[0]);
    a.e1 = ocd_fastdiv_make((uint32_t)e[1]);
    a.e2 = ocd_fastdiv_make((uint32_t)e[2]);
    return (uint32_t)(n * groups * strips * rows); /* < 2^31: at most one thread per element */
}

/* The kernel arguments of an applicable problem for shape F (forward, or backward when
   BACKWARD); returns the thread count. resident: the threads of the channels-last backward's
   kernel resident on the device at once. */
template <typename T, int V, bool CLAST, class F, bool BACKWARD>
uint32_t fixed_plan(const ocd_pooling_problem *p, fixed_args<typename ocd_compute<T>::type> &a, int64_t resident)
{
    typedef typename ocd_compute<T>::type C;
    constexpr int L = ocd_vec16<T>::N;
    a.in_h = (int)p->in[1];
    a.in_w = (int)p->in[2];
    a.out_h = (int)p->out[1];
    a.out_w = (int)p->out[2];
    const int at[4] = {0, 1, 3, 4};
    for (int i = 0; i < 4; i++) {
        a.xs[i] = p->xs[at[i]] * (i == 1 ? V : 1);
        a.ys[i] = p->ys[at[i]] * (i == 1 ? V : 1);
    }
    a.alpha = (C)p->alpha;
    a.beta = (C)p->beta;
    a.blend = p->beta != 0;
    a.exclude = p->mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    bool avg = p->mode != CUDNN_POOLING_MAX && p->mode != CUDNN_POOLING_MAX_DETERMINISTIC;
    bool rows = BACKWARD ? ocd_cuda_aligned16(p->dx) && (avg || ocd_cuda_aligned16(p->x)) /* x unread averaging */
                         : ocd_cuda_aligned16(p->x) && ocd_cuda_aligned16(p->y) && a.ys[3] == 1 && a.ys[0] % L == 0 &&
                               a.ys[1] % L == 0 && a.ys[2] % L == 0; /* y rows too: whole strips stored as vectors */
    a.vec = !CLAST && rows && a.xs[3] == 1 && a.xs[0] % L == 0 && a.xs[1] % L == 0 && a.xs[2] % L == 0;
    a.cells_h = (a.in_h + F::S - 1) / F::S;
    int groups = (int)(p->c / V);
    if constexpr (!BACKWARD)
        return fixed_extents<CLAST>(a, p->n, groups, (a.out_w + F::R - 1) / F::R, (a.out_h + F::RH - 1) / F::RH);
    /* chunks of 4 steps: a quarter more window rows found than steps walked, and waves enough
       that the last drains little (64x256x56x56 f32 NCHW: 0.1233-0.1238 ms against 0.1301-0.1304
       at 8 steps, 0.1323-0.1330 at 14, 0.1387-0.1392 at 28; f16 channels-last: 5.9 waves of 4
       blocks an SM, against 3.4 at 7 steps, 0.0688 ms against 0.0668). Channels-last, a thread
       walks its whole column of cells when the columns fill one wave of resident threads at least
       3/4 full: no window row is found twice and no wave drains behind another (64x256x56x56 f16:
       448 blocks of 528, 0.0645-0.0648 ms against 0.0666-0.0670 at 4 steps; in blocks of 64
       threads 0.0650, of 32 0.0666-0.0671) */
    int strips = (a.in_w + F::R * F::S - 1) / (F::R * F::S);
    int64_t columns = p->n * groups * strips;
    bool whole = CLAST && columns <= resident && 4 * columns >= 3 * resident;
    a.steps = whole ? a.cells_h : 4;
    return fixed_extents<CLAST>(a, p->n, groups, strips, (a.cells_h + a.steps - 1) / a.steps);
}

/* The forward shape: a thread takes 4 rows of 4 outputs along W (two 16-byte loads of fp32 per
   input row, 9 input rows for the 4 output rows of 3x3/2), or with 16-byte vectors of channels
   2 x 2 (registers: 76 for 16-bit 3x3/2 MAX, no spills). */
template <bool CLAST, int K>
using fixed_forward_shape = fixed_rows<fixed_shape<K, 2, K == 3 ? 1 : 0, CLAST ? 2 : 4>, CLAST ? 2 : 4>;

template <typename T, int V, bool CLAST, int K, int MODE>
cudnnStatus_t launch_fixed_mode(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    fixed_args<typename ocd_compute<T>::type> a;
    const T *x = (const T *)p->x;
    typedef fixed_forward_shape<CLAST, K> F;
    if (!p->backward) {
        uint32_t total = fixed_plan<T, V, CLAST, F, false>(p, a, 0);
        pool_fixed_forward<T, V, CLAST, F, MODE><<<ocd_cuda_blocks(total, 256), 256, 0, h->stream>>>(x, (T *)p->y, a,
                                                                                                    total);
    } else if constexpr (CLAST) {
        if constexpr (sizeof(T) != 2 || MODE == FIXED_AVG) {
            return CUDNN_STATUS_NOT_SUPPORTED; /* ocd_pooling_applies_cuda_fixed_nhwc refuses these */
        } else {
            typedef fixed_shape<K, 2, K == 3 ? 1 : 0, 1> B; /* 1 cell along W, 8 channels */
            const int64_t resident = (int64_t)h->sm_count * FIXED_PAIRS_PER_SM;
            uint32_t total = fixed_plan<T, V, CLAST, B, true>(p, a, resident);
            fixed_pairs_kernel_for(a, [&](auto blend, auto unit) {
                auto kernel = pool_fixed_backward_pairs<T, B, MODE, decltype(blend)::value, decltype(unit)::value>;
                ocd_launch(true, h->cc_major, kernel, dim3(ocd_cuda_blocks(total, FIXED_PAIRS_THREADS)),
                           dim3(FIXED_PAIRS_THREADS), h->stream, x, (const T *)p->dy, (T *)p->dx, a, total);
            });
        }
    } else {
        typedef fixed_shape<K, 2, K == 3 ? 1 : 0, 2> B; /* 2 cells along W: a vector of 4 floats */
        uint32_t total = fixed_plan<T, V, CLAST, B, true>(p, a, 0);
        pool_fixed_backward<T, B, MODE><<<ocd_cuda_blocks(total, 256), 256, 0, h->stream>>>(
            x, (const T *)p->dy, (T *)p->dx, a, total);
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <typename T, int V, bool CLAST, int K>
cudnnStatus_t launch_fixed_window(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    if (p->mode != CUDNN_POOLING_MAX && p->mode != CUDNN_POOLING_MAX_DETERMINISTIC)
        return launch_fixed_mode<T, V, CLAST, K, FIXED_AVG>(h, p);
    if (p->propagate_nan) return launch_fixed_mode<T, V, CLAST, K, FIXED_MAX_NAN>(h, p);
    return launch_fixed_mode<T, V, CLAST, K, FIXED_MAX>(h, p);
}

/* Runs an applicable problem: float with W contiguous; float, half or bfloat16 in 16-byte
   vectors of channels (CLAST). */
template <bool CLAST> cudnnStatus_t launch_fixed(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        if constexpr (std::is_same<T, double>::value || (!CLAST && !std::is_same<T, float>::value)) {
            return CUDNN_STATUS_NOT_SUPPORTED; /* the applies functions refuse these */
        } else {
            constexpr int V = CLAST ? ocd_vec16<T>::N : 1;
            return fixed_window_of(p) == 3 ? launch_fixed_window<T, V, CLAST, 3>(h, p)
                                           : launch_fixed_window<T, V, CLAST, 2>(h, p);
        }
    });
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
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return launch<T, ocd_vec16<T>::N, true>(handle, p);
    });
}

extern "C" cudnnStatus_t ocd_pooling_run_cuda(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    bool clast = p->xs[1] == 1 && p->c > 1;
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return clast ? launch<T, 1, true>(handle, p) : launch<T, 1, false>(handle, p);
    });
}

extern "C" const char *ocd_pooling_applies_cuda_tile_nhwc(cudnnHandle_t handle, const void *problem)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (!p->backward) /* H200, 64x256x56x56 f16, 3x3 stride 2: 0.166 ms here, 0.147 ms there */
        return "forward: the one-window-per-thread vec16 kernel measured faster on channels-last data";
    const char *why = ocd_pooling_applies_cuda_nhwc_vec(handle, problem);
    tile_plan pl;
    return why != NULL ? why : tile_plan_of(p, 16 / (int)ocd_dtype_scalar_size(p->dtype), &pl);
}

extern "C" cudnnStatus_t ocd_pooling_run_cuda_tile_nhwc(cudnnHandle_t handle, const void *problem, void *ws,
                                                        size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return launch_tile<T, ocd_vec16<T>::N, true>(handle, p);
    });
}

extern "C" const char *ocd_pooling_applies_cuda_tile_nchw(cudnnHandle_t handle, const void *problem)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (p->xs[4] != 1 || p->ys[4] != 1) return OCD_REASON_LAYOUT; /* rows of W must be contiguous */
    tile_plan pl;
    return tile_plan_of(p, 1, &pl);
}

extern "C" cudnnStatus_t ocd_pooling_run_cuda_tile_nchw(cudnnHandle_t handle, const void *problem, void *ws,
                                                        size_t ws_bytes)
{
    const ocd_pooling_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return launch_tile<T, 1, false>(handle, p);
    });
}

extern "C" const char *ocd_pooling_applies_cuda_fixed_nchw(cudnnHandle_t handle, const void *problem)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (p->xs[4] != 1 || p->ys[4] != 1) return OCD_REASON_LAYOUT; /* rows of W must be contiguous */
    if (p->dtype != CUDNN_DATA_FLOAT) return OCD_REASON_DTYPE; /* half and bfloat16 take the NHWC layout */
    return fixed_applies(p);
}

extern "C" cudnnStatus_t ocd_pooling_run_cuda_fixed_nchw(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    return launch_fixed<false>(handle, problem_of(problem));
}

extern "C" const char *ocd_pooling_applies_cuda_fixed_nhwc(cudnnHandle_t handle, const void *problem)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (p->backward && p->dtype != CUDNN_DATA_HALF && p->dtype != CUDNN_DATA_BFLOAT16)
        return "backward: float channels-last data takes the tile kernel (cuda:pooling_tile_nhwc_vec16)";
    if (p->backward && p->mode != CUDNN_POOLING_MAX && p->mode != CUDNN_POOLING_MAX_DETERMINISTIC)
        return "backward averaging: the tile kernel (cuda:pooling_tile_nhwc_vec16) takes it";
    const char *why = ocd_pooling_applies_cuda_nhwc_vec(handle, problem);
    return why != NULL ? why : fixed_applies(p);
}

extern "C" cudnnStatus_t ocd_pooling_run_cuda_fixed_nhwc(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    return launch_fixed<true>(handle, problem_of(problem));
}
