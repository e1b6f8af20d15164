/* conv_igemm.cu: the implicit-GEMM convolution entries (conv_igemm.h): planning, the copies that
   bring operands into the kernel's layout (their kernels: conv_igemm_copy.cuh), and launching
   (the kernel is conv_igemm.cuh).

   Main decision: one plan function (make_plan) answers everything an entry is asked. It maps the
   convolution onto the GEMM of conv_igemm.cuh (ocd_conv_gemm_dims is the mapping; this file only
   adds where each operand lives), decides which operands must first be copied into the workspace,
   picks split-K, lays out the workspace, and says why it cannot when it cannot. The entries are
   planned (core/impl.h): make_plan runs once per problem, and the workspace query and the run
   read its plan.

   What the kernel reads directly: activations whose channels are contiguous with 16-byte aligned
   pixel strides (NHWC and its padded variants), and for the forward pass a KRSC (NHWC-format)
   filter. Activations whose spatial dims are packed but whose channels are not (NCHW and its
   padded-N/C variants) are first transposed to packed NHWC in the workspace; the filter is
   re-packed to KRSC (forward) or to [G][C/G][T][R][S][K/G] with the taps mirrored for
   CONVOLUTION mode (backward data); a TF32 plan's copies round to tf32 on the way
   (igemm_operand). Outputs are written in place in any layout, but for an NCHW-like one of
   the TMA kernel under the plain epilogue, which its staged epilogue writes packed NHWC into
   the workspace and a transpose brings out (plan_out).

   A forward pass without groups whose C is not a multiple of the 16-byte chunk (8 half, 4 float,
   16 int8: RGB images, C = 3) has its input copied with C padded by zeros to that multiple, and
   its filter packed the same way: more multiply-adds (8/3 at C = 3), but the tensor cores instead
   of the column path, which measured 7 times slower than the vendor on ResNet-50's first layer.
   The int8 configurations' vectorized layouts, INT8x4 and INT8x32, whose channels are contiguous
   only within a vector, are read in place by the forward loaders, x's and the filter's (INT8x4
   filters up to VECT_FILTER_IN_PLACE; a 16-channel chunk: four 4-byte vectors, or half of a
   32-byte one; vect_piece), else x takes the padded copy too and the filter the packed one.

   Backward data with a stride runs phase by phase (the _phases entries): the input pixels whose
   coordinates are a (mod stride) in every dim receive products from one subset of filter taps
   only, taps a + pad (mod stride) apart by the stride (without dilation; phase_problem in
   conv_igemm_phases.cuh has the dilated case). Each phase is therefore a unit-stride
   backward-data problem of its own, on a strided view of dx, with the filter view of its taps
   (mirrored for CONVOLUTION mode); it runs through the same plan and kernel (the sm_90a one
   where it applies; every phase on the TMA kernel for cuda:dgrad_igemm_tma_phases, fp16 and
   bf16, and cuda:dgrad_igemm_tma_tf32_phases, fp32 as TF32, which also take dilated filters),
   one phase after the other on the stream and sharing the workspace (the TMA entries' phases
   chained instead: phases_run). Phases without taps get dx = beta * dx (with beta 0 and a
   dense dx, one memset of all of dx before the phases, where some phase has no taps). An NCHW dx
   larger than most of the L2 is staged channels-last in the workspace around the phases, an NCHW
   dy with it (stage_problem). The plain
   kernel, which tests every tap at every pixel, did stride^2 times the work.

   Constraints (each a reason): sm_80 or newer; fp16 and bf16 (tf32 entries: fp32 data, forward
   and backward data, TF32 allowed; int8 entries: the forward pass of the int8 configurations,
   int8 or uint8 data with an int8 filter, any layout, vectorized ones without groups);
   the GEMM's channel dimension (C/G forward with groups, K/G backward data, both for the filter
   gradient) a multiple of 8 (4 for fp32, 16 for int8), the other entries serving channel tails; tensors read in place 16-byte aligned; every GEMM extent and pixel index below 2^31; no
   more than 65535 column tiles or groups x splits. The sm_90a entries (_wgmma_, conv_igemm_sm90.cu)
   also need compute capability 9.0 exactly; they take fp16 and bf16, and fp32 data as TF32 (where
   tensor-op math is allowed, forward and backward data, as the tf32 entries); those not yet
   measured faster than the tiles behind them serve only as unproven entries (tile_proven,
   core/impl.h). So do the TMA entries (_tma_,
   conv_igemm_tma_sm90.cu: forward, backward data as a forward pass over dy (unit stride, or
   stride phases: _tma_phases, which serves from 128 channels of dx, 256 as TF32 unless staged:
   phases_plan),
   and the filter gradient over channels padded to 64 per tap, no more than a quarter of them
   padding; fp16 and bf16, groups 1, 2-D, within the tensor maps' limits of conv_igemm_tma.cuh;
   the _tma_tf32 entries: fp32 data as TF32, forward and backward data, where tensor-op math is
   allowed, as the tf32 entries, and the filter gradient of NCHW data, dy through a copy with its
   rows padded to 16 bytes, x through one shifted copy per filter column (plan_rows;
   conv_igemm_tma.cuh's k32 form, on the unclustered 128x256, 256x128 and 64-row tiles, in rows
   of 8 pixels, or of 32 where dy's rows are 28 pixels or longer: k32_pixels_a_row)), their
   clustered twins (_tma_c2_ and _tma_c2_tf32_: the same
   kernel on clusters of 2 CTAs sharing B by multicast; declined where no cluster fits the GPU,
   cluster_rejects), listed after them, the narrow forward and backward-data tiles (128x128,
   256x64, 128x64; fp16, bf16 and TF32, unit stride and stride phases) after those, and the filter
   gradient's 64-row tiles (one consumer warpgroup: 64 filters; 256 columns wide, and 64 for a
   1x1 filter over 64 channels) last. */
#include "cuda/conv_igemm.cuh"
#include "cuda/conv_igemm_copy.cuh"
#include "cuda/conv_igemm_phases.cuh"
#include "cuda/conv_igemm_tma.cuh"

#include "core/dtype.h"
#include "core/impl.h"
#include "cuda/types.cuh"
#include "cuda/wgmma.cuh"
#include "core/reasons.h"
#include "core/dimgroup.h"
#include "ops/tensor_ops.h"

#include <stdlib.h>
#include <string.h>

/* ---- planning ------------------------------------------------------------------------------------- */

/* The tiles of the three kernels: the sm_80 kernel's (OCD_IGEMM_TILES) are tiles 0 ..
   OCD_IGEMM_NTILES - 1, the sm_90a cp.async kernel's (OCD_IGEMM_WGMMA_TILES) follow, then the
   sm_90a TMA kernel's (OCD_IGEMM_TMA_TILES: forward, unit-stride backward data, the filter
   gradient), its tiles on clusters of 2 CTAs from TMA_C2_TILE0 (OCD_IGEMM_TMA_C2_TILES), its
   64-row filter-gradient tiles from TMA_W64_TILE0 (OCD_IGEMM_TMA_W64_TILES) and its narrow
   forward and backward-data tiles from TMA_NARROW_TILE0 (OCD_IGEMM_TMA_NARROW_TILES). */
struct igemm_tile_info {
    int bm, bn;
};
#define WGMMA_TILE0 OCD_IGEMM_NTILES
#define TMA_TILE0 (OCD_IGEMM_NTILES + OCD_IGEMM_WGMMA_NTILES)
#define TMA_C2_TILE0 (TMA_TILE0 + OCD_IGEMM_TMA_NTILES)
#define TMA_W64_TILE0 (TMA_C2_TILE0 + OCD_IGEMM_TMA_C2_NTILES)
#define TMA_NARROW_TILE0 (TMA_W64_TILE0 + OCD_IGEMM_TMA_W64_NTILES)
#define TILES_ALL (TMA_TILE0 + OCD_IGEMM_TMA_ALL_TILES)
static const igemm_tile_info tile_info[TILES_ALL] = {
#define X(i, bm, bn, wm, wn, st) {bm, bn},
    OCD_IGEMM_TILES(X)
#undef X
#define X(i, bm, bn, st) {bm, bn},
    OCD_IGEMM_WGMMA_TILES(X) OCD_IGEMM_TMA_TILES(X) OCD_IGEMM_TMA_C2_TILES(X) OCD_IGEMM_TMA_W64_TILES(X)
        OCD_IGEMM_TMA_NARROW_TILES(X)
#undef X
};

/* A planned copy between an NCHW-like activation (tensor: n images of c channels sc apart, s
   packed pixels each, images sn apart) and packed NHWC in the workspace at ws_off: into it for
   an operand (copy_a, copy_b), out of it into the output (copy_out). */
struct igemm_copy {
    bool on;
    void *tensor;
    int64_t sn, sc, s, ws_off;
    int c, n;
};

/* A planned copy of an activation's rows for the k32 filter gradient (igemm_pad_rows). */
struct igemm_rows_copy {
    bool on;
    const void *src;
    int64_t ws_off;
    igemm_rows rows;
};

struct igemm_plan {
    igemm_type type;
    int int8; /* 0, or an int8 entry's plan: 1 + the column of ocd_igemm_int8_launch (1 int8 data, 2 uint8) */
    int esize;
    igemm_params prm;
    igemm_copy copy_a, copy_b;
    igemm_copy copy_out;            /* the TMA kernel's output through packed NHWC (plan_out) */
    igemm_rows_copy rows_a, rows_b; /* k32: the copies of dy and x (copy_a, copy_b off) */
    bool pad_on; /* the padded forward pass: x (pad_src) goes through pad (copy_a is off) */
    igemm_pad pad;
    const void *pad_src;
    int64_t ws_pad;
    bool pack_filter;
    igemm_filter_pack pack;
    int64_t ws_filter, ws_part;
    size_t ws_bytes;
    igemm_tma_geom tma; /* the TMA kernel's tensor maps (its tiles only) */
};

/* An activation view (N, C, [D,] H, W) with the strides of extent-1 dims set to 0, which the
   alignment and packing tests below may then ignore. */
struct act_dims {
    int64_t n, c, d, h, w;
    int64_t sn, sc, sd, sh, sw;
};

static act_dims act_of(const struct ocd_tensor_view *v)
{
    act_dims a;
    bool three = v->rank == 5;
    a.n = v->dims[0], a.c = v->dims[1];
    a.d = three ? v->dims[2] : 1, a.h = v->dims[v->rank - 2], a.w = v->dims[v->rank - 1];
    a.sn = a.n > 1 ? v->strides[0] : 0;
    a.sc = a.c > 1 ? v->strides[1] : 0;
    a.sd = three && a.d > 1 ? v->strides[2] : 0;
    a.sh = a.h > 1 ? v->strides[v->rank - 2] : 0;
    a.sw = a.w > 1 ? v->strides[v->rank - 1] : 0;
    return a;
}

/* log2 of a vector width (1, 4 or 32 channels). */
static int vect_shift(int vect)
{
    return __builtin_ctz((unsigned)vect);
}

/* The bytes of the pieces in which the forward loaders read v (x or the filter, whose dims and
   strides act_of reads alike), of esize-byte elements, in place when it is int8 INT8x4 or
   INT8x32 (a 4-byte vector, or half of a 32-byte one) and every stride is a multiple of them; 0
   otherwise. */
static int vect_piece(const struct ocd_tensor_view *v, int esize)
{
    if (esize != 1 || (v->vect != 4 && v->vect != 32)) return 0;
    const act_dims a = act_of(v);
    const int piece = v->vect == 4 ? 4 : 16;
    return a.sn % piece == 0 && a.sd % piece == 0 && a.sh % piece == 0 && a.sw % piece == 0 && a.sc % piece == 0
               ? piece
               : 0;
}

/* The largest int8 INT8x4 filter, in bytes, that the forward loader reads in place rather than
   from a KRSC copy in the workspace. Read in place, a 16-channel chunk of INT8x4 is four 4-byte
   pieces in four sectors: measured (H100) 1.04 times the packed filter's time on a 64 -> 64 3x3
   layer (37 KB; cudnn-frontend's IMMA sample, whose variant pack has no workspace, needs it so),
   1.99 on a 256 -> 256 one (590 KB). An INT8x32 chunk is 16 bytes of one vector, as a packed
   chunk is: read in place at any size (0.94 of the packed filter's time on the 590 KB one). */
#define VECT_FILTER_IN_PLACE (64 * 1024)

/* a's dims with the strides of packed NHWC */
static act_dims packed_nhwc(const act_dims &a)
{
    act_dims p = a;
    p.sc = 1, p.sw = a.c, p.sh = a.w * a.c, p.sd = a.h * a.w * a.c, p.sn = a.d * a.h * a.w * a.c;
    return p;
}

/* Plans *copy between a (at data) and packed NHWC at *ws (igemm_copy), its pixels packed; NULL or
   why not. */
static const char *plan_nhwc_copy(const act_dims &a, const void *data, int esize, igemm_copy *copy, size_t *ws)
{
    const bool spatial_packed = (a.w == 1 || a.sw == 1) && (a.h == 1 || a.sh == a.w) && (a.d == 1 || a.sd == a.h * a.w);
    if (!spatial_packed) return OCD_REASON_LAYOUT;
    const int64_t s = a.d * a.h * a.w;
    /* launch_nhwc_copy's grid: a block a 32 x 32 tile, below 2^31 */
    if (s > UINT32_MAX || ((s + 31) / 32) * ((a.c + 31) / 32) * a.n > INT32_MAX) return OCD_REASON_SHAPE;
    copy->on = true;
    copy->tensor = (void *)data;
    copy->sn = a.sn, copy->sc = a.sc, copy->s = s, copy->ws_off = (int64_t)*ws;
    copy->c = (int)a.c, copy->n = (int)a.n;
    *ws = ocd_ws_round(*ws + (size_t)(a.n * s * a.c) * (size_t)esize);
    return NULL;
}

/* Fills *act for the kernel: the tensor itself when its channels are contiguous and its strides
   keep 16-byte chunks aligned (the pointer must then be 16-byte aligned too), or when it is int8
   INT8x4 or INT8x32 with strides that keep its pieces aligned, else a planned transpose into the
   workspace (at *ws) when its spatial dims are packed. NULL or a reason. The choice depends on
   the layout alone, so that the workspace size never depends on pointers (the workspace queries
   have none). */
static const char *plan_act(const struct ocd_tensor_view *v, const void *data, int esize, int64_t group_c,
                            igemm_act *act, igemm_copy *copy, size_t *ws)
{
    act_dims a = act_of(v);
    int e = 16 / esize;
    act->group_c = group_c;
    act->d = (int)a.d, act->h = (int)a.h, act->w = (int)a.w;
    act->vshift = 0;
    copy->on = false;
    if (const int piece = vect_piece(v, esize)) { /* one group (make_plan) */
        if ((uintptr_t)data % piece != 0) return OCD_REASON_ALIGNMENT;
        act->ptr = data;
        act->sn = a.sn, act->sd = a.sd, act->sh = a.sh, act->sw = a.sw;
        act->vshift = vect_shift(v->vect), act->sv = a.sc;
        return NULL;
    }
    if (a.sc <= 1 && a.sn % e == 0 && a.sd % e == 0 && a.sh % e == 0 && a.sw % e == 0) {
        if ((uintptr_t)data % 16 != 0) return OCD_REASON_ALIGNMENT;
        act->ptr = data;
        act->sn = a.sn, act->sd = a.sd, act->sh = a.sh, act->sw = a.sw;
        return NULL;
    }
    if (const char *why = plan_nhwc_copy(a, data, esize, copy, ws)) return why;
    act->ptr = NULL; /* the workspace copy, bound at run time */
    const act_dims packed = packed_nhwc(a);
    act->sn = packed.sn, act->sd = packed.sd, act->sh = packed.sh, act->sw = packed.sw;
    return NULL;
}

/* Plans the k32 filter gradient's copy of activation v into the workspace (at *ws;
   conv_igemm_tma.cuh), rounded to tf32 as the other TF32 copies are (the tensor cores would
   truncate what they read in place, a bias that a filter gradient's sum over every pixel of
   the batch grows past the tests' TF32 tolerance): dy (shifted false: one tap, shift {1, 0, 0,
   1, 0}) with its rows padded to a multiple of 16 bytes; x (shifted) one copy per filter column
   (igemm_rows: taps, hs rows of ws_len, column j of copy s reading x's column j uw - pw + s dw,
   row h' x's row h' uh - ph; shift {uw, pw, dw, uh, ph}). The view in *act (its w and h those
   of the map: dy's own, the copy's for x), *sc its channel stride. NULL or a reason. */
static const char *plan_rows(const struct ocd_tensor_view *v, const void *data, bool shifted, int taps, int64_t hs,
                             int64_t ws_len, const int shift[5], igemm_act *act, igemm_rows_copy *copy, int64_t *sc,
                             size_t *ws)
{
    const act_dims a = act_of(v);
    memset(copy, 0, sizeof *copy);
    if (a.d != 1 || (a.w > 1 && a.sw != 1)) return "the TF32 filter gradient reads pixels consecutive along rows (NCHW)";
    act->d = 1, act->h = (int)a.h, act->w = (int)a.w, act->sw = 1, act->sd = 0, act->group_c = 0, act->vshift = 0;
    const int64_t total = taps * a.n * a.c * hs * ws_len;
    if (total >= INT32_MAX) return OCD_REASON_SHAPE;
    if (ws_len % 4 != 0) return "rows of the k32 copies not a multiple of 4 elements (igemm_pad_rows writes four at once)";
    copy->on = true, copy->src = data, copy->ws_off = (int64_t)*ws;
    igemm_rows &r = copy->rows;
    r.sn = a.sn, r.sc = a.sc, r.sh = a.sh, r.total = (uint32_t)(total / taps), r.taps = taps;
    r.w = (int)a.w, r.h = (int)a.h;
    r.uw = shift[0], r.pw = shift[1], r.dw = shift[2], r.uh = shift[3], r.ph = shift[4];
    r.div_ws = ocd_fastdiv_make((uint32_t)ws_len), r.div_hs = ocd_fastdiv_make((uint32_t)hs);
    r.div_c = ocd_fastdiv_make((uint32_t)a.c);
    *ws = ocd_ws_round(*ws + (size_t)total * sizeof(float));
    act->ptr = NULL; /* the workspace copy, bound at run time */
    if (shifted) act->h = (int)hs, act->w = (int)ws_len; /* x: the copy's rows are the map's */
    act->sh = ws_len, act->sn = a.c * hs * ws_len, *sc = hs * ws_len;
    return NULL;
}

/* Plans the padded forward pass's input: x copied into the workspace (at *ws) as packed NHWC
   with cp channels. NULL or a reason. */
static const char *plan_pad(const struct ocd_tensor_view *v, int64_t cp, int esize, igemm_act *act, igemm_pad *pad,
                            size_t *ws)
{
    act_dims a = act_of(v);
    int64_t total = a.n * a.d * a.h * a.w * cp;
    if (total >= INT32_MAX) return OCD_REASON_SHAPE;
    pad->sn = a.sn, pad->sc = a.sc, pad->sd = a.sd, pad->sh = a.sh, pad->sw = a.sw;
    pad->vshift = vect_shift(v->vect);
    pad->total = (uint32_t)total;
    pad->c = (int)a.c;
    pad->div_cp = ocd_fastdiv_make((uint32_t)cp), pad->div_w = ocd_fastdiv_make((uint32_t)a.w);
    pad->div_h = ocd_fastdiv_make((uint32_t)a.h), pad->div_d = ocd_fastdiv_make((uint32_t)a.d);
    act->group_c = cp;
    act->d = (int)a.d, act->h = (int)a.h, act->w = (int)a.w;
    act->ptr = NULL; /* the workspace copy, bound at run time */
    act->sn = a.d * a.h * a.w * cp, act->sd = a.h * a.w * cp, act->sh = a.w * cp, act->sw = cp;
    *ws = ocd_ws_round(*ws + (size_t)total * (size_t)esize);
    return NULL;
}

/* The divisors of a three-digit decode, innermost first. */
static void set_divs(ocd_fastdiv div[3], int64_t d0, int64_t d1, int64_t d2)
{
    div[0] = ocd_fastdiv_make((uint32_t)d0);
    div[1] = ocd_fastdiv_make((uint32_t)d1);
    div[2] = ocd_fastdiv_make((uint32_t)d2);
}

static igemm_map map_one(int64_t stride)
{
    igemm_map m;
    set_divs(m.div, 1, 1, 1);
    m.stride[0] = stride, m.stride[1] = m.stride[2] = m.stride[3] = 0;
    return m;
}

/* GEMM column -> channel of an activation whose channels lie sc apart, or for a vectorized one
   (INT8x4, INT8x32) vectors of `vect` adjacent channels sc apart. */
static igemm_map map_channels(int64_t sc, int vect)
{
    igemm_map m = map_one(sc);
    m.div[0] = ocd_fastdiv_make((uint32_t)vect);
    m.stride[3] = 1;
    return m;
}

/* GEMM row -> pixel (n, d, h, w) of an activation. */
static igemm_map map_pixels(const act_dims &a)
{
    igemm_map m;
    set_divs(m.div, a.w, a.h, a.d);
    m.stride[0] = a.sn, m.stride[1] = a.sd, m.stride[2] = a.sh, m.stride[3] = a.sw;
    return m;
}

/* Plans the output v of a TMA forward pass (or backward data as one) through the workspace, where
   its channels are not contiguous (NCHW) but its pixels are packed: the kernel's staged
   epilogue stores packed NHWC at *ws (ep's maps), and launch_nhwc_copy transposes that into v
   after it, rather than the kernel's fragments writing v element by element through the column
   map (three divisions and a 64-bit multiply-add an element, under which the tensor cores
   idle). The caller allows it where the epilogue is the plain one (alpha alone: beta's z and
   fused terms are read in v's own layout) and the tile has the staged epilogue. False where v
   does not take it (ep and *ws as they were). */
static bool plan_out(const struct ocd_tensor_view *v, void *data, int esize, igemm_epi &ep, igemm_copy *copy,
                     size_t *ws)
{
    const act_dims a = act_of(v);
    if (a.sc <= 1 || plan_nhwc_copy(a, data, esize, copy, ws) != NULL) return false;
    ep.out = NULL, ep.z = NULL; /* the workspace copy, bound at run time */
    ep.row = map_pixels(packed_nhwc(a));
    ep.col = map_one(1);
    ep.group_off = 0;
    return true;
}

/* The filter's strides as (k, c, t, r, s), whatever its rank. */
static void filter_strides(const struct ocd_tensor_view *w, int64_t st[5])
{
    bool three = w->rank == 5;
    st[0] = w->strides[0], st[1] = w->strides[1];
    st[2] = three ? w->strides[2] : 0;
    st[3] = w->strides[w->rank - 2], st[4] = w->strides[w->rank - 1];
}

/* A larger tile declines problems a smaller one serves better: when more than a quarter of its
   tiles' area would be padding (a GEMM N of 64 in a 128-wide tile), and, in the forward and
   backward-data passes, when its grid would not give every multiprocessor a tile (the filter
   gradient splits its long K to fill the GPU instead). The sm_80 kernel's last tile always
   applies; the sm_90a cp.async kernel's last (smallest) one declines padding only (split-K
   fills the GPU), leaving mostly-padding problems to the sm_80 tiles. The TMA kernel has no
   split-K in the forward and backward-data passes: its tiles decline grids too small there,
   for its narrow tiles (OCD_IGEMM_TMA_NARROW_TILES) and then the cp.async kernel's. A call's
   16-bit TMA tile, and its TF32 narrow one (wave23; not a stride phase's), takes a grid of
   two thirds of the multiprocessors or more: one wave of its tiles ran faster than a wave and
   a half of the next narrower ones (an H100, ResNet-50's 3x3 layers at batch 64: 98 tiles of
   128x256 on the 256-channel one 0.033 ms against 0.039 for 196 of 128x128 forward, 0.038 /
   0.044 backward data; 100 of 128x128 on the 512-channel one 0.035 / 0.054 for 200 of 128x64,
   0.046 / 0.068, TF32 stride 2 0.124 / 0.150), but not the wide TF32 tiles (98 of 128x256 0.122
   against 0.114 ms; and split in two, 50 of the 16-bit 128x256 took 0.056-0.069 ms against
   0.054 on the 512-channel layer). Both kernels see the same rule, so a TMA tile that declines
   a problem on its shape leaves it to no cp.async tile of that shape or wider: the narrow TMA
   tiles, listed after the wide ones and ahead of every cp.async tile, meet what only the
   cp.async tiles of their shape or narrower would serve. */
static const char *tile_rejects(cudnnHandle_t h, const struct ocd_conv_problem *p, int tile, int64_t m, int64_t n,
                                int64_t groups, bool wave23)
{
    if (tile == OCD_IGEMM_NTILES - 1) return NULL;
    const igemm_tile_info &t = tile_info[tile];
    const int64_t mt = (m + t.bm - 1) / t.bm, nt = (n + t.bn - 1) / t.bn;
    if (4 * m * n < 3 * mt * t.bm * nt * t.bn) return "this tile would be mostly padding; a smaller tile serves";
    const int64_t fill = wave23 ? (2 * h->sm_count + 2) / 3 : h->sm_count;
    if (tile != TMA_TILE0 - 1 && p->dir != OCD_CONV_BWD_FILTER && mt * nt * groups < fill)
        return "too few tiles of this size to fill the GPU; a smaller tile serves";
    return NULL;
}

/* Why clustered tile c2 (of OCD_IGEMM_TMA_C2_TILES) cannot run on h's device, or NULL: no
   cluster of its kernel fits the GPU at once (cudaOccupancyMaxActiveClusters 0: a MIG slice, or
   an MPS client held to fewer multiprocessors than a cluster needs), so that the next entry
   serves the call rather than the launch failing. The count is asked once per device and
   kernel (conv_igemm_tma_sm90.cu). */
static const char *cluster_rejects(cudnnHandle_t h, int c2, bool wgrad, igemm_type type)
{
    int clusters = 0;
    if (ocd_igemm_tma_clusters[c2][wgrad][type](h->device, &clusters) != CUDNN_STATUS_SUCCESS)
        return "the cluster occupancy query failed (cudaOccupancyMaxActiveClusters)";
    return clusters < 1 ? "no cluster of 2 CTAs of this kernel fits the GPU (cudaOccupancyMaxActiveClusters 0: MIG or MPS)"
                        : NULL;
}

/* The pixels along a row of the k32 filter gradient's K tile (conv_igemm_tma.cuh's k32
   paragraph) for output rows of q pixels: 32 (128-byte TMA rows, one load a block) where the rows
   are 28 pixels or longer, which pad to 32 or 64 (14- and 7-wide rows would be half padding),
   else 8 (4 rows of 8). On an H100, batch 64: 0.71 of the 8 x 4 form's time on ResNet-50's 3x3
   128-channel layer, 0.83 on its stride-2 one. */
static int k32_pixels_a_row(int64_t q)
{
    return q >= 28 ? 32 : 8;
}

/* Whether sm_90a tile `tile` has served direction dir on a GPU faster than what serves without
   it (the A/B of bench/run.sh -U; bench/results.md). fp16 and bf16: the TMA 128x256 tile in
   every direction, its 256x128 twin forward and for backward data (the 128-channel 3x3 layers:
   0.81-0.85 of the 128x128 tile's time), its 64-row filter gradient, its narrow tiles forward
   and for backward data (256x64 for the 64-channel 3x3 layers; 128x128 and 128x64 where the
   wide tiles are too few, 128x64 for the 512-channel layers at batch 64), and the cp.async
   kernel's forward 128x128 and 128x64 tiles. TF32: the TMA kernel's 256x128 and 128x256 tiles
   (0.80-0.92 of the 256x128's time on the stride-2 3x3 layers at batch 256) and its narrow
   128x128 and 128x64 ones (the stride-2 3x3 layers, which the Winograd entries ahead of them
   decline), forward and for backward data, which runs as a forward pass on the same kernel
   (ResNet-50's 3x3 64-channel layer at batch 64, where the heuristic puts them ahead of
   Winograd: 0.48 of its time; NHWC 0.37-0.39 of the mma.sync kernel's), and its 128x256
   tile's filter gradient of NCHW data (the k32 form: 0.60-0.87 of the mma.sync kernel's time on
   the 3x3 layers at batch 64 and 256) and its 64x256 one's (ResNet-50's 3x3 64-channel layer at
   batch 64: 0.68 of the mma.sync kernel's time). The other sm_90a tiles are unproven entries
   (core/impl.h, docs/engines.md): right on the GPU but not measured faster, or measured slower
   (the clustered tiles). */
static bool tile_proven(int tile, enum ocd_conv_dir dir, bool tf32)
{
    const bool narrow = tile >= TMA_NARROW_TILE0 && dir != OCD_CONV_BWD_FILTER;
    if (tf32)
        return (dir != OCD_CONV_BWD_FILTER && (tile == TMA_TILE0 || tile == TMA_TILE0 + 1 ||
                                               tile == TMA_NARROW_TILE0 || tile == TMA_NARROW_TILE0 + 2)) ||
               (dir == OCD_CONV_BWD_FILTER && (tile == TMA_TILE0 || tile == TMA_W64_TILE0));
    if (tile == TMA_TILE0 || narrow || (dir == OCD_CONV_BWD_FILTER && tile == TMA_W64_TILE0)) return true;
    if (tile == TMA_TILE0 + 1) return dir != OCD_CONV_BWD_FILTER;
    return dir == OCD_CONV_FWD && (tile == WGMMA_TILE0 + 2 || tile == WGMMA_TILE0 + 3);
}

/* Why the kernels' own typed store (igemm_epi_store) cannot run the fused epilogue of p, or NULL:
   it takes a scale of the output's type or fp32, one per channel at unit stride (the bias's
   indexing), and ReLU but no other activation (the step is a call: conv_igemm.cuh); any other
   goes to the partial sums and the second kernel's store (epi.wide). */
static const char *wide_store_rejects(const struct ocd_conv_problem *p)
{
    const struct ocd_tensor_view *sv = &p->ep.scale_view;
    if (p->ep.act_on) return "an activation other than ReLU (a call in the unrolled stores)";
    if (p->ep.scale_on && sv->dtype != p->y.dtype && sv->dtype != CUDNN_DATA_FLOAT)
        return "the scale is neither of the output's type nor fp32";
    if (p->ep.scale_on && sv->strides[1] != 1 && p->y.dims[1] > 1) return "the scale's channels are not contiguous";
    return NULL;
}

/* Whether the int8 configurations' output type t is one the typed plain form is compiled for
   (igemm_store_frags). */
static bool int8_typed_output(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_INT8 || t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_INT8x32 ||
           t == CUDNN_DATA_UINT8 || t == CUDNN_DATA_UINT8x4;
}

/* Whether the epilogue's stores can go two columns at once (epi.pairs): column n at offset n
   (contiguous channels, no padding columns), every row's offset even and the output and z
   aligned to two elements, so that a lane's two adjacent columns are one aligned access. Each
   element then costs its arithmetic and half a store, where through the column map it costs
   three divisions and a 64-bit multiply-add besides. */
static bool paired_stores(const igemm_params &prm, const igemm_plan *pl, int esize)
{
    const igemm_epi &e = prm.epi;
    const uintptr_t pair = 2 * (uintptr_t)esize;
    bool ok = esize > 1 && !pl->int8 && !e.wide && e.col_c == 0 && e.col.div[0].d == 1 && e.col.div[1].d == 1 &&
              e.col.div[2].d == 1 && e.col.stride[0] == 1 && e.group_off % 2 == 0 && (uintptr_t)e.out % pair == 0 &&
              (e.z == NULL || (uintptr_t)e.z % pair == 0);
    for (int d = 0; d < 4; d++) ok = ok && e.row.stride[d] % 2 == 0;
    return ok;
}

/* Whether the forward TMA kernel of tile `tile` (forward, or backward data as a forward pass)
   stores prm's output through the staged epilogue (conv_igemm_tma_sm90.cu): where the tile has
   it, the output's columns are contiguous (one digit of unit stride, or a single column), and
   no partial sums are written (a fused epilogue the typed store does not take, epi.wide; the
   forward pass has no split-K): it evaluates the typed store's epilogue (ocd_cuda_conv_epi_value). */
static bool staged_epilogue(const igemm_params &prm, int tile)
{
    const igemm_epi &e = prm.epi;
    const bool contiguous = e.col.div[0].d == 1 && e.col.div[1].d == 1 && e.col.div[2].d == 1 &&
                            (e.col.stride[0] == 1 || prm.N == 1);
    return ocd_igemm_tma_staged[tile - TMA_TILE0] && contiguous && !e.wide && prm.splits == 1 && e.col_c == 0;
}

/* Whether the staged TMA kernel of tile `tile` runs as its ping-pong twin (16-bit types): units
   of half the tile's rows, one consumer warpgroup's each, so that one's epilogue runs under the
   other's mainloop. Wherever the tile has one: the cooperative tile, which reads less of L2 a
   flop (each twin unit loads all of B for half the rows), measured slower even on the long
   mainloops of the 3x3 256-channel layers (bench/archive.md). */
static bool pingpong_wanted(int tile, bool tf32)
{
    return !tf32 && ocd_igemm_tma_pingpong[tile - TMA_TILE0];
}

/* The split count of the TMA filter gradient, whose kernel runs one persistent CTA a
   multiprocessor over tiles x splits units: the fewest splits, up to `most`, of least time in
   K tiles (of 64 16-bit channels) a multiprocessor: the units' waves times a unit's K tiles and,
   split, its fp32 partial tile written, plus the reduction's read of every partial tile spread
   over the GPU. A tile's partials take about WAVE_PARTIAL_KT K tiles' time: 4 bytes an element
   against 128 flops at 660 TFLOP/s and 3 TB/s (an H100's or H200's dense 16-bit rate and copy
   bandwidth). Where the tiles fill less than a wave, "about two CTAs a multiprocessor" (the
   other kernels' rule) takes a second, mostly idle one: 12 splits of 17 K tiles in 2 waves on
   the 3x3 256-channel layer at batch 64, where 7 of 28 fill one. Measured (H100, ResNet-50's
   3x3 layers, fp16 and bf16): 0.70-0.81 of the two-CTA rule's time at batch 64, 0.70-0.92 at
   256. */
#define WAVE_PARTIAL_KT 7
static int64_t wave_splits(int64_t tiles, int64_t ktiles, int64_t sms, int64_t most)
{
    int64_t best = 1, best_cost = INT64_MAX;
    for (int64_t s = 1; s <= most; s++) {
        const int64_t waves = (tiles * s + sms - 1) / sms, unit = (ktiles + s - 1) / s;
        /* in K tiles times sms, so that the reduction's share stays whole */
        const int64_t cost = s == 1 ? waves * unit * sms
                                    : waves * (unit + WAVE_PARTIAL_KT) * sms + s * tiles * WAVE_PARTIAL_KT;
        if (cost < best_cost) best = s, best_cost = cost;
    }
    return best;
}

/* What a plan is for: an entry's call; an int8 entry's (the forward pass of the int8
   configurations on the sm_80 kernel; the other entries decline 8-bit data); or a stride phase of
   a _phases entry, whose TMA tiles the entry's own gate has judged (phases_plan). */
enum plan_use { PLAN_CALL, PLAN_INT8, PLAN_PHASE };

static const char *make_plan(cudnnHandle_t h, const struct ocd_conv_problem *p, int tile, bool tf32, igemm_plan *pl,
                             plan_use use = PLAN_CALL)
{
    memset(pl, 0, sizeof *pl);
    if (h->cc_major < 8) return OCD_REASON_ARCH;
    const bool wgmma = tile >= WGMMA_TILE0, tma = tile >= TMA_TILE0, int8 = use == PLAN_INT8;
    if (wgmma && !(tma && use == PLAN_PHASE) && !tile_proven(tile, p->dir, tf32))
        if (const char *why = ocd_impl_unproven()) return why;
    if (wgmma)
        if (const char *why = ocd_wgmma_entry_rejects(h, tma ? ocd_igemm_tma_built : ocd_igemm_wgmma_built)) return why;
    if (tma) {
        if (tile >= TMA_W64_TILE0 && tile < TMA_NARROW_TILE0 && p->dir != OCD_CONV_BWD_FILTER)
            return "the 64-row TMA tile is the filter gradient's";
        if (tile >= TMA_NARROW_TILE0 && p->dir == OCD_CONV_BWD_FILTER)
            return "the narrow TMA tiles are the forward pass's and backward data's";
        if (p->s.groups != 1) return "the TMA kernel takes no groups";
        if (p->s.nsp != 2) return "the TMA kernel is 2-D only (rank-4 im2col maps)";
        if (p->dir == OCD_CONV_BWD_DATA && (p->s.stride[0] != 1 || p->s.stride[1] != 1))
            return "strided backward data runs on the _phases entries";
    }
    cudnnDataType_t dt = p->x.dtype;
    if (tf32) {
        if (dt != CUDNN_DATA_FLOAT) return OCD_REASON_DTYPE;
        if (const char *why = ocd_conv_tensor_ops_rejects(p)) return why;
        if (p->dir == OCD_CONV_BWD_FILTER && (!tma || (tile >= TMA_C2_TILE0 && tile < TMA_W64_TILE0)))
            return "no TF32 kernel for the filter gradient on this tile: TF32 mma.sync and wgmma take K-major operands "
                   "only, which the unclustered TMA tiles read from NCHW (its pixels consecutive)";
        pl->type = IGEMM_TF32;
    } else if (dt == CUDNN_DATA_HALF) {
        pl->type = IGEMM_F16;
    } else if (dt == CUDNN_DATA_BFLOAT16) {
        pl->type = IGEMM_BF16;
    } else if (int8) {
        const cudnnDataType_t xs = ocd_dtype_scalar(dt);
        if ((xs != CUDNN_DATA_INT8 && xs != CUDNN_DATA_UINT8) || ocd_dtype_scalar(p->w.dtype) != CUDNN_DATA_INT8)
            return OCD_REASON_DTYPE;
        if (p->dir != OCD_CONV_FWD) return "the int8 kernel is the forward pass's";
        if (p->s.groups != 1 && (p->x.vect > 1 || p->w.vect > 1 || p->y.vect > 1))
            return "vectorized int8 layouts (INT8x4, INT8x32) with groups run on the direct kernel";
        pl->int8 = xs == CUDNN_DATA_INT8 ? 1 : 2;
    } else {
        return OCD_REASON_DTYPE;
    }
    if (int8 && !pl->int8) return OCD_REASON_DTYPE;
    /* K tiles of 64 bytes (sm_80) or 128 (sm_90a: one swizzled row) */
    const int esize = pl->int8 ? 1 : dt == CUDNN_DATA_FLOAT ? 4 : 2, e = 16 / esize, bk = (wgmma ? 128 : 64) / esize;
    pl->esize = esize;
    const struct ocd_conv_shape *s = &p->s;
    const int64_t g = s->groups, cg = s->c / g, kg = s->k / g;
    /* the GEMM K runs over channels per group (forward) or filters per group (backward data),
       both for the filter gradient; 16-byte chunks must not straddle a filter tap */
    /* the padded forward pass (file comment); int8 data in a vectorized layout takes it too where
       the kernel cannot read it in place */
    pl->pad_on = p->dir == OCD_CONV_FWD && g == 1 && (cg % e != 0 || (p->x.vect > 1 && vect_piece(&p->x, esize) == 0));
    const int64_t cgp = pl->pad_on ? (cg + e - 1) / e * e : cg;
    if ((p->dir != OCD_CONV_BWD_DATA && cgp % e != 0) || (p->dir != OCD_CONV_FWD && kg % e != 0))
        return "channels or filters per group are not a multiple of 8 (4 for fp32, 16 for int8)";
    struct ocd_conv_gemm gm;
    ocd_conv_gemm_dims(p, &gm);
    if (pl->pad_on) gm.k = cgp * ocd_conv_spatial(s, s->filt);
    /* the TMA filter gradient's columns: each tap's channels padded to 64 (conv_igemm_tma.cuh) */
    const bool tma_wgrad = tma && p->dir == OCD_CONV_BWD_FILTER, k32 = tma_wgrad && tf32;
    /* where cuBLAS's GEMMs were faster (an H100): a 1x1 filter's gradient, one GEMM without
       im2col, over few pixels (7x7 at batch 64, 3136 pixels: 0.69 of the k32 form's time; 1.22
       at batch 256), and a larger filter's over images of fewer than 100 pixels (3x3 at 7x7:
       0.70 at batch 64, 0.92 at 256), whose rows of 7 the k32 form pads to 8 in every copy */
    const int64_t taps = ocd_conv_spatial(s, s->filt), image_pixels = ocd_conv_spatial(s, s->out);
    if (k32 && taps == 1 && s->n * image_pixels < 8192)
        return "a 1x1 filter's gradient over fewer than 8192 pixels: cuBLAS's GEMM serves it";
    /* and a unit-stride 1x1 filter's over images of 14x14 or more, which cuBLAS's per-image GEMM
       reads in place where the k32 form copies both operands (an H100, batch 64: 0.33-0.37 of
       its time on ResNet-50's 1x1 layers at 56x56 and 28x28), or at 14x14, where the per-image
       partial sums outweigh the operands, the mma.sync TF32 kernel (0.116-0.120 ms against
       0.132-0.135 on the 1024 <-> 256 layers) */
    if (k32 && taps == 1 && ocd_conv_unit_stride(s) && image_pixels >= 196)
        return "a unit-stride 1x1 filter's gradient over images of 196 pixels or more: cuBLAS's per-image GEMM or "
               "the mma.sync TF32 kernel serves it";
    if (k32 && taps > 1 && image_pixels < 100) return "images of fewer than 100 output pixels: cuBLAS's GEMM serves them";
    const int64_t ccols = tma_wgrad ? (cg + OCD_IGEMM_TMA_BK - 1) / OCD_IGEMM_TMA_BK * OCD_IGEMM_TMA_BK : cg;
    if (4 * cg < 3 * ccols) return "the TMA filter gradient pads each tap's channels to 64: mostly padding here";
    if (tma_wgrad) gm.n = ccols * taps;
    const int64_t lim = INT32_MAX - 256;
    if (gm.m > lim || gm.n > lim || gm.k > lim) return OCD_REASON_SHAPE;
    for (int d = 0; d < s->nsp; d++)
        if (s->in[d] + 2 * s->pad[d] + (s->filt[d] + 1) * s->dilation[d] + s->stride[d] > (1 << 30))
            return OCD_REASON_SHAPE;
    if (p->ep.on && !pl->int8) {
        if (p->ep.bias_view.dtype != p->y.dtype) return OCD_REASON_DTYPE;
    }
    const bool wave23 = tma && use == PLAN_CALL && (!tf32 || tile >= TMA_NARROW_TILE0);
    const char *why = tile_rejects(h, p, tile, gm.m, gm.n, g, wave23);
    if (why) return why;

    igemm_params &prm = pl->prm;
    prm.M = (int)gm.m, prm.N = (int)gm.n, prm.K = (int)gm.k, prm.groups = (int)g;
    const bool three = s->nsp == 3;
    prm.T = three ? (int)s->filt[0] : 1, prm.R = (int)s->filt[s->nsp - 2], prm.S = (int)s->filt[s->nsp - 1];
    prm.pd = three ? s->pad[0] : 0, prm.ph = s->pad[s->nsp - 2], prm.pw = s->pad[s->nsp - 1];
    prm.ud = three ? s->stride[0] : 1, prm.uh = s->stride[s->nsp - 2], prm.uw = s->stride[s->nsp - 1];
    prm.dd = three ? s->dilation[0] : 1, prm.dh = s->dilation[s->nsp - 2], prm.dw = s->dilation[s->nsp - 1];
    prm.flip = s->flip;

    const act_dims xa = act_of(&p->x), ya = act_of(&p->y);
    int64_t wst[5];
    filter_strides(&p->w, wst);
    size_t ws = 0;
    int64_t dy_sc = 0, x_sc = 0; /* k32: the channel strides of dy and x as read */
    const igemm_k32_blocks k32b = igemm_k32_blocks_of(ya.w, ya.h, k32 ? k32_pixels_a_row(ya.w) : 8); /* k32: the K tiles */
    igemm_epi &ep = prm.epi;
    ocd_cuda_conv_epi &ty = ep.typed;
    ty.alpha = (float)p->alpha;
    ty.beta = (float)p->beta;
    switch (p->dir) {
    case OCD_CONV_FWD: {
        if (pl->pad_on) {
            pl->ws_pad = (int64_t)ws;
            pl->pad_src = p->x_data;
            if ((why = plan_pad(&p->x, cgp, esize, &prm.a, &pl->pad, &ws))) return why;
        } else if ((why = plan_act(&p->x, p->x_data, esize, cg, &prm.a, &pl->copy_a, &ws))) {
            return why;
        }
        /* B: the filter rows [k][t][r][s][c], read in place when it is a KRSC filter, or an int8
           one in INT8x32 or a small one in INT8x4 (VECT_FILTER_IN_PLACE; without groups or padded
           channels) */
        const bool krsc = p->w_format == CUDNN_TENSOR_NHWC && !pl->pad_on;
        const bool fits = p->w.vect == 32 || kg * cg * prm.T * prm.R * prm.S <= VECT_FILTER_IN_PLACE;
        const int wpiece = pl->int8 && g == 1 && !pl->pad_on && fits ? vect_piece(&p->w, esize) : 0;
        if ((krsc || wpiece) && (uintptr_t)p->w_data % (wpiece ? wpiece : 16) != 0) return OCD_REASON_ALIGNMENT;
        prm.b_ld = wpiece ? wst[0] : cgp * prm.T * prm.R * prm.S, prm.b_gs = kg * prm.b_ld;
        prm.bmat = krsc || wpiece ? p->w_data : NULL;
        pl->pack_filter = !krsc && !wpiece;
        if (wpiece) {
            prm.b.vshift = vect_shift(p->w.vect), prm.b.sv = wst[1];
            prm.b.sd = wst[2], prm.b.sh = wst[3], prm.b.sw = wst[4];
        }
        set_divs(prm.k_div, cgp, prm.S, prm.R);
        ep.out = p->y_data;
        ep.z = p->y_data;
        ep.row = map_pixels(ya);
        ep.col = map_channels(ya.sc, p->y.vect);
        ep.group_off = kg * ya.sc;
        if (pl->int8) {
            ep.store = ocd_cuda_conv_store_of(p); /* the whole epilogue (igemm_epi_out) */
        } else if (p->ep.on) {
            ty.beta = (float)p->ep.alpha2;
            ep.z = p->ep.z;
            if (ep.z == NULL) ty.beta = 0;
            ty.bias = p->ep.bias;
            ty.relu = p->ep.relu;
            if (p->ep.bias_view.strides[1] != 1 && p->y.dims[1] > 1) return OCD_REASON_LAYOUT;
            ep.wide = wide_store_rejects(p) != NULL;
            if (ep.wide) {
                ep.store = ocd_cuda_conv_store_of(p);
            } else {
                ty.scale = p->ep.scale_on ? p->ep.scale : NULL;
                ty.scale_f32 = p->ep.scale_view.dtype == CUDNN_DATA_FLOAT;
                ty.scale_z = p->ep.scale_z, ty.scale_bias = p->ep.scale_bias;
            }
        }
        break;
    }
    case OCD_CONV_BWD_DATA: {
        if ((why = plan_act(&p->y, p->y_data, esize, kg, &prm.a, &pl->copy_a, &ws))) return why;
        prm.b_ld = kg * prm.T * prm.R * prm.S, prm.b_gs = cg * prm.b_ld;
        pl->pack_filter = true;
        set_divs(prm.k_div, kg, prm.S, prm.R);
        set_divs(prm.str_div, prm.uw, prm.uh, prm.ud);
        ep.out = p->x_data;
        ep.z = p->x_data;
        ep.row = map_pixels(xa);
        ep.col = map_one(xa.sc);
        ep.group_off = cg * xa.sc;
        if (p->relu_grad) { /* z is the ReLU's forward input, laid out as dx */
            if (p->beta != 0) return "a ReLU gradient after a blend with beta";
            ep.z = p->relu_x;
            ty.relu_grad = 1;
        }
        break;
    }
    default: {
        if (k32) { /* conv_igemm_tma.cuh's k32 paragraph: the copies' extents */
            const int step = igemm_k32_row_step(prm);
            const int64_t x_rows = (k32b.pb * k32b.rows - 1) * step + (prm.R - 1) * prm.dh + 1;
            const int dy_shift[5] = {1, 0, 0, 1, 0}, x_shift[5] = {prm.uw, prm.pw, prm.dw, prm.uh / step, prm.ph};
            if ((why = plan_rows(&p->y, p->y_data, false, 1, ya.h, (ya.w + 3) / 4 * 4, dy_shift, &prm.a, &pl->rows_a,
                                 &dy_sc, &ws)))
                return why;
            if ((why = plan_rows(&p->x, p->x_data, true, prm.S, x_rows, (ya.w + 7) / 8 * 8, x_shift, &prm.b,
                                 &pl->rows_b, &x_sc, &ws)))
                return why;
        } else {
            if ((why = plan_act(&p->y, p->y_data, esize, kg, &prm.a, &pl->copy_a, &ws))) return why;
            if ((why = plan_act(&p->x, p->x_data, esize, cg, &prm.b, &pl->copy_b, &ws))) return why;
        }
        set_divs(prm.k_div, ya.w, ya.h, ya.d);
        ep.out = p->w_data;
        ep.z = p->w_data;
        ep.row = map_one(wst[0]);
        set_divs(ep.col.div, ccols, prm.S, prm.R);
        ep.col_c = ccols != cg ? (int)cg : 0;
        ep.col.stride[0] = wst[2], ep.col.stride[1] = wst[3], ep.col.stride[2] = wst[4], ep.col.stride[3] = wst[1];
        ep.group_off = kg * wst[0];
        break;
    }
    }
    if (ty.beta == 0.f && !ty.relu_grad) ep.z = NULL;
    ep.pairs = paired_stores(prm, pl, esize);
    ep.form = igemm_epi_form_of(ty);
    /* the int8 configurations: the typed plain form (alpha alone, the output int8, uint8 or
       float: igemm_store_frags) where the call needs no more, else the direct kernels' store */
    if (pl->int8 && (p->ep.on || !int8_typed_output(ep.store.t))) ep.form = IGEMM_EPI_WHOLE;

    /* TF32: the operands no copy rounded are rounded by the sm_90a kernel (igemm_operand) */
    prm.round_a = tf32 && !pl->copy_a.on && !pl->pad_on;
    prm.round_b = tf32 && !pl->pack_filter;
    /* an NCHW output of the TMA kernel through packed NHWC (plan_out; not a stride phase's, whose
       entry stages an NCHW dx of its own) */
    if (tma && !tma_wgrad && use == PLAN_CALL && !p->ep.on && !p->relu_grad && p->beta == 0 &&
        ocd_igemm_tma_staged[tile - TMA_TILE0]) {
        const bool fwd = p->dir == OCD_CONV_FWD;
        plan_out(fwd ? &p->y : &p->x, fwd ? p->y_data : p->x_data, esize, ep, &pl->copy_out, &ws);
    }
    if (pl->pack_filter) {
        if ((why = igemm_filter_pack_make(&pl->pack, wst, vect_shift(p->w.vect), (int)g, (int)kg, (int)cg, (int)cgp,
                                          prm.T, prm.R, prm.S, p->dir == OCD_CONV_BWD_DATA, s->flip)))
            return why;
        pl->ws_filter = (int64_t)ws;
        ws = ocd_ws_round(ws + (size_t)(s->k * cgp * prm.T * prm.R * prm.S) * (size_t)esize);
    }

    /* Split-K when the tiles alone leave multiprocessors idle: about two CTAs per multiprocessor
       (the TMA filter gradient: wave_splits), at least 16 K tiles per split, at most 64
       splits; never for int8 (its sums must stay exact integers, which fp32 partial tiles are
       not). */
    const igemm_tile_info &ti = tile_info[tile];
    const int64_t tiles = ((gm.m + ti.bm - 1) / ti.bm) * ((gm.n + ti.bn - 1) / ti.bn) * g;
    const int64_t ktiles = k32 ? ya.n * k32b.qb * k32b.pb : (gm.k + bk - 1) / bk;
    int64_t splits = 1;
    if (tiles < h->sm_count && (!tma || tma_wgrad) && !pl->int8) {
        const int64_t most = OCD_MAX(OCD_MIN(ktiles / 16, (int64_t)64), (int64_t)1);
        if (tma_wgrad)
            splits = wave_splits(tiles, ktiles, h->sm_count, most);
        else
            splits = OCD_MIN((2 * (int64_t)h->sm_count + tiles - 1) / tiles, most);
    }
    const int64_t kps = (ktiles + splits - 1) / splits;
    splits = (ktiles + kps - 1) / kps;
    prm.splits = (int)splits, prm.kt_per_split = (int)kps;
    if ((gm.n + ti.bn - 1) / ti.bn > 65535 || g * splits > 65535) return OCD_REASON_SHAPE;
    if (splits > 1 || ep.wide) {
        pl->ws_part = (int64_t)ws;
        ws = ocd_ws_round(ws + (size_t)(splits * g * gm.m * gm.n) * sizeof(float));
    }
    /* room to align a user's workspace pointer to 256 bytes (the copies feed 16-byte cp.async) */
    pl->ws_bytes = ws ? ws + 256 : 0;
    if (!tma) return NULL;
    const int cl = tile >= TMA_C2_TILE0 && tile < TMA_W64_TILE0 ? 2 : 1;
    if (p->dir == OCD_CONV_FWD) {
        why = igemm_tma_plan(prm, (int)cgp, ti.bm, ti.bn, cl, esize, &pl->tma);
    } else if (tma_wgrad) {
        why = k32 ? igemm_tma_plan_wgrad_k32(prm, (int)cg, dy_sc, x_sc, k32b.kq, ti.bm, ti.bn, &pl->tma)
                  : igemm_tma_plan_wgrad(prm, (int)cg, ti.bm, ti.bn, cl, esize, &pl->tma);
    } else {
        igemm_tma_dgrad_as_fwd(&prm);
        why = igemm_tma_plan(prm, (int)kg, ti.bm, ti.bn, cl, esize, &pl->tma);
    }
    if (why == NULL && cl == 1 && !tma_wgrad) pl->tma.staged = staged_epilogue(prm, tile);
    if (pl->tma.staged && pingpong_wanted(tile, tf32)) igemm_tma_pingpong(prm, ti.bm, ti.bn, &pl->tma);
    return why != NULL || cl == 1 ? why : cluster_rejects(h, tile - TMA_C2_TILE0, tma_wgrad, pl->type);
}

/* ---- running -------------------------------------------------------------------------------------- */

/* The copy c between its NCHW-like activation and packed NHWC at nhwc (cuda/transpose.cuh: one
   batch dim over the images; into the workspace, p runs over an image's pixels and q over its
   channels, out of it the other way round), in words of two elements where the extents,
   strides and both pointers allow (ocd_transpose_words). */
template <typename U>
static cudnnStatus_t launch_nhwc_copy(const igemm_copy &c, U *nhwc, bool into, bool tf32, cudaStream_t stream)
{
    U *const tensor = (U *)c.tensor, *const dst = into ? nhwc : tensor;
    const U *const src = into ? tensor : nhwc;
    const int64_t image = c.s * c.c;
    ocd_transpose_args g = into ? ocd_transpose_plan((uint32_t)c.s, (uint32_t)c.c, c.sc, c.c)
                                : ocd_transpose_plan((uint32_t)c.c, (uint32_t)c.s, c.c, c.sc);
    g.batch_rank = 1;
    g.batch_dims[0] = ocd_fastdiv_make((uint32_t)c.n);
    g.x_batch[0] = into ? c.sn : image, g.y_batch[0] = into ? image : c.sn;
    const bool pairs = ocd_transpose_words(&g, src, dst, sizeof(U), 2) == 2;
    const unsigned blocks = g.tiles_p * g.tiles_q * (unsigned)c.n;
    const dim3 block(OCD_TRANSPOSE_TILE, OCD_TRANSPOSE_TILE_ROWS);
    const igemm_nhwc_put<U> put = {tf32};
    if (pairs) ocd_transpose_tiled<U, 2><<<blocks, block, 0, stream>>>(g, put, dst, src);
    else ocd_transpose_tiled<U, 1><<<blocks, block, 0, stream>>>(g, put, dst, src);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <typename U>
static cudnnStatus_t launch_copies(igemm_plan *pl, const void *filter, char *ws, cudaStream_t stream)
{
    const bool tf32 = pl->type == IGEMM_TF32;
    if (pl->pad_on) {
        U *dst = (U *)(ws + pl->ws_pad);
        unsigned blocks = (unsigned)OCD_MIN((pl->pad.total + 255) / 256, 65535u * 16);
        igemm_pad_channels<U><<<blocks, 256, 0, stream>>>((const U *)pl->pad_src, dst, pl->pad, tf32);
        OCD_CUDA_LAUNCHED();
        pl->prm.a.ptr = dst;
    }
    igemm_copy *copies[2] = {&pl->copy_a, &pl->copy_b};
    igemm_rows_copy *rows[2] = {&pl->rows_a, &pl->rows_b};
    igemm_act *acts[2] = {&pl->prm.a, &pl->prm.b};
    for (int i = 0; i < 2; i++) {
        const igemm_rows_copy &r = *rows[i];
        if (!r.on) continue;
        U *dst = (U *)(ws + r.ws_off);
        unsigned blocks = (unsigned)OCD_MIN((r.rows.total / 4 + 255) / 256, 65535u * 16);
        igemm_pad_rows<U><<<blocks, 256, 0, stream>>>((const U *)r.src, dst, r.rows, tf32);
        OCD_CUDA_LAUNCHED();
        acts[i]->ptr = dst;
    }
    for (int i = 0; i < 2; i++) {
        const igemm_copy &c = *copies[i];
        if (!c.on) continue;
        U *dst = (U *)(ws + c.ws_off);
        if (cudnnStatus_t st = launch_nhwc_copy(c, dst, true, tf32, stream)) return st;
        acts[i]->ptr = dst;
    }
    if (pl->pack_filter) {
        const igemm_filter_pack &f = pl->pack;
        U *dst = (U *)(ws + pl->ws_filter);
        if (f.tiled) {
            const dim3 grid((unsigned)((f.b_n + 31) / 32), (unsigned)((f.a_n + 31) / 32), (unsigned)(f.g * f.taps));
            igemm_pack_filter_tiled<U><<<grid, dim3(32, 8), 0, stream>>>((const U *)filter, dst, f, tf32);
        } else {
            const int64_t total = (int64_t)f.g * f.a_n * f.taps * f.b_n;
            const unsigned blocks = (unsigned)OCD_MIN((total + 255) / 256, (int64_t)65535);
            igemm_pack_filter<U><<<blocks, 256, 0, stream>>>((const U *)filter, dst, f, tf32);
        }
        OCD_CUDA_LAUNCHED();
        pl->prm.bmat = dst;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Binds pl's pointers to the workspace and launches its operand copies (make_plan's plan for p). */
static cudnnStatus_t run_copies(cudnnHandle_t h, const struct ocd_conv_problem *p, igemm_plan &pl, void *workspace,
                                size_t workspace_bytes)
{
    if (workspace_bytes < pl.ws_bytes)
        return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "implicit GEMM entry run with %zu bytes of workspace, %zu needed",
                        workspace_bytes, pl.ws_bytes);
    char *ws = ocd_ws_aligned(workspace);
    OCD_TRY(pl.esize == 4   ? launch_copies<uint32_t>(&pl, p->w_data, ws, h->stream)
            : pl.esize == 2 ? launch_copies<uint16_t>(&pl, p->w_data, ws, h->stream)
                            : launch_copies<uint8_t>(&pl, p->w_data, ws, h->stream));
    if (pl.prm.splits > 1 || pl.prm.epi.wide) pl.prm.epi.partial = (float *)(ws + pl.ws_part);
    if (pl.copy_out.on) pl.prm.epi.out = ws + pl.copy_out.ws_off, pl.prm.epi.z = pl.prm.epi.out;
    return CUDNN_STATUS_SUCCESS;
}

/* The output's copy out of the workspace after the kernel (plan_out), pl bound by run_copies. */
static cudnnStatus_t run_copy_out(cudnnHandle_t h, const igemm_plan &pl)
{
    if (!pl.copy_out.on) return CUDNN_STATUS_SUCCESS;
    void *const nhwc = pl.prm.epi.out;
    return pl.esize == 4 ? launch_nhwc_copy(pl.copy_out, (uint32_t *)nhwc, false, false, h->stream)
                         : launch_nhwc_copy(pl.copy_out, (uint16_t *)nhwc, false, false, h->stream);
}

/* Launches the kernel of tile on pl, bound by run_copies. */
static cudnnStatus_t run_kernel(cudnnHandle_t h, const struct ocd_conv_problem *p, int tile, const igemm_plan &pl)
{
    if (pl.int8) return ocd_igemm_int8_launch[tile][pl.int8 - 1](&pl.prm, h->device, h->stream);
    if (tile >= TMA_TILE0)
        return ocd_igemm_tma_launch[tile - TMA_TILE0][p->dir == OCD_CONV_BWD_FILTER][pl.type](&pl.prm, &pl.tma, h->device,
                                                                                           h->sm_count, h->stream);
    if (tile >= WGMMA_TILE0)
        return ocd_igemm_wgmma_launch[tile - WGMMA_TILE0][p->dir][pl.type](&pl.prm, h->device, h->stream);
    const igemm_launch_fn *table = p->dir == OCD_CONV_FWD        ? ocd_igemm_fwd_launch[tile]
                                   : p->dir == OCD_CONV_BWD_DATA ? ocd_igemm_dgrad_launch[tile]
                                                                 : ocd_igemm_wgrad_launch[tile];
    return table[pl.type](&pl.prm, h->device, h->stream);
}

/* Runs p with its plan for tile (make_plan's; pl's pointers are bound to the workspace here). */
static cudnnStatus_t run_plan(cudnnHandle_t h, const struct ocd_conv_problem *p, int tile, igemm_plan &pl,
                              void *workspace, size_t workspace_bytes)
{
    OCD_TRY(run_copies(h, p, pl, workspace, workspace_bytes));
    OCD_TRY(run_kernel(h, p, tile, pl));
    return run_copy_out(h, pl);
}

/* ---- the entries ---------------------------------------------------------------------------------- */

extern "C" bool ocd_cuda_conv_igemm_serves(cudnnHandle_t h, const struct ocd_conv_problem *p)
{
    /* the entry names of the smallest tile, [direction][tc, tf32] */
#define X(i, bm, bn, wm, wn, st)                                                                    \
    {{OCD_IGEMM_NAME("fwd", "tc", 32, bm, bn, st), OCD_IGEMM_NAME("fwd", "tf32", 16, bm, bn, st)},      \
     {OCD_IGEMM_NAME("dgrad", "tc", 32, bm, bn, st), OCD_IGEMM_NAME("dgrad", "tf32", 16, bm, bn, st)},  \
     {OCD_IGEMM_NAME("wgrad", "tc", 32, bm, bn, st), OCD_IGEMM_NAME("wgrad", "tf32", 16, bm, bn, st)}},
    static const char *const names[OCD_IGEMM_NTILES][OCD_CONV_DIRS][2] = {OCD_IGEMM_TILES(X)};
#undef X
    const bool tf32 = p->x.dtype == CUDNN_DATA_FLOAT;
    if (ocd_impl_disabled(names[OCD_IGEMM_NTILES - 1][p->dir][tf32])) return false;
    igemm_plan pl;
    return make_plan(h, p, OCD_IGEMM_NTILES - 1, tf32, &pl) == NULL && pl.ws_bytes == 0;
}

/* The tile entries, the sm_90a kernel's included (conv_igemm_sm90.cu: tiles WGMMA_TILE0 + i,
   whose entries take fp16 and bf16, and fp32 data as TF32), are planned (core/impl.h):
   make_plan's plan is kept, and a run binds a copy of it to the workspace. */
OCD_IMPL_PLAN_FITS(igemm_plan);

template <int TILE, bool TF32> static const char *igemm_plan_of(cudnnHandle_t h, const void *problem, void *plan)
{
    return make_plan(h, (const struct ocd_conv_problem *)problem, TILE, TF32, (igemm_plan *)plan);
}

/* A wgmma entry: TF32 for fp32 data (the TMA kernel's TF32 tiles are entries of their own). */
template <int TILE> static const char *igemm_wgmma_plan_of(cudnnHandle_t h, const void *problem, void *plan)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    return make_plan(h, p, TILE, p->x.dtype == CUDNN_DATA_FLOAT, (igemm_plan *)plan);
}

static size_t igemm_workspace(cudnnHandle_t h, const void *problem, const void *plan)
{
    return ((const igemm_plan *)plan)->ws_bytes;
}

template <int TILE>
static cudnnStatus_t igemm_run(cudnnHandle_t h, const void *problem, const void *plan, void *ws, size_t ws_bytes)
{
    igemm_plan pl = *(const igemm_plan *)plan;
    return run_plan(h, (const struct ocd_conv_problem *)problem, TILE, pl, ws, ws_bytes);
}

/* An int8 entry: the sm_80 kernel on the int8 configurations. */
template <int TILE> static const char *igemm_int8_plan_of(cudnnHandle_t h, const void *problem, void *plan)
{
    return make_plan(h, (const struct ocd_conv_problem *)problem, TILE, false, (igemm_plan *)plan, PLAN_INT8);
}

#define X(i, bm, bn, wm, wn, st)                                                                    \
    extern "C" const struct ocd_impl_planned ocd_cuda_conv_igemm_int8_##i##_planned = {             \
        igemm_int8_plan_of<i>, igemm_workspace, igemm_run<i>};                                      \
    extern "C" const struct ocd_impl_planned ocd_cuda_conv_igemm_tc_##i##_planned = {               \
        igemm_plan_of<i, false>, igemm_workspace, igemm_run<i>};                                    \
    extern "C" const struct ocd_impl_planned ocd_cuda_conv_igemm_tf32_##i##_planned = {             \
        igemm_plan_of<i, true>, igemm_workspace, igemm_run<i>};
OCD_IGEMM_TILES(X)
#undef X
#define X(i, bm, bn, st)                                                                            \
    extern "C" const struct ocd_impl_planned ocd_cuda_conv_igemm_wgmma_##i##_planned = {            \
        igemm_wgmma_plan_of<WGMMA_TILE0 + i>, igemm_workspace, igemm_run<WGMMA_TILE0 + i>};
OCD_IGEMM_WGMMA_TILES(X)
#undef X
/* The TMA entries' records: tile index TILE, fp32 data as TF32 or not, exported as NAME. */
#define TMA_PLANNED(name, tile, tf32)                                                               \
    extern "C" const struct ocd_impl_planned name = {igemm_plan_of<tile, tf32>, igemm_workspace, igemm_run<tile>};
#define X(i, bm, bn, st)                                                                            \
    TMA_PLANNED(ocd_cuda_conv_igemm_tma_##i##_planned, TMA_TILE0 + i, false)                        \
    TMA_PLANNED(ocd_cuda_conv_igemm_tma_tf32_##i##_planned, TMA_TILE0 + i, true)
OCD_IGEMM_TMA_TILES(X)
#undef X
#define X(i, bm, bn, st)                                                                            \
    TMA_PLANNED(ocd_cuda_conv_igemm_tma_c2_##i##_planned, TMA_C2_TILE0 + i, false)                  \
    TMA_PLANNED(ocd_cuda_conv_igemm_tma_c2_tf32_##i##_planned, TMA_C2_TILE0 + i, true)
OCD_IGEMM_TMA_C2_TILES(X)
#undef X
#define X(i, bm, bn, st)                                                                            \
    TMA_PLANNED(ocd_cuda_conv_igemm_tma_w64_##i##_planned, TMA_W64_TILE0 + i, false)                \
    TMA_PLANNED(ocd_cuda_conv_igemm_tma_w64_tf32_##i##_planned, TMA_W64_TILE0 + i, true)
OCD_IGEMM_TMA_W64_TILES(X)
#undef X
#define X(i, bm, bn, st)                                                                            \
    TMA_PLANNED(ocd_cuda_conv_igemm_tma_narrow_##i##_planned, TMA_NARROW_TILE0 + i, false)          \
    TMA_PLANNED(ocd_cuda_conv_igemm_tma_narrow_tf32_##i##_planned, TMA_NARROW_TILE0 + i, true)
OCD_IGEMM_TMA_NARROW_TILES(X)
#undef X
#undef TMA_PLANNED

/* ---- strided backward data, phase by phase (file comment; the phases: conv_igemm_phases.cuh) ------- */

/* The first tile whose plan serves the phase, or -1 with the reason in *why: the TMA entry's
   among the TMA kernel's unclustered forward tiles (the wide ones, then the narrow ones), the
   others' among the sm_90a cp.async kernel's first (where they apply: make_plan), then the
   sm_80 kernel's. */
static int phase_tile(cudnnHandle_t h, const struct ocd_conv_problem *sub, bool tf32, bool tma, igemm_plan *pl,
                      const char **why)
{
    const int wide = OCD_IGEMM_TMA_NTILES, count = tma ? wide + OCD_IGEMM_TMA_NARROW_NTILES : TMA_TILE0;
    for (int i = 0; i < count; i++) {
        const int tile = !tma ? (WGMMA_TILE0 + i) % TMA_TILE0 : i < wide ? TMA_TILE0 + i : TMA_NARROW_TILE0 + i - wide;
        if ((*why = make_plan(h, sub, tile, tf32, pl, PLAN_PHASE)) == NULL) return tile;
    }
    return -1;
}

/* The plan of a phases entry (core/impl.h): the tile of each phase that has taps and pixels (-1
   for the others) and the workspace. The run makes each phase's igemm_plan again on its tile: as
   many plans as phases would not fit OCD_IMPL_PLAN_BYTES. The TMA entries' phases are chained
   (phases_run): each has a workspace of its own, one after the other. */
struct igemm_phases_plan {
    bool tf32;
    bool chained;       /* the TMA entries' phases, where unproven entries are allowed (phases_run) */
    bool tapless;       /* some phase holds pixels but no taps (a 1x1 filter with a stride) */
    bool staged;        /* the phases run on channels-last copies (stage_problem) */
    size_t stage_bytes; /* the copies' part of the workspace, ahead of the phases' */
    size_t ws_bytes;    /* the staging's, then the largest phase's, or every phase's for chained phases */
    signed char tile[IGEMM_MAX_PHASES];
};
OCD_IMPL_PLAN_FITS(igemm_phases_plan);

/* The bytes of an element of a phases entry's data: fp32 (as TF32), fp16 or bf16. */
static int phases_esize(const struct ocd_conv_problem *p)
{
    return p->x.dtype == CUDNN_DATA_FLOAT ? 4 : 2;
}

/* Staging. A phase writes every stride-th pixel of dx. Where dx has its channels innermost the
   stores of a warp are runs of channels, whole sectors; where it has its pixels innermost (NCHW)
   each store covers a stride-th of the sectors it touches, and the sectors the other phases fill
   are written back to DRAM half-written in between wherever dx does not fit in the L2 (fp32 3x3
   stride 2, 128 channels at 56x56, batch 64: the TF32 phases took 0.74 ms, the fp16 NHWC ones
   0.076, an H100). Such a dx is computed into a dense channels-last copy in the workspace, beta
   0, then transposed into the caller's with beta by the elementwise engine (ops/tensor_ops.h);
   a dy whose channels are not innermost is transposed there once for every phase, where each
   phase's plan would copy it again: fp32 3x3 stride 2 in 0.29-0.41 of the time at 128 and 256
   channels (batch 64 and 256), where dx was 51 MB or more. A dx that fits in the L2 (512
   channels of 14x14 at batch 64: 26 MB, of 50) took 1.11 times as long staged, the transposes
   in addition to the same GEMMs; so only a dx of three quarters of the L2 or more is staged. */
static bool channels_inner(const struct ocd_tensor_view *v)
{
    return v->dims[1] == 1 || v->strides[1] == 1;
}

/* Whether the phases of p run staged (the comment above). */
static bool stage_wanted(cudnnHandle_t h, const struct ocd_conv_problem *p, int esize)
{
    const size_t dx_bytes = (size_t)ocd_view_count(&p->x) * (size_t)esize;
    return !channels_inner(&p->x) && 4 * dx_bytes >= 3 * h->l2_bytes && ocd_view_count(&p->y) < INT32_MAX;
}

/* v with its elements packed channels-last (NHWC, NDHWC). */
static struct ocd_tensor_view channels_last_view(const struct ocd_tensor_view *v)
{
    struct ocd_tensor_view cl = *v;
    int dims[OCD_MAX_DIMS], strides[OCD_MAX_DIMS];
    for (int d = 0; d < v->rank; d++) dims[d] = (int)v->dims[d];
    ocd_packed_strides(CUDNN_TENSOR_NHWC, v->rank, dims, 1, strides);
    for (int d = 0; d < v->rank; d++) cl.strides[d] = strides[d];
    return cl;
}

/* The problem the staged phases run (*st): p with dx (then beta 0) and dy, those whose channels are
   not innermost, channels-last at `base` (256-byte aligned; NULL when planning). Returns the
   copies' bytes. */
static size_t stage_problem(const struct ocd_conv_problem *p, int esize, char *base, struct ocd_conv_problem *st)
{
    *st = *p;
    size_t bytes = 0;
    if (!channels_inner(&p->x)) {
        st->beta = 0;
        st->x = channels_last_view(&p->x);
        st->x_data = base;
        bytes = ocd_ws_round((size_t)ocd_view_count(&p->x) * (size_t)esize);
    }
    if (!channels_inner(&p->y)) {
        st->y = channels_last_view(&p->y);
        st->y_data = base ? base + bytes : NULL;
        bytes = ocd_ws_round(bytes + (size_t)ocd_view_count(&p->y) * (size_t)esize);
    }
    return bytes;
}

/* The tile of each phase of p into pp (phases_plan) and the workspace after pp->stage_bytes; NULL,
   or why some phase has none. */
static const char *phases_plan_tiles(cudnnHandle_t h, const struct ocd_conv_problem *p, bool tf32, bool tma, int esize,
                                     igemm_phases_plan *pp)
{
    pp->tapless = false;
    size_t ws = 0;
    for (int ph = 0, phases = phase_count(p); ph < phases; ph++) {
        struct ocd_conv_problem sub;
        bool taps, pixels;
        pp->tile[ph] = -1;
        phase_problem(p, ph, esize, &sub, &taps, &pixels);
        pp->tapless = pp->tapless || (pixels && !taps);
        if (!pixels || !taps) continue;
        igemm_plan pl;
        const char *why;
        const int tile = phase_tile(h, &sub, tf32, tma, &pl, &why);
        if (tile < 0) return why;
        pp->tile[ph] = (signed char)tile;
        ws = pp->chained ? ws + pl.ws_bytes : OCD_MAX(ws, pl.ws_bytes);
    }
    pp->ws_bytes = (pp->stage_bytes ? pp->stage_bytes + 256 : 0) + ws; /* 256: room to align the caller's pointer */
    return NULL;
}

/* Why the TMA phases may not serve p (staged or in place) unless unproven entries are allowed
   (core/impl.h), or NULL: they have served faster than the mma.sync ones over dx of 128 channels
   or more (16-bit: 0.38-0.80 of their time on an H100, batch 64 and 256) and, as TF32, of 256
   or more (0.53-0.81; 1.08-1.10 over 128 in place, 0.29-0.31 staged). */
static const char *tma_phases_unproven(const struct ocd_conv_problem *p, bool tf32, bool staged)
{
    return p->x.dims[1] >= (tf32 && !staged ? 256 : 128) ? NULL : ocd_impl_unproven();
}

/* Why the phases entry cannot serve p, or NULL; its plan into *pp. tma: the TMA entry, every
   phase with taps on the TMA kernel (which takes the phases' dilations and negative paddings). */
static const char *phases_plan(cudnnHandle_t h, const struct ocd_conv_problem *p, bool tf32, bool tma,
                               igemm_phases_plan *pp)
{
    memset(pp, 0, sizeof *pp);
    pp->tf32 = tf32;
    const int esize = phases_esize(p);
    const bool stage = stage_wanted(h, p, esize);
    if (tma)
        if (const char *why = tma_phases_unproven(p, tf32, stage)) return why;
    pp->chained = tma;
    if (p->dir != OCD_CONV_BWD_DATA) return "backward data only";
    for (int d = 0; d < p->s.nsp && !tma; d++)
        if (p->s.dilation[d] != 1) return "dilated: the phases of dilated filters run on the TMA entry only";
    const int phases = phase_count(p);
    if (phases == 1) return "unit stride: the implicit GEMM serves it directly";
    if (phases > IGEMM_MAX_PHASES) return "more than 64 stride phases";
    if (ocd_view_count(&p->x) >= INT32_MAX) return OCD_REASON_SHAPE; /* scale_phase's 32-bit index */
    /* staged as long as every phase plans on the copies */
    if (stage) {
        struct ocd_conv_problem st;
        pp->stage_bytes = stage_problem(p, esize, NULL, &st);
        pp->staged = phases_plan_tiles(h, &st, tf32, tma, esize, pp) == NULL;
        if (pp->staged) return NULL;
        pp->stage_bytes = 0;
        if (tma)
            if (const char *why = tma_phases_unproven(p, tf32, false)) return why;
    }
    return phases_plan_tiles(h, p, tf32, tma, esize, pp);
}

/* The view of dx a phase covers, as igemm_view5: dims ordered by stride, those of extent 1 last. */
static igemm_view5 scale_view_of(const act_dims &a, int64_t *total)
{
    igemm_view5 v;
    memset(&v, 0, sizeof v);
    *total = a.n * a.c * a.d * a.h * a.w;
    if (*total == 0) return v;
    int64_t ext[5] = {a.w, a.h, a.d, a.c, a.n}, st[5] = {a.sw, a.sh, a.sd, a.sc, a.sn};
    for (int i = 1; i < 5; i++) /* insertion sort by stride; an extent-1 dim (stride 0) sorts last */
        for (int j = i; j > 0; j--) {
            int64_t kj = ext[j] == 1 ? INT64_MAX : st[j], kp = ext[j - 1] == 1 ? INT64_MAX : st[j - 1];
            if (kj >= kp) break;
            int64_t t = st[j];
            st[j] = st[j - 1], st[j - 1] = t;
            t = ext[j];
            ext[j] = ext[j - 1], ext[j - 1] = t;
        }
    v.rows = (uint32_t)(*total / ext[0]);
    v.len = (uint32_t)ext[0];
    for (int d = 0; d < 3; d++) v.div[d] = ocd_fastdiv_make((uint32_t)ext[d + 1]);
    for (int d = 0; d < 5; d++) v.st[d] = (uint32_t)st[d];
    return v;
}

static cudnnStatus_t scale_phase(cudnnHandle_t h, const struct ocd_conv_problem *sub)
{
    int64_t total;
    const igemm_view5 v = scale_view_of(act_of(&sub->x), &total);
    if (total == 0) return CUDNN_STATUS_SUCCESS;
    const dim3 block(32, 8);
    const unsigned blocks = (unsigned)OCD_MIN(((int64_t)v.rows + 7) / 8, (int64_t)65535 * 16);
    const float beta = (float)sub->beta;
    switch (sub->x.dtype) {
    case CUDNN_DATA_HALF: igemm_scale_view<__half><<<blocks, block, 0, h->stream>>>((__half *)sub->x_data, v, beta); break;
    case CUDNN_DATA_BFLOAT16:
        igemm_scale_view<__nv_bfloat16><<<blocks, block, 0, h->stream>>>((__nv_bfloat16 *)sub->x_data, v, beta);
        break;
    default: igemm_scale_view<float><<<blocks, block, 0, h->stream>>>((float *)sub->x_data, v, beta); break;
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* True when dx is dense (in any dim order), beta is 0 and some phase has no taps (pp): then one
   memset zeroes every phase without taps at the copy rate, where their strided views would write
   part-sectors. The phases with taps write their elements again, over the zeros. Where every
   phase has taps (a 3x3 filter with stride 2), their GEMMs write every element of dx and the
   memset would only add a pass over it: skipped. */
static bool phases_zero_first(const struct ocd_conv_problem *p, const igemm_phases_plan *pp)
{
    if (p->beta != 0.0 || !pp->tapless) return false;
    struct ocd_dim_group g;
    const struct ocd_tensor_view *views[1] = {&p->x};
    ocd_dim_group_build(&g, 1, views, (1u << p->x.rank) - 1);
    return ocd_dim_group_is_flat(&g);
}

/* Runs the phases: dx zeroed, or the phases without taps scaled, then each phase with taps on the
   tile the entry's plan chose (its plan made again here; each checks its own workspace). The
   others run phase after phase in one workspace; chained phases (igemm_phases_plan::chained)
   first launch every phase's operand copies, each into its own part of the workspace, then the
   phases' kernels back to back, each after the first launched early (igemm_tma_geom::chain):
   its CTAs start as the phase ahead's leave their multiprocessors, where phase after phase left
   the GPU partly idle at each phase's last wave, and the filter copies no longer stand between
   the kernels. */
static cudnnStatus_t phases_run_on(cudnnHandle_t h, const struct ocd_conv_problem *p, const igemm_phases_plan *pp,
                                   void *workspace, size_t bytes)
{
    const int esize = phases_esize(p), phases = phase_count(p);
    const bool zeroed = phases_zero_first(p, pp);
    if (zeroed) OCD_CUDA_TRY(cudaMemsetAsync(p->x_data, 0, (size_t)ocd_view_count(&p->x) * esize, h->stream));
    igemm_plan *chain = pp->chained ? (igemm_plan *)malloc(sizeof(igemm_plan) * (size_t)phases) : NULL;
    if (pp->chained && chain == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for the phases' plans");
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    size_t off = 0; /* a chained phase's part of the workspace */
    for (int ph = 0; ph < phases && st == CUDNN_STATUS_SUCCESS; ph++) {
        struct ocd_conv_problem sub;
        bool taps, pixels;
        phase_problem(p, ph, esize, &sub, &taps, &pixels);
        if (!pixels) continue;
        if (!taps) {
            if (!zeroed) st = scale_phase(h, &sub);
            continue;
        }
        igemm_plan one, &pl = chain ? chain[ph] : one;
        const char *why = make_plan(h, &sub, pp->tile[ph], pp->tf32, &pl, PLAN_PHASE);
        if (why != NULL) {
            st = OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "phased implicit GEMM run without a plan: %s", why);
        } else if (chain == NULL) {
            st = run_plan(h, &sub, pp->tile[ph], pl, workspace, bytes);
        } else {
            st = run_copies(h, &sub, pl, (char *)workspace + off, off < bytes ? bytes - off : 0);
            off += pl.ws_bytes;
        }
    }
    for (int ph = 0, launched = 0; chain != NULL && ph < phases && st == CUDNN_STATUS_SUCCESS; ph++) {
        if (pp->tile[ph] < 0) continue; /* no pixels or no taps */
        chain[ph].tma.chain = launched++ ? 2 : 1;
        st = run_kernel(h, p, pp->tile[ph], chain[ph]);
    }
    free(chain);
    return st;
}

/* Runs the phases of a plan, staged (stage_problem) or on the caller's tensors. */
static cudnnStatus_t phases_run(cudnnHandle_t h, const void *problem, const void *plan, void *workspace, size_t bytes)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const igemm_phases_plan *pp = (const igemm_phases_plan *)plan;
    if (!pp->staged) return phases_run_on(h, p, pp, workspace, bytes);
    if (bytes < pp->ws_bytes)
        return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "phases run with %zu bytes of workspace, %zu needed", bytes,
                        pp->ws_bytes);
    char *base = ocd_ws_aligned(workspace), *rest = base + pp->stage_bytes;
    struct ocd_conv_problem st;
    stage_problem(p, phases_esize(p), base, &st);
    const float one = 1.f, zero = 0.f, beta = (float)p->beta;
    const char *op = "cudnnConvolutionBackwardData";
    if (st.y_data != p->y_data) OCD_TRY(ocd_ewise_copy(h, &one, &p->y, p->y_data, &zero, &st.y, st.y_data, op));
    OCD_TRY(phases_run_on(h, &st, pp, rest, bytes - (size_t)(rest - (char *)workspace)));
    if (st.x_data == p->x_data) return CUDNN_STATUS_SUCCESS;
    return ocd_ewise_copy(h, &one, &st.x, st.x_data, &beta, &p->x, p->x_data, op);
}

template <bool TF32, bool TMA> static const char *phases_plan_of(cudnnHandle_t h, const void *problem, void *plan)
{
    return phases_plan(h, (const struct ocd_conv_problem *)problem, TF32, TMA, (igemm_phases_plan *)plan);
}

static size_t phases_workspace(cudnnHandle_t h, const void *problem, const void *plan)
{
    return ((const igemm_phases_plan *)plan)->ws_bytes;
}

extern "C" const struct ocd_impl_planned ocd_cuda_conv_igemm_phases_tc_planned = {
    phases_plan_of<false, false>, phases_workspace, phases_run};
extern "C" const struct ocd_impl_planned ocd_cuda_conv_igemm_phases_tf32_planned = {
    phases_plan_of<true, false>, phases_workspace, phases_run};
extern "C" const struct ocd_impl_planned ocd_cuda_conv_igemm_phases_tma_planned = {
    phases_plan_of<false, true>, phases_workspace, phases_run};
extern "C" const struct ocd_impl_planned ocd_cuda_conv_igemm_phases_tma_tf32_planned = {
    phases_plan_of<true, true>, phases_workspace, phases_run};

/* The Hopper kernels (sm_90a: conv_igemm_sm90.cu, and conv_igemm_tma_sm90.cu for the three
   directions, strided backward data phase by phase) keep make_plan, the index maps and the epilogue;
   the cp.async one also the loaders' address arithmetic, while the TMA one loads through tensor
   maps (conv_igemm_tma.cuh) with a producer warp, consumer warpgroups and a persistent tile
   loop (and clusters of 2 CTAs sharing B by multicast); its forward kernels may store through
   shared memory (the staged epilogue, staged_epilogue above, and its ping-pong twin). The TMA
   kernel is bound by its L2 reads on the 3x3 layers (the consumers wait on the TMA's data more
   than on anything else): their next steps cut bytes a flop (the clustered tiles sharing B, on
   trial, have not yet paid for their cluster barriers), and a strided
   backward pass wants one persistent grid over every phase's tiles: its phases have 2 to 8 K
   tiles each, so four launches of a wave and a half spend their time filling and draining the
   ring and in the epilogue (the 3x3 stride-2 128-channel layer: about 25 us of L2 and 21 of DRAM
   traffic in all, and ten times that taken). For GEMMs of 64 columns (the 64-channel layers), whose narrow TMA tiles read as many
   shared-memory bytes per flop as the tensor cores take (conv_igemm_tma_sm90.cu): the GEMM
   transposed, y^T = w im2col(x)^T, so that the 64 filters are wgmma's M and 256 pixels its N
   (m64n256, the pixels' channels a K-major B as the im2col load lands them, the filter rows a
   K-major A), with the epilogue writing y's 64 channels of each pixel from the transposed
   fragments (through shared memory, for whole-sector stores); and the filter (64 x 64 x 9, 73 KB
   of fp16) loaded once per CTA into shared memory beside the ring instead of with every K tile,
   which takes a third of the 128x64 tile's L2 reads away (only where the GEMM has one column
   tile and its K tiles fit). */
