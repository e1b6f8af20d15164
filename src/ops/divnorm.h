/* divnorm.h: the divisive-normalization problem (cudnnDivisiveNormalization*, mode
   PRECOMPUTED_MEANS), which takes its parameters from an LRN descriptor (ops/lrn.h).

   With u = x - means (means NULL: 0), a window of the LRN extent in every spatial dimension
   (d = 2 or 3 of them) and s(p) = k + alpha / n^d * sum_{window(p)} u^2:
       forward   r(p) = u(p) * s(p)^-beta
       backward  g(p) = dy(p) * s(p)^-beta
                        - 2*alpha*beta/n^d * u(p) * sum_{q: p in window(q)} dy(q) * u(q) * s(q)^(-beta-1)
   blended y = a*r + b*y, dx = a*g + b*dx, dMeans = -a*g + b*dMeans. Both run in three passes
   through the two x-shaped scratch tensors the API provides: temp = u; then temp2 = s (forward)
   or temp2 = dy * u * s^(-beta-1) (backward); then the output. An output may thus alias x or dy:
   the last pass reads them only at the element it writes. */
#ifndef OCD_OPS_DIVNORM_H
#define OCD_OPS_DIVNORM_H

#include "core/impl.h"
#include "core/tensor.h"

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

/* Implementations (src/host/divnorm.c, src/cuda/divnorm.cu). */
cudnnStatus_t ocd_divnorm_host_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                   size_t workspace_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_divnorm_cuda_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                   size_t workspace_bytes);
#endif

/* Validates a call (both directions) and runs it. */
cudnnStatus_t ocd_divnorm_run(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnDivNormMode_t mode,
                              const void *alpha, const void *beta, cudnnTensorDescriptor_t x_desc,
                              cudnnTensorDescriptor_t out_desc, struct ocd_divnorm_problem *p, const char *op);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_DIVNORM_H */
