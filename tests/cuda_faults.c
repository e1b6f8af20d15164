/* cuda_faults.c: CUDA faults and cudnnQueryRuntimeError (cuDNN 8.2) in each of its modes.

   "CUDNN_ERRQUERY_RAWCODE: read the error storage location regardless of the kernel completion
   status"; "CUDNN_ERRQUERY_NONBLOCKING: report if all tasks in the user stream of the cuDNN handle
   were completed. If that is the case, report the remote kernel error code", else
   RUNTIME_IN_PROGRESS; "CUDNN_ERRQUERY_BLOCKING: wait for all tasks to complete in the user stream
   before reporting the remote kernel error code". A failed stream synchronization or query is the
   function's own CUDNN_STATUS_INTERNAL_ERROR.

   The faults (a kernel that faults and leaves the context with a sticky error, a stream destroyed
   under a handle) run on the cuda backend only, each in a child process (this program again, one
   test selected, OCD_FAULT_CHILD naming it), since a sticky error ends the CUDA context of the
   process it happens in; the parent checks that the child ran its checks and exited normally,
   neither aborting nor crashing. */
#include "test.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
#endif

enum { FN = 2, FC = 3, FH = 8, FW = 8 };
#define F_ELEMS ((size_t)FN * FC * FH * FW)

/* An activation forward on the handle's stream over x, into y. */
static cudnnStatus_t activation(cudnnHandle_t h, const void *x, void *y)
{
    cudnnTensorDescriptor_t d;
    cudnnActivationDescriptor_t a;
    const float one = 1, zero = 0;
    cudnnCreateTensorDescriptor(&d);
    cudnnCreateActivationDescriptor(&a);
    cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, FN, FC, FH, FW);
    cudnnSetActivationDescriptor(a, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0);
    cudnnStatus_t s = cudnnActivationForward(h, a, &one, d, x, &zero, d, y);
    cudnnDestroyTensorDescriptor(d);
    cudnnDestroyActivationDescriptor(a);
    return s;
}

#ifdef OCD_TEST_CUDA
static atomic_bool gate_open;

/* A host function on the stream that holds it busy until the test opens the gate. */
static void CUDART_CB hold_stream(void *arg)
{
    (void)arg;
    while (!atomic_load(&gate_open)) {
    }
}
#endif

TEST(query_runtime_error_modes)
{
    cudnnHandle_t h = test_handle();
    float *x = tbuf_alloc(F_ELEMS * sizeof(float)), *y = tbuf_alloc(F_ELEMS * sizeof(float));
    tbuf_poison(x, F_ELEMS * sizeof(float));
    CHECK_OK(activation(h, x, y));
    static const cudnnErrQueryMode_t modes[] = {CUDNN_ERRQUERY_RAWCODE, CUDNN_ERRQUERY_NONBLOCKING,
                                                CUDNN_ERRQUERY_BLOCKING};
    /* nothing pending after the BLOCKING query: every mode reads SUCCESS */
    cudnnStatus_t rs = CUDNN_STATUS_INTERNAL_ERROR;
    CHECK_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_BLOCKING, NULL));
    CHECK(rs == CUDNN_STATUS_SUCCESS);
    for (int m = 0; m < 3; m++) {
        rs = CUDNN_STATUS_INTERNAL_ERROR;
        CHECK_OK(cudnnQueryRuntimeError(h, &rs, modes[m], NULL));
        CHECK(rs == CUDNN_STATUS_SUCCESS);
    }
    CHECK_STATUS(cudnnQueryRuntimeError(h, &rs, (cudnnErrQueryMode_t)3, NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnRuntimeTag_t *tag = (cudnnRuntimeTag_t *)(uintptr_t)8;
    CHECK_STATUS(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_RAWCODE, tag), CUDNN_STATUS_BAD_PARAM);
#ifdef OCD_TEST_CUDA
    if (strcmp(test_backend, "cuda") == 0) {
        /* work still running on the handle's stream */
        cudaStream_t st;
        CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess);
        CHECK_OK(cudnnSetStream(h, st));
        atomic_store(&gate_open, false);
        CHECK(cudaLaunchHostFunc(st, hold_stream, NULL) == cudaSuccess);
        CHECK_OK(activation(h, x, y));
        rs = CUDNN_STATUS_INTERNAL_ERROR;
        CHECK_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_NONBLOCKING, NULL));
        CHECK(rs == CUDNN_STATUS_RUNTIME_IN_PROGRESS);
        rs = CUDNN_STATUS_INTERNAL_ERROR;
        CHECK_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_RAWCODE, NULL));
        CHECK(rs == CUDNN_STATUS_SUCCESS);
        /* the query left nothing behind for the next call's launch check */
        CHECK_OK(activation(h, x, y));
        atomic_store(&gate_open, true);
        rs = CUDNN_STATUS_INTERNAL_ERROR;
        CHECK_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_BLOCKING, NULL));
        CHECK(rs == CUDNN_STATUS_SUCCESS);
        CHECK_OK(cudnnSetStream(h, NULL));
        cudaStreamDestroy(st);
    }
#endif
    tbuf_free(x);
    tbuf_free(y);
}

/* ---- faults, in a child process (CUDA builds only) ---------------------------------------------- */
#ifdef OCD_TEST_CUDA

/* True in the child that runs `name`'s scenario. */
static bool fault_child(const char *name)
{
    const char *v = getenv("OCD_FAULT_CHILD");
    return v != NULL && strcmp(v, name) == 0;
}

/* Runs this program again with only test `name` selected, on the cuda backend, OCD_FAULT_CHILD
   naming it; true when the child exited with status 0 (its checks passed). */
static bool run_fault_child(const char *name)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!CHECK(n > 0)) return false;
    self[n] = '\0';
    setenv("OCD_FAULT_CHILD", name, 1);
    char *argv[] = {self, "-b", "cuda", "-k", (char *)name, NULL};
    pid_t pid;
    fflush(stdout);
    int rc = posix_spawn(&pid, self, NULL, NULL, argv, environ);
    unsetenv("OCD_FAULT_CHILD");
    if (!CHECK(rc == 0)) return false;
    int status = 0;
    if (!CHECK(waitpid(pid, &status, 0) == pid)) return false;
    if (WIFSIGNALED(status)) FAIL("%s: the child died of signal %d", name, WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0) FAIL("%s: the child's checks failed (exit %d)", name, WEXITSTATUS(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A kernel of ours reads an address that is not device memory: the fault is sticky (the context
   is lost). Every later call returns EXECUTION_FAILED (or, for the query, INTERNAL_ERROR); none
   aborts; the handle can still be destroyed. */
TEST(cuda_fault_sticky_error)
{
    if (strcmp(test_backend, "cuda") != 0) return;
    if (!fault_child("cuda_fault_sticky_error")) {
        run_fault_child("cuda_fault_sticky_error");
        return;
    }
    cudnnHandle_t h = test_handle();
    float *x = tbuf_alloc(F_ELEMS * sizeof(float)), *y = tbuf_alloc(F_ELEMS * sizeof(float));
    void *bogus = (void *)(uintptr_t)0x10000; /* not mapped on the device */
    cudnnStatus_t s = activation(h, bogus, y);
    CHECK(s == CUDNN_STATUS_SUCCESS || s == CUDNN_STATUS_EXECUTION_FAILED);
    cudnnStatus_t rs = CUDNN_STATUS_SUCCESS;
    CHECK_STATUS(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_BLOCKING, NULL), CUDNN_STATUS_INTERNAL_ERROR);
    CHECK_STATUS(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_NONBLOCKING, NULL), CUDNN_STATUS_INTERNAL_ERROR);
    CHECK_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_RAWCODE, NULL));
    CHECK_STATUS(activation(h, x, y), CUDNN_STATUS_EXECUTION_FAILED);
    CHECK_OK(cudnnDestroy(h));
    cudnnHandle_t again = NULL;
    s = cudnnCreate(&again);
    CHECK(s != CUDNN_STATUS_SUCCESS || again != NULL);
    if (s == CUDNN_STATUS_SUCCESS) cudnnDestroy(again);
    exit(current_test_failed() ? 1 : 0); /* the context is gone: nothing after this can run */
}

/* A stream destroyed while a handle is set to it: the next call fails with EXECUTION_FAILED
   (the launch is refused) rather than crashing, and the handle works again on another stream. */
TEST(cuda_fault_destroyed_stream)
{
    if (strcmp(test_backend, "cuda") != 0) return;
    if (!fault_child("cuda_fault_destroyed_stream")) {
        run_fault_child("cuda_fault_destroyed_stream");
        return;
    }
#ifdef OCD_TEST_CUDA
    cudnnHandle_t h = test_handle();
    float *x = tbuf_alloc(F_ELEMS * sizeof(float)), *y = tbuf_alloc(F_ELEMS * sizeof(float));
    tbuf_poison(x, F_ELEMS * sizeof(float));
    cudaStream_t st;
    CHECK(cudaStreamCreate(&st) == cudaSuccess);
    CHECK_OK(cudnnSetStream(h, st));
    CHECK(cudaStreamDestroy(st) == cudaSuccess);
    CHECK_STATUS(activation(h, x, y), CUDNN_STATUS_EXECUTION_FAILED);
    CHECK_OK(cudnnSetStream(h, NULL));
    CHECK_OK(activation(h, x, y));
    cudnnStatus_t rs = CUDNN_STATUS_INTERNAL_ERROR;
    CHECK_OK(cudnnQueryRuntimeError(h, &rs, CUDNN_ERRQUERY_BLOCKING, NULL));
    CHECK(rs == CUDNN_STATUS_SUCCESS);
    tbuf_free(x);
    tbuf_free(y);
#endif
}
#endif /* OCD_TEST_CUDA */
