/* ctc.c: tests of the CTC loss API: the descriptor's Set/Get forms, cudnnCTCLoss (host labels)
   and cudnnCTCLoss_v8 (labels in the backend's memory) against ref/ctc.c in both normalization
   modes, gradients by finite differences of the costs, labels that cannot be aligned and NaN
   inputs under both NaN modes, invalid samples of the _v8 call, determinism, and bad input
   (documented status, nothing written), outputs overlapping inputs included. Samples cover
   repeated labels (which need a blank between them), empty labels, input lengths shorter than T,
   a zero-length input, and labels of 256. The info log's benchmark replay string: logged where
   the benchmark can express the call, not otherwise. */
#include "ref/ctc.h"
#include "test.h"
#include "tensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the descriptor ----------------------------------------------------------------------- */

static bool desc_is(cudnnCTCLossDescriptor_t d, cudnnDataType_t t, cudnnLossNormalizationMode_t nm,
                    cudnnNanPropagation_t gm, int max_label)
{
    cudnnDataType_t t1, t2, t3;
    cudnnLossNormalizationMode_t nm2, nm3;
    cudnnNanPropagation_t gm2, gm3;
    int ml = -5;
    bool ok = CHECK_OK(cudnnGetCTCLossDescriptor(d, &t1));
    ok = ok && CHECK_OK(cudnnGetCTCLossDescriptorEx(d, &t2, &nm2, &gm2));
    ok = ok && CHECK_OK(cudnnGetCTCLossDescriptor_v8(d, &t3, &nm3, &gm3, &ml));
    return ok && CHECK(t1 == t && t2 == t && t3 == t && nm2 == nm && nm3 == nm && gm2 == gm && gm3 == gm &&
                       ml == max_label);
}

/* cudnnSetCTCLossDescriptor(d, t) = SetEx(d, t, NONE, NOT_PROPAGATE_NAN) (cuDNN 8.2); a new
   descriptor holds the same; every Get form reads what any Set form wrote. */
TEST_ONCE(ctc_descriptor)
{
    cudnnCTCLossDescriptor_t d;
    if (!CHECK_OK(cudnnCreateCTCLossDescriptor(&d))) return;
    desc_is(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_NOT_PROPAGATE_NAN, 256);
    CHECK_OK(cudnnSetCTCLossDescriptorEx(d, CUDNN_DATA_DOUBLE, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_PROPAGATE_NAN));
    desc_is(d, CUDNN_DATA_DOUBLE, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_PROPAGATE_NAN, 256);
    CHECK_OK(cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_PROPAGATE_NAN,
                                          255));
    desc_is(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_PROPAGATE_NAN, 255);
    CHECK_OK(cudnnSetCTCLossDescriptor(d, CUDNN_DATA_HALF));
    desc_is(d, CUDNN_DATA_HALF, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_NOT_PROPAGATE_NAN, 256);

    /* invalid values: BAD_PARAM, the descriptor unchanged */
    CHECK_OK(cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_PROPAGATE_NAN,
                                          100));
    CHECK_STATUS(cudnnSetCTCLossDescriptor(d, (cudnnDataType_t)99), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetCTCLossDescriptorEx(d, CUDNN_DATA_FLOAT, (cudnnLossNormalizationMode_t)2,
                                             CUDNN_PROPAGATE_NAN),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetCTCLossDescriptorEx(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE,
                                             (cudnnNanPropagation_t)7),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE,
                                              CUDNN_PROPAGATE_NAN, 257),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE,
                                              CUDNN_PROPAGATE_NAN, -1),
                 CUDNN_STATUS_BAD_PARAM);
    desc_is(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_PROPAGATE_NAN, 100);
    cudnnDataType_t t;
    cudnnLossNormalizationMode_t nm;
    CHECK_STATUS(cudnnGetCTCLossDescriptor(d, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetCTCLossDescriptorEx(d, &t, &nm, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetCTCLossDescriptor_v8(d, &t, &nm, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetCTCLossDescriptor(NULL, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyCTCLossDescriptor(d));
    CHECK_STATUS(cudnnGetCTCLossDescriptor(d, &t), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyCTCLossDescriptor(NULL));
    CHECK_STATUS(cudnnCreateCTCLossDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
}

/* ---- a problem and its buffers ---------------------------------------------------------------- */

struct ctc_case {
    const char *name;
    int T, N, A;
    const int *label_lengths, *input_lengths; /* N each; input lengths NULL: all T */
    int max_repeat;                           /* labels drawn from [1, max_repeat] when > 0: many repeats */
};

struct ctc_run {
    const struct ctc_case *c;
    struct tview probs, grads;
    double *x;                    /* what probs holds: activations (SOFTMAX) or probabilities (NONE) */
    double *u;                    /* NONE: the activations whose softmax x is */
    int *labels, *label_lengths, *input_lengths;
    int total;
    void *px, *pg, *pcost;
};

static double *softmax_rows(const double *u, int rows, int A)
{
    double *p = malloc(sizeof(double) * (size_t)rows * A);
    for (int r = 0; r < rows; r++) {
        double m = -INFINITY, sum = 0;
        for (int k = 0; k < A; k++) m = fmax(m, u[r * A + k]);
        for (int k = 0; k < A; k++) sum += p[r * A + k] = exp(u[r * A + k] - m);
        for (int k = 0; k < A; k++) p[r * A + k] /= sum;
    }
    return p;
}

/* Random labels; every third sample of two labels or more gets an immediate repeat. */
static void run_init(struct ctc_run *r, const struct ctc_case *c, bool softmax, int grads_layout)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    int dims[3] = {c->T, c->N, c->A};
    tview_init(&r->probs, CUDNN_DATA_FLOAT, 3, dims, TV_NCHW);
    tview_init(&r->grads, CUDNN_DATA_FLOAT, 3, dims, grads_layout);
    int64_t count = r->probs.count;
    r->label_lengths = malloc(sizeof(int) * (size_t)c->N);
    r->input_lengths = malloc(sizeof(int) * (size_t)c->N);
    for (int n = 0; n < c->N; n++) {
        r->label_lengths[n] = c->label_lengths[n];
        r->input_lengths[n] = c->input_lengths ? c->input_lengths[n] : c->T;
        r->total += c->label_lengths[n];
    }
    r->labels = malloc(sizeof(int) * (size_t)(r->total + 1));
    int at = 0;
    for (int n = 0; n < c->N; n++)
        for (int j = 0; j < r->label_lengths[n]; j++, at++) {
            int hi = c->max_repeat > 0 ? c->max_repeat : c->A - 1;
            r->labels[at] = j > 0 && n % 3 == 0 && j == 1 ? r->labels[at - 1] : trand_int(1, hi);
        }
    if (softmax) {
        r->x = tview_random(count, -3, 3);
    } else {
        r->u = tview_random(count, -3, 3);
        r->x = softmax_rows(r->u, (int)(count / c->A), c->A);
    }
    r->px = tview_upload(&r->probs, r->x);
    r->pg = tview_upload(&r->grads, NULL);
    r->pcost = tbuf_alloc(sizeof(float) * (size_t)c->N);
}

static void run_free(struct ctc_run *r)
{
    tview_free(&r->probs, r->px);
    tview_free(&r->grads, r->pg);
    tbuf_free(r->pcost);
    tview_destroy(&r->probs);
    tview_destroy(&r->grads);
    free(r->x), free(r->u), free(r->labels), free(r->label_lengths), free(r->input_lengths);
}

static cudnnCTCLossDescriptor_t make_desc(bool softmax, bool propagate, int max_label)
{
    cudnnCTCLossDescriptor_t d;
    cudnnCreateCTCLossDescriptor(&d);
    cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT,
                                 softmax ? CUDNN_LOSS_NORMALIZATION_SOFTMAX : CUDNN_LOSS_NORMALIZATION_NONE,
                                 propagate ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, max_label);
    return d;
}

/* One call, through cudnnCTCLoss (v8 false) or cudnnCTCLoss_v8, with the workspace its query
   returns; results read back into costs (N) and grads (T N A). */
static bool run_call(struct ctc_run *r, cudnnCTCLossDescriptor_t d, bool v8, cudnnCTCLossAlgo_t algo, double *costs,
                     double *grads)
{
    cudnnHandle_t h = test_handle();
    size_t ws = 0;
    bool ok;
    tbuf_poison(r->pcost, sizeof(float) * (size_t)r->c->N);
    if (v8) {
        ok = CHECK_OK(cudnnGetCTCLossWorkspaceSize_v8(h, algo, d, r->probs.desc, r->grads.desc, &ws));
        void *w = tbuf_alloc(ws ? ws : 1);
        void *dl = tbuf_from(r->labels, sizeof(int) * (size_t)(r->total + 1));
        void *dll = tbuf_from(r->label_lengths, sizeof(int) * (size_t)r->c->N);
        void *dil = tbuf_from(r->input_lengths, sizeof(int) * (size_t)r->c->N);
        ok = ok && CHECK_OK(cudnnCTCLoss_v8(h, algo, d, r->probs.desc, r->px, dl, dll, dil, r->pcost, r->grads.desc,
                                            r->pg, ws, w));
        tbuf_free(w), tbuf_free(dl), tbuf_free(dll), tbuf_free(dil);
    } else {
        ok = CHECK_OK(cudnnGetCTCLossWorkspaceSize(h, r->probs.desc, r->grads.desc, r->labels, r->label_lengths,
                                                   r->input_lengths, algo, d, &ws));
        void *w = tbuf_alloc(ws ? ws : 1);
        ok = ok && CHECK_OK(cudnnCTCLoss(h, r->probs.desc, r->px, r->labels, r->label_lengths, r->input_lengths,
                                         r->pcost, r->grads.desc, r->pg, algo, d, w, ws));
        tbuf_free(w);
    }
    double *c = tvalues_download(CUDNN_DATA_FLOAT, r->pcost, r->c->N);
    memcpy(costs, c, sizeof(double) * (size_t)r->c->N);
    free(c);
    tview_download(&r->grads, r->pg, grads);
    return ok && tview_gaps_intact(&r->grads, r->pg, r->c->name) && tview_holds(&r->probs, r->px, r->x, r->c->name);
}

static bool close_to(double got, double want, double tol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol * fmax(1, fabs(want));
}

static bool compare(const char *what, const double *got, const double *want, int64_t n, double tol)
{
    for (int64_t i = 0; i < n; i++)
        if (!close_to(got[i], want[i], tol)) {
            FAIL("%s: element %lld is %.9g, expected %.9g", what, (long long)i, got[i], want[i]);
            return false;
        }
    return true;
}

/* The reference's results under a NaN mode: a sample whose cost is not finite has gradients 0
   (NOT_PROPAGATE_NAN) or NaN (PROPAGATE_NAN) on its steps; its other steps are 0. */
static void reference(const struct ctc_run *r, bool softmax, bool propagate, double *costs, double *grads)
{
    const struct ctc_case *c = r->c;
    ref_ctc(c->T, c->N, c->A, softmax, r->x, r->labels, r->label_lengths, r->input_lengths, costs, grads);
    for (int n = 0; n < c->N; n++)
        if (!isfinite(costs[n]))
            for (int t = 0; t < r->input_lengths[n]; t++)
                for (int k = 0; k < c->A; k++) grads[((int64_t)t * c->N + n) * c->A + k] = propagate ? NAN : 0;
}

/* The gradients' tolerance: alpha + beta - log P, of magnitude |log P| (the largest cost), holds
   an error of a few roundings of it where the log-space values are stored in float (the host
   backend; CUDA keeps each step's values near 0 and their shifts in double, which does better). */
static double grad_tolerance(const struct ctc_case *c, const double *costs)
{
    double worst = 0;
    for (int n = 0; n < c->N; n++)
        if (isfinite(costs[n])) worst = fmax(worst, costs[n]);
    return 2e-5 + 3e-7 * worst;
}

static bool check_case(const struct ctc_case *c, bool softmax, bool propagate, bool v8, cudnnCTCLossAlgo_t algo,
                       int layout)
{
    char what[160];
    snprintf(what, sizeof what, "%s %s %s %s algo %d grads %s", c->name, softmax ? "SOFTMAX" : "NONE",
             propagate ? "PROPAGATE_NAN" : "NOT_PROPAGATE_NAN", v8 ? "_v8" : "host labels", (int)algo,
             tview_layout_name(layout));
    struct ctc_run r;
    run_init(&r, c, softmax, layout);
    int64_t count = r.probs.count;
    double *costs = malloc(sizeof(double) * (size_t)c->N), *grads = malloc(sizeof(double) * (size_t)count);
    double *want_c = malloc(sizeof(double) * (size_t)c->N), *want_g = malloc(sizeof(double) * (size_t)count);
    reference(&r, softmax, propagate, want_c, want_g);
    cudnnCTCLossDescriptor_t d = make_desc(softmax, propagate, 256);
    bool ok = run_call(&r, d, v8, algo, costs, grads);
    char sub[200];
    snprintf(sub, sizeof sub, "%s: costs", what);
    ok = ok && compare(sub, costs, want_c, c->N, 2e-5);
    snprintf(sub, sizeof sub, "%s: gradients", what);
    ok = ok && compare(sub, grads, want_g, count, grad_tolerance(c, want_c));
    cudnnDestroyCTCLossDescriptor(d);
    run_free(&r);
    free(costs), free(grads), free(want_c), free(want_g);
    return ok;
}

static const int ll_mixed[] = {3, 0, 5, 1, 4};
static const int il_mixed[] = {12, 7, 12, 1, 9};
static const int ll_long[] = {20, 19, 2};
static const int il_long[] = {60, 44, 60};
static const int ll_zero_input[] = {0, 2};
static const int il_zero_input[] = {0, 6};
static const int ll_tight[] = {4, 3};
static const int il_tight[] = {4, 3}; /* no repeats allowed to need a blank: labels of 4 symbols, 1 step each */
static const int ll_one[] = {1};

static const struct ctc_case cases[] = {
    {"mixed", 12, 5, 6, ll_mixed, il_mixed, 0},
    {"repeats", 12, 5, 6, ll_mixed, il_mixed, 2},
    {"long labels", 60, 3, 9, ll_long, il_long, 0},
    {"zero-length input", 6, 2, 4, ll_zero_input, il_zero_input, 0},
    {"one step per label", 4, 2, 40, ll_tight, il_tight, 0},
    {"one sample", 1, 1, 2, ll_one, NULL, 0},
};

TEST(ctc_matches_reference)
{
    for (size_t i = 0; i < TLEN(cases); i++)
        for (int mode = 0; mode < 2; mode++)
            for (int v8 = 0; v8 < 2; v8++) {
                /* "one step per label" draws repeats at random: they cannot be aligned */
                bool any = cases[i].input_lengths == il_tight;
                if (!check_case(&cases[i], mode, any, v8, (cudnnCTCLossAlgo_t)v8,
                                i % 2 ? TV_PADDED : TV_NCHW))
                    return;
            }
}

/* A label of 256 (the documented maximum) over 600 steps, through both calls. */
TEST(ctc_longest_label)
{
    static const int ll[] = {256, 7};
    static const int il[] = {600, 300};
    const struct ctc_case c = {"256 labels", 600, 2, 30, ll, il, 0};
    if (check_case(&c, true, false, false, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, TV_NCHW))
        check_case(&c, false, true, true, CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC, TV_NCHW);
}

/* Labels whose repeats need more steps than the input has (L <= T_n < L + repeats): an infinite
   cost; the gradients of its steps 0 under NOT_PROPAGATE_NAN, NaN under PROPAGATE_NAN. */
TEST(ctc_unalignable_label)
{
    static const int ll[] = {3, 2, 3};
    static const int il[] = {5, 2, 4};
    const struct ctc_case c = {"unalignable", 6, 3, 3, ll, il, 1}; /* labels all 1: 1 1 1 needs 5 steps */
    for (int prop = 0; prop < 2; prop++)
        for (int v8 = 0; v8 < 2; v8++)
            if (!check_case(&c, true, prop, v8, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, TV_NCHW)) return;
}

/* cudnnCTCLoss_v8 checks each sample on the device: a label longer than maxLabelLength or than
   its input, an input longer than T, a blank or out-of-range label make that sample's cost NaN
   and its gradients 0 (NOT_PROPAGATE_NAN) or NaN (PROPAGATE_NAN); the other samples are right. */
TEST(ctc_v8_invalid_samples)
{
    static const int ll[] = {2, 5, 2, 3, 2, 1};
    static const int il[] = {8, 8, 1, 9, 8, 8};
    const struct ctc_case c = {"v8 invalid", 8, 6, 5, ll, il, 0};
    for (int prop = 0; prop < 2; prop++) {
        struct ctc_run r;
        run_init(&r, &c, true, TV_NCHW);
        r.input_lengths[3] = 8; /* the reference sees a valid length; the call gets 9 (> T) */
        int64_t count = r.probs.count;
        double *costs = malloc(sizeof(double) * (size_t)c.N), *grads = malloc(sizeof(double) * (size_t)count);
        double *want_c = malloc(sizeof(double) * (size_t)c.N), *want_g = malloc(sizeof(double) * (size_t)count);
        reference(&r, true, prop, want_c, want_g);
        r.labels[2 + 5 + 2 + 3 + 1] = 0; /* sample 4: a blank */
        r.labels[2 + 5 + 2 + 3 + 2] = 5; /* sample 5: symbol A */
        r.input_lengths[3] = 9;
        /* invalid: 1 (5 labels > maxLabelLength 4), 2 (label longer than its input), 3, 4, 5 */
        for (int n = 1; n < c.N; n++) {
            want_c[n] = NAN;
            for (int t = 0; t < c.T; t++)
                for (int k = 0; k < c.A; k++) want_g[((int64_t)t * c.N + n) * c.A + k] = prop ? NAN : 0;
        }
        cudnnCTCLossDescriptor_t d = make_desc(true, prop, 4);
        bool ok = run_call(&r, d, true, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, grads) &&
                  compare("v8 invalid: costs", costs, want_c, c.N, 2e-5) &&
                  compare("v8 invalid: gradients", grads, want_g, count, 2e-5);
        cudnnDestroyCTCLossDescriptor(d);
        run_free(&r);
        free(costs), free(grads), free(want_c), free(want_g);
        if (!ok) return;
    }
}

/* A NaN in a row of a sample's steps (SOFTMAX: the row's normalizer is NaN, so every path is):
   that sample's cost is NaN and its gradients NaN (PROPAGATE_NAN) or 0 (NOT_PROPAGATE_NAN) on
   its steps; the other samples are unaffected. */
TEST(ctc_nan_input)
{
    static const int ll[] = {2, 3};
    static const int il[] = {5, 6};
    const struct ctc_case c = {"NaN input", 6, 2, 5, ll, il, 0};
    for (int prop = 0; prop < 2; prop++)
        for (int v8 = 0; v8 < 2; v8++) {
            struct ctc_run r;
            run_init(&r, &c, true, TV_NCHW);
            int64_t count = r.probs.count;
            double *costs = malloc(sizeof(double) * (size_t)c.N), *grads = malloc(sizeof(double) * (size_t)count);
            double *want_c = malloc(sizeof(double) * (size_t)c.N), *want_g = malloc(sizeof(double) * (size_t)count);
            reference(&r, true, prop, want_c, want_g);
            r.x[(2 * c.N + 1) * c.A + 3] = NAN; /* t 2, sample 1, symbol 3 */
            tview_free(&r.probs, r.px);
            r.px = tview_upload(&r.probs, r.x);
            want_c[1] = NAN;
            for (int t = 0; t < il[1]; t++)
                for (int k = 0; k < c.A; k++) want_g[((int64_t)t * c.N + 1) * c.A + k] = prop ? NAN : 0;
            cudnnCTCLossDescriptor_t d = make_desc(true, prop, 8);
            bool ok = run_call(&r, d, v8, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, grads) &&
                      compare("NaN input: costs", costs, want_c, c.N, 2e-5) &&
                      compare("NaN input: gradients", grads, want_g, count, 2e-5);
            cudnnDestroyCTCLossDescriptor(d);
            run_free(&r);
            free(costs), free(grads), free(want_c), free(want_g);
            if (!ok) return;
        }
}

/* The gradients against central differences of the costs the library computes: with respect to
   the activations in SOFTMAX mode, and (the documented "inconsistent interface") with respect to
   the activations u whose softmax is the probs given in NONE mode. */
TEST(ctc_finite_differences)
{
    static const int ll[] = {3, 2};
    static const int il[] = {7, 5};
    const struct ctc_case c = {"finite differences", 7, 2, 4, ll, il, 2};
    const double h = 1e-2;
    for (int mode = 0; mode < 2; mode++) {
        bool softmax = mode == 1;
        struct ctc_run r;
        run_init(&r, &c, softmax, TV_NCHW);
        int64_t count = r.probs.count;
        double *costs = malloc(sizeof(double) * (size_t)c.N), *grads = malloc(sizeof(double) * (size_t)count);
        double *plus = malloc(sizeof(double) * (size_t)c.N), *minus = malloc(sizeof(double) * (size_t)c.N);
        double *scratch = malloc(sizeof(double) * (size_t)count);
        cudnnCTCLossDescriptor_t d = make_desc(softmax, false, 256);
        bool ok = run_call(&r, d, false, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, grads);
        double *act = softmax ? r.x : r.u, *keep = malloc(sizeof(double) * (size_t)count);
        memcpy(keep, act, sizeof(double) * (size_t)count);
        for (int64_t i = 0; ok && i < count; i++) {
            int n = (int)(i / c.A % c.N);
            double *side[2] = {plus, minus};
            for (int sgn = 0; sgn < 2; sgn++) {
                memcpy(act, keep, sizeof(double) * (size_t)count);
                act[i] += sgn ? -h : h;
                if (!softmax) {
                    double *p = softmax_rows(act, (int)(count / c.A), c.A);
                    memcpy(r.x, p, sizeof(double) * (size_t)count);
                    free(p);
                }
                tview_free(&r.probs, r.px);
                r.px = tview_upload(&r.probs, r.x);
                ok = ok && run_call(&r, d, false, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, side[sgn], scratch);
            }
            double fd = (plus[n] - minus[n]) / (2 * h);
            if (ok && fabs(fd - grads[i]) > 2e-3) {
                FAIL("%s: d cost / d x[%lld] = %.6g, finite difference %.6g", softmax ? "SOFTMAX" : "NONE",
                     (long long)i, grads[i], fd);
                ok = false;
            }
        }
        cudnnDestroyCTCLossDescriptor(d);
        memcpy(act, keep, sizeof(double) * (size_t)count);
        run_free(&r);
        free(costs), free(grads), free(plus), free(minus), free(scratch), free(keep);
        if (!ok) return;
    }
}

/* Both algorithms give the same bits on every call. */
TEST(ctc_reproducible)
{
    const struct ctc_case *c = &cases[2];
    struct ctc_run r;
    run_init(&r, c, true, TV_NCHW);
    int64_t count = r.probs.count;
    double *res[2][2];
    cudnnCTCLossDescriptor_t d = make_desc(true, false, 32);
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        res[i][0] = malloc(sizeof(double) * (size_t)c->N);
        res[i][1] = malloc(sizeof(double) * (size_t)count);
        ok = ok && run_call(&r, d, true, (cudnnCTCLossAlgo_t)i, res[i][0], res[i][1]);
    }
    CHECK(ok && memcmp(res[0][0], res[1][0], sizeof(double) * (size_t)c->N) == 0 &&
          memcmp(res[0][1], res[1][1], sizeof(double) * (size_t)count) == 0);
    for (int i = 0; i < 2; i++) free(res[i][0]), free(res[i][1]);
    cudnnDestroyCTCLossDescriptor(d);
    run_free(&r);
}

/* ---- bad input ---------------------------------------------------------------------------- */

/* The call with one argument changed returns the status and writes neither costs nor gradients. */
struct bad_args {
    cudnnTensorDescriptor_t probs_desc, grads_desc;
    const int *labels, *label_lengths, *input_lengths;
    cudnnCTCLossAlgo_t algo;
    cudnnCTCLossDescriptor_t d;
    size_t ws_bytes;
    const void *probs;
    void *costs, *grads;
};

static void expect_rejected(const struct ctc_run *r, const struct bad_args *a, void *ws, cudnnStatus_t want,
                            bool query, const char *what)
{
    cudnnHandle_t h = test_handle();
    size_t cost_bytes = sizeof(float) * (size_t)r->c->N, grad_bytes = tview_bytes(&r->grads);
    void *cs = tbuf_snapshot(r->pcost, cost_bytes), *gs = tbuf_snapshot(r->pg, grad_bytes);
    size_t size = 12345;
    if (!CHECK_STATUS(cudnnCTCLoss(h, a->probs_desc, a->probs, a->labels, a->label_lengths, a->input_lengths,
                                   a->costs, a->grads_desc, a->grads, a->algo, a->d, ws, a->ws_bytes),
                      want) ||
        !tbuf_unchanged(r->pcost, cs, cost_bytes, what) || !tbuf_unchanged(r->pg, gs, grad_bytes, what))
        FAIL("case: %s", what);
    /* the query rejects what concerns it alike (query: the case concerns it), leaving its output alone */
    if (query) {
        cudnnStatus_t s = cudnnGetCTCLossWorkspaceSize(h, a->probs_desc, a->grads_desc, a->labels, a->label_lengths,
                                                       a->input_lengths, a->algo, a->d, &size);
        if (!CHECK_STATUS(s, want) || !CHECK(size == 12345)) FAIL("query: %s", what);
    }
    free(cs), free(gs);
}

TEST(ctc_bad_input)
{
    static const int ll[] = {2, 3};
    static const int il[] = {5, 6};
    const struct ctc_case c = {"bad input", 6, 2, 5, ll, il, 0};
    struct ctc_run r;
    run_init(&r, &c, true, TV_NCHW);
    cudnnCTCLossDescriptor_t d = make_desc(true, false, 256);
    size_t need = 0;
    if (!CHECK_OK(cudnnGetCTCLossWorkspaceSize(test_handle(), r.probs.desc, r.grads.desc, r.labels, r.label_lengths,
                                               r.input_lengths, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, &need)))
        return;
    void *ws = tbuf_alloc(need);
    const struct bad_args good = {r.probs.desc, r.grads.desc, r.labels, r.label_lengths, r.input_lengths,
                                  CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, need, r.px, r.pcost, r.pg};
    struct bad_args a;
    int lab[5], lens[2];

    /* the dims of probsDesc and gradientsDesc differ; probs not 3-D */
    int other[3] = {6, 2, 4}, four[4] = {6, 2, 5, 1};
    struct tview ov, fv, dv;
    tview_init(&ov, CUDNN_DATA_FLOAT, 3, other, TV_NCHW);
    tview_init(&fv, CUDNN_DATA_FLOAT, 4, four, TV_NCHW);
    int dims[3] = {6, 2, 5};
    tview_init(&dv, CUDNN_DATA_DOUBLE, 3, dims, TV_NCHW);
    a = good, a.grads_desc = ov.desc;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, true, "gradients dims differ");
    a = good, a.probs_desc = fv.desc, a.grads_desc = fv.desc;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, true, "probs of 4 dims");
    /* input lengths that do not agree with T */
    memcpy(lens, il, sizeof lens), lens[1] = 7;
    a = good, a.input_lengths = lens;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, true, "input length > T");
    lens[1] = -1;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, true, "negative input length");
    /* a label longer than its input (label longer than T); this and the labels below are the
       loss's to refuse: the query takes them (compat_ctc_cudnnxx_workspace_query_any_labels) */
    memcpy(lens, il, sizeof lens), lens[0] = 1;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "label longer than its input");
    memcpy(lens, ll, sizeof lens), lens[0] = 257;
    a = good, a.label_lengths = lens;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, true, "label of 257");
    lens[0] = -1;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, true, "negative label length");
    /* labels: the blank, or past the alphabet */
    memcpy(lab, r.labels, sizeof lab), lab[3] = 0;
    a = good, a.labels = lab;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "blank label");
    lab[3] = 5;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "label = A");
    /* types and algorithm: NOT_SUPPORTED */
    a = good, a.probs_desc = dv.desc, a.grads_desc = dv.desc;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_NOT_SUPPORTED, true, "double data");
    a = good, a.algo = (cudnnCTCLossAlgo_t)2;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_NOT_SUPPORTED, true, "unknown algorithm");
    cudnnCTCLossDescriptor_t dd;
    cudnnCreateCTCLossDescriptor(&dd);
    cudnnSetCTCLossDescriptor(dd, CUDNN_DATA_DOUBLE);
    a = good, a.d = dd;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_NOT_SUPPORTED, true, "compType double");
    cudnnDestroyCTCLossDescriptor(dd);
    a = good, a.d = dd;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, true, "destroyed loss descriptor");
    /* workspace too small; NULL pointers */
    a = good, a.ws_bytes = need - 1;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "workspace too small");
    a = good;
    expect_rejected(&r, &a, NULL, CUDNN_STATUS_BAD_PARAM, false, "NULL workspace");
    a = good, a.labels = NULL;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, true, "NULL labels");
    a = good, a.probs = NULL;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "NULL probs");
    a = good, a.costs = NULL;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "NULL costs");
    a = good, a.grads = NULL;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "NULL gradients");
    /* an output on probs, or the costs inside the gradients: each depends on a whole sample */
    a = good, a.grads = (void *)r.px;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "gradients on probs");
    a = good, a.costs = (char *)r.px + 8;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "costs inside probs");
    a = good, a.costs = r.pg;
    expect_rejected(&r, &a, ws, CUDNN_STATUS_BAD_PARAM, false, "costs on gradients");

    /* _v8: the workspace the descriptor's maxLabelLength needs; NULL size */
    size_t need8 = 0;
    CHECK_OK(cudnnGetCTCLossWorkspaceSize_v8(test_handle(), CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, r.probs.desc,
                                             r.grads.desc, &need8));
    CHECK(need8 >= need);
    CHECK_STATUS(cudnnGetCTCLossWorkspaceSize_v8(test_handle(), CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, r.probs.desc,
                                                 ov.desc, &need8),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetCTCLossWorkspaceSize_v8(test_handle(), CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, r.probs.desc,
                                                 r.grads.desc, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    void *dl = tbuf_from(r.labels, sizeof(int) * 5), *dll = tbuf_from(ll, sizeof ll), *dil = tbuf_from(il, sizeof il);
    size_t cost_bytes = sizeof(float) * 2, grad_bytes = tview_bytes(&r.grads);
    void *cs = tbuf_snapshot(r.pcost, cost_bytes), *gs = tbuf_snapshot(r.pg, grad_bytes);
    CHECK_STATUS(cudnnCTCLoss_v8(test_handle(), CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, r.probs.desc, r.px, dl, dll,
                                 dil, r.pcost, r.grads.desc, r.pg, need8 - 1, ws),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnCTCLoss_v8(test_handle(), CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, r.probs.desc, r.px, NULL, dll,
                                 dil, r.pcost, r.grads.desc, r.pg, need8, ws),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(tbuf_unchanged(r.pcost, cs, cost_bytes, "v8 costs") && tbuf_unchanged(r.pg, gs, grad_bytes, "v8 grads"));
    free(cs), free(gs);
    tbuf_free(dl), tbuf_free(dll), tbuf_free(dil);
    tview_destroy(&ov), tview_destroy(&fv), tview_destroy(&dv);
    tbuf_free(ws);
    cudnnDestroyCTCLossDescriptor(d);
    run_free(&r);
}

/* ---- the replay string of the info log (core/check.h) ------------------------------------------ */

/* Replay lines of one call of case c. */
static int replay_lines(struct replay_capture *log, const struct ctc_case *c, bool softmax, int max_label, bool v8,
                        int grads_layout)
{
    struct ctc_run r;
    replay_capture_clear(log);
    run_init(&r, c, softmax, grads_layout);
    cudnnCTCLossDescriptor_t d = make_desc(softmax, true, max_label);
    double *costs = malloc(sizeof(double) * (size_t)c->N), *grads = malloc(sizeof(double) * (size_t)r.grads.count);
    bool ok = run_call(&r, d, v8, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, costs, grads);
    free(costs), free(grads);
    cudnnDestroyCTCLossDescriptor(d);
    run_free(&r);
    return ok ? log->count : -1;
}

/* A call shaped as the benchmark's ctc logs its problem string (labels: the descriptor's
   maximum, or for host labels under a maximum above T the longest label); ragged input lengths,
   NONE normalization or a strided gradient log none. */
TEST(ctc_replay_log)
{
    struct replay_capture log;
    replay_capture_start(&log, "ctc");
    static const int ll[] = {3, 2}, il_ragged[] = {8, 6};
    const struct ctc_case full = {"replay", 8, 2, 5, ll, NULL, 0};
    const struct ctc_case ragged = {"replay ragged", 8, 2, 5, ll, il_ragged, 0};
    CHECK(replay_lines(&log, &full, true, 4, true, TV_NCHW) == 1);
    if (!CHECK(strstr(log.last, "cudnnCTCLoss_v8 on ") != NULL &&
               strstr(log.last, "--problem \"op=ctc api=v8 dt=f32 t=8 n=2 a=5 labels=4\"") != NULL))
        FAIL("%s", log.last);
    CHECK(replay_lines(&log, &full, true, 256, false, TV_NCHW) == 1);
    if (!CHECK(strstr(log.last, "--problem \"op=ctc api=host dt=f32 t=8 n=2 a=5 labels=3\"") != NULL))
        FAIL("%s", log.last);
    CHECK(replay_lines(&log, &full, true, 256, true, TV_NCHW) == 0);
    CHECK(replay_lines(&log, &ragged, true, 4, true, TV_NCHW) == 0);
    CHECK(replay_lines(&log, &ragged, true, 4, false, TV_NCHW) == 0);
    CHECK(replay_lines(&log, &full, false, 4, false, TV_NCHW) == 0);
    CHECK(replay_lines(&log, &full, true, 4, false, TV_PADDED) == 0);
    replay_capture_stop(&log);
}
