/* version_train.c: the version check of libcudnn_ops_train.so.8: the library is of the same version as the
   ops_infer it was loaded with. */
#include "core/ocd.h"

cudnnStatus_t CUDNNWINAPI cudnnOpsTrainVersionCheck(void)
{
    return ocd_version_check(CUDNN_OPS_TRAIN_MAJOR, CUDNN_OPS_TRAIN_MINOR, CUDNN_OPS_TRAIN_PATCH);
}
