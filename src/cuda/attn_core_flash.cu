/* attn_core_flash.cu: the fused attention forward on tensor cores (entry cuda:attn_fwd_flash),
   FlashAttention-2's scheme for half and bfloat16 data with head size 64 or 128 (q, k and v
   alike): scores, online softmax, dropout (the header's Philox rule, applied to the probabilities
   after their row sums took them) and the weighted sum in one pass, no score in memory; the
   row's log-sum-exp goes to the reserve for the backward (cuda/attn_core_flash_bwd.cu). Every
   other problem goes to the row kernels (cuda/attn_core.cu).

   A block takes BM = 64 query rows of one (batch item, beam, head), four warps of 16 rows each,
   and walks the keys its rows' windows reach in tiles of BN = 64, the K and V tiles double
   buffered in shared memory (16-byte cp.async, rows past len_kv zero-filled so that a padded
   row never reaches a product). Per tile each warp forms its 16 x 64 scores with mma.sync
   m16n8k16 (Q fragments kept in registers, K fragments by ldmatrix), masks the keys outside each
   row's window, updates the running max and sum per row (in the base-2 domain, exp2 of scores
   pre-multiplied by smScaler * log2 e), rescales its output accumulators, and multiplies the
   probabilities, rounded to the data type and re-packed from the score accumulators into A
   fragments (the layouts match, FlashAttention-2's register trick), by V (ldmatrix.trans). Rows
   of the block past the query range are neither computed nor written; rows past their length or
   without keys get zeros. The accumulators are float. Tile loads, fragment addresses, the
   fragment layouts and the per-row softmax steps are cuda/attn_core_flash.cuh's. */
#include "cuda/attn_core_flash.cuh"

#include <climits>
#include <math.h>

namespace {

constexpr int BM = 64, BN = 64, WARPS = 4, THREADS = OCD_FLASH_THREADS;
static_assert(THREADS == WARPS * 32, "one warp per 16 query rows of the block");

/* Shared-memory geometry for head size D (rows padded by 8 elements, see the header). */
template <int D> struct flash_smem {
    static constexpr int LD = D + 8;
    static constexpr int TILE = BN * LD;              /* one K or V tile */
    static constexpr int Q = BM * LD;
    static constexpr size_t BYTES = (size_t)(Q + 4 * TILE) * 2; /* Q, then K and V of two stages */
};

/* ---- per-thread pieces, host-callable so that tests/emulate/attn_flash.cu runs them on the CPU - */

/* Dropout on the probabilities of row half hr (mask row ri, keys of the tile at kt): each kept
   one multiplied by the scale, the others zeroed, after the row's sum has taken them. */
template <int NS>
__host__ __device__ __forceinline__ void flash_dropout(float (&s)[NS][4], int hr, int kt, int64_t ri, int lane,
                                                       const ocd_attn_dev &d)
{
    for (int j = 0; j < NS; j++)
        for (int c = 0; c < 2; c++) {
            int key = kt + j * 8 + 2 * (lane & 3) + c;
            s[j][hr * 2 + c] *= ocd_attn_drop<float>(d, (uint64_t)ri * d.p.max_kv + key);
        }
}

/* ---- the kernel ---------------------------------------------------------------------------------- */

template <typename T, int D, bool DROPOUT>
__global__ void __launch_bounds__(THREADS) attn_fwd_flash(ocd_attn_dev d)
{
    typedef flash_smem<D> L;
    constexpr int KS = D / 16; /* k-steps of Q K^T */
    constexpr int NO = D / 8;  /* 8-column tiles of the output */
    constexpr int NS = BN / 8; /* 8-column tiles of the scores */
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sq = (T *)smem_raw, *sk = sq + L::Q, *sv = sk + 2 * L::TILE;
    __shared__ int key_lo, key_hi;

    const ocd_attn_core_problem &p = d.p;
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int u = blockIdx.y, h = u % p.heads, m = u / p.heads % p.beams, b = u / p.heads / p.beams;
    int mk = p.kv_shared ? 0 : m;
    int lq = ocd_attn_core_clamp(p.len_q[b * p.beams + m], p.max_q);
    int lkv = ocd_attn_core_clamp(p.len_kv[b * d.kv_beams + mk], p.max_kv);
    int i0 = p.q_first + blockIdx.x * BM, iend = p.q_first + p.q_count;

    /* the windows of this thread's two rows, and the keys the block's rows reach */
    if (tid == 0) key_lo = INT_MAX, key_hi = 0;
    __syncthreads();
    int rlo[2], rhi[2];
    flash_windows(d, i0, iend, lq, lkv, warp, lane, rlo, rhi);
    int64_t ri[2] = {ocd_attn_row_index(p, b, m, h, flash_row(i0, warp, lane, 0)),
                     ocd_attn_row_index(p, b, m, h, flash_row(i0, warp, lane, 1))};
#pragma unroll
    for (int hr = 0; hr < 2; hr++)
        if (rlo[hr] < rhi[hr] && lane % 4 == 0) atomicMin(&key_lo, rlo[hr]), atomicMax(&key_hi, rhi[hr]);
    flash_load_tile<D>(sq, p.q, b, m, h, i0, min(iend, lq), tid);
    ocd_mma_cp_commit();
    __syncthreads();
    int k0 = key_lo, k1 = key_hi;
    int tiles = k0 < k1 ? (k1 - k0 + BN - 1) / BN : 0;
    if (tiles > 0) {
        flash_load_tile<D>(sk, p.k, b, mk, h, k0, lkv, tid);
        flash_load_tile<D>(sv, p.v, b, mk, h, k0, lkv, tid);
    }
    ocd_mma_cp_commit();

    float acc[NO][4], mx[2], l[2];
    const float scale2 = flash_rows_init(p, acc, mx, l);
    uint32_t qf[KS][4];

    for (int t = 0; t < tiles; t++) {
        if (t + 1 < tiles) {
            int st = (t + 1) % 2;
            flash_load_tile<D>(sk + st * L::TILE, p.k, b, mk, h, k0 + (t + 1) * BN, lkv, tid);
            flash_load_tile<D>(sv + st * L::TILE, p.v, b, mk, h, k0 + (t + 1) * BN, lkv, tid);
        }
        ocd_mma_cp_commit();
        ocd_mma_cp_wait<1>(); /* Q and tile t have landed */
        __syncthreads();
        if (t == 0)
#pragma unroll
            for (int ks = 0; ks < KS; ks++) ocd_mma_ldmatrix_x4<false>(qf[ks], flash_a_addr<L::LD>(sq, warp * 16, ks * 16, lane));
        const T *ck = sk + (t % 2) * L::TILE, *cv = sv + (t % 2) * L::TILE;

        /* scores S = Q K^T, 16 x 64 per warp */
        float s[NS][4];
#pragma unroll
        for (int j = 0; j < NS; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) s[j][e] = 0.f;
#pragma unroll
        for (int ks = 0; ks < KS; ks++)
#pragma unroll
            for (int j = 0; j < NS / 2; j++) {
                uint32_t kf[4];
                ocd_mma_ldmatrix_x4<false>(kf, flash_b_addr<L::LD>(ck, j * 16, ks * 16, lane));
                ocd_mma_elem<T>::mma(s[2 * j], qf[ks], kf);
                ocd_mma_elem<T>::mma(s[2 * j + 1], qf[ks], kf + 2);
            }

        /* mask; running max and sum per row (the 4 threads of a quad share a row); rescale;
           dropout on the probabilities after their sums took them */
        float corr[2];
        flash_softmax_rows(s, k0 + t * BN, rlo, rhi, lane, scale2, mx, l, corr);
        flash_rescale(acc, corr);
        if (DROPOUT)
#pragma unroll
            for (int hr = 0; hr < 2; hr++) flash_dropout(s, hr, k0 + t * BN, ri[hr], lane, d);

        /* O += P V */
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            uint32_t pf[4];
            flash_p_frag<T>(pf, s, kk);
#pragma unroll
            for (int j = 0; j < NO / 2; j++) {
                uint32_t vf[4];
                ocd_mma_ldmatrix_x4<true>(vf, flash_bt_addr<L::LD>(cv, kk * 16, j * 16, lane));
                ocd_mma_elem<T>::mma(acc[2 * j], pf, vf);
                ocd_mma_elem<T>::mma(acc[2 * j + 1], pf, vf + 2);
            }
        }
        __syncthreads(); /* every warp is done with this stage before the next prefetch refills it */
    }
    ocd_mma_cp_wait<0>();

#pragma unroll
    for (int hr = 0; hr < 2; hr++) {
        int i = flash_row(i0, warp, lane, hr);
        if (i < iend) flash_store<T>(d, b, m, h, i, acc, hr, l[hr], mx[hr], lane);
    }
}

} // namespace

extern "C" const char *ocd_cuda_attn_fwd_flash_applies(cudnnHandle_t handle, const void *call)
{
    return flash_rejects(handle, static_cast<const ocd_attn_core_call *>(call)->p);
}

extern "C" cudnnStatus_t ocd_cuda_attn_fwd_flash(cudnnHandle_t handle, const void *call, void *, size_t)
{
    return flash_entry(handle, call, true, [&](auto t, auto dd, const ocd_attn_dev &d) {
        typedef typename decltype(t)::type T;
        constexpr int D = decltype(dd)::value;
        auto kernel = d.p.dropout > 0 ? attn_fwd_flash<T, D, true> : attn_fwd_flash<T, D, false>;
        return flash_launch(handle, kernel, flash_fwd_grid<BM>(d.p), THREADS, flash_smem<D>::BYTES, d);
    });
}
