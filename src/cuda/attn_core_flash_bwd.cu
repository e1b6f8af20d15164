/* attn_core_flash_bwd.cu: the fused attention backward on tensor cores (entry cuda:attn_bwd_flash),
   FlashAttention-2's scheme for what the fused forward serves (cuda/attn_core_flash.cu: half and
   bfloat16 data, head size 64 or 128): P recomputed from the log-sum-exp the forward saved in the
   reserve, dropout factors regenerated from the same Philox elements (problem/attn_core.h), no
   score in memory. Every other problem goes to the row kernels (cuda/attn_core.cu).

   Three kernels, after the float dq accumulators in the workspace are zeroed (all but the main one
   shared with the Hopper backward: cuda/attn_core_flash_bwd.cuh). A prologue kernel,
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
#include "cuda/attn_core_flash_bwd.cuh"

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

/* ---- per-thread pieces, host-callable so that tests/emulate/attn_flash_bwd.cu runs them on the CPU
   (with those of cuda/attn_core_flash_bwd.cuh) */

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

/* ---- the kernels ------------------------------------------------------------------------------- */

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
    float dk[NO][4], dv[NO][4];
    const float scale2 = bwd_acc_init(p, dk, dv);

    if (w.nit > 0) {
        flash_load_tile<D, BK>(sk, p.k, b, mk, h, j0, lkv, tid);
        flash_load_tile<D, BK>(sv, p.v, b, mk, h, j0, lkv, tid);
    }
    bwd_row mine = {0, 0, 0.f, 0.f};
    bwd_lq lqc;
    auto vote = [](bool reach) { return __syncthreads_or(reach) != 0; };
    int cur = bwd_next<BQ, BK>(d, w, 0, b, h, j0, lkv, tid, lqc, &mine, vote);
    if (cur < w.nit) {
        int m = w.m0 + cur / w.nqb, i0 = p.q_first + (cur % w.nqb) * BQ;
        int qend = min(p.q_first + p.q_count, lqc.of(p, b, m));
        if (tid < BQ) rows[0][tid] = mine;
        flash_load_tile<D, BQ>(sm + L::Q, p.q, b, m, h, i0, qend, tid);
        flash_load_tile<D, BQ>(sm + L::Q + BQ * L::LD, p.d_o, b, m, h, i0, qend, tid);
    }
    ocd_mma_cp_commit();

    for (int st = 0; cur < w.nit; st ^= 1) {
        int nxt = bwd_next<BQ, BK>(d, w, cur + 1, b, h, j0, lkv, tid, lqc, &mine, vote);
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
            bwd_add_dq<BK>(d, dq, cr, b, m, h, i0, j0, qg, c0, lane);
        }
        __syncthreads(); /* stage st, its rows and dS are free for the next prefetch */
        cur = nxt;
    }
    ocd_mma_cp_wait<0>();
    bwd_store_kv<T>(d, p.dk, b, mk, h, j0, lkv, dk, (float)p.sm_scaler, warp, lane);
    bwd_store_kv<T>(d, p.dv, b, mk, h, j0, lkv, dv, 1.f, warp, lane);
}

template <typename T, int D> cudnnStatus_t launch(cudnnHandle_t handle, const ocd_attn_dev &d)
{
    return bwd_run<T>(handle, d, [&]() {
        auto kernel = d.p.dropout > 0 ? attn_bwd_flash<T, D, true> : attn_bwd_flash<T, D, false>;
        return flash_launch(handle, kernel, bwd_grid<BK>(d), THREADS, bwd_smem<D>::BYTES, d);
    });
}

} // namespace

extern "C" const char *ocd_cuda_attn_bwd_flash_applies(cudnnHandle_t handle, const void *call)
{
    const ocd_attn_core_problem *p = static_cast<const ocd_attn_core_call *>(call)->p;
    return bwd_rejects(handle, p);
}

extern "C" cudnnStatus_t ocd_cuda_attn_bwd_flash(cudnnHandle_t handle, const void *call, void *, size_t)
{
    return flash_entry(handle, call, false, [&](auto t, auto dd, const ocd_attn_dev &d) {
        return launch<typename decltype(t)::type, decltype(dd)::value>(handle, d);
    });
}
