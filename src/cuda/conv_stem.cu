/* conv_stem.cu: the forward convolution of images with few channels (an RGB network's first
   layer: C = 3, 7x7, stride 2) and its filter gradient on tensor cores, entries
   cuda:fwd_stem_tc_128x64 and cuda:wgrad_stem_tc_64x256 (problem/conv.h).

   Main decision: the GEMM's K is C x R x S packed (147 for the stem, padded to 160), not C padded
   to a 16-byte chunk and then multiplied by the taps (8 x 49 = 392 in the implicit GEMM, 2.7
   times the multiply-adds). No 16-byte chunk of such an operand is one tap's channels, so the
   operand is not loaded by cp.async from global memory: each CTA copies the input patch its
   pixels read into shared memory once (zeros at the padding), expands it there into the im2col
   tile, and multiplies that by the whole filter, which stays in shared memory for all the tiles
   the CTA computes.

   - A CTA computes 8 x 16 output pixels of one image (M = 128) by 64 filters (N; filter blocks
     along the grid's y) with 8 warps of 32 x 32, mma.sync m16n8k16 (fp16, bf16; fp32
     accumulation), operands read with ldmatrix from K-major rows padded by 16 bytes (conflict-free
     for any row length that is a multiple of 32 bytes). The grid holds as many CTAs as are
     resident at once, each looping over pixel tiles, so that the filter is loaded once a CTA.
   - Float data run on TF32 (mma.sync m16n8k8, fp32 accumulation) where the math type allows it,
     through the same code: an mma k-step is 32 bytes of K in both (16 elements or 8), so the
     ldmatrix addresses and fragment words are those of the 16-bit types (mma.cuh). Every element
     is rounded to tf32 (round to nearest) as it is copied into shared memory. A float tile is
     4 x 16 pixels (M = 64, warps of 16 x 32), so that the filter, the im2col tile and the patch
     fit in the same 96 KB at twice the element size.
   - K index k = (r S + s) C + c: for unit dilation the taps of one filter row are one contiguous
     run of the patch, so the expansion reads shared memory without bank conflicts. A table of
     patch offsets per k (-1 past C R S) is built with the filter.
   - Any layout of x, y and the filter (the views' strides; NHWC and NCHW alike), CONVOLUTION
     mode (the filter mirrored as it is loaded), padding, stride and dilation: the patch of a
     tile is ((8 - 1) stride + (R - 1) dilation + 1) x ((16 - 1) stride + (S - 1) dilation + 1)
     pixels of C channels.
   - The store: alpha and beta on the accumulators, two filters of a pixel in one 32-bit store
     where y's channels are contiguous and aligned; the fused forward's common epilogue (alpha2 z,
     a bias of y's type, ReLU) the same way, typed (conv_store.cuh's typed epilogue, the implicit
     GEMM's). A scale (of y's type or fp32, one a filter) or another activation also typed, in a
     second instantiation of the kernel (FUSED: the step is a call, which the kernel without it
     does not carry), an unproven path (core/impl.h): without OPENCUDNN_UNPROVEN=1, and for a
     scale or bias of another type or channel stride, the wide epilogue stores each element
     through conv_store.cuh's ocd_cuda_conv_finish_call, whose run-time types cost a fused call
     several times the convolution's own time.
   - No workspace, so it also serves IMPLICIT_GEMM.
   - The filter gradient (entry cuda:wgrad_stem_tc_64x256) is the same expansion multiplied the
     other way: dW[64 filters][C R S] += dy^T A over each tile's pixels, both operands MN-major
     in shared memory (ldmatrix.trans; for tf32, which ldmatrix.trans cannot transpose, 32-bit
     fragment words read one by one, conflict-free with rows padded by 8 words), C R S padded to
     32 and split over two warps, the sums held in registers while the CTA loops over its tiles.
     Each CTA writes its fp32 partials to the workspace and a second kernel sums them in CTA
     order (deterministic), with alpha and beta, into the filter (mirrored for CONVOLUTION
     mode). The grid is two CTAs a multiprocessor, fixed at plan time, since the workspace
     depends on it. For float NCHW data the TF32 filter-gradient entry, ahead of this one in the
     table and faster on them, serves.

   Constraints (each a reason): compute capability 8.0 or newer; half, bfloat16 or float data, all
   three tensors one type; tensor-op math allowed (TF32 for float); 2-D, no groups; C not a
   multiple of 8 (those the implicit GEMM reads in whole chunks) and C R S <= 256; shared memory
   (filter, im2col tile, patch) within 96 KB. Every thread's code is host-callable but the mma loop and the launch, so that
   tests/emulate/conv_stem.cu runs the kernel on the CPU. */
#include "cuda/conv_stem.cuh"

#include "cuda/check.cuh"
#include "cuda/conv_store.cuh"
#include "cuda/mma.cuh"
#include "cuda/resident.cuh"
#include "cuda/types.cuh"

#include <stdint.h>
#include <string.h>

/* ---- geometry ------------------------------------------------------------------------------------ */

enum {
    STEM_TW = 16,       /* output columns of a tile */
    STEM_BN = 64,       /* filters of a CTA */
    STEM_THREADS = 256, /* 8 warps: 4 along M by 2 along N */
    STEM_WTN = 32, STEM_NI = STEM_WTN / 8,
    STEM_MAX_CRS = 256,
    STEM_DLD = STEM_BN + 8,         /* filter gradient: a dy tile row, a pixel's 64 filters (padded) */
    STEM_WG_NI = STEM_MAX_CRS / 16, /* filter gradient: n8 tiles of a warp's C R S half, at most */
    STEM_SMEM_MAX = 96 * 1024,
};

/* Output rows of a tile of elements of `bytes` bytes: 8 (M = 128) for 16-bit types, 4 for float. */
__host__ __device__ constexpr int stem_tile_rows(int bytes)
{
    return bytes == 4 ? 4 : 8;
}

/* The tile of element type T: M pixels, a warp's rows (4 warps along M) and m16 tiles, and the
   K of one mma k-step (32 bytes). */
template <typename T> struct stem_geo {
    static constexpr int BM = stem_tile_rows((int)sizeof(T)) * STEM_TW, WTM = BM / 4, MI = WTM / 16;
    static constexpr int KSTEP = 32 / (int)sizeof(T);
};

/* Everything the kernel reads, by value. Offsets are 32-bit: a tensor spans fewer than 2^31
   scalars (types.cuh, "Index arithmetic"). */
struct stem_params {
    const void *x, *w;
    void *y;
    int k, c, r, s;            /* filters, channels, filter rows and columns */
    int h, w_in, p, q;         /* input and output rows and columns */
    int uh, uw, ph, pw, dh, dw; /* stride, padding, dilation */
    int flip;                  /* CONVOLUTION mode */
    int xs[4], fs[4], ys[4];   /* strides of x (n, c, h, w), the filter (k, c, r, s), y (n, k, p, q) */
    int th, bm;                /* output rows and pixels of a tile (stem_tile_rows) */
    int crs, kp, ld;           /* C R S; padded to a k-step (32 for the filter gradient); row length in
                                  shared memory (kp + 16 bytes; the filter gradient: kp + 8) */
    int prow, pcol, pcc, patch; /* patch rows, columns, columns x C, elements */
    int row_step, col_step;    /* patch offset of the next output row, column: stride x (pcc, C) */
    ocd_fastdiv div_pcc, div_c, div_s, div_tw, div_th;
    int tiles;                 /* pixel tiles: images x row tiles x column tiles */
    ocd_cuda_conv_epi typed;   /* the typed store's epilogue (alpha and beta for the filter
                                  gradient): alpha, beta z, the fused forward's bias (y's type,
                                  one a filter), ReLU, scale and step (stem_fused) */
    const void *z;             /* read scaled by beta when beta != 0: y itself, or the fused call's z */
    int wide;                  /* the fused forward's scale or activation: the epilogue through store */
    float *partial;            /* filter gradient: [filter block][CTA][64][kp] fp32 sums */
    int pair;                  /* y's filters contiguous, pairs aligned: stores in pairs */
    ocd_cuda_conv_store store;
    int off_a, off_koff, off_patch, smem; /* shared-memory layout, bytes: filter at 0 */
};

struct stem_tile {
    int n, oh0, ow0;
};

__host__ __device__ __forceinline__ stem_tile stem_tile_of(const stem_params &p, int t)
{
    uint32_t tw, th;
    const uint32_t rest = ocd_fastdiv_divmod(p.div_tw, (uint32_t)t, &tw);
    const uint32_t n = ocd_fastdiv_divmod(p.div_th, rest, &th);
    stem_tile r = {(int)n, (int)th * p.th, (int)tw * STEM_TW};
    return r;
}

/* ---- the phases of a CTA, per thread (host-callable for the emulation) ---------------------------- */

/* Filter block kb as B, [n][k] K-major in rows of p.ld (zeros past K filters and past C R S),
   mirrored for CONVOLUTION mode. Elements move as their raw bits (ocd_stem_elem). */
template <typename T>
__host__ __device__ __forceinline__ void stem_load_filter(const stem_params &p, typename ocd_stem_elem<T>::raw *sb,
                                                          int kb, int tid)
{
    typedef ocd_stem_elem<T> E;
    const typename E::raw *w = (const typename E::raw *)p.w;
    for (int n = tid / 32; n < STEM_BN; n += STEM_THREADS / 32) {
        const int f = kb * STEM_BN + n;
        for (int k = tid % 32; k < p.kp; k += 32) {
            typename E::raw v = 0;
            if (f < p.k && k < p.crs) {
                uint32_t c, s;
                uint32_t r = ocd_fastdiv_divmod(p.div_s, ocd_fastdiv_divmod(p.div_c, (uint32_t)k, &c), &s);
                if (p.flip) r = (uint32_t)p.r - 1 - r, s = (uint32_t)p.s - 1 - s;
                v = E::operand(w[f * p.fs[0] + (int)c * p.fs[1] + (int)r * p.fs[2] + (int)s * p.fs[3]]);
            }
            sb[n * p.ld + k] = v;
        }
    }
}

/* The patch offset of each k of the im2col tile into koff (-1 past C R S). */
__host__ __device__ __forceinline__ void stem_load_offsets(const stem_params &p, int *koff, int tid)
{
    for (int k = tid; k < p.kp; k += STEM_THREADS) {
        uint32_t c, s;
        const uint32_t r = ocd_fastdiv_divmod(p.div_s, ocd_fastdiv_divmod(p.div_c, (uint32_t)k, &c), &s);
        koff[k] = k < p.crs ? ((int)r * p.dh * p.pcol + (int)s * p.dw) * p.c + (int)c : -1;
    }
}

/* The input patch of tile t, [row][column][channel], zeros outside the image. */
template <typename T>
__host__ __device__ __forceinline__ void stem_load_patch(const stem_params &p, typename ocd_stem_elem<T>::raw *patch,
                                                         const stem_tile &t, int tid)
{
    typedef ocd_stem_elem<T> E;
    const typename E::raw *x = (const typename E::raw *)p.x + t.n * p.xs[0];
    const int h0 = t.oh0 * p.uh - p.ph, w0 = t.ow0 * p.uw - p.pw;
    for (int i = tid; i < p.patch; i += STEM_THREADS) {
        uint32_t rem, c;
        const int h = h0 + (int)ocd_fastdiv_divmod(p.div_pcc, (uint32_t)i, &rem);
        const int w = w0 + (int)ocd_fastdiv_divmod(p.div_c, rem, &c);
        const bool in = (unsigned)h < (unsigned)p.h && (unsigned)w < (unsigned)p.w_in;
        patch[i] = in ? E::operand(x[(int)c * p.xs[1] + h * p.xs[2] + w * p.xs[3]]) : (typename E::raw)0;
    }
}

/* The im2col tile A, [m][k] K-major in rows of p.ld: pixel m = (row m / 16, column m % 16) of
   the tile. A warp writes 32 consecutive 32-bit words of one row at a time (pairs of k for the
   16-bit types, single k for float). */
template <typename R>
__host__ __device__ __forceinline__ void stem_im2col(const stem_params &p, const R *patch, const int *koff, R *sa,
                                                     int tid)
{
    constexpr int PER = 4 / (int)sizeof(R); /* elements a word */
    const int lane = tid % 32, warp = tid / 32;
    for (int k = PER * lane; k < p.kp; k += 32 * PER) {
        int o[PER];
#pragma unroll
        for (int e = 0; e < PER; e++) o[e] = koff[k + e];
        for (int m = warp; m < p.bm; m += STEM_THREADS / 32) {
            const int base = (m / STEM_TW) * p.row_step + (m % STEM_TW) * p.col_step;
            uint32_t word = 0;
#pragma unroll
            for (int e = 0; e < PER; e++) word |= (o[e] >= 0 ? (uint32_t)patch[base + o[e]] : 0u) << (16 * e);
            *(uint32_t *)(sa + m * p.ld + k) = word;
        }
    }
}

/* Whether p's typed epilogue has a scale or an activation step: the kernel instantiated with
   FUSED. */
__host__ __device__ __forceinline__ bool stem_fused(const stem_params &p)
{
    return p.typed.scale != NULL || p.typed.act_on;
}

/* Stores a warp's accumulators (the mma.cuh fragment mapping) of filter block kb for tile t.
   FUSED: the typed epilogue's step compiled in (stem_fused: a scale or a step). */
template <typename T, bool FUSED>
__host__ __device__ __forceinline__ void stem_store(const stem_params &p,
                                                    const float (&acc)[stem_geo<T>::MI][STEM_NI][4],
                                                    const stem_tile &t, int kb, int wm, int wn, int lane)
{
    T *y = (T *)p.y;
#pragma unroll
    for (int i = 0; i < stem_geo<T>::MI; i++)
#pragma unroll
        for (int hr = 0; hr < 2; hr++) {
            const int m = wm + ocd_mma_acc_row(i, 2 * hr, lane);
            const int oh = t.oh0 + m / STEM_TW, ow = t.ow0 + m % STEM_TW;
            if (oh >= p.p || ow >= p.q) continue;
            const int pix = t.n * p.ys[0] + oh * p.ys[2] + ow * p.ys[3];
#pragma unroll
            for (int j = 0; j < STEM_NI; j++) {
                const int f = kb * STEM_BN + wn + ocd_mma_acc_col(j, 2 * hr, lane); /* even */
                if (f >= p.k) continue;
                const int off = pix + f * p.ys[1];
                const bool two = f + 1 < p.k;
                float v0 = acc[i][j][2 * hr], v1 = acc[i][j][2 * hr + 1];
                if (p.wide) {
                    ocd_cuda_conv_finish_call(p.store, off, f, v0);
                    if (two) ocd_cuda_conv_finish_call(p.store, off + p.ys[1], f + 1, v1);
                    continue;
                }
                const ocd_cuda_conv_epi &e = p.typed;
                const T *z = (const T *)p.z;
                const bool zon = e.beta != 0.f;
                /* without a second filter, v1 is evaluated on filter f's bias and not stored */
                v0 = ocd_cuda_conv_epi_value<T, FUSED>(e, v0, zon ? ocd_cuda_load(z + off) : 0.f, f);
                v1 = ocd_cuda_conv_epi_value<T, FUSED>(e, v1, zon && two ? ocd_cuda_load(z + off + p.ys[1]) : 0.f,
                                                       two ? f + 1 : f);
                if (p.pair && two) {
                    T v[2];
                    ocd_cuda_store(&v[0], v0), ocd_cuda_store(&v[1], v1);
                    typename ocd_stem_elem<T>::pair bits;
                    memcpy(&bits, v, sizeof bits);
                    *(typename ocd_stem_elem<T>::pair *)(y + off) = bits;
                } else {
                    ocd_cuda_store(y + off, v0);
                    if (two) ocd_cuda_store(y + off + p.ys[1], v1);
                }
            }
        }
}

/* ---- the kernel ---------------------------------------------------------------------------------- */

/* The warp's WTM x 32 product of A rows wm.. by B rows wn.. over the whole K. */
template <typename T>
__device__ __forceinline__ void stem_mma(float (&acc)[stem_geo<T>::MI][STEM_NI][4], const T *sa, const T *sb, int ld,
                                         int kp, int wm, int wn, int lane)
{
    constexpr int MI = stem_geo<T>::MI;
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < STEM_NI; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.f;
    for (int k0 = 0; k0 < kp; k0 += stem_geo<T>::KSTEP) {
        uint32_t af[MI][4], bf[STEM_NI / 2][4];
#pragma unroll
        for (int i = 0; i < MI; i++)
            ocd_mma_ldmatrix_x4<false>(af[i], ocd_mma_kmajor_a_addr(sa, ld, wm + i * 16, k0, lane));
#pragma unroll
        for (int j = 0; j < STEM_NI / 2; j++)
            ocd_mma_ldmatrix_x4<false>(bf[j], ocd_mma_kmajor_b_addr(sb, ld, wn + j * 16, k0, lane));
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < STEM_NI; j++) ocd_mma_elem<T>::mma(acc[i][j], af[i], &bf[j / 2][(j % 2) * 2]);
    }
}

/* Block (256); grid (CTAs looping over pixel tiles, filter blocks). Per tile: patch, barrier,
   expansion, barrier, products and store. The next tile's patch may be written while other warps
   still multiply (the products read A and B only); its expansion waits at the barrier that every
   warp reaches after its products. FUSED as stem_store's (the step takes the address of the
   parameters' act: __grid_constant__, so that they are not copied to local memory). */
template <typename T, bool FUSED>
__global__ void __launch_bounds__(STEM_THREADS, 2) stem_fwd_kernel(const __grid_constant__ stem_params p)
{
#ifdef OCD_MMA_ARCH_OK
    typedef typename ocd_stem_elem<T>::raw R;
    extern __shared__ __align__(16) unsigned char smem[];
    R *sb = (R *)smem, *sa = (R *)(smem + p.off_a), *patch = (R *)(smem + p.off_patch);
    int *koff = (int *)(smem + p.off_koff);
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = (warp % 4) * stem_geo<T>::WTM, wn = (warp / 4) * STEM_WTN, kb = blockIdx.y;
    stem_load_filter<T>(p, sb, kb, tid);
    stem_load_offsets(p, koff, tid);
    for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
        const stem_tile tile = stem_tile_of(p, t);
        stem_load_patch<T>(p, patch, tile, tid);
        __syncthreads();
        stem_im2col(p, patch, koff, sa, tid);
        __syncthreads();
        float acc[stem_geo<T>::MI][STEM_NI][4];
        stem_mma<T>(acc, (const T *)sa, (const T *)sb, p.ld, p.kp, wm, wn, lane);
        stem_store<T, FUSED>(p, acc, tile, kb, wm, wn, lane);
    }
#endif
}

/* ---- the filter gradient ------------------------------------------------------------------------- */

/* The dy tile of filter block kb for tile t, [pixel m][filter] in rows of STEM_DLD, zeros for
   pixels outside the output and filters past K: pixel-major where dy's filters are contiguous,
   filter-major otherwise, so that the reads stay coalesced. */
template <typename T>
__host__ __device__ __forceinline__ void stem_load_dy(const stem_params &p, typename ocd_stem_elem<T>::raw *sd,
                                                      const stem_tile &t, int kb, int tid)
{
    typedef ocd_stem_elem<T> E;
    const typename E::raw *dy = (const typename E::raw *)p.y + t.n * p.ys[0];
    const bool fmajor = p.ys[1] == 1;
    for (int a = tid / 32; a < (fmajor ? p.bm : STEM_BN); a += STEM_THREADS / 32)
        for (int b = tid % 32; b < (fmajor ? STEM_BN : p.bm); b += 32) {
            const int m = fmajor ? a : b, f = fmajor ? b : a, k = kb * STEM_BN + f;
            const int oh = t.oh0 + m / STEM_TW, ow = t.ow0 + m % STEM_TW;
            const bool in = oh < p.p && ow < p.q && k < p.k;
            sd[m * STEM_DLD + f] = in ? E::operand(dy[k * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]]) : (typename E::raw)0;
        }
}

/* The word of an MN-major tf32 operand at K row k, column n (rows ld words apart): what lane
   (g = lane / 4, t = lane % 4) holds of an mma.sync m16n8k8 fragment at k = t (+ 4), column
   g (+ 8), which ldmatrix.trans cannot deliver for 32-bit elements. */
__host__ __device__ __forceinline__ uint32_t stem_tf32_word(const float *s, int ld, int k, int n)
{
    uint32_t v;
    memcpy(&v, s + k * ld + n, 4);
    return v;
}

/* The A fragment (16 x 8 at m0, k0) and two B fragments (8 x 8 at n0 and n0 + 8, as b[0..1] and
   b[2..3]) of MN-major tf32 operands, in the order ldmatrix.x4 gives the 16-bit ones. */
__host__ __device__ __forceinline__ void stem_tf32_frag_a(uint32_t a[4], const float *s, int ld, int m0, int k0,
                                                          int lane)
{
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int r = 0; r < 4; r++) a[r] = stem_tf32_word(s, ld, k0 + t + (r / 2) * 4, m0 + g + (r % 2) * 8);
}
__host__ __device__ __forceinline__ void stem_tf32_frag_b(uint32_t b[4], const float *s, int ld, int n0, int k0,
                                                          int lane)
{
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int r = 0; r < 4; r++) b[r] = stem_tf32_word(s, ld, k0 + t + (r % 2) * 4, n0 + g + (r / 2) * 8);
}

/* Warp (wm, wn)'s share of dW[16 filters][kp / 2 of C R S] += dy^T im2col over the tile's
   pixels: both operands MN-major (pixels are the GEMM's K), read with ldmatrix.trans (16-bit) or
   word by word (tf32). */
template <typename T>
__device__ __forceinline__ void stem_wgrad_mma(float (&acc)[STEM_WG_NI][4], const T *sd, const T *sa, int ld, int kp,
                                               int wm, int wn)
{
    const int lane = threadIdx.x % 32, nx4 = kp / 32; /* x4 loads of B: two n8 tiles each */
    for (int k0 = 0; k0 < stem_geo<T>::BM; k0 += stem_geo<T>::KSTEP) {
        uint32_t af[4];
        if constexpr (sizeof(T) == 4) stem_tf32_frag_a(af, sd, STEM_DLD, wm, k0, lane);
        else ocd_mma_ldmatrix_x4<true>(af, ocd_mma_mnmajor_a_addr(sd, STEM_DLD, wm, k0, lane));
#pragma unroll
        for (int j = 0; j < STEM_WG_NI / 2; j++)
            if (j < nx4) {
                uint32_t bf[4];
                if constexpr (sizeof(T) == 4) stem_tf32_frag_b(bf, sa, ld, wn + j * 16, k0, lane);
                else ocd_mma_ldmatrix_x4<true>(bf, ocd_mma_mnmajor_b_addr(sa, ld, wn + j * 16, k0, lane));
                ocd_mma_elem<T>::mma(acc[2 * j], af, &bf[0]);
                ocd_mma_elem<T>::mma(acc[2 * j + 1], af, &bf[2]);
            }
    }
}

/* A warp's partial sums, every element of its 16 x kp / 2 share (padding included). */
__host__ __device__ __forceinline__ void stem_wgrad_partial(const stem_params &p, const float (&acc)[STEM_WG_NI][4],
                                                            int cta, int wm, int wn, int lane)
{
    float *d = p.partial + (size_t)cta * STEM_BN * p.kp;
#pragma unroll
    for (int j = 0; j < STEM_WG_NI; j++) /* static indices keep acc in registers */
        if (j < p.kp / 16)
#pragma unroll
            for (int e = 0; e < 4; e++)
                d[(wm + ocd_mma_acc_row(0, e, lane)) * p.kp + wn + ocd_mma_acc_col(j, e, lane)] = acc[j][e];
}

/* Filter-gradient element i of K x C R S (filter-major, k of C R S as in the im2col tile): the
   sum of the CTAs' partials in CTA order (deterministic), alpha, beta, stored mirrored for
   CONVOLUTION mode. */
template <typename T> __host__ __device__ __forceinline__ void stem_wgrad_finish(const stem_params &p, int grid, int i)
{
    const int f = i / p.crs, k = i % p.crs, kb = f / STEM_BN;
    const float *src = p.partial + ((size_t)kb * grid * STEM_BN + f % STEM_BN) * p.kp + k;
    float sum = 0.f;
    for (int b = 0; b < grid; b++) sum += src[(size_t)b * STEM_BN * p.kp];
    uint32_t c, s;
    uint32_t r = ocd_fastdiv_divmod(p.div_s, ocd_fastdiv_divmod(p.div_c, (uint32_t)k, &c), &s);
    if (p.flip) r = (uint32_t)p.r - 1 - r, s = (uint32_t)p.s - 1 - s;
    T *dw = (T *)p.w + f * p.fs[0] + (int)c * p.fs[1] + (int)r * p.fs[2] + (int)s * p.fs[3];
    float v = p.typed.alpha * sum;
    if (p.typed.beta != 0.f) v += p.typed.beta * ocd_cuda_load(dw);
    ocd_cuda_store(dw, v);
}

/* Block (256); grid (CTAs looping over pixel tiles, filter blocks). Per tile: patch, barrier,
   expansion and dy tile, barrier, products into registers; at the end each warp's sums go to the
   CTA's partials. Warps: 4 along the filters (16 each) by 2 along C R S (kp / 2 each). */
template <typename T> __global__ void __launch_bounds__(STEM_THREADS, 2) stem_wgrad_kernel(const stem_params p)
{
#ifdef OCD_MMA_ARCH_OK
    typedef typename ocd_stem_elem<T>::raw R;
    extern __shared__ __align__(16) unsigned char smem[];
    R *sd = (R *)smem, *sa = (R *)(smem + p.off_a), *patch = (R *)(smem + p.off_patch);
    int *koff = (int *)(smem + p.off_koff);
    const int tid = threadIdx.x, warp = tid / 32, kb = blockIdx.y;
    const int wm = (warp % 4) * 16, wn = (warp / 4) * (p.kp / 2);
    stem_load_offsets(p, koff, tid);
    float acc[STEM_WG_NI][4];
#pragma unroll
    for (int j = 0; j < STEM_WG_NI; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[j][e] = 0.f;
    for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
        const stem_tile tile = stem_tile_of(p, t);
        stem_load_patch<T>(p, patch, tile, tid);
        __syncthreads();
        stem_im2col(p, patch, koff, sa, tid);
        stem_load_dy<T>(p, sd, tile, kb, tid);
        __syncthreads();
        stem_wgrad_mma<T>(acc, (const T *)sd, (const T *)sa, p.ld, p.kp, wm, wn);
    }
    stem_wgrad_partial(p, acc, kb * gridDim.x + blockIdx.x, wm, wn, tid % 32);
#endif
}

template <typename T> __global__ void stem_wgrad_reduce(const stem_params p, int grid)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.k * p.crs) stem_wgrad_finish<T>(p, grid, i);
}

/* ---- the plan ------------------------------------------------------------------------------------ */

struct stem_plan {
    stem_params prm;
    int kblocks;
    cudnnDataType_t dt;
    int grid;          /* filter gradient: CTAs a filter block, each summing its own partials */
    size_t ws_part;    /* filter gradient: bytes of the partial sums */
};
OCD_IMPL_PLAN_FITS(stem_plan);

/* What both plans of this file share: the checks, the geometry and the shared-memory layout, its
   first region the filter block (forward) or the dy tile (wgrad), K padded to a k-step (forward:
   32 bytes) or to 32 (wgrad). */
static const char *stem_geometry(cudnnHandle_t h, const struct ocd_conv_problem *p, stem_plan *pl, bool wgrad)
{
    memset(pl, 0, sizeof *pl);
    if (const char *why = ocd_stem_rejects(h, p)) return why;
    const struct ocd_conv_shape *s = &p->s;
    if (s->c % 8 == 0) return "channels a multiple of 8: the implicit GEMM reads them in whole 16-byte chunks";
    if (s->c * s->filt[0] * s->filt[1] > STEM_MAX_CRS) return "C x R x S above 256: too long a K for one im2col tile";
    stem_params &m = pl->prm;
    m.k = (int)s->k, m.c = (int)s->c, m.r = (int)s->filt[0], m.s = (int)s->filt[1];
    m.h = (int)s->in[0], m.w_in = (int)s->in[1], m.p = (int)s->out[0], m.q = (int)s->out[1];
    m.uh = s->stride[0], m.uw = s->stride[1], m.ph = s->pad[0], m.pw = s->pad[1];
    m.dh = s->dilation[0], m.dw = s->dilation[1], m.flip = s->flip;
    ocd_stem_strides(&p->x, m.xs), ocd_stem_strides(&p->w, m.fs), ocd_stem_strides(&p->y, m.ys);
    const int es = (int)ocd_dtype_scalar_size(p->x.dtype);
    const int kalign = wgrad ? 32 : 32 / es; /* the filter gradient splits C R S over two warps */
    m.th = stem_tile_rows(es), m.bm = m.th * STEM_TW;
    m.crs = m.c * m.r * m.s, m.kp = (m.crs + kalign - 1) / kalign * kalign, m.ld = m.kp + (wgrad ? 8 : 16 / es);
    const int64_t prow = (int64_t)(m.th - 1) * m.uh + (int64_t)(m.r - 1) * m.dh + 1;
    const int64_t pcol = (int64_t)(STEM_TW - 1) * m.uw + (int64_t)(m.s - 1) * m.dw + 1;
    const int64_t patch = prow * pcol * m.c;
    const int64_t first = (int64_t)(wgrad ? m.bm * STEM_DLD : STEM_BN * m.ld) * es;
    const int64_t bytes_a = (int64_t)m.bm * m.ld * es;
    const int64_t smem = first + bytes_a + (int64_t)m.kp * 4 + (patch * es + 15) / 16 * 16;
    if (smem > STEM_SMEM_MAX) return "the input patch of a tile does not fit in shared memory (stride or dilation)";
    m.prow = (int)prow, m.pcol = (int)pcol, m.pcc = (int)(pcol * m.c), m.patch = (int)patch;
    m.row_step = m.uh * m.pcc, m.col_step = m.uw * m.c;
    m.off_a = (int)first, m.off_koff = (int)(first + bytes_a), m.off_patch = m.off_koff + m.kp * 4;
    m.smem = (int)smem;
    const int64_t tiles_h = (m.p + m.th - 1) / m.th, tiles_w = (m.q + STEM_TW - 1) / STEM_TW;
    const int64_t tiles = s->n * tiles_h * tiles_w;
    if (tiles >= INT32_MAX) return OCD_REASON_SHAPE;
    m.tiles = (int)tiles;
    m.div_pcc = ocd_fastdiv_make((uint32_t)m.pcc), m.div_c = ocd_fastdiv_make((uint32_t)m.c);
    m.div_s = ocd_fastdiv_make((uint32_t)m.s);
    m.div_tw = ocd_fastdiv_make((uint32_t)tiles_w), m.div_th = ocd_fastdiv_make((uint32_t)tiles_h);
    m.typed.alpha = (float)p->alpha, m.typed.beta = (float)p->beta;
    pl->kblocks = (int)((s->k + STEM_BN - 1) / STEM_BN);
    if (pl->kblocks > 65535) return OCD_REASON_SHAPE;
    pl->dt = p->x.dtype;
    return NULL;
}

static const char *stem_fwd_plan(cudnnHandle_t h, const void *problem, void *plan)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    stem_plan *pl = (stem_plan *)plan;
    if (const char *why = stem_geometry(h, p, pl, false)) return why;
    if (p->ep.on) {
        /* the typed store takes a bias of y's type and a scale of y's type or fp32, one a filter,
           and (unproven) the scale and any step; any other runs through store */
        const struct ocd_tensor_view *b = &p->ep.bias_view, *sv = &p->ep.scale_view;
        const bool one = p->y.dims[1] == 1, fused = p->ep.scale_on || p->ep.act_on;
        const bool scale_typed = !p->ep.scale_on || ((sv->dtype == p->y.dtype || sv->dtype == CUDNN_DATA_FLOAT) &&
                                                     (sv->strides[1] == 1 || one));
        stem_params &m = pl->prm;
        m.wide = b->dtype != p->y.dtype || (b->strides[1] != 1 && !one) || !scale_typed ||
                 (fused && ocd_impl_unproven() != NULL);
        m.typed.relu = p->ep.relu;
        if (!m.wide) {
            m.typed.scale_f32 = sv->dtype == CUDNN_DATA_FLOAT;
            m.typed.scale_z = p->ep.scale_z, m.typed.scale_bias = p->ep.scale_bias;
            m.typed.act_on = p->ep.act_on;
            if (m.typed.act_on) m.typed.act = p->ep.act;
        }
    }
    return NULL;
}

/* The filter gradient: as many CTAs a filter block as two a multiprocessor (a plan cannot ask
   the device; more would only queue), each with its partial sums in the workspace. */
static const char *stem_wgrad_plan(cudnnHandle_t h, const void *problem, void *plan)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    stem_plan *pl = (stem_plan *)plan;
    if (const char *why = stem_geometry(h, p, pl, true)) return why;
    pl->grid = (int)OCD_MIN((int64_t)pl->prm.tiles, OCD_MAX((int64_t)2 * h->sm_count, (int64_t)1));
    pl->ws_part = (size_t)pl->kblocks * (size_t)pl->grid * STEM_BN * (size_t)pl->prm.kp * sizeof(float);
    return NULL;
}

static size_t stem_wgrad_workspace(cudnnHandle_t, const void *, const void *plan)
{
    return ((const stem_plan *)plan)->ws_part;
}

/* The plan's parameters bound to the call's data. */
static stem_params stem_bind(const struct ocd_conv_problem *p, const stem_plan *pl)
{
    stem_params m = pl->prm;
    m.x = p->x_data, m.w = p->w_data, m.y = p->y_data, m.z = p->y_data;
    if (p->ep.on) {
        m.typed.beta = p->ep.z != NULL ? (float)p->ep.alpha2 : 0.f, m.z = p->ep.z, m.typed.bias = p->ep.bias;
        if (m.wide) m.store = ocd_cuda_conv_store_of(p);
        else if (p->ep.scale_on) m.typed.scale = p->ep.scale;
    }
    const size_t pair_bytes = 2 * ocd_dtype_scalar_size(pl->dt);
    m.pair = !m.wide && m.ys[1] == 1 && (uintptr_t)m.y % pair_bytes == 0 && m.ys[0] % 2 == 0 && m.ys[2] % 2 == 0 &&
             m.ys[3] % 2 == 0;
    return m;
}

/* ---- launching ----------------------------------------------------------------------------------- */

template <typename T, bool FUSED> static cudnnStatus_t stem_launch(cudnnHandle_t h, const stem_params &m, int kblocks)
{
    static struct ocd_cuda_resident resident_state;
    int ctas;
    OCD_TRY(ocd_cuda_ctas_per_sm((const void *)stem_fwd_kernel<T, FUSED>, STEM_THREADS, STEM_SMEM_MAX, h->device,
                                 m.smem, &resident_state, &ctas));
    const int64_t resident = OCD_MAX((int64_t)ctas * h->sm_count / kblocks, (int64_t)1);
    const dim3 grid((unsigned)OCD_MIN((int64_t)m.tiles, resident), (unsigned)kblocks);
    stem_fwd_kernel<T, FUSED><<<grid, STEM_THREADS, (size_t)m.smem, h->stream>>>(m);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <typename T> static cudnnStatus_t stem_launch_of(cudnnHandle_t h, const stem_params &m, int kblocks)
{
    return stem_fused(m) ? stem_launch<T, true>(h, m, kblocks) : stem_launch<T, false>(h, m, kblocks);
}

static cudnnStatus_t stem_fwd_run(cudnnHandle_t h, const void *problem, const void *plan, void *, size_t)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const stem_plan *pl = (const stem_plan *)plan;
    const stem_params m = stem_bind(p, pl);
    switch (pl->dt) {
    case CUDNN_DATA_HALF: return stem_launch_of<__half>(h, m, pl->kblocks);
    case CUDNN_DATA_BFLOAT16: return stem_launch_of<__nv_bfloat16>(h, m, pl->kblocks);
    default: return stem_launch_of<float>(h, m, pl->kblocks);
    }
}

template <typename T> static cudnnStatus_t stem_wgrad_launch(cudnnHandle_t h, const stem_params &m, const stem_plan *pl)
{
    static struct ocd_cuda_resident resident_state;
    int ctas;
    OCD_TRY(ocd_cuda_ctas_per_sm((const void *)stem_wgrad_kernel<T>, STEM_THREADS, STEM_SMEM_MAX, h->device, m.smem,
                                 &resident_state, &ctas));
    stem_wgrad_kernel<T><<<dim3((unsigned)pl->grid, (unsigned)pl->kblocks), STEM_THREADS, (size_t)m.smem, h->stream>>>(m);
    OCD_CUDA_LAUNCHED();
    stem_wgrad_reduce<T><<<ocd_cuda_blocks((int64_t)m.k * m.crs, 256), 256, 0, h->stream>>>(m, pl->grid);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t stem_wgrad_run(cudnnHandle_t h, const void *problem, const void *plan, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const stem_plan *pl = (const stem_plan *)plan;
    if (ws_bytes < pl->ws_part)
        return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "stem filter gradient run with %zu bytes of workspace, %zu needed",
                        ws_bytes, pl->ws_part);
    stem_params m = stem_bind(p, pl);
    m.partial = (float *)ws;
    switch (pl->dt) {
    case CUDNN_DATA_HALF: return stem_wgrad_launch<__half>(h, m, pl);
    case CUDNN_DATA_BFLOAT16: return stem_wgrad_launch<__nv_bfloat16>(h, m, pl);
    default: return stem_wgrad_launch<float>(h, m, pl);
    }
}

extern "C" const struct ocd_impl_planned ocd_cuda_conv_stem_fwd_planned = {stem_fwd_plan, NULL, stem_fwd_run};
extern "C" const struct ocd_impl_planned ocd_cuda_conv_stem_wgrad_planned = {stem_wgrad_plan, stem_wgrad_workspace,
                                                                             stem_wgrad_run};
