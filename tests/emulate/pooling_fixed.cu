/* pooling_fixed.cu: the fixed-window pooling kernels of src/cuda/pooling_fixed*.cu, their per-thread code
   run on the CPU for every thread index (it is written __host__ __device__ for this), against a
   reference: so that the kernels' logic is checked on machines without a GPU, CI's included, and
   a kernel rewrite can be verified before it meets one.

   Kernels: forward (fixed_forward_thread: NCHW float, channels-last float, half and bfloat16) and
   backward (fixed_backward_thread: NCHW float; fixed_backward_pairs_thread: channels-last half and
   bfloat16, the max modes), for 3x3 stride 2 pad 1 and 2x2 stride 2, in every mode they serve.
   Inputs: borders, odd sizes, outputs larger than the windows reach, tall images (several chunks
   of steps), values with ties, NaN, +-inf and -0, rows of NaN only and of NaN and -inf only
   (windows whose maximum is -inf, or none), gradients over a wide range of exponents, alpha/beta
   blending. The reference takes each window's first maximum in row-major order (cuDNN's rule,
   problem/pooling.h), sums a window's inputs in that order, and adds the gradients in y's row-major
   order, in float, as the kernels do, so results must match bit for bit; sums are also checked
   in double, within a tolerance. Prints a line per case; exits 1 if any differs. */
#include "cuda/pooling_fixed.cu"
#include "cuda/pooling_fixed_pairs.cu"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

enum emu_mode { EMU_MAX, EMU_MAX_NAN, EMU_AVG_INCLUDE, EMU_AVG_EXCLUDE };

/* A case's tensors and problem: x of N x C x H x W, y (dy) of the windows' outputs, `out` the
   tensor the kernels write (y forward, dx backward), preset to out0 for the blend. */
template <typename T, int K, bool CLAST> struct emu_case {
    static const int S = 2, P = K == 3 ? 1 : 0;
    int N, C, H, W, OH, OW, mode;
    bool blend;
    std::vector<T> x, y, out;
    std::vector<float> xf, yf, out0; /* the values as stored */
    ocd_pooling_problem p;

    size_t xi(int n, int c, int h, int w) const
    {
        return CLAST ? (((size_t)n * H + h) * W + w) * C + c : (((size_t)n * C + c) * H + h) * W + w;
    }
    size_t yi(int n, int c, int h, int w) const
    {
        return CLAST ? (((size_t)n * OH + h) * OW + w) * C + c : (((size_t)n * C + c) * OH + h) * OW + w;
    }
    static void set(std::vector<T> &t, std::vector<float> &f, size_t i, float v)
    {
        t[i] = T(v);
        f[i] = ocd_cuda_load(&t[i]);
    }

    emu_case(int n_, int c_, int h_, int w_, int mode_, bool blend_, int seed, int extra, bool backward)
        : N(n_), C(c_), H(h_), W(w_), OH((h_ + 2 * P - K) / S + 1 + extra), OW((w_ + 2 * P - K) / S + 1 + extra),
          mode(mode_), blend(blend_)
    {
        srand(seed);
        const size_t nx = (size_t)N * C * H * W, ny = (size_t)N * C * OH * OW, nout = backward ? nx : ny;
        x.resize(nx), xf.resize(nx), y.resize(ny), yf.resize(ny), out.resize(nout), out0.resize(nout);
        for (size_t i = 0; i < nx; i++) {
            int r = rand() % 100;
            set(x, xf, i, r < 6 ? NAN : r < 9 ? -INFINITY : r < 11 ? INFINITY : r < 14 ? -0.0f : (float)(rand() % 5 - 2));
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
            set(y, yf, i, v);
        }
        for (size_t i = 0; i < nout; i++) set(out, out0, i, (float)(rand() % 17 - 8) / 4.0f);

        memset(&p, 0, sizeof p);
        const bool avg = mode >= EMU_AVG_INCLUDE;
        p.mode = !avg ? CUDNN_POOLING_MAX
                 : mode == EMU_AVG_EXCLUDE ? CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
                                           : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
        p.propagate_nan = mode == EMU_MAX_NAN;
        p.backward = backward;
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
        const int64_t ys[2][5] = {{yimage, (int64_t)OH * OW, (int64_t)OH * OW, OW, 1},
                                  {yimage, 1, yimage, (int64_t)OW * C, C}};
        memcpy(p.xs, xs[CLAST], sizeof p.xs);
        memcpy(p.ys, ys[CLAST], sizeof p.ys);
        p.x = x.data();
        if (backward) {
            p.dy = y.data();
            p.dx = out.data();
        } else {
            p.y = out.data();
        }
    }

    /* Calls f(i) for the index i in x of every input of window (n, c, oh, ow), in row-major order. */
    template <class Fn> void window(int n, int c, int oh, int ow, Fn f) const
    {
        for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++) {
                int ih = oh * S - P + kh, iw = ow * S - P + kw;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W) f(xi(n, c, ih, iw));
            }
    }

    /* Window (n, c, oh, ow): the index of its first maximum in x, and the inputs it holds. */
    size_t first_max(int n, int c, int oh, int ow, int &count) const
    {
        size_t at = 0;
        double best = 0;
        count = 0;
        window(n, c, oh, ow, [&](size_t i) {
            double v = xf[i];
            if (count++ == 0 || ((mode == EMU_MAX_NAN ? best == best : v == v) && !(v <= best))) {
                at = i;
                best = v;
            }
        });
        return at;
    }

    /* Calls f(n, c, oh, ow, at, count) for every window holding input, windows of a channel in
       row-major order: at is the index in x of its first maximum, count the inputs it holds. */
    template <class Fn> void each_window(Fn f) const
    {
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++)
                for (int oh = 0; oh < OH; oh++)
                    for (int ow = 0; ow < OW; ow++) {
                        int count;
                        const size_t at = first_max(n, c, oh, ow, count);
                        if (count > 0) f(n, c, oh, ow, at, count);
                    }
    }

    /* Compares out with the sums (float, in the kernels' order; double), blended; prints the case. */
    int check(const char *what, const std::vector<float> &sum, const std::vector<double> &sumd, uint32_t threads) const
    {
        const double tolerance = std::is_same<T, float>::value ? 1e-4 : 1e-2; /* 16-bit results round */
        int bad = 0;
        for (size_t i = 0; i < out.size(); i++) {
            const T rounded = T(blend ? 1.5f * sum[i] + 0.5f * out0[i] : (float)p.alpha * sum[i]);
            const float want = ocd_cuda_load(&rounded);
            const double want_d = blend ? 1.5 * sumd[i] + 0.5 * out0[i] : p.alpha * sumd[i];
            const float got = ocd_cuda_load(&out[i]);
            const bool same = got == want || (got != got && want != want);
            const bool near = std::isinf(want) || want != want || fabs(got - want_d) <= tolerance * (1 + fabs(want_d));
            if ((!same || !near) && bad++ < 5) printf("  at %zu: got %g, want %g (double %g)\n", i, got, want, want_d);
        }
        const char *type = std::is_same<T, float>::value ? "float" : std::is_same<T, __half>::value ? "half" : "bf16";
        printf("%s %s %s %dx%d, %dx%dx%dx%d, mode %d, blend %d, %dx%d out: %u threads, %s\n", what, type,
               CLAST ? "nhwc" : "nchw", K, K, N, C, H, W, mode, blend, OH, OW, threads, bad ? "FAILED" : "ok");
        return bad != 0;
    }
};

/* Every thread of the channels-last backward in MODE, of the kernel the launch takes
   (fixed_pairs_kernel_for). */
template <typename T, class B, int MODE>
void emu_pairs(const T *x, const T *dy, T *dx, const fixed_args<float> &a, uint32_t threads)
{
    fixed_pairs_kernel_for(a, [&](auto blend, auto unit) {
        for (uint32_t i = 0; i < threads; i++)
            fixed_backward_pairs_thread<T, B, MODE, decltype(blend)::value, decltype(unit)::value>(x, dy, dx, a, i);
    });
}

/* whole: channels-last, each thread walks its whole column of cells (the plan's choice when
   the columns fill a wave of resident threads), else chunks of steps. */
template <typename T, int K, bool CLAST>
int emu_backward(int N, int C, int H, int W, int mode, bool blend, int seed, int extra, bool whole)
{
    emu_case<T, K, CLAST> e(N, C, H, W, mode, blend, seed, extra, true);
    const bool avg = mode >= EMU_AVG_INCLUDE;
    fixed_args<float> a;
    uint32_t threads;
    T *dx = e.out.data();
    const T *x = e.x.data(), *dy = e.y.data();
    if constexpr (CLAST) {
        typedef fixed_shape<K, 2, emu_case<T, K, CLAST>::P, 1> B;
        const int64_t columns = (int64_t)N * (C / 8) * ((W + 1) / 2);
        threads = fixed_plan<T, 8, true, B, true>(&e.p, a, whole ? columns : 0);
        if (mode == EMU_MAX_NAN) emu_pairs<T, B, FIXED_MAX_NAN>(x, dy, dx, a, threads);
        else emu_pairs<T, B, FIXED_MAX>(x, dy, dx, a, threads);
    } else {
        typedef fixed_shape<K, 2, emu_case<T, K, CLAST>::P, 2> B;
        threads = fixed_plan<T, 1, false, B, true>(&e.p, a, 0);
        for (uint32_t i = 0; i < threads; i++) {
            if (avg) fixed_backward_thread<T, B, FIXED_AVG>(x, dy, dx, a, i);
            else if (mode == EMU_MAX_NAN) fixed_backward_thread<T, B, FIXED_MAX_NAN>(x, dy, dx, a, i);
            else fixed_backward_thread<T, B, FIXED_MAX>(x, dy, dx, a, i);
        }
    }
    std::vector<float> sum(e.out.size(), 0.f);
    std::vector<double> sumd(e.out.size(), 0.0);
    e.each_window([&](int n, int c, int oh, int ow, size_t at, int count) {
        const float g = e.yf[e.yi(n, c, oh, ow)];
        if (!avg) {
            sum[at] += g;
            sumd[at] += g;
            return;
        }
        const int div = mode == EMU_AVG_EXCLUDE ? count : K * K;
        e.window(n, c, oh, ow, [&](size_t i) {
            sum[i] += g / (float)div;
            sumd[i] += (double)g / div;
        });
    });
    return e.check(whole ? "backward (whole columns)" : "backward", sum, sumd, threads);
}

template <typename T, int K, bool CLAST>
int emu_forward(int N, int C, int H, int W, int mode, bool blend, int seed, int extra)
{
    emu_case<T, K, CLAST> e(N, C, H, W, mode, blend, seed, extra, false);
    constexpr int V = CLAST ? ocd_vec16<T>::N : 1;
    typedef fixed_forward_shape<CLAST, K> F;
    fixed_args<float> a;
    const uint32_t threads = fixed_plan<T, V, CLAST, F, false>(&e.p, a, 0);
    for (uint32_t i = 0; i < threads; i++) {
        if (mode >= EMU_AVG_INCLUDE) fixed_forward_thread<T, V, CLAST, F, FIXED_AVG>(e.x.data(), e.out.data(), a, i);
        else if (mode == EMU_MAX_NAN) fixed_forward_thread<T, V, CLAST, F, FIXED_MAX_NAN>(e.x.data(), e.out.data(), a, i);
        else fixed_forward_thread<T, V, CLAST, F, FIXED_MAX>(e.x.data(), e.out.data(), a, i);
    }
    std::vector<float> value(e.out.size(), 0.f);
    std::vector<double> valued(e.out.size(), 0.0);
    e.each_window([&](int n, int c, int oh, int ow, size_t at, int count) { /* a window without input gives 0 */
        const size_t o = e.yi(n, c, oh, ow);
        if (mode < EMU_AVG_INCLUDE) {
            value[o] = e.xf[at];
            valued[o] = e.xf[at];
            return;
        }
        float sum = 0;
        double sumd = 0;
        e.window(n, c, oh, ow, [&](size_t i) {
            sum += e.xf[i];
            sumd += e.xf[i];
        });
        const int div = mode == EMU_AVG_EXCLUDE ? count : K * K;
        value[o] = sum / (float)div;
        valued[o] = sumd / div;
    });
    return e.check("forward", value, valued, threads);
}

/* Every kernel of shape K on one image size, in every mode it serves, blended or not, with the
   windows' outputs as advised and one larger. */
template <int K> int emu_shape(const int (&s)[4], bool nhwc, int &cases)
{
    int failed = 0;
    for (int mode = EMU_MAX; mode <= EMU_AVG_EXCLUDE; mode++)
        for (int blend = 0; blend < 2; blend++)
            for (int extra = 0; extra < 2; extra++) {
                const int seed = s[2] * 31 + s[3] + mode * 7 + blend * 3 + extra + K;
                const bool max = mode <= EMU_MAX_NAN;
                if (!nhwc) {
                    failed += emu_backward<float, K, false>(s[0], s[1], s[2], s[3], mode, blend, seed, extra, false);
                    failed += emu_forward<float, K, false>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                    cases += 2;
                    continue;
                }
                failed += emu_forward<float, K, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                failed += emu_forward<__half, K, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                failed += emu_forward<__nv_bfloat16, K, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra);
                cases += 3;
                if (!max) continue; /* the channels-last backward serves the max modes */
                for (int whole = 0; whole < 2; whole++) {
                    failed += emu_backward<__half, K, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra, whole);
                    failed += emu_backward<__nv_bfloat16, K, true>(s[0], s[1], s[2], s[3], mode, blend, seed, extra,
                                                                   whole);
                }
                cases += 4;
            }
    return failed;
}

} // namespace

int main()
{
    int failed = 0, cases = 0;
    /* channels-last: N, C (a multiple of 8), H, W */
    static const int nhwc[][4] = {{1, 8, 13, 6}, {2, 16, 9, 9}, {1, 8, 7, 8},  {1, 8, 2, 1},
                                  {1, 16, 1, 1}, {2, 8, 12, 19}, {1, 8, 40, 11}, {1, 24, 11, 13}};
    /* NCHW: N, C, H, W (W a multiple of 4 or not; 12 and 20 cut strips of 8 columns in half) */
    static const int nchw[][4] = {{1, 3, 7, 9},  {1, 2, 56, 56}, {1, 2, 9, 16}, {1, 2, 12, 19}, {1, 1, 2, 1},
                                  {1, 2, 37, 8}, {1, 1, 35, 5},  {1, 2, 10, 24}, {1, 2, 9, 12}, {2, 1, 7, 20}};
    for (const auto &s : nhwc) failed += emu_shape<3>(s, true, cases) + emu_shape<2>(s, true, cases);
    for (const auto &s : nchw) failed += emu_shape<3>(s, false, cases) + emu_shape<2>(s, false, cases);
    printf("%d passed, %d failed\n", cases - failed, failed);
    return failed != 0;
}
