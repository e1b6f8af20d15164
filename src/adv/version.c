/* version.c: the version check of libcudnn_adv_infer.so.8: the library is of the same version as the
   ops_infer it was loaded with. */
#include "core/ocd.h"

cudnnStatus_t CUDNNWINAPI cudnnAdvInferVersionCheck(void)
{
    return ocd_version_check(CUDNN_ADV_INFER_MAJOR, CUDNN_ADV_INFER_MINOR, CUDNN_ADV_INFER_PATCH);
}
