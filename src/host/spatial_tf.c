/* spatial_tf.c (host): the spatial transformer's grid generator and bilinear sampler, forward and
   backward, on the host backend, computing in double.

   Main decision: the sampler's backward splits its two outputs. dgrid is a gather (each sample
   point sums over the channels), done point by point. dx is a scatter (sample points add into
   the input pixels they read); it is accumulated in a double plane per (n, c), one plane per
   worker, so that threads never share an accumulator and the result does not depend on the
   number of threads, then blended into dx. */
#include "problem/spatial_tf.h"

#include "host/parallel.h"
#include "host/typed.h"

#include <stdlib.h>

/* ---- grid generator --------------------------------------------------------------------------- */

static void grid_fwd_rows(void *ctx, int64_t r0, int64_t r1)
{
    const struct ocd_stn_grid_problem *p = ctx;
    for (int64_t r = r0; r < r1; r++) { /* row r = n * h + i of the grid */
        int64_t n = r / p->h;
        double th[6], yt = ocd_stn_linspace(r % p->h, p->h);
        for (int k = 0; k < 6; k++) th[k] = ocd_host_load(p->dtype, p->src, n * 6 + k);
        for (int64_t j = 0; j < p->w; j++) {
            double xt = ocd_stn_linspace(j, p->w);
            ocd_host_store(p->dtype, p->dst, (r * p->w + j) * 2, th[0] * xt + th[1] * yt + th[2]);
            ocd_host_store(p->dtype, p->dst, (r * p->w + j) * 2 + 1, th[3] * xt + th[4] * yt + th[5]);
        }
    }
}

/* dtheta[n, r, :] = sum over the grid points of dgrid[n, i, j, r] * (x_j, y_i, 1). */
static void grid_bwd_images(void *ctx, int64_t n0, int64_t n1)
{
    const struct ocd_stn_grid_problem *p = ctx;
    for (int64_t n = n0; n < n1; n++) {
        double s[6] = {0};
        for (int64_t i = 0; i < p->h; i++) {
            double yt = ocd_stn_linspace(i, p->h);
            for (int64_t j = 0; j < p->w; j++) {
                double xt = ocd_stn_linspace(j, p->w);
                int64_t g = ((n * p->h + i) * p->w + j) * 2;
                for (int r = 0; r < 2; r++) {
                    double d = ocd_host_load(p->dtype, p->src, g + r);
                    s[3 * r] += d * xt;
                    s[3 * r + 1] += d * yt;
                    s[3 * r + 2] += d;
                }
            }
        }
        for (int k = 0; k < 6; k++) ocd_host_store(p->dtype, p->dst, n * 6 + k, s[k]);
    }
}

cudnnStatus_t ocd_host_stn_grid_fwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_stn_grid_problem *p = problem;
    ocd_parallel_for(p->n * p->h, OCD_MAX(1, 4096 / p->w), grid_fwd_rows, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_host_stn_grid_bwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_stn_grid_problem *p = problem;
    ocd_parallel_for(p->n, OCD_MAX(1, 4096 / (p->h * p->w)), grid_bwd_images, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- sampler ------------------------------------------------------------------------------------ */

/* One sample point: where it reads, and the four neighbours' values in one channel. */
struct point {
    int64_t n, i, j;
    struct ocd_stn_taps t;
};

static struct point point_of(const struct ocd_stn_sampler_problem *p, int64_t q)
{
    struct point pt;
    int64_t h = p->y.dims[2], w = p->y.dims[3];
    pt.j = q % w;
    pt.i = q / w % h;
    pt.n = q / w / h;
    pt.t = ocd_stn_taps_of(ocd_host_load(p->dtype, p->grid, 2 * q), ocd_host_load(p->dtype, p->grid, 2 * q + 1),
                           p->x.dims[2], p->x.dims[3]);
    return pt;
}

/* v[b][a]: the input at (y0 + b, x0 + a) in channel c, 0 outside the image. */
static void neighbours(const struct ocd_stn_sampler_problem *p, const struct point *pt, int64_t c, double v[2][2])
{
    const struct ocd_tensor_view *x = &p->x;
    for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++) {
            int64_t yy = pt->t.y0 + b, xx = pt->t.x0 + a;
            bool inside = yy >= 0 && yy < x->dims[2] && xx >= 0 && xx < x->dims[3];
            v[b][a] = inside ? ocd_host_load(p->dtype, p->x_data, pt->n * x->strides[0] + c * x->strides[1] +
                                                                      yy * x->strides[2] + xx * x->strides[3])
                             : 0.0;
        }
}

static int64_t offset4(const struct ocd_tensor_view *v, int64_t n, int64_t c, int64_t i, int64_t j)
{
    return n * v->strides[0] + c * v->strides[1] + i * v->strides[2] + j * v->strides[3];
}

/* alpha * r + beta * dst[off], where a zero beta does not read dst. */
static double blend(cudnnDataType_t t, const void *dst, int64_t off, double alpha, double r, double beta)
{
    return beta == 0.0 ? alpha * r : alpha * r + beta * ocd_host_load(t, dst, off);
}

static void sampler_fwd_points(void *ctx, int64_t q0, int64_t q1)
{
    const struct ocd_stn_sampler_problem *p = ctx;
    for (int64_t q = q0; q < q1; q++) {
        struct point pt = point_of(p, q);
        double wx1 = pt.t.wx1, wy1 = pt.t.wy1, v[2][2];
        for (int64_t c = 0; c < p->y.dims[1]; c++) {
            double r = 0.0;
            if (pt.t.valid) {
                neighbours(p, &pt, c, v);
                r = (1 - wy1) * ((1 - wx1) * v[0][0] + wx1 * v[0][1]) + wy1 * ((1 - wx1) * v[1][0] + wx1 * v[1][1]);
            }
            int64_t off = offset4(&p->y, pt.n, c, pt.i, pt.j);
            ocd_host_store(p->dtype, p->y_data, off, blend(p->dtype, p->y_data, off, p->alpha, r, p->beta));
        }
    }
}

cudnnStatus_t ocd_host_stn_sampler_fwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_stn_sampler_problem *p = problem;
    ocd_parallel_for(p->y.dims[0] * p->y.dims[2] * p->y.dims[3], OCD_MAX(1, 1024 / p->y.dims[1]),
                     sampler_fwd_points, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}

/* dgrid: d/dxs of the bilinear sum is the weighted difference of the right and left neighbours
   (likewise for ys), and dxs/dgx = (W_in - 1) / 2. */
static void sampler_bwd_dgrid(void *ctx, int64_t q0, int64_t q1)
{
    const struct ocd_stn_sampler_problem *p = ctx;
    for (int64_t q = q0; q < q1; q++) {
        struct point pt = point_of(p, q);
        double wx1 = pt.t.wx1, wy1 = pt.t.wy1, gx = 0.0, gy = 0.0, v[2][2];
        /* under alpha_dgrid 0 the term is not formed: x is not read (it may be dx) */
        for (int64_t c = 0; pt.t.valid && p->alpha_dgrid != 0.0 && c < p->y.dims[1]; c++) {
            neighbours(p, &pt, c, v);
            double d = ocd_host_load(p->dtype, p->dy_data, offset4(&p->y, pt.n, c, pt.i, pt.j));
            gx += d * ((1 - wy1) * (v[0][1] - v[0][0]) + wy1 * (v[1][1] - v[1][0]));
            gy += d * ((1 - wx1) * (v[1][0] - v[0][0]) + wx1 * (v[1][1] - v[0][1]));
        }
        gx *= (double)(p->x.dims[3] - 1) * 0.5;
        gy *= (double)(p->x.dims[2] - 1) * 0.5;
        ocd_host_store(p->dtype, p->dgrid, 2 * q, blend(p->dtype, p->dgrid, 2 * q, p->alpha_dgrid, gx, p->beta_dgrid));
        ocd_host_store(p->dtype, p->dgrid, 2 * q + 1,
                       blend(p->dtype, p->dgrid, 2 * q + 1, p->alpha_dgrid, gy, p->beta_dgrid));
    }
}

struct dx_job {
    const struct ocd_stn_sampler_problem *p;
    double *planes; /* one H_in x W_in accumulator per worker */
    int64_t workers;
};

/* Worker `w` takes the (n, c) planes w, w + workers, ...: scatters every sample point's dy into
   its accumulator, then blends the accumulator into dx. */
static void sampler_bwd_dx(void *ctx, int64_t w0, int64_t w1)
{
    const struct dx_job *job = ctx;
    const struct ocd_stn_sampler_problem *p = job->p;
    int64_t C = p->x.dims[1], H = p->x.dims[2], W = p->x.dims[3];
    int64_t points = p->y.dims[2] * p->y.dims[3];
    for (int64_t w = w0; w < w1; w++) {
        double *acc = job->planes + w * H * W;
        for (int64_t plane = w; plane < p->x.dims[0] * C; plane += job->workers) {
            int64_t n = plane / C, c = plane % C;
            for (int64_t k = 0; k < H * W; k++) acc[k] = 0.0;
            for (int64_t q = n * points; q < (n + 1) * points; q++) {
                struct point pt = point_of(p, q);
                if (!pt.t.valid) continue;
                double d = ocd_host_load(p->dtype, p->dy_data, offset4(&p->y, n, c, pt.i, pt.j));
                double wx[2] = {1 - pt.t.wx1, pt.t.wx1}, wy[2] = {1 - pt.t.wy1, pt.t.wy1};
                for (int b = 0; b < 2; b++)
                    for (int a = 0; a < 2; a++) {
                        int64_t yy = pt.t.y0 + b, xx = pt.t.x0 + a;
                        if (yy >= 0 && yy < H && xx >= 0 && xx < W) acc[yy * W + xx] += wy[b] * wx[a] * d;
                    }
            }
            for (int64_t yy = 0; yy < H; yy++)
                for (int64_t xx = 0; xx < W; xx++) {
                    int64_t off = offset4(&p->dx, n, c, yy, xx);
                    ocd_host_store(p->dtype, p->dx_data, off,
                                   blend(p->dtype, p->dx_data, off, p->alpha, acc[yy * W + xx], p->beta));
                }
        }
    }
}

cudnnStatus_t ocd_host_stn_sampler_bwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_stn_sampler_problem *p = problem;
    struct dx_job job = {p, NULL, OCD_MIN((int64_t)ocd_parallel_threads(), p->x.dims[0] * p->x.dims[1])};
    job.planes = ocd_malloc(sizeof(double) * (size_t)(job.workers * p->x.dims[2] * p->x.dims[3]));
    if (job.planes == NULL)
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %lld accumulator planes of %lld x %lld",
                        (long long)job.workers, (long long)p->x.dims[2], (long long)p->x.dims[3]);
    ocd_parallel_for(job.workers, 1, sampler_bwd_dx, &job);
    free(job.planes);
    ocd_parallel_for(p->y.dims[0] * p->y.dims[2] * p->y.dims[3], OCD_MAX(1, 1024 / p->y.dims[1]),
                     sampler_bwd_dgrid, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}
