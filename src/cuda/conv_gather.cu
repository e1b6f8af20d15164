/* conv_gather.cu: convolution without workspace on tensor cores, for tensors of any layout:
   entries cuda:fwd_igemm_gather_64x128x16_s3, cuda:dgrad_igemm_gather_64x128x16_s3 and
   cuda:wgrad_igemm_gather_64x128x16_s3 (problem/conv.h), on the shared mainloop of mma.cuh.

   Why it exists: the algorithms the guide describes as forming no matrix (forward
   IMPLICIT_GEMM, backward data and filter ALGO_0), which programs run with a NULL workspace
   without asking (docs/compatibility.md: Gorgonia), are served only by entries that need none.
   The other tensor-core entries copy an operand into the workspace unless the data is NHWC with
   a KRSC filter read forward (NCHW is transposed, a backward pass's filter packed), so for NCHW
   data, the classic layout, and for every backward pass these algorithms fell to the direct
   kernel of conv_direct.cu, one thread an output element (611 ms for the strided 1x1 backward
   data of ResNet-50's second stage, fp16 at batch 64, on an H100). Measured (an H100, 3x3 128 ->
   128 at 28x28, batch 64): 0.48 ms forward and backward data on fp32 NCHW, 0.80 the fp32 filter
   gradient (the direct kernel: 92-158 ms; the vendor's own IMPLICIT_GEMM and ALGO_0 0.66-0.68);
   the 16-bit filter gradient, one split, 7-10 ms.

   Main decision: every direction is one GEMM a group, C[m][n] = sum over kk of A[m][kk] B[n][kk],
   both operands gathered element by element straight from the tensors through their strides
   into K-major shared-memory tiles (as conv_wgrad_tf32.cu gathers x):
     forward          m = (image, p, q)  n = filter k      kk = (c, r, s)      A = x under tap (r, s), B = w
     backward data    m = (image, h, w)  n = channel c     kk = (k, r, s)      A = dy of the window that
                                                                              puts tap (r, s) on (h, w), B = w
     filter gradient  m = filter k       n = (c, r, s)     kk = (image, p, q)  A = dy, B = x under tap (r, s)
   A channel-and-tap K runs channels fastest where the gathered activation's channels are
   contiguous (NHWC: the four threads that share a row read neighbouring channels), taps fastest
   otherwise (NCHW). The tiles feed mma.sync m16n8k8 TF32 with fp32 accumulation: fp32 data
   rounded to tf32 (tensor-op math must be allowed), fp16 and bf16 data exactly (their values are
   tf32 values), converted to fp32 as they land: 4-byte cp.async gathers fp32 elements, a thread
   loads, converts and stores 16-bit ones. Each element of the result goes through the run-time
   typed store of conv_store.cuh (alpha, beta, the fused forward's epilogue).
   - CTA tile 64 x 128, 4 warps of 32 x 64, K tiles of 16, 3 stages (45 KB of shared memory, no
     opt-in); grid (M tiles, N tiles, splits x groups); a thread gathers K positions tid % 4 + 4 e
     of rows tid / 4 + 32 i, decoding each K position once for its rows and each row once.
   - The filter gradient's K (N P Q) is long and its tiles few, so it is split (about two CTAs a
     multiprocessor, 16 K tiles a split at least), the splits of a tile adding up in split order,
     deterministic: split z waits on the tile's counter in the handle's scratch (core:
     cuda/scratch.cuh) until split z - 1 has stored, the splits being the grid's slowest
     dimension so that a waiting CTA's predecessors have all started. An fp32 dw takes the sums
     itself, the first split through the store, the later ones added in; a 16-bit dw would take a
     rounding a split, so the splits keep fp32 running sums in the scratch after the counters
     and the last one stores the total (the 3x3 128-channel layer at batch 64 on an H100: 1.06-1.27
     ms, against 7.1-10.6 in one split of 18 CTAs).

   Constraints (each a reason): compute capability 8.0 or newer; fp32 (tensor-op math allowed),
   fp16 or bf16 data, x, w and y of one type; 2-D; no vectorized layouts; every GEMM extent below
   2^31. Every thread's code is host-callable but the mma loop and the launch, so that
   tests/emulate/conv_gather.cu runs the kernel on the CPU. */
#include "problem/conv.h"

#include "core/impl.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/conv_store.cuh"
#include "cuda/emulated.cuh"
#include "cuda/mma.cuh"
#include "cuda/scratch.cuh"
#include "cuda/types.cuh"

#include <stdint.h>
#include <string.h>

typedef ocd_mma_gather::tile gat_tile;
typedef ocd_mma_gather::sa gat_sa;
typedef ocd_mma_gather::sb gat_sb;
enum {
    GAT_BK = ocd_mma_gather::BK,     /* K elements of a tile */
    GAT_STEP = ocd_mma_gather::STEP, /* rows between a thread's rows */
    GAT_SMEM = ocd_mma_gather::SMEM,
    GAT_MIN_KT = 16,                 /* K tiles of a split, at least */
    GAT_MAX_SPLITS = 64,
};

/* The kernel's parameters: the GEMM of one group, the geometry, the tensors' strides (x and y:
   n, c, h, w; the filter: k, c, r, s) and the destination's store. */
struct gat_params {
    const void *x, *w, *y; /* the operands as read (the direction's destination is st.dst) */
    ocd_cuda_conv_store st;
    int *sem;              /* split filter gradient: a counter an output tile (tile y, x, group) */
    float *sums;           /* split 16-bit filter gradient: fp32 running sums at dw's offsets; else NULL */
    int m, n, kdim;        /* the GEMM of one group */
    int nkt, kt_split, splits, groups;
    int cg, kg;            /* channels and filters a group */
    int hin, win, p, q, r, s, u, v, ph, pw, dh, dwl; /* input and output extents, filter, stride, padding, dilation */
    bool flip;
    bool cfast;            /* a channel-and-tap K (or N) runs channels fastest */
    int64_t xs[4], ys[4], fs[4];
    ocd_fastdiv div_q, div_pq, div_w, div_hw, div_rs, div_s, div_ch, div_u, div_v;
};

/* ---- index decoding -------------------------------------------------------------------------------- */

/* A channel-and-tap index (the forward and backward-data K, the filter gradient's N) as channel
   `ch` of the group and tap (r, s) of the GEMM's order. */
__host__ __device__ __forceinline__ void gat_chan_tap(const gat_params &p, uint32_t i, int &ch, int &r, int &s)
{
    uint32_t rs, ss;
    if (p.cfast) {
        uint32_t c;
        rs = ocd_fastdiv_divmod(p.div_ch, i, &c);
        ch = (int)c;
    } else {
        ch = (int)ocd_fastdiv_divmod(p.div_rs, i, &rs);
    }
    r = (int)ocd_fastdiv_divmod(p.div_s, rs, &ss);
    s = (int)ss;
}

/* An output-pixel index (the forward M, the filter gradient's K) as (image, p, q). */
__host__ __device__ __forceinline__ void gat_out_pixel(const gat_params &p, uint32_t i, int &img, int &pp, int &qq)
{
    uint32_t pq, q;
    img = (int)ocd_fastdiv_divmod(p.div_pq, i, &pq);
    pp = (int)ocd_fastdiv_divmod(p.div_q, pq, &q);
    qq = (int)q;
}

/* An input-pixel index (the backward-data M) as (image, h, w). */
__host__ __device__ __forceinline__ void gat_in_pixel(const gat_params &p, uint32_t i, int &img, int &h, int &w)
{
    uint32_t hw, ww;
    img = (int)ocd_fastdiv_divmod(p.div_hw, i, &hw);
    h = (int)ocd_fastdiv_divmod(p.div_w, hw, &ww);
    w = (int)ww;
}

/* The filter's element offset at tap (r, s) of the GEMM: mirrored in CONVOLUTION mode. */
__host__ __device__ __forceinline__ int64_t gat_filter_tap(const gat_params &p, int r, int s)
{
    if (p.flip) r = p.r - 1 - r, s = p.s - 1 - s;
    return (int64_t)r * p.fs[2] + (int64_t)s * p.fs[3];
}

/* One element into its shared-memory slot, zero where !ok: fp32 by 4-byte cp.async, 16-bit types
   loaded and converted by the thread. */
template <typename T> __host__ __device__ __forceinline__ void gat_put(float *slot, const T *src, bool ok)
{
    if constexpr (sizeof(T) == 4) ocd_mma_cp_async<4>(slot, src, ok);
    else *slot = ok ? (float)ocd_cuda_load<T>(src) : 0.f;
}

/* ---- the loaders: thread tid gathers K positions kq + 4 e (e < 4) of rows row0 + GAT_STEP i --------- */

/* Per row of a loader: the offset of the row's part of an element (-1 past the operand's rows)
   and, for a gathered activation, the row's part of its coordinates. */
template <int ROWS> struct gat_rows {
    static constexpr int ITERS = ROWS / GAT_STEP;
    int64_t off[ITERS];
    int hb[ITERS], wb[ITERS];
    int row0, kq;
};

/* The A operand (rows M), or B (rows N), of direction DIR. */
template <int DIR, bool IS_A, typename T> struct gat_load {
    static constexpr int ROWS = IS_A ? gat_tile::BM : gat_tile::BN;
    typedef ocd_mma_smem<float, ROWS, true> L;
    gat_rows<ROWS> rw;
    const T *src; /* the operand at the CTA's group */

    /* What an operand is: the forward's A and the filter gradient's B gather x under a tap (the
       coordinates of the row's part plus the K position's part); the backward data's A gathers
       dy under a tap (the window whose tap lands on the row's pixel); the rest are offsets. */
    static constexpr bool X_TAP = (DIR == OCD_CONV_FWD && IS_A) || (DIR == OCD_CONV_BWD_FILTER && !IS_A);
    static constexpr bool DY_TAP = DIR == OCD_CONV_BWD_DATA && IS_A;

    __host__ __device__ __forceinline__ void setup(const gat_params &p, int r0, int g, int tid)
    {
        rw.kq = tid % 4, rw.row0 = tid / 4;
        const bool reads_x = X_TAP, reads_w = !IS_A && DIR != OCD_CONV_BWD_FILTER;
        src = reads_x ? (const T *)p.x + (int64_t)g * p.cg * p.xs[1]
              : reads_w ? (const T *)p.w + (int64_t)g * p.kg * p.fs[0]
                        : (const T *)p.y + (int64_t)g * p.kg * p.ys[1];
        const int rows = IS_A ? p.m : p.n;
#pragma unroll
        for (int i = 0; i < rw.ITERS; i++) {
            const int row = r0 + rw.row0 + i * GAT_STEP;
            rw.off[i] = -1, rw.hb[i] = rw.wb[i] = 0;
            if (row >= rows) continue;
            if (DIR == OCD_CONV_FWD && IS_A) { /* output pixel: its window's corner */
                int img, pp, qq;
                gat_out_pixel(p, (uint32_t)row, img, pp, qq);
                rw.off[i] = (int64_t)img * p.xs[0], rw.hb[i] = pp * p.u - p.ph, rw.wb[i] = qq * p.v - p.pw;
            } else if (DIR == OCD_CONV_BWD_FILTER && !IS_A) { /* (c, r, s): the tap's offset */
                int ch, r, s;
                gat_chan_tap(p, (uint32_t)row, ch, r, s);
                if (p.flip) r = p.r - 1 - r, s = p.s - 1 - s; /* dw's (r, s) is x's mirrored tap */
                rw.off[i] = (int64_t)ch * p.xs[1], rw.hb[i] = r * p.dh - p.ph, rw.wb[i] = s * p.dwl - p.pw;
            } else if (DY_TAP) { /* dx pixel (image, h, w), padded */
                int img, h, w;
                gat_in_pixel(p, (uint32_t)row, img, h, w);
                rw.off[i] = (int64_t)img * p.ys[0], rw.hb[i] = h + p.ph, rw.wb[i] = w + p.pw;
            } else if (DIR == OCD_CONV_FWD) { /* B: filter k */
                rw.off[i] = (int64_t)row * p.fs[0];
            } else if (DIR == OCD_CONV_BWD_DATA) { /* B: channel c of the filter */
                rw.off[i] = (int64_t)row * p.fs[1];
            } else { /* the filter gradient's A: filter k of dy */
                rw.off[i] = (int64_t)row * p.ys[1];
            }
        }
    }

    /* K position kk's part: an offset, and for the gathered activations its coordinates'. */
    __host__ __device__ __forceinline__ int64_t kpart(const gat_params &p, uint32_t kk, int &dr, int &ds) const
    {
        dr = ds = 0;
        if (DIR == OCD_CONV_BWD_FILTER) { /* (image, p, q) */
            int img, pp, qq;
            gat_out_pixel(p, kk, img, pp, qq);
            if (IS_A) return (int64_t)img * p.ys[0] + (int64_t)pp * p.ys[2] + (int64_t)qq * p.ys[3];
            dr = pp * p.u, ds = qq * p.v;
            return (int64_t)img * p.xs[0];
        }
        int ch, r, s; /* (c, r, s) forward, (k, r, s) backward data */
        gat_chan_tap(p, kk, ch, r, s);
        if (IS_A) {
            dr = r * p.dh, ds = s * p.dwl;
            return (int64_t)ch * (DIR == OCD_CONV_FWD ? p.xs[1] : p.ys[1]);
        }
        return (int64_t)ch * (DIR == OCD_CONV_FWD ? p.fs[1] : p.fs[0]) + gat_filter_tap(p, r, s);
    }

    __host__ __device__ __forceinline__ void load(float *stage, int kt, const gat_params &p) const
    {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int kk = kt * GAT_BK + rw.kq + 4 * e;
            const bool kin = kk < p.kdim;
            int dr, ds;
            const int64_t kb = kin ? kpart(p, (uint32_t)kk, dr, ds) : 0;
#pragma unroll
            for (int i = 0; i < rw.ITERS; i++) {
                bool ok = kin && rw.off[i] >= 0;
                int64_t at = rw.off[i] + kb;
                if (X_TAP) {
                    const int h = rw.hb[i] + dr, w = rw.wb[i] + ds;
                    ok = ok && (unsigned)h < (unsigned)p.hin && (unsigned)w < (unsigned)p.win;
                    at += (int64_t)h * p.xs[2] + (int64_t)w * p.xs[3];
                } else if (DY_TAP) {
                    /* the window (op, oq) whose tap lands on the pixel: h + ph = op u + dr */
                    const int th = rw.hb[i] - dr, tw = rw.wb[i] - ds;
                    uint32_t rh = 1, rwd = 1, op = 0, oq = 0;
                    if (th >= 0 && tw >= 0) {
                        op = ocd_fastdiv_divmod(p.div_u, (uint32_t)th, &rh);
                        oq = ocd_fastdiv_divmod(p.div_v, (uint32_t)tw, &rwd);
                    }
                    ok = ok && rh == 0 && rwd == 0 && op < (uint32_t)p.p && oq < (uint32_t)p.q;
                    at += (int64_t)op * p.ys[2] + (int64_t)oq * p.ys[3];
                }
                gat_put<T>(stage + L::offset(rw.row0 + i * GAT_STEP, 0) + rw.kq + 4 * e, src + (ok ? at : 0), ok);
            }
        }
    }
};

/* ---- the store ---------------------------------------------------------------------------------- */

/* The destination offset of GEMM row m (-1 past M) and column n (-1 past N) of group g, and the
   output channel of column n (the fused forward's bias and scale). */
__host__ __device__ __forceinline__ int64_t gat_dst_row(const gat_params &p, int dir, int m, int g)
{
    if (m >= p.m) return -1;
    if (dir == OCD_CONV_FWD) {
        int img, pp, qq;
        gat_out_pixel(p, (uint32_t)m, img, pp, qq);
        return (int64_t)img * p.ys[0] + (int64_t)pp * p.ys[2] + (int64_t)qq * p.ys[3];
    }
    if (dir == OCD_CONV_BWD_DATA) {
        int img, h, w;
        gat_in_pixel(p, (uint32_t)m, img, h, w);
        return (int64_t)img * p.xs[0] + (int64_t)h * p.xs[2] + (int64_t)w * p.xs[3];
    }
    return (int64_t)(g * p.kg + m) * p.fs[0];
}

__host__ __device__ __forceinline__ int64_t gat_dst_col(const gat_params &p, int dir, int n, int g)
{
    if (n >= p.n) return -1;
    if (dir == OCD_CONV_FWD) return (int64_t)(g * p.kg + n) * p.ys[1];
    if (dir == OCD_CONV_BWD_DATA) return (int64_t)(g * p.cg + n) * p.xs[1];
    int ch, r, s;
    gat_chan_tap(p, (uint32_t)n, ch, r, s);
    return (int64_t)ch * p.fs[1] + (int64_t)r * p.fs[2] + (int64_t)s * p.fs[3];
}

/* An element's earlier splits' sum, read past the L1 (another CTA of this multiprocessor may have
   left its earlier value there), and its new one stored past it. */
__host__ __device__ __forceinline__ float gat_load_cg(const float *d)
{
#ifdef __CUDA_ARCH__
    return __ldcg(d);
#else
    return *d;
#endif
}
__host__ __device__ __forceinline__ void gat_store_cg(float *d, float v)
{
#ifdef __CUDA_ARCH__
    __stcg(d, v);
#else
    *d = v;
#endif
}

/* Stores thread `lane`'s accumulators of the warp tile at (wm, wn) of CTA tile (m0, n0), group
   g, split z: unsplit, or the first split of an fp32 dw, through the call's store, a later one
   added in; a split 16-bit dw's into the running sums, the last split's total through the store. */
__host__ __device__ __forceinline__ void gat_store(const gat_params &p, int dir,
                                                   const float (&acc)[gat_tile::MI][gat_tile::NI][4], int m0, int n0,
                                                   int g, int z, int wm, int wn, int lane)
{
    int64_t row[gat_tile::MI][2], col[gat_tile::NI][2];
#pragma unroll
    for (int i = 0; i < gat_tile::MI; i++)
#pragma unroll
        for (int hr = 0; hr < 2; hr++) row[i][hr] = gat_dst_row(p, dir, m0 + wm + ocd_mma_acc_row(i, 2 * hr, lane), g);
#pragma unroll
    for (int j = 0; j < gat_tile::NI; j++)
#pragma unroll
        for (int c = 0; c < 2; c++) col[j][c] = gat_dst_col(p, dir, n0 + wn + ocd_mma_acc_col(j, c, lane), g);
#pragma unroll
    for (int i = 0; i < gat_tile::MI; i++)
#pragma unroll
        for (int j = 0; j < gat_tile::NI; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int64_t r = row[i][e >> 1], c = col[j][e & 1];
                if (r < 0 || c < 0) continue;
                if (p.sums != NULL) {
                    float *sum = p.sums + r + c;
                    const float v = z > 0 ? gat_load_cg(sum) + acc[i][j][e] : acc[i][j][e];
                    if (z + 1 < p.splits) gat_store_cg(sum, v);
                    else ocd_cuda_conv_finish_call<float>(p.st, r + c, 0, v);
                    continue;
                }
                if (z > 0) {
                    float *d = (float *)p.st.dst + r + c;
                    gat_store_cg(d, gat_load_cg(d) + (float)p.st.alpha * acc[i][j][e]);
                    continue;
                }
                const int channel = dir == OCD_CONV_FWD ? g * p.kg + n0 + wn + ocd_mma_acc_col(j, e, lane) : 0;
                ocd_cuda_conv_finish_call<float>(p.st, r + c, channel, acc[i][j][e]);
            }
}

/* ---- the kernel --------------------------------------------------------------------------------- */

/* CTA tile (blockIdx.x, blockIdx.y) of split blockIdx.z / groups, group blockIdx.z % groups. */
template <int DIR, typename T> __global__ void __launch_bounds__(gat_tile::THREADS) gat_kernel(const __grid_constant__ gat_params p)
{
#ifdef OCD_MMA_ARCH_OK
    __shared__ __align__(16) float smem[GAT_SMEM / sizeof(float)];
    float *sa = smem, *sb = smem + gat_tile::STAGES * gat_sa::STAGE;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp % gat_tile::WARPS_M) * gat_tile::WTM, wn = (warp / gat_tile::WARPS_M) * gat_tile::WTN;
    const int m0 = blockIdx.x * gat_tile::BM, n0 = blockIdx.y * gat_tile::BN;
    const int g = blockIdx.z % p.groups, z = blockIdx.z / p.groups;
    gat_load<DIR, true, T> la;
    gat_load<DIR, false, T> lb;
    la.setup(p, m0, g, tid);
    lb.setup(p, n0, g, tid);
    const int kt0 = z * p.kt_split, nkt = min(p.kt_split, p.nkt - kt0);
    float acc[gat_tile::MI][gat_tile::NI][4];
    ocd_mma_mainloop<gat_tile, float, true, true>(acc, sa, sb, la, lb, p, kt0, nkt, wm, wn, lane);
    int *sem = NULL;
    if (p.splits > 1) { /* wait for split z - 1 of this tile to have stored */
        sem = p.sem + ((int64_t)g * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
        if (tid == 0) {
            while (*(volatile int *)sem != z) __nanosleep(100);
            __threadfence();
        }
        __syncthreads();
    }
    gat_store(p, DIR, acc, m0, n0, g, z, wm, wn, lane);
    if (sem != NULL) {
        __threadfence(); /* every thread's stores before the counter moves */
        __syncthreads();
        if (tid == 0) atomicExch(sem, z + 1);
    }
#endif
}

/* ---- the plan ------------------------------------------------------------------------------------ */

struct gat_plan {
    gat_params prm;
    cudnnDataType_t dtype;
    unsigned grid_m, grid_n;
    int64_t sums; /* split 16-bit filter gradient: dw's elements, the running sums' count; else 0 */
};
OCD_IMPL_PLAN_FITS(gat_plan);

/* A 4-D view of scalar elements (no INT8x4-style vectors). */
static bool gat_scalar_4d(const struct ocd_tensor_view *v)
{
    return v->vect == 1 && v->rank == 4;
}

/* The plan of p on handle h's device; NULL or why not. */
static const char *gat_make(cudnnHandle_t h, const struct ocd_conv_problem *p, gat_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    if (h->cc_major < 8) return OCD_REASON_ARCH;
    const cudnnDataType_t dt = p->x.dtype;
    if (dt != CUDNN_DATA_FLOAT && dt != CUDNN_DATA_HALF && dt != CUDNN_DATA_BFLOAT16) return OCD_REASON_DTYPE;
    if (p->w.dtype != dt || p->y.dtype != dt) return "x, w and y of one type only";
    if (const char *why = ocd_conv_tensor_ops_rejects(p)) return why;
    const struct ocd_conv_shape *s = &p->s;
    if (s->nsp != 2) return OCD_REASON_RANK;
    if (!gat_scalar_4d(&p->x) || !gat_scalar_4d(&p->y) || !gat_scalar_4d(&p->w))
        return "vectorized layouts run on the direct kernel";
    gat_params &m = pl->prm;
    const int64_t g = s->groups, cg = s->c / g, kg = s->k / g, rs = s->filt[0] * s->filt[1];
    const int64_t pq = s->out[0] * s->out[1], hw = s->in[0] * s->in[1];
    int64_t gm, gn, gk;
    if (p->dir == OCD_CONV_FWD) gm = s->n * pq, gn = kg, gk = cg * rs;
    else if (p->dir == OCD_CONV_BWD_DATA) gm = s->n * hw, gn = cg, gk = kg * rs;
    else gm = kg, gn = cg * rs, gk = s->n * pq;
    const int64_t lim = INT32_MAX - 2 * GAT_BK;
    if (gm > lim || gn > lim || gk > lim || s->n * hw > lim || s->n * pq > lim) return OCD_REASON_SHAPE;
    const int64_t tm = (gm + gat_tile::BM - 1) / gat_tile::BM, tn = (gn + gat_tile::BN - 1) / gat_tile::BN;
    if (tn > 65535 || g > 65535) return OCD_REASON_SHAPE;
    m.m = (int)gm, m.n = (int)gn, m.kdim = (int)gk;
    m.groups = (int)g, m.cg = (int)cg, m.kg = (int)kg;
    m.hin = (int)s->in[0], m.win = (int)s->in[1], m.p = (int)s->out[0], m.q = (int)s->out[1];
    m.r = (int)s->filt[0], m.s = (int)s->filt[1], m.u = s->stride[0], m.v = s->stride[1];
    m.ph = s->pad[0], m.pw = s->pad[1], m.dh = s->dilation[0], m.dwl = s->dilation[1], m.flip = s->flip;
    for (int d = 0; d < 4; d++) m.xs[d] = p->x.strides[d], m.ys[d] = p->y.strides[d], m.fs[d] = p->w.strides[d];
    /* channels fastest where the activation gathered along them has them contiguous */
    m.cfast = p->dir == OCD_CONV_BWD_DATA ? m.ys[1] == 1 : m.xs[1] == 1;
    m.div_q = ocd_fastdiv_make((uint32_t)m.q), m.div_pq = ocd_fastdiv_make((uint32_t)pq);
    m.div_w = ocd_fastdiv_make((uint32_t)m.win), m.div_hw = ocd_fastdiv_make((uint32_t)hw);
    m.div_rs = ocd_fastdiv_make((uint32_t)rs), m.div_s = ocd_fastdiv_make((uint32_t)m.s);
    m.div_ch = ocd_fastdiv_make((uint32_t)(p->dir == OCD_CONV_BWD_DATA ? kg : cg));
    m.div_u = ocd_fastdiv_make((uint32_t)m.u), m.div_v = ocd_fastdiv_make((uint32_t)m.v);
    m.nkt = (int)((gk + GAT_BK - 1) / GAT_BK);
    m.kt_split = m.nkt, m.splits = 1;
    /* the filter gradient: about two CTAs a multiprocessor (file comment), a 16-bit dw's running
       sums where it has fewer than 2^31 elements */
    const int64_t dw_elems = s->k * cg * rs;
    const bool sums = dt != CUDNN_DATA_FLOAT && dw_elems < INT32_MAX;
    if (p->dir == OCD_CONV_BWD_FILTER && (dt == CUDNN_DATA_FLOAT || sums)) {
        const int64_t tiles = tm * tn * g;
        const int64_t want = OCD_MAX((int64_t)2 * OCD_MAX(h->sm_count, 1) / tiles, (int64_t)1);
        ocd_mma_split_k(m.nkt, want, GAT_MIN_KT, GAT_MAX_SPLITS, &m.kt_split, &m.splits);
        if (m.splits > 1 && dt != CUDNN_DATA_FLOAT) pl->sums = dw_elems;
    }
    pl->dtype = dt;
    pl->grid_m = (unsigned)tm, pl->grid_n = (unsigned)tn;
    return NULL;
}

static const char *gat_plan_fn(cudnnHandle_t h, const void *problem, void *plan)
{
    return gat_make(h, (const struct ocd_conv_problem *)problem, (gat_plan *)plan);
}

/* The plan's parameters bound to the call's tensors and destination store (the counters aside). */
static gat_params gat_bind(const struct ocd_conv_problem *p, const gat_plan *pl)
{
    gat_params m = pl->prm;
    m.x = p->x_data, m.w = p->w_data, m.y = p->y_data;
    m.st = ocd_cuda_conv_store_of(p);
    return m;
}

template <int DIR, typename T> static void gat_launch(const gat_plan *pl, const gat_params &m, cudaStream_t st)
{
    const dim3 grid(pl->grid_m, pl->grid_n, (unsigned)(m.splits * m.groups));
    gat_kernel<DIR, T><<<grid, gat_tile::THREADS, 0, st>>>(m);
}

template <typename T> static void gat_launch_dir(int dir, const gat_plan *pl, const gat_params &m, cudaStream_t st)
{
    if (dir == OCD_CONV_FWD) gat_launch<OCD_CONV_FWD, T>(pl, m, st);
    else if (dir == OCD_CONV_BWD_DATA) gat_launch<OCD_CONV_BWD_DATA, T>(pl, m, st);
    else gat_launch<OCD_CONV_BWD_FILTER, T>(pl, m, st);
}

/* A split's scratch (cuda/scratch.cuh): the tiles' counters, zeroed before the launch, then
   the running sums of a 16-bit dw (written by each tile's first split before any read). */
static size_t gat_counter_bytes(const gat_plan *pl)
{
    const size_t bytes = (size_t)pl->grid_m * pl->grid_n * pl->prm.groups * sizeof(int);
    return (bytes + 15) / 16 * 16;
}
static size_t gat_scratch_bytes(const gat_plan *pl)
{
    return gat_counter_bytes(pl) + (size_t)pl->sums * sizeof(float);
}
static void gat_bind_scratch(const gat_plan *pl, void *scratch, gat_params *m)
{
    m->sem = (int *)scratch;
    m->sums = pl->sums ? (float *)((char *)scratch + gat_counter_bytes(pl)) : NULL;
}

static cudnnStatus_t gat_run(cudnnHandle_t h, const void *problem, const void *plan, void *, size_t)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const gat_plan *pl = (const gat_plan *)plan;
    gat_params m = gat_bind(p, pl);
    if (m.splits > 1) {
        void *scratch;
        OCD_TRY(ocd_cuda_scratch_acquire(h, gat_scratch_bytes(pl), &scratch));
        OCD_CUDA_TRY(cudaMemsetAsync(scratch, 0, gat_counter_bytes(pl), h->stream));
        gat_bind_scratch(pl, scratch, &m);
    }
    switch (pl->dtype) {
    case CUDNN_DATA_HALF: gat_launch_dir<__half>(p->dir, pl, m, h->stream); break;
    case CUDNN_DATA_BFLOAT16: gat_launch_dir<__nv_bfloat16>(p->dir, pl, m, h->stream); break;
    default: gat_launch_dir<float>(p->dir, pl, m, h->stream); break;
    }
    OCD_CUDA_LAUNCHED();
    return m.splits > 1 ? ocd_cuda_scratch_release(h) : CUDNN_STATUS_SUCCESS;
}

extern "C" const struct ocd_impl_planned ocd_cuda_conv_gather_planned = {gat_plan_fn, NULL, gat_run};
