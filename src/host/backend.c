/* backend.c: the host backend: every pointer is host memory, work runs on the calling thread
   and the worker pool, and the stream is accepted and ignored (DESIGN.md 3). */
#include "core/handle.h"
#include "core/platform.h"
#include "host/gemm_engine.h"
#include "host/parallel.h"

#include <stdlib.h>
#include <string.h>

static cudnnStatus_t host_open(cudnnHandle_t h)
{
    h->device = -1;
    h->sm_count = ocd_parallel_threads();
    return ocd_host_gemm_open(h);
}

static void host_close(cudnnHandle_t h)
{
    ocd_host_gemm_close(h);
}

static cudnnStatus_t host_copy(cudnnHandle_t h, void *dst, const void *src, size_t bytes,
                               enum ocd_copy_dir dir)
{
    (void)h;
    (void)dir;
    memmove(dst, src, bytes);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t host_alloc(cudnnHandle_t h, void **ptr, size_t bytes)
{
    (void)h;
    *ptr = ocd_malloc(bytes ? bytes : 1);
    return *ptr ? CUDNN_STATUS_SUCCESS : OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu bytes", bytes);
}

static void host_release(cudnnHandle_t h, void *ptr)
{
    (void)h;
    free(ptr);
}

static cudnnStatus_t host_sync(cudnnHandle_t h)
{
    (void)h;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t host_time(cudnnHandle_t h, ocd_timed_work work, void *ctx, float *ms)
{
    (void)h;
    double t0 = ocd_seconds();
    cudnnStatus_t status = work(ctx);
    *ms = (float)((ocd_seconds() - t0) * 1e3);
    return status;
}

/* Host work is synchronous: an error is returned by the call itself, none is ever pending. */
static cudnnStatus_t host_query_error(cudnnHandle_t h, cudnnStatus_t *rstatus, cudnnErrQueryMode_t mode)
{
    (void)h;
    (void)mode;
    *rstatus = CUDNN_STATUS_SUCCESS;
    return CUDNN_STATUS_SUCCESS;
}

const struct ocd_backend ocd_backend_host = {
    .name = "host",
    .kind = OCD_BACKEND_HOST,
    .open = host_open,
    .close = host_close,
    .copy = host_copy,
    .alloc = host_alloc,
    .release = host_release,
    .sync = host_sync,
    .time = host_time,
    .query_error = host_query_error,
};
