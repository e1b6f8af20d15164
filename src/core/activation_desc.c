/* activation_desc.c: ocd_activation_params and ocd_activation_set_params (see activation_desc.h) while the activation
   descriptor itself is not implemented: cudnnCreateActivationDescriptor is still listed in
   api/unimplemented.txt, so no live activation descriptor can exist and every argument is
   rejected as the documentation requires for a descriptor that was not created. */
#include "core/activation_desc.h"

#include "core/object.h"

static cudnnStatus_t no_descriptor(cudnnActivationDescriptor_t desc, const char *name)
{
    return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name,
                    desc == NULL ? "NULL" : "not a live activation descriptor");
}

cudnnStatus_t ocd_activation_params(cudnnActivationDescriptor_t desc, const char *name,
                                    struct ocd_activation_params *out)
{
    (void)out;
    return no_descriptor(desc, name);
}

cudnnStatus_t ocd_activation_set_params(cudnnActivationDescriptor_t desc, const char *name,
                                        const struct ocd_activation_params *in)
{
    (void)in;
    return no_descriptor(desc, name);
}
