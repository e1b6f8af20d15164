/* conv_train.c: the convolution API of cnn_train: backward filter with its algorithm queries, and
   backward bias.

   Main decision: the filter gradient goes through the same validation, registry and query
   machinery as the other directions (ocd_conv_*, exported by cnn_infer); only the argument
   naming differs (x is the forward input, dy the gradient of the forward output, dw written). */
#include "cnn/conv.h"

#include "core/dtype.h"

#include <string.h>

static cudnnStatus_t bwd_filter_problem(struct ocd_conv_problem *p, cudnnTensorDescriptor_t xDesc,
                                        cudnnTensorDescriptor_t dyDesc, cudnnConvolutionDescriptor_t convDesc,
                                        cudnnFilterDescriptor_t dwDesc)
{
    return ocd_conv_problem_init(p, OCD_CONV_BWD_FILTER, xDesc, "xDesc", dwDesc, "dwDesc", convDesc, dyDesc,
                                 "dyDesc");
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    OCD_LOG_API("handle=%p count=%p", (void *)handle, (void *)count);
    return ocd_conv_max_count(handle, count, OCD_CONV_BWD_FILTER);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    OCD_LOG_API("handle=%p srcDesc=%p diffDesc=%p convDesc=%p gradDesc=%p requestedAlgoCount=%d", (void *)handle,
                (void *)srcDesc, (void *)diffDesc, (void *)convDesc, (void *)gradDesc, requestedAlgoCount);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(bwd_filter_problem(&p, srcDesc, diffDesc, convDesc, gradDesc));
    return ocd_conv_get_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    OCD_LOG_API("handle=%p xDesc=%p dyDesc=%p convDesc=%p dwDesc=%p requestedAlgoCount=%d", (void *)handle,
                (void *)xDesc, (void *)dyDesc, (void *)convDesc, (void *)dwDesc, requestedAlgoCount);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(bwd_filter_problem(&p, xDesc, dyDesc, convDesc, dwDesc));
    return ocd_conv_find_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults, false, NULL, 0,
                                    __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t dyDesc,
    const void *y, const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, void *dw,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults,
    void *workSpace, size_t workSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p xDesc=%p x=%p dyDesc=%p y=%p convDesc=%p dwDesc=%p dw=%p requestedAlgoCount=%d "
                "workSpace=%p workSpaceSizeInBytes=%zu",
                (void *)handle, (void *)xDesc, x, (void *)dyDesc, y, (void *)convDesc, (void *)dwDesc, dw,
                requestedAlgoCount, workSpace, workSpaceSizeInBytes);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(bwd_filter_problem(&p, xDesc, dyDesc, convDesc, dwDesc));
    if (x == NULL || y == NULL || dw == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x, y (dy) or dw is NULL");
    p.x_data = (void *)x, p.y_data = (void *)y, p.w_data = dw;
    return ocd_conv_find_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults, true, workSpace, workSpaceSizeInBytes,
                                    __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p xDesc=%p dyDesc=%p convDesc=%p gradDesc=%p algo=%d", (void *)handle, (void *)xDesc,
                (void *)dyDesc, (void *)convDesc, (void *)gradDesc, (int)algo);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_problem p;
    OCD_TRY(bwd_filter_problem(&p, xDesc, dyDesc, convDesc, gradDesc));
    if (sizeInBytes == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    return ocd_conv_workspace_query(handle, &p, (int)algo, sizeInBytes, __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                                         const cudnnTensorDescriptor_t xDesc, const void *x,
                                                         const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                         const cudnnConvolutionDescriptor_t convDesc,
                                                         cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                                                         size_t workSpaceSizeInBytes, const void *beta,
                                                         const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    OCD_LOG_API("handle=%p xDesc=%p x=%p dyDesc=%p dy=%p convDesc=%p algo=%d workSpace=%p "
                "workSpaceSizeInBytes=%zu dwDesc=%p dw=%p",
                (void *)handle, (void *)xDesc, x, (void *)dyDesc, dy, (void *)convDesc, (int)algo, workSpace,
                workSpaceSizeInBytes, (void *)dwDesc, dw);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_problem p;
    OCD_TRY(bwd_filter_problem(&p, xDesc, dyDesc, convDesc, dwDesc));
    if (x == NULL || dy == NULL || dw == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x, dy or dw is NULL");
    OCD_TRY(ocd_conv_set_scaling(&p, alpha, beta));
    p.x_data = (void *)x, p.y_data = (void *)dy, p.w_data = dw;
    return ocd_conv_execute(handle, &p, (int)algo, workSpace, workSpaceSizeInBytes, __func__);
}

/* db = alpha * (sum of dy over everything but the channel) + beta * db. db is 1 x C x 1 x 1
   (x 1) of dy's type: other shapes, channel counts or types are BAD_PARAM, as documented. */
cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void *alpha,
                                                       const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                       const void *beta, const cudnnTensorDescriptor_t dbDesc,
                                                       void *db)
{
    OCD_LOG_API("handle=%p dyDesc=%p dy=%p dbDesc=%p db=%p", (void *)handle, (void *)dyDesc, dy, (void *)dbDesc, db);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_bias_problem p;
    OCD_TRY(ocd_tensor_get(dyDesc, "dyDesc", &p.dy));
    OCD_TRY(ocd_tensor_get(dbDesc, "dbDesc", &p.db));
    if (dy == NULL || db == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dy or db is NULL");
    if (alpha == NULL || beta == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "alpha or beta is NULL");
    if (p.dy.rank < 3 || p.db.rank != p.dy.rank)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dyDesc has %d dims and dbDesc %d", p.dy.rank, p.db.rank);
    for (int d = 0; d < p.db.rank; d++)
        if (d != 1 && p.db.dims[d] != 1)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dbDesc dim %d is %lld, not 1", d, (long long)p.db.dims[d]);
    if (p.db.dims[1] != p.dy.dims[1])
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dbDesc has %lld channels, dyDesc %lld", (long long)p.db.dims[1],
                        (long long)p.dy.dims[1]);
    if (p.db.dtype != p.dy.dtype) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dbDesc and dyDesc types differ");
    cudnnDataType_t t = p.dy.dtype;
    if (t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_DOUBLE && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the bias gradient of %s data is not supported", ocd_dtype_name(t));
    p.dy_data = dy;
    p.db_data = db;
    p.sq_data = NULL;
    p.alpha = ocd_scaling_value(t, alpha);
    p.beta = ocd_scaling_value(t, beta);
    return ocd_impl_run(handle, ocd_conv_bias_grad_impls, ocd_conv_bias_grad_impl_count, &p, __func__);
}
