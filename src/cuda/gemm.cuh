/* gemm.cuh: what the CUDA GEMM entries (gemm_plain.cu, gemm_cublas.cu, gemm_mma.cu) share: the
   problem of problem/gemm.h as kernel arguments, and its epilogue on one element,
       c = act(alpha * acc + beta * c + bias)
   in the accumulator's type (float, double for double data), C not read when beta == 0, the
   activation being either kind of problem/gemm.h: an activation mode, through the library's one
   activation math (problem/activation.h), or a unary forward pointwise step, through the
   pointwise chains' ocd_pw_apply (cuda/pw_step.cuh), as the host's epilogue evaluates it. */
#ifndef OCD_CUDA_GEMM_CUH
#define OCD_CUDA_GEMM_CUH

#include "cuda/pw_step.cuh"
#include "cuda/types.cuh"
#include "problem/activation.h"
#include "problem/gemm.h"

#include <library_types.h>

/* The epilogue's parameters, by value for kernel arguments. */
struct gemm_epi {
    double alpha, beta;
    const void *bias;
    int bias_mode; /* enum ocd_gemm_bias */
    int act_on, act_mode, act_propagate;
    double act_coef, act_swish;
    int pw_on; /* the activation is the pointwise step pw */
    struct ocd_pw_step pw;
};

static inline gemm_epi gemm_epi_of(const struct ocd_gemm_call *call)
{
    const struct ocd_gemm_problem *p = call->p;
    gemm_epi e;
    e.alpha = p->alpha, e.beta = p->beta;
    e.bias = call->bias, e.bias_mode = (int)p->bias;
    e.act_on = p->act_on, e.act_mode = (int)p->act.mode, e.act_propagate = p->act.nan_opt == CUDNN_PROPAGATE_NAN;
    e.act_coef = p->act.coef, e.act_swish = p->act.swish_beta;
    e.pw_on = p->pw_act_on, e.pw = p->pw_act;
    return e;
}

/* The activation of the epilogue, either kind, or v itself when it has none. */
template <typename Acc> __host__ __device__ __forceinline__ Acc gemm_epi_act(const gemm_epi &e, Acc v)
{
    if (e.act_on) return ocd_act_forward<Acc>(e.act_mode, e.act_propagate, (Acc)e.act_coef, (Acc)e.act_swish, v);
    if (e.pw_on) return ocd_cuda_pw_step<Acc>(&e.pw, v);
    return v;
}

/* Element (i, j) of C at c + off: v = alpha * acc (scaled = false: acc is already alpha * the
   product + beta * C, as cuBLAS leaves it) + beta * C + bias, activated, stored. */
template <typename C, typename Acc>
__host__ __device__ __forceinline__ void gemm_epi_store(const gemm_epi &e, C *c, int64_t off, int64_t i, int64_t j,
                                                        Acc acc, bool scaled)
{
    Acc v = acc;
    if (scaled) {
        v *= (Acc)e.alpha;
        if (e.beta != 0) v += (Acc)e.beta * ocd_cuda_load(c + off);
    }
    if (e.bias_mode == OCD_GEMM_BIAS_ROW) v += ocd_cuda_load((const C *)e.bias + i);
    else if (e.bias_mode == OCD_GEMM_BIAS_COL) v += ocd_cuda_load((const C *)e.bias + j);
    ocd_cuda_store(c + off, gemm_epi_act<Acc>(e, v));
}

/* A stored type of the problem as cuBLAS and cuBLASLt name it. */
static inline cudaDataType gemm_cuda_type(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_HALF: return CUDA_R_16F;
    case CUDNN_DATA_BFLOAT16: return CUDA_R_16BF;
    case CUDNN_DATA_DOUBLE: return CUDA_R_64F;
    default: return CUDA_R_32F;
    }
}

/* The matrix of batch b of an operand: an array of batch pointers, or a strided batch. */
template <typename T>
__host__ __device__ __forceinline__ T *gemm_batch_ptr(const void *data, bool pointers, int64_t stride, int64_t b)
{
    return pointers ? ((T *const *)data)[b] : (T *)data + b * stride;
}

/* C = act(C + bias) over every element of every batch: the epilogue of an entry whose GEMM
   applied alpha and beta itself (gemm_plain.cu; cuBLAS, and cuBLASLt for the activations its
   epilogue lacks, with no bias in the call when cuBLASLt added it). */
cudnnStatus_t ocd_cuda_gemm_epilogue(cudnnHandle_t handle, const struct ocd_gemm_call *call);

#endif /* OCD_CUDA_GEMM_CUH */
