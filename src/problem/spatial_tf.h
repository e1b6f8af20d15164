/* spatial_tf.h: the problems of the spatial transformer's four operations, the coordinate
   convention the host and CUDA kernels share, and the declarations of the kernels.

   The transform is 2-D: the descriptor gives the output (transformed) tensor's N, C, H, W.
   theta is N x 2 x 3, row-major; the grid is N x H x W x 2, packed, (x, y) innermost; both are of
   the descriptor's data type. Normalized coordinates run from -1 at the centre of the first pixel
   to +1 at the centre of the last (ocd_stn_linspace), the convention frameworks rely on when
   they hand their affine grids and grid sampling to cuDNN:
     grid[n,i,j] = theta[n] * (x_j, y_i, 1),  x_j = linspace(j, W), y_i = linspace(i, H).
   The sampler reads input pixel (xs, ys) = ((gx + 1) (W_in - 1) / 2, (gy + 1) (H_in - 1) / 2)
   bilinearly from its four neighbours; neighbours outside the image count as zeros, and a sample
   point that is not a number reads nothing (0, and no gradient). The geometry of a sample point
   (ocd_stn_taps_of) is computed in double by both backends, so that they pick the same
   neighbours; the weighted sums are then done in the compute type. */
#ifndef OCD_PROBLEM_SPATIAL_TF_H
#define OCD_PROBLEM_SPATIAL_TF_H

#include "core/handle.h"
#include "core/hostdev.h"
#include "core/tensor.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Grid generator: forward theta -> grid, backward dgrid -> dtheta; dst is overwritten. */
struct ocd_stn_grid_problem {
    cudnnDataType_t dtype;
    int64_t n, h, w;
    const void *src;
    void *dst;
};

/* Sampler. Forward: y = alpha * sample(x, grid) + beta * y. Backward: dx = alpha * d/dx +
   beta * dx and dgrid = alpha_dgrid * d/dgrid + beta_dgrid * dgrid, for the output gradient dy.
   A beta of 0 means the destination is not read; an alpha_dgrid of 0, that x is not read. x and
   y are 4-D of the same type, vect == 1. */
struct ocd_stn_sampler_problem {
    cudnnDataType_t dtype;
    struct ocd_tensor_view x, y, dx; /* y: the output (forward) or its gradient dy (backward) */
    const void *x_data, *grid;
    void *y_data;                     /* forward only */
    const void *dy_data;              /* backward only, as are dx_data and dgrid */
    void *dx_data, *dgrid;
    double alpha, beta, alpha_dgrid, beta_dgrid;
};

/* Normalized coordinate of pixel j of n: -1 + 2 j / (n - 1); -1 for a single pixel (as
   linspace(-1, 1, 1) gives). */
OCD_HOST_DEVICE double ocd_stn_linspace(int64_t j, int64_t n)
{
    return n > 1 ? -1.0 + 2.0 * (double)j / (double)(n - 1) : -1.0;
}

/* Where a sample point reads: its top-left neighbour (x0, y0) and the weights of the right and
   bottom neighbours (the left and top ones weigh 1 - wx1 and 1 - wy1). valid is false when the
   point reads nothing: no neighbour inside the image, or a coordinate that is not a number. */
struct ocd_stn_taps {
    int64_t x0, y0;
    double wx1, wy1;
    bool valid;
};

OCD_HOST_DEVICE struct ocd_stn_taps ocd_stn_taps_of(double gx, double gy, int64_t h_in, int64_t w_in)
{
    struct ocd_stn_taps t = {0, 0, 0.0, 0.0, false};
    double xs = (gx + 1.0) * (double)(w_in - 1) * 0.5, ys = (gy + 1.0) * (double)(h_in - 1) * 0.5;
    /* written so that NaN fails; outside [-1, size) every neighbour is outside the image */
    if (!(xs >= -1.0 && xs < (double)w_in && ys >= -1.0 && ys < (double)h_in)) return t;
    double fx = floor(xs), fy = floor(ys);
    t.x0 = (int64_t)fx;
    t.y0 = (int64_t)fy;
    t.wx1 = xs - fx;
    t.wy1 = ys - fy;
    t.valid = true;
    return t;
}

/* ---- implementations (tables in src/ops/spatial_tf.c) -------------------------------------- */
cudnnStatus_t ocd_host_stn_grid_fwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_stn_grid_bwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_stn_sampler_fwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_stn_sampler_bwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_stn_grid_fwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_stn_grid_bwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_stn_sampler_fwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_stn_sampler_bwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_SPATIAL_TF_H */
