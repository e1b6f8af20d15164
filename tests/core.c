/* core.c: tests of the handle, versions, status strings, logging and callbacks. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

TEST_ONCE(version_numbers_agree)
{
    CHECK(CUDNN_MAJOR == 8 && CUDNN_MINOR == 2 && CUDNN_PATCHLEVEL == 2);
    CHECK(CUDNN_VERSION == 8202);
    CHECK(cudnnGetVersion() == CUDNN_VERSION);
    int v = -1;
    CHECK_OK(cudnnGetProperty(MAJOR_VERSION, &v));
    CHECK(v == CUDNN_MAJOR);
    CHECK_OK(cudnnGetProperty(MINOR_VERSION, &v));
    CHECK(v == CUDNN_MINOR);
    CHECK_OK(cudnnGetProperty(PATCH_LEVEL, &v));
    CHECK(v == CUDNN_PATCHLEVEL);
    CHECK_STATUS(cudnnGetProperty(MAJOR_VERSION, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetProperty((libraryPropertyType)7, &v), CUDNN_STATUS_BAD_PARAM);
}

TEST_ONCE(every_sublibrary_version_check_passes)
{
    CHECK_OK(cudnnOpsInferVersionCheck());
    CHECK_OK(cudnnOpsTrainVersionCheck());
    CHECK_OK(cudnnCnnInferVersionCheck());
    CHECK_OK(cudnnCnnTrainVersionCheck());
    CHECK_OK(cudnnAdvInferVersionCheck());
    CHECK_OK(cudnnAdvTrainVersionCheck());
}

TEST_ONCE(error_string_for_every_status)
{
    static const struct { cudnnStatus_t s; const char *name; } all[] = {
        {CUDNN_STATUS_SUCCESS, "CUDNN_STATUS_SUCCESS"},
        {CUDNN_STATUS_NOT_INITIALIZED, "CUDNN_STATUS_NOT_INITIALIZED"},
        {CUDNN_STATUS_ALLOC_FAILED, "CUDNN_STATUS_ALLOC_FAILED"},
        {CUDNN_STATUS_BAD_PARAM, "CUDNN_STATUS_BAD_PARAM"},
        {CUDNN_STATUS_INTERNAL_ERROR, "CUDNN_STATUS_INTERNAL_ERROR"},
        {CUDNN_STATUS_INVALID_VALUE, "CUDNN_STATUS_INVALID_VALUE"},
        {CUDNN_STATUS_ARCH_MISMATCH, "CUDNN_STATUS_ARCH_MISMATCH"},
        {CUDNN_STATUS_MAPPING_ERROR, "CUDNN_STATUS_MAPPING_ERROR"},
        {CUDNN_STATUS_EXECUTION_FAILED, "CUDNN_STATUS_EXECUTION_FAILED"},
        {CUDNN_STATUS_NOT_SUPPORTED, "CUDNN_STATUS_NOT_SUPPORTED"},
        {CUDNN_STATUS_LICENSE_ERROR, "CUDNN_STATUS_LICENSE_ERROR"},
        {CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING, "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING"},
        {CUDNN_STATUS_RUNTIME_IN_PROGRESS, "CUDNN_STATUS_RUNTIME_IN_PROGRESS"},
        {CUDNN_STATUS_RUNTIME_FP_OVERFLOW, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW"},
        {CUDNN_STATUS_VERSION_MISMATCH, "CUDNN_STATUS_VERSION_MISMATCH"},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK(strcmp(cudnnGetErrorString(all[i].s), all[i].name) == 0);
    CHECK(strcmp(cudnnGetErrorString((cudnnStatus_t)12345), "CUDNN_UNKNOWN_STATUS") == 0);
}

TEST(handle_lifecycle_and_stream)
{
    cudnnHandle_t h = NULL;
    CHECK_STATUS(cudnnCreate(NULL), CUDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(cudnnCreate(&h))) return;
    cudaStream_t s = (cudaStream_t)(uintptr_t)1;
    CHECK_OK(cudnnGetStream(h, &s));
    CHECK(s == NULL);
    CHECK_OK(cudnnSetStream(h, NULL));
    CHECK_STATUS(cudnnGetStream(h, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetStream(NULL, &s), CUDNN_STATUS_BAD_PARAM);
    cudnnStatus_t rs = CUDNN_STATUS_INTERNAL_ERROR;
    CHECK_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_BLOCKING, NULL));
    CHECK(rs == CUDNN_STATUS_SUCCESS);
    CHECK_STATUS(cudnnQueryRuntimeError(h, NULL, CUDNN_ERRQUERY_BLOCKING, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroy(h));
    /* a destroyed handle is rejected, not dereferenced */
    CHECK_STATUS(cudnnDestroy(h), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetStream(h, NULL), CUDNN_STATUS_BAD_PARAM);
    /* a descriptor is not a handle */
    cudnnTensorDescriptor_t t;
    CHECK_OK(cudnnCreateTensorDescriptor(&t));
    CHECK_STATUS(cudnnDestroy((cudnnHandle_t)(void *)t), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyTensorDescriptor(t));
}

TEST_ONCE(unknown_forced_backend_fails_cleanly)
{
    const char *saved = getenv("OPENCUDNN_BACKEND");
    char copy[32];
    snprintf(copy, sizeof copy, "%s", saved ? saved : "");
    ocd_setenv("OPENCUDNN_BACKEND", "no-such-backend");
    cudnnHandle_t h = (cudnnHandle_t)(uintptr_t)0x1234;
    CHECK_STATUS(cudnnCreate(&h), CUDNN_STATUS_NOT_INITIALIZED);
    CHECK(h == (cudnnHandle_t)(uintptr_t)0x1234); /* nothing written */
    ocd_setenv("OPENCUDNN_BACKEND", copy);
}

TEST(many_handles_per_process)
{
    cudnnHandle_t h[8];
    for (int i = 0; i < 8; i++) CHECK_OK(cudnnCreate(&h[i]));
    for (int i = 0; i < 8; i++) CHECK_OK(cudnnDestroy(h[i]));
}

/* ---- logging through a callback ------------------------------------------------------------------ */

struct captured {
    int count, errors;
    char last[512];
    cudnnStatus_t last_status;
};

static void capture(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    struct captured *c = udata;
    c->count++;
    if (sev == CUDNN_SEV_ERROR) c->errors++;
    c->last_status = dbg->cudnnStatus;
    /* the lines end in NULs, the message in two: kept joined by newlines */
    size_t n = 0;
    for (const char *line = msg; *line != '\0' && n < sizeof c->last; line += strlen(line) + 1)
        n += (size_t)snprintf(c->last + n, sizeof c->last - n, "%s%s", n ? "\n" : "", line);
}

TEST_ONCE(callback_receives_errors_and_api_calls)
{
    unsigned mask0;
    void *udata0;
    cudnnCallback_t fn0;
    CHECK_OK(cudnnGetCallback(&mask0, &udata0, &fn0));
    struct captured c = {0};
    CHECK_OK(cudnnSetCallback(CUDNN_SEV_ERROR_EN, &c, capture));
    unsigned mask;
    void *udata;
    cudnnCallback_t fn;
    CHECK_OK(cudnnGetCallback(&mask, &udata, &fn));
    CHECK(mask == CUDNN_SEV_ERROR_EN && udata == &c && fn == capture);
    cudnnTensorDescriptor_t t;
    CHECK_OK(cudnnCreateTensorDescriptor(&t));
    CHECK(c.count == 0); /* info is off */
    CHECK_STATUS(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -2, 3, 4),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(c.errors == 1);
    CHECK(c.last_status == CUDNN_STATUS_BAD_PARAM);
    CHECK(strstr(c.last, "cudnnSetTensor4dDescriptor") != NULL);
    CHECK_OK(cudnnSetCallback(CUDNN_SEV_INFO_EN, &c, capture));
    int before = c.count;
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4));
    CHECK(c.count == before + 1);
    CHECK(strstr(c.last, "cudnnSetTensor4dDescriptor") != NULL && strstr(c.last, "c=2") != NULL);
    CHECK_OK(cudnnDestroyTensorDescriptor(t));
    CHECK_OK(cudnnSetCallback(mask0, udata0, fn0));
    CHECK_STATUS(cudnnGetCallback(NULL, &udata, &fn), CUDNN_STATUS_BAD_PARAM);
}
