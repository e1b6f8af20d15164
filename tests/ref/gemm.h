/* ref/gemm.h: the reference GEMM in double, written from the BLAS definition alone (independent
   of src/): C = act(alpha * op(A) * op(B) + beta * C + bias), column-major, one matrix. */
#ifndef OCD_TESTS_REF_GEMM_H
#define OCD_TESTS_REF_GEMM_H

#include <stdbool.h>

#include <cudnn.h>

enum ref_gemm_bias { REF_GEMM_BIAS_NONE, REF_GEMM_BIAS_ROW, REF_GEMM_BIAS_COL };

struct ref_gemm {
    int m, n, k;
    bool trans_a, trans_b; /* A stored k x m, B stored n x k */
    int lda, ldb, ldc;
    double alpha, beta;    /* beta == 0: C is not read */
    enum ref_gemm_bias bias; /* ROW: bias[i] added to row i; COL: bias[j] to column j */
    bool act_on;
    cudnnActivationMode_t act;
    bool propagate_nan;
    double coef, swish_beta;
};

/* Overwrites elements (i, j), i < m, j < n, of c (leading dimension ldc); nothing else. */
void ref_gemm(const struct ref_gemm *g, const double *a, const double *b, const double *bias, double *c);

#endif /* OCD_TESTS_REF_GEMM_H */
