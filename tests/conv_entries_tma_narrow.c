/* conv_entries_tma_narrow.c: the sm_90a TMA kernel's narrow forward and backward-data entries
   (128x128, 256x64, 128x64; fp16, bf16 and TF32) are reached where the wide tiles decline and
   compute what the reference computes. A file of its own (ctest runs each file as a process): the problems that
   fill an H100 with tiles take the double reference seconds each. */
#include "conv_reach.h"

/* The narrow TMA entries (some unproven: the suite's OPENCUDNN_UNPROVEN=1 lets them serve), each in the
   problems it is the first TMA tile for, fp16, bf16 and NCHW (transposed in the workspace):
   - 128x128: 256 filters over 10000 output pixels (the 128x256 and 256x128 tiles 79 and 80 a
     GPU: too few; 158 of 128x128), C = 72 (a channel tail of the 64-channel K tile); and 128
     filters over 17161 pixels (the 256x128 tile too few, the 128x256 one half padding);
   - 256x64: ResNet's 3x3 64 -> 64 over two 131x131 images (135 tiles; the wider tiles decline
     64 columns as padding), and a 3x3 stride-2 layer with unequal paddings in CONVOLUTION mode
     (eight images: 135 tiles);
   - 128x64: the same over one image (the 256x64 tile 68 a GPU: too few), with dilation 2, and
     the two-image layer with the 256x64 entry switched off;
   - backward data, unit stride (N = C): 256 channels over 10000 pixels on 128x128, ResNet's
     3x3 64 -> 64 on 256x64 and 128x64, a K tail (K = 72) in CONVOLUTION mode, padding 3 (pad'
     = -1), NCHW;
   - strided backward data phase by phase (cuda:dgrad_igemm_tma_phases) with C = 64, whose phases
     the wide tiles decline: the 3x3 stride-2 layer over 135x135, each phase on 128x64;
   - the TF32 entries (fp32 data under DEFAULT_MATH, NHWC and NCHW) on the same problems: each
     tile forward and in backward data, and the phases of cuda:dgrad_igemm_tma_tf32_phases. */
TEST(conv_cuda_tma_narrow_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape small_m = {"tma_narrow_small_m_c72", 2, 1, 72, 256, 1, {100, 100}, {3, 3}, {1, 1}, {1, 1},
                                         {1, 1}, false};
    static const struct shape k128 = {"tma_narrow_k128", 2, 1, 64, 128, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                      false};
    static const struct shape l64 = {"tma_narrow_3x3_64_64", 2, 2, 64, 64, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1},
                                     {1, 1}, false};
    static const struct shape strided = {"tma_narrow_stride2_pads_1_0_convolution", 2, 8, 64, 64, 1, {131, 131}, {3, 3},
                                         {1, 0}, {2, 2}, {1, 1}, true};
    static const struct shape one_image = {"tma_narrow_3x3_64_64_n1", 2, 1, 64, 64, 1, {131, 131}, {3, 3}, {1, 1},
                                           {1, 1}, {1, 1}, false};
    static const struct shape dilated = {"tma_narrow_dilated", 2, 1, 64, 64, 1, {133, 133}, {3, 3}, {2, 2}, {1, 1},
                                         {2, 2}, false};
    static const struct shape dsmall_m = {"tma_narrow_dgrad_small_m", 2, 1, 256, 64, 1, {100, 100}, {3, 3}, {1, 1},
                                          {1, 1}, {1, 1}, false};
    static const struct shape dk72 = {"tma_narrow_dgrad_k72_convolution", 2, 2, 64, 72, 1, {131, 131}, {3, 3}, {1, 1},
                                      {1, 1}, {1, 1}, true};
    static const struct shape dpad3 = {"tma_narrow_dgrad_pad3", 2, 1, 64, 64, 1, {131, 131}, {3, 3}, {3, 3}, {1, 1},
                                       {1, 1}, false};
    static const struct shape s2 = {"tma_narrow_phases_3x3s2_c64", 2, 4, 64, 64, 1, {135, 135}, {3, 3}, {1, 1}, {2, 2},
                                    {1, 1}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *half_nchw = &tc_configs[3];
    const struct config *tf32 = &tc_configs[2], *tf32n = &tf32_nchw;
    const char *const f128 = "cuda:fwd_igemm_tma_128x128x64_s7", *const f256 = "cuda:fwd_igemm_tma_256x64x64_s5";
    const char *const f64 = "cuda:fwd_igemm_tma_128x64x64_s9";
    const char *const d128 = "cuda:dgrad_igemm_tma_128x128x64_s7", *const d256 = "cuda:dgrad_igemm_tma_256x64x64_s5";
    const char *const d64 = "cuda:dgrad_igemm_tma_128x64x64_s9";
    const struct entry_case fwd[] = {
        {&small_m, half, f128, NULL},
        {&small_m, bf16, f128, NULL},
        {&k128, half_nchw, f128, NULL},
        {&l64, half, f256, NULL},
        {&l64, bf16, f256, NULL},
        {&strided, half, f256, NULL},
        {&one_image, half, f64, NULL},
        {&one_image, half_nchw, f64, NULL},
        {&dilated, bf16, f64, NULL},
        {&l64, half, f64, "cuda:fwd_igemm_tma_256x64*"},
        {&small_m, tf32, "cuda:fwd_igemm_tma_tf32_128x128x32_s7", NULL},
        {&l64, tf32n, "cuda:fwd_igemm_tma_tf32_256x64x32_s5", NULL},
        {&one_image, tf32, "cuda:fwd_igemm_tma_tf32_128x64x32_s9", NULL},
        {&dilated, tf32n, "cuda:fwd_igemm_tma_tf32_128x64x32_s9", NULL},
    };
    const struct entry_case bwd[] = {
        {&dsmall_m, half, d128, NULL},
        {&dsmall_m, bf16, d128, NULL},
        {&l64, half, d256, NULL},
        {&l64, half_nchw, d256, NULL},
        {&dk72, bf16, d256, NULL},
        {&one_image, half, d64, NULL},
        {&dpad3, bf16, d64, NULL},
        {&s2, half, "cuda:dgrad_igemm_tma_phases", NULL},
        {&s2, bf16, "cuda:dgrad_igemm_tma_phases", NULL},
        {&dsmall_m, tf32n, "cuda:dgrad_igemm_tma_tf32_128x128x32_s7", NULL},
        {&l64, tf32, "cuda:dgrad_igemm_tma_tf32_256x64x32_s5", NULL},
        {&dk72, tf32n, "cuda:dgrad_igemm_tma_tf32_256x64x32_s5", NULL},
        {&dpad3, tf32, "cuda:dgrad_igemm_tma_tf32_128x64x32_s9", NULL},
        {&s2, tf32, "cuda:dgrad_igemm_tma_tf32_phases", NULL},
    };
    check_entries_reached(fwd, sizeof fwd / sizeof fwd[0], FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    check_entries_reached(bwd, sizeof bwd / sizeof bwd[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}
