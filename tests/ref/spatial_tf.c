/* ref/spatial_tf.c: see ref/spatial_tf.h. Plain loops in double, sharing nothing with src/. */
#include "ref/spatial_tf.h"

#include <math.h>
#include <string.h>

static double coord(int i, int size)
{
    return size == 1 ? -1.0 : -1.0 + 2.0 * i / (size - 1);
}

void ref_stn_grid(int n, int h, int w, const double *theta, double *grid)
{
    for (int b = 0; b < n; b++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                const double *t = theta + 6 * b;
                double *g = grid + 2 * (((int64_t)b * h + i) * w + j);
                g[0] = t[0] * coord(j, w) + t[1] * coord(i, h) + t[2];
                g[1] = t[3] * coord(j, w) + t[4] * coord(i, h) + t[5];
            }
}

void ref_stn_grid_backward(int n, int h, int w, const double *dgrid, double *dtheta)
{
    for (int b = 0; b < n; b++) {
        double *t = dtheta + 6 * b;
        for (int k = 0; k < 6; k++) t[k] = 0;
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                const double *g = dgrid + 2 * (((int64_t)b * h + i) * w + j);
                for (int r = 0; r < 2; r++) {
                    t[3 * r] += g[r] * coord(j, w);
                    t[3 * r + 1] += g[r] * coord(i, h);
                    t[3 * r + 2] += g[r];
                }
            }
    }
}

/* The four corners of sample point (gx, gy) in an hin x win image: their rows, columns and
   bilinear weights. */
struct corners {
    int64_t row[4], col[4];
    double weight[4];
    double fx, fy; /* fractional parts, for the gradient */
    double sx, sy; /* d(pixel coordinate) / d(grid coordinate) */
};

static struct corners corners_of(double gx, double gy, int hin, int win)
{
    struct corners k;
    double px = (gx + 1) / 2 * (win - 1), py = (gy + 1) / 2 * (hin - 1);
    double left = floor(px), top = floor(py);
    k.fx = px - left;
    k.fy = py - top;
    k.sx = (win - 1) / 2.0;
    k.sy = (hin - 1) / 2.0;
    for (int corner = 0; corner < 4; corner++) {
        int right = corner & 1, bottom = corner >> 1;
        k.col[corner] = (int64_t)left + right;
        k.row[corner] = (int64_t)top + bottom;
        k.weight[corner] = (right ? k.fx : 1 - k.fx) * (bottom ? k.fy : 1 - k.fy);
    }
    return k;
}

static double pixel(const double *plane, int hin, int win, int64_t row, int64_t col)
{
    return row < 0 || row >= hin || col < 0 || col >= win ? 0.0 : plane[row * win + col];
}

void ref_stn_sample(int n, int c, int hin, int win, const double *x, int h, int w, const double *grid, double *y)
{
    for (int b = 0; b < n; b++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                const double *g = grid + 2 * (((int64_t)b * h + i) * w + j);
                struct corners k = corners_of(g[0], g[1], hin, win);
                for (int ch = 0; ch < c; ch++) {
                    const double *plane = x + ((int64_t)b * c + ch) * hin * win;
                    double sum = 0;
                    for (int corner = 0; corner < 4; corner++)
                        sum += k.weight[corner] * pixel(plane, hin, win, k.row[corner], k.col[corner]);
                    y[(((int64_t)b * c + ch) * h + i) * w + j] = sum;
                }
            }
}

void ref_stn_sample_backward(int n, int c, int hin, int win, const double *x, int h, int w, const double *grid,
                             const double *dy, double *dx, double *dgrid)
{
    memset(dx, 0, sizeof(double) * (size_t)n * c * hin * win);
    for (int b = 0; b < n; b++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                const double *g = grid + 2 * (((int64_t)b * h + i) * w + j);
                double *dg = dgrid + 2 * (((int64_t)b * h + i) * w + j);
                struct corners k = corners_of(g[0], g[1], hin, win);
                dg[0] = dg[1] = 0;
                for (int ch = 0; ch < c; ch++) {
                    const double *plane = x + ((int64_t)b * c + ch) * hin * win;
                    double *dplane = dx + ((int64_t)b * c + ch) * hin * win;
                    double d = dy[(((int64_t)b * c + ch) * h + i) * w + j];
                    double v[4];
                    for (int corner = 0; corner < 4; corner++) {
                        v[corner] = pixel(plane, hin, win, k.row[corner], k.col[corner]);
                        int64_t r = k.row[corner], col = k.col[corner];
                        if (r >= 0 && r < hin && col >= 0 && col < win) dplane[r * win + col] += k.weight[corner] * d;
                    }
                    /* corners: 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right */
                    dg[0] += d * k.sx * ((1 - k.fy) * (v[1] - v[0]) + k.fy * (v[3] - v[2]));
                    dg[1] += d * k.sy * ((1 - k.fx) * (v[2] - v[0]) + k.fx * (v[3] - v[1]));
                }
            }
}
