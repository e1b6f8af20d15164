/* conv_fold.c: tests of cudnnGetFoldedConvBackwardDataDescriptors.

   End to end: for named problems (strides 2 and 3, mixed strides, asymmetric shapes, padding
   larger than the stride, filters smaller than the stride, dx rows no output reaches, stride 1,
   CONVOLUTION mode where the strided dims have a filter 1 wide),
   in float and half, sources in NCHW, NHWC and padded strides, folded into NCHW and NHWC, the
   documented pipeline (fold the filter, pad dy, backward data on the folded problem, unfold dx)
   must give the dx of a direct cudnnConvolutionBackwardData of the original problem and of the
   double reference (tests/ref/conv.c); the unfold blends with alpha and beta (NaN in dx must not
   leak when beta == 0), and gradFoldTransDesc followed by gradUnfoldTransDesc is the identity.
   Bad inputs: exact statuses, and no output descriptor changed. */
#include "tensors.h"
#include "test.h"

#include "ref/conv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct fold_case {
    const char *name;
    int n, c, k, h, w, r, s, u, v, ph, pw, groups;
    bool convolution;
};

static const struct fold_case fold_cases[] = {
    {"stride2_3x3_pad1", 2, 3, 4, 7, 8, 3, 3, 2, 2, 1, 1, 1, false},
    {"stride3_5x2_asymmetric", 1, 2, 3, 11, 7, 5, 2, 3, 2, 2, 0, 1, false},
    {"stride2x3_1x1", 2, 5, 3, 6, 9, 1, 1, 2, 3, 0, 0, 1, false},
    {"filter_smaller_than_stride", 1, 3, 2, 8, 10, 2, 2, 3, 3, 1, 1, 1, false},
    {"last_dx_rows_unreached", 1, 2, 2, 5, 5, 2, 2, 2, 2, 0, 0, 1, false},
    {"pad_larger_than_stride", 1, 2, 3, 6, 5, 5, 4, 2, 3, 3, 2, 1, false},
    {"stride2x1_mixed", 2, 3, 2, 7, 6, 3, 3, 2, 1, 1, 1, 1, false},
    {"batch1_c1_k1_7x7", 1, 1, 1, 9, 9, 7, 7, 3, 2, 0, 3, 1, false},
    {"stride1_identity_conv_groups", 2, 4, 6, 5, 6, 3, 2, 1, 1, 1, 0, 2, true},
    {"convolution_mode_1x1_stride2", 2, 3, 4, 7, 6, 1, 1, 2, 2, 0, 0, 1, true},
    {"convolution_mode_3x1_strides_1x2", 1, 2, 3, 6, 7, 3, 1, 1, 2, 1, 0, 1, true},
};

/* Descriptors of the folded problem, created empty. */
struct folded {
    cudnnFilterDescriptor_t w;
    cudnnTensorDescriptor_t dy, dx;
    cudnnConvolutionDescriptor_t conv;
    cudnnTensorTransformDescriptor_t w_fold, dy_pad, dx_fold, dx_unfold;
};

static void folded_create(struct folded *f)
{
    CHECK_OK(cudnnCreateFilterDescriptor(&f->w));
    CHECK_OK(cudnnCreateTensorDescriptor(&f->dy));
    CHECK_OK(cudnnCreateTensorDescriptor(&f->dx));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&f->conv));
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&f->w_fold));
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&f->dy_pad));
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&f->dx_fold));
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&f->dx_unfold));
}

static void folded_destroy(struct folded *f)
{
    cudnnDestroyFilterDescriptor(f->w);
    cudnnDestroyTensorDescriptor(f->dy);
    cudnnDestroyTensorDescriptor(f->dx);
    cudnnDestroyConvolutionDescriptor(f->conv);
    cudnnDestroyTensorTransformDescriptor(f->w_fold);
    cudnnDestroyTensorTransformDescriptor(f->dy_pad);
    cudnnDestroyTensorTransformDescriptor(f->dx_fold);
    cudnnDestroyTensorTransformDescriptor(f->dx_unfold);
}

static cudnnStatus_t get_folded(cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy,
                                cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t dx,
                                cudnnTensorFormat_t format, const struct folded *f)
{
    return cudnnGetFoldedConvBackwardDataDescriptors(h, w, dy, conv, dx, format, f->w, f->dy, f->conv, f->dx,
                                                     f->w_fold, f->dy_pad, f->dx_fold, f->dx_unfold);
}

/* A filter buffer in its packed format (NCHW: k, c, r, s; NHWC: k, r, s, c) holding values
   (rounded to the type; values updated to what was stored). */
static void *upload_filter(cudnnDataType_t dt, cudnnTensorFormat_t format, const int d[4], double *values)
{
    size_t n = (size_t)d[0] * d[1] * d[2] * d[3];
    unsigned char *host = malloc(n * tdtype_size(dt));
    for (int k = 0; k < d[0]; k++)
        for (int c = 0; c < d[1]; c++)
            for (int r = 0; r < d[2]; r++)
                for (int s = 0; s < d[3]; s++) {
                    size_t i = (((size_t)k * d[1] + c) * d[2] + r) * d[3] + s;
                    size_t o = format == CUDNN_TENSOR_NCHW ? i : (((size_t)k * d[2] + r) * d[3] + s) * d[1] + c;
                    tstore(dt, host, (int64_t)o, values[i]);
                    values[i] = tload(dt, host, (int64_t)o);
                }
    void *buf = tbuf_from(host, n * tdtype_size(dt));
    free(host);
    return buf;
}

/* dx = alpha * backward data + beta * dx, with the algorithm the heuristic ranks first; returns
   the tolerance of its results (0 when the call failed). */
static double bwd_data(cudnnHandle_t h, double alpha, cudnnFilterDescriptor_t wd, const void *w,
                     cudnnTensorDescriptor_t dyd, const void *dy, cudnnConvolutionDescriptor_t conv,
                     cudnnTensorDescriptor_t dxd, void *dx, cudnnDataType_t dt)
{
    cudnnConvolutionBwdDataAlgoPerf_t perf;
    int got = 0;
    if (!CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, dyd, conv, dxd, 1, &got, &perf)) ||
        !CHECK(got == 1 && perf.status == CUDNN_STATUS_SUCCESS))
        return 0;
    void *ws = perf.memory ? tbuf_alloc(perf.memory) : NULL;
    struct tscale a, b;
    bool ok = CHECK_OK(cudnnConvolutionBackwardData(h, tscale(&a, dt, alpha), wd, w, dyd, dy, conv, perf.algo, ws,
                                                    perf.memory, tscale(&b, dt, 0), dxd, dx));
    if (ws) tbuf_free(ws);
    return ok ? tconv_tolerance(dt, dt, perf.mathType) : 0;
}

/* A check of one case: a failure names the case. */
#define CASE_CHECK(cond)                                                                         \
    do {                                                                                         \
        if (!CHECK(cond)) FAIL("in case %s", label);                                             \
    } while (0)
#define CASE_OK(call)                                                                            \
    do {                                                                                         \
        if (!CHECK_OK(call)) FAIL("in case %s", label);                                          \
    } while (0)

/* The folded convolution: unit stride, no padding, cross-correlation; a copy of the original
   for stride 1. */
static void check_folded_conv(const struct fold_case *fc, const struct folded *f, cudnnDataType_t dt,
                              cudnnTensorFormat_t format, const char *label)
{
    int ph, pw, u, v, dh, dw, groups;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    CASE_OK(cudnnGetConvolution2dDescriptor(f->conv, &ph, &pw, &u, &v, &dh, &dw, &mode, &compute));
    CASE_OK(cudnnGetConvolutionGroupCount(f->conv, &groups));
    bool identity = fc->u == 1 && fc->v == 1;
    if (identity)
        CASE_CHECK(ph == fc->ph && pw == fc->pw && groups == fc->groups &&
                   mode == (fc->convolution ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION));
    else /* the mode stays (CONVOLUTION folds where the strided dims have a filter 1 wide) */
        CASE_CHECK(ph == 0 && pw == 0 && groups == 1 &&
                   mode == (fc->convolution ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION));
    CASE_CHECK(u == 1 && v == 1 && dh == 1 && dw == 1 && compute == CUDNN_DATA_FLOAT);
    cudnnDataType_t fdt;
    cudnnTensorFormat_t ffmt;
    int k, c, r, s;
    CASE_OK(cudnnGetFilter4dDescriptor(f->w, &fdt, &ffmt, &k, &c, &r, &s));
    CASE_CHECK(fdt == dt && ffmt == format && k == fc->k && c == fc->c / fc->groups * fc->u * fc->v &&
               r == (fc->r + fc->u - 1) / fc->u && s == (fc->s + fc->v - 1) / fc->v);
}

static void run_case(const struct fold_case *fc, cudnnDataType_t dt, cudnnTensorFormat_t format, int variant)
{
    cudnnHandle_t h = test_handle();
    char label[160], what[200];
    snprintf(label, sizeof label, "%s, %s, folded to %s, variant %d", fc->name, dt == CUDNN_DATA_HALF ? "half" : "float",
             format == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW", variant);
    struct ref_conv rc = {.nsp = 2, .n = fc->n, .c = fc->c, .k = fc->k, .groups = fc->groups,
                          .in = {fc->h, fc->w}, .filt = {fc->r, fc->s}, .pad = {fc->ph, fc->pw},
                          .stride = {fc->u, fc->v}, .dil = {1, 1}, .convolution = fc->convolution};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    static const int layouts[] = {TV_NCHW, TV_NHWC, TV_PADDED};
    int xd[4] = {fc->n, fc->c, fc->h, fc->w}, yd[4] = {fc->n, fc->k, rc.out[0], rc.out[1]};
    int wdims[4] = {fc->k, fc->c / fc->groups, fc->r, fc->s};
    /* Four variants per case (type x format); the filter's format, the sources' layouts and the
       blend of the unfold rotate across them independently. */
    cudnnTensorFormat_t wformat = (variant + variant / 4) % 2 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    bool blend = (variant / 2 + variant / 4) % 2;
    struct tview dx, dy;
    tview_init(&dx, dt, 4, xd, layouts[variant % 3]);
    tview_init(&dy, dt, 4, yd, layouts[(variant + 1) % 3]);
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t conv;
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    CHECK_OK(cudnnSetFilterNdDescriptor(wd, dt, wformat, 4, wdims));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&conv));
    CHECK_OK(cudnnSetConvolution2dDescriptor(conv, fc->ph, fc->pw, fc->u, fc->v, 1, 1,
                                             fc->convolution ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                             CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionGroupCount(conv, fc->groups));
    struct folded f;
    folded_create(&f);
    if (!CHECK_OK(get_folded(h, wd, dy.desc, conv, dx.desc, format, &f))) {
        FAIL("in case %s", label);
        goto out_desc;
    }
    check_folded_conv(fc, &f, dt, format, label);

    int64_t wn = (int64_t)wdims[0] * wdims[1] * wdims[2] * wdims[3];
    double *wv = tview_random(wn, -1, 1), *dyv = tview_random(dy.count, -1, 1), *want = malloc(sizeof(double) * (size_t)dx.count);
    void *pw = upload_filter(dt, wformat, wdims, wv), *pdy = tview_upload(&dy, dyv);
    ref_conv_bwd_data(&rc, dyv, wv, want);

    /* the pipeline */
    size_t wf_bytes, dyp_bytes, dxf_bytes;
    CASE_OK(cudnnGetFilterSizeInBytes(f.w, &wf_bytes));
    CASE_OK(cudnnGetTensorSizeInBytes(f.dy, &dyp_bytes));
    CASE_OK(cudnnGetTensorSizeInBytes(f.dx, &dxf_bytes));
    void *pwf = tbuf_alloc(wf_bytes), *pdyp = tbuf_alloc(dyp_bytes), *pdxf = tbuf_alloc(dxf_bytes);
    struct tscale one, zero, alpha_s, beta_s;
    CASE_OK(cudnnTransformFilter(h, f.w_fold, tscale(&one, dt, 1), wd, pw, tscale(&zero, dt, 0), f.w, pwf));
    CASE_OK(cudnnTransformTensorEx(h, f.dy_pad, &one.f, dy.desc, pdy, &zero.f, f.dy, pdyp));
    double tol = bwd_data(h, 1, f.w, pwf, f.dy, pdyp, f.conv, f.dx, pdxf, dt);
    double alpha = blend ? 0.75 : 1, beta = blend ? -0.5 : 0;
    double *prior = beta != 0 ? tview_random(dx.count, -1, 1) : NULL;
    void *pdx = tview_upload(&dx, prior); /* NaN everywhere when beta == 0 */
    CASE_OK(cudnnTransformTensorEx(h, f.dx_unfold, tscale(&alpha_s, dt, alpha), f.dx, pdxf, tscale(&beta_s, dt, beta),
                                    dx.desc, pdx));
    snprintf(what, sizeof what, "%s: folded pipeline dx vs reference", label);
    tview_check_blend(&dx, pdx, want, prior, alpha, beta, tol, what);

    /* the direct backward data of the original problem */
    void *pdx_direct = tview_upload(&dx, NULL);
    double *direct = malloc(sizeof(double) * (size_t)dx.count);
    double direct_tol = bwd_data(h, 1, wd, pw, dy.desc, pdy, conv, dx.desc, pdx_direct, dt);
    snprintf(what, sizeof what, "%s: direct dx vs reference", label);
    tview_check_blend(&dx, pdx_direct, want, NULL, 1, 0, direct_tol, what);
    tview_download(&dx, pdx_direct, direct);
    snprintf(what, sizeof what, "%s: folded pipeline dx vs direct dx", label);
    tview_check_blend(&dx, pdx, direct, prior, alpha, beta, fmax(tol, direct_tol), what);

    /* gradFoldTransDesc then gradUnfoldTransDesc gives dx back */
    void *pdx_back = tview_upload(&dx, NULL);
    CASE_OK(cudnnTransformTensorEx(h, f.dx_fold, &one.f, dx.desc, pdx_direct, &zero.f, f.dx, pdxf));
    CASE_OK(cudnnTransformTensorEx(h, f.dx_unfold, &one.f, f.dx, pdxf, &zero.f, dx.desc, pdx_back));
    snprintf(what, sizeof what, "%s: dx folded and unfolded", label);
    tview_holds(&dx, pdx_back, direct, what);
    tview_gaps_intact(&dx, pdx_back, what);

    tview_free(&dx, pdx_back);
    tview_free(&dx, pdx_direct);
    tview_free(&dx, pdx);
    tview_free(&dy, pdy);
    tbuf_free(pw);
    tbuf_free(pwf);
    tbuf_free(pdyp);
    tbuf_free(pdxf);
    free(wv);
    free(dyv);
    free(want);
    free(prior);
    free(direct);
out_desc:
    folded_destroy(&f);
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(wd);
    tview_destroy(&dx);
    tview_destroy(&dy);
}

TEST(conv_fold_matches_direct_backward_data)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    static const cudnnTensorFormat_t formats[] = {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC};
    int variant = 0;
    for (size_t i = 0; i < TLEN(fold_cases); i++)
        for (size_t t = 0; t < TLEN(types); t++)
            for (size_t f = 0; f < TLEN(formats); f++) run_case(&fold_cases[i], types[t], formats[f], variant++);
}

/* The case programs fold most (ResNet-50's downsampling 1x1 stride 2 backward data: c 1024, 14x14,
   k 2048), float, in both modes, folded into NCHW and NHWC, the whole pipeline against the plain
   backward data and the reference. The host pass runs it with an eighth of the channels (same
   geometry). */
TEST(conv_fold_resnet_downsample)
{
    const bool host = test_backend[0] == 'h';
    for (int mode = 0; mode < 2; mode++) { /* cross-correlation, and CONVOLUTION as NVIDIA's samples declare it */
        const struct fold_case fc = {"resnet_downsample_1x1_stride2", host ? 1 : 2, host ? 128 : 1024,
                                     host ? 256 : 2048, 14, 14, 1, 1, 2, 2, 0, 0, 1, mode == 1};
        run_case(&fc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2 * mode);
        run_case(&fc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 2 * mode + 1);
    }
}

/* A 2-D backward-data problem in packed NCHW: dx n x c x h x w, a k x c/groups x r x s filter,
   and dy of the forward output size. */
struct problem {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
};

static void problem_make(struct problem *p, cudnnDataType_t dt, const int x[4], int k, int r, int s, int pad,
                         int stride, int dilation, cudnnConvolutionMode_t mode, int groups)
{
    int y[4];
    cudnnCreateTensorDescriptor(&p->x);
    cudnnCreateTensorDescriptor(&p->y);
    cudnnCreateFilterDescriptor(&p->w);
    cudnnCreateConvolutionDescriptor(&p->conv);
    CHECK_OK(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, dt, x[0], x[1], x[2], x[3]));
    CHECK_OK(cudnnSetFilter4dDescriptor(p->w, dt, CUDNN_TENSOR_NCHW, k, x[1] / groups, r, s));
    CHECK_OK(cudnnSetConvolution2dDescriptor(p->conv, pad, pad, stride, stride, dilation, dilation, mode,
                                             CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionGroupCount(p->conv, groups));
    CHECK_OK(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, y, y + 1, y + 2, y + 3));
    CHECK_OK(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, dt, y[0], y[1], y[2], y[3]));
}

static void problem_destroy(struct problem *p)
{
    cudnnDestroyTensorDescriptor(p->x);
    cudnnDestroyTensorDescriptor(p->y);
    cudnnDestroyFilterDescriptor(p->w);
    cudnnDestroyConvolutionDescriptor(p->conv);
}

static cudnnStatus_t fold_problem(cudnnHandle_t h, const struct problem *p, cudnnTensorFormat_t format,
                                  const struct folded *f)
{
    return get_folded(h, p->w, p->y, p->conv, p->x, format, f);
}

/* Stride 1 needs no folding: every transform is a plain layout change (no padding, no fold). */
TEST(conv_fold_stride1_is_identity)
{
    cudnnHandle_t h = test_handle();
    struct problem p;
    problem_make(&p, CUDNN_DATA_FLOAT, (int[4]){2, 3, 6, 5}, 4, 3, 3, 1, 1, 1, CUDNN_CROSS_CORRELATION, 1);
    struct folded f;
    folded_create(&f);
    CHECK_OK(fold_problem(h, &p, CUDNN_TENSOR_NHWC, &f));
    cudnnTensorTransformDescriptor_t ts[] = {f.w_fold, f.dy_pad, f.dx_fold, f.dx_unfold};
    for (size_t i = 0; i < TLEN(ts); i++) {
        cudnnTensorFormat_t fmt;
        int32_t before[4], after[4];
        uint32_t fold[2];
        cudnnFoldingDirection_t dir;
        CHECK_OK(cudnnGetTensorTransformDescriptor(ts[i], 4, &fmt, before, after, fold, &dir));
        CHECK(fmt == CUDNN_TENSOR_NHWC && fold[0] == 1 && fold[1] == 1);
        for (int d = 0; d < 4; d++) CHECK(before[d] == 0 && after[d] == 0);
    }
    cudnnDataType_t dt;
    int n, c, hh, ww, ns, cs, hs, wstr;
    CHECK_OK(cudnnGetTensor4dDescriptor(f.dx, &dt, &n, &c, &hh, &ww, &ns, &cs, &hs, &wstr));
    CHECK(n == 2 && c == 3 && hh == 6 && ww == 5 && cs == 1 && wstr == 3); /* packed NHWC */
    folded_destroy(&f);
    problem_destroy(&p);
}

/* ---- bad inputs ---------------------------------------------------------------------------------- */

/* Everything the outputs say, read back through the Get functions. */
struct fold_snapshot {
    int v[6 + 8 + 8 + 7 + 4 * 11]; /* filter, dy, dx, convolution, four transforms: as snapshot() fills it */
};

static void snapshot(const struct folded *f, struct fold_snapshot *s)
{
    memset(s, 0, sizeof *s);
    int *p = s->v;
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    CHECK_OK(cudnnGetFilter4dDescriptor(f->w, &dt, &fmt, p, p + 1, p + 2, p + 3));
    p[4] = (int)dt, p[5] = (int)fmt, p += 6;
    CHECK_OK(cudnnGetTensor4dDescriptor(f->dy, &dt, p, p + 1, p + 2, p + 3, p + 4, p + 5, p + 6, p + 7));
    p += 8;
    CHECK_OK(cudnnGetTensor4dDescriptor(f->dx, &dt, p, p + 1, p + 2, p + 3, p + 4, p + 5, p + 6, p + 7));
    p += 8;
    cudnnConvolutionMode_t mode;
    CHECK_OK(cudnnGetConvolution2dDescriptor(f->conv, p, p + 1, p + 2, p + 3, p + 4, p + 5, &mode, &dt));
    p[6] = (int)mode, p += 7;
    cudnnTensorTransformDescriptor_t ts[] = {f->w_fold, f->dy_pad, f->dx_fold, f->dx_unfold};
    for (size_t i = 0; i < TLEN(ts); i++) {
        cudnnFoldingDirection_t dir;
        uint32_t fold[2];
        CHECK_OK(cudnnGetTensorTransformDescriptor(ts[i], 4, &fmt, p, p + 4, fold, &dir));
        p[8] = (int)fold[0], p[9] = (int)fold[1], p[10] = (int)dir, p += 11; /* pads before, after: 8 */
    }
}

TEST(conv_fold_bad_inputs)
{
    cudnnHandle_t h = test_handle();
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM, NOT = CUDNN_STATUS_NOT_SUPPORTED;
    /* 2x4x7x8 input, 3x3 filter, stride 2, pad 1: a 2x4x4x4 output */
    const int xd[4] = {2, 4, 7, 8};
    struct problem ok, dilated, mirrored, grouped, other;
    problem_make(&ok, CUDNN_DATA_FLOAT, xd, 4, 3, 3, 1, 2, 1, CUDNN_CROSS_CORRELATION, 1);
    problem_make(&dilated, CUDNN_DATA_FLOAT, xd, 4, 3, 3, 2, 2, 2, CUDNN_CROSS_CORRELATION, 1);
    problem_make(&mirrored, CUDNN_DATA_FLOAT, xd, 4, 3, 3, 1, 2, 1, CUDNN_CONVOLUTION, 1);
    problem_make(&grouped, CUDNN_DATA_FLOAT, xd, 4, 3, 3, 1, 2, 1, CUDNN_CROSS_CORRELATION, 2);
    problem_make(&other, CUDNN_DATA_HALF, (int[4]){1, 2, 9, 9}, 3, 2, 2, 0, 3, 1, CUDNN_CROSS_CORRELATION, 1);
    cudnnTensorDescriptor_t x = ok.x, y = ok.y, y_wrong, unset, dead, x5, y5;
    cudnnFilterDescriptor_t w = ok.w, w5;
    cudnnConvolutionDescriptor_t conv = ok.conv, conv3d;
    cudnnCreateTensorDescriptor(&y_wrong);
    cudnnCreateTensorDescriptor(&unset);
    cudnnCreateTensorDescriptor(&dead);
    cudnnDestroyTensorDescriptor(dead);
    cudnnCreateTensorDescriptor(&x5);
    cudnnCreateTensorDescriptor(&y5);
    cudnnCreateFilterDescriptor(&w5);
    cudnnCreateConvolutionDescriptor(&conv3d);
    CHECK_OK(cudnnSetTensor4dDescriptor(y_wrong, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 5, 4));
    int x5d[5] = {1, 2, 5, 5, 5}, y5d[5] = {1, 2, 3, 3, 3}, w5d[5] = {2, 2, 3, 3, 3};
    int x5s[5] = {250, 125, 25, 5, 1}, y5s[5] = {54, 27, 9, 3, 1}, pad3[3] = {1, 1, 1}, str3[3] = {2, 2, 2}, dil3[3] = {1, 1, 1};
    CHECK_OK(cudnnSetTensorNdDescriptor(x5, CUDNN_DATA_FLOAT, 5, x5d, x5s));
    CHECK_OK(cudnnSetTensorNdDescriptor(y5, CUDNN_DATA_FLOAT, 5, y5d, y5s));
    CHECK_OK(cudnnSetFilterNdDescriptor(w5, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, w5d));
    CHECK_OK(cudnnSetConvolutionNdDescriptor(conv3d, 3, pad3, str3, dil3, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));

    /* The outputs hold the folding of another problem (half, stride 3, NHWC); a rejected call
       must leave every one of them as it is. */
    struct folded f;
    folded_create(&f);
    CHECK_OK(fold_problem(h, &other, CUDNN_TENSOR_NHWC, &f));
    struct fold_snapshot before, after;
    snapshot(&f, &before);
    const cudnnTensorFormat_t NCHW = CUDNN_TENSOR_NCHW;
    cudnnTensorTransformDescriptor_t tdead;
    cudnnCreateTensorTransformDescriptor(&tdead);
    cudnnDestroyTensorTransformDescriptor(tdead);
    struct {
        cudnnStatus_t got, want;
        const char *what;
    } cases[] = {
        /* "any input parameter is NULL, or the input tensor has more than 4 dims": BAD_PARAM */
        {get_folded(NULL, w, y, conv, x, NCHW, &f), BAD, "NULL handle"},
        {get_folded(h, NULL, y, conv, x, NCHW, &f), BAD, "NULL filterDesc"},
        {get_folded(h, w, NULL, conv, x, NCHW, &f), BAD, "NULL diffDesc"},
        {get_folded(h, w, y, NULL, x, NCHW, &f), BAD, "NULL convDesc"},
        {get_folded(h, w, y, conv, NULL, NCHW, &f), BAD, "NULL gradDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, NULL, f.dy, f.conv, f.dx, f.w_fold, f.dy_pad,
                                                   f.dx_fold, f.dx_unfold), BAD, "NULL foldedFilterDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, NULL, f.conv, f.dx, f.w_fold, f.dy_pad,
                                                   f.dx_fold, f.dx_unfold), BAD, "NULL paddedDiffDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, f.dy, NULL, f.dx, f.w_fold, f.dy_pad,
                                                   f.dx_fold, f.dx_unfold), BAD, "NULL foldedConvDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, f.dy, f.conv, NULL, f.w_fold, f.dy_pad,
                                                   f.dx_fold, f.dx_unfold), BAD, "NULL foldedGradDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, f.dy, f.conv, f.dx, NULL, f.dy_pad,
                                                   f.dx_fold, f.dx_unfold), BAD, "NULL filterFoldTransDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, f.dy, f.conv, f.dx, f.w_fold, NULL,
                                                   f.dx_fold, f.dx_unfold), BAD, "NULL diffPadTransDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, f.dy, f.conv, f.dx, f.w_fold, f.dy_pad,
                                                   NULL, f.dx_unfold), BAD, "NULL gradFoldTransDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, f.dy, f.conv, f.dx, f.w_fold, f.dy_pad,
                                                   f.dx_fold, NULL), BAD, "NULL gradUnfoldTransDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, f.dy, f.conv, f.dx, f.w_fold, f.dy_pad,
                                                   f.dx_fold, tdead), BAD, "destroyed gradUnfoldTransDesc"},
        {cudnnGetFoldedConvBackwardDataDescriptors(h, w, y, conv, x, NCHW, f.w, f.dy, f.conv, f.dx, f.w_fold, f.dy_pad,
                                                   (cudnnTensorTransformDescriptor_t)(void *)x, f.dx_unfold), BAD,
         "a tensor descriptor as gradFoldTransDesc"},
        {get_folded(h, w, dead, conv, x, NCHW, &f), BAD, "destroyed diffDesc"},
        {get_folded(h, w, y, conv, unset, NCHW, &f), BAD, "gradDesc never set"},
        {get_folded(h, w5, y5, conv3d, x5, NCHW, &f), BAD, "5-D tensors"},
        {get_folded(h, w, y_wrong, conv, x, NCHW, &f), BAD, "diffDesc of the wrong size"},
        {get_folded(h, w, y, conv, x, (cudnnTensorFormat_t)77, &f), BAD, "invalid transformFormat"},
        /* legal but not foldable */
        {get_folded(h, w, y, conv, x, CUDNN_TENSOR_NCHW_VECT_C, &f), NOT, "transformFormat NCHW_VECT_C"},
        {fold_problem(h, &dilated, NCHW, &f), NOT, "dilation 2"},
        {fold_problem(h, &mirrored, NCHW, &f), NOT, "CUDNN_CONVOLUTION mode, a 3x3 filter, stride 2"},
        {fold_problem(h, &grouped, NCHW, &f), NOT, "two groups with stride 2"},
    };
    for (size_t i = 0; i < TLEN(cases); i++)
        if (!CHECK_STATUS(cases[i].got, cases[i].want)) FAIL("case: %s", cases[i].what);
    snapshot(&f, &after);
    CHECK(memcmp(&before, &after, sizeof before) == 0);
    /* the problem itself is fine */
    CHECK_OK(get_folded(h, w, y, conv, x, NCHW, &f));

    folded_destroy(&f);
    problem_destroy(&ok);
    problem_destroy(&dilated);
    problem_destroy(&mirrored);
    problem_destroy(&grouped);
    problem_destroy(&other);
    cudnnDestroyTensorDescriptor(y_wrong);
    cudnnDestroyTensorDescriptor(unset);
    cudnnDestroyTensorDescriptor(x5);
    cudnnDestroyTensorDescriptor(y5);
    cudnnDestroyFilterDescriptor(w5);
    cudnnDestroyConvolutionDescriptor(conv3d);
}
