/* softmax.cu: softmax forward and backward on the GPU (the math is in ops/softmax.h).

   Every kernel reads each input once from memory and writes the output once, except where a
   slice is too long to stay on chip. A softmax moves little data per element, so what decides
   the speed is how many bytes each multiprocessor keeps in flight: the first entry of each
   layout keeps several 16-byte loads in flight per thread. Entries, most specialised first:
   - cuda:softmax_rows_packed: cuda:softmax_rows_lanes for half and bfloat16, in pairs. Forward
     in about 6 instructions an element where the general kernel takes 33 (measured, Nsight
     Compute, 256 halves a slice: instruction-bound at 67% of copy speed): the maximum over the
     stored pairs, e^(x - m) as one FMA and one ex2.approx (log2 e folded into the FMA that
     subtracts the maximum), conversions two at a time, alpha folded into 1 / S, no branch per
     element. Backward: y and dy kept as stored, converted and rounded two at a time (the general
     kernel rounds half one element at a time: 86% of copy speed against 96% for bfloat16).
   - cuda:softmax_rows_lanes: contiguous slices of aligned 16-byte vectors (CHANNEL over NHWC with
     C a multiple of 8 halves or 4 floats, INSTANCE over a small packed image), short enough for
     16 lanes: a group of the fewest lanes (a power of two) that holds the slice with 4 vector
     loads a lane (2 of y and 2 of dy backward) takes it, several slices per warp. For 256 halves
     that is 8 lanes and 4 slices a warp, 2 KiB in flight per warp and 3-step shuffles, where one
     warp per slice keeps 512 bytes in flight and waits on 5-step shuffles twice.
   - cuda:softmax_rows_warp: contiguous slices of at most 1024 elements: one warp per slice, the
     slice in registers, 16-byte loads when the layout allows.
   - cuda:softmax_rows_block: contiguous slices longer than that: one block per slice, or, for a
     slice longer than one block holds, several blocks that each keep their part in registers and
     exchange partial statistics through the handle's scratch (scratch.cuh). Blocks take their
     part in the order they start (an atomic ticket), so the blocks of one slice are resident
     together as long as a slice has no more parts than the GPU has multiprocessors; longer slices
     are read twice, streaming.
   - cuda:softmax_cols_regs: float slices of 32 to 256 elements strided over a contiguous inner
     dim (CHANNEL over NCHW) whose rows are whole aligned 16-byte vectors: a block takes 32 inner
     columns, 8 lanes along them with a vector of 4 each and the rest of its threads splitting the
     slice, every element in a register from its one load to its store (tile_vec moves the tile
     through shared memory: 71% of copy speed forward, 78% backward, C = 256).
   - cuda:softmax_tile_vec: slices strided over a contiguous inner dim (CHANNEL over NCHW) whose
     rows are whole aligned 16-byte vectors (inner dim and strides multiples of 4 floats or 8
     halves) and whose 128-byte-wide column tile, all of C, fits in 80 KiB of shared memory (C
     <= 640 forward, 320 backward, any type; half that before sm_80): a block moves its tile in with
     8 vector loads in flight per thread and source (32 KiB a block for C = 256 floats), reduces
     the columns there and writes with vector stores.
   - cuda:softmax_tile: any slice strided over a contiguous inner dim: a block takes 32
     neighbouring slices, its threads along the inner dim (coalesced, 4 scalar loads in flight),
     and keeps the tile in shared memory between its two passes when it fits.
   - cuda:softmax_generic: any layout; one warp per slice, offsets decoded per element.
   Statistics are those of ops/softmax.h, in float (double for double data); where the slice
   stays on chip, the forward computes each e^(x - m) once and keeps it for the output (16-bit
   tiles compute it twice rather than round it). 16-bit data use the fast __expf (rows_packed
   2^x, of the same accuracy). An element of
   -inf (a masked logit) adds nothing to the sums; a NaN makes its slice NaN. */
#include <type_traits>

#include "core/dtype.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/scratch.cuh"
#include "cuda/types.cuh"
#include "ops/softmax.h"

namespace {

template <typename T> struct sm_args {
    typedef typename ocd_compute<T>::type C;
    const T *src0, *src1; /* forward x; backward y, dy */
    T *dst;
    ocd_dim_group slice, batch;
    uint32_t len, rows; /* elements per slice, slices */
    C alpha, beta;
    bool blend, log;
};

template <typename T> sm_args<T> args_of(const ocd_softmax_problem *p)
{
    typedef typename ocd_compute<T>::type C;
    sm_args<T> a;
    a.src0 = (const T *)p->io.src[0];
    a.src1 = (const T *)p->io.src[1];
    a.dst = (T *)p->io.dst;
    a.slice = p->slice;
    a.batch = p->batch;
    a.len = (uint32_t)ocd_dim_group_size(&p->slice);
    a.rows = (uint32_t)ocd_dim_group_size(&p->batch);
    a.alpha = (C)p->io.alpha;
    a.beta = (C)p->io.beta;
    a.blend = p->io.beta != 0;
    a.log = p->log;
    return a;
}

/* ---- statistics ------------------------------------------------------------------------------- */

/* e^x in the compute type of storage type T: the fast __expf for 16-bit data, whose error lies
   below their rounding (softmax would otherwise be bound by arithmetic there); exact otherwise. */
template <typename T> struct sm_math {
    static __device__ __forceinline__ typename ocd_compute<T>::type ex(typename ocd_compute<T>::type x) { return exp(x); }
};
template <> struct sm_math<__half> {
    static __device__ __forceinline__ float ex(float x) { return __expf(x); }
};
template <> struct sm_math<__nv_bfloat16> {
    static __device__ __forceinline__ float ex(float x) { return __expf(x); }
};

/* Forward: the running maximum m and the sum s of e^(v - m). Backward: s alone. */
template <typename C> struct stat {
    C m, s;
};

template <typename C> __device__ __forceinline__ C neg_inf()
{
    return -(C)INFINITY;
}

/* e^(v - m), 0 for v = -inf (so that -inf - -inf never appears). */
template <typename T, typename C> __device__ __forceinline__ C term(C v, C m)
{
    return v == neg_inf<C>() ? (C)0 : sm_math<T>::ex(v - m);
}

template <typename T, typename C> __device__ __forceinline__ void add(stat<C> &st, C v)
{
    if (v > st.m) {
        st.s = st.s * term<T>(st.m, v) + (C)1;
        st.m = v;
    } else {
        st.s += term<T>(v, st.m);
    }
}

/* s rescaled from maximum m to maximum to (m <= to); 0 stays 0 (an empty part). */
template <typename T, typename C> __device__ __forceinline__ C rescale(C s, C m, C to)
{
    return s == (C)0 ? (C)0 : s * term<T>(m, to);
}

/* Sum or maximum over each aligned group of W lanes (a power of two, at most 32), in every lane of
   the group; the whole warp takes part. With LO > 1, over the lanes of the group that agree in
   their lane index modulo LO (a power of two below W). */
template <int W = 32, int LO = 1, typename C> __device__ __forceinline__ C warp_sum(C v)
{
#pragma unroll
    for (int o = W / 2; o >= LO; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <int W = 32, int LO = 1, typename C> __device__ __forceinline__ C warp_max(C v)
{
#pragma unroll
    for (int o = W / 2; o >= LO; o >>= 1) {
        C w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w > v ? w : v;
    }
    return v;
}

/* The combination of the lanes' forward statistics, in every lane. */
template <typename T, typename C> __device__ __forceinline__ stat<C> warp_combine(stat<C> st)
{
    C m = warp_max(st.m);
    return stat<C>{m, warp_sum(rescale<T>(st.s, st.m, m))};
}

/* Sum or maximum over the block, in every thread; red holds 33 values. */
template <bool MAX, typename C> __device__ C block_reduce(C v, C *red)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? red[lane] : MAX ? neg_inf<C>() : (C)0;
        v = MAX ? warp_max(v) : warp_sum(v);
        if (lane == 0) red[32] = v;
    }
    __syncthreads();
    v = red[32];
    __syncthreads(); /* red may be used again */
    return v;
}

template <typename T, typename C> __device__ stat<C> block_combine(stat<C> st, C *red)
{
    C m = block_reduce<true>(st.m, red);
    return stat<C>{m, block_reduce<false>(rescale<T>(st.s, st.m, m), red)};
}

/* What the output pass needs: forward (m, 1 / S) or, for LOG, (m, m + log S); backward (-, sum). */
template <bool BWD, typename C> __device__ __forceinline__ stat<C> finish(const stat<C> &st, bool lg)
{
    if (BWD) return st;
    return stat<C>{st.m, lg ? st.m + log(st.s) : (C)1 / st.s};
}

/* The result at one element, from a = x (forward) or y, b = dy (backward). PRE: the forward
   (but LOG) has already replaced a by e^(a - m). */
template <typename T, bool BWD, bool PRE, typename C> __device__ __forceinline__ C result(const stat<C> &k, bool lg, C a, C b)
{
    if (BWD) return lg ? b - sm_math<T>::ex(a) * k.s : a * (b - k.s);
    if (lg) return a - k.s;
    return (PRE ? a : sm_math<T>::ex(a - k.m)) * k.s;
}

/* The backward statistic of one element. */
template <typename C> __device__ __forceinline__ C dot_term(bool lg, C a, C b)
{
    return lg ? b : a * b;
}

/* ---- a warp, or a group of its lanes, per contiguous slice -------------------------------------- */

constexpr int WARP_ROWS = 8; /* warps per block */

/* 16-byte loads per lane in cuda:softmax_rows_lanes, over all the sources: a warp keeps 2 KiB in
   flight, four times what one warp per 512-byte slice keeps (LANE_VECS / 2 of y and of dy each in
   the backward). The lanes of a slice are the fewest (a power of two) that hold it that way. */
constexpr int LANE_VECS = 4, LANES_MAX = 16;

/* Groups of LANES lanes (a power of two, at most 32) per slice, 32 / LANES slices per warp; lane l
   of a group holds elements (k * LANES + l) * V + v for k < E / V, v < V. A group past the last
   slice computes a copy of the last one and stores nothing, so that every lane of the warp takes
   part in the shuffles. */
template <typename T, bool BWD, int LANES, int E, int V>
__global__ void __launch_bounds__(32 * WARP_ROWS) rows_warp(sm_args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    uint32_t first = (blockIdx.x * WARP_ROWS + (threadIdx.x >> 5)) * (32 / LANES);
    if (first >= a.rows) return;
    uint32_t row = first + (threadIdx.x & 31) / LANES, lane = threadIdx.x % LANES;
    bool live = row < a.rows;
    if (!live) row = a.rows - 1;
    const T *s0 = a.src0 + ocd_cuda_group_offset(a.batch, 0, row);
    const T *s1 = BWD ? a.src1 + ocd_cuda_group_offset(a.batch, 1, row) : nullptr;
    T *d = a.dst + ocd_cuda_group_offset(a.batch, BWD ? 2 : 1, row);
    C va[E], vb[E];
#pragma unroll
    for (int k = 0; k < E / V; k++) {
        uint32_t j = (k * LANES + lane) * V;
        if (j < a.len) {
            ocd_cuda_load_n<T, V>(s0 + j, &va[k * V]);
            if (BWD) ocd_cuda_load_n<T, V>(s1 + j, &vb[k * V]);
        }
    }
    stat<C> st{neg_inf<C>(), (C)0};
#pragma unroll
    for (int k = 0; k < E / V; k++) {
        if ((k * LANES + lane) * V >= a.len) continue;
#pragma unroll
        for (int v = 0; v < V; v++) {
            if (BWD) st.s += dot_term(a.log, va[k * V + v], vb[k * V + v]);
            else st.m = va[k * V + v] > st.m ? va[k * V + v] : st.m;
        }
    }
    if (BWD) {
        st.s = warp_sum<LANES>(st.s);
    } else {
        st.m = warp_max<LANES>(st.m);
#pragma unroll
        for (int k = 0; k < E / V; k++) {
            if ((k * LANES + lane) * V >= a.len) continue;
#pragma unroll
            for (int v = 0; v < V; v++) {
                C e = term<T>(va[k * V + v], st.m);
                st.s += e;
                if (!a.log) va[k * V + v] = e;
            }
        }
        st.s = warp_sum<LANES>(st.s);
    }
    stat<C> fin = finish<BWD>(st, a.log);
#pragma unroll
    for (int k = 0; k < E / V; k++) {
        uint32_t j = (k * LANES + lane) * V;
        if (j >= a.len || !live) continue;
        C r[V];
#pragma unroll
        for (int v = 0; v < V; v++) r[v] = result<T, BWD, true>(fin, a.log, va[k * V + v], BWD ? vb[k * V + v] : (C)0);
        ocd_cuda_blend_n<T, V>(d + j, r, a.alpha, a.beta, a.blend);
    }
}

/* ---- 16-bit forward over lane groups: packed pairs ----------------------------------------------- */

/* Pairs of a 16-bit storage type as one 32-bit word: both converted at once, and NEG_INF, the
   bits of two -inf. __hmax2 takes the maximum of the stored values, which is exact. */
template <typename T> struct pair16;
template <> struct pair16<__half> {
    typedef __half2 P;
    static constexpr uint32_t NEG_INF = 0xfc00fc00u;
    static __device__ __forceinline__ float2 to_float(P p) { return __half22float2(p); }
    static __device__ __forceinline__ P of_float(float lo, float hi) { return __floats2half2_rn(lo, hi); }
};
template <> struct pair16<__nv_bfloat16> {
    typedef __nv_bfloat162 P;
    static constexpr uint32_t NEG_INF = 0xff80ff80u;
    static __device__ __forceinline__ float2 to_float(P p) { return __bfloat1622float2(p); }
    static __device__ __forceinline__ P of_float(float lo, float hi) { return __floats2bfloat162_rn(lo, hi); }
};

template <typename D, typename S> __device__ __forceinline__ D bits(S s)
{
    static_assert(sizeof(D) == sizeof(S), "a bit cast keeps the size");
    D d;
    memcpy(&d, &s, sizeof d);
    return d;
}

/* 2^x in one ex2.approx (denormal results flush to 0: they weigh nothing beside the maximum's 1). */
__device__ __forceinline__ float exp2_ftz(float x)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

constexpr float LOG2E = 1.4426950408889634f;

/* The offset of slice `row`: one multiply for a batch of one dim (packed NHWC), else decoded. */
__device__ __forceinline__ int64_t row_offset(const ocd_dim_group &g, int t, uint32_t row)
{
    return g.rank == 1 ? (int64_t)row * g.strides[t][0] : ocd_cuda_group_offset(g, t, row);
}

/* Stores the 8 results r of a 16-byte vector at p, converted and rounded two at a time, as
   alpha * result + beta * p when blending (alpha is in r already). */
template <typename T>
__device__ __forceinline__ void store_pairs_blended(T *p, const sm_args<T> &a, float (&r)[8])
{
    typedef pair16<T> pr;
    typedef typename pr::P P;
    uint4 old = a.blend ? *reinterpret_cast<const uint4 *>(p) : make_uint4(0, 0, 0, 0);
    const uint32_t ow[4] = {old.x, old.y, old.z, old.w};
    uint32_t out[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        if (a.blend) {
            float2 o = pr::to_float(bits<P>(ow[i]));
            r[2 * i] = fmaf(a.beta, o.x, r[2 * i]), r[2 * i + 1] = fmaf(a.beta, o.y, r[2 * i + 1]);
        }
        out[i] = bits<uint32_t>(pr::of_float(r[2 * i], r[2 * i + 1]));
    }
    *reinterpret_cast<uint4 *>(p) = make_uint4(out[0], out[1], out[2], out[3]);
}

/* The forward of rows_warp<T, false, LANES, E, 8> (same lanes, slices and vectors: E = VECS * 8)
   for 16-bit T, in fewer instructions an element: the maximum over the stored pairs (half an
   instruction an element), e^(x - m) as 2^(x log2e - m log2e) in one FMA and one ex2.approx,
   conversions two at a time, alpha folded into 1 / S (alpha and -alpha (m + log S) for LOG), and
   no branch per element: a vector past the slice's end holds -inf, which weighs nothing, so the
   lanes test their vectors only to skip loads and stores. As in rows_warp, an element of -inf
   gives 0 (LOG: -inf), a slice of -inf only or holding a NaN gives NaN. LOG keeps x as loaded and
   the others e^(x - m) in float, so that each output is rounded once. */
template <typename T, int LANES, bool LOG>
__global__ void __launch_bounds__(32 * WARP_ROWS) rows_packed(sm_args<T> a)
{
    typedef pair16<T> pr;
    typedef typename pr::P P;
    constexpr int VECS = LANE_VECS, W = 4; /* vectors a lane, 32-bit words (pairs) a vector */
    uint32_t first = (blockIdx.x * WARP_ROWS + (threadIdx.x >> 5)) * (32 / LANES);
    if (first >= a.rows) return;
    uint32_t row = first + (threadIdx.x & 31) / LANES, lane = threadIdx.x % LANES;
    bool live = row < a.rows;
    if (!live) row = a.rows - 1;
    const T *s = a.src0 + row_offset(a.batch, 0, row);
    T *d = a.dst + row_offset(a.batch, 1, row);
    uint32_t w[VECS][W];
#pragma unroll
    for (int k = 0; k < VECS; k++) {
        uint32_t j = (k * LANES + lane) * 8;
        uint4 v = make_uint4(pr::NEG_INF, pr::NEG_INF, pr::NEG_INF, pr::NEG_INF);
        if (j < a.len) v = *reinterpret_cast<const uint4 *>(s + j);
        w[k][0] = v.x, w[k][1] = v.y, w[k][2] = v.z, w[k][3] = v.w;
    }
    P m2 = bits<P>(w[0][0]);
#pragma unroll
    for (int k = 0; k < VECS; k++)
#pragma unroll
        for (int i = 0; i < W; i++) m2 = __hmax2(m2, bits<P>(w[k][i]));
    float2 mf = pr::to_float(m2);
    float m = warp_max<LANES>(mf.x > mf.y ? mf.x : mf.y);
    float nb = m == -INFINITY ? 0.0f : -m * LOG2E; /* -inf - -inf never appears */
    float e[LOG ? 1 : VECS * W * 2], s0 = 0, s1 = 0;
#pragma unroll
    for (int k = 0; k < VECS; k++)
#pragma unroll
        for (int i = 0; i < W; i++) {
            float2 x = pr::to_float(bits<P>(w[k][i]));
            float e0 = exp2_ftz(fmaf(x.x, LOG2E, nb)), e1 = exp2_ftz(fmaf(x.y, LOG2E, nb));
            s0 += e0;
            s1 += e1;
            if (!LOG) e[(k * W + i) * 2] = e0, e[(k * W + i) * 2 + 1] = e1;
        }
    float sum = warp_sum<LANES>(s0 + s1);
    if (!live) return;
    /* r = sc * e (sc = alpha / S), or LOG sc * x + off = alpha (x - (m + log S)) */
    float sc = LOG ? a.alpha : a.alpha / sum, off = LOG ? -a.alpha * (m + log(sum)) : 0.0f;
#pragma unroll
    for (int k = 0; k < VECS; k++) {
        uint32_t j = (k * LANES + lane) * 8;
        if (j >= a.len) continue;
        float r[8];
#pragma unroll
        for (int i = 0; i < W; i++) {
            if (LOG) {
                float2 x = pr::to_float(bits<P>(w[k][i]));
                r[2 * i] = fmaf(x.x, sc, off), r[2 * i + 1] = fmaf(x.y, sc, off);
            } else {
                r[2 * i] = e[(k * W + i) * 2] * sc, r[2 * i + 1] = e[(k * W + i) * 2 + 1] * sc;
            }
        }
        store_pairs_blended<T>(d + j, a, r);
    }
}

/* The backward of rows_warp<T, true, LANES, E, 8> (same lanes, slices and vectors: E = VECS * 8)
   for 16-bit T: y and dy stay in registers as loaded, pairs convert two at a time on the way out
   (rows_warp converts and rounds one element at a time), and a vector past the slice's end holds
   zeros, which add nothing to the sum, so that no element needs a branch. */
template <typename T, int LANES, bool LOG>
__global__ void __launch_bounds__(32 * WARP_ROWS) rows_packed_bwd(sm_args<T> a)
{
    typedef pair16<T> pr;
    typedef typename pr::P P;
    constexpr int VECS = LANE_VECS / 2, W = 4; /* vectors a lane and source, pairs a vector */
    uint32_t first = (blockIdx.x * WARP_ROWS + (threadIdx.x >> 5)) * (32 / LANES);
    if (first >= a.rows) return;
    uint32_t row = first + (threadIdx.x & 31) / LANES, lane = threadIdx.x % LANES;
    bool live = row < a.rows;
    if (!live) row = a.rows - 1;
    const T *sy = a.src0 + row_offset(a.batch, 0, row), *sg = a.src1 + row_offset(a.batch, 1, row);
    T *d = a.dst + row_offset(a.batch, 2, row);
    uint32_t wy[VECS][W], wg[VECS][W];
#pragma unroll
    for (int k = 0; k < VECS; k++) {
        uint32_t j = (k * LANES + lane) * 8;
        uint4 y = make_uint4(0, 0, 0, 0), g = y;
        if (j < a.len) {
            y = *reinterpret_cast<const uint4 *>(sy + j);
            g = *reinterpret_cast<const uint4 *>(sg + j);
        }
        wy[k][0] = y.x, wy[k][1] = y.y, wy[k][2] = y.z, wy[k][3] = y.w;
        wg[k][0] = g.x, wg[k][1] = g.y, wg[k][2] = g.z, wg[k][3] = g.w;
    }
    float s0 = 0, s1 = 0;
#pragma unroll
    for (int k = 0; k < VECS; k++)
#pragma unroll
        for (int i = 0; i < W; i++) {
            float2 y = pr::to_float(bits<P>(wy[k][i])), g = pr::to_float(bits<P>(wg[k][i]));
            s0 += dot_term(LOG, y.x, g.x);
            s1 += dot_term(LOG, y.y, g.y);
        }
    stat<float> fin{0.0f, warp_sum<LANES>(s0 + s1)};
    if (!live) return;
#pragma unroll
    for (int k = 0; k < VECS; k++) {
        uint32_t j = (k * LANES + lane) * 8;
        if (j >= a.len) continue;
        float r[8];
#pragma unroll
        for (int i = 0; i < W; i++) {
            float2 y = pr::to_float(bits<P>(wy[k][i])), g = pr::to_float(bits<P>(wg[k][i]));
            r[2 * i] = a.alpha * result<T, true, true>(fin, LOG, y.x, g.x);
            r[2 * i + 1] = a.alpha * result<T, true, true>(fin, LOG, y.y, g.y);
        }
        store_pairs_blended<T>(d + j, a, r);
    }
}

/* ---- blocks per contiguous slice -------------------------------------------------------------- */

constexpr int BLOCK = 512;

/* Where the blocks of a split slice meet: a ticket handing out (slice, part) in start order, a
   counter of published parts per slice, and the parts' statistics (m, s) per slice and part. All
   counters are zeroed before the launch. */
struct split_sync {
    unsigned *ticket, *count;
    void *parts;
};

/* RESIDENT: thread t holds elements begin + (k * BLOCK + t) * V + v of its part, k < E / V, in
   registers; otherwise it streams over its part twice. */
template <typename T, bool BWD, int E, int V, bool RESIDENT>
__global__ void __launch_bounds__(BLOCK) rows_block(sm_args<T> a, uint32_t parts, uint32_t part_len, split_sync sync)
{
    typedef typename ocd_compute<T>::type C;
    __shared__ C red[33];
    __shared__ unsigned s_id;
    uint32_t id = blockIdx.x;
    if (parts > 1) {
        if (threadIdx.x == 0) s_id = atomicAdd(sync.ticket, 1u);
        __syncthreads();
        id = s_id;
    }
    uint32_t row = id / parts, part = id % parts;
    uint32_t begin = part * part_len, end = min(a.len, begin + part_len);
    const T *s0 = a.src0 + ocd_cuda_group_offset(a.batch, 0, row);
    const T *s1 = BWD ? a.src1 + ocd_cuda_group_offset(a.batch, 1, row) : nullptr;
    T *d = a.dst + ocd_cuda_group_offset(a.batch, BWD ? 2 : 1, row);

    C va[RESIDENT ? E : 1], vb[RESIDENT ? E : 1];
    stat<C> st{neg_inf<C>(), (C)0};
    if (RESIDENT) {
#pragma unroll
        for (int k = 0; k < E / V; k++) {
            uint32_t j = begin + (k * BLOCK + threadIdx.x) * V;
            if (j < end) {
                ocd_cuda_load_n<T, V>(s0 + j, &va[k * V]);
                if (BWD) ocd_cuda_load_n<T, V>(s1 + j, &vb[k * V]);
            }
        }
        /* forward: this part's maximum, then e^(x - m) in place of x (but for LOG) and their sum */
#pragma unroll
        for (int k = 0; k < E / V; k++) {
            if (begin + (k * BLOCK + threadIdx.x) * V >= end) continue;
#pragma unroll
            for (int v = 0; v < V; v++) {
                if (BWD) st.s += dot_term(a.log, va[k * V + v], vb[k * V + v]);
                else st.m = va[k * V + v] > st.m ? va[k * V + v] : st.m;
            }
        }
        if (!BWD) {
            st.m = block_reduce<true>(st.m, red);
#pragma unroll
            for (int k = 0; k < E / V; k++) {
                if (begin + (k * BLOCK + threadIdx.x) * V >= end) continue;
#pragma unroll
                for (int v = 0; v < V; v++) {
                    C e = term<T>(va[k * V + v], st.m);
                    st.s += e;
                    if (!a.log) va[k * V + v] = e;
                }
            }
        }
    } else {
        for (uint32_t j = begin + threadIdx.x * V; j < end; j += BLOCK * V) {
            C x[V], y[V];
            ocd_cuda_load_n<T, V>(s0 + j, x);
            if (BWD) ocd_cuda_load_n<T, V>(s1 + j, y);
#pragma unroll
            for (int v = 0; v < V; v++) {
                if (BWD) st.s += dot_term(a.log, x[v], y[v]);
                else add<T>(st, x[v]);
            }
        }
    }
    if (BWD || RESIDENT) st.s = block_reduce<false>(st.s, red);
    else st = block_combine<T>(st, red);
    C part_m = st.m; /* the maximum the resident exponentials were taken against */

    if (parts > 1) { /* publish this part, wait for the slice's others, combine them all */
        C *p = (C *)sync.parts + (size_t)row * parts * 2;
        if (threadIdx.x == 0) {
            p[2 * part] = st.m;
            p[2 * part + 1] = st.s;
            __threadfence();
            atomicAdd(&sync.count[row], 1u);
            while (*(volatile unsigned *)&sync.count[row] < parts) __nanosleep(64);
            __threadfence();
        }
        __syncthreads();
        stat<C> all{neg_inf<C>(), (C)0};
        for (uint32_t i = threadIdx.x; i < parts; i += BLOCK) {
            stat<C> one{__ldcg(p + 2 * i), __ldcg(p + 2 * i + 1)};
            if (BWD) {
                all.s += one.s;
            } else {
                C m = one.m > all.m ? one.m : all.m;
                all = stat<C>{m, rescale<T>(all.s, all.m, m) + rescale<T>(one.s, one.m, m)};
            }
        }
        if (BWD) st.s = block_reduce<false>(all.s, red);
        else st = block_combine<T>(all, red);
    }

    stat<C> fin = finish<BWD>(st, a.log);
    if (RESIDENT) {
        /* e^(x - m_part) / S e^(m_part - m) = e^(x - m) / S */
        if (!BWD && !a.log) fin.s *= term<T>(part_m, fin.m);
#pragma unroll
        for (int k = 0; k < E / V; k++) {
            uint32_t j = begin + (k * BLOCK + threadIdx.x) * V;
            if (j >= end) continue;
            C r[V];
#pragma unroll
            for (int v = 0; v < V; v++)
                r[v] = result<T, BWD, true>(fin, a.log, va[k * V + v], BWD ? vb[k * V + v] : (C)0);
            ocd_cuda_blend_n<T, V>(d + j, r, a.alpha, a.beta, a.blend);
        }
    } else {
        for (uint32_t j = begin + threadIdx.x * V; j < end; j += BLOCK * V) {
            C x[V], y[V], r[V];
            ocd_cuda_load_n<T, V>(s0 + j, x);
            if (BWD) ocd_cuda_load_n<T, V>(s1 + j, y);
#pragma unroll
            for (int v = 0; v < V; v++) r[v] = result<T, BWD, false>(fin, a.log, x[v], BWD ? y[v] : (C)0);
            ocd_cuda_blend_n<T, V>(d + j, r, a.alpha, a.beta, a.blend);
        }
    }
}

/* ---- tiles of slices strided over a contiguous inner dim ---------------------------------------- */

constexpr int TILE_X = 32, TILE_Y = 8;

/* Block b takes inner columns (b % tiles) * 32 .. + 31 of outer index b / tiles; thread (x, y)
   takes column x and slice elements y, y + 8, ..., loading U of them at once. SMEM keeps the tile
   (the sources, as stored) between the passes, and for float and double the forward replaces it
   by the exponentials (one e^x per element); otherwise the second pass reads the tile again. */
template <typename T, bool BWD, bool SMEM>
__global__ void __launch_bounds__(TILE_X *TILE_Y)
tile(sm_args<T> a, ocd_dim_group outer, uint32_t inner, uint32_t tiles)
{
    typedef typename ocd_compute<T>::type C;
    constexpr int U = 4;
    constexpr bool KEEP_EXP = SMEM && !BWD && sizeof(T) >= 4;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *t0 = reinterpret_cast<T *>(smem_raw), *t1 = t0 + (size_t)a.len * TILE_X;
    __shared__ C red_m[TILE_Y][TILE_X + 1], red_s[TILE_Y][TILE_X + 1];
    uint32_t tx = threadIdx.x % TILE_X, ty = threadIdx.x / TILE_X;
    uint32_t o = blockIdx.x / tiles, col = (blockIdx.x % tiles) * TILE_X + tx;
    bool valid = col < inner;
    int dt = BWD ? 2 : 1;
    const T *s0 = a.src0 + ocd_cuda_group_offset(outer, 0, o) + col;
    const T *s1 = BWD ? a.src1 + ocd_cuda_group_offset(outer, 1, o) + col : nullptr;
    T *d = a.dst + ocd_cuda_group_offset(outer, dt, o) + col;
    int64_t l0 = a.slice.strides[0][0], l1 = a.slice.strides[BWD ? 1 : 0][0], ld = a.slice.strides[dt][0];

    /* pass 1: load; backward sums, forward takes the maximum (SMEM) or running statistics */
    stat<C> st{neg_inf<C>(), (C)0};
    for (uint32_t first = ty; valid && first < a.len; first += TILE_Y * U) {
        T x[U], y[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            uint32_t l = first + u * TILE_Y;
            if (l >= a.len) continue;
            x[u] = s0[l * l0];
            if (BWD) y[u] = s1[l * l1];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            uint32_t l = first + u * TILE_Y;
            if (l >= a.len) continue;
            if (SMEM) t0[l * TILE_X + tx] = x[u];
            C xv = ocd_cuda_load(&x[u]);
            if (BWD) {
                if (SMEM) t1[l * TILE_X + tx] = y[u];
                st.s += dot_term(a.log, xv, ocd_cuda_load(&y[u]));
            } else if (SMEM) {
                st.m = xv > st.m ? xv : st.m;
            } else {
                add<T>(st, xv);
            }
        }
    }
    red_m[ty][tx] = st.m;
    __syncthreads();
    stat<C> all{neg_inf<C>(), (C)0};
    if (!BWD && SMEM) { /* the column's maximum, then its exponentials from the tile */
#pragma unroll
        for (int y = 0; y < TILE_Y; y++) all.m = red_m[y][tx] > all.m ? red_m[y][tx] : all.m;
        for (uint32_t l = ty; valid && l < a.len; l += TILE_Y) {
            C e = term<T>(ocd_cuda_load(&t0[l * TILE_X + tx]), all.m);
            st.s += e;
            if (KEEP_EXP && !a.log) ocd_cuda_store(&t0[l * TILE_X + tx], e);
        }
        red_s[ty][tx] = st.s;
        __syncthreads();
#pragma unroll
        for (int y = 0; y < TILE_Y; y++) all.s += red_s[y][tx];
    } else {
        red_s[ty][tx] = st.s;
        __syncthreads();
#pragma unroll
        for (int y = 0; y < TILE_Y; y++) {
            if (BWD) {
                all.s += red_s[y][tx];
            } else {
                C m = red_m[y][tx] > all.m ? red_m[y][tx] : all.m;
                all = stat<C>{m, rescale<T>(all.s, all.m, m) + rescale<T>(red_s[y][tx], red_m[y][tx], m)};
            }
        }
    }
    stat<C> fin = finish<BWD>(all, a.log);
    if (!valid) return;
    for (uint32_t l = ty; l < a.len; l += TILE_Y) {
        C x = SMEM ? ocd_cuda_load(&t0[l * TILE_X + tx]) : ocd_cuda_load(s0 + l * l0);
        C y = BWD ? (SMEM ? ocd_cuda_load(&t1[l * TILE_X + tx]) : ocd_cuda_load(s1 + l * l1)) : (C)0;
        C r = KEEP_EXP ? result<T, BWD, true>(fin, a.log, x, y) : result<T, BWD, false>(fin, a.log, x, y);
        ocd_cuda_blend(d + l * ld, r, a.alpha, a.beta, a.blend);
    }
}

/* ---- columns of slices strided over a contiguous inner dim, in registers ------------------------ */

/* cuda:softmax_cols_regs: CR_LANES lanes along the inner dim (128 contiguous bytes of floats), the
   other lanes and warps of a block split the slice dim; slices of CR_MIN to CR_MAX elements (at
   least half the threads of a block busy). */
constexpr int CR_LANES = 8, CR_MIN = 32, CR_MAX = 256;

/* Threads of a block: the forward holds one source, the backward two. */
template <bool BWD> __host__ __device__ constexpr int cr_threads()
{
    return BWD ? 512 : 256;
}

/* Block b takes inner columns (b % tiles) * COLS .. + COLS - 1 (COLS = CR_LANES * N) of outer
   index b / tiles over the whole slice dim; its thread at (h, g) holds the vectors of columns
   h * N .. + N - 1 at slice elements g + k * G, k < CPT (CPT * G >= len), in registers: every
   source is read once with CPT 16-byte loads in flight per thread and source (128 bytes,
   128 KiB a multiprocessor at the 4 and 2 blocks the launch bounds ask for), and the forward
   takes e^(x - m) once an element. A column's statistics meet over the warp's lanes by shuffles,
   over the warps through shared memory (forward: the maximum, then the sum; backward: the sum).
   An element past the slice or a column past inner holds -inf forward (0 backward), which
   weighs nothing, and is never stored. The caller has checked what vector_cols checks. */
template <bool BWD, int CPT>
__global__ void __launch_bounds__(cr_threads<BWD>(), BWD ? 2 : 4)
cols_regs(sm_args<float> a, ocd_dim_group outer, uint32_t inner, uint32_t tiles)
{
    typedef float C;
    constexpr int N = ocd_vec16<float>::N, THREADS = cr_threads<BWD>(), G = THREADS / CR_LANES;
    constexpr int WARPS = THREADS / 32, COLS = CR_LANES * N;
    __shared__ ocd_vec16<C> red_m[WARPS][CR_LANES], red_s[WARPS][CR_LANES];
    uint32_t h = threadIdx.x % CR_LANES, g = threadIdx.x / CR_LANES, warp = threadIdx.x / 32;
    uint32_t o = blockIdx.x / tiles, col = (blockIdx.x % tiles) * COLS + h * N;
    bool valid = col < inner;
    int dt = BWD ? 2 : 1;
    const float *s0 = a.src0 + ocd_cuda_group_offset(outer, 0, o) + col;
    const float *s1 = BWD ? a.src1 + ocd_cuda_group_offset(outer, 1, o) + col : nullptr;
    float *d = a.dst + ocd_cuda_group_offset(outer, dt, o) + col;
    int64_t l0 = a.slice.strides[0][0], l1 = a.slice.strides[BWD ? 1 : 0][0], ld = a.slice.strides[dt][0];

    C va[CPT * N], vb[CPT * N];
#pragma unroll
    for (int k = 0; k < CPT; k++) {
        uint32_t l = g + k * G;
#pragma unroll
        for (int v = 0; v < N; v++) va[k * N + v] = BWD ? (C)0 : neg_inf<C>();
        if (BWD)
#pragma unroll
            for (int v = 0; v < N; v++) vb[k * N + v] = 0;
        if (!valid || l >= a.len) continue;
        ocd_cuda_load_n<float, N>(s0 + l * l0, &va[k * N]);
        if (BWD) ocd_cuda_load_n<float, N>(s1 + l * l1, &vb[k * N]);
    }
    bool leader = threadIdx.x % 32 < CR_LANES; /* the lanes that publish their warp's columns */
    stat<C> st[N];
#pragma unroll
    for (int v = 0; v < N; v++) st[v] = stat<C>{neg_inf<C>(), (C)0};
    ocd_vec16<C> w;
    if (!BWD) {
#pragma unroll
        for (int v = 0; v < N; v++) {
#pragma unroll
            for (int k = 0; k < CPT; k++) st[v].m = va[k * N + v] > st[v].m ? va[k * N + v] : st[v].m;
            w.v[v] = warp_max<32, CR_LANES>(st[v].m);
        }
        if (leader) red_m[warp][h] = w;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < WARPS; i++) {
            w = red_m[i][h];
#pragma unroll
            for (int v = 0; v < N; v++) st[v].m = w.v[v] > st[v].m ? w.v[v] : st[v].m;
        }
    }
#pragma unroll
    for (int v = 0; v < N; v++) {
#pragma unroll
        for (int k = 0; k < CPT; k++) {
            if (BWD) {
                st[v].s += dot_term(a.log, va[k * N + v], vb[k * N + v]);
            } else {
                C e = term<float>(va[k * N + v], st[v].m);
                st[v].s += e;
                if (!a.log) va[k * N + v] = e;
            }
        }
        w.v[v] = warp_sum<32, CR_LANES>(st[v].s);
    }
    if (leader) red_s[warp][h] = w;
    __syncthreads();
    stat<C> fin[N];
#pragma unroll
    for (int v = 0; v < N; v++) st[v].s = 0;
#pragma unroll
    for (int i = 0; i < WARPS; i++) {
        w = red_s[i][h];
#pragma unroll
        for (int v = 0; v < N; v++) st[v].s += w.v[v];
    }
#pragma unroll
    for (int v = 0; v < N; v++) fin[v] = finish<BWD>(st[v], a.log);
    if (!valid) return;
#pragma unroll
    for (int k = 0; k < CPT; k++) {
        uint32_t l = g + k * G;
        if (l >= a.len) continue;
        C r[N];
#pragma unroll
        for (int v = 0; v < N; v++)
            r[v] = result<float, BWD, true>(fin[v], a.log, va[k * N + v], BWD ? vb[k * N + v] : (C)0);
        ocd_cuda_blend_n<float, N>(d + l * ld, r, a.alpha, a.beta, a.blend);
    }
}

/* ---- whole column tiles in shared memory, 16-byte vectors ---------------------------------------- */

constexpr int VT_THREADS = 256, VT_BATCH = 8; /* threads; 16-byte loads in flight per thread and source */
constexpr int VT_ROW_BYTES = 128;              /* a tile's width along the inner dim */

/* Block b takes the COLS = 128 / sizeof(T) inner columns (b % tiles) * COLS .. + COLS - 1 of outer
   index b / tiles over the whole slice dim. Each source's tile moves into shared memory with
   16-byte loads, VT_BATCH of them in flight per thread (tile's loop keeps 4 scalars in flight),
   so that every source is read from memory once; vector q of a tile is slice element q / VPR,
   columns (q % VPR) * N ... Thread (x, y) then takes the statistics of column x over slice
   elements y, y + TY, ..., and the output leaves with 16-byte stores. As in tile, the forward of
   float and double keeps the exponentials in the tile; 16-bit data compute them again. The
   caller has checked that vectors never straddle a row: inner, the slice and outer strides are
   multiples of N and the pointers 16-byte aligned. The blocks a multiprocessor that the launch
   bounds ask registers for match what sm_90's shared memory holds of C = 256 float tiles (32 KiB
   forward, 64 KiB backward), 128 and 192 KiB of loads in flight a multiprocessor. */
template <typename T, bool BWD>
__global__ void __launch_bounds__(VT_THREADS, BWD ? 3 : 4)
tile_vec(sm_args<T> a, ocd_dim_group outer, uint32_t inner, uint32_t tiles)
{
    typedef typename ocd_compute<T>::type C;
    typedef ocd_vec16<T> vec;
    constexpr uint32_t N = vec::N, COLS = VT_ROW_BYTES / sizeof(T), VPR = COLS / N, TY = VT_THREADS / COLS;
    constexpr bool KEEP_EXP = !BWD && sizeof(T) >= 4;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    vec *t0 = reinterpret_cast<vec *>(smem_raw), *t1 = t0 + (size_t)a.len * VPR;
    __shared__ C red_m[TY][COLS + 1], red_s[TY][COLS + 1], fin_m[COLS], fin_s[COLS];
    uint32_t o = blockIdx.x / tiles, col0 = (blockIdx.x % tiles) * COLS, total = a.len * VPR;
    int dt = BWD ? 2 : 1;
    const T *s0 = a.src0 + ocd_cuda_group_offset(outer, 0, o) + col0;
    const T *s1 = BWD ? a.src1 + ocd_cuda_group_offset(outer, 1, o) + col0 : nullptr;
    T *d = a.dst + ocd_cuda_group_offset(outer, dt, o) + col0;
    int64_t l0 = a.slice.strides[0][0], l1 = a.slice.strides[BWD ? 1 : 0][0], ld = a.slice.strides[dt][0];

    for (uint32_t q0 = 0; q0 < total; q0 += VT_THREADS * VT_BATCH) {
        vec v0[VT_BATCH], v1[VT_BATCH];
#pragma unroll
        for (int k = 0; k < VT_BATCH; k++) {
            uint32_t q = q0 + k * VT_THREADS + threadIdx.x, l = q / VPR, c = q % VPR * N;
            if (q >= total || col0 + c >= inner) continue;
            v0[k] = *reinterpret_cast<const vec *>(s0 + l * l0 + c);
            if (BWD) v1[k] = *reinterpret_cast<const vec *>(s1 + l * l1 + c);
        }
#pragma unroll
        for (int k = 0; k < VT_BATCH; k++) {
            uint32_t q = q0 + k * VT_THREADS + threadIdx.x;
            if (q >= total || col0 + q % VPR * N >= inner) continue;
            t0[q] = v0[k];
            if (BWD) t1[q] = v1[k];
        }
    }
    __syncthreads();

    /* statistics per column; a column past inner computes garbage that is never stored */
    T *x0 = reinterpret_cast<T *>(t0), *x1 = reinterpret_cast<T *>(t1);
    uint32_t tx = threadIdx.x % COLS, ty = threadIdx.x / COLS;
    stat<C> st{neg_inf<C>(), (C)0};
    if (BWD) {
        for (uint32_t l = ty; l < a.len; l += TY)
            st.s += dot_term(a.log, ocd_cuda_load(&x0[l * COLS + tx]), ocd_cuda_load(&x1[l * COLS + tx]));
    } else {
        for (uint32_t l = ty; l < a.len; l += TY) {
            C x = ocd_cuda_load(&x0[l * COLS + tx]);
            st.m = x > st.m ? x : st.m;
        }
        red_m[ty][tx] = st.m;
        __syncthreads();
#pragma unroll
        for (uint32_t y = 0; y < TY; y++) st.m = red_m[y][tx] > st.m ? red_m[y][tx] : st.m;
        for (uint32_t l = ty; l < a.len; l += TY) {
            C e = term<T>(ocd_cuda_load(&x0[l * COLS + tx]), st.m);
            st.s += e;
            if (KEEP_EXP && !a.log) ocd_cuda_store(&x0[l * COLS + tx], e);
        }
    }
    red_s[ty][tx] = st.s;
    __syncthreads();
    if (ty == 0) {
        stat<C> all{st.m, (C)0};
#pragma unroll
        for (uint32_t y = 0; y < TY; y++) all.s += red_s[y][tx];
        stat<C> fin = finish<BWD>(all, a.log);
        fin_m[tx] = fin.m;
        fin_s[tx] = fin.s;
    }
    __syncthreads();

    for (uint32_t q = threadIdx.x; q < total; q += VT_THREADS) {
        uint32_t l = q / VPR, c = q % VPR * N;
        if (col0 + c >= inner) continue;
        C x[N], y[N], r[N];
        ocd_cuda_load_n<T, N>(x0 + (size_t)q * N, x);
        if (BWD) ocd_cuda_load_n<T, N>(x1 + (size_t)q * N, y);
#pragma unroll
        for (uint32_t v = 0; v < N; v++)
            r[v] = result<T, BWD, KEEP_EXP>(stat<C>{fin_m[c + v], fin_s[c + v]}, a.log, x[v], BWD ? y[v] : (C)0);
        ocd_cuda_blend_n<T, N>(d + l * ld + c, r, a.alpha, a.beta, a.blend);
    }
}

/* ---- any layout: one warp per slice ------------------------------------------------------------ */

template <typename T, bool BWD> __global__ void __launch_bounds__(32 * WARP_ROWS) generic(sm_args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    uint32_t row = blockIdx.x * WARP_ROWS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= a.rows) return;
    int dt = BWD ? 2 : 1;
    const T *s0 = a.src0 + ocd_cuda_group_offset(a.batch, 0, row);
    const T *s1 = BWD ? a.src1 + ocd_cuda_group_offset(a.batch, 1, row) : nullptr;
    T *d = a.dst + ocd_cuda_group_offset(a.batch, dt, row);
    stat<C> st{neg_inf<C>(), (C)0};
    for (uint32_t j = lane; j < a.len; j += 32) {
        C x = ocd_cuda_load(s0 + ocd_cuda_group_offset(a.slice, 0, j));
        if (BWD) st.s += dot_term(a.log, x, ocd_cuda_load(s1 + ocd_cuda_group_offset(a.slice, 1, j)));
        else add<T>(st, x);
    }
    if (BWD) st.s = warp_sum(st.s);
    else st = warp_combine<T>(st);
    stat<C> fin = finish<BWD>(st, a.log);
    for (uint32_t j = lane; j < a.len; j += 32) {
        C x = ocd_cuda_load(s0 + ocd_cuda_group_offset(a.slice, 0, j));
        C y = BWD ? ocd_cuda_load(s1 + ocd_cuda_group_offset(a.slice, 1, j)) : (C)0;
        ocd_cuda_blend(d + ocd_cuda_group_offset(a.slice, dt, j), result<T, BWD, false>(fin, a.log, x, y), a.alpha, a.beta,
                       a.blend);
    }
}

/* ---- launchers ---------------------------------------------------------------------------------- */

const ocd_softmax_problem *problem_of(const void *problem)
{
    return (const ocd_softmax_problem *)problem;
}

/* Whether the slices can be read with 16-byte vectors: a contiguous slice of whole vectors, every
   slice starting on a vector, 16-byte aligned pointers. */
bool vector_rows(const ocd_softmax_problem *p)
{
    int n = 16 / (int)ocd_dtype_scalar_size(p->io.dtype);
    if (ocd_dim_group_size(&p->slice) % n != 0) return false;
    for (int t = 0; t <= p->io.nsrc; t++) {
        const void *ptr = t < p->io.nsrc ? p->io.src[t] : p->io.dst;
        if (!ocd_cuda_aligned16(ptr)) return false;
        for (int d = 0; d < p->batch.rank; d++)
            if (p->batch.strides[t][d] % n != 0) return false;
    }
    return true;
}

constexpr uint32_t WARP_MAX_LEN = 1024;

template <typename T, bool BWD, int LANES, int E, int V> cudnnStatus_t launch_warp(cudnnHandle_t h, const sm_args<T> &a)
{
    rows_warp<T, BWD, LANES, E, V><<<ocd_cuda_blocks(a.rows, WARP_ROWS * (32 / LANES)), 32 * WARP_ROWS, 0, h->stream>>>(a);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* One warp per slice: the smallest E (elements per lane, a multiple of V) with 32 E >= len. */
template <typename T, bool BWD, int V> cudnnStatus_t pick_warp(cudnnHandle_t h, const sm_args<T> &a)
{
    if constexpr (V <= 1)
        if (a.len <= 32) return launch_warp<T, BWD, 32, 1, 1>(h, a);
    if constexpr (V <= 2)
        if (a.len <= 64) return launch_warp<T, BWD, 32, 2, V>(h, a);
    if constexpr (V <= 4)
        if (a.len <= 128) return launch_warp<T, BWD, 32, 4, V>(h, a);
    if (a.len <= 256) return launch_warp<T, BWD, 32, 8, V>(h, a);
    if (a.len <= 512) return launch_warp<T, BWD, 32, 16, V>(h, a);
    return launch_warp<T, BWD, 32, 32, V>(h, a);
}

template <bool BWD> constexpr uint32_t lane_vecs()
{
    return BWD ? LANE_VECS / 2 : LANE_VECS;
}

template <typename T, bool BWD> cudnnStatus_t pick_lanes(cudnnHandle_t h, const sm_args<T> &a)
{
    constexpr int N = ocd_vec16<T>::N, E = (int)lane_vecs<BWD>() * N;
    uint32_t lanes = (a.len + E - 1) / E;
    if (lanes <= 1) return launch_warp<T, BWD, 1, E, N>(h, a);
    if (lanes <= 2) return launch_warp<T, BWD, 2, E, N>(h, a);
    if (lanes <= 4) return launch_warp<T, BWD, 4, E, N>(h, a);
    if (lanes <= 8) return launch_warp<T, BWD, 8, E, N>(h, a);
    return launch_warp<T, BWD, LANES_MAX, E, N>(h, a);
}

template <typename T, bool BWD, int LANES, bool LOG> cudnnStatus_t launch_packed(cudnnHandle_t h, const sm_args<T> &a)
{
    auto kernel = BWD ? rows_packed_bwd<T, LANES, LOG> : rows_packed<T, LANES, LOG>;
    kernel<<<ocd_cuda_blocks(a.rows, WARP_ROWS * (32 / LANES)), 32 * WARP_ROWS, 0, h->stream>>>(a);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* The lanes of pick_lanes (lane_vecs<BWD>() vectors of 8 a lane and source). */
template <typename T, bool BWD, bool LOG> cudnnStatus_t pick_packed(cudnnHandle_t h, const sm_args<T> &a)
{
    constexpr uint32_t E = lane_vecs<BWD>() * 8;
    uint32_t lanes = (a.len + E - 1) / E;
    if (lanes <= 1) return launch_packed<T, BWD, 1, LOG>(h, a);
    if (lanes <= 2) return launch_packed<T, BWD, 2, LOG>(h, a);
    if (lanes <= 4) return launch_packed<T, BWD, 4, LOG>(h, a);
    if (lanes <= 8) return launch_packed<T, BWD, 8, LOG>(h, a);
    return launch_packed<T, BWD, LANES_MAX, LOG>(h, a);
}

template <typename T> cudnnStatus_t run_packed(cudnnHandle_t h, const ocd_softmax_problem *p)
{
    sm_args<T> a = args_of<T>(p);
    if (p->backward) return p->log ? pick_packed<T, true, true>(h, a) : pick_packed<T, true, false>(h, a);
    return p->log ? pick_packed<T, false, true>(h, a) : pick_packed<T, false, false>(h, a);
}

template <typename T, bool BWD, int E, int V, bool RESIDENT>
cudnnStatus_t launch_block(cudnnHandle_t h, const sm_args<T> &a, uint32_t parts, uint32_t part_len)
{
    typedef typename ocd_compute<T>::type C;
    split_sync sync = {nullptr, nullptr, nullptr};
    if (parts > 1) {
        size_t counters = ((size_t)a.rows + 1) * sizeof(unsigned), head = (counters + 15) / 16 * 16;
        void *scratch;
        OCD_TRY(ocd_cuda_scratch_acquire(h, head + (size_t)a.rows * parts * 2 * sizeof(C), &scratch));
        OCD_CUDA_TRY(cudaMemsetAsync(scratch, 0, counters, h->stream));
        sync.ticket = (unsigned *)scratch;
        sync.count = sync.ticket + 1;
        sync.parts = (char *)scratch + head;
    }
    rows_block<T, BWD, E, V, RESIDENT><<<a.rows * parts, BLOCK, 0, h->stream>>>(a, parts, part_len, sync);
    OCD_CUDA_LAUNCHED();
    return parts > 1 ? ocd_cuda_scratch_release(h) : CUDNN_STATUS_SUCCESS;
}

/* Parts of BLOCK * E elements with E as small as serves the slice in one part, else E = EMAX and
   as many parts as needed; beyond one part per multiprocessor, parts that stream. */
template <typename T, bool BWD, int V> cudnnStatus_t pick_block(cudnnHandle_t h, const sm_args<T> &a)
{
    typedef typename ocd_compute<T>::type C;
    constexpr int EMAX = sizeof(C) == 8 ? 8 : BWD ? 16 : 32, E4 = V > 4 ? V : 4, E8 = V > 8 ? V : 8;
    if (a.len <= (uint32_t)BLOCK * E4) return launch_block<T, BWD, E4, V, true>(h, a, 1, BLOCK * E4);
    if (a.len <= (uint32_t)BLOCK * E8) return launch_block<T, BWD, E8, V, true>(h, a, 1, BLOCK * E8);
    uint32_t parts = (a.len + BLOCK * EMAX - 1) / (BLOCK * EMAX);
    if (parts <= (uint32_t)h->sm_count) return launch_block<T, BWD, EMAX, V, true>(h, a, parts, BLOCK * EMAX);
    parts = (uint32_t)h->sm_count;
    uint32_t step = BLOCK * V, part_len = ((a.len + parts - 1) / parts + step - 1) / step * step;
    return launch_block<T, BWD, V, V, false>(h, a, (a.len + part_len - 1) / part_len, part_len);
}

/* The grid of the column kernels: a block per `cols` inner columns (a tile) of an outer index. */
struct col_grid {
    ocd_dim_group outer; /* the batch dims but the contiguous inner one */
    uint32_t inner, tiles, blocks;
};

col_grid col_grid_of(const ocd_softmax_problem *p, uint32_t cols)
{
    col_grid c;
    c.outer = p->batch;
    c.outer.rank--;
    c.inner = (uint32_t)p->batch.dims[p->batch.rank - 1];
    c.tiles = (c.inner + cols - 1) / cols;
    c.blocks = (uint32_t)(ocd_dim_group_size(&p->batch) / c.inner * c.tiles);
    return c;
}

template <typename T, bool BWD, bool SMEM>
cudnnStatus_t launch_tile(cudnnHandle_t h, const ocd_softmax_problem *p, const sm_args<T> &a, size_t smem)
{
    col_grid c = col_grid_of(p, TILE_X);
    auto kernel = tile<T, BWD, SMEM>;
    if (SMEM && smem > 48 * 1024)
        OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<c.blocks, TILE_X * TILE_Y, SMEM ? smem : 0, h->stream>>>(a, c.outer, c.inner, c.tiles);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

constexpr size_t TILE_SMEM_MAX = 96 * 1024;

/* Dynamic shared memory of tile_vec: a 128-byte row per slice element and source. Its bound
   leaves room for the static arrays on every sm_80+ part (99 KiB a block at least) and for two
   blocks a multiprocessor on sm_90; sm_75 (64 KiB a block) takes half. */
size_t tile_vec_smem(const ocd_softmax_problem *p)
{
    return (size_t)ocd_dim_group_size(&p->slice) * VT_ROW_BYTES * p->io.nsrc;
}

size_t tile_vec_smem_max(cudnnHandle_t h)
{
    return (h->cc_major >= 8 ? 80 : 40) * 1024;
}

template <typename T, bool BWD> cudnnStatus_t launch_tile_vec(cudnnHandle_t h, const ocd_softmax_problem *p, const sm_args<T> &a)
{
    col_grid c = col_grid_of(p, VT_ROW_BYTES / sizeof(T));
    size_t smem = tile_vec_smem(p);
    auto kernel = tile_vec<T, BWD>;
    if (smem > 48 * 1024)
        OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<c.blocks, VT_THREADS, smem, h->stream>>>(a, c.outer, c.inner, c.tiles);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <bool BWD, int CPT> cudnnStatus_t launch_cols_regs(cudnnHandle_t h, const ocd_softmax_problem *p)
{
    col_grid c = col_grid_of(p, CR_LANES * ocd_vec16<float>::N);
    cols_regs<BWD, CPT><<<c.blocks, cr_threads<BWD>(), 0, h->stream>>>(args_of<float>(p), c.outer, c.inner, c.tiles);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* The fewest slice elements a thread (CPT, a power of two) that hold the slice. */
template <bool BWD> cudnnStatus_t pick_cols_regs(cudnnHandle_t h, const ocd_softmax_problem *p)
{
    constexpr uint32_t G = cr_threads<BWD>() / CR_LANES;
    static_assert(CR_MAX == (BWD ? 4 : 8) * G, "the longest slice fills the largest CPT");
    uint32_t len = (uint32_t)ocd_dim_group_size(&p->slice);
    if (len <= G) return launch_cols_regs<BWD, 1>(h, p);
    if (len <= 2 * G) return launch_cols_regs<BWD, 2>(h, p);
    if constexpr (!BWD)
        if (len > 4 * G) return launch_cols_regs<BWD, 8>(h, p);
    return launch_cols_regs<BWD, 4>(h, p);
}

template <typename T, bool BWD, int V, bool BLOCKS> cudnnStatus_t pick(cudnnHandle_t h, const sm_args<T> &a)
{
    if constexpr (BLOCKS) return pick_block<T, BWD, V>(h, a);
    else return pick_warp<T, BWD, V>(h, a);
}

/* The kernels of contiguous slices: one warp per slice, or (BLOCKS) blocks. */
template <bool BLOCKS> cudnnStatus_t run_rows(cudnnHandle_t handle, const ocd_softmax_problem *p)
{
    bool vec = vector_rows(p);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        constexpr int N = ocd_vec16<T>::N;
        sm_args<T> a = args_of<T>(p);
        if (p->backward) return vec ? pick<T, true, N, BLOCKS>(handle, a) : pick<T, true, 1, BLOCKS>(handle, a);
        return vec ? pick<T, false, N, BLOCKS>(handle, a) : pick<T, false, 1, BLOCKS>(handle, a);
    });
}

} // namespace

/* ---- entries ---------------------------------------------------------------------------------- */

static bool contiguous_slices(const ocd_softmax_problem *p)
{
    return ocd_dim_group_is_flat(&p->slice);
}

extern "C" const char *ocd_softmax_applies_cuda_rows_warp(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (!contiguous_slices(p)) return "slices are not contiguous";
    return ocd_dim_group_size(&p->slice) <= WARP_MAX_LEN ? NULL : "slices longer than one warp holds";
}

extern "C" const char *ocd_softmax_applies_cuda_rows_block(cudnnHandle_t handle, const void *problem)
{
    return contiguous_slices(problem_of(problem)) ? NULL : "slices are not contiguous";
}

extern "C" const char *ocd_softmax_applies_cuda_tile(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (p->slice.rank != 1) return "slices span more than one strided dim";
    if (p->batch.rank < 1) return OCD_REASON_SHAPE;
    for (int t = 0; t <= p->io.nsrc; t++)
        if (p->batch.strides[t][p->batch.rank - 1] != 1) return "no contiguous dim beside the slices";
    return NULL;
}

extern "C" const char *ocd_softmax_applies_cuda_rows_lanes(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (!contiguous_slices(p)) return "slices are not contiguous";
    if (!vector_rows(p)) return OCD_REASON_ALIGNMENT;
    uint32_t n = 16 / (uint32_t)ocd_dtype_scalar_size(p->io.dtype);
    uint32_t most = LANES_MAX * (p->backward ? lane_vecs<true>() : lane_vecs<false>()) * n;
    return ocd_dim_group_size(&p->slice) <= most ? NULL : "slices longer than half a warp holds";
}

extern "C" const char *ocd_softmax_applies_cuda_rows_packed(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (p->io.dtype != CUDNN_DATA_HALF && p->io.dtype != CUDNN_DATA_BFLOAT16) return OCD_REASON_DTYPE;
    return ocd_softmax_applies_cuda_rows_lanes(handle, problem);
}

/* What the vector column kernels need: slices strided over a contiguous inner dim, read as
   16-byte vectors that never straddle a row (inner, the slice and outer strides multiples of a
   vector, 16-byte aligned pointers). */
static const char *vector_cols(cudnnHandle_t handle, const ocd_softmax_problem *p)
{
    const char *why = ocd_softmax_applies_cuda_tile(handle, p);
    if (why != NULL) return why;
    int64_t n = 16 / (int64_t)ocd_dtype_scalar_size(p->io.dtype);
    if (p->batch.dims[p->batch.rank - 1] % n != 0) return OCD_REASON_ALIGNMENT;
    for (int t = 0; t <= p->io.nsrc; t++) {
        if (!ocd_cuda_aligned16(t < p->io.nsrc ? p->io.src[t] : p->io.dst)) return OCD_REASON_ALIGNMENT;
        if (p->slice.strides[t][0] % n != 0) return OCD_REASON_ALIGNMENT;
        for (int d = 0; d < p->batch.rank - 1; d++)
            if (p->batch.strides[t][d] % n != 0) return OCD_REASON_ALIGNMENT;
    }
    return NULL;
}

extern "C" const char *ocd_softmax_applies_cuda_cols_regs(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (p->io.dtype != CUDNN_DATA_FLOAT) return OCD_REASON_DTYPE;
    const char *why = vector_cols(handle, p);
    if (why != NULL) return why;
    int64_t len = ocd_dim_group_size(&p->slice);
    return len >= CR_MIN && len <= CR_MAX ? NULL : "slices outside 32 to 256 elements";
}

extern "C" const char *ocd_softmax_applies_cuda_tile_vec(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    const char *why = vector_cols(handle, p);
    if (why != NULL) return why;
    return tile_vec_smem(p) <= tile_vec_smem_max(handle) ? NULL : "tile larger than shared memory";
}

extern "C" cudnnStatus_t ocd_softmax_run_cuda_rows_packed(cudnnHandle_t handle, const void *problem, void *ws,
                                                          size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return p->io.dtype == CUDNN_DATA_HALF ? run_packed<__half>(handle, p) : run_packed<__nv_bfloat16>(handle, p);
}

extern "C" cudnnStatus_t ocd_softmax_run_cuda_rows_lanes(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        sm_args<T> a = args_of<T>(p);
        return p->backward ? pick_lanes<T, true>(handle, a) : pick_lanes<T, false>(handle, a);
    });
}

extern "C" cudnnStatus_t ocd_softmax_run_cuda_rows_warp(cudnnHandle_t handle, const void *problem, void *ws,
                                                        size_t ws_bytes)
{
    return run_rows<false>(handle, problem_of(problem));
}

extern "C" cudnnStatus_t ocd_softmax_run_cuda_rows_block(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    return run_rows<true>(handle, problem_of(problem));
}

extern "C" cudnnStatus_t ocd_softmax_run_cuda_tile(cudnnHandle_t handle, const void *problem, void *ws,
                                                   size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        sm_args<T> a = args_of<T>(p);
        size_t smem = (size_t)a.len * TILE_X * sizeof(T) * p->io.nsrc;
        bool fits = smem <= TILE_SMEM_MAX;
        if (p->backward) return fits ? launch_tile<T, true, true>(handle, p, a, smem) : launch_tile<T, true, false>(handle, p, a, 0);
        return fits ? launch_tile<T, false, true>(handle, p, a, smem) : launch_tile<T, false, false>(handle, p, a, 0);
    });
}

extern "C" cudnnStatus_t ocd_softmax_run_cuda_cols_regs(cudnnHandle_t handle, const void *problem, void *ws,
                                                        size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return p->backward ? pick_cols_regs<true>(handle, p) : pick_cols_regs<false>(handle, p);
}

extern "C" cudnnStatus_t ocd_softmax_run_cuda_tile_vec(cudnnHandle_t handle, const void *problem, void *ws,
                                                       size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        sm_args<T> a = args_of<T>(p);
        return p->backward ? launch_tile_vec<T, true>(handle, p, a) : launch_tile_vec<T, false>(handle, p, a);
    });
}

extern "C" cudnnStatus_t ocd_softmax_run_cuda_generic(cudnnHandle_t handle, const void *problem, void *ws,
                                                      size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        sm_args<T> a = args_of<T>(p);
        unsigned blocks = ocd_cuda_blocks(a.rows, WARP_ROWS);
        if (p->backward) generic<T, true><<<blocks, 32 * WARP_ROWS, 0, handle->stream>>>(a);
        else generic<T, false><<<blocks, 32 * WARP_ROWS, 0, handle->stream>>>(a);
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    });
}
