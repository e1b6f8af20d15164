/* attn_desc.c: the descriptors of multi-head attention in libcudnn_adv_infer: the attention
   descriptor (Create, Set, Get, Destroy), the sequence-data descriptor (the same four),
   cudnnGetMultiHeadAttnBuffers and cudnnGetMultiHeadAttnWeights. The weight and buffer layouts
   are problem/attention.h's.

   cuDNN 8.2 rules implemented here:
   - cudnnSetAttnDescriptor: BAD_PARAM when attnMode has bits other than the query map and the
     projection biases, when nHeads, qSize, kSize, vSize, qoMaxSeqLength, kvMaxSeqLength,
     maxBatchSize or maxBeamSize is not positive, when a projection size or smScaler is negative
     (or smScaler not a number), when the Q and K sizes after projection differ, when a type or
     the math type is not an enumerant, or a dropout descriptor is not live. NOT_SUPPORTED for a
     data / compute type pair other than the documented ones: DOUBLE/DOUBLE, FLOAT/FLOAT,
     HALF/HALF and HALF/FLOAT. A failed Set leaves the descriptor as it was.
   - cudnnSetSeqDataDescriptor: four dims indexed by cudnnSeqDataAxis_t, each positive; axes a
     permutation of the four axes (outermost first) with VECT innermost (NOT_SUPPORTED
     otherwise); seqLengthArraySize = batch x beam lengths in [0, time], [b * beam + m]; data
     FLOAT, DOUBLE or HALF; paddingFill NULL or a value of the data type that fills output
     vectors past a sequence's length.
   - The Get functions skip a NULL output (cudnnGetSeqDataDescriptor's array outputs are
     required only when their requested size is positive).
   - cudnnGetMultiHeadAttnBuffers: the weight, workspace and (training, reserveSpaceSizeInBytes
     not NULL) reserve sizes for the descriptor's maxima. With reserveSpaceSizeInBytes NULL the
     caller asks for inference, and the workspace is the forward's alone.
   - cudnnGetMultiHeadAttnWeights: wDesc is set to the tensor's 3-D shape and strides and *wAddr
     points into weights; for a tensor the configuration does not have (no projection, or biases
     disabled) *wAddr is NULL and wDesc is left as it was. BAD_PARAM for an invalid wKind or a
     weightSizeInBytes below the buffer's size. */
#include "adv/attn.h"

#include "core/argcheck.h"
#include "core/dtype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the attention descriptor ----------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateAttnDescriptor(cudnnAttnDescriptor_t *attnDesc)
{
    OCD_LOG_API("attnDesc=%p", (void *)attnDesc);
    return ocd_object_create(OCD_OBJ_ATTN, sizeof(struct cudnnAttnStruct), (void **)attnDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyAttnDescriptor(cudnnAttnDescriptor_t attnDesc)
{
    OCD_LOG_API("attnDesc=%p", (void *)attnDesc);
    if (attnDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_ATTN, attnDesc);
}

static bool type_pair_supported(cudnnDataType_t data, cudnnDataType_t comp)
{
    switch (data) {
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_FLOAT: return comp == data;
    case CUDNN_DATA_HALF: return comp == CUDNN_DATA_HALF || comp == CUDNN_DATA_FLOAT;
    default: return false;
    }
}

static cudnnStatus_t check_config(const struct ocd_attn_config *c, unsigned mode,
                                  cudnnDropoutDescriptor_t attn_drop, cudnnDropoutDescriptor_t post_drop)
{
    if (mode & ~(unsigned)(CUDNN_ATTN_QUERYMAP_ONE_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attnMode 0x%x has bits other than the query map and biases", mode);
    const int positive[] = {c->heads, c->q_size, c->k_size, c->v_size, c->qo_max, c->kv_max, c->max_batch,
                            c->max_beam};
    static const char *const pos_names[] = {"nHeads", "qSize", "kSize", "vSize", "qoMaxSeqLength",
                                            "kvMaxSeqLength", "maxBatchSize", "maxBeamSize"};
    for (size_t i = 0; i < OCD_ARRAY_LEN(positive); i++)
        if (positive[i] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s = %d is not positive", pos_names[i], positive[i]);
    const int proj[] = {c->q_proj, c->k_proj, c->v_proj, c->o_proj};
    static const char *const proj_names[] = {"qProjSize", "kProjSize", "vProjSize", "oProjSize"};
    for (size_t i = 0; i < OCD_ARRAY_LEN(proj); i++)
        if (proj[i] < 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s = %d is negative", proj_names[i], proj[i]);
    if (!(c->sm_scaler >= 0) || isinf(c->sm_scaler))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "smScaler %g is negative or not finite", c->sm_scaler);
    int qk = ocd_attn_head_qk(c), kk = c->k_proj > 0 ? c->k_proj : c->k_size;
    if (qk != kk)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "Q and K sizes after projection differ (%d, %d)", qk, kk);
    if (!ocd_dtype_valid(c->dtype) || !ocd_dtype_valid(c->comp))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %d or computePrec %d is not a cudnnDataType_t", (int)c->dtype,
                        (int)c->comp);
    if ((unsigned)c->math > CUDNN_FMA_MATH)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mathType %d is not a cudnnMathType_t", (int)c->math);
    if (attn_drop != NULL) OCD_CHECK_OBJECT(OCD_OBJ_DROPOUT, attn_drop);
    if (post_drop != NULL) OCD_CHECK_OBJECT(OCD_OBJ_DROPOUT, post_drop);
    if (!type_pair_supported(c->dtype, c->comp))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "dataType %s with computePrec %s is not a supported pair",
                        ocd_dtype_name(c->dtype), ocd_dtype_name(c->comp));
    /* every size product the calls form counts in 62 bits */
    double tokens = (double)c->max_batch * c->max_beam * OCD_MAX(c->qo_max, c->kv_max);
    double width = (double)c->heads * OCD_MAX(OCD_MAX(qk, ocd_attn_head_v(c)), OCD_MAX(c->q_size, OCD_MAX(c->k_size, c->v_size)));
    if (tokens * OCD_MAX(width, (double)ocd_attn_o_size(c)) >= 0x1p50 || tokens >= 0x1p31)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the attention buffers of %.0f tokens of %.0f values are too large",
                        tokens, width);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetAttnDescriptor(cudnnAttnDescriptor_t attnDesc, unsigned attnMode, int nHeads,
                                                 double smScaler, cudnnDataType_t dataType,
                                                 cudnnDataType_t computePrec, cudnnMathType_t mathType,
                                                 cudnnDropoutDescriptor_t attnDropoutDesc,
                                                 cudnnDropoutDescriptor_t postDropoutDesc, int qSize, int kSize,
                                                 int vSize, int qProjSize, int kProjSize, int vProjSize,
                                                 int oProjSize, int qoMaxSeqLength, int kvMaxSeqLength,
                                                 int maxBatchSize, int maxBeamSize)
{
    OCD_LOG_API("attnDesc=%p attnMode=0x%x nHeads=%d smScaler=%g dataType=%d computePrec=%d mathType=%d "
                "attnDropoutDesc=%p postDropoutDesc=%p qSize=%d kSize=%d vSize=%d qProjSize=%d kProjSize=%d "
                "vProjSize=%d oProjSize=%d qoMaxSeqLength=%d kvMaxSeqLength=%d maxBatchSize=%d maxBeamSize=%d",
                (void *)attnDesc, attnMode, nHeads, smScaler, (int)dataType, (int)computePrec, (int)mathType,
                (void *)attnDropoutDesc, (void *)postDropoutDesc, qSize, kSize, vSize, qProjSize, kProjSize,
                vProjSize, oProjSize, qoMaxSeqLength, kvMaxSeqLength, maxBatchSize, maxBeamSize);
    OCD_CHECK_OBJECT(OCD_OBJ_ATTN, attnDesc);
    struct ocd_attn_config c = {
        .one_to_one = (attnMode & CUDNN_ATTN_QUERYMAP_ONE_TO_ONE) != 0,
        .biases = (attnMode & CUDNN_ATTN_ENABLE_PROJ_BIASES) != 0,
        .heads = nHeads, .sm_scaler = smScaler, .dtype = dataType, .comp = computePrec, .math = mathType,
        .q_size = qSize, .k_size = kSize, .v_size = vSize,
        .q_proj = qProjSize, .k_proj = kProjSize, .v_proj = vProjSize, .o_proj = oProjSize,
        .qo_max = qoMaxSeqLength, .kv_max = kvMaxSeqLength, .max_batch = maxBatchSize, .max_beam = maxBeamSize};
    OCD_TRY(check_config(&c, attnMode, attnDropoutDesc, postDropoutDesc));
    attnDesc->c = c;
    attnDesc->attn_dropout = attnDropoutDesc;
    attnDesc->post_dropout = postDropoutDesc;
    attnDesc->set = true;
    return CUDNN_STATUS_SUCCESS;
}

/* Stores v at out unless out is NULL. */
#define PUT(out, v)                                                                                                    \
    do {                                                                                                               \
        if ((out) != NULL) *(out) = (v);                                                                               \
    } while (0)

cudnnStatus_t CUDNNWINAPI cudnnGetAttnDescriptor(cudnnAttnDescriptor_t attnDesc, unsigned *attnMode, int *nHeads,
                                                 double *smScaler, cudnnDataType_t *dataType,
                                                 cudnnDataType_t *computePrec, cudnnMathType_t *mathType,
                                                 cudnnDropoutDescriptor_t *attnDropoutDesc,
                                                 cudnnDropoutDescriptor_t *postDropoutDesc, int *qSize, int *kSize,
                                                 int *vSize, int *qProjSize, int *kProjSize, int *vProjSize,
                                                 int *oProjSize, int *qoMaxSeqLength, int *kvMaxSeqLength,
                                                 int *maxBatchSize, int *maxBeamSize)
{
    OCD_LOG_API("attnDesc=%p", (void *)attnDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_ATTN, attnDesc);
    const struct ocd_attn_config *c = &attnDesc->c;
    PUT(attnMode, (c->one_to_one ? CUDNN_ATTN_QUERYMAP_ONE_TO_ONE : CUDNN_ATTN_QUERYMAP_ALL_TO_ONE) |
                      (c->biases ? CUDNN_ATTN_ENABLE_PROJ_BIASES : CUDNN_ATTN_DISABLE_PROJ_BIASES));
    PUT(nHeads, c->heads);
    PUT(smScaler, c->sm_scaler);
    PUT(dataType, c->dtype);
    PUT(computePrec, c->comp);
    PUT(mathType, c->math);
    PUT(attnDropoutDesc, attnDesc->attn_dropout);
    PUT(postDropoutDesc, attnDesc->post_dropout);
    PUT(qSize, c->q_size);
    PUT(kSize, c->k_size);
    PUT(vSize, c->v_size);
    PUT(qProjSize, c->q_proj);
    PUT(kProjSize, c->k_proj);
    PUT(vProjSize, c->v_proj);
    PUT(oProjSize, c->o_proj);
    PUT(qoMaxSeqLength, c->qo_max);
    PUT(kvMaxSeqLength, c->kv_max);
    PUT(maxBatchSize, c->max_batch);
    PUT(maxBeamSize, c->max_beam);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the sequence-data descriptor ----------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateSeqDataDescriptor(cudnnSeqDataDescriptor_t *seqDataDesc)
{
    OCD_LOG_API("seqDataDesc=%p", (void *)seqDataDesc);
    return ocd_object_create(OCD_OBJ_SEQ_DATA, sizeof(struct cudnnSeqDataStruct), (void **)seqDataDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroySeqDataDescriptor(cudnnSeqDataDescriptor_t seqDataDesc)
{
    OCD_LOG_API("seqDataDesc=%p", (void *)seqDataDesc);
    if (seqDataDesc == NULL) return CUDNN_STATUS_SUCCESS;
    OCD_CHECK_OBJECT(OCD_OBJ_SEQ_DATA, seqDataDesc);
    free(seqDataDesc->lengths);
    return ocd_object_destroy(OCD_OBJ_SEQ_DATA, seqDataDesc);
}

static const char *axis_name(int a)
{
    static const char *const names[] = {"TIME", "BATCH", "BEAM", "VECT"};
    return a >= 0 && a < 4 ? names[a] : "?";
}

static cudnnStatus_t check_seq(cudnnDataType_t dtype, int nbDims, const int dimA[], const cudnnSeqDataAxis_t axes[],
                               size_t count, const int lengths[])
{
    if (nbDims != CUDNN_SEQDATA_DIM_COUNT)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims %d is not CUDNN_SEQDATA_DIM_COUNT (4)", nbDims);
    if (dimA == NULL || axes == NULL || lengths == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA, axes or seqLengthArray is NULL");
    if (!ocd_dtype_valid(dtype)) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %d is not a cudnnDataType_t", (int)dtype);
    if (dtype != CUDNN_DATA_FLOAT && dtype != CUDNN_DATA_DOUBLE && dtype != CUDNN_DATA_HALF)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "sequence data of %s: FLOAT, DOUBLE or HALF", ocd_dtype_name(dtype));
    double total = 1;
    for (int a = 0; a < 4; a++) {
        if (dimA[a] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimA[%s] = %d is not positive", axis_name(a), dimA[a]);
        total *= dimA[a];
    }
    if (total >= 0x1p50) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sequence data of %.0f elements is too large", total);
    unsigned seen = 0;
    for (int i = 0; i < 4; i++) {
        if ((unsigned)axes[i] > CUDNN_SEQDATA_VECT_DIM || (seen & (1u << axes[i])))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "axes[%d] = %d: axes must name each cudnnSeqDataAxis_t once", i,
                            (int)axes[i]);
        seen |= 1u << axes[i];
    }
    if (axes[3] != CUDNN_SEQDATA_VECT_DIM)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "axes[3] is %s: the VECT dimension must be innermost",
                        axis_name(axes[3]));
    size_t want = (size_t)dimA[CUDNN_SEQDATA_BATCH_DIM] * (size_t)dimA[CUDNN_SEQDATA_BEAM_DIM];
    if (count != want)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArraySize %zu is not batch x beam = %zu", count, want);
    for (size_t i = 0; i < count; i++)
        if (lengths[i] < 0 || lengths[i] > dimA[CUDNN_SEQDATA_TIME_DIM])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArray[%zu] = %d is outside [0, %d]", i, lengths[i],
                            dimA[CUDNN_SEQDATA_TIME_DIM]);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetSeqDataDescriptor(cudnnSeqDataDescriptor_t seqDataDesc, cudnnDataType_t dataType,
                                                    int nbDims, const int dimA[], const cudnnSeqDataAxis_t axes[],
                                                    size_t seqLengthArraySize, const int seqLengthArray[],
                                                    void *paddingFill)
{
    OCD_LOG_API("seqDataDesc=%p dataType=%d nbDims=%d dimA=%p axes=%p seqLengthArraySize=%zu seqLengthArray=%p "
                "paddingFill=%p",
                (void *)seqDataDesc, (int)dataType, nbDims, (const void *)dimA, (const void *)axes,
                seqLengthArraySize, (const void *)seqLengthArray, paddingFill);
    OCD_CHECK_OBJECT(OCD_OBJ_SEQ_DATA, seqDataDesc);
    OCD_TRY(check_seq(dataType, nbDims, dimA, axes, seqLengthArraySize, seqLengthArray));
    int *lengths = ocd_malloc(sizeof(int) * seqLengthArraySize);
    if (lengths == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for %zu lengths", seqLengthArraySize);
    memcpy(lengths, seqLengthArray, sizeof(int) * seqLengthArraySize);
    struct cudnnSeqDataStruct *d = seqDataDesc;
    free(d->lengths);
    d->lengths = lengths;
    d->dtype = dataType;
    int64_t stride = 1;
    for (int i = 3; i >= 0; i--) {
        d->axes[i] = axes[i];
        d->dims[axes[i]] = dimA[axes[i]];
        d->strides[axes[i]] = stride;
        stride *= dimA[axes[i]];
    }
    d->has_fill = paddingFill != NULL;
    memset(d->fill, 0, sizeof d->fill);
    if (paddingFill != NULL) memcpy(d->fill, paddingFill, ocd_dtype_scalar_size(dataType));
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetSeqDataDescriptor(const cudnnSeqDataDescriptor_t seqDataDesc,
                                                    cudnnDataType_t *dataType, int *nbDims, int nbDimsRequested,
                                                    int dimA[], cudnnSeqDataAxis_t axes[],
                                                    size_t *seqLengthArraySize, size_t seqLengthSizeRequested,
                                                    int seqLengthArray[], void *paddingFill)
{
    OCD_LOG_API("seqDataDesc=%p nbDimsRequested=%d seqLengthSizeRequested=%zu", (void *)seqDataDesc, nbDimsRequested,
                seqLengthSizeRequested);
    OCD_CHECK_OBJECT(OCD_OBJ_SEQ_DATA, seqDataDesc);
    const struct cudnnSeqDataStruct *d = seqDataDesc;
    if (!d->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "seqDataDesc was never set");
    if (nbDimsRequested < 0 || (nbDimsRequested > 0 && (dimA == NULL || axes == NULL)) ||
        (seqLengthSizeRequested > 0 && seqLengthArray == NULL))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested is negative, or an array requested is NULL");
    size_t count = (size_t)d->dims[CUDNN_SEQDATA_BATCH_DIM] * (size_t)d->dims[CUDNN_SEQDATA_BEAM_DIM];
    PUT(dataType, d->dtype);
    PUT(nbDims, CUDNN_SEQDATA_DIM_COUNT);
    for (int i = 0; i < OCD_MIN(nbDimsRequested, CUDNN_SEQDATA_DIM_COUNT); i++) {
        dimA[i] = d->dims[i];
        axes[i] = d->axes[i];
    }
    PUT(seqLengthArraySize, count);
    if (seqLengthSizeRequested > 0) memcpy(seqLengthArray, d->lengths, sizeof(int) * OCD_MIN(seqLengthSizeRequested, count));
    if (paddingFill != NULL) memcpy(paddingFill, d->fill, ocd_dtype_scalar_size(d->dtype));
    return CUDNN_STATUS_SUCCESS;
}

/* ---- buffers and weights ------------------------------------------------------------------- */

static cudnnStatus_t check_attn_set(cudnnAttnDescriptor_t attnDesc)
{
    OCD_CHECK_OBJECT(OCD_OBJ_ATTN, attnDesc);
    if (!attnDesc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "attnDesc was never set");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetMultiHeadAttnBuffers(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc,
                                                       size_t *weightSizeInBytes, size_t *workSpaceSizeInBytes,
                                                       size_t *reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p attnDesc=%p weightSizeInBytes=%p workSpaceSizeInBytes=%p reserveSpaceSizeInBytes=%p",
                (void *)handle, (void *)attnDesc, (void *)weightSizeInBytes, (void *)workSpaceSizeInBytes,
                (void *)reserveSpaceSizeInBytes);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(check_attn_set(attnDesc));
    if (weightSizeInBytes == NULL || workSpaceSizeInBytes == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSizeInBytes or workSpaceSizeInBytes is NULL");
    const struct ocd_attn_config *c = &attnDesc->c;
    struct ocd_attn_layout l;
    size_t post = attnDesc->post_dropout != NULL
                      ? ocd_dropout_reserve_bytes((int64_t)c->qo_max * c->max_batch * c->max_beam * ocd_attn_o_size(c))
                      : 0;
    ocd_attn_layout_of(c, post, &l);
    *weightSizeInBytes = (size_t)ocd_attn_weight_count(c) * ocd_dtype_scalar_size(c->dtype);
    *workSpaceSizeInBytes = reserveSpaceSizeInBytes != NULL ? l.workspace : l.workspace_fwd;
    if (reserveSpaceSizeInBytes != NULL) *reserveSpaceSizeInBytes = l.reserve;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetMultiHeadAttnWeights(cudnnHandle_t handle, const cudnnAttnDescriptor_t attnDesc,
                                                       cudnnMultiHeadAttnWeightKind_t wKind, size_t weightSizeInBytes,
                                                       const void *weights, cudnnTensorDescriptor_t wDesc,
                                                       void **wAddr)
{
    OCD_LOG_API("handle=%p attnDesc=%p wKind=%d weightSizeInBytes=%zu weights=%p wDesc=%p wAddr=%p", (void *)handle,
                (void *)attnDesc, (int)wKind, weightSizeInBytes, weights, (void *)wDesc, (void *)wAddr);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(check_attn_set(attnDesc));
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, wDesc);
    if ((unsigned)wKind >= CUDNN_ATTN_WKIND_COUNT)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "wKind %d is not a cudnnMultiHeadAttnWeightKind_t", (int)wKind);
    if (wAddr == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "wAddr is NULL");
    const struct ocd_attn_config *c = &attnDesc->c;
    size_t elem = ocd_dtype_scalar_size(c->dtype), need = (size_t)ocd_attn_weight_count(c) * elem;
    if (weightSizeInBytes < need)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "weightSizeInBytes %zu is less than the %zu bytes of the weights",
                        weightSizeInBytes, need);
    struct ocd_attn_weight w;
    ocd_attn_weight_of(c, (int)wKind, &w);
    if (!w.present) {
        *wAddr = NULL;
        return CUDNN_STATUS_SUCCESS;
    }
    OCD_TRY(ocd_check_data(weights, "weights"));
    wDesc->dtype = c->dtype;
    wDesc->format = CUDNN_TENSOR_NCHW;
    wDesc->nb_dims = 3;
    for (int d = 0; d < 3; d++) wDesc->dims[d] = w.dims[d], wDesc->strides[d] = w.strides[d];
    wDesc->set = true;
    *wAddr = (char *)weights + (size_t)w.offset * elem;
    return CUDNN_STATUS_SUCCESS;
}
