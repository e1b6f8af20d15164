/* resident.cuh: how many CTAs of a kernel are resident on a multiprocessor at once, for the
   kernels whose grid is that many CTAs looping over tiles (the few-channel convolution kernels of
   conv_stem*.cu), with the opt-in to more than 48 KB of dynamic shared memory that such a
   kernel needs. */
#ifndef OCD_CUDA_RESIDENT_CUH
#define OCD_CUDA_RESIDENT_CUH

#include "cuda/check.cuh"

#include <cuda_runtime.h>

/* The state one kernel keeps for ocd_cuda_ctas_per_sm: a bit per device opted in, and per
   device the answer for the last size asked (size << 32 | CTAs). Devices 0..63 are remembered;
   others ask the driver on every call. */
struct ocd_cuda_resident {
    unsigned long long opted, last[64];
};

/* CTAs of `kernel` (`threads` a block) resident on a multiprocessor of `device`, the current
   one, with smem bytes of dynamic shared memory, in *ctas (at least 1). The kernel is opted in
   to smem_max bytes once per device, so that launches of any size up to it fit, and a size asked
   before on the device makes no driver call. Threads racing here set and compute the same
   values, which is harmless. */
static inline cudnnStatus_t ocd_cuda_ctas_per_sm(const void *kernel, int threads, int smem_max, int device, int smem,
                                                 struct ocd_cuda_resident *st, int *ctas)
{
    const bool known = device >= 0 && device < 64;
    if (known) {
        const unsigned long long v = __atomic_load_n(&st->last[device], __ATOMIC_ACQUIRE);
        if (v != 0 && (int)(v >> 32) == smem) {
            *ctas = (int)(v & 0xffffffffu);
            return CUDNN_STATUS_SUCCESS;
        }
    }
    const unsigned long long bit = known ? 1ull << device : 0;
    if (!known || !(__atomic_load_n(&st->opted, __ATOMIC_ACQUIRE) & bit)) {
        OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_max));
        __atomic_fetch_or(&st->opted, bit, __ATOMIC_RELEASE);
    }
    int n = 0;
    OCD_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, (size_t)smem));
    *ctas = n < 1 ? 1 : n;
    if (known) __atomic_store_n(&st->last[device], (unsigned long long)smem << 32 | (unsigned)*ctas, __ATOMIC_RELEASE);
    return CUDNN_STATUS_SUCCESS;
}

#endif /* OCD_CUDA_RESIDENT_CUH */
