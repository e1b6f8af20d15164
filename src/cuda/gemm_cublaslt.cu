/* gemm_cublaslt.cu: the CUDA GEMM through cuBLASLt (cuda:gemm_cublaslt, first in the table of
   src/ops/gemm.c), loaded at run time (cublaslt_loader.h): cuBLASLt's own epilogue computes a
   bias and a ReLU, which saves the pass over C that the cuBLAS entry runs for them (attention's
   projections, the graph API's MatmulBiasAct); any other activation is one pass after it.

   cuBLASLt computes D = epilogue(alpha * op(A) op(B) + beta * C), here in place (D is C, with
   C's one layout), the epilogue being DEFAULT, BIAS (a packed vector of m values of C's type,
   added to every column of every batch: the problem's OCD_GEMM_BIAS_ROW), RELU (max(x, 0)) or
   RELU_BIAS (the bias, then ReLU). The entry takes
   - half and bfloat16 operands into C of their type or float, float operands, with FP32 or TF32
     compute (CUBLAS_COMPUTE_32F, _32F_FAST_TF32) and alpha and beta as float (the scale type);
   - strided batches (each layout carries the batch count and stride; a stride of 0 reuses one
     matrix);
   - a bias per row, the activation mode RELU under CUDNN_NOT_PROPAGATE_NAN (a NaN gives 0, as
     max(x, 0) does), both, or neither;
   - any other activation, either kind (problem/gemm.h): cuBLASLt's GELU is the tanh approximation where the graph
     API's is the erf form, and its epilogue has no SOFTPLUS, SWISH, TANH, SIGMOID, ELU, clip or
     slope, so the GEMM runs with the BIAS (or DEFAULT) epilogue and the activation is one pass
     over C in place after it (gemm_plain.cu's epilogue pass, vectorized where C's columns allow:
     the graph's MatmulBiasAct with GELU is then the GEMM and one pass at copy bandwidth).
   It refuses, each with its reason: double data; arrays of batch pointers; a bias per column
   (cuBLASLt's bias runs along D's rows only); an alpha or beta beyond float's range (the scale
   type cannot hold it); a matrix pointer or a batch stride not aligned to its element; a bias
   pointer off a 16-byte boundary (cuBLASLt's preferences state the alignments of A, B, C and D only, and
   its epilogue kernels may load the bias 16 bytes at a time: a bias inside a packed weight
   buffer, as attention's projections have, would fault on a misaligned address).

   Plan (core/impl.h, "Plans"): the heuristic's first algorithm for the call (cublaslt_matmul.h:
   with the operands' real alignments and no workspace, as the GEMM problem has none; the handle
   remembers it for the next call of the same shape). */
#include "core/dtype.h"
#include "core/handle.h"
#include "core/impl.h"
#include "core/reasons.h"
#include "cuda/cublaslt_matmul.h"
#include "cuda/gemm.cuh"

#include <string.h>

/* The algorithm the heuristic chose. */
struct lt_plan {
    cublasLtMatmulAlgo_t algo;
};
OCD_IMPL_PLAN_FITS(struct lt_plan);

/* Whether the activation is not cuBLASLt's own ReLU: a pass over C after the GEMM applies it. */
static bool act_in_pass(const struct ocd_gemm_problem *p)
{
    return p->pw_act_on ||
           (p->act_on && (p->act.mode != CUDNN_ACTIVATION_RELU || p->act.nan_opt != CUDNN_NOT_PROPAGATE_NAN));
}

/* The call as cuBLASLt's matmul (D is C); an activation the pass applies leaves the epilogue
   BIAS or DEFAULT. */
static struct ocd_lt_matmul matmul_of(const struct ocd_gemm_call *call)
{
    const struct ocd_gemm_problem *p = call->p;
    const bool bias = p->bias == OCD_GEMM_BIAS_ROW, relu = p->act_on && !act_in_pass(p);
    struct ocd_lt_matmul mm;
    memset(&mm, 0, sizeof mm);
    mm.compute = p->compute == OCD_GEMM_COMPUTE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    mm.trans_a = p->trans_a, mm.trans_b = p->trans_b;
    mm.epilogue = relu ? (bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU)
                       : (bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
    mm.bias = bias ? call->bias : NULL;
    mm.batch = p->batch;
    const cudaDataType_t ab = gemm_cuda_type(p->ab_type);
    mm.a = {ab, p->trans_a ? p->k : p->m, p->trans_a ? p->m : p->k, p->lda, p->stride_a, call->a};
    mm.b = {ab, p->trans_b ? p->n : p->k, p->trans_b ? p->k : p->n, p->ldb, p->stride_b, call->b};
    mm.c = {gemm_cuda_type(p->c_type), p->m, p->n, p->ldc, p->stride_c, call->c};
    mm.d = call->c;
    return mm;
}

/* Why cuBLASLt's epilogue or layouts cannot express the call, or NULL. */
static const char *refuses(const struct ocd_gemm_call *call)
{
    const struct ocd_gemm_problem *p = call->p;
    if (p->ab_type == CUDNN_DATA_DOUBLE) return OCD_REASON_DTYPE;
    if (p->pointer_array) return "arrays of batch pointers: cuBLASLt takes strided batches";
    if (p->bias == OCD_GEMM_BIAS_COL) return "a bias per column: cuBLASLt's bias runs along the rows of C";
    if (!ocd_lt_fits_scale(p->alpha) || !ocd_lt_fits_scale(p->beta))
        return "alpha or beta beyond float, cuBLASLt's scale type";
    const struct ocd_lt_matmul mm = matmul_of(call);
    if (ocd_lt_matrix_alignment(&mm, &mm.a, mm.a.data) < ocd_lt_type_size(mm.a.type) ||
        ocd_lt_matrix_alignment(&mm, &mm.b, mm.b.data) < ocd_lt_type_size(mm.b.type) ||
        ocd_lt_matrix_alignment(&mm, &mm.c, mm.c.data) < ocd_lt_type_size(mm.c.type))
        return "a pointer or batch stride not aligned to its element";
    if (p->bias != OCD_GEMM_BIAS_NONE && ocd_lt_alignment(call->bias, 0, 1) < 16)
        return "a bias off a 16-byte boundary: cuBLASLt's epilogue may read it 16 bytes at a time";
    return NULL;
}

static const char *plan(cudnnHandle_t handle, const void *call_, void *plan_)
{
    const struct ocd_gemm_call *call = (const struct ocd_gemm_call *)call_;
    if (const char *why = refuses(call)) return why;
    cublasLtHandle_t lt;
    if (const char *why = ocd_cublaslt_handle(handle, &lt)) return why;
    const struct ocd_lt_matmul mm = matmul_of(call);
    if (ocd_lt_query(handle, lt, &mm, &((struct lt_plan *)plan_)->algo) != CUBLAS_STATUS_SUCCESS)
        return "cuBLASLt's heuristic has no algorithm for this problem";
    return NULL;
}

static cudnnStatus_t run(cudnnHandle_t handle, const void *call_, const void *plan_, void *ws, size_t ws_bytes)
{
    const struct ocd_gemm_call *call = (const struct ocd_gemm_call *)call_;
    const struct ocd_gemm_problem *p = call->p;
    cublasLtHandle_t lt;
    const char *why = ocd_cublaslt_handle(handle, &lt);
    if (why != NULL) return OCD_FAIL(CUDNN_STATUS_EXECUTION_FAILED, "%s", why);
    const struct ocd_lt_matmul mm = matmul_of(call);
    const cublasStatus_t st =
        ocd_lt_run(lt, &mm, &((const struct lt_plan *)plan_)->algo, (float)p->alpha, (float)p->beta, handle->stream);
    if (st != CUBLAS_STATUS_SUCCESS) return ocd_cublaslt_status(st, "cublasLtMatmul", __func__, __FILE__, __LINE__);
    if (!act_in_pass(p)) return CUDNN_STATUS_SUCCESS;
    /* the activation over D, which holds alpha * A B + beta * C + bias */
    struct ocd_gemm_problem act = *p;
    act.bias = OCD_GEMM_BIAS_NONE;
    const struct ocd_gemm_call pass = {&act, call->a, call->b, call->c, NULL};
    return ocd_cuda_gemm_epilogue(handle, &pass);
}

const struct ocd_impl_planned ocd_cuda_gemm_cublaslt_planned = {plan, NULL, run};
