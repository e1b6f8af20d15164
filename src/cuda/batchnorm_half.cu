/* batchnorm_half.cu: the normalization engine's kernels and their launcher (batchnorm_kernels.cuh) for
   half data, in a file of their own so that the data types compile in parallel. */
#include "cuda/batchnorm_kernels.cuh"

OCD_BN_RUN_TYPED(__half);
