/* ctc_train.c: the CTC loss API of libcudnn_adv_train: the loss descriptor (Create, Set, Get,
   their Ex and _v8 forms, Destroy), the workspace queries and cudnnCTCLoss / cudnnCTCLoss_v8,
   which validate their arguments, build the problem (problem/ctc.h) and run it through the
   implementation table (with OPENCUDNN_CHECK's second opinion, core/check.h).

   cuDNN 8.2 rules implemented here:
   - cudnnSetCTCLossDescriptor(d, t) is cudnnSetCTCLossDescriptorEx(d, t, NONE, NOT_PROPAGATE_NAN);
     a descriptor not set yet holds those values, and a maximum label length of 256 (what Set and
     SetEx leave for the _v8 calls). Invalid enumerants, and a maximum label length outside
     [0, 256], are BAD_PARAM.
   - The calls return NOT_SUPPORTED when the compute type or the data type of probs is not FLOAT,
     or when the algorithm is not a cudnnCTCLossAlgo_t.
   - Beyond the text, gradientsDesc may be NULL, gradients then NULL too: the loss alone
     (Deeplearning4j's ctc_loss op; its tests run it on NVIDIA's library). The workspace queries
     then count a scratch region for the gradients the kernels write anyway; gradients given
     without gradientsDesc is BAD_PARAM.
   - BAD_PARAM when the dims of probsDesc (T x N x A, three dims) do not match gradientsDesc, when
     gradients or costs overlap probs or each other; and,
     where the labels are host memory (cudnnCTCLoss, cudnnGetCTCLossWorkspaceSize), when an input
     length is negative or larger than T or a label length negative or larger than 256; for
     cudnnCTCLoss also when a label length is larger than its input length or a label is not a
     symbol of the alphabet other than the blank (0) (the workspace query, whose size does not
     depend on them, takes such labels: cudnnxx's test asks it with them); when the workspace is
     smaller than the query returns. The _v8 calls read labels and lengths on the
     device: there the kernels check each sample (problem/ctc.h says what an invalid one gets). */
#include "problem/ctc.h"

#include "core/argcheck.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/handle.h"
#include "core/impl.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

struct cudnnCTCLossStruct {
    struct ocd_object obj;
    cudnnDataType_t comp_type;
    cudnnLossNormalizationMode_t norm_mode;
    cudnnNanPropagation_t grad_mode;
    int max_label_length;
};

static size_t ctc_workspace(cudnnHandle_t handle, const void *p)
{
    (void)handle;
    return ocd_ctc_workspace_bytes(p);
}

static const struct ocd_impl ctc_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:ctc_blocks", OCD_BACKEND_CUDA, NULL, ctc_workspace, ocd_ctc_run_cuda),
#endif
    OCD_IMPL_ENTRY("host:ctc_samples", OCD_BACKEND_HOST, NULL, ctc_workspace, ocd_ctc_run_host),
};

/* ---- the descriptor ------------------------------------------------------------------------- */

static cudnnStatus_t set_desc(cudnnCTCLossDescriptor_t d, cudnnDataType_t comp_type,
                              cudnnLossNormalizationMode_t norm_mode, cudnnNanPropagation_t grad_mode,
                              int max_label_length)
{
    OCD_CHECK_OBJECT(OCD_OBJ_CTC_LOSS, d);
    if (!ocd_dtype_valid(comp_type))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "compType %d is not a cudnnDataType_t", (int)comp_type);
    if ((unsigned)norm_mode > CUDNN_LOSS_NORMALIZATION_SOFTMAX)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "normMode %d is not a cudnnLossNormalizationMode_t", (int)norm_mode);
    if ((unsigned)grad_mode > CUDNN_PROPAGATE_NAN)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "gradMode %d is not a cudnnNanPropagation_t", (int)grad_mode);
    if (max_label_length < 0 || max_label_length > OCD_CTC_MAX_LABEL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "maxLabelLength %d is outside [0, %d]", max_label_length,
                        OCD_CTC_MAX_LABEL);
    d->comp_type = comp_type;
    d->norm_mode = norm_mode;
    d->grad_mode = grad_mode;
    d->max_label_length = max_label_length;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnCreateCTCLossDescriptor(cudnnCTCLossDescriptor_t *ctcLossDesc)
{
    OCD_LOG_API("ctcLossDesc=%p", (void *)ctcLossDesc);
    OCD_TRY(ocd_object_create(OCD_OBJ_CTC_LOSS, sizeof(struct cudnnCTCLossStruct), (void **)ctcLossDesc));
    return set_desc(*ctcLossDesc, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_NOT_PROPAGATE_NAN,
                    OCD_CTC_MAX_LABEL);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc)
{
    OCD_LOG_API("ctcLossDesc=%p", (void *)ctcLossDesc);
    if (ctcLossDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_CTC_LOSS, ctcLossDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType)
{
    OCD_LOG_API("ctcLossDesc=%p compType=%d", (void *)ctcLossDesc, (int)compType);
    return set_desc(ctcLossDesc, compType, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_NOT_PROPAGATE_NAN,
                    OCD_CTC_MAX_LABEL);
}

cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType,
                                                      cudnnLossNormalizationMode_t normMode,
                                                      cudnnNanPropagation_t gradMode)
{
    OCD_LOG_API("ctcLossDesc=%p compType=%d normMode=%d gradMode=%d", (void *)ctcLossDesc, (int)compType,
                (int)normMode, (int)gradMode);
    return set_desc(ctcLossDesc, compType, normMode, gradMode, OCD_CTC_MAX_LABEL);
}

cudnnStatus_t CUDNNWINAPI cudnnSetCTCLossDescriptor_v8(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t compType,
                                                       cudnnLossNormalizationMode_t normMode,
                                                       cudnnNanPropagation_t gradMode, int maxLabelLength)
{
    OCD_LOG_API("ctcLossDesc=%p compType=%d normMode=%d gradMode=%d maxLabelLength=%d", (void *)ctcLossDesc,
                (int)compType, (int)normMode, (int)gradMode, maxLabelLength);
    return set_desc(ctcLossDesc, compType, normMode, gradMode, maxLabelLength);
}

/* The Get functions fill every output given; a NULL output is BAD_PARAM, nothing written. */
static cudnnStatus_t get_desc(cudnnCTCLossDescriptor_t d, cudnnDataType_t *comp_type,
                              cudnnLossNormalizationMode_t *norm_mode, cudnnNanPropagation_t *grad_mode,
                              int *max_label_length, int outputs)
{
    OCD_CHECK_OBJECT(OCD_OBJ_CTC_LOSS, d);
    const void *out[] = {comp_type, norm_mode, grad_mode, max_label_length};
    static const char *const names[] = {"compType", "normMode", "gradMode", "maxLabelLength"};
    for (int i = 0; i < outputs; i++)
        if (out[i] == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", names[i]);
    *comp_type = d->comp_type;
    if (outputs > 1) *norm_mode = d->norm_mode, *grad_mode = d->grad_mode;
    if (outputs > 3) *max_label_length = d->max_label_length;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptor(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t *compType)
{
    OCD_LOG_API("ctcLossDesc=%p compType=%p", (void *)ctcLossDesc, (void *)compType);
    return get_desc(ctcLossDesc, compType, NULL, NULL, NULL, 1);
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptorEx(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t *compType,
                                                      cudnnLossNormalizationMode_t *normMode,
                                                      cudnnNanPropagation_t *gradMode)
{
    OCD_LOG_API("ctcLossDesc=%p compType=%p normMode=%p gradMode=%p", (void *)ctcLossDesc, (void *)compType,
                (void *)normMode, (void *)gradMode);
    return get_desc(ctcLossDesc, compType, normMode, gradMode, NULL, 3);
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossDescriptor_v8(cudnnCTCLossDescriptor_t ctcLossDesc, cudnnDataType_t *compType,
                                                       cudnnLossNormalizationMode_t *normMode,
                                                       cudnnNanPropagation_t *gradMode, int *maxLabelLength)
{
    OCD_LOG_API("ctcLossDesc=%p compType=%p normMode=%p gradMode=%p maxLabelLength=%p", (void *)ctcLossDesc,
                (void *)compType, (void *)normMode, (void *)gradMode, (void *)maxLabelLength);
    return get_desc(ctcLossDesc, compType, normMode, gradMode, maxLabelLength, 4);
}

/* ---- the calls -------------------------------------------------------------------------------- */

/* The views of probs and gradients, and of costs (N packed floats). grads_scratch: gradientsDesc
   is NULL, the loss alone asked for (Deeplearning4j's ctc_loss op passes gradientsDesc and
   gradients NULL to the workspace query and to cudnnCTCLoss): the kernels still write gradients,
   packed T x N x A, into a region after their workspace, which the queries count
   (workspace_bytes). */
struct views {
    struct ocd_tensor_view probs, grads, costs;
    bool grads_scratch;
};

/* What every call checks of the handle, the algorithm, the loss descriptor and the two tensor
   descriptors; fills the shape, the strides and the modes of p, and the views. */
static cudnnStatus_t check_common(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t d,
                                  cudnnTensorDescriptor_t probsDesc, cudnnTensorDescriptor_t gradientsDesc,
                                  struct ocd_ctc_problem *p, struct views *v)
{
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_CTC_LOSS, d);
    struct ocd_tensor_view pv, gv;
    OCD_TRY(ocd_tensor_get(probsDesc, "probsDesc", &pv));
    v->grads_scratch = gradientsDesc == NULL;
    if (v->grads_scratch) {
        gv = (struct ocd_tensor_view){.dtype = CUDNN_DATA_FLOAT, .rank = 3, .vect = 1,
                                      .dims = {pv.dims[0], pv.dims[1], pv.dims[2]},
                                      .strides = {pv.dims[1] * pv.dims[2], pv.dims[2], 1}};
    } else {
        OCD_TRY(ocd_tensor_get(gradientsDesc, "gradientsDesc", &gv));
    }
    if ((unsigned)algo > CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "algo %d is not a cudnnCTCLossAlgo_t", (int)algo);
    if (d->comp_type != CUDNN_DATA_FLOAT)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "compType %d: only CUDNN_DATA_FLOAT is supported",
                        (int)d->comp_type);
    if (pv.rank != 3)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "probsDesc has %d dims, not 3 (T, N, A)", pv.rank);
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_BAD_PARAM, &pv, "probsDesc", &gv, "gradientsDesc"));
    if (pv.dtype != CUDNN_DATA_FLOAT || gv.dtype != CUDNN_DATA_FLOAT)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "probs and gradients must be CUDNN_DATA_FLOAT (got %d, %d)",
                        (int)pv.dtype, (int)gv.dtype);
    if (pv.dims[1] > INT32_MAX / OCD_CTC_MAX_LABEL)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "N = %lld: at most 2^23 samples (label offsets in 32 bits)",
                        (long long)pv.dims[1]);
    p->T = (int)pv.dims[0];
    p->N = (int)pv.dims[1];
    p->A = (int)pv.dims[2];
    for (int i = 0; i < 3; i++) {
        p->probs_stride[i] = pv.strides[i];
        p->grads_stride[i] = gv.strides[i];
    }
    p->softmax = d->norm_mode == CUDNN_LOSS_NORMALIZATION_SOFTMAX;
    p->propagate_nan = d->grad_mode == CUDNN_PROPAGATE_NAN;
    v->probs = pv;
    v->grads = gv;
    v->costs = (struct ocd_tensor_view){.dtype = CUDNN_DATA_FLOAT, .rank = 1, .vect = 1, .dims = {p->N},
                                        .strides = {1}};
    return CUDNN_STATUS_SUCCESS;
}

/* The checks of host labels; sets max_label and label_total of p. The lengths' ranges are checked
   for cudnnCTCLoss and its workspace query; whether each sample's labels fit its input and name
   symbols of the alphabet (`loss`) only for cudnnCTCLoss: the query's size does not depend on
   them. */
static cudnnStatus_t check_host_labels(struct ocd_ctc_problem *p, const int *labels, const int *label_lengths,
                                       const int *input_lengths, bool loss)
{
    OCD_TRY(ocd_check_data(labels, "labels"));
    OCD_TRY(ocd_check_data(label_lengths, "labelLengths"));
    OCD_TRY(ocd_check_data(input_lengths, "inputLengths"));
    int64_t total = 0;
    int longest = 0;
    for (int n = 0; n < p->N; n++) {
        int tn = input_lengths[n], ln = label_lengths[n];
        if (tn < 0 || tn > p->T)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "inputLengths[%d] = %d is outside [0, T = %d]", n, tn, p->T);
        if (ln < 0 || ln > OCD_CTC_MAX_LABEL)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "labelLengths[%d] = %d is outside [0, %d]", n, ln,
                            OCD_CTC_MAX_LABEL);
        if (loss && !ocd_ctc_lengths_valid(tn, ln, p->T, OCD_CTC_MAX_LABEL))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "labelLengths[%d] = %d is longer than inputLengths[%d] = %d", n,
                            ln, n, tn);
        for (int j = 0; loss && j < ln; j++)
            if (!ocd_ctc_label_valid(labels[total + j], p->A))
                return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "label %d of sample %d is %d, not in [1, A - 1 = %d]", j, n,
                                labels[total + j], p->A - 1);
        total += ln;
        longest = OCD_MAX(longest, ln);
    }
    p->labels = labels;
    p->label_lengths = label_lengths;
    p->input_lengths = input_lengths;
    p->host_labels = true;
    p->label_total = total;
    p->max_label = longest;
    return CUDNN_STATUS_SUCCESS;
}

/* The workspace a call needs: the kernels' (ocd_ctc_workspace_bytes), then with grads_scratch,
   from *grads_at (a 256-byte boundary), the gradients nobody reads. */
static size_t workspace_bytes(const struct ocd_ctc_problem *p, const struct views *v, size_t *grads_at)
{
    size_t need = ocd_ctc_workspace_bytes(p);
    *grads_at = (need + 255) / 256 * 256;
    return v->grads_scratch ? *grads_at + sizeof(float) * (size_t)ocd_view_count(&v->grads) : need;
}

/* The data pointers and the workspace. Each gradient and each cost depends on many elements of
   probs (a whole sample's), so neither output may overlap probs, nor each other
   (ocd_check_alias: BAD_PARAM). */
static cudnnStatus_t check_outputs(const struct views *v, const void *probs, const void *costs, const void *gradients,
                                   size_t need, const void *workspace, size_t bytes)
{
    if (bytes < need)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "workSpaceSizeInBytes %zu is less than the %zu bytes needed", bytes,
                        need);
    if (need > 0 && workspace == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "workspace is NULL");
    OCD_TRY(ocd_check_data(probs, "probs"));
    OCD_TRY(ocd_check_data(costs, "costs"));
    OCD_TRY(ocd_check_data(gradients, "gradients"));
    OCD_TRY(ocd_check_alias(gradients, &v->grads, "gradients", probs, &v->probs, "probs", OCD_READ_MANY));
    OCD_TRY(ocd_check_alias(costs, &v->costs, "costs", probs, &v->probs, "probs", OCD_READ_MANY));
    OCD_TRY(ocd_check_alias(costs, &v->costs, "costs", gradients, &v->grads, "gradients", OCD_READ_MANY));
    return CUDNN_STATUS_SUCCESS;
}

/* Every input length equals T (host lengths read in place, device ones copied to the host). */
static bool full_inputs(cudnnHandle_t handle, const struct ocd_ctc_problem *p)
{
    int *host = p->host_labels ? NULL : malloc(sizeof(int) * (size_t)p->N);
    const int *len = p->host_labels ? p->input_lengths : host;
    bool full = len != NULL && (p->host_labels || ocd_backend_copy(handle, host, p->input_lengths, sizeof(int) * (size_t)p->N,
                                                                    OCD_COPY_TO_HOST) == CUDNN_STATUS_SUCCESS);
    for (int n = 0; n < p->N && full; n++) full = len[n] == p->T;
    free(host);
    return full;
}

/* The benchmark's ctc problem string (bench/ops_adv.c), or "" where the call has something its
   keys cannot say. The benchmark runs SOFTMAX normalization with NaN propagated on packed T x N x
   A probabilities and gradients, every input length T, the descriptor's maxLabelLength as
   `labels` (each sample's label length drawn from [labels / 2, labels]; labels <= T). Ragged
   input lengths, strided tensors or the other modes log nothing; a maximum above T (the 256 that
   cudnnSetCTCLossDescriptor leaves) is replaced, for host labels, by the longest label given.
   Both algorithms compute the same here, so the benchmark's DETERMINISTIC stands for either. */
static void ctc_replay(cudnnHandle_t handle, const struct ocd_ctc_problem *p, const struct views *v,
                       int desc_max_label, char *buf, size_t size)
{
    buf[0] = '\0';
    int labels = desc_max_label <= p->T ? desc_max_label : p->host_labels ? p->max_label : 0;
    if (!p->softmax || !p->propagate_nan || labels < 1 || !ocd_view_is_packed_rowmajor(&v->probs) ||
        !ocd_view_is_packed_rowmajor(&v->grads) || !full_inputs(handle, p))
        return;
    snprintf(buf, size, "op=ctc api=%s dt=f32 t=%d n=%d a=%d labels=%d", p->host_labels ? "host" : "v8", p->T, p->N,
             p->A, labels);
}

/* The labels of a _v8 call (the sum of labelLengths, read from the backend), or -1 when a length
   is outside [0, 256] (the kernels give that sample a NaN cost) or cannot be read. */
static int64_t device_label_total(cudnnHandle_t handle, const struct ocd_ctc_problem *p)
{
    int *len = malloc(sizeof(int) * (size_t)p->N);
    int64_t total = len != NULL && ocd_backend_copy(handle, len, p->label_lengths, sizeof(int) * (size_t)p->N,
                                                    OCD_COPY_TO_HOST) == CUDNN_STATUS_SUCCESS ? 0 : -1;
    for (int n = 0; n < p->N && total >= 0; n++)
        total = len[n] < 0 || len[n] > OCD_CTC_MAX_LABEL ? -1 : total + len[n];
    free(len);
    return total;
}

/* The second opinion's description of a call (core/check.h): costs and gradients compared, the
   device labels and lengths of a _v8 call copied (cudnnCTCLoss's are host arrays, read in
   place); NULL when the call cannot be checked (a _v8 call with an invalid label length). */
static const struct ocd_check_call *ctc_check_call(cudnnHandle_t handle, const struct ocd_ctc_problem *p,
                                                   const struct views *v, int desc_max_label, const char *op,
                                                   struct ocd_check_call *call)
{
    *call = (struct ocd_check_call){.op = op, .problem_size = sizeof *p,
                                    .tolerance = ocd_check_driver_tolerance(CUDNN_DATA_FLOAT, false)};
    ctc_replay(handle, p, v, desc_max_label, call->replay, sizeof call->replay);
    int64_t labels = p->host_labels ? 0 : device_label_total(handle, p);
    if (labels < 0) {
        ocd_check_log_replay(op, handle->backend->name, call->replay);
        return NULL;
    }
#define FIELD(f) offsetof(struct ocd_ctc_problem, f)
    ocd_check_add(call, FIELD(costs), &v->costs, true);
    ocd_check_add(call, FIELD(grads), &v->grads, true);
    ocd_check_add(call, FIELD(probs), &v->probs, false);
    if (!p->host_labels) {
        ocd_check_add_array(call, FIELD(labels), CUDNN_DATA_INT32, labels, false);
        ocd_check_add_array(call, FIELD(label_lengths), CUDNN_DATA_INT32, p->N, false);
        ocd_check_add_array(call, FIELD(input_lengths), CUDNN_DATA_INT32, p->N, false);
    }
#undef FIELD
    return call;
}

static cudnnStatus_t run(cudnnHandle_t handle, struct ocd_ctc_problem *p, const struct views *v, const void *probs,
                         void *costs, void *gradients, void *workspace, size_t bytes, int desc_max_label,
                         const char *op)
{
    size_t grads_at, need = workspace_bytes(p, v, &grads_at);
    if (v->grads_scratch) {
        if (gradients != NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "gradients is given but gradientsDesc is NULL");
        if (workspace != NULL && bytes >= need) gradients = (char *)workspace + grads_at;
    }
    OCD_TRY(check_outputs(v, probs, costs, gradients, need, workspace, bytes));
    p->probs = probs;
    p->costs = costs;
    p->grads = gradients;
    struct ocd_impl_plan plan;
    const struct ocd_impl *impl = ocd_impl_select(handle, ctc_impls, OCD_ARRAY_LEN(ctc_impls), p, op, &plan);
    if (impl == NULL) return CUDNN_STATUS_NOT_SUPPORTED;
    if (!ocd_check_enabled()) return ocd_impl_exec(handle, impl, p, &plan, workspace, bytes);
    struct ocd_check_call call;
    return ocd_check_run(handle, impl, p, &plan, workspace, bytes,
                         ctc_check_call(handle, p, v, desc_max_label, op, &call), OCD_IMPL_TABLE(ctc_impls));
}

static cudnnStatus_t check_size_out(size_t *sizeInBytes)
{
    return sizeInBytes == NULL ? OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL") : CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc,
                                                       const cudnnTensorDescriptor_t gradientsDesc, const int *labels,
                                                       const int *labelLengths, const int *inputLengths,
                                                       cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc,
                                                       size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p probsDesc=%p gradientsDesc=%p labels=%p labelLengths=%p inputLengths=%p algo=%d "
                "ctcLossDesc=%p sizeInBytes=%p",
                (void *)handle, (void *)probsDesc, (void *)gradientsDesc, (const void *)labels,
                (const void *)labelLengths, (const void *)inputLengths, (int)algo, (void *)ctcLossDesc,
                (void *)sizeInBytes);
    struct ocd_ctc_problem p = {0};
    struct views v;
    OCD_TRY(check_common(handle, algo, ctcLossDesc, probsDesc, gradientsDesc, &p, &v));
    OCD_TRY(check_host_labels(&p, labels, labelLengths, inputLengths, false));
    OCD_TRY(check_size_out(sizeInBytes));
    size_t grads_at;
    *sizeInBytes = workspace_bytes(&p, &v, &grads_at);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetCTCLossWorkspaceSize_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo,
                                                          cudnnCTCLossDescriptor_t ctcLossDesc,
                                                          const cudnnTensorDescriptor_t probsDesc,
                                                          const cudnnTensorDescriptor_t gradientsDesc,
                                                          size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p algo=%d ctcLossDesc=%p probsDesc=%p gradientsDesc=%p sizeInBytes=%p", (void *)handle,
                (int)algo, (void *)ctcLossDesc, (void *)probsDesc, (void *)gradientsDesc, (void *)sizeInBytes);
    struct ocd_ctc_problem p = {0};
    struct views v;
    OCD_TRY(check_common(handle, algo, ctcLossDesc, probsDesc, gradientsDesc, &p, &v));
    OCD_TRY(check_size_out(sizeInBytes));
    p.max_label = ctcLossDesc->max_label_length;
    size_t grads_at;
    *sizeInBytes = workspace_bytes(&p, &v, &grads_at);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnCTCLoss(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc, const void *probs,
                                       const int hostLabels[], const int hostLabelLengths[],
                                       const int hostInputLengths[], void *costs,
                                       const cudnnTensorDescriptor_t gradientsDesc, void *gradients,
                                       cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc, void *workspace,
                                       size_t workSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p probsDesc=%p probs=%p hostLabels=%p hostLabelLengths=%p hostInputLengths=%p costs=%p "
                "gradientsDesc=%p gradients=%p algo=%d ctcLossDesc=%p workspace=%p workSpaceSizeInBytes=%zu",
                (void *)handle, (void *)probsDesc, probs, (const void *)hostLabels, (const void *)hostLabelLengths,
                (const void *)hostInputLengths, costs, (void *)gradientsDesc, gradients, (int)algo,
                (void *)ctcLossDesc, workspace, workSpaceSizeInBytes);
    struct ocd_ctc_problem p = {0};
    struct views v;
    OCD_TRY(check_common(handle, algo, ctcLossDesc, probsDesc, gradientsDesc, &p, &v));
    OCD_TRY(check_host_labels(&p, hostLabels, hostLabelLengths, hostInputLengths, true));
    return run(handle, &p, &v, probs, costs, gradients, workspace, workSpaceSizeInBytes, ctcLossDesc->max_label_length,
               "cudnnCTCLoss");
}

cudnnStatus_t CUDNNWINAPI cudnnCTCLoss_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo,
                                          cudnnCTCLossDescriptor_t ctcLossDesc, const cudnnTensorDescriptor_t probsDesc,
                                          const void *probs, const int labels[], const int labelLengths[],
                                          const int inputLengths[], void *costs,
                                          const cudnnTensorDescriptor_t gradientsDesc, void *gradients,
                                          size_t workSpaceSizeInBytes, void *workspace)
{
    OCD_LOG_API("handle=%p algo=%d ctcLossDesc=%p probsDesc=%p probs=%p labels=%p labelLengths=%p inputLengths=%p "
                "costs=%p gradientsDesc=%p gradients=%p workSpaceSizeInBytes=%zu workspace=%p",
                (void *)handle, (int)algo, (void *)ctcLossDesc, (void *)probsDesc, probs, (const void *)labels,
                (const void *)labelLengths, (const void *)inputLengths, costs, (void *)gradientsDesc, gradients,
                workSpaceSizeInBytes, workspace);
    struct ocd_ctc_problem p = {0};
    struct views v;
    OCD_TRY(check_common(handle, algo, ctcLossDesc, probsDesc, gradientsDesc, &p, &v));
    OCD_TRY(ocd_check_data(labels, "labels"));
    OCD_TRY(ocd_check_data(labelLengths, "labelLengths"));
    OCD_TRY(ocd_check_data(inputLengths, "inputLengths"));
    p.labels = labels;
    p.label_lengths = labelLengths;
    p.input_lengths = inputLengths;
    p.max_label = ctcLossDesc->max_label_length;
    return run(handle, &p, &v, probs, costs, gradients, workspace, workSpaceSizeInBytes, ctcLossDesc->max_label_length,
               "cudnnCTCLoss_v8");
}
