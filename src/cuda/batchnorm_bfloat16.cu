/* batchnorm_bfloat16.cu: the normalization engine's kernels and their launcher (batchnorm.cuh) for
   bfloat16 data, in a file of their own so that the data types compile in parallel. */
#include "cuda/batchnorm.cuh"

OCD_BN_RUN_TYPED(__nv_bfloat16);
