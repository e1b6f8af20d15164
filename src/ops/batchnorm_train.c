/* batchnorm_train.c: the training-library batch-normalization calls (forward training, backward,
   their Ex variants and the Ex size queries). Each translates its arguments for the engine in
   batchnorm.c (ocd_bn_run and the size functions), which validates and runs them. The non-Ex
   calls are the Ex calls with plain normalization and no workspace or reserve space. */
#include "ops/batchnorm.h"

cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t zDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p mode=%d bnOps=%d xDesc=%p zDesc=%p yDesc=%p bnScaleBiasMeanVarDesc=%p "
                "activationDesc=%p", (void *)handle, (int)mode, (int)bnOps, (void *)xDesc,
                (void *)zDesc, (void *)yDesc, (void *)bnScaleBiasMeanVarDesc, (void *)activationDesc);
    struct ocd_bn_args a = {.dir = OCD_BN_TRAINING, .ops = (int)bnOps,
                            .act_desc = activationDesc, .x_desc = xDesc, .z_desc = zDesc,
                            .y_desc = yDesc, .param_desc = bnScaleBiasMeanVarDesc,
                            .stat_desc = bnScaleBiasMeanVarDesc};
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_bn_mode(mode, &a.per_activation));
    OCD_TRY(ocd_bn_ops((int)bnOps));
    return ocd_bn_workspace_size(handle, &a, "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize",
                                 sizeInBytes);
}

cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p mode=%d bnOps=%d xDesc=%p yDesc=%p dyDesc=%p dzDesc=%p dxDesc=%p "
                "dBnScaleBiasDesc=%p activationDesc=%p", (void *)handle, (int)mode, (int)bnOps,
                (void *)xDesc, (void *)yDesc, (void *)dyDesc, (void *)dzDesc, (void *)dxDesc,
                (void *)dBnScaleBiasDesc, (void *)activationDesc);
    struct ocd_bn_args a = {.dir = OCD_BN_BACKWARD, .ops = (int)bnOps,
                            .act_desc = activationDesc, .x_desc = xDesc, .y_desc = yDesc,
                            .dy_desc = dyDesc, .dz_desc = dzDesc, .dx_desc = dxDesc,
                            .param_desc = dBnScaleBiasDesc, .stat_desc = dBnScaleBiasDesc};
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_bn_mode(mode, &a.per_activation));
    OCD_TRY(ocd_bn_ops((int)bnOps));
    return ocd_bn_workspace_size(handle, &a, "cudnnGetBatchNormalizationBackwardExWorkspaceSize",
                                 sizeInBytes);
}

cudnnStatus_t CUDNNWINAPI cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t xDesc,
    size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p mode=%d bnOps=%d activationDesc=%p xDesc=%p", (void *)handle, (int)mode,
                (int)bnOps, (void *)activationDesc, (void *)xDesc);
    struct ocd_bn_args a = {.dir = OCD_BN_TRAINING, .ops = (int)bnOps,
                            .act_desc = activationDesc, .x_desc = xDesc};
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_bn_mode(mode, &a.per_activation));
    OCD_TRY(ocd_bn_ops((int)bnOps));
    return ocd_bn_reserve_size(handle, &a, "cudnnGetBatchNormalizationTrainingExReserveSpaceSize",
                               sizeInBytes);
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
    double exponentialAverageFactor, void *resultRunningMean, void *resultRunningVariance,
    double epsilon, void *resultSaveMean, void *resultSaveInvVariance)
{
    OCD_LOG_API("handle=%p mode=%d xDesc=%p x=%p yDesc=%p y=%p bnScaleBiasMeanVarDesc=%p "
                "exponentialAverageFactor=%g epsilon=%g resultRunningMean=%p resultSaveMean=%p",
                (void *)handle, (int)mode, (void *)xDesc, x, (void *)yDesc, y,
                (void *)bnScaleBiasMeanVarDesc, exponentialAverageFactor, epsilon, resultRunningMean,
                resultSaveMean);
    struct ocd_bn_args a = {.dir = OCD_BN_TRAINING, .alpha = alpha, .beta = beta,
                            .x_desc = xDesc, .x = x, .y_desc = yDesc, .y = y,
                            .param_desc = bnScaleBiasMeanVarDesc, .stat_desc = bnScaleBiasMeanVarDesc,
                            .scale = bnScale, .bias = bnBias, .factor = exponentialAverageFactor,
                            .run_mean = resultRunningMean, .run_var = resultRunningVariance,
                            .epsilon = epsilon, .save_mean = resultSaveMean,
                            .save_invstd = resultSaveInvVariance};
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_bn_mode(mode, &a.per_activation));
    return ocd_bn_run(handle, &a, "cudnnBatchNormalizationForwardTraining");
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alpha,
    const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t zDesc, const void *zData, const cudnnTensorDescriptor_t yDesc,
    void *yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workspace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p mode=%d bnOps=%d xDesc=%p x=%p zDesc=%p z=%p yDesc=%p y=%p "
                "bnScaleBiasMeanVarDesc=%p exponentialAverageFactor=%g epsilon=%g activationDesc=%p "
                "workspace=%p workSpaceSizeInBytes=%zu reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (int)mode, (int)bnOps, (void *)xDesc, xData, (void *)zDesc, zData,
                (void *)yDesc, yData, (void *)bnScaleBiasMeanVarDesc, exponentialAverageFactor,
                epsilon, (void *)activationDesc, workspace, workSpaceSizeInBytes, reserveSpace,
                reserveSpaceSizeInBytes);
    struct ocd_bn_args a = {.dir = OCD_BN_TRAINING, .ops = (int)bnOps,
                            .act_desc = activationDesc, .alpha = alpha, .beta = beta,
                            .x_desc = xDesc, .x = xData, .z_desc = zDesc, .z = zData,
                            .y_desc = yDesc, .y = yData, .param_desc = bnScaleBiasMeanVarDesc,
                            .stat_desc = bnScaleBiasMeanVarDesc, .scale = bnScale, .bias = bnBias,
                            .factor = exponentialAverageFactor, .run_mean = resultRunningMean,
                            .run_var = resultRunningVariance, .epsilon = epsilon,
                            .save_mean = resultSaveMean, .save_invstd = resultSaveInvVariance,
                            .workspace = workspace, .workspace_bytes = workSpaceSizeInBytes,
                            .reserve = reserveSpace, .reserve_bytes = reserveSpaceSizeInBytes};
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_bn_mode(mode, &a.per_activation));
    OCD_TRY(ocd_bn_ops((int)bnOps));
    return ocd_bn_run(handle, &a, "cudnnBatchNormalizationForwardTrainingEx");
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alphaDataDiff,
    const void *betaDataDiff, const void *alphaParamDiff, const void *betaParamDiff,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t dyDesc,
    const void *dy, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale, void *dBnScaleResult,
    void *dBnBiasResult, double epsilon, const void *savedMean, const void *savedInvVariance)
{
    OCD_LOG_API("handle=%p mode=%d xDesc=%p x=%p dyDesc=%p dy=%p dxDesc=%p dx=%p dBnScaleBiasDesc=%p "
                "epsilon=%g savedMean=%p", (void *)handle, (int)mode, (void *)xDesc, x,
                (void *)dyDesc, dy, (void *)dxDesc, dx, (void *)dBnScaleBiasDesc, epsilon, savedMean);
    struct ocd_bn_args a = {.dir = OCD_BN_BACKWARD, .alpha = alphaDataDiff, .beta = betaDataDiff,
                            .alpha_param = alphaParamDiff, .beta_param = betaParamDiff,
                            .x_desc = xDesc, .x = x, .dy_desc = dyDesc, .dy = dy,
                            .dx_desc = dxDesc, .dx = dx, .param_desc = dBnScaleBiasDesc,
                            .stat_desc = dBnScaleBiasDesc, .scale = bnScale,
                            .dscale = dBnScaleResult, .dbias = dBnBiasResult, .epsilon = epsilon,
                            .saved_mean = savedMean, .saved_invstd = savedInvVariance};
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_bn_mode(mode, &a.per_activation));
    return ocd_bn_run(handle, &a, "cudnnBatchNormalizationBackward");
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const void *alphaDataDiff, const void *betaDataDiff, const void *alphaParamDiff,
    const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t yDesc, const void *yData, const cudnnTensorDescriptor_t dyDesc,
    const void *dyData, const cudnnTensorDescriptor_t dzDesc, void *dzData,
    const cudnnTensorDescriptor_t dxDesc, void *dxData, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
    const void *bnScaleData, const void *bnBiasData, void *dBnScaleData, void *dBnBiasData,
    double epsilon, const void *savedMean, const void *savedInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workSpace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p mode=%d bnOps=%d xDesc=%p x=%p yDesc=%p dyDesc=%p dy=%p dzDesc=%p dz=%p "
                "dxDesc=%p dx=%p dBnScaleBiasDesc=%p epsilon=%g savedMean=%p activationDesc=%p "
                "workSpace=%p workSpaceSizeInBytes=%zu reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (int)mode, (int)bnOps, (void *)xDesc, xData, (void *)yDesc,
                (void *)dyDesc, dyData, (void *)dzDesc, dzData, (void *)dxDesc, dxData,
                (void *)dBnScaleBiasDesc, epsilon, savedMean, (void *)activationDesc, workSpace,
                workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_bn_args a = {.dir = OCD_BN_BACKWARD, .ops = (int)bnOps,
                            .act_desc = activationDesc, .alpha = alphaDataDiff,
                            .beta = betaDataDiff, .alpha_param = alphaParamDiff,
                            .beta_param = betaParamDiff, .x_desc = xDesc, .x = xData,
                            .y_desc = yDesc, .y_in = yData, .dy_desc = dyDesc, .dy = dyData,
                            .dz_desc = dzDesc, .dz = dzData, .dx_desc = dxDesc, .dx = dxData,
                            .param_desc = dBnScaleBiasDesc, .stat_desc = dBnScaleBiasDesc,
                            .scale = bnScaleData, .bias = bnBiasData, .dscale = dBnScaleData,
                            .dbias = dBnBiasData, .epsilon = epsilon, .saved_mean = savedMean,
                            .saved_invstd = savedInvVariance, .workspace = workSpace,
                            .workspace_bytes = workSpaceSizeInBytes, .reserve = reserveSpace,
                            .reserve_bytes = reserveSpaceSizeInBytes};
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_bn_mode(mode, &a.per_activation));
    OCD_TRY(ocd_bn_ops((int)bnOps));
    return ocd_bn_run(handle, &a, "cudnnBatchNormalizationBackwardEx");
}
