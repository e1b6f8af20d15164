/* attn_core_flash_bwd_sm90.cu: the fused attention backward for Hopper (entry cuda:attn_bwd_sm90,
   compute capability 9.0, compiled for sm_90a only), FlashAttention-3's backward scheme on wgmma
   for what the sm_80 backward serves (cuda/attn_core_flash_bwd.cu: half and bfloat16 data, head
   size 64 or 128, with or without dropout), whose reserve and workspace contract, prologue (D_i)
   and final (dq) kernels, and per-thread probabilities and dk and dv stores it shares
   (cuda/attn_core_flash_bwd.cuh). P is recomputed from the log-sum-exp the forward saved,
   dropout factors regenerated from the same Philox elements; no score goes to memory.

   A block of three warpgroups takes BN = 128 keys of one (batch item, K/V beam, head) and walks
   the query blocks (BQ = 64 rows, of every query beam that reads the keys under ALL_TO_ONE)
   whose windows reach its keys:
   - warpgroup 0, the producer, copies K and V once, then finds each next query block that
     reaches the keys (its rows' windows and statistics, bwd_row_info, and a vote over the
     warpgroup: bar.red.or on named barrier 1; the search for the next block runs while the
     copies of the current one fly) and copies its Q and dO tiles into a STAGES-deep ring with
     16-byte cp.async, all in wgmma's K-major 128-byte-swizzled layout
     (cuda/wgmma.cuh; a tile of 128 columns is two blocks of 64). With the tiles it leaves the
     rows' bwd_row and the block's iteration in the stage's slot (-1 after the last), fences its
     copies into the async proxy and arrives on the stage's "full" mbarrier; it refills a stage
     once both consumers have arrived on its "empty" mbarrier.
   - warpgroups 1 and 2, the consumers, own 64 keys each (the wgmma M) and hold their dk and dv
     (64 x D each) in float accumulators. Per query block a consumer forms S^T = K Q^T and
     dP~^T = V dO^T with wgmma (A = its K or V rows, B = the Q or dO tile, both K-major from
     shared memory, D / 16 k-steps, N = BQ), each its own wgmma group; each warp's part of those
     accumulators lies as the sm_80 kernel's mma.sync accumulators of its 16 keys, so the shared
     per-thread steps apply. Once S^T has landed, while dP~^T still runs, it recomputes P
     (bwd_probs_p) and issues dV += P~^T dO with A from registers (bwd_p_frag: the accumulator
     and A-register layouts match) and B the dO tile read N-major (K = the query rows, N = the
     columns, LBO the 64-column block stride); once dP~^T has landed, while dV runs, it forms
     dS^T (bwd_probs_ds), issues dK += dS^T Q likewise and stores dS^T into a shared buffer
     [key][query] swizzled as an MN-major A operand (M = the queries). Once both
     consumers' dS is there (named barrier 2), consumer g forms columns g D / 2 .. of
     dQ_block = dS K (M = BQ queries, N = D / 2, K = the block's 128 keys: A = dS MN-major, B =
     the K tile read N-major). Each warp stores its 16 rows of that half into a float dQ block in
     shared memory and adds each row that reaches the keys (its bwd_row says) to the float
     accumulators with one cp.reduce.async.bulk add by one of its lanes, FlashAttention-3's bulk
     reduction rather than the sm_80 kernel's per-element atomics; the warp writes its rows
     again only after its lanes' reductions have read them. The rows' bwd_row are read before
     the stage is released. dS has two buffers, so that a consumer's stores of the next block
     never meet the other's reads of this one: one named barrier a block orders the
     consumers.
   The producer gives registers back (setmaxnreg: it keeps 24, spilling a few of its addresses)
   to the consumers, 240 each: dk and dv take D / 2 each, S^T and dP~^T BQ / 2 each, the A
   registers of P~^T and dS^T BQ / 4 each, dQ D / 4; with fewer, ptxas serializes the wgmma
   of head 128 (C7512), which costs more than the producer's spills. Each key
   row of [0, max_kv) is written by exactly one block, zeros past len_kv (untouched when
   accumulating). */
#include "cuda/attn_core_flash_bwd.cuh"

#include "core/impl.h"

namespace {

constexpr int BN = 128, BQ = 64, STAGES = 2, THREADS = 384;
constexpr int PRODUCER_REGS = 24, CONSUMER_REGS = 240; /* 128 x 24 + 256 x 240 <= 384 x 168 */
static_assert(OCD_FLASH_THREADS == 128, "the producer warpgroup runs the tile loads");

/* Shared-memory geometry (bytes from a 1024-byte-aligned start): K, V (BN rows each), STAGES
   stages of Q and dO (BQ rows each), two dS buffers (BN keys of BQ queries), the float dQ block
   (BQ rows of D, pitch DQP floats: 32 bytes of padding, so that a warp's stores of 8 rows take
   the two wavefronts of their 256 bytes), then the stages' rows (bwd_row[STAGES][BQ]) and slots
   (int[STAGES]), and the mbarriers (full[STAGES], empty[STAGES]). */
template <int D> struct bwd90_smem {
    static constexpr int KV = BN * D * 2, TILE = BQ * D * 2, DS = BN * BQ * 2, DQP = D + 8;
    static constexpr int K0 = 0, V0 = KV, Q0 = 2 * KV, DS0 = Q0 + STAGES * 2 * TILE, DQ0 = DS0 + 2 * DS;
    static constexpr int ROWS = DQ0 + BQ * DQP * 4, SLOT = ROWS + STAGES * BQ * (int)sizeof(bwd_row);
    static constexpr int BAR = SLOT + 8 * ((STAGES * 4 + 7) / 8);
    static constexpr size_t BYTES = (size_t)BAR + 8 * 2 * STAGES + 1024; /* + the alignment of the start */
    /* the Q (what 0) or dO (what 1) tile of stage st */
    static __host__ __device__ __forceinline__ int tile(int st, int what) { return Q0 + (2 * st + what) * TILE; }
};

/* ---- per-thread pieces, host-callable so that tests/emulate/attn_flash_bwd_sm90.cu runs them --- */

/* Descriptors, from the shared address `base` of the aligned start:
   - bwd90_desc_kv: consumer g's 64 rows of the K (at = K0) or V (at = V0) tile as the A operand
     of S^T or dP~^T, k-step ks (16 columns: block ks / 4, 32 bytes each);
   - bwd90_desc_qt: the Q (what 0) or dO (what 1) tile of stage st as the B operand of S^T or
     dP~^T (N = its BQ rows), k-step ks;
   - bwd90_desc_qt_mn: the same tile as the N-major B operand of dK or dV, queries 16 kk ..
     16 kk + 15 (two 8-row groups, SBO 1024 apart), N = the D columns (blocks of 64, LBO = a
     block);
   - bwd90_desc_ds: dS buffer `buf` as the MN-major A operand of dQ, keys 16 ks .. 16 ks + 15
     (K), M = the BQ = 64 queries of each key row (one 128-byte row: LBO unused);
   - bwd90_desc_k_mn: the K tile as the N-major B operand of dQ, keys 16 ks .. (K), N = the
     D / 2 columns from g D / 2 (64-column blocks BN rows apart; head 64's second half starts
     64 bytes into the swizzled rows, which the hardware's XOR of the formed address keeps). */
template <int D> __host__ __device__ __forceinline__ uint64_t bwd90_desc_kv(uint32_t base, int at, int g, int ks)
{
    return ocd_wgmma_desc_k128(base + (uint32_t)(at + (ks / 4) * BN * 128 + g * 64 * 128), ks % 4);
}
template <int D> __host__ __device__ __forceinline__ uint64_t bwd90_desc_qt(uint32_t base, int st, int what, int ks)
{
    return ocd_wgmma_desc_k128(base + (uint32_t)(bwd90_smem<D>::tile(st, what) + (ks / 4) * BQ * 128), ks % 4);
}
template <int D> __host__ __device__ __forceinline__ uint64_t bwd90_desc_qt_mn(uint32_t base, int st, int what, int kk)
{
    return ocd_wgmma_desc_mn128(base + (uint32_t)(bwd90_smem<D>::tile(st, what) + kk * 16 * 128), BQ * 128);
}
template <int D> __host__ __device__ __forceinline__ uint64_t bwd90_desc_ds(uint32_t base, int buf, int ks)
{
    typedef bwd90_smem<D> L;
    return ocd_wgmma_desc_mn128(base + (uint32_t)(L::DS0 + buf * L::DS + ks * 16 * 128), L::DS);
}
template <int D> __host__ __device__ __forceinline__ uint64_t bwd90_desc_k_mn(uint32_t base, int g, int ks)
{
    constexpr int C = D / 2; /* columns a consumer takes */
    return ocd_wgmma_desc_mn128(base + (uint32_t)(bwd90_smem<D>::K0 + ks * 16 * 128 + (g * C / 64) * BN * 128 +
                                                  (g * C % 64) * 2),
                                BN * 128);
}

/* The thread's dS^T elements (consumer warp cw's keys kr = 16 cw + lane / 4 (+ 8), queries 8 j +
   2 (lane % 4) + {0, 1}) into a dS buffer, two queries a 4-byte store. The buffer holds key rows
   of 64 queries (128 bytes) with the 128-byte swizzle bwd90_desc_ds reads: 16-byte chunk c of
   row kr at position c ^ (kr % 8). Both of the thread's keys have kr % 8 = lane / 4, which
   passes through an empty asm: as a loop invariant, the 16 stores' offsets would be computed
   once before the kernel's loop and, with no register left for them, spilled to local memory
   and reloaded at every block. */
template <typename T, int NS>
__host__ __device__ __forceinline__ void bwd90_store_ds(T *sds, const float (&ds)[NS][4], int cw, int lane)
{
    int sw = lane / 4;
#ifdef __CUDA_ARCH__
    asm volatile("" : "+r"(sw));
#endif
    T *row = sds + (cw * 16 + sw) * BQ + 2 * (lane & 3); /* the first key's row, chunk 0 */
#pragma unroll
    for (int j = 0; j < NS; j++)
#pragma unroll
        for (int hr = 0; hr < 2; hr++)
            *reinterpret_cast<uint32_t *>(row + hr * 8 * BQ + (j ^ sw) * 8) =
                flash_pack2<T>(ds[j][hr * 2], ds[j][hr * 2 + 1]);
}

/* A thread's dQ_block accumulators (consumer warp wq of 4 owning query rows 16 wq + lane / 4
   (+ 8), columns c0 + 8 j + 2 (lane % 4) + {0, 1}) into the float dQ block, pitch DQP. */
template <int DQP, int NQ>
__host__ __device__ __forceinline__ void bwd90_store_dq(float *sdq, const float (&acc)[NQ][4], int wq, int c0, int lane)
{
#pragma unroll
    for (int j = 0; j < NQ; j++)
#pragma unroll
        for (int hr = 0; hr < 2; hr++) {
            int r = wq * 16 + lane / 4 + hr * 8, c = c0 + j * 8 + 2 * (lane & 3);
            *reinterpret_cast<float2 *>(sdq + r * DQP + c) = make_float2(acc[j][hr * 2], acc[j][hr * 2 + 1]);
        }
}

/* Row r of the dQ block (queries from i0 of beam m): where its accumulators lie, or NULL when
   the row does not reach the block's keys (its dQ is zero). */
__host__ __device__ __forceinline__ float *bwd90_dq_row(const ocd_attn_dev &d, const bwd_row *rows, int b, int m,
                                                        int h, int i0, int j0, int r)
{
    if (!bwd_reaches<BN>(rows[r], j0)) return nullptr;
    return d.dq_acc + ocd_attn_row_index(d.p, b, m, h, i0 + r) * d.p.head_qk;
}

/* The mbarrier phase parity of the n-th use of a stage ring slot (the stage's (n / STAGES)-th). */
__host__ __device__ __forceinline__ unsigned bwd90_parity(int n)
{
    return (unsigned)(n / STAGES) & 1u;
}

/* The producer's vote: true when `reach` is for any of its 128 threads (named barrier 1). */
__device__ __forceinline__ bool bwd90_vote(bool reach)
{
    uint32_t any = 0;
#ifdef OCD_WGMMA_ARCH_OK
    asm volatile("{\n.reg .pred p, q;\nsetp.ne.u32 q, %1, 0;\nbar.red.or.pred p, 1, 128, q;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(any)
                 : "r"((uint32_t)reach)
                 : "memory");
#endif
    return any != 0;
}

/* The consumers' meeting once both have stored a block's dS (named barrier 2, 256 threads). */
__device__ __forceinline__ void bwd90_consumers_sync()
{
#ifdef OCD_WGMMA_ARCH_OK
    asm volatile("bar.sync 2, 256;\n" ::: "memory");
#endif
}

/* ---- the kernel ---------------------------------------------------------------------------------- */

template <typename T, int D, bool DROPOUT> __global__ void __launch_bounds__(THREADS, 1) attn_bwd_sm90(ocd_attn_dev d)
{
#ifdef OCD_WGMMA_ARCH_OK
    typedef bwd90_smem<D> L;
    constexpr int NS = BQ / 8, NO = D / 8, KS = D / 16, NQ = D / 16; /* 8-column tiles: S^T, dk and dv, dq */
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    unsigned char *sm = smem_raw + ((1024u - (ocd_wgmma_smem_addr(smem_raw) & 1023u)) & 1023u);
    const uint32_t base = ocd_wgmma_smem_addr(sm);
    bwd_row(*rows)[BQ] = reinterpret_cast<bwd_row(*)[BQ]>(sm + L::ROWS);
    int *slot = (int *)(sm + L::SLOT);
    uint64_t *full = (uint64_t *)(sm + L::BAR), *empty = full + STAGES;

    const ocd_attn_core_problem &p = d.p;
    int tid = threadIdx.x, wg = tid / 128, wt = tid % 128, lane = tid % 32;
    int u = blockIdx.y, h = u % p.heads, mk = u / p.heads % d.kv_beams, b = u / p.heads / d.kv_beams;
    int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
    int j0 = blockIdx.x * BN;
    const bwd_walk w = bwd_walk_of(d, mk, j0, lkv, BQ);

    if (tid == 0)
        for (int s = 0; s < STAGES; s++) ocd_mbar_init(&full[s], 128), ocd_mbar_init(&empty[s], 256);
    __syncthreads();

    if (wg == 0) {
        ocd_wgmma_setmaxnreg_dec<PRODUCER_REGS>();
        if (w.nit > 0) {
            flash_load_tile<D, BN, true>((T *)(sm + L::K0), p.k, b, mk, h, j0, lkv, wt);
            flash_load_tile<D, BN, true>((T *)(sm + L::V0), p.v, b, mk, h, j0, lkv, wt);
        }
        bwd_lq lqc;
        bwd_row mine = {0, 0, 0.f, 0.f};
        auto vote = [](bool reach) { return bwd90_vote(reach); };
        int it = bwd_next<BQ, BN>(d, w, 0, b, h, j0, lkv, wt, lqc, &mine, vote);
        for (int n = 0;; n++) {
            const int st = n % STAGES, cur = it;
            if (n >= STAGES) ocd_mbar_wait(&empty[st], bwd90_parity(n - STAGES));
            if (cur < w.nit) {
                int m = w.m0 + cur / w.nqb, i0 = p.q_first + (cur % w.nqb) * BQ;
                int qend = min(p.q_first + p.q_count, lqc.of(p, b, m));
                flash_load_tile<D, BQ, true>((T *)(sm + L::tile(st, 0)), p.q, b, m, h, i0, qend, wt);
                flash_load_tile<D, BQ, true>((T *)(sm + L::tile(st, 1)), p.d_o, b, m, h, i0, qend, wt);
                if (wt < BQ) rows[st][wt] = mine;
            }
            if (wt == 0) slot[st] = cur < w.nit ? cur : -1;
            ocd_mma_cp_commit();
            /* the next block's rows while the copies fly */
            if (cur < w.nit) it = bwd_next<BQ, BN>(d, w, cur + 1, b, h, j0, lkv, wt, lqc, &mine, vote);
            ocd_mma_cp_wait<0>();
            ocd_bulk_fence_writes();
            ocd_mbar_arrive(&full[st]);
            if (cur >= w.nit) break;
        }
        return;
    }

    ocd_wgmma_setmaxnreg_inc<CONSUMER_REGS>();
    const int g = wg - 1, cw = g * 4 + wt / 32; /* consumer warp cw owns keys j0 + 16 cw .. */
    float dk[NO][4], dv[NO][4];
    const float scale2 = bwd_acc_init(p, dk, dv);
    float *sdq = (float *)(sm + L::DQ0);
    float(&dk_flat)[D / 2] = reinterpret_cast<float(&)[D / 2]>(dk);
    float(&dv_flat)[D / 2] = reinterpret_cast<float(&)[D / 2]>(dv);

    for (int n = 0;; n++) {
        const int st = n % STAGES, buf = n % 2;
        ocd_mbar_wait(&full[st], bwd90_parity(n));
        const int it = slot[st];
        if (it < 0) break;
        const int m = w.m0 + it / w.nqb, i0 = p.q_first + (it % w.nqb) * BQ;
        const bwd_row *cr = rows[st];

        /* S^T = K Q^T and dP~^T = V dO^T (64 keys x BQ queries), one wgmma group each */
        float s[NS][4], dp[NS][4];
        float(&s_flat)[BQ / 2] = reinterpret_cast<float(&)[BQ / 2]>(s);
        float(&dp_flat)[BQ / 2] = reinterpret_cast<float(&)[BQ / 2]>(dp);
        ocd_wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < KS; ks++)
            ocd_wgmma<BQ, T>::ss(s_flat, bwd90_desc_kv<D>(base, L::K0, g, ks), bwd90_desc_qt<D>(base, st, 0, ks), ks > 0);
        ocd_wgmma_commit();
#pragma unroll
        for (int ks = 0; ks < KS; ks++)
            ocd_wgmma<BQ, T>::ss(dp_flat, bwd90_desc_kv<D>(base, L::V0, g, ks), bwd90_desc_qt<D>(base, st, 1, ks), ks > 0);
        ocd_wgmma_commit();

        /* while dP~^T runs: P, and dV += P~^T dO (A from registers) */
        ocd_wgmma_wait<1>();
        ocd_wgmma_fence_operands(s_flat);
        const uint32_t keep = bwd_probs_p<DROPOUT>(d, s, cr, b, m, h, i0, j0 + cw * 16, lane, scale2);
        uint32_t pf[BQ / 16][4], sf[BQ / 16][4];
#pragma unroll
        for (int kk = 0; kk < BQ / 16; kk++) bwd_p_frag<T, DROPOUT>(pf[kk], d, s, keep, kk);
        ocd_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BQ / 16; kk++)
            ocd_wgmma<D, T>::rs_mn(dv_flat, pf[kk], bwd90_desc_qt_mn<D>(base, st, 1, kk), 1);
        ocd_wgmma_commit();

        /* while dV runs: dS, dS^T to shared memory for dQ, and dK += dS^T Q */
        ocd_wgmma_wait<1>();
        ocd_wgmma_fence_operands(dp_flat);
        bwd_probs_ds<DROPOUT>(d, s, dp, cr, keep, lane);
#pragma unroll
        for (int kk = 0; kk < BQ / 16; kk++) flash_p_frag<T>(sf[kk], dp, kk);
        bwd90_store_ds<T>((T *)(sm + L::DS0 + buf * L::DS), dp, cw, lane);
        ocd_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BQ / 16; kk++)
            ocd_wgmma<D, T>::rs_mn(dk_flat, sf[kk], bwd90_desc_qt_mn<D>(base, st, 0, kk), 1);
        ocd_wgmma_commit();
        ocd_bulk_fence_writes();
        bwd90_consumers_sync();

        /* columns g D / 2 .. of dQ_block = dS K over the block's 128 keys */
        float dq[NQ][4];
        float(&dq_flat)[D / 4] = reinterpret_cast<float(&)[D / 4]>(dq);
#pragma unroll
        for (int ks = 0; ks < BN / 16; ks++)
            ocd_wgmma<D / 2, T>::ss_mn(dq_flat, bwd90_desc_ds<D>(base, buf, ks), bwd90_desc_k_mn<D>(base, g, ks), ks > 0);
        ocd_wgmma_commit();
        ocd_wgmma_wait<0>();
        ocd_wgmma_fence_operands(dq_flat);
        ocd_wgmma_fence_operands(dk_flat);
        ocd_wgmma_fence_operands(dv_flat);
        /* the warp's 16 rows of its half of dQ_block, through the dQ block, each added by one
           bulk reduction (lane r of the warp, row 16 (warp % 4) + r) */
        const int r = (wt / 32) * 16 + lane, c0 = g * (D / 2);
        if (lane < 16) ocd_bulk_store_wait<0, true>(); /* the last block's reductions have read the rows */
        __syncwarp();
        bwd90_store_dq<L::DQP>(sdq, dq, wt / 32, c0, lane);
        float *acc_row = lane < 16 ? bwd90_dq_row(d, cr, b, m, h, i0, j0, r) : nullptr;
        ocd_mbar_arrive(&empty[st]); /* the stage's Q, dO and rows are read */
        ocd_bulk_fence_writes();
        __syncwarp();
        if (acc_row != nullptr) ocd_bulk_reduce_add_f32(acc_row + c0, sdq + r * L::DQP + c0, D / 2 * 4);
        if (lane < 16) ocd_bulk_commit();
    }
    if (lane < 16) ocd_bulk_store_wait<0, false>();
    bwd_store_kv<T>(d, p.dk, b, mk, h, j0, lkv, dk, (float)p.sm_scaler, cw, lane);
    bwd_store_kv<T>(d, p.dv, b, mk, h, j0, lkv, dv, 1.f, cw, lane);
#endif
}

} // namespace

extern "C" const char *ocd_cuda_attn_bwd_sm90_applies(cudnnHandle_t handle, const void *call)
{
    if (const char *why = ocd_wgmma_entry_rejects(handle, OCD_WGMMA_BUILT)) return why;
    return bwd_rejects(handle, static_cast<const ocd_attn_core_call *>(call)->p);
}

extern "C" cudnnStatus_t ocd_cuda_attn_bwd_sm90(cudnnHandle_t handle, const void *call, void *, size_t)
{
    return flash_entry(handle, call, false, [&](auto t, auto dd, const ocd_attn_dev &d) {
        typedef typename decltype(t)::type T;
        constexpr int D = decltype(dd)::value;
        return bwd_run<T>(handle, d, [&]() {
            auto kernel = d.p.dropout > 0 ? attn_bwd_sm90<T, D, true> : attn_bwd_sm90<T, D, false>;
            static int pool_checked[2]; /* without dropout, with */
            OCD_TRY(ocd_wgmma_pool_check(kernel, THREADS, 128 * PRODUCER_REGS + 256 * CONSUMER_REGS,
                                         &pool_checked[d.p.dropout > 0]));
            return flash_launch(handle, kernel, bwd_grid<BN>(d), THREADS, bwd90_smem<D>::BYTES, d);
        });
    });
}
