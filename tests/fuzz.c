/* fuzz.c: the tensor, NN and convolution ops called with random descriptors, mostly odd ones (dims of 0 and
   below, huge dims, overlapping and padded strides, every data type and values that are none,
   mismatched shapes, out-of-range modes, windows, paddings and strides), on every backend. No
   expected result is computed: what is checked are the invariants of "bad input never
   crashes": the status is SUCCESS, BAD_PARAM, NOT_SUPPORTED or INVALID_VALUE (a workspace or
   indices buffer smaller than asked for); anything else is a check the library missed; a call
   that fails writes nothing; a call that succeeds writes nothing outside its outputs' spans
   (guard bytes on both sides) and leaves its inputs alone. Random descriptors reach
   combinations nobody wrote a case for; a failure names the iteration, which
   OPENCUDNN_TEST_SEED replays. */
#include "desc_util.h"
#include "fuzz_util.h"

#include <stdlib.h>
#include <string.h>

/* The calls the test makes, one an iteration. */
enum fz_op {
    FZ_ACT_FWD, FZ_ACT_BWD, FZ_SOFTMAX_FWD, FZ_SOFTMAX_BWD, FZ_POOL_FWD, FZ_POOL_BWD, FZ_ADD,
    FZ_OP_TENSOR, FZ_TRANSFORM, FZ_LRN_FWD, FZ_LRN_BWD, FZ_BN_INFERENCE, FZ_SET, FZ_REDUCE,
    FZ_BN_TRAINING, FZ_BN_BACKWARD, FZ_DIVNORM_FWD, FZ_CONV_FWD, FZ_CONV_BWD_DATA, FZ_CONV_BWD_FILTER,
    FZ_DROPOUT_FWD, FZ_ST_SAMPLER_FWD, FZ_ST_GRID_FWD, FZ_DROPOUT_BWD, FZ_DIVNORM_BWD,
    FZ_BN_TRAINING_EX, FZ_BN_BACKWARD_EX, FZ_NORM_INFERENCE, FZ_NORM_TRAINING, FZ_NORM_BACKWARD, FZ_SCALE,
    FZ_OPS
};


/* y, packed row-major with x's type, as the output of pooling x where the pooling descriptor
   gives one (pool non-NULL), else as x reduced over a random set of its dims. */
static void fz_derived_output(struct fz_tensor *y, cudnnPoolingDescriptor_t pool, const struct fz_tensor *x)
{
    cudnnDataType_t t;
    int n, dims[5], strides[5];
    if (!fz_shape(x, &t, &n, dims, strides) || n < 3) return;
    if (pool != NULL) {
        if (cudnnGetPoolingNdForwardOutputDim(pool, x->desc, n, dims) != CUDNN_STATUS_SUCCESS) return;
    } else {
        for (int i = 0; i < n; i++)
            if (trand_int(0, 1)) dims[i] = 1;
    }
    int64_t s = 1;
    for (int i = n - 1; i >= 0; i--) {
        strides[i] = (int)s;
        s *= dims[i] > 0 ? dims[i] : 1;
        if (s > 1 << 28) return;
    }
    cudnnSetTensorNdDescriptor(y->desc, t, n, dims, strides);
}

/* A random convolution and filter for x, and now and then y of their output's shape. */
static void fz_convolution(struct fz_tensor *y, cudnnConvolutionDescriptor_t conv, cudnnFilterDescriptor_t filt,
                           const struct fz_tensor *x)
{
    cudnnDataType_t t;
    int n, dims[5], strides[5];
    int c = fz_shape(x, &t, &n, dims, strides) ? dims[1] : 3;
    cudnnSetFilter4dDescriptor(filt, trand_int(0, 3) ? t : CUDNN_DATA_FLOAT,
                               trand_int(0, 1) ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, fz_int(1, 4),
                               trand_int(0, 3) ? c : fz_dim(), fz_int(1, 3), fz_int(1, 3));
    cudnnSetConvolution2dDescriptor(conv, fz_int(0, 2), fz_int(0, 2), fz_int(1, 3), fz_int(1, 3), fz_int(1, 2),
                                    fz_int(1, 2), (cudnnConvolutionMode_t)fz_mode(2),
                                    trand_int(0, 3) ? CUDNN_DATA_FLOAT : t);
    cudnnSetConvolutionGroupCount(conv, trand_int(0, 3) ? 1 : fz_int(1, 3));
    int on, oc, oh, ow;
    if (trand_int(0, 1) &&
        cudnnGetConvolution2dForwardOutputDim(conv, x->desc, filt, &on, &oc, &oh, &ow) == CUDNN_STATUS_SUCCESS)
        cudnnSetTensor4dDescriptor(y->desc, trand_int(0, 1) ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, t, on, oc, oh, ow);
}

/* A spatial transformer for output y (its dims, now and then others) and the bytes of its grid
   (n h w 2 values of its type; 16 when the descriptor, created afresh, was left unset). */
static size_t fz_spatial(cudnnSpatialTransformerDescriptor_t st, const struct fz_tensor *y)
{
    cudnnDataType_t t;
    int n = 0, dims[5], strides[5];
    if (!fz_shape(y, &t, &n, dims, strides) || n != 4 || trand_int(0, 7) == 0) {
        n = 4;
        for (int i = 0; i < 4; i++) dims[i] = fz_dim();
    }
    if (trand_int(0, 7) == 0) t = CUDNN_DATA_FLOAT;
    if (cudnnSetSpatialTransformerNdDescriptor(st, (cudnnSamplerType_t)fz_mode(1), t, n, dims) != CUDNN_STATUS_SUCCESS)
        return 16;
    return (size_t)dims[0] * dims[2] * dims[3] * 2 * tdtype_size(t);
}


TEST(fuzz_ops_with_random_descriptors)
{
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t act;
    cudnnPoolingDescriptor_t pool;
    cudnnOpTensorDescriptor_t opt;
    cudnnLRNDescriptor_t lrn;
    cudnnReduceTensorDescriptor_t red;
    cudnnConvolutionDescriptor_t conv;
    cudnnFilterDescriptor_t filt;
    void *states;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.5f, trand_u64(), &states);
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&conv));
    CHECK_OK(cudnnCreateFilterDescriptor(&filt));
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&red));
    CHECK_OK(cudnnCreatePoolingDescriptor(&pool));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&opt));
    CHECK_OK(cudnnCreateLRNDescriptor(&lrn));
    int ran = 0;
    for (int it = 0; it < FZ_ITERATIONS(400) && !current_test_failed(); it++) {
        const enum fz_op op = (enum fz_op)trand_int(0, FZ_OPS - 1);
        const int algo = fz_mode(3), mode = fz_mode(2);
        struct fz_tensor x, y, dy, dx, p; /* p: batch norm's per-channel parameters */
        struct fz_tensor ex[7];           /* the buffers a call takes beside these (fz_buffer) */
        memset(ex, 0, sizeof ex);
        fz_tensor_init(&x, NULL);
        fz_tensor_init(&y, &x);
        if (trand_int(0, 3) > 0) {
            cudnnSetPooling2dDescriptor(pool, (cudnnPoolingMode_t)fz_mode(4), (cudnnNanPropagation_t)fz_mode(2),
                                        fz_int(1, 4), fz_int(1, 4), fz_int(0, 3), fz_int(0, 3), fz_int(1, 3),
                                        fz_int(1, 3));
        } else { /* N-d: 2 or 3 spatial dims */
            int window[3], pad[3], stride[3];
            for (int i = 0; i < 3; i++) {
                window[i] = fz_int(1, 4);
                pad[i] = fz_int(0, 3);
                stride[i] = fz_int(1, 3);
            }
            cudnnSetPoolingNdDescriptor(pool, (cudnnPoolingMode_t)fz_mode(4), (cudnnNanPropagation_t)fz_mode(2),
                                        trand_int(2, 3), window, pad, stride);
        }
        if ((op == FZ_POOL_FWD || op == FZ_POOL_BWD || op == FZ_REDUCE) && trand_int(0, 1))
            fz_derived_output(&y, op == FZ_REDUCE ? NULL : pool, &x);
        if (op == FZ_CONV_FWD || op == FZ_CONV_BWD_DATA || op == FZ_CONV_BWD_FILTER) fz_convolution(&y, conv, filt, &x);
        fz_tensor_init(&dy, &y);
        fz_tensor_init(&dx, &x);
        fz_tensor_init(&p, NULL);
        if (trand_int(0, 1)) cudnnDeriveBNTensorDescriptor(p.desc, x.desc, (cudnnBatchNormMode_t)mode);
        bool sized = fz_tensor_alloc(&x);
        sized = fz_tensor_alloc(&y) && sized;
        sized = fz_tensor_alloc(&dy) && sized;
        sized = fz_tensor_alloc(&dx) && sized;
        sized = fz_tensor_alloc(&p) && sized;
        if (sized) {
            ran++;
            struct tscale a, b;
            struct fz_tensor *fwd_in[] = {&x}, *bwd_in[] = {&y, &dy, &x}, *bin_in[] = {&x, &dy};
            cudnnSetActivationDescriptor(act, (cudnnActivationMode_t)fz_mode(7), (cudnnNanPropagation_t)fz_mode(2),
                                         trand_uniform(-1, 3));
            cudnnSetOpTensorDescriptor(opt, (cudnnOpTensorOp_t)fz_mode(6),
                                       trand_int(0, 1) ? CUDNN_DATA_FLOAT : fz_dtype(&x),
                                       (cudnnNanPropagation_t)fz_mode(2));
            cudnnSetLRNDescriptor(lrn, (unsigned)trand_int(0, 17), trand_uniform(0, 1e-3), trand_uniform(0, 1),
                                  trand_uniform(0, 3));
            switch (op) {
            case FZ_ACT_FWD:
                fz_check("activation forward", it,
                         cudnnActivationForward(h, act, fz_scale(&a, &y), x.desc, fz_at(&x), fz_scale(&b, &y), y.desc,
                                                fz_at(&y)),
                         (struct fz_tensor *[]){&y}, 1, fwd_in, 1);
                break;
            case FZ_ACT_BWD:
                fz_check("activation backward", it,
                         cudnnActivationBackward(h, act, fz_scale(&a, &dx), y.desc, fz_at(&y), dy.desc, fz_at(&dy),
                                                 x.desc, fz_at(&x), fz_scale(&b, &dx), dx.desc, fz_at(&dx)),
                         (struct fz_tensor *[]){&dx}, 1, bwd_in, 3);
                break;
            case FZ_SOFTMAX_FWD:
                fz_check("softmax forward", it,
                         cudnnSoftmaxForward(h, (cudnnSoftmaxAlgorithm_t)algo, (cudnnSoftmaxMode_t)mode,
                                             fz_scale(&a, &y), x.desc, fz_at(&x), fz_scale(&b, &y), y.desc, fz_at(&y)),
                         (struct fz_tensor *[]){&y}, 1, fwd_in, 1);
                break;
            case FZ_SOFTMAX_BWD:
                fz_check("softmax backward", it,
                         cudnnSoftmaxBackward(h, (cudnnSoftmaxAlgorithm_t)algo, (cudnnSoftmaxMode_t)mode,
                                              fz_scale(&a, &dx), y.desc, fz_at(&y), dy.desc, fz_at(&dy),
                                              fz_scale(&b, &dx), dx.desc, fz_at(&dx)),
                         (struct fz_tensor *[]){&dx}, 1, bwd_in, 2);
                break;
            case FZ_POOL_FWD:
                fz_check("pooling forward", it,
                         cudnnPoolingForward(h, pool, fz_scale(&a, &y), x.desc, fz_at(&x), fz_scale(&b, &y), y.desc,
                                             fz_at(&y)),
                         (struct fz_tensor *[]){&y}, 1, fwd_in, 1);
                break;
            case FZ_POOL_BWD:
                fz_check("pooling backward", it,
                         cudnnPoolingBackward(h, pool, fz_scale(&a, &dx), y.desc, fz_at(&y), dy.desc, fz_at(&dy),
                                              x.desc, fz_at(&x), fz_scale(&b, &dx), dx.desc, fz_at(&dx)),
                         (struct fz_tensor *[]){&dx}, 1, bwd_in, 3);
                break;
            case FZ_ADD:
                fz_check("add tensor", it,
                         cudnnAddTensor(h, fz_scale(&a, &y), x.desc, fz_at(&x), fz_scale(&b, &y), y.desc, fz_at(&y)),
                         (struct fz_tensor *[]){&y}, 1, fwd_in, 1);
                break;
            case FZ_OP_TENSOR: {
                struct tscale a2;
                fz_check("op tensor", it,
                         cudnnOpTensor(h, opt, fz_scale(&a, &y), x.desc, fz_at(&x), fz_scale(&a2, &y), dy.desc,
                                       fz_at(&dy), fz_scale(&b, &y), y.desc, fz_at(&y)),
                         (struct fz_tensor *[]){&y}, 1, bin_in, 2);
                break;
            }
            case FZ_TRANSFORM:
                fz_check("transform tensor", it,
                         cudnnTransformTensor(h, fz_scale(&a, &y), x.desc, fz_at(&x), fz_scale(&b, &y), y.desc,
                                              fz_at(&y)),
                         (struct fz_tensor *[]){&y}, 1, fwd_in, 1);
                break;
            case FZ_LRN_FWD:
                fz_check("LRN cross-channel forward", it,
                         cudnnLRNCrossChannelForward(h, lrn, (cudnnLRNMode_t)fz_mode(1), fz_scale(&a, &y), x.desc,
                                                     fz_at(&x), fz_scale(&b, &y), y.desc, fz_at(&y)),
                         (struct fz_tensor *[]){&y}, 1, fwd_in, 1);
                break;
            case FZ_LRN_BWD:
                fz_check("LRN cross-channel backward", it,
                         cudnnLRNCrossChannelBackward(h, lrn, (cudnnLRNMode_t)fz_mode(1), fz_scale(&a, &dx), y.desc,
                                                      fz_at(&y), dy.desc, fz_at(&dy), x.desc, fz_at(&x),
                                                      fz_scale(&b, &dx), dx.desc, fz_at(&dx)),
                         (struct fz_tensor *[]){&dx}, 1, bwd_in, 3);
                break;
            case FZ_BN_INFERENCE: {
                static const double eps[] = {1e-5, 1e-3, 0, -1};
                struct fz_tensor *bn_in[] = {&x, &p};
                fz_check("batch-norm inference", it,
                         cudnnBatchNormalizationForwardInference(h, (cudnnBatchNormMode_t)mode, fz_scale(&a, &y),
                                                                 fz_scale(&b, &y), x.desc, fz_at(&x), y.desc,
                                                                 fz_at(&y), p.desc, fz_at(&p), fz_at(&p), fz_at(&p),
                                                                 fz_at(&p), eps[trand_int(0, 3)]),
                         (struct fz_tensor *[]){&y}, 1, bn_in, 2);
                break;
            }
            case FZ_SET:
                fz_check("set tensor", it, cudnnSetTensor(h, y.desc, fz_at(&y), fz_scale(&a, &y)),
                         (struct fz_tensor *[]){&y}, 1, NULL, 0);
                break;
            case FZ_REDUCE: { /* the indices and the workspace of the sizes asked for, now and then smaller */
                struct fz_tensor *indices = &ex[0], *ws = &ex[1];
                size_t isize, wsize;
                cudnnSetReduceTensorDescriptor(red, (cudnnReduceTensorOp_t)fz_mode(9),
                                               trand_int(0, 1) ? CUDNN_DATA_FLOAT : fz_dtype(&x),
                                               (cudnnNanPropagation_t)fz_mode(2),
                                               (cudnnReduceTensorIndices_t)fz_mode(2), (cudnnIndicesType_t)fz_mode(4));
                fz_queried(cudnnGetReductionIndicesSize(h, red, x.desc, y.desc, &isize), &isize);
                fz_queried(cudnnGetReductionWorkspaceSize(h, red, x.desc, y.desc, &wsize), &wsize);
                if (trand_int(0, 3) == 0) isize /= 2;
                if (trand_int(0, 3) == 0) wsize /= 2;
                if (fz_buffer(indices, isize, 0) && fz_buffer(ws, wsize, 0))
                    fz_check("reduce tensor", it,
                             cudnnReduceTensor(h, red, fz_at(indices), isize, fz_at(ws), wsize, fz_scale(&a, &y),
                                               x.desc, fz_at(&x), fz_scale(&b, &y), y.desc, fz_at(&y)),
                             (struct fz_tensor *[]){&y, indices, ws}, 3, fwd_in, 1);
                break;
            }
            case FZ_BN_TRAINING: { /* batch-norm training: running averages (read too), saved statistics */
                /* ex: running mean, variance, saved mean, inverse std */
                static const double factors[] = {1, 0.5, 0, -1};
                if (fz_buffers(ex, 4, p.bytes))
                    fz_check("batch-norm training", it,
                             cudnnBatchNormalizationForwardTraining(
                                 h, (cudnnBatchNormMode_t)mode, fz_scale(&a, &y), fz_scale(&b, &y), x.desc, fz_at(&x),
                                 y.desc, fz_at(&y), p.desc, fz_at(&p), fz_at(&p), factors[trand_int(0, 3)],
                                 fz_at(&ex[0]), fz_at(&ex[1]), 1e-5, fz_at(&ex[2]), fz_at(&ex[3])),
                             (struct fz_tensor *[]){&y, &ex[0], &ex[1], &ex[2], &ex[3]}, 5,
                             (struct fz_tensor *[]){&x, &p}, 2);
                break;
            }
            case FZ_BN_BACKWARD: { /* batch-norm backward, from saved statistics (p's buffer) or none */
                /* ex: dscale, dbias */
                struct tscale a2, b2;
                const bool saved = trand_int(0, 1);
                if (fz_buffers(ex, 2, p.bytes))
                    fz_check("batch-norm backward", it,
                             cudnnBatchNormalizationBackward(
                                 h, (cudnnBatchNormMode_t)mode, fz_scale(&a, &dx), fz_scale(&b, &dx),
                                 fz_scale(&a2, &dx), fz_scale(&b2, &dx), x.desc, fz_at(&x), dy.desc, fz_at(&dy),
                                 dx.desc, fz_at(&dx), p.desc, fz_at(&p), fz_at(&ex[0]), fz_at(&ex[1]), 1e-5,
                                 saved ? fz_at(&p) : NULL, saved ? fz_at(&p) : NULL),
                             (struct fz_tensor *[]){&dx, &ex[0], &ex[1]}, 3, (struct fz_tensor *[]){&x, &dy, &p}, 3);
                break;
            }
            case FZ_DIVNORM_FWD: { /* the means (or none) and two temporaries, of x's size (they have its layout) */
                /* ex: temp, temp2, means */
                if (fz_buffers(ex, 3, x.bytes))
                    fz_check("divisive normalization forward", it,
                             cudnnDivisiveNormalizationForward(h, lrn, CUDNN_DIVNORM_PRECOMPUTED_MEANS,
                                                               fz_scale(&a, &y), x.desc, fz_at(&x),
                                                               trand_int(0, 1) ? fz_at(&ex[2]) : NULL, fz_at(&ex[0]),
                                                               fz_at(&ex[1]), fz_scale(&b, &y), y.desc, fz_at(&y)),
                             (struct fz_tensor *[]){&y, &ex[0], &ex[1]}, 3, (struct fz_tensor *[]){&x, &ex[2]}, 2);
                break;
            }
            case FZ_CONV_FWD:
            case FZ_CONV_BWD_DATA:
            case FZ_CONV_BWD_FILTER: { /* dy in y's buffer (the forward's output shape); w: the filter, or dw */
                struct fz_tensor *w = &ex[0], *ws = &ex[1];
                const int calgo = fz_mode(op == FZ_CONV_FWD ? 8 : op == FZ_CONV_BWD_DATA ? 6 : 7);
                size_t wbytes = 0, wsize = 0;
                fz_queried(cudnnGetFilterSizeInBytes(filt, &wbytes), &wbytes);
                fz_queried(op == FZ_CONV_FWD
                               ? cudnnGetConvolutionForwardWorkspaceSize(h, x.desc, filt, conv, y.desc,
                                                                         (cudnnConvolutionFwdAlgo_t)calgo, &wsize)
                           : op == FZ_CONV_BWD_DATA
                               ? cudnnGetConvolutionBackwardDataWorkspaceSize(
                                     h, filt, y.desc, conv, dx.desc, (cudnnConvolutionBwdDataAlgo_t)calgo, &wsize)
                               : cudnnGetConvolutionBackwardFilterWorkspaceSize(
                                     h, x.desc, y.desc, conv, filt, (cudnnConvolutionBwdFilterAlgo_t)calgo, &wsize),
                           &wsize);
                if (!fz_buffer(w, wbytes, 0) || !fz_buffer(ws, wsize, 0)) break;
                if (op == FZ_CONV_FWD)
                    fz_check("convolution forward", it,
                             cudnnConvolutionForward(h, fz_scale(&a, &y), x.desc, fz_at(&x), filt, fz_at(w), conv,
                                                     (cudnnConvolutionFwdAlgo_t)calgo, fz_at(ws), wsize,
                                                     fz_scale(&b, &y), y.desc, fz_at(&y)),
                             (struct fz_tensor *[]){&y, ws}, 2, (struct fz_tensor *[]){&x, w}, 2);
                else if (op == FZ_CONV_BWD_DATA)
                    fz_check("convolution backward data", it,
                             cudnnConvolutionBackwardData(h, fz_scale(&a, &dx), filt, fz_at(w), y.desc, fz_at(&y),
                                                          conv, (cudnnConvolutionBwdDataAlgo_t)calgo, fz_at(ws), wsize,
                                                          fz_scale(&b, &dx), dx.desc, fz_at(&dx)),
                             (struct fz_tensor *[]){&dx, ws}, 2, (struct fz_tensor *[]){&y, w}, 2);
                else
                    fz_check("convolution backward filter", it,
                             cudnnConvolutionBackwardFilter(h, fz_scale(&a, &y), x.desc, fz_at(&x), y.desc, fz_at(&y),
                                                            conv, (cudnnConvolutionBwdFilterAlgo_t)calgo, fz_at(ws),
                                                            wsize, fz_scale(&b, &y), filt, fz_at(w)),
                             (struct fz_tensor *[]){w, ws}, 2, (struct fz_tensor *[]){&x, &y}, 2);
                break;
            }
            case FZ_DROPOUT_FWD: { /* dropout forward: the reserve space of the size asked for, now and then smaller */
                struct fz_tensor *reserve = &ex[0];
                size_t rsize = 0;
                fz_queried(cudnnDropoutGetReserveSpaceSize(x.desc, &rsize), &rsize);
                if (trand_int(0, 5) == 0) rsize /= 2;
                if (fz_buffer(reserve, rsize, 0))
                    fz_check("dropout forward", it,
                             cudnnDropoutForward(h, drop, x.desc, fz_at(&x), y.desc, fz_at(&y), fz_at(reserve), rsize),
                             (struct fz_tensor *[]){&y, reserve}, 2, fwd_in, 1);
                break;
            }
            case FZ_ST_SAMPLER_FWD:   /* spatial transformer sampler forward, the grid an input */
            case FZ_ST_GRID_FWD: { /* its grid generator, the grid the output (theta: n 2 x 3 values) */
                struct fz_tensor *grid = &ex[0], *theta = &ex[1];
                cudnnSpatialTransformerDescriptor_t st;
                CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
                const size_t gbytes = fz_spatial(st, &y);
                if (fz_buffer(grid, gbytes, 0) && fz_buffer(theta, gbytes / 2 + 64, 0)) {
                    if (op == FZ_ST_SAMPLER_FWD)
                        fz_check("spatial transformer sampler forward", it,
                                 cudnnSpatialTfSamplerForward(h, st, fz_scale(&a, &y), x.desc, fz_at(&x), fz_at(grid),
                                                              fz_scale(&b, &y), y.desc, fz_at(&y)),
                                 (struct fz_tensor *[]){&y}, 1, (struct fz_tensor *[]){&x, grid}, 2);
                    else
                        fz_check("spatial transformer grid generator forward", it,
                                 cudnnSpatialTfGridGeneratorForward(h, st, fz_at(theta), fz_at(grid)),
                                 (struct fz_tensor *[]){grid}, 1, (struct fz_tensor *[]){theta}, 1);
                }
                cudnnDestroySpatialTransformerDescriptor(st);
                break;
            }
            case FZ_DROPOUT_BWD: { /* dropout backward: the reserve space of dy's size, from no forward call */
                struct fz_tensor *reserve = &ex[0];
                size_t rsize = 0;
                fz_queried(cudnnDropoutGetReserveSpaceSize(dy.desc, &rsize), &rsize);
                if (fz_buffer(reserve, rsize, 0))
                    fz_check("dropout backward", it,
                             cudnnDropoutBackward(h, drop, dy.desc, fz_at(&dy), dx.desc, fz_at(&dx), fz_at(reserve),
                                                  rsize),
                             (struct fz_tensor *[]){&dx}, 1, (struct fz_tensor *[]){&dy, reserve}, 2);
                break;
            }
            case FZ_DIVNORM_BWD: { /* means, dy and temporaries of x's size, dmeans of dx's */
                /* ex: means, dy, temp, temp2, dmeans */
                if (fz_buffers(ex, 4, x.bytes) && fz_buffer(&ex[4], dx.bytes, 0))
                    fz_check("divisive normalization backward", it,
                             cudnnDivisiveNormalizationBackward(
                                 h, lrn, (cudnnDivNormMode_t)fz_mode(1), fz_scale(&a, &dx), x.desc, fz_at(&x),
                                 trand_int(0, 1) ? fz_at(&ex[0]) : NULL, fz_at(&ex[1]), fz_at(&ex[2]), fz_at(&ex[3]),
                                 fz_scale(&b, &dx), dx.desc, fz_at(&dx), fz_at(&ex[4])),
                             (struct fz_tensor *[]){&dx, &ex[2], &ex[3], &ex[4]}, 4,
                             (struct fz_tensor *[]){&x, &ex[0], &ex[1]}, 3);
                break;
            }
            case FZ_BN_TRAINING_EX: { /* z in dy's buffer; workspace and reserve space as asked */
                /* ex: running mean, variance, saved mean, inverse std; workspace, reserve */
                const cudnnBatchNormOps_t ops = (cudnnBatchNormOps_t)fz_mode(3);
                size_t wsize = 0, rsize = 0;
                fz_queried(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
                               h, (cudnnBatchNormMode_t)mode, ops, x.desc, dy.desc, y.desc, p.desc, act, &wsize),
                           &wsize);
                fz_queried(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, (cudnnBatchNormMode_t)mode, ops, act,
                                                                                x.desc, &rsize),
                           &rsize);
                if (fz_buffers(ex, 4, p.bytes) && fz_buffer(&ex[4], wsize, 0) && fz_buffer(&ex[5], rsize, 0))
                    fz_check("batch-norm training Ex", it,
                             cudnnBatchNormalizationForwardTrainingEx(
                                 h, (cudnnBatchNormMode_t)mode, ops, fz_scale(&a, &y), fz_scale(&b, &y), x.desc,
                                 fz_at(&x), dy.desc, fz_at(&dy), y.desc, fz_at(&y), p.desc, fz_at(&p), fz_at(&p), 0.5,
                                 fz_at(&ex[0]), fz_at(&ex[1]), 1e-5, fz_at(&ex[2]), fz_at(&ex[3]), act, fz_at(&ex[4]),
                                 wsize, fz_at(&ex[5]), rsize),
                             (struct fz_tensor *[]){&y, &ex[0], &ex[1], &ex[2], &ex[3], &ex[4], &ex[5]}, 7,
                             (struct fz_tensor *[]){&x, &dy, &p}, 3);
                break;
            }
            case FZ_BN_BACKWARD_EX: { /* dz of dy's layout; the reserve space an input; workspace as asked */
                /* ex: dz, dscale, dbias, workspace, reserve */
                const cudnnBatchNormOps_t ops = (cudnnBatchNormOps_t)fz_mode(3);
                struct tscale a2, b2;
                size_t wsize = 0, rsize = 0;
                const bool saved = trand_int(0, 1);
                fz_queried(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, (cudnnBatchNormMode_t)mode, ops, x.desc,
                                                                             y.desc, dy.desc, dy.desc, dx.desc, p.desc,
                                                                             act, &wsize),
                           &wsize);
                fz_queried(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, (cudnnBatchNormMode_t)mode, ops, act,
                                                                                x.desc, &rsize),
                           &rsize);
                if (fz_buffer(&ex[0], dy.bytes, 0) && fz_buffers(&ex[1], 2, p.bytes) && fz_buffer(&ex[3], wsize, 0) &&
                    fz_buffer(&ex[4], rsize, 0))
                    fz_check("batch-norm backward Ex", it,
                             cudnnBatchNormalizationBackwardEx(
                                 h, (cudnnBatchNormMode_t)mode, ops, fz_scale(&a, &dx), fz_scale(&b, &dx),
                                 fz_scale(&a2, &dx), fz_scale(&b2, &dx), x.desc, fz_at(&x), y.desc, fz_at(&y), dy.desc,
                                 fz_at(&dy), dy.desc, fz_at(&ex[0]), dx.desc, fz_at(&dx), p.desc, fz_at(&p), fz_at(&p),
                                 fz_at(&ex[1]), fz_at(&ex[2]), 1e-5, saved ? fz_at(&p) : NULL, saved ? fz_at(&p) : NULL,
                                 act, fz_at(&ex[3]), wsize, fz_at(&ex[4]), rsize),
                             (struct fz_tensor *[]){&dx, &ex[0], &ex[1], &ex[2], &ex[3]}, 5,
                             (struct fz_tensor *[]){&x, &y, &dy, &p, &ex[4]}, 5);
                break;
            }
            case FZ_NORM_INFERENCE: /* the 8.x normalization inference, every parameter from p's buffer, z in dy's */
                fz_check("normalization inference", it,
                         cudnnNormalizationForwardInference(
                             h, (cudnnNormMode_t)fz_mode(2), (cudnnNormOps_t)fz_mode(3), (cudnnNormAlgo_t)fz_mode(2),
                             fz_scale(&a, &y), fz_scale(&b, &y), x.desc, fz_at(&x), p.desc, fz_at(&p), fz_at(&p),
                             p.desc, fz_at(&p), fz_at(&p), dy.desc, fz_at(&dy), act, y.desc, fz_at(&y), 1e-5,
                             fz_int(1, 1)),
                         (struct fz_tensor *[]){&y}, 1, (struct fz_tensor *[]){&x, &p, &dy}, 3);
                break;
            case FZ_NORM_TRAINING:
            case FZ_NORM_BACKWARD: { /* the 8.x API: parameters and statistics of p's shape, z and dz of dy's */
                /* ex: running mean, variance, saved mean, inverse std; dz; workspace; reserve */
                const cudnnNormMode_t nm = (cudnnNormMode_t)fz_mode(2);
                const cudnnNormOps_t ops = (cudnnNormOps_t)fz_mode(3);
                const cudnnNormAlgo_t na = (cudnnNormAlgo_t)fz_mode(2);
                const int groups = fz_int(1, 1);
                struct tscale a2, b2;
                size_t wsize = 0, rsize = 0;
                fz_queried(op == FZ_NORM_TRAINING
                               ? cudnnGetNormalizationForwardTrainingWorkspaceSize(h, nm, ops, na, x.desc, dy.desc,
                                                                                   y.desc, p.desc, act, p.desc, &wsize,
                                                                                   groups)
                               : cudnnGetNormalizationBackwardWorkspaceSize(h, nm, ops, na, x.desc, y.desc, dy.desc,
                                                                            dy.desc, dx.desc, p.desc, act, p.desc,
                                                                            &wsize, groups),
                           &wsize);
                fz_queried(cudnnGetNormalizationTrainingReserveSpaceSize(h, nm, ops, na, act, x.desc, &rsize, groups),
                           &rsize);
                const bool ok = fz_buffers(ex, 4, p.bytes) && fz_buffer(&ex[4], dy.bytes, 0) &&
                                fz_buffer(&ex[5], wsize, 0) && fz_buffer(&ex[6], rsize, 0);
                if (ok && op == FZ_NORM_TRAINING)
                    fz_check("normalization training", it,
                             cudnnNormalizationForwardTraining(
                                 h, nm, ops, na, fz_scale(&a, &y), fz_scale(&b, &y), x.desc, fz_at(&x), p.desc,
                                 fz_at(&p), fz_at(&p), 0.5, p.desc, fz_at(&ex[0]), fz_at(&ex[1]), 1e-5, fz_at(&ex[2]),
                                 fz_at(&ex[3]), act, dy.desc, fz_at(&dy), y.desc, fz_at(&y), fz_at(&ex[5]), wsize,
                                 fz_at(&ex[6]), rsize, groups),
                             (struct fz_tensor *[]){&y, &ex[0], &ex[1], &ex[2], &ex[3], &ex[5], &ex[6]}, 7,
                             (struct fz_tensor *[]){&x, &p, &dy}, 3);
                else if (ok)
                    fz_check("normalization backward", it,
                             cudnnNormalizationBackward(
                                 h, nm, ops, na, fz_scale(&a, &dx), fz_scale(&b, &dx), fz_scale(&a2, &dx),
                                 fz_scale(&b2, &dx), x.desc, fz_at(&x), y.desc, fz_at(&y), dy.desc, fz_at(&dy), dy.desc,
                                 fz_at(&ex[4]), dx.desc, fz_at(&dx), p.desc, fz_at(&p), fz_at(&p), fz_at(&ex[0]),
                                 fz_at(&ex[1]), 1e-5, p.desc, trand_int(0, 1) ? fz_at(&p) : NULL, fz_at(&p), act,
                                 fz_at(&ex[5]), wsize, fz_at(&ex[6]), rsize, groups),
                             (struct fz_tensor *[]){&dx, &ex[0], &ex[1], &ex[4], &ex[5]}, 5,
                             (struct fz_tensor *[]){&x, &y, &dy, &p, &ex[6]}, 5);
                break;
            }
            case FZ_SCALE:
            case FZ_OPS:
                fz_check("scale tensor", it, cudnnScaleTensor(h, y.desc, fz_at(&y), fz_scale(&a, &y)),
                         (struct fz_tensor *[]){&y}, 1, NULL, 0);
                break;
            }
        }
        fz_tensor_free(&x);
        fz_tensor_free(&y);
        fz_tensor_free(&dy);
        fz_tensor_free(&dx);
        fz_tensor_free(&p);
        for (int i = 0; i < (int)TLEN(ex); i++) fz_tensor_free(&ex[i]);
    }
#ifndef FUZZ_HARNESS
    CHECK(current_test_failed() || ran > FZ_ITERATIONS(400) / 2); /* most iterations had tensors small enough to run */
#else
    (void)ran;
#endif
    cudnnDestroyActivationDescriptor(act);
    cudnnDestroyPoolingDescriptor(pool);
    cudnnDestroyOpTensorDescriptor(opt);
    cudnnDestroyLRNDescriptor(lrn);
    cudnnDestroyReduceTensorDescriptor(red);
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(filt);
    tdropout_free(drop, states);
}
