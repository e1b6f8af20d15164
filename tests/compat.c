/* compat.c: call patterns of real programs (docs/compatibility.md) that no op's own tests make:
   NULL for the tensor a mode does not read, the fused convolution without z, a descriptor re-set
   between calls, OpenCV's rank query and asymmetric padding, PyTorch's batch-norm Ex calls and
   convolution algorithm search, Caffe's grouped convolution, TensorRT's instance and group
   normalization, CUDA.jl's shared dropout states. Each result against the double references of
   tests/ref/ or, for the padding, the copied input.
   (compat_rnn.c, compat_rnn_more.c and compat_adv.c: the RNN, attention and CTC patterns;
   compat_fused.c: the FusedOps ones.) */
#include "conv_harness.h"
#include "desc_util.h"
#include "ref/activation.h"
#include "ref/batchnorm.h"
#include "ref/conv.h"
#include "ref/dropout.h"
#include "ref/pooling.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* cudnnActivationBackward takes f' from y for SIGMOID and TANH and from x otherwise: the other
   pointer may be NULL (programs that keep only one of them pass it twice or not at all). */
TEST(compat_activation_backward_unread_tensor_null)
{
    const int dims[4] = {2, 3, 4, 5};
    struct tview t;
    tview_init(&t, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    double *x = tview_random(t.count, -2, 2), *g = tview_random(t.count, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)t.count), *want = malloc(sizeof(double) * (size_t)t.count);
    const cudnnActivationMode_t modes[] = {CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_RELU};
    float one = 1, zero = 0;
    for (size_t m = 0; m < TLEN(modes); m++) {
        for (int64_t i = 0; i < t.count; i++) {
            y[i] = ref_activation(modes[m], false, 0, 1, x[i]);
            want[i] = ref_activation_grad(modes[m], false, 0, 1, x[i], g[i]);
        }
        void *px = tview_upload(&t, x), *py = tview_upload(&t, y), *pg = tview_upload(&t, g), *pdx = tview_upload(&t, NULL);
        cudnnActivationDescriptor_t d;
        CHECK_OK(cudnnCreateActivationDescriptor(&d));
        CHECK_OK(cudnnSetActivationDescriptor(d, modes[m], CUDNN_NOT_PROPAGATE_NAN, 0));
        bool uses_y = modes[m] == CUDNN_ACTIVATION_SIGMOID;
        if (CHECK_OK(cudnnActivationBackward(test_handle(), d, &one, t.desc, uses_y ? py : NULL, t.desc, pg, t.desc,
                                             uses_y ? NULL : px, &zero, t.desc, pdx)))
            tview_check(&t, pdx, want, uses_y ? "SIGMOID backward, x NULL" : "RELU backward, y NULL");
        cudnnDestroyActivationDescriptor(d);
        void *bufs[] = {px, py, pg, pdx};
        for (int i = 0; i < 4; i++) tview_free(&t, bufs[i]);
    }
    tview_destroy(&t);
    free(x), free(g), free(y), free(want);
}

/* cudnnConvolutionBiasActivationForward with alpha2 = 0 and z NULL: y = relu(conv(x, w) + bias). */
TEST(compat_conv_bias_activation_without_z)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {5, 6}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    const int bd[4] = {1, rc.k, 1, 1};
    struct tview tx, ty, tb;
    tconv_views(&rc, CUDNN_DATA_FLOAT, TV_NCHW, TV_NCHW, &tx, NULL, &ty);
    tview_init(&tb, CUDNN_DATA_FLOAT, 4, bd, TV_NCHW);
    long nw = ref_conv_w_count(&rc);
    double *x = tview_random(tx.count, -1, 1), *w = tview_random(nw, -1, 1), *b = tview_random(4, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)ty.count);
    float *wf = malloc(sizeof(float) * (size_t)nw);
    for (long i = 0; i < nw; i++) wf[i] = (float)w[i], w[i] = wf[i];
    void *px = tview_upload(&tx, x), *pb = tview_upload(&tb, b), *py = tview_upload(&ty, NULL);
    void *pw = tbuf_from(wf, sizeof(float) * (size_t)nw);
    ref_conv_fwd(&rc, x, w, want);
    int per = rc.out[0] * rc.out[1];
    for (int64_t i = 0; i < ty.count; i++) want[i] = fmax(0, want[i] + b[(i / per) % 4]);
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t conv;
    cudnnActivationDescriptor_t relu;
    cudnnCreateFilterDescriptor(&fd);
    cudnnCreateConvolutionDescriptor(&conv);
    cudnnCreateActivationDescriptor(&relu);
    CHECK_OK(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
    CHECK_OK(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH));
    CHECK_OK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    size_t ws_bytes = 0;
    CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(test_handle(), tx.desc, fd, conv, ty.desc, algo, &ws_bytes));
    void *ws = ws_bytes ? tbuf_alloc(ws_bytes) : NULL;
    float one = 1, zero = 0;
    if (CHECK_OK(cudnnConvolutionBiasActivationForward(test_handle(), &one, tx.desc, px, fd, pw, conv, algo, ws, ws_bytes,
                                                       &zero, ty.desc, NULL, tb.desc, pb, relu, ty.desc, py)))
        tview_check(&ty, py, want, "bias + ReLU forward, alpha2 = 0, z NULL");
    tbuf_free(ws);
    tbuf_free(pw);
    tview_free(&tx, px);
    tview_free(&tb, pb);
    tview_free(&ty, py);
    cudnnDestroyFilterDescriptor(fd);
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyActivationDescriptor(relu);
    tview_destroy(&tx);
    tview_destroy(&ty);
    tview_destroy(&tb);
    free(x), free(w), free(b), free(want), free(wf);
}

/* One pooling descriptor re-set before each call (a framework's pool of descriptors per stream):
   each call follows the descriptor as it is then. */
TEST(compat_pooling_descriptor_reset_between_calls)
{
    const int xd[4] = {2, 3, 6, 6}, yd[4] = {2, 3, 3, 3}, in[2] = {6, 6}, out[2] = {3, 3};
    struct tview tx, ty;
    tview_init(&tx, CUDNN_DATA_FLOAT, 4, xd, TV_NHWC);
    tview_init(&ty, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC);
    double *x = tview_random(tx.count, -3, 3), *want = malloc(sizeof(double) * (size_t)ty.count);
    void *px = tview_upload(&tx, x);
    cudnnPoolingDescriptor_t d;
    CHECK_OK(cudnnCreatePoolingDescriptor(&d));
    const cudnnPoolingMode_t modes[] = {CUDNN_POOLING_MAX, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                        CUDNN_POOLING_MAX};
    const int win[] = {2, 3, 3}, pad[] = {0, 1, 1};
    float one = 1, zero = 0;
    for (int k = 0; k < 3; k++) {
        CHECK_OK(cudnnSetPooling2dDescriptor(d, modes[k], CUDNN_NOT_PROPAGATE_NAN, win[k], win[k], pad[k], pad[k], 2, 2));
        struct ref_pool r = {modes[k], false, 2, {win[k], win[k]}, {pad[k], pad[k]}, {2, 2}};
        ref_pooling_forward(&r, 2, 3, in, out, x, want);
        void *py = tview_upload(&ty, NULL);
        char what[64];
        snprintf(what, sizeof what, "pooling after re-set %d", k);
        if (CHECK_OK(cudnnPoolingForward(test_handle(), d, &one, tx.desc, px, &zero, ty.desc, py)))
            tview_check(&ty, py, want, what);
        tview_free(&ty, py);
    }
    cudnnDestroyPoolingDescriptor(d);
    tview_free(&tx, px);
    tview_destroy(&tx);
    tview_destroy(&ty);
    free(x), free(want);
}

/* OpenCV's DNN module learns a tensor's rank by asking cudnnGetTensorNdDescriptor for
   CUDNN_DIM_MAX + 1 dims with arrays of CUDNN_DIM_MAX ints, nbDims written into the first int of
   the array it then passes as the output dims, dims and strides into one shared array; then it
   asks cudnnGetConvolutionNdForwardOutputDim for that rank. Only nbDims values may be written:
   the ints past them stay as they were. */
TEST_ONCE(compat_get_tensor_nd_rank_query)
{
    cudnnTensorDescriptor_t x;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    CHECK_OK(cudnnCreateTensorDescriptor(&x));
    CHECK_OK(cudnnCreateFilterDescriptor(&w));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&conv));
    CHECK_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 10, 12));
    CHECK_OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, 3, 3, 3));
    CHECK_OK(cudnnSetConvolution2dDescriptor(conv, 1, 1, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    int output[CUDNN_DIM_MAX + 1], temp[CUDNN_DIM_MAX + 1];
    for (int i = 0; i <= CUDNN_DIM_MAX; i++) output[i] = temp[i] = -7;
    cudnnDataType_t dt;
    CHECK_OK(cudnnGetTensorNdDescriptor(x, CUDNN_DIM_MAX + 1, &dt, output, temp, temp));
    CHECK(dt == CUDNN_DATA_FLOAT && output[0] == 4);
    CHECK(temp[0] == 12 * 10 * 3 && temp[3] == 1); /* the strides, written after the dims */
    for (int i = 4; i <= CUDNN_DIM_MAX; i++) CHECK(temp[i] == -7);
    const int rank = output[0];
    CHECK_OK(cudnnGetConvolutionNdForwardOutputDim(conv, x, w, rank, output));
    CHECK(output[0] == 2 && output[1] == 5 && output[2] == 5 && output[3] == 6);
    for (int i = 4; i <= CUDNN_DIM_MAX; i++) CHECK(output[i] == -7);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(conv);
}

/* OpenCV's DNN module pads a convolution's or pooling's input asymmetrically (its cuDNN calls
   take symmetric padding only) with cudnnSetTensorTransformDescriptor over every dim (0 for N
   and C), NULL fold factors and FOLD, then cudnnTransformTensorEx with alpha 1 and beta 0 into
   the larger tensor: the data lands at the left pads' offset, zeros around it. */
TEST(compat_transform_asymmetric_padding)
{
    enum { N = 2, C = 3, H = 3, W = 4, HO = H + 1 + 0, WO = W + 0 + 2 };
    const int32_t left[4] = {0, 0, 1, 0}, right[4] = {0, 0, 0, 2};
    cudnnTensorDescriptor_t x, y;
    cudnnTensorTransformDescriptor_t t;
    CHECK_OK(cudnnCreateTensorDescriptor(&x));
    CHECK_OK(cudnnCreateTensorDescriptor(&y));
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&t));
    CHECK_OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    CHECK_OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, HO, WO));
    CHECK_OK(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, left, right, NULL, CUDNN_TRANSFORM_FOLD));
    float xs[N * C * H * W], ys[N * C * HO * WO];
    for (int i = 0; i < N * C * H * W; i++) xs[i] = (float)trand_uniform(-1, 1);
    void *dx = tbuf_from(xs, sizeof xs), *dy = tbuf_alloc(sizeof ys);
    const float one = 1, zero = 0;
    CHECK_OK(cudnnTransformTensorEx(test_handle(), t, &one, x, dx, &zero, y, dy));
    tbuf_download(ys, dy, sizeof ys);
    int bad = 0;
    for (int nc = 0; nc < N * C; nc++)
        for (int h = 0; h < HO; h++)
            for (int w = 0; w < WO; w++) {
                const int sh = h - left[2], sw = w - left[3];
                const float want = sh >= 0 && sh < H && sw >= 0 && sw < W ? xs[(nc * H + sh) * W + sw] : 0.0f;
                bad += ys[(nc * HO + h) * WO + w] != want;
            }
    CHECK(bad == 0);
    tbuf_free(dx);
    tbuf_free(dy);
    cudnnDestroyTensorTransformDescriptor(t);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
}

/* ---- the batch-norm Ex calls ------------------------------------------------------------------ */

/* One training problem of the batch-norm Ex tests below: x of type t in layout, z and dy of its
   shape (z drawn from [-z_range, z_range]), float parameters per channel, or per activation when
   per_act, the device copies of every input and a buffer for every output, and the reference:
   the batch statistics (with the inverse standard deviation the forward saves), y of
   act(bn(x) + z) (z added when add; act -1: none) with its pre-activation values, and the
   backward's dpre (dz), dx, dscale and dbias from dy. The running averages are the tests'. */
struct bn_ex {
    struct ref_bn_shape sh;
    int64_t slots, count;
    struct tview x, p;
    double *xv, *zv, *dyv, *scale, *bias, *rmean, *rvar;
    double *mean, *var, *invstd, *pre, *y, *dpre, *dx, *ds, *db;
    void *px, *pz, *pdy, *py, *pdx, *pdz, *ps, *pb, *prm, *prv, *psm, *psv, *pds, *pdb;
};

static void bn_ex_init(struct bn_ex *b, cudnnDataType_t t, int layout, const int d[4], bool per_act, double z_range,
                       bool add, int act, double eps)
{
    b->sh = (struct ref_bn_shape){d[0], d[1], d[2] * d[3], per_act};
    b->slots = ref_bn_slots(&b->sh), b->count = b->sh.n * b->sh.c * b->sh.s;
    const int64_t slots = b->slots, count = b->count;
    const int pd[4] = {1, d[1], per_act ? d[2] : 1, per_act ? d[3] : 1};
    tview_init(&b->x, t, 4, d, layout);
    tview_init(&b->p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
    b->xv = tview_random(count, -2, 2), b->zv = tview_random(count, -z_range, z_range);
    b->dyv = tview_random(count, -1, 1);
    b->scale = tview_random(slots, 0.5, 1.5), b->bias = tview_random(slots, -0.5, 0.5);
    b->rmean = tview_random(slots, -0.2, 0.2), b->rvar = tview_random(slots, 0.5, 1.5);
    b->px = tview_upload(&b->x, b->xv), b->pz = tview_upload(&b->x, b->zv), b->pdy = tview_upload(&b->x, b->dyv);
    b->py = tview_upload(&b->x, NULL), b->pdx = tview_upload(&b->x, NULL), b->pdz = tview_upload(&b->x, NULL);
    b->ps = tview_upload(&b->p, b->scale), b->pb = tview_upload(&b->p, b->bias);
    b->prm = tview_upload(&b->p, b->rmean), b->prv = tview_upload(&b->p, b->rvar);
    b->psm = tview_upload(&b->p, NULL), b->psv = tview_upload(&b->p, NULL);
    b->pds = tview_upload(&b->p, NULL), b->pdb = tview_upload(&b->p, NULL);
    b->mean = malloc(sizeof(double) * (size_t)slots), b->var = malloc(sizeof(double) * (size_t)slots);
    b->invstd = malloc(sizeof(double) * (size_t)slots);
    b->pre = malloc(sizeof(double) * (size_t)count), b->y = malloc(sizeof(double) * (size_t)count);
    b->dpre = malloc(sizeof(double) * (size_t)count), b->dx = malloc(sizeof(double) * (size_t)count);
    b->ds = calloc((size_t)slots, sizeof(double)), b->db = calloc((size_t)slots, sizeof(double));
    ref_bn_stats(&b->sh, b->xv, b->mean, b->var);
    for (int64_t j = 0; j < slots; j++) b->invstd[j] = 1 / sqrt(b->var[j] + eps);
    ref_bn_forward(&b->sh, b->xv, add ? b->zv : NULL, b->scale, b->bias, b->mean, b->var, eps, act, 0, b->pre, b->y);
    ref_bn_backward(&b->sh, b->xv, b->dyv, b->pre, act, 0, b->scale, b->mean, b->var, eps, b->dpre, b->dx, b->ds,
                    b->db);
}

static void bn_ex_free(struct bn_ex *b)
{
    void *xb[] = {b->px, b->pz, b->pdy, b->py, b->pdx, b->pdz};
    void *pbufs[] = {b->ps, b->pb, b->prm, b->prv, b->psm, b->psv, b->pds, b->pdb};
    for (size_t i = 0; i < TLEN(xb); i++) tview_free(&b->x, xb[i]);
    for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&b->p, pbufs[i]);
    double *arrays[] = {b->xv, b->zv, b->dyv, b->scale, b->bias, b->rmean, b->rvar, b->mean, b->var,
                        b->invstd, b->pre, b->y, b->dpre, b->dx, b->ds, b->db};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    tview_destroy(&b->x);
    tview_destroy(&b->p);
}

/* PyTorch's batch norm (aten/src/ATen/native/cudnn/BatchNorm.cpp) through the Ex calls with
   CUDNN_BATCHNORM_OPS_BN: the workspace query given xDesc as zDesc and yDesc and a NULL
   activation descriptor, the reserve query with a NULL activation descriptor, the forward with z
   and the activation NULL, the backward workspace query with dzDesc and the activation NULL,
   the backward with yDesc / y, dzDesc / dz, bnBias and the activation NULL and the forward's
   (empty) reserve. Two of its shapes: a 2-D input padded to N x C x 1 x 1 in PER_ACTIVATION
   mode, and a channels-last half input with float parameters in SPATIAL_PERSISTENT mode.
   MindSpore (plugin/device/gpu/kernel/nn/batch_norm_gpu_kernel.cc, batch_norm_grad_gpu_kernel.cc)
   makes the same calls for the same shapes but never creates the descriptors OPS_BN does not
   use: its size queries pass zDesc (forward) and yDesc (backward) NULL. MXNet then: the forward
   with the factor 0 and no reserve, the backward from no saved statistics adding into its
   outputs. */
TEST(compat_bn_ex_pytorch_ops_bn)
{
    static const struct { int dims[4]; cudnnDataType_t t; int layout; cudnnBatchNormMode_t mode; } cases[] = {
        {{6, 5, 1, 1}, CUDNN_DATA_FLOAT, TV_NCHW, CUDNN_BATCHNORM_PER_ACTIVATION},
        {{2, 4, 3, 3}, CUDNN_DATA_HALF, TV_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT},
    };
    cudnnHandle_t h = test_handle();
    const double eps = 1e-5, factor = 0.1;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int *d = cases[k].dims;
        bool per_act = cases[k].mode == CUDNN_BATCHNORM_PER_ACTIVATION;
        struct bn_ex b;
        bn_ex_init(&b, cases[k].t, cases[k].layout, d, per_act, 1, false, -1, eps);
        int64_t per = ref_bn_reduced(&b.sh);
        for (int64_t j = 0; j < b.slots; j++) {
            b.rmean[j] = (1 - factor) * b.rmean[j] + factor * b.mean[j];
            b.rvar[j] = (1 - factor) * b.rvar[j] + factor * b.var[j] * (double)per / (double)(per - 1);
        }
        float one = 1, zero = 0;
        size_t ws = 1, rs = 1, bws = 1;
        const cudnnBatchNormMode_t mode = cases[k].mode;
        const cudnnBatchNormOps_t op = CUDNN_BATCHNORM_OPS_BN;
        bool ok = CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, mode, op, b.x.desc, b.x.desc,
                                                                                    b.x.desc, b.p.desc, NULL, &ws)) &&
                  CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, mode, op, NULL, b.x.desc, &rs));
        void *pws = ws ? tbuf_alloc(ws) : NULL, *prs = rs ? tbuf_alloc(rs) : NULL;
        ok = ok && CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, mode, op, &one, &zero, b.x.desc, b.px, NULL,
                                                                     NULL, b.x.desc, b.py, b.p.desc, b.ps, b.pb, factor,
                                                                     b.prm, b.prv, eps, b.psm, b.psv, NULL, pws, ws,
                                                                     prs, rs));
        ok = ok && tview_check(&b.x, b.py, b.y, "y") && tview_check(&b.p, b.psm, b.mean, "saved mean") &&
             tview_check(&b.p, b.psv, b.invstd, "saved inverse standard deviation") &&
             tview_check(&b.p, b.prm, b.rmean, "running mean") && tview_check(&b.p, b.prv, b.rvar, "running variance");
        ok = ok && CHECK_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, mode, op, b.x.desc, b.x.desc, b.x.desc,
                                                                              NULL, b.x.desc, b.p.desc, NULL, &bws));
        /* MindSpore's queries: NULL where PyTorch passes xDesc (zDesc forward, yDesc backward) */
        size_t ms_ws = 1, ms_bws = 1;
        ok = ok && CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, mode, op, b.x.desc, NULL,
                                                                                     b.x.desc, b.p.desc, NULL,
                                                                                     &ms_ws)) && CHECK(ms_ws == ws);
        ok = ok && CHECK_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, mode, op, b.x.desc, NULL, b.x.desc,
                                                                              NULL, b.x.desc, b.p.desc, NULL,
                                                                              &ms_bws)) && CHECK(ms_bws == bws);
        void *pbws = bws ? tbuf_alloc(bws) : NULL;
        ok = ok && CHECK_OK(cudnnBatchNormalizationBackwardEx(h, mode, op, &one, &zero, &one, &zero, b.x.desc, b.px,
                                                              NULL, NULL, b.x.desc, b.pdy, NULL, NULL, b.x.desc, b.pdx,
                                                              b.p.desc, b.ps, NULL, b.pds, b.pdb, eps, b.psm, b.psv,
                                                              NULL, pbws, bws, prs, rs));
        ok = ok && tview_check(&b.x, b.pdx, b.dx, "dx") && tview_check(&b.p, b.pds, b.ds, "dscale") &&
             tview_check(&b.p, b.pdb, b.db, "dbias");
        /* MXNet's (src/operator/nn/cudnn/cudnn_batch_norm.cu): the training forward again with the
           factor 0 (the running averages frozen while mirroring) and no reserve (NULL, 0); the
           backward with the saved statistics NULL (use_global_stats), the bias given, no reserve,
           adding into dx and into the parameter gradients (kAddTo: both betas 1) */
        ok = ok && CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, mode, op, &one, &zero, b.x.desc, b.px, NULL,
                                                                     NULL, b.x.desc, b.py, b.p.desc, b.ps, b.pb, 0.0,
                                                                     b.prm, b.prv, eps, b.psm, b.psv, NULL, pws, ws,
                                                                     NULL, 0));
        ok = ok && tview_check(&b.x, b.py, b.y, "MXNet's y") &&
             tview_check(&b.p, b.prm, b.rmean, "running mean, factor 0") &&
             tview_check(&b.p, b.prv, b.rvar, "running variance, factor 0");
        ok = ok && CHECK_OK(cudnnBatchNormalizationBackwardEx(h, mode, op, &one, &one, &one, &one, b.x.desc, b.px, NULL,
                                                              NULL, b.x.desc, b.pdy, NULL, NULL, b.x.desc, b.pdx,
                                                              b.p.desc, b.ps, b.pb, b.pds, b.pdb, eps, NULL, NULL, NULL,
                                                              pbws, bws, NULL, 0));
        for (int64_t i = 0; i < b.count; i++) b.dx[i] *= 2;
        for (int64_t j = 0; j < b.slots; j++) b.ds[j] *= 2, b.db[j] *= 2;
        ok = ok && tview_check(&b.x, b.pdx, b.dx, "MXNet's dx added") &&
             tview_check(&b.p, b.pds, b.ds, "MXNet's dscale added") &&
             tview_check(&b.p, b.pdb, b.db, "MXNet's dbias added");
        void *spaces[] = {pws, prs, pbws};
        for (size_t i = 0; i < TLEN(spaces); i++)
            if (spaces[i]) tbuf_free(spaces[i]);
        bn_ex_free(&b);
    }
}

/* NVIDIA Apex's channels-last batch norm (apex/contrib/csrc/groupbn, batch_norm_nhwc cuDNN path):
   half NHWC data, float parameters from cudnnDeriveBNTensorDescriptor, SPATIAL_PERSISTENT with
   CUDNN_BATCHNORM_OPS_BN_ACTIVATION (ReLU, NaN propagated) or BN_ADD_ACTIVATION (z added before
   the ReLU); the forward workspace query given xDesc as zDesc whatever the ops, the reserve
   queried and passed; the backward given y, bnBias and the activation, dzDesc and dz only when
   adding, and **the reserve only when adding: NULL, 0 for BN_ACTIVATION** (the ReLU's mask then
   comes from y); epsilon at least 1e-4. y, dx, dz, dscale and dbias against the reference. */
TEST(compat_bn_ex_apex_fused_relu_reserve_only_with_add)
{
    static const cudnnBatchNormOps_t ops[] = {CUDNN_BATCHNORM_OPS_BN_ACTIVATION, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION};
    cudnnHandle_t h = test_handle();
    const int d[4] = {2, 8, 3, 3};
    const double eps = 1e-4, factor = 0.1;
    const cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    cudnnActivationDescriptor_t relu;
    CHECK_OK(cudnnCreateActivationDescriptor(&relu));
    CHECK_OK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0));
    for (size_t k = 0; k < TLEN(ops); k++) {
        const bool add = ops[k] == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
        struct bn_ex b;
        bn_ex_init(&b, CUDNN_DATA_HALF, TV_NHWC, d, false, 1, add, CUDNN_ACTIVATION_RELU, eps);
        cudnnTensorDescriptor_t bnd;
        CHECK_OK(cudnnCreateTensorDescriptor(&bnd));
        float one = 1, zero = 0;
        size_t ws = 1, rs = 1, bws = 1;
        bool ok = CHECK_OK(cudnnDeriveBNTensorDescriptor(bnd, b.x.desc, mode)) &&
                  CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, mode, ops[k], b.x.desc, b.x.desc,
                                                                                    b.x.desc, bnd, relu, &ws)) &&
                  CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, mode, ops[k], relu, b.x.desc, &rs));
        void *pws = ws ? tbuf_alloc(ws) : NULL, *prs = rs ? tbuf_alloc(rs) : NULL;
        ok = ok && CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, mode, ops[k], &one, &zero, b.x.desc, b.px,
                                                                     add ? b.x.desc : NULL, add ? b.pz : NULL, b.x.desc,
                                                                     b.py, bnd, b.ps, b.pb, factor, b.prm, b.prv, eps,
                                                                     b.psm, b.psv, relu, pws, ws, prs, rs));
        ok = ok && tview_check(&b.x, b.py, b.y, "Apex y");
        ok = ok && CHECK_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, mode, ops[k], b.x.desc, b.x.desc,
                                                                              b.x.desc, add ? b.x.desc : NULL, b.x.desc,
                                                                              bnd, relu, &bws));
        void *pbws = bws ? tbuf_alloc(bws) : NULL;
        ok = ok && CHECK_OK(cudnnBatchNormalizationBackwardEx(h, mode, ops[k], &one, &zero, &one, &zero, b.x.desc, b.px,
                                                              b.x.desc, b.py, b.x.desc, b.pdy, add ? b.x.desc : NULL,
                                                              add ? b.pdz : NULL, b.x.desc, b.pdx, bnd, b.ps, b.pb,
                                                              b.pds, b.pdb, eps, b.psm, b.psv, relu, pbws, bws,
                                                              add ? prs : NULL, add ? rs : 0));
        ok = ok && tview_check(&b.x, b.pdx, b.dx, "Apex dx") && tview_check(&b.p, b.pds, b.ds, "Apex dscale") &&
             tview_check(&b.p, b.pdb, b.db, "Apex dbias") && (!add || tview_check(&b.x, b.pdz, b.dpre, "Apex dz"));
        tbuf_free(pws), tbuf_free(prs), tbuf_free(pbws);
        cudnnDestroyTensorDescriptor(bnd);
        bn_ex_free(&b);
        if (!ok) break;
    }
    cudnnDestroyActivationDescriptor(relu);
}

/* Saga (andoma/saga, src/cuda/cuda_dnn.cpp: batchnorm.persistent): half channels-last data,
   SPATIAL_PERSISTENT, ReLU with NaN propagated, a BN + sum + ReLU graph fused into
   CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION; the first step with the factor 1 (running averages
   auto-initialised); the forward and the backward handed the context's whole shared workspace
   (larger than asked for) and the backward sized by a query made with the forward's ops and
   dzDesc. When z's gradient is not needed the backward **switches to BN_ACTIVATION**, dzDesc and
   dz NULL, **still given the BN_ADD_ACTIVATION forward's reserve**: the ReLU's mask must come
   from that reserve (x scale + bias + z), not from x alone. Then the same backward adding into
   dx, dscale and dbias (betas 1). */
TEST(compat_bn_ex_saga_add_forward_activation_backward)
{
    cudnnHandle_t h = test_handle();
    const int d[4] = {2, 8, 3, 3};
    const double eps = 1e-5, factor = 1.0;
    const cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    const cudnnBatchNormOps_t fwd_ops = CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    cudnnActivationDescriptor_t relu;
    CHECK_OK(cudnnCreateActivationDescriptor(&relu));
    CHECK_OK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0));
    struct bn_ex b;
    /* z large enough that adding it flips many ReLU decisions */
    bn_ex_init(&b, CUDNN_DATA_HALF, TV_NHWC, d, false, 1.5, true, CUDNN_ACTIVATION_RELU, eps);
    const int64_t per = ref_bn_reduced(&b.sh);
    int flipped = 0; /* elements where x's normalization alone would pick the other side of the ReLU */
    for (int64_t i = 0; i < b.count; i++) flipped += (b.pre[i] > 0) != (b.pre[i] - b.zv[i] > 0);
    CHECK(flipped > 0);
    for (int64_t j = 0; j < b.slots; j++) {
        b.rmean[j] = b.mean[j];
        b.rvar[j] = b.var[j] * (double)per / (double)(per - 1);
    }
    float one = 1, zero = 0;
    size_t ws = 1, rs = 1, bws = 1;
    bool ok = CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, mode, fwd_ops, b.x.desc, b.x.desc,
                                                                                b.x.desc, b.p.desc, relu, &ws)) &&
              CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, mode, fwd_ops, relu, b.x.desc, &rs)) &&
              CHECK_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, mode, fwd_ops, b.x.desc, b.x.desc, b.x.desc,
                                                                         b.x.desc, b.x.desc, b.p.desc, relu, &bws));
    size_t shared = (ws > bws ? ws : bws) + 4096; /* the context's workspace: the largest request, and more */
    void *pws = tbuf_alloc(shared), *prs = rs ? tbuf_alloc(rs) : NULL;
    ok = ok && CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, mode, fwd_ops, &one, &zero, b.x.desc, b.px,
                                                                 b.x.desc, b.pz, b.x.desc, b.py, b.p.desc, b.ps, b.pb,
                                                                 factor, b.prm, b.prv, eps, b.psm, b.psv, relu, pws,
                                                                 shared, prs, rs));
    ok = ok && tview_check(&b.x, b.py, b.y, "Saga y") && tview_check(&b.p, b.psm, b.mean, "saved mean") &&
         tview_check(&b.p, b.psv, b.invstd, "saved inverse standard deviation") &&
         tview_check(&b.p, b.prm, b.rmean, "running mean, factor 1") &&
         tview_check(&b.p, b.prv, b.rvar, "running variance, factor 1");
    const cudnnBatchNormOps_t bwd_ops = CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    ok = ok && CHECK_OK(cudnnBatchNormalizationBackwardEx(h, mode, bwd_ops, &one, &zero, &one, &zero, b.x.desc, b.px,
                                                          b.x.desc, b.py, b.x.desc, b.pdy, NULL, NULL, b.x.desc, b.pdx,
                                                          b.p.desc, b.ps, b.pb, b.pds, b.pdb, eps, b.psm, b.psv, relu,
                                                          pws, shared, prs, rs));
    ok = ok && tview_check(&b.x, b.pdx, b.dx, "dx through the adding forward's mask") &&
         tview_check(&b.p, b.pds, b.ds, "dscale") && tview_check(&b.p, b.pdb, b.db, "dbias");
    ok = ok && CHECK_OK(cudnnBatchNormalizationBackwardEx(h, mode, bwd_ops, &one, &one, &one, &one, b.x.desc, b.px,
                                                          b.x.desc, b.py, b.x.desc, b.pdy, NULL, NULL, b.x.desc, b.pdx,
                                                          b.p.desc, b.ps, b.pb, b.pds, b.pdb, eps, b.psm, b.psv, relu,
                                                          pws, shared, prs, rs));
    for (int64_t i = 0; i < b.count; i++) b.dx[i] *= 2;
    for (int64_t j = 0; j < b.slots; j++) b.ds[j] *= 2, b.db[j] *= 2;
    ok = ok && tview_check(&b.x, b.pdx, b.dx, "dx added") && tview_check(&b.p, b.pds, b.ds, "dscale added") &&
         tview_check(&b.p, b.pdb, b.db, "dbias added");
    (void)ok;
    tbuf_free(pws);
    if (prs) tbuf_free(prs);
    bn_ex_free(&b);
    cudnnDestroyActivationDescriptor(relu);
}

/* Caffe's grouped convolution (src/caffe/layers/cudnn_conv_layer.cu): one call per group on
   channel slices, x and y described as N x C/g x H x W views of the whole tensors
   (cudnnSetTensor4dDescriptorEx with the image stride of all C channels), the pointers advanced
   by the group's offset; the bias added per group with cudnnAddTensor (1 x K/g x 1 x 1, beta 1);
   backward: cudnnConvolutionBackwardBias and BackwardFilter accumulating (beta 1) into the
   gradients, BackwardData (beta 0) into the slice of dx. */
TEST(compat_conv_caffe_groups_as_channel_slices)
{
    enum { N = 2, C = 4, K = 6, G = 2, H = 5, W = 5, R = 3 };
    struct ref_conv rc = {.nsp = 2, .n = N, .c = C, .k = K, .groups = G, .in = {H, W}, .filt = {R, R},
                          .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    const int P = rc.out[0], Q = rc.out[1];
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    const double conv_tol = tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH);
    cudnnHandle_t h = test_handle();
    double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *b = tview_random(K, -1, 1);
    double *dy = tview_random(ny, -1, 1), *dw0 = tview_random(nw, -1, 1), *db0 = tview_random(K, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)ny), *dx = malloc(sizeof(double) * (size_t)nx);
    double *dw = malloc(sizeof(double) * (size_t)nw), *db = malloc(sizeof(double) * K);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, nx), *pw = tvalues_upload(CUDNN_DATA_FLOAT, w, nw);
    void *pb = tvalues_upload(CUDNN_DATA_FLOAT, b, K), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, ny);
    void *pdw = tvalues_upload(CUDNN_DATA_FLOAT, dw0, nw), *pdb = tvalues_upload(CUDNN_DATA_FLOAT, db0, K);
    void *py = tbuf_alloc(sizeof(float) * (size_t)ny), *pdx = tbuf_alloc(sizeof(float) * (size_t)nx);
    ref_conv_fwd(&rc, x, w, y);
    ref_conv_bwd_data(&rc, dy, w, dx);
    ref_conv_bwd_filter(&rc, x, dy, dw);
    for (long i = 0; i < ny; i++) y[i] += b[i / (P * Q) % K];
    for (long i = 0; i < nw; i++) dw[i] += dw0[i];
    for (int k = 0; k < K; k++) {
        db[k] = db0[k];
        for (int n = 0; n < N; n++)
            for (int i = 0; i < P * Q; i++) db[k] += dy[((long)n * K + k) * P * Q + i];
    }
    cudnnTensorDescriptor_t xd, yd, bd;
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    tconv_descs_create(&xd, &yd, &bd, &fd, &cd);
    CHECK_OK(cudnnSetTensor4dDescriptorEx(xd, CUDNN_DATA_FLOAT, N, C / G, H, W, C * H * W, H * W, W, 1));
    CHECK_OK(cudnnSetTensor4dDescriptorEx(yd, CUDNN_DATA_FLOAT, N, K / G, P, Q, K * P * Q, P * Q, Q, 1));
    CHECK_OK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, K / G, 1, 1));
    CHECK_OK(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K / G, C / G, R, R));
    CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
    const cudnnConvolutionFwdAlgo_t fa = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    const cudnnConvolutionBwdDataAlgo_t da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    const cudnnConvolutionBwdFilterAlgo_t wa = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
    size_t fs = 0, ds = 0, ws = 0;
    bool ok = CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, fd, cd, yd, fa, &fs)) &&
              CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, fd, yd, cd, xd, da, &ds)) &&
              CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, fd, wa, &ws));
    size_t wsmax = fs > ds ? fs : ds;
    wsmax = wsmax > ws ? wsmax : ws;
    void *work = wsmax ? tbuf_alloc(wsmax) : NULL;
    const float one = 1, zero = 0;
    const size_t xo = (size_t)(C / G) * H * W, yo = (size_t)(K / G) * P * Q, wo = (size_t)(nw / G), bo = K / G;
    for (int g = 0; g < G && ok; g++) {
        float *gx = (float *)px + g * xo, *gy = (float *)py + g * yo, *gw = (float *)pw + g * wo;
        float *gdx = (float *)pdx + g * xo, *gdy = (float *)pdy + g * yo, *gdw = (float *)pdw + g * wo;
        ok = CHECK_OK(cudnnConvolutionForward(h, &one, xd, gx, fd, gw, cd, fa, work, fs, &zero, yd, gy)) &&
             CHECK_OK(cudnnAddTensor(h, &one, bd, (float *)pb + g * bo, &one, yd, gy)) &&
             CHECK_OK(cudnnConvolutionBackwardBias(h, &one, yd, gdy, &one, bd, (float *)pdb + g * bo)) &&
             CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, xd, gx, yd, gdy, cd, wa, work, ws, &one, fd, gdw)) &&
             CHECK_OK(cudnnConvolutionBackwardData(h, &one, fd, gw, yd, gdy, cd, da, work, ds, &zero, xd, gdx));
    }
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, ny, conv_tol, "y (two groups, bias added)") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, nx, conv_tol, "dx") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdw, dw, nw, conv_tol, "dw (accumulated)") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdb, db, K, conv_tol, "db (accumulated)");
    tbuf_free(work);
    void *bufs[] = {px, pw, pb, pdy, pdw, pdb, py, pdx};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {x, w, b, dy, dw0, db0, y, dx, dw, db};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    tconv_descs_destroy(xd, yd, bd, fd, cd);
}

/* PyTorch's algorithm search (aten/src/ATen/native/cudnn/Conv_v7.cpp) with TF32 off (the
   descriptor in CUDNN_FMA_MATH): the workspace of every algorithm the MaxCount query counts
   asked for, failures skipped, the largest one given to cudnnFindConvolutionForwardAlgorithmEx;
   backward data through cudnnGetConvolutionBackwardDataAlgorithm_v7. Of each result with
   status SUCCESS (and, as deterministic mode wants, CUDNN_DETERMINISTIC), PyTorch asserts that
   the math type is FMA for float data, sets it on the descriptor with cudnnSetConvolutionMathType,
   asks the workspace again and runs the algorithm: every such result must run and give the
   reference's numbers. */
TEST(compat_conv_pytorch_algorithm_search_fma)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 2, .in = {6, 7}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {1, 2}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    const double conv_tol = tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH);
    cudnnHandle_t h = test_handle();
    double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *dy = tview_random(ny, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)ny), *dx = malloc(sizeof(double) * (size_t)nx);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, nx), *pw = tvalues_upload(CUDNN_DATA_FLOAT, w, nw);
    void *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, ny);
    void *py = tbuf_alloc(sizeof(float) * (size_t)ny), *pdx = tbuf_alloc(sizeof(float) * (size_t)nx);
    ref_conv_fwd(&rc, x, w, y);
    ref_conv_bwd_data(&rc, dy, w, dx);
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    tconv_descs_create(&xd, &yd, NULL, &fd, &cd);
    CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 6, 7));
    CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 6, rc.out[0], rc.out[1]));
    CHECK_OK(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 6, 2, 3, 3));
    CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionGroupCount(cd, 2));
    CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
    const float one = 1, zero = 0;

    /* forward: the largest workspace of all, then FindEx */
    int count = 0, found = 0, ran = 0;
    CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
    size_t max_ws = 0;
    for (int a = 0; a < count; a++) {
        size_t sz = 0;
        if (cudnnGetConvolutionForwardWorkspaceSize(h, xd, fd, cd, yd, (cudnnConvolutionFwdAlgo_t)a, &sz) ==
                CUDNN_STATUS_SUCCESS && sz > max_ws)
            max_ws = sz;
    }
    void *work = tbuf_alloc(max_ws ? max_ws : 1);
    cudnnConvolutionFwdAlgoPerf_t fperf[16];
    bool ok = count <= 16 && CHECK_OK(cudnnFindConvolutionForwardAlgorithmEx(h, xd, px, fd, pw, cd, yd, py, count,
                                                                             &found, fperf, work, max_ws));
    for (int i = 0; i < found && ok; i++) {
        if (fperf[i].status != CUDNN_STATUS_SUCCESS) continue;
        ok = CHECK(fperf[i].mathType == CUDNN_FMA_MATH) && CHECK(fperf[i].memory <= max_ws) &&
             CHECK_OK(cudnnSetConvolutionMathType(cd, fperf[i].mathType));
        size_t sz = 0;
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, fd, cd, yd, fperf[i].algo, &sz)) &&
             CHECK(sz <= fperf[i].memory);
        tbuf_poison(py, sizeof(float) * (size_t)ny);
        ok = ok && CHECK_OK(cudnnConvolutionForward(h, &one, xd, px, fd, pw, cd, fperf[i].algo, work, sz, &zero, yd, py));
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, ny, conv_tol, "y of a found algorithm");
        ran++;
    }
    CHECK(ran > 0);

    /* backward data: Get_v7, the deterministic results */
    cudnnConvolutionBwdDataAlgoPerf_t dperf[16];
    ran = 0;
    ok = ok && CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count)) && count <= 16 &&
         CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, fd, yd, cd, xd, count, &found, dperf));
    for (int i = 0; i < found && ok; i++) {
        if (dperf[i].status != CUDNN_STATUS_SUCCESS || dperf[i].determinism != CUDNN_DETERMINISTIC) continue;
        ok = CHECK(dperf[i].mathType == CUDNN_FMA_MATH) && CHECK_OK(cudnnSetConvolutionMathType(cd, dperf[i].mathType));
        size_t sz = 0;
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, fd, yd, cd, xd, dperf[i].algo, &sz));
        void *dwork = sz ? tbuf_alloc(sz) : NULL;
        tbuf_poison(pdx, sizeof(float) * (size_t)nx);
        ok = ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, fd, pw, yd, pdy, cd, dperf[i].algo, dwork, sz, &zero,
                                                         xd, pdx));
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, nx, conv_tol, "dx of a heuristic algorithm");
        tbuf_free(dwork);
        ran++;
    }
    CHECK(ran > 0);
    tbuf_free(work);
    void *bufs[] = {px, pw, pdy, py, pdx};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(x), free(w), free(dy), free(y), free(dx);
    tconv_descs_destroy(xd, yd, NULL, fd, cd);
}

/* TensorRT's instance and group normalization plugins run cudnnBatchNormalizationForwardTraining
   on a reshaped tensor: instance norm as 1 x NC x H x W (or 1 x NC x D x H x W, by Nd
   descriptors) in SPATIAL_PERSISTENT mode with the scale and bias repeated for every image in a
   float 1 x NC x 1 x 1 tensor (half data too), exponentialAverageFactor 1; group norm as
   1 x N*G x (C/G * H * W) x 1 in SPATIAL mode with factor 0; both with the running averages and
   the saved statistics NULL. */
TEST(compat_bn_tensorrt_instance_and_group_norm)
{
    static const struct {
        int rank, dims[5];
        cudnnDataType_t t;
        cudnnBatchNormMode_t mode;
        double factor;
    } cases[] = {
        {4, {1, 6, 3, 5}, CUDNN_DATA_HALF, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, 1.0},    /* N 2 x C 3 images */
        {5, {1, 4, 2, 3, 2}, CUDNN_DATA_FLOAT, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, 1.0}, /* 3-D instance norm */
        {4, {1, 8, 12, 1}, CUDNN_DATA_FLOAT, CUDNN_BATCHNORM_SPATIAL, 0.0},            /* N 2 x G 4, 12 each */
    };
    cudnnHandle_t h = test_handle();
    const double eps = 1e-5;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int rank = cases[k].rank, *d = cases[k].dims;
        int pd[5] = {1, d[1], 1, 1, 1};
        struct tview x, p;
        tview_init(&x, cases[k].t, rank, d, TV_NCHW);
        tview_init(&p, CUDNN_DATA_FLOAT, rank, pd, TV_NCHW);
        int64_t s = x.count / d[1];
        struct ref_bn_shape sh = {1, d[1], s, false};
        double *xv = tview_random(x.count, -2, 2), *scale = tview_random(d[1], 0.5, 1.5);
        double *bias = tview_random(d[1], -0.5, 0.5), *y = malloc(sizeof(double) * (size_t)x.count);
        double *mean = malloc(sizeof(double) * (size_t)d[1]), *var = malloc(sizeof(double) * (size_t)d[1]);
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *ps = tview_upload(&p, scale);
        void *pb = tview_upload(&p, bias);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnBatchNormalizationForwardTraining(h, cases[k].mode, &one, &zero, x.desc, px, x.desc, py, p.desc,
                                                            ps, pb, cases[k].factor, NULL, NULL, eps, NULL, NULL)))
            tview_check(&x, py, y, k == 2 ? "group norm" : "instance norm");
        tview_free(&x, px), tview_free(&x, py), tview_free(&p, ps), tview_free(&p, pb);
        free(xv), free(scale), free(bias), free(y), free(mean), free(var);
        tview_destroy(&x);
        tview_destroy(&p);
    }
}

/* CUDA.jl's dropout (lib/cudnn/src/dropout.jl): one states buffer per handle, given to every
   dropout descriptor it makes (each cudnnSetDropoutDescriptor initialises the shared buffer again,
   with its own seed); a debug mode that makes every call drop the same values by reading the
   descriptor back (cudnnGetDropoutDescriptor) and setting it again with a fixed seed before each
   cudnnDropoutForward. The masks follow the states buffer: the one of the last Set, its calls
   counted across the descriptors that share it (ref/dropout.h's rule). */
TEST(compat_dropout_cudajl_shared_states)
{
    enum { N = 2, C = 3, H = 4, W = 5 };
    const int dims[4] = {N, C, H, W};
    cudnnHandle_t h = test_handle();
    struct tview v;
    tview_init(&v, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    size_t sbytes = 0, rbytes = 0;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &sbytes));
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(v.desc, &rbytes));
    void *states = tbuf_alloc(sbytes), *reserve = tbuf_alloc(rbytes);
    double *x = tview_random(v.count, 0.5, 1.5), *want = malloc(sizeof(double) * (size_t)v.count);
    bool *keep = malloc(sizeof(bool) * (size_t)v.count);
    void *px = tview_upload(&v, x), *py = tview_upload(&v, NULL);
    cudnnDropoutDescriptor_t d1, d2;
    CHECK_OK(cudnnCreateDropoutDescriptor(&d1));
    CHECK_OK(cudnnCreateDropoutDescriptor(&d2));
    const unsigned long long seed1 = 1234567, seed2 = 7654321, debug_seed = 42;
    CHECK_OK(cudnnSetDropoutDescriptor(d1, h, 0.5f, states, sbytes, seed1));
    CHECK_OK(cudnnSetDropoutDescriptor(d2, h, 0.25f, states, sbytes, seed2)); /* the shared buffer again */
    /* d1, then d2: calls 0 and 1 of seed2's stream, each with its own probability; then the debug
       mode's re-set before each call: call 0 of the fixed seed every time */
    const struct { int desc; bool reset; unsigned long long seed; uint64_t call; float p; } steps[] = {
        {1, false, seed2, 0, 0.5f}, {2, false, seed2, 1, 0.25f}, {1, true, debug_seed, 0, 0.5f},
        {1, true, debug_seed, 0, 0.5f}};
    bool ok = true;
    for (size_t s = 0; s < TLEN(steps) && ok; s++) {
        cudnnDropoutDescriptor_t d = steps[s].desc == 1 ? d1 : d2;
        if (steps[s].reset) {
            float p = 0;
            void *got_states = NULL;
            unsigned long long got_seed = 0;
            ok = CHECK_OK(cudnnGetDropoutDescriptor(d, h, &p, &got_states, &got_seed)) &&
                 CHECK(got_states == states && p == steps[s].p) &&
                 CHECK_OK(cudnnSetDropoutDescriptor(d, h, p, got_states, sbytes, steps[s].seed));
        }
        ref_dropout_mask(steps[s].seed, steps[s].call, steps[s].p, v.count, keep);
        for (int64_t i = 0; i < v.count; i++) want[i] = keep[i] ? x[i] / (1.0 - steps[s].p) : 0.0;
        ok = ok && CHECK_OK(cudnnDropoutForward(h, d, v.desc, px, v.desc, py, reserve, rbytes)) &&
             tview_check(&v, py, want, "dropout through the shared states");
    }
    cudnnDestroyDropoutDescriptor(d1);
    cudnnDestroyDropoutDescriptor(d2);
    tview_free(&v, px), tview_free(&v, py);
    tbuf_free(states), tbuf_free(reserve);
    free(x), free(want), free(keep);
    tview_destroy(&v);
}
