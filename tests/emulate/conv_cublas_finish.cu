/* conv_cublas_finish.cu (emulation): the pass that finishes the cuBLAS convolution entries' fused
   forward (src/cuda/conv_cublas.cu: the GEMM leaves alpha * conv in y, then each element of y is
   finished in place through conv_store.cuh's store), with every thread of a small grid run on
   the CPU: its channel found by the multiply-high divisions in NHWC and NCHW, its value loaded
   before the store, the bias, z, the per-channel scale and the activation. Every element must be
     y = act(sc * v + sz * alpha2 * z + sb * bias)
   of this file's own double reference (ref/pointwise.c for the activation), v the value the GEMM
   left, within a rounding of the output type. Prints a line per case; exits 1 if any differs. */
#include "cuda/conv_cublas.cu"

#include "../ref/pointwise.c"
#include "conv_emulate.h"

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

} // namespace

int main()
{
    emu_rng rng = {4711};
    const emu_case cases[] = {
        {"f16_nhwc_bias_z_relu", CUDNN_DATA_HALF, true, false, false, false, CUDNN_POINTWISE_RELU_FWD},
        {"f32_nchw_scale_z_gelu", CUDNN_DATA_FLOAT, false, true, true, false, CUDNN_POINTWISE_GELU_FWD},
        {"bf16_nhwc_bias_then_scale_swish", CUDNN_DATA_BFLOAT16, true, true, true, true, CUDNN_POINTWISE_SWISH_FWD},
        {"f16_nchw_scale_bias_sigmoid", CUDNN_DATA_HALF, false, true, true, true, CUDNN_POINTWISE_SIGMOID_FWD},
    };
    bool ok = true;
    for (const emu_case &c : cases) ok &= run_case(c, rng);
    return ok ? 0 : 1;
}
