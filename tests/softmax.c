/* softmax.c: tests of cudnnSoftmaxForward and cudnnSoftmaxBackward against ref/softmax.c, by
   finite differences, with special values, and on bad input. The shapes reach every CUDA path:
   short contiguous slices (lane groups, one warp), long ones (one block, several blocks,
   streaming), slices strided over a contiguous dim (vector tiles, tiles in and beyond shared
   memory) and gapped layouts (generic). */
#include "ref/softmax.h"
#include "test.h"
#include "tensors.h"

#include <math.h>
#include <stdlib.h>

static const cudnnDataType_t float_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                              CUDNN_DATA_BFLOAT16};
static const cudnnSoftmaxAlgorithm_t algos[] = {CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_LOG};
static const cudnnSoftmaxMode_t modes[] = {CUDNN_SOFTMAX_MODE_INSTANCE, CUDNN_SOFTMAX_MODE_CHANNEL};

struct shape {
    int rank, dims[5];
};
static const struct shape shapes[] = {
    {4, {2, 5, 3, 7}},   /* odd sizes */
    {4, {1, 1, 1, 1}},   /* a single element */
    {4, {3, 1, 4, 4}},   /* C = 1 */
    {4, {2, 37, 1, 1}},  /* a classifier's N x C x 1 x 1 */
    {5, {2, 3, 2, 3, 4}},
    {4, {2, 48, 3, 3}},  /* INSTANCE slices of 432 */
};

struct call {
    cudnnDataType_t t;
    cudnnSoftmaxAlgorithm_t algo;
    cudnnSoftmaxMode_t mode;
    const struct shape *s;
    enum tview_layout lx, ly;
    double alpha, beta;
};

static void describe(const struct call *c, const char *dir, char *buf, size_t size)
{
    snprintf(buf, size, "%s type %d algo %d mode %d dims %d,%d,%d,%d x %s y %s beta %g", dir, (int)c->t,
             (int)c->algo, (int)c->mode, c->s->dims[0], c->s->dims[1], c->s->dims[2], c->s->dims[3],
             tview_layout_name(c->lx), tview_layout_name(c->ly), c->beta);
}

/* Forward against the reference; y holds NaN when beta == 0 (it must not be read). */
static bool check_forward(const struct call *c)
{
    char what[192];
    describe(c, "forward", what, sizeof what);
    struct tview tx, ty;
    tview_init(&tx, c->t, c->s->rank, c->s->dims, c->lx);
    tview_init(&ty, c->t, c->s->rank, c->s->dims, c->ly);
    int64_t n = tx.count;
    double *x = tview_random(n, -4, 4), *y = c->beta == 0 ? tview_fill(n, NAN) : tview_random(n, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)n);
    void *px = tview_upload(&tx, x), *py = tview_upload(&ty, y);
    ref_softmax_forward(c->algo, c->mode, c->s->rank, c->s->dims, x, want);
    struct tscale a, b;
    bool ok = CHECK_OK(cudnnSoftmaxForward(test_handle(), c->algo, c->mode, tscale(&a, c->t, c->alpha), tx.desc,
                                           px, tscale(&b, c->t, c->beta), ty.desc, py));
    ok = ok && tview_check_blend(&ty, py, want, y, c->alpha, c->beta, ttolerance(c->t), what);
    ok = ok && tview_holds(&tx, px, x, what);
    tview_free(&tx, px);
    tview_free(&ty, py);
    tview_destroy(&tx);
    tview_destroy(&ty);
    free(x), free(y), free(want);
    return ok;
}

/* Backward against the reference: y a softmax output (rounded to the type), dy random; y and dy
   in layout lx, dx in ly. */
static bool check_backward(const struct call *c)
{
    char what[192];
    describe(c, "backward", what, sizeof what);
    struct tview ty, tdx;
    tview_init(&ty, c->t, c->s->rank, c->s->dims, c->lx);
    tview_init(&tdx, c->t, c->s->rank, c->s->dims, c->ly);
    int64_t n = ty.count;
    double *x = tview_random(n, -3, 3), *y = malloc(sizeof(double) * (size_t)n), *g = tview_random(n, -1, 1);
    double *dx0 = c->beta == 0 ? tview_fill(n, NAN) : tview_random(n, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)n);
    ref_softmax_forward(c->algo, c->mode, c->s->rank, c->s->dims, x, y);
    void *py = tview_upload(&ty, y), *pg = tview_upload(&ty, g), *pdx = tview_upload(&tdx, dx0);
    ref_softmax_backward(c->algo, c->mode, c->s->rank, c->s->dims, y, g, want);
    struct tscale a, b;
    bool ok = CHECK_OK(cudnnSoftmaxBackward(test_handle(), c->algo, c->mode, tscale(&a, c->t, c->alpha), ty.desc,
                                            py, ty.desc, pg, tscale(&b, c->t, c->beta), tdx.desc, pdx));
    ok = ok && tview_check_blend(&tdx, pdx, want, dx0, c->alpha, c->beta, ttolerance(c->t), what);
    ok = ok && tview_holds(&ty, py, y, what) && tview_holds(&ty, pg, g, what);
    tview_free(&ty, py);
    tview_free(&ty, pg);
    tview_free(&tdx, pdx);
    tview_destroy(&ty);
    tview_destroy(&tdx);
    free(x), free(y), free(g), free(dx0), free(want);
    return ok;
}

/* Every type, algorithm, mode, shape and layout, forward and backward. */
TEST(softmax_matches_reference)
{
    for (size_t ti = 0; ti < TLEN(float_types); ti++)
        for (size_t ai = 0; ai < TLEN(algos); ai++)
            for (size_t mi = 0; mi < TLEN(modes); mi++)
                for (size_t si = 0; si < TLEN(shapes); si++)
                    for (int l = 0; l < TV_LAYOUTS; l++) {
                        struct call c = {float_types[ti], algos[ai], modes[mi], &shapes[si], (enum tview_layout)l,
                                         (enum tview_layout)l, si == 4 ? -0.5 : 1.0, l % 2 ? 0.0 : 0.75};
                        if (!check_forward(&c) || !check_backward(&c)) return;
                    }
}

/* Input and output in different layouts. */
TEST(softmax_layout_change)
{
    const struct shape s = {4, {2, 6, 3, 5}};
    for (size_t ti = 0; ti < TLEN(float_types); ti++)
        for (size_t mi = 0; mi < TLEN(modes); mi++) {
            struct call c = {float_types[ti], CUDNN_SOFTMAX_ACCURATE, modes[mi], &s, TV_NCHW, TV_NHWC, 1.0, 0.0};
            struct call d = {float_types[ti], CUDNN_SOFTMAX_LOG, modes[mi], &s, TV_NHWC_PADDED, TV_NCHW, 2.0, 0.5};
            if (!check_forward(&c) || !check_backward(&c) || !check_forward(&d) || !check_backward(&d)) return;
        }
}

/* Slices long enough for the CUDA kernels that use whole blocks, several blocks per slice, and
   shared memory overflow in the tiles; fewer combinations, since each is large. */
TEST(softmax_long_slices)
{
    static const struct shape big[] = {
        {4, {2, 1500, 1, 1}},  /* one block per slice */
        {4, {3, 64, 16, 16}},  /* INSTANCE slices of 16384: two blocks each (float) */
        {4, {1, 900, 2, 3}},   /* CHANNEL over NCHW with a tile larger than shared memory */
        {4, {2, 3, 1, 1025}},  /* just over one warp's worth */
    };
    for (size_t ti = 0; ti < TLEN(float_types); ti++)
        for (size_t si = 0; si < TLEN(big); si++)
            for (size_t mi = 0; mi < TLEN(modes); mi++) {
                enum tview_layout l = si % 2 ? TV_NCHW : TV_NHWC;
                struct call c = {float_types[ti], (cudnnSoftmaxAlgorithm_t)((ti + si) % 3), modes[mi], &big[si], l, l,
                                 1.0, si == 1 ? 0.5 : 0.0};
                if (!check_forward(&c) || !check_backward(&c)) return;
            }
}

/* Shapes of the vector kernels (cuda:softmax_rows_lanes, cuda:softmax_rows_packed,
   cuda:softmax_cols_regs, cuda:softmax_tile_vec) and their edges, in NHWC (contiguous slices) and
   NCHW (slices strided over H x W): C = 256 as the bench runs it; C = 40, five 16-byte vectors of
   halves, so that a lane group holds fewer vectors than it has room for; a last warp with groups
   past the last slice (3 x 5 x 7 = 105 slices); H x W = 40 and 72, a column tile and a partial
   one for every type; C = 300, a backward tile above 48 KiB of shared memory; C = 1000, a tile
   beyond the bound, left to cuda:softmax_tile; C = 8, 512 and 520, the shortest slice of the lane
   kernels and the edges of the longest; C = 256 and 100 over H x W = 72 and 36, the longest
   float slice of cuda:softmax_cols_regs and one that fills its threads unevenly, with partial
   column tiles of two vectors and one. */
TEST(softmax_vector_shapes)
{
    static const struct shape vs[] = {
        {4, {3, 256, 5, 7}},
        {4, {2, 40, 8, 9}},
        {4, {2, 300, 5, 8}},
        {4, {1, 1000, 2, 4}},
        {4, {3, 8, 5, 7}},   /* one vector a slice: one lane a slice in the lane kernels */
        {4, {2, 512, 3, 1}}, /* the longest 16-bit forward slice of cuda:softmax_rows_packed (16 lanes) */
        {4, {1, 520, 2, 1}}, /* one vector longer: left to the next entry */
        {4, {2, 256, 6, 12}},
        {4, {1, 100, 6, 6}},
    };
    for (size_t ti = 0; ti < TLEN(float_types); ti++)
        for (size_t si = 0; si < TLEN(vs); si++)
            for (int l = 0; l < 2; l++) {
                struct call c = {float_types[ti], algos[(ti + si + l) % 3], CUDNN_SOFTMAX_MODE_CHANNEL, &vs[si],
                                 l ? TV_NHWC : TV_NCHW, l ? TV_NHWC : TV_NCHW, 1.0, si % 2 ? 0.5 : 0.0};
                if (!check_forward(&c) || !check_backward(&c)) return;
            }
}

/* A slice longer than the GPU can hold in registers (streamed twice there). */
TEST(softmax_very_long_slice)
{
    const struct shape s = {4, {1, 1, 1100, 1024}};
    for (int a = 0; a < 3; a += 2) {
        struct call c = {CUDNN_DATA_FLOAT, (cudnnSoftmaxAlgorithm_t)a, CUDNN_SOFTMAX_MODE_INSTANCE, &s, TV_NCHW,
                         TV_NCHW, 1.0, a ? 0.25 : 0.0};
        if (!check_forward(&c) || !check_backward(&c)) return;
    }
}

/* Masked logits (-inf) weigh nothing; a NaN makes its slice NaN and leaves the others alone. */
TEST(softmax_special_values)
{
    const int dims[4] = {3, 6, 1, 1};
    struct tview t;
    tview_init(&t, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    double x[18], got[18], want[18];
    for (int i = 0; i < 18; i++) x[i] = trand_uniform(-2, 2);
    x[1] = x[4] = -INFINITY; /* slice 0: two masked */
    x[8] = NAN;              /* slice 1: NaN */
    double *zero = tview_fill(18, 0);
    for (int a = 0; a < 3; a += 2) {
        void *px = tview_upload(&t, x), *py = tview_upload(&t, zero);
        float one = 1, z = 0;
        CHECK_OK(cudnnSoftmaxForward(test_handle(), (cudnnSoftmaxAlgorithm_t)a, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                     t.desc, px, &z, t.desc, py));
        tview_download(&t, py, got);
        double finite[4] = {x[0], x[2], x[3], x[5]}, s[4];
        const int fdims[4] = {1, 4, 1, 1};
        ref_softmax_forward((cudnnSoftmaxAlgorithm_t)a, CUDNN_SOFTMAX_MODE_CHANNEL, 4, fdims, finite, s);
        double masked = a == CUDNN_SOFTMAX_LOG ? -INFINITY : 0;
        double w0[6] = {s[0], masked, s[1], s[2], masked, s[3]};
        for (int i = 0; i < 6; i++) want[i] = w0[i];
        for (int i = 6; i < 12; i++) want[i] = NAN;
        const int d6[4] = {1, 6, 1, 1};
        ref_softmax_forward((cudnnSoftmaxAlgorithm_t)a, CUDNN_SOFTMAX_MODE_CHANNEL, 4, d6, x + 12, want + 12);
        tcompare(CUDNN_DATA_DOUBLE, got, want, 18, 1e-5, a ? "log softmax with -inf and NaN" : "softmax with -inf and NaN");
        tview_free(&t, px);
        tview_free(&t, py);
    }
    free(zero);
    tview_destroy(&t);
}

/* The same in half and bfloat16 over slices of whole 16-byte vectors (C = 16, the 16-bit lane
   kernels): masked logits, a NaN slice, a slice of -inf only (NaN, as in float: 0 / 0). */
TEST(softmax_special_values_16bit)
{
    const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    const int dims[4] = {4, 16, 1, 1}, d16[4] = {1, 16, 1, 1};
    double x[64], got[64], want[64];
    for (size_t ti = 0; ti < TLEN(types); ti++)
        for (int a = 0; a < 3; a += 2) {
            struct tview t;
            tview_init(&t, types[ti], 4, dims, TV_NHWC);
            for (int i = 0; i < 64; i++) x[i] = trand_uniform(-2, 2);
            x[3] = x[12] = -INFINITY; /* slice 0: two masked */
            x[16 + 9] = NAN;          /* slice 1: NaN */
            for (int i = 32; i < 48; i++) x[i] = -INFINITY;
            for (int n = 0; n < 4; n += 3) ref_softmax_forward((cudnnSoftmaxAlgorithm_t)a, CUDNN_SOFTMAX_MODE_CHANNEL, 4,
                                                              d16, x + 16 * n, want + 16 * n);
            for (int i = 16; i < 48; i++) want[i] = NAN;
            double *zero = tview_fill(64, 0);
            void *px = tview_upload(&t, x), *py = tview_upload(&t, zero);
            float one = 1, z = 0;
            CHECK_OK(cudnnSoftmaxForward(test_handle(), (cudnnSoftmaxAlgorithm_t)a, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                         t.desc, px, &z, t.desc, py));
            tview_download(&t, py, got);
            tcompare(CUDNN_DATA_DOUBLE, got, want, 64, ttolerance(types[ti]),
                     a ? "16-bit log softmax with -inf and NaN" : "16-bit softmax with -inf and NaN");
            tview_free(&t, px);
            tview_free(&t, py);
            tview_destroy(&t);
            free(zero);
        }
}

/* The library's backward is the derivative of its forward: with y = softmax(x) and a weight dy,
   dx_j = d/dx_j sum_i dy_i y_i(x), checked by central differences in double. */
TEST(softmax_backward_finite_differences)
{
    const int dims[4] = {2, 4, 3, 2};
    const int64_t n = 48;
    const double h = 1e-6, one = 1, zero = 0;
    struct tview t;
    tview_init(&t, CUDNN_DATA_DOUBLE, 4, dims, TV_NCHW);
    for (size_t ai = 0; ai < TLEN(algos); ai++)
        for (size_t mi = 0; mi < TLEN(modes); mi++) {
            double *x = tview_random(n, -2, 2), *g = tview_random(n, -1, 1), *z = tview_fill(n, 0);
            double *y = malloc(sizeof(double) * n), *fd = malloc(sizeof(double) * n), *dx = malloc(sizeof(double) * n);
            void *px = tview_upload(&t, x), *py = tview_upload(&t, z), *pg = tview_upload(&t, g),
                 *pdx = tview_upload(&t, z);
            CHECK_OK(cudnnSoftmaxForward(test_handle(), algos[ai], modes[mi], &one, t.desc, px, &zero, t.desc, py));
            CHECK_OK(cudnnSoftmaxBackward(test_handle(), algos[ai], modes[mi], &one, t.desc, py, t.desc, pg, &zero,
                                          t.desc, pdx));
            tview_download(&t, pdx, dx);
            for (int64_t j = 0; j < n; j++) {
                double lp = 0, lm = 0, save = x[j];
                for (int sign = -1; sign <= 1; sign += 2) {
                    x[j] = save + sign * h;
                    void *pxh = tview_upload(&t, x);
                    CHECK_OK(cudnnSoftmaxForward(test_handle(), algos[ai], modes[mi], &one, t.desc, pxh, &zero, t.desc, py));
                    tview_download(&t, py, y);
                    double l = 0;
                    for (int64_t i = 0; i < n; i++) l += g[i] * y[i];
                    if (sign < 0) lm = l;
                    else lp = l;
                    tview_free(&t, pxh);
                }
                x[j] = save;
                fd[j] = (lp - lm) / (2 * h);
            }
            char what[64];
            snprintf(what, sizeof what, "finite differences, algo %d mode %d", (int)algos[ai], (int)modes[mi]);
            tcompare(CUDNN_DATA_DOUBLE, dx, fd, n, 1e-7, what);
            tview_free(&t, px);
            tview_free(&t, py);
            tview_free(&t, pg);
            tview_free(&t, pdx);
            free(x), free(g), free(z), free(y), free(fd), free(dx);
        }
    tview_destroy(&t);
}

TEST(softmax_in_place)
{
    const int dims[4] = {2, 5, 2, 3};
    struct tview t;
    tview_init(&t, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    double *x = tview_random(60, -2, 2), *g = tview_random(60, -1, 1), y[60], want[60], got[60];
    void *p = tview_upload(&t, x);
    float one = 1, zero = 0;
    ref_softmax_forward(CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, 4, dims, x, y);
    CHECK_OK(cudnnSoftmaxForward(test_handle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t.desc, p,
                                 &zero, t.desc, p));
    tview_download(&t, p, got);
    tcompare(CUDNN_DATA_DOUBLE, got, y, 60, 1e-5, "in-place forward");
    void *pg = tview_upload(&t, g);
    ref_softmax_backward(CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, 4, dims, got, g, want);
    CHECK_OK(cudnnSoftmaxBackward(test_handle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, t.desc, p,
                                  t.desc, pg, &zero, t.desc, pg));
    tview_download(&t, pg, got);
    tcompare(CUDNN_DATA_DOUBLE, got, want, 60, 1e-5, "in-place backward");
    tview_free(&t, p);
    tview_free(&t, pg);
    tview_destroy(&t);
    free(x);
    free(g);
}

TEST(softmax_bad_inputs)
{
    struct tbad b;
    tbad_init(&b);
    cudnnTensorDescriptor_t unset;
    cudnnCreateTensorDescriptor(&unset);
    cudnnHandle_t h = test_handle();
    float one = 1, zero = 0;
    const cudnnSoftmaxAlgorithm_t A = CUDNN_SOFTMAX_ACCURATE;
    const cudnnSoftmaxMode_t M = CUDNN_SOFTMAX_MODE_CHANNEL;
#define FWD(handle, algo, mode, al, xd, xp, be, yd, yp, status)                                              \
    CHECK_STATUS(cudnnSoftmaxForward(handle, algo, mode, al, xd, xp, be, yd, yp), status);                 \
    tview_holds(&b.f, b.py, b.y, "y after a rejected forward")
    FWD(NULL, A, M, &one, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, (cudnnSoftmaxAlgorithm_t)3, M, &one, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, A, (cudnnSoftmaxMode_t)2, &one, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, A, M, NULL, b.f.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, A, M, &one, b.f.desc, b.px, NULL, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, A, M, &one, unset, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, A, M, &one, b.f.desc, NULL, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, A, M, &one, b.other.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM); /* dims differ */
    FWD(h, A, M, &one, b.dbl.desc, b.px, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM); /* types differ */
    FWD(h, A, M, &one, b.nhwc.desc, b.py, &zero, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM); /* in place, strides differ */
    /* int8 runs forward (compat_softmax_onednn_int8_forward), not backward (below) */

    void *pg = tview_upload(&b.f, b.x), *pgn = tview_upload(&b.nhwc, b.x);
#define BWD(algo, mode, yd, dyd, dyp, dxd, dxp, status)                                                      \
    CHECK_STATUS(cudnnSoftmaxBackward(h, algo, mode, &one, yd, b.px, dyd, dyp, &zero, dxd, dxp), status);    \
    tview_holds(&b.f, b.py, b.y, "dx after a rejected backward")
    BWD((cudnnSoftmaxAlgorithm_t)-1, M, b.f.desc, b.f.desc, pg, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    BWD(A, (cudnnSoftmaxMode_t)7, b.f.desc, b.f.desc, pg, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    BWD(A, M, b.f.desc, b.other.desc, pg, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);  /* dims of y, dy differ */
    BWD(A, M, b.f.desc, b.f.desc, pg, b.other.desc, b.py, CUDNN_STATUS_BAD_PARAM);  /* dims of dx differ */
    BWD(A, M, b.f.desc, b.nhwc.desc, pgn, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM); /* strides of y, dy differ */
    BWD(A, M, b.f.desc, b.dbl.desc, pg, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);  /* types differ */
    BWD(A, M, b.nhwc.desc, b.nhwc.desc, b.py, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);  /* dx on dy, strides differ */
    BWD(A, M, b.f.desc, b.f.desc, NULL, b.f.desc, b.py, CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSoftmaxBackward(h, A, M, &one, b.i8.desc, b.pi, b.i8.desc, b.pi, &zero, b.i8.desc, b.pi),
                 CUDNN_STATUS_NOT_SUPPORTED);
    tview_holds(&b.i8, b.pi, b.y, "int8 dx after NOT_SUPPORTED");
#undef FWD
#undef BWD
    cudnnDestroyTensorDescriptor(unset);
    tview_free(&b.f, pg);
    tview_free(&b.nhwc, pgn);
    tbad_free(&b);
}
