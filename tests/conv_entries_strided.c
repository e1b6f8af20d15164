/* conv_entries_strided.c: the strided 1x1 backward-data entry (cuda:dgrad_gemm1x1_strided_cublas_tc:
   one cuBLAS GEMM and a pass over dx) is reached where it applies and computes what the reference
   computes. */
#include "conv_reach.h"

/* Unproven (the suite's OPENCUDNN_UNPROVEN=1 lets it serve), ahead of the stride phases: ResNet's
   downsampling layer (1x1 stride 2, C = 256 -> K = 128) over 27x28 (a last row of dx no dy pixel
   reaches), fp16 and bf16; stride 3 over 20x19; strides (2, 1); a 3-D problem. Each reached at
   beta 0, then checked through BWD_DATA_ALGO_1 at beta 0 and 0.5 (check_direction: dcol of dx's
   type, then fp32). */
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
    const size_t n = sizeof cases / sizeof cases[0];
    check_entries_reached(cases, n, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
    for (size_t i = 0; i < n; i++) {
        struct problem p;
        char label[96];
        snprintf(label, sizeof label, "bwd data %s %s", cases[i].sh->name, cases[i].cf->name);
        if (make_problem(&p, cases[i].sh, cases[i].cf, 0)) check_direction(&p, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, label);
        free_problem(&p);
    }
}
