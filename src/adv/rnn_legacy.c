/* rnn_legacy.c: the legacy (v6/v7) RNN compute API of libcudnn_adv_infer: the size queries
   cudnnGetRNNWorkspaceSize and cudnnGetRNNTrainingReserveSize, cudnnRNNForwardInference and its
   Ex form, the inference algorithm queries; and the translation every legacy call shares
   (ocd_rnn_legacy_*: the train library's calls use it too) into the v8 call of adv/rnn_exec.h.

   cuDNN 8.2 rules implemented here (BAD_PARAM, logged, nothing written):
   - The array forms take seqLength >= 1 tensor descriptors, one a step, each batch_t x width
     [x 1 ...] packed (PyTorch pads them to 5 dims), batch_t non-increasing and >= 1 (the packed layout: a sequence's length is
     the number of steps whose batch holds it); the input width is the network's input size,
     the output width dirs x projSize; every step of one data type, the network's.
   - The Ex forms take RNN data descriptors (any layout, as cudnnRNNForward); the attention
     arguments (kDesc, keys, cDesc, cAttn, iDesc, iAttn, qDesc, queries) are reserved in 8.2
     and must be NULL (NOT_SUPPORTED otherwise).
   - y may be NULL in inference (the final states alone: ocd_rnn_check_y), not in training.
   - hxDesc, cxDesc, hyDesc, cyDesc (and the gradients' descriptors) are packed (layers x dirs)
     x batch x projSize (hiddenSize for the cell) tensors, or NULL together with their pointer
     (ocd_rnn_check_states); wDesc a filter of the data type with at least the weight
     space's elements.
   - The workspace covers inference, training and both backward passes (one query serves them
     all); the reserve is the training reserve of cudnnGetRNNTempSpaceSizes.
   - One algorithm: the descriptor's (the persistent ones under their conditions, as
     cudnnRNNForward checks them: ocd_rnn_check_algo); the MaxCount queries answer 1, the Find
     calls time it. */
#include "adv/rnn_legacy.h"

#include "core/argcheck.h"
#include "core/object.h"
#include "ops/algorithm.h"
#include "core/dtype.h"
#include "core/tensor.h"

#include <stdlib.h>
#include <string.h>

/* Steps of one array: batch sizes and the common width and type. */
static cudnnStatus_t read_steps(int seq, const cudnnTensorDescriptor_t *desc, const char *name, int width,
                                cudnnDataType_t dtype, int *batches)
{
    if (desc == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    for (int t = 0; t < seq; t++) {
        struct ocd_tensor_view v;
        OCD_TRY(ocd_tensor_get(desc[t], name, &v));
        if (!ocd_rnn_trailing_ones(&v, 2))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s[%d] must be batch x width [x 1 ...]", name, t);
        if (v.dims[1] != width || v.strides[1] != 1 || v.strides[0] != width)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s[%d] must be packed, %d wide (is %lld)", name, t, width,
                            (long long)v.dims[1]);
        if (v.dtype != dtype)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s[%d] holds %s, the network %s", name, t,
                            ocd_dtype_name(v.dtype), ocd_dtype_name(dtype));
        if (batches[t] < 0) batches[t] = (int)v.dims[0];
        else if (batches[t] != v.dims[0])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s[%d] has batch %lld, the inputs %d", name, t,
                            (long long)v.dims[0], batches[t]);
        if (t > 0 && batches[t] > batches[t - 1])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s: the batch grows at step %d (%d > %d)", name, t, batches[t],
                            batches[t - 1]);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_legacy_steps(const struct ocd_rnn_legacy *g, const cudnnTensorDescriptor_t *desc,
                                   const char *name, bool output)
{
    int T = g->c.x.max_seq, *batches = ocd_malloc(sizeof(int) * (size_t)T);
    if (batches == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for %d steps", T);
    for (int t = 0; t < T; t++) {
        batches[t] = 0;
        for (int n = 0; n < g->c.x.batch; n++) batches[t] += g->lengths[n] > t;
    }
    cudnnStatus_t s = read_steps(T, desc, name, output ? g->p.dirs * g->p.proj_size : g->p.input_size, g->p.dtype,
                                 batches);
    free(batches);
    return s;
}

void ocd_rnn_legacy_free(struct ocd_rnn_legacy *g)
{
    free(g->lengths);
    g->lengths = NULL;
}

cudnnStatus_t ocd_rnn_legacy_arrays(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int seqLength,
                                    const cudnnTensorDescriptor_t *xDesc, const cudnnTensorDescriptor_t *yDesc,
                                    struct ocd_rnn_legacy *g)
{
    OCD_CHECK_HANDLE(handle);
    g->lengths = NULL;
    if (seqLength < 1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLength %d is below 1", seqLength);
    if (xDesc == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc is NULL");
    OCD_TRY(ocd_rnn_problem_from_legacy(rnnDesc, xDesc[0], &g->p));
    int *batches = ocd_malloc(sizeof(int) * (size_t)seqLength);
    if (batches == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for %d steps", seqLength);
    for (int t = 0; t < seqLength; t++) batches[t] = -1;
    cudnnStatus_t s = read_steps(seqLength, xDesc, "xDesc", g->p.input_size, g->p.dtype, batches);
    if (s == CUDNN_STATUS_SUCCESS && yDesc)
        s = read_steps(seqLength, yDesc, "yDesc", g->p.dirs * g->p.proj_size, g->p.dtype, batches);
    if (s == CUDNN_STATUS_SUCCESS && batches[seqLength - 1] < 1)
        s = OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the batch of step %d is %d", seqLength - 1, batches[seqLength - 1]);
    int N = s == CUDNN_STATUS_SUCCESS ? batches[0] : 0;
    if (s == CUDNN_STATUS_SUCCESS && (g->lengths = ocd_calloc((size_t)N, sizeof(int))) == NULL)
        s = OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for %d lengths", N);
    if (s == CUDNN_STATUS_SUCCESS)
        for (int t = 0; t < seqLength; t++)
            for (int n = 0; n < batches[t]; n++) g->lengths[n]++;
    free(batches);
    OCD_TRY(s);
    struct ocd_rnn_data d = {g->p.dtype, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, seqLength, N, g->p.input_size,
                             g->lengths, false, 0};
    g->c = (struct ocd_rnn_call){0};
    g->c.p = &g->p;
    g->c.x = d;
    d.vec = g->p.dirs * g->p.proj_size;
    g->c.y = d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_legacy_data(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnRNNDataDescriptor_t xDesc,
                                  cudnnRNNDataDescriptor_t yDesc, struct ocd_rnn_legacy *g)
{
    OCD_CHECK_HANDLE(handle);
    g->lengths = NULL;
    g->c = (struct ocd_rnn_call){0};
    OCD_TRY(ocd_rnn_problem_from_desc(rnnDesc, &g->p));
    OCD_TRY(ocd_rnn_data_from_desc(xDesc, &g->c.x));
    OCD_TRY(ocd_rnn_data_from_desc(yDesc, &g->c.y));
    cudnnDataType_t t = g->c.x.dtype;
    if (t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_DOUBLE && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc holds %s: RNNs take float, double, half or bfloat16",
                        ocd_dtype_name(t));
    g->p.dtype = t;
    g->p.input_size = g->c.x.vec;
    if (g->p.input_mode == CUDNN_SKIP_INPUT && g->p.input_size != g->p.hidden_size)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "CUDNN_SKIP_INPUT needs the input width %d == hiddenSize %d",
                        g->p.input_size, g->p.hidden_size);
    OCD_TRY(ocd_rnn_check_data_pair(&g->p, &g->c.x, &g->c.y));
    g->c.p = &g->p;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_legacy_weights(struct ocd_rnn_legacy *g, cudnnFilterDescriptor_t wDesc, const void *w,
                                     const char *name)
{
    struct ocd_tensor_view v;
    OCD_TRY(ocd_filter_get(wDesc, name, &v));
    int64_t count = 1;
    for (int i = 0; i < v.rank; i++) count *= v.dims[i];
    if (v.dtype != g->p.dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s holds %s, the network %s", name, ocd_dtype_name(v.dtype),
                        ocd_dtype_name(g->p.dtype));
    if (count < ocd_rnn_weight_elems(&g->p))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %lld elements, the network %lld", name, (long long)count,
                        (long long)ocd_rnn_weight_elems(&g->p));
    return ocd_check_data(w, name[0] == 'd' ? "dw" : "w");
}

void ocd_rnn_legacy_sizes(const struct ocd_rnn_legacy *g, size_t *ws, size_t *rs)
{
    size_t wi, ri, wt;
    ocd_rnn_space_sizes(&g->p, &g->c.x, false, &wi, &ri);
    ocd_rnn_space_sizes(&g->p, &g->c.x, true, &wt, rs);
    *ws = wi > wt ? wi : wt;
}

cudnnStatus_t ocd_rnn_legacy_spaces(struct ocd_rnn_legacy *g, bool training, void *ws, size_t ws_bytes, void *rs,
                                    size_t rs_bytes)
{
    OCD_TRY(ocd_rnn_check_algo(&g->p, &g->c.x));
    size_t need_ws, need_rs;
    ocd_rnn_legacy_sizes(g, &need_ws, &need_rs);
    OCD_TRY(ocd_rnn_check_space("workSpace", ws_bytes, ws, need_ws));
    if (training) {
        OCD_TRY(ocd_rnn_check_dropout(&g->p));
        OCD_TRY(ocd_rnn_check_space("reserveSpace", rs_bytes, rs, need_rs));
    }
    g->c.training = training;
    g->c.ws = ws, g->c.ws_bytes = ws_bytes;
    g->c.rs = rs, g->c.rs_bytes = rs_bytes;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_legacy_attention(const void *const *args, int count)
{
    for (int i = 0; i < count; i++)
        if (args[i] != NULL)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                            "the attention arguments (kDesc .. queries) are reserved in cuDNN 8.2: pass NULL");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_legacy_max_count(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int *count)
{
    OCD_CHECK_HANDLE(handle);
    struct ocd_rnn_problem p;
    OCD_TRY(ocd_rnn_problem_from_desc(rnnDesc, &p));
    if (count == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "count is NULL");
    *count = 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_legacy_find(cudnnHandle_t handle, const struct ocd_rnn_legacy *g, int requested, int *returned,
                                  cudnnAlgorithmPerformance_t *perf, ocd_timed_work work, void *ctx)
{
    if (requested < 1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "requestedAlgoCount %d is below 1", requested);
    if (returned == NULL || perf == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "returnedAlgoCount or perfResults is NULL");
    if (!ocd_object_alive(OCD_OBJ_ALGORITHM_PERF, perf[0]))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "perfResults[0] is not a live performance object");
    size_t ws, rs;
    ocd_rnn_legacy_sizes(g, &ws, &rs);
    float ms = 0;
    OCD_TRY(ocd_backend_time(handle, work, ctx, &ms));
    cudnnAlgorithm_t a;
    memset(&a, 0, sizeof a);
    a.algo.RNNAlgo = g->p.algo;
    OCD_TRY(ocd_algorithm_perf_fill(perf[0], a, CUDNN_STATUS_SUCCESS, ms, ws));
    *returned = 1;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- size queries ---------------------------------------------------------------------------- */

static cudnnStatus_t legacy_size(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int seqLength,
                                 const cudnnTensorDescriptor_t *xDesc, size_t *sizeInBytes, bool reserve)
{
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_arrays(handle, rnnDesc, seqLength, xDesc, NULL, &g));
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    if (sizeInBytes == NULL) {
        s = OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    } else {
        size_t ws, rs;
        ocd_rnn_legacy_sizes(&g, &ws, &rs);
        *sizeInBytes = reserve ? rs : ws;
    }
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNWorkspaceSize(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                   const int seqLength, const cudnnTensorDescriptor_t *xDesc,
                                                   size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d xDesc=%p sizeInBytes=%p", (void *)handle, (void *)rnnDesc,
                seqLength, (const void *)xDesc, (void *)sizeInBytes);
    return legacy_size(handle, rnnDesc, seqLength, xDesc, sizeInBytes, false);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNTrainingReserveSize(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                         const int seqLength, const cudnnTensorDescriptor_t *xDesc,
                                                         size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d xDesc=%p sizeInBytes=%p", (void *)handle, (void *)rnnDesc,
                seqLength, (const void *)xDesc, (void *)sizeInBytes);
    return legacy_size(handle, rnnDesc, seqLength, xDesc, sizeInBytes, true);
}

/* ---- forward ---------------------------------------------------------------------------------- */

cudnnStatus_t ocd_rnn_legacy_forward(cudnnHandle_t handle, struct ocd_rnn_legacy *g, const void *x,
                                     cudnnTensorDescriptor_t hxDesc, const void *hx, cudnnTensorDescriptor_t cxDesc,
                                     const void *cx, cudnnFilterDescriptor_t wDesc, const void *w, void *y,
                                     cudnnTensorDescriptor_t hyDesc, void *hy, cudnnTensorDescriptor_t cyDesc, void *cy,
                                     bool training, void *ws, size_t ws_bytes, void *rs, size_t rs_bytes)
{
    OCD_TRY(ocd_rnn_check_states(&g->p, g->c.x.batch, hxDesc, hx != NULL, cxDesc, cx != NULL));
    OCD_TRY(ocd_rnn_check_states(&g->p, g->c.x.batch, hyDesc, hy != NULL, cyDesc, cy != NULL));
    OCD_TRY(ocd_rnn_legacy_weights(g, wDesc, w, "wDesc"));
    OCD_TRY(ocd_check_data(x, "x"));
    OCD_TRY(ocd_rnn_check_y(y, training));
    OCD_TRY(ocd_rnn_legacy_spaces(g, training, ws, ws_bytes, rs, rs_bytes));
    g->c.w = w;
    g->c.xp = x, g->c.hx = hx, g->c.cx = cx;
    g->c.yp = y, g->c.hy = hy, g->c.cy = cy;
    /* the array, Ex and Find forms all come here; the log names the pair they belong to */
    return ocd_rnn_forward_checked(handle, &g->c, training ? "cudnnRNNForwardTraining" : "cudnnRNNForwardInference");
}

/* The arguments of cudnnRNNForwardInference, for the call and for its Find. */
struct fwd_args {
    cudnnHandle_t handle;
    struct ocd_rnn_legacy *g;
    const void *x, *hx, *cx, *w;
    cudnnTensorDescriptor_t hxDesc, cxDesc, hyDesc, cyDesc;
    cudnnFilterDescriptor_t wDesc;
    void *y, *hy, *cy, *ws;
    size_t ws_bytes;
};

static cudnnStatus_t forward_inference(void *ctx)
{
    const struct fwd_args *a = ctx;
    return ocd_rnn_legacy_forward(a->handle, a->g, a->x, a->hxDesc, a->hx, a->cxDesc, a->cx, a->wDesc, a->w, a->y,
                                  a->hyDesc, a->hy, a->cyDesc, a->cy, false, a->ws, a->ws_bytes, NULL, 0);
}

cudnnStatus_t CUDNNWINAPI cudnnRNNForwardInference(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                   const int seqLength, const cudnnTensorDescriptor_t *xDesc,
                                                   const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx,
                                                   const cudnnTensorDescriptor_t cxDesc, const void *cx,
                                                   const cudnnFilterDescriptor_t wDesc, const void *w,
                                                   const cudnnTensorDescriptor_t *yDesc, void *y,
                                                   const cudnnTensorDescriptor_t hyDesc, void *hy,
                                                   const cudnnTensorDescriptor_t cyDesc, void *cy, void *workSpace,
                                                   size_t workSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d xDesc=%p x=%p hxDesc=%p hx=%p cxDesc=%p cx=%p wDesc=%p w=%p "
                "yDesc=%p y=%p hyDesc=%p hy=%p cyDesc=%p cy=%p workSpace=%p workSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, seqLength, (const void *)xDesc, x, (void *)hxDesc, hx,
                (void *)cxDesc, cx, (void *)wDesc, w, (const void *)yDesc, y, (void *)hyDesc, hy, (void *)cyDesc, cy,
                workSpace, workSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_arrays(handle, rnnDesc, seqLength, xDesc, yDesc, &g));
    struct fwd_args a = {handle, &g, x, hx, cx, w, hxDesc, cxDesc, hyDesc, cyDesc, wDesc, y, hy, cy, workSpace,
                         workSpaceSizeInBytes};
    cudnnStatus_t s = forward_inference(&a);
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnFindRNNForwardInferenceAlgorithmEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const int seqLength, const cudnnTensorDescriptor_t *xDesc,
    const void *x, const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t cxDesc,
    const void *cx, const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t *yDesc, void *y,
    const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc, void *cy,
    const float findIntensity, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnAlgorithmPerformance_t *perfResults, void *workspace, size_t workSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p seqLength=%d xDesc=%p x=%p hxDesc=%p hx=%p cxDesc=%p cx=%p wDesc=%p w=%p "
                "yDesc=%p y=%p hyDesc=%p hy=%p cyDesc=%p cy=%p findIntensity=%g requestedAlgoCount=%d "
                "returnedAlgoCount=%p perfResults=%p workspace=%p workSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, seqLength, (const void *)xDesc, x, (void *)hxDesc, hx,
                (void *)cxDesc, cx, (void *)wDesc, w, (const void *)yDesc, y, (void *)hyDesc, hy, (void *)cyDesc, cy,
                (double)findIntensity, requestedAlgoCount, (void *)returnedAlgoCount, (void *)perfResults, workspace,
                workSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_arrays(handle, rnnDesc, seqLength, xDesc, yDesc, &g));
    struct fwd_args a = {handle, &g, x, hx, cx, w, hxDesc, cxDesc, hyDesc, cyDesc, wDesc, y, hy, cy, workspace,
                         workSpaceSizeInBytes};
    cudnnStatus_t s = ocd_rnn_legacy_find(handle, &g, requestedAlgoCount, returnedAlgoCount, perfResults,
                                          forward_inference, &a);
    ocd_rnn_legacy_free(&g);
    return s;
}

cudnnStatus_t CUDNNWINAPI cudnnRNNForwardInferenceEx(
    cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc, const cudnnRNNDataDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t hxDesc, const void *hx, const cudnnTensorDescriptor_t cxDesc, const void *cx,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnRNNDataDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t hyDesc, void *hy, const cudnnTensorDescriptor_t cyDesc, void *cy,
    const cudnnRNNDataDescriptor_t kDesc, const void *keys, const cudnnRNNDataDescriptor_t cDesc, void *cAttn,
    const cudnnRNNDataDescriptor_t iDesc, void *iAttn, const cudnnRNNDataDescriptor_t qDesc, void *queries,
    void *workSpace, size_t workSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p rnnDesc=%p xDesc=%p x=%p hxDesc=%p hx=%p cxDesc=%p cx=%p wDesc=%p w=%p yDesc=%p y=%p "
                "hyDesc=%p hy=%p cyDesc=%p cy=%p kDesc=%p keys=%p cDesc=%p cAttn=%p iDesc=%p iAttn=%p qDesc=%p "
                "queries=%p workSpace=%p workSpaceSizeInBytes=%zu",
                (void *)handle, (void *)rnnDesc, (void *)xDesc, x, (void *)hxDesc, hx, (void *)cxDesc, cx,
                (void *)wDesc, w, (void *)yDesc, y, (void *)hyDesc, hy, (void *)cyDesc, cy, (void *)kDesc, keys,
                (void *)cDesc, cAttn, (void *)iDesc, iAttn, (void *)qDesc, queries, workSpace, workSpaceSizeInBytes);
    struct ocd_rnn_legacy g;
    OCD_TRY(ocd_rnn_legacy_data(handle, rnnDesc, xDesc, yDesc, &g));
    const void *attn[] = {kDesc, keys, cDesc, cAttn, iDesc, iAttn, qDesc, queries};
    OCD_TRY(ocd_rnn_legacy_attention(attn, 8));
    return ocd_rnn_legacy_forward(handle, &g, x, hxDesc, hx, cxDesc, cx, wDesc, w, y, hyDesc, hy, cyDesc, cy, false,
                                  workSpace, workSpaceSizeInBytes, NULL, 0);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNForwardInferenceAlgorithmMaxCount(cudnnHandle_t handle,
                                                                       const cudnnRNNDescriptor_t rnnDesc, int *count)
{
    OCD_LOG_API("handle=%p rnnDesc=%p count=%p", (void *)handle, (void *)rnnDesc, (void *)count);
    return ocd_rnn_legacy_max_count(handle, rnnDesc, count);
}
