/* conv_entries_tma.c: the sm_90a TMA kernel's forward entries are reached where they apply and
   compute what the reference computes, fp16 and bf16 (fp32 data as TF32: conv_entries_tma_tf32.c
   and conv_entries_tma_k32.c). A file of its own (ctest runs each file as a process) because the problems that fill an
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
