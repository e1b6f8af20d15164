/* conv_igemm_phases.cuh: the stride phases of strided backward data (conv_igemm.cu's _phases
   entries plan and run them): a phase as a unit-stride problem of its own (its taps, pixels,
   padding and dilation, the views of dx and of the filter it covers), and the pass that gives a
   phase without taps dx = beta * dx. Host code and a kernel that conv_igemm.cu alone includes;
   the CPU emulations check the phases through it. */
#ifndef OCD_CUDA_CONV_IGEMM_PHASES_CUH
#define OCD_CUDA_CONV_IGEMM_PHASES_CUH

#include "cuda/types.cuh"
#include "problem/conv.h"

#include <stdint.h>

#define IGEMM_MAX_PHASES 64

/* The greatest common divisor of two positive numbers. */
static int gcd_of(int a, int b)
{
    while (b != 0) {
        const int t = a % b;
        a = b, b = t;
    }
    return a;
}

/* Phase `ph` (mixed radix over the spatial dims, the last fastest) of a strided backward-data
   problem, as a unit-stride one. Per dim, with stride u, dilation dl and g = gcd(u, dl): input
   pixel a + u i receives tap r from dy[(a + u i + pad - r dl) / u] where u divides the
   numerator, i.e. the taps r0 + (u / g) j from the first one, r0 (none when g does not divide
   a + pad), each reading dy at i + pad' - j (dl / g): a unit-stride problem with dilation dl / g
   and padding pad' = (a + pad - r0 dl) / u, which is negative where r0 dl passes a + pad (only
   with a dilation). *taps is false when no filter tap reaches the phase, *pixels false when it
   holds no input pixel. */
static void phase_problem(const struct ocd_conv_problem *p, int ph, int esize, struct ocd_conv_problem *sub,
                          bool *taps, bool *pixels)
{
    *sub = *p;
    sub->s.flip = false;
    *taps = *pixels = true;
    int64_t xoff = 0, woff = 0;
    for (int d = p->s.nsp - 1; d >= 0; d--) {
        const int u = p->s.stride[d], a = ph % u, pad = p->s.pad[d], dl = p->s.dilation[d], vd = 2 + d;
        ph /= u;
        const int g = gcd_of(u, dl), step = u / g; /* the phase's taps are `step` apart */
        int r0 = -1;                                /* the first tap of the phase */
        for (int r = 0; r < step && r0 < 0; r++)
            if ((a + pad - r * dl) % u == 0) r0 = r;
        const int64_t in = p->s.in[d], filt = p->s.filt[d];
        const int64_t pixels_d = in > a ? (in - a + u - 1) / u : 0;
        const int64_t taps_d = r0 >= 0 && filt > r0 ? (filt - r0 + step - 1) / step : 0;
        r0 = r0 >= 0 ? r0 : 0;
        sub->s.in[d] = pixels_d, sub->s.filt[d] = taps_d;
        sub->s.pad[d] = (a + pad - r0 * dl) / u, sub->s.stride[d] = 1, sub->s.dilation[d] = dl / g;
        xoff += a * p->x.strides[vd];
        sub->x.dims[vd] = pixels_d, sub->x.strides[vd] = p->x.strides[vd] * u;
        /* the phase's taps of the cross-correlation filter: w itself, or w mirrored */
        woff += (p->s.flip ? filt - 1 - r0 : r0) * p->w.strides[vd];
        sub->w.dims[vd] = taps_d, sub->w.strides[vd] = p->w.strides[vd] * step * (p->s.flip ? -1 : 1);
        *taps = *taps && taps_d > 0;
        *pixels = *pixels && pixels_d > 0;
    }
    /* (the workspace queries have no data: no offset is applied to NULL) */
    sub->x_data = p->x_data ? (char *)p->x_data + xoff * esize : NULL;
    sub->w_data = p->w_data ? (char *)p->w_data + woff * esize : NULL;
}

/* The number of stride phases: the product of the strides. */
static int phase_count(const struct ocd_conv_problem *p)
{
    int phases = 1;
    for (int d = 0; d < p->s.nsp; d++) phases *= p->s.stride[d];
    return phases;
}

/* dx = beta * dx over a phase without taps (a strided view of dx); beta == 0 writes zeros
   without reading. A warp walks 32 neighbouring elements of the view's fastest dim (channels, in
   NHWC), so that its stores are coalesced; each thread decodes its row (the other dims) once and
   takes every 32nd element of it (a run of 8 elements per thread would make each store
   instruction of a warp span 32 sectors, at twice the time). */
struct igemm_view5 {
    uint32_t rows;      /* the product of the four slower extents */
    uint32_t len;       /* the fastest dim's extent */
    ocd_fastdiv div[3]; /* the three slower extents after it, fastest first */
    uint32_t st[5];     /* the strides, fastest dim first (dx's count is below 2^31, so is any offset) */
};

template <typename T> __global__ void igemm_scale_view(T *x, const igemm_view5 v, float beta)
{
    for (uint32_t row = blockIdx.x * blockDim.y + threadIdx.y; row < v.rows; row += gridDim.x * blockDim.y) {
        uint32_t rest = row, digit, off = 0;
#pragma unroll
        for (int d = 0; d < 3; d++) {
            rest = ocd_fastdiv_divmod(v.div[d], rest, &digit);
            off += digit * v.st[d + 1];
        }
        off += rest * v.st[4];
        for (uint32_t e = threadIdx.x; e < v.len; e += 32) {
            T *p = x + off + e * v.st[0];
            *p = beta == 0.f ? T(0.f) : T(beta * (float)*p);
        }
    }
}

#endif /* OCD_CUDA_CONV_IGEMM_PHASES_CUH */
