/* divnorm.c: tests of divisive normalization, forward and backward: every data type, layouts,
   4-D and 5-D, means given or NULL, dMeans given or NULL, window sizes odd and even, alpha and
   beta (beta = 0 over NaN), in place, finite-difference gradients for x and the means, and bad
   inputs with their exact statuses and nothing written. */
#include "tensors.h"

#include "ref/lrn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cudnnDataType_t all_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                            CUDNN_DATA_BFLOAT16};

struct dn_case {
    cudnnDataType_t dtype;
    int rank, dims[5], layout;
    unsigned wn;
    bool means, dmeans, in_place;
    double alpha, beta;
};

static void dn_run(const struct dn_case *c)
{
    cudnnHandle_t h = test_handle();
    struct ref_lrn_params q = {(int)c->wn, 1.5, 0.8, 0.75};
    cudnnLRNDescriptor_t d;
    CHECK_OK(cudnnCreateLRNDescriptor(&d));
    CHECK_OK(cudnnSetLRNDescriptor(d, c->wn, q.alpha, q.beta, q.k));
    struct tview t;
    tview_init(&t, c->dtype, c->rank, c->dims, c->layout);
    int64_t n = t.count, dims5[5] = {c->dims[0], c->dims[1], 1, 1, 1};
    for (int i = 2; i < c->rank; i++) dims5[i + 5 - c->rank] = c->dims[i];
    double *x = malloc((size_t)n * sizeof *x), *m = malloc((size_t)n * sizeof *m), *dy = malloc((size_t)n * sizeof *dy);
    double *prior = malloc((size_t)n * sizeof *prior), *prior2 = malloc((size_t)n * sizeof *prior2);
    double *want = malloc((size_t)n * sizeof *want);
    tfill_random(CUDNN_DATA_DOUBLE, x, n, -2, 2);
    tfill_random(CUDNN_DATA_DOUBLE, m, n, -0.5, 0.5);
    tfill_random(CUDNN_DATA_DOUBLE, dy, n, -1, 1);
    tfill_random(CUDNN_DATA_DOUBLE, prior, n, -1, 1);
    tfill_random(CUDNN_DATA_DOUBLE, prior2, n, -1, 1);
    void *bx = tview_upload(&t, x), *bm = c->means ? tview_upload(&t, m) : NULL, *bdy = tview_upload(&t, dy);
    void *bt1 = tview_upload(&t, NULL), *bt2 = tview_upload(&t, NULL);
    void *by = c->in_place ? bx : tview_upload(&t, c->beta != 0 ? prior : NULL);
    void *bdx = tview_upload(&t, c->beta != 0 ? prior : NULL), *bdm = c->dmeans ? tview_upload(&t, c->beta != 0 ? prior2 : NULL) : NULL;
    struct tscale sa, sb;
    const void *pa = tscale(&sa, c->dtype, c->alpha), *pb = tscale(&sb, c->dtype, c->beta);
    char what[200];
    snprintf(what, sizeof what, "divnorm %s %dD %s n=%u means %d dmeans %d in place %d", tdtype_size(c->dtype) == 8 ? "double"
             : c->dtype == CUDNN_DATA_FLOAT ? "float" : "16-bit", c->rank, tview_layout_name(c->layout), c->wn,
             c->means, c->dmeans, c->in_place);
    const double *mref = c->means ? m : NULL;
    /* backward first: the in-place forward overwrites x */
    if (CHECK_OK(cudnnDivisiveNormalizationBackward(h, d, CUDNN_DIVNORM_PRECOMPUTED_MEANS, pa, t.desc, bx, bm, bdy,
                                                    bt1, bt2, pb, t.desc, bdx, bdm))) {
        ref_divnorm_backward(dims5, c->rank - 2, &q, x, mref, dy, want);
        double *wm = malloc((size_t)n * sizeof *wm);
        for (int64_t i = 0; i < n; i++) {
            wm[i] = -c->alpha * want[i] + (c->beta != 0 ? c->beta * prior2[i] : 0);
            want[i] = c->alpha * want[i] + (c->beta != 0 ? c->beta * prior[i] : 0);
        }
        tview_check(&t, bdx, want, what);
        tview_gaps_intact(&t, bdx, what);
        if (c->dmeans) {
            tview_check(&t, bdm, wm, what);
            tview_gaps_intact(&t, bdm, what);
        }
        free(wm);
    }
    if (CHECK_OK(cudnnDivisiveNormalizationForward(h, d, CUDNN_DIVNORM_PRECOMPUTED_MEANS, pa, t.desc, bx, bm, bt1,
                                                   bt2, pb, t.desc, by))) {
        ref_divnorm_forward(dims5, c->rank - 2, &q, x, mref, want);
        for (int64_t i = 0; i < n; i++)
            want[i] = c->alpha * want[i] + (c->beta != 0 ? c->beta * (c->in_place ? x[i] : prior[i]) : 0);
        tview_check(&t, by, want, what);
        tview_gaps_intact(&t, by, what);
    }
    void *bufs[] = {bx, bm, bdy, bt1, bt2, c->in_place ? NULL : by, bdx, bdm};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) tbuf_free(bufs[i]);
    free(x);
    free(m);
    free(dy);
    free(prior);
    free(prior2);
    free(want);
    tview_destroy(&t);
    cudnnDestroyLRNDescriptor(d);
}

TEST(divnorm_types_layouts_windows)
{
    for (size_t t = 0; t < 4; t++) {
        for (int layout = 0; layout < TV_LAYOUTS; layout++) {
            for (unsigned wn = 1; wn <= 4; wn++) {
                struct dn_case c = {all_types[t], 4, {2, 3, 4, 5}, layout, wn, (wn + layout) % 2 == 0,
                                    wn % 2 == 1, wn == 3 && layout == TV_NHWC, 1, 0};
                if ((layout + wn) % 3 == 1) {
                    c.alpha = 0.5;
                    c.beta = 0.75;
                }
                dn_run(&c);
            }
        }
        struct dn_case c5 = {all_types[t], 5, {1, 2, 3, 4, 3}, TV_NHWC, 3, true, true, false, 1.5, 0.5};
        dn_run(&c5);
        struct dn_case c1 = {all_types[t], 4, {2, 2, 1, 1}, TV_NCHW, 5, true, false, false, 1, 0};
        dn_run(&c1);
    }
}

TEST(divnorm_backward_finite_differences)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {1, 2, 4, 3};
    int64_t dims5[5] = {1, 2, 1, 4, 3};
    struct tview t;
    tview_init(&t, CUDNN_DATA_DOUBLE, 4, dims, TV_NCHW);
    struct ref_lrn_params q = {3, 2.0, 0.6, 1.5};
    cudnnLRNDescriptor_t d;
    CHECK_OK(cudnnCreateLRNDescriptor(&d));
    CHECK_OK(cudnnSetLRNDescriptor(d, 3, q.alpha, q.beta, q.k));
    double x[24], m[24], dy[24], y[24], dx[24], dm[24], one = 1, zero = 0;
    tfill_random(CUDNN_DATA_DOUBLE, x, 24, -2, 2);
    tfill_random(CUDNN_DATA_DOUBLE, m, 24, -0.5, 0.5);
    tfill_random(CUDNN_DATA_DOUBLE, dy, 24, -1, 1);
    void *bx = tview_upload(&t, x), *bm = tview_upload(&t, m), *bdy = tview_upload(&t, dy), *bt1 = tview_upload(&t, NULL);
    void *bt2 = tview_upload(&t, NULL), *bdx = tview_upload(&t, NULL), *bdm = tview_upload(&t, NULL);
    CHECK_OK(cudnnDivisiveNormalizationBackward(h, d, CUDNN_DIVNORM_PRECOMPUTED_MEANS, &one, t.desc, bx, bm, bdy, bt1,
                                                bt2, &zero, t.desc, bdx, bdm));
    tview_download(&t, bdx, dx);
    tview_download(&t, bdm, dm);
    for (int which = 0; which < 2; which++) {
        double *v = which ? m : x, *got = which ? dm : dx;
        for (int i = 0; i < 24; i++) {
            double keep = v[i], lp = 0, lm = 0;
            v[i] = keep + 1e-6;
            ref_divnorm_forward(dims5, 2, &q, x, m, y);
            for (int j = 0; j < 24; j++) lp += dy[j] * y[j];
            v[i] = keep - 1e-6;
            ref_divnorm_forward(dims5, 2, &q, x, m, y);
            for (int j = 0; j < 24; j++) lm += dy[j] * y[j];
            v[i] = keep;
            double fd = (lp - lm) / 2e-6;
            if (fabs(fd - got[i]) > 1e-6 * fmax(1, fabs(fd))) {
                FAIL("%s[%d]: library %.12g, finite differences %.12g", which ? "dMeans" : "dx", i, got[i], fd);
                break;
            }
        }
    }
    void *bufs[] = {bx, bm, bdy, bt1, bt2, bdx, bdm};
    for (size_t i = 0; i < 7; i++) tbuf_free(bufs[i]);
    tview_destroy(&t);
    cudnnDestroyLRNDescriptor(d);
}

TEST(divnorm_bad_inputs)
{
    cudnnHandle_t h = test_handle();
    cudnnLRNDescriptor_t d;
    CHECK_OK(cudnnCreateLRNDescriptor(&d));
    int dims[4] = {2, 3, 2, 2}, d3[3] = {2, 3, 4}, other[4] = {2, 3, 2, 3};
    struct tview x, xn, xh, x3, xo;
    tview_init(&x, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    tview_init(&xn, CUDNN_DATA_FLOAT, 4, dims, TV_NHWC);
    tview_init(&xh, CUDNN_DATA_HALF, 4, dims, TV_NCHW);
    tview_init(&x3, CUDNN_DATA_FLOAT, 3, d3, TV_NCHW);
    tview_init(&xo, CUDNN_DATA_FLOAT, 4, other, TV_NCHW);
    double v[24];
    tfill_random(CUDNN_DATA_DOUBLE, v, 24, -1, 1);
    void *bx = tview_upload(&x, v), *by = tview_upload(&x, v), *bdx = tview_upload(&x, v), *t1 = tview_upload(&x, v);
    void *t2 = tview_upload(&x, v), *bdm = tview_upload(&x, v);
    void *snaps[4] = {tbuf_snapshot(by, tview_bytes(&x)), tbuf_snapshot(bdx, tview_bytes(&x)), tbuf_snapshot(bdm, tview_bytes(&x)), tbuf_snapshot(bx, tview_bytes(&x))};
    float one = 1, zero = 0;
    const cudnnDivNormMode_t M = CUDNN_DIVNORM_PRECOMPUTED_MEANS;
#define EXPECT(call, status)                                                                      \
    do {                                                                                          \
        CHECK_STATUS(call, status);                                                               \
        if (!tbuf_unchanged(by, snaps[0], tview_bytes(&x), "an output") || !tbuf_unchanged(bdx, snaps[1], tview_bytes(&x), "an output") ||                \
            !tbuf_unchanged(bdm, snaps[2], tview_bytes(&x), "an output") || !tbuf_unchanged(bx, snaps[3], tview_bytes(&x), "an output"))                  \
            FAIL("written by %s", #call);                                                         \
    } while (0)
    EXPECT(cudnnDivisiveNormalizationForward(NULL, d, M, &one, x.desc, bx, NULL, t1, t2, &zero, x.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, NULL, M, &one, x.desc, bx, NULL, t1, t2, &zero, x.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, (cudnnDivNormMode_t)1, &one, x.desc, bx, NULL, t1, t2, &zero,
                                             x.desc, by), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, NULL, x.desc, bx, NULL, t1, t2, &zero, x.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x.desc, bx, NULL, NULL, t2, &zero, x.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x.desc, bx, NULL, t1, NULL, &zero, x.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x.desc, NULL, NULL, t1, t2, &zero, x.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x3.desc, bx, NULL, t1, t2, &zero, x3.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x.desc, bx, NULL, t1, t2, &zero, xo.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x.desc, bx, NULL, t1, t2, &zero, xn.desc, bx),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x.desc, bx, NULL, t1, t2, &zero, xn.desc, by),
           CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x.desc, bx, NULL, t1, t2, &zero, xh.desc, by),
           CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnDivisiveNormalizationForward(h, d, M, &one, x.desc, bx, NULL, t1, t1, &zero, x.desc, by),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationBackward(h, d, M, &one, x.desc, bx, NULL, NULL, t1, t2, &zero, x.desc, bdx, bdm),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationBackward(h, d, M, &one, x.desc, bx, NULL, bx, t1, t2, &zero, x.desc, NULL, bdm),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationBackward(h, d, M, &one, x.desc, bx, NULL, bx, t1, t2, NULL, x.desc, bdx, bdm),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationBackward(h, d, M, &one, x.desc, bx, NULL, bx, t1, t2, &zero, xn.desc, bdx, bdm),
           CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnDivisiveNormalizationBackward(h, d, M, &one, x.desc, bx, NULL, bx, t1, t2, &zero, x.desc, bdx, bdx),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnDivisiveNormalizationBackward(h, d, M, &one, x3.desc, bx, NULL, bx, t1, t2, &zero, x.desc, bdx, bdm),
           CUDNN_STATUS_BAD_PARAM);
#undef EXPECT
    void *bufs[] = {bx, by, bdx, t1, t2, bdm};
    for (size_t i = 0; i < 6; i++) tbuf_free(bufs[i]);
    for (size_t i = 0; i < 4; i++) free(snaps[i]);
    struct tview *ts[] = {&x, &xn, &xh, &x3, &xo};
    for (size_t i = 0; i < 5; i++) tview_destroy(ts[i]);
    cudnnDestroyLRNDescriptor(d);
}
