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
   - any other activation, either kind (problem/gemm.h), as an unproven entry's path (core/impl.h:
     only under OPENCUDNN_UNPROVEN=1): cuBLASLt's GELU is the tanh approximation where the graph
     API's is the erf form, and its epilogue has no SOFTPLUS, SWISH, TANH, SIGMOID, ELU, clip or
     slope, so the GEMM runs with the BIAS (or DEFAULT) epilogue and the activation is one pass
     over C in place after it (gemm_plain.cu's epilogue pass, vectorized where C's columns allow:
     the graph's MatmulBiasAct with GELU is then the GEMM and one pass at copy bandwidth).
   It refuses, each with its reason: double data; arrays of batch pointers; a bias per column
   (cuBLASLt's bias runs along D's rows only); without OPENCUDNN_UNPROVEN=1, every activation
   but RELU under NOT_PROPAGATE_NAN; an alpha or beta beyond float's range (the scale type cannot
   hold it); a matrix pointer or a batch stride not aligned to its element; a bias pointer off
   a 16-byte boundary (cuBLASLt's preferences state the alignments of A, B, C and D only, and
   its epilogue kernels may load the bias 16 bytes at a time: a bias inside a packed weight
   buffer, as attention's projections have, would fault on a misaligned address).

   Plan (core/impl.h, "Plans"): the heuristic's first algorithm, asked once per problem with the
   operands' real alignments (each pointer with its batch stride in bytes, up to 256, as the
   preference's minimum alignments of A, B, C and D) and no workspace, as the GEMM problem has
   none.
   The descriptors are made for the query and again for the run (host calls that touch no
   device memory): a plan holds no pointer to memory it would have to free. */
#include "core/dtype.h"
#include "core/handle.h"
#include "core/impl.h"
#include "core/reasons.h"
#include "cuda/cublaslt_loader.h"
#include "cuda/gemm.cuh"

#include <float.h>
#include <string.h>

/* The algorithm the heuristic chose. */
struct lt_plan {
    cublasLtMatmulAlgo_t algo;
};
OCD_IMPL_PLAN_FITS(struct lt_plan);

/* The descriptors of one call: the operation and the layouts of A, B and C (which is D). */
struct lt_descs {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
};

static bool fits_float(double v)
{
    return !(fabs(v) > FLT_MAX) || isinf(v); /* NaN and the infinities convert to themselves */
}

/* The alignment in bytes (a power of two, at most 256) that every matrix of an operand keeps:
   its pointer's and, across batches, its batch stride's. */
static uint32_t alignment(const void *ptr, int64_t stride, int64_t elem, int64_t batch)
{
    uint64_t bits = (uint64_t)(uintptr_t)ptr | 256;
    if (batch > 1) bits |= (uint64_t)(stride * elem);
    return (uint32_t)(bits & (~bits + 1));
}

/* The alignments of A, B and C, and the element sizes each must reach at least. */
static void alignments(const struct ocd_gemm_call *call, uint32_t align[3], uint32_t elem[3])
{
    const struct ocd_gemm_problem *p = call->p;
    elem[0] = elem[1] = (uint32_t)ocd_dtype_scalar_size(p->ab_type);
    elem[2] = (uint32_t)ocd_dtype_scalar_size(p->c_type);
    align[0] = alignment(call->a, p->stride_a, elem[0], p->batch);
    align[1] = alignment(call->b, p->stride_b, elem[1], p->batch);
    align[2] = alignment(call->c, p->stride_c, elem[2], p->batch);
}

/* Whether the activation is not cuBLASLt's own ReLU: a pass over C after the GEMM applies it. */
static bool act_in_pass(const struct ocd_gemm_problem *p)
{
    return p->pw_act_on ||
           (p->act_on && (p->act.mode != CUDNN_ACTIVATION_RELU || p->act.nan_opt != CUDNN_NOT_PROPAGATE_NAN));
}

/* Why cuBLASLt's epilogue or layouts cannot express the call, or NULL. */
static const char *refuses(const struct ocd_gemm_call *call)
{
    const struct ocd_gemm_problem *p = call->p;
    if (p->ab_type == CUDNN_DATA_DOUBLE) return OCD_REASON_DTYPE;
    if (p->pointer_array) return "arrays of batch pointers: cuBLASLt takes strided batches";
    if (p->bias == OCD_GEMM_BIAS_COL) return "a bias per column: cuBLASLt's bias runs along the rows of C";
    if (act_in_pass(p) && ocd_impl_unproven() != NULL)
        return p->pw_act_on ? "a pointwise step as the activation: cuBLASLt's epilogue has no erf GELU (its GELU is "
                              "the tanh form), SOFTPLUS, SWISH, TANH, SIGMOID, ELU, clip or slope, and the pass "
                              "after it is unproven"
                            : "an activation other than RELU without NaN propagation: cuBLASLt's epilogue has "
                              "max(x, 0) only, and the pass after it is unproven";
    if (!fits_float(p->alpha) || !fits_float(p->beta)) return "alpha or beta beyond float, cuBLASLt's scale type";
    uint32_t align[3], elem[3];
    alignments(call, align, elem);
    if (align[0] < elem[0] || align[1] < elem[1] || align[2] < elem[2])
        return "a pointer or batch stride not aligned to its element";
    if (p->bias != OCD_GEMM_BIAS_NONE && alignment(call->bias, 0, elem[2], 1) < 16)
        return "a bias off a 16-byte boundary: cuBLASLt's epilogue may read it 16 bytes at a time";
    return NULL;
}

/* One operand's layout: rows x cols stored at ld, with the batch count and stride when batched. */
static cublasStatus_t layout(const struct ocd_cublaslt_api *api, cublasLtMatrixLayout_t *l, cudnnDataType_t t,
                             int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride)
{
    cublasStatus_t st = api->layout_create(l, gemm_cuda_type(t), (uint64_t)rows, (uint64_t)cols, ld);
    if (st != CUBLAS_STATUS_SUCCESS || batch == 1) return st;
    const int32_t count = (int32_t)batch;
    st = api->layout_set(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return api->layout_set(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
}

static void descs_free(const struct ocd_cublaslt_api *api, struct lt_descs *d)
{
    if (d->op) api->desc_destroy(d->op);
    if (d->a) api->layout_destroy(d->a);
    if (d->b) api->layout_destroy(d->b);
    if (d->c) api->layout_destroy(d->c);
}

/* The descriptors of a call that refuses() lets through; on failure those made so far are in d,
   for descs_free. */
static cublasStatus_t descs_make(const struct ocd_cublaslt_api *api, const struct ocd_gemm_call *call,
                                 struct lt_descs *d)
{
    const struct ocd_gemm_problem *p = call->p;
    memset(d, 0, sizeof *d);
    const bool bias = p->bias == OCD_GEMM_BIAS_ROW;
    const bool relu = p->act_on && !act_in_pass(p);
    const uint32_t epilogue = relu ? (bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU)
                                   : (bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
    const cublasOperation_t ta = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t st = api->desc_create(
        &d->op, p->compute == OCD_GEMM_COMPUTE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->desc_set(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->desc_set(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->desc_set(d->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
    if (st == CUBLAS_STATUS_SUCCESS && bias)
        st = api->desc_set(d->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &call->bias, sizeof call->bias);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = layout(api, &d->a, p->ab_type, p->trans_a ? p->k : p->m, p->trans_a ? p->m : p->k, p->lda, p->batch,
                    p->stride_a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = layout(api, &d->b, p->ab_type, p->trans_b ? p->n : p->k, p->trans_b ? p->k : p->n, p->ldb, p->batch,
                    p->stride_b);
    if (st == CUBLAS_STATUS_SUCCESS) st = layout(api, &d->c, p->c_type, p->m, p->n, p->ldc, p->batch, p->stride_c);
    return st;
}

/* The heuristic's first algorithm for the call in *algo, or the status of the query. */
static cublasStatus_t query(const struct ocd_cublaslt_api *api, cublasLtHandle_t lt, const struct ocd_gemm_call *call,
                            cublasLtMatmulAlgo_t *algo)
{
    uint32_t align[4], elem[3];
    alignments(call, align, elem);
    align[3] = align[2]; /* D is C */
    const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    const uint64_t workspace = 0;
    struct lt_descs d;
    cublasLtMatmulPreference_t pref = NULL;
    cublasStatus_t st = descs_make(api, call, &d);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->pref_create(&pref);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = api->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
    for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; i++)
        st = api->pref_set(pref, align_attr[i], &align[i], sizeof align[i]);
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS) st = api->heuristic(lt, d.op, d.a, d.b, d.c, d.c, pref, 1, &result, &found);
    if (st == CUBLAS_STATUS_SUCCESS && (found < 1 || result.state != CUBLAS_STATUS_SUCCESS))
        st = CUBLAS_STATUS_NOT_SUPPORTED;
    if (st == CUBLAS_STATUS_SUCCESS) *algo = result.algo;
    if (pref) api->pref_destroy(pref);
    descs_free(api, &d);
    return st;
}

static const char *plan(cudnnHandle_t handle, const void *call_, void *plan_)
{
    const struct ocd_gemm_call *call = (const struct ocd_gemm_call *)call_;
    if (const char *why = refuses(call)) return why;
    cublasLtHandle_t lt;
    if (const char *why = ocd_cublaslt_handle(handle, &lt)) return why;
    if (query(ocd_cublaslt_api(), lt, call, &((struct lt_plan *)plan_)->algo) != CUBLAS_STATUS_SUCCESS)
        return "cuBLASLt's heuristic has no algorithm for this problem";
    return NULL;
}

static cudnnStatus_t run(cudnnHandle_t handle, const void *call_, const void *plan_, void *ws, size_t ws_bytes)
{
    const struct ocd_gemm_call *call = (const struct ocd_gemm_call *)call_;
    const struct ocd_gemm_problem *p = call->p;
    const struct ocd_cublaslt_api *api = ocd_cublaslt_api();
    cublasLtHandle_t lt;
    const char *why = ocd_cublaslt_handle(handle, &lt);
    if (why != NULL) return OCD_FAIL(CUDNN_STATUS_EXECUTION_FAILED, "%s", why);
    const float alpha = (float)p->alpha, beta = (float)p->beta;
    struct lt_descs d;
    cublasStatus_t st = descs_make(api, call, &d);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = api->matmul(lt, d.op, &alpha, call->a, d.a, call->b, d.b, &beta, call->c, d.c, call->c, d.c,
                         &((const struct lt_plan *)plan_)->algo, NULL, 0, handle->stream);
    descs_free(api, &d);
    if (st != CUBLAS_STATUS_SUCCESS) return ocd_cublaslt_status(st, "cublasLtMatmul", __func__, __FILE__, __LINE__);
    if (!act_in_pass(p)) return CUDNN_STATUS_SUCCESS;
    /* the activation over D, which holds alpha * A B + beta * C + bias */
    struct ocd_gemm_problem act = *p;
    act.bias = OCD_GEMM_BIAS_NONE;
    const struct ocd_gemm_call pass = {&act, call->a, call->b, call->c, NULL};
    return ocd_cuda_gemm_epilogue(handle, &pass);
}

const struct ocd_impl_planned ocd_cuda_gemm_cublaslt_planned = {plan, NULL, run};
