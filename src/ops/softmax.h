/* softmax.h: the softmax entry-layer helpers shared by both directions (the run through the
   implementation table, the enum checks, the slice and batch groups). The problem and the
   implementations are in problem/softmax.h. */
#ifndef OCD_OPS_SOFTMAX_H
#define OCD_OPS_SOFTMAX_H

#include "problem/softmax.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs a validated problem through the implementation table (softmax.c); exported for
   cudnnSoftmaxBackward in ops_train. */
cudnnStatus_t ocd_softmax_run(cudnnHandle_t handle, const struct ocd_softmax_problem *p, const char *op);

/* ocd_softmax_run under OPENCUDNN_CHECK (core/check.h) when it is on: views as the problem's
   groups walk them; algo and mode for the replay string (the benchmark's softmaxfwd/bwd). */
cudnnStatus_t ocd_softmax_run_checked(cudnnHandle_t handle, const struct ocd_softmax_problem *p, const char *op,
                                      const struct ocd_tensor_view *const views[], cudnnSoftmaxAlgorithm_t algo,
                                      cudnnSoftmaxMode_t mode);

/* Validates what both directions take: the algorithm and mode enumerants (BAD_PARAM). */
cudnnStatus_t ocd_softmax_check_enums(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode);
/* Fills the slice and batch groups of p for the mode, over views[0..count-1] (the sources, then
   the destination), which have the same dims. */
void ocd_softmax_groups(struct ocd_softmax_problem *p, cudnnSoftmaxMode_t mode, int count,
                        const struct ocd_tensor_view *const views[]);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_SOFTMAX_H */
