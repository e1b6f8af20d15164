/* conv_wide_epilogue.cu (emulation): the CUDA convolution's wide fused epilogue (problem/conv.h:
   a per-channel scale applied before or after the bias, any forward activation) as the implicit
   GEMM serves it. make_plan on a forward problem (a handle of compute capability 9.0) must route
   the epilogue through the partial sums; the
   second kernel's per-output code (igemm_reduce_one, which stores through conv_store.cuh's
   ocd_cuda_conv_finish, the store of the direct, FFT and Winograd entries too) is then run on the
   CPU over given partial sums, and every output must be
     y = act(sc * alpha * acc + sz * alpha2 * z + sb * bias)
   of this file's own double reference (ref/pointwise.c for the activation) within a rounding of
   the output type. Cases: the ConvScaleBiasAddAct tail (scale before the bias, z scaled) and the
   ConvBiasScaleAct tail (scale after the bias) with RELU, clipped RELU, GELU, SWISH, TANH,
   SIGMOID and ELU, in half and bfloat16 NHWC, an odd pixel count. Prints a line per case;
   exits 1 if any differs. */
#include "cuda/conv_igemm.cu"

#include "../ref/pointwise.c"
#include "conv_emulate.h"
#include "emu_handle.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct emu_case {
    const char *name;
    cudnnDataType_t t;
    cudnnPointwiseMode_t act; /* RELU_FWD with upper 6: the clipped form when clip is set */
    bool clip, scale_z, scale_bias;
};

const int N = 2, C = 8, H = 5, W = 7, K = 24; /* 3x3 filter, padding 1: y is N x K x H x W */

/* A rank-4 view of NCHW-ordered dims with NHWC strides. */
struct ocd_tensor_view nhwc(cudnnDataType_t t, int n, int c, int h, int w)
{
    struct ocd_tensor_view v;
    memset(&v, 0, sizeof v);
    v.dtype = t, v.rank = 4, v.vect = 1;
    const int64_t d[4] = {n, c, h, w}, s[4] = {(int64_t)h * w * c, 1, (int64_t)w * c, c};
    for (int i = 0; i < 4; i++) v.dims[i] = d[i], v.strides[i] = s[i];
    return v;
}

/* 16-byte aligned zeroed storage of n scalars of esize bytes. */
void *buffer(size_t n, size_t esize)
{
    void *p = aligned_alloc(256, (n * esize + 255) / 256 * 256);
    memset(p, 0, (n * esize + 255) / 256 * 256);
    return p;
}

bool run_case(const emu_case &e, cudnnHandle_t handle, emu_rng &rng)
{
    const size_t es = 2, ny = (size_t)N * K * H * W;
    void *x = buffer((size_t)N * C * H * W, es), *w = buffer((size_t)K * C * 9, es), *y = buffer(ny, es);
    void *z = buffer(ny, es), *bias = buffer(K, es);
    float *scale = (float *)buffer(K, 4);
    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    p.dir = OCD_CONV_FWD;
    p.s.nsp = 2, p.s.n = N, p.s.c = C, p.s.k = K, p.s.groups = 1;
    p.s.in[0] = H, p.s.in[1] = W, p.s.filt[0] = 3, p.s.filt[1] = 3, p.s.out[0] = H, p.s.out[1] = W;
    for (int d = 0; d < 2; d++) p.s.pad[d] = 1, p.s.stride[d] = 1, p.s.dilation[d] = 1;
    p.x = nhwc(e.t, N, C, H, W), p.w = nhwc(e.t, K, C, 3, 3), p.y = nhwc(e.t, N, K, H, W);
    p.w_format = CUDNN_TENSOR_NHWC;
    p.x_data = x, p.w_data = w, p.y_data = y;
    p.compute = CUDNN_DATA_FLOAT, p.math = CUDNN_TENSOR_OP_MATH;
    p.alpha = 0.75, p.beta = 0;
    struct ocd_conv_epilogue &ep = p.ep;
    ep.on = true, ep.alpha2 = 0.5, ep.z = z, ep.bias = bias;
    ep.bias_view = nhwc(e.t, 1, K, 1, 1);
    ep.scale_on = true, ep.scale_z = e.scale_z, ep.scale_bias = e.scale_bias, ep.scale = scale;
    ep.scale_view = nhwc(CUDNN_DATA_FLOAT, 1, K, 1, 1);
    ep.act_on = true;
    ocd_pw_step_defaults(&ep.act, e.act, 0, -1);
    if (e.clip) ep.act.upper_clip = 6;

    const int tile = OCD_IGEMM_NTILES - 1;
    igemm_plan pl;
    const char *why = make_plan(handle, &p, tile, false, &pl);
    if (why != NULL || !pl.prm.epi.wide) {
        printf("%-28s FAILED: plan (%s, wide %d)\n", e.name, why ? why : "served", why ? 0 : pl.prm.epi.wide);
        return false;
    }
    /* the partial sums as the mainloop leaves them, [splits][M][N], and the other inputs */
    const int64_t M = (int64_t)N * H * W, splits = pl.prm.splits, total = M * K;
    std::vector<float> part((size_t)(splits * total));
    for (float &v : part) v = 2 * rng.next();
    for (size_t i = 0; i < ny; i++) ocd_cuda_store_as(e.t, z, (int64_t)i, rng.next());
    for (int k = 0; k < K; k++) ocd_cuda_store_as(e.t, bias, k, rng.next()), scale[k] = 1.5f * rng.next();
    for (size_t i = 0; i < ny; i++) ocd_cuda_store_as(e.t, y, (int64_t)i, NAN);
    pl.prm.epi.partial = part.data();
    for (int64_t i = 0; i < total; i++) {
        if (e.t == CUDNN_DATA_HALF) igemm_reduce_one<__half>(pl.prm, i);
        else igemm_reduce_one<__nv_bfloat16>(pl.prm, i);
    }

    struct ref_pw act = ref_pw_mode(e.act);
    if (e.clip) act.upper_clip = 6;
    double worst = 0;
    int bad = 0;
    for (int64_t m = 0; m < M; m++)
        for (int k = 0; k < K; k++) {
            const int64_t off = m * K + k; /* packed NHWC: pixel m, channel k */
            double acc = 0;
            for (int64_t sp = 0; sp < splits; sp++) acc += part[(size_t)(sp * total + off)];
            const double sc = scale[k];
            double want = sc * p.alpha * acc + (e.scale_z ? sc : 1) * ep.alpha2 * ocd_cuda_load_as<double>(e.t, z, off) +
                          (e.scale_bias ? sc : 1) * ocd_cuda_load_as<double>(e.t, bias, k);
            want = ref_pw(&act, want, 0);
            const double got = ocd_cuda_load_as<double>(e.t, y, off);
            const double err = fabs(got - want) / fmax(1.0, fabs(want));
            worst = fmax(worst, std::isnan(err) ? INFINITY : err);
            if (!(err <= (e.t == CUDNN_DATA_HALF ? 2e-3 : 1e-2))) bad++;
        }
    printf("%-28s %s (largest relative error %.3g, %d splits)\n", e.name, bad ? "FAILED" : "ok", worst, (int)splits);
    free(x), free(w), free(y), free(z), free(bias), free(scale);
    return bad == 0;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 132);
    emu_rng rng = {777};
    const emu_case cases[] = {
        {"f16_csbaa_relu", CUDNN_DATA_HALF, CUDNN_POINTWISE_RELU_FWD, false, true, false},
        {"f16_cbsa_clipped_relu", CUDNN_DATA_HALF, CUDNN_POINTWISE_RELU_FWD, true, false, true},
        {"f16_csbaa_gelu", CUDNN_DATA_HALF, CUDNN_POINTWISE_GELU_FWD, false, true, false},
        {"bf16_cbsa_swish", CUDNN_DATA_BFLOAT16, CUDNN_POINTWISE_SWISH_FWD, false, false, true},
        {"bf16_csbaa_tanh", CUDNN_DATA_BFLOAT16, CUDNN_POINTWISE_TANH_FWD, false, true, false},
        {"f16_cbsa_sigmoid", CUDNN_DATA_HALF, CUDNN_POINTWISE_SIGMOID_FWD, false, false, true},
        {"bf16_csbaa_elu", CUDNN_DATA_BFLOAT16, CUDNN_POINTWISE_ELU_FWD, false, true, false},
    };
    bool ok = true;
    for (const emu_case &c : cases) ok &= run_case(c, &ctx, rng);
    return ok ? 0 : 1;
}
