/* conv_igemm_tma.cuh: the tensor maps of the implicit-GEMM forward pass on the sm_90a TMA kernel
   (conv_igemm_tma_sm90.cu, entries cuda:fwd_igemm_tma_*, and cuda:dgrad_igemm_tma_* for backward
   data as a forward pass): what make_plan computes for them, how a
   K tile and a tile's first row become TMA coordinates, and the limits that make a problem
   decline. Host-callable, so that the CPU emulation (tests/emulate/conv_igemm_tma.cu) checks the
   same numbers against a model of the TMA written from the PTX ISA.

   Main decision: the GEMM of the forward pass is y[M = N*P*Q, K] = im2col(x)[M, R*S*C] w^T, and
   a K tile is 64 channels (128 bytes, one 128-byte-swizzled row: wgmma.cuh's K-major stage) of
   one filter tap (r, s): K tile kt is channel block kt % CB of tap kt / CB, CB = ceil(C / 64).
   Its A operand is one cp.async.bulk.tensor.4d.im2col load over the NHWC activations and its B
   operand one tiled load over the KRSC filter seen as (C, R*S, K); channels past C, pixels past
   the last image and the padding are filled with zeros by the TMA, so that neither operand needs
   a copy. The map parameters (rules of the CUDA driver API's cuTensorMapEncodeIm2col and
   cuTensorMapEncodeTiled, and of the PTX ISA's "Tensors: im2col mode"):
   - A, rank 4: globalDim (C, W, H, N), globalStrides the byte strides of W, H and N (multiples of
     16 below 2^40); the pixel box, in (W, H) order like the dims, from lower corner -pad to upper
     corner pad - (R - 1) * dilation relative to the tensor's last pixel: the filter base of output
     pixel p is p * stride - pad, and the last one, (P - 1) * stride - pad, is inside that box
     while P * stride - pad is past it; so the TMA, traversing the box W first, then H, then N
     with elementStrides (1, stride_w, stride_h, 1), visits the output pixels in GEMM row order
     from a tile's first one, across rows and images. channelsPerPixel 64 (the K tile), and
     pixelsPerColumn BM (at most 1024: one load per K tile). The im2col offsets of tap (r, s)
     are (s * dilation_w, r * dilation_h), the taps mirrored in CONVOLUTION mode. Corners are
     signed 8-bit and offsets unsigned 8-bit for rank 4 (ISA, "Bounding Box" of im2col mode),
     traversal strides at most 8 (cuTensorMapEncodeIm2col): problems beyond decline.
   - B, rank 3: globalDim (C, R*S, K), globalStrides (C, R*S*C) elements in bytes, box (64, 1, BN).
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
   which the box limits above bound as they bound the forward pass's. */
#ifndef OCD_CUDA_CONV_IGEMM_TMA_CUH
#define OCD_CUDA_CONV_IGEMM_TMA_CUH

#include "cuda/conv_igemm.cuh"

#define OCD_IGEMM_TMA_BK 64 /* channels of a K tile (16-bit types: 128 bytes) */

/* The two tensor maps' parameters (the driver calls' arguments, pointers aside) and what the
   kernel needs beyond igemm_params. */
struct igemm_tma_geom {
    uint64_t a_dim[4], a_stride[3]; /* (C, W, H, N); byte strides of W, H, N */
    int a_lower[2], a_upper[2];     /* pixel box corners, (W, H) */
    uint32_t a_estride[4];          /* traversal strides (1, stride_w, stride_h, 1) */
    uint32_t a_channels, a_pixels;  /* channelsPerPixel, pixelsPerColumn */
    uint64_t b_dim[3], b_stride[2]; /* (C, R*S, K); byte strides of R*S and K */
    uint32_t b_box[3];              /* (64, 1, BN) */
    int cblocks;                    /* channel blocks per tap, ceil(C / 64) */
    int nkt;                        /* K tiles: R * S * cblocks */
    int tiles_m, tiles;             /* tiles along M, and in all */
};

/* Fills g for the forward problem p (its activations prm.a with c channels, NHWC, and a packed
   KRSC filter of c channels), on tiles of bm x bn, elements of esize bytes. NULL, or why the
   TMA cannot load it. */
static inline const char *igemm_tma_plan(const igemm_params &p, int c, int bm, int bn, int esize, igemm_tma_geom *g)
{
    memset(g, 0, sizeof *g);
    /* an extent-1 dim has stride 0 in prm.a; any stride serves it, TMA wants a multiple of 16 */
    const int64_t sw = p.a.w > 1 ? p.a.sw : c, sh = p.a.h > 1 ? p.a.sh : sw * p.a.w;
    const int64_t n = p.M / ((int64_t)p.epi.row.div[0].d * p.epi.row.div[1].d);
    const int64_t sn = n > 1 ? p.a.sn : sh * p.a.h;
    const int64_t strides[3] = {sw * esize, sh * esize, sn * esize};
    for (int i = 0; i < 3; i++)
        if (strides[i] % 16 != 0 || strides[i] <= 0 || strides[i] >= ((int64_t)1 << 40))
            return "a pixel stride the TMA cannot take (a multiple of 16 bytes below 2^40)";
    if ((int64_t)c * esize % 16 != 0) return "channels not a multiple of 16 bytes (the filter's tap stride for the TMA)";
    if (p.uw > 8 || p.uh > 8) return "stride above 8 (the TMA's traversal stride)";
    const int lower[2] = {-p.pw, -p.ph}, upper[2] = {p.pw - (p.S - 1) * p.dw, p.ph - (p.R - 1) * p.dh};
    for (int i = 0; i < 2; i++)
        if (lower[i] < -128 || lower[i] > 127 || upper[i] < -128 || upper[i] > 127)
            return "padding or filter extent outside the TMA's im2col box corners ([-128, 127])";
    if ((p.S - 1) * p.dw > 255 || (p.R - 1) * p.dh > 255) return "dilated filter wider than the TMA's im2col offsets (255)";
    g->a_dim[0] = (uint64_t)c, g->a_dim[1] = (uint64_t)p.a.w, g->a_dim[2] = (uint64_t)p.a.h, g->a_dim[3] = (uint64_t)n;
    for (int i = 0; i < 3; i++) g->a_stride[i] = (uint64_t)strides[i];
    for (int i = 0; i < 2; i++) g->a_lower[i] = lower[i], g->a_upper[i] = upper[i];
    g->a_estride[0] = 1, g->a_estride[1] = (uint32_t)p.uw, g->a_estride[2] = (uint32_t)p.uh, g->a_estride[3] = 1;
    g->a_channels = OCD_IGEMM_TMA_BK, g->a_pixels = (uint32_t)bm;
    g->b_dim[0] = (uint64_t)c, g->b_dim[1] = (uint64_t)p.R * p.S, g->b_dim[2] = (uint64_t)p.N;
    g->b_stride[0] = (uint64_t)c * esize, g->b_stride[1] = (uint64_t)p.b_ld * esize;
    g->b_box[0] = OCD_IGEMM_TMA_BK, g->b_box[1] = 1, g->b_box[2] = (uint32_t)bn;
    g->cblocks = (c + OCD_IGEMM_TMA_BK - 1) / OCD_IGEMM_TMA_BK;
    g->nkt = p.R * p.S * g->cblocks;
    g->tiles_m = (p.M + bm - 1) / bm;
    g->tiles = g->tiles_m * ((p.N + bn - 1) / bn);
    return NULL;
}

/* The backward-data problem p (unit stride; its GEMM rows the pixels of dx, its activations dy)
   as the forward pass of the file comment: padding (R - 1) * dilation - pad, taps mirrored. */
static inline void igemm_tma_dgrad_as_fwd(igemm_params *p)
{
    p->pw = (p->S - 1) * p->dw - p->pw, p->ph = (p->R - 1) * p->dh - p->ph;
    p->flip = true;
}

/* K tile kt as TMA coordinates: its first channel, its filter tap (r * S + s: the B map's middle
   coordinate) and the im2col offsets (W, H) of the input pixel that tap reads (mirrored in
   CONVOLUTION mode, as igemm_load_fwd_a mirrors them). */
struct igemm_tma_k {
    int c0, tap, ow, oh;
};

__host__ __device__ __forceinline__ igemm_tma_k igemm_tma_ktile(const igemm_params &p, int cblocks, int kt)
{
    igemm_tma_k k;
    k.tap = kt / cblocks;
    k.c0 = (kt - k.tap * cblocks) * OCD_IGEMM_TMA_BK;
    int r = k.tap / p.S, s = k.tap - r * p.S;
    if (p.flip) r = p.R - 1 - r, s = p.S - 1 - s;
    k.ow = s * p.dw, k.oh = r * p.dh;
    return k;
}

/* The filter base of GEMM row m (output pixel (n, p, q)): the im2col load's W, H and N
   coordinates, (q * stride_w - pad_w, p * stride_h - pad_h, n). */
__host__ __device__ __forceinline__ void igemm_tma_base(const igemm_params &p, int m, int *w, int *h, int *n)
{
    uint32_t q, pp;
    uint32_t rest = ocd_fastdiv_divmod(p.epi.row.div[0], (uint32_t)m, &q);
    *n = (int)ocd_fastdiv_divmod(p.epi.row.div[1], rest, &pp);
    *w = (int)q * p.uw - p.pw;
    *h = (int)pp * p.uh - p.ph;
}

/* Tile t of the persistent loop: tiles run along M first (consecutive CTAs share B tiles). */
__host__ __device__ __forceinline__ void igemm_tma_tile_at(const igemm_tma_geom &g, int t, int bm, int bn, int *m0, int *n0)
{
    const int tn = t / g.tiles_m;
    *m0 = (t - tn * g.tiles_m) * bm;
    *n0 = tn * bn;
}

/* The two loads of K tile kt of tile t: the im2col load at (c0, w, h, n) with offsets (ow, oh)
   and the filter load at (c0, tap, n0). */
struct igemm_tma_load {
    int c0, w, h, n, ow, oh, tap, n0;
};

__host__ __device__ __forceinline__ igemm_tma_load igemm_tma_coords(const igemm_params &p, const igemm_tma_geom &g, int t,
                                                                    int kt, int bm, int bn)
{
    igemm_tma_load l;
    int m0;
    igemm_tma_tile_at(g, t, bm, bn, &m0, &l.n0);
    igemm_tma_base(p, m0, &l.w, &l.h, &l.n);
    const igemm_tma_k k = igemm_tma_ktile(p, g.cblocks, kt);
    l.c0 = k.c0, l.ow = k.ow, l.oh = k.oh, l.tap = k.tap;
    return l;
}

/* The TMA kernel (conv_igemm_tma_sm90.cu) of each tile, fp16 and bf16: encodes the tensor maps
   of p's pointers, launches min(tiles, sms) persistent CTAs and the reduction of a wide
   epilogue. ocd_igemm_tma_built: compiled with sm_90a code. */
typedef cudnnStatus_t (*igemm_tma_launch_fn)(const igemm_params *p, const igemm_tma_geom *g, int device, int sms,
                                             cudaStream_t stream);
extern const igemm_tma_launch_fn ocd_igemm_tma_launch[OCD_IGEMM_TMA_NTILES][2];
extern const bool ocd_igemm_tma_built;

#endif /* OCD_CUDA_CONV_IGEMM_TMA_CUH */
