/* divnorm_train.c: cudnnDivisiveNormalizationBackward, validated and run by ocd_divnorm_run
   (divnorm.c). x, means, dy, temp and temp2 share xDesc; dx and dMeans share dXdMeansDesc. */
#include "ops/divnorm.h"

cudnnStatus_t CUDNNWINAPI cudnnDivisiveNormalizationBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                             cudnnDivNormMode_t mode, const void *alpha,
                                                             const cudnnTensorDescriptor_t xDesc, const void *x,
                                                             const void *means, const void *dy, void *temp,
                                                             void *temp2, const void *beta,
                                                             const cudnnTensorDescriptor_t dXdMeansDesc, void *dx,
                                                             void *dMeans)
{
    OCD_LOG_API("handle=%p normDesc=%p mode=%d xDesc=%p x=%p means=%p dy=%p temp=%p temp2=%p dXdMeansDesc=%p "
                "dx=%p dMeans=%p", (void *)handle, (void *)normDesc, (int)mode, (void *)xDesc, x, means, dy,
                temp, temp2, (void *)dXdMeansDesc, dx, dMeans);
    struct ocd_divnorm_problem p = {.backward = true, .x_ptr = x, .means = means, .dy_ptr = dy, .temp = temp,
                                    .temp2 = temp2, .out_ptr = dx, .dmeans = dMeans};
    return ocd_divnorm_run(handle, normDesc, mode, alpha, beta, xDesc, dXdMeansDesc, &p,
                           "cudnnDivisiveNormalizationBackward");
}
