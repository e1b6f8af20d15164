/* conv_cublas.cu: convolutions as cuBLAS GEMMs, in every direction, for packed NHWC and packed
   NCHW activations (conv_igemm.h declares the entries).

   Main decision: the column matrix ("im2col") is laid out so that one strided-batched GEMM per
   call does the work and the filter is used as it lies: its row of K/G * T*R*S elements in the
   filter's own order (KRSC for an NHWC-format filter, KCRS otherwise) is the GEMM K dimension,
   and the column matrix orders its K the same way. A 1x1 filter with unit stride and no padding
   needs no column matrix at all: the activation is the GEMM operand ("gemm1x1", no workspace).
     NHWC: col[n*P*Q][G][K/G-of-C] (one GEMM batched over groups)
     NCHW: col[N][G][C/G*T*R*S][P*Q] (one GEMM per group, batched over images)
   Forward: y = w * col (alpha, beta straight to cuBLAS, which reads y only when beta != 0). A
   strided 1x1 filter without padding on NHWC data (ResNet's downsampling layers) is taken by the
   gemm1x1 entries too ("gather"), forward and for the filter gradient: its column matrix is the
   output pixels' input pixels, whole rows of channels that the im2col kernel copies 16 bytes at a
   time, then one GEMM as for any column matrix. (A strided batch of one GEMM per output row, x read
   in place, would read the whole filter again for every row.) The fused forward (problem/conv.h's
   epilogue: z, a bias, a per-channel scale, an activation), y = act(alpha1 * conv + alpha2 * z +
   bias), takes the first of three ways that serves (the plan's epi):
   - ConvBiasAct on NHWC data, one group, not double, a bias of y's type with consecutive
     channels on a 16-byte boundary, RELU or IDENTITY: one cuBLASLt matmul (cublaslt_matmul.h)
     D = epilogue(alpha * op(A) op(B) + beta * C + bias) with D = y, B = x (a 1x1 filter, unit
     stride, no padding) or the column matrix (after the im2col kernel), alpha = alpha1, C = z and beta = alpha2 (C = y where z is y, or
     where there is none, then beta 0), the epilogue RELU_BIAS or BIAS with the bias along D's
     rows, the output channels; cuBLASLt's order (beta * C, then the bias, then max(x, 0)) is
     the call's, in float, one rounding at the store. Where cuBLASLt declines (not loaded, no
     algorithm) the typed pass below serves.
   - the same epilogue otherwise (NCHW, groups, double too): the GEMM into y, then a pass of
     compile-time types over y, 16 bytes a thread where the rows and the pointers allow
     (cublas_bias_act).
   - otherwise (a scale, another activation, another bias): the GEMM into y, then one pass
     over y that finishes each element in place through the store of the direct kernels
     (conv_store.cuh, run-time types).
   The two passes run with alpha 1: the GEMM writes alpha * conv, plus alpha2 * z when z is y
   itself (the legacy call allows it; the pass would read z after the GEMM overwrote it), which
   is why a scale that leaves z unscaled declines a z.
   Backward data: dcol = w^T * dy in fp32 (fp64 for double) in the workspace, then col2im gathers
   each dx element from the dcol entries that read it (deterministic) and applies alpha and beta.
   Backward filter: dw = dy^T * col, the sum over images and pixels being the GEMM K dimension.
   NHWC has it as it lies. NCHW has it per image, dw_n[K][C R S] = dy_n[K][P Q] * col_n[C R S][P Q]^T
   (col_n = x_n itself for a 1x1 filter at unit stride without padding), both operands K-major
   (TN: what TF32 tensor cores take as they lie): the wgrad_nchw_gemm entries run it as one
   strided-batched GEMM per group over the images, each image's product into a slab of its own
   in fp32 (fp64), and a last kernel sums the slabs (ocd_slab_sum_kernel, a fixed order:
   deterministic) with alpha and beta. Where the images have few pixels the slabs would outweigh
   the operands, and the other entries first lay both operands out channel-major over all images,
   [G][channel or kk][N][P*Q] (col by the im2col kernel, dy by the same kernel as a 1x1
   "im2col"), so that one GEMM per group does the whole sum (a GEMM per image accumulating into
   dw in turn left the device mostly idle). That GEMM is skinny (K/G x C/G*R*S outputs, N*P*Q
   deep): without groups its K is cut into chunks, one strided-batched GEMM writes a partial
   product per chunk, and the same kernel sums them.
   Strided 1x1 filters without padding (ResNet's downsampling shortcuts) where "gather" does not
   serve (the NCHW forward, backward data): gemm1x1 serves them too for float and
   double data, its column matrix x's subsample (a quarter of x at stride 2),
   backward data's dcol scattered back by col2im, or into packed NCHW 2-D dx by a pass of its
   own (cublas_scatter1x1: four elements of dx a thread, whole sectors a warp; 0.32 and 0.42 of
   col2im's time on ResNet-50's l2 and l3 downsampling shortcuts at batch 64, an H100).
   Float NCHW images of fewer than 100 output pixels (ResNet-50's 7x7 layers), forward and
   backward data of a 1x1 filter without a fused epilogue, run "channel-major" on the tensor-core
   flavour: the per-image GEMMs there have under 100 columns, on which cuBLAS's TF32 kernels ran
   at the fp32 FMA rate (50-53 TFLOP/s on an H100, 2.0-2.6 times the vendor's time at batch 256),
   so the activation is laid out [G][C/G][N][P Q] by the im2col kernel (x, or dy as a 1x1
   "im2col"), one GEMM a group writes the output [G][K/G or C/G][N][P Q] into the workspace, and
   the elementwise engine (ops/tensor_ops.h) moves it into y or dx with beta (0.43-0.88 of the
   image-by-image time forward, 0.75-0.99 backward, an H100, batch 64 and 256); with a stride,
   into the pixels of dx the filter reaches, dx scaled by beta first (channel_major_dst; 0.57 of
   the image-by-image time on the l4 downsampling shortcut at batch 64). The plain flavour stays
   image by image without workspace, which IMPLICIT_GEMM and backward ALGO_0 need.

   The tensor-core flavour (the _tc entries) computes fp16 and bf16 with fp32 accumulation and
   fp32 as TF32 (CUBLAS_COMPUTE_32F_FAST_TF32); the plain flavour computes fp32 and fp64. */
#include "cuda/conv_igemm.h"

#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/conv_cublas_sum.cuh"
#include "cuda/conv_store.cuh"
#include "cuda/cublas_loader.h"
#include "cuda/cublaslt_matmul.h"
#include "cuda/types.cuh"
#include "ops/tensor_ops.h"

#include <string.h>

/* ---- the column kernels ------------------------------------------------------------------------ */

/* Both column kernels give each thread a run of COL_RUN consecutive elements of their output along
   its fastest dimension (runs split at row ends): the element's coordinates are decoded once per
   run by fast 32-bit division, then stepped. Offsets are 32-bit: make_plan keeps every index of
   the column matrix and the activations under 2^31, and coordinates outside the tensor (padding)
   are compared unsigned, so a wrapped negative one reads as out of range. Decoding each element
   by itself (about 190 instructions an element) made these kernels instruction-bound. */
#define COL_RUN 8
#define COL_DIGITS 8 /* digits of an im2col row index: n, g, channel, t, r, s, oz, op at most */

struct col_geom {
    int64_t n, g, cg, kc; /* images, groups, channels per group, column-matrix K = cg * t * r * s */
    int64_t d, h, w;      /* input extents */
    int64_t z, p, q;      /* output extents */
    int64_t sn, sc, sd, sh, sw; /* the activation's strides (x or dx) */
    int t, r, s, pd, ph, pw, ud, uh, uw, dd, dh, dw;
    int flip, krsc, nhwc;
    int kmajor; /* NCHW backward filter: the column matrix is [G][kc][N][P*Q] */
    int vec_rows; /* NHWC rows of channels read 16 bytes at a time (the gathered strided 1x1) */
    /* col2im: dx rows (w of one (n, c, d, h) in NCHW; the channels of one group and pixel in
       NHWC), cut into runs */
    uint32_t runs, run_count; /* runs per row, runs in all */
    ocd_fastdiv div_runs, div_c, div_g, div_cg, div_d, div_h, div_w, div_ud, div_uh, div_uw;
};

/* im2col as rows: the column matrix, in memory order, is rows of len elements along its fastest
   dimension (oq for the NCHW layouts, the channel or the s tap for NHWC, or a whole output plane
   when a 1x1 filter with unit stride and no padding reads a packed plane as it lies). The row index
   is a mixed-radix number whose digits (n, g, channel, taps, oz, op, fastest first) each add a
   fixed amount to the source's channel offset and to its z, h and w coordinates; along the row,
   the source offset steps by `step` and the w coordinate by `du`. */
struct col_rows {
    uint32_t len, count;  /* row length; runs in all */
    ocd_fastdiv div_runs; /* runs per row */
    int ndig;
    ocd_fastdiv radix[COL_DIGITS]; /* every digit's but the last, which is the quotient */
    uint32_t coef[COL_DIGITS][4];  /* per digit: n/c offset, z, h, w (two's complement) */
    uint32_t base[4];
    uint32_t step, du;             /* along the row: source offset and w per element */
    uint32_t d, h, w, sd, sh, sw;  /* coordinate limits and strides */
    bool vec_load, vec_store; /* plane or channel rows from aligned sources; rows of whole 16-byte packs */
};

enum col_digit { COL_N, COL_G, COL_C, COL_T, COL_R, COL_S, COL_OZ, COL_OP, COL_OQ };

/* Appends a digit (as the slowest so far); digits of extent 1 are always 0 and are left out. */
static void col_rows_digit(col_rows &cr, const col_geom &gm, enum col_digit which)
{
    const int64_t f = gm.flip ? -1 : 1; /* CONVOLUTION mode mirrors the taps */
    int64_t radix = 1, c[4] = {0, 0, 0, 0};
    switch (which) {
    case COL_N: radix = gm.n, c[0] = gm.sn; break;
    case COL_G: radix = gm.g, c[0] = gm.cg * gm.sc; break;
    case COL_C: radix = gm.cg, c[0] = gm.sc; break;
    case COL_T: radix = gm.t, c[1] = f * gm.dd; break;
    case COL_R: radix = gm.r, c[2] = f * gm.dh; break;
    case COL_S: radix = gm.s, c[3] = f * gm.dw; break;
    case COL_OZ: radix = gm.z, c[1] = gm.ud; break;
    case COL_OP: radix = gm.p, c[2] = gm.uh; break;
    case COL_OQ: radix = gm.q, c[3] = gm.uw; break;
    }
    if (radix == 1) return;
    cr.radix[cr.ndig] = ocd_fastdiv_make((uint32_t)radix);
    for (int e = 0; e < 4; e++) cr.coef[cr.ndig][e] = (uint32_t)c[e];
    cr.ndig++;
}

/* The rows of im2col(x) for geometry gm (esize: bytes per element). */
static col_rows col_rows_of(const col_geom &gm, const void *x, size_t esize)
{
    col_rows cr;
    memset(&cr, 0, sizeof cr);
    const int64_t f = gm.flip ? -1 : 1, vec = (int64_t)(16 / esize);
    cr.base[1] = (uint32_t)(-gm.pd + (gm.flip ? (int64_t)(gm.t - 1) * gm.dd : 0));
    cr.base[2] = (uint32_t)(-gm.ph + (gm.flip ? (int64_t)(gm.r - 1) * gm.dh : 0));
    cr.base[3] = (uint32_t)(-gm.pw + (gm.flip ? (int64_t)(gm.s - 1) * gm.dw : 0));
    cr.d = (uint32_t)gm.d, cr.h = (uint32_t)gm.h, cr.w = (uint32_t)gm.w;
    cr.sd = (uint32_t)gm.sd, cr.sh = (uint32_t)gm.sh, cr.sw = (uint32_t)gm.sw;
    /* the channel digits in the filter's order (KRSC: c fastest; KCRS: s fastest) */
    static const enum col_digit krsc[] = {COL_C, COL_S, COL_R, COL_T}, kcrs[] = {COL_S, COL_R, COL_T, COL_C};
    const enum col_digit *taps = gm.krsc ? krsc : kcrs;
    bool plane = false;
    if (gm.nhwc) {
        /* col[n][opix][g][kk]: rows along kk's fastest digit */
        cr.len = (uint32_t)(gm.krsc ? gm.cg : gm.s);
        cr.step = (uint32_t)(gm.krsc ? gm.sc : f * gm.dw * gm.sw), cr.du = gm.krsc ? 0 : (uint32_t)(f * gm.dw);
        for (int k = 1; k < 4; k++) col_rows_digit(cr, gm, taps[k]);
        static const enum col_digit rest[] = {COL_G, COL_OQ, COL_OP, COL_OZ, COL_N};
        for (enum col_digit dg : rest) col_rows_digit(cr, gm, dg);
    } else {
        /* col[n][g][kk][opix] or [g][kk][n][opix]: rows along oq, or whole planes */
        plane = gm.t * gm.r * gm.s == 1 && gm.ud * gm.uh * gm.uw == 1 && gm.pd + gm.ph + gm.pw == 0 && gm.sw == 1 &&
                gm.sh == gm.w && (gm.d == 1 || gm.sd == gm.h * gm.w);
        cr.len = (uint32_t)(plane ? gm.z * gm.p * gm.q : gm.q);
        cr.step = plane ? 1 : (uint32_t)(gm.uw * gm.sw), cr.du = plane ? 0 : (uint32_t)gm.uw;
        if (!plane) col_rows_digit(cr, gm, COL_OP), col_rows_digit(cr, gm, COL_OZ);
        if (gm.kmajor) col_rows_digit(cr, gm, COL_N);
        for (int k = 0; k < 4; k++) col_rows_digit(cr, gm, taps[k]);
        col_rows_digit(cr, gm, COL_G);
        if (!gm.kmajor) col_rows_digit(cr, gm, COL_N);
    }
    const uint32_t runs = (cr.len + COL_RUN - 1) / COL_RUN;
    cr.div_runs = ocd_fastdiv_make(runs);
    cr.count = (uint32_t)(gm.n * gm.z * gm.p * gm.q * gm.g * gm.kc / cr.len) * runs;
    cr.vec_store = cr.len % vec == 0;
    const bool channels = gm.nhwc && gm.vec_rows && gm.krsc && gm.sc == 1 && gm.sh % vec == 0 && gm.sw % vec == 0 &&
                          gm.sd % vec == 0;
    cr.vec_load = (channels || (plane && gm.sc % vec == 0)) && cr.vec_store && gm.sn % vec == 0 &&
                  (uintptr_t)x % 16 == 0;
    return cr;
}

/* col = im2col(x), runs first, first + step, ... (rows cut in runs of COL_RUN). The kernels below
   run these loops with one thread per run; they are host-callable (like the implicit GEMM's
   loaders) so that their index arithmetic can be exercised without a GPU. */
template <typename T>
__host__ __device__ void cublas_im2col_range(const T *x, T *col, const col_rows &cr, uint32_t first, uint32_t step)
{
    const int VEC = 16 / sizeof(T);
    for (uint32_t v = first; v < cr.count; v += step) {
        uint32_t j0, row = ocd_fastdiv_divmod(cr.div_runs, v, &j0), rest = row;
        j0 *= COL_RUN;
        uint32_t a[4] = {cr.base[0], cr.base[1], cr.base[2], cr.base[3]}; /* n/c offset, z, h, w */
#pragma unroll
        for (int k = 0; k < COL_DIGITS; k++) {
            if (k >= cr.ndig) break;
            uint32_t digit = rest;
            if (k < cr.ndig - 1) rest = ocd_fastdiv_divmod(cr.radix[k], rest, &digit);
#pragma unroll
            for (int e = 0; e < 4; e++) a[e] += digit * cr.coef[k][e];
        }
        const uint32_t ulim = a[1] < cr.d && a[2] < cr.h ? cr.w : 0, n = cr.len - j0;
        const uint32_t off = a[0] + a[1] * cr.sd + a[2] * cr.sh + a[3] * cr.sw + j0 * cr.step, u = a[3] + j0 * cr.du;
        ocd_vec16<T> val[COL_RUN / VEC];
        if (cr.vec_load && n >= COL_RUN) { /* a plane row, or a pixel's channels: all in the source or none */
            const bool in = u < ulim;
#pragma unroll
            for (int j = 0; j < COL_RUN; j += VEC) {
                if (in) val[j / VEC] = *reinterpret_cast<const ocd_vec16<T> *>(x + off + j);
                else
                    for (int e = 0; e < VEC; e++) val[j / VEC].v[e] = T(0);
            }
        } else {
#pragma unroll
            for (int j = 0; j < COL_RUN; j++)
                val[j / VEC].v[j % VEC] = (uint32_t)j < n && u + j * cr.du < ulim ? x[off + j * cr.step] : T(0);
        }
        T *dst = col + row * cr.len + j0;
        if (cr.vec_store && n >= COL_RUN) {
#pragma unroll
            for (int j = 0; j < COL_RUN; j += VEC) *reinterpret_cast<ocd_vec16<T> *>(dst + j) = val[j / VEC];
        } else {
#pragma unroll
            for (int j = 0; j < COL_RUN; j++)
                if ((uint32_t)j < n) dst[j] = val[j / VEC].v[j % VEC];
        }
    }
}

/* The col2im rows (col_geom) and the fast divisions of a geometry whose extents are set. */
static void col_geom_finish(col_geom &gm)
{
    const uint32_t len = (uint32_t)(gm.nhwc ? gm.cg : gm.w);
    gm.runs = (len + COL_RUN - 1) / COL_RUN;
    gm.run_count = (uint32_t)(gm.n * gm.g * gm.cg * gm.d * gm.h * gm.w / len) * gm.runs;
    gm.div_runs = ocd_fastdiv_make(gm.runs);
    gm.div_c = ocd_fastdiv_make((uint32_t)(gm.g * gm.cg)), gm.div_g = ocd_fastdiv_make((uint32_t)gm.g);
    gm.div_cg = ocd_fastdiv_make((uint32_t)gm.cg), gm.div_d = ocd_fastdiv_make((uint32_t)gm.d);
    gm.div_h = ocd_fastdiv_make((uint32_t)gm.h), gm.div_w = ocd_fastdiv_make((uint32_t)gm.w);
    gm.div_ud = ocd_fastdiv_make((uint32_t)gm.ud), gm.div_uh = ocd_fastdiv_make((uint32_t)gm.uh);
    gm.div_uw = ocd_fastdiv_make((uint32_t)gm.uw);
}

/* (v - tap * dilation + pad) / stride when that is an output index below out, else -1 (v, pad,
   tap * dilation all below 2^31). */
__host__ __device__ __forceinline__ int32_t col_source(int32_t v, int pad, int tap, int dil, const ocd_fastdiv &stride,
                                                       int64_t out)
{
    int32_t num = v + pad - tap * dil;
    if (num < 0) return -1;
    uint32_t rem, o = ocd_fastdiv_divmod(stride, (uint32_t)num, &rem);
    return rem == 0 && o < out ? (int32_t)o : -1;
}

/* dx = alpha * col2im(dcol) + beta * dx: each dx element sums, in a fixed order (taps t, r, s),
   the dcol entries of the (output pixel, tap) pairs that read it. Runs first, first + step, ...
   of dx's rows (col_geom); NHWC is a template argument so that, along a run of channels, the
   pixel and with it every tap's source is known once per run. */
template <typename T, typename A, bool NHWC>
__host__ __device__ void cublas_col2im_range(const A *dcol, T *dx, const col_geom &gm, A alpha, A beta, uint32_t first,
                                             uint32_t step)
{
    const uint32_t pq = (uint32_t)(gm.z * gm.p * gm.q), kc = (uint32_t)gm.kc;
    /* dcol = col[n][g][kk][opix] (NCHW) or col[n][opix][g][kk] (NHWC) */
    const uint32_t opix_stride = NHWC ? (uint32_t)gm.g * kc : 1, kk_stride = NHWC ? 1 : pq;
    for (uint32_t v = first; v < gm.run_count; v += step) {
        uint32_t j0, n, g, cc, d, h, w, rest = ocd_fastdiv_divmod(gm.div_runs, v, &j0), len;
        j0 *= COL_RUN;
        if (NHWC) { /* rows: (n, d, h, w, g), along cc */
            rest = ocd_fastdiv_divmod(gm.div_g, rest, &g);
            rest = ocd_fastdiv_divmod(gm.div_w, rest, &w);
            rest = ocd_fastdiv_divmod(gm.div_h, rest, &h);
            n = ocd_fastdiv_divmod(gm.div_d, rest, &d);
            cc = j0, len = (uint32_t)gm.cg;
        } else { /* rows: (n, c, d, h), along w */
            uint32_t c;
            rest = ocd_fastdiv_divmod(gm.div_h, rest, &h);
            rest = ocd_fastdiv_divmod(gm.div_d, rest, &d);
            n = ocd_fastdiv_divmod(gm.div_c, rest, &c);
            g = ocd_fastdiv_divmod(gm.div_cg, c, &cc);
            w = j0, len = (uint32_t)gm.w;
        }
        const uint32_t cnt = len - j0, col_base = NHWC ? n * pq * opix_stride + g * kc : (n * (uint32_t)gm.g + g) * kc * pq;
        A sum[COL_RUN];
#pragma unroll
        for (int j = 0; j < COL_RUN; j++) sum[j] = 0;
        for (int t = 0; t < gm.t; t++) {
            const int tf = gm.flip ? gm.t - 1 - t : t;
            const int32_t oz = col_source((int32_t)d, gm.pd, tf, gm.dd, gm.div_ud, gm.z);
            if (oz < 0) continue;
            for (int r = 0; r < gm.r; r++) {
                const int rf = gm.flip ? gm.r - 1 - r : r;
                const int32_t op = col_source((int32_t)h, gm.ph, rf, gm.dh, gm.div_uh, gm.p);
                if (op < 0) continue;
                for (int s = 0; s < gm.s; s++) {
                    const int sf = gm.flip ? gm.s - 1 - s : s;
                    /* element j: kk of channel cc + j (NHWC), or pixel w + j (NCHW) */
                    const uint32_t tap = ((uint32_t)t * gm.r + r) * gm.s + s;
                    const uint32_t kk0 = gm.krsc ? tap * gm.cg + cc : cc * (uint32_t)(gm.t * gm.r * gm.s) + tap;
                    const uint32_t kk_step = !NHWC ? 0 : gm.krsc ? 1 : (uint32_t)(gm.t * gm.r * gm.s);
                    const uint32_t base = col_base + kk0 * kk_stride + ((uint32_t)oz * gm.p + op) * gm.q * opix_stride;
#pragma unroll
                    for (int j = 0; j < COL_RUN; j++) {
                        const int32_t oq = col_source((int32_t)(w + (NHWC ? 0 : j)), gm.pw, sf, gm.dw, gm.div_uw, gm.q);
                        if ((uint32_t)j < cnt && oq >= 0)
                            sum[j] += dcol[base + j * kk_step * kk_stride + (uint32_t)oq * opix_stride];
                    }
                }
            }
        }
        T *dst = dx + n * (uint32_t)gm.sn + (g * (uint32_t)gm.cg + cc) * (uint32_t)gm.sc + d * (uint32_t)gm.sd +
                 h * (uint32_t)gm.sh + w * (uint32_t)gm.sw;
        const uint32_t dst_step = (uint32_t)(NHWC ? gm.sc : gm.sw);
#pragma unroll
        for (int j = 0; j < COL_RUN; j++) {
            if ((uint32_t)j >= cnt) break;
            A v = alpha * sum[j];
            if (beta != 0) v += beta * (A)dst[j * dst_step]; /* (A) and (T): the types' own round-to-nearest conversions */
            dst[j * dst_step] = (T)v;
        }
    }
}

#define OCD_GRID_STRIDE blockIdx.x *blockDim.x + threadIdx.x, gridDim.x *blockDim.x

/* The strided 1x1 filter's backward data into packed NCHW dx without padding (plan: scatter):
   dx = alpha * dcol at the pixels the filter reaches (both coordinates multiples of the stride:
   every such pixel has its output pixel, the filter being 1x1 without padding) + beta * dx, and
   beta * dx elsewhere (0 at beta 0). dcol = col[n][c][p q] (kc = C/G at 1x1), so an image's
   channel is one plane of each. Four consecutive elements of dx a thread, stored as one vector
   where aligned (whole sectors a warp: col2im's runs store a column of elements a lane). */
struct scatter_geom {
    uint32_t total, quads, w, h, q, pq; /* dx's elements and their groups of 4, its plane, dcol's */
    ocd_fastdiv div_hw, div_w, div_u, div_v;
};

template <typename T> struct alignas(4 * sizeof(T)) scatter_quad {
    T v[4];
};

template <typename T, typename A>
__host__ __device__ void cublas_scatter1x1_range(const A *dcol, T *dx, const scatter_geom &sg, A alpha, A beta,
                                                 uint32_t first, uint32_t step)
{
    for (uint32_t i = first; i < sg.quads; i += step) {
        const uint32_t f = i * 4;
        uint32_t pix, w, h;
        uint32_t plane = ocd_fastdiv_divmod(sg.div_hw, f, &pix);
        h = ocd_fastdiv_divmod(sg.div_w, pix, &w);
        scatter_quad<T> out;
        const uint32_t cnt = sg.total - f < 4 ? sg.total - f : 4;
#pragma unroll
        for (uint32_t j = 0; j < 4; j++) {
            if (j >= cnt) break;
            uint32_t ru, rv;
            const uint32_t oh = ocd_fastdiv_divmod(sg.div_u, h, &ru), ow = ocd_fastdiv_divmod(sg.div_v, w, &rv);
            A v = ru == 0 && rv == 0 ? alpha * dcol[plane * sg.pq + oh * sg.q + ow] : (A)0;
            if (beta != 0) v += beta * (A)dx[f + j]; /* (A) and (T): the types' own round-to-nearest conversions */
            out.v[j] = (T)v;
            if (++w == sg.w) {
                w = 0;
                if (++h == sg.h) h = 0, plane++;
            }
        }
        if (cnt == 4 && (uintptr_t)(dx + f) % sizeof(scatter_quad<T>) == 0) {
            *(scatter_quad<T> *)(dx + f) = out;
        } else {
            for (uint32_t j = 0; j < cnt; j++) dx[f + j] = out.v[j];
        }
    }
}

template <typename T, typename A>
__global__ void cublas_scatter1x1(const A *dcol, T *dx, const scatter_geom sg, A alpha, A beta)
{
    cublas_scatter1x1_range<T, A>(dcol, dx, sg, alpha, beta, OCD_GRID_STRIDE);
}


template <typename T> __global__ void cublas_im2col(const T *x, T *col, const col_rows cr)
{
    cublas_im2col_range(x, col, cr, OCD_GRID_STRIDE);
}

template <typename T, typename A, bool NHWC>
__global__ void cublas_col2im(const A *dcol, T *dx, const col_geom gm, A alpha, A beta)
{
    cublas_col2im_range<T, A, NHWC>(dcol, dx, gm, alpha, beta, OCD_GRID_STRIDE);
}

static unsigned grid_for(int64_t count)
{
    return (unsigned)OCD_MAX((int64_t)1, OCD_MIN((count + 255) / 256, (int64_t)65535 * 16));
}

/* The fused forward's pass (file comment) over the packed y: element i, of channel i % k (NHWC)
   or i / pq % k (NCHW), finished in place from the GEMM's value there. Memory-bound, and
   written so: a thread carries FINISH_ELEMS elements a block width apart, their values loaded
   before the first store, and finds their channels by multiply-high division (y holds fewer
   than 2^31 elements). */
#define FINISH_ELEMS 4

struct finish_geom {
    uint32_t count;
    bool nhwc;
    ocd_fastdiv k, pq;
};

static finish_geom finish_geom_of(int64_t count, int64_t k, int64_t pq, bool nhwc)
{
    return {(uint32_t)count, nhwc, ocd_fastdiv_make((uint32_t)k), ocd_fastdiv_make((uint32_t)pq)};
}

/* What thread `tid` of a block of `threads` does for the block's span starting at element base
   (host-callable: tests/emulate/conv_cublas_finish.cu runs it). */
template <typename A>
__host__ __device__ __forceinline__ void cublas_finish_span(const ocd_cuda_conv_store &s, const finish_geom &g,
                                                            uint32_t base, uint32_t tid, uint32_t threads)
{
    A v[FINISH_ELEMS];
#pragma unroll
    for (int e = 0; e < FINISH_ELEMS; e++) {
        const uint32_t i = base + e * threads + tid;
        if (i >= g.count) break;
        v[e] = ocd_cuda_load_as<A>(s.t, s.dst, i);
    }
#pragma unroll
    for (int e = 0; e < FINISH_ELEMS; e++) {
        const uint32_t i = base + e * threads + tid;
        if (i >= g.count) break;
        uint32_t channel;
        if (g.nhwc) ocd_fastdiv_divmod(g.k, i, &channel);
        else ocd_fastdiv_divmod(g.k, ocd_fastdiv_div(g.pq, i), &channel);
        ocd_cuda_conv_finish<A>(s, i, channel, v[e]);
    }
}

template <typename A> __global__ void cublas_finish(const ocd_cuda_conv_store s, const finish_geom g)
{
    ocd_cuda_each_span<FINISH_ELEMS>(
        g.count, [&](int64_t base) { cublas_finish_span<A>(s, g, (uint32_t)base, threadIdx.x, blockDim.x); });
}

/* The typed finishing pass (the plan's EPI_TYPED): the common epilogue of ConvBiasAct on packed
   y, y = relu?(v + alpha2 * z + bias) with v the GEMM's value, z (NULL: none) laid out as y, the
   bias of y's type with consecutive channels, in the compute type A, the types and the layout
   known at compile time. A thread takes V consecutive elements at once (16 bytes where the rows
   and every pointer allow, else V = 1), found by one or two multiply-high divisions of the
   vector's index: in NHWC they share a pixel and take V consecutive bias values (K / V vectors
   a pixel), in NCHW they share a channel plane and its one bias value (P*Q / V vectors a
   plane). The ReLU keeps a NaN, as the store it stands in for does. */
template <typename A> struct bias_act_geom {
    void *y;
    const void *z, *bias;
    A alpha2;
    bool relu;
    uint32_t count;          /* vectors in y */
    ocd_fastdiv kv;          /* NHWC: vectors per pixel, K / V */
    ocd_fastdiv plane, k;    /* NCHW: vectors per channel plane, P*Q / V; channels */
};

/* Vectors first, first + step, ... of y (host-callable: tests/emulate/conv_cublas_finish.cu). */
template <typename T, typename A, int V, bool NHWC>
__host__ __device__ void cublas_bias_act_range(const bias_act_geom<A> &g, uint32_t first, uint32_t step)
{
    typedef ocd_vec<T, V> vec;
    vec *y = (vec *)g.y;
    const vec *z = (const vec *)g.z;
    for (uint32_t i = first; i < g.count; i += step) {
        vec r = y[i], b, zv;
        A one_bias = 0;
        if (NHWC) {
            uint32_t cv;
            ocd_fastdiv_divmod(g.kv, i, &cv);
            b = ((const vec *)g.bias)[cv];
        } else {
            uint32_t c;
            ocd_fastdiv_divmod(g.k, ocd_fastdiv_div(g.plane, i), &c);
            one_bias = ocd_cuda_load((const T *)g.bias + c);
        }
        if (z != nullptr) zv = z[i];
#pragma unroll
        for (int j = 0; j < V; j++) {
            A v = ocd_cuda_load(&r.v[j]);
            if (z != nullptr) v += g.alpha2 * ocd_cuda_load(&zv.v[j]);
            v += NHWC ? ocd_cuda_load(&b.v[j]) : one_bias;
            if (g.relu && v < 0) v = 0;
            ocd_cuda_store(&r.v[j], v);
        }
        y[i] = r;
    }
}

template <typename T, typename A, int V, bool NHWC> __global__ void cublas_bias_act(const bias_act_geom<A> g)
{
    cublas_bias_act_range<T, A, V, NHWC>(g, OCD_GRID_STRIDE);
}

/* The vector width of the typed pass over y, whose rows (the channels of a pixel in NHWC, a
   channel plane in NCHW) hold len elements, with z and, in NHWC, the bias: 16 bytes where len
   and the pointers allow it, else 1. */
static int bias_act_width(int64_t len, size_t esize, const void *y, const void *z, const void *bias)
{
    const int64_t v = (int64_t)(16 / esize);
    const uintptr_t bits = (uintptr_t)y | (uintptr_t)z | (uintptr_t)bias;
    return len % v == 0 && bits % 16 == 0 ? (int)v : 1;
}

/* The typed pass over y of count elements, K channels, P*Q pixels an image (pq), with the
   finishing store's z, bias and alpha2 (fin) and the ReLU or not. */
template <typename T, typename A>
static void bias_act_launch(const ocd_cuda_conv_store &fin, bool relu, bool nhwc, int64_t count, int64_t k, int64_t pq,
                            cudaStream_t st)
{
    const int vw = bias_act_width(nhwc ? k : pq, sizeof(T), fin.dst, fin.z, nhwc ? fin.bp : nullptr);
    bias_act_geom<A> g;
    g.y = fin.dst, g.z = fin.z, g.bias = fin.bp, g.alpha2 = (A)fin.alpha2, g.relu = relu;
    g.count = (uint32_t)(count / vw), g.kv = ocd_fastdiv_make((uint32_t)(k / vw));
    g.plane = ocd_fastdiv_make((uint32_t)(pq / vw)), g.k = ocd_fastdiv_make((uint32_t)k);
    const unsigned blocks = grid_for(g.count);
    constexpr int V = 16 / sizeof(T);
    if (nhwc && vw == V) cublas_bias_act<T, A, V, true><<<blocks, 256, 0, st>>>(g);
    else if (nhwc) cublas_bias_act<T, A, 1, true><<<blocks, 256, 0, st>>>(g);
    else if (vw == V) cublas_bias_act<T, A, V, false><<<blocks, 256, 0, st>>>(g);
    else cublas_bias_act<T, A, 1, false><<<blocks, 256, 0, st>>>(g);
}

/* ---- planning ------------------------------------------------------------------------------------- */

/* How the fused forward is finished (file comment): by the store of the direct kernels, by the
   typed pass, or in cuBLASLt's epilogue (the GEMM then being cuBLASLt's). */
enum cublas_epi { EPI_STORE, EPI_TYPED, EPI_LT };

struct cublas_plan {
    bool direct;  /* 1x1, unit stride, no padding: the activation is the GEMM operand */
    bool gather; /* the strided 1x1 forward or filter gradient: its column matrix a gather of whole pixels */
    enum cublas_epi epi;         /* the fused forward's */
    cublasLtMatmulAlgo_t lt_algo; /* EPI_LT: the heuristic's algorithm */
    cudnnDataType_t dtype;
    cudaDataType_t data_type, acc_type;
    cublasComputeType_t compute;
    size_t esize, acc_size;
    col_geom gm;
    int64_t pq, hw;       /* output and input pixels per image */
    col_geom dy_gm;       /* NCHW backward filter: dy as a 1x1 column matrix */
    bool per_image;       /* NCHW backward filter: a GEMM per image into its slab (make_plan) */
    bool channel_major;   /* NCHW images of few pixels, forward and backward data (file comment) */
    bool scatter;         /* strided 1x1 backward data into NCHW dx: dcol moved by cublas_scatter1x1 */
    scatter_geom sg;
    size_t ws_col, ws_dy, ws_part, ws_out; /* workspace offsets (ws_out: a channel-major output) */
    int64_t chunks, kchunk; /* NCHW backward filter: the slabs (chunks of kchunk, the last shorter; or
                               the images) */
    size_t ws_bytes;
};

/* The geometry of dy as the column matrix of a 1x1 filter, laid out channel-major over all
   images ([G][K/G][N][P Q]), from x's geometry gm. */
static void dy_channel_major(const struct ocd_conv_problem *p, const col_geom &gm, col_geom *dg)
{
    const bool three = p->s.nsp == 3;
    *dg = gm;
    dg->cg = dg->kc = p->s.k / p->s.groups;
    dg->d = gm.z, dg->h = gm.p, dg->w = gm.q;
    dg->sn = p->y.strides[0], dg->sc = p->y.strides[1];
    dg->sd = three ? p->y.strides[2] : 0, dg->sh = p->y.strides[p->y.rank - 2], dg->sw = p->y.strides[p->y.rank - 1];
    dg->t = dg->r = dg->s = 1;
    dg->pd = dg->ph = dg->pw = 0, dg->ud = dg->uh = dg->uw = 1, dg->dd = dg->dh = dg->dw = 1;
    dg->flip = 0, dg->krsc = 0, dg->kmajor = 1;
    col_geom_finish(*dg);
}

/* Why the typed pass cannot finish p's fused forward, or NULL. */
static const char *typed_rejects(const struct ocd_conv_problem *p, const cublas_plan &pl)
{
    if (p->ep.scale_on || p->ep.act_on) return "a per-channel scale, or an activation other than RELU and IDENTITY";
    const struct ocd_tensor_view &b = p->ep.bias_view;
    if (b.dtype != p->y.dtype) return "a bias of another type than y's";
    if (b.strides[1] != 1 && p->s.k > 1) return "a bias whose channels are not consecutive";
    return NULL;
}

/* p's fused forward as one cuBLASLt matmul in *mm with its beta in *beta (file comment), or why
   cuBLASLt's epilogue cannot express it. Column-major, as cuBLASLt sees NHWC data: D = y is
   K x N*P*Q at leading dimension K, op(A) = w^T of the filter as it lies (KC x K at KC, KC =
   C*R*S in the filter's order), B = x where the filter is 1x1 with unit stride and no padding
   (C x N*P*Q at C), else the column matrix col (KC x N*P*Q at KC; NULL while planning: the
   workspace's start, 256-byte aligned), C = z, or y itself where there is no z (beta 0: not
   read) or z is y (in place). */
static const char *lt_matmul_of(const struct ocd_conv_problem *p, const cublas_plan &pl, const void *col,
                                struct ocd_lt_matmul *mm, float *beta)
{
    if (!pl.gm.nhwc) return "y is NCHW: cuBLASLt's bias runs along the output channels only as D's rows";
    if (pl.gm.g != 1) return "more than one group: cuBLASLt's bias would need a stride per batch";
    if (const char *why = typed_rejects(p, pl)) return why;
    if (pl.dtype == CUDNN_DATA_DOUBLE) return OCD_REASON_DTYPE;
    if (!ocd_lt_fits_scale(p->alpha) || !ocd_lt_fits_scale(p->ep.alpha2))
        return "alpha1 or alpha2 beyond float, cuBLASLt's scale type";
    if (ocd_lt_alignment(p->ep.bias, 0, 1) < 16)
        return "a bias off a 16-byte boundary: cuBLASLt's epilogue may read it 16 bytes at a time";
    const int64_t kc = pl.gm.kc, k = p->s.k, npq = pl.gm.n * pl.pq;
    const void *z = p->ep.z != NULL ? p->ep.z : p->y_data;
    memset(mm, 0, sizeof *mm);
    mm->compute = pl.compute;
    mm->trans_a = true, mm->trans_b = false;
    mm->epilogue = p->ep.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    mm->bias = p->ep.bias;
    mm->batch = 1;
    mm->a = {pl.data_type, kc, k, kc, 0, p->w_data};
    mm->b = {pl.data_type, kc, npq, kc, 0, pl.direct ? p->x_data : col};
    mm->c = {pl.data_type, k, npq, k, 0, z};
    mm->d = p->y_data;
    *beta = p->ep.z != NULL ? (float)p->ep.alpha2 : 0.0f;
    if (ocd_lt_matrix_alignment(mm, &mm->a, mm->a.data) < pl.esize ||
        ocd_lt_matrix_alignment(mm, &mm->b, mm->b.data) < pl.esize ||
        ocd_lt_matrix_alignment(mm, &mm->c, mm->c.data) < pl.esize ||
        ocd_lt_matrix_alignment(mm, &mm->c, mm->d) < pl.esize)
        return "a tensor not aligned to its element";
    return NULL;
}

/* The fused forward's epilogue (pl->epi) for p: in cuBLASLt's where it expresses p and its
   heuristic has an algorithm, else the typed pass where it serves, else the store. */
static void plan_epilogue(cudnnHandle_t h, const struct ocd_conv_problem *p, cublas_plan *pl)
{
    pl->epi = EPI_STORE;
    const char *why = typed_rejects(p, *pl);
    if (why == NULL) {
        pl->epi = EPI_TYPED;
        struct ocd_lt_matmul mm;
        float beta;
        cublasLtHandle_t lt;
        why = lt_matmul_of(p, *pl, NULL, &mm, &beta);
        if (why == NULL) why = ocd_cublaslt_handle(h, &lt);
        if (why == NULL && ocd_lt_query(h, lt, &mm, &pl->lt_algo) != CUBLAS_STATUS_SUCCESS)
            why = "cuBLASLt's heuristic has no algorithm for it";
        if (why == NULL) pl->epi = EPI_LT;
    }
    if (ocd_log_mask & CUDNN_SEV_INFO_EN)
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "cuBLAS fused forward epilogue: %s%s%s",
                        pl->epi == EPI_LT      ? "cuBLASLt"
                        : pl->epi == EPI_TYPED ? "the typed pass (cuBLASLt: "
                                               : "the store's pass (the typed pass: ",
                        why ? why : "", why ? ")" : "");
}

/* The plan of p (all but the fused forward's epilogue, plan_epilogue's), from the device's
   compute capability and multiprocessor count alone (host-callable: tests/emulate plans so);
   per_image: an NCHW filter gradient as per-image GEMMs (file comment) rather than one GEMM over
   operands re-laid channel-major. */
static const char *make_plan(cudnnHandle_t h, const struct ocd_conv_problem *p, bool tc, bool per_image,
                             cublas_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    const struct ocd_conv_shape *s = &p->s;
    if (p->ep.on) {
        if (p->ep.scale_on && !p->ep.scale_z && p->ep.alpha2 != 0)
            return "a scale that leaves z unscaled, with z: z may be y, which the GEMM overwrites";
    }
    cudnnDataType_t dt = p->x.dtype;
    pl->dtype = dt;
    pl->compute = CUBLAS_COMPUTE_32F;
    pl->acc_type = CUDA_R_32F, pl->acc_size = 4;
    if (tc) {
        if (h->cc_major < 8 && dt != CUDNN_DATA_HALF) return OCD_REASON_ARCH;
        if (dt == CUDNN_DATA_HALF) {
            pl->data_type = CUDA_R_16F, pl->esize = 2;
        } else if (dt == CUDNN_DATA_BFLOAT16) {
            pl->data_type = CUDA_R_16BF, pl->esize = 2;
        } else if (dt == CUDNN_DATA_FLOAT) {
            if (const char *why = ocd_conv_tensor_ops_rejects(p)) return why;
            pl->data_type = CUDA_R_32F, pl->esize = 4, pl->compute = CUBLAS_COMPUTE_32F_FAST_TF32;
        } else {
            return OCD_REASON_DTYPE;
        }
    } else if (dt == CUDNN_DATA_FLOAT) {
        pl->data_type = CUDA_R_32F, pl->esize = 4;
    } else if (dt == CUDNN_DATA_DOUBLE) {
        pl->data_type = CUDA_R_64F, pl->esize = 8, pl->compute = CUBLAS_COMPUTE_64F;
        pl->acc_type = CUDA_R_64F, pl->acc_size = 8;
    } else {
        return OCD_REASON_DTYPE;
    }
    bool nhwc = ocd_view_is_packed_nhwc(&p->x) && ocd_view_is_packed_nhwc(&p->y);
    bool nchw = ocd_view_is_packed_rowmajor(&p->x) && ocd_view_is_packed_rowmajor(&p->y);
    if (!nhwc && !nchw) return "needs x and y both packed NHWC or both packed NCHW";

    col_geom &gm = pl->gm;
    const bool three = s->nsp == 3;
    gm.n = s->n, gm.g = s->groups, gm.cg = s->c / s->groups;
    gm.t = three ? (int)s->filt[0] : 1, gm.r = (int)s->filt[s->nsp - 2], gm.s = (int)s->filt[s->nsp - 1];
    gm.kc = gm.cg * gm.t * gm.r * gm.s;
    gm.d = three ? s->in[0] : 1, gm.h = s->in[s->nsp - 2], gm.w = s->in[s->nsp - 1];
    gm.z = three ? s->out[0] : 1, gm.p = s->out[s->nsp - 2], gm.q = s->out[s->nsp - 1];
    gm.sn = p->x.strides[0], gm.sc = p->x.strides[1];
    gm.sd = three ? p->x.strides[2] : 0, gm.sh = p->x.strides[p->x.rank - 2], gm.sw = p->x.strides[p->x.rank - 1];
    gm.pd = three ? s->pad[0] : 0, gm.ph = s->pad[s->nsp - 2], gm.pw = s->pad[s->nsp - 1];
    gm.ud = three ? s->stride[0] : 1, gm.uh = s->stride[s->nsp - 2], gm.uw = s->stride[s->nsp - 1];
    gm.dd = three ? s->dilation[0] : 1, gm.dh = s->dilation[s->nsp - 2], gm.dw = s->dilation[s->nsp - 1];
    gm.flip = s->flip;
    gm.krsc = p->w_format == CUDNN_TENSOR_NHWC;
    gm.nhwc = nhwc;
    pl->pq = gm.z * gm.p * gm.q;
    pl->hw = gm.d * gm.h * gm.w;
    pl->direct = true;
    bool one = true; /* a 1x1 filter without padding */
    for (int d = 0; d < s->nsp; d++) {
        pl->direct &= s->filt[d] == 1 && s->stride[d] == 1 && s->pad[d] == 0;
        one &= s->filt[d] == 1 && s->pad[d] == 0;
    }
    pl->gather = !pl->direct && one && p->dir != OCD_CONV_BWD_DATA && nhwc;
    gm.vec_rows = pl->gather;
    if (pl->gather) gm.krsc = 1; /* a 1x1 filter's rows are its channels in either format */
    pl->per_image = per_image && p->dir == OCD_CONV_BWD_FILTER && !nhwc;
    pl->channel_major = tc && !nhwc && p->dir != OCD_CONV_BWD_FILTER && one && pl->pq < 100 && s->n > 1 &&
                        !p->ep.on && dt == CUDNN_DATA_FLOAT;
    if ((p->dir == OCD_CONV_BWD_FILTER && !nhwc && !pl->per_image) || pl->channel_major) {
        /* the activations re-laid channel-major over all images (file comment): x for the
           forward pass and the filter gradient, dy for both backward passes */
        pl->direct = pl->direct && p->dir == OCD_CONV_BWD_DATA;
        gm.kmajor = p->dir != OCD_CONV_BWD_DATA;
        if (p->dir != OCD_CONV_FWD) dy_channel_major(p, gm, &pl->dy_gm);
    }
    col_geom_finish(gm);
    /* strided 1x1 backward data into packed NCHW dx, image by image: dcol moved by the scatter
       pass rather than col2im */
    pl->scatter = p->dir == OCD_CONV_BWD_DATA && one && !pl->direct && !pl->channel_major && !nhwc && !three;
    if (pl->scatter) {
        scatter_geom &sg = pl->sg;
        sg.total = (uint32_t)(s->n * s->c * pl->hw), sg.quads = (sg.total + 3) / 4;
        sg.h = (uint32_t)gm.h, sg.w = (uint32_t)gm.w, sg.q = (uint32_t)gm.q, sg.pq = (uint32_t)pl->pq;
        sg.div_hw = ocd_fastdiv_make((uint32_t)pl->hw), sg.div_w = ocd_fastdiv_make(sg.w);
        sg.div_u = ocd_fastdiv_make((uint32_t)gm.uh), sg.div_v = ocd_fastdiv_make((uint32_t)gm.uw);
    }

    /* cuBLAS takes int extents and leading dimensions */
    const int64_t kg = s->k / s->groups, lim = INT32_MAX;
    if (s->n * pl->pq > lim || s->n * pl->hw > lim || gm.g * gm.kc > lim || s->k > lim || s->c > lim ||
        pl->pq > lim || pl->hw > lim || kg * gm.kc > lim || (pl->per_image && s->k * gm.kc > lim))
        return OCD_REASON_SHAPE;
    /* the column kernels' 32-bit element indices (col_geom) */
    if (s->n * pl->pq * gm.g * gm.kc > lim || s->n * s->c * pl->hw > lim || s->n * s->k * pl->pq > lim)
        return OCD_REASON_SHAPE;

    size_t ws = 0;
    const size_t cols = (size_t)(s->n * pl->pq * gm.g * gm.kc);
    if (!pl->direct && !(pl->channel_major && p->dir == OCD_CONV_BWD_DATA)) {
        pl->ws_col = ws;
        ws = ocd_ws_round(ws + cols * (p->dir == OCD_CONV_BWD_DATA ? pl->acc_size : pl->esize));
    }
    if (p->dir != OCD_CONV_FWD && (gm.kmajor || pl->channel_major)) {
        pl->ws_dy = ws;
        ws = ocd_ws_round(ws + (size_t)(s->n * s->k * pl->pq) * pl->esize);
    }
    if (pl->channel_major) {
        pl->ws_out = ws;
        ws = ocd_ws_round(ws + (size_t)(s->n * (p->dir == OCD_CONV_FWD ? s->k : s->c) * pl->pq) * pl->esize);
    }
    if (gm.kmajor && p->dir == OCD_CONV_BWD_FILTER) {
        /* chunks: about two output tiles of 128 x 128 per multiprocessor, each at least 2048 deep */
        const int64_t npq = s->n * pl->pq, tiles = ((kg + 127) / 128) * ((gm.kc + 127) / 128);
        int64_t chunks = gm.g > 1 ? 1 : OCD_MIN((2 * (int64_t)h->sm_count + tiles - 1) / tiles, (int64_t)64);
        chunks = OCD_MAX((int64_t)1, OCD_MIN(chunks, npq / 2048));
        pl->kchunk = (npq + chunks - 1) / chunks;
        pl->chunks = (npq + pl->kchunk - 1) / pl->kchunk;
        if (pl->chunks > 1) {
            pl->ws_part = ws;
            ws = ocd_ws_round(ws + (size_t)(pl->chunks * s->k * gm.kc) * pl->acc_size);
        }
    }
    if (pl->per_image) {
        pl->chunks = s->n;
        pl->ws_part = ws;
        ws = ocd_ws_round(ws + (size_t)(s->n * s->k * gm.kc) * pl->acc_size);
    }
    pl->ws_bytes = ws ? ws + 256 : 0; /* room to align the user's pointer */
    return NULL;
}

/* ---- running -------------------------------------------------------------------------------------- */

/* Row-major C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, batched with element
   strides; as column-major cuBLAS sees it, C^T = op(B)^T * op(A)^T. */
struct gemm_call {
    cublasHandle_t blas;
    const cublas_plan *pl;
};

static cudnnStatus_t gemm_rm(const gemm_call &gc, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                             const void *a, cudaDataType at, int64_t lda, int64_t sa, const void *b, cudaDataType bt,
                             int64_t ldb, int64_t sb, const void *beta, void *c, cudaDataType ct, int64_t ldc, int64_t sc,
                             int64_t batch)
{
    const struct ocd_cublas_api *api = ocd_cublas_api();
    OCD_CUBLAS_TRY(api->gemm_strided_batched(gc.blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                             (int)n, (int)m, (int)k, alpha, b, bt, (int)ldb, sb, a, at, (int)lda, sa,
                                             beta, c, ct, (int)ldc, sc, (int)batch, gc.pl->compute, CUBLAS_GEMM_DEFAULT));
    return CUDNN_STATUS_SUCCESS;
}

/* The fused forward as one cuBLASLt matmul with the plan's algorithm (EPI_LT), over the column
   matrix col where the plan has one. */
static cudnnStatus_t run_lt(cudnnHandle_t h, const struct ocd_conv_problem *p, const cublas_plan &pl, const void *col)
{
    struct ocd_lt_matmul mm;
    float beta;
    cublasLtHandle_t lt;
    const char *why = lt_matmul_of(p, pl, col, &mm, &beta);
    if (why == NULL) why = ocd_cublaslt_handle(h, &lt);
    if (why != NULL) return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "the cuBLASLt fused forward cannot run: %s", why);
    const cublasStatus_t st = ocd_lt_run(lt, &mm, &pl.lt_algo, (float)p->alpha, beta, h->stream);
    if (st != CUBLAS_STATUS_SUCCESS) return ocd_cublaslt_status(st, "cublasLtMatmul", __func__, __FILE__, __LINE__);
    return CUDNN_STATUS_SUCCESS;
}

/* A row-major strided-batched GEMM C = op(A) op(B) (gemm_rm's) and its operands' element
   offsets. */
struct rm_gemm {
    int64_t m, n, k, lda, sa, ldb, sb, ldc, sc, batch, a0, b0, c0;
    bool ta, tb;
};

/* Runs descriptor q on a, b and c (beta 0) with alpha. */
static cudnnStatus_t gemm_of(const gemm_call &gc, const rm_gemm &q, const void *alpha, const char *a, const char *b,
                             char *c, cudaDataType ct, size_t csize, const void *zero)
{
    const cudaDataType dt = gc.pl->data_type;
    const size_t es = gc.pl->esize;
    return gemm_rm(gc, q.ta, q.tb, q.m, q.n, q.k, alpha, a + q.a0 * es, dt, q.lda, q.sa, b + q.b0 * es, dt, q.ldb, q.sb,
                   zero, c + q.c0 * csize, ct, q.ldc, q.sc, q.batch);
}

/* The per-image filter gradient's GEMM of group gi (file comment): A dy's [K/G][P Q] blocks, B
   x's [C/G][H W] (direct) or col's [C/G R S][P Q] ones, C the slabs' [K][C/G R S] rows of the
   group; one image a batch. */
static rm_gemm per_image_gemm(const cublas_plan &pl, int64_t k, int64_t gi)
{
    const col_geom &gm = pl.gm;
    const int64_t kg = k / gm.g, blk = pl.direct ? gm.cg * pl.hw : gm.kc * pl.pq;
    return {kg, gm.kc, pl.pq, pl.pq, k * pl.pq, pl.pq, gm.g * blk, gm.kc, k * gm.kc, gm.n,
            gi * kg * pl.pq, gi * blk, gi * kg * gm.kc, false, true};
}

/* The channel-major GEMM of group gi (file comment), one call: forward Y'[K/G][N P Q] = W[K/G][C/G]
   X'[C/G][N P Q], backward data dX'[C/G][N H W] = W^T dY'[K/G][N H W]; A the filter's rows of
   the group, B the re-laid activation, C the output in the workspace. */
static rm_gemm channel_major_gemm(const cublas_plan &pl, enum ocd_conv_dir dir, int64_t k, int64_t gi)
{
    const col_geom &gm = pl.gm;
    const int64_t kg = k / gm.g, npq = gm.n * pl.pq;
    if (dir == OCD_CONV_FWD)
        return {kg, npq, gm.kc, gm.kc, 0, npq, 0, npq, 0, 1, gi * kg * gm.kc, gi * gm.kc * npq, gi * kg * npq, false, false};
    return {gm.kc, npq, kg, gm.kc, 0, npq, 0, npq, 0, 1, gi * kg * gm.kc, gi * kg * npq, gi * gm.kc * npq, true, false};
}

/* v's elements as a channel-major buffer lays them out: [C][N][spatial], spatial packed. */
static struct ocd_tensor_view channel_major_view(const struct ocd_tensor_view *v)
{
    struct ocd_tensor_view cm = *v;
    int64_t step = 1;
    for (int d = v->rank - 1; d >= 2; d--) cm.strides[d] = step, step *= v->dims[d];
    cm.strides[0] = step, cm.strides[1] = step * v->dims[0];
    return cm;
}

/* Where the channel-major output lands: y, or the elements of dx that a 1x1 filter without
   padding reaches (every stride-th pixel: all of dx at unit stride). */
static struct ocd_tensor_view channel_major_dst(const struct ocd_conv_problem *p)
{
    if (p->dir == OCD_CONV_FWD) return p->y;
    struct ocd_tensor_view v = p->x;
    for (int d = 2; d < v.rank; d++) v.dims[d] = p->y.dims[d], v.strides[d] *= p->s.stride[d - 2];
    return v;
}

/* The channel-major run's GEMMs over the re-laid activation src (x' or dy'), then the output
   moved into y or dx with beta. With a stride, dx's other elements receive nothing: dx is
   scaled by beta (zeroed at beta 0) first, and the output added to the pixels it reaches. */
template <typename T, typename A>
static cudnnStatus_t run_channel_major(cudnnHandle_t h, const struct ocd_conv_problem *p, const cublas_plan &pl,
                                       const gemm_call &gc, const T *src, char *ws)
{
    const A alpha = (A)p->alpha, beta = (A)p->beta, one = 1, zero = 0;
    char *out = ws + pl.ws_out;
    for (int64_t gi = 0; gi < pl.gm.g; gi++)
        OCD_TRY(gemm_of(gc, channel_major_gemm(pl, p->dir, p->s.k, gi), &alpha, (const char *)p->w_data,
                        (const char *)src, out, pl.data_type, sizeof(T), &zero));
    const bool fwd = p->dir == OCD_CONV_FWD;
    const char *op = fwd ? "cudnnConvolutionForward" : "cudnnConvolutionBackwardData";
    const struct ocd_tensor_view dst = channel_major_dst(p), cm = channel_major_view(&dst);
    void *data = fwd ? p->y_data : p->x_data;
    if (fwd || pl.direct) return ocd_ewise_copy(h, &one, &cm, out, &beta, &dst, data, op);
    if (beta == zero) {
        OCD_TRY(ocd_ewise_fill(h, &p->x, data, 0, op));
    } else if (beta != one) {
        OCD_TRY(ocd_ewise_copy(h, &beta, &p->x, data, &zero, &p->x, data, op));
    }
    return ocd_ewise_copy(h, &one, &cm, out, &one, &dst, data, op);
}

/* dy laid out channel-major in the workspace (*dyt) by the im2col kernel (dy_channel_major's
   geometry). */
template <typename T>
static cudnnStatus_t channel_major_dy(const cublas_plan &pl, const T *dy, char *ws, cudaStream_t st, const T **dyt)
{
    T *dst = (T *)(ws + pl.ws_dy);
    const col_rows cr = col_rows_of(pl.dy_gm, dy, sizeof(T));
    cublas_im2col<T><<<grid_for(cr.count), 256, 0, st>>>(dy, dst, cr);
    *dyt = dst;
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <typename T> static cudnnStatus_t run_typed(cudnnHandle_t h, const struct ocd_conv_problem *p, const cublas_plan &pl,
                                                     cublasHandle_t blas, char *ws)
{
    typedef typename ocd_compute<T>::type A; /* float, or double for double data */
    const col_geom &gm = pl.gm;
    const int64_t n = gm.n, g = gm.g, cg = gm.cg, kc = gm.kc, kg = p->s.k / g, k = p->s.k, c = g * cg;
    const int64_t pq = pl.pq, hw = pl.hw;
    const cudaDataType dt = pl.data_type, acc = pl.acc_type;
    const A alpha = (A)p->alpha, beta = (A)p->beta, one = 1, zero = 0;
    const gemm_call gc = {blas, &pl};
    cudaStream_t st = h->stream;
    T *col = (T *)(ws + pl.ws_col);
    const T *w = (const T *)p->w_data;

    if (p->dir == OCD_CONV_FWD || p->dir == OCD_CONV_BWD_FILTER) {
        const T *x = (const T *)p->x_data;
        if (!pl.direct) {
            const col_rows cr = col_rows_of(gm, x, sizeof(T));
            cublas_im2col<T><<<grid_for(cr.count), 256, 0, st>>>(x, col, cr);
            OCD_CUDA_LAUNCHED();
        }
        const T *src = pl.direct ? x : col;
        /* per image and group, the activation operand: NHWC rows of ld_src, NCHW [rows][pq] blocks */
        const int64_t ld_src = pl.direct ? c : g * kc, gs_src = pl.direct ? cg : kc;
        const int64_t img_src = pl.direct ? c * hw : g * kc * pq, gblk_src = pl.direct ? cg * hw : kc * pq;
        if (p->dir == OCD_CONV_FWD) {
            T *y = (T *)p->y_data;
            if (pl.channel_major) return run_channel_major<T, A>(h, p, pl, gc, col, ws);
            if (p->ep.on && pl.epi == EPI_LT) return run_lt(h, p, pl, col);
            /* the fused forward (file comment): alpha * conv, plus alpha2 * z when z is y */
            ocd_cuda_conv_store fin{};
            A keep = beta;
            if (p->ep.on) {
                fin = ocd_cuda_conv_store_of(p);
                fin.alpha = 1;
                keep = fin.z == p->y_data ? (A)fin.alpha2 : zero;
                if (fin.z == p->y_data) fin.z = nullptr;
            }
            if (gm.nhwc) {
                OCD_TRY(gemm_rm(gc, false, true, n * pq, kg, kc, &alpha, src, dt, ld_src, gs_src, w, dt, kc, kg * kc,
                                &keep, y, dt, k, kg, g));
            } else {
                for (int64_t gi = 0; gi < g; gi++)
                    OCD_TRY(gemm_rm(gc, false, false, kg, pq, kc, &alpha, w + gi * kg * kc, dt, kc, 0,
                                    src + gi * gblk_src, dt, pq, img_src, &keep, y + gi * kg * pq, dt, pq, k * pq, n));
            }
            const int64_t count = n * k * pq;
            if (p->ep.on && pl.epi == EPI_TYPED) {
                bias_act_launch<T, A>(fin, p->ep.relu, gm.nhwc, count, k, pq, st);
                OCD_CUDA_LAUNCHED();
            } else if (p->ep.on) {
                cublas_finish<A><<<ocd_cuda_span_blocks(count, FINISH_ELEMS, 256), 256, 0, st>>>(
                    fin, finish_geom_of(count, k, pq, gm.nhwc));
                OCD_CUDA_LAUNCHED();
            }
            return CUDNN_STATUS_SUCCESS;
        }
        const T *dy = (const T *)p->y_data;
        T *dw = (T *)p->w_data;
        if (gm.nhwc)
            return gemm_rm(gc, true, false, kg, kc, n * pq, &alpha, dy, dt, k, kg, src, dt, ld_src, gs_src, &beta, dw,
                           dt, kc, kg * kc, g);
        if (pl.per_image) {
            A *part = (A *)(ws + pl.ws_part);
            for (int64_t gi = 0; gi < g; gi++)
                OCD_TRY(gemm_of(gc, per_image_gemm(pl, k, gi), &one, (const char *)dy, (const char *)src, (char *)part,
                                acc, sizeof(A), &zero));
            ocd_slab_sum<T, A>(st, part, n, dw, k * kc, alpha, beta);
            OCD_CUDA_LAUNCHED();
            return CUDNN_STATUS_SUCCESS;
        }
        const T *dyt;
        OCD_TRY(channel_major_dy<T>(pl, dy, ws, st, &dyt));
        const int64_t npq = n * pq;
        if (pl.chunks == 1)
            return gemm_rm(gc, false, true, kg, kc, npq, &alpha, dyt, dt, npq, kg * npq, col, dt, npq, kc * npq, &beta,
                           dw, dt, kc, kg * kc, g);
        /* one group: the full chunks in one batched call, the shorter last one after, then the sum */
        A *part = (A *)(ws + pl.ws_part);
        const int64_t full = npq / pl.kchunk, rest = npq - full * pl.kchunk, kk = k * kc;
        OCD_TRY(gemm_rm(gc, false, true, k, kc, pl.kchunk, &one, dyt, dt, npq, pl.kchunk, col, dt, npq, pl.kchunk, &zero,
                        part, acc, kc, kk, full));
        if (rest > 0)
            OCD_TRY(gemm_rm(gc, false, true, k, kc, rest, &one, dyt + full * pl.kchunk, dt, npq, 0,
                            col + full * pl.kchunk, dt, npq, 0, &zero, part + full * kk, acc, kc, kk, 1));
        ocd_slab_sum<T, A>(st, part, pl.chunks, dw, kk, alpha, beta);
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    }

    /* backward data */
    const T *dy = (const T *)p->y_data;
    if (pl.channel_major) {
        const T *dyt;
        OCD_TRY(channel_major_dy<T>(pl, dy, ws, st, &dyt));
        return run_channel_major<T, A>(h, p, pl, gc, dyt, ws);
    }
    T *dx = (T *)p->x_data;
    A *dcol = (A *)(ws + pl.ws_col);
    void *dst = pl.direct ? (void *)dx : (void *)dcol;
    const cudaDataType dst_type = pl.direct ? dt : acc;
    const A *a = pl.direct ? &alpha : &one, *b = pl.direct ? &beta : &zero;
    if (gm.nhwc) {
        OCD_TRY(gemm_rm(gc, false, false, n * pq, kc, kg, a, dy, dt, k, kg, w, dt, kc, kg * kc, b, dst, dst_type,
                        pl.direct ? c : g * kc, pl.direct ? cg : kc, g));
    } else {
        const size_t dsize = pl.direct ? sizeof(T) : sizeof(A);
        for (int64_t gi = 0; gi < g; gi++)
            OCD_TRY(gemm_rm(gc, true, false, kc, pq, kg, a, w + gi * kg * kc, dt, kc, 0, dy + gi * kg * pq, dt, pq,
                            k * pq, b, (char *)dst + (size_t)(gi * (pl.direct ? cg * hw : kc * pq)) * dsize, dst_type, pq,
                            pl.direct ? c * hw : g * kc * pq, n));
    }
    if (pl.scatter) {
        cublas_scatter1x1<T, A><<<grid_for(pl.sg.quads), 256, 0, st>>>(dcol, dx, pl.sg, alpha, beta);
        OCD_CUDA_LAUNCHED();
    } else if (!pl.direct) {
        if (gm.nhwc)
            cublas_col2im<T, A, true><<<grid_for(gm.run_count), 256, 0, st>>>(dcol, dx, gm, alpha, beta);
        else
            cublas_col2im<T, A, false><<<grid_for(gm.run_count), 256, 0, st>>>(dcol, dx, gm, alpha, beta);
        OCD_CUDA_LAUNCHED();
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t cublas_run(cudnnHandle_t h, const void *problem, const void *plan, void *workspace,
                                size_t workspace_bytes)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const cublas_plan &pl = *(const cublas_plan *)plan;
    cublasHandle_t blas = NULL;
    char *ws = NULL;
    OCD_TRY(OCD_CUBLAS_RUN_START(h, "cuBLAS convolution entry", workspace, workspace_bytes, pl.ws_bytes, &blas, &ws));
    switch (pl.dtype) {
    case CUDNN_DATA_HALF: return run_typed<__half>(h, p, pl, blas, ws);
    case CUDNN_DATA_BFLOAT16: return run_typed<__nv_bfloat16>(h, p, pl, blas, ws);
    case CUDNN_DATA_FLOAT: return run_typed<float>(h, p, pl, blas, ws);
    default: return run_typed<double>(h, p, pl, blas, ws);
    }
}

/* ---- the entries ---------------------------------------------------------------------------------- */

/* Below this many multiply-adds a 1x1 GEMM goes to the implicit GEMM when it serves it: cuBLAS
   spends about 12 us of host time per call choosing and launching its kernel (H200, cuBLAS 13,
   bench latency_conv_1x1_f16: 12.3 us against 7.7 us for the implicit GEMM), which is more than
   the whole device time of such a problem. */
static const double small_gemm_macs = (double)(1 << 26);

/* What an entry takes (cublas_plan_of). */
enum cublas_scope {
    CUBLAS_1X1,        /* gemm1x1: 1x1 filters without padding, the activation the GEMM operand at
                          unit stride, the NHWC "gather"; else float and double data
                          on the subsample */
    CUBLAS_IM2COL,     /* im2col_gemm: every problem */
    CUBLAS_NCHW_WGRAD, /* wgrad_nchw_gemm: NCHW filter gradients of float and double data as per-image
                          GEMMs */
};

static bool unpadded_1x1(const struct ocd_conv_shape *s)
{
    for (int d = 0; d < s->nsp; d++)
        if (s->filt[d] != 1 || s->pad[d] != 0) return false;
    return true;
}

/* Why the per-image filter gradient declines plan pl, or NULL. Its slabs (K x C/G R S an image)
   may not outweigh the operands it multiplies (K + C R S values a pixel), which they do where the
   images have few pixels (ResNet-50's 7x7 and most of its 14x14 layers); and its column matrix
   may hold at most 9/4 of x (a 3x3 filter at stride 2; a strided 1x1 one holds less), more
   costing more than the TF32 kernel, which gathers x in place. */
static const char *per_image_rejects(const struct ocd_conv_problem *p, const cublas_plan &pl)
{
    if (!pl.per_image) return "NCHW data only: NHWC filter gradients are one GEMM as their operands lie";
    const double slab = (double)p->s.k * pl.gm.kc, operands = (double)(p->s.k + pl.gm.g * pl.gm.kc) * pl.pq;
    if (slab > operands) return "per-image partial sums would outweigh the operands (few pixels an image)";
    if (!pl.direct && 4.0 * pl.gm.g * pl.gm.kc * pl.pq > 9.0 * p->s.c * pl.hw)
        return "a column matrix over 9/4 of x (filter taps over stride)";
    return NULL;
}

/* The entries are planned (core/impl.h): make_plan's plan, which holds the flavour (cuBLAS's
   compute type), is kept for the workspace query and the run. tc entries leave small GEMMs to the
   implicit GEMM. */
template <bool TC, int SCOPE> static const char *cublas_plan_of(cudnnHandle_t h, const void *problem, void *plan)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    cublas_plan &pl = *(cublas_plan *)plan;
    const bool wide = p->x.dtype == CUDNN_DATA_FLOAT || p->x.dtype == CUDNN_DATA_DOUBLE;
    const char *why = NULL;
    if (SCOPE == CUBLAS_NCHW_WGRAD) {
        if (!wide) return "float and double data only: half and bfloat16 stay on the implicit GEMM";
    }
    why = make_plan(h, p, TC, SCOPE == CUBLAS_NCHW_WGRAD, &pl);
    if (why == NULL && SCOPE == CUBLAS_NCHW_WGRAD) why = per_image_rejects(p, pl);
    if (why == NULL && SCOPE == CUBLAS_1X1 && !pl.direct && !pl.gather) {
        if (pl.gm.kmajor && !pl.channel_major)
            why = "an NCHW filter gradient re-lays both operands in the workspace (the im2col entry)";
        else if (!unpadded_1x1(&p->s)) why = "not a 1x1 convolution without padding";
        else if (!wide) why = "a strided 1x1 convolution of half or bfloat16 data (implicit GEMM, dgrad_gemm1x1_strided)";
    }
    if (why == NULL && TC && (double)pl.gm.n * pl.pq * p->s.k * pl.gm.kc < small_gemm_macs &&
        ocd_cuda_conv_igemm_serves(h, p))
        why = "a small GEMM, which the implicit GEMM serves at a lower host cost per call";
    if (why == NULL) why = ocd_cublas_handle(h, NULL);
    if (why == NULL && p->ep.on) plan_epilogue(h, p, &pl);
    return why;
}

static size_t cublas_workspace(cudnnHandle_t h, const void *problem, const void *plan)
{
    return ((const cublas_plan *)plan)->ws_bytes;
}

OCD_IMPL_PLAN_FITS(cublas_plan);
#define CUBLAS_PLANNED(name_, tc_, scope_)                                                      \
    extern "C" const struct ocd_impl_planned name_##_planned = {cublas_plan_of<tc_, scope_>, cublas_workspace, \
                                                                cublas_run};
CUBLAS_PLANNED(ocd_cuda_conv_gemm1x1_tc, true, CUBLAS_1X1)
CUBLAS_PLANNED(ocd_cuda_conv_gemm1x1, false, CUBLAS_1X1)
CUBLAS_PLANNED(ocd_cuda_conv_im2col_gemm_tc, true, CUBLAS_IM2COL)
CUBLAS_PLANNED(ocd_cuda_conv_im2col_gemm, false, CUBLAS_IM2COL)
CUBLAS_PLANNED(ocd_cuda_conv_nchw_wgrad_gemm_tc, true, CUBLAS_NCHW_WGRAD)
CUBLAS_PLANNED(ocd_cuda_conv_nchw_wgrad_gemm, false, CUBLAS_NCHW_WGRAD)
