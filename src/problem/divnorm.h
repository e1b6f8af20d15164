/* divnorm.h: the divisive-normalization problem (cudnnDivisiveNormalization*, mode
   PRECOMPUTED_MEANS), which takes its parameters from an LRN descriptor and its window from
   problem/lrn.h, and the declarations of its implementations.

   With u = x - means (means NULL: 0), a window of the LRN extent in every spatial dimension
   (d = 2 or 3 of them) and s(p) = k + alpha / n^d * sum_{window(p)} u^2:
       forward   r(p) = u(p) * s(p)^-beta
       backward  g(p) = dy(p) * s(p)^-beta
                        - 2*alpha*beta/n^d * u(p) * sum_{q: p in window(q)} dy(q) * u(q) * s(q)^(-beta-1)
   blended y = a*r + b*y, dx = a*g + b*dx, dMeans = -a*g + b*dMeans. Both run in three passes
   through the two x-shaped scratch tensors the API provides: temp = u; then temp2 = s (forward)
   or temp2 = dy * u * s^(-beta-1) (backward); then the output. An output may thus alias x or dy:
   the last pass reads them only at the element it writes. */
#ifndef OCD_PROBLEM_DIVNORM_H
#define OCD_PROBLEM_DIVNORM_H

#include "problem/lrn.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_divnorm_problem {
    bool backward;
    unsigned n;
    double lrn_alpha, lrn_beta, lrn_k;
    cudnnDataType_t dtype;
    struct ocd_tensor_view x;   /* x, means, dy, temp, temp2 */
    struct ocd_tensor_view out; /* y forward; dx and dMeans backward (x's strides) */
    const void *x_ptr, *means, *dy_ptr;
    void *temp, *temp2, *out_ptr, *dmeans;
    double alpha, beta;
};

/* ---- implementations (table in src/ops/divnorm.c) ------------------------------------------- */
cudnnStatus_t ocd_host_divnorm(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_divnorm(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_DIVNORM_H */
