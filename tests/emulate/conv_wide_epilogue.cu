/* conv_wide_epilogue.cu (emulation): the CUDA convolution's wide fused epilogue (problem/conv.h:
   a per-channel scale applied before or after the bias, any forward activation) as the implicit
   GEMM serves it, both ways make_plan routes it on a forward problem (a handle of compute
   capability 9.0):
   - the kernels' own typed store (igemm_epi_store: the scale and ReLU), run on the CPU as the
     kernels run it, through igemm_store_frags over given accumulators (with one split), or
     through the split-K reduction (igemm_reduce_one) over given partial sums;
   - the partial sums and the second kernel's store (igemm_reduce_one storing through
     conv_store.cuh's ocd_cuda_conv_finish, the store of the direct, FFT and Winograd entries
     too), taken for any other activation (its step a call) and for a scale the typed store
     does not take (one of another type).
   Every output must be
     y = act(sc * alpha * acc + sz * alpha2 * z + sb * bias)
   of this file's own double reference (ref/pointwise.c for the activation) within a rounding of
   the output type. Cases: the ConvScaleBiasAddAct tail (scale before the bias, z scaled) and the
   ConvBiasScaleAct tail (scale after the bias) with RELU, clipped RELU, GELU, SWISH, TANH,
   SIGMOID and ELU, in half and bfloat16 NHWC, an odd pixel count, a scale in fp32, in the
   output's type or (partial path only) in neither, one split or split-K (a long GEMM K). The
   typed store's cases with one split run again through the TMA kernel's staged epilogue
   (conv_igemm_tma_sm90.cu: the warps of the 128x256 tile and of the 256x128 one, two slices a
   warpgroup, lanes in lockstep), which evaluates the same ocd_cuda_conv_epi_value on its
   4-element stores. Prints a line per case and path; exits 1
   if any differs, if the scaled sums all but vanish (a lost scale would match a reference that
   lost it too), or if a plan takes the wrong path. */
#define OCD_SM90A
#include "cuda/conv_igemm.cu"
#include "cuda/conv_igemm_tma_sm90.cu"

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
    cudnnPointwiseMode_t act; /* RELU_FWD: ReLU (the relu flag) unless clip sets the clipped form's upper 6 */
    bool clip, scale_z, scale_bias;
    cudnnDataType_t st; /* the scale's type */
    int c;              /* input channels: 128 makes the GEMM K long enough for split-K */
};

const int N = 2, H = 5, W = 7, K = 24; /* 3x3 filter, padding 1: y is N x K x H x W */

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

/* The outputs of plan pl over the accumulators part ([splits][M][K] partial sums; one split:
   the kernel's registers), as the kernels and the reduction compute them. */
template <typename T> void run_plan_on(igemm_plan &pl, std::vector<float> &part)
{
    igemm_params &prm = pl.prm;
    if (prm.splits > 1 || prm.epi.wide) {
        prm.epi.partial = part.data();
        igemm_reduce_all<T>(prm);
        return;
    }
    /* one m16n8 fragment per (row block, column block, lane), as a warp's epilogue stores it */
    for (int m0 = 0; m0 < prm.M; m0 += 16)
        for (int n0 = 0; n0 < prm.N; n0 += 8)
            for (int lane = 0; lane < 32; lane++)
                igemm_store_frags<T, 1, 1>(
                    prm,
                    [&](int, int, int e) {
                        const int m = m0 + (lane >> 2) + 8 * (e >> 1), n = n0 + 2 * (lane & 3) + (e & 1);
                        return m < prm.M && n < prm.N ? part[(size_t)m * prm.N + n] : NAN;
                    },
                    m0, n0, 0, 0, lane);
}

/* The outputs of plan pl over the accumulators part (one split) through the TMA kernel's staged
   epilogue on tile Tile: each consumer warp's fragments (wgmma's layout) taken from part, put and
   flushed through a buffer of its own, its lanes in lockstep. */
template <class Tile, typename T> void run_staged_on(const igemm_plan &pl, const std::vector<float> &part)
{
    typedef igemm_tma_staged<Tile, T> E;
    const igemm_params &prm = pl.prm;
    std::vector<float> buf(E::WARP_BYTES / 4);
    static float d[32][Tile::MI][Tile::BN / 2];
    for (int m0 = 0; m0 < prm.M; m0 += Tile::BM)
        for (int n0 = 0; n0 < prm.N; n0 += Tile::BN)
            for (int wg = 0; wg < 2; wg++)
                for (int warp = 0; warp < 4; warp++) {
                    typename E::lane lanes[32];
                    for (int ln = 0; ln < 32; ln++) {
                        for (int mi = 0; mi < Tile::MI; mi++)
                            for (int j = 0; j < Tile::BN / 8; j++)
                                for (int e = 0; e < 4; e++) {
                                    const int m = m0 + (Tile::slice(wg) * Tile::MI + mi) * 64 + warp * 16 + (ln >> 2) +
                                                  8 * (e >> 1);
                                    const int n = n0 + 8 * j + 2 * (ln & 3) + (e & 1);
                                    d[ln][mi][j * 4 + e] = m < prm.M && n < prm.N ? part[(size_t)m * prm.N + n] : NAN;
                                }
                        lanes[ln].d = d[ln];
                    }
                    std::fill(buf.begin(), buf.end(), NAN);
                    igemm_tma_store_staged<Tile, T>(prm, m0, n0, wg, warp, (unsigned char *)buf.data(), [&](auto f) {
                        for (int ln = 0; ln < 32; ln++) f(ln, lanes[ln]);
                    });
                }
}

/* One case on the path the plan takes: the typed store where it takes the case's scale, else the
   partial sums. */
bool run_case(const emu_case &e, cudnnHandle_t handle, emu_rng &rng)
{
    const int C = e.c;
    const size_t es = 2, ny = (size_t)N * K * H * W;
    /* zeroed, 16-byte aligned as malloc's (the kernels' widest access here); calloc as the other
       emulations allocate (on the GPU machines this test's heap was found corrupt at its first
       case while it alone used aligned_alloc, under no checker that replaces the allocator) */
    void *x = calloc((size_t)N * C * H * W, es), *w = calloc((size_t)K * C * 9, es), *y = calloc(ny, es);
    void *z = calloc(ny, es), *bias = calloc(K, es);
    void *scale = calloc(K, ocd_dtype_scalar_size(e.st));
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
    ep.scale_view = nhwc(e.st, 1, K, 1, 1);
    const bool relu = e.act == CUDNN_POINTWISE_RELU_FWD && !e.clip;
    ep.relu = relu, ep.act_on = !relu;
    ocd_pw_step_defaults(&ep.act, e.act, 0, -1);
    if (e.clip) ep.act.upper_clip = 6;

    const bool typed = relu && (e.st == e.t || e.st == CUDNN_DATA_FLOAT);
    const char *path = typed ? "typed store" : "partial sums";
    const int tile = OCD_IGEMM_NTILES - 1;
    igemm_plan pl;
    const char *why = make_plan(handle, &p, tile, false, &pl);
    const igemm_epi &pe = pl.prm.epi;
    const ocd_cuda_conv_epi &pt = pe.typed;
    const bool took = why == NULL && (typed ? !pe.wide && pt.scale == scale && !pt.act_on && pt.relu &&
                                                  pt.scale_f32 == (e.st == CUDNN_DATA_FLOAT) &&
                                                  pt.scale_z == e.scale_z && pt.scale_bias == e.scale_bias
                                            : pe.wide && pt.scale == NULL && !pt.act_on);
    if (!took) {
        printf("%-28s %-12s FAILED: plan (%s, wide %d)\n", e.name, path, why ? why : "served", why ? 0 : pe.wide);
        free(x), free(w), free(y), free(z), free(bias), free(scale);
        return false;
    }
    /* the accumulators as the mainloop leaves them, [splits][M][N], and the other inputs */
    const int64_t M = (int64_t)N * H * W, splits = pl.prm.splits, total = M * K;
    std::vector<float> part((size_t)(splits * total));
    for (float &v : part) v = 2 * rng.next();
    for (size_t i = 0; i < ny; i++) ocd_cuda_store_as(e.t, z, (int64_t)i, rng.next());
    for (int k = 0; k < K; k++) ocd_cuda_store_as(e.t, bias, k, rng.next()), ocd_cuda_store_as(e.st, scale, k, 1.5f * rng.next());
    bool all = true;
    /* staged: 1 the 128x256 tile (one slice a warpgroup), 2 the 256x128 one (two: its z loaded
       ahead across them) */
    typedef igemm_tma_tile<128, 256, 4> Wide;
    typedef igemm_tma_tile<256, 128, 4> Tall;
    for (int staged = 0; staged <= (typed && splits == 1 ? 2 : 0); staged++) {
        for (size_t i = 0; i < ny; i++) ocd_cuda_store_as(e.t, y, (int64_t)i, NAN);
        if (staged) path = staged == 1 ? "staged" : "staged 256";
        const bool half = e.t == CUDNN_DATA_HALF;
        if (staged == 1) half ? run_staged_on<Wide, __half>(pl, part) : run_staged_on<Wide, __nv_bfloat16>(pl, part);
        else if (staged == 2) half ? run_staged_on<Tall, __half>(pl, part) : run_staged_on<Tall, __nv_bfloat16>(pl, part);
        else if (half) run_plan_on<__half>(pl, part);
        else run_plan_on<__nv_bfloat16>(pl, part);

        struct ref_pw act = ref_pw_mode(e.act);
        if (e.clip) act.upper_clip = 6;
        double worst = 0, scaled = 0; /* scaled: the largest |sc alpha acc|, which must not vanish */
        int bad = 0;
        for (int64_t m = 0; m < M; m++)
            for (int k = 0; k < K; k++) {
                const int64_t off = m * K + k; /* packed NHWC: pixel m, channel k */
                double acc = 0;
                for (int64_t sp = 0; sp < splits; sp++) acc += part[(size_t)(sp * total + off)];
                const double sc = ocd_cuda_load_as<double>(e.st, scale, k);
                scaled = fmax(scaled, fabs(sc * p.alpha * acc));
                double want = sc * p.alpha * acc +
                              (e.scale_z ? sc : 1) * ep.alpha2 * ocd_cuda_load_as<double>(e.t, z, off) +
                              (e.scale_bias ? sc : 1) * ocd_cuda_load_as<double>(e.t, bias, k);
                want = ref_pw(&act, want, 0);
                const double got = ocd_cuda_load_as<double>(e.t, y, off);
                const double err = fabs(got - want) / fmax(1.0, fabs(want));
                worst = fmax(worst, std::isnan(err) ? INFINITY : err);
                if (!(err <= (e.t == CUDNN_DATA_HALF ? 2e-3 : 1e-2))) bad++;
            }
        /* a scale or accumulators lost (read as zeros by both sides) would pass the comparison */
        if (!(scaled > 0.1)) bad++;
        printf("%-28s %-12s %s (largest relative error %.3g, largest scaled sum %.3g, %d splits)\n", e.name, path,
               bad ? "FAILED" : "ok", worst, scaled, (int)splits);
        all = all && bad == 0;
    }
    free(x), free(w), free(y), free(z), free(bias), free(scale);
    return all;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 132);
    emu_rng rng = {777};
    const cudnnDataType_t F32 = CUDNN_DATA_FLOAT, F16 = CUDNN_DATA_HALF, BF16 = CUDNN_DATA_BFLOAT16;
    const emu_case cases[] = {
        {"f16_csbaa_relu", F16, CUDNN_POINTWISE_RELU_FWD, false, true, false, F32, 8},
        {"f16_cbsa_clipped_relu", F16, CUDNN_POINTWISE_RELU_FWD, true, false, true, F32, 8},
        {"f16_csbaa_gelu", F16, CUDNN_POINTWISE_GELU_FWD, false, true, false, F16, 8},
        {"bf16_cbsa_swish", BF16, CUDNN_POINTWISE_SWISH_FWD, false, false, true, F32, 8},
        {"bf16_csbaa_tanh", BF16, CUDNN_POINTWISE_TANH_FWD, false, true, false, BF16, 8},
        {"f16_cbsa_sigmoid", F16, CUDNN_POINTWISE_SIGMOID_FWD, false, false, true, F32, 8},
        {"bf16_csbaa_elu", BF16, CUDNN_POINTWISE_ELU_FWD, false, true, false, F32, 8},
        {"f16_csbaa_swish_splitk", F16, CUDNN_POINTWISE_SWISH_FWD, false, true, false, F32, 128},
        {"bf16_cbsa_gelu_splitk", BF16, CUDNN_POINTWISE_GELU_FWD, false, false, true, BF16, 128},
        {"f16_csbaa_relu_bf16_scale", F16, CUDNN_POINTWISE_RELU_FWD, false, true, false, BF16, 8},
        {"bf16_cbsa_relu", BF16, CUDNN_POINTWISE_RELU_FWD, false, false, true, BF16, 8},
        {"f16_cbsa_relu_f16_scale", F16, CUDNN_POINTWISE_RELU_FWD, false, false, true, F16, 8},
        {"bf16_csbaa_relu_splitk", BF16, CUDNN_POINTWISE_RELU_FWD, false, true, false, F32, 128},
    };
    bool ok = true;
    for (const emu_case &c : cases) ok &= run_case(c, &ctx, rng);
    return ok ? 0 : 1;
}
