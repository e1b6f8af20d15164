/* activation_desc.h: what other operations read of an activation descriptor.

   The activation descriptor belongs to src/ops/activation.c; operations that take one as an
   argument (cudnnConvolutionBiasActivationForward, the fused ops, normalization) read it only
   through this accessor, so that the descriptor's struct stays private to its file. */
#ifndef OCD_CORE_ACTIVATION_DESC_H
#define OCD_CORE_ACTIVATION_DESC_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_activation_params {
    cudnnActivationMode_t mode;
    cudnnNanPropagation_t nan_opt;
    double coef; /* clipping threshold (CLIPPED_RELU) or alpha (ELU) */
    double swish_beta;
};

/* Reads a live, set activation descriptor; BAD_PARAM (logged with `name`) otherwise. */
cudnnStatus_t ocd_activation_params(cudnnActivationDescriptor_t desc, const char *name,
                                    struct ocd_activation_params *out);

/* Writes parameters into a live activation descriptor; BAD_PARAM (logged) otherwise. */
cudnnStatus_t ocd_activation_set_params(cudnnActivationDescriptor_t desc, const char *name,
                                        const struct ocd_activation_params *in);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_ACTIVATION_DESC_H */
