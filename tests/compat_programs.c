/* compat_programs.c: call patterns of whole programs and of the framework glue not replayed
   elsewhere (docs/compatibility.md): NVIDIA's mnistCUDNN sample (a LeNet forward pass, the
   algorithm from cudnnFindConvolutionForwardAlgorithm or fixed to FFT, in float and in half with
   float math), PyTorch's affine grid generator and TVM's backward convolutions (the algorithm the
   first result of cudnnFind*Algorithm, NHWC tensors and filter, true half), Dragon's softmax
   over 3-D tensors, CUDA.jl's pooling of Julia arrays (windows clamped, 3 dims padded to 4) and
   Merlin.jl's softmax gradient added to the one held, ONNX Runtime's batch-norm inference on
   dims padded to 4, Caffe2's transposed convolution and its gradient, cudarc's descriptors with
   stride 0 on dims of extent 1 and its pooling over an x whose elements overlap, Caffe2's
   SpatialBN on strides computed for either order. Each call's result against the double
   references of tests/ref/, computed from what the previous call left. (compat.c, compat_ops.c,
   compat_conv.c: the frameworks; compat_libs.c, compat_toolkits.c, compat_bindings.c: libraries,
   toolkits and bindings.) */
#include "conv_harness.h"
#include "desc_util.h"
#include "ref/activation.h"
#include "ref/batchnorm.h"
#include "ref/conv.h"
#include "ref/lrn.h"
#include "ref/pooling.h"
#include "ref/reduce.h"
#include "ref/softmax.h"
#include "ref/spatial_tf.h"
#include "tensors.h"
#include "test.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- NVIDIA's mnistCUDNN sample (mnistCUDNN/mnistCUDNN.cpp, cuDNN 8 samples) ------------------ */

/* The sample's network_t: one set of descriptors re-set for every layer, every tensor through
   cudnnSetTensorNdDescriptor with packed NCHW strides (ND_TENSOR_DESCRIPTOR), alpha and beta
   floats for float and half data. `algo` < 0: each convolution's algorithm is results[0] of
   cudnnFindConvolutionForwardAlgorithm, asked for CUDNN_CONVOLUTION_FWD_ALGO_COUNT results after
   cudnnGetConvolutionForwardAlgorithm_v7 was asked the same (into an array twice as long). */
struct mnist {
    cudnnHandle_t h;
    cudnnDataType_t t;
    int algo;
    cudnnTensorDescriptor_t src, dst, bias;
    cudnnFilterDescriptor_t filter;
    cudnnConvolutionDescriptor_t conv;
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t act;
    cudnnLRNDescriptor_t lrn;
    int n, c, hh, ww; /* the current activations' dims */
    double *vals;     /* their values, read back from `data` */
    void *data;
};

static void mnist_set(cudnnTensorDescriptor_t d, cudnnDataType_t t, int n, int c, int h, int w)
{
    const int dims[4] = {n, c, h, w}, strides[4] = {c * h * w, h * w, w, 1};
    CHECK_OK(cudnnSetTensorNdDescriptor(d, t, 4, dims, strides));
}

static long mnist_count(const struct mnist *m)
{
    return (long)m->n * m->c * m->hh * m->ww;
}

/* The layer's output replaces the activations: read back and checked against want at tol. */
static void mnist_next(struct mnist *m, void *out, const double *want, double tol, const char *what)
{
    tvalues_check(m->t, out, want, mnist_count(m), tol, what);
    free(m->vals);
    tbuf_free(m->data);
    m->vals = tvalues_download(m->t, out, mnist_count(m));
    m->data = out;
}

static bool mnist_conv(struct mnist *m, int k, const double *w, const double *b, int *ran)
{
    const int fdims[4] = {k, m->c, 5, 5}, pad[2] = {0, 0}, stride[2] = {1, 1}, up[2] = {1, 1};
    const long nw = (long)k * m->c * 25;
    struct ref_conv rc = {.nsp = 2, .n = m->n, .c = m->c, .k = k, .groups = 1, .in = {m->hh, m->ww},
                          .filt = {5, 5}, .stride = {1, 1}, .dil = {1, 1}};
    ref_conv_out_dims(&rc);
    mnist_set(m->src, m->t, m->n, m->c, m->hh, m->ww);
    CHECK_OK(cudnnSetFilterNdDescriptor(m->filter, m->t, CUDNN_TENSOR_NCHW, 4, fdims));
    /* "Math are done in FP32 when tensor are in FP16" */
    CHECK_OK(cudnnSetConvolutionNdDescriptor(m->conv, 2, pad, stride, up, CUDNN_CROSS_CORRELATION,
                                             m->t == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : m->t));
    int od[4] = {0};
    if (!CHECK_OK(cudnnGetConvolutionNdForwardOutputDim(m->conv, m->src, m->filter, 4, od)) ||
        !CHECK(od[0] == m->n && od[1] == k && od[2] == rc.out[0] && od[3] == rc.out[1]))
        return false;
    mnist_set(m->dst, m->t, od[0], od[1], od[2], od[3]);
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    cudnnConvolutionFwdAlgo_t algo = (cudnnConvolutionFwdAlgo_t)m->algo;
    if (m->algo < 0) {
        cudnnConvolutionFwdAlgoPerf_t res[2 * CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int got = -1;
        CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(m->h, m->src, m->filter, m->conv, m->dst,
                                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, res));
        got = -1;
        if (!CHECK_OK(cudnnFindConvolutionForwardAlgorithm(m->h, m->src, m->filter, m->conv, m->dst,
                                                           CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, res)) ||
            !CHECK(got > 0 && res[0].status == CUDNN_STATUS_SUCCESS))
            return false;
        algo = res[0].algo, math = res[0].mathType;
    }
    *ran = (int)algo;
    size_t bytes = 0;
    if (!CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(m->h, m->src, m->filter, m->conv, m->dst, algo, &bytes)))
        return false;
    void *ws = bytes ? tbuf_alloc(bytes) : NULL;
    double *wv = malloc(sizeof(double) * (size_t)nw), *bv = malloc(sizeof(double) * (size_t)k);
    memcpy(wv, w, sizeof(double) * (size_t)nw), memcpy(bv, b, sizeof(double) * (size_t)k);
    void *pw = tvalues_upload(m->t, wv, nw), *pb = tvalues_upload(m->t, bv, k);
    void *out = tbuf_alloc(tdtype_size(m->t) * (size_t)ref_conv_y_count(&rc));
    double *want = malloc(sizeof(double) * (size_t)ref_conv_y_count(&rc));
    const float one = 1, zero = 0;
    bool ok = CHECK_OK(cudnnConvolutionForward(m->h, &one, m->src, m->data, m->filter, pw, m->conv, algo, ws, bytes,
                                               &zero, m->dst, out));
    /* addBias: a 1 x k x 1 x 1 tensor added with alpha 1 and beta 1 */
    mnist_set(m->bias, m->t, 1, k, 1, 1);
    ok = ok && CHECK_OK(cudnnAddTensor(m->h, &one, m->bias, pb, &one, m->dst, out));
    ref_conv_fwd(&rc, m->vals, wv, want);
    const long per = (long)rc.out[0] * rc.out[1];
    for (long i = 0; i < ref_conv_y_count(&rc); i++) want[i] += bv[i / per % k];
    m->c = k, m->hh = rc.out[0], m->ww = rc.out[1];
    if (ok) mnist_next(m, out, want, tconv_tolerance(m->t, m->t, math), "convolution and bias");
    else tbuf_free(out);
    tbuf_free(ws), tbuf_free(pw), tbuf_free(pb);
    free(wv), free(bv), free(want);
    return ok;
}

static bool mnist_pool(struct mnist *m)
{
    const int win[2] = {2, 2}, pad[2] = {0, 0}, stride[2] = {2, 2};
    CHECK_OK(cudnnSetPoolingNdDescriptor(m->pool, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, win, pad, stride));
    mnist_set(m->src, m->t, m->n, m->c, m->hh, m->ww);
    int od[4] = {0};
    if (!CHECK_OK(cudnnGetPoolingNdForwardOutputDim(m->pool, m->src, 4, od)) ||
        !CHECK(od[0] == m->n && od[1] == m->c && od[2] == m->hh / 2 && od[3] == m->ww / 2))
        return false;
    mnist_set(m->dst, m->t, od[0], od[1], od[2], od[3]);
    const int in[2] = {m->hh, m->ww};
    m->hh = od[2], m->ww = od[3];
    const struct ref_pool rp = {CUDNN_POOLING_MAX, true, 2, {2, 2}, {0, 0}, {2, 2}};
    void *out = tbuf_alloc(tdtype_size(m->t) * (size_t)mnist_count(m));
    double *want = malloc(sizeof(double) * (size_t)mnist_count(m));
    ref_pooling_forward(&rp, m->n, m->c, in, &od[2], m->vals, want);
    const float one = 1, zero = 0;
    bool ok = CHECK_OK(cudnnPoolingForward(m->h, m->pool, &one, m->src, m->data, &zero, m->dst, out));
    if (ok) mnist_next(m, out, want, ttolerance(m->t), "max pooling");
    else tbuf_free(out);
    free(want);
    return ok;
}

/* fullyConnectedForward runs cuBLAS's gemv (y = W x + b) outside cuDNN; here on the host, the
   result stored in the data type, so that the next layer reads what the sample's would. */
static void mnist_fc(struct mnist *m, int outputs)
{
    const long in = mnist_count(m);
    double *y = malloc(sizeof(double) * (size_t)outputs);
    for (int o = 0; o < outputs; o++) {
        y[o] = trand_uniform(-0.1, 0.1);
        for (long i = 0; i < in; i++) y[o] += m->vals[i] * trand_uniform(-0.1, 0.1);
    }
    m->c = outputs, m->hh = m->ww = 1;
    free(m->vals);
    tbuf_free(m->data);
    m->data = tvalues_upload(m->t, y, outputs);
    m->vals = y;
}

static bool mnist_pointwise(struct mnist *m, int layer)
{
    const long count = mnist_count(m);
    mnist_set(m->src, m->t, m->n, m->c, m->hh, m->ww);
    mnist_set(m->dst, m->t, m->n, m->c, m->hh, m->ww);
    void *out = tbuf_alloc(tdtype_size(m->t) * (size_t)count);
    double *want = malloc(sizeof(double) * (size_t)count);
    const float one = 1, zero = 0;
    cudnnStatus_t s;
    const char *what;
    if (layer == 0) { /* activationForward */
        CHECK_OK(cudnnSetActivationDescriptor(m->act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
        for (long i = 0; i < count; i++) want[i] = ref_activation(CUDNN_ACTIVATION_RELU, true, 0, 1, m->vals[i]);
        s = cudnnActivationForward(m->h, m->act, &one, m->src, m->data, &zero, m->dst, out);
        what = "ReLU";
    } else if (layer == 1) { /* lrnForward */
        const struct ref_lrn_params q = {5, 0.0001, 0.75, 1.0};
        CHECK_OK(cudnnSetLRNDescriptor(m->lrn, 5, 0.0001, 0.75, 1.0));
        ref_lrn_forward(m->n, m->c, (int64_t)m->hh * m->ww, &q, m->vals, want);
        s = cudnnLRNCrossChannelForward(m->h, m->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, m->src, m->data, &zero,
                                        m->dst, out);
        what = "LRN";
    } else { /* softmaxForward */
        const int dims[4] = {m->n, m->c, m->hh, m->ww};
        ref_softmax_forward(CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, 4, dims, m->vals, want);
        s = cudnnSoftmaxForward(m->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, m->src, m->data,
                                &zero, m->dst, out);
        what = "softmax";
    }
    bool ok = CHECK_OK(s);
    if (ok) mnist_next(m, out, want, ttolerance(m->t), what);
    else tbuf_free(out);
    free(want);
    return ok;
}

/* classify_example: conv1 (20 5x5 filters) + bias, max pool 2x2, conv2 (50) + bias, max pool,
   ip1 (500, gemv), ReLU, LRN, ip2 (10, gemv), softmax; the weights are the same for every image.
   The half network takes ip1's weights through cudnnTransformTensor from float (FP16_CUDNN):
   a 1 x size x 1 x 1 tensor by cudnnSetTensor4dDescriptorEx in each type. */
static void mnist_classify(cudnnDataType_t t, int algo, const double *image, double *const w[2],
                           double *const b[2], int ran[2])
{
    struct mnist m = {.h = test_handle(), .t = t, .algo = algo, .n = 1, .c = 1, .hh = 28, .ww = 28};
    CHECK_OK(cudnnCreateTensorDescriptor(&m.src));
    CHECK_OK(cudnnCreateTensorDescriptor(&m.dst));
    CHECK_OK(cudnnCreateTensorDescriptor(&m.bias));
    CHECK_OK(cudnnCreateFilterDescriptor(&m.filter));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&m.conv));
    CHECK_OK(cudnnCreatePoolingDescriptor(&m.pool));
    CHECK_OK(cudnnCreateActivationDescriptor(&m.act));
    CHECK_OK(cudnnCreateLRNDescriptor(&m.lrn));
    m.vals = malloc(sizeof(double) * 28 * 28);
    memcpy(m.vals, image, sizeof(double) * 28 * 28);
    m.data = tvalues_upload(t, m.vals, 28 * 28);
    bool ok = mnist_conv(&m, 20, w[0], b[0], &ran[0]) && mnist_pool(&m) && mnist_conv(&m, 50, w[1], b[1], &ran[1]) &&
              mnist_pool(&m) && CHECK(mnist_count(&m) == 800);
    if (ok) mnist_fc(&m, 500);
    ok = ok && mnist_pointwise(&m, 0) && mnist_pointwise(&m, 1);
    if (ok) mnist_fc(&m, 10);
    ok = ok && mnist_pointwise(&m, 2);
    free(m.vals);
    tbuf_free(m.data);
    cudnnDestroyLRNDescriptor(m.lrn);
    cudnnDestroyActivationDescriptor(m.act);
    cudnnDestroyPoolingDescriptor(m.pool);
    cudnnDestroyConvolutionDescriptor(m.conv);
    cudnnDestroyFilterDescriptor(m.filter);
    cudnnDestroyTensorDescriptor(m.bias);
    cudnnDestroyTensorDescriptor(m.dst);
    cudnnDestroyTensorDescriptor(m.src);
}

/* The half network's FP16_CUDNN weights: float values converted on the device. */
static void mnist_transform_to_half(long size)
{
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t s, d;
    CHECK_OK(cudnnCreateTensorDescriptor(&s));
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    CHECK_OK(cudnnSetTensor4dDescriptorEx(s, CUDNN_DATA_FLOAT, 1, (int)size, 1, 1, (int)size, 1, 1, 1));
    CHECK_OK(cudnnSetTensor4dDescriptorEx(d, CUDNN_DATA_HALF, 1, (int)size, 1, 1, (int)size, 1, 1, 1));
    double *v = tview_random(size, -0.1, 0.1);
    void *pf = tvalues_upload(CUDNN_DATA_FLOAT, v, size), *ph = tbuf_alloc(2 * (size_t)size);
    const float one = 1, zero = 0;
    if (CHECK_OK(cudnnTransformTensor(h, &one, s, pf, &zero, d, ph)))
        tvalues_check(CUDNN_DATA_HALF, ph, v, size, ttolerance(CUDNN_DATA_HALF), "ip1 weights converted to half");
    tbuf_free(pf), tbuf_free(ph);
    free(v);
    cudnnDestroyTensorDescriptor(s);
    cudnnDestroyTensorDescriptor(d);
}

/* main's default run: three images in single precision, then three in half precision (math in
   single precision); the first two with the algorithm found, the third with
   CUDNN_CONVOLUTION_FWD_ALGO_FFT fixed ("New feature in cuDNN v3: FFT for convolution"), its
   workspace queried and NULL when 0. The sample fails on any status but SUCCESS. */
TEST(compat_mnistcudnn_sample_find_and_fft)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    double *w[2] = {tview_random(20 * 25, -0.3, 0.3), tview_random(50 * 20 * 25, -0.1, 0.1)};
    double *b[2] = {tview_random(20, -0.1, 0.1), tview_random(50, -0.1, 0.1)};
    for (size_t k = 0; k < TLEN(types); k++) {
        if (types[k] == CUDNN_DATA_HALF) mnist_transform_to_half(800 * 500);
        for (int image = 0; image < 3; image++) {
            double *pixels = tview_random(28 * 28, 0, 1);
            int ran[2] = {-1, -1};
            mnist_classify(types[k], image < 2 ? -1 : (int)CUDNN_CONVOLUTION_FWD_ALGO_FFT, pixels, w, b, ran);
            if (image == 2) CHECK(ran[0] == CUDNN_CONVOLUTION_FWD_ALGO_FFT && ran[1] == CUDNN_CONVOLUTION_FWD_ALGO_FFT);
            free(pixels);
        }
    }
    free(w[0]), free(w[1]), free(b[0]), free(b[1]);
}

/* ---- PyTorch's affine grid generator (aten/src/ATen/native/cudnn/AffineGridGenerator.cpp) ------ */

/* F.affine_grid with align_corners=True on a 4-D size: a fresh descriptor per call set by
   cudnnSetSpatialTransformerNdDescriptor(BILINEAR, the tensor's type, 4, {N, C, H, W}), C from the
   size the caller asked for (the generator never reads it); theta contiguous N x 2 x 3, the grid
   a fresh N x H x W x 2; the backward with the type of grad_theta, grad_grid made contiguous.
   Float, double and half tensors (cudnn.is_acceptable). */
TEST(compat_stn_pytorch_affine_grid_generator)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF};
    static const int sizes[][4] = {{3, 4, 5, 7}, {2, 1, 1, 6}, {1, 64, 9, 1}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(types); k++)
        for (size_t s = 0; s < TLEN(sizes); s++) {
            const int n = sizes[s][0], gh = sizes[s][2], gw = sizes[s][3];
            const int64_t ng = (int64_t)n * gh * gw * 2;
            double *theta = tview_random(6 * n, -1, 1), *dgrid = tview_random(ng, -1, 1);
            double *grid = malloc(sizeof(double) * (size_t)ng), *dtheta = malloc(sizeof(double) * 6 * (size_t)n);
            const size_t es = tdtype_size(types[k]);
            void *ptheta = tvalues_upload(types[k], theta, 6 * n), *pgrid = tbuf_alloc(es * (size_t)ng);
            void *pdgrid = tvalues_upload(types[k], dgrid, ng), *pdtheta = tbuf_alloc(es * 6 * (size_t)n);
            ref_stn_grid(n, gh, gw, theta, grid);
            ref_stn_grid_backward(n, gh, gw, dgrid, dtheta);
            for (int pass = 0; pass < 2; pass++) {
                cudnnSpatialTransformerDescriptor_t st;
                CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
                if (CHECK_OK(
                        cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, types[k], 4, sizes[s]))) {
                    if (pass == 0 && CHECK_OK(cudnnSpatialTfGridGeneratorForward(h, st, ptheta, pgrid)))
                        tvalues_check(types[k], pgrid, grid, ng, ttolerance(types[k]), "affine grid");
                    if (pass == 1 && CHECK_OK(cudnnSpatialTfGridGeneratorBackward(h, st, pdgrid, pdtheta)))
                        tvalues_check(types[k], pdtheta, dtheta, 6 * n, ttolerance(types[k]),
                                      "theta's gradient");
                }
                cudnnDestroySpatialTransformerDescriptor(st);
            }
            tbuf_free(ptheta), tbuf_free(pgrid), tbuf_free(pdgrid), tbuf_free(pdtheta);
            free(theta), free(dgrid), free(grid), free(dtheta);
        }
}

/* ---- TVM's cuDNN backward convolutions (src/runtime/contrib/cudnn/conv_backward.cc) ---------- */

/* SetConvDescriptors (cudnn_utils.cc) on the thread's one set of descriptors: the group count
   first, then cudnnSetConvolution2dDescriptor with the conv dtype as compute type, the tensors
   by cudnnSetTensor4dDescriptor and the filter by cudnnSetFilter4dDescriptor in the one format
   (an NHWC filter is stored OHWI), TENSOR_OP_MATH last, whatever the data type. */
static void tvm_set_descriptors(const struct tconv_run *r, const struct ref_conv *rc, cudnnTensorFormat_t fmt,
                                cudnnDataType_t t, cudnnDataType_t conv_type)
{
    CHECK_OK(cudnnSetConvolutionGroupCount(r->cd, 1));
    CHECK_OK(cudnnSetConvolution2dDescriptor(r->cd, rc->pad[0], rc->pad[1], 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                             conv_type));
    CHECK_OK(cudnnSetTensor4dDescriptor(r->xd, fmt, t, rc->n, rc->c, rc->in[0], rc->in[1]));
    CHECK_OK(cudnnSetFilter4dDescriptor(r->wd, t, fmt, rc->k, rc->c, rc->filt[0], rc->filt[1]));
    CHECK_OK(cudnnSetTensor4dDescriptor(r->yd, fmt, t, rc->n, rc->k, rc->out[0], rc->out[1]));
    CHECK_OK(cudnnSetConvolutionMathType(r->cd, CUDNN_TENSOR_OP_MATH));
}

/* test_cudnn.py's cases: backward data in float (NCHW and NHWC) and in half with the HALF conv
   dtype (NHWC), backward filter in float (NCHW and NHWC); 3 x 4 x 32 x 32 images, 16 3x3 filters,
   pad 1. conv.backward_data_find_algo / backward_filter_find_algo: cudnnFind*Algorithm asked for
   the direction's COUNT results, results[0].algo taken without its status; then the op sets the
   descriptors again, queries that algorithm's workspace (a buffer that only grows, NULL until a
   size is asked for) and runs with alpha 1 and beta 0 (floats for half). */
TEST(compat_conv_tvm_backward_find_first_result)
{
    static const struct { enum dir d; cudnnDataType_t t; cudnnTensorFormat_t fmt; } cases[] = {
        {BWD_DATA, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW}, {BWD_DATA, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC},
        {BWD_DATA, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC}, {BWD_FILTER, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW},
        {BWD_FILTER, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC}};
    cudnnHandle_t h = test_handle();
    void *ws = NULL;
    size_t ws_size = 0;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        struct ref_conv rc = {.nsp = 2, .n = 3, .c = 4, .k = 16, .groups = 1, .in = {32, 32}, .filt = {3, 3},
                              .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}};
        ref_conv_out_dims(&rc);
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        const int layout = cases[k].fmt == CUDNN_TENSOR_NHWC ? TV_NHWC : TV_NCHW;
        struct tview x, w, y;
        tconv_views(&rc, t, layout, layout, &x, &w, &y);
        const bool data = cases[k].d == BWD_DATA;
        void *pin = data ? tview_upload(&w, r.w) : tview_upload(&x, r.x), *pdy = tview_upload(&y, r.dy);
        void *pout = data ? tview_upload(&x, NULL) : tview_upload(&w, NULL);
        tvm_set_descriptors(&r, &rc, cases[k].fmt, t, t);
        int got = 0, algo = -1;
        if (data) {
            cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
            CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, r.wd, r.yd, r.cd, r.xd,
                                                               CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf));
            algo = got > 0 ? (int)perf[0].algo : -1;
        } else {
            cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
            CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, r.xd, r.yd, r.cd, r.wd,
                                                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, perf));
            algo = got > 0 ? (int)perf[0].algo : -1;
        }
        tvm_set_descriptors(&r, &rc, cases[k].fmt, t, t);
        size_t bytes = 0;
        cudnnStatus_t s =
            data ? cudnnGetConvolutionBackwardDataWorkspaceSize(h, r.wd, r.yd, r.cd, r.xd,
                                                                (cudnnConvolutionBwdDataAlgo_t)algo, &bytes)
                 : cudnnGetConvolutionBackwardFilterWorkspaceSize(h, r.xd, r.yd, r.cd, r.wd,
                                                                  (cudnnConvolutionBwdFilterAlgo_t)algo, &bytes);
        if (CHECK(algo >= 0) && CHECK_OK(s)) {
            if (ws_size < bytes) {
                tbuf_free(ws);
                ws = tbuf_alloc(bytes), ws_size = bytes;
            }
            const float one = 1, zero = 0;
            const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH);
            if (data && CHECK_OK(cudnnConvolutionBackwardData(h, &one, r.wd, pin, r.yd, pdy, r.cd,
                                                              (cudnnConvolutionBwdDataAlgo_t)algo, ws, bytes, &zero,
                                                              r.xd, pout)))
                tview_check_blend(&x, pout, r.dx, NULL, 1, 0, tol, "TVM's backward data");
            if (!data && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, r.xd, pin, r.yd, pdy, r.cd,
                                                                 (cudnnConvolutionBwdFilterAlgo_t)algo, ws, bytes,
                                                                 &zero, r.wd, pout)))
                tview_check_blend(&w, pout, r.dw, NULL, 1, 0, tol, "TVM's backward filter");
        }
        if (data) tview_free(&w, pin), tview_free(&x, pout);
        else tview_free(&x, pin), tview_free(&w, pout);
        tview_free(&y, pdy);
        tview_destroy(&x), tview_destroy(&w), tview_destroy(&y);
        tconv_run_free(&r);
    }
    tbuf_free(ws);
}

/* ---- SeetaTech's Dragon (dragon/operators/activation/softmax_op_cudnn.cc) -------------------- */

/* Softmax over any axis of an array of dims D: one descriptor (packed strides, through
   cudnnSetTensorNdDescriptor) for x, y, dy and dx. Dragon 0.3: three dims {before the axis, the
   axis, after it} in CHANNEL mode, a trailing 1 included; later releases: four dims {before, axis,
   after, 1}, INSTANCE mode when nothing follows the axis. ACCURATE, alpha 1 and beta 0 of the
   type's scaling type; float, double and half. */
TEST(compat_softmax_dragon_3d_channel_and_instance)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF};
    static const int arr[4] = {2, 5, 3, 4};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(types); k++)
        for (int axis = 0; axis < 4; axis++)
            for (int release = 0; release < 2; release++) {
                int before = 1, after = 1;
                for (int i = 0; i < axis; i++) before *= arr[i];
                for (int i = axis + 1; i < 4; i++) after *= arr[i];
                const int rank = release ? 4 : 3, dims[4] = {before, arr[axis], after, 1};
                const cudnnSoftmaxMode_t mode =
                    release && after == 1 ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL;
                const int64_t n = (int64_t)before * arr[axis] * after;
                struct tview v;
                tview_init(&v, types[k], rank, dims, TV_NCHW);
                double *x = tview_random(n, -3, 3), *dy = tview_random(n, -1, 1);
                double *y = malloc(sizeof(double) * (size_t)n), *dx = malloc(sizeof(double) * (size_t)n);
                void *px = tview_upload(&v, x), *pdy = tview_upload(&v, dy), *py = tview_upload(&v, NULL);
                void *pdx = tview_upload(&v, NULL);
                struct tscale one, zero;
                const void *a = tscale(&one, types[k], 1), *b = tscale(&zero, types[k], 0);
                ref_softmax_forward(CUDNN_SOFTMAX_ACCURATE, mode, rank, dims, x, y);
                if (CHECK_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, mode, a, v.desc, px, b, v.desc, py))) {
                    tview_check(&v, py, y, "Dragon's softmax");
                    tview_download(&v, py, y); /* the backward reads the y the forward left */
                    ref_softmax_backward(CUDNN_SOFTMAX_ACCURATE, mode, rank, dims, y, dy, dx);
                    if (CHECK_OK(cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_ACCURATE, mode, a, v.desc, py, v.desc, pdy, b,
                                                      v.desc, pdx)))
                        tview_check(&v, pdx, dx, "Dragon's softmax gradient");
                }
                tview_free(&v, px), tview_free(&v, pdy), tview_free(&v, py), tview_free(&v, pdx);
                free(x), free(dy), free(y), free(dx);
                tview_destroy(&v);
            }
}

/* ---- CUDA.jl's pooling (lib/cudnn/pooling.jl, from Knet; NNlib's maxpool and meanpool) ------- */

/* A Julia array of n dims (spatial first, then C and N, column-major) is the C-order tensor
   [N, C, reversed spatial dims], an array of 3 dims padded to [N, C, X, 1]; the descriptor has
   max(2, n - 2) dims whose window, padding and stride are the keyword values reversed, each
   clamped to its dim's extent ("If any of the entries is larger than the corresponding x
   dimension, the x dimension is used instead"), stride defaulting to the window. y from
   cudnnGetPoolingNdForwardOutputDim asked for max(4, n) dims (a trailing 1 dropped for 3-dim
   arrays). The backward: cudnnPoolingBackward(alpha, yDesc, y, yDesc, dy, xDesc, x, beta, xDesc,
   dx), the forward's descriptor and y. */
TEST(compat_pool_cudajl_clamped_windows_padded_dims)
{
    static const struct {
        int nd, jdims[5]; /* Julia's dims: spatial..., C, N */
        int window, pad, stride; /* stride 0: the window */
        cudnnPoolingMode_t mode;
        cudnnDataType_t t;
    } cases[] = {
        {4, {7, 6, 3, 2}, 2, 0, 0, CUDNN_POOLING_MAX, CUDNN_DATA_FLOAT},
        {3, {9, 4, 2}, 3, 0, 2, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_DATA_FLOAT},
        {5, {5, 4, 3, 2, 2}, 2, 0, 0, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_DATA_DOUBLE},
        {4, {5, 3, 2, 3}, 10, 0, 0, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_DATA_FLOAT},
        {4, {6, 5, 2, 2}, 3, 1, 2, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_DATA_DOUBLE},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int nd = cases[k].nd, nsp = nd - 2, nb = nsp < 2 ? 2 : nsp, rank = nd < 4 ? 4 : nd;
        int xd[5], win[3] = {0}, pad[3] = {0}, stride[3] = {0}, in[3] = {0};
        xd[0] = cases[k].jdims[nd - 1], xd[1] = cases[k].jdims[nd - 2];
        for (int i = 0; i < rank - 2; i++) in[i] = xd[2 + i] = i < nsp ? cases[k].jdims[nsp - 1 - i] : 1;
        for (int i = 0; i < nb; i++) {
            const int s = cases[k].stride ? cases[k].stride : cases[k].window;
            win[i] = cases[k].window < in[i] ? cases[k].window : in[i];
            pad[i] = cases[k].pad < in[i] ? cases[k].pad : in[i];
            stride[i] = s < in[i] ? s : in[i];
        }
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        CHECK_OK(cudnnSetPoolingNdDescriptor(pd, cases[k].mode, CUDNN_NOT_PROPAGATE_NAN, nb, win, pad, stride));
        struct tview x;
        tview_init(&x, cases[k].t, rank, xd, TV_NCHW);
        int yd[5] = {0};
        if (!CHECK_OK(cudnnGetPoolingNdForwardOutputDim(pd, x.desc, rank, yd))) {
            cudnnDestroyPoolingDescriptor(pd);
            tview_destroy(&x);
            continue;
        }
        struct tview y;
        tview_init(&y, cases[k].t, rank, yd, TV_NCHW);
        const struct ref_pool rp = {cases[k].mode, false, nb, {win[0], win[1], win[2]}, {pad[0], pad[1], pad[2]},
                                    {stride[0], stride[1], stride[2]}};
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(y.count, -1, 1);
        double *yv = malloc(sizeof(double) * (size_t)y.count), *dxv = malloc(sizeof(double) * (size_t)x.count);
        void *px = tview_upload(&x, xv), *pdy = tview_upload(&y, dyv), *py = tview_upload(&y, NULL);
        void *pdx = tview_upload(&x, NULL);
        ref_pooling_forward(&rp, xd[0], xd[1], in, &yd[2], xv, yv);
        ref_pooling_backward(&rp, xd[0], xd[1], in, &yd[2], xv, dyv, dxv);
        struct tscale one, zero;
        const void *a = tscale(&one, cases[k].t, 1), *b = tscale(&zero, cases[k].t, 0);
        if (CHECK_OK(cudnnPoolingForward(h, pd, a, x.desc, px, b, y.desc, py)))
            tview_check(&y, py, yv, "CUDA.jl's pooling");
        if (CHECK_OK(cudnnPoolingBackward(h, pd, a, y.desc, py, y.desc, pdy, x.desc, px, b, x.desc, pdx)))
            tview_check(&x, pdx, dxv, "CUDA.jl's pooling gradient");
        tview_free(&x, px), tview_free(&y, pdy), tview_free(&y, py), tview_free(&x, pdx);
        free(xv), free(dyv), free(yv), free(dxv);
        tview_destroy(&x), tview_destroy(&y);
        cudnnDestroyPoolingDescriptor(pd);
    }
}

/* ---- Merlin.jl's softmax (src/cuda/functions/softmax.jl; LibCUDA.jl's src/cudnn/softmax.jl) -- */

/* A Julia array of up to 4 dims padded on the left to 4 (TensorDesc(x, pad=4-N)): a (C, N)
   matrix is the C-order [N, C, 1, 1]; CHANNEL mode, ACCURATE or LOG; the forward with alpha 1
   and beta 0, the backward **adding into the input's gradient** (beta 1: T[1]) when the graph
   already holds one, from the y the forward wrote; one descriptor for every tensor. */
TEST(compat_softmax_merlin_backward_adds_to_gradient)
{
    static const cudnnSoftmaxAlgorithm_t algos[] = {CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_LOG};
    static const int jdims[][4] = {{10, 6, 0, 0}, {5, 4, 3, 2}};
    cudnnHandle_t h = test_handle();
    for (size_t a = 0; a < TLEN(algos); a++)
        for (size_t s = 0; s < TLEN(jdims); s++) {
            int nd = jdims[s][2] ? 4 : 2, d[4] = {1, 1, 1, 1};
            for (int i = 0; i < nd; i++) d[3 - i] = jdims[s][i]; /* reversed, padded on the left */
            struct tview v;
            tview_init(&v, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
            double *x = tview_random(v.count, -3, 3), *dy = tview_random(v.count, -1, 1);
            double *prior = tview_random(v.count, -1, 1), *y = malloc(sizeof(double) * (size_t)v.count);
            double *dx = malloc(sizeof(double) * (size_t)v.count);
            void *px = tview_upload(&v, x), *pdy = tview_upload(&v, dy), *py = tview_upload(&v, NULL);
            void *pdx = tview_upload(&v, prior);
            const float one = 1, zero = 0;
            ref_softmax_forward(algos[a], CUDNN_SOFTMAX_MODE_CHANNEL, 4, d, x, y);
            if (CHECK_OK(cudnnSoftmaxForward(h, algos[a], CUDNN_SOFTMAX_MODE_CHANNEL, &one, v.desc, px, &zero, v.desc,
                                             py))) {
                tview_check(&v, py, y, "Merlin's softmax");
                tview_download(&v, py, y);
                ref_softmax_backward(algos[a], CUDNN_SOFTMAX_MODE_CHANNEL, 4, d, y, dy, dx);
                if (CHECK_OK(cudnnSoftmaxBackward(h, algos[a], CUDNN_SOFTMAX_MODE_CHANNEL, &one, v.desc, py, v.desc,
                                                  pdy, &one, v.desc, pdx)))
                    tview_check_blend(&v, pdx, dx, prior, 1, 1, ttolerance(CUDNN_DATA_FLOAT),
                                      "gradient added to the one held");
            }
            tview_free(&v, px), tview_free(&v, pdy), tview_free(&v, py), tview_free(&v, pdx);
            free(x), free(dy), free(prior), free(y), free(dx);
            tview_destroy(&v);
        }
}

/* ---- ONNX Runtime's BatchNormalization (onnxruntime/core/providers/cuda/nn/batch_norm.cc) ---- */

/* Inference: x of rank 4 or 5 as it is, of rank 2 or 3 padded to {N, C, H or 1, 1}
   (BatchNormHelper::NormalizeDims), through cudnnSetTensorNdDescriptor with packed strides; the
   parameters' descriptor derived (cudnnDeriveBNTensorDescriptor) for SPATIAL, or PER_ACTIVATION
   when the attribute spatial is 0; epsilon the float attribute widened to double (clamped to
   CUDNN_BN_MIN_EPSILON, 0 in cuDNN 8); alpha and beta of the data's type, and for half data the
   scale, bias, mean and variance cast to float buffers by the provider. */
TEST(compat_bn_onnxruntime_inference_normalized_dims)
{
    static const struct { int rank, dims[5]; bool spatial; cudnnDataType_t t; } cases[] = {
        {4, {2, 3, 4, 5}, true, CUDNN_DATA_FLOAT},  {2, {6, 4}, true, CUDNN_DATA_FLOAT},
        {3, {3, 4, 7}, false, CUDNN_DATA_DOUBLE},   {5, {2, 3, 2, 3, 4}, true, CUDNN_DATA_HALF},
        {3, {4, 5, 6}, true, CUDNN_DATA_HALF},      {2, {5, 3}, false, CUDNN_DATA_FLOAT},
    };
    cudnnHandle_t h = test_handle();
    const double eps = (double)1e-5f;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int r = cases[k].rank < 4 ? 4 : cases[k].rank;
        int d[5] = {1, 1, 1, 1, 1};
        for (int i = 0; i < cases[k].rank; i++) d[i] = cases[k].dims[i];
        struct tview x;
        tview_init(&x, cases[k].t, r, d, TV_NCHW);
        const cudnnBatchNormMode_t mode = cases[k].spatial ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_PER_ACTIVATION;
        cudnnTensorDescriptor_t bd;
        CHECK_OK(cudnnCreateTensorDescriptor(&bd));
        CHECK_OK(cudnnDeriveBNTensorDescriptor(bd, x.desc, mode));
        int64_t s = 1;
        for (int i = 2; i < r; i++) s *= d[i];
        const struct ref_bn_shape sh = {d[0], d[1], s, !cases[k].spatial};
        const int64_t slots = ref_bn_slots(&sh);
        const cudnnDataType_t pt = cases[k].t == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        double *xv = tview_random(x.count, -2, 2), *y = malloc(sizeof(double) * (size_t)x.count);
        double *scale = tview_random(slots, 0.5, 1.5), *bias = tview_random(slots, -0.5, 0.5);
        double *mean = tview_random(slots, -1, 1), *var = tview_random(slots, 0.25, 2);
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL);
        void *ps = tvalues_upload(pt, scale, slots), *pb = tvalues_upload(pt, bias, slots);
        void *pm = tvalues_upload(pt, mean, slots), *pv = tvalues_upload(pt, var, slots);
        ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
        struct tscale one, zero;
        if (CHECK_OK(cudnnBatchNormalizationForwardInference(h, mode, tscale(&one, cases[k].t, 1),
                                                             tscale(&zero, cases[k].t, 0), x.desc, px, x.desc, py,
                                                             bd, ps, pb, pm, pv, eps)))
            tview_check(&x, py, y, "ONNX Runtime's BatchNormalization");
        tview_free(&x, px), tview_free(&x, py);
        tbuf_free(ps), tbuf_free(pb), tbuf_free(pm), tbuf_free(pv);
        free(xv), free(y), free(scale), free(bias), free(mean), free(var);
        cudnnDestroyTensorDescriptor(bd);
        tview_destroy(&x);
    }
}

/* ---- Caffe2's ConvTranspose (caffe2/operators/conv_transpose_op_cudnn.cc) ------------------- */

/* The op's x (N x M x H x W) is the bottom, its y (N x C x H_out x W_out, H_out = (H - 1) stride
   - 2 pad + kernel + adj) the top: the 4-D setters in the op's order (NCHW or NHWC, the filter
   M x C x kh x kw in that format too, the bias 1 x C x 1 x 1), cudnnSetConvolution2dDescriptor
   with the data type as compute type, TENSOR_OP_MATH; exhaustive search: each direction's
   cudnnFind*Algorithm asked for Caffe2's own counts (5 backward data, 4 backward filter, and 5
   for the forward, into 7), results[0] taken. Forward: backward data into the top (beta 0),
   then cudnnAddTensor of the bias (beta 1). Gradient: cudnnConvolutionBackwardBias over dY,
   backward filter with **the top as x** and the bottom as dy, and dX by a forward convolution
   of dY (the top as x, whose extra adj rows no output window reads); one workspace of the
   larger size. */
TEST(compat_conv_caffe2_transpose_through_backward_data)
{
    static const struct { cudnnTensorFormat_t fmt; int stride, pad, adj; } cases[] = {
        {CUDNN_TENSOR_NCHW, 2, 1, 1}, {CUDNN_TENSOR_NHWC, 2, 0, 0}, {CUDNN_TENSOR_NHWC, 3, 1, 2}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int s = cases[k].stride, p = cases[k].pad, kk = 3;
        const int n = 2, m = 4, c = 3, hh = 4, ww = 5;
        /* the convolution whose backward data is the op: x = top, y = bottom */
        struct ref_conv rc = {.nsp = 2, .n = n, .c = c, .k = m, .groups = 1, .filt = {kk, kk}, .pad = {p, p},
                              .stride = {s, s}, .dil = {1, 1}};
        rc.in[0] = (hh - 1) * s - 2 * p + kk + cases[k].adj, rc.in[1] = (ww - 1) * s - 2 * p + kk + cases[k].adj;
        if (!CHECK(ref_conv_out_dims(&rc) && rc.out[0] == hh && rc.out[1] == ww)) continue;
        struct tconv_run r;
        tconv_run_init(&r, &rc, CUDNN_DATA_FLOAT);
        const int layout = cases[k].fmt == CUDNN_TENSOR_NHWC ? TV_NHWC : TV_NCHW;
        const int topd[4] = {n, c, rc.in[0], rc.in[1]}, botd[4] = {n, m, hh, ww}, wd[4] = {m, c, kk, kk};
        const int bd4[4] = {1, c, 1, 1};
        struct tview top, bot, w, bias;
        tview_init(&top, CUDNN_DATA_FLOAT, 4, topd, layout), tview_init(&bot, CUDNN_DATA_FLOAT, 4, botd, layout);
        tview_init(&w, CUDNN_DATA_FLOAT, 4, wd, layout), tview_init(&bias, CUDNN_DATA_FLOAT, 4, bd4, layout);
        cudnnTensorDescriptor_t bdesc;
        CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
        CHECK_OK(cudnnSetTensor4dDescriptor(r.yd, cases[k].fmt, CUDNN_DATA_FLOAT, n, m, hh, ww)); /* bottom */
        CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, CUDNN_DATA_FLOAT, cases[k].fmt, m, c, kk, kk));
        CHECK_OK(cudnnSetTensor4dDescriptor(bdesc, cases[k].fmt, CUDNN_DATA_FLOAT, 1, c, 1, 1));
        CHECK_OK(cudnnSetTensor4dDescriptor(r.xd, cases[k].fmt, CUDNN_DATA_FLOAT, n, c, rc.in[0], rc.in[1]));
        CHECK_OK(cudnnSetConvolution2dDescriptor(r.cd, p, p, s, s, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH));
        double *bv = tview_random(c, -1, 1), *ytop = malloc(sizeof(double) * (size_t)r.nx);
        double *db = calloc((size_t)c, sizeof(double));
        const long per = (long)rc.in[0] * rc.in[1];
        for (long i = 0; i < r.nx; i++) ytop[i] = r.dx[i] + bv[i / per % c]; /* the op's y */
        /* the gradient op's dY is r.x (top-shaped), its X r.dy (bottom-shaped): */
        for (long i = 0; i < r.nx; i++) db[i / per % c] += r.x[i];
        void *pbot = tview_upload(&bot, r.dy), *pw = tview_upload(&w, r.w), *pb = tview_upload(&bias, bv);
        void *ptop = tview_upload(&top, NULL), *pdtop = tview_upload(&top, r.x), *pdw = tview_upload(&w, NULL);
        void *pdbot = tview_upload(&bot, NULL), *pdb = tview_upload(&bias, NULL);
        int got = 0;
        cudnnConvolutionBwdDataAlgoPerf_t dperf[5];
        cudnnConvolutionBwdFilterAlgoPerf_t wperf[4];
        cudnnConvolutionFwdAlgoPerf_t fperf[7];
        CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, r.wd, r.yd, r.cd, r.xd, 5, &got, dperf));
        CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, r.xd, r.yd, r.cd, r.wd, 4, &got, wperf));
        CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, r.xd, r.wd, r.cd, r.yd, 5, &got, fperf));
        size_t dbytes = 0, wbytes = 0, fbytes = 0;
        CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, r.wd, r.yd, r.cd, r.xd, dperf[0].algo, &dbytes));
        CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, r.xd, r.yd, r.cd, r.wd, wperf[0].algo, &wbytes));
        CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd, fperf[0].algo, &fbytes));
        const size_t gbytes = wbytes > fbytes ? wbytes : fbytes;
        void *ws = dbytes ? tbuf_alloc(dbytes) : NULL, *gws = gbytes ? tbuf_alloc(gbytes) : NULL;
        const float one = 1, zero = 0;
        const double tol = tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH);
        if (CHECK_OK(cudnnConvolutionBackwardData(h, &one, r.wd, pw, r.yd, pbot, r.cd, dperf[0].algo, ws, dbytes,
                                                  &zero, r.xd, ptop)) &&
            CHECK_OK(cudnnAddTensor(h, &one, bdesc, pb, &one, r.xd, ptop)))
            tview_check_blend(&top, ptop, ytop, NULL, 1, 0, tol, "Caffe2's ConvTranspose");
        if (CHECK_OK(cudnnConvolutionBackwardBias(h, &one, r.xd, pdtop, &zero, bdesc, pdb)))
            tview_check_blend(&bias, pdb, db, NULL, 1, 0, tol, "its bias gradient");
        if (CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, r.xd, pdtop, r.yd, pbot, r.cd, wperf[0].algo, gws, gbytes,
                                                    &zero, r.wd, pdw)))
            tview_check_blend(&w, pdw, r.dw, NULL, 1, 0, tol, "its filter gradient");
        if (CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, pdtop, r.wd, pw, r.cd, fperf[0].algo, gws, gbytes, &zero,
                                             r.yd, pdbot)))
            tview_check_blend(&bot, pdbot, r.y, NULL, 1, 0, tol, "its input gradient");
        tbuf_free(ws), tbuf_free(gws);
        tview_free(&bot, pbot), tview_free(&w, pw), tview_free(&bias, pb), tview_free(&top, ptop);
        tview_free(&top, pdtop), tview_free(&w, pdw), tview_free(&bot, pdbot), tview_free(&bias, pdb);
        tview_destroy(&top), tview_destroy(&bot), tview_destroy(&w), tview_destroy(&bias);
        free(bv), free(ytop), free(db);
        cudnnDestroyTensorDescriptor(bdesc);
        tconv_run_free(&r);
    }
}

/* ---- cudarc's safe wrappers (src/cudnn/safe/mod.rs, reduce.rs, activation.rs) --------------- */

/* cudarc's test_reduction: create_nd_tensor with **stride 0 on the dims of extent 1** (a as
   [1, 1, 2, 3] strides [0, 6, 3, 1], c as [1, 1, 1, 1] strides [0, 0, 0, 1]), an ADD reduction
   without indices, NaN propagated, the workspace of cudnnGetReductionWorkspaceSize, alpha 1 and
   beta 0, the sum 21 asserted; NVIDIA's library takes the descriptors and the call. Then an
   activation over a [1, 3, 1, 4] tensor with strides [0, 4, 0, 1] (ActivationForward takes any
   create_nd_tensor descriptor). The getter returns the strides as set; a zero stride on a dim of
   extent above 1 stays BAD_PARAM. */
TEST(compat_reduce_cudarc_zero_strides_on_unit_dims)
{
    cudnnHandle_t h = test_handle();
    const int ad[4] = {1, 1, 2, 3}, as[4] = {0, 6, 3, 1}, cd[4] = {1, 1, 1, 1}, cs[4] = {0, 0, 0, 1};
    cudnnTensorDescriptor_t a, c;
    CHECK_OK(cudnnCreateTensorDescriptor(&a));
    CHECK_OK(cudnnCreateTensorDescriptor(&c));
    if (CHECK_OK(cudnnSetTensorNdDescriptor(a, CUDNN_DATA_FLOAT, 4, ad, as)) &&
        CHECK_OK(cudnnSetTensorNdDescriptor(c, CUDNN_DATA_FLOAT, 4, cd, cs))) {
        int nb = 0, gd[4], gs[4];
        cudnnDataType_t t;
        CHECK_OK(cudnnGetTensorNdDescriptor(c, 4, &t, &nb, gd, gs));
        CHECK(nb == 4 && gs[0] == 0 && gs[1] == 0 && gs[2] == 0 && gs[3] == 1);
        cudnnReduceTensorDescriptor_t rd;
        CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd));
        CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                                CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
        double av[6] = {1, 2, 3, 4, 5, 6}, want = 21;
        void *pa = tvalues_upload(CUDNN_DATA_FLOAT, av, 6), *pc = tbuf_alloc(sizeof(float));
        size_t ws = 0;
        CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, a, c, &ws));
        void *work = tbuf_alloc(ws ? ws : 1);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnReduceTensor(h, rd, NULL, 0, work, ws, &one, a, pa, &zero, c, pc)))
            tvalues_check(CUDNN_DATA_FLOAT, pc, &want, 1, ttolerance(CUDNN_DATA_FLOAT), "cudarc's sum");
        tbuf_free(pa), tbuf_free(pc), tbuf_free(work);
        cudnnDestroyReduceTensorDescriptor(rd);
    }
    const int xd[4] = {1, 3, 1, 4}, xs[4] = {0, 4, 0, 1};
    if (CHECK_OK(cudnnSetTensorNdDescriptor(a, CUDNN_DATA_FLOAT, 4, xd, xs))) {
        cudnnActivationDescriptor_t act;
        CHECK_OK(cudnnCreateActivationDescriptor(&act));
        CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, DBL_MAX));
        double *x = tview_random(12, -1, 1), y[12];
        for (int i = 0; i < 12; i++) y[i] = ref_activation(CUDNN_ACTIVATION_RELU, false, 0, 1, x[i]);
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, 12), *py = tbuf_alloc(12 * sizeof(float));
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnActivationForward(h, act, &one, a, px, &zero, a, py)))
            tvalues_check(CUDNN_DATA_FLOAT, py, y, 12, ttolerance(CUDNN_DATA_FLOAT), "ReLU over zero unit strides");
        tbuf_free(px), tbuf_free(py);
        free(x);
        cudnnDestroyActivationDescriptor(act);
    }
    const int bd[4] = {2, 3, 1, 4}, bs[4] = {0, 4, 4, 1};
    CHECK_STATUS(cudnnSetTensorNdDescriptor(a, CUDNN_DATA_FLOAT, 4, bd, bs), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyTensorDescriptor(a);
    cudnnDestroyTensorDescriptor(c);
}

/* cudarc's test_pooling: x created as [32, 3, 4, 4] with strides [32 * 3 * 4, 3 * 4, 4, 1], so
   that each channel's 4 x 4 image runs 4 elements into the next one's (two elements share
   memory); y [32, 3, 2, 2] packed; 2x2 MAX pooling of stride 2, NaN propagated, alpha 1, beta 0.
   NVIDIA's library takes the descriptor and reads x through its strides. The same layout as an
   output (y of the pooling, y of an activation) stays BAD_PARAM with nothing written: elements
   written through it would clobber each other. */
TEST(compat_pool_cudarc_x_elements_overlap)
{
    cudnnHandle_t h = test_handle();
    const int xd[4] = {32, 3, 4, 4}, xs[4] = {32 * 3 * 4, 3 * 4, 4, 1}, yd[4] = {32, 3, 2, 2};
    const int64_t span = 31 * xs[0] + 2 * xs[1] + 3 * xs[2] + 3 + 1, nx = 32 * 3 * 16;
    cudnnTensorDescriptor_t x;
    CHECK_OK(cudnnCreateTensorDescriptor(&x));
    if (!CHECK_OK(cudnnSetTensorNdDescriptor(x, CUDNN_DATA_FLOAT, 4, xd, xs))) {
        cudnnDestroyTensorDescriptor(x);
        return;
    }
    size_t bytes = 0;
    CHECK_OK(cudnnGetTensorSizeInBytes(x, &bytes));
    CHECK(bytes == sizeof(float) * (size_t)span);
    struct tview y;
    tview_init(&y, CUDNN_DATA_FLOAT, 4, yd, TV_NCHW);
    double *buf = tview_random(span, -4, 4), *xv = malloc(sizeof(double) * (size_t)nx);
    double *want = malloc(sizeof(double) * (size_t)y.count);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, buf, span), *py = tview_upload(&y, NULL);
    for (int64_t i = 0; i < nx; i++) /* logical element i = (n, c, h, w) read through the strides */
        xv[i] = buf[i / 48 * xs[0] + i / 16 % 3 * xs[1] + i / 4 % 4 * xs[2] + i % 4];
    const struct ref_pool rp = {CUDNN_POOLING_MAX, true, 2, {2, 2}, {0, 0}, {2, 2}};
    const int in[2] = {4, 4}, out[2] = {2, 2};
    ref_pooling_forward(&rp, 32, 3, in, out, xv, want);
    cudnnPoolingDescriptor_t pd;
    CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
    CHECK_OK(cudnnSetPoolingNdDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, rp.window, rp.pad, rp.stride));
    const float one = 1, zero = 0;
    if (CHECK_OK(cudnnPoolingForward(h, pd, &one, x, px, &zero, y.desc, py)))
        tview_check(&y, py, want, "max pooling over overlapping x");
    /* as an output (y's dims, channels 3 apart over 2 x 2 images): refused, nothing written */
    cudnnTensorDescriptor_t yo;
    const int yos[4] = {12, 3, 2, 1};
    CHECK_OK(cudnnCreateTensorDescriptor(&yo));
    CHECK_OK(cudnnSetTensorNdDescriptor(yo, CUDNN_DATA_FLOAT, 4, yd, yos));
    void *po = tbuf_alloc(sizeof(float) * 32 * 12), *snap = tbuf_snapshot(po, sizeof(float) * 32 * 12);
    CHECK_STATUS(cudnnPoolingForward(h, pd, &one, x, px, &zero, yo, po), CUDNN_STATUS_BAD_PARAM);
    cudnnActivationDescriptor_t act;
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    CHECK_STATUS(cudnnActivationForward(h, act, &one, y.desc, py, &zero, yo, po), CUDNN_STATUS_BAD_PARAM);
    tbuf_unchanged(po, snap, sizeof(float) * 32 * 12, "an overlapping output after the refused calls");
    free(snap);
    tbuf_free(po);
    cudnnDestroyTensorDescriptor(yo);
    cudnnDestroyActivationDescriptor(act);
    cudnnDestroyPoolingDescriptor(pd);
    tbuf_free(px), tview_free(&y, py);
    free(buf), free(xv), free(want);
    tview_destroy(&y);
    cudnnDestroyTensorDescriptor(x);
}

/* ---- Caffe2's SpatialBN (caffe2/operators/spatial_batch_norm_op_cudnn.cc) ------------------ */

/* The descriptor from dims {N, C, H, W, D} and strides computed for the op's order, rank
   max(4, ndim): NCHW {CHWD, HWD, WD, D, 1}; NHWC {HWDC, 1, WDC, DC, C}, so that a 3-D NHWC
   input (N, H, C) is {N, C, H, 1} with strides {HC, 1, C, C}; the parameters derived in SPATIAL
   mode; float, or half with float parameters. Training on a first run: the running averages
   zeroed by the op, the factor 1 - momentum, the saved mean and inverse deviation kept; the
   gradient op from those saved statistics (alphas 1, betas 0). */
TEST(compat_bn_caffe2_spatial_order_strides)
{
    static const struct { int ndim, jd[5]; bool nhwc; cudnnDataType_t t; } cases[] = {
        {3, {4, 5, 3}, true, CUDNN_DATA_FLOAT},     {3, {3, 4, 6}, false, CUDNN_DATA_FLOAT},
        {4, {2, 3, 4, 5}, true, CUDNN_DATA_HALF},   {5, {2, 3, 2, 3, 4}, true, CUDNN_DATA_FLOAT},
        {5, {2, 4, 3, 2, 2}, false, CUDNN_DATA_HALF},
    };
    cudnnHandle_t h = test_handle();
    const double eps = 1e-5, momentum = 0.9;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int nd = cases[k].ndim, *jd = cases[k].jd;
        const bool nhwc = cases[k].nhwc;
        const int n = jd[0], c = nhwc ? jd[nd - 1] : jd[1], hh = nhwc ? jd[1] : jd[2];
        const int w = nd > 3 ? (nhwc ? jd[2] : jd[3]) : 1, dd = nd > 4 ? (nhwc ? jd[3] : jd[4]) : 1;
        const int rank = nd > 3 ? nd : 4, dims[5] = {n, c, hh, w, dd};
        const int nchw_s[5] = {c * hh * w * dd, hh * w * dd, w * dd, dd, 1};
        const int nhwc_s[5] = {hh * w * dd * c, 1, w * dd * c, dd * c, c};
        struct tview x;
        tview_init(&x, cases[k].t, rank, dims, nhwc ? TV_NHWC : TV_NCHW);
        for (int d = 0; d < rank; d++) /* the op's strides address what the view stores */
            CHECK(dims[d] == 1 || x.strides[d] == (nhwc ? nhwc_s : nchw_s)[d]);
        cudnnTensorDescriptor_t xd, bd;
        CHECK_OK(cudnnCreateTensorDescriptor(&xd));
        CHECK_OK(cudnnCreateTensorDescriptor(&bd));
        CHECK_OK(cudnnSetTensorNdDescriptor(xd, cases[k].t, rank, dims, nhwc ? nhwc_s : nchw_s));
        CHECK_OK(cudnnDeriveBNTensorDescriptor(bd, xd, CUDNN_BATCHNORM_SPATIAL));
        const struct ref_bn_shape sh = {n, c, (int64_t)hh * w * dd, false};
        const int64_t cnt = ref_bn_reduced(&sh);
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
        double *scale = tview_random(c, 0.5, 1.5), *bias = tview_random(c, -0.5, 0.5);
        double *mean = malloc(sizeof(double) * (size_t)c), *var = malloc(sizeof(double) * (size_t)c);
        double *inv = malloc(sizeof(double) * (size_t)c), *rm = malloc(sizeof(double) * (size_t)c);
        double *rv = malloc(sizeof(double) * (size_t)c), *y = malloc(sizeof(double) * (size_t)x.count);
        double *dx = malloc(sizeof(double) * (size_t)x.count), *dpre = malloc(sizeof(double) * (size_t)x.count);
        double *ds = malloc(sizeof(double) * (size_t)c), *db = malloc(sizeof(double) * (size_t)c);
        double *zeros = calloc((size_t)c, sizeof(double));
        void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
        void *pdx = tview_upload(&x, NULL);
        void *ps = tvalues_upload(CUDNN_DATA_FLOAT, scale, c), *pb = tvalues_upload(CUDNN_DATA_FLOAT, bias, c);
        void *prm = tvalues_upload(CUDNN_DATA_FLOAT, zeros, c), *prv = tvalues_upload(CUDNN_DATA_FLOAT, zeros, c);
        void *psm = tbuf_alloc(sizeof(float) * (size_t)c), *psv = tbuf_alloc(sizeof(float) * (size_t)c);
        void *pds = tbuf_alloc(sizeof(float) * (size_t)c), *pdb = tbuf_alloc(sizeof(float) * (size_t)c);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
        ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, scale, mean, var, eps, dpre, dx, ds, db);
        for (int i = 0; i < c; i++) {
            inv[i] = 1 / sqrt(var[i] + eps);
            rm[i] = (1 - momentum) * mean[i];
            rv[i] = (1 - momentum) * var[i] * (double)cnt / (double)(cnt - 1);
        }
        const float one = 1, zero = 0;
        const double tol = ttolerance(CUDNN_DATA_FLOAT) * 10;
        if (CHECK_OK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd, px, xd, py, bd,
                                                            ps, pb, 1. - momentum, prm, prv, eps, psm, psv))) {
            tview_check(&x, py, y, "Caffe2's SpatialBN");
            tvalues_check(CUDNN_DATA_FLOAT, psm, mean, c, tol, "saved mean");
            tvalues_check(CUDNN_DATA_FLOAT, psv, inv, c, tol, "saved inverse deviation");
            tvalues_check(CUDNN_DATA_FLOAT, prm, rm, c, tol, "running mean from zeros");
            tvalues_check(CUDNN_DATA_FLOAT, prv, rv, c, tol, "running variance from zeros");
            if (CHECK_OK(cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, xd, px,
                                                         xd, pdy, xd, pdx, bd, ps, pds, pdb, eps, psm, psv))) {
                tview_check(&x, pdx, dx, "Caffe2's SpatialBNGradient dX");
                tvalues_check(CUDNN_DATA_FLOAT, pds, ds, c, tol * 10, "dScale");
                tvalues_check(CUDNN_DATA_FLOAT, pdb, db, c, tol * 10, "dBias");
            }
        }
        void *xb[] = {px, pdy, py, pdx}, *pbufs[] = {ps, pb, prm, prv, psm, psv, pds, pdb};
        for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
        for (size_t i = 0; i < TLEN(pbufs); i++) tbuf_free(pbufs[i]);
        double *hv[] = {xv, dyv, scale, bias, mean, var, inv, rm, rv, y, dx, dpre, ds, db, zeros};
        for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroyTensorDescriptor(bd);
        tview_destroy(&x);
    }
}
