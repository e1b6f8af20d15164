/* normalization.c: the 8.x normalization API of the inference library
   (cudnnDeriveNormTensorDescriptor, cudnnNormalizationForwardInference), and the argument
   translation its training half (normalization_train.c) shares. The API computes exactly what
   batch normalization does (PER_CHANNEL is SPATIAL, PER_ACTIVATION is PER_ACTIVATION, the norm
   ops are the BN ops), so every call runs on the engine of batchnorm.c; what is its own is two
   per-slot descriptors instead of one, the algorithm, and groupCnt.

   groupCnt is a placeholder in cuDNN 8.2 ("should be set to 1"): any other value is
   NOT_SUPPORTED. An unknown algorithm is NOT_SUPPORTED (documented); PERSIST is computed as
   STANDARD, serves PER_CHANNEL only (NOT_SUPPORTED otherwise) and needs the saved statistics
   backward. Unlike cuDNN, inference takes the fused activation ops too: the engine has them.
   normMeanVarDesc may be NULL in training and backward when none of its statistics is given
   (batchnorm.c, get_stat_slots). */
#include "ops/batchnorm.h"

cudnnStatus_t ocd_norm_prepare(cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps,
                               cudnnNormAlgo_t algo, int groupCnt, struct ocd_bn_args *args)
{
    OCD_CHECK_HANDLE(handle);
    if (mode != CUDNN_NORM_PER_ACTIVATION && mode != CUDNN_NORM_PER_CHANNEL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid normalization mode %d", (int)mode);
    OCD_TRY(ocd_bn_ops((int)normOps));
    if (algo != CUDNN_NORM_ALGO_STANDARD && algo != CUDNN_NORM_ALGO_PERSIST)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "unknown normalization algorithm %d", (int)algo);
    if (algo == CUDNN_NORM_ALGO_PERSIST && mode != CUDNN_NORM_PER_CHANNEL)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "CUDNN_NORM_ALGO_PERSIST serves CUDNN_NORM_PER_CHANNEL only");
    if (groupCnt != 1)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "groupCnt is %d; cuDNN 8.2 takes only 1", groupCnt);
    args->per_activation = mode == CUDNN_NORM_PER_ACTIVATION;
    args->ops = (int)normOps;
    args->persist = algo == CUDNN_NORM_ALGO_PERSIST;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDeriveNormTensorDescriptor(cudnnTensorDescriptor_t derivedNormScaleBiasDesc,
                                                          cudnnTensorDescriptor_t derivedNormMeanVarDesc,
                                                          const cudnnTensorDescriptor_t xDesc,
                                                          cudnnNormMode_t mode, int groupCnt)
{
    OCD_LOG_API("derivedNormScaleBiasDesc=%p derivedNormMeanVarDesc=%p xDesc=%p mode=%d groupCnt=%d",
                (void *)derivedNormScaleBiasDesc, (void *)derivedNormMeanVarDesc, (void *)xDesc,
                (int)mode, groupCnt);
    if (mode != CUDNN_NORM_PER_ACTIVATION && mode != CUDNN_NORM_PER_CHANNEL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid normalization mode %d", (int)mode);
    if (groupCnt != 1)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "groupCnt is %d; cuDNN 8.2 takes only 1", groupCnt);
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, derivedNormMeanVarDesc);
    OCD_TRY(ocd_bn_derive(derivedNormScaleBiasDesc, xDesc, mode == CUDNN_NORM_PER_ACTIVATION));
    return ocd_bn_derive(derivedNormMeanVarDesc, xDesc, mode == CUDNN_NORM_PER_ACTIVATION);
}

cudnnStatus_t CUDNNWINAPI cudnnNormalizationForwardInference(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const void *alpha, const void *beta, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t normScaleBiasDesc, const void *normScale, const void *normBias,
    const cudnnTensorDescriptor_t normMeanVarDesc, const void *estimatedMean,
    const void *estimatedVariance, const cudnnTensorDescriptor_t zDesc, const void *z,
    cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void *y,
    double epsilon, int groupCnt)
{
    OCD_LOG_API("handle=%p mode=%d normOps=%d algo=%d xDesc=%p x=%p normScaleBiasDesc=%p "
                "normMeanVarDesc=%p zDesc=%p z=%p activationDesc=%p yDesc=%p y=%p epsilon=%g groupCnt=%d",
                (void *)handle, (int)mode, (int)normOps, (int)algo, (void *)xDesc, x,
                (void *)normScaleBiasDesc, (void *)normMeanVarDesc, (void *)zDesc, z,
                (void *)activationDesc, (void *)yDesc, y, epsilon, groupCnt);
    struct ocd_bn_args a = {.dir = OCD_BN_INFERENCE, .act_desc = activationDesc, .alpha = alpha,
                            .beta = beta, .x_desc = xDesc, .x = x, .z_desc = zDesc, .z = z,
                            .y_desc = yDesc, .y = y, .param_desc = normScaleBiasDesc,
                            .stat_desc = normMeanVarDesc, .scale = normScale, .bias = normBias,
                            .est_mean = estimatedMean, .est_var = estimatedVariance,
                            .epsilon = epsilon};
    OCD_TRY(ocd_norm_prepare(handle, mode, normOps, algo, groupCnt, &a));
    return ocd_bn_run(handle, &a, "cudnnNormalizationForwardInference");
}
