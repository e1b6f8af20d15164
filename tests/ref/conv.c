/* ref/conv.c: reference convolutions (see ref/conv.h). One routine walks every (output, tap)
   pair of the forward sum once; the three directions are that walk with a different update, so
   the backward ones are the exact adjoints of the forward one. */
#include "ref/conv.h"

#include <string.h>

bool ref_conv_out_dims(struct ref_conv *t)
{
    for (int d = 0; d < t->nsp; d++) {
        int span = (t->filt[d] - 1) * t->dil[d] + 1, padded = t->in[d] + 2 * t->pad[d];
        if (span > padded) return false;
        t->out[d] = (padded - span) / t->stride[d] + 1;
    }
    return true;
}

static long spatial(const struct ref_conv *t, const int *e)
{
    long n = 1;
    for (int d = 0; d < t->nsp; d++) n *= e[d];
    return n;
}

long ref_conv_x_count(const struct ref_conv *t) { return (long)t->n * t->c * spatial(t, t->in); }
long ref_conv_w_count(const struct ref_conv *t) { return (long)t->k * (t->c / t->groups) * spatial(t, t->filt); }
long ref_conv_y_count(const struct ref_conv *t) { return (long)t->n * t->k * spatial(t, t->out); }

enum walk { FWD, BWD_DATA, BWD_FILTER };

static void walk(const struct ref_conv *t, enum walk mode, const double *a, const double *b, double *dst)
{
    int cg = t->c / t->groups, kg = t->k / t->groups;
    long outs = spatial(t, t->out), taps = spatial(t, t->filt), ins = spatial(t, t->in);
    /* the positions of an (output, tap) pair are found once; the channels run innermost */
    for (int n = 0; n < t->n; n++)
        for (long o = 0; o < outs; o++)
            for (long r = 0; r < taps; r++) {
                long xo = 0, wo = 0, ro = r, oo = o;
                int opos[3], rpos[3];
                for (int d = t->nsp - 1; d >= 0; d--) {
                    opos[d] = (int)(oo % t->out[d]), oo /= t->out[d];
                    rpos[d] = (int)(ro % t->filt[d]), ro /= t->filt[d];
                }
                int inside = 1;
                for (int d = 0; d < t->nsp; d++) {
                    int i = opos[d] * t->stride[d] - t->pad[d] + rpos[d] * t->dil[d];
                    if (i < 0 || i >= t->in[d]) inside = 0;
                    xo = xo * t->in[d] + i;
                    int stored = t->convolution ? t->filt[d] - 1 - rpos[d] : rpos[d];
                    wo = wo * t->filt[d] + stored;
                }
                if (!inside) continue;
                for (int k = 0; k < t->k; k++) {
                    long yi = ((long)n * t->k + k) * outs + o;
                    long xi = ((long)n * t->c + (long)(k / kg) * cg) * ins + xo, wi = (long)k * cg * taps + wo;
                    for (int cc = 0; cc < cg; cc++, xi += ins, wi += taps) {
                        if (mode == FWD) dst[yi] += a[xi] * b[wi];
                        else if (mode == BWD_DATA) dst[xi] += a[yi] * b[wi];
                        else dst[wi] += a[xi] * b[yi];
                    }
                }
            }
}

void ref_conv_fwd(const struct ref_conv *t, const double *x, const double *w, double *y)
{
    memset(y, 0, sizeof *y * (size_t)ref_conv_y_count(t));
    walk(t, FWD, x, w, y);
}

void ref_conv_bwd_data(const struct ref_conv *t, const double *dy, const double *w, double *dx)
{
    memset(dx, 0, sizeof *dx * (size_t)ref_conv_x_count(t));
    walk(t, BWD_DATA, dy, w, dx);
}

void ref_conv_bwd_filter(const struct ref_conv *t, const double *x, const double *dy, double *dw)
{
    memset(dw, 0, sizeof *dw * (size_t)ref_conv_w_count(t));
    walk(t, BWD_FILTER, x, dy, dw);
}

void ref_conv_im2col(const struct ref_conv *t, const double *x, double *col)
{
    int R = t->filt[0], S = t->filt[1], P = t->out[0], Q = t->out[1];
    long cols = (long)t->c * R * S;
    for (int n = 0; n < t->n; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int c = 0; c < t->c; c++)
                    for (int r = 0; r < R; r++)
                        for (int s = 0; s < S; s++) {
                            int rr = t->convolution ? R - 1 - r : r, ss = t->convolution ? S - 1 - s : s;
                            int h = p * t->stride[0] - t->pad[0] + rr * t->dil[0];
                            int w = q * t->stride[1] - t->pad[1] + ss * t->dil[1];
                            double v = h >= 0 && h < t->in[0] && w >= 0 && w < t->in[1]
                                           ? x[(((long)n * t->c + c) * t->in[0] + h) * t->in[1] + w]
                                           : 0;
                            col[(((long)n * P + p) * Q + q) * cols + ((long)c * R + r) * S + s] = v;
                        }
}
