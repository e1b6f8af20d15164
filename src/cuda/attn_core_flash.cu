/* attn_core_flash.cu: the fused attention forward on tensor cores (entry cuda:attn_fwd_flash),
   FlashAttention-2's scheme for half and bfloat16 data with head size 64 or 128 (q, k and v
   alike), without dropout: scores, online softmax and the weighted sum in one pass, no score in
   memory. Every other problem goes to the row kernels (cuda/attn_core.cu).

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
   without keys get zeros. The accumulators are float.

   Fragment layouts (PTX ISA, mma.m16n8k16): thread `lane` holds, of a 16 x 8 accumulator tile,
   rows lane / 4 and lane / 4 + 8, columns 2 (lane % 4) + {0, 1}; of the A fragment (16 x 16),
   a[0] = (row lane / 4, k 2 (lane % 4) + {0, 1}), a[1] = the same 8 rows lower, a[2], a[3] = the
   same with k + 8. */
#include "cuda/attn_core.cuh"
#include "cuda/mma.cuh"
#include "cuda/types.cuh"

#include <climits>
#include <math.h>

namespace {

constexpr int BM = 64, BN = 64, WARPS = 4, THREADS = WARPS * 32;

/* Shared-memory geometry for head size D: rows of D elements padded by 8 (16 bytes), so that the
   8 row addresses of an ldmatrix fall in different bank groups. */
template <int D> struct flash_smem {
    static constexpr int LD = D + 8;
    static constexpr int TILE = BN * LD;              /* one K or V tile */
    static constexpr int Q = BM * LD;
    static constexpr size_t BYTES = (size_t)(Q + 4 * TILE) * 2; /* Q, then K and V of two stages */
};

/* Copies rows [t0, t0 + 64) of an operand's (b, m, h) sequence, D elements each, into a tile of
   shared memory with 16-byte cp.async; rows at or past `valid` are zero-filled. */
template <int D, typename T>
__device__ __forceinline__ void load_tile(T *s, const ocd_attn_operand &x, int b, int m, int h, int t0, int valid,
                                          int tid)
{
    constexpr int CPR = D / 8; /* 16-byte chunks a row */
    const T *base = (const T *)x.data + ocd_attn_core_row(&x, b, m, h, 0);
    int64_t ts = x.stride[OCD_ATTN_TIME];
#pragma unroll
    for (int c = tid; c < 64 * CPR; c += THREADS) {
        int r = c / CPR, e = (c % CPR) * 8, t = t0 + r;
        bool ok = t < valid;
        ocd_mma_cp_async16(s + r * flash_smem<D>::LD + e, ok ? base + t * ts + e : base, ok);
    }
}

/* Two 16-bit values (lo, hi) of type T in one register. */
template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

template <typename T, int D>
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
#pragma unroll
    for (int hr = 0; hr < 2; hr++) {
        int i = i0 + warp * 16 + lane / 4 + hr * 8;
        rlo[hr] = 0, rhi[hr] = 0;
        if (i < iend && i < lq) ocd_attn_core_keys(p.lo_win[i], p.hi_win[i], lkv, &rlo[hr], &rhi[hr]);
        if (rlo[hr] < rhi[hr] && lane % 4 == 0) atomicMin(&key_lo, rlo[hr]), atomicMax(&key_hi, rhi[hr]);
    }
    load_tile<D>(sq, p.q, b, m, h, i0, min(iend, lq), tid);
    ocd_mma_cp_commit();
    __syncthreads();
    int k0 = key_lo, k1 = key_hi;
    int tiles = k0 < k1 ? (k1 - k0 + BN - 1) / BN : 0;
    if (tiles > 0) {
        load_tile<D>(sk, p.k, b, mk, h, k0, lkv, tid);
        load_tile<D>(sv, p.v, b, mk, h, k0, lkv, tid);
    }
    ocd_mma_cp_commit();

    float acc[NO][4];
#pragma unroll
    for (int j = 0; j < NO; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[j][e] = 0.f;
    float mx[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
    const float scale2 = (float)(p.sm_scaler * 1.4426950408889634);
    uint32_t qf[KS][4];

    for (int t = 0; t < tiles; t++) {
        if (t + 1 < tiles) {
            int st = (t + 1) % 2;
            load_tile<D>(sk + st * L::TILE, p.k, b, mk, h, k0 + (t + 1) * BN, lkv, tid);
            load_tile<D>(sv + st * L::TILE, p.v, b, mk, h, k0 + (t + 1) * BN, lkv, tid);
        }
        ocd_mma_cp_commit();
        ocd_mma_cp_wait<1>(); /* Q and tile t have landed */
        __syncthreads();
        if (t == 0)
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
                ocd_mma_ldmatrix_x4<false>(qf[ks], sq + (warp * 16 + (lane & 15)) * L::LD + ks * 16 + (lane >> 4) * 8);
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
                ocd_mma_ldmatrix_x4<false>(
                    kf, ck + (j * 16 + (lane >> 4) * 8 + (lane & 7)) * L::LD + ks * 16 + ((lane >> 3) & 1) * 8);
                ocd_mma_elem<T>::mma(s[2 * j], qf[ks], kf);
                ocd_mma_elem<T>::mma(s[2 * j + 1], qf[ks], kf + 2);
            }

        /* mask, running max and sum, rescale */
        int kt = k0 + t * BN;
        float corr[2];
#pragma unroll
        for (int hr = 0; hr < 2; hr++) {
            float tmax = -INFINITY;
#pragma unroll
            for (int j = 0; j < NS; j++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    int key = kt + j * 8 + 2 * (lane & 3) + c;
                    float v = key >= rlo[hr] && key < rhi[hr] ? s[j][hr * 2 + c] * scale2 : -INFINITY;
                    s[j][hr * 2 + c] = v;
                    tmax = fmaxf(tmax, v);
                }
            tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
            tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 2));
            float nm = fmaxf(mx[hr], tmax);
            float base = nm == -INFINITY ? 0.f : nm; /* a row without keys so far: exp2(-inf) = 0 */
            corr[hr] = exp2f(mx[hr] - base);
            float sum = 0.f;
#pragma unroll
            for (int j = 0; j < NS; j++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    float e = exp2f(s[j][hr * 2 + c] - base);
                    s[j][hr * 2 + c] = e;
                    sum += e;
                }
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            l[hr] = l[hr] * corr[hr] + sum;
            mx[hr] = nm;
        }
#pragma unroll
        for (int j = 0; j < NO; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[j][e] *= corr[e / 2];

        /* O += P V: the score accumulators of key tiles 2 kk and 2 kk + 1 are the A fragment of
           k-step kk */
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            uint32_t pf[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]), pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                              pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int j = 0; j < NO / 2; j++) {
                uint32_t vf[4];
                ocd_mma_ldmatrix_x4<true>(
                    vf, cv + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * L::LD + j * 16 + (lane >> 4) * 8);
                ocd_mma_elem<T>::mma(acc[2 * j], pf, vf);
                ocd_mma_elem<T>::mma(acc[2 * j + 1], pf, vf + 2);
            }
        }
        __syncthreads(); /* every warp is done with this stage before the next prefetch refills it */
    }
    ocd_mma_cp_wait<0>();

    /* the output rows and their statistics */
#pragma unroll
    for (int hr = 0; hr < 2; hr++) {
        int i = i0 + warp * 16 + lane / 4 + hr * 8;
        if (i >= iend) continue;
        float inv = l[hr] > 0.f ? 1.f / l[hr] : 0.f;
        T *orow = (T *)p.o.data + ocd_attn_core_row(&p.o, b, m, h, i);
#pragma unroll
        for (int j = 0; j < NO; j++)
#pragma unroll
            for (int c = 0; c < 2; c++) ocd_cuda_store(orow + j * 8 + 2 * (lane & 3) + c, acc[j][hr * 2 + c] * inv);
        if (d.lse && lane % 4 == 0)
            ((float *)d.lse)[ocd_attn_row_index(p, b, m, h, i)] =
                l[hr] > 0.f ? (mx[hr] + log2f(l[hr])) * 0.6931471805599453f : -INFINITY;
    }
}

template <typename T, int D> cudnnStatus_t launch(cudnnHandle_t handle, const ocd_attn_dev &d)
{
    auto kernel = attn_fwd_flash<T, D>;
    size_t smem = flash_smem<D>::BYTES;
    if (smem > 48 * 1024)
        OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    dim3 grid((unsigned)((d.p.q_count + BM - 1) / BM), (unsigned)(d.p.batch * d.p.beams * d.p.heads));
    kernel<<<grid, THREADS, smem, handle->stream>>>(d);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

bool aligned16(const ocd_attn_operand &x)
{
    if ((uintptr_t)x.data % 16 != 0 || x.stride[OCD_ATTN_ELEM] != 1) return false;
    for (int a = 0; a < OCD_ATTN_ELEM; a++)
        if (x.stride[a] % 8 != 0) return false;
    return true;
}

} // namespace

extern "C" const char *ocd_cuda_attn_fwd_flash_applies(cudnnHandle_t handle, const void *call)
{
    const ocd_attn_core_problem *p = static_cast<const ocd_attn_core_call *>(call)->p;
    if (handle->cc_major < 8) return "the fused attention kernel needs sm_80 or newer";
    if (p->dtype != CUDNN_DATA_HALF && p->dtype != CUDNN_DATA_BFLOAT16) return "fused attention: half or bfloat16 data";
    if (p->dropout > 0) return "fused attention: no dropout";
    if (p->head_qk != p->head_v || (p->head_qk != 64 && p->head_qk != 128))
        return "fused attention: head sizes 64 or 128, q, k and v alike";
    if (!aligned16(p->q) || !aligned16(p->k) || !aligned16(p->v) || !aligned16(p->o))
        return "fused attention: operands of contiguous heads on 16-byte boundaries";
    if ((int64_t)p->batch * p->beams * p->heads > 65535) return "fused attention: more than 65535 sequences";
    return nullptr;
}

extern "C" cudnnStatus_t ocd_cuda_attn_fwd_flash(cudnnHandle_t handle, const void *call, void *, size_t)
{
    const ocd_attn_core_call *c = static_cast<const ocd_attn_core_call *>(call);
    ocd_attn_dev d;
    OCD_TRY(ocd_cuda_attn_prologue(handle, c, true, &d));
    bool wide = d.p.head_qk == 128;
    if (d.p.dtype == CUDNN_DATA_HALF) return wide ? launch<__half, 128>(handle, d) : launch<__half, 64>(handle, d);
    return wide ? launch<__nv_bfloat16, 128>(handle, d) : launch<__nv_bfloat16, 64>(handle, d);
}
