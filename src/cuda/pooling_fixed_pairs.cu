/* pooling_fixed_pairs.cu: the fixed-window backward of MAX pooling on channels-last half and
   bfloat16, cuda:pooling_fixed_nhwc_vec16's backward (pooling_fixed.cuh says what the fixed
   kernels share).

   A thread owns one stride cell along W (R = 1) of 8 channels (a 16-byte vector, 4 pairs) and
   walks down steps of S rows like the NCHW kernel (pooling_fixed.cu), finding each window row
   once, the last kept for the next step, two channels an instruction, the maxima's positions kept
   as numbers of T in the pair's halves. The kernel is bound by the ALU pipe (compares, min/max,
   selects, bit operations, address arithmetic): MAX finds windows separably, as the NCHW kernel
   does, the x rows two window rows share found once, the first column of a row's maximum by
   packed not-equal compares, and the rows' positions are moved by arithmetic on the FMA pipe.
   MAX_NAN, and MAX windows whose maximum is -inf or that hold a row of NaN, are scanned whole.
   With alpha 1 and beta 0, an input that at most 2 windows reach takes their gradients added as
   pairs of T, bit for bit the float sum rounded once (fixed_pair_sum_direct); otherwise the
   gradients are summed in float, in y's row-major order. dx is written once a pixel, as a 16-byte
   vector. The kernel is launched early (cuda/launch.cuh: its blocks resident while the kernel
   ahead drains), and where the columns of cells fill a wave of resident threads, a thread walks
   its whole column (fixed_plan): no window row is found twice and no wave drains behind
   another. */
#include "cuda/launch.cuh"
#include "cuda/pooling_fixed.cuh"

namespace {

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
   an image are int (ocd_cuda_pooling_fixed_nhwc_applies). */
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
                    sum[2 * q] = first ? ocd_cuda_load(&h[0]) : sum[2 * q] + ocd_cuda_load(&h[0]);
                    sum[2 * q + 1] = first ? ocd_cuda_load(&h[1]) : sum[2 * q + 1] + ocd_cuda_load(&h[1]);
                });
                if constexpr (BLEND) {
                    fixed_blend<T, 8>(p, sum, a);
                } else { /* dx is not read (and fewer registers are live) */
                    ocd_vec16<T> b;
#pragma unroll
                    for (int u = 0; u < 8; u++) ocd_cuda_store(&b.v[u], UNIT ? sum[u] : a.alpha * sum[u]);
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

/* 16 warps an SM (512 threads: up to 128 registers each): with fewer registers the kernel spills,
   and with 127 it keeps each window row's gradients across steps; blocks of 128 threads, 4 an SM. */
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

} // namespace

template <typename T, int K, int MODE>
cudnnStatus_t ocd_cuda_pooling_fixed_pairs_launch(cudnnHandle_t h, const ocd_pooling_problem *p)
{
    constexpr int V = ocd_vec16<T>::N;
    fixed_args<typename ocd_compute<T>::type> a;
    typedef fixed_shape<K, 2, K == 3 ? 1 : 0, 1> B; /* 1 cell along W, 8 channels */
    const int64_t resident = (int64_t)h->sm_count * FIXED_PAIRS_PER_SM;
    uint32_t total = fixed_plan<T, V, true, B, true>(p, a, resident);
    fixed_pairs_kernel_for(a, [&](auto blend, auto unit) {
        auto kernel = pool_fixed_backward_pairs<T, B, MODE, decltype(blend)::value, decltype(unit)::value>;
        ocd_launch(true, h->cc_major, kernel, dim3(ocd_cuda_blocks(total, FIXED_PAIRS_THREADS)),
                   dim3(FIXED_PAIRS_THREADS), h->stream, (const T *)p->x, (const T *)p->dy, (T *)p->dx, a, total);
    });
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

#define OCD_POOLING_PAIRS(T, K, MODE) \
    template cudnnStatus_t ocd_cuda_pooling_fixed_pairs_launch<T, K, MODE>(cudnnHandle_t, const ocd_pooling_problem *);
OCD_POOLING_PAIRS(__half, 2, FIXED_MAX)
OCD_POOLING_PAIRS(__half, 2, FIXED_MAX_NAN)
OCD_POOLING_PAIRS(__half, 3, FIXED_MAX)
OCD_POOLING_PAIRS(__half, 3, FIXED_MAX_NAN)
OCD_POOLING_PAIRS(__nv_bfloat16, 2, FIXED_MAX)
OCD_POOLING_PAIRS(__nv_bfloat16, 2, FIXED_MAX_NAN)
OCD_POOLING_PAIRS(__nv_bfloat16, 3, FIXED_MAX)
OCD_POOLING_PAIRS(__nv_bfloat16, 3, FIXED_MAX_NAN)
