/* conv_emulate.h: what the convolution emulation tests (conv_fft.cu, conv_winograd.cu,
   conv_stem.cu...) share: a deterministic random source, so that a failing case repeats, packed
   NCHW float views, a case's 2-D geometry for the reference and the problem alike, and a 2-D
   problem on random packed operands with its direct reference in double. */
#ifndef OCD_TESTS_EMULATE_CONV_EMULATE_H
#define OCD_TESTS_EMULATE_CONV_EMULATE_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

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

/* A 4-D packed view re-strided as packed NHWC (channels innermost), its dims unchanged. */
static inline void emu_to_nhwc(struct ocd_tensor_view *v)
{
    v->strides[1] = 1, v->strides[3] = v->dims[1], v->strides[2] = v->dims[1] * v->dims[3];
    v->strides[0] = v->strides[2] * v->dims[2];
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

#ifdef OCD_PROBLEM_CONV_H
/* A 2-D problem of direction dir, stride and dilation 1, per-dim input, filter and padding sizes,
   its operands packed NCHW float views held by x, w and y, which are filled from rng in turn. */
static inline void emu_conv_problem(struct ocd_conv_problem *p, int dir, int n, int c, int k, int groups,
                                    const int in[2], const int filt[2], const int pad[2], bool flip, emu_rng &rng,
                                    std::vector<float> &x, std::vector<float> &w, std::vector<float> &y)
{
    memset(p, 0, sizeof *p);
    p->dir = (enum ocd_conv_dir)dir;
    struct ocd_conv_shape *s = &p->s;
    s->nsp = 2, s->n = n, s->c = c, s->k = k, s->groups = groups, s->flip = flip;
    for (int d = 0; d < 2; d++) {
        s->in[d] = in[d], s->filt[d] = filt[d], s->pad[d] = pad[d], s->stride[d] = s->dilation[d] = 1;
        s->out[d] = in[d] + 2 * pad[d] - filt[d] + 1;
    }
    const int64_t xd[4] = {n, c, in[0], in[1]}, wd[4] = {k, c / groups, filt[0], filt[1]};
    const int64_t yd[4] = {n, k, s->out[0], s->out[1]};
    p->x = packed(xd), p->w = packed(wd), p->y = packed(yd);
    std::vector<float> *data[3] = {&x, &w, &y};
    const struct ocd_tensor_view *views[3] = {&p->x, &p->w, &p->y};
    for (int i = 0; i < 3; i++) {
        data[i]->resize((size_t)ocd_view_count(views[i]));
        for (float &v : *data[i]) v = rng.next();
    }
    p->x_data = x.data(), p->w_data = w.data(), p->y_data = y.data();
}

/* The direct convolution of emu_conv_problem's p in its direction (cross-correlation, or the
   filter mirrored), in double, added into dst: y from x and w, x from y and w, or w from x and y. */
static inline void emu_conv_reference(const struct ocd_conv_problem &p, const std::vector<float> &x,
                                      const std::vector<float> &w, const std::vector<float> &y,
                                      std::vector<double> &dst)
{
    const struct ocd_conv_shape &e = p.s;
    const int64_t cg = e.c / e.groups, kg = e.k / e.groups;
    for (int64_t n = 0; n < e.n; n++)
        for (int64_t k = 0; k < e.k; k++)
            for (int64_t q0 = 0; q0 < e.out[0]; q0++)
                for (int64_t q1 = 0; q1 < e.out[1]; q1++)
                    for (int64_t cc = 0; cc < cg; cc++)
                        for (int64_t r = 0; r < e.filt[0]; r++)
                            for (int64_t s = 0; s < e.filt[1]; s++) {
                                const int64_t h = q0 + r - e.pad[0], ww = q1 + s - e.pad[1], c = k / kg * cg + cc;
                                if (h < 0 || h >= e.in[0] || ww < 0 || ww >= e.in[1]) continue;
                                const int64_t rr = e.flip ? e.filt[0] - 1 - r : r, ss = e.flip ? e.filt[1] - 1 - s : s;
                                const size_t xi = (size_t)(((n * e.c + c) * e.in[0] + h) * e.in[1] + ww);
                                const size_t wi = (size_t)(((k * cg + cc) * e.filt[0] + rr) * e.filt[1] + ss);
                                const size_t yi = (size_t)(((n * e.k + k) * e.out[0] + q0) * e.out[1] + q1);
                                if (p.dir == OCD_CONV_FWD) dst[yi] += (double)x[xi] * w[wi];
                                else if (p.dir == OCD_CONV_BWD_DATA) dst[xi] += (double)y[yi] * w[wi];
                                else dst[wi] += (double)x[xi] * y[yi];
                            }
}
#endif

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

#ifdef OCD_PROBLEM_CONV_H
/* A 2-D case of direction dir on packed NCHW float tensors (an r x r filter, KCRS, in groups;
   DEFAULT_MATH, alpha and beta) as the reference holds it (rc) and as the problem does (p). */
static inline void emu_nchw_float_problem(struct ref_conv *rc, struct ocd_conv_problem *p, enum ocd_conv_dir dir, int n,
                                          int c, int k, int groups, int h, int w, int r, int pad, int stride, int dil,
                                          bool flip, double alpha, double beta)
{
    memset(p, 0, sizeof *p);
    emu_conv_geometry(rc, &p->s, n, c, k, h, w, r, r, pad, stride, dil, flip);
    rc->groups = groups, p->s.groups = groups;
    const int64_t xd[4] = {n, c, h, w}, yd[4] = {n, k, rc->out[0], rc->out[1]}, wd[4] = {k, c / groups, r, r};
    p->dir = dir;
    p->x = packed(xd), p->y = packed(yd), p->w = packed(wd);
    p->w_format = CUDNN_TENSOR_NCHW;
    p->compute = CUDNN_DATA_FLOAT, p->math = CUDNN_DEFAULT_MATH;
    p->alpha = alpha, p->beta = beta;
}
#endif

/* A filter-gradient case's operands and its reference: x, dy and dw (the prior dw, which beta
   scales) from rng, want = alpha * dW + beta * dw in double, and bound the same product of |x|
   and |dy| (the scale of the rounding errors). */
struct emu_wgrad_data {
    std::vector<float> x, dy, dw;
    std::vector<double> want, bound;
};

static inline emu_wgrad_data emu_wgrad_case(const struct ref_conv *rc, emu_rng &rng, double alpha, double beta)
{
    const long nx = ref_conv_x_count(rc), ny = ref_conv_y_count(rc), nw = ref_conv_w_count(rc);
    emu_wgrad_data d;
    d.x.resize(nx), d.dy.resize(ny), d.dw.resize(nw), d.want.resize(nw), d.bound.resize(nw);
    std::vector<double> xd(nx), dyd(ny), xa(nx), dya(ny);
    for (long i = 0; i < nx; i++) d.x[i] = rng.next(), xd[i] = d.x[i], xa[i] = d.x[i] < 0 ? -xd[i] : xd[i];
    for (long i = 0; i < ny; i++) d.dy[i] = rng.next(), dyd[i] = d.dy[i], dya[i] = d.dy[i] < 0 ? -dyd[i] : dyd[i];
    for (long i = 0; i < nw; i++) d.dw[i] = rng.next();
    ref_conv_bwd_filter(rc, xd.data(), dyd.data(), d.want.data());
    ref_conv_bwd_filter(rc, xa.data(), dya.data(), d.bound.data());
    for (long i = 0; i < nw; i++) d.want[i] = alpha * d.want[i] + beta * d.dw[i];
    return d;
}
#endif

#endif /* OCD_TESTS_EMULATE_CONV_EMULATE_H */
