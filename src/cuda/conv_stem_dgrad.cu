/* conv_stem_dgrad.cu: the data gradient of a convolution with few input channels (an RGB
   network's first layer: C = 3, 7x7, stride 2) on tensor cores, entry cuda:dgrad_stem_tc_128x8
   (problem/conv.h).

   Main decision: dx has C < 8 channels, so the GEMM's N is one 8-wide mma tile, and its K runs
   over the K filters of each tap that reaches a dx pixel. With the stride, a dx pixel whose
   coordinates are (a, b) modulo the stride receives products from one subset of taps only (its
   stride phase: taps r with (a + pad - r dilation) divisible by the stride), each from dy pixel
   i + (a + pad - r dilation) / stride at phase-grid position i. So the kernel reads no im2col
   matrix at all: a CTA copies into shared memory the dy patch (all K channels of each pixel, a
   row of K + 8 elements: conflict-free ldmatrix) that the 8 x 16 phase-grid positions of its
   tile reach in every phase, and each warp's A fragments are ldmatrix reads of that patch at
   the tap's shift; B is the tap's filter slice, [c][k] in shared memory (C rows: the lanes of
   channels C..7 hold zero words), loaded once a CTA for every tap (mirrored for CONVOLUTION mode)
   and read as 32-bit fragment words.

   - A CTA owns phase-grid rows i0..i0+7 and columns j0..j0+15 of one image, i.e. those positions
     in each of the stride x stride phases; warp w multiplies row i0 + w (M = 16 pixels by N = 8
     channels, fp32 accumulators) over each phase's taps and K, then stores that phase's pixels
     (alpha, beta); phases without taps store beta x dx.
   - Float data run on TF32 (mma.sync m16n8k8, fp32 accumulation) where the math type allows it,
     through the same code: an mma k-step is 32 bytes of K in both (16 elements or 8), so the
     ldmatrix addresses and fragment words are those of the 16-bit types; K is padded to a
     k-step and rows by 16 bytes. Every element is rounded to tf32 (round to nearest) as it is
     copied into shared memory, so float patches go element by element, never by cp.async.
   - The patch is copied by cp.async in 16-byte chunks where dy's 16-bit channels are contiguous
     and aligned (NHWC), else element by element, pixel-major for contiguous channels and
     channel-major otherwise (NCHW), so that the reads stay coalesced. The grid holds as many
     CTAs as are resident at once, each looping over tiles.
   - No workspace: it serves ALGO_0 and ALGO_1.

   Constraints (each a reason): compute capability 8.0 or newer; half, bfloat16 or float data, all
   three tensors one type; tensor-op math allowed (TF32 for float); 2-D, no groups; C < 8; strides of at most 4; shared
   memory (the filter's taps and the patch) within 96 KB. tests/emulate/conv_stem_dgrad.cu runs
   every thread of it on the CPU. */
#include "cuda/conv_stem.cuh"

#include "cuda/check.cuh"
#include "cuda/mma.cuh"
#include "cuda/resident.cuh"
#include "cuda/types.cuh"

#include <stdint.h>
#include <string.h>

enum {
    DSTEM_TH = 8,  /* phase-grid rows of a tile: one a warp */
    DSTEM_TW = 16, /* phase-grid columns: the warp's M */
    DSTEM_THREADS = 256,
    DSTEM_MAX_STRIDE = 4,
    DSTEM_MAX_TAPS = 16, /* filter rows (columns) at most */
    DSTEM_SMEM_MAX = 96 * 1024,
};

/* Everything the kernel reads, by value; 32-bit offsets (types.cuh, "Index arithmetic"). */
struct dstem_params {
    const void *dy, *w;
    void *dx;
    int c, k, r, s;               /* channels, filters, filter rows and columns */
    int h, w_in, p, q;            /* dx and dy rows and columns */
    int uh, uw;                   /* stride */
    int xs[4], fs[4], ys[4];      /* strides of dx (n, c, h, w), the filter (k, c, r, s), dy (n, k, p, q) */
    int kp, ld;                   /* K padded to a k-step (32 bytes); elements a patch pixel and a filter row
                                     take (kp + 16 bytes) */
    int gh, gw;                   /* phase-grid rows and columns: ceil(h / uh), ceil(w / uw) */
    int omin_h, omin_w;           /* smallest dy offset of a tap, each dim */
    int prow, pcol, npix;         /* patch rows, columns, pixels */
    /* taps per dim, grouped by phase: phase a's are tap_h[first_h[a] .. first_h[a + 1]), as
       (filter row) | (patch row shift) << 8 */
    int tap_h[DSTEM_MAX_TAPS], first_h[DSTEM_MAX_STRIDE + 1];
    int tap_w[DSTEM_MAX_TAPS], first_w[DSTEM_MAX_STRIDE + 1];
    ocd_fastdiv div_gw, div_gh, div_pcol, div_chunks;
    int tiles_w, tiles;
    int vec;                      /* the patch by 16-byte chunks (run time: 16-bit dy NHWC and aligned) */
    int kmajor;                   /* dy's channels contiguous: the element copy goes pixel-major */
    float alpha, beta;
    int off_patch, smem;          /* shared memory: the filter at 0, then the patch (bytes) */
};

struct dstem_tile {
    int n, i0, j0;
};

__host__ __device__ __forceinline__ dstem_tile dstem_tile_of(const dstem_params &p, int t)
{
    uint32_t tw;
    const uint32_t rest = ocd_fastdiv_divmod(p.div_gw, (uint32_t)t, &tw);
    uint32_t th;
    const uint32_t n = ocd_fastdiv_divmod(p.div_gh, rest, &th);
    dstem_tile r = {(int)n, (int)th * DSTEM_TH, (int)tw * DSTEM_TW};
    return r;
}

/* ---- the phases of a CTA, per thread (host-callable for the emulation) ---------------------------- */

/* Every tap's filter slice as B, [r][s][c < C][k] in rows of p.ld, zeros past K, mirrored for
   CONVOLUTION mode (the plan folds the mirror into fs and the base offset: see dstem_bind). */
template <typename T>
__host__ __device__ __forceinline__ void dstem_load_filter(const dstem_params &p, typename ocd_stem_elem<T>::raw *sb,
                                                           int tid)
{
    typedef ocd_stem_elem<T> E;
    const typename E::raw *w = (const typename E::raw *)p.w;
    const int rows = p.r * p.s * p.c;
    for (int row = tid / 32; row < rows; row += DSTEM_THREADS / 32) {
        const int tap = row / p.c, c = row % p.c, r = tap / p.s, s = tap % p.s;
        for (int k = tid % 32; k < p.kp; k += 32)
            sb[row * p.ld + k] =
                k < p.k ? E::operand(w[k * p.fs[0] + c * p.fs[1] + r * p.fs[2] + s * p.fs[3]]) : (typename E::raw)0;
    }
}

/* The dy patch of tile t: pixel (row, column) of the patch at element (row pcol + column) ld,
   its K channels contiguous, zeros outside dy and past K. */
template <typename T>
__host__ __device__ __forceinline__ void dstem_load_patch(const dstem_params &p, typename ocd_stem_elem<T>::raw *patch,
                                                          const dstem_tile &t, int tid)
{
    typedef ocd_stem_elem<T> E;
    const typename E::raw *dy = (const typename E::raw *)p.dy + t.n * p.ys[0];
    const int y0 = t.i0 + p.omin_h, x0 = t.j0 + p.omin_w;
    if (p.vec) { /* 16-bit, K % 8 == 0: kp / 8 chunks a pixel, the last of them past K zero-filled */
        const int chunks = p.npix * (p.kp / 8);
        for (int i = tid; i < chunks; i += DSTEM_THREADS) {
            uint32_t ch, col;
            const uint32_t pix = ocd_fastdiv_divmod(p.div_chunks, (uint32_t)i, &ch);
            const int y = y0 + (int)ocd_fastdiv_divmod(p.div_pcol, pix, &col), x = x0 + (int)col;
            const bool in = (unsigned)y < (unsigned)p.p && (unsigned)x < (unsigned)p.q && (int)ch * 8 < p.k;
            ocd_mma_cp_async<16>(patch + (int)pix * p.ld + (int)ch * 8,
                                 in ? dy + (int)ch * 8 + y * p.ys[2] + x * p.ys[3] : dy, in);
        }
        return;
    }
    const int warp = tid / 32, lane = tid % 32;
    const int outer = p.kmajor ? p.npix : p.kp, inner = p.kmajor ? p.kp : p.npix;
    for (int a = warp; a < outer; a += DSTEM_THREADS / 32)
        for (int b = lane; b < inner; b += 32) {
            const int pix = p.kmajor ? a : b, k = p.kmajor ? b : a;
            uint32_t col;
            const int y = y0 + (int)ocd_fastdiv_divmod(p.div_pcol, (uint32_t)pix, &col), x = x0 + (int)col;
            const bool in = (unsigned)y < (unsigned)p.p && (unsigned)x < (unsigned)p.q && k < p.k;
            patch[pix * p.ld + k] = in ? E::operand(dy[k * p.ys[1] + y * p.ys[2] + x * p.ys[3]]) : (typename E::raw)0;
        }
}

/* Stores a warp's accumulators of phase (ah, aw), phase-grid row t.i0 + warp: the mma.cuh
   fragment mapping, rows the tile's 16 columns and columns the channels. */
template <typename T>
__host__ __device__ __forceinline__ void dstem_store(const dstem_params &p, const float (&acc)[4], const dstem_tile &t,
                                                     int ah, int aw, int warp, int lane)
{
    T *dx = (T *)p.dx;
    const int h = ah + p.uh * (t.i0 + warp);
    if (h >= p.h) return;
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int w = aw + p.uw * (t.j0 + ocd_mma_acc_row(0, e, lane)), c = ocd_mma_acc_col(0, e, lane);
        if (w >= p.w_in || c >= p.c) continue;
        const int off = t.n * p.xs[0] + c * p.xs[1] + h * p.xs[2] + w * p.xs[3];
        float v = p.alpha * acc[e];
        if (p.beta != 0.f) v += p.beta * ocd_cuda_load(dx + off);
        ocd_cuda_store(dx + off, v);
    }
}

/* ---- the kernel ---------------------------------------------------------------------------------- */

/* The K offset, in a B row, of lane's first fragment word: k = 2 (lane % 4) for the 16-bit
   types (two elements a word), lane % 4 for tf32; the second word lies half a k-step on. */
template <typename T> __host__ __device__ __forceinline__ int dstem_b_col(int lane)
{
    return (lane % 4) * (4 / (int)sizeof(T));
}

/* Warp `warp`'s 16 x 8 product over the taps of phase (ah, aw) and all of K. */
template <typename T>
__device__ __forceinline__ void dstem_mma(float (&acc)[4], const dstem_params &p, const T *patch, const T *sb, int ah,
                                          int aw, int warp, int lane)
{
    constexpr int KSTEP = 32 / (int)sizeof(T);
#pragma unroll
    for (int e = 0; e < 4; e++) acc[e] = 0.f;
    for (int a = p.first_h[ah]; a < p.first_h[ah + 1]; a++) {
        const int r = p.tap_h[a] & 255, dr = p.tap_h[a] >> 8;
        for (int b = p.first_w[aw]; b < p.first_w[aw + 1]; b++) {
            const int s = p.tap_w[b] & 255, ds = p.tap_w[b] >> 8;
            const T *arow = patch + ((warp + dr) * p.pcol + ds) * p.ld;
            const bool live = lane / 4 < p.c; /* lanes of the channels past C hold zeros */
            const T *brow = sb + ((r * p.s + s) * p.c + (live ? lane / 4 : 0)) * p.ld + dstem_b_col<T>(lane);
            for (int k0 = 0; k0 < p.kp; k0 += KSTEP) {
                uint32_t af[4], bf[2] = {0u, 0u};
                ocd_mma_ldmatrix_x4<false>(af, ocd_mma_kmajor_a_addr(arow, p.ld, 0, k0, lane));
                if (live) bf[0] = *(const uint32_t *)(brow + k0), bf[1] = *(const uint32_t *)(brow + k0 + KSTEP / 2);
                ocd_mma_elem<T>::mma(acc, af, bf);
            }
        }
    }
}

/* Block (256); grid (CTAs looping over tiles). Per tile: patch, barrier, every phase's products
   and stores, barrier (before the next patch overwrites this one). */
template <typename T> __global__ void __launch_bounds__(DSTEM_THREADS, 2) dstem_kernel(const dstem_params p)
{
#ifdef OCD_MMA_ARCH_OK
    typedef typename ocd_stem_elem<T>::raw R;
    extern __shared__ __align__(16) unsigned char smem[];
    R *sb = (R *)smem, *patch = (R *)(smem + p.off_patch);
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    dstem_load_filter<T>(p, sb, tid);
    for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
        const dstem_tile tile = dstem_tile_of(p, t);
        dstem_load_patch<T>(p, patch, tile, tid);
        ocd_mma_cp_commit();
        ocd_mma_cp_wait<0>();
        __syncthreads();
        for (int ah = 0; ah < p.uh; ah++)
            for (int aw = 0; aw < p.uw; aw++) {
                float acc[4];
                dstem_mma<T>(acc, p, (const T *)patch, (const T *)sb, ah, aw, warp, lane);
                dstem_store<T>(p, acc, tile, ah, aw, warp, lane);
            }
        __syncthreads();
    }
#endif
}

/* ---- the plan ------------------------------------------------------------------------------------ */

struct dstem_plan {
    dstem_params prm;
    cudnnDataType_t dt;
};
OCD_IMPL_PLAN_FITS(dstem_plan);

/* The taps of one dim grouped by phase (tap | shift << 8, shift = the dy offset less the smallest
   one), first[] their bounds; the smallest offset in *omin, the patch's extent past the tile's
   `tile` positions in *extent. */
static void dstem_taps(int filt, int pad, int stride, int dil, int tile, int *taps, int *first, int *omin, int *extent)
{
    int off[DSTEM_MAX_TAPS], phase[DSTEM_MAX_TAPS], lo = 0, hi = 0;
    for (int r = 0; r < filt; r++) {
        const int a = (((r * dil - pad) % stride) + stride) % stride; /* the phase tap r reaches */
        phase[r] = a, off[r] = (a + pad - r * dil) / stride;          /* exact */
        lo = r == 0 || off[r] < lo ? off[r] : lo;
        hi = r == 0 || off[r] > hi ? off[r] : hi;
    }
    int n = 0;
    for (int a = 0; a < stride; a++) {
        first[a] = n;
        for (int r = 0; r < filt; r++)
            if (phase[r] == a) taps[n++] = r | (off[r] - lo) << 8;
    }
    first[stride] = n;
    *omin = lo, *extent = tile + hi - lo;
}

static const char *dstem_plan_fn(cudnnHandle_t h, const void *problem, void *plan)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    dstem_plan *pl = (dstem_plan *)plan;
    memset(pl, 0, sizeof *pl);
    if (const char *why = ocd_stem_rejects(h, p)) return why;
    const struct ocd_conv_shape *s = &p->s;
    if (s->c >= 8) return "8 channels or more: the implicit GEMM's tiles fit them";
    if (s->stride[0] > DSTEM_MAX_STRIDE || s->stride[1] > DSTEM_MAX_STRIDE) return "strides above 4";
    if (s->filt[0] > DSTEM_MAX_TAPS || s->filt[1] > DSTEM_MAX_TAPS) return "filters above 16 taps a dim";

    dstem_params &m = pl->prm;
    m.c = (int)s->c, m.k = (int)s->k, m.r = (int)s->filt[0], m.s = (int)s->filt[1];
    m.h = (int)s->in[0], m.w_in = (int)s->in[1], m.p = (int)s->out[0], m.q = (int)s->out[1];
    m.uh = s->stride[0], m.uw = s->stride[1];
    ocd_stem_strides(&p->x, m.xs), ocd_stem_strides(&p->w, m.fs), ocd_stem_strides(&p->y, m.ys);
    const int es = (int)ocd_dtype_scalar_size(p->x.dtype), kstep = 32 / es;
    m.kp = (m.k + kstep - 1) / kstep * kstep, m.ld = m.kp + 16 / es;
    m.gh = (m.h + m.uh - 1) / m.uh, m.gw = (m.w_in + m.uw - 1) / m.uw;
    dstem_taps(m.r, s->pad[0], m.uh, s->dilation[0], DSTEM_TH, m.tap_h, m.first_h, &m.omin_h, &m.prow);
    dstem_taps(m.s, s->pad[1], m.uw, s->dilation[1], DSTEM_TW, m.tap_w, m.first_w, &m.omin_w, &m.pcol);
    m.npix = m.prow * m.pcol;
    const int64_t bytes_b = (int64_t)m.r * m.s * m.c * m.ld * es, bytes_patch = (int64_t)m.npix * m.ld * es;
    if (bytes_b + bytes_patch > DSTEM_SMEM_MAX)
        return "the filter and a tile's dy patch do not fit in shared memory (filters, K, dilation)";
    m.off_patch = (int)bytes_b, m.smem = (int)(bytes_b + bytes_patch);
    m.tiles_w = (m.gw + DSTEM_TW - 1) / DSTEM_TW;
    const int64_t tiles_h = (m.gh + DSTEM_TH - 1) / DSTEM_TH, tiles = s->n * tiles_h * m.tiles_w;
    if (tiles >= INT32_MAX) return OCD_REASON_SHAPE;
    m.tiles = (int)tiles;
    m.div_gw = ocd_fastdiv_make((uint32_t)m.tiles_w), m.div_gh = ocd_fastdiv_make((uint32_t)tiles_h);
    m.div_pcol = ocd_fastdiv_make((uint32_t)m.pcol), m.div_chunks = ocd_fastdiv_make((uint32_t)(m.kp / 8));
    m.kmajor = m.ys[1] == 1;
    m.alpha = (float)p->alpha, m.beta = (float)p->beta;
    pl->dt = p->x.dtype;
    return NULL;
}

/* The plan's parameters bound to the call's data. CONVOLUTION mode: the filter is read mirrored,
   through negated r and s strides from its last tap. */
static dstem_params dstem_bind(const struct ocd_conv_problem *p, const dstem_plan *pl)
{
    dstem_params m = pl->prm;
    m.dy = p->y_data, m.dx = p->x_data, m.w = p->w_data;
    if (p->s.flip) {
        m.w = (const char *)p->w_data + ((m.r - 1) * m.fs[2] + (m.s - 1) * m.fs[3]) * ocd_dtype_scalar_size(pl->dt);
        m.fs[2] = -m.fs[2], m.fs[3] = -m.fs[3];
    }
    m.vec = pl->dt != CUDNN_DATA_FLOAT && m.kmajor && m.k % 8 == 0 && (uintptr_t)p->y_data % 16 == 0 &&
            m.ys[0] % 8 == 0 && m.ys[2] % 8 == 0 && m.ys[3] % 8 == 0;
    return m;
}

/* ---- launching ----------------------------------------------------------------------------------- */

/* dstem_kernel<T> on as many CTAs as are resident at once (resident.cuh), at most one a tile. */
template <typename T> static cudnnStatus_t dstem_launch(cudnnHandle_t h, const dstem_params &m)
{
    static struct ocd_cuda_resident resident_state;
    int ctas;
    OCD_TRY(ocd_cuda_ctas_per_sm((const void *)dstem_kernel<T>, DSTEM_THREADS, DSTEM_SMEM_MAX, h->device, m.smem,
                                 &resident_state, &ctas));
    const unsigned grid = (unsigned)OCD_MIN((int64_t)m.tiles, OCD_MAX((int64_t)ctas * h->sm_count, (int64_t)1));
    dstem_kernel<T><<<grid, DSTEM_THREADS, (size_t)m.smem, h->stream>>>(m);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t dstem_run(cudnnHandle_t h, const void *problem, const void *plan, void *, size_t)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const dstem_plan *pl = (const dstem_plan *)plan;
    const dstem_params m = dstem_bind(p, pl);
    switch (pl->dt) {
    case CUDNN_DATA_HALF: return dstem_launch<__half>(h, m);
    case CUDNN_DATA_BFLOAT16: return dstem_launch<__nv_bfloat16>(h, m);
    default: return dstem_launch<float>(h, m);
    }
}

extern "C" const struct ocd_impl_planned ocd_cuda_conv_stem_dgrad_planned = {dstem_plan_fn, NULL, dstem_run};
