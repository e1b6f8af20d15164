/* conv_fft.h: the plan of the FFT convolution algorithms (FFT and FFT_TILING, every direction),
   shared by the host and CUDA entries.

   Main decision: the three directions are one computation. With unit strides and dilations, the
   forward output o of a spatial dim reads padded input positions o .. o + R - 1. Outputs are cut
   into tiles of `step` positions; tile t sees the padded input window [t*step, t*step + len) and
   the output segment [t*step, t*step + step), zero beyond the tensor; len >= step + R - 1 makes
   every product below a linear one (no wrap-around). Per frequency, with X the transform of an
   input window, Y of an output segment and W of the filter (mirrored in CONVOLUTION mode), all
   zero-padded to len:
     forward          Y[n,t,k] = sum_c X[n,t,c] * conj W[k,c]     y = the first `step` values
     backward data    X[n,t,c] = sum_k Y[n,t,k] * W[k,c]          dx = the windows overlap-added
     backward filter  W[k,c]   = sum_(n,t) X[n,t,c] * conj Y[n,t,k]   dw = the first R values
   FFT is one tile covering the whole padded input (len the smallest 2^a 3^b 5^c 7^d at least
   that size); FFT_TILING uses tiles of 32 (64 for filters larger than 16) and is thereby
   independent of the image size. The products per frequency are small complex GEMMs per group,
   described once (struct ocd_conv_fft_gemm) for both backends' channel kernels.

   Spectra are 2-D real-to-complex transforms: len[0] x (len[1]/2 + 1) values, stored one after
   another, the filter's first, then the input windows' (n, t, c), then the output segments'
   (n, t, k) (ocd_conv_fft_spectra). */
#ifndef OCD_PROBLEM_CONV_FFT_H
#define OCD_PROBLEM_CONV_FFT_H

#include "problem/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_conv_fft_plan {
    bool tiling;
    int64_t len[2];   /* transform size of H and W */
    int64_t step[2];  /* output positions of a tile */
    int64_t tiles[2]; /* tiles of H and W */
    int64_t half;     /* len[1] / 2 + 1 */
    int64_t freq;     /* complex values of one spectrum: len[0] * half */
    int64_t segs;     /* tiles[0] * tiles[1] */
    int64_t w_specs, x_specs, y_specs; /* K*C/G filters, N*segs*C windows, N*segs*K segments */
};

/* Fills the plan of FFT (tiling false) or FFT_TILING for a problem the documented rules admit;
   returns a reason when this implementation cannot run it (3-D), else NULL. */
const char *ocd_conv_fft_plan_init(struct ocd_conv_fft_plan *plan, const struct ocd_conv_problem *p, bool tiling);

/* Complex values of all spectra (filter, windows, segments). */
int64_t ocd_conv_fft_spectra(const struct ocd_conv_fft_plan *plan);

/* The products of a direction, per group g and frequency f:
     D[m][n] = sum_k op_a(A[m][k]) * op_b(B[k][n])     (op: conjugate when conj is set)
   where each operand names a spectrum set (OCD_CONV_FFT_W, _X, _Y) and element (i, j) of group g
   is spectrum g * group + i * row + j * col of that set. */
enum ocd_conv_fft_set { OCD_CONV_FFT_W, OCD_CONV_FFT_X, OCD_CONV_FFT_Y };
struct ocd_conv_fft_operand {
    enum ocd_conv_fft_set set;
    int64_t group, row, col;
    bool conj;
};
struct ocd_conv_fft_gemm {
    int64_t m, n, k, groups;
    struct ocd_conv_fft_operand a, b, d;
};
void ocd_conv_fft_gemm_of(const struct ocd_conv_problem *p, const struct ocd_conv_fft_plan *plan,
                          struct ocd_conv_fft_gemm *g);

/* Offset (in spectra) of the first spectrum of a set. */
int64_t ocd_conv_fft_set_base(const struct ocd_conv_fft_plan *plan, enum ocd_conv_fft_set set);

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_CONV_FFT_H */
