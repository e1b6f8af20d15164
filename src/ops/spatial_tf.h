/* spatial_tf.h: the spatial transformer descriptor and the entry-layer helpers of its four
   operations (descriptor and tensor checks, the applies() of every entry). The problems, the
   coordinate convention and the kernels are in problem/spatial_tf.h. */
#ifndef OCD_OPS_SPATIAL_TF_H
#define OCD_OPS_SPATIAL_TF_H

#include "core/impl.h"
#include "problem/spatial_tf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cudnnSpatialTransformerStruct {
    struct ocd_object obj;
    bool set;
    cudnnSamplerType_t sampler;
    cudnnDataType_t dtype;
    int nb_dims;
    int dims[OCD_MAX_DIMS]; /* N, C, H, W of the output when nb_dims == 4 */
};

/* applies() of every entry: the floating-point types. */
const char *ocd_stn_grid_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_stn_sampler_applies(cudnnHandle_t handle, const void *problem);

/* The descriptor of a call: live, set (BAD_PARAM) and 2-D (NOT_SUPPORTED otherwise, as
   documented for a transformed tensor of more than 4 dimensions). */
cudnnStatus_t ocd_stn_get(cudnnSpatialTransformerDescriptor_t desc,
                          const struct cudnnSpatialTransformerStruct **st);

/* The grid generator's checks (BAD_PARAM for a bad handle or descriptor or a NULL pointer), then
   its problem: src/dst are theta/grid (forward) or dgrid/dtheta (backward). */
cudnnStatus_t ocd_stn_grid_problem_init(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t desc,
                                        const void *src, void *dst, struct ocd_stn_grid_problem *p);

/* The sampler's checks on x and its output (y, or dy with y_name "dy"): BAD_PARAM unless x is
   4-D with the descriptor's N and C, the output has the descriptor's dims and both are of its
   type. (The forward's y must not overlap x, the backward's dx neither x nor dy: ocd_check_alias
   in each direction; x and dy, both read, may be one buffer.) */
cudnnStatus_t ocd_stn_sampler_check(const struct cudnnSpatialTransformerStruct *st,
                                    const struct ocd_tensor_view *x, const struct ocd_tensor_view *y,
                                    const char *y_name);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_SPATIAL_TF_H */
