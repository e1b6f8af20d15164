/* transform.c: the host gather for padding and folding (problem/transform.h says what it
   computes). Each row of the destination (its innermost dimension) is one unit of work for the
   threads; each element finds its source, so padding zeros are written in the same pass. */
#include "problem/transform.h"

#include "host/parallel.h"
#include "host/typed.h"

/* Scalar offset in the source of destination coordinates o, or -1 when it lies in the padding. */
static int64_t source_of(const struct ocd_fold *f, const int64_t o[])
{
    int64_t s[OCD_MAX_DIMS];
    int rank = f->dst.rank;
    if (f->unfold) {
        int64_t blk = 0;
        for (int d = 2; d < rank; d++) {
            int64_t xp = o[d] + f->pad_before[d];
            s[d] = xp / f->factor[d];
            blk = blk * f->factor[d] + xp % f->factor[d];
        }
        s[0] = o[0] + f->pad_before[0];
        s[1] = blk * f->padded_c + o[1] + f->pad_before[1];
    } else {
        int64_t blk = o[1] / f->padded_c;
        for (int d = rank - 1; d >= 2; d--) {
            s[d] = o[d] * f->factor[d] + blk % f->factor[d] - f->pad_before[d];
            blk /= f->factor[d];
        }
        s[0] = o[0] - f->pad_before[0];
        s[1] = o[1] % f->padded_c - f->pad_before[1];
    }
    for (int d = 0; d < rank; d++)
        if (s[d] < 0 || s[d] >= f->src.dims[d]) return -1;
    return ocd_view_offset_of(&f->src, s);
}

static void run_rows(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_fold *f = ctx;
    int rank = f->dst.rank;
    int64_t inner = f->dst.dims[rank - 1], o[OCD_MAX_DIMS];
    for (int64_t row = begin; row < end; row++) {
        ocd_view_coords(&f->dst, row * inner, o);
        for (int64_t i = 0; i < inner; i++) {
            o[rank - 1] = i;
            int64_t from = source_of(f, o), to = ocd_view_offset_of(&f->dst, o);
            double v = from < 0 ? 0 : f->alpha * ocd_host_load(f->src.dtype, f->x, from);
            if (f->beta != 0) v += f->beta * ocd_host_load(f->dst.dtype, f->y, to);
            ocd_host_store(f->dst.dtype, f->y, to, v);
        }
    }
}

cudnnStatus_t ocd_host_fold(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes)
{
    (void)handle;
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_fold *f = problem;
    int64_t inner = f->dst.dims[f->dst.rank - 1];
    ocd_parallel_for(ocd_view_count(&f->dst) / inner, OCD_MAX((int64_t)1, 4096 / inner), run_rows, (void *)f);
    return CUDNN_STATUS_SUCCESS;
}
