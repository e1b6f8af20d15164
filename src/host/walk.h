/* walk.h: host loops over dim groups in runs, and typed loads and stores of whole runs.

   A run is up to a few thousand elements that every tensor of a group lays out with one constant
   stride (the group's innermost dim, cut into pieces). Host kernels work run by run: they load a
   run of each input into a double buffer (the type switch sits outside the element loop), compute
   in plain loops, and store the result blended with alpha/beta. ocd_host_walk spreads the runs of
   a group over the worker threads; ocd_host_walk_serial visits them on the calling thread (for a
   slice inside a parallel loop). */
#ifndef OCD_HOST_WALK_H
#define OCD_HOST_WALK_H

#include "core/dimgroup.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_HOST_RUN_MAX 1024 /* elements per run: buffers of this many doubles live on the stack */

struct ocd_host_run {
    int64_t len;                         /* elements, 1..OCD_HOST_RUN_MAX */
    int64_t off[OCD_GROUP_TENSORS];      /* offset of the first element in each tensor, in scalars */
    int64_t stride[OCD_GROUP_TENSORS];   /* step between elements in each tensor */
};

typedef void (*ocd_host_run_fn)(void *ctx, const struct ocd_host_run *run);

/* Visits every element of the group once, in runs, on the worker threads. */
void ocd_host_walk(const struct ocd_dim_group *g, ocd_host_run_fn fn, void *ctx);

/* Visits every element of the group once, in runs, on the calling thread; base[t] is added to each
   tensor's offsets. */
void ocd_host_walk_serial(const struct ocd_dim_group *g, const int64_t base[], ocd_host_run_fn fn, void *ctx);

/* dst[i] = base[i * stride] as a double, for i < n. */
void ocd_host_load_run(cudnnDataType_t t, const void *base, int64_t stride, int64_t n, double *dst);

/* base[i * stride] = alpha * r[i] + beta * base[i * stride], rounded to the type, for i < n; the
   destination is not read when beta == 0, so that NaN already there does not leak (DESIGN.md 2). */
void ocd_host_blend_run(cudnnDataType_t t, void *base, int64_t stride, int64_t n, const double *r,
                        double alpha, double beta);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_WALK_H */
