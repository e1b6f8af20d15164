/* gemm_cublas.cu: the CUDA GEMM through cuBLAS (cuda:gemm_cublas), loaded at run time
   (cublas_loader.h): cublasGemmStridedBatchedEx for strided batches, cublasGemmBatchedEx for
   arrays of batch pointers, with the problem's types and compute type (CUBLAS_COMPUTE_32F,
   _32F_FAST_TF32 for TF32, _64F). The library applies alpha and beta (it does not read C when
   beta == 0); a bias or an activation (either kind, cuda/gemm.cuh) is one more pass over C
   (gemm_plain.cu), after C was rounded to its type. */
#include "core/handle.h"
#include "cuda/cublas_loader.h"
#include "cuda/gemm.cuh"

const char *ocd_cuda_gemm_cublas_applies(cudnnHandle_t handle, const void *call)
{
    return ocd_cublas_handle(handle, NULL);
}

cudnnStatus_t ocd_cuda_gemm_cublas(cudnnHandle_t handle, const void *call_, void *ws, size_t ws_bytes)
{
    const struct ocd_gemm_call *call = (const struct ocd_gemm_call *)call_;
    const struct ocd_gemm_problem *p = call->p;
    cublasHandle_t blas;
    const char *why = ocd_cublas_handle(handle, &blas);
    if (why != NULL) return OCD_FAIL(CUDNN_STATUS_EXECUTION_FAILED, "%s", why);
    const struct ocd_cublas_api *api = ocd_cublas_api();
    cublasComputeType_t compute = p->compute == OCD_GEMM_COMPUTE_F64    ? CUBLAS_COMPUTE_64F
                                  : p->compute == OCD_GEMM_COMPUTE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                        : CUBLAS_COMPUTE_32F;
    /* scaling factors in the compute type */
    float af = (float)p->alpha, bf = (float)p->beta;
    double ad = p->alpha, bd = p->beta;
    const void *alpha = compute == CUBLAS_COMPUTE_64F ? (const void *)&ad : (const void *)&af;
    const void *beta = compute == CUBLAS_COMPUTE_64F ? (const void *)&bd : (const void *)&bf;
    cublasOperation_t ta = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType abt = gemm_cuda_type(p->ab_type), ct = gemm_cuda_type(p->c_type);
    if (p->pointer_array)
        OCD_CUBLAS_TRY(api->gemm_batched(blas, ta, tb, (int)p->m, (int)p->n, (int)p->k, alpha,
                                         (const void *const *)call->a, abt, (int)p->lda, (const void *const *)call->b,
                                         abt, (int)p->ldb, beta, (void *const *)call->c, ct, (int)p->ldc,
                                         (int)p->batch, compute, CUBLAS_GEMM_DEFAULT));
    else
        OCD_CUBLAS_TRY(api->gemm_strided_batched(blas, ta, tb, (int)p->m, (int)p->n, (int)p->k, alpha, call->a, abt,
                                                 (int)p->lda, p->stride_a, call->b, abt, (int)p->ldb, p->stride_b,
                                                 beta, call->c, ct, (int)p->ldc, p->stride_c, (int)p->batch, compute,
                                                 CUBLAS_GEMM_DEFAULT));
    if (p->bias != OCD_GEMM_BIAS_NONE || p->act_on || p->pw_act_on) return ocd_cuda_gemm_epilogue(handle, call);
    return CUDNN_STATUS_SUCCESS;
}
