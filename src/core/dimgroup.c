/* dimgroup.c: building dim groups (see dimgroup.h). */
#include "core/dimgroup.h"

#include "core/dtype.h"

#include <string.h>

void ocd_dim_group_build(struct ocd_dim_group *g, int count, const struct ocd_tensor_view *const views[],
                         unsigned mask)
{
    memset(g, 0, sizeof *g);
    g->count = count;
    /* Pick the dims of extent > 1, sorted by the first tensor's stride, largest first. Two such
       dims never share a stride (ocd_check_layout rejects overlapping layouts), so the order is
       total. */
    int order[OCD_MAX_DIMS], n = 0;
    for (int d = 0; d < views[0]->rank; d++) {
        if (!(mask & (1u << d)) || views[0]->dims[d] == 1) continue;
        int i = n++;
        while (i > 0 && views[0]->strides[order[i - 1]] < views[0]->strides[d]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = d;
    }
    for (int i = 0; i < n; i++) {
        int d = order[i];
        int r = g->rank;
        bool merge = r > 0;
        for (int t = 0; t < count && merge; t++)
            merge = g->strides[t][r - 1] == views[t]->strides[d] * views[t]->dims[d];
        if (merge) { /* the previous (outer) dim continues into this one */
            g->dims[r - 1] *= views[0]->dims[d];
            for (int t = 0; t < count; t++) g->strides[t][r - 1] = views[t]->strides[d];
            continue;
        }
        g->dims[r] = views[0]->dims[d];
        for (int t = 0; t < count; t++) g->strides[t][r] = views[t]->strides[d];
        g->rank++;
    }
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
