/* cublas_loader.h: cuBLAS, loaded at run time.

   The libraries never link cuBLAS: they must load and run (on the host backend, or on the CUDA
   backend without the GEMM entries) where it is not installed. The first use opens (cuda/dynload.h)
   libcublas.so.13, then the unversioned name, then .so.12 and .so.11 (the cuBLAS ABI of the
   functions used here is the same since CUDA 11), resolves the few functions the library calls
   and keeps them in one table; when that fails, ocd_cublas_api() answers NULL and logs why once,
   and the entries that need cuBLAS say "cuBLAS not available".

   Each cudnn handle owns one cuBLAS handle (created on first use with the handle's device
   current, destroyed by cudnnDestroy); every call binds it to the cudnn handle's stream first.
   The header is C and C++: it takes cuBLAS's types from the toolkit's header, never its code. */
#ifndef OCD_CUDA_CUBLAS_LOADER_H
#define OCD_CUDA_CUBLAS_LOADER_H

#include <cublas_v2.h>

#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_cublas_api {
    cublasStatus_t (*create)(cublasHandle_t *handle);
    cublasStatus_t (*destroy)(cublasHandle_t handle);
    cublasStatus_t (*set_stream)(cublasHandle_t handle, cudaStream_t stream);
    cublasStatus_t (*gemm_strided_batched)(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const void *alpha, const void *a, cudaDataType atype, int lda,
                                           long long stride_a, const void *b, cudaDataType btype, int ldb,
                                           long long stride_b, const void *beta, void *c, cudaDataType ctype,
                                           int ldc, long long stride_c, int batch,
                                           cublasComputeType_t compute, cublasGemmAlgo_t algo);
    cublasStatus_t (*gemm_batched)(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                   int n, int k, const void *alpha, const void *const a[], cudaDataType atype, int lda,
                                   const void *const b[], cudaDataType btype, int ldb, const void *beta,
                                   void *const c[], cudaDataType ctype, int ldc, int batch,
                                   cublasComputeType_t compute, cublasGemmAlgo_t algo);
    const char *(*status_string)(cublasStatus_t status); /* optional: NULL before CUDA 11.4 */
    const char *library;                                  /* the file that was loaded */
};

/* The loaded API, or NULL when no cuBLAS library loads (logged once, with every name tried). */
const struct ocd_cublas_api *ocd_cublas_api(void);

/* The handle's cuBLAS handle (created on first use), bound to the handle's stream and stored in
   *blas; NULL, or a reason (for an applies function) when cuBLAS is missing or cannot start on
   this device. blas may be NULL: then the call only checks that cuBLAS can run. */
const char *ocd_cublas_handle(cudnnHandle_t handle, cublasHandle_t *blas);

/* The start of an entry's run on cuBLAS (the convolution entries): the handle's cuBLAS handle
   on its stream in *blas, and the user's workspace rounded up to a 256-byte boundary in *ws, the
   entry having asked for `need` bytes (256 more than it uses, room for that rounding, where it
   uses any). INTERNAL_ERROR, logged as "<entry> cannot run: <why>" at the caller's place
   (OCD_CUBLAS_RUN_START), where cuBLAS cannot run or the workspace is smaller than need. */
cudnnStatus_t ocd_cublas_run_start(cudnnHandle_t handle, const char *entry, void *workspace, size_t workspace_bytes,
                                   size_t need, cublasHandle_t *blas, char **ws, const char *func, const char *file,
                                   int line);
#define OCD_CUBLAS_RUN_START(handle, entry, workspace, workspace_bytes, need, blas, ws)                         \
    ocd_cublas_run_start((handle), (entry), (workspace), (workspace_bytes), (need), (blas), (ws), __func__, \
                         __FILE__, __LINE__)

/* Destroys the handle's cuBLAS handle, if it has one (cudnnDestroy). */
void ocd_cublas_release(cudnnHandle_t handle);

/* A failed cuBLAS call as a status: ALLOC_FAILED for out-of-memory, EXECUTION_FAILED otherwise,
   logged with the call, cuBLAS's status name and file:line. */
cudnnStatus_t ocd_cublas_status(cublasStatus_t status, const char *what, const char *func, const char *file,
                                int line);

/* The status of a failed call of cuBLAS or cuBLASLt (which share cublasStatus_t), logged with
   the call, name (the library's name of the status) and file:line. */
cudnnStatus_t ocd_blas_fail(cublasStatus_t status, const char *name, const char *what, const char *func,
                            const char *file, int line);

#define OCD_CUBLAS_TRY(call)                                                                    \
    do {                                                                                        \
        cublasStatus_t ocd_cublas_st_ = (call);                                                 \
        if (ocd_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                            \
            return ocd_cublas_status(ocd_cublas_st_, #call, __func__, __FILE__, __LINE__);      \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CUBLAS_LOADER_H */
