/* ref/lrn.c: references of LRN and divisive normalization (see lrn.h). Backward accumulates the
   derivative of every output into the inputs of its window (a scatter), where the library
   gathers. */
#include "ref/lrn.h"

#include <math.h>
#include <stdlib.h>

static int lo_of(int n)
{
    return (n - 1) / 2;
}

static int hi_of(int n)
{
    return n - 1 - (n - 1) / 2;
}

/* s for channel ch of column (i, p). */
static double lrn_s(int64_t c, int64_t s, const struct ref_lrn_params *q, const double *x, int64_t i, int64_t p,
                    int64_t ch)
{
    double sum = 0;
    for (int64_t j = ch - lo_of(q->n); j <= ch + hi_of(q->n); j++)
        if (j >= 0 && j < c) sum += x[(i * c + j) * s + p] * x[(i * c + j) * s + p];
    return q->k + q->alpha / q->n * sum;
}

void ref_lrn_forward(int64_t n, int64_t c, int64_t s, const struct ref_lrn_params *q, const double *x, double *y)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < s; p++)
                y[(i * c + ch) * s + p] = x[(i * c + ch) * s + p] * pow(lrn_s(c, s, q, x, i, p, ch), -q->beta);
}

void ref_lrn_backward(int64_t n, int64_t c, int64_t s, const struct ref_lrn_params *q, const double *x,
                      const double *dy, double *dx)
{
    for (int64_t e = 0; e < n * c * s; e++) dx[e] = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t p = 0; p < s; p++) {
                int64_t o = (i * c + ch) * s + p;
                double sv = lrn_s(c, s, q, x, i, p, ch);
                dx[o] += dy[o] * pow(sv, -q->beta);
                /* d s / d x_j = 2 alpha / n * x_j for j in the window */
                double common = dy[o] * x[o] * -q->beta * pow(sv, -q->beta - 1) * 2 * q->alpha / q->n;
                for (int64_t j = ch - lo_of(q->n); j <= ch + hi_of(q->n); j++)
                    if (j >= 0 && j < c) dx[(i * c + j) * s + p] += common * x[(i * c + j) * s + p];
            }
}

static int64_t at(const int64_t dims[5], const int64_t c[5])
{
    return (((c[0] * dims[1] + c[1]) * dims[2] + c[2]) * dims[3] + c[3]) * dims[4] + c[4];
}

static double u_of(const double *x, const double *means, int64_t o)
{
    return x[o] - (means ? means[o] : 0);
}

/* Runs body with o set to each in-bounds element of the spatial window of the element at c. */
#define FOR_WINDOW(dims, q, c, o, body)                                                           \
    for (int64_t d_ = (c)[2] - lo_of((q)->n); d_ <= (c)[2] + hi_of((q)->n); d_++)                 \
        for (int64_t h_ = (c)[3] - lo_of((q)->n); h_ <= (c)[3] + hi_of((q)->n); h_++)             \
            for (int64_t w_ = (c)[4] - lo_of((q)->n); w_ <= (c)[4] + hi_of((q)->n); w_++) {       \
                if (d_ < 0 || d_ >= (dims)[2] || h_ < 0 || h_ >= (dims)[3] || w_ < 0 || w_ >= (dims)[4]) \
                    continue;                                                                       \
                const int64_t q_[5] = {(c)[0], (c)[1], d_, h_, w_};                                 \
                int64_t o = at((dims), q_);                                                         \
                body;                                                                               \
            }

/* The coordinates of element e, and s at it. */
static double divnorm_s(const int64_t dims[5], int spatial, const struct ref_lrn_params *q, const double *x,
                        const double *means, int64_t e, int64_t c[5])
{
    for (int d = 4; d >= 0; d--) {
        c[d] = e % dims[d];
        e /= dims[d];
    }
    double sum = 0;
    FOR_WINDOW(dims, q, c, o, sum += u_of(x, means, o) * u_of(x, means, o));
    return q->k + q->alpha / pow(q->n, spatial) * sum;
}

void ref_divnorm_forward(const int64_t dims[5], int spatial, const struct ref_lrn_params *q, const double *x,
                         const double *means, double *y)
{
    int64_t total = dims[0] * dims[1] * dims[2] * dims[3] * dims[4], c[5];
    for (int64_t e = 0; e < total; e++) y[e] = u_of(x, means, e) * pow(divnorm_s(dims, spatial, q, x, means, e, c), -q->beta);
}

void ref_divnorm_backward(const int64_t dims[5], int spatial, const struct ref_lrn_params *q, const double *x,
                          const double *means, const double *dy, double *dx)
{
    int64_t total = dims[0] * dims[1] * dims[2] * dims[3] * dims[4], c[5];
    double scale = q->alpha / pow(q->n, spatial);
    for (int64_t e = 0; e < total; e++) dx[e] = 0;
    for (int64_t p = 0; p < total; p++) {
        double sv = divnorm_s(dims, spatial, q, x, means, p, c), up = u_of(x, means, p);
        dx[p] += dy[p] * pow(sv, -q->beta);
        /* d s / d u_o = 2 scale u_o for o in the window */
        double common = dy[p] * up * -q->beta * pow(sv, -q->beta - 1) * 2 * scale;
        FOR_WINDOW(dims, q, c, o, dx[o] += common * u_of(x, means, o));
    }
}
