/* scratch.cuh: device scratch owned by a CUDA handle, for kernels whose blocks must exchange data
   (partial results of a reduction split over blocks) in calls that take no workspace argument.

   It is allocated on first need, grows when a call needs more (both rare: the amounts are a few
   bytes per block, but for the gather kernel's split 16-bit filter gradient, 4 bytes an element
   of dw: 9.4 MB for a 3x3 512 -> 512 filter), and is freed by cudnnDestroy. A use brackets its
   launches with acquire and release; acquire orders the new use after the previous one even
   when the handle's stream changed in between, so that two uses never overlap, also inside a
   stream capture. A buffer a capture used is not freed when a larger one replaces it, since the
   graph keeps its address: it lives until cudnnDestroy. */
#ifndef OCD_CUDA_SCRATCH_CUH
#define OCD_CUDA_SCRATCH_CUH

#include "core/handle.h"

extern "C" {
/* At least `bytes` of scratch in *ptr, ready for work enqueued on the handle's stream. */
cudnnStatus_t ocd_cuda_scratch_acquire(cudnnHandle_t handle, size_t bytes, void **ptr);
/* Marks the end, on the handle's stream, of the work that uses the scratch. */
cudnnStatus_t ocd_cuda_scratch_release(cudnnHandle_t handle);
}

#endif /* OCD_CUDA_SCRATCH_CUH */
