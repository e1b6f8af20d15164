/* conv_fft.c (host): the FFT and FFT_TILING convolution algorithms on the built-in FFT engine
   (conv_fft_engine.h), every direction, with the plan of problem/conv_fft.h.

   Three phases over the workspace (spectra in complex double, then one scratch area per worker):
   the two operands of the direction are cut into tiles and transformed (workers take spectra in
   turn), the per-frequency channel products are formed (blocks of frequencies in parallel), and
   the result spectra are transformed back and stored through ocd_host_conv_store (alpha/beta,
   the fused epilogue): forward outputs tile by tile, filter gradients as the first R x S values,
   data gradients by overlap-adding a channel's windows in the worker's scratch. Every type
   computes in double: half and float data lose nothing, double data (FFT_TILING with a 1-D
   filter) keep double precision. */
#include "host/conv.h"

#include "problem/conv_fft.h"
#include "host/conv_fft_engine.h"
#include "host/parallel.h"
#include "host/typed.h"

#include <stdlib.h>
#include <string.h>

/* Frequencies per block of the channel products (their accumulators stay in L1). */
#define FREQ_BLOCK 64

struct job {
    const struct ocd_conv_problem *p;
    struct ocd_conv_fft_plan plan;
    struct ocd_conv_fft_gemm gemm;
    struct ocd_fft2d fft;
    struct ocd_cpx *spectra;
    double *scratch; /* per worker: scratch_reals doubles, a tile, the engine's complex scratch */
    int64_t scratch_reals, scratch_bytes, workers;
    enum ocd_conv_fft_set in[2]; /* the sets transformed in phase 1 */
};

static int64_t dgrad_extent(const struct ocd_conv_fft_plan *plan, int d)
{
    return (plan->tiles[d] - 1) * plan->step[d] + plan->len[d];
}

/* Doubles of a worker's real buffer: one tile, or a data gradient's overlap-add area. */
static int64_t scratch_reals(const struct ocd_conv_fft_plan *plan)
{
    int64_t tile = plan->len[0] * plan->len[1], add = dgrad_extent(plan, 0) * dgrad_extent(plan, 1);
    return tile > add ? tile : add;
}

static int64_t workers_of(void)
{
    return ocd_parallel_threads();
}

/* Scratch bytes of one worker: the real buffer, a second tile (a data gradient's window) and
   the engine's scratch (ocd_fft2d_scratch). */
static int64_t scratch_bytes(const struct ocd_conv_fft_plan *plan)
{
    int64_t engine = plan->len[0] * plan->half > 2 * plan->len[1] ? plan->len[0] * plan->half : 2 * plan->len[1];
    return (int64_t)sizeof(double) * (scratch_reals(plan) + plan->len[0] * plan->len[1]) +
           (int64_t)sizeof(struct ocd_cpx) * engine;
}

/* The worker's buffers (see scratch_bytes). */
static double *worker_reals(const struct job *j, int64_t worker)
{
    return (double *)((char *)j->scratch + worker * j->scratch_bytes);
}

static struct ocd_cpx *worker_engine(const struct job *j, int64_t worker)
{
    return (struct ocd_cpx *)(worker_reals(j, worker) + j->scratch_reals + j->plan.len[0] * j->plan.len[1]);
}


/* ---- phase 1: tiles in, spectra out ------------------------------------------------------- */

/* Fills tile (len0 x len1, zero outside the data) with spectrum `i` of set `set` and returns the
   rows that may be non-zero. */
static int64_t load_tile(const struct job *j, enum ocd_conv_fft_set set, int64_t i, double *tile)
{
    const struct ocd_conv_problem *p = j->p;
    const struct ocd_conv_shape *s = &p->s;
    const struct ocd_conv_fft_plan *pl = &j->plan;
    const int64_t l0 = pl->len[0], l1 = pl->len[1];
    memset(tile, 0, sizeof(double) * (size_t)(l0 * l1));
    const struct ocd_tensor_view *v;
    const void *data;
    int64_t base, org[2], ext[2], lim[2];
    if (set == OCD_CONV_FFT_W) { /* filter (k, c): the taps, mirrored in CONVOLUTION mode */
        int64_t cg = s->c / s->groups;
        v = &p->w, data = p->w_data;
        base = i / cg * v->strides[0] + i % cg * v->strides[1];
        for (int d = 0; d < 2; d++) org[d] = 0, ext[d] = s->filt[d], lim[d] = s->filt[d];
    } else {
        /* (n, t, channel): a window of the padded input, or a segment of the output */
        bool x = set == OCD_CONV_FFT_X;
        int64_t ch = x ? s->c : s->k, nt = i / ch, t = nt % pl->segs, t0 = t / pl->tiles[1], t1 = t % pl->tiles[1];
        v = x ? &p->x : &p->y, data = x ? p->x_data : p->y_data;
        base = nt / pl->segs * v->strides[0] + i % ch * v->strides[1];
        for (int d = 0; d < 2; d++) {
            int64_t start = (d ? t1 : t0) * pl->step[d];
            org[d] = x ? start - s->pad[d] : start; /* tensor position of the tile's first value */
            ext[d] = x ? pl->len[d] : pl->step[d];
            lim[d] = x ? s->in[d] : s->out[d];
        }
    }
    int64_t rows = 0;
    for (int64_t a = 0; a < ext[0] && a < l0; a++) {
        int64_t h = set == OCD_CONV_FFT_W && s->flip ? lim[0] - 1 - a : org[0] + a;
        if (h < 0 || h >= lim[0]) continue;
        for (int64_t b = 0; b < ext[1] && b < l1; b++) {
            int64_t w = set == OCD_CONV_FFT_W && s->flip ? lim[1] - 1 - b : org[1] + b;
            if (w < 0 || w >= lim[1]) continue;
            tile[a * l1 + b] = ocd_host_load(v->dtype, data, base + h * v->strides[2] + w * v->strides[3]);
        }
        rows = a + 1;
    }
    return rows;
}

static void forward_range(void *ctx, int64_t begin, int64_t end)
{
    const struct job *j = ctx;
    int64_t n0 = j->plan.freq, counts[2];
    for (int e = 0; e < 2; e++)
        counts[e] = j->in[e] == OCD_CONV_FFT_W ? j->plan.w_specs : j->in[e] == OCD_CONV_FFT_X ? j->plan.x_specs : j->plan.y_specs;
    for (int64_t worker = begin; worker < end; worker++) {
        double *tile = worker_reals(j, worker);
        struct ocd_cpx *eng = worker_engine(j, worker);
        for (int64_t i = worker; i < counts[0] + counts[1]; i += j->workers) {
            enum ocd_conv_fft_set set = i < counts[0] ? j->in[0] : j->in[1];
            int64_t idx = i < counts[0] ? i : i - counts[0];
            int64_t rows = load_tile(j, set, idx, tile);
            struct ocd_cpx *spec = j->spectra + (ocd_conv_fft_set_base(&j->plan, set) + idx) * n0;
            ocd_fft2d_forward(&j->fft, tile, rows, spec, eng);
        }
    }
}

/* ---- phase 2: the channel products ------------------------------------------------------- */

static const struct ocd_cpx *spec_of(const struct job *j, const struct ocd_conv_fft_operand *o, int64_t g, int64_t r,
                                     int64_t c)
{
    return j->spectra + (ocd_conv_fft_set_base(&j->plan, o->set) + g * o->group + r * o->row + c * o->col) * j->plan.freq;
}

static void products_range(void *ctx, int64_t begin, int64_t end)
{
    const struct job *j = ctx;
    const struct ocd_conv_fft_gemm *g = &j->gemm;
    const double ca = g->a.conj ? -1 : 1, cb = g->b.conj ? -1 : 1;
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t f0 = blk * FREQ_BLOCK, nf = j->plan.freq - f0 < FREQ_BLOCK ? j->plan.freq - f0 : FREQ_BLOCK;
        for (int64_t grp = 0; grp < g->groups; grp++)
            for (int64_t m = 0; m < g->m; m++)
                for (int64_t n = 0; n < g->n; n++) {
                    double re[FREQ_BLOCK] = {0}, im[FREQ_BLOCK] = {0};
                    for (int64_t k = 0; k < g->k; k++) {
                        const struct ocd_cpx *a = spec_of(j, &g->a, grp, m, k) + f0, *b = spec_of(j, &g->b, grp, k, n) + f0;
                        for (int64_t f = 0; f < nf; f++) {
                            double ar = a[f].re, ai = ca * a[f].im, br = b[f].re, bi = cb * b[f].im;
                            re[f] += ar * br - ai * bi;
                            im[f] += ar * bi + ai * br;
                        }
                    }
                    struct ocd_cpx *d = (struct ocd_cpx *)spec_of(j, &g->d, grp, m, n) + f0;
                    for (int64_t f = 0; f < nf; f++) d[f] = (struct ocd_cpx){re[f], im[f]};
                }
    }
}

/* ---- phase 3: spectra back, results stored ----------------------------------------------- */

static void store(const struct job *j, const struct ocd_tensor_view *v, int64_t base, int64_t h, int64_t w,
                  int64_t channel, double value)
{
    ocd_host_conv_store(j->p, base + h * v->strides[2] + w * v->strides[3], channel, value);
}

static void inverse_range(void *ctx, int64_t begin, int64_t end)
{
    const struct job *j = ctx;
    const struct ocd_conv_problem *p = j->p;
    const struct ocd_conv_shape *s = &p->s;
    const struct ocd_conv_fft_plan *pl = &j->plan;
    const int64_t l1 = pl->len[1];
    const double scale = 1.0 / (double)(pl->len[0] * pl->len[1]);
    const struct ocd_tensor_view *v = ocd_conv_dst_view(p);
    /* the results: filters (k, c), output segments (n, t, k), or input channels (n, c) */
    int64_t items = p->dir == OCD_CONV_BWD_FILTER ? pl->w_specs : p->dir == OCD_CONV_FWD ? pl->y_specs : s->n * s->c;
    for (int64_t worker = begin; worker < end; worker++) {
        double *tile = worker_reals(j, worker);
        struct ocd_cpx *eng = worker_engine(j, worker);
        for (int64_t i = worker; i < items; i += j->workers) {
            if (p->dir == OCD_CONV_BWD_FILTER) {
                int64_t cg = s->c / s->groups, base = i / cg * v->strides[0] + i % cg * v->strides[1];
                ocd_fft2d_inverse(&j->fft, j->spectra + i * pl->freq, s->filt[0], tile, eng);
                for (int64_t r = 0; r < s->filt[0]; r++)
                    for (int64_t c = 0; c < s->filt[1]; c++)
                        store(j, v, base, s->flip ? s->filt[0] - 1 - r : r, s->flip ? s->filt[1] - 1 - c : c, i / cg,
                              tile[r * l1 + c] * scale);
            } else if (p->dir == OCD_CONV_FWD) {
                int64_t nt = i / s->k, t = nt % pl->segs, k = i % s->k;
                int64_t o0 = t / pl->tiles[1] * pl->step[0], o1 = t % pl->tiles[1] * pl->step[1];
                int64_t rows = s->out[0] - o0 < pl->step[0] ? s->out[0] - o0 : pl->step[0];
                int64_t cols = s->out[1] - o1 < pl->step[1] ? s->out[1] - o1 : pl->step[1];
                struct ocd_cpx *spec = j->spectra + (ocd_conv_fft_set_base(pl, OCD_CONV_FFT_Y) + i) * pl->freq;
                ocd_fft2d_inverse(&j->fft, spec, rows, tile, eng);
                int64_t base = nt / pl->segs * v->strides[0] + k * v->strides[1];
                for (int64_t a = 0; a < rows; a++)
                    for (int64_t b = 0; b < cols; b++) store(j, v, base, o0 + a, o1 + b, k, tile[a * l1 + b] * scale);
            } else {
                /* input channel (n, c): its windows overlap-added in padded coordinates */
                int64_t n = i / s->c, c = i % s->c, e0 = dgrad_extent(pl, 0), e1 = dgrad_extent(pl, 1);
                double *acc = tile;
                double *win = tile + j->scratch_reals;
                memset(acc, 0, sizeof(double) * (size_t)(e0 * e1));
                for (int64_t t = 0; t < pl->segs; t++) {
                    int64_t o0 = t / pl->tiles[1] * pl->step[0], o1 = t % pl->tiles[1] * pl->step[1];
                    struct ocd_cpx *spec =
                        j->spectra + (ocd_conv_fft_set_base(pl, OCD_CONV_FFT_X) + (n * pl->segs + t) * s->c + c) * pl->freq;
                    ocd_fft2d_inverse(&j->fft, spec, pl->len[0], win, eng);
                    for (int64_t a = 0; a < pl->len[0]; a++)
                        for (int64_t b = 0; b < l1; b++) acc[(o0 + a) * e1 + o1 + b] += win[a * l1 + b];
                }
                int64_t base = n * v->strides[0] + c * v->strides[1];
                for (int64_t h = 0; h < s->in[0]; h++)
                    for (int64_t w = 0; w < s->in[1]; w++)
                        store(j, v, base, h, w, c, acc[(h + s->pad[0]) * e1 + w + s->pad[1]] * scale);
            }
        }
    }
}

/* ---- entries --------------------------------------------------------------------------- */

static const char *plan_fft(cudnnHandle_t handle, const void *problem, void *plan)
{
    return ocd_conv_fft_plan_init(plan, problem, false);
}

static const char *plan_tiling(cudnnHandle_t handle, const void *problem, void *plan)
{
    return ocd_conv_fft_plan_init(plan, problem, true);
}

static size_t workspace(cudnnHandle_t handle, const void *problem, const void *planned)
{
    const struct ocd_conv_fft_plan *plan = planned;
    return (size_t)(ocd_conv_fft_spectra(plan) * (int64_t)sizeof(struct ocd_cpx) + workers_of() * scratch_bytes(plan));
}

static cudnnStatus_t run(cudnnHandle_t handle, const void *problem, const void *plan, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = problem;
    struct job j = {.p = p, .plan = *(const struct ocd_conv_fft_plan *)plan};
    ocd_conv_fft_gemm_of(p, &j.plan, &j.gemm);
    if (!ocd_fft2d_init(&j.fft, j.plan.len[0], j.plan.len[1]))
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the twiddles of a %lld x %lld FFT",
                        (long long)j.plan.len[0], (long long)j.plan.len[1]);
    j.spectra = ws;
    j.scratch = (double *)(j.spectra + ocd_conv_fft_spectra(&j.plan));
    j.scratch_reals = scratch_reals(&j.plan);
    j.scratch_bytes = scratch_bytes(&j.plan);
    j.workers = workers_of();
    j.in[0] = p->dir == OCD_CONV_BWD_FILTER ? OCD_CONV_FFT_X : OCD_CONV_FFT_W;
    j.in[1] = p->dir == OCD_CONV_FWD ? OCD_CONV_FFT_X : OCD_CONV_FFT_Y;
    ocd_parallel_for(j.workers, 1, forward_range, &j);
    ocd_parallel_for((j.plan.freq + FREQ_BLOCK - 1) / FREQ_BLOCK, 1, products_range, &j);
    ocd_parallel_for(j.workers, 1, inverse_range, &j);
    ocd_fft2d_free(&j.fft);
    return CUDNN_STATUS_SUCCESS;
}

OCD_IMPL_PLAN_FITS(struct ocd_conv_fft_plan);
const struct ocd_impl_planned ocd_host_conv_fft_planned = {plan_fft, workspace, run};
const struct ocd_impl_planned ocd_host_conv_fft_tiling_planned = {plan_tiling, workspace, run};
