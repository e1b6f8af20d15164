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
int ocd_parallel_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_PARALLEL_H */
