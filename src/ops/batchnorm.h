/* batchnorm.h: the entry layer of the normalization engine behind batch normalization
   (cudnnBatchNormalization*) and the 8.x normalization API (cudnnNormalization*): they compute
   the same thing, so both API files only translate their arguments into a struct ocd_bn_args and
   call ocd_bn_run, which validates them into the problem of problem/batchnorm.h (where the terms,
   the math and the implementations are). */
#ifndef OCD_OPS_BATCHNORM_H
#define OCD_OPS_BATCHNORM_H

#include "problem/batchnorm.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_BATCHNORM_H */
