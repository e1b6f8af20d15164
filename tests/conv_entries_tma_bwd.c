/* conv_entries_tma_bwd.c: the sm_90a TMA kernel's backward-data entries are reached where they
   apply and compute what the reference computes: unit stride, and strided problems phase by
   phase. */
#include "conv_reach.h"

/* The TMA kernel's backward-data entries (unit stride, as a forward pass over dy at padding (R - 1)
   * dilation - pad with the taps mirrored; the unproven ones under the suite's
   OPENCUDNN_UNPROVEN=1), each tile in fp16 and bf16: 3x3 pad 1 with C = 240 and K = 72 (tails of the 256-wide tile
   and of the 64-channel K tile) and an edge tile in M, C = 128 on the 256x128 tile, 5x5 pad 2 in
   CONVOLUTION mode, dilation 2, padding 3 on a 3x3 filter (pad' = -1: the im2col box's lower corner
   positive), a 1x1 filter (the cuBLAS entry switched off), and NCHW data (dy transposed in the
   workspace). */
TEST(conv_cuda_tma_dgrad_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape big = {"tma_dgrad_c240_k72", 2, 1, 240, 72, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                     false};
    static const struct shape tall = {"tma_dgrad_tall", 2, 2, 128, 64, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                      false};
    static const struct shape five = {"tma_dgrad_5x5_convolution", 2, 1, 256, 64, 1, {131, 133}, {5, 5}, {2, 2}, {1, 1},
                                      {1, 1}, true};
    static const struct shape dilated = {"tma_dgrad_dilated", 2, 1, 256, 64, 1, {133, 131}, {3, 3}, {2, 2}, {1, 1},
                                         {2, 2}, false};
    static const struct shape overpad = {"tma_dgrad_pad3", 2, 1, 256, 64, 1, {131, 131}, {3, 3}, {3, 3}, {1, 1},
                                         {1, 1}, false};
    static const struct shape one = {"tma_dgrad_1x1", 2, 2, 256, 128, 1, {93, 93}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *half_nchw = &tc_configs[3];
    const char *const wide = "cuda:dgrad_igemm_tma_128x256x64_s4", *const tall_tile = "cuda:dgrad_igemm_tma_256x128x64_s4";
    const struct entry_case cases[] = {
        {&big, half, wide, NULL},
        {&big, bf16, wide, NULL},
        {&big, half, tall_tile, "cuda:dgrad_igemm_tma_128x256*"},
        {&tall, half, tall_tile, NULL},
        {&tall, bf16, tall_tile, NULL},
        {&five, half, wide, NULL},
        {&five, bf16, wide, NULL},
        {&dilated, half, wide, NULL},
        {&overpad, bf16, wide, NULL},
        {&one, bf16, wide, "cuda:dgrad_gemm1x1*"},
        {&big, half_nchw, wide, NULL},
    };
    check_entries_reached(cases, sizeof cases / sizeof cases[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}

/* The TMA kernel's strided backward data, phase by phase (cuda:dgrad_igemm_tma_phases; below 256
   channels of dx unproven: OPENCUDNN_UNPROVEN=1, the suite's, lets it serve), every phase of at least a tile per multiprocessor: 3x3
   stride 2 pad 1 over 135x135 (phases of 68 and 67 pixels a side) with C = 256 on the 128x256 tile,
   fp16, bf16 and NCHW data; the 1x1 stride-2 downsampling layer (three phases without taps; the
   cuBLAS entry ahead of the phases switched off); C = 128 on the 256x128 tile in CONVOLUTION
   mode; stride 3; dilation 2 with stride 2 (whole phases without taps). */
TEST(conv_cuda_tma_phases_entry_is_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape s2 = {"tma_phases_3x3s2", 2, 4, 256, 64, 1, {135, 135}, {3, 3}, {1, 1}, {2, 2}, {1, 1},
                                    false};
    static const struct shape down = {"tma_phases_1x1s2", 2, 4, 256, 128, 1, {135, 135}, {1, 1}, {0, 0}, {2, 2},
                                      {1, 1}, false};
    static const struct shape tall = {"tma_phases_c128_convolution", 2, 8, 128, 64, 1, {135, 135}, {3, 3}, {1, 1},
                                      {2, 2}, {1, 1}, true};
    static const struct shape s3 = {"tma_phases_3x3s3", 2, 9, 256, 64, 1, {135, 134}, {3, 3}, {1, 1}, {3, 3}, {1, 1},
                                    false};
    static const struct shape dilated = {"tma_phases_dilated", 2, 4, 256, 64, 1, {135, 135}, {3, 3}, {2, 2}, {2, 2},
                                         {2, 2}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *half_nchw = &tc_configs[3];
    const char *const phases = "cuda:dgrad_igemm_tma_phases";
    const struct entry_case cases[] = {
        {&s2, half, phases, NULL},
        {&s2, bf16, phases, NULL},
        {&s2, half_nchw, phases, NULL},
        {&down, bf16, phases, "cuda:dgrad_gemm1x1_strided*"},
        {&tall, half, phases, NULL},
        {&s3, bf16, phases, NULL},
        {&dilated, half, phases, NULL},
    };
    check_entries_reached(cases, sizeof cases / sizeof cases[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}
