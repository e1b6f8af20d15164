/* compat_core.c: call patterns of real programs (docs/compatibility.md) around the library
   itself rather than an op: the log callback as CUDA.jl reads its messages, the version checks
   and queries that bindings make before and after creating a handle, and the CUDA runtime
   version as PyTorch and CUDA.jl read it. */
#include "test.h"

#include <string.h>

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

/* The log callback as CUDA.jl's cuDNN module reads it (lib/cudnn/src/cuDNN.jl, log_message):
   installed with cudnnSetCallback(typemax(UInt32), ...), every mask bit set; the message's
   length found by scanning for two NULs (at most 10000 bytes), the lines split at the single
   ones; the cudnnDebug_t loaded whole. */
struct julia_log {
    int messages, lines, bad;
    char first[128];
};

static void julia_log_message(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    struct julia_log *l = udata;
    (void)sev;
    int len = 0;
    while (len < 10000 && !(msg[len] == '\0' && msg[len + 1] == '\0')) len++;
    if (len >= 10000 || dbg->cudnn_version != CUDNN_VERSION) l->bad++;
    for (int i = 0; i < len; i++) l->bad += msg[i] == '\n';
    l->messages++;
    for (int at = 0; at <= len; at += (int)strlen(msg + at) + 1) {
        if (l->messages == 1 && at == 0) snprintf(l->first, sizeof l->first, "%s", msg);
        l->lines++;
    }
}

TEST_ONCE(compat_callback_cudajl_double_nul_lines)
{
    struct julia_log l = {0};
    unsigned mask0, mask;
    void *udata0, *udata;
    cudnnCallback_t fn0, fn;
    CHECK_OK(cudnnGetCallback(&mask0, &udata0, &fn0));
    CHECK_OK(cudnnSetCallback(0xFFFFFFFFu, &l, julia_log_message));
    CHECK_OK(cudnnGetCallback(&mask, &udata, &fn));
    cudnnTensorDescriptor_t t = NULL;
    cudnnStatus_t created = cudnnCreateTensorDescriptor(&t);
    cudnnStatus_t refused = cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 0, 1, 1, 1);
    CHECK_OK(cudnnSetCallback(mask0, udata0, fn0));
    CHECK_OK(created);
    CHECK_STATUS(refused, CUDNN_STATUS_BAD_PARAM);
    CHECK(mask == (CUDNN_SEV_ERROR_EN | CUDNN_SEV_WARNING_EN | CUDNN_SEV_INFO_EN) && udata == &l &&
          fn == julia_log_message);
    CHECK(l.messages >= 3 && l.bad == 0);
    CHECK(l.lines > l.messages); /* the API calls' messages have their arguments on a second line */
    CHECK(strstr(l.first, "cudnnCreateTensorDescriptor") != NULL);
    cudnnDestroyTensorDescriptor(t);
}

/* The version calls of bindings: cudarc's version_check() (src/cudnn/result.rs) runs the six
   *VersionCheck functions and fails on any status but SUCCESS; uncomplicate/deep-diamond
   (JCudnn) runs four of them before it creates its handle; TensorFlow's GetLoadedCudnnVersion
   (cuda_dnn.cc) reads MAJOR_VERSION, MINOR_VERSION and PATCH_LEVEL through cudnnGetProperty and
   compares them with the headers it was built against, cudnnGetVersion giving the number the
   headers' CUDNN_VERSION spells. */
TEST_ONCE(compat_version_checks_and_properties)
{
    CHECK_OK(cudnnOpsInferVersionCheck());
    CHECK_OK(cudnnOpsTrainVersionCheck());
    CHECK_OK(cudnnCnnInferVersionCheck());
    CHECK_OK(cudnnCnnTrainVersionCheck());
    CHECK_OK(cudnnAdvInferVersionCheck());
    CHECK_OK(cudnnAdvTrainVersionCheck());
    int major = -1, minor = -1, patch = -1;
    CHECK_OK(cudnnGetProperty(MAJOR_VERSION, &major));
    CHECK_OK(cudnnGetProperty(MINOR_VERSION, &minor));
    CHECK_OK(cudnnGetProperty(PATCH_LEVEL, &patch));
    CHECK(major == CUDNN_MAJOR && minor == CUDNN_MINOR && patch == CUDNN_PATCHLEVEL);
    CHECK(cudnnGetVersion() == (size_t)(major * 1000 + minor * 100 + patch));
    CHECK(cudnnGetVersion() == CUDNN_VERSION);
    cudnnHandle_t h = NULL;
    if (CHECK_OK(cudnnCreate(&h))) CHECK_OK(cudnnDestroy(h));
}

/* The CUDA runtime version the library reports: PyTorch's show_config (aten/src/ATen/Version.cpp)
   compares cudnnGetCudartVersion() with the CUDART_VERSION it was built with and prints "built
   against CUDA" when they differ; CUDA.jl's cuDNN module (lib/cudnn/src/base.jl, cuda_version)
   decodes it as major = v / 1000, minor = v % 1000 / 10, patch = v % 10; a Python installer's
   probe reads it through ctypes and keeps it only when not 0. A build with CUDA reports its
   toolkit's version in that encoding; a host-only build reports 0 (no CUDA runtime). */
TEST_ONCE(compat_version_cudart_decoded_by_pytorch_and_cudajl)
{
    const size_t v = cudnnGetCudartVersion();
#ifdef OCD_TEST_CUDA
    CHECK(v == CUDART_VERSION);
    const size_t major = v / 1000, minor = v % 1000 / 10, patch = v % 10;
    CHECK(major >= 11 && minor < 10 && patch == 0);
#else
    CHECK(v == 0);
#endif
}
