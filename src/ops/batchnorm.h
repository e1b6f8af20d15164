/* batchnorm.h: the one normalization engine behind batch normalization (cudnnBatchNormalization*)
   and the 8.x normalization API (cudnnNormalization*): they compute the same thing, so both API
   files only translate their arguments into a struct ocd_bn_args and call ocd_bn_run.

   Terms. A "slot" is one set of parameters (scale, bias, mean, variance): one per channel in the
   spatial / per-channel modes, one per (c, d, h, w) in the per-activation modes. The M elements
   that share a slot are "reduced" together (over N, D, H, W or over N alone). Forward, a slot's
   normalization is y = a * x + b with a = scale * invstd, b = bias - mean * a; with the fused ops
   the pre-activation pre = a * x + b (+ z) goes through the activation, and the result is
   blended, y = alpha * act(pre) + beta * y. Backward, with dp = dy * act'(pre):
       dbias = sum dp,  dscale = invstd * sum dp * (x - mean),
       dx = A * dp + B * x + C,   A = scale * invstd,  B = -A * invstd * dscale_hat / M ... (see
   ocd_bn_backward_coefs), and dz = dp; all blended with their alpha/beta pairs.

   The reserve space of the fused-activation ops holds pre, in x's type, dense in x's dimension
   order; backward takes act'(pre) from it (z is not an argument of backward). */
#ifndef OCD_OPS_BATCHNORM_H
#define OCD_OPS_BATCHNORM_H

#include <math.h>

#include "core/activation_desc.h"
#include "core/hostdev.h"
#include "core/impl.h"
#include "core/tensor.h"
#include "ops/activation.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ocd_bn_dir { OCD_BN_INFERENCE, OCD_BN_TRAINING, OCD_BN_BACKWARD };

/* Same values as cudnnBatchNormOps_t and cudnnNormOps_t. */
enum ocd_bn_ops { OCD_BN_OPS_NORM = 0, OCD_BN_OPS_ACT = 1, OCD_BN_OPS_ADD_ACT = 2 };

/* What an API entry passes to the engine: its arguments, untouched but for the mode. NULL
   descriptors and pointers stand for arguments the call does not have. */
struct ocd_bn_args {
    enum ocd_bn_dir dir;
    bool per_activation;
    int ops;                    /* enum ocd_bn_ops */
    bool persist;               /* CUDNN_NORM_ALGO_PERSIST: saved statistics required backward */
    cudnnActivationDescriptor_t act_desc;
    const void *alpha, *beta;             /* y (dx backward) */
    const void *alpha_param, *beta_param; /* dscale, dbias (backward) */
    cudnnTensorDescriptor_t x_desc, y_desc, z_desc, dy_desc, dx_desc, dz_desc;
    cudnnTensorDescriptor_t param_desc; /* scale, bias, dscale, dbias */
    cudnnTensorDescriptor_t stat_desc;  /* means, variances, saved statistics */
    const void *x, *z, *dy, *y_in;      /* y_in: backward's y (forward output), checked only */
    void *y, *dx, *dz;
    const void *scale, *bias;
    void *dscale, *dbias;
    const void *est_mean, *est_var;     /* inference */
    void *run_mean, *run_var;           /* training */
    void *save_mean, *save_invstd;      /* training outputs */
    const void *saved_mean, *saved_invstd; /* backward inputs */
    double epsilon, factor;
    void *workspace, *reserve;
    size_t workspace_bytes, reserve_bytes;
};

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

/* Validates the arguments (BAD_PARAM / NOT_SUPPORTED, nothing written) and runs the problem.
   op names the API function in the log. */
cudnnStatus_t ocd_bn_run(cudnnHandle_t handle, const struct ocd_bn_args *args, const char *op);

/* The workspace size of a training or backward problem, for the size queries: the arguments
   are validated as ocd_bn_run would, except that data pointers are not needed. */
cudnnStatus_t ocd_bn_workspace_size(cudnnHandle_t handle, const struct ocd_bn_args *args,
                                    const char *op, size_t *size);

/* The reserve-space size of a training problem: one x-sized tensor of pre-activations for the
   fused-activation ops, nothing for plain normalization. */
cudnnStatus_t ocd_bn_reserve_size(cudnnHandle_t handle, const struct ocd_bn_args *args,
                                  const char *op, size_t *size);

/* Runs a problem its caller built and checked (the graph API's BN_BWD_WEIGHTS builds one from
   graph tensors at plan time) through the implementation table; the workspace of the entry that
   would run it now (its data pointers may still be NULL). */
cudnnStatus_t ocd_bn_run_problem(cudnnHandle_t handle, const struct ocd_bn_problem *p, void *workspace,
                                 size_t workspace_bytes, const char *op);
size_t ocd_bn_problem_workspace(cudnnHandle_t handle, const struct ocd_bn_problem *p, const char *op);

/* cudnnBatchNormMode_t as the engine takes it (SPATIAL_PERSISTENT computes what SPATIAL does);
   BAD_PARAM for an invalid enumerant. */
cudnnStatus_t ocd_bn_mode(cudnnBatchNormMode_t mode, bool *per_activation);

/* cudnnBatchNormOps_t / cudnnNormOps_t: BAD_PARAM for an invalid enumerant. */
cudnnStatus_t ocd_bn_ops(int ops);

/* The 8.x normalization API's own arguments (normalization.c): validates mode and ops
   (BAD_PARAM), algorithm and groupCnt (NOT_SUPPORTED), and sets per_activation, ops and
   persist in args. */
cudnnStatus_t ocd_norm_prepare(cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps,
                               cudnnNormAlgo_t algo, int groupCnt, struct ocd_bn_args *args);

/* Fills a created descriptor with the shape and type of the per-slot tensors for an x of
   rank 4 or 5: 1xCx1x1(x1) or 1xCxHxW / 1xCxDxHxW, float for half and bfloat16 x, else x's type. */
cudnnStatus_t ocd_bn_derive(cudnnTensorDescriptor_t derived, cudnnTensorDescriptor_t x_desc,
                            bool per_activation);

/* Backward, per slot: given invstd, scale, M and the sums sdp = sum dp and sdpx = sum dp*(x-mean),
   the coefficients of dx = A*dp + B*x + C before blending. */
#define OCD_BN_BACKWARD_COEFS(T, mean, invstd, scale, M, sdp, sdpx, A, B, C)                    \
    do {                                                                                        \
        (A) = (scale) * (invstd);                                                               \
        (B) = -(A) * (invstd) * (invstd) * (sdpx) / (T)(M);                                     \
        (C) = -(A) * (sdp) / (T)(M) - (B) * (mean);                                             \
    } while (0)

/* Implementations (src/host/batchnorm.c, src/cuda/batchnorm.cu), listed in batchnorm.c's table.
   The CUDA entries differ in how they walk the tensors: channels last (the slots are the
   contiguous dimension: NHWC, or any dense x per activation), its flat case first (the rows at
   one stride, whole 16-byte vectors, aligned pointers: packed NHWC), channels first (each
   channel is runs of contiguous spatial elements: NCHW), and strided (anything else). Their workspace holds
   per-block partial sums; a call given less runs on the handle's scratch (cuda/scratch.cuh). */
cudnnStatus_t ocd_bn_host_run(cudnnHandle_t handle, const void *problem, void *workspace,
                              size_t workspace_bytes);
#ifdef OCD_HAVE_CUDA
const char *ocd_bn_cuda_applies_flat(cudnnHandle_t handle, const void *problem);
const char *ocd_bn_cuda_applies_channels_last(cudnnHandle_t handle, const void *problem);
const char *ocd_bn_cuda_applies_channels_first(cudnnHandle_t handle, const void *problem);
size_t ocd_bn_cuda_workspace_flat(cudnnHandle_t handle, const void *problem);
size_t ocd_bn_cuda_workspace_channels_last(cudnnHandle_t handle, const void *problem);
size_t ocd_bn_cuda_workspace_channels_first(cudnnHandle_t handle, const void *problem);
size_t ocd_bn_cuda_workspace_strided(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_bn_cuda_run_flat(cudnnHandle_t handle, const void *problem, void *workspace,
                                   size_t workspace_bytes);
cudnnStatus_t ocd_bn_cuda_run_channels_last(cudnnHandle_t handle, const void *problem,
                                            void *workspace, size_t workspace_bytes);
cudnnStatus_t ocd_bn_cuda_run_channels_first(cudnnHandle_t handle, const void *problem,
                                             void *workspace, size_t workspace_bytes);
cudnnStatus_t ocd_bn_cuda_run_strided(cudnnHandle_t handle, const void *problem, void *workspace,
                                      size_t workspace_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_BATCHNORM_H */
