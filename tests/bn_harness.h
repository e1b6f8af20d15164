/* bn_harness.h: one batch-normalization case run end to end (inference, a few training steps
   with running averages, backward from the saved statistics and reserve space) through one of
   the three APIs that share the engine, each result checked against tests/ref/batchnorm.c. Used
   by tests/batchnorm.c and tests/normalization.c. */
#ifndef OCD_TESTS_BN_HARNESS_H
#define OCD_TESTS_BN_HARNESS_H

#include "tensors.h"

enum bn_api { BN_API_PLAIN, BN_API_EX, BN_API_NORM };

struct bn_case {
    enum bn_api api;
    cudnnDataType_t dtype;
    int rank, dims[5];
    int layout, out_layout;     /* of x, z, dy / of y, dx, dz */
    bool per_activation;
    bool persistent;            /* SPATIAL_PERSISTENT, or CUDNN_NORM_ALGO_PERSIST */
    int ops;                    /* cudnnBatchNormOps_t / cudnnNormOps_t */
    int act_mode;               /* with ops != 0 */
    double act_coef;            /* also the swish beta */
    double alpha, beta, alpha_param, beta_param;
    bool save, running, use_saved;
    bool slot_strided;          /* per-slot tensors with padded strides */
    bool no_workspace;          /* Ex / 8.x calls without a workspace */
    int steps;                  /* training steps (>= 1) */
};

/* A case with the usual defaults for the shape and type given. */
struct bn_case bn_case_default(enum bn_api api, cudnnDataType_t dtype, int rank, const int dims[]);
/* True when activation descriptors can be created in this build: the fused cases need one. */
bool bn_activations_exist(void);
/* Runs the case (a fused one only when activation descriptors exist); failures are recorded
   with a description of it. */
void bn_check_case(const struct bn_case *c);

#endif
