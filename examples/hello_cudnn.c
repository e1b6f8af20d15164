/* hello_cudnn.c: a complete small cuDNN program. It creates a handle, describes a 2x3x4x5 tensor
   and a per-channel scale of 1x3x1x1, multiplies them element by element with cudnnOpTensor (the
   scale broadcast over N, H and W), checks every result and cleans up.

   Where the data lives: a cuDNN call takes pointers on the handle's device. Built with CUDA
   (HELLO_CUDA) and run where a GPU is present, the program allocates with cudaMalloc, as for any
   cuDNN; otherwise it uses host memory, which opencudnn's host backend computes on directly
   (OPENCUDNN_BACKEND=host asks for that backend even where a GPU is present). */
#include <cudnn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HELLO_CUDA
#include <cuda_runtime.h>
#endif

#define CHECK_CUDNN(call)                                                                          \
    do {                                                                                           \
        cudnnStatus_t status_ = (call);                                                            \
        if (status_ != CUDNN_STATUS_SUCCESS) {                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudnnGetErrorString(status_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#ifdef HELLO_CUDA
#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t error_ = (call);                                                               \
        if (error_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(error_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#endif

/* 1 when the data goes to the GPU: built with CUDA, a device present, the host backend not asked for. */
static int use_gpu(void)
{
#ifdef HELLO_CUDA
    const char *backend = getenv("OPENCUDNN_BACKEND");
    int count = 0;
    if (backend != NULL && strcmp(backend, "host") == 0) return 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); /* no driver or no device: not an error for this program */
        return 0;
    }
    return count > 0;
#else
    return 0;
#endif
}

static int gpu;

/* A copy of n floats where the handle computes. */
static float *to_device(const float *host, size_t n)
{
    float *p;
#ifdef HELLO_CUDA
    if (gpu) {
        CHECK_CUDA(cudaMalloc((void **)&p, n * sizeof *p));
        CHECK_CUDA(cudaMemcpy(p, host, n * sizeof *p, cudaMemcpyHostToDevice));
        return p;
    }
#endif
    p = malloc(n * sizeof *p);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(p, host, n * sizeof *p);
    return p;
}

static void to_host(float *host, const float *data, size_t n)
{
#ifdef HELLO_CUDA
    if (gpu) {
        CHECK_CUDA(cudaMemcpy(host, data, n * sizeof *host, cudaMemcpyDeviceToHost));
        return;
    }
#endif
    memcpy(host, data, n * sizeof *host);
}

static void release(float *data)
{
#ifdef HELLO_CUDA
    if (gpu) {
        CHECK_CUDA(cudaFree(data));
        return;
    }
#endif
    free(data);
}

int main(void)
{
    enum { N = 2, C = 3, H = 4, W = 5, COUNT = N * C * H * W };
    float x[COUNT], scale[C] = {0.5f, -2.0f, 3.0f}, y[COUNT];
    for (int i = 0; i < COUNT; i++) x[i] = (float)(i % 17) - 8.0f;

    /* A program built for one cuDNN must not run on another major.minor version. */
    if (cudnnGetVersion() / 100 != CUDNN_VERSION / 100) {
        fprintf(stderr, "the library is cuDNN %zu but this program was built for %d\n", cudnnGetVersion(),
                CUDNN_VERSION);
        return 1;
    }
    gpu = use_gpu();
    printf("cuDNN %zu, data in %s memory\n", cudnnGetVersion(), gpu ? "device" : "host");

    cudnnHandle_t handle;
    CHECK_CUDNN(cudnnCreate(&handle));
    cudnnTensorDescriptor_t x_desc, scale_desc;
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&x_desc));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&scale_desc));
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(scale_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, C, 1, 1));
    cudnnOpTensorDescriptor_t mul;
    CHECK_CUDNN(cudnnCreateOpTensorDescriptor(&mul));
    CHECK_CUDNN(cudnnSetOpTensorDescriptor(mul, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));

    float *d_x = to_device(x, COUNT), *d_scale = to_device(scale, C), *d_y = to_device(x, COUNT);
    /* y = (alpha1 * x) * (alpha2 * scale) + beta * y; beta = 0, so y's old contents are not read. */
    const float alpha1 = 1.0f, alpha2 = 2.0f, beta = 0.0f;
    CHECK_CUDNN(cudnnOpTensor(handle, mul, &alpha1, x_desc, d_x, &alpha2, scale_desc, d_scale, &beta, x_desc, d_y));
    to_host(y, d_y, COUNT);

    int wrong = 0;
    for (int i = 0; i < COUNT; i++) {
        double want = (double)alpha1 * x[i] * ((double)alpha2 * scale[(i / (H * W)) % C]);
        if (fabs(y[i] - want) > 1e-6 * fmax(1.0, fabs(want))) {
            if (wrong++ < 5) fprintf(stderr, "y[%d] = %g, expected %g\n", i, y[i], want);
        }
    }

    release(d_x);
    release(d_scale);
    release(d_y);
    CHECK_CUDNN(cudnnDestroyOpTensorDescriptor(mul));
    CHECK_CUDNN(cudnnDestroyTensorDescriptor(x_desc));
    CHECK_CUDNN(cudnnDestroyTensorDescriptor(scale_desc));
    CHECK_CUDNN(cudnnDestroy(handle));
    if (wrong) {
        printf("%d of %d results wrong.\n", wrong, COUNT);
        return 1;
    }
    printf("All tests passed.\n");
    return 0;
}
