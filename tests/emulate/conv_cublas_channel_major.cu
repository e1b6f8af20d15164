/* conv_cublas_channel_major.cu (emulation): the channel-major runs of the cuBLAS 1x1 entries
   (src/cuda/conv_cublas.cu, make_plan's channel_major: the tensor-core flavour on float NCHW
   images of fewer than 100 output pixels, forward and backward data) on the CPU, against the double-precision
   reference of tests/ref: the plan (make_plan, on a handle of compute capability 9.0 with 132
   multiprocessors), the activation re-laid channel-major by the im2col kernel's own per-thread
   code (x through the plan's geometry, dy through dy_channel_major's), each group's GEMM as
   channel_major_gemm describes it (cublas_emulate.h's emu_gemm, a plain loop in double standing
   in for cuBLAS), then the output moved into y or dx with beta through channel_major_view and
   channel_major_dst (the elementwise engine's job, here loops over the destination's elements;
   with a stride dx scaled by beta, or zeroed, first). The workspace starts
   poisoned (NaN), so that a read of what nothing wrote shows; the result must lie within fp32
   summation of the reference.

   Cases: a 1x1 forward pass of 7x7 images, the strided 1x1 of a downsampling shortcut (x's
   subsample), two groups, alpha and beta; backward data of 7x7 and 9x9 images, two groups, alpha
   and beta, and with stride 2 (7x7 into 14x14 and 13x13: dx's other pixels scaled by beta, or
   zeroed over the poison at beta 0). The plan must not run channel-major NHWC data, images of 100
   pixels or more, one image, or the plain flavour (which IMPLICIT_GEMM takes without
   workspace). Prints a line per case; exits 1 if any fails. */
#include "cuda/conv_cublas.cu"

extern "C" {
#include "ref/conv.h"
}

#include "conv_emulate.h"
#include "cublas_emulate.h"
#include "emu_handle.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct ccase {
    const char *name;
    enum ocd_conv_dir dir;
    int n, c, k, groups, h, w, stride;
    double alpha, beta;
};

/* The problem of a case on packed NCHW float tensors, the filter KCRS (1x1, no padding). */
void problem_of(const ccase &c, struct ref_conv *rc, struct ocd_conv_problem *p)
{
    emu_nchw_float_problem(rc, p, c.dir, c.n, c.c, c.k, c.groups, c.h, c.w, 1, 0, c.stride, 1, false, c.alpha, c.beta);
}

bool run_case(const ccase &c, cudnnHandle_t h)
{
    struct ref_conv rc;
    struct ocd_conv_problem p;
    problem_of(c, &rc, &p);
    cublas_plan pl;
    if (const char *why = make_plan(h, &p, true, false, &pl)) {
        printf("FAIL %s: the plan declines: %s\n", c.name, why);
        return false;
    }
    if (!pl.channel_major) {
        printf("FAIL %s: the plan does not run channel-major\n", c.name);
        return false;
    }
    const bool fwd = c.dir == OCD_CONV_FWD;
    emu_rng rng = {(uint32_t)(c.n * 131 + c.c * 17 + c.k * 3 + c.dir)};
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    std::vector<float> x(nx), w(nw), y(ny), wsv(pl.ws_bytes / sizeof(float) + 64, NAN);
    std::vector<double> xd(nx), wd(nw), yd(ny), xa(nx), wa(nw), ya(ny);
    auto fill = [&](std::vector<float> &v, std::vector<double> &d, std::vector<double> &a) {
        for (size_t i = 0; i < v.size(); i++) v[i] = rng.next(), d[i] = v[i], a[i] = fabs(d[i]);
    };
    fill(x, xd, xa), fill(w, wd, wa), fill(y, yd, ya);
    std::vector<float> &dst = fwd ? y : x;
    if (!fwd && c.beta == 0) std::fill(dst.begin(), dst.end(), NAN); /* nothing may read dx at beta 0 */
    std::vector<double> want(dst.size()), bound(dst.size());
    if (fwd) ref_conv_fwd(&rc, xd.data(), wd.data(), want.data()), ref_conv_fwd(&rc, xa.data(), wa.data(), bound.data());
    else ref_conv_bwd_data(&rc, yd.data(), wd.data(), want.data()), ref_conv_bwd_data(&rc, ya.data(), wa.data(), bound.data());
    for (size_t i = 0; i < dst.size(); i++) want[i] = c.alpha * want[i] + (c.beta != 0 ? c.beta * dst[i] : 0);

    /* as cublas_run and run_typed: the workspace aligned to 256 bytes; x's column matrix (the
       forward pass) or dy re-laid, the GEMMs into the channel-major output, then the move */
    char *ws = (char *)(((uintptr_t)wsv.data() + 255) & ~(uintptr_t)255);
    float *src = (float *)(ws + (fwd ? pl.ws_col : pl.ws_dy)), *out = (float *)(ws + pl.ws_out);
    const col_geom &sg = fwd ? pl.gm : pl.dy_gm;
    const float *from = fwd ? x.data() : y.data();
    const col_rows cr = col_rows_of(sg, from, sizeof(float));
    cublas_im2col_range<float>(from, src, cr, 0, 1);
    for (int64_t gi = 0; gi < pl.gm.g; gi++)
        emu_gemm(channel_major_gemm(pl, p.dir, p.s.k, gi), c.alpha, w.data(), src, out);
    const struct ocd_tensor_view dv = channel_major_dst(&p), cm = channel_major_view(&dv);
    float keep = (float)c.beta; /* with a stride (run_channel_major): dx scaled by beta first, then added to */
    if (!fwd && !pl.direct) {
        for (float &e : dst) e = c.beta != 0 ? (float)c.beta * e : 0.f;
        keep = 1;
    }
    for (int64_t i0 = 0; i0 < dv.dims[0]; i0++)
        for (int64_t i1 = 0; i1 < dv.dims[1]; i1++)
            for (int64_t i2 = 0; i2 < dv.dims[2]; i2++)
                for (int64_t i3 = 0; i3 < dv.dims[3]; i3++) {
                    const int64_t at = i0 * dv.strides[0] + i1 * dv.strides[1] + i2 * dv.strides[2] + i3 * dv.strides[3];
                    const float v = out[i0 * cm.strides[0] + i1 * cm.strides[1] + i2 * cm.strides[2] + i3 * cm.strides[3]];
                    dst[at] = keep != 0 ? v + keep * dst[at] : v;
                }
    for (size_t i = 0; i < dst.size(); i++) {
        const double tol = 1e-5 * (fabs(c.alpha) * bound[i] + fabs(c.beta) + 1);
        if (!(fabs(dst[i] - want[i]) <= tol)) {
            printf("FAIL %s: %s[%zu] = %.7g, want %.7g (tolerance %.3g)\n", c.name, fwd ? "y" : "dx", i, dst[i], want[i],
                   tol);
            return false;
        }
    }
    printf("ok   %s (%zu workspace bytes)\n", c.name, pl.ws_bytes);
    return true;
}

/* A case the plan must not run channel-major (nhwc: x and y channels-last; tc: the tensor-core
   flavour's plan, else the plain one's). */
bool not_channel_major(const ccase &c, cudnnHandle_t h, bool nhwc, bool tc = true)
{
    struct ref_conv rc;
    struct ocd_conv_problem p;
    problem_of(c, &rc, &p);
    if (nhwc) emu_to_nhwc(&p.x), emu_to_nhwc(&p.y);
    cublas_plan pl;
    const char *why = make_plan(h, &p, tc, false, &pl);
    const bool ok = why != NULL || !pl.channel_major;
    printf("%s %s: %s\n", ok ? "ok  " : "FAIL", c.name, why ? why : pl.channel_major ? "channel-major" : "image by image");
    return ok;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 132);
    const ccase cases[] = {
        {"forward 1x1, 7x7 images", OCD_CONV_FWD, 3, 24, 40, 1, 7, 7, 1, 1, 0},
        {"forward 1x1 stride 2 (14x14 to 7x7), alpha beta", OCD_CONV_FWD, 2, 16, 24, 1, 14, 13, 2, 0.5, 0.25},
        {"forward 1x1, two groups, beta", OCD_CONV_FWD, 4, 16, 12, 2, 5, 6, 1, 1, 1},
        {"backward data 1x1, 7x7 images", OCD_CONV_BWD_DATA, 3, 40, 24, 1, 7, 7, 1, 1, 0},
        {"backward data 1x1, 9x9 images, two groups, alpha beta", OCD_CONV_BWD_DATA, 2, 12, 16, 2, 9, 9, 1, 0.75, 0.5},
        {"backward data 1x1 stride 2, 7x7 into 14x14", OCD_CONV_BWD_DATA, 3, 24, 40, 1, 14, 14, 2, 1, 0},
        {"backward data 1x1 stride 2, 7x7 into 13x13, two groups, alpha beta", OCD_CONV_BWD_DATA, 2, 16, 12, 2, 13, 13,
         2, 0.5, 0.75},
    };
    bool ok = true;
    for (const ccase &c : cases) ok &= run_case(c, &ctx);
    ok &= not_channel_major({"NHWC data", OCD_CONV_FWD, 2, 8, 8, 1, 6, 6, 1, 1, 0}, &ctx, true);
    ok &= not_channel_major({"images of 100 pixels", OCD_CONV_FWD, 2, 8, 8, 1, 10, 10, 1, 1, 0}, &ctx, false);
    ok &= not_channel_major({"one image", OCD_CONV_FWD, 1, 8, 8, 1, 7, 7, 1, 1, 0}, &ctx, false);
    ok &= not_channel_major({"the plain flavour", OCD_CONV_FWD, 3, 24, 40, 1, 7, 7, 1, 1, 0}, &ctx, false, false);
    printf("emulate_conv_cublas_channel_major: %s\n", ok ? "all cases passed" : "FAILED");
    return ok ? 0 : 1;
}
