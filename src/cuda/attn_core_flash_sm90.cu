/* attn_core_flash_sm90.cu: the fused attention forward for Hopper (entry cuda:attn_fwd_sm90,
   compute capability 9.0, compiled for sm_90a only), FlashAttention-3's scheme for half and
   bfloat16 data with head size 64 or 128 (q, k and v alike) and no dropout: scores, online
   softmax and the weighted sum in one pass on wgmma, no score in memory; the row's log-sum-exp
   goes to the reserve as the sm_80 kernel (cuda/attn_core_flash.cu) writes it, whose
   applicability, windows, masking, softmax steps and stores (cuda/attn_core_flash.cuh) this
   kernel shares. A problem with dropout goes to that kernel.

   A block of three warpgroups takes BM = 128 query rows of one (batch item, beam, head) and
   walks the keys its rows' windows reach in tiles of BN = 128:
   - warpgroup 0, the producer, copies the Q tile once and the K and V tiles of each key tile
     into a STAGES-deep ring with 16-byte cp.async (rows past len_kv zero-filled), in wgmma's
     K-major 128-byte-swizzled layout (cuda/wgmma.cuh; a tile of 128 columns is two blocks of
     64). Once a tile has landed it fences its copies into the async proxy (wgmma reads shared
     memory through it) and arrives on the tile's "full" mbarrier: K and V have one each, so
     that the scores start before V has landed. A stage is refilled after both consumers have
     arrived on its "empty" mbarrier.
   - warpgroups 1 and 2, the consumers, own 64 query rows each (the wgmma M). Per key tile t a
     consumer issues S = Q K^T with wgmma (Q and K both from shared memory, D / 16 k-steps) and
     then O += P V of tile t - 1 with wgmma taking A (P) from registers and V from shared memory
     as an N-major B (the same swizzled tile read with transposed B: K = the key rows, N = the
     columns, LBO the 64-column block stride). Once S has landed it masks, updates the running
     max and sum per row (flash_softmax_rows: each warp's part of a wgmma accumulator lies as
     the sm_80 kernel's mma.sync accumulator of its 16 rows) while P V still runs; after that
     it rescales its output accumulators, releases tile t - 1's stage and rounds the new
     probabilities into A-operand registers (flash_p_frag: the accumulator and A-register
     layouts match). The two consumers take turns to issue their products (two named
     barriers, FlashAttention-3's ping-pong), so that one's products run on the tensor cores
     while the other computes its softmax.
   The producer gives registers back (setmaxnreg) to the consumers, which hold 64 score, 64
   output (head 128) and 32 probability registers. Rows of the block past the query range are
   neither computed nor written; rows past their length or without keys get zeros. */
#include "cuda/attn_core_flash.cuh"

#include "core/impl.h"

#include <climits>

namespace {

constexpr int BM = 128, BN = 128, STAGES = 2, THREADS = 384;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232; /* 128 x 40 + 256 x 232 <= 64 Ki */
static_assert(OCD_FLASH_THREADS == 128, "the producer warpgroup runs the tile loads");

/* Shared-memory geometry (bytes from a 1024-byte-aligned start): Q, K stages, V stages, then
   the mbarriers (full_q, full_k[STAGES], full_v[STAGES], empty[STAGES]) and the block's key
   range. */
template <int D> struct sm90_smem {
    static constexpr int Q = BM * D * 2, TILE = BN * D * 2;
    static constexpr int K0 = Q, V0 = K0 + STAGES * TILE, BAR = V0 + STAGES * TILE;
    static constexpr int BARS = 1 + 3 * STAGES, KEYS = BAR + 8 * BARS;
    static constexpr size_t BYTES = (size_t)KEYS + 8 + 1024; /* + the alignment of the start */
};

/* ---- per-thread pieces, host-callable so that tests/emulate/attn_flash_sm90.cu runs them ------- */

/* Descriptors, from the shared address `base` of the aligned start:
   - sm90_desc_q: consumer g's 64 rows of Q, k-step ks (16 columns: block ks / 4, 32 bytes each);
   - sm90_desc_k: the K tile of stage st as the B operand of S (N = its 128 key rows), k-step ks;
   - sm90_desc_v: the V tile of stage st as the N-major B operand of O, keys 16 kk .. 16 kk + 15
     (two 8-row groups, SBO 1024 apart), N = the D columns (blocks of 64, LBO = a block). */
template <int D> __host__ __device__ __forceinline__ uint64_t sm90_desc_q(uint32_t base, int g, int ks)
{
    return ocd_wgmma_desc_k128(base + (uint32_t)((ks / 4) * BM * 128 + g * 64 * 128), ks % 4);
}
template <int D> __host__ __device__ __forceinline__ uint64_t sm90_desc_k(uint32_t base, int st, int ks)
{
    typedef sm90_smem<D> L;
    return ocd_wgmma_desc_k128(base + (uint32_t)(L::K0 + st * L::TILE + (ks / 4) * BN * 128), ks % 4);
}
template <int D> __host__ __device__ __forceinline__ uint64_t sm90_desc_v(uint32_t base, int st, int kk)
{
    typedef sm90_smem<D> L;
    return ocd_wgmma_desc_mn128(base + (uint32_t)(L::V0 + st * L::TILE + kk * 16 * 128), BN * 128);
}

/* The mbarrier phase parity of key tile t's use of its stage (the stage's (t / STAGES)-th). */
__host__ __device__ __forceinline__ unsigned sm90_parity(int t)
{
    return (unsigned)(t / STAGES) & 1u;
}

/* The consumers' turns (FlashAttention-3's ping-pong): named barrier 1 + g is consumer g's;
   consumer g waits on it before issuing a key tile's products and then passes the turn by
   arriving on the other's, so that one consumer's products run while the other computes its
   softmax. */
__device__ __forceinline__ void sm90_turn_wait(int g)
{
    if (g == 0) asm volatile("bar.sync 1, 256;\n" ::: "memory");
    else asm volatile("bar.sync 2, 256;\n" ::: "memory");
}
__device__ __forceinline__ void sm90_turn_pass(int g)
{
    if (g == 0) asm volatile("bar.arrive 2, 256;\n" ::: "memory");
    else asm volatile("bar.arrive 1, 256;\n" ::: "memory");
}

/* ---- the kernel ---------------------------------------------------------------------------------- */

template <typename T, int D> __global__ void __launch_bounds__(THREADS, 1) attn_fwd_sm90(ocd_attn_dev d)
{
#ifdef OCD_WGMMA_ARCH_OK
    typedef sm90_smem<D> L;
    constexpr int NS = BN / 8, NO = D / 8; /* 8-column tiles of the scores and of the output */
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    unsigned char *sm = smem_raw + ((1024u - (ocd_wgmma_smem_addr(smem_raw) & 1023u)) & 1023u);
    const uint32_t base = ocd_wgmma_smem_addr(sm);
    uint64_t *full_q = (uint64_t *)(sm + L::BAR), *full_k = full_q + 1, *full_v = full_k + STAGES,
             *empty = full_v + STAGES;
    int *keys = (int *)(sm + L::KEYS);

    const ocd_attn_core_problem &p = d.p;
    int tid = threadIdx.x, wg = tid / 128, wt = tid % 128, lane = tid % 32;
    int u = blockIdx.y, h = u % p.heads, m = u / p.heads % p.beams, b = u / p.heads / p.beams;
    int mk = p.kv_shared ? 0 : m;
    int lq = ocd_attn_core_clamp(p.len_q[b * p.beams + m], p.max_q);
    int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
    int i0 = p.q_first + blockIdx.x * BM, iend = p.q_first + p.q_count;

    if (tid == 0) {
        keys[0] = INT_MAX, keys[1] = 0;
        ocd_mbar_init(full_q, 128);
        for (int s = 0; s < STAGES; s++)
            ocd_mbar_init(&full_k[s], 128), ocd_mbar_init(&full_v[s], 128), ocd_mbar_init(&empty[s], 256);
    }
    __syncthreads();
    /* the windows of a consumer thread's two rows (consumer warp cw owns rows 16 cw ..), and the
       keys the block's rows reach */
    int cw = (wg - 1) * 4 + wt / 32, rlo[2] = {0, 0}, rhi[2] = {0, 0};
    if (wg > 0) {
        flash_windows(d, i0, iend, lq, lkv, cw, lane, rlo, rhi);
#pragma unroll
        for (int hr = 0; hr < 2; hr++)
            if (rlo[hr] < rhi[hr] && lane % 4 == 0) atomicMin(&keys[0], rlo[hr]), atomicMax(&keys[1], rhi[hr]);
    }
    __syncthreads();
    const int k0 = keys[0], k1 = keys[1];
    const int tiles = k0 < k1 ? (k1 - k0 + BN - 1) / BN : 0;

    if (wg == 0) {
        ocd_wgmma_setmaxnreg_dec<PRODUCER_REGS>();
        flash_load_tile<D, BM, true>((T *)sm, p.q, b, m, h, i0, min(iend, lq), wt);
        ocd_mma_cp_commit();
        for (int t = 0; t < tiles; t++) {
            int st = t % STAGES, kt = k0 + t * BN;
            if (t >= STAGES) ocd_mbar_wait(&empty[st], sm90_parity(t - STAGES));
            flash_load_tile<D, BN, true>((T *)(sm + L::K0 + st * L::TILE), p.k, b, mk, h, kt, lkv, wt);
            ocd_mma_cp_commit();
            flash_load_tile<D, BN, true>((T *)(sm + L::V0 + st * L::TILE), p.v, b, mk, h, kt, lkv, wt);
            ocd_mma_cp_commit();
            ocd_mma_cp_wait<1>(); /* Q and this K tile have landed */
            ocd_bulk_fence_writes();
            if (t == 0) ocd_mbar_arrive(full_q);
            ocd_mbar_arrive(&full_k[st]);
            ocd_mma_cp_wait<0>();
            ocd_bulk_fence_writes();
            ocd_mbar_arrive(&full_v[st]);
        }
        ocd_mma_cp_wait<0>();
        return;
    }

    ocd_wgmma_setmaxnreg_inc<CONSUMER_REGS>();
    const int g = wg - 1;
    float acc[NO][4], mx[2], l[2];
    const float scale2 = flash_rows_init(p, acc, mx, l);
    float(&acc_flat)[D / 2] = reinterpret_cast<float(&)[D / 2]>(acc);
    uint32_t pf[BN / 16][4]; /* P of the previous key tile, in A registers */
    float s[NS][4];
    float(&s_flat)[BN / 2] = reinterpret_cast<float(&)[BN / 2]>(s);
    /* the products of a turn, each a wgmma group: S = Q K^T of the tile in stage st, O += P V
       of the previous tile, in stage sp (after a wgmma fence) */
    auto issue_s = [&](int st) {
#pragma unroll
        for (int ks = 0; ks < D / 16; ks++)
            ocd_wgmma<BN, T>::ss(s_flat, sm90_desc_q<D>(base, g, ks), sm90_desc_k<D>(base, st, ks), ks > 0);
        ocd_wgmma_commit();
    };
    auto issue_pv = [&](int sp) {
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) ocd_wgmma<D, T>::rs_mn(acc_flat, pf[kk], sm90_desc_v<D>(base, sp, kk), 1);
        ocd_wgmma_commit();
    };
    /* the softmax of tile t once its scores have landed, while O += P V may still run */
    float corr[2];
    auto softmax = [&](int t) {
        ocd_wgmma_fence_operands(s_flat);
        flash_softmax_rows(s, k0 + t * BN, rlo, rhi, lane, scale2, mx, l, corr);
    };
    /* once O += P V has landed too: the rescale and the new P */
    auto next_p = [&]() {
        ocd_wgmma_fence_operands(acc_flat);
        flash_rescale(acc, corr);
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) flash_p_frag<T>(pf[kk], s, kk);
    };
    if (tiles > 0) {
        ocd_mbar_wait(full_q, 0);
        if (g == 1) sm90_turn_pass(g); /* consumer 0 takes the first turn */
        /* tile 0: its scores alone */
        ocd_mbar_wait(&full_k[0], sm90_parity(0));
        sm90_turn_wait(g);
        ocd_wgmma_fence();
        issue_s(0);
        if (g == 0 || tiles > 1) sm90_turn_pass(g);
        ocd_wgmma_wait<0>();
        softmax(0);
        next_p();
    }
    for (int t = 1; t < tiles; t++) {
        const int st = t % STAGES, sp = (t - 1) % STAGES; /* stages of tiles t and t - 1 */
        ocd_mbar_wait(&full_k[st], sm90_parity(t));
        ocd_mbar_wait(&full_v[sp], sm90_parity(t - 1));
        sm90_turn_wait(g);
        ocd_wgmma_fence();
        issue_s(st);
        issue_pv(sp);
        if (g == 0 || t + 1 < tiles) sm90_turn_pass(g);
        ocd_wgmma_wait<1>();
        softmax(t);
        ocd_wgmma_wait<0>();
        ocd_mbar_arrive(&empty[sp]); /* tile t - 1's K and V are read */
        next_p();
    }
    if (tiles > 0) { /* O += P V of the last tile (its stage is not refilled) */
        const int sp = (tiles - 1) % STAGES;
        ocd_mbar_wait(&full_v[sp], sm90_parity(tiles - 1));
        ocd_wgmma_fence();
        issue_pv(sp);
        ocd_wgmma_wait<0>();
        ocd_wgmma_fence_operands(acc_flat);
    }

#pragma unroll
    for (int hr = 0; hr < 2; hr++) {
        int i = flash_row(i0, cw, lane, hr);
        if (i < iend) flash_store<T>(d, b, m, h, i, acc, hr, l[hr], mx[hr], lane);
    }
#endif
}

} // namespace

extern "C" const char *ocd_cuda_attn_fwd_sm90_applies(cudnnHandle_t handle, const void *call)
{
    if (const char *why = ocd_wgmma_entry_rejects(handle, OCD_WGMMA_BUILT)) return why;
    const ocd_attn_core_problem *p = static_cast<const ocd_attn_core_call *>(call)->p;
    if (p->dropout > 0) return "the wgmma attention kernel has no dropout (the sm_80 kernel has)";
    return flash_rejects(handle, p);
}

extern "C" cudnnStatus_t ocd_cuda_attn_fwd_sm90(cudnnHandle_t handle, const void *call, void *, size_t)
{
    return flash_entry(handle, call, true, [&](auto t, auto dd, const ocd_attn_dev &d) {
        typedef typename decltype(t)::type T;
        constexpr int D = decltype(dd)::value;
        static int pool_checked;
        OCD_TRY(ocd_wgmma_pool_check(attn_fwd_sm90<T, D>, THREADS, 128 * PRODUCER_REGS + 256 * CONSUMER_REGS,
                                     &pool_checked));
        return flash_launch(handle, attn_fwd_sm90<T, D>, flash_fwd_grid<BM>(d.p), THREADS, sm90_smem<D>::BYTES, d);
    });
}
