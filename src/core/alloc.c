/* alloc.c: the library's allocation helpers and their fault-injection hook (see alloc.h).

   Per kind, two atomics: the allocations counted since the hook was last set, and the number of
   the one to fail (0: none). While no fault is armed the count is not kept either, so the cost of
   an allocation is one relaxed load. */
#include "core/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>

static atomic_long armed[OCD_ALLOC_KINDS];   /* the allocation number to fail; 0: off */
static atomic_long counted[OCD_ALLOC_KINDS]; /* allocations since ocd_alloc_fault_set */
static atomic_bool counting[OCD_ALLOC_KINDS];

bool ocd_alloc_fault(enum ocd_alloc_kind kind)
{
    if (!atomic_load_explicit(&counting[kind], memory_order_relaxed)) return false;
    long n = atomic_fetch_add(&counted[kind], 1) + 1;
    return n == atomic_load(&armed[kind]);
}

long ocd_alloc_fault_set(enum ocd_alloc_kind kind, long nth)
{
    if ((unsigned)kind >= OCD_ALLOC_KINDS) return -1;
    long before = atomic_exchange(&counted[kind], 0);
    atomic_store(&armed[kind], nth > 0 ? nth : 0);
    atomic_store(&counting[kind], nth > 0);
    return before;
}

void *ocd_malloc(size_t bytes)
{
    return ocd_alloc_fault(OCD_ALLOC_HOST) ? NULL : malloc(bytes);
}

void *ocd_calloc(size_t count, size_t size)
{
    return ocd_alloc_fault(OCD_ALLOC_HOST) ? NULL : calloc(count, size);
}
