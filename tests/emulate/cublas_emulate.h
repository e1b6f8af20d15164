/* cublas_emulate.h: what the emulations of the cuBLAS convolution entries (conv_cublas_slabs.cu,
   conv_cublas_channel_major.cu; both include src/cuda/conv_cublas.cu) share: the GEMM a
   descriptor (rm_gemm) asks of cuBLAS, as a plain loop in double. */
#ifndef OCD_TESTS_EMULATE_CUBLAS_EMULATE_H
#define OCD_TESTS_EMULATE_CUBLAS_EMULATE_H

#include <cstdint>

/* C = alpha op(A) op(B) of descriptor q (row-major operands, A [m][k] or, transposed, [k][m];
   B [k][n] or [n][k]) in double, each result stored as float (cuBLAS's fp32 output), read and
   written only through the descriptor's offsets, leading dimensions and batch strides. */
static inline void emu_gemm(const rm_gemm &q, double alpha, const float *a, const float *b, float *c)
{
    for (int64_t bt = 0; bt < q.batch; bt++)
        for (int64_t i = 0; i < q.m; i++)
            for (int64_t j = 0; j < q.n; j++) {
                double s = 0;
                for (int64_t l = 0; l < q.k; l++)
                    s += (double)a[q.a0 + bt * q.sa + (q.ta ? l * q.lda + i : i * q.lda + l)] *
                         b[q.b0 + bt * q.sb + (q.tb ? j * q.ldb + l : l * q.ldb + j)];
                c[q.c0 + bt * q.sc + i * q.ldc + j] = (float)(alpha * s);
            }
}

#endif /* OCD_TESTS_EMULATE_CUBLAS_EMULATE_H */
