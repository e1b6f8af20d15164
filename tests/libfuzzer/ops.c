/* ops.c: the libFuzzer harness (clang -fsanitize=fuzzer,address; tools/libfuzz.sh builds and runs
   it). It drives the random-descriptor tests with the fuzzer's input as their randomness: the
   first byte picks the test (modulo their count, in the order of `targets`; with
   OPENCUDNN_FUZZ_ONLY=adv, say, a run explores the one whose name holds it, other inputs running
   nothing), the rest go to trand_bytes (every choice of descriptor, dims, strides, type, mode,
   attribute and call is a pair of input bytes while they last), so that coverage guides the
   choices. The tests: tests/fuzz.c (the tensor, NN and convolution ops), tests/fuzz_adv.c (RNN,
   attention, CTC) and tests/fuzz_backend.c (the backend graph API). The test's invariants (a
   defined status, nothing written by a failed call, nothing outside the outputs by a successful
   one) become aborts, which libFuzzer reports with the input that caused them; AddressSanitizer
   catches the rest.

   This file stands in for tests/runner.c: it collects the fuzz tests at registration and gives the
   framework functions that test.h declares, for the host backend. The fuzzer links it with
   libFuzzer's main; replay.c gives it a plain one that replays the committed corpus (ctest
   libfuzzer_corpus). Both compile the tests with FUZZ_HARNESS (their iterations per input). */
#include "test.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *test_backend = "host";
static const char *const targets[] = {"fuzz_ops_with_random_descriptors", "fuzz_adv_with_random_descriptors",
                                      "fuzz_backend_with_random_descriptors"};
enum { TARGETS = sizeof targets / sizeof targets[0] };
static test_fn fuzz_tests[TARGETS];
static int only = -1; /* OPENCUDNN_FUZZ_ONLY: the one target a run explores, else all */
static int failures;
static cudnnHandle_t handle;

void test_register(const char *name, test_fn fn, bool once, const char *file)
{
    (void)once, (void)file;
    for (int i = 0; i < TARGETS; i++)
        if (strcmp(name, targets[i]) == 0) fuzz_tests[i] = fn;
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
    const char *name = getenv("OPENCUDNN_FUZZ_ONLY");
    for (int i = 0; name != NULL && *name != '\0' && i < TARGETS; i++)
        if (strstr(targets[i], name) != NULL) only = i;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const int target = size > 0 ? data[0] % TARGETS : 0;
    if (only >= 0 && target != only) return 0; /* another target's input: nothing runs, nothing is covered */
    const test_fn fuzz_test = fuzz_tests[target];
    if (fuzz_test == NULL) abort();
    trand_bytes(size > 0 ? data + 1 : data, size > 0 ? size - 1 : 0);
    fuzz_test();
    trand_bytes(NULL, 0);
    return 0;
}
