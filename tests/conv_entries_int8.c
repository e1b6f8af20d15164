/* conv_entries_int8.c: the implicit GEMM's int8 entries (cuda:fwd_igemm_int8_*) are reached
   where they apply and compute what the reference computes. A file of its own (ctest runs each
   file as a process): the cudnn-frontend IMMA sample's image takes the double reference seconds. */
#include "conv_reach.h"

/* The int8 configurations' forward pass on the sm_80 kernel with 8-bit operands (compute
   capability 8.0 and newer), each tile:
   the cudnn-frontend IMMA sample's problem (16 channels of INT8x4, 64 filters 3x3, 224x224; one
   image of its four) on the 128x64 tile (64 filters: the 128x128 tile declines them as mostly
   padding), NHWC int8 read in place with enough tiles of 128x128 to fill an H100 or H200 (162),
   INT8_EXT (float y), UINT8 (into uint8, int8 and float y), INT8x4_EXT and INT8x32 (read in place) with channel
   counts that are not multiples of the 64-channel K tile, and C = 20 (padded to 32) with stride 2,
   the larger tiles switched off where they would serve. */
TEST(conv_cuda_int8_entries_are_reached)
{
    if (!conv_tensor_core_pass()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape sample = {"int8_frontend_imma_sample", 2, 1, 16, 64, 1, {224, 224}, {3, 3}, {0, 0},
                                        {1, 1}, {1, 1}, false};
    static const struct shape big = {"int8_big", 2, 4, 32, 128, 1, {72, 72}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape small = {"int8_c48_k40", 2, 2, 48, 40, 1, {13, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape tail = {"int8_c20_stride2", 2, 2, 20, 24, 1, {15, 14}, {5, 5}, {2, 2}, {2, 2}, {1, 1},
                                      false};
    static const struct shape x32 = {"int8x32_c64", 2, 2, 64, 32, 1, {9, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    const struct config *i8 = &int8_configs[0], *ext = &int8_configs[1], *u8 = &int8_configs[2];
    const struct config *x4 = &int8_configs[3], *x4ext = &int8_configs[4], *u8i8 = &int8_configs[5];
    /* UINT8 data into a float y: sums of bytes up to 255 unsaturated, so that the unsigned A
       operand (mma .u8.s8) is checked on every output */
    static const struct config u8ext = {"uint8_ext", CUDNN_DATA_UINT8, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT,
                                        CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, TV_NHWC, false};
    const char *const t128 = "cuda:fwd_igemm_int8_128x128x64_s3", *const t128x64 = "cuda:fwd_igemm_int8_128x64x64_s4";
    const char *const t64 = "cuda:fwd_igemm_int8_64x64x64_s4";
    const char *const wide_off = "cuda:fwd_igemm_int8_128x*";
    const struct entry_case fwd[] = {
        {&sample, x4, t128x64, NULL},
        {&big, i8, t128, NULL},
        {&big, u8, t128x64, "cuda:fwd_igemm_int8_128x128*"},
        {&small, ext, t64, wide_off},
        {&small, u8, t64, wide_off},
        {&small, u8i8, t64, wide_off},
        {&big, &u8ext, t128x64, "cuda:fwd_igemm_int8_128x128*"},
        {&tail, i8, t64, wide_off},
        {&tail, x4ext, t64, wide_off},
        {&x32, &int8x32_config, t64, wide_off},
    };
    check_entries_reached(fwd, sizeof fwd / sizeof fwd[0], FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    /* IMPLICIT_GEMM runs without workspace: the sample's x and filter are read in place (its
       cudnn-frontend variant pack has no workspace; INT8x32 runs IMPLICIT_PRECOMP_GEMM only) */
    check_entry_reached(&sample, x4, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, t128x64, NULL);
}
