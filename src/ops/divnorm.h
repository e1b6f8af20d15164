/* divnorm.h: the entry-layer helper of divisive normalization (validation of a call, both
   directions, and the run). The problem and the implementations are in problem/divnorm.h. */
#ifndef OCD_OPS_DIVNORM_H
#define OCD_OPS_DIVNORM_H

#include "core/impl.h"
#include "problem/divnorm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Validates a call (both directions) and runs it. */
cudnnStatus_t ocd_divnorm_run(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnDivNormMode_t mode,
                              const void *alpha, const void *beta, cudnnTensorDescriptor_t x_desc,
                              cudnnTensorDescriptor_t out_desc, struct ocd_divnorm_problem *p, const char *op);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_DIVNORM_H */
