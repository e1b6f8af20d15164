/* runner.c: runs every registered test on every backend present and prints
   "N passed, N failed" (with the skipped count) as its last line.

   Usage: opencudnn_tests [-b host|cuda] [-k substring] [-f file] [-l]
     -b  run only that backend's pass      -k  run only tests whose name contains substring
     -f  run only the tests defined in that test file (pooling.c or pooling; ctest runs each
         file so, as its own entry unit_<file>)
     -l  list the tests, each with its file
   The random seed is printed; OPENCUDNN_TEST_SEED=<n> replays a run. */
#include "test.h"

#include "core/platform.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <execinfo.h>
#include <unistd.h>
#endif

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

struct test_entry {
    const char *name, *file;
    test_fn fn;
    bool once;
};

static struct test_entry tests[1024];
static int ntests;
static int current_failures;
static cudnnHandle_t current_handle;
const char *test_backend = "host";

void test_register(const char *name, test_fn fn, bool once, const char *file)
{
    if (ntests == (int)(sizeof tests / sizeof tests[0])) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[ntests++] = (struct test_entry){name, file, fn, once};
}

bool test_check(bool cond, const char *expr, const char *file, int line)
{
    if (!cond) {
        current_failures++;
        printf("    FAILED %s:%d: %s\n", file, line, expr);
    }
    return cond;
}

bool test_check_status(cudnnStatus_t got, cudnnStatus_t want, const char *expr, const char *file, int line)
{
    if (got == want) return true;
    current_failures++;
    printf("    FAILED %s:%d: %s\n      returned %s, expected %s\n", file, line, expr,
           cudnnGetErrorString(got), cudnnGetErrorString(want));
    return false;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    current_failures++;
    printf("    FAILED %s:%d: ", file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

bool current_test_failed(void)
{
    return current_failures > 0;
}

cudnnHandle_t test_handle(void)
{
    if (current_handle == NULL) {
        cudnnStatus_t s = cudnnCreate(&current_handle);
        if (s != CUDNN_STATUS_SUCCESS) {
            printf("cannot create a handle on the %s backend: %s\n", test_backend, cudnnGetErrorString(s));
            exit(2);
        }
    }
    return current_handle;
}

void *test_lib_symbol(const char *file, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", OCD_LIB_DIR, file);
    void *lib = ocd_dl_open(path, NULL, 0);
    if (lib == NULL) lib = ocd_dl_open(file, NULL, 0);
    return lib != NULL ? ocd_dl_symbol(lib, name) : NULL;
}

static bool cuda_present(void)
{
#ifdef OCD_TEST_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return n > 0;
#else
    return false;
#endif
}

extern void trand_seed(uint64_t seed);

/* A test that crashes names itself and, with glibc, prints the call stack (frames as
   library(+offset): addr2line -f -e library offset resolves them in a build with -g), then dies
   of the same signal. Only async-signal-safe calls: write and backtrace_symbols_fd. */
static const char *volatile running_test = "(none)";

static void crash_report(int sig)
{
#ifdef __GLIBC__
    static const char head[] = "\n*** fatal signal in test ";
    const char *name = running_test;
    ssize_t ignored = write(2, head, sizeof head - 1);
    ignored += write(2, name, strlen(name));
    ignored += write(2, "\n", 1);
    (void)ignored;
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
#else
    fprintf(stderr, "\n*** fatal signal in test %s\n", running_test);
#endif
    signal(sig, SIG_DFL);
    raise(sig);
}

/* True when the test was defined in `file`: its base name, with or without the ".c". */
static bool file_selected(const char *path, const char *file)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(file);
    return strncmp(base, file, n) == 0 && (base[n] == '\0' || strcmp(base + n, ".c") == 0);
}

/* True when the test's name contains one of the filter's comma-separated substrings. */
static bool name_selected(const char *name, const char *filter)
{
    for (const char *p = filter;; p++) {
        size_t n = strcspn(p, ",");
        if (n > 0) {
            for (const char *s = name; *s; s++)
                if (strncmp(s, p, n) == 0) return true;
        }
        p += n;
        if (*p == '\0') return false;
    }
}

int main(int argc, char **argv)
{
    const char *only_backend = NULL, *filter = NULL, *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-b") == 0 && i + 1 < argc) only_backend = argv[++i];
        else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc) filter = argv[++i];
        else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc) file = argv[++i];
        else if (strcmp(argv[i], "-l") == 0) {
            for (int t = 0; t < ntests; t++) {
                const char *base = strrchr(tests[t].file, '/');
                printf("%s%s (%s)\n", tests[t].name, tests[t].once ? " (once)" : "", base ? base + 1 : tests[t].file);
            }
            return 0;
        } else {
            fprintf(stderr, "usage: %s [-b host|cuda] [-k substring[,substring...]] [-f file] [-l]\n", argv[0]);
            return 2;
        }
    }
    if (file) {
        int defined = 0;
        for (int t = 0; t < ntests; t++) defined += file_selected(tests[t].file, file);
        if (defined == 0) {
            fprintf(stderr, "no test is defined in %s\n", file);
            return 2;
        }
    }
    static const int fatal[] = {SIGSEGV, SIGFPE, SIGILL, SIGABRT,
#ifdef SIGBUS
                                SIGBUS,
#endif
    };
#ifdef __GLIBC__
    /* backtrace loads libgcc (through malloc) on its first call: done here, not in a crash
       handler that may run with the malloc lock held */
    void *first[1];
    (void)backtrace(first, 1);
#endif
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], crash_report);
    const char *seed_env = getenv("OPENCUDNN_TEST_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
    printf("opencudnn tests: seed %llu (OPENCUDNN_TEST_SEED=%llu replays)\n", (unsigned long long)seed,
           (unsigned long long)seed);

    const char *backends[2] = {"host", "cuda"};
    int nbackends = cuda_present() ? 2 : 1;
    int passed = 0, failed = 0, skipped = 0;
    for (int b = 0; b < nbackends; b++) {
        if (only_backend && strcmp(only_backend, backends[b]) != 0) continue;
        test_backend = backends[b];
        ocd_setenv("OPENCUDNN_BACKEND", test_backend);
        printf("== backend %s\n", test_backend);
        for (int t = 0; t < ntests; t++) {
            if (filter && !name_selected(tests[t].name, filter)) continue;
            if (file && !file_selected(tests[t].file, file)) continue;
            if (tests[t].once && b > 0 && !(only_backend && strcmp(only_backend, "cuda") == 0)) {
                skipped++;
                continue;
            }
            trand_seed(seed ^ ((uint64_t)t * 0x9e3779b97f4a7c15ULL));
            current_failures = 0;
            running_test = tests[t].name;
            tests[t].fn();
            if (current_handle) {
                cudnnDestroy(current_handle);
                current_handle = NULL;
            }
            printf("  %-50s %s\n", tests[t].name, current_failures ? "FAIL" : "ok");
            fflush(stdout); /* a runner a timeout kills still leaves the tests it finished in its log */
            if (current_failures) failed++;
            else passed++;
        }
    }
    if (nbackends == 1 && (only_backend == NULL || strcmp(only_backend, "cuda") == 0))
        printf("(no CUDA device: the cuda pass did not run)\n");
    /* registry coverage (tests/check_coverage.py): the file ran whole, on these backends */
    const char *coverage = getenv("OPENCUDNN_IMPL_COVERAGE");
    if (coverage != NULL && filter == NULL && only_backend == NULL) {
        char done[1024];
        snprintf(done, sizeof done, "%s.done", coverage);
        FILE *f = fopen(done, "w");
        if (f != NULL) {
            fprintf(f, "host%s\n", nbackends == 2 ? " cuda" : "");
            fclose(f);
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
