/* doctor.c: opencudnn_doctor, the check of an installation: which cuDNN libraries load and from
   where, whether their versions agree with each other and with the headers the doctor was built
   with, which backend and device a handle gets, and whether a small operation computes the right
   result. Prints "All tests passed." and exits 0 when everything holds; each problem is one line
   starting with "PROBLEM:", and the exit status is 1.

   Usage: opencudnn_doctor [--expect-dir DIR]
     --expect-dir  also a problem: any cuDNN library loaded from outside DIR (the install test
                   uses it to prove that an installed program runs on the installed libraries).

   Main decision: the doctor asks the library, not the environment. The backend is the one the
   library reports while creating the handle (its log message "handle ... uses the <name>
   backend", caught with cudnnSetCallback, which also shows why a backend was passed over), and
   the library locations are where the loader actually mapped each one (the module holding a
   function looked up in it), so the answers hold whatever LD_LIBRARY_PATH, run path, PATH or
   preload did. The loader calls are core/platform.h's, so the doctor runs on Windows too. */
#include <cudnn.h>

#include "core/platform.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DOCTOR_CUDA
#include <cuda_runtime.h>
#endif

static int problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("PROBLEM: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    problems++;
}

/* ---- libraries: which, from where --------------------------------------------------------------- */

struct library {
    const char *soname;
    const char *check_name; /* its *VersionCheck function, "" for the front */
    cudnnStatus_t (*check)(void);
};

static const struct library libraries[] = {
    {OCD_LIBRARY_FILE("cudnn"), "", NULL},
    {OCD_LIBRARY_FILE("cudnn_ops_infer"), "cudnnOpsInferVersionCheck", cudnnOpsInferVersionCheck},
    {OCD_LIBRARY_FILE("cudnn_ops_train"), "cudnnOpsTrainVersionCheck", cudnnOpsTrainVersionCheck},
    {OCD_LIBRARY_FILE("cudnn_cnn_infer"), "cudnnCnnInferVersionCheck", cudnnCnnInferVersionCheck},
    {OCD_LIBRARY_FILE("cudnn_cnn_train"), "cudnnCnnTrainVersionCheck", cudnnCnnTrainVersionCheck},
    {OCD_LIBRARY_FILE("cudnn_adv_infer"), "cudnnAdvInferVersionCheck", cudnnAdvInferVersionCheck},
    {OCD_LIBRARY_FILE("cudnn_adv_train"), "cudnnAdvTrainVersionCheck", cudnnAdvTrainVersionCheck},
};

/* The base name of a path, either separator. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/'), *backslash = strrchr(path, '\\');
    if (backslash > slash) slash = backslash;
    return slash ? slash + 1 : path;
}

/* The directory of path with links and "." / ".." resolved, into dir ("" when it has none). */
static void directory_of(const char *path, char *dir, size_t size)
{
    char full[4096];
    ocd_real_path(path, full, sizeof full);
    size_t n = (size_t)(base_name(full) - full);
    if (n > 0) n--; /* the separator */
    if (n >= size) n = size - 1;
    memcpy(dir, full, n);
    dir[n] = '\0';
}

/* Every loaded module that is a cuDNN library (libcudnn*, cudnn*.dll) and is not from `data`,
   the front's directory: a second cuDNN in the process (another framework's copy, say) is worth
   knowing about. */
static void list_foreign(const char *path, void *data)
{
    const char *base = base_name(path);
    if (strncmp(base, "libcudnn", 8) != 0 && strncmp(base, "cudnn", 5) != 0) return;
    char d[4096];
    directory_of(path, d, sizeof d);
    if (!ocd_same_directory(d, data)) printf("  also loaded: %s\n", path);
}

static void check_libraries(const char *expect_dir)
{
    printf("libraries (where the loader mapped them):\n");
    /* Each sub-library's VersionCheck goes through the front, which loads the sub-library: after
       these calls every library is mapped. A failure is a version or loading problem. */
    for (size_t i = 1; i < sizeof libraries / sizeof libraries[0]; i++) {
        cudnnStatus_t s = libraries[i].check();
        if (s != CUDNN_STATUS_SUCCESS)
            problem("%s() returned %s", libraries[i].check_name, cudnnGetErrorString(s));
    }
    char front_dir[4096] = "";
    for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++) {
        void *h = ocd_dl_loaded(libraries[i].soname);
        /* The front is asked for a function it defines itself; a sub-library for its check. */
        void *fn = h ? ocd_dl_symbol(h, i == 0 ? "cudnnGetVersion" : libraries[i].check_name) : NULL;
        char mapped[4096], file[4096];
        bool found = fn != NULL && ocd_module_path(fn, mapped, sizeof mapped);
        if (found) ocd_real_path(mapped, file, sizeof file);
        printf("  %-24s %s\n", libraries[i].soname, found ? file : "(not loaded)");
        if (!found) {
            problem("%s is not loaded", libraries[i].soname);
        } else {
            char dir[4096];
            directory_of(file, dir, sizeof dir);
            if (i == 0) snprintf(front_dir, sizeof front_dir, "%s", dir);
            else if (!ocd_same_directory(dir, front_dir))
                problem("%s comes from %s, not from the front's directory %s", libraries[i].soname, dir,
                        front_dir);
            if (expect_dir != NULL && !ocd_same_directory(dir, expect_dir))
                problem("%s comes from %s, not from %s", libraries[i].soname, dir, expect_dir);
        }
        if (h != NULL) ocd_dl_close(h);
    }
    ocd_for_each_module(list_foreign, front_dir);
}

/* ---- versions -------------------------------------------------------------------------------------- */

static void check_versions(void)
{
    size_t version = cudnnGetVersion();
    int major = -1, minor = -1, patch = -1;
    cudnnGetProperty(MAJOR_VERSION, &major);
    cudnnGetProperty(MINOR_VERSION, &minor);
    cudnnGetProperty(PATCH_LEVEL, &patch);
    printf("versions: headers %d, cudnnGetVersion %zu, cudnnGetProperty %d.%d.%d, cudnnGetCudartVersion %zu\n",
           CUDNN_VERSION, version, major, minor, patch, cudnnGetCudartVersion());
    if (version != CUDNN_VERSION)
        problem("the library is version %zu, the headers %d", version, CUDNN_VERSION);
    if (major * 1000 + minor * 100 + patch != (int)version)
        problem("cudnnGetProperty says %d.%d.%d, cudnnGetVersion %zu", major, minor, patch, version);
}

/* ---- backend and device ---------------------------------------------------------------------------- */

struct creation_log {
    char backend[16];
    int device;
};

/* Catches what the library says while a handle is created: the backend line is parsed, warnings
   and errors (why a backend was passed over) are shown as they are. */
static void on_message(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    (void)dbg;
    struct creation_log *log = udata;
    const char *at = strstr(msg, " uses the ");
    if (at != NULL) sscanf(at, " uses the %15s backend (device %d)", log->backend, &log->device);
    if (sev == CUDNN_SEV_WARNING || sev == CUDNN_SEV_ERROR) printf("  library says: %s\n", msg);
}

static cudnnHandle_t create_handle(struct creation_log *log)
{
    unsigned mask;
    void *udata;
    cudnnCallback_t previous;
    cudnnHandle_t handle = NULL;
    cudnnGetCallback(&mask, &udata, &previous);
    cudnnSetCallback(CUDNN_SEV_ERROR_EN | CUDNN_SEV_WARNING_EN | CUDNN_SEV_INFO_EN, log, on_message);
    cudnnStatus_t s = cudnnCreate(&handle);
    cudnnSetCallback(mask, udata, previous);
    if (s != CUDNN_STATUS_SUCCESS) {
        problem("cudnnCreate returned %s", cudnnGetErrorString(s));
        return NULL;
    }
    const char *forced = getenv("OPENCUDNN_BACKEND");
    printf("backend: %s%s%s%s\n", log->backend[0] ? log->backend : "(not reported)",
           forced ? " (OPENCUDNN_BACKEND=" : "", forced ? forced : "", forced ? ")" : "");
    if (log->backend[0] == '\0') problem("the library did not report the handle's backend");
    return handle;
}

static bool describe_device(const struct creation_log *log)
{
    if (strcmp(log->backend, "cuda") != 0) return strcmp(log->backend, "host") == 0;
#ifdef DOCTOR_CUDA
    struct cudaDeviceProp prop;
    int driver = 0, runtime = 0;
    if (cudaGetDeviceProperties(&prop, log->device) != cudaSuccess) {
        problem("cudaGetDeviceProperties(%d) failed", log->device);
        return false;
    }
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    printf("device %d: %s, sm_%d%d, %d multiprocessors, %.1f GiB; driver %d, runtime %d\n", log->device,
           prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           (double)prop.totalGlobalMem / (1024.0 * 1024 * 1024), driver, runtime);
    return true;
#else
    problem("the handle uses the cuda backend but the doctor was built without CUDA");
    return false;
#endif
}

/* ---- a small operation against a reference -------------------------------------------------------- */

/* Memory on the handle's backend: host memory on the host backend, device memory on cuda. */
static bool on_cuda;

static void *buffer_from(const float *src, size_t n)
{
    void *p = NULL;
#ifdef DOCTOR_CUDA
    if (on_cuda) {
        if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess) return NULL;
        if (cudaMemcpy(p, src, n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess) return p;
        cudaFree(p);
        return NULL;
    }
#endif
    p = malloc(n * sizeof(float));
    if (p != NULL) memcpy(p, src, n * sizeof(float));
    return p;
}

static bool buffer_read(float *dst, const void *src, size_t n)
{
#ifdef DOCTOR_CUDA
    if (on_cuda) return cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
#endif
    memcpy(dst, src, n * sizeof(float));
    return true;
}

static void buffer_free(void *p)
{
#ifdef DOCTOR_CUDA
    if (on_cuda) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

/* y = alpha * bias + beta * y, the bias broadcast over N, H and W: cudnnAddTensor on a 2x3x5x7
   fp32 tensor, checked element by element against the same sum in double. */
static void check_operation(cudnnHandle_t handle)
{
    enum { N = 2, C = 3, H = 5, W = 7, COUNT = N * C * H * W };
    float bias[C] = {0.5f, -1.25f, 2.0f}, y0[COUNT], y[COUNT];
    const float alpha = 0.5f, beta = 2.0f;
    for (int i = 0; i < COUNT; i++) y0[i] = (float)((i * 37) % 101) / 16.0f - 3.0f;

    cudnnTensorDescriptor_t bias_desc = NULL, y_desc = NULL;
    void *d_bias = buffer_from(bias, C), *d_y = buffer_from(y0, COUNT);
    cudnnStatus_t s = CUDNN_STATUS_ALLOC_FAILED;
    if (d_bias != NULL && d_y != NULL && cudnnCreateTensorDescriptor(&bias_desc) == CUDNN_STATUS_SUCCESS &&
        cudnnCreateTensorDescriptor(&y_desc) == CUDNN_STATUS_SUCCESS) {
        s = cudnnSetTensor4dDescriptor(bias_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, C, 1, 1);
        if (s == CUDNN_STATUS_SUCCESS)
            s = cudnnSetTensor4dDescriptor(y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W);
        if (s == CUDNN_STATUS_SUCCESS) s = cudnnAddTensor(handle, &alpha, bias_desc, d_bias, &beta, y_desc, d_y);
    }
    if (s != CUDNN_STATUS_SUCCESS) {
        problem("cudnnAddTensor (bias 1x3x1x1 into 2x3x5x7, fp32) returned %s", cudnnGetErrorString(s));
    } else if (!buffer_read(y, d_y, COUNT)) {
        problem("cannot read the result of cudnnAddTensor back");
    } else {
        double worst = 0;
        for (int i = 0; i < COUNT; i++) {
            double want = (double)alpha * bias[(i / (H * W)) % C] + (double)beta * y0[i];
            double err = fabs(y[i] - want) / fmax(1.0, fabs(want));
            if (!(err <= worst)) worst = err; /* NaN sticks */
        }
        printf("check: cudnnAddTensor, bias 1x3x1x1 into 2x3x5x7 fp32: largest relative error %.3g\n", worst);
        if (!(worst <= 1e-6)) problem("cudnnAddTensor result is wrong (relative error %.3g)", worst);
    }
    cudnnDestroyTensorDescriptor(bias_desc);
    cudnnDestroyTensorDescriptor(y_desc);
    buffer_free(d_bias);
    buffer_free(d_y);
}

int main(int argc, char **argv)
{
    const char *expect_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-dir") == 0 && i + 1 < argc) {
            static char resolved[4096];
            ocd_real_path(argv[++i], resolved, sizeof resolved);
            expect_dir = resolved;
        } else {
            fprintf(stderr, "usage: %s [--expect-dir DIR]\n", argv[0]);
            return 2;
        }
    }
    printf("opencudnn doctor\n");
    check_versions();
    check_libraries(expect_dir);
    struct creation_log log = {"", -1};
    cudnnHandle_t handle = create_handle(&log);
    if (handle != NULL) {
        on_cuda = strcmp(log.backend, "cuda") == 0;
        if (describe_device(&log)) check_operation(handle);
        cudnnStatus_t s = cudnnDestroy(handle);
        if (s != CUDNN_STATUS_SUCCESS) problem("cudnnDestroy returned %s", cudnnGetErrorString(s));
    }
    if (problems == 0) {
        printf("All tests passed.\n");
        return 0;
    }
    printf("%d problem%s found.\n", problems, problems == 1 ? "" : "s");
    return 1;
}
