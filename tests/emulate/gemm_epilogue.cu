/* gemm_epilogue.cu: the CUDA GEMM's epilogue pass (src/cuda/gemm_plain.cu, run after cuBLAS) with
   every thread of a small grid run on the CPU: the element numbers split into row, column and
   batch by the multiply-high divisions (and by 64-bit division where the pass takes that path),
   the batch addressing (strided with a leading dimension above the row count, and arrays of
   batch pointers), the bias per row or column and the activation, against a double reference
   (ref/pointwise.c for the pointwise step). C holds alpha * A B + beta * C as cuBLAS leaves it;
   the pass must leave act(C + bias) in every element of every matrix and touch nothing between
   them. The vectorized form of the pass (16-byte vectors of rows, GELU_FWD inlined) runs the
   cases marked vec, which must fit it. Prints a line per case; exits 1 if any differs. */
#include "cuda/gemm_plain.cu"

#include "../ref/pointwise.c"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

uint32_t emu_seed = 99;
double emu_random()
{
    emu_seed = emu_seed * 1664525u + 1013904223u;
    return -2 + 4 * (double)(emu_seed >> 8) / (double)(1u << 24);
}

struct emu_case {
    const char *name;
    cudnnDataType_t t;
    int64_t m, n, batch, ldc, stride_c;
    enum ocd_gemm_bias bias;
    int act; /* -1: none, 0: the RELU activation mode, else a pointwise mode */
    bool pointers, slow; /* arrays of batch pointers; the 64-bit division path */
    bool vec;            /* the vectorized pass */
};

template <typename C> bool run(const emu_case &k)
{
    const int64_t span = k.stride_c * (k.batch - 1) + k.ldc * k.n, nbias = k.bias == OCD_GEMM_BIAS_ROW ? k.m : k.n;
    std::vector<C> c((size_t)span), bias((size_t)nbias);
    std::vector<double> before((size_t)span);
    for (int64_t x = 0; x < span; x++) ocd_cuda_store(&c[(size_t)x], emu_random()), before[(size_t)x] = ocd_cuda_load(&c[(size_t)x]);
    for (C &b : bias) ocd_cuda_store(&b, emu_random());
    std::vector<C *> ptrs;
    for (int64_t b = 0; b < k.batch; b++) ptrs.push_back(c.data() + b * k.stride_c);

    struct ocd_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.m = k.m, p.n = k.n, p.k = 1, p.batch = k.batch, p.ldc = k.ldc, p.stride_c = k.stride_c, p.lda = k.m, p.ldb = 1;
    p.pointer_array = k.pointers;
    p.ab_type = p.c_type = k.t;
    p.alpha = 1;
    p.bias = k.bias;
    struct ref_pw pw = ref_pw_mode_varied(k.act > 0 ? (cudnnPointwiseMode_t)k.act : CUDNN_POINTWISE_GELU_FWD);
    if (k.act == 0) {
        p.act_on = true;
        p.act.mode = CUDNN_ACTIVATION_RELU;
    } else if (k.act > 0) {
        p.pw_act_on = true;
        ocd_pw_step_defaults(&p.pw_act, pw.mode, 0, -1);
        p.pw_act.alpha1 = pw.alpha1, p.pw_act.lower_clip = pw.lower_clip, p.pw_act.upper_clip = pw.upper_clip;
        p.pw_act.clip_slope = pw.slope, p.pw_act.elu_alpha = pw.elu_alpha;
        p.pw_act.softplus_beta = pw.softplus_beta, p.pw_act.swish_beta = pw.swish_beta;
    }
    struct ocd_gemm_call call = {&p, NULL, NULL, k.pointers ? (void *)ptrs.data() : (void *)c.data(),
                                 k.bias == OCD_GEMM_BIAS_NONE ? NULL : bias.data()};
    /* the launch's grid cut to 3 blocks of 8 threads, striding */
    const unsigned threads = 8, blocks = 3;
    typedef typename std::conditional<std::is_same<C, double>::value, double, float>::type Acc;
    if (k.vec) {
        if (vec_fits(&call) != true) {
            printf("%-36s FAILED (the vectorized pass refuses it)\n", k.name);
            return false;
        }
        const epilogue_vec_args a = epilogue_vec_args_of(&call);
        const bool gelu = a.p.e.pw_on && a.p.e.pw.mode == CUDNN_POINTWISE_GELU_FWD;
        const uint32_t step = EPI_VECS * threads;
        for (unsigned blk = 0; blk < blocks; blk++)
            for (uint32_t base = blk * step; base < a.total; base += blocks * step)
                for (unsigned t = 0; t < threads; t++)
                    gelu ? gemm_epilogue_vec_span<C, Acc, true>(a, base, t, threads)
                         : gemm_epilogue_vec_span<C, Acc, false>(a, base, t, threads);
    } else {
        epilogue_args a = epilogue_args_of(&call);
        if (k.slow) a.fast = false;
        const int64_t total = k.m * k.n * k.batch, step = EPI_ELEMS * (int64_t)threads;
        for (unsigned blk = 0; blk < blocks; blk++)
            for (int64_t base = blk * step; base < total; base += blocks * step)
                for (unsigned t = 0; t < threads; t++) gemm_epilogue_span<C, Acc>(a, base, t, threads);
    }

    const double tol = k.t == CUDNN_DATA_HALF ? 4e-3 : k.t == CUDNN_DATA_BFLOAT16 ? 2e-2 : 1e-5;
    double worst = 0;
    int bad = 0;
    std::vector<bool> inside((size_t)span, false);
    for (int64_t b = 0; b < k.batch; b++)
        for (int64_t j = 0; j < k.n; j++)
            for (int64_t i = 0; i < k.m; i++) {
                const int64_t off = b * k.stride_c + i + j * k.ldc;
                inside[(size_t)off] = true;
                double v = before[(size_t)off];
                if (k.bias != OCD_GEMM_BIAS_NONE) v += ocd_cuda_load(&bias[(size_t)(k.bias == OCD_GEMM_BIAS_ROW ? i : j)]);
                const double want = k.act == 0 ? fmax(v, 0.0) : k.act > 0 ? ref_pw(&pw, v, 0) : v;
                const double got = ocd_cuda_load(&c[(size_t)off]), err = fabs(got - want) / fmax(1.0, fabs(want));
                worst = fmax(worst, std::isnan(err) ? INFINITY : err);
                if (!(err <= tol)) bad++;
            }
    for (int64_t x = 0; x < span; x++) /* the gaps between columns and matrices keep their values */
        if (!inside[(size_t)x] && ocd_cuda_load(&c[(size_t)x]) != before[(size_t)x]) bad++;
    printf("%-36s %s (largest relative error %.3g)\n", k.name, bad ? "FAILED" : "ok", worst);
    return bad == 0;
}

} // namespace

int main()
{
    const emu_case cases[] = {
        {"f16_bias_col_relu_batches", CUDNN_DATA_HALF, 37, 24, 3, 40, 1000, OCD_GEMM_BIAS_COL, 0, false, false},
        {"bf16_bias_row_gelu_pointers", CUDNN_DATA_BFLOAT16, 19, 11, 2, 19, 300, OCD_GEMM_BIAS_ROW,
         CUDNN_POINTWISE_GELU_FWD, true, false},
        {"f32_swish_no_bias", CUDNN_DATA_FLOAT, 64, 9, 1, 70, 0, OCD_GEMM_BIAS_NONE, CUDNN_POINTWISE_SWISH_FWD, false,
         false},
        {"f64_bias_col_relu_64bit_division", CUDNN_DATA_DOUBLE, 13, 17, 2, 15, 260, OCD_GEMM_BIAS_COL, 0, false, true},
        {"f16_one_row", CUDNN_DATA_HALF, 1, 50, 2, 1, 60, OCD_GEMM_BIAS_ROW, CUDNN_POINTWISE_TANH_FWD, false, false},
        /* the vectorized pass: MatmulBiasAct's packed C, padded columns and batch gaps, each bias */
        {"vec_f16_bias_row_gelu_packed", CUDNN_DATA_HALF, 64, 37, 1, 64, 0, OCD_GEMM_BIAS_ROW, CUDNN_POINTWISE_GELU_FWD,
         false, false, true},
        {"vec_f16_bias_col_gelu_batches", CUDNN_DATA_HALF, 24, 7, 3, 40, 296, OCD_GEMM_BIAS_COL,
         CUDNN_POINTWISE_GELU_FWD, false, false, true},
        {"vec_bf16_bias_row_swish_batches", CUDNN_DATA_BFLOAT16, 16, 9, 2, 24, 224, OCD_GEMM_BIAS_ROW,
         CUDNN_POINTWISE_SWISH_FWD, false, false, true},
        {"vec_f32_gelu_no_bias", CUDNN_DATA_FLOAT, 12, 11, 1, 16, 0, OCD_GEMM_BIAS_NONE, CUDNN_POINTWISE_GELU_FWD, false,
         false, true},
        {"vec_f32_bias_col_relu", CUDNN_DATA_FLOAT, 8, 33, 2, 8, 264, OCD_GEMM_BIAS_COL, 0, false, false, true},
        {"vec_f64_bias_row_elu", CUDNN_DATA_DOUBLE, 6, 13, 2, 10, 140, OCD_GEMM_BIAS_ROW, CUDNN_POINTWISE_ELU_FWD,
         false, false, true},
        {"vec_f16_bias_row_no_act", CUDNN_DATA_HALF, 8, 5, 1, 8, 0, OCD_GEMM_BIAS_ROW, -1, false, false, true},
    };
    bool ok = true;
    for (const emu_case &k : cases) {
        switch (k.t) {
        case CUDNN_DATA_HALF: ok &= run<__half>(k); break;
        case CUDNN_DATA_BFLOAT16: ok &= run<__nv_bfloat16>(k); break;
        case CUDNN_DATA_DOUBLE: ok &= run<double>(k); break;
        default: ok &= run<float>(k); break;
        }
    }
    return ok ? 0 : 1;
}
