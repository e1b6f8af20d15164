/* ref/dropout.h: an independent reference for opencudnn's dropout masks.

   Philox4x32-10 written from its publication (Salmon et al., SC 2011) and checked against the
   Random123 known-answer vectors, and the mask rule opencudnn documents for its dropout (element i
   uses word i % 4 of the block with counter (i / 4, call number) and key seed, and is dropped
   when that word is below round(p * 2^32)). */
#ifndef OCD_TESTS_REF_DROPOUT_H
#define OCD_TESTS_REF_DROPOUT_H

#include <stdbool.h>
#include <stdint.h>

void ref_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

/* keep[i] for the n elements of forward call number `call` (0 for the first call after Set). */
void ref_dropout_mask(uint64_t seed, uint64_t call, float p, int64_t n, bool *keep);

#endif
