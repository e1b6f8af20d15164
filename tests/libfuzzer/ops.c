/* ops.c: the libFuzzer harness (clang -fsanitize=fuzzer,address; tools/libfuzz.sh builds and runs
   it). It drives tests/fuzz.c, the random-descriptor test of the tensor, NN and convolution ops
   of every sub-library, with the fuzzer's input as its randomness (trand_bytes: every choice of
   descriptor, dims, strides, type, mode and call is a pair of input bytes), so that coverage
   guides the choices. The test's invariants (a defined status, nothing written by a failed call,
   nothing outside the outputs by a successful one) become aborts, which libFuzzer reports with
   the input that caused them; AddressSanitizer catches the rest.

   This file stands in for tests/runner.c: it collects the fuzz test at registration and gives the
   framework functions that test.h declares, for the host backend. The fuzzer links it with
   libFuzzer's main; replay.c gives it a plain one that replays the committed corpus (ctest
   libfuzzer_corpus). Both compile tests/fuzz.c with FUZZ_HARNESS (its iterations per input). */
#include "test.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *test_backend = "host";
static test_fn fuzz_test;
static int failures;
static cudnnHandle_t handle;

void test_register(const char *name, test_fn fn, bool once, const char *file)
{
    (void)once, (void)file;
    if (strcmp(name, "fuzz_ops_with_random_descriptors") == 0) fuzz_test = fn;
}

static void failed(void)
{
    failures++;
    fflush(stdout);
    abort(); /* libFuzzer keeps the input */
}

bool test_check(bool cond, const char *expr, const char *file, int line)
{
    if (!cond) {
        printf("FAILED %s:%d: %s\n", file, line, expr);
        failed();
    }
    return cond;
}

bool test_check_status(cudnnStatus_t got, cudnnStatus_t want, const char *expr, const char *file, int line)
{
    if (got != want) {
        printf("FAILED %s:%d: %s returned %s, expected %s\n", file, line, expr, cudnnGetErrorString(got),
               cudnnGetErrorString(want));
        failed();
    }
    return got == want;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    printf("FAILED %s:%d: ", file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    failed();
}

bool current_test_failed(void)
{
    return failures > 0;
}

cudnnHandle_t test_handle(void)
{
    if (handle == NULL && cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS) abort();
    return handle;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("OPENCUDNN_BACKEND", "host", 1);
    setenv("OPENCUDNN_NUM_THREADS", "1", 0); /* one thread: a run is a function of its input */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_test == NULL) abort();
    trand_bytes(data, size);
    fuzz_test();
    trand_bytes(NULL, 0);
    return 0;
}
