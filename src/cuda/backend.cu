/* backend.cu: the CUDA backend: device pointers, work enqueued on the handle's stream.

   open binds the handle to the current device (cudaGetDevice) and records its properties;
   without a driver or a device it answers NOT_INITIALIZED so that cudnnCreate falls back to the
   host backend. Kernel launches live with their ops (src/cuda/<op>.cu); this file holds only what
   the core needs, and the handle's scratch (scratch.cuh). */
#include "core/handle.h"
#include "cuda/check.cuh"
#include "cuda/cublas_loader.h"
#include "cuda/cublaslt_loader.h"
#include "cuda/cufft_loader.h"
#include "cuda/scratch.cuh"

#include <stdlib.h>

/* A scratch buffer that a stream capture used and a larger one then replaced: the graph may still
   address it, so it is freed with the handle, not when replaced. */
struct retired_scratch {
    void *ptr;
    struct retired_scratch *next;
};

/* What a CUDA handle owns (handle->backend_data). */
struct cuda_state {
    void *scratch;          /* device memory, scratch_bytes long, or NULL */
    size_t scratch_bytes;
    cudaEvent_t scratch_done; /* recorded after the last use, on scratch_stream */
    cudaStream_t scratch_stream;
    bool scratch_used;
    bool scratch_captured;  /* a stream capture used this buffer */
    struct retired_scratch *retired;
};

static cudnnStatus_t cuda_open(cudnnHandle_t h)
{
    int count = 0, dev = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return CUDNN_STATUS_NOT_INITIALIZED;
    }
    OCD_CUDA_TRY(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    OCD_CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
    if (prop.major < 7 || (prop.major == 7 && prop.minor < 5))
        return OCD_FAIL(CUDNN_STATUS_ARCH_MISMATCH, "device %d is sm_%d%d; opencudnn needs sm_75 or newer",
                        dev, prop.major, prop.minor);
    struct cuda_state *st = (struct cuda_state *)ocd_calloc(1, sizeof *st);
    if (st == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the handle's state");
    cudnnStatus_t s = ocd_cufft_open(h);
    if (s != CUDNN_STATUS_SUCCESS) {
        free(st);
        return s;
    }
    h->backend_data = st;
    h->device = dev;
    h->sm_count = prop.multiProcessorCount;
    h->l2_bytes = (size_t)prop.l2CacheSize;
    h->cc_major = prop.major;
    h->cc_minor = prop.minor;
    return CUDNN_STATUS_SUCCESS;
}

/* cudaMalloc, or the error of a short memory where the fault hook says so (core/alloc.h). */
static cudaError_t device_malloc(void **ptr, size_t bytes)
{
    return ocd_alloc_fault(OCD_ALLOC_DEVICE) ? cudaErrorMemoryAllocation : cudaMalloc(ptr, bytes);
}

static void cuda_close(cudnnHandle_t h)
{
    ocd_cublas_release(h);
    ocd_cublaslt_release(h);
    ocd_cufft_release(h);
    struct cuda_state *st = (struct cuda_state *)h->backend_data;
    if (st == NULL) return;
    if (st->scratch) cudaFree(st->scratch); /* waits for the work that uses it */
    while (st->retired) {
        struct retired_scratch *r = st->retired;
        st->retired = r->next;
        cudaFree(r->ptr);
        free(r);
    }
    if (st->scratch_done) cudaEventDestroy(st->scratch_done);
    free(st);
    h->backend_data = NULL;
}

/* Whether the work issued to stream s is being captured into a CUDA graph. The scratch's event
   is then recorded and waited on as an external one (the flags are refused outside a capture):
   a capturing stream may wait on an event recorded outside the capture only so (the graph gets
   a node that waits on it when it runs), and an event recorded inside one can be waited on
   outside it only so. */
static cudaError_t stream_capturing(cudaStream_t s, bool *capturing)
{
    cudaStreamCaptureStatus status;
    cudaError_t err = cudaStreamIsCapturing(s, &status);
    *capturing = err == cudaSuccess && status == cudaStreamCaptureStatusActive;
    return err;
}

extern "C" cudnnStatus_t ocd_cuda_scratch_acquire(cudnnHandle_t h, size_t bytes, void **ptr)
{
    struct cuda_state *st = (struct cuda_state *)h->backend_data;
    if (st->scratch_done == NULL) OCD_CUDA_TRY(cudaEventCreateWithFlags(&st->scratch_done, cudaEventDisableTiming));
    if (bytes > st->scratch_bytes) {
        size_t want = bytes < ((size_t)1 << 20) ? (size_t)1 << 20 : bytes;
        if (st->scratch && st->scratch_captured) {
            struct retired_scratch *r = (struct retired_scratch *)ocd_malloc(sizeof *r);
            if (r == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot record the replaced scratch");
            r->ptr = st->scratch;
            r->next = st->retired;
            st->retired = r;
        } else if (st->scratch) {
            /* cudaFree waits for the device, hence for the previous user. */
            OCD_CUDA_TRY(cudaFree(st->scratch));
        }
        st->scratch = NULL;
        st->scratch_bytes = 0;
        st->scratch_captured = false;
        OCD_CUDA_TRY(device_malloc(&st->scratch, want));
        st->scratch_bytes = want;
    } else if (st->scratch_used && st->scratch_stream != h->stream) {
        bool capturing;
        OCD_CUDA_TRY(stream_capturing(h->stream, &capturing));
        OCD_CUDA_TRY(cudaStreamWaitEvent(h->stream, st->scratch_done, capturing ? cudaEventWaitExternal : 0));
    }
    *ptr = st->scratch;
    return CUDNN_STATUS_SUCCESS;
}

extern "C" cudnnStatus_t ocd_cuda_scratch_release(cudnnHandle_t h)
{
    struct cuda_state *st = (struct cuda_state *)h->backend_data;
    bool capturing;
    OCD_CUDA_TRY(stream_capturing(h->stream, &capturing));
    OCD_CUDA_TRY(cudaEventRecordWithFlags(st->scratch_done, h->stream, capturing ? cudaEventRecordExternal : 0));
    st->scratch_stream = h->stream;
    st->scratch_used = true;
    st->scratch_captured |= capturing;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t cuda_copy(cudnnHandle_t h, void *dst, const void *src, size_t bytes,
                               enum ocd_copy_dir dir)
{
    static const cudaMemcpyKind kinds[] = {cudaMemcpyDeviceToHost, cudaMemcpyHostToDevice,
                                           cudaMemcpyDeviceToDevice};
    OCD_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kinds[dir], h->stream));
    if (dir != OCD_COPY_ON_DEVICE) OCD_CUDA_TRY(cudaStreamSynchronize(h->stream));
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t cuda_alloc(cudnnHandle_t h, void **ptr, size_t bytes)
{
    (void)h;
    OCD_CUDA_TRY(device_malloc(ptr, bytes ? bytes : 1));
    return CUDNN_STATUS_SUCCESS;
}

static void cuda_release(cudnnHandle_t h, void *ptr)
{
    (void)h;
    cudaFree(ptr);
}

static cudnnStatus_t cuda_sync(cudnnHandle_t h)
{
    OCD_CUDA_TRY(cudaStreamSynchronize(h->stream));
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t cuda_time(cudnnHandle_t h, ocd_timed_work work, void *ctx, float *ms)
{
    cudaEvent_t start, stop;
    OCD_CUDA_TRY(cudaEventCreate(&start));
    cudaError_t err = cudaEventCreate(&stop);
    if (err != cudaSuccess) {
        cudaEventDestroy(start);
        OCD_CUDA_TRY(err);
    }
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    err = cudaEventRecord(start, h->stream);
    if (err == cudaSuccess) status = work(ctx);
    if (err == cudaSuccess) err = cudaEventRecord(stop, h->stream);
    if (err == cudaSuccess) err = cudaEventSynchronize(stop);
    if (err == cudaSuccess) err = cudaEventElapsedTime(ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    OCD_CUDA_TRY(err);
    return status;
}

/* cudnnQueryRuntimeError (cuDNN 8.2): rstatus is what kernels reported through the handle's error
   flag. Our kernels report none (cuDNN's only such report is the floating-point overflow of its
   persistent batch norm, which ours does not detect), so the flag always reads SUCCESS:
   RAWCODE reads it at once, whatever the stream's state; NONBLOCKING answers RUNTIME_IN_PROGRESS
   while work on the handle's stream has not finished; BLOCKING waits for that work first. A query
   or wait that fails (a fault or launch error left on the stream, a sticky error of the context,
   a destroyed stream) is the function's own INTERNAL_ERROR, as 8.2 documents, logged with the
   CUDA error. */
static cudnnStatus_t cuda_query_error(cudnnHandle_t h, cudnnStatus_t *rstatus, cudnnErrQueryMode_t mode)
{
    if (mode == CUDNN_ERRQUERY_RAWCODE) {
        *rstatus = CUDNN_STATUS_SUCCESS;
        return CUDNN_STATUS_SUCCESS;
    }
    cudaError_t err = mode == CUDNN_ERRQUERY_BLOCKING ? cudaStreamSynchronize(h->stream)
                                                      : cudaStreamQuery(h->stream);
    if (err == cudaErrorNotReady) {
        /* not an error: never left for the next launch check (clears nothing else) */
        if (cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError();
        *rstatus = CUDNN_STATUS_RUNTIME_IN_PROGRESS;
        return CUDNN_STATUS_SUCCESS;
    }
    if (err != cudaSuccess)
        return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "the %s of the handle's stream failed: %s (%s)",
                        mode == CUDNN_ERRQUERY_BLOCKING ? "synchronization" : "query", cudaGetErrorName(err),
                        cudaGetErrorString(err));
    *rstatus = CUDNN_STATUS_SUCCESS;
    return CUDNN_STATUS_SUCCESS;
}

extern "C" const struct ocd_backend ocd_backend_cuda = {
    "cuda", OCD_BACKEND_CUDA, cuda_open, cuda_close, cuda_copy, cuda_alloc,
    cuda_release, cuda_sync, cuda_time, cuda_query_error,
};
