/* conv_winograd.c: tests of the WINOGRAD and WINOGRAD_NONFUSED convolution algorithms, forced
   through the API on every backend present, against the double references (tests/ref/conv.c):
   forward and backward data with both algorithms, the filter gradient with WINOGRAD_NONFUSED;
   3x3 (F(2x2,3x3), F(4x4,3x3)) and 5x5 (F(2x2,5x5)) filters; odd sizes with partial edge tiles,
   padding 0 to larger than the filter, CONVOLUTION mode, groups, NHWC and padded layouts, beta;
   float (FMA math), PSEUDO_HALF and TRUE_HALF; the fp32 error bounds (1e-5 for 3x3, 1e-3 for
   5x5); the fused bias and activation; Get_v7 and Find list the algorithms; the cuDNN 8.2
   restrictions (2-D, unit stride and dilation, 3x3 (and 5x5 for WINOGRAD_NONFUSED), no double,
   no BWD_FILTER_ALGO_WINOGRAD) are refused with NOT_SUPPORTED and nothing written. */
#include "conv_support.h"

#include <stdlib.h>
#include <string.h>

#define F CUDNN_DATA_FLOAT
#define H CUDNN_DATA_HALF
/* FMA math: the CUDA tensor-op entries (TF32 for float) stay out of the fp32 accuracy tests */
static const struct conv_config cf_float = {"float", F, F, CUDNN_FMA_MATH};
static const struct conv_config cf_float_tc = {"float_tensor_op", F, F, CUDNN_TENSOR_OP_MATH};
static const struct conv_config cf_pseudo_half = {"pseudo_half", H, F, CUDNN_DEFAULT_MATH};
static const struct conv_config cf_true_half = {"true_half", H, H, CUDNN_DEFAULT_MATH};
static const struct conv_config cf_double = {"double", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH};

/* [dir][0]: WINOGRAD (-1: none), [dir][1]: WINOGRAD_NONFUSED */
static const int wino_algos[CONV_DIRS][2] = {
    {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED},
    {-1, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED},
};
static const char *const dir_names[CONV_DIRS] = {"fwd", "bwd_data", "bwd_filter"};

/* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
static const struct conv_shape shapes[] = {
    {"3x3_pad1", 2, 2, 3, 4, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"3x3_odd_sizes_pad0", 2, 1, 5, 3, 1, {11, 7}, {3, 3}, {0, 0}, {1, 1}, {1, 1}, false},
    {"3x3_convolution_mode_groups2", 2, 2, 4, 6, 2, {9, 6}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, true},
    {"3x3_pad_above_filter", 2, 1, 2, 3, 1, {5, 4}, {3, 3}, {3, 4}, {1, 1}, {1, 1}, false},
    {"3x3_many_tiles", 2, 3, 17, 19, 1, {13, 21}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"5x5_pad2", 2, 2, 3, 4, 1, {9, 10}, {5, 5}, {2, 2}, {1, 1}, {1, 1}, false},
    {"5x5_convolution_mode_odd", 2, 1, 4, 2, 2, {7, 13}, {5, 5}, {1, 3}, {1, 1}, {1, 1}, true},
};

/* Every direction and algorithm the documented rules admit for the shape. */
static void run_shape(const struct conv_shape *sh, const struct conv_config *cf, int variant, double tol)
{
    struct conv_setup s;
    const bool five = sh->filt[0] == 5;
    if (conv_setup_init(&s, sh, cf, variant % 2 ? TV_NHWC : TV_NCHW, variant % 3 ? TV_NCHW : TV_PADDED, variant % 2))
        for (int d = 0; d < CONV_DIRS; d++)
            for (int t = 0; t < 2; t++) {
                if (wino_algos[d][t] < 0 || (five && t == 0) || (cf->compute == H && (five || t == 0))) continue;
                char what[160];
                snprintf(what, sizeof what, "%s %s %s %s", dir_names[d], t ? "WINOGRAD_NONFUSED" : "WINOGRAD", sh->name,
                         cf->name);
                double err = 0;
                cudnnStatus_t st = conv_setup_run(&s, d, wino_algos[d][t], 0.75, variant % 2 ? 0.5 : 0, tol, &err, what);
                if (!CHECK_OK(st)) printf("      (%s)\n", what);
                if (getenv("CONV_VERBOSE")) printf("      %s: relative error %.3g\n", what, err);
            }
    conv_setup_free(&s);
}

TEST(conv_winograd_every_direction_float)
{
    /* per element: 1e-4 of max(1, |want|) (F(4x4, 3x3) sums 36 transformed products per channel) */
    for (size_t i = 0; i < TLEN(shapes); i++) run_shape(&shapes[i], &cf_float, (int)i, 1e-4);
}

TEST(conv_winograd_every_direction_half)
{
    run_shape(&shapes[0], &cf_pseudo_half, 0, 2e-2);
    run_shape(&shapes[2], &cf_pseudo_half, 1, 2e-2);
    run_shape(&shapes[5], &cf_pseudo_half, 2, 2e-2);
    run_shape(&shapes[1], &cf_true_half, 3, 2e-2);
}

/* Tensor-op math (TF32 on the CUDA backend) within the TF32 tolerance. */
TEST(conv_winograd_tensor_op_math)
{
    run_shape(&shapes[4], &cf_float_tc, 0, 5e-3);
}

/* The fp32 accuracy asked of Winograd: the largest error at most 1e-5 of the largest result for
   3x3 filters, 1e-3 for 5x5, on problems with many channels and tiles. The bound is on every
   element at that scale: the transforms' rounding errors grow with the tile's inputs, not with
   its result, so a small result amid large ones carries an error of the large ones' size. */
TEST(conv_winograd_float_error_bounds)
{
    static const struct conv_shape sh[] = {
        {"3x3_c64", 2, 2, 64, 16, 1, {20, 18}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
        {"5x5_c32", 2, 2, 32, 8, 1, {20, 18}, {5, 5}, {2, 2}, {1, 1}, {1, 1}, false},
    };
    for (size_t i = 0; i < TLEN(sh); i++) {
        const double bound = i == 0 ? 1e-5 : 1e-3;
        struct conv_setup s;
        if (conv_setup_init(&s, &sh[i], &cf_float, TV_NCHW, TV_NCHW, false))
            for (int d = 0; d < CONV_DIRS; d++)
                for (int t = i == 0 ? 0 : 1; t < 2; t++) {
                    if (wino_algos[d][t] < 0) continue;
                    double err = 1;
                    CHECK_OK(conv_setup_run(&s, d, wino_algos[d][t], 1, 0, bound * conv_setup_result_scale(&s, d), &err,
                                            sh[i].name));
                    if (!CHECK(err <= bound) || getenv("CONV_VERBOSE"))
                        printf("      (%s %s algo %d: %.3g)\n", sh[i].name, dir_names[d], wino_algos[d][t], err);
                }
        conv_setup_free(&s);
    }
}

/* Get_v7 lists the Winograd algorithms as runnable with their workspace; Find times them. */
TEST(conv_winograd_listed_by_get_v7_and_find)
{
    struct conv_setup s;
    if (conv_setup_init(&s, &shapes[0], &cf_float, TV_NCHW, TV_NCHW, false))
        for (int d = 0; d < CONV_DIRS; d++) {
            const int want = d == CONV_BWD_FILTER ? 1 : 2;
            int algos[8], seen = 0;
            cudnnStatus_t st[8];
            size_t mem[8];
            int n = conv_setup_heuristic(&s, d, algos, st, mem);
            for (int i = 0; i < n; i++)
                if (algos[i] == wino_algos[d][0] || algos[i] == wino_algos[d][1]) {
                    size_t ws = 0;
                    CHECK_OK(conv_setup_workspace(&s, d, algos[i], &ws));
                    CHECK(st[i] == CUDNN_STATUS_SUCCESS && mem[i] == ws && ws > 0);
                    seen++;
                }
            CHECK(seen == want);
            n = conv_setup_find(&s, d, algos, st, mem);
            seen = 0;
            for (int i = 0; i < n; i++)
                if ((algos[i] == wino_algos[d][0] || algos[i] == wino_algos[d][1]) && st[i] == CUDNN_STATUS_SUCCESS)
                    seen++;
            CHECK(seen == want);
        }
    conv_setup_free(&s);
}

/* The heuristic's exception (ocd_conv_heuristic_first): on CUDA a float NCHW 3x3 unit-stride
   convolution with 64 channels each way lists WINOGRAD first where the GPU is not of compute
   capability 9.0, and on it where the images are small: forward below 100 output pixels (8x8;
   12x12 and 32x32 on the TMA kernel's TF32), backward data below 512 (32x32 on it), and that
   choice runs and matches the reference within
   the fp32 bound of 3x3 Winograd (1e-5 of the largest result, as in
   conv_winograd_float_error_bounds); the filter gradient, the host and half data keep their GEMM
   first. */
TEST(conv_winograd_heuristic_first_where_it_wins)
{
    static const struct conv_shape shapes[] = {
        {"3x3_64_channels", 2, 1, 64, 64, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
        {"3x3_64_channels_12x12", 2, 1, 64, 64, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
        {"3x3_64_channels_32x32", 2, 1, 64, 64, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    };
    const bool cuda = strcmp(test_backend, "cuda") == 0;
    const bool tma = test_compute_capability() == 90;
    const struct conv_config *configs[] = {&cf_float, &cf_pseudo_half};
    for (size_t k = 0; k < TLEN(configs) * TLEN(shapes); k++) {
        const size_t i = k / TLEN(configs), c = k % TLEN(configs);
        struct conv_setup s;
        if (conv_setup_init(&s, &shapes[i], configs[c], TV_NCHW, TV_NCHW, false))
            for (int d = 0; d < CONV_DIRS; d++) {
                int algos[8];
                cudnnStatus_t st[8];
                size_t mem[8];
                int n = conv_setup_heuristic(&s, d, algos, st, mem);
                const int wino = wino_algos[d][d == CONV_BWD_FILTER ? 1 : 0];
                /* on compute capability 9.0 the TF32 TMA kernel ahead from 100 pixels forward, 512
                   backward data */
                const int64_t pixels = shapes[i].in[0] * shapes[i].in[1];
                const bool small = pixels < (d == CONV_FWD ? 100 : 512);
                const bool want_first = cuda && configs[c] == &cf_float && d != CONV_BWD_FILTER && (small || !tma);
                char what[128];
                snprintf(what, sizeof what, "%s %s %s: first %d", shapes[i].name, dir_names[d], configs[c]->name,
                         n > 0 ? algos[0] : -1);
                if (!CHECK(n > 0 && st[0] == CUDNN_STATUS_SUCCESS && (algos[0] == wino) == want_first))
                    printf("      (%s)\n", what);
                if (want_first) {
                    double err = 1;
                    CHECK_OK(conv_setup_run(&s, d, algos[0], 1, 0, 1e-5 * conv_setup_result_scale(&s, d), &err, what));
                    CHECK(err <= 1e-5);
                }
            }
        conv_setup_free(&s);
    }
}

/* Problems the cuDNN 8.2 tables rule out: NOT_SUPPORTED from the workspace query and the call,
   the destination untouched. */
TEST(conv_winograd_rejects_what_the_documentation_excludes)
{
    static const struct {
        struct conv_shape sh;
        const struct conv_config *cf;
        int dir, nonfused; /* -1: both */
    } cases[] = {
        {{"stride2", 2, 1, 2, 2, 1, {8, 8}, {3, 3}, {1, 1}, {2, 2}, {1, 1}, false}, &cf_float, CONV_FWD, -1},
        {{"dilation2", 2, 1, 2, 2, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, false}, &cf_float, CONV_BWD_DATA, -1},
        {{"5x5_fused", 2, 1, 2, 2, 1, {8, 8}, {5, 5}, {2, 2}, {1, 1}, {1, 1}, false}, &cf_float, CONV_FWD, 0},
        {{"1x1", 2, 1, 2, 2, 1, {8, 8}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false}, &cf_float, CONV_BWD_FILTER, 1},
        {{"3x5", 2, 1, 2, 2, 1, {8, 8}, {3, 5}, {1, 2}, {1, 1}, {1, 1}, false}, &cf_float, CONV_FWD, 1},
        {{"3d", 3, 1, 2, 2, 1, {4, 4, 4}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false}, &cf_float, CONV_FWD, -1},
        {{"double", 2, 1, 2, 2, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false}, &cf_double, CONV_BWD_DATA, -1},
        {{"true_half_5x5", 2, 1, 2, 2, 1, {8, 8}, {5, 5}, {2, 2}, {1, 1}, {1, 1}, false}, &cf_true_half, CONV_FWD, 1},
        {{"true_half_fused", 2, 1, 2, 2, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false}, &cf_true_half, CONV_FWD, 0},
    };
    for (size_t i = 0; i < TLEN(cases); i++) {
        struct conv_setup s;
        if (conv_setup_init(&s, &cases[i].sh, cases[i].cf, TV_NCHW, TV_NCHW, false))
            for (int t = 0; t < 2; t++) {
                int algo = wino_algos[cases[i].dir][t];
                if ((cases[i].nonfused >= 0 && t != cases[i].nonfused) || algo < 0) continue;
                size_t ws = 7;
                CHECK_STATUS(conv_setup_workspace(&s, cases[i].dir, algo, &ws), CUDNN_STATUS_NOT_SUPPORTED);
                /* the run poisons the destination; a rejected call leaves the poison */
                if (!CHECK_STATUS(conv_setup_run(&s, cases[i].dir, algo, 1, 0, 0, NULL, cases[i].sh.name),
                                  CUDNN_STATUS_NOT_SUPPORTED))
                    printf("      (%s)\n", cases[i].sh.name);
            }
        conv_setup_free(&s);
    }
    /* the filter gradient has no fused WINOGRAD in cuDNN */
    struct conv_setup s;
    if (conv_setup_init(&s, &shapes[0], &cf_float, TV_NCHW, TV_NCHW, false))
        CHECK_STATUS(conv_setup_run(&s, CONV_BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, 1, 0, 0, NULL,
                                    "BWD_FILTER_ALGO_WINOGRAD"),
                     CUDNN_STATUS_NOT_SUPPORTED);
    conv_setup_free(&s);
}

/* cudnnConvolutionBiasActivationForward with the Winograd algorithms: y = ReLU(alpha1 * conv +
   alpha2 * z + bias) through each entry's store, z read from y's buffer (in place). */
TEST(conv_winograd_fused_bias_activation)
{
    struct conv_setup s;
    if (!conv_setup_init(&s, &shapes[2], &cf_float, TV_NHWC, TV_NCHW, true)) {
        conv_setup_free(&s);
        return;
    }
    const struct ref_conv *r = &s.r;
    const int64_t ny = s.y.count, per = (int64_t)r->out[0] * r->out[1];
    double *z = tview_random(ny, -1, 1), *bias = tview_random(r->k, -1, 1), *want = malloc(sizeof(double) * (size_t)ny);
    const double alpha1 = 0.75, alpha2 = 0.5;
    for (int64_t i = 0; i < ny; i++) {
        double v = alpha1 * s.want[CONV_FWD][i] + alpha2 * z[i] + bias[i / per % r->k];
        want[i] = v < 0 ? 0 : v;
    }
    struct tview bv;
    int bd[4] = {1, r->k, 1, 1};
    tview_init(&bv, CUDNN_DATA_FLOAT, 4, bd, TV_NCHW);
    void *bb = tview_upload(&bv, bias);
    cudnnActivationDescriptor_t act;
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0));
    const float a1 = (float)alpha1, a2 = (float)alpha2;
    for (int t = 0; t < 2; t++) {
        const int algo = wino_algos[CONV_FWD][t];
        void *yb = tview_upload(&s.y, z);
        size_t ws_bytes = 0;
        CHECK_OK(conv_setup_workspace(&s, CONV_FWD, algo, &ws_bytes));
        void *ws = tbuf_alloc(ws_bytes);
        if (CHECK_OK(cudnnConvolutionBiasActivationForward(test_handle(), &a1, s.x.desc, s.xb, s.wdesc, s.wb, s.conv,
                                                           (cudnnConvolutionFwdAlgo_t)algo, ws, ws_bytes, &a2,
                                                           s.y.desc, yb, bv.desc, bb, act, s.y.desc, yb)))
            tview_check_blend(&s.y, yb, want, NULL, 1, 0, 1e-4, t ? "fused WINOGRAD_NONFUSED" : "fused WINOGRAD");
        tbuf_free(ws);
        tview_free(&s.y, yb);
    }
    cudnnDestroyActivationDescriptor(act);
    tview_free(&bv, bb);
    tview_destroy(&bv);
    free(z), free(bias), free(want);
    conv_setup_free(&s);
}
