/* walk.c: runs over dim groups, and run-wise typed loads and stores (see walk.h). */
#include "host/walk.h"

#include "host/parallel.h"
#include "host/typed.h"

/* The runs of a group: its innermost dim cut into pieces of at most OCD_HOST_RUN_MAX, for every
   position of the outer dims. Run number i is piece i % pieces of outer row i / pieces. */
struct runs {
    const struct ocd_dim_group *g;
    const int64_t *base;
    int64_t inner, pieces;
    ocd_host_run_fn fn;
    void *ctx;
};

static void describe_runs(struct runs *r, const struct ocd_dim_group *g, const int64_t *base,
                          ocd_host_run_fn fn, void *ctx)
{
    r->g = g;
    r->base = base;
    r->inner = g->rank > 0 ? g->dims[g->rank - 1] : 1;
    r->pieces = (r->inner + OCD_HOST_RUN_MAX - 1) / OCD_HOST_RUN_MAX;
    r->fn = fn;
    r->ctx = ctx;
}

static void visit_runs(void *ctx, int64_t begin, int64_t end)
{
    const struct runs *r = ctx;
    const struct ocd_dim_group *g = r->g;
    struct ocd_host_run run;
    /* The outer dims are the group without its innermost one. */
    struct ocd_dim_group outer = *g;
    outer.rank = g->rank > 0 ? g->rank - 1 : 0;
    for (int64_t i = begin; i < end; i++) {
        int64_t row = i / r->pieces, piece = i % r->pieces;
        ocd_dim_group_offsets(&outer, row, run.off);
        int64_t first = piece * OCD_HOST_RUN_MAX;
        run.len = OCD_MIN(OCD_HOST_RUN_MAX, r->inner - first);
        for (int t = 0; t < g->count; t++) {
            run.stride[t] = g->rank > 0 ? g->strides[t][g->rank - 1] : 0;
            run.off[t] += first * run.stride[t] + (r->base ? r->base[t] : 0);
        }
        r->fn(r->ctx, &run);
    }
}

void ocd_host_walk(const struct ocd_dim_group *g, ocd_host_run_fn fn, void *ctx)
{
    struct runs r;
    describe_runs(&r, g, NULL, fn, ctx);
    int64_t total = ocd_dim_group_size(g) / r.inner * r.pieces;
    int64_t run_len = OCD_MIN(r.inner, OCD_HOST_RUN_MAX);
    ocd_parallel_for(total, OCD_MAX(1, 16384 / run_len), visit_runs, &r);
}

void ocd_host_walk_serial(const struct ocd_dim_group *g, const int64_t base[], ocd_host_run_fn fn, void *ctx)
{
    struct runs r;
    describe_runs(&r, g, base, fn, ctx);
    visit_runs(&r, 0, ocd_dim_group_size(g) / r.inner * r.pieces);
}

void ocd_host_load_run(cudnnDataType_t t, const void *base, int64_t stride, int64_t n, double *dst)
{
    switch (t) {
    case CUDNN_DATA_FLOAT:
        for (int64_t i = 0; i < n; i++) dst[i] = ((const float *)base)[i * stride];
        return;
    case CUDNN_DATA_DOUBLE:
        for (int64_t i = 0; i < n; i++) dst[i] = ((const double *)base)[i * stride];
        return;
    case CUDNN_DATA_HALF:
        for (int64_t i = 0; i < n; i++) dst[i] = ocd_half_to_float(((const uint16_t *)base)[i * stride]);
        return;
    case CUDNN_DATA_BFLOAT16:
        for (int64_t i = 0; i < n; i++) dst[i] = ocd_bf16_to_float(((const uint16_t *)base)[i * stride]);
        return;
    default:
        for (int64_t i = 0; i < n; i++) dst[i] = ocd_host_load(t, base, i * stride);
        return;
    }
}

void ocd_host_blend_run(cudnnDataType_t t, void *base, int64_t stride, int64_t n, const double *r,
                        double alpha, double beta)
{
    double v[OCD_HOST_RUN_MAX];
    for (int64_t start = 0; start < n; start += OCD_HOST_RUN_MAX) {
        int64_t len = OCD_MIN(OCD_HOST_RUN_MAX, n - start);
        char *b = (char *)base + start * stride * (int64_t)ocd_dtype_scalar_size(t);
        if (beta != 0) {
            ocd_host_load_run(t, b, stride, len, v);
            for (int64_t i = 0; i < len; i++) v[i] = alpha * r[start + i] + beta * v[i];
        } else {
            for (int64_t i = 0; i < len; i++) v[i] = alpha * r[start + i];
        }
        switch (t) {
        case CUDNN_DATA_FLOAT:
            for (int64_t i = 0; i < len; i++) ((float *)b)[i * stride] = (float)v[i];
            break;
        case CUDNN_DATA_DOUBLE:
            for (int64_t i = 0; i < len; i++) ((double *)b)[i * stride] = v[i];
            break;
        case CUDNN_DATA_HALF:
            for (int64_t i = 0; i < len; i++) ((uint16_t *)b)[i * stride] = ocd_double_to_half(v[i]);
            break;
        case CUDNN_DATA_BFLOAT16:
            for (int64_t i = 0; i < len; i++) ((uint16_t *)b)[i * stride] = ocd_double_to_bf16(v[i]);
            break;
        default:
            for (int64_t i = 0; i < len; i++) ocd_host_store(t, b, i * stride, v[i]);
            break;
        }
    }
}
