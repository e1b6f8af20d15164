/* parallel.h: the host backend's worker threads.

   ocd_parallel_for splits [0, n) into contiguous chunks and runs fn on them in the pool's
   threads and the caller's; it returns when all are done. One job runs at a time: a caller that
   finds the pool busy (another handle on another thread) runs its job alone, inline, rather than
   waiting. OPENCUDNN_NUM_THREADS caps the threads (default: the online processors). */
#ifndef OCD_HOST_PARALLEL_H
#define OCD_HOST_PARALLEL_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*ocd_range_fn)(void *ctx, int64_t begin, int64_t end);

/* grain: the smallest chunk worth a thread (in units of the range). */
void ocd_parallel_for(int64_t n, int64_t grain, ocd_range_fn fn, void *ctx);

/* As ocd_parallel_for, for work that needs `bytes` of scratch memory per thread: the scratch of
   every thread that may run a chunk is allocated before any chunk runs, and each chunk gets one
   that no other running chunk holds (64-byte aligned). Returns false, having run nothing, when
   that memory cannot be allocated: a failure can never leave an output half written. */
typedef void (*ocd_range_scratch_fn)(void *ctx, int64_t begin, int64_t end, void *scratch);
bool ocd_parallel_for_scratch(int64_t n, int64_t grain, size_t bytes, ocd_range_scratch_fn fn, void *ctx);

/* The same with memory the caller keeps: block holds ocd_parallel_scratch_block_bytes(bytes), and
   nothing is allocated; a NULL block is allocated as above. */
size_t ocd_parallel_scratch_block_bytes(size_t bytes);
bool ocd_parallel_for_scratch_in(void *block, int64_t n, int64_t grain, size_t bytes, ocd_range_scratch_fn fn,
                                 void *ctx);
int ocd_parallel_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_PARALLEL_H */
