/* reduce.c: the host reduction (problem/reduce.h holds the problem, its plan and the semantics).

   One task per (output, range of its reduced elements); the reduced elements of a range are
   visited in flattened order with an odometer over the reduced dimensions, so each element
   costs an add and a compare. With one range per output the task finishes the output itself;
   otherwise the partials go to the workspace and a second pass combines them in range order. */
#include "problem/reduce.h"

#include "host/parallel.h"
#include "host/typed.h"

/* Offset in A of the first element of output o (row-major over the kept dims), and in C. */
static void output_offsets(const struct ocd_reduce *r, int64_t o, int64_t *a_off, int64_t *c_off)
{
    *a_off = *c_off = 0;
    for (int d = r->kept_rank - 1; d >= 0; d--) {
        int64_t i = o % r->kept_dims[d];
        o /= r->kept_dims[d];
        *a_off += i * r->a_kept_strides[d];
        *c_off += i * r->c_strides[d];
    }
}

static struct ocd_reduce_partial reduce_range(const struct ocd_reduce *r, int64_t base, int64_t begin, int64_t end)
{
    struct ocd_reduce_partial p = ocd_reduce_start(r->op);
    int64_t idx[OCD_MAX_DIMS], off = base, rest = begin;
    for (int d = r->red_rank - 1; d >= 0; d--) {
        idx[d] = rest % r->red_dims[d];
        rest /= r->red_dims[d];
        off += idx[d] * r->a_red_strides[d];
    }
    for (int64_t i = begin; i < end; i++) {
        ocd_reduce_step(r->op, r->propagate_nan, &p, ocd_host_load(r->a_type, r->a, off), (uint32_t)i);
        for (int d = r->red_rank - 1; d >= 0; d--) { /* odometer over the reduced dims */
            if (++idx[d] < r->red_dims[d]) {
                off += r->a_red_strides[d];
                break;
            }
            off -= (r->red_dims[d] - 1) * r->a_red_strides[d];
            idx[d] = 0;
        }
    }
    return p;
}

static void finish(const struct ocd_reduce *r, int64_t o, int64_t c_off, struct ocd_reduce_partial p)
{
    double v = r->alpha * ocd_reduce_result(r->op, p, r->reduced);
    if (r->beta != 0) v += r->beta * ocd_host_load(r->c_type, r->c, c_off);
    ocd_host_store(r->c_type, r->c, c_off, v);
    if (r->want_indices) r->indices[o] = p.index;
}

static void run_ranges(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_reduce *r = ctx;
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / r->splits, s = t % r->splits, a_off, c_off;
        output_offsets(r, o, &a_off, &c_off);
        struct ocd_reduce_partial p =
            reduce_range(r, a_off, s * r->chunk, OCD_MIN((s + 1) * r->chunk, r->reduced));
        if (r->splits == 1) finish(r, o, c_off, p);
        else r->partials[t] = p;
    }
}

static void combine(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_reduce *r = ctx;
    for (int64_t o = begin; o < end; o++) {
        struct ocd_reduce_partial p = r->partials[o * r->splits];
        for (int64_t s = 1; s < r->splits; s++) ocd_reduce_merge(r->op, r->propagate_nan, &p, r->partials[o * r->splits + s]);
        int64_t a_off, c_off;
        output_offsets(r, o, &a_off, &c_off);
        finish(r, o, c_off, p);
    }
}

cudnnStatus_t ocd_host_reduce_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                  size_t workspace_bytes)
{
    (void)handle;
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_reduce *r = problem;
    int64_t grain = OCD_MAX((int64_t)1, 16384 / OCD_MIN(r->chunk, r->reduced));
    ocd_parallel_for(r->outputs * r->splits, grain, run_ranges, (void *)r);
    if (r->splits > 1) ocd_parallel_for(r->outputs, 64, combine, (void *)r);
    return CUDNN_STATUS_SUCCESS;
}
