/* dtype.h: facts about cudnnDataType_t and the scalar conversions every backend shares.

   half (IEEE binary16) and bfloat16 are stored as uint16_t and computed in float; conversions to
   them round to nearest even, as the hardware does. A double converts to them with one rounding:
   first to float rounded to odd (ocd_double_to_float_odd), which keeps the information the
   second rounding needs, then to nearest even (rounding to nearest twice, through a nearest
   float, can land on a tie that the double was not on). The packed int8 types (INT8x4, UINT8x4,
   INT8x32) are vectors of int8/uint8 scalars along C: a descriptor counts them in scalars for dims
   and in vectors for strides (see tensor.h). */
#ifndef OCD_CORE_DTYPE_H
#define OCD_CORE_DTYPE_H

#include "core/hostdev.h"
#include "core/ocd.h"

#include <math.h>

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one decision of what a math type allows (cuDNN 8.2's cudnnMathType_t), for every op that
   can run on tensor cores (convolution, GEMM users: RNN, attention, matmul): why tensor-core math
   may not serve data of this type, or NULL. CUDNN_FMA_MATH allows none, so float data is
   multiplied and summed in fp32 (and half and bfloat16 data on FMA kernels), as PyTorch asks for
   with TF32 off. DEFAULT_MATH ("Tensor Core operations are permitted", TF32 among them on Ampere
   and later in cuDNN 8), TENSOR_OP_MATH and TENSOR_OP_MATH_ALLOW_CONVERSION allow them, float
   data then being rounded to TF32, unless NVIDIA_TF32_OVERRIDE=0 switches TF32 off (as it does in
   cuDNN and cuBLAS). */
const char *ocd_tensor_math_rejects(cudnnMathType_t math, cudnnDataType_t data);

/* Bytes of one scalar of the type (1 for the int8 vector types), or 0 for an invalid value. */
size_t ocd_dtype_scalar_size(cudnnDataType_t t);
/* Scalars per vector: 4 for INT8x4 and UINT8x4, 32 for INT8x32, 1 otherwise. */
int ocd_dtype_vector_width(cudnnDataType_t t);
/* Bytes of one element as descriptor strides count them (a whole vector for the vector types). */
size_t ocd_dtype_element_size(cudnnDataType_t t);
bool ocd_dtype_valid(cudnnDataType_t t);
/* The scalar type of a vector type (INT8x4 -> INT8, UINT8x4 -> UINT8), else t itself. */
cudnnDataType_t ocd_dtype_scalar(cudnnDataType_t t);
const char *ocd_dtype_name(cudnnDataType_t t);

/* alpha and beta are double for double data and float for every other type (DESIGN.md 2). */
double ocd_scaling_value(cudnnDataType_t data_type, const void *scale);

static inline float ocd_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else { /* subnormal: normalize */
        int e = -1;
        do {
            e++;
            mant <<= 1;
        } while (!(mant & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t ocd_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000, absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or NaN (NaN keeps a mantissa bit) */
        return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
        return (uint16_t)(sign | 0x7c00);
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        if (absx < 0x33000000u) return (uint16_t)sign;
        uint32_t mant = (absx & 0x7fffff) | 0x800000;
        int shift = 126 - (int)(absx >> 23);
        uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t q = ((absx >> 13) - (112u << 10)), rem = absx & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) q++;
    return (uint16_t)(sign | q);
}

static inline float ocd_bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t ocd_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* d rounded to float toward zero, then, when that was inexact, its last mantissa bit set (round
   to odd). Any format with at least two fewer significant bits than float (half: 11, bfloat16:
   8), rounded to nearest even from this float, gets the correct rounding of d itself. NaN stays
   NaN; a magnitude beyond FLT_MAX gives +-FLT_MAX (odd), which rounds to infinity in both. Host
   and device share this one definition (core/hostdev.h). */
OCD_HOST_DEVICE float ocd_double_to_float_odd(double d)
{
    float f = (float)d;
    if (f != f || (double)f == d) return f; /* NaN, or exact */
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (fabs((double)f) > fabs(d)) bits -= 1; /* rounded away from zero: one step back (inf -> FLT_MAX) */
    bits |= 1;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t ocd_double_to_half(double d)
{
    return ocd_float_to_half(ocd_double_to_float_odd(d));
}

static inline uint16_t ocd_double_to_bf16(double d)
{
    return ocd_float_to_bf16(ocd_double_to_float_odd(d));
}

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_DTYPE_H */
