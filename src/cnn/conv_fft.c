/* conv_fft.c: the FFT convolution plan (see conv_fft.h). */
#include "problem/conv_fft.h"

/* The smallest 2^a 3^b 5^c 7^d >= n: the lengths both FFT engines run fastest. */
static int64_t smooth_at_least(int64_t n)
{
    for (int64_t m = n > 1 ? n : 1;; m++) {
        int64_t r = m;
        for (int64_t f = 2; f <= 7; f++)
            while (r % f == 0) r /= f;
        if (r == 1) return m;
    }
}

const char *ocd_conv_fft_plan_init(struct ocd_conv_fft_plan *plan, const struct ocd_conv_problem *p, bool tiling)
{
    const struct ocd_conv_shape *s = &p->s;
    if (s->nsp != 2) return "the FFT entries run 2-D convolutions only";
    plan->tiling = tiling;
    for (int d = 0; d < 2; d++) {
        int64_t padded = s->in[d] + 2 * s->pad[d], filt = s->filt[d], out = s->out[d];
        int64_t tile = filt > 16 ? 64 : 32;
        if (!tiling || padded <= tile) {
            /* one tile over the whole padded input */
            plan->len[d] = smooth_at_least(padded);
            plan->step[d] = out;
        } else {
            plan->len[d] = tile;
            plan->step[d] = tile - filt + 1;
        }
        plan->tiles[d] = (out + plan->step[d] - 1) / plan->step[d];
    }
    plan->half = plan->len[1] / 2 + 1;
    plan->freq = plan->len[0] * plan->half;
    plan->segs = plan->tiles[0] * plan->tiles[1];
    plan->w_specs = s->k * (s->c / s->groups);
    plan->x_specs = s->n * plan->segs * s->c;
    plan->y_specs = s->n * plan->segs * s->k;
    return NULL;
}

int64_t ocd_conv_fft_spectra(const struct ocd_conv_fft_plan *plan)
{
    return (plan->w_specs + plan->x_specs + plan->y_specs) * plan->freq;
}

int64_t ocd_conv_fft_set_base(const struct ocd_conv_fft_plan *plan, enum ocd_conv_fft_set set)
{
    return set == OCD_CONV_FFT_W ? 0 : set == OCD_CONV_FFT_X ? plan->w_specs : plan->w_specs + plan->x_specs;
}

void ocd_conv_fft_gemm_of(const struct ocd_conv_problem *p, const struct ocd_conv_fft_plan *plan,
                          struct ocd_conv_fft_gemm *g)
{
    const struct ocd_conv_shape *s = &p->s;
    const int64_t cg = s->c / s->groups, kg = s->k / s->groups, nt = s->n * plan->segs;
    /* spectrum (n, t, c) of X is (n*segs + t) * C + c, (n, t, k) of Y (n*segs + t) * K + k,
       (k, c) of W k * C/G + c; the group's block starts at channel g*C/G or filter g*K/G */
    const struct ocd_conv_fft_operand x_mc = {OCD_CONV_FFT_X, cg, s->c, 1, false};
    const struct ocd_conv_fft_operand y_mk = {OCD_CONV_FFT_Y, kg, s->k, 1, false};
    g->groups = s->groups;
    switch (p->dir) {
    case OCD_CONV_FWD: /* Y[nt][k] = sum_c X[nt][c] conj W[k][c] */
        g->m = nt, g->n = kg, g->k = cg;
        g->a = x_mc;
        g->b = (struct ocd_conv_fft_operand){OCD_CONV_FFT_W, kg * cg, 1, cg, true};
        g->d = y_mk;
        break;
    case OCD_CONV_BWD_DATA: /* X[nt][c] = sum_k Y[nt][k] W[k][c] */
        g->m = nt, g->n = cg, g->k = kg;
        g->a = y_mk;
        g->b = (struct ocd_conv_fft_operand){OCD_CONV_FFT_W, kg * cg, cg, 1, false};
        g->d = x_mc;
        break;
    default: /* W[k][c] = sum_nt conj Y[nt][k] X[nt][c] */
        g->m = kg, g->n = cg, g->k = nt;
        g->a = (struct ocd_conv_fft_operand){OCD_CONV_FFT_Y, kg, 1, s->k, true};
        g->b = x_mc;
        g->d = (struct ocd_conv_fft_operand){OCD_CONV_FFT_W, kg * cg, cg, 1, false};
        break;
    }
}
