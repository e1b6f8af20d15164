/* conv_api.c: the convolution API around the numbers: descriptors and output dims, bad inputs
   (the documented status, nothing written), the algorithm queries (heuristic, Find, FindEx,
   workspace), backward bias, Im2Col, filter reordering and the fused convolution + bias +
   activation forward. */
#include "conv_harness.h"
#include "conv_reach.h"

#include <stdlib.h>
#include <string.h>

/* ---- descriptors --------------------------------------------------------------------------------- */

TEST_ONCE(conv_descriptor_set_get_and_defaults)
{
    cudnnConvolutionDescriptor_t c;
    CHECK_STATUS(cudnnCreateConvolutionDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(cudnnCreateConvolutionDescriptor(&c))) return;
    int groups = 0;
    cudnnMathType_t math = CUDNN_FMA_MATH;
    cudnnReorderType_t reorder = CUDNN_NO_REORDER;
    CHECK_OK(cudnnGetConvolutionGroupCount(c, &groups));
    CHECK(groups == 1);
    CHECK_OK(cudnnGetConvolutionMathType(c, &math));
    CHECK(math == CUDNN_DEFAULT_MATH);
    CHECK_OK(cudnnGetConvolutionReorderType(c, &reorder));
    CHECK(reorder == CUDNN_DEFAULT_REORDER);
    /* cudnnSetConvolution2dDescriptor: negative padding, stride or dilation <= 0, a bad mode */
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(c, -1, 0, 1, 1, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(c, 0, 0, 0, 1, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 0, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 1, (cudnnConvolutionMode_t)7, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(NULL, 0, 0, 1, 1, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    int v[8];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t ct;
    /* never set: Get refuses */
    CHECK_STATUS(cudnnGetConvolution2dDescriptor(c, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &mode, &ct), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolution2dDescriptor(c, 0, 2, 3, 4, 5, 6, CUDNN_CONVOLUTION, CUDNN_DATA_HALF));
    CHECK_OK(cudnnGetConvolution2dDescriptor(c, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &mode, &ct));
    CHECK(v[0] == 0 && v[1] == 2 && v[2] == 3 && v[3] == 4 && v[4] == 5 && v[5] == 6);
    CHECK(mode == CUDNN_CONVOLUTION && ct == CUDNN_DATA_HALF);
    int pad[3] = {1, 2, 3}, stride[3] = {1, 1, 2}, dil[3] = {2, 1, 1}, len = 0, gp[3], gs[3], gd[3];
    CHECK_OK(cudnnSetConvolutionNdDescriptor(c, 3, pad, stride, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_DOUBLE));
    CHECK_OK(cudnnGetConvolutionNdDescriptor(c, 3, &len, gp, gs, gd, &mode, &ct));
    CHECK(len == 3 && gp[2] == 3 && gs[2] == 2 && gd[0] == 2 && mode == CUDNN_CROSS_CORRELATION && ct == CUDNN_DATA_DOUBLE);
    /* a 3-d descriptor has no 2-d view */
    CHECK_STATUS(cudnnGetConvolution2dDescriptor(c, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &mode, &ct), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolutionNdDescriptor(c, 0, pad, stride, dil, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolutionNdDescriptor(c, 3, pad, stride, dil, CUDNN_CONVOLUTION, CUDNN_DATA_INT8), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolutionGroupCount(c, 0), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolutionGroupCount(c, 4));
    CHECK_OK(cudnnGetConvolutionGroupCount(c, &groups));
    CHECK(groups == 4);
    CHECK_STATUS(cudnnSetConvolutionMathType(c, (cudnnMathType_t)9), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolutionMathType(c, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
    CHECK_OK(cudnnGetConvolutionMathType(c, &math));
    CHECK(math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
    CHECK_STATUS(cudnnSetConvolutionReorderType(c, (cudnnReorderType_t)5), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolutionReorderType(c, CUDNN_NO_REORDER));
    CHECK_OK(cudnnGetConvolutionReorderType(c, &reorder));
    CHECK(reorder == CUDNN_NO_REORDER);
    CHECK_STATUS(cudnnGetConvolutionReorderType(c, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyConvolutionDescriptor(c));
    CHECK_OK(cudnnDestroyConvolutionDescriptor(NULL));
    CHECK_STATUS(cudnnSetConvolutionGroupCount(c, 1), CUDNN_STATUS_BAD_PARAM); /* destroyed */
}

TEST_ONCE(conv_forward_output_dims)
{
    struct tview x;
    struct tfilter w;
    cudnnConvolutionDescriptor_t c;
    int xd[4] = {2, 6, 11, 8}, wd[4] = {5, 3, 3, 2};
    tview_init(&x, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
    if (!make_filter(&w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, wd)) return;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&c));
    CHECK_OK(cudnnSetConvolution2dDescriptor(c, 1, 0, 2, 3, 2, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    int n, k, h, wo;
    /* 6 channels = 3 per group x 2 groups: a mismatch without the group count */
    CHECK_STATUS(cudnnGetConvolution2dForwardOutputDim(c, x.desc, w.desc, &n, &k, &h, &wo), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolutionGroupCount(c, 2));
    CHECK_OK(cudnnGetConvolution2dForwardOutputDim(c, x.desc, w.desc, &n, &k, &h, &wo));
    /* 1 + (11 + 2 - 5) / 2 = 5 and 1 + (8 - 2) / 3 = 3 */
    CHECK(n == 2 && k == 5 && h == 5 && wo == 3);
    int out[4];
    CHECK_OK(cudnnGetConvolutionNdForwardOutputDim(c, x.desc, w.desc, 4, out));
    CHECK(out[0] == 2 && out[1] == 5 && out[2] == 5 && out[3] == 3);
    CHECK_STATUS(cudnnGetConvolutionNdForwardOutputDim(c, x.desc, w.desc, 5, out), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetConvolution2dForwardOutputDim(c, x.desc, w.desc, NULL, &k, &h, &wo), CUDNN_STATUS_BAD_PARAM);
    /* a dilated filter larger than the padded input */
    CHECK_OK(cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 6, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_STATUS(cudnnGetConvolution2dForwardOutputDim(c, x.desc, w.desc, &n, &k, &h, &wo), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyConvolutionDescriptor(c);
    tview_destroy(&x);
    free_filter(&w);
}

/* ---- bad inputs: the documented status, and nothing written ------------------------------------- */

TEST(conv_bad_inputs_exact_status_nothing_written)
{
    cudnnHandle_t h = test_handle();
    struct problem p;
    if (!make_problem(&p, &shapes[0], &float_configs[0], 0)) return; /* n2 c4 k6 5x5, 3x3 pad 1 */
    void *x = patterned(tview_bytes(&p.x)), *w = patterned(tview_bytes(&p.w.v)), *y = patterned(tview_bytes(&p.y));
    float one = 1, zero = 0;
    size_t ws_need = 0;
    CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, p.x.desc, p.w.desc, p.conv, p.y.desc,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &ws_need));
    void *ws = tbuf_alloc(ws_need);
#define FWD_CALL(algo, wsp, wsb, xd, wd, cd, yd)                                                \
    cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, wsp, wsb, &zero, yd, y)
    /* a workspace smaller than the algorithm needs: BAD_PARAM (the host's precomputed-index GEMM
       needs one; the CUDA reference kernel does not) */
    if (ws_need > 0) {
        CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, ws, ws_need - 1, p.x.desc, p.w.desc, p.conv,
                              p.y.desc),
                     CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, NULL, ws_need, p.x.desc, p.w.desc, p.conv,
                              p.y.desc),
                     CUDNN_STATUS_BAD_PARAM);
    } else {
        CHECK(test_backend[0] == 'c');
    }
    /* an algorithm whose documented restrictions exclude the problem: WINOGRAD_NONFUSED on 3x3
       with stride 2, FFT with dilation: NOT_SUPPORTED; an invalid enum: BAD_PARAM */
    cudnnConvolutionDescriptor_t strided;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&strided));
    CHECK_OK(cudnnSetConvolution2dDescriptor(strided, 1, 1, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    struct tview y3;
    int y3d[4] = {2, 6, 3, 3};
    tview_init(&y3, CUDNN_DATA_FLOAT, 4, y3d, TV_NCHW);
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, ws, ws_need, p.x.desc, p.w.desc, strided, y3.desc),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(FWD_CALL((cudnnConvolutionFwdAlgo_t)8, ws, ws_need, p.x.desc, p.w.desc, p.conv, p.y.desc), CUDNN_STATUS_BAD_PARAM);
    /* the output dims disagree with the formula: NOT_SUPPORTED for the forward */
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, p.w.desc, strided, p.y.desc),
                 CUDNN_STATUS_NOT_SUPPORTED);
    /* mismatched channels: x has 4, the filter 3 x 1 group */
    struct tfilter w3;
    int w3d[4] = {6, 3, 3, 3};
    make_filter(&w3, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, w3d);
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, w3.desc, p.conv, p.y.desc),
                 CUDNN_STATUS_BAD_PARAM);
    /* mismatched types: a double filter */
    struct tfilter wd;
    int wdd[4] = {6, 4, 3, 3};
    make_filter(&wd, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 4, wdd);
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, wd.desc, p.conv, p.y.desc),
                 CUDNN_STATUS_BAD_PARAM);
    /* float data with a double compute type: no such configuration */
    cudnnConvolutionDescriptor_t dbl;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&dbl));
    CHECK_OK(cudnnSetConvolution2dDescriptor(dbl, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_DOUBLE));
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, p.w.desc, dbl, p.y.desc),
                 CUDNN_STATUS_NOT_SUPPORTED);
    /* NULL data, NULL scaling factors */
    CHECK_STATUS(cudnnConvolutionForward(h, &one, p.x.desc, NULL, p.w.desc, w, p.conv, 0, NULL, 0, &zero, p.y.desc, y),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionForward(h, NULL, p.x.desc, x, p.w.desc, w, p.conv, 0, NULL, 0, &zero, p.y.desc, y),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionForward(NULL, &one, p.x.desc, x, p.w.desc, w, p.conv, 0, NULL, 0, &zero, p.y.desc, y),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(untouched(y, tview_bytes(&p.y)));
    /* the data gradient: K not a multiple of the group count is NOT_SUPPORTED there (BAD_PARAM
       forward), dy dims off the formula are BAD_PARAM */
    cudnnConvolutionDescriptor_t g4;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&g4));
    CHECK_OK(cudnnSetConvolution2dDescriptor(g4, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionGroupCount(g4, 4));
    struct tfilter w1;
    int w1d[4] = {6, 1, 3, 3};
    make_filter(&w1, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, w1d);
    CHECK_STATUS(cudnnConvolutionBackwardData(h, &one, w1.desc, w, p.y.desc, y, g4, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0,
                                              &zero, p.x.desc, x),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, w1.desc, g4, p.y.desc),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionBackwardData(h, &one, p.w.desc, w, y3.desc, y, p.conv, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL,
                                              0, &zero, p.x.desc, x),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionBackwardFilter(h, &one, p.x.desc, x, y3.desc, y, p.conv, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
                                                NULL, 0, &zero, p.w.desc, w),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionBackwardFilter(h, &one, p.x.desc, x, p.y.desc, y, p.conv,
                                                CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, NULL, 0, &zero, p.w.desc, w),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK(untouched(x, tview_bytes(&p.x)));
    CHECK(untouched(w, tview_bytes(&p.w.v)));
    CHECK(untouched(y, tview_bytes(&p.y)));
    /* int8 data with an NCHW filter: the int8 configurations need NHWC (wrong filter layout) */
    struct tview xi, yi;
    struct tfilter wi;
    int xid[4] = {1, 4, 5, 5}, yid[4] = {1, 4, 5, 5}, wid[4] = {4, 4, 3, 3};
    tview_init(&xi, CUDNN_DATA_INT8, 4, xid, TV_NHWC);
    tview_init(&yi, CUDNN_DATA_INT8, 4, yid, TV_NHWC);
    make_filter(&wi, CUDNN_DATA_INT8, CUDNN_TENSOR_NCHW, 4, wid);
    cudnnConvolutionDescriptor_t ci;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&ci));
    CHECK_OK(cudnnSetConvolution2dDescriptor(ci, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_INT32));
    CHECK_STATUS(cudnnConvolutionForward(h, &one, xi.desc, x, wi.desc, w, ci, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                         &zero, yi.desc, y),
                 CUDNN_STATUS_NOT_SUPPORTED);
    /* int8 data has no backward configuration */
    CHECK_STATUS(cudnnConvolutionBackwardData(h, &one, wi.desc, w, yi.desc, y, ci, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0,
                                              &zero, xi.desc, x),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK(untouched(x, tview_bytes(&p.x)));
    CHECK(untouched(y, tview_bytes(&p.y)));
#undef FWD_CALL
    tview_destroy(&y3), tview_destroy(&xi), tview_destroy(&yi);
    free_filter(&w3), free_filter(&wd), free_filter(&w1), free_filter(&wi);
    cudnnDestroyConvolutionDescriptor(strided), cudnnDestroyConvolutionDescriptor(dbl);
    cudnnDestroyConvolutionDescriptor(g4), cudnnDestroyConvolutionDescriptor(ci);
    tbuf_free(x), tbuf_free(w), tbuf_free(y), tbuf_free(ws);
    free_problem(&p);
}

/* ---- algorithm queries ---------------------------------------------------------------------------- */

static void check_perf_list(const struct perf *perf, int n, int requested, enum dir d, bool timed)
{
    int count = algo_count(d);
    CHECK(n >= 1 && n <= requested && n <= count);
    bool seen[16] = {false}, failing = false;
    for (int i = 0; i < n; i++) {
        CHECK(perf[i].algo >= 0 && perf[i].algo < count && !seen[perf[i].algo]);
        seen[perf[i].algo] = true;
        if (perf[i].status != CUDNN_STATUS_SUCCESS) failing = true;
        else CHECK(!failing); /* runnable algorithms come first */
        if (perf[i].status == CUDNN_STATUS_SUCCESS && timed) {
            CHECK(perf[i].time >= 0);
            if (i > 0 && perf[i - 1].status == CUDNN_STATUS_SUCCESS) CHECK(perf[i - 1].time <= perf[i].time);
        }
        CHECK(perf[i].determinism == CUDNN_DETERMINISTIC || perf[i].determinism == CUDNN_NON_DETERMINISTIC);
    }
}

TEST(conv_algorithm_queries)
{
    cudnnHandle_t h = test_handle();
    int count = 0;
    CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
    CHECK(count == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
    CHECK(count == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
    CHECK(count == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
    CHECK_STATUS(cudnnGetConvolutionForwardAlgorithmMaxCount(h, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetConvolutionForwardAlgorithmMaxCount(NULL, &count), CUDNN_STATUS_BAD_PARAM);
    struct problem p;
    if (!make_problem(&p, &shapes[0], &float_configs[0], 0)) return;
    for (int d = FWD; d <= BWD_FILTER; d++) {
        struct perf perf[16];
        int n = heuristic(&p, d, 3, perf);
        check_perf_list(perf, n, 3, d, false);
        n = heuristic(&p, d, 16, perf);
        check_perf_list(perf, n, 16, d, false);
        CHECK(n == algo_count(d));
        for (int i = 0; i < n; i++) {
            size_t bytes = 0;
            cudnnStatus_t s = workspace_size(&p, d, perf[i].algo, &bytes);
            CHECK(s == perf[i].status);
            if (s == CUDNN_STATUS_SUCCESS) CHECK(bytes == perf[i].memory);
            CHECK(perf[i].math == CUDNN_DEFAULT_MATH || test_backend[0] == 'c');
        }
    }
    /* CUDNN_CONV_WSCAP_DBG=0 (MiB): no algorithm may ask for a workspace */
    ocd_setenv("CUDNN_CONV_WSCAP_DBG", "0");
    for (int d = FWD; d <= BWD_FILTER; d++) {
        struct perf capped[16];
        int n = heuristic(&p, d, 16, capped);
        for (int i = 0; i < n; i++) CHECK(capped[i].status != CUDNN_STATUS_SUCCESS || capped[i].memory == 0);
    }
    ocd_unsetenv("CUDNN_CONV_WSCAP_DBG");
    /* Find: timed, sorted, each runnable one really runs; the result is cached per problem */
    cudnnConvolutionFwdAlgoPerf_t fr[16], fr2[16];
    int n = 0, n2 = 0;
    CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, p.x.desc, p.w.desc, p.conv, p.y.desc, 16, &n, fr));
    struct perf perf[16];
    COPY_PERF(perf, fr, n);
    check_perf_list(perf, n, 16, FWD, true);
    CHECK(fr[0].status == CUDNN_STATUS_SUCCESS);
    CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, p.x.desc, p.w.desc, p.conv, p.y.desc, 16, &n2, fr2));
    CHECK(n2 == n && memcmp(fr, fr2, sizeof fr[0] * (size_t)n) == 0);
    cudnnConvolutionBwdDataAlgoPerf_t dr[16];
    CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, p.w.desc, p.y.desc, p.conv, p.x.desc, 2, &n, dr));
    CHECK(n == 2 && dr[0].status == CUDNN_STATUS_SUCCESS);
    cudnnConvolutionBwdFilterAlgoPerf_t wr[16];
    CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, p.x.desc, p.y.desc, p.conv, p.w.desc, 16, &n, wr));
    COPY_PERF(perf, wr, n);
    check_perf_list(perf, n, 16, BWD_FILTER, true);
    /* FindEx without a workspace: algorithms needing one report ALLOC_FAILED, after the others */
    void *x = tbuf_alloc(tview_bytes(&p.x)), *w = tbuf_alloc(tview_bytes(&p.w.v)), *y = tbuf_alloc(tview_bytes(&p.y));
    void *zx = calloc(tview_bytes(&p.x), 1), *zw = calloc(tview_bytes(&p.w.v), 1);
    tbuf_upload(x, zx, tview_bytes(&p.x)), tbuf_upload(w, zw, tview_bytes(&p.w.v));
    CHECK_OK(cudnnFindConvolutionForwardAlgorithmEx(h, p.x.desc, x, p.w.desc, w, p.conv, p.y.desc, y, 16, &n, fr, NULL, 0));
    bool saw_alloc = false;
    for (int i = 0; i < n; i++) {
        if (fr[i].status == CUDNN_STATUS_SUCCESS) CHECK(fr[i].memory == 0 && !saw_alloc);
        saw_alloc |= fr[i].status == CUDNN_STATUS_ALLOC_FAILED;
    }
    CHECK(saw_alloc || test_backend[0] == 'c'); /* the host GEMM algorithms need a workspace */
    CHECK_STATUS(cudnnFindConvolutionForwardAlgorithmEx(h, p.x.desc, NULL, p.w.desc, w, p.conv, p.y.desc, y, 16, &n, fr, NULL, 0),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnFindConvolutionForwardAlgorithm(h, p.x.desc, p.w.desc, p.conv, p.y.desc, 0, &n, fr), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetConvolutionForwardAlgorithm_v7(h, p.x.desc, p.w.desc, p.conv, p.y.desc, 4, NULL, fr),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.x.desc, p.y.desc, p.conv, p.w.desc,
                                                                CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    free(zx), free(zw);
    tbuf_free(x), tbuf_free(w), tbuf_free(y);
    free_problem(&p);
}

/* ---- backward bias ----------------------------------------------------------------------------- */

TEST(conv_backward_bias)
{
    cudnnHandle_t h = test_handle();
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    for (size_t t = 0; t < 4; t++) {
        for (int rank = 4; rank <= 5; rank++) {
            int dyd[5] = {3, 5, 4, 3, 2}, dbd[5] = {1, 5, 1, 1, 1};
            struct tview dy, db;
            tview_init(&dy, types[t], rank, dyd, rank == 4 ? TV_PADDED : TV_NHWC);
            tview_init(&db, types[t], rank, dbd, TV_NCHW);
            long n = (long)dy.count, per = n / (dyd[0] * dyd[1]);
            double *v = random_values(types[t], n, -1, 1), *old = random_values(types[t], 5, -1, 1), want[5];
            for (int k = 0; k < 5; k++) {
                double sum = 0;
                for (int i = 0; i < dyd[0]; i++)
                    for (long j = 0; j < per; j++) sum += v[((long)i * 5 + k) * per + j];
                want[k] = 2 * sum + 0.5 * old[k];
            }
            void *ddy = tview_upload(&dy, v), *ddb = tview_upload(&db, old);
            double a = 2, b = 0.5;
            float af = 2, bf = 0.5;
            bool dbl = types[t] == CUDNN_DATA_DOUBLE;
            CHECK_OK(cudnnConvolutionBackwardBias(h, dbl ? (void *)&a : &af, dy.desc, ddy, dbl ? (void *)&b : &bf, db.desc, ddb));
            double got[5];
            tview_download(&db, ddb, got);
            tcompare(CUDNN_DATA_DOUBLE, got, want, 5, ttolerance(types[t]) * 8 * (types[t] == CUDNN_DATA_HALF ? 4 : 1), "bias gradient");
            /* db must be 1 x C x 1 x 1: a wrong shape is BAD_PARAM and writes nothing */
            struct tview bad;
            int badd[5] = {1, 4, 1, 1, 1};
            tview_init(&bad, types[t], rank, badd, TV_NCHW);
            tbuf_poison(ddb, tview_bytes(&db));
            CHECK_STATUS(cudnnConvolutionBackwardBias(h, dbl ? (void *)&a : &af, dy.desc, ddy, dbl ? (void *)&b : &bf, bad.desc, ddb),
                         CUDNN_STATUS_BAD_PARAM);
            tview_destroy(&bad), tview_destroy(&dy), tview_destroy(&db);
            tbuf_free(ddy), tbuf_free(ddb), free(v), free(old);
        }
    }
}

/* ---- Im2Col and filter reordering ---------------------------------------------------------------- */

TEST(conv_im2col_matches_reference)
{
    cudnnHandle_t h = test_handle();
    static const int picks[] = {1, 2, 7}; /* strided asymmetric, dilated, CONVOLUTION mode */
    for (size_t s = 0; s < 3; s++) {
        struct problem p;
        if (!make_problem(&p, &shapes[picks[s]], &float_configs[0], (int)s)) continue;
        long nx = ref_conv_x_count(&p.r);
        long rows = (long)p.r.n * p.r.out[0] * p.r.out[1], cols = (long)p.r.c * p.r.filt[0] * p.r.filt[1];
        double *x = random_values(CUDNN_DATA_FLOAT, nx, -1, 1), *want = malloc(sizeof *want * (size_t)(rows * cols));
        ref_conv_im2col(&p.r, x, want);
        void *dx = tview_upload(&p.x, x), *col = tbuf_alloc((size_t)(rows * cols) * 4);
        CHECK_OK(cudnnIm2Col(h, p.x.desc, dx, p.w.desc, p.conv, col));
        float *got = malloc((size_t)(rows * cols) * 4);
        tbuf_download(got, col, (size_t)(rows * cols) * 4);
        tcompare(CUDNN_DATA_FLOAT, got, want, rows * cols, 1e-30, shapes[picks[s]].name); /* exact */
        tbuf_free(dx), tbuf_free(col), free(x), free(want), free(got);
        free_problem(&p);
    }
    struct problem p3;
    if (make_problem(&p3, &shapes[11], &float_configs[0], 0)) {
        void *x = tbuf_alloc(tview_bytes(&p3.x)), *col = patterned(64);
        CHECK_STATUS(cudnnIm2Col(h, p3.x.desc, x, p3.w.desc, p3.conv, col), CUDNN_STATUS_NOT_SUPPORTED); /* 3-D */
        CHECK(untouched(col, 64));
        tbuf_free(x), tbuf_free(col);
    }
    free_problem(&p3);
}

TEST(conv_reorder_filter_and_bias_round_trip)
{
    cudnnHandle_t h = test_handle();
    struct tfilter w;
    int wd[4] = {32, 32, 3, 3};
    if (!make_filter(&w, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, 4, wd)) return;
    double *v = random_values(CUDNN_DATA_INT8, 32 * 32 * 9, -100, 100), *bias = random_values(CUDNN_DATA_FLOAT, 32, -1, 1);
    void *src = tview_upload(&w.v, v), *dst = tbuf_alloc(tview_bytes(&w.v));
    float fb[32], got_b[32];
    for (int i = 0; i < 32; i++) fb[i] = (float)bias[i];
    void *bsrc = tbuf_from(fb, sizeof fb), *bdst = tbuf_alloc(sizeof fb);
    CHECK_OK(cudnnReorderFilterAndBias(h, w.desc, CUDNN_DEFAULT_REORDER, src, dst, 1, bsrc, bdst));
    signed char *a = malloc(tview_bytes(&w.v)), *b = malloc(tview_bytes(&w.v));
    tbuf_download(a, src, tview_bytes(&w.v));
    tbuf_download(b, dst, tview_bytes(&w.v));
    CHECK(memcmp(a, b, tview_bytes(&w.v)) == 0); /* opencudnn's reordered layout is the plain one */
    tbuf_download(got_b, bdst, sizeof got_b);
    CHECK(memcmp(fb, got_b, sizeof fb) == 0);
    CHECK_STATUS(cudnnReorderFilterAndBias(h, w.desc, (cudnnReorderType_t)3, src, dst, 0, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnReorderFilterAndBias(h, w.desc, CUDNN_DEFAULT_REORDER, src, dst, 1, NULL, bdst), CUDNN_STATUS_BAD_PARAM);
    free(a), free(b), free(v), free(bias);
    tbuf_free(src), tbuf_free(dst), tbuf_free(bsrc), tbuf_free(bdst);
    free_filter(&w);
}

/* ---- the fused convolution + bias + activation forward --------------------------------------------- */

/* The fused call on sh in cf with algorithm algo (y = act(alpha1 conv + alpha2 z + bias), z in
   y's own buffer when in_place) against the reference; where `entry` is given, the
   implementation that ran must begin with it, and where `way` is, the cuBLAS entries' fused
   epilogue (conv_cublas.cu's log line) too. */
static void check_bias_activation_algo(const struct shape *sh, const struct config *cf, cudnnActivationMode_t mode,
                                       bool in_place, int variant, cudnnConvolutionFwdAlgo_t algo, const char *entry,
                                       const char *way)
{
    cudnnHandle_t h = test_handle();
    struct problem p;
    if (!make_problem(&p, sh, cf, variant)) {
        free_problem(&p);
        return;
    }
    cudnnActivationDescriptor_t act;
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnSetActivationDescriptor(act, mode, CUDNN_NOT_PROPAGATE_NAN, 0));
    bool int8 = is_int(cf->x);
    cudnnDataType_t bt = int8 ? CUDNN_DATA_FLOAT : cf->y;
    struct tview bias;
    int bd[5] = {1, sh->k, 1, 1, 1};
    tview_init(&bias, bt, sh->nsp + 2, bd, TV_NCHW);
    long nx = ref_conv_x_count(&p.r), nw = ref_conv_w_count(&p.r), ny = ref_conv_y_count(&p.r);
    double *x = random_values(cf->x, nx, int8 ? -4 : -1, int8 ? 4 : 1), *w = random_values(cf->w, nw, int8 ? -3 : -1, int8 ? 3 : 1);
    double *z = random_values(cf->y, ny, int8 ? -20 : -1, int8 ? 20 : 1), *b = random_values(bt, sh->k, -2, 2);
    double *want = malloc(sizeof *want * (size_t)ny), *got = malloc(sizeof(double) * (size_t)ny);
    double alpha1 = int8 && is_int(cf->y) ? 0.25 : 0.75, alpha2 = 0.5;
    ref_conv_fwd(&p.r, x, w, want);
    long per = ny / ((long)sh->n * sh->k);
    for (long i = 0; i < ny; i++) {
        double v = alpha1 * want[i] + alpha2 * z[i] + b[i / per % sh->k];
        want[i] = saturate_for(cf->y, mode == CUDNN_ACTIVATION_RELU && v < 0 ? 0 : v);
    }
    void *dx = tview_upload(&p.x, x), *dw = tview_upload(&p.w.v, w), *dz = tview_upload(&p.y, z);
    void *dy = in_place ? dz : tbuf_alloc(tview_bytes(&p.y)), *db = tview_upload(&bias, b);
    size_t ws_bytes = 0;
    CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, p.x.desc, p.w.desc, p.conv, p.y.desc, algo, &ws_bytes));
    void *ws = tbuf_alloc(ws_bytes);
    float a1f = (float)alpha1, a2f = (float)alpha2;
    bool dbl = cf->x == CUDNN_DATA_DOUBLE;
    const void *a1 = dbl ? (const void *)&alpha1 : &a1f, *a2 = dbl ? (const void *)&alpha2 : &a2f;
    struct log_hook hook;
    struct ran_impl ran;
    ran_impl_start(&hook, &ran);
    const cudnnStatus_t st = cudnnConvolutionBiasActivationForward(h, a1, p.x.desc, dx, p.w.desc, dw, p.conv, algo, ws,
                                                                   ws_bytes, a2, p.y.desc, dz, bias.desc, db, act,
                                                                   p.y.desc, dy);
    ran_impl_stop(&hook);
    if (entry != NULL && !CHECK(strncmp(ran.name, entry, strlen(entry)) == 0))
        printf("      (%s %s: ran \"%s\", expected %s...)\n", sh->name, cf->name, ran.name, entry);
    if (way != NULL && !CHECK(strncmp(ran.epilogue, way, strlen(way)) == 0))
        printf("      (%s %s: the fused epilogue \"%s\", expected %s...)\n", sh->name, cf->name, ran.epilogue, way);
    if (CHECK_OK(st)) {
        tview_download(&p.y, dy, got);
        char what[128];
        snprintf(what, sizeof what, "bias activation %s %s mode %d%s", sh->name, cf->name, (int)mode, in_place ? " in place" : "");
        /* the perf result is not at hand: any math type but FMA may have used tensor cores */
        tcompare(CUDNN_DATA_DOUBLE, got, want, ny, tconv_tolerance(cf->x, cf->y, cf->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
                 what);
    }
    if (mode == CUDNN_ACTIVATION_IDENTITY) /* IDENTITY is only enabled with IMPLICIT_PRECOMP_GEMM */
        CHECK_STATUS(cudnnConvolutionBiasActivationForward(h, a1, p.x.desc, dx, p.w.desc, dw, p.conv,
                                                           CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, a2, p.y.desc,
                                                           dz, bias.desc, db, act, p.y.desc, dy),
                     CUDNN_STATUS_NOT_SUPPORTED);
    cudnnDestroyActivationDescriptor(act);
    tview_destroy(&bias);
    tbuf_free(dx), tbuf_free(dw), tbuf_free(dz), tbuf_free(db), tbuf_free(ws);
    if (!in_place) tbuf_free(dy);
    free(x), free(w), free(z), free(b), free(want), free(got);
    free_problem(&p);
}

/* The same with IMPLICIT_PRECOMP_GEMM, the algorithm every activation mode may take. */
static void check_bias_activation_on(const struct shape *sh, const struct config *cf, cudnnActivationMode_t mode,
                                     bool in_place, int variant, const char *entry, const char *way)
{
    check_bias_activation_algo(sh, cf, mode, in_place, variant, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, entry,
                               way);
}

static void check_bias_activation(const struct shape *sh, const struct config *cf, cudnnActivationMode_t mode,
                                  bool in_place, int variant)
{
    check_bias_activation_on(sh, cf, mode, in_place, variant, NULL, NULL);
}

TEST(conv_bias_activation_forward)
{
    cudnnActivationDescriptor_t probe = NULL;
    cudnnStatus_t s = cudnnCreateActivationDescriptor(&probe);
    cudnnDestroyActivationDescriptor(probe);
    if (s == CUDNN_STATUS_NOT_SUPPORTED) {
        /* activation descriptors are not implemented in this build: only the argument checks */
        struct problem p;
        if (make_problem(&p, &shapes[0], &float_configs[0], 0)) {
            float one = 1;
            CHECK_STATUS(cudnnConvolutionBiasActivationForward(test_handle(), &one, p.x.desc, &one, p.w.desc, &one, p.conv,
                                                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, NULL, 0,
                                                               &one, p.y.desc, &one, p.y.desc, &one, NULL, p.y.desc, &one),
                         CUDNN_STATUS_BAD_PARAM);
        }
        free_problem(&p);
        printf("      (activation descriptors are not implemented: numeric checks skipped)\n");
        return;
    }
    for (int v = 0; v < 3; v++) {
        check_bias_activation(&shapes[v * 3], &float_configs[v == 2 ? 3 : v * 2], CUDNN_ACTIVATION_RELU, v == 1, v);
        check_bias_activation(&shapes[v * 4], &float_configs[v], CUDNN_ACTIVATION_IDENTITY, v == 0, v);
    }
    check_bias_activation(&shapes[12], &float_configs[0], CUDNN_ACTIVATION_RELU, false, 1);
    /* the implicit-GEMM epilogue (bias, z, ReLU) on the CUDA pass; in place and with groups too */
    check_bias_activation(&tc_shapes[0], &tc_configs[0], CUDNN_ACTIVATION_RELU, false, 1);
    check_bias_activation(&tc_shapes[1], &tc_configs[1], CUDNN_ACTIVATION_RELU, true, 0);
    check_bias_activation(&tc_shapes[4], &tc_configs[2], CUDNN_ACTIVATION_IDENTITY, false, 1);
    check_bias_activation(&tc_shapes[2], &tc_configs[3], CUDNN_ACTIVATION_RELU, true, 1);
    check_bias_activation(&int8_shapes[0], &int8_configs[0], CUDNN_ACTIVATION_RELU, false, 0);
    check_bias_activation(&int8_shapes[1], &int8_configs[4], CUDNN_ACTIVATION_RELU, true, 1);
}

/* On the CUDA pass, a 1x1 convolution large enough for cuBLAS (2^27 multiply-adds, past the
   implicit GEMM's small-GEMM share) runs the fused call on the cuBLAS entries, each in the way
   conv_cublas.cu's plan must choose: cuBLASLt's epilogue for half, bfloat16 and TF32 NHWC (z apart,
   z in y's own buffer; RELU and IDENTITY); the typed pass where cuBLASLt declines (two groups, with
   16-byte vectors and, at K / G = 50, one element at a time; double; NCHW half and float). A 1x1
   filter with stride 2 (ResNet's downsampling) runs there too on its gathered column matrix,
   cuBLASLt's epilogue or (double) the typed pass after the GEMM. With FWD_ALGO_GEMM the im2col
   entry runs a 3x3 filter with padding, cuBLASLt's epilogue over the column matrix. */
TEST(conv_cuda_fused_1x1_runs_on_cublas)
{
    if (test_backend[0] != 'c') return;
    static const struct shape big_1x1 = {"fused_1x1", 2, 8, 128, 128, 1, {32, 32}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false};
    static const struct shape groups2 = {"fused_1x1_g2", 2, 16, 128, 128, 2, {32, 32}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false};
    static const struct shape groups2_odd = {"fused_1x1_g2_k100", 2, 16, 128, 100, 2, {32, 32}, {1, 1}, {0, 0},
                                             {1, 1}, {1, 1}, false};
    const char *const entry = "cuda:fwd_gemm1x1_cublas", *const lt = "cuBLASLt", *const typed = "the typed pass";
    check_bias_activation_on(&big_1x1, &tc_configs[0], CUDNN_ACTIVATION_RELU, false, 0, entry, lt);
    check_bias_activation_on(&big_1x1, &tc_configs[0], CUDNN_ACTIVATION_RELU, true, 0, entry, lt);
    check_bias_activation_on(&big_1x1, &tc_configs[0], CUDNN_ACTIVATION_IDENTITY, false, 0, entry, lt);
    check_bias_activation_on(&big_1x1, &tc_configs[1], CUDNN_ACTIVATION_IDENTITY, true, 0, entry, lt);
    check_bias_activation_on(&big_1x1, &tc_configs[2], CUDNN_ACTIVATION_RELU, false, 0, entry, lt);
    check_bias_activation_on(&big_1x1, &tc_configs[3], CUDNN_ACTIVATION_RELU, true, 0, entry, typed);
    check_bias_activation_on(&big_1x1, &tc_configs[4], CUDNN_ACTIVATION_IDENTITY, false, 0, entry, typed);
    check_bias_activation_on(&big_1x1, &tc_configs[5], CUDNN_ACTIVATION_RELU, true, 0, entry, typed);
    check_bias_activation_on(&groups2, &tc_configs[0], CUDNN_ACTIVATION_RELU, false, 0, entry, typed);
    check_bias_activation_on(&groups2_odd, &tc_configs[0], CUDNN_ACTIVATION_RELU, true, 0, entry, typed);
    check_bias_activation_on(&groups2_odd, &tc_configs[1], CUDNN_ACTIVATION_IDENTITY, false, 0, entry, typed);
    static const struct shape ds = {"fused_1x1_stride2", 2, 16, 128, 256, 1, {32, 30}, {1, 1}, {0, 0}, {2, 2}, {1, 1},
                                    false};
    static const struct shape ds_odd = {"fused_1x1_stride2_odd", 2, 16, 128, 256, 1, {33, 31}, {1, 1}, {0, 0}, {2, 2},
                                        {1, 1}, false};
    static const struct shape pad3 = {"fused_3x3", 2, 8, 64, 128, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    const cudnnConvolutionFwdAlgo_t gemm = CUDNN_CONVOLUTION_FWD_ALGO_GEMM;
    const char *const im2col = "cuda:fwd_im2col_gemm_cublas";
    check_bias_activation_on(&ds, &tc_configs[0], CUDNN_ACTIVATION_RELU, false, 0, entry, lt);
    check_bias_activation_on(&ds, &tc_configs[1], CUDNN_ACTIVATION_IDENTITY, true, 0, entry, lt);
    check_bias_activation_on(&ds, &tc_configs[2], CUDNN_ACTIVATION_RELU, true, 0, entry, lt);
    check_bias_activation_on(&ds, &tc_configs[5], CUDNN_ACTIVATION_RELU, false, 0, entry, typed);
    check_bias_activation_algo(&ds_odd, &tc_configs[0], CUDNN_ACTIVATION_RELU, false, 0, gemm, entry, lt);
    check_bias_activation_on(&ds_odd, &tc_configs[1], CUDNN_ACTIVATION_RELU, true, 0, entry, lt);
    check_bias_activation_algo(&pad3, &tc_configs[0], CUDNN_ACTIVATION_RELU, true, 0, gemm, im2col, lt);
    check_bias_activation_algo(&pad3, &tc_configs[2], CUDNN_ACTIVATION_RELU, false, 0, gemm, im2col, lt);
}

/* On the CUDA pass, the plain forward of a 1x1 filter with stride 2 (and 3 by 2) runs on the
   gemm1x1 entries, its column matrix a gather of whole pixels: half, bfloat16, float (TF32) and
   double, NHWC. */
TEST(conv_cuda_fwd_1x1_strided_gathers)
{
    if (!conv_tensor_core_pass() || !cublas_loadable()) return;
    static const struct shape ds = {"fwd_1x1s2", 2, 16, 128, 256, 1, {32, 30}, {1, 1}, {0, 0}, {2, 2}, {1, 1}, false};
    static const struct shape s32 = {"fwd_1x1s32", 2, 32, 96, 160, 1, {36, 33}, {1, 1}, {0, 0}, {3, 2}, {1, 1}, true};
    const char *const entry = "cuda:fwd_gemm1x1_cublas";
    const struct entry_case cases[] = {
        {&ds, &tc_configs[0], entry, NULL}, {&ds, &tc_configs[1], entry, NULL}, {&ds, &tc_configs[2], entry, NULL},
        {&ds, &tc_configs[5], entry, NULL}, {&s32, &tc_configs[0], entry, NULL},
    };
    check_entries_reached(cases, sizeof cases / sizeof cases[0], FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
}

/* On the CUDA pass with tensor cores, the fused call on ResNet's stem (C = 3, 7x7, stride 2,
   pad 3; the ConvBiasAct first layer) runs on the few-channel entry, its epilogue taking bias, z
   and the activation: half NHWC and NCHW, bfloat16 NHWC, float NHWC (TF32); z apart and in y's
   own buffer; RELU and IDENTITY. */
TEST(conv_cuda_fused_stem)
{
    if (!conv_tensor_core_pass()) return;
    static const struct shape stem = {"fused_stem", 2, 2, 3, 64, 1, {30, 29}, {7, 7}, {3, 3}, {2, 2}, {1, 1}, false};
    const char *const entry = "cuda:fwd_stem_tc_128x64";
    check_bias_activation_on(&stem, &tc_configs[0], CUDNN_ACTIVATION_RELU, false, 0, entry, NULL);
    check_bias_activation_on(&stem, &tc_configs[3], CUDNN_ACTIVATION_RELU, true, 0, entry, NULL);
    check_bias_activation_on(&stem, &tc_configs[1], CUDNN_ACTIVATION_IDENTITY, true, 0, entry, NULL);
    check_bias_activation_on(&stem, &tc_configs[2], CUDNN_ACTIVATION_RELU, true, 0, entry, NULL);
}
