/* conv_emulate.h: what the convolution emulation tests (conv_fft.cu, conv_winograd.cu) share: a
   deterministic random source, so that a failing case repeats, and packed NCHW float views. */
#ifndef OCD_TESTS_EMULATE_CONV_EMULATE_H
#define OCD_TESTS_EMULATE_CONV_EMULATE_H

#include <cstdint>
#include <cstring>

/* A linear congruential source of floats in [-1, 1), one per test file with its own seed. */
struct emu_rng {
    uint32_t state;
    float next()
    {
        state = state * 1664525u + 1013904223u;
        return (float)(state >> 8) / (float)(1u << 23) - 1.0f;
    }
};

/* A packed NCHW float view of dims d. */
static inline struct ocd_tensor_view packed(const int64_t d[4])
{
    struct ocd_tensor_view v;
    memset(&v, 0, sizeof v);
    v.dtype = CUDNN_DATA_FLOAT;
    v.rank = 4;
    v.vect = 1;
    int64_t s = 1;
    for (int i = 3; i >= 0; i--) {
        v.dims[i] = d[i];
        v.strides[i] = s;
        s *= d[i];
    }
    return v;
}

#endif /* OCD_TESTS_EMULATE_CONV_EMULATE_H */
