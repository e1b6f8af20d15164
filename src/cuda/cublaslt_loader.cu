/* cublaslt_loader.cu: loads cuBLASLt at run time (see cublaslt_loader.h). A .cu file only because
   src/cuda holds the CUDA backend's sources; nothing here runs on the device. */
#include "cuda/cublaslt_loader.h"

#include "core/platform.h"
#include "cuda/cublas_loader.h"
#include "cuda/dynload.h"

#include <stdlib.h>

static struct ocd_cublaslt_api api;
static const struct ocd_cublaslt_api *loaded;
static ocd_once_t load_once = OCD_ONCE_INIT;

static void load(void)
{
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so", "libcublasLt.so.12",
                                        "libcublasLt.so.11"};
    struct ocd_cublaslt_api a;
    const struct ocd_dynload_sym syms[] = {
        {"cublasLtCreate", (void **)&a.create, false},
        {"cublasLtDestroy", (void **)&a.destroy, false},
        {"cublasLtMatmulDescCreate", (void **)&a.desc_create, false},
        {"cublasLtMatmulDescDestroy", (void **)&a.desc_destroy, false},
        {"cublasLtMatmulDescSetAttribute", (void **)&a.desc_set, false},
        {"cublasLtMatrixLayoutCreate", (void **)&a.layout_create, false},
        {"cublasLtMatrixLayoutDestroy", (void **)&a.layout_destroy, false},
        {"cublasLtMatrixLayoutSetAttribute", (void **)&a.layout_set, false},
        {"cublasLtMatmulPreferenceCreate", (void **)&a.pref_create, false},
        {"cublasLtMatmulPreferenceDestroy", (void **)&a.pref_destroy, false},
        {"cublasLtMatmulPreferenceSetAttribute", (void **)&a.pref_set, false},
        {"cublasLtMatmulAlgoGetHeuristic", (void **)&a.heuristic, false},
        {"cublasLtMatmul", (void **)&a.matmul, false},
        {"cublasLtGetStatusString", (void **)&a.status_string, true},
    };
    char why[1024];
    a.library = ocd_dynload(names, OCD_ARRAY_LEN(names), syms, OCD_ARRAY_LEN(syms), why, sizeof why);
    if (a.library == NULL) {
        ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_SUCCESS,
                        "cuBLASLt not available, the GEMM entry and the fused 1x1 convolution forward that use it are off (%s)", why);
        return;
    }
    api = a;
    loaded = &api;
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "cuBLASLt loaded from %s", a.library);
}

const struct ocd_cublaslt_api *ocd_cublaslt_api(void)
{
    ocd_once(&load_once, load);
    return loaded;
}

cudnnStatus_t ocd_cublaslt_status(cublasStatus_t status, const char *what, const char *func, const char *file,
                                  int line)
{
    const struct ocd_cublaslt_api *a = ocd_cublaslt_api();
    return ocd_blas_fail(status, a && a->status_string ? a->status_string(status) : "cuBLASLt error", what, func,
                         file, line);
}

/* What handle->blas_lt points to. */
struct lt_state {
    cublasLtHandle_t lt;
    void *algos; /* cublaslt_matmul.cu's block, one malloc */
};

const char *ocd_cublaslt_handle(cudnnHandle_t handle, cublasLtHandle_t *lt)
{
    const struct ocd_cublaslt_api *a = ocd_cublaslt_api();
    if (a == NULL) return "cuBLASLt not available";
    if (handle->blas_lt == NULL) {
        struct lt_state *state = (struct lt_state *)calloc(1, sizeof *state);
        if (state == NULL) return "no memory for the cuBLASLt handle";
        cublasStatus_t st = a->create(&state->lt);
        if (st != CUBLAS_STATUS_SUCCESS) {
            free(state);
            ocd_cublaslt_status(st, "cublasLtCreate", __func__, __FILE__, __LINE__);
            return "cuBLASLt could not start on this device";
        }
        handle->blas_lt = state;
    }
    *lt = ((struct lt_state *)handle->blas_lt)->lt;
    return NULL;
}

void **ocd_cublaslt_algos(cudnnHandle_t handle)
{
    return handle->blas_lt ? &((struct lt_state *)handle->blas_lt)->algos : NULL;
}

void ocd_cublaslt_release(cudnnHandle_t handle)
{
    struct lt_state *state = (struct lt_state *)handle->blas_lt;
    if (state == NULL) return;
    if (loaded != NULL) loaded->destroy(state->lt);
    free(state->algos);
    free(state);
    handle->blas_lt = NULL;
}
