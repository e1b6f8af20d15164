/* ref/pooling.c: reference pooling (see pooling.h). Each output enumerates its window position by
   position and keeps the in-bounds ones. */
#include "pooling.h"

#include <math.h>
#include <string.h>

static long product(const int *v, int n)
{
    long p = 1;
    for (int i = 0; i < n; i++) p *= v[i];
    return p;
}

/* The in-bounds input positions (flat indices within one plane) of output `flat_o`'s window, in
   row-major window order; returns how many. *padded: the window's positions inside the padded
   input (every coordinate in [-pad, in + pad)), INCLUDE_PADDING's divisor. */
static int window_inputs(const struct ref_pool *p, const int in[], const int out[], long flat_o, long *list,
                         long *padded)
{
    int o[3], count = 0;
    long rest = flat_o;
    for (int i = p->nb - 1; i >= 0; i--) {
        o[i] = (int)(rest % out[i]);
        rest /= out[i];
    }
    long positions = product(p->window, p->nb);
    *padded = 0;
    for (long k = 0; k < positions; k++) {
        long r = k, flat = 0;
        int inside = 1, in_padded = 1, pos[3];
        for (int i = p->nb - 1; i >= 0; i--) {
            pos[i] = o[i] * p->stride[i] - p->pad[i] + (int)(r % p->window[i]);
            r /= p->window[i];
            if (pos[i] < 0 || pos[i] >= in[i]) inside = 0;
            if (pos[i] < -p->pad[i] || pos[i] >= in[i] + p->pad[i]) in_padded = 0;
        }
        *padded += in_padded;
        if (!inside) continue;
        for (int i = 0; i < p->nb; i++) flat = flat * in[i] + pos[i];
        list[count++] = flat;
    }
    return count;
}

static int is_max(const struct ref_pool *p)
{
    return p->mode == CUDNN_POOLING_MAX || p->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
}

/* Index in list of the window's maximum per the NaN rule, or -1. */
static int argmax(const struct ref_pool *p, const double *x, const long *list, int count)
{
    int best = -1;
    for (int k = 0; k < count; k++) {
        double v = x[list[k]];
        if (best < 0) {
            best = k;
            continue;
        }
        double b = x[list[best]];
        if (p->propagate) {
            if (!isnan(b) && (isnan(v) || v > b)) best = k;
        } else if ((isnan(b) && !isnan(v)) || v > b) {
            best = k;
        }
    }
    return best;
}

static double divisor(const struct ref_pool *p, int count, long padded)
{
    return p->mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? (double)padded : count;
}

void ref_pooling_forward(const struct ref_pool *p, int n, int c, const int in[], const int out[], const double *x,
                         double *y)
{
    long in_plane = product(in, p->nb), out_plane = product(out, p->nb), list[4096];
    for (long plane = 0; plane < (long)n * c; plane++)
        for (long o = 0; o < out_plane; o++) {
            const double *xp = x + plane * in_plane;
            long padded;
            int count = window_inputs(p, in, out, o, list, &padded);
            double r = 0;
            if (count > 0 && is_max(p)) {
                r = xp[list[argmax(p, xp, list, count)]];
            } else if (count > 0) {
                for (int k = 0; k < count; k++) r += xp[list[k]];
                r /= divisor(p, count, padded);
            }
            y[plane * out_plane + o] = r;
        }
}

void ref_pooling_backward(const struct ref_pool *p, int n, int c, const int in[], const int out[], const double *x,
                          const double *dy, double *dx)
{
    long in_plane = product(in, p->nb), out_plane = product(out, p->nb), list[4096];
    memset(dx, 0, sizeof(double) * (size_t)(n * c * in_plane));
    for (long plane = 0; plane < (long)n * c; plane++)
        for (long o = 0; o < out_plane; o++) {
            const double *xp = x + plane * in_plane;
            double *g = dx + plane * in_plane, d = dy[plane * out_plane + o];
            long padded;
            int count = window_inputs(p, in, out, o, list, &padded);
            if (count == 0) continue;
            if (is_max(p)) {
                g[list[argmax(p, xp, list, count)]] += d;
            } else {
                for (int k = 0; k < count; k++) g[list[k]] += d / divisor(p, count, padded);
            }
        }
}
