/* parallel.c: a small fixed pool of worker threads for the host backend (see parallel.h). */
#include "host/parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 256

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER; /* held by the caller of a job */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t work_done = PTHREAD_COND_INITIALIZER;
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
        pthread_mutex_lock(&state_lock);
        int64_t begin = job_generation == generation ? job_next : n;
        if (begin < n) job_next += chunk;
        pthread_mutex_unlock(&state_lock);
        if (begin >= n) return;
        fn(ctx, begin, OCD_MIN(begin + chunk, n));
        pthread_mutex_lock(&state_lock);
        if (--job_chunks_left == 0) pthread_cond_broadcast(&work_done);
        pthread_mutex_unlock(&state_lock);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&state_lock);
        while (job_generation == seen) pthread_cond_wait(&work_ready, &state_lock);
        seen = job_generation;
        ocd_range_fn fn = job_fn;
        void *ctx = job_ctx;
        int64_t n = job_n, chunk = job_chunk;
        pthread_mutex_unlock(&state_lock);
        run_chunks(seen, fn, ctx, n, chunk);
    }
    return NULL;
}

static void start_pool(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int want = online > 0 ? (int)online : 1;
    const char *env = getenv("OPENCUDNN_NUM_THREADS");
    if (env != NULL && atoi(env) > 0) want = atoi(env);
    if (want > MAX_THREADS) want = MAX_THREADS;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int started = 1;
    for (int i = 1; i < want; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker, NULL) != 0) break; /* fewer threads, still correct */
        started++;
    }
    pthread_attr_destroy(&attr);
    nthreads = started;
}

int ocd_parallel_threads(void)
{
    pthread_once(&pool_once, start_pool);
    return nthreads;
}

void ocd_parallel_for(int64_t n, int64_t grain, ocd_range_fn fn, void *ctx)
{
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int threads = ocd_parallel_threads();
    if (threads == 1 || n <= grain || pthread_mutex_trylock(&job_lock) != 0) {
        fn(ctx, 0, n);
        return;
    }
    /* A few chunks per thread balance uneven work without much locking. */
    int64_t chunk = OCD_MAX(grain, (n + threads * 4 - 1) / (threads * 4));
    pthread_mutex_lock(&state_lock);
    job_fn = fn;
    job_ctx = ctx;
    job_n = n;
    job_chunk = chunk;
    job_next = 0;
    job_chunks_left = (n + chunk - 1) / chunk;
    unsigned long generation = ++job_generation;
    pthread_cond_broadcast(&work_ready);
    pthread_mutex_unlock(&state_lock);
    run_chunks(generation, fn, ctx, n, chunk);
    pthread_mutex_lock(&state_lock);
    while (job_chunks_left > 0) pthread_cond_wait(&work_done, &state_lock);
    pthread_mutex_unlock(&state_lock);
    pthread_mutex_unlock(&job_lock);
}
