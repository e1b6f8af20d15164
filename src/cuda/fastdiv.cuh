/* fastdiv.cuh: division by a run-time constant, as a multiply and a shift.

   Kernels that turn a linear index into coordinates (pixel -> n, h, w; GEMM column -> r, s, c)
   divide by the same few extents millions of times; a hardware integer division costs about
   twenty instructions, this costs two. The divisor is prepared once on the host.

   Method (Granlund and Montgomery): for d >= 2 let l = ceil(log2 d), p = 31 + l and
   mul = ceil(2^p / d), which fits in 32 bits; then n / d == (n * mul) >> p for every
   0 <= n < 2^31. Callers must keep the dividend below 2^31 (every index the conv kernels divide
   is checked against INT32_MAX when the plan is made). d == 1 takes a branch, since its mul
   would need 33 bits. */
#ifndef OCD_CUDA_FASTDIV_CUH
#define OCD_CUDA_FASTDIV_CUH

#include <stdint.h>

struct ocd_fastdiv {
    uint32_t d;   /* the divisor, >= 1 */
    uint32_t mul; /* ceil(2^(32 + shr) / d); unused when d == 1 */
    uint32_t shr;
};

static inline ocd_fastdiv ocd_fastdiv_make(uint32_t d)
{
    ocd_fastdiv f = {d ? d : 1, 0, 0};
    if (f.d > 1) {
        uint32_t l = 0;
        while ((UINT64_C(1) << l) < f.d) l++;
        uint64_t p = 31 + l;
        f.mul = (uint32_t)(((UINT64_C(1) << p) + f.d - 1) / f.d);
        f.shr = (uint32_t)(p - 32);
    }
    return f;
}

/* n / f.d for 0 <= n < 2^31. (Host code may call it too: kernels' index arithmetic is shared
   with host-side checks.) */
__host__ __device__ __forceinline__ uint32_t ocd_fastdiv_div(const ocd_fastdiv &f, uint32_t n)
{
#ifdef __CUDA_ARCH__
    return f.d == 1 ? n : __umulhi(n, f.mul) >> f.shr;
#else
    return f.d == 1 ? n : (uint32_t)(((uint64_t)n * f.mul) >> 32) >> f.shr;
#endif
}

/* Quotient and remainder of n / f.d for 0 <= n < 2^31. */
__host__ __device__ __forceinline__ uint32_t ocd_fastdiv_divmod(const ocd_fastdiv &f, uint32_t n, uint32_t *rem)
{
    uint32_t q = ocd_fastdiv_div(f, n);
    *rem = n - q * f.d;
    return q;
}

#endif /* OCD_CUDA_FASTDIV_CUH */
