/* dynamic.cuh: device helpers for kernels that take the data type at run time (the reference
   kernels: one instantiation per accumulator type serves every storage type and layout): loads
   and stores switched on a cudnnDataType_t, and element offsets from coordinates of a view. */
#ifndef OCD_CUDA_DYNAMIC_CUH
#define OCD_CUDA_DYNAMIC_CUH

#include "cuda/typed.cuh"

/* Scalar i of a buffer of type t, converted to the accumulator type. */
template <typename Acc> __device__ __forceinline__ Acc ocd_cuda_load_as(cudnnDataType_t t, const void *p, int64_t i)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return (Acc)((const float *)p)[i];
    case CUDNN_DATA_DOUBLE: return (Acc)((const double *)p)[i];
    case CUDNN_DATA_HALF: return (Acc)__half2float(((const __half *)p)[i]);
    case CUDNN_DATA_BFLOAT16: return (Acc)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32: return (Acc)((const int8_t *)p)[i];
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: return (Acc)((const uint8_t *)p)[i];
    case CUDNN_DATA_INT32: return (Acc)((const int32_t *)p)[i];
    default: return (Acc)((const int64_t *)p)[i];
    }
}

/* Stores v with one rounding to the type and its saturation (ocd_cuda_store from double). */
__device__ __forceinline__ void ocd_cuda_store_as(cudnnDataType_t t, void *p, int64_t i, double v)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE: ((double *)p)[i] = v; return;
    case CUDNN_DATA_FLOAT: ((float *)p)[i] = (float)v; return;
    case CUDNN_DATA_HALF: ocd_cuda_store<__half, double>((__half *)p + i, v); return;
    case CUDNN_DATA_BFLOAT16: ocd_cuda_store<__nv_bfloat16, double>((__nv_bfloat16 *)p + i, v); return;
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32:
        ocd_cuda_store<int8_t, double>((int8_t *)p + i, v); return;
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: ocd_cuda_store<uint8_t, double>((uint8_t *)p + i, v); return;
    case CUDNN_DATA_INT32: ocd_cuda_store<int32_t, double>((int32_t *)p + i, v); return;
    default: ((int64_t *)p)[i] = (int64_t)v; return;
    }
}

/* Scalar offset of the element at coordinates idx (tensor.h: the vector split of dim 1). */
__device__ __forceinline__ int64_t ocd_cuda_offset_of(const ocd_cuda_view &v, const int64_t *idx)
{
    int64_t off = 0;
    for (int d = 0; d < v.rank; d++)
        off += d == 1 && v.vect > 1 ? (idx[1] / v.vect) * v.strides[1] + idx[1] % v.vect : idx[d] * v.strides[d];
    return off;
}

__device__ __forceinline__ void ocd_cuda_coords(const ocd_cuda_view &v, int64_t linear, int64_t *idx)
{
    for (int d = v.rank - 1; d >= 0; d--) {
        idx[d] = linear % v.dims[d];
        linear /= v.dims[d];
    }
}

#endif /* OCD_CUDA_DYNAMIC_CUH */
