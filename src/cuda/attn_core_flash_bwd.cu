/* attn_core_flash_bwd.cu: the fused attention backward on tensor cores (entry cuda:attn_bwd_flash),
   FlashAttention-2's scheme for what the fused forward serves (cuda/attn_core_flash.cu: half and
   bfloat16 data, head size 64 or 128): P recomputed from the log-sum-exp the forward saved in the
   reserve, dropout factors regenerated from the same Philox elements (problem/attn_core.h), no
   score in memory. Every other problem goes to the row kernels (cuda/attn_core.cu).

   Three kernels, after the float dq accumulators in the workspace are zeroed. A prologue kernel,
   one thread per query row, forms D_i = <do_i, o_i> (zero for a row past its length). The main
   kernel takes BK = 64 keys of one (batch item, K/V beam, head) per block, four warps of 16 keys,
   holds their dk and dv in float registers and walks the query blocks (BQ rows, of every query
   beam that reads the keys under ALL_TO_ONE) whose windows reach its keys, Q and dO double
   buffered in shared memory by 16-byte cp.async. Per query block each warp forms, with mma.sync
   m16n8k16, S^T = K Q^T and dP~^T = V dO^T (16 keys x BQ queries), recomputes P = exp(S - lse)
   inside each query's window, applies the dropout factor f (P~ = P f, dP = dP~ f), forms
   dS = P (dP - D), and accumulates dV += P~^T dO and dK += dS^T Q with P~ and dS re-packed from
   the accumulators into A fragments (the forward's register trick). dS goes to shared memory
   once, transposed, so that the block then forms dQ_block = dS K (each warp 16 queries by 64
   columns) and adds it to the float accumulators with atomicAdd. A final kernel, one thread per
   dq element, writes dq = smScaler * accumulator (added to dq when accumulating). The block
   writes its own keys' dk (times smScaler) and dv: every key row of [0, max_kv) is written by
   exactly one block, zeros past len_kv (untouched when accumulating).

   Why dq by atomics rather than a second pass per query block: a second pass would recompute
   S and dP~ (two of the five products) for every (query block, key block) pair, 40 % more tensor
   work, and read K and V once more; the atomics cost one float add per dq element per key block
   (head_qk / 64 per query and key pair, against 5 head_qk multiply-adds of tensor work), land in
   L2, and are FlashAttention-2's choice. The price is that dq is not bitwise deterministic (the
   float additions of the key blocks come in any order); dk and dv are.

   BQ: 64 rows for head 64 and 32 for head 128, so that a thread's accumulators (dk, dv: head / 4
   floats each; S and dP: BQ / 4 each) stay within the register file. */
#include "cuda/attn_core_flash.cuh"

#include <math.h>

namespace {

constexpr int BK = 64, WARPS = 4, THREADS = OCD_FLASH_THREADS, DQW = 64;

/* Shared-memory geometry for head size D: K and V (BK rows each), two stages of Q and dO (BQ rows
   each), and dS (BQ rows of BK keys); rows padded by 8 elements (cuda/attn_core_flash.cuh). */
template <int D> struct bwd_smem {
    static constexpr int BQ = D == 64 ? 64 : 32;
    static constexpr int LD = D + 8, LDS = BK + 8;
    static constexpr int K = 0, V = BK * LD, Q = 2 * BK * LD; /* element offsets */
    static constexpr int STAGE = 2 * BQ * LD;                  /* Q, then dO */
    static constexpr int DS = Q + 2 * STAGE;
    static constexpr size_t BYTES = (size_t)(DS + BQ * LDS) * 2;
    static_assert(D % DQW == 0 && (BQ / 16) * (D / DQW) == WARPS, "dQ = dS K takes each warp once");
};

/* ---- per-thread pieces, host-callable so that tests/emulate/attn_flash_bwd.cu runs them on the CPU */

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

/* True when a row reaches one of the keys [j0, j0 + BK). */
__host__ __device__ __forceinline__ bool bwd_reaches(const bwd_row &r, int j0)
{
    return r.lo < r.hi && r.lo < j0 + BK && r.hi > j0;
}

/* The thread's elements of S^T (s) and dP~^T (dp) of key rows j0w + lane / 4 (+ 8) and the BQ
   queries from i0 become P~^T (in s) and dS^T without smScaler (in dp). rows: the block's rows. */
template <bool DROPOUT, int NS>
__host__ __device__ __forceinline__ void bwd_probs(const ocd_attn_dev &d, float (&s)[NS][4], float (&dp)[NS][4],
                                                   const bwd_row *rows, int b, int m, int h, int i0, int j0w, int lane,
                                                   float scale2)
{
#pragma unroll
    for (int j = 0; j < NS; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int key = j0w + lane / 4 + (e / 2) * 8, qc = j * 8 + 2 * (lane & 3) + (e & 1);
            const bwd_row &r = rows[qc];
            float pr = key >= r.lo && key < r.hi ? exp2f(s[j][e] * scale2 - r.lse2) : 0.f;
            float f = 1.f;
            if (DROPOUT) f = ocd_attn_drop<float>(d, (uint64_t)ocd_attn_row_index(d.p, b, m, h, i0 + qc) * d.p.max_kv + key);
            dp[j][e] = pr * (dp[j][e] * f - r.Dv);
            s[j][e] = pr * f;
        }
}

/* The thread's dS^T elements (warp w's key rows) into shared dS, held [query][key]. */
template <typename T, int LDS, int NS>
__host__ __device__ __forceinline__ void bwd_store_ds(T *sds, const float (&ds)[NS][4], int warp, int lane)
{
    for (int j = 0; j < NS; j++)
        for (int e = 0; e < 4; e++) {
            int kr = warp * 16 + lane / 4 + (e / 2) * 8, qc = j * 8 + 2 * (lane & 3) + (e & 1);
            ocd_cuda_store(sds + qc * LDS + kr, ds[j][e]);
        }
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

/* Adds warp w's dQ part (query rows qg * 16 + lane / 4 (+ 8) of the block, columns c0 + 8 j + ..)
   to the accumulators, for rows that reach the block's keys. */
template <int NQ>
__host__ __device__ __forceinline__ void bwd_add_dq(const ocd_attn_dev &d, const float (&acc)[NQ][4],
                                                    const bwd_row *rows, int b, int m, int h, int i0, int j0, int qg,
                                                    int c0, int lane)
{
    for (int hr = 0; hr < 2; hr++) {
        int qr = qg * 16 + lane / 4 + hr * 8;
        if (!bwd_reaches(rows[qr], j0)) continue;
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

/* Prologue, one query row: D_i (o and do rows are 16-byte aligned and contiguous: applies()). */
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
   from q_first + (it % nqb) * BQ. */
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

/* ---- the kernels ------------------------------------------------------------------------------- */

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

/* len_q of beam m, read again only when the beam changes. */
struct bwd_lq {
    int m = -1, lq = 0;
    __host__ __device__ __forceinline__ int of(const ocd_attn_core_problem &p, int b, int beam)
    {
        if (beam != m) m = beam, lq = ocd_attn_core_clamp(p.len_q[b * p.beams + beam], p.max_q);
        return lq;
    }
};

/* The first iteration from `it` whose query block reaches the keys [j0, j0 + BK) (nit if none);
   thread tid < BQ leaves its row of that block in *mine. Every thread calls it alike. */
template <int BQ>
__device__ __forceinline__ int bwd_next(const ocd_attn_dev &d, const bwd_walk &w, int it, int b, int h, int j0,
                                        int lkv, int tid, bwd_lq &lq, bwd_row *mine)
{
    for (; it < w.nit; it++) {
        int m = w.m0 + it / w.nqb, i0 = d.p.q_first + (it % w.nqb) * BQ;
        bool reach = false;
        if (tid < BQ) {
            *mine = bwd_row_info(d, b, m, h, i0 + tid, lq.of(d.p, b, m), lkv);
            reach = bwd_reaches(*mine, j0);
        }
        if (__syncthreads_or(reach)) break;
    }
    return it;
}

template <typename T, int D, bool DROPOUT>
__global__ void __launch_bounds__(THREADS) attn_bwd_flash(ocd_attn_dev d)
{
    typedef bwd_smem<D> L;
    constexpr int BQ = L::BQ, KS = D / 16, NS = BQ / 8, NO = D / 8, QG = BQ / 16;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sm = (T *)smem_raw, *sk = sm + L::K, *sv = sm + L::V, *sds = sm + L::DS;
    __shared__ bwd_row rows[2][BQ];

    const ocd_attn_core_problem &p = d.p;
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int u = blockIdx.y, h = u % p.heads, mk = u / p.heads % d.kv_beams, b = u / p.heads / d.kv_beams;
    int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
    int j0 = blockIdx.x * BK;
    const bwd_walk w = bwd_walk_of(d, mk, j0, lkv, BQ);
    const float scale2 = (float)(p.sm_scaler * 1.4426950408889634);

    float dk[NO][4], dv[NO][4];
#pragma unroll
    for (int j = 0; j < NO; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) dk[j][e] = 0.f, dv[j][e] = 0.f;

    if (w.nit > 0) {
        flash_load_tile<D, BK>(sk, p.k, b, mk, h, j0, lkv, tid);
        flash_load_tile<D, BK>(sv, p.v, b, mk, h, j0, lkv, tid);
    }
    bwd_row mine = {0, 0, 0.f, 0.f};
    bwd_lq lqc;
    int cur = bwd_next<BQ>(d, w, 0, b, h, j0, lkv, tid, lqc, &mine);
    if (cur < w.nit) {
        int m = w.m0 + cur / w.nqb, i0 = p.q_first + (cur % w.nqb) * BQ;
        int qend = min(p.q_first + p.q_count, lqc.of(p, b, m));
        if (tid < BQ) rows[0][tid] = mine;
        flash_load_tile<D, BQ>(sm + L::Q, p.q, b, m, h, i0, qend, tid);
        flash_load_tile<D, BQ>(sm + L::Q + BQ * L::LD, p.d_o, b, m, h, i0, qend, tid);
    }
    ocd_mma_cp_commit();

    for (int st = 0; cur < w.nit; st ^= 1) {
        int nxt = bwd_next<BQ>(d, w, cur + 1, b, h, j0, lkv, tid, lqc, &mine);
        if (nxt < w.nit) {
            int m = w.m0 + nxt / w.nqb, i0 = p.q_first + (nxt % w.nqb) * BQ;
            int qend = min(p.q_first + p.q_count, lqc.of(p, b, m));
            if (tid < BQ) rows[st ^ 1][tid] = mine;
            T *sq = sm + L::Q + (st ^ 1) * L::STAGE;
            flash_load_tile<D, BQ>(sq, p.q, b, m, h, i0, qend, tid);
            flash_load_tile<D, BQ>(sq + BQ * L::LD, p.d_o, b, m, h, i0, qend, tid);
        }
        ocd_mma_cp_commit();
        ocd_mma_cp_wait<1>(); /* K, V and stage st have landed */
        __syncthreads();

        int m = w.m0 + cur / w.nqb, i0 = p.q_first + (cur % w.nqb) * BQ;
        const T *cq = sm + L::Q + st * L::STAGE, *cdo = cq + BQ * L::LD;
        const bwd_row *cr = rows[st];

        /* S^T = K Q^T and dP~^T = V dO^T, 16 keys x BQ queries per warp */
        float s[NS][4], dp[NS][4];
#pragma unroll
        for (int j = 0; j < NS; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) s[j][e] = 0.f, dp[j][e] = 0.f;
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            uint32_t kf[4], vf[4];
            ocd_mma_ldmatrix_x4<false>(kf, flash_a_addr<L::LD>(sk, warp * 16, ks * 16, lane));
            ocd_mma_ldmatrix_x4<false>(vf, flash_a_addr<L::LD>(sv, warp * 16, ks * 16, lane));
#pragma unroll
            for (int j = 0; j < NS / 2; j++) {
                uint32_t qf[4], of[4];
                ocd_mma_ldmatrix_x4<false>(qf, flash_b_addr<L::LD>(cq, j * 16, ks * 16, lane));
                ocd_mma_elem<T>::mma(s[2 * j], kf, qf);
                ocd_mma_elem<T>::mma(s[2 * j + 1], kf, qf + 2);
                ocd_mma_ldmatrix_x4<false>(of, flash_b_addr<L::LD>(cdo, j * 16, ks * 16, lane));
                ocd_mma_elem<T>::mma(dp[2 * j], vf, of);
                ocd_mma_elem<T>::mma(dp[2 * j + 1], vf, of + 2);
            }
        }
        bwd_probs<DROPOUT>(d, s, dp, cr, b, m, h, i0, j0 + warp * 16, lane, scale2);

        /* dV += P~^T dO, dK += dS^T Q */
#pragma unroll
        for (int kk = 0; kk < BQ / 16; kk++) {
            uint32_t pf[4], sf[4];
            flash_p_frag<T>(pf, s, kk);
            flash_p_frag<T>(sf, dp, kk);
#pragma unroll
            for (int j = 0; j < NO / 2; j++) {
                uint32_t of[4], qf[4];
                ocd_mma_ldmatrix_x4<true>(of, flash_bt_addr<L::LD>(cdo, kk * 16, j * 16, lane));
                ocd_mma_elem<T>::mma(dv[2 * j], pf, of);
                ocd_mma_elem<T>::mma(dv[2 * j + 1], pf, of + 2);
                ocd_mma_ldmatrix_x4<true>(qf, flash_bt_addr<L::LD>(cq, kk * 16, j * 16, lane));
                ocd_mma_elem<T>::mma(dk[2 * j], sf, qf);
                ocd_mma_elem<T>::mma(dk[2 * j + 1], sf, qf + 2);
            }
        }
        bwd_store_ds<T, L::LDS>(sds, dp, warp, lane);
        __syncthreads();

        /* dQ of the block = dS K: warp w takes query rows (w % QG) * 16 .., columns (w / QG) * DQW .. */
        {
            int qg = warp % QG, c0 = warp / QG * DQW;
            float dq[DQW / 8][4];
#pragma unroll
            for (int j = 0; j < DQW / 8; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) dq[j][e] = 0.f;
#pragma unroll
            for (int kk = 0; kk < BK / 16; kk++) {
                uint32_t af[4];
                ocd_mma_ldmatrix_x4<false>(af, flash_a_addr<L::LDS>((const T *)sds, qg * 16, kk * 16, lane));
#pragma unroll
                for (int j = 0; j < DQW / 16; j++) {
                    uint32_t kf[4];
                    ocd_mma_ldmatrix_x4<true>(kf, flash_bt_addr<L::LD>((const T *)sk, kk * 16, c0 + j * 16, lane));
                    ocd_mma_elem<T>::mma(dq[2 * j], af, kf);
                    ocd_mma_elem<T>::mma(dq[2 * j + 1], af, kf + 2);
                }
            }
            bwd_add_dq(d, dq, cr, b, m, h, i0, j0, qg, c0, lane);
        }
        __syncthreads(); /* stage st, its rows and dS are free for the next prefetch */
        cur = nxt;
    }
    ocd_mma_cp_wait<0>();
    bwd_store_kv<T>(d, p.dk, b, mk, h, j0, lkv, dk, (float)p.sm_scaler, warp, lane);
    bwd_store_kv<T>(d, p.dv, b, mk, h, j0, lkv, dv, 1.f, warp, lane);
}

/* Bytes of the dq accumulators, zeroed before the main kernel. */
size_t bwd_acc_bytes(const ocd_attn_dev &d)
{
    return (size_t)d.p.batch * d.p.beams * d.p.heads * d.p.max_q * d.p.head_qk * sizeof(float);
}

/* The main kernel's launch: a block per BK keys of each (batch item, K/V beam, head). */
dim3 bwd_grid(const ocd_attn_dev &d)
{
    return dim3((unsigned)((d.p.max_kv + BK - 1) / BK), (unsigned)(d.p.batch * d.kv_beams * d.p.heads));
}

template <typename T, int D> cudnnStatus_t launch(cudnnHandle_t handle, const ocd_attn_dev &d)
{
    const ocd_attn_core_problem &p = d.p;
    int64_t rows = (int64_t)p.batch * p.beams * p.heads * p.q_count, n = rows * p.head_qk;
    OCD_CUDA_TRY(cudaMemsetAsync(d.dq_acc, 0, bwd_acc_bytes(d), handle->stream));
    attn_bwd_flash_prep<T><<<(unsigned)((rows + 255) / 256), 256, 0, handle->stream>>>(d, rows);
    OCD_CUDA_LAUNCHED();
    auto kernel = p.dropout > 0 ? attn_bwd_flash<T, D, true> : attn_bwd_flash<T, D, false>;
    OCD_TRY(flash_launch(handle, kernel, bwd_grid(d), THREADS, bwd_smem<D>::BYTES, d));
    attn_bwd_flash_dq<T><<<(unsigned)((n + 255) / 256), 256, 0, handle->stream>>>(d, n);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C" const char *ocd_cuda_attn_bwd_flash_applies(cudnnHandle_t handle, const void *call)
{
    const ocd_attn_core_problem *p = static_cast<const ocd_attn_core_call *>(call)->p;
    const char *why = flash_rejects(handle, p);
    if (why != nullptr) return why;
    if (!flash_aligned16(p->d_o)) return "fused attention: operands of contiguous heads on 16-byte boundaries";
    return nullptr;
}

extern "C" cudnnStatus_t ocd_cuda_attn_bwd_flash(cudnnHandle_t handle, const void *call, void *, size_t)
{
    return flash_entry(handle, call, false, [&](auto t, auto dd, const ocd_attn_dev &d) {
        return launch<typename decltype(t)::type, decltype(dd)::value>(handle, d);
    });
}
