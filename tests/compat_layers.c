/* compat_layers.c: call patterns of the layer glue of scientific and smaller frameworks
   (docs/compatibility.md) not replayed elsewhere: ROOT's TMVA deep-learning architecture on cuDNN
   (a convolution layer's forward and backward with the bias gradient reduced by
   cudnnReduceTensor, the activation's backward in place, a dense layer's batch norm over
   {1, F, 1, B} with a cumulative running average, the tensor sum through a reduction asking for
   indices); dfdx's convolutions on unbatched tensors (stride 0 on the padded batch dim);
   PaddlePaddle's batch norm (bfloat16, channels-last, 2-D to 5-D inputs); OpenVINO's pooling
   (shapes copied into the tail of 4-D arrays, pads_begin only) and softmax (rank and axis mapped
   to 4-D, bfloat16); TNN's tall-filter convolutions; ccv's grid sample (NHWC, the grid rescaled
   for edge-aligned sampling). Each result against the double references of tests/ref/, outputs
   poisoned.
   (compat_engines.c: the frameworks' execution layers; compat_programs.c: whole programs.) */
#include "conv_harness.h"
#include "ref/batchnorm.h"
#include "ref/conv.h"
#include "ref/pooling.h"
#include "ref/softmax.h"
#include "ref/spatial_tf.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- ROOT TMVA (tmva/tmva/src/DNN/Architectures/Cudnn) ---------------------------------------- */

/* TCudnn's convolution layer (Propagate.cu: InitializeConvDescriptors, InitializeConvWorkspace,
   ConvLayerForward, ConvLayerBackward; ActivationFunctions.cu; Arithmetic.cu ScaleAdd):
   cudnnSetConvolution2dDescriptor with **the data's own type as compute type** and then
   **TENSOR_OP_MATH whatever the type** (double included), a 4-D NCHW filter, x by
   cudnnSetTensor4dDescriptor; the algorithms forced by CNNOptions (ConvFwdAlgorithm,
   ConvBwdDataAlgorithm, ConvBwdFilterAlgorithm), each with the workspace of its query. Forward:
   the convolution into the pre-activation tensor, the bias {1, K, 1, 1} added onto it by
   cudnnAddTensor (alpha 1, beta 1), then cudnnActivationForward into the output (PROPAGATE_NAN,
   coefficient 0). Backward: cudnnActivationBackward **in place** (dx the incoming gradient's own
   buffer; y the output, x the pre-activation), cudnnConvolutionBackwardData and
   cudnnConvolutionBackwardFilter from that gradient, and the bias gradient as
   **cudnnReduceTensor ADD of dy {N, K, H, W} into {1, K, 1, 1}** (NO_INDICES, indices NULL and 0
   bytes, the workspace of cudnnGetReductionWorkspaceSize); alpha 1 and beta 0 of the data's type. */
TEST(compat_conv_root_tmva_layer_bias_by_reduction)
{
    static const struct { cudnnDataType_t t; cudnnActivationMode_t act; int stride; } cases[] = {
        {CUDNN_DATA_FLOAT, CUDNN_ACTIVATION_TANH, 1},
        {CUDNN_DATA_DOUBLE, CUDNN_ACTIVATION_RELU, 2},
        {CUDNN_DATA_FLOAT, CUDNN_ACTIVATION_SIGMOID, 2},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {7, 6}, .filt = {3, 3},
                              .pad = {1, 1}, .stride = {cases[k].stride, cases[k].stride}, .dil = {1, 1}};
        ref_conv_out_dims(&rc);
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        const int oh = rc.out[0], ow = rc.out[1];
        const int yd[4] = {rc.n, rc.k, oh, ow}, ys[4] = {rc.k * oh * ow, oh * ow, ow, 1};
        const int bd[4] = {1, rc.k, 1, 1}, bs[4] = {rc.k, 1, 1, 1};
        CHECK_OK(cudnnSetConvolution2dDescriptor(r.cd, 1, 1, rc.stride[0], rc.stride[1], 1, 1, CUDNN_CROSS_CORRELATION,
                                                 t));
        CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, rc.k, rc.c, 3, 3));
        CHECK_OK(cudnnSetTensor4dDescriptor(r.xd, CUDNN_TENSOR_NCHW, t, rc.n, rc.c, rc.in[0], rc.in[1]));
        CHECK_OK(cudnnSetTensorNdDescriptor(r.yd, t, 4, yd, ys));
        CHECK_OK(cudnnSetConvolutionMathType(r.cd, CUDNN_TENSOR_OP_MATH));
        cudnnTensorDescriptor_t bdesc;
        cudnnActivationDescriptor_t ad;
        cudnnReduceTensorDescriptor_t red;
        CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
        CHECK_OK(cudnnSetTensorNdDescriptor(bdesc, t, 4, bd, bs));
        CHECK_OK(cudnnCreateActivationDescriptor(&ad));
        CHECK_OK(cudnnSetActivationDescriptor(ad, cases[k].act, CUDNN_PROPAGATE_NAN, 0.0));
        CHECK_OK(cudnnCreateReduceTensorDescriptor(&red));
        CHECK_OK(cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_ADD, t, CUDNN_PROPAGATE_NAN,
                                                CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
        const cudnnConvolutionFwdAlgo_t fa = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
        const cudnnConvolutionBwdDataAlgo_t da = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
        const cudnnConvolutionBwdFilterAlgo_t wa = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
        size_t fws = 0, dws = 0, wws = 0, rws = 0;
        CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd, fa, &fws));
        CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, r.wd, r.yd, r.cd, r.xd, da, &dws));
        CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, r.xd, r.yd, r.cd, r.wd, wa, &wws));
        CHECK_OK(cudnnGetReductionWorkspaceSize(h, red, r.yd, bdesc, &rws));
        void *fw = fws ? tbuf_alloc(fws) : NULL, *dw = dws ? tbuf_alloc(dws) : NULL;
        void *ww = wws ? tbuf_alloc(wws) : NULL, *rw = rws ? tbuf_alloc(rws) : NULL;
        /* references: pre = conv + bias, out = act(pre); dpre = dy act'(pre) */
        const long per = (long)oh * ow;
        double *bias = tview_random(rc.k, -0.5, 0.5), *pre = malloc(sizeof(double) * (size_t)r.ny);
        double *out = malloc(sizeof(double) * (size_t)r.ny), *dpre = malloc(sizeof(double) * (size_t)r.ny);
        double *dx = malloc(sizeof(double) * (size_t)r.nx), *dwv = malloc(sizeof(double) * (size_t)r.nw);
        double *db = calloc((size_t)rc.k, sizeof(double));
        void *pbias = tvalues_upload(t, bias, rc.k);
        for (long i = 0; i < r.ny; i++) {
            pre[i] = r.y[i] + bias[i / per % rc.k];
            out[i] = ref_act(cases[k].act, 0, pre[i]);
            dpre[i] = r.dy[i] * ref_act_grad(cases[k].act, 0, pre[i]);
            db[i / per % rc.k] += dpre[i];
        }
        ref_conv_bwd_data(&rc, dpre, r.w, dx);
        ref_conv_bwd_filter(&rc, r.x, dpre, dwv);
        const size_t ysz = tdtype_size(t) * (size_t)r.ny;
        void *pout = tbuf_alloc(ysz), *pdb = tbuf_alloc(tdtype_size(t) * (size_t)rc.k);
        const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH) * 4;
        struct tscale one, zero;
        if (CHECK_OK(cudnnConvolutionForward(h, tscale(&one, t, 1), r.xd, r.px, r.wd, r.pw, r.cd, fa, fw, fws,
                                             tscale(&zero, t, 0), r.yd, r.py)) &&
            CHECK_OK(cudnnAddTensor(h, tscale(&one, t, 1), bdesc, pbias, tscale(&one, t, 1), r.yd, r.py)) &&
            CHECK_OK(cudnnActivationForward(h, ad, tscale(&one, t, 1), r.yd, r.py, tscale(&zero, t, 0), r.yd, pout))) {
            tvalues_check(t, r.py, pre, r.ny, tol, "TMVA's pre-activation");
            tvalues_check(t, pout, out, r.ny, tol, "TMVA's layer output");
            if (CHECK_OK(cudnnActivationBackward(h, ad, tscale(&one, t, 1), r.yd, pout, r.yd, r.pdy, r.yd, r.py,
                                                 tscale(&zero, t, 0), r.yd, r.pdy))) {
                tvalues_check(t, r.pdy, dpre, r.ny, tol, "TMVA's in-place activation gradient");
                if (CHECK_OK(cudnnConvolutionBackwardData(h, tscale(&one, t, 1), r.wd, r.pw, r.yd, r.pdy, r.cd, da, dw,
                                                          dws, tscale(&zero, t, 0), r.xd, r.pdx)))
                    tvalues_check(t, r.pdx, dx, r.nx, tol, "TMVA's activationGradientsBackward");
                if (CHECK_OK(cudnnConvolutionBackwardFilter(h, tscale(&one, t, 1), r.xd, r.px, r.yd, r.pdy, r.cd, wa,
                                                            ww, wws, tscale(&zero, t, 0), r.wd, r.pdw)))
                    tvalues_check(t, r.pdw, dwv, r.nw, tol, "TMVA's weight gradients");
                if (CHECK_OK(cudnnReduceTensor(h, red, NULL, 0, rw, rws, tscale(&one, t, 1), r.yd, r.pdy,
                                               tscale(&zero, t, 0), bdesc, pdb)))
                    tvalues_check(t, pdb, db, rc.k, tol, "TMVA's bias gradients (reduction)");
            }
        }
        tbuf_free(fw), tbuf_free(dw), tbuf_free(ww), tbuf_free(rw);
        tbuf_free(pbias), tbuf_free(pout), tbuf_free(pdb);
        free(bias), free(pre), free(out), free(dpre), free(dx), free(dwv), free(db);
        cudnnDestroyReduceTensorDescriptor(red);
        cudnnDestroyActivationDescriptor(ad);
        cudnnDestroyTensorDescriptor(bdesc);
        tconv_run_free(&r);
    }
}

/* TCudnn's batch norm after a dense layer (InitializeBNormDescriptors, BatchNormLayerForwardTraining,
   BatchNormLayerForwardInference, BatchNormLayerBackward): the column-major B x F activations as
   **{1, F, 1, B}** (features the channels, the batch their spatial extent) in SPATIAL mode, the
   parameters derived; the factor 1 - momentum, or **1 / (1 + nTrainedBatches)** when the
   momentum is negative (a cumulative average: 1 on the first batch, 1/2 on the second), alpha and
   beta of the data's type; inference on the running averages, the backward from the saved mean
   and inverse variance. Arithmetic.cu's Sum: cudnnReduceTensor ADD of a whole tensor into
   {1, 1, 1, 1} with **FLATTENED_INDICES** (float) and an indices buffer of
   cudnnGetReductionIndicesSize's size. */
TEST(compat_bn_root_tmva_dense_cumulative_average)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE};
    cudnnHandle_t h = test_handle();
    const double eps = 1e-4;
    for (size_t k = 0; k < TLEN(types); k++) {
        const cudnnDataType_t t = types[k];
        const int f = 5, b = 8, d[4] = {1, f, 1, b}, pd[4] = {1, f, 1, 1};
        struct tview x, p;
        tview_init(&x, t, 4, d, TV_NCHW);
        tview_init(&p, t, 4, pd, TV_NCHW);
        CHECK_OK(cudnnDeriveBNTensorDescriptor(p.desc, x.desc, CUDNN_BATCHNORM_SPATIAL));
        const struct ref_bn_shape sh = {1, f, b, false};
        double *x1 = tview_random(x.count, -2, 2), *x2 = tview_random(x.count, -1, 3), *dyv = tview_random(x.count, -1, 1);
        double *gamma = tview_random(f, 0.5, 1.5), *beta = tview_random(f, -0.5, 0.5);
        double *m1 = malloc(sizeof(double) * f), *v1 = malloc(sizeof(double) * f), *m2 = malloc(sizeof(double) * f);
        double *v2 = malloc(sizeof(double) * f), *rm = malloc(sizeof(double) * f), *rv = malloc(sizeof(double) * f);
        double *inv = malloc(sizeof(double) * f), *ds = malloc(sizeof(double) * f), *dbv = malloc(sizeof(double) * f);
        double *y = malloc(sizeof(double) * (size_t)x.count), *yi = malloc(sizeof(double) * (size_t)x.count);
        double *dx = malloc(sizeof(double) * (size_t)x.count), *dpre = malloc(sizeof(double) * (size_t)x.count);
        void *px1 = tview_upload(&x, x1), *px2 = tview_upload(&x, x2), *pdy = tview_upload(&x, dyv);
        void *py = tview_upload(&x, NULL), *pyi = tview_upload(&x, NULL), *pdx = tview_upload(&x, NULL);
        void *pg = tview_upload(&p, gamma), *pb = tview_upload(&p, beta), *prm = tview_upload(&p, NULL);
        void *prv = tview_upload(&p, NULL), *psm = tview_upload(&p, NULL), *psv = tview_upload(&p, NULL);
        void *pdg = tview_upload(&p, NULL), *pdb = tview_upload(&p, NULL);
        ref_bn_stats(&sh, x1, m1, v1);
        ref_bn_stats(&sh, x2, m2, v2);
        const double unb = (double)b / (double)(b - 1);
        for (int i = 0; i < f; i++) {
            rm[i] = 0.5 * m1[i] + 0.5 * m2[i];
            rv[i] = 0.5 * v1[i] * unb + 0.5 * v2[i] * unb;
            inv[i] = 1 / sqrt(v2[i] + eps);
        }
        ref_bn_forward(&sh, x2, NULL, gamma, beta, m2, v2, eps, -1, 0, NULL, y);
        ref_bn_forward(&sh, x2, NULL, gamma, beta, rm, rv, eps, -1, 0, NULL, yi);
        ref_bn_backward(&sh, x2, dyv, NULL, -1, 0, gamma, m2, v2, eps, dpre, dx, ds, dbv);
        struct tscale one, zero;
        const double momentum = -1;
        bool ok = true;
        for (int step = 0; step < 2 && ok; step++) {
            const double factor = momentum < 0 ? 1.0 / (1 + step) : 1 - momentum;
            ok = CHECK_OK(cudnnBatchNormalizationForwardTraining(
                h, CUDNN_BATCHNORM_SPATIAL, tscale(&one, t, 1), tscale(&zero, t, 0), x.desc, step ? px2 : px1, x.desc,
                py, p.desc, pg, pb, factor, prm, prv, eps, psm, psv));
        }
        if (ok) {
            tview_check(&x, py, y, "TMVA's batch-norm output");
            tview_check(&p, prm, rm, "cumulative running mean");
            tview_check(&p, prv, rv, "cumulative running variance");
            tview_check(&p, psv, inv, "saved inverse variance");
            if (CHECK_OK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, tscale(&one, t, 1),
                                                                 tscale(&zero, t, 0), x.desc, px2, x.desc, pyi, p.desc,
                                                                 pg, pb, prm, prv, eps)))
                tview_check(&x, pyi, yi, "TMVA's batch-norm inference");
            if (CHECK_OK(cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, tscale(&one, t, 1),
                                                         tscale(&zero, t, 0), tscale(&one, t, 1), tscale(&zero, t, 0),
                                                         x.desc, px2, x.desc, pdy, x.desc, pdx, p.desc, pg, pdg, pdb,
                                                         eps, psm, psv))) {
                tview_check(&x, pdx, dx, "TMVA's batch-norm dx");
                tview_check(&p, pdg, ds, "dgamma");
                tview_check(&p, pdb, dbv, "dbeta");
            }
        }
        /* Sum: the whole of dy into one element */
        cudnnReduceTensorDescriptor_t red;
        cudnnTensorDescriptor_t one_desc;
        CHECK_OK(cudnnCreateReduceTensorDescriptor(&red));
        CHECK_OK(cudnnCreateTensorDescriptor(&one_desc));
        CHECK_OK(cudnnSetTensor4dDescriptor(one_desc, CUDNN_TENSOR_NCHW, t, 1, 1, 1, 1));
        CHECK_OK(cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_ADD, t, CUDNN_PROPAGATE_NAN,
                                                t == CUDNN_DATA_FLOAT ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES
                                                                      : CUDNN_REDUCE_TENSOR_NO_INDICES,
                                                CUDNN_32BIT_INDICES));
        size_t isz = 0, wsz = 0;
        CHECK_OK(cudnnGetReductionIndicesSize(h, red, x.desc, one_desc, &isz));
        CHECK_OK(cudnnGetReductionWorkspaceSize(h, red, x.desc, one_desc, &wsz));
        void *ind = isz ? tbuf_alloc(isz) : NULL, *ws = wsz ? tbuf_alloc(wsz) : NULL;
        void *psum = tbuf_alloc(tdtype_size(t));
        double sum = 0;
        for (int64_t i = 0; i < x.count; i++) sum += dyv[i];
        if (CHECK_OK(cudnnReduceTensor(h, red, ind, isz, ws, wsz, tscale(&one, t, 1), x.desc, pdy, tscale(&zero, t, 0),
                                       one_desc, psum)))
            tvalues_check(t, psum, &sum, 1, t == CUDNN_DATA_FLOAT ? 1e-5 : 1e-12, "TMVA's Sum");
        tbuf_free(ind), tbuf_free(ws), tbuf_free(psum);
        cudnnDestroyTensorDescriptor(one_desc);
        cudnnDestroyReduceTensorDescriptor(red);
        void *xb[] = {px1, px2, pdy, py, pyi, pdx}, *pbufs[] = {pg, pb, prm, prv, psm, psv, pdg, pdb};
        for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
        for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
        double *hv[] = {x1, x2, dyv, gamma, beta, m1, v1, m2, v2, rm, rv, inv, ds, dbv, y, yi, dx, dpre};
        for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
        tview_destroy(&x);
        tview_destroy(&p);
    }
}

/* ---- dfdx (Rust, over cudarc's cudnn wrappers) ------------------------------------------------- */

/* dfdx's Conv2DKernel for Cuda (src/tensor_ops/conv2d/cudnn_kernel.rs): x, y (dy) by
   cudnnSetTensor4dDescriptorEx with the tensors' own dims and strides through make_4d, which pads
   an **unbatched 3-D tensor to [1, C, H, W] with stride 0 on the batch** ([pad, s0, s1, s2], pad
   0 for the strides); the filter {O, C/g, K, K} NCHW by the 4-D setter;
   cudnnSetConvolution2dDescriptor (CROSS_CORRELATION, the data's own type as compute type, one
   padding, stride and dilation for both dims), then the group count; each direction's algorithm
   the first of cudarc's pick_algorithm (cudnnGet*Algorithm_v7, its status required SUCCESS),
   the workspace of its query; alpha 1 and beta 0 of the data's type; the backward data and
   filter calls on the forward's descriptors. */
TEST(compat_conv_dfdx_unbatched_zero_batch_stride)
{
    static const struct { cudnnDataType_t t; bool unbatched; int groups, pad, stride, dil; } cases[] = {
        {CUDNN_DATA_FLOAT, true, 1, 1, 1, 1},
        {CUDNN_DATA_DOUBLE, true, 3, 0, 2, 1},
        {CUDNN_DATA_FLOAT, false, 3, 2, 2, 2},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const int p = cases[k].pad, s = cases[k].stride, d = cases[k].dil;
        struct ref_conv rc = {.nsp = 2, .n = cases[k].unbatched ? 1 : 2, .c = 6, .k = 9, .groups = cases[k].groups,
                              .in = {9, 8}, .filt = {3, 3}, .pad = {p, p}, .stride = {s, s}, .dil = {d, d}};
        ref_conv_out_dims(&rc);
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        const int oh = rc.out[0], ow = rc.out[1], ih = rc.in[0], iw = rc.in[1];
        const int nx_stride = cases[k].unbatched ? 0 : rc.c * ih * iw, ny_stride = cases[k].unbatched ? 0 : rc.k * oh * ow;
        CHECK_OK(cudnnSetTensor4dDescriptorEx(r.xd, t, rc.n, rc.c, ih, iw, nx_stride, ih * iw, iw, 1));
        CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, rc.k, rc.c / rc.groups, 3, 3));
        CHECK_OK(cudnnSetTensor4dDescriptorEx(r.yd, t, rc.n, rc.k, oh, ow, ny_stride, oh * ow, ow, 1));
        CHECK_OK(cudnnSetConvolution2dDescriptor(r.cd, p, p, s, s, d, d, CUDNN_CROSS_CORRELATION, t));
        CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups));
        struct tscale one, zero;
        const double tol = tconv_tolerance(t, t, CUDNN_DEFAULT_MATH);
        int got = 0;
        cudnnConvolutionFwdAlgoPerf_t fp[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        if (CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, r.xd, r.wd, r.cd, r.yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                            &got, fp)) &&
            CHECK(got > 0 && fp[0].status == CUDNN_STATUS_SUCCESS)) {
            size_t ws = 0;
            CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd, fp[0].algo, &ws));
            void *w = ws ? tbuf_alloc(ws) : NULL;
            if (CHECK_OK(cudnnConvolutionForward(h, tscale(&one, t, 1), r.xd, r.px, r.wd, r.pw, r.cd, fp[0].algo, w, ws,
                                                 tscale(&zero, t, 0), r.yd, r.py)))
                tvalues_check(t, r.py, r.y, r.ny, tol, "dfdx's conv2d forward");
            tbuf_free(w);
        }
        cudnnConvolutionBwdDataAlgoPerf_t dp[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        if (CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, r.wd, r.yd, r.cd, r.xd,
                                                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, dp)) &&
            CHECK(got > 0 && dp[0].status == CUDNN_STATUS_SUCCESS)) {
            size_t ws = 0;
            CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, r.wd, r.yd, r.cd, r.xd, dp[0].algo, &ws));
            void *w = ws ? tbuf_alloc(ws) : NULL;
            if (CHECK_OK(cudnnConvolutionBackwardData(h, tscale(&one, t, 1), r.wd, r.pw, r.yd, r.pdy, r.cd, dp[0].algo,
                                                      w, ws, tscale(&zero, t, 0), r.xd, r.pdx)))
                tvalues_check(t, r.pdx, r.dx, r.nx, tol, "dfdx's grad_lhs");
            tbuf_free(w);
        }
        cudnnConvolutionBwdFilterAlgoPerf_t wp[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        if (CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, r.xd, r.yd, r.cd, r.wd,
                                                                   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, wp)) &&
            CHECK(got > 0 && wp[0].status == CUDNN_STATUS_SUCCESS)) {
            size_t ws = 0;
            CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, r.xd, r.yd, r.cd, r.wd, wp[0].algo, &ws));
            void *w = ws ? tbuf_alloc(ws) : NULL;
            if (CHECK_OK(cudnnConvolutionBackwardFilter(h, tscale(&one, t, 1), r.xd, r.px, r.yd, r.pdy, r.cd,
                                                        wp[0].algo, w, ws, tscale(&zero, t, 0), r.wd, r.pdw)))
                tvalues_check(t, r.pdw, r.dw, r.nw, tol, "dfdx's grad_rhs");
            tbuf_free(w);
        }
        tconv_run_free(&r);
    }
}

/* ---- PaddlePaddle (paddle/phi/kernels/gpu/batch_norm_kernel.cu, BatchNormKernel) ---------------- */

/* The descriptor from dims {N, C, H, W, D} and strides computed for the compute format (NCHW, or
   channels-last {HWDC, 1, WDC, DC, C}), rank max(4, ndim) (a 2-D (N, C) input as {N, C, 1, 1});
   the mode PER_ACTIVATION when H == W == 1, SPATIAL_PERSISTENT under
   FLAGS_cudnn_batchnorm_spatial_persistent, else SPATIAL; the parameters derived with SPATIAL in
   test mode, the mode otherwise; epsilon raised to CUDNN_BN_MIN_EPSILON; the scale and bias made
   as ones and zeros when absent; **bfloat16 data with float parameters** (registered for cuDNN
   >= 8.1), half, float; test mode by cudnnBatchNormalizationForwardInference; training through
   the Ex calls with OPS_BN: the workspace query with **zDesc NULL** and a NULL activation, the
   reserve query with a NULL activation, the forward with zDesc and z NULL and factor 1 - momentum,
   alpha and beta of CudnnDataType<T>::kOne (float for half and bfloat16). */
TEST(compat_bn_paddle_bfloat16_and_layouts)
{
    static const struct { cudnnDataType_t t; int ndim; bool nhwc, persistent; } cases[] = {
        {CUDNN_DATA_BFLOAT16, 2, false, false}, {CUDNN_DATA_BFLOAT16, 4, false, false},
        {CUDNN_DATA_HALF, 4, true, true},       {CUDNN_DATA_FLOAT, 5, false, false},
        {CUDNN_DATA_BFLOAT16, 3, false, false},
    };
    cudnnHandle_t h = test_handle();
    const double eps = 1e-5, momentum = 0.9;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const int ndim = cases[k].ndim, N = 4, C = 3;
        const int H = ndim > 2 ? 5 : 1, W = ndim > 3 ? 3 : 1, D = ndim > 4 ? 2 : 1;
        const int dims[5] = {N, C, H, W, D};
        const int strides_nchw[5] = {C * H * W * D, H * W * D, W * D, D, 1};
        const int strides_nhwc[5] = {H * W * D * C, 1, W * D * C, D * C, C};
        const int rank = ndim > 3 ? ndim : 4;
        const bool per_act = H == 1 && W == 1;
        const cudnnBatchNormMode_t mode = cases[k].persistent ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT
                                          : per_act           ? CUDNN_BATCHNORM_PER_ACTIVATION
                                                              : CUDNN_BATCHNORM_SPATIAL;
        struct tview x, p;
        tview_init(&x, t, rank, dims, cases[k].nhwc ? TV_NHWC : TV_NCHW);
        CHECK_OK(cudnnSetTensorNdDescriptor(x.desc, t, rank, dims, cases[k].nhwc ? strides_nhwc : strides_nchw));
        const int pd[5] = {1, C, 1, 1, 1};
        tview_init(&p, CUDNN_DATA_FLOAT, rank, pd, TV_NCHW);
        cudnnTensorDescriptor_t ptest;
        CHECK_OK(cudnnCreateTensorDescriptor(&ptest));
        CHECK_OK(cudnnDeriveBNTensorDescriptor(p.desc, x.desc, mode));
        CHECK_OK(cudnnDeriveBNTensorDescriptor(ptest, x.desc, CUDNN_BATCHNORM_SPATIAL));
        const struct ref_bn_shape sh = {N, C, (int64_t)H * W * D, false};
        const int64_t cnt = ref_bn_reduced(&sh);
        double *xv = tview_random(x.count, -2, 2), *scale = tview_fill(C, 1), *bias = tview_fill(C, 0);
        double *rm0 = tview_random(C, -1, 1), *rv0 = tview_random(C, 0.5, 2);
        void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *pyi = tview_upload(&x, NULL);
        void *ps = tview_upload(&p, scale), *pb = tview_upload(&p, bias), *prm = tview_upload(&p, rm0);
        void *prv = tview_upload(&p, rv0), *psm = tview_upload(&p, NULL), *psv = tview_upload(&p, NULL);
        double *mean = malloc(sizeof(double) * C), *var = malloc(sizeof(double) * C), *inv = malloc(sizeof(double) * C);
        double *rm = malloc(sizeof(double) * C), *rv = malloc(sizeof(double) * C);
        double *y = malloc(sizeof(double) * (size_t)x.count), *yi = malloc(sizeof(double) * (size_t)x.count);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
        ref_bn_forward(&sh, xv, NULL, scale, bias, rm0, rv0, eps, -1, 0, NULL, yi);
        const double factor = 1 - momentum;
        for (int i = 0; i < C; i++) {
            inv[i] = 1 / sqrt(var[i] + eps);
            rm[i] = (1 - factor) * rm0[i] + factor * mean[i];
            rv[i] = (1 - factor) * rv0[i] + factor * var[i] * (double)cnt / (double)(cnt - 1);
        }
        const float one = 1, zero = 0;
        /* test mode: inference on the estimated statistics, the parameters derived for SPATIAL */
        if (CHECK_OK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x.desc, px,
                                                             x.desc, pyi, ptest, ps, pb, prm, prv, eps)))
            tview_check(&x, pyi, yi, "Paddle's batch_norm in test mode");
        size_t ws = 0, rs = 0;
        CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, mode, CUDNN_BATCHNORM_OPS_BN, x.desc,
                                                                          NULL, x.desc, p.desc, NULL, &ws));
        CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, mode, CUDNN_BATCHNORM_OPS_BN, NULL, x.desc,
                                                                      &rs));
        void *work = ws ? tbuf_alloc(ws) : NULL, *reserve = rs ? tbuf_alloc(rs) : NULL;
        if (CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero, x.desc, px,
                                                              NULL, NULL, x.desc, py, p.desc, ps, pb, factor, prm, prv,
                                                              eps, psm, psv, NULL, work, ws, reserve, rs))) {
            tview_check(&x, py, y, "Paddle's batch_norm in training");
            tview_check(&p, psm, mean, "saved_mean");
            tview_check(&p, psv, inv, "saved_variance (inverse deviation)");
            tview_check(&p, prm, rm, "mean_out");
            tview_check(&p, prv, rv, "variance_out");
        }
        tbuf_free(work), tbuf_free(reserve);
        cudnnDestroyTensorDescriptor(ptest);
        void *xb[] = {px, py, pyi}, *pbufs[] = {ps, pb, prm, prv, psm, psv};
        for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
        for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
        double *hv[] = {xv, scale, bias, rm0, rv0, mean, var, inv, rm, rv, y, yi};
        for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
        tview_destroy(&x);
        tview_destroy(&p);
    }
}

/* ---- OpenVINO's NVIDIA plugin pooling (modules/nvidia_plugin/src/ops/pooling_impl.cpp) ---------- */

/* PoolingImpl: rank max(4, ndim), the shape and its row-major strides copied into the **tail**
   of arrays of 1s, so a 1-D pooling's (N, C, L) input is **{1, N, C, L} with strides
   {1, C L, L, 1}** and its window, pads and strides {1, k}, {0, p}, {1, s} (N becomes the
   channel, C a height pooled with window 1); cudnnSetPoolingNdDescriptor with PROPAGATE_NAN and
   pads_begin only: pads_end differing from pads_begin is refused for AVERAGE_COUNT_INCLUDE_PADDING
   alone, so MAX and AVERAGE_COUNT_EXCLUDE_PADDING take y of the op's shape, floor((in + begin +
   end - k) / s) + 1, one longer or shorter than the descriptor's formula; alpha 1 and beta 0 as
   floats; float, half and int8 (MAX) data. */
TEST(compat_pool_openvino_tail_padded_dims_asymmetric)
{
    static const struct {
        cudnnDataType_t t; cudnnPoolingMode_t mode; int nsp; int in[3], win[3], begin[3], end[3], stride[3];
    } cases[] = {
        {CUDNN_DATA_FLOAT, CUDNN_POOLING_MAX, 1, {9}, {3}, {0}, {2}, {2}},
        {CUDNN_DATA_FLOAT, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, 1, {8}, {3}, {1}, {0}, {1}},
        {CUDNN_DATA_HALF, CUDNN_POOLING_MAX, 2, {7, 6}, {2, 3}, {0, 1}, {1, 1}, {2, 2}},
        {CUDNN_DATA_FLOAT, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, 3, {4, 5, 6}, {2, 2, 3}, {1, 0, 1}, {0, 1, 2},
         {2, 2, 2}},
        {CUDNN_DATA_INT8, CUDNN_POOLING_MAX, 2, {6, 6}, {3, 3}, {1, 1}, {0, 0}, {2, 2}},
        {CUDNN_DATA_FLOAT, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, 2, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {2, 2}},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const int nsp = cases[k].nsp, ndim = nsp + 2, N = 2, C = 3;
        const int rank = ndim > 4 ? ndim : 4, sp = rank - 2;
        int shape[5] = {N, C}, oshape[5] = {N, C};
        for (int d = 0; d < nsp; d++) {
            shape[2 + d] = cases[k].in[d];
            oshape[2 + d] = (cases[k].in[d] + cases[k].begin[d] + cases[k].end[d] - cases[k].win[d]) / cases[k].stride[d] + 1;
        }
        /* the tail copies */
        int xd[5], xs[5], yd[5], ys[5], win[3], pad[3], str[3];
        for (int d = 0; d < rank; d++) xd[d] = yd[d] = 1, xs[d] = ys[d] = 1;
        for (int d = 0; d < sp; d++) win[d] = 1, pad[d] = 0, str[d] = 1;
        int64_t sx = 1, sy = 1;
        for (int d = ndim - 1, o = rank - 1; d >= 0; d--, o--) {
            xd[o] = shape[d], yd[o] = oshape[d], xs[o] = (int)sx, ys[o] = (int)sy;
            sx *= shape[d], sy *= oshape[d];
        }
        for (int d = nsp - 1, o = sp - 1; d >= 0; d--, o--)
            win[o] = cases[k].win[d], pad[o] = cases[k].begin[d], str[o] = cases[k].stride[d];
        const int64_t nx = sx, ny = sy;
        cudnnTensorDescriptor_t xdesc, ydesc;
        cudnnPoolingDescriptor_t pd;
        CHECK_OK(cudnnCreateTensorDescriptor(&xdesc));
        CHECK_OK(cudnnCreateTensorDescriptor(&ydesc));
        CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
        CHECK_OK(cudnnSetTensorNdDescriptor(xdesc, t, rank, xd, xs));
        CHECK_OK(cudnnSetTensorNdDescriptor(ydesc, t, rank, yd, ys));
        CHECK_OK(cudnnSetPoolingNdDescriptor(pd, cases[k].mode, CUDNN_PROPAGATE_NAN, sp, win, pad, str));
        double *x = t == CUDNN_DATA_INT8 ? tview_random(nx, -100, 100) : tview_random(nx, -2, 2);
        if (t == CUDNN_DATA_INT8)
            for (int64_t i = 0; i < nx; i++) x[i] = (double)(int)x[i];
        double *want = malloc(sizeof(double) * (size_t)ny);
        void *px = tvalues_upload(t, x, nx), *py = tbuf_alloc(tdtype_size(t) * (size_t)ny);
        const struct ref_pool rp = {cases[k].mode, true, nsp,
                                    {cases[k].win[0], cases[k].win[1], cases[k].win[2]},
                                    {cases[k].begin[0], cases[k].begin[1], cases[k].begin[2]},
                                    {cases[k].stride[0], cases[k].stride[1], cases[k].stride[2]}};
        ref_pooling_forward(&rp, N, C, shape + 2, oshape + 2, x, want);
        if (t == CUDNN_DATA_INT8)
            for (int64_t i = 0; i < ny; i++) want[i] = round(want[i]);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnPoolingForward(h, pd, &one, xdesc, px, &zero, ydesc, py)))
            tvalues_check(t, py, want, ny, t == CUDNN_DATA_HALF ? 2e-3 : t == CUDNN_DATA_INT8 ? 0 : 1e-5,
                          nsp == 1 ? "OpenVINO's 1-D pooling as {1, N, C, L}" : "OpenVINO's pooling, pads_begin only");
        tbuf_free(px), tbuf_free(py);
        free(x), free(want);
        cudnnDestroyPoolingDescriptor(pd);
        cudnnDestroyTensorDescriptor(xdesc);
        cudnnDestroyTensorDescriptor(ydesc);
    }
}

/* SoftmaxOp (modules/nvidia_plugin/src/ops/softmax.cpp, mapRankAxis): any rank 1..5 and axis
   mapped to a packed 4-D NCHW tensor (cudnnSetTensorNdDescriptorEx) whose C is the axis: the dims
   before it multiplied into N, the dims after it into H and W (rank 5, axis 0: {1, d0, d1 d2,
   d3 d4}; rank 3, axis 2: {d0 d1, d2, 1, 1}); ACCURATE in CHANNEL mode, one descriptor for x and
   y, alpha 1 and beta 0 as floats; float, half and **bfloat16**. */
TEST(compat_softmax_openvino_rank_axis_mapping)
{
    static const struct { cudnnDataType_t t; int rank, axis; int d[5]; } cases[] = {
        {CUDNN_DATA_BFLOAT16, 3, 2, {2, 3, 7}},       {CUDNN_DATA_FLOAT, 5, 0, {5, 2, 3, 2, 2}},
        {CUDNN_DATA_BFLOAT16, 4, 1, {2, 6, 3, 2}},    {CUDNN_DATA_HALF, 5, 2, {2, 2, 6, 3, 2}},
        {CUDNN_DATA_FLOAT, 1, 0, {9}},                {CUDNN_DATA_BFLOAT16, 2, 0, {4, 5}},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const int rank = cases[k].rank, axis = cases[k].axis;
        int before = 1, after_h = 1, after_w = 1;
        for (int i = 0; i < axis; i++) before *= cases[k].d[i];
        /* the dims after the axis: the first into H and the rest into W, as the table merges them */
        const int after = rank - axis - 1;
        for (int i = axis + 1; i < rank; i++) {
            const bool to_h = after <= 2 ? i == axis + 1 : i < axis + 1 + after / 2;
            if (to_h) after_h *= cases[k].d[i];
            else after_w *= cases[k].d[i];
        }
        int dims[4] = {before, cases[k].d[axis], after_h, after_w};
        if (axis == 0 && rank >= 4) { /* 4.0 {1, d0, d1 d2, d3}, 5.0 {1, d0, d1 d2, d3 d4} */
            dims[2] = cases[k].d[1] * cases[k].d[2];
            dims[3] = rank == 4 ? cases[k].d[3] : cases[k].d[3] * cases[k].d[4];
        }
        const int64_t n = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
        cudnnTensorDescriptor_t desc;
        CHECK_OK(cudnnCreateTensorDescriptor(&desc));
        CHECK_OK(cudnnSetTensorNdDescriptorEx(desc, CUDNN_TENSOR_NCHW, t, 4, dims));
        double *x = tview_random(n, -3, 3), *want = malloc(sizeof(double) * (size_t)n);
        void *px = tvalues_upload(t, x, n), *py = tbuf_alloc(tdtype_size(t) * (size_t)n);
        ref_softmax_forward(CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, 4, dims, x, want);
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, desc, px, &zero,
                                         desc, py)))
            tvalues_check(t, py, want, n, t == CUDNN_DATA_BFLOAT16 ? 2e-2 : t == CUDNN_DATA_HALF ? 2e-3 : 1e-5,
                          "OpenVINO's softmax over the mapped axis");
        tbuf_free(px), tbuf_free(py);
        free(x), free(want);
        cudnnDestroyTensorDescriptor(desc);
    }
}

/* ---- TNN (source/tnn/device/cuda/acc/cuda_conv_layer_acc.cc) ----------------------------------- */

/* CudaConvLayerAcc, which runs on cuDNN only the convolutions its TensorRT path gets wrong: 7x7,
   and **41x1 and 5x1 filters** (kernels {1, 41}, {1, 5}), symmetric pads; the group count set on
   the **fresh descriptor before** cudnnSetConvolutionNdDescriptor (FLOAT), the filter
   {K, C/g, kh, kw} by the Nd setter, x by cudnnSetTensorNdDescriptorEx, y from
   cudnnGetConvolutionNdForwardOutputDim (compared with the model's shape); the first SUCCESS of
   cudnnGetConvolutionForwardAlgorithm_v7 asked for CUDNN_CONVOLUTION_FWD_ALGO_COUNT results, a
   workspace that only grows (the buffer's whole size passed); the bias {1, K, 1, 1} added by
   cudnnAddTensor (alpha 1, beta 1). */
TEST(compat_conv_tnn_tall_filters)
{
    static const struct { int kh, kw, groups, ph, pw; } cases[] = {{41, 1, 2, 20, 0}, {5, 1, 1, 2, 0}, {7, 7, 3, 3, 3}};
    cudnnHandle_t h = test_handle();
    size_t ws_size = 0;
    void *ws = NULL;
    for (size_t k = 0; k < TLEN(cases); k++) {
        struct ref_conv rc = {.nsp = 2, .n = 1, .c = 6, .k = 6, .groups = cases[k].groups, .in = {48, 9},
                              .filt = {cases[k].kh, cases[k].kw}, .pad = {cases[k].ph, cases[k].pw},
                              .stride = {1, 1}, .dil = {1, 1}};
        ref_conv_out_dims(&rc);
        struct tconv_run r;
        tconv_run_init(&r, &rc, CUDNN_DATA_FLOAT);
        CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups));
        int xd[5], fd[5], yd[5];
        tconv_dims(&rc, xd, fd, yd);
        const int pad[2] = {rc.pad[0], rc.pad[1]}, one2[2] = {1, 1}, bd[4] = {1, rc.k, 1, 1};
        CHECK_OK(cudnnSetFilterNdDescriptor(r.wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, fd));
        CHECK_OK(cudnnSetConvolutionNdDescriptor(r.cd, 2, pad, one2, one2, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        CHECK_OK(cudnnSetTensorNdDescriptorEx(r.xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, xd));
        int od[4] = {0};
        CHECK_OK(cudnnGetConvolutionNdForwardOutputDim(r.cd, r.xd, r.wd, 4, od));
        CHECK(memcmp(od, yd, sizeof od) == 0);
        CHECK_OK(cudnnSetTensorNdDescriptorEx(r.yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, od));
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int got = 0, pick = -1;
        CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, r.xd, r.wd, r.cd, r.yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                        perf));
        for (int i = 0; i < got && pick < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) pick = i;
        if (!CHECK(pick >= 0)) {
            tconv_run_free(&r);
            continue;
        }
        size_t need = 0;
        CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd, perf[pick].algo, &need));
        if (ws_size < need) {
            tbuf_free(ws);
            ws = tbuf_alloc(need), ws_size = need;
        }
        cudnnTensorDescriptor_t bdesc;
        CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
        CHECK_OK(cudnnSetTensorNdDescriptorEx(bdesc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, bd));
        double *bias = tview_random(rc.k, -0.5, 0.5), *want = malloc(sizeof(double) * (size_t)r.ny);
        void *pb = tvalues_upload(CUDNN_DATA_FLOAT, bias, rc.k);
        const long per = (long)rc.out[0] * rc.out[1];
        for (long i = 0; i < r.ny; i++) want[i] = r.y[i] + bias[i / per % rc.k];
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd, perf[pick].algo, ws, ws_size, &zero,
                                             r.yd, r.py)) &&
            CHECK_OK(cudnnAddTensor(h, &one, bdesc, pb, &one, r.yd, r.py)))
            tvalues_check(CUDNN_DATA_FLOAT, r.py, want, r.ny,
                          tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, perf[pick].mathType),
                          "TNN's tall-filter convolution + bias");
        tbuf_free(pb);
        free(bias), free(want);
        cudnnDestroyTensorDescriptor(bdesc);
        tconv_run_free(&r);
    }
    tbuf_free(ws);
}

/* ---- ccv's grid sample (lib/nnc/cmd/grid_sample/gpu/ccv_nnc_grid_sample_gpu_cudnn.cu) ---------- */

/* ccv's GRID_SAMPLE forward on cuDNN: x and y NCHW or **NHWC through cudnnSetTensor4dDescriptor**
   (its tensor's format), the sampler descriptor {n, c, gh, gw}, the grid n x gh x gw x 2; for
   align_corners 0 the grid first **rescaled by w / (w - 1) and h / (h - 1)** (0 where the image
   is one pixel wide or high) so that cuDNN's corner-aligned sampling gives the edge-aligned one:
   rescaled points reach past [-1, 1] and sample the zero border. float, alpha 1, beta 0. */
TEST(compat_stn_ccv_grid_sample_rescaled_nhwc)
{
    static const struct { int n, c, h, w, gh, gw; } shapes[] = {{2, 3, 4, 5, 3, 6}, {1, 2, 1, 4, 2, 3}, {2, 2, 3, 1, 2, 2}};
    cudnnHandle_t h = test_handle();
    for (size_t s = 0; s < TLEN(shapes); s++)
        for (int nhwc = 0; nhwc < 2; nhwc++)
            for (int align = 0; align < 2; align++) {
                const int n = shapes[s].n, c = shapes[s].c, hh = shapes[s].h, w = shapes[s].w;
                const int gh = shapes[s].gh, gw = shapes[s].gw;
                const int64_t nx = (int64_t)n * c * hh * w, ny = (int64_t)n * c * gh * gw, ng = (int64_t)n * gh * gw * 2;
                double *x = tview_random(nx, -1, 1), *grid = tview_random(ng, -1.1, 1.1);
                for (int64_t i = 0; i < nx; i++) x[i] = (float)x[i];
                for (int64_t i = 0; i < ng; i++) grid[i] = (float)grid[i];
                /* the grid ccv hands cuDNN */
                const float xs = w <= 1 ? 1 : (float)w / (w - 1), ys = hh <= 1 ? 1 : (float)hh / (hh - 1);
                double *g = malloc(sizeof(double) * (size_t)ng);
                for (int64_t i = 0; i < ng; i += 2) {
                    g[i] = align ? grid[i] : w <= 1 ? 0 : (float)((float)grid[i] * xs);
                    g[i + 1] = align ? grid[i + 1] : hh <= 1 ? 0 : (float)((float)grid[i + 1] * ys);
                }
                double *want = malloc(sizeof(double) * (size_t)ny);
                ref_stn_sample(n, c, hh, w, x, gh, gw, g, want);
                /* NHWC buffers hold the same values in channels-last order */
                double *xl = malloc(sizeof(double) * (size_t)nx), *wl = malloc(sizeof(double) * (size_t)ny);
                for (int b = 0; b < n; b++)
                    for (int ch = 0; ch < c; ch++) {
                        for (int i = 0; i < hh * w; i++)
                            xl[nhwc ? ((int64_t)b * hh * w + i) * c + ch : ((int64_t)b * c + ch) * hh * w + i] =
                                x[((int64_t)b * c + ch) * hh * w + i];
                        for (int i = 0; i < gh * gw; i++)
                            wl[nhwc ? ((int64_t)b * gh * gw + i) * c + ch : ((int64_t)b * c + ch) * gh * gw + i] =
                                want[((int64_t)b * c + ch) * gh * gw + i];
                    }
                const cudnnTensorFormat_t fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
                cudnnTensorDescriptor_t ad, bd;
                cudnnSpatialTransformerDescriptor_t st;
                CHECK_OK(cudnnCreateTensorDescriptor(&ad));
                CHECK_OK(cudnnCreateTensorDescriptor(&bd));
                CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
                const int st_dim[4] = {n, c, gh, gw};
                const float one = 1, zero = 0;
                void *px = tvalues_upload(CUDNN_DATA_FLOAT, xl, nx), *pg = tvalues_upload(CUDNN_DATA_FLOAT, g, ng);
                void *py = tbuf_alloc(sizeof(float) * (size_t)ny);
                if (CHECK_OK(cudnnSetTensor4dDescriptor(ad, fmt, CUDNN_DATA_FLOAT, n, c, hh, w)) &&
                    CHECK_OK(cudnnSetTensor4dDescriptor(bd, fmt, CUDNN_DATA_FLOAT, n, c, gh, gw)) &&
                    CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4,
                                                                    st_dim)) &&
                    CHECK_OK(cudnnSpatialTfSamplerForward(h, st, &one, ad, px, pg, &zero, bd, py)))
                    tvalues_check(CUDNN_DATA_FLOAT, py, wl, ny, 1e-5,
                                  align ? "ccv grid sample, align_corners 1" : "ccv grid sample, rescaled grid");
                tbuf_free(px), tbuf_free(pg), tbuf_free(py);
                cudnnDestroySpatialTransformerDescriptor(st);
                cudnnDestroyTensorDescriptor(ad);
                cudnnDestroyTensorDescriptor(bd);
                free(x), free(grid), free(g), free(want), free(xl), free(wl);
            }
}
