/* conv_winograd.cu (emulation): the CUDA Winograd convolution of src/cuda/conv_winograd.cu run on
   the CPU. Its per-thread functions (filter_thread, dy_thread, input_thread, output_thread,
   dw_thread, written __host__ __device__ for this) run for every thread index of their launches,
   on the arguments the launch uses (args_of, counts_of: the same plan and workspace layout); a
   plain batched GEMM in double stands in for cuBLAS. Each case (every direction, F(2x2,3x3),
   F(4x4,3x3), F(2x2,5x5) and the filter gradient's F(3x3,2x2), F(5x5,2x2), padding from 0 to
   above the filter, CONVOLUTION mode, groups, odd sizes with partial edge tiles, the transformed
   operands in half as the tensor-core flavour keeps them) is compared with a direct
   double-precision convolution; a result must be within 1e-4 of the largest value (1e-2 with
   half operands). Prints a line per case; exits 1 if any differs. */
#include "cuda/conv_winograd.cu"

#include "conv_emulate.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

struct emu_case {
    const char *name;
    int dir;
    bool nonfused, flip, half_operands;
    int n, c, k, groups, in[2], filt, pad[2];
};

emu_rng rng = {2026};

struct host_store {
    float *dst;
    void operator()(int64_t off, int64_t, float v) const
    {
        dst[off] = v;
    }
};

template <typename S> float operand(const void *base, int64_t i)
{
    return to_float(((const S *)base)[i]);
}

/* Every thread of the three launches, and the GEMM between them, as run_sizes orders them. */
template <int M, int R, typename S>
void emulate(const struct ocd_conv_problem *p, const struct ocd_conv_wino_plan *pl, char *ws, float *dst)
{
    const wino_args a = args_of(p, pl, ws);
    const wino_counts c = counts_of(a);
    for (int64_t e = 0; e < c.filter; e++) {
        if (a.dir == OCD_CONV_BWD_FILTER) dy_thread<M, R, float, S>(a, e);
        else filter_thread<M, R, float, S>(a, e);
    }
    for (int64_t e = 0; e < c.input; e++) input_thread<M, R, float, S>(a, e);
    for (int64_t b = 0; b < pl->batch; b++)
        for (int64_t i = 0; i < pl->gm; i++)
            for (int64_t j = 0; j < pl->gn; j++) {
                double acc = 0;
                for (int64_t k = 0; k < pl->gk; k++) {
                    int64_t vi = pl->trans_b ? j * pl->ldb + k : k * pl->ldb + j;
                    acc += (double)operand<S>(a.u, b * pl->stride_a + i * pl->lda + k) *
                           operand<S>(a.v, b * pl->stride_b + vi);
                }
                a.m[b * pl->stride_c + i * pl->ldc + j] = (float)acc;
            }
    host_store st = {dst};
    for (int64_t e = 0; e < c.output; e++) {
        if (a.dir == OCD_CONV_BWD_FILTER) dw_thread<M, R>(a, e, st);
        else output_thread<M, R>(a, e, st);
    }
}

template <typename S>
void emulate_sizes(const struct ocd_conv_problem *p, const struct ocd_conv_wino_plan *pl, char *ws, float *dst)
{
    switch (pl->m * 8 + pl->r) {
    case 2 * 8 + 3: emulate<2, 3, S>(p, pl, ws, dst); return;
    case 4 * 8 + 3: emulate<4, 3, S>(p, pl, ws, dst); return;
    case 2 * 8 + 5: emulate<2, 5, S>(p, pl, ws, dst); return;
    case 3 * 8 + 2: emulate<3, 2, S>(p, pl, ws, dst); return;
    default: emulate<5, 2, S>(p, pl, ws, dst); return;
    }
}

bool run_case(const emu_case &e)
{
    struct ocd_conv_problem p;
    std::vector<float> x, w, y;
    const int filt[2] = {e.filt, e.filt};
    emu_conv_problem(&p, e.dir, e.n, e.c, e.k, e.groups, e.in, filt, e.pad, e.flip, rng, x, w, y);

    struct ocd_conv_wino_plan pl;
    if (ocd_conv_wino_plan_init(&pl, &p, e.nonfused) != NULL) {
        printf("  %-40s FAILED: not planned\n", e.name);
        return false;
    }
    std::vector<float> ws(ocd_conv_wino_workspace(&pl) / sizeof(float), NAN);
    const struct ocd_tensor_view *dv = ocd_conv_dst_view(&p);
    std::vector<float> got((size_t)ocd_view_count(dv), NAN);
    if (e.half_operands) emulate_sizes<__half>(&p, &pl, (char *)ws.data(), got.data());
    else emulate_sizes<float>(&p, &pl, (char *)ws.data(), got.data());

    std::vector<double> want(got.size(), 0.0);
    emu_conv_reference(p, x, w, y, want);
    double scale = 1e-30, worst = 0;
    for (size_t i = 0; i < want.size(); i++) scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < want.size(); i++) {
        double d = fabs(got[i] - want[i]);
        worst = std::isnan(d) ? INFINITY : fmax(worst, d);
    }
    const double tol = e.half_operands ? 1e-2 : 1e-4;
    bool ok = worst <= tol * scale;
    printf("  %-40s F(%dx%d,%dx%d) %s (largest error %.3g of %.3g)\n", e.name, pl.m, pl.m, pl.r, pl.r,
           ok ? "ok" : "FAILED", worst, scale);
    return ok;
}

} // namespace

int main()
{
    const int F = OCD_CONV_FWD, D = OCD_CONV_BWD_DATA, W = OCD_CONV_BWD_FILTER;
    /* {name, dir, nonfused, flip, half_operands, n, c, k, groups, in, filt, pad} */
    static const emu_case cases[] = {
        {"fwd 3x3 pad1", F, false, false, false, 2, 3, 4, 1, {8, 9}, 3, {1, 1}},
        {"fwd 3x3 nonfused odd pad0", F, true, false, false, 1, 5, 3, 1, {11, 7}, 3, {0, 0}},
        {"fwd 3x3 nonfused convolution groups", F, true, true, false, 2, 4, 6, 2, {9, 6}, 3, {1, 2}},
        {"fwd 5x5 nonfused pad above filter", F, true, false, false, 1, 2, 3, 1, {6, 5}, 5, {2, 5}},
        {"fwd 3x3 half operands", F, false, false, true, 2, 8, 4, 1, {10, 10}, 3, {1, 1}},
        {"fwd 3x3 nonfused half operands", F, true, false, true, 2, 8, 4, 1, {10, 10}, 3, {1, 1}},
        {"dgrad 3x3 pad1 convolution", D, false, true, false, 2, 3, 4, 1, {8, 9}, 3, {1, 1}},
        {"dgrad 3x3 nonfused pad above filter", D, true, false, false, 1, 2, 3, 1, {5, 4}, 3, {3, 4}},
        {"dgrad 5x5 nonfused groups", D, true, false, false, 2, 4, 2, 2, {9, 11}, 5, {2, 1}},
        {"dgrad 3x3 nonfused half operands", D, true, true, true, 1, 6, 8, 1, {7, 12}, 3, {1, 0}},
        {"wgrad 3x3 nonfused pad1", W, true, false, false, 2, 3, 4, 1, {8, 9}, 3, {1, 1}},
        {"wgrad 3x3 nonfused convolution groups", W, true, true, false, 2, 4, 6, 2, {7, 6}, 3, {0, 2}},
        {"wgrad 5x5 nonfused odd", W, true, false, false, 1, 3, 2, 1, {11, 9}, 5, {2, 3}},
        {"wgrad 3x3 nonfused half operands", W, true, false, true, 2, 4, 4, 1, {8, 8}, 3, {1, 1}},
    };
    int failed = 0;
    printf("emulate_conv_winograd: the CUDA Winograd kernels' per-thread code on the CPU\n");
    for (const emu_case &e : cases) failed += !run_case(e);
    printf("%d of %d cases failed\n", failed, (int)(sizeof cases / sizeof cases[0]));
    return failed ? 1 : 0;
}
