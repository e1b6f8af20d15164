/* host_peak.h: the fp32 FMA peak of the host processor, shared by bench.c and onednn_conv.c. */
#ifndef BENCH_HOST_PEAK_H
#define BENCH_HOST_PEAK_H

#include <stdio.h>
#include <unistd.h>

/* The fp32 FMA peak of the host processor in GFLOP/s, or 0 when unknown: online processors x
   the highest "cpu MHz" of /proc/cpuinfo x 32 flops per cycle (two FMA units of eight fp32 lanes,
   a multiply and an add each: AVX2 processors from Haswell and Zen 2 on; a processor with one
   unit, or running above the listed clock, makes the share of it misleading). */
static inline double host_fma_peak(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) return 0;
    char line[256];
    double mhz = 0, v;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "cpu MHz : %lf", &v) == 1 && v > mhz) mhz = v;
    fclose(f);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (double)cores * mhz * 32 / 1e3 : 0;
}

#endif /* BENCH_HOST_PEAK_H */
