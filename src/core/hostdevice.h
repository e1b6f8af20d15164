/* hostdevice.h: writing a small function once for host C and for CUDA kernels.

   OCD_HD qualifies such a function: static inline in C, __host__ __device__ inline under nvcc.
   A function of a real number is declared `OCD_REAL_TEMPLATE OCD_HD OCD_R f(OCD_R x)`: in C,
   OCD_R is double; under nvcc the function is a template over OCD_R (float or double), so that
   device code computes in the storage type's compute type. The math library's overloads (exp,
   tanh, ...) pick the float or double version by argument type under nvcc. */
#ifndef OCD_CORE_HOSTDEVICE_H
#define OCD_CORE_HOSTDEVICE_H

#ifdef __CUDACC__
#define OCD_HD __host__ __device__ __forceinline__
#define OCD_REAL_TEMPLATE template <typename OCD_R>
#else
#include <math.h>
#define OCD_HD static inline
#define OCD_REAL_TEMPLATE
#define OCD_R double
#endif

#endif /* OCD_CORE_HOSTDEVICE_H */
