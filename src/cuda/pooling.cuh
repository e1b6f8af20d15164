/* pooling.cuh: what the CUDA pooling kernel files share; the window math is problem/pooling.h.

   Pooling on the GPU runs in three kernel families, most specialised first in the implementation
   table (ops/pooling.c):
   - pooling_fixed.cu and pooling_fixed_pairs.cu: the common 2-D windows, 3x3 stride 2 pad 1 and
     2x2 stride 2 pad 0, compiled with every offset a constant (pooling_fixed.cuh);
   - pooling_tile.cu: other 2-D problems, when a band of rows fits in shared memory;
   - pooling_direct.cu: everything else (3-D, windows or rows too large for shared memory, other
     layouts).
   Backward writes dx once, deterministically (MAX and MAX_DETERMINISTIC alike), without atomics.
   Bytes moved: forward x and y; backward dy, dx and, for MAX, x (y is not read).

   Here: the arguments of the direct and tile kernels (pool_args, args_of) and the divisor of an
   averaged window. */
#ifndef OCD_CUDA_POOLING_CUH
#define OCD_CUDA_POOLING_CUH

#include <string.h>
#include <type_traits>

#include "core/dtype.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/pooling.h"

namespace {

template <typename C> struct pool_args {
    uint32_t c, cv;                       /* channels, and channel groups of V */
    int in[OCD_POOL_DIMS], out[OCD_POOL_DIMS], win[OCD_POOL_DIMS], pad[OCD_POOL_DIMS], str[OCD_POOL_DIMS];
    int64_t xs[5], ys[5];
    ocd_fastdiv div_c, div_w, div_h, div_d; /* of cv or c, and of the walked tensor's d, h, w */
    C alpha, beta, volume;
    bool blend, nan, max, exclude, overhang; /* overhang: a window passes the padding's end */
};

/* The divisor of the window starting at s: for EXCLUDE_PADDING the inputs inside; for
   INCLUDE_PADDING its taps inside the padded input, its volume unless the window hangs over the
   padding's end (an output longer than the floor formula's: problem/pooling.h). */
template <typename C> __device__ __forceinline__ C divisor(const pool_args<C> &a, const int s[3])
{
    if (!a.exclude && !a.overhang) return a.volume;
    int n = 1;
#pragma unroll
    for (int i = 0; i < OCD_POOL_DIMS; i++) {
        const int end = a.exclude ? a.in[i] : a.in[i] + a.pad[i];
        int lo = a.exclude && s[i] < 0 ? 0 : s[i], hi = s[i] + a.win[i] < end ? s[i] + a.win[i] : end;
        n *= hi > lo ? hi - lo : 0;
    }
    return (C)n;
}

/* The kernel arguments of a problem, with fast divisions by the dims of the tensor the threads
   of pool_forward and pool_backward_gather walk (y forward, x backward). */
template <typename T, int V, bool CLAST> pool_args<typename ocd_compute<T>::type> args_of(const ocd_pooling_problem *p)
{
    typedef typename ocd_compute<T>::type C;
    pool_args<C> a;
    a.c = (uint32_t)p->c;
    a.cv = (uint32_t)(p->c / V);
    for (int i = 0; i < OCD_POOL_DIMS; i++) {
        a.in[i] = (int)p->in[i];
        a.out[i] = (int)p->out[i];
        a.win[i] = p->window[i];
        a.pad[i] = p->pad[i];
        a.str[i] = p->stride[i];
    }
    for (int i = 0; i < 5; i++) {
        a.xs[i] = p->xs[i];
        a.ys[i] = p->ys[i];
    }
    const int *e = p->backward ? a.in : a.out;
    a.div_c = ocd_fastdiv_make(CLAST ? a.cv : a.c);
    a.div_w = ocd_fastdiv_make((uint32_t)e[2]);
    a.div_h = ocd_fastdiv_make((uint32_t)e[1]);
    a.div_d = ocd_fastdiv_make((uint32_t)e[0]);
    a.alpha = (C)p->alpha;
    a.beta = (C)p->beta;
    a.volume = (C)((double)p->window[0] * p->window[1] * p->window[2]);
    a.blend = p->beta != 0;
    a.nan = p->propagate_nan;
    a.max = p->mode == CUDNN_POOLING_MAX || p->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    a.exclude = p->mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    a.overhang = false;
    for (int i = 0; i < OCD_POOL_DIMS; i++) /* the last window against the padding's end */
        a.overhang |= (int64_t)(p->out[i] - 1) * p->stride[i] - p->pad[i] + p->window[i] > p->in[i] + p->pad[i];
    return a;
}

const ocd_pooling_problem *problem_of(const void *problem)
{
    return (const ocd_pooling_problem *)problem;
}

} // namespace

#endif /* OCD_CUDA_POOLING_CUH */
