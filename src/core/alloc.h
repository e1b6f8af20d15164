/* alloc.h: every allocation the library makes, host or device, passes here, so that a test can
   make any one of them fail (DESIGN.md, STYLE.md practice 14: failures are injected and tested).

   Host memory: ocd_malloc and ocd_calloc stand for malloc and calloc (free stays free). Device
   memory: the CUDA backend asks ocd_alloc_fault(OCD_ALLOC_DEVICE) before each cudaMalloc. The hook
   costs one relaxed atomic load per allocation while it is off. */
#ifndef OCD_CORE_ALLOC_H
#define OCD_CORE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ocd_alloc_kind { OCD_ALLOC_HOST, OCD_ALLOC_DEVICE, OCD_ALLOC_KINDS };

void *ocd_malloc(size_t bytes);
void *ocd_calloc(size_t count, size_t size);

/* Counts one allocation of that kind; true when the hook says that this one must fail. */
bool ocd_alloc_fault(enum ocd_alloc_kind kind);

/* The test hook (tests/alloc_fault.c reaches it by dlsym): from now on, allocation number nth of
   that kind (1: the next one) fails, once; nth = 0 switches the hook off. Returns how many
   allocations of that kind were made since the previous call, so that a sweep over nth knows when
   nth has passed the last allocation a call makes. */
long ocd_alloc_fault_set(enum ocd_alloc_kind kind, long nth);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_ALLOC_H */
