/* algorithm.h: what other sub-libraries use of the (deprecated) algorithm descriptors of
   ops/algorithm.c: cudnnSetRNNAlgorithmDescriptor takes the RNN algorithm one holds; the RNN
   Find calls fill performance objects. */
#ifndef OCD_OPS_ALGORITHM_H
#define OCD_OPS_ALGORITHM_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The algorithm a live algorithm descriptor holds; BAD_PARAM, logged, when algoDesc is not one
   or algorithm is NULL. */
cudnnStatus_t ocd_algorithm_get(cudnnAlgorithmDescriptor_t algoDesc, cudnnAlgorithm_t *algorithm);

/* What a Find call reports in a performance object: the algorithm (in a descriptor the object
   owns, made on first use, destroyed with the object), status, time and memory. */
cudnnStatus_t ocd_algorithm_perf_fill(cudnnAlgorithmPerformance_t perf, cudnnAlgorithm_t algorithm,
                                      cudnnStatus_t status, float time, size_t memory);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_ALGORITHM_H */
