/* conv_cublas_finish.cu (emulation): the three ways the cuBLAS convolution entries finish the
   fused forward (src/cuda/conv_cublas.cu), every element against this file's own double
   reference, within a rounding of the output type:
   - the store's pass (the GEMM leaves alpha * conv in y, then each element of y is finished in
     place through conv_store.cuh's store), every thread of a small grid run on the CPU: its
     channel found by the multiply-high divisions in NHWC and NCHW, its value loaded before the
     store, the bias, z, the per-channel scale and the activation; every element must be
       y = act(sc * v + sz * alpha2 * z + sb * bias)
     (ref/pointwise.c for the activation), v the value the GEMM left;
   - the typed pass (cublas_bias_act_range) on NHWC and NCHW y for every type and both vector
     widths, with and without z, RELU and IDENTITY: y = relu?(v + alpha2 * z + bias);
   - the cuBLASLt matmul that lt_matmul_of describes for a 1x1 forward, run by a model of
     cuBLASLt's documented semantics (D = epilogue(alpha * op(A) op(B) + beta * C + bias), the
     bias along D's rows, column-major), against the fused convolution
     y = relu?(alpha1 * conv(x, w) + alpha2 * z + bias) in double; z apart, z in y's buffer,
     none; and the plan's choices between the three ways, with the reasons it gives.
   Prints a line per case; exits 1 if any differs. */
#include "cuda/conv_cublas.cu"

#include "../ref/pointwise.c"
#include "conv_emulate.h"
#include "emu_handle.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

struct emu_case {
    const char *name;
    cudnnDataType_t t;
    bool nhwc, scale_on, scale_z, scale_bias;
    cudnnPointwiseMode_t act; /* RELU_FWD: the plain ReLU of ConvBiasAct (relu, not act_on) */
};

const int N = 3, K = 24, H = 5, W = 7; /* y is N x K x H x W: 2520 elements, a partial last block */

/* A rank-4 view of y's dims in the case's layout (bias and scale: 1 x K x 1 x 1). */
struct ocd_tensor_view view(cudnnDataType_t t, bool nhwc, int n, int c, int h, int w)
{
    struct ocd_tensor_view v;
    memset(&v, 0, sizeof v);
    v.dtype = t, v.rank = 4, v.vect = 1;
    const int64_t d[4] = {n, c, h, w};
    const int64_t s[4] = {(int64_t)c * h * w, nhwc ? 1 : (int64_t)h * w, nhwc ? (int64_t)w * c : w, nhwc ? c : 1};
    for (int i = 0; i < 4; i++) v.dims[i] = d[i], v.strides[i] = s[i];
    return v;
}

bool run_case(const emu_case &e, emu_rng &rng)
{
    const int64_t count = (int64_t)N * K * H * W;
    const size_t es = e.t == CUDNN_DATA_FLOAT ? 4 : 2;
    std::vector<unsigned char> y((size_t)count * es), z((size_t)count * es), bias(K * es);
    std::vector<float> scale(K);
    std::vector<double> v((size_t)count);
    for (int64_t i = 0; i < count; i++) {
        ocd_cuda_store_as(e.t, y.data(), i, 2 * rng.next());
        v[(size_t)i] = ocd_cuda_load_as<double>(e.t, y.data(), i);
        ocd_cuda_store_as(e.t, z.data(), i, rng.next());
    }
    for (int k = 0; k < K; k++) ocd_cuda_store_as(e.t, bias.data(), k, rng.next()), scale[k] = 1.5f * rng.next();

    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    p.dir = OCD_CONV_FWD;
    p.y = view(e.t, e.nhwc, N, K, H, W);
    p.y_data = y.data();
    p.alpha = 0.75;
    struct ocd_conv_epilogue &ep = p.ep;
    ep.on = true, ep.alpha2 = 0.5, ep.z = z.data(), ep.bias = bias.data();
    ep.bias_view = view(e.t, e.nhwc, 1, K, 1, 1);
    ep.scale_on = e.scale_on, ep.scale_z = e.scale_z, ep.scale_bias = e.scale_bias, ep.scale = scale.data();
    ep.scale_view = view(CUDNN_DATA_FLOAT, e.nhwc, 1, K, 1, 1);
    if (e.act == CUDNN_POINTWISE_RELU_FWD) {
        ep.relu = true;
    } else {
        ep.act_on = true;
        ocd_pw_step_defaults(&ep.act, e.act, 0, -1);
    }
    /* as the entry's run builds it: the GEMM applied alpha, z is a separate tensor */
    ocd_cuda_conv_store fin = ocd_cuda_conv_store_of(&p);
    fin.alpha = 1;
    const finish_geom g = finish_geom_of(count, K, (int64_t)H * W, e.nhwc);
    const uint32_t threads = 32, blocks = 5, span = FINISH_ELEMS * threads;
    for (uint32_t b = 0; b < blocks; b++)
        for (uint32_t base = b * span; base < g.count; base += blocks * span)
            for (uint32_t t = 0; t < threads; t++) cublas_finish_span<float>(fin, g, base, t, threads);

    struct ref_pw act = ref_pw_mode(e.act);
    double worst = 0;
    int bad = 0;
    for (int64_t i = 0; i < count; i++) {
        const int k = (int)(e.nhwc ? i % K : i / (H * W) % K);
        const double sc = e.scale_on ? scale[k] : 1;
        double want = sc * v[(size_t)i] + (e.scale_z ? sc : 1) * ep.alpha2 * ocd_cuda_load_as<double>(e.t, z.data(), i) +
                      (e.scale_bias ? sc : 1) * ocd_cuda_load_as<double>(e.t, bias.data(), k);
        want = ref_pw(&act, want, 0);
        const double got = ocd_cuda_load_as<double>(e.t, y.data(), i);
        const double err = fabs(got - want) / fmax(1.0, fabs(want));
        worst = fmax(worst, std::isnan(err) ? INFINITY : err);
        if (!(err <= (e.t == CUDNN_DATA_HALF ? 2e-3 : e.t == CUDNN_DATA_BFLOAT16 ? 1e-2 : 1e-5))) bad++;
    }
    printf("%-32s %s (largest relative error %.3g)\n", e.name, bad ? "FAILED" : "ok", worst);
    return bad == 0;
}

/* ---- the typed pass and the cuBLASLt matmul ---------------------------------------------------- */

template <typename T> struct emu_type;
template <> struct emu_type<__half> {
    static constexpr cudnnDataType_t dt = CUDNN_DATA_HALF;
    static constexpr double tol = 2e-3;
};
template <> struct emu_type<__nv_bfloat16> {
    static constexpr cudnnDataType_t dt = CUDNN_DATA_BFLOAT16;
    static constexpr double tol = 1e-2;
};
template <> struct emu_type<float> {
    static constexpr cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    static constexpr double tol = 1e-5;
};
template <> struct emu_type<double> { /* the typed pass only */
    static constexpr double tol = 1e-12;
};

/* Elements of T on 16-byte boundaries (the vectors' alignment), with an offset of `shift`
   elements to misalign them on purpose. */
template <typename T> struct emu_buf {
    std::vector<ocd_vec16<T>> raw;
    int shift = 0;
    emu_buf(size_t n, int shift_ = 0) : raw(n / (16 / sizeof(T)) + 2), shift(shift_) {}
    T *p() { return raw[0].v + shift; }
    double at(size_t i) { return (double)ocd_cuda_load(p() + i); }
};

template <typename T> void emu_fill(emu_buf<T> &b, size_t n, emu_rng &rng, float scale)
{
    for (size_t i = 0; i < n; i++) ocd_cuda_store(b.p() + i, (typename ocd_compute<T>::type)(scale * rng.next()));
}

bool emu_report(const char *name, int bad, double worst)
{
    printf("%-40s %s (largest relative error %.3g)\n", name, bad ? "FAILED" : "ok", worst);
    return bad == 0;
}

/* The typed pass over a y of 2 images, K channels, P pixels each, in NHWC or NCHW, at the vector
   width bias_act_width picks; want_v: the width it must pick. */
template <typename T>
bool typed_case(const char *name, bool nhwc, int K, int P, int shift, int want_v, bool with_z, bool relu, emu_rng &rng)
{
    typedef typename ocd_compute<T>::type A;
    const size_t count = (size_t)2 * P * K;
    emu_buf<T> y(count, shift), z(count, shift), bias((size_t)K, shift);
    emu_fill(y, count, rng, 2), emu_fill(z, count, rng, 1), emu_fill(bias, (size_t)K, rng, 1);
    std::vector<double> v(count);
    for (size_t i = 0; i < count; i++) v[i] = y.at(i);
    ocd_cuda_conv_store fin;
    memset(&fin, 0, sizeof fin);
    fin.dst = y.p(), fin.z = with_z ? z.p() : nullptr, fin.bp = bias.p(), fin.alpha2 = 0.5;
    const int vw = bias_act_width(nhwc ? K : P, sizeof(T), fin.dst, fin.z, nhwc ? fin.bp : nullptr);
    if (vw != want_v) {
        printf("%-40s FAILED (vector width %d, not %d)\n", name, vw, want_v);
        return false;
    }
    /* as bias_act_launch builds it */
    bias_act_geom<A> g;
    g.y = fin.dst, g.z = fin.z, g.bias = fin.bp, g.alpha2 = (A)fin.alpha2, g.relu = relu;
    g.count = (uint32_t)(count / vw), g.kv = ocd_fastdiv_make((uint32_t)(K / vw));
    g.plane = ocd_fastdiv_make((uint32_t)(P / vw)), g.k = ocd_fastdiv_make((uint32_t)K);
    const uint32_t threads = 64, blocks = 3, all = threads * blocks;
    constexpr int V = 16 / sizeof(T);
    for (uint32_t t = 0; t < all; t++) {
        if (nhwc && vw == V) cublas_bias_act_range<T, A, V, true>(g, t, all);
        else if (nhwc) cublas_bias_act_range<T, A, 1, true>(g, t, all);
        else if (vw == V) cublas_bias_act_range<T, A, V, false>(g, t, all);
        else cublas_bias_act_range<T, A, 1, false>(g, t, all);
    }
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        const size_t c = nhwc ? i % K : i / P % K;
        double want = v[i] + (with_z ? 0.5 * z.at(i) : 0) + bias.at(c);
        if (relu && want < 0) want = 0;
        const double err = fabs(y.at(i) - want) / fmax(1.0, fabs(want));
        worst = fmax(worst, std::isnan(err) ? INFINITY : err);
        if (!(err <= emu_type<T>::tol)) bad++;
    }
    return emu_report(name, bad, worst);
}

/* cuBLASLt's documented matmul in double: D = epilogue(alpha * op(A) op(B) + beta * C + bias),
   column-major, per batch (each matrix its batch stride apart), the bias one value per row of
   D for every batch, C not read when beta is 0. */
template <typename T> bool lt_model(const struct ocd_lt_matmul &mm, float alpha, float beta)
{
    const int64_t m = mm.c.rows, n = mm.c.cols, k = mm.trans_a ? mm.a.rows : mm.a.cols;
    if ((mm.trans_a ? mm.a.cols : mm.a.rows) != m || (mm.trans_b ? mm.b.cols : mm.b.rows) != k ||
        (mm.trans_b ? mm.b.rows : mm.b.cols) != n)
        return false;
    const T *bias = (const T *)mm.bias;
    const bool has_bias = mm.epilogue == CUBLASLT_EPILOGUE_BIAS || mm.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
    const bool relu = mm.epilogue == CUBLASLT_EPILOGUE_RELU || mm.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
    std::vector<double> d((size_t)(mm.batch * m * n)); /* all of D computed before any store: C may be D */
    for (int64_t bt = 0; bt < mm.batch; bt++) {
        const T *a = (const T *)mm.a.data + bt * mm.a.stride, *b = (const T *)mm.b.data + bt * mm.b.stride;
        const T *c = (const T *)mm.c.data + bt * mm.c.stride;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                double acc = 0;
                for (int64_t l = 0; l < k; l++)
                    acc += (double)ocd_cuda_load(a + (mm.trans_a ? l + i * mm.a.ld : i + l * mm.a.ld)) *
                           (double)ocd_cuda_load(b + (mm.trans_b ? j + l * mm.b.ld : l + j * mm.b.ld));
                double v = (double)alpha * acc;
                if (beta != 0) v += (double)beta * (double)ocd_cuda_load(c + i + j * mm.c.ld);
                if (has_bias) v += (double)ocd_cuda_load(bias + i);
                if (relu) v = fmax(v, 0.0);
                d[(size_t)((bt * n + j) * m + i)] = v;
            }
    }
    for (int64_t bt = 0; bt < mm.batch; bt++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                ocd_cuda_store((T *)mm.d + bt * mm.c.stride + i + j * mm.c.ld,
                               (typename ocd_compute<T>::type)d[(size_t)((bt * n + j) * m + i)]);
    return true;
}

/* A packed NHWC view of N x C x H x W of type t. */
struct ocd_tensor_view nhwc_view(cudnnDataType_t t, int64_t n, int64_t c, int64_t h, int64_t w)
{
    return view(t, true, (int)n, (int)c, (int)h, (int)w);
}

enum lt_z { LT_NO_Z, LT_Z_APART, LT_Z_IN_Y };

/* A fused forward of geometry g (NHWC, a KRSC filter, one group) and the entry's plan of it. */
struct lt_geom {
    int n, c, k, h, w, r, stride, pad;
    int p() const { return (h + 2 * pad - r) / stride + 1; }
    int q() const { return (w + 2 * pad - r) / stride + 1; }
};

template <typename T> struct lt_problem {
    lt_geom g;
    emu_buf<T> x, w, y, z, bias, col;
    struct ocd_conv_problem p;
    cublas_plan pl;
    const char *plan_why;
    lt_problem(const lt_geom &g_, emu_rng &rng, enum lt_z zmode, bool relu)
        : g(g_), x((size_t)g.n * g.c * g.h * g.w), w((size_t)g.k * g.c * g.r * g.r),
          y((size_t)g.n * g.k * g.p() * g.q()), z((size_t)g.n * g.k * g.p() * g.q()), bias((size_t)g.k),
          col((size_t)g.n * g.p() * g.q() * g.c * g.r * g.r)
    {
        const size_t nx = (size_t)g.n * g.c * g.h * g.w, nw = (size_t)g.k * g.c * g.r * g.r;
        const size_t ny = (size_t)g.n * g.k * g.p() * g.q();
        emu_fill(x, nx, rng, 1), emu_fill(w, nw, rng, 1), emu_fill(y, ny, rng, 1), emu_fill(z, ny, rng, 1);
        emu_fill(bias, (size_t)g.k, rng, 1);
        const cudnnDataType_t t = emu_type<T>::dt;
        memset(&p, 0, sizeof p);
        p.dir = OCD_CONV_FWD;
        p.s.nsp = 2, p.s.n = g.n, p.s.c = g.c, p.s.k = g.k, p.s.groups = 1;
        for (int d = 0; d < 2; d++) {
            p.s.filt[d] = g.r, p.s.stride[d] = g.stride, p.s.pad[d] = g.pad, p.s.dilation[d] = 1;
            p.s.in[d] = d ? g.w : g.h, p.s.out[d] = d ? g.q() : g.p();
        }
        p.x = nhwc_view(t, g.n, g.c, g.h, g.w), p.y = nhwc_view(t, g.n, g.k, g.p(), g.q());
        p.w = nhwc_view(t, g.k, g.c, g.r, g.r);
        p.w_format = CUDNN_TENSOR_NHWC;
        p.x_data = x.p(), p.w_data = w.p(), p.y_data = y.p();
        p.alpha = 0.75;
        /* the plan of the entry, as cublas_plan_of makes it before the epilogue's choice */
        struct cudnnContext h = emu_handle(9, 132);
        plan_why = make_plan(&h, &p, t != CUDNN_DATA_DOUBLE, false, &pl);
        p.ep.on = true, p.ep.relu = relu;
        p.ep.alpha2 = zmode == LT_NO_Z ? 0 : 0.5;
        p.ep.z = zmode == LT_Z_APART ? (const void *)z.p() : zmode == LT_Z_IN_Y ? (const void *)y.p() : NULL;
        p.ep.bias = bias.p();
        p.ep.bias_view = nhwc_view(t, 1, g.k, 1, 1);
    }
};

/* a 1x1 filter; with stride 2 (the gathered column matrix, under OPENCUDNN_UNPROVEN=1 as main
   sets it, its rows copied 16 bytes at a time; with a KCRS filter one element at a time); a 3x3
   one with padding */
const lt_geom lt_1x1 = {2, 24, 40, 3, 5, 1, 1, 0}, lt_1x1_stride2 = {2, 24, 40, 7, 7, 1, 2, 0},
              lt_1x1_stride2_even = {3, 24, 40, 8, 7, 1, 2, 0}, lt_3x3 = {2, 16, 24, 5, 6, 3, 1, 1};

/* The matmul lt_matmul_of makes of a fused forward (over the column matrix of the im2col kernel,
   its threads run here, where the plan has one), run by the model, against the fused convolution
   in double. */
template <typename T> bool lt_case(const char *name, const lt_geom &g, enum lt_z zmode, bool relu, emu_rng &rng)
{
    lt_problem<T> lp(g, rng, zmode, relu);
    const int P = g.p(), Q = g.q();
    std::vector<double> want((size_t)g.n * P * Q * g.k);
    for (int n = 0; n < g.n; n++)
        for (int op = 0; op < P; op++)
            for (int oq = 0; oq < Q; oq++)
                for (int k = 0; k < g.k; k++) {
                    double conv = 0;
                    for (int r = 0; r < g.r; r++)
                        for (int s2 = 0; s2 < g.r; s2++) {
                            const int ih = op * g.stride - g.pad + r, iw = oq * g.stride - g.pad + s2;
                            if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                            for (int c = 0; c < g.c; c++)
                                conv += lp.x.at((size_t)(((n * g.h + ih) * g.w + iw) * g.c + c)) *
                                        lp.w.at((size_t)(((k * g.r + r) * g.r + s2) * g.c + c));
                        }
                    const size_t i = (size_t)(((n * P + op) * Q + oq) * g.k + k);
                    double v = lp.p.alpha * conv + lp.bias.at((size_t)k);
                    if (zmode != LT_NO_Z) v += lp.p.ep.alpha2 * (zmode == LT_Z_APART ? lp.z.at(i) : lp.y.at(i));
                    want[i] = relu && v < 0 ? 0 : v;
                }
    if (lp.plan_why != NULL) {
        printf("%-40s FAILED (the plan declines: %s)\n", name, lp.plan_why);
        return false;
    }
    if (lp.pl.gather != (g.r == 1 && g.stride > 1)) {
        printf("%-40s FAILED (the plan %s)\n", name, lp.pl.gather ? "gathers" : "does not gather");
        return false;
    }
    if (!lp.pl.direct) {
        const col_rows cr = col_rows_of(lp.pl.gm, lp.x.p(), sizeof(T));
        if (cr.vec_load != lp.pl.gather) {
            printf("%-40s FAILED (the im2col rows %s 16 bytes at a time)\n", name, cr.vec_load ? "load" : "do not load");
            return false;
        }
        for (uint32_t t = 0; t < 96; t++) cublas_im2col_range<T>(lp.x.p(), lp.col.p(), cr, t, 96);
    }
    struct ocd_lt_matmul mm;
    float beta = -1;
    const char *why = lt_matmul_of(&lp.p, lp.pl, lp.col.p(), &mm, &beta);
    if (why != NULL || !lt_model<T>(mm, (float)lp.p.alpha, beta)) {
        printf("%-40s FAILED (%s)\n", name, why ? why : "the matmul's extents do not chain");
        return false;
    }
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < want.size(); i++) {
        const double err = fabs(lp.y.at(i) - want[i]) / fmax(1.0, fabs(want[i]));
        worst = fmax(worst, std::isnan(err) ? INFINITY : err);
        if (!(err <= emu_type<T>::tol)) bad++;
    }
    return emu_report(name, bad, worst);
}

/* The epilogue's choice on a changed problem: which of lt_matmul_of (lt_declines: the reason it
   must give, NULL: it must serve) and typed_rejects (typed_declines) decline. */
bool choice_case(const char *name, void (*change)(lt_problem<__half> &), const char *lt_declines,
                 const char *typed_declines, emu_rng &rng)
{
    lt_problem<__half> lp(lt_1x1, rng, LT_Z_APART, true);
    change(lp);
    struct ocd_lt_matmul mm;
    float beta;
    const char *lt = lt_matmul_of(&lp.p, lp.pl, NULL, &mm, &beta), *typed = typed_rejects(&lp.p, lp.pl);
    const bool ok = (lt_declines ? lt && strstr(lt, lt_declines) : !lt) &&
                    (typed_declines ? typed && strstr(typed, typed_declines) : !typed);
    printf("%-40s %s (cuBLASLt: %s; typed pass: %s)\n", name, ok ? "ok" : "FAILED", lt ? lt : "serves",
           typed ? typed : "serves");
    return ok;
}

} // namespace

int main()
{
    setenv("OPENCUDNN_UNPROVEN", "1", 1); /* the strided 1x1 forward is planned only so */
    emu_rng rng = {4711};
    const emu_case cases[] = {
        {"f16_nhwc_bias_z_relu", CUDNN_DATA_HALF, true, false, false, false, CUDNN_POINTWISE_RELU_FWD},
        {"f32_nchw_scale_z_gelu", CUDNN_DATA_FLOAT, false, true, true, false, CUDNN_POINTWISE_GELU_FWD},
        {"bf16_nhwc_bias_then_scale_swish", CUDNN_DATA_BFLOAT16, true, true, true, true, CUDNN_POINTWISE_SWISH_FWD},
        {"f16_nchw_scale_bias_sigmoid", CUDNN_DATA_HALF, false, true, true, true, CUDNN_POINTWISE_SIGMOID_FWD},
    };
    bool ok = true;
    for (const emu_case &c : cases) ok &= run_case(c, rng);

    ok &= typed_case<__half>("typed_f16_nhwc_v8_z_relu", true, 64, 37, 0, 8, true, true, rng);
    ok &= typed_case<__half>("typed_f16_nhwc_v8_identity", true, 24, 37, 0, 8, false, false, rng);
    ok &= typed_case<__half>("typed_f16_nhwc_v1_odd_channels", true, 13, 37, 0, 1, true, true, rng);
    ok &= typed_case<__half>("typed_f16_nhwc_v1_misaligned", true, 64, 37, 1, 1, true, false, rng);
    ok &= typed_case<__nv_bfloat16>("typed_bf16_nhwc_v8_z_relu", true, 32, 37, 0, 8, true, true, rng);
    ok &= typed_case<float>("typed_f32_nhwc_v4_z_relu", true, 12, 37, 0, 4, true, true, rng);
    ok &= typed_case<float>("typed_f32_nhwc_v1_identity", true, 6, 37, 0, 1, false, false, rng);
    ok &= typed_case<double>("typed_f64_nhwc_v2_z_relu", true, 10, 37, 0, 2, true, true, rng);
    ok &= typed_case<__half>("typed_f16_nchw_v8_z_relu", false, 24, 40, 0, 8, true, true, rng);
    ok &= typed_case<__half>("typed_f16_nchw_v1_odd_plane", false, 24, 35, 0, 1, true, true, rng);
    ok &= typed_case<float>("typed_f32_nchw_v4_identity", false, 7, 36, 0, 4, false, false, rng);
    ok &= typed_case<float>("typed_f32_nchw_v1_misaligned", false, 7, 36, 1, 1, true, true, rng);
    ok &= typed_case<double>("typed_f64_nchw_v2_z_relu", false, 5, 30, 0, 2, true, true, rng);

    ok &= lt_case<__half>("lt_f16_z_apart_relu", lt_1x1, LT_Z_APART, true, rng);
    ok &= lt_case<__half>("lt_f16_z_in_y_identity", lt_1x1, LT_Z_IN_Y, false, rng);
    ok &= lt_case<__half>("lt_f16_no_z_relu", lt_1x1, LT_NO_Z, true, rng);
    ok &= lt_case<__nv_bfloat16>("lt_bf16_z_in_y_relu", lt_1x1, LT_Z_IN_Y, true, rng);
    ok &= lt_case<float>("lt_f32_z_apart_identity", lt_1x1, LT_Z_APART, false, rng);
    ok &= lt_case<__half>("lt_f16_1x1_stride2_odd_no_z_relu", lt_1x1_stride2, LT_NO_Z, true, rng);
    ok &= lt_case<__nv_bfloat16>("lt_bf16_1x1_stride2_odd_z_in_y", lt_1x1_stride2, LT_Z_IN_Y, true, rng);
    ok &= lt_case<__half>("lt_f16_3x3_pad_im2col_z_apart", lt_3x3, LT_Z_APART, false, rng);
    ok &= lt_case<__half>("lt_f16_1x1_stride2_even_z_apart", lt_1x1_stride2_even, LT_Z_APART, true, rng);
    ok &= lt_case<__nv_bfloat16>("lt_bf16_1x1_stride2_even_z_in_y", lt_1x1_stride2_even, LT_Z_IN_Y, false, rng);
    ok &= lt_case<float>("lt_f32_1x1_stride2_even_no_z", lt_1x1_stride2_even, LT_NO_Z, true, rng);

    ok &= choice_case("choice_plain", [](lt_problem<__half> &) {}, NULL, NULL, rng);
    ok &= choice_case("choice_groups", [](lt_problem<__half> &l) { l.pl.gm.g = 2; }, "more than one group", NULL, rng);
    ok &= choice_case("choice_nchw", [](lt_problem<__half> &l) { l.pl.gm.nhwc = 0; }, "NCHW", NULL, rng);
    ok &= choice_case("choice_scale", [](lt_problem<__half> &l) { l.p.ep.scale_on = true; }, "scale", "scale", rng);
    ok &= choice_case("choice_activation", [](lt_problem<__half> &l) { l.p.ep.act_on = true, l.p.ep.relu = false; },
                      "activation", "activation", rng);
    ok &= choice_case("choice_float_bias", [](lt_problem<__half> &l) { l.p.ep.bias_view.dtype = CUDNN_DATA_FLOAT; },
                      "type", "type", rng);
    ok &= choice_case("choice_strided_bias", [](lt_problem<__half> &l) { l.p.ep.bias_view.strides[1] = 2; },
                      "consecutive", "consecutive", rng);
    ok &= choice_case("choice_bias_off_16", [](lt_problem<__half> &l) { l.p.ep.bias = (const __half *)l.p.ep.bias + 1; },
                      "16-byte", NULL, rng);
    ok &= choice_case("choice_double", [](lt_problem<__half> &l) { l.pl.dtype = CUDNN_DATA_DOUBLE; }, OCD_REASON_DTYPE,
                      NULL, rng);
    ok &= choice_case("choice_alpha_beyond_float", [](lt_problem<__half> &l) { l.p.alpha = 1e39; }, "beyond float",
                      NULL, rng);
    return ok ? 0 : 1;
}
