/* lrn.c: tests of the LRN descriptor and cross-channel LRN forward and backward: every data type,
   NCHW / NHWC / padded / strided layouts and 5-D, odd and even window sizes (even ones look
   further ahead), windows wider than the channel count, alpha and beta (beta = 0 over NaN),
   finite-difference gradients, and bad inputs with their exact statuses and nothing written. */
#include "tensors.h"

#include "ref/lrn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cudnnDataType_t all_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                            CUDNN_DATA_BFLOAT16};

TEST_ONCE(lrn_descriptor)
{
    cudnnLRNDescriptor_t d;
    CHECK_STATUS(cudnnCreateLRNDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnCreateLRNDescriptor(&d));
    unsigned n = 0;
    double a = 0, b = 0, k = 0;
    CHECK_OK(cudnnGetLRNDescriptor(d, &n, &a, &b, &k));
    CHECK(n == 5 && a == 1e-4 && b == 0.75 && k == 2.0);
    CHECK_OK(cudnnSetLRNDescriptor(d, 16, -0.5, 0.01, 1e-5));
    CHECK_OK(cudnnSetLRNDescriptor(d, 1, 0.25, 2.5, 3));
    CHECK_STATUS(cudnnSetLRNDescriptor(d, 0, 1, 1, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetLRNDescriptor(d, 17, 1, 1, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetLRNDescriptor(d, 5, 1, 0.009, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetLRNDescriptor(d, 5, 1, 1, 0.9e-5), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetLRNDescriptor(NULL, 5, 1, 1, 1), CUDNN_STATUS_BAD_PARAM);
    /* failures changed nothing; NULL outputs are skipped */
    CHECK_OK(cudnnGetLRNDescriptor(d, &n, NULL, NULL, NULL));
    CHECK_OK(cudnnGetLRNDescriptor(d, NULL, &a, &b, &k));
    CHECK(n == 1 && a == 0.25 && b == 2.5 && k == 3);
    CHECK_STATUS(cudnnGetLRNDescriptor(NULL, &n, &a, &b, &k), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyLRNDescriptor(d));
    CHECK_OK(cudnnDestroyLRNDescriptor(NULL));
    CHECK_STATUS(cudnnDestroyLRNDescriptor(d), CUDNN_STATUS_BAD_PARAM);
}

static void lrn_case(cudnnDataType_t dtype, int rank, const int dims[], int layout, unsigned wn, double alpha,
                     double beta)
{
    cudnnHandle_t h = test_handle();
    struct ref_lrn_params q = {(int)wn, 1.5, 0.75, 1.25};
    cudnnLRNDescriptor_t d;
    CHECK_OK(cudnnCreateLRNDescriptor(&d));
    CHECK_OK(cudnnSetLRNDescriptor(d, wn, q.alpha, q.beta, q.k));
    struct tview t;
    tview_init(&t, dtype, rank, dims, layout);
    int64_t n = t.count, s = n / ((int64_t)dims[0] * dims[1]);
    double *x = malloc((size_t)n * sizeof *x), *dy = malloc((size_t)n * sizeof *dy);
    double *prior = malloc((size_t)n * sizeof *prior), *want = malloc((size_t)n * sizeof *want);
    tfill_random(CUDNN_DATA_DOUBLE, x, n, -2, 2);
    tfill_random(CUDNN_DATA_DOUBLE, dy, n, -1, 1);
    tfill_random(CUDNN_DATA_DOUBLE, prior, n, -1, 1);
    void *bx = tview_upload(&t, x), *bdy = tview_upload(&t, dy), *by = tview_upload(&t, beta != 0 ? prior : NULL);
    void *bdx = tview_upload(&t, beta != 0 ? prior : NULL);
    struct tscale sa, sb;
    const void *pa = tscale(&sa, dtype, alpha), *pb = tscale(&sb, dtype, beta);
    char what[200];
    snprintf(what, sizeof what, "LRN %s %dD %s n=%u", tdtype_size(dtype) == 8 ? "double" : dtype == CUDNN_DATA_FLOAT ? "float" : "16-bit",
             rank, tview_layout_name(layout), wn);
    if (CHECK_OK(cudnnLRNCrossChannelForward(h, d, CUDNN_LRN_CROSS_CHANNEL_DIM1, pa, t.desc, bx, pb, t.desc, by))) {
        ref_lrn_forward(dims[0], dims[1], s, &q, x, want);
        for (int64_t i = 0; i < n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * prior[i] : 0);
        tview_check(&t, by, want, what);
        tview_gaps_intact(&t, by, what);
    }
    if (CHECK_OK(cudnnLRNCrossChannelBackward(h, d, CUDNN_LRN_CROSS_CHANNEL_DIM1, pa, t.desc, by, t.desc, bdy,
                                              t.desc, bx, pb, t.desc, bdx))) {
        ref_lrn_backward(dims[0], dims[1], s, &q, x, dy, want);
        for (int64_t i = 0; i < n; i++) want[i] = alpha * want[i] + (beta != 0 ? beta * prior[i] : 0);
        tview_check(&t, bdx, want, what);
        tview_gaps_intact(&t, bdx, what);
    }
    tbuf_free(bx);
    tbuf_free(bdy);
    tbuf_free(by);
    tbuf_free(bdx);
    free(x);
    free(dy);
    free(prior);
    free(want);
    tview_destroy(&t);
    cudnnDestroyLRNDescriptor(d);
}

TEST(lrn_types_layouts_windows)
{
    static const unsigned windows[] = {1, 2, 5, 16};
    int dims[4] = {2, 7, 3, 2};
    for (size_t t = 0; t < 4; t++)
        for (int layout = 0; layout < TV_LAYOUTS; layout++)
            for (size_t w = 0; w < 4; w++)
                lrn_case(all_types[t], 4, dims, layout, windows[w], (w + layout) % 2 ? 0.5 : 1,
                         (w + layout) % 2 ? 0.75 : 0);
    int d5[5] = {2, 5, 2, 3, 2}, one[4] = {1, 3, 1, 1};
    for (size_t t = 0; t < 4; t++) {
        lrn_case(all_types[t], 5, d5, TV_NCHW, 4, 1, 0);
        lrn_case(all_types[t], 5, d5, TV_NCHW_PADDED, 3, 2, 0.5);
        lrn_case(all_types[t], 4, one, TV_NHWC, 7, 1, 0);
    }
}

TEST(lrn_backward_finite_differences)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {2, 6, 2, 2};
    struct tview t;
    tview_init(&t, CUDNN_DATA_DOUBLE, 4, dims, TV_NHWC);
    for (unsigned wn = 2; wn <= 5; wn += 3) {
        struct ref_lrn_params q = {(int)wn, 2.0, 0.6, 1.5};
        cudnnLRNDescriptor_t d;
        CHECK_OK(cudnnCreateLRNDescriptor(&d));
        CHECK_OK(cudnnSetLRNDescriptor(d, wn, q.alpha, q.beta, q.k));
        double x[48], dy[48], y[48], dx[48], one = 1, zero = 0;
        tfill_random(CUDNN_DATA_DOUBLE, x, 48, -2, 2);
        tfill_random(CUDNN_DATA_DOUBLE, dy, 48, -1, 1);
        void *bx = tview_upload(&t, x), *bdy = tview_upload(&t, dy), *by = tview_upload(&t, NULL), *bdx = tview_upload(&t, NULL);
        CHECK_OK(cudnnLRNCrossChannelForward(h, d, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, t.desc, bx, &zero, t.desc, by));
        CHECK_OK(cudnnLRNCrossChannelBackward(h, d, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, t.desc, by, t.desc, bdy,
                                              t.desc, bx, &zero, t.desc, bdx));
        tview_download(&t, bdx, dx);
        for (int i = 0; i < 48; i++) {
            double keep = x[i], lp = 0, lm = 0;
            x[i] = keep + 1e-6;
            ref_lrn_forward(2, 6, 4, &q, x, y);
            for (int j = 0; j < 48; j++) lp += dy[j] * y[j];
            x[i] = keep - 1e-6;
            ref_lrn_forward(2, 6, 4, &q, x, y);
            for (int j = 0; j < 48; j++) lm += dy[j] * y[j];
            x[i] = keep;
            double fd = (lp - lm) / 2e-6;
            if (fabs(fd - dx[i]) > 1e-6 * fmax(1, fabs(fd))) {
                FAIL("n=%u dx[%d]: library %.12g, finite differences %.12g", wn, i, dx[i], fd);
                break;
            }
        }
        tbuf_free(bx);
        tbuf_free(bdy);
        tbuf_free(by);
        tbuf_free(bdx);
        cudnnDestroyLRNDescriptor(d);
    }
    tview_destroy(&t);
}

TEST(lrn_bad_inputs)
{
    cudnnHandle_t h = test_handle();
    cudnnLRNDescriptor_t d;
    CHECK_OK(cudnnCreateLRNDescriptor(&d));
    int dims[4] = {2, 4, 2, 2}, d3[3] = {2, 4, 4}, other[4] = {2, 4, 2, 3};
    int d5[5] = {1, 2, 2, 2, 2};
    struct tview x, y, xh, x3, xo, x5s;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    tview_init(&y, CUDNN_DATA_FLOAT, 4, dims, TV_NHWC);
    tview_init(&xh, CUDNN_DATA_HALF, 4, dims, TV_NCHW);
    tview_init(&x3, CUDNN_DATA_FLOAT, 3, d3, TV_NCHW);
    tview_init(&xo, CUDNN_DATA_FLOAT, 4, other, TV_NCHW);
    tview_init(&x5s, CUDNN_DATA_FLOAT, 5, d5, TV_PADDED);
    double v[32];
    tfill_random(CUDNN_DATA_DOUBLE, v, 32, -1, 1);
    void *bx = tview_upload(&x, v), *by = tview_upload(&x, v), *bdx = tview_upload(&x, v), *big = tview_upload(&x5s, NULL);
    void *snap_y = tbuf_snapshot(by, tview_bytes(&x)), *snap_dx = tbuf_snapshot(bdx, tview_bytes(&x));
    float one = 1, zero = 0;
    const cudnnLRNMode_t M = CUDNN_LRN_CROSS_CHANNEL_DIM1;
#define EXPECT(call, status)                                                                      \
    do {                                                                                          \
        CHECK_STATUS(call, status);                                                               \
        if (!tbuf_unchanged(by, snap_y, tview_bytes(&x), "an output") || !tbuf_unchanged(bdx, snap_dx, tview_bytes(&x), "an output")) FAIL("written by %s", #call); \
    } while (0)
    EXPECT(cudnnLRNCrossChannelForward(NULL, d, M, &one, x.desc, bx, &zero, x.desc, by), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelForward(h, NULL, M, &one, x.desc, bx, &zero, x.desc, by), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelForward(h, d, (cudnnLRNMode_t)1, &one, x.desc, bx, &zero, x.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelForward(h, d, M, NULL, x.desc, bx, &zero, x.desc, by), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelForward(h, d, M, &one, x.desc, NULL, &zero, x.desc, by), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelForward(h, d, M, &one, x.desc, bx, &zero, x.desc, NULL), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelForward(h, d, M, &one, x3.desc, bx, &zero, x3.desc, by), CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnLRNCrossChannelForward(h, d, M, &one, x5s.desc, big, &zero, x5s.desc, by), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelForward(h, d, M, &one, x.desc, bx, &zero, xh.desc, by), CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnLRNCrossChannelForward(h, d, M, &one, x.desc, bx, &zero, xo.desc, by), CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnLRNCrossChannelForward(h, d, M, &one, x.desc, by, &zero, x.desc, by), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelBackward(h, d, M, &one, x.desc, by, x.desc, bx, x.desc, bx, NULL, x.desc, bdx),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelBackward(h, d, M, &one, x.desc, by, NULL, bx, x.desc, bx, &zero, x.desc, bdx),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnLRNCrossChannelBackward(h, d, M, &one, x.desc, by, x.desc, bx, x.desc, bx, &zero, xo.desc, bdx),
           CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnLRNCrossChannelBackward(h, d, M, &one, xh.desc, by, x.desc, bx, x.desc, bx, &zero, x.desc, bdx),
           CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnLRNCrossChannelBackward(h, d, M, &one, x.desc, by, x.desc, bdx, x.desc, bx, &zero, x.desc, bdx),
           CUDNN_STATUS_BAD_PARAM); /* dx on dy: each dx element reads its neighbours' dy */
    /* different layouts of the same dims are fine */
    CHECK_OK(cudnnLRNCrossChannelForward(h, d, M, &one, x.desc, bx, &zero, y.desc, by));
#undef EXPECT
    /* the backward does not read y: dx may be y's buffer, with the result of separate buffers */
    void *bdy = tview_upload(&x, v), *bdx2 = tview_upload(&x, NULL);
    double sep[32];
    CHECK_OK(cudnnLRNCrossChannelBackward(h, d, M, &one, x.desc, by, x.desc, bdy, x.desc, bx, &zero, x.desc, bdx2));
    tview_download(&x, bdx2, sep);
    CHECK_OK(cudnnLRNCrossChannelBackward(h, d, M, &one, x.desc, by, x.desc, bdy, x.desc, bx, &zero, x.desc, by));
    tview_holds(&x, by, sep, "LRN backward with dx on y");
    tbuf_free(bdy);
    tbuf_free(bdx2);
    tbuf_free(bx);
    tbuf_free(by);
    tbuf_free(bdx);
    tbuf_free(big);
    free(snap_y);
    free(snap_dx);
    struct tview *ts[] = {&x, &y, &xh, &x3, &xo, &x5s};
    for (size_t i = 0; i < 6; i++) tview_destroy(ts[i]);
    cudnnDestroyLRNDescriptor(d);
}
