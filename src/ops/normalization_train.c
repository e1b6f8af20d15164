/* normalization_train.c: the training half of the 8.x normalization API (forward training,
   backward, and their size queries), translated for the engine of batchnorm.c by way of
   ocd_norm_prepare (normalization.c). */
#include "ops/batchnorm.h"

cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationForwardTrainingWorkspaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t zDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t normScaleBiasDesc,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t normMeanVarDesc,
    size_t *sizeInBytes, int groupCnt)
{
    OCD_LOG_API("handle=%p mode=%d normOps=%d algo=%d xDesc=%p zDesc=%p yDesc=%p normScaleBiasDesc=%p "
                "activationDesc=%p normMeanVarDesc=%p groupCnt=%d", (void *)handle, (int)mode,
                (int)normOps, (int)algo, (void *)xDesc, (void *)zDesc, (void *)yDesc,
                (void *)normScaleBiasDesc, (void *)activationDesc, (void *)normMeanVarDesc, groupCnt);
    struct ocd_bn_args a = {.dir = OCD_BN_TRAINING, .act_desc = activationDesc, .x_desc = xDesc,
                            .z_desc = zDesc, .y_desc = yDesc, .param_desc = normScaleBiasDesc,
                            .stat_desc = normMeanVarDesc};
    OCD_TRY(ocd_norm_prepare(handle, mode, normOps, algo, groupCnt, &a));
    return ocd_bn_workspace_size(handle, &a, "cudnnGetNormalizationForwardTrainingWorkspaceSize",
                                 sizeInBytes);
}

cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationBackwardWorkspaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dNormScaleBiasDesc,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t normMeanVarDesc,
    size_t *sizeInBytes, int groupCnt)
{
    OCD_LOG_API("handle=%p mode=%d normOps=%d algo=%d xDesc=%p yDesc=%p dyDesc=%p dzDesc=%p dxDesc=%p "
                "dNormScaleBiasDesc=%p activationDesc=%p normMeanVarDesc=%p groupCnt=%d",
                (void *)handle, (int)mode, (int)normOps, (int)algo, (void *)xDesc, (void *)yDesc,
                (void *)dyDesc, (void *)dzDesc, (void *)dxDesc, (void *)dNormScaleBiasDesc,
                (void *)activationDesc, (void *)normMeanVarDesc, groupCnt);
    struct ocd_bn_args a = {.dir = OCD_BN_BACKWARD, .act_desc = activationDesc, .x_desc = xDesc,
                            .y_desc = yDesc, .dy_desc = dyDesc, .dz_desc = dzDesc, .dx_desc = dxDesc,
                            .param_desc = dNormScaleBiasDesc, .stat_desc = normMeanVarDesc};
    OCD_TRY(ocd_norm_prepare(handle, mode, normOps, algo, groupCnt, &a));
    return ocd_bn_workspace_size(handle, &a, "cudnnGetNormalizationBackwardWorkspaceSize", sizeInBytes);
}

cudnnStatus_t CUDNNWINAPI cudnnGetNormalizationTrainingReserveSpaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t xDesc,
    size_t *sizeInBytes, int groupCnt)
{
    OCD_LOG_API("handle=%p mode=%d normOps=%d algo=%d activationDesc=%p xDesc=%p groupCnt=%d",
                (void *)handle, (int)mode, (int)normOps, (int)algo, (void *)activationDesc,
                (void *)xDesc, groupCnt);
    struct ocd_bn_args a = {.dir = OCD_BN_TRAINING, .act_desc = activationDesc, .x_desc = xDesc};
    OCD_TRY(ocd_norm_prepare(handle, mode, normOps, algo, groupCnt, &a));
    return ocd_bn_reserve_size(handle, &a, "cudnnGetNormalizationTrainingReserveSpaceSize", sizeInBytes);
}

cudnnStatus_t CUDNNWINAPI cudnnNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const void *alpha, const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t normScaleBiasDesc, const void *normScale, const void *normBias,
    double exponentialAverageFactor, const cudnnTensorDescriptor_t normMeanVarDesc,
    void *resultRunningMean, void *resultRunningVariance, double epsilon, void *resultSaveMean,
    void *resultSaveInvVariance, cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t zDesc, const void *zData, const cudnnTensorDescriptor_t yDesc,
    void *yData, void *workspace, size_t workSpaceSizeInBytes, void *reserveSpace,
    size_t reserveSpaceSizeInBytes, int groupCnt)
{
    OCD_LOG_API("handle=%p mode=%d normOps=%d algo=%d xDesc=%p x=%p normScaleBiasDesc=%p "
                "exponentialAverageFactor=%g normMeanVarDesc=%p epsilon=%g activationDesc=%p zDesc=%p "
                "z=%p yDesc=%p y=%p workspace=%p workSpaceSizeInBytes=%zu reserveSpace=%p "
                "reserveSpaceSizeInBytes=%zu groupCnt=%d", (void *)handle, (int)mode, (int)normOps,
                (int)algo, (void *)xDesc, xData, (void *)normScaleBiasDesc, exponentialAverageFactor,
                (void *)normMeanVarDesc, epsilon, (void *)activationDesc, (void *)zDesc, zData,
                (void *)yDesc, yData, workspace, workSpaceSizeInBytes, reserveSpace,
                reserveSpaceSizeInBytes, groupCnt);
    struct ocd_bn_args a = {.dir = OCD_BN_TRAINING, .act_desc = activationDesc, .alpha = alpha,
                            .beta = beta, .x_desc = xDesc, .x = xData, .z_desc = zDesc, .z = zData,
                            .y_desc = yDesc, .y = yData, .param_desc = normScaleBiasDesc,
                            .stat_desc = normMeanVarDesc, .scale = normScale, .bias = normBias,
                            .factor = exponentialAverageFactor, .run_mean = resultRunningMean,
                            .run_var = resultRunningVariance, .epsilon = epsilon,
                            .save_mean = resultSaveMean, .save_invstd = resultSaveInvVariance,
                            .workspace = workspace, .workspace_bytes = workSpaceSizeInBytes,
                            .reserve = reserveSpace, .reserve_bytes = reserveSpaceSizeInBytes};
    OCD_TRY(ocd_norm_prepare(handle, mode, normOps, algo, groupCnt, &a));
    return ocd_bn_run(handle, &a, "cudnnNormalizationForwardTraining");
}

cudnnStatus_t CUDNNWINAPI cudnnNormalizationBackward(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const void *alphaDataDiff, const void *betaDataDiff, const void *alphaParamDiff,
    const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t yDesc, const void *yData, const cudnnTensorDescriptor_t dyDesc,
    const void *dyData, const cudnnTensorDescriptor_t dzDesc, void *dzData,
    const cudnnTensorDescriptor_t dxDesc, void *dxData,
    const cudnnTensorDescriptor_t dNormScaleBiasDesc, const void *normScaleData,
    const void *normBiasData, void *dNormScaleData, void *dNormBiasData, double epsilon,
    const cudnnTensorDescriptor_t normMeanVarDesc, const void *savedMean,
    const void *savedInvVariance, cudnnActivationDescriptor_t activationDesc, void *workSpace,
    size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes, int groupCnt)
{
    OCD_LOG_API("handle=%p mode=%d normOps=%d algo=%d xDesc=%p x=%p yDesc=%p dyDesc=%p dy=%p "
                "dzDesc=%p dz=%p dxDesc=%p dx=%p dNormScaleBiasDesc=%p epsilon=%g normMeanVarDesc=%p "
                "savedMean=%p activationDesc=%p workSpace=%p workSpaceSizeInBytes=%zu reserveSpace=%p "
                "reserveSpaceSizeInBytes=%zu groupCnt=%d", (void *)handle, (int)mode, (int)normOps,
                (int)algo, (void *)xDesc, xData, (void *)yDesc, (void *)dyDesc, dyData,
                (void *)dzDesc, dzData, (void *)dxDesc, dxData, (void *)dNormScaleBiasDesc, epsilon,
                (void *)normMeanVarDesc, savedMean, (void *)activationDesc, workSpace,
                workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes, groupCnt);
    struct ocd_bn_args a = {.dir = OCD_BN_BACKWARD, .act_desc = activationDesc,
                            .alpha = alphaDataDiff, .beta = betaDataDiff,
                            .alpha_param = alphaParamDiff, .beta_param = betaParamDiff,
                            .x_desc = xDesc, .x = xData, .y_desc = yDesc, .y_in = yData,
                            .dy_desc = dyDesc, .dy = dyData, .dz_desc = dzDesc, .dz = dzData,
                            .dx_desc = dxDesc, .dx = dxData, .param_desc = dNormScaleBiasDesc,
                            .stat_desc = normMeanVarDesc, .scale = normScaleData,
                            .bias = normBiasData, .dscale = dNormScaleData, .dbias = dNormBiasData,
                            .epsilon = epsilon, .saved_mean = savedMean,
                            .saved_invstd = savedInvVariance, .workspace = workSpace,
                            .workspace_bytes = workSpaceSizeInBytes, .reserve = reserveSpace,
                            .reserve_bytes = reserveSpaceSizeInBytes};
    OCD_TRY(ocd_norm_prepare(handle, mode, normOps, algo, groupCnt, &a));
    return ocd_bn_run(handle, &a, "cudnnNormalizationBackward");
}
