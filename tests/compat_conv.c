/* compat_conv.c: call patterns of real programs (docs/compatibility.md) around convolution that
   the convolution tests do not make: darknet's half-precision convolution with fixed algorithms
   and its algorithm choice under a workspace limit; CuPy's first-result algorithm choice; MXNet's
   1-D convolution as a 2-D one whose dummy dim shares a stride; TVM's group count set before the
   descriptor; NNabla's 1-D channels-last deconvolution with a convolution descriptor per
   direction; MegEngine's fused convolution (the math type set first, z the unwritten output
   under alpha2 0); NVIDIA's sample's int8 vector convolution with a reordered filter;
   Paddle-Lite's channels-last int8 convolution into float, refused below 4-channel multiples;
   Thor's search, each result of the non-Ex Find run accumulating between runtime-error queries;
   RAF's non-Ex Find asked for one result per direction, which must be a SUCCESS.
   Each result against the double references of tests/ref/. */
#include "conv_harness.h"
#include "desc_util.h"
#include "ref/conv.h"
#include "ref/tensor_ops.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The descriptors of one 2-D convolution: x, y (tensors), w (filter), conv. */
struct cdescs {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
};

/* Packed NCHW descriptors of type t for rc (2-D), the convolution's compute type float. */
static void cdescs_init(struct cdescs *d, const struct ref_conv *rc, cudnnDataType_t t, cudnnMathType_t math)
{
    CHECK_OK(cudnnCreateTensorDescriptor(&d->x));
    CHECK_OK(cudnnCreateTensorDescriptor(&d->y));
    CHECK_OK(cudnnCreateFilterDescriptor(&d->w));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&d->conv));
    CHECK_OK(cudnnSetTensor4dDescriptor(d->x, CUDNN_TENSOR_NCHW, t, rc->n, rc->c, rc->in[0], rc->in[1]));
    CHECK_OK(cudnnSetTensor4dDescriptor(d->y, CUDNN_TENSOR_NCHW, t, rc->n, rc->k, rc->out[0], rc->out[1]));
    CHECK_OK(cudnnSetFilter4dDescriptor(d->w, t, CUDNN_TENSOR_NCHW, rc->k, rc->c / rc->groups, rc->filt[0],
                                        rc->filt[1]));
    CHECK_OK(cudnnSetConvolution2dDescriptor(d->conv, rc->pad[0], rc->pad[1], rc->stride[0], rc->stride[1],
                                             rc->dil[0], rc->dil[1], CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionGroupCount(d->conv, rc->groups));
    CHECK_OK(cudnnSetConvolutionMathType(d->conv, math));
}

static void cdescs_destroy(struct cdescs *d)
{
    cudnnDestroyTensorDescriptor(d->x);
    cudnnDestroyTensorDescriptor(d->y);
    cudnnDestroyFilterDescriptor(d->w);
    cudnnDestroyConvolutionDescriptor(d->conv);
}

/* darknet (convolutional_layer.c, convolutional_kernels.cu): with cudnn_half the layer runs on
   half copies of its tensors with algorithms fixed in advance (IMPLICIT_PRECOMP_GEMM forward,
   ALGO_1 for both backward passes), the descriptor's compute type float and TENSOR_OP_MATH,
   groups and dilation as configured (pad = pad * dilation); one workspace, the largest of the
   three; the weight gradient accumulated (beta 1) into the half copy of the previous updates. */
TEST(compat_conv_darknet_half_fixed_algorithms)
{
    static const struct { int groups, dil; } cases[] = {{1, 1}, {2, 2}};
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH);
    for (size_t k = 0; k < TLEN(cases); k++) {
        int g = cases[k].groups, dil = cases[k].dil;
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 16, .k = 8, .groups = g, .in = {6, 5}, .filt = {3, 3},
                              .pad = {dil, dil}, .stride = {1, 1}, .dil = {dil, dil}};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
        double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *dy = tview_random(ny, -1, 1);
        double *dw0 = tview_random(nw, -1, 1), *y = malloc(sizeof(double) * (size_t)ny);
        double *dx = malloc(sizeof(double) * (size_t)nx), *dw = malloc(sizeof(double) * (size_t)nw);
        void *px = tvalues_upload(t, x, nx), *pw = tvalues_upload(t, w, nw), *pdy = tvalues_upload(t, dy, ny);
        void *pdw = tvalues_upload(t, dw0, nw), *py = tbuf_alloc(2 * (size_t)ny), *pdx = tbuf_alloc(2 * (size_t)nx);
        ref_conv_fwd(&rc, x, w, y);
        ref_conv_bwd_data(&rc, dy, w, dx);
        ref_conv_bwd_filter(&rc, x, dy, dw);
        for (long i = 0; i < nw; i++) dw[i] += dw0[i];
        struct cdescs d;
        cdescs_init(&d, &rc, t, CUDNN_TENSOR_OP_MATH);
        size_t ws = 0, s = 0;
        bool ok = CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y,
                                                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &s));
        ws = s > ws ? s : ws;
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w,
                                                                           CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &s));
        ws = s > ws ? s : ws;
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                                         CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, &s));
        ws = s > ws ? s : ws;
        void *work = ws ? tbuf_alloc(ws) : NULL;
        const float one = 1, zero = 0;
        if (ok && CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, work, ws, &zero,
                                                   d.y, py)))
            tvalues_check(t, py, y, ny, tol, "darknet half forward");
        if (ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, d.x, px, d.y, pdy, d.conv,
                                                          CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, work, ws, &one, d.w,
                                                          pdw)))
            tvalues_check(t, pdw, dw, nw, tol, "darknet half weight updates (beta 1)");
        if (ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, d.w, pw, d.y, pdy, d.conv,
                                                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, work, ws, &zero, d.x, pdx)))
            tvalues_check(t, pdx, dx, nx, tol, "darknet half delta");
        tbuf_free(work);
        cdescs_destroy(&d);
        void *bufs[] = {px, pw, pdy, pdw, py, pdx};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        free(x), free(w), free(dy), free(dw0), free(y), free(dx), free(dw);
    }
}

/* darknet's float path with cuDNN 8 (cudnn_convolutional_setup): each direction's *_v7 asked
   for MaxCount results; the one taken is SUCCESS, not WINOGRAD_NONFUSED (forward), its memory
   within the limit and its time the least. The "cudnn_smallest" preference sets the limit to 0:
   every direction must offer a SUCCESS result needing no workspace, which then runs without
   one. The backward passes accumulate (beta 1) into dx and dw as darknet's do. */
TEST(compat_conv_darknet_v7_choice_without_workspace)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 6, .k = 4, .groups = 2, .in = {7, 6}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {2, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *dy = tview_random(ny, -1, 1);
    double *dx0 = tview_random(nx, -1, 1), *dw0 = tview_random(nw, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)ny), *dx = malloc(sizeof(double) * (size_t)nx);
    double *dw = malloc(sizeof(double) * (size_t)nw);
    void *px = tvalues_upload(t, x, nx), *pw = tvalues_upload(t, w, nw), *pdy = tvalues_upload(t, dy, ny);
    void *pdx = tvalues_upload(t, dx0, nx), *pdw = tvalues_upload(t, dw0, nw), *py = tbuf_alloc(4 * (size_t)ny);
    ref_conv_fwd(&rc, x, w, y);
    ref_conv_bwd_data(&rc, dy, w, dx);
    ref_conv_bwd_filter(&rc, x, dy, dw);
    for (long i = 0; i < nx; i++) dx[i] += dx0[i];
    for (long i = 0; i < nw; i++) dw[i] += dw0[i];
    struct cdescs d;
    cdescs_init(&d, &rc, t, CUDNN_TENSOR_OP_MATH);
    const float one = 1, zero = 0;
    int req = 0, got = 0, best = -1;
    float least = 1e6f;

    cudnnConvolutionFwdAlgoPerf_t fp[100];
    CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &req));
    if (CHECK(req > 0 && req <= 100) && CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, req,
                                                                                        &got, fp)))
        for (int i = 0; i < got; i++)
            if (fp[i].status == CUDNN_STATUS_SUCCESS && fp[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED &&
                fp[i].memory <= 0 && fp[i].time < least)
                best = i, least = fp[i].time;
    if (CHECK(best >= 0)) {
        CHECK_OK(cudnnSetConvolutionMathType(d.conv, fp[best].mathType));
        if (CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, fp[best].algo, NULL, 0, &zero, d.y, py)))
            tvalues_check(t, py, y, ny, tconv_tolerance(t, t, fp[best].mathType), "forward without workspace");
    }

    cudnnConvolutionBwdDataAlgoPerf_t dp[100];
    best = -1, least = 1e6f;
    CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &req));
    if (CHECK(req > 0 && req <= 100) &&
        CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, req, &got, dp)))
        for (int i = 0; i < got; i++)
            if (dp[i].status == CUDNN_STATUS_SUCCESS && dp[i].memory <= 0 && dp[i].time < least)
                best = i, least = dp[i].time;
    if (CHECK(best >= 0)) {
        CHECK_OK(cudnnSetConvolutionMathType(d.conv, dp[best].mathType));
        if (CHECK_OK(cudnnConvolutionBackwardData(h, &one, d.w, pw, d.y, pdy, d.conv, dp[best].algo, NULL, 0, &one,
                                                  d.x, pdx)))
            tvalues_check(t, pdx, dx, nx, tconv_tolerance(t, t, dp[best].mathType), "backward data, beta 1");
    }

    cudnnConvolutionBwdFilterAlgoPerf_t wp[100];
    best = -1, least = 1e6f;
    CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &req));
    if (CHECK(req > 0 && req <= 100) &&
        CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, req, &got, wp)))
        for (int i = 0; i < got; i++)
            if (wp[i].status == CUDNN_STATUS_SUCCESS && wp[i].memory <= 0 && wp[i].time < least)
                best = i, least = wp[i].time;
    if (CHECK(best >= 0)) {
        CHECK_OK(cudnnSetConvolutionMathType(d.conv, wp[best].mathType));
        if (CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, d.x, px, d.y, pdy, d.conv, wp[best].algo, NULL, 0, &one,
                                                    d.w, pdw)))
            tvalues_check(t, pdw, dw, nw, tconv_tolerance(t, t, wp[best].mathType), "backward filter, beta 1");
    }
    cdescs_destroy(&d);
    void *bufs[] = {px, pw, pdy, pdx, pdw, py};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(x), free(w), free(dy), free(dx0), free(dw0), free(y), free(dx), free(dw);
}

/* CuPy's non-autotuned algorithm choice (cupy/cudnn.pyx, _get_algorithm_fwd and the backward
   ones): *_v7 asked for 10 results and the FIRST whose memory fits the 8 MiB limit taken,
   its status never read; then the math type set from it, a workspace of its memory, and the
   call. So the results must list every SUCCESS before any failure. The autotuned one:
   cudnnFind*AlgorithmEx asked for 1 result, into the real output. */
TEST(compat_conv_cupy_first_fitting_result)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 1, .in = {5, 6}, .filt = {3, 2},
                          .pad = {1, 0}, .stride = {1, 1}, .dil = {2, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    const size_t limit = 8u << 20;
    const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
    double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *dy = tview_random(ny, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)ny), *dx = malloc(sizeof(double) * (size_t)nx);
    double *dw = malloc(sizeof(double) * (size_t)nw);
    void *px = tvalues_upload(t, x, nx), *pw = tvalues_upload(t, w, nw), *pdy = tvalues_upload(t, dy, ny);
    void *py = tbuf_alloc(4 * (size_t)ny), *pdx = tbuf_alloc(4 * (size_t)nx), *pdw = tbuf_alloc(4 * (size_t)nw);
    ref_conv_fwd(&rc, x, w, y);
    ref_conv_bwd_data(&rc, dy, w, dx);
    ref_conv_bwd_filter(&rc, x, dy, dw);
    struct cdescs d;
    cdescs_init(&d, &rc, t, CUDNN_DEFAULT_MATH);
    const float one = 1, zero = 0;
    int got = 0, i;

    cudnnConvolutionFwdAlgoPerf_t fp[10];
    if (CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, 10, &got, fp))) {
        for (i = 0; i < got && fp[i].memory > limit; i++) continue;
        if (CHECK(i < got) && CHECK_OK(cudnnSetConvolutionMathType(d.conv, fp[i].mathType))) {
            void *work = fp[i].memory ? tbuf_alloc(fp[i].memory) : NULL;
            if (CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, fp[i].algo, work, fp[i].memory,
                                                 &zero, d.y, py)))
                tvalues_check(t, py, y, ny, tconv_tolerance(t, t, fp[i].mathType), "first fitting forward");
            tbuf_free(work);
        }
    }
    cudnnConvolutionBwdDataAlgoPerf_t dp[10];
    if (CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, 10, &got, dp))) {
        for (i = 0; i < got && dp[i].memory > limit; i++) continue;
        if (CHECK(i < got) && CHECK_OK(cudnnSetConvolutionMathType(d.conv, dp[i].mathType))) {
            void *work = dp[i].memory ? tbuf_alloc(dp[i].memory) : NULL;
            if (CHECK_OK(cudnnConvolutionBackwardData(h, &one, d.w, pw, d.y, pdy, d.conv, dp[i].algo, work,
                                                      dp[i].memory, &zero, d.x, pdx)))
                tvalues_check(t, pdx, dx, nx, tconv_tolerance(t, t, dp[i].mathType), "first fitting backward data");
            tbuf_free(work);
        }
    }
    cudnnConvolutionBwdFilterAlgoPerf_t wp[10];
    if (CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, 10, &got, wp))) {
        for (i = 0; i < got && wp[i].memory > limit; i++) continue;
        if (CHECK(i < got) && CHECK_OK(cudnnSetConvolutionMathType(d.conv, wp[i].mathType))) {
            void *work = wp[i].memory ? tbuf_alloc(wp[i].memory) : NULL;
            if (CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, d.x, px, d.y, pdy, d.conv, wp[i].algo, work,
                                                        wp[i].memory, &zero, d.w, pdw)))
                tvalues_check(t, pdw, dw, nw, tconv_tolerance(t, t, wp[i].mathType), "first fitting backward filter");
            tbuf_free(work);
        }
    }
    /* autotuned: FindEx for one result with an 8 MiB workspace, into y itself */
    CHECK_OK(cudnnSetConvolutionMathType(d.conv, CUDNN_DEFAULT_MATH));
    void *work = tbuf_alloc(limit);
    if (CHECK_OK(cudnnFindConvolutionForwardAlgorithmEx(h, d.x, px, d.w, pw, d.conv, d.y, py, 1, &got, fp, work,
                                                        limit)) &&
        CHECK(got == 1 && fp[0].status == CUDNN_STATUS_SUCCESS && fp[0].memory <= limit) &&
        CHECK_OK(cudnnSetConvolutionMathType(d.conv, fp[0].mathType))) {
        tbuf_poison(py, 4 * (size_t)ny);
        if (CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, fp[0].algo, work, fp[0].memory, &zero,
                                             d.y, py)))
            tvalues_check(t, py, y, ny, tconv_tolerance(t, t, fp[0].mathType), "found forward");
    }
    tbuf_free(work);
    cdescs_destroy(&d);
    void *bufs[] = {px, pw, pdy, py, pdx, pdw};
    for (size_t k = 0; k < TLEN(bufs); k++) tbuf_free(bufs[k]);
    free(x), free(w), free(dy), free(y), free(dx), free(dw);
}

/* MXNet's 1-D convolution (src/operator/nn/cudnn/cudnn_convolution-inl.h): NCW data run as NCHW
   with H = 1, the dummy dim given the channel stride ({C W, W, W, 1}; NWC: {W C, 1, 1, C}),
   cudnnSetTensorNdDescriptor for x and y, a 2-D descriptor with pad 0, stride 1, dilation 1 on
   H, TENSOR_OP_MATH_ALLOW_CONVERSION on float data, groups; the bias 1 x K x 1 x 1 with strides
   {K, 1, 1, 1} added by cudnnAddTensor (beta 1) and its gradient by
   cudnnConvolutionBackwardBias. */
TEST(compat_conv_mxnet_1d_as_2d_shared_strides)
{
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_FLOAT;
    for (int nwc = 0; nwc < 2; nwc++) {
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 4, .k = 6, .groups = 2, .in = {1, 9}, .filt = {1, 3},
                              .pad = {0, 1}, .stride = {1, 2}, .dil = {1, 1}};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        const int c = rc.c, k = rc.k, W = rc.in[1], Wo = rc.out[1];
        const long nx = ref_conv_x_count(&rc), nw = ref_conv_w_count(&rc), ny = ref_conv_y_count(&rc);
        double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *b = tview_random(k, -1, 1);
        double *dy = tview_random(ny, -1, 1), *y = malloc(sizeof(double) * (size_t)ny);
        double *db = calloc((size_t)k, sizeof(double));
        /* the buffers in the program's layout: NCW or NWC */
        const int xdims[4] = {rc.n, c, 1, W}, ydims[4] = {rc.n, k, 1, Wo};
        int xs[4], ys[4];
        if (nwc) {
            int a[4] = {W * c, 1, 1, c}, o[4] = {Wo * k, 1, 1, k};
            memcpy(xs, a, sizeof a), memcpy(ys, o, sizeof o);
        } else {
            int a[4] = {c * W, W, W, 1}, o[4] = {k * Wo, Wo, Wo, 1};
            memcpy(xs, a, sizeof a), memcpy(ys, o, sizeof o);
        }
        float *xf = malloc(sizeof(float) * (size_t)nx), *dyf = malloc(sizeof(float) * (size_t)ny);
        for (int n = 0; n < rc.n; n++)
            for (int ch = 0; ch < c; ch++)
                for (int i = 0; i < W; i++) {
                    xf[n * xs[0] + ch * xs[1] + i * xs[3]] = (float)x[(n * c + ch) * W + i];
                    x[(n * c + ch) * W + i] = xf[n * xs[0] + ch * xs[1] + i * xs[3]];
                }
        for (int n = 0; n < rc.n; n++)
            for (int ch = 0; ch < k; ch++)
                for (int i = 0; i < Wo; i++) {
                    dyf[n * ys[0] + ch * ys[1] + i * ys[3]] = (float)dy[(n * k + ch) * Wo + i];
                    dy[(n * k + ch) * Wo + i] = dyf[n * ys[0] + ch * ys[1] + i * ys[3]];
                }
        for (long i = 0; i < nw; i++) w[i] = (float)w[i];
        for (int i = 0; i < k; i++) b[i] = (float)b[i];
        ref_conv_fwd(&rc, x, w, y);
        for (long i = 0; i < ny; i++) y[i] += b[(i / Wo) % k], db[(i / Wo) % k] += dy[i];
        cudnnTensorDescriptor_t xd, yd, bd;
        cudnnFilterDescriptor_t fd;
        cudnnConvolutionDescriptor_t cd;
        tconv_descs_create(&xd, &yd, &bd, &fd, &cd);
        const int bdims[4] = {1, k, 1, 1}, bstr[4] = {k, 1, 1, 1};
        bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(xd, t, 4, xdims, xs)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptor(yd, t, 4, ydims, ys)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptor(bd, t, 4, bdims, bstr)) &&
                  CHECK_OK(cudnnSetFilter4dDescriptor(fd, t, nwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, k,
                                                      c / rc.groups, 1, 3)) &&
                  CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 0, 1, 1, 2, 1, 1, CUDNN_CROSS_CORRELATION, t)) &&
                  CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)) &&
                  CHECK_OK(cudnnSetConvolutionGroupCount(cd, rc.groups));
        /* the filter in the program's layout: K C R S or K R S C (R = 1) */
        float *wf = malloc(sizeof(float) * (size_t)nw);
        const int cg = c / rc.groups;
        for (int o = 0; o < k; o++)
            for (int ch = 0; ch < cg; ch++)
                for (int s = 0; s < 3; s++) {
                    long at = nwc ? (o * 3 + s) * cg + ch : (o * cg + ch) * 3 + s;
                    wf[at] = (float)w[(o * cg + ch) * 3 + s];
                }
        float *bf = malloc(sizeof(float) * (size_t)k);
        for (int i = 0; i < k; i++) bf[i] = (float)b[i];
        void *px = tbuf_from(xf, sizeof(float) * (size_t)nx), *pw = tbuf_from(wf, sizeof(float) * (size_t)nw);
        void *pb = tbuf_from(bf, sizeof(float) * (size_t)k), *pdy = tbuf_from(dyf, sizeof(float) * (size_t)ny);
        void *py = tbuf_alloc(sizeof(float) * (size_t)ny), *pdb = tbuf_alloc(sizeof(float) * (size_t)k);
        int got = 0;
        cudnnConvolutionFwdAlgoPerf_t fp[8];
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, fd, cd, yd, 8, &got, fp)) &&
             CHECK(got > 0 && fp[0].status == CUDNN_STATUS_SUCCESS);
        const float one = 1, zero = 0;
        if (ok) {
            void *work = fp[0].memory ? tbuf_alloc(fp[0].memory) : NULL;
            ok = CHECK_OK(cudnnConvolutionForward(h, &one, xd, px, fd, pw, cd, fp[0].algo, work, fp[0].memory, &zero,
                                                  yd, py)) &&
                 CHECK_OK(cudnnAddTensor(h, &one, bd, pb, &one, yd, py)) &&
                 CHECK_OK(cudnnConvolutionBackwardBias(h, &one, yd, pdy, &zero, bd, pdb));
            tbuf_free(work);
        }
        if (ok) {
            float *yf = malloc(sizeof(float) * (size_t)ny);
            double *yl = malloc(sizeof(double) * (size_t)ny);
            tbuf_download(yf, py, sizeof(float) * (size_t)ny);
            for (int n = 0; n < rc.n; n++)
                for (int ch = 0; ch < k; ch++)
                    for (int i = 0; i < Wo; i++) yl[(n * k + ch) * Wo + i] = yf[n * ys[0] + ch * ys[1] + i * ys[3]];
            CHECK(tcompare(CUDNN_DATA_DOUBLE, yl, y, ny, tconv_tolerance(t, t, fp[0].mathType),
                           nwc ? "NWC 1-D convolution plus bias" : "NCW 1-D convolution plus bias"));
            tvalues_check(t, pdb, db, k, 1e-5, "bias gradient");
            free(yf), free(yl);
        }
        void *bufs[] = {px, pw, pb, pdy, py, pdb};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        tconv_descs_destroy(xd, yd, bd, fd, cd);
        free(x), free(w), free(b), free(dy), free(y), free(db), free(xf), free(dyf), free(wf), free(bf);
    }
}

/* TVM (src/runtime/contrib/cudnn/cudnn_utils.cc, SetConvDescriptors): cudnnSetConvolutionGroupCount
   on the reused descriptor BEFORE cudnnSetConvolution2dDescriptor (which must keep it), NHWC
   tensors and filter from cudnnSetTensor4dDescriptor / cudnnSetFilter4dDescriptor with the
   format, half data with a float convolution, TENSOR_OP_MATH set after; the workspace of the
   algorithm the program picked (IMPLICIT_PRECOMP_GEMM here) queried and allocated. */
TEST(compat_conv_tvm_group_count_before_descriptor)
{
    struct ref_conv rc = {.nsp = 2, .n = 2, .c = 6, .k = 4, .groups = 2, .in = {5, 6}, .filt = {3, 3},
                          .pad = {1, 1}, .stride = {1, 1}, .dil = {1, 1}};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    const int cg = rc.c / rc.groups, H = rc.in[0], W = rc.in[1], Ho = rc.out[0], Wo = rc.out[1];
    struct tview x, y, w;
    tconv_views(&rc, t, TV_NHWC, TV_NHWC, &x, &w, &y);
    double *xv = tview_random(x.count, -1, 1), *wv = tview_random(w.count, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)y.count);
    void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *py = tview_upload(&y, NULL);
    ref_conv_fwd(&rc, xv, wv, want);
    cudnnTensorDescriptor_t xdesc, ydesc;
    cudnnFilterDescriptor_t fdesc;
    cudnnConvolutionDescriptor_t cd;
    tconv_descs_create(&xdesc, &ydesc, NULL, &fdesc, &cd);
    bool ok = CHECK_OK(cudnnSetConvolutionGroupCount(cd, rc.groups)) &&
              CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(xdesc, CUDNN_TENSOR_NHWC, t, rc.n, rc.c, H, W)) &&
              CHECK_OK(cudnnSetFilter4dDescriptor(fdesc, t, CUDNN_TENSOR_NHWC, rc.k, cg, 3, 3)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(ydesc, CUDNN_TENSOR_NHWC, t, rc.n, rc.k, Ho, Wo)) &&
              CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
    int groups = 0;
    ok = ok && CHECK_OK(cudnnGetConvolutionGroupCount(cd, &groups)) && CHECK(groups == rc.groups);
    size_t ws = 0;
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    ok = ok && CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, xdesc, fdesc, cd, ydesc, algo, &ws));
    if (ok) {
        void *work = ws ? tbuf_alloc(ws) : NULL;
        const float one = 1, zero = 0;
        if (CHECK_OK(cudnnConvolutionForward(h, &one, xdesc, px, fdesc, pw, cd, algo, work, ws, &zero, ydesc, py))) {
            double *got = malloc(sizeof(double) * (size_t)y.count);
            tview_download(&y, py, got);
            CHECK(tcompare(CUDNN_DATA_DOUBLE, got, want, y.count, tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH),
                           "grouped NHWC half convolution"));
            free(got);
        }
        tbuf_free(work);
    }
    tconv_descs_destroy(xdesc, ydesc, NULL, fdesc, cd);
    tview_free(&x, px), tview_free(&w, pw), tview_free(&y, py);
    free(xv), free(wv), free(want);
    tview_destroy(&x);
    tview_destroy(&y);
    tview_destroy(&w);
}

/* NNabla's convolution resource (sony/nnabla-ext-cuda src/nbla/cuda/cudnn/cudnn.cpp,
   CudnnConvResource): a 1-D convolution as a 2-D one, the descriptor
   cudnnSetConvolutionNdDescriptor with the second dim's pad 0, stride 1 and dilation 1 appended,
   FLOAT compute for half data, then TENSOR_OP_MATH and the group count; channels-last (N, L, C)
   tensors padded to (N, L, 1, C) and set by **cudnnSetTensorNdDescriptorEx(NHWC, 4 dims {N, C,
   L, 1})**, the filter {O, C/g, k, 1} by cudnnSetFilterNdDescriptor(NHWC, 4 dims); **one
   convolution descriptor per direction**; each direction's non-Ex cudnnFind*Algorithm over its
   MaxCount, and for each SUCCESS result in turn its mathType set on that direction's descriptor
   and its workspace asked, the first that fits kept (with its math type set again). The
   deconvolution runs cudnnConvolutionBackwardData as its forward and adds its bias {1, C, 1, 1}
   (NHWC through the same setter) by cudnnAddTensor; its gradients are cudnnConvolutionForward
   and cudnnConvolutionBackwardFilter (x the deconvolution's output gradient) and
   cudnnConvolutionBackwardBias. Against tests/ref/conv.c. */
TEST(compat_conv_nnabla_1d_channels_last_per_direction_descriptors)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(types); k++) {
        const cudnnDataType_t t = types[k];
        /* the convolution: x (N, C, L) -> y (N, O, L'); the deconvolution maps y back to x */
        struct ref_conv rc = {2, 2, 4, 6, 2, {9, 1}, {3, 1}, {0}, {1, 0}, {2, 1}, {1, 1}, false};
        ref_conv_out_dims(&rc);
        const int bd[4] = {1, rc.c, 1, 1};
        struct tview x, y, w, b;
        tconv_views(&rc, t, TV_NHWC, TV_NHWC, &x, &w, &y); /* x (N, C, L, 1), w (O, C/g, k, 1) */
        tview_init(&b, t, 4, bd, TV_NHWC);
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd[3]; /* forward, backward data, backward filter */
        CHECK_OK(cudnnCreateFilterDescriptor(&wd));
        bool ok = CHECK_OK(cudnnSetTensorNdDescriptorEx(x.desc, CUDNN_TENSOR_NHWC, t, 4, x.dims)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptorEx(y.desc, CUDNN_TENSOR_NHWC, t, 4, y.dims)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptorEx(b.desc, CUDNN_TENSOR_NHWC, t, 4, bd)) &&
                  CHECK_OK(cudnnSetFilterNdDescriptor(wd, t, CUDNN_TENSOR_NHWC, 4, w.dims));
        const int pad[2] = {rc.pad[0], 0}, stride[2] = {rc.stride[0], 1}, dil[2] = {1, 1};
        for (int d = 0; d < 3; d++)
            ok = CHECK_OK(cudnnCreateConvolutionDescriptor(&cd[d])) && ok &&
                 CHECK_OK(cudnnSetConvolutionNdDescriptor(cd[d], 2, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                                          CUDNN_DATA_FLOAT)) &&
                 CHECK_OK(cudnnSetConvolutionMathType(cd[d], CUDNN_TENSOR_OP_MATH)) &&
                 CHECK_OK(cudnnSetConvolutionGroupCount(cd[d], rc.groups));
        /* each direction: the first SUCCESS result, its math type set, its workspace */
        int n = 0, m = 0;
        size_t ws[3] = {0};
        cudnnConvolutionFwdAlgo_t fa = 0;
        cudnnConvolutionBwdDataAlgo_t da = 0;
        cudnnConvolutionBwdFilterAlgo_t wa = 0;
        cudnnConvolutionFwdAlgoPerf_t fp[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        cudnnConvolutionBwdDataAlgoPerf_t dp[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        cudnnConvolutionBwdFilterAlgoPerf_t wp[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        bool found[3] = {false, false, false};
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &m)) &&
             CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, x.desc, wd, cd[0], y.desc, m, &n, fp));
        for (int i = 0; ok && i < n && !found[0]; i++) {
            if (fp[i].status != CUDNN_STATUS_SUCCESS) continue;
            ok = CHECK_OK(cudnnSetConvolutionMathType(cd[0], fp[i].mathType)) &&
                 CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, x.desc, wd, cd[0], y.desc, fp[i].algo, &ws[0]));
            fa = fp[i].algo, found[0] = true;
        }
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &m)) &&
             CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, wd, y.desc, cd[1], x.desc, m, &n, dp));
        for (int i = 0; ok && i < n && !found[1]; i++) {
            if (dp[i].status != CUDNN_STATUS_SUCCESS) continue;
            ok = CHECK_OK(cudnnSetConvolutionMathType(cd[1], dp[i].mathType)) &&
                 CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, y.desc, cd[1], x.desc, dp[i].algo, &ws[1]));
            da = dp[i].algo, found[1] = true;
        }
        ok = ok && CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &m)) &&
             CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, x.desc, y.desc, cd[2], wd, m, &n, wp));
        for (int i = 0; ok && i < n && !found[2]; i++) {
            if (wp[i].status != CUDNN_STATUS_SUCCESS) continue;
            ok = CHECK_OK(cudnnSetConvolutionMathType(cd[2], wp[i].mathType)) &&
                 CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x.desc, y.desc, cd[2], wd, wp[i].algo,
                                                                         &ws[2]));
            wa = wp[i].algo, found[2] = true;
        }
        ok = ok && CHECK(found[0] && found[1] && found[2]);
        /* the deconvolution of y into x, its bias, and its gradients from dx (the conv's x) */
        double *yv = tview_random(y.count, -1, 1), *wv = tview_random(w.count, -1, 1), *bv = tview_random(b.count, -1, 1);
        double *dxv = tview_random(x.count, -1, 1), *xw = malloc(sizeof(double) * (size_t)x.count);
        double *dyw = malloc(sizeof(double) * (size_t)y.count), *dww = malloc(sizeof(double) * (size_t)w.count);
        double *dbw = calloc((size_t)b.count, sizeof(double));
        ref_conv_bwd_data(&rc, yv, wv, xw);
        ref_conv_fwd(&rc, dxv, wv, dyw);
        ref_conv_bwd_filter(&rc, dxv, yv, dww);
        for (int64_t i = 0; i < x.count; i++) xw[i] += bv[i / rc.in[0] % rc.c], dbw[i / rc.in[0] % rc.c] += dxv[i];
        void *py = tview_upload(&y, yv), *pw = tview_upload(&w, wv), *pb = tview_upload(&b, bv);
        void *pdx = tview_upload(&x, dxv), *px = tview_upload(&x, NULL), *pdy = tview_upload(&y, NULL);
        void *pdw = tview_upload(&w, NULL), *pdb = tview_upload(&b, NULL);
        void *pws = tbuf_alloc(ws[0] > ws[1] ? (ws[0] > ws[2] ? ws[0] : ws[2]) : (ws[1] > ws[2] ? ws[1] : ws[2]));
        const float one = 1, zero = 0;
        const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH);
        if (ok && CHECK_OK(cudnnConvolutionBackwardData(h, &one, wd, pw, y.desc, py, cd[1], da, pws, ws[1], &zero, x.desc,
                                                        px)) &&
            CHECK_OK(cudnnAddTensor(h, &one, b.desc, pb, &one, x.desc, px)))
            tview_check_blend(&x, px, xw, NULL, 1, 0, tol, "NNabla deconvolution with its bias, 1-D channels-last");
        if (ok && CHECK_OK(cudnnConvolutionForward(h, &one, x.desc, pdx, wd, pw, cd[0], fa, pws, ws[0], &zero, y.desc, pdy)))
            tview_check_blend(&y, pdy, dyw, NULL, 1, 0, tol, "NNabla deconvolution's input gradient (a forward)");
        if (ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, x.desc, pdx, y.desc, py, cd[2], wa, pws, ws[2], &zero,
                                                          wd, pdw)))
            tview_check_blend(&w, pdw, dww, NULL, 1, 0, tol, "NNabla deconvolution's filter gradient");
        if (ok && CHECK_OK(cudnnConvolutionBackwardBias(h, &one, x.desc, pdx, &zero, b.desc, pdb)))
            tview_check(&b, pdb, dbw, "NNabla deconvolution's bias gradient");
        tbuf_free(pws);
        tview_free(&y, py), tview_free(&y, pdy), tview_free(&w, pw), tview_free(&w, pdw);
        tview_free(&b, pb), tview_free(&b, pdb), tview_free(&x, pdx), tview_free(&x, px);
        free(yv), free(wv), free(bv), free(dxv), free(xw), free(dyw), free(dww), free(dbw);
        for (int d = 0; d < 3; d++) cudnnDestroyConvolutionDescriptor(cd[d]);
        cudnnDestroyFilterDescriptor(wd);
        tview_destroy(&x), tview_destroy(&y), tview_destroy(&w), tview_destroy(&b);
    }
}

/* MegEngine's ConvBiasDesc sets CUDNN_TENSOR_OP_MATH on the convolution descriptor as soon as it
   is created, whatever the data, then the group count, then the geometry by
   cudnnSetConvolution2dDescriptor in CROSS_CORRELATION or CONVOLUTION mode with FLOAT compute
   (INT32 for int8); the activation RELU, or IDENTITY for its sigmoid (applied afterwards)
   under IMPLICIT_PRECOMP_GEMM only; cudnnConvolutionBiasActivationForward with alpha1 1 and,
   **without a z, alpha2 0 and zDesc and z the output's own descriptor and buffer** (not yet
   written: NaN here), with one alpha2 1; int8 as NCHW4 (INT8x4, NCHW_VECT_C) with alpha1 the
   ratio of the scales, a float bias and an int8 z scaled by alpha2. Against tests/ref/conv.c. */
TEST(compat_conv_megengine_bias_activation_math_set_first)
{
    static const struct { cudnnDataType_t t; bool mirror; int groups; cudnnActivationMode_t act; bool z; } cases[] = {
        {CUDNN_DATA_FLOAT, true, 2, CUDNN_ACTIVATION_RELU, false},
        {CUDNN_DATA_FLOAT, false, 1, CUDNN_ACTIVATION_IDENTITY, true},
        {CUDNN_DATA_INT8x4, true, 1, CUDNN_ACTIVATION_RELU, false},
        {CUDNN_DATA_INT8x4, false, 1, CUDNN_ACTIVATION_RELU, true},
    };
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const bool q = t == CUDNN_DATA_INT8x4;
        struct ref_conv rc = {2, 2, 8, 8, cases[k].groups, {6, 5}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, cases[k].mirror};
        ref_conv_out_dims(&rc);
        const int bdims[4] = {1, rc.k, 1, 1}, layout = q ? TV_NCHW_VECT : TV_NCHW;
        struct tview x, y, w, b;
        tconv_views(&rc, t, layout, layout, &x, &w, &y);
        tview_init(&b, CUDNN_DATA_FLOAT, 4, bdims, TV_NCHW);
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd;
        cudnnActivationDescriptor_t ad;
        CHECK_OK(cudnnCreateFilterDescriptor(&wd));
        CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
        CHECK_OK(cudnnCreateActivationDescriptor(&ad));
        bool ok = CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH)) &&
                  CHECK_OK(cudnnSetConvolutionGroupCount(cd, rc.groups)) &&
                  CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1,
                                                           rc.convolution ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                                           q ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT)) &&
                  CHECK_OK(cudnnSetFilter4dDescriptor(wd, t, q ? CUDNN_TENSOR_NCHW_VECT_C : CUDNN_TENSOR_NCHW, w.dims[0],
                                                      w.dims[1], w.dims[2], w.dims[3])) &&
                  CHECK_OK(cudnnSetActivationDescriptor(ad, cases[k].act, CUDNN_NOT_PROPAGATE_NAN, 0));
        double *xv = tview_random(x.count, -4, 4), *wv = tview_random(w.count, -3, 3), *zv = tview_random(y.count, -20, 20);
        double *bv = tview_random(b.count, -2, 2), *want = malloc(sizeof(double) * (size_t)y.count);
        if (q) {
            for (int64_t i = 0; i < x.count; i++) xv[i] = round(xv[i]);
            for (int64_t i = 0; i < w.count; i++) wv[i] = round(wv[i]);
            for (int64_t i = 0; i < y.count; i++) zv[i] = round(zv[i]);
        }
        const float a1 = q ? 0.25f : 1.0f, a2 = cases[k].z ? (q ? 0.5f : 1.0f) : 0.0f;
        ref_conv_fwd(&rc, xv, wv, want);
        const int64_t sp = (int64_t)rc.out[0] * rc.out[1];
        for (int64_t i = 0; i < y.count; i++) {
            double v = a1 * want[i] + a2 * (cases[k].z ? zv[i] : 0) + (double)(float)bv[i / sp % rc.k];
            if (cases[k].act == CUDNN_ACTIVATION_RELU && v < 0) v = 0;
            want[i] = q ? ref_quantize(CUDNN_DATA_INT8, v) : v;
        }
        void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *pb = tview_upload(&b, bv);
        void *pz = cases[k].z ? tview_upload(&y, zv) : NULL;
        void *py = tview_upload(&y, NULL);
        if (!q) tbuf_upload(py, (const float[1]){NAN}, sizeof(float)); /* the output's prior contents: unread */
        const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
        size_t ws = 0;
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, x.desc, wd, cd, y.desc, algo, &ws));
        void *pws = ws ? tbuf_alloc(ws) : NULL;
        if (ok && CHECK_OK(cudnnConvolutionBiasActivationForward(h, &a1, x.desc, px, wd, pw, cd, algo, pws, ws, &a2, y.desc,
                                                                 cases[k].z ? pz : py, b.desc, pb, ad, y.desc, py)))
            tview_check_blend(&y, py, want, NULL, 1, 0, tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH),
                              q ? "MegEngine int8 NCHW4 conv bias" : "MegEngine float conv bias (TF32 allowed)");
        tbuf_free(pws);
        tview_free(&x, px), tview_free(&w, pw), tview_free(&b, pb), tview_free(&y, py);
        if (pz) tview_free(&y, pz);
        free(xv), free(wv), free(zv), free(bv), free(want);
        cudnnDestroyFilterDescriptor(wd), cudnnDestroyConvolutionDescriptor(cd), cudnnDestroyActivationDescriptor(ad);
        tview_destroy(&x), tview_destroy(&y), tview_destroy(&w), tview_destroy(&b);
    }
}

/* NVIDIA's convolution sample (conv_sample/conv_sample.cpp, the int8 lines of run_conv_sample.sh:
   -mathType1 -filterFormat2 -dataType2 or -dataType3): x and y set by
   cudnnSetTensorNdDescriptorEx(NCHW_VECT_C) in INT8x4 or INT8x32, the filter by
   cudnnSetFilterNdDescriptor(NCHW_VECT_C), cudnnSetConvolutionNdDescriptor in the sample's
   default **CONVOLUTION mode** with INT32 compute, TENSOR_OP_MATH; for INT8x32 the filter copied
   by cudnnReorderFilterAndBias(CUDNN_DEFAULT_REORDER, no bias) and the descriptor told
   cudnnSetConvolutionReorderType(CUDNN_NO_REORDER) before the forward runs on the copy;
   IMPLICIT_PRECOMP_GEMM with its queried workspace, alpha 0.8 and beta 0, data in [-2, 2]. The
   sample's own check rounds 0.8 times the int32 sum half to even and saturates to int8: against
   tests/ref/conv.c, rounded the same way. */
TEST(compat_conv_nvidia_sample_int8_vect_reordered)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x32};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(types); k++) {
        const cudnnDataType_t t = types[k];
        struct ref_conv rc = {2, 1, 64, 32, 1, {6, 6}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, true};
        ref_conv_out_dims(&rc);
        struct tview x, y, w;
        tconv_views(&rc, t, TV_NCHW_VECT, TV_NCHW_VECT, &x, &w, &y);
        cudnnTensorDescriptor_t xd, yd;
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd;
        tconv_descs_create(&xd, &yd, NULL, &wd, &cd);
        bool ok = CHECK_OK(cudnnSetTensorNdDescriptorEx(xd, CUDNN_TENSOR_NCHW_VECT_C, t, 4, x.dims)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptorEx(yd, CUDNN_TENSOR_NCHW_VECT_C, t, 4, y.dims)) &&
                  CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 2, rc.pad, rc.stride, rc.dil, CUDNN_CONVOLUTION,
                                                           CUDNN_DATA_INT32)) &&
                  CHECK_OK(cudnnSetFilterNdDescriptor(wd, t, CUDNN_TENSOR_NCHW_VECT_C, 4, w.dims)) &&
                  CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
        double *xv = tview_random(x.count, -2, 2), *wv = tview_random(w.count, -2, 2);
        for (int64_t i = 0; i < x.count; i++) xv[i] = round(xv[i]);
        for (int64_t i = 0; i < w.count; i++) wv[i] = round(wv[i]);
        double *want = malloc(sizeof(double) * (size_t)y.count);
        const float alpha = 0.8f, beta = 0;
        ref_conv_fwd(&rc, xv, wv, want);
        for (int64_t i = 0; i < y.count; i++) want[i] = ref_quantize(CUDNN_DATA_INT8, alpha * want[i]);
        void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *py = tview_upload(&y, NULL), *pf = pw;
        if (t == CUDNN_DATA_INT8x32) {
            pf = tview_upload(&w, NULL);
            ok = ok && CHECK_OK(cudnnReorderFilterAndBias(h, wd, CUDNN_DEFAULT_REORDER, pw, pf, 0, NULL, NULL)) &&
                 CHECK_OK(cudnnSetConvolutionReorderType(cd, CUDNN_NO_REORDER));
        }
        const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
        size_t ws = 0;
        ok = ok && CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &ws));
        void *pws = ws ? tbuf_alloc(ws) : NULL;
        if (ok && CHECK_OK(cudnnConvolutionForward(h, &alpha, xd, px, wd, pf, cd, algo, pws, ws, &beta, yd, py)))
            tview_check(&y, py, want, t == CUDNN_DATA_INT8x4 ? "conv_sample INT8x4" : "conv_sample INT8x32, reordered");
        if (pws) tbuf_free(pws);
        if (pf != pw) tview_free(&w, pf);
        tview_free(&x, px), tview_free(&w, pw), tview_free(&y, py);
        free(xv), free(wv), free(want);
        tconv_descs_destroy(xd, yd, NULL, wd, cd);
        tview_destroy(&x), tview_destroy(&y), tview_destroy(&w);
    }
}

/* Paddle-Lite's int8 convolution (lite/backends/cuda/math/cudnn_conv.cc, CudnnConv2DInt8): x and
   the filter INT8 channels-last by the 4-D setters in NHWC format, INT32 compute, y **FLOAT**
   NHWC (INT8_EXT_CONFIG, the scales applied by its own kernels afterwards), alpha 1 and beta 0,
   IMPLICIT_PRECOMP_GEMM when the input and output channels are multiples of 4 and
   IMPLICIT_GEMM otherwise. The first runs (against tests/ref/conv.c); the second, 3 input
   channels, is NOT_SUPPORTED with nothing written, as NVIDIA's library answers it (int8 input
   channels must be multiples of 4: LitLeo/TensorRT_Tutorial issue 4, NVIDIA's forum thread
   1005119). */
TEST(compat_conv_paddle_lite_int8_ext_channels_by_four)
{
    cudnnHandle_t h = test_handle();
    for (int c = 4; c >= 3; c--) {
        struct ref_conv rc = {2, 1, c, 8, 1, {5, 6}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
        ref_conv_out_dims(&rc);
        struct tview x, y;
        tconv_views(&rc, CUDNN_DATA_INT8, TV_NHWC, TV_NHWC, &x, NULL, NULL);
        tconv_views(&rc, CUDNN_DATA_FLOAT, TV_NHWC, TV_NHWC, NULL, NULL, &y);
        struct cdescs d;
        tconv_descs_create(&d.x, &d.y, NULL, &d.w, &d.conv);
        CHECK_OK(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NHWC, CUDNN_DATA_INT8, rc.n, rc.c, rc.in[0], rc.in[1]));
        CHECK_OK(cudnnSetFilter4dDescriptor(d.w, CUDNN_DATA_INT8, CUDNN_TENSOR_NHWC, rc.k, rc.c, 3, 3));
        CHECK_OK(cudnnSetConvolution2dDescriptor(d.conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_INT32));
        CHECK_OK(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, rc.n, rc.k, rc.out[0], rc.out[1]));
        double *xv = tview_random(x.count, -8, 8), *wv = tview_random(ref_conv_w_count(&rc), -8, 8);
        for (int64_t i = 0; i < x.count; i++) xv[i] = round(xv[i]);
        for (long i = 0; i < ref_conv_w_count(&rc); i++) wv[i] = round(wv[i]);
        /* the filter stored K, R, S, C */
        signed char wk[8 * 9 * 4];
        for (int k = 0; k < rc.k; k++)
            for (int ch = 0; ch < rc.c; ch++)
                for (int rs = 0; rs < 9; rs++) wk[(k * 9 + rs) * rc.c + ch] = (signed char)wv[(k * rc.c + ch) * 9 + rs];
        void *px = tview_upload(&x, xv), *pw = tbuf_from(wk, sizeof wk), *py = tview_upload(&y, NULL);
        void *snapshot = tbuf_snapshot(py, tview_bytes(&y));
        const cudnnConvolutionFwdAlgo_t algo = c % 4 == 0 ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
                                                          : CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
        const float one = 1, zero = 0;
        size_t ws = 0;
        if (c % 4 == 0) {
            double *want = malloc(sizeof(double) * (size_t)y.count);
            ref_conv_fwd(&rc, xv, wv, want);
            if (CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, algo, &ws))) {
                void *pws = ws ? tbuf_alloc(ws) : NULL;
                if (CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, algo, pws, ws, &zero, d.y, py)))
                    tview_check(&y, py, want, "Paddle-Lite int8 in, float out");
                if (pws) tbuf_free(pws);
            }
            free(want);
        } else {
            CHECK_STATUS(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, algo, NULL, 0, &zero, d.y, py),
                         CUDNN_STATUS_NOT_SUPPORTED);
            CHECK(tbuf_unchanged(py, snapshot, tview_bytes(&y), "y of a refused int8 convolution"));
        }
        free(snapshot);
        tview_free(&x, px), tview_free(&y, py), tbuf_free(pw);
        free(xv), free(wv);
        cdescs_destroy(&d);
        tview_destroy(&x), tview_destroy(&y);
    }
}

/* Thor's pre-run check (GpuConvolution.cpp): cudnnQueryRuntimeError(handle, &status,
   CUDNN_ERRQUERY_BLOCKING, **NULL tag**) must return SUCCESS, and the status it reports be SUCCESS
   after a run. */
static bool thor_no_runtime_error(cudnnHandle_t h)
{
    cudnnStatus_t rs = CUDNN_STATUS_INTERNAL_ERROR;
    return CHECK_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_BLOCKING, NULL)) && CHECK_OK(rs);
}

/* Thor (ConvolutionKernelRequirement.h, GpuConvolution.cpp): half NCHW tensors and filter by the
   4-D setters, y's dims from cudnnGetConvolution2dForwardOutputDim, **CUDNN_CONVOLUTION mode**
   (the filter mirrored) with FLOAT compute and TENSOR_OP_MATH; per direction the runtime error
   queried (BLOCKING, tag NULL), the **non-Ex** cudnnFind*Algorithm over an array longer than the
   algorithm count, then each SUCCESS result run with a workspace of its `memory` (NULL when 0)
   and **beta 1** (BETA_ACCUMULATE), the runtime error queried before and after; the first that
   runs is kept. Every SUCCESS result is checked here: any of them may come first on a GPU. */
TEST(compat_conv_thor_find_then_accumulate_each_result)
{
    enum { MAX_ALGOS = 10 };
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t t = CUDNN_DATA_HALF;
    struct ref_conv rc = {2, 2, 3, 4, 1, {7, 8}, {3, 2}, {0}, {1, 0}, {2, 1}, {1, 1}, true};
    ref_conv_out_dims(&rc);
    struct tview x, y, w;
    tconv_views(&rc, t, TV_NCHW, TV_NCHW, &x, &w, &y);
    struct cdescs d;
    CHECK_OK(cudnnCreateTensorDescriptor(&d.x));
    CHECK_OK(cudnnCreateTensorDescriptor(&d.y));
    CHECK_OK(cudnnCreateFilterDescriptor(&d.w));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&d.conv));
    int on = 0, ok_ = 0, oh = 0, ow = 0;
    bool ok = CHECK_OK(cudnnSetConvolution2dDescriptor(d.conv, rc.pad[0], rc.pad[1], rc.stride[0], rc.stride[1], 1, 1,
                                                       CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT)) &&
              CHECK_OK(cudnnSetConvolutionMathType(d.conv, CUDNN_TENSOR_OP_MATH)) &&
              CHECK_OK(cudnnSetFilter4dDescriptor(d.w, t, CUDNN_TENSOR_NCHW, w.dims[0], w.dims[1], w.dims[2],
                                                  w.dims[3])) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, t, x.dims[0], x.dims[1], x.dims[2],
                                                  x.dims[3])) &&
              CHECK_OK(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &on, &ok_, &oh, &ow)) &&
              CHECK(on == rc.n && ok_ == rc.k && oh == rc.out[0] && ow == rc.out[1]) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, t, on, ok_, oh, ow));
    double *xv = tview_random(x.count, -1, 1), *wv = tview_random(w.count, -1, 1), *dyv = tview_random(y.count, -1, 1);
    double *y0 = tview_random(y.count, -1, 1), *dx0 = tview_random(x.count, -1, 1), *dw0 = tview_random(w.count, -1, 1);
    double *yw = malloc(sizeof(double) * (size_t)y.count), *dxw = malloc(sizeof(double) * (size_t)x.count);
    double *dww = malloc(sizeof(double) * (size_t)w.count);
    void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *pdy = tview_upload(&y, dyv);
    void *py = tview_upload(&y, y0), *pdx = tview_upload(&x, dx0), *pdw = tview_upload(&w, dw0);
    ref_conv_fwd(&rc, xv, wv, yw);
    ref_conv_bwd_data(&rc, dyv, wv, dxw);
    ref_conv_bwd_filter(&rc, xv, dyv, dww);
    const float one = 1;
    const double tol = tconv_tolerance(t, t, CUDNN_TENSOR_OP_MATH);
    int n = 0, runs = 0;
    cudnnConvolutionFwdAlgoPerf_t fp[MAX_ALGOS];
    cudnnConvolutionBwdDataAlgoPerf_t dp[MAX_ALGOS];
    cudnnConvolutionBwdFilterAlgoPerf_t wp[MAX_ALGOS];
    if (ok && thor_no_runtime_error(h) &&
        CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, d.x, d.w, d.conv, d.y, MAX_ALGOS, &n, fp)) && CHECK(n > 0))
        for (int i = 0; i < n; i++) {
            if (fp[i].status != CUDNN_STATUS_SUCCESS) continue;
            void *ws = fp[i].memory ? tbuf_alloc(fp[i].memory) : NULL;
            tview_store(&y, py, y0);
            if (thor_no_runtime_error(h) &&
                CHECK_OK(cudnnConvolutionForward(h, &one, d.x, px, d.w, pw, d.conv, fp[i].algo, ws, fp[i].memory, &one,
                                                 d.y, py)) &&
                thor_no_runtime_error(h))
                runs += tview_check_blend(&y, py, yw, y0, 1, 1, tol, "Thor's forward accumulated into y");
            tbuf_free(ws);
        }
    if (ok && thor_no_runtime_error(h) &&
        CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, d.w, d.y, d.conv, d.x, MAX_ALGOS, &n, dp)) && CHECK(n > 0))
        for (int i = 0; i < n; i++) {
            if (dp[i].status != CUDNN_STATUS_SUCCESS) continue;
            void *ws = dp[i].memory ? tbuf_alloc(dp[i].memory) : NULL;
            tview_store(&x, pdx, dx0);
            if (thor_no_runtime_error(h) &&
                CHECK_OK(cudnnConvolutionBackwardData(h, &one, d.w, pw, d.y, pdy, d.conv, dp[i].algo, ws, dp[i].memory,
                                                      &one, d.x, pdx)) &&
                thor_no_runtime_error(h))
                runs += tview_check_blend(&x, pdx, dxw, dx0, 1, 1, tol, "Thor's backward data accumulated into dx");
            tbuf_free(ws);
        }
    if (ok && thor_no_runtime_error(h) &&
        CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, d.x, d.y, d.conv, d.w, MAX_ALGOS, &n, wp)) && CHECK(n > 0))
        for (int i = 0; i < n; i++) {
            if (wp[i].status != CUDNN_STATUS_SUCCESS) continue;
            void *ws = wp[i].memory ? tbuf_alloc(wp[i].memory) : NULL;
            tview_store(&w, pdw, dw0);
            if (thor_no_runtime_error(h) &&
                CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, d.x, px, d.y, pdy, d.conv, wp[i].algo, ws,
                                                        wp[i].memory, &one, d.w, pdw)) &&
                thor_no_runtime_error(h))
                runs += tview_check_blend(&w, pdw, dww, dw0, 1, 1, tol, "Thor's backward filter accumulated into dw");
            tbuf_free(ws);
        }
    CHECK(runs >= 3);
    tview_free(&x, px), tview_free(&x, pdx), tview_free(&w, pw), tview_free(&w, pdw);
    tview_free(&y, pdy), tview_free(&y, py);
    free(xv), free(wv), free(dyv), free(y0), free(dx0), free(dw0), free(yw), free(dxw), free(dww);
    tview_destroy(&x), tview_destroy(&y), tview_destroy(&w);
    cdescs_destroy(&d);
}

/* RAF's generated cuDNN dispatch (src/op/dispatch/cudnn/impl.cc): every tensor and the filter by
   the Nd setters padded to 4 dims with packed strides, cudnnSetConvolutionNdDescriptor with **the
   data's own type as compute type** (DOUBLE for double), the group count after it, no math type;
   per direction the **non-Ex cudnnFind*Algorithm asked for 1 result**, whose status must be SUCCESS
   (else a fatal error through cudnnGetErrorString), its algorithm's workspace from the size query,
   alpha 1 and beta 0. */
TEST(compat_conv_raf_find_one_result_each_direction)
{
    static const struct { cudnnDataType_t t; int groups; } cases[] = {
        {CUDNN_DATA_FLOAT, 1}, {CUDNN_DATA_FLOAT, 2}, {CUDNN_DATA_DOUBLE, 1}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        struct ref_conv rc = {2, 2, 4, 6, cases[k].groups, {8, 7}, {3, 3}, {0}, {1, 0}, {1, 2}, {2, 1}, false};
        ref_conv_out_dims(&rc);
        struct tview x, y, w;
        tconv_views(&rc, t, TV_NCHW, TV_NCHW, &x, &w, &y);
        cudnnFilterDescriptor_t wd;
        cudnnConvolutionDescriptor_t cd;
        CHECK_OK(cudnnCreateFilterDescriptor(&wd));
        CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
        bool ok = CHECK_OK(cudnnSetFilterNdDescriptor(wd, t, CUDNN_TENSOR_NCHW, 4, w.dims)) &&
                  CHECK_OK(cudnnSetConvolutionNdDescriptor(cd, 2, rc.pad, rc.stride, rc.dil, CUDNN_CROSS_CORRELATION, t)) &&
                  CHECK_OK(cudnnSetConvolutionGroupCount(cd, rc.groups));
        double *xv = tview_random(x.count, -1, 1), *wv = tview_random(w.count, -1, 1), *dyv = tview_random(y.count, -1, 1);
        double *yw = malloc(sizeof(double) * (size_t)y.count), *dxw = malloc(sizeof(double) * (size_t)x.count);
        double *dww = malloc(sizeof(double) * (size_t)w.count);
        ref_conv_fwd(&rc, xv, wv, yw);
        ref_conv_bwd_data(&rc, dyv, wv, dxw);
        ref_conv_bwd_filter(&rc, xv, dyv, dww);
        void *px = tview_upload(&x, xv), *pw = tview_upload(&w, wv), *pdy = tview_upload(&y, dyv);
        void *py = tview_upload(&y, NULL), *pdx = tview_upload(&x, NULL), *pdw = tview_upload(&w, NULL);
        struct tscale one, zero;
        int cnt = 0;
        size_t ws = 0;
        cudnnConvolutionFwdAlgoPerf_t fr;
        cudnnConvolutionBwdDataAlgoPerf_t dr;
        cudnnConvolutionBwdFilterAlgoPerf_t wr;
        if (ok && CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, x.desc, wd, cd, y.desc, 1, &cnt, &fr)) &&
            CHECK(cnt == 1 && fr.status == CUDNN_STATUS_SUCCESS) &&
            CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, x.desc, wd, cd, y.desc, fr.algo, &ws))) {
            void *pws = ws ? tbuf_alloc(ws) : NULL;
            if (CHECK_OK(cudnnConvolutionForward(h, tscale(&one, t, 1), x.desc, px, wd, pw, cd, fr.algo, pws, ws,
                                                 tscale(&zero, t, 0), y.desc, py)))
                tview_check_blend(&y, py, yw, NULL, 1, 0, tconv_tolerance(t, t, fr.mathType), "RAF's conv2d");
            tbuf_free(pws);
        }
        if (ok && CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, wd, y.desc, cd, x.desc, 1, &cnt, &dr)) &&
            CHECK(cnt == 1 && dr.status == CUDNN_STATUS_SUCCESS) &&
            CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, y.desc, cd, x.desc, dr.algo, &ws))) {
            void *pws = ws ? tbuf_alloc(ws) : NULL;
            if (CHECK_OK(cudnnConvolutionBackwardData(h, tscale(&one, t, 1), wd, pw, y.desc, pdy, cd, dr.algo, pws, ws,
                                                      tscale(&zero, t, 0), x.desc, pdx)))
                tview_check_blend(&x, pdx, dxw, NULL, 1, 0, tconv_tolerance(t, t, dr.mathType), "RAF's conv2d_dx");
            tbuf_free(pws);
        }
        if (ok && CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, x.desc, y.desc, cd, wd, 1, &cnt, &wr)) &&
            CHECK(cnt == 1 && wr.status == CUDNN_STATUS_SUCCESS) &&
            CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x.desc, y.desc, cd, wd, wr.algo, &ws))) {
            void *pws = ws ? tbuf_alloc(ws) : NULL;
            if (CHECK_OK(cudnnConvolutionBackwardFilter(h, tscale(&one, t, 1), x.desc, px, y.desc, pdy, cd, wr.algo, pws,
                                                        ws, tscale(&zero, t, 0), wd, pdw)))
                tview_check_blend(&w, pdw, dww, NULL, 1, 0, tconv_tolerance(t, t, wr.mathType), "RAF's conv2d_dw");
            tbuf_free(pws);
        }
        tview_free(&x, px), tview_free(&x, pdx), tview_free(&w, pw), tview_free(&w, pdw);
        tview_free(&y, pdy), tview_free(&y, py);
        free(xv), free(wv), free(dyv), free(yw), free(dxw), free(dww);
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroyConvolutionDescriptor(cd);
        tview_destroy(&x), tview_destroy(&y), tview_destroy(&w);
    }
}
