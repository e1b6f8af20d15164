/* compat_engines.c: call patterns of the frameworks' execution layers (docs/compatibility.md)
   not replayed elsewhere: TensorFlow's stream executor batch normalization through the Ex calls
   (an IDENTITY activation descriptor given for CUDNN_BATCHNORM_OPS_BN, the backward's yDesc,
   dzDesc, bias and activation NULL) and its LRN over channels-last tensors (the depth radius
   turned into lrnN, alpha scaled by it); PyTorch's cudnn_convolution_add_relu (every algorithm of
   the heuristic tried in order, a bias descriptor from an expanded view). Each result against the
   double references of tests/ref/; MATLAB GPU Coder's generated fused convolution + ReLU and max
   pooling (int8 in NCHW_VECT_C vectors, and the argmax indices drawn from a pooling backward);
   ONNX Runtime's Conv (one Find result into the real output, 1-D padded to 2-D, true half);
   layer normalization through batch normalization (OneFlow, CTranslate2, ONNX Runtime);
   MegEngine's batch norm by parameter dims; OpenVINO's legacy convolution (a list of compute types
   tried in turn, the fused call with z the output).
   (compat_programs.c: whole programs and framework glue; compat.c, compat_ops.c,
   compat_conv.c: the frameworks' ops.) */
#include "conv_harness.h"
#include "ref/batchnorm.h"
#include "ref/conv.h"
#include "ref/lrn.h"
#include "ref/pooling.h"
#include "tensors.h"
#include "test.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* ---- TensorFlow's stream executor (tensorflow/stream_executor/cuda/cuda_dnn.cc) -------------- */

/* One batch normalization replayed through the Ex calls (TensorFlow's, MegEngine's): x of its
   layout with dy, y, dx and an inference y alike, the parameters p of the shape's slots; the
   values (the running averages zeroed first when asked), the buffers, the double references
   (batch statistics, running averages updated by factor, inference on the running averages, the
   backward), and the training workspaces. */
struct bn_ex {
    struct tview x, p;
    double *xv, *dyv, *scale, *bias, *rm0, *rv0, *mean, *var, *inv, *rm, *rv, *y, *yinf, *dx, *dpre, *ds, *db;
    void *px, *pdy, *py, *pdx, *pyi, *ps, *pb, *prm, *prv, *psm, *psv, *pds, *pdb;
    void *work, *reserve, *bwork;
    size_t ws, rs, bws;
};

/* b->x and b->p described by the caller. */
static void bn_ex_init(struct bn_ex *b, const struct ref_bn_shape *sh, double eps, double factor, bool zero_running)
{
    const int64_t slots = ref_bn_slots(sh), cnt = ref_bn_reduced(sh), n = b->x.count;
    b->xv = tview_random(n, -2, 2), b->dyv = tview_random(n, -1, 1);
    b->scale = tview_random(slots, 0.5, 1.5), b->bias = tview_random(slots, -0.5, 0.5);
    b->rm0 = tview_random(slots, -1, 1), b->rv0 = tview_random(slots, 0.5, 2);
    double **per_slot[] = {&b->mean, &b->var, &b->inv, &b->rm, &b->rv, &b->ds, &b->db};
    double **per_x[] = {&b->y, &b->yinf, &b->dx, &b->dpre};
    for (size_t i = 0; i < TLEN(per_slot); i++) *per_slot[i] = malloc(sizeof(double) * (size_t)slots);
    for (size_t i = 0; i < TLEN(per_x); i++) *per_x[i] = malloc(sizeof(double) * (size_t)n);
    if (zero_running)
        for (int64_t i = 0; i < slots; i++) b->rm0[i] = b->rv0[i] = 0;
    b->px = tview_upload(&b->x, b->xv), b->pdy = tview_upload(&b->x, b->dyv), b->py = tview_upload(&b->x, NULL);
    b->pdx = tview_upload(&b->x, NULL), b->pyi = tview_upload(&b->x, NULL);
    b->ps = tview_upload(&b->p, b->scale), b->pb = tview_upload(&b->p, b->bias), b->prm = tview_upload(&b->p, b->rm0);
    b->prv = tview_upload(&b->p, b->rv0), b->psm = tview_upload(&b->p, NULL), b->psv = tview_upload(&b->p, NULL);
    b->pds = tview_upload(&b->p, NULL), b->pdb = tview_upload(&b->p, NULL);
    ref_bn_stats(sh, b->xv, b->mean, b->var);
    ref_bn_forward(sh, b->xv, NULL, b->scale, b->bias, b->mean, b->var, eps, -1, 0, NULL, b->y);
    ref_bn_forward(sh, b->xv, NULL, b->scale, b->bias, b->rm0, b->rv0, eps, -1, 0, NULL, b->yinf);
    ref_bn_backward(sh, b->xv, b->dyv, NULL, -1, 0, b->scale, b->mean, b->var, eps, b->dpre, b->dx, b->ds, b->db);
    for (int64_t i = 0; i < slots; i++) {
        b->inv[i] = 1 / sqrt(b->var[i] + eps);
        b->rm[i] = (1 - factor) * b->rm0[i] + factor * b->mean[i];
        b->rv[i] = (1 - factor) * b->rv0[i] + factor * b->var[i] * (double)cnt / (double)(cnt - 1);
    }
}

/* The training workspaces of OPS_BN: the forward's (x's descriptor as zDesc and yDesc), the
   reserve and the backward's (yDesc x's, dzDesc and the activation NULL), each allocated. */
static void bn_ex_workspaces(struct bn_ex *b, cudnnBatchNormMode_t mode, cudnnActivationDescriptor_t act)
{
    cudnnHandle_t h = test_handle();
    const cudnnTensorDescriptor_t x = b->x.desc;
    b->ws = b->rs = b->bws = 0;
    CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, mode, CUDNN_BATCHNORM_OPS_BN, x, x, x,
                                                                      b->p.desc, act, &b->ws));
    CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, mode, CUDNN_BATCHNORM_OPS_BN, act, x, &b->rs));
    CHECK_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, mode, CUDNN_BATCHNORM_OPS_BN, x, x, x, NULL, x,
                                                               b->p.desc, NULL, &b->bws));
    b->work = b->ws ? tbuf_alloc(b->ws) : NULL, b->reserve = b->rs ? tbuf_alloc(b->rs) : NULL;
    b->bwork = b->bws ? tbuf_alloc(b->bws) : NULL;
}

/* After a training forward: y, the saved mean and inverse deviation and the running averages
   checked; then cudnnBatchNormalizationBackwardEx with yDesc, y, dzDesc, dz, bnBias and the
   activation NULL, the forward's reserve and saved statistics, float alpha and beta, and dx,
   dscale and dbias checked. what: the names of those eight results in that order. */
static void bn_ex_check_backward(const struct bn_ex *b, cudnnBatchNormMode_t mode, double eps,
                                 const char *const what[8])
{
    const struct tview *x = &b->x, *p = &b->p;
    const float one = 1, zero = 0;
    tview_check(x, b->py, b->y, what[0]);
    tview_check(p, b->psm, b->mean, what[1]);
    tview_check(p, b->psv, b->inv, what[2]);
    tview_check(p, b->prm, b->rm, what[3]);
    tview_check(p, b->prv, b->rv, what[4]);
    if (CHECK_OK(cudnnBatchNormalizationBackwardEx(test_handle(), mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one,
                                                   &zero, x->desc, b->px, NULL, NULL, x->desc, b->pdy, NULL, NULL,
                                                   x->desc, b->pdx, p->desc, b->ps, NULL, b->pds, b->pdb, eps,
                                                   b->psm, b->psv, NULL, b->bwork, b->bws, b->reserve, b->rs))) {
        tview_check(x, b->pdx, b->dx, what[5]);
        tview_check(p, b->pds, b->ds, what[6]);
        tview_check(p, b->pdb, b->db, what[7]);
    }
}

static void bn_ex_free(struct bn_ex *b)
{
    tbuf_free(b->work), tbuf_free(b->reserve), tbuf_free(b->bwork);
    void *xb[] = {b->px, b->pdy, b->py, b->pdx, b->pyi}, *pbufs[] = {b->ps, b->pb, b->prm, b->prv, b->psm, b->psv,
                                                                      b->pds, b->pdb};
    for (size_t i = 0; i < TLEN(xb); i++) tview_free(&b->x, xb[i]);
    for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&b->p, pbufs[i]);
    double *hv[] = {b->xv, b->dyv, b->scale, b->bias, b->rm0, b->rv0, b->mean, b->var, b->inv,
                    b->rm, b->rv, b->y, b->yinf, b->dx, b->dpre, b->ds, b->db};
    for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
    tview_destroy(&b->x);
    tview_destroy(&b->p);
}

/* DoBatchNormalizationForwardImpl and DoBatchNormalizationBackwardImpl (cuDNN >= 7.4.2, both
   allocators given): the mode SPATIAL, or SPATIAL_PERSISTENT for training when
   TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT is set; the ops OPS_BN without side input or
   activation, yet **an activation descriptor always made and passed** (kNone: IDENTITY, NaN
   propagated, the tensor's value_max as coefficient) to the workspace query
   (CreateBatchNormForwardWorkspace: xDesc as zDesc and yDesc), the reserve query and the
   forward; zDesc x's with z NULL (no side input); the running averages zeroed first when the
   factor is 1; float alpha and beta. The backward: the workspace query with yDesc x's, dzDesc
   and the activation NULL (CreateBatchNormBackwardWorkspace), then cudnnBatchNormalizationBackwardEx
   with **yDesc, y, dzDesc, dz, bnBias and the activation NULL**, the forward's reserve, the
   saved statistics. Inference (is_training false): cudnnBatchNormalizationForwardInference in
   SPATIAL mode on the estimated mean and variance. Float NCHW and half NHWC (FusedBatchNormV3). */
TEST(compat_bn_tensorflow_identity_activation_for_ops_bn)
{
    static const struct { cudnnDataType_t t; int layout; cudnnBatchNormMode_t mode; double factor; } cases[] = {
        {CUDNN_DATA_FLOAT, TV_NCHW, CUDNN_BATCHNORM_SPATIAL, 1.0},
        {CUDNN_DATA_HALF, TV_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, 0.1},
        {CUDNN_DATA_FLOAT, TV_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, 0.25},
    };
    cudnnHandle_t h = test_handle();
    const double eps = 0.001;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int d[4] = {3, 8, 4, 3}, pd[4] = {1, 8, 1, 1};
        struct bn_ex b;
        tview_init(&b.x, cases[k].t, 4, d, cases[k].layout);
        tview_init(&b.p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
        const struct ref_bn_shape sh = {d[0], d[1], d[2] * d[3], false};
        /* stream->ThenMemZero(batch_mean), (batch_var) when the factor is 1 */
        bn_ex_init(&b, &sh, eps, cases[k].factor, cases[k].factor == 1.0);
        cudnnActivationDescriptor_t act;
        CHECK_OK(cudnnCreateActivationDescriptor(&act));
        CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, FLT_MAX));
        const cudnnBatchNormMode_t mode = cases[k].mode;
        const float one = 1, zero = 0;
        const struct tview *x = &b.x, *p = &b.p;
        /* inference on the estimated statistics, SPATIAL whatever the training mode */
        if (CHECK_OK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x->desc, b.px,
                                                             x->desc, b.pyi, p->desc, b.ps, b.pb, b.prm, b.prv, eps)))
            tview_check(x, b.pyi, b.yinf, "TensorFlow's inference");
        bn_ex_workspaces(&b, mode, act);
        if (CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero, x->desc,
                                                              b.px, x->desc, NULL, x->desc, b.py, p->desc, b.ps, b.pb,
                                                              cases[k].factor, b.prm, b.prv, eps, b.psm, b.psv, act,
                                                              b.work, b.ws, b.reserve, b.rs))) {
            static const char *const what[8] = {"TensorFlow's training y", "saved mean", "saved inverse deviation",
                                                "running mean", "running variance", "TensorFlow's dx",
                                                "scale_backprop", "offset_backprop"};
            bn_ex_check_backward(&b, mode, eps, what);
        }
        cudnnDestroyActivationDescriptor(act);
        bn_ex_free(&b);
    }
}

/* The LRN op on the GPU (tensorflow/core/kernels/lrn_op.cc, LaunchLRN and LaunchLRNGrad; the
   stream executor's DoNormalizeWithDimensions and DoNormalizeBackwardWithDimensions): the NHWC
   tensor described in cuDNN's dim order {N, C, H, W} with **channels-last strides** (kBatchYXDepth
   through cudnnSetTensorNdDescriptor), one descriptor for every tensor; lrnN = 2 depth_radius + 1
   with depth_radius in [1, 7], cuDNN's alpha = lrnN times the op's ("the cuDNN alpha is n times
   the SE alpha"), beta >= 0.01, bias >= 1e-5; float alpha 1 and beta 0; the backward given the
   forward's output as y, the incoming gradient as dy and the input image as x. */
TEST(compat_lrn_tensorflow_channels_last_scaled_alpha)
{
    static const struct { int radius; double alpha, beta, bias; } cases[] = {
        {2, 1.0, 0.5, 1.0}, {1, 1e-4, 0.75, 2.0}, {7, 0.05, 0.01, 1e-5}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int d[4] = {2, 17, 3, 4}; /* N, C, H, W: the op's (batch, rows, cols, depth) */
        const int st[4] = {d[2] * d[3] * d[1], 1, d[3] * d[1], d[1]};
        const unsigned n = 2 * (unsigned)cases[k].radius + 1;
        const struct ref_lrn_params q = {(int)n, n * cases[k].alpha, cases[k].beta, cases[k].bias};
        struct tview v;
        tview_init(&v, CUDNN_DATA_FLOAT, 4, d, TV_NHWC);
        for (int i = 0; i < 4; i++) CHECK(v.strides[i] == st[i]);
        cudnnTensorDescriptor_t td;
        CHECK_OK(cudnnCreateTensorDescriptor(&td));
        CHECK_OK(cudnnSetTensorNdDescriptor(td, CUDNN_DATA_FLOAT, 4, d, st));
        cudnnLRNDescriptor_t ld;
        CHECK_OK(cudnnCreateLRNDescriptor(&ld));
        CHECK_OK(cudnnSetLRNDescriptor(ld, n, q.alpha, q.beta, q.k));
        double *x = tview_random(v.count, -2, 2), *dy = tview_random(v.count, -1, 1);
        double *y = malloc(sizeof(double) * (size_t)v.count), *dx = malloc(sizeof(double) * (size_t)v.count);
        void *px = tview_upload(&v, x), *pdy = tview_upload(&v, dy), *py = tview_upload(&v, NULL);
        void *pdx = tview_upload(&v, NULL);
        ref_lrn_forward(d[0], d[1], d[2] * d[3], &q, x, y);
        ref_lrn_backward(d[0], d[1], d[2] * d[3], &q, x, dy, dx);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, td, px, &zero, td, py))) {
            tview_check(&v, py, y, "TensorFlow's LRN");
            if (CHECK_OK(cudnnLRNCrossChannelBackward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, td, py, td, pdy, td,
                                                      px, &zero, td, pdx)))
                tview_check(&v, pdx, dx, "TensorFlow's LRN gradient");
        }
        tview_free(&v, px), tview_free(&v, pdy), tview_free(&v, py), tview_free(&v, pdx);
        free(x), free(dy), free(y), free(dx);
        cudnnDestroyLRNDescriptor(ld);
        cudnnDestroyTensorDescriptor(td);
        tview_destroy(&v);
    }
}

/* ---- PyTorch's cudnn_convolution_add_relu (aten/src/ATen/native/cudnn/Conv_v7.cpp) ----------- */

/* raw_cudnn_convolution_add_relu_out_v7: y = relu(conv(x) + alpha z + bias) by
   cudnnConvolutionBiasActivationForward, alpha1 one and alpha2 `alpha` as Constants of the data
   type (float for float and half, double for double), z described like y, the bias descriptor
   from bias.expand({1, C}) padded to y's rank ({1, C, 1, 1}, the size-1 strides made canonical by
   fixSizeOneDimStride), the activation RELU; AlgoIterator::try_all over the SUCCESS results of
   cudnnGetConvolutionForwardAlgorithm_v7 (asked for its MaxCount), each with a workspace of its
   memory and its math type set on the descriptor, until one runs. Float NCHW, half
   channels-last with float compute, double. */
TEST(compat_conv_pytorch_add_relu_try_all)
{
    static const struct { cudnnDataType_t t, compute; int layout; double alpha; } cases[] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, TV_NCHW, 1.0},
        {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, TV_NHWC, 0.5},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, TV_NCHW, -0.75},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 6, .k = 8, .groups = 2, .in = {7, 6}, .filt = {3, 3},
                              .pad = {1, 1}, .stride = {1, 2}, .dil = {1, 1}};
        ref_conv_out_dims(&rc);
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        const int bd[4] = {1, rc.k, 1, 1}, bs[4] = {rc.k, 1, 1, 1};
        const cudnnTensorFormat_t fmt = cases[k].layout == TV_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
        struct tview x, y, w;
        tconv_views(&rc, t, cases[k].layout, cases[k].layout, &x, &w, &y);
        const int pad[2] = {1, 1}, stride[2] = {1, 2}, dil[2] = {1, 1};
        CHECK_OK(cudnnSetConvolutionNdDescriptor(r.cd, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                                 cases[k].compute));
        CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups));
        CHECK_OK(cudnnSetFilterNdDescriptor(r.wd, t, fmt, 4, w.dims));
        cudnnTensorDescriptor_t bdesc;
        CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
        CHECK_OK(cudnnSetTensorNdDescriptor(bdesc, t, 4, bd, bs));
        double *z = tview_random(y.count, -1, 1), *bias = tview_random(rc.k, -0.5, 0.5);
        double *want = malloc(sizeof(double) * (size_t)y.count);
        void *px = tview_upload(&x, r.x), *pw = tview_upload(&w, r.w), *pz = tview_upload(&y, z);
        void *pb = tvalues_upload(t, bias, rc.k), *py = tview_upload(&y, NULL);
        const long per = (long)rc.out[0] * rc.out[1];
        for (long i = 0; i < y.count; i++) {
            const double v = r.y[i] + cases[k].alpha * z[i] + bias[i / per % rc.k];
            want[i] = v > 0 ? v : 0;
        }
        cudnnActivationDescriptor_t act;
        CHECK_OK(cudnnCreateActivationDescriptor(&act));
        CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0));
        int max = 0, got = 0;
        CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max));
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, x.desc, r.wd, r.cd, y.desc, max, &got, perf));
        struct tscale one, a2;
        const void *alpha1 = tscale(&one, t, 1), *alpha2 = tscale(&a2, t, cases[k].alpha);
        bool ran = false;
        for (int i = 0; i < got && !ran; i++) {
            if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
            CHECK_OK(cudnnSetConvolutionMathType(r.cd, perf[i].mathType));
            void *ws = perf[i].memory ? tbuf_alloc(perf[i].memory) : NULL;
            cudnnStatus_t s = cudnnConvolutionBiasActivationForward(h, alpha1, x.desc, px, r.wd, pw, r.cd,
                                                                    perf[i].algo, ws, perf[i].memory, alpha2, y.desc,
                                                                    pz, bdesc, pb, act, y.desc, py);
            tbuf_free(ws);
            if (s == CUDNN_STATUS_NOT_SUPPORTED) continue; /* try_all moves on */
            ran = CHECK_OK(s);
            if (ran)
                tview_check_blend(&y, py, want, NULL, 1, 0, tconv_tolerance(t, t, perf[i].mathType),
                                  "PyTorch's conv + add + relu");
            CHECK(i == 0); /* the first SUCCESS result runs */
        }
        CHECK(ran);
        cudnnDestroyActivationDescriptor(act);
        cudnnDestroyTensorDescriptor(bdesc);
        tview_free(&x, px), tview_free(&w, pw), tview_free(&y, pz), tview_free(&y, py);
        tbuf_free(pb);
        free(z), free(bias), free(want);
        tview_destroy(&x), tview_destroy(&y), tview_destroy(&w);
        tconv_run_free(&r);
    }
}

/* ---- MATLAB GPU Coder's generated code (MWCudnnFusedConvActivationLayerImpl.cu) --------------- */

/* The fused convolution + ReLU layer GPU Coder emits (seen in a ROS AlexNet deployment,
   NamDinhRobotics/ALexnet_ROS_Cpp src/codegen): cudnnSetConvolution2dDescriptor with FLOAT
   compute, TENSOR_OP_MATH_ALLOW_CONVERSION on float data (FP16_ENABLED builds), the group count
   when above 1; asymmetric padding done by copying x into a zeroed larger buffer and convolving
   with pad 0; the filter {K, C/g, kh, kw} and the bias {1, K, 1, 1} by the 4-D setters; RELU
   with NaN not propagated; the algorithm results[0] of cudnnGetConvolutionForwardAlgorithm_v7
   asked for 3 results, its status unread; the network's one workspace passed with its allocated
   size (at least the layer's query). One input: alpha2 0 and **z the output buffer**; two
   inputs: alpha2 1 and z the second input, **the output written over it** (y == z). */
TEST(compat_conv_gpucoder_fused_relu_residual_in_place)
{
    cudnnHandle_t h = test_handle();
    for (int inputs = 1; inputs <= 2; inputs++) {
        /* pads top 1, bottom 0, left 0, right 1: x padded to (H + 1) x (W + 1), then pad 0 */
        const int n = 2, c = 4, hh = 5, ww = 6, k = 6, g = 2;
        struct ref_conv rc = {.nsp = 2, .n = n, .c = c, .k = k, .groups = g, .in = {hh + 1, ww + 1},
                              .filt = {3, 3}, .stride = {1, 1}, .dil = {1, 1}};
        ref_conv_out_dims(&rc);
        struct tconv_run r;
        tconv_run_init(&r, &rc, CUDNN_DATA_FLOAT);
        /* the padded copy: row 0 and column W zero */
        for (long i = 0; i < r.nx; i++) {
            const int row = (int)(i / rc.in[1] % rc.in[0]), col = (int)(i % rc.in[1]);
            if (row == 0 || col == ww) r.x[i] = 0;
        }
        ref_conv_fwd(&rc, r.x, r.w, r.y);
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, r.x, r.nx);
        CHECK_OK(cudnnSetConvolution2dDescriptor(r.cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
        CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, g));
        CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c / g, 3, 3));
        CHECK_OK(cudnnSetTensor4dDescriptor(r.xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, rc.in[0], rc.in[1]));
        CHECK_OK(cudnnSetTensor4dDescriptor(r.yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, k, rc.out[0], rc.out[1]));
        cudnnTensorDescriptor_t bdesc;
        CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
        CHECK_OK(cudnnSetTensor4dDescriptor(bdesc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, k, 1, 1));
        cudnnActivationDescriptor_t act;
        CHECK_OK(cudnnCreateActivationDescriptor(&act));
        CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
        cudnnConvolutionFwdAlgoPerf_t perf[3];
        int got = -1;
        CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, r.xd, r.wd, r.cd, r.yd, 3, &got, perf));
        size_t bytes = 0;
        CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd, perf[0].algo, &bytes));
        const size_t allocated = bytes + 4096; /* the network's workspace: the largest layer's */
        void *ws = tbuf_alloc(allocated);
        double *bias = tview_random(k, -0.5, 0.5), *res = tview_random(r.ny, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)r.ny);
        const long per = (long)rc.out[0] * rc.out[1];
        for (long i = 0; i < r.ny; i++) {
            const double v = r.y[i] + bias[i / per % k] + (inputs == 2 ? res[i] : 0);
            want[i] = v > 0 ? v : 0;
        }
        void *pb = tvalues_upload(CUDNN_DATA_FLOAT, bias, k);
        /* one input: y fresh (poisoned) and passed as z under alpha2 0; two: y is the residual */
        void *py = inputs == 2 ? tvalues_upload(CUDNN_DATA_FLOAT, res, r.ny) : tbuf_alloc(sizeof(float) * (size_t)r.ny);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnConvolutionBiasActivationForward(h, &one, r.xd, px, r.wd, r.pw, r.cd, perf[0].algo, ws,
                                                           allocated, inputs == 2 ? &one : &zero, r.yd, py, bdesc, pb,
                                                           act, r.yd, py)))
            tvalues_check(CUDNN_DATA_FLOAT, py, want, r.ny,
                          tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, perf[0].mathType),
                          inputs == 2 ? "GPU Coder's conv + bias + residual + ReLU over z" : "GPU Coder's conv + ReLU");
        tbuf_free(px), tbuf_free(ws), tbuf_free(pb), tbuf_free(py);
        free(bias), free(res), free(want);
        cudnnDestroyActivationDescriptor(act);
        cudnnDestroyTensorDescriptor(bdesc);
        tconv_run_free(&r);
    }
}

/* GPU Coder's max pooling layer (MWCudnnMaxPoolingLayerImpl.cu): cudnnSetPooling2dDescriptor MAX
   with NaN not propagated, the window the whole image when the layer pools globally. int8
   networks (accel mode "INT8x4"): x and y by cudnnSetTensor4dDescriptor(NCHW_VECT_C,
   **CUDNN_DATA_INT8x4**), alpha the float 2^scalingExponent and beta 0 (here also INT8x32). Float
   networks asking for the max indices: the forward, then **cudnnPoolingBackward with dy filled with
   1, 2, ..., (output count)** (y's descriptor for y and dy, x's for x and dx, beta 0): each input
   that won a window gets that window's number, which a kernel turns into indices. */
TEST(compat_pool_gpucoder_int8_vectors_and_index_backward)
{
    static const struct { cudnnDataType_t t; int c, win, pad, stride, exponent; } cases[] = {
        {CUDNN_DATA_INT8x4, 8, 3, 1, 2, 1}, {CUDNN_DATA_INT8x4, 4, 5, 0, 1, -2}, {CUDNN_DATA_INT8x32, 32, 2, 0, 2, 0},
        {CUDNN_DATA_INT8x4, 12, 6, 0, 1, 0}, /* global: the whole 6 x 6 image */
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int n = 2, c = cases[k].c, in[2] = {6, 6};
        const int o = (6 + 2 * cases[k].pad - cases[k].win) / cases[k].stride + 1, out[2] = {o, o};
        const int xd[4] = {n, c, 6, 6}, yd[4] = {n, c, o, o};
        struct tview x, y;
        tview_init(&x, cases[k].t, 4, xd, TV_NCHW_VECT), tview_init(&y, cases[k].t, 4, yd, TV_NCHW_VECT);
        cudnnTensorDescriptor_t xdesc, ydesc;
        CHECK_OK(cudnnCreateTensorDescriptor(&xdesc));
        CHECK_OK(cudnnCreateTensorDescriptor(&ydesc));
        CHECK_OK(cudnnSetTensor4dDescriptor(xdesc, CUDNN_TENSOR_NCHW_VECT_C, cases[k].t, n, c, 6, 6));
        CHECK_OK(cudnnSetTensor4dDescriptor(ydesc, CUDNN_TENSOR_NCHW_VECT_C, cases[k].t, n, c, o, o));
        double *xv = tview_random(x.count, -128, 127), *want = malloc(sizeof(double) * (size_t)y.count);
        for (int64_t i = 0; i < x.count; i++) xv[i] = nearbyint(xv[i]);
        const struct ref_pool rp = {CUDNN_POOLING_MAX, false, 2, {cases[k].win, cases[k].win},
                                    {cases[k].pad, cases[k].pad}, {cases[k].stride, cases[k].stride}};
        ref_pooling_forward(&rp, n, c, in, out, xv, want);
        const float alpha = ldexpf(1, cases[k].exponent), zero = 0;
        for (int64_t i = 0; i < y.count; i++) { /* scaled, rounded to nearest even, saturated */
            const double v = nearbyint(want[i] * alpha);
            want[i] = v < -128 ? -128 : v > 127 ? 127 : v;
        }
        void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL);
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        if (CHECK_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, cases[k].win,
                                                 cases[k].win, cases[k].pad, cases[k].pad, cases[k].stride,
                                                 cases[k].stride)) &&
            CHECK_OK(cudnnPoolingForward(h, pd, &alpha, xdesc, px, &zero, ydesc, py)))
            tview_check(&y, py, want, "GPU Coder's int8 max pooling in vectors");
        /* the backward stays floating-point only */
        void *pdx = tview_upload(&x, NULL);
        CHECK_STATUS(cudnnPoolingBackward(h, pd, &alpha, ydesc, py, ydesc, py, xdesc, px, &zero, xdesc, pdx),
                     CUDNN_STATUS_NOT_SUPPORTED);
        tview_free(&x, pdx);
        cudnnDestroyPoolingDescriptor(pd);
        cudnnDestroyTensorDescriptor(xdesc), cudnnDestroyTensorDescriptor(ydesc);
        tview_free(&x, px), tview_free(&y, py);
        free(xv), free(want);
        tview_destroy(&x), tview_destroy(&y);
    }
    /* the float layer's max indices: windows that do not overlap, so each input wins at most one */
    const int xd[4] = {2, 3, 6, 8}, yd[4] = {2, 3, 3, 4}, in[2] = {6, 8}, out[2] = {3, 4};
    struct tview x, y;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW), tview_init(&y, CUDNN_DATA_FLOAT, 4, yd, TV_NCHW);
    double *xv = tview_random(x.count, -4, 4), *yv = malloc(sizeof(double) * (size_t)y.count);
    double *ids = malloc(sizeof(double) * (size_t)y.count), *dx = malloc(sizeof(double) * (size_t)x.count);
    for (int64_t i = 0; i < y.count; i++) ids[i] = (double)(i + 1);
    const struct ref_pool rp = {CUDNN_POOLING_MAX, false, 2, {2, 2}, {0, 0}, {2, 2}};
    ref_pooling_forward(&rp, 2, 3, in, out, xv, yv);
    ref_pooling_backward(&rp, 2, 3, in, out, xv, ids, dx);
    void *px = tview_upload(&x, xv), *py = tview_upload(&y, NULL), *pids = tview_upload(&y, ids);
    void *pdx = tview_upload(&x, NULL);
    cudnnPoolingDescriptor_t pd;
    CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
    const float one = 1, zero = 0;
    if (CHECK_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2)) &&
        CHECK_OK(cudnnPoolingForward(h, pd, &one, x.desc, px, &zero, y.desc, py)) &&
        CHECK_OK(cudnnPoolingBackward(h, pd, &one, y.desc, py, y.desc, pids, x.desc, px, &zero, x.desc, pdx)))
        tview_check(&x, pdx, dx, "each window's number at its maximum");
    cudnnDestroyPoolingDescriptor(pd);
    tview_free(&x, px), tview_free(&y, py), tview_free(&y, pids), tview_free(&x, pdx);
    free(xv), free(yv), free(ids), free(dx);
    tview_destroy(&x), tview_destroy(&y);
}

/* ---- ONNX Runtime's Conv (onnxruntime/core/providers/cuda/nn/conv.cc, the 1.x releases) -------- */

/* Conv<T>::ComputeInternal: x, y and the filter by cudnnSetTensorNdDescriptor /
   cudnnSetFilterNdDescriptor packed, **a 1-D convolution padded to 2-D** (a trailing extent of 1
   on x, y and w, the pads {begin, 0}, stride and dilation 1 appended); cudnnSetConvolutionNdDescriptor
   with **the data's own type as compute type** (HALF for half), the group count, TENSOR_OP_MATH
   for half before the search; **cudnnFindConvolutionForwardAlgorithmEx asked for 1 result into the
   real output** with a 32 MiB search workspace, its math type set after, the workspace its
   memory; alpha 1, beta 0; the bias by cudnnAddTensor of {1, M, 1, 1} with alpha and beta 1. */
TEST(compat_conv_onnxruntime_find_one_into_output)
{
    static const struct { cudnnDataType_t t; int rank, groups; } cases[] = {
        {CUDNN_DATA_FLOAT, 1, 1}, {CUDNN_DATA_HALF, 2, 2}, {CUDNN_DATA_DOUBLE, 1, 3}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const bool one_d = cases[k].rank == 1;
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 6, .k = 12, .groups = cases[k].groups,
                              .in = {11, one_d ? 1 : 7}, .filt = {3, one_d ? 1 : 3}, .pad = {1, one_d ? 0 : 1},
                              .stride = {2, 1}, .dil = {1, 1}};
        ref_conv_out_dims(&rc);
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        int xd[5], wd[5], yd[5];
        tconv_dims(&rc, xd, wd, yd);
        const int bd[4] = {1, rc.k, 1, 1}, xs[4] = {xd[1] * xd[2] * xd[3], xd[2] * xd[3], xd[3], 1};
        const int ys[4] = {yd[1] * yd[2] * yd[3], yd[2] * yd[3], yd[3], 1}, bs[4] = {rc.k, 1, 1, 1};
        const int pad[2] = {rc.pad[0], rc.pad[1]}, stride[2] = {2, 1}, dil[2] = {1, 1};
        cudnnTensorDescriptor_t bdesc;
        CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
        CHECK_OK(cudnnSetTensorNdDescriptor(r.xd, t, 4, xd, xs));
        CHECK_OK(cudnnSetTensorNdDescriptor(r.yd, t, 4, yd, ys));
        CHECK_OK(cudnnSetTensorNdDescriptor(bdesc, t, 4, bd, bs));
        CHECK_OK(cudnnSetFilterNdDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, 4, wd));
        CHECK_OK(cudnnSetConvolutionNdDescriptor(r.cd, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION, t));
        CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups));
        if (t == CUDNN_DATA_HALF) CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH));
        const size_t search_bytes = 32u << 20;
        void *search = tbuf_alloc(search_bytes);
        cudnnConvolutionFwdAlgoPerf_t perf;
        int got = 0;
        if (CHECK_OK(cudnnFindConvolutionForwardAlgorithmEx(h, r.xd, r.px, r.wd, r.pw, r.cd, r.yd, r.py, 1, &got,
                                                            &perf, search, search_bytes)) &&
            CHECK(got == 1 && perf.status == CUDNN_STATUS_SUCCESS)) {
            CHECK_OK(cudnnSetConvolutionMathType(r.cd, perf.mathType));
            double *bias = tview_random(rc.k, -0.5, 0.5), *want = malloc(sizeof(double) * (size_t)r.ny);
            void *pb = tvalues_upload(t, bias, rc.k), *ws = perf.memory ? tbuf_alloc(perf.memory) : NULL;
            const long per = (long)rc.out[0] * rc.out[1];
            for (long i = 0; i < r.ny; i++) want[i] = r.y[i] + bias[i / per % rc.k];
            struct tscale one, zero;
            tbuf_poison(r.py, tdtype_size(t) * (size_t)r.ny);
            if (CHECK_OK(cudnnConvolutionForward(h, tscale(&one, t, 1), r.xd, r.px, r.wd, r.pw, r.cd, perf.algo, ws,
                                                 perf.memory, tscale(&zero, t, 0), r.yd, r.py)) &&
                CHECK_OK(cudnnAddTensor(h, tscale(&one, t, 1), bdesc, pb, tscale(&one, t, 1), r.yd, r.py)))
                tvalues_check(t, r.py, want, r.ny, tconv_tolerance(t, t, perf.mathType), "ONNX Runtime's Conv + bias");
            tbuf_free(pb), tbuf_free(ws);
            free(bias), free(want);
        }
        tbuf_free(search);
        cudnnDestroyTensorDescriptor(bdesc);
        tconv_run_free(&r);
    }
}

/* ---- layer normalization as batch normalization ---------------------------------------------- */

/* OneFlow's layer_norm and layer_norm_grad kernels (oneflow/user/kernels/layer_norm_gpu_kernel.cu,
   LayerNormCudnnBnCtx): the rows of x are the channels of a 1 x rows x 1 x W NCHW tensor, the
   parameters 1 x rows x 1 x 1 (float for half data), SPATIAL_PERSISTENT, a scale of ones and a
   bias of zeros made in a temporary buffer, factor 1.0 with **both running averages NULL**, the
   saved mean and inverse variance the op's outputs; the backward from them with **dscale and
   dbias one buffer** (the temporary's second slot serves both: `cudnn_bn_scale_diff_buf_dptr` and
   `cudnn_bn_bias_diff_buf_dptr` are the same address), alphaParamDiff 1 and betaParamDiff 0, only
   dx kept. CTranslate2's first LayerNorm (src/ops/layer_norm_gpu.cu): 1 x rows x depth x 1 in SPATIAL
   mode, the parameters derived, **factor 0**, running averages and saved statistics NULL, epsilon
   CUDNN_BN_MIN_EPSILON (0). ONNX Runtime's LayerNormCudnn (a CUDA kernel of its early training
   code): 1 x N x M x 1 SPATIAL, factor 1, running NULL, saved statistics the op's Mean and
   InvStdDev outputs. */
TEST(compat_bn_layer_norm_as_batch_norm)
{
    enum { ONEFLOW, CTRANSLATE2, ORT };
    static const struct { int who; cudnnDataType_t t; int rows, width; double eps; } cases[] = {
        {ONEFLOW, CUDNN_DATA_FLOAT, 6, 10, 1e-5},  {ONEFLOW, CUDNN_DATA_DOUBLE, 5, 7, 1e-5},
        {ONEFLOW, CUDNN_DATA_HALF, 4, 16, 1e-5},   {CTRANSLATE2, CUDNN_DATA_FLOAT, 3, 12, CUDNN_BN_MIN_EPSILON},
        {ORT, CUDNN_DATA_FLOAT, 7, 9, 1e-5},       {ORT, CUDNN_DATA_DOUBLE, 2, 33, 1e-12},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const int who = cases[k].who, rows = cases[k].rows, w = cases[k].width;
        const cudnnDataType_t pt = t == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : t;
        const int d1[4] = {1, rows, 1, w}, d2[4] = {1, rows, w, 1}, pd[4] = {1, rows, 1, 1};
        const cudnnBatchNormMode_t mode = who == ONEFLOW ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT : CUDNN_BATCHNORM_SPATIAL;
        struct tview x, p;
        tview_init(&x, t, 4, who == ONEFLOW ? d1 : d2, TV_NCHW);
        tview_init(&p, pt, 4, pd, TV_NCHW);
        if (who == CTRANSLATE2) CHECK_OK(cudnnDeriveBNTensorDescriptor(p.desc, x.desc, mode));
        const struct ref_bn_shape sh = {1, rows, w, false};
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
        double *ones = tview_fill(rows, 1), *zeros = tview_fill(rows, 0);
        double *mean = malloc(sizeof(double) * (size_t)rows), *var = malloc(sizeof(double) * (size_t)rows);
        double *inv = malloc(sizeof(double) * (size_t)rows), *y = malloc(sizeof(double) * (size_t)x.count);
        double *dx = malloc(sizeof(double) * (size_t)x.count), *dpre = malloc(sizeof(double) * (size_t)x.count);
        double *ds = malloc(sizeof(double) * (size_t)rows), *db = malloc(sizeof(double) * (size_t)rows);
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *pdy = tview_upload(&x, dyv);
        void *pdx = tview_upload(&x, NULL), *ps = tview_upload(&p, ones), *pb = tview_upload(&p, zeros);
        void *pm = tview_upload(&p, NULL), *pv = tview_upload(&p, NULL), *pdiff = tview_upload(&p, NULL);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_forward(&sh, xv, NULL, ones, zeros, mean, var, cases[k].eps, -1, 0, NULL, y);
        ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, ones, mean, var, cases[k].eps, dpre, dx, ds, db);
        for (int i = 0; i < rows; i++) inv[i] = 1 / sqrt(var[i] + cases[k].eps);
        struct tscale one, zero;
        const bool saved = who != CTRANSLATE2;
        if (CHECK_OK(cudnnBatchNormalizationForwardTraining(h, mode, tscale(&one, t, 1), tscale(&zero, t, 0), x.desc, px,
                                                            x.desc, py, p.desc, ps, pb, who == CTRANSLATE2 ? 0.0 : 1.0,
                                                            NULL, NULL, cases[k].eps, saved ? pm : NULL,
                                                            saved ? pv : NULL))) {
            tview_check(&x, py, y, "layer norm's normalized rows");
            if (saved) {
                tview_check(&p, pm, mean, "layer norm's mean");
                tview_check(&p, pv, inv, "layer norm's inverse deviation");
            }
            if (who == ONEFLOW &&
                CHECK_OK(cudnnBatchNormalizationBackward(h, mode, tscale(&one, t, 1), tscale(&zero, t, 0),
                                                         tscale(&one, t, 1), tscale(&zero, t, 0), x.desc, px, x.desc,
                                                         pdy, x.desc, pdx, p.desc, ps, pdiff, pdiff, cases[k].eps, pm,
                                                         pv)))
                tview_check(&x, pdx, dx, "OneFlow's layer_norm_grad dx");
        }
        void *xb[] = {px, py, pdy, pdx}, *pbufs[] = {ps, pb, pm, pv, pdiff};
        for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
        for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
        double *hv[] = {xv, dyv, ones, zeros, mean, var, inv, y, dx, dpre, ds, db};
        for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
        tview_destroy(&x);
        tview_destroy(&p);
    }
}

/* MegEngine's BN opr (dnn/src/cuda/batch_normalization/opr_impl.cpp, BNTensorDescHolder, cuDNN >=
   7.4.1): the descriptor from the op's param_dim: DIM_11HW turns N x C x H x W into **(N C) x 1 x
   H x W in PER_ACTIVATION mode** (each pixel normalized over every image and channel), DIM_1CHW
   PER_ACTIVATION, DIM_1C11 SPATIAL, DIM_111C an NHWC tensor through cudnnSetTensor4dDescriptorEx
   with its channels-last strides (TensorDesc::set) in SPATIAL_PERSISTENT for training and SPATIAL
   for inference; the parameters derived. Every training call through the Ex calls with OPS_BN:
   the workspace query given the xy descriptor as zDesc and a NULL activation, the reserve query
   with a NULL activation, cudnnBatchNormalizationForwardTrainingEx with **zDesc and z NULL** and
   the running averages updated by avg_factor; cudnnBatchNormalizationBackwardEx with yDesc, y,
   dzDesc, dz, bnBias and the activation NULL, the forward's reserve; float alpha and beta. */
TEST(compat_bn_megengine_param_dims)
{
    enum { DIM_11HW, DIM_1CHW, DIM_1C11, DIM_111C };
    static const struct { int dim; cudnnDataType_t t; } cases[] = {
        {DIM_11HW, CUDNN_DATA_FLOAT}, {DIM_1CHW, CUDNN_DATA_FLOAT}, {DIM_1C11, CUDNN_DATA_HALF},
        {DIM_111C, CUDNN_DATA_FLOAT}, {DIM_111C, CUDNN_DATA_HALF}, {DIM_11HW, CUDNN_DATA_HALF},
    };
    cudnnHandle_t h = test_handle();
    const double eps = 1e-4, factor = 0.1;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int dim = cases[k].dim;
        const cudnnDataType_t t = cases[k].t;
        /* 8 images: PER_ACTIVATION reduces over N alone, and with 3 a slot's variance was at
           times tiny enough that the float-rounded saved statistics moved dx past the tolerance. */
        const int n = 8, c = 4, hh = 3, ww = 5;
        int d[4] = {n, c, hh, ww};
        if (dim == DIM_11HW) d[0] = n * c, d[1] = 1;
        const bool per_act = dim == DIM_11HW || dim == DIM_1CHW;
        const cudnnBatchNormMode_t train_mode = per_act ? CUDNN_BATCHNORM_PER_ACTIVATION
                                              : dim == DIM_111C ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT
                                                                : CUDNN_BATCHNORM_SPATIAL;
        const cudnnBatchNormMode_t infer_mode = per_act ? CUDNN_BATCHNORM_PER_ACTIVATION : CUDNN_BATCHNORM_SPATIAL;
        struct bn_ex b;
        const struct tview *x = &b.x, *p = &b.p;
        tview_init(&b.x, t, 4, d, dim == DIM_111C ? TV_NHWC : TV_NCHW);
        CHECK_OK(cudnnSetTensor4dDescriptorEx(x->desc, t, d[0], d[1], d[2], d[3], x->strides[0], x->strides[1],
                                              x->strides[2], x->strides[3]));
        const int pd[4] = {1, d[1], per_act ? d[2] : 1, per_act ? d[3] : 1};
        tview_init(&b.p, t == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : t, 4, pd, TV_NCHW);
        cudnnTensorDescriptor_t pinfer;
        CHECK_OK(cudnnCreateTensorDescriptor(&pinfer));
        CHECK_OK(cudnnDeriveBNTensorDescriptor(p->desc, x->desc, train_mode));
        CHECK_OK(cudnnDeriveBNTensorDescriptor(pinfer, x->desc, infer_mode));
        const struct ref_bn_shape sh = {d[0], d[1], (int64_t)d[2] * d[3], per_act};
        bn_ex_init(&b, &sh, eps, factor, false);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnBatchNormalizationForwardInference(h, infer_mode, &one, &zero, x->desc, b.px, x->desc, b.pyi,
                                                             pinfer, b.ps, b.pb, b.prm, b.prv, eps)))
            tview_check(x, b.pyi, b.yinf, "MegEngine's BN inference");
        bn_ex_workspaces(&b, train_mode, NULL);
        if (CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, train_mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero,
                                                              x->desc, b.px, NULL, NULL, x->desc, b.py, p->desc, b.ps,
                                                              b.pb, factor, b.prm, b.prv, eps, b.psm, b.psv, NULL,
                                                              b.work, b.ws, b.reserve, b.rs))) {
            static const char *const what[8] = {"MegEngine's BN training y", "batch_mean", "batch_inv_variance",
                                                "running mean", "running variance", "MegEngine's BN dx",
                                                "d_bn_scale", "d_bn_bias"};
            bn_ex_check_backward(&b, train_mode, eps, what);
        }
        cudnnDestroyTensorDescriptor(pinfer);
        bn_ex_free(&b);
    }
}

/* ---- OpenVINO's NVIDIA plugin, the legacy calls (modules/nvidia_plugin/src/ops/
   convolution_components/convolution_cudnn_components.cpp, fused_convolution_cudnn.cpp) -------- */

/* ConvolutionDescriptorsCuDnn: x, w, y by the Nd setters in NCHW (cudnnSetTensorNdDescriptorEx),
   for each compute type of its list in turn (the fused convolution's {HALF, FLOAT} **whatever
   the data**, "investigate whether we need HALF here"): cudnnSetConvolutionNdDescriptor, then
   TENSOR_OP_MATH_ALLOW_CONVERSION and the group count, then cudnnGetConvolutionForwardAlgorithm_v7
   asked for **1** result, the next compute type when the call or the result is not SUCCESS, the
   workspace queried; with opBenchOption the non-Ex cudnnFindConvolutionForwardAlgorithm asked for
   1 result three times and the algorithm found most often kept. FusedConvolutionCuDnn:
   cudnnConvolutionBiasActivationForward with alpha1 1 (double for double compute, float
   otherwise), the bias {1, C, 1, 1} by the Nd setter, ReLU (PROPAGATE_NAN, coefficient 0), and
   either **alpha2 0 with z the output's own descriptor and buffer** or alpha2 1 with the add
   input as z; the workspace NULL when the algorithm needs none. Float data (HALF compute
   refused, FLOAT taken), half data (HALF compute, true half), double (DOUBLE). */
TEST(compat_conv_openvino_compute_type_fallback_fused)
{
    static const struct { cudnnDataType_t t; bool add, bench; } cases[] = {
        {CUDNN_DATA_FLOAT, true, false}, {CUDNN_DATA_HALF, false, true}, {CUDNN_DATA_DOUBLE, true, true},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 2, .in = {7, 6}, .filt = {3, 3},
                              .pad = {1, 1}, .stride = {1, 2}, .dil = {1, 1}};
        ref_conv_out_dims(&rc);
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        int xd[5], wd[5], yd[5];
        tconv_dims(&rc, xd, wd, yd);
        const int bd[4] = {1, rc.k, 1, 1}, pad[2] = {1, 1}, stride[2] = {1, 2}, dil[2] = {1, 1};
        cudnnTensorDescriptor_t bdesc;
        CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
        CHECK_OK(cudnnSetTensorNdDescriptorEx(r.xd, CUDNN_TENSOR_NCHW, t, 4, xd));
        CHECK_OK(cudnnSetTensorNdDescriptorEx(r.yd, CUDNN_TENSOR_NCHW, t, 4, yd));
        CHECK_OK(cudnnSetTensorNdDescriptorEx(bdesc, CUDNN_TENSOR_NCHW, t, 4, bd));
        CHECK_OK(cudnnSetFilterNdDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, 4, wd));
        const cudnnDataType_t tries[2] = {t == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
        cudnnConvolutionFwdAlgoPerf_t perf = {0};
        bool found = false;
        cudnnDataType_t comp = tries[0];
        for (int i = 0; i < 2 && !found; i++) {
            comp = tries[i];
            CHECK_OK(cudnnSetConvolutionNdDescriptor(r.cd, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION, comp));
            CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
            CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups));
            int got = 0;
            if (!cases[k].bench) {
                found = cudnnGetConvolutionForwardAlgorithm_v7(h, r.xd, r.wd, r.cd, r.yd, 1, &got, &perf) ==
                            CUDNN_STATUS_SUCCESS && got > 0 && perf.status == CUDNN_STATUS_SUCCESS;
            } else { /* BenchmarkOptimalAlgo: three searches, the most frequent algorithm */
                int times[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {0};
                cudnnConvolutionFwdAlgoPerf_t seen[3];
                found = true;
                for (int rep = 0; rep < 3 && found; rep++) {
                    found = cudnnFindConvolutionForwardAlgorithm(h, r.xd, r.wd, r.cd, r.yd, 1, &got, &seen[rep]) ==
                                CUDNN_STATUS_SUCCESS && got > 0 && seen[rep].status == CUDNN_STATUS_SUCCESS;
                    if (found) times[seen[rep].algo]++;
                }
                for (int rep = 0; rep < 3 && found; rep++)
                    if (rep == 0 || times[seen[rep].algo] > times[perf.algo]) perf = seen[rep];
            }
        }
        CHECK(found);
        CHECK(comp == (t == CUDNN_DATA_FLOAT ? CUDNN_DATA_FLOAT : t));
        size_t bytes = 0;
        CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd, perf.algo, &bytes));
        void *ws = bytes ? tbuf_alloc(bytes) : NULL;
        cudnnActivationDescriptor_t act;
        CHECK_OK(cudnnCreateActivationDescriptor(&act));
        CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0));
        double *bias = tview_random(rc.k, -0.5, 0.5), *add = tview_random(r.ny, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)r.ny);
        void *pb = tvalues_upload(t, bias, rc.k), *pz = cases[k].add ? tvalues_upload(t, add, r.ny) : NULL;
        const long per = (long)rc.out[0] * rc.out[1];
        for (long i = 0; i < r.ny; i++) {
            const double v = r.y[i] + bias[i / per % rc.k] + (cases[k].add ? add[i] : 0);
            want[i] = v > 0 ? v : 0;
        }
        struct tscale one, zero;
        const cudnnDataType_t st = comp == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        if (CHECK_OK(cudnnConvolutionBiasActivationForward(h, tscale(&one, st, 1), r.xd, r.px, r.wd, r.pw, r.cd,
                                                           perf.algo, ws, bytes, tscale(&zero, st, cases[k].add ? 1 : 0),
                                                           r.yd, cases[k].add ? pz : r.py, bdesc, pb, act, r.yd, r.py)))
            tvalues_check(t, r.py, want, r.ny, tconv_tolerance(t, t, perf.mathType),
                          cases[k].add ? "OpenVINO's fused conv + bias + add + ReLU" : "OpenVINO's fused conv + bias + ReLU");
        tbuf_free(ws), tbuf_free(pb), tbuf_free(pz);
        free(bias), free(add), free(want);
        cudnnDestroyActivationDescriptor(act);
        cudnnDestroyTensorDescriptor(bdesc);
        tconv_run_free(&r);
    }
}
