/* conv_store.cuh: the store of one convolution result on CUDA, shared by the kernels that finish
   a destination element at a time (the direct reference, the FFT algorithms' scatter): alpha and
   beta (beta == 0 never reads the destination), or for the fused forward alpha, z, the bias of
   the element's channel and the activation. */
#ifndef OCD_CUDA_CONV_STORE_CUH
#define OCD_CUDA_CONV_STORE_CUH

#include "problem/conv.h"
#include "cuda/types.cuh"

#include <string.h>

struct ocd_cuda_conv_store {
    void *dst;
    cudnnDataType_t t; /* the destination's type */
    double alpha, beta;
    int ep_on, relu;
    double alpha2;
    const void *z, *bp; /* z: NULL when alpha2 == 0 */
    ocd_cuda_view bias;
    cudnnDataType_t bt;
};

/* The store of the direction's destination of p. */
static inline ocd_cuda_conv_store ocd_cuda_conv_store_of(const struct ocd_conv_problem *p)
{
    ocd_cuda_conv_store s;
    memset(&s, 0, sizeof s);
    s.dst = p->dir == OCD_CONV_FWD ? p->y_data : p->dir == OCD_CONV_BWD_DATA ? p->x_data : p->w_data;
    s.t = ocd_conv_dst_view(p)->dtype;
    s.alpha = p->alpha, s.beta = p->beta;
    if (p->ep.on) {
        s.ep_on = 1, s.relu = p->ep.relu, s.alpha2 = p->ep.alpha2, s.z = p->ep.z, s.bp = p->ep.bias;
        s.bias = ocd_cuda_view_of(&p->ep.bias_view);
        s.bt = p->ep.bias_view.dtype;
    }
    return s;
}

/* Stores acc at scalar offset off. In double for double data, float otherwise (int accumulators
   scale in float). */
template <typename Acc>
__device__ void ocd_cuda_conv_finish(const ocd_cuda_conv_store &s, int64_t off, int64_t channel, Acc acc)
{
    typedef typename ocd_compute<Acc>::type R;
    R r = (R)s.alpha * (R)acc;
    if (s.ep_on) {
        if (s.z != nullptr) r += (R)s.alpha2 * ocd_cuda_load_as<R>(s.t, s.z, off);
        int64_t bidx[OCD_MAX_DIMS] = {0};
        bidx[1] = channel;
        r += ocd_cuda_load_as<R>(s.bt, s.bp, ocd_cuda_offset_of(s.bias, bidx));
        if (s.relu && r < 0) r = 0;
    } else if (s.beta != 0) {
        r += (R)s.beta * ocd_cuda_load_as<R>(s.t, s.dst, off);
    }
    ocd_cuda_store_as(s.t, s.dst, off, (double)r);
}

#endif /* OCD_CUDA_CONV_STORE_CUH */
