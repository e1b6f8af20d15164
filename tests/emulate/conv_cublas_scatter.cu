/* conv_cublas_scatter.cu (emulation): the strided 1x1 backward data of the cuBLAS entries into
   packed NCHW dx (src/cuda/conv_cublas.cu, make_plan's scatter: image by image, dcol moved by
   cublas_scatter1x1 instead of col2im) on the CPU, against the double-precision reference of
   tests/ref: the plan (make_plan on a handle of compute capability 9.0 with 132
   multiprocessors), dcol as the per-image GEMMs leave it (dcol[n][c][p q] = the sum over the
   group's filters of w[k][c] dy[n][k][p q], in double, stored as fp32), then the pass's
   per-thread code over every group of four elements of dx, dx once 16-byte aligned (the vector
   store) and once one element past it (element by element). dx starts poisoned (NaN) at beta 0,
   so that a read of it shows; the result must lie within fp32 summation of the reference.

   Cases: stride 2 into even and odd images (14x14 from 7x7, 13x13), strides 2 and 3 of a
   rectangular image, two groups, an element count not a multiple of 4, rows that are not (W =
   22), alpha and beta; the tensor-core and the plain flavours. The plan must not scatter NHWC
   data, unit strides, padding, or images of fewer than 100 output pixels (channel-major there).
   Prints a line per case; exits 1 if any fails. */
#include "cuda/conv_cublas.cu"

extern "C" {
#include "ref/conv.h"
}

#include "conv_emulate.h"
#include "emu_handle.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct scase {
    const char *name;
    int n, c, k, groups, h, w, su, sv;
    double alpha, beta;
    bool tc;
};

/* The problem of a case on packed NCHW float tensors, the filter KCRS (1x1, no padding). */
void problem_of(const scase &c, struct ref_conv *rc, struct ocd_conv_problem *p)
{
    emu_nchw_float_problem(rc, p, OCD_CONV_BWD_DATA, c.n, c.c, c.k, c.groups, c.h, c.w, 1, 0, c.su, 1, false, c.alpha,
                           c.beta);
    if (c.sv != c.su) { /* a stride of its own along w */
        rc->stride[1] = p->s.stride[1] = c.sv;
        ref_conv_out_dims(rc);
        p->s.out[1] = rc->out[1];
        const int64_t yd[4] = {c.n, c.k, rc->out[0], rc->out[1]};
        p->y = packed(yd);
    }
}

bool run_case(const scase &c, cudnnHandle_t h)
{
    struct ref_conv rc;
    struct ocd_conv_problem p;
    problem_of(c, &rc, &p);
    cublas_plan pl;
    if (const char *why = make_plan(h, &p, c.tc, false, &pl)) {
        printf("FAIL %s: the plan declines: %s\n", c.name, why);
        return false;
    }
    if (!pl.scatter) {
        printf("FAIL %s: the plan does not scatter\n", c.name);
        return false;
    }
    emu_rng rng = {(uint32_t)(c.n * 131 + c.c * 17 + c.k * 3 + c.h)};
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    std::vector<float> w(nw), y(ny), x0(nx);
    std::vector<double> wd(nw), yd(ny), wa(nw), ya(ny), want(nx), bound(nx);
    for (long i = 0; i < nw; i++) w[i] = rng.next(), wd[i] = w[i], wa[i] = fabs(wd[i]);
    for (long i = 0; i < ny; i++) y[i] = rng.next(), yd[i] = y[i], ya[i] = fabs(yd[i]);
    for (long i = 0; i < nx; i++) x0[i] = c.beta != 0 ? rng.next() : NAN; /* nothing may read dx at beta 0 */
    ref_conv_bwd_data(&rc, yd.data(), wd.data(), want.data());
    ref_conv_bwd_data(&rc, ya.data(), wa.data(), bound.data());

    /* dcol as the GEMMs of run_typed leave it: [n][c][p q], fp32 */
    const int64_t pq = pl.pq, cg = c.c / c.groups, kg = c.k / c.groups;
    std::vector<float> dcol((size_t)(c.n * c.c * pq));
    for (int64_t n = 0; n < c.n; n++)
        for (int64_t ch = 0; ch < c.c; ch++)
            for (int64_t o = 0; o < pq; o++) {
                const int64_t g = ch / cg;
                double sum = 0;
                for (int64_t k = g * kg; k < (g + 1) * kg; k++) sum += wd[k * cg + ch % cg] * yd[(n * c.k + k) * pq + o];
                dcol[(n * c.c + ch) * pq + o] = (float)sum;
            }
    for (int shift = 0; shift < 2; shift++) { /* dx 16-byte aligned, then one element past it */
        std::vector<float> buf(nx + 8);
        float *dx = (float *)(((uintptr_t)buf.data() + 15) & ~(uintptr_t)15) + shift;
        std::copy(x0.begin(), x0.end(), dx);
        for (uint32_t first = 0; first < pl.sg.quads; first++)
            cublas_scatter1x1_range<float, float>(dcol.data(), dx, pl.sg, (float)c.alpha, (float)c.beta, first, pl.sg.quads);
        for (long i = 0; i < nx; i++) {
            const double v = c.alpha * want[i] + (c.beta != 0 ? c.beta * x0[i] : 0);
            const double tol = 1e-5 * (fabs(c.alpha) * bound[i] + fabs(c.beta) + 1);
            if (!(fabs(dx[i] - v) <= tol)) {
                printf("FAIL %s: dx[%ld] = %.7g, want %.7g (tolerance %.3g, dx %s)\n", c.name, i, dx[i], v, tol,
                       shift ? "misaligned" : "aligned");
                return false;
            }
        }
    }
    printf("ok   %s (%u groups of four)\n", c.name, pl.sg.quads);
    return true;
}

/* A case the plan must not scatter, after `change` alters it. */
template <class F> bool no_scatter(const char *name, cudnnHandle_t h, F change)
{
    const scase c = {name, 2, 8, 16, 1, 28, 28, 2, 2, 1, 0, true};
    struct ref_conv rc;
    struct ocd_conv_problem p;
    problem_of(c, &rc, &p);
    change(p);
    cublas_plan pl;
    const char *why = make_plan(h, &p, true, false, &pl);
    const bool ok = why != NULL || !pl.scatter;
    printf("%s %s: %s\n", ok ? "ok  " : "FAIL", name, why ? why : pl.scatter ? "scatters" : "col2im or channel-major");
    return ok;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 132);
    const scase cases[] = {
        {"stride 2, 20x20 from 10x10", 2, 12, 16, 1, 20, 20, 2, 2, 1, 0, true},
        {"stride 2, 21x23 (odd), alpha beta", 2, 8, 12, 1, 21, 23, 2, 2, 0.5, 0.75, true},
        {"strides 3 and 2, 31x22, plain flavour", 3, 5, 7, 1, 31, 22, 3, 2, 1, 0, false},
        {"stride 2, 28x22, two groups, beta", 2, 16, 12, 2, 28, 22, 2, 2, 1, 1, true},
        {"stride 2, 3 channels of 21x21 (count not a multiple of 4)", 1, 3, 4, 1, 21, 21, 2, 2, 2, 0, true},
    };
    bool ok = true;
    for (const scase &c : cases) ok &= run_case(c, &ctx);
    typedef struct ocd_conv_problem P;
    ok &= no_scatter("NHWC data", &ctx, [](P &p) { emu_to_nhwc(&p.x), emu_to_nhwc(&p.y); });
    ok &= no_scatter("images of fewer than 100 output pixels", &ctx, [](P &p) {
        p.s.in[0] = p.s.in[1] = 14, p.s.out[0] = p.s.out[1] = 7;
        const int64_t xd[4] = {2, 8, 14, 14}, yd[4] = {2, 16, 7, 7};
        p.x = packed(xd), p.y = packed(yd);
    });
    ok &= no_scatter("unit stride", &ctx, [](P &p) {
        p.s.stride[0] = p.s.stride[1] = 1, p.s.out[0] = p.s.out[1] = 28;
        const int64_t yd[4] = {2, 16, 28, 28};
        p.y = packed(yd);
    });
    ok &= no_scatter("padding", &ctx, [](P &p) { p.s.pad[0] = p.s.pad[1] = 1, p.s.out[0] = p.s.out[1] = 15; });
    printf("emulate_conv_cublas_scatter: %s\n", ok ? "all cases passed" : "FAILED");
    return ok ? 0 : 1;
}
