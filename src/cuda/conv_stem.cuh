/* conv_stem.cuh: what the few-channel convolution kernels share (conv_stem.cu, the forward pass
   and the filter gradient; conv_stem_dgrad.cu, the data gradient): the checks both plans make
   first, the 32-bit strides their kernels read, and how an element moves into shared memory. */
#ifndef OCD_CUDA_CONV_STEM_CUH
#define OCD_CUDA_CONV_STEM_CUH

#include "problem/conv.h"

#include "core/reasons.h"
#include "cuda/mma.cuh"

/* Why a few-channel entry cannot serve p, before its own limits, or NULL: compute capability 8.0 (mma.sync with bf16 and tf32), half, bfloat16 or float
   data with all three tensors of one type, tensor-op math (for float: TF32 allowed), 2-D, no
   groups. */
static inline const char *ocd_stem_rejects(cudnnHandle_t h, const struct ocd_conv_problem *p)
{
    if (h->cc_major < 8) return OCD_REASON_ARCH;
    const cudnnDataType_t dt = p->x.dtype;
    if ((dt != CUDNN_DATA_HALF && dt != CUDNN_DATA_BFLOAT16 && dt != CUDNN_DATA_FLOAT) || p->w.dtype != dt ||
        p->y.dtype != dt)
        return OCD_REASON_DTYPE;
    if (const char *why = ocd_conv_tensor_ops_rejects(p)) return why;
    if (p->s.nsp != 2) return OCD_REASON_RANK;
    if (p->s.groups != 1) return "grouped convolutions go to the implicit GEMM";
    return NULL;
}

/* The 4-D view's strides in 32 bits: a tensor spans fewer than 2^31 scalars (types.cuh, "Index
   arithmetic"). */
static inline void ocd_stem_strides(const struct ocd_tensor_view *v, int st[4])
{
    for (int d = 0; d < 4; d++) st[d] = (int)v->strides[d];
}

/* How an element of T moves through shared memory: as its raw bits (raw), two of them stored
   at once as pair; operand() is what the kernels write there for the tensor cores: 16-bit values
   as they are, fp32 rounded to tf32 (ocd_mma_to_tf32: round to nearest, as cvt.rna) for
   mma.sync m16n8k8, once per element copied instead of once per fragment read. */
template <typename T> struct ocd_stem_elem {
    typedef uint16_t raw;
    typedef uint32_t pair;
    static __host__ __device__ __forceinline__ raw operand(raw v) { return v; }
};
template <> struct ocd_stem_elem<float> {
    typedef uint32_t raw;
    typedef uint2 pair;
    static __host__ __device__ __forceinline__ raw operand(raw v) { return ocd_mma_to_tf32(v); }
};

#endif /* OCD_CUDA_CONV_STEM_CUH */
