/* conv_cublas_slabs.cu (emulation): the per-image filter gradient of the cuBLAS entries
   (src/cuda/conv_cublas.cu, entries cuda:wgrad_nchw_gemm_cublas*) on the CPU, against the
   double-precision reference of tests/ref: the plan (make_plan with per_image, then
   per_image_rejects, on a handle of compute capability 9.0 with 132 multiprocessors), the column
   matrix by the im2col kernel's own per-thread code where the filter is not a unit 1x1, each
   group's strided-batched GEMM as per_image_gemm describes it (cublas_emulate.h's emu_gemm, a
   plain loop in double standing in for cuBLAS), then the slab sum (ocd_slab_lane for every column and lane of every block,
   ocd_slab_store) with alpha and beta. The workspace starts poisoned (NaN), so that a read of
   what nothing wrote shows; dw must lie within fp32 summation of the reference.

   Cases: a 1x1 filter at unit stride (x the operand as it lies), the strided 1x1 of a
   downsampling shortcut and a 3x3 filter at stride 2 in CONVOLUTION mode (both through the column
   matrix), two groups, more images than the sum's lanes (19: lanes of unequal length), alpha and
   beta. The plan must decline NHWC data, images of few pixels (slabs outweighing the operands)
   and a 3x3 filter at unit stride (a column matrix over 9/4 of x). Then every ResNet-50 v1.5
   layer at batch 64 (bench/resnet50_shapes.h), float NCHW: the layers the plan takes must be
   exactly the list below (the 1x1 layers of 28x28 pixels and more, the stride-2 layers out of
   56x56), each printed with its workspace. Prints a line per case; exits 1 if any fails. */
#include "cuda/conv_cublas.cu"

extern "C" {
#include "ref/conv.h"
}

#include "conv_emulate.h"
#include "cublas_emulate.h"
#include "emu_handle.h"

#include "../../bench/resnet50_shapes.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct scase {
    const char *name;
    int n, c, k, groups, h, w, r, pad, stride;
    bool flip;
    double alpha, beta;
    bool direct; /* the plan must read x as it lies */
};

/* The problem of a case on packed NCHW float tensors, the filter KCRS. */
void problem_of(const scase &c, struct ref_conv *rc, struct ocd_conv_problem *p)
{
    emu_nchw_float_problem(rc, p, OCD_CONV_BWD_FILTER, c.n, c.c, c.k, c.groups, c.h, c.w, c.r, c.pad, c.stride, 1,
                           c.flip, c.alpha, c.beta);
}

/* The plan's verdict on p: make_plan for the per-image entries, then their own test. */
const char *plan_of(cudnnHandle_t h, const struct ocd_conv_problem *p, cublas_plan *pl)
{
    const char *why = make_plan(h, p, true, true, pl);
    return why ? why : per_image_rejects(p, *pl);
}

bool run_case(const scase &c, cudnnHandle_t h)
{
    struct ref_conv rc;
    struct ocd_conv_problem p;
    problem_of(c, &rc, &p);
    cublas_plan pl;
    if (const char *why = plan_of(h, &p, &pl)) {
        printf("FAIL %s: the plan declines: %s\n", c.name, why);
        return false;
    }
    if (pl.direct != c.direct) {
        printf("FAIL %s: the plan reads x %s\n", c.name, pl.direct ? "as it lies" : "through the column matrix");
        return false;
    }
    emu_rng rng = {(uint32_t)(c.n * 131 + c.c * 17 + c.k)};
    emu_wgrad_data d = emu_wgrad_case(&rc, rng, c.alpha, c.beta);
    std::vector<float> &x = d.x, &dy = d.dy, &dw = d.dw, wsv(pl.ws_bytes / sizeof(float) + 64, NAN);
    const std::vector<double> &want = d.want, &bound = d.bound;
    const long nw = (long)dw.size();

    /* as cublas_run and run_typed: the workspace aligned to 256 bytes, col then the slabs */
    char *ws = (char *)(((uintptr_t)wsv.data() + 255) & ~(uintptr_t)255);
    float *col = (float *)(ws + pl.ws_col), *part = (float *)(ws + pl.ws_part);
    if (!pl.direct) {
        const col_rows cr = col_rows_of(pl.gm, x.data(), sizeof(float));
        cublas_im2col_range<float>(x.data(), col, cr, 0, 1);
    }
    for (int64_t gi = 0; gi < pl.gm.g; gi++)
        emu_gemm(per_image_gemm(pl, p.s.k, gi), 1.0, dy.data(), pl.direct ? x.data() : col, part);
    const int64_t count = p.s.k * pl.gm.kc;
    const int blocks = (int)((count + OCD_SLAB_COLS - 1) / OCD_SLAB_COLS);
    for (int blk = 0; blk < blocks; blk++)
        for (int tx = 0; tx < OCD_SLAB_COLS; tx++) {
            const int64_t i = (int64_t)blk * OCD_SLAB_COLS + tx;
            float lanes[OCD_SLAB_LANES];
            for (int l = 0; l < OCD_SLAB_LANES; l++) lanes[l] = ocd_slab_lane(part, (int)pl.chunks, count, i, l);
            if (i < count) ocd_slab_store<float, float>(lanes, dw.data(), i, (float)c.alpha, (float)c.beta);
        }
    for (long i = 0; i < nw; i++) {
        const double tol = 1e-5 * (fabs(c.alpha) * bound[i] + fabs(c.beta * dw[i]) + 1);
        if (!(fabs(dw[i] - want[i]) <= tol)) {
            printf("FAIL %s: dw[%ld] = %.7g, want %.7g (tolerance %.3g)\n", c.name, i, dw[i], want[i], tol);
            return false;
        }
    }
    printf("ok   %s (%ld slabs, x %s, %zu workspace bytes)\n", c.name, (long)pl.chunks,
           pl.direct ? "as it lies" : "through the column matrix", pl.ws_bytes);
    return true;
}

/* A case the plan must decline with a reason holding `declines`. */
bool declines(const scase &c, cudnnHandle_t h, const char *declines, bool nhwc)
{
    struct ref_conv rc;
    struct ocd_conv_problem p;
    problem_of(c, &rc, &p);
    if (nhwc) emu_to_nhwc(&p.x), emu_to_nhwc(&p.y);
    cublas_plan pl;
    return emu_plan_verdict(c.name, plan_of(h, &p, &pl), declines) == 1;
}

/* ResNet-50's layers at batch 64: the plan must take exactly the layers of `served`. */
bool resnet_layers(cudnnHandle_t h)
{
    static const char *const served[] = {"l1_1x1_64_64",   "l1_1x1_64_256",    "l1_1x1_256_64",
                                         "l2_1x1_256_128", "l2_3x3s2_128_128", "l2_ds_256_512",
                                         "l2_1x1_128_512", "l2_1x1_512_128",   "l3_1x1_512_256"};
    struct layer {
        const char *name;
        int c, k, h, r, pad, stride;
    };
#define RN50_ROW(N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, stride) {#name, c, k, h, r, pad, stride},
    static const layer layers[] = {RN50_SHAPES(RN50_ROW, , , , , , )};
#undef RN50_ROW
    bool ok = true;
    for (const layer &l : layers) {
        const scase c = {l.name, 64, l.c, l.k, 1, l.h, l.h, l.r, l.pad, l.stride, false, 1, 0, false};
        struct ref_conv rc;
        struct ocd_conv_problem p;
        problem_of(c, &rc, &p);
        cublas_plan pl;
        const char *why = plan_of(h, &p, &pl);
        bool want = false;
        for (const char *s : served) want |= strcmp(s, l.name) == 0;
        const bool good = (why == NULL) == want;
        ok &= good;
        if (why) printf("%s %s: declined (%s)\n", good ? "ok  " : "FAIL", l.name, why);
        else printf("%s %s: per image, %.1f MB of workspace\n", good ? "ok  " : "FAIL", l.name, pl.ws_bytes / 1048576.0);
    }
    return ok;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 132);
    const scase cases[] = {
        {"1x1_unit_stride", 3, 20, 12, 1, 6, 5, 1, 0, 1, false, 1, 0, true},
        {"1x1_stride2_alpha_beta", 2, 16, 24, 1, 9, 8, 1, 0, 2, false, 0.5, 0.25, false},
        {"3x3_stride2_convolution", 2, 8, 10, 1, 12, 10, 3, 1, 2, true, 1, 1, false},
        {"1x1_two_groups", 2, 8, 12, 2, 7, 6, 1, 0, 1, false, 1, 0, true},
        {"1x1_19_images", 19, 4, 6, 1, 5, 5, 1, 0, 1, false, 2, 0, true},
    };
    bool ok = true;
    for (const scase &c : cases) ok &= run_case(c, &ctx);
    ok &= declines({"nhwc", 2, 8, 8, 1, 6, 6, 1, 0, 1, false, 1, 0, true}, &ctx, "NCHW data only", true);
    ok &= declines({"few_pixels", 2, 64, 64, 1, 4, 4, 1, 0, 1, false, 1, 0, true}, &ctx, "outweigh", false);
    ok &= declines({"3x3_unit_stride", 2, 8, 8, 1, 16, 16, 3, 1, 1, false, 1, 0, false}, &ctx, "9/4 of x", false);
    ok &= resnet_layers(&ctx);
    printf("emulate_conv_cublas_slabs: %s\n", ok ? "all cases passed" : "FAILED");
    return ok ? 0 : 1;
}
