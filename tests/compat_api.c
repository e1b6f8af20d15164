/* compat_api.c: call patterns of real programs (docs/compatibility.md) for API functions that no
   other compat file reaches: cudnnScaleTensor as Thor and SharpNet scale a gradient in place;
   cudnnGetPooling2dForwardOutputDim as hidet's pooling baseline sizes its output;
   cudnnGetFilterSizeInBytes and cudnnGetTensorSizeInBytes sizing the buffers of gocudnn's 3-D
   convolution test and of MindSpore's channels-last filter gradient; the descriptor getters as
   gocudnn's tests, GoCuNets' pooling, cricket's RPC server (into int slots) and GVirtuS's back
   end read back what was set; cudnnIm2Col as MindSpore's Im2Col layer calls it; Thor's batch
   reduction, double data under a FLOAT compute type; cudnnxx's tests: divisive normalization
   (its backward on temporaries no forward wrote), a MAX reduction of a whole tensor with
   flattened indices, and convolution queries with a y that does not match, refused as NVIDIA's
   library refuses them; MyCaffe's extended RNN path, its step tensors derived from
   cudnnGetRNNDataDescriptor; grain's and Kyanite's reversed views (negative strides) copied by
   cudnnTransformTensor and cudnnOpTensor. Each result against the double references of
   tests/ref/. */
#include "conv_harness.h"
#include "desc_util.h"
#include "ref/conv.h"
#include "ref/lrn.h"
#include "ref/pooling.h"
#include "ref/reduce.h"
#include "rnn_harness.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* In-place scaling of a loss gradient: Thor's MeanAbsoluteError::backProp (earlier versions of
   DeepLearning/Implementation/Layers/Loss/MeanAbsoluteError.cpp) scales its [batch, classes]
   error output, FP16 or FP32, by a **float** loss-scaling factor through cudnnScaleTensor, the
   descriptor from Layer::createCudnnTensorDescriptor (the dims padded with trailing 1s to 4,
   packed strides, cudnnSetTensorNdDescriptor); SharpNet's GPUTensor.Update_Multiplying_By_Alpha
   (SharpNet/GPU/GPUTensor.cs) passes a float or, for double tensors, a double alpha with an NCHW
   4-D descriptor. */
TEST(compat_scale_thor_sharpnet_in_place)
{
    static const struct { cudnnDataType_t t; int dims[4]; double alpha; } cases[] = {
        {CUDNN_DATA_HALF, {6, 10, 1, 1}, 128},   /* Thor, FP16 error output */
        {CUDNN_DATA_FLOAT, {6, 10, 1, 1}, 0.25}, /* Thor, FP32 */
        {CUDNN_DATA_FLOAT, {3, 4, 5, 6}, -1.5},  /* SharpNet, float */
        {CUDNN_DATA_DOUBLE, {3, 4, 5, 6}, 0.1},  /* SharpNet, double */
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        struct tview y;
        tview_init(&y, t, 4, cases[k].dims, TV_NCHW);
        int strides[4] = {0, 0, 0, 1};
        for (int d = 2; d >= 0; d--) strides[d] = strides[d + 1] * cases[k].dims[d + 1];
        double *v = tview_random(y.count, -1, 1);
        void *py = tview_upload(&y, v);
        struct tscale s;
        if (CHECK_OK(cudnnSetTensorNdDescriptor(y.desc, t, 4, cases[k].dims, strides)) &&
            CHECK_OK(cudnnScaleTensor(h, y.desc, py, tscale(&s, t, cases[k].alpha))))
            tview_check_blend(&y, py, v, NULL, cases[k].alpha, 0, ttolerance(t), "a gradient scaled in place");
        tview_free(&y, py);
        free(v);
        tview_destroy(&y);
    }
}

/* hidet's cuDNN pooling baseline (src/hidet/baselines/cudnn_pool2d.cpp): cudnnSetPooling2dDescriptor
   with its workload's (kx, ky, px, py, sx, sy) as window height and width, paddings and strides,
   NOT_PROPAGATE_NAN, any of the four modes; x by cudnnSetTensor4dDescriptor (NCHW, float); y's
   dims **from cudnnGetPooling2dForwardOutputDim**, asserted to be n, c, (h - kx + 2 px) / sx + 1
   and (w - ky + 2 py) / sy + 1; cudnnPoolingForward with alpha 1 and beta 0. */
TEST(compat_pool_hidet_output_dim_each_mode)
{
    static const cudnnPoolingMode_t modes[] = {CUDNN_POOLING_MAX, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                               CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                               CUDNN_POOLING_MAX_DETERMINISTIC};
    const int n = 2, c = 3, hh = 11, ww = 9, kx = 3, ky = 2, px = 1, py = 0, sx = 2, sy = 1;
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(modes); k++) {
        cudnnPoolingDescriptor_t pd;
        cudnnTensorDescriptor_t xd, yd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        CHECK_OK(cudnnCreateTensorDescriptor(&xd));
        CHECK_OK(cudnnCreateTensorDescriptor(&yd));
        int on = 0, oc = 0, oh = 0, ow = 0;
        bool ok = CHECK_OK(cudnnSetPooling2dDescriptor(pd, modes[k], CUDNN_NOT_PROPAGATE_NAN, kx, ky, px, py, sx, sy)) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, hh, ww)) &&
                  CHECK_OK(cudnnGetPooling2dForwardOutputDim(pd, xd, &on, &oc, &oh, &ow)) &&
                  CHECK(on == n && oc == c && oh == (hh - kx + 2 * px) / sx + 1 && ow == (ww - ky + 2 * py) / sy + 1) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow));
        const int in[2] = {hh, ww}, out[2] = {oh, ow};
        const int64_t nx = (int64_t)n * c * hh * ww, ny = (int64_t)n * c * oh * ow;
        double *x = tview_random(nx, -2, 2), *want = malloc(sizeof(double) * (size_t)(ny > 0 ? ny : 1));
        void *pxb = tvalues_upload(CUDNN_DATA_FLOAT, x, nx), *pyb = tbuf_alloc(sizeof(float) * (size_t)(ny > 0 ? ny : 1));
        const struct ref_pool rp = {modes[k], false, 2, {kx, ky}, {px, py}, {sx, sy}};
        const float one = 1, zero = 0;
        if (ok) {
            ref_pooling_forward(&rp, n, c, in, out, x, want);
            if (CHECK_OK(cudnnPoolingForward(h, pd, &one, xd, pxb, &zero, yd, pyb)))
                tvalues_check(CUDNN_DATA_FLOAT, pyb, want, ny, 1e-5, "hidet's pooling, y sized by the query");
        }
        tbuf_free(pxb), tbuf_free(pyb);
        free(x), free(want);
        cudnnDestroyPoolingDescriptor(pd);
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroyTensorDescriptor(yd);
    }
}

/* gocudnn's convolution test (cudnnConvolution_test.go), run on NVIDIA's library: a 3-D
   convolution, x {3, 3, 1000, 32, 32} by cudnnSetTensorNdDescriptorEx(NCHW) (TensorD.Set without
   strides), the filter {20, 3, 1, 5, 5} by cudnnSetFilterNdDescriptor, pads {0, 1, 1}, strides and
   dilations 1 by cudnnSetConvolutionNdDescriptor (CROSS_CORRELATION, FLOAT); y's dims from
   cudnnGetConvolutionNdForwardOutputDim; **each buffer allocated from the size queries**
   (cudnnGetTensorSizeInBytes for x and y, cudnnGetFilterSizeInBytes for the filter); the forward
   on the algorithm of the no-workspace preference, no workspace (NULL, 0), alpha 1 and beta 0.
   The depth and channels are smaller here. */
TEST(compat_conv_gocudnn_3d_buffers_from_size_queries)
{
    cudnnHandle_t h = test_handle();
    struct ref_conv rc = {3, 3, 3, 5, 1, {4, 9, 8}, {1, 5, 5}, {0}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, false};
    ref_conv_out_dims(&rc);
    int xdims[5], wdims[5], want_y[5];
    tconv_dims(&rc, xdims, wdims, want_y);
    const int pad[3] = {0, 1, 1}, one3[3] = {1, 1, 1};
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK_OK(cudnnCreateTensorDescriptor(&xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&yd));
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
    int ydims[5] = {0};
    size_t xs = 0, ws = 0, ys = 0;
    bool ok = CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 3, pad, one3, one3, CUDNN_CROSS_CORRELATION,
                                                       CUDNN_DATA_FLOAT)) &&
              CHECK_OK(cudnnSetTensorNdDescriptorEx(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 5, xdims)) &&
              CHECK_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, wdims)) &&
              CHECK_OK(cudnnGetConvolutionNdForwardOutputDim(cd, xd, wd, 5, ydims)) &&
              CHECK(memcmp(ydims, want_y, sizeof ydims) == 0) &&
              CHECK_OK(cudnnSetTensorNdDescriptorEx(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 5, ydims)) &&
              CHECK_OK(cudnnGetTensorSizeInBytes(xd, &xs)) && CHECK_OK(cudnnGetFilterSizeInBytes(wd, &ws)) &&
              CHECK_OK(cudnnGetTensorSizeInBytes(yd, &ys)) &&
              CHECK(xs == sizeof(float) * (size_t)ref_conv_x_count(&rc) &&
                    ws == sizeof(float) * (size_t)ref_conv_w_count(&rc) &&
                    ys == sizeof(float) * (size_t)ref_conv_y_count(&rc));
    if (ok) {
        double *x = tview_random(ref_conv_x_count(&rc), -1, 1), *w = tview_random(ref_conv_w_count(&rc), -1, 1);
        double *want = malloc(sizeof(double) * (size_t)ref_conv_y_count(&rc));
        /* the buffers of exactly the queried sizes (checked above) */
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, ref_conv_x_count(&rc));
        void *pw = tvalues_upload(CUDNN_DATA_FLOAT, w, ref_conv_w_count(&rc)), *py = tbuf_alloc(ys);
        ref_conv_fwd(&rc, x, w, want);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnConvolutionForward(h, &one, xd, px, wd, pw, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                             NULL, 0, &zero, yd, py)))
            tvalues_check(CUDNN_DATA_FLOAT, py, want, ref_conv_y_count(&rc), 4e-5, "gocudnn's 3-D convolution");
        tbuf_free(px), tbuf_free(pw), tbuf_free(py);
        free(x), free(w), free(want);
    }
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
}

/* gocudnn's activation test (cudnnActivation_test.go): cudnnSetActivationDescriptor(CLIPPED_RELU,
   NOT_PROPAGATE_NAN, 5.0), then cudnnGetActivationDescriptor must give back the mode, the NaN
   option and the coefficient 5.0 exactly. */
TEST_ONCE(compat_activation_gocudnn_get_returns_set)
{
    cudnnActivationDescriptor_t ad;
    cudnnActivationMode_t mode = CUDNN_ACTIVATION_IDENTITY;
    cudnnNanPropagation_t nan = CUDNN_PROPAGATE_NAN;
    double coef = 0;
    if (!CHECK_OK(cudnnCreateActivationDescriptor(&ad))) return;
    if (CHECK_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_NOT_PROPAGATE_NAN, 5.0)) &&
        CHECK_OK(cudnnGetActivationDescriptor(ad, &mode, &nan, &coef)))
        CHECK(mode == CUDNN_ACTIVATION_CLIPPED_RELU && nan == CUDNN_NOT_PROPAGATE_NAN && coef == 5.0);
    cudnnDestroyActivationDescriptor(ad);
}

/* MindSpore's Conv2DBackpropFilter (plugin/device/gpu/kernel/nn/conv2d_grad_filter_gpu_kernel.cc)
   in NHWC: the group count set first, x and dy as {N, C, H, W} dims with **channels-last
   strides** by cudnnSetTensorNdDescriptor, dw by **cudnnSetFilterNdDescriptor(NHWC)** with
   {O, I, kH, kW}; symmetric pads by cudnnSetConvolutionNdDescriptor (CROSS_CORRELATION, FLOAT),
   TENSOR_OP_MATH for half; the algorithm the first of cudnnGetConvolutionBackwardFilterAlgorithm_v7
   asked for 1, **ALGO_1 forced for half**; dw's buffer sized by **cudnnGetFilterSizeInBytes**,
   the workspace by the query; alpha 1 and beta 0. */
TEST(compat_conv_mindspore_nhwc_filter_grad_sized_by_query)
{
    static const struct { cudnnDataType_t t; int groups; } cases[] = {
        {CUDNN_DATA_FLOAT, 1}, {CUDNN_DATA_HALF, 1}, {CUDNN_DATA_FLOAT, 2}, {CUDNN_DATA_HALF, 2}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        struct ref_conv rc = {2, 2, 4, 6, cases[k].groups, {7, 6}, {3, 3}, {0}, {1, 2}, {2, 1}, {1, 2}, false};
        ref_conv_out_dims(&rc);
        struct tview x, dy, dw;
        tconv_views(&rc, t, TV_NHWC, TV_NHWC, &x, &dw, &dy);
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd;
        CHECK_OK(cudnnCreateFilterDescriptor(&wd));
        CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
        int got = 0;
        cudnnConvolutionBwdFilterAlgoPerf_t perf;
        size_t wbytes = 0, wsbytes = 0;
        bool ok = CHECK_OK(cudnnSetConvolutionGroupCount(cd, rc.groups)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptor(dy.desc, t, 4, dy.dims, dy.strides)) &&
                  CHECK_OK(cudnnSetFilterNdDescriptor(wd, t, CUDNN_TENSOR_NHWC, 4, dw.dims)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptor(x.desc, t, 4, x.dims, x.strides)) &&
                  CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 2, rc.pad, rc.stride, rc.dil, CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT)) &&
                  (t != CUDNN_DATA_HALF || CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH))) &&
                  CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x.desc, dy.desc, cd, wd, 1, &got, &perf)) &&
                  CHECK(got == 1);
        const cudnnConvolutionBwdFilterAlgo_t algo = t == CUDNN_DATA_HALF ? CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 : perf.algo;
        ok = ok && CHECK_OK(cudnnGetFilterSizeInBytes(wd, &wbytes)) && CHECK(wbytes == tview_bytes(&dw)) &&
             CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x.desc, dy.desc, cd, wd, algo, &wsbytes));
        double *xv = tview_random(x.count, -1, 1), *dyv = tview_random(dy.count, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)dw.count);
        void *px = tview_upload(&x, xv), *pdy = tview_upload(&dy, dyv), *pdw = tbuf_alloc(wbytes ? wbytes : 1);
        void *pws = wsbytes ? tbuf_alloc(wsbytes) : NULL;
        ref_conv_bwd_filter(&rc, xv, dyv, want);
        const float one = 1, zero = 0;
        if (ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, x.desc, px, dy.desc, pdy, cd, algo, pws, wsbytes,
                                                          &zero, wd, pdw)))
            tview_check_blend(&dw, pdw, want, NULL, 1, 0, tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH),
                              "MindSpore's channels-last filter gradient");
        tbuf_free(pws), tview_free(&x, px), tview_free(&dy, pdy), tbuf_free(pdw);
        free(xv), free(dyv), free(want);
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroyConvolutionDescriptor(cd);
        tview_destroy(&x), tview_destroy(&dy), tview_destroy(&dw);
    }
}

/* MindSpore's Im2Col kernel (backend/kernel_compiler/gpu/nn/im2col_gpu_kernel.h): x NCHW by
   cudnnSetTensor4dDescriptor (float or half), **the filter {1, C, kH, kW}** (one output channel)
   by cudnnSetFilter4dDescriptor, the group count 1, cudnnSetConvolution2dDescriptor
   (CROSS_CORRELATION, FLOAT) with the layer's pad, stride and dilation, TENSOR_OP_MATH for half;
   **the output described as a 4-D {N C kH, kW OH OW, 1, 1} tensor** whose
   cudnnGetTensorSizeInBytes sizes the buffer, then cudnnIm2Col into it. In "same" mode an odd
   total pad is done by the layer itself: x copied into a zeroed {N, C, H + ph, W + pw} buffer
   (its own Set4d descriptor) and the convolution's pads 0. */
TEST(compat_im2col_mindspore_one_filter_sized_output)
{
    static const struct { cudnnDataType_t t; int pad, stride, dil; bool prepad; } cases[] = {
        {CUDNN_DATA_FLOAT, 0, 1, 1, false}, /* valid */
        {CUDNN_DATA_HALF, 1, 2, 1, false},  /* same, even total: the library pads */
        {CUDNN_DATA_FLOAT, 0, 2, 2, true},  /* same, odd total: padded by the layer */
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const int n = 2, c = 3, hh = 7, ww = 6, kh = 3, kw = 2;
        /* the layer's pre-padding: one more row and column at the bottom and right */
        const int ph = cases[k].prepad ? 1 : 0, pw = cases[k].prepad ? 1 : 0;
        struct ref_conv rc = {2, n, c, 1, 1, {hh + ph, ww + pw}, {kh, kw}, {0},
                              {cases[k].pad, cases[k].pad}, {cases[k].stride, cases[k].stride},
                              {cases[k].dil, cases[k].dil}, false};
        ref_conv_out_dims(&rc);
        const int64_t nx = (int64_t)n * c * rc.in[0] * rc.in[1];
        const int64_t ncol = (int64_t)n * c * kh * kw * rc.out[0] * rc.out[1];
        cudnnTensorDescriptor_t xd, od;
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd;
        CHECK_OK(cudnnCreateTensorDescriptor(&xd));
        CHECK_OK(cudnnCreateTensorDescriptor(&od));
        CHECK_OK(cudnnCreateFilterDescriptor(&wd));
        CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
        size_t obytes = 0;
        bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, t, n, c, rc.in[0], rc.in[1])) &&
                  CHECK_OK(cudnnSetFilter4dDescriptor(wd, t, CUDNN_TENSOR_NCHW, 1, c, kh, kw)) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(od, CUDNN_TENSOR_NCHW, t, n * c * kh,
                                                      kw * rc.out[0] * rc.out[1], 1, 1)) &&
                  CHECK_OK(cudnnSetConvolutionGroupCount(cd, 1)) &&
                  CHECK_OK(cudnnSetConvolution2dDescriptor(cd, rc.pad[0], rc.pad[1], rc.stride[0], rc.stride[1],
                                                           rc.dil[0], rc.dil[1], CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT)) &&
                  (t != CUDNN_DATA_HALF || CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH))) &&
                  CHECK_OK(cudnnGetTensorSizeInBytes(od, &obytes)) && CHECK(obytes == tdtype_size(t) * (size_t)ncol);
        /* x, zero in the layer's padding rows and columns */
        double *x = tview_random(nx, -2, 2), *want = malloc(sizeof(double) * (size_t)ncol);
        for (int64_t i = 0; i < nx; i++)
            if (i / rc.in[1] % rc.in[0] >= hh || i % rc.in[1] >= ww) x[i] = 0;
        void *px = tvalues_upload(t, x, nx), *pcol = tbuf_alloc(obytes ? obytes : 1);
        ref_conv_im2col(&rc, x, want);
        if (ok && CHECK_OK(cudnnIm2Col(h, xd, px, wd, cd, pcol)))
            tvalues_check(t, pcol, want, ncol, 0, "MindSpore's Im2Col");
        tbuf_free(px), tbuf_free(pcol);
        free(x), free(want);
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroyTensorDescriptor(od);
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroyConvolutionDescriptor(cd);
    }
}

/* The RPC server of cricket (cpu/cpu-server-cudnn.c), which runs a remote client's cuDNN calls:
   each Set forwarded with the client's values, each getter writing into the reply's arrays,
   **the enumerations through int slots** cast to the enum pointer types (cudnnGetFilter4dDescriptor
   into int[6], cudnnGetPooling2dDescriptor into int[8], cudnnGetActivationDescriptor into
   {int[2], double}, cudnnGetLRNDescriptor into {unsigned, double[3]},
   cudnnGetActivationDescriptorSwishBeta into a double, cudnnGetPooling2dForwardOutputDim into
   int[4], cudnnGetFilterSizeInBytes into a size_t, cudnnGetStream into a 64-bit pointer slot
   after cudnnSetStream of the client's stream, here the default one). */
TEST_ONCE(compat_getters_cricket_server_slots)
{
    cudnnHandle_t h = NULL;
    cudnnFilterDescriptor_t fd;
    cudnnPoolingDescriptor_t pd;
    cudnnActivationDescriptor_t ad;
    cudnnLRNDescriptor_t ld;
    cudnnTensorDescriptor_t xd;
    if (!CHECK_OK(cudnnCreate(&h))) return;
    CHECK_OK(cudnnCreateFilterDescriptor(&fd));
    CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
    CHECK_OK(cudnnCreateActivationDescriptor(&ad));
    CHECK_OK(cudnnCreateLRNDescriptor(&ld));
    CHECK_OK(cudnnCreateTensorDescriptor(&xd));
    int f6[6], p8[8], o4[4];
    struct { int i[2]; double d; } a;
    struct { int i; double d[3]; } l;
    double swish = 0;
    size_t fbytes = 0;
    uint64_t stream_slot = ~(uint64_t)0;
    memset(f6, 0xFF, sizeof f6), memset(p8, 0xFF, sizeof p8), memset(o4, 0xFF, sizeof o4);
    memset(&a, 0xFF, sizeof a), memset(&l, 0xFF, sizeof l);
    if (CHECK_OK(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 32, 3, 5, 7)) &&
        CHECK_OK(cudnnGetFilter4dDescriptor(fd, (cudnnDataType_t *)&f6[0], (cudnnTensorFormat_t *)&f6[1], &f6[2],
                                            &f6[3], &f6[4], &f6[5])) &&
        CHECK_OK(cudnnGetFilterSizeInBytes(fd, &fbytes)))
        CHECK(f6[0] == CUDNN_DATA_HALF && f6[1] == CUDNN_TENSOR_NHWC && f6[2] == 32 && f6[3] == 3 && f6[4] == 5 &&
              f6[5] == 7 && fbytes == 2u * 32 * 3 * 5 * 7);
    if (CHECK_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_PROPAGATE_NAN, 3, 2, 1, 0, 2,
                                             1)) &&
        CHECK_OK(cudnnGetPooling2dDescriptor(pd, (cudnnPoolingMode_t *)&p8[0], (cudnnNanPropagation_t *)&p8[1], &p8[2],
                                             &p8[3], &p8[4], &p8[5], &p8[6], &p8[7])))
        CHECK(p8[0] == CUDNN_POOLING_MAX_DETERMINISTIC && p8[1] == CUDNN_PROPAGATE_NAN && p8[2] == 3 && p8[3] == 2 &&
              p8[4] == 1 && p8[5] == 0 && p8[6] == 2 && p8[7] == 1);
    if (CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 9, 8)) &&
        CHECK_OK(cudnnGetPooling2dForwardOutputDim(pd, xd, &o4[0], &o4[1], &o4[2], &o4[3])))
        CHECK(o4[0] == 2 && o4[1] == 3 && o4[2] == (9 + 2 - 3) / 2 + 1 && o4[3] == 8 - 2 + 1);
    if (CHECK_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_SWISH, CUDNN_NOT_PROPAGATE_NAN, 0)) &&
        CHECK_OK(cudnnSetActivationDescriptorSwishBeta(ad, 1.5)) &&
        CHECK_OK(cudnnGetActivationDescriptor(ad, (cudnnActivationMode_t *)&a.i[0], (cudnnNanPropagation_t *)&a.i[1],
                                              &a.d)) &&
        CHECK_OK(cudnnGetActivationDescriptorSwishBeta(ad, &swish)))
        CHECK(a.i[0] == CUDNN_ACTIVATION_SWISH && a.i[1] == CUDNN_NOT_PROPAGATE_NAN && a.d == 0 && swish == 1.5);
    if (CHECK_OK(cudnnSetLRNDescriptor(ld, 5, 1e-4, 0.75, 2.0)) &&
        CHECK_OK(cudnnGetLRNDescriptor(ld, (unsigned *)&l.i, &l.d[0], &l.d[1], &l.d[2])))
        CHECK(l.i == 5 && l.d[0] == 1e-4 && l.d[1] == 0.75 && l.d[2] == 2.0);
    if (CHECK_OK(cudnnSetStream(h, NULL)) && CHECK_OK(cudnnGetStream(h, (cudaStream_t *)&stream_slot)))
        CHECK(stream_slot == 0);
    cudnnDestroyFilterDescriptor(fd);
    cudnnDestroyPoolingDescriptor(pd);
    cudnnDestroyActivationDescriptor(ad);
    cudnnDestroyLRNDescriptor(ld);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroy(h);
}

/* GVirtuS's cuDNN back end (plugins/cudnn/backend/CudnnHandler.cpp, the GetConvolution2dDescriptor
   handler) reads a client's convolution descriptor back with cudnnGetConvolution2dDescriptor into
   ints for the pads, strides and dilations, the mode, and a compute type initialised to FLOAT. */
TEST_ONCE(compat_getters_gvirtus_convolution_2d)
{
    cudnnConvolutionDescriptor_t cd;
    if (!CHECK_OK(cudnnCreateConvolutionDescriptor(&cd))) return;
    int padh = -1, padw = -1, u = -1, v = -1, upscalex = -1, upscaley = -1;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    if (CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 2, 0, 1, 3, 2, 1, CUDNN_CONVOLUTION, CUDNN_DATA_HALF)) &&
        CHECK_OK(cudnnGetConvolution2dDescriptor(cd, &padh, &padw, &u, &v, &upscalex, &upscaley, &mode, &compute)))
        CHECK(padh == 2 && padw == 0 && u == 1 && v == 3 && upscalex == 2 && upscaley == 1 &&
              mode == CUDNN_CONVOLUTION && compute == CUDNN_DATA_HALF);
    cudnnDestroyConvolutionDescriptor(cd);
}

/* GoCuNets' pooling ops (gocudnn/pool/pool.go, through its gocudnn wrapper): a 5-D input gets an Nd pooling
   descriptor (cudnnSetPoolingNdDescriptor with as many dims as the window has), whose settings
   are read back for the layer's saved Info by **cudnnGetPoolingNdDescriptor asked for that many
   dims**; y's dims from cudnnGetPoolingNdForwardOutputDim on x (cudnnSetTensorNdDescriptorEx
   NCHW); the forward and backward with double alpha and beta for double data. */
TEST(compat_pool_gocunets_nd_descriptor_read_back)
{
    static const cudnnPoolingMode_t modes[] = {CUDNN_POOLING_MAX, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING};
    const int xdims[5] = {2, 3, 5, 6, 4}, win[3] = {2, 3, 2}, pad[3] = {1, 0, 1}, str[3] = {2, 2, 1};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(modes); k++) {
        cudnnPoolingDescriptor_t pd;
        cudnnTensorDescriptor_t xd, yd;
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        CHECK_OK(cudnnCreateTensorDescriptor(&xd));
        CHECK_OK(cudnnCreateTensorDescriptor(&yd));
        cudnnPoolingMode_t mode = (cudnnPoolingMode_t)-1;
        cudnnNanPropagation_t nan = (cudnnNanPropagation_t)-1;
        int nb = -1, gw[3] = {-1, -1, -1}, gp[3] = {-1, -1, -1}, gs[3] = {-1, -1, -1}, ydims[5] = {0};
        bool ok = CHECK_OK(cudnnSetPoolingNdDescriptor(pd, modes[k], CUDNN_PROPAGATE_NAN, 3, win, pad, str)) &&
                  CHECK_OK(cudnnGetPoolingNdDescriptor(pd, 3, &mode, &nan, &nb, gw, gp, gs)) &&
                  CHECK(mode == modes[k] && nan == CUDNN_PROPAGATE_NAN && nb == 3 &&
                        memcmp(gw, win, sizeof win) == 0 && memcmp(gp, pad, sizeof pad) == 0 &&
                        memcmp(gs, str, sizeof str) == 0) &&
                  CHECK_OK(cudnnSetTensorNdDescriptorEx(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_DOUBLE, 5, xdims)) &&
                  CHECK_OK(cudnnGetPoolingNdForwardOutputDim(pd, xd, 5, ydims)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptorEx(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_DOUBLE, 5, ydims));
        if (ok) {
            const int64_t nx = (int64_t)xdims[0] * xdims[1] * xdims[2] * xdims[3] * xdims[4];
            const int64_t ny = (int64_t)ydims[0] * ydims[1] * ydims[2] * ydims[3] * ydims[4];
            const struct ref_pool rp = {modes[k], true, 3, {win[0], win[1], win[2]}, {pad[0], pad[1], pad[2]},
                                        {str[0], str[1], str[2]}};
            double *x = tview_random(nx, -2, 2), *dy = tview_random(ny, -1, 1);
            double *yw = malloc(sizeof(double) * (size_t)ny), *dxw = malloc(sizeof(double) * (size_t)nx);
            ref_pooling_forward(&rp, xdims[0], xdims[1], xdims + 2, ydims + 2, x, yw);
            ref_pooling_backward(&rp, xdims[0], xdims[1], xdims + 2, ydims + 2, x, dy, dxw);
            void *px = tvalues_upload(CUDNN_DATA_DOUBLE, x, nx), *pdy = tvalues_upload(CUDNN_DATA_DOUBLE, dy, ny);
            void *py = tbuf_alloc(sizeof(double) * (size_t)ny), *pdx = tbuf_alloc(sizeof(double) * (size_t)nx);
            const double one = 1, zero = 0;
            if (CHECK_OK(cudnnPoolingForward(h, pd, &one, xd, px, &zero, yd, py)) &&
                tvalues_check(CUDNN_DATA_DOUBLE, py, yw, ny, 1e-12, "GoCuNets' 3-D pooling") &&
                CHECK_OK(cudnnPoolingBackward(h, pd, &one, yd, py, yd, pdy, xd, px, &zero, xd, pdx)))
                tvalues_check(CUDNN_DATA_DOUBLE, pdx, dxw, nx, 1e-12, "GoCuNets' 3-D pooling gradient");
            tbuf_free(px), tbuf_free(pdy), tbuf_free(py), tbuf_free(pdx);
            free(x), free(dy), free(yw), free(dxw);
        }
        cudnnDestroyPoolingDescriptor(pd);
        cudnnDestroyTensorDescriptor(xd);
        cudnnDestroyTensorDescriptor(yd);
    }
}

/* Thor's BatchReduce (Utilities/TensorOperations/Misc/BatchReduce.cpp): a [batch, classes] tensor
   (the dims padded with trailing 1s to 4, packed, cudnnSetTensorNdDescriptor) summed over the
   batch into [1, classes] or over the classes into [batch, 1]; the reduce descriptor ADD with
   **compute type FLOAT whatever the data** (FP16 into FP32, FP32, FP16, and FP64 into FP64 with
   double alpha and beta), NaN not propagated, no indices (NULL, 0); the workspace from
   cudnnGetReductionWorkspaceSize (NULL when 0); alpha 1 / batch when the batch is averaged,
   beta 1 when accumulating. The 8.2 text: with double tensors "alpha and beta and the
   computation enum of reduceTensorDesc are all assumed to be of type double". */
TEST(compat_reduce_thor_batch_reduce)
{
    static const struct { cudnnDataType_t a, c; bool over_batch, divide, accumulate; } cases[] = {
        {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, true, true, false},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, true, false, true},
        {CUDNN_DATA_HALF, CUDNN_DATA_HALF, false, false, false},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, true, true, true},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, false, false, false},
    };
    const int batch = 6, classes = 10;
    cudnnHandle_t h = test_handle();
    cudnnReduceTensorDescriptor_t rd;
    if (!CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd))) return;
    CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int ad[4] = {batch, classes, 1, 1};
        const int cd[4] = {cases[k].over_batch ? 1 : batch, cases[k].over_batch ? classes : 1, 1, 1};
        struct rtensor at, ct;
        rt_packed(&at, cases[k].a, CUDNN_TENSOR_NCHW, 4, ad);
        rt_packed(&ct, cases[k].c, CUDNN_TENSOR_NCHW, 4, cd);
        cudnnTensorDescriptor_t A = tdesc(&at), C = tdesc(&ct);
        void *ha = thost_random(&at, -1, 1), *hc = thost_random(&ct, -1, 1);
        void *pa = tbuf_from(ha, rt_bytes(&at)), *pc = tbuf_from(hc, rt_bytes(&ct));
        if (!cases[k].accumulate) tbuf_poison(pc, rt_bytes(&ct));
        const double alpha = cases[k].divide ? 1.0 / batch : 1, beta = cases[k].accumulate ? 1 : 0;
        double *want = malloc(sizeof(double) * (size_t)rt_span(&ct));
        ref_reduce(CUDNN_REDUCE_TENSOR_ADD, false, alpha, &at, ha, beta, &ct, hc, want, NULL);
        struct tscale sa, sb;
        size_t wbytes = 0;
        if (CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, A, C, &wbytes))) {
            void *pw = wbytes ? tbuf_alloc(wbytes) : NULL;
            if (CHECK_OK(cudnnReduceTensor(h, rd, NULL, 0, pw, wbytes, tscale(&sa, cases[k].a, alpha), A, pa,
                                           tscale(&sb, cases[k].a, beta), C, pc)))
                tcompare_span(&ct, pc, want, cases[k].c == CUDNN_DATA_HALF || cases[k].a == CUDNN_DATA_HALF ? 2e-3 : -1,
                              "Thor's batch reduction");
            tbuf_free(pw);
        }
        tbuf_free(pa), tbuf_free(pc), free(ha), free(hc), free(want);
        cudnnDestroyTensorDescriptor(A);
        cudnnDestroyTensorDescriptor(C);
    }
    cudnnDestroyReduceTensorDescriptor(rd);
}

/* cudnnxx's divisive normalization tests (cudnnxx/divisive_normalization_test.cc, run on NVIDIA's
   library): an LRN descriptor (5, 1e-4, 0.75, 2), PRECOMPUTED_MEANS with **means given as a
   zeroed buffer**, the forward with two fresh x-sized temporaries; **the backward with two other
   fresh temporaries that no forward wrote**, dx and dMeans written, alpha 1 and beta 0; 2x3x2x2
   float NCHW tensors by cudnnSetTensor4dDescriptor. The temporaries are filled with NaN here. */
TEST(compat_divnorm_cudnnxx_backward_on_fresh_temporaries)
{
    const int64_t dims[5] = {2, 3, 1, 2, 2}, n = 24;
    const struct ref_lrn_params q = {5, 1e-4, 0.75, 2};
    cudnnHandle_t h = test_handle();
    cudnnLRNDescriptor_t ld;
    cudnnTensorDescriptor_t d;
    CHECK_OK(cudnnCreateLRNDescriptor(&ld));
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    if (CHECK_OK(cudnnSetLRNDescriptor(ld, 5, 1e-4, 0.75, 2)) &&
        CHECK_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 2, 2))) {
        double *x = tview_random(n, 0, 2.5), *dy = tview_random(n, -1, 1), *zeros = tview_fill(n, 0);
        double *yw = malloc(sizeof(double) * n), *dxw = malloc(sizeof(double) * n), *dmw = malloc(sizeof(double) * n);
        ref_divnorm_forward(dims, 2, &q, x, zeros, yw);
        ref_divnorm_backward(dims, 2, &q, x, zeros, dy, dxw);
        for (int64_t i = 0; i < n; i++) dmw[i] = -dxw[i];
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, n), *pm = tvalues_upload(CUDNN_DATA_FLOAT, zeros, n);
        void *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, n), *py = tbuf_alloc(4 * n);
        void *t1 = tbuf_alloc(4 * n), *t2 = tbuf_alloc(4 * n), *t3 = tbuf_alloc(4 * n), *t4 = tbuf_alloc(4 * n);
        void *pdx = tbuf_alloc(4 * n), *pdm = tbuf_alloc(4 * n);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnDivisiveNormalizationForward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, d, px, pm, t1, t2,
                                                       &zero, d, py)))
            tvalues_check(CUDNN_DATA_FLOAT, py, yw, n, 1e-5, "cudnnxx's divisive normalization");
        if (CHECK_OK(cudnnDivisiveNormalizationBackward(h, ld, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, d, px, pm, pdy, t3,
                                                        t4, &zero, d, pdx, pdm))) {
            tvalues_check(CUDNN_DATA_FLOAT, pdx, dxw, n, 1e-5, "its gradient from fresh temporaries");
            tvalues_check(CUDNN_DATA_FLOAT, pdm, dmw, n, 1e-5, "its means gradient");
        }
        tbuf_free(px), tbuf_free(pm), tbuf_free(pdy), tbuf_free(py), tbuf_free(t1), tbuf_free(t2);
        tbuf_free(t3), tbuf_free(t4), tbuf_free(pdx), tbuf_free(pdm);
        free(x), free(dy), free(zeros), free(yw), free(dxw), free(dmw);
    }
    cudnnDestroyTensorDescriptor(d);
    cudnnDestroyLRNDescriptor(ld);
}

/* cudnnxx's reduction test (cudnnxx/reduce_tensor_test.cc, run on NVIDIA's library): MAX with
   PROPAGATE_NAN, FLATTENED_INDICES and 32-bit indices over a whole 2x3x2x2 float tensor into
   1x1x1x1; indices and workspace sized by cudnnGetReductionIndicesSize and
   cudnnGetReductionWorkspaceSize; alpha 1, beta 0; on the inputs 0.1, 0.2, ..., 2.4 it asserts
   the index 23 and the value 2.4. Here those inputs, then random ones against tests/ref. */
TEST(compat_reduce_cudnnxx_max_whole_tensor_index)
{
    const int ad[4] = {2, 3, 2, 2}, cd[4] = {1, 1, 1, 1};
    cudnnHandle_t h = test_handle();
    struct rtensor at, ct;
    rt_packed(&at, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, ad);
    rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, cd);
    cudnnTensorDescriptor_t A = tdesc(&at), C = tdesc(&ct);
    cudnnReduceTensorDescriptor_t rd;
    size_t ibytes = 0, wbytes = 0;
    bool ok = CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd)) &&
              CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT,
                                                      CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_FLATTENED_INDICES,
                                                      CUDNN_32BIT_INDICES)) &&
              CHECK_OK(cudnnGetReductionIndicesSize(h, rd, A, C, &ibytes)) &&
              CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, A, C, &wbytes)) && CHECK(ibytes == sizeof(uint32_t));
    for (int pass = 0; ok && pass < 2; pass++) {
        float a[24];
        for (int i = 0; i < 24; i++) a[i] = pass == 0 ? 0.1f * (float)(i + 1) : (float)trand_uniform(-3, 3);
        const float c_before = 0;
        double want;
        uint32_t want_index = 0, got_index = 0;
        ref_reduce(CUDNN_REDUCE_TENSOR_MAX, true, 1, &at, a, 0, &ct, &c_before, &want, &want_index);
        void *pa = tbuf_from(a, sizeof a), *pc = tbuf_alloc(sizeof(float)), *pi = tbuf_alloc(ibytes);
        void *pw = wbytes ? tbuf_alloc(wbytes) : NULL;
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnReduceTensor(h, rd, pi, ibytes, pw, wbytes, &one, A, pa, &zero, C, pc))) {
            tbuf_download(&got_index, pi, sizeof got_index);
            tvalues_check(CUDNN_DATA_FLOAT, pc, &want, 1, 0, "cudnnxx's whole-tensor MAX");
            CHECK(got_index == want_index && (pass == 1 || got_index == 23));
        }
        tbuf_free(pa), tbuf_free(pc), tbuf_free(pi), tbuf_free(pw);
    }
    cudnnDestroyReduceTensorDescriptor(rd);
    cudnnDestroyTensorDescriptor(A);
    cudnnDestroyTensorDescriptor(C);
}

/* cudnnxx's convolution tests (cuxx/dnn/convolution_test.cc): a descriptor with pads 4, strides 2
   and dilations 2 (CONVOLUTION, FLOAT), x 2x3x32x32, a 2x3x5x5 filter, and **y 2x1x28x28, which is
   not the 2x2x16x16 the geometry gives**; cudnnGetConvolutionForwardAlgorithm_v7 over the
   MaxCount and cudnnGetConvolutionForwardWorkspaceSize for DIRECT. Both tests carry "TODO: Fix
   CUDNN_STATUS_BAD_PARAM": NVIDIA's library refuses them, and so do we, writing nothing. */
TEST(compat_conv_cudnnxx_mismatched_y_refused)
{
    cudnnHandle_t h = test_handle();
    cudnnConvolutionDescriptor_t cd;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
    CHECK_OK(cudnnCreateTensorDescriptor(&xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&yd));
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    int max = 0, got = -1;
    size_t size = 12345;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    memset(perf, 0xAB, sizeof perf);
    if (CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 4, 4, 2, 2, 2, 2, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT)) &&
        CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 32, 32)) &&
        CHECK_OK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 3, 5, 5)) &&
        CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 1, 28, 28)) &&
        CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max)) && CHECK(max <= CUDNN_CONVOLUTION_FWD_ALGO_COUNT)) {
        CHECK_STATUS(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, max, &got, perf), CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, &size),
                     CUDNN_STATUS_BAD_PARAM);
        unsigned char untouched[sizeof perf];
        memset(untouched, 0xAB, sizeof untouched);
        CHECK(got == -1 && size == 12345 && memcmp(perf, untouched, sizeof perf) == 0);
    }
    cudnnDestroyConvolutionDescriptor(cd);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
}

/* grain's transform test (source/grain/cudnn.d, the unittest of contiguous(), run on NVIDIA's
   library): a D array view made contiguous by cudnnTransformTensor (alpha 1, beta 0), its shape
   and strides padded to 4 dims with trailing 1s (cudnnSetTensorNdDescriptor), into a packed y:
   every other element of a vector (stride 2); a transposed 3x2 view (strides {1, 3}) of a 2x3
   array; a 2x2 view skipping a column (strides {3, 2}); **a transposed 2x2 view skipping one
   (strides {2, 3}): its strides interleave** (no dim steps over the other whole, though no two
   elements share memory); and two **reversed views, the pointer moved to the last element**:
   every other element backwards (stride -2, from element 4), and the interleaved view reversed
   (strides {-2, -3}, from element 5). grain asserts each result; here those inputs, then random
   ones. */
TEST(compat_transform_grain_strided_views)
{
    static const struct { int dims[2], strides[2], rank, first; float want[6]; } cases[] = {
        {{3, 1}, {2, 1}, 1, 0, {1, 2, 3}},
        {{3, 2}, {1, 3}, 2, 0, {1, 0, 0, 3, 2, 0}},
        {{2, 2}, {3, 2}, 2, 0, {1, 2, 0, 0}},
        {{2, 2}, {2, 3}, 2, 0, {1, 0, 2, 0}},
        {{3, 1}, {-2, 1}, 1, 4, {3, 2, 1}},
        {{2, 2}, {-2, -3}, 2, 5, {0, 2, 0, 1}},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int xd[4] = {cases[k].dims[0], cases[k].dims[1], 1, 1};
        const int xs[4] = {cases[k].strides[0], cases[k].rank == 2 ? cases[k].strides[1] : 1, 1, 1};
        const int ys[4] = {cases[k].rank == 2 ? cases[k].dims[1] : 1, 1, 1, 1};
        const int n = xd[0] * xd[1], first = cases[k].first;
        cudnnTensorDescriptor_t xt, yt;
        CHECK_OK(cudnnCreateTensorDescriptor(&xt));
        CHECK_OK(cudnnCreateTensorDescriptor(&yt));
        bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(xt, CUDNN_DATA_FLOAT, 4, xd, xs)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptor(yt, CUDNN_DATA_FLOAT, 4, xd, ys));
        for (int pass = 0; ok && pass < 2; pass++) {
            /* grain's arrays: [1, 0, 2, 0, 3] and [[1, 0, 2], [0, 3, 0]]; then random values */
            float src[6] = {1, 0, 2, 0, 3, 0};
            if (pass == 1)
                for (int i = 0; i < 6; i++) src[i] = (float)trand_uniform(-2, 2);
            double want[6];
            for (int i = 0; i < n; i++) {
                const int i0 = i / xd[1], i1 = i % xd[1];
                want[i] = src[first + i0 * xs[0] + i1 * xs[1]];
                if (pass == 0) CHECK(want[i] == cases[k].want[i]);
            }
            float *px = tbuf_from(src, sizeof src);
            void *py = tbuf_alloc(sizeof(float) * (size_t)n);
            const float one = 1, zero = 0;
            if (CHECK_OK(cudnnTransformTensor(h, &one, xt, px + first, &zero, yt, py)))
                tvalues_check(CUDNN_DATA_FLOAT, py, want, n, 0, "grain's contiguous()");
            tbuf_free(px), tbuf_free(py);
        }
        cudnnDestroyTensorDescriptor(xt);
        cudnnDestroyTensorDescriptor(yt);
    }
}

/* Kyanite's negative-stride test (kn-cuda-sys/tests/negative_stride.rs): a reversed view of 8
   floats, [1, 1, 1, 8] with strides [1, 1, 1, -1], its buffer sized by cudnnGetTensorSizeInBytes
   and the pointer moved to the last element, read by cudnnOpTensor ADD with a one-element zero B
   (alpha2 0, NaN propagated) into a packed C of the same shape: C is A reversed. The size covers
   the whole view (8 floats: the span from its lowest element to its highest). */
TEST(compat_op_tensor_kyanite_reversed_view)
{
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t ad, bd, cd;
    cudnnOpTensorDescriptor_t od;
    CHECK_OK(cudnnCreateTensorDescriptor(&ad));
    CHECK_OK(cudnnCreateTensorDescriptor(&bd));
    CHECK_OK(cudnnCreateTensorDescriptor(&cd));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&od));
    size_t bytes = 0;
    bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(ad, CUDNN_DATA_FLOAT, 4, (int[]){1, 1, 1, 8}, (int[]){1, 1, 1, -1})) &&
              CHECK_OK(cudnnSetTensorNdDescriptor(bd, CUDNN_DATA_FLOAT, 4, (int[]){1, 1, 1, 1}, (int[]){1, 1, 1, 1})) &&
              CHECK_OK(cudnnSetTensorNdDescriptor(cd, CUDNN_DATA_FLOAT, 4, (int[]){1, 1, 1, 8}, (int[]){1, 1, 1, 1})) &&
              CHECK_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN)) &&
              CHECK_OK(cudnnGetTensorSizeInBytes(ad, &bytes)) && CHECK(bytes == 8 * sizeof(float));
    if (ok) {
        const float a[8] = {0, 1, 2, 3, 4, 5, 6, 7}, zero = 0, one = 1;
        float *pa = tbuf_from(a, sizeof a), *pb = tbuf_from(&zero, sizeof zero);
        void *pc = tbuf_alloc(bytes); /* poisoned */
        if (CHECK_OK(cudnnOpTensor(h, od, &one, ad, pa + 7, &zero, bd, pb, &zero, cd, pc))) {
            const double want[8] = {7, 6, 5, 4, 3, 2, 1, 0};
            tvalues_check(CUDNN_DATA_FLOAT, pc, want, 8, 0, "Kyanite's reversed view");
        }
        tbuf_free(pa), tbuf_free(pb), tbuf_free(pc);
    }
    cudnnDestroyTensorDescriptor(ad);
    cudnnDestroyTensorDescriptor(bd);
    cudnnDestroyTensorDescriptor(cd);
    cudnnDestroyOpTensorDescriptor(od);
}

/* MyCaffe's extended RNN path (CudaDnnDLL memory.cu: GetRnnParamCountEx, GetRnnWorkspaceCountEx,
   GetRnnLinLayerParamsEx, RnnForwardEx, RnnBackwardDataEx, RnnBackwardWeightsEx; memory.h:
   SetRnnDesc, SetRnnDataDesc2): the RNN data descriptors set with paddingFill NULL; every size
   query derives its step tensor from **cudnnGetRNNDataDescriptor asked for one length** (a
   one-int buffer) and a fill of the data type, a {batch, vector, 1} tensor; cudnnGetRNNParamsSize
   on it, cudnnGetRNNWorkspaceSize / TrainingReserveSize over T such tensors (the buffers one
   element more than asked, their whole sizes passed); a {count, 1, 1} filter; each layer's
   weights filled through cudnnGetRNNLinLayerMatrixParams / BiasParams with that tensor, counted
   by cudnnGetFilterNdDescriptor(3); cudnnSetRNNDescriptor_v6 (LINEAR_INPUT, UNIDIRECTIONAL,
   STANDARD, no padded IO) and the Ex calls with the attention arguments NULL. The weight space
   poisoned first: the getters' regions must cover all of it. y, hy, dx and dw against the
   reference. */
TEST(compat_rnn_mycaffe_ex_sizes_from_the_data_descriptor)
{
    enum { L = 2, IN = 3, H = 4, T = 3, N = 2, LIN = 8 };
    static const int lengths[N] = {T, T};
    const struct rnn_case c = {.name = "mycaffe-ex", .mode = CUDNN_LSTM, .dirs = 1, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                               .layers = L, .input = IN, .hidden = H, .proj = H, .T = T, .N = N, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_EX};
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    cudnnHandle_t h = test_handle();
    void *states = NULL;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.0f, 1701, &states);
    cudnnRNNDescriptor_t d;
    cudnnRNNDataDescriptor_t xd, yd;
    trnn_data_descs_create(&xd, &yd, NULL, NULL);
    bool ok = CHECK_OK(cudnnCreateRNNDescriptor(&d)) &&
              CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, H, L, drop, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM,
                                                CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT)) &&
              CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, T, N, IN, lengths, NULL)) &&
              CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, c.layout, T, N, H, lengths, NULL));

    /* the data descriptor read back: one length asked for, the int after it untouched */
    cudnnDataType_t type = CUDNN_DATA_HALF;
    cudnnRNNDataLayout_t layout = CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED;
    int max_seq = 0, batch = 0, vec = 0, got_len[2] = {-1, -1};
    float fill = 0.0f;
    ok = ok && CHECK_OK(cudnnGetRNNDataDescriptor(xd, &type, &layout, &max_seq, &batch, &vec, 1, got_len, &fill)) &&
         CHECK(type == CUDNN_DATA_FLOAT && layout == c.layout && max_seq == T && batch == N && vec == IN) &&
         CHECK(got_len[0] == T && got_len[1] == -1);
    const int dim0 = layout == CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED ? max_seq : batch;
    cudnnTensorDescriptor_t tx, steps[T];
    CHECK_OK(cudnnCreateTensorDescriptor(&tx));
    ok = ok && CHECK_OK(cudnnSetTensorNdDescriptor(tx, CUDNN_DATA_FLOAT, 3, (const int[]){dim0, vec, 1},
                                                   (const int[]){vec, 1, 1}));
    for (int t = 0; t < T; t++) {
        CHECK_OK(cudnnCreateTensorDescriptor(&steps[t]));
        ok = ok && CHECK_OK(cudnnSetTensorNdDescriptor(steps[t], CUDNN_DATA_FLOAT, 3, (const int[]){dim0, vec, 1},
                                                       (const int[]){vec, 1, 1}));
    }
    size_t wbytes = 0, ws = 0, rs = 0;
    ok = ok && CHECK_OK(cudnnGetRNNParamsSize(h, d, tx, &wbytes, CUDNN_DATA_FLOAT)) && CHECK(wbytes == u.wbytes) &&
         CHECK_OK(cudnnGetRNNWorkspaceSize(h, d, T, steps, &ws)) &&
         CHECK_OK(cudnnGetRNNTrainingReserveSize(h, d, T, steps, &rs));
    ws = (ws / sizeof(float) + 1) * sizeof(float), rs = (rs / sizeof(float) + 1) * sizeof(float);
    const int count = (int)(wbytes / sizeof(float));
    cudnnFilterDescriptor_t wd, region;
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    CHECK_OK(cudnnCreateFilterDescriptor(&region));
    ok = ok && CHECK_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3,
                                                   (const int[]){count, 1, 1}));

    /* the weights through the getters, into a poisoned space: the harness's value of each element */
    void *pw = tbuf_alloc(wbytes ? wbytes : 4);
    tbuf_poison(pw, wbytes);
    float *vals = malloc(sizeof(float) * (size_t)(count + 1));
    int64_t filled = 0;
    for (int layer = 0; ok && layer < L; layer++)
        for (int lin = 0; ok && lin < LIN; lin++)
            for (int bias = 0; ok && bias < 2; bias++) {
                void *at = NULL;
                ok = bias ? CHECK_OK(cudnnGetRNNLinLayerBiasParams(h, d, layer, tx, wd, pw, lin, region, &at))
                          : CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, d, layer, tx, wd, pw, lin, region, &at));
                int dims[3] = {0, 0, 0}, nd = 0;
                cudnnDataType_t rt;
                cudnnTensorFormat_t rf;
                ok = ok && CHECK_OK(cudnnGetFilterNdDescriptor(region, 3, &rt, &rf, &nd, dims));
                if (!ok) break;
                int64_t n = (int64_t)dims[0] * dims[1] * dims[2], off = ((char *)at - (char *)pw) / (int64_t)sizeof(float);
                ok = CHECK(off >= 0 && off + n <= count);
                for (int64_t k = 0; ok && k < n; k++) vals[k] = (float)u.w_space[off + k];
                if (ok) tbuf_upload(at, vals, sizeof(float) * (size_t)n);
                filled += n;
            }
    ok = ok && CHECK(filled == count);

    struct fwd_out want;
    rnn_reference_forward(&u, &want);
    struct rnn_train_bufs b;
    rnn_train_bufs_init(&b, &u);
    void *pws = tbuf_alloc(ws), *prs = tbuf_alloc(rs);
    ok = ok && CHECK_OK(cudnnRNNForwardTrainingEx(h, d, xd, u.px, u.hd, u.phx, u.cd, u.pcx, wd, pw, yd, b.py, u.hd,
                                                  b.phy, u.cd, b.pcy, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                                  pws, ws, prs, rs));
    if (ok) {
        rnn_train_y_matches(&u, &b, want.y, "MyCaffe Ex y");
        tvalues_check(CUDNN_DATA_FLOAT, b.phy, want.hy, L * N * H, rnn_tol_of(CUDNN_DATA_FLOAT), "MyCaffe Ex hy");
        tvalues_check(CUDNN_DATA_FLOAT, b.pcy, want.cy, L * N * H, rnn_tol_of(CUDNN_DATA_FLOAT), "MyCaffe Ex cy");
    }
    ok = ok && CHECK_OK(cudnnRNNBackwardDataEx(h, d, yd, b.py, yd, b.pdy, NULL, NULL, u.hd, b.pdhy, u.cd, b.pdcy, wd, pw,
                                               u.hd, u.phx, u.cd, u.pcx, xd, b.pdx, u.hd, b.pdhx, u.cd, b.pdcx, NULL,
                                               NULL, pws, ws, prs, rs)) &&
         CHECK_OK(cudnnRNNBackwardWeightsEx(h, d, xd, u.px, u.hd, u.phx, yd, b.py, pws, ws, wd, b.pdw, prs, rs));
    if (ok) rnn_check_train_backward(&u, b.dy, b.dhy, b.dcy, b.pdx, b.pdw, b.zeros, "MyCaffe Ex");
    rnn_train_bufs_free(&b);
    rnn_fwd_free(&want);
    tbuf_free(pws), tbuf_free(prs), tbuf_free(pw);
    free(vals);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyFilterDescriptor(region);
    cudnnDestroyTensorDescriptor(tx);
    for (int t = 0; t < T; t++) cudnnDestroyTensorDescriptor(steps[t]);
    trnn_data_descs_destroy(xd, yd, NULL, NULL);
    cudnnDestroyRNNDescriptor(d);
    tdropout_free(drop, states);
    rnn_run_free(&u);
}
