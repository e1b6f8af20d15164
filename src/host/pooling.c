/* pooling.c (host): pooling forward and backward with the window math of problem/pooling.h, any
   strides, computed in double.

   Forward spreads rows of outputs (fixed n, c, d, h) over the worker threads; each output scans
   its window. Backward spreads (n, c) planes: each plane's gradient is scattered from dy into a
   double buffer (the maximum of each window found once), then blended into dx row by row, so that
   dx is written once and the result does not depend on the thread count. */
#include "problem/pooling.h"

#include "core/dtype.h"
#include "host/parallel.h"
#include "host/typed.h"
#include "host/walk.h"

#include <stdlib.h>

/* The window of output (od, oh, ow) of a plane, as [lo, hi) per spatial dim. */
struct window {
    int64_t lo[OCD_POOL_DIMS], hi[OCD_POOL_DIMS];
};

static void window_of(const struct ocd_pooling_problem *p, const int64_t o[OCD_POOL_DIMS], struct window *w)
{
    for (int i = 0; i < OCD_POOL_DIMS; i++)
        ocd_pool_window(o[i], p->stride[i], p->pad[i], p->window[i], p->in[i], &w->lo[i], &w->hi[i]);
}

static int64_t window_count(const struct window *w)
{
    int64_t n = 1;
    for (int i = 0; i < OCD_POOL_DIMS; i++) n *= w->hi[i] > w->lo[i] ? w->hi[i] - w->lo[i] : 0;
    return n;
}

/* The divisor of output o's window w: its inputs (EXCLUDE_PADDING) or its taps inside the padded
   input (INCLUDE_PADDING; problem/pooling.h). */
static double divisor(const struct ocd_pooling_problem *p, const int64_t o[OCD_POOL_DIMS], const struct window *w)
{
    if (p->mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING) return (double)window_count(w);
    double n = 1;
    for (int i = 0; i < OCD_POOL_DIMS; i++)
        n *= (double)ocd_pool_padded_taps(o[i], p->stride[i], p->pad[i], p->window[i], p->in[i]);
    return n;
}

/* The maximum of the window in the plane at x, and its position (d, h, w) in *at; false for an
   empty window. */
static bool window_max(const struct ocd_pooling_problem *p, const char *x, const struct window *w, double *best,
                       int64_t at[OCD_POOL_DIMS])
{
    bool found = false;
    for (int64_t d = w->lo[0]; d < w->hi[0]; d++)
        for (int64_t h = w->lo[1]; h < w->hi[1]; h++)
            for (int64_t k = w->lo[2]; k < w->hi[2]; k++) {
                double v = ocd_host_load(p->dtype, x, d * p->xs[2] + h * p->xs[3] + k * p->xs[4]);
                if (!found || ocd_pool_better(v, *best, p->propagate_nan)) {
                    *best = v;
                    at[0] = d, at[1] = h, at[2] = k;
                    found = true;
                }
            }
    return found;
}

static double window_sum(const struct ocd_pooling_problem *p, const char *x, const struct window *w)
{
    double s = 0;
    for (int64_t d = w->lo[0]; d < w->hi[0]; d++)
        for (int64_t h = w->lo[1]; h < w->hi[1]; h++)
            for (int64_t k = w->lo[2]; k < w->hi[2]; k++)
                s += ocd_host_load(p->dtype, x, d * p->xs[2] + h * p->xs[3] + k * p->xs[4]);
    return s;
}

static bool is_max(const struct ocd_pooling_problem *p)
{
    return p->mode == CUDNN_POOLING_MAX || p->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
}

static const char *plane(const struct ocd_pooling_problem *p, const void *base, const int64_t s[5], int64_t n, int64_t c)
{
    return (const char *)base + (n * s[0] + c * s[1]) * (int64_t)ocd_dtype_scalar_size(p->dtype);
}

/* ---- forward ---------------------------------------------------------------------------------- */

/* Row r: outputs (n, c, od, oh, *), r = ((n * C + c) * out_d + od) * out_h + oh. */
static void forward_rows(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_pooling_problem *p = ctx;
    double r[OCD_HOST_RUN_MAX];
    for (int64_t row = begin; row < end; row++) {
        int64_t o[OCD_POOL_DIMS], rest = row;
        o[1] = rest % p->out[1], rest /= p->out[1];
        o[0] = rest % p->out[0], rest /= p->out[0];
        int64_t c = rest % p->c, n = rest / p->c;
        const char *x = plane(p, p->x, p->xs, n, c);
        char *y = (char *)plane(p, p->y, p->ys, n, c) +
                  (o[0] * p->ys[2] + o[1] * p->ys[3]) * (int64_t)ocd_dtype_scalar_size(p->dtype);
        for (int64_t first = 0; first < p->out[2]; first += OCD_HOST_RUN_MAX) {
            int64_t len = OCD_MIN(OCD_HOST_RUN_MAX, p->out[2] - first);
            for (int64_t i = 0; i < len; i++) {
                o[2] = first + i;
                struct window w;
                window_of(p, o, &w);
                int64_t at[OCD_POOL_DIMS];
                if (is_max(p)) {
                    if (!window_max(p, x, &w, &r[i], at)) r[i] = 0;
                } else {
                    double div = divisor(p, o, &w);
                    r[i] = div > 0 ? window_sum(p, x, &w) / div : 0;
                }
            }
            ocd_host_blend_run(p->dtype, y + first * p->ys[4] * (int64_t)ocd_dtype_scalar_size(p->dtype), p->ys[4],
                               len, r, p->alpha, p->beta);
        }
    }
}

/* ---- backward --------------------------------------------------------------------------------- */

/* scratch: a plane of dx, accumulated in double */
static void backward_planes(void *ctx, int64_t begin, int64_t end, void *scratch)
{
    const struct ocd_pooling_problem *p = ctx;
    int64_t hw = p->in[1] * p->in[2], size = p->in[0] * hw;
    double *acc = scratch;
    size_t scalar = ocd_dtype_scalar_size(p->dtype);
    for (int64_t pl = begin; pl < end; pl++) {
        int64_t c = pl % p->c, n = pl / p->c;
        const char *x = is_max(p) ? plane(p, p->x, p->xs, n, c) : NULL;
        const char *dy = plane(p, p->dy, p->ys, n, c);
        for (int64_t i = 0; i < size; i++) acc[i] = 0;
        int64_t o[OCD_POOL_DIMS];
        for (o[0] = 0; o[0] < p->out[0]; o[0]++)
            for (o[1] = 0; o[1] < p->out[1]; o[1]++)
                for (o[2] = 0; o[2] < p->out[2]; o[2]++) {
                    double g = ocd_host_load(p->dtype, dy, o[0] * p->ys[2] + o[1] * p->ys[3] + o[2] * p->ys[4]);
                    struct window w;
                    window_of(p, o, &w);
                    int64_t at[OCD_POOL_DIMS];
                    double best;
                    if (is_max(p)) {
                        if (window_max(p, x, &w, &best, at)) acc[at[0] * hw + at[1] * p->in[2] + at[2]] += g;
                        continue;
                    }
                    double div = divisor(p, o, &w);
                    if (div <= 0) continue;
                    for (int64_t d = w.lo[0]; d < w.hi[0]; d++)
                        for (int64_t h = w.lo[1]; h < w.hi[1]; h++)
                            for (int64_t k = w.lo[2]; k < w.hi[2]; k++) acc[d * hw + h * p->in[2] + k] += g / div;
                }
        char *dx = (char *)plane(p, p->dx, p->xs, n, c);
        for (int64_t d = 0; d < p->in[0]; d++)
            for (int64_t h = 0; h < p->in[1]; h++)
                ocd_host_blend_run(p->dtype, dx + (d * p->xs[2] + h * p->xs[3]) * (int64_t)scalar, p->xs[4], p->in[2],
                                   acc + d * hw + h * p->in[2], p->alpha, p->beta);
    }
}

cudnnStatus_t ocd_host_pooling(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_pooling_problem *p = problem;
    if (!p->backward) {
        int64_t rows = p->n * p->c * p->out[0] * p->out[1];
        ocd_parallel_for(rows, OCD_MAX(1, 4096 / p->out[2]), forward_rows, (void *)p);
        return CUDNN_STATUS_SUCCESS;
    }
    int64_t plane_size = p->in[0] * p->in[1] * p->in[2];
    if (!ocd_parallel_for_scratch(p->n * p->c, OCD_MAX(1, 4096 / plane_size), sizeof(double) * (size_t)plane_size,
                                  backward_planes, (void *)p))
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate a plane buffer of %lld doubles", (long long)plane_size);
    return CUDNN_STATUS_SUCCESS;
}
