/* spatial_tf_train.c: cudnnSpatialTfGridGeneratorBackward and cudnnSpatialTfSamplerBackward
   (ops_train). The checks are those of the forward functions (spatial_tf.c), plus: dx has x's
   dims and type and overlaps none of x, dy and the grid (every sample point reads its
   neighbours, and dx is their scatter); dgrid may be the grid itself (MXNet's spatial
   transformer writes dgrid over the grid: each point reads its own grid entry before it writes
   its dgrid entry, and dx is done with the grid by then), but no shifted overlap of it, nor of x
   or dy. Under alphaDgrid 0, x is not read at all (dx's term needs only dy and the grid), so it
   may overlap dx and dgrid: oneDNN's resampling backward passes its dx as x. */
#include "ops/spatial_tf.h"

#include "core/argcheck.h"
#include "core/dtype.h"

static const struct ocd_impl grid_bwd_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:stn_grid_bwd", OCD_BACKEND_CUDA, ocd_stn_grid_applies, NULL, ocd_cuda_stn_grid_bwd),
#endif
    OCD_IMPL_ENTRY("host:stn_grid_bwd", OCD_BACKEND_HOST, ocd_stn_grid_applies, NULL, ocd_host_stn_grid_bwd),
};

cudnnStatus_t CUDNNWINAPI cudnnSpatialTfGridGeneratorBackward(cudnnHandle_t handle,
                                                              const cudnnSpatialTransformerDescriptor_t stDesc,
                                                              const void *dgrid, void *dtheta)
{
    OCD_LOG_API("handle=%p stDesc=%p dgrid=%p dtheta=%p", (void *)handle, (void *)stDesc, dgrid, dtheta);
    struct ocd_stn_grid_problem p;
    OCD_TRY(ocd_stn_grid_problem_init(handle, stDesc, dgrid, dtheta, &p));
    return ocd_impl_run(handle, grid_bwd_impls, OCD_ARRAY_LEN(grid_bwd_impls), &p,
                        "cudnnSpatialTfGridGeneratorBackward");
}

/* The grid of a sampler whose output (or its gradient) is y: N x H x W x 2, packed, (x, y)
   innermost. */
static struct ocd_tensor_view grid_view(const struct ocd_tensor_view *y, cudnnDataType_t dtype)
{
    struct ocd_tensor_view g = {.dtype = dtype, .rank = 4, .vect = 1,
                                .dims = {y->dims[0], y->dims[2], y->dims[3], 2}};
    g.strides[3] = 1;
    for (int d = 2; d >= 0; d--) g.strides[d] = g.strides[d + 1] * g.dims[d + 1];
    return g;
}

static const struct ocd_impl sampler_bwd_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:stn_sampler_bwd", OCD_BACKEND_CUDA, ocd_stn_sampler_applies, NULL, ocd_cuda_stn_sampler_bwd),
#endif
    OCD_IMPL_ENTRY("host:stn_sampler_bwd", OCD_BACKEND_HOST, ocd_stn_sampler_applies, NULL, ocd_host_stn_sampler_bwd),
};

cudnnStatus_t CUDNNWINAPI cudnnSpatialTfSamplerBackward(cudnnHandle_t handle,
                                                        cudnnSpatialTransformerDescriptor_t stDesc,
                                                        const void *alpha,
                                                        const cudnnTensorDescriptor_t xDesc,
                                                        const void *x, const void *beta,
                                                        const cudnnTensorDescriptor_t dxDesc, void *dx,
                                                        const void *alphaDgrid,
                                                        const cudnnTensorDescriptor_t dyDesc,
                                                        const void *dy, const void *grid,
                                                        const void *betaDgrid, void *dgrid)
{
    OCD_LOG_API("handle=%p stDesc=%p alpha=%p xDesc=%p x=%p beta=%p dxDesc=%p dx=%p alphaDgrid=%p "
                "dyDesc=%p dy=%p grid=%p betaDgrid=%p dgrid=%p",
                (void *)handle, (void *)stDesc, alpha, (void *)xDesc, x, beta, (void *)dxDesc, dx,
                alphaDgrid, (void *)dyDesc, dy, grid, betaDgrid, dgrid);
    OCD_CHECK_HANDLE(handle);
    const struct cudnnSpatialTransformerStruct *st;
    OCD_TRY(ocd_stn_get(stDesc, &st));
    struct ocd_stn_sampler_problem p = {0};
    OCD_TRY(ocd_tensor_get(xDesc, "xDesc", &p.x));
    OCD_TRY(ocd_tensor_get(dxDesc, "dxDesc", &p.dx));
    OCD_TRY(ocd_tensor_get(dyDesc, "dyDesc", &p.y));
    if (alpha == NULL || beta == NULL || alphaDgrid == NULL || betaDgrid == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "alpha, beta, alphaDgrid or betaDgrid is NULL");
    if (x == NULL || dx == NULL || dy == NULL || grid == NULL || dgrid == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x, dx, dy, grid or dgrid is NULL");
    OCD_TRY(ocd_stn_sampler_check(st, &p.x, &p.y, "dy"));
    if (!ocd_view_same_dims(&p.x, &p.dx) || p.dx.dtype != p.x.dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dxDesc's dims or type differ from xDesc's");
    struct ocd_tensor_view g = grid_view(&p.y, st->dtype);
    p.alpha_dgrid = ocd_scaling_value(st->dtype, alphaDgrid);
    /* x only enters dgrid's gradient term: under alphaDgrid 0 it is not read, and may be any
       buffer, dx's included (oneDNN's resampling passes its diff_src as both). */
    const enum ocd_read x_read = p.alpha_dgrid != 0.0 ? OCD_READ_MANY : OCD_READ_NONE;
    OCD_TRY(ocd_check_alias(dx, &p.dx, "dx", x, &p.x, "x", x_read));
    OCD_TRY(ocd_check_alias(dx, &p.dx, "dx", dy, &p.y, "dy", OCD_READ_MANY));
    OCD_TRY(ocd_check_alias(dx, &p.dx, "dx", grid, &g, "grid", OCD_READ_MANY));
    OCD_TRY(ocd_check_alias(dgrid, &g, "dgrid", x, &p.x, "x", x_read));
    OCD_TRY(ocd_check_alias(dgrid, &g, "dgrid", dy, &p.y, "dy", OCD_READ_MANY));
    OCD_TRY(ocd_check_alias(dgrid, &g, "dgrid", grid, &g, "grid", dgrid == grid ? OCD_READ_SAME : OCD_READ_MANY));
    if (dgrid == grid && (ocd_log_mask & CUDNN_SEV_INFO_EN))
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "dgrid is grid: each point's gradient replaces its grid entry (the 8.2 text gives them "
                        "apart)");
    p.dtype = st->dtype;
    p.x_data = x;
    p.grid = grid;
    p.dy_data = dy;
    p.dx_data = dx;
    p.dgrid = dgrid;
    p.alpha = ocd_scaling_value(p.dtype, alpha);
    p.beta = ocd_scaling_value(p.dtype, beta);
    p.beta_dgrid = ocd_scaling_value(p.dtype, betaDgrid);
    return ocd_impl_run(handle, sampler_bwd_impls, OCD_ARRAY_LEN(sampler_bwd_impls), &p,
                        "cudnnSpatialTfSamplerBackward");
}
