/* scratch.cuh: a device buffer each CUDA handle keeps for the calls that need scratch memory and
   have no workspace argument (the batch-normalization calls without Ex: their per-channel
   reductions need room for the partial sums of many blocks).

   The buffer is allocated on first use, grown when a call needs more (cudaFree then cudaMalloc,
   which synchronize the device), and freed with the handle. Use is ordered on the handle's
   stream; when a call runs on another stream than the last user, it first waits (an event) for
   the work already queued on the old one. A call takes the buffer with ocd_cuda_scratch and,
   once its kernels are queued, marks the end of its use with ocd_cuda_scratch_done. */
#ifndef OCD_CUDA_SCRATCH_CUH
#define OCD_CUDA_SCRATCH_CUH

#include "core/handle.h"

extern "C" {
cudnnStatus_t ocd_cuda_scratch(cudnnHandle_t handle, size_t bytes, void **ptr);
cudnnStatus_t ocd_cuda_scratch_done(cudnnHandle_t handle);
}

#endif /* OCD_CUDA_SCRATCH_CUH */
