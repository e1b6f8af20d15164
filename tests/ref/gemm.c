/* ref/gemm.c: the reference GEMM (ref/gemm.h). */
#include "ref/gemm.h"

#include "ref/activation.h"

void ref_gemm(const struct ref_gemm *g, const double *a, const double *b, const double *bias, double *c)
{
    for (int j = 0; j < g->n; j++) {
        for (int i = 0; i < g->m; i++) {
            double sum = 0;
            for (int l = 0; l < g->k; l++) {
                double av = g->trans_a ? a[l + i * g->lda] : a[i + l * g->lda];
                double bv = g->trans_b ? b[j + l * g->ldb] : b[l + j * g->ldb];
                sum += av * bv;
            }
            double v = g->alpha * sum;
            if (g->beta != 0) v += g->beta * c[i + j * g->ldc];
            if (g->bias == REF_GEMM_BIAS_ROW) v += bias[i];
            if (g->bias == REF_GEMM_BIAS_COL) v += bias[j];
            if (g->act_on) v = ref_activation(g->act, g->propagate_nan, g->coef, g->swish_beta, v);
            c[i + j * g->ldc] = v;
        }
    }
}
