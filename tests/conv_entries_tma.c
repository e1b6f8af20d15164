/* conv_entries_tma.c: the sm_90a TMA kernel's forward entries are reached where they apply and
   compute what the reference computes: fp16 and bf16, then fp32 data as TF32 (forward, backward
   data and the filter gradient). A file of its own (ctest runs each file as a process) because the problems that fill an
   H100 with tiles take the double reference tens of seconds each. */
#include "conv_reach.h"

/* The sm_90a TMA kernel's forward entries (compute capability 9.0; the unproven ones served under
   the suite's OPENCUDNN_UNPROVEN=1), each tile in fp16 and bf16, where the heuristic picks them ahead
   of the cp.async kernel's: GEMMs of at least a tile per multiprocessor, with an edge tile in M
   (17161 output pixels), channel counts that are not multiples of the 64-channel K tile (72, 40;
   the stem's 3 padded to 8 in the workspace, the stem entry switched off), stride 2 with unequal
   paddings (the im2col box's corners, W and H apart) and a width whose last output pixel plus the
   stride lands two past the box (where the traversal wraps to the box's lower corner), dilation 2
   in CONVOLUTION mode, a 1x1 filter (the cuBLAS entry switched off), and NCHW data (transposed, and
   the filter packed, in the workspace). The NHWC cases run the kernel's ping-pong twin (units of
   64x256 and 128x128, chosen with the staged epilogue), the NCHW one the kernel as it was. */
TEST(conv_cuda_tma_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape big = {"tma_big_c72", 2, 1, 72, 256, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape tall = {"tma_tall", 2, 2, 64, 128, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape strided = {"tma_stride2_pads_2_1_c40", 2, 1, 40, 256, 1, {258, 261}, {3, 3}, {2, 1},
                                         {2, 2}, {1, 1}, false};
    static const struct shape dilated = {"tma_dilated_convolution", 2, 1, 64, 256, 1, {133, 131}, {3, 3}, {2, 2}, {1, 1},
                                         {2, 2}, true};
    static const struct shape one = {"tma_1x1", 2, 2, 128, 256, 1, {93, 93}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false};
    static const struct shape stem = {"tma_stem_c3", 2, 1, 3, 256, 1, {262, 262}, {7, 7}, {3, 3}, {2, 2}, {1, 1}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *half_nchw = &tc_configs[3];
    const int algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    const char *const wide = "cuda:fwd_igemm_tma_128x256x64_s4", *const tall_tile = "cuda:fwd_igemm_tma_256x128x64_s4";
    check_entry_reached(&big, half, FWD, algo, wide, NULL);
    check_entry_reached(&big, bf16, FWD, algo, wide, NULL);
    check_entry_reached(&big, half, FWD, algo, tall_tile, "cuda:fwd_igemm_tma_128x256*");
    check_entry_reached(&tall, half, FWD, algo, tall_tile, NULL);
    check_entry_reached(&tall, bf16, FWD, algo, tall_tile, NULL);
    check_entry_reached(&strided, half, FWD, algo, wide, NULL);
    check_entry_reached(&strided, bf16, FWD, algo, wide, NULL);
    check_entry_reached(&dilated, half, FWD, algo, wide, NULL);
    check_entry_reached(&one, bf16, FWD, algo, wide, "cuda:fwd_gemm1x1*");
    check_entry_reached(&stem, half, FWD, algo, wide, "cuda:fwd_stem*");
    check_entry_reached(&big, half_nchw, FWD, algo, wide, NULL);
}

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

/* The TF32 filter gradient on the TMA kernel (the k32 form: NCHW dy and x read K-major, pixel
   rows of 8 under the 32-byte swizzle, x through its shifted copies; the unproven entries under
   OPENCUDNN_UNPROVEN=1), each tile: dy of 56x56, 28x28, 14x14 and 7x7 pixels (rows of 56 and 28
   bytes padded to 64 and 32 by its copy), a channel tail (C
   100: 128 columns a tap), dilation 2 in CONVOLUTION mode, stride 2 (3x3 with padding, and 1x1),
   a 1x1 filter, M = 64 on the 64-row tiles, split-K where the tiles are few. */
TEST(conv_cuda_tma_tf32_wgrad_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape l1 = {"tma_tf32_wgrad_56", 2, 4, 64, 256, 1, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape l2 = {"tma_tf32_wgrad_28_c100", 2, 8, 100, 256, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1},
                                    {1, 1}, false};
    static const struct shape l3 = {"tma_tf32_wgrad_14", 2, 16, 128, 256, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                    false};
    static const struct shape l4 = {"tma_tf32_wgrad_7", 2, 32, 128, 256, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                    false};
    static const struct shape dil = {"tma_tf32_wgrad_dilated_convolution", 2, 4, 64, 256, 1, {30, 29}, {3, 3}, {2, 2},
                                     {1, 1}, {2, 2}, true};
    static const struct shape one = {"tma_tf32_wgrad_1x1", 2, 8, 256, 128, 1, {28, 28}, {1, 1}, {0, 0}, {1, 1}, {1, 1},
                                     false};
    static const struct shape k64 = {"tma_tf32_wgrad_k64", 2, 8, 64, 64, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                     false};
    static const struct shape k64_1x1 = {"tma_tf32_wgrad_k64_1x1", 2, 8, 64, 64, 1, {14, 14}, {1, 1}, {0, 0}, {1, 1},
                                         {1, 1}, false};
    static const struct shape s2 = {"tma_tf32_wgrad_3x3s2", 2, 8, 128, 128, 1, {29, 28}, {3, 3}, {1, 1}, {2, 2}, {1, 1},
                                    false};
    static const struct shape ds = {"tma_tf32_wgrad_1x1s2", 2, 8, 256, 128, 1, {28, 28}, {1, 1}, {0, 0}, {2, 2}, {1, 1},
                                    false};
    const char *const wide = "cuda:wgrad_igemm_tma_tf32_128x256x32_s4", *const tall = "cuda:wgrad_igemm_tma_tf32_256x128x32_s4";
    const char *const w64 = "cuda:wgrad_igemm_tma_tf32_64x256x32_s5", *const w64n = "cuda:wgrad_igemm_tma_tf32_64x64x32_s8";
    const struct entry_case cases[] = {
        {&l1, &tf32_nchw, wide, NULL},
        {&l1, &tf32_nchw, tall, "cuda:wgrad_igemm_tma_tf32_128x256*"},
        {&l2, &tf32_nchw, wide, NULL},
        {&l3, &tf32_nchw, wide, NULL},
        {&l4, &tf32_nchw, wide, NULL},
        {&l4, &tf32_nchw, tall, "cuda:wgrad_igemm_tma_tf32_128x256*"},
        {&dil, &tf32_nchw, wide, NULL},
        {&one, &tf32_nchw, wide, NULL},
        {&k64, &tf32_nchw, w64, NULL},
        {&k64_1x1, &tf32_nchw, w64n, "cuda:wgrad_igemm_tma_tf32_64x256*"},
        {&s2, &tf32_nchw, wide, NULL},
        {&ds, &tf32_nchw, wide, NULL},
    };
    check_entries_reached(cases, sizeof cases / sizeof cases[0], BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
}
