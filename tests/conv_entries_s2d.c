/* conv_entries_s2d.c: the space-to-depth filter gradient (src/cnn/conv_s2d.c: the input re-laid
   so that a strided convolution over few channels is a unit-stride one) is reached where it
   applies and computes what the reference computes, on both backends. */
#include "conv_reach.h"

/* host:wgrad_s2d (the host's GEMM entry ahead of it switched off, as for a pinned engine) and
   cuda:wgrad_s2d (unproven: the suite's OPENCUDNN_UNPROVEN=1 lets it serve, ahead of the
   few-channel kernel) under BWD_FILTER_ALGO_1, fp16 and bf16 NHWC: ResNet's stem shape (C = 3,
   7x7, stride 2, pad 3) over odd extents, a 5x5 filter at stride 3 with unequal paddings (re-laid
   taps that reach no tap of the filter on both ends), a 4x4 filter at stride 2 without padding
   over C = 5 (24 re-laid channels, 4 of them zero); the filter KCRS; each reached at beta 0, then
   checked at beta 0 and 0.5. */
TEST(conv_wgrad_s2d_serves_strided_few_channels)
{
    const bool host = test_backend[0] == 'h';
    if (!host && !conv_tensor_core_pass()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape stem = {"s2d_stem_7x7s2_c3", 2, 2, 3, 16, 1, {31, 28}, {7, 7}, {3, 3}, {2, 2}, {1, 1},
                                      false};
    static const struct shape s3 = {"s2d_5x5s3_c2_pads", 2, 3, 2, 8, 1, {17, 20}, {5, 5}, {1, 3}, {3, 3}, {1, 1},
                                    false};
    static const struct shape c5 = {"s2d_4x4s2_c5_pad0", 2, 2, 5, 24, 1, {18, 19}, {4, 4}, {0, 0}, {2, 2}, {1, 1},
                                    false};
    const char *const entry = host ? "host:wgrad_s2d" : "cuda:wgrad_s2d";
    const char *const ahead = host ? "host:wgrad_gemm" : NULL;
    const struct entry_case cases[] = {
        {&stem, &tc_configs[0], entry, ahead}, {&stem, &tc_configs[1], entry, ahead},
        {&s3, &tc_configs[0], entry, ahead},   {&c5, &tc_configs[1], entry, ahead},
    };
    check_entries_blended(cases, sizeof cases / sizeof cases[0], BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1);
}
