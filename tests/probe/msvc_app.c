/* msvc_app.c: a program of the Microsoft ABI that links against the import libraries and runs
   under Wine against the DLLs (tests/check_windows.py): proof that the .lib files work for an
   MSVC-style link, made without MSVC (clang --target=x86_64-pc-windows-msvc, lld-link).

   No C runtime is linked (none is installed for that target), so the program is freestanding:
   our headers with the compiler's own stddef.h and stdint.h, an entry point of its own whose
   return value is the process's exit code, and _fltused, the symbol by which MSVC-ABI objects
   that use floating point ask for the runtime's floating-point support. The entry point ends the
   process with ExitProcess (a return would end only this thread, and the library's worker
   threads would keep the process alive); its import library, kernel32.lib, is made by the
   script with llvm-dlltool, as no Windows SDK is installed either. The object is linked
   twice: against cudnn.lib alone (every call imported from cudnn64_8.dll), and against the six
   sub-library import libraries (each call imported from its own DLL). The entry point is run;
   exit code 0, or the number of the check that failed. */
#include <cudnn.h>

int _fltused;
__declspec(dllimport) void __stdcall ExitProcess(unsigned code);

/* ReLU on 8 values through the handle, descriptors and one op of ops_infer. */
static int relu_round_trip(void)
{
    if (cudnnGetVersion() != CUDNN_VERSION) return 10;
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) return 11;
    cudnnTensorDescriptor_t t;
    cudnnActivationDescriptor_t a;
    if (cudnnCreateTensorDescriptor(&t) != CUDNN_STATUS_SUCCESS ||
        cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 2, 2) != CUDNN_STATUS_SUCCESS)
        return 12;
    if (cudnnCreateActivationDescriptor(&a) != CUDNN_STATUS_SUCCESS ||
        cudnnSetActivationDescriptor(a, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0) != CUDNN_STATUS_SUCCESS)
        return 13;
    float x[8] = {-2, -1, 0, 1, 2, 3, -4, 5}, y[8], one = 1, zero = 0;
    if (cudnnActivationForward(h, a, &one, t, x, &zero, t, y) != CUDNN_STATUS_SUCCESS) return 14;
    for (int i = 0; i < 8; i++)
        if (y[i] != (x[i] > 0 ? x[i] : 0)) return 15;
    if (cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM)[0] != 'C') return 16;
    if (cudnnDestroyActivationDescriptor(a) != CUDNN_STATUS_SUCCESS ||
        cudnnDestroyTensorDescriptor(t) != CUDNN_STATUS_SUCCESS || cudnnDestroy(h) != CUDNN_STATUS_SUCCESS)
        return 17;
    return 0;
}

/* One call into each sub-library. */
static int version_checks(void)
{
    if (cudnnOpsInferVersionCheck() != CUDNN_STATUS_SUCCESS) return 20;
    if (cudnnOpsTrainVersionCheck() != CUDNN_STATUS_SUCCESS) return 21;
    if (cudnnCnnInferVersionCheck() != CUDNN_STATUS_SUCCESS) return 22;
    if (cudnnCnnTrainVersionCheck() != CUDNN_STATUS_SUCCESS) return 23;
    if (cudnnAdvInferVersionCheck() != CUDNN_STATUS_SUCCESS) return 24;
    if (cudnnAdvTrainVersionCheck() != CUDNN_STATUS_SUCCESS) return 25;
    return 0;
}

void run(void)
{
    int r = relu_round_trip();
    ExitProcess((unsigned)(r != 0 ? r : version_checks()));
}
