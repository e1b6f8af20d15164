/* conv_igemm_tma_emulate.h: the tensor memory accelerator and the mbarrier as the PTX ISA
   defines them, for the emulation of the TMA implicit-GEMM kernel (conv_igemm_tma.cu): the
   128-byte and 32-byte swizzles, cp.async.bulk.tensor in im2col mode (rank 4, NHWC: the bounding
   box's corners, the traversal strides, zeros outside the tensor) and in tiled mode (rank 3,
   and rank 4 with traversal strides for the k32 filter gradient, under either swizzle), the
   mbarrier's arrivals and transaction bytes; and the kernel's own tensor maps and loads
   (igemm_tma_geom, igemm_tma_copy) through those models. Included after the kernel's sources. */
#ifndef OCD_EMULATE_CONV_IGEMM_TMA_EMULATE_H
#define OCD_EMULATE_CONV_IGEMM_TMA_EMULATE_H

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

/* The switches the TMA emulations plan under: the entries are gated until a GPU has run them
   (OPENCUDNN_UNPROVEN), and with no GPU to ask how many clusters of the clustered kernels fit at
   once, an H100's 66 clusters of 2 CTAs (OPENCUDNN_TEST_CLUSTERS). */
#define EMU_TMA_CLUSTERS "66"
void emu_tma_switches()
{
    setenv("OPENCUDNN_UNPROVEN", "1", 1);
    setenv("OPENCUDNN_TEST_CLUSTERS", EMU_TMA_CLUSTERS, 1);
}

/* ---- the TMA, modelled ---------------------------------------------------------------------- */

/* A byte offset in a 1024-byte-aligned box under the 128-byte swizzle. */
uint32_t swizzle128(uint32_t o)
{
    return o ^ (((o >> 7) & 7u) << 4);
}

/* A byte offset in a 256-byte-aligned box under the 32-byte swizzle. */
uint32_t swizzle32(uint32_t o)
{
    return o ^ (((o >> 7) & 1u) << 4);
}

/* A tiled map (rank 3 or 4, the 128-byte or 32-byte swizzle) and an im2col map (rank 4, NHWC; or,
   for the k32 filter gradient, x's tiled map in its place: tiled), as cuTensorMapEncode* take them. */
struct model_tiled {
    const uint8_t *base;
    int esize, rank, swizzle; /* swizzle: its span in bytes, 128 or 32 */
    uint64_t dim[4], stride[3];
    uint32_t box[4], estride[4];
};
struct model_im2col {
    const uint8_t *base;
    int esize;
    uint64_t dim[4], stride[3];
    int lower[2], upper[2];
    uint32_t estride[4], channels, pixels;
    bool is_tiled;
    model_tiled tiled;
};

/* One element of the tensor at coordinates c[0..rank) (innermost first) into dst, or zeros. */
void model_elem(const uint8_t *base, int esize, int rank, const uint64_t *dim, const uint64_t *stride,
                const int64_t *c, uint8_t *dst)
{
    int64_t off = c[0] * esize;
    for (int i = 0; i < rank; i++) {
        if (c[i] < 0 || c[i] >= (int64_t)dim[i]) {
            memset(dst, 0, (size_t)esize);
            return;
        }
        if (i > 0) off += c[i] * (int64_t)stride[i - 1];
    }
    memcpy(dst, base + off, (size_t)esize);
}

/* Why cuTensorMapEncodeIm2col or cuTensorMapEncodeTiled would refuse the maps (CUDA driver API,
   "Tensor Map Object Management", for rank 4 im2col and rank 3 tiled maps without interleave,
   128-byte swizzle, element strides of the tiled map all 1), or NULL: a map the driver refuses
   fails the kernel's launch, which the emulated loads cannot show. */
const char *model_tiled_rejects(const model_tiled &mt)
{
    const uint64_t dim_max = (uint64_t)1 << 32, stride_max = (uint64_t)1 << 40;
    if ((uintptr_t)mt.base % 16 != 0) return "a map's global address off 16 bytes";
    for (int i = 0; i < mt.rank; i++)
        if (mt.dim[i] < 1 || mt.dim[i] > dim_max) return "a tiled globalDim outside [1, 2^32]";
    for (int i = 0; i + 1 < mt.rank; i++)
        if (mt.stride[i] % 16 != 0 || mt.stride[i] >= stride_max) return "a tiled globalStride not a multiple of 16 below 2^40";
    for (int i = 0; i < mt.rank; i++) {
        if (mt.box[i] < 1 || mt.box[i] > 256) return "a tiled boxDim outside [1, 256]";
        if (mt.estride[i] < 1 || mt.estride[i] > 8) return "a tiled elementStride outside [1, 8]";
    }
    if (mt.box[0] * (uint32_t)mt.esize % 16 != 0) return "a tiled inner box not a multiple of 16 bytes";
    if (mt.box[0] * (uint32_t)mt.esize > (uint32_t)mt.swizzle) return "a tiled inner box above the swizzle's span";
    return NULL;
}

const char *model_encode_rejects(const model_im2col &mi, const model_tiled &mt)
{
    const uint64_t dim_max = (uint64_t)1 << 32, stride_max = (uint64_t)1 << 40;
    if (const char *why = model_tiled_rejects(mt)) return why;
    if (mi.is_tiled) return model_tiled_rejects(mi.tiled);
    if ((uintptr_t)mi.base % 16 != 0) return "a map's global address off 16 bytes";
    for (int i = 0; i < 4; i++)
        if (mi.dim[i] < 1 || mi.dim[i] > dim_max) return "an im2col globalDim outside [1, 2^32]";
    for (int i = 0; i < 3; i++)
        if (mi.stride[i] % 16 != 0 || mi.stride[i] >= stride_max) return "an im2col globalStride not a multiple of 16 below 2^40";
    for (int i = 0; i < 2; i++) {
        if (mi.lower[i] < -128 || mi.lower[i] > 127 || mi.upper[i] < -128 || mi.upper[i] > 127)
            return "an im2col box corner outside [-128, 127] (rank 4)";
        if ((int64_t)mi.dim[i + 1] - 1 + mi.upper[i] < mi.lower[i]) return "an im2col bounding box of zero area";
    }
    if (mi.channels < 1 || mi.channels > 256) return "channelsPerPixel outside [1, 256]";
    if (mi.pixels < 1 || mi.pixels > 1024) return "pixelsPerColumn outside [1, 1024]";
    for (int i = 0; i < 4; i++)
        if (mi.estride[i] < 1 || mi.estride[i] > 8) return "an im2col elementStride outside [1, 8]";
    if (mi.channels * (uint32_t)mi.esize > 128) return "an im2col inner box above the 128-byte swizzle's span";
    return NULL;
}

/* The most transaction bytes an mbarrier phase may expect (the ISA's tx-count range). */
constexpr uint32_t MODEL_TX_MAX = (1u << 20) - 1;

/* cp.async.bulk.tensor.4d.im2col at (c, w, h, n) with offsets (ow, oh) into dst (NULL: the
   traversal alone); false when an offset is outside the ISA's range for rank 4 ([0, 255]), the
   filter base lies outside the bounding box or a step passes its upper corner by more than one. */
bool model_load_im2col(const model_im2col &m, int c, int w, int h, int n, int ow, int oh, uint8_t *dst)
{
    const int lo_w = m.lower[0], hi_w = (int)m.dim[1] - 1 + m.upper[0];
    const int lo_h = m.lower[1], hi_h = (int)m.dim[2] - 1 + m.upper[1];
    if (ow < 0 || ow > 255 || oh < 0 || oh > 255) return false;
    if (w < lo_w || w > hi_w || h < lo_h || h > hi_h) return false;
    for (uint32_t i = 0; i < m.pixels; i++) {
        for (uint32_t ch = 0; ch < m.channels && dst != NULL; ch++) {
            const int64_t at[4] = {c + (int64_t)ch, w + ow, h + oh, n};
            model_elem(m.base, m.esize, 4, m.dim, m.stride, at, dst + swizzle128((i * m.channels + ch) * m.esize));
        }
        w += (int)m.estride[1];
        if (w > hi_w) {
            if (w != hi_w + 1) return false;
            w = lo_w, h += (int)m.estride[2];
            if (h > hi_h) {
                if (h != hi_h + 1) return false;
                h = lo_h, n += (int)m.estride[3];
            }
        }
    }
    return true;
}

/* The elements a tiled box lands along dim i: one every elementStrides[i] of its boxDim[i]. */
uint32_t model_box_count(const model_tiled &m, int i)
{
    return i < m.rank ? (m.box[i] + m.estride[i] - 1) / m.estride[i] : 1;
}

/* cp.async.bulk.tensor.{3,4}d.tile at c[0 .. rank) into dst: the landed elements packed in box
   order, innermost first, then swizzled. False for a box that starts off 16 bytes along the
   innermost dim (an H100 raises an illegal instruction for a box of fp32 rows at column 1 or -1;
   at -4, 0, 4 or past the end it loads, zeros outside the tensor). */
bool model_load_tiled(const model_tiled &m, const int *c, uint8_t *dst)
{
    if ((int64_t)c[0] * m.esize % 16 != 0) return false;
    const uint32_t n0 = model_box_count(m, 0), n1 = model_box_count(m, 1), n2 = model_box_count(m, 2),
                   n3 = model_box_count(m, 3);
    for (uint32_t l = 0; l < n3; l++)
        for (uint32_t k = 0; k < n2; k++)
            for (uint32_t j = 0; j < n1; j++)
                for (uint32_t i = 0; i < n0; i++) {
                    const int64_t at[4] = {c[0] + (int64_t)(i * m.estride[0]), c[1] + (int64_t)(j * m.estride[1]),
                                           c[2] + (int64_t)(k * m.estride[2]),
                                           m.rank > 3 ? c[3] + (int64_t)(l * m.estride[3]) : 0};
                    const uint32_t o = (((l * n2 + k) * n1 + j) * n0 + i) * (uint32_t)m.esize;
                    model_elem(m.base, m.esize, m.rank, m.dim, m.stride, at,
                               dst + (m.swizzle == 32 ? swizzle32(o) : swizzle128(o)));
                }
    return true;
}

/* The maps of plan geometry g over the bound operands (what encode_maps passes the driver): the
   im2col map over the activations (x forward and for the filter gradient, dy for backward data),
   the tiled map over the filter (forward) or dy (filter gradient). */
model_im2col map_im(const igemm_tma_geom &g, const igemm_params &p, bool wgrad, int esize)
{
    model_im2col m;
    memset(&m, 0, sizeof m);
    m.base = (const uint8_t *)(wgrad ? p.b.ptr : p.a.ptr), m.esize = esize;
    if (g.k32) { /* x's tiled map */
        m.is_tiled = true;
        model_tiled &t = m.tiled;
        t.base = m.base, t.esize = esize, t.rank = 4, t.swizzle = g.kq == 32 ? 128 : 32;
        memcpy(t.dim, g.im_dim, sizeof t.dim), memcpy(t.stride, g.im_stride, sizeof t.stride);
        memcpy(t.box, g.im_box, sizeof t.box), memcpy(t.estride, g.im_estride, sizeof t.estride);
        return m;
    }
    memcpy(m.dim, g.im_dim, sizeof m.dim), memcpy(m.stride, g.im_stride, sizeof m.stride);
    memcpy(m.lower, g.im_lower, sizeof m.lower), memcpy(m.upper, g.im_upper, sizeof m.upper);
    memcpy(m.estride, g.im_estride, sizeof m.estride);
    m.channels = g.im_channels, m.pixels = g.im_pixels;
    return m;
}
model_tiled map_ti(const igemm_tma_geom &g, const igemm_params &p, bool wgrad, int esize)
{
    model_tiled m;
    memset(&m, 0, sizeof m);
    m.base = (const uint8_t *)(wgrad ? p.a.ptr : p.bmat), m.esize = esize;
    m.rank = g.k32 ? 4 : 3, m.swizzle = g.k32 && g.kq != 32 ? 32 : 128;
    memcpy(m.dim, g.ti_dim, sizeof m.dim), memcpy(m.stride, g.ti_stride, sizeof m.stride);
    memcpy(m.box, g.ti_box, sizeof m.box);
    for (int i = 0; i < 4; i++) m.estride[i] = 1;
    return m;
}

/* One load the kernel issues (igemm_tma_kt's copy) through the models, into the stage at dst;
   *bytes: the box's bytes, as the map defines them. false when an im2col filter base lies
   outside the bounding box, or a tiled box starts off 16 bytes (model_load_tiled). */
const model_tiled &model_tiled_of(const model_im2col &mi, const model_tiled &mt, const igemm_tma_copy &c)
{
    return c.rank4 && c.into_b ? mi.tiled : mt; /* k32: x's map loads B */
}
uint32_t model_box_bytes(const model_im2col &mi, const model_tiled &mt, const igemm_tma_copy &c)
{
    if (c.im2col) return mi.pixels * mi.channels * (uint32_t)mi.esize;
    const model_tiled &m = model_tiled_of(mi, mt, c);
    return model_box_count(m, 0) * model_box_count(m, 1) * model_box_count(m, 2) * model_box_count(m, 3) *
           (uint32_t)m.esize;
}
bool model_copy(const model_im2col &mi, const model_tiled &mt, const igemm_tma_copy &c, uint8_t *dst, uint32_t *bytes)
{
    *bytes = model_box_bytes(mi, mt, c);
    if (c.im2col) return model_load_im2col(mi, c.c[0], c.c[1], c.c[2], c.c[3], c.ow, c.oh, dst);
    return model_load_tiled(model_tiled_of(mi, mt, c), c.c, dst);
}

/* An mbarrier as the ISA defines it: arrivals pending and transaction bytes of the current phase;
   the phase completes when both reach zero, and the next one starts with `count` arrivals. */
struct model_mbar {
    int count = 0, pending = 0;
    int64_t tx = 0;
    unsigned phase = 0; /* phases completed */

    void init(int c)
    {
        count = pending = c, tx = 0, phase = 0;
    }
    /* false on more arrivals than the phase expects */
    bool arrive(int n)
    {
        pending -= n;
        if (pending < 0) return false;
        settle();
        return true;
    }
    void expect_tx(int64_t b)
    {
        tx += b;
    }
    void complete_tx(int64_t b)
    {
        tx -= b;
        settle();
    }
    void settle()
    {
        if (pending == 0 && tx == 0) phase++, pending = count;
    }
    /* try_wait.parity: the phase of this parity has completed, i.e. the current phase has the
       other parity */
    bool passed(unsigned parity) const
    {
        return (phase & 1u) != parity;
    }
};

} // namespace

#endif /* OCD_EMULATE_CONV_IGEMM_TMA_EMULATE_H */
