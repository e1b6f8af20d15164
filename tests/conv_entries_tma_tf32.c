/* conv_entries_tma_tf32.c: the sm_90a TMA kernel's TF32 forward and backward-data entries are
   reached where they apply and compute what the reference computes. A file of its own (ctest runs
   each file as a process): the problems that fill an H100 with tiles take the double reference
   seconds each. */
#include "conv_reach.h"

/* The TMA kernel's TF32 entries (fp32 data under DEFAULT_MATH, a K tile of 32 channels; the unproven
   ones under OPENCUDNN_UNPROVEN=1), forward and backward data on each tile, NHWC and NCHW
   (transposed, and the filter packed, in the workspace): forward with an edge tile in M, C = 36 and
   44 (channel tails of the K tile), stride 2 with unequal paddings, dilation 2 in CONVOLUTION mode,
   a 1x1 filter (the cuBLAS entry switched off) and the stem's C = 3 padded to 4 (the stem entry
   switched off); backward data with C = 240 and K = 36, C = 128 on the 256x128 tile, 5x5 in
   CONVOLUTION mode, padding 3 (pad' = -1); strided backward data phase by phase (3x3 stride 2, the
   1x1 stride-2 layer with phases without taps, dilation 2); and the clustered TF32 entries
   (_tma_c2_tf32_, the unclustered ones switched off) on the same forward and unit-stride
   backward-data shapes (an odd count of M tiles of 128, channel and filter tails, the stem, NCHW). */
TEST(conv_cuda_tma_tf32_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape big = {"tma_tf32_c36", 2, 1, 36, 256, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape tall = {"tma_tf32_tall", 2, 2, 64, 128, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                      false};
    static const struct shape strided = {"tma_tf32_stride2_pads_2_1_c44", 2, 1, 44, 256, 1, {258, 261}, {3, 3}, {2, 1},
                                         {2, 2}, {1, 1}, false};
    static const struct shape dilated = {"tma_tf32_dilated_convolution", 2, 1, 64, 256, 1, {133, 131}, {3, 3}, {2, 2},
                                         {1, 1}, {2, 2}, true};
    static const struct shape one = {"tma_tf32_1x1", 2, 2, 128, 256, 1, {93, 93}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false};
    static const struct shape stem = {"tma_tf32_stem_c3", 2, 1, 3, 256, 1, {262, 262}, {7, 7}, {3, 3}, {2, 2}, {1, 1},
                                      false};
    static const struct shape dgrad = {"tma_tf32_dgrad_c240_k36", 2, 1, 240, 36, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1},
                                       {1, 1}, false};
    static const struct shape dgrad_tall = {"tma_tf32_dgrad_tall", 2, 2, 128, 64, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1},
                                            {1, 1}, false};
    static const struct shape five = {"tma_tf32_dgrad_5x5_convolution", 2, 1, 256, 64, 1, {131, 133}, {5, 5}, {2, 2},
                                      {1, 1}, {1, 1}, true};
    static const struct shape overpad = {"tma_tf32_dgrad_pad3", 2, 1, 256, 64, 1, {131, 131}, {3, 3}, {3, 3}, {1, 1},
                                         {1, 1}, false};
    static const struct shape s2 = {"tma_tf32_phases_3x3s2", 2, 4, 256, 64, 1, {135, 135}, {3, 3}, {1, 1}, {2, 2},
                                    {1, 1}, false};
    static const struct shape down = {"tma_tf32_phases_1x1s2", 2, 4, 256, 128, 1, {135, 135}, {1, 1}, {0, 0}, {2, 2},
                                      {1, 1}, false};
    static const struct shape phases_dilated = {"tma_tf32_phases_dilated", 2, 4, 256, 64, 1, {135, 135}, {3, 3}, {2, 2},
                                                {2, 2}, {2, 2}, false};
    const struct config *tf32 = &tc_configs[2], *tf32n = &tf32_nchw;
    const char *const wide = "cuda:fwd_igemm_tma_tf32_128x256x32_s4", *const tall_tile = "cuda:fwd_igemm_tma_tf32_256x128x32_s4";
    const char *const dwide = "cuda:dgrad_igemm_tma_tf32_128x256x32_s4";
    const char *const dtall = "cuda:dgrad_igemm_tma_tf32_256x128x32_s4", *const phases = "cuda:dgrad_igemm_tma_tf32_phases";
    const char *const c2_wide = "cuda:fwd_igemm_tma_c2_tf32_128x256x32_s4";
    const char *const c2_tall = "cuda:fwd_igemm_tma_c2_tf32_256x128x32_s4", *const c2_off = "cuda:fwd_igemm_tma_tf32*";
    const char *const dc2_wide = "cuda:dgrad_igemm_tma_c2_tf32_128x256x32_s4";
    const char *const dc2_tall = "cuda:dgrad_igemm_tma_c2_tf32_256x128x32_s4", *const dc2_off = "cuda:dgrad_igemm_tma_tf32*";
    const struct entry_case fwd[] = {
        {&big, tf32, wide, NULL},
        {&big, tf32n, wide, NULL},
        {&big, tf32, tall_tile, "cuda:fwd_igemm_tma_tf32_128x256*"},
        {&tall, tf32, tall_tile, NULL},
        {&tall, tf32n, tall_tile, NULL},
        {&strided, tf32, wide, NULL},
        {&dilated, tf32n, wide, NULL},
        {&one, tf32, wide, "cuda:fwd_gemm1x1*"},
        {&stem, tf32, wide, "cuda:fwd_stem*"},
        /* on clusters of 2 CTAs, the unclustered TF32 entries switched off */
        {&big, tf32, c2_wide, c2_off},
        {&big, tf32n, c2_wide, c2_off},
        {&tall, tf32, c2_tall, "cuda:fwd_igemm_tma_tf32*,cuda:fwd_igemm_tma_c2_tf32_128x256*"},
        {&strided, tf32, c2_wide, c2_off},
        {&dilated, tf32n, c2_wide, c2_off},
        {&stem, tf32, c2_wide, "cuda:fwd_stem*,cuda:fwd_igemm_tma_tf32*"},
    };
    const struct entry_case bwd[] = {
        {&dgrad, tf32, dwide, NULL},
        {&dgrad, tf32n, dwide, NULL},
        {&dgrad, tf32, dtall, "cuda:dgrad_igemm_tma_tf32_128x256*"},
        {&dgrad_tall, tf32, dtall, NULL},
        {&five, tf32n, dwide, NULL},
        {&overpad, tf32, dwide, NULL},
        {&s2, tf32, phases, NULL},
        {&s2, tf32n, phases, NULL},
        {&down, tf32, phases, "cuda:dgrad_gemm1x1*"},
        {&phases_dilated, tf32, phases, NULL},
        {&dgrad, tf32, dc2_wide, dc2_off},
        {&dgrad, tf32n, dc2_wide, dc2_off},
        {&dgrad_tall, tf32, dc2_tall, "cuda:dgrad_igemm_tma_tf32*,cuda:dgrad_igemm_tma_c2_tf32_128x256*"},
        {&five, tf32n, dc2_wide, dc2_off},
        {&overpad, tf32, dc2_wide, dc2_off},
    };
    check_entries_reached(fwd, sizeof fwd / sizeof fwd[0], FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    check_entries_reached(bwd, sizeof bwd / sizeof bwd[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}
