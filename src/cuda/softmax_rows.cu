/* softmax_rows.cu: softmax over contiguous slices on the GPU, and over any layout (softmax.cuh says
   what the kernels share). Entries, most specialised first:
   - cuda:softmax_rows_packed: cuda:softmax_rows_lanes for half and bfloat16, in pairs. Forward
     in about 6 instructions an element where the general kernel takes 33 (it is bound by
     instructions on 16-bit data): the maximum over the stored pairs, e^(x - m) as one FMA and one
     ex2.approx (log2 e folded into the FMA that subtracts the maximum), conversions two at a
     time, alpha folded into 1 / S, no branch per element. Backward: y and dy kept as stored,
     converted and rounded two at a time (the general kernel rounds half one element at a time).
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
   - cuda:softmax_generic: any layout; one warp per slice, offsets decoded per element. */
#include "core/impl.h"
#include "cuda/scratch.cuh"
#include "cuda/softmax.cuh"

namespace {

/* ---- a warp, or a group of its lanes, per contiguous slice -------------------------------------- */

/* 16-byte loads per lane in cuda:softmax_rows_lanes, over all the sources: a warp keeps 2 KiB in
   flight, four times what one warp per 512-byte slice keeps (LANE_VECS / 2 of y and of dy each in
   the backward). The lanes of a slice are the fewest (a power of two) that hold it that way. */
constexpr int LANE_VECS = 4, LANES_MAX = 16;

/* The slice of this thread's group of LANES lanes (a power of two, at most 32; 32 / LANES groups
   per warp) and its lane in the group; false when the warp's first slice is past the last. A group
   past the last slice takes a copy of the last one (live false) and stores nothing, so that every
   lane of the warp takes part in the shuffles. */
template <int LANES>
__device__ __forceinline__ bool group_slice(uint32_t rows, uint32_t *row, uint32_t *lane, bool *live)
{
    const uint32_t first = (blockIdx.x * WARP_ROWS + (threadIdx.x >> 5)) * (32 / LANES);
    if (first >= rows) return false;
    *row = first + (threadIdx.x & 31) / LANES, *lane = threadIdx.x % LANES;
    *live = *row < rows;
    if (!*live) *row = rows - 1;
    return true;
}

/* Groups of LANES lanes per slice (group_slice); lane l of a group holds elements
   (k * LANES + l) * V + v for k < E / V, v < V. */
template <typename T, bool BWD, int LANES, int E, int V>
__global__ void __launch_bounds__(32 * WARP_ROWS) rows_warp(sm_args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    uint32_t row, lane;
    bool live;
    if (!group_slice<LANES>(a.rows, &row, &lane, &live)) return;
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
    uint32_t row, lane;
    bool live;
    if (!group_slice<LANES>(a.rows, &row, &lane, &live)) return;
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
    uint32_t row, lane;
    bool live;
    if (!group_slice<LANES>(a.rows, &row, &lane, &live)) return;
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

/* The reason a contiguous-slice entry declines p, or NULL. */
static const char *rows_decline(const ocd_softmax_problem *p)
{
    if (not_int8(p) != NULL) return not_int8(p);
    return contiguous_slices(p) ? NULL : "slices are not contiguous";
}

extern "C" const char *ocd_cuda_softmax_rows_warp_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (rows_decline(p) != NULL) return rows_decline(p);
    return ocd_dim_group_size(&p->slice) <= WARP_MAX_LEN ? NULL : "slices longer than one warp holds";
}

extern "C" const char *ocd_cuda_softmax_rows_block_applies(cudnnHandle_t handle, const void *problem)
{
    return rows_decline(problem_of(problem));
}

extern "C" const char *ocd_cuda_softmax_rows_lanes_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (rows_decline(p) != NULL) return rows_decline(p);
    if (!vector_rows(p)) return OCD_REASON_ALIGNMENT;
    uint32_t n = 16 / (uint32_t)ocd_dtype_scalar_size(p->io.dtype);
    uint32_t most = LANES_MAX * (p->backward ? lane_vecs<true>() : lane_vecs<false>()) * n;
    return ocd_dim_group_size(&p->slice) <= most ? NULL : "slices longer than half a warp holds";
}

extern "C" const char *ocd_cuda_softmax_rows_packed_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (p->io.dtype != CUDNN_DATA_HALF && p->io.dtype != CUDNN_DATA_BFLOAT16) return OCD_REASON_DTYPE;
    return ocd_cuda_softmax_rows_lanes_applies(handle, problem);
}
extern "C" cudnnStatus_t ocd_cuda_softmax_rows_packed(cudnnHandle_t handle, const void *problem, void *ws,
                                                          size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return p->io.dtype == CUDNN_DATA_HALF ? run_packed<__half>(handle, p) : run_packed<__nv_bfloat16>(handle, p);
}

extern "C" cudnnStatus_t ocd_cuda_softmax_rows_lanes(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        sm_args<T> a = args_of<T>(p);
        return p->backward ? pick_lanes<T, true>(handle, a) : pick_lanes<T, false>(handle, a);
    });
}

extern "C" cudnnStatus_t ocd_cuda_softmax_rows_warp(cudnnHandle_t handle, const void *problem, void *ws,
                                                        size_t ws_bytes)
{
    return run_rows<false>(handle, problem_of(problem));
}

extern "C" cudnnStatus_t ocd_cuda_softmax_rows_block(cudnnHandle_t handle, const void *problem, void *ws,
                                                         size_t ws_bytes)
{
    return run_rows<true>(handle, problem_of(problem));
}

extern "C" cudnnStatus_t ocd_cuda_softmax_generic(cudnnHandle_t handle, const void *problem, void *ws,
                                                      size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (p->io.dtype == CUDNN_DATA_INT8) { /* the forward only (the API refuses the backward), in float */
        sm_args<int8_t> a = args_of<int8_t>(p);
        generic<int8_t, false><<<ocd_cuda_blocks(a.rows, WARP_ROWS), 32 * WARP_ROWS, 0, handle->stream>>>(a);
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    }
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
