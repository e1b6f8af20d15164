/* gemm.h: the GEMM problem every GEMM-shaped op shares (convolution, RNN, attention, the graph
   API's matmul), and the declarations of its implementations (table in src/ops/gemm.c).

   One problem, in the BLAS convention (column-major, as cuBLAS takes it):
       C = act(alpha * op(A) * op(B) + beta * C + bias)
   for each of `batch` matrices, op(A) m x k, op(B) k x n, C m x n. Element (i, j) of a matrix X
   with leading dimension ldx lives at X[i + j * ldx]; A is stored m x k (lda >= m), or k x m
   (lda >= k) when trans_a, and B likewise k x n or n x k. A row-major caller passes its
   operands swapped (C^T = B^T * A^T). Batches are strided (matrix b of X at X + b * stride_x,
   a stride 0 reuses one matrix) or given as arrays of batch pointers, which live where the
   data lives (host memory on the host backend, device memory on CUDA).

   Types: A and B share ab_type; C (and the bias) is ab_type, or float for half and bfloat16
   operands. Products accumulate in the compute type: FP32 for float, half and bfloat16 data,
   TF32 (operands rounded to 10 mantissa bits, float accumulation; where a backend has no TF32
   unit it computes in FP32) for float data, FP64 for double data. The epilogue runs in the
   compute type's precision or better: beta == 0 never reads C; the bias is one value per row
   (m values) or per column (n values); the activation is one of two kinds: an activation mode
   of the legacy API with its parameters (act: the library's activation math,
   problem/activation.h), or a unary forward step of the graph API's pointwise modes (pw_act:
   RELU_FWD with its clips and slope, TANH, SIGMOID, ELU, GELU in its erf form, SOFTPLUS, SWISH,
   with the step's alpha1, evaluated by the pointwise chains' ocd_pw_apply), through which a
   graph's MatmulBiasAct folds into the GEMM (graph/engine_plan.c). Every entry takes the
   activation modes; every entry but cuBLASLt's takes the pointwise steps too; where none takes
   the step, a graph keeps its chain as a pass after the GEMM. alpha and beta
   are held as double whatever the type. */
#ifndef OCD_PROBLEM_GEMM_H
#define OCD_PROBLEM_GEMM_H

#include "core/activation_desc.h"
#include "core/impl.h"
#include "problem/pointwise.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ocd_gemm_compute { OCD_GEMM_COMPUTE_F32, OCD_GEMM_COMPUTE_TF32, OCD_GEMM_COMPUTE_F64 };

enum ocd_gemm_bias {
    OCD_GEMM_BIAS_NONE,
    OCD_GEMM_BIAS_ROW, /* bias[i] added to row i of C: m values */
    OCD_GEMM_BIAS_COL  /* bias[j] added to column j of C: n values */
};

struct ocd_gemm_problem {
    int64_t m, n, k;
    bool trans_a, trans_b;
    int64_t lda, ldb, ldc;
    int64_t batch;                        /* matrices, >= 1 */
    bool pointer_array;                   /* a, b, c are arrays of batch pointers */
    int64_t stride_a, stride_b, stride_c; /* elements between matrices (strided batches) */
    cudnnDataType_t ab_type, c_type;
    enum ocd_gemm_compute compute;
    double alpha, beta;
    enum ocd_gemm_bias bias;
    bool act_on;                      /* an activation mode (act); neither this nor pw_act_on: IDENTITY */
    struct ocd_activation_params act; /* read when act_on */
    bool pw_act_on;                   /* a unary forward pointwise step (pw_act); act_on is then false */
    struct ocd_pw_step pw_act;        /* read when pw_act_on; its slots are not used */
};

/* One call: the problem and its data. With pointer_array, a, b and c point to arrays of batch
   pointers (const void *const[], const void *const[], void *const[]). */
struct ocd_gemm_call {
    const struct ocd_gemm_problem *p;
    const void *a, *b;
    void *c;
    const void *bias; /* NULL unless p->bias != OCD_GEMM_BIAS_NONE */
};

/* Runs a GEMM: validates the problem (BAD_PARAM, logged, nothing written: sizes below 1 or at or
   above 2^31, leading dimensions smaller than their matrix, overlapping output batches, a type
   combination the problem above does not list, a missing pointer), then takes the first
   implementation of the handle's backend that applies (NOT_SUPPORTED, logged, when none does).
   Internal to the libraries; op names the caller in logs. */
cudnnStatus_t ocd_gemm(cudnnHandle_t handle, const struct ocd_gemm_problem *p, const void *a, const void *b,
                       void *c, const void *bias, const char *op);

/* Whether an implementation of the handle's backend serves the problem, its data not yet known:
   the graph API asks before it folds a chain into the epilogue (an entry that declines data for
   its alignment has one after it that takes any). */
bool ocd_gemm_served(cudnnHandle_t handle, const struct ocd_gemm_problem *p);

/* For an op that runs several GEMMs of a compute type: makes sure that those that follow on this
   handle allocate no memory (the host backend keeps their scratch from now on; CUDA's GEMMs
   allocate none), so that the op can fail for memory before it writes anything. ALLOC_FAILED,
   logged, when the memory cannot be had. */
cudnnStatus_t ocd_gemm_reserve(cudnnHandle_t handle, enum ocd_gemm_compute compute);

/* The compute type a caller with a cuDNN math type asks for: FP64 for double operands, TF32 for
   float operands where the math type allows tensor cores (ocd_tensor_math_rejects), FP32
   otherwise. */
enum ocd_gemm_compute ocd_gemm_compute_for(cudnnDataType_t ab_type, cudnnMathType_t math);

/* Scalar offset of element (row, col) of a stored matrix of leading dimension ld, transposed or not. */
static inline int64_t ocd_gemm_offset(bool trans, int64_t ld, int64_t row, int64_t col)
{
    return trans ? col + row * ld : row + col * ld;
}

/* ---- implementations: (handle, const struct ocd_gemm_call *) ------------------------------------ */

cudnnStatus_t ocd_host_gemm_packed(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
/* The host entries' last steps of the epilogue on element (i, j): v (alpha * product + beta * C)
   plus the bias, activated, in double. */
double ocd_host_gemm_finish(const struct ocd_gemm_call *call, int64_t i, int64_t j, double v);
cudnnStatus_t ocd_host_gemm_reserve(cudnnHandle_t handle, bool dbl); /* ocd_gemm_reserve on the host */
#ifdef OCD_HAVE_CBLAS
const char *ocd_host_gemm_cblas_applies(cudnnHandle_t handle, const void *call);
cudnnStatus_t ocd_host_gemm_cblas(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
#endif
#ifdef OCD_HAVE_CUDA
extern const struct ocd_impl_planned ocd_cuda_gemm_cublaslt_planned; /* planned: the heuristic's algorithm */
const char *ocd_cuda_gemm_cublas_applies(cudnnHandle_t handle, const void *call);
cudnnStatus_t ocd_cuda_gemm_cublas(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
const char *ocd_cuda_gemm_mma_applies(cudnnHandle_t handle, const void *call);
cudnnStatus_t ocd_cuda_gemm_mma(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_gemm_plain(cudnnHandle_t handle, const void *call, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_GEMM_H */
