/* rnn_weights.c: the weight space queries of libcudnn_adv_infer: its size (cudnnGetRNNWeightSpaceSize,
   legacy cudnnGetRNNParamsSize) and where each matrix and bias lies (cudnnGetRNNWeightParams,
   legacy cudnnGetRNNLinLayerMatrixParams / BiasParams), all from the one layout of problem/rnn.h.

   cuDNN 8.2 rules implemented here (BAD_PARAM, logged, nothing written):
   - pseudoLayer in [0, numLayers * dirs); linLayerID 0 .. 2G-1 for the cell's G gates, or 8 (the
     recurrent projection) for LSTM; a weight space (or the legacy wDesc filter) smaller than the
     layout; weightSpace / w NULL.
   - cudnnGetRNNWeightParams describes a matrix as a 3-D tensor {1, rows, cols} (strides
     {rows * cols, cols, 1}) and a bias as {1, rows, 1}; a matrix or bias the network lacks (the
     first layer's input matrices under SKIP input, a bias set the bias mode leaves out, the
     projection when there is none or its bias) is reported with 0 dims and a NULL address. mDesc
     with mAddr, and bDesc with bAddr, may be NULL together (that half is not reported).
     weightSpace may be NULL, as in the legacy getters below: the addresses are then offsets.
   - The legacy getters take the input size and data type from xDesc (problem/rnn.h,
     ocd_rnn_problem_from_legacy) and describe the matrix or bias as a 3-D NCHW filter of the
     same dims; wDesc's type must be the data type.
   - The weight space (w, weightSpace) may be NULL, which the 8.2 text does not allow: the
     address returned is then the parameter's byte offset in the weights (TensorFlow's
     cuda_dnn.cc learns its parameter regions so, before any weights exist, through both
     forms); logged at info level (null_space). */
#include "problem/rnn.h"

#include "core/dtype.h"
#include "core/handle.h"
#include "core/tensor.h"

#include <stdint.h>

/* Checks pseudoLayer and linLayerID against the problem. */
static cudnnStatus_t check_ids(const struct ocd_rnn_problem *p, int pseudoLayer, int linLayerID)
{
    if (pseudoLayer < 0 || pseudoLayer >= p->layers * p->dirs)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "pseudoLayer %d is outside [0, numLayers * dirs = %d)", pseudoLayer,
                        p->layers * p->dirs);
    if (!ocd_rnn_id_valid(p, linLayerID))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "linLayerID %d is not one of cell mode %d", linLayerID, (int)p->cell);
    return CUDNN_STATUS_SUCCESS;
}

static size_t weight_bytes(const struct ocd_rnn_problem *p, cudnnDataType_t dtype)
{
    return (size_t)ocd_rnn_weight_elems(p) * ocd_dtype_scalar_size(dtype);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNWeightSpaceSize(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                     size_t *weightSpaceSize)
{
    OCD_LOG_API("handle=%p rnnDesc=%p weightSpaceSize=%p", (void *)handle, (void *)rnnDesc, (void *)weightSpaceSize);
    OCD_CHECK_HANDLE(handle);
    struct ocd_rnn_problem p;
    OCD_TRY(ocd_rnn_problem_from_desc(rnnDesc, &p));
    if (weightSpaceSize == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSpaceSize is NULL");
    *weightSpaceSize = weight_bytes(&p, p.dtype);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNParamsSize(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                const cudnnTensorDescriptor_t xDesc, size_t *sizeInBytes,
                                                cudnnDataType_t dataType)
{
    OCD_LOG_API("handle=%p rnnDesc=%p xDesc=%p sizeInBytes=%p dataType=%d", (void *)handle, (void *)rnnDesc,
                (void *)xDesc, (void *)sizeInBytes, (int)dataType);
    OCD_CHECK_HANDLE(handle);
    struct ocd_rnn_problem p;
    OCD_TRY(ocd_rnn_problem_from_legacy(rnnDesc, xDesc, &p));
    if (sizeInBytes == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    if (dataType != CUDNN_DATA_HALF && dataType != CUDNN_DATA_BFLOAT16 && dataType != CUDNN_DATA_FLOAT &&
        dataType != CUDNN_DATA_DOUBLE)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %d: RNN weights are HALF, BFLOAT16, FLOAT or DOUBLE",
                        (int)dataType);
    *sizeInBytes = weight_bytes(&p, dataType);
    return CUDNN_STATUS_SUCCESS;
}

/* A descriptor of 0 dims: what the getters report for a matrix or bias the network lacks. Get
   functions report nbDims 0; every op refuses it (ocd_tensor_get, ocd_filter_get: BAD_PARAM). */
static void set_empty(cudnnTensorDescriptor_t tensor, cudnnFilterDescriptor_t filter, cudnnDataType_t dtype)
{
    if (tensor != NULL)
        tensor->set = true, tensor->dtype = dtype, tensor->format = CUDNN_TENSOR_NCHW, tensor->nb_dims = 0;
    if (filter != NULL)
        filter->set = true, filter->dtype = dtype, filter->format = CUDNN_TENSOR_NCHW, filter->nb_dims = 0;
}

/* Sets a tensor (v8) or filter (legacy) descriptor to {1, rows, cols}, or to 0 dims when the
   parameter is missing, and *addr to its address in the weight space (NULL when missing; its
   byte offset when space is NULL, computed as an integer so that no offset is applied to a null
   pointer). Callers have checked fits_int first, so the set succeeds. */
static cudnnStatus_t describe(const struct ocd_rnn_param *w, cudnnDataType_t dtype, const void *space,
                              cudnnTensorDescriptor_t tensor, cudnnFilterDescriptor_t filter, void **addr)
{
    int dims[3] = {1, w->rows, w->cols};
    if (w->rows == 0) {
        set_empty(tensor, filter, dtype);
        *addr = NULL;
        return CUDNN_STATUS_SUCCESS;
    }
    if (tensor != NULL) OCD_TRY(ocd_tensor_set_packed(tensor, CUDNN_TENSOR_NCHW, dtype, 3, dims));
    if (filter != NULL) OCD_TRY(ocd_filter_set(filter, dtype, CUDNN_TENSOR_NCHW, 3, dims));
    *addr = (void *)((uintptr_t)space + (uintptr_t)(w->offset * (int64_t)ocd_dtype_scalar_size(dtype)));
    return CUDNN_STATUS_SUCCESS;
}

/* A NULL weight space: the addresses become offsets. */
static void null_space(const void *space)
{
    if (space == NULL && (ocd_log_mask & CUDNN_SEV_INFO_EN))
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "the weight space is NULL: the addresses returned are offsets in it (the 8.2 text asks "
                        "for the weights)");
}

/* A descriptor's dims and strides are ints: a matrix of more than 2^31 - 1 elements has none. */
static cudnnStatus_t fits_int(const struct ocd_rnn_param *w)
{
    if ((int64_t)w->rows * w->cols > INT32_MAX)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                        "a %d x %d matrix has more elements than a descriptor's int strides address", w->rows,
                        w->cols);
    return CUDNN_STATUS_SUCCESS;
}

/* A descriptor argument and its address argument: both NULL (not wanted) or both given. */
static cudnnStatus_t check_pair(enum ocd_object_kind kind, const void *desc, void **addr, const char *name)
{
    if (desc == NULL && addr == NULL) return CUDNN_STATUS_SUCCESS;
    if (!ocd_object_alive(kind, desc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the descriptor of %s is %s", name,
                        desc == NULL ? "NULL" : "not a live descriptor of its type");
    if (addr == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the address output of %s is NULL", name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNWeightParams(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                  int32_t pseudoLayer, size_t weightSpaceSize,
                                                  const void *weightSpace, int32_t linLayerID,
                                                  cudnnTensorDescriptor_t mDesc, void **mAddr,
                                                  cudnnTensorDescriptor_t bDesc, void **bAddr)
{
    OCD_LOG_API("handle=%p rnnDesc=%p pseudoLayer=%d weightSpaceSize=%zu weightSpace=%p linLayerID=%d mDesc=%p "
                "mAddr=%p bDesc=%p bAddr=%p",
                (void *)handle, (void *)rnnDesc, pseudoLayer, weightSpaceSize, weightSpace, linLayerID,
                (void *)mDesc, (void *)mAddr, (void *)bDesc, (void *)bAddr);
    OCD_CHECK_HANDLE(handle);
    struct ocd_rnn_problem p;
    OCD_TRY(ocd_rnn_problem_from_desc(rnnDesc, &p));
    OCD_TRY(check_ids(&p, pseudoLayer, linLayerID));
    size_t need = weight_bytes(&p, p.dtype);
    if (weightSpaceSize < need)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSpaceSize %zu is less than the %zu bytes of the weights",
                        weightSpaceSize, need);
    null_space(weightSpace);
    OCD_TRY(check_pair(OCD_OBJ_TENSOR, mDesc, mAddr, "the matrix (mDesc, mAddr)"));
    OCD_TRY(check_pair(OCD_OBJ_TENSOR, bDesc, bAddr, "the bias (bDesc, bAddr)"));
    struct ocd_rnn_param m = ocd_rnn_matrix(&p, pseudoLayer, linLayerID);
    struct ocd_rnn_param b = ocd_rnn_bias(&p, pseudoLayer, linLayerID);
    if (mDesc != NULL) OCD_TRY(fits_int(&m));
    if (bDesc != NULL) OCD_TRY(describe(&b, p.dtype, weightSpace, bDesc, NULL, bAddr));
    if (mDesc != NULL) OCD_TRY(describe(&m, p.dtype, weightSpace, mDesc, NULL, mAddr));
    return CUDNN_STATUS_SUCCESS;
}

/* The legacy getters: the matrix (bias false) or bias of a linear layer, as a filter. */
static cudnnStatus_t lin_layer_params(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int pseudoLayer,
                                      cudnnTensorDescriptor_t xDesc, cudnnFilterDescriptor_t wDesc, const void *w,
                                      int linLayerID, cudnnFilterDescriptor_t outDesc, void **out, bool bias)
{
    OCD_CHECK_HANDLE(handle);
    struct ocd_rnn_problem p;
    OCD_TRY(ocd_rnn_problem_from_legacy(rnnDesc, xDesc, &p));
    OCD_TRY(check_ids(&p, pseudoLayer, linLayerID));
    struct ocd_tensor_view wv;
    OCD_TRY(ocd_filter_get(wDesc, "wDesc", &wv));
    if (wv.dtype != p.dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "wDesc's type %d is not the data type %d of xDesc", (int)wv.dtype,
                        (int)p.dtype);
    if (ocd_view_count(&wv) < ocd_rnn_weight_elems(&p))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "wDesc holds %lld elements, fewer than the %lld of the weights",
                        (long long)ocd_view_count(&wv), (long long)ocd_rnn_weight_elems(&p));
    null_space(w);
    if (!ocd_object_alive(OCD_OBJ_FILTER, outDesc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is not a live filter descriptor",
                        bias ? "linLayerBiasDesc" : "linLayerMatDesc");
    if (out == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", bias ? "linLayerBias" : "linLayerMat");
    struct ocd_rnn_param param = bias ? ocd_rnn_bias(&p, pseudoLayer, linLayerID)
                                      : ocd_rnn_matrix(&p, pseudoLayer, linLayerID);
    OCD_TRY(fits_int(&param));
    return describe(&param, p.dtype, w, NULL, outDesc, out);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNLinLayerMatrixParams(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                          const int pseudoLayer, const cudnnTensorDescriptor_t xDesc,
                                                          const cudnnFilterDescriptor_t wDesc, const void *w,
                                                          const int linLayerID, cudnnFilterDescriptor_t linLayerMatDesc,
                                                          void **linLayerMat)
{
    OCD_LOG_API("handle=%p rnnDesc=%p pseudoLayer=%d xDesc=%p wDesc=%p w=%p linLayerID=%d linLayerMatDesc=%p "
                "linLayerMat=%p",
                (void *)handle, (void *)rnnDesc, pseudoLayer, (void *)xDesc, (void *)wDesc, w, linLayerID,
                (void *)linLayerMatDesc, (void *)linLayerMat);
    return lin_layer_params(handle, rnnDesc, pseudoLayer, xDesc, wDesc, w, linLayerID, linLayerMatDesc, linLayerMat,
                            false);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNLinLayerBiasParams(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                        const int pseudoLayer, const cudnnTensorDescriptor_t xDesc,
                                                        const cudnnFilterDescriptor_t wDesc, const void *w,
                                                        const int linLayerID, cudnnFilterDescriptor_t linLayerBiasDesc,
                                                        void **linLayerBias)
{
    OCD_LOG_API("handle=%p rnnDesc=%p pseudoLayer=%d xDesc=%p wDesc=%p w=%p linLayerID=%d linLayerBiasDesc=%p "
                "linLayerBias=%p",
                (void *)handle, (void *)rnnDesc, pseudoLayer, (void *)xDesc, (void *)wDesc, w, linLayerID,
                (void *)linLayerBiasDesc, (void *)linLayerBias);
    return lin_layer_params(handle, rnnDesc, pseudoLayer, xDesc, wDesc, w, linLayerID, linLayerBiasDesc,
                            linLayerBias, true);
}
