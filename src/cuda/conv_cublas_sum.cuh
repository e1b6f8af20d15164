/* conv_cublas_sum.cuh: the sum of the cuBLAS filter gradient's slabs (conv_cublas.cu): the NCHW
   filter gradient's partial products, per chunk of N P Q or per image, each `count` elements,
   summed into dw with alpha and beta. */
#ifndef OCD_CUDA_CONV_CUBLAS_SUM_CUH
#define OCD_CUDA_CONV_CUBLAS_SUM_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* dw = alpha * (the sum of the slabs' partial products) + beta * dw, the slabs (the NCHW filter
   gradient's chunks of N P Q, or its images) each `count` elements. A block is OCD_SLAB_COLS elements
   by OCD_SLAB_LANES lanes: lane l sums slabs l, l + OCD_SLAB_LANES, ... in that order, and the lanes' sums
   are added in lane order (a fixed order: deterministic), so that the loads of many slabs are in
   flight at once where the elements are few. Host-callable per thread (the emulation runs it). */
#define OCD_SLAB_COLS 32
#define OCD_SLAB_LANES 8

template <typename A>
__host__ __device__ __forceinline__ A ocd_slab_lane(const A *part, int slabs, int64_t count, int64_t i, int lane)
{
    A sum = 0;
    if (i < count)
        for (int c = lane; c < slabs; c += OCD_SLAB_LANES) sum += part[c * count + i];
    return sum;
}

template <typename T, typename A>
__host__ __device__ __forceinline__ void ocd_slab_store(const A (&lanes)[OCD_SLAB_LANES], T *dw, int64_t i, A alpha, A beta)
{
    A sum = 0;
    for (int l = 0; l < OCD_SLAB_LANES; l++) sum += lanes[l];
    A v = alpha * sum;
    if (beta != 0) v += beta * (A)dw[i]; /* (A) and (T): the types' own round-to-nearest conversions */
    dw[i] = (T)v;
}

template <typename T, typename A>
__global__ void __launch_bounds__(OCD_SLAB_COLS *OCD_SLAB_LANES)
    ocd_slab_sum_kernel(const A *part, int slabs, T *dw, int64_t count, A alpha, A beta)
{
    __shared__ A lanes[OCD_SLAB_COLS][OCD_SLAB_LANES];
    const int64_t i = (int64_t)blockIdx.x * OCD_SLAB_COLS + threadIdx.x;
    lanes[threadIdx.x][threadIdx.y] = ocd_slab_lane(part, slabs, count, i, (int)threadIdx.y);
    __syncthreads();
    if (threadIdx.y == 0 && i < count) ocd_slab_store<T, A>(lanes[threadIdx.x], dw, i, alpha, beta);
}

template <typename T, typename A>
static void ocd_slab_sum(cudaStream_t st, const A *part, int64_t slabs, T *dw, int64_t count, A alpha, A beta)
{
    ocd_slab_sum_kernel<T, A><<<(unsigned)((count + OCD_SLAB_COLS - 1) / OCD_SLAB_COLS), dim3(OCD_SLAB_COLS, OCD_SLAB_LANES), 0, st>>>(
        part, (int)slabs, dw, count, alpha, beta);
}

#endif /* OCD_CUDA_CONV_CUBLAS_SUM_CUH */
