/* gemm_mma.cu: the tensor-core GEMM (src/cuda/gemm_mma.cu on the mainloop of src/cuda/mma.cuh)
   with every thread's own logic run on the CPU, against a double-precision reference: the entry's
   applicability (ocd_cuda_gemm_mma_applies on a handle of compute capability 9.0), its kernel
   arguments (args_of), the dense loaders of each operand layout (setup and load, whose
   cp.async runs as a host copy), the fragment addresses of ldmatrix (ocd_mma_frag_a_addr,
   ocd_mma_frag_b_addr), the accumulator mapping and the epilogue (mma_store). What only the
   hardware does is emulated here from the PTX ISA's definitions: ldmatrix.x4 (and .trans)
   hands lane l of matrix q the elements (l / 4, 2 (l % 4) + {0, 1}) (transposed: (2 (l % 4) +
   {0, 1}, l / 4)); mma.sync m16n8k16 (fp16, bf16) and m16n8k8 (tf32, operands rounded by
   cvt.rna) take their fragments as the ISA lays them out. The K loop is the mainloop's order:
   each K tile loaded by every thread into its stage, then each warp's two k-steps.

   Cases: each transposition of fp16 and bf16, TF32 (A transposed, B not), partial tiles in M and
   N, several K tiles (more than the stages), batches, alpha/beta and a bias with ReLU, and each
   unary forward pointwise step as the epilogue's activation (RELU_FWD with clips and slope,
   TANH, SIGMOID, ELU, GELU, SOFTPLUS, SWISH, with parameters away from their defaults) against
   the tests' double reference of the pointwise modes (ref/pointwise.c). Results must be within the type's
   rounding (and fp32 accumulation and math) of the reference. Prints a line per case; exits 1
   if any differs. */
#include "cuda/gemm_mma.cu"

#include "../ref/pointwise.c"
#include "emu_handle.h"
#include "mma_emulate.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

uint32_t emu_seed = 2024;
double emu_random()
{
    emu_seed = emu_seed * 1664525u + 1013904223u;
    return -1 + 2 * (double)(emu_seed >> 8) / (double)(1u << 24);
}

/* Runs every CTA of the launch the entry makes, thread by thread. */
template <typename T, bool AK, bool BK> void emulate(const mma_args &p, int batch)
{
    typedef mma_shape<T, AK, BK> Shape;
    typedef typename Shape::SA SA;
    typedef typename Shape::SB SB;
    const int MI = mma_tile::MI, NI = mma_tile::NI, THREADS = mma_tile::THREADS;
    std::vector<T> smem((size_t)mma_tile::STAGES * (SA::STAGE + SB::STAGE));
    T *sa = smem.data(), *sb = sa + mma_tile::STAGES * SA::STAGE;
    int nkt = (p.K + SA::BK - 1) / SA::BK;
    std::vector<mma_loaders<T, AK, BK>> ld(THREADS);
    std::vector<float> acc((size_t)THREADS * MI * NI * 4);
    for (int z = 0; z < batch; z++)
        for (int m0 = 0; m0 < p.M; m0 += mma_tile::BM)
            for (int n0 = 0; n0 < p.N; n0 += mma_tile::BN) {
                for (int tid = 0; tid < THREADS; tid++) ld[tid].setup(p, m0, n0, z, tid);
                std::fill(acc.begin(), acc.end(), 0.f);
                for (int kt = 0; kt < nkt; kt++) {
                    int st = kt % mma_tile::STAGES;
                    for (int tid = 0; tid < THREADS; tid++) {
                        ld[tid].a.load(sa + st * SA::STAGE, kt, p);
                        ld[tid].b.load(sb + st * SB::STAGE, kt, p);
                    }
                    mma_ktile<mma_tile, T, AK, BK>(acc.data(), sa + st * SA::STAGE, sb + st * SB::STAGE);
                }
                for (int tid = 0; tid < THREADS; tid++) {
                    int warp = tid / 32, lane = tid % 32;
                    float a[mma_tile::MI][mma_tile::NI][4];
                    memcpy(a, &acc[(size_t)tid * MI * NI * 4], sizeof a);
                    mma_store<T>(p, a, m0, n0, (warp % mma_tile::WARPS_M) * mma_tile::WTM,
                                 (warp / mma_tile::WARPS_M) * mma_tile::WTN, lane, z);
                }
            }
}

struct emu_case {
    const char *name;
    cudnnDataType_t ab, c;
    int m, n, k;
    bool ta, tb;
    int pad, batch;
    double alpha, beta;
    bool bias;
    int act; /* -1: none; ACT_RELU: the activation mode RELU; else a cudnnPointwiseMode_t */
};

const int ACT_RELU = -2;

/* One case: the entry must apply; the emulated launch must match the reference. */
template <typename T> bool run(const emu_case &c, cudnnHandle_t handle)
{
    struct ocd_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.m = c.m, p.n = c.n, p.k = c.k, p.trans_a = c.ta, p.trans_b = c.tb;
    int64_t arows = c.ta ? c.k : c.m, acols = c.ta ? c.m : c.k, brows = c.tb ? c.n : c.k, bcols = c.tb ? c.k : c.n;
    p.lda = arows + c.pad, p.ldb = brows + c.pad, p.ldc = c.m + 1;
    p.batch = c.batch;
    p.stride_a = p.lda * acols + 8, p.stride_b = p.ldb * bcols, p.stride_c = p.ldc * c.n + 2;
    p.ab_type = c.ab, p.c_type = c.c;
    p.compute = c.ab == CUDNN_DATA_FLOAT ? OCD_GEMM_COMPUTE_TF32 : OCD_GEMM_COMPUTE_F32;
    p.alpha = c.alpha, p.beta = c.beta;
    p.bias = c.bias ? OCD_GEMM_BIAS_ROW : OCD_GEMM_BIAS_NONE;
    p.act_on = c.act == ACT_RELU;
    p.act.mode = CUDNN_ACTIVATION_RELU;
    const struct ref_pw pw = ref_pw_mode_varied(c.act >= 0 ? (cudnnPointwiseMode_t)c.act : CUDNN_POINTWISE_RELU_FWD);
    p.pw_act_on = c.act >= 0;
    ocd_pw_step_defaults(&p.pw_act, pw.mode, 0, -1);
    p.pw_act.alpha1 = pw.alpha1, p.pw_act.propagate_nan = pw.propagate_nan;
    p.pw_act.lower_clip = pw.lower_clip, p.pw_act.upper_clip = pw.upper_clip, p.pw_act.clip_slope = pw.slope;
    p.pw_act.elu_alpha = pw.elu_alpha, p.pw_act.softplus_beta = pw.softplus_beta, p.pw_act.swish_beta = pw.swish_beta;
    size_t na = (size_t)(p.stride_a * c.batch), nb = (size_t)(p.stride_b * c.batch), nc = (size_t)(p.stride_c * c.batch);
    std::vector<T> a(na), b(nb);
    std::vector<double> ad(na), bd(nb), want(nc), bias_d(c.m);
    for (size_t i = 0; i < na; i++) ocd_cuda_store(&a[i], (float)emu_random()), ad[i] = ocd_cuda_load(&a[i]);
    for (size_t i = 0; i < nb; i++) ocd_cuda_store(&b[i], (float)emu_random()), bd[i] = ocd_cuda_load(&b[i]);
    bool cf = c.c == CUDNN_DATA_FLOAT;
    std::vector<float> cfl(nc), biasf(c.m);
    std::vector<T> ct(nc), biast(c.m);
    for (size_t i = 0; i < nc; i++) {
        float v = (float)emu_random();
        if (cf) cfl[i] = v, want[i] = v;
        else ocd_cuda_store(&ct[i], v), want[i] = ocd_cuda_load(&ct[i]);
    }
    for (int i = 0; i < c.m; i++) {
        float v = (float)emu_random();
        if (cf) biasf[i] = v, bias_d[i] = v;
        else ocd_cuda_store(&biast[i], v), bias_d[i] = ocd_cuda_load(&biast[i]);
    }
    void *cptr = cf ? (void *)cfl.data() : (void *)ct.data();
    const void *bias = !c.bias ? NULL : cf ? (const void *)biasf.data() : (const void *)biast.data();
    struct ocd_gemm_call call = {&p, a.data(), b.data(), cptr, bias};
    const char *why = ocd_cuda_gemm_mma_applies(handle, &call);
    if (why != NULL) {
        printf("  %-28s the entry declines: %s\n", c.name, why);
        return false;
    }
    for (int z = 0; z < c.batch; z++)
        for (int j = 0; j < c.n; j++)
            for (int i = 0; i < c.m; i++) {
                double s = 0;
                for (int l = 0; l < c.k; l++)
                    s += ad[z * p.stride_a + (c.ta ? l + i * p.lda : i + l * p.lda)] *
                         bd[z * p.stride_b + (c.tb ? j + l * p.ldb : l + j * p.ldb)];
                double &w = want[z * p.stride_c + i + j * p.ldc];
                w = c.alpha * s + c.beta * w + (c.bias ? bias_d[i] : 0);
                if (c.act == ACT_RELU && w < 0) w = 0;
                if (c.act >= 0) w = ref_pw(&pw, w, 0);
            }
    mma_args args = args_of(&call);
    bool ak = c.ta, bk = !c.tb;
    if constexpr (sizeof(T) == 4) emulate<T, true, true>(args, c.batch); /* TF32: K-major only (applies) */
    else if (ak && bk) emulate<T, true, true>(args, c.batch);
    else if (ak) emulate<T, true, false>(args, c.batch);
    else if (bk) emulate<T, false, true>(args, c.batch);
    else emulate<T, false, false>(args, c.batch);
    /* within the rounding of C's type and of products of TF32 or 16-bit operands summed in fp32 */
    double tol = c.ab == CUDNN_DATA_FLOAT ? 4e-3 : cf ? 1e-4 : 1e-2;
    for (size_t i = 0; i < nc; i++) {
        double got = cf ? cfl[i] : ocd_cuda_load(&ct[i]);
        if (!(fabs(got - want[i]) <= tol * fmax(1.0, fabs(want[i])))) {
            printf("  %-28s FAILED at %zu: got %.6g, want %.6g\n", c.name, i, got, want[i]);
            return false;
        }
    }
    printf("  %-28s ok\n", c.name);
    return true;
}

} // namespace

int main()
{
    struct cudnnContext ctx = emu_handle(9, 0);
    const emu_case cases[] = {
        {"f16_nn_partial_tiles", CUDNN_DATA_HALF, CUDNN_DATA_HALF, 72, 40, 48, false, false, 8, 1, 1, 0, false, -1},
        {"f16_tn_long_k_float_c", CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, 64, 72, 200, true, false, 0, 1, 0.5, 0.5, false, -1},
        {"f16_nt_batch", CUDNN_DATA_HALF, CUDNN_DATA_HALF, 24, 136, 40, false, true, 8, 2, 1, 0, false, -1},
        {"bf16_tt_bias_relu", CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, 48, 16, 72, true, true, 0, 3, 1, 0, true, ACT_RELU},
        {"bf16_nn_float_c", CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, 8, 8, 8, false, false, 0, 1, 1, 1, false, -1},
        {"tf32_tn", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 68, 20, 140, true, false, 4, 2, 1, 0.25, true, ACT_RELU},
        /* each pointwise step as the activation */
        {"f16_gelu_bias", CUDNN_DATA_HALF, CUDNN_DATA_HALF, 72, 40, 48, false, false, 8, 1, 1.5, 0, true,
         CUDNN_POINTWISE_GELU_FWD},
        {"f16_softplus_float_c_beta", CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, 64, 24, 64, true, false, 0, 1, 0.5, 0.5, true,
         CUDNN_POINTWISE_SOFTPLUS_FWD},
        {"bf16_swish_batch", CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, 24, 72, 40, false, true, 8, 2, 1, 0, false,
         CUDNN_POINTWISE_SWISH_FWD},
        {"bf16_relu_clipped_sloped", CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, 48, 16, 72, true, true, 0, 1, 2, 0.25, true,
         CUDNN_POINTWISE_RELU_FWD},
        {"tf32_tanh_bias", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 68, 20, 40, true, false, 4, 1, 1, 0, true,
         CUDNN_POINTWISE_TANH_FWD},
        {"f16_sigmoid_tt", CUDNN_DATA_HALF, CUDNN_DATA_HALF, 16, 16, 16, true, true, 0, 1, 1, 0, false,
         CUDNN_POINTWISE_SIGMOID_FWD},
        {"tf32_elu_batch_beta", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 36, 12, 24, true, false, 4, 2, 1, 0.5, true,
         CUDNN_POINTWISE_ELU_FWD},
    };
    bool ok = true;
    for (const emu_case &c : cases) {
        if (c.ab == CUDNN_DATA_HALF) ok &= run<__half>(c, &ctx);
        else if (c.ab == CUDNN_DATA_BFLOAT16) ok &= run<__nv_bfloat16>(c, &ctx);
        else ok &= run<float>(c, &ctx);
    }
    printf("emulate_gemm_mma: %s\n", ok ? "all cases passed" : "FAILED");
    return ok ? 0 : 1;
}
