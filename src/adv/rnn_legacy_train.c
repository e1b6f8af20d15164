/* rnn_legacy_train.c: the legacy (v6/v7) RNN training API of libcudnn_adv_train:
   cudnnRNNForwardTraining, cudnnRNNBackwardData, cudnnRNNBackwardWeights, their Ex forms and the
   training algorithm queries, translated into the v8 passes (adv/rnn_legacy.h has the rules).
   cudnnRNNBackwardWeights adds the gradients to dw, as the legacy API documents. */
#include "adv/rnn_legacy.h"

#include "core/argcheck.h"

/* The arguments of the array-form calls, for the call and for its Find. */
struct args {
    cudnnHandle_t handle;
    struct ocd_rnn_legacy *g;
    const void *x, *hx, *cx, *w, *y, *dy, *dhy, *dcy;
    cudnnTensorDescriptor_t hxDesc, cxDesc, hyDesc, cyDesc, dhyDesc, dcyDesc, dhxDesc, dcxDesc;
    cudnnFilterDescriptor_t wDesc;
    void *yo, *hy, *cy, *dx, *dhx, *dcx, *dw, *ws, *rs;
    size_t ws_bytes, rs_bytes;
};

static cudnnStatus_t forward_training(void *ctx)
{
    const struct args *a = ctx;
    return ocd_rnn_legacy_forward(a->handle, a->g, a->x, a->hxDesc, a->hx, a->cxDesc, a->cx, a->wDesc, a->w, a->yo,
                                  a->hyDesc, a->hy, a->cyDesc, a->cy, true, a->ws, a->ws_bytes, a->rs, a->rs_bytes);
}

cudnnStatus_t CUDNNWINAPI cudnnRNNForwardTraining(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                  const int seqLength, const cudnnTensorDescriptor_t *xDesc,
                                                  const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx,
                                                  const cudnnTensorDescriptor_t cxDesc, const void *cx,
                                                  const cudnnFilterDescriptor_t wDesc, const void *w,
                                                  const cudnnTensorDescriptor_t *yDesc, void *y,
                                                  const cudnnTensorDescriptor_t hyDesc, void *hy,
                                                  const cudnnTensorDescriptor_t cyDesc, void *cy, void *workSpace,
                                                  size_t workSpaceSizeInBytes, void *reserveSpace,
                                                  size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d xDesc=%p x=%p hxDesc=%p hx=%p cxDesc=%p cx=%p wDesc=%p w=%p "
                "yDesc=%p y=%p hyDesc=%p hy=%p cyDesc=%p cy=%p workSpace=%p workSpaceSizeInBytes=%zu "
                "reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, seqLength, (const void *)xDesc, x, (void *)hxDesc, hx,
                (void *)cxDesc, cx, (void *)wDesc, w, (const void *)yDesc, y, (void *)hyDesc, hy, (void *)cyDesc, cy,
                workSpace, workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_arrays(handle, rnnDesc, seqLength, xDesc, yDesc, &g));
    struct args a = {.handle = handle, .g = &g, .x = x, .hx = hx, .cx = cx, .w = w, .hxDesc = hxDesc,
                     .cxDesc = cxDesc, .hyDesc = hyDesc, .cyDesc = cyDesc, .wDesc = wDesc, .yo = y, .hy = hy, .cy = cy,
                     .ws = workSpace, .ws_bytes = workSpaceSizeInBytes, .rs = reserveSpace,
                     .rs_bytes = reserveSpaceSizeInBytes};
    cudnnStatus_t s = forward_training(&a);
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnFindRNNForwardTrainingAlgorithmEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *xDesc,
    const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t cxDesc,
    const void *cx, const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t *yDesc, void *y,
    const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc, void *cy,
    const float findIntensity, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnAlgorithmPerformance_t *perfResults, void *workspace, size_t workSpaceSizeInBytes, void *reserveSpace,
    size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d xDesc=%p x=%p hxDesc=%p hx=%p cxDesc=%p cx=%p wDesc=%p w=%p "
                "yDesc=%p y=%p hyDesc=%p hy=%p cyDesc=%p cy=%p findIntensity=%g requestedAlgoCount=%d "
                "returnedAlgoCount=%p perfResults=%p workspace=%p workSpaceSizeInBytes=%zu reserveSpace=%p "
                "reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, seqLength, (const void *)xDesc, x, (void *)hxDesc, hx,
                (void *)cxDesc, cx, (void *)wDesc, w, (const void *)yDesc, y, (void *)hyDesc, hy, (void *)cyDesc, cy,
                (double)findIntensity, requestedAlgoCount, (void *)returnedAlgoCount, (void *)perfResults, workspace,
                workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_arrays(handle, rnnDesc, seqLength, xDesc, yDesc, &g));
    struct args a = {.handle = handle, .g = &g, .x = x, .hx = hx, .cx = cx, .w = w, .hxDesc = hxDesc,
                     .cxDesc = cxDesc, .hyDesc = hyDesc, .cyDesc = cyDesc, .wDesc = wDesc, .yo = y, .hy = hy, .cy = cy,
                     .ws = workspace, .ws_bytes = workSpaceSizeInBytes, .rs = reserveSpace,
                     .rs_bytes = reserveSpaceSizeInBytes};
    cudnnStatus_t s = ocd_rnn_legacy_find(handle, &g, requestedAlgoCount, returnedAlgoCount, perfResults,
                                          forward_training, &a);
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnRNNForwardTrainingEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const cudnnRNNDataDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t cxDesc, const void *cx,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnRNNDataDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc, void *cy,
    const cudnnRNNDataDescriptor_t kDesc, const void *keys, const cudnnRNNDataDescriptor_t cDesc, void *cAttn,
    const cudnnRNNDataDescriptor_t iDesc, void *iAttn, const cudnnRNNDataDescriptor_t qDesc, void *queries,
    void *workSpace, size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p xDesc=%p x=%p hxDesc=%p hx=%p cxDesc=%p cx=%p wDesc=%p w=%p yDesc=%p y=%p "
                "hyDesc=%p hy=%p cyDesc=%p cy=%p kDesc=%p keys=%p cDesc=%p cAttn=%p iDesc=%p iAttn=%p qDesc=%p "
                "queries=%p workSpace=%p workSpaceSizeInBytes=%zu reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, (void *)xDesc, x, (void *)hxDesc, hx, (void *)cxDesc, cx,
                (void *)wDesc, w, (void *)yDesc, y, (void *)hyDesc, hy, (void *)cyDesc, cy, (void *)kDesc, keys,
                (void *)cDesc, cAttn, (void *)iDesc, iAttn, (void *)qDesc, queries, workSpace, workSpaceSizeInBytes,
                reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_data(handle, rnnDesc, xDesc, yDesc, &g));
    const void *attn[] = {kDesc, keys, cDesc, cAttn, iDesc, iAttn, qDesc, queries};
    OCD_TRY(ocd_rnn_legacy_attention(attn, 8));
    return ocd_rnn_legacy_forward(handle, &g, x, hxDesc, hx, cxDesc, cx, wDesc, w, y, hyDesc, hy, cyDesc, cy, true,
                                  workSpace, workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes);
}

/* Backward data once translated: the state and gradient descriptors, the pointers, the spaces. */
static cudnnStatus_t backward_data(cudnnHandle_t handle, struct ocd_rnn_legacy *g, const void *y, const void *dy,
                                   cudnnTensorDescriptor_t dhyDesc, const void *dhy, cudnnTensorDescriptor_t dcyDesc,
                                   const void *dcy, cudnnFilterDescriptor_t wDesc, const void *w,
                                   cudnnTensorDescriptor_t hxDesc, const void *hx, cudnnTensorDescriptor_t cxDesc,
                                   const void *cx, void *dx, cudnnTensorDescriptor_t dhxDesc, void *dhx,
                                   cudnnTensorDescriptor_t dcxDesc, void *dcx, void *ws, size_t ws_bytes, void *rs,
                                   size_t rs_bytes)
{
    int N = g->c.x.batch;
    OCD_TRY(ocd_rnn_check_states(&g->p, N, hxDesc, hx != NULL, cxDesc, cx != NULL));
    OCD_TRY(ocd_rnn_check_states(&g->p, N, dhyDesc, dhy != NULL, dcyDesc, dcy != NULL));
    OCD_TRY(ocd_rnn_check_states(&g->p, N, dhxDesc, dhx != NULL, dcxDesc, dcx != NULL));
    OCD_TRY(ocd_rnn_legacy_weights(g, wDesc, w, "wDesc"));
    OCD_TRY(ocd_check_data(y, "y"));
    OCD_TRY(ocd_check_data(dy, "dy"));
    OCD_TRY(ocd_check_data(dx, "dx"));
    OCD_TRY(ocd_rnn_legacy_spaces(g, true, ws, ws_bytes, rs, rs_bytes));
    g->c.w = w;
    g->c.hx = hx, g->c.cx = cx;
    g->c.dy = dy, g->c.dhy = dhy, g->c.dcy = dcy;
    g->c.dx = dx, g->c.dhx = dhx, g->c.dcx = dcx;
    return ocd_rnn_backward_data_checked(handle, &g->c, "cudnnRNNBackwardData");
}

static cudnnStatus_t backward_data_arrays(void *ctx)
{
    const struct args *a = ctx;
    return backward_data(a->handle, a->g, a->y, a->dy, a->dhyDesc, a->dhy, a->dcyDesc, a->dcy, a->wDesc, a->w,
                         a->hxDesc, a->hx, a->cxDesc, a->cx, a->dx, a->dhxDesc, a->dhx, a->dcxDesc, a->dcx, a->ws,
                         a->ws_bytes, a->rs, a->rs_bytes);
}

/* The translation of a backward data call's arrays (dx's steps give x's shape); free g after. */
static cudnnStatus_t backward_data_setup(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int seqLength,
                                         const cudnnTensorDescriptor_t *yDesc, const cudnnTensorDescriptor_t *dyDesc,
                                         const cudnnTensorDescriptor_t *dxDesc, struct ocd_rnn_legacy *g)
{
    OCD_TRY(ocd_rnn_legacy_arrays(handle, rnnDesc, seqLength, dxDesc, yDesc, g));
    cudnnStatus_t s = ocd_rnn_legacy_steps(g, dyDesc, "dyDesc", true);
    if (s != CUDNN_STATUS_SUCCESS) ocd_rnn_legacy_free(g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardData(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *yDesc,
    const void *y, const cudnnTensorDescriptor_t *dyDesc, const void *dy, const cudnnTensorDescriptor_t dhyDesc,
    const void *dhy, const cudnnTensorDescriptor_t dcyDesc, const void *dcy, const cudnnFilterDescriptor_t wDesc,
    const void *w, const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t cxDesc,
    const void *cx, const cudnnTensorDescriptor_t *dxDesc, void *dx, const cudnnTensorDescriptor_t dhxDesc, void *dhx,
    const cudnnTensorDescriptor_t dcxDesc, void *dcx, void *workSpace, size_t workSpaceSizeInBytes, void *reserveSpace,
    size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d yDesc=%p y=%p dyDesc=%p dy=%p dhyDesc=%p dhy=%p dcyDesc=%p dcy=%p "
                "wDesc=%p w=%p hxDesc=%p hx=%p cxDesc=%p cx=%p dxDesc=%p dx=%p dhxDesc=%p dhx=%p dcxDesc=%p dcx=%p "
                "workSpace=%p workSpaceSizeInBytes=%zu reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, seqLength, (const void *)yDesc, y, (const void *)dyDesc, dy,
                (void *)dhyDesc, dhy, (void *)dcyDesc, dcy, (void *)wDesc, w, (void *)hxDesc, hx, (void *)cxDesc, cx,
                (const void *)dxDesc, dx, (void *)dhxDesc, dhx, (void *)dcxDesc, dcx, workSpace, workSpaceSizeInBytes,
                reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(backward_data_setup(handle, rnnDesc, seqLength, yDesc, dyDesc, dxDesc, &g));
    struct args a = {.handle = handle, .g = &g, .y = y, .dy = dy, .dhyDesc = dhyDesc, .dhy = dhy, .dcyDesc = dcyDesc,
                     .dcy = dcy, .wDesc = wDesc, .w = w, .hxDesc = hxDesc, .hx = hx, .cxDesc = cxDesc, .cx = cx,
                     .dx = dx, .dhxDesc = dhxDesc, .dhx = dhx, .dcxDesc = dcxDesc, .dcx = dcx, .ws = workSpace,
                     .ws_bytes = workSpaceSizeInBytes, .rs = reserveSpace, .rs_bytes = reserveSpaceSizeInBytes};
    cudnnStatus_t s = backward_data_arrays(&a);
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnFindRNNBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *yDesc,
    const void *y, const cudnnTensorDescriptor_t *dyDesc, const void *dy, const cudnnTensorDescriptor_t dhyDesc,
    const void *dhy, const cudnnTensorDescriptor_t dcyDesc, const void *dcy, const cudnnFilterDescriptor_t wDesc,
    const void *w, const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t cxDesc,
    const void *cx, const cudnnTensorDescriptor_t *dxDesc, void *dx, const cudnnTensorDescriptor_t dhxDesc, void *dhx,
    const cudnnTensorDescriptor_t dcxDesc, void *dcx, const float findIntensity, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnAlgorithmPerformance_t *perfResults, void *workspace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d yDesc=%p y=%p dyDesc=%p dy=%p dhyDesc=%p dhy=%p dcyDesc=%p dcy=%p "
                "wDesc=%p w=%p hxDesc=%p hx=%p cxDesc=%p cx=%p dxDesc=%p dx=%p dhxDesc=%p dhx=%p dcxDesc=%p dcx=%p "
                "findIntensity=%g requestedAlgoCount=%d returnedAlgoCount=%p perfResults=%p workspace=%p "
                "workSpaceSizeInBytes=%zu reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, seqLength, (const void *)yDesc, y, (const void *)dyDesc, dy,
                (void *)dhyDesc, dhy, (void *)dcyDesc, dcy, (void *)wDesc, w, (void *)hxDesc, hx, (void *)cxDesc, cx,
                (const void *)dxDesc, dx, (void *)dhxDesc, dhx, (void *)dcxDesc, dcx, (double)findIntensity,
                requestedAlgoCount, (void *)returnedAlgoCount, (void *)perfResults, workspace, workSpaceSizeInBytes,
                reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(backward_data_setup(handle, rnnDesc, seqLength, yDesc, dyDesc, dxDesc, &g));
    struct args a = {.handle = handle, .g = &g, .y = y, .dy = dy, .dhyDesc = dhyDesc, .dhy = dhy, .dcyDesc = dcyDesc,
                     .dcy = dcy, .wDesc = wDesc, .w = w, .hxDesc = hxDesc, .hx = hx, .cxDesc = cxDesc, .cx = cx,
                     .dx = dx, .dhxDesc = dhxDesc, .dhx = dhx, .dcxDesc = dcxDesc, .dcx = dcx, .ws = workspace,
                     .ws_bytes = workSpaceSizeInBytes, .rs = reserveSpace, .rs_bytes = reserveSpaceSizeInBytes};
    cudnnStatus_t s = ocd_rnn_legacy_find(handle, &g, requestedAlgoCount, returnedAlgoCount, perfResults,
                                          backward_data_arrays, &a);
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardDataEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const cudnnRNNDataDescriptor_t yDesc, const void *y,
    const cudnnRNNDataDescriptor_t dyDesc, const void *dy, const cudnnRNNDataDescriptor_t dcDesc, const void *dcAttn,
    const cudnnTensorDescriptor_t dhyDesc, const void *dhy, const cudnnTensorDescriptor_t dcyDesc, const void *dcy,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t hxDesc, const void *hx,
    const cudnnTensorDescriptor_t cxDesc, const void *cx, const cudnnRNNDataDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t dhxDesc, void *dhx, const cudnnTensorDescriptor_t dcxDesc, void *dcx,
    const cudnnRNNDataDescriptor_t dkDesc, void *dkeys, void *workSpace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p yDesc=%p y=%p dyDesc=%p dy=%p dcDesc=%p dcAttn=%p dhyDesc=%p dhy=%p "
                "dcyDesc=%p dcy=%p wDesc=%p w=%p hxDesc=%p hx=%p cxDesc=%p cx=%p dxDesc=%p dx=%p dhxDesc=%p dhx=%p "
                "dcxDesc=%p dcx=%p dkDesc=%p dkeys=%p workSpace=%p workSpaceSizeInBytes=%zu reserveSpace=%p "
                "reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, (void *)yDesc, y, (void *)dyDesc, dy, (void *)dcDesc, dcAttn,
                (void *)dhyDesc, dhy, (void *)dcyDesc, dcy, (void *)wDesc, w, (void *)hxDesc, hx, (void *)cxDesc, cx,
                (void *)dxDesc, dx, (void *)dhxDesc, dhx, (void *)dcxDesc, dcx, (void *)dkDesc, dkeys, workSpace,
                workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g, gd;
    OCD_TRY(ocd_rnn_legacy_data(handle, rnnDesc, dxDesc, yDesc, &g));
    OCD_TRY(ocd_rnn_legacy_data(handle, rnnDesc, dxDesc, dyDesc, &gd));
    const void *attn[] = {dcDesc, dcAttn, dkDesc, dkeys};
    OCD_TRY(ocd_rnn_legacy_attention(attn, 4));
    return backward_data(handle, &g, y, dy, dhyDesc, dhy, dcyDesc, dcy, wDesc, w, hxDesc, hx, cxDesc, cx, dx, dhxDesc,
                         dhx, dcxDesc, dcx, workSpace, workSpaceSizeInBytes, reserveSpace, reserveSpaceSizeInBytes);
}

/* Backward weights once translated. */
static cudnnStatus_t backward_weights(cudnnHandle_t handle, struct ocd_rnn_legacy *g, const void *x,
                                      cudnnTensorDescriptor_t hxDesc, const void *hx, const void *y, void *ws,
                                      size_t ws_bytes, cudnnFilterDescriptor_t dwDesc, void *dw, void *rs,
                                      size_t rs_bytes)
{
    OCD_TRY(ocd_rnn_check_states(&g->p, g->c.x.batch, hxDesc, hx != NULL, NULL, false));
    OCD_TRY(ocd_rnn_legacy_weights(g, dwDesc, dw, "dwDesc"));
    OCD_TRY(ocd_check_data(x, "x"));
    OCD_TRY(ocd_check_data(y, "y"));
    OCD_TRY(ocd_rnn_legacy_spaces(g, true, ws, ws_bytes, rs, rs_bytes));
    g->c.xp = x, g->c.hx = hx, g->c.yp = (void *)y;
    g->c.w = dw;
    g->c.dw = dw;
    return ocd_rnn_backward_weights_checked(handle, &g->c, "cudnnRNNBackwardWeights");
}

static cudnnStatus_t backward_weights_arrays(void *ctx)
{
    const struct args *a = ctx;
    return backward_weights(a->handle, a->g, a->x, a->hxDesc, a->hx, a->y, a->ws, a->ws_bytes, a->wDesc, a->dw,
                            a->rs, a->rs_bytes);
}

cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardWeights(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                  const int seqLength, const cudnnTensorDescriptor_t *xDesc,
                                                  const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx,
                                                  const cudnnTensorDescriptor_t *yDesc, const void *y,
                                                  const void *workSpace, size_t workSpaceSizeInBytes,
                                                  const cudnnFilterDescriptor_t dwDesc, void *dw,
                                                  const void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d xDesc=%p x=%p hxDesc=%p hx=%p yDesc=%p y=%p workSpace=%p "
                "workSpaceSizeInBytes=%zu dwDesc=%p dw=%p reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, seqLength, (const void *)xDesc, x, (void *)hxDesc, hx,
                (const void *)yDesc, y, workSpace, workSpaceSizeInBytes, (void *)dwDesc, dw, reserveSpace,
                reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_arrays(handle, rnnDesc, seqLength, xDesc, yDesc, &g));
    struct args a = {.handle = handle, .g = &g, .x = x, .hxDesc = hxDesc, .hx = hx, .y = y, .ws = (void *)workSpace,
                     .ws_bytes = workSpaceSizeInBytes, .wDesc = dwDesc, .dw = dw, .rs = (void *)reserveSpace,
                     .rs_bytes = reserveSpaceSizeInBytes};
    cudnnStatus_t s = backward_weights_arrays(&a);
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnFindRNNBackwardWeightsAlgorithmEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *xDesc,
    const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t *yDesc,
    const void *y, const float findIntensity, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnAlgorithmPerformance_t *perfResults, const void *workspace, size_t workSpaceSizeInBytes,
    const cudnnFilterDescriptor_t dwDesc, void *dw, const void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d xDesc=%p x=%p hxDesc=%p hx=%p yDesc=%p y=%p findIntensity=%g "
                "requestedAlgoCount=%d returnedAlgoCount=%p perfResults=%p workspace=%p workSpaceSizeInBytes=%zu "
                "dwDesc=%p dw=%p reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, seqLength, (const void *)xDesc, x, (void *)hxDesc, hx,
                (const void *)yDesc, y, (double)findIntensity, requestedAlgoCount, (void *)returnedAlgoCount,
                (void *)perfResults, workspace, workSpaceSizeInBytes, (void *)dwDesc, dw, reserveSpace,
                reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_arrays(handle, rnnDesc, seqLength, xDesc, yDesc, &g));
    struct args a = {.handle = handle, .g = &g, .x = x, .hxDesc = hxDesc, .hx = hx, .y = y, .ws = (void *)workspace,
                     .ws_bytes = workSpaceSizeInBytes, .wDesc = dwDesc, .dw = dw, .rs = (void *)reserveSpace,
                     .rs_bytes = reserveSpaceSizeInBytes};
    cudnnStatus_t s = ocd_rnn_legacy_find(handle, &g, requestedAlgoCount, returnedAlgoCount, perfResults,
                                          backward_weights_arrays, &a);
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnRNNBackwardWeightsEx(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                    const cudnnRNNDataDescriptor_t xDesc, const void *x,
                                                    const cudnnTensorDescriptor_t hxDesc, const void *hx,
                                                    const cudnnRNNDataDescriptor_t yDesc, const void *y,
                                                    void *workSpace, size_t workSpaceSizeInBytes,
                                                    const cudnnFilterDescriptor_t dwDesc, void *dw, void *reserveSpace,
                                                    size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p xDesc=%p x=%p hxDesc=%p hx=%p yDesc=%p y=%p workSpace=%p "
                "workSpaceSizeInBytes=%zu dwDesc=%p dw=%p reserveSpace=%p reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, (void *)xDesc, x, (void *)hxDesc, hx, (void *)yDesc, y, workSpace,
                workSpaceSizeInBytes, (void *)dwDesc, dw, reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_data(handle, rnnDesc, xDesc, yDesc, &g));
    return backward_weights(handle, &g, x, hxDesc, hx, y, workSpace, workSpaceSizeInBytes, dwDesc, dw, reserveSpace,
                            reserveSpaceSizeInBytes);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNForwardTrainingAlgorithmMaxCount(cudnnHandle_t handle,
                                                                      const cudnnRNNDescriptor_t rnnDesc, int *count)
{
    OCD_LOG_API("handle=%p rnnDesc=%p count=%p", (void *)handle, (void *)rnnDesc, (void *)count);
    return ocd_rnn_legacy_max_count(handle, rnnDesc, count);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNBackwardDataAlgorithmMaxCount(cudnnHandle_t handle,
                                                                   const cudnnRNNDescriptor_t rnnDesc, int *count)
{
    OCD_LOG_API("handle=%p rnnDesc=%p count=%p", (void *)handle, (void *)rnnDesc, (void *)count);
    return ocd_rnn_legacy_max_count(handle, rnnDesc, count);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNBackwardWeightsAlgorithmMaxCount(cudnnHandle_t handle,
                                                                      const cudnnRNNDescriptor_t rnnDesc, int *count)
{
    OCD_LOG_API("handle=%p rnnDesc=%p count=%p", (void *)handle, (void *)rnnDesc, (void *)count);
    return ocd_rnn_legacy_max_count(handle, rnnDesc, count);
}
