/* cublas_loader.cu: loads cuBLAS at run time (see cublas_loader.h). A .cu file only because
   src/cuda holds the CUDA backend's sources; nothing here runs on the device. */
#include "cuda/cublas_loader.h"

#include "core/impl.h"
#include "core/platform.h"
#include "cuda/dynload.h"

static struct ocd_cublas_api api;
static const struct ocd_cublas_api *loaded;
static ocd_once_t load_once = OCD_ONCE_INIT;

static void load(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so", "libcublas.so.12", "libcublas.so.11"};
    struct ocd_cublas_api a;
    const struct ocd_dynload_sym syms[] = {
        {"cublasCreate_v2", (void **)&a.create, false},
        {"cublasDestroy_v2", (void **)&a.destroy, false},
        {"cublasSetStream_v2", (void **)&a.set_stream, false},
        {"cublasGemmStridedBatchedEx", (void **)&a.gemm_strided_batched, false},
        {"cublasGemmBatchedEx", (void **)&a.gemm_batched, false},
        {"cublasGetStatusString", (void **)&a.status_string, true},
    };
    char why[1024];
    a.library = ocd_dynload(names, OCD_ARRAY_LEN(names), syms, OCD_ARRAY_LEN(syms), why, sizeof why);
    if (a.library == NULL) {
        ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_SUCCESS,
                        "cuBLAS not available, the convolution and GEMM entries that use it are off (%s)", why);
        return;
    }
    api = a;
    loaded = &api;
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "cuBLAS loaded from %s", a.library);
}

const struct ocd_cublas_api *ocd_cublas_api(void)
{
    ocd_once(&load_once, load);
    return loaded;
}

cudnnStatus_t ocd_blas_fail(cublasStatus_t status, const char *name, const char *what, const char *func,
                            const char *file, int line)
{
    return ocd_fail(status == CUBLAS_STATUS_ALLOC_FAILED ? CUDNN_STATUS_ALLOC_FAILED : CUDNN_STATUS_EXECUTION_FAILED,
                    func, file, line, "%s: %s (%d)", what, name, (int)status);
}

cudnnStatus_t ocd_cublas_status(cublasStatus_t status, const char *what, const char *func, const char *file,
                                int line)
{
    const struct ocd_cublas_api *a = ocd_cublas_api();
    return ocd_blas_fail(status, a && a->status_string ? a->status_string(status) : "cuBLAS error", what, func, file,
                         line);
}

const char *ocd_cublas_handle(cudnnHandle_t handle, cublasHandle_t *blas)
{
    const struct ocd_cublas_api *a = ocd_cublas_api();
    if (a == NULL) return "cuBLAS not available";
    if (handle->blas == NULL) {
        cublasHandle_t b = NULL;
        cublasStatus_t st = a->create(&b);
        if (st != CUBLAS_STATUS_SUCCESS) {
            ocd_cublas_status(st, "cublasCreate", __func__, __FILE__, __LINE__);
            return "cuBLAS could not start on this device";
        }
        handle->blas = b;
    }
    if (blas == NULL) return NULL;
    cublasHandle_t b = (cublasHandle_t)handle->blas;
    if (a->set_stream(b, handle->stream) != CUBLAS_STATUS_SUCCESS) return "cuBLAS could not bind the handle's stream";
    *blas = b;
    return NULL;
}

cudnnStatus_t ocd_cublas_run_start(cudnnHandle_t handle, const char *entry, void *workspace, size_t workspace_bytes,
                                   size_t need, cublasHandle_t *blas, char **ws, const char *func, const char *file,
                                   int line)
{
    const char *why = ocd_cublas_handle(handle, blas);
    if (why != NULL || workspace_bytes < need)
        return ocd_fail(CUDNN_STATUS_INTERNAL_ERROR, func, file, line, "%s cannot run: %s", entry,
                        why ? why : "workspace too small");
    *ws = ocd_ws_aligned(workspace);
    return CUDNN_STATUS_SUCCESS;
}

void ocd_cublas_release(cudnnHandle_t handle)
{
    if (handle->blas != NULL && loaded != NULL) loaded->destroy((cublasHandle_t)handle->blas);
    handle->blas = NULL;
}
