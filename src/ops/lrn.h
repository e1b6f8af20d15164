/* lrn.h: the LRN descriptor (shared by LRN and divisive normalization), the LRN problem, and the
   window both ops use.

   Window: an element at position c (a channel for LRN, a coordinate of each spatial dimension
   for divisive normalization) sums over [c - behind, c + ahead] with behind = floor((n-1)/2) and
   ahead = n - behind - 1, so an even n looks one further ahead (cudnn_ops_infer.h). Positions
   outside the tensor count as zero. lrnAlpha is divided by n per windowed dimension.

   LRN forward, with s(c) = k + alpha/n * sum_{window(c)} x^2:
       r(c) = x(c) * s(c)^-beta
   LRN backward, the sum running over the j whose window holds c, i.e. [c - ahead, c + behind]:
       g(c) = dy(c) * s(c)^-beta - 2*alpha*beta/n * x(c) * sum_j dy(j) * x(j) * s(j)^(-beta-1)
   s is recomputed from x (y may have been blended). Both are blended: y = a*r + b*y. */
#ifndef OCD_OPS_LRN_H
#define OCD_OPS_LRN_H

#include "core/argcheck.h"
#include "core/impl.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cudnnLRNStruct {
    struct ocd_object obj;
    unsigned n;
    double alpha, beta, k;
};

static inline void ocd_lrn_window(unsigned n, int *behind, int *ahead)
{
    *behind = (int)(n - 1) / 2;
    *ahead = (int)n - *behind - 1;
}

struct ocd_lrn_problem {
    bool backward;
    unsigned n;
    double lrn_alpha, lrn_beta, lrn_k;
    cudnnDataType_t dtype;
    struct ocd_tensor_view x, y, dy, dx; /* forward: x -> y; backward: x, dy -> dx */
    const void *x_ptr, *dy_ptr;
    void *y_ptr, *dx_ptr;
    double alpha, beta;
};

/* Checks an LRN descriptor argument: live (BAD_PARAM). Shared with divisive normalization. */
cudnnStatus_t ocd_lrn_get(cudnnLRNDescriptor_t desc, const struct cudnnLRNStruct **out);

/* The checks of an LRN call before its tensors: handle, descriptor, mode, alpha and beta; fills
   the descriptor's parameters into p. */
cudnnStatus_t ocd_lrn_prepare(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnLRNMode_t mode,
                              const void *alpha, const void *beta, struct ocd_lrn_problem *p);

/* A tensor argument of an LRN call. */
struct ocd_lrn_tensor {
    cudnnTensorDescriptor_t desc;
    const void *ptr;
    const char *name;
    struct ocd_tensor_view *view; /* filled */
    enum ocd_read read;           /* how the output reads it (inputs only): ocd_check_alias */
};

/* The documented rules over an LRN call's tensors (x first, the output last); fills the views,
   the data type and the blending factors of p. */
cudnnStatus_t ocd_lrn_check_tensors(const struct ocd_lrn_tensor *t, int count, const void *alpha,
                                    const void *beta, struct ocd_lrn_problem *p);

/* Runs a validated LRN problem through the implementation table. */
cudnnStatus_t ocd_lrn_run(cudnnHandle_t handle, const struct ocd_lrn_problem *p, const char *op);

/* Implementations (src/host/lrn.c, src/cuda/lrn.cu). */
cudnnStatus_t ocd_lrn_host_run(cudnnHandle_t handle, const void *problem, void *workspace,
                               size_t workspace_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_lrn_cuda_run(cudnnHandle_t handle, const void *problem, void *workspace,
                               size_t workspace_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_LRN_H */
