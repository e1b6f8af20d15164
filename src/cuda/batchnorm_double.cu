/* batchnorm_double.cu: the normalization engine's kernels and their launcher (batchnorm.cuh) for
   double data, in a file of their own so that the data types compile in parallel. */
#include "cuda/batchnorm.cuh"

OCD_BN_RUN_TYPED(double);
