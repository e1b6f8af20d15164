/* cublaslt_loader.h: cuBLASLt, loaded at run time.

   As with cuBLAS (cublas_loader.h), the libraries never link cuBLASLt. The first use opens
   (cuda/dynload.h) libcublasLt.so.13, then the unversioned name, then .so.12 and .so.11 (the
   functions used here keep one ABI since CUDA 11, whose cublasLtMatmulDescCreate takes a compute
   and a scale type), resolves the few functions cublaslt_matmul.cu calls and keeps
   them in one table; when that fails, ocd_cublaslt_api() answers NULL and logs why once, and the
   GEMM entry and the fused 1x1 convolution forward say "cuBLASLt not available".

   Each cudnn handle owns one cuBLASLt handle (handle->blas_lt, created on first use, destroyed
   by cudnnDestroy); cuBLASLt takes the stream with each matmul, so nothing is bound to it. The
   header is C and C++: it takes cuBLASLt's types from the toolkit's header, never its code. */
#ifndef OCD_CUDA_CUBLASLT_LOADER_H
#define OCD_CUDA_CUBLASLT_LOADER_H

#include <cublasLt.h>

#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_cublaslt_api {
    cublasStatus_t (*create)(cublasLtHandle_t *handle);
    cublasStatus_t (*destroy)(cublasLtHandle_t handle);
    cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute, cudaDataType_t scale);
    cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t desc);
    cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void *buf,
                               size_t bytes);
    cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows, uint64_t cols,
                                    int64_t ld);
    cublasStatus_t (*layout_destroy)(cublasLtMatrixLayout_t layout);
    cublasStatus_t (*layout_set)(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                 const void *buf, size_t bytes);
    cublasStatus_t (*pref_create)(cublasLtMatmulPreference_t *pref);
    cublasStatus_t (*pref_destroy)(cublasLtMatmulPreference_t pref);
    cublasStatus_t (*pref_set)(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                               const void *buf, size_t bytes);
    cublasStatus_t (*heuristic)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                                cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                cublasLtMatmulPreference_t pref, int requested,
                                cublasLtMatmulHeuristicResult_t results[], int *returned);
    cublasStatus_t (*matmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha, const void *a,
                             cublasLtMatrixLayout_t adesc, const void *b, cublasLtMatrixLayout_t bdesc,
                             const void *beta, const void *c, cublasLtMatrixLayout_t cdesc, void *d,
                             cublasLtMatrixLayout_t ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                             size_t workspace_bytes, cudaStream_t stream);
    const char *(*status_string)(cublasStatus_t status); /* optional: NULL before CUDA 11.4 */
    const char *library;                                  /* the file that was loaded */
};

/* The loaded API, or NULL when no cuBLASLt library loads (logged once, with every name tried). */
const struct ocd_cublaslt_api *ocd_cublaslt_api(void);

/* The handle's cuBLASLt handle (created on first use) in *lt; NULL, or a reason (for an applies
   or plan function) when cuBLASLt is missing or cannot start. */
const char *ocd_cublaslt_handle(cudnnHandle_t handle, cublasLtHandle_t *lt);

/* The slot, beside the handle's cuBLASLt handle, of the memory block in which cublaslt_matmul.cu
   keeps the algorithms it found for the handle (NULL until it makes one; freed with the
   cuBLASLt handle); NULL where ocd_cublaslt_handle has not made one. */
void **ocd_cublaslt_algos(cudnnHandle_t handle);

/* Destroys the handle's cuBLASLt handle and its algorithms' block, if it has them (cudnnDestroy). */
void ocd_cublaslt_release(cudnnHandle_t handle);

/* A failed cuBLASLt call as a status, as ocd_cublas_status says it (cublas_loader.h). */
cudnnStatus_t ocd_cublaslt_status(cublasStatus_t status, const char *what, const char *func, const char *file,
                                  int line);

#define OCD_CUBLASLT_TRY(call)                                                                  \
    do {                                                                                        \
        cublasStatus_t ocd_cublaslt_st_ = (call);                                               \
        if (ocd_cublaslt_st_ != CUBLAS_STATUS_SUCCESS)                                          \
            return ocd_cublaslt_status(ocd_cublaslt_st_, #call, __func__, __FILE__, __LINE__);  \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CUBLASLT_LOADER_H */
