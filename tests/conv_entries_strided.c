/* conv_entries_strided.c: the strided 1x1 cuBLAS paths (backward data: cuda:dgrad_gemm1x1_strided_cublas_tc,
   one cuBLAS GEMM and a pass over dx; the filter gradient: the cuBLAS 1x1 entry on a gathered x)
   are reached where they apply and compute what the reference computes. */
#include "conv_reach.h"

/* Ahead of the stride phases: ResNet's downsampling layer (1x1 stride 2, C = 256 -> K = 128) over
   27x28 (a last row of dx no dy pixel reaches), fp16 and bf16; stride 3 over 20x19; strides (2, 1);
   a 3-D problem. Each reached at beta 0, then checked through BWD_DATA_ALGO_1 at beta 0 and 0.5
   (check_direction: dcol of dx's type, then fp32). */
TEST(conv_cuda_dgrad_1x1_strided_entry_is_reached)
{
    if (!conv_tensor_core_pass() || !cublas_loadable()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape down = {"dgrad_1x1s2_c256_k128", 2, 4, 256, 128, 1, {27, 28}, {1, 1}, {0, 0}, {2, 2},
                                      {1, 1}, false};
    static const struct shape s3 = {"dgrad_1x1s3", 2, 2, 64, 96, 1, {20, 19}, {1, 1}, {0, 0}, {3, 3}, {1, 1}, true};
    static const struct shape s21 = {"dgrad_1x1s21", 2, 3, 40, 56, 1, {9, 11}, {1, 1}, {0, 0}, {2, 1}, {1, 1}, false};
    static const struct shape three = {"dgrad_1x1x1s2_3d", 3, 2, 32, 48, 1, {5, 6, 7}, {1, 1, 1}, {0, 0, 0},
                                       {2, 2, 2}, {1, 1, 1}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1];
    const char *const entry = "cuda:dgrad_gemm1x1_strided_cublas_tc";
    const struct entry_case cases[] = {
        {&down, half, entry, NULL}, {&down, bf16, entry, NULL}, {&s3, bf16, entry, NULL},
        {&s21, half, entry, NULL},  {&three, half, entry, NULL},
    };
    check_entries_blended(cases, sizeof cases / sizeof cases[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}

/* The strided 1x1 filter gradient on the cuBLAS 1x1 entry: x gathered at the output's pixels by the
   im2col kernel, 16 bytes at a time, then dw = alpha dy^T col + beta dw; ResNet's downsampling
   layer over 27x28, fp16, bf16 and fp32 (TF32 where allowed); strides (2, 1) in CONVOLUTION mode.
   Reached at beta 0, then checked through BWD_FILTER_ALGO_1 at beta 0 and 0.5. */
TEST(conv_cuda_wgrad_1x1_strided_gathers)
{
    if (!conv_tensor_core_pass() || !cublas_loadable()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    /* above the cuBLAS entries' small-GEMM bound (2^26 multiply-adds) */
    static const struct shape down = {"wgrad_1x1s2_c256_k128", 2, 16, 256, 128, 1, {27, 28}, {1, 1}, {0, 0}, {2, 2},
                                      {1, 1}, false};
    static const struct shape s21 = {"wgrad_1x1s21", 2, 32, 64, 96, 1, {33, 35}, {1, 1}, {0, 0}, {2, 1}, {1, 1}, true};
    const char *const entry = "cuda:wgrad_gemm1x1_cublas";
    const struct entry_case cases[] = {
        {&down, &tc_configs[0], entry, NULL},
        {&down, &tc_configs[1], entry, NULL},
        {&down, &tc_configs[2], entry, NULL},
        {&s21, &tc_configs[0], entry, NULL},
    };
    check_entries_blended(cases, sizeof cases / sizeof cases[0], BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
}
