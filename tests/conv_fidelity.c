/* conv_fidelity.c: how close float convolutions come to the exact result, per math type.

   The measure is the one rounding analysis bounds: for each output element, the error against
   the double reference (tests/ref/conv.c) divided by the sum of the absolute values of the
   products that make it (the same reference run on |inputs|), in units of float's unit roundoff
   u = 2^-24. Summed in float, in any order, blocked or not, that is about one u on random data
   whatever the length of the sum (the host's results measure 0.25-0.55 u here); inputs rounded
   to TF32 (10-bit mantissa) give about 2^-11 / sqrt(K), a hundred u and more for these sums.

   - CUDNN_FMA_MATH (what PyTorch asks for with TF32 off): every GEMM-shaped and direct algorithm
     of every direction, on each backend, must stay within FP32_BOUND u, and report FMA math.
   - CUDNN_DEFAULT_MATH: a result reported under DEFAULT or FMA math is held to the same bound; one
     reported as TENSOR_OP_MATH (TF32 on the CUDA backend) to TF32_BOUND, 2^-9 of the sum of
     magnitudes, what two inputs cut to 10 bits can lose at worst (DEFAULT_MATH permits TF32 in
     cuDNN 8: cudnnMathType_t).
   Problems have long sums (K = 2048 to 4608), the backward data of the 1x1 stride-2 ResNet layer
   included, whose fp32 result a program compared with a float CPU loop (issue 19, item 5). FFT
   and Winograd are approximations with bounds of their own and are not measured here. */
#include "tensors.h"
#include "test.h"

#include "ref/conv.h"

#include <math.h>
#include <stdlib.h>

#define U32 (1.0 / 16777216.0)
#define FP32_BOUND 8.0                 /* in u: a float sum, blocked or not */
#define TF32_BOUND (1.0 / 512 / U32) /* in u: 2^-9, both inputs cut to 10 bits */

enum dir { FWD, BWD_DATA, BWD_FILTER };

struct fid_case {
    const char *name;
    enum dir dir;
    int n, c, k, h, w, r, s, pad, stride;
};

static const struct fid_case fid_cases[] = {
    {"fwd_3x3_c512", FWD, 1, 512, 8, 4, 4, 3, 3, 1, 1},
    {"bwd_data_3x3_k512", BWD_DATA, 1, 8, 512, 4, 4, 3, 3, 1, 1},
    {"bwd_data_1x1_stride2_k2048", BWD_DATA, 1, 8, 2048, 8, 8, 1, 1, 0, 2},
    {"bwd_filter_3x3_npq4608", BWD_FILTER, 2, 4, 4, 48, 48, 3, 3, 1, 1},
};

static bool measured_algo(enum dir d, int algo)
{
    switch (d) {
    case FWD:
        return algo != CUDNN_CONVOLUTION_FWD_ALGO_FFT && algo != CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING &&
               algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD && algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
    case BWD_DATA:
        return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    default:
        return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
               algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
    }
}

/* Packed NCHW float buffer holding values (which are float-exact: drawn in float). */
static void *upload_floats(const double *v, long n)
{
    float *f = malloc(sizeof(float) * (size_t)n);
    for (long i = 0; i < n; i++) f[i] = (float)v[i];
    void *b = tbuf_from(f, sizeof(float) * (size_t)n);
    free(f);
    return b;
}

static double *random_floats(long n)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++) v[i] = (float)trand_uniform(-1, 1);
    return v;
}

static double *magnitudes(const double *v, long n)
{
    double *a = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++) a[i] = fabs(v[i]);
    return a;
}

/* One run of one algorithm: its output against want (the exact result) and mag (the sums of
   magnitudes); returns the largest error in u, or -1 when the call failed. */
static double run_algo(const struct fid_case *fc, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
                       cudnnTensorDescriptor_t yd, cudnnConvolutionDescriptor_t conv, int algo, size_t ws_bytes,
                       const void *a, const void *b, long out_n, const double *want, const double *mag)
{
    cudnnHandle_t h = test_handle();
    void *out = tbuf_alloc(sizeof(float) * (size_t)out_n), *ws = ws_bytes ? tbuf_alloc(ws_bytes) : NULL;
    float one = 1, zero = 0;
    cudnnStatus_t st;
    if (fc->dir == FWD)
        st = cudnnConvolutionForward(h, &one, xd, a, wd, b, conv, (cudnnConvolutionFwdAlgo_t)algo, ws, ws_bytes, &zero,
                                     yd, out);
    else if (fc->dir == BWD_DATA)
        st = cudnnConvolutionBackwardData(h, &one, wd, b, yd, a, conv, (cudnnConvolutionBwdDataAlgo_t)algo, ws,
                                          ws_bytes, &zero, xd, out);
    else
        st = cudnnConvolutionBackwardFilter(h, &one, xd, a, yd, b, conv, (cudnnConvolutionBwdFilterAlgo_t)algo, ws,
                                            ws_bytes, &zero, wd, out);
    double worst = -1;
    if (CHECK_OK(st)) {
        float *got = malloc(sizeof(float) * (size_t)out_n);
        tbuf_download(got, out, sizeof(float) * (size_t)out_n);
        worst = 0;
        for (long i = 0; i < out_n; i++) {
            double e = fabs((double)got[i] - want[i]) / (U32 * fmax(mag[i], 1e-30));
            if (!(e <= worst)) worst = e; /* NaN too */
        }
        free(got);
    }
    if (ws) tbuf_free(ws);
    tbuf_free(out);
    return worst;
}

/* Every measured algorithm the heuristic lists as runnable, under the math type. */
static void check_case(const struct fid_case *fc, cudnnMathType_t math)
{
    cudnnHandle_t h = test_handle();
    struct ref_conv rc = {.nsp = 2, .n = fc->n, .c = fc->c, .k = fc->k, .groups = 1, .in = {fc->h, fc->w},
                          .filt = {fc->r, fc->s}, .pad = {fc->pad, fc->pad}, .stride = {fc->stride, fc->stride},
                          .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t conv;
    cudnnCreateTensorDescriptor(&xd);
    cudnnCreateTensorDescriptor(&yd);
    cudnnCreateFilterDescriptor(&wd);
    cudnnCreateConvolutionDescriptor(&conv);
    CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, fc->n, fc->c, fc->h, fc->w));
    CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, fc->n, fc->k, rc.out[0], rc.out[1]));
    CHECK_OK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, fc->k, fc->c, fc->r, fc->s));
    CHECK_OK(cudnnSetConvolution2dDescriptor(conv, fc->pad, fc->pad, fc->stride, fc->stride, 1, 1,
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionMathType(conv, math));

    /* the two inputs of the direction (fwd: x, w; bwd data: dy, w; bwd filter: x, dy) */
    long na = fc->dir == BWD_DATA ? ny : nx, nb = fc->dir == BWD_FILTER ? ny : nw;
    long nout = fc->dir == FWD ? ny : fc->dir == BWD_DATA ? nx : nw;
    double *a = random_floats(na), *b = random_floats(nb), *want = malloc(sizeof(double) * (size_t)nout);
    double *aa = magnitudes(a, na), *ab = magnitudes(b, nb), *mag = malloc(sizeof(double) * (size_t)nout);
    if (fc->dir == FWD) ref_conv_fwd(&rc, a, b, want), ref_conv_fwd(&rc, aa, ab, mag);
    else if (fc->dir == BWD_DATA) ref_conv_bwd_data(&rc, a, b, want), ref_conv_bwd_data(&rc, aa, ab, mag);
    else ref_conv_bwd_filter(&rc, a, b, want), ref_conv_bwd_filter(&rc, aa, ab, mag);
    void *da = upload_floats(a, na), *db = upload_floats(b, nb);

    enum { MAXA = 8 };
    int got = 0, algos[MAXA];
    size_t mem[MAXA];
    cudnnMathType_t maths[MAXA];
    if (fc->dir == FWD) {
        cudnnConvolutionFwdAlgoPerf_t perf[MAXA];
        CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, conv, yd, MAXA, &got, perf));
        for (int i = 0; i < got; i++)
            algos[i] = perf[i].status == CUDNN_STATUS_SUCCESS ? (int)perf[i].algo : -1, mem[i] = perf[i].memory,
            maths[i] = perf[i].mathType;
    } else if (fc->dir == BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[MAXA];
        CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, yd, conv, xd, MAXA, &got, perf));
        for (int i = 0; i < got; i++)
            algos[i] = perf[i].status == CUDNN_STATUS_SUCCESS ? (int)perf[i].algo : -1, mem[i] = perf[i].memory,
            maths[i] = perf[i].mathType;
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[MAXA];
        CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, xd, yd, conv, wd, MAXA, &got, perf));
        for (int i = 0; i < got; i++)
            algos[i] = perf[i].status == CUDNN_STATUS_SUCCESS ? (int)perf[i].algo : -1, mem[i] = perf[i].memory,
            maths[i] = perf[i].mathType;
    }
    int measured = 0;
    for (int i = 0; i < got; i++) {
        if (algos[i] < 0 || !measured_algo(fc->dir, algos[i])) continue;
        measured++;
        bool tf32 = maths[i] == CUDNN_TENSOR_OP_MATH || maths[i] == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
        if (math == CUDNN_FMA_MATH && !CHECK(maths[i] == CUDNN_FMA_MATH))
            FAIL("%s algo %d under FMA_MATH reports math type %d", fc->name, algos[i], (int)maths[i]);
        double bound = tf32 ? TF32_BOUND : FP32_BOUND;
        double e = run_algo(fc, xd, wd, yd, conv, algos[i], mem[i], da, db, nout, want, mag);
        if (!CHECK(e >= 0 && e <= bound))
            FAIL("%s algo %d, math %d (reported %d): error %.2f u of the sum of magnitudes, bound %.0f u", fc->name,
                 algos[i], (int)math, (int)maths[i], e, bound);
    }
    if (!CHECK(measured > 0)) FAIL("%s: no algorithm measured", fc->name);

    tbuf_free(da);
    tbuf_free(db);
    free(a), free(b), free(aa), free(ab), free(want), free(mag);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(conv);
}

TEST(conv_fp32_fma_math_is_fp32)
{
    for (size_t i = 0; i < TLEN(fid_cases); i++) check_case(&fid_cases[i], CUDNN_FMA_MATH);
}

TEST(conv_fp32_default_math_within_its_reported_math)
{
    if (test_backend[0] != 'c') return; /* the host computes fp32 under every math type */
    for (size_t i = 0; i < TLEN(fid_cases); i++) check_case(&fid_cases[i], CUDNN_DEFAULT_MATH);
}
