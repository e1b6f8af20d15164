/* conv.h (problem): the convolution problem every direction's kernels take, its shared math,
   and the declarations of every convolution implementation of both backends (the tables are in
   src/cnn/conv_registry.c; the plans of FFT and Winograd in problem/conv_fft.h and
   problem/conv_winograd.h). No API struct: the entry layer (src/cnn) builds the problem from
   descriptors or tensor views, the kernels (src/host/conv_*.c, src/cuda/conv_*.cu) read it.

   Main decision: one problem struct serves the three directions. Its tensors are always named
   for the forward operation (x the input image, w the filter, y the output image); the direction
   says which of them is written (y for forward, x for backward data, w for backward filter).
   Kernels therefore share index arithmetic: a forward kernel and its adjoint read the same
   fields. The API files validate everything (BAD_PARAM, nothing written) before a problem
   exists; an implementation only says whether it serves it.

   Implementation functions follow struct ocd_impl (core/impl.h); `problem` is a struct
   ocd_conv_problem (struct ocd_conv_bias_problem for the bias gradient). */
#ifndef OCD_PROBLEM_CONV_H
#define OCD_PROBLEM_CONV_H

#include "core/handle.h"
#include "core/impl.h"
#include "core/tensor.h"
#include "problem/pointwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Spatial dims a convolution problem holds: 2 (4-D tensors) and 3 (5-D tensors), as cuDNN 8.2
   documents for execution. */
#define OCD_CONV_MAX_SPATIAL 3

/* Declares a planned entry's hooks (core/impl.h), named after fn: fn_planned. */
#define OCD_CONV_PLANNED_DECLARE(fn) extern const struct ocd_impl_planned fn##_planned;

enum ocd_conv_dir { OCD_CONV_FWD, OCD_CONV_BWD_DATA, OCD_CONV_BWD_FILTER, OCD_CONV_DIRS };

/* The geometry of one convolution, identical in every direction. Spatial arrays run over the
   nsp spatial dims in tensor order (D, H, W or H, W). */
struct ocd_conv_shape {
    int nsp;
    int64_t n;      /* images */
    int64_t c;      /* input channels, all groups */
    int64_t k;      /* output channels (filters), all groups */
    int64_t groups; /* c / groups input and k / groups output channels per group */
    int64_t in[OCD_CONV_MAX_SPATIAL], filt[OCD_CONV_MAX_SPATIAL], out[OCD_CONV_MAX_SPATIAL];
    int pad[OCD_CONV_MAX_SPATIAL], stride[OCD_CONV_MAX_SPATIAL], dilation[OCD_CONV_MAX_SPATIAL];
    bool flip; /* CUDNN_CONVOLUTION: the filter is mirrored in every spatial dim */
};

/* The epilogue of a forward convolution, applied as each output element is stored:
     y = act(sc * alpha * conv + sz * alpha2 * z + sb * bias),  sc = s[k] where a scale is on,
   else 1; sz and sb are s[k] where scale_z and scale_bias say so, else 1. z has y's layout (the
   API checks it); bias and s are 1 x K x 1 x 1 (x 1). cudnnConvolutionBiasActivationForward
   fills z, bias and relu; the graph API folds its chains into it (graph/engine_plan.c): a scale
   applied before the bias (ConvScaleBiasAddAct: scale_bias false) or after it (ConvBiasScaleAct:
   scale_bias true), and any forward activation of the pointwise modes. */
struct ocd_conv_epilogue {
    bool on;
    double alpha2;
    const void *z; /* NULL when alpha2 == 0: z is then not read */
    const void *bias;
    struct ocd_tensor_view bias_view;
    bool relu; /* RELU, else IDENTITY, when act_on is false */
    bool scale_on, scale_z, scale_bias;
    const void *scale;
    struct ocd_tensor_view scale_view;
    bool act_on;            /* the activation is the unary forward step act (relu is false) */
    struct ocd_pw_step act; /* evaluated by ocd_pw_apply, as the pointwise chains do */
};

struct ocd_conv_problem {
    enum ocd_conv_dir dir;
    struct ocd_conv_shape s;
    /* Views named for the forward op: x is the input (dx in backward data), w the filter (dw),
       y the output (dy). The filter view is packed in its descriptor's format. */
    struct ocd_tensor_view x, w, y;
    cudnnTensorFormat_t w_format;
    /* Data: the one written by the direction is the destination; the others are only read. */
    void *x_data, *w_data, *y_data;
    cudnnDataType_t compute; /* the descriptor's compute type */
    cudnnMathType_t math;
    cudnnReorderType_t reorder;
    double alpha, beta; /* dst = alpha * result + beta * dst; beta == 0: dst is not read */
    struct ocd_conv_epilogue ep;
    /* Backward data followed by a ReLU gradient (DgradDrelu, which the graph API folds:
       graph/engine_plan.c): dx = the result where relu_x, the forward ReLU's input laid out and
       typed as dx, is above 0, else 0 (RELU_BWD with its default clip, slope and NaN option:
       a NaN input gives 0). beta is then 0. Only the entries whose table row says so take it
       (struct ocd_conv_impl, relu_grad). */
    bool relu_grad;
    const void *relu_x;
};

/* The view the direction writes, and its data. */
const struct ocd_tensor_view *ocd_conv_dst_view(const struct ocd_conv_problem *p);

/* ---- conv -> GEMM dimension mapping ------------------------------------------------------------ */

/* The implicit-GEMM view of a convolution, per group (the convention of CUTLASS's conv problem
   sizes): C[M x N] = A[M x K] * B[K x N], with
     forward:        M = N*P*Q (output pixels), N = K/G (filters),        K = C/G*R*S
     backward data:  M = N*H*W (input pixels),  N = C/G (input channels), K = K/G*R*S
     backward filter M = K/G (filters),         N = C/G*R*S,              K = N*P*Q
   (P, Q the output and H, W the input spatial sizes, all spatial dims multiplied for 3-D).
   FLOPs of the whole convolution = 2 * groups * M * N * K. */
struct ocd_conv_gemm {
    int64_t m, n, k, groups;
};
void ocd_conv_gemm_dims(const struct ocd_conv_problem *p, struct ocd_conv_gemm *g);

/* Product of the spatial sizes: of the input (in), the filter (filt) and the output (out). */
int64_t ocd_conv_spatial(const struct ocd_conv_shape *s, const int64_t *dims);

/* Whether every spatial stride is 1. */
bool ocd_conv_unit_stride(const struct ocd_conv_shape *s);

/* Why an entry that computes on tensor cores may not serve p, or NULL: the math type's decision
   (ocd_tensor_math_rejects, core/dtype.h) for p. Every tensor-core entry and plan asks this and
   nothing else. */
const char *ocd_conv_tensor_ops_rejects(const struct ocd_conv_problem *p);

/* How an entry that races the next entry serving its algorithm stands on a problem. */
enum ocd_conv_race {
    OCD_CONV_RACE_WINS,  /* expected faster: it runs the problem */
    OCD_CONV_RACE_LOSES, /* expected slower: the next entry runs it */
    OCD_CONV_RACE_FORCED /* a user's setting makes it run the problem, whatever Find measured */
};

/* cudnnConvolutionBackwardBias: db[k] = alpha * sum over n and space of dy[n, k, ...] + beta * db[k];
   with sq_data, also sq[k] = alpha * the sum of squares + beta * sq[k] (the statistics of the
   fused forward convolution). */
struct ocd_conv_bias_problem {
    struct ocd_tensor_view dy, db;
    const void *dy_data;
    void *db_data, *sq_data;
    double alpha, beta;
};

/* ---- host implementations (src/host/conv_*.c) ---------------------------------------------------
   conv_direct.c: plain loops in double, the reference entry of every table; Im2Col; the bias
   gradient. conv_gemm.c: the packed GEMM engine in the three strategies the algorithm enums name
   (implicit, implicit precomputed, explicit). conv_winograd.c: WINOGRAD (F(2x2, 3x3)) and
   WINOGRAD_NONFUSED (F(4x4, 3x3), F(2x2, 5x5); the filter gradient F(3x3, 2x2), F(5x5, 2x2)).
   conv_fft.c: FFT and FFT_TILING on the built-in FFT engine. conv_cblas.c (built with a CBLAS
   library): forward im2col + CBLAS GEMM, racing the packed engine. */
cudnnStatus_t ocd_host_conv_direct(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_conv_im2col(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_conv_bias_grad(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

OCD_CONV_PLANNED_DECLARE(ocd_host_conv_gemm_implicit)
OCD_CONV_PLANNED_DECLARE(ocd_host_conv_gemm_precomp)
OCD_CONV_PLANNED_DECLARE(ocd_host_conv_gemm_explicit)

OCD_CONV_PLANNED_DECLARE(ocd_host_conv_winograd)
OCD_CONV_PLANNED_DECLARE(ocd_host_conv_winograd_nonfused)

OCD_CONV_PLANNED_DECLARE(ocd_host_conv_fft)
OCD_CONV_PLANNED_DECLARE(ocd_host_conv_fft_tiling)

#ifdef OCD_HAVE_CBLAS
OCD_CONV_PLANNED_DECLARE(ocd_host_conv_cblas)
enum ocd_conv_race ocd_host_conv_cblas_race(cudnnHandle_t handle, const struct ocd_conv_problem *p, const void *plan);
#endif

#ifdef OCD_HAVE_CUDA
/* ---- CUDA implementations (src/cuda/conv_*.cu) --------------------------------------------------
   conv_direct.cu: the reference kernels, any direction, configuration and layout; one thread per
   element of the destination, accumulating in int (int8 configurations), double (double) or
   float; Im2Col; the bias gradient. */
cudnnStatus_t ocd_cuda_conv_direct(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_conv_im2col(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_conv_bias_grad(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

/* conv_igemm.cu and conv_cublas.cu: the tensor-core entries. */
/* Tile configurations: X(index, BM, BN, warps along M, warps along N, stages), largest first.
   The tables list them in this order; a large tile declines problems it would leave the GPU
   half idle on (conv_igemm.cu, tile_rejects), so the first that applies is the heuristic's pick. */
#define OCD_IGEMM_TILES(X)                                                                      \
    X(0, 128, 128, 2, 4, 3)                                                                     \
    X(1, 128, 64, 2, 2, 4)                                                                      \
    X(2, 64, 64, 2, 2, 4)
#define OCD_IGEMM_NTILES 3

/* The sm_90a (wgmma) kernel's tiles, every direction, fp16 and bf16: X(index, BM, BN, stages),
   largest first; a K tile of 64; two warpgroups of BM / 2 rows each. */
#define OCD_IGEMM_WGMMA_TILES(X)                                                                \
    X(0, 128, 256, 4)                                                                           \
    X(1, 256, 128, 4)                                                                           \
    X(2, 128, 128, 5)                                                                           \
    X(3, 128, 64, 6)
#define OCD_IGEMM_WGMMA_NTILES 4

/* The sm_90a warp-specialized TMA kernel's tiles, every direction (strided backward data phase
   by phase: cuda:dgrad_igemm_tma_phases), fp16 and bf16, and fp32 as TF32 forward and for
   backward data (entries cuda:{fwd,dgrad}_igemm_tma_tf32_*): X(index, BM, BN, stages); a K tile
   of 128 bytes of channels of one filter tap (64 of a 16-bit type, 32 of fp32), or of 64 pixels
   for the filter gradient (cuda/conv_igemm_tma.cuh). */
#define OCD_IGEMM_TMA_TILES(X)                                                                  \
    X(0, 128, 256, 4)                                                                           \
    X(1, 256, 128, 4)
#define OCD_IGEMM_TMA_NTILES 2

/* The same kernel on clusters of 2 CTAs along M (entries cuda:*_igemm_tma_c2_*, and fp32 data as
   TF32 forward and for backward data, cuda:{fwd,dgrad}_igemm_tma_c2_tf32_*): the two CTAs of a
   cluster work on adjacent M tiles of one N tile and each loads half of the shared B tile into
   both (TMA multicast): X(index, BM, BN, stages). */
#define OCD_IGEMM_TMA_C2_TILES(X)                                                               \
    X(0, 128, 256, 4)                                                                           \
    X(1, 256, 128, 4)
#define OCD_IGEMM_TMA_C2_NTILES 2

/* The same kernel's filter-gradient tiles of 64 rows (entries cuda:wgrad_igemm_tma_64x*: one
   consumer warpgroup, for the 64 filters of ResNet's 64-channel layers, which the 128-row tiles
   would leave half padding; the 64-wide one for GEMMs of 64 columns, a 1x1 filter over 64
   channels, which the 256-wide one would leave three quarters padding): X(index, BM, BN,
   stages). */
#define OCD_IGEMM_TMA_W64_TILES(X)                                                              \
    X(0, 64, 256, 5)                                                                            \
    X(1, 64, 64, 8)
#define OCD_IGEMM_TMA_W64_NTILES 2

/* The same kernel's narrow forward and backward-data tiles (entries cuda:{fwd,dgrad}_igemm_tma_
   128x128x64_s7, _256x64x64_s5, _128x64x64_s9 for fp16 and bf16, cuda:{fwd,dgrad}_igemm_tma_tf32_
   128x128x32_s7, ... for fp32 data as TF32; unit-stride backward data, and the stride phases of
   cuda:dgrad_igemm_tma_phases and _tma_tf32_phases): for GEMMs of 64 columns (ResNet's 64-channel
   layers), which the 128x256 and 256x128 tiles decline as mostly padding, and for GEMMs whose
   wide tiles are too few to fill the GPU (batch 64). Two consumer warpgroups, the stages as many
   as fill the shared memory: X(index, BM, BN, stages), most bytes of L2 traffic per flop last
   (conv_igemm_tma_sm90.cu's file comment has the arithmetic). */
#define OCD_IGEMM_TMA_NARROW_TILES(X)                                                           \
    X(0, 128, 128, 7)                                                                           \
    X(1, 256, 64, 5)                                                                            \
    X(2, 128, 64, 9)
#define OCD_IGEMM_TMA_NARROW_NTILES 3

/* "cuda:fwd_igemm_tc_128x128x32_s3": direction, variant (tc: fp16 and bf16 with a K tile of 32;
   tf32: fp32 data with a K tile of 16; int8: int8 and uint8 data with a K tile of 64; wgmma: the sm_90a kernel, fp16 and bf16 with a K tile of
   64; tma: the sm_90a warp-specialized TMA kernel; tma_tf32: that kernel on fp32 data as TF32,
   a K tile of 32; tma_c2: that kernel on clusters of 2 CTAs; tma_c2_tf32: both),
   BM x BN x BK, stages. */
#define OCD_IGEMM_NAME(dir, variant, bk, bm, bn, st) "cuda:" dir "_igemm_" variant "_" #bm "x" #bn "x" #bk "_s" #st

/* The implicit-GEMM tiles are planned entries: tc (fp16 and bf16), tf32 (fp32 data), int8 (the
   int8 configurations' forward pass) and wgmma. */
#define OCD_IGEMM_DECLARE(i, bm, bn, wm, wn, st)                                                \
    OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tc_##i) OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tf32_##i) \
    OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_int8_##i)
OCD_IGEMM_TILES(OCD_IGEMM_DECLARE)
#undef OCD_IGEMM_DECLARE
#define OCD_IGEMM_WGMMA_DECLARE(i, bm, bn, st) OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_wgmma_##i)
OCD_IGEMM_WGMMA_TILES(OCD_IGEMM_WGMMA_DECLARE)
#undef OCD_IGEMM_WGMMA_DECLARE
#define OCD_IGEMM_TMA_DECLARE(i, bm, bn, st)                                                    \
    OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tma_##i) OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tma_tf32_##i)
OCD_IGEMM_TMA_TILES(OCD_IGEMM_TMA_DECLARE)
#undef OCD_IGEMM_TMA_DECLARE
#define OCD_IGEMM_TMA_C2_DECLARE(i, bm, bn, st)                                                 \
    OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tma_c2_##i) OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tma_c2_tf32_##i)
OCD_IGEMM_TMA_C2_TILES(OCD_IGEMM_TMA_C2_DECLARE)
#undef OCD_IGEMM_TMA_C2_DECLARE
#define OCD_IGEMM_TMA_W64_DECLARE(i, bm, bn, st)                                                \
    OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tma_w64_##i) OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tma_w64_tf32_##i)
OCD_IGEMM_TMA_W64_TILES(OCD_IGEMM_TMA_W64_DECLARE)
#undef OCD_IGEMM_TMA_W64_DECLARE
#define OCD_IGEMM_TMA_NARROW_DECLARE(i, bm, bn, st)                                             \
    OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tma_narrow_##i)                                \
    OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_tma_narrow_tf32_##i)
OCD_IGEMM_TMA_NARROW_TILES(OCD_IGEMM_TMA_NARROW_DECLARE)
#undef OCD_IGEMM_TMA_NARROW_DECLARE

/* cuBLAS entries (conv_cublas.cu), planned, for every direction. "gemm1x1" applies to 1x1
   filters with unit stride and no padding, where the activation itself is the GEMM operand (no
   workspace); "im2col_gemm" applies to the rest and expands the input (or collects the data
   gradient) in the workspace. The _tc entries use the tensor cores (fp16, bf16, and fp32 as
   TF32); the others compute fp32 and double data in plain precision. "gemm1x1" also takes
   strided 1x1 filters without padding of float and double data, on x's subsample in the
   workspace; "nchw_wgrad_gemm" the filter gradient of NCHW float and double data as a GEMM per
   image into slabs of the workspace, summed by a second kernel. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_gemm1x1_tc)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_gemm1x1)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_im2col_gemm_tc)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_im2col_gemm)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_nchw_wgrad_gemm_tc)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_nchw_wgrad_gemm)

/* Backward data with a stride, phase by phase (conv_igemm.cu says how), planned; _tc for fp16
   and bf16, _tf32 for fp32 data, _tma for fp16 and bf16 with every phase on the sm_90a TMA
   kernel (and dilated filters), _tma_tf32 the same for fp32 data as TF32. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_phases_tc)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_phases_tf32)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_phases_tma)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_igemm_phases_tma_tf32)

/* conv_dgrad_1x1s.cu: backward data of a 1x1 filter with a stride and no padding (ResNet's
   downsampling layers), fp16 and bf16 NHWC: one cuBLAS GEMM into the workspace, then one pass
   writing every element of dx (its source's value or zero, plus beta * dx). Planned; unproven. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_dgrad_1x1s)

/* conv_stem.cu: the forward pass of images with few channels (C not a multiple of 8, C R S <=
   256: RGB first layers) on tensor cores, with K = C R S packed and the im2col tile built in
   shared memory; fp16 and bf16, no workspace. Planned. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_stem_fwd)
/* conv_stem.cu too: the filter gradient for the same problems, dW = dy^T im2col with the
   expansion of the forward pass, each CTA's sums over its pixel tiles in fp32 partials in the
   workspace, summed in CTA order by a second kernel (deterministic). Planned. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_stem_wgrad)
/* conv_stem_dgrad.cu: the data gradient for C < 8 on tensor cores (one 8-wide mma tile of
   channels), stride phase by phase, A read straight from a dy patch in shared memory; fp16 and
   bf16, no workspace. Planned. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_stem_dgrad)

/* conv_wgrad_tf32.cu: the filter gradient of float NCHW data on tensor cores as TF32, both
   operands gathered K-major from the tensors, split-K over N P Q through fp32 slabs in the
   workspace summed in split order. Planned. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_wgrad_tf32)

/* conv_gather.cu: every direction without workspace on tensor cores (TF32 mma; fp32, fp16 and
   bf16 data of any layout), both operands gathered from the tensors through their strides, the
   result through the run-time-typed store; the fp32 filter gradient split-K in split order
   through dw. For the algorithms that form no matrix where the other entries need workspace.
   Planned. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_gather)

/* conv_winograd.cu: WINOGRAD and WINOGRAD_NONFUSED on the plan of problem/conv_winograd.h. The
   _tc entries run the batched GEMM on tensor cores (half data: the transformed operands in half,
   fp32 accumulation; float data: TF32) for the 4x4 tiles, so FMA_MATH skips them; the plain
   entries compute fp32. Planned entries; their plan's reasons: the transform plan's, cuBLAS
   missing, sizes beyond cuBLAS's int extents. */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_winograd)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_winograd_tc)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_winograd_nonfused)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_winograd_nonfused_tc)

/* conv_fft.cu: FFT and FFT_TILING on cuFFT loaded at run time, planned. The plan's reasons:
   problem/conv_fft.h's, or that cuFFT is missing or cannot plan; its workspace: the spectra, the
   real tiles and cuFFT's work area (the planning makes the cuFFT plans, kept per handle, so that
   Find never times plan creation). */
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_fft)
OCD_CONV_PLANNED_DECLARE(ocd_cuda_conv_fft_tiling)
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_CONV_H */
