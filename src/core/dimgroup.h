/* dimgroup.h: the dims that several same-shaped tensors share, merged wherever every tensor allows.

   Elementwise and per-slice kernels (activation, softmax) do not care in which order they visit
   the elements of a set of dims, only that every tensor is walked in step. ocd_dim_group_build
   takes the dims picked by a mask, orders them by the first tensor's strides (largest first),
   drops extents of 1 and merges two neighbours whenever every tensor lays them out as one run
   (stride[outer] == stride[inner] * dims[inner]). A packed tensor, NCHW or NHWC or any other
   order, thus becomes a single dim of stride 1; kernels choose their fast path by looking at the
   rank and strides of the group alone, and keep a generic path for whatever is left.

   Every product here fits in int64_t: Set bounded each tensor's span to 2^31 - 1 elements. */
#ifndef OCD_CORE_DIMGROUP_H
#define OCD_CORE_DIMGROUP_H

#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_GROUP_TENSORS 4 /* the most tensors one group walks together */

struct ocd_dim_group {
    int rank;  /* 0 when every selected dim has extent 1: then the group has one element */
    int count; /* tensors */
    int64_t dims[OCD_MAX_DIMS]; /* outermost first */
    int64_t strides[OCD_GROUP_TENSORS][OCD_MAX_DIMS]; /* [tensor][dim], in scalars */
};

/* The data of an op that maps one or two sources to a destination of the same shape, blended as
   alpha * result + beta * dst (activation, softmax); its group walks src[0..nsrc-1], then dst. */
struct ocd_map_io {
    cudnnDataType_t dtype;
    double alpha, beta; /* read from the API's scaling pointers (ocd_scaling_value) */
    int nsrc;
    const void *src[2];
    void *dst;
};

/* Fills io; src1 NULL means one source. */
void ocd_map_io_set(struct ocd_map_io *io, cudnnDataType_t dtype, const void *alpha, const void *beta,
                    const void *src0, const void *src1, void *dst);

/* The sort-and-merge behind ocd_dim_group_build and ocd_ewise_build (problem/ewise.h): drops the
   dims of extent 1, orders the rest by tensor 0's strides, largest first (stable), and merges
   neighbours that every tensor lays out as one run. dims[0..rank-1]; tensor t's stride of dim d
   is strides[t * row + d], for count <= 12 tensors (a pointwise chain of the graph API orders
   its inputs and outputs together). Returns the new rank (0 when
   every dim has extent 1). */
int ocd_dims_sort_merge(int rank, int count, int64_t dims[], int64_t *strides, int row);

/* Builds the group of the dims d with bit d set in mask, for views[0..count-1], which the caller
   has checked have the same dims. */
void ocd_dim_group_build(struct ocd_dim_group *g, int count, const struct ocd_tensor_view *const views[],
                         unsigned mask);

/* Number of elements the group addresses (1 for rank 0). */
int64_t ocd_dim_group_size(const struct ocd_dim_group *g);

/* True when the group is one run of stride 1 in every tensor (or a single element): the tensors
   can be walked as flat arrays. */
bool ocd_dim_group_is_flat(const struct ocd_dim_group *g);

/* Offsets, in scalars, of the element at row-major position `linear` of the group, per tensor. */
void ocd_dim_group_offsets(const struct ocd_dim_group *g, int64_t linear, int64_t off[]);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_DIMGROUP_H */
