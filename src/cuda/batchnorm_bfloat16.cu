/* batchnorm_bfloat16.cu: the normalization engine's kernels and their launcher (batchnorm.cuh) for
   bfloat16 data, in a file of their own so that the data types compile in parallel. */
#include "cuda/batchnorm.cuh"

template cudnnStatus_t ocd_bn::run_typed<__nv_bfloat16>(cudnnHandle_t, const struct ocd_bn_problem *, const ocd_bn::Plan *,
                                             void *);
