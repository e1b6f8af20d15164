/* conv_reach.h: what the entry tests (tests/conv_entries*.c) share: whether a convolution reaches
   the implementation expected and computes what the reference computes, with the checks they
   make of the machine first. */
#ifndef OCD_TESTS_CONV_REACH_H
#define OCD_TESTS_CONV_REACH_H

#include "conv_harness.h"

/* Whether the library can load cuBLAS (the names cuda/cublas_loader.cu tries). */
bool cublas_loadable(void);
/* Whether the device is of compute capability 9.0, where the sm_90a entries (kind) serve; a line
   says so when not. */
bool on_hopper(const char *kind);
/* The batch that makes an NCHW dx of c channels over h x w pixels of esize bytes at least three
   quarters of the GPU's L2, where strided backward data runs staged (conv_igemm.cu's stage_wanted). */
int staged_batch(int c, int h, int w, int esize);

/* Float NCHW data under DEFAULT_MATH (TF32 where the entry takes it), filter NCHW. */
extern const struct config tf32_nchw;

/* The convolution of sh in cf and direction d, forced to algo with the OPENCUDNN_DISABLE list
   disable (NULL: none), runs an entry whose name begins with prefix, and computes what the
   reference computes (saturated to an integer destination's range; unsigned 8-bit data drawn
   from 0..255, the others from -1..1). */
void check_entry_reached(const struct shape *sh, const struct config *cf, enum dir d, int algo, const char *prefix,
                         const char *disable);

/* A case of the tables below: check_entry_reached's shape, configuration, entry prefix and
   OPENCUDNN_DISABLE list (NULL: none). */
struct entry_case {
    const struct shape *sh;
    const struct config *cf;
    const char *prefix, *disable;
};

/* check_entry_reached on each of the n cases, in direction d under algo. */
void check_entries_reached(const struct entry_case *cases, size_t n, enum dir d, int algo);
/* check_entries_reached (beta 0), then each case checked through algo at beta 0 and 0.5
   (check_direction), under its OPENCUDNN_DISABLE list. */
void check_entries_blended(const struct entry_case *cases, size_t n, enum dir d, int algo);

#endif
