/* dropout.cu: dropout forward and backward on the CUDA backend.

   Memory speed is the goal: a thread takes one Philox block (4 elements, 4 random words from one
   Philox call, problem/dropout.h), loads and stores them as one vector when both tensors are packed
   and aligned (the vec4 entries) or one by one through the views otherwise (the strided
   entries). The 4 keep bits of 8 neighbouring lanes form one 32-bit mask word, gathered with
   three shuffles and stored by the first of them: the mask adds one bit of traffic per element
   (1/32 of the data for float). The kernels loop over the tensor with a grid of a few blocks per
   multiprocessor.

   The states stay on the device: each block of a forward kernel reads the seed and the call
   number from them, and the last block to have read them (counted with an atomic in the states,
   the "arrivals") advances the call number, so a forward call needs one launch and no copy. */
#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/dropout.h"

namespace {

const int THREADS = 256;

/* The keep bits of the four elements from 4 * b (a block past the end keeps nothing), applied to
   the source: dst = src * scale where kept, 0 elsewhere. */
template <typename T, bool VEC>
__device__ __forceinline__ void apply4(const T *src, T *dst, const ocd_cuda_view &sv,
                                       const ocd_cuda_view &dv, int64_t b, int64_t count,
                                       unsigned bits, typename ocd_compute<T>::type scale)
{
    typedef typename ocd_compute<T>::type C;
    int64_t i0 = b * OCD_DROPOUT_BLOCK;
    if (VEC && i0 + OCD_DROPOUT_BLOCK <= count) {
        ocd_vec<T, 4> in = *reinterpret_cast<const ocd_vec<T, 4> *>(src + i0), out;
#pragma unroll
        for (int j = 0; j < 4; j++)
            ocd_cuda_store(&out.v[j], (bits >> j) & 1 ? ocd_cuda_load(&in.v[j]) * scale : C(0));
        *reinterpret_cast<ocd_vec<T, 4> *>(dst + i0) = out;
        return;
    }
    for (int j = 0; j < 4 && i0 + j < count; j++) {
        int64_t i = i0 + j;
        const T *s = VEC ? src + i : src + ocd_cuda_offset(sv, i);
        T *d = VEC ? dst + i : dst + ocd_cuda_offset(dv, i);
        ocd_cuda_store(d, (bits >> j) & 1 ? ocd_cuda_load(s) * scale : C(0));
    }
}

/* Forward. Loops over `padded` blocks, a multiple of 32, so that every lane of a warp runs the
   same iterations (the shuffles need the whole warp); lane l always holds a block b with
   b % 32 == l, hence b % 8 == l % 8 is its nibble in the mask word. */
template <typename T, bool VEC>
__global__ void __launch_bounds__(THREADS)
dropout_fwd(const T *x, T *y, ocd_cuda_view xv, ocd_cuda_view yv, uint32_t *mask,
            ocd_dropout_state *states, uint64_t threshold, typename ocd_compute<T>::type scale,
            int64_t count, int64_t padded)
{
    __shared__ uint64_t seed, calls;
    if (threadIdx.x == 0) {
        volatile ocd_dropout_state *st = states;
        seed = st->seed;
        calls = st->calls;
        __threadfence();
        if (atomicAdd(&states->arrivals, 1u) == gridDim.x - 1) { /* every block has read */
            st->arrivals = 0;
            st->calls = calls + 1;
        }
    }
    __syncthreads();
    const unsigned lane = threadIdx.x % 32;
    const int64_t blocks = (count + OCD_DROPOUT_BLOCK - 1) / OCD_DROPOUT_BLOCK;
    for (int64_t b = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; b < padded;
         b += (int64_t)gridDim.x * blockDim.x) {
        unsigned bits = 0;
        if (b < blocks) {
            bits = ocd_dropout_keep4(seed, calls, (uint64_t)b, threshold);
            int64_t left = count - b * OCD_DROPOUT_BLOCK;
            if (left < OCD_DROPOUT_BLOCK) bits &= (1u << left) - 1; /* zero past the end */
            apply4<T, VEC>(x, y, xv, yv, b, count, bits, scale);
        }
        unsigned word = bits << (OCD_DROPOUT_BLOCK * (lane % 8));
        word |= __shfl_xor_sync(0xffffffffu, word, 1);
        word |= __shfl_xor_sync(0xffffffffu, word, 2);
        word |= __shfl_xor_sync(0xffffffffu, word, 4);
        if (lane % 8 == 0 && b < blocks) mask[b / 8] = word;
    }
}

template <typename T, bool VEC>
__global__ void __launch_bounds__(THREADS)
dropout_bwd(const T *dy, T *dx, ocd_cuda_view dyv, ocd_cuda_view dxv, const uint32_t *mask,
            typename ocd_compute<T>::type scale, int64_t count)
{
    const int64_t blocks = (count + OCD_DROPOUT_BLOCK - 1) / OCD_DROPOUT_BLOCK;
    for (int64_t b = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; b < blocks;
         b += (int64_t)gridDim.x * blockDim.x) {
        unsigned bits = (mask[b / 8] >> (OCD_DROPOUT_BLOCK * (b % 8))) & 0xf;
        apply4<T, VEC>(dy, dx, dyv, dxv, b, count, bits, scale);
    }
}

template <typename T, bool VEC>
cudnnStatus_t launch(cudnnHandle_t h, const ocd_dropout_problem *p, bool forward)
{
    typedef typename ocd_compute<T>::type C;
    int64_t blocks = (p->count + OCD_DROPOUT_BLOCK - 1) / OCD_DROPOUT_BLOCK;
    int64_t padded = (blocks + 31) / 32 * 32;
    int grid = (int)OCD_MIN((padded + THREADS - 1) / THREADS, (int64_t)h->sm_count * 8);
    ocd_cuda_view sv = ocd_cuda_view_of(&p->src), dv = ocd_cuda_view_of(&p->dst);
    const T *src = static_cast<const T *>(p->src_data);
    T *dst = static_cast<T *>(p->dst_data);
    C scale = (C)p->scale;
    if (forward)
        dropout_fwd<T, VEC><<<grid, THREADS, 0, h->stream>>>(src, dst, sv, dv, p->mask, p->states,
                                                             p->threshold, scale, p->count, padded);
    else
        dropout_bwd<T, VEC><<<grid, THREADS, 0, h->stream>>>(src, dst, sv, dv, p->mask, scale, p->count);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <bool VEC> cudnnStatus_t dispatch(cudnnHandle_t h, const void *problem, bool forward)
{
    const ocd_dropout_problem *p = static_cast<const ocd_dropout_problem *>(problem);
    switch (p->src.dtype) {
    case CUDNN_DATA_FLOAT: return launch<float, VEC>(h, p, forward);
    case CUDNN_DATA_DOUBLE: return launch<double, VEC>(h, p, forward);
    case CUDNN_DATA_HALF: return launch<__half, VEC>(h, p, forward);
    case CUDNN_DATA_BFLOAT16: return launch<__nv_bfloat16, VEC>(h, p, forward);
    default: return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "type %d passed applies()", (int)p->src.dtype);
    }
}

} // namespace

extern "C" cudnnStatus_t ocd_cuda_dropout_fwd_vec4(cudnnHandle_t h, const void *problem, void *, size_t)
{
    return dispatch<true>(h, problem, true);
}

extern "C" cudnnStatus_t ocd_cuda_dropout_fwd_strided(cudnnHandle_t h, const void *problem, void *, size_t)
{
    return dispatch<false>(h, problem, true);
}

extern "C" cudnnStatus_t ocd_cuda_dropout_bwd_vec4(cudnnHandle_t h, const void *problem, void *, size_t)
{
    return dispatch<true>(h, problem, false);
}

extern "C" cudnnStatus_t ocd_cuda_dropout_bwd_strided(cudnnHandle_t h, const void *problem, void *, size_t)
{
    return dispatch<false>(h, problem, false);
}
