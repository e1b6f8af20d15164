/* conv_igemm.cu (emulation): the stride phases of the CUDA implicit-GEMM backward data pass
   (src/cuda/conv_igemm.cu, the _phases entries) run on the CPU up to the filter pack: for every
   phase of a strided problem, phase_problem's sub-problem and filter view, and the pack kernel's
   per-element source (igemm_filter_src, as igemm_pack_filter reads it) over the filter as the
   GEMM takes it. Each packed element must be the tap of the phase's cross-correlation filter that
   the backward pass needs at it: w[k][c][r0 + u*t][r0' + u'*t'] of the filter, mirrored in every
   spatial dim in CONVOLUTION mode, where r0 = (a + pad) mod u is the phase's first tap. Cases:
   both modes, strides 2x1, 2x2 and 3x2, padding 0 and 1, filters 3x3, 3x2 and 1x1. Prints a line
   per case; exits 1 if any differs. */
#include "cuda/conv_igemm.cu"

#include "conv_emulate.h"

#include <cstdio>
#include <vector>

namespace {

struct emu_case {
    bool flip;
    int k, c, in[2], filt[2], pad[2], stride[2];
};

/* The packed filter of one phase, element by element, as the pack kernel computes it. */
bool check_phase(const emu_case &e, const struct ocd_conv_problem &p, int ph, const std::vector<float> &w)
{
    struct ocd_conv_problem sub;
    bool taps, pixels;
    phase_problem(&p, ph, 4, &sub, &taps, &pixels);
    if (!taps || !pixels) return true;
    int64_t wst[5];
    filter_strides(&sub.w, wst);
    igemm_filter_pack f;
    if (const char *why = igemm_filter_pack_make(&f, wst, 0, 1, e.k, e.c, e.c, 1, (int)sub.s.filt[0],
                                                 (int)sub.s.filt[1], true, sub.s.flip)) {
        printf("    phase %d: the pack declines: %s\n", ph, why);
        return false;
    }
    const float *base = (const float *)sub.w_data;
    int a[2] = {ph / e.stride[1] % e.stride[0], ph % e.stride[1]};
    const int64_t total = (int64_t)e.c * f.r * f.s * e.k;
    for (int64_t i = 0; i < total; i++) {
        /* the dgrad pack order: [c][r][s][k] */
        int64_t k = i % e.k, s = i / e.k % f.s, r = i / e.k / f.s % f.r, c = i / e.k / f.s / f.r;
        int tap[2] = {(a[0] + e.pad[0]) % e.stride[0] + e.stride[0] * (int)r,
                      (a[1] + e.pad[1]) % e.stride[1] + e.stride[1] * (int)s};
        if (e.flip) tap[0] = e.filt[0] - 1 - tap[0], tap[1] = e.filt[1] - 1 - tap[1];
        float want = w[(((size_t)k * e.c + c) * e.filt[0] + tap[0]) * e.filt[1] + tap[1]];
        int64_t src;
        float got = igemm_filter_src(f, (uint32_t)i, &src) ? base[src] : 0.f;
        if (got != want) {
            printf("    phase %d element %lld (c %lld, tap %lld,%lld, k %lld): %g, want %g\n", ph, (long long)i,
                   (long long)c, (long long)r, (long long)s, (long long)k, got, want);
            return false;
        }
    }
    return true;
}

bool run_case(const emu_case &e)
{
    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    p.dir = OCD_CONV_BWD_DATA;
    p.s.nsp = 2, p.s.n = 1, p.s.c = e.c, p.s.k = e.k, p.s.groups = 1, p.s.flip = e.flip;
    for (int d = 0; d < 2; d++) {
        p.s.in[d] = e.in[d], p.s.filt[d] = e.filt[d], p.s.pad[d] = e.pad[d], p.s.stride[d] = e.stride[d];
        p.s.dilation[d] = 1;
        p.s.out[d] = (e.in[d] + 2 * e.pad[d] - e.filt[d]) / e.stride[d] + 1;
    }
    const int64_t xd[4] = {1, e.c, e.in[0], e.in[1]}, wd[4] = {e.k, e.c, e.filt[0], e.filt[1]},
                  yd[4] = {1, e.k, p.s.out[0], p.s.out[1]};
    p.x = packed(xd), p.w = packed(wd), p.y = packed(yd);
    std::vector<float> w((size_t)(e.k * e.c * e.filt[0] * e.filt[1]));
    for (size_t i = 0; i < w.size(); i++) w[i] = (float)(i + 1); /* every tap distinct */
    std::vector<float> x((size_t)(e.c * e.in[0] * e.in[1])), y((size_t)(e.k * p.s.out[0] * p.s.out[1]));
    p.x_data = x.data(), p.w_data = w.data(), p.y_data = y.data();
    bool ok = true;
    for (int ph = 0; ph < phase_count(&p) && ok; ph++) ok = check_phase(e, p, ph, w);
    printf("%s %s, filter %dx%d, stride %dx%d, pad %d,%d\n", ok ? "ok  " : "FAIL",
           e.flip ? "CONVOLUTION" : "CROSS_CORRELATION", e.filt[0], e.filt[1], e.stride[0], e.stride[1], e.pad[0],
           e.pad[1]);
    return ok;
}

} // namespace

int main()
{
    static const emu_case cases[] = {
        {true, 4, 6, {7, 6}, {3, 3}, {1, 0}, {2, 1}}, {false, 4, 6, {7, 6}, {3, 3}, {1, 0}, {2, 1}},
        {true, 4, 4, {9, 8}, {3, 2}, {1, 1}, {2, 2}},  {false, 4, 4, {9, 8}, {3, 2}, {1, 1}, {2, 2}},
        {true, 8, 4, {10, 9}, {3, 3}, {0, 1}, {3, 2}}, {true, 4, 8, {7, 6}, {1, 1}, {0, 0}, {2, 2}},
    };
    int failed = 0;
    for (const emu_case &e : cases) failed += !run_case(e);
    printf("%d of %d cases failed\n", failed, (int)(sizeof cases / sizeof cases[0]));
    return failed ? 1 : 0;
}
