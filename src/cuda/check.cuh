/* check.cuh: the one way CUDA errors become statuses.

   OCD_CUDA_TRY(call) returns EXECUTION_FAILED (ALLOC_FAILED for out-of-memory), with a log line
   naming the call, the CUDA error and file:line, from the enclosing function when call fails.
   OCD_CUDA_LAUNCHED() does the same for the launch just made (cudaGetLastError). The library
   never aborts on a CUDA error. */
#ifndef OCD_CUDA_CHECK_CUH
#define OCD_CUDA_CHECK_CUH

#include <cuda_runtime.h>

#include "core/ocd.h"

static inline cudnnStatus_t ocd_cuda_status(cudaError_t err, const char *what, const char *func,
                                            const char *file, int line)
{
    cudnnStatus_t s = err == cudaErrorMemoryAllocation ? CUDNN_STATUS_ALLOC_FAILED
                                                       : CUDNN_STATUS_EXECUTION_FAILED;
    return ocd_fail(s, func, file, line, "%s: %s (%s)", what, cudaGetErrorName(err),
                    cudaGetErrorString(err));
}

#define OCD_CUDA_TRY(call)                                                                      \
    do {                                                                                        \
        cudaError_t ocd_cuda_err_ = (call);                                                     \
        if (ocd_cuda_err_ != cudaSuccess)                                                       \
            return ocd_cuda_status(ocd_cuda_err_, #call, __func__, __FILE__, __LINE__);         \
    } while (0)

#define OCD_CUDA_LAUNCHED() OCD_CUDA_TRY(cudaGetLastError())

#endif /* OCD_CUDA_CHECK_CUH */
