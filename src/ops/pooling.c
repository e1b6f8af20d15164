/* pooling.c: the pooling descriptor, the output-dimension queries, cudnnPoolingForward, and the
   implementation table both directions run through (cudnnPoolingBackward: pooling_train.c).

   cuDNN 8.2 rules implemented here: Set2d/SetNd return BAD_PARAM for an invalid mode or NaN
   option and for a window or stride that is not positive (the text names negative values; zero
   windows and strides have no meaning either); padding may be negative (it crops the input).
   Output dims are 1 + (in + 2 pad - window) / stride, N and C copied from the input; BAD_PARAM
   when the window does not fit the padded input. cudnnPoolingForward: BAD_PARAM when N or C or the
   data types of x and y differ. The 8.2 text also lists NOT_SUPPORTED for "the wStride of input
   tensor or output tensor is not 1"; opencudnn serves every legal layout instead (NHWC included,
   which the same documentation says all formats are), and the forward's x may lay elements over
   each other (NVIDIA's library reads such an x; cudarc's pooling test passes one). y may have
   any spatial extent: each output pools its own window; y overlapping x is BAD_PARAM, since an
   output written would be read again by the windows that cover it. Beyond the text,
   cudnnPoolingForward takes INT8 data (plain, any layout; y of x's type), the result rounded to
   nearest even after alpha and beta and saturated: MXNet's quantized pooling
   (quantized_pooling.cu) runs it on NVIDIA's library; and INT8x4 and INT8x32 in NCHW_VECT_C
   (MATLAB GPU Coder's int8 networks), pooled as plain int8 (pool_vectors_as_int8). The backward
   of integer data is NOT_SUPPORTED. */
#include "ops/pooling.h"

#include "core/argcheck.h"
#include "core/dtype.h"
#include "core/check.h"
#include "core/impl.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- the descriptor ------------------------------------------------------------------------- */

cudnnStatus_t ocd_pooling_get(cudnnPoolingDescriptor_t desc, const char *name, const struct cudnnPoolingStruct **out)
{
    if (!ocd_object_alive(OCD_OBJ_POOLING, desc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name, desc == NULL ? "NULL" : "not a live pooling descriptor");
    if (!desc->set) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s was never set", name);
    *out = desc;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t *poolingDesc)
{
    OCD_LOG_API("poolingDesc=%p", (void *)poolingDesc);
    return ocd_object_create(OCD_OBJ_POOLING, sizeof(struct cudnnPoolingStruct), (void **)poolingDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t poolingDesc)
{
    OCD_LOG_API("poolingDesc=%p", (void *)poolingDesc);
    if (poolingDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_POOLING, poolingDesc);
}

/* Validates and stores a setting; nothing changes on failure. */
static cudnnStatus_t set_pooling(cudnnPoolingDescriptor_t d, cudnnPoolingMode_t mode, cudnnNanPropagation_t nan,
                                 int nb_dims, const int window[], const int pad[], const int stride[])
{
    OCD_CHECK_OBJECT(OCD_OBJ_POOLING, d);
    if ((unsigned)mode > CUDNN_POOLING_MAX_DETERMINISTIC)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mode %d is not a cudnnPoolingMode_t", (int)mode);
    if (nan != CUDNN_NOT_PROPAGATE_NAN && nan != CUDNN_PROPAGATE_NAN)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "maxpoolingNanOpt %d is not a cudnnNanPropagation_t", (int)nan);
    if (nb_dims < 1 || nb_dims > OCD_POOL_MAX_DIMS)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDims %d is not in [1, %d]", nb_dims, OCD_POOL_MAX_DIMS);
    if (window == NULL || pad == NULL || stride == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "windowDimA, paddingA or strideA is NULL");
    for (int i = 0; i < nb_dims; i++) {
        if (window[i] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "window %d is %d", i, window[i]);
        if (stride[i] <= 0) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "stride %d is %d", i, stride[i]);
    }
    d->mode = mode;
    d->nan_opt = nan;
    d->nb_dims = nb_dims;
    memcpy(d->window, window, sizeof(int) * (size_t)nb_dims);
    memcpy(d->pad, pad, sizeof(int) * (size_t)nb_dims);
    memcpy(d->stride, stride, sizeof(int) * (size_t)nb_dims);
    d->set = true;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t poolingDesc, cudnnPoolingMode_t mode,
                                                      cudnnNanPropagation_t maxpoolingNanOpt, int windowHeight,
                                                      int windowWidth, int verticalPadding, int horizontalPadding,
                                                      int verticalStride, int horizontalStride)
{
    OCD_LOG_API("poolingDesc=%p mode=%d maxpoolingNanOpt=%d window=%dx%d padding=%d,%d stride=%d,%d",
                (void *)poolingDesc, (int)mode, (int)maxpoolingNanOpt, windowHeight, windowWidth, verticalPadding,
                horizontalPadding, verticalStride, horizontalStride);
    const int window[2] = {windowHeight, windowWidth}, pad[2] = {verticalPadding, horizontalPadding},
              stride[2] = {verticalStride, horizontalStride};
    return set_pooling(poolingDesc, mode, maxpoolingNanOpt, 2, window, pad, stride);
}

cudnnStatus_t CUDNNWINAPI cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t poolingDesc, const cudnnPoolingMode_t mode,
                                                      const cudnnNanPropagation_t maxpoolingNanOpt, int nbDims,
                                                      const int windowDimA[], const int paddingA[],
                                                      const int strideA[])
{
    OCD_LOG_API("poolingDesc=%p mode=%d maxpoolingNanOpt=%d nbDims=%d", (void *)poolingDesc, (int)mode,
                (int)maxpoolingNanOpt, nbDims);
    return set_pooling(poolingDesc, mode, maxpoolingNanOpt, nbDims, windowDimA, paddingA, strideA);
}

cudnnStatus_t CUDNNWINAPI cudnnGetPooling2dDescriptor(const cudnnPoolingDescriptor_t poolingDesc,
                                                      cudnnPoolingMode_t *mode, cudnnNanPropagation_t *maxpoolingNanOpt,
                                                      int *windowHeight, int *windowWidth, int *verticalPadding,
                                                      int *horizontalPadding, int *verticalStride,
                                                      int *horizontalStride)
{
    OCD_LOG_API("poolingDesc=%p", (void *)poolingDesc);
    const struct cudnnPoolingStruct *d;
    OCD_TRY(ocd_pooling_get(poolingDesc, "poolingDesc", &d));
    if (d->nb_dims != 2) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "poolingDesc has %d spatial dims, not 2", d->nb_dims);
    int *out[6] = {windowHeight, windowWidth, verticalPadding, horizontalPadding, verticalStride, horizontalStride};
    if (mode == NULL || maxpoolingNanOpt == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mode or maxpoolingNanOpt is NULL");
    for (int i = 0; i < 6; i++)
        if (out[i] == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "output %d is NULL", i);
    *mode = d->mode;
    *maxpoolingNanOpt = d->nan_opt;
    for (int i = 0; i < 2; i++) {
        *out[i] = d->window[i];
        *out[2 + i] = d->pad[i];
        *out[4 + i] = d->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetPoolingNdDescriptor(const cudnnPoolingDescriptor_t poolingDesc, int nbDimsRequested,
                                                      cudnnPoolingMode_t *mode, cudnnNanPropagation_t *maxpoolingNanOpt,
                                                      int *nbDims, int windowDimA[], int paddingA[], int strideA[])
{
    OCD_LOG_API("poolingDesc=%p nbDimsRequested=%d", (void *)poolingDesc, nbDimsRequested);
    const struct cudnnPoolingStruct *d;
    OCD_TRY(ocd_pooling_get(poolingDesc, "poolingDesc", &d));
    if (nbDimsRequested < 0 || nbDimsRequested > CUDNN_DIM_MAX)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "nbDimsRequested %d is not in [0, CUDNN_DIM_MAX]", nbDimsRequested);
    if (mode == NULL || maxpoolingNanOpt == NULL || nbDims == NULL ||
        (nbDimsRequested > 0 && (windowDimA == NULL || paddingA == NULL || strideA == NULL)))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *mode = d->mode;
    *maxpoolingNanOpt = d->nan_opt;
    *nbDims = d->nb_dims;
    for (int i = 0; i < OCD_MIN(nbDimsRequested, d->nb_dims); i++) {
        windowDimA[i] = d->window[i];
        paddingA[i] = d->pad[i];
        strideA[i] = d->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- output dims -------------------------------------------------------------------------------- */

/* The output dims for input view x (rank nb_dims + 2, checked by the caller). */
static cudnnStatus_t output_dims(const struct cudnnPoolingStruct *d, const struct ocd_tensor_view *x, int out[])
{
    out[0] = (int)x->dims[0];
    out[1] = (int)x->dims[1];
    for (int i = 0; i < d->nb_dims; i++) {
        int64_t room = x->dims[2 + i] + 2 * (int64_t)d->pad[i] - d->window[i];
        if (room < 0)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "window %d (%d) does not fit the padded input (%lld + 2 * %d)", i,
                            d->window[i], (long long)x->dims[2 + i], d->pad[i]);
        out[2 + i] = (int)(1 + room / d->stride[i]);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetPoolingNdForwardOutputDim(const cudnnPoolingDescriptor_t poolingDesc,
                                                            const cudnnTensorDescriptor_t inputTensorDesc, int nbDims,
                                                            int outputTensorDimA[])
{
    OCD_LOG_API("poolingDesc=%p inputTensorDesc=%p nbDims=%d", (void *)poolingDesc, (void *)inputTensorDesc, nbDims);
    const struct cudnnPoolingStruct *d;
    OCD_TRY(ocd_pooling_get(poolingDesc, "poolingDesc", &d));
    struct ocd_tensor_view x;
    OCD_TRY(ocd_tensor_get_taking(inputTensorDesc, "inputTensorDesc", OCD_TAKES_SHARED | OCD_TAKES_REVERSED, &x));
    if (nbDims != d->nb_dims + 2 || x.rank != nbDims)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "nbDims %d is inconsistent with poolingDesc (%d spatial dims) and inputTensorDesc (rank %d)",
                        nbDims, d->nb_dims, x.rank);
    if (outputTensorDimA == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "outputTensorDimA is NULL");
    int out[OCD_MAX_DIMS];
    OCD_TRY(output_dims(d, &x, out));
    memcpy(outputTensorDimA, out, sizeof(int) * (size_t)nbDims);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetPooling2dForwardOutputDim(const cudnnPoolingDescriptor_t poolingDesc,
                                                            const cudnnTensorDescriptor_t inputTensorDesc, int *n,
                                                            int *c, int *h, int *w)
{
    OCD_LOG_API("poolingDesc=%p inputTensorDesc=%p", (void *)poolingDesc, (void *)inputTensorDesc);
    const struct cudnnPoolingStruct *d;
    OCD_TRY(ocd_pooling_get(poolingDesc, "poolingDesc", &d));
    struct ocd_tensor_view x;
    OCD_TRY(ocd_tensor_get_taking(inputTensorDesc, "inputTensorDesc", OCD_TAKES_SHARED | OCD_TAKES_REVERSED, &x));
    if (d->nb_dims != 2 || x.rank != 4)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "poolingDesc has %d spatial dims and inputTensorDesc %d dims, not 2 and 4",
                        d->nb_dims, x.rank);
    if (n == NULL || c == NULL || h == NULL || w == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    int out[4];
    OCD_TRY(output_dims(d, &x, out));
    *n = out[0];
    *c = out[1];
    *h = out[2];
    *w = out[3];
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the problem and the implementation table ------------------------------------------------- */

/* Strides [n, c, d, h, w] of a view of rank nb + 2, leading spatial dims of extent 1 added. */
static void strides5(const struct ocd_tensor_view *v, int64_t s[5])
{
    s[0] = v->strides[0];
    s[1] = v->strides[1];
    int nb = v->rank - 2;
    for (int i = 0; i < OCD_POOL_DIMS; i++) s[2 + i] = i < OCD_POOL_DIMS - nb ? 0 : v->strides[2 + i - (OCD_POOL_DIMS - nb)];
}

/* Pooling never mixes channels, so NCHW_VECT_C int8 pools as plain int8: each image's C/vect
   vectors become images of their own and each vector's lanes its channels (stride 1). That needs
   an image's vectors to follow each other as its images do (the image stride C/vect times the
   vector stride, or one image), in x and in y; NOT_SUPPORTED otherwise. */
static cudnnStatus_t pool_vectors_as_int8(struct ocd_pooling_problem *p, const struct ocd_tensor_view *x,
                                          const struct ocd_tensor_view *y)
{
    const int64_t vectors = x->dims[1] / x->vect;
    const struct ocd_tensor_view *v[2] = {x, y};
    for (int i = 0; i < 2; i++)
        if (v[i]->dims[0] > 1 && v[i]->strides[0] != v[i]->strides[1] * vectors)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the %s's images do not follow their vectors' stride",
                            i ? "output" : "input");
    p->dtype = CUDNN_DATA_INT8;
    p->n *= vectors;
    p->c = x->vect;
    p->xs[0] = x->strides[1], p->ys[0] = y->strides[1];
    p->xs[1] = p->ys[1] = 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_pooling_prepare(struct ocd_pooling_problem *p, const struct cudnnPoolingStruct *d,
                                  const struct ocd_tensor_view *x, const struct ocd_tensor_view *y,
                                  const void *alpha, const void *beta)
{
    if (x->rank != d->nb_dims + 2 || y->rank != d->nb_dims + 2)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the tensors have ranks %d and %d; poolingDesc has %d spatial dims",
                        x->rank, y->rank, d->nb_dims);
    if (x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "N and C of the input (%lld, %lld) and output (%lld, %lld) differ",
                        (long long)x->dims[0], (long long)x->dims[1], (long long)y->dims[0], (long long)y->dims[1]);
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_BAD_PARAM, x, "the input", y, "the output"));
    if (d->nb_dims > OCD_POOL_DIMS)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "pooling over %d spatial dims; at most %d are supported", d->nb_dims,
                        OCD_POOL_DIMS);
    /* int8 pools too, forward only (the backward checks for floating-point data itself): plain,
       any layout (MXNet's quantized pooling makes the call on NVIDIA's library), and in vectors of
       4 or 32 in NCHW_VECT_C (GPU Coder's int8 networks) */
    bool vectors = x->dtype == CUDNN_DATA_INT8x4 || x->dtype == CUDNN_DATA_INT8x32;
    if (!(x->dtype == CUDNN_DATA_INT8 || vectors)) OCD_TRY(ocd_check_float_type(x, "the input"));
    memset(p, 0, sizeof *p);
    p->mode = d->mode;
    p->propagate_nan = d->nan_opt == CUDNN_PROPAGATE_NAN;
    p->dtype = x->dtype;
    p->alpha = ocd_scaling_value(p->dtype, alpha);
    p->beta = ocd_scaling_value(p->dtype, beta);
    p->n = x->dims[0];
    p->c = x->dims[1];
    int lead = OCD_POOL_DIMS - d->nb_dims;
    for (int i = 0; i < OCD_POOL_DIMS; i++) {
        bool real = i >= lead;
        p->in[i] = real ? x->dims[2 + i - lead] : 1;
        p->out[i] = real ? y->dims[2 + i - lead] : 1;
        p->window[i] = real ? d->window[i - lead] : 1;
        p->pad[i] = real ? d->pad[i - lead] : 0;
        p->stride[i] = real ? d->stride[i - lead] : 1;
    }
    strides5(x, p->xs);
    strides5(y, p->ys);
    if (vectors) OCD_TRY(pool_vectors_as_int8(p, x, y));
    return CUDNN_STATUS_SUCCESS;
}

static const struct ocd_impl pooling_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:pooling_fixed_nhwc_vec16", OCD_BACKEND_CUDA, ocd_cuda_pooling_fixed_nhwc_applies, NULL,
                   ocd_cuda_pooling_fixed_nhwc),
    OCD_IMPL_ENTRY("cuda:pooling_fixed_nchw", OCD_BACKEND_CUDA, ocd_cuda_pooling_fixed_nchw_applies, NULL,
                   ocd_cuda_pooling_fixed_nchw),
    {"cuda:pooling_tile_nhwc_vec16", OCD_BACKEND_CUDA, 0, NULL, NULL, NULL, &ocd_cuda_pooling_tile_nhwc_planned},
    {"cuda:pooling_tile_nchw", OCD_BACKEND_CUDA, 0, NULL, NULL, NULL, &ocd_cuda_pooling_tile_nchw_planned},
    OCD_IMPL_ENTRY("cuda:pooling_nhwc_vec16", OCD_BACKEND_CUDA, ocd_cuda_pooling_nhwc_vec_applies, NULL,
                   ocd_cuda_pooling_nhwc_vec),
    OCD_IMPL_ENTRY("cuda:pooling_direct", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_pooling),
#endif
    OCD_IMPL_ENTRY("host:pooling_direct", OCD_BACKEND_HOST, NULL, NULL, ocd_host_pooling),
};

cudnnStatus_t ocd_pooling_run(cudnnHandle_t handle, const struct ocd_pooling_problem *p, const char *op)
{
    return ocd_impl_run(handle, pooling_impls, OCD_ARRAY_LEN(pooling_impls), p, op);
}

cudnnStatus_t ocd_pooling_run_checked(cudnnHandle_t handle, const struct ocd_pooling_problem *p, const char *op,
                                      const struct ocd_tensor_view *x, const struct ocd_tensor_view *y,
                                      const struct cudnnPoolingStruct *desc)
{
    if (!ocd_check_enabled()) return ocd_pooling_run(handle, p, op);
    struct ocd_check_call call = {.op = op, .problem_size = sizeof *p};
    ocd_check_add(&call, offsetof(struct ocd_pooling_problem, x), x, false);
    if (p->backward) {
        ocd_check_add(&call, offsetof(struct ocd_pooling_problem, dy), y, false);
        ocd_check_add(&call, offsetof(struct ocd_pooling_problem, dx), x, true);
    } else {
        ocd_check_add(&call, offsetof(struct ocd_pooling_problem, y), y, true);
    }
    /* the benchmark takes square 2-D windows, max or average excluding padding */
    char spec[96];
    ocd_check_tensor_spec(x, spec, sizeof spec);
    bool max = desc->mode == CUDNN_POOLING_MAX || desc->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    snprintf(call.replay, sizeof call.replay, "op=%s mode=%s dt=%s x=%s win=%d pad=%d stride=%d",
             p->backward ? "poolbwd" : "poolfwd", max ? "max" : "avg", ocd_check_dtype_name(x->dtype), spec,
             desc->window[0], desc->pad[0], desc->stride[0]);
    return ocd_impl_run_checked(handle, pooling_impls, OCD_ARRAY_LEN(pooling_impls), p, &call);
}

/* ---- forward ---------------------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                              const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                              const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    OCD_LOG_API("handle=%p poolingDesc=%p alpha=%p xDesc=%p x=%p beta=%p yDesc=%p y=%p", (void *)handle,
                (void *)poolingDesc, alpha, (void *)xDesc, x, beta, (void *)yDesc, y);
    OCD_CHECK_HANDLE(handle);
    const struct cudnnPoolingStruct *d;
    OCD_TRY(ocd_pooling_get(poolingDesc, "poolingDesc", &d));
    OCD_TRY(ocd_check_scaling(alpha, beta));
    struct ocd_tensor_view xv, yv;
    OCD_TRY(ocd_tensor_get_input(xDesc, "xDesc", &xv)); /* read through its strides, whatever they are */
    OCD_TRY(ocd_tensor_get(yDesc, "yDesc", &yv));
    OCD_TRY(ocd_check_data(x, "x"));
    OCD_TRY(ocd_check_data(y, "y"));
    OCD_TRY(ocd_check_alias(y, &yv, "y", x, &xv, "x", OCD_READ_MANY));
    struct ocd_pooling_problem p;
    OCD_TRY(ocd_pooling_prepare(&p, d, &xv, &yv, alpha, beta));
    p.x = x;
    p.y = y;
    return ocd_pooling_run_checked(handle, &p, __func__, &xv, &yv, d);
}
