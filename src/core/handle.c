/* handle.c: cudnnCreate and the other handle-level calls, version queries, and the wrappers
   through which the library reaches a handle's backend.

   Backend choice (DESIGN.md 3): OPENCUDNN_BACKEND=host|cuda forces one (cudnnCreate fails with
   NOT_INITIALIZED when the forced one is unusable); otherwise CUDA when the library was built with
   it and a device is usable, host otherwise. */
#include "core/handle.h"

#include <stdlib.h>
#include <string.h>

static const struct ocd_backend *const backends[] = {
#ifdef OCD_HAVE_CUDA
    &ocd_backend_cuda,
#endif
    &ocd_backend_host,
};

cudnnStatus_t CUDNNWINAPI cudnnCreate(cudnnHandle_t *handle)
{
    OCD_LOG_API("handle=%p", (void *)handle);
    if (handle == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "handle is NULL");
    const char *forced = getenv("OPENCUDNN_BACKEND");
    if (forced != NULL && forced[0] == '\0') forced = NULL;
    if (forced != NULL) {
        bool known = false;
        for (size_t i = 0; i < OCD_ARRAY_LEN(backends); i++) known |= strcmp(forced, backends[i]->name) == 0;
        if (!known)
            return OCD_FAIL(CUDNN_STATUS_NOT_INITIALIZED,
                            "OPENCUDNN_BACKEND=%s: this build has no such backend", forced);
    }
    cudnnHandle_t h;
    OCD_TRY(ocd_object_create(OCD_OBJ_HANDLE, sizeof(struct cudnnContext), (void **)&h));
    cudnnStatus_t status = CUDNN_STATUS_NOT_INITIALIZED;
    for (size_t i = 0; i < OCD_ARRAY_LEN(backends); i++) {
        if (forced != NULL && strcmp(forced, backends[i]->name) != 0) continue;
        h->backend = backends[i];
        h->device = -1;
        status = backends[i]->open(h);
        /* short memory is the caller's to hear of, not a reason to take the next backend */
        if (status == CUDNN_STATUS_SUCCESS || status == CUDNN_STATUS_ALLOC_FAILED) break;
        ocd_log_message(CUDNN_SEV_WARNING, status, "backend %s is not usable: %s", backends[i]->name,
                        ocd_status_string(status));
    }
    if (status != CUDNN_STATUS_SUCCESS) {
        ocd_object_destroy(OCD_OBJ_HANDLE, h);
        return OCD_FAIL(status, "no usable backend%s%s", forced ? " named " : "", forced ? forced : "");
    }
    *handle = h;
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "handle %p uses the %s backend (device %d)",
                    (void *)h, h->backend->name, h->device);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroy(cudnnHandle_t handle)
{
    OCD_LOG_API("handle=%p", (void *)handle);
    OCD_CHECK_HANDLE(handle);
    handle->backend->close(handle);
    return ocd_object_destroy(OCD_OBJ_HANDLE, handle);
}

cudnnStatus_t CUDNNWINAPI cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    OCD_LOG_API("handle=%p streamId=%p", (void *)handle, (void *)streamId);
    OCD_CHECK_HANDLE(handle);
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
    OCD_LOG_API("handle=%p", (void *)handle);
    OCD_CHECK_HANDLE(handle);
    if (streamId == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "streamId is NULL");
    *streamId = handle->stream;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnQueryRuntimeError(cudnnHandle_t handle, cudnnStatus_t *rstatus,
                                                 cudnnErrQueryMode_t mode, cudnnRuntimeTag_t *tag)
{
    OCD_LOG_API("handle=%p mode=%d tag=%p", (void *)handle, (int)mode, (void *)tag);
    OCD_CHECK_HANDLE(handle);
    if (rstatus == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "rstatus is NULL");
    if (tag != NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "tag must be NULL in this version");
    if (mode != CUDNN_ERRQUERY_RAWCODE && mode != CUDNN_ERRQUERY_NONBLOCKING &&
        mode != CUDNN_ERRQUERY_BLOCKING)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid mode %d", (int)mode);
    return handle->backend->query_error(handle, rstatus, mode);
}

/* ---- versions ---------------------------------------------------------------------------------- */

size_t CUDNNWINAPI cudnnGetVersion(void)
{
    return CUDNN_VERSION;
}

/* The CUDA runtime version the library was built with (CMake passes it); 0 for a host-only build. */
size_t CUDNNWINAPI cudnnGetCudartVersion(void)
{
#ifdef OCD_CUDART_VERSION
    return OCD_CUDART_VERSION;
#else
    return 0;
#endif
}

cudnnStatus_t CUDNNWINAPI cudnnGetProperty(libraryPropertyType type, int *value)
{
    OCD_LOG_API("type=%d value=%p", (int)type, (void *)value);
    if (value == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "value is NULL");
    switch (type) {
    case MAJOR_VERSION: *value = CUDNN_MAJOR; return CUDNN_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUDNN_MINOR; return CUDNN_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUDNN_PATCHLEVEL; return CUDNN_STATUS_SUCCESS;
    }
    return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid property type %d", (int)type);
}

/* Each sub-library's VersionCheck confirms that the ops_infer it is loaded with is of its own
   version; this is the shared half. */
cudnnStatus_t ocd_version_check(unsigned major, unsigned minor, unsigned patch)
{
    if (major != CUDNN_MAJOR || minor != CUDNN_MINOR || patch != CUDNN_PATCHLEVEL)
        return OCD_FAIL(CUDNN_STATUS_VERSION_MISMATCH,
                        "a sub-library of version %u.%u.%u is loaded with ops_infer %d.%d.%d", major,
                        minor, patch, CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnOpsInferVersionCheck(void)
{
    return ocd_version_check(CUDNN_OPS_INFER_MAJOR, CUDNN_OPS_INFER_MINOR, CUDNN_OPS_INFER_PATCH);
}

/* ---- backend wrappers -------------------------------------------------------------------------- */

cudnnStatus_t ocd_backend_copy(cudnnHandle_t handle, void *dst, const void *src, size_t bytes,
                               enum ocd_copy_dir dir)
{
    return bytes == 0 ? CUDNN_STATUS_SUCCESS : handle->backend->copy(handle, dst, src, bytes, dir);
}

cudnnStatus_t ocd_backend_alloc(cudnnHandle_t handle, void **ptr, size_t bytes)
{
    return handle->backend->alloc(handle, ptr, bytes);
}

void ocd_backend_release(cudnnHandle_t handle, void *ptr)
{
    if (ptr != NULL) handle->backend->release(handle, ptr);
}

cudnnStatus_t ocd_backend_sync(cudnnHandle_t handle)
{
    return handle->backend->sync(handle);
}

cudnnStatus_t ocd_backend_time(cudnnHandle_t handle, ocd_timed_work work, void *ctx, float *ms)
{
    return handle->backend->time(handle, work, ctx, ms);
}
