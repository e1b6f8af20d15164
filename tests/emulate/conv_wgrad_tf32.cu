/* conv_wgrad_tf32.cu (emulation): the TF32 filter gradient of NCHW float data
   (src/cuda/conv_wgrad_tf32.cu, entry cuda:wgrad_nchw_tf32_64x128x16_s3) with every thread's own
   logic run on the CPU, against the double-precision reference of tests/ref: the plan
   (wgt_plan_fn on a handle of compute capability 9.0 with 132 multiprocessors), its binding (wgt_bind), and both kernels as launched: every CTA of the
   grid (column tiles, filter tiles, splits), each K tile of its split loaded by every thread's
   loaders (wgt_load_a, wgt_load_b: cp.async, 16- and 4-byte, as host copies) into its stage,
   then each warp's two k-steps through mma.cuh's ldmatrix addresses with ldmatrix and mma.sync
   m16n8k8 TF32 emulated from the PTX ISA (mma_emulate.h), each lane's partial store
   (wgt_store_part), then the reduction (wgt_reduce_one) for every element. Shared memory and
   the workspace start poisoned (NaN), so that a read of what nothing wrote shows.

   Cases: 3x3 pad 1 stride 1 and 2, 1x1 stride 1 (x read as it lies, wgt_load_x1), stride 2 and
   padded (x gathered), 3x3 dilation 2 in CONVOLUTION mode; odd
   spatial sizes (P Q not a multiple of 4: dy chunks across images and misaligned ones) and
   multiples of 4 (the 16-byte path); partial tiles in filters and columns (two tiles of each);
   one split, several, and the plan's own choice; alpha and beta (dw read); fewer than 8
   channels (the entry serves them ahead of the stem's). Results must lie within TF32 rounding of the
   operands (2^-10 of the sum of |x dy| terms) plus fp32 summation. The plan must decline
   below compute capability 8.0, under FMA math, for groups, for NHWC data, for half data and
   for images of fewer than 100 output pixels with 64 channels or more (cuBLAS's column matrix
   serves those). Prints a line per case;
   exits 1 if any fails. */
#include "cuda/conv_wgrad_tf32.cu"

extern "C" {
#include "ref/conv.h"
}

#include "conv_emulate.h"
#include "emu_handle.h"
#include "mma_emulate.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

/* Both kernels of wgt_run (B loaded by LB), every thread of every CTA. */
template <class LB> void emulate(const wgt_params &m)
{
    const int THREADS = wgt_tile::THREADS, ACC = wgt_tile::MI * wgt_tile::NI * 4;
    std::vector<float> smem(wgt_tile::STAGES * (wgt_sa::STAGE + wgt_sb::STAGE), NAN);
    float *sa = smem.data(), *sb = sa + wgt_tile::STAGES * wgt_sa::STAGE;
    std::vector<wgt_load_a> la(THREADS);
    std::vector<LB> lb(THREADS);
    std::vector<float> acc((size_t)THREADS * ACC);
    for (int z = 0; z < m.splits; z++)
        for (int m0 = 0; m0 < m.m; m0 += wgt_tile::BM)
            for (int n0 = 0; n0 < m.n; n0 += wgt_tile::BN) {
                for (int tid = 0; tid < THREADS; tid++) la[tid].setup(m, m0, tid), lb[tid].setup(m, n0, tid);
                std::fill(acc.begin(), acc.end(), 0.f);
                const int kt0 = z * m.kt_split, nkt = std::min(m.kt_split, m.nkt - kt0);
                for (int kt = 0; kt < nkt; kt++) {
                    float *ca = sa + (kt % wgt_tile::STAGES) * wgt_sa::STAGE;
                    float *cb = sb + (kt % wgt_tile::STAGES) * wgt_sb::STAGE;
                    for (int tid = 0; tid < THREADS; tid++) la[tid].load(ca, kt0 + kt, m), lb[tid].load(cb, kt0 + kt, m);
                    mma_ktile<wgt_tile, float, true, true>(acc.data(), ca, cb);
                }
                for (int tid = 0; tid < THREADS; tid++) {
                    int warp = tid / 32;
                    float a[wgt_tile::MI][wgt_tile::NI][4];
                    memcpy(a, &acc[(size_t)tid * ACC], sizeof a);
                    wgt_store_part(m, a, m0, n0, (warp % wgt_tile::WARPS_M) * wgt_tile::WTM,
                                   (warp / wgt_tile::WARPS_M) * wgt_tile::WTN, tid % 32, z);
                }
            }
    for (int idx = 0; idx < m.m * m.n; idx++) wgt_reduce_one(m, idx);
}

struct wcase {
    const char *name;
    int n, c, k, h, w, r, pad, stride, dil;
    bool flip;
    int splits; /* 0: the plan's choice */
    double alpha, beta;
    bool dense; /* the plan must read x as it lies (wgt_load_x1) */
};

/* The problem of a case on packed NCHW tensors (dy's images `gap` floats apart beyond packed). */
void problem_of(const wcase &c, struct ref_conv *rc, struct ocd_conv_problem *p)
{
    emu_nchw_float_problem(rc, p, OCD_CONV_BWD_FILTER, c.n, c.c, c.k, 1, c.h, c.w, c.r, c.pad, c.stride, c.dil, c.flip,
                           c.alpha, c.beta);
}

bool run_case(const wcase &c, cudnnHandle_t h)
{
    struct ref_conv rc;
    struct ocd_conv_problem p;
    problem_of(c, &rc, &p);
    wgt_plan pl;
    const char *why = wgt_plan_fn(h, &p, &pl);
    if (why) {
        printf("FAIL %s: the plan declines: %s\n", c.name, why);
        return false;
    }
    if (c.splits) {
        ocd_mma_split_k(pl.prm.nkt, c.splits, 1, c.splits, &pl.prm.kt_split, &pl.prm.splits);
        pl.ws_bytes = (size_t)pl.prm.splits * pl.prm.m * pl.prm.n * sizeof(float);
    }
    emu_rng rng = {(uint32_t)(c.n * 131 + c.c * 17 + c.k)};
    emu_wgrad_data d = emu_wgrad_case(&rc, rng, c.alpha, c.beta);
    std::vector<float> &x = d.x, &dy = d.dy, &dw = d.dw, ws(pl.ws_bytes / sizeof(float), NAN);
    const std::vector<double> &want = d.want, &bound = d.bound;
    const long nw = (long)dw.size();
    p.x_data = x.data(), p.y_data = dy.data(), p.w_data = dw.data();
    const wgt_params bound_m = wgt_bind(&p, &pl, ws.data());
    if (bound_m.dense != c.dense) {
        printf("FAIL %s: the plan reads x %s\n", c.name, bound_m.dense ? "as it lies" : "gathered");
        return false;
    }
    if (bound_m.dense) emulate<wgt_load_x1>(bound_m);
    else emulate<wgt_load_b>(bound_m);
    for (long i = 0; i < nw; i++) {
        double tol = fabs(c.alpha) * (1.2e-3 * bound[i]) + 1e-5 * (1 + fabs(want[i]));
        if (!(fabs(dw[i] - want[i]) <= tol)) {
            printf("FAIL %s: dw[%ld] = %.7g, want %.7g (tolerance %.3g)\n", c.name, i, dw[i], want[i], tol);
            return false;
        }
    }
    printf("ok   %s (%d split%s of %d K tiles, x %s)\n", c.name, pl.prm.splits, pl.prm.splits > 1 ? "s" : "",
           pl.prm.kt_split, c.dense ? "as it lies" : "gathered");
    return true;
}

/* A case the plan must decline with a reason holding `declines`, after `change` alters it. */
template <class F> bool declines(const char *name, cudnnHandle_t h, const char *declines, F change)
{
    const wcase c = {name, 2, 8, 16, 7, 7, 3, 1, 1, 1, false, 1, 1, 0, false};
    struct ref_conv rc;
    struct ocd_conv_problem p;
    problem_of(c, &rc, &p);
    struct cudnnContext ctx = *h;
    change(p, ctx);
    wgt_plan pl;
    return emu_plan_verdict(name, wgt_plan_fn(&ctx, &p, &pl), declines) == 1;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 132);
    const wcase cases[] = {
        {"3x3_pad1_odd_spatial", 2, 8, 16, 7, 7, 3, 1, 1, 1, false, 1, 1, 0, false},
        {"3x3_pad1_splits3_alpha_beta", 2, 8, 16, 7, 7, 3, 1, 1, 1, false, 3, 0.5, 0.25, false},
        {"3x3_stride2_two_filter_tiles", 3, 5, 70, 9, 11, 3, 1, 2, 1, false, 2, 1, 0, false},
        {"1x1_two_column_tiles_splits4", 2, 130, 8, 10, 10, 1, 0, 1, 1, false, 4, 1, 0, true},
        {"1x1_aligned_beta", 3, 20, 12, 4, 4, 1, 0, 1, 1, false, 2, 1, 0.5, true},
        {"1x1_stride2_aligned", 2, 16, 32, 8, 8, 1, 0, 2, 1, false, 2, 1, 1, false},
        {"1x1_pad1_gathered", 2, 6, 8, 5, 6, 1, 1, 1, 1, false, 2, 1, 0, false},
        {"3x3_dil2_convolution_aligned", 2, 4, 8, 8, 8, 3, 2, 1, 2, true, 2, 1, 1, false},
        {"3x3_plan_splits", 4, 8, 8, 16, 16, 3, 1, 1, 1, false, 0, 1, 0, false},
        {"1x1_tiny_images", 5, 3, 3, 1, 3, 1, 0, 1, 1, false, 3, 2, 0, true},
    };
    bool ok = true;
    for (const wcase &c : cases) ok &= run_case(c, &ctx);
    typedef struct ocd_conv_problem P;
    typedef struct cudnnContext H;
    ok &= declines("sm75", &ctx, OCD_REASON_ARCH, [](P &, H &h) { h.cc_major = 7; });
    ok &= declines("fma_math", &ctx, OCD_REASON_MATH, [](P &p, H &) { p.math = CUDNN_FMA_MATH; });
    ok &= declines("groups", &ctx, "one group", [](P &p, H &) { p.s.groups = 2; });
    ok &= declines("half", &ctx, OCD_REASON_DTYPE, [](P &p, H &) { p.x.dtype = p.y.dtype = p.w.dtype = CUDNN_DATA_HALF; });
    ok &= declines("few_pixels_many_channels", &ctx, "fewer than 100 output pixels", [](P &p, H &) { p.s.c = 64; });
    ok &= declines("nhwc", &ctx, "NCHW", [](P &p, H &) {
        p.x.strides[1] = 1, p.x.strides[3] = p.x.dims[1], p.x.strides[2] = p.x.dims[1] * p.x.dims[3];
    });
    printf("emulate_conv_wgrad_tf32: %s\n", ok ? "all cases passed" : "FAILED");
    return ok ? 0 : 1;
}
