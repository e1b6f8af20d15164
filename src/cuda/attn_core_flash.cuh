/* attn_core_flash.cuh: what the fused tensor-core kernels of the attention core share
   (cuda/attn_core_flash.cu: the forward; cuda/attn_core_flash_bwd.cu: the backward): their
   applicability, the tile loads into shared memory, the ldmatrix row addresses of the three
   fragment kinds they use, the re-packing of float accumulators into A fragments, and each
   thread's part of the rows' windows, online softmax and output store (which the Hopper
   forward, cuda/attn_core_flash_sm90.cu, shares: each warp's part of its wgmma accumulators
   lies as an mma.sync accumulator of 16 rows). Every
   piece is host-callable (a host copy stands in for cp.async), so that tests/emulate/attn_flash*.cu
   run each thread's logic on the CPU.

   Shared-memory tiles hold rows of D elements padded by 8 (16 bytes), so that the 8 row
   addresses of one ldmatrix fall in different bank groups.

   Fragment layouts (PTX ISA, mma.m16n8k16): thread `lane` holds, of a 16 x 8 accumulator tile,
   rows lane / 4 and lane / 4 + 8, columns 2 (lane % 4) + {0, 1}; of the A fragment (16 x 16),
   a[0] = (row lane / 4, k 2 (lane % 4) + {0, 1}), a[1] = the same 8 rows lower, a[2], a[3] = the
   same with k + 8. An accumulator tile pair (columns 16 kk ..) therefore re-packs into the A
   fragment of k-step kk without moving between threads (FlashAttention-2's register trick). */
#ifndef OCD_CUDA_ATTN_CORE_FLASH_CUH
#define OCD_CUDA_ATTN_CORE_FLASH_CUH

#include "cuda/attn_core.cuh"
#include "cuda/mma.cuh"
#include "cuda/types.cuh"
#include "cuda/wgmma.cuh"

#include <math.h>
#include <type_traits>

/* Threads of a block of either fused kernel: four warps. */
constexpr int OCD_FLASH_THREADS = 128;

/* Where chunk c (elements 8 c ..) of row r of a tile of ROWS rows lies: rows of pitch D + 8
   (SW128 false), or wgmma's K-major 128-byte-swizzled layout (cuda/wgmma.cuh), the tile cut
   into blocks of 64 columns of ROWS rows each. */
template <int D, int ROWS, bool SW128, typename T> __host__ __device__ __forceinline__ int flash_tile_offset(int r, int c)
{
    typedef ocd_wgmma_smem<T, ROWS> W;
    return SW128 ? c / W::CPR * W::STAGE + W::offset(r, c % W::CPR) : r * (D + 8) + c * 8;
}

/* Copies rows [t0, t0 + ROWS) of an operand's (b, m, h) sequence, D elements each, into a tile of
   shared memory laid out as flash_tile_offset says, with 16-byte cp.async by the
   OCD_FLASH_THREADS threads tid; rows at or past `valid` are zero-filled (so that a padded row
   never reaches a product). */
template <int D, int ROWS = 64, bool SW128 = false, typename T>
__host__ __device__ __forceinline__ void flash_load_tile(T *s, const ocd_attn_operand &x, int b, int m, int h, int t0,
                                                         int valid, int tid)
{
    constexpr int CPR = D / 8, RSTEP = OCD_FLASH_THREADS / CPR; /* 16-byte chunks a row; rows a pass */
    constexpr int PITCH = SW128 ? ocd_wgmma_smem<T, ROWS>::BK : D + 8; /* elements from row to row */
    static_assert(OCD_FLASH_THREADS % CPR == 0 && ROWS % RSTEP == 0, "whole rows a pass");
    static_assert(!SW128 || RSTEP % 8 == 0, "a pass keeps the rows' swizzle");
    const int c = tid % CPR, r0 = tid / CPR; /* the thread's chunk of each of its rows, its first row */
    int64_t ts = x.stride[OCD_ATTN_TIME];
    const T *src = (const T *)x.data + ocd_attn_core_row(&x, b, m, h, t0 + r0) + c * 8;
    T *dst = s + flash_tile_offset<D, ROWS, SW128, T>(r0, c);
#pragma unroll
    for (int r = r0; r < ROWS; r += RSTEP, src += RSTEP * ts, dst += RSTEP * PITCH) {
        bool ok = t0 + r < valid;
        ocd_mma_cp_async<16>(dst, ok ? src : (const T *)x.data, ok);
    }
}

/* ldmatrix.x4 row addresses in a tile of row pitch LD (mma.cuh's K-major A and B, MN-major B):
   - flash_a_addr: the A fragment of rows r0 .. r0 + 15, k = columns k0 .. k0 + 15;
   - flash_b_addr: the B fragments of n-tiles n0 .. n0 + 7 and n0 + 8 .. n0 + 15 held as rows
     (n = row, k = columns k0 .. k0 + 15), registers {0, 1} and {2, 3};
   - flash_bt_addr: the same held transposed (k = rows k0 .. k0 + 15, n = columns n0 ..), for
     ldmatrix.trans. */
template <int LD, typename T> __host__ __device__ __forceinline__ const T *flash_a_addr(const T *s, int r0, int k0, int lane)
{
    return s + (r0 + (lane & 15)) * LD + k0 + (lane >> 4) * 8;
}
template <int LD, typename T> __host__ __device__ __forceinline__ const T *flash_b_addr(const T *s, int n0, int k0, int lane)
{
    return s + (n0 + (lane >> 4) * 8 + (lane & 7)) * LD + k0 + ((lane >> 3) & 1) * 8;
}
template <int LD, typename T> __host__ __device__ __forceinline__ const T *flash_bt_addr(const T *s, int k0, int n0, int lane)
{
    return s + (k0 + ((lane >> 3) & 1) * 8 + (lane & 7)) * LD + n0 + (lane >> 4) * 8;
}

/* Two 16-bit values (lo, hi) of type T in one register. */
template <typename T> __host__ __device__ __forceinline__ uint32_t flash_pack2(float lo, float hi);
template <> __host__ __device__ __forceinline__ uint32_t flash_pack2<__half>(float lo, float hi)
{
    __half2 v = __floats2half2_rn(lo, hi);
    uint32_t r;
    memcpy(&r, &v, 4);
    return r;
}
template <> __host__ __device__ __forceinline__ uint32_t flash_pack2<__nv_bfloat16>(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    uint32_t r;
    memcpy(&r, &v, 4);
    return r;
}

/* The A fragment of k-step kk from float accumulators: those of tiles 2 kk and 2 kk + 1. */
template <typename T, int NS>
__host__ __device__ __forceinline__ void flash_p_frag(uint32_t pf[4], const float (&s)[NS][4], int kk)
{
    pf[0] = flash_pack2<T>(s[2 * kk][0], s[2 * kk][1]);
    pf[1] = flash_pack2<T>(s[2 * kk][2], s[2 * kk][3]);
    pf[2] = flash_pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    pf[3] = flash_pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
}

/* ---- the rows' softmax and output, per thread (accumulator layout above) ---------------------- */

/* Query step of row half hr (0: lane / 4, 1: lane / 4 + 8) of a warp's 16 rows. */
__host__ __device__ __forceinline__ int flash_row(int i0, int warp, int lane, int hr)
{
    return i0 + warp * 16 + lane / 4 + hr * 8;
}

/* The keys [lo, hi) of a thread's two rows: none for a row past the query range or its length. */
__host__ __device__ __forceinline__ void flash_windows(const ocd_attn_dev &d, int i0, int iend, int lq, int lkv,
                                                       int warp, int lane, int lo[2], int hi[2])
{
    for (int hr = 0; hr < 2; hr++) {
        int i = flash_row(i0, warp, lane, hr);
        lo[hr] = 0, hi[hr] = 0;
        if (i < iend && i < lq) ocd_attn_core_keys(d.p.lo_win[i], d.p.hi_win[i], lkv, &lo[hr], &hi[hr]);
    }
}

/* Masks the scores of row half hr outside [lo, hi) (keys of the tile at kt) to -inf, scales the
   others to the base-2 domain, and returns the thread's largest. */
template <int NS>
__host__ __device__ __forceinline__ float flash_mask_max(float (&s)[NS][4], int hr, int kt, int lo, int hi, int lane,
                                                         float scale2)
{
    float mx = -INFINITY;
    for (int j = 0; j < NS; j++)
        for (int c = 0; c < 2; c++) {
            int key = kt + j * 8 + 2 * (lane & 3) + c;
            float v = key >= lo && key < hi ? s[j][hr * 2 + c] * scale2 : -INFINITY;
            s[j][hr * 2 + c] = v;
            mx = fmaxf(mx, v);
        }
    return mx;
}

/* What the probabilities of a row are taken relative to: its running max, or 0 while it has no
   key (so that exp2(-inf - base) is 0, not NaN). */
__host__ __device__ __forceinline__ float flash_base(float max)
{
    return max == -INFINITY ? 0.f : max;
}

/* Replaces the scores of row half hr by exp2(s - base) and returns the thread's sum of them. */
template <int NS> __host__ __device__ __forceinline__ float flash_exp_sum(float (&s)[NS][4], int hr, float base)
{
    float sum = 0.f;
    for (int j = 0; j < NS; j++)
        for (int c = 0; c < 2; c++) {
            float e = exp2f(s[j][hr * 2 + c] - base);
            s[j][hr * 2 + c] = e;
            sum += e;
        }
    return sum;
}

/* Writes a thread's part of output row half hr (query step i < the range's end): acc / l, zeros
   for a row without keys; and its log-sum-exp (natural log) when the reserve is given. */
template <typename T, int NO>
__host__ __device__ __forceinline__ void flash_store(const ocd_attn_dev &d, int b, int m, int h, int i,
                                                     const float (&acc)[NO][4], int hr, float l, float mx, int lane)
{
    const ocd_attn_core_problem &p = d.p;
    float inv = l > 0.f ? 1.f / l : 0.f;
    T *orow = (T *)p.o.data + ocd_attn_core_row(&p.o, b, m, h, i);
    for (int j = 0; j < NO; j++)
        for (int c = 0; c < 2; c++) ocd_cuda_store(orow + j * 8 + 2 * (lane & 3) + c, acc[j][hr * 2 + c] * inv);
    if (d.lse && lane % 4 == 0)
        ((float *)d.lse)[ocd_attn_row_index(p, b, m, h, i)] = l > 0.f ? (mx + log2f(l)) * 0.6931471805599453f : -INFINITY;
}

/* One key tile's online-softmax step for row half hr of a thread's score accumulators (the four
   threads of a quad share a row): masks and scales the scores (flash_mask_max), takes the row's
   max over the quad, replaces the scores by their exponentials, adds their quad sum to the
   running sum l (rescaled) and moves the running max mx; returns the factor the row's output
   accumulators are to be multiplied by. */
template <int NS>
__device__ __forceinline__ float flash_softmax_step(float (&s)[NS][4], int hr, int kt, int lo, int hi, int lane,
                                                    float scale2, float &mx, float &l)
{
    float tmax = flash_mask_max(s, hr, kt, lo, hi, lane, scale2);
    tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
    tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 2));
    float nm = fmaxf(mx, tmax), base = flash_base(nm);
    float corr = exp2f(mx - base);
    float sum = flash_exp_sum(s, hr, base);
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    l = l * corr + sum;
    mx = nm;
    return corr;
}

/* A thread's two rows before their first key tile: output accumulators zero, running max -inf,
   running sum 0; returns the factor that takes scores to the base-2 domain (smScaler log2 e). */
template <int NO>
__host__ __device__ __forceinline__ float flash_rows_init(const ocd_attn_core_problem &p, float (&acc)[NO][4],
                                                          float (&mx)[2], float (&l)[2])
{
#pragma unroll
    for (int j = 0; j < NO; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[j][e] = 0.f;
    mx[0] = mx[1] = -INFINITY, l[0] = l[1] = 0.f;
    return (float)(p.sm_scaler * 1.4426950408889634);
}

/* One key tile (keys from kt) of the online softmax for a thread's two rows: flash_softmax_step
   for each, their output factors in corr. */
template <int NS>
__device__ __forceinline__ void flash_softmax_rows(float (&s)[NS][4], int kt, const int (&lo)[2], const int (&hi)[2],
                                                   int lane, float scale2, float (&mx)[2], float (&l)[2],
                                                   float (&corr)[2])
{
#pragma unroll
    for (int hr = 0; hr < 2; hr++) corr[hr] = flash_softmax_step(s, hr, kt, lo[hr], hi[hr], lane, scale2, mx[hr], l[hr]);
}

/* The rows' output accumulators multiplied by their factors. */
template <int NO> __host__ __device__ __forceinline__ void flash_rescale(float (&acc)[NO][4], const float (&corr)[2])
{
#pragma unroll
    for (int j = 0; j < NO; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[j][e] *= corr[e / 2];
}

/* True when an operand suits 16-byte cp.async of whole heads. */
static inline bool flash_aligned16(const ocd_attn_operand &x)
{
    if (!ocd_cuda_aligned16(x.data) || x.stride[OCD_ATTN_ELEM] != 1) return false;
    for (int a = 0; a < OCD_ATTN_ELEM; a++)
        if (x.stride[a] % 8 != 0) return false;
    return true;
}

/* What both fused kernels need of a problem: NULL, or the reason they do not apply. */
static inline const char *flash_rejects(cudnnHandle_t handle, const ocd_attn_core_problem *p)
{
    if (handle->cc_major < 8) return "the fused attention kernel needs sm_80 or newer";
    if (p->dtype != CUDNN_DATA_HALF && p->dtype != CUDNN_DATA_BFLOAT16) return "fused attention: half or bfloat16 data";
    if (p->head_qk != p->head_v || (p->head_qk != 64 && p->head_qk != 128))
        return "fused attention: head sizes 64 or 128, q, k and v alike";
    if (!flash_aligned16(p->q) || !flash_aligned16(p->k) || !flash_aligned16(p->v) || !flash_aligned16(p->o))
        return "fused attention: operands of contiguous heads on 16-byte boundaries";
    if ((int64_t)p->batch * p->beams * p->heads > 65535) return "fused attention: more than 65535 sequences";
    return nullptr;
}

/* A fused forward's grid: a block per BM query rows of each (batch item, beam, head). */
template <int BM> dim3 flash_fwd_grid(const ocd_attn_core_problem &p)
{
    return dim3((unsigned)((p.q_count + BM - 1) / BM), (unsigned)(p.batch * p.beams * p.heads));
}

/* Launches a fused kernel on the handle's stream with smem bytes of dynamic shared memory
   (asked for beyond the default 48 KiB). */
template <typename K>
cudnnStatus_t flash_launch(cudnnHandle_t handle, K kernel, dim3 grid, int threads, size_t smem, const ocd_attn_dev &d)
{
    if (smem > 48 * 1024)
        OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<grid, threads, smem, handle->stream>>>(d);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* A fused entry's run: the call's prologue (forward or backward), then
   run(ocd_type_tag<T>(), std::integral_constant<int, D>(), d) for its data type T (half or
   bfloat16) and head size D (64 or 128). */
template <typename F> cudnnStatus_t flash_entry(cudnnHandle_t handle, const void *call, bool forward, F run)
{
    ocd_attn_dev d;
    OCD_TRY(ocd_cuda_attn_prologue(handle, static_cast<const ocd_attn_core_call *>(call), forward, &d));
    std::integral_constant<int, 64> d64;
    std::integral_constant<int, 128> d128;
    bool wide = d.p.head_qk == 128;
    if (d.p.dtype == CUDNN_DATA_HALF)
        return wide ? run(ocd_type_tag<__half>(), d128, d) : run(ocd_type_tag<__half>(), d64, d);
    return wide ? run(ocd_type_tag<__nv_bfloat16>(), d128, d) : run(ocd_type_tag<__nv_bfloat16>(), d64, d);
}

#endif /* OCD_CUDA_ATTN_CORE_FLASH_CUH */
