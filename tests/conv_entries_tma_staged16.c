/* conv_entries_tma_staged16.c: strided backward data of NCHW fp16 tensors runs its phases on
   channels-last copies where dx is large, and computes what the reference computes (TF32:
   conv_entries_tma_staged.c). A file of its own: dx must outgrow three quarters of the GPU's L2,
   and the double reference takes tens of seconds. */
#include "conv_reach.h"

/* The fp16 TMA phases staged: 3x3 stride 2 with C = 256 in CONVOLUTION mode, K of one K tile;
   reached, then checked at beta 0 and 0.5. */
TEST(conv_cuda_fp16_phases_run_on_channels_last_copies)
{
    if (!conv_tensor_core_pass() || !on_hopper("TMA")) return;
    /* {name, nsp, n, c, k, groups, in, filt, pad, stride, dil, convolution} */
    const struct shape half = {"staged_phases_c256_fp16", 2, staged_batch(256, 128, 128, 2), 256, 64, 1, {128, 128}, {3, 3},
                               {1, 1}, {2, 2}, {1, 1}, true};
    const struct entry_case cases[] = {{&half, &tc_configs[3], "cuda:dgrad_igemm_tma_phases", NULL}};
    check_entries_blended(cases, 1, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}
