/* conv_igemm_copy.cuh: the implicit GEMM's operand copies (conv_igemm.cu plans and launches
   them): an NCHW-like activation transposed into packed NHWC (and an output back out of it), or
   its rows padded to a multiple of 16 bytes (the TMA's TF32 filter gradient), an input padded
   to whole channel chunks (the padded forward pass, and the int8 one from vectorized layouts)
   and a filter packed into the GEMM's B layout, each operand element rounded to tf32 on the way
   for a TF32 plan. The index functions are host-callable, so that the CPU emulations check
   them. */
#ifndef OCD_CUDA_CONV_IGEMM_COPY_CUH
#define OCD_CUDA_CONV_IGEMM_COPY_CUH

#include "cuda/conv_igemm.cuh"
#include "cuda/mma.cuh"
#include "cuda/transpose.cuh"
#include "cuda/types.cuh"

#include <stdint.h>
#include <string.h>

/* An element as the copies store it (raw bits, U uint16_t or uint32_t): a TF32 plan's operands
   rounded to tf32 (cvt.rna) on the way, so that the sm_90a kernel, whose wgmma would truncate
   them, need not round them in shared memory (igemm_params round_a, round_b). The sm_80 kernel
   rounds its fragments again, which changes nothing. */
template <typename U> __host__ __device__ __forceinline__ U igemm_operand(U v, bool tf32)
{
    if (sizeof(U) == 4 && tf32) return (U)ocd_mma_to_tf32((uint32_t)v);
    return v;
}

/* The store of the copies between an NCHW-like activation and packed NHWC (cuda/transpose.cuh's
   Put; conv_igemm.cu's launch_nhwc_copy): each element as igemm_operand makes it (an operand
   rounded to tf32 for a TF32 plan; the output, tf32 false, as it is). */
template <typename U> struct igemm_nhwc_put {
    bool tf32;
    template <int V> __device__ __forceinline__ void operator()(U *dst, ocd_vec<U, V> w) const
    {
#pragma unroll
        for (int k = 0; k < V; k++) w.v[k] = igemm_operand(w.v[k], tf32);
        *reinterpret_cast<ocd_vec<U, V> *>(dst) = w;
    }
};

/* A planned copy of the input into packed [N][D][H][W][CP], channels C..CP-1 zero (the padded
   forward pass, and the int8 one from vectorized layouts); every index below 2^31. */
struct igemm_pad {
    int64_t sn, sc, sd, sh, sw; /* the source's strides (sc per vector of 1 << vshift channels) */
    int vshift;                 /* log2 of the source's channels per vector (INT8x4, INT8x32), else 0 */
    uint32_t total;             /* N * D * H * W * CP */
    int c;
    ocd_fastdiv div_cp, div_w, div_h, div_d;
};

/* Whether destination element i has a source (false: a padding channel, stored as zero) and its
   offset in the source (host-callable, as igemm_filter_src below). */
__host__ __device__ __forceinline__ bool igemm_pad_src(const igemm_pad &p, uint32_t i, int64_t *src)
{
    uint32_t ci, w, h, d, rest;
    rest = ocd_fastdiv_divmod(p.div_cp, i, &ci);
    rest = ocd_fastdiv_divmod(p.div_w, rest, &w);
    rest = ocd_fastdiv_divmod(p.div_h, rest, &h);
    uint32_t img = ocd_fastdiv_divmod(p.div_d, rest, &d);
    *src = img * p.sn + igemm_vector_channel(ci, p.vshift, p.sc) + d * p.sd + h * p.sh + w * p.sw;
    return (int)ci < p.c;
}

/* One thread per destination element (raw bits: 0 is +0.0 in every type). */
template <typename U> __global__ void igemm_pad_channels(const U *src, U *dst, const igemm_pad p, bool tf32)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.total; i += gridDim.x * blockDim.x) {
        int64_t from;
        dst[i] = igemm_pad_src(p, i, &from) ? igemm_operand(src[from], tf32) : U(0);
    }
}

/* A planned copy of an NCHW-like activation (2-D, its pixels consecutive along a row) into
   packed rows for the k32 filter gradient of conv_igemm_tma.cuh, whose tensor maps need strides
   of whole 16 bytes and, in the TMA's tiled mode, a box whose first element is 16-byte aligned
   and inside the tensor: destination [tap][N][C][hs][ws], element (s, n, c, h', j) the source's
   (n, c, h' uh - ph, j uw - pw + s dw), zero outside it. dy: one tap, its rows padded (ws a
   multiple of 4, the rest 0). x: one copy per filter column s, shifted so that every tap's box
   starts at the K tile's first pixel (ws a multiple of 8), with the padding rows and columns
   written as zeros and the stride taken. A thread writes four elements of every copy, so that x
   is read from memory once, not once a copy (its other copies' reads hit L1). */
struct igemm_rows {
    int64_t sn, sc, sh;     /* the source's strides */
    uint32_t total;         /* N * C * hs * ws, the elements of one copy */
    int taps;               /* the copies, one after another */
    int w, h;               /* the source's row length and rows */
    int uw, pw, dw, uh, ph; /* (above) */
    ocd_fastdiv div_ws, div_hs, div_c;
};

/* Elements i .. i + 3 of a copy (i a multiple of 4: ws is, so they lie in one row): the source
   offset of the row (base), the first column of copy 0 (col0) and whether the row is in x. One
   decode of the row a four, for every copy (host-callable). */
struct igemm_rows_at {
    int64_t base;
    int col0;
    bool row_in;
};
__host__ __device__ __forceinline__ igemm_rows_at igemm_rows_locate(const igemm_rows &r, uint32_t i)
{
    uint32_t j, hh, c;
    uint32_t rest = ocd_fastdiv_divmod(r.div_ws, i, &j);
    rest = ocd_fastdiv_divmod(r.div_hs, rest, &hh);
    const uint32_t n = ocd_fastdiv_divmod(r.div_c, rest, &c);
    const int row = (int)hh * r.uh - r.ph;
    return {n * r.sn + c * r.sc + (int64_t)row * r.sh, (int)j * r.uw - r.pw, row >= 0 && row < r.h};
}

/* Four elements a thread of every copy, each stored at once (r.total is a multiple of 4; dst
   16-byte aligned): thread q's part (host-callable, for the emulations). */
template <typename U> struct alignas(4 * sizeof(U)) igemm_four {
    U v[4];
};
template <typename U>
__host__ __device__ __forceinline__ void igemm_pad_four(const U *src, U *dst, const igemm_rows &r, uint32_t q,
                                                        bool tf32)
{
    const igemm_rows_at at = igemm_rows_locate(r, 4 * q);
    for (int tap = 0; tap < r.taps; tap++) {
        igemm_four<U> out;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int col = at.col0 + e * r.uw + tap * r.dw;
            out.v[e] = at.row_in && col >= 0 && col < r.w ? igemm_operand(src[at.base + col], tf32) : U(0);
        }
        reinterpret_cast<igemm_four<U> *>(dst + (size_t)tap * r.total)[q] = out;
    }
}
template <typename U> __global__ void igemm_pad_rows(const U *src, U *dst, const igemm_rows r, bool tf32)
{
    for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < r.total / 4; q += gridDim.x * blockDim.x)
        igemm_pad_four(src, dst, r, q, tf32);
}

/* The filter (K, C/G, T, R, S with any strides) re-packed densely as [G][A][T][R][S][B]: (A, B) =
   (K/G, C/G) for the forward pass (KRSC), (C/G, K/G) for backward data, whose taps are also
   mirrored in CONVOLUTION mode. Two forms:
   - element by element (igemm_pack_filter): one thread a destination element, its source through
     the 32-bit index map below (64-bit divisions cost the kernel 320 instructions an element);
   - tiled (igemm_pack_filter_tiled), where the source's A runs are contiguous and its B runs are
     not (backward data from a KRSC filter, every 16-bit NHWC backward pass): a warp writing a
     run of B would read 32 filters' channels, a sector each (ResNet-50's 3x3 512 -> 512 filter:
     37 us of the 85 us of its backward data on an H100), so 32 x 32 tiles of (A, B) of one tap
     pass through shared memory, read along A and written along B. From IGEMM_PACK_TILED_MIN
     elements: on an H100 (2026-12-07) it took 0.91 of the whole backward data's time on the
     3x3 512 filter (2.4 M elements), 0.95 on the 256 one (590 K), 0.93 on the 512 stride-2
     phases (262 K to 1 M a phase), but 1.06-1.09 on the 128 and 256 stride-2 phases (16 K to
     262 K), whose few tiles leave the GPU idler than one thread an element does. */
#ifndef IGEMM_PACK_TILED_MIN /* (the emulations lower it, so that their small filters take both forms) */
#define IGEMM_PACK_TILED_MIN (1 << 19)
#endif
struct igemm_filter_pack {
    int64_t sk, sc, st, sr, ss; /* sc per vector of 1 << vshift channels */
    int vshift;                 /* log2 of the filter's channels per vector (INT8x4, INT8x32), else 0 */
    int g, kg, cg, t, r, s;
    int cgp; /* C/G as packed: cg, or more for the padded forward pass (the extra channels zero) */
    int dgrad, flip;
    int a_n, b_n, taps;                            /* A's and B's extents, t r s */
    ocd_fastdiv div_b, div_s, div_r, div_t, div_a; /* the index map of a packed element */
    bool tiled;                                    /* igemm_pack_filter_tiled */
};

/* The pack of a filter of strides wst ([K][C][T][R][S], vectors of 1 << vshift channels) into
   f; NULL, or why not. */
static inline const char *igemm_filter_pack_make(igemm_filter_pack *f, const int64_t wst[5], int vshift, int g, int kg,
                                                 int cg, int cgp, int t, int r, int s, bool dgrad, bool flip)
{
    memset(f, 0, sizeof *f);
    f->sk = wst[0], f->sc = wst[1], f->st = wst[2], f->sr = wst[3], f->ss = wst[4];
    f->vshift = vshift;
    f->g = g, f->kg = kg, f->cg = cg, f->cgp = cgp, f->t = t, f->r = r, f->s = s;
    f->dgrad = dgrad, f->flip = dgrad && flip;
    f->a_n = dgrad ? cg : kg, f->b_n = dgrad ? kg : cgp, f->taps = t * r * s;
    if ((int64_t)g * f->a_n * f->taps * f->b_n >= ((int64_t)1 << 31))
        return "a filter of 2^31 elements or more (the pack's 32-bit index map)";
    f->div_b = ocd_fastdiv_make((uint32_t)f->b_n), f->div_s = ocd_fastdiv_make((uint32_t)s);
    f->div_r = ocd_fastdiv_make((uint32_t)r), f->div_t = ocd_fastdiv_make((uint32_t)t);
    f->div_a = ocd_fastdiv_make((uint32_t)f->a_n);
    f->tiled = dgrad && vshift == 0 && f->sc == 1 && f->sk != 1 && (int64_t)g * f->taps <= 65535 &&
               (f->a_n + 31) / 32 <= 65535 && (int64_t)g * f->a_n * f->taps * f->b_n >= IGEMM_PACK_TILED_MIN;
    return NULL;
}

/* The source of packed element (group g, a, tap (tt, rr, ss) as packed, b): false where it has
   none (a padding channel, stored as zero), else its offset in *src. The offset may be negative:
   a stride phase of a CONVOLUTION-mode backward data pass reads its taps mirrored, through a
   filter view with negative strides from a base inside the filter (phase_problem). */
__host__ __device__ __forceinline__ bool igemm_filter_at(const igemm_filter_pack &f, int g, int a, int tt, int rr,
                                                         int ss, int b, int64_t *src)
{
    const int k = f.dgrad ? b : a, c = f.dgrad ? a : b;
    if (c >= f.cg) return false;
    if (f.flip) tt = f.t - 1 - tt, rr = f.r - 1 - rr, ss = f.s - 1 - ss;
    *src = (int64_t)(g * f.kg + k) * f.sk + igemm_vector_channel(c, f.vshift, f.sc) + tt * f.st + rr * f.sr +
           ss * f.ss;
    return true;
}

/* q = rest * taps + tap as (rest, the tap's (tt, rr, ss)): the packed order's tap digits. */
__host__ __device__ __forceinline__ uint32_t igemm_filter_tap_of(const igemm_filter_pack &f, uint32_t q, int *tt,
                                                                 int *rr, int *ss)
{
    uint32_t t, r, s;
    q = ocd_fastdiv_divmod(f.div_s, q, &s);
    q = ocd_fastdiv_divmod(f.div_r, q, &r);
    q = ocd_fastdiv_divmod(f.div_t, q, &t);
    *tt = (int)t, *rr = (int)r, *ss = (int)s;
    return q;
}

/* Whether destination element i has a source and its offset in *src (igemm_filter_at; host-callable:
   see ocd_mma_cp_async<16> in mma.cuh). */
__host__ __device__ __forceinline__ bool igemm_filter_src(const igemm_filter_pack &f, uint32_t i, int64_t *src)
{
    uint32_t b, a;
    int tt, rr, ss;
    const uint32_t q = igemm_filter_tap_of(f, ocd_fastdiv_divmod(f.div_b, i, &b), &tt, &rr, &ss);
    const uint32_t g = ocd_fastdiv_divmod(f.div_a, q, &a);
    return igemm_filter_at(f, (int)g, (int)a, tt, rr, ss, (int)b, src);
}

template <typename U> __global__ void igemm_pack_filter(const U *w, U *dst, const igemm_filter_pack f, bool tf32)
{
    const uint32_t total = (uint32_t)f.g * f.a_n * f.taps * f.b_n;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        int64_t src;
        dst[i] = igemm_filter_src(f, i, &src) ? igemm_operand(w[src], tf32) : U(0);
    }
}

/* The tiled form's block (bx, by, bz) = (B tile, A tile, group and tap), 32 x 8 threads (tx, ty), a
   32 x 33 tile of U in shared memory; grid (ceil(b_n / 32), ceil(a_n / 32), g taps). Its two
   phases, host-callable for the emulations: each thread reads rows ty, ty + 8, ... of the tile
   (b = 32 bx + row) at a = 32 by + tx, then writes them transposed: a = 32 by + row at
   b = 32 bx + tx, the packed row's consecutive elements. */
struct igemm_pack_block {
    int g, tt, rr, ss, tap, a0, b0;
    __host__ __device__ __forceinline__ igemm_pack_block(const igemm_filter_pack &f, int bx, int by, int bz)
    {
        g = (int)igemm_filter_tap_of(f, (uint32_t)bz, &tt, &rr, &ss), tap = bz - g * f.taps;
        a0 = 32 * by, b0 = 32 * bx;
    }
};
template <typename U>
__host__ __device__ __forceinline__ void igemm_pack_tile_read(const igemm_filter_pack &f, const igemm_pack_block &k,
                                                              const U *w, U (*tile)[33], int tx, int ty, bool tf32)
{
    const int a = k.a0 + tx;
    for (int row = ty; row < 32; row += 8) {
        const int b = k.b0 + row;
        int64_t src;
        if (a < f.a_n && b < f.b_n)
            tile[row][tx] = igemm_filter_at(f, k.g, a, k.tt, k.rr, k.ss, b, &src) ? igemm_operand(w[src], tf32) : U(0);
    }
}
template <typename U>
__host__ __device__ __forceinline__ void igemm_pack_tile_write(const igemm_filter_pack &f, const igemm_pack_block &k,
                                                               U *dst, const U (*tile)[33], int tx, int ty)
{
    const int b = k.b0 + tx;
    for (int row = ty; row < 32; row += 8) {
        const int a = k.a0 + row;
        if (a < f.a_n && b < f.b_n) dst[((int64_t)(k.g * f.a_n + a) * f.taps + k.tap) * f.b_n + b] = tile[tx][row];
    }
}

template <typename U> __global__ void igemm_pack_filter_tiled(const U *w, U *dst, const igemm_filter_pack f, bool tf32)
{
    __shared__ U tile[32][33];
    const igemm_pack_block k(f, blockIdx.x, blockIdx.y, blockIdx.z);
    igemm_pack_tile_read(f, k, w, tile, threadIdx.x, threadIdx.y, tf32);
    __syncthreads();
    igemm_pack_tile_write(f, k, dst, tile, threadIdx.x, threadIdx.y);
}

#endif /* OCD_CUDA_CONV_IGEMM_COPY_CUH */
