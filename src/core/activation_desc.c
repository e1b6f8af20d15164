/* activation_desc.c: ocd_activation_params (see activation_desc.h) while the activation
   descriptor itself is not implemented: cudnnCreateActivationDescriptor is still listed in
   api/unimplemented.txt, so no live activation descriptor can exist and every argument is
   rejected as the documentation requires for a descriptor that was not created. */
#include "core/activation_desc.h"

#include "core/object.h"

cudnnStatus_t ocd_activation_params(cudnnActivationDescriptor_t desc, const char *name,
                                    struct ocd_activation_params *out)
{
    (void)out;
    return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name,
                    desc == NULL ? "NULL" : "not a live activation descriptor");
}
