/* rnn_desc.c: the RNN descriptor of libcudnn_adv_infer: Create/Destroy, the v8 and legacy (v6)
   setters and getters, math type, bias mode, clipping, recurrent projection, padding mode,
   persistent plans, cudnnBuildRNNDynamic and cudnnSetRNNAlgorithmDescriptor; and the problem
   (problem/rnn.h) every RNN call builds from it.

   The descriptor holds an ocd_rnn_problem: every setter checks its arguments first and changes
   nothing on error (BAD_PARAM or NOT_SUPPORTED, logged). cuDNN 8.2 rules implemented here:
   - cudnnSetRNNDescriptor_v8: every enumerant must be one of its type; inputSize, hiddenSize,
     numLayers >= 1; 1 <= projSize <= hiddenSize; the data type HALF (math precision HALF or
     FLOAT), BFLOAT16 (BFLOAT16 or FLOAT), FLOAT (FLOAT) or DOUBLE (DOUBLE); auxFlags only
     CUDNN_RNN_PADDED_IO_ENABLED; SKIP input needs inputSize == hiddenSize. A projection
     (projSize < hiddenSize) is an LSTM feature (BAD_PARAM for other cells) of the STANDARD
     algorithm (NOT_SUPPORTED for the persistent ones). dropoutDesc may be NULL (no dropout).
   - cudnnSetRNNDescriptor_v6 (the legacy setter, as PyTorch, TensorFlow and MXNet call it with
     their handle and a dropout descriptor) sets the v8 fields it names and resets the others:
     double bias, default math, no projection, no clipping, no padded IO; the data type is the
     math precision's, and the input size the hidden size until a legacy call takes both from
     its xDesc (ocd_rnn_problem_from_legacy).
   - Clipping: a cudnnRNNClipMode_t and a cudnnNanPropagation_t, lclip <= rclip, neither NaN.
   - cudnnSetRNNProjectionLayers: 1 <= recProjSize <= hiddenSize; outProjSize must be 0 (output
     projection: NOT_SUPPORTED); a projection needs LSTM and the STANDARD algorithm
     (NOT_SUPPORTED). The getter reports outProjSize 0.
   - Persistent plans are for PERSIST_DYNAMIC: cudnnCreatePersistentRNNPlan answers
     NOT_SUPPORTED for another algorithm ("the current hyper-parameters are invalid"),
     cudnnSetPersistentRNNPlan BAD_PARAM ("the algo selected in rnnDesc is not
     CUDNN_RNN_ALGO_PERSIST_DYNAMIC"). Setting a plan records its mini batch in the descriptor,
     as cudnnBuildRNNDynamic does; the compute calls of PERSIST_DYNAMIC need it to be their batch
     (adv/rnn_forward.c). There is no kernel to compile: both only record the batch, so a plan
     may be destroyed once set. cudnnBuildRNNDynamic with another algorithm has nothing to build
     and succeeds. Setting the descriptor again forgets the plan. */
#include "problem/rnn.h"

#include "core/dtype.h"
#include "core/handle.h"
#include "core/tensor.h"
#include "ops/algorithm.h"
#include "ops/dropout.h"

#include <math.h>

struct cudnnRNNStruct {
    struct ocd_object obj;
    bool set; /* false until a Set call succeeded */
    struct ocd_rnn_problem p;
};

struct cudnnPersistentRNNPlan {
    struct ocd_object obj;
    int mini_batch;
    cudnnDataType_t dtype;
};

/* ---- checks ---------------------------------------------------------------------------------- */

#define CHECK_ENUM(value, last, type)                                                                  \
    do {                                                                                               \
        if ((unsigned)(value) > (unsigned)(last))                                                      \
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s %d is not a " type, #value, (int)(value));     \
    } while (0)

/* The descriptor must be live and set (its sizes known). */
static cudnnStatus_t check_set(cudnnRNNDescriptor_t rnnDesc)
{
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    if (!rnnDesc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "rnnDesc was never set");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_math_type(cudnnMathType_t mathType)
{
    if (mathType != CUDNN_DEFAULT_MATH && mathType != CUDNN_TENSOR_OP_MATH &&
        mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && mathType != CUDNN_FMA_MATH)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mathType %d is not a cudnnMathType_t", (int)mathType);
    return CUDNN_STATUS_SUCCESS;
}

/* The data types an RNN takes and the math precisions each allows. */
static cudnnStatus_t check_types(cudnnDataType_t dataType, cudnnDataType_t mathPrec)
{
    bool ok;
    switch (dataType) {
    case CUDNN_DATA_HALF: ok = mathPrec == CUDNN_DATA_HALF || mathPrec == CUDNN_DATA_FLOAT; break;
    case CUDNN_DATA_BFLOAT16: ok = mathPrec == CUDNN_DATA_BFLOAT16 || mathPrec == CUDNN_DATA_FLOAT; break;
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_DOUBLE: ok = mathPrec == dataType; break;
    default:
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dataType %d: an RNN takes HALF, BFLOAT16, FLOAT or DOUBLE",
                        (int)dataType);
    }
    if (!ok)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mathPrec %d is not allowed with dataType %d", (int)mathPrec,
                        (int)dataType);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_dropout(cudnnDropoutDescriptor_t dropoutDesc)
{
    if (dropoutDesc != NULL && !ocd_object_alive(OCD_OBJ_DROPOUT, dropoutDesc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dropoutDesc is not a live dropout descriptor");
    return CUDNN_STATUS_SUCCESS;
}

/* A projection of proj < hidden: an LSTM feature of the STANDARD algorithm. */
static cudnnStatus_t check_projection(cudnnRNNMode_t cell, cudnnRNNAlgo_t algo, int proj, int hidden)
{
    if (proj < 1 || proj > hidden)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "projSize %d is outside [1, hiddenSize = %d]", proj, hidden);
    if (proj < hidden && cell != CUDNN_LSTM)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "projSize %d < hiddenSize %d: a projection needs CUDNN_LSTM", proj,
                        hidden);
    if (proj < hidden && algo != CUDNN_RNN_ALGO_STANDARD)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                        "projSize %d < hiddenSize %d: a projection needs CUDNN_RNN_ALGO_STANDARD (algo %d)", proj,
                        hidden, (int)algo);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_clip(cudnnRNNClipMode_t clipMode, cudnnNanPropagation_t clipNanOpt, double lclip,
                                double rclip)
{
    CHECK_ENUM(clipMode, CUDNN_RNN_CLIP_MINMAX, "cudnnRNNClipMode_t");
    CHECK_ENUM(clipNanOpt, CUDNN_PROPAGATE_NAN, "cudnnNanPropagation_t");
    if (isnan(lclip) || isnan(rclip) || lclip > rclip)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the clip range [%g, %g] is empty or NaN", lclip, rclip);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- create, destroy, v8 ------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *rnnDesc)
{
    OCD_LOG_API("rnnDesc=%p", (void *)rnnDesc);
    OCD_TRY(ocd_object_create(OCD_OBJ_RNN, sizeof(struct cudnnRNNStruct), (void **)rnnDesc));
    struct ocd_rnn_problem *p = &(*rnnDesc)->p;
    p->dtype = p->math_prec = CUDNN_DATA_FLOAT;
    p->bias_mode = CUDNN_RNN_DOUBLE_BIAS;
    p->dirs = 1;
    p->gates = 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyRNNDescriptor(cudnnRNNDescriptor_t rnnDesc)
{
    OCD_LOG_API("rnnDesc=%p", (void *)rnnDesc);
    if (rnnDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_RNN, rnnDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t algo,
                                                   cudnnRNNMode_t cellMode, cudnnRNNBiasMode_t biasMode,
                                                   cudnnDirectionMode_t dirMode, cudnnRNNInputMode_t inputMode,
                                                   cudnnDataType_t dataType, cudnnDataType_t mathPrec,
                                                   cudnnMathType_t mathType, int32_t inputSize, int32_t hiddenSize,
                                                   int32_t projSize, int32_t numLayers,
                                                   cudnnDropoutDescriptor_t dropoutDesc, uint32_t auxFlags)
{
    OCD_LOG_API("rnnDesc=%p algo=%d cellMode=%d biasMode=%d dirMode=%d inputMode=%d dataType=%d mathPrec=%d "
                "mathType=%d inputSize=%d hiddenSize=%d projSize=%d numLayers=%d dropoutDesc=%p auxFlags=%u",
                (void *)rnnDesc, (int)algo, (int)cellMode, (int)biasMode, (int)dirMode, (int)inputMode,
                (int)dataType, (int)mathPrec, (int)mathType, inputSize, hiddenSize, projSize, numLayers,
                (void *)dropoutDesc, auxFlags);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    CHECK_ENUM(algo, CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H, "cudnnRNNAlgo_t");
    CHECK_ENUM(cellMode, CUDNN_GRU, "cudnnRNNMode_t");
    CHECK_ENUM(biasMode, CUDNN_RNN_SINGLE_REC_BIAS, "cudnnRNNBiasMode_t");
    CHECK_ENUM(dirMode, CUDNN_BIDIRECTIONAL, "cudnnDirectionMode_t");
    CHECK_ENUM(inputMode, CUDNN_SKIP_INPUT, "cudnnRNNInputMode_t");
    OCD_TRY(check_types(dataType, mathPrec));
    OCD_TRY(check_math_type(mathType));
    if (inputSize < 1 || hiddenSize < 1 || numLayers < 1)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "inputSize %d, hiddenSize %d and numLayers %d must be >= 1",
                        inputSize, hiddenSize, numLayers);
    OCD_TRY(check_projection(cellMode, algo, projSize, hiddenSize));
    if (inputMode == CUDNN_SKIP_INPUT && inputSize != hiddenSize)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "CUDNN_SKIP_INPUT needs inputSize %d == hiddenSize %d", inputSize,
                        hiddenSize);
    if (auxFlags & ~(uint32_t)CUDNN_RNN_PADDED_IO_ENABLED)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "auxFlags 0x%x has bits other than CUDNN_RNN_PADDED_IO_ENABLED",
                        auxFlags);
    OCD_TRY(check_dropout(dropoutDesc));
    struct ocd_rnn_problem *p = &rnnDesc->p;
    *p = (struct ocd_rnn_problem){
        .algo = algo, .cell = cellMode, .bias_mode = biasMode, .dir_mode = dirMode, .input_mode = inputMode,
        .dtype = dataType, .math_prec = mathPrec, .math_type = mathType,
        .dirs = dirMode == CUDNN_BIDIRECTIONAL ? 2 : 1, .layers = numLayers, .gates = ocd_rnn_gates_of(cellMode),
        .input_size = inputSize, .hidden_size = hiddenSize, .proj_size = projSize,
        .clip_mode = p->clip_mode, .clip_nan = p->clip_nan, .lclip = p->lclip, .rclip = p->rclip,
        .aux_flags = auxFlags, .padded_io = (auxFlags & CUDNN_RNN_PADDED_IO_ENABLED) != 0,
        .dropout_desc = dropoutDesc};
    rnnDesc->set = true;
    return CUDNN_STATUS_SUCCESS;
}

/* Writes each output that is not NULL: a caller asks for the fields it needs (TensorFlow's
   CheckAndFetchProjectionWeights passes NULL for biasMode, dataType, mathType, inputSize and
   auxFlags), as NVIDIA's library allows. */
cudnnStatus_t CUDNNWINAPI cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t *algo,
                                                   cudnnRNNMode_t *cellMode, cudnnRNNBiasMode_t *biasMode,
                                                   cudnnDirectionMode_t *dirMode, cudnnRNNInputMode_t *inputMode,
                                                   cudnnDataType_t *dataType, cudnnDataType_t *mathPrec,
                                                   cudnnMathType_t *mathType, int32_t *inputSize, int32_t *hiddenSize,
                                                   int32_t *projSize, int32_t *numLayers,
                                                   cudnnDropoutDescriptor_t *dropoutDesc, uint32_t *auxFlags)
{
    OCD_LOG_API("rnnDesc=%p", (void *)rnnDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    const struct ocd_rnn_problem *p = &rnnDesc->p;
#define OUT(ptr, value) \
    if ((ptr) != NULL) *(ptr) = (value)
    OUT(algo, p->algo);
    OUT(cellMode, p->cell);
    OUT(biasMode, p->bias_mode);
    OUT(dirMode, p->dir_mode);
    OUT(inputMode, p->input_mode);
    OUT(dataType, p->dtype);
    OUT(mathPrec, p->math_prec);
    OUT(mathType, p->math_type);
    OUT(inputSize, p->input_size);
    OUT(hiddenSize, p->hidden_size);
    OUT(projSize, p->proj_size);
    OUT(numLayers, p->layers);
    OUT(dropoutDesc, p->dropout_desc);
    OUT(auxFlags, p->aux_flags);
#undef OUT
    return CUDNN_STATUS_SUCCESS;
}

/* ---- legacy setters and getters ------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnSetRNNDescriptor_v6(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                   const int hiddenSize, const int numLayers,
                                                   cudnnDropoutDescriptor_t dropoutDesc, cudnnRNNInputMode_t inputMode,
                                                   cudnnDirectionMode_t direction, cudnnRNNMode_t cellMode,
                                                   cudnnRNNAlgo_t algo, cudnnDataType_t mathPrec)
{
    OCD_LOG_API("handle=%p rnnDesc=%p hiddenSize=%d numLayers=%d dropoutDesc=%p inputMode=%d direction=%d "
                "cellMode=%d algo=%d mathPrec=%d",
                (void *)handle, (void *)rnnDesc, hiddenSize, numLayers, (void *)dropoutDesc, (int)inputMode,
                (int)direction, (int)cellMode, (int)algo, (int)mathPrec);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    CHECK_ENUM(algo, CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H, "cudnnRNNAlgo_t");
    CHECK_ENUM(cellMode, CUDNN_GRU, "cudnnRNNMode_t");
    CHECK_ENUM(direction, CUDNN_BIDIRECTIONAL, "cudnnDirectionMode_t");
    CHECK_ENUM(inputMode, CUDNN_SKIP_INPUT, "cudnnRNNInputMode_t");
    if (mathPrec != CUDNN_DATA_HALF && mathPrec != CUDNN_DATA_BFLOAT16 && mathPrec != CUDNN_DATA_FLOAT &&
        mathPrec != CUDNN_DATA_DOUBLE)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mathPrec %d: an RNN computes in HALF, BFLOAT16, FLOAT or DOUBLE",
                        (int)mathPrec);
    if (hiddenSize < 1 || numLayers < 1)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "hiddenSize %d and numLayers %d must be >= 1", hiddenSize,
                        numLayers);
    OCD_TRY(check_dropout(dropoutDesc));
    rnnDesc->p = (struct ocd_rnn_problem){
        .algo = algo, .cell = cellMode, .bias_mode = CUDNN_RNN_DOUBLE_BIAS, .dir_mode = direction,
        .input_mode = inputMode, .dtype = mathPrec, .math_prec = mathPrec, .math_type = CUDNN_DEFAULT_MATH,
        .dirs = direction == CUDNN_BIDIRECTIONAL ? 2 : 1, .layers = numLayers, .gates = ocd_rnn_gates_of(cellMode),
        .input_size = hiddenSize, .hidden_size = hiddenSize, .proj_size = hiddenSize,
        .dropout_desc = dropoutDesc};
    rnnDesc->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNDescriptor_v6(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int *hiddenSize,
                                                   int *numLayers, cudnnDropoutDescriptor_t *dropoutDesc,
                                                   cudnnRNNInputMode_t *inputMode, cudnnDirectionMode_t *direction,
                                                   cudnnRNNMode_t *cellMode, cudnnRNNAlgo_t *algo,
                                                   cudnnDataType_t *mathPrec)
{
    OCD_LOG_API("handle=%p rnnDesc=%p", (void *)handle, (void *)rnnDesc);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    const void *out[] = {hiddenSize, numLayers, dropoutDesc, inputMode, direction, cellMode, algo, mathPrec};
    for (size_t i = 0; i < OCD_ARRAY_LEN(out); i++)
        if (out[i] == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "output argument %zu is NULL", i + 3);
    const struct ocd_rnn_problem *p = &rnnDesc->p;
    *hiddenSize = p->hidden_size, *numLayers = p->layers, *dropoutDesc = p->dropout_desc;
    *inputMode = p->input_mode, *direction = p->dir_mode, *cellMode = p->cell, *algo = p->algo;
    *mathPrec = p->math_prec;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNMatrixMathType(cudnnRNNDescriptor_t rnnDesc, cudnnMathType_t mType)
{
    OCD_LOG_API("rnnDesc=%p mType=%d", (void *)rnnDesc, (int)mType);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    OCD_TRY(check_math_type(mType));
    rnnDesc->p.math_type = mType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNMatrixMathType(cudnnRNNDescriptor_t rnnDesc, cudnnMathType_t *mType)
{
    OCD_LOG_API("rnnDesc=%p mType=%p", (void *)rnnDesc, (void *)mType);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    if (mType == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mType is NULL");
    *mType = rnnDesc->p.math_type;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNBiasMode(cudnnRNNDescriptor_t rnnDesc, cudnnRNNBiasMode_t biasMode)
{
    OCD_LOG_API("rnnDesc=%p biasMode=%d", (void *)rnnDesc, (int)biasMode);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    CHECK_ENUM(biasMode, CUDNN_RNN_SINGLE_REC_BIAS, "cudnnRNNBiasMode_t");
    rnnDesc->p.bias_mode = biasMode;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNBiasMode(cudnnRNNDescriptor_t rnnDesc, cudnnRNNBiasMode_t *biasMode)
{
    OCD_LOG_API("rnnDesc=%p biasMode=%p", (void *)rnnDesc, (void *)biasMode);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    if (biasMode == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "biasMode is NULL");
    *biasMode = rnnDesc->p.bias_mode;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNPaddingMode(cudnnRNNDescriptor_t rnnDesc, unsigned paddingMode)
{
    OCD_LOG_API("rnnDesc=%p paddingMode=%u", (void *)rnnDesc, paddingMode);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    if (paddingMode > CUDNN_RNN_PADDED_IO_ENABLED)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "paddingMode %u is not CUDNN_RNN_PADDED_IO_DISABLED or _ENABLED",
                        paddingMode);
    rnnDesc->p.padded_io = paddingMode == CUDNN_RNN_PADDED_IO_ENABLED;
    rnnDesc->p.aux_flags = paddingMode;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNPaddingMode(cudnnRNNDescriptor_t rnnDesc, unsigned *paddingMode)
{
    OCD_LOG_API("rnnDesc=%p paddingMode=%p", (void *)rnnDesc, (void *)paddingMode);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    if (paddingMode == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "paddingMode is NULL");
    *paddingMode = rnnDesc->p.padded_io ? CUDNN_RNN_PADDED_IO_ENABLED : CUDNN_RNN_PADDED_IO_DISABLED;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNProjectionLayers(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                      const int recProjSize, const int outProjSize)
{
    OCD_LOG_API("handle=%p rnnDesc=%p recProjSize=%d outProjSize=%d", (void *)handle, (void *)rnnDesc, recProjSize,
                outProjSize);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(check_set(rnnDesc));
    if (outProjSize < 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "outProjSize %d is negative", outProjSize);
    if (outProjSize > 0)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "outProjSize %d: the output projection is not supported",
                        outProjSize);
    OCD_TRY(check_projection(rnnDesc->p.cell, rnnDesc->p.algo, recProjSize, rnnDesc->p.hidden_size));
    rnnDesc->p.proj_size = recProjSize;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNProjectionLayers(cudnnHandle_t handle, const cudnnRNNDescriptor_t rnnDesc,
                                                      int *recProjSize, int *outProjSize)
{
    OCD_LOG_API("handle=%p rnnDesc=%p", (void *)handle, (void *)rnnDesc);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    if (recProjSize == NULL || outProjSize == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "recProjSize or outProjSize is NULL");
    *recProjSize = rnnDesc->p.proj_size;
    *outProjSize = 0;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- clipping ------------------------------------------------------------------------------ */

static cudnnStatus_t set_clip(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t clipMode,
                              cudnnNanPropagation_t clipNanOpt, double lclip, double rclip)
{
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    OCD_TRY(check_clip(clipMode, clipNanOpt, lclip, rclip));
    struct ocd_rnn_problem *p = &rnnDesc->p;
    p->clip_mode = clipMode, p->clip_nan = clipNanOpt, p->lclip = lclip, p->rclip = rclip;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t get_clip(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t *clipMode,
                              cudnnNanPropagation_t *clipNanOpt, double *lclip, double *rclip)
{
    OCD_CHECK_OBJECT(OCD_OBJ_RNN, rnnDesc);
    if (clipMode == NULL || clipNanOpt == NULL || lclip == NULL || rclip == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output argument is NULL");
    const struct ocd_rnn_problem *p = &rnnDesc->p;
    *clipMode = p->clip_mode, *clipNanOpt = p->clip_nan, *lclip = p->lclip, *rclip = p->rclip;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnRNNSetClip_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t clipMode,
                                             cudnnNanPropagation_t clipNanOpt, double lclip, double rclip)
{
    OCD_LOG_API("rnnDesc=%p clipMode=%d clipNanOpt=%d lclip=%g rclip=%g", (void *)rnnDesc, (int)clipMode,
                (int)clipNanOpt, lclip, rclip);
    return set_clip(rnnDesc, clipMode, clipNanOpt, lclip, rclip);
}

cudnnStatus_t CUDNNWINAPI cudnnRNNGetClip_v8(cudnnRNNDescriptor_t rnnDesc, cudnnRNNClipMode_t *clipMode,
                                             cudnnNanPropagation_t *clipNanOpt, double *lclip, double *rclip)
{
    OCD_LOG_API("rnnDesc=%p", (void *)rnnDesc);
    return get_clip(rnnDesc, clipMode, clipNanOpt, lclip, rclip);
}

cudnnStatus_t CUDNNWINAPI cudnnRNNSetClip(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                          cudnnRNNClipMode_t clipMode, cudnnNanPropagation_t clipNanOpt, double lclip,
                                          double rclip)
{
    OCD_LOG_API("handle=%p rnnDesc=%p clipMode=%d clipNanOpt=%d lclip=%g rclip=%g", (void *)handle, (void *)rnnDesc,
                (int)clipMode, (int)clipNanOpt, lclip, rclip);
    OCD_CHECK_HANDLE(handle);
    return set_clip(rnnDesc, clipMode, clipNanOpt, lclip, rclip);
}

cudnnStatus_t CUDNNWINAPI cudnnRNNGetClip(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                          cudnnRNNClipMode_t *clipMode, cudnnNanPropagation_t *clipNanOpt,
                                          double *lclip, double *rclip)
{
    OCD_LOG_API("handle=%p rnnDesc=%p", (void *)handle, (void *)rnnDesc);
    OCD_CHECK_HANDLE(handle);
    return get_clip(rnnDesc, clipMode, clipNanOpt, lclip, rclip);
}

/* ---- algorithms and persistent plans ------------------------------------------------------ */

cudnnStatus_t CUDNNWINAPI cudnnCreatePersistentRNNPlan(cudnnRNNDescriptor_t rnnDesc, const int minibatch,
                                                       const cudnnDataType_t dataType, cudnnPersistentRNNPlan_t *plan)
{
    OCD_LOG_API("rnnDesc=%p minibatch=%d dataType=%d plan=%p", (void *)rnnDesc, minibatch, (int)dataType,
                (void *)plan);
    OCD_TRY(check_set(rnnDesc));
    if (plan == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "plan is NULL");
    if (minibatch < 1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "minibatch %d must be >= 1", minibatch);
    OCD_TRY(check_types(dataType, dataType));
    if (rnnDesc->p.algo != CUDNN_RNN_ALGO_PERSIST_DYNAMIC)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "a persistent plan is for CUDNN_RNN_ALGO_PERSIST_DYNAMIC (algo %d)",
                        (int)rnnDesc->p.algo);
    OCD_TRY(ocd_object_create(OCD_OBJ_PERSISTENT_RNN_PLAN, sizeof(struct cudnnPersistentRNNPlan), (void **)plan));
    (*plan)->mini_batch = minibatch;
    (*plan)->dtype = dataType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyPersistentRNNPlan(cudnnPersistentRNNPlan_t plan)
{
    OCD_LOG_API("plan=%p", (void *)plan);
    if (plan == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_PERSISTENT_RNN_PLAN, plan);
}

cudnnStatus_t CUDNNWINAPI cudnnSetPersistentRNNPlan(cudnnRNNDescriptor_t rnnDesc, cudnnPersistentRNNPlan_t plan)
{
    OCD_LOG_API("rnnDesc=%p plan=%p", (void *)rnnDesc, (void *)plan);
    OCD_TRY(check_set(rnnDesc));
    OCD_CHECK_OBJECT(OCD_OBJ_PERSISTENT_RNN_PLAN, plan);
    if (rnnDesc->p.algo != CUDNN_RNN_ALGO_PERSIST_DYNAMIC)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "a persistent plan is for CUDNN_RNN_ALGO_PERSIST_DYNAMIC (algo %d)",
                        (int)rnnDesc->p.algo);
    rnnDesc->p.dynamic_batch = plan->mini_batch;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnBuildRNNDynamic(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int miniBatch)
{
    OCD_LOG_API("handle=%p rnnDesc=%p miniBatch=%d", (void *)handle, (void *)rnnDesc, miniBatch);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(check_set(rnnDesc));
    if (miniBatch < 1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "miniBatch %d must be >= 1", miniBatch);
    if (rnnDesc->p.algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC) rnnDesc->p.dynamic_batch = miniBatch;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetRNNAlgorithmDescriptor(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                         cudnnAlgorithmDescriptor_t algoDesc)
{
    OCD_LOG_API("handle=%p rnnDesc=%p algoDesc=%p", (void *)handle, (void *)rnnDesc, (void *)algoDesc);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(check_set(rnnDesc));
    cudnnAlgorithm_t a;
    OCD_TRY(ocd_algorithm_get(algoDesc, &a));
    cudnnRNNAlgo_t algo = a.algo.RNNAlgo;
    CHECK_ENUM(algo, CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H, "cudnnRNNAlgo_t");
    if (ocd_rnn_has_projection(&rnnDesc->p))
        OCD_TRY(check_projection(rnnDesc->p.cell, algo, rnnDesc->p.proj_size, rnnDesc->p.hidden_size));
    rnnDesc->p.algo = algo;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the problem ------------------------------------------------------------------------------ */

cudnnStatus_t ocd_rnn_problem_from_desc(cudnnRNNDescriptor_t desc, struct ocd_rnn_problem *p)
{
    OCD_TRY(check_set(desc));
    *p = desc->p;
    const struct cudnnDropoutStruct *d = p->dropout_desc;
    if (d != NULL && !ocd_object_alive(OCD_OBJ_DROPOUT, d))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the dropout descriptor of rnnDesc was destroyed");
    p->dropout = d != NULL ? d->dropout : 0.0f;
    p->dropout_states = d != NULL ? d->states : NULL;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_problem_from_legacy(cudnnRNNDescriptor_t desc, cudnnTensorDescriptor_t xDesc,
                                          struct ocd_rnn_problem *p)
{
    OCD_TRY(ocd_rnn_problem_from_desc(desc, p));
    struct ocd_tensor_view x;
    OCD_TRY(ocd_tensor_get(xDesc, "xDesc", &x));
    if (x.rank < 2 || x.dims[1] > INT32_MAX)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc must be batch x inputSize [x 1] (%d dims)", x.rank);
    OCD_TRY(check_types(x.dtype, p->math_prec));
    p->input_size = (int)x.dims[1];
    p->dtype = x.dtype;
    if (p->input_mode == CUDNN_SKIP_INPUT && p->input_size != p->hidden_size)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "CUDNN_SKIP_INPUT needs the input width %d == hiddenSize %d",
                        p->input_size, p->hidden_size);
    return CUDNN_STATUS_SUCCESS;
}
