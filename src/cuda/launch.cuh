/* launch.cuh: launching a kernel that may start before the kernel ahead of it in the stream has
   finished (programmatic dependent launch: sm_90 and later, built with CUDA 12.3 or later, which
   also keeps such launches valid inside a stream capture; elsewhere an ordinary launch).

   An op made of kernels that follow one another (a reduction, its finish, an element pass)
   loses the time between them: the last blocks of one drain while the next is launched and its
   blocks ramp up. A kernel launched by ocd_launch with `early` may have its blocks start once
   every block of the kernel ahead has called ocd_let_next_start() (or exited); they run what
   does not depend on that kernel (loads of their own inputs), then call ocd_wait_ahead(), which
   returns once the kernel ahead has completed and its writes are visible. What a kernel
   launched early reads from the one ahead must come after its ocd_wait_ahead(), and it must not
   write what any kernel still ahead of it reads before that call either. Both device calls do
   nothing where the kernel was launched the ordinary way, and on devices before sm_90.

   An op's first kernel may be launched early too (the channels-last max-pooling backward): it
   follows a kernel it knows nothing of, the caller's or another op's, so it calls
   ocd_wait_ahead() before anything else, and ocd_let_next_start() only then, so that no kernel
   launched early after it starts before the kernel ahead of it has completed. Its blocks are
   then resident, waiting, while a kernel ahead that let them start (another call of the same op)
   drains, rather than launched once it has.

   Also here, what a launch of a kernel with much shared memory or of a cluster needs asked of
   the driver, once per kernel and device rather than every call (host time the latency goals
   cannot spare): ocd_smem_opt_in, ocd_active_clusters. */
#ifndef OCD_CUDA_LAUNCH_CUH
#define OCD_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>
#include <stdlib.h>

#include "cuda/check.cuh"

/* Launches kernel<<<grid, block, 0, stream>>>(args...), early where the device (compute
   capability cc_major), the toolkit and the stream allow it. Errors are left to
   cudaGetLastError, as a <<<>>> launch's are (OCD_CUDA_LAUNCHED). */
template <typename... Params, typename... Args>
static void ocd_launch(bool early, int cc_major, void (*kernel)(Params...), dim3 grid, dim3 block,
                       cudaStream_t stream, const Args &...args)
{
#if CUDART_VERSION >= 12030
    if (early && cc_major >= 9) {
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr.val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = grid;
        cfg.blockDim = block;
        cfg.stream = stream;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
        if (cudaLaunchKernelEx(&cfg, kernel, args...) == cudaSuccess) return;
        /* refused (a stream or capture that does not take it): the ordinary launch below, whose
           own error, if any, is the one reported */
        (void)cudaGetLastError();
    }
#else
    (void)early, (void)cc_major;
#endif
    kernel<<<grid, block, 0, stream>>>(args...);
}

/* The kernel launched early after this one may start its blocks (this block is resident). */
__device__ __forceinline__ void ocd_let_next_start()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Returns once the kernel ahead of this one (launched early) has completed, its writes visible. */
__device__ __forceinline__ void ocd_wait_ahead()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* The opt-in of `kernel` to `smem` bytes of dynamic shared memory above 48 KB (and, with
   non_portable, to clusters of more than 8 CTAs), made once per kernel and device (a bit each in
   *opted, the kernel's own). Two threads racing here both set the same values, which is
   harmless. */
template <typename Kernel>
static cudnnStatus_t ocd_smem_opt_in(Kernel kernel, size_t smem, bool non_portable, unsigned long long *opted,
                                     int device)
{
    const unsigned long long bit = device < 64 ? 1ull << device : 0; /* devices 0..63 */
    if ((smem > 48 * 1024 || non_portable) && !(__atomic_load_n(opted, __ATOMIC_ACQUIRE) & bit)) {
        if (non_portable) OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        if (smem > 48 * 1024)
            OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        __atomic_fetch_or(opted, bit, __ATOMIC_RELEASE);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* OPENCUDNN_TEST_CLUSTERS=n, a switch for tests only: every clustered kernel takes n as the
   clusters that fit the GPU at once instead of asking the driver (the emulations, which have no
   GPU to ask; 0 makes the clustered entries decline, as where none fits). False where unset. */
static inline bool ocd_test_clusters(int *clusters)
{
    const char *v = getenv("OPENCUDNN_TEST_CLUSTERS");
    if (v == NULL || *v == '\0') return false;
    *clusters = atoi(v);
    return true;
}

/* How many clusters of kernel's launch cfg fit the GPU at once (cudaOccupancyMaxActiveClusters,
   a host query of tens of microseconds: 0 where none does, as on a MIG slice or under an MPS
   limit smaller than a cluster's GPC needs), asked once per device (0 .. 63, kept in
   cache[device] plus one, so that 0 is kept too; other devices every call). Threads racing here
   store the same value. */
template <typename Kernel>
static cudnnStatus_t ocd_active_clusters(Kernel kernel, const cudaLaunchConfig_t &cfg, int device, int *cache,
                                         int *clusters)
{
    const bool keep = device >= 0 && device < 64;
    const int known = keep ? __atomic_load_n(&cache[device], __ATOMIC_ACQUIRE) : 0;
    if (known > 0) {
        *clusters = known - 1;
        return CUDNN_STATUS_SUCCESS;
    }
    OCD_CUDA_TRY(cudaOccupancyMaxActiveClusters(clusters, kernel, &cfg));
    *clusters = OCD_MAX(*clusters, 0);
    if (keep) __atomic_store_n(&cache[device], *clusters + 1, __ATOMIC_RELEASE);
    return CUDNN_STATUS_SUCCESS;
}

#endif /* OCD_CUDA_LAUNCH_CUH */
