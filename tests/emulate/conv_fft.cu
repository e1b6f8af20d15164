/* conv_fft.cu (emulation): the CUDA FFT convolution of src/cuda/conv_fft.cu run on the CPU. Its
   three kernels' per-thread functions (fft_gather_value, fft_product, fft_scatter_value, written
   __host__ __device__ for this) run for every thread index of their launches, in the order and
   on the buffers the launch uses (call_of: the same plan, products and sets); the host's FFT
   engine stands in for cuFFT, with cuFFT's packed R2C/C2R layout and its unnormalised inverse.
   Each case (every direction, FFT and FFT_TILING, padding, CONVOLUTION mode, groups, several
   tiles with edges, a filter above 16 taps) is compared with a direct double-precision
   convolution; float data, so a result must be within 1e-4 of the largest value. Prints a line
   per case; exits 1 if any differs. */
#include "cuda/conv_fft.cu"

#include "host/conv_fft_engine.h"

#include "conv_emulate.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

struct emu_case {
    const char *name;
    int dir;
    bool tiling, flip;
    int n, c, k, groups, in[2], filt[2], pad[2];
};

emu_rng rng = {2024};

bool run_case(const emu_case &e)
{
    struct ocd_conv_problem p;
    std::vector<float> x, w, y;
    emu_conv_problem(&p, e.dir, e.n, e.c, e.k, e.groups, e.in, e.filt, e.pad, e.flip, rng, x, w, y);

    fft_call c;
    if (call_of(&p, e.tiling, &c) != NULL) {
        printf("  %-34s FAILED: not planned\n", e.name);
        return false;
    }
    const int64_t area = c.plan.len[0] * c.plan.len[1], freq = c.plan.freq;
    std::vector<float2> spec((size_t)ocd_conv_fft_spectra(&c.plan));
    std::vector<float> real;
    struct ocd_fft2d fft;
    ocd_fft2d_init(&fft, c.plan.len[0], c.plan.len[1]);
    std::vector<double> tile((size_t)area);
    std::vector<struct ocd_cpx> cpx((size_t)freq), scratch((size_t)ocd_fft2d_scratch(&fft));
    /* the two operands: gather kernel, then cuFFT R2C */
    for (int i = 0; i < 2; i++) {
        enum ocd_conv_fft_set set = c.in[i];
        real.assign((size_t)(c.count[set] * area), NAN);
        fft_src src = src_of(&p, set);
        for (int64_t t = 0; t < c.count[set] * area; t++) real[(size_t)t] = fft_gather_value<float, float>(c.g, set, src, t);
        for (int64_t t = 0; t < c.count[set]; t++) {
            for (int64_t a = 0; a < area; a++) tile[(size_t)a] = real[(size_t)(t * area + a)];
            ocd_fft2d_forward(&fft, tile.data(), c.plan.len[0], cpx.data(), scratch.data());
            float2 *dst = &spec[(size_t)((ocd_conv_fft_set_base(&c.plan, set) + t) * freq)];
            for (int64_t f = 0; f < freq; f++) dst[f] = make_float2((float)cpx[(size_t)f].re, (float)cpx[(size_t)f].im);
        }
    }
    /* the product kernel: every frequency, every output triple */
    for (int64_t o = 0; o < product_outputs(c.gemm); o++)
        for (int64_t f = 0; f < freq; f++) fft_product(c.gemm, spec.data(), f, o);
    /* cuFFT C2R of the result, then the scatter kernel */
    real.assign((size_t)(c.count[c.out] * area), NAN);
    for (int64_t t = 0; t < c.count[c.out]; t++) {
        const float2 *src = &spec[(size_t)((ocd_conv_fft_set_base(&c.plan, c.out) + t) * freq)];
        for (int64_t f = 0; f < freq; f++) cpx[(size_t)f] = {src[f].x, src[f].y};
        ocd_fft2d_inverse(&fft, cpx.data(), c.plan.len[0], tile.data(), scratch.data());
        for (int64_t a = 0; a < area; a++) real[(size_t)(t * area + a)] = (float)tile[(size_t)a];
    }
    ocd_fft2d_free(&fft);
    const struct ocd_tensor_view *dv = ocd_conv_dst_view(&p);
    std::vector<double> got((size_t)ocd_view_count(dv)), want((size_t)ocd_view_count(dv), 0.0);
    for (int64_t t = 0; t < ocd_view_count(dv); t++) {
        int64_t idx[OCD_MAX_DIMS] = {0}, off = 0;
        float v = fft_scatter_value<float>(c.g, real.data(), t, idx);
        for (int d = 0; d < 4; d++) off += idx[d] * dv->strides[d];
        got[(size_t)off] = v;
    }
    emu_conv_reference(p, x, w, y, want);
    double scale = 1, worst = 0;
    for (double v : want) scale = std::fmax(scale, std::fabs(v));
    for (size_t i = 0; i < got.size(); i++) worst = std::fmax(worst, std::fabs(got[i] - want[i]));
    worst = std::isnan(worst) ? INFINITY : worst / scale;
    bool ok = worst <= 1e-4;
    printf("  %-34s %s (error %.2g of the largest value; %lld x %lld transforms, %lld tiles)\n", e.name,
           ok ? "ok" : "FAILED", worst, (long long)c.plan.len[0], (long long)c.plan.len[1], (long long)c.plan.segs);
    return ok;
}

} // namespace

int main()
{
    /* {name, dir, tiling, flip, n, c, k, groups, in, filt, pad} */
    static const emu_case cases[] = {
        {"fwd_fft_3x3_pad1", OCD_CONV_FWD, false, false, 2, 3, 4, 1, {7, 6}, {3, 3}, {1, 1}},
        {"fwd_tiling_edges_convolution", OCD_CONV_FWD, true, true, 1, 2, 3, 1, {45, 38}, {5, 3}, {2, 1}},
        {"fwd_tiling_filter_17", OCD_CONV_FWD, true, false, 1, 1, 5, 1, {70, 20}, {17, 3}, {0, 1}},
        {"dgrad_fft_groups2", OCD_CONV_BWD_DATA, false, false, 2, 4, 6, 2, {8, 5}, {3, 2}, {1, 0}},
        {"dgrad_tiling_edges", OCD_CONV_BWD_DATA, true, false, 1, 3, 2, 1, {40, 50}, {5, 5}, {2, 2}},
        {"wgrad_fft_convolution_groups3", OCD_CONV_BWD_FILTER, false, true, 2, 6, 3, 3, {9, 11}, {5, 5}, {2, 2}},
        {"wgrad_tiling_1d", OCD_CONV_BWD_FILTER, true, false, 2, 3, 2, 1, {1, 70}, {1, 7}, {0, 3}},
    };
    int failed = 0;
    printf("CUDA FFT convolution, per-thread code on the CPU\n");
    for (const emu_case &e : cases) failed += !run_case(e);
    printf("%d of %d cases differ\n", failed, (int)(sizeof cases / sizeof cases[0]));
    return failed ? 1 : 0;
}
