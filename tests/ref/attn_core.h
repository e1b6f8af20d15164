/* ref/attn_core.h: reference attention core in double, written from the cuDNN 8.2 documentation
   of cudnnMultiHeadAttnForward (windows loWinIdx/hiWinIdx per query step, per-sequence lengths,
   beams and the query map) and the textbook softmax attention, independent of src/: for each
   row, the full score vector, its softmax, the dropout mask (the Philox rule of ref/dropout.h
   on element (((b * beams + m) * heads + h) * max_q + i) * max_kv + j with the call number
   replaced by `offset`) and the products. The backward forms dP, the softmax Jacobian
   (dS = P (dP - sum_j P dP)) and the three products explicitly.

   Arrays are dense, row-major: q and o [batch][beams][heads][max_q][d], k and v (and dk, dv)
   [batch][kv_beams][heads][max_kv][d] with kv_beams = kv_shared ? 1 : beams. Only the rows the
   core writes are written here (the caller fills the arrays with the prior contents): o's and
   (unless accumulate) dq's rows in [q_first, q_first + q_count), zeros for a row past its length
   or without keys; dk's and dv's rows, zeros past len_kv unless accumulate. */
#ifndef OCD_TESTS_REF_ATTN_CORE_H
#define OCD_TESTS_REF_ATTN_CORE_H

#include <stdbool.h>
#include <stdint.h>

struct ref_attn {
    int batch, beams, heads, max_q, max_kv, dqk, dv;
    bool kv_shared;
    int q_first, q_count;
    double scaler;
    const int *len_q, *len_kv; /* batch * beams, batch * kv_beams */
    const int *lo_win, *hi_win; /* max_q each */
    double dropout;
    uint64_t seed, offset;
    bool accumulate;
};

void ref_attn_forward(const struct ref_attn *a, const double *q, const double *k, const double *v, double *o);
void ref_attn_backward(const struct ref_attn *a, const double *q, const double *k, const double *v,
                       const double *d_o, double *dq, double *dk, double *dv);

#endif /* OCD_TESTS_REF_ATTN_CORE_H */
