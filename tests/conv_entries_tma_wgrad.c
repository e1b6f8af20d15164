/* conv_entries_tma_wgrad.c: the sm_90a TMA kernel's filter-gradient entries (the 128- and 64-row
   tiles) and its 2-CTA cluster entries of every direction are reached where they apply and compute
   what the reference computes. */
#include "conv_reach.h"

/* The TMA kernel's filter-gradient entries (K over the output pixels, both operands MN-major;
   the unproven ones under the suite's OPENCUDNN_UNPROVEN=1), each tile in fp16 and bf16: 3x3 pad
   1 with C = 64 and K = 128 (the last column tile one block of four: blocks past the columns not
   loaded) and two splits of K, the 256x128 tile on K = 256 and C = 128, C = 120 and 200 (each tap's
   channels padded to 128 and 256, the padding skipped by the epilogue) with stride 2, and with
   dilation 2 in CONVOLUTION mode, a 5x3 filter with unequal paddings and stride 2, split-K in six
   splits the last one shorter (98 K tiles of 64 pixels), a 1x1 filter with stride 2 and K = 192 (an
   A block past the filters not loaded; the cuBLAS 1x1 entries switched off), and NCHW data (dy and x transposed in the workspace, a KCRS
   dw). */
TEST(conv_cuda_tma_wgrad_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape base = {"tma_wgrad_3x3", 2, 2, 64, 128, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape tall = {"tma_wgrad_tall", 2, 2, 128, 256, 1, {24, 24}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                      false};
    static const struct shape c120 = {"tma_wgrad_c120_stride2", 2, 2, 120, 128, 1, {16, 16}, {3, 3}, {1, 1}, {2, 2},
                                      {1, 1}, false};
    static const struct shape c200 = {"tma_wgrad_c200_dilated_convolution", 2, 1, 200, 128, 1, {33, 31}, {3, 3}, {2, 2},
                                      {1, 1}, {2, 2}, true};
    static const struct shape five = {"tma_wgrad_5x3_pads_2_1_stride2", 2, 2, 64, 128, 1, {41, 37}, {5, 3}, {2, 1},
                                      {2, 2}, {1, 1}, false};
    static const struct shape split = {"tma_wgrad_split_k", 2, 8, 64, 128, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                       false};
    static const struct shape one = {"tma_wgrad_1x1_stride2_k192", 2, 4, 256, 192, 1, {27, 27}, {1, 1}, {0, 0}, {2, 2},
                                     {1, 1}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *half_nchw = &tc_configs[3];
    const char *const wide = "cuda:wgrad_igemm_tma_128x256x64_s4", *const tall_tile = "cuda:wgrad_igemm_tma_256x128x64_s4";
    const struct entry_case cases[] = {
        {&base, half, wide, NULL},
        {&base, bf16, wide, NULL},
        {&tall, half, tall_tile, "cuda:wgrad_igemm_tma_128x256*"},
        {&tall, bf16, tall_tile, "cuda:wgrad_igemm_tma_128x256*"},
        {&c120, half, wide, NULL},
        {&c200, bf16, wide, NULL},
        {&five, half, wide, NULL},
        {&split, bf16, wide, NULL},
        {&one, half, wide, "cuda:wgrad_gemm1x1*"},
        {&base, half_nchw, wide, NULL},
    };
    check_entries_reached(cases, sizeof cases / sizeof cases[0], BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
}

/* The filter gradient's 64-row TMA tile (cuda:wgrad_igemm_tma_64x256x64_s5: one consumer
   warpgroup), where the 128-row tiles decline 64 filters as half padding: ResNet's 3x3 64 -> 64
   layer (576 columns: the last tile one block of four) in fp16, bf16 and NCHW, split over the
   pixels; 56 filters with C = 120 (padded to 128 a tap) and stride 2; and the 1x1 stride-2 256 -> 64 filter (256 columns, one tile). Its 64-wide
   tile (cuda:wgrad_igemm_tma_64x64x64_s8) where the 256-wide one declines 64 columns as mostly
   padding: ResNet's 1x1 64 -> 64 in fp16, bf16 and NCHW, a 1x1 stride-2 48 -> 56 (C padded to 64)
   in CONVOLUTION mode (the cuBLAS 1x1 entries switched off for the 1x1 filters), and the 3x3 64 -> 64 with the 256-wide
   tile switched off (nine column tiles). */
TEST(conv_cuda_tma_w64_entry_is_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape l1 = {"tma_w64_3x3_64_64", 2, 8, 64, 64, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                    false};
    static const struct shape k56 = {"tma_w64_k56_c120_stride2", 2, 4, 120, 56, 1, {33, 31}, {3, 3}, {2, 1}, {2, 2},
                                     {1, 1}, true};
    static const struct shape down = {"tma_w64_1x1s2_256_64", 2, 4, 256, 64, 1, {27, 27}, {1, 1}, {0, 0}, {2, 2}, {1, 1},
                                      false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *half_nchw = &tc_configs[3];
    static const struct shape one = {"tma_w64_1x1_64_64", 2, 8, 64, 64, 1, {28, 28}, {1, 1}, {0, 0}, {1, 1}, {1, 1},
                                     false};
    static const struct shape one_s2 = {"tma_w64_1x1s2_k48_c56_convolution", 2, 4, 56, 48, 1, {27, 29}, {1, 1}, {0, 0},
                                        {2, 2}, {1, 1}, true};
    const char *const w64 = "cuda:wgrad_igemm_tma_64x256x64_s5", *const n64 = "cuda:wgrad_igemm_tma_64x64x64_s8";
    const char *const no_1x1 = "cuda:wgrad_gemm1x1*";
    const struct entry_case cases[] = {
        {&l1, half, w64, NULL},          {&l1, bf16, w64, NULL},         {&l1, half_nchw, w64, NULL},
        {&k56, half, w64, NULL},         {&down, bf16, w64, no_1x1},     {&one, half, n64, no_1x1},
        {&one, bf16, n64, no_1x1},       {&one, half_nchw, n64, no_1x1}, {&one_s2, half, n64, no_1x1},
        {&l1, bf16, n64, "cuda:wgrad_igemm_tma_64x256*"},
    };
    check_entries_reached(cases, sizeof cases / sizeof cases[0], BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
}

/* The TMA kernel's clustered entries (_tma_c2_: clusters of 2 CTAs along M, B multicast to both;
   unproven: the suite's OPENCUDNN_UNPROVEN=1 lets them serve), every direction, each tile in fp16
   and bf16, the unclustered TMA entries ahead of them switched off: forward on 17161 output pixels
   (135 M tiles of 128, odd: the last cluster's second CTA has a tile past M) with C = 72, the
   256x128 tile on 34322 pixels (135 tiles of 256), stride 2 with unequal paddings and C = 40,
   dilation 2 in CONVOLUTION mode, and NCHW data; backward data with C = 240 and K = 72 (odd M
   tiles), on the 256x128 tile, and 5x5 in CONVOLUTION mode; the filter gradient with K = 128 and
   256 (one M tile, its pair's second past M), K = 360 (three M tiles) with C = 128, split-K, stride
   2 with C = 120, and NCHW data. Where no cluster fits the GPU (OPENCUDNN_TEST_CLUSTERS=0), the
   clustered entries decline at the plan and the next entries serve, in every direction. */
TEST(conv_cuda_tma_cluster_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape big = {"tma_c2_c72", 2, 1, 72, 256, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape tall = {"tma_c2_tall", 2, 2, 64, 128, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape strided = {"tma_c2_stride2_pads_2_1_c40", 2, 1, 40, 256, 1, {258, 261}, {3, 3}, {2, 1},
                                         {2, 2}, {1, 1}, false};
    static const struct shape dilated = {"tma_c2_dilated_convolution", 2, 1, 64, 256, 1, {133, 131}, {3, 3}, {2, 2},
                                         {1, 1}, {2, 2}, true};
    static const struct shape dgrad = {"tma_c2_dgrad_c240_k72", 2, 1, 240, 72, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1},
                                       {1, 1}, false};
    static const struct shape dgrad_tall = {"tma_c2_dgrad_tall", 2, 2, 128, 64, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1},
                                            {1, 1}, false};
    static const struct shape dgrad_five = {"tma_c2_dgrad_5x5_convolution", 2, 1, 256, 64, 1, {131, 133}, {5, 5}, {2, 2},
                                            {1, 1}, {1, 1}, true};
    static const struct shape wgrad = {"tma_c2_wgrad_3x3", 2, 2, 64, 128, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                       false};
    static const struct shape wgrad_tall = {"tma_c2_wgrad_tall", 2, 2, 128, 256, 1, {24, 24}, {3, 3}, {1, 1}, {1, 1},
                                            {1, 1}, false};
    static const struct shape wgrad_k360 = {"tma_c2_wgrad_k360_c128", 2, 2, 128, 360, 1, {30, 30}, {3, 3}, {1, 1},
                                            {1, 1}, {1, 1}, false};
    static const struct shape wgrad_split = {"tma_c2_wgrad_split_k", 2, 8, 64, 128, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1},
                                             {1, 1}, false};
    static const struct shape wgrad_c120 = {"tma_c2_wgrad_c120_stride2", 2, 2, 120, 128, 1, {16, 16}, {3, 3}, {1, 1},
                                            {2, 2}, {1, 1}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *half_nchw = &tc_configs[3];
    const char *const fwd_off = "cuda:fwd_igemm_tma_1*,cuda:fwd_igemm_tma_2*";
    const char *const fwd_tall_off = "cuda:fwd_igemm_tma_1*,cuda:fwd_igemm_tma_2*,cuda:fwd_igemm_tma_c2_128x256*";
    const char *const dgrad_off = "cuda:dgrad_igemm_tma_1*,cuda:dgrad_igemm_tma_2*";
    const char *const dgrad_tall_off = "cuda:dgrad_igemm_tma_1*,cuda:dgrad_igemm_tma_2*,cuda:dgrad_igemm_tma_c2_128x256*";
    const char *const wgrad_off = "cuda:wgrad_igemm_tma_1*,cuda:wgrad_igemm_tma_2*";
    const char *const wgrad_tall_off = "cuda:wgrad_igemm_tma_1*,cuda:wgrad_igemm_tma_2*,cuda:wgrad_igemm_tma_c2_128x256*";
    const char *const fwd_wide = "cuda:fwd_igemm_tma_c2_128x256x64_s4", *const fwd_tall = "cuda:fwd_igemm_tma_c2_256x128x64_s4";
    const char *const dgrad_wide = "cuda:dgrad_igemm_tma_c2_128x256x64_s4";
    const char *const dgrad_tall_tile = "cuda:dgrad_igemm_tma_c2_256x128x64_s4";
    const char *const wgrad_wide = "cuda:wgrad_igemm_tma_c2_128x256x64_s4";
    const char *const wgrad_tall_tile = "cuda:wgrad_igemm_tma_c2_256x128x64_s4";
    const struct entry_case fwd[] = {
        {&big, half, fwd_wide, fwd_off},          {&big, bf16, fwd_wide, fwd_off},
        {&tall, half, fwd_tall, fwd_tall_off},    {&tall, bf16, fwd_tall, fwd_tall_off},
        {&strided, half, fwd_wide, fwd_off},      {&dilated, bf16, fwd_wide, fwd_off},
        {&big, half_nchw, fwd_wide, fwd_off},
    };
    const struct entry_case dgr[] = {
        {&dgrad, half, dgrad_wide, dgrad_off},
        {&dgrad, bf16, dgrad_wide, dgrad_off},
        {&dgrad_tall, half, dgrad_tall_tile, dgrad_tall_off},
        {&dgrad_tall, bf16, dgrad_tall_tile, dgrad_tall_off},
        {&dgrad_five, half, dgrad_wide, dgrad_off},
    };
    const struct entry_case wgr[] = {
        {&wgrad, half, wgrad_wide, wgrad_off},
        {&wgrad, bf16, wgrad_wide, wgrad_off},
        {&wgrad_tall, half, wgrad_tall_tile, wgrad_tall_off},
        {&wgrad_tall, bf16, wgrad_tall_tile, wgrad_tall_off},
        {&wgrad_k360, half, wgrad_wide, wgrad_off},
        {&wgrad_split, bf16, wgrad_wide, wgrad_off},
        {&wgrad_c120, half, wgrad_wide, wgrad_off},
        {&wgrad, half_nchw, wgrad_wide, wgrad_off},
    };
    check_entries_reached(fwd, sizeof fwd / sizeof fwd[0], FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    check_entries_reached(dgr, sizeof dgr / sizeof dgr[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
    check_entries_reached(wgr, sizeof wgr / sizeof wgr[0], BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
    /* where no cluster fits the GPU (OPENCUDNN_TEST_CLUSTERS=0, as on a MIG slice) the clustered
       entries decline at the plan, and the cp.async kernel's serve */
    ocd_setenv("OPENCUDNN_TEST_CLUSTERS", "0");
    check_entry_reached(&big, half, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_wgmma_", fwd_off);
    check_entry_reached(&dgrad, bf16, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "cuda:dgrad_igemm_wgmma_", dgrad_off);
    check_entry_reached(&wgrad, half, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_igemm_wgmma_",
                        "cuda:wgrad_igemm_tma_1*,cuda:wgrad_igemm_tma_2*,cuda:wgrad_igemm_tma_64*");
    ocd_unsetenv("OPENCUDNN_TEST_CLUSTERS");
}
