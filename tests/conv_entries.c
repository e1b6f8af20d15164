/* conv_entries.c: which implementation serves a convolution: the CUDA tensor-core entries are
   reached where they apply (the TMA kernel's in conv_entries_tma*.c), the host's CBLAS entry and
   packed engine each compute correctly, a repeated call follows the OPENCUDNN_DISABLE switches, the
   reference entries alone serve every direction, and the backward directions are the forward's
   gradients (finite differences). */
#include "conv_reach.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

/* On the CUDA pass, the algorithms that have a tensor-core entry reach it: the implicit GEMM for
   NHWC half data (also with groups, strides, dilation, 3-D), the 1x1 GEMM, im2col + GEMM for a
   channel tail, TF32 for float data under DEFAULT_MATH and plain cuBLAS under FMA_MATH. */
TEST(conv_cuda_tensor_core_entries_are_reached)
{
    if (!conv_tensor_core_pass()) return;
    bool blas = cublas_loadable();
    if (!blas) printf("      (cuBLAS does not load here: its entries are not checked)\n");
    static const struct {
        int shape, config;
        enum dir d;
        int algo;
        const char *prefix;
        const char *disable; /* OPENCUDNN_DISABLE for the case: the entries ahead of the one wanted */
    } cases[] = {
        {0, 0, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_tc_", NULL},
        {1, 1, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "cuda:dgrad_igemm_tc_", NULL},
        {2, 0, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_igemm_tc_", NULL},
        {4, 0, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_tc_", NULL},
        {6, 0, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_igemm_tc_", NULL},
        {0, 2, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_tf32_", NULL},
        {1, 2, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "cuda:dgrad_igemm_tf32_", NULL},
        {0, 3, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_tc_", NULL},
        /* small 1x1 GEMMs go to the implicit GEMM when it needs no workspace; here the filter
           (KCRS) must be packed, so cuBLAS keeps it */
        {3, 0, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, "cuda:fwd_gemm1x1_cublas_tc", "cuda:fwd_igemm*"},
        {3, 0, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_gemm1x1_cublas_tc", "cuda:wgrad_igemm*"},
        /* NCHW filter gradients, 1x1 or not, grouped or not: one GEMM per group over re-laid operands */
        {3, 3, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas_tc", "cuda:wgrad_igemm*"},
        {1, 3, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas_tc", "cuda:wgrad_igemm*"},
        {0, 4, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas", NULL},
        {7, 4, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas", NULL},
        {7, 3, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas_tc", "cuda:wgrad_igemm*"},
        {5, 0, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "cuda:dgrad_im2col_gemm_cublas_tc", NULL},
        {0, 4, FWD, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, "cuda:fwd_im2col_gemm_cublas", NULL},
        {0, 5, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, "cuda:wgrad_im2col_gemm_cublas", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!blas && strstr(cases[i].prefix, "cublas")) continue;
        check_entry_reached(&tc_shapes[cases[i].shape], &tc_configs[cases[i].config], cases[i].d, cases[i].algo,
                            cases[i].prefix, cases[i].disable);
    }
}

/* The implicit GEMM's large tiles (128x128, then 128x64 with the larger one off), which take a
   problem only when its GEMM fills the GPU's multiprocessors with tiles that are mostly not
   padding: forward and backward data over 8 x 48 x 48 outputs of 128 channels, the filter gradient
   with 128 x 576 filter elements, half and TF32. */
TEST(conv_cuda_large_tiles_are_reached)
{
    if (!conv_tensor_core_pass()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape fwd = {"large_fwd", 2, 8, 16, 128, 1, {48, 48}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape dgrad = {"large_dgrad", 2, 8, 128, 16, 1, {48, 48}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape wgrad = {"large_wgrad", 2, 2, 64, 128, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    const struct config *half = &tc_configs[0], *tf32 = &tc_configs[2];
    const int fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, dgrad_algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    /* backward data's stride-phase entries come first in its table, and on compute capability
       9.0 the sm_90a kernel's entries come first in every table (conv_cuda_wgmma_entries_are_reached) */
    const char *const phases =
        "cuda:dgrad_igemm_tc_phases,cuda:dgrad_igemm_tf32_phases,cuda:dgrad_igemm_wgmma*,cuda:dgrad_igemm_tma*";
    const char *const fwd_wgmma = "cuda:fwd_igemm_wgmma*,cuda:fwd_igemm_tma*";
    char dgrad_off[160];
    check_entry_reached(&fwd, half, FWD, fwd_algo, "cuda:fwd_igemm_tc_128x128x32", fwd_wgmma);
    check_entry_reached(&fwd, half, FWD, fwd_algo, "cuda:fwd_igemm_tc_128x64x32",
                        "cuda:fwd_igemm_wgmma*,cuda:fwd_igemm_tma*,cuda:fwd_igemm_tc_128x128*");
    check_entry_reached(&fwd, tf32, FWD, fwd_algo, "cuda:fwd_igemm_tf32_128x128x16", fwd_wgmma);
    check_entry_reached(&fwd, tf32, FWD, fwd_algo, "cuda:fwd_igemm_tf32_128x64x16",
                        "cuda:fwd_igemm_wgmma*,cuda:fwd_igemm_tma*,cuda:fwd_igemm_tf32_128x128*");
    check_entry_reached(&dgrad, half, BWD_DATA, dgrad_algo, "cuda:dgrad_igemm_tc_128x128x32", phases);
    snprintf(dgrad_off, sizeof dgrad_off, "%s,cuda:dgrad_igemm_tc_128x128*", phases);
    check_entry_reached(&dgrad, half, BWD_DATA, dgrad_algo, "cuda:dgrad_igemm_tc_128x64x32", dgrad_off);
    check_entry_reached(&dgrad, tf32, BWD_DATA, dgrad_algo, "cuda:dgrad_igemm_tf32_128x128x16", phases);
    snprintf(dgrad_off, sizeof dgrad_off, "%s,cuda:dgrad_igemm_tf32_128x128*", phases);
    check_entry_reached(&dgrad, tf32, BWD_DATA, dgrad_algo, "cuda:dgrad_igemm_tf32_128x64x16", dgrad_off);
    check_entry_reached(&wgrad, half, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_igemm_tc_128x128x32",
                        "cuda:wgrad_igemm_wgmma*,cuda:wgrad_igemm_tma*");
    check_entry_reached(&wgrad, half, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_igemm_tc_128x64x32",
                        "cuda:wgrad_igemm_wgmma*,cuda:wgrad_igemm_tma*,cuda:wgrad_igemm_tc_128x128*");
}

/* The sm_90a kernel's entries (compute capability 9.0 only; the suite's OPENCUDNN_UNPROVEN=1 lets
   the unproven ones serve), each tile in fp16 and bf16, and forward and backward data in
   TF32 (float data under DEFAULT_MATH, NHWC and NCHW), where the heuristic picks it: the
   128x256 tile on GEMMs of at least a tile per multiprocessor (17161 output pixels, an odd
   count, with a K tail: 72 = 64 + 8), the 256x128 tile likewise with N = 128 (34322 pixels),
   the 128x128 one where it fills the GPU or in the filter gradient, the 128x64 one on smaller
   GEMMs (split-K where the tiles leave it idle), with edge tiles in M and
   N, stride 2, dilation with CONVOLUTION mode, split-K (K = 2088 over 200 pixels), the stem's
   C = 3 padded to 8; backward data at unit stride with both tiles, and with stride 2 through the
   phases entry, whose phases run on the sm_90a kernel; the filter gradient (both
   operands MN-major) with every tile, an edge tile in M, stride 2 and CONVOLUTION mode: the
   256x128 tile on 256 and 240 filters (the 128x256 one switched off), the 128x64 one on the 64
   columns of a 1x1 filter over 64 channels (which the wider tiles decline as mostly padding, the
   cuBLAS 1x1 entries switched off). */
TEST(conv_cuda_wgmma_entries_are_reached)
{
    if (!conv_tensor_core_pass() || !on_hopper("wgmma")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape big_fwd = {"wgmma_big_fwd", 2, 1, 8, 256, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape tall_fwd = {"wgmma_tall_fwd", 2, 2, 8, 128, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                          false};
    static const struct shape big_dgrad = {"wgmma_big_dgrad", 2, 1, 256, 8, 1, {131, 131}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                           false};
    static const struct shape edges = {"wgmma_stride2_edges", 2, 3, 40, 120, 1, {29, 13}, {3, 3}, {1, 1}, {2, 2}, {1, 1},
                                       false};
    static const struct shape dilated = {"wgmma_dilated_convolution", 2, 1, 16, 128, 1, {20, 18}, {3, 3}, {2, 2}, {1, 1},
                                         {2, 2}, true};
    static const struct shape split = {"wgmma_split_k", 2, 2, 232, 128, 1, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape stem = {"wgmma_stem_c3", 2, 2, 3, 128, 1, {32, 32}, {7, 7}, {3, 3}, {2, 2}, {1, 1}, false};
    static const struct shape dgrad = {"wgmma_dgrad_edges", 2, 1, 240, 24, 1, {19, 19}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                       false};
    static const struct shape dgrad_strided = {"wgmma_dgrad_phases", 2, 2, 128, 64, 1, {32, 32}, {3, 3}, {1, 1}, {2, 2},
                                               {1, 1}, false};
    static const struct shape wgrad_big = {"wgmma_wgrad", 2, 2, 24, 128, 1, {32, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
                                           false};
    static const struct shape wgrad_edges = {"wgmma_wgrad_edges", 2, 3, 40, 112, 1, {15, 13}, {3, 3}, {1, 1}, {2, 2},
                                             {1, 1}, true};
    static const struct shape wgrad_tall = {"wgmma_wgrad_tall", 2, 2, 128, 256, 1, {24, 24}, {3, 3}, {1, 1}, {1, 1},
                                            {1, 1}, false};
    static const struct shape wgrad_tall_edges = {"wgmma_wgrad_tall_edges", 2, 2, 64, 240, 1, {25, 23}, {3, 3}, {1, 1},
                                                  {2, 2}, {1, 1}, false};
    static const struct shape wgrad_1x1 = {"wgmma_wgrad_1x1_c64", 2, 2, 64, 128, 1, {28, 28}, {1, 1}, {0, 0}, {1, 1},
                                           {1, 1}, false};
    static const struct shape wgrad_1x1_edges = {"wgmma_wgrad_1x1_k112_stride2", 2, 3, 64, 112, 1, {27, 29}, {1, 1},
                                                 {0, 0}, {2, 2}, {1, 1}, true};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *tf32 = &tc_configs[2];
    const int fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, dgrad_algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    const char *const big = "_igemm_wgmma_128x256x64_s4", *const small = "_igemm_wgmma_128x128x64_s5";
    const char *const fwd_tiny = "cuda:fwd_igemm_wgmma_128x64x64_s6", *const dgrad_tiny = "cuda:dgrad_igemm_wgmma_128x64x64_s6";
    /* the TMA entries, ahead of these in the tables, are off (conv_cuda_tma_entries_are_reached,
       conv_cuda_tma_dgrad_entries_are_reached, conv_cuda_tma_wgrad_entries_are_reached,
       conv_cuda_tma_cluster_entries_are_reached, conv_cuda_tma_tf32_entries_are_reached) */
    const char *const no_tma = "cuda:fwd_igemm_tma*", *const no_dgrad_tma = "cuda:dgrad_igemm_tma*";
    const char *const no_wgrad_tma = "cuda:wgrad_igemm_tma*";
    const char *const fwd_wide_off = "cuda:fwd_igemm_tma*,cuda:fwd_igemm_wgmma_128x256*,cuda:fwd_igemm_wgmma_256x128*";
    const char *const dgrad_wide_off =
        "cuda:dgrad_igemm_tma*,cuda:dgrad_igemm_wgmma_128x256*,cuda:dgrad_igemm_wgmma_256x128*";
    const int wgrad_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
    char fwd_big[64], fwd_small[64], dgrad_big[64], dgrad_small[64], wgrad_big_name[64], wgrad_small[64];
    snprintf(fwd_big, sizeof fwd_big, "cuda:fwd%s", big);
    snprintf(fwd_small, sizeof fwd_small, "cuda:fwd%s", small);
    snprintf(dgrad_big, sizeof dgrad_big, "cuda:dgrad%s", big);
    snprintf(dgrad_small, sizeof dgrad_small, "cuda:dgrad%s", small);
    snprintf(wgrad_big_name, sizeof wgrad_big_name, "cuda:wgrad%s", big);
    snprintf(wgrad_small, sizeof wgrad_small, "cuda:wgrad%s", small);
    check_entry_reached(&big_fwd, half, FWD, fwd_algo, fwd_big, no_tma);
    check_entry_reached(&big_fwd, bf16, FWD, fwd_algo, fwd_big, no_tma);
    check_entry_reached(&big_fwd, half, FWD, fwd_algo, fwd_small, fwd_wide_off);
    check_entry_reached(&tall_fwd, half, FWD, fwd_algo, "cuda:fwd_igemm_wgmma_256x128x64_s4", no_tma);
    check_entry_reached(&tall_fwd, bf16, FWD, fwd_algo, "cuda:fwd_igemm_wgmma_256x128x64_s4", no_tma);
    check_entry_reached(&edges, half, FWD, fwd_algo, fwd_tiny, no_tma);
    check_entry_reached(&edges, bf16, FWD, fwd_algo, fwd_tiny, no_tma);
    check_entry_reached(&dilated, half, FWD, fwd_algo, fwd_tiny, no_tma);
    check_entry_reached(&split, bf16, FWD, fwd_algo, fwd_tiny, no_tma);
    check_entry_reached(&stem, half, FWD, fwd_algo, fwd_tiny, "cuda:fwd_stem*,cuda:fwd_igemm_tma*");
    check_entry_reached(&big_dgrad, half, BWD_DATA, dgrad_algo, dgrad_big, no_dgrad_tma);
    check_entry_reached(&big_dgrad, bf16, BWD_DATA, dgrad_algo, "cuda:dgrad_igemm_wgmma_256x128x64_s4",
                        "cuda:dgrad_igemm_tma*,cuda:dgrad_igemm_wgmma_128x256*");
    check_entry_reached(&big_dgrad, half, BWD_DATA, dgrad_algo, dgrad_small, dgrad_wide_off);
    check_entry_reached(&dgrad, half, BWD_DATA, dgrad_algo, dgrad_tiny, no_dgrad_tma);
    check_entry_reached(&dgrad, bf16, BWD_DATA, dgrad_algo, dgrad_tiny, no_dgrad_tma);
    /* strided: the phases entry, each phase (512 pixels x 128 channels) on the 128x64 tile */
    check_entry_reached(&dgrad_strided, half, BWD_DATA, dgrad_algo, "cuda:dgrad_igemm_tc_phases", no_dgrad_tma);
    check_entry_reached(&wgrad_big, half, BWD_FILTER, wgrad_algo, wgrad_big_name, no_wgrad_tma);
    check_entry_reached(&wgrad_big, bf16, BWD_FILTER, wgrad_algo, wgrad_small,
                        "cuda:wgrad_igemm_tma*,cuda:wgrad_igemm_wgmma_128x256*");
    check_entry_reached(&wgrad_edges, half, BWD_FILTER, wgrad_algo, wgrad_small, no_wgrad_tma);
    check_entry_reached(&wgrad_edges, bf16, BWD_FILTER, wgrad_algo, wgrad_small, no_wgrad_tma);
    const char *const wgrad_tall_tile = "cuda:wgrad_igemm_wgmma_256x128x64_s4";
    const char *const wgrad_tiny = "cuda:wgrad_igemm_wgmma_128x64x64_s6";
    const char *const wgrad_wide_off = "cuda:wgrad_igemm_tma*,cuda:wgrad_igemm_wgmma_128x256*";
    const char *const wgrad_1x1_off = "cuda:wgrad_gemm1x1*,cuda:wgrad_igemm_tma*";
    check_entry_reached(&wgrad_tall, half, BWD_FILTER, wgrad_algo, wgrad_tall_tile, wgrad_wide_off);
    check_entry_reached(&wgrad_tall_edges, bf16, BWD_FILTER, wgrad_algo, wgrad_tall_tile, wgrad_wide_off);
    check_entry_reached(&wgrad_1x1, half, BWD_FILTER, wgrad_algo, wgrad_tiny, wgrad_1x1_off);
    check_entry_reached(&wgrad_1x1_edges, bf16, BWD_FILTER, wgrad_algo, wgrad_tiny, wgrad_1x1_off);
    /* TF32: forward and backward data (the filter gradient has no TF32 wgmma) */
    check_entry_reached(&big_fwd, tf32, FWD, fwd_algo, fwd_big, no_tma);
    check_entry_reached(&tall_fwd, &tf32_nchw, FWD, fwd_algo, "cuda:fwd_igemm_wgmma_256x128x64_s4", no_tma);
    check_entry_reached(&big_fwd, &tf32_nchw, FWD, fwd_algo, fwd_small, fwd_wide_off);
    check_entry_reached(&edges, &tf32_nchw, FWD, fwd_algo, fwd_tiny, no_tma);
    check_entry_reached(&dilated, tf32, FWD, fwd_algo, fwd_tiny, no_tma);
    check_entry_reached(&split, tf32, FWD, fwd_algo, fwd_tiny, no_tma);
    check_entry_reached(&stem, &tf32_nchw, FWD, fwd_algo, fwd_tiny, "cuda:fwd_stem*,cuda:fwd_igemm_tma*");
    check_entry_reached(&big_dgrad, tf32, BWD_DATA, dgrad_algo, dgrad_big, no_dgrad_tma);
    check_entry_reached(&big_dgrad, &tf32_nchw, BWD_DATA, dgrad_algo, "cuda:dgrad_igemm_wgmma_256x128x64_s4",
                        "cuda:dgrad_igemm_tma*,cuda:dgrad_igemm_wgmma_128x256*");
    check_entry_reached(&dgrad, &tf32_nchw, BWD_DATA, dgrad_algo, dgrad_tiny, no_dgrad_tma);
    check_entry_reached(&dgrad_strided, tf32, BWD_DATA, dgrad_algo, "cuda:dgrad_igemm_tf32_phases", no_dgrad_tma);
}

/* The few-channel entries, ahead of the implicit GEMM for half, bfloat16 and (TF32, under DEFAULT
   math) float data, forward under both implicit-GEMM algorithms, backward data under ALGO_0 and
   ALGO_1 (they need no workspace) and the filter gradient under ALGO_1 (partial sums in the
   workspace; for float NCHW the NCHW TF32 entry ahead of it serves, faster: switched off to
   reach the stem's, and once checked to serve; for 16-bit data the space-to-depth entry ahead
   of it, switched off): ResNet's stem (C = 3, 7x7,
   stride 2, pad 3) with an odd output size and partial tiles, NHWC and NCHW (KCRS filter); C = 1,
   3x3, CONVOLUTION mode, 72 filters (two filter blocks forward); C = 4, 5x5 with dilation 2 and no
   padding. */
TEST(conv_cuda_stem_entry)
{
    if (!conv_tensor_core_pass()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape stem = {"stem_c3_7x7s2", 2, 2, 3, 64, 1, {33, 35}, {7, 7}, {3, 3}, {2, 2}, {1, 1}, false};
    static const struct shape gray = {"stem_c1_3x3_convolution", 2, 3, 1, 72, 1, {19, 21}, {3, 3}, {1, 1}, {1, 1},
                                      {1, 1}, true};
    static const struct shape dilated = {"stem_c4_5x5_dilated", 2, 1, 4, 24, 1, {23, 17}, {5, 5}, {0, 0}, {1, 1},
                                         {2, 2}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1], *half_nchw = &tc_configs[3];
    const struct config *tf32 = &tc_configs[2], *tf32n = &tf32_nchw;
    const int precomp = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, implicit = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    const int algo1 = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, algo0 = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
    const int wgrad1 = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
    const struct {
        const struct shape *sh;
        const struct config *cf;
        enum dir d;
        int algo;
    } cases[] = {
        {&stem, half, FWD, precomp},          {&stem, bf16, FWD, implicit},        {&stem, half_nchw, FWD, precomp},
        {&gray, half, FWD, implicit},         {&gray, bf16, FWD, precomp},         {&dilated, half_nchw, FWD, precomp},
        {&dilated, bf16, FWD, precomp},       {&stem, half, BWD_DATA, algo1},      {&stem, bf16, BWD_DATA, algo0},
        {&stem, half_nchw, BWD_DATA, algo1},  {&gray, half, BWD_DATA, algo0},      {&dilated, half_nchw, BWD_DATA, algo1},
        {&dilated, bf16, BWD_DATA, algo1},    {&stem, half, BWD_FILTER, wgrad1},   {&stem, bf16, BWD_FILTER, wgrad1},
        {&stem, half_nchw, BWD_FILTER, wgrad1}, {&gray, half, BWD_FILTER, wgrad1}, {&dilated, bf16, BWD_FILTER, wgrad1},
        /* float data on TF32 */
        {&stem, tf32, FWD, precomp},          {&stem, tf32n, FWD, implicit},       {&gray, tf32n, FWD, precomp},
        {&dilated, tf32, FWD, precomp},       {&stem, tf32, BWD_DATA, algo1},      {&stem, tf32n, BWD_DATA, algo0},
        {&gray, tf32, BWD_DATA, algo1},       {&dilated, tf32n, BWD_DATA, algo1},  {&stem, tf32, BWD_FILTER, wgrad1},
        {&stem, tf32n, BWD_FILTER, wgrad1},   {&gray, tf32n, BWD_FILTER, wgrad1},  {&dilated, tf32, BWD_FILTER, wgrad1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_entry_reached(cases[i].sh, cases[i].cf, cases[i].d, cases[i].algo,
                            cases[i].d == FWD        ? "cuda:fwd_stem_tc_128x64"
                            : cases[i].d == BWD_DATA ? "cuda:dgrad_stem_tc_128x8"
                                                     : "cuda:wgrad_stem_tc_64x256",
                            cases[i].d != BWD_FILTER ? NULL
                            : cases[i].cf == tf32n   ? "cuda:wgrad_nchw*"
                                                     : "cuda:wgrad_s2d");
    check_entry_reached(&stem, tf32n, BWD_FILTER, wgrad1, "cuda:wgrad_nchw_tf32_64x128x16_s3", "cuda:wgrad_nchw_gemm*");
}

/* The TF32 filter gradient of NCHW float data, ahead of cuBLAS on a column matrix under
   BWD_FILTER_ALGO_1 with DEFAULT_MATH (the per-image cuBLAS entries ahead of it switched off): ResNet's
   3x3 (64 channels each way); stride 2 with odd sizes (P Q not a multiple of 4), 72 filters (two
   filter tiles) and CONVOLUTION mode; a 1x1 of 130 channels (two column tiles); dilation 2; and
   one batch large enough that the plan splits K. */
TEST(conv_cuda_wgrad_nchw_tf32_entry)
{
    if (!conv_tensor_core_pass()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape shapes_tf32[] = {
        {"wgrad_tf32_3x3", 2, 2, 64, 64, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
        {"wgrad_tf32_3x3s2_edges", 2, 3, 40, 72, 1, {15, 13}, {3, 3}, {1, 1}, {2, 2}, {1, 1}, true},
        {"wgrad_tf32_1x1", 2, 2, 130, 64, 1, {10, 11}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false},
        {"wgrad_tf32_dilated", 2, 2, 16, 24, 1, {12, 11}, {3, 3}, {2, 2}, {1, 1}, {2, 2}, false},
        {"wgrad_tf32_split_k", 2, 16, 32, 64, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    };
    for (size_t i = 0; i < sizeof shapes_tf32 / sizeof shapes_tf32[0]; i++)
        check_entry_reached(&shapes_tf32[i], &tf32_nchw, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1,
                            "cuda:wgrad_nchw_tf32_64x128x16_s3", "cuda:wgrad_nchw_gemm*,cuda:wgrad_igemm_tma_tf32*");
}

/* The algorithms that form no matrix (forward IMPLICIT_GEMM, backward ALGO_0), which run without
   workspace, on the gather entries where every tensor-core entry ahead needs some: float NCHW
   as TF32 in every direction (3x3, stride 2 with odd sizes and CONVOLUTION mode, groups, dilation,
   a filter gradient long enough to be split), half NHWC backward data of a strided 1x1 (the
   downsampling shortcut) and the filter gradient of half and bfloat16 NHWC data, also split
   (fp32 running sums in the handle's scratch). */
TEST(conv_cuda_gather_entries_serve_without_workspace)
{
    if (!conv_tensor_core_pass()) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    static const struct shape sq = {"gather_3x3", 2, 2, 24, 40, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape s2 = {"gather_3x3s2_edges", 2, 3, 40, 72, 1, {15, 13}, {3, 3}, {1, 1}, {2, 2}, {1, 1}, true};
    static const struct shape grp = {"gather_groups_dilated", 2, 2, 32, 48, 4, {12, 11}, {3, 3}, {2, 2}, {1, 1}, {2, 2},
                                     false};
    static const struct shape split = {"gather_split_k", 2, 16, 32, 64, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    static const struct shape ds = {"gather_1x1s2", 2, 4, 64, 136, 1, {14, 14}, {1, 1}, {0, 0}, {2, 2}, {1, 1}, false};
    const struct config *half = &tc_configs[0], *bf16 = &tc_configs[1];
    const int implicit = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, algo0 = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
              wgrad0 = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
    const struct shape *nchw[] = {&sq, &s2, &grp};
    for (size_t i = 0; i < sizeof nchw / sizeof nchw[0]; i++) {
        check_entry_reached(nchw[i], &tf32_nchw, FWD, implicit, "cuda:fwd_igemm_gather_", NULL);
        check_entry_reached(nchw[i], &tf32_nchw, BWD_DATA, algo0, "cuda:dgrad_igemm_gather_", NULL);
        check_entry_reached(nchw[i], &tf32_nchw, BWD_FILTER, wgrad0, "cuda:wgrad_igemm_gather_", NULL);
    }
    check_entry_reached(&split, &tf32_nchw, BWD_FILTER, wgrad0, "cuda:wgrad_igemm_gather_", NULL);
    check_entry_reached(&split, half, BWD_FILTER, wgrad0, "cuda:wgrad_igemm_gather_", NULL); /* fp32 running sums */
    check_entry_reached(&split, bf16, BWD_FILTER, wgrad0, "cuda:wgrad_igemm_gather_", NULL);
    check_entry_reached(&ds, half, BWD_DATA, algo0, "cuda:dgrad_igemm_gather_", NULL);
    check_entry_reached(&s2, half, BWD_FILTER, wgrad0, "cuda:wgrad_igemm_gather_", NULL);
    check_entry_reached(&grp, bf16, BWD_FILTER, wgrad0, "cuda:wgrad_igemm_gather_", NULL);
}

/* The host's CBLAS entry (a build with OPENCUDNN_CBLAS): forward GEMM reaches host:fwd_gemm_cblas
   on the NCHW float and double problems it takes when OPENCUDNN_HOST_GEMM=cblas overrides the
   calibration (tests/conv_timing.c tests the race itself), and the packed engine (host:fwd_gemm)
   with the entry switched off; GEMM's result is checked against the reference both ways (the
   matrix of tests/conv.c checks the other algorithms). The shapes
   are above the size under which the entry leaves the work to the packed engine (a GEMM per
   image and group of 64 x 196 x 576) and cover padding, stride, CONVOLUTION mode, groups, a
   strided x and a 1x1 filter that multiplies x in place (GEMM takes no dilation). Under
   OPENCUDNN_TEST_SUBSET, a subset of the shape-configuration pairs. */
TEST(conv_host_cblas_entry_and_packed_engine)
{
    if (test_backend[0] != 'h') return;
    static const struct shape cblas_shapes[] = {
        {"cblas_3x3", 2, 2, 64, 64, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
        {"cblas_stride2_convolution_mode", 2, 1, 64, 72, 1, {31, 30}, {3, 3}, {2, 1}, {2, 2}, {1, 1}, true},
        {"cblas_groups2", 2, 1, 128, 128, 2, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
        {"cblas_1x1", 2, 2, 576, 64, 1, {14, 14}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false},
    };
    /* variant 2 of a rotating config: x padded-strided, y and the filter NCHW */
    static const struct {
        struct config cf;
        int variant;
    } cfs[] = {
        {{"float_nchw", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, TV_NCHW,
          true}, 0},
        {{"double_nchw", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH,
          TV_NCHW, true}, 0},
        {{"float_x_strided", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH,
          TV_NCHW, false}, 2},
    };
#ifdef OCD_TEST_CBLAS
    const char *want = "host:fwd_gemm_cblas";
#else
    const char *want = "host:fwd_gemm";
#endif
    const struct disable_list saved = disable_saved();
    const char *gemm = getenv("OPENCUDNN_HOST_GEMM");
    char gemm_saved[64];
    snprintf(gemm_saved, sizeof gemm_saved, "%s", gemm ? gemm : "");
    const struct subset sub = subset_start();
    for (size_t s = 0; s < sizeof cblas_shapes / sizeof cblas_shapes[0]; s++)
        for (size_t c = 0; c < sizeof cfs / sizeof cfs[0]; c++) {
            if (!subset_keeps(&sub, s * (sizeof cfs / sizeof cfs[0]) + c)) continue;
            for (int off = 0; off < 2; off++) {
                struct problem p;
                char label[160];
                snprintf(label, sizeof label, "fwd %s %s%s", cblas_shapes[s].name, cfs[c].cf.name,
                         off ? " cblas off" : "");
                if (off) ocd_setenv("OPENCUDNN_DISABLE", "host:fwd_gemm_cblas");
                else ocd_setenv("OPENCUDNN_HOST_GEMM", "cblas");
                if (make_problem(&p, &cblas_shapes[s], &cfs[c].cf, cfs[c].variant)) {
                    /* which entry serves GEMM: run it once on poisoned data */
                    size_t ws_bytes = 0;
                    CHECK_OK(workspace_size(&p, FWD, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &ws_bytes));
                    void *ws = ws_bytes ? tbuf_alloc(ws_bytes) : NULL;
                    void *dx = tbuf_alloc(tview_bytes(&p.x)), *dw = tbuf_alloc(tview_bytes(&p.w.v)), *dy = tbuf_alloc(tview_bytes(&p.y));
                    struct ran_impl r;
                    CHECK_OK(execute_capturing(&p, FWD, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, dx, dw, dy, ws, ws_bytes, &r));
                    const char *expect = off ? "host:fwd_gemm" : want;
                    if (!CHECK(strcmp(r.name, expect) == 0))
                        printf("      (%s: GEMM ran \"%s\", expected %s)\n", label, r.name, expect);
                    tbuf_free(dx), tbuf_free(dw), tbuf_free(dy);
                    if (ws) tbuf_free(ws);
                    check_direction(&p, FWD, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, label);
                }
                free_problem(&p);
                if (off) disable_restore(&saved);
                else ocd_setenv("OPENCUDNN_HOST_GEMM", gemm_saved);
            }
        }
}

/* ---- finite differences: the backward directions are the gradients of the forward one -------- */

/* sum(g * conv(x, w)) through the library's forward in double precision. */
static double loss(struct problem *p, double *x, double *w, const double *g)
{
    long ny = ref_conv_y_count(&p->r);
    void *dx = tview_upload(&p->x, x), *dw = tview_upload(&p->w.v, w), *dy = tbuf_alloc(tview_bytes(&p->y));
    double *y = malloc(sizeof *y * (size_t)ny), sum = 0;
    CHECK_OK(execute(p, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, dx, dw, dy, NULL, 0, 1, 0));
    tview_download(&p->y, dy, y);
    for (long i = 0; i < ny; i++) sum += g[i] * y[i];
    tbuf_free(dx), tbuf_free(dw), tbuf_free(dy), free(y);
    return sum;
}

TEST(conv_backward_matches_finite_differences)
{
    static const struct config dbl = {"double", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE,
                                      CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH, TV_NCHW, false};
    static const int picks[] = {1, 2, 3, 12}; /* strided, dilated, grouped, 3-D grouped CONVOLUTION */
    for (size_t s = 0; s < sizeof picks / sizeof picks[0]; s++) {
        struct problem p;
        if (!make_problem(&p, &shapes[picks[s]], &dbl, (int)s)) {
            free_problem(&p);
            continue;
        }
        long nx = ref_conv_x_count(&p.r), nw = ref_conv_w_count(&p.r), ny = ref_conv_y_count(&p.r);
        double *x = random_values(CUDNN_DATA_DOUBLE, nx, -1, 1), *w = random_values(CUDNN_DATA_DOUBLE, nw, -1, 1);
        double *g = random_values(CUDNN_DATA_DOUBLE, ny, -1, 1), *gx = malloc(sizeof *gx * (size_t)nx);
        double *gw = malloc(sizeof *gw * (size_t)nw);
        void *dx = tbuf_alloc(tview_bytes(&p.x)), *dw = tview_upload(&p.w.v, w), *dy = tview_upload(&p.y, g);
        size_t ws = 0;
        CHECK_OK(workspace_size(&p, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, &ws));
        void *wsp = tbuf_alloc(ws);
        CHECK_OK(execute(&p, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, dx, dw, dy, wsp, ws, 1, 0));
        tview_download(&p.x, dx, gx);
        tbuf_free(dx), tbuf_free(wsp);
        dx = tview_upload(&p.x, x);
        CHECK_OK(workspace_size(&p, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &ws));
        wsp = tbuf_alloc(ws);
        CHECK_OK(execute(&p, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, dx, dw, dy, wsp, ws, 1, 0));
        tview_download(&p.w.v, dw, gw);
        const double h = 1e-3;
        for (int t = 0; t < 6; t++) {
            long i = (long)(trand_u64() % (uint64_t)nx), j = (long)(trand_u64() % (uint64_t)nw);
            double keep = x[i];
            x[i] = keep + h;
            double up = loss(&p, x, w, g);
            x[i] = keep - h;
            double down = loss(&p, x, w, g);
            x[i] = keep;
            double fd = (up - down) / (2 * h);
            if (!CHECK(fabs(fd - gx[i]) <= 1e-7 * fmax(1, fabs(fd))))
                printf("      %s dx[%ld]: finite difference %.12g, backward data %.12g\n", shapes[picks[s]].name, i, fd, gx[i]);
            keep = w[j];
            w[j] = keep + h;
            up = loss(&p, x, w, g);
            w[j] = keep - h;
            down = loss(&p, x, w, g);
            w[j] = keep;
            fd = (up - down) / (2 * h);
            if (!CHECK(fabs(fd - gw[j]) <= 1e-7 * fmax(1, fabs(fd))))
                printf("      %s dw[%ld]: finite difference %.12g, backward filter %.12g\n", shapes[picks[s]].name, j, fd, gw[j]);
        }
        tbuf_free(dx), tbuf_free(dw), tbuf_free(dy), tbuf_free(wsp);
        free(x), free(w), free(g), free(gx), free(gw);
        free_problem(&p);
    }
}

/* ---- the reference entries: every direction through the plain loops alone ----------------------- */

/* A repeated call reuses its choice (ocd_conv_execute's memo), but still follows the switches:
   the same call with the entry that served it switched off runs another, and back again. */
TEST(conv_repeated_call_follows_the_switches)
{
    struct problem p;
    if (!make_problem(&p, &shapes[0], &float_configs[0], 0)) {
        free_problem(&p);
        return;
    }
    const int algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    const struct disable_list saved = disable_saved();
    char first[128];
    void *dx = tbuf_alloc(tview_bytes(&p.x)), *dw = tbuf_alloc(tview_bytes(&p.w.v)), *dy = tbuf_alloc(tview_bytes(&p.y));
    size_t ws_bytes = 0;
    CHECK_OK(workspace_size(&p, FWD, algo, &ws_bytes));
    size_t ws_cap = ws_bytes + ((size_t)1 << 20); /* room for the entry that serves it next */
    void *ws = tbuf_alloc(ws_cap);
    struct ran_impl r;
    CHECK_OK(execute_capturing(&p, FWD, algo, dx, dw, dy, ws, ws_cap, &r));
    snprintf(first, sizeof first, "%s", r.name);
    CHECK(first[0] != '\0');
    CHECK_OK(execute_capturing(&p, FWD, algo, dx, dw, dy, ws, ws_cap, &r));
    CHECK(strcmp(r.name, first) == 0);
    ocd_setenv("OPENCUDNN_DISABLE", first);
    CHECK_OK(execute_capturing(&p, FWD, algo, dx, dw, dy, ws, ws_cap, &r));
    if (!CHECK(r.name[0] != '\0' && strcmp(r.name, first) != 0))
        printf("      (with %s switched off, %s ran)\n", first, r.name);
    disable_restore(&saved);
    CHECK_OK(execute_capturing(&p, FWD, algo, dx, dw, dy, ws, ws_cap, &r));
    CHECK(strcmp(r.name, first) == 0);
    /* the remembered workspace size still guards the call */
    if (ws_bytes > 0)
        CHECK_STATUS(execute(&p, FWD, algo, dx, dw, dy, ws, ws_bytes - 1, 1, 0), CUDNN_STATUS_BAD_PARAM);
    tbuf_free(ws), tbuf_free(dx), tbuf_free(dw), tbuf_free(dy);
    free_problem(&p);
}

TEST(conv_reference_entries_alone)
{
    const struct disable_list saved = disable_saved();
    /* switch off everything but the direct kernels: the heuristic then serves each GEMM-family
       algorithm with the reference entry */
    ocd_setenv("OPENCUDNN_DISABLE",
               "host:fwd_implicit_precomp_gemm,host:fwd_implicit_gemm,host:fwd_gemm,host:dgrad_implicit_precomp_gemm,"
               "host:dgrad_implicit_gemm,host:wgrad_gemm,host:wgrad_implicit_precomp_gemm,host:wgrad_implicit_gemm,"
               "cuda:fwd_gemm1x1*,cuda:fwd_igemm*,cuda:fwd_im2col*,cuda:dgrad_gemm1x1*,cuda:dgrad_igemm*,"
               "cuda:dgrad_im2col*,cuda:wgrad_nchw*,cuda:wgrad_gemm1x1*,cuda:wgrad_igemm*,cuda:wgrad_im2col*,"
               "cuda:fwd_stem*,cuda:dgrad_stem*,cuda:wgrad_stem*,host:wgrad_s2d,cuda:wgrad_s2d");
    static const int picks[] = {0, 3, 12};
    for (size_t s = 0; s < sizeof picks / sizeof picks[0]; s++)
        for (int d = FWD; d <= BWD_FILTER; d++) {
            struct problem p;
            char label[128];
            snprintf(label, sizeof label, "reference %d %s", d, shapes[picks[s]].name);
            if (make_problem(&p, &shapes[picks[s]], &float_configs[0], (int)s)) check_direction(&p, d, -1, label);
            free_problem(&p);
        }
    disable_restore(&saved);
}
