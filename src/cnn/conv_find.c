/* conv_find.c: cudnnFindConvolution*Algorithm(Ex) for every direction: the timing of each
   algorithm, the cache of the results per problem, and Find's verdicts on racing entries.

   Main decision: a reported time is the steady cost of a call, never a first call's. Each
   algorithm runs once untimed (cuBLAS loading and handle creation, thread start-up, a host GEMM
   calibration, first touch of workspace pages all happen there), then up to FIND_RUNS timed runs
   report their best, fewer when they exceed FIND_BUDGET_MS together (a slow algorithm on a large
   problem is not worth three runs) unless the best is still over twice the untimed run's time:
   a run the machine's other work preempted, which a steady call would not see. Where two entries race for an algorithm (conv.h, enum
   ocd_conv_race: the host's CBLAS GEMM and the packed engine), both are timed on the problem,
   the faster is reported, and the verdict is kept so that the algorithm runs on that entry
   afterwards: a measurement on the real problem overrules the estimate. */
#include "cnn/conv.h"

#include "core/platform.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIND_RUNS 3
#define FIND_BUDGET_MS 50.0f

/* ---- the cache of results ------------------------------------------------------------------------ */

#define FIND_CACHE_SIZE 64

struct find_cache_entry {
    char key[1536];
    int count;
    struct ocd_conv_perf perf[16];
};

static ocd_mutex_t find_lock = OCD_MUTEX_INIT;
static struct find_cache_entry find_cache[FIND_CACHE_SIZE];
static int find_cache_next;

/* The cache key: the problem, the backend and device, the entries switched off, the workspace
   cap, the host GEMM choice, and for Ex the workspace the user offers (they decide which
   algorithms can run). */
static void find_key(cudnnHandle_t handle, const struct ocd_conv_problem *p, bool user_buffers,
                     size_t workspace_bytes, char *key, size_t size)
{
    char desc[1024];
    const char *off = getenv("OPENCUDNN_DISABLE"), *cap = getenv("CUDNN_CONV_WSCAP_DBG");
    const char *gemm = getenv("OPENCUDNN_HOST_GEMM");
    ocd_conv_problem_format(p, desc, sizeof desc);
    snprintf(key, size, "%s:%d|%s|%s|%s|%s|%zu", handle->backend->name, handle->device, off ? off : "",
             cap ? cap : "", gemm ? gemm : "", user_buffers ? "ex" : "own", user_buffers ? workspace_bytes : 0);
    size_t used = strlen(key);
    if (used + 1 < size) snprintf(key + used, size - used, "|%s", desc);
}

static bool find_cached(const char *key, int *count, struct ocd_conv_perf *perf)
{
    bool hit = false;
    ocd_mutex_lock(&find_lock);
    for (int i = 0; i < FIND_CACHE_SIZE && !hit; i++) {
        if (find_cache[i].count > 0 && strcmp(find_cache[i].key, key) == 0) {
            *count = find_cache[i].count;
            memcpy(perf, find_cache[i].perf, sizeof find_cache[i].perf);
            hit = true;
        }
    }
    ocd_mutex_unlock(&find_lock);
    return hit;
}

static void find_store(const char *key, int count, const struct ocd_conv_perf *perf)
{
    ocd_mutex_lock(&find_lock);
    struct find_cache_entry *e = &find_cache[find_cache_next];
    find_cache_next = (find_cache_next + 1) % FIND_CACHE_SIZE;
    snprintf(e->key, sizeof e->key, "%s", key);
    e->count = count;
    memcpy(e->perf, perf, sizeof e->perf);
    ocd_mutex_unlock(&find_lock);
}

/* ---- verdicts on races ----------------------------------------------------------------------------- */

#define VERDICTS 64

struct verdict {
    char key[1100]; /* algorithm | problem string */
    bool racer_won;
};

static ocd_mutex_t verdict_lock = OCD_MUTEX_INIT;
static struct verdict verdicts[VERDICTS];
static int verdict_next;
static atomic_uint verdict_epoch; /* also the count of verdicts recorded: none while 0 */

static void verdict_key(const struct ocd_conv_problem *p, int algo, char *key, size_t size)
{
    char desc[1024];
    ocd_conv_problem_format(p, desc, sizeof desc);
    snprintf(key, size, "%d|%s", algo, desc);
}

void ocd_conv_race_record(const struct ocd_conv_problem *p, int algo, bool racer_won)
{
    char key[sizeof verdicts[0].key];
    verdict_key(p, algo, key, sizeof key);
    ocd_mutex_lock(&verdict_lock);
    struct verdict *v = NULL;
    for (int i = 0; i < VERDICTS && v == NULL; i++)
        if (strcmp(verdicts[i].key, key) == 0) v = &verdicts[i];
    if (v == NULL) {
        v = &verdicts[verdict_next];
        verdict_next = (verdict_next + 1) % VERDICTS;
        memcpy(v->key, key, sizeof key);
    }
    v->racer_won = racer_won;
    atomic_fetch_add(&verdict_epoch, 1);
    ocd_mutex_unlock(&verdict_lock);
}

bool ocd_conv_race_verdict(const struct ocd_conv_problem *p, int algo, bool *racer_won)
{
    if (atomic_load(&verdict_epoch) == 0) return false;
    char key[sizeof verdicts[0].key];
    verdict_key(p, algo, key, sizeof key);
    bool found = false;
    ocd_mutex_lock(&verdict_lock);
    for (int i = 0; i < VERDICTS && !found; i++)
        if (strcmp(verdicts[i].key, key) == 0) *racer_won = verdicts[i].racer_won, found = true;
    ocd_mutex_unlock(&verdict_lock);
    return found;
}

unsigned ocd_conv_race_epoch(void)
{
    return atomic_load(&verdict_epoch);
}

/* ---- timing ---------------------------------------------------------------------------------------- */

struct timed_run {
    cudnnHandle_t handle;
    const struct ocd_conv_impl *impl;
    const struct ocd_conv_problem *p;
    void *workspace;
    size_t workspace_bytes;
    struct ocd_impl_plan plan; /* impl's, computed once for every run */
};

static cudnnStatus_t timed_run(void *ctx)
{
    struct timed_run *t = ctx;
    return ocd_impl_exec(t->handle, &t->impl->base, t->p, &t->plan, t->workspace, t->workspace_bytes);
}

/* Successes by time, then failures, then NOT_SUPPORTED; stable within each class. */
static int perf_class(const struct ocd_conv_perf *r)
{
    return r->status == CUDNN_STATUS_SUCCESS ? 0 : r->status == CUDNN_STATUS_NOT_SUPPORTED ? 2 : 1;
}

static void sort_perf(struct ocd_conv_perf *perf, int n)
{
    for (int i = 1; i < n; i++) {
        struct ocd_conv_perf r = perf[i];
        int j = i;
        while (j > 0) {
            const struct ocd_conv_perf *q = &perf[j - 1];
            int cr = perf_class(&r), cq = perf_class(q);
            if (cq < cr || (cq == cr && (cr != 0 || q->time <= r.time))) break;
            perf[j] = perf[j - 1];
            j--;
        }
        perf[j] = r;
    }
}

/* Allocates a sample buffer for a view on the device, zero-filled so that timings see no NaN or
   denormal data. */
static cudnnStatus_t sample_buffer(cudnnHandle_t handle, const struct ocd_tensor_view *v, void **out)
{
    size_t bytes = (size_t)ocd_view_span_bytes(v);
    void *zeros = ocd_calloc(1, bytes);
    if (zeros == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu bytes", bytes);
    cudnnStatus_t status = ocd_backend_alloc(handle, out, bytes);
    if (status == CUDNN_STATUS_SUCCESS) {
        status = ocd_backend_copy(handle, *out, zeros, bytes, OCD_COPY_FROM_HOST);
        if (status != CUDNN_STATUS_SUCCESS) {
            ocd_backend_release(handle, *out);
            *out = NULL;
        }
    }
    free(zeros);
    return status;
}

/* The workspace of Find: the user's (Ex), or allocated per entry. */
struct find_buffers {
    bool user;
    void *workspace;
    size_t bytes;
};

/* Times impl for r->algo into *r (whose memory says the workspace it needs): one untimed run,
   then the best of up to FIND_RUNS within FIND_BUDGET_MS. A workspace that cannot be allocated,
   or a user's that is too small, is ALLOC_FAILED (the documented status). */
static void time_entry(cudnnHandle_t handle, const struct ocd_conv_impl *impl, const struct ocd_conv_problem *p,
                       const struct find_buffers *b, struct ocd_conv_perf *r)
{
    struct timed_run t = {handle, impl, p, b->workspace, b->bytes, {0}};
    ocd_impl_rejects(handle, &impl->base, p, &t.plan); /* the pick chose it: only its plan is wanted */
    r->time = -1.0f;
    if (!b->user && r->memory > 0) {
        if (ocd_backend_alloc(handle, &t.workspace, r->memory) != CUDNN_STATUS_SUCCESS) {
            r->status = CUDNN_STATUS_ALLOC_FAILED;
            return;
        }
        t.workspace_bytes = r->memory;
    } else if (b->user && (r->memory > b->bytes || (r->memory > 0 && b->workspace == NULL))) {
        r->status = CUDNN_STATUS_ALLOC_FAILED;
        return;
    }
    float ms = 0, spent = 0, cold = 0;
    r->status = ocd_backend_time(handle, timed_run, &t, &cold); /* the untimed run */
    /* past the budget, a best slower than the cold run was disturbed (the machine busy): again */
    for (int run = 0; run < FIND_RUNS && r->status == CUDNN_STATUS_SUCCESS && (spent < FIND_BUDGET_MS || r->time > 2 * cold);
         run++) {
        r->status = ocd_backend_time(handle, timed_run, &t, &ms);
        spent += ms;
        if (r->status == CUDNN_STATUS_SUCCESS && (r->time < 0 || ms < r->time)) r->time = ms;
    }
    if (r->status != CUDNN_STATUS_SUCCESS) r->time = -1.0f;
    if (!b->user) ocd_backend_release(handle, t.workspace);
}

/* A race for r->algo: `chosen` (already timed into *r) against `other`. The faster that ran is
   reported in *r, and becomes the verdict. */
static void race(cudnnHandle_t handle, const struct ocd_conv_problem *p, const struct find_buffers *b,
                 const struct ocd_conv_impl *racer, const struct ocd_conv_impl *chosen,
                 const struct ocd_conv_impl *other, struct ocd_conv_perf *r)
{
    struct ocd_conv_perf o = ocd_conv_perf_of(handle, p, r->algo, other, NULL);
    time_entry(handle, other, p, b, &o);
    if (o.status != CUDNN_STATUS_SUCCESS && r->status != CUDNN_STATUS_SUCCESS) return;
    bool other_wins = o.status == CUDNN_STATUS_SUCCESS && (r->status != CUDNN_STATUS_SUCCESS || o.time < r->time);
    if (other_wins) *r = o;
    ocd_conv_race_record(p, r->algo, (other_wins ? other : chosen) == racer);
}

/* Times every algorithm that runs, fastest first, then the others; results cached per problem. */
static cudnnStatus_t find(cudnnHandle_t handle, struct ocd_conv_problem *p, int requested, int *returned,
                          struct ocd_conv_perf *perf, bool user_buffers, void *workspace, size_t workspace_bytes,
                          const char *op)
{
    char key[1536];
    struct ocd_conv_perf all[16];
    int n = 0;
    find_key(handle, p, user_buffers, workspace_bytes, key, sizeof key);
    if (!find_cached(key, &n, all)) {
        const struct ocd_conv_impl *impls[16];
        n = ocd_conv_rank_algorithms(handle, p, all, impls);
        void *samples[3] = {NULL, NULL, NULL};
        cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
        if (!user_buffers) {
            p->alpha = 1, p->beta = 0;
            status = sample_buffer(handle, &p->x, &samples[0]);
            if (status == CUDNN_STATUS_SUCCESS) status = sample_buffer(handle, &p->w, &samples[1]);
            if (status == CUDNN_STATUS_SUCCESS) status = sample_buffer(handle, &p->y, &samples[2]);
            p->x_data = samples[0], p->w_data = samples[1], p->y_data = samples[2];
        }
        struct find_buffers bufs = {user_buffers, workspace, workspace_bytes};
        for (int i = 0; i < n && status == CUDNN_STATUS_SUCCESS; i++) {
            if (impls[i] == NULL) continue;
            time_entry(handle, impls[i], p, &bufs, &all[i]);
            const struct ocd_conv_impl *racer, *rival;
            if (ocd_conv_race_pair(handle, p, all[i].algo, &racer, &rival))
                race(handle, p, &bufs, racer, impls[i], impls[i] == racer ? rival : racer, &all[i]);
        }
        for (int b = 0; b < 3; b++) ocd_backend_release(handle, samples[b]);
        if (status != CUDNN_STATUS_SUCCESS)
            return ocd_fail(status, op, __FILE__, __LINE__, "cannot allocate the sample buffers");
        sort_perf(all, n);
        /* an algorithm that could not get its memory may get it next time: not remembered */
        bool short_of_memory = false;
        for (int i = 0; i < n; i++) short_of_memory |= all[i].status == CUDNN_STATUS_ALLOC_FAILED;
        if (!short_of_memory) find_store(key, n, all);
    }
    n = OCD_MIN(n, requested);
    memcpy(perf, all, sizeof *perf * (size_t)n);
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_conv_find_algorithms(cudnnHandle_t handle, struct ocd_conv_problem *p, int requested, int *returned,
                                       void *perf_results, bool user_buffers, void *workspace, size_t workspace_bytes,
                                       const char *op)
{
    struct ocd_conv_perf perf[16];
    int n = 0;
    OCD_TRY(find(handle, p, requested, &n, perf, user_buffers, workspace, workspace_bytes, op));
    ocd_conv_export_perf(perf, n, perf_results);
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

