/* activation.h: the activation descriptor's entry-layer helpers (the standalone parameters, the
   run through the implementation table, the OPENCUDNN_CHECK description). The problem, the math
   of each mode and the implementations are in problem/activation.h. */
#ifndef OCD_OPS_ACTIVATION_H
#define OCD_OPS_ACTIVATION_H

#include "problem/activation.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptor's parameters are struct ocd_activation_params (core/activation_desc.h), which
   other ops read through ocd_activation_params; swish_beta is 1.0 after Create. */

/* The parameters of the descriptor of cudnnActivationForward/Backward: live (BAD_PARAM), and not
   IDENTITY, which "does not work with" them (BAD_PARAM, as an invalid mode for them). */
cudnnStatus_t ocd_activation_get_standalone(cudnnActivationDescriptor_t desc, struct ocd_activation_params *out);

/* Runs a validated problem through the implementation table; op names the API call in logs.
   Exported for cudnnActivationBackward in ops_train. */
struct ocd_check_call;
cudnnStatus_t ocd_activation_run(cudnnHandle_t handle, const struct ocd_activation_problem *p, const char *op);

/* The description of a call for OPENCUDNN_CHECK (core/check.h): views as the problem's group walks
   them, the replay string the benchmark's actfwd/actbwd. NULL when no check is wanted. */
struct ocd_check_call *ocd_activation_check(struct ocd_check_call *call, const struct ocd_activation_problem *p,
                                            const char *op, const struct ocd_tensor_view *const views[]);
cudnnStatus_t ocd_activation_run_checked(cudnnHandle_t handle, const struct ocd_activation_problem *p,
                                         const struct ocd_check_call *call, const char *op);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_ACTIVATION_H */
