/* pooling_fixed.cuh: what the fixed-window pooling kernels share (pooling_fixed.cu: forward, and
   backward on NCHW float; pooling_fixed_pairs.cu: backward MAX on channels-last half and bfloat16).

   The common windows, 3x3 stride 2 pad 1 and 2x2 stride 2 pad 0 (2-D; float, and half and
   bfloat16 channels-last), are compiled for the window (fixed_shape): the general kernels are bound
   by instructions (index decoding, window bounds, the NaN-aware tie rule per element), not by
   memory, and with every offset a constant those fold away. Rows and columns outside the image
   are read clamped into it or as a fill value, so that all of a thread's loads issue without a
   branch and can be in flight together. The per-thread code is host-callable: the CPU emulation
   (tests/emulate/pooling_fixed.cu) runs every thread of a launch.

   Here: the window shapes, the kernel arguments and their plan, loads, and how values combine. */
#ifndef OCD_CUDA_POOLING_FIXED_CUH
#define OCD_CUDA_POOLING_FIXED_CUH

#include "cuda/pooling.cuh"

namespace {

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
/* V lanes at p: one scalar, or a whole 16-byte vector. */
template <typename T, int V, typename C> __host__ __device__ __forceinline__ void fixed_lanes(const T *p, C (&v)[V])
{
    if constexpr (V == 1) {
        v[0] = ocd_cuda_load(p);
    } else {
        ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(p);
#pragma unroll
        for (int u = 0; u < V; u++) v[u] = ocd_cuda_load(&b.v[u]);
    }
}

/* p = alpha * r + beta * p, p read only when blending. */
template <typename T, int V, typename C>
__host__ __device__ __forceinline__ void fixed_blend(T *p, const C (&r)[V], const fixed_args<C> &a)
{
    C old[V];
    if (a.blend) fixed_lanes<T, V>(p, old);
    if constexpr (V == 1) {
        ocd_cuda_store(p, a.blend ? a.alpha * r[0] + a.beta * old[0] : a.alpha * r[0]);
    } else {
        ocd_vec16<T> b;
#pragma unroll
        for (int u = 0; u < V; u++) ocd_cuda_store(&b.v[u], a.blend ? a.alpha * r[u] + a.beta * old[u] : a.alpha * r[u]);
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
   first maximum (problem/pooling.h). */
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
            if (j < HEAD || j >= HEAD + M) v[j][0] = in >> j & 1 ? ocd_cuda_load(&row[j]) : fill;
#pragma unroll
        for (int q = 0; q < M / L; q++) {
            ocd_vec16<T> b = *reinterpret_cast<const ocd_vec16<T> *>(row + HEAD + q * L);
#pragma unroll
            for (int l = 0; l < L; l++) v[HEAD + q * L + l][0] = ocd_cuda_load(&b.v[l]);
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < N; j++) v[j][0] = in >> j & 1 ? ocd_cuda_load(&row[j]) : fill;
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
       that the last drains little. Channels-last, a thread walks its whole column of cells when
       the columns fill one wave of resident threads at least 3/4 full: no window row is found
       twice and no wave drains behind another */
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

} // namespace

/* The channels-last backward of MAX on half and bfloat16 (pooling_fixed_pairs.cu) of window K
   (fixed_window_of) and mode MODE (FIXED_MAX or FIXED_MAX_NAN), launched. */
template <typename T, int K, int MODE>
cudnnStatus_t ocd_cuda_pooling_fixed_pairs_launch(cudnnHandle_t h, const ocd_pooling_problem *p);

#endif /* OCD_CUDA_POOLING_FIXED_CUH */
