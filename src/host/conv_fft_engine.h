/* conv_fft_engine.h: the host backend's built-in FFT, for the FFT convolution algorithms.

   Complex transforms of any length n (self-sorting Stockham, mixed radix: butterflies for 2, 3
   and 4, a direct DFT for any other prime factor, so smooth lengths of 2, 3, 5 and 7 are fast
   and every length works), in double precision, on batches of sequences stored interleaved
   (element e of sequence b at e * batch + b): the inner loop runs over the batch with unit
   stride. On top of it, 2-D real-to-complex and complex-to-real transforms of h x w arrays that
   keep the w/2 + 1 non-redundant columns: two real rows ride in one complex row transform.

   Why built in (docs/design-notes.md): no build-time or run-time dependency, a licence that is
   ours, and a plan that knows which rows are zero (a filter fills a few rows of its tile). */
#ifndef OCD_HOST_CONV_FFT_ENGINE_H
#define OCD_HOST_CONV_FFT_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_cpx {
    double re, im;
};

#define OCD_FFT_MAX_STAGES 40

/* A complex transform of length n: its radices and per-stage twiddle factors (forward:
   exp(-2 pi i / n) powers, inverse: their conjugates). */
struct ocd_fft {
    int64_t n;
    int stages;
    int radix[OCD_FFT_MAX_STAGES];
    struct ocd_cpx *tw[2]; /* [0] forward, [1] inverse; per stage m*(r-1) twiddles then r roots */
};

/* Sets up a length-n transform; false when memory runs out (nothing to free then). */
bool ocd_fft_init(struct ocd_fft *f, int64_t n);
void ocd_fft_free(struct ocd_fft *f);

/* Transforms `batch` interleaved sequences in data, in place; scratch holds n * batch values.
   The inverse is unnormalised (a round trip multiplies by n). */
void ocd_fft_run(const struct ocd_fft *f, struct ocd_cpx *data, struct ocd_cpx *scratch, int64_t batch, bool inverse);

/* 2-D real transforms of h x w row-major arrays; spectra are h x (w/2 + 1), row-major. */
struct ocd_fft2d {
    int64_t h, w, half;
    struct ocd_fft rows, cols;
};
bool ocd_fft2d_init(struct ocd_fft2d *p, int64_t h, int64_t w);
void ocd_fft2d_free(struct ocd_fft2d *p);
/* Complex values of scratch that the 2-D transforms need. */
int64_t ocd_fft2d_scratch(const struct ocd_fft2d *p);
/* spec = the transform of the h x w array `in`, whose rows from `rows` on are zero (not read). */
void ocd_fft2d_forward(const struct ocd_fft2d *p, const double *in, int64_t rows, struct ocd_cpx *spec,
                       struct ocd_cpx *scratch);
/* out = the first `rows` rows of the unnormalised inverse of spec (spec is overwritten). */
void ocd_fft2d_inverse(const struct ocd_fft2d *p, struct ocd_cpx *spec, int64_t rows, double *out,
                       struct ocd_cpx *scratch);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_CONV_FFT_ENGINE_H */
