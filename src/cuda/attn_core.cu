/* attn_core.cu: the attention core on CUDA (problem/attn_core.h has the math): the prologue every
   entry runs (cuda/attn_core.cuh), and the row kernels, which serve every problem: any data type,
   head size, layout, window and dropout.

   Row kernels: one warp per row, a few warps per block, each warp's vectors and accumulators in
   its own part of the shared memory (so any head size fits, no block barrier). Keys (forward,
   dq) or queries (dk, dv) are taken 32 at a time, one per lane: each lane forms its score with a
   dot product over the head, the warp reduces max and sum, and then every lane updates the
   output elements it owns (lane, lane + 32, ...) from the 32 weights broadcast through shared
   memory. The forward runs the online softmax (running max and sum, the accumulator rescaled
   when the max grows), so no score is stored; the row's log-sum-exp goes to the reserve. The
   backward is FlashAttention-2's: a first kernel per query row forms D_i = <do_i, o_i> and dq
   (P recomputed from the saved log-sum-exp), a second per key row (summing over the query beams
   that share it under ALL_TO_ONE) forms dk and dv; no element is written by two warps, so the
   result is deterministic. Dropout factors come from the Philox rule of the header, regenerated
   where needed. Compute type: float for float, half and bfloat16, double for double. */
#include "cuda/attn_core.cuh"
#include "cuda/types.cuh"

#include <math.h>

namespace {

constexpr int MAX_WARPS = 4;
constexpr size_t SMEM_MAX = 48 * 1024;

/* Shared-memory elements one warp uses (the largest of the three kernels). */
int warp_elems(const ocd_attn_core_problem &p)
{
    return 2 * (p.head_qk + p.head_v) + 64;
}

template <typename C> __device__ __forceinline__ C warp_max(C v)
{
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <typename C> __device__ __forceinline__ C warp_sum(C v)
{
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* dst[x] = operand row (b, m, h, t) element x, x = lane, lane + 32, ... < n. */
template <typename T, typename C>
__device__ __forceinline__ void load_row(C *dst, const ocd_attn_operand &x, int b, int m, int h, int t, int n,
                                         int lane)
{
    const T *src = (const T *)x.data + ocd_attn_core_row(&x, b, m, h, t);
    for (int e = lane; e < n; e += 32) dst[e] = ocd_cuda_load(src + e * x.stride[OCD_ATTN_ELEM]);
}

/* Operand row (b, m, h, t) = src (plus its prior value when add; zeros when src is NULL). */
template <typename T, typename C>
__device__ __forceinline__ void store_row(const ocd_attn_operand &x, int b, int m, int h, int t, int n, const C *src,
                                          bool add, int lane)
{
    T *dst = (T *)x.data + ocd_attn_core_row(&x, b, m, h, t);
    for (int e = lane; e < n; e += 32) {
        T *at = dst + e * x.stride[OCD_ATTN_ELEM];
        C v = src ? src[e] : C(0);
        ocd_cuda_store(at, add ? ocd_cuda_load(at) + v : v);
    }
}

/* <a, operand row (b, m, h, t)> over n elements, a in shared memory. */
template <typename T, typename C>
__device__ __forceinline__ C dot_row(const C *a, const ocd_attn_operand &x, int b, int m, int h, int t, int n)
{
    const T *src = (const T *)x.data + ocd_attn_core_row(&x, b, m, h, t);
    int64_t es = x.stride[OCD_ATTN_ELEM];
    C s = 0;
    for (int e = 0; e < n; e++) s += a[e] * ocd_cuda_load(src + e * es);
    return s;
}

/* acc[x] = acc[x] * scale + sum over t < n of w[t] * operand row (b, m, h, t0 + t) element x. */
template <typename T, typename C>
__device__ __forceinline__ void accumulate_rows(C *acc, C scale, const C *w, int n, const ocd_attn_operand &x, int b,
                                                int m, int h, int t0, int d, int lane)
{
    const T *src = (const T *)x.data + ocd_attn_core_row(&x, b, m, h, t0);
    int64_t ts = x.stride[OCD_ATTN_TIME], es = x.stride[OCD_ATTN_ELEM];
    for (int e = lane; e < d; e += 32) {
        C a = acc[e] * scale;
        for (int t = 0; t < n; t++) a += w[t] * ocd_cuda_load(src + t * ts + e * es);
        acc[e] = a;
    }
}

/* A query row: its (b, m, h, i), the beam of its keys (mk), its keys [lo, hi) (empty beyond the
   sequence's length) and its index among the rows (ri). */
struct rowpos {
    int b, m, h, i, mk, lo, hi;
    int64_t ri;
};

/* The rows (b, m, h, i) of the query range: one warp each. */
__host__ __device__ __forceinline__ int64_t query_rows(const ocd_attn_core_problem &p)
{
    return (int64_t)p.batch * p.beams * p.heads * p.q_count;
}

/* This warp's row of the query range; false past the last. */
__device__ __forceinline__ bool query_row(const ocd_attn_dev &d, rowpos &r)
{
    const ocd_attn_core_problem &p = d.p;
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= query_rows(p)) return false;
    r.i = p.q_first + (int)(row % p.q_count);
    int64_t u = row / p.q_count;
    r.h = (int)(u % p.heads), r.m = (int)(u / p.heads % p.beams), r.b = (int)(u / p.heads / p.beams);
    r.mk = p.kv_shared ? 0 : r.m;
    int lq = ocd_attn_core_clamp(p.len_q[r.b * p.beams + r.m], p.max_q);
    int lkv = ocd_attn_core_clamp(p.len_kv[r.b * d.kv_beams + r.mk], p.max_kv);
    r.lo = 0, r.hi = 0;
    if (r.i < lq) ocd_attn_core_keys(p.lo_win[r.i], p.hi_win[r.i], lkv, &r.lo, &r.hi);
    r.ri = ocd_attn_row_index(p, r.b, r.m, r.h, r.i);
    return true;
}

template <typename T>
__global__ void __launch_bounds__(MAX_WARPS * 32) attn_fwd_rows(ocd_attn_dev d, int per_warp)
{
    typedef typename ocd_compute<T>::type C;
    extern __shared__ double smem_d[];
    const ocd_attn_core_problem &p = d.p;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    rowpos r;
    if (!query_row(d, r)) return;
    if (r.lo >= r.hi) {
        store_row<T, C>(p.o, r.b, r.m, r.h, r.i, p.head_v, (const C *)nullptr, false, lane);
        if (d.lse && lane == 0) ((C *)d.lse)[r.ri] = -INFINITY;
        return;
    }
    C *qs = (C *)smem_d + warp * per_warp, *acc = qs + p.head_qk, *w = acc + p.head_v;
    load_row<T>(qs, p.q, r.b, r.m, r.h, r.i, p.head_qk, lane);
    for (int e = lane; e < p.head_v; e += 32) acc[e] = 0;
    __syncwarp();
    C mx = -INFINITY, l = 0, scaler = (C)p.sm_scaler;
    for (int j0 = r.lo; j0 < r.hi; j0 += 32) {
        int j = j0 + lane;
        bool valid = j < r.hi;
        C s = valid ? scaler * dot_row<T>(qs, p.k, r.b, r.mk, r.h, j, p.head_qk) : C(-INFINITY);
        C nm = fmax(mx, warp_max(s));
        C pj = valid ? exp(s - nm) : C(0), corr = exp(mx - nm);
        l = l * corr + warp_sum(pj);
        w[lane] = valid ? pj * ocd_attn_drop<C>(d, (uint64_t)r.ri * p.max_kv + j) : C(0);
        __syncwarp();
        accumulate_rows<T>(acc, corr, w, min(32, r.hi - j0), p.v, r.b, r.mk, r.h, j0, p.head_v, lane);
        __syncwarp();
        mx = nm;
    }
    for (int e = lane; e < p.head_v; e += 32) acc[e] /= l;
    __syncwarp();
    store_row<T>(p.o, r.b, r.m, r.h, r.i, p.head_v, acc, false, lane);
    if (d.lse && lane == 0) ((C *)d.lse)[r.ri] = mx + log(l);
}

/* Backward, per query row: D_i and dq. */
template <typename T>
__global__ void __launch_bounds__(MAX_WARPS * 32) attn_bwd_dq(ocd_attn_dev d, int per_warp)
{
    typedef typename ocd_compute<T>::type C;
    extern __shared__ double smem_d[];
    const ocd_attn_core_problem &p = d.p;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    rowpos r;
    if (!query_row(d, r)) return;
    C lse = r.lo < r.hi ? ((const C *)d.lse)[r.ri] : C(-INFINITY);
    if (lse == C(-INFINITY)) {
        if (!p.accumulate) store_row<T, C>(p.dq, r.b, r.m, r.h, r.i, p.head_qk, nullptr, false, lane);
        return;
    }
    C *qs = (C *)smem_d + warp * per_warp, *gos = qs + p.head_qk, *acc = gos + p.head_v, *w = acc + p.head_qk;
    load_row<T>(qs, p.q, r.b, r.m, r.h, r.i, p.head_qk, lane);
    load_row<T>(gos, p.d_o, r.b, r.m, r.h, r.i, p.head_v, lane);
    for (int e = lane; e < p.head_qk; e += 32) acc[e] = 0;
    __syncwarp();
    C part = 0, scaler = (C)p.sm_scaler;
    const T *o = (const T *)p.o.data + ocd_attn_core_row(&p.o, r.b, r.m, r.h, r.i);
    for (int e = lane; e < p.head_v; e += 32) part += gos[e] * ocd_cuda_load(o + e * p.o.stride[OCD_ATTN_ELEM]);
    C D = warp_sum(part);
    if (lane == 0) ((C *)d.D)[r.ri] = D;
    for (int j0 = r.lo; j0 < r.hi; j0 += 32) {
        int j = j0 + lane;
        C ds = 0;
        if (j < r.hi) {
            C pj = exp(scaler * dot_row<T>(qs, p.k, r.b, r.mk, r.h, j, p.head_qk) - lse);
            C f = ocd_attn_drop<C>(d, (uint64_t)r.ri * p.max_kv + j);
            ds = pj * (f * dot_row<T>(gos, p.v, r.b, r.mk, r.h, j, p.head_v) - D) * scaler;
        }
        w[lane] = ds;
        __syncwarp();
        accumulate_rows<T>(acc, C(1), w, min(32, r.hi - j0), p.k, r.b, r.mk, r.h, j0, p.head_qk, lane);
        __syncwarp();
    }
    store_row<T>(p.dq, r.b, r.m, r.h, r.i, p.head_qk, acc, p.accumulate, lane);
}

/* Backward, per key row (b, K/V beam, h, j): dk and dv over the query beams that read it. */
template <typename T>
__global__ void __launch_bounds__(MAX_WARPS * 32) attn_bwd_dkv(ocd_attn_dev d, int per_warp)
{
    typedef typename ocd_compute<T>::type C;
    extern __shared__ double smem_d[];
    const ocd_attn_core_problem &p = d.p;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + warp;
    if (row >= (int64_t)p.batch * d.kv_beams * p.heads * p.max_kv) return;
    int j = (int)(row % p.max_kv);
    int64_t u = row / p.max_kv;
    int h = (int)(u % p.heads), mk = (int)(u / p.heads % d.kv_beams), b = (int)(u / p.heads / d.kv_beams);
    int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
    if (j >= lkv) {
        if (!p.accumulate) {
            store_row<T, C>(p.dk, b, mk, h, j, p.head_qk, nullptr, false, lane);
            store_row<T, C>(p.dv, b, mk, h, j, p.head_v, nullptr, false, lane);
        }
        return;
    }
    C *ks = (C *)smem_d + warp * per_warp, *vs = ks + p.head_qk, *gk = vs + p.head_v, *gv = gk + p.head_qk;
    C *w = gv + p.head_v, *wv = w + 32;
    load_row<T>(ks, p.k, b, mk, h, j, p.head_qk, lane);
    load_row<T>(vs, p.v, b, mk, h, j, p.head_v, lane);
    for (int e = lane; e < p.head_qk; e += 32) gk[e] = 0;
    for (int e = lane; e < p.head_v; e += 32) gv[e] = 0;
    __syncwarp();
    C scaler = (C)p.sm_scaler;
    int m0 = p.kv_shared ? 0 : mk, m1 = p.kv_shared ? p.beams : mk + 1;
    for (int m = m0; m < m1; m++) {
        int lq = ocd_attn_core_clamp(p.len_q[b * p.beams + m], p.max_q);
        int iend = min(p.q_first + p.q_count, lq);
        for (int i0 = p.q_first; i0 < iend; i0 += 32) {
            int i = i0 + lane;
            C ds = 0, pv = 0;
            if (i < iend) {
                int lo, hi;
                ocd_attn_core_keys(p.lo_win[i], p.hi_win[i], lkv, &lo, &hi);
                int64_t ri = ocd_attn_row_index(p, b, m, h, i);
                if (lo <= j && j < hi) {
                    C pj = exp(scaler * dot_row<T>(ks, p.q, b, m, h, i, p.head_qk) - ((const C *)d.lse)[ri]);
                    C f = ocd_attn_drop<C>(d, (uint64_t)ri * p.max_kv + j);
                    ds = pj * (f * dot_row<T>(vs, p.d_o, b, m, h, i, p.head_v) - ((const C *)d.D)[ri]) * scaler;
                    pv = pj * f;
                }
            }
            w[lane] = ds, wv[lane] = pv;
            __syncwarp();
            int n = min(32, iend - i0);
            accumulate_rows<T>(gk, C(1), w, n, p.q, b, m, h, i0, p.head_qk, lane);
            accumulate_rows<T>(gv, C(1), wv, n, p.d_o, b, m, h, i0, p.head_v, lane);
            __syncwarp();
        }
    }
    store_row<T>(p.dk, b, mk, h, j, p.head_qk, gk, p.accumulate, lane);
    store_row<T>(p.dv, b, mk, h, j, p.head_v, gv, p.accumulate, lane);
}

/* The generator words: rng -> the workspace's copy (and the reserve's), rng advanced. */
__global__ void attn_gen(uint64_t *rng, uint64_t *ws_gen, uint64_t *reserve, bool advance)
{
    uint64_t seed = rng[0], offset = rng[1];
    ws_gen[0] = seed, ws_gen[1] = offset;
    if (reserve) reserve[0] = seed, reserve[1] = offset;
    if (advance) rng[1] = offset + 1;
}

/* The windows reach the workspace as kernel arguments, WIN_CHUNK values a launch (within the
   4 KiB of parameters every CUDA version takes): a graph captured on the stream then holds the
   values of the call, as a direct call reads them, where a copy from pageable host memory could
   not be captured at all. */
constexpr int WIN_CHUNK = 1000;
struct win_chunk {
    int v[WIN_CHUNK];
};

__global__ void attn_windows(win_chunk c, int *dst, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = c.v[i];
}

/* Shared bytes of a block of `warps` warps of the row kernels. */
size_t rows_smem(const ocd_attn_core_problem &p, int warps)
{
    return (size_t)warps * warp_elems(p) * (p.dtype == CUDNN_DATA_DOUBLE ? 8 : 4);
}

} // namespace

cudnnStatus_t ocd_cuda_attn_prologue(cudnnHandle_t handle, const ocd_attn_core_call *c, bool forward,
                                     ocd_attn_dev *d)
{
    const ocd_attn_core_problem *p = c->p;
    ocd_attn_dev_init(c, forward, d);
    cudaStream_t s = handle->stream;
    int *dst = (int *)d->p.lo_win; /* lo_win, then hi_win: 2 max_q values */
    for (int t0 = 0; t0 < 2 * p->max_q; t0 += WIN_CHUNK) {
        win_chunk c;
        int n = min(WIN_CHUNK, 2 * p->max_q - t0);
        for (int t = 0; t < n; t++) c.v[t] = t0 + t < p->max_q ? p->lo_win[t0 + t] : p->hi_win[t0 + t - p->max_q];
        attn_windows<<<1, 256, 0, s>>>(c, dst + t0, n);
        OCD_CUDA_LAUNCHED();
    }
    if (forward && p->dropout > 0) {
        attn_gen<<<1, 1, 0, s>>>(p->rng, (uint64_t *)d->gen, (uint64_t *)c->reserve, p->rng_advance);
        OCD_CUDA_LAUNCHED();
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Launches one row kernel over `rows` rows, as many warps a block (up to MAX_WARPS) as the
   default 48 KiB of shared memory holds (applies() made sure one does). */
template <typename T>
static cudnnStatus_t launch_rows(cudnnHandle_t handle, void (*kernel)(ocd_attn_dev, int), const ocd_attn_dev &d,
                                 int64_t rows)
{
    int warps = MAX_WARPS;
    while (warps > 1 && rows_smem(d.p, warps) > SMEM_MAX) warps /= 2;
    int64_t blocks = (rows + warps - 1) / warps;
    kernel<<<(unsigned)blocks, warps * 32, rows_smem(d.p, warps), handle->stream>>>(d, warp_elems(d.p));
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

static const char *rows_rejects(const ocd_attn_core_problem *p)
{
    return rows_smem(*p, 1) > SMEM_MAX ? "head sizes too large for the row kernels' shared memory" : nullptr;
}

extern "C" const char *ocd_cuda_attn_rows_applies(cudnnHandle_t, const void *call)
{
    return rows_rejects(static_cast<const ocd_attn_core_call *>(call)->p);
}

extern "C" cudnnStatus_t ocd_cuda_attn_fwd_rows(cudnnHandle_t handle, const void *call, void *, size_t)
{
    const ocd_attn_core_call *c = static_cast<const ocd_attn_core_call *>(call);
    ocd_attn_dev d;
    OCD_TRY(ocd_cuda_attn_prologue(handle, c, true, &d));
    int64_t rows = query_rows(d.p);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(d.p.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        return launch_rows<T>(handle, attn_fwd_rows<T>, d, rows);
    });
}

extern "C" cudnnStatus_t ocd_cuda_attn_bwd_rows(cudnnHandle_t handle, const void *call, void *, size_t)
{
    const ocd_attn_core_call *c = static_cast<const ocd_attn_core_call *>(call);
    ocd_attn_dev d;
    OCD_TRY(ocd_cuda_attn_prologue(handle, c, false, &d));
    int64_t qrows = query_rows(d.p);
    int64_t krows = (int64_t)d.p.batch * d.kv_beams * d.p.heads * d.p.max_kv;
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(d.p.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        OCD_TRY(launch_rows<T>(handle, attn_bwd_dq<T>, d, qrows));
        return launch_rows<T>(handle, attn_bwd_dkv<T>, d, krows);
    });
}
