/* conv_entries_tma_staged.c: strided backward data of NCHW TF32 tensors runs its phases on
   channels-last copies where dx is large, and computes what the reference computes (fp16:
   conv_entries_tma_staged16.c). A file of its own: dx must outgrow three quarters of the GPU's L2,
   and the double reference takes tens of seconds. */
#include "conv_reach.h"

/* dy transposed once, dx computed channels-last, then blended into the caller's with beta: TF32
   3x3 stride 2 with C = 128 (the TMA phases serve 128 channels as TF32 only staged), the 1x1
   stride-2 layer (phases without taps: the staged dx zeroed first; the cuBLAS entries switched
   off), and the mma.sync phases (the TMA ones switched off); K of one K tile, so that the
   reference stays short. Each reached, then checked at beta 0 and 0.5. */
TEST(conv_cuda_phases_run_on_channels_last_copies)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    const struct shape c128 = {"staged_phases_c128", 2, staged_batch(128, 128, 127, 4), 128, 32, 1, {128, 127}, {3, 3},
                               {1, 1}, {2, 2}, {1, 1}, false};
    const struct shape down = {"staged_phases_1x1s2", 2, staged_batch(256, 128, 128, 4), 256, 128, 1, {128, 128}, {1, 1},
                               {0, 0}, {2, 2}, {1, 1}, false};
    const char *const tma_tf32 = "cuda:dgrad_igemm_tma_tf32_phases";
    const struct entry_case cases[] = {
        {&c128, &tf32_nchw, tma_tf32, NULL},
        {&down, &tf32_nchw, tma_tf32, "cuda:dgrad_gemm1x1*"},
        {&c128, &tf32_nchw, "cuda:dgrad_igemm_tf32_phases", "cuda:dgrad_igemm_tma*"},
    };
    check_entries_blended(cases, sizeof cases / sizeof cases[0], BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}
