/* conv_stem.cuh: what the few-channel convolution kernels share (conv_stem.cu, the forward pass;
   conv_stem_dgrad.cu, the data gradient): the checks both plans make first, and the 32-bit
   strides their kernels read. */
#ifndef OCD_CUDA_CONV_STEM_CUH
#define OCD_CUDA_CONV_STEM_CUH

#include "problem/conv.h"

#include "core/reasons.h"

/* Why a few-channel entry cannot serve p, before its own limits, or NULL: unproven entries
   (core/impl.h), compute capability 8.0 (mma.sync with bf16), half or bfloat16 data with all
   three tensors of one type, tensor-op math, 2-D, no groups. */
static inline const char *ocd_stem_rejects(cudnnHandle_t h, const struct ocd_conv_problem *p)
{
    if (const char *why = ocd_impl_unproven()) return why;
    if (h->cc_major < 8) return OCD_REASON_ARCH;
    const cudnnDataType_t dt = p->x.dtype;
    if ((dt != CUDNN_DATA_HALF && dt != CUDNN_DATA_BFLOAT16) || p->w.dtype != dt || p->y.dtype != dt)
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

#endif /* OCD_CUDA_CONV_STEM_CUH */
