/* dimgroup.c: building dim groups (see dimgroup.h). */
#include "core/dimgroup.h"

#include "core/dtype.h"

#include <string.h>

/* The most tensors ocd_dims_sort_merge orders together (dimgroup.h). */
#define MERGE_TENSORS 12

int ocd_dims_sort_merge(int rank, int count, int64_t dims[], int64_t *strides, int row)
{
    /* Drop the dims of extent 1, then insertion-sort the rest by tensor 0's stride, largest
       first (rank is at most OCD_EWISE_MAX_DIMS; the sort is stable, so equal strides keep
       their logical order). */
    int n = 0;
    for (int d = 0; d < rank; d++) {
        if (dims[d] == 1) continue;
        int i = n++;
        while (i > 0 && strides[i - 1] < strides[d]) i--;
        int64_t extent = dims[d], moved[MERGE_TENSORS];
        for (int t = 0; t < count; t++) moved[t] = strides[t * row + d];
        for (int j = n - 1; j > i; j--) {
            dims[j] = dims[j - 1];
            for (int t = 0; t < count; t++) strides[t * row + j] = strides[t * row + j - 1];
        }
        dims[i] = extent;
        for (int t = 0; t < count; t++) strides[t * row + i] = moved[t];
    }
    /* Merge each dim into the previous (outer) one where every tensor continues that run. */
    int r = 0;
    for (int d = 0; d < n; d++) {
        bool merge = r > 0;
        for (int t = 0; t < count && merge; t++) merge = strides[t * row + r - 1] == strides[t * row + d] * dims[d];
        if (merge) dims[r - 1] *= dims[d];
        else dims[r++] = dims[d];
        for (int t = 0; t < count; t++) strides[t * row + r - 1] = strides[t * row + d];
    }
    return r;
}

void ocd_dim_group_build(struct ocd_dim_group *g, int count, const struct ocd_tensor_view *const views[],
                         unsigned mask)
{
    memset(g, 0, sizeof *g);
    g->count = count;
    int n = 0;
    for (int d = 0; d < views[0]->rank; d++) {
        if (!(mask & (1u << d))) continue;
        g->dims[n] = views[0]->dims[d];
        for (int t = 0; t < count; t++) g->strides[t][n] = views[t]->strides[d];
        n++;
    }
    g->rank = ocd_dims_sort_merge(n, count, g->dims, &g->strides[0][0], OCD_MAX_DIMS);
}

int64_t ocd_dim_group_size(const struct ocd_dim_group *g)
{
    int64_t n = 1;
    for (int d = 0; d < g->rank; d++) n *= g->dims[d];
    return n;
}

bool ocd_dim_group_is_flat(const struct ocd_dim_group *g)
{
    if (g->rank > 1) return false;
    for (int t = 0; t < g->count && g->rank == 1; t++)
        if (g->strides[t][0] != 1) return false;
    return true;
}

void ocd_dim_group_offsets(const struct ocd_dim_group *g, int64_t linear, int64_t off[])
{
    for (int t = 0; t < g->count; t++) off[t] = 0;
    for (int d = g->rank - 1; d >= 0; d--) {
        int64_t i = linear % g->dims[d];
        linear /= g->dims[d];
        for (int t = 0; t < g->count; t++) off[t] += i * g->strides[t][d];
    }
}

void ocd_map_io_set(struct ocd_map_io *io, cudnnDataType_t dtype, const void *alpha, const void *beta,
                    const void *src0, const void *src1, void *dst)
{
    io->dtype = dtype;
    io->alpha = ocd_scaling_value(dtype, alpha);
    io->beta = ocd_scaling_value(dtype, beta);
    io->nsrc = src1 ? 2 : 1;
    io->src[0] = src0;
    io->src[1] = src1;
    io->dst = dst;
}
