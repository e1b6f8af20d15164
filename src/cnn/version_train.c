/* version_train.c: the version check of libcudnn_cnn_train.so.8: the library is of the same version as the
   ops_infer it was loaded with. */
#include "core/ocd.h"

cudnnStatus_t CUDNNWINAPI cudnnCnnTrainVersionCheck(void)
{
    return ocd_version_check(CUDNN_CNN_TRAIN_MAJOR, CUDNN_CNN_TRAIN_MINOR, CUDNN_CNN_TRAIN_PATCH);
}
