/* impl_walk.c: the one implementation walker (core/impl.h) as a program sees it through its log,
   for a simple op (activation) and for convolution, whose walk adds an algorithm mask and its
   own test: the chosen entry is logged at info level and every entry passed over with its reason;
   OPENCUDNN_DISABLE switches entries off by name or prefix; a walk that finds nothing returns
   NOT_SUPPORTED and logs every reason; a documented restriction of an algorithm comes before any
   entry is asked. NOT_SUPPORTED is logged at warning level. Which entries the suite reaches is the registry-coverage check
   (tests/check_coverage.py), not this file. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* The log of a stretch of calls, at every level. */
struct walk_log {
    char text[16384];
    size_t used;
};

static void capture(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    struct walk_log *l = udata;
    int n = snprintf(l->text + l->used, sizeof l->text - l->used, "%s\n", msg);
    if (n > 0) l->used += (size_t)n;
    if (l->used >= sizeof l->text) l->used = sizeof l->text - 1;
}

struct saved_log {
    struct log_hook hook;
    char disable[256];
    bool had_disable;
};

static void log_begin(struct saved_log *s, struct walk_log *l, const char *disable)
{
    const char *d = getenv("OPENCUDNN_DISABLE");
    s->had_disable = d != NULL;
    snprintf(s->disable, sizeof s->disable, "%s", d ? d : "");
    if (disable) ocd_setenv("OPENCUDNN_DISABLE", disable);
    else ocd_unsetenv("OPENCUDNN_DISABLE");
    memset(l, 0, sizeof *l);
    log_hook_install(&s->hook, CUDNN_SEV_INFO_EN | CUDNN_SEV_WARNING_EN | CUDNN_SEV_ERROR_EN, l, capture);
}

static void log_end(const struct saved_log *s)
{
    log_hook_restore(&s->hook);
    if (s->had_disable) ocd_setenv("OPENCUDNN_DISABLE", s->disable);
    else ocd_unsetenv("OPENCUDNN_DISABLE");
}

static bool logged(const struct walk_log *l, const char *what)
{
    if (strstr(l->text, what) != NULL) return true;
    FAIL("the log lacks \"%s\"", what);
    return false;
}

static cudnnTensorDescriptor_t tensor4(int n, int c, int h, int w)
{
    cudnnTensorDescriptor_t d;
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    CHECK_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
    return d;
}

/* A simple op: the backend's entries are walked in table order; switched off one by one by
   name, and all at once by prefix, with the reasons logged. */
TEST(walk_simple_op_logs_choice_and_reasons)
{
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t xd = tensor4(2, 3, 4, 5);
    cudnnActivationDescriptor_t act;
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    const size_t bytes = 2 * 3 * 4 * 5 * sizeof(float);
    void *x = tbuf_alloc(bytes), *y = tbuf_alloc(bytes);
    float zeros[120] = {0}, one = 1, zero = 0;
    tbuf_upload(x, zeros, bytes);

    struct walk_log l;
    struct saved_log s;
    char prefix[16], chosen[128], off[256];
    snprintf(prefix, sizeof prefix, "%s:*", test_backend);

    /* nothing off: some entry of this backend is chosen, and named */
    log_begin(&s, &l, NULL);
    CHECK_OK(cudnnActivationForward(h, act, &one, xd, x, &zero, xd, y));
    log_end(&s);
    const char *c = strstr(l.text, "cudnnActivationForward: impl ");
    if (CHECK(c != NULL)) {
        c += strlen("cudnnActivationForward: impl ");
        size_t n = strcspn(c, " ");
        snprintf(chosen, sizeof chosen, "%.*s", (int)n, c);
        CHECK(strncmp(chosen, test_backend, strlen(test_backend)) == 0);
        CHECK(strstr(c, " chosen") == c + n);

        /* that one off: skipped with the switch's reason, another chosen */
        log_begin(&s, &l, chosen);
        cudnnStatus_t st = cudnnActivationForward(h, act, &one, xd, x, &zero, xd, y);
        log_end(&s);
        snprintf(off, sizeof off, "impl %s skipped: switched off by OPENCUDNN_DISABLE", chosen);
        logged(&l, off);
        if (st == CUDNN_STATUS_SUCCESS) logged(&l, " chosen");
        else CHECK_STATUS(st, CUDNN_STATUS_NOT_SUPPORTED);
    }

    /* every entry of the backend off: NOT_SUPPORTED, every reason in the error */
    log_begin(&s, &l, prefix);
    CHECK_STATUS(cudnnActivationForward(h, act, &one, xd, x, &zero, xd, y), CUDNN_STATUS_NOT_SUPPORTED);
    log_end(&s);
    snprintf(off, sizeof off, "no implementation on the %s backend serves this problem", test_backend);
    logged(&l, off);
    logged(&l, ": switched off by OPENCUDNN_DISABLE");
    CHECK(strstr(l.text, " chosen") == NULL);

    tbuf_free(x);
    tbuf_free(y);
    cudnnDestroyActivationDescriptor(act);
    cudnnDestroyTensorDescriptor(xd);
}

/* Convolution: the walk asks for the algorithm (only entries serving it take part), the
   documented restrictions come first, a forced algorithm whose entries are all off is
   NOT_SUPPORTED with their reasons, and an algorithm another entry also serves falls to it. */
TEST(walk_convolution_algorithms)
{
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t xd = tensor4(1, 2, 6, 6), yd = tensor4(1, 3, 6, 6);
    cudnnFilterDescriptor_t wd, w5d;
    cudnnConvolutionDescriptor_t cd;
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    CHECK_OK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, 2, 3, 3));
    CHECK_OK(cudnnCreateFilterDescriptor(&w5d));
    CHECK_OK(cudnnSetFilter4dDescriptor(w5d, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, 2, 5, 5));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&cd));
    CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
    float xs[72] = {0}, ws[150] = {0}, one = 1, zero = 0;
    void *x = tbuf_from(xs, sizeof xs), *w = tbuf_from(ws, sizeof ws), *y = tbuf_alloc(3 * 36 * sizeof(float));
    struct walk_log l;
    struct saved_log s;
    char prefix[16];
    snprintf(prefix, sizeof prefix, "%s:*", test_backend);

    /* IMPLICIT_GEMM runs without workspace; the entry that runs it is named in the log (a
       repeated call reuses the choice without a walk: "runs" is logged every call) */
    char runs[64];
    snprintf(runs, sizeof runs, "cudnnConvolutionForward: %s:", test_backend);
    log_begin(&s, &l, NULL);
    CHECK_OK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                     &zero, yd, y));
    log_end(&s);
    logged(&l, runs);

    /* every entry off: NOT_SUPPORTED naming the algorithm and the switch */
    log_begin(&s, &l, prefix);
    CHECK_STATUS(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL,
                                         0, &zero, yd, y),
                 CUDNN_STATUS_NOT_SUPPORTED);
    log_end(&s);
    logged(&l, "FWD_ALGO_IMPLICIT_GEMM: ");
    logged(&l, "switched off by OPENCUDNN_DISABLE");

    /* a documented restriction: WINOGRAD takes 3x3 filters only, whatever is switched off */
    cudnnTensorDescriptor_t y5d = tensor4(1, 3, 4, 4);
    log_begin(&s, &l, NULL);
    CHECK_STATUS(cudnnConvolutionForward(h, &one, xd, x, w5d, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, NULL, 0,
                                         &zero, y5d, y),
                 CUDNN_STATUS_NOT_SUPPORTED);
    log_end(&s);
    logged(&l, "WINOGRAD needs 3x3 filters");
    CHECK(strstr(l.text, "skipped") == NULL);

    if (test_backend[0] == 'h') {
        /* the packed engine's IMPLICIT_GEMM off: the reference entry, which also serves it, runs */
        log_begin(&s, &l, "host:fwd_implicit_gemm");
        CHECK_OK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                         &zero, yd, y));
        log_end(&s);
        logged(&l, "FWD_ALGO_IMPLICIT_GEMM: impl host:fwd_implicit_gemm skipped: switched off by OPENCUDNN_DISABLE");
        logged(&l, "FWD_ALGO_IMPLICIT_GEMM: impl host:fwd_direct chosen");
        /* entries of other algorithms take no part in the walk */
        CHECK(strstr(l.text, "host:fwd_implicit_precomp_gemm") == NULL);

        /* Get_v7 with it off: IMPLICIT_GEMM still offered (by the reference entry) */
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int n = 0;
        ocd_setenv("OPENCUDNN_DISABLE", "host:fwd_implicit_gemm");
        CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf));
        bool offered = false;
        for (int i = 0; i < n; i++)
            offered |= perf[i].algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM && perf[i].status == CUDNN_STATUS_SUCCESS;
        CHECK(offered);
        log_end(&s);
    }

    tbuf_free(x);
    tbuf_free(w);
    tbuf_free(y);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(y5d);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyFilterDescriptor(w5d);
    cudnnDestroyConvolutionDescriptor(cd);
}
