/* dropout.h: the dropout descriptor and the entry-layer helpers of the dropout calls (the checks
   both directions share, the runs through the tables, the applies() of the entries). The
   problem, the states buffer, the mask rule and the kernels are in problem/dropout.h. */
#ifndef OCD_OPS_DROPOUT_H
#define OCD_OPS_DROPOUT_H

#include "core/check.h"
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
   then the problem: src/dst are x/y (forward) or dy/dx (backward); forward: whether the call
   writes the mask and draws from the states (the backward only reads the mask). */
cudnnStatus_t ocd_dropout_problem_init(cudnnHandle_t handle, cudnnDropoutDescriptor_t desc,
                                       cudnnTensorDescriptor_t src_desc, const void *src,
                                       cudnnTensorDescriptor_t dst_desc, void *dst,
                                       void *reserve, size_t reserve_bytes, bool forward,
                                       struct ocd_dropout_problem *p);

/* Sets the threshold and scale of a dropout probability. */
void ocd_dropout_set_rate(struct ocd_dropout_problem *p, float prob);

/* Run a problem built by the caller (inside the libraries: multi-head attention's
   post-projection dropout) through the forward (ops_infer) or backward (ops_train) table, with
   OPENCUDNN_CHECK's second opinion (core/check.h) when it is on. */
cudnnStatus_t ocd_dropout_forward_run(cudnnHandle_t handle, const struct ocd_dropout_problem *p, const char *op);
cudnnStatus_t ocd_dropout_backward_run(cudnnHandle_t handle, const struct ocd_dropout_problem *p, const char *op);

/* OPENCUDNN_CHECK. The states and the masks are the same on every backend (problem/dropout.h:
   one Philox rule, the seed and the call number in a struct ocd_dropout_state of the same layout
   everywhere), so the host reproduces a forward from a copy of the states: ocd_dropout_describe
   lists the output (y or dx) first, the input, then the mask (forward: written, compared byte
   for byte; backward: read) and the forward's states (advanced by the call, compared byte for
   byte; ocd_dropout_check_states adds a states buffer at `field` of another call's problem: an
   RNN or attention forward that draws masks). */
void ocd_dropout_describe(const struct ocd_dropout_problem *p, bool forward, const char *op,
                          struct ocd_check_call *call);
void ocd_dropout_check_states(struct ocd_check_call *call, size_t field);

/* applies() of the entries: the data types dropout computes in, and the vectorized CUDA path's
   conditions (both tensors packed row-major, pointers aligned to four elements). */
const char *ocd_dropout_applies(cudnnHandle_t handle, const void *problem);
const char *ocd_dropout_applies_vec4(cudnnHandle_t handle, const void *problem);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_DROPOUT_H */
