/* lrn.h: the LRN problem, the window LRN and divisive normalization both use, and the
   declarations of the LRN implementations.

   Window: an element at position c (a channel for LRN, a coordinate of each spatial dimension
   for divisive normalization) sums over [c - behind, c + ahead] with behind = floor((n-1)/2) and
   ahead = n - behind - 1, so an even n looks one further ahead (cudnn_ops_infer.h). Positions
   outside the tensor count as zero. lrnAlpha is divided by n per windowed dimension.

   LRN forward, with s(c) = k + alpha/n * sum_{window(c)} x^2:
       r(c) = x(c) * s(c)^-beta
   LRN backward, the sum running over the j whose window holds c, i.e. [c - ahead, c + behind]:
       g(c) = dy(c) * s(c)^-beta - 2*alpha*beta/n * x(c) * sum_j dy(j) * x(j) * s(j)^(-beta-1)
   s is recomputed from x (y may have been blended). Both are blended: y = a*r + b*y. */
#ifndef OCD_PROBLEM_LRN_H
#define OCD_PROBLEM_LRN_H

#include "core/handle.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* ---- implementations (table in src/ops/lrn.c) ----------------------------------------------- */
cudnnStatus_t ocd_host_lrn(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_lrn(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_LRN_H */
