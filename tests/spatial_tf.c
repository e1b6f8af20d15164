/* spatial_tf.c: tests of the spatial transformer: descriptor, grid generator and bilinear
   sampler, forward and backward, against ref/spatial_tf.c, for every floating-point type and
   tensor layout, with alpha/beta (beta = 0 over NaN outputs, which must not leak). The backward
   functions are also checked against central differences of the reference forward (double). */
#include "test.h"
#include "tensors.h"
#include "ref/spatial_tf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cudnnDataType_t float_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                              CUDNN_DATA_BFLOAT16};

/* A scaling factor of the right C type for the data type (double for double, float otherwise). */
union scale {
    float f;
    double d;
};

static const void *scale_of(cudnnDataType_t t, union scale *s, double v)
{
    if (t == CUDNN_DATA_DOUBLE) s->d = v;
    else s->f = (float)v;
    return s;
}

static cudnnSpatialTransformerDescriptor_t stn_desc(cudnnDataType_t t, int n, int c, int h, int w)
{
    cudnnSpatialTransformerDescriptor_t st = NULL;
    int dims[4] = {n, c, h, w};
    CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, t, 4, dims));
    return st;
}

/* Packed arrays (theta n x 2 x 3, grid n x h x w x 2) as tensors of the type. */
static void packed_init(struct tview *v, cudnnDataType_t t, int a, int b, int c)
{
    int dims[3] = {a, b, c};
    tview_init(v, t, 3, dims, TV_NCHW);
}

static void free_all(void **p, int n)
{
    for (int i = 0; i < n; i++) free(p[i]);
}

/* ---- grid generator ------------------------------------------------------------------------------ */

static const int grid_shapes[][3] = {{2, 3, 5}, {1, 1, 1}, {3, 1, 4}, {1, 6, 1}, {2, 7, 9}};

TEST(stn_grid_generator_matches_reference)
{
    cudnnHandle_t h = test_handle();
    for (size_t t = 0; t < sizeof float_types / sizeof float_types[0]; t++)
        for (size_t s = 0; s < sizeof grid_shapes / sizeof grid_shapes[0]; s++) {
            cudnnDataType_t dt = float_types[t];
            int n = grid_shapes[s][0], gh = grid_shapes[s][1], gw = grid_shapes[s][2];
            cudnnSpatialTransformerDescriptor_t st = stn_desc(dt, n, 3, gh, gw);
            struct tview tv, gv;
            packed_init(&tv, dt, n, 2, 3);
            packed_init(&gv, dt, n, gh * gw, 2);
            double *theta = tview_random(tv.count, -1, 1), *dgrid = tview_random(gv.count, -1, 1);
            double *grid = malloc(sizeof(double) * (size_t)gv.count), *dtheta = malloc(sizeof(double) * 6 * n);
            void *thetab = tview_upload(&tv, theta), *gridb = tview_upload(&gv, NULL);
            void *dgridb = tview_upload(&gv, dgrid), *dthetab = tview_upload(&tv, NULL);
            char what[96];
            CHECK_OK(cudnnSpatialTfGridGeneratorForward(h, st, thetab, gridb));
            ref_stn_grid(n, gh, gw, theta, grid);
            snprintf(what, sizeof what, "grid, type %d shape %zu", (int)dt, s);
            tview_check(&gv, gridb, grid, what);
            CHECK_OK(cudnnSpatialTfGridGeneratorBackward(h, st, dgridb, dthetab));
            ref_stn_grid_backward(n, gh, gw, dgrid, dtheta);
            snprintf(what, sizeof what, "dtheta, type %d shape %zu", (int)dt, s);
            tview_check(&tv, dthetab, dtheta, what);
            if (dt == CUDNN_DATA_DOUBLE) { /* dtheta is the gradient of sum(dgrid * grid(theta)) */
                double *fd = malloc(sizeof(double) * 6 * n), step = 1e-6;
                for (int k = 0; k < 6 * n; k++) {
                    double loss[2], keep = theta[k];
                    for (int side = 0; side < 2; side++) {
                        theta[k] = keep + (side ? step : -step);
                        ref_stn_grid(n, gh, gw, theta, grid);
                        loss[side] = 0;
                        for (int64_t i = 0; i < gv.count; i++) loss[side] += dgrid[i] * grid[i];
                    }
                    theta[k] = keep;
                    fd[k] = (loss[1] - loss[0]) / (2 * step);
                }
                double *got = malloc(sizeof(double) * 6 * n);
                tview_download(&tv, dthetab, got);
                tcompare(CUDNN_DATA_DOUBLE, got, fd, 6 * n, 1e-6, "dtheta against finite differences");
                free(got);
                free(fd);
            }
            void *bufs[] = {theta, dgrid, grid, dtheta};
            free_all(bufs, 4);
            tbuf_free(thetab);
            tbuf_free(gridb);
            tbuf_free(dgridb);
            tbuf_free(dthetab);
            tview_destroy(&tv);
            tview_destroy(&gv);
            CHECK_OK(cudnnDestroySpatialTransformerDescriptor(st));
        }
}

/* ---- sampler ------------------------------------------------------------------------------------ */

struct sampler_case {
    int n, c, hin, win, h, w;
    int xlayout, ylayout;
};

static const struct sampler_case sampler_cases[] = {
    {2, 3, 5, 6, 4, 7, TV_NCHW, TV_NCHW},
    {1, 1, 1, 1, 1, 1, TV_NCHW, TV_NCHW},   /* 1x1 image and output */
    {2, 2, 4, 3, 1, 5, TV_NHWC, TV_NCHW},   /* one output row */
    {1, 5, 3, 4, 3, 2, TV_PADDED, TV_NHWC}, /* gaps in x */
    {3, 1, 7, 1, 2, 3, TV_NCHW, TV_PADDED}, /* one input column */
};

/* The blend pairs tried: (alpha, beta) for y or dx, (alphaDgrid, betaDgrid) for dgrid. beta = 0
   runs over NaN destinations. */
static const double blends[][4] = {{1, 0, 1, 0}, {0.75, -0.5, -1.5, 0.5}};

/* dst = alpha * r + beta * prior */
static void blend_into(double *want, const double *r, const double *prior, int64_t n, double alpha, double beta)
{
    for (int64_t i = 0; i < n; i++) want[i] = alpha * r[i] + (beta != 0 ? beta * prior[i] : 0);
}

/* A destination's prior values: random, or NaN when beta is 0 (they must not be read). */
static double *prior_values(int64_t n, double beta)
{
    double *v = tview_random(n, -1, 1);
    for (int64_t i = 0; beta == 0 && i < n; i++) v[i] = NAN;
    return v;
}

/* One sampler test: the descriptor, the tensors (x; y, or dy; dx, in y's layout so that the
   backward changes layout; the grid) and the inputs. */
struct sampler_test {
    cudnnDataType_t dt;
    const struct sampler_case *sc;
    int blend;
    char tag[64];
    cudnnSpatialTransformerDescriptor_t st;
    struct tview xv, yv, dxv, gv;
    double *x, *grid;
    void *xb, *gridb;
};

/* Moves each sample coordinate whose pixel coordinate lies within 1e-3 of an integer (a pixel
   row or column, the image's border among them) 2e-3 further along. The sampler is bilinear
   between those knots and its gradient jumps across one: a central difference that straddles a
   knot (step 1e-6, about 1 seed in 1,000 with unmoved points) averages the two sides' slopes, so
   the finite-difference check of dgrid needs points that are off the knots by more than a step. */
static void keep_off_knots(double *grid, int64_t points, int hin, int win)
{
    for (int64_t i = 0; i < 2 * points; i++) {
        const double scale = ((i % 2 ? hin : win) - 1) / 2.0, px = (grid[i] + 1) * scale;
        if (scale > 0 && fabs(px - nearbyint(px)) < 1e-3) grid[i] += 2e-3 / scale;
    }
}

/* Runs body on every type, case and blend pair, with fresh random x and grid (off the knots). */
static void for_each_sampler_test(void (*body)(cudnnHandle_t h, struct sampler_test *s))
{
    cudnnHandle_t h = test_handle();
    for (size_t t = 0; t < sizeof float_types / sizeof float_types[0]; t++)
        for (size_t k = 0; k < sizeof sampler_cases / sizeof sampler_cases[0]; k++)
            for (int b = 0; b < 2; b++) {
                struct sampler_test s = {.dt = float_types[t], .sc = &sampler_cases[k], .blend = b};
                const struct sampler_case *sc = s.sc;
                int xdims[4] = {sc->n, sc->c, sc->hin, sc->win}, ydims[4] = {sc->n, sc->c, sc->h, sc->w};
                snprintf(s.tag, sizeof s.tag, "type %d case %zu blend %d", (int)s.dt, k, b);
                s.st = stn_desc(s.dt, sc->n, sc->c, sc->h, sc->w);
                tview_init(&s.xv, s.dt, 4, xdims, sc->xlayout);
                tview_init(&s.yv, s.dt, 4, ydims, sc->ylayout);
                tview_init(&s.dxv, s.dt, 4, xdims, sc->ylayout);
                packed_init(&s.gv, s.dt, sc->n, sc->h * sc->w, 2);
                s.x = tview_random(s.xv.count, -2, 2);
                s.grid = tview_random(s.gv.count, -1.2, 1.2);
                keep_off_knots(s.grid, s.gv.count / 2, sc->hin, sc->win);
                s.xb = tview_upload(&s.xv, s.x);
                s.gridb = tview_upload(&s.gv, s.grid);
                body(h, &s);
                free(s.x);
                free(s.grid);
                tbuf_free(s.xb);
                tbuf_free(s.gridb);
                struct tview *views[] = {&s.xv, &s.yv, &s.dxv, &s.gv};
                for (int i = 0; i < 4; i++) tview_destroy(views[i]);
                CHECK_OK(cudnnDestroySpatialTransformerDescriptor(s.st));
            }
}

static void sampler_forward_case(cudnnHandle_t h, struct sampler_test *s)
{
    const struct sampler_case *sc = s->sc;
    const double *bl = blends[s->blend];
    double *prior = prior_values(s->yv.count, bl[1]);
    double *r = malloc(sizeof(double) * (size_t)s->yv.count), *want = malloc(sizeof(double) * (size_t)s->yv.count);
    void *yb = tview_upload(&s->yv, prior);
    union scale alpha, beta;
    CHECK_OK(cudnnSpatialTfSamplerForward(h, s->st, scale_of(s->dt, &alpha, bl[0]), s->xv.desc, s->xb, s->gridb,
                                          scale_of(s->dt, &beta, bl[1]), s->yv.desc, yb));
    ref_stn_sample(sc->n, sc->c, sc->hin, sc->win, s->x, sc->h, sc->w, s->grid, r);
    blend_into(want, r, prior, s->yv.count, bl[0], bl[1]);
    char what[96];
    snprintf(what, sizeof what, "y, %s", s->tag);
    tview_check(&s->yv, yb, want, what);
    void *bufs[] = {prior, r, want};
    free_all(bufs, 3);
    tbuf_free(yb);
}

TEST(stn_sampler_forward_matches_reference)
{
    for_each_sampler_test(sampler_forward_case);
}

/* sum(dy * sample(x, grid)), the function whose gradients the backward returns. */
static double sampler_loss(const struct sampler_case *sc, const double *x, const double *grid, const double *dy,
                           double *scratch)
{
    ref_stn_sample(sc->n, sc->c, sc->hin, sc->win, x, sc->h, sc->w, grid, scratch);
    double loss = 0;
    for (int64_t i = 0; i < (int64_t)sc->n * sc->c * sc->h * sc->w; i++) loss += dy[i] * scratch[i];
    return loss;
}

/* Central differences of sampler_loss with respect to every element of v (x or the grid). */
static void finite_differences(const struct sampler_case *sc, double *x, double *grid, const double *dy,
                               double *v, int64_t n, double *fd)
{
    double *scratch = malloc(sizeof(double) * (size_t)sc->n * sc->c * sc->h * sc->w), step = 1e-6;
    for (int64_t i = 0; i < n; i++) {
        double keep = v[i];
        v[i] = keep + step;
        double up = sampler_loss(sc, x, grid, dy, scratch);
        v[i] = keep - step;
        double down = sampler_loss(sc, x, grid, dy, scratch);
        v[i] = keep;
        fd[i] = (up - down) / (2 * step);
    }
    free(scratch);
}

static void sampler_backward_case(cudnnHandle_t h, struct sampler_test *s)
{
    const struct sampler_case *sc = s->sc;
    const double *bl = blends[s->blend];
    int64_t nx = s->xv.count, ng = s->gv.count;
    double *dy = tview_random(s->yv.count, -1, 1);
    double *dxprior = prior_values(nx, bl[1]), *dgprior = prior_values(ng, bl[3]);
    void *dyb = tview_upload(&s->yv, dy), *dxb = tview_upload(&s->dxv, dxprior), *dgridb = tview_upload(&s->gv, dgprior);
    union scale alpha, beta, alpha_g, beta_g;
    CHECK_OK(cudnnSpatialTfSamplerBackward(h, s->st, scale_of(s->dt, &alpha, bl[0]), s->xv.desc, s->xb,
                                           scale_of(s->dt, &beta, bl[1]), s->dxv.desc, dxb,
                                           scale_of(s->dt, &alpha_g, bl[2]), s->yv.desc, dyb, s->gridb,
                                           scale_of(s->dt, &beta_g, bl[3]), dgridb));
    double *rdx = malloc(sizeof(double) * (size_t)nx), *rdg = malloc(sizeof(double) * (size_t)ng);
    double *want = malloc(sizeof(double) * (size_t)(nx + ng)), *got = malloc(sizeof(double) * (size_t)(nx + ng));
    ref_stn_sample_backward(sc->n, sc->c, sc->hin, sc->win, s->x, sc->h, sc->w, s->grid, dy, rdx, rdg);
    char what[96];
    blend_into(want, rdx, dxprior, nx, bl[0], bl[1]);
    snprintf(what, sizeof what, "dx, %s", s->tag);
    tview_check(&s->dxv, dxb, want, what);
    blend_into(want, rdg, dgprior, ng, bl[2], bl[3]);
    snprintf(what, sizeof what, "dgrid, %s", s->tag);
    tview_check(&s->gv, dgridb, want, what);
    if (s->dt == CUDNN_DATA_DOUBLE && s->blend == 0) { /* the gradients of sum(dy * y) */
        finite_differences(sc, s->x, s->grid, dy, s->x, nx, want);
        tview_download(&s->dxv, dxb, got);
        tcompare(CUDNN_DATA_DOUBLE, got, want, nx, 1e-6, "dx against finite differences");
        finite_differences(sc, s->x, s->grid, dy, s->grid, ng, want);
        tview_download(&s->gv, dgridb, got);
        tcompare(CUDNN_DATA_DOUBLE, got, want, ng, 1e-6, "dgrid against finite differences");
    }
    void *bufs[] = {dy, dxprior, dgprior, rdx, rdg, want, got};
    free_all(bufs, 7);
    tbuf_free(dyb);
    tbuf_free(dxb);
    tbuf_free(dgridb);
}

TEST(stn_sampler_backward_matches_reference)
{
    for_each_sampler_test(sampler_backward_case);
}

/* ---- bad inputs ---------------------------------------------------------------------------------- */

TEST_ONCE(stn_descriptor_bad_inputs)
{
    cudnnSpatialTransformerDescriptor_t st;
    int dims[4] = {2, 3, 4, 5}, zero[4] = {2, 0, 4, 5}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_STATUS(cudnnCreateSpatialTransformerDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&st));
    /* documented: stDesc or dimA NULL, samplerType or dataType not a valid enumerant */
    CHECK_STATUS(cudnnSetSpatialTransformerNdDescriptor(NULL, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, (cudnnSamplerType_t)1, CUDNN_DATA_FLOAT, 4, dims),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, (cudnnDataType_t)99, 4, dims),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 0, dims),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, zero),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 9, nine),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims));
    CHECK_OK(cudnnDestroySpatialTransformerDescriptor(NULL));
    CHECK_OK(cudnnDestroySpatialTransformerDescriptor(st));
    CHECK_STATUS(cudnnDestroySpatialTransformerDescriptor(st), CUDNN_STATUS_BAD_PARAM);
}

/* Each grid generator call that fails leaves its output as it was. */
TEST(stn_grid_generator_bad_inputs_write_nothing)
{
    cudnnHandle_t h = test_handle();
    cudnnSpatialTransformerDescriptor_t ok = stn_desc(CUDNN_DATA_FLOAT, 2, 3, 4, 5), unset, five, ints;
    int dims5[5] = {2, 3, 4, 5, 6}, dims[4] = {2, 3, 4, 5};
    CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&unset));
    CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&five));
    CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(five, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 5, dims5));
    CHECK_OK(cudnnCreateSpatialTransformerDescriptor(&ints));
    CHECK_OK(cudnnSetSpatialTransformerNdDescriptor(ints, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_INT32, 4, dims));
    size_t gbytes = 2 * 4 * 5 * 2 * sizeof(float), tbytes = 2 * 6 * sizeof(float);
    double *theta = tview_random(12, -1, 1);
    struct tview tv;
    packed_init(&tv, CUDNN_DATA_FLOAT, 2, 2, 3);
    void *thetab = tview_upload(&tv, theta), *grid = tbuf_alloc(gbytes), *dtheta = tbuf_alloc(tbytes);
    void *gsnap = tbuf_snapshot(grid, gbytes), *tsnap = tbuf_snapshot(dtheta, tbytes);
    /* forward theta -> grid, backward grid (as dgrid) -> dtheta */
    cudnnStatus_t (*const fn[2])(cudnnHandle_t, const cudnnSpatialTransformerDescriptor_t, const void *, void *) = {
        cudnnSpatialTfGridGeneratorForward, cudnnSpatialTfGridGeneratorBackward};
    for (int dir = 0; dir < 2; dir++) {
        const void *src = dir ? grid : thetab;
        void *dst = dir ? dtheta : grid;
        CHECK_STATUS(fn[dir](NULL, ok, src, dst), CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(fn[dir](h, NULL, src, dst), CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(fn[dir](h, unset, src, dst), CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(fn[dir](h, ok, NULL, dst), CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(fn[dir](h, ok, src, NULL), CUDNN_STATUS_BAD_PARAM);
        /* documented: NOT_SUPPORTED when the transformed tensor has more than 4 dimensions */
        CHECK_STATUS(fn[dir](h, five, src, dst), CUDNN_STATUS_NOT_SUPPORTED);
        CHECK_STATUS(fn[dir](h, ints, src, dst), CUDNN_STATUS_NOT_SUPPORTED);
    }
    tbuf_unchanged(grid, gsnap, gbytes, "grid");
    tbuf_unchanged(dtheta, tsnap, tbytes, "dtheta");
    void *bufs[] = {theta, gsnap, tsnap};
    free_all(bufs, 3);
    tbuf_free(thetab);
    tbuf_free(grid);
    tbuf_free(dtheta);
    tview_destroy(&tv);
    cudnnSpatialTransformerDescriptor_t all[] = {ok, unset, five, ints};
    for (int i = 0; i < 4; i++) CHECK_OK(cudnnDestroySpatialTransformerDescriptor(all[i]));
}

/* Each sampler call that fails leaves y, dx and dgrid as they were. */
/* x and dy are both read by the sampler's backward: one buffer may be both (when the output
   has the input's extent). The result is the one of two buffers holding the same values, which
   stn_sampler_backward_matches_reference checks against the reference. */
TEST(stn_sampler_backward_x_is_dy)
{
    const cudnnDataType_t F = CUDNN_DATA_FLOAT;
    cudnnHandle_t h = test_handle();
    cudnnSpatialTransformerDescriptor_t st = stn_desc(F, 2, 3, 4, 5);
    int xd[4] = {2, 3, 4, 5};
    struct tview x, gv;
    tview_init(&x, F, 4, xd, TV_NCHW);
    packed_init(&gv, F, 2, 20, 2);
    double *xs = tview_random(x.count, -1, 1), *grid = tview_random(gv.count, -1.2, 1.2);
    double *dx = malloc(sizeof(double) * (size_t)x.count), *dg = malloc(sizeof(double) * (size_t)gv.count);
    void *xb = tview_upload(&x, xs), *dyb = tview_upload(&x, xs), *gridb = tview_upload(&gv, grid);
    void *dx1 = tview_upload(&x, NULL), *dx2 = tview_upload(&x, NULL), *dg1 = tview_upload(&gv, NULL),
         *dg2 = tview_upload(&gv, NULL);
    float one = 1, zero = 0;
    CHECK_OK(cudnnSpatialTfSamplerBackward(h, st, &one, x.desc, xb, &zero, x.desc, dx1, &one, x.desc, dyb, gridb, &zero,
                                           dg1));
    CHECK_OK(cudnnSpatialTfSamplerBackward(h, st, &one, x.desc, xb, &zero, x.desc, dx2, &one, x.desc, xb, gridb, &zero,
                                           dg2));
    tview_download(&x, dx1, dx);
    tview_download(&gv, dg1, dg);
    /* dx gathers each input pixel's share from several outputs: on CUDA by atomic adds, whose
       order varies between calls, so the two runs agree to rounding, not to the bit */
    tview_check(&x, dx2, dx, "dx with x as dy");
    tview_check(&gv, dg2, dg, "dgrid with x as dy");
    tview_holds(&x, xb, xs, "x read as x and dy");
    void *dev[] = {xb, dyb, gridb, dx1, dx2, dg1, dg2};
    for (int i = 0; i < 7; i++) tbuf_free(dev[i]);
    free(xs), free(grid), free(dx), free(dg);
    tview_destroy(&x);
    tview_destroy(&gv);
    CHECK_OK(cudnnDestroySpatialTransformerDescriptor(st));
}

TEST(stn_sampler_bad_inputs_write_nothing)
{
    cudnnHandle_t h = test_handle();
    const cudnnDataType_t F = CUDNN_DATA_FLOAT;
    cudnnSpatialTransformerDescriptor_t st = stn_desc(F, 2, 3, 4, 5), ints = stn_desc(CUDNN_DATA_INT32, 2, 3, 4, 5);
    int xd[4] = {2, 3, 6, 7}, yd[4] = {2, 3, 4, 5}, other_n[4] = {1, 3, 6, 7}, other_c[4] = {2, 4, 6, 7};
    int other_y[4] = {2, 3, 4, 6}, y5[5] = {2, 3, 4, 5, 1}, other_dx[4] = {2, 3, 6, 8};
    struct tview x, y, xn, xc, ybad, yrank, dxbad, xdbl, gv, xi, yi;
    tview_init(&x, F, 4, xd, TV_NCHW);
    tview_init(&y, F, 4, yd, TV_NCHW);
    tview_init(&xn, F, 4, other_n, TV_NCHW);
    tview_init(&xc, F, 4, other_c, TV_NCHW);
    tview_init(&ybad, F, 4, other_y, TV_NCHW);
    tview_init(&yrank, F, 5, y5, TV_NCHW);
    tview_init(&dxbad, F, 4, other_dx, TV_NCHW);
    tview_init(&xdbl, CUDNN_DATA_DOUBLE, 4, xd, TV_NCHW);
    tview_init(&xi, CUDNN_DATA_INT32, 4, xd, TV_NCHW);
    tview_init(&yi, CUDNN_DATA_INT32, 4, yd, TV_NCHW);
    packed_init(&gv, F, 2, 20, 2);
    double *vals = tview_random(x.count, -1, 1);
    void *xb = tview_upload(&x, vals), *yb = tview_upload(&y, vals), *gridb = tview_upload(&gv, vals);
    void *dyb = tview_upload(&y, vals), *dxb = tview_upload(&x, vals), *dgb = tview_upload(&gv, vals);
    void *xib = tview_upload(&xi, vals), *yib = tview_upload(&yi, vals), *dxib = tview_upload(&xi, vals);
    size_t yn = tview_bytes(&y), xn_ = tview_bytes(&x), gn = tview_bytes(&gv), yin = tview_bytes(&yi);
    size_t xin = tview_bytes(&xi);
    void *ysnap = tbuf_snapshot(yb, yn), *dxsnap = tbuf_snapshot(dxb, xn_), *dgsnap = tbuf_snapshot(dgb, gn);
    void *yisnap = tbuf_snapshot(yib, yin), *dxisnap = tbuf_snapshot(dxib, xin);
    float one = 1, zero = 0;
    const float *a = &one, *b = &zero;
    cudnnTensorDescriptor_t X = x.desc, Y = y.desc;
#define FWD(...) CHECK_STATUS(cudnnSpatialTfSamplerForward(__VA_ARGS__), CUDNN_STATUS_BAD_PARAM)
    FWD(NULL, st, a, X, xb, gridb, b, Y, yb);
    FWD(h, NULL, a, X, xb, gridb, b, Y, yb);
    FWD(h, st, NULL, X, xb, gridb, b, Y, yb);
    FWD(h, st, a, X, xb, gridb, NULL, Y, yb);
    FWD(h, st, a, NULL, xb, gridb, b, Y, yb);
    FWD(h, st, a, X, NULL, gridb, b, Y, yb);
    FWD(h, st, a, X, xb, NULL, b, Y, yb);
    FWD(h, st, a, X, xb, gridb, b, Y, NULL);
    FWD(h, st, a, xn.desc, xb, gridb, b, Y, yb);     /* x's N differs from stDesc's */
    FWD(h, st, a, xc.desc, xb, gridb, b, Y, yb);     /* x's C differs */
    FWD(h, st, a, X, xb, gridb, b, ybad.desc, yb);   /* y's dims differ from stDesc's */
    FWD(h, st, a, X, xb, gridb, b, yrank.desc, yb);  /* y is 5-D */
    FWD(h, st, a, xdbl.desc, xb, gridb, b, Y, yb);   /* x is not of stDesc's type */
    FWD(h, st, a, X, yb, gridb, b, Y, yb);           /* y is x */
#undef FWD
    CHECK_STATUS(cudnnSpatialTfSamplerForward(h, ints, a, xi.desc, xib, gridb, b, yi.desc, yib),
                 CUDNN_STATUS_NOT_SUPPORTED);
    cudnnTensorDescriptor_t DX = x.desc;
#define BWD(...) CHECK_STATUS(cudnnSpatialTfSamplerBackward(__VA_ARGS__), CUDNN_STATUS_BAD_PARAM)
    BWD(NULL, st, a, X, xb, b, DX, dxb, a, Y, dyb, gridb, b, dgb);
    BWD(h, NULL, a, X, xb, b, DX, dxb, a, Y, dyb, gridb, b, dgb);
    BWD(h, st, NULL, X, xb, b, DX, dxb, a, Y, dyb, gridb, b, dgb);
    BWD(h, st, a, X, xb, NULL, DX, dxb, a, Y, dyb, gridb, b, dgb);
    BWD(h, st, a, X, xb, b, DX, dxb, NULL, Y, dyb, gridb, b, dgb);
    BWD(h, st, a, X, xb, b, DX, dxb, a, Y, dyb, gridb, NULL, dgb);
    BWD(h, st, a, X, NULL, b, DX, dxb, a, Y, dyb, gridb, b, dgb);
    BWD(h, st, a, X, xb, b, DX, NULL, a, Y, dyb, gridb, b, dgb);
    BWD(h, st, a, X, xb, b, DX, dxb, a, Y, NULL, gridb, b, dgb);
    BWD(h, st, a, X, xb, b, DX, dxb, a, Y, dyb, NULL, b, dgb);
    BWD(h, st, a, X, xb, b, DX, dxb, a, Y, dyb, gridb, b, NULL);
    BWD(h, st, a, X, xb, b, DX, dxb, a, ybad.desc, dyb, gridb, b, dgb); /* documented: dy's dims differ */
    BWD(h, st, a, X, xb, b, dxbad.desc, dxb, a, Y, dyb, gridb, b, dgb); /* dx's dims differ from x's */
    BWD(h, st, a, xn.desc, xb, b, DX, dxb, a, Y, dyb, gridb, b, dgb);   /* x's N differs */
    BWD(h, st, a, X, xb, b, xdbl.desc, dxb, a, Y, dyb, gridb, b, dgb);  /* dx's type differs */
    BWD(h, st, a, X, dxb, b, DX, dxb, a, Y, dyb, gridb, b, dgb);        /* dx is x */
    BWD(h, st, a, X, xb, b, DX, dxb, a, Y, dyb, (float *)dgb + 2, b, dgb); /* dgrid is the grid shifted a point */
    BWD(h, st, a, X, xb, b, DX, dgb, a, Y, dyb, dgb, b, gridb);         /* dx overlaps the grid */
#undef BWD
    CHECK_STATUS(cudnnSpatialTfSamplerBackward(h, ints, a, xi.desc, xib, b, xi.desc, dxib, a, yi.desc, yib, gridb,
                                               b, dgb),
                 CUDNN_STATUS_NOT_SUPPORTED);
    tbuf_unchanged(yb, ysnap, yn, "y");
    tbuf_unchanged(dxb, dxsnap, xn_, "dx");
    tbuf_unchanged(dgb, dgsnap, gn, "dgrid");
    tbuf_unchanged(yib, yisnap, yin, "int32 y");
    tbuf_unchanged(dxib, dxisnap, xin, "int32 dx");
    void *host[] = {vals, ysnap, dxsnap, dgsnap, yisnap, dxisnap};
    free_all(host, 6);
    void *dev[] = {xb, yb, gridb, dyb, dxb, dgb, xib, yib, dxib};
    for (int i = 0; i < 9; i++) tbuf_free(dev[i]);
    struct tview *views[] = {&x, &y, &xn, &xc, &ybad, &yrank, &dxbad, &xdbl, &gv, &xi, &yi};
    for (int i = 0; i < 11; i++) tview_destroy(views[i]);
    CHECK_OK(cudnnDestroySpatialTransformerDescriptor(st));
    CHECK_OK(cudnnDestroySpatialTransformerDescriptor(ints));
}
