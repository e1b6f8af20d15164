/* attn_core_flash_bwd.cuh: what the fused attention backward kernels share (the sm_80 one,
   cuda/attn_core_flash_bwd.cu, and the Hopper one, cuda/attn_core_flash_bwd_sm90.cu): their
   applicability, the call's three kernels around the main one (the float dq accumulators in the
   workspace zeroed; a prologue, one thread per query row, forming D_i = <do_i, o_i>; a final
   kernel, one thread per dq element, writing dq = smScaler * accumulator), what a block knows of
   a query row, its walk over the query blocks that reach its keys, and each thread's part of the
   probabilities, dS, the dq accumulation and the dk and dv stores. Both main kernels take a
   block of NK keys of one (batch item, K/V beam, head) and hold their keys' S^T and dP~^T in
   accumulators laid out as mma.sync's (cuda/attn_core_flash.cuh: a wgmma accumulator is one per
   warp), warp w of the block owning keys 16 w ... Every piece is host-callable, so that
   tests/emulate/attn_flash_bwd*.cu run each thread's logic on the CPU.

   Everything here lies in an anonymous namespace: each kernel file instantiates its own copies
   of the prologue and final kernels for the architectures it is compiled for. */
#ifndef OCD_CUDA_ATTN_CORE_FLASH_BWD_CUH
#define OCD_CUDA_ATTN_CORE_FLASH_BWD_CUH

#include "cuda/attn_core_flash.cuh"

#include <math.h>

namespace {

/* What a block knows of a query row: its keys [lo, hi) (empty past the query range or the row's
   length), its log-sum-exp in the base-2 domain and its D_i. */
struct bwd_row {
    int lo, hi;
    float lse2, Dv;
};

/* The row of query step i of (b, m, h), for len_q lq and len_kv lkv. The windows and the
   statistics are read together (those of a row without keys are not used), so that a block's
   walk waits for one round of loads a query block. */
__host__ __device__ __forceinline__ bwd_row bwd_row_info(const ocd_attn_dev &d, int b, int m, int h, int i, int lq,
                                                        int lkv)
{
    const ocd_attn_core_problem &p = d.p;
    bwd_row r = {0, 0, 0.f, 0.f};
    if (i >= p.max_q) return r;
    int64_t ri = ocd_attn_row_index(p, b, m, h, i);
    int lw = p.lo_win[i], hw = p.hi_win[i];
    float lse = ((const float *)d.lse)[ri], Dv = ((const float *)d.D)[ri];
    if (i < p.q_first + p.q_count && i < lq) ocd_attn_core_keys(lw, hw, lkv, &r.lo, &r.hi);
    if (r.lo < r.hi) r.lse2 = lse * 1.4426950408889634f, r.Dv = Dv;
    return r;
}

/* True when a row reaches one of the keys [j0, j0 + NK). */
template <int NK> __host__ __device__ __forceinline__ bool bwd_reaches(const bwd_row &r, int j0)
{
    return r.lo < r.hi && r.lo < j0 + NK && r.hi > j0;
}

/* A thread's dk and dv accumulators zeroed before a block's walk; returns the factor that takes
   scores to the base-2 domain (smScaler log2 e). */
template <int NO>
__host__ __device__ __forceinline__ float bwd_acc_init(const ocd_attn_core_problem &p, float (&dk)[NO][4],
                                                       float (&dv)[NO][4])
{
#pragma unroll
    for (int j = 0; j < NO; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) dk[j][e] = 0.f, dv[j][e] = 0.f;
    return (float)(p.sm_scaler * 1.4426950408889634);
}

/* 2^x, approximately (ex2.approx.ftz: relative error about 2^-22, results below 2^-126 flushed
   to zero, 2^-inf = 0) on the device; exp2f on the host. */
__host__ __device__ __forceinline__ float bwd_exp2(float x)
{
#ifdef __CUDA_ARCH__
    float y;
    asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return exp2f(x);
#endif
}

/* The probabilities and dS in two steps, so that a kernel may start on P while dP~ is still on
   the tensor cores. The thread's elements are those of key rows j0w + lane / 4 (+ 8) and
   queries i0 + 8 j + 2 (lane % 4) + {0, 1} (bit 4 j + e of a keep mask: NS <= 8); rows: those of
   the queries.
   - bwd_probs_p: S^T (s) becomes P^T, P recomputed from the row's log-sum-exp inside its
     window; returns the dropout keep mask (all ones without dropout);
   - bwd_drop: the dropout factor f of an element (drop_scale kept, 0 dropped; 1 without);
   - bwd_probs_ds: dP~^T (dp) becomes dS^T without smScaler, dS = P (dP~ f - D). */
template <bool DROPOUT, int NS>
__host__ __device__ __forceinline__ uint32_t bwd_probs_p(const ocd_attn_dev &d, float (&s)[NS][4], const bwd_row *rows,
                                                         int b, int m, int h, int i0, int j0w, int lane, float scale2)
{
    static_assert(NS <= 8, "a keep bit per element in 32 bits");
    uint32_t keep = ~0u;
#pragma unroll
    for (int j = 0; j < NS; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int key = j0w + lane / 4 + (e / 2) * 8, qc = j * 8 + 2 * (lane & 3) + (e & 1);
            const bwd_row &r = rows[qc];
            bool in = (key >= r.lo) & (key < r.hi); /* a select, not a branch per element */
            s[j][e] = bwd_exp2(in ? s[j][e] * scale2 - r.lse2 : -INFINITY);
            if (DROPOUT &&
                ocd_attn_drop<float>(d, (uint64_t)ocd_attn_row_index(d.p, b, m, h, i0 + qc) * d.p.max_kv + key) == 0.f)
                keep &= ~(1u << (j * 4 + e));
        }
    return keep;
}

template <bool DROPOUT>
__host__ __device__ __forceinline__ float bwd_drop(const ocd_attn_dev &d, uint32_t keep, int j, int e)
{
    return !DROPOUT ? 1.f : keep >> (j * 4 + e) & 1u ? (float)d.drop_scale : 0.f;
}

template <bool DROPOUT, int NS>
__host__ __device__ __forceinline__ void bwd_probs_ds(const ocd_attn_dev &d, const float (&s)[NS][4],
                                                      float (&dp)[NS][4], const bwd_row *rows, uint32_t keep, int lane)
{
#pragma unroll
    for (int j = 0; j < NS; j++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            dp[j][e] = s[j][e] * (dp[j][e] * bwd_drop<DROPOUT>(d, keep, j, e) - rows[j * 8 + 2 * (lane & 3) + (e & 1)].Dv);
}

/* Both steps at once: S^T (s) becomes P~^T = P f and dP~^T (dp) dS^T without smScaler. */
template <bool DROPOUT, int NS>
__host__ __device__ __forceinline__ void bwd_probs(const ocd_attn_dev &d, float (&s)[NS][4], float (&dp)[NS][4],
                                                   const bwd_row *rows, int b, int m, int h, int i0, int j0w, int lane,
                                                   float scale2)
{
    uint32_t keep = bwd_probs_p<DROPOUT>(d, s, rows, b, m, h, i0, j0w, lane, scale2);
    bwd_probs_ds<DROPOUT>(d, s, dp, rows, keep, lane);
#pragma unroll
    for (int j = 0; DROPOUT && j < NS; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) s[j][e] *= bwd_drop<DROPOUT>(d, keep, j, e);
}

/* The A fragment of k-step kk of P~^T from P^T (s) and the keep mask (flash_p_frag with the
   dropout factors applied). */
template <typename T, bool DROPOUT, int NS>
__host__ __device__ __forceinline__ void bwd_p_frag(uint32_t pf[4], const ocd_attn_dev &d, const float (&s)[NS][4],
                                                    uint32_t keep, int kk)
{
    float f[2][4];
#pragma unroll
    for (int t = 0; t < 2; t++)
#pragma unroll
        for (int e = 0; e < 4; e++) f[t][e] = s[2 * kk + t][e] * bwd_drop<DROPOUT>(d, keep, 2 * kk + t, e);
    flash_p_frag<T>(pf, f, 0);
}

/* Two floats added to a pair of dq accumulators, at an 8-byte boundary (atomically on the
   device, one vector atomic on sm_90: blocks of other keys add too). */
__host__ __device__ __forceinline__ void bwd_dq_add2(float *at, float x, float y)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd((float2 *)at, make_float2(x, y));
#elif defined(__CUDA_ARCH__)
    atomicAdd(at, x);
    atomicAdd(at + 1, y);
#else
    at[0] += x, at[1] += y;
#endif
}

/* Adds a warp's dQ part (query rows qg * 16 + lane / 4 (+ 8) of the query block from i0, columns
   c0 + 8 j + ..) to the accumulators, for rows that reach the block's keys [j0, j0 + NK). */
template <int NK, int NQ>
__host__ __device__ __forceinline__ void bwd_add_dq(const ocd_attn_dev &d, const float (&acc)[NQ][4],
                                                    const bwd_row *rows, int b, int m, int h, int i0, int j0, int qg,
                                                    int c0, int lane)
{
    for (int hr = 0; hr < 2; hr++) {
        int qr = qg * 16 + lane / 4 + hr * 8;
        if (!bwd_reaches<NK>(rows[qr], j0)) continue;
        float *dst = d.dq_acc + ocd_attn_row_index(d.p, b, m, h, i0 + qr) * d.p.head_qk + c0 + 2 * (lane & 3);
        for (int j = 0; j < NQ; j++) bwd_dq_add2(dst + j * 8, acc[j][hr * 2], acc[j][hr * 2 + 1]);
    }
}

/* Writes a thread's part of the block's dk (times scale) or dv rows: key rows j0 + warp * 16 +
   lane / 4 (+ 8) below max_kv; zeros past lkv, untouched there when accumulating. */
template <typename T, int NO>
__host__ __device__ __forceinline__ void bwd_store_kv(const ocd_attn_dev &d, const ocd_attn_operand &x, int b, int mk,
                                                      int h, int j0, int lkv, const float (&acc)[NO][4], float scale,
                                                      int warp, int lane)
{
    const ocd_attn_core_problem &p = d.p;
    for (int hr = 0; hr < 2; hr++) {
        int key = j0 + warp * 16 + lane / 4 + hr * 8;
        if (key >= p.max_kv || (key >= lkv && p.accumulate)) continue;
        T *row = (T *)x.data + ocd_attn_core_row(&x, b, mk, h, key) + 2 * (lane & 3);
        for (int j = 0; j < NO; j++)
            for (int c = 0; c < 2; c++) {
                T *at = row + j * 8 + c;
                float v = key < lkv ? acc[j][hr * 2 + c] * scale : 0.f;
                ocd_cuda_store(at, p.accumulate ? ocd_cuda_load(at) + v : v);
            }
    }
}

/* Query row `row` (over batch, beam, head and the query range, the range fastest) of the
   prologue and final kernels: its (b, m, h, i), its reserve index, and whether i < len_q. */
__host__ __device__ __forceinline__ int64_t bwd_query_row(const ocd_attn_dev &d, int64_t row, int *b, int *m, int *h,
                                                          int *i, bool *valid)
{
    const ocd_attn_core_problem &p = d.p;
    *i = p.q_first + (int)(row % p.q_count);
    int64_t u = row / p.q_count;
    *h = (int)(u % p.heads), *m = (int)(u / p.heads % p.beams), *b = (int)(u / p.heads / p.beams);
    *valid = *i < ocd_attn_core_clamp(p.len_q[*b * p.beams + *m], p.max_q);
    return ocd_attn_row_index(p, *b, *m, *h, *i);
}

/* 16 bytes from a 16-byte aligned address (one vector load on the device). */
template <typename T> __host__ __device__ __forceinline__ void bwd_load16(T (&dst)[8], const T *src)
{
#ifdef __CUDA_ARCH__
    uint4 v = *(const uint4 *)src;
    memcpy(dst, &v, 16);
#else
    memcpy(dst, src, 16);
#endif
}

/* Prologue, one query row: D_i (o and do rows are 16-byte aligned and contiguous: bwd_rejects). */
template <typename T> __host__ __device__ __forceinline__ void bwd_prep_row(const ocd_attn_dev &d, int64_t row)
{
    const ocd_attn_core_problem &p = d.p;
    int b, m, h, i;
    bool valid;
    int64_t ri = bwd_query_row(d, row, &b, &m, &h, &i, &valid);
    float s = 0.f;
    if (valid) {
        const T *o = (const T *)p.o.data + ocd_attn_core_row(&p.o, b, m, h, i);
        const T *g = (const T *)p.d_o.data + ocd_attn_core_row(&p.d_o, b, m, h, i);
        for (int e = 0; e < p.head_v; e += 8) {
            T a[8], c[8];
            bwd_load16(a, o + e);
            bwd_load16(c, g + e);
            for (int x = 0; x < 8; x++) s += ocd_cuda_load(a + x) * ocd_cuda_load(c + x);
        }
    }
    ((float *)d.D)[ri] = s;
}

/* Final kernel, one dq element (element e of query row `row`, t = row * head_qk + e): smScaler
   times its accumulator (added to dq when accumulating). */
template <typename T> __host__ __device__ __forceinline__ void bwd_dq_elem(const ocd_attn_dev &d, int64_t t)
{
    const ocd_attn_core_problem &p = d.p;
    int b, m, h, i, e = (int)(t % p.head_qk);
    bool valid;
    int64_t ri = bwd_query_row(d, t / p.head_qk, &b, &m, &h, &i, &valid);
    T *at = (T *)p.dq.data + ocd_attn_core_row(&p.dq, b, m, h, i) + e * p.dq.stride[OCD_ATTN_ELEM];
    float v = d.dq_acc[ri * p.head_qk + e] * (float)p.sm_scaler;
    ocd_cuda_store(at, p.accumulate ? ocd_cuda_load(at) + v : v);
}

/* The walk of a block: iteration `it` of the nm * nqb query blocks is beam m0 + it / nqb, steps
   from q_first + (it % nqb) * bq. */
struct bwd_walk {
    int m0, nqb, nit;
};

__host__ __device__ __forceinline__ bwd_walk bwd_walk_of(const ocd_attn_dev &d, int mk, int j0, int lkv, int bq)
{
    const ocd_attn_core_problem &p = d.p;
    bwd_walk w;
    w.m0 = p.kv_shared ? 0 : mk;
    w.nqb = (p.q_count + bq - 1) / bq;
    w.nit = j0 < lkv ? (p.kv_shared ? p.beams : 1) * w.nqb : 0;
    return w;
}

/* len_q of beam m, read again only when the beam changes. */
struct bwd_lq {
    int m = -1, lq = 0;
    __host__ __device__ __forceinline__ int of(const ocd_attn_core_problem &p, int b, int beam)
    {
        if (beam != m) m = beam, lq = ocd_attn_core_clamp(p.len_q[b * p.beams + beam], p.max_q);
        return lq;
    }
};

/* The first iteration from `it` whose query block (BQ rows) reaches the keys [j0, j0 + NK) (nit
   if none); thread tid < BQ leaves its row of that block in *mine. Every thread of the vote
   calls it alike: vote(reach) is true when any of theirs is (a barrier's reduction). */
template <int BQ, int NK, typename Vote>
__device__ __forceinline__ int bwd_next(const ocd_attn_dev &d, const bwd_walk &w, int it, int b, int h, int j0,
                                        int lkv, int tid, bwd_lq &lq, bwd_row *mine, Vote vote)
{
    for (; it < w.nit; it++) {
        int m = w.m0 + it / w.nqb, i0 = d.p.q_first + (it % w.nqb) * BQ;
        bool reach = false;
        if (tid < BQ) {
            *mine = bwd_row_info(d, b, m, h, i0 + tid, lq.of(d.p, b, m), lkv);
            reach = bwd_reaches<NK>(*mine, j0);
        }
        if (vote(reach)) break;
    }
    return it;
}

template <typename T> __global__ void attn_bwd_flash_prep(ocd_attn_dev d, int64_t rows)
{
    int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) bwd_prep_row<T>(d, row);
}

template <typename T> __global__ void attn_bwd_flash_dq(ocd_attn_dev d, int64_t n)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) bwd_dq_elem<T>(d, t);
}

/* Bytes of the dq accumulators, zeroed before the main kernel. */
inline size_t bwd_acc_bytes(const ocd_attn_dev &d)
{
    return (size_t)d.p.batch * d.p.beams * d.p.heads * d.p.max_q * d.p.head_qk * sizeof(float);
}

/* A main kernel's grid: a block per NK keys of each (batch item, K/V beam, head). */
template <int NK> dim3 bwd_grid(const ocd_attn_dev &d)
{
    return dim3((unsigned)((d.p.max_kv + NK - 1) / NK), (unsigned)(d.p.batch * d.kv_beams * d.p.heads));
}

/* The call's kernels on the handle's stream: the accumulators zeroed, the prologue, main()
   (which launches the main kernel), the final kernel. */
template <typename T, typename Main> cudnnStatus_t bwd_run(cudnnHandle_t handle, const ocd_attn_dev &d, Main main)
{
    const ocd_attn_core_problem &p = d.p;
    int64_t rows = (int64_t)p.batch * p.beams * p.heads * p.q_count, n = rows * p.head_qk;
    OCD_CUDA_TRY(cudaMemsetAsync(d.dq_acc, 0, bwd_acc_bytes(d), handle->stream));
    attn_bwd_flash_prep<T><<<(unsigned)((rows + 255) / 256), 256, 0, handle->stream>>>(d, rows);
    OCD_CUDA_LAUNCHED();
    OCD_TRY(main());
    attn_bwd_flash_dq<T><<<(unsigned)((n + 255) / 256), 256, 0, handle->stream>>>(d, n);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* What both fused backward kernels need of a problem: NULL, or the reason they do not apply. */
inline const char *bwd_rejects(cudnnHandle_t handle, const ocd_attn_core_problem *p)
{
    const char *why = flash_rejects(handle, p);
    if (why != nullptr) return why;
    if (!flash_aligned16(p->d_o)) return "fused attention: operands of contiguous heads on 16-byte boundaries";
    return nullptr;
}

} // namespace

#endif /* OCD_CUDA_ATTN_CORE_FLASH_BWD_CUH */
