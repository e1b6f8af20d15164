/* conv_igemm_int8.cu (emulation): the int8 entries of the implicit-GEMM convolution
   (cuda:fwd_igemm_int8_*: src/cuda/conv_igemm.cu's make_plan with int8, the sm_80 kernel of
   conv_igemm.cuh instantiated for 8-bit operands by src/cuda/conv_igemm_int8.cu) with every
   thread's own logic run on the CPU, against the double-precision reference of tests/ref: the
   plan (on a handle of compute capability 9.0; INT8x4 and INT8x32 x and small filters of whole
   16-channel chunks read in place, four 4-byte vectors or half a 32-byte one a chunk), the
   workspace copies (the channel-padded copy that also unpacks INT8x4 and INT8x32 with a channel
   tail, the NCHW transpose, the filter pack), each thread's loaders writing their cp.async
   chunks (a host copy) into a stage, the fragments read with ldmatrix at mma.cuh's addresses and multiplied by mma.sync m16n8k32 (emulated from the PTX ISA:
   mma_emulate.h), K tile after K tile as the mainloop takes them, and the epilogue from each
   thread's int32 accumulators (igemm_store_frags: the typed plain form for alpha alone, the
   direct kernels' store otherwise).

   Each result must equal, bit for bit, the direct kernel's formula written out here (the exact
   integer sum converted to float, then alpha, beta or alpha2 * z, bias and ReLU in float, and an
   int8 or uint8 destination rounded to nearest even and saturated), and lie within a unit of
   the destination (int8) or float rounding of the terms (float) of the double reference.

   Cases: the cudnn-frontend IMMA sample's shape (16 channels INT8x4, 64 filters 3x3, 224x224,
   one image of its four) and INT8x32; INT8 NHWC read in place with a float output (INT8_EXT)
   and alpha, beta; the fused call (z, float bias, ReLU) into int8 with saturation; uint8 data
   (UINT8x4, and UINT8 NHWC into uint8, int8 and float); NVIDIA's conv sample (INT8x4 in
   CONVOLUTION mode, alpha 0.8); a channel tail (C 20, padded to 32), NCHW data and a KCRS
   filter, a K tail, stride 2, padding, groups; each tile; the plan declining backward data,
   groups on vectorized layouts, and fp16 data. Prints a line per case; exits 1 if any differs. */
#include "cuda/conv_igemm.cu"

#include "mma_emulate.h"
#include "conv_igemm_emulate.h"

extern "C" {
#include "ref/conv.h"
}

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

/* Every CTA of the launch igemm_mma_launch makes, thread by thread; K tiles one stage at a time
   (the mainloop's pipeline is the fp16 kernels'). */
template <class Tile, typename T> void emulate_launch(const igemm_params &p)
{
    typedef igemm_shape<Tile, T, igemm_dir_fwd> Shape;
    typedef typename Shape::SA SA;
    typedef typename Shape::SB SB;
    constexpr int MI = Tile::MI, NI = Tile::NI, TH = Tile::THREADS;
    std::vector<uint8_t> smem((SA::STAGE + SB::STAGE) * sizeof(T) + 16);
    T *sa = (T *)(((uintptr_t)smem.data() + 15) & ~(uintptr_t)15), *sb = sa + SA::STAGE;
    std::vector<igemm_load_fwd_a<T, Tile::BM, TH>> al(TH);
    std::vector<igemm_load_dense_b<T, Tile::BN, TH>> bl(TH);
    std::vector<int> acc((size_t)TH * MI * NI * 4);
    const int gx = (p.M + Tile::BM - 1) / Tile::BM, gy = (p.N + Tile::BN - 1) / Tile::BN;
    for (int bz = 0; bz < p.groups * p.splits; bz++)
        for (int by = 0; by < gy; by++)
            for (int bx = 0; bx < gx; bx++) {
                const igemm_cta c = igemm_cta_of(p, bx, by, bz, Tile::BM, Tile::BN, SA::BK);
                for (int tid = 0; tid < TH; tid++) {
                    al[tid].setup(p, c.m0, c.n0, c.g, tid);
                    bl[tid].setup(p, c.m0, c.n0, c.g, tid);
                }
                std::fill(acc.begin(), acc.end(), 0);
                for (int kt = 0; kt < c.nkt; kt++) {
                    memset(sa, 0x5a, (SA::STAGE + SB::STAGE) * sizeof(T)); /* what no load writes is poison */
                    for (int tid = 0; tid < TH; tid++) {
                        al[tid].load(sa, c.kt0 + kt, p);
                        bl[tid].load(sb, c.kt0 + kt, p);
                    }
                    mma_ktile<Tile, T, true, true>(acc.data(), sa, sb);
                }
                for (int tid = 0; tid < TH; tid++) {
                    const int warp = tid / 32, lane = tid % 32;
                    const int wm = (warp % Tile::WARPS_M) * Tile::WTM, wn = (warp / Tile::WARPS_M) * Tile::WTN;
                    const int *r = &acc[(size_t)tid * MI * NI * 4];
                    igemm_store_frags<T, MI, NI>(p, [&](int i, int j, int e) { return r[(i * NI + j) * 4 + e]; },
                                                 c.m0 + wm, c.n0 + wn, c.g, c.split, lane);
                }
            }
}

/* A tensor of logical dims (n, c, h, w) in layout `fmt`: NCHW, NHWC or NCHW_VECT_C with
   ocd_dtype_vector_width(t) channels a vector (strides in scalars, dim 1's per vector). */
struct ocd_tensor_view view_of(cudnnDataType_t t, cudnnTensorFormat_t fmt, int64_t n, int64_t c, int64_t h, int64_t w)
{
    struct ocd_tensor_view v = fmt == CUDNN_TENSOR_NHWC ? nhwc(t, n, c, h, w) : nchw(t, n, c, h, w);
    v.vect = ocd_dtype_vector_width(t);
    if (fmt == CUDNN_TENSOR_NCHW_VECT_C) {
        const int64_t V = v.vect;
        v.strides[3] = V, v.strides[2] = w * V, v.strides[1] = h * w * V, v.strides[0] = (c / V) * h * w * V;
    }
    return v;
}

/* Storage index (in scalars) of logical element (n, c, h, w). */
size_t at_v(const struct ocd_tensor_view &v, long n, long c, long h, long w)
{
    return (size_t)(n * v.strides[0] + c / v.vect * v.strides[1] + c % v.vect + h * v.strides[2] + w * v.strides[3]);
}

struct emu_case {
    const char *name;
    cudnnDataType_t xt, wt, yt; /* x's type (INT8, UINT8, INT8x4, UINT8x4, INT8x32), w's, y's */
    cudnnTensorFormat_t xf, wf, yf;
    int tile;
    int n, c, k, h, w, r, s, pad, stride, groups;
    bool fused;           /* z, a float bias and ReLU (alpha2 = beta) */
    double alpha, beta;
    const char *declines; /* the plan must decline, with a reason holding this */
    enum ocd_conv_dir dir;
    bool flip = false; /* CONVOLUTION mode */
};

/* A deterministic source of 8-bit values: int8 in [-128, 127], uint8 in [0, 255]. */
struct byte_rng {
    uint32_t state;
    int next(bool is_unsigned)
    {
        state = state * 1664525u + 1013904223u;
        int b = (int)(state >> 24);
        return is_unsigned ? b : b - 128;
    }
};

/* v as the destination type ys holds it: float, or int8 / uint8 rounded to nearest even and
   saturated. */
double quantize(cudnnDataType_t ys, double v)
{
    if (ys == CUDNN_DATA_FLOAT) return (float)v;
    const double lo = ys == CUDNN_DATA_UINT8 ? 0 : -128, hi = ys == CUDNN_DATA_UINT8 ? 255 : 127;
    const double q = rint(v);
    return q < lo ? lo : q > hi ? hi : q;
}

/* The direct kernel's formula for one destination element (ocd_cuda_conv_finish on an int
   sum), written out: float arithmetic, then the destination's rounding. */
double direct_formula(const emu_case &e, cudnnDataType_t ys, long long sum, double old, double bias)
{
    float r = (float)e.alpha * (float)sum;
    if (e.fused) {
        if (e.beta != 0) r += (float)e.beta * (float)old;
        r += (float)bias;
        if (r < 0) r = 0;
    } else if (e.beta != 0) {
        r += (float)e.beta * (float)old;
    }
    return quantize(ys, r);
}

template <typename T> bool run_case(const emu_case &e)
{
    struct ref_conv rc;
    memset(&rc, 0, sizeof rc);
    rc.nsp = 2, rc.n = e.n, rc.c = e.c, rc.k = e.k, rc.groups = e.groups, rc.convolution = e.flip;
    rc.in[0] = e.h, rc.in[1] = e.w, rc.filt[0] = e.r, rc.filt[1] = e.s;
    rc.pad[0] = rc.pad[1] = e.pad, rc.stride[0] = rc.stride[1] = e.stride, rc.dil[0] = rc.dil[1] = 1;
    if (!ref_conv_out_dims(&rc)) return false;
    const int P = rc.out[0], Q = rc.out[1], cg = e.c / e.groups;

    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    p.dir = e.dir;
    p.s.nsp = 2, p.s.n = e.n, p.s.c = e.c, p.s.k = e.k, p.s.groups = e.groups, p.s.flip = e.flip;
    for (int i = 0; i < 2; i++) {
        p.s.in[i] = rc.in[i], p.s.filt[i] = rc.filt[i], p.s.out[i] = rc.out[i];
        p.s.pad[i] = e.pad, p.s.stride[i] = e.stride, p.s.dilation[i] = 1;
    }
    p.x = view_of(e.xt, e.xf, e.n, e.c, e.h, e.w);
    p.w = view_of(e.wt, e.wf, e.k, cg, e.r, e.s);
    p.y = view_of(e.yt, e.yf, e.n, e.k, P, Q);
    p.w_format = e.wf;
    p.compute = CUDNN_DATA_INT32, p.math = CUDNN_DEFAULT_MATH;
    p.alpha = e.alpha, p.beta = e.fused ? 0 : e.beta; /* the fused call: alpha2 = beta */

    const cudnnDataType_t xs = ocd_dtype_scalar(e.xt), ys = ocd_dtype_scalar(e.yt);
    const bool yfloat = ys == CUDNN_DATA_FLOAT;
    byte_rng rng = {(uint32_t)(e.c * 131 + e.k * 7 + e.h)};
    const size_t nx = (size_t)ref_conv_x_count(&rc), nw = (size_t)ref_conv_w_count(&rc), ny = (size_t)ref_conv_y_count(&rc);
    std::vector<uint8_t> x(nx), w(nw);
    std::vector<float> yf(yfloat ? ny : 0), zf(yfloat ? ny : 0), bias(e.k);
    std::vector<uint8_t> y8(yfloat ? 0 : ny), z8(yfloat ? 0 : ny);
    std::vector<double> xd(nx), wd(nw), yold(ny), biasd(e.k);
    for (long n = 0, i = 0; n < e.n; n++)
        for (long c = 0; c < e.c; c++)
            for (long h = 0; h < e.h; h++)
                for (long ww = 0; ww < e.w; ww++, i++) {
                    int v = rng.next(xs == CUDNN_DATA_UINT8);
                    x[at_v(p.x, n, c, h, ww)] = (uint8_t)v;
                    xd[i] = v;
                }
    for (long k = 0, i = 0; k < e.k; k++)
        for (long c = 0; c < cg; c++)
            for (long r = 0; r < e.r; r++)
                for (long s = 0; s < e.s; s++, i++) {
                    int v = rng.next(false);
                    w[at_v(p.w, k, c, r, s)] = (uint8_t)v;
                    wd[i] = v;
                }
    /* y's old values (beta) or z (the fused call, in a buffer of its own) */
    for (long n = 0, i = 0; n < e.n; n++)
        for (long k = 0; k < e.k; k++)
            for (long h = 0; h < P; h++)
                for (long ww = 0; ww < Q; ww++, i++) {
                    const size_t o = at_v(p.y, n, k, h, ww);
                    int v = rng.next(ys == CUDNN_DATA_UINT8);
                    if (yfloat) {
                        yf[o] = e.fused ? -7.f : (float)v / 4, zf[o] = (float)v / 4;
                        yold[i] = (float)v / 4;
                    } else {
                        y8[o] = e.fused ? 0x77 : (uint8_t)v, z8[o] = (uint8_t)v;
                        yold[i] = v;
                    }
                }
    for (int k = 0; k < e.k; k++) bias[k] = (float)((k * 37) % 201 - 100) * 0.75f, biasd[k] = bias[k];
    p.x_data = x.data(), p.w_data = w.data();
    p.y_data = yfloat ? (void *)yf.data() : (void *)y8.data();
    if (e.fused) {
        p.ep.on = true, p.ep.relu = true, p.ep.alpha2 = e.beta;
        p.ep.z = e.beta != 0 ? (yfloat ? (const void *)zf.data() : (const void *)z8.data()) : NULL;
        p.ep.bias = bias.data();
        p.ep.bias_view = nhwc(CUDNN_DATA_FLOAT, 1, e.k, 1, 1);
    }

    igemm_plan pl;
    struct cudnnContext ctx = emu_handle(9, 2); /* 2 SMs: every tile fills the GPU */
    const char *why = make_plan(&ctx, &p, e.tile, false, &pl, PLAN_INT8);
    if (const int v = emu_plan_verdict(e.name, why, e.declines); v >= 0) return v;
    if (pl.prm.splits != 1) {
        printf("FAIL %s: %d splits (int8 never splits K)\n", e.name, pl.prm.splits);
        return false;
    }
    /* INT8x4 and INT8x32 x of whole 16-channel chunks is read in place, not copied */
    const bool in_place = p.x.vect > 1 && !pl.pad_on;
    if (pl.prm.a.vshift != (in_place ? vect_shift(p.x.vect) : 0) || (in_place && pl.copy_a.on)) {
        printf("FAIL %s: x %s (vshift %d, copy %d)\n", e.name, in_place ? "not read in place" : "read as vectors",
               pl.prm.a.vshift, (int)pl.copy_a.on);
        return false;
    }
    /* so is such a filter (without groups or padded channels), INT8x4 up to VECT_FILTER_IN_PLACE
       bytes: the IMMA sample then needs no workspace, which its variant pack does not have */
    const bool w_in_place = p.w.vect > 1 && !pl.pad_on && e.groups == 1 &&
                            (p.w.vect == 32 || (int64_t)e.k * e.c * e.r * e.s <= VECT_FILTER_IN_PLACE);
    if (pl.prm.b.vshift != (w_in_place ? vect_shift(p.w.vect) : 0) ||
        (w_in_place && (pl.pack_filter || (in_place && pl.ws_bytes != 0)))) {
        printf("FAIL %s: the filter %s (vshift %d, packed %d, workspace %zu)\n", e.name,
               w_in_place ? "not read in place" : "read as vectors", pl.prm.b.vshift, (int)pl.pack_filter,
               pl.ws_bytes);
        return false;
    }
    std::vector<uint8_t> ws(pl.ws_bytes + 256);
    uint8_t *wsa = (uint8_t *)(((uintptr_t)ws.data() + 255) & ~(uintptr_t)255);
    emu_igemm_copies<T>(pl, p, wsa);
    if (e.tile == 0)
        emulate_launch<ocd_mma_tile<128, 128, 2, 4, 3>, T>(pl.prm);
    else if (e.tile == 1)
        emulate_launch<ocd_mma_tile<128, 64, 2, 2, 4>, T>(pl.prm);
    else
        emulate_launch<ocd_mma_tile<64, 64, 2, 2, 4>, T>(pl.prm);

    std::vector<double> conv(ny, 0);
    ref_conv_fwd(&rc, xd.data(), wd.data(), conv.data());
    double worst = 0;
    long saturated = 0;
    for (long n = 0, i = 0; n < e.n; n++)
        for (long k = 0; k < e.k; k++)
            for (long h = 0; h < P; h++)
                for (long ww = 0; ww < Q; ww++, i++) {
                    const size_t o = at_v(p.y, n, k, h, ww);
                    const double got = yfloat ? (double)yf[o] : ys == CUDNN_DATA_UINT8 ? (double)y8[o] : (double)(int8_t)y8[o];
                    const double direct = direct_formula(e, ys, (long long)conv[i], yold[i], biasd[k]);
                    double exact = e.alpha * conv[i] + e.beta * yold[i];
                    if (e.fused) exact = fmax(exact + biasd[k], 0.0);
                    exact = quantize(ys, exact);
                    /* float: relative to the terms' magnitudes (they may cancel) */
                    const double terms = fabs(e.alpha * conv[i]) + fabs(e.beta * yold[i]) + (e.fused ? fabs(biasd[k]) : 0);
                    const double err = fabs(got - exact) / (yfloat ? fmax(1.0, terms) : 1.0);
                    if (got != direct || !(err <= (yfloat ? 1e-6 : 1.0))) {
                        printf("FAIL %s: (n %ld, k %ld, %ld, %ld): %.9g, the direct formula gives %.9g, exact %.9g\n",
                               e.name, n, k, h, ww, got, direct, exact);
                        return false;
                    }
                    worst = fmax(worst, err);
                    saturated += !yfloat && (got == 127 || got == -128 || (ys == CUDNN_DATA_UINT8 && got == 255));
                }
    printf("ok   %s: the direct formula's bits, %.2g from the exact result%s%s%s\n", e.name, worst,
           saturated ? " (some saturated)" : "", in_place ? ", x read in place" : "",
           w_in_place ? ", the filter read in place" : "");
    return true;
}

} // namespace

int main()
{
    setenv("OPENCUDNN_UNPROVEN", "1", 1); /* the entries are gated until a GPU has run them */
    const cudnnDataType_t I8 = CUDNN_DATA_INT8, U8 = CUDNN_DATA_UINT8, I8x4 = CUDNN_DATA_INT8x4,
                          U8x4 = CUDNN_DATA_UINT8x4, I8x32 = CUDNN_DATA_INT8x32, F = CUDNN_DATA_FLOAT;
    const cudnnTensorFormat_t NCHW = CUDNN_TENSOR_NCHW, NHWC = CUDNN_TENSOR_NHWC, VECT = CUDNN_TENSOR_NCHW_VECT_C;
    const enum ocd_conv_dir FWD = OCD_CONV_FWD;
    const emu_case cases[] = {
        /* name, x w y types, x w y formats, tile, n, c, k, h, w, r, s, pad, stride, groups, fused, alpha, beta */
        {"frontend IMMA sample (INT8x4, 16 -> 64, 3x3, 224x224, one image), 128x64", I8x4, I8x4, I8x4, VECT, VECT, VECT,
         1, 1, 16, 64, 224, 224, 3, 3, 0, 1, 1, false, 1, 0, NULL, FWD},
        {"INT8x4, 128 -> 128, 3x3 pad 1, 8x8: the filter (144 KB) packed, 64x64", I8x4, I8x4, I8x4, VECT, VECT, VECT,
         2, 1, 128, 128, 8, 8, 3, 3, 1, 1, 1, false, 1, 0, NULL, FWD},
        {"INT8x32, 96 -> 96, 3x3 pad 1, 6x6: the filter (81 KB) in place, 64x64", I8x32, I8x32, I8x32, VECT, VECT,
         VECT, 2, 1, 96, 96, 6, 6, 3, 3, 1, 1, 1, false, 1, 0, NULL, FWD},
        {"INT8x32, 32 -> 64, 3x3 pad 1, 19x17, alpha 0.25 beta 0.5, 64x64", I8x32, I8x32, I8x32, VECT, VECT, VECT, 2,
         2, 32, 64, 19, 17, 3, 3, 1, 1, 1, false, 0.25, 0.5, NULL, FWD},
        {"INT8_EXT NHWC in place, float y, 48 -> 232 (N edge), alpha 0.3 beta 0.7, 128x128", I8, I8, F, NHWC, NHWC, NHWC,
         0, 2, 48, 232, 21, 23, 3, 3, 1, 1, 1, false, 0.3, 0.7, NULL, FWD},
        {"INT8 NHWC fused z bias ReLU, saturating, stride 2, 128x64", I8, I8, I8, NHWC, NHWC, NHWC, 1, 3, 32, 128, 17,
         15, 3, 3, 1, 2, 1, true, 0.0625, 0.5, NULL, FWD},
        {"UINT8x4 -> INT8x4, 24 channels (a tail of 8), 5x5 pad 2, 64x64", U8x4, I8x4, I8x4, VECT, VECT, VECT, 2, 2, 24,
         40, 13, 11, 5, 5, 2, 1, 1, false, 0.0078125, 0, NULL, FWD},
        {"UINT8 NHWC -> float, fused without z, 64x64", U8, I8, F, NHWC, NHWC, NHWC, 2, 1, 16, 24, 9, 9, 3, 3, 1, 1, 1,
         true, 0.5, 0, NULL, FWD},
        {"UINT8 NHWC -> UINT8 (negative sums stored as 0), 32 -> 128, 128x64", U8, I8, U8, NHWC, NHWC, NHWC, 1, 2, 32,
         128, 12, 12, 3, 3, 1, 1, 1, false, 0x1p-12, 0, NULL, FWD},
        {"UINT8 NHWC -> INT8 (UINT8_CONFIG), 48 -> 40, 64x64", U8, I8, I8, NHWC, NHWC, NHWC, 2, 2, 48, 40, 13, 11, 3, 3,
         1, 1, 1, false, 0x1p-12, 0, NULL, FWD},
        {"INT8 NCHW (transposed) with a KCRS filter, C 20 (padded), 7x7 stride 2, 128x64", I8, I8, I8, NCHW, NCHW,
         NCHW, 1, 4, 20, 64, 15, 14, 7, 7, 3, 2, 1, false, 0.125, 0, NULL, FWD},
        {"INT8 NCHW, C 32, 1x1, 64x64", I8, I8, F, NCHW, NCHW, NCHW, 2, 2, 32, 24, 10, 10, 1, 1, 0, 1, 1, false, 1, 0,
         NULL, FWD},
        {"INT8 NHWC groups 2 (16 channels each), in place, 64x64", I8, I8, I8, NHWC, NHWC, NHWC, 2, 2, 32, 32, 9, 11, 3,
         3, 1, 1, 2, false, 0.25, 0, NULL, FWD},
        {"NVIDIA's conv sample: INT8x4 in CONVOLUTION mode, alpha 0.8, 3x5 filter, 128x64", I8x4, I8x4, I8x4, VECT,
         VECT, VECT, 1, 2, 32, 64, 14, 13, 3, 5, 1, 1, 1, false, 0.8, 0, NULL, FWD, true},
        {"INT8x4 with groups is declined", I8x4, I8x4, I8x4, VECT, VECT, VECT, 2, 1, 32, 32, 9, 9, 3, 3, 1, 1, 2, false,
         1, 0, "with groups", FWD},
        {"INT8 NHWC groups with 8 channels each is declined", I8, I8, I8, NHWC, NHWC, NHWC, 2, 1, 16, 32, 9, 9, 3, 3,
         1, 1, 2, false, 1, 0, "multiple of", FWD},
        {"backward data on int8 is declined", I8, I8, I8, NHWC, NHWC, NHWC, 2, 1, 16, 32, 9, 9, 3, 3, 1, 1, 1, false, 1,
         0, "forward pass", OCD_CONV_BWD_DATA},
        {"fp16 data is declined", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, NHWC, NHWC, NHWC, 2, 1, 16, 32, 9,
         9, 3, 3, 1, 1, 1, false, 1, 0, "type", FWD},
    };
    int failed = 0;
    for (const emu_case &e : cases) failed += ocd_dtype_scalar(e.xt) == CUDNN_DATA_UINT8 ? !run_case<uint8_t>(e) : !run_case<int8_t>(e);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
