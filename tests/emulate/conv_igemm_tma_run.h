/* conv_igemm_tma_run.h: the emulation of the sm_90a TMA convolution kernel
   (src/cuda/conv_igemm_tma_sm90.cu) that its two test programs share: a case's problem and
   reference, part 1 (the tensor maps through the TMA model against the convolution's operands
   and the cp.async loaders), part 2 (the kernel's ring loops on threads over modelled
   mbarriers, clusters included) and part 3 (the result against tests/ref), as
   tests/emulate/conv_igemm_tma.cu describes them. fp16 and bf16 (conv_igemm_tma.cu), and fp32
   data as TF32 (conv_igemm_tma_tf32.cu): the stages hold fp32 bits as the TMA lands them (a
   workspace copy's rounded to tf32), the emulated wgmma keeps their tf32 part (truncation, as
   the hardware does), and the result is held to the TF32 bounds of tests/conv_fidelity.c and
   the tests' TF32 tolerance. Included after the kernel's sources, wgmma_emulate.h,
   conv_igemm_emulate.h and ref/conv.h. */
#ifndef OCD_EMULATE_CONV_IGEMM_TMA_RUN_H
#define OCD_EMULATE_CONV_IGEMM_TMA_RUN_H

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "conv_igemm_tma_emulate.h"
#include "emu_handle.h"

namespace {

/* ---- the cases ------------------------------------------------------------------------------------ */

struct tma_case {
    const char *name;
    cudnnDataType_t dt;
    int tile; /* TMA tile index */
    int n, c, k, h, w, r, s, pad_h, pad_w, stride, dil;
    bool flip, bias_relu, kcrs; /* bias_relu in backward data: the ReLU gradient (DgradDrelu) */
    double alpha, beta;
    int sm_count;
    const char *declines; /* the plan must decline with a reason holding this */
    bool dgrad;           /* backward data (dx from dy; stride 1, or phase by phase) */
    bool wgrad;           /* the filter gradient (dw from x and dy); neither: the forward pass */
    bool phases;          /* strided backward data through cuda:dgrad_igemm_tma_phases */
    bool nchw;            /* x and y (dx and dy) NCHW: through the workspace transpose */
    bool fma;             /* CUDNN_FMA_MATH (no TF32 allowed); else TENSOR_OP_MATH */
    bool no_clusters;     /* planned where no cluster fits the GPU (OPENCUDNN_TEST_CLUSTERS=0) */
};

/* The stride phase a backward-data plan covers, from the convolution's definition (not from
   phase_problem): its first input pixel (a_h, a_w), its pixels' extents, and the taps of the
   cross-correlation filter reaching it per dim, in order: every r with stride dividing
   a + pad - r * dilation. A unit-stride problem is one phase of every tap. */
struct emu_phase {
    int a[2], px[2];
    std::vector<int> taps[2];

    emu_phase(const tma_case &e, int ph)
    {
        const int u = e.phases ? e.stride : 1, in[2] = {e.h, e.w}, filt[2] = {e.r, e.s}, pad[2] = {e.pad_h, e.pad_w};
        a[0] = ph / u % u, a[1] = ph % u;
        for (int d = 0; d < 2; d++) {
            px[d] = in[d] > a[d] ? (in[d] - a[d] + u - 1) / u : 0;
            for (int r = 0; r < filt[d]; r++)
                if ((a[d] + pad[d] - r * e.dil) % u == 0) taps[d].push_back(r);
        }
    }
};

/* A case's problem, data and reference (logical NCHW / KCRS doubles in the reference's order;
   none for a case the plan declines). */
template <typename T> struct tma_problem {
    struct ocd_conv_problem p;
    struct ref_conv rc;
    std::vector<T> x, w, y, bias;
    std::vector<T> gate;      /* backward data's ReLU gradient: the forward input, laid out as dx */
    std::vector<double> gate_d;
    std::vector<double> want; /* y's, x's for backward data, w's for the filter gradient */
    std::vector<double> mag;  /* fp32 data: the same from the inputs' magnitudes (the TF32 bound's scale) */
    int P, Q;

    explicit tma_problem(const tma_case &e)
    {
        memset(&rc, 0, sizeof rc);
        rc.nsp = 2, rc.n = e.n, rc.c = e.c, rc.k = e.k, rc.groups = 1, rc.convolution = e.flip;
        rc.in[0] = e.h, rc.in[1] = e.w, rc.filt[0] = e.r, rc.filt[1] = e.s;
        rc.pad[0] = e.pad_h, rc.pad[1] = e.pad_w, rc.stride[0] = rc.stride[1] = e.stride, rc.dil[0] = rc.dil[1] = e.dil;
        ref_conv_out_dims(&rc);
        P = rc.out[0], Q = rc.out[1];
        memset(&p, 0, sizeof p);
        p.dir = e.wgrad ? OCD_CONV_BWD_FILTER : e.dgrad ? OCD_CONV_BWD_DATA : OCD_CONV_FWD;
        p.s.nsp = 2, p.s.n = e.n, p.s.c = e.c, p.s.k = e.k, p.s.groups = 1, p.s.flip = e.flip;
        for (int i = 0; i < 2; i++) {
            p.s.in[i] = rc.in[i], p.s.filt[i] = rc.filt[i], p.s.out[i] = rc.out[i];
            p.s.pad[i] = rc.pad[i], p.s.stride[i] = e.stride, p.s.dilation[i] = e.dil;
        }
        p.x = e.nchw ? nchw(e.dt, e.n, e.c, e.h, e.w) : nhwc(e.dt, e.n, e.c, e.h, e.w);
        p.y = e.nchw ? nchw(e.dt, e.n, e.k, P, Q) : nhwc(e.dt, e.n, e.k, P, Q);
        p.w = e.kcrs ? nchw(e.dt, e.k, e.c, e.r, e.s) : nhwc(e.dt, e.k, e.c, e.r, e.s);
        p.w_format = e.kcrs ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
        p.compute = CUDNN_DATA_FLOAT, p.math = e.fma ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
        p.alpha = e.alpha, p.beta = e.beta;
        emu_rng rng = {(uint32_t)(e.c * 977 + e.k * 13 + e.r)};
        const size_t nx = (size_t)ref_conv_x_count(&rc), nw = (size_t)ref_conv_w_count(&rc);
        const size_t ny = (size_t)ref_conv_y_count(&rc);
        x.resize(nx), w.resize(nw), y.resize(ny), bias.resize(e.k);
        std::vector<double> xd(nx), wd(nw), yd(ny), bd(e.k);
        auto fill = [&](std::vector<T> &v, std::vector<double> &d, const struct ocd_tensor_view &view, long a, long b,
                        long c, long dd) {
            for (long i0 = 0, i = 0; i0 < a; i0++)
                for (long i1 = 0; i1 < b; i1++)
                    for (long i2 = 0; i2 < c; i2++)
                        for (long i3 = 0; i3 < dd; i3++, i++) {
                            T &t = v[at(view, i0, i1, i2, i3)];
                            t = T(rng.next());
                            d[i] = ocd_cuda_load(&t);
                        }
        };
        fill(x, xd, p.x, e.n, e.c, e.h, e.w);
        fill(w, wd, p.w, e.k, e.c, e.r, e.s);
        fill(y, yd, p.y, e.n, e.k, P, Q);
        for (int k = 0; k < e.k; k++) bias[k] = T(rng.next()), bd[k] = ocd_cuda_load(&bias[k]);
        p.x_data = x.data(), p.w_data = w.data(), p.y_data = y.data();
        if (e.bias_relu && e.dgrad) {
            gate.resize(nx), gate_d.resize(nx);
            fill(gate, gate_d, p.x, e.n, e.c, e.h, e.w);
            p.relu_grad = true, p.relu_x = gate.data();
        } else if (e.bias_relu) {
            p.ep.on = true, p.ep.relu = true, p.ep.alpha2 = e.beta, p.ep.z = e.beta != 0 ? y.data() : NULL;
            p.ep.bias = bias.data();
            p.ep.bias_view = nhwc(e.dt, 1, e.k, 1, 1);
        }
        want.assign(e.wgrad ? nw : e.dgrad ? nx : ny, 0);
        if (e.declines) return; /* a case the plan declines has no result to check */
        reference(e, xd, wd, yd, bd, false, want);
        if constexpr (sizeof(T) == 4) {
            for (std::vector<double> *v : {&xd, &wd, &yd, &bd})
                for (double &a : *v) a = fabs(a);
            reference(e, xd, wd, yd, bd, true, mag);
        }
    }
    /* The case's result from the inputs' values, or (magnitude: the inputs' magnitudes given)
       the sum of its terms' magnitudes, into out. */
    void reference(const tma_case &e, const std::vector<double> &xd, const std::vector<double> &wd,
                   const std::vector<double> &yd, const std::vector<double> &bd, bool magnitude, std::vector<double> &out)
    {
        const double alpha = magnitude ? fabs(e.alpha) : e.alpha, beta = magnitude ? fabs(e.beta) : e.beta;
        out.assign(want.size(), 0);
        if (e.wgrad) {
            ref_conv_bwd_filter(&rc, xd.data(), yd.data(), out.data());
            for (size_t i = 0; i < out.size(); i++) out[i] = alpha * out[i] + beta * wd[i];
            return;
        }
        if (e.dgrad) {
            ref_conv_bwd_data(&rc, yd.data(), wd.data(), out.data());
            for (size_t i = 0; i < out.size(); i++) {
                out[i] = alpha * out[i] + beta * xd[i];
                if (e.bias_relu && !magnitude && !(gate_d[i] > 0)) out[i] = 0;
            }
            return;
        }
        ref_conv_fwd(&rc, xd.data(), wd.data(), out.data());
        for (size_t i = 0; i < out.size(); i++) {
            out[i] = alpha * out[i] + beta * yd[i];
            if (e.bias_relu) out[i] += bd[(i / ((size_t)P * Q)) % e.k];
            if (e.bias_relu && !magnitude) out[i] = fmax(out[i], 0.0);
        }
    }
};

/* An operand element as it lies in a stage (the raw value, fp32 bits included), and the value
   a TMA lands there for operand value v: v itself, or, where a TF32 plan's workspace copy
   brought the operand (copied), v rounded to tf32 as that copy rounds it (igemm_operand). */
template <typename T> double stage_elem(const uint8_t *p)
{
    T v;
    memcpy(&v, p, sizeof v);
    return ocd_cuda_load(&v);
}
template <typename T> double landed(double v, bool copied)
{
    if (sizeof(T) != 4 || !copied) return v;
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    u = igemm_operand(u, true);
    memcpy(&f, &u, 4);
    return f;
}

/* ---- 1. the maps against the im2col matrix and the cp.async loaders ----------------------------- */

template <class Tile, typename T, bool WGRAD> struct map_check {
    typedef igemm_tma_smem<Tile, T, WGRAD> L;
    typedef typename L::Shape Shape;
    typedef typename L::Loads Loads;
    static constexpr uint32_t BASE = 1024; /* the stages' shared address in the emulated smem */

    /* Element (row m, channel c) of the A operand of filter tap (r, s) (the tap as the B map
       holds it), from the convolution's definition: the forward pass reads x at the output
       pixel's window, the tap mirrored in CONVOLUTION mode; backward data reads dy at the pixel
       (h + pad - r * dil, w + pad - s * dil) of input pixel (h, w), the pixel dy[p] whose window
       puts cross-correlation tap (r, s) on it. */
    static double want_a(const tma_case &e, const tma_problem<T> &tp, const emu_phase &ph, int m, int c, int r, int s)
    {
        if (e.dgrad) { /* the phase's pixel m, the phase's tap (r, s); a phase's strides divide exactly */
            const int w = m % ph.px[1], h = m / ph.px[1] % ph.px[0], n = m / (ph.px[1] * ph.px[0]);
            const int u = e.phases ? e.stride : 1;
            const int pp = (ph.a[0] + u * h + e.pad_h - ph.taps[0][r] * e.dil) / u;
            const int q = (ph.a[1] + u * w + e.pad_w - ph.taps[1][s] * e.dil) / u;
            return pp >= 0 && pp < tp.P && q >= 0 && q < tp.Q ? ocd_cuda_load(&tp.y[at(tp.p.y, n, c, pp, q)]) : 0.0;
        }
        return want_x(e, tp, m, c, r, s);
    }
    /* x at the window of output pixel m (n, p, q) for tap (r, s) of dw, channel c: zeros in the
       padding and past the last image. */
    static double want_x(const tma_case &e, const tma_problem<T> &tp, int m, int c, int r, int s)
    {
        const int rr = e.flip ? e.r - 1 - r : r, sr = e.flip ? e.s - 1 - s : s;
        const int q = m % tp.Q, pp = m / tp.Q % tp.P, n = m / (tp.Q * tp.P);
        const int hh = pp * e.stride - e.pad_h + rr * e.dil, ww = q * e.stride - e.pad_w + sr * e.dil;
        return n < e.n && hh >= 0 && hh < e.h && ww >= 0 && ww < e.w ? ocd_cuda_load(&tp.x[at(tp.p.x, n, c, hh, ww)])
                                                                     : 0.0;
    }
    /* Element (column j, channel c) of the B operand of tap (r, s): w[j][c][r][s] forward; for
       backward data the cross-correlation filter w[c][j] at the phase's tap (r, s), w mirrored in
       CONVOLUTION mode. */
    static double want_b(const tma_case &e, const tma_problem<T> &tp, const emu_phase &ph, int j, int c, int r, int s)
    {
        if (!e.dgrad) return ocd_cuda_load(&tp.w[at(tp.p.w, j, c, r, s)]);
        r = ph.taps[0][r], s = ph.taps[1][s];
        if (e.flip) r = e.r - 1 - r, s = e.s - 1 - s;
        return ocd_cuda_load(&tp.w[at(tp.p.w, c, j, r, s)]);
    }

    /* The forward pass's K tile kt of the tile at (m0, n0), as wgmma reads it from stage 0 (A
       only where loaded: a tile of the cluster's rounding, past M, has none). */
    static const char *check_fwd(const tma_case &e, const tma_problem<T> &tp, const emu_phase &ph, const igemm_plan &pl,
                                 int m0, int n0, int kt, const std::vector<uint8_t> &smem)
    {
        const igemm_params &p = pl.prm;
        const igemm_tma_geom &g = pl.tma;
        const int esize = (int)sizeof(T), CK = e.dgrad ? e.k : e.c, NK = e.dgrad ? e.c : e.k; /* GEMM K per tap, N */
        const int tap = kt / g.cblocks, c0 = (kt % g.cblocks) * g.bk, taps_s = e.dgrad ? (int)ph.taps[1].size() : e.s;
        const int r = tap / taps_s, s = tap % taps_s;
        if (g.bk * esize != 128) return "a K tile is not one 128-byte row";
        for (int i = 0; i < (m0 < p.M ? Tile::BM : 0); i++)
            for (int k = 0; k < g.bk; k++) {
                const int m = m0 + i, c = c0 + k;
                const double want = m < p.M && c < CK ? want_a(e, tp, ph, m, c, r, s) : 0.0;
                uint32_t addr;
                const int ks = k / emu_kstep<T>();
                if (!emu_desc_addr(Shape::desc_a(BASE, 0, i / 64, ks), i % 64, k % emu_kstep<T>(), esize, &addr))
                    return "a malformed A descriptor";
                if (stage_elem<T>(&smem[addr]) != landed<T>(want, pl.copy_a.on || pl.pad_on))
                    return "an A element differs from the im2col matrix";
            }
        for (int j = 0; j < Tile::BN; j++)
            for (int k = 0; k < g.bk; k++) {
                const int kk = n0 + j, c = c0 + k;
                const double want = kk < NK && c < CK ? want_b(e, tp, ph, kk, c, r, s) : 0.0;
                uint32_t addr;
                if (!emu_desc_addr(Shape::desc_b(BASE, 0, k / emu_kstep<T>()), j, k % emu_kstep<T>(), esize, &addr))
                    return "a malformed B descriptor";
                if (stage_elem<T>(&smem[addr]) != landed<T>(want, pl.pack_filter)) return "a B element differs from the filter";
            }
        return NULL;
    }

    /* The filter gradient's K tile kt (pixels 64 kt ..) of the tile at (m0, n0), as wgmma reads
       it from stage 0 (MN-major): A(k, m) = dy at pixel 64 kt + k, filter m; B(k, j) = x at that
       pixel's window for the tap and channel of column j, the taps' channels padded to 64
       (conv_igemm_tma.cuh). Rows and columns of blocks not loaded are not checked. */
    static const char *check_wgrad(const tma_case &e, const tma_problem<T> &tp, const Loads &l, int kt,
                                   const std::vector<uint8_t> &smem)
    {
        const int esize = (int)sizeof(T), npq = e.n * tp.P * tp.Q, cp = (e.c + 63) / 64 * 64;
        for (int i = 0; i < 64 * l.na; i++)
            for (int k = 0; k < 64; k++) {
                const int m = l.u.m0 + i, px = kt * 64 + k;
                const int q = px % tp.Q, pp = px / tp.Q % tp.P, n = px / (tp.Q * tp.P);
                const double want = m < e.k && px < npq ? ocd_cuda_load(&tp.y[at(tp.p.y, n, m, pp, q)]) : 0.0;
                uint32_t addr;
                const int ks = k / emu_kstep<T>();
                if (!emu_desc_addr_mn(Shape::desc_a(BASE, 0, i / 64, ks), i % 64, k % emu_kstep<T>(), esize, &addr))
                    return "a malformed A descriptor";
                if (emu_elem<T>(&smem[addr]) != want) return "an A element differs from dy";
            }
        for (int j = 0; j < 64 * l.nb; j++)
            for (int k = 0; k < 64; k++) {
                const int col = l.u.n0 + j, tap = col / cp, c = col % cp, px = kt * 64 + k;
                const double want = tap < e.r * e.s && c < e.c ? want_x(e, tp, px, c, tap / e.s, tap % e.s) : 0.0;
                uint32_t addr;
                if (!emu_desc_addr_mn(Shape::desc_b(BASE, 0, k / emu_kstep<T>()), j, k % emu_kstep<T>(), esize, &addr))
                    return "a malformed B descriptor";
                if (emu_elem<T>(&smem[addr]) != want) return "a B element differs from the im2col matrix";
            }
        return NULL;
    }

    /* The k32 filter gradient's K tile (conv_igemm_tma.cuh: pixels (q0 .. q0 + KQ - 1, p0 .. p0 +
       32 / KQ - 1) of image img, KQ the tile's pixels a row) of the tile at (m0, n0), as wgmma
       reads it from stage 0 (K-major, the swizzle of KQ's rows): A(m, k) = dy at pixel (p0 + k /
       KQ, q0 + k % KQ), filter m, zero past P or Q; B(j, k) = x at that pixel's window for the tap
       and channel of column j. Each rounded to tf32, as the plan's copies bring both. */
    static const char *check_wgrad_k32(const tma_case &e, const tma_problem<T> &tp, const igemm_plan &pl,
                                       const Loads &l, const std::vector<uint8_t> &smem)
    {
        const int esize = (int)sizeof(T), cp = (e.c + 63) / 64 * 64, kq = Tile::KQ, rows = 32 / kq;
        const int qb = (tp.Q + kq - 1) / kq, pb = (tp.P + rows - 1) / rows;
        if (pl.tma.kq != kq) return "the plan's pixels a row differ from the tile's";
        if (l.q0 != l.kt % qb * kq || l.p0 != l.kt / qb % pb * rows || l.img != l.kt / (qb * pb))
            return "a K tile's pixel block differs from the divided one";
        for (int i = 0; i < 64 * l.na; i++)
            for (int k = 0; k < 32; k++) {
                const int m = l.u.m0 + i, pp = l.p0 + k / kq, q = l.q0 + k % kq;
                const double want =
                    m < e.k && pp < tp.P && q < tp.Q ? ocd_cuda_load(&tp.y[at(tp.p.y, l.img, m, pp, q)]) : 0.0;
                uint32_t addr;
                if (!emu_desc_addr(Shape::desc_a(BASE, 0, i / 64, k / 8), i % 64, k % 8, esize, &addr))
                    return "a malformed A descriptor";
                if (stage_elem<T>(&smem[addr]) != landed<T>(want, true)) return "an A element differs from dy";
            }
        for (int j = 0; j < 64 * l.nb; j++)
            for (int k = 0; k < 32; k++) {
                const int col = l.u.n0 + j, tap = col / cp, c = col % cp, pp = l.p0 + k / kq, q = l.q0 + k % kq;
                /* x past P or Q is read (its A partner is zero), as the window's, up to the copies'
                   width, 8 ceil(Q / 8); past it (a row of 32) the TMA's zeros */
                const bool in = tap < e.r * e.s && c < e.c && q < (tp.Q + 7) / 8 * 8;
                const double want = in ? want_x_at(e, tp, l.img, pp, q, c, tap / e.s, tap % e.s) : 0.0;
                uint32_t addr;
                if (!emu_desc_addr(Shape::desc_b(BASE, 0, k / 8), j, k % 8, esize, &addr))
                    return "a malformed B descriptor";
                if (stage_elem<T>(&smem[addr]) != landed<T>(want, true)) return "a B element differs from x";
            }
        return NULL;
    }
    /* x at the window of output pixel (pp, q) of image n for tap (r, s), channel c; zeros outside x. */
    static double want_x_at(const tma_case &e, const tma_problem<T> &tp, int n, int pp, int q, int c, int r, int s)
    {
        const int rr = e.flip ? e.r - 1 - r : r, sr = e.flip ? e.s - 1 - s : s;
        const int hh = pp * e.stride - e.pad_h + rr * e.dil, ww = q * e.stride - e.pad_w + sr * e.dil;
        return hh >= 0 && hh < e.h && ww >= 0 && ww < e.w ? ocd_cuda_load(&tp.x[at(tp.p.x, n, c, hh, ww)]) : 0.0;
    }

    /* The cp.async kernel's loaders, all 256 threads, of K tile kt of its GEMM into ref's stage 0,
       against the loaded blocks (every block forward: one). */
    static const char *check_loaders(const igemm_params &cp, const Loads &l, const std::vector<uint8_t> &smem,
                                     std::vector<uint8_t> &ref)
    {
        if constexpr (Shape::K32) { /* run_tile_case never asks: the TF32 filter gradient has no cp.async loaders */
            return "no cp.async loaders";
        } else {
            std::fill(ref.begin(), ref.end(), 0xff);
            for (int tid = 0; tid < 256; tid++) {
                typename std::conditional<WGRAD, igemm_load_wgrad_a<T, Tile::BM, 256, typename Shape::SA>,
                                          igemm_load_fwd_a<T, Tile::BM, 256, typename Shape::SA>>::type al;
                typename std::conditional<WGRAD, igemm_load_wgrad_b<T, Tile::BN, 256, typename Shape::SB>,
                                          igemm_load_dense_b<T, Tile::BN, 256, typename Shape::SB>>::type bl;
                al.setup(cp, l.u.m0, l.u.n0, 0, tid), bl.setup(cp, l.u.m0, l.u.n0, 0, tid);
                al.load((T *)&ref[BASE + Shape::a_stage(0)], l.kt, cp);
                bl.load((T *)&ref[BASE + Shape::b_stage(0)], l.kt, cp);
            }
            const uint32_t ablock = WGRAD ? Loads::BLOCK : Shape::SA::STAGE_BYTES;
            const uint32_t bblock = WGRAD ? Loads::BLOCK : Shape::SB::STAGE_BYTES;
            const int na = WGRAD ? l.na : l.na > 0, nb = WGRAD ? l.nb : 1;
            if (memcmp(&ref[BASE + Shape::a_stage(0)], &smem[BASE + Shape::a_stage(0)], na * ablock) != 0 ||
                memcmp(&ref[BASE + Shape::b_stage(0)], &smem[BASE + Shape::b_stage(0)], nb * bblock) != 0)
                return "the stages differ from the cp.async loaders'";
            return NULL;
        }
    }

    /* Every work unit and K tile: the kernel's loads through the models (a clustered unit's
       stage as its CTA sees it: its own A, and B from every CTA of the cluster, each loading its
       part), what wgmma reads of the stages against the convolution's operands; where C % 64 ==
       0, the stages against the cp.async loaders' (plan cp: the cp.async kernel's tile of the
       same shape). NULL or what differs. */
    static const char *run(const tma_case &e, const tma_problem<T> &tp, const emu_phase &ph, const igemm_plan &pl,
                           const igemm_plan *cp, std::vector<uint8_t> &smem)
    {
        const igemm_params &p = pl.prm;
        const igemm_tma_geom &g = pl.tma;
        const model_im2col mi = map_im(g, p, WGRAD, (int)sizeof(T));
        const model_tiled mt = map_ti(g, p, WGRAD, (int)sizeof(T));
        if (const char *why = model_encode_rejects(mi, mt)) return why;
        std::vector<uint8_t> ref(smem.size());
        for (int t = 0; t < g.units; t++)
            for (int kt = 0; kt < igemm_tma_unit_at(g, t, Tile::BM, Tile::BN).nkt; kt++) {
                const int rank = t % Tile::CL; /* the cluster's CTAs take consecutive units */
                const Loads l(p, g, t, kt, rank);
                std::fill(smem.begin(), smem.end(), 0xff);
                uint32_t bytes = 0;
                for (int r = 0; r < Tile::CL; r++) {
                    const Loads lr(p, g, t, kt, r);
                    for (int i = 0; i < Loads::COPIES; i++) {
                        if (!lr.on(i)) continue;
                        const igemm_tma_copy c = lr.copy(p, g, i);
                        if (!c.into_b && r != rank) continue; /* the peer's own A */
                        uint32_t b;
                        uint8_t *dst = &smem[BASE + (c.into_b ? Shape::b_stage(0) : Shape::a_stage(0)) + c.off];
                        if (!model_copy(mi, mt, c, dst, &b))
                            return "a filter base outside the im2col bounding box, a step past it by more than one, or "
                                   "a tiled box off 16 bytes";
                        bytes += b;
                    }
                }
                if (bytes != l.bytes) return "the stage's expected bytes differ from its boxes'";
                if (bytes > MODEL_TX_MAX) return "the stage's expected bytes exceed the mbarrier's tx-count";
                const char *err = Shape::K32 ? check_wgrad_k32(e, tp, pl, l, smem)
                                  : WGRAD    ? check_wgrad(e, tp, l, l.kt, smem)
                                             : check_fwd(e, tp, ph, pl, l.u.m0, l.u.n0, l.kt, smem);
                if (err == NULL && cp != NULL) err = check_loaders(cp->prm, l, smem, ref);
                if (err) return err;
            }
        return NULL;
    }
};

/* ---- 2. and 3. the kernel's loops on threads ------------------------------------------------------- */

/* The protocol a cluster follows: the kernel's, or a broken one the checks must catch. */
enum cluster_protocol {
    PROTO_KERNEL,
    PROTO_LOCAL_RELEASE, /* consumers release their own CTA's stages only (empty barriers count 256) */
    PROTO_OWN_BYTES,     /* a full barrier expects only the bytes its own CTA loads */
    PROTO_NO_TURNS,      /* ping-pong consumers that do not wait for their turn */
};

/* A cluster's shared state (Tile::CL CTAs, one for an unclustered tile), under one lock. ring:
   the barriers and stages the ops index (STAGES, or one fewer for the broken ring the checks
   must catch). */
template <class Tile, typename T, bool WGRAD> struct cluster_run {
    typedef igemm_tma_smem<Tile, T, WGRAD> L;
    typedef typename L::Shape Shape;
    typedef typename L::Loads Loads;
    static constexpr uint32_t BASE = 1024;
    static constexpr int S = Tile::STAGES, CL = Tile::CL, CW = Tile::CONSUMERS;

    const igemm_params &p;
    const igemm_tma_geom &g;
    const model_im2col mi;
    const model_tiled mt;
    int first, grid, ring; /* first: the CTA of rank 0 (blockIdx.x) */
    cluster_protocol proto;
    std::mutex mu;
    std::condition_variable cv;
    struct cta {
        model_mbar full[S], empty[S];
        std::vector<uint8_t> smem;
        int readers[S] = {}, released[S] = {}, used[S] = {}; /* released: the consumers' releases, in all */
        int tag[S][2];                                       /* (unit, kt) a stage holds */
        std::vector<std::pair<int, int>> order[CW];          /* (unit, kt) each consumer multiplied, in order */
        std::vector<float> d[CW];                            /* [thread][MI][BN / 2] */
        std::deque<int> pending[CW];                         /* stages of each consumer's pending wgmma groups */
        int turn = 0, passes[CW] = {}, waits[CW] = {};       /* ping-pong: whose mainloop; the named barriers */
    } ctas[CL];
    struct job {
        int dst, src, stage, use, tile, kt, copy; /* copy `copy` of K tile kt of unit `tile` of CTA src */
    };
    std::deque<job> jobs;
    int producing = CL;
    const char *error = NULL;

    cluster_run(const igemm_params &prm, const igemm_tma_geom &geom, int esize, int f, int gr, int rg,
                cluster_protocol pr)
        : p(prm), g(geom), mi(map_im(geom, prm, WGRAD, esize)), mt(map_ti(geom, prm, WGRAD, esize)), first(f), grid(gr),
          ring(rg), proto(pr)
    {
        for (cta &c : ctas) {
            c.smem.assign(BASE + L::SMEM_STAGED - 1024, 0xff); /* the stages, the barriers, the staged epilogue's buffers */
            for (int s = 0; s < S; s++)
                c.full[s].init(1),
                    c.empty[s].init(IGEMM_TMA_RELEASE_ARRIVALS * Tile::RELEASERS * (proto == PROTO_LOCAL_RELEASE ? 1 : CL));
            for (int i = 0; i < CW; i++) c.d[i].assign((size_t)128 * Tile::MI * (Tile::BN / 2), 0.f);
        }
    }
    void fail(const char *why)
    {
        if (error == NULL) error = why;
        cv.notify_all();
    }
    /* the ring loops' K tiles of a unit (the kernel's igemm_tma_units) */
    int nkt(int t) const
    {
        return igemm_tma_unit_at(g, t, Tile::BM, Tile::BN).nkt;
    }
    /* waits (lock held) until pred, or fails the run after a stall */
    template <class Pred> void wait(std::unique_lock<std::mutex> &lk, Pred pred)
    {
        if (!cv.wait_for(lk, std::chrono::seconds(ring == S && proto == PROTO_KERNEL ? 20 : 2), [&] { return error != NULL || pred(); }))
            fail("stalled: a barrier phase never completed");
    }
};

/* A short random pause, so that the threads interleave differently from run to run. */
void jitter(std::minstd_rand &rng)
{
    const unsigned r = rng() % 16;
    if (r < 2) std::this_thread::sleep_for(std::chrono::microseconds(r * 20 + 5));
    else if (r < 8) std::this_thread::yield();
}

/* The producer of the cluster's CTA of rank `rank`. */
template <class Tile, typename T, bool WGRAD> struct emu_producer {
    typedef cluster_run<Tile, T, WGRAD> C;
    C &c;
    int rank;
    std::minstd_rand rng;
    int nkt(int t) const
    {
        return c.nkt(t);
    }
    void wait_empty(int s, unsigned parity)
    {
        jitter(rng);
        std::unique_lock<std::mutex> lk(c.mu);
        c.wait(lk, [&] { return c.ctas[rank].empty[s % c.ring].passed(parity); });
    }
    /* arrive.expect_tx on this CTA's full barrier, then the loads, a multicast one queued once
       per destination CTA (each completes on its own, in any order); every CTA a load writes
       must have had the stage's previous use released by both its consumers */
    void load(int tile, int kt, int s)
    {
        jitter(rng);
        std::unique_lock<std::mutex> lk(c.mu);
        const int b = s % c.ring, use = c.ctas[rank].used[b]++;
        const typename C::Loads l(c.p, c.g, tile, kt, rank);
        if (c.ctas[rank].full[b].phase != (unsigned)use) c.fail("a producer arrived on a full barrier's other phase");
        uint32_t own = 0; /* the broken protocol's expectation: this CTA's loads only */
        for (int i = 0; i < l.COPIES; i++)
            if (l.on(i)) own += model_box_bytes(c.mi, c.mt, l.copy(c.p, c.g, i));
        c.ctas[rank].full[b].expect_tx(c.proto == PROTO_OWN_BYTES ? own : l.bytes);
        if (!c.ctas[rank].full[b].arrive(1)) c.fail("more arrivals on full than it counts");
        for (int i = 0; i < l.COPIES; i++) {
            if (!l.on(i)) continue;
            const igemm_tma_copy cp = l.copy(c.p, c.g, i);
            if (cp.multicast != (cp.into_b && C::CL > 1)) c.fail("a load multicast that is not the shared B, or B not multicast");
            for (int d = 0; d < C::CL; d++) {
                if (d != rank && !cp.multicast) continue;
                if (c.ctas[d].released[b] < Tile::RELEASERS * use) c.fail("a stage refilled before the consumers of every CTA it writes released it");
                c.jobs.push_back({d, rank, b, use, tile, kt, i});
            }
        }
        c.cv.notify_all();
    }
};

/* The TMA engine: completes the queued loads in random order, each into its destination CTA. */
template <class Tile, typename T, bool WGRAD> void emu_tma(cluster_run<Tile, T, WGRAD> &c, unsigned seed)
{
    typedef cluster_run<Tile, T, WGRAD> C;
    std::minstd_rand rng(seed);
    for (;;) {
        jitter(rng);
        std::unique_lock<std::mutex> lk(c.mu);
        c.wait(lk, [&] { return !c.jobs.empty() || c.producing == 0; });
        if (c.error || c.jobs.empty()) return;
        const size_t pick = rng() % c.jobs.size();
        const auto j = c.jobs[pick];
        c.jobs.erase(c.jobs.begin() + (long)pick);
        typename C::cta &d = c.ctas[j.dst];
        if (d.readers[j.stage]) c.fail("a TMA load overwrote a stage a pending wgmma reads");
        /* the phase the load belongs to must be the barrier's current one (ISA: complete_tx
           counts toward the current phase) */
        if (d.full[j.stage].phase != (unsigned)j.use) c.fail("a load completed on a full barrier's other phase");
        const igemm_tma_copy cp = typename C::Loads(c.p, c.g, j.tile, j.kt, j.src).copy(c.p, c.g, j.copy);
        uint8_t *dst = &d.smem[C::BASE + (cp.into_b ? C::Shape::b_stage(j.stage) : C::Shape::a_stage(j.stage)) + cp.off];
        uint32_t bytes;
        if (!model_copy(c.mi, c.mt, cp, dst, &bytes)) c.fail("a load the TMA refuses (model_copy)");
        d.tag[j.stage][0] = j.tile - j.src + j.dst, d.tag[j.stage][1] = j.kt; /* the destination's unit: its pair's */
        d.full[j.stage].complete_tx(bytes);
        c.cv.notify_all();
    }
}

template <class Tile, typename T, bool WGRAD> struct emu_consumer {
    typedef cluster_run<Tile, T, WGRAD> C;
    typedef typename C::Shape Shape;
    C &c;
    int rank, wg;
    std::minstd_rand rng;
    bool wgmma_ok = true;

    int nkt(int t) const
    {
        return c.nkt(t);
    }
    typename C::cta &me()
    {
        return c.ctas[rank];
    }
    float (*acc(int t))[Tile::BN / 2]
    {
        return (float(*)[Tile::BN / 2]) & me().d[wg][(size_t)t * Tile::MI * (Tile::BN / 2)];
    }
    void wait_full(int s, unsigned parity)
    {
        jitter(rng);
        std::unique_lock<std::mutex> lk(c.mu);
        c.wait(lk, [&] { return me().full[s % c.ring].passed(parity); });
    }
    void zero()
    {
        std::fill(me().d[wg].begin(), me().d[wg].end(), 0.f);
    }
    /* ping-pong turns: named barrier wg, which the other consumer's turn_pass arrives on (one
       arrival at a time: a second before this one's wait would be a barrier overrun) */
    void turn_wait()
    {
        jitter(rng);
        std::unique_lock<std::mutex> lk(c.mu);
        const int want = ++me().waits[wg];
        if (c.proto != PROTO_NO_TURNS) c.wait(lk, [&] { return me().passes[wg] >= want; });
        me().turn = wg;
    }
    void turn_pass()
    {
        jitter(rng);
        std::unique_lock<std::mutex> lk(c.mu);
        const int o = 1 - wg;
        /* the broken protocol's worst schedule, so that catching it does not hang on timing: the
           holder passes only once the other consumer, not waiting, has taken the turn itself */
        if (c.proto == PROTO_NO_TURNS) c.wait(lk, [&] { return me().turn != wg; });
        if (me().turn != wg) c.fail("a turn passed by a consumer that did not hold it");
        if (++me().passes[o] > me().waits[o] + 1) c.fail("a turn passed twice before the other consumer took it");
        me().turn = o;
        c.cv.notify_all();
    }
    void mma(int s)
    {
        std::unique_lock<std::mutex> lk(c.mu);
        if (Tile::PP && me().turn != wg) c.fail("the ping-pong consumers' mainloops interleave");
        const int b = s % c.ring;
        me().readers[b]++;
        me().pending[wg].push_back(b);
        me().order[wg].push_back({me().tag[b][0], me().tag[b][1]});
    }
    /* wgmma.wait_group N: the groups beyond the N newest complete, reading their stage now */
    template <int N> void mma_wait()
    {
        jitter(rng);
        std::unique_lock<std::mutex> lk(c.mu);
        while ((int)me().pending[wg].size() > N) {
            const int b = me().pending[wg].front();
            me().pending[wg].pop_front();
            static thread_local std::vector<float> slice;
            slice.resize((size_t)128 * (Tile::BN / 2));
            for (int mi = 0; mi < Tile::MI; mi++) {
                for (int t = 0; t < 128; t++)
                    memcpy(&slice[(size_t)t * (Tile::BN / 2)], acc(t)[mi], sizeof(float) * (Tile::BN / 2));
                for (int ks = 0; ks < Shape::SA::BK / Shape::SA::KSTEP; ks++)
                    wgmma_ok = wgmma_ok && emu_wgmma_ss<T, Tile::BN, Shape::SA::MN>((float(*)[Tile::BN / 2])slice.data(),
                                                                            me().smem,
                                                                            Shape::desc_a(C::BASE, b, Tile::slice(wg) * Tile::MI + mi, ks),
                                                                            Shape::desc_b(C::BASE, b, ks), true);
                for (int t = 0; t < 128; t++)
                    memcpy(acc(t)[mi], &slice[(size_t)t * (Tile::BN / 2)], sizeof(float) * (Tile::BN / 2));
            }
            me().readers[b]--;
        }
    }
    /* the arrivals of the 128 threads the kernel's igemm_tma_releases lets arrive (each warp's
       lane 0) on the stage's empty barrier of every CTA of the cluster (the kernel's
       mapa + remote arrive), or of this one only in the broken protocol */
    void release(int s)
    {
        jitter(rng);
        std::unique_lock<std::mutex> lk(c.mu);
        const int b = s % c.ring;
        for (int q : me().pending[wg])
            if (q == b) c.fail("a stage released while a wgmma reading it is pending");
        unsigned arrivals = 0;
        for (int t = 0; t < 128; t++) arrivals += igemm_tma_releases(t & 31);
        for (int d = 0; d < C::CL; d++)
            if ((d == rank || c.proto != PROTO_LOCAL_RELEASE) && !c.ctas[d].empty[b].arrive(arrivals))
                c.fail("more arrivals on empty than it counts");
        me().released[b]++;
        c.cv.notify_all();
    }
    /* the epilogue of the unit's tile: the staged one warp by warp, its 32 lanes in lockstep
       between the kernel's __syncwarp()s, each warp's buffer poisoned with NaN first (a flush
       of a float no put wrote fails part 3); else igemm_wgmma_store, thread by thread */
    void store(int tile)
    {
        std::unique_lock<std::mutex> lk(c.mu);
        const igemm_tma_unit u = igemm_tma_unit_at(c.g, tile, Tile::BM, Tile::BN);
        if (c.g.staged) {
            typedef igemm_tma_staged<Tile, T> E;
            if constexpr (!igemm_tma_launch<Tile, T, WGRAD>::STAGED_OK)
                return c.fail("a staged epilogue planned on a tile without one");
            else for (int w = 0; w < 4; w++) {
                unsigned char *buf = &me().smem[C::BASE + C::L::STAGING + (wg * 4 + w) * E::WARP_BYTES];
                std::fill(buf, buf + E::WARP_BYTES, 0xff);
                typename E::lane lanes[32];
                for (int ln = 0; ln < 32; ln++) lanes[ln].d = acc(w * 32 + ln);
                igemm_tma_store_staged<Tile, T>(c.p, u.m0, u.n0, wg, w, buf, [&](auto f) {
                    for (int ln = 0; ln < 32; ln++) f(ln, lanes[ln]);
                });
            }
            return;
        }
        for (int t = 0; t < 128; t++)
            igemm_wgmma_store<Tile, T>(c.p, *(const float(*)[Tile::MI][Tile::BN / 2])acc(t), u.m0, u.n0, 0, u.split,
                                       Tile::slice(wg), t);
    }
};

/* Runs the cluster whose CTA of rank 0 is `first` in a grid of `grid` CTAs on threads (a
   producer and the tile's consumers per CTA, one TMA engine); ring < STAGES makes the broken ring,
   proto a broken cluster protocol. NULL or what went wrong. */
template <class Tile, typename T, bool WGRAD>
const char *run_cluster(const igemm_params &p, const igemm_tma_geom &g, int first, int grid, int ring,
                        cluster_protocol proto, unsigned seed)
{
    typedef cluster_run<Tile, T, WGRAD> C;
    C c(p, g, (int)sizeof(T), first, grid, ring, proto);
    std::vector<emu_producer<Tile, T, WGRAD>> prods;
    std::vector<emu_consumer<Tile, T, WGRAD>> cons;
    for (int r = 0; r < C::CL; r++) {
        prods.push_back({c, r, std::minstd_rand(seed + 5 * r)});
        for (int w = 0; w < C::CW; w++) cons.push_back({c, r, w, std::minstd_rand(seed + 5 * r + 1 + w)});
    }
    std::thread tma(emu_tma<Tile, T, WGRAD>, std::ref(c), seed + 3);
    std::vector<std::thread> threads;
    for (emu_consumer<Tile, T, WGRAD> &cs : cons) {
        emu_consumer<Tile, T, WGRAD> *o = &cs;
        threads.emplace_back([o, &g, first, grid] {
            ocd_wgmma_ring_consume<Tile::STAGES, Tile::PP ? 2 : 1>(*o, first + o->rank, grid, g.units, Tile::PP ? o->wg : 0);
        });
    }
    for (emu_producer<Tile, T, WGRAD> &pr : prods) {
        emu_producer<Tile, T, WGRAD> *o = &pr;
        threads.emplace_back([o, &c, &g, first, grid] {
            ocd_wgmma_ring_produce<Tile::STAGES>(*o, first + o->rank, grid, g.units);
            std::unique_lock<std::mutex> lk(c.mu);
            c.producing--;
            c.cv.notify_all();
        });
    }
    for (std::thread &t : threads) t.join();
    tma.join();
    if (c.error) return c.error;
    for (auto &cs : cons)
        if (!cs.wgmma_ok) return "a descriptor is malformed or reads outside shared memory";
    for (int r = 0; r < C::CL; r++)
        for (int i = 0; i < C::CW; i++) {
            size_t n = 0;
            const std::vector<std::pair<int, int>> &order = c.ctas[r].order[i];
            for (int t = first + r, j = 0; t < g.units; t += grid, j++)
                for (int kt = 0; kt < c.nkt(t) && (!Tile::PP || j % 2 == i); kt++, n++)
                    if (n >= order.size() || order[n] != std::make_pair(t, kt))
                        return "a K tile multiplied out of order, twice, or not at all";
            if (n != order.size()) return "more K tiles multiplied than the CTA's";
            if (c.ctas[r].passes[i] != c.ctas[r].waits[i]) return "a ping-pong turn passed and never taken, or taken unpassed";
        }
    return NULL;
}

/* ---- running a case --------------------------------------------------------------------------- */

/* Runs plan pl of problem p (a case's, or one stride phase ph of it) as the GPU would: the
   workspace copies, part 1 (the maps; the stages against the cp.async loaders of plan cp where
   not NULL), part 2 (the persistent grid, cluster by cluster: the launch's SMs rounded down to
   whole clusters) and the reduction of split-K or the wide epilogue. NULL or what failed;
   *grid: the CTAs launched. */
template <class Tile, typename T, bool WGRAD>
const char *run_plan(const tma_case &e, const tma_problem<T> &tp, const emu_phase &ph, const struct ocd_conv_problem &p,
                     igemm_plan &pl, igemm_plan *cp, int *grid)
{
    if constexpr (igemm_tma_launch<Tile, T, WGRAD>::PINGPONG_OK) /* the launch's dispatch to the twin */
        if (pl.tma.pingpong)
            return run_plan<typename igemm_tma_pingpong_tile<Tile, T>::type, T, WGRAD>(e, tp, ph, p, pl, NULL, grid);
    if constexpr (WGRAD && sizeof(T) == 4 && Tile::KQ == 8) /* and to the k32 shape of 32 pixels a row */
        if (pl.tma.kq == 32) return run_plan<typename Tile::template with_kq<32>, T, WGRAD>(e, tp, ph, p, pl, cp, grid);
    if (WGRAD && sizeof(T) == 4 && pl.tma.kq != Tile::KQ) return "a k32 shape planned without its kernel";
    if ((pl.tma.pingpong != 0) != Tile::PP) return "ping-pong consumers planned on a tile without them";
    static char why[160];
    std::vector<uint8_t> ws(pl.ws_bytes + 256), wcp;
    uint8_t *wsa = (uint8_t *)(((uintptr_t)ws.data() + 255) & ~(uintptr_t)255);
    emu_igemm_copies<T>(pl, p, wsa);
    if (pl.prm.splits > 1 || pl.prm.epi.wide) pl.prm.epi.partial = (float *)(wsa + pl.ws_part);
    if (cp) {
        wcp.resize(cp->ws_bytes + 256);
        emu_igemm_copies<T>(*cp, p, (uint8_t *)(((uintptr_t)wcp.data() + 255) & ~(uintptr_t)255));
    }
    std::vector<uint8_t> smem(1024 + igemm_tma_smem<Tile, T, WGRAD>::BARS);
    if (const char *err = map_check<Tile, T, WGRAD>::run(e, tp, ph, pl, cp, smem)) {
        snprintf(why, sizeof why, "maps: %s", err);
        return why;
    }
    if (pl.tma.cluster != Tile::CL || pl.tma.units % Tile::CL != 0)
        return "the plan's cluster or units do not fit the tile's clusters";
    *grid = std::min(pl.tma.units, std::max(e.sm_count / Tile::CL, 1) * Tile::CL);
    /* the index maps (fast divisors) against division, on every unit and K tile */
    const igemm_tma_geom &g = pl.tma;
    for (int t = 0; t < g.units; t++) {
        const igemm_tma_unit u = igemm_tma_unit_at(g, t, Tile::BM, Tile::BN);
        const int split = t / g.tiles, rest = t % g.tiles, kt0 = split * g.nkt;
        if (u.split != split || u.m0 != rest % g.tiles_m * Tile::BM || u.n0 != rest / g.tiles_m * Tile::BN ||
            u.kt0 != kt0 || u.nkt != std::min(g.nkt, g.ktiles - kt0))
            return "a unit's index map differs from the divided one";
    }
    for (int kb = 0; kb < std::max(g.ktiles, g.cblocks * pl.prm.R * pl.prm.S); kb++) {
        const igemm_tma_k k = igemm_tma_ktile(pl.prm, g, kb);
        const int tap = kb / g.cblocks, r = tap / pl.prm.S, s = tap % pl.prm.S;
        const int fr = pl.prm.flip ? pl.prm.R - 1 - r : r, fs = pl.prm.flip ? pl.prm.S - 1 - s : s;
        if (k.tap != tap || k.c0 != kb % g.cblocks * g.bk || k.ow != fs * pl.prm.dw || k.oh != fr * pl.prm.dh)
            return "a K tile's index map differs from the divided one";
    }
    for (int cta = 0; cta < *grid; cta += Tile::CL)
        if (const char *err = run_cluster<Tile, T, WGRAD>(pl.prm, g, cta, *grid, Tile::STAGES, PROTO_KERNEL,
                                                          1234u + 7u * cta)) {
            snprintf(why, sizeof why, "CTA %d: %s", cta, err);
            return why;
        }
    if (pl.prm.epi.partial)
        igemm_reduce_all<T>(pl.prm);
    emu_igemm_copy_out<T>(pl);
    return NULL;
}

/* Part 3: the case's output (y, dx or dw) against tp.want; false (a line) where an element is
   off, else the largest error in *worst (relative; fp32 data: as a share of the TF32 bound). */
template <typename T> bool check_output(const tma_case &e, const tma_problem<T> &tp, double *worst)
{
    /* fp32 data as TF32: the tests' TF32 tolerance (tconv_tolerance: half's, 4x), and each error
       within 2^-9 of the sum of its terms' magnitudes (tests/conv_fidelity.c's TF32_BOUND: two
       operands cut to 10 mantissa bits) plus the fp32 sum's rounding */
    const bool tf32 = sizeof(T) == 4;
    const double tol = tf32 ? 4e-2 : 1e-2, bound = 1.0 / 512 + 1.0 / (1 << 20);
    *worst = 0;
    const std::vector<T> &out = e.wgrad ? tp.w : e.dgrad ? tp.x : tp.y;
    const struct ocd_tensor_view &ov = e.wgrad ? tp.p.w : e.dgrad ? tp.p.x : tp.p.y;
    const char *const oname = e.wgrad ? "dw" : e.dgrad ? "dx" : "y";
    const long on = e.wgrad ? e.k : e.n, oc = e.dgrad || e.wgrad ? e.c : e.k;
    const long oh = e.wgrad ? e.r : e.dgrad ? e.h : tp.P, ow = e.wgrad ? e.s : e.dgrad ? e.w : tp.Q;
    for (long n = 0, i = 0; n < on; n++)
        for (long k = 0; k < oc; k++)
            for (long h = 0; h < oh; h++)
                for (long w = 0; w < ow; w++, i++) {
                    const double got = ocd_cuda_load(&out[at(ov, n, k, h, w)]);
                    const double err = fabs(got - tp.want[i]) / fmax(1.0, fabs(tp.want[i]));
                    if (!(err <= tol) || (tf32 && !(fabs(got - tp.want[i]) <= bound * tp.mag[i]))) {
                        printf("FAIL %s: %s(%ld, %ld, %ld, %ld) = %.9g, want %.9g\n", e.name, oname, n, k, h, w, got,
                               tp.want[i]);
                        return false;
                    }
                    *worst = fmax(*worst, tf32 ? fabs(got - tp.want[i]) / (bound * tp.mag[i] + 1e-300) : err);
                }
    return true;
}

/* The cp.async kernel's tile whose plan gives its loaders' parameters for TMA tile Tile: the
   one of Tile's shape, or for a shape it has not (256x64) its last (128x64): the loaders'
   parameters do not depend on the tile, only its plan's declining does. */
template <class Tile> constexpr int cp_tile()
{
#define X(i, bm, bn, st) Tile::BM == bm && Tile::BN == bn ? WGMMA_TILE0 + i:
    return OCD_IGEMM_WGMMA_TILES(X) WGMMA_TILE0 + OCD_IGEMM_WGMMA_NTILES - 1;
#undef X
}

template <class Tile, typename T, bool WGRAD> bool run_tile_case(const tma_case &e)
{
    tma_problem<T> tp(e);
    igemm_plan pl;
    bool passed;
    const bool tf32 = std::is_same<T, float>::value;
    if (e.no_clusters) setenv("OPENCUDNN_TEST_CLUSTERS", "0", 1);
    const bool planned = emu_igemm_plan(e.name, e.declines, e.sm_count, tp.p, TMA_TILE0 + e.tile, tf32, &pl, &passed);
    setenv("OPENCUDNN_TEST_CLUSTERS", EMU_TMA_CLUSTERS, 1);
    if (!planned) return passed;
    /* the cp.async kernel's loaders of the same tile where C % 64 == 0 */
    igemm_plan cp;
    /* the cp.async kernel's backward data gathers differently; it has no 64-row tile, no TF32 filter gradient */
    const bool compare = e.c % 64 == 0 && !e.dgrad && Tile::BM > 64 && !(WGRAD && tf32);
    /* (on one multiprocessor: the loaders do not depend on the grid, and the cp.async tiles
       decline grids of fewer tiles than multiprocessors, where the TMA tiles take two thirds) */
    if (compare && !emu_igemm_plan(e.name, NULL, 1, tp.p, cp_tile<Tile>(), tf32, &cp, &passed)) return false;
    /* the staged epilogue wherever the tile has it and y (dx) is NHWC, its columns contiguous, or
       NCHW under the plain epilogue (through packed NHWC in the workspace: plan_out); with it the
       ping-pong twin wherever the tile has one (conv_igemm.cu's pingpong_wanted) */
    const bool plain = !e.bias_relu && e.beta == 0;
    const bool staged = igemm_tma_launch<Tile, T, WGRAD>::STAGED_OK && (!e.nchw || plain);
    if (pl.copy_out.on != (staged && e.nchw)) {
        printf("FAIL %s: the plan %s the output through the workspace\n", e.name,
               pl.copy_out.on ? "takes" : "does not take");
        return false;
    }
    const bool pingpong = staged && igemm_tma_launch<Tile, T, WGRAD>::PINGPONG_OK;
    if ((pl.tma.staged != 0) != staged || (pl.tma.pingpong != 0) != pingpong) {
        printf("FAIL %s: the plan %s the staged epilogue or ping-pong\n", e.name, staged ? "does not choose" : "chooses");
        return false;
    }
    /* the plain epilogue form (alpha alone) exactly where the case has no beta, bias or ReLU, the
       bias form where it has a bias and ReLU and no beta (the ReLU gradient: the whole form) */
    const int form = e.beta == 0 && !e.bias_relu ? IGEMM_EPI_PLAIN
                     : e.beta == 0 && !e.dgrad   ? IGEMM_EPI_BIAS
                                                 : IGEMM_EPI_WHOLE;
    if (pl.prm.epi.form != form) {
        static const char *const names[] = {"whole", "plain", "bias"};
        printf("FAIL %s: the plan's epilogue form is %s, not %s\n", e.name, names[pl.prm.epi.form], names[form]);
        return false;
    }
    int grid = 0;
    if (const char *err = run_plan<Tile, T, WGRAD>(e, tp, emu_phase(e, 0), tp.p, pl, compare ? &cp : NULL, &grid)) {
        printf("FAIL %s: %s\n", e.name, err);
        return false;
    }
    double worst;
    if (!check_output(e, tp, &worst)) return false;
    printf("ok   %s: %d %s x %d splits on %d CTAs (clusters of %d), %d K tiles each%s%s, largest error %.2g%s\n",
           e.name, pl.tma.tiles, pingpong ? "ping-pong units" : "tiles", pl.prm.splits, grid, Tile::CL, pl.tma.nkt,
           compare && !pingpong ? ", stages as the cp.async loaders'" : "", staged ? ", staged epilogue" : "", worst,
           tf32 ? " of the TF32 bound" : "");
    return true;
}

/* Strided backward data through the phases entry's plan and run (phases_plan, phases_run): where
   the plan stages them (stage_problem), dy copied channels-last and dx computed into a
   channels-last buffer poisoned with NaN; dx zeroed first where phases_zero_first says so (not
   where every phase has taps: dx's poison must then be overwritten), then each phase with taps
   on the TMA tile the plan chose (its plan made again, as phases_run does), a phase without taps
   scaled by beta on the host (igemm_scale_view's job); a staged dx then blended into the
   caller's with beta on the host (the elementwise engine's job); the whole dx against
   tests/ref's strided backward data. */
template <typename T> bool run_phases_case(const tma_case &e)
{
    tma_problem<T> tp(e);
    struct cudnnContext ctx = emu_handle(9, e.sm_count);
    igemm_phases_plan pp;
    const bool tf32 = std::is_same<T, float>::value;
    const char *why = phases_plan(&ctx, &tp.p, tf32, true, &pp);
    if (e.declines || why) {
        const bool ok = e.declines && why && strstr(why, e.declines);
        printf("%s %s: the plan declines: %s\n", ok ? "ok  " : "FAIL", e.name, why ? why : "(it plans)");
        return ok;
    }
    struct ocd_conv_problem run = tp.p; /* what the phases run: tp.p, or its staged copies */
    std::vector<uint8_t> stage(pp.staged ? pp.stage_bytes + 256 : 0);
    if (pp.staged) {
        stage_problem(&tp.p, (int)sizeof(T), (char *)(((uintptr_t)stage.data() + 255) & ~(uintptr_t)255), &run);
        for (long n = 0; n < e.n; n++)
            for (long k = 0; k < e.k; k++)
                for (long h = 0; h < tp.P; h++)
                    for (long w = 0; w < tp.Q; w++)
                        ((T *)run.y_data)[at(run.y, n, k, h, w)] = ((const T *)tp.p.y_data)[at(tp.p.y, n, k, h, w)];
        if (run.x_data != tp.p.x_data) std::fill((T *)run.x_data, (T *)run.x_data + tp.x.size(), T(NAN));
    }
    const bool zeroed = phases_zero_first(&run, &pp);
    if (zeroed) std::fill((T *)run.x_data, (T *)run.x_data + tp.x.size(), T(0.f));
    int ran = 0, scaled = 0, staged = 0;
    size_t ws_sum = pp.staged ? pp.stage_bytes + 256 : 0;
    bool tiles[OCD_IGEMM_TMA_ALL_TILES] = {};
    for (int ph = 0; ph < phase_count(&run); ph++) {
        struct ocd_conv_problem sub;
        bool taps, pixels;
        phase_problem(&run, ph, (int)sizeof(T), &sub, &taps, &pixels);
        const emu_phase want(e, ph);
        if (sub.s.filt[0] != (int64_t)want.taps[0].size() || sub.s.filt[1] != (int64_t)want.taps[1].size() ||
            sub.s.in[0] != want.px[0] || sub.s.in[1] != want.px[1]) {
            printf("FAIL %s: phase %d: its taps or pixels differ from the definition's\n", e.name, ph);
            return false;
        }
        if (!pixels) continue;
        if (!taps) {
            for (long n = 0; n < e.n && !zeroed; n++)
                for (long c = 0; c < e.c; c++)
                    for (long h = 0; h < sub.s.in[0]; h++)
                        for (long w = 0; w < sub.s.in[1]; w++) {
                            T *x = (T *)sub.x_data + at(sub.x, n, c, h, w);
                            *x = T((float)(run.beta * ocd_cuda_load(x)));
                        }
            scaled++;
            continue;
        }
        igemm_plan pl;
        const int tile = pp.tile[ph];
        if ((why = make_plan(&ctx, &sub, tile, tf32, &pl)) != NULL) {
            printf("FAIL %s: phase %d: not planned on its tile: %s\n", e.name, ph, why);
            return false;
        }
        if ((pl.tma.staged != 0) != (ocd_igemm_tma_staged[tile - TMA_TILE0] && channels_inner(&run.x))) {
            printf("FAIL %s: phase %d: the staged epilogue chosen where the tile has none, or not where it has\n", e.name, ph);
            return false;
        }
        staged += pl.tma.staged != 0;
        int grid = 0;
        const char *err = "not planned on an unclustered forward TMA tile";
#define WIDE(i, bm, bn, st)                                                                         \
    if (tile == TMA_TILE0 + i) err = run_plan<igemm_tma_tile<bm, bn, st>, T, false>(e, tp, want, sub, pl, NULL, &grid);
#define NARROW(i, bm, bn, st)                                                                       \
    if (tile == TMA_NARROW_TILE0 + i) err = run_plan<igemm_tma_tile<bm, bn, st>, T, false>(e, tp, want, sub, pl, NULL, &grid);
        OCD_IGEMM_TMA_TILES(WIDE)
        OCD_IGEMM_TMA_NARROW_TILES(NARROW)
#undef NARROW
#undef WIDE
        if (err) {
            printf("FAIL %s: phase %d: %s\n", e.name, ph, err);
            return false;
        }
        ran++;
        tiles[tile - TMA_TILE0] = true;
        ws_sum += pl.ws_bytes;
    }
    /* the TMA phases are chained (phases_run): a part of the workspace each, after the staging's */
    if (!pp.chained || pp.ws_bytes != ws_sum) {
        printf("FAIL %s: the phases not chained, or a workspace of %zu bytes for phases (and staging) of %zu\n", e.name,
               pp.ws_bytes, ws_sum);
        return false;
    }
    if (run.x_data != tp.p.x_data)
        for (long n = 0; n < e.n; n++)
            for (long c = 0; c < e.c; c++)
                for (long h = 0; h < e.h; h++)
                    for (long w = 0; w < e.w; w++) {
                        T *x = (T *)tp.p.x_data + at(tp.p.x, n, c, h, w);
                        const float v = ocd_cuda_load((const T *)run.x_data + at(run.x, n, c, h, w));
                        *x = T(e.beta != 0 ? v + (float)(e.beta * ocd_cuda_load(x)) : v);
                    }
    double worst;
    if (!check_output(e, tp, &worst)) return false;
    std::string on;
    for (int t = 0; t < OCD_IGEMM_TMA_ALL_TILES; t++)
        if (tiles[t]) on += (on.empty() ? "" : ",") + std::to_string(t);
    printf("ok   %s: %d phases on the TMA kernel (tiles %s, %d with the staged epilogue), %d without taps%s%s, largest "
           "error %.2g%s\n",
           e.name, ran, on.c_str(), staged, scaled, zeroed ? " (dx zeroed first)" : "",
           pp.staged ? " on channels-last copies" : "", worst, tf32 ? " of the TF32 bound" : "");
    return true;
}

/* The case's tile, make_plan's less TMA_TILE0: OCD_IGEMM_TMA_TILES' 0 and 1, then
   OCD_IGEMM_TMA_C2_TILES' as 2 and 3, OCD_IGEMM_TMA_W64_TILES' as 4 and 5 (the filter
   gradient's) and OCD_IGEMM_TMA_NARROW_TILES' as 6 to 8 (the forward pass's and backward
   data's): a case those do not take only declines at the plan, whatever tile type runs it
   (Any). */
template <typename T, bool WGRAD> bool run_case_dir(const tma_case &e)
{
    typedef igemm_tma_tile<128, 256, 4> Any;
    const int tile = TMA_TILE0 + e.tile;
#define WIDE(i, bm, bn, st)                                                                         \
    if (tile == TMA_TILE0 + i) return run_tile_case<igemm_tma_tile<bm, bn, st>, T, WGRAD>(e);
#define C2(i, bm, bn, st)                                                                           \
    if (tile == TMA_C2_TILE0 + i) return run_tile_case<igemm_tma_tile<bm, bn, st, 2>, T, WGRAD>(e);
#define W64(i, bm, bn, st)                                                                          \
    if (tile == TMA_W64_TILE0 + i) {                                                                \
        if constexpr (WGRAD) return run_tile_case<igemm_tma_tile<bm, bn, st>, T, true>(e);          \
        else return run_tile_case<Any, T, false>(e);                                                \
    }
#define NARROW(i, bm, bn, st)                                                                       \
    if (tile == TMA_NARROW_TILE0 + i) {                                                             \
        if constexpr (!WGRAD) return run_tile_case<igemm_tma_tile<bm, bn, st>, T, false>(e);        \
        else return run_tile_case<Any, T, WGRAD>(e);                                                \
    }
    OCD_IGEMM_TMA_TILES(WIDE)
    OCD_IGEMM_TMA_C2_TILES(C2)
    OCD_IGEMM_TMA_W64_TILES(W64)
    OCD_IGEMM_TMA_NARROW_TILES(NARROW)
#undef NARROW
#undef W64
#undef C2
#undef WIDE
    printf("FAIL %s: no TMA tile %d\n", e.name, e.tile);
    return false;
}
template <typename T> bool run_case(const tma_case &e)
{
    if (e.phases) return run_phases_case<T>(e);
    return e.wgrad ? run_case_dir<T, true>(e) : run_case_dir<T, false>(e);
}

} // namespace

#endif /* OCD_EMULATE_CONV_IGEMM_TMA_RUN_H */
