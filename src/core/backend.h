/* backend.h: a backend is one const struct of function pointers; a handle points at one.

   Two exist: host (src/host/backend.c, always built) and cuda (src/cuda/backend.cu, built when
   CUDA is found). The slots cover what the library needs of a device besides its kernels:
   binding a handle, moving and filling memory in stream order, timing a piece of work for the
   Find functions, and reporting asynchronous errors. Op kernels are not here: each op keeps an
   implementation table whose entries name the backend they run on (see impl.h). Callers use the
   ocd_backend_* wrappers below, never the pointers, so that there is one place to hook. */
#ifndef OCD_CORE_BACKEND_H
#define OCD_CORE_BACKEND_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ocd_backend_kind { OCD_BACKEND_HOST, OCD_BACKEND_CUDA };

enum ocd_copy_dir {
    OCD_COPY_TO_HOST,   /* device memory to host memory; returns when the data has arrived */
    OCD_COPY_FROM_HOST, /* host memory to device memory; the host buffer may be reused on return */
    OCD_COPY_ON_DEVICE  /* device to device, in stream order */
};

/* A piece of work the Find functions time: enqueues itself on the handle's stream. */
typedef cudnnStatus_t (*ocd_timed_work)(void *ctx);

struct ocd_backend {
    const char *name;           /* "host" or "cuda", as OPENCUDNN_BACKEND spells it */
    enum ocd_backend_kind kind;
    /* Binds a new handle to the current device; NOT_INITIALIZED when no device is usable. */
    cudnnStatus_t (*open)(cudnnHandle_t handle);
    /* Releases what open acquired. */
    void (*close)(cudnnHandle_t handle);
    /* Copies bytes in the direction given, ordered on the handle's stream. */
    cudnnStatus_t (*copy)(cudnnHandle_t handle, void *dst, const void *src, size_t bytes,
                          enum ocd_copy_dir dir);
    /* Allocates and frees device memory: only for Find (its own workspace) and tools. */
    cudnnStatus_t (*alloc)(cudnnHandle_t handle, void **ptr, size_t bytes);
    void (*release)(cudnnHandle_t handle, void *ptr);
    /* Waits until all work on the handle's stream has finished. */
    cudnnStatus_t (*sync)(cudnnHandle_t handle);
    /* Runs work once and stores its duration in milliseconds. */
    cudnnStatus_t (*time)(cudnnHandle_t handle, ocd_timed_work work, void *ctx, float *ms);
    /* cudnnQueryRuntimeError: the error state of kernels already run, in the mode asked. */
    cudnnStatus_t (*query_error)(cudnnHandle_t handle, cudnnStatus_t *rstatus,
                                 cudnnErrQueryMode_t mode);
};

extern const struct ocd_backend ocd_backend_host;
#ifdef OCD_HAVE_CUDA
extern const struct ocd_backend ocd_backend_cuda;
#endif

cudnnStatus_t ocd_backend_copy(cudnnHandle_t handle, void *dst, const void *src, size_t bytes,
                               enum ocd_copy_dir dir);
cudnnStatus_t ocd_backend_alloc(cudnnHandle_t handle, void **ptr, size_t bytes);
void ocd_backend_release(cudnnHandle_t handle, void *ptr);
cudnnStatus_t ocd_backend_sync(cudnnHandle_t handle);
cudnnStatus_t ocd_backend_time(cudnnHandle_t handle, ocd_timed_work work, void *ctx, float *ms);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_BACKEND_H */
