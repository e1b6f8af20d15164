/* batchnorm.h: the problem of the normalization engine behind batch normalization
   (cudnnBatchNormalization*) and the 8.x normalization API (cudnnNormalization*), the backward
   coefficients both backends share, and the declarations of the implementations.

   Terms. A "slot" is one set of parameters (scale, bias, mean, variance): one per channel in the
   spatial / per-channel modes, one per (c, d, h, w) in the per-activation modes. The M elements
   that share a slot are "reduced" together (over N, D, H, W or over N alone). Forward, a slot's
   normalization is y = a * x + b with a = scale * invstd, b = bias - mean * a; with the fused ops
   the pre-activation pre = a * x + b (+ z) goes through the activation, and the result is
   blended, y = alpha * act(pre) + beta * y. Backward, with dp = dy * act'(pre):
       dbias = sum dp,  dscale = invstd * sum dp * (x - mean),
       dx = A * dp + B * x + C,   A = scale * invstd,  B = -A * invstd * dscale_hat / M ... (see
   OCD_BN_BACKWARD_COEFS), and dz = dp; all blended with their alpha/beta pairs.

   The reserve space of the fused-activation ops holds pre, in x's type, dense in x's dimension
   order; backward takes act'(pre) from it (z is not an argument of backward). */
#ifndef OCD_PROBLEM_BATCHNORM_H
#define OCD_PROBLEM_BATCHNORM_H

#include <math.h>

#include "core/activation_desc.h"
#include "core/hostdev.h"
#include "core/impl.h"
#include "core/tensor.h"
#include "problem/activation.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ocd_bn_dir { OCD_BN_INFERENCE, OCD_BN_TRAINING, OCD_BN_BACKWARD };

/* Same values as cudnnBatchNormOps_t and cudnnNormOps_t. */
enum ocd_bn_ops { OCD_BN_OPS_NORM = 0, OCD_BN_OPS_ACT = 1, OCD_BN_OPS_ADD_ACT = 2 };

/* The validated problem the implementations take. */
struct ocd_bn_problem {
    enum ocd_bn_dir dir;
    bool per_activation;
    int ops;
    cudnnActivationMode_t act_mode; /* meaningful when ops != NORM */
    cudnnNanPropagation_t act_nan;
    double act_coef, act_swish;
    cudnnDataType_t dtype;          /* of x, y, z, dy, dx, dz, reserve */
    cudnnDataType_t ptype;          /* of every per-slot tensor: float, or double for double data */
    struct ocd_tensor_view x, y, z, dy, dx, dz, param, stat, reserve;
    const void *x_ptr, *z_ptr, *dy_ptr;
    void *y_ptr, *dx_ptr, *dz_ptr, *reserve_ptr; /* reserve_ptr: NULL unless ops != NORM */
    const void *scale, *bias;
    void *dscale, *dbias;
    const void *est_mean, *est_var;
    void *run_mean, *run_var, *save_mean, *save_invstd;
    const void *saved_mean, *saved_invstd;
    double alpha, beta, alpha_param, beta_param;
    double epsilon, factor;
    int64_t slots;   /* K: C, or C*D*H*W per activation */
    int64_t reduced; /* M: elements per slot */
};

/* Backward, per slot: given invstd, scale, M and the sums sdp = sum dp and sdpx = sum dp*(x-mean),
   the coefficients of dx = A*dp + B*x + C before blending. */
#define OCD_BN_BACKWARD_COEFS(T, mean, invstd, scale, M, sdp, sdpx, A, B, C)                    \
    do {                                                                                        \
        (A) = (scale) * (invstd);                                                               \
        (B) = -(A) * (invstd) * (invstd) * (sdpx) / (T)(M);                                     \
        (C) = -(A) * (sdp) / (T)(M) - (B) * (mean);                                             \
    } while (0)

/* Implementations (src/host/batchnorm.c, src/cuda/batchnorm.cu), listed in ops/batchnorm.c's
   table. The CUDA entries differ in how they walk the tensors: channels last (the slots are the
   contiguous dimension: NHWC, or any dense x per activation), its flat case first (the rows at
   one stride, whole 16-byte vectors, aligned pointers: packed NHWC), channels first (each
   channel is runs of contiguous spatial elements: NCHW), and strided (anything else). Their
   workspace holds per-block partial sums; a call given less runs on the handle's scratch
   (cuda/scratch.cuh). */
cudnnStatus_t ocd_host_bn(cudnnHandle_t handle, const void *problem, void *workspace,
                          size_t workspace_bytes);
#ifdef OCD_HAVE_CUDA
const char *ocd_cuda_bn_flat_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_bn_channels_last_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_cuda_bn_channels_first_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_bn_flat_workspace(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_bn_channels_last_workspace(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_bn_channels_first_workspace(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_bn_strided_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_bn_flat(cudnnHandle_t handle, const void *problem, void *workspace,
                               size_t workspace_bytes);
cudnnStatus_t ocd_cuda_bn_channels_last(cudnnHandle_t handle, const void *problem, void *workspace,
                                        size_t workspace_bytes);
cudnnStatus_t ocd_cuda_bn_channels_first(cudnnHandle_t handle, const void *problem, void *workspace,
                                         size_t workspace_bytes);
cudnnStatus_t ocd_cuda_bn_strided(cudnnHandle_t handle, const void *problem, void *workspace,
                                  size_t workspace_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_BATCHNORM_H */
