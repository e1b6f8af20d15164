/* batchnorm_kernels.cuh: the normalization engine's kernels on CUDA and their launcher, run_typed
   (batchnorm.cuh describes the design and holds the plan). Included by
   batchnorm_{float,double,half,bfloat16}.cu, which instantiate the launcher a data type each. */
#ifndef OCD_CUDA_BATCHNORM_KERNELS_CUH
#define OCD_CUDA_BATCHNORM_KERNELS_CUH

#include "cuda/batchnorm.cuh"
#include "cuda/bulk.cuh"
#include "cuda/launch.cuh"

#include <atomic>
#include <type_traits>

namespace ocd_bn {

/* ---- device helpers -------------------------------------------------------------------------- */

__device__ __forceinline__ float inv_sqrt(float v) { return rsqrtf(v); }
__device__ __forceinline__ double inv_sqrt(double v) { return 1.0 / sqrt(v); }

/* V consecutive scalars as loaded: one 16-byte vector (a single scalar when V is 1), unpacked
   to compute values only where used, so that loads in flight hold few registers. */
template <typename T, int V> struct VecOf {
    typedef uint4 type;
};
template <typename T> struct VecOf<T, 1> {
    typedef T type;
};
template <typename T, int V> struct Chunk {
    typedef typename VecOf<T, V>::type Vec;
    Vec raw;
};

/* Loads n (<= V) scalars at p; a full vector is one 16-byte load, marked evict-first when STREAM
   (its last use). Lanes past n are left undefined: callers never use them. */
template <bool STREAM, typename T, int V>
__device__ __forceinline__ void load_chunk(const T *p, int n, Chunk<T, V> &c)
{
    if constexpr (V == 1) {
        c.raw = *p;
    } else if (n == V) {
        typedef typename Chunk<T, V>::Vec Vec;
        c.raw = STREAM ? __ldcs(reinterpret_cast<const Vec *>(p)) : *reinterpret_cast<const Vec *>(p);
    } else {
        T *e = reinterpret_cast<T *>(&c.raw);
        for (int i = 0; i < V; i++)
            if (i < n) e[i] = p[i];
    }
}

template <typename T, int V>
__device__ __forceinline__ void unpack(const Chunk<T, V> &c, typename ocd_compute<T>::type out[V])
{
    const T *e = reinterpret_cast<const T *>(&c.raw);
#pragma unroll
    for (int i = 0; i < V; i++) out[i] = ocd_cuda_load(e + i);
}

template <bool STREAM, typename T, int V>
__device__ __forceinline__ void load_lanes(const T *p, int n, typename ocd_compute<T>::type out[V])
{
    Chunk<T, V> c;
    load_chunk<STREAM>(p, n, c);
    unpack(c, out);
}

template <typename T, int V>
__device__ __forceinline__ void store_lanes(T *p, int n, const typename ocd_compute<T>::type v[V])
{
    if (V > 1 && n == V) {
        typedef typename Chunk<T, V>::Vec Vec;
        Vec raw;
        T *e = reinterpret_cast<T *>(&raw);
#pragma unroll
        for (int i = 0; i < V; i++) ocd_cuda_store(e + i, v[i]);
        __stcs(reinterpret_cast<Vec *>(p), raw);
    } else {
#pragma unroll
        for (int i = 0; i < V; i++)
            if (i < n) ocd_cuda_store(p + i, v[i]);
    }
}

template <typename T> struct Args {
    typedef typename ocd_compute<T>::type C;
    const T *x, *z, *dy;
    T *y, *dx, *dz, *res;
    const C *scale, *bias, *est_mean, *est_var, *saved_mean, *saved_invstd;
    C *save_mean, *save_invstd, *run_mean, *run_var, *dscale, *dbias;
    C alpha, beta, alpha_p, beta_p, act_coef, act_swish;
    double eps, factor;
    uint32_t K, M;
    int act_mode, act_nan;
    bool act;
    SlotMap sm;
    C *part, *shift, *coef; /* scratch, dense by slot */
    int G;              /* blocks along y: row strides, or channel splits */
    uint32_t per_split; /* channels first: elements per split */
    uint32_t chunk, nchunks; /* rows kernels: rows per chunk (ROWS * ty) and their count */
    int tx, ty;
};

/* The saved mean of slot j: the reference of the gradient sums of P_GRAD (the others' is the
   shift, the slot's first x). */
template <typename T>
__device__ __forceinline__ typename ocd_compute<T>::type saved_mean_of(const Args<T> &a, uint32_t j)
{
    int64_t po, so;
    a.sm.offsets(j, po, so);
    return a.saved_mean[so];
}

/* The gradient inputs of n lanes as loaded: dy, and the pre-activation when an activation is fused. */
template <typename T, int V> struct GradChunk {
    Chunk<T, V> dy, pre;
};

/* ACT false: the caller knows that no activation is fused, and pre is neither loaded nor used
   (so that it holds no registers); true: a.act says. */
template <bool STREAM, bool ACT, typename T, int V>
__device__ __forceinline__ void load_grad(const Args<T> &a, int64_t o, int64_t ro, int n, GradChunk<T, V> &g)
{
    load_chunk<STREAM>(a.dy + o, n, g.dy);
    if (ACT && a.act) load_chunk<STREAM>(a.res + ro, n, g.pre);
}

/* dp = dy * act'(pre). */
template <bool ACT, typename T, int V>
__device__ __forceinline__ void unpack_dp(const Args<T> &a, const GradChunk<T, V> &g, typename ocd_compute<T>::type dp[V])
{
    typedef typename ocd_compute<T>::type C;
    unpack(g.dy, dp);
    if (ACT && a.act) {
        C pre[V];
        unpack(g.pre, pre);
#pragma unroll
        for (int i = 0; i < V; i++) dp[i] *= ocd_act_derivative(a.act_mode, a.act_coef, a.act_swish, pre[i]);
    }
}

/* Adds one chunk of x (and the gradient inputs) to the lanes' sums s[q] (Sums<P>::N of them):
   d = x - ref, the statistics d and d^2, the gradient's dp and dp * d, both all four. */
template <typename T, int V, int P, bool ACT>
__device__ __forceinline__ void accumulate(const Args<T> &a, const Chunk<T, V> &xc, const GradChunk<T, V> &gc,
                                           const typename ocd_compute<T>::type ref[V],
                                           typename ocd_compute<T>::type (&s)[Sums<P>::N][V])
{
    typedef typename ocd_compute<T>::type C;
    C xv[V], dp[V];
    unpack(xc, xv);
    if (P != P_STATS) unpack_dp<ACT>(a, gc, dp);
#pragma unroll
    for (int i = 0; i < V; i++) {
        const C d = xv[i] - ref[i];
        if (P != P_GRAD) {
            s[0][i] += d;
            s[1][i] += d * d;
        }
        if (P != P_STATS) {
            s[Sums<P>::N - 2][i] += dp[i];
            s[Sums<P>::N - 1][i] += dp[i] * d;
        }
    }
}

/* Channels-first kernels: vectors whose loads are in flight together per thread, 4 of x or 2
   each of x and dy; the backward element pass of 8-lane vectors keeps 24 coefficients in
   registers and takes one. */
template <bool TWO_INPUTS, bool MANY_COEFS, int V> struct Rounds {
    static const int U = !TWO_INPUTS ? 4 : MANY_COEFS && V >= 8 ? 1 : 2; /* MANY_COEFS: or sums */
};

/* Rows kernels: rows a thread takes per round, all their loads issued before any is used: 4
   vectors per thread in flight, of x alone or 2 rows of x and dy; with the fused activation
   backward (ACT) one row of x, dy and pre. ROWS, the rows per thread of a chunk, is a multiple of
   each. BLOCKS: resident per SM, for which __launch_bounds__ caps the registers (16-bit, sm_90,
   no spills): plain element passes 5 (48 registers), plain reductions 4 (64), the
   fused-op kernels MIN_BLOCKS (the activation takes the registers). Many warps with 4
   loads each rather than few with 8, so that some load while others compute. */
template <bool TWO_INPUTS, bool ACT, bool REDUCE> struct RowRounds {
    static const int U = !TWO_INPUTS ? 4 : ACT ? 1 : 2;
    static const int BLOCKS = ACT ? MIN_BLOCKS : REDUCE ? ROW_REDUCE_BLOCKS : ROW_APPLY_BLOCKS;
};

/* Row u of round u0 of a rows thread's chunk that starts at r0 (its first row): REVERSE for the
   element passes, which visit the rows in the reverse order of the reductions (see the top). */
template <bool REVERSE>
__device__ __forceinline__ uint32_t round_row(uint32_t r0, int u0, int u, int ty)
{
    return r0 + (uint32_t)(REVERSE ? ROWS - 1 - u0 - u : u0 + u) * ty;
}

/* The loads of one round of a rows kernel, n (> 0) lanes a row, all issued before any is used;
   ok[u] says which rows exist. */
template <bool STREAM, bool REVERSE, bool GRAD, bool ACT, int U, typename T, int V, class L>
__device__ __forceinline__ void load_round(const L &lay, const Args<T> &a, uint32_t r0, int u0, uint32_t j0, int n,
                                           Chunk<T, V> (&xc)[U], GradChunk<T, V> (&gc)[U], bool (&ok)[U])
{
#pragma unroll
    for (int u = 0; u < U; u++) {
        const uint32_t r = round_row<REVERSE>(r0, u0, u, a.ty);
        ok[u] = r < a.M;
        if (!ok[u]) continue;
        const typename L::Pos p = lay.pos(r);
        load_chunk<STREAM>(a.x + lay.at(p, T_X, j0), n, xc[u]);
        if (GRAD) load_grad<STREAM, ACT>(a, lay.at(p, T_DY, j0), a.res ? lay.at(p, T_RES, j0) : 0, n, gc[u]);
    }
}

/* A rows reduction thread's shift and sums, zeroed. */
template <typename C, int V, int NS> __device__ __forceinline__ void zero_sums(C (&ref)[V], C (&sum)[NS][V])
{
#pragma unroll
    for (int i = 0; i < V; i++) {
        ref[i] = 0;
#pragma unroll
        for (int q = 0; q < NS; q++) sum[q][i] = 0;
    }
}

/* The end of a rows reduction block: its threads' sums (Sums<P>::N of V lanes each) meet along
   the rows in a tree in sh ([N][THREADS * V]), and row 0 writes the block's partials (and, block
   row 0, the shift). Lane i of thread (tx, ty) at i THREADS + ty tx-count + tx: a warp's
   accesses are 32 consecutive words, free of bank conflicts (lanes side by side, 8 words apart,
   made each access 8 wavefronts; every resident block reaches this tree at the same time, when
   no loads are left to overlap it: about 10 us of a 39 us reduction, Nsight Compute). Every
   thread calls it. */
template <typename T, int V, int P>
__device__ __forceinline__ void write_partials(const Args<T> &a, typename ocd_compute<T>::type (*sh)[THREADS * V],
                                               const typename ocd_compute<T>::type (&sum)[Sums<P>::N][V],
                                               const typename ocd_compute<T>::type (&ref)[V], int n, uint32_t j0)
{
    const int NS = Sums<P>::N, ty = threadIdx.y, at = ty * a.tx + threadIdx.x;
#pragma unroll
    for (int i = 0; i < V; i++)
#pragma unroll
        for (int q = 0; q < NS; q++) sh[q][i * THREADS + at] = sum[q][i];
    __syncthreads();
    for (int stride = a.ty / 2; stride > 0; stride >>= 1) {
        if (ty < stride)
#pragma unroll
            for (int i = 0; i < V; i++)
#pragma unroll
                for (int q = 0; q < NS; q++) sh[q][i * THREADS + at] += sh[q][i * THREADS + at + stride * a.tx];
        __syncthreads();
    }
    if (ty != 0) return;
#pragma unroll
    for (int i = 0; i < V; i++) {
        if (i >= n) break;
#pragma unroll
        for (int q = 0; q < NS; q++) a.part[((size_t)q * a.G + blockIdx.y) * a.K + j0 + i] = sh[q][i * THREADS + at];
        if (P != P_GRAD && blockIdx.y == 0) a.shift[j0 + i] = ref[i];
    }
}

/* ---- reduce ---------------------------------------------------------------------------------- */

/* The rows reductions. ACT as for load_grad: the gradient pass has a kernel for the fused
   activation and one without (whose pre-activation loads would otherwise hold registers). The
   first round's loads are issued before the shift (or mean) is read, so that their latencies
   overlap; each later chunk's first round after the previous chunk's last. */
template <typename T, int V, int P, bool ACT, class L>
__global__ void __launch_bounds__(THREADS, (RowRounds<P != P_STATS, ACT, true>::BLOCKS))
k_reduce_rows(const L lay, const Args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    const bool GRAD = P != P_STATS;
    /* P_BOTH of 16-bit vectors: one row a round, for the registers of the four sums of 8 lanes */
    constexpr bool ONE_ROW = P == P_BOTH && V >= 8;
    const int U = ONE_ROW ? 1 : RowRounds<GRAD, ACT, true>::U, NS = Sums<P>::N;
    __shared__ C sh[NS][THREADS * V];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const uint32_t j0 = (blockIdx.x * a.tx + tx) * V;
    const int n = j0 < a.K ? min(V, (int)(a.K - j0)) : 0;
    ocd_let_next_start(); /* the finish, launched early */
    C ref[V], sum[NS][V]; /* indexed by constants only (unrolled loops): kept in registers */
    zero_sums(ref, sum);
    if (n > 0) {
        bool first = true;
        for (uint32_t chunk = blockIdx.y; chunk < a.nchunks; chunk += gridDim.y) {
            const uint32_t r0 = chunk * a.chunk + ty;
            /* ONE_ROW: one round at a time, so that the scheduler does not hoist the next round's
               loads into the registers of the four sums (ptxas: it spilled) */
#pragma unroll(ONE_ROW ? 1 : ROWS)
            for (int u0 = 0; u0 < ROWS; u0 += U) {
                Chunk<T, V> xc[U];
                GradChunk<T, V> gc[U];
                bool ok[U];
                load_round<false, false, GRAD, ACT>(lay, a, r0, u0, j0, lanes<L, V>(n), xc, gc, ok);
                if (u0 == 0 && first) {
                    first = false;
                    if (P != P_GRAD) load_lanes<false, T, V>(a.x + lay.at(lay.pos(0), T_X, j0), n, ref);
                    else
#pragma unroll
                        for (int i = 0; i < V; i++)
                            if (i < n) ref[i] = saved_mean_of(a, j0 + i);
                }
#pragma unroll
                for (int u = 0; u < U; u++)
                    if (ok[u]) accumulate<T, V, P, ACT>(a, xc[u], gc[u], ref, sum);
            }
        }
    }
    write_partials<T, V, P>(a, sh, sum, ref, n, j0);
}

/* The statistics reduction of a flat layout whose rows are whole and packed (one block along the
   slots, row stride K), fed by bulk copies (cuda/bulk.cuh): thread 0 keeps BULK_STAGES stages
   (BULK_ROWS rows a thread, BULK_STAGE_BYTES at most) in flight into a ring of shared memory,
   from which the threads add the rows k_reduce_rows would, in its order, so that the partials
   are the same bit for bit. k_reduce_rows's loads in flight wait in its registers (64 a thread,
   for 4 blocks an SM); these do not. The ring then holds the block's tree. */
const unsigned BULK_STAGE_BYTES = BULK_ROWS * THREADS * 16; /* BULK_ROWS rows of THREADS 16-byte vectors */
template <typename T, int V>
__global__ void __launch_bounds__(THREADS, BULK_BLOCKS) k_reduce_bulk(const Args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    const int U = BULK_ROWS, NS = Sums<P_STATS>::N, RPC = ROWS / U; /* stages a chunk */
    static_assert(ROWS % U == 0, "a chunk is whole stages");
    static_assert(NS * THREADS * V * sizeof(C) <= BULK_STAGES * BULK_STAGE_BYTES, "the ring holds the tree");
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ __align__(8) uint64_t full[BULK_STAGES];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const uint32_t j0 = tx * V, stage_rows = U * a.ty, row_bytes = a.K * sizeof(T);
    const int n = j0 < a.K ? V : 0;
    const uint32_t steps = RPC * ((a.nchunks - 1 - blockIdx.y) / gridDim.y + 1); /* gridDim.y <= nchunks */
    /* step q's first row: stage q % RPC of the block's chunk q / RPC */
    auto first_row = [&](uint32_t q) { return (blockIdx.y + q / RPC * gridDim.y) * a.chunk + q % RPC * stage_rows; };
    auto issue = [&](uint32_t q) {
        const uint32_t s = q % BULK_STAGES, r = first_row(q), rows = r < a.M ? min(stage_rows, a.M - r) : 0;
        if (rows > 0) ocd_bulk_load(ring + s * BULK_STAGE_BYTES, a.x + (size_t)r * a.K, rows * row_bytes, &full[s]);
        else ocd_mbar_arrive(&full[s]);
    };
    ocd_let_next_start(); /* the finish, launched early */
    if (tx == 0 && ty == 0) {
        for (int s = 0; s < BULK_STAGES; s++) ocd_mbar_init(&full[s], 1), ocd_mbar_init_fence();
        for (uint32_t q = 0; q < BULK_STAGES && q < steps; q++) issue(q);
    }
    C ref[V], sum[NS][V];
    zero_sums(ref, sum);
    if (n > 0) load_lanes<false, T, V>(a.x + j0, V, ref); /* row 0's, while the first stages load */
    __syncthreads(); /* the barriers are initialized */
    const GradChunk<T, V> none = {};
    for (uint32_t q = 0; q < steps; q++) {
        const uint32_t s = q % BULK_STAGES, r = first_row(q);
        ocd_mbar_wait(&full[s], q / BULK_STAGES & 1);
        const unsigned char *stage = ring + s * BULK_STAGE_BYTES;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t row = u * a.ty + ty;
            if (n == 0 || r + row >= a.M) continue;
            Chunk<T, V> xc;
            xc.raw = *reinterpret_cast<const typename Chunk<T, V>::Vec *>(stage + row * row_bytes + j0 * sizeof(T));
            accumulate<T, V, P_STATS, false>(a, xc, none, ref, sum);
        }
        __syncthreads(); /* every thread is done with the stage */
        if (tx == 0 && ty == 0 && q + BULK_STAGES < steps) issue(q + BULK_STAGES);
    }
    write_partials<T, V, P_STATS>(a, reinterpret_cast<C(*)[THREADS * V]>(ring), sum, ref, n, j0);
}

template <typename C> __device__ __forceinline__ C block_sum(C v, C *shared)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); /* shared may hold the previous sum */
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < THREADS / 32; w++) v += shared[w];
    return v;
}

template <typename T, int V, int P>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) k_reduce_chan(const LayChan lay, const Args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    const bool GRAD = P != P_STATS;
    const int U = Rounds<GRAD, P == P_BOTH, V>::U, NS = Sums<P>::N;
    __shared__ C shared[THREADS / 32];
    ocd_let_next_start(); /* the finish, launched early */
    const uint32_t c = blockIdx.x, i0 = blockIdx.y * a.per_split, i1 = min(a.M, i0 + a.per_split);
    C ref[V], sum[NS][V];
    const C r0 = P == P_GRAD ? saved_mean_of(a, c) : ocd_cuda_load(a.x + lay.off(c, 0));
#pragma unroll
    for (int k = 0; k < V; k++) {
        ref[k] = r0;
#pragma unroll
        for (int q = 0; q < NS; q++) sum[q][k] = 0;
    }
    for (uint32_t i = i0 + threadIdx.x * V; i < i1; i += THREADS * V * U) {
        Chunk<T, V> xc[U];
        GradChunk<T, V> gc[U];
        bool ok[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t e = i + u * THREADS * V;
            ok[u] = e < i1;
            if (!ok[u]) continue;
            const int64_t o = lay.off(c, e);
            load_chunk<false>(a.x + o, V, xc[u]);
            if (GRAD) load_grad<false, true>(a, o, o, V, gc[u]);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (ok[u]) accumulate<T, V, P, true>(a, xc[u], gc[u], ref, sum);
    }
#pragma unroll
    for (int q = 0; q < NS; q++) {
        C t = 0;
#pragma unroll
        for (int k = 0; k < V; k++) t += sum[q][k];
        t = block_sum(t, shared);
        if (threadIdx.x == 0) a.part[((size_t)q * a.G + blockIdx.y) * a.K + c] = t;
    }
    if (P != P_GRAD && threadIdx.x == 0 && blockIdx.y == 0) a.shift[c] = r0;
}

/* ---- finish ---------------------------------------------------------------------------------- */

/* The operands of a slot's finish, other than its partials: loaded before the partials are
   added, so that their latencies overlap (after, each waited for the stores before it). */
template <typename C> struct SlotOps {
    int64_t po, so;
    C shift, scale, bias, run_mean, run_var; /* statistics */
    C mean, invstd, dscale, dbias;           /* gradient (scale too) */
};

template <typename T, int P>
__device__ __forceinline__ void load_slot_ops(const Args<T> &a, uint32_t j, SlotOps<typename ocd_compute<T>::type> &s)
{
    a.sm.offsets(j, s.po, s.so);
    s.shift = s.scale = s.bias = s.run_mean = s.run_var = s.mean = s.invstd = s.dscale = s.dbias = 0;
    s.scale = a.scale[s.po];
    if (P == P_STATS) {
        s.bias = a.bias[s.po];
        if (a.run_mean && a.factor != 1) { /* a factor of 1 does not read the old values */
            s.run_mean = a.run_mean[s.so];
            s.run_var = a.run_var[s.so];
        }
        return;
    }
    if (P == P_GRAD) {
        s.mean = a.saved_mean[s.so];
        s.invstd = a.saved_invstd[s.so];
    }
    if (a.beta_p != 0) {
        s.dscale = a.dscale[s.po];
        s.dbias = a.dbias[s.po];
    }
}

/* A block is blockDim.y lanes (a power of two) times blockDim.x slots: lane l adds partials l,
   l + lanes, ... (up to FINISH_PER_LANE of them, all loads in flight), then the lanes' sums meet
   in a tree: a fixed order, so results depend only on the splits. P_BOTH derives the statistics
   and then the gradient sums about the mean: sum dp * (x - mean) = sum dp * (x - shift) -
   (mean - shift) * sum dp. */
template <typename T, int P>
__global__ void __launch_bounds__(FINISH_THREADS) k_finish(const Args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    const int NS = Sums<P>::N;
    __shared__ C sh[NS][FINISH_THREADS];
    const int tx = threadIdx.x, ty = threadIdx.y, slots = blockDim.x, at = ty * slots + tx;
    const uint32_t j = blockIdx.x * slots + tx;
    SlotOps<C> op;
    ocd_let_next_start(); /* the element pass, launched early */
    if (ty == 0 && j < a.K) load_slot_ops<T, P>(a, j, op);
    ocd_wait_ahead(); /* the reduction: its partials and shift */
    if (P != P_GRAD && ty == 0 && j < a.K) op.shift = a.shift[j];
    C s[NS];
#pragma unroll
    for (int q = 0; q < NS; q++) s[q] = 0;
    /* FINISH_PER_LANE partials a batch, every load issued before the first add (a loop with a
       trip count unknown to the compiler waits for each in turn) */
    for (int g0 = ty; j < a.K && g0 < a.G; g0 += FINISH_PER_LANE * blockDim.y) {
        C v[FINISH_PER_LANE][NS];
#pragma unroll
        for (int k = 0; k < FINISH_PER_LANE; k++) {
            const int g = g0 + k * blockDim.y;
#pragma unroll
            for (int q = 0; q < NS; q++) v[k][q] = g < a.G ? a.part[((size_t)q * a.G + g) * a.K + j] : (C)0;
        }
#pragma unroll
        for (int k = 0; k < FINISH_PER_LANE; k++)
#pragma unroll
            for (int q = 0; q < NS; q++) s[q] += v[k][q]; /* + 0 past the end: s is never -0 */
    }
#pragma unroll
    for (int q = 0; q < NS; q++) sh[q][at] = s[q];
    __syncthreads();
    for (int stride = blockDim.y / 2; stride > 0; stride >>= 1) {
        if (ty < stride)
#pragma unroll
            for (int q = 0; q < NS; q++) sh[q][at] += sh[q][at + stride * slots];
        __syncthreads();
    }
    if (ty != 0 || j >= a.K) return;
    const int64_t po = op.po, so = op.so;
    const C m = (C)a.M;
    C mean = op.mean, invstd = op.invstd, sdp = 0, sdpx = 0;
    if (P != P_GRAD) {
        const C s1 = sh[0][tx], s2 = sh[1][tx];
        C d = s1 / m, var = max(s2 / m - d * d, (C)0);
        mean = op.shift + d;
        invstd = inv_sqrt(var + (C)a.eps);
        if (P == P_BOTH) {
            sdp = sh[2][tx];
            sdpx = sh[3][tx] - d * sdp;
        } else {
            if (a.save_mean) {
                a.save_mean[so] = mean;
                a.save_invstd[so] = invstd;
            }
            if (a.run_mean) {
                /* the running variance is the unbiased one */
                C f = (C)a.factor, unbiased = a.M > 1 ? var * m / (m - 1) : var;
                C rm = f * mean, rv = f * unbiased;
                if (a.factor != 1) {
                    rm += (1 - f) * op.run_mean;
                    rv += (1 - f) * op.run_var;
                }
                a.run_mean[so] = rm;
                a.run_var[so] = rv;
            }
            C sc = op.scale * invstd;
            a.coef[j] = sc;
            a.coef[a.K + j] = op.bias - mean * sc;
            return;
        }
    } else {
        sdp = sh[0][tx];
        sdpx = sh[1][tx];
    }
    C ds = a.alpha_p * (sdpx * invstd), db = a.alpha_p * sdp;
    if (a.beta_p != 0) {
        ds += a.beta_p * op.dscale;
        db += a.beta_p * op.dbias;
    }
    a.dscale[po] = ds;
    a.dbias[po] = db;
    C A, B, Cc;
    OCD_BN_BACKWARD_COEFS(C, mean, invstd, op.scale, a.M, sdp, sdpx, A, B, Cc);
    a.coef[j] = A;
    a.coef[a.K + j] = B;
    a.coef[2 * a.K + j] = Cc;
}

/* ---- apply ----------------------------------------------------------------------------------- */

/* The coefficients of slot j: from the finish pass, or (inference) from the parameters. */
template <typename T, bool BWD>
__device__ __forceinline__ void slot_coefs(const Args<T> &a, uint32_t j, typename ocd_compute<T>::type c[3])
{
    typedef typename ocd_compute<T>::type C;
    if (a.coef) {
        c[0] = a.coef[j];
        c[1] = a.coef[a.K + j];
        c[2] = BWD ? a.coef[2 * a.K + j] : (C)0;
        return;
    }
    int64_t po, so;
    a.sm.offsets(j, po, so);
    C sc = a.scale[po] * inv_sqrt(a.est_var[so] + (C)a.eps);
    c[0] = sc;
    c[1] = a.bias[po] - a.est_mean[so] * sc;
    c[2] = 0;
}

/* out = alpha * out + beta * dst, dst read only when beta != 0, nothing done when alpha is 1 and
   beta 0 (the usual case: no multiply per lane). tmp is scratch. */
template <typename T, int V>
__device__ __forceinline__ void blend(const Args<T> &a, const T *dst, int n, typename ocd_compute<T>::type out[V],
                                      typename ocd_compute<T>::type tmp[V])
{
    if (a.beta != 0) {
        load_lanes<true, T, V>(dst, n, tmp);
#pragma unroll
        for (int i = 0; i < V; i++) out[i] = a.alpha * out[i] + a.beta * tmp[i];
    } else if (a.alpha != 1) {
#pragma unroll
        for (int i = 0; i < V; i++) out[i] *= a.alpha;
    }
}

/* Where apply_chunk writes: y and z forward, dx and dz backward, and the reserve space. */
struct Offs {
    int64_t out, extra, res;
};

/* The element pass of one chunk of n lanes at the offsets o, its main inputs loaded:
   forward y = alpha * act(c0*x + c1 (+ z)) + beta*y, backward dx = alpha * (c0*dp + c1*x + c2) +
   beta*dx and dz = alpha*dp + beta*dz. ACT as for load_grad: z, dz and the reserve space come
   only with an activation. */
template <typename T, int V, bool BWD, bool ACT>
__device__ __forceinline__ void apply_chunk(const Args<T> &a, const Offs &o, int n, const Chunk<T, V> &xc,
                                            const GradChunk<T, V> &gc, const typename ocd_compute<T>::type c0[V],
                                            const typename ocd_compute<T>::type c1[V],
                                            const typename ocd_compute<T>::type c2[V])
{
    typedef typename ocd_compute<T>::type C;
    C out[V], tmp[V]; /* few arrays live at once: registers are what limits the blocks per SM */
    unpack(xc, tmp);
    if (!BWD) {
#pragma unroll
        for (int i = 0; i < V; i++) out[i] = c0[i] * tmp[i] + c1[i];
        if (ACT && a.z) {
            load_lanes<true, T, V>(a.z + o.extra, n, tmp);
#pragma unroll
            for (int i = 0; i < V; i++) out[i] += tmp[i];
        }
        if (ACT && a.act) {
            if (a.res) store_lanes<T, V>(a.res + o.res, n, out);
#pragma unroll
            for (int i = 0; i < V; i++)
                out[i] = ocd_act_forward(a.act_mode, a.act_nan == CUDNN_PROPAGATE_NAN, a.act_coef, a.act_swish, out[i]);
        }
        blend<T, V>(a, a.y + o.out, n, out, tmp);
        store_lanes<T, V>(a.y + o.out, n, out);
    } else {
        C dp[V];
        unpack_dp<ACT>(a, gc, dp);
#pragma unroll
        for (int i = 0; i < V; i++) out[i] = c0[i] * dp[i] + (c1[i] * tmp[i] + c2[i]);
        blend<T, V>(a, a.dx + o.out, n, out, tmp);
        store_lanes<T, V>(a.dx + o.out, n, out);
        if (ACT && a.dz) {
#pragma unroll
            for (int i = 0; i < V; i++) out[i] = dp[i];
            blend<T, V>(a, a.dz + o.extra, n, out, tmp);
            store_lanes<T, V>(a.dz + o.extra, n, out);
        }
    }
}

/* Where lane i of rows thread tx (of txs) keeps its coefficients in each array of block_coefs:
   side by side (tx V + i) up to 4 lanes a thread, which a warp reads as 16-byte vectors without
   bank conflicts; beyond, in groups of 4 lanes, a group's array of txs threads after another,
   so that each 16-byte read of a warp still covers 512 consecutive bytes (side by side, 8 lanes
   of float were 8 wavefronts a read where 4 suffice). */
template <int V> __device__ __forceinline__ int coef_slot(int tx, int i, int txs)
{
    return V <= 4 ? tx * V + i : (i / 4) * (txs * 4) + tx * 4 + i % 4;
}

/* The coefficients of a rows block's a.tx * V (<= THREADS) lanes, into shared memory (3 arrays
   of THREADS, coef_slot), for the whole block: every thread calls it. */
template <typename T, int V, bool BWD>
__device__ __forceinline__ void block_coefs(const Args<T> &a, typename ocd_compute<T>::type *coefs)
{
    typedef typename ocd_compute<T>::type C;
    const int width = a.tx * V, t = threadIdx.y * a.tx + threadIdx.x;
    ocd_wait_ahead(); /* the finish, which wrote the coefficients (training, backward) */
    if (t < width) {
        const uint32_t j = blockIdx.x * width + t;
        C c[3] = {0, 0, 0};
        if (j < a.K) slot_coefs<T, BWD>(a, j, c);
        const int at = coef_slot<V>(t / V, t % V, a.tx);
        coefs[at] = c[0];
        coefs[THREADS + at] = c[1];
        coefs[2 * THREADS + at] = c[2];
    }
    __syncthreads();
}

/* The rows element passes. The coefficients of the block's lanes are computed once into shared
   memory (block_coefs) and read at each use, so that the registers go to loads in flight; the
   plain float-compute kernels issue their first round's loads before that, so that the block has
   loads in flight while it computes them (a block has one chunk, mostly). ACT as for load_grad: a kernel for the fused ops (z, the activation, the reserve space)
   and one without. */
template <typename T, int V, bool BWD, bool ACT, class L>
__global__ void __launch_bounds__(THREADS, (RowRounds<BWD, ACT, false>::BLOCKS))
k_apply_rows(const L lay, const Args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    const int U = RowRounds<BWD, ACT, false>::U;
    /* early coefficients: only where the loads in flight leave them the registers (ptxas: the
       double and fused-op kernels would spill) */
    const bool EARLY = !ACT && sizeof(C) == 4;
    __shared__ __align__(16) C coefs[3 * THREADS];
    const uint32_t j0 = (blockIdx.x * a.tx + threadIdx.x) * V;
    const int n = j0 < a.K ? min(V, (int)(a.K - j0)) : 0;
    if (!EARLY) {
        block_coefs<T, V, BWD>(a, coefs);
        if (n == 0) return;
    }
    /* the chunks, and the rows in them, in the reverse order of the reduction: see the top;
       gridDim.y <= a.nchunks, so that every block meets the coefficients' barrier */
    bool first = true;
    for (int64_t chunk = (int64_t)a.nchunks - 1 - blockIdx.y; chunk >= 0; chunk -= gridDim.y) {
        const uint32_t r0 = (uint32_t)chunk * a.chunk + threadIdx.y;
#pragma unroll
        for (int u0 = 0; u0 < ROWS; u0 += U) {
            Chunk<T, V> xc[U];
            GradChunk<T, V> gc[U];
            bool ok[U] = {};
            if (n > 0) load_round<true, true, BWD, ACT>(lay, a, r0, u0, j0, lanes<L, V>(n), xc, gc, ok);
            if (EARLY && u0 == 0 && first) {
                first = false;
                block_coefs<T, V, BWD>(a, coefs);
                if (n == 0) return;
            }
#pragma unroll
            for (int u = 0; u < U; u++) { /* positions recomputed: cheaper than keeping registers */
                if (!ok[u]) continue;
                const typename L::Pos p = lay.pos(round_row<true>(r0, u0, u, a.ty));
                const Offs o = {lay.at(p, BWD ? T_DX : T_Y, j0), lay.at(p, BWD ? T_DZ : T_Z, j0),
                                a.res ? lay.at(p, T_RES, j0) : 0};
                C c0[V], c1[V], c2[V];
#pragma unroll
                for (int i = 0; i < V; i++) {
                    const int at = coef_slot<V>(threadIdx.x, i, a.tx);
                    c0[i] = coefs[at];
                    c1[i] = coefs[THREADS + at];
                    c2[i] = BWD ? coefs[2 * THREADS + at] : (C)0;
                }
                apply_chunk<T, V, BWD, ACT>(a, o, lanes<L, V>(n), xc[u], gc[u], c0, c1, c2);
            }
        }
    }
}

template <typename T, int V, bool BWD>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS) k_apply_chan(const LayChan lay, const Args<T> a)
{
    typedef typename ocd_compute<T>::type C;
    const int U = Rounds<BWD, true, V>::U;
    /* the blocks in the reverse order of the reduction's: see the top */
    const uint32_t ch = gridDim.x - 1 - blockIdx.x, split = gridDim.y - 1 - blockIdx.y;
    C c[3], c0[V], c1[V], c2[V];
    ocd_wait_ahead(); /* the finish, which wrote the coefficients (training, backward) */
    slot_coefs<T, BWD>(a, ch, c);
#pragma unroll
    for (int i = 0; i < V; i++) {
        c0[i] = c[0];
        c1[i] = c[1];
        c2[i] = c[2];
    }
    const int64_t i0 = (int64_t)split * a.per_split, i1 = OCD_MIN((int64_t)a.M, i0 + a.per_split);
    for (int64_t i = i1 - (int64_t)(threadIdx.x + 1) * V; i >= i0; i -= (int64_t)THREADS * V * U) {
        Chunk<T, V> xc[U];
        GradChunk<T, V> gc[U];
        int64_t o[U];
        bool ok[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t e = i - (int64_t)u * THREADS * V;
            ok[u] = e >= i0;
            if (!ok[u]) continue;
            o[u] = lay.off(ch, (uint32_t)e);
            load_chunk<true>(a.x + o[u], V, xc[u]);
            if (BWD) load_grad<true, true>(a, o[u], o[u], V, gc[u]);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (ok[u]) apply_chunk<T, V, BWD, true>(a, Offs{o[u], o[u], o[u]}, V, xc[u], gc[u], c0, c1, c2);
    }
}

/* ---- launching ------------------------------------------------------------------------------- */

template <typename T> struct Runner {
    typedef typename ocd_compute<T>::type C;
    cudnnHandle_t h;
    const Plan *pl;
    Args<T> a;
    int V; /* the vector width used: the plan's, unless a pointer is not 16-byte aligned */
    /* Whether the element pass follows a finish (training, backward: it reads the finish's
       coefficients): then it is launched early, as the finish is after its reduction, so that
       each starts while the kernel ahead drains (cuda/launch.cuh) */
    bool early() const { return a.coef != NULL; }

    /* Rows grids: blocks along the slots times blocks along the rows, the reduction's a.G, the
       element pass's one a chunk (up to the grid's limit), so that the hardware keeps as many
       resident as the registers allow and a free SM takes the next chunk. */
    dim3 rows_grid(unsigned y) const { return dim3(div_up(a.K, (int64_t)a.tx * V), y); }

    static const int VEC = 16 / sizeof(T);

    /* Whether the statistics reduction takes k_reduce_bulk: where the plan says (Plan::bulk),
       with whole vectors, and its kernel was built for sm_90 or later and takes the shared
       memory of its ring (asked once). */
    bool bulk_reduction() const
    {
        if constexpr (sizeof(C) != 4 || VEC == 1) {
            return false;
        } else {
            static std::atomic<int> usable{-1}; /* -1: not yet asked */
            if (!pl->bulk || V != VEC) return false;
            int u = usable.load(std::memory_order_relaxed);
            if (u < 0) {
                const auto kernel = k_reduce_bulk<T, VEC>;
                u = ocd_bulk_built(kernel) &&
                    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         BULK_STAGES * BULK_STAGE_BYTES) == cudaSuccess;
                (void)cudaGetLastError();
                usable.store(u, std::memory_order_relaxed);
            }
            return u == 1;
        }
    }

    /* The rows kernels on layout lay: see k_reduce_rows and k_apply_rows for ACT. */
    template <int VV, int P, class L> void reduce_rows(const L &lay)
    {
        const dim3 grid = rows_grid((unsigned)a.G), block(a.tx, a.ty);
        if constexpr (P == P_STATS && VV > 1 && std::is_same<L, LayFlat>::value) {
            if (bulk_reduction()) {
                k_reduce_bulk<T, VV><<<grid, block, BULK_STAGES * BULK_STAGE_BYTES, h->stream>>>(a);
                return;
            }
        }
        if constexpr (P != P_STATS) {
            if (a.act) {
                k_reduce_rows<T, VV, P, true><<<grid, block, 0, h->stream>>>(lay, a);
                return;
            }
        }
        k_reduce_rows<T, VV, P, false><<<grid, block, 0, h->stream>>>(lay, a);
    }

    /* ACT as for k_apply_rows: the plain kernel whenever no op is fused. */
    template <int VV, bool BWD, class L> void apply_rows(const L &lay)
    {
        const dim3 grid = rows_grid(OCD_MIN(a.nchunks, 65535u)), block(a.tx, a.ty);
        if (!a.act) ocd_launch(early(), h->cc_major, k_apply_rows<T, VV, BWD, false, L>, grid, block, h->stream, lay, a);
        else ocd_launch(early(), h->cc_major, k_apply_rows<T, VV, BWD, true, L>, grid, block, h->stream, lay, a);
    }

    /* Launches a pass on the plan's layout with V lanes a thread (VEC, or 1 when V is): rows(vv,
       layout) for the rows layouts, chan(vv) for channels first, vv a std::integral_constant of
       the lanes. */
    template <class Rows, class Chan> cudnnStatus_t by_kind(Rows rows, Chan chan)
    {
        typedef std::integral_constant<int, VEC> Vec;
        typedef std::integral_constant<int, 1> One;
        switch (pl->kind) {
        case FLAT: rows(Vec(), pl->flat); break;
        case CHANNELS_LAST:
            if (V > 1) rows(Vec(), pl->rows);
            else rows(One(), pl->rows);
            break;
        case CHANNELS_FIRST:
            if (V > 1) chan(Vec());
            else chan(One());
            break;
        case STRIDED: rows(One(), pl->strided); break;
        }
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    }

    /* The reduction kernel of the plan's kind. */
    template <int P> cudnnStatus_t reduce()
    {
        return by_kind([&](auto vv, const auto &lay) { this->template reduce_rows<decltype(vv)::value, P>(lay); },
                       [&](auto vv) {
                           k_reduce_chan<T, decltype(vv)::value, P><<<dim3(a.K, a.G), THREADS, 0, h->stream>>>(pl->chan, a);
                       });
    }

    /* The element pass of the plan's kind. */
    template <bool BWD> cudnnStatus_t apply()
    {
        return by_kind([&](auto vv, const auto &lay) { this->template apply_rows<decltype(vv)::value, BWD>(lay); },
                       [&](auto vv) {
                           ocd_launch(early(), h->cc_major, k_apply_chan<T, decltype(vv)::value, BWD>, dim3(a.K, a.G),
                                      dim3(THREADS), h->stream, pl->chan, a);
                       });
    }

    /* The fewest lanes (a power of two, up to FINISH_LANES) that add at most FINISH_PER_LANE
       partials each, the rest of the block's threads along the slots (for the 396 splits of the
       bulk reduction on an H200 and 256 slots, 64 lanes of at most 7 partials and 64 blocks): a
       lane's partials load as one batch, and enough lanes share a slot that none adds many one
       after the other. */
    template <int P> cudnnStatus_t finish()
    {
        int lanes = 1;
        while (lanes < FINISH_LANES && (int64_t)lanes * FINISH_PER_LANE < a.G) lanes *= 2;
        const int slots = FINISH_THREADS / lanes;
        ocd_launch(true, h->cc_major, k_finish<T, P>, dim3(div_up(a.K, slots)), dim3(slots, lanes), h->stream, a);
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    }

    cudnnStatus_t run(const struct ocd_bn_problem *p, void *ws)
    {
        a.coef = NULL;
        if (p->dir != OCD_BN_INFERENCE) {
            C *w = (C *)ws;
            size_t gk = (size_t)a.G * a.K;
            a.part = w;
            a.shift = w + (p->dir == OCD_BN_BACKWARD ? Sums<P_BOTH>::N : Sums<P_STATS>::N) * gk;
            a.coef = a.shift + a.K;
        }
        switch (p->dir) {
        case OCD_BN_INFERENCE: return apply<false>();
        case OCD_BN_TRAINING:
            OCD_TRY(reduce<P_STATS>());
            OCD_TRY(finish<P_STATS>());
            return apply<false>();
        case OCD_BN_BACKWARD:
            /* without saved statistics, one pass sums them and the gradient's (P_BOTH) */
            if (p->saved_mean == NULL) {
                OCD_TRY(reduce<P_BOTH>());
                OCD_TRY(finish<P_BOTH>());
            } else {
                OCD_TRY(reduce<P_GRAD>());
                OCD_TRY(finish<P_GRAD>());
            }
            return apply<true>();
        }
        return CUDNN_STATUS_SUCCESS;
    }
};

template <typename T>
cudnnStatus_t run_typed(cudnnHandle_t h, const struct ocd_bn_problem *p, const Plan *pl, void *ws)
{
    typedef typename ocd_compute<T>::type C;
    Runner<T> r;
    r.h = h;
    r.pl = pl;
    Args<T> &a = r.a;
    memset(&a, 0, sizeof a);
    a.x = (const T *)p->x_ptr;
    a.z = (const T *)p->z_ptr;
    a.dy = (const T *)p->dy_ptr;
    a.y = (T *)p->y_ptr;
    a.dx = (T *)p->dx_ptr;
    a.dz = (T *)p->dz_ptr;
    a.res = (T *)p->reserve_ptr;
    a.scale = (const C *)p->scale;
    a.bias = (const C *)p->bias;
    a.est_mean = (const C *)p->est_mean;
    a.est_var = (const C *)p->est_var;
    a.saved_mean = (const C *)p->saved_mean;
    a.saved_invstd = (const C *)p->saved_invstd;
    a.save_mean = (C *)p->save_mean;
    a.save_invstd = (C *)p->save_invstd;
    a.run_mean = (C *)p->run_mean;
    a.run_var = (C *)p->run_var;
    a.dscale = (C *)p->dscale;
    a.dbias = (C *)p->dbias;
    a.alpha = (C)p->alpha;
    a.beta = (C)p->beta;
    a.alpha_p = (C)p->alpha_param;
    a.beta_p = (C)p->beta_param;
    a.act = p->ops != OCD_BN_OPS_NORM;
    a.act_mode = p->act_mode;
    a.act_nan = p->act_nan;
    a.act_coef = (C)p->act_coef;
    a.act_swish = (C)p->act_swish;
    a.eps = p->epsilon;
    a.factor = p->factor;
    a.K = (uint32_t)p->slots;
    a.M = (uint32_t)p->reduced;
    a.sm = pl->sm;
    a.G = pl->G;
    a.per_split = pl->per_split;
    r.V = pointers_aligned(p) ? pl->vec : 1; /* the flat plan has checked them */
    a.tx = pl->kind == CHANNELS_FIRST ? THREADS : block_tx(a.K, r.V);
    a.ty = THREADS / a.tx;
    a.chunk = (uint32_t)(ROWS * a.ty);
    a.nchunks = div_up(a.M, a.chunk);
    return r.run(p, ws);
}

} // namespace ocd_bn

#endif /* OCD_CUDA_BATCHNORM_KERNELS_CUH */
