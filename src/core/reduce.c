/* reduce.c: normalization and plan of reductions (see reduce.h). */
#include "core/reduce.h"

#include "core/dtype.h"

#include <string.h>

/* Below this many elements per range, a range is not worth its own partial. */
#define MIN_CHUNK 8192
/* Enough parallel ranges to fill a large GPU several times over. */
#define TARGET_RANGES 4096

/* Merges neighbours d, d+1 of a list when every stride array walks them contiguously. */
static int merge(int rank, int64_t dims[], int64_t *strides[], int nstrides)
{
    if (rank == 0) return 0;
    int r = 0;
    for (int d = 1; d < rank; d++) {
        bool ok = true;
        for (int k = 0; k < nstrides; k++) ok &= strides[k][r] == strides[k][d] * dims[d];
        if (ok) {
            dims[r] *= dims[d];
            for (int k = 0; k < nstrides; k++) strides[k][r] = strides[k][d];
        } else {
            r++;
            dims[r] = dims[d];
            for (int k = 0; k < nstrides; k++) strides[k][r] = strides[k][d];
        }
    }
    return r + 1;
}

void ocd_reduce_build(struct ocd_reduce *r, const struct ocd_tensor_view *a, const struct ocd_tensor_view *c)
{
    memset(r, 0, sizeof *r);
    r->a_type = a->dtype;
    r->c_type = c->dtype;
    for (int d = 0; d < a->rank; d++) {
        if (a->dims[d] == 1) continue;
        if (c->dims[d] == 1) {
            r->red_dims[r->red_rank] = a->dims[d];
            r->a_red_strides[r->red_rank++] = a->strides[d];
        } else {
            r->kept_dims[r->kept_rank] = a->dims[d];
            r->a_kept_strides[r->kept_rank] = a->strides[d];
            r->c_strides[r->kept_rank++] = c->strides[d];
        }
    }
    int64_t *kept[2] = {r->a_kept_strides, r->c_strides}, *red[1] = {r->a_red_strides};
    r->kept_rank = merge(r->kept_rank, r->kept_dims, kept, 2);
    r->red_rank = merge(r->red_rank, r->red_dims, red, 1);
    r->outputs = r->reduced = 1;
    for (int d = 0; d < r->kept_rank; d++) r->outputs *= r->kept_dims[d];
    for (int d = 0; d < r->red_rank; d++) r->reduced *= r->red_dims[d];
    int64_t most = OCD_MAX((int64_t)1, TARGET_RANGES / r->outputs);
    r->splits = OCD_MIN(most, (r->reduced + MIN_CHUNK - 1) / MIN_CHUNK);
    if (r->splits < 1) r->splits = 1;
    r->chunk = (r->reduced + r->splits - 1) / r->splits;
    r->splits = (r->reduced + r->chunk - 1) / r->chunk; /* no empty range */
}

size_t ocd_reduce_workspace(const struct ocd_reduce *r)
{
    return r->splits > 1 ? (size_t)(r->outputs * r->splits) * sizeof(struct ocd_reduce_partial) : 0;
}
