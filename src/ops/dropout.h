/* dropout.h: the dropout descriptor and the entry-layer helpers of the dropout calls (the checks
   both directions share, the runs through the tables, the applies() of the entries). The
   problem, the states buffer, the mask rule and the kernels are in problem/dropout.h. */
#ifndef OCD_OPS_DROPOUT_H
#define OCD_OPS_DROPOUT_H

#include "core/impl.h"
#include "problem/dropout.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cudnnDropoutStruct {
    struct ocd_object obj;
    float dropout;               /* probability of zeroing an element, in [0, 1] */
    void *states;                /* NULL until Set was given states, or Restore was called */
    unsigned long long seed;
};

/* The checks cudnnDropoutForward and cudnnDropoutBackward share (BAD_PARAM, nothing written),
   then the problem: src/dst are x/y (forward) or dy/dx (backward). */
cudnnStatus_t ocd_dropout_problem_init(cudnnHandle_t handle, cudnnDropoutDescriptor_t desc,
                                       cudnnTensorDescriptor_t src_desc, const void *src,
                                       cudnnTensorDescriptor_t dst_desc, void *dst,
                                       void *reserve, size_t reserve_bytes,
                                       struct ocd_dropout_problem *p);

/* Sets the threshold and scale of a dropout probability. */
void ocd_dropout_set_rate(struct ocd_dropout_problem *p, float prob);

/* Run a problem built by the caller (inside the libraries: multi-head attention's
   post-projection dropout) through the forward (ops_infer) or backward (ops_train) table. */
cudnnStatus_t ocd_dropout_forward_run(cudnnHandle_t handle, const struct ocd_dropout_problem *p, const char *op);
cudnnStatus_t ocd_dropout_backward_run(cudnnHandle_t handle, const struct ocd_dropout_problem *p, const char *op);

/* applies() of the entries: the data types dropout computes in, and the vectorized CUDA path's
   conditions (both tensors packed row-major, pointers aligned to four elements). */
const char *ocd_dropout_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_dropout_applies_vec4(cudnnHandle_t handle, const void *problem);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_DROPOUT_H */
