/* ref/spatial_tf.h: double-precision references for the spatial transformer.

   Arrays are packed: theta n x 2 x 3, grid n x h x w x 2 ((x, y) innermost), images NCHW. The
   grid spans [-1, 1] from the centre of the first pixel to the centre of the last (a single
   pixel sits at -1); the sampler is bilinear with zeros outside the image. */
#ifndef OCD_TESTS_REF_SPATIAL_TF_H
#define OCD_TESTS_REF_SPATIAL_TF_H

#include <stdint.h>

void ref_stn_grid(int n, int h, int w, const double *theta, double *grid);
/* dtheta = d(sum dgrid * grid) / dtheta */
void ref_stn_grid_backward(int n, int h, int w, const double *dgrid, double *dtheta);

/* y (n x c x h x w) sampled from x (n x c x hin x win) at grid (n x h x w x 2). */
void ref_stn_sample(int n, int c, int hin, int win, const double *x, int h, int w, const double *grid, double *y);
/* The gradients of sum(dy * y) with respect to x (dx) and to the grid (dgrid). */
void ref_stn_sample_backward(int n, int c, int hin, int win, const double *x, int h, int w, const double *grid,
                             const double *dy, double *dx, double *dgrid);

#endif
