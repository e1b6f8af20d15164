/* conv_desc.c: the convolution descriptor (create, set, get, math type, groups, reorder type) and
   the forward output-dimension queries.

   Main decision: a 2-D descriptor is an N-d descriptor of array length 2, so every consumer reads
   one representation. A fresh descriptor is usable defaults (2-D, pad 0, stride 1, dilation 1,
   cross-correlation, float compute) but counts as "not set" for the operations: cuDNN documents
   that a descriptor must be set before use. */
#include "cnn/conv.h"

#include "core/dtype.h"

#include <string.h>

cudnnStatus_t ocd_conv_desc_get(cudnnConvolutionDescriptor_t desc, const char *name)
{
    if (!ocd_object_alive(OCD_OBJ_CONVOLUTION, desc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name,
                        desc == NULL ? "NULL" : "not a live convolution descriptor");
    if (!desc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was never set", name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc)
{
    OCD_LOG_API("convDesc=%p", (void *)convDesc);
    if (convDesc == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "convDesc is NULL");
    cudnnConvolutionDescriptor_t d;
    OCD_TRY(ocd_object_create(OCD_OBJ_CONVOLUTION, sizeof *d, (void **)&d));
    d->array_length = 2;
    for (int i = 0; i < OCD_CONV_MAX_ARRAY; i++) d->stride[i] = d->dilation[i] = 1;
    d->mode = CUDNN_CROSS_CORRELATION;
    d->compute = CUDNN_DATA_FLOAT;
    d->math = CUDNN_DEFAULT_MATH;
    d->groups = 1;
    d->reorder = CUDNN_DEFAULT_REORDER;
    *convDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc)
{
    OCD_LOG_API("convDesc=%p", (void *)convDesc);
    if (convDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_CONVOLUTION, convDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                                      cudnnMathType_t mathType)
{
    OCD_LOG_API("convDesc=%p mathType=%d", (void *)convDesc, (int)mathType);
    OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, convDesc);
    if (mathType != CUDNN_DEFAULT_MATH && mathType != CUDNN_TENSOR_OP_MATH &&
        mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && mathType != CUDNN_FMA_MATH)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid math type %d", (int)mathType);
    convDesc->math = mathType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                                      cudnnMathType_t *mathType)
{
    OCD_LOG_API("convDesc=%p", (void *)convDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, convDesc);
    if (mathType == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mathType is NULL");
    *mathType = convDesc->math;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc,
                                                        int groupCount)
{
    OCD_LOG_API("convDesc=%p groupCount=%d", (void *)convDesc, groupCount);
    OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, convDesc);
    if (groupCount < 1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "groupCount %d is below 1", groupCount);
    convDesc->groups = groupCount;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc,
                                                        int *groupCount)
{
    OCD_LOG_API("convDesc=%p", (void *)convDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, convDesc);
    if (groupCount == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "groupCount is NULL");
    *groupCount = convDesc->groups;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionReorderType(cudnnConvolutionDescriptor_t convDesc,
                                                         cudnnReorderType_t reorderType)
{
    OCD_LOG_API("convDesc=%p reorderType=%d", (void *)convDesc, (int)reorderType);
    OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, convDesc);
    if (reorderType != CUDNN_DEFAULT_REORDER && reorderType != CUDNN_NO_REORDER)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid reorder type %d", (int)reorderType);
    convDesc->reorder = reorderType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionReorderType(cudnnConvolutionDescriptor_t convDesc,
                                                         cudnnReorderType_t *reorderType)
{
    OCD_LOG_API("convDesc=%p", (void *)convDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, convDesc);
    if (reorderType == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "reorderType is NULL");
    *reorderType = convDesc->reorder;
    return CUDNN_STATUS_SUCCESS;
}

/* The compute types a convolution can declare (the configurations of the cuDNN 8.2 tables). */
static bool compute_type_valid(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF ||
           t == CUDNN_DATA_BFLOAT16 || t == CUDNN_DATA_INT32;
}

/* Validates and stores an N-d setting; nothing changes on failure. */
static cudnnStatus_t set_nd(cudnnConvolutionDescriptor_t d, int n, const int pad[],
                            const int stride[], const int dilation[], cudnnConvolutionMode_t mode,
                            cudnnDataType_t compute)
{
    if (n < 1 || n > OCD_CONV_MAX_ARRAY)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "arrayLength %d is outside [1, %d]", n, OCD_CONV_MAX_ARRAY);
    if (pad == NULL || stride == NULL || dilation == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "padA, filterStrideA or dilationA is NULL");
    for (int i = 0; i < n; i++) {
        if (pad[i] < 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "padding %d is negative (%d)", i, pad[i]);
        if (stride[i] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "stride %d is %d", i, stride[i]);
        if (dilation[i] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dilation %d is %d", i, dilation[i]);
    }
    if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid mode %d", (int)mode);
    if (!compute_type_valid(compute))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid compute type %d", (int)compute);
    d->array_length = n;
    for (int i = 0; i < n; i++) {
        d->pad[i] = pad[i];
        d->stride[i] = stride[i];
        d->dilation[i] = dilation[i];
    }
    d->mode = mode;
    d->compute = compute;
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                                          int pad_h, int pad_w, int u, int v,
                                                          int dilation_h, int dilation_w,
                                                          cudnnConvolutionMode_t mode,
                                                          cudnnDataType_t computeType)
{
    OCD_LOG_API("convDesc=%p pad=%d,%d stride=%d,%d dilation=%d,%d mode=%d computeType=%d",
                (void *)convDesc, pad_h, pad_w, u, v, dilation_h, dilation_w, (int)mode, (int)computeType);
    OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, convDesc);
    int pad[2] = {pad_h, pad_w}, stride[2] = {u, v}, dilation[2] = {dilation_h, dilation_w};
    return set_nd(convDesc, 2, pad, stride, dilation, mode, computeType);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolution2dDescriptor(const cudnnConvolutionDescriptor_t convDesc,
                                                          int *pad_h, int *pad_w, int *u, int *v,
                                                          int *dilation_h, int *dilation_w,
                                                          cudnnConvolutionMode_t *mode,
                                                          cudnnDataType_t *computeType)
{
    OCD_LOG_API("convDesc=%p", (void *)convDesc);
    OCD_TRY(ocd_conv_desc_get(convDesc, "convDesc"));
    if (convDesc->array_length != 2)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "convDesc has %d spatial dims, not 2", convDesc->array_length);
    if (!pad_h || !pad_w || !u || !v || !dilation_h || !dilation_w || !mode || !computeType)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *pad_h = convDesc->pad[0];
    *pad_w = convDesc->pad[1];
    *u = convDesc->stride[0];
    *v = convDesc->stride[1];
    *dilation_h = convDesc->dilation[0];
    *dilation_w = convDesc->dilation[1];
    *mode = convDesc->mode;
    *computeType = convDesc->compute;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                                          int arrayLength, const int padA[],
                                                          const int filterStrideA[],
                                                          const int dilationA[],
                                                          cudnnConvolutionMode_t mode,
                                                          cudnnDataType_t computeType)
{
    OCD_LOG_API("convDesc=%p arrayLength=%d mode=%d computeType=%d", (void *)convDesc, arrayLength,
                (int)mode, (int)computeType);
    OCD_CHECK_OBJECT(OCD_OBJ_CONVOLUTION, convDesc);
    return set_nd(convDesc, arrayLength, padA, filterStrideA, dilationA, mode, computeType);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t convDesc,
                                                          int arrayLengthRequested, int *arrayLength,
                                                          int padA[], int strideA[], int dilationA[],
                                                          cudnnConvolutionMode_t *mode,
                                                          cudnnDataType_t *computeType)
{
    OCD_LOG_API("convDesc=%p arrayLengthRequested=%d", (void *)convDesc, arrayLengthRequested);
    OCD_TRY(ocd_conv_desc_get(convDesc, "convDesc"));
    /* A request past the descriptor's length only promises room: the length's values are
       written, as the tensor and filter getters do (cudnn.torch asks for CUDNN_DIM_MAX). */
    if (arrayLengthRequested < 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "arrayLengthRequested %d is negative", arrayLengthRequested);
    if (arrayLengthRequested > OCD_CONV_MAX_ARRAY && (ocd_log_mask & CUDNN_SEV_INFO_EN))
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "arrayLengthRequested %d is past CUDNN_DIM_MAX - 2 (the 8.2 text: NOT_SUPPORTED); the "
                        "descriptor's %d values are written",
                        arrayLengthRequested, convDesc->array_length);
    if (!arrayLength || !mode || !computeType ||
        (arrayLengthRequested > 0 && (!padA || !strideA || !dilationA)))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *arrayLength = convDesc->array_length;
    for (int i = 0; i < OCD_MIN(arrayLengthRequested, convDesc->array_length); i++) {
        padA[i] = convDesc->pad[i];
        strideA[i] = convDesc->stride[i];
        dilationA[i] = convDesc->dilation[i];
    }
    *mode = convDesc->mode;
    *computeType = convDesc->compute;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- forward output dims ------------------------------------------------------------------------ */

cudnnStatus_t ocd_conv_output_dims(const struct cudnnConvolutionStruct *conv, const struct ocd_tensor_view *x,
                                   const struct ocd_tensor_view *w, int64_t out[])
{
    if (x->rank != w->rank)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the input has %d dims and the filter %d", x->rank, w->rank);
    if (x->rank < 3) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the input has %d dims, fewer than 3", x->rank);
    if (x->rank != conv->array_length + 2)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the input has %d dims but the convolution %d spatial dims",
                        x->rank, conv->array_length);
    if (x->dims[1] != w->dims[1] * conv->groups)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "the input has %lld channels; the filter has %lld per group x %d groups",
                        (long long)x->dims[1], (long long)w->dims[1], conv->groups);
    out[0] = x->dims[0];
    out[1] = w->dims[0];
    for (int i = 0; i < conv->array_length; i++) {
        int64_t padded = x->dims[i + 2] + 2 * (int64_t)conv->pad[i];
        int64_t span = (w->dims[i + 2] - 1) * (int64_t)conv->dilation[i] + 1;
        if (span > padded)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                            "spatial dim %d: the dilated filter (%lld) is larger than the padded input (%lld)",
                            i, (long long)span, (long long)padded);
        out[i + 2] = 1 + (padded - span) / conv->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                                const cudnnTensorDescriptor_t inputTensorDesc,
                                                                const cudnnFilterDescriptor_t filterDesc,
                                                                int *n, int *c, int *h, int *w)
{
    OCD_LOG_API("convDesc=%p inputTensorDesc=%p filterDesc=%p", (void *)convDesc, (void *)inputTensorDesc,
                (void *)filterDesc);
    struct ocd_tensor_view xv, wv;
    OCD_TRY(ocd_conv_desc_get(convDesc, "convDesc"));
    OCD_TRY(ocd_tensor_get(inputTensorDesc, "inputTensorDesc", &xv));
    OCD_TRY(ocd_filter_get(filterDesc, "filterDesc", &wv));
    if (!n || !c || !h || !w) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    if (xv.rank != 4) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "inputTensorDesc has %d dims, not 4", xv.rank);
    int64_t out[OCD_MAX_DIMS];
    OCD_TRY(ocd_conv_output_dims(convDesc, &xv, &wv, out));
    *n = (int)out[0];
    *c = (int)out[1];
    *h = (int)out[2];
    *w = (int)out[3];
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                                const cudnnTensorDescriptor_t inputTensorDesc,
                                                                const cudnnFilterDescriptor_t filterDesc,
                                                                int nbDims, int tensorOuputDimA[])
{
    OCD_LOG_API("convDesc=%p inputTensorDesc=%p filterDesc=%p nbDims=%d", (void *)convDesc,
                (void *)inputTensorDesc, (void *)filterDesc, nbDims);
    struct ocd_tensor_view xv, wv;
    OCD_TRY(ocd_conv_desc_get(convDesc, "convDesc"));
    OCD_TRY(ocd_tensor_get(inputTensorDesc, "inputTensorDesc", &xv));
    OCD_TRY(ocd_filter_get(filterDesc, "filterDesc", &wv));
    if (tensorOuputDimA == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "tensorOuputDimA is NULL");
    if (nbDims < 1 || nbDims > xv.rank)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims %d is outside [1, %d]", nbDims, xv.rank);
    int64_t out[OCD_MAX_DIMS];
    OCD_TRY(ocd_conv_output_dims(convDesc, &xv, &wv, out));
    for (int d = 0; d < nbDims; d++) tensorOuputDimA[d] = (int)out[d];
    return CUDNN_STATUS_SUCCESS;
}
