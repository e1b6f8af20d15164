/* rnn_train.c: the v8 backward API of libcudnn_adv_train: cudnnRNNBackwardData_v8 and
   cudnnRNNBackwardWeights_v8 (the passes in rnn_backward_train.c).

   cuDNN 8.2 rules implemented here (BAD_PARAM, logged, nothing written, unless said otherwise):
   the checks of cudnnRNNForward (ocd_rnn_prepare_v8: descriptors, the data pair, the state
   tensors, devSeqLengths, the weight space), y, dy, dx, x or dweightSpace NULL, a workspace or
   reserve smaller than cudnnGetRNNTempSpaceSizes answers for training (both are required: the
   reserve holds what the forward training call left, and backward data's gradients for
   backward weights); addGrad other than CUDNN_WGRAD_MODE_ADD is NOT_SUPPORTED (8.2 supports
   only ADD). hx, cx, dhy, dcy may be NULL (zeros), dhx and dcx NULL (not written). */
#include "adv/rnn_exec.h"

#include "core/argcheck.h"

/* The workspace and reserve of a backward call. */
static cudnnStatus_t check_spaces(const struct ocd_rnn_problem *p, struct ocd_rnn_call *c, size_t workSpaceSize,
                                  void *workSpace, size_t reserveSpaceSize, void *reserveSpace)
{
    size_t ws, rs;
    OCD_TRY(ocd_rnn_check_dropout(p));
    ocd_rnn_space_sizes(p, &c->x, true, &ws, &rs);
    OCD_TRY(ocd_rnn_check_space("workSpace", workSpaceSize, workSpace, ws));
    OCD_TRY(ocd_rnn_check_space("reserveSpace", reserveSpaceSize, reserveSpace, rs));
    c->training = true;
    c->ws = workSpace, c->ws_bytes = workSpaceSize;
    c->rs = reserveSpace, c->rs_bytes = reserveSpaceSize;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardData_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                  const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t yDesc,
                                                  const void *y, const void *dy, cudnnRNNDataDescriptor_t xDesc, void *dx,
                                                  cudnnTensorDescriptor_t hDesc, const void *hx, const void *dhy,
                                                  void *dhx, cudnnTensorDescriptor_t cDesc, const void *cx,
                                                  const void *dcy, void *dcx, size_t weightSpaceSize,
                                                  const void *weightSpace, size_t workSpaceSize, void *workSpace,
                                                  size_t reserveSpaceSize, void *reserveSpace)
{
    OCD_LOG_API("handle=%p rnnDesc=%p devSeqLengths=%p yDesc=%p y=%p dy=%p xDesc=%p dx=%p hDesc=%p hx=%p dhy=%p dhx=%p "
                "cDesc=%p cx=%p dcy=%p dcx=%p weightSpaceSize=%zu weightSpace=%p workSpaceSize=%zu workSpace=%p "
                "reserveSpaceSize=%zu reserveSpace=%p",
                (void *)handle, (void *)rnnDesc, (const void *)devSeqLengths, (void *)yDesc, y, dy, (void *)xDesc, dx,
                (void *)hDesc, hx, dhy, dhx, (void *)cDesc, cx, dcy, dcx, weightSpaceSize, weightSpace, workSpaceSize,
                workSpace, reserveSpaceSize, reserveSpace);
    struct ocd_rnn_problem p;
    struct ocd_rnn_call c = {0};
    OCD_TRY(ocd_rnn_prepare_v8(handle, rnnDesc, devSeqLengths, xDesc, yDesc, hDesc, hx || dhy || dhx, cDesc,
                               cx || dcy || dcx, weightSpaceSize, weightSpace, &p, &c));
    OCD_TRY(ocd_check_data(y, "y"));
    OCD_TRY(ocd_check_data(dy, "dy"));
    OCD_TRY(ocd_check_data(dx, "dx"));
    OCD_TRY(check_spaces(&p, &c, workSpaceSize, workSpace, reserveSpaceSize, reserveSpace));
    c.hx = hx, c.cx = cx;
    c.dy = dy, c.dhy = dhy, c.dcy = dcy;
    c.dx = dx, c.dhx = dhx, c.dcx = dcx;
    return ocd_rnn_backward_data_checked(handle, &c, "cudnnRNNBackwardData_v8");
}

cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardWeights_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                     cudnnWgradMode_t addGrad, const int32_t devSeqLengths[],
                                                     cudnnRNNDataDescriptor_t xDesc, const void *x,
                                                     cudnnTensorDescriptor_t hDesc, const void *hx,
                                                     cudnnRNNDataDescriptor_t yDesc, const void *y,
                                                     size_t weightSpaceSize, void *dweightSpace, size_t workSpaceSize,
                                                     void *workSpace, size_t reserveSpaceSize, void *reserveSpace)
{
    OCD_LOG_API("handle=%p rnnDesc=%p addGrad=%d devSeqLengths=%p xDesc=%p x=%p hDesc=%p hx=%p yDesc=%p y=%p "
                "weightSpaceSize=%zu dweightSpace=%p workSpaceSize=%zu workSpace=%p reserveSpaceSize=%zu "
                "reserveSpace=%p",
                (void *)handle, (void *)rnnDesc, (int)addGrad, (const void *)devSeqLengths, (void *)xDesc, x,
                (void *)hDesc, hx, (void *)yDesc, y, weightSpaceSize, dweightSpace, workSpaceSize, workSpace,
                reserveSpaceSize, reserveSpace);
    struct ocd_rnn_problem p;
    struct ocd_rnn_call c = {0};
    /* the cell state plays no part here: no cDesc */
    OCD_TRY(ocd_rnn_prepare_v8(handle, rnnDesc, devSeqLengths, xDesc, yDesc, hDesc, hx != NULL, NULL, false,
                               weightSpaceSize, dweightSpace, &p, &c));
    if (addGrad != CUDNN_WGRAD_MODE_ADD)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "addGrad %d: cuDNN 8.2 supports CUDNN_WGRAD_MODE_ADD only",
                        (int)addGrad);
    OCD_TRY(ocd_check_data(x, "x"));
    OCD_TRY(ocd_check_data(y, "y"));
    OCD_TRY(check_spaces(&p, &c, workSpaceSize, workSpace, reserveSpaceSize, reserveSpace));
    c.xp = x, c.hx = hx, c.yp = (void *)y;
    c.dw = dweightSpace;
    return ocd_rnn_backward_weights_checked(handle, &c, "cudnnRNNBackwardWeights_v8");
}
