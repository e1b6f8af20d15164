/* compat_bindings.c: call patterns of language bindings and framework glue (docs/compatibility.md)
   that the op tests do not make: CUDA.jl's convolution through cudnnConvolutionBiasActivationForward
   with the algorithm its own search chose, candle's 1-D descriptor on 4-D tensors, ONNX Runtime's
   transposed convolution with output_padding, TensorFlow's channels-last 3-D convolution,
   PyTorch's grid sampler on strided tensors, CuPy's batch-norm Ex calls with descriptors given
   for NULL tensors, Flux's batch-norm backward without saved statistics, Caffe2's dropout
   sharing one buffer for its mask and states, MXNet's dropout on a descriptor created and
   restored for every call, Gorgonia's dropout passing its states as the reserve (refused) and its convolutions on IMPLICIT_GEMM and backward ALGO_0 without workspace,
   NNlib's leaky ReLU as an in-place cudnnOpTensor
   MAX, Juice's activations with the coefficient DBL_MAX, and CUDA.jl's reduction with the
   indices pointer NULL. Each result against the double references of tests/ref/. */
#include "conv_harness.h"
#include "desc_util.h"
#include "ref/activation.h"
#include "ref/batchnorm.h"
#include "ref/conv.h"
#include "ref/reduce.h"
#include "ref/spatial_tf.h"
#include "tensors.h"
#include "test.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* CUDA.jl's cudnnConvolutionForward! (lib/cudnn/convolution.jl): a descriptor from
   cudnnSetConvolutionNdDescriptor in CUDNN_CONVOLUTION mode (NNlib's default, the filter
   mirrored) with the data's own type as compute type (HALF for Float16 arrays); the algorithm
   from cudnnFindConvolutionForwardAlgorithmEx, the SUCCESS one with the least memory within
   10% of the best time; with a bias, or a ReLU, cudnnConvolutionBiasActivationForward with
   that algorithm, the activation IDENTITY when only the bias is asked for, z = y with beta 0
   when no z is given, and a zero bias made when only the ReLU is. IDENTITY with another
   algorithm than IMPLICIT_PRECOMP_GEMM is NOT_SUPPORTED, as the 8.2 text and NVIDIA's library
   have it (Paddle's conv_fusion and dlib pick that algorithm for it); the call with it runs. */
TEST(compat_conv_cudajl_bias_identity_found_algorithm)
{
    static const struct { cudnnDataType_t t; bool relu, bias; } cases[] = {
        {CUDNN_DATA_FLOAT, false, true}, {CUDNN_DATA_HALF, true, false}, {CUDNN_DATA_DOUBLE, true, true}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {6, 5}, .filt = {3, 2},
                              .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}, .convolution = true};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        const int bd[4] = {1, rc.k, 1, 1};
        struct tview x, y, w, b;
        tconv_views(&rc, t, TV_NCHW, TV_NCHW, &x, &w, &y);
        tview_init(&b, t, 4, bd, TV_NCHW);
        double *xv = tview_random(x.count, -1, 1), *wv = tview_random(w.count, -1, 1);
        double *bv = cases[k].bias ? tview_random(rc.k, -1, 1) : tview_fill(rc.k, 0);
        double *want = malloc(sizeof(double) * (size_t)y.count);
        void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *pb = tview_upload(&b, bv);
        void *py = tview_upload(&y, NULL);
        ref_conv_fwd(&rc, xv, wv, want);
        const int per = rc.out[0] * rc.out[1];
        for (int64_t i = 0; i < y.count; i++) {
            want[i] += bv[(i / per) % rc.k];
            if (cases[k].relu) want[i] = fmax(0, want[i]);
        }
        cudnnFilterDescriptor_t fd;
        cudnnConvolutionDescriptor_t cd;
        cudnnActivationDescriptor_t ad;
        CHECK_OK(cudnnCreateFilterDescriptor(&fd));
        CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
        CHECK_OK(cudnnCreateActivationDescriptor(&ad));
        const int pad[2] = {1, 1}, str[2] = {1, 1}, dil[2] = {1, 1};
        bool ok = CHECK_OK(cudnnSetFilterNdDescriptor(fd, t, CUDNN_TENSOR_NCHW, 4, w.dims)) &&
                  CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 2, pad, str, dil, CUDNN_CONVOLUTION, t)) &&
                  CHECK_OK(cudnnSetActivationDescriptor(ad, cases[k].relu ? CUDNN_ACTIVATION_RELU
                                                                          : CUDNN_ACTIVATION_IDENTITY,
                                                        CUDNN_NOT_PROPAGATE_NAN, 1.0));
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int got = 0, best = -1;
        const size_t ws = 1 << 20;
        void *work = tbuf_alloc(ws);
        ok = ok && CHECK_OK(cudnnFindConvolutionForwardAlgorithmEx(h, x.desc, px, fd, pw, cd, y.desc, py,
                                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf, work, ws));
        double mbest = INFINITY, tbest = INFINITY;
        for (int i = 0; ok && i < got; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && (double)perf[i].memory < mbest && perf[i].time < tbest * 1.1)
                best = i, mbest = (double)perf[i].memory, tbest = perf[i].time;
        if (ok && CHECK(best >= 0)) {
            struct tscale one, zero;
            tview_store(&y, py, NULL); /* poison: z is y, and beta 0 must not read it */
            /* the 8.2 text and NVIDIA's library: IDENTITY only with IMPLICIT_PRECOMP_GEMM */
            bool refused = !cases[k].relu && perf[best].algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
            cudnnStatus_t st = cudnnConvolutionBiasActivationForward(h, tscale(&one, t, 1), x.desc, px, fd, pw, cd,
                                                                     perf[best].algo, work, ws, tscale(&zero, t, 0),
                                                                     y.desc, py, b.desc, pb, ad, y.desc, py);
            if (refused) {
                CHECK_STATUS(st, CUDNN_STATUS_NOT_SUPPORTED);
                st = cudnnConvolutionBiasActivationForward(h, tscale(&one, t, 1), x.desc, px, fd, pw, cd,
                                                           CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work, ws,
                                                           tscale(&zero, t, 0), y.desc, py, b.desc, pb, ad, y.desc, py);
            }
            if (CHECK_OK(st)) {
                double *gotv = malloc(sizeof(double) * (size_t)y.count);
                tview_download(&y, py, gotv);
                CHECK(tcompare(CUDNN_DATA_DOUBLE, gotv, want, y.count, tconv_tolerance(t, t, perf[best].mathType),
                               cases[k].relu ? "relu(conv + bias)" : "conv + bias, identity"));
                free(gotv);
            }
        }
        tbuf_free(work);
        cudnnDestroyFilterDescriptor(fd);
        cudnnDestroyConvolutionDescriptor(cd);
        cudnnDestroyActivationDescriptor(ad);
        tview_free(&x, px), tview_free(&w, pw), tview_free(&b, pb), tview_free(&y, py);
        free(xv), free(wv), free(bv), free(want);
        tview_destroy(&x);
        tview_destroy(&y);
        tview_destroy(&w);
        tview_destroy(&b);
    }
}

/* NNlib's leakyrelu broadcast on CUDA.jl (lib/cudnn/nnlib.jl): cudnnOpTensor MAX with A and B
   the same array, alpha1 0.01 and alpha2 1, into another array or, for `x .= leakyrelu.(x)`,
   into that array itself (C, A and B one buffer). */
TEST(compat_op_tensor_nnlib_leakyrelu_in_place)
{
    const int d[4] = {2, 3, 4, 5};
    cudnnHandle_t h = test_handle();
    struct tview x;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
    double *xv = tview_random(x.count, -2, 2), *want = malloc(sizeof(double) * (size_t)x.count);
    for (int64_t i = 0; i < x.count; i++) want[i] = fmax(0.01 * (float)xv[i], (float)xv[i]);
    cudnnOpTensorDescriptor_t od;
    CHECK_OK(cudnnCreateOpTensorDescriptor(&od));
    CHECK_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    const float a1 = 0.01f, a2 = 1, zero = 0;
    for (int in_place = 0; in_place < 2; in_place++) {
        void *px = tview_upload(&x, xv), *py = in_place ? px : tview_upload(&x, NULL);
        if (CHECK_OK(cudnnOpTensor(h, od, &a1, x.desc, px, &a2, x.desc, px, &zero, x.desc, py)))
            tview_check(&x, py, want, in_place ? "leakyrelu in place" : "leakyrelu");
        tview_free(&x, px);
        if (!in_place) tview_free(&x, py);
    }
    cudnnDestroyOpTensorDescriptor(od);
    free(xv), free(want);
    tview_destroy(&x);
}

/* Juice's rcudnn (rcudnn/cudnn/src/activation_descriptor.rs, cudnn.rs): every activation
   descriptor set with NOT_PROPAGATE_NAN and the coefficient f64::MAX ("FIXME make this public
   API"), the clipped ReLU included, which so clips nowhere; forward, then backward given y, dy
   and x, alpha 1 and beta 0. */
TEST(compat_act_juice_coefficient_dbl_max)
{
    static const cudnnActivationMode_t modes[] = {CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_RELU,
                                                  CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_ACTIVATION_TANH};
    const int d[4] = {2, 3, 4, 5};
    cudnnHandle_t h = test_handle();
    struct tview t;
    tview_init(&t, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
    double *xv = tview_random(t.count, -3, 3), *dyv = tview_random(t.count, -1, 1);
    xv[7] = 1e30;
    double *yw = malloc(sizeof(double) * (size_t)t.count), *dxw = malloc(sizeof(double) * (size_t)t.count);
    void *px = tview_upload(&t, xv), *pdy = tview_upload(&t, dyv), *py = tview_upload(&t, NULL);
    void *pdx = tview_upload(&t, NULL);
    cudnnActivationDescriptor_t ad;
    CHECK_OK(cudnnCreateActivationDescriptor(&ad));
    const float one = 1, zero = 0;
    for (size_t m = 0; m < TLEN(modes); m++) {
        for (int64_t i = 0; i < t.count; i++) {
            yw[i] = ref_activation(modes[m], false, DBL_MAX, 0, xv[i]);
            dxw[i] = ref_activation_grad(modes[m], false, DBL_MAX, 0, xv[i], dyv[i]);
        }
        char what[64];
        snprintf(what, sizeof what, "Juice's activation %d, coefficient DBL_MAX", (int)modes[m]);
        if (CHECK_OK(cudnnSetActivationDescriptor(ad, modes[m], CUDNN_NOT_PROPAGATE_NAN, DBL_MAX)) &&
            CHECK_OK(cudnnActivationForward(h, ad, &one, t.desc, px, &zero, t.desc, py)) &&
            tview_check(&t, py, yw, what) &&
            CHECK_OK(cudnnActivationBackward(h, ad, &one, t.desc, py, t.desc, pdy, t.desc, px, &zero, t.desc, pdx)))
            tview_check(&t, pdx, dxw, what);
    }
    cudnnDestroyActivationDescriptor(ad);
    tview_free(&t, px), tview_free(&t, pdy), tview_free(&t, py), tview_free(&t, pdx);
    free(xv), free(dyv), free(yw), free(dxw);
    tview_destroy(&t);
}

/* CUDA.jl's cudnnReduceTensor wrapper (lib/cudnn/tensor.jl): the descriptor asks for no
   indices (the default), the indices pointer is C_NULL and indicesSizeInBytes whatever
   cudnnGetReductionIndicesSize reports; the workspace of cudnnGetReductionWorkspaceSize. */
TEST(compat_reduce_cudajl_null_indices_reported_size)
{
    static const cudnnReduceTensorOp_t ops[] = {CUDNN_REDUCE_TENSOR_MAX, CUDNN_REDUCE_TENSOR_ADD,
                                                CUDNN_REDUCE_TENSOR_NORM2};
    cudnnHandle_t h = test_handle();
    const int ad[4] = {2, 3, 4, 5}, cd[4] = {1, 3, 1, 5};
    struct treduce r;
    treduce_init(&r, 4, ad, cd, -2, 2);
    cudnnReduceTensorDescriptor_t rd;
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd));
    for (size_t k = 0; k < TLEN(ops); k++) {
        size_t isz = 0, wsz = 0;
        const float one = 1, zero = 0;
        if (!CHECK_OK(cudnnSetReduceTensorDescriptor(rd, ops[k], CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                                     CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES)) ||
            !CHECK_OK(cudnnGetReductionIndicesSize(h, rd, r.adesc, r.cdesc, &isz)) ||
            !CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, r.adesc, r.cdesc, &wsz)))
            break;
        void *work = wsz ? tbuf_alloc(wsz) : NULL;
        tbuf_poison(r.pc, rt_bytes(&r.ct));
        ref_reduce(ops[k], false, 1, &r.at, r.a, 0, &r.ct, r.c0, r.want, NULL);
        if (CHECK_OK(cudnnReduceTensor(h, rd, NULL, isz, work, wsz, &one, r.adesc, r.pa, &zero, r.cdesc, r.pc)))
            tcompare_span(&r.ct, r.pc, r.want, -1, "reduction with the indices pointer NULL");
        tbuf_free(work);
    }
    cudnnDestroyReduceTensorDescriptor(rd);
    treduce_free(&r);
}

/* PyTorch's cudnn_grid_sampler (aten/src/ATen/native/cudnn/GridSampler.cpp): the input and the
   output gradient described with their own strides (contiguousIfZeroInStrides: a channels-last
   or sliced tensor stays as it is), the output and the input gradient fresh and packed, the
   grid contiguous N x H x W x 2; the backward always computes both gradients (alpha 1, beta 0,
   alphaDgrid 1, betaDgrid 0). */
TEST(compat_stn_pytorch_strided_tensors)
{
    const int n = 2, c = 3, hin = 4, win = 5, h = 3, w = 4;
    const int xd[4] = {n, c, hin, win}, yd[4] = {n, c, h, w};
    cudnnHandle_t hd = test_handle();
    struct tview x, dx, y, dy;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NHWC);
    tview_init(&dx, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
    tview_init(&y, CUDNN_DATA_FLOAT, 4, yd, TV_NCHW);
    tview_init(&dy, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC_PADDED);
    const int64_t ng = (int64_t)n * h * w * 2;
    double *xv = tview_random(x.count, -1, 1), *dyv = tview_random(dy.count, -1, 1), *grid = tview_random(ng, -1.1, 1.1);
    double *yv = malloc(sizeof(double) * (size_t)y.count), *dxv = malloc(sizeof(double) * (size_t)x.count);
    double *dgrid = malloc(sizeof(double) * (size_t)ng);
    void *px = tview_upload(&x, xv), *pdy = tview_upload(&dy, dyv), *py = tview_upload(&y, NULL);
    void *pdx = tview_upload(&dx, NULL), *pgrid = tvalues_upload(CUDNN_DATA_FLOAT, grid, ng);
    void *pdgrid = tbuf_alloc(sizeof(float) * (size_t)ng);
    ref_stn_sample(n, c, hin, win, xv, h, w, grid, yv);
    ref_stn_sample_backward(n, c, hin, win, xv, h, w, grid, dyv, dxv, dgrid);
    cudnnSpatialTransformerDescriptor_t st;
    CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    const float one = 1, zero = 0;
    if (CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, yd))) {
        if (CHECK_OK(cudnnSpatialTfSamplerForward(hd, st, &one, x.desc, px, pgrid, &zero, y.desc, py)))
            tview_check(&y, py, yv, "sampled from a channels-last input");
        if (CHECK_OK(cudnnSpatialTfSamplerBackward(hd, st, &one, x.desc, px, &zero, dx.desc, pdx, &one, dy.desc, pdy,
                                                   pgrid, &zero, pdgrid))) {
            tview_check(&dx, pdx, dxv, "input gradient");
            tvalues_check(CUDNN_DATA_FLOAT, pdgrid, dgrid, ng, 1e-4, "grid gradient");
        }
    }
    cudnnDestroySpatialTransformerDescriptor(st);
    tview_free(&x, px), tview_free(&dy, pdy), tview_free(&y, py), tview_free(&dx, pdx);
    tbuf_free(pgrid), tbuf_free(pdgrid);
    free(xv), free(dyv), free(grid), free(yv), free(dxv), free(dgrid);
    tview_destroy(&x);
    tview_destroy(&dx);
    tview_destroy(&y);
    tview_destroy(&dy);
}

/* CuPy's batch normalization (cupy/cuda/cudnn.pyx, _batch_normalization_forward_training and
   batch_normalization_backward, cuDNN >= 7.4.1): cudnnBatchNormalizationForwardTrainingEx with
   CUDNN_BATCHNORM_OPS_BN, **zDesc given (x's) with z NULL**, the activation NULL; for half NHWC
   data in SPATIAL_PERSISTENT mode (C a multiple of 4) the workspace and reserve queried (zDesc
   x's, activation NULL) and passed, else NULL and 0; the parameters' descriptor derived;
   beta a pointer to a double 0 whatever the data type; cudnnBatchNormalizationBackwardEx with
   yDesc and dzDesc given (x's) and y, dz and bnBias NULL, the activation NULL, the forward's
   reserve. */
TEST(compat_bn_ex_cupy_descriptors_for_null_tensors)
{
    static const struct { cudnnDataType_t t; int layout; cudnnBatchNormMode_t mode; } cases[] = {
        {CUDNN_DATA_FLOAT, TV_NCHW, CUDNN_BATCHNORM_SPATIAL},
        {CUDNN_DATA_HALF, TV_NHWC, CUDNN_BATCHNORM_SPATIAL_PERSISTENT}};
    cudnnHandle_t h = test_handle();
    const double eps = 2e-5, decay = 0.9;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int d[4] = {3, 4, 3, 2}, pd[4] = {1, 4, 1, 1};
        const int64_t c = d[1];
        struct tview x, p;
        tview_init(&x, cases[k].t, 4, d, cases[k].layout);
        tview_init(&p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
        cudnnTensorDescriptor_t bd;
        CHECK_OK(cudnnCreateTensorDescriptor(&bd));
        CHECK_OK(cudnnDeriveBNTensorDescriptor(bd, x.desc, cases[k].mode));
        struct ref_bn_shape sh = {d[0], c, d[2] * d[3], false};
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
        double *scale = tview_random(c, 0.5, 1.5), *bias = tview_random(c, -0.5, 0.5);
        double *rm = tview_random(c, -1, 1), *rv = tview_random(c, 0.5, 2);
        double *mean = malloc(sizeof(double) * (size_t)c), *var = malloc(sizeof(double) * (size_t)c);
        double *inv = malloc(sizeof(double) * (size_t)c), *y = malloc(sizeof(double) * (size_t)x.count);
        double *dx = malloc(sizeof(double) * (size_t)x.count), *dpre = malloc(sizeof(double) * (size_t)x.count);
        double *ds = malloc(sizeof(double) * (size_t)c), *db = malloc(sizeof(double) * (size_t)c);
        void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
        void *pdx = tview_upload(&x, NULL), *ps = tview_upload(&p, scale), *pb = tview_upload(&p, bias);
        void *prm = tview_upload(&p, rm), *prv = tview_upload(&p, rv), *psm = tview_upload(&p, NULL);
        void *psv = tview_upload(&p, NULL), *pds = tview_upload(&p, NULL), *pdb = tview_upload(&p, NULL);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_forward(&sh, xv, NULL, scale, bias, mean, var, eps, -1, 0, NULL, y);
        ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, scale, mean, var, eps, dpre, dx, ds, db);
        for (int64_t i = 0; i < c; i++) inv[i] = 1 / sqrt(var[i] + eps);
        const float one = 1;
        const double zero = 0; /* CuPy's beta: a double 0 for every data type */
        size_t ws = 0, rs = 0;
        const bool fast = cases[k].mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
        if (fast) {
            CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, cases[k].mode, CUDNN_BATCHNORM_OPS_BN,
                                                                              x.desc, x.desc, x.desc, bd, NULL, &ws));
            CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, cases[k].mode, CUDNN_BATCHNORM_OPS_BN,
                                                                          NULL, x.desc, &rs));
        }
        void *work = ws ? tbuf_alloc(ws) : NULL, *reserve = rs ? tbuf_alloc(rs) : NULL;
        if (CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, cases[k].mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero,
                                                              x.desc, px, x.desc, NULL, x.desc, py, bd, ps, pb,
                                                              1.0 - decay, prm, prv, eps, psm, psv, NULL, work, ws,
                                                              reserve, rs))) {
            tview_check(&x, py, y, "CuPy training y");
            tview_check(&p, psm, mean, "saved mean");
            tview_check(&p, psv, inv, "saved inverse deviation");
            size_t bws = 0;
            if (CHECK_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, cases[k].mode, CUDNN_BATCHNORM_OPS_BN,
                                                                           x.desc, x.desc, x.desc, x.desc, x.desc, bd,
                                                                           NULL, &bws))) {
                void *bwork = bws ? tbuf_alloc(bws) : NULL;
                if (CHECK_OK(cudnnBatchNormalizationBackwardEx(h, cases[k].mode, CUDNN_BATCHNORM_OPS_BN, &one, &zero,
                                                               &one, &zero, x.desc, px, x.desc, NULL, x.desc, pdy,
                                                               x.desc, NULL, x.desc, pdx, bd, ps, NULL, pds, pdb, eps,
                                                               psm, psv, NULL, bwork, bws, reserve, rs))) {
                    tview_check(&x, pdx, dx, "CuPy dx");
                    tview_check(&p, pds, ds, "CuPy dgamma");
                    tview_check(&p, pdb, db, "CuPy dbeta");
                }
                tbuf_free(bwork);
            }
        }
        tbuf_free(work);
        tbuf_free(reserve);
        cudnnDestroyTensorDescriptor(bd);
        void *xb[] = {px, pdy, py, pdx}, *pbufs[] = {ps, pb, prm, prv, psm, psv, pds, pdb};
        for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
        for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
        double *hv[] = {xv, dyv, scale, bias, rm, rv, mean, var, inv, y, dx, dpre, ds, db};
        for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
        tview_destroy(&x);
        tview_destroy(&p);
    }
}

/* Caffe2's CuDNNDropoutOp and CuDNNDropoutGradientOp (caffe2/operators/dropout_op_cudnn.cc):
   x described as (size) x 1 x 1 x 1; ONE buffer holds the reserve (the mask) and, from the
   next multiple of 128 bytes, the RNG states; the forward op's descriptor is set on those
   states (seed 0); the gradient op sets its own descriptor on the same states again (seed 0,
   which initialises them anew) and runs cudnnDropoutBackward with the mask at the start of the
   buffer. */
TEST(compat_dropout_caffe2_mask_and_states_one_buffer)
{
    cudnnHandle_t h = test_handle();
    const int d[4] = {120, 1, 1, 1};
    const float ratio = 0.4f;
    struct tview x;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
    size_t states_bytes = 0, reserve_bytes = 0;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(x.desc, &reserve_bytes));
    const size_t states_at = (reserve_bytes + 127) / 128 * 128;
    uint8_t *buf = tbuf_alloc(states_at + states_bytes);
    double *xv = tview_random(x.count, 1, 2), *dyv = tview_random(x.count, 1, 2);
    double *y = malloc(sizeof(double) * (size_t)x.count), *dx = malloc(sizeof(double) * (size_t)x.count);
    void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *pdy = tview_upload(&x, dyv);
    void *pdx = tview_upload(&x, NULL);
    cudnnDropoutDescriptor_t fwd, bwd;
    CHECK_OK(cudnnCreateDropoutDescriptor(&fwd));
    CHECK_OK(cudnnCreateDropoutDescriptor(&bwd));
    bool ok = CHECK_OK(cudnnSetDropoutDescriptor(fwd, h, ratio, buf + states_at, states_bytes, 0)) &&
              CHECK_OK(cudnnDropoutForward(h, fwd, x.desc, px, x.desc, py, buf, reserve_bytes)) &&
              CHECK_OK(cudnnSetDropoutDescriptor(bwd, h, ratio, buf + states_at, states_bytes, 0)) &&
              CHECK_OK(cudnnDropoutBackward(h, bwd, x.desc, pdy, x.desc, pdx, buf, reserve_bytes));
    if (ok) {
        tview_download(&x, py, y);
        tview_download(&x, pdx, dx);
        int kept = 0;
        for (int64_t i = 0; i < x.count && ok; i++) {
            bool k = y[i] != 0;
            kept += k;
            double want_y = k ? xv[i] / (1 - ratio) : 0, want_dx = k ? dyv[i] / (1 - ratio) : 0;
            ok = CHECK(fabs(y[i] - want_y) <= 1e-5 * fabs(want_y)) && CHECK(fabs(dx[i] - want_dx) <= 1e-5 * fabs(want_dx));
        }
        CHECK(kept > 30 && kept < 110); /* 72 expected of 120 */
    }
    cudnnDestroyDropoutDescriptor(fwd);
    cudnnDestroyDropoutDescriptor(bwd);
    tbuf_free(buf);
    void *bufs[] = {px, py, pdy, pdx};
    for (size_t i = 0; i < TLEN(bufs); i++) tview_free(&x, bufs[i]);
    free(xv), free(dyv), free(y), free(dx);
    tview_destroy(&x);
}

/* MXNet's Dropout operator on cuDNN (src/operator/nn/dropout-inl.h, CuDNNForward and
   CuDNNBackward; the descriptor from the resource manager's get_cudnn_dropout_desc,
   src/resource.cc): every call **creates a new dropout descriptor**, the first one set on the
   stream's states (cudnnDropoutGetStatesSize, the op's seed) and every later one
   **cudnnRestoreDropoutDescriptor**'d on the same states; x, y, dy and dx described as
   {1, 1, 1, size} with strides {size, size, size, 1}; the reserve size from
   cudnnDropoutGetReserveSpaceSize and the mask output, **an array of the data's type and shape
   (larger than that)**, passed as the reserve with that size; the backward on the forward's
   descriptor. Float and half data; each pass's y is x / (1 - p) or 0 and dx follows y's mask. */
TEST(compat_dropout_mxnet_restored_fresh_descriptors)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    enum { SIZE = 150 };
    const float p = 0.3f;
    const int dims[4] = {1, 1, 1, SIZE}, strides[4] = {SIZE, SIZE, SIZE, 1};
    cudnnHandle_t h = test_handle();
    size_t states_bytes = 0;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    void *states = tbuf_alloc(states_bytes);
    bool initialised = false;
    for (size_t k = 0; k < TLEN(types); k++)
        for (int pass = 0; pass < 2; pass++) {
            const cudnnDataType_t t = types[k];
            const size_t es = tdtype_size(t);
            const double tol = t == CUDNN_DATA_HALF ? 2e-3 : 1e-6;
            cudnnTensorDescriptor_t xd;
            cudnnDropoutDescriptor_t dd;
            size_t reserve_bytes = 0;
            CHECK_OK(cudnnCreateTensorDescriptor(&xd));
            CHECK_OK(cudnnCreateDropoutDescriptor(&dd));
            bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(xd, t, 4, dims, strides)) &&
                      CHECK_OK(cudnnDropoutGetReserveSpaceSize(xd, &reserve_bytes)) &&
                      CHECK(SIZE * es >= reserve_bytes);
            ok = ok && (initialised ? CHECK_OK(cudnnRestoreDropoutDescriptor(dd, h, p, states, states_bytes, 17))
                                    : CHECK_OK(cudnnSetDropoutDescriptor(dd, h, p, states, states_bytes, 17)));
            initialised = initialised || ok;
            double *xv = tview_random(SIZE, 1, 2), *dyv = tview_random(SIZE, 1, 2);
            void *px = tvalues_upload(t, xv, SIZE), *pdy = tvalues_upload(t, dyv, SIZE);
            void *py = tbuf_alloc(SIZE * es), *pdx = tbuf_alloc(SIZE * es), *mask = tbuf_alloc(SIZE * es);
            ok = ok && CHECK_OK(cudnnDropoutForward(h, dd, xd, px, xd, py, mask, reserve_bytes)) &&
                 CHECK_OK(cudnnDropoutBackward(h, dd, xd, pdy, xd, pdx, mask, reserve_bytes));
            if (ok) {
                double *y = tvalues_download(t, py, SIZE), *dx = tvalues_download(t, pdx, SIZE);
                int kept = 0;
                for (int i = 0; i < SIZE && ok; i++) {
                    const bool keep = y[i] != 0;
                    kept += keep;
                    const double want_y = keep ? xv[i] / (1 - p) : 0, want_dx = keep ? dyv[i] / (1 - p) : 0;
                    ok = CHECK(fabs(y[i] - want_y) <= tol * fabs(want_y)) &&
                         CHECK(fabs(dx[i] - want_dx) <= tol * fabs(want_dx));
                }
                CHECK(kept > 70 && kept < 140); /* 105 expected of 150 */
                free(y), free(dx);
            }
            void *bufs[] = {px, pdy, py, pdx, mask};
            for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
            free(xv), free(dyv);
            cudnnDestroyDropoutDescriptor(dd);
            cudnnDestroyTensorDescriptor(xd);
        }
    tbuf_free(states);
}

/* Gorgonia's dropout (ops/nn/dropout_cuda.go through gorgonia.org/cu/dnn): the states buffer of
   cudnnDropoutGetStatesSize, set on the descriptor, **passed again as the reserve space** with the
   states' size to cudnnDropoutForward and cudnnDropoutBackward. The forward writes the mask and
   advances the states in the same bytes, so the mask the backward reads depends on the order of
   the writes (the state update overwrote it: a wrong gradient); the forward is refused with
   BAD_PARAM and writes nothing, nor advances the states; dx over the mask the backward reads and
   y over the states are refused the same way. */
TEST(compat_dropout_gorgonia_states_as_reserve_refused)
{
    cudnnHandle_t h = test_handle();
    const int d[4] = {2, 3, 4, 5};
    struct tview x;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
    size_t states_bytes = 0, reserve_bytes = 0;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(x.desc, &reserve_bytes));
    const size_t span = states_bytes > reserve_bytes ? states_bytes : reserve_bytes;
    void *states = tbuf_alloc(span);
    double *xv = tview_random(x.count, 1, 2);
    void *px = tview_upload(&x, xv), *py = tview_upload(&x, NULL), *pdx = tview_upload(&x, NULL);
    void *reserve = tbuf_alloc(reserve_bytes);
    cudnnDropoutDescriptor_t dd;
    CHECK_OK(cudnnCreateDropoutDescriptor(&dd));
    if (CHECK_OK(cudnnSetDropoutDescriptor(dd, h, 0.5f, states, states_bytes, 7))) {
        void *snap_states = tbuf_snapshot(states, span), *snap_y = tbuf_snapshot(py, tview_bytes(&x));
        CHECK_STATUS(cudnnDropoutForward(h, dd, x.desc, px, x.desc, py, states, span), CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(cudnnDropoutForward(h, dd, x.desc, px, x.desc, states, reserve, reserve_bytes),
                     CUDNN_STATUS_BAD_PARAM);
        tbuf_unchanged(states, snap_states, span, "the states after the refused forward calls");
        tbuf_unchanged(py, snap_y, tview_bytes(&x), "y after the refused forward");
        /* the backward reads the mask and never the states: only dx over the mask is refused */
        if (CHECK_OK(cudnnDropoutForward(h, dd, x.desc, px, x.desc, py, reserve, reserve_bytes))) {
            void *snap_mask = tbuf_snapshot(reserve, reserve_bytes);
            CHECK_STATUS(cudnnDropoutBackward(h, dd, x.desc, py, x.desc, reserve, reserve, reserve_bytes),
                         CUDNN_STATUS_BAD_PARAM);
            tbuf_unchanged(reserve, snap_mask, reserve_bytes, "the mask after the refused backward");
            CHECK_OK(cudnnDropoutBackward(h, dd, x.desc, py, x.desc, pdx, reserve, reserve_bytes));
            free(snap_mask);
        }
        free(snap_states), free(snap_y);
    }
    cudnnDestroyDropoutDescriptor(dd);
    tbuf_free(states), tbuf_free(reserve);
    tview_free(&x, px), tview_free(&x, py), tview_free(&x, pdx);
    free(xv);
    tview_destroy(&x);
}

/* Gorgonia's convolution (ops/nn/convolution_cuda.go through gorgonia.org/cu/dnn): the descriptor
   in CONVOLUTION mode (cudnn.StandardConvolution), the data's type as compute type; the forward
   with IMPLICIT_GEMM, backward data with ALGO_0 and backward filter with ALGO_0, each **with no
   workspace (NULL, 0) and none asked for** (nomem{}), beta 1. The guide describes the three as
   forming no matrix; each reports 0 bytes for any problem (strided, dilated, grouped, 1x1) and
   runs without one. */
TEST(compat_conv_gorgonia_algo0_without_workspace)
{
    static const struct ref_conv geometry[] = {
        {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 1, .in = {9, 8}, .filt = {3, 3}, .pad = {1, 1}, .stride = {1, 1},
         .dil = {1, 1}, .convolution = true},
        {.nsp = 2, .n = 1, .c = 6, .k = 4, .groups = 2, .in = {11, 9}, .filt = {5, 3}, .pad = {2, 0}, .stride = {2, 1},
         .dil = {1, 2}, .convolution = true},
        {.nsp = 2, .n = 3, .c = 8, .k = 5, .groups = 1, .in = {6, 6}, .filt = {1, 1}, .pad = {0, 0}, .stride = {2, 2},
         .dil = {1, 1}, .convolution = true},
    };
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    const float one = 1;
    for (size_t g = 0; g < TLEN(geometry); g++) {
        struct ref_conv rc = geometry[g];
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        struct tconv_run r;
        tconv_run_init(&r, &rc, t);
        const int pad[2] = {rc.pad[0], rc.pad[1]}, stride[2] = {rc.stride[0], rc.stride[1]};
        const int dil[2] = {rc.dil[0], rc.dil[1]};
        bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(r.xd, CUDNN_TENSOR_NCHW, t, rc.n, rc.c, rc.in[0], rc.in[1])) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(r.yd, CUDNN_TENSOR_NCHW, t, rc.n, rc.k, rc.out[0], rc.out[1])) &&
                  CHECK_OK(cudnnSetFilter4dDescriptor(r.wd, t, CUDNN_TENSOR_NCHW, rc.k, rc.c / rc.groups, rc.filt[0],
                                                      rc.filt[1])) &&
                  CHECK_OK(cudnnSetConvolutionNdDescriptor(r.cd, 2, pad, stride, dil, CUDNN_CONVOLUTION, t)) &&
                  CHECK_OK(cudnnSetConvolutionGroupCount(r.cd, rc.groups));
        size_t fs = 1, ds = 1, ws = 1;
        ok = ok &&
             CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, r.xd, r.wd, r.cd, r.yd,
                                                              CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &fs)) &&
             CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, r.wd, r.yd, r.cd, r.xd,
                                                                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, &ds)) &&
             CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, r.xd, r.yd, r.cd, r.wd,
                                                                     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, &ws)) &&
             CHECK(fs == 0 && ds == 0 && ws == 0);
        /* beta 1: each result added to what the output held */
        double *y0 = tview_random(r.ny, -1, 1), *dx0 = tview_random(r.nx, -1, 1), *dw0 = tview_random(r.nw, -1, 1);
        void *py = tvalues_upload(t, y0, r.ny), *pdx = tvalues_upload(t, dx0, r.nx), *pdw = tvalues_upload(t, dw0, r.nw);
        for (long i = 0; i < r.ny; i++) r.y[i] += y0[i];
        for (long i = 0; i < r.nx; i++) r.dx[i] += dx0[i];
        for (long i = 0; i < r.nw; i++) r.dw[i] += dw0[i];
        /* DEFAULT_MATH (Gorgonia's DefaultMath) lets float run as TF32 */
        const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH);
        if (ok && CHECK_OK(cudnnConvolutionForward(h, &one, r.xd, r.px, r.wd, r.pw, r.cd,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &one, r.yd, py)))
            tvalues_check(t, py, r.y, r.ny, tol, "Gorgonia forward, IMPLICIT_GEMM without workspace");
        if (ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, r.wd, r.pw, r.yd, r.pdy, r.cd,
                                                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0, &one, r.xd, pdx)))
            tvalues_check(t, pdx, r.dx, r.nx, tol, "Gorgonia backward data, ALGO_0 without workspace");
        if (ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, r.xd, r.px, r.yd, r.pdy, r.cd,
                                                          CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, NULL, 0, &one, r.wd, pdw)))
            tvalues_check(t, pdw, r.dw, r.nw, tol, "Gorgonia backward filter, ALGO_0 without workspace");
        tbuf_free(py), tbuf_free(pdx), tbuf_free(pdw);
        free(y0), free(dx0), free(dw0);
        tconv_run_free(&r);
        if (!ok) return;
    }
}

/* candle's conv1d (candle-core/src/cuda_backend/cudnn.rs, launch_conv1d, through cudarc's
   create_convnd): cudnnSetConvolutionNdDescriptor with arrayLength 1 (pad, stride, dilation of
   the length only) for 4-D tensors N x C x L x 1, contiguous or with the input's own strides
   (the last stride 1), and a K x C x k x 1 filter; the algorithm the first of
   cudnnGetConvolutionForwardAlgorithm_v7's 8 results (its status must be SUCCESS), its
   workspace queried and allocated. The trailing dim of extent 1 everywhere is taken with pad 0,
   stride 1, dilation 1. */
TEST(compat_conv_candle_1d_descriptor_on_4d_tensors)
{
    static const struct { int pad, stride, dil; bool strided; } cases[] = {{1, 1, 1, false}, {2, 2, 2, true}};
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    for (size_t k = 0; k < TLEN(cases); k++) {
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {11, 1}, .filt = {3, 1},
                              .pad = {cases[k].pad, 0}, .stride = {cases[k].stride, 1},
                              .dil = {cases[k].dil, 1}};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        const int L = rc.in[0], Lo = rc.out[0];
        const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
        double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *want = malloc(sizeof(double) * (size_t)ny);
        /* the strided input: a slice of a wider N x C x (L + 2) tensor */
        const int xs[4] = {rc.c * (L + 2), L + 2, 1, 1};
        float *xf = calloc((size_t)rc.n * (size_t)xs[0], sizeof(float));
        for (int n = 0; n < rc.n; n++)
            for (int c = 0; c < rc.c; c++)
                for (int i = 0; i < L; i++) {
                    long at = cases[k].strided ? (long)n * xs[0] + c * xs[1] + i : ((long)n * rc.c + c) * L + i;
                    xf[at] = (float)x[((long)n * rc.c + c) * L + i];
                    x[((long)n * rc.c + c) * L + i] = xf[at];
                }
        void *px = tbuf_from(xf, sizeof(float) * (size_t)rc.n * (size_t)xs[0]);
        void *pw = tvalues_upload(t, w, nw), *py = tbuf_alloc(sizeof(float) * (size_t)ny);
        ref_conv_fwd(&rc, x, w, want);
        cudnnTensorDescriptor_t xd, yd;
        cudnnFilterDescriptor_t fd;
        cudnnConvolutionDescriptor_t cd;
        tconv_descs_create(&xd, &yd, NULL, &fd, &cd);
        const int pad = cases[k].pad, str = cases[k].stride, dil = cases[k].dil;
        bool ok = (cases[k].strided ? CHECK_OK(cudnnSetTensor4dDescriptorEx(xd, t, rc.n, rc.c, L, 1, xs[0], xs[1], 1, 1))
                                    : CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, t, rc.n, rc.c, L, 1))) &&
                  CHECK_OK(cudnnSetFilter4dDescriptor(fd, t, CUDNN_TENSOR_NCHW, rc.k, rc.c, 3, 1)) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, t, rc.n, rc.k, Lo, 1)) &&
                  CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 1, &pad, &str, &dil, CUDNN_CROSS_CORRELATION, t));
        cudnnConvolutionFwdAlgoPerf_t perf[8];
        int got = 0;
        size_t ws = 0;
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, fd, cd, yd, 8, &got, perf)) &&
             CHECK(got > 0 && perf[0].status == CUDNN_STATUS_SUCCESS) &&
             CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, fd, cd, yd, perf[0].algo, &ws));
        if (ok) {
            void *work = ws ? tbuf_alloc(ws) : NULL;
            const float one = 1, zero = 0;
            if (CHECK_OK(cudnnConvolutionForward(h, &one, xd, px, fd, pw, cd, perf[0].algo, work, ws, &zero, yd, py)))
                tvalues_check(t, py, want, ny, tconv_tolerance(t, t, perf[0].mathType), "candle conv1d");
            tbuf_free(work);
        }
        tconv_descs_destroy(xd, yd, NULL, fd, cd);
        tbuf_free(px), tbuf_free(pw), tbuf_free(py);
        free(x), free(w), free(want), free(xf);
    }
}

/* Flux's batchnorm on CUDA.jl (lib/cudnn/batchnorm.jl): a dense layer's F x N activations
   reshaped to N x F x 1 x 1 for SPATIAL mode, Float32 or Float64; without a cache the saved
   mean and inverse variance are NULL in the training call and again in
   cudnnBatchNormalizationBackward, which then derives the batch statistics from x itself. */
TEST(compat_bn_cudajl_backward_without_saved_statistics)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(types); k++) {
        const cudnnDataType_t t = types[k];
        const int d[4] = {7, 5, 1, 1}, pd[4] = {1, 5, 1, 1};
        struct tview x, p;
        tview_init(&x, t, 4, d, TV_NCHW);
        tview_init(&p, t, 4, pd, TV_NCHW);
        struct ref_bn_shape sh = {d[0], d[1], 1, false};
        const double eps = 1e-5, momentum = 0.1;
        double *xv = tview_random(x.count, -2, 2), *dyv = tview_random(x.count, -1, 1);
        double *g = tview_random(5, 0.5, 1.5), *b = tview_random(5, -1, 1), *rm = tview_fill(5, 0), *rv = tview_fill(5, 1);
        double *mean = malloc(sizeof(double) * 5), *var = malloc(sizeof(double) * 5), *ds = malloc(sizeof(double) * 5);
        double *db = malloc(sizeof(double) * 5), *y = malloc(sizeof(double) * (size_t)x.count);
        double *dx = malloc(sizeof(double) * (size_t)x.count), *dpre = malloc(sizeof(double) * (size_t)x.count);
        void *px = tview_upload(&x, xv), *pdy = tview_upload(&x, dyv), *py = tview_upload(&x, NULL);
        void *pdx = tview_upload(&x, NULL), *pg = tview_upload(&p, g), *pb = tview_upload(&p, b);
        void *prm = tview_upload(&p, rm), *prv = tview_upload(&p, rv), *pdg = tview_upload(&p, NULL);
        void *pdb = tview_upload(&p, NULL);
        ref_bn_stats(&sh, xv, mean, var);
        ref_bn_forward(&sh, xv, NULL, g, b, mean, var, eps, -1, 0, NULL, y);
        ref_bn_backward(&sh, xv, dyv, NULL, -1, 0, g, mean, var, eps, dpre, dx, ds, db);
        struct tscale one, zero;
        const void *a1 = tscale(&one, t, 1), *b0 = tscale(&zero, t, 0);
        if (CHECK_OK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, a1, b0, x.desc, px, x.desc, py,
                                                            p.desc, pg, pb, momentum, prm, prv, eps, NULL, NULL)))
            tview_check(&x, py, y, "Flux batchnorm y");
        if (CHECK_OK(cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, a1, b0, a1, b0, x.desc, px, x.desc, pdy,
                                                     x.desc, pdx, p.desc, pg, pdg, pdb, eps, NULL, NULL))) {
            tview_check(&x, pdx, dx, "dx from x's own statistics");
            tview_check(&p, pdg, ds, "dg");
            tview_check(&p, pdb, db, "db");
        }
        void *xb[] = {px, pdy, py, pdx}, *pbufs[] = {pg, pb, prm, prv, pdg, pdb};
        for (size_t i = 0; i < TLEN(xb); i++) tview_free(&x, xb[i]);
        for (size_t i = 0; i < TLEN(pbufs); i++) tview_free(&p, pbufs[i]);
        double *hv[] = {xv, dyv, g, b, rm, rv, mean, var, ds, db, y, dx, dpre};
        for (size_t i = 0; i < TLEN(hv); i++) free(hv[i]);
        tview_destroy(&x);
        tview_destroy(&p);
    }
}

/* ONNX Runtime's ConvTranspose (onnxruntime/core/providers/cuda/nn/conv_transpose_8.h): the
   transposed convolution as cudnnConvolutionBackwardData from its input (dy's place) into its
   output (dx's place), whose extent carries the ONNX output_padding: (in - 1) * stride - 2 pad +
   k + output_padding, one more than the smallest extent that maps back to `in`; the algorithm
   from cudnnFindConvolutionBackwardDataAlgorithmEx asked for 1 result into the real output;
   then the bias added by cudnnAddTensor (1 x M x 1 x 1, alpha 1, beta 1). */
TEST(compat_conv_onnxruntime_transpose_output_padding)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {0, 0}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {2, 2}, .dil = {1, 1}};
    const int tin[2] = {4, 3}, opad = 1; /* the transposed convolution's input extent */
    for (int i = 0; i < 2; i++) rc.in[i] = (tin[i] - 1) * rc.stride[i] - 2 * rc.pad[i] + rc.filt[i] + opad;
    if (!CHECK(ref_conv_out_dims(&rc)) || !CHECK(rc.out[0] == tin[0] && rc.out[1] == tin[1])) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    const int xd[4] = {rc.n, rc.k, tin[0], tin[1]}, yd[4] = {rc.n, rc.c, rc.in[0], rc.in[1]}, bd[4] = {1, rc.c, 1, 1};
    struct tview x, y, b;
    tview_init(&x, t, 4, xd, TV_NCHW);
    tview_init(&y, t, 4, yd, TV_NCHW);
    tview_init(&b, t, 4, bd, TV_NCHW);
    const long nw = ref_conv_w_count(&rc);
    double *xv = tview_random(x.count, -1, 1), *w = tview_random(nw, -1, 1), *bv = tview_random(rc.c, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)y.count);
    void *px = tview_upload(&x, xv), *pw = tvalues_upload(t, w, nw), *pb = tview_upload(&b, bv);
    void *py = tview_upload(&y, NULL);
    ref_conv_bwd_data(&rc, xv, w, want);
    const int per = rc.in[0] * rc.in[1];
    for (int64_t i = 0; i < y.count; i++) want[i] += bv[(i / per) % rc.c];
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    CHECK_OK(cudnnCreateFilterDescriptor(&fd));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
    const int wd[4] = {rc.k, rc.c, 3, 3}, pad[2] = {1, 1}, str[2] = {2, 2}, dil[2] = {1, 1};
    bool ok = CHECK_OK(cudnnSetFilterNdDescriptor(fd, t, CUDNN_TENSOR_NCHW, 4, wd)) &&
              CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 2, pad, str, dil, CUDNN_CROSS_CORRELATION, t)) &&
              CHECK_OK(cudnnSetConvolutionGroupCount(cd, 1)) && CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
    const size_t search = 1 << 20;
    void *work = tbuf_alloc(search);
    cudnnConvolutionBwdDataAlgoPerf_t perf;
    int got = 0;
    ok = ok && CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, fd, pw, x.desc, px, cd, y.desc, py, 1, &got, &perf,
                                                                   work, search)) &&
         CHECK(got == 1 && perf.status == CUDNN_STATUS_SUCCESS) && CHECK_OK(cudnnSetConvolutionMathType(cd, perf.mathType));
    const float one = 1, zero = 0;
    if (ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, fd, pw, x.desc, px, cd, perf.algo, work, perf.memory, &zero,
                                                    y.desc, py)) &&
        CHECK_OK(cudnnAddTensor(h, &one, b.desc, pb, &one, y.desc, py))) {
        double *gotv = malloc(sizeof(double) * (size_t)y.count);
        tview_download(&y, py, gotv);
        CHECK(tcompare(CUDNN_DATA_DOUBLE, gotv, want, y.count, tconv_tolerance(t, t, perf.mathType),
                       "transposed convolution with output_padding, plus bias"));
        free(gotv);
    }
    tbuf_free(work);
    cudnnDestroyFilterDescriptor(fd);
    cudnnDestroyConvolutionDescriptor(cd);
    tview_free(&x, px), tbuf_free(pw), tview_free(&b, pb), tview_free(&y, py);
    free(xv), free(w), free(bv), free(want);
    tview_destroy(&x);
    tview_destroy(&y);
    tview_destroy(&b);
}

/* TensorFlow's 3-D convolution in channels-last layout (stream_executor/cuda/cuda_dnn.cc,
   CudnnTensorDescriptor and CudnnFilterDescriptor for kBatchYXDepth and kOutputYXInput):
   cudnnSetTensorNdDescriptor for x and y with dims N, C, D, H, W and the strides of the NDHWC
   layout, cudnnSetFilterNdDescriptor(CUDNN_TENSOR_NHWC, 5 dims) for the K x C x T x R x S filter
   stored KTRSC, a 3-D cudnnSetConvolutionNdDescriptor; half data with float compute, and float. */
TEST(compat_conv_tensorflow_3d_channels_last)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(types); k++) {
        const cudnnDataType_t t = types[k];
        struct ref_conv rc = {.nsp = 3, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {4, 5, 3}, .filt = {2, 3, 2},
                              .pad = {1, 1, 0}, .stride = {1, 2, 1}, .dil = {1, 1, 1}};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        struct tview x, y, w;
        tconv_views(&rc, t, TV_NHWC, TV_NHWC, &x, &w, &y);
        double *xv = tview_random(x.count, -1, 1), *wv = tview_random(w.count, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)y.count);
        void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *py = tview_upload(&y, NULL);
        ref_conv_fwd(&rc, xv, wv, want);
        cudnnTensorDescriptor_t xdesc = x.desc, ydesc = y.desc; /* tview_init: cudnnSetTensorNdDescriptor */
        cudnnFilterDescriptor_t fd;
        cudnnConvolutionDescriptor_t cd;
        CHECK_OK(cudnnCreateFilterDescriptor(&fd));
        CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
        bool ok = CHECK_OK(cudnnSetFilterNdDescriptor(fd, t, CUDNN_TENSOR_NHWC, 5, w.dims)) &&
                  CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 3, rc.pad, rc.stride, rc.dil, CUDNN_CROSS_CORRELATION,
                                                           CUDNN_DATA_FLOAT));
        cudnnConvolutionFwdAlgoPerf_t perf[8];
        int got = 0;
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, xdesc, fd, cd, ydesc, 8, &got, perf)) &&
             CHECK(got > 0 && perf[0].status == CUDNN_STATUS_SUCCESS);
        if (ok) {
            void *work = perf[0].memory ? tbuf_alloc(perf[0].memory) : NULL;
            const float one = 1, zero = 0;
            if (CHECK_OK(cudnnConvolutionForward(h, &one, xdesc, px, fd, pw, cd, perf[0].algo, work, perf[0].memory,
                                                 &zero, ydesc, py))) {
                double *gotv = malloc(sizeof(double) * (size_t)y.count);
                tview_download(&y, py, gotv);
                CHECK(tcompare(CUDNN_DATA_DOUBLE, gotv, want, y.count, tconv_tolerance(t, t, perf[0].mathType),
                               "NDHWC 3-D convolution"));
                free(gotv);
            }
            tbuf_free(work);
        }
        cudnnDestroyFilterDescriptor(fd);
        cudnnDestroyConvolutionDescriptor(cd);
        tview_free(&x, px), tview_free(&w, pw), tview_free(&y, py);
        free(xv), free(wv), free(want);
        tview_destroy(&x);
        tview_destroy(&y);
        tview_destroy(&w);
    }
}
