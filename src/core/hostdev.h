/* hostdev.h: OCD_HOST_DEVICE marks a small inline function that the host backend and CUDA device
   code both call: the C compiler sees a static inline function, nvcc a __host__ __device__ one.
   Such functions are how the two backends share one definition of what must agree between
   them (the dropout random numbers, the spatial transformer's sampling geometry). */
#ifndef OCD_CORE_HOSTDEV_H
#define OCD_CORE_HOSTDEV_H

#ifdef __CUDACC__
#define OCD_HOST_DEVICE static __host__ __device__ __forceinline__
#else
#define OCD_HOST_DEVICE static inline
#endif

#endif /* OCD_CORE_HOSTDEV_H */
