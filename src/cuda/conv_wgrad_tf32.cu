/* conv_wgrad_tf32.cu: the filter gradient of float NCHW convolutions on tensor cores as TF32,
   entry cuda:wgrad_nchw_tf32_64x128x16_s3 (problem/conv.h), on the shared mainloop of mma.cuh.

   Main decision: in NCHW both operands of the filter gradient's GEMM are K-major as they lie,
     dw[k][(c, r, s)] = sum over (n, p, q) of dy[n][k][p][q] * x[n][c][p u + r dh - ph][q v + s dw - pw],
   A = dy (rows k, K = (n, p, q) contiguous along (p, q) within an image) and B = x gathered
   (rows (c, r, s), K contiguous along q for unit stride), so the kernel gathers K-major tiles
   straight from the tensors into shared memory and feeds mma.sync m16n8k8 TF32 (operands rounded
   to nearest by cvt.rna, fp32 accumulation), which takes K-major operands only. No column matrix
   is formed (the cuBLAS entries materialize R S times x's size).

   - A tile: 4 floats of one filter's pixels by one 16-byte cp.async where they lie inside one
     image and 16-byte aligned, else element by element (4-byte cp.async; zero-filled past K).
   - B tile: element by element (4-byte cp.async.ca, zero-filled at the padding and past K); for
     a 1x1 filter at unit stride without padding, x's channels lie as dy's filters do and are
     copied as A is.
     Thread t covers K positions kt * 16 + t % 4 + 4 e (e = 0..3) of 4 rows: the (n, p, q) of a K
     position is decoded once and serves the 4 rows, and the 4 threads of a row read 4
     consecutive pixels.
   - CTA tile 64 filters x 128 (c, r, s) columns, 4 warps of 32 x 64, 3 stages (45 KB of shared
     memory, no opt-in); grid (column tiles, filter tiles, splits).
   - Split-K over N P Q (200,704 for ResNet-50's first 3x3 layer at batch 64): each split sums a
     contiguous range of K tiles into its own fp32 slab of the workspace ([split][k][c r s]); a
     second kernel adds the slabs in split order (deterministic) and stores dw with alpha and
     beta (beta == 0: dw is not read), through the filter view's strides (any filter layout).
     Splits are chosen to fill the device about four CTAs deep, at least 16 K tiles each.
   - CONVOLUTION mode: column (c, r, s) gathers the mirrored tap (R - 1 - r, S - 1 - s).

   Constraints (each a reason): compute capability 8.0 or newer; float x, dy and dw; tensor-op
   math allowed (TF32); 2-D, one group; x and dy NCHW-like (each pixel row contiguous, dy's
   pixels of one channel contiguous); N P Q, K C R S and the slabs within 32-bit indices. It
   also serves the few-channel problems (an RGB stem's 3 channels) of float NCHW data, where it
   is faster than the few-channel entry behind it (conv_stem.cu). Every thread's
   code is host-callable but the mma loop and the launches, so that
   tests/emulate/conv_wgrad_tf32.cu runs the kernels on the CPU. */
#include "problem/conv.h"

#include "core/dtype.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/emulated.cuh"
#include "cuda/mma.cuh"
#include "cuda/types.cuh"

#include <stdint.h>
#include <string.h>

typedef ocd_mma_gather::tile wgt_tile;
typedef ocd_mma_gather::sa wgt_sa;
typedef ocd_mma_gather::sb wgt_sb;
enum {
    WGT_BK = ocd_mma_gather::BK,     /* K elements of a tile */
    WGT_STEP = ocd_mma_gather::STEP, /* rows between a thread's rows */
    WGT_SMEM = ocd_mma_gather::SMEM,
    WGT_MIN_KT = 16,                 /* K tiles of a split, at least */
    WGT_RED_THREADS = 256,
};

/* The kernels' parameters: the GEMM (m filters, n = C R S columns, ktot = N P Q), the geometry
   and the tensors' strides (n, c, h, w order; the filter's k, c, r, s). */
struct wgt_params {
    const float *x, *dy;
    float *dw, *part;
    int m, n, ktot, pq;
    int r, s, h, w, u, v, ph, pw, dh, dwl;
    bool flip;
    bool dense; /* 1x1 filter, unit stride, no padding, x's pixels packed: B read as x lies */
    int64_t xs[4], ys[4], fs[4];
    ocd_fastdiv div_pq, div_q, div_rs, div_s, div_n;
    int splits, kt_split; /* K tiles kt_split * z .. of split z */
    int nkt;              /* K tiles in all */
    float alpha, beta;
};

/* Rows r0.. of an operand that lies as [image][row][pixel], the pixels of one image packed (dy's
   filters; x's channels for a 1x1 filter at unit stride without padding): thread tid copies
   chunk tid % 4 (4 K elements) of rows tid / 4 + WGT_STEP i, by one 16-byte cp.async where the
   4 pixels lie in one image and 16-byte aligned, else element by element. */
template <int ROWS> struct wgt_load_rows {
    typedef ocd_mma_smem<float, ROWS, true> L;
    static constexpr int ITERS = ROWS / WGT_STEP;
    const float *src;
    int64_t img;         /* floats from one image to the next */
    int64_t roff[ITERS]; /* the row's offset, -1 past the operand's rows */
    int row0, kq;

    __host__ __device__ __forceinline__ void place(const float *t, int64_t image, int64_t ld, int rows, int r0, int tid)
    {
        src = t, img = image, kq = tid % 4, row0 = tid / 4;
#pragma unroll
        for (int i = 0; i < ITERS; i++) {
            int r = r0 + row0 + i * WGT_STEP;
            roff[i] = r < rows ? (int64_t)r * ld : -1;
        }
    }

    /* The offset of K position kk (< ktot) in row offset 0. */
    __host__ __device__ __forceinline__ int64_t at(const wgt_params &p, int kk) const
    {
        uint32_t pq;
        uint32_t n = ocd_fastdiv_divmod(p.div_pq, (uint32_t)kk, &pq);
        return (int64_t)n * img + pq;
    }

    __host__ __device__ __forceinline__ void load(float *s, int kt, const wgt_params &p) const
    {
        const int kk = kt * WGT_BK + kq * 4;
        uint32_t pq;
        uint32_t n = ocd_fastdiv_divmod(p.div_pq, (uint32_t)kk, &pq);
        const int64_t base = (int64_t)n * img + pq;
        const bool whole = kk + 4 <= p.ktot && (int)pq + 4 <= p.pq;
#pragma unroll
        for (int i = 0; i < ITERS; i++) {
            float *d = s + L::offset(row0 + i * WGT_STEP, kq);
            if (roff[i] >= 0 && whole && ((uintptr_t)(src + base + roff[i]) & 15) == 0) {
                ocd_mma_cp_async<16>(d, src + base + roff[i], true);
                continue;
            }
#pragma unroll
            for (int e = 0; e < 4; e++) {
                bool ok = roff[i] >= 0 && kk + e < p.ktot;
                ocd_mma_cp_async<4>(d + e, ok ? src + at(p, kk + e) + roff[i] : src, ok);
            }
        }
    }
};

/* A: dy's filters m0.. of the CTA. */
struct wgt_load_a : wgt_load_rows<wgt_tile::BM> {
    __host__ __device__ __forceinline__ void setup(const wgt_params &p, int m0, int tid)
    {
        place(p.dy, p.ys[0], p.ys[1], p.m, m0, tid);
    }
};

/* B of a 1x1 filter at unit stride without padding (plan: dense): x's channels n0.. as they lie. */
struct wgt_load_x1 : wgt_load_rows<wgt_tile::BN> {
    __host__ __device__ __forceinline__ void setup(const wgt_params &p, int n0, int tid)
    {
        place(p.x, p.xs[0], p.xs[1], p.n, n0, tid);
    }
};

/* x gathered for columns n0.. of the CTA: thread tid copies K positions tid % 4 + 4 e of
   rows tid / 4 + WGT_STEP i. */
struct wgt_load_b {
    static constexpr int ITERS = wgt_tile::BN / WGT_STEP;
    int64_t coff[ITERS]; /* the column's channel offset in x, -1 past C R S */
    int roff[ITERS], soff[ITERS]; /* its tap's offset from the window's corner, minus the padding */
    int row0, kq;

    __host__ __device__ __forceinline__ void setup(const wgt_params &p, int n0, int tid)
    {
        kq = tid % 4, row0 = tid / 4;
#pragma unroll
        for (int i = 0; i < ITERS; i++) {
            int col = n0 + row0 + i * WGT_STEP;
            coff[i] = -1, roff[i] = soff[i] = 0;
            if (col >= p.n) continue;
            uint32_t rs, s;
            uint32_t c = ocd_fastdiv_divmod(p.div_rs, (uint32_t)col, &rs);
            uint32_t r = ocd_fastdiv_divmod(p.div_s, rs, &s);
            if (p.flip) r = p.r - 1 - r, s = p.s - 1 - s;
            coff[i] = (int64_t)c * p.xs[1];
            roff[i] = (int)r * p.dh - p.ph, soff[i] = (int)s * p.dwl - p.pw;
        }
    }

    __host__ __device__ __forceinline__ void load(float *s, int kt, const wgt_params &p) const
    {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int kk = kt * WGT_BK + kq + 4 * e;
            const bool kin = kk < p.ktot;
            uint32_t pq, qq;
            uint32_t n = ocd_fastdiv_divmod(p.div_pq, (uint32_t)kk, &pq);
            uint32_t pp = ocd_fastdiv_divmod(p.div_q, pq, &qq);
            const int hb = (int)pp * p.u, wb = (int)qq * p.v;
            const float *xn = p.x + (int64_t)n * p.xs[0];
#pragma unroll
            for (int i = 0; i < ITERS; i++) {
                int h = hb + roff[i], w = wb + soff[i];
                bool ok = kin && coff[i] >= 0 && (unsigned)h < (unsigned)p.h && (unsigned)w < (unsigned)p.w;
                ocd_mma_cp_async<4>(s + wgt_sb::offset(row0 + i * WGT_STEP, 0) + kq + 4 * e,
                                    ok ? xn + coff[i] + (int64_t)h * p.xs[2] + (int64_t)w * p.xs[3] : p.x, ok);
            }
        }
    }
};

/* Stores thread `lane`'s accumulators of the warp tile at (wm, wn) of CTA tile (m0, n0) into
   split z's slab; rows and columns past the GEMM skipped. */
__host__ __device__ __forceinline__ void wgt_store_part(const wgt_params &p,
                                                        const float (&acc)[wgt_tile::MI][wgt_tile::NI][4], int m0,
                                                        int n0, int wm, int wn, int lane, int z)
{
    float *slab = p.part + (int64_t)z * p.m * p.n;
#pragma unroll
    for (int i = 0; i < wgt_tile::MI; i++)
#pragma unroll
        for (int j = 0; j < wgt_tile::NI; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int m = m0 + wm + ocd_mma_acc_row(i, e, lane), n = n0 + wn + ocd_mma_acc_col(j, e, lane);
                if (m < p.m && n < p.n) slab[(int64_t)m * p.n + n] = acc[i][j][e];
            }
}

/* Element idx (< m n) of dw: the slabs summed in split order, then alpha and beta. */
__host__ __device__ __forceinline__ void wgt_reduce_one(const wgt_params &p, int idx)
{
    const int64_t mn = (int64_t)p.m * p.n;
    float sum = 0.f;
    for (int z = 0; z < p.splits; z++) sum += p.part[z * mn + idx];
    uint32_t col, rs, s;
    uint32_t k = ocd_fastdiv_divmod(p.div_n, (uint32_t)idx, &col);
    uint32_t c = ocd_fastdiv_divmod(p.div_rs, col, &rs);
    uint32_t r = ocd_fastdiv_divmod(p.div_s, rs, &s);
    float *d = p.dw + (int64_t)k * p.fs[0] + (int64_t)c * p.fs[1] + (int64_t)r * p.fs[2] + (int64_t)s * p.fs[3];
    float v = p.alpha * sum;
    if (p.beta != 0.f) v += p.beta * *d;
    *d = v;
}

/* The products of split blockIdx.z for CTA tile (blockIdx.y, blockIdx.x); LB loads B
   (wgt_load_b, or wgt_load_x1 where the plan says dense). */
template <class LB> __global__ void __launch_bounds__(wgt_tile::THREADS) wgt_kernel(const __grid_constant__ wgt_params p)
{
#ifdef OCD_MMA_ARCH_OK
    __shared__ __align__(16) float smem[WGT_SMEM / sizeof(float)];
    float *sa = smem, *sb = smem + wgt_tile::STAGES * wgt_sa::STAGE;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp % wgt_tile::WARPS_M) * wgt_tile::WTM, wn = (warp / wgt_tile::WARPS_M) * wgt_tile::WTN;
    const int n0 = blockIdx.x * wgt_tile::BN, m0 = blockIdx.y * wgt_tile::BM, z = blockIdx.z;
    wgt_load_a la;
    LB lb;
    la.setup(p, m0, tid);
    lb.setup(p, n0, tid);
    const int kt0 = z * p.kt_split, nkt = min(p.kt_split, p.nkt - kt0);
    float acc[wgt_tile::MI][wgt_tile::NI][4];
    ocd_mma_mainloop<wgt_tile, float, true, true>(acc, sa, sb, la, lb, p, kt0, nkt, wm, wn, lane);
    wgt_store_part(p, acc, m0, n0, wm, wn, lane, z);
#endif
}

__global__ void __launch_bounds__(WGT_RED_THREADS) wgt_reduce_kernel(const __grid_constant__ wgt_params p)
{
    const int64_t idx = (int64_t)blockIdx.x * WGT_RED_THREADS + threadIdx.x;
    if (idx < (int64_t)p.m * p.n) wgt_reduce_one(p, (int)idx);
}

/* ---- the plan ------------------------------------------------------------------------------------ */

struct wgt_plan {
    wgt_params prm;
    size_t ws_bytes;
};
OCD_IMPL_PLAN_FITS(wgt_plan);

static void wgt_strides(const struct ocd_tensor_view *v, int64_t st[4])
{
    for (int d = 0; d < 4; d++) st[d] = v->strides[d];
}

/* The plan's geometry of p, the split count left to the caller; NULL or why it declines. */
static const char *wgt_geometry(const struct ocd_conv_problem *p, wgt_params &m)
{
    const struct ocd_conv_shape *s = &p->s;
    if (p->x.dtype != CUDNN_DATA_FLOAT || p->y.dtype != CUDNN_DATA_FLOAT || p->w.dtype != CUDNN_DATA_FLOAT)
        return OCD_REASON_DTYPE;
    if (s->nsp != 2) return OCD_REASON_RANK;
    if (s->groups != 1) return "grouped convolutions: one group only";
    if (p->x.strides[3] != 1 || p->y.strides[3] != 1 || p->y.strides[2] != s->out[1])
        return "NCHW data only (pixel rows contiguous): NHWC goes to the implicit GEMM";
    const int64_t pq = s->out[0] * s->out[1], ktot = s->n * pq, crs = s->c * s->filt[0] * s->filt[1];
    if (ktot > INT32_MAX - 2 * WGT_BK || crs > INT32_MAX / 2 || s->k * crs > INT32_MAX / 2) return OCD_REASON_SHAPE;
    memset(&m, 0, sizeof m);
    m.m = (int)s->k, m.n = (int)crs, m.ktot = (int)ktot, m.pq = (int)pq;
    m.r = (int)s->filt[0], m.s = (int)s->filt[1], m.h = (int)s->in[0], m.w = (int)s->in[1];
    m.u = s->stride[0], m.v = s->stride[1], m.ph = s->pad[0], m.pw = s->pad[1];
    m.dh = s->dilation[0], m.dwl = s->dilation[1], m.flip = s->flip;
    wgt_strides(&p->x, m.xs), wgt_strides(&p->y, m.ys), wgt_strides(&p->w, m.fs);
    m.div_pq = ocd_fastdiv_make((uint32_t)pq), m.div_q = ocd_fastdiv_make((uint32_t)s->out[1]);
    m.div_rs = ocd_fastdiv_make((uint32_t)(m.r * m.s)), m.div_s = ocd_fastdiv_make((uint32_t)m.s);
    m.div_n = ocd_fastdiv_make((uint32_t)m.n);
    m.nkt = (int)((ktot + WGT_BK - 1) / WGT_BK);
    m.alpha = (float)p->alpha, m.beta = (float)p->beta;
    m.dense = m.r == 1 && m.s == 1 && m.u == 1 && m.v == 1 && m.ph == 0 && m.pw == 0 && m.xs[2] == m.w;
    return NULL;
}

/* Below this many output pixels an image (and from 64 channels) the entry declines (wgt_plan_fn). */
#define WGT_FEW_PIXELS 100

/* CTA tiles of one split. */
static int64_t wgt_tiles(const wgt_params &m)
{
    return (int64_t)((m.m + wgt_tile::BM - 1) / wgt_tile::BM) * ((m.n + wgt_tile::BN - 1) / wgt_tile::BN);
}

static const char *wgt_plan_fn(cudnnHandle_t h, const void *problem, void *plan)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    wgt_plan *pl = (wgt_plan *)plan;
    memset(pl, 0, sizeof *pl);
    if (h->cc_major < 8) return OCD_REASON_ARCH;
    if (const char *why = ocd_conv_tensor_ops_rejects(p)) return why;
    wgt_params &m = pl->prm;
    if (const char *why = wgt_geometry(p, m)) return why;
    /* Few pixels an image, many channels: its 4-byte gathers of x cost more than the cuBLAS
       entry's column matrix, which is small there (H100, ResNet-50's 7x7 layers at batch 64:
       3x3 0.570 against 0.162 ms, 3x3 stride 2 0.556 against 0.210, 1x1 0.169 against 0.092;
       from 14x14 pixels on this kernel is the faster, 0.338 against 0.374 at 3x3 256). */
    if (m.pq < WGT_FEW_PIXELS && p->s.c >= 64)
        return "fewer than 100 output pixels an image with 64 channels or more: the column matrix on cuBLAS is faster";
    if ((m.n + wgt_tile::BN - 1) / wgt_tile::BN > INT32_MAX || (m.m + wgt_tile::BM - 1) / wgt_tile::BM > 65535)
        return OCD_REASON_SHAPE;
    /* about four CTAs a multiprocessor, each split 16 K tiles at least, 65535 at most */
    const int64_t want = OCD_MAX((int64_t)4 * OCD_MAX(h->sm_count, 1) / wgt_tiles(m), (int64_t)1);
    ocd_mma_split_k(m.nkt, want, WGT_MIN_KT, 65535, &m.kt_split, &m.splits);
    pl->ws_bytes = (size_t)m.splits * (size_t)m.m * (size_t)m.n * sizeof(float);
    return NULL;
}

static size_t wgt_workspace(cudnnHandle_t, const void *, const void *plan)
{
    return ((const wgt_plan *)plan)->ws_bytes;
}

/* The plan's parameters bound to the call's data and workspace. */
static wgt_params wgt_bind(const struct ocd_conv_problem *p, const wgt_plan *pl, void *ws)
{
    wgt_params m = pl->prm;
    m.x = (const float *)p->x_data, m.dy = (const float *)p->y_data, m.dw = (float *)p->w_data;
    m.part = (float *)ws;
    return m;
}

/* The API has checked the workspace against wgt_workspace. */
static cudnnStatus_t wgt_run(cudnnHandle_t h, const void *problem, const void *plan, void *ws, size_t)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const wgt_plan *pl = (const wgt_plan *)plan;
    const wgt_params m = wgt_bind(p, pl, ws);
    const dim3 grid((unsigned)((m.n + wgt_tile::BN - 1) / wgt_tile::BN), (unsigned)((m.m + wgt_tile::BM - 1) / wgt_tile::BM),
                    (unsigned)m.splits);
    if (m.dense) wgt_kernel<wgt_load_x1><<<grid, wgt_tile::THREADS, 0, h->stream>>>(m);
    else wgt_kernel<wgt_load_b><<<grid, wgt_tile::THREADS, 0, h->stream>>>(m);
    OCD_CUDA_LAUNCHED();
    const int64_t mn = (int64_t)m.m * m.n;
    wgt_reduce_kernel<<<(unsigned)((mn + WGT_RED_THREADS - 1) / WGT_RED_THREADS), WGT_RED_THREADS, 0, h->stream>>>(m);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

extern "C" const struct ocd_impl_planned ocd_cuda_conv_wgrad_tf32_planned = {wgt_plan_fn, wgt_workspace, wgt_run};
