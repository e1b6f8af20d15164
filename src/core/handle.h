/* handle.h: the cudnnHandle_t, bound at creation to one backend and, for CUDA, one device. */
#ifndef OCD_CORE_HANDLE_H
#define OCD_CORE_HANDLE_H

#include "core/backend.h"
#include "core/object.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cudnnContext {
    struct ocd_object obj;
    const struct ocd_backend *backend;
    cudaStream_t stream; /* NULL: the default stream */
    int device;          /* CUDA device ordinal; -1 on the host backend */
    int sm_count;        /* multiprocessors of the device (host: worker threads) */
    int cc_major, cc_minor;
    size_t l2_bytes;     /* CUDA: the device's L2 cache (host: 0) */
    void *backend_data;  /* owned by the backend (open/close) */
    void *blas;          /* CUDA: the cuBLAS handle, created on first use (cuda/cublas_loader.h) */
    void *blas_lt;       /* CUDA: the cuBLASLt handle, created on first use (cuda/cublaslt_loader.h) */
    void *fft;           /* CUDA: the cuFFT plans, made on first use (cuda/cufft_loader.h) */
};

/* The check each API call makes on its handle: BAD_PARAM when it is not a live handle. */
#define OCD_CHECK_HANDLE(h) OCD_CHECK_OBJECT(OCD_OBJ_HANDLE, h)

static inline enum ocd_backend_kind ocd_handle_kind(cudnnHandle_t h)
{
    return h->backend->kind;
}

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_HANDLE_H */
