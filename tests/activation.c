/* activation.c: tests of the activation descriptor, cudnnActivationForward and
   cudnnActivationBackward against ref/activation.c, by finite differences, and on bad input. */
#include "ref/activation.h"
#include "test.h"
#include "tensors.h"

#include <math.h>
#include <stdlib.h>

static const cudnnDataType_t float_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                              CUDNN_DATA_BFLOAT16};
static const cudnnActivationMode_t modes[] = {CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_RELU,
                                              CUDNN_ACTIVATION_TANH, CUDNN_ACTIVATION_CLIPPED_RELU,
                                              CUDNN_ACTIVATION_ELU, CUDNN_ACTIVATION_SWISH};

/* coef of each mode in these tests: a ceiling inside the input range for clipped ReLU, an ELU
   alpha other than 1; swish gets a beta other than 1. */
static double coef_of(cudnnActivationMode_t mode)
{
    return mode == CUDNN_ACTIVATION_CLIPPED_RELU ? 1.5 : mode == CUDNN_ACTIVATION_ELU ? 0.7 : 0.0;
}
#define SWISH_BETA 1.25

static cudnnActivationDescriptor_t make_desc(cudnnActivationMode_t mode, cudnnNanPropagation_t nan)
{
    cudnnActivationDescriptor_t d = NULL;
    CHECK_OK(cudnnCreateActivationDescriptor(&d));
    CHECK_OK(cudnnSetActivationDescriptor(d, mode, nan, coef_of(mode)));
    CHECK_OK(cudnnSetActivationDescriptorSwishBeta(d, SWISH_BETA));
    return d;
}

struct shape {
    int rank, dims[5];
};
static const struct shape shapes[] = {
    {4, {2, 5, 3, 7}},  /* odd sizes: 210 elements, a vector tail on the GPU */
    {4, {1, 1, 1, 1}},  /* one element */
    {5, {2, 3, 2, 3, 5}},
    {4, {3, 16, 8, 8}}, /* several vectors per thread */
};

/* ---- descriptor ---------------------------------------------------------------------------------- */

TEST_ONCE(activation_descriptor_set_get_destroy)
{
    cudnnActivationDescriptor_t d;
    CHECK_STATUS(cudnnCreateActivationDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(cudnnCreateActivationDescriptor(&d))) return;
    cudnnActivationMode_t mode = (cudnnActivationMode_t)-1;
    cudnnNanPropagation_t nan = (cudnnNanPropagation_t)-1;
    double coef = -1, sb = -1;
    CHECK_OK(cudnnGetActivationDescriptorSwishBeta(d, &sb));
    CHECK(sb == 1.0);
    CHECK_OK(cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_PROPAGATE_NAN, 6.0));
    CHECK_OK(cudnnGetActivationDescriptor(d, &mode, &nan, &coef));
    CHECK(mode == CUDNN_ACTIVATION_CLIPPED_RELU && nan == CUDNN_PROPAGATE_NAN && coef == 6.0);
    CHECK_OK(cudnnSetActivationDescriptorSwishBeta(d, 0.5));
    CHECK_OK(cudnnGetActivationDescriptorSwishBeta(d, &sb));
    CHECK(sb == 0.5);
    /* IDENTITY is a valid mode of the descriptor (for the fused convolution). */
    CHECK_OK(cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    /* Invalid enumerants: BAD_PARAM, descriptor unchanged. */
    CHECK_STATUS(cudnnSetActivationDescriptor(d, (cudnnActivationMode_t)7, CUDNN_NOT_PROPAGATE_NAN, 1.0),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_RELU, (cudnnNanPropagation_t)2, 1.0),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetActivationDescriptor(d, &mode, &nan, &coef));
    CHECK(mode == CUDNN_ACTIVATION_IDENTITY && nan == CUDNN_NOT_PROPAGATE_NAN && coef == 0.0);
    CHECK_STATUS(cudnnGetActivationDescriptor(d, NULL, &nan, &coef), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetActivationDescriptor(d, &mode, &nan, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetActivationDescriptorSwishBeta(d, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetActivationDescriptor(NULL, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetActivationDescriptorSwishBeta(NULL, 1.0), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyActivationDescriptor(d));
    CHECK_STATUS(cudnnGetActivationDescriptor(d, &mode, &nan, &coef), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyActivationDescriptor(NULL));
    /* A tensor descriptor is not an activation descriptor. */
    cudnnTensorDescriptor_t t;
    CHECK_OK(cudnnCreateTensorDescriptor(&t));
    CHECK_STATUS(cudnnSetActivationDescriptorSwishBeta((cudnnActivationDescriptor_t)(void *)t, 1.0),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyTensorDescriptor(t));
}

/* ---- forward ---------------------------------------------------------------------------------- */

/* One forward call against the reference: x and y in their layouts, y already holding NaN when
   beta == 0 (it must not be read) or random values. Returns false after a failure. */
static bool check_forward(cudnnDataType_t t, cudnnActivationMode_t mode, cudnnNanPropagation_t nan,
                          const struct shape *s, enum tview_layout lx, enum tview_layout ly, double alpha, double beta,
                          int shift)
{
    char what[160];
    snprintf(what, sizeof what, "forward type %d mode %d rank %d x %s y %s beta %g shift %d", (int)t, (int)mode,
             s->rank, tview_layout_name(lx), tview_layout_name(ly), beta, shift);
    struct tview tx, ty;
    tview_init(&tx, t, s->rank, s->dims, lx);
    tview_init(&ty, t, s->rank, s->dims, ly);
    tx.shift = ty.shift = shift;
    int64_t n = tx.count;
    double *x = tview_random(n, -3, 3), *y = beta == 0 ? tview_fill(n, NAN) : tview_random(n, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)n);
    void *dx = tview_upload(&tx, x), *dy = tview_upload(&ty, y);
    for (int64_t i = 0; i < n; i++) want[i] = ref_activation(mode, nan == CUDNN_PROPAGATE_NAN, coef_of(mode), SWISH_BETA, x[i]);
    cudnnActivationDescriptor_t d = make_desc(mode, nan);
    struct tscale a, b;
    bool ok = CHECK_OK(cudnnActivationForward(test_handle(), d, tscale(&a, t, alpha), tx.desc, dx,
                                              tscale(&b, t, beta), ty.desc, dy));
    ok = ok && tview_check_blend(&ty, dy, want, y, alpha, beta, ttolerance(t), what);
    ok = ok && tview_holds(&tx, dx, x, what);
    cudnnDestroyActivationDescriptor(d);
    tview_free(&tx, dx);
    tview_free(&ty, dy);
    tview_destroy(&tx);
    tview_destroy(&ty);
    free(x);
    free(y);
    free(want);
    return ok;
}

TEST(activation_forward_matches_reference)
{
    for (size_t ti = 0; ti < 4; ti++)
        for (size_t m = 0; m < TLEN(modes); m++)
            for (size_t si = 0; si < TLEN(shapes); si++)
                for (int l = 0; l < TV_LAYOUTS; l++)
                    if (!check_forward(float_types[ti], modes[m], CUDNN_NOT_PROPAGATE_NAN, &shapes[si],
                                       (enum tview_layout)l, (enum tview_layout)l, 1.0, l % 2 ? 0.0 : 0.5, 0))
                        return;
}

TEST(activation_forward_layouts_alpha_and_alignment)
{
    const struct shape s = {4, {2, 6, 3, 5}};
    for (size_t ti = 0; ti < 4; ti++) {
        cudnnDataType_t t = float_types[ti];
        /* a layout change on the way (x and y with different strides) */
        if (!check_forward(t, CUDNN_ACTIVATION_TANH, CUDNN_NOT_PROPAGATE_NAN, &s, TV_NCHW, TV_NHWC, -1.5, 0.0, 0)) return;
        if (!check_forward(t, CUDNN_ACTIVATION_ELU, CUDNN_NOT_PROPAGATE_NAN, &s, TV_NHWC_PADDED, TV_PADDED, 0.5, 2.0, 0)) return;
        /* pointers one scalar off 16-byte alignment */
        if (!check_forward(t, CUDNN_ACTIVATION_SWISH, CUDNN_NOT_PROPAGATE_NAN, &s, TV_NCHW, TV_NCHW, 2.0, 0.25, 1)) return;
    }
}

TEST(activation_nan_propagation)
{
    const struct shape s = {4, {1, 3, 4, 5}};
    cudnnActivationMode_t clip[] = {CUDNN_ACTIVATION_RELU, CUDNN_ACTIVATION_CLIPPED_RELU};
    for (int m = 0; m < 2; m++)
        for (int nan = 0; nan < 2; nan++) {
            struct tview tx, ty;
            tview_init(&tx, CUDNN_DATA_FLOAT, 4, s.dims, TV_NCHW);
            tview_init(&ty, CUDNN_DATA_FLOAT, 4, s.dims, TV_NCHW);
            double *x = tview_random(tx.count, -2, 2), *y = tview_fill(tx.count, 0), want[60], got[60];
            for (int i = 0; i < 60; i += 7) x[i] = NAN;
            void *dx = tview_upload(&tx, x), *dy = tview_upload(&ty, y);
            for (int i = 0; i < 60; i++) want[i] = ref_activation(clip[m], nan, coef_of(clip[m]), 1, x[i]);
            cudnnActivationDescriptor_t d = make_desc(clip[m], (cudnnNanPropagation_t)nan);
            float one = 1, zero = 0;
            CHECK_OK(cudnnActivationForward(test_handle(), d, &one, tx.desc, dx, &zero, ty.desc, dy));
            tview_download(&ty, dy, got);
            tcompare(CUDNN_DATA_DOUBLE, got, want, 60, 1e-6, nan ? "forward, NaN propagated" : "forward, NaN dropped");
            /* backward: the gradient at a NaN input follows the same option */
            for (int i = 0; i < 60; i++) want[i] = ref_activation_grad(clip[m], nan, coef_of(clip[m]), 1, x[i], 0.5);
            double *g = tview_fill(60, 0.5);
            void *dg = tview_upload(&ty, g), *ddx = tview_upload(&ty, y);
            CHECK_OK(cudnnActivationBackward(test_handle(), d, &one, ty.desc, dy, ty.desc, dg, tx.desc, dx, &zero,
                                             ty.desc, ddx));
            tview_download(&ty, ddx, got);
            tcompare(CUDNN_DATA_DOUBLE, got, want, 60, 1e-6, nan ? "backward, NaN propagated" : "backward, NaN dropped");
            cudnnDestroyActivationDescriptor(d);
            tview_free(&tx, dx);
            tview_free(&ty, dy);
            tview_free(&ty, dg);
            tview_free(&ty, ddx);
            tview_destroy(&tx);
            tview_destroy(&ty);
            free(x);
            free(y);
            free(g);
        }
}

/* ---- backward --------------------------------------------------------------------------------- */

/* One backward call against the reference: y = f(x) as the forward stored it (rounded to the
   type), dy random, dx holding NaN when beta == 0. lxy: layout of x and dx; ldy: of y and dy. */
static bool check_backward(cudnnDataType_t t, cudnnActivationMode_t mode, const struct shape *s, enum tview_layout lx,
                           enum tview_layout ly, double alpha, double beta)
{
    char what[160];
    snprintf(what, sizeof what, "backward type %d mode %d rank %d x %s y %s beta %g", (int)t, (int)mode, s->rank,
             tview_layout_name(lx), tview_layout_name(ly), beta);
    struct tview tx, ty;
    tview_init(&tx, t, s->rank, s->dims, lx);
    tview_init(&ty, t, s->rank, s->dims, ly);
    int64_t n = tx.count;
    double coef = coef_of(mode);
    double *x = tview_random(n, -3, 3), *y = malloc(sizeof(double) * (size_t)n), *g = tview_random(n, -1, 1);
    double *dx0 = beta == 0 ? tview_fill(n, NAN) : tview_random(n, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)n);
    void *px = tview_upload(&tx, x);
    for (int64_t i = 0; i < n; i++) y[i] = ref_activation(mode, false, coef, SWISH_BETA, x[i]);
    void *py = tview_upload(&ty, y), *pdy = tview_upload(&ty, g), *pdx = tview_upload(&tx, dx0);
    for (int64_t i = 0; i < n; i++) want[i] = ref_activation_grad(mode, false, coef, SWISH_BETA, x[i], g[i]);
    cudnnActivationDescriptor_t d = make_desc(mode, CUDNN_NOT_PROPAGATE_NAN);
    struct tscale a, b;
    bool ok = CHECK_OK(cudnnActivationBackward(test_handle(), d, tscale(&a, t, alpha), ty.desc, py, ty.desc, pdy,
                                               tx.desc, px, tscale(&b, t, beta), tx.desc, pdx));
    /* sigmoid and tanh differentiate through y, rounded to the type: allow that rounding */
    ok = ok && tview_check_blend(&tx, pdx, want, dx0, alpha, beta, 2 * ttolerance(t), what);
    ok = ok && tview_holds(&ty, pdy, g, what) && tview_holds(&tx, px, x, what);
    cudnnDestroyActivationDescriptor(d);
    tview_free(&tx, px);
    tview_free(&ty, py);
    tview_free(&ty, pdy);
    tview_free(&tx, pdx);
    tview_destroy(&tx);
    tview_destroy(&ty);
    free(x);
    free(y);
    free(g);
    free(dx0);
    free(want);
    return ok;
}

TEST(activation_backward_matches_reference)
{
    for (size_t ti = 0; ti < 4; ti++)
        for (size_t m = 0; m < TLEN(modes); m++)
            for (size_t si = 0; si < TLEN(shapes); si++)
                for (int l = 0; l < TV_LAYOUTS; l++)
                    if (!check_backward(float_types[ti], modes[m], &shapes[si], (enum tview_layout)l,
                                        (enum tview_layout)((l + si) % TV_LAYOUTS), si == 2 ? -0.75 : 1.0,
                                        l % 2 ? 0.0 : 0.5))
                        return;
}

/* dx of the library's backward equals dy * (f(x + h) - f(x - h)) / 2h of the library's forward,
   in double, away from the kinks of ReLU and clipped ReLU. */
TEST(activation_backward_finite_differences)
{
    const int dims[4] = {2, 3, 4, 5};
    const int64_t n = 120;
    const double h = 1e-6;
    struct tview t;
    tview_init(&t, CUDNN_DATA_DOUBLE, 4, dims, TV_NCHW);
    double one = 1, zero = 0;
    for (size_t m = 0; m < TLEN(modes); m++) {
        cudnnActivationMode_t mode = modes[m];
        double *x = tview_random(n, -2.5, 2.5), *g = tview_random(n, -1, 1), *z = tview_fill(n, 0);
        for (int64_t i = 0; i < n; i++)
            if (fabs(x[i]) < 0.01 || fabs(x[i] - coef_of(mode)) < 0.01) x[i] += 0.05;
        double *xp = malloc(sizeof(double) * n), *xm = malloc(sizeof(double) * n);
        double *fp = malloc(sizeof(double) * n), *fm = malloc(sizeof(double) * n), *fd = malloc(sizeof(double) * n);
        for (int64_t i = 0; i < n; i++) {
            xp[i] = x[i] + h;
            xm[i] = x[i] - h;
        }
        cudnnActivationDescriptor_t d = make_desc(mode, CUDNN_NOT_PROPAGATE_NAN);
        void *px = tview_upload(&t, x), *pxp = tview_upload(&t, xp), *pxm = tview_upload(&t, xm);
        void *py = tview_upload(&t, z), *pyp = tview_upload(&t, z), *pym = tview_upload(&t, z);
        void *pg = tview_upload(&t, g), *pdx = tview_upload(&t, z);
        CHECK_OK(cudnnActivationForward(test_handle(), d, &one, t.desc, px, &zero, t.desc, py));
        CHECK_OK(cudnnActivationForward(test_handle(), d, &one, t.desc, pxp, &zero, t.desc, pyp));
        CHECK_OK(cudnnActivationForward(test_handle(), d, &one, t.desc, pxm, &zero, t.desc, pym));
        CHECK_OK(cudnnActivationBackward(test_handle(), d, &one, t.desc, py, t.desc, pg, t.desc, px, &zero, t.desc, pdx));
        tview_download(&t, pyp, fp);
        tview_download(&t, pym, fm);
        tview_download(&t, pdx, z);
        for (int64_t i = 0; i < n; i++) fd[i] = g[i] * (fp[i] - fm[i]) / (2 * h);
        char what[64];
        snprintf(what, sizeof what, "finite differences, mode %d", (int)mode);
        tcompare(CUDNN_DATA_DOUBLE, z, fd, n, 1e-7, what);
        cudnnDestroyActivationDescriptor(d);
        void *bufs[] = {px, pxp, pxm, py, pyp, pym, pg, pdx};
        for (int i = 0; i < 8; i++) tview_free(&t, bufs[i]);
        free(x), free(g), free(z), free(xp), free(xm), free(fp), free(fm), free(fd);
    }
    tview_destroy(&t);
}

TEST(activation_in_place)
{
    const int dims[4] = {2, 4, 3, 3};
    struct tview t;
    tview_init(&t, CUDNN_DATA_FLOAT, 4, dims, TV_NHWC);
    double *x = tview_random(t.count, -2, 2), *g = tview_random(t.count, -1, 1), want[72], got[72];
    void *p = tview_upload(&t, x);
    cudnnActivationDescriptor_t d = make_desc(CUDNN_ACTIVATION_SWISH, CUDNN_NOT_PROPAGATE_NAN);
    float one = 1, zero = 0;
    for (int i = 0; i < 72; i++) want[i] = ref_activation(CUDNN_ACTIVATION_SWISH, false, 0, SWISH_BETA, x[i]);
    CHECK_OK(cudnnActivationForward(test_handle(), d, &one, t.desc, p, &zero, t.desc, p));
    tview_download(&t, p, got);
    tcompare(CUDNN_DATA_DOUBLE, got, want, 72, 1e-5, "in-place forward");
    /* backward with dx on dy; x is the original input (uploaded again) */
    void *px = tview_upload(&t, x), *pg = tview_upload(&t, g);
    for (int i = 0; i < 72; i++) want[i] = ref_activation_grad(CUDNN_ACTIVATION_SWISH, false, 0, SWISH_BETA, x[i], g[i]);
    CHECK_OK(cudnnActivationBackward(test_handle(), d, &one, t.desc, p, t.desc, pg, t.desc, px, &zero, t.desc, pg));
    tview_download(&t, pg, got);
    tcompare(CUDNN_DATA_DOUBLE, got, want, 72, 1e-5, "in-place backward");
    /* SIGMOID reads y, not x: dx may lie on x whatever x's layout (here NHWC x, NCHW dx) */
    struct tview tn;
    tview_init(&tn, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    cudnnActivationDescriptor_t sig = make_desc(CUDNN_ACTIVATION_SIGMOID, CUDNN_NOT_PROPAGATE_NAN);
    void *py = tview_upload(&t, x), *pg2 = tview_upload(&t, g), *pxdx = tview_upload(&tn, g);
    for (int i = 0; i < 72; i++) want[i] = g[i] * x[i] * (1 - x[i]); /* y = sigmoid(x) given as x's values */
    CHECK_OK(cudnnActivationBackward(test_handle(), sig, &one, t.desc, py, t.desc, pg2, t.desc, pxdx, &zero, tn.desc,
                                     pxdx));
    tview_download(&tn, pxdx, got);
    tcompare(CUDNN_DATA_DOUBLE, got, want, 72, 1e-5, "backward, dx on the unread x");
    cudnnDestroyActivationDescriptor(sig);
    cudnnDestroyActivationDescriptor(d);
    tview_free(&t, p);
    tview_free(&t, px);
    tview_free(&t, pg);
    tview_free(&t, py);
    tview_free(&t, pg2);
    tview_free(&tn, pxdx);
    tview_destroy(&t);
    tview_destroy(&tn);
    free(x);
    free(g);
}

/* ---- bad input: the documented status, and nothing written ------------------------------------ */

TEST(activation_bad_inputs)
{
    struct tbad b;
    tbad_init(&b);
    cudnnActivationDescriptor_t d = make_desc(CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN);
    cudnnActivationDescriptor_t ident = make_desc(CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN);
    cudnnActivationDescriptor_t dead = make_desc(CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN);
    cudnnDestroyActivationDescriptor(dead);
    cudnnTensorDescriptor_t unset;
    cudnnCreateTensorDescriptor(&unset);
    cudnnHandle_t h = test_handle();
    float one = 1, zero = 0;
#define FWD(handle, desc, al, xd, xp, be, yd, yp, status)                                                   \
    CHECK_STATUS(cudnnActivationForward(handle, desc, al, xd, xp, be, yd, yp), status);                   \
    tview_holds(&b.f, b.py, b.y, "y after a rejected forward")
    FWD(NULL, d, &one, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, NULL, &one, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, dead, &one, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, ident, &one, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM); /* identity: fused conv only */
    FWD(h, d, NULL, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, b.f.desc, b.px, NULL, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, NULL, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, unset, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, b.f.desc, NULL, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, b.f.desc, b.px, &zero, b.f.desc, NULL, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, b.other.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);  /* dims differ */
    FWD(h, d, &one, b.dbl.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);  /* types differ */
    FWD(h, d, &one, b.nhwc.desc, b.py, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);  /* in place, strides differ */
    /* int8 runs forward (compat_activation_onednn_int8_forward), not backward (below) */

#define BWD(desc, yd, dyd, xd, dxd, dyp, dxp, status)                                                     \
    CHECK_STATUS(cudnnActivationBackward(h, desc, &one, yd, b.py, dyd, dyp, xd, b.px, &zero, dxd, dxp), status); \
    tview_holds(&b.f, b.py, b.y, "dx after a rejected backward")
    void *pg = tview_upload(&b.f, b.x);
    BWD(ident, b.f.desc, b.f.desc, b.f.desc, b.f.desc, pg, b.py, CUDNN_STATUS_BAD_PARAM);
    BWD(d, b.f.desc, b.other.desc, b.f.desc, b.f.desc, pg, b.py, CUDNN_STATUS_NOT_SUPPORTED); /* dims of y, dy differ */
    BWD(d, b.f.desc, b.f.desc, b.f.desc, b.other.desc, pg, b.py, CUDNN_STATUS_NOT_SUPPORTED); /* dims of x, dx differ */
    BWD(d, b.f.desc, b.dbl.desc, b.f.desc, b.f.desc, pg, b.py, CUDNN_STATUS_NOT_SUPPORTED); /* types differ */
    BWD(d, b.f.desc, b.nhwc.desc, b.f.desc, b.f.desc, b.py, b.py, CUDNN_STATUS_BAD_PARAM);     /* dx on dy, strides differ */
    BWD(d, b.f.desc, b.f.desc, b.f.desc, b.f.desc, NULL, b.py, CUDNN_STATUS_BAD_PARAM);   /* dy NULL */
    BWD(d, b.f.desc, b.f.desc, unset, b.f.desc, pg, b.py, CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnActivationBackward(h, d, &one, b.i8.desc, b.pi, b.i8.desc, b.pi, b.i8.desc, b.pi, &zero, b.i8.desc, b.pi),
                 CUDNN_STATUS_NOT_SUPPORTED);
    tview_holds(&b.i8, b.pi, b.y, "int8 dx after NOT_SUPPORTED");
#undef FWD
#undef BWD
    cudnnDestroyTensorDescriptor(unset);
    cudnnDestroyActivationDescriptor(d);
    cudnnDestroyActivationDescriptor(ident);
    tview_free(&b.f, pg);
    tbad_free(&b);
}
