/* gemm.c: ocd_gemm, the library's one GEMM entry (problem in problem/gemm.h), and its
   implementation table. Not an API function: convolution, RNN, attention and the graph API's
   matmul call it from inside the libraries.

   Validation is the API layer's rule (check once, then trust): every size, leading dimension,
   batch stride, type combination and pointer is checked here, so an implementation only says
   whether it serves the problem. Table order is the heuristic: on CUDA, cuBLASLt where it loads
   for the problems whose whole epilogue its own computes (a bias per row, ReLU: no pass over C;
   planned, its heuristic asked once per problem), then cuBLAS where it loads (alpha and beta in
   the library, bias and activation a pass over C), then the tensor-core
   kernel for the 16-bit and TF32 problems whose operands it can copy in whole 16-byte chunks,
   then the plain kernel, which serves everything (a pointwise step as the activation only while
   OPENCUDNN_UNPROVEN=1: cuda/gemm.cuh); on the host, the CBLAS library where the build
   found one and it won this process's calibration (host/gemm_cblas.h), then the packed engine,
   which serves everything. */
#include "problem/gemm.h"

#include "core/check.h"
#include "core/dtype.h"
#include "core/handle.h"
#include "core/impl.h"

#include <stddef.h>

static const struct ocd_impl gemm_impls[] = {
#ifdef OCD_HAVE_CUDA
    {"cuda:gemm_cublaslt", OCD_BACKEND_CUDA, 0, NULL, NULL, NULL, &ocd_cuda_gemm_cublaslt_planned},
    OCD_IMPL_ENTRY("cuda:gemm_cublas", OCD_BACKEND_CUDA, ocd_cuda_gemm_cublas_applies, NULL, ocd_cuda_gemm_cublas),
    OCD_IMPL_ENTRY("cuda:gemm_mma", OCD_BACKEND_CUDA, ocd_cuda_gemm_mma_applies, NULL, ocd_cuda_gemm_mma),
    OCD_IMPL_ENTRY("cuda:gemm_plain", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_gemm_plain),
#endif
#ifdef OCD_HAVE_CBLAS
    OCD_IMPL_ENTRY("host:gemm_cblas", OCD_BACKEND_HOST, ocd_host_gemm_cblas_applies, NULL, ocd_host_gemm_cblas),
#endif
    OCD_IMPL_ENTRY("host:gemm_packed", OCD_BACKEND_HOST, NULL, NULL, ocd_host_gemm_packed),
};

#define GEMM_DIM_MAX ((int64_t)1 << 31)

static cudnnStatus_t check_types(const struct ocd_gemm_problem *p)
{
    cudnnDataType_t ab = p->ab_type, c = p->c_type;
    bool ok;
    switch (ab) {
    case CUDNN_DATA_FLOAT: ok = c == ab && (p->compute == OCD_GEMM_COMPUTE_F32 || p->compute == OCD_GEMM_COMPUTE_TF32); break;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16: ok = (c == ab || c == CUDNN_DATA_FLOAT) && p->compute == OCD_GEMM_COMPUTE_F32; break;
    case CUDNN_DATA_DOUBLE: ok = c == ab && p->compute == OCD_GEMM_COMPUTE_F64; break;
    default: ok = false; break;
    }
    if (!ok)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "GEMM of %s operands into %s with compute type %d is not a listed combination",
                        ocd_dtype_name(ab), ocd_dtype_name(c), (int)p->compute);
    return CUDNN_STATUS_SUCCESS;
}

/* A stored matrix of rows x cols (column-major) at leading dimension ld. */
static cudnnStatus_t check_matrix(const char *name, int64_t rows, int64_t ld)
{
    if (ld < rows || ld >= GEMM_DIM_MAX)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "ld%s = %lld for a stored matrix of %lld rows", name, (long long)ld,
                        (long long)rows);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check(const struct ocd_gemm_problem *p, const void *a, const void *b, void *c,
                           const void *bias)
{
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1 || p->m >= GEMM_DIM_MAX || p->n >= GEMM_DIM_MAX ||
        p->k >= GEMM_DIM_MAX || p->batch >= GEMM_DIM_MAX)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "GEMM sizes m %lld n %lld k %lld batch %lld out of [1, 2^31)",
                        (long long)p->m, (long long)p->n, (long long)p->k, (long long)p->batch);
    OCD_TRY(check_matrix("a", p->trans_a ? p->k : p->m, p->lda));
    OCD_TRY(check_matrix("b", p->trans_b ? p->n : p->k, p->ldb));
    OCD_TRY(check_matrix("c", p->m, p->ldc));
    if (!p->pointer_array && p->batch > 1 &&
        (p->stride_a < 0 || p->stride_b < 0 || p->stride_c < p->ldc * p->n))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "batch strides a %lld b %lld c %lld: negative, or output matrices overlap (c needs %lld)",
                        (long long)p->stride_a, (long long)p->stride_b, (long long)p->stride_c,
                        (long long)(p->ldc * p->n));
    OCD_TRY(check_types(p));
    if ((unsigned)p->bias > OCD_GEMM_BIAS_COL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "bias mode %d", (int)p->bias);
    if (p->act_on && (unsigned)p->act.mode > CUDNN_ACTIVATION_SWISH)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "activation mode %d", (int)p->act.mode);
    if (p->pw_act_on && (p->act_on || p->pw_act.mode < CUDNN_POINTWISE_RELU_FWD || p->pw_act.mode > CUDNN_POINTWISE_SWISH_FWD))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "pointwise activation mode %d%s", (int)p->pw_act.mode,
                        p->act_on ? " beside an activation mode" : " is not a unary forward mode");
    if (a == NULL || b == NULL || c == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "a, b or c is NULL");
    if ((p->bias != OCD_GEMM_BIAS_NONE) != (bias != NULL))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "a bias pointer %s", bias ? "without a bias mode" : "is missing");
    return CUDNN_STATUS_SUCCESS;
}

enum ocd_gemm_compute ocd_gemm_compute_for(cudnnDataType_t ab_type, cudnnMathType_t math)
{
    if (ab_type == CUDNN_DATA_DOUBLE) return OCD_GEMM_COMPUTE_F64;
    if (ab_type == CUDNN_DATA_FLOAT && ocd_tensor_math_rejects(math, ab_type) == NULL) return OCD_GEMM_COMPUTE_TF32;
    return OCD_GEMM_COMPUTE_F32;
}

bool ocd_gemm_served(cudnnHandle_t handle, const struct ocd_gemm_problem *p)
{
    const struct ocd_gemm_call call = {p, NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < OCD_ARRAY_LEN(gemm_impls); i++)
        if (ocd_impl_rejects(handle, &gemm_impls[i], &call, NULL) == NULL) return true;
    return false;
}

cudnnStatus_t ocd_gemm_reserve(cudnnHandle_t handle, enum ocd_gemm_compute compute)
{
    if (ocd_handle_kind(handle) != OCD_BACKEND_HOST) return CUDNN_STATUS_SUCCESS;
    return ocd_host_gemm_reserve(handle, compute == OCD_GEMM_COMPUTE_F64);
}

cudnnStatus_t ocd_gemm(cudnnHandle_t handle, const struct ocd_gemm_problem *p, const void *a, const void *b,
                       void *c, const void *bias, const char *op)
{
    OCD_TRY(check(p, a, b, c, bias));
    struct ocd_gemm_call call = {p, a, b, c, bias};
    if (!ocd_check_enabled() || p->pointer_array) /* batch pointer arrays: no span to copy */
        return ocd_impl_run(handle, gemm_impls, OCD_ARRAY_LEN(gemm_impls), &call, op);
    /* OPENCUDNN_CHECK: the GEMMs inside RNN, attention and the graph API's matmul get the second
       opinion; each operand is described as its stored matrices (batch x columns x rows) */
    const int64_t rows_a = p->trans_a ? p->k : p->m, rows_b = p->trans_b ? p->n : p->k;
    const int64_t bias_n = p->bias == OCD_GEMM_BIAS_ROW ? p->m : p->n;
    struct ocd_tensor_view va = {.dtype = p->ab_type, .rank = 3, .vect = 1,
                                 .dims = {p->batch, p->trans_a ? p->m : p->k, rows_a},
                                 .strides = {p->stride_a, p->lda, 1}};
    struct ocd_tensor_view vb = {.dtype = p->ab_type, .rank = 3, .vect = 1,
                                 .dims = {p->batch, p->trans_b ? p->k : p->n, rows_b},
                                 .strides = {p->stride_b, p->ldb, 1}};
    struct ocd_tensor_view vc = {.dtype = p->c_type, .rank = 3, .vect = 1, .dims = {p->batch, p->n, p->m},
                                 .strides = {p->stride_c, p->ldc, 1}};
    struct ocd_tensor_view vbias = {.dtype = p->c_type, .rank = 1, .vect = 1, .dims = {bias_n}, .strides = {1}};
    /* TF32 on one side and FP32 on the other differ in the operands' eleventh bit */
    struct ocd_check_call cc = {.op = op, .problem_size = sizeof call,
                                .tolerance = p->compute == OCD_GEMM_COMPUTE_TF32 ? 1e-2 : 0};
    ocd_check_add(&cc, offsetof(struct ocd_gemm_call, a), &va, false);
    ocd_check_add(&cc, offsetof(struct ocd_gemm_call, b), &vb, false);
    if (p->bias != OCD_GEMM_BIAS_NONE) ocd_check_add(&cc, offsetof(struct ocd_gemm_call, bias), &vbias, false);
    ocd_check_add(&cc, offsetof(struct ocd_gemm_call, c), &vc, true);
    return ocd_impl_run_checked(handle, gemm_impls, OCD_ARRAY_LEN(gemm_impls), &call, &cc);
}
