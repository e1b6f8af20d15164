/* version.c: the version check of libcudnn_cnn_infer.so.8: the library is of the same version as the
   ops_infer it was loaded with. */
#include "core/ocd.h"

cudnnStatus_t CUDNNWINAPI cudnnCnnInferVersionCheck(void)
{
    return ocd_version_check(CUDNN_CNN_INFER_MAJOR, CUDNN_CNN_INFER_MINOR, CUDNN_CNN_INFER_PATCH);
}
