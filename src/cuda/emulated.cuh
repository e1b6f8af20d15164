/* emulated.cuh: what the host stand-ins of device-only memory operations check (the branches of
   cp.async and of the bulk reductions that the CPU emulations run, tests/emulate): the alignment
   the hardware enforces. On the GPU a misaligned address faults ("misaligned address", an error
   that ends the CUDA context and every later call of the process), where the host's memcpy
   would not show it. The emulations are built with OCD_EMULATION (tests/CMakeLists.txt): there
   such an address ends the process with the file, line and operand; elsewhere the check
   compiles to nothing (the library never aborts). */
#ifndef OCD_CUDA_EMULATED_CUH
#define OCD_CUDA_EMULATED_CUH

#include <stdint.h>

#ifdef OCD_EMULATION
#include <stdio.h>
#include <stdlib.h>
#define OCD_EMULATED_ALIGNED(p, n)                                                                  \
    ((uintptr_t)(p) % (uintptr_t)(n) == 0                                                           \
         ? (void)0                                                                                  \
         : (fprintf(stderr, "%s:%d: %s is not %d-byte aligned, which the GPU faults on\n", __FILE__, \
                    __LINE__, #p, (int)(n)),                                                        \
            abort()))
#else
#define OCD_EMULATED_ALIGNED(p, n) ((void)0)
#endif

#endif /* OCD_CUDA_EMULATED_CUH */
