/* conv_igemm_tma_tf32.cu (emulation): the sm_90a TMA convolution kernel on fp32 data as TF32
   (entries cuda:{fwd,dgrad,wgrad}_igemm_tma_tf32_*, cuda:dgrad_igemm_tma_tf32_phases;
   src/cuda/conv_igemm_tma_sm90.cu with T float) on the CPU, through the same three parts as the
   fp16 and bf16 emulation (conv_igemm_tma.cu's comment; the machinery is conv_igemm_tma_run.h):
   1. the tensor maps of 32-channel K tiles (128-byte rows of fp32) through the TMA model, every
      element wgmma's tf32 descriptors read against the convolution's operands as they land:
      fp32 bits as they are where the TMA reads the user's tensor, rounded to tf32 where a
      workspace copy brought them (NCHW transposed, a filter packed, channels padded); where C
      is a multiple of 64, the stages byte for byte as the cp.async kernel's TF32 loaders write
      them;
   2. the ring on threads over the modelled mbarriers;
   3. the result of the emulated m64nNk8 tf32 wgmma, which keeps the tf32 part of each operand
      (truncation, as the tensor cores do: the kernel does not round what the TMA lands), against
      tests/ref's double-precision convolution: within the tests' TF32 tolerance (4e-2 relative)
      and each element within 2^-9 of the sum of its terms' magnitudes (tests/conv_fidelity.c's
      TF32 bound, what two operands cut to 10 mantissa bits can lose) plus the fp32 sum's
      rounding; each line prints the largest error as a share of that bound.
   Cases (both tiles): forward 3x3 with images across tiles, channel tails (C 36, 44: a K tile
   of 4 or 12 channels and the TMA's zeros), C 3 padded to 4 in the workspace (a 7x7 stride-2
   stem), stride 2 with unequal paddings, dilation 2 in CONVOLUTION mode with bias, ReLU and z,
   1x1 with a KCRS filter packed, NCHW data through the transposes, alpha and beta; backward
   data (unit stride) with K and C tails, dilation, a negative pad', CONVOLUTION mode, NCHW;
   strided backward data phase by phase (stride 2 and 3, the 1x1 downsampling layer with phases
   without taps, a dilated filter with a phase of negative padding, a K tail, NCHW); the filter
   gradient on NCHW data (its k32 form: both operands K-major in 32-byte-swizzled rows of 8
   pixels, rank-4 tiled loads, x through its shifted copies) on the 128x256, 256x128 and 64-row
   tiles: dy of 16x16, 10x12, 15x7, 14x14 and 12x9 pixels (rows of whole 16 bytes or padded to
   them by the copy), a channel tail, an M edge, CONVOLUTION mode, dilation, stride 2 with unequal paddings, a
   strided 1x1, a KRSC filter, alpha and beta, split-K; the same in its shape of 128-byte rows
   (one row of 32 pixels a K tile, the 128-byte swizzle) on rows of 28, 30, 31 and 40 pixels
   (padded to 32 or 64 by the TMA's zeros); and the plan declining the filter
   gradient on NHWC data, on a clustered tile, of a 1x1 filter over fewer than 8192 output
   pixels or a unit-stride one over images of 14x14 or more, of images of fewer than 100 output
   pixels, FMA math, strided backward data on the
   unit-stride entry, and channels that are not a multiple of 4; a grid of 6 tiles on 8
   multiprocessors declined by the wide 128x256 tile and served by the narrow 128x128 one
   (conv_igemm.cu's wave23). Clusters of 2 CTAs (the _c2_tf32 entries, B assembled
   from both CTAs' multicast halves): forward with 3 M tiles (the last pair's second past M) and
   an N edge, channel tails (C 36, 44), C 5 and the stem's C 3 padded in the workspace, stride 2
   with unequal paddings, bias, ReLU and z in CONVOLUTION mode, NCHW through the copies; backward
   data with K and C tails, CONVOLUTION mode, NCHW, dilation with a negative pad'; and the plan
   declining K 7, stride 2, the filter gradient (unclustered only), FMA math and a GPU where no
   cluster fits. The
   narrow tiles (128x128, 256x64, 128x64): forward with a 4-channel K tile and an M edge, ResNet's
   64 -> 64 on NCHW data with alpha and beta, stride 2 with a channel tail, an N edge, bias, ReLU
   and z in CONVOLUTION mode, the stem's C 3 padded to 4; backward data with a K tail and an N
   edge, CONVOLUTION mode on NCHW data, pad' = -1 with alpha and beta; strided backward data with
   C = 64 phase by phase on them; the plan declining FMA math and the filter gradient.
   Prints a line per case; exits 1 if any fails. */
#define OCD_SM90A
#include "cuda/conv_igemm.cu"
#include "cuda/conv_igemm_tma_sm90.cu"

#include "wgmma_emulate.h"
#include "conv_igemm_emulate.h"

extern "C" {
#include "ref/conv.h"
}

#include "conv_igemm_tma_run.h"

int main()
{
    emu_tma_switches();
    const cudnnDataType_t F = CUDNN_DATA_FLOAT;
    const bool D = true, W = true, PH = true, NCHW = true, FMA = true;
    const tma_case cases[] = {
        /* name, type, tile, n, c, k, h, w, r, s, pad_h, pad_w, stride, dil, flip, bias_relu, kcrs, alpha, beta, sms,
           declines, dgrad, wgrad, phases, nchw, fma */
        {"tf32 128x256 3x3 pad 1, 3 images across tiles, C 64 (2 K tiles a tap), 3 tiles on 2 CTAs", F, 0, 3, 64, 240, 10,
         11, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL},
        {"tf32 256x128 3x3 pad 1, C 36 (a 4-channel K tile), M and N edges, 4 tiles on 3 CTAs", F, 1, 3, 36, 240, 13, 13,
         3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 3, NULL},
        {"tf32 128x256 stride 2, pad (2, 1), C 44 (a channel tail), alpha beta", F, 0, 3, 44, 224, 17, 15, 3, 3, 2, 1, 2,
         1, false, false, false, 0.5, 0.75, 2, NULL},
        {"tf32 256x128 dilation 2, CONVOLUTION, bias ReLU z, 2 tiles on 1 CTA", F, 1, 2, 64, 128, 16, 14, 3, 3, 2, 2, 1,
         2, true, true, false, 1, 0.5, 1, NULL},
        {"tf32 128x256 1x1, C 20, KCRS filter packed (rounded)", F, 0, 2, 20, 256, 14, 13, 1, 1, 0, 0, 1, 1, false, false,
         true, 1, 0, 1, NULL},
        {"tf32 256x128 7x7 stride 2 pad 3 stem, C 3 padded to 4 in the workspace", F, 1, 1, 3, 128, 30, 27, 7, 7, 3, 3, 2,
         1, false, false, false, 1, 0, 1, NULL},
        {"tf32 128x256 NCHW 3x3 pad 1, C 64, KCRS filter, alpha beta (every operand through a copy)", F, 0, 2, 64, 256, 12,
         13, 3, 3, 1, 1, 1, 1, false, false, true, 0.5, 0.25, 1, NULL, false, false, false, NCHW},
        {"tf32 256x128 NCHW 5x5 pad 0, C 24, KRSC filter in place, 20-pixel images inside a tile", F, 1, 12, 24, 128, 9,
         8, 5, 5, 0, 0, 1, 1, false, false, false, 1, 0, 1, NULL, false, false, false, NCHW},
        {"tf32 128x256 3x3 pad 1, C 6 (odd: padded to 8 in the workspace)", F, 0, 2, 6, 256, 12, 12, 3, 3, 1, 1,
         1, 1, false, false, false, 1, 0, 1, NULL},
        {"tf32 128x256 6 tiles on 8 SMs decline (the wide TF32 tiles take a whole wave)", F, 0, 3, 64, 256, 16, 16, 3,
         3, 1, 1, 1, 1, false, false, false, 1, 0, 8, "too few tiles"},
        {"tf32 narrow 128x128 6 tiles on 8 SMs (two thirds of a wave or more) plan", F, 6, 3, 64, 128, 16, 16, 3, 3, 1,
         1, 1, 1, false, false, false, 1, 0, 8, NULL},
        {"tf32 fwd FMA math declines", F, 0, 2, 64, 256, 12, 12, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 1,
         "math type", false, false, false, false, FMA},
        /* backward data as a forward pass over dy */
        {"tf32 dgrad 128x256 3x3 pad 1, K 64, C 240, 3 tiles on 2 CTAs", F, 0, 3, 240, 64, 10, 11, 3, 3, 1, 1, 1, 1,
         false, false, false, 1, 0, 2, NULL, D},
        {"tf32 dgrad 256x128 5x5 pad 2, K 36 and C 100 (tails), alpha beta", F, 1, 3, 100, 36, 13, 13, 5, 5, 2, 2, 1, 1,
         false, false, false, 0.5, 0.75, 2, NULL, D},
        {"tf32 dgrad 128x256 3x3 dilation 2 pad 2, C 240, CONVOLUTION, NCHW, 4 tiles on 1 CTA", F, 0, 2, 240, 128, 16, 16,
         3, 3, 2, 2, 1, 2, true, false, false, 1, 0, 1, NULL, D, false, false, NCHW},
        {"tf32 dgrad 128x256 3x3 pad 3 (pad' -1), K 44", F, 0, 2, 256, 44, 8, 8, 3, 3, 3, 3, 1, 1, false, false, false,
         1, 0, 1, NULL, D},
        {"tf32 dgrad K 6 declines (not a multiple of 4)", F, 0, 2, 256, 6, 8, 8, 3, 3, 1, 1, 1, 1, false, false, false,
         1, 0, 1, "multiple of 8 (4 for fp32", D},
        {"tf32 dgrad stride 2 declines", F, 0, 2, 64, 64, 9, 9, 3, 3, 1, 1, 2, 1, false, false, false, 1, 0, 1, "_phases",
         D},
        /* the filter gradient on NCHW data (k32: pixels K-major, the 32-byte swizzle) */
        {"tf32 wgrad 128x256 NCHW 3x3 pad 1, C 64, K 128, 16x16, 3 images", F, 0, 3, 64, 128, 16, 16, 3, 3, 1, 1,
         1, 1, false, false, true, 1, 0, 2, NULL, false, W, false, NCHW},
        {"tf32 wgrad 256x128 NCHW 3x3 pad 1, 15x7 (rows padded to 8 by a copy), C 100 (a channel tail), K 200 (an M "
         "edge), CONVOLUTION, alpha beta", F, 1, 4, 100, 200, 15, 7, 3, 3, 1, 1, 1, 1, true, false, true, 0.5, 0.75, 8,
         NULL, false, W, false, NCHW},
        {"tf32 wgrad 3x3 over images of 7x7 declines (cuBLAS's GEMM)", F, 0, 4, 64, 128, 7, 7, 3, 3, 1, 1, 1, 1, false,
         false, true, 1, 0, 2, "fewer than 100 output pixels", false, W, false, NCHW},
        {"tf32 wgrad 64x256 NCHW 3x3 pad 1, 14x14 (rows padded), C 64, K 64, 8 images, split-K", F, 4, 8, 64, 64, 14, 14,
         3, 3, 1, 1, 1, 1, false, false, true, 1, 0, 16, NULL, false, W, false, NCHW},
        {"tf32 wgrad 64x64 NCHW 1x1, C 64, K 64, 10x12, 69 images (8280 pixels), alpha beta", F, 5, 69, 64, 64, 10, 12,
         1, 1, 0, 0, 1, 1, false, false, true, 0.5, 0.25, 2, NULL, false, W, false, NCHW},
        {"tf32 wgrad unit-stride 1x1 over 14x14 images declines (cuBLAS's GEMM)", F, 5, 48, 64, 64, 14, 14, 1, 1, 0, 0,
         1, 1, false, false, true, 1, 0, 2, "images of 196 pixels or more", false, W, false, NCHW},
        {"tf32 wgrad 1x1 over 8160 pixels declines (cuBLAS's GEMM)", F, 5, 68, 64, 64, 10, 12, 1, 1, 0, 0, 1, 1, false,
         false, true, 1, 0, 2, "fewer than 8192 pixels", false, W, false, NCHW},
        {"tf32 wgrad 64x256 NCHW 3x3 dilation 2 pad 2, 12x9 (rows padded to 12), C 64, K 64, KRSC filter", F, 4, 2, 64,
         64, 12, 9, 3, 3, 2, 2, 1, 2, false, false, false, 1, 0, 1, NULL, false, W, false, NCHW},
        {"tf32 wgrad NHWC declines (pixels not consecutive)", F, 0, 2, 64, 128, 16, 16, 3, 3, 1, 1, 1, 1, false, false,
         false, 1, 0, 1, "consecutive along rows", false, W},
        {"tf32 wgrad 128x256 NCHW 3x3 stride 2, pad (2, 1), 23x15 (13x8 out), C 64, K 128, CONVOLUTION", F, 0, 3, 64,
         128, 23, 15, 3, 3, 2, 1, 2, 1, true, false, true, 1, 0, 2, NULL, false, W, false, NCHW},
        {"tf32 wgrad 64x64 NCHW 1x1 stride 2, 14x14 (7x7 out), 168 images, C 64, K 64, beta", F, 5, 168, 64, 64, 14, 14,
         1, 1, 0, 0, 2, 1, false, false, true, 1, 0.5, 2, NULL, false, W, false, NCHW},
        {"tf32 wgrad 256x128 NCHW 1x1 stride 2, 16x16 (8x8 out; x's copy narrower than x), 128 images, C 128, K 256", F,
         1, 128, 128, 256, 16, 16, 1, 1, 0, 0, 2, 1, false, false, true, 1, 0, 1, NULL, false, W, false, NCHW},
        /* rows of 28 pixels or more: K tiles of one row of 32 pixels, 128-byte rows under the 128-byte swizzle */
        {"tf32 wgrad 128x256 NCHW 3x3 pad 1, 28x28 (a row of 32: 4 pixels of the TMA's zeros), C 64, K 128, 2 images",
         F, 0, 2, 64, 128, 28, 28, 3, 3, 1, 1, 1, 1, false, false, true, 1, 0, 2, NULL, false, W, false, NCHW},
        {"tf32 wgrad 256x128 NCHW 3x3 stride 2, pad (1, 2), 59x59 (30x31 out), C 100 (a channel tail), K 200 (an M "
         "edge), CONVOLUTION, alpha beta", F, 1, 2, 100, 200, 59, 59, 3, 3, 1, 2, 2, 1, true, false, true, 0.5, 0.75, 4,
         NULL, false, W, false, NCHW},
        {"tf32 wgrad 64x256 NCHW 3x3 dilation 2 pad 2, 12x40 (two K tiles a row, the second 8 pixels), C 64, K 64, KRSC "
         "filter, split-K", F, 4, 3, 64, 64, 12, 40, 3, 3, 2, 2, 1, 2, false, false, false, 1, 0, 16, NULL, false, W,
         false, NCHW},
        {"tf32 wgrad 64x64 NCHW 1x1 stride 2, 60x60 (30x30 out), 10 images, C 64, K 64, beta", F, 5, 10, 64, 64, 60, 60,
         1, 1, 0, 0, 2, 1, false, false, true, 1, 0.5, 2, NULL, false, W, false, NCHW},
        {"tf32 wgrad FMA math declines", F, 0, 2, 64, 128, 16, 16, 3, 3, 1, 1, 1, 1, false, false, true, 1, 0, 1,
         "math type", false, W, false, NCHW, FMA},
        /* strided backward data, phase by phase on the TMA kernel */
        {"tf32 phases 3x3 stride 2 pad 1, 22x21, C 256, K 64, dx zeroed", F, 0, 3, 256, 64, 22, 21, 3, 3, 1, 1, 2, 1,
         false, false, false, 1, 0, 2, NULL, D, false, PH},
        {"tf32 phases 1x1 stride 2 (3 phases without taps), C 256, K 128, NCHW, alpha beta", F, 0, 3, 256, 128, 22, 22,
         1, 1, 0, 0, 2, 1, false, false, false, 0.5, 0.75, 2, NULL, D, false, PH, NCHW},
        {"tf32 phases 3x3 stride 2 pad 1, 22x21, C 128 (the 256x128 tile), K 64, NCHW, beta", F, 1, 3, 128, 64, 22, 21, 3,
         3, 1, 1, 2, 1, false, false, false, 1, 0.5, 2, NULL, D, false, PH, NCHW},
        {"tf32 phases 5x5 stride 2 dilation 3 (a phase of padding -1), C 256, K 36 (a K tail)", F, 0, 3, 256, 36, 21, 21,
         5, 5, 0, 0, 2, 3, false, false, false, 1, 0, 2, NULL, D, false, PH},
        {"tf32 phases 3x3 stride 3 pad 2, C 128 (the 256x128 tile), K 64, CONVOLUTION, beta", F, 0, 5, 128, 64, 21, 21,
         3, 3, 2, 2, 3, 1, true, false, false, 1, 0.5, 1, NULL, D, false, PH},
        /* clusters of 2 CTAs along M (tiles 2, 3: the _c2_tf32 entries), half the filters' B box a
           CTA, multicast to both */
        {"tf32 c2 128x256 3x3 pad 1, C 36 (a 4-channel K tile), 3 M tiles (the last pair's second past M), K 240 (an N "
         "edge), one cluster walking 2 pairs", F, 2, 3, 36, 240, 10, 11, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2,
         NULL},
        {"tf32 c2 256x128 stride 2, pad (2, 1), C 44, K 224 (2 N tiles, an N edge), 1 M tile (padded to 2), alpha beta", F,
         3, 3, 44, 224, 17, 15, 3, 3, 2, 1, 2, 1, false, false, false, 0.5, 0.75, 2, NULL},
        {"tf32 c2 128x256 3x3 pad 1, C 5 (odd: padded to 8 in the workspace), bias ReLU z, CONVOLUTION", F, 2, 2, 5, 256,
         12, 12, 3, 3, 1, 1, 1, 1, true, true, false, 1, 0.5, 2, NULL},
        {"tf32 c2 256x128 7x7 stride 2 pad 3 stem, C 3 padded to 4, K 120 (an N edge)", F, 3, 1, 3, 120, 30, 27, 7, 7, 3, 3,
         2, 1, false, false, false, 1, 0, 1, NULL},
        {"tf32 c2 128x256 NCHW 3x3 pad 1, C 64, KCRS filter, alpha beta (every operand through a copy), 2 clusters", F, 2,
         3, 64, 256, 12, 13, 3, 3, 1, 1, 1, 1, false, false, true, 0.5, 0.25, 4, NULL, false, false, false, NCHW},
        {"tf32 c2 dgrad 128x256 3x3 pad 1, K 36 (a K tail), C 240, CONVOLUTION, 3 M tiles on 1 cluster", F, 2, 3, 240, 36,
         10, 11, 3, 3, 1, 1, 1, 1, true, false, false, 1, 0, 2, NULL, D},
        {"tf32 c2 dgrad 256x128 5x5 pad 2, K 44 and C 100 (tails), alpha beta, NCHW", F, 3, 3, 100, 44, 13, 13, 5, 5, 2, 2,
         1, 1, false, false, false, 0.5, 0.75, 2, NULL, D, false, false, NCHW},
        {"tf32 c2 dgrad 128x256 3x3 dilation 2 pad 5 (pad' -1), K 20, C 256", F, 2, 2, 256, 20, 14, 14, 3, 3, 5, 5, 1, 2,
         false, false, false, 1, 0, 2, NULL, D},
        {"tf32 c2 dgrad K 7 declines (not a multiple of 4)", F, 2, 2, 256, 7, 8, 8, 3, 3, 1, 1, 1, 1, false, false, false,
         1, 0, 2, "multiple of 8 (4 for fp32", D},
        {"tf32 c2 dgrad stride 2 declines", F, 3, 2, 64, 64, 9, 9, 3, 3, 1, 1, 2, 1, false, false, false, 1, 0, 2,
         "_phases", D},
        {"tf32 c2 wgrad declines (unclustered only)", F, 2, 2, 64, 128, 16, 16, 3, 3, 1, 1, 1, 1, false, false, true, 1,
         0, 2, "no TF32 kernel for the filter gradient", false, W, false, NCHW},
        {"tf32 c2 fwd FMA math declines", F, 2, 2, 64, 256, 12, 12, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2,
         "math type", false, false, false, false, FMA},
        {"tf32 c2 256x128 declines where no cluster fits", F, 3, 3, 44, 224, 17, 15, 3, 3, 2, 1, 2, 1, false, false, false,
         1, 0, 2, "no cluster of 2 CTAs", false, false, false, false, false, true},
        /* the narrow tiles (6: 128x128, 7: 256x64, 8: 128x64) */
        {"tf32 narrow 128x128 3x3 pad 1, C 36 (a 4-channel K tile), K 128, an M edge, 3 tiles on 2 CTAs", F, 6, 3, 36,
         128, 10, 11, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL},
        {"tf32 narrow 256x64 3x3 pad 1, C 64, K 64 (ResNet's 64-channel layer), NCHW, alpha beta", F, 7, 2, 64, 64, 20,
         20, 3, 3, 1, 1, 1, 1, false, false, false, 0.5, 0.75, 3, NULL, false, false, false, NCHW},
        {"tf32 narrow 128x64 stride 2, pad (2, 1), C 44, K 56 (an N edge), bias ReLU z, CONVOLUTION", F, 8, 3, 44, 56,
         17, 15, 3, 3, 2, 1, 2, 1, true, true, false, 1, 0.5, 2, NULL},
        {"tf32 narrow 128x64 7x7 stride 2 pad 3 stem, C 3 padded to 4", F, 8, 1, 3, 64, 30, 27, 7, 7, 3, 3, 2, 1, false,
         false, false, 1, 0, 1, NULL},
        {"tf32 narrow dgrad 128x128 5x5 pad 2, K 44 (a K tail), C 120 (an N edge)", F, 6, 3, 120, 44, 10, 11, 5, 5, 2, 2,
         1, 1, false, false, false, 1, 0, 2, NULL, D},
        {"tf32 narrow dgrad 256x64 3x3 pad 1, K 64, C 64, CONVOLUTION, NCHW", F, 7, 2, 64, 64, 20, 20, 3, 3, 1, 1, 1, 1,
         true, false, false, 1, 0, 3, NULL, D, false, false, NCHW},
        {"tf32 narrow dgrad 128x64 3x3 pad 3 (pad' -1), K 64, C 64, alpha beta", F, 8, 1, 64, 64, 25, 25, 3, 3, 3, 3, 1,
         1, false, false, false, 0.5, 0.75, 2, NULL, D},
        {"tf32 phases 3x3 stride 2 pad 1, C 64 (the narrow tiles), K 64", F, 0, 3, 64, 64, 21, 21, 3, 3, 1, 1, 2, 1,
         false, false, false, 1, 0, 2, NULL, D, false, PH},
        {"tf32 narrow 128x64 FMA math declines", F, 8, 1, 64, 64, 25, 25, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2,
         "math type", false, false, false, false, FMA},
        {"tf32 narrow 128x64 wgrad declines", F, 8, 2, 64, 64, 16, 16, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 1,
         "forward pass's and backward data's", false, W},
    };
    int failed = 0;
    for (const tma_case &e : cases) failed += !run_case<float>(e);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
