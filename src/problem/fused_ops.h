/* fused_ops.h: the problems of the FusedOps building blocks that are not a convolution, and the
   kernels of each backend (src/host/fused_ops.c, src/cuda/fused_ops.cu). The fused sequences of
   fused_ops_train.c are these blocks around the convolution registry (conv.h):
     SCALE_BIAS_ACTIVATION_CONV_BNSTATS = affine -> forward convolution -> channel statistics
     SCALE_BIAS_ACTIVATION_WGRAD        = affine -> filter gradient
     BN_FINALIZE_STATISTICS_*           = bn_finalize
   The channel statistics are the bias-gradient kernels of conv.h with their sum of squares. */
#ifndef OCD_PROBLEM_FUSED_OPS_H
#define OCD_PROBLEM_FUSED_OPS_H

#include "core/impl.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst = act(src * scale[c] + bias[c]) element by element; dst has src's view and type. */
struct ocd_fused_affine {
    struct ocd_tensor_view v;
    const void *src;
    void *dst;
    struct ocd_tensor_view pv; /* scale and bias: 1 x C x 1 x 1 */
    const void *scale, *bias;  /* NULL: 1 and 0 */
    bool relu;
};

/* Per channel c, with m = count:
   training:  mean = ySum/m, var = ySqSum/m - mean^2, invStd = 1/sqrt(var + eps);
              savedMean = mean, savedInvStd = invStd (when given);
              running mean/var = (1 - f) * running + f * (mean, var * m / (m - 1)) (when given);
   inference: mean, var = the running ones, invStd = 1/sqrt(var + eps);
   both:      eqScale = scale * invStd, eqBias = bias - mean * eqScale. */
struct ocd_fused_bn_finalize {
    bool training;
    struct ocd_tensor_view stats_v; /* ySum, ySqSum (training) */
    const void *ysum, *ysqsum;
    struct ocd_tensor_view pv; /* scale, bias, saved and running statistics */
    const void *scale, *bias;
    void *saved_mean, *saved_invstd, *running_mean, *running_var; /* NULL: not written (read) */
    struct ocd_tensor_view eq_v;
    void *eq_scale, *eq_bias;
    int64_t count;
    double factor, epsilon;
};

cudnnStatus_t ocd_host_fused_affine(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_fused_bn_finalize(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_fused_affine(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_fused_bn_finalize(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_FUSED_OPS_H */
