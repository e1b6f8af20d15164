/* softmax.c (host): softmax forward and backward, slices spread over the worker threads, each
   slice walked twice in runs (walk.h): once for its statistics (the running maximum and sum of
   exponentials, or the sum the backward needs), once to write the result. Nothing is buffered, so
   a slice of any length works; computed in double. */
#include "problem/softmax.h"

#include "core/dtype.h"
#include "host/parallel.h"
#include "host/walk.h"

#include <math.h>

struct slice_state {
    const struct ocd_softmax_problem *p;
    size_t size;     /* bytes of a scalar */
    double m, s;     /* forward: running maximum and sum of e^(x - m); backward: s is the sum */
    double r0, r1;   /* what the second pass applies (see finish) */
};

static void load(const struct slice_state *st, int t, const struct ocd_host_run *run, double *v)
{
    ocd_host_load_run(st->p->io.dtype, (const char *)st->p->io.src[t] + run->off[t] * (int64_t)st->size, run->stride[t],
                      run->len, v);
}

static void stats_run(void *ctx, const struct ocd_host_run *run)
{
    struct slice_state *st = ctx;
    double a[OCD_HOST_RUN_MAX], b[OCD_HOST_RUN_MAX];
    load(st, 0, run, a);
    if (st->p->backward) {
        load(st, 1, run, b);
        for (int64_t i = 0; i < run->len; i++) st->s += st->p->log ? b[i] : a[i] * b[i];
        return;
    }
    double m = st->m;
    for (int64_t i = 0; i < run->len; i++) m = a[i] > m ? a[i] : m;
    /* Rescale what was summed against the old maximum; -inf entries (masked out) add nothing, and
       skipping them keeps -inf - -inf out of the sums. */
    double s = st->s == 0 ? 0 : st->s * exp(st->m - m);
    for (int64_t i = 0; i < run->len; i++)
        if (a[i] != -INFINITY) s += exp(a[i] - m);
    st->m = m;
    st->s = s;
}

static void output_run(void *ctx, const struct ocd_host_run *run)
{
    struct slice_state *st = ctx;
    const struct ocd_softmax_problem *p = st->p;
    double a[OCD_HOST_RUN_MAX], b[OCD_HOST_RUN_MAX], r[OCD_HOST_RUN_MAX];
    load(st, 0, run, a);
    if (p->backward) {
        load(st, 1, run, b);
        for (int64_t i = 0; i < run->len; i++) r[i] = p->log ? b[i] - exp(a[i]) * st->s : a[i] * (b[i] - st->s);
    } else {
        for (int64_t i = 0; i < run->len; i++) r[i] = p->log ? a[i] - st->r0 : exp(a[i] - st->m) * st->r1;
    }
    int d = p->io.nsrc;
    ocd_host_blend_run(p->io.dtype, (char *)p->io.dst + run->off[d] * (int64_t)st->size, run->stride[d], run->len, r,
                       p->io.alpha, p->io.beta);
}

static void slices(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_softmax_problem *p = ctx;
    for (int64_t i = begin; i < end; i++) {
        int64_t base[OCD_GROUP_TENSORS];
        ocd_dim_group_offsets(&p->batch, i, base);
        struct slice_state st = {p, ocd_dtype_scalar_size(p->io.dtype), -INFINITY, 0, 0, 0};
        ocd_host_walk_serial(&p->slice, base, stats_run, &st);
        st.r0 = st.m + log(st.s); /* LOG: y = x - (m + log S) */
        st.r1 = 1 / st.s;
        ocd_host_walk_serial(&p->slice, base, output_run, &st);
    }
}

cudnnStatus_t ocd_host_softmax(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_softmax_problem *p = problem;
    int64_t len = ocd_dim_group_size(&p->slice);
    ocd_parallel_for(ocd_dim_group_size(&p->batch), OCD_MAX(1, 16384 / len), slices, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}
