/* elementwise.cuh: visiting every element of a tensor view in memory order.

   A kernel that gives one thread per element numbers the elements by the order of the view's
   strides (innermost first), so that consecutive threads touch consecutive addresses whatever
   the layout (NCHW, NHWC, padded); ocd_cuda_coords turns that number back into coordinates of
   the view's own dimensions. Element counts fit in 32 bits (tensor.c caps them). */
#ifndef OCD_CUDA_ELEMENTWISE_CUH
#define OCD_CUDA_ELEMENTWISE_CUH

#include "core/tensor.h"

#include <stdint.h>

struct ocd_cuda_order {
    int rank;
    int dim[OCD_MAX_DIMS];       /* dimension indices, innermost first */
    uint32_t ext[OCD_MAX_DIMS];
};

static inline ocd_cuda_order ocd_cuda_order_of(const struct ocd_tensor_view *v)
{
    ocd_cuda_order o;
    o.rank = v->rank;
    for (int d = 0; d < v->rank; d++) {
        int i = d;
        while (i > 0 && v->strides[o.dim[i - 1]] > v->strides[d]) {
            o.dim[i] = o.dim[i - 1];
            i--;
        }
        o.dim[i] = d;
    }
    for (int i = 0; i < v->rank; i++) o.ext[i] = (uint32_t)v->dims[o.dim[i]];
    return o;
}

__device__ __forceinline__ void ocd_cuda_coords(const ocd_cuda_order &o, uint32_t i, int64_t idx[OCD_MAX_DIMS])
{
    for (int k = 0; k < o.rank; k++) {
        idx[o.dim[k]] = i % o.ext[k];
        i /= o.ext[k];
    }
}

#endif /* OCD_CUDA_ELEMENTWISE_CUH */
