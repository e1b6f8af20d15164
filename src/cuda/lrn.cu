/* lrn.cu: cross-channel LRN on CUDA, forward and backward (formulas in problem/lrn.h). One thread per
   output element, numbered in memory order (cuda/types.cuh); window sums are recomputed from x
   in the compute type, neighbours coming from L1: n loads per forward output, n^2 per backward
   output (n <= 16). */
#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/lrn.h"

namespace {

template <typename T> struct LrnArgs {
    typedef typename ocd_compute<T>::type C;
    const T *x, *dy;
    T *out;
    ocd_cuda_order order;
    int rank;
    int64_t xs[OCD_MAX_DIMS], os[OCD_MAX_DIMS], ds[OCD_MAX_DIMS];
    uint32_t total;
    int channels, behind, ahead;
    C k, alpha_n, beta, alpha, blend_beta;
    bool backward;
};

__device__ __forceinline__ float power(float b, float e) { return powf(b, e); }
__device__ __forceinline__ double power(double b, double e) { return pow(b, e); }

template <typename T> __global__ void k_lrn(const LrnArgs<T> a)
{
    typedef typename ocd_compute<T>::type C;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < a.total; i += gridDim.x * blockDim.x) {
        int64_t idx[OCD_MAX_DIMS], xo = 0, oo = 0, dyo = 0;
        ocd_cuda_coords(a.order, i, idx);
        for (int d = 0; d < a.rank; d++) {
            xo += idx[d] * a.xs[d];
            oo += idx[d] * a.os[d];
            dyo += idx[d] * a.ds[d];
        }
        const int c = (int)idx[1];
        const T *xc = a.x + xo - c * a.xs[1]; /* channel 0 of this column */
        auto s_at = [&](int ch) {
            C sum = 0;
            for (int j = max(0, ch - a.behind); j <= min(a.channels - 1, ch + a.ahead); j++) {
                C v = ocd_cuda_load(xc + j * a.xs[1]);
                sum += v * v;
            }
            return a.k + a.alpha_n * sum;
        };
        C xv = ocd_cuda_load(a.x + xo), r;
        if (!a.backward) {
            r = xv * power(s_at(c), -a.beta);
        } else {
            const T *dyc = a.dy + dyo - c * a.ds[1];
            C sum = 0;
            for (int j = max(0, c - a.ahead); j <= min(a.channels - 1, c + a.behind); j++)
                sum += ocd_cuda_load(dyc + j * a.ds[1]) * ocd_cuda_load(xc + j * a.xs[1]) * power(s_at(j), -a.beta - 1);
            r = ocd_cuda_load(a.dy + dyo) * power(s_at(c), -a.beta) - 2 * a.alpha_n * a.beta * xv * sum;
        }
        r *= a.alpha;
        if (a.blend_beta != 0) r += a.blend_beta * ocd_cuda_load(a.out + oo);
        ocd_cuda_store(a.out + oo, r);
    }
}

template <typename T> cudnnStatus_t launch(cudnnHandle_t h, const struct ocd_lrn_problem *p)
{
    typedef typename ocd_compute<T>::type C;
    LrnArgs<T> a;
    const struct ocd_tensor_view *out = p->backward ? &p->dx : &p->y;
    a.x = (const T *)p->x_ptr;
    a.dy = (const T *)p->dy_ptr;
    a.out = (T *)(p->backward ? p->dx_ptr : p->y_ptr);
    a.order = ocd_cuda_order_of(out);
    a.rank = p->x.rank;
    for (int d = 0; d < OCD_MAX_DIMS; d++) {
        a.xs[d] = d < a.rank ? p->x.strides[d] : 0;
        a.os[d] = d < a.rank ? out->strides[d] : 0;
        a.ds[d] = d < a.rank && p->backward ? p->dy.strides[d] : 0;
    }
    a.total = (uint32_t)ocd_view_count(&p->x);
    a.channels = (int)p->x.dims[1];
    ocd_lrn_window(p->n, &a.behind, &a.ahead);
    a.k = (C)p->lrn_k;
    a.alpha_n = (C)(p->lrn_alpha / p->n);
    a.beta = (C)p->lrn_beta;
    a.alpha = (C)p->alpha;
    a.blend_beta = (C)p->beta;
    a.backward = p->backward;
    unsigned blocks = (unsigned)OCD_MIN((a.total + 255) / 256, (uint32_t)h->sm_count * 16);
    k_lrn<T><<<blocks, 256, 0, h->stream>>>(a);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C" cudnnStatus_t ocd_cuda_lrn(cudnnHandle_t handle, const void *problem, void *workspace,
                                      size_t workspace_bytes)
{
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_lrn_problem *p = (const struct ocd_lrn_problem *)problem;
    switch (p->dtype) {
    case CUDNN_DATA_FLOAT: return launch<float>(handle, p);
    case CUDNN_DATA_DOUBLE: return launch<double>(handle, p);
    case CUDNN_DATA_HALF: return launch<__half>(handle, p);
    default: return launch<__nv_bfloat16>(handle, p);
    }
}
