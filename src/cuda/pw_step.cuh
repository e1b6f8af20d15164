/* pw_step.cuh: one unary forward pointwise step (problem/pointwise.h's ocd_pw_apply) as a call
   from a kernel's epilogue, shared by the epilogues that take any activation in registers (the
   GEMM's, cuda/gemm.cuh, and the implicit-GEMM convolution's, cuda/conv_igemm.cuh). The step is
   a call, not inlined into each of a thread's stores, so that the epilogues without a step keep
   their code as it was. */
#ifndef OCD_CUDA_PW_STEP_CUH
#define OCD_CUDA_PW_STEP_CUH

#include "problem/pointwise.h"

template <typename Acc> __host__ __device__ __noinline__ Acc ocd_cuda_pw_step(const struct ocd_pw_step *s, Acc v)
{
    return ocd_pw_apply<Acc>(s, v, v);
}

#endif /* OCD_CUDA_PW_STEP_CUH */
