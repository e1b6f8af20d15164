/* parallel.c: a small fixed pool of worker threads for the host backend (see parallel.h). */
#include "host/parallel.h"

#include "core/platform.h"

#include <stdatomic.h>
#include <stdlib.h>

#define MAX_THREADS 256

static ocd_once_t pool_once = OCD_ONCE_INIT;
static ocd_mutex_t job_lock = OCD_MUTEX_INIT; /* held by the caller of a job */
static ocd_mutex_t state_lock = OCD_MUTEX_INIT;
static ocd_cond_t work_ready = OCD_COND_INIT;
static ocd_cond_t work_done = OCD_COND_INIT;
static int nthreads = 1; /* including the caller */

/* The current job, under state_lock. */
static ocd_range_fn job_fn;
static void *job_ctx;
static int64_t job_n, job_chunk, job_next, job_chunks_left;
static unsigned long job_generation;

/* Takes chunks of job `generation` until none is left; a thread that comes back after the job
   ended (and another began) sees the new generation and stops. */
static void run_chunks(unsigned long generation, ocd_range_fn fn, void *ctx, int64_t n, int64_t chunk)
{
    for (;;) {
        ocd_mutex_lock(&state_lock);
        int64_t begin = job_generation == generation ? job_next : n;
        if (begin < n) job_next += chunk;
        ocd_mutex_unlock(&state_lock);
        if (begin >= n) return;
        fn(ctx, begin, OCD_MIN(begin + chunk, n));
        ocd_mutex_lock(&state_lock);
        if (--job_chunks_left == 0) ocd_cond_broadcast(&work_done);
        ocd_mutex_unlock(&state_lock);
    }
}

static void worker(void *arg)
{
    (void)arg;
    unsigned long seen = 0;
    for (;;) {
        ocd_mutex_lock(&state_lock);
        while (job_generation == seen) ocd_cond_wait(&work_ready, &state_lock);
        seen = job_generation;
        ocd_range_fn fn = job_fn;
        void *ctx = job_ctx;
        int64_t n = job_n, chunk = job_chunk;
        ocd_mutex_unlock(&state_lock);
        run_chunks(seen, fn, ctx, n, chunk);
    }
}

static void start_pool(void)
{
    int want = ocd_processor_count();
    const char *env = getenv("OPENCUDNN_NUM_THREADS");
    if (env != NULL && atoi(env) > 0) want = atoi(env);
    if (want > MAX_THREADS) want = MAX_THREADS;
    int started = 1;
    for (int i = 1; i < want; i++) {
        if (!ocd_thread_start(worker, NULL)) break; /* fewer threads, still correct */
        started++;
    }
    nthreads = started;
}

int ocd_parallel_threads(void)
{
    ocd_once(&pool_once, start_pool);
    return nthreads;
}

void ocd_parallel_for(int64_t n, int64_t grain, ocd_range_fn fn, void *ctx)
{
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int threads = ocd_parallel_threads();
    if (threads == 1 || n <= grain || !ocd_mutex_trylock(&job_lock)) {
        fn(ctx, 0, n);
        return;
    }
    /* A few chunks per thread balance uneven work without much locking. */
    int64_t chunk = OCD_MAX(grain, (n + threads * 4 - 1) / (threads * 4));
    ocd_mutex_lock(&state_lock);
    job_fn = fn;
    job_ctx = ctx;
    job_n = n;
    job_chunk = chunk;
    job_next = 0;
    job_chunks_left = (n + chunk - 1) / chunk;
    unsigned long generation = ++job_generation;
    ocd_cond_broadcast(&work_ready);
    ocd_mutex_unlock(&state_lock);
    run_chunks(generation, fn, ctx, n, chunk);
    ocd_mutex_lock(&state_lock);
    while (job_chunks_left > 0) ocd_cond_wait(&work_done, &state_lock);
    ocd_mutex_unlock(&state_lock);
    ocd_mutex_unlock(&job_lock);
}

/* ---- per-thread scratch ------------------------------------------------------------------------ */

/* At most `threads` chunks run at once (the pool's threads and the caller), so one slot per thread
   always leaves a free one for a chunk that starts. */
struct scratch_job {
    ocd_range_scratch_fn fn;
    void *ctx;
    char *mem;
    size_t stride;
    int slots;
    atomic_bool *busy;
};

static void scratch_chunk(void *ctx, int64_t begin, int64_t end)
{
    struct scratch_job *j = ctx;
    int slot = 0;
    while (atomic_exchange(&j->busy[slot], true)) slot = (slot + 1) % j->slots;
    j->fn(j->ctx, begin, end, j->mem + (size_t)slot * j->stride);
    atomic_store(&j->busy[slot], false);
}

static size_t scratch_stride(size_t bytes)
{
    return (bytes + 63) & ~(size_t)63;
}

size_t ocd_parallel_scratch_block_bytes(size_t bytes)
{
    size_t slots = (size_t)ocd_parallel_threads();
    /* 64 bytes for the alignment of the first slot, then the busy flags */
    return 64 + scratch_stride(bytes) * slots + sizeof(atomic_bool) * slots;
}

bool ocd_parallel_for_scratch_in(void *block, int64_t n, int64_t grain, size_t bytes, ocd_range_scratch_fn fn,
                                 void *ctx)
{
    if (n <= 0) return true;
    char *owned = NULL;
    if (block == NULL && (block = owned = ocd_malloc(ocd_parallel_scratch_block_bytes(bytes))) == NULL) return false;
    int slots = ocd_parallel_threads();
    size_t stride = scratch_stride(bytes);
    char *mem = (char *)block + (64 - (uintptr_t)block % 64) % 64;
    struct scratch_job j = {fn, ctx, mem, stride, slots, (atomic_bool *)(mem + stride * (size_t)slots)};
    for (int i = 0; i < slots; i++) atomic_init(&j.busy[i], false);
    ocd_parallel_for(n, grain, scratch_chunk, &j);
    free(owned);
    return true;
}

bool ocd_parallel_for_scratch(int64_t n, int64_t grain, size_t bytes, ocd_range_scratch_fn fn, void *ctx)
{
    return ocd_parallel_for_scratch_in(NULL, n, grain, bytes, fn, ctx);
}
