/* ref/dropout.c: see ref/dropout.h. Plain code, sharing nothing with src/. */
#include "ref/dropout.h"

#include <math.h>

static void mulhilo32(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t product = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(product >> 32);
    *lo = (uint32_t)(product & 0xffffffffu);
}

void ref_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    static const uint32_t multiplier[2] = {0xD2511F53u, 0xCD9E8D57u};
    static const uint32_t weyl[2] = {0x9E3779B9u, 0xBB67AE85u};
    uint32_t x[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int round = 1; round <= 10; round++) {
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo32(multiplier[0], x[0], &hi0, &lo0);
        mulhilo32(multiplier[1], x[2], &hi1, &lo1);
        uint32_t y[4] = {hi1 ^ x[1] ^ k[0], lo1, hi0 ^ x[3] ^ k[1], lo0};
        for (int i = 0; i < 4; i++) x[i] = y[i];
        if (round < 10) {
            k[0] += weyl[0];
            k[1] += weyl[1];
        }
    }
    for (int i = 0; i < 4; i++) out[i] = x[i];
}

void ref_dropout_mask(uint64_t seed, uint64_t call, float p, int64_t n, bool *keep)
{
    double threshold = floor((double)p * 4294967296.0 + 0.5);
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, words[4];
    for (int64_t i = 0; i < n; i++) {
        if (i % 4 == 0) {
            uint64_t block = (uint64_t)i / 4;
            uint32_t counter[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)call, (uint32_t)(call >> 32)};
            ref_philox4x32_10(counter, key, words);
        }
        keep[i] = (double)words[i % 4] >= threshold;
    }
}
