/* hostdev.h: OCD_HOST_DEVICE marks a small inline function that the host backend and CUDA device
   code both call: the C compiler sees a static inline function, nvcc a __host__ __device__ one.
   Such functions are how the two backends share one definition of what must agree between
   them (the dropout random numbers, the spatial transformer's sampling geometry, the activation
   functions, the pooling windows).

   A function of a real number is declared `OCD_REAL_TEMPLATE OCD_HOST_DEVICE OCD_R f(OCD_R x)`:
   in C, OCD_R is double; under nvcc the function is a template over OCD_R (float or double), so
   that device code computes in the compute type of its data. The math library's overloads (exp,
   tanh, ...) then pick the float or the double version by argument type. */
#ifndef OCD_CORE_HOSTDEV_H
#define OCD_CORE_HOSTDEV_H

#ifdef __CUDACC__
#define OCD_HOST_DEVICE static __host__ __device__ __forceinline__
#define OCD_REAL_TEMPLATE template <typename OCD_R>
#else
#include <math.h>
#define OCD_HOST_DEVICE static inline
#define OCD_REAL_TEMPLATE
#define OCD_R double
#endif

#endif /* OCD_CORE_HOSTDEV_H */
