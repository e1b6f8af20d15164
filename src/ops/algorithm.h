/* algorithm.h: what other sub-libraries read of the (deprecated) algorithm descriptors of
   ops/algorithm.c: cudnnSetRNNAlgorithmDescriptor takes the RNN algorithm one holds. */
#ifndef OCD_OPS_ALGORITHM_H
#define OCD_OPS_ALGORITHM_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The algorithm a live algorithm descriptor holds; BAD_PARAM, logged, when algoDesc is not one
   or algorithm is NULL. */
cudnnStatus_t ocd_algorithm_get(cudnnAlgorithmDescriptor_t algoDesc, cudnnAlgorithm_t *algorithm);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_ALGORITHM_H */
