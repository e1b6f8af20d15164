/* conv_entries_tma_k32.c: the sm_90a TMA kernel's TF32 filter-gradient entries (the k32 form) are
   reached where they apply and compute what the reference computes. */
#include "conv_reach.h"

/* The TF32 filter gradient on the TMA kernel (the k32 form: NCHW dy and x read K-major, pixel
   rows of 8 under the 32-byte swizzle, or, where dy's rows are 28 pixels or longer, of 32 under
   the 128-byte one, x through its shifted copies; the unproven entries under
   OPENCUDNN_UNPROVEN=1), each tile: dy of 56x56, 28x28, 14x14 and 15x7 pixels (rows of 56, 28
   and 7 pixels padded to 64, 32 and 8 by its copy; images of 7x7 decline to cuBLAS), a channel
   tail (C 100: 128 columns a tap), dilation 2 in CONVOLUTION mode, stride 2 (3x3 with padding,
   and 1x1), a 1x1 filter of unit stride (cuBLAS's GEMM serves it over fewer than 8192 output
   pixels, 6272 here, and cuBLAS or the mma.sync TF32 kernel over images of 14x14 or more; the
   TMA tile 64 images of 12x12), M = 64 on the 64-row tiles, split-K where the tiles are few. */
TEST(conv_cuda_tma_tf32_wgrad_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape l1 = {"tma_tf32_wgrad_56", 2, 4, 64, 256, 1, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape l2 = {"tma_tf32_wgrad_28_c100", 2, 8, 100, 256, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1},
                                    {1, 1}, false};
    static const struct shape l3 = {"tma_tf32_wgrad_14", 2, 16, 128, 256, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                    false};
    static const struct shape l4 = {"tma_tf32_wgrad_15x7", 2, 32, 128, 256, 1, {15, 7}, {3, 3}, {1, 1}, {1, 1},
                                    {1, 1}, false};
    static const struct shape l4_7x7 = {"tma_tf32_wgrad_7x7", 2, 32, 128, 256, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1},
                                        {1, 1}, false};
    static const struct shape dil = {"tma_tf32_wgrad_dilated_convolution", 2, 4, 64, 256, 1, {30, 29}, {3, 3}, {2, 2},
                                     {1, 1}, {2, 2}, true};
    static const struct shape one = {"tma_tf32_wgrad_1x1", 2, 12, 256, 128, 1, {28, 28}, {1, 1}, {0, 0}, {1, 1},
                                     {1, 1}, false};
    static const struct shape few = {"tma_tf32_wgrad_1x1_few_pixels", 2, 8, 256, 128, 1, {28, 28}, {1, 1}, {0, 0},
                                     {1, 1}, {1, 1}, false};
    static const struct shape k64 = {"tma_tf32_wgrad_k64", 2, 8, 64, 64, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                     false};
    static const struct shape k64_1x1 = {"tma_tf32_wgrad_k64_1x1", 2, 64, 64, 64, 1, {12, 12}, {1, 1}, {0, 0}, {1, 1},
                                         {1, 1}, false};
    static const struct shape s2 = {"tma_tf32_wgrad_3x3s2", 2, 8, 128, 128, 1, {29, 28}, {3, 3}, {1, 1}, {2, 2}, {1, 1},
                                    false};
    static const struct shape ds = {"tma_tf32_wgrad_1x1s2", 2, 48, 256, 128, 1, {28, 28}, {1, 1}, {0, 0}, {2, 2}, {1, 1},
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
        {&l4_7x7, &tf32_nchw, "cuda:wgrad_im2col_gemm_cublas_tc", NULL},
        {&dil, &tf32_nchw, wide, NULL},
        {&one, &tf32_nchw, "cuda:wgrad_nchw_gemm_cublas_tc", NULL},
        {&few, &tf32_nchw, "cuda:wgrad_nchw_gemm_cublas_tc", NULL},
        {&k64, &tf32_nchw, w64, NULL},
        {&k64_1x1, &tf32_nchw, w64n, "cuda:wgrad_igemm_tma_tf32_64x256*"},
        {&s2, &tf32_nchw, wide, NULL},
        {&ds, &tf32_nchw, wide, NULL},
    };
    check_entries_reached(cases, sizeof cases / sizeof cases[0], BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
}
