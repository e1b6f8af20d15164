/* conv_gather.cu (emulation): the convolution without workspace of any layout
   (src/cuda/conv_gather.cu, entries cuda:{fwd,dgrad,wgrad}_igemm_gather_64x128x16_s3) with every
   thread's own logic run on the CPU, against the double-precision reference of tests/ref: the
   plan (gat_make on a handle of compute capability 9.0 with 132 multiprocessors), its binding,
   and the kernel as launched: every CTA of the grid (M tiles, N tiles, splits x groups), splits
   in order as their counters make them store, each K tile loaded by every thread's loaders
   (gat_load: 4-byte cp.async as host copies for fp32, loads converted for 16-bit data) into its
   stage, then each warp's two k-steps through mma.cuh's ldmatrix addresses with ldmatrix and
   mma.sync m16n8k8 TF32 emulated from the PTX ISA (mma_emulate.h), then each lane's store
   (gat_store: the run-time-typed store of conv_store.cuh, or a later split's add). Shared memory
   starts poisoned (NaN), so that a read of what nothing wrote shows; the destination is random
   (beta reads it) or NaN at beta 0.

   Cases: every direction on NCHW and NHWC data (the K order channels fastest on NHWC), fp32,
   fp16 and bf16; 3x3 pad 1 at stride 1 and 2, a strided 1x1 (backward data: three quarters of
   dx receiving nothing), dilation 2 in CONVOLUTION mode, groups, rectangular filters; partial
   tiles in M and N; alpha and beta; the filter gradient split (fp32 dw, and 16-bit dw through
   fp32 running sums poisoned beforehand) and not.
   Results must lie within TF32 rounding of the operands (2^-10 of the sum of |a b| terms; fp16
   and bf16 operands are exact) plus the destination's rounding. The plan must decline below
   compute capability 8.0, under FMA math, for double data, for mixed types and for 3-D
   problems. Prints a line per case; exits 1 if any fails. */
#include "cuda/conv_gather.cu"

extern "C" {
#include "ref/conv.h"
}

#include "conv_emulate.h"
#include "emu_handle.h"
#include "mma_emulate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

/* The kernel of gat_run for direction DIR and type T, every thread of every CTA. */
template <int DIR, typename T> void emulate(const gat_params &m, unsigned grid_m, unsigned grid_n)
{
    const int THREADS = gat_tile::THREADS, ACC = gat_tile::MI * gat_tile::NI * 4;
    std::vector<float> smem(gat_tile::STAGES * (gat_sa::STAGE + gat_sb::STAGE), NAN);
    float *sa = smem.data(), *sb = sa + gat_tile::STAGES * gat_sa::STAGE;
    std::vector<gat_load<DIR, true, T>> la(THREADS);
    std::vector<gat_load<DIR, false, T>> lb(THREADS);
    std::vector<float> acc((size_t)THREADS * ACC);
    for (int z = 0; z < m.splits; z++) /* the grid's slowest dimension: a tile's splits store in order */
        for (int g = 0; g < m.groups; g++)
            for (unsigned by = 0; by < grid_n; by++)
                for (unsigned bx = 0; bx < grid_m; bx++) {
                    const int m0 = (int)bx * gat_tile::BM, n0 = (int)by * gat_tile::BN;
                    for (int tid = 0; tid < THREADS; tid++) la[tid].setup(m, m0, g, tid), lb[tid].setup(m, n0, g, tid);
                    std::fill(acc.begin(), acc.end(), 0.f);
                    const int kt0 = z * m.kt_split, nkt = std::min(m.kt_split, m.nkt - kt0);
                    for (int kt = 0; kt < nkt; kt++) {
                        float *ca = sa + (kt % gat_tile::STAGES) * gat_sa::STAGE;
                        float *cb = sb + (kt % gat_tile::STAGES) * gat_sb::STAGE;
                        for (int tid = 0; tid < THREADS; tid++) la[tid].load(ca, kt0 + kt, m), lb[tid].load(cb, kt0 + kt, m);
                        mma_ktile<gat_tile, float, true, true>(acc.data(), ca, cb);
                    }
                    for (int tid = 0; tid < THREADS; tid++) {
                        const int warp = tid / 32;
                        float a[gat_tile::MI][gat_tile::NI][4];
                        memcpy(a, &acc[(size_t)tid * ACC], sizeof a);
                        gat_store(m, DIR, a, m0, n0, g, z, (warp % gat_tile::WARPS_M) * gat_tile::WTM,
                                  (warp / gat_tile::WARPS_M) * gat_tile::WTN, tid % 32);
                    }
                }
}

struct gcase {
    const char *name;
    int dir;
    cudnnDataType_t dt;
    bool nhwc;
    int n, c, k, groups, h, w, r, s, pad, stride, dil;
    bool flip;
    double alpha, beta;
    int splits; /* the filter gradient's split count the plan must choose; 0: any */
};

/* The memory offset of logical NCHW element (a, b, y, x) of dims d in the case's layout. */
int64_t offset_of(const int64_t d[4], bool nhwc, int64_t a, int64_t b, int64_t y, int64_t x)
{
    return nhwc ? ((a * d[2] + y) * d[3] + x) * d[1] + b : ((a * d[1] + b) * d[2] + y) * d[3] + x;
}

/* A view of dims d, packed NCHW or NHWC. */
struct ocd_tensor_view view_of(const int64_t d[4], bool nhwc, cudnnDataType_t dt)
{
    struct ocd_tensor_view v = packed(d);
    if (nhwc) emu_to_nhwc(&v);
    v.dtype = dt;
    return v;
}

/* A tensor of logical dims d held in the case's layout and type, with its values as double
   (logical order) and their magnitudes. */
struct tensor {
    int64_t d[4];
    std::vector<char> mem;
    std::vector<double> val, mag;
};

template <typename T> void fill(tensor &t, bool nhwc, emu_rng &rng, bool poison)
{
    const int64_t count = t.d[0] * t.d[1] * t.d[2] * t.d[3];
    t.mem.assign((size_t)count * sizeof(T), 0);
    t.val.resize(count), t.mag.resize(count);
    T *mem = (T *)t.mem.data();
    int64_t i = 0;
    for (int64_t a = 0; a < t.d[0]; a++)
        for (int64_t b = 0; b < t.d[1]; b++)
            for (int64_t y = 0; y < t.d[2]; y++)
                for (int64_t x = 0; x < t.d[3]; x++, i++) {
                    const float v = rng.next();
                    mem[offset_of(t.d, nhwc, a, b, y, x)] = poison ? (T)NAN : (T)v;
                    t.val[i] = poison ? 0 : (double)(float)(T)v, t.mag[i] = fabs(t.val[i]);
                }
}

template <typename T> double read(const tensor &t, bool nhwc, int64_t i)
{
    const int64_t x = i % t.d[3], y = i / t.d[3] % t.d[2], b = i / (t.d[3] * t.d[2]) % t.d[1],
                  a = i / (t.d[3] * t.d[2] * t.d[1]);
    return (double)(float)((const T *)t.mem.data())[offset_of(t.d, nhwc, a, b, y, x)];
}

template <typename T> bool run_typed(const gcase &c, cudnnHandle_t h)
{
    struct ref_conv rc;
    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    emu_conv_geometry(&rc, &p.s, c.n, c.c, c.k, c.h, c.w, c.r, c.s, c.pad, c.stride, c.dil, c.flip);
    rc.groups = p.s.groups = c.groups;
    tensor x, w, y;
    const int64_t xd[4] = {c.n, c.c, c.h, c.w}, wd[4] = {c.k, c.c / c.groups, c.r, c.s},
                  yd[4] = {c.n, c.k, rc.out[0], rc.out[1]};
    memcpy(x.d, xd, sizeof xd), memcpy(w.d, wd, sizeof wd), memcpy(y.d, yd, sizeof yd);
    p.dir = (enum ocd_conv_dir)c.dir;
    p.x = view_of(xd, c.nhwc, c.dt), p.y = view_of(yd, c.nhwc, c.dt), p.w = view_of(wd, c.nhwc, c.dt);
    p.w_format = c.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    p.compute = CUDNN_DATA_FLOAT, p.math = CUDNN_DEFAULT_MATH;
    p.alpha = c.alpha, p.beta = c.beta;
    emu_rng rng = {(uint32_t)(c.n * 131 + c.c * 17 + c.k * 7 + c.dir)};
    tensor *dst = c.dir == OCD_CONV_FWD ? &y : c.dir == OCD_CONV_BWD_DATA ? &x : &w;
    for (tensor *t : {&x, &w, &y}) fill<T>(*t, c.nhwc, rng, t == dst && c.beta == 0);
    p.x_data = x.mem.data(), p.w_data = w.mem.data(), p.y_data = y.mem.data();

    gat_plan pl;
    if (const char *why = gat_make(h, &p, &pl)) {
        printf("FAIL %s: the plan declines: %s\n", c.name, why);
        return false;
    }
    if (c.splits && pl.prm.splits != c.splits) {
        printf("FAIL %s: %d splits, want %d\n", c.name, pl.prm.splits, c.splits);
        return false;
    }
    gat_params m = gat_bind(&p, &pl);
    std::vector<char> scratch(gat_scratch_bytes(&pl));
    if (m.splits > 1) { /* the counters zeroed, the running sums poisoned: a first split writes them */
        memset(scratch.data(), 0, gat_counter_bytes(&pl));
        for (int64_t i = 0; i < pl.sums; i++) ((float *)(scratch.data() + gat_counter_bytes(&pl)))[i] = NAN;
        gat_bind_scratch(&pl, scratch.data(), &m);
    }
    if (c.dir == OCD_CONV_FWD) emulate<OCD_CONV_FWD, T>(m, pl.grid_m, pl.grid_n);
    else if (c.dir == OCD_CONV_BWD_DATA) emulate<OCD_CONV_BWD_DATA, T>(m, pl.grid_m, pl.grid_n);
    else emulate<OCD_CONV_BWD_FILTER, T>(m, pl.grid_m, pl.grid_n);

    const size_t nd = dst->val.size();
    std::vector<double> want(nd), bound(nd);
    if (c.dir == OCD_CONV_FWD) ref_conv_fwd(&rc, x.val.data(), w.val.data(), want.data()), ref_conv_fwd(&rc, x.mag.data(), w.mag.data(), bound.data());
    else if (c.dir == OCD_CONV_BWD_DATA) ref_conv_bwd_data(&rc, y.val.data(), w.val.data(), want.data()), ref_conv_bwd_data(&rc, y.mag.data(), w.mag.data(), bound.data());
    else ref_conv_bwd_filter(&rc, x.val.data(), y.val.data(), want.data()), ref_conv_bwd_filter(&rc, x.mag.data(), y.mag.data(), bound.data());
    const double ulp = c.dt == CUDNN_DATA_FLOAT ? 6e-8 : c.dt == CUDNN_DATA_HALF ? 4.9e-4 : 3.9e-3;
    const double tf32 = c.dt == CUDNN_DATA_FLOAT ? 1.2e-3 : 0; /* both operands rounded to tf32 */
    for (size_t i = 0; i < nd; i++) {
        const double v = c.alpha * want[i] + c.beta * dst->val[i];
        const double tol = fabs(c.alpha) * (tf32 + 1e-5) * bound[i] + ulp * fabs(v) + 1e-5 * (1 + fabs(c.beta * dst->val[i]));
        const double got = read<T>(*dst, c.nhwc, (int64_t)i);
        if (!(fabs(got - v) <= tol)) {
            printf("FAIL %s: element %zu = %.7g, want %.7g (tolerance %.3g)\n", c.name, i, got, v, tol);
            return false;
        }
    }
    printf("ok   %s (grid %u x %u x %d, %d split%s, K %s fastest)\n", c.name, pl.grid_m, pl.grid_n,
           m.splits * m.groups, m.splits, m.splits > 1 ? "s" : "", m.cfast ? "channels" : "taps");
    return true;
}

bool run_case(const gcase &c, cudnnHandle_t h)
{
    switch (c.dt) {
    case CUDNN_DATA_HALF: return run_typed<__half>(c, h);
    case CUDNN_DATA_BFLOAT16: return run_typed<__nv_bfloat16>(c, h);
    default: return run_typed<float>(c, h);
    }
}

/* A case the plan must decline with a reason holding `declines`, after `change` alters it. */
template <class F> bool declines(const char *name, cudnnHandle_t h, const char *declines, F change)
{
    struct ref_conv rc;
    struct ocd_conv_problem p;
    emu_nchw_float_problem(&rc, &p, OCD_CONV_FWD, 2, 8, 16, 1, 7, 7, 3, 1, 1, 1, false, 1, 0);
    struct cudnnContext ctx = *h;
    change(p, ctx);
    gat_plan pl;
    return emu_plan_verdict(name, gat_make(&ctx, &p, &pl), declines) == 1;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 132);
    const int F = OCD_CONV_FWD, D = OCD_CONV_BWD_DATA, W = OCD_CONV_BWD_FILTER;
    const cudnnDataType_t F32 = CUDNN_DATA_FLOAT, F16 = CUDNN_DATA_HALF, BF16 = CUDNN_DATA_BFLOAT16;
    const gcase cases[] = {
        /* name, dir, type, nhwc, n c k groups, h w r s, pad stride dil, flip, alpha beta, splits */
        {"fwd_nchw_f32_3x3", F, F32, false, 2, 12, 20, 1, 9, 9, 3, 3, 1, 1, 1, false, 1, 0, 0},
        {"fwd_nhwc_f16_3x3_stride2_beta", F, F16, true, 3, 16, 136, 1, 11, 10, 3, 3, 1, 2, 1, false, 0.5, 0.25, 0},
        {"fwd_nchw_bf16_dil2_convolution", F, BF16, false, 2, 6, 10, 1, 9, 8, 3, 3, 2, 1, 2, true, 1, 1, 0},
        {"fwd_nchw_f32_groups_rect", F, F32, false, 2, 8, 12, 2, 7, 9, 3, 1, 1, 1, 1, false, 2, 0, 0},
        {"dgrad_nchw_f32_3x3", D, F32, false, 2, 20, 12, 1, 9, 9, 3, 3, 1, 1, 1, false, 1, 0, 0},
        {"dgrad_nchw_f32_3x3_stride2_convolution", D, F32, false, 2, 9, 14, 1, 11, 10, 3, 3, 1, 2, 1, true, 1, 0.5, 0},
        {"dgrad_nhwc_f16_1x1_stride2", D, F16, true, 3, 136, 24, 1, 10, 12, 1, 1, 0, 2, 1, false, 1, 0, 0},
        {"dgrad_nhwc_bf16_groups_dil2", D, BF16, true, 2, 8, 12, 4, 9, 9, 3, 3, 2, 1, 2, false, 1.5, 0, 0},
        {"wgrad_nchw_f32_3x3_split", W, F32, false, 4, 8, 16, 1, 16, 16, 3, 3, 1, 1, 1, false, 1, 0, 4},
        {"wgrad_nhwc_f32_stride2_beta", W, F32, true, 3, 16, 70, 1, 11, 9, 3, 3, 1, 2, 1, false, 0.5, 0.5, 0},
        {"wgrad_nchw_f16_convolution_groups", W, F16, false, 2, 12, 8, 2, 9, 9, 3, 3, 1, 1, 1, true, 1, 0, 1},
        {"wgrad_nhwc_bf16_1x1_stride2_two_tiles", W, BF16, true, 2, 144, 72, 1, 8, 8, 1, 1, 0, 2, 1, false, 1, 1, 1},
        /* a 16-bit dw split, its running sums in fp32 */
        {"wgrad_nhwc_f16_3x3_split_beta", W, F16, true, 8, 8, 16, 1, 16, 16, 3, 3, 1, 1, 1, false, 1, 0.5, 8},
        {"wgrad_nchw_bf16_split_convolution_alpha", W, BF16, false, 6, 12, 8, 1, 14, 14, 3, 3, 1, 1, 1, true, 0.5, 0,
         4},
    };
    bool ok = true;
    for (const gcase &c : cases) ok &= run_case(c, &ctx);
    typedef struct ocd_conv_problem P;
    typedef struct cudnnContext H;
    ok &= declines("sm75", &ctx, OCD_REASON_ARCH, [](P &, H &h) { h.cc_major = 7; });
    ok &= declines("fma_math", &ctx, OCD_REASON_MATH, [](P &p, H &) { p.math = CUDNN_FMA_MATH; });
    ok &= declines("double", &ctx, OCD_REASON_DTYPE, [](P &p, H &) { p.x.dtype = p.y.dtype = p.w.dtype = CUDNN_DATA_DOUBLE; });
    ok &= declines("mixed_types", &ctx, "one type", [](P &p, H &) { p.y.dtype = CUDNN_DATA_HALF; });
    ok &= declines("three_d", &ctx, OCD_REASON_RANK, [](P &p, H &) { p.s.nsp = 3; });
    printf("emulate_conv_gather: %s\n", ok ? "all cases passed" : "FAILED");
    return ok ? 0 : 1;
}
