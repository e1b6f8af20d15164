/* pooling_fixed.cu: the fixed-window pooling kernels (pooling_fixed.cuh says what they share):
   forward in both layouts, backward on NCHW float, and the entries of the family.

   Forward, a thread takes RH rows of R adjacent outputs along W and reads each input row of their
   windows once (rows that vertically adjacent windows share, once), as one span of columns held
   in registers (the middle of the span as 16-byte loads when W is contiguous and rows are
   aligned); a maximum is fmax (max.NaN when NaN propagates), taken per input row over each
   window's columns, then over the window's rows, and on 16-bit channels as packed pairs.

   Backward NCHW, a thread owns the inputs of R = 2 stride cells along W, one 16-byte vector of
   floats a row, and walks down steps of S rows: each window row reaching a step is found once,
   separably: each x row gives per window its best and first position (a row that two window rows
   share, once), then the window's rows are compared in order, the last window row kept for the
   next step. The kernel is bound by the ALU pipe, whose instructions the separable search cuts;
   the search needs every x row of a window row loaded before any is compared, so the loads are
   software-pipelined: a step's x rows and dy go into registers during the step before, once its
   compares are done and before its sums and stores, and the step after's are prefetched into L1.
   What depends only on the thread's columns is found once, and rows outside the image are read
   without a branch. Then each input sums the gradient of the windows whose maximum it is, which
   window positions it can be being a compile-time constant, and dx rows are written once, as
   vectors, without atomics.

   Entries: cuda:pooling_fixed_nchw (rows of W contiguous, 4 x 4 outputs forward; float only) and
   cuda:pooling_fixed_nhwc_vec16 (16-byte vectors of channels a thread, 2 x 2 outputs forward;
   backward, MAX in half and bfloat16 only: pooling_fixed_pairs.cu; the tile kernel takes the
   float and averaging backward). */
#include "cuda/pooling_fixed.cuh"

namespace {

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
            for (int l = 0; l < LV; l++) v[F::P + q * LV + l][0] = MODE == FIXED_AVG && !in ? 0 : ocd_cuda_load(&b.v[l]);
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
    for (int j = 0; j < F::NW; j++) ld.dy[j] = row_in && (st.ok >> j & 1) ? ocd_cuda_load(&dyo[j]) : (C)0;
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
    if (p->dtype == CUDNN_DATA_INT8) return OCD_REASON_DTYPE; /* int8: cuda:pooling_direct */
    if (p->in[0] != 1 || p->out[0] != 1 || p->window[0] != 1 || p->pad[0] != 0) return OCD_REASON_RANK;
    if (fixed_window_of(p) == 0) return "the window is not 3x3 stride 2 pad 1 or 2x2 stride 2 pad 0";
    if (p->mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING)
        for (int i = 1; i < OCD_POOL_DIMS; i++) /* the fixed kernels divide by the window's volume */
            if ((p->out[i] - 1) * p->stride[i] - p->pad[i] + p->window[i] > p->in[i] + p->pad[i])
                return "a window hangs over the padding's end: its divisor counts fewer taps than the window's";
    if (p->backward && !fixed_int_offsets(p)) return "backward: an image spans 2^31 elements or more";
    return p->dtype == CUDNN_DATA_DOUBLE ? OCD_REASON_DTYPE : NULL;
}

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
        if constexpr (sizeof(T) != 2 || MODE == FIXED_AVG)
            return CUDNN_STATUS_NOT_SUPPORTED; /* ocd_cuda_pooling_fixed_nhwc_applies refuses these */
        else
            return ocd_cuda_pooling_fixed_pairs_launch<T, K, MODE>(h, p);
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

} // namespace

extern "C" const char *ocd_cuda_pooling_fixed_nchw_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (p->xs[4] != 1 || p->ys[4] != 1) return OCD_REASON_LAYOUT; /* rows of W must be contiguous */
    if (p->dtype != CUDNN_DATA_FLOAT) return OCD_REASON_DTYPE; /* half and bfloat16 take the NHWC layout */
    return fixed_applies(p);
}

extern "C" cudnnStatus_t ocd_cuda_pooling_fixed_nchw(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    return launch_fixed<false>(handle, problem_of(problem));
}

extern "C" const char *ocd_cuda_pooling_fixed_nhwc_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_pooling_problem *p = problem_of(problem);
    if (p->backward && p->dtype != CUDNN_DATA_HALF && p->dtype != CUDNN_DATA_BFLOAT16)
        return "backward: float channels-last data takes the tile kernel (cuda:pooling_tile_nhwc_vec16)";
    if (p->backward && p->mode != CUDNN_POOLING_MAX && p->mode != CUDNN_POOLING_MAX_DETERMINISTIC)
        return "backward averaging: the tile kernel (cuda:pooling_tile_nhwc_vec16) takes it";
    const char *why = ocd_cuda_pooling_nhwc_vec_applies(handle, problem);
    return why != NULL ? why : fixed_applies(p);
}

extern "C" cudnnStatus_t ocd_cuda_pooling_fixed_nhwc(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    return launch_fixed<true>(handle, problem_of(problem));
}
