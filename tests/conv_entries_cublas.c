/* conv_entries_cublas.c: the cuBLAS convolution entries' per-image filter gradient, strided 1x1
   GEMMs and channel-major 1x1 GEMMs are reached where they apply and compute what the reference
   computes. */
#include "conv_reach.h"

#define F CUDNN_DATA_FLOAT
#define D CUDNN_DATA_DOUBLE
static const struct config double_nchw = {"double_nchw", D, D, D, D, CUDNN_DEFAULT_MATH, TV_NCHW, true};
#undef D
#undef F

/* cuda:wgrad_nchw_gemm_cublas_tc (float NCHW under DEFAULT_MATH, TF32) and
   cuda:wgrad_nchw_gemm_cublas (FMA_MATH, double) under BWD_FILTER_ALGO_1 and ALGO_3, ahead of the
   NCHW TF32 kernel: a 1x1 filter at unit stride (x the GEMM operand as it lies), a strided 1x1
   over 19 images (more than the slab sum's 8 lanes, and unequal lanes), a 3x3 filter at stride
   2 in CONVOLUTION mode (its column matrix 9/4 of x, the most the plan takes), two groups (a
   batched GEMM per group). */
TEST(conv_cuda_nchw_wgrad_gemm_entries_are_reached)
{
    if (!conv_tensor_core_pass()) return;
    if (!cublas_loadable()) {
        printf("      (cuBLAS does not load here: its entries are not checked)\n");
        return;
    }
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape one = {"nchw_wgrad_1x1", 2, 3, 40, 24, 1, {9, 11}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false};
    static const struct shape down = {"nchw_wgrad_1x1s2_19_images", 2, 19, 16, 24, 1, {14, 13}, {1, 1}, {0, 0}, {2, 2},
                                      {1, 1}, false};
    static const struct shape s2 = {"nchw_wgrad_3x3s2_convolution", 2, 2, 8, 12, 1, {16, 14}, {3, 3}, {1, 1}, {2, 2},
                                    {1, 1}, true};
    static const struct shape groups = {"nchw_wgrad_1x1_groups2", 2, 2, 16, 8, 2, {10, 10}, {1, 1}, {0, 0}, {1, 1},
                                        {1, 1}, false};
    const struct config *tf32n = &tf32_nchw, *fma = &tc_configs[4];
    const char *const tc = "cuda:wgrad_nchw_gemm_cublas_tc", *const plain = "cuda:wgrad_nchw_gemm_cublas";
    const struct entry_case cases[] = {
        {&one, tf32n, tc, NULL},      {&down, tf32n, tc, NULL},         {&s2, tf32n, tc, NULL},
        {&groups, tf32n, tc, NULL},   {&one, fma, plain, NULL},         {&s2, fma, plain, NULL},
        {&down, &double_nchw, plain, NULL},
    };
    check_entries_reached(cases, sizeof cases / sizeof cases[0], BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
    check_entry_reached(&down, tf32n, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, tc, NULL);
}

/* Strided 1x1 filters without padding on cuda:{fwd,dgrad}_gemm1x1_cublas_tc (float under
   DEFAULT_MATH, TF32; GEMMs of 2^26 multiply-adds and more, which the implicit GEMM leaves to
   cuBLAS) and cuda:{fwd,dgrad}_gemm1x1_cublas (FMA_MATH, double), ahead of the implicit GEMM and
   the stride-phase entries: stride 2 over odd extents, NHWC (the forward there is the gather's,
   which conv_api.c tests) and NCHW, and stride 3; backward data into NCHW (dcol moved by the
   scatter pass, unproven: the suite's OPENCUDNN_UNPROVEN=1 lets it) also at beta 0.5. */
TEST(conv_cuda_strided_1x1_on_cublas)
{
    if (!conv_tensor_core_pass()) return;
    if (!cublas_loadable()) {
        printf("      (cuBLAS does not load here: its entries are not checked)\n");
        return;
    }
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape big = {"cublas_1x1s2_256_128_odd", 2, 8, 256, 128, 1, {37, 35}, {1, 1}, {0, 0}, {2, 2},
                                     {1, 1}, false};
    static const struct shape s3 = {"cublas_1x1s3_odd", 2, 8, 128, 256, 1, {50, 47}, {1, 1}, {0, 0}, {3, 3}, {1, 1},
                                    false};
    static const struct shape small = {"cublas_1x1s2_small", 2, 3, 16, 24, 1, {9, 8}, {1, 1}, {0, 0}, {2, 2}, {1, 1},
                                       false};
    const struct config *tf32 = &tc_configs[2], *tf32n = &tf32_nchw, *fma = &tc_configs[4];
    const struct {
        const struct shape *sh;
        const struct config *cf;
        bool tc;
    } cases[] = {{&big, tf32, true}, {&big, tf32n, true}, {&s3, tf32n, true}, {&small, fma, false},
                 {&small, &double_nchw, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_entry_reached(cases[i].sh, cases[i].cf, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                            cases[i].tc ? "cuda:fwd_gemm1x1_cublas_tc" : "cuda:fwd_gemm1x1_cublas", NULL);
        check_entry_reached(cases[i].sh, cases[i].cf, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                            cases[i].tc ? "cuda:dgrad_gemm1x1_cublas_tc" : "cuda:dgrad_gemm1x1_cublas", NULL);
    }
    const struct entry_case nchw_bwd[] = {
        {&big, tf32n, "cuda:dgrad_gemm1x1_cublas_tc", NULL},
        {&s3, tf32n, "cuda:dgrad_gemm1x1_cublas_tc", NULL},
        {&small, &double_nchw, "cuda:dgrad_gemm1x1_cublas", NULL},
    };
    check_entries_blended(nchw_bwd, sizeof nchw_bwd / sizeof nchw_bwd[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}

/* Float NCHW images of fewer than 100 pixels on cuda:{fwd,dgrad}_gemm1x1_cublas_tc run
   channel-major (conv_cublas.cu's file comment; strided backward data unproven: the suite's
   OPENCUDNN_UNPROVEN=1 lets it): x (dy) re-laid [C][N][P Q] in the workspace, one GEMM a group,
   the output moved into y (dx) with beta. Forward over 7x7 images, a strided 1x1 (14x14 to 7x7),
   two groups; backward data over 7x7 images, two groups, and the strided 1x1 (dx's other pixels
   scaled by beta); each reached, then checked at beta 0 and 0.5. */
TEST(conv_cuda_1x1_few_pixels_run_channel_major)
{
    if (!conv_tensor_core_pass() || !cublas_loadable()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape seven = {"cm_1x1_7x7", 2, 8, 64, 96, 1, {7, 7}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false};
    static const struct shape down = {"cm_1x1s2_14x13", 2, 8, 32, 64, 1, {14, 13}, {1, 1}, {0, 0}, {2, 2}, {1, 1},
                                      false};
    static const struct shape groups = {"cm_1x1_groups2", 2, 4, 32, 48, 2, {9, 9}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false};
    const struct config *tf32n = &tf32_nchw;
    const struct entry_case fwd[] = {
        {&seven, tf32n, "cuda:fwd_gemm1x1_cublas_tc", NULL},
        {&down, tf32n, "cuda:fwd_gemm1x1_cublas_tc", NULL},
        {&groups, tf32n, "cuda:fwd_gemm1x1_cublas_tc", NULL},
    };
    const struct entry_case bwd[] = {
        {&seven, tf32n, "cuda:dgrad_gemm1x1_cublas_tc", NULL},
        {&groups, tf32n, "cuda:dgrad_gemm1x1_cublas_tc", NULL},
        {&down, tf32n, "cuda:dgrad_gemm1x1_cublas_tc", NULL},
    };
    check_entries_blended(fwd, sizeof fwd / sizeof fwd[0], FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    check_entries_blended(bwd, sizeof bwd / sizeof bwd[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}
