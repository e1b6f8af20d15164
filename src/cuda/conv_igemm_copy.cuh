/* conv_igemm_copy.cuh: the implicit GEMM's operand copies (conv_igemm.cu plans and launches
   them): an NCHW-like activation transposed into packed NHWC, or its rows padded to a multiple of
   16 bytes (the TMA's TF32 filter gradient), an input padded to whole channel
   chunks (the padded forward pass, and the int8 one from vectorized layouts) and a filter packed
   into the GEMM's B layout, each element rounded to tf32 on the way for a TF32 plan. The
   index functions are host-callable, so that the CPU emulations check them. */
#ifndef OCD_CUDA_CONV_IGEMM_COPY_CUH
#define OCD_CUDA_CONV_IGEMM_COPY_CUH

#include "cuda/conv_igemm.cuh"
#include "cuda/mma.cuh"
#include "cuda/types.cuh"

#include <stdint.h>

/* An element as the copies store it (raw bits, U uint16_t or uint32_t): a TF32 plan's operands
   rounded to tf32 (cvt.rna) on the way, so that the sm_90a kernel, whose wgmma would truncate
   them, need not round them in shared memory (igemm_params round_a, round_b). The sm_80 kernel
   rounds its fragments again, which changes nothing. */
template <typename U> __host__ __device__ __forceinline__ U igemm_operand(U v, bool tf32)
{
    if (sizeof(U) == 4 && tf32) return (U)ocd_mma_to_tf32((uint32_t)v);
    return v;
}

/* [N][C][S] with strides (sn, sc, 1) -> packed [N][S][C], through 32 x 32 shared-memory tiles so
   that reads and writes are both coalesced. Block (32, 8); grid (S / 32, C / 32, <= N). */
template <typename U>
__global__ void igemm_to_nhwc(const U *src, U *dst, int64_t sn, int64_t sc, int c, int64_t s, int n, bool tf32)
{
    __shared__ U tile[32][33];
    const int64_t s0 = (int64_t)blockIdx.x * 32;
    const int c0 = blockIdx.y * 32;
    for (int img = blockIdx.z; img < n; img += gridDim.z) {
        const U *sp = src + img * sn;
        U *dp = dst + (int64_t)img * s * c;
        for (int j = threadIdx.y; j < 32; j += 8) {
            int64_t si = s0 + threadIdx.x;
            if (c0 + j < c && si < s) tile[j][threadIdx.x] = igemm_operand(sp[(c0 + j) * sc + si], tf32);
        }
        __syncthreads();
        for (int j = threadIdx.y; j < 32; j += 8) {
            int ci = c0 + threadIdx.x;
            if (ci < c && s0 + j < s) dp[(s0 + j) * c + ci] = tile[threadIdx.x][j];
        }
        __syncthreads();
    }
}

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
   (n, c, h' - ph, j uw - pw + s dw), zero outside it. dy: one tap, its rows padded (ws a
   multiple of 4, the rest 0). x: one copy per filter column s, shifted so that every tap's box
   starts at the K tile's first pixel (ws a multiple of 8), with the padding rows and columns
   written as zeros and the stride taken. */
struct igemm_rows {
    int64_t sn, sc, sh; /* the source's strides */
    uint32_t total;     /* taps * N * C * hs * ws, the elements written */
    int w, h;           /* the source's row length and rows */
    int uw, pw, dw, ph; /* (above) */
    ocd_fastdiv div_ws, div_hs, div_c, div_n;
};

/* Whether written element i has a source, and its offset in *src (host-callable). */
__host__ __device__ __forceinline__ bool igemm_rows_src(const igemm_rows &r, uint32_t i, int64_t *src)
{
    uint32_t j, hh, c, n;
    uint32_t rest = ocd_fastdiv_divmod(r.div_ws, i, &j);
    rest = ocd_fastdiv_divmod(r.div_hs, rest, &hh);
    rest = ocd_fastdiv_divmod(r.div_c, rest, &c);
    const uint32_t tap = ocd_fastdiv_divmod(r.div_n, rest, &n);
    const int col = (int)j * r.uw - r.pw + (int)tap * r.dw, row = (int)hh - r.ph;
    *src = n * r.sn + c * r.sc + (int64_t)row * r.sh + col;
    return col >= 0 && col < r.w && row >= 0 && row < r.h;
}

template <typename U> __global__ void igemm_pad_rows(const U *src, U *dst, const igemm_rows r, bool tf32)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < r.total; i += gridDim.x * blockDim.x) {
        int64_t from;
        dst[i] = igemm_rows_src(r, i, &from) ? igemm_operand(src[from], tf32) : U(0);
    }
}

/* The filter (K, C/G, T, R, S with any strides) re-packed densely as [G][A][T][R][S][B]: (A, B) =
   (K/G, C/G) for the forward pass (KRSC), (C/G, K/G) for backward data, whose taps are also
   mirrored in CONVOLUTION mode. One thread per destination element. */
struct igemm_filter_pack {
    int64_t sk, sc, st, sr, ss; /* sc per vector of 1 << vshift channels */
    int vshift;                 /* log2 of the filter's channels per vector (INT8x4, INT8x32), else 0 */
    int g, kg, cg, t, r, s;
    int cgp; /* C/G as packed: cg, or more for the padded forward pass (the extra channels zero) */
    int dgrad, flip;
};

/* Whether destination element i has a source (false: a padding channel, stored as zero) and its
   offset in *src (host-callable: see ocd_mma_cp_async<16> in mma.cuh). The offset may be negative:
   a stride phase of a CONVOLUTION-mode backward data pass reads its taps mirrored, through a
   filter view with negative strides from a base inside the filter (phase_problem). */
__host__ __device__ __forceinline__ bool igemm_filter_src(const igemm_filter_pack &f, int64_t i, int64_t *src)
{
    const int64_t a_n = f.dgrad ? f.cg : f.kg, b_n = f.dgrad ? f.kg : f.cgp;
    int64_t b = i % b_n;
    i /= b_n;
    int64_t ss = i % f.s;
    i /= f.s;
    int64_t rr = i % f.r;
    i /= f.r;
    int64_t tt = i % f.t;
    i /= f.t;
    int64_t a = i % a_n, g = i / a_n;
    int64_t k = f.dgrad ? b : a, c = f.dgrad ? a : b;
    if (c >= f.cg) return false;
    if (f.flip) tt = f.t - 1 - tt, rr = f.r - 1 - rr, ss = f.s - 1 - ss;
    *src = (g * f.kg + k) * f.sk + igemm_vector_channel(c, f.vshift, f.sc) + tt * f.st + rr * f.sr + ss * f.ss;
    return true;
}

template <typename U> __global__ void igemm_pack_filter(const U *w, U *dst, const igemm_filter_pack f, bool tf32)
{
    const int64_t total = (int64_t)f.g * f.kg * f.cgp * f.t * f.r * f.s;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t src;
        dst[i] = igemm_filter_src(f, i, &src) ? igemm_operand(w[src], tf32) : U(0);
    }
}

#endif /* OCD_CUDA_CONV_IGEMM_COPY_CUH */
