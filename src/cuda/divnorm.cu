/* divnorm.cu: divisive normalization on CUDA, in the three passes of problem/divnorm.h, one kernel
   each, one thread per element numbered in memory order (cuda/types.cuh). Every tensor has x's
   strides. Window sums are direct, over the box of the window clipped to the image. */
#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/divnorm.h"

namespace {

template <typename T> struct DnArgs {
    typedef typename ocd_compute<T>::type C;
    const T *x, *means, *dy;
    T *temp, *temp2, *out, *dmeans;
    ocd_cuda_order order;
    int rank;
    int64_t dims[OCD_MAX_DIMS], st[OCD_MAX_DIMS];
    uint32_t total;
    int behind, ahead;
    C k, scale, beta, alpha, blend_beta;
    bool backward;
};

__device__ __forceinline__ float power(float b, float e) { return powf(b, e); }
__device__ __forceinline__ double power(double b, double e) { return pow(b, e); }

/* Sums f(offset) over the spatial box [idx - lo, idx + hi] (clipped) around the element. */
template <typename T, class F>
__device__ typename ocd_compute<T>::type box_sum(const DnArgs<T> &a, const int64_t idx[], int lo, int hi, F f)
{
    typedef typename ocd_compute<T>::type C;
    int64_t first[3], span[3], base = idx[0] * a.st[0] + idx[1] * a.st[1], count = 1;
    const int nsp = a.rank - 2;
    for (int d = 0; d < nsp; d++) {
        first[d] = max((int64_t)0, idx[d + 2] - lo);
        span[d] = min(a.dims[d + 2] - 1, idx[d + 2] + hi) - first[d] + 1;
        count *= span[d];
    }
    C sum = 0;
    for (int64_t q = 0; q < count; q++) {
        int64_t off = base, rest = q;
        for (int d = nsp - 1; d >= 0; d--) {
            off += (first[d] + rest % span[d]) * a.st[d + 2];
            rest /= span[d];
        }
        sum += f(off);
    }
    return sum;
}

template <typename T> __global__ void k_divnorm(const DnArgs<T> a, int pass)
{
    typedef typename ocd_compute<T>::type C;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < a.total; i += gridDim.x * blockDim.x) {
        int64_t idx[OCD_MAX_DIMS], o = 0;
        ocd_cuda_coords(a.order, i, idx);
        for (int d = 0; d < a.rank; d++) o += idx[d] * a.st[d];
        auto square = [&](int64_t q) {
            C u = ocd_cuda_load(a.temp + q);
            return u * u;
        };
        if (pass == 1) {
            C u = ocd_cuda_load(a.x + o);
            if (a.means) u -= ocd_cuda_load(a.means + o);
            ocd_cuda_store(a.temp + o, u);
        } else if (pass == 2) {
            C s = a.k + a.scale * box_sum(a, idx, a.behind, a.ahead, square);
            if (a.backward) s = ocd_cuda_load(a.dy + o) * ocd_cuda_load(a.temp + o) * power(s, -a.beta - 1);
            ocd_cuda_store(a.temp2 + o, s);
        } else {
            C r;
            if (!a.backward) {
                r = ocd_cuda_load(a.temp + o) * power(ocd_cuda_load(a.temp2 + o), -a.beta);
            } else {
                C s = a.k + a.scale * box_sum(a, idx, a.behind, a.ahead, square);
                C sum = box_sum(a, idx, a.ahead, a.behind, [&](int64_t q) { return (C)ocd_cuda_load(a.temp2 + q); });
                r = ocd_cuda_load(a.dy + o) * power(s, -a.beta) - 2 * a.beta * a.scale * ocd_cuda_load(a.temp + o) * sum;
            }
            C v = a.alpha * r;
            if (a.blend_beta != 0) v += a.blend_beta * ocd_cuda_load(a.out + o);
            if (a.dmeans) {
                C m = -a.alpha * r;
                if (a.blend_beta != 0) m += a.blend_beta * ocd_cuda_load(a.dmeans + o);
                ocd_cuda_store(a.dmeans + o, m);
            }
            ocd_cuda_store(a.out + o, v);
        }
    }
}

template <typename T> cudnnStatus_t launch(cudnnHandle_t h, const struct ocd_divnorm_problem *p)
{
    typedef typename ocd_compute<T>::type C;
    DnArgs<T> a;
    a.x = (const T *)p->x_ptr;
    a.means = (const T *)p->means;
    a.dy = (const T *)p->dy_ptr;
    a.temp = (T *)p->temp;
    a.temp2 = (T *)p->temp2;
    a.out = (T *)p->out_ptr;
    a.dmeans = (T *)p->dmeans;
    a.order = ocd_cuda_order_of(&p->x);
    a.rank = p->x.rank;
    for (int d = 0; d < OCD_MAX_DIMS; d++) {
        a.dims[d] = d < a.rank ? p->x.dims[d] : 1;
        a.st[d] = d < a.rank ? p->x.strides[d] : 0;
    }
    a.total = (uint32_t)ocd_view_count(&p->x);
    ocd_lrn_window(p->n, &a.behind, &a.ahead);
    double scale = p->lrn_alpha;
    for (int d = 2; d < a.rank; d++) scale /= p->n;
    a.k = (C)p->lrn_k;
    a.scale = (C)scale;
    a.beta = (C)p->lrn_beta;
    a.alpha = (C)p->alpha;
    a.blend_beta = (C)p->beta;
    a.backward = p->backward;
    unsigned blocks = (unsigned)OCD_MIN((a.total + 255) / 256, (uint32_t)h->sm_count * 16);
    for (int pass = 1; pass <= 3; pass++) {
        k_divnorm<T><<<blocks, 256, 0, h->stream>>>(a, pass);
        OCD_CUDA_LAUNCHED();
    }
    return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C" cudnnStatus_t ocd_cuda_divnorm(cudnnHandle_t handle, const void *problem, void *workspace,
                                          size_t workspace_bytes)
{
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_divnorm_problem *p = (const struct ocd_divnorm_problem *)problem;
    switch (p->dtype) {
    case CUDNN_DATA_FLOAT: return launch<float>(handle, p);
    case CUDNN_DATA_DOUBLE: return launch<double>(handle, p);
    case CUDNN_DATA_HALF: return launch<__half>(handle, p);
    default: return launch<__nv_bfloat16>(handle, p);
    }
}
