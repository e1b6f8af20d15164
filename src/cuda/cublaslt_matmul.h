/* cublaslt_matmul.h: one cuBLASLt matmul as the library's entries describe it, the query of its
   algorithm and its run (cuBLASLt itself is loaded by cublaslt_loader.h). The GEMM entry
   (gemm_cublaslt.cu) and the fused 1x1 convolution forward (conv_cublas.cu) use it.

   cuBLASLt computes D = epilogue(alpha * op(A) op(B) + beta * C), column-major. The epilogues
   used here are DEFAULT, BIAS, RELU and RELU_BIAS: BIAS adds a packed vector of D's type, one
   value per row of D, to every column of every batch, after beta * C; RELU then takes max(x, 0)
   (a NaN gives 0). D is laid out as C (one layout serves both); D may be C itself (in place)
   or another matrix. Alpha and beta are float (the scale type, CUDA_R_32F); the compute type is
   CUBLAS_COMPUTE_32F or _32F_FAST_TF32. C is not read when beta is 0.

   The query asks the heuristic for its first algorithm with the operands' real alignments (each
   pointer with its batch stride in bytes, up to 256, as the preference's minimum alignments of
   A, B, C and D) and no workspace: the entries that call it have none to offer (a 1x1
   convolution's workspace query knows nothing of the fused call that follows it). The heuristic
   costs microseconds of host time, as much as a small GEMM's run, and a program repeats its
   matmuls (an RNN's step GEMM at every step, a graph at every execute): each handle keeps the
   answers for its last OCD_LT_ALGOS matmuls, keyed by everything the query sees but the
   pointers (shapes, types, epilogue, the alignments), beside its cuBLASLt handle (a handle is
   used by one thread at a time). Unproven (core/impl.h): without OPENCUDNN_UNPROVEN=1 every query asks
   the heuristic. The
   descriptors are made for the query and again for each run (host calls that touch no device
   memory), so that the caller keeps only the algorithm: no pointer to memory it must free. */
#ifndef OCD_CUDA_CUBLASLT_MATMUL_H
#define OCD_CUDA_CUBLASLT_MATMUL_H

#include "cuda/cublaslt_loader.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A matrix as stored: rows x cols column-major at leading dimension ld (op() transposes it when
   the matmul says so), stride elements between batches. */
struct ocd_lt_matrix {
    cudaDataType_t type;
    int64_t rows, cols, ld, stride;
    const void *data;
};

struct ocd_lt_matmul {
    cublasComputeType_t compute;
    bool trans_a, trans_b;
    cublasLtEpilogue_t epilogue;
    const void *bias; /* for BIAS and RELU_BIAS */
    int64_t batch;    /* the matrices' batch count (1: one matrix each) */
    struct ocd_lt_matrix a, b, c;
    void *d; /* laid out as c */
};

/* The alignment in bytes (a power of two, at most 256) that every matrix of an operand keeps:
   its pointer's and, across batches, its batch stride's (stride_bytes). */
uint32_t ocd_lt_alignment(const void *ptr, int64_t stride_bytes, int64_t batch);

/* The alignment of one of mm's matrices (data: its pointer, which for D is mm->d). */
uint32_t ocd_lt_matrix_alignment(const struct ocd_lt_matmul *mm, const struct ocd_lt_matrix *m, const void *data);

/* Whether v converts to float, cuBLASLt's scale type, as itself: finite and within float's
   range, or a NaN or an infinity. */
bool ocd_lt_fits_scale(double v);

/* Bytes of one element of a matrix type. */
size_t ocd_lt_type_size(cudaDataType_t t);

/* Matmuls whose algorithm a handle remembers. */
#define OCD_LT_ALGOS 16

/* The heuristic's first algorithm for mm in *algo (the preferences of the file comment), or the
   status of the query; CUBLAS_STATUS_NOT_SUPPORTED when it has none. lt is handle's cuBLASLt
   handle; handle keeps the answer (the file comment). */
cublasStatus_t ocd_lt_query(cudnnHandle_t handle, cublasLtHandle_t lt, const struct ocd_lt_matmul *mm,
                            cublasLtMatmulAlgo_t *algo);

/* Runs mm with algo on the stream; no workspace. */
cublasStatus_t ocd_lt_run(cublasLtHandle_t lt, const struct ocd_lt_matmul *mm, const cublasLtMatmulAlgo_t *algo,
                          float alpha, float beta, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CUBLASLT_MATMUL_H */
