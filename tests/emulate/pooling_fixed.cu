/* pooling_fixed.cu: the fixed-window pooling backward kernels of src/cuda/pooling.cu, their
   per-thread code run on the CPU for every thread index (it is written __host__ __device__ for
   this), against a reference: so that the kernels' logic is checked on machines without a GPU,
   CI's included, and a kernel rewrite can be verified before it meets one.

   Kernels: the NCHW float backward (fixed_backward_thread; max, max propagating NaN, both
   averages) and the channels-last half and bfloat16 one (fixed_backward_pairs_thread; both max
   modes), for 3x3 stride 2 pad 1 and 2x2 stride 2. Inputs: borders, odd sizes, outputs larger
   than the windows reach, tall images (several chunks of steps), values with ties, NaN, +-inf and
   -0, rows of NaN only and of NaN and -inf only (windows whose maximum is -inf, or none), gradients
   over a wide range of exponents, alpha/beta blending. The reference finds each window's first
   maximum in row-major order (cuDNN's rule, ops/pooling.h) and adds the gradients in y's
   row-major order in float, the kernels' order, so dx must match bit for bit; and in double,
   within a tolerance. Prints one line per case and exits 1 if any differs. */
#include "cuda/pooling.cu"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

enum emu_mode { EMU_MAX, EMU_MAX_NAN, EMU_AVG_INCLUDE, EMU_AVG_EXCLUDE };

bool emu_better(double v, double best, bool propagate_nan)
{
    return (propagate_nan ? best == best : v == v) && !(v <= best);
}

/* One case: T half or bfloat16 channels-last (CLAST), or float NCHW. */
template <typename T, int K, bool CLAST>
int emu_case(int N, int C, int H, int W, int mode, bool blend, int seed, int extra)
{
    const int S = 2, P = K == 3 ? 1 : 0;
    const int OH = (H + 2 * P - K) / S + 1 + extra, OW = (W + 2 * P - K) / S + 1 + extra;
    const bool nan = mode == EMU_MAX_NAN, avg = mode >= EMU_AVG_INCLUDE, exclude = mode == EMU_AVG_EXCLUDE;
    auto xi = [&](int n, int c, int h, int w) {
        return CLAST ? (((size_t)n * H + h) * W + w) * C + c : (((size_t)n * C + c) * H + h) * W + w;
    };
    auto yi = [&](int n, int c, int h, int w) {
        return CLAST ? (((size_t)n * OH + h) * OW + w) * C + c : (((size_t)n * C + c) * OH + h) * OW + w;
    };
    srand(seed);
    const size_t nx = (size_t)N * C * H * W, ny = (size_t)N * C * OH * OW;
    std::vector<T> x(nx), dy(ny), dx(nx);
    std::vector<float> xf(nx), dyf(ny), dx0(nx);
    auto set = [](std::vector<T> &t, std::vector<float> &f, size_t i, float v) {
        t[i] = T(v);
        f[i] = fixed_cvt(t[i]); /* the value as stored */
    };
    for (size_t i = 0; i < nx; i++) {
        int r = rand() % 100;
        float v = r < 6 ? NAN : r < 9 ? -INFINITY : r < 11 ? INFINITY : r < 14 ? -0.0f : (float)(rand() % 5 - 2);
        set(x, xf, i, v);
        set(dx, dx0, i, (float)(rand() % 17 - 8) / 4.0f);
    }
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    if (n == 0 && c == 0 && h < 2) set(x, xf, xi(n, c, h, w), NAN); /* windows of NaN only */
                    else if (c % 3 == 1 && h >= 4 && h < 10) /* windows of NaN and -inf only */
                        set(x, xf, xi(n, c, h, w), h >= 8 || rand() % 2 ? -INFINITY : NAN);
                }
    for (size_t i = 0; i < ny; i++) {
        float v = (float)(rand() % 2001 - 1000) / 37.0f;
        if (seed % 3 == 0) /* a wide range of exponents (sums where rounding twice would show), subnormals */
            v = (rand() % 2 ? -1.f : 1.f) * ldexpf(1.0f + (float)(rand() % 2048) / 2048.f, rand() % 42 - 26);
        set(dy, dyf, i, v);
    }

    ocd_pooling_problem p;
    memset(&p, 0, sizeof p);
    p.mode = !avg ? CUDNN_POOLING_MAX
                  : exclude ? CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    p.propagate_nan = nan;
    p.backward = true;
    p.dtype = std::is_same<T, float>::value ? CUDNN_DATA_FLOAT
              : std::is_same<T, __half>::value ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
    p.alpha = blend ? 1.5 : seed % 2 ? 2.0 : 1.0;
    p.beta = blend ? 0.5 : 0.0;
    p.n = N;
    p.c = C;
    p.in[0] = p.out[0] = p.window[0] = p.stride[0] = 1;
    p.in[1] = H;
    p.in[2] = W;
    p.out[1] = OH;
    p.out[2] = OW;
    p.window[1] = p.window[2] = K;
    p.stride[1] = p.stride[2] = S;
    p.pad[1] = p.pad[2] = P;
    const int64_t image = (int64_t)C * H * W, yimage = (int64_t)C * OH * OW; /* strides of n, c, d, h, w: */
    const int64_t xs[2][5] = {{image, (int64_t)H * W, (int64_t)H * W, W, 1}, {image, 1, image, (int64_t)W * C, C}};
    const int64_t ys[2][5] = {{yimage, (int64_t)OH * OW, (int64_t)OH * OW, OW, 1}, {yimage, 1, yimage, (int64_t)OW * C, C}};
    memcpy(p.xs, xs[CLAST], sizeof p.xs);
    memcpy(p.ys, ys[CLAST], sizeof p.ys);
    p.x = x.data();
    p.dy = dy.data();
    p.dx = dx.data();

    fixed_args<float> a;
    uint32_t threads;
    if constexpr (CLAST) {
        typedef fixed_shape<K, 2, P, 1> B;
        threads = fixed_plan<T, 8, true, B, true>(&p, a);
        for (uint32_t i = 0; i < threads; i++) {
            if (nan && blend) fixed_backward_pairs_thread<T, B, FIXED_MAX_NAN, true>(x.data(), dy.data(), dx.data(), a, i);
            else if (nan) fixed_backward_pairs_thread<T, B, FIXED_MAX_NAN, false>(x.data(), dy.data(), dx.data(), a, i);
            else if (blend) fixed_backward_pairs_thread<T, B, FIXED_MAX, true>(x.data(), dy.data(), dx.data(), a, i);
            else fixed_backward_pairs_thread<T, B, FIXED_MAX, false>(x.data(), dy.data(), dx.data(), a, i);
        }
    } else {
        typedef fixed_shape<K, 2, P, 2> B;
        threads = fixed_plan<T, 1, false, B, true>(&p, a);
        for (uint32_t i = 0; i < threads; i++) {
            if (avg) fixed_backward_thread<T, B, FIXED_AVG>(x.data(), dy.data(), dx.data(), a, i);
            else if (nan) fixed_backward_thread<T, B, FIXED_MAX_NAN>(x.data(), dy.data(), dx.data(), a, i);
            else fixed_backward_thread<T, B, FIXED_MAX>(x.data(), dy.data(), dx.data(), a, i);
        }
    }

    std::vector<float> sum(nx, 0.f);
    std::vector<double> sumd(nx, 0.0);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    size_t at = 0;
                    int count = 0;
                    double best = 0;
                    for (int kh = 0; kh < K; kh++)
                        for (int kw = 0; kw < K; kw++) {
                            int ih = oh * S - P + kh, iw = ow * S - P + kw;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            size_t i = xi(n, c, ih, iw);
                            if (count++ == 0 || emu_better(xf[i], best, nan)) {
                                at = i;
                                best = xf[i];
                            }
                        }
                    if (count == 0) continue;
                    const float g = dyf[yi(n, c, oh, ow)];
                    if (!avg) {
                        sum[at] += g;
                        sumd[at] += g;
                        continue;
                    }
                    const int div = exclude ? count : K * K;
                    for (int kh = 0; kh < K; kh++)
                        for (int kw = 0; kw < K; kw++) {
                            int ih = oh * S - P + kh, iw = ow * S - P + kw;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            sum[xi(n, c, ih, iw)] += g / (float)div;
                            sumd[xi(n, c, ih, iw)] += (double)g / div;
                        }
                }
    const double tolerance = std::is_same<T, float>::value ? 1e-4 : 1e-2; /* the 16-bit dx rounds */
    int bad = 0;
    for (size_t i = 0; i < nx; i++) {
        const float want = fixed_cvt(T(blend ? 1.5f * sum[i] + 0.5f * dx0[i] : (float)p.alpha * sum[i]));
        const double want_d = blend ? 1.5 * sumd[i] + 0.5 * dx0[i] : p.alpha * sumd[i];
        const float got = fixed_cvt(dx[i]);
        const bool same = got == want || (got != got && want != want);
        const bool near = std::isinf(want) || fabs(got - want_d) <= tolerance * (1 + fabs(want_d));
        if ((!same || !near) && bad++ < 5) printf("  at %zu: got %g, want %g (double %g)\n", i, got, want, want_d);
    }
    const char *type = std::is_same<T, float>::value ? "float nchw" : std::is_same<T, __half>::value ? "half nhwc"
                                                                                                      : "bf16 nhwc";
    printf("%s %dx%d, %dx%dx%dx%d, mode %d, blend %d, extra %d: %u threads, %s\n", type, K, K, N, C, H, W, mode,
           blend, extra, threads, bad ? "FAILED" : "ok");
    return bad != 0;
}

} // namespace

int main()
{
    int failed = 0, cases = 0;
    /* channels-last: N, C (a multiple of 8), H, W */
    const int nhwc[][4] = {{1, 8, 13, 6}, {2, 16, 9, 9}, {1, 8, 7, 8},  {1, 8, 2, 1},
                           {1, 16, 1, 1}, {2, 8, 12, 19}, {1, 8, 40, 11}, {1, 24, 11, 13}};
    for (auto &s : nhwc)
        for (int mode = EMU_MAX; mode <= EMU_MAX_NAN; mode++)
            for (int blend = 0; blend < 2; blend++)
                for (int extra = 0; extra < 2; extra++) {
                    int seed = s[2] * 31 + s[3] + mode * 7 + blend * 3 + extra;
                    failed += emu_case<__half, 3, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                    failed += emu_case<__half, 2, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                    failed += emu_case<__nv_bfloat16, 3, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                    failed += emu_case<__nv_bfloat16, 2, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                    cases += 4;
                }
    /* NCHW: N, C, H, W (W a multiple of 4 or not, 12 and 20 cutting strips of 8 in half) */
    const int nchw[][4] = {{1, 3, 7, 9},  {1, 2, 56, 56}, {1, 2, 9, 16}, {1, 2, 12, 19}, {1, 1, 2, 1},
                           {1, 2, 37, 8}, {1, 1, 35, 5},  {1, 2, 10, 24}, {1, 2, 9, 12}, {2, 1, 7, 20}};
    for (auto &s : nchw)
        for (int mode = EMU_MAX; mode <= EMU_AVG_EXCLUDE; mode++)
            for (int blend = 0; blend < 2; blend++)
                for (int extra = 0; extra < 2; extra++) {
                    int seed = s[2] * 17 + s[3] + mode * 5 + blend * 3 + extra;
                    failed += emu_case<float, 3, false>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                    failed += emu_case<float, 2, false>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                    cases += 2;
                }
    printf("%d passed, %d failed\n", cases - failed, failed);
    return failed != 0;
}
