/* conv_entries_tma_staged.c: strided backward data of NCHW tensors runs its phases on
   channels-last copies where dx is large, and computes what the reference computes. A file of its
   own: dx must outgrow three quarters of the GPU's L2, and the double reference takes seconds. */
#include "conv_reach.h"

/* The batch that makes an NCHW dx of c channels over in x in pixels of esize bytes at least three
   quarters of the L2, where the phases are staged (conv_igemm.cu's stage_wanted). */
static int staged_batch(int c, int in, int esize)
{
    const size_t image = (size_t)c * in * in * esize, want = test_l2_bytes() / 4 * 3;
    return (int)((want + image - 1) / image);
}

/* dy transposed once, dx computed channels-last, then blended into the caller's with beta: TF32
   3x3 stride 2 with C = 128 (the TMA phases serve 128 channels as TF32 only staged) and 256 in
   CONVOLUTION mode, fp16 with C = 256, the 1x1 stride-2 layer (phases without taps: the staged
   dx zeroed first; the cuBLAS entry switched off), and TF32 on the mma.sync phases (the TMA ones
   switched off); K of one K tile each, so that the reference stays short. Each reached, then
   checked at beta 0 and 0.5. */
TEST(conv_cuda_phases_run_on_channels_last_copies)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    const struct shape c128 = {"staged_phases_c128", 2, staged_batch(128, 128, 4), 128, 32, 1, {128, 128}, {3, 3},
                               {1, 1}, {2, 2}, {1, 1}, false};
    const struct shape c256 = {"staged_phases_c256", 2, staged_batch(256, 128, 4), 256, 32, 1, {128, 127}, {3, 3},
                               {1, 1}, {2, 2}, {1, 1}, true};
    const struct shape half = {"staged_phases_c256_fp16", 2, staged_batch(256, 128, 2), 256, 64, 1, {128, 128}, {3, 3},
                               {1, 1}, {2, 2}, {1, 1}, false};
    const struct shape down = {"staged_phases_1x1s2", 2, staged_batch(256, 128, 4), 256, 128, 1, {128, 128}, {1, 1},
                               {0, 0}, {2, 2}, {1, 1}, false};
    const char *const tma_tf32 = "cuda:dgrad_igemm_tma_tf32_phases", *const no_1x1 = "cuda:dgrad_gemm1x1*";
    const struct entry_case cases[] = {
        {&c128, &tf32_nchw, tma_tf32, NULL},
        {&c256, &tf32_nchw, tma_tf32, NULL},
        {&half, &tc_configs[3], "cuda:dgrad_igemm_tma_phases", NULL},
        {&down, &tf32_nchw, tma_tf32, no_1x1},
        {&c128, &tf32_nchw, "cuda:dgrad_igemm_tf32_phases", "cuda:dgrad_igemm_tma*"},
    };
    check_entries_blended(cases, sizeof cases / sizeof cases[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}
