/* philox.h: the Philox4x32-10 counter-based random number generator, one definition for the
   host and the CUDA backends.

   Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
   SC 2011) maps a 128-bit counter and a 64-bit key to 128 random bits through ten rounds of two
   32x32->64-bit multiplications, with the key bumped by a Weyl sequence between rounds. Being a
   pure function of (counter, key), it lets every element of a tensor draw its random number
   independently, in any order, on any backend, with bit-identical results: that is why dropout
   uses it. The function here is compiled by the C compiler for the host backend and by nvcc for
   device code (core/hostdev.h), so both backends run this very code. */
#ifndef OCD_CORE_PHILOX_H
#define OCD_CORE_PHILOX_H

#include <stdint.h>

#include "core/hostdev.h"

/* The round multipliers and the key increments (the golden ratio and sqrt(3) - 1 in 0.32 fixed
   point) of the published algorithm. */
#define OCD_PHILOX_M0 0xD2511F53u
#define OCD_PHILOX_M1 0xCD9E8D57u
#define OCD_PHILOX_W0 0x9E3779B9u
#define OCD_PHILOX_W1 0xBB67AE85u

struct ocd_philox4 {
    uint32_t v[4];
};

/* The four 32-bit outputs for counter (c0, c1, c2, c3) and key (k0, k1); c0 and k0 are the low
   words. Each round: (hi0, lo0) = M0 * c0, (hi1, lo1) = M1 * c2, and the new counter is
   (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0); the key grows by (W0, W1) from one round to the
   next. */
OCD_HOST_DEVICE struct ocd_philox4 ocd_philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2,
                                                     uint32_t c3, uint32_t k0, uint32_t k1)
{
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)OCD_PHILOX_M0 * c0, p1 = (uint64_t)OCD_PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += OCD_PHILOX_W0;
        k1 += OCD_PHILOX_W1;
    }
    struct ocd_philox4 r = {{c0, c1, c2, c3}};
    return r;
}

#endif /* OCD_CORE_PHILOX_H */
