/* ref/attention.h: reference multi-head attention in double, written from the cuDNN 8.2
   documentation's equations alone (independent of src/): per head h the projections
   qbar = W_Q,h q + b_Q,h (q itself without a Q projection; K and V alike), the scores
   s_j = scaler <qbar, kbar_j> over the window's keys j in [max(lo, 0), min(hi, len_kv)),
   p = softmax(s), hbar_h = sum_j p_j vbar_j (0 for an empty window), and
   out = sum_h W_O,h hbar_h + b_O (the heads' hbar concatenated without an O projection), plus
   the residual. No dropout. The backward gives the gradients of sum(dout * out) with respect to
   q, k, v (the residual's path excluded, as cuDNN leaves it to the caller) and every weight.

   Data are dense in canonical order: q[b][m][t][qSize] (m over the B x M query beams),
   k and v [b][mk][t][size] with mk over the K/V beams (M under ONE_TO_ONE, else 1), out
   [b][m][t][oSize]. Weights in their own simple form: wq[h][p][e] (H x qProj x qSize, row-major),
   wk, wv alike, wo[h][o][x] (H x oProj x head_v), bq[h][p], bk, bv, bo[o]. Positions past a
   sequence's length are 0 in every output.

   tf32 evaluates the same equations as TF32 tensor cores would run their products: every operand
   of every product (the projections, the scores, the probabilities times the values, the output
   projection, and each product of the backward) rounded to TF32, 10 mantissa bits, to nearest
   (REF_TF32_NEAREST) or toward zero (REF_TF32_ZERO); sums, the softmax and the scaling exact. */
#ifndef OCD_TESTS_REF_ATTENTION_H
#define OCD_TESTS_REF_ATTENTION_H

#include <stdbool.h>

enum ref_tf32 { REF_TF32_OFF, REF_TF32_NEAREST, REF_TF32_ZERO };

struct ref_mha {
    int heads;
    double scaler;
    int q_size, k_size, v_size, q_proj, k_proj, v_proj, o_proj; /* proj 0: none */
    bool one_to_one, biases;
    int B, M, Tq, Tk;
    const int *len_q, *len_kv; /* B x M, B x mk */
    const int *lo, *hi;        /* Tq each */
    const double *wq, *wk, *wv, *wo, *bq, *bk, *bv, *bo;
    enum ref_tf32 tf32; /* REF_TF32_OFF (the zero value): exact products */
};

int ref_mha_head_qk(const struct ref_mha *a);
int ref_mha_head_v(const struct ref_mha *a);
int ref_mha_o_size(const struct ref_mha *a);
int ref_mha_kv_beams(const struct ref_mha *a);

/* res may be NULL. */
void ref_mha_forward(const struct ref_mha *a, const double *q, const double *k, const double *v, const double *res,
                      double *out);

/* Gradients (each output array is overwritten; weight gradients of absent projections are left
   alone). */
void ref_mha_backward(const struct ref_mha *a, const double *q, const double *k, const double *v,
                       const double *dout, double *dq, double *dk, double *dv, double *dwq, double *dwk, double *dwv,
                       double *dwo, double *dbq, double *dbk, double *dbv, double *dbo);

#endif /* OCD_TESTS_REF_ATTENTION_H */
