/* lrn_train.c: cudnnLRNCrossChannelBackward, validated as the forward call is (lrn.c), with the
   four tensors y, dy, x and dx. */
#include "ops/lrn.h"

cudnnStatus_t CUDNNWINAPI cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                       cudnnLRNMode_t lrnMode, const void *alpha,
                                                       const cudnnTensorDescriptor_t yDesc, const void *y,
                                                       const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                       const cudnnTensorDescriptor_t xDesc, const void *x,
                                                       const void *beta, const cudnnTensorDescriptor_t dxDesc,
                                                       void *dx)
{
    OCD_LOG_API("handle=%p normDesc=%p lrnMode=%d yDesc=%p y=%p dyDesc=%p dy=%p xDesc=%p x=%p dxDesc=%p dx=%p",
                (void *)handle, (void *)normDesc, (int)lrnMode, (void *)yDesc, y, (void *)dyDesc, dy,
                (void *)xDesc, x, (void *)dxDesc, dx);
    struct ocd_lrn_problem p = {.backward = true};
    OCD_TRY(ocd_lrn_prepare(handle, normDesc, lrnMode, alpha, beta, &p));
    /* y is checked like the others, and not read: s is recomputed from x */
    const struct ocd_lrn_tensor t[] = {{xDesc, x, "xDesc", &p.x, OCD_READ_MANY}, {yDesc, y, "yDesc", &p.y, OCD_READ_NONE},
                                       {dyDesc, dy, "dyDesc", &p.dy, OCD_READ_MANY},
                                       {dxDesc, dx, "dxDesc", &p.dx, OCD_READ_NONE}};
    OCD_TRY(ocd_lrn_check_tensors(t, 4, alpha, beta, &p));
    p.x_ptr = x;
    p.dy_ptr = dy;
    p.dx_ptr = dx;
    return ocd_lrn_run(handle, &p, "cudnnLRNCrossChannelBackward");
}
