/* conv_stem.cu (emulation): the few-channel convolution kernels (src/cuda/conv_stem.cu, entries
   cuda:fwd_stem_tc_128x64 and cuda:wgrad_stem_tc_64x256 with its reduction, and
   src/cuda/conv_stem_dgrad.cu, entry cuda:dgrad_stem_tc_128x8) with
   every thread's own logic run on the CPU, against the double-precision reference convolutions
   of tests/ref: each plan (on a handle of compute capability 9.0),
   its binding to the call's data, and the kernel as launched: a grid of a few CTAs, each looping
   over the tiles as the kernel does, its phases run thread by thread between the barriers (the
   filter, and forward the offset table; the input or dy patch; forward the im2col expansion),
   each warp's products through the kernel's ldmatrix addresses (ocd_mma_kmajor_a_addr,
   ocd_mma_kmajor_b_addr; for the tf32 filter gradient the kernel's own word reads) and fragment
   words, with ldmatrix and mma.sync m16n8k16 and m16n8k8 (tf32) emulated from the PTX ISA
   (mma_emulate.h), and each lane's store. Shared memory starts poisoned (all bits set: NaN in
   every type), so that a read of what no phase wrote shows in the results. For float data every
   fragment word fed to the tensor cores must be a tf32 value (rounded as it was copied), and
   each result must lie within the bound that rounding the operands to tf32 allows (2^-10 of
   the reference on the operands' magnitudes); 16-bit results within 1e-2 relative.

   Forward cases: C = 3, 1, 4 and 5; 7x7 stride 2 pad 3 (the stem), 3x3 stride 1, 5x5 pad 0,
   3x3 dilation 2; odd output sizes and partial tiles in rows, columns and filters (K 72: two
   filter blocks); NHWC and NCHW activations with KRSC and KCRS filters; CONVOLUTION mode; alpha
   and beta; the fused epilogue (bias + ReLU, with z; a scale of y's type on the product and z,
   the bias and ELU: on the typed store's FUSED kernel with OPENCUDNN_UNPROVEN=1, through
   conv_store.cuh's wide store without it); one CTA and several. Backward data: the
   stem NHWC (the patch by 16-byte chunks) and NCHW (by elements, channel-major) with
   CONVOLUTION mode, alpha and beta; K not a multiple of 8 (by elements, pixel-major); 5x5
   dilation 2; a 1x1 filter with stride 2 (phases without taps: beta x dx); C = 7, stride 3. The
   filter gradient: the stem NHWC and NCHW (CONVOLUTION mode, alpha and beta, two filter blocks),
   one tile, 5x5 dilation 2, over the plan's grid with partials poisoned (NaN) first. Float
   (TF32) cases of all three: the stem NHWC and NCHW, two filter blocks, alpha and beta,
   CONVOLUTION mode, the fused epilogue, dilation, C = 1 and 7, DEFAULT and TENSOR_OP math. The
   plans must decline under FMA math (fp16 and float), for C a
   multiple of 8 (forward) or 8 and more (backward), for C R S above 256, a stride above 4
   (backward), and what does not fit in shared memory (backward data: float C = 4 with the
   stem's 7x7 and K = 64). Prints a line per case; exits 1 if any fails. */
#include "cuda/conv_stem.cu"
#include "cuda/conv_stem_dgrad.cu"

extern "C" {
#include "ref/conv.h"
}

#include "../ref/pointwise.c"
#include "conv_emulate.h"
#include "emu_handle.h"
#include "mma_emulate.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

/* ---- the launch, thread by thread -------------------------------------------------------------- */

/* Fragment words fed to a tf32 mma with any of the 13 mantissa bits below tf32 set: every
   element must have been rounded (cvt.rna) as it was copied into shared memory. */
long unrounded;

/* mma.sync as the kernels issue it (mma_emulate.h), counting the unrounded tf32 words. */
template <typename T> void mma_op(float c[32][4], const uint32_t a[32][4], const uint32_t b[32][2])
{
    if (sizeof(T) == 4)
        for (int l = 0; l < 32; l++) {
            for (int r = 0; r < 4; r++) unrounded += (a[l][r] & 0x1fffu) != 0;
            for (int r = 0; r < 2; r++) unrounded += (b[l][r] & 0x1fffu) != 0;
        }
    mma<T>(c, a, b);
}

/* One warp's products (stem_mma) from the emulated ldmatrix and mma.sync. */
template <typename T, int MI = stem_geo<T>::MI>
void warp_mma(float acc[32][MI][STEM_NI][4], const T *sa, const T *sb, const stem_params &m, int wm, int wn)
{
    memset(acc, 0, sizeof(float) * 32 * MI * STEM_NI * 4);
    for (int k0 = 0; k0 < m.kp; k0 += stem_geo<T>::KSTEP) {
        static uint32_t af[MI][32][4], bf[STEM_NI / 2][32][4];
        const void *addr[32];
        for (int i = 0; i < MI; i++) {
            for (int l = 0; l < 32; l++) addr[l] = ocd_mma_kmajor_a_addr(sa, m.ld, wm + i * 16, k0, l);
            ldmatrix_x4(af[i], addr, false);
        }
        for (int j = 0; j < STEM_NI / 2; j++) {
            for (int l = 0; l < 32; l++) addr[l] = ocd_mma_kmajor_b_addr(sb, m.ld, wn + j * 16, k0, l);
            ldmatrix_x4(bf[j], addr, false);
        }
        for (int i = 0; i < MI; i++)
            for (int j = 0; j < STEM_NI; j++) {
                float c[32][4];
                uint32_t b[32][2];
                for (int l = 0; l < 32; l++) {
                    b[l][0] = bf[j / 2][l][(j % 2) * 2], b[l][1] = bf[j / 2][l][(j % 2) * 2 + 1];
                    memcpy(c[l], acc[l][i][j], sizeof c[l]);
                }
                mma_op<T>(c, af[i], b);
                for (int l = 0; l < 32; l++) memcpy(acc[l][i][j], c[l], sizeof c[l]);
            }
    }
}

/* stem_fwd_kernel on a grid of `ctas` x kblocks CTAs. */
template <typename T> void emulate_launch(const stem_params &m, int kblocks, int ctas)
{
    typedef typename ocd_stem_elem<T>::raw R;
    std::vector<uint4> raw((size_t)(m.smem + 15) / 16);
    unsigned char *smem = (unsigned char *)raw.data();
    R *sb = (R *)smem, *sa = (R *)(smem + m.off_a), *patch = (R *)(smem + m.off_patch);
    int *koff = (int *)(smem + m.off_koff);
    static float acc[32][stem_geo<T>::MI][STEM_NI][4];
    for (int kb = 0; kb < kblocks; kb++)
        for (int b = 0; b < ctas; b++) {
            memset(smem, 0xff, (size_t)m.smem);
            for (int tid = 0; tid < STEM_THREADS; tid++) {
                stem_load_filter<T>(m, sb, kb, tid);
                stem_load_offsets(m, koff, tid);
            }
            for (int t = b; t < m.tiles; t += ctas) {
                const stem_tile tile = stem_tile_of(m, t);
                for (int tid = 0; tid < STEM_THREADS; tid++) stem_load_patch<T>(m, patch, tile, tid);
                for (int tid = 0; tid < STEM_THREADS; tid++) stem_im2col(m, patch, koff, sa, tid);
                for (int warp = 0; warp < STEM_THREADS / 32; warp++) {
                    const int wm = (warp % 4) * stem_geo<T>::WTM, wn = (warp / 4) * STEM_WTN;
                    warp_mma<T>(acc, (const T *)sa, (const T *)sb, m, wm, wn);
                    for (int lane = 0; lane < 32; lane++)
                        if (stem_fused(m)) stem_store<T, true>(m, acc[lane], tile, kb, wm, wn, lane);
                        else stem_store<T, false>(m, acc[lane], tile, kb, wm, wn, lane);
                }
            }
        }
}

/* One warp's A fragment and x4 B fragments of stem_wgrad_mma: the emulated ldmatrix.trans
   (16-bit) or the kernel's own word reads (tf32). */
template <typename T> void wgrad_frag_a(uint32_t af[32][4], const T *sd, int wm, int k0)
{
    const void *addr[32];
    for (int l = 0; l < 32; l++) {
        if constexpr (sizeof(T) == 4) stem_tf32_frag_a(af[l], sd, STEM_DLD, wm, k0, l);
        else addr[l] = ocd_mma_mnmajor_a_addr(sd, STEM_DLD, wm, k0, l);
    }
    if (sizeof(T) != 4) ldmatrix_x4(af, addr, true);
}
template <typename T> void wgrad_frag_b(uint32_t bf[32][4], const T *sa, int ld, int n0, int k0)
{
    const void *addr[32];
    for (int l = 0; l < 32; l++) {
        if constexpr (sizeof(T) == 4) stem_tf32_frag_b(bf[l], sa, ld, n0, k0, l);
        else addr[l] = ocd_mma_mnmajor_b_addr(sa, ld, n0, k0, l);
    }
    if (sizeof(T) != 4) ldmatrix_x4(bf, addr, true);
}

/* stem_wgrad_kernel on a grid of `grid` x kblocks CTAs (the plan's), then stem_wgrad_reduce:
   each warp's products (stem_wgrad_mma) from the emulated fragments and mma.sync. */
template <typename T> void emulate_wgrad(const stem_params &m, int kblocks, int grid)
{
    typedef typename ocd_stem_elem<T>::raw R;
    std::vector<uint4> raw((size_t)(m.smem + 15) / 16);
    unsigned char *smem = (unsigned char *)raw.data();
    R *sd = (R *)smem, *sa = (R *)(smem + m.off_a), *patch = (R *)(smem + m.off_patch);
    int *koff = (int *)(smem + m.off_koff);
    static float acc[8][32][STEM_WG_NI][4];
    for (int kb = 0; kb < kblocks; kb++)
        for (int b = 0; b < grid; b++) {
            memset(smem, 0xff, (size_t)m.smem);
            memset(acc, 0, sizeof acc);
            for (int tid = 0; tid < STEM_THREADS; tid++) stem_load_offsets(m, koff, tid);
            for (int t = b; t < m.tiles; t += grid) {
                const stem_tile tile = stem_tile_of(m, t);
                for (int tid = 0; tid < STEM_THREADS; tid++) stem_load_patch<T>(m, patch, tile, tid);
                for (int tid = 0; tid < STEM_THREADS; tid++) {
                    stem_im2col(m, patch, koff, sa, tid);
                    stem_load_dy<T>(m, sd, tile, kb, tid);
                }
                for (int warp = 0; warp < STEM_THREADS / 32; warp++) {
                    const int wm = (warp % 4) * 16, wn = (warp / 4) * (m.kp / 2);
                    for (int k0 = 0; k0 < m.bm; k0 += stem_geo<T>::KSTEP) {
                        static uint32_t af[32][4], bf[32][4];
                        wgrad_frag_a(af, (const T *)sd, wm, k0);
                        for (int j = 0; j < m.kp / 32; j++) {
                            wgrad_frag_b(bf, (const T *)sa, m.ld, wn + j * 16, k0);
                            for (int h = 0; h < 2; h++) {
                                float c[32][4];
                                uint32_t bb[32][2];
                                for (int l = 0; l < 32; l++) {
                                    bb[l][0] = bf[l][2 * h], bb[l][1] = bf[l][2 * h + 1];
                                    memcpy(c[l], acc[warp][l][2 * j + h], sizeof c[l]);
                                }
                                mma_op<T>(c, af, bb);
                                for (int l = 0; l < 32; l++) memcpy(acc[warp][l][2 * j + h], c[l], sizeof c[l]);
                            }
                        }
                    }
                }
            }
            for (int warp = 0; warp < STEM_THREADS / 32; warp++)
                for (int lane = 0; lane < 32; lane++)
                    stem_wgrad_partial(m, acc[warp][lane], kb * grid + b, (warp % 4) * 16, (warp / 4) * (m.kp / 2), lane);
        }
    for (int i = 0; i < m.k * m.crs; i++) stem_wgrad_finish<T>(m, grid, i);
}

/* dstem_kernel on a grid of `ctas` CTAs: each warp's products (dstem_mma) over every phase's taps
   from the emulated ldmatrix and mma.sync, its B fragment words read as the kernel reads them. */
template <typename T> void emulate_dgrad(const dstem_params &m, int ctas)
{
    typedef typename ocd_stem_elem<T>::raw R;
    const int kstep = 32 / (int)sizeof(T);
    std::vector<uint4> raw((size_t)(m.smem + 15) / 16);
    unsigned char *smem = (unsigned char *)raw.data();
    R *sb = (R *)smem, *patch = (R *)(smem + m.off_patch);
    for (int b = 0; b < ctas; b++) {
        memset(smem, 0xff, (size_t)m.smem);
        for (int tid = 0; tid < DSTEM_THREADS; tid++) dstem_load_filter<T>(m, sb, tid);
        for (int t = b; t < m.tiles; t += ctas) {
            const dstem_tile tile = dstem_tile_of(m, t);
            for (int tid = 0; tid < DSTEM_THREADS; tid++) dstem_load_patch<T>(m, patch, tile, tid);
            for (int ah = 0; ah < m.uh; ah++)
                for (int aw = 0; aw < m.uw; aw++)
                    for (int warp = 0; warp < DSTEM_THREADS / 32; warp++) {
                        float acc[32][4] = {};
                        for (int a = m.first_h[ah]; a < m.first_h[ah + 1]; a++)
                            for (int bb = m.first_w[aw]; bb < m.first_w[aw + 1]; bb++) {
                                const int r = m.tap_h[a] & 255, dr = m.tap_h[a] >> 8;
                                const int s = m.tap_w[bb] & 255, ds = m.tap_w[bb] >> 8;
                                const R *arow = patch + ((warp + dr) * m.pcol + ds) * m.ld;
                                for (int k0 = 0; k0 < m.kp; k0 += kstep) {
                                    static uint32_t af[32][4], bf[32][2];
                                    const void *addr[32];
                                    for (int l = 0; l < 32; l++) {
                                        addr[l] = ocd_mma_kmajor_a_addr(arow, m.ld, 0, k0, l);
                                        bf[l][0] = bf[l][1] = 0; /* the lanes of channels past C */
                                        if (l / 4 >= m.c) continue;
                                        const R *brow = sb + ((r * m.s + s) * m.c + l / 4) * m.ld + dstem_b_col<T>(l);
                                        memcpy(&bf[l][0], brow + k0, 4), memcpy(&bf[l][1], brow + k0 + kstep / 2, 4);
                                    }
                                    ldmatrix_x4(af, addr, false);
                                    mma_op<T>(acc, af, bf);
                                }
                            }
                        for (int lane = 0; lane < 32; lane++) dstem_store<T>(m, acc[lane], tile, ah, aw, warp, lane);
                    }
        }
    }
}

/* ---- cases ---------------------------------------------------------------------------------------- */

struct emu_case {
    const char *name;
    cudnnDataType_t dt;
    int n, c, k, h, w, r, s, pad, stride, dil;
    bool flip, nchw, bias_relu;
    double alpha, beta;
    int ctas;
    const char *declines = NULL; /* the plan must decline, with a reason holding this */
    int cc_major = 9;
    cudnnMathType_t math = CUDNN_TENSOR_OP_MATH;
    int scale_act = 0; /* forward: the fused scale (of y's type, on the product and z), bias and ELU,
                          1 planned on the typed store (OPENCUDNN_UNPROVEN=1), 2 on the wide one */
};

/* A view of logical dims (n, c, h, w), NHWC or packed NCHW. */
struct ocd_tensor_view view_of(cudnnDataType_t t, bool nchw, int64_t n, int64_t c, int64_t h, int64_t w)
{
    const int64_t d[4] = {n, c, h, w};
    struct ocd_tensor_view v = packed(d);
    v.dtype = t;
    if (!nchw) v.strides[0] = h * w * c, v.strides[1] = 1, v.strides[2] = w * c, v.strides[3] = c;
    return v;
}

size_t at(const struct ocd_tensor_view &v, long n, long c, long h, long w)
{
    return (size_t)(n * v.strides[0] + c * v.strides[1] + h * v.strides[2] + w * v.strides[3]);
}

/* Fills the logical NCHW elements of v with random values of type T, their doubles into d. */
template <typename T> void fill(std::vector<T> &buf, std::vector<double> &d, const struct ocd_tensor_view &v, emu_rng &rng)
{
    buf.assign((size_t)(v.dims[0] * v.dims[1] * v.dims[2] * v.dims[3]), T(0.f));
    d.assign(buf.size(), 0);
    size_t i = 0;
    for (long n = 0; n < v.dims[0]; n++)
        for (long c = 0; c < v.dims[1]; c++)
            for (long h = 0; h < v.dims[2]; h++)
                for (long w = 0; w < v.dims[3]; w++, i++) {
                    T &e = buf[at(v, n, c, h, w)];
                    ocd_cuda_store(&e, rng.next());
                    d[i] = ocd_cuda_load(&e);
                }
}

/* Plans the case in direction dir, runs the emulated
   launch and compares its destination with the reference. */
template <typename T> bool run_case(const emu_case &e, enum ocd_conv_dir dir)
{
    const bool dgrad = dir == OCD_CONV_BWD_DATA, wgrad = dir == OCD_CONV_BWD_FILTER;
    struct ref_conv rc;
    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    if (!emu_conv_geometry(&rc, &p.s, e.n, e.c, e.k, e.h, e.w, e.r, e.s, e.pad, e.stride, e.dil, e.flip)) return false;
    const int P = rc.out[0], Q = rc.out[1];
    p.dir = dir;
    p.x = view_of(e.dt, e.nchw, e.n, e.c, e.h, e.w);
    p.y = view_of(e.dt, e.nchw, e.n, e.k, P, Q);
    p.w = view_of(e.dt, e.nchw, e.k, e.c, e.r, e.s); /* KCRS with NCHW activations, else KRSC */
    p.w_format = e.nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    p.compute = CUDNN_DATA_FLOAT, p.math = e.math;
    p.alpha = e.alpha, p.beta = e.beta;

    emu_rng rng = {(uint32_t)(e.c * 977 + e.k * 31 + e.r)};
    std::vector<T> x, w, y, bias;
    std::vector<double> xd, wd, yd, biasd;
    fill(x, xd, p.x, rng), fill(w, wd, p.w, rng), fill(y, yd, p.y, rng);
    const struct ocd_tensor_view bias_view = view_of(e.dt, false, 1, e.k, 1, 1);
    fill(bias, biasd, bias_view, rng);
    p.x_data = x.data(), p.w_data = w.data(), p.y_data = y.data();
    if (e.bias_relu) {
        p.ep.on = true, p.ep.relu = true, p.ep.alpha2 = e.beta, p.ep.z = e.beta != 0 ? y.data() : NULL;
        p.ep.bias = bias.data(), p.ep.bias_view = bias_view;
    }
    std::vector<T> scale;
    std::vector<double> scaled;
    struct ref_pw elu = ref_pw_mode(CUDNN_POINTWISE_ELU_FWD);
    if (e.scale_act) {
        fill(scale, scaled, bias_view, rng);
        p.ep.on = true, p.ep.alpha2 = e.beta, p.ep.z = e.beta != 0 ? y.data() : NULL;
        p.ep.bias = bias.data(), p.ep.bias_view = bias_view;
        p.ep.scale_on = true, p.ep.scale_z = true, p.ep.scale = scale.data(), p.ep.scale_view = bias_view;
        p.ep.act_on = true;
        ocd_pw_step_defaults(&p.ep.act, CUDNN_POINTWISE_ELU_FWD, 0, -1);
        if (e.scale_act == 1) setenv("OPENCUDNN_UNPROVEN", "1", 1);
        else unsetenv("OPENCUDNN_UNPROVEN");
    }

    struct cudnnContext ctx = emu_handle(e.cc_major, 2);
    stem_plan fpl;
    dstem_plan dpl;
    auto plan = [&]() {
        return dgrad ? dstem_plan_fn(&ctx, &p, &dpl) : wgrad ? stem_wgrad_plan(&ctx, &p, &fpl) : stem_fwd_plan(&ctx, &p, &fpl);
    };
    const int verdict = emu_plan_verdict(e.name, plan(), e.declines);
    if (verdict >= 0) return verdict;
    unrounded = 0;
    char what[96];
    /* the reference on |x|, |w|, |dy| (mag) bounds what rounding the operands to tf32 may move a
       result: each product by at most 2^-10 of its size (11 significant bits of each operand) */
    std::vector<double> want, mag;
    std::vector<double> xa(xd), wa(wd), ya(yd);
    for (std::vector<double> *v : {&xa, &wa, &ya})
        for (double &d : *v) d = fabs(d);
    if (dgrad) {
        const dstem_params m = dstem_bind(&p, &dpl);
        if (m.vec != (!e.nchw && e.k % 8 == 0 && sizeof(T) == 2)) {
            printf("FAIL %s: the patch copy is %s\n", e.name, m.vec ? "by chunks" : "by elements");
            return false;
        }
        emulate_dgrad<T>(m, e.ctas);
        want.assign(xd.size(), 0);
        ref_conv_bwd_data(&rc, yd.data(), wd.data(), want.data());
        mag.assign(want.size(), 0);
        ref_conv_bwd_data(&rc, ya.data(), wa.data(), mag.data());
        for (size_t i = 0; i < want.size(); i++) want[i] = e.alpha * want[i] + e.beta * xd[i];
        snprintf(what, sizeof what, "%d tiles, patch %d x %d, K %d of %d", m.tiles, m.prow, m.pcol, m.k, m.kp);
    } else if (wgrad) {
        stem_params m = stem_bind(&p, &fpl);
        std::vector<float> partial(stem_wgrad_workspace(&ctx, &p, &fpl) / sizeof(float), NAN);
        m.partial = partial.data();
        emulate_wgrad<T>(m, fpl.kblocks, fpl.grid);
        want.assign(wd.size(), 0);
        ref_conv_bwd_filter(&rc, xd.data(), yd.data(), want.data());
        mag.assign(want.size(), 0);
        ref_conv_bwd_filter(&rc, xa.data(), ya.data(), mag.data());
        for (size_t i = 0; i < want.size(); i++) want[i] = e.alpha * want[i] + e.beta * wd[i];
        snprintf(what, sizeof what, "%d tiles over %d CTAs, %d filter blocks, C R S %d of %d", m.tiles, fpl.grid,
                 fpl.kblocks, m.crs, m.kp);
    } else {
        const stem_params m = stem_bind(&p, &fpl);
        if (e.scale_act && (m.wide != (e.scale_act == 2) || stem_fused(m) != (e.scale_act == 1))) {
            printf("FAIL %s: planned on the %s store\n", e.name, m.wide ? "wide" : "typed");
            return false;
        }
        if (m.pair != (!e.nchw && !m.wide)) { /* the fused bias + ReLU stores typed, in pairs too */
            printf("FAIL %s: paired stores %s where y's filters are%s contiguous\n", e.name, m.pair ? "on" : "off",
                   e.nchw ? " not" : "");
            return false;
        }
        emulate_launch<T>(m, fpl.kblocks, e.ctas);
        want.assign(yd.size(), 0);
        ref_conv_fwd(&rc, xd.data(), wd.data(), want.data());
        mag.assign(want.size(), 0);
        ref_conv_fwd(&rc, xa.data(), wa.data(), mag.data());
        for (size_t i = 0; i < want.size(); i++) {
            const size_t k = i / ((size_t)P * Q) % e.k;
            want[i] = e.alpha * want[i] + e.beta * yd[i];
            if (e.bias_relu) want[i] = fmax(want[i] + biasd[k], 0.0);
            if (e.scale_act) want[i] = ref_pw(&elu, scaled[k] * want[i] + biasd[k], 0);
        }
        snprintf(what, sizeof what, "%d tiles, %d filter blocks, K %d of %d", m.tiles, fpl.kblocks, m.crs, m.kp);
    }
    if (unrounded != 0) {
        printf("FAIL %s: %ld tf32 fragment words not rounded\n", e.name, unrounded);
        return false;
    }
    const std::vector<T> &got = dgrad ? x : wgrad ? w : y;
    const struct ocd_tensor_view &v = dgrad ? p.x : wgrad ? p.w : p.y;
    double worst = 0;
    for (long n = 0, i = 0; n < v.dims[0]; n++)
        for (long c = 0; c < v.dims[1]; c++)
            for (long h = 0; h < v.dims[2]; h++)
                for (long q = 0; q < v.dims[3]; q++, i++) {
                    const double g = ocd_cuda_load(&got[at(v, n, c, h, q)]);
                    /* 16-bit data: relative to the result; tf32: the operands' rounding bound, plus
                       fp32 accumulation */
                    const double err = fabs(g - want[i]) / fmax(1.0, fabs(want[i]));
                    const double tf32_bound = fabs(e.alpha) * 0x1p-10 * mag[i] + 1e-5 * fmax(1.0, fabs(want[i]));
                    if (sizeof(T) == 4 ? !(fabs(g - want[i]) <= tf32_bound) : !(err <= 1e-2)) {
                        printf("FAIL %s: (n %ld, c %ld, %ld, %ld): %.6g, want %.6g\n", e.name, n, c, h, q, g, want[i]);
                        return false;
                    }
                    worst = fmax(worst, err);
                }
    printf("ok   %s: %s; largest error %.2g\n", e.name, what, worst);
    return true;
}

} // namespace

int main()
{
    int failed = 0;
    const cudnnDataType_t H = CUDNN_DATA_HALF, B = CUDNN_DATA_BFLOAT16, F = CUDNN_DATA_FLOAT;
    emu_case cases[] = {
        /* name, type, n, c, k, h, w, r, s, pad, stride, dil, flip, nchw, bias_relu, alpha, beta, ctas */
        {"stem C 3 7x7 stride 2 pad 3 NHWC fp16, 12 x 19 outputs", H, 2, 3, 64, 23, 37, 7, 7, 3, 2, 1, false, false,
         false, 1, 0, 3},
        {"stem C 3 NCHW bf16, K 72 (two filter blocks), alpha beta", B, 1, 3, 72, 21, 19, 7, 7, 3, 2, 1, false, true,
         false, 0.5, 0.75, 2},
        {"stem C 3 NCHW fp16, bias ReLU (ConvBiasAct), one CTA", H, 2, 3, 64, 17, 17, 7, 7, 3, 2, 1, false, true, true,
         1, 0, 1},
        {"C 1 3x3 stride 1 pad 1 NHWC fp16, CONVOLUTION, K 16", H, 2, 1, 16, 19, 21, 3, 3, 1, 1, 1, true, false, false,
         1, 0, 4},
        {"C 4 5x5 pad 0 NHWC bf16, bias ReLU with z, K 40", B, 1, 4, 40, 14, 23, 5, 5, 0, 1, 1, false, false, true, 1,
         0.5, 3},
        {"C 3 3x3 dilation 2 NCHW bf16, CONVOLUTION, K 8", B, 1, 3, 8, 13, 35, 3, 3, 2, 1, 2, true, true, false, 1, 0,
         2},
        {"C 5 3x3 stride 2 NHWC fp16, K 24, beta", H, 3, 5, 24, 9, 11, 3, 3, 1, 2, 1, false, false, false, 1, 1, 5},
        {"declines C 8", H, 1, 8, 16, 9, 9, 3, 3, 1, 1, 1, false, false, false, 1, 0, 1, "multiple of 8"},
        {"declines C R S 363", H, 1, 3, 16, 30, 30, 11, 11, 0, 1, 1, false, false, false, 1, 0, 1, "above 256"},
        {"declines a patch beyond shared memory", H, 1, 3, 16, 300, 300, 7, 7, 0, 8, 1, false, false, false, 1, 0, 1,
         "shared memory"},
        {"declines compute capability 7.5", H, 1, 3, 16, 9, 9, 3, 3, 1, 1, 1, false, false, false, 1, 0, 1,
         OCD_REASON_ARCH, 7},
        {"declines FMA math", H, 1, 3, 16, 9, 9, 3, 3, 1, 1, 1, false, false, false, 1, 0, 1, OCD_REASON_MATH, 9,
         CUDNN_FMA_MATH},
        /* float data on TF32 */
        {"stem C 3 7x7 stride 2 pad 3 NHWC float (TF32), 12 x 19 outputs", F, 2, 3, 64, 23, 37, 7, 7, 3, 2, 1, false,
         false, false, 1, 0, 3, NULL, 9, CUDNN_DEFAULT_MATH},
        {"stem C 3 NCHW float, K 72 (two filter blocks), alpha beta", F, 1, 3, 72, 21, 19, 7, 7, 3, 2, 1, false, true,
         false, 0.5, 0.75, 2},
        {"C 1 3x3 stride 1 pad 1 NHWC float, CONVOLUTION, K 16", F, 2, 1, 16, 19, 21, 3, 3, 1, 1, 1, true, false, false,
         1, 0, 4},
        {"C 4 5x5 pad 0 NCHW float, bias ReLU with z, K 40", F, 1, 4, 40, 14, 23, 5, 5, 0, 1, 1, false, true, true, 1,
         0.5, 3},
        {"C 3 3x3 dilation 2 NHWC float, K 8", F, 1, 3, 8, 13, 35, 3, 3, 2, 1, 2, false, false, false, 1, 0, 2},
        {"float declines FMA math", F, 1, 3, 16, 9, 9, 3, 3, 1, 1, 1, false, false, false, 1, 0, 1, OCD_REASON_MATH, 9,
         CUDNN_FMA_MATH},
        /* the fused scale, bias, z and ELU: typed (FUSED kernel), and through the wide store */
        {"stem C 3 NHWC fp16, scale bias z ELU, typed", H, 2, 3, 64, 17, 17, 7, 7, 3, 2, 1, false, false, false, 1,
         0.5, 2, NULL, 9, CUDNN_TENSOR_OP_MATH, 1},
        {"stem C 3 NCHW bf16, K 72, scale bias ELU, typed", B, 1, 3, 72, 21, 19, 7, 7, 3, 2, 1, false, true, false,
         0.75, 0, 2, NULL, 9, CUDNN_TENSOR_OP_MATH, 1},
        {"stem C 3 NHWC bf16, scale bias z ELU, wide", B, 1, 3, 40, 17, 17, 7, 7, 3, 2, 1, false, false, false, 1, 0.5,
         2, NULL, 9, CUDNN_TENSOR_OP_MATH, 2},
        {"C 4 5x5 NHWC float, scale bias z ELU, typed", F, 1, 4, 40, 14, 23, 5, 5, 0, 1, 1, false, false, false, 1,
         0.5, 3, NULL, 9, CUDNN_TENSOR_OP_MATH, 1},
        {"stem C 3 NCHW float, scale bias z ELU, wide", F, 1, 3, 24, 17, 17, 7, 7, 3, 2, 1, false, true, false, 1, 0.5,
         2, NULL, 9, CUDNN_TENSOR_OP_MATH, 2},
    };
    /* backward data */
    emu_case dgrad_cases[] = {
        /* name, type, n, c, k, h, w, r, s, pad, stride, dil, flip, nchw, bias_relu, alpha, beta, ctas */
        {"dgrad stem C 3 7x7 stride 2 pad 3 NHWC fp16, 23 x 37 pixels", H, 2, 3, 64, 23, 37, 7, 7, 3, 2, 1, false,
         false, false, 1, 0, 3},
        {"dgrad stem C 3 NCHW bf16, CONVOLUTION, alpha beta", B, 1, 3, 32, 22, 19, 7, 7, 3, 2, 1, true, true, false,
         0.5, 0.75, 2},
        {"dgrad C 1 3x3 stride 1 NHWC fp16, K 20 (copied by elements)", H, 2, 1, 20, 19, 21, 3, 3, 1, 1, 1, false,
         false, false, 1, 0, 4},
        {"dgrad C 4 5x5 dilation 2 NHWC bf16, CONVOLUTION, K 24", B, 1, 4, 24, 14, 23, 5, 5, 2, 1, 2, true, false,
         false, 1, 0, 3},
        {"dgrad C 3 1x1 stride 2, phases without taps, beta", H, 2, 3, 16, 9, 12, 1, 1, 0, 2, 1, false, false, false, 1,
         0.5, 2},
        {"dgrad C 7 3x3 stride 3 pad 2 NCHW fp16, K 8", H, 1, 7, 8, 17, 20, 3, 3, 2, 3, 1, false, true, false, 1, 0, 1},
        {"dgrad declines C 8", H, 1, 8, 16, 9, 9, 3, 3, 1, 1, 1, false, false, false, 1, 0, 1, "8 channels or more"},
        {"dgrad declines stride 5", H, 1, 3, 16, 30, 30, 5, 5, 0, 5, 1, false, false, false, 1, 0, 1, "strides above 4"},
        {"dgrad declines K 512 (shared memory)", H, 1, 3, 512, 30, 30, 7, 7, 3, 2, 1, false, false, false, 1, 0, 1,
         "shared memory"},
        {"dgrad declines FMA math", H, 1, 3, 16, 9, 9, 3, 3, 1, 1, 1, false, false, false, 1, 0, 1, OCD_REASON_MATH,
         9, CUDNN_FMA_MATH},
        /* float data on TF32 (patches by elements) */
        {"dgrad stem C 3 7x7 stride 2 pad 3 NHWC float, 23 x 37 pixels", F, 2, 3, 64, 23, 37, 7, 7, 3, 2, 1, false,
         false, false, 1, 0, 3, NULL, 9, CUDNN_DEFAULT_MATH},
        {"dgrad stem C 3 NCHW float, CONVOLUTION, alpha beta, K 36", F, 1, 3, 36, 22, 19, 7, 7, 3, 2, 1, true, true,
         false, 0.5, 0.75, 2},
        {"dgrad C 1 3x3 stride 1 NHWC float, K 20", F, 2, 1, 20, 19, 21, 3, 3, 1, 1, 1, false, false, false, 1, 0, 4},
        {"dgrad C 7 3x3 stride 3 pad 2 NCHW float, K 8, beta", F, 1, 7, 8, 17, 20, 3, 3, 2, 3, 1, false, true, false, 1,
         0.5, 1},
        {"dgrad float declines C 4 7x7 K 64 (shared memory)", F, 1, 4, 64, 30, 30, 7, 7, 3, 2, 1, false, false, false,
         1, 0, 1, "shared memory"},
    };
    /* the filter gradient: sums over up to 2 x 2 CTAs (the plan's grid on 2 multiprocessors) */
    emu_case wgrad_cases[] = {
        /* name, type, n, c, k, h, w, r, s, pad, stride, dil, flip, nchw, bias_relu, alpha, beta, ctas */
        {"wgrad stem C 3 7x7 stride 2 pad 3 NHWC fp16, 12 x 19 outputs", H, 2, 3, 64, 23, 37, 7, 7, 3, 2, 1, false,
         false, false, 1, 0, 0},
        {"wgrad stem C 3 NCHW bf16, K 72, CONVOLUTION, alpha beta", B, 1, 3, 72, 21, 19, 7, 7, 3, 2, 1, true, true,
         false, 0.5, 0.75, 0},
        {"wgrad C 1 3x3 NHWC fp16, K 16, one tile", H, 1, 1, 16, 8, 16, 3, 3, 1, 1, 1, false, false, false, 1, 0, 0},
        {"wgrad C 4 5x5 dilation 2 NHWC bf16, K 40", B, 2, 4, 40, 14, 23, 5, 5, 2, 1, 2, false, false, false, 1, 0, 0},
        {"wgrad declines C 16", H, 1, 16, 16, 9, 9, 3, 3, 1, 1, 1, false, false, false, 1, 0, 0, "multiple of 8"},
        /* float data on TF32 */
        {"wgrad stem C 3 7x7 stride 2 pad 3 NHWC float, 12 x 19 outputs", F, 2, 3, 64, 23, 37, 7, 7, 3, 2, 1, false,
         false, false, 1, 0, 0, NULL, 9, CUDNN_DEFAULT_MATH},
        {"wgrad stem C 3 NCHW float, K 72, CONVOLUTION, alpha beta", F, 1, 3, 72, 21, 19, 7, 7, 3, 2, 1, true, true,
         false, 0.5, 0.75, 0},
        {"wgrad C 4 5x5 dilation 2 NHWC float, K 40", F, 2, 4, 40, 14, 23, 5, 5, 2, 1, 2, false, false, false, 1, 0, 0},
        {"wgrad float declines FMA math", F, 1, 3, 16, 9, 9, 3, 3, 1, 1, 1, false, false, false, 1, 0, 0,
         OCD_REASON_MATH, 9, CUDNN_FMA_MATH},
    };
    auto run = [&](const emu_case &e, enum ocd_conv_dir dir) {
        return e.dt == B   ? run_case<__nv_bfloat16>(e, dir)
               : e.dt == F ? run_case<float>(e, dir)
                           : run_case<__half>(e, dir);
    };
    for (const emu_case &e : cases) failed += !run(e, OCD_CONV_FWD);
    for (const emu_case &e : wgrad_cases) failed += !run(e, OCD_CONV_BWD_FILTER);
    for (const emu_case &e : dgrad_cases) failed += !run(e, OCD_CONV_BWD_DATA);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
