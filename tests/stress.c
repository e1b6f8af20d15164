/* stress.c: the short form of the threads-and-streams stress workload (bench/stress_work.c):
   16 threads, each with its own handle, on shared read-only descriptors and inputs, changing their
   handle's stream between calls; every output must equal the single-threaded run's bit for bit.
   Both problem sizes (stress_work.h): the full one and the small one of the GPU's racecheck.
   bench/stress.c runs the same workload for minutes; tools/tsan.sh runs this test under
   ThreadSanitizer. */
#include "test.h"

#include <string.h>

#include "../bench/stress_work.h"

#ifndef _WIN32 /* the workload uses POSIX threads; the Windows build runs without it */
static void stress_check(enum stress_size size)
{
    struct stress_options o = {.threads = 16, .iterations = 12, .recreate = 5,
                               .cuda = strcmp(test_backend, "cuda") == 0, .size = size};
    struct stress_result r;
    if (!CHECK(stress_run(&o, &r) == 0)) {
        FAIL("setup: %s", r.first_error);
        return;
    }
    CHECK(r.cases == 16 * 12);
    if (!CHECK(r.mismatches == 0 && r.failures == 0))
        FAIL("%ld mismatches, %ld failures; first: %s", r.mismatches, r.failures, r.first_error);
}

TEST(stress_threads_streams)
{
    stress_check(STRESS_FULL);
}

/* the small size, which tools/gpu-check.sh runs under compute-sanitizer racecheck and synccheck */
TEST(stress_threads_streams_small)
{
    stress_check(STRESS_SMALL);
}
#endif
