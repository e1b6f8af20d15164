/* graph_problem.c: the problems of the library's existing operations, built from a finalized
   graph operation, so that an engine runs a graph op through the same validated problem (and
   kernels) as the legacy API.

   A convolution op becomes the legacy descriptors it is equivalent to (tensors with the op's
   strides, a filter in the packed format its strides spell, a convolution descriptor with the
   group count the channel counts imply) and goes through ocd_conv_problem_of, whose checks and
   shape derivation are the legacy API's. */
#include "graph/graph.h"

#include "cnn/conv.h"

#include <limits.h>
#include <string.h>

/* The legacy tensor descriptor of a graph tensor: dims in scalars, strides in elements. */
static cudnnStatus_t legacy_tensor(const struct ocd_graph_tensor *t, struct cudnnTensorStruct *out)
{
    struct ocd_tensor_view v;
    OCD_TRY(ocd_graph_tensor_view(t, &v));
    memset(out, 0, sizeof *out);
    out->obj.kind = OCD_OBJ_TENSOR;
    out->set = true;
    out->dtype = v.dtype;
    out->format = CUDNN_TENSOR_NCHW;
    out->nb_dims = v.rank;
    for (int i = 0; i < v.rank; i++) {
        if (v.dims[i] > INT_MAX || t->strides[i] > INT_MAX)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "tensor %lld: dimension %d or its stride exceeds INT_MAX",
                            (long long)t->uid, i);
        out->dims[i] = (int)v.dims[i];
        out->strides[i] = (int)t->strides[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* The legacy filter of a graph tensor whose strides are a packed NCHW, NHWC or NCHW_VECT_C. */
static cudnnStatus_t legacy_filter(const struct ocd_graph_tensor *t, struct cudnnFilterStruct *out)
{
    struct cudnnTensorStruct as_tensor;
    OCD_TRY(legacy_tensor(t, &as_tensor));
    memset(out, 0, sizeof *out);
    out->obj.kind = OCD_OBJ_FILTER;
    out->set = true;
    out->dtype = as_tensor.dtype;
    out->nb_dims = as_tensor.nb_dims;
    memcpy(out->dims, as_tensor.dims, sizeof out->dims);
    static const cudnnTensorFormat_t formats[] = {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_NCHW_VECT_C};
    for (size_t f = 0; f < OCD_ARRAY_LEN(formats); f++) {
        if ((formats[f] == CUDNN_TENSOR_NCHW_VECT_C) != (t->vect_count > 1)) continue;
        int strides[OCD_MAX_DIMS];
        ocd_packed_strides(formats[f], out->nb_dims, out->dims, (int)t->vect_count, strides);
        if (memcmp(strides, as_tensor.strides, (size_t)out->nb_dims * sizeof strides[0]) == 0) {
            out->format = formats[f];
            return CUDNN_STATUS_SUCCESS;
        }
    }
    return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "filter %lld is not packed NCHW, NHWC or NCHW_VECT_C",
                    (long long)t->uid);
}

cudnnStatus_t ocd_graph_conv_problem(const struct ocd_graph_op *op, struct ocd_conv_problem *p)
{
    static const enum ocd_conv_dir dirs[] = {
        [CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR] = OCD_CONV_FWD,
        [CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR] = OCD_CONV_BWD_FILTER,
        [CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR] = OCD_CONV_BWD_DATA,
    };
    if (op->kind < CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR ||
        op->kind > CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "a %s operation is not a convolution", ocd_graph_op_name(op->kind));
    const struct ocd_graph_conv_desc *c = &op->p.conv;
    struct cudnnTensorStruct x, y;
    struct cudnnFilterStruct w;
    struct cudnnConvolutionStruct conv;
    OCD_TRY(legacy_tensor(&op->t[OCD_GT_CONV_X], &x));
    OCD_TRY(legacy_tensor(&op->t[OCD_GT_CONV_Y], &y));
    OCD_TRY(legacy_filter(&op->t[OCD_GT_CONV_W], &w));
    memset(&conv, 0, sizeof conv);
    conv.obj.kind = OCD_OBJ_CONVOLUTION;
    conv.set = true;
    conv.array_length = (int)c->nsp;
    for (int64_t i = 0; i < c->nsp; i++) {
        if (c->pre[i] != c->post[i])
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "spatial dim %lld is padded %lld before and %lld after",
                            (long long)i, (long long)c->pre[i], (long long)c->post[i]);
        if (c->pre[i] > INT_MAX || c->stride[i] > INT_MAX || c->dilation[i] > INT_MAX)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "spatial dim %lld: a padding, stride or dilation exceeds INT_MAX",
                            (long long)i);
        conv.pad[i] = (int)c->pre[i];
        conv.stride[i] = (int)c->stride[i];
        conv.dilation[i] = (int)c->dilation[i];
    }
    conv.mode = c->mode;
    conv.compute = c->comp;
    conv.math = CUDNN_DEFAULT_MATH;
    conv.groups = (int)(x.dims[1] / w.dims[1]);
    conv.reorder = CUDNN_DEFAULT_REORDER;
    OCD_TRY(ocd_conv_problem_of(p, dirs[op->kind], &x, "x", &w, "w", &conv, &y, "y"));
    p->alpha = op->alpha;
    p->beta = op->beta;
    return CUDNN_STATUS_SUCCESS;
}
