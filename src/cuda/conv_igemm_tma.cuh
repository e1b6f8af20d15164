/* conv_igemm_tma.cuh: the tensor maps of the implicit-GEMM convolution on the sm_90a TMA kernel
   (conv_igemm_tma_sm90.cu; entries cuda:fwd_igemm_tma_*, cuda:dgrad_igemm_tma_* for backward data
   as a forward pass, cuda:wgrad_igemm_tma_* for the filter gradient): what make_plan computes
   for them, how a K tile of a work unit becomes the TMA loads and their coordinates, and the
   limits that make a problem decline. Host-callable, so that the CPU emulations
   (tests/emulate/conv_igemm_tma.cu, conv_igemm_tma_tf32.cu) check the same numbers against a
   model of the TMA written from the PTX ISA.

   Main decision: the GEMM of the forward pass is y[M = N*P*Q, K] = im2col(x)[M, R*S*C] w^T, and
   a K tile is BK channels (128 bytes, one 128-byte-swizzled row: wgmma.cuh's K-major stage; BK
   64 of a 16-bit type, 32 of fp32 for TF32) of one filter tap (r, s): K tile kt is channel block
   kt % CB of tap kt / CB, CB = ceil(C / BK).
   Its A operand is one cp.async.bulk.tensor.4d.im2col load over the NHWC activations and its B
   operand one tiled load over the KRSC filter seen as (C, R*S, K); channels past C, pixels past
   the last image and the padding are filled with zeros by the TMA, so that neither operand needs
   a copy. The map parameters (rules of the CUDA driver API's cuTensorMapEncodeIm2col and
   cuTensorMapEncodeTiled, and of the PTX ISA's "Tensors: im2col mode"):
   - A, rank 4: globalDim (C, W, H, N), globalStrides the byte strides of W, H and N (multiples of
     16 below 2^40); the pixel box, in (W, H) order like the dims, from lower corner -pad to the
     upper corner that puts the box's last pixel at Q * stride - pad - 1 (corner Q * stride -
     pad - W, relative to the tensor's last pixel; H likewise with P): the filter base of output
     pixel q is q * stride - pad, the last one, (Q - 1) * stride - pad, inside the box and the
     next step, Q * stride - pad, exactly one past it, so that a row wraps to the lower corner
     under any reading of the ISA's wrap (to the corner, or carrying what passed the box). The
     upper corner follows from the output extent, not from the padding: a stride phase's output,
     two paragraphs down, is not the extent its padding implies. So the TMA,
     traversing the box W first, then H, then N with elementStrides (1, stride_w, stride_h, 1),
     visits the output pixels in GEMM row order from a tile's first one, across rows and images.
     channelsPerPixel BK (the K tile), and pixelsPerColumn BM (at most 1024: one load per K tile). The im2col offsets of tap (r, s)
     are (s * dilation_w, r * dilation_h), the taps mirrored in CONVOLUTION mode. Corners are
     signed 8-bit and offsets unsigned 8-bit for rank 4 (ISA, "Bounding Box" of im2col mode),
     traversal strides at most 8 (cuTensorMapEncodeIm2col): problems beyond decline.
   - B, rank 3: globalDim (C, R*S, K), globalStrides (C, R*S*C) elements in bytes, box (BK, 1, BN).
   Both use the 128-byte swizzle (a 128-byte row r of the box lands with its 16-byte chunk c at
   chunk c ^ (r % 8) of a 1024-byte-aligned stage: wgmma.cuh's layout, so a landed stage is
   wgmma's operand as it is) and zero fill out of bounds..

   Backward data with unit stride (entries cuda:dgrad_igemm_tma_*) is a forward pass of the same
   kernel: dx[i] = sum over taps r of dy[i + pad - r * dilation] w[r] (per dim, w the
   cross-correlation filter: mirrored in CONVOLUTION mode) is the cross-correlation of dy with
   the filter mirrored, w'[r'] = w[R - 1 - r'], at padding pad' = (R - 1) * dilation - pad, the
   same dilation, stride 1. make_plan packs the filter for backward data as [C][R][S][K] without
   that mirror (igemm_filter_pack: the CONVOLUTION-mode mirror only), which is the forward
   pass's (C', R*S, K') = (K, R*S, C) B map over the taps as they are; igemm_tma_dgrad_as_fwd
   then sets the problem's padding to pad' and flip, so that K tile tap (r, s) reads dy at the
   mirrored tap's offsets. pad' < 0 (pad above (R - 1) * dilation) is a positive lower corner,
   which the box limits above bound as they bound the forward pass's.

   Strided backward data (entry cuda:dgrad_igemm_tma_phases) runs stride phase by stride phase
   (conv_igemm.cu's phase_problem): each phase is a unit-stride backward-data problem over all
   of dy, its dx a strided view of dx (the epilogue's row map writes it), its filter the phase's
   taps (packed by igemm_filter_pack like any backward-data filter), its padding and dilation
   its own; it runs as the forward pass above. The phase's dx extent is not the one its padding
   implies (dy's last pixels may reach none of its pixels, or its last pixels no dy pixel), which
   the upper corner from the output extent absorbs: pixels whose window leaves dy read zeros.

   The filter gradient (entries cuda:wgrad_igemm_tma_*) is dW[M = K, N = R*S*C'] = dy^T[M, N*P*Q]
   im2col(x)[N*P*Q, N]: the reduction runs over output pixels, 64 a K tile, so both operands land
   pixel-major, MN-major for wgmma (fp16 and bf16 take the transpose bits; wgmma.cuh's
   ocd_wgmma_smem_mn: blocks of 64 K rows by 64 elements of M or N, 128 bytes a row, 128-byte
   swizzled, one block 8 KB). Each block is one TMA box that lands as such a block:
   - A, dy: a tiled rank-3 map over dy seen as the matrix (K, N*P*Q, 1) (its pixels evenly
     spaced: packed NHWC, or the workspace transpose), box (64, 64, 1), its inner dimension 128
     bytes, the 128-byte swizzle's span (cuTensorMapEncodeTiled: boxDim[0] times the element
     size at most the swizzle's bytes): block i of a tile holds filters m0 + 64 i .. of the K
     tile's 64 pixels, one pixel a 128-byte row; BM / 64 loads.
   - B, x: the forward pass's im2col map (the same globalDim, strides, corners, traversal
     strides and offsets: the im2col matrix's rows are output pixels in both) with
     pixelsPerColumn 64: the load at the filter base of the K tile's first pixel, with the
     offsets of tap (r, s), visits the K tile's 64 output pixels in order (across rows and
     images; pixels past N*P*Q fall in image N, outside the tensor: zeros) and lands each one's
     64 channels (channelsPerPixel) as a 128-byte row: a block of 64 pixels x 64 channels of one
     tap. So a block must not straddle taps: the GEMM's columns run over the taps' channels
     padded to C' = cblocks * 64 (column j is channel j % C' of tap j / C', channels past C
     zero-filled by the TMA), block b of a tile the channel block (n0 / 64 + b) % cblocks of tap
     (n0 / 64 + b) / cblocks; BN / 64 loads. The epilogue skips the padding columns (epi.col_c),
     and make_plan declines problems where they would be more than a quarter of the columns.
   A block wholly past the filters (M) or the padded columns (N) is not loaded (its accumulator
   rows or columns are never stored, whatever the stale stage holds), and the stage's expected
   bytes count the blocks loaded. Split-K over the pixels (make_plan's, where the tiles are too
   few for the GPU) makes a work unit of each tile and split, the splits' fp32 partial tiles
   summed in split order by the reduction kernel (deterministic).

   The TF32 filter gradient (entries cuda:wgrad_igemm_tma_tf32_*, the k32 form) cannot take
   those MN-major blocks: TF32 wgmma reads K-major operands only. On NCHW data both operands are
   K-major as they lie (a filter's or a channel's pixels consecutive along a row), so a K tile is
   32 pixels of one image, KQ along a row by 32 / KQ rows, and each operand row (a filter of dy, a
   channel of x at a tap) lands as 32 / KQ planes, one per row of pixels (wgmma.cuh's
   ocd_wgmma_smem_kq), in one of two shapes (igemm_tma_geom's kq, make_plan's choice):
   - KQ 8, 4 rows of 8 pixels (32 bytes of fp32) under the 32-byte swizzle: a k-step of tf32 is
     8 elements, the swizzle atom's whole width, so the TMA's box of 8 pixels along the innermost
     dim is wgmma's operand as it lands, with no ambiguity in the swizzle of a box narrower than
     its span. It serves any row; the TMA then moves 32-byte rows, four loads a B block.
   - KQ 32, one row of 32 pixels (128 bytes) under the 128-byte swizzle, the forward TF32
     operands' layout: one load an A or B block, 128-byte rows, where rows are long (Q of 28 or
     more: padded to 32 or 64, 12.5%, where 14- and 7-wide rows would pad to 8 and 16 rows' worth).
   K tile kt is the pixel block (qb, pb) of image img, kt = (img * PB + pb) * QB + qb, QB =
   ceil(Q / KQ), PB = ceil(P / (32 / KQ)); its pixels past Q or P are zeros of dy (the A
   operand), so the x they meet does not count. A tiled load must start 16-byte aligned along the innermost dim (an H100 raises
   an illegal instruction for a box at column 1 of fp32 rows; negative coordinates, 16-byte
   aligned, and boxes past the end load zeros), which a tap's column offset s dilation_w - pad_w
   breaks; so x is read through copies in the workspace, one per filter column s,
   [S][N][C][H'][W'] with element (s, n, c, h', j) = x(n, c, h' u - pad_h, j stride_w - pad_w +
   s dilation_w), zero outside x (conv_igemm_copy.cuh's igemm_rows): every box of copy s then
   starts at the K tile's own pixel column, the padding is written, the stride taken along rows,
   and down the columns too (u = stride_h) where the filter has one row (a 1x1 filter: the rows
   between two output rows are never read, so the copy leaves them out), else u = 1; output row
   p of filter row r reads copy row p step + r dilation_h (step = stride_h / u,
   igemm_k32_row_step), and H' = (32 / KQ PB - 1) step + (R - 1) dilation_h + 1 rows and W' = 8
   ceil(Q / 8) columns hold every row and column a box reaches (a box of 32 past W' lands the
   TMA's zeros, where dy's are zeros too). Both maps are tiled, rank 4, the shape's swizzle:
   - A, dy: globalDim (Q, K, P, N) (the filters the second dim, so that a box of 64 filters
     stacks their rows), box (KQ, 64, 32 / KQ, 1): an A block of 64 filters, its planes in turn,
     one load, at (q0, m0 + 64 i, p0, img), q0 a multiple of KQ;
   - B, the copies of x: globalDim (W', C, H', S N), box (KQ, 64, 1, 1): one row of KQ pixels of
     64 channels of one tap a load, 32 / KQ a B block, each into its plane, which spans the
     tile's BN columns (B's wgmma reads all of them at one row stride), at (q0, c0, (p0 + row)
     step + r dilation_h, s N + img), the taps mirrored in CONVOLUTION mode.
   The GEMM's columns, its split-K and epilogue are the 16-bit filter gradient's. dy is copied
   too, its rows padded to a multiple of 16 bytes (the maps' strides: ResNet-50's 7x7 and 14x14
   layers have rows of 28 and 56 bytes) and rounded to tf32: read in place, the tensor cores'
   truncation biases a sum over every pixel of the batch past the tests' TF32 tolerance (a GPU
   run: 0.041 off at K = 12,544). The copies of x cost S times x's bytes written, once read (3x3:
   3.1 times x at 56x56, 4.4 at 7x7). No clusters.

   Clusters of 2 CTAs along M (entries cuda:*_igemm_tma_c2_*): the work units are taken in pairs,
   the tiles along M rounded up to an even count (tiles_m), so that units 2 j and 2 j + 1 are
   adjacent M tiles of one N tile and one split, whose B operand (the filter forward, x's
   im2col blocks for the filter gradient) is the same: CTA rank r of a cluster takes unit
   2 j + r, loads its own A and half of B, that half multicast to both CTAs at the same offsets
   of their stages. Forward, the B box is (bk, 1, BN / 2) (a half is BN / 2 rows of 128 bytes, a
   multiple of 1024 bytes, so each half is swizzled as the whole stage is), rank r's at filter
   n0 + r * BN / 2; for the filter gradient rank r loads B blocks r * BN / 128 .. of the tile.
   Each CTA's full barrier expects its own A bytes and the whole of B. A unit of the rounding
   (past M, when the M tiles are odd) loads no A and stores nothing, but its CTA still loads its
   half of B for its peer and runs the ring in step with it. */
#ifndef OCD_CUDA_CONV_IGEMM_TMA_CUH
#define OCD_CUDA_CONV_IGEMM_TMA_CUH

#include "cuda/conv_igemm.cuh"

/* a K tile of the filter gradient: 64 pixels, each a 128-byte row of 64 elements (16-bit types);
   the forward pass's K tile is 128 bytes of channels, igemm_tma_geom's bk */
#define OCD_IGEMM_TMA_BK 64

/* The two tensor maps' parameters (the driver calls' arguments, pointers aside) and what the
   kernel needs beyond igemm_params. */
struct igemm_tma_geom {
    uint64_t im_dim[4], im_stride[3]; /* the im2col map: (C, W, H, N); byte strides of W, H, N (k32: the
                                         tiled map of x's copies, (W', C, H', S N), byte strides of C, H', S N) */
    int im_lower[2], im_upper[2];     /* pixel box corners, (W, H) */
    uint32_t im_estride[4];           /* traversal strides (1, stride_w, stride_h, 1); k32 all 1 */
    uint32_t im_channels, im_pixels;  /* channelsPerPixel, pixelsPerColumn */
    uint32_t im_box[4];               /* k32: x's box, (KQ, 64, 1, 1) */
    uint64_t ti_dim[4], ti_stride[3]; /* the tiled map: forward (C, R*S, K), filter gradient (K, N*P*Q, 1),
                                         k32 dy's (Q, K, P, N) */
    uint32_t ti_box[4];               /* forward (bk, 1, BN), filter gradient (64, 64, 1), k32 (KQ, 64, 32 / KQ, 1) */
    int k32;                          /* the TF32 filter gradient on NCHW: both maps tiled, rank 4, K
                                         tiles of kq x 32 / kq pixels (the k32 paragraph); its value
                                         the images, N (x's copy s of image n is n + s N) */
    int kq;                           /* k32: the pixels of a K tile along a row, 8 (the 32-byte
                                         swizzle) or 32 (the 128-byte one) */
    int k32_step;                     /* k32: the rows of x's copies between two output rows */
    int bk;                           /* channels a block: 128 bytes (64 of 16-bit types, 32 of fp32) */
    int cblocks;                      /* channel blocks of bk per tap, ceil(C / bk) */
    int ktiles, nkt;                  /* K tiles in all, and per split */
    int tiles_m, tiles;               /* tiles along M, and in all */
    int units;                        /* the persistent loop's work: tiles x splits */
    int cluster;                      /* CTAs of a cluster along M (1 or 2; tiles_m a multiple) */
    int staged;                       /* the staged epilogue (conv_igemm_tma_sm90.cu; make_plan's choice) */
    int pingpong;                     /* ping-pong consumers on units of half the tile's rows (make_plan's choice) */
    int chain;                        /* a stride phase's kernel (conv_igemm.cu's phases_run): 0 not one, 1 the
                                         first launched, 2 a later one, launched early after the one ahead */
    /* the divisors of the index maps below (a multiply-high and a shift each, where an integer
       division is ~20 instructions through the float unit: the producer thread evaluates four a
       K tile, between a stage's release and its refill): tiles, tiles_m, cblocks, the filter's S */
    ocd_fastdiv fd_tiles, fd_tiles_m, fd_cblocks, fd_s;
    ocd_fastdiv fd_qb, fd_pb; /* k32: the pixel blocks of an image, ceil(Q / kq) along a row, ceil(P / (32 / kq)) down */
};

/* Whether lane `lane` of a consumer warp arrives on a stage's empty barrier when its warpgroup
   releases the stage, and how many arrivals a warpgroup's release gives each barrier it
   arrives on (IGEMM_TMA_RELEASE_ARRIVALS; the barriers count that times the releasing
   warpgroups and the cluster's CTAs). The lane 0 of each warp alone arrives, once the warp's
   wgmma.wait_group has returned: the wait completes the groups of the warp's threads, so the
   stage's reads by the warp are done when its lane 0 arrives, and the barrier's phase
   completes when all four warps of each releasing warpgroup have arrived. 4 arrivals a
   release where every thread's would be 128 (and 8 remote ones a clustered stage, not 256):
   on an H100 the 3x3 256 -> 256 layers ran in half the time with these and the fast divisors. */
__host__ __device__ __forceinline__ bool igemm_tma_releases(int lane)
{
    return lane == 0;
}
#define IGEMM_TMA_RELEASE_ARRIVALS 4u

/* The im2col map over the activations x (c channels, NHWC, n images) for p's filter, stride,
   padding and dilation and an output of oq x op pixels an image, `pixels` pixels a load
   (forward: the file comment's map A; the filter gradient's B). NULL, or why the TMA cannot
   load it. */
static inline const char *igemm_tma_im2col(const igemm_params &p, const igemm_act &x, int64_t n, int c, int64_t oq,
                                           int64_t op, int pixels, int esize, igemm_tma_geom *g)
{
    /* an extent-1 dim has stride 0 in an igemm_act; any stride serves it, TMA wants a multiple of 16 */
    const int64_t sw = x.w > 1 ? x.sw : c, sh = x.h > 1 ? x.sh : sw * x.w;
    const int64_t sn = n > 1 ? x.sn : sh * x.h;
    const int64_t strides[3] = {sw * esize, sh * esize, sn * esize};
    for (int i = 0; i < 3; i++)
        if (strides[i] % 16 != 0 || strides[i] <= 0 || strides[i] >= ((int64_t)1 << 40))
            return "a pixel stride the TMA cannot take (a multiple of 16 bytes below 2^40)";
    if (p.uw > 8 || p.uh > 8) return "stride above 8 (the TMA's traversal stride)";
    /* the box ends one before the filter base past the last output pixel (file comment) */
    const int64_t lower[2] = {-p.pw, -p.ph};
    const int64_t upper[2] = {oq * p.uw - p.pw - x.w, op * p.uh - p.ph - x.h};
    for (int i = 0; i < 2; i++)
        if (lower[i] < -128 || lower[i] > 127 || upper[i] < -128 || upper[i] > 127)
            return "padding or filter extent outside the TMA's im2col box corners ([-128, 127])";
    if ((p.S - 1) * p.dw > 255 || (p.R - 1) * p.dh > 255) return "dilated filter wider than the TMA's im2col offsets (255)";
    g->im_dim[0] = (uint64_t)c, g->im_dim[1] = (uint64_t)x.w, g->im_dim[2] = (uint64_t)x.h, g->im_dim[3] = (uint64_t)n;
    for (int i = 0; i < 3; i++) g->im_stride[i] = (uint64_t)strides[i];
    for (int i = 0; i < 2; i++) g->im_lower[i] = (int)lower[i], g->im_upper[i] = (int)upper[i];
    g->im_estride[0] = 1, g->im_estride[1] = (uint32_t)p.uw, g->im_estride[2] = (uint32_t)p.uh, g->im_estride[3] = 1;
    g->bk = 128 / esize;
    g->im_channels = (uint32_t)g->bk, g->im_pixels = (uint32_t)pixels;
    return NULL;
}

/* The tiles of g on bm x bn in clusters of cl CTAs along M (the M tiles rounded up to a multiple
   of cl), and its work units: each tile once per split (the forward pass has one); with the
   index maps' fast divisors (g->cblocks set before). */
static inline void igemm_tma_tiles(const igemm_params &p, int bm, int bn, int cl, igemm_tma_geom *g)
{
    g->cluster = cl;
    g->tiles_m = ((p.M + bm - 1) / bm + cl - 1) / cl * cl;
    g->tiles = g->tiles_m * ((p.N + bn - 1) / bn);
    g->units = g->tiles * p.splits;
    g->fd_tiles = ocd_fastdiv_make((uint32_t)OCD_MAX(g->tiles, 1));
    g->fd_tiles_m = ocd_fastdiv_make((uint32_t)OCD_MAX(g->tiles_m, 1));
    g->fd_cblocks = ocd_fastdiv_make((uint32_t)OCD_MAX(g->cblocks, 1));
    g->fd_s = ocd_fastdiv_make((uint32_t)OCD_MAX(p.S, 1));
}

/* Fills g for the forward problem p (its activations prm.a with c channels, NHWC, and a packed
   KRSC filter of c channels), on tiles of bm x bn in clusters of cl CTAs (each loading BN / cl
   filters of B), elements of esize bytes. NULL, or why the TMA cannot load it. */
static inline const char *igemm_tma_plan(const igemm_params &p, int c, int bm, int bn, int cl, int esize,
                                         igemm_tma_geom *g)
{
    memset(g, 0, sizeof *g);
    const int64_t oq = p.epi.row.div[0].d, op = p.epi.row.div[1].d, n = p.M / (oq * op);
    if (const char *why = igemm_tma_im2col(p, p.a, n, c, oq, op, bm, esize, g)) return why;
    if ((int64_t)c * esize % 16 != 0) return "channels not a multiple of 16 bytes (the filter's tap stride for the TMA)";
    g->ti_dim[0] = (uint64_t)c, g->ti_dim[1] = (uint64_t)p.R * p.S, g->ti_dim[2] = (uint64_t)p.N;
    g->ti_stride[0] = (uint64_t)c * esize, g->ti_stride[1] = (uint64_t)p.b_ld * esize;
    g->ti_box[0] = (uint32_t)g->bk, g->ti_box[1] = 1, g->ti_box[2] = (uint32_t)(bn / cl);
    g->cblocks = (c + g->bk - 1) / g->bk;
    g->ktiles = g->nkt = p.R * p.S * g->cblocks;
    igemm_tma_tiles(p, bm, bn, cl, g);
    return NULL;
}

/* Fills g for the filter-gradient problem p (dy prm.a, x prm.b of c channels, both NHWC; its GEMM
   columns the taps' channels padded to cblocks * 64, p.N = R * S * that: the second part of the
   file comment), on tiles of bm x bn in clusters of cl CTAs, with p's split-K. NULL, or why the
   TMA cannot load it. */
static inline const char *igemm_tma_plan_wgrad(const igemm_params &p, int c, int bm, int bn, int cl, int esize,
                                               igemm_tma_geom *g)
{
    memset(g, 0, sizeof *g);
    const int64_t q = p.k_div[0].d, pp = p.k_div[1].d, n = p.K / (q * pp);
    if (const char *why = igemm_tma_im2col(p, p.b, n, c, q, pp, OCD_IGEMM_TMA_BK, esize, g)) return why;
    /* dy seen as [N*P*Q][K]: its pixels one stride apart, the first nonzero of W, H, N */
    const igemm_act &dy = p.a;
    const int64_t ps = dy.w > 1 ? dy.sw : dy.h > 1 ? dy.sh : n > 1 ? dy.sn : p.M;
    if ((dy.h > 1 && dy.sh != dy.w * ps) || (n > 1 && dy.sn != dy.h * dy.w * ps))
        return "dy's pixels are not evenly spaced (the TMA reads it as one matrix of N*P*Q rows)";
    if (ps * esize % 16 != 0 || (int64_t)p.K * ps * esize >= ((int64_t)1 << 40))
        return "a pixel stride of dy the TMA cannot take (a multiple of 16 bytes, dy below 2^40 bytes)";
    g->ti_dim[0] = (uint64_t)p.M, g->ti_dim[1] = (uint64_t)p.K, g->ti_dim[2] = 1;
    g->ti_stride[0] = (uint64_t)(ps * esize), g->ti_stride[1] = (uint64_t)p.K * g->ti_stride[0];
    g->ti_box[0] = OCD_IGEMM_TMA_BK, g->ti_box[1] = OCD_IGEMM_TMA_BK, g->ti_box[2] = 1;
    g->cblocks = (c + OCD_IGEMM_TMA_BK - 1) / OCD_IGEMM_TMA_BK;
    g->ktiles = (p.K + OCD_IGEMM_TMA_BK - 1) / OCD_IGEMM_TMA_BK;
    g->nkt = p.kt_per_split;
    igemm_tma_tiles(p, bm, bn, cl, g);
    return NULL;
}

/* The pixel blocks of the k32 filter gradient, a K tile each: kq pixels along a row (8 or 32) by
   32 / kq rows. Those of an image of q x p output pixels: along a row (qb, of kq) and down (pb,
   of rows). */
struct igemm_k32_blocks {
    int64_t qb, pb;
    int kq, rows;
};
static inline igemm_k32_blocks igemm_k32_blocks_of(int64_t q, int64_t p, int kq)
{
    const int rows = 32 / kq;
    return {(q + kq - 1) / kq, (p + rows - 1) / rows, kq, rows};
}

/* The rows of the k32 copies of x between two output rows (the k32 paragraph): the stride, or 1
   where the copies take it (a filter of one row). */
static inline int igemm_k32_row_step(const igemm_params &p)
{
    return p.R == 1 ? 1 : p.uh;
}

/* Fills g for the TF32 filter gradient p on NCHW data (the k32 paragraph of the file comment): dy
   prm.a (P x Q pixels an image, filters dy_sc apart, its rows sh and images sn apart, pixels
   consecutive) and x prm.b, the copies of x (c channels x_sc apart, rows of x.w, x.h rows, a
   copy's images x.sn apart, the S copies one after another); its GEMM columns the taps' channels
   padded to cblocks * 64, as the 16-bit filter gradient's; K tiles of kq x 32 / kq pixels, on
   tiles of bm x bn with p's split-K (p.kt_per_split K tiles a split). NULL, or why the TMA
   cannot load it. */
static inline const char *igemm_tma_plan_wgrad_k32(const igemm_params &p, int c, int64_t dy_sc, int64_t x_sc, int kq,
                                                   int bm, int bn, igemm_tma_geom *g)
{
    memset(g, 0, sizeof *g);
    const int esize = 4;
    const igemm_act &dy = p.a, &x = p.b;
    const int64_t n = p.K / ((int64_t)dy.w * dy.h); /* p.K: the pixels, N P Q */
    const int64_t dst[3] = {dy_sc, dy.sh, dy.sn}, xst[3] = {x_sc, x.sh, x.sn};
    for (int i = 0; i < 3; i++) {
        const int64_t a = dst[i] * esize, b = xst[i] * esize;
        if (a % 16 != 0 || b % 16 != 0 || a <= 0 || b <= 0 || a >= ((int64_t)1 << 40) || b >= ((int64_t)1 << 40))
            return "a row, channel or image stride the TMA cannot take (a multiple of 16 bytes below 2^40)";
    }
    const igemm_k32_blocks kb = igemm_k32_blocks_of(dy.w, dy.h, kq);
    g->k32 = (int)n, g->kq = kq, g->k32_step = igemm_k32_row_step(p);
    g->ti_dim[0] = (uint64_t)dy.w, g->ti_dim[1] = (uint64_t)p.M, g->ti_dim[2] = (uint64_t)dy.h, g->ti_dim[3] = (uint64_t)n;
    g->ti_box[0] = (uint32_t)kq, g->ti_box[1] = 64, g->ti_box[2] = (uint32_t)kb.rows, g->ti_box[3] = 1;
    g->im_dim[0] = (uint64_t)x.w, g->im_dim[1] = (uint64_t)c, g->im_dim[2] = (uint64_t)x.h;
    g->im_dim[3] = (uint64_t)(n * p.S);
    g->im_box[0] = (uint32_t)kq, g->im_box[1] = 64, g->im_box[2] = 1, g->im_box[3] = 1;
    for (int i = 0; i < 4; i++) g->im_estride[i] = 1;
    for (int i = 0; i < 3; i++) g->ti_stride[i] = (uint64_t)(dst[i] * esize), g->im_stride[i] = (uint64_t)(xst[i] * esize);
    g->fd_qb = ocd_fastdiv_make((uint32_t)kb.qb), g->fd_pb = ocd_fastdiv_make((uint32_t)kb.pb);
    g->bk = 64; /* channels a B block, as the 16-bit filter gradient's */
    g->cblocks = (c + 63) / 64;
    g->ktiles = (int)(n * kb.pb * kb.qb);
    g->nkt = p.kt_per_split;
    igemm_tma_tiles(p, bm, bn, 1, g);
    return NULL;
}

/* g, planned by igemm_tma_plan on a bm x bn tile, for the kernel's ping-pong twin
   (conv_igemm_tma_sm90.cu): work units of bm / 2 x bn, one consumer warpgroup's each, so the
   im2col load brings bm / 2 pixels. */
static inline void igemm_tma_pingpong(const igemm_params &p, int bm, int bn, igemm_tma_geom *g)
{
    g->pingpong = 1;
    g->im_pixels = (uint32_t)(bm / 2);
    igemm_tma_tiles(p, bm / 2, bn, 1, g);
}

/* The backward-data problem p (unit stride, or a stride phase; its GEMM rows the pixels of dx,
   its activations dy) as the forward pass of the file comment: padding (R - 1) * dilation - pad,
   taps mirrored. */
static inline void igemm_tma_dgrad_as_fwd(igemm_params *p)
{
    p->pw = (p->S - 1) * p->dw - p->pw, p->ph = (p->R - 1) * p->dh - p->ph;
    p->flip = true;
}

/* Channel block kb (of g.bk channels, g.cblocks a tap) as TMA coordinates: its first channel, its
   filter tap (r * S + s: the forward B map's middle coordinate) and the im2col offsets (W, H)
   of the input pixel that tap reads (mirrored in CONVOLUTION mode, as igemm_load_fwd_a and
   igemm_load_wgrad_b mirror them). The forward pass's K tile kt is block kt. */
struct igemm_tma_k {
    int c0, tap, ow, oh, s; /* s: the filter column the offsets are of (mirrored in CONVOLUTION mode) */
};

__host__ __device__ __forceinline__ igemm_tma_k igemm_tma_ktile(const igemm_params &p, const igemm_tma_geom &g, int kb)
{
    igemm_tma_k k;
    k.tap = (int)ocd_fastdiv_div(g.fd_cblocks, (uint32_t)kb);
    k.c0 = (kb - k.tap * g.cblocks) * g.bk;
    int r = (int)ocd_fastdiv_div(g.fd_s, (uint32_t)k.tap), s = k.tap - r * p.S;
    if (p.flip) r = p.R - 1 - r, s = p.S - 1 - s;
    k.ow = s * p.dw, k.oh = r * p.dh, k.s = s;
    return k;
}

/* The filter base of output pixel `pixel` (n, p, q) (div: the divisors of Q and P): the im2col
   load's W, H and N coordinates, (q * stride_w - pad_w, p * stride_h - pad_h, n). */
__host__ __device__ __forceinline__ void igemm_tma_base(const igemm_params &p, const ocd_fastdiv *div, int pixel,
                                                        int *w, int *h, int *n)
{
    uint32_t q, pp;
    uint32_t rest = ocd_fastdiv_divmod(div[0], (uint32_t)pixel, &q);
    *n = (int)ocd_fastdiv_divmod(div[1], rest, &pp);
    *w = (int)q * p.uw - p.pw;
    *h = (int)pp * p.uh - p.ph;
}

/* Work unit t of the persistent loop: split t / tiles of the tile t % tiles, tiles running along
   M first (consecutive CTAs share B tiles; a cluster's CTAs take consecutive units, tiles_m a
   multiple of the cluster); its K tiles kt0 .. kt0 + nkt - 1. */
struct igemm_tma_unit {
    int m0, n0, split, kt0, nkt;
};

__host__ __device__ __forceinline__ igemm_tma_unit igemm_tma_unit_at(const igemm_tma_geom &g, int t, int bm, int bn)
{
    igemm_tma_unit u;
    u.split = (int)ocd_fastdiv_div(g.fd_tiles, (uint32_t)t);
    const int rest = t - u.split * g.tiles, tn = (int)ocd_fastdiv_div(g.fd_tiles_m, (uint32_t)rest);
    u.m0 = (rest - tn * g.tiles_m) * bm;
    u.n0 = tn * bn;
    u.kt0 = u.split * g.nkt;
    u.nkt = g.ktiles - u.kt0 < g.nkt ? g.ktiles - u.kt0 : g.nkt;
    return u;
}

/* One TMA load of a K tile: the im2col map at (c[0], c[1], c[2], c[3]) = (channel, W, H, N) with
   offsets (ow, oh), or the tiled map at (c[0], c[1], c[2]) (k32: rank 4, at c[0 .. 3]); into the
   A or the B stage, `off` bytes on; multicast: into that offset of every CTA of the cluster. */
struct igemm_tma_copy {
    int c[4];
    uint16_t ow, oh;
    bool im2col, into_b, multicast;
    bool rank4; /* k32: a rank-4 tiled load, of x's map into B, of dy's into A */
    uint32_t off;
};

/* The loads of K tile kt (of the unit's) of work unit t by the CTA of rank `rank` in a cluster of
   CL (file comment), WGRAD the filter gradient, else the forward pass; KQ the filter gradient's
   k32 form in the shape of KQ pixels a row (tf32, CL 1), 0 for the other forms:
   - forward: copy 0 the im2col load of the A stage (BM pixels x bk channels of the tap), copy 1
     the tiled load of the B stage (bk channels x BN / CL filters, the rank's part);
   - filter gradient: copies 0 .. BM / 64 - 1 tiled loads of dy, 64 pixels x 64 filters each,
     the A stage's MN-major blocks; then BN / 64 / CL im2col loads of x (the rank's blocks), 64
     pixels x 64 channels of one tap each, the B stage's blocks;
   - k32: copies 0 .. BM / 64 - 1 rank-4 tiled loads of dy, 64 filters x the K tile's 32 / KQ rows
     of KQ pixels each (an A block, its planes); then 32 / KQ rank-4 tiled loads of x for each B
     block, 64 channels of one tap x one row of KQ pixels, each into its plane of the B stage.
   An A block wholly past M (the filters; forward, an A tile past M) or a B block past N (the
   padded columns) is not loaded: `on(i)`; `bytes`, what the CTA's full barrier expects, counts
   its own A blocks and every CTA's B blocks. */
template <int BM, int BN, bool WGRAD, int CL, int KQ = 0> struct igemm_tma_kt {
    static constexpr bool K32 = KQ > 0;
    static constexpr int ABLK = BM / 64, BBLK = BN / 64, BOWN = BBLK / CL, BLOADS = K32 ? 32 / KQ : 1;
    static constexpr int COPIES = WGRAD ? ABLK + BOWN * BLOADS : 2;
    static constexpr uint32_t BLOCK = 64 * 128;    /* a block: 64 rows of 128 bytes (MN-major: 64 K rows) */
    static constexpr uint32_t PLANE = BN * KQ * 4; /* k32: a B plane, one row of KQ pixels of every column */
    static_assert(BBLK % CL == 0, "the B tile splits evenly among the cluster's CTAs");
    static_assert(!K32 || WGRAD, "k32 is the filter gradient's (unclustered: make_plan declines the rest)");
    igemm_tma_unit u;
    int kt, na, nb, rank; /* the GEMM's K tile; the A and B blocks loaded (64 rows each) */
    int q0, p0, img;      /* k32: the K tile's first pixel (q0, p0) of image img */
    uint32_t bytes;

    __host__ __device__ __forceinline__ igemm_tma_kt(const igemm_params &p, const igemm_tma_geom &g, int t, int k,
                                                     int r)
    {
        u = igemm_tma_unit_at(g, t, BM, BN);
        kt = u.kt0 + k, rank = r;
        na = u.m0 < p.M ? (p.M - u.m0 + 63) / 64 : 0, nb = (p.N - u.n0 + 63) / 64;
        na = na < ABLK ? na : ABLK, nb = nb < BBLK ? nb : BBLK;
        bytes = WGRAD ? (uint32_t)(na + nb) * BLOCK : (uint32_t)((na > 0 ? BM : 0) + BN) * 128;
        q0 = p0 = img = 0;
        if (K32) { /* kt = (img * PB + pb) * QB + qb */
            uint32_t qb, pb;
            const uint32_t rest = ocd_fastdiv_divmod(g.fd_qb, (uint32_t)kt, &qb);
            img = (int)ocd_fastdiv_divmod(g.fd_pb, rest, &pb);
            q0 = (int)qb * KQ, p0 = (int)pb * BLOADS;
        }
    }
    __host__ __device__ __forceinline__ bool on(int i) const
    {
        if (!WGRAD) return i > 0 || na > 0;
        return i < ABLK ? i < na : rank * BOWN + (i - ABLK) / BLOADS < nb;
    }
    __host__ __device__ __forceinline__ igemm_tma_copy copy(const igemm_params &p, const igemm_tma_geom &g, int i) const
    {
        igemm_tma_copy c;
        c.ow = c.oh = 0;
        c.c[3] = 0;
        c.rank4 = K32;
        if (WGRAD && i < ABLK) { /* dy: filters m0 + 64 i .., pixels of K tile kt */
            c.im2col = false, c.into_b = false, c.multicast = false, c.off = (uint32_t)i * BLOCK;
            if (K32) c.c[0] = q0, c.c[1] = u.m0 + 64 * i, c.c[2] = p0, c.c[3] = img;
            else c.c[0] = u.m0 + 64 * i, c.c[1] = kt * OCD_IGEMM_TMA_BK, c.c[2] = 0;
            return c;
        }
        const bool a = !WGRAD && i == 0;                   /* the forward pass's im2col load */
        const int b = rank * BOWN + (i - ABLK) / BLOADS;   /* the filter gradient's B block */
        const igemm_tma_k k = igemm_tma_ktile(p, g, WGRAD ? u.n0 / 64 + b : kt);
        c.multicast = !a && CL > 1;
        if (!WGRAD && !a) { /* the filter: channels of the tap, the rank's filters from n0 */
            c.im2col = false, c.into_b = true, c.off = (uint32_t)(rank * (BN / CL)) * 128;
            c.c[0] = k.c0, c.c[1] = k.tap, c.c[2] = u.n0 + rank * (BN / CL);
            return c;
        }
        if (K32) { /* x: row `row` of the K tile's pixels in copy s of image img, channels c0 .. */
            const int row = (i - ABLK) % BLOADS;
            c.im2col = false, c.into_b = true, c.off = (uint32_t)row * PLANE + (uint32_t)b * (64 * KQ * 4);
            c.c[0] = q0, c.c[1] = k.c0, c.c[2] = (p0 + row) * g.k32_step + k.oh, c.c[3] = k.s * g.k32 + img;
            return c;
        }
        c.im2col = true, c.into_b = WGRAD, c.off = WGRAD ? (uint32_t)b * BLOCK : 0;
        c.c[0] = k.c0, c.ow = (uint16_t)k.ow, c.oh = (uint16_t)k.oh;
        if (WGRAD) igemm_tma_base(p, p.k_div, kt * OCD_IGEMM_TMA_BK, &c.c[1], &c.c[2], &c.c[3]);
        else igemm_tma_base(p, p.epi.row.div, u.m0, &c.c[1], &c.c[2], &c.c[3]);
        return c;
    }
};

/* The TMA kernel (conv_igemm_tma_sm90.cu) of each tile, fp16 and bf16, forward (and backward data
   as a forward pass) or the filter gradient, and fp32 data as TF32 forward and, unclustered, for
   the filter gradient's k32 form (NULL for the clustered filter gradient): encodes the tensor maps of p's pointers, launches
   min(units, sms) persistent CTAs (clustered: as many clusters as fit at once) and the
   reduction of split-K or a wide epilogue. The tiles: OCD_IGEMM_TMA_TILES, then
   OCD_IGEMM_TMA_C2_TILES, then OCD_IGEMM_TMA_W64_TILES (the filter gradient only), then
   OCD_IGEMM_TMA_NARROW_TILES (forward and backward data).
   ocd_igemm_tma_built: compiled with sm_90a code. */
#define OCD_IGEMM_TMA_ALL_TILES                                                                 \
    (OCD_IGEMM_TMA_NTILES + OCD_IGEMM_TMA_C2_NTILES + OCD_IGEMM_TMA_W64_NTILES + OCD_IGEMM_TMA_NARROW_NTILES)
typedef cudnnStatus_t (*igemm_tma_launch_fn)(const igemm_params *p, const igemm_tma_geom *g, int device, int sms,
                                             cudaStream_t stream);
extern const igemm_tma_launch_fn ocd_igemm_tma_launch[OCD_IGEMM_TMA_ALL_TILES][2][IGEMM_NTYPES]; /* [tile][wgrad][type] */
/* The clustered tiles' kernels (OCD_IGEMM_TMA_C2_TILES, [tile][wgrad][type], NULL where the
   launcher is): how many clusters fit the GPU at once on device, the current one (0 where none
   does: the plan declines; asked once per device and kernel, and OPENCUDNN_TEST_CLUSTERS=n, for
   tests, answers n without asking). */
typedef cudnnStatus_t (*igemm_tma_clusters_fn)(int device, int *clusters);
extern const igemm_tma_clusters_fn ocd_igemm_tma_clusters[OCD_IGEMM_TMA_C2_NTILES][2][IGEMM_NTYPES];
extern const bool ocd_igemm_tma_built;
/* Per tile (the launch table's order), whether its forward kernel has the staged epilogue
   (igemm_tma_geom::staged): the unclustered tiles whose ring leaves room for its buffer. */
extern const bool ocd_igemm_tma_staged[OCD_IGEMM_TMA_ALL_TILES];
/* Per tile, whether its forward kernel has the ping-pong twin (igemm_tma_geom::pingpong; with
   the staged epilogue, fp16 and bf16): the unclustered staged tiles of 128 rows or more. */
extern const bool ocd_igemm_tma_pingpong[OCD_IGEMM_TMA_ALL_TILES];

#endif /* OCD_CUDA_CONV_IGEMM_TMA_CUH */
