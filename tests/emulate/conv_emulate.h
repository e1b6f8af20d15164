/* conv_emulate.h: what the convolution emulation tests (conv_fft.cu, conv_winograd.cu,
   conv_stem.cu...) share: a deterministic random source, so that a failing case repeats, packed
   NCHW float views, and a case's 2-D geometry for the reference and the problem alike. */
#ifndef OCD_TESTS_EMULATE_CONV_EMULATE_H
#define OCD_TESTS_EMULATE_CONV_EMULATE_H

#include <cstdint>
#include <cstdio>
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

/* A plan's verdict `why` on case `name`, which must decline with a reason holding `declines`, or
   plan when that is NULL: 1 when the case ends here and passed, 0 when it failed (each with its
   line), -1 when the plan serves it as it should and the case goes on. */
static inline int emu_plan_verdict(const char *name, const char *why, const char *declines)
{
    if (declines) {
        const bool ok = why != NULL && strstr(why, declines) != NULL;
        printf("%s %s: the plan declines: %s\n", ok ? "ok  " : "FAIL", name, why ? why : "(it plans)");
        return ok;
    }
    if (why == NULL) return -1;
    printf("FAIL %s: the plan declines: %s\n", name, why);
    return 0;
}

#ifdef OCD_TESTS_REF_CONV_H
/* The geometry of a 2-D case (one padding, stride and dilation for both dims) as the reference
   holds it (rc, output sizes included) and as the problem does (s); false when the filter does
   not fit. For the tests that include ref/conv.h first. */
static inline bool emu_conv_geometry(struct ref_conv *rc, struct ocd_conv_shape *s, int n, int c, int k, int h, int w,
                                     int r, int fs, int pad, int stride, int dil, bool flip)
{
    memset(rc, 0, sizeof *rc);
    rc->nsp = 2, rc->n = n, rc->c = c, rc->k = k, rc->groups = 1, rc->convolution = flip;
    rc->in[0] = h, rc->in[1] = w, rc->filt[0] = r, rc->filt[1] = fs;
    rc->pad[0] = rc->pad[1] = pad, rc->stride[0] = rc->stride[1] = stride, rc->dil[0] = rc->dil[1] = dil;
    if (!ref_conv_out_dims(rc)) return false;
    memset(s, 0, sizeof *s);
    s->nsp = 2, s->n = n, s->c = c, s->k = k, s->groups = 1, s->flip = flip;
    for (int i = 0; i < 2; i++) {
        s->in[i] = rc->in[i], s->filt[i] = rc->filt[i], s->out[i] = rc->out[i];
        s->pad[i] = pad, s->stride[i] = stride, s->dilation[i] = dil;
    }
    return true;
}
#endif

#endif /* OCD_TESTS_EMULATE_CONV_EMULATE_H */
