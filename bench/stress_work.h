/* stress_work.h: the threads-and-streams stress workload (issue 26), shared by the stress program
   (bench/stress.c, minutes) and its short form in the test suite (tests/stress.c, seconds).

   Many threads, each with its own handle, run a fixed mix of API calls on shared read-only
   descriptors and inputs, switching their handle's stream between calls, and compare every output
   byte for byte with a single-threaded run of the same calls made first. See stress_work.c. */
#ifndef OCD_BENCH_STRESS_WORK_H
#define OCD_BENCH_STRESS_WORK_H

#include <stdbool.h>
#include <stdio.h>

/* The problem sizes (stress_work.c's table): full, and small for compute-sanitizer's racecheck,
   the same calls on problems of a few blocks a kernel launch. */
enum stress_size { STRESS_FULL, STRESS_SMALL };

struct stress_options {
    int threads;       /* worker threads, each with its own handle */
    int iterations;    /* cases per thread; 0: run until `seconds` have passed */
    double seconds;    /* used when iterations is 0 */
    int recreate;      /* a thread destroys and recreates its handle every `recreate` cases (0: never) */
    bool cuda;         /* data in device memory: the handles' backend is cuda */
    enum stress_size size;
    FILE *log;         /* one line per mismatch or failure, and a summary; NULL: quiet */
};

struct stress_result {
    long cases;        /* cases run by the threads (each one to four API calls) */
    long calls;        /* API calls that compute something */
    long mismatches;   /* outputs that differ from the single-threaded run */
    long failures;     /* calls that returned an error */
    char first_error[256];
};

/* Runs the workload; returns 0 when it could be set up (the result then says how it went),
   nonzero with first_error filled when not. */
int stress_run(const struct stress_options *o, struct stress_result *r);

#endif /* OCD_BENCH_STRESS_WORK_H */
