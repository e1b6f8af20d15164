/* transform.c: tests of cudnnTransformTensor, cudnnTransformTensorEx, cudnnInitTransformDest,
   cudnnTransformFilter and the tensor transform descriptor, against ref/tensor_ops.c (layout
   changes and type conversions) and ref/transform.c (padding and folding). A conversion with
   alpha = 1 and beta = 0 must give exactly the reference's one rounding of each value. */
#include "ref/transform.h"
#include "tensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cudnnDataType_t scalar_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                               CUDNN_DATA_BFLOAT16, CUDNN_DATA_INT8, CUDNN_DATA_UINT8,
                                               CUDNN_DATA_INT32};

static double hi_of(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16 ? 2 : 60;
}

static double lo_of(cudnnDataType_t t)
{
    return t == CUDNN_DATA_UINT8 || t == CUDNN_DATA_UINT8x4 ? 0 : -hi_of(t);
}

/* A random value of type t over the whole range a conversion meets: for the floating types
   magnitudes from 2^-26 to 2^18 (half's subnormals, its overflow, integer saturation) with every
   bit of the type's mantissa random; for the integer types any value of the type. */
static double wide_value(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32: return trand_int(-128, 127);
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: return trand_int(0, 255);
    case CUDNN_DATA_INT32: return floor(ldexp(trand_uniform(-1, 1), trand_int(0, 31)));
    default: return ldexp(trand_uniform(-2, 2), trand_int(-26, 17));
    }
}

/* A host buffer of t's span, every scalar wide_value of its type. */
static void *thost_wide(const struct rtensor *t)
{
    void *p = malloc(rt_bytes(t));
    for (int64_t i = 0; i < rt_span(t); i++) tstore(t->dtype, p, i, wide_value(t->dtype));
    return p;
}

/* Every scalar of dev's span (t) equals want (NaN where want is NaN). */
static bool compare_exact(const struct rtensor *t, const void *dev, const double *want, const char *what)
{
    unsigned char *got = tbuf_snapshot(dev, rt_bytes(t));
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < rt_span(t); i++) {
        double g = tload(t->dtype, got, i);
        if (g == want[i] || (isnan(g) && isnan(want[i]))) continue;
        if (bad++ == 0) first = i;
    }
    if (bad)
        FAIL("%s: %lld of %lld scalars not the exact rounding; first at %lld: got %.17g, want %.17g", what,
             (long long)bad, (long long)rt_span(t), (long long)first, tload(t->dtype, got, first), want[first]);
    free(got);
    return bad == 0;
}

/* y = alpha x + beta y through cudnnTransformTensor from x (host values of xt's span), checked
   over y's whole span: exactly when exact, else at y's type's tolerance. */
static void check_transform(const struct rtensor *xt, const void *x, const struct rtensor *yt, double alpha,
                            double beta, bool exact, const char *what)
{
    void *y = beta != 0 ? thost_random(yt, lo_of(yt->dtype), hi_of(yt->dtype)) : thost_poison(yt);
    void *dx = tbuf_from(x, rt_bytes(xt)), *dy = tbuf_from(y, rt_bytes(yt));
    cudnnTensorDescriptor_t xd = tdesc(xt), yd = tdesc(yt);
    struct tscale sa, sb;
    CHECK_OK(cudnnTransformTensor(test_handle(), tscale(&sa, yt->dtype, alpha), xd, dx, tscale(&sb, yt->dtype, beta),
                                  yd, dy));
    double *want = malloc(sizeof(double) * (size_t)rt_span(yt));
    ref_ewise(REF_COPY, false, alpha, xt, x, 0, NULL, NULL, beta, yt, y, want);
    if (exact) compare_exact(yt, dy, want, what);
    else tcompare_span(yt, dy, want, -1, what);
    free(want);
    free(y);
    tbuf_free(dx);
    tbuf_free(dy);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
}

/* check_transform on random x in the range of xt's type suited to alpha/beta blends. */
static void run_transform(const struct rtensor *xt, const struct rtensor *yt, double alpha, double beta,
                          const char *what)
{
    void *x = thost_random(xt, lo_of(xt->dtype), hi_of(xt->dtype));
    check_transform(xt, x, yt, alpha, beta, false, what);
    free(x);
}

/* The conversion of every scalar type to every other (cuDNN 8 converts; the 8.2 text asks for
   one type): exact from values over the types' whole ranges (rounding, half's overflow and
   subnormals, saturation), between packed and odd-strided layouts; then blended. */
TEST(transform_tensor_every_type_pair)
{
    const int dims[] = {2, 3, 5, 7}, reversed[] = {3, 2, 1, 0}, nhwc_gaps[] = {0, 2, 3, 1};
    const size_t n = sizeof scalar_types / sizeof scalar_types[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            cudnnDataType_t tx = scalar_types[i], ty = scalar_types[j];
            struct rtensor x, y, xg, yn;
            rt_packed(&x, tx, CUDNN_TENSOR_NCHW, 4, dims);
            rt_gapped(&y, ty, 4, dims, reversed, 1);
            rt_gapped(&xg, tx, 4, dims, nhwc_gaps, 2);
            rt_packed(&yn, ty, CUDNN_TENSOR_NCHW, 4, dims);
            char what[96];
            snprintf(what, sizeof what, "%s -> %s", tdtype_name(tx), tdtype_name(ty));
            void *v = thost_wide(&x);
            check_transform(&x, v, &y, 1, 0, true, what);
            check_transform(&x, v, &yn, 1, 0, true, what); /* packed to packed: the vectorized path */
            free(v);
            snprintf(what, sizeof what, "%s -> %s, alpha and beta", tdtype_name(tx), tdtype_name(ty));
            run_transform(&xg, &yn, -0.5, 0.75, what);
        }
}

/* "Tensors can be converted to and from CUDNN_TENSOR_NCHW_VECT_C with cudnnTransformTensor.": the
   int8 vector types to and from each other and the other types, on {2, 64, 3, 5}: exact from
   values over x's whole range (saturating) into y packed and into y with its vectors at odd
   strides, then blended by alpha 0.5 and beta -1.5 or 1.5 (rounded to nearest even, saturated). */
TEST(transform_tensor_vector_type_conversions)
{
    static const struct {
        cudnnDataType_t x, y;
        cudnnTensorFormat_t xf, yf;
    } cases[] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_INT8x4, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NHWC},
        {CUDNN_DATA_HALF, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_INT8x32, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NCHW},
        {CUDNN_DATA_INT32, CUDNN_DATA_UINT8x4, CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_UINT8x4, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NCHW},
        {CUDNN_DATA_INT8x4, CUDNN_DATA_UINT8x4, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_UINT8x4, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_UINT8x4, CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_INT8, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_INT8x4, CUDNN_DATA_INT8, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NCHW},
        {CUDNN_DATA_INT8, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_INT8x32, CUDNN_DATA_INT8, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NHWC},
        {CUDNN_DATA_UINT8, CUDNN_DATA_UINT8x4, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_UINT8x4, CUDNN_DATA_UINT8, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NCHW},
        {CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NCHW_VECT_C},
        {CUDNN_DATA_INT8x32, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_TENSOR_NCHW_VECT_C},
    };
    const int dims[] = {2, 64, 3, 5}, order[] = {2, 0, 3, 1};
    for (size_t i = 0; i < TLEN(cases); i++) {
        struct rtensor xt, yt, gapped;
        rt_packed(&xt, cases[i].x, cases[i].xf, 4, dims);
        rt_packed(&yt, cases[i].y, cases[i].yf, 4, dims);
        rt_gapped(&gapped, cases[i].y, 4, dims, order, 1);
        char what[96];
        snprintf(what, sizeof what, "%s -> %s", tdtype_name(cases[i].x), tdtype_name(cases[i].y));
        void *v = thost_wide(&xt);
        check_transform(&xt, v, &yt, 1, 0, true, what);
        check_transform(&xt, v, &gapped, 1, 0, true, what);
        free(v);
        run_transform(&xt, &yt, 0.5, -1.5, what);
        run_transform(&xt, &yt, 0.5, 1.5, what);
    }
}

/* Values at the edges of each conversion, each with the result the IEEE and saturation rules
   give (so the reference is checked too): ties to even, double -> half/bfloat16 and int32 ->
   bfloat16 without a second rounding through float, half's overflow to infinity and its
   subnormals, integer saturation, NaN. */
TEST(transform_tensor_rounding_edges)
{
    const double tie_h = ldexp(1, -11), tie_b = ldexp(1, -8), tiny = ldexp(1, -40);
    struct {
        cudnnDataType_t x, y;
        double v, want;
    } cases[] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, 1 + tie_h, 1},                        /* tie: to even */
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, 1 + 3 * tie_h, 1 + 4 * tie_h},        /* tie: up, to even */
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, -(1 + 3 * tie_h), -(1 + 4 * tie_h)},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, 65504, 65504},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, 65519.99, 65504},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, 65520, INFINITY},                    /* overflow */
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, -1e6, -INFINITY},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, ldexp(1, -24), ldexp(1, -24)},        /* smallest subnormal */
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, ldexp(1, -25), 0},                    /* tie to 0 */
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, ldexp(3, -25), ldexp(2, -24)},        /* tie to even */
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, NAN, NAN},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, 1 + tie_h + tiny, 1 + 2 * tie_h},    /* not 1 via float */
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, -(1 + tie_h + tiny), -(1 + 2 * tie_h)},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, 65520 - tiny * 65536, 65504},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, 1e300, INFINITY},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_BFLOAT16, 1 + tie_b + tiny, 1 + 2 * tie_b}, /* not 1 via float */
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_BFLOAT16, 1e300, INFINITY},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_FLOAT, 1 + ldexp(1, -24) + tiny, 1 + ldexp(1, -23)},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, 1 + tie_b, 1},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, 1 + 3 * tie_b, 1 + 4 * tie_b},
        {CUDNN_DATA_INT32, CUDNN_DATA_BFLOAT16, 16777216 + 65536 + 1, 16777216 + 131072}, /* not a tie */
        {CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, 16777217, 16777216},
        {CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, 16777219, 16777220},
        {CUDNN_DATA_INT32, CUDNN_DATA_INT32, 2147483647, 2147483647},                   /* exact */
        {CUDNN_DATA_INT32, CUDNN_DATA_INT32, 16777217, 16777217},
        {CUDNN_DATA_INT32, CUDNN_DATA_DOUBLE, -2147483648.0, -2147483648.0},
        {CUDNN_DATA_INT32, CUDNN_DATA_INT8, 300, 127},
        {CUDNN_DATA_INT32, CUDNN_DATA_UINT8, -5, 0},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, 2.5, 2},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, 3.5, 4},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, -2.5, -2},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, 127.5, 127},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, -1000, -128},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, INFINITY, 127},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, NAN, 0},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_UINT8, 254.5, 254},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_UINT8, 1000, 255},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_UINT8, -0.75, 0},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT32, 3e9, 2147483647},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT32, -3e9, -2147483648.0},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT32, 2147483520.0, 2147483520.0},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_INT8, 2.5 + tiny, 3},                          /* not 2 via float */
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_INT32, 2147483647.5, 2147483647},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_INT32, 0.5, 0},
        {CUDNN_DATA_HALF, CUDNN_DATA_INT8, 200, 127},
        {CUDNN_DATA_HALF, CUDNN_DATA_UINT8, 65504, 255},
        {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, 1 + 3 * tie_h, 1},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_HALF, 1e30, INFINITY},
        {CUDNN_DATA_UINT8, CUDNN_DATA_INT8, 255, 127},
        {CUDNN_DATA_INT8, CUDNN_DATA_UINT8, -128, 0},
    };
    const int dims[] = {1, 1, 1, 37}; /* whole 16-byte packs and a tail on the vectorized path */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct rtensor xt, yt;
        rt_packed(&xt, cases[i].x, CUDNN_TENSOR_NCHW, 4, dims);
        rt_packed(&yt, cases[i].y, CUDNN_TENSOR_NCHW, 4, dims);
        void *x = malloc(rt_bytes(&xt));
        for (int k = 0; k < dims[3]; k++) tstore(xt.dtype, x, k, cases[i].v);
        char what[128];
        snprintf(what, sizeof what, "%s %.17g -> %s", tdtype_name(xt.dtype), cases[i].v, tdtype_name(yt.dtype));
        unsigned char one[8];
        tstore(yt.dtype, one, 0, cases[i].want);
        double w = tload(yt.dtype, one, 0);
        if (!CHECK(w == cases[i].want || (isnan(w) && isnan(cases[i].want)))) FAIL("%s: the case's want", what);
        double ref = ref_quantize(yt.dtype, tload(xt.dtype, x, 0)); /* the reference agrees */
        if (!(ref == cases[i].want || (isnan(ref) && isnan(cases[i].want))))
            FAIL("%s: the reference gives %.17g", what, ref);
        check_transform(&xt, x, &yt, 1, 0, true, what);
        free(x);
    }
}

TEST(transform_tensor_layouts_every_type)
{
    const int dims4[] = {2, 5, 3, 7}, dims5[] = {2, 3, 2, 3, 4};
    const int nhwc_gaps[] = {0, 2, 3, 1}, reversed[] = {3, 2, 1, 0}, rev5[] = {4, 2, 3, 1, 0};
    for (size_t ti = 0; ti < sizeof scalar_types / sizeof scalar_types[0]; ti++) {
        cudnnDataType_t t = scalar_types[ti];
        struct rtensor nchw, nhwc, gapped, rev, nchw5, nhwc5, odd5;
        rt_packed(&nchw, t, CUDNN_TENSOR_NCHW, 4, dims4);
        rt_packed(&nhwc, t, CUDNN_TENSOR_NHWC, 4, dims4);
        rt_gapped(&gapped, t, 4, dims4, nhwc_gaps, 2);
        rt_gapped(&rev, t, 4, dims4, reversed, 1);
        rt_packed(&nchw5, t, CUDNN_TENSOR_NCHW, 5, dims5);
        rt_packed(&nhwc5, t, CUDNN_TENSOR_NHWC, 5, dims5);
        rt_gapped(&odd5, t, 5, dims5, rev5, 3);
        run_transform(&nchw, &nhwc, 1, 0, "NCHW -> NHWC");
        run_transform(&nhwc, &nchw, -0.5, 0, "NHWC -> NCHW, alpha");
        run_transform(&gapped, &nchw, 1, 0.5, "gapped -> NCHW, beta");
        run_transform(&nchw, &rev, 2, 0, "NCHW -> reversed gapped");
        run_transform(&nchw5, &nhwc5, 1, -1, "5-D NCDHW -> NDHWC, beta");
        run_transform(&odd5, &nchw5, 0.75, 0, "5-D odd strides -> packed");
    }
}

/* Big enough for several transpose tiles and their ragged edges, in every tile width. */
TEST(transform_tensor_nchw_nhwc_tiles)
{
    const int dims[] = {2, 70, 33, 35}, dims_c3[] = {3, 3, 40, 41};
    cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_INT8, CUDNN_DATA_DOUBLE};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        struct rtensor a, b, c, d;
        rt_packed(&a, types[i], CUDNN_TENSOR_NCHW, 4, dims);
        rt_packed(&b, types[i], CUDNN_TENSOR_NHWC, 4, dims);
        rt_packed(&c, types[i], CUDNN_TENSOR_NCHW, 4, dims_c3);
        rt_packed(&d, types[i], CUDNN_TENSOR_NHWC, 4, dims_c3);
        run_transform(&a, &b, 1, 0, "large NCHW -> NHWC");
        run_transform(&b, &a, 1, 0.25, "large NHWC -> NCHW, beta");
        run_transform(&c, &d, 1, 0, "3 channels NCHW -> NHWC");
        run_transform(&d, &c, 1.5, 0, "3 channels NHWC -> NCHW");
    }
}

/* ---- the transform descriptor ------------------------------------------------------------------- */

TEST_ONCE(transform_descriptor_set_get_and_bad_values)
{
    cudnnTensorTransformDescriptor_t t;
    CHECK_STATUS(cudnnCreateTensorTransformDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&t));
    const int32_t pb[5] = {0, 1, 2, 0, 1}, pa[5] = {1, 0, 0, 3, 0};
    const uint32_t fold[3] = {2, 1, 3};
    cudnnTensorFormat_t fmt;
    cudnnFoldingDirection_t dir;
    int32_t gb[5], ga[5];
    uint32_t gf[3];
    CHECK_STATUS(cudnnGetTensorTransformDescriptor(t, 5, &fmt, gb, ga, gf, &dir), CUDNN_STATUS_BAD_PARAM); /* unset */
    CHECK_OK(cudnnSetTensorTransformDescriptor(t, 5, CUDNN_TENSOR_NHWC, pb, pa, fold, CUDNN_TRANSFORM_UNFOLD));
    CHECK_OK(cudnnGetTensorTransformDescriptor(t, 5, &fmt, gb, ga, gf, &dir));
    CHECK(fmt == CUDNN_TENSOR_NHWC && dir == CUDNN_TRANSFORM_UNFOLD);
    CHECK(memcmp(gb, pb, sizeof pb) == 0 && memcmp(ga, pa, sizeof pa) == 0 && memcmp(gf, fold, sizeof fold) == 0);
    /* NULL pads and folds: none */
    CHECK_OK(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, NULL, NULL, NULL, CUDNN_TRANSFORM_FOLD));
    CHECK_OK(cudnnGetTensorTransformDescriptor(t, 4, &fmt, gb, ga, gf, &dir));
    CHECK(fmt == CUDNN_TENSOR_NCHW && dir == CUDNN_TRANSFORM_FOLD && gb[3] == 0 && ga[0] == 0 && gf[1] == 1);
    /* the documented refusals, each leaving the descriptor as it was */
    CHECK_STATUS(cudnnSetTensorTransformDescriptor(NULL, 4, CUDNN_TENSOR_NCHW, pb, pa, fold, CUDNN_TRANSFORM_FOLD),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetTensorTransformDescriptor(t, 2, CUDNN_TENSOR_NCHW, pb, pa, fold, CUDNN_TRANSFORM_FOLD),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetTensorTransformDescriptor(t, 9, CUDNN_TENSOR_NCHW, pb, pa, fold, CUDNN_TRANSFORM_FOLD),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW_VECT_C, pb, pa, fold, CUDNN_TRANSFORM_FOLD),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, pb, pa, fold, (cudnnFoldingDirection_t)2),
                 CUDNN_STATUS_BAD_PARAM);
    const int32_t negative[4] = {0, -1, 0, 0};
    CHECK_STATUS(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, negative, pa, fold, CUDNN_TRANSFORM_FOLD),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetTensorTransformDescriptor(t, 4, &fmt, gb, ga, gf, &dir));
    CHECK(fmt == CUDNN_TENSOR_NCHW && gb[1] == 0);
    CHECK_STATUS(cudnnGetTensorTransformDescriptor(t, 2, &fmt, gb, ga, gf, &dir), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetTensorTransformDescriptor(t, 9, &fmt, gb, ga, gf, &dir), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetTensorTransformDescriptor(t, 4, NULL, gb, ga, gf, &dir), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetTensorTransformDescriptor(NULL, 4, &fmt, gb, ga, gf, &dir), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyTensorTransformDescriptor(t));
    CHECK_STATUS(cudnnGetTensorTransformDescriptor(t, 4, &fmt, gb, ga, gf, &dir), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyTensorTransformDescriptor(NULL));
}

/* ---- padding and folding ------------------------------------------------------------------------ */

static cudnnTensorTransformDescriptor_t transform_of(const struct ref_fold *f, cudnnTensorFormat_t fmt)
{
    cudnnTensorTransformDescriptor_t t;
    int32_t pb[RT_MAX_DIMS], pa[RT_MAX_DIMS];
    uint32_t fold[RT_MAX_DIMS];
    for (int d = 0; d < f->rank; d++) {
        pb[d] = f->pad_before[d];
        pa[d] = f->pad_after[d];
        if (d >= 2) fold[d - 2] = (uint32_t)f->factor[d];
    }
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&t));
    CHECK_OK(cudnnSetTensorTransformDescriptor(t, (uint32_t)f->rank, fmt, pb, pa, fold,
                                               f->unfold ? CUDNN_TRANSFORM_UNFOLD : CUDNN_TRANSFORM_FOLD));
    return t;
}

/* Runs cudnnTransformTensorEx from st to dt and checks dt's whole span; returns the result
   (malloc'ed host copy) for callers that chain transforms. */
static void *run_ex(const struct ref_fold *f, const struct rtensor *st, const void *src, double alpha, double beta,
                    const struct rtensor *dt, const char *what)
{
    void *dst = beta != 0 ? thost_random(dt, lo_of(dt->dtype), hi_of(dt->dtype)) : thost_poison(dt);
    void *ds = tbuf_from(src, rt_bytes(st)), *dd = tbuf_from(dst, rt_bytes(dt));
    cudnnTensorDescriptor_t sd = tdesc(st), ddesc = tdesc(dt);
    cudnnTensorTransformDescriptor_t t = transform_of(f, CUDNN_TENSOR_NCHW);
    struct tscale sa, sb;
    CHECK_OK(cudnnTransformTensorEx(test_handle(), t, tscale(&sa, dt->dtype, alpha), sd, ds,
                                    tscale(&sb, dt->dtype, beta), ddesc, dd));
    double *want = malloc(sizeof(double) * (size_t)rt_span(dt));
    ref_fold(f, alpha, st, src, beta, dt, dst, want);
    void *got = malloc(rt_bytes(dt));
    tbuf_download(got, dd, rt_bytes(dt));
    tcompare(dt->dtype, got, want, rt_span(dt), ttolerance(dt->dtype), what);
    free(want);
    free(dst);
    tbuf_free(ds);
    tbuf_free(dd);
    cudnnDestroyTensorDescriptor(sd);
    cudnnDestroyTensorDescriptor(ddesc);
    cudnnDestroyTensorTransformDescriptor(t);
    return got;
}

TEST(transform_ex_pad_fold_unfold)
{
    cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_INT8, CUDNN_DATA_DOUBLE};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        cudnnDataType_t t = types[ti];
        /* pad N, C and the spatial dims, fold 2x3 with a ragged last block, NCHW and NHWC */
        struct ref_fold f = {4, {1, 1, 1, 0}, {0, 2, 0, 1}, {1, 1, 2, 3}, false};
        const int sdims[] = {2, 3, 5, 6};
        int ddims[4];
        ref_fold_dims(&f, sdims, ddims);
        CHECK(ddims[0] == 3 && ddims[1] == 36 && ddims[2] == 3 && ddims[3] == 3);
        struct rtensor st, dt, snhwc, dnhwc;
        rt_packed(&st, t, CUDNN_TENSOR_NCHW, 4, sdims);
        rt_packed(&dt, t, CUDNN_TENSOR_NCHW, 4, ddims);
        rt_packed(&snhwc, t, CUDNN_TENSOR_NHWC, 4, sdims);
        rt_packed(&dnhwc, t, CUDNN_TENSOR_NHWC, 4, ddims);
        void *src = thost_random(&st, lo_of(t), hi_of(t));
        free(run_ex(&f, &st, src, 1, 0, &dt, "pad and fold NCHW"));
        free(run_ex(&f, &snhwc, src, 1, 0, &dnhwc, "pad and fold NHWC"));
        free(run_ex(&f, &st, src, 1, 0, &dnhwc, "pad and fold NCHW -> NHWC"));
        free(src);
        /* padding alone */
        struct ref_fold p = {4, {0, 3, 1, 2}, {1, 0, 2, 0}, {1, 1, 1, 1}, false};
        ref_fold_dims(&p, sdims, ddims);
        rt_packed(&dt, t, CUDNN_TENSOR_NHWC, 4, ddims);
        src = thost_random(&st, lo_of(t), hi_of(t));
        free(run_ex(&p, &st, src, 1, 0, &dt, "padding only, to NHWC"));
        free(src);
        /* fold without padding, then unfold with alpha and beta: the identity, scaled */
        struct ref_fold g = {4, {0}, {0}, {1, 1, 2, 3}, false}, u = g;
        u.unfold = true;
        const int s2[] = {2, 3, 4, 6};
        ref_fold_dims(&g, s2, ddims);
        rt_packed(&st, t, CUDNN_TENSOR_NCHW, 4, s2);
        rt_packed(&dt, t, CUDNN_TENSOR_NCHW, 4, ddims);
        src = thost_random(&st, lo_of(t), hi_of(t));
        void *folded = run_ex(&g, &st, src, 1, 0, &dt, "fold");
        int back[4];
        ref_fold_dims(&u, ddims, back);
        CHECK(memcmp(back, s2, sizeof back) == 0);
        free(run_ex(&u, &dt, folded, 2, 0.5, &st, "unfold with alpha and beta"));
        rt_packed(&snhwc, t, CUDNN_TENSOR_NHWC, 4, s2);
        free(run_ex(&u, &dt, folded, 1, 0, &snhwc, "unfold into NHWC"));
        free(folded);
        free(src);
    }
}

/* Padding and folding that convert as well: fold float into half, unfold it back into float
   with alpha and beta, and an int8 source padded into bfloat16. */
TEST(transform_ex_pad_fold_with_conversion)
{
    struct ref_fold f = {4, {0, 1, 1, 0}, {0, 0, 1, 1}, {1, 1, 2, 2}, false};
    struct ref_fold g = {4, {0}, {0}, {1, 1, 2, 3}, false}, u = g;
    u.unfold = true;
    const int sdims[] = {2, 3, 5, 6}, s2[] = {2, 3, 4, 6};
    int ddims[4];
    struct rtensor st, dt, s2t, d2t, back;
    rt_packed(&st, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, sdims);
    ref_fold_dims(&f, sdims, ddims);
    rt_packed(&dt, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 4, ddims);
    void *src = thost_wide(&st);
    free(run_ex(&f, &st, src, 1, 0, &dt, "pad and fold float -> half"));
    free(src);
    rt_packed(&s2t, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, s2);
    ref_fold_dims(&g, s2, ddims);
    rt_packed(&d2t, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 4, ddims);
    rt_packed(&back, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 4, s2);
    src = thost_random(&s2t, -2, 2);
    void *folded = run_ex(&g, &s2t, src, 1, 0, &d2t, "fold float -> half");
    free(run_ex(&u, &d2t, folded, -1.5, 0.5, &back, "unfold half -> float, alpha and beta"));
    free(folded);
    free(src);
    struct rtensor i8, b16;
    rt_packed(&i8, CUDNN_DATA_INT8, CUDNN_TENSOR_NCHW, 4, sdims);
    struct ref_fold p = {4, {1, 0, 2, 0}, {0, 1, 0, 3}, {1, 1, 1, 1}, false};
    ref_fold_dims(&p, sdims, ddims);
    rt_packed(&b16, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NCHW, 4, ddims);
    src = thost_wide(&i8);
    free(run_ex(&p, &i8, src, 1, 0, &b16, "pad int8 -> bfloat16"));
    free(src);
}

TEST(transform_ex_5d_fold_unfold_with_padding)
{
    /* three spatial dims; unfolding with padding cuts the padding away */
    struct ref_fold f = {5, {0, 0, 1, 0, 1}, {0, 1, 0, 1, 0}, {1, 1, 2, 1, 2}, false}, u = f;
    u.unfold = true;
    const int sdims[] = {2, 3, 3, 2, 5};
    int ddims[5], back[5];
    ref_fold_dims(&f, sdims, ddims);
    ref_fold_dims(&u, ddims, back);
    struct rtensor st, dt, bt;
    rt_packed(&st, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 5, sdims);
    rt_packed(&dt, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, ddims);
    rt_packed(&bt, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, back);
    void *src = thost_random(&st, -2, 2);
    void *folded = run_ex(&f, &st, src, 1, 0, &dt, "5-D pad and fold");
    free(run_ex(&u, &dt, folded, -1, 0, &bt, "5-D unfold and unpad"));
    free(folded);
    free(src);
}

TEST(transform_ex_layout_change_takes_alpha_beta)
{
    struct ref_fold none = {4, {0}, {0}, {1, 1, 1, 1}, false};
    const int dims[] = {2, 3, 4, 5};
    struct rtensor st, dt;
    rt_packed(&st, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, dims);
    rt_packed(&dt, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 4, dims);
    void *src = thost_random(&st, -2, 2);
    free(run_ex(&none, &st, src, 2, -0.5, &dt, "layout change with alpha and beta"));
    free(src);
}

TEST(init_transform_dest_shapes_and_sizes)
{
    struct ref_fold f = {4, {0, 1, 1, 0}, {0, 1, 0, 1}, {1, 1, 2, 3}, false};
    cudnnTensorTransformDescriptor_t t = transform_of(&f, CUDNN_TENSOR_NHWC);
    const int sdims[] = {1, 2, 5, 6};
    int want[4];
    ref_fold_dims(&f, sdims, want);
    struct rtensor st;
    rt_packed(&st, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 4, sdims);
    cudnnTensorDescriptor_t sd = tdesc(&st), dd;
    CHECK_OK(cudnnCreateTensorDescriptor(&dd));
    size_t bytes = 0;
    CHECK_OK(cudnnInitTransformDest(t, sd, dd, &bytes));
    cudnnDataType_t dt;
    int nb, dims[8], strides[8];
    CHECK_OK(cudnnGetTensorNdDescriptor(dd, 8, &dt, &nb, dims, strides));
    CHECK(dt == CUDNN_DATA_HALF && nb == 4 && memcmp(dims, want, sizeof want) == 0);
    /* packed NHWC, as destFormat asks */
    CHECK(strides[1] == 1 && strides[3] == want[1] && strides[2] == want[1] * want[3] &&
          strides[0] == want[1] * want[2] * want[3]);
    CHECK(bytes == (size_t)want[0] * want[1] * want[2] * want[3] * 2);
    CHECK(want[0] == 1 && want[1] == 24 && want[2] == 3 && want[3] == 3);
    /* bad inputs leave destDesc and the size alone */
    size_t keep = bytes;
    CHECK_STATUS(cudnnInitTransformDest(t, sd, dd, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnInitTransformDest(NULL, sd, dd, &bytes), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnInitTransformDest(t, NULL, dd, &bytes), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnInitTransformDest(t, sd, NULL, &bytes), CUDNN_STATUS_BAD_PARAM);
    const int d5[] = {1, 2, 3, 4, 5};
    struct rtensor s5;
    rt_packed(&s5, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, d5);
    cudnnTensorDescriptor_t sd5 = tdesc(&s5);
    CHECK_STATUS(cudnnInitTransformDest(t, sd5, dd, &bytes), CUDNN_STATUS_BAD_PARAM); /* ranks differ */
    struct ref_fold f5 = {5, {0}, {0}, {1, 1, 1, 1, 1}, false};
    cudnnTensorTransformDescriptor_t t5 = transform_of(&f5, CUDNN_TENSOR_NCHW);
    CHECK_STATUS(cudnnInitTransformDest(t5, sd5, dd, &bytes), CUDNN_STATUS_NOT_SUPPORTED); /* not 4-D */
    const int dv[] = {1, 8, 2, 2};
    struct rtensor sv;
    rt_packed(&sv, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW_VECT_C, 4, dv);
    cudnnTensorDescriptor_t sdv = tdesc(&sv);
    CHECK_STATUS(cudnnInitTransformDest(t, sdv, dd, &bytes), CUDNN_STATUS_NOT_SUPPORTED);
    struct ref_fold u = {4, {0}, {0}, {1, 1, 2, 2}, true};
    cudnnTensorTransformDescriptor_t tu = transform_of(&u, CUDNN_TENSOR_NCHW);
    CHECK_STATUS(cudnnInitTransformDest(tu, sd, dd, &bytes), CUDNN_STATUS_BAD_PARAM); /* 2 channels, 4 blocks */
    CHECK(bytes == keep);
    CHECK_OK(cudnnGetTensorNdDescriptor(dd, 8, &dt, &nb, dims, strides));
    CHECK(dt == CUDNN_DATA_HALF && memcmp(dims, want, sizeof want) == 0);
    cudnnDestroyTensorDescriptor(sd);
    cudnnDestroyTensorDescriptor(sd5);
    cudnnDestroyTensorDescriptor(sdv);
    cudnnDestroyTensorDescriptor(dd);
    cudnnDestroyTensorTransformDescriptor(t);
    cudnnDestroyTensorTransformDescriptor(t5);
    cudnnDestroyTensorTransformDescriptor(tu);
}

/* Filters fold like tensors, K padded like a batch: KCRS 2x3x3x3, K +2, C +1, R and S +1 before,
   fold 2x2 -> 4x16x2x2. */
TEST(transform_filter_pad_and_fold)
{
    struct ref_fold f = {4, {0, 0, 1, 1}, {2, 1, 0, 0}, {1, 1, 2, 2}, false};
    const int sdims[] = {2, 3, 3, 3};
    int ddims[4];
    ref_fold_dims(&f, sdims, ddims);
    CHECK(ddims[0] == 4 && ddims[1] == 16 && ddims[2] == 2 && ddims[3] == 2);
    for (int fmt = 0; fmt < 2; fmt++) {
        cudnnTensorFormat_t format = fmt ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
        struct rtensor st, dt;
        rt_packed(&st, CUDNN_DATA_FLOAT, format, 4, sdims);
        rt_packed(&dt, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, ddims);
        cudnnFilterDescriptor_t sf, df;
        CHECK_OK(cudnnCreateFilterDescriptor(&sf));
        CHECK_OK(cudnnCreateFilterDescriptor(&df));
        CHECK_OK(cudnnSetFilter4dDescriptor(sf, CUDNN_DATA_FLOAT, format, 2, 3, 3, 3));
        CHECK_OK(cudnnSetFilter4dDescriptor(df, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 16, 2, 2));
        cudnnTensorTransformDescriptor_t t = transform_of(&f, CUDNN_TENSOR_NCHW);
        void *src = thost_random(&st, -2, 2), *dst = thost_poison(&dt);
        void *ds = tbuf_from(src, rt_bytes(&st)), *dd = tbuf_from(dst, rt_bytes(&dt));
        float one = 1, zero = 0;
        CHECK_OK(cudnnTransformFilter(test_handle(), t, &one, sf, ds, &zero, df, dd));
        double *want = malloc(sizeof(double) * (size_t)rt_span(&dt));
        ref_fold(&f, 1, &st, src, 0, &dt, dst, want);
        void *got = malloc(rt_bytes(&dt));
        tbuf_download(got, dd, rt_bytes(&dt));
        tcompare(CUDNN_DATA_FLOAT, got, want, rt_span(&dt), 0, fmt ? "KRSC filter fold" : "KCRS filter fold");
        /* a destination of the wrong shape, and (alpha, beta) other than (1, 0) on a fold */
        CHECK_OK(cudnnSetFilter4dDescriptor(df, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 12, 2, 2));
        CHECK_STATUS(cudnnTransformFilter(test_handle(), t, &one, sf, ds, &zero, df, dd), CUDNN_STATUS_BAD_PARAM);
        CHECK_OK(cudnnSetFilter4dDescriptor(df, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 16, 2, 2));
        CHECK_STATUS(cudnnTransformFilter(test_handle(), t, &one, sf, ds, &one, df, dd), CUDNN_STATUS_NOT_SUPPORTED);
        CHECK_STATUS(cudnnTransformFilter(test_handle(), t, &one, NULL, ds, &zero, df, dd), CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(cudnnTransformFilter(test_handle(), t, &one, sf, NULL, &zero, df, dd), CUDNN_STATUS_BAD_PARAM);
        void *after = malloc(rt_bytes(&dt));
        tbuf_download(after, dd, rt_bytes(&dt));
        CHECK(memcmp(after, got, rt_bytes(&dt)) == 0); /* the refused calls wrote nothing */
        free(after);
        free(got);
        free(want);
        free(src);
        free(dst);
        tbuf_free(ds);
        tbuf_free(dd);
        cudnnDestroyFilterDescriptor(sf);
        cudnnDestroyFilterDescriptor(df);
        cudnnDestroyTensorTransformDescriptor(t);
    }
}

/* A filter converted from float to half, once laid out anew (KCRS -> KRSC) and once padded and
   folded: each value rounded once. */
TEST(transform_filter_converts)
{
    struct ref_fold none = {4, {0}, {0}, {1, 1, 1, 1}, false}, f = {4, {0, 0, 1, 1}, {2, 1, 0, 0}, {1, 1, 2, 2}, false};
    const int sdims[] = {2, 3, 3, 3};
    for (int k = 0; k < 2; k++) {
        const struct ref_fold *t = k ? &f : &none;
        int ddims[4];
        ref_fold_dims(t, sdims, ddims);
        struct rtensor st, dt;
        rt_packed(&st, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, sdims);
        rt_packed(&dt, CUDNN_DATA_HALF, k ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, 4, ddims);
        cudnnFilterDescriptor_t sf, df;
        CHECK_OK(cudnnCreateFilterDescriptor(&sf));
        CHECK_OK(cudnnCreateFilterDescriptor(&df));
        CHECK_OK(cudnnSetFilter4dDescriptor(sf, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 3, 3, 3));
        CHECK_OK(cudnnSetFilter4dDescriptor(df, CUDNN_DATA_HALF, k ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, ddims[0],
                                            ddims[1], ddims[2], ddims[3]));
        cudnnTensorTransformDescriptor_t td = transform_of(t, CUDNN_TENSOR_NCHW);
        void *src = thost_wide(&st), *dst = thost_poison(&dt);
        void *ds = tbuf_from(src, rt_bytes(&st)), *dd = tbuf_from(dst, rt_bytes(&dt));
        float one = 1, zero = 0;
        CHECK_OK(cudnnTransformFilter(test_handle(), td, &one, sf, ds, &zero, df, dd));
        double *want = malloc(sizeof(double) * (size_t)rt_span(&dt));
        ref_fold(t, 1, &st, src, 0, &dt, dst, want);
        compare_exact(&dt, dd, want, k ? "float KCRS filter -> folded half" : "float KCRS filter -> half KRSC");
        free(want);
        free(src);
        free(dst);
        tbuf_free(ds);
        tbuf_free(dd);
        cudnnDestroyFilterDescriptor(sf);
        cudnnDestroyFilterDescriptor(df);
        cudnnDestroyTensorTransformDescriptor(td);
    }
}

/* ---- bad inputs ------------------------------------------------------------------------------- */

TEST(transform_bad_inputs)
{
    cudnnHandle_t h = test_handle();
    const int d[] = {2, 4, 3, 5}, other[] = {2, 4, 5, 3}, d5[] = {2, 4, 3, 5, 1};
    struct rtensor f32, f16, other_t, i64, f5;
    rt_packed(&f32, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, d);
    rt_packed(&f16, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 4, d);
    rt_packed(&other_t, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, other);
    rt_packed(&i64, CUDNN_DATA_INT64, CUDNN_TENSOR_NCHW, 4, d);
    rt_packed(&f5, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, d5);
    cudnnTensorDescriptor_t x = tdesc(&f32), y = tdesc(&f32), yh = tdesc(&f16), yo = tdesc(&other_t),
                            x64 = tdesc(&i64), y5 = tdesc(&f5), dead;
    CHECK_OK(cudnnCreateTensorDescriptor(&dead));
    CHECK_OK(cudnnDestroyTensorDescriptor(dead));
    size_t bytes = rt_bytes(&f32) * 2;
    unsigned char *pattern = malloc(bytes);
    for (size_t i = 0; i < bytes; i++) pattern[i] = (unsigned char)(i * 13 + 1);
    void *dx = tbuf_from(pattern, bytes), *dy = tbuf_from(pattern, bytes);
    float one = 1, zero = 0, two = 2;
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM, NS = CUDNN_STATUS_NOT_SUPPORTED;
#define UNTOUCHED(call, status)                                                                             \
    do {                                                                                                    \
        CHECK_STATUS(call, status);                                                                         \
        tbuf_unchanged(dy, pattern, bytes, #call);                                                          \
    } while (0)
    /* cudnnTransformTensor: "the dimensions ... of the two descriptors differ" (data types may:
       transform_tensor_every_type_pair); a type no tensor operation computes with */
    UNTOUCHED(cudnnTransformTensor(h, &one, x, dx, &zero, yo, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(h, &one, x, dx, &zero, y5, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(h, &one, x64, dx, &zero, y, dy), NS);
    UNTOUCHED(cudnnTransformTensor(h, &one, x, dx, &zero, x64, dy), NS);
    UNTOUCHED(cudnnTransformTensor(h, &one, x, dy, &zero, yh, dy), BAD); /* converting in place: they overlap */
    UNTOUCHED(cudnnTransformTensor(h, &one, x, dy, &zero, y, dy), BAD);  /* in place: they overlap */
    UNTOUCHED(cudnnTransformTensor(h, &one, x, (char *)dy + 8, &zero, y, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(NULL, &one, x, dx, &zero, y, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(h, NULL, x, dx, &zero, y, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(h, &one, x, dx, NULL, y, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(h, &one, x, NULL, &zero, y, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(h, &one, dead, dx, &zero, y, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(h, &one, x, dx, &zero, dead, dy), BAD);
    UNTOUCHED(cudnnTransformTensor(h, &one, x64, dx, &zero, x64, dy), NS);
    CHECK_STATUS(cudnnTransformTensor(h, &one, x, dx, &zero, y, NULL), BAD);
    /* cudnnTransformTensorEx */
    cudnnTensorTransformDescriptor_t t, unset;
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&t));
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&unset));
    const int32_t pb[4] = {0, 0, 1, 1}, pa[4] = {0, 0, 0, 0}, none[4] = {0, 0, 0, 0};
    const uint32_t f2[2] = {2, 2};
    CHECK_OK(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, pb, pa, NULL, CUDNN_TRANSFORM_FOLD));
    const int padded[] = {2, 4, 4, 6};
    struct rtensor pt;
    rt_packed(&pt, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, padded);
    cudnnTensorDescriptor_t yp = tdesc(&pt);
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, dx, &zero, y, dy), BAD); /* not the padded shape */
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, dx, &zero, y5, dy), BAD);
    UNTOUCHED(cudnnTransformTensorEx(h, t, &two, x, dx, &zero, yp, dy), NS); /* padding: alpha must be 1 */
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, dx, &one, yp, dy), NS);  /* and beta 0 */
    UNTOUCHED(cudnnTransformTensorEx(h, unset, &one, x, dx, &zero, yp, dy), BAD);
    UNTOUCHED(cudnnTransformTensorEx(h, NULL, &one, x, dx, &zero, yp, dy), BAD);
    UNTOUCHED(cudnnTransformTensorEx(NULL, t, &one, x, dx, &zero, yp, dy), BAD);
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, NULL, &zero, yp, dy), BAD);
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, dx, &zero, NULL, dy), BAD);
    CHECK_OK(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, none, none, f2, CUDNN_TRANSFORM_UNFOLD));
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, dx, &zero, y, dy), BAD); /* 4 channels, 4 blocks: 1 x 6 x 10 */
    CHECK_OK(cudnnSetTensorTransformDescriptor(t, 5, CUDNN_TENSOR_NCHW, NULL, NULL, NULL, CUDNN_TRANSFORM_FOLD));
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, dx, &zero, y, dy), BAD); /* the transform is 5-D */
    CHECK_OK(cudnnSetTensorTransformDescriptor(t, 4, CUDNN_TENSOR_NCHW, NULL, NULL, NULL, CUDNN_TRANSFORM_FOLD));
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, dx, &zero, x64, dy), NS);
    UNTOUCHED(cudnnTransformTensorEx(h, t, &one, x, dy, &zero, y, dy), BAD);
    CHECK_OK(cudnnTransformTensorEx(h, t, &one, x, dx, &zero, y, dy)); /* the plain copy works */
#undef UNTOUCHED
    cudnnTensorDescriptor_t all[] = {x, y, yh, yo, x64, y5, yp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudnnDestroyTensorDescriptor(all[i]);
    cudnnDestroyTensorTransformDescriptor(t);
    cudnnDestroyTensorTransformDescriptor(unset);
    tbuf_free(dx);
    tbuf_free(dy);
    free(pattern);
}
