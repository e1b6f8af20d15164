/* dropout.c: tests of the dropout descriptor, cudnnDropoutForward and cudnnDropoutBackward.

   The masks are checked bit for bit against ref/dropout.c, an independent Philox4x32-10 (itself
   checked against the published known answers) with opencudnn's documented mask rule: since both
   backends must match it, they match each other. Inputs are never zero, so an output of zero
   means "dropped". */
#include "test.h"
#include "tensors.h"
#include "ref/dropout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cudnnDataType_t float_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                              CUDNN_DATA_BFLOAT16};

TEST_ONCE(dropout_reference_philox_matches_known_answers)
{
    /* Random123's known-answer vectors for Philox4x32-10 */
    static const uint32_t cases[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e,
         0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
         0x5001e420, 0x24126ea1},
    };
    for (int c = 0; c < 3; c++) {
        uint32_t out[4];
        ref_philox4x32_10(cases[c], cases[c] + 4, out);
        CHECK(memcmp(out, cases[c] + 6, sizeof out) == 0);
    }
}

/* A descriptor with fresh states from Set. */
struct dropout {
    cudnnDropoutDescriptor_t desc;
    void *states;
    size_t states_bytes;
};

static void dropout_init(struct dropout *d, float p, unsigned long long seed)
{
    cudnnHandle_t h = test_handle();
    CHECK_OK(cudnnCreateDropoutDescriptor(&d->desc));
    CHECK_OK(cudnnDropoutGetStatesSize(h, &d->states_bytes));
    d->states = tbuf_alloc(d->states_bytes);
    CHECK_OK(cudnnSetDropoutDescriptor(d->desc, h, p, d->states, d->states_bytes, seed));
}

static void dropout_destroy(struct dropout *d)
{
    CHECK_OK(cudnnDestroyDropoutDescriptor(d->desc));
    tbuf_free(d->states);
}

/* Values in +-[0.5, 2]: never zero, so that a zero output means dropped. */
static double *nonzero_values(int64_t n)
{
    double *v = tview_random(n, 0.5, 2.0);
    for (int64_t i = 0; i < n; i++)
        if (trand_u64() & 1) v[i] = -v[i];
    return v;
}

/* Checks y against x and the reference mask of forward call `call`. */
static void check_forward(const struct tview *yv, const void *y, const double *x, uint64_t seed, uint64_t call,
                          float p, const char *what)
{
    int64_t n = yv->count, wrong = 0;
    bool *keep = malloc(sizeof(bool) * (size_t)n);
    double *got = malloc(sizeof(double) * (size_t)n), *want = malloc(sizeof(double) * (size_t)n);
    ref_dropout_mask(seed, call, p, n, keep);
    tview_download(yv, y, got);
    for (int64_t i = 0; i < n; i++) {
        wrong += (got[i] != 0) != keep[i];
        want[i] = keep[i] ? x[i] / (1.0 - (double)p) : 0.0;
    }
    if (wrong) FAIL("%s: %lld of %lld mask bits differ from the reference", what, (long long)wrong, (long long)n);
    tcompare(CUDNN_DATA_DOUBLE, got, want, n, ttolerance(yv->dtype), what);
    free(keep);
    free(got);
    free(want);
}

struct dropout_case {
    int xdims[4], ydims[4];
    int xlayout, ylayout;
};

static const struct dropout_case forward_cases[] = {
    {{2, 3, 5, 7}, {2, 3, 5, 7}, TV_NCHW, TV_NCHW},       /* packed: the vectorized path */
    {{1, 1, 1, 1}, {1, 1, 1, 1}, TV_NCHW, TV_NCHW},       /* one element */
    {{3, 5, 1, 1}, {3, 5, 1, 1}, TV_NCHW, TV_NCHW},       /* a partial Philox block and mask word */
    {{2, 3, 4, 5}, {2, 3, 4, 5}, TV_NHWC, TV_NCHW},       /* layout change */
    {{2, 3, 4, 5}, {2, 3, 4, 5}, TV_PADDED, TV_PADDED},   /* gaps */
    {{2, 3, 4, 5}, {1, 120, 1, 1}, TV_NCHW, TV_PADDED},   /* other dims, same count */
    {{1, 67, 3, 1}, {1, 67, 3, 1}, TV_NHWC, TV_NHWC},     /* several mask words and a tail */
};

TEST(dropout_forward_masks_match_reference)
{
    cudnnHandle_t h = test_handle();
    for (size_t t = 0; t < sizeof float_types / sizeof float_types[0]; t++)
        for (size_t c = 0; c < sizeof forward_cases / sizeof forward_cases[0]; c++) {
            const struct dropout_case *dc = &forward_cases[c];
            cudnnDataType_t dtype = float_types[t];
            struct tview xv, yv;
            tview_init(&xv, dtype, 4, dc->xdims, dc->xlayout);
            tview_init(&yv, dtype, 4, dc->ydims, dc->ylayout);
            unsigned long long seed = trand_u64();
            float p = 0.3f;
            struct dropout d;
            dropout_init(&d, p, seed);
            size_t rbytes = 0;
            CHECK_OK(cudnnDropoutGetReserveSpaceSize(xv.desc, &rbytes));
            CHECK(rbytes >= (size_t)(xv.count + 7) / 8);
            double *x = nonzero_values(xv.count);
            void *xb = tview_upload(&xv, x), *yb = tview_upload(&yv, NULL), *reserve = tbuf_alloc(rbytes);
            char what[128];
            for (int call = 0; call < 2; call++) {
                snprintf(what, sizeof what, "type %d case %zu call %d", (int)dtype, c, call);
                CHECK_OK(cudnnDropoutForward(h, d.desc, xv.desc, xb, yv.desc, yb, reserve, rbytes));
                check_forward(&yv, yb, x, seed, (uint64_t)call, p, what);
            }
            tbuf_free(xb);
            tbuf_free(yb);
            tbuf_free(reserve);
            free(x);
            dropout_destroy(&d);
            tview_destroy(&xv);
            tview_destroy(&yv);
        }
}

/* Packed tensors whose pointers are one element past an aligned address: on the CUDA backend the
   vectorized kernels do not apply and the strided ones run. */
TEST(dropout_misaligned_tensors_match_reference)
{
    cudnnHandle_t h = test_handle();
    int big[4] = {1, 1, 1, 38}, dims[4] = {1, 1, 1, 37};
    struct tview bv, v;
    tview_init(&bv, CUDNN_DATA_FLOAT, 4, big, TV_NCHW);
    tview_init(&v, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    unsigned long long seed = trand_u64();
    struct dropout d;
    dropout_init(&d, 0.5f, seed);
    size_t rbytes;
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(v.desc, &rbytes));
    double *x = nonzero_values(bv.count);
    float *xb = tview_upload(&bv, x), *yb = tview_upload(&bv, NULL);
    void *reserve = tbuf_alloc(rbytes);
    CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb + 1, v.desc, yb + 1, reserve, rbytes));
    check_forward(&v, yb + 1, x + 1, seed, 0, 0.5f, "misaligned forward");
    CHECK_OK(cudnnDropoutBackward(h, d.desc, v.desc, xb + 1, v.desc, yb + 1, reserve, rbytes));
    check_forward(&v, yb + 1, x + 1, seed, 0, 0.5f, "misaligned backward");
    free(x);
    tbuf_free(xb);
    tbuf_free(yb);
    tbuf_free(reserve);
    dropout_destroy(&d);
    tview_destroy(&bv);
    tview_destroy(&v);
}

/* The backward is the gradient of sum(dy * forward(x)) for the forward's mask: checked by
   central differences of the library's forward in double, replaying the same call each time by
   putting back the states Set wrote. */
TEST(dropout_backward_matches_finite_differences)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {2, 3, 2, 2};
    struct tview v;
    tview_init(&v, CUDNN_DATA_DOUBLE, 4, dims, TV_NHWC);
    struct dropout d;
    dropout_init(&d, 0.375f, trand_u64());
    void *saved = tbuf_snapshot(d.states, d.states_bytes);
    size_t rbytes;
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(v.desc, &rbytes));
    int64_t n = v.count;
    double *x = nonzero_values(n), *dy = tview_random(n, -1, 1), *y = malloc(sizeof(double) * (size_t)n);
    double *fd = malloc(sizeof(double) * (size_t)n), *dx = malloc(sizeof(double) * (size_t)n), step = 1e-3;
    void *yb = tview_upload(&v, NULL), *reserve = tbuf_alloc(rbytes);
    for (int64_t i = 0; i < n; i++) {
        double loss[2], keep = x[i];
        for (int side = 0; side < 2; side++) {
            x[i] = keep + (side ? step : -step);
            void *xb = tview_upload(&v, x);
            tbuf_upload(d.states, saved, d.states_bytes);
            CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
            tview_download(&v, yb, y);
            loss[side] = 0;
            for (int64_t k = 0; k < n; k++) loss[side] += dy[k] * y[k];
            tbuf_free(xb);
        }
        x[i] = keep;
        fd[i] = (loss[1] - loss[0]) / (2 * step);
    }
    void *dyb = tview_upload(&v, dy), *dxb = tview_upload(&v, NULL);
    CHECK_OK(cudnnDropoutBackward(h, d.desc, v.desc, dyb, v.desc, dxb, reserve, rbytes));
    tview_download(&v, dxb, dx);
    tcompare(CUDNN_DATA_DOUBLE, dx, fd, n, 1e-9, "dx against finite differences");
    void *bufs[] = {saved, x, dy, y, fd, dx};
    for (int i = 0; i < 6; i++) free(bufs[i]);
    tbuf_free(yb);
    tbuf_free(dyb);
    tbuf_free(dxb);
    tbuf_free(reserve);
    dropout_destroy(&d);
    tview_destroy(&v);
}

/* Bytes of a buffer, downloaded. */
static void *bytes_of(const void *buf, size_t n)
{
    return tbuf_snapshot(buf, n);
}

TEST(dropout_restore_and_set_replay_masks)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {4, 5, 6, 7};
    struct tview v;
    tview_init(&v, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    unsigned long long seed = trand_u64();
    float p = 0.5f;
    struct dropout d;
    dropout_init(&d, p, seed);
    void *saved = bytes_of(d.states, d.states_bytes); /* the states as Set left them */
    size_t rbytes, ybytes = tview_bytes(&v);
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(v.desc, &rbytes));
    double *x = nonzero_values(v.count);
    void *xb = tview_upload(&v, x), *yb = tview_upload(&v, NULL), *reserve = tbuf_alloc(rbytes);
    void *y[2];
    for (int call = 0; call < 2; call++) {
        CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
        y[call] = bytes_of(yb, ybytes);
    }
    CHECK(memcmp(y[0], y[1], ybytes) != 0); /* each call draws a new mask */

    /* Restore a copy of the saved states into another descriptor: the same masks again, without
       re-initialising (the copy continues where the saved states were). */
    struct dropout r;
    CHECK_OK(cudnnCreateDropoutDescriptor(&r.desc));
    r.states_bytes = d.states_bytes;
    r.states = tbuf_from(saved, d.states_bytes);
    CHECK_OK(cudnnRestoreDropoutDescriptor(r.desc, h, p, r.states, r.states_bytes, seed));
    float gp = -1;
    void *gs = NULL;
    unsigned long long gseed = 0;
    CHECK_OK(cudnnGetDropoutDescriptor(r.desc, h, &gp, &gs, &gseed));
    CHECK(gp == p && gs == r.states && gseed == seed);
    for (int call = 0; call < 2; call++) {
        tbuf_poison(yb, ybytes);
        CHECK_OK(cudnnDropoutForward(h, r.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
        void *again = bytes_of(yb, ybytes);
        if (!CHECK(memcmp(again, y[call], ybytes) == 0)) FAIL("restored call %d gave another mask", call);
        free(again);
    }
    /* Restoring d's own states (two calls in) continues with the third call's mask. */
    CHECK_OK(cudnnRestoreDropoutDescriptor(d.desc, h, p, d.states, d.states_bytes, seed));
    CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
    check_forward(&v, yb, x, seed, 2, p, "third call after Restore");
    /* Set with the same seed starts over. */
    CHECK_OK(cudnnSetDropoutDescriptor(d.desc, h, p, d.states, d.states_bytes, seed));
    CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
    void *first = bytes_of(yb, ybytes);
    CHECK(memcmp(first, y[0], ybytes) == 0);
    /* Set without states changes only the probability; the states go on (call 1 of the seed). */
    CHECK_OK(cudnnSetDropoutDescriptor(d.desc, h, 0.25f, NULL, 0, 0));
    CHECK_OK(cudnnGetDropoutDescriptor(d.desc, h, &gp, &gs, &gseed));
    CHECK(gp == 0.25f && gs == d.states && gseed == seed);
    CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
    check_forward(&v, yb, x, seed, 1, 0.25f, "probability changed by Set without states");

    free(first);
    free(y[0]);
    free(y[1]);
    free(saved);
    free(x);
    tbuf_free(xb);
    tbuf_free(yb);
    tbuf_free(reserve);
    dropout_destroy(&r);
    dropout_destroy(&d);
    tview_destroy(&v);
}

TEST(dropout_fraction_dropped_is_close_to_p)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {1, 1, 256, 256};
    struct tview v;
    tview_init(&v, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    size_t rbytes;
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(v.desc, &rbytes));
    double *x = nonzero_values(v.count), *y = malloc(sizeof(double) * (size_t)v.count);
    void *xb = tview_upload(&v, x), *yb = tview_upload(&v, NULL), *reserve = tbuf_alloc(rbytes);
    static const float ps[] = {0.1f, 0.5f, 0.9f};
    for (int k = 0; k < 3; k++) {
        struct dropout d;
        dropout_init(&d, ps[k], trand_u64());
        CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
        tview_download(&v, yb, y);
        int64_t dropped = 0;
        for (int64_t i = 0; i < v.count; i++) dropped += y[i] == 0;
        double fraction = (double)dropped / (double)v.count;
        double sigma = sqrt(ps[k] * (1 - ps[k]) / (double)v.count);
        if (!CHECK(fabs(fraction - ps[k]) < 6 * sigma)) FAIL("p %g: dropped %g", (double)ps[k], fraction);
        dropout_destroy(&d);
    }
    free(x);
    free(y);
    tbuf_free(xb);
    tbuf_free(yb);
    tbuf_free(reserve);
    tview_destroy(&v);
}

/* p = 0 keeps every element unchanged (scale 1); p = 1 drops every element, even an infinite or
   NaN one (no 0 * inf), forward and backward. */
TEST(dropout_probability_0_and_1)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {2, 3, 5, 5};
    struct tview v;
    tview_init(&v, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    size_t rbytes, bytes = tview_bytes(&v);
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(v.desc, &rbytes));
    double *x = tview_random(v.count, -3, 3), *y = malloc(sizeof(double) * (size_t)v.count);
    x[0] = INFINITY;
    void *xb = tview_upload(&v, x), *yb = tview_upload(&v, NULL), *dxb = tview_upload(&v, NULL);
    void *reserve = tbuf_alloc(rbytes), *xbytes = bytes_of(xb, bytes);
    struct dropout d;
    dropout_init(&d, 0.0f, trand_u64());
    CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
    CHECK_OK(cudnnDropoutBackward(h, d.desc, v.desc, xb, v.desc, dxb, reserve, rbytes));
    void *ybytes = bytes_of(yb, bytes), *dxbytes = bytes_of(dxb, bytes);
    CHECK(memcmp(ybytes, xbytes, bytes) == 0);
    CHECK(memcmp(dxbytes, xbytes, bytes) == 0);
    x[1] = NAN; /* (a NaN's bits may change when multiplied by 1, so only now) */
    tbuf_free(xb);
    xb = tview_upload(&v, x);
    CHECK_OK(cudnnSetDropoutDescriptor(d.desc, h, 1.0f, d.states, d.states_bytes, 7));
    CHECK_OK(cudnnDropoutForward(h, d.desc, v.desc, xb, v.desc, yb, reserve, rbytes));
    CHECK_OK(cudnnDropoutBackward(h, d.desc, v.desc, xb, v.desc, dxb, reserve, rbytes));
    for (int pass = 0; pass < 2; pass++) {
        tview_download(&v, pass ? dxb : yb, y);
        int64_t nonzero = 0;
        for (int64_t i = 0; i < v.count; i++) nonzero += !(y[i] == 0 && !signbit(y[i]));
        if (!CHECK(nonzero == 0)) FAIL("p = 1: %lld elements are not +0 (%s)", (long long)nonzero, pass ? "dx" : "y");
    }
    free(ybytes);
    free(dxbytes);
    free(xbytes);
    free(x);
    free(y);
    tbuf_free(xb);
    tbuf_free(yb);
    tbuf_free(dxb);
    tbuf_free(reserve);
    dropout_destroy(&d);
    tview_destroy(&v);
}

/* The backward applies the forward's mask (the reserve space) and scale to dy, whatever the
   layouts; in place too. */
TEST(dropout_backward_applies_forward_mask)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {2, 5, 3, 7};
    for (size_t t = 0; t < sizeof float_types / sizeof float_types[0]; t++)
        for (int inplace = 0; inplace < 2; inplace++) {
            cudnnDataType_t dtype = float_types[t];
            struct tview xv, dyv, dxv;
            tview_init(&xv, dtype, 4, dims, TV_NCHW);
            tview_init(&dyv, dtype, 4, dims, inplace ? TV_PADDED : TV_NHWC);
            tview_init(&dxv, dtype, 4, dims, inplace ? TV_PADDED : TV_NCHW);
            unsigned long long seed = trand_u64();
            float p = 0.4f;
            struct dropout d;
            dropout_init(&d, p, seed);
            size_t rbytes;
            CHECK_OK(cudnnDropoutGetReserveSpaceSize(xv.desc, &rbytes));
            double *x = nonzero_values(xv.count), *dy = nonzero_values(xv.count);
            void *xb = tview_upload(&xv, x), *reserve = tbuf_alloc(rbytes);
            /* the forward runs in place: y overwrites x */
            CHECK_OK(cudnnDropoutForward(h, d.desc, xv.desc, xb, xv.desc, xb, reserve, rbytes));
            check_forward(&xv, xb, x, seed, 0, p, inplace ? "in-place forward" : "forward");
            void *dyb = tview_upload(&dyv, dy), *dxb = inplace ? dyb : tview_upload(&dxv, NULL);
            CHECK_OK(cudnnDropoutBackward(h, d.desc, dyv.desc, dyb, dxv.desc, dxb, reserve, rbytes));
            check_forward(&dxv, dxb, dy, seed, 0, p, inplace ? "in-place backward" : "backward");
            free(x);
            free(dy);
            tbuf_free(xb);
            tbuf_free(dyb);
            if (!inplace) tbuf_free(dxb);
            tbuf_free(reserve);
            dropout_destroy(&d);
            tview_destroy(&xv);
            tview_destroy(&dyv);
            tview_destroy(&dxv);
        }
}

TEST(dropout_descriptor_bad_inputs)
{
    cudnnHandle_t h = test_handle();
    cudnnDropoutDescriptor_t desc;
    CHECK_STATUS(cudnnCreateDropoutDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnCreateDropoutDescriptor(&desc));
    size_t size = 0, untouched = 12345;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &size));
    CHECK(size > 0);
    CHECK_STATUS(cudnnDropoutGetStatesSize(NULL, &untouched), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnDropoutGetStatesSize(h, NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnTensorDescriptor_t unset;
    CHECK_OK(cudnnCreateTensorDescriptor(&unset));
    CHECK_STATUS(cudnnDropoutGetReserveSpaceSize(unset, &untouched), CUDNN_STATUS_BAD_PARAM);
    CHECK(untouched == 12345);
    CHECK_OK(cudnnSetTensor4dDescriptor(unset, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, 33));
    CHECK_STATUS(cudnnDropoutGetReserveSpaceSize(unset, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyTensorDescriptor(unset));

    /* Before any Set: Get reports no states. */
    float p = -1;
    void *states = (void *)1;
    unsigned long long seed = 1;
    CHECK_OK(cudnnGetDropoutDescriptor(desc, h, &p, &states, &seed));
    CHECK(p == 0 && states == NULL && seed == 0);

    void *buf = tbuf_alloc(size + 8), *snap = tbuf_snapshot(buf, size + 8);
    /* "CUDNN_STATUS_INVALID_VALUE: sizeInBytes is less than the value returned by
       cudnnDropoutGetStatesSize" -- and the states are not touched */
    CHECK_STATUS(cudnnSetDropoutDescriptor(desc, h, 0.5f, buf, size - 1, 3), CUDNN_STATUS_INVALID_VALUE);
    CHECK_STATUS(cudnnRestoreDropoutDescriptor(desc, h, 0.5f, buf, size - 1, 3), CUDNN_STATUS_INVALID_VALUE);
    CHECK_STATUS(cudnnSetDropoutDescriptor(desc, h, 1.5f, buf, size, 3), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetDropoutDescriptor(desc, h, -0.25f, buf, size, 3), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetDropoutDescriptor(desc, h, NAN, buf, size, 3), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetDropoutDescriptor(desc, h, 0.5f, (char *)buf + 4, size, 3), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetDropoutDescriptor(NULL, h, 0.5f, buf, size, 3), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetDropoutDescriptor(desc, NULL, 0.5f, buf, size, 3), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRestoreDropoutDescriptor(desc, h, 0.5f, NULL, size, 3), CUDNN_STATUS_BAD_PARAM);
    tbuf_unchanged(buf, snap, size + 8, "states after failed Set/Restore");
    CHECK_OK(cudnnGetDropoutDescriptor(desc, h, &p, &states, &seed));
    CHECK(p == 0 && states == NULL && seed == 0);
    p = -1;
    CHECK_STATUS(cudnnGetDropoutDescriptor(desc, h, &p, &states, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK(p == -1); /* nothing written */
    CHECK_STATUS(cudnnGetDropoutDescriptor(desc, h, NULL, &states, &seed), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetDropoutDescriptor(desc, h, &p, NULL, &seed), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetDropoutDescriptor(desc, NULL, &p, &states, &seed), CUDNN_STATUS_BAD_PARAM);

    CHECK_OK(cudnnDestroyDropoutDescriptor(NULL));
    CHECK_OK(cudnnDestroyDropoutDescriptor(desc));
    CHECK_STATUS(cudnnDestroyDropoutDescriptor(desc), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetDropoutDescriptor(desc, h, &p, &states, &seed), CUDNN_STATUS_BAD_PARAM);
    free(snap);
    tbuf_free(buf);
}

/* Every documented BAD_PARAM of cudnnDropoutForward/Backward (and NOT_SUPPORTED for a type it
   does not compute in) leaves the output, the reserve space and the states as they were. */
TEST(dropout_forward_backward_bad_inputs_write_nothing)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {2, 3, 4, 5}, fewer[4] = {2, 3, 4, 4};
    struct tview xv, nhwc, small, dbl, i8;
    tview_init(&xv, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    tview_init(&nhwc, CUDNN_DATA_FLOAT, 4, dims, TV_NHWC);
    tview_init(&small, CUDNN_DATA_FLOAT, 4, fewer, TV_NCHW);
    tview_init(&dbl, CUDNN_DATA_DOUBLE, 4, dims, TV_NCHW);
    tview_init(&i8, CUDNN_DATA_INT8, 4, dims, TV_NCHW);
    struct dropout d, nostates;
    dropout_init(&d, 0.5f, 11);
    CHECK_OK(cudnnCreateDropoutDescriptor(&nostates.desc));
    CHECK_OK(cudnnSetDropoutDescriptor(nostates.desc, h, 0.5f, NULL, 0, 11));
    size_t rbytes;
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(xv.desc, &rbytes));
    double *x = nonzero_values(xv.count);
    void *xb = tview_upload(&xv, x), *yb = tview_upload(&xv, x), *reserve = tbuf_alloc(rbytes);
    void *i8x = tview_upload(&i8, x), *i8y = tview_upload(&i8, x);
    void *ysnap = tbuf_snapshot(yb, tview_bytes(&xv)), *i8snap = tbuf_snapshot(i8y, tview_bytes(&i8));
    void *rsnap = tbuf_snapshot(reserve, rbytes), *ssnap = tbuf_snapshot(d.states, d.states_bytes);
    cudnnTensorDescriptor_t X = xv.desc;
    struct {
        cudnnStatus_t fwd, bwd;
    } r[16];
    int n = 0;
#define BOTH(hh, dd, xd, xp, yd, yp, rs, rb)                                                     \
    r[n].fwd = cudnnDropoutForward(hh, dd, xd, xp, yd, yp, rs, rb);                               \
    r[n++].bwd = cudnnDropoutBackward(hh, dd, xd, xp, yd, yp, rs, rb)
    BOTH(NULL, d.desc, X, xb, X, yb, reserve, rbytes);
    BOTH(h, NULL, X, xb, X, yb, reserve, rbytes);
    BOTH(h, d.desc, NULL, xb, X, yb, reserve, rbytes);
    BOTH(h, d.desc, X, NULL, X, yb, reserve, rbytes);
    BOTH(h, d.desc, X, xb, X, NULL, reserve, rbytes);
    BOTH(h, d.desc, X, xb, X, yb, NULL, rbytes);
    /* documented: never Set with states; element counts differ; types differ; strides differ
       in place; reserve space below cudnnDropoutGetReserveSpaceSize */
    BOTH(h, nostates.desc, X, xb, X, yb, reserve, rbytes);
    BOTH(h, d.desc, X, xb, small.desc, yb, reserve, rbytes);
    BOTH(h, d.desc, X, xb, dbl.desc, yb, reserve, rbytes);
    BOTH(h, d.desc, X, yb, nhwc.desc, yb, reserve, rbytes);
    BOTH(h, d.desc, X, xb, X, yb, reserve, rbytes - 1);
    int bad_params = n;
    BOTH(h, d.desc, i8.desc, i8x, i8.desc, i8y, reserve, rbytes);
#undef BOTH
    for (int i = 0; i < n; i++) {
        cudnnStatus_t want = i < bad_params ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_NOT_SUPPORTED;
        if (!CHECK(r[i].fwd == want && r[i].bwd == want))
            FAIL("case %d: forward %s, backward %s", i, cudnnGetErrorString(r[i].fwd), cudnnGetErrorString(r[i].bwd));
    }
    tbuf_unchanged(yb, ysnap, tview_bytes(&xv), "y");
    tbuf_unchanged(i8y, i8snap, tview_bytes(&i8), "int8 y");
    tbuf_unchanged(reserve, rsnap, rbytes, "reserve space");
    tbuf_unchanged(d.states, ssnap, d.states_bytes, "states");
    free(x);
    free(ysnap);
    free(i8snap);
    free(rsnap);
    free(ssnap);
    tbuf_free(xb);
    tbuf_free(yb);
    tbuf_free(i8x);
    tbuf_free(i8y);
    tbuf_free(reserve);
    CHECK_OK(cudnnDestroyDropoutDescriptor(nostates.desc));
    dropout_destroy(&d);
    tview_destroy(&xv);
    tview_destroy(&nhwc);
    tview_destroy(&small);
    tview_destroy(&dbl);
    tview_destroy(&i8);
}
