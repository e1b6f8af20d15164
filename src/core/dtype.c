/* dtype.c: sizes and names of cudnnDataType_t values (see dtype.h). */
#include "core/dtype.h"

#include "core/reasons.h"

#include <stdlib.h>

size_t ocd_dtype_scalar_size(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return 4;
    case CUDNN_DATA_DOUBLE: return 8;
    case CUDNN_DATA_HALF: return 2;
    case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8: case CUDNN_DATA_UINT8: return 1;
    case CUDNN_DATA_INT8x4: case CUDNN_DATA_UINT8x4: case CUDNN_DATA_INT8x32: return 1;
    case CUDNN_DATA_INT32: return 4;
    case CUDNN_DATA_INT64: return 8;
    }
    return 0;
}

int ocd_dtype_vector_width(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_INT8x4: case CUDNN_DATA_UINT8x4: return 4;
    case CUDNN_DATA_INT8x32: return 32;
    default: return 1;
    }
}

size_t ocd_dtype_element_size(cudnnDataType_t t)
{
    return ocd_dtype_scalar_size(t) * (size_t)ocd_dtype_vector_width(t);
}

bool ocd_dtype_valid(cudnnDataType_t t)
{
    return ocd_dtype_scalar_size(t) != 0;
}

cudnnDataType_t ocd_dtype_scalar(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32: return CUDNN_DATA_INT8;
    case CUDNN_DATA_UINT8x4: return CUDNN_DATA_UINT8;
    default: return t;
    }
}

const char *ocd_tensor_math_rejects(cudnnMathType_t math, cudnnDataType_t data)
{
    if (math == CUDNN_FMA_MATH) return OCD_REASON_MATH;
    const char *tf32 = getenv("NVIDIA_TF32_OVERRIDE");
    if (data == CUDNN_DATA_FLOAT && tf32 != NULL && strcmp(tf32, "0") == 0)
        return "TF32 switched off by NVIDIA_TF32_OVERRIDE=0";
    return NULL;
}

const char *ocd_dtype_name(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return "float";
    case CUDNN_DATA_DOUBLE: return "double";
    case CUDNN_DATA_HALF: return "half";
    case CUDNN_DATA_BFLOAT16: return "bfloat16";
    case CUDNN_DATA_INT8: return "int8";
    case CUDNN_DATA_UINT8: return "uint8";
    case CUDNN_DATA_INT8x4: return "int8x4";
    case CUDNN_DATA_UINT8x4: return "uint8x4";
    case CUDNN_DATA_INT8x32: return "int8x32";
    case CUDNN_DATA_INT32: return "int32";
    case CUDNN_DATA_INT64: return "int64";
    }
    return "invalid";
}

double ocd_scaling_value(cudnnDataType_t data_type, const void *scale)
{
    if (data_type == CUDNN_DATA_DOUBLE) return *(const double *)scale;
    return (double)*(const float *)scale;
}
