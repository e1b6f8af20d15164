/* rnn_data.c: the RNN data descriptor of libcudnn_adv_infer (Create, Destroy, Set, Get) and the
   data layout every RNN call builds from it (problem/rnn.h, ocd_rnn_data_from_desc).

   cuDNN 8.2 rules implemented here (BAD_PARAM, logged, the descriptor unchanged):
   - dataType HALF, BFLOAT16, FLOAT or DOUBLE; layout a cudnnRNNDataLayout_t; maxSeqLength,
     batchSize and vectorSize >= 1; seqLengthArray given, each length in [0, maxSeqLength];
     SEQ_MAJOR_PACKED needs the lengths in non-increasing order (the packed steps hold the
     running sequences first).
   - paddingFill, when given, is one value of dataType in host memory that a call writes into the
     padding positions of an unpacked output; NULL leaves them untouched. The getter writes it
     back in dataType (zero when none was given) where its paddingFill is not NULL, and the first
     min(arrayLengthRequested, batchSize) lengths. */
#include "problem/rnn.h"

#include "core/dtype.h"
#include "core/object.h"

#include <stdlib.h>
#include <string.h>

struct cudnnRNNDataStruct {
    struct ocd_object obj;
    bool set;
    struct ocd_rnn_data d;
    int *lengths;                  /* batch ints, owned */
    unsigned char fill_bytes[8];   /* paddingFill as given, in dataType; zero when none */
};

cudnnStatus_t CUDNNWINAPI cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *rnnDataDesc)
{
    OCD_LOG_API("rnnDataDesc=%p", (void *)rnnDataDesc);
    OCD_TRY(ocd_object_create(OCD_OBJ_RNN_DATA, sizeof(struct cudnnRNNDataStruct), (void **)rnnDataDesc));
    (*rnnDataDesc)->d.dtype = CUDNN_DATA_FLOAT;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc)
{
    OCD_LOG_API("rnnDataDesc=%p", (void *)rnnDataDesc);
    if (rnnDataDesc == NULL) return CUDNN_STATUS_SUCCESS;
    OCD_CHECK_OBJECT(OCD_OBJ_RNN_DATA, rnnDataDesc);
    free(rnnDataDesc->lengths);
    return ocd_object_destroy(OCD_OBJ_RNN_DATA, rnnDataDesc);
}

/* The value of one scalar of an RNN data type. */
static double load_fill(cudnnDataType_t t, const void *v)
{
    switch (t) {
    case CUDNN_DATA_HALF: return ocd_half_to_float(*(const uint16_t *)v);
    case CUDNN_DATA_BFLOAT16: return ocd_bf16_to_float(*(const uint16_t *)v);
    case CUDNN_DATA_FLOAT: return *(const float *)v;
    default: return *(const double *)v;
    }
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc, cudnnDataType_t dataType,
                                                    cudnnRNNDataLayout_t layout, int maxSeqLength, int batchSize,
                                                    int vectorSize, const int seqLengthArray[], void *paddingFill)
{
    OCD_LOG_API("rnnDataDesc=%p dataType=%d layout=%d maxSeqLength=%d batchSize=%d vectorSize=%d "
                "seqLengthArray=%p paddingFill=%p",
                (void *)rnnDataDesc, (int)dataType, (int)layout, maxSeqLength, batchSize, vectorSize,
                (const void *)seqLengthArray, paddingFill);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN_DATA, rnnDataDesc);
    if (dataType != CUDNN_DATA_HALF && dataType != CUDNN_DATA_BFLOAT16 && dataType != CUDNN_DATA_FLOAT &&
        dataType != CUDNN_DATA_DOUBLE)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %d: RNN data is HALF, BFLOAT16, FLOAT or DOUBLE",
                        (int)dataType);
    if ((unsigned)layout > CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "layout %d is not a cudnnRNNDataLayout_t", (int)layout);
    if (maxSeqLength < 1 || batchSize < 1 || vectorSize < 1)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "maxSeqLength %d, batchSize %d and vectorSize %d must be >= 1",
                        maxSeqLength, batchSize, vectorSize);
    if (seqLengthArray == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArray is NULL");
    for (int b = 0; b < batchSize; b++) {
        if (seqLengthArray[b] < 0 || seqLengthArray[b] > maxSeqLength)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArray[%d] = %d is outside [0, maxSeqLength = %d]", b,
                            seqLengthArray[b], maxSeqLength);
        if (layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED && b > 0 && seqLengthArray[b] > seqLengthArray[b - 1])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                            "SEQ_MAJOR_PACKED needs non-increasing lengths: seqLengthArray[%d] = %d > [%d] = %d", b,
                            seqLengthArray[b], b - 1, seqLengthArray[b - 1]);
    }
    int *lengths = ocd_malloc(sizeof(int) * (size_t)batchSize);
    if (lengths == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "no memory for %d lengths", batchSize);
    memcpy(lengths, seqLengthArray, sizeof(int) * (size_t)batchSize);
    free(rnnDataDesc->lengths);
    rnnDataDesc->lengths = lengths;
    memset(rnnDataDesc->fill_bytes, 0, sizeof rnnDataDesc->fill_bytes);
    if (paddingFill != NULL) memcpy(rnnDataDesc->fill_bytes, paddingFill, ocd_dtype_scalar_size(dataType));
    rnnDataDesc->d = (struct ocd_rnn_data){
        .dtype = dataType, .layout = layout, .max_seq = maxSeqLength, .batch = batchSize, .vec = vectorSize,
        .seq_lengths = lengths, .has_fill = paddingFill != NULL,
        .fill = paddingFill != NULL ? load_fill(dataType, paddingFill) : 0.0};
    rnnDataDesc->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNDataDescriptor(cudnnRNNDataDescriptor_t rnnDataDesc, cudnnDataType_t *dataType,
                                                    cudnnRNNDataLayout_t *layout, int *maxSeqLength, int *batchSize,
                                                    int *vectorSize, int arrayLengthRequested, int seqLengthArray[],
                                                    void *paddingFill)
{
    OCD_LOG_API("rnnDataDesc=%p arrayLengthRequested=%d seqLengthArray=%p paddingFill=%p", (void *)rnnDataDesc,
                arrayLengthRequested, (void *)seqLengthArray, paddingFill);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN_DATA, rnnDataDesc);
    if (dataType == NULL || layout == NULL || maxSeqLength == NULL || batchSize == NULL || vectorSize == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output argument is NULL");
    if (arrayLengthRequested < 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "arrayLengthRequested %d is negative", arrayLengthRequested);
    if (arrayLengthRequested > 0 && seqLengthArray == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "seqLengthArray is NULL with arrayLengthRequested %d",
                        arrayLengthRequested);
    const struct ocd_rnn_data *d = &rnnDataDesc->d;
    *dataType = d->dtype, *layout = d->layout, *maxSeqLength = d->max_seq, *batchSize = d->batch;
    *vectorSize = d->vec;
    int n = OCD_MIN(arrayLengthRequested, d->batch);
    if (n > 0) memcpy(seqLengthArray, d->seq_lengths, sizeof(int) * (size_t)n);
    if (paddingFill != NULL) memcpy(paddingFill, rnnDataDesc->fill_bytes, ocd_dtype_scalar_size(d->dtype));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_data_from_desc(cudnnRNNDataDescriptor_t desc, struct ocd_rnn_data *d)
{
    OCD_CHECK_OBJECT(OCD_OBJ_RNN_DATA, desc);
    if (!desc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the RNN data descriptor was never set");
    *d = desc->d;
    return CUDNN_STATUS_SUCCESS;
}
