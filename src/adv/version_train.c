/* version_train.c: the version check of libcudnn_adv_train.so.8: the library is of the same version as the
   ops_infer it was loaded with. */
#include "core/ocd.h"

cudnnStatus_t CUDNNWINAPI cudnnAdvTrainVersionCheck(void)
{
    return ocd_version_check(CUDNN_ADV_TRAIN_MAJOR, CUDNN_ADV_TRAIN_MINOR, CUDNN_ADV_TRAIN_PATCH);
}
