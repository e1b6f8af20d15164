/* conv_registry.c: the implementation tables of the convolution directions, the documented
   restrictions of each cuDNN algorithm, and the walker that picks an entry (see conv.h).

   Main decision: the documented per-algorithm restrictions of the cuDNN 8.2 API reference are
   enforced here, once, whatever the backend, so that an application sees the same
   NOT_SUPPORTED for WINOGRAD with a 5x5 filter on every backend; the tables then say honestly
   which algorithms a backend implements. The host backend implements the matrix-product family
   (IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM, GEMM, the backward ALGO_0/1/3) with its packed GEMM
   engine (forward GEMM through a CBLAS library where one was built in and wins) and DIRECT with
   plain loops (the CBLAS entry races the packed engine: ocd_conv_race_pair and Find's verdicts);
   the CUDA backend has tensor-core entries (cuBLAS GEMMs for 1x1 filters, implicit-GEMM kernels,
   im2col + cuBLAS GEMM) ahead of a direct reference kernel
   serving all of that family. WINOGRAD and WINOGRAD_NONFUSED (plan: problem/conv_winograd.h) are
   transforms around a batched GEMM on both backends. FFT and FFT_TILING (plan:
   problem/conv_fft.h) run on the host's built-in FFT engine and on cuFFT. */
#include "cnn/conv.h"

#include "core/dtype.h"
#include "core/reasons.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(a) (1u << (a))

/* ---- the tables ------------------------------------------------------------------------------- */

/* The entries whose stores take a backward data's ReLU gradient (struct ocd_conv_impl's
   relu_grad) are the host's direct and GEMM entries (ocd_host_conv_store), the CUDA implicit
   GEMM's unit-stride tiles (their typed epilogue) and the CUDA direct kernel. */
#define HOST_ENTRY(name_, algos_, run_, ws_)                                                   \
    {{name_, OCD_BACKEND_HOST, algos_, NULL, ws_, run_, NULL}, CUDNN_DETERMINISTIC, false, NULL, true}
/* A planned entry (core/impl.h): its hooks are fn_##_planned; GRAD_ENTRY one that takes the
   ReLU gradient. */
#define PLANNED_ENTRY_AS(name_, backend_, algos_, fn_, tc_, grad_)                              \
    {{name_, backend_, algos_, NULL, NULL, NULL, &fn_##_planned}, CUDNN_DETERMINISTIC, tc_, NULL, grad_},
#define PLANNED_ENTRY(name_, backend_, algos_, fn_, tc_) PLANNED_ENTRY_AS(name_, backend_, algos_, fn_, tc_, false)
#define GRAD_ENTRY(name_, backend_, algos_, fn_, tc_) PLANNED_ENTRY_AS(name_, backend_, algos_, fn_, tc_, true)
/* A GEMM strategy of the host (host/conv_gemm.c): implicit, precomp or explicit */
#define HOST_GEMM_ENTRY(name_, algos_, strategy_)                                               \
    GRAD_ENTRY(name_, OCD_BACKEND_HOST, algos_, ocd_host_conv_gemm_##strategy_, false)
/* A Winograd entry of the host (host/conv_winograd.c) */
#define HOST_WINO_ENTRY(name_, algo_, fn_) PLANNED_ENTRY("host:" name_, OCD_BACKEND_HOST, BIT(algo_), fn_, false)
/* FFT and FFT_TILING of a direction (host/conv_fft.c), listed after the GEMM family */
#define HOST_FFT_ENTRIES(dir_, fft_, tiling_)                                                  \
    PLANNED_ENTRY("host:" dir_ "_fft", OCD_BACKEND_HOST, BIT(fft_), ocd_host_conv_fft, false)   \
    PLANNED_ENTRY("host:" dir_ "_fft_tiling", OCD_BACKEND_HOST, BIT(tiling_), ocd_host_conv_fft_tiling, false)

#ifdef OCD_HAVE_CUDA
/* The tensor-core entries of the CUDA backend (cuda/conv_igemm.h), most specialised first: cuBLAS
   GEMMs where a 1x1 filter makes the activation the GEMM operand, the implicit-GEMM tiles (largest
   first; fp16/bf16, then TF32, then the int8 configurations), then im2col + cuBLAS GEMM for what the kernels decline (channel
   tails, odd layouts); the direct kernel stays last. Each _tc entry uses tensor cores (fp32 as
   TF32), so FMA_MATH skips it; its plain twin computes fp32 and double. The implicit GEMM serves
   the algorithms the cuDNN 8.2 guide lists as tensor-core ones (IMPLICIT_PRECOMP_GEMM, BWD_DATA
   ALGO_1, BWD_FILTER ALGO_1), and forward IMPLICIT_GEMM where it needs no workspace (the pick
   enforces that for every IMPLICIT_GEMM and backward ALGO_0 entry). */
#define CUDA_ENTRY(name_, algos_, applies_, ws_, run_, tc_)                                     \
    {{name_, OCD_BACKEND_CUDA, algos_, applies_, ws_, run_, NULL}, CUDNN_DETERMINISTIC, tc_, NULL, true},
#define CUBLAS_1X1_ENTRIES(dir_, algos_)                                                        \
    PLANNED_ENTRY("cuda:" dir_ "_gemm1x1_cublas_tc", OCD_BACKEND_CUDA, algos_,                   \
                  ocd_cuda_conv_gemm1x1_tc, true)                                               \
    PLANNED_ENTRY("cuda:" dir_ "_gemm1x1_cublas", OCD_BACKEND_CUDA, algos_, ocd_cuda_conv_gemm1x1, false)
#define CUBLAS_IM2COL_ENTRIES(dir_, algos_)                                                     \
    PLANNED_ENTRY("cuda:" dir_ "_im2col_gemm_cublas_tc", OCD_BACKEND_CUDA, algos_,               \
                  ocd_cuda_conv_im2col_gemm_tc, true)                                           \
    PLANNED_ENTRY("cuda:" dir_ "_im2col_gemm_cublas", OCD_BACKEND_CUDA, algos_,                  \
                  ocd_cuda_conv_im2col_gemm, false)
#define IGEMM_ENTRY(dir_, variant_, bk_, algos_, i, bm, bn, st)                                 \
    GRAD_ENTRY(OCD_IGEMM_NAME(dir_, #variant_, bk_, bm, bn, st), OCD_BACKEND_CUDA, algos_,         \
                  ocd_cuda_conv_igemm_##variant_##_##i, true)
/* A Winograd algorithm (problem/conv.h): the tensor-core flavour, then the fp32 one. The forward
   and backward-data WINOGRAD_NONFUSED tiles are 6x6, too wide for 10-bit operands: those have the
   fp32 entry alone. */
#define CUDA_WINO_FP32_ENTRY(name_, algo_, fn_) PLANNED_ENTRY("cuda:" name_, OCD_BACKEND_CUDA, BIT(algo_), fn_, false)
#define CUDA_WINO_ENTRIES(name_, algo_, fn_)                                                    \
    PLANNED_ENTRY("cuda:" name_ "_tc", OCD_BACKEND_CUDA, BIT(algo_), fn_##_tc, true)            \
    CUDA_WINO_FP32_ENTRY(name_, algo_, fn_)
#define CUDA_FFT_ENTRIES(dir_, fft_, tiling_)                                                  \
    PLANNED_ENTRY("cuda:" dir_ "_fft", OCD_BACKEND_CUDA, BIT(fft_), ocd_cuda_conv_fft, false)   \
    PLANNED_ENTRY("cuda:" dir_ "_fft_tiling", OCD_BACKEND_CUDA, BIT(tiling_),                   \
                  ocd_cuda_conv_fft_tiling, false)
#define FWD_GEMM_ALGOS (BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) | BIT(CUDNN_CONVOLUTION_FWD_ALGO_GEMM))
#define DGRAD_GEMM_ALGOS (BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_0) | BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1))
#define WGRAD_GEMM_ALGOS                                                                        \
    (BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0) | BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1) |      \
     BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3))
#define FWD_IGEMM_ALGOS (BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) | BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM))
/* The sm_90a kernel's entries (compute capability 9.0 only), ahead of the sm_80 kernel's. */
#define IGEMM_WGMMA_ENTRY(dir_, algos_, i, bm, bn, st)                                          \
    GRAD_ENTRY(OCD_IGEMM_NAME(dir_, "wgmma", 64, bm, bn, st), OCD_BACKEND_CUDA, algos_,            \
                  ocd_cuda_conv_igemm_wgmma_##i, true)
#define FWD_IGEMM_WGMMA(i, bm, bn, st) IGEMM_WGMMA_ENTRY("fwd", FWD_IGEMM_ALGOS, i, bm, bn, st)
/* The sm_90a TMA kernel's forward, (unit-stride) backward-data and filter-gradient entries, ahead
   of the cp.async kernel's for what they serve: variant tma, then tma_c2 (clusters of 2 CTAs
   sharing the B tile through multicast), after the others until a GPU run has measured which
   serves better; then tma_tf32 (fp32 data as TF32, a K tile of 32 channels; forward and backward
   data) and tma_c2_tf32 (the same on clusters); the filter gradient's 64-row tile (cuda:wgrad_igemm_tma_64x*) last, for what the larger
   tiles leave. The narrow forward and backward-data tiles (OCD_IGEMM_TMA_NARROW_TILES: 128x128,
   256x64, 128x64; tma, and tma_tf32 for fp32 data) follow the clustered ones of their type: they take what the wide tiles decline (64 columns,
   or too few tiles to fill the GPU), which no cp.async tile of a wide shape takes either
   (conv_igemm.cu's tile_rejects), most L2 bytes a flop last (conv_igemm_tma_sm90.cu). */
#define IGEMM_TMA_ENTRY(dir_, variant_, bk_, algos_, i, bm, bn, st)                             \
    GRAD_ENTRY(OCD_IGEMM_NAME(dir_, #variant_, bk_, bm, bn, st), OCD_BACKEND_CUDA, algos_,         \
                  ocd_cuda_conv_igemm_##variant_##_##i, true)
#define FWD_IGEMM_TMA(i, bm, bn, st) IGEMM_TMA_ENTRY("fwd", tma, 64, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define FWD_IGEMM_TMA_C2(i, bm, bn, st) IGEMM_TMA_ENTRY("fwd", tma_c2, 64, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define FWD_IGEMM_TMA_TF32(i, bm, bn, st) IGEMM_TMA_ENTRY("fwd", tma_tf32, 32, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define FWD_IGEMM_TMA_C2_TF32(i, bm, bn, st) IGEMM_TMA_ENTRY("fwd", tma_c2_tf32, 32, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define IGEMM_TMA_NARROW_ENTRY(dir_, variant_, bk_, fn_, algos_, i, bm, bn, st)                  \
    GRAD_ENTRY(OCD_IGEMM_NAME(dir_, variant_, bk_, bm, bn, st), OCD_BACKEND_CUDA, algos_,          \
                  ocd_cuda_conv_igemm_tma_##fn_##_##i, true)
#define FWD_IGEMM_TMA_NARROW(i, bm, bn, st)                                                     \
    IGEMM_TMA_NARROW_ENTRY("fwd", "tma", 64, narrow, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define FWD_IGEMM_TMA_NARROW_TF32(i, bm, bn, st)                                                \
    IGEMM_TMA_NARROW_ENTRY("fwd", "tma_tf32", 32, narrow_tf32, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define DGRAD_IGEMM_TMA_NARROW(i, bm, bn, st)                                                   \
    IGEMM_TMA_NARROW_ENTRY("dgrad", "tma", 64, narrow, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define DGRAD_IGEMM_TMA_NARROW_TF32(i, bm, bn, st)                                              \
    IGEMM_TMA_NARROW_ENTRY("dgrad", "tma_tf32", 32, narrow_tf32, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define DGRAD_IGEMM_TMA(i, bm, bn, st)                                                          \
    IGEMM_TMA_ENTRY("dgrad", tma, 64, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define DGRAD_IGEMM_TMA_C2(i, bm, bn, st)                                                       \
    IGEMM_TMA_ENTRY("dgrad", tma_c2, 64, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define DGRAD_IGEMM_TMA_TF32(i, bm, bn, st)                                                     \
    IGEMM_TMA_ENTRY("dgrad", tma_tf32, 32, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define DGRAD_IGEMM_TMA_C2_TF32(i, bm, bn, st)                                                  \
    IGEMM_TMA_ENTRY("dgrad", tma_c2_tf32, 32, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define DGRAD_IGEMM_WGMMA(i, bm, bn, st)                                                        \
    IGEMM_WGMMA_ENTRY("dgrad", BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define WGRAD_IGEMM_WGMMA(i, bm, bn, st)                                                        \
    IGEMM_WGMMA_ENTRY("wgrad", BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), i, bm, bn, st)
#define WGRAD_IGEMM_TMA(i, bm, bn, st)                                                          \
    IGEMM_TMA_ENTRY("wgrad", tma, 64, BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), i, bm, bn, st)
#define WGRAD_IGEMM_TMA_C2(i, bm, bn, st)                                                       \
    IGEMM_TMA_ENTRY("wgrad", tma_c2, 64, BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), i, bm, bn, st)
#define WGRAD_IGEMM_TMA_W64(i, bm, bn, st)                                                      \
    PLANNED_ENTRY(OCD_IGEMM_NAME("wgrad", "tma", 64, bm, bn, st), OCD_BACKEND_CUDA,             \
                  BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), ocd_cuda_conv_igemm_tma_w64_##i, true)
#define WGRAD_IGEMM_TMA_TF32(i, bm, bn, st)                                                     \
    IGEMM_TMA_ENTRY("wgrad", tma_tf32, 32, BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), i, bm, bn, st)
#define WGRAD_IGEMM_TMA_W64_TF32(i, bm, bn, st)                                                 \
    PLANNED_ENTRY(OCD_IGEMM_NAME("wgrad", "tma_tf32", 32, bm, bn, st), OCD_BACKEND_CUDA,        \
                  BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), ocd_cuda_conv_igemm_tma_w64_tf32_##i, true)
#define FWD_IGEMM_TC(i, bm, bn, wm, wn, st) IGEMM_ENTRY("fwd", tc, 32, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define FWD_IGEMM_TF32(i, bm, bn, wm, wn, st) IGEMM_ENTRY("fwd", tf32, 16, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define FWD_IGEMM_INT8(i, bm, bn, wm, wn, st) IGEMM_ENTRY("fwd", int8, 64, FWD_IGEMM_ALGOS, i, bm, bn, st)
#define DGRAD_IGEMM_TC(i, bm, bn, wm, wn, st)                                                   \
    IGEMM_ENTRY("dgrad", tc, 32, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define DGRAD_IGEMM_TF32(i, bm, bn, wm, wn, st)                                                 \
    IGEMM_ENTRY("dgrad", tf32, 16, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), i, bm, bn, st)
#define WGRAD_IGEMM_TC(i, bm, bn, wm, wn, st)                                                   \
    IGEMM_ENTRY("wgrad", tc, 32, BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), i, bm, bn, st)
#endif

static const struct ocd_conv_impl fwd_impls[] = {
#ifdef OCD_HAVE_CBLAS
    /* first, racing the packed engine: where it wins (a measurement, see conv_cblas.c) the
       heuristic offers GEMM first; where it loses, GEMM goes to host:fwd_gemm */
    {{"host:fwd_gemm_cblas", OCD_BACKEND_HOST, BIT(CUDNN_CONVOLUTION_FWD_ALGO_GEMM), NULL, NULL, NULL,
      &ocd_host_conv_cblas_planned},
     CUDNN_DETERMINISTIC, false, ocd_host_conv_cblas_race, false},
#endif
    HOST_GEMM_ENTRY("host:fwd_implicit_precomp_gemm", BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM), precomp)
    HOST_GEMM_ENTRY("host:fwd_implicit_gemm", BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM), implicit)
    HOST_GEMM_ENTRY("host:fwd_gemm", BIT(CUDNN_CONVOLUTION_FWD_ALGO_GEMM), explicit)
    HOST_WINO_ENTRY("fwd_winograd", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, ocd_host_conv_winograd)
    HOST_WINO_ENTRY("fwd_winograd_nonfused", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, ocd_host_conv_winograd_nonfused)
    HOST_FFT_ENTRIES("fwd", CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING)
    HOST_ENTRY("host:fwd_direct",
               BIT(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT) | BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) |
                   BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) | BIT(CUDNN_CONVOLUTION_FWD_ALGO_GEMM),
               ocd_host_conv_direct, NULL),
#ifdef OCD_HAVE_CUDA
    CUBLAS_1X1_ENTRIES("fwd", BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) | FWD_GEMM_ALGOS)
    /* few channels (RGB first layers): K = C R S packed, ahead of the channel-padded GEMM */
    PLANNED_ENTRY("cuda:fwd_stem_tc_128x64", OCD_BACKEND_CUDA, FWD_IGEMM_ALGOS, ocd_cuda_conv_stem_fwd, true)
    OCD_IGEMM_TMA_TILES(FWD_IGEMM_TMA)
    OCD_IGEMM_TMA_C2_TILES(FWD_IGEMM_TMA_C2)
    OCD_IGEMM_TMA_NARROW_TILES(FWD_IGEMM_TMA_NARROW)
    OCD_IGEMM_TMA_TILES(FWD_IGEMM_TMA_TF32)
    OCD_IGEMM_TMA_C2_TILES(FWD_IGEMM_TMA_C2_TF32)
    OCD_IGEMM_TMA_NARROW_TILES(FWD_IGEMM_TMA_NARROW_TF32)
    OCD_IGEMM_WGMMA_TILES(FWD_IGEMM_WGMMA)
    OCD_IGEMM_TILES(FWD_IGEMM_TC)
    OCD_IGEMM_TILES(FWD_IGEMM_TF32)
    OCD_IGEMM_TILES(FWD_IGEMM_INT8)
    CUBLAS_IM2COL_ENTRIES("fwd", FWD_GEMM_ALGOS)
    CUDA_WINO_ENTRIES("fwd_winograd", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, ocd_cuda_conv_winograd)
    CUDA_WINO_FP32_ENTRY("fwd_winograd_nonfused", CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
                         ocd_cuda_conv_winograd_nonfused)
    CUDA_FFT_ENTRIES("fwd", CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING)
    /* any layout without workspace (IMPLICIT_GEMM where the entries above need some) */
    PLANNED_ENTRY("cuda:fwd_igemm_gather_64x128x16_s3", OCD_BACKEND_CUDA, FWD_IGEMM_ALGOS, ocd_cuda_conv_gather, true)
    CUDA_ENTRY("cuda:fwd_direct",
               BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) | BIT(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) |
                   BIT(CUDNN_CONVOLUTION_FWD_ALGO_GEMM) | BIT(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT),
               NULL, NULL, ocd_cuda_conv_direct, false)
#endif
};

static const struct ocd_conv_impl bwd_data_impls[] = {
    HOST_GEMM_ENTRY("host:dgrad_implicit_precomp_gemm", BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1), precomp)
    HOST_GEMM_ENTRY("host:dgrad_implicit_gemm", BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_0), implicit)
    HOST_WINO_ENTRY("dgrad_winograd", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, ocd_host_conv_winograd)
    HOST_WINO_ENTRY("dgrad_winograd_nonfused", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED,
                    ocd_host_conv_winograd_nonfused)
    HOST_FFT_ENTRIES("dgrad", CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING)
    HOST_ENTRY("host:dgrad_direct", BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_0) | BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1),
               ocd_host_conv_direct, NULL),
#ifdef OCD_HAVE_CUDA
    CUBLAS_1X1_ENTRIES("dgrad", DGRAD_GEMM_ALGOS)
    /* C < 8 (RGB first layers): one 8-wide tile of channels, ahead of the 64-wide GEMM tiles */
    PLANNED_ENTRY("cuda:dgrad_stem_tc_128x8", OCD_BACKEND_CUDA, DGRAD_GEMM_ALGOS, ocd_cuda_conv_stem_dgrad, true)
    /* strided 1x1 without padding (downsampling): one cuBLAS GEMM and a pass over dx, ahead of
       the phases, which zero dx and write one phase over it */
    PLANNED_ENTRY("cuda:dgrad_gemm1x1_strided_cublas_tc", OCD_BACKEND_CUDA, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1),
                  ocd_cuda_conv_dgrad_1x1s, true)
    /* strided: every phase on the TMA kernel, ahead of the phases on the cp.async kernels */
    PLANNED_ENTRY("cuda:dgrad_igemm_tma_phases", OCD_BACKEND_CUDA, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1),
                  ocd_cuda_conv_igemm_phases_tma, true)
    PLANNED_ENTRY("cuda:dgrad_igemm_tma_tf32_phases", OCD_BACKEND_CUDA, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1),
                  ocd_cuda_conv_igemm_phases_tma_tf32, true)
    PLANNED_ENTRY("cuda:dgrad_igemm_tc_phases", OCD_BACKEND_CUDA, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1),
                  ocd_cuda_conv_igemm_phases_tc, true)
    PLANNED_ENTRY("cuda:dgrad_igemm_tf32_phases", OCD_BACKEND_CUDA, BIT(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1),
                  ocd_cuda_conv_igemm_phases_tf32, true)
    OCD_IGEMM_TMA_TILES(DGRAD_IGEMM_TMA)
    OCD_IGEMM_TMA_C2_TILES(DGRAD_IGEMM_TMA_C2)
    OCD_IGEMM_TMA_NARROW_TILES(DGRAD_IGEMM_TMA_NARROW)
    OCD_IGEMM_TMA_TILES(DGRAD_IGEMM_TMA_TF32)
    OCD_IGEMM_TMA_C2_TILES(DGRAD_IGEMM_TMA_C2_TF32)
    OCD_IGEMM_TMA_NARROW_TILES(DGRAD_IGEMM_TMA_NARROW_TF32)
    OCD_IGEMM_WGMMA_TILES(DGRAD_IGEMM_WGMMA)
    OCD_IGEMM_TILES(DGRAD_IGEMM_TC)
    OCD_IGEMM_TILES(DGRAD_IGEMM_TF32)
    CUBLAS_IM2COL_ENTRIES("dgrad", DGRAD_GEMM_ALGOS)
    CUDA_WINO_ENTRIES("dgrad_winograd", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, ocd_cuda_conv_winograd)
    CUDA_WINO_FP32_ENTRY("dgrad_winograd_nonfused", CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED,
                         ocd_cuda_conv_winograd_nonfused)
    CUDA_FFT_ENTRIES("dgrad", CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING)
    /* any layout without workspace (ALGO_0 where the entries above need some) */
    PLANNED_ENTRY("cuda:dgrad_igemm_gather_64x128x16_s3", OCD_BACKEND_CUDA, DGRAD_GEMM_ALGOS, ocd_cuda_conv_gather, true)
    CUDA_ENTRY("cuda:dgrad_direct", DGRAD_GEMM_ALGOS, NULL, NULL, ocd_cuda_conv_direct, false)
#endif
};

static const struct ocd_conv_impl bwd_filter_impls[] = {
    HOST_GEMM_ENTRY("host:wgrad_gemm", BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), explicit)
    /* strided, few channels: the input re-laid space-to-depth (conv_s2d.c), for a pinned engine */
    PLANNED_ENTRY("host:wgrad_s2d", OCD_BACKEND_HOST, BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), ocd_conv_s2d_wgrad,
                  false)
    HOST_GEMM_ENTRY("host:wgrad_implicit_precomp_gemm", BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3), precomp)
    HOST_GEMM_ENTRY("host:wgrad_implicit_gemm", BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0), implicit)
    HOST_WINO_ENTRY("wgrad_winograd_nonfused", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED,
                    ocd_host_conv_winograd_nonfused)
    HOST_FFT_ENTRIES("wgrad", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING)
    HOST_ENTRY("host:wgrad_direct",
               BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0) | BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1) |
                   BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3),
               ocd_host_conv_direct, NULL),
#ifdef OCD_HAVE_CUDA
    /* float NCHW as TF32 on the TMA kernel, both operands K-major as they lie (its k32 form) */
    OCD_IGEMM_TMA_TILES(WGRAD_IGEMM_TMA_TF32)
    OCD_IGEMM_TMA_W64_TILES(WGRAD_IGEMM_TMA_W64_TF32)
    /* float and double NCHW as a cuBLAS GEMM per image, where the images have pixels enough */
    PLANNED_ENTRY("cuda:wgrad_nchw_gemm_cublas_tc", OCD_BACKEND_CUDA, WGRAD_GEMM_ALGOS, ocd_cuda_conv_nchw_wgrad_gemm_tc,
                  true)
    PLANNED_ENTRY("cuda:wgrad_nchw_gemm_cublas", OCD_BACKEND_CUDA, WGRAD_GEMM_ALGOS, ocd_cuda_conv_nchw_wgrad_gemm, false)
    /* float NCHW as TF32, both operands gathered K-major: ahead of cuBLAS on a column matrix */
    PLANNED_ENTRY("cuda:wgrad_nchw_tf32_64x128x16_s3", OCD_BACKEND_CUDA, BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1),
                  ocd_cuda_conv_wgrad_tf32, true)
    CUBLAS_1X1_ENTRIES("wgrad", WGRAD_GEMM_ALGOS)
    /* few channels (RGB first layers): with a stride, the input re-laid space-to-depth for the
       implicit GEMM (conv_s2d.c); else N = C R S packed, ahead of the channel-padded GEMMs */
    PLANNED_ENTRY("cuda:wgrad_s2d", OCD_BACKEND_CUDA, BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1), ocd_conv_s2d_wgrad, true)
    PLANNED_ENTRY("cuda:wgrad_stem_tc_64x256", OCD_BACKEND_CUDA, BIT(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1),
                  ocd_cuda_conv_stem_wgrad, true)
    OCD_IGEMM_TMA_TILES(WGRAD_IGEMM_TMA)
    OCD_IGEMM_TMA_C2_TILES(WGRAD_IGEMM_TMA_C2)
    OCD_IGEMM_TMA_W64_TILES(WGRAD_IGEMM_TMA_W64)
    OCD_IGEMM_WGMMA_TILES(WGRAD_IGEMM_WGMMA)
    OCD_IGEMM_TILES(WGRAD_IGEMM_TC)
    CUBLAS_IM2COL_ENTRIES("wgrad", WGRAD_GEMM_ALGOS)
    CUDA_WINO_ENTRIES("wgrad_winograd_nonfused", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED,
                      ocd_cuda_conv_winograd_nonfused)
    CUDA_FFT_ENTRIES("wgrad", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING)
    /* any layout without workspace (ALGO_0 where the entries above need some) */
    PLANNED_ENTRY("cuda:wgrad_igemm_gather_64x128x16_s3", OCD_BACKEND_CUDA, WGRAD_GEMM_ALGOS, ocd_cuda_conv_gather, true)
    CUDA_ENTRY("cuda:wgrad_direct", WGRAD_GEMM_ALGOS, NULL, NULL, ocd_cuda_conv_direct, false)
#endif
};

static const struct ocd_conv_table tables[OCD_CONV_DIRS] = {
    {fwd_impls, OCD_ARRAY_LEN(fwd_impls)},
    {bwd_data_impls, OCD_ARRAY_LEN(bwd_data_impls)},
    {bwd_filter_impls, OCD_ARRAY_LEN(bwd_filter_impls)},
};

const struct ocd_impl ocd_conv_im2col_impls[] = {
    OCD_IMPL_ENTRY("host:im2col", OCD_BACKEND_HOST, NULL, NULL, ocd_host_conv_im2col),
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:im2col", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_conv_im2col),
#endif
};
const size_t ocd_conv_im2col_impl_count = OCD_ARRAY_LEN(ocd_conv_im2col_impls);

const struct ocd_impl ocd_conv_bias_grad_impls[] = {
    OCD_IMPL_ENTRY("host:bias_grad", OCD_BACKEND_HOST, NULL, NULL, ocd_host_conv_bias_grad),
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:bias_grad", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_conv_bias_grad),
#endif
};
const size_t ocd_conv_bias_grad_impl_count = OCD_ARRAY_LEN(ocd_conv_bias_grad_impls);

const struct ocd_conv_table *ocd_conv_table(enum ocd_conv_dir dir)
{
    return &tables[dir];
}

struct ocd_impl_table ocd_conv_impl_table(enum ocd_conv_dir dir)
{
    return (struct ocd_impl_table){tables[dir].impls, tables[dir].count, sizeof *tables[dir].impls};
}

int ocd_conv_algo_count(enum ocd_conv_dir dir)
{
    static const int counts[OCD_CONV_DIRS] = {CUDNN_CONVOLUTION_FWD_ALGO_COUNT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT};
    return counts[dir];
}

const char *ocd_conv_algo_name(enum ocd_conv_dir dir, int algo)
{
    static const char *const fwd[] = {"FWD_ALGO_IMPLICIT_GEMM", "FWD_ALGO_IMPLICIT_PRECOMP_GEMM", "FWD_ALGO_GEMM",
                                      "FWD_ALGO_DIRECT", "FWD_ALGO_FFT", "FWD_ALGO_FFT_TILING",
                                      "FWD_ALGO_WINOGRAD", "FWD_ALGO_WINOGRAD_NONFUSED"};
    static const char *const bwd_data[] = {"BWD_DATA_ALGO_0", "BWD_DATA_ALGO_1", "BWD_DATA_ALGO_FFT",
                                           "BWD_DATA_ALGO_FFT_TILING", "BWD_DATA_ALGO_WINOGRAD",
                                           "BWD_DATA_ALGO_WINOGRAD_NONFUSED"};
    static const char *const bwd_filter[] = {"BWD_FILTER_ALGO_0", "BWD_FILTER_ALGO_1", "BWD_FILTER_ALGO_FFT",
                                             "BWD_FILTER_ALGO_3", "BWD_FILTER_ALGO_WINOGRAD",
                                             "BWD_FILTER_ALGO_WINOGRAD_NONFUSED", "BWD_FILTER_ALGO_FFT_TILING"};
    if (algo < 0 || algo >= ocd_conv_algo_count(dir)) return "invalid algorithm";
    return dir == OCD_CONV_FWD ? fwd[algo] : dir == OCD_CONV_BWD_DATA ? bwd_data[algo] : bwd_filter[algo];
}

/* ---- documented restrictions (cuDNN 8.2 API reference, the support tables of
        cudnnConvolutionForward, cudnnConvolutionBackwardData and cudnnConvolutionBackwardFilter) -- */

static bool unit_dilation(const struct ocd_conv_shape *s)
{
    for (int d = 0; d < s->nsp; d++)
        if (s->dilation[d] != 1) return false;
    return true;
}

static bool filter_larger_than_pad(const struct ocd_conv_shape *s)
{
    for (int d = 0; d < s->nsp; d++)
        if (s->filt[d] <= s->pad[d]) return false;
    return true;
}

static bool filter_is(const struct ocd_conv_shape *s, int r)
{
    return s->nsp == 2 && s->filt[0] == r && s->filt[1] == r;
}

/* TRUE_HALF_CONFIG: half data computed in half. */
static bool true_half(const struct ocd_conv_problem *p)
{
    return p->x.dtype == CUDNN_DATA_HALF && p->compute == CUDNN_DATA_HALF;
}

/* PSEUDO_HALF_CONFIG or FLOAT_CONFIG: what the FFT and Winograd algorithms take. */
static bool half_or_float(const struct ocd_conv_problem *p)
{
    return (p->x.dtype == CUDNN_DATA_HALF && p->compute == CUDNN_DATA_FLOAT) || p->x.dtype == CUDNN_DATA_FLOAT;
}

/* The FFT family: 2-D (FFT_TILING also 3-D), unit stride and dilation, filter larger than the
   padding; FFT needs padded inputs of at most 256, FFT_TILING filters of at most 32 (16 in 3-D);
   DOUBLE only for FFT_TILING when a 1-D transform does (a filter dim of 1). */
static const char *fft_rejects(const struct ocd_conv_problem *p, bool tiling)
{
    const struct ocd_conv_shape *s = &p->s;
    if (!ocd_conv_unit_stride(s) || !unit_dilation(s)) return "FFT algorithms need unit strides and dilations";
    if (!filter_larger_than_pad(s)) return "FFT algorithms need filters larger than the padding";
    if (!tiling && s->nsp != 2) return "FFT handles 2-D convolutions only";
    bool double_1d = p->x.dtype == CUDNN_DATA_DOUBLE && tiling && (s->filt[s->nsp - 2] == 1 || s->filt[s->nsp - 1] == 1);
    if (!half_or_float(p) && !double_1d) return "no FFT configuration for these data types";
    for (int d = 0; d < s->nsp; d++) {
        if (!tiling && s->in[d] + 2 * s->pad[d] > 256) return "FFT needs padded inputs of at most 256";
        if (tiling && s->filt[d] > (s->nsp == 2 ? 32 : 16)) return "FFT_TILING needs smaller filters";
    }
    return NULL;
}

/* WINOGRAD: 3x3, PSEUDO_HALF or FLOAT; WINOGRAD_NONFUSED: 3x3 or 5x5, also TRUE_HALF but not 5x5.
   Both 2-D with unit strides and dilations. */
static const char *winograd_rejects(const struct ocd_conv_problem *p, bool nonfused)
{
    const struct ocd_conv_shape *s = &p->s;
    if (s->nsp != 2 || !ocd_conv_unit_stride(s) || !unit_dilation(s))
        return "Winograd algorithms need 2-D convolutions with unit strides and dilations";
    if (!nonfused) return filter_is(s, 3) && half_or_float(p) ? NULL : "WINOGRAD needs 3x3 filters and half or float data";
    if (!filter_is(s, 3) && !filter_is(s, 5)) return "WINOGRAD_NONFUSED needs 3x3 or 5x5 filters";
    if (!half_or_float(p) && !(true_half(p) && filter_is(s, 3)))
        return "no WINOGRAD_NONFUSED configuration for these data types and filter";
    return NULL;
}

static const char *fwd_rejects(const struct ocd_conv_problem *p, int algo)
{
    const struct ocd_conv_shape *s = &p->s;
    bool int8 = ocd_dtype_scalar(p->x.dtype) == CUDNN_DATA_INT8 || ocd_dtype_scalar(p->x.dtype) == CUDNN_DATA_UINT8;
    if (int8) {
        if (algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
            return "int8 configurations run IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM only";
        if (!unit_dilation(s)) return "int8 configurations need unit dilations";
        if (s->nsp != 2) return "int8 configurations are 2-D only";
        if (p->x.dtype == CUDNN_DATA_INT8x32 && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
            return "INT8x32 runs IMPLICIT_PRECOMP_GEMM only";
        return NULL;
    }
    switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return NULL;
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
        if (!unit_dilation(s)) return "GEMM needs unit dilations";
        if (true_half(p)) return "GEMM has no TRUE_HALF configuration";
        if (s->nsp != 2 && p->x.dtype == CUDNN_DATA_HALF) return "GEMM is 2-D only for half data";
        return NULL;
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return fft_rejects(p, false);
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return fft_rejects(p, true);
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return winograd_rejects(p, false);
    default: return winograd_rejects(p, true);
    }
}

static const char *bwd_data_rejects(const struct ocd_conv_problem *p, int algo)
{
    const struct ocd_conv_shape *s = &p->s;
    switch (algo) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return NULL;
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1:
        return s->nsp == 3 && !unit_dilation(s) ? "3-D ALGO_1 needs unit dilations" : NULL;
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return fft_rejects(p, false);
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return fft_rejects(p, true);
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return winograd_rejects(p, false);
    default: return winograd_rejects(p, true);
    }
}

static const char *bwd_filter_rejects(const struct ocd_conv_problem *p, int algo)
{
    const struct ocd_conv_shape *s = &p->s;
    switch (algo) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return true_half(p) ? "ALGO_0 has no TRUE_HALF configuration" : NULL;
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return NULL;
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3:
        if (!unit_dilation(s)) return "ALGO_3 needs unit dilations";
        return true_half(p) || p->x.dtype == CUDNN_DATA_BFLOAT16 ? "no ALGO_3 configuration for these data types" : NULL;
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return fft_rejects(p, false);
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: return "BWD_FILTER_ALGO_WINOGRAD is not implemented by cuDNN";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return winograd_rejects(p, true);
    default:
        /* FFT_TILING of the filter gradient is 1-D: an input height or width of 1, the other <= 256 */
        if (s->nsp != 2 || (s->in[0] != 1 && s->in[1] != 1) || s->in[0] > 256 || s->in[1] > 256)
            return "BWD_FILTER_ALGO_FFT_TILING handles 1-D problems (height or width 1, at most 256) only";
        return fft_rejects(p, true);
    }
}

const char *ocd_conv_algo_rejects(const struct ocd_conv_problem *p, int algo)
{
    return p->dir == OCD_CONV_FWD ? fwd_rejects(p, algo)
           : p->dir == OCD_CONV_BWD_DATA ? bwd_data_rejects(p, algo)
                                         : bwd_filter_rejects(p, algo);
}

/* ---- the heuristic's exception to table order ---------------------------------------------------- */

/* On CUDA, float NCHW 3x3 convolutions of unit stride and dilation with at least 64 channels
   each way run faster as fused WINOGRAD (tensor cores, TF32) than on the implicit GEMMs of the
   table before compute capability 9.0, and on it where the images are small; elsewhere the
   TF32 TMA kernel that leads the table is faster (an H100, ResNet-50's stride-1 3x3 layers,
   bench conv_algo suite and batch 256: forward 56x56 0.19 against 0.34 ms, 28x28 0.17 / 0.19,
   14x14 0.107 / 0.109, but 7x7 0.151 / 0.095; backward data at batch 64, 56x56 0.161 against
   0.339, 28x28 0.166 / 0.186, but 14x14 0.123 / 0.111 and 7x7 0.120 / 0.099). The filter gradient
   keeps table order (its Winograd runs
   in fp32, not TF32). Half and bfloat16 data stay on the tensor-core GEMM (faster there), and
   the host backend on its GEMM engine (its Winograd is slower than im2col + GEMM). */
#define WINOGRAD_FWD_PIXELS 100     /* on compute capability 9.0, forward: below this many output pixels an image */
#define WINOGRAD_DGRAD_PIXELS 512   /* on compute capability 9.0, backward data: below this many pixels of dy */
int ocd_conv_heuristic_first(cudnnHandle_t handle, const struct ocd_conv_problem *p)
{
    const struct ocd_conv_shape *s = &p->s;
    bool nchw = p->w_format == CUDNN_TENSOR_NCHW && p->x.strides[p->x.rank - 1] == 1 &&
                p->x.strides[1] >= p->x.strides[2];
    if (handle->backend->kind != OCD_BACKEND_CUDA || p->dir == OCD_CONV_BWD_FILTER || p->x.dtype != CUDNN_DATA_FLOAT ||
        !nchw || s->nsp != 2 || !filter_is(s, 3) || !ocd_conv_unit_stride(s) || !unit_dilation(s) || s->groups != 1 ||
        s->c < 64 || s->k < 64)
        return -1;
    const int64_t pixels = s->out[0] * s->out[1];
    if (handle->cc_major == 9 && pixels >= (p->dir == OCD_CONV_FWD ? WINOGRAD_FWD_PIXELS : WINOGRAD_DGRAD_PIXELS))
        return -1;
    return p->dir == OCD_CONV_FWD ? CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD : CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD;
}

/* ---- the walker -------------------------------------------------------------------------------- */

const char *ocd_conv_tensor_ops_rejects(const struct ocd_conv_problem *p)
{
    return ocd_tensor_math_rejects(p->math, p->x.dtype);
}

cudnnMathType_t ocd_conv_reported_math(const struct ocd_conv_impl *impl, const struct ocd_conv_problem *p)
{
    if (impl->tensor_ops) return p->math == CUDNN_DEFAULT_MATH ? CUDNN_TENSOR_OP_MATH : p->math;
    return p->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
}

const char *ocd_conv_entry_row_rejects(const struct ocd_conv_impl *e, const struct ocd_conv_problem *p)
{
    if (p->relu_grad && !e->relu_grad) return "its stores do not take a ReLU gradient";
    return e->tensor_ops ? ocd_conv_tensor_ops_rejects(p) : NULL;
}

size_t ocd_conv_impl_workspace(cudnnHandle_t handle, const struct ocd_conv_impl *impl,
                               const struct ocd_conv_problem *p, const struct ocd_impl_plan *plan)
{
    return ocd_impl_workspace(handle, &impl->base, p, plan);
}

/* CUDNN_CONV_WSCAP_DBG (MiB, cuDNN 8.0.5 and later; its value is cap) caps the workspace an
   algorithm may ask for; entries that need more are skipped. */
static bool over_workspace_cap(const char *cap, size_t bytes)
{
    if (cap == NULL || *cap == '\0') return false;
    double mib = atof(cap);
    return mib >= 0 && (double)bytes > mib * 1048576.0;
}

/* Why entry e, which applies, cannot serve algo for p, or NULL when it can; a race it loses
   aside: the math type, and the workspace where the algorithm or a cap limits it. */
static const char *entry_unfit(cudnnHandle_t handle, const struct ocd_impl *base, const void *problem,
                               const struct ocd_impl_plan *plan, int algo)
{
    const struct ocd_conv_impl *e = (const struct ocd_conv_impl *)base;
    const struct ocd_conv_problem *p = problem;
    const char *r = ocd_conv_entry_row_rejects(e, p);
    /* the guide's IMPLICIT_GEMM and backward ALGO_0 form no matrix: the entries that serve them
       need no workspace (programs run them with NULL, 0 without asking: Gorgonia) */
    const bool implicit = p->dir == OCD_CONV_FWD        ? algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM
                          : p->dir == OCD_CONV_BWD_DATA ? algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0
                                                        : algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
    const char *cap = getenv("CUDNN_CONV_WSCAP_DBG");
    if (r == NULL && (implicit || (cap != NULL && *cap != '\0'))) { /* else the workspace is not asked */
        size_t ws = ocd_conv_impl_workspace(handle, e, p, plan);
        if (over_workspace_cap(cap, ws)) r = OCD_REASON_WORKSPACE;
        else if (ws > 0 && implicit) r = "this algorithm runs without workspace, and this entry needs some for this problem";
    }
    return r;
}

/* How a racing entry stands: FORCED, else Find's verdict for the problem where there is one,
   else the entry's estimate. */
static enum ocd_conv_race race_standing(cudnnHandle_t handle, const struct ocd_conv_impl *e,
                                        const struct ocd_conv_problem *p, const struct ocd_impl_plan *plan, int algo)
{
    enum ocd_conv_race r = e->race(handle, p, plan->u.bytes);
    bool won;
    if (r != OCD_CONV_RACE_FORCED && ocd_conv_race_verdict(p, algo, &won))
        r = won ? OCD_CONV_RACE_WINS : OCD_CONV_RACE_LOSES;
    return r;
}

/* The walker's further test for a convolution entry (struct ocd_impl_query): unfit, or a racer
   that loses the problem (the walker has just planned it into plan). */
static const char *entry_rejects(cudnnHandle_t handle, const struct ocd_impl *base, const void *problem,
                                 const struct ocd_impl_plan *plan, int algo)
{
    const struct ocd_conv_impl *e = (const struct ocd_conv_impl *)base;
    const char *r = entry_unfit(handle, base, problem, plan, algo);
    if (r == NULL && e->race != NULL && race_standing(handle, e, problem, plan, algo) == OCD_CONV_RACE_LOSES)
        r = "slower than the next entry for this problem (measured)";
    return r;
}

bool ocd_conv_race_pair(cudnnHandle_t handle, const struct ocd_conv_problem *p, int algo,
                        const struct ocd_conv_impl **racer, const struct ocd_conv_impl **rival)
{
    if (ocd_conv_algo_rejects(p, algo) != NULL) return false;
    char why[8];
    struct ocd_impl_plan plan; /* the racer's, after the walk */
    const struct ocd_impl_query q = {ocd_conv_algo_name(p->dir, algo), algo, entry_unfit, &plan};
    struct ocd_impl_table t = ocd_conv_impl_table(p->dir);
    *racer = (const struct ocd_conv_impl *)ocd_impl_walk(handle, t, p, &q, why, sizeof why);
    if (*racer == NULL || (*racer)->race == NULL || (*racer)->race(handle, p, plan.u.bytes) == OCD_CONV_RACE_FORCED)
        return false;
    /* the rival: the first entry after the racer that serves the algorithm */
    const size_t next = (size_t)(*racer - (const struct ocd_conv_impl *)t.entries) + 1;
    t.entries = *racer + 1, t.count -= next;
    *rival = (const struct ocd_conv_impl *)ocd_impl_walk(handle, t, p, &q, why, sizeof why);
    return *rival != NULL;
}

const struct ocd_conv_impl *ocd_conv_pick(cudnnHandle_t handle, const struct ocd_conv_problem *p,
                                          int algo, char *why, size_t why_size, struct ocd_impl_plan *plan)
{
    const char *doc = ocd_conv_algo_rejects(p, algo);
    if (doc != NULL) {
        snprintf(why, why_size, "%s", doc);
        return NULL;
    }
    const struct ocd_impl_query q = {ocd_conv_algo_name(p->dir, algo), algo, entry_rejects, plan};
    const struct ocd_impl *e = ocd_impl_walk(handle, ocd_conv_impl_table(p->dir), p, &q, why, why_size);
    if (e == NULL && why[0] == '\0')
        snprintf(why, why_size, "the %s backend has no implementation of this algorithm", handle->backend->name);
    return (const struct ocd_conv_impl *)e;
}
