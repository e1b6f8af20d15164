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
   drains, rather than launched once it has. */
#ifndef OCD_CUDA_LAUNCH_CUH
#define OCD_CUDA_LAUNCH_CUH

#include <cuda_runtime.h>

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

#endif /* OCD_CUDA_LAUNCH_CUH */
