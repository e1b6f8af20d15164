/* suites.c: the benchmark's suites, tables of cases {name, timing, problem} (see bench.h). */
#include "bench.h"

#include "resnet50_shapes.h"

const struct bench_case ceiling_cases[] = {
    {"copy", TIME_DEVICE, "op=copy dt=f32 y=32x256x128x128"}, /* 512 MiB read + 512 MiB written */
};

/* The memory-bound tensor ops on large tensors: T is 128 Mi elements (512 MiB in f32, 256 MiB in
   f16), B its per-channel bias. The byte counts follow each op's formula above. */
#define T "32x256x128x128"
#define T_NHWC T ":nhwc"
#define B "1x256x1x1"
static const struct bench_case tensor_cases[] = {
    /* y written: 512 MiB / 256 MiB */
    {"set_f32", TIME_DEVICE, "op=settensor dt=f32 y=" T " value=0.5"},
    {"set_f16", TIME_DEVICE, "op=settensor dt=f16 y=" T " value=0.5"},
    /* y read and written: 1 GiB / 512 MiB. alpha -1: the timed calls repeat on their own output,
       which any other factor would drive towards zero or infinity. */
    {"scale_f32", TIME_DEVICE, "op=scaletensor dt=f32 y=" T " alpha=-1"},
    {"scale_f16", TIME_DEVICE, "op=scaletensor dt=f16 y=" T " alpha=-1"},
    /* x read, y read and written: 1.5 GiB / 768 MiB */
    {"add_same_f32", TIME_DEVICE, "op=addtensor dt=f32 x=" T " y=" T " alpha=1 beta=1"},
    {"add_same_f16", TIME_DEVICE, "op=addtensor dt=f16 x=" T " y=" T " alpha=1 beta=1"},
    /* bias (1 KiB / 512 B) read, y read and written: 1 GiB / 512 MiB */
    {"add_bias_f32", TIME_DEVICE, "op=addtensor dt=f32 x=" B " y=" T " alpha=1 beta=1"},
    {"add_bias_f16", TIME_DEVICE, "op=addtensor dt=f16 x=" B " y=" T " alpha=1 beta=1"},
    {"add_bias_nhwc_f32", TIME_DEVICE, "op=addtensor dt=f32 x=" B ":nhwc y=" T_NHWC " alpha=1 beta=1"},
    {"add_bias_nhwc_f16", TIME_DEVICE, "op=addtensor dt=f16 x=" B ":nhwc y=" T_NHWC " alpha=1 beta=1"},
    /* a and b read, c written (beta 0): 1.5 GiB / 768 MiB */
    {"optensor_add_f32", TIME_DEVICE, "op=optensor opt=add dt=f32 a=" T " b=" T " c=" T " alpha1=1 alpha2=1 beta=0"},
    {"optensor_add_f16", TIME_DEVICE, "op=optensor opt=add dt=f16 a=" T " b=" T " c=" T " alpha1=1 alpha2=1 beta=0"},
    {"optensor_mul_f32", TIME_DEVICE, "op=optensor opt=mul dt=f32 a=" T " b=" T " c=" T " alpha1=1 alpha2=1 beta=0"},
    {"optensor_mul_f16", TIME_DEVICE, "op=optensor opt=mul dt=f16 a=" T " b=" T " c=" T " alpha1=1 alpha2=1 beta=0"},
    /* x read, y written (beta 0): 1 GiB / 512 MiB */
    {"transform_nchw_nhwc_f32", TIME_DEVICE, "op=transform dt=f32 x=" T " y=" T_NHWC " alpha=1 beta=0"},
    {"transform_nchw_nhwc_f16", TIME_DEVICE, "op=transform dt=f16 x=" T " y=" T_NHWC " alpha=1 beta=0"},
    {"transform_nhwc_nchw_f32", TIME_DEVICE, "op=transform dt=f32 x=" T_NHWC " y=" T " alpha=1 beta=0"},
    {"transform_nhwc_nchw_f16", TIME_DEVICE, "op=transform dt=f16 x=" T_NHWC " y=" T " alpha=1 beta=0"},
    /* conversions, x read and y written: 768 MiB */
    {"transform_f32_to_f16", TIME_DEVICE, "op=transform dt=f32 x=" T " y=" T "@f16 alpha=1 beta=0"},
    {"transform_f16_to_f32", TIME_DEVICE, "op=transform dt=f16 x=" T " y=" T "@f32 alpha=1 beta=0"},
    /* The host cost of one small call (the API's overhead): validation, dispatch, launch. */
    {"latency_add_bias_f32", TIME_HOST_CALL, "op=addtensor dt=f32 x=1x16x1x1 y=1x16x8x8 alpha=1 beta=1"},
    /* The floor under every such call: one device-to-device cudaMemcpyAsync, no cuDNN at all. */
    {"latency_floor_memcpy", TIME_HOST_CALL, "op=copy dt=f32 y=1x16x8x8"},
};
#undef T
#undef T_NHWC
#undef B

/* One row: name SHAPE_DIR_DT[SUFFIX], e.g. l2_3x3s2_128_128_bwdf_bf16; MATH: "" (the op's default)
   or " math=NAME". */
#define RN50_ROW_MATH(MATH, N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, st)               \
    {#name "_" #DIR "_" #DT SUFFIX, TIME_DEVICE,                                                   \
     "op=" #OP " dt=" #DT " layout=" #LAYOUT " n=" #N " c=" #c " h=" #h " w=" #h " k=" #k " r=" #r  \
     " s=" #r " pad=" #pad " stride=" #st " dil=1 algo=auto" MATH},
#define RN50_ROW(...) RN50_ROW_MATH("", __VA_ARGS__)
#define RN50_FMA_ROW(...) RN50_ROW_MATH(" math=fma", __VA_ARGS__)
#define RN50_DIRS(N, DT, LAYOUT, SUFFIX)                                                            \
    RN50_SHAPES(RN50_ROW, N, convfwd, fwd, DT, LAYOUT, SUFFIX)                                     \
    RN50_SHAPES(RN50_ROW, N, convbwdd, bwdd, DT, LAYOUT, SUFFIX)                                   \
    RN50_SHAPES(RN50_ROW, N, convbwdf, bwdf, DT, LAYOUT, SUFFIX)
/* Batch 64: forward, backward data, backward filter in f32 NCHW, f16 NHWC and bf16 NHWC; then the
   host cost of one small forward call (batch 1, the algorithm picked once in setup). */
static const struct bench_case resnet50_cases[] = {
    RN50_DIRS(64, f32, nchw, "") RN50_DIRS(64, f16, nhwc, "") RN50_DIRS(64, bf16, nhwc, "")
    {"latency_conv_1x1_f16", TIME_HOST_CALL,
     "op=convfwd dt=f16 layout=nhwc n=1 c=64 h=56 w=56 k=64 r=1 s=1 pad=0 stride=1 dil=1 algo=auto"},
};
/* Batch 256: the same three directions and three types. Run it on its own (`--suite
   resnet50_b256`): 207 cases of four times the batch-64 work, several minutes per build. */
static const struct bench_case resnet50_b256_cases[] = {
    RN50_DIRS(256, f32, nchw, "_b256") RN50_DIRS(256, f16, nhwc, "_b256") RN50_DIRS(256, bf16, nhwc, "_b256")
};
/* Batch 64, f32 NCHW with FMA math (no TF32): the three directions. */
static const struct bench_case resnet50_fma_cases[] = {
    RN50_SHAPES(RN50_FMA_ROW, 64, convfwd, fwd, f32, nchw, "_fma")
    RN50_SHAPES(RN50_FMA_ROW, 64, convbwdd, bwdd, f32, nchw, "_fma")
    RN50_SHAPES(RN50_FMA_ROW, 64, convbwdf, bwdf, f32, nchw, "_fma")
};
/* The host backend's suite (a 2-core CPU does a batch-64 layer in seconds): the 3x3 layers
   (r = 3 picks them: RN50_ONLY_<r>), forward, f32 NCHW, batch 8. */
#define RN50_3X3_ROW(N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, st)                      \
    RN50_ONLY_##r(RN50_ROW(N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, st))
static const struct bench_case resnet50_host_cases[] = {
    RN50_SHAPES(RN50_3X3_ROW, 8, convfwd, fwd, f32, nchw, "_b8")
};
/* Fused graphs. ConvBiasAct (conv, add a per-channel bias, ReLU) on the ResNet-50 shapes at batch
   64, f16 NHWC: through the backend API (cbag) and through cudnnConvolutionBiasActivationForward
   (cba); the resnet50 suite's convfwd rows of the same shapes are the convolution alone. The
   longer chains through the backend API on two stride-1 3x3 layers (layer1's at 56 x 56 and
   layer3's at 14 x 14, as RN50_SHAPES lists them): ConvScaleBiasAddAct (csbaag: relu(conv * s +
   bias + z)) and ConvBiasScaleAct (cbsag: relu((conv + bias) * s)). MatmulBiasAct (mbag: act(A B
   + bias), bias per column) on a transformer MLP's two GEMMs, 32 x 512 tokens of width 1024 and a
   hidden width of 4096, up (k 1024, n 4096) and back (k 4096, n 1024), with ReLU and with GELU.
   Graphs whose pointwise ops no epilogue takes, so they run as a pointwise chain of their own
   (impl cuda:pw_chain, or ending in +cuda:pw_chain): ScaleBiasAddAct alone (sbaag: relu(x * s +
   bias + z), the end of a ResNet-50 bottleneck block with its batch norm folded, on layer1's
   output 64 x 256 x 56 x 56 in f16 and f32 NHWC) and DgradDrelu (ddrg: backward data, then the
   ReLU gradient with the forward input) on the two 3x3 layers. Then the host cost of one
   execute of a small graph (an executed plan's whole host path: binding the variant pack,
   planning each stage, the launches), ConvBiasAct on a 1x1 layer at batch 1 and MatmulBiasAct
   with GELU on 64 tokens. */
#define EPI_3X3_ROWS(OP, DIR)                                                                       \
    RN50_ROW(64, OP, DIR, f16, nhwc, "", l1_3x3_64_64, 64, 64, 56, 3, 1, 1)                         \
    RN50_ROW(64, OP, DIR, f16, nhwc, "", l3_3x3_256_256, 256, 256, 14, 3, 1, 1)
#define MLP_ROW(M, K, N, ACT)                                                                       \
    {"mlp_k" #K "_n" #N "_" #ACT "_mbag_f16", TIME_DEVICE,                                 \
     "op=matmulbiasact_graph dt=f16 m=" #M " n=" #N " k=" #K " act=" #ACT},
/* x, z read, y written: 294 MiB in f16, 588 MiB in f32 (and the per-channel scale and bias) */
#define SBAA_ROW(DT)                                                                                \
    {"l1_out_64x256x56x56_sbaag_" #DT, TIME_DEVICE, "op=scalebiasaddact_graph dt=" #DT " x=64x256x56x56:nhwc"},
static const struct bench_case graph_cases[] = {
    RN50_SHAPES(RN50_ROW, 64, convbiasact_graph, cbag, f16, nhwc, "")
    RN50_SHAPES(RN50_ROW, 64, convbiasact, cba, f16, nhwc, "")
    EPI_3X3_ROWS(convscalebiasaddact_graph, csbaag) EPI_3X3_ROWS(convbiasscaleact_graph, cbsag)
    MLP_ROW(16384, 1024, 4096, relu) MLP_ROW(16384, 1024, 4096, gelu)
    MLP_ROW(16384, 4096, 1024, relu) MLP_ROW(16384, 4096, 1024, gelu)
    SBAA_ROW(f16) SBAA_ROW(f32)
    EPI_3X3_ROWS(dgraddrelu_graph, ddrg)
    {"latency_cbag_1x1_f16", TIME_HOST_CALL,
     "op=convbiasact_graph dt=f16 layout=nhwc n=1 c=64 h=56 w=56 k=64 r=1 s=1 pad=0 stride=1 dil=1 algo=auto"},
    {"latency_mbag_gelu_f16", TIME_HOST_CALL, "op=matmulbiasact_graph dt=f16 m=64 n=1024 k=1024 act=gelu"},
};
#undef EPI_3X3_ROWS
#undef MLP_ROW
#undef SBAA_ROW

/* The int8 configurations of the forward pass (ops_conv.c) on two of ResNet-50's 3x3 layers
   (layer1's 64 -> 64 at 56 x 56 and layer3's 256 -> 256 at 14 x 14) at batch 64 and 256: INT8
   (NHWC, int8 y), INT8_EXT (NHWC, float y; rows _ext), INT8x4 and INT8x32 (NCHW_VECT_C); and
   the shape of the cudnn-frontend samples' IMMA test ("IMMA execution with cudnnFindPlan":
   INT8x4, 4 x 64 x 224 x 224, 64 3x3 filters, no padding; the sample's CONVOLUTION mode costs
   what cross-correlation does). A row is SHAPE_fwd_DT[_ext][_b256]. Then the fused forward
   (cudnnConvolutionBiasActivationForward: a float bias, ReLU, int8 y) on the same two layers at
   batch 64: SHAPE_cba_i8. */
#define INT8_ROWS(N, SUFFIX, name, c, k, h)                                                         \
    RN50_ROW(N, convfwd, fwd, i8, nhwc, SUFFIX, name, c, k, h, 3, 1, 1)                             \
    RN50_ROW_MATH(" math=tensor_op ydt=f32", N, convfwd, fwd, i8, nhwc, "_ext" SUFFIX, name, c, k, h, 3, 1, 1) \
    RN50_ROW(N, convfwd, fwd, i8x4, nchw_vect_c, SUFFIX, name, c, k, h, 3, 1, 1)                    \
    RN50_ROW(N, convfwd, fwd, i8x32, nchw_vect_c, SUFFIX, name, c, k, h, 3, 1, 1)
static const struct bench_case int8_cases[] = {
    INT8_ROWS(64, "", l1_3x3_64_64, 64, 64, 56) INT8_ROWS(64, "", l3_3x3_256_256, 256, 256, 14)
    INT8_ROWS(256, "_b256", l1_3x3_64_64, 64, 64, 56) INT8_ROWS(256, "_b256", l3_3x3_256_256, 256, 256, 14)
    RN50_ROW(64, convbiasact, cba, i8, nhwc, "", l1_3x3_64_64, 64, 64, 56, 3, 1, 1)
    RN50_ROW(64, convbiasact, cba, i8, nhwc, "", l3_3x3_256_256, 256, 256, 14, 3, 1, 1)
    {"imma_sample_n4_c64_224_k64_fwd_i8x4", TIME_DEVICE,
     "op=convfwd dt=i8x4 layout=nchw_vect_c n=4 c=64 h=224 w=224 k=64 r=3 s=3 pad=0 stride=1 dil=1 algo=auto"},
};
#undef INT8_ROWS

#undef RN50_3X3_ROW
#undef RN50_FMA_ROW
#undef RN50_ROW
#undef RN50_ROW_MATH

/* One algorithm forced in every direction where cuDNN 8.2 has it, the implicit GEMMs that race
   Winograd forward and backward data, and the algorithms that form no matrix (IMPLICIT_GEMM,
   backward ALGO_0: no workspace), f32 NCHW, on ResNet-50's stride-1 3x3 layers at batch
   64 and LeNet's two 5x5 layers (MNIST 28x28, 20 and 50 filters) at batch 64, with the
   heuristic's choice (auto) beside them. A row is SHAPE_DIR_f32_ALGO; an algorithm that
   does not apply to a shape shows the status of its workspace query. */
#define ALGO_ROW(OP, DIR, ALGO, name, n, c, k, h, r, pad)                                      \
    {#name "_" #DIR "_f32_" #ALGO, TIME_DEVICE,                                                    \
     "op=" #OP " dt=f32 layout=nchw n=" #n " c=" #c " h=" #h " w=" #h " k=" #k " r=" #r " s=" #r    \
     " pad=" #pad " stride=1 dil=1 algo=" #ALGO},
#define ALGO_ROWS(...)                                                                              \
    ALGO_ROW(convfwd, fwd, auto, __VA_ARGS__) ALGO_ROW(convfwd, fwd, implicit_precomp_gemm, __VA_ARGS__) \
    ALGO_ROW(convfwd, fwd, implicit_gemm, __VA_ARGS__) ALGO_ROW(convfwd, fwd, fft, __VA_ARGS__)      \
    ALGO_ROW(convfwd, fwd, fft_tiling, __VA_ARGS__) ALGO_ROW(convfwd, fwd, winograd, __VA_ARGS__)   \
    ALGO_ROW(convfwd, fwd, winograd_nonfused, __VA_ARGS__)                                         \
    ALGO_ROW(convbwdd, bwdd, auto, __VA_ARGS__) ALGO_ROW(convbwdd, bwdd, algo_1, __VA_ARGS__)       \
    ALGO_ROW(convbwdd, bwdd, algo_0, __VA_ARGS__) ALGO_ROW(convbwdd, bwdd, fft, __VA_ARGS__)        \
    ALGO_ROW(convbwdd, bwdd, fft_tiling, __VA_ARGS__) ALGO_ROW(convbwdd, bwdd, winograd, __VA_ARGS__) \
    ALGO_ROW(convbwdd, bwdd, winograd_nonfused, __VA_ARGS__)                                         \
    ALGO_ROW(convbwdf, bwdf, auto, __VA_ARGS__) ALGO_ROW(convbwdf, bwdf, algo_0, __VA_ARGS__)         \
    ALGO_ROW(convbwdf, bwdf, fft, __VA_ARGS__)                                                     \
    ALGO_ROW(convbwdf, bwdf, fft_tiling, __VA_ARGS__) ALGO_ROW(convbwdf, bwdf, winograd_nonfused, __VA_ARGS__)
/* And ResNet-50's strided 1x1 downsampling layers, f16 NHWC, batch 64, in every direction: the
   heuristic's choice against the column matrix and cuBLAS (fwd GEMM, backward ALGO_0), where the
   1x1 GEMM cannot read the activations as they lie. A row is SHAPE_DIR_f16_ALGO. */
#define DS_ROW(OP, DIR, ALGO, name, c, k, h)                                                       \
    {#name "_" #DIR "_f16_" #ALGO, TIME_DEVICE,                                                    \
     "op=" #OP " dt=f16 layout=nhwc n=64 c=" #c " h=" #h " w=" #h " k=" #k                          \
     " r=1 s=1 pad=0 stride=2 dil=1 algo=" #ALGO},
#define DS_ROWS(...)                                                                                \
    DS_ROW(convfwd, fwd, auto, __VA_ARGS__) DS_ROW(convfwd, fwd, gemm, __VA_ARGS__)                \
    DS_ROW(convbwdd, bwdd, auto, __VA_ARGS__) DS_ROW(convbwdd, bwdd, algo_0, __VA_ARGS__)          \
    DS_ROW(convbwdf, bwdf, auto, __VA_ARGS__) DS_ROW(convbwdf, bwdf, algo_0, __VA_ARGS__)
static const struct bench_case conv_algo_cases[] = {
    ALGO_ROWS(l1_3x3_64_64, 64, 64, 64, 56, 3, 1) ALGO_ROWS(l2_3x3_128_128, 64, 128, 128, 28, 3, 1)
    ALGO_ROWS(l3_3x3_256_256, 64, 256, 256, 14, 3, 1) ALGO_ROWS(l4_3x3_512_512, 64, 512, 512, 7, 3, 1)
    ALGO_ROWS(lenet_conv1, 64, 1, 20, 28, 5, 0) ALGO_ROWS(lenet_conv2, 64, 20, 50, 12, 5, 0)
    DS_ROWS(l2_ds_256_512, 256, 512, 56) DS_ROWS(l3_ds_512_1024, 512, 1024, 28)
    DS_ROWS(l4_ds_1024_2048, 1024, 2048, 14)
};
#undef DS_ROWS
#undef DS_ROW
#undef ALGO_ROWS
#undef ALGO_ROW
#undef RN50_DIRS

/* The memory-bound nn layers on ResNet-50's layer1 activations: X is 64 x 256 x 56 x 56 (49 Mi
   elements: 196 MiB in f32, 98 MiB in f16), f32 NCHW and f16 NHWC; Y is the 3x3 stride 2 pooled
   64 x 256 x 28 x 28 (49 MiB / 24.5 MiB); |p| = 1 KiB (256 floats). Softmax and batch norm run in bf16
   NHWC too (the 16-bit kernels with the other rounding). The byte counts follow each op's formula
   above. */
#define SOFTMAX_ROWS(DT, LAY)                                                                         \
    /* x read, y written: 392 MiB / 196 MiB */                                                        \
    {"softmax_fwd_" #DT, TIME_DEVICE, "op=softmaxfwd algo=accurate mode=channel dt=" #DT " x=64x256x56x56" LAY}, \
    /* y, dy read, dx written: 588 MiB / 294 MiB */                                                   \
    {"softmax_bwd_" #DT, TIME_DEVICE, "op=softmaxbwd algo=accurate mode=channel dt=" #DT " x=64x256x56x56" LAY},
#define NN_ROWS(DT, LAY)                                                                              \
    /* x read, y written: 392 MiB / 196 MiB */                                                        \
    {"relu_fwd_" #DT, TIME_DEVICE, "op=actfwd mode=relu dt=" #DT " x=64x256x56x56" LAY},              \
    /* dy, x read, dx written: 588 MiB / 294 MiB */                                                   \
    {"relu_bwd_" #DT, TIME_DEVICE, "op=actbwd mode=relu dt=" #DT " x=64x256x56x56" LAY},              \
    SOFTMAX_ROWS(DT, LAY)                                                                             \
    /* x read, y written: 245 MiB / 122.5 MiB */                                                      \
    {"maxpool_3x3s2_fwd_" #DT, TIME_DEVICE,                                                          \
     "op=poolfwd mode=max dt=" #DT " x=64x256x56x56" LAY " win=3 pad=1 stride=2"},                    \
    /* x, dy read, dx written: 441 MiB / 220.5 MiB */                                                 \
    {"maxpool_3x3s2_bwd_" #DT, TIME_DEVICE,                                                          \
     "op=poolbwd mode=max dt=" #DT " x=64x256x56x56" LAY " win=3 pad=1 stride=2"},                    \
    BN_ROWS(DT, LAY)
#define BN_ROWS(DT, LAY)                                                                              \
    /* x read, y written: 392 MiB / 196 MiB, + 4 KiB of parameters */                                 \
    {"bn_fwd_inf_" #DT, TIME_DEVICE, "op=bnfwdinf mode=spatial dt=" #DT " x=64x256x56x56" LAY},       \
    /* x read, y written: 392 MiB / 196 MiB, + 8 KiB of parameters */                                 \
    {"bn_fwd_train_" #DT, TIME_DEVICE, "op=bnfwdtrain mode=spatial dt=" #DT " x=64x256x56x56" LAY},   \
    /* x, dy read, dx written: 588 MiB / 294 MiB, + 5 KiB of parameters */                            \
    {"bn_bwd_" #DT, TIME_DEVICE, "op=bnbwd mode=spatial dt=" #DT " x=64x256x56x56" LAY},
static const struct bench_case nn_cases[] = {
    NN_ROWS(f32, "") NN_ROWS(f16, ":nhwc") SOFTMAX_ROWS(bf16, ":nhwc") BN_ROWS(bf16, ":nhwc")
};
#undef NN_ROWS
#undef SOFTMAX_ROWS
#undef BN_ROWS

/* The adv library's ops: the CTC loss at batch 64, 500 steps, an alphabet of 32, labels up to
   100, through both calls. */
static const struct bench_case adv_cases[] = {
    {"ctc_b64_t500_a32_l100", TIME_DEVICE, "op=ctc api=host dt=f32 t=500 n=64 a=32 labels=100"},
    {"ctc_v8_b64_t500_a32_l100", TIME_DEVICE, "op=ctc api=v8 dt=f32 t=500 n=64 a=32 labels=100"},
};

/* RNNs through the v8 API, fp16 with float math on tensor cores: the training shapes (2
   layers of hidden 1024 on 128 steps of batch 64, input 1024; forward in training mode, and
   backward data + weights as one case) for LSTM and GRU, and the inference latency of one LSTM
   layer of hidden 512 at batch 1 over 1, 16 and 64 steps, under STANDARD and under
   PERSIST_STATIC (the persistent kernels: ours the cooperative kernel's pipelined form, its
   cluster form with OPENCUDNN_UNPROVEN=1 until proven, core/impl.h). The last, again in fp32 and
   fp16 with weights 16 times smaller (a contractive recurrence), and in fp16 under
   PERSIST_STATIC: whether two libraries' checksums part from 16 steps on because fp16 rounding
   grows through saturated gates or because one is wrong. */
#define RNN_TRAIN(CELL)                                                                               \
    {#CELL "_b64_t128_h1024_fwd_f16", TIME_DEVICE,                                                \
     "op=rnn cell=" #CELL " algo=standard dt=f16 t=128 n=64 input=1024 hidden=1024 layers=2 dirs=1 pass=fwd wscale=1"}, \
    {#CELL "_b64_t128_h1024_bwd_f16", TIME_DEVICE,                                                \
     "op=rnn cell=" #CELL " algo=standard dt=f16 t=128 n=64 input=1024 hidden=1024 layers=2 dirs=1 pass=bwd wscale=1"},
#define RNN_LATENCY(T)                                                                                \
    {"lstm_b1_t" #T "_h512_inf_f16", TIME_DEVICE,                                                    \
     "op=rnn cell=lstm algo=standard dt=f16 t=" #T " n=1 input=512 hidden=512 layers=1 dirs=1 pass=inf wscale=1"}, \
    {"lstm_b1_t" #T "_h512_inf_f16_persist", TIME_DEVICE,                                            \
     "op=rnn cell=lstm algo=persist_static dt=f16 t=" #T " n=1 input=512 hidden=512 layers=1 dirs=1 pass=inf wscale=1"},
static const struct bench_case rnn_cases[] = {
    RNN_TRAIN(lstm) RNN_TRAIN(gru) RNN_LATENCY(1) RNN_LATENCY(16) RNN_LATENCY(64)
    {"lstm_b1_t64_h512_inf_f32_wsmall", TIME_DEVICE,
     "op=rnn cell=lstm algo=standard dt=f32 t=64 n=1 input=512 hidden=512 layers=1 dirs=1 pass=inf wscale=0.0625"},
    {"lstm_b1_t64_h512_inf_f16_wsmall", TIME_DEVICE,
     "op=rnn cell=lstm algo=standard dt=f16 t=64 n=1 input=512 hidden=512 layers=1 dirs=1 pass=inf wscale=0.0625"},
    {"lstm_b1_t64_h512_inf_f16_persist_wsmall", TIME_DEVICE,
     "op=rnn cell=lstm algo=persist_static dt=f16 t=64 n=1 input=512 hidden=512 layers=1 dirs=1 pass=inf wscale=0.0625"},
};
#undef RNN_TRAIN
#undef RNN_LATENCY

/* Multi-head attention as a transformer layer: batch 32, 16 heads, width 1024 (head 64),
   sequence 512, f16, forward (training) and backward (data and weights); and the attention core
   alone at sequence 4096, head 128, measured against the tensor cores' peak. */
static const struct bench_case attn_cases[] = {
    {"mha_fwd_b32_h16_w1024_s512_f16", TIME_DEVICE, "op=mha dir=fwd dt=f16 b=32 heads=16 width=1024 seq=512 proj=1"},
    {"mha_bwd_b32_h16_w1024_s512_f16", TIME_DEVICE, "op=mha dir=bwd dt=f16 b=32 heads=16 width=1024 seq=512 proj=1"},
    /* the attention core alone: 32 sequences of 4096 tokens, one head of 128, no projections */
    {"attn_core_fwd_b32_d128_s4096_f16", TIME_DEVICE, "op=mha dir=fwd dt=f16 b=32 heads=1 width=128 seq=4096 proj=0"},
    {"attn_core_bwd_b32_d128_s4096_f16", TIME_DEVICE, "op=mha dir=bwd dt=f16 b=32 heads=1 width=128 seq=4096 proj=0"},
};

const struct suite suites[] = {
    {"ceiling", ceiling_cases, ARRAY_LEN(ceiling_cases)},
    {"tensor", tensor_cases, ARRAY_LEN(tensor_cases)},
    {"resnet50", resnet50_cases, ARRAY_LEN(resnet50_cases)},
    {"resnet50_b256", resnet50_b256_cases, ARRAY_LEN(resnet50_b256_cases)},
    {"resnet50_fma", resnet50_fma_cases, ARRAY_LEN(resnet50_fma_cases)},
    {"resnet50_host", resnet50_host_cases, ARRAY_LEN(resnet50_host_cases)},
    {"conv_algo", conv_algo_cases, ARRAY_LEN(conv_algo_cases)},
    {"nn", nn_cases, ARRAY_LEN(nn_cases)},
    {"adv", adv_cases, ARRAY_LEN(adv_cases)},
    {"rnn", rnn_cases, ARRAY_LEN(rnn_cases)},
    {"attn", attn_cases, ARRAY_LEN(attn_cases)},
    {"graph", graph_cases, ARRAY_LEN(graph_cases)},
    {"int8", int8_cases, ARRAY_LEN(int8_cases)},
};
const size_t nsuites = ARRAY_LEN(suites);
