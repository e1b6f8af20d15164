/* softmax_train.c: cudnnSoftmaxBackward (libcudnn_ops_train), run through the softmax table of
   ops_infer (ocd_softmax_run).

   cuDNN 8.2 rules implemented here: BAD_PARAM when the algorithm or mode is not a valid
   enumerant, when the dims of y, dy and dx differ, when the strides of y and dy differ, when the
   data types of the three differ, and when dx is dy (or y) in place with other strides. */
#include "ops/softmax.h"

#include "core/argcheck.h"

cudnnStatus_t CUDNNWINAPI cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                               cudnnSoftmaxMode_t mode, const void *alpha,
                                               const cudnnTensorDescriptor_t yDesc, const void *y,
                                               const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                               const void *beta, const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    OCD_LOG_API("handle=%p algo=%d mode=%d alpha=%p yDesc=%p y=%p dyDesc=%p dy=%p beta=%p dxDesc=%p dx=%p",
                (void *)handle, (int)algo, (int)mode, alpha, (void *)yDesc, y, (void *)dyDesc, dy, beta,
                (void *)dxDesc, dx);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_softmax_check_enums(algo, mode));
    OCD_TRY(ocd_check_scaling(alpha, beta));
    struct ocd_tensor_view yv, dyv, dxv;
    OCD_TRY(ocd_tensor_get(yDesc, "yDesc", &yv));
    OCD_TRY(ocd_tensor_get(dyDesc, "dyDesc", &dyv));
    OCD_TRY(ocd_tensor_get(dxDesc, "dxDesc", &dxv));
    OCD_TRY(ocd_check_data(y, "y"));
    OCD_TRY(ocd_check_data(dy, "dy"));
    OCD_TRY(ocd_check_data(dx, "dx"));
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_BAD_PARAM, &yv, "yDesc", &dyv, "dyDesc"));
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_BAD_PARAM, &yv, "yDesc", &dxv, "dxDesc"));
    if (!ocd_view_same_strides(&yv, &dyv))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the strides of yDesc and dyDesc differ");
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_BAD_PARAM, &yv, "yDesc", &dyv, "dyDesc"));
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_BAD_PARAM, &yv, "yDesc", &dxv, "dxDesc"));
    OCD_TRY(ocd_check_alias(dx, &dxv, "dx", dy, &dyv, "dy", OCD_READ_SAME));
    OCD_TRY(ocd_check_alias(dx, &dxv, "dx", y, &yv, "y", OCD_READ_SAME));
    OCD_TRY(ocd_check_float_type(&yv, "yDesc"));

    struct ocd_softmax_problem p = {0};
    p.log = algo == CUDNN_SOFTMAX_LOG;
    p.backward = true;
    ocd_map_io_set(&p.io, yv.dtype, alpha, beta, y, dy, dx);
    const struct ocd_tensor_view *views[] = {&yv, &dyv, &dxv};
    ocd_softmax_groups(&p, mode, 3, views);
    return ocd_softmax_run_checked(handle, &p, __func__, views, algo, mode);
}
