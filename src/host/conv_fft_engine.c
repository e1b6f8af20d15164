/* conv_fft_engine.c: see conv_fft_engine.h.

   The complex transform is the self-sorting Stockham form of decimation in frequency: a stage of
   radix r on sub-transforms of length l = r * m, with stride s (the product of earlier radices)
   reads x[(p + j*m) * S + u] and writes y[(r*p + k) * S + u] = w^(p*k) * sum_j a_j * v^(j*k) for
   p < m, u < S = s * batch, where w = exp(-+2 pi i / l) and v = exp(-+2 pi i / r). Output is in
   natural order after the last stage, no bit reversal; u runs over contiguous memory, which is
   the loop the compiler vectorises. Twiddles are computed from exact integer angles (p*k mod l),
   so the error stays at a few ulps times log n. */
#include "host/conv_fft_engine.h"

#include "core/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double two_pi = 6.283185307179586476925286766559;

static struct ocd_cpx cpx_exp(int64_t num, int64_t den, double sign)
{
    double a = two_pi * (double)(num % den) / (double)den;
    return (struct ocd_cpx){cos(a), sign * sin(a)};
}

bool ocd_fft_init(struct ocd_fft *f, int64_t n)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    int64_t rest = n;
    while (rest % 4 == 0 && f->stages < OCD_FFT_MAX_STAGES) f->radix[f->stages++] = 4, rest /= 4;
    for (int64_t r = 2; rest > 1 && f->stages < OCD_FFT_MAX_STAGES; r++)
        while (rest % r == 0) f->radix[f->stages++] = (int)r, rest /= r;
    /* twiddles of every stage: m*(r-1) factors, then the r roots of the radix */
    int64_t total = 0, l = n;
    for (int st = 0; st < f->stages; st++) {
        total += l / f->radix[st] * (f->radix[st] - 1) + f->radix[st];
        l /= f->radix[st];
    }
    for (int dir = 0; dir < 2; dir++) {
        f->tw[dir] = ocd_malloc(sizeof(struct ocd_cpx) * (size_t)(total ? total : 1));
        if (f->tw[dir] == NULL) {
            ocd_fft_free(f);
            return false;
        }
        double sign = dir == 0 ? -1 : 1;
        struct ocd_cpx *t = f->tw[dir];
        l = n;
        for (int st = 0; st < f->stages; st++) {
            int r = f->radix[st];
            int64_t m = l / r;
            for (int64_t p = 0; p < m; p++)
                for (int k = 1; k < r; k++) *t++ = cpx_exp(p * k, l, sign);
            for (int k = 0; k < r; k++) *t++ = cpx_exp(k, r, sign);
            l = m;
        }
    }
    return true;
}

void ocd_fft_free(struct ocd_fft *f)
{
    free(f->tw[0]);
    free(f->tw[1]);
    f->tw[0] = f->tw[1] = NULL;
}

static inline struct ocd_cpx cmul(struct ocd_cpx a, struct ocd_cpx b)
{
    return (struct ocd_cpx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

/* One stage (see the file comment); tw: the stage's m*(r-1) twiddles followed by its r roots;
   sign: -1 forward, +1 inverse (the sign of i in the roots of 3 and 4). */
static void stage(int r, int64_t m, int64_t S, const struct ocd_cpx *restrict x, struct ocd_cpx *restrict y,
                  const struct ocd_cpx *tw, double sign)
{
    const struct ocd_cpx *roots = tw + m * (r - 1);
    for (int64_t p = 0; p < m; p++) {
        const struct ocd_cpx *w = tw + p * (r - 1);
        const struct ocd_cpx *xp = x + p * S;
        struct ocd_cpx *yp = y + r * p * S;
        if (r == 2) {
            for (int64_t u = 0; u < S; u++) {
                struct ocd_cpx a0 = xp[u], a1 = xp[m * S + u];
                yp[u] = (struct ocd_cpx){a0.re + a1.re, a0.im + a1.im};
                yp[S + u] = cmul((struct ocd_cpx){a0.re - a1.re, a0.im - a1.im}, w[0]);
            }
        } else if (r == 4) {
            for (int64_t u = 0; u < S; u++) {
                struct ocd_cpx a0 = xp[u], a1 = xp[m * S + u], a2 = xp[2 * m * S + u], a3 = xp[3 * m * S + u];
                struct ocd_cpx s02 = {a0.re + a2.re, a0.im + a2.im}, d02 = {a0.re - a2.re, a0.im - a2.im};
                struct ocd_cpx s13 = {a1.re + a3.re, a1.im + a3.im}, d13 = {a1.re - a3.re, a1.im - a3.im};
                /* sign * i * d13 */
                struct ocd_cpx id13 = {-sign * d13.im, sign * d13.re};
                yp[u] = (struct ocd_cpx){s02.re + s13.re, s02.im + s13.im};
                yp[S + u] = cmul((struct ocd_cpx){d02.re + id13.re, d02.im + id13.im}, w[0]);
                yp[2 * S + u] = cmul((struct ocd_cpx){s02.re - s13.re, s02.im - s13.im}, w[1]);
                yp[3 * S + u] = cmul((struct ocd_cpx){d02.re - id13.re, d02.im - id13.im}, w[2]);
            }
        } else if (r == 3) {
            const double h = 0.86602540378443864676372317075294 * sign; /* sign * sqrt(3)/2 */
            for (int64_t u = 0; u < S; u++) {
                struct ocd_cpx a0 = xp[u], a1 = xp[m * S + u], a2 = xp[2 * m * S + u];
                struct ocd_cpx s = {a1.re + a2.re, a1.im + a2.im}, d = {a1.re - a2.re, a1.im - a2.im};
                struct ocd_cpx t = {a0.re - 0.5 * s.re, a0.im - 0.5 * s.im};
                struct ocd_cpx id = {-h * d.im, h * d.re}; /* sign * i * sqrt(3)/2 * d */
                yp[u] = (struct ocd_cpx){a0.re + s.re, a0.im + s.im};
                yp[S + u] = cmul((struct ocd_cpx){t.re + id.re, t.im + id.im}, w[0]);
                yp[2 * S + u] = cmul((struct ocd_cpx){t.re - id.re, t.im - id.im}, w[1]);
            }
        } else {
            for (int k = 0; k < r; k++) {
                struct ocd_cpx *yk = yp + k * S;
                for (int64_t u = 0; u < S; u++) yk[u] = xp[u];
                for (int j = 1; j < r; j++) {
                    struct ocd_cpx v = roots[(int64_t)j * k % r];
                    const struct ocd_cpx *xj = xp + j * m * S;
                    for (int64_t u = 0; u < S; u++) {
                        yk[u].re += xj[u].re * v.re - xj[u].im * v.im;
                        yk[u].im += xj[u].re * v.im + xj[u].im * v.re;
                    }
                }
                if (k > 0)
                    for (int64_t u = 0; u < S; u++) yk[u] = cmul(yk[u], w[k - 1]);
            }
        }
    }
}

void ocd_fft_run(const struct ocd_fft *f, struct ocd_cpx *data, struct ocd_cpx *scratch, int64_t batch, bool inverse)
{
    const struct ocd_cpx *tw = f->tw[inverse];
    struct ocd_cpx *x = data, *y = scratch;
    int64_t l = f->n, s = 1;
    for (int st = 0; st < f->stages; st++) {
        int r = f->radix[st];
        int64_t m = l / r;
        stage(r, m, s * batch, x, y, tw, inverse ? 1 : -1);
        tw += m * (r - 1) + r;
        struct ocd_cpx *t = x;
        x = y, y = t;
        l = m, s *= r;
    }
    if (x != data) memcpy(data, x, sizeof *data * (size_t)(f->n * batch));
}

/* ---- 2-D real transforms ------------------------------------------------------------------- */

bool ocd_fft2d_init(struct ocd_fft2d *p, int64_t h, int64_t w)
{
    p->h = h, p->w = w, p->half = w / 2 + 1;
    if (!ocd_fft_init(&p->rows, w)) return false;
    if (!ocd_fft_init(&p->cols, h)) {
        ocd_fft_free(&p->rows);
        return false;
    }
    return true;
}

void ocd_fft2d_free(struct ocd_fft2d *p)
{
    ocd_fft_free(&p->rows);
    ocd_fft_free(&p->cols);
}

int64_t ocd_fft2d_scratch(const struct ocd_fft2d *p)
{
    int64_t cols = p->h * p->half, rows = 2 * p->w;
    return cols > rows ? cols : rows;
}

void ocd_fft2d_forward(const struct ocd_fft2d *p, const double *in, int64_t rows, struct ocd_cpx *spec,
                       struct ocd_cpx *scratch)
{
    const int64_t w = p->w, half = p->half;
    struct ocd_cpx *z = scratch, *tmp = scratch + w;
    for (int64_t i = 0; i < rows; i += 2) {
        /* rows i and i+1 as the real and imaginary parts of one complex row */
        const double *a = in + i * w, *b = i + 1 < rows ? a + w : NULL;
        for (int64_t j = 0; j < w; j++) z[j] = (struct ocd_cpx){a[j], b ? b[j] : 0};
        ocd_fft_run(&p->rows, z, tmp, 1, false);
        struct ocd_cpx *sa = spec + i * half, *sb = sa + half;
        for (int64_t f = 0; f < half; f++) {
            struct ocd_cpx zf = z[f], zc = z[(w - f) % w]; /* A = (Z[f] + conj Z[-f]) / 2, B = (Z[f] - conj Z[-f]) / 2i */
            sa[f] = (struct ocd_cpx){0.5 * (zf.re + zc.re), 0.5 * (zf.im - zc.im)};
            if (b) sb[f] = (struct ocd_cpx){0.5 * (zf.im + zc.im), -0.5 * (zf.re - zc.re)};
        }
    }
    memset(spec + rows * half, 0, sizeof *spec * (size_t)((p->h - rows) * half));
    ocd_fft_run(&p->cols, spec, scratch, half, false);
}

void ocd_fft2d_inverse(const struct ocd_fft2d *p, struct ocd_cpx *spec, int64_t rows, double *out,
                       struct ocd_cpx *scratch)
{
    const int64_t w = p->w, half = p->half;
    ocd_fft_run(&p->cols, spec, scratch, half, true);
    struct ocd_cpx *z = scratch, *tmp = scratch + w;
    for (int64_t i = 0; i < rows; i += 2) {
        /* Z = A + i B over the whole row (A, B Hermitian): its inverse is a + i b */
        const struct ocd_cpx *sa = spec + i * half, *sb = i + 1 < rows ? sa + half : NULL;
        for (int64_t f = 0; f < w; f++) {
            bool mirror = f >= half;
            int64_t g = mirror ? w - f : f;
            struct ocd_cpx a = sa[g], b = sb ? sb[g] : (struct ocd_cpx){0, 0};
            if (mirror) a.im = -a.im, b.im = -b.im;
            z[f] = (struct ocd_cpx){a.re - b.im, a.im + b.re};
        }
        ocd_fft_run(&p->rows, z, tmp, 1, true);
        for (int64_t j = 0; j < w; j++) {
            out[i * w + j] = z[j].re;
            if (sb) out[(i + 1) * w + j] = z[j].im;
        }
    }
}
