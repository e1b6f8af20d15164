/* stress.c: the threads-and-streams stress program (issue 26): the workload of stress_work.c run
   for minutes rather than the seconds of its short form in the test suite (tests/stress.c).

   Usage: opencudnn_stress [--threads N] [--seconds S | --iterations N] [--recreate N]
                           [--backend host|cuda] [--size full|small]
   Defaults: 16 threads, 60 seconds, a new handle every 50 cases, the cuda backend when the program
   was built with it and a device is usable, the full size. The small size makes the same calls on
   problems of a few blocks a kernel launch, for compute-sanitizer's racecheck (stress_work.c).
   Prints one line per mismatch or failure and a summary; exits 0 only when every output matched
   the single-threaded run and no call failed. Run it under ThreadSanitizer with tools/tsan.sh, and
   on a GPU under compute-sanitizer at the small size (README, tools/gpu-check.sh). */
#include "stress_work.h"

#include <cudnn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_CUDA
#include <cuda_runtime.h>
#endif

static int usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--threads N] [--seconds S | --iterations N] [--recreate N] [--backend host|cuda]"
            " [--size full|small]\n",
            argv0);
    return 2;
}

int main(int argc, char **argv)
{
    struct stress_options o = {.threads = 16, .seconds = 60.0, .recreate = 50, .log = stdout};
    const char *backend = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) return usage(argv[0]);
        if (strcmp(argv[i], "--threads") == 0) o.threads = atoi(v);
        else if (strcmp(argv[i], "--seconds") == 0) o.seconds = atof(v);
        else if (strcmp(argv[i], "--iterations") == 0) o.iterations = atoi(v);
        else if (strcmp(argv[i], "--recreate") == 0) o.recreate = atoi(v);
        else if (strcmp(argv[i], "--backend") == 0) backend = v;
        else if (strcmp(argv[i], "--size") == 0 && strcmp(v, "full") == 0) o.size = STRESS_FULL;
        else if (strcmp(argv[i], "--size") == 0 && strcmp(v, "small") == 0) o.size = STRESS_SMALL;
        else return usage(argv[0]);
        i++;
    }
    if (o.threads < 1) return usage(argv[0]);
#ifdef BENCH_CUDA
    int devices = 0;
    if (backend == NULL) backend = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 ? "cuda" : "host";
#else
    if (backend == NULL) backend = "host";
#endif
    o.cuda = strcmp(backend, "cuda") == 0;
    setenv("OPENCUDNN_BACKEND", backend, 1);
    printf("stress: backend %s, %d threads, %s size, %s\n", backend, o.threads,
           o.size == STRESS_SMALL ? "small" : "full", o.iterations ? "fixed iterations" : "timed");
    struct stress_result r;
    if (stress_run(&o, &r) != 0) {
        printf("stress: setup failed: %s\n", r.first_error);
        return 1;
    }
    bool ok = r.mismatches == 0 && r.failures == 0;
    printf("stress: %s\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
}
