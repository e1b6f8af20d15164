/* graph_problem.c: the problems of the library's existing operations, built from a finalized
   graph operation, so that an engine runs a graph op through the same validated problem (and
   kernels) as the legacy API.

   A convolution op becomes the legacy descriptors it is equivalent to (tensors with the op's
   strides, a filter in the packed format its strides spell, a convolution descriptor with the
   group count the channel counts imply) and goes through ocd_conv_problem_of, whose checks and
   shape derivation are the legacy API's. A convolution padded differently before and after
   (CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS != POST_PADDINGS: OpenVINO's NVIDIA plugin sends ONNX's
   pads so) becomes the unpadded convolution of the zero-padded x (or dx); the plan pads x into
   its workspace first (forward, filter gradient), or crops dx out of it after (data gradient). */
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

bool ocd_graph_conv_asymmetric(const struct ocd_graph_conv_desc *c)
{
    for (int64_t i = 0; i < c->nsp; i++)
        if (c->pre[i] != c->post[i]) return true;
    return false;
}

/* x (or dx) as the zero-padded tensor an asymmetrically padded convolution runs on: every spatial
   extent grown by its pre and post padding, packed in x's own order (channels last when x's
   channel stride is 1, else NCHW). */
static cudnnStatus_t padded_tensor(const struct ocd_graph_conv_desc *c, struct cudnnTensorStruct *x)
{
    const int rank = x->nb_dims;
    int64_t dims[OCD_MAX_DIMS] = {0};
    if (rank < 3 || rank > OCD_MAX_DIMS) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "a padded tensor of rank %d", rank);
    for (int d = 0; d < rank; d++) dims[d] = x->dims[d] + (d >= 2 ? c->pre[d - 2] + c->post[d - 2] : 0);
    const bool last = x->strides[1] == 1 && x->dims[1] > 1;
    int order[OCD_MAX_DIMS], n = 0; /* innermost first */
    if (last) order[n++] = 1;
    for (int d = rank - 1; d >= 2; d--) order[n++] = d;
    if (!last) order[n++] = 1;
    order[n++] = 0;
    int64_t st = 1; /* at most INT_MAX, and each dim below 2^32 (the caller bounds the paddings) */
    for (int i = 0; i < n; i++) {
        const int d = order[i];
        x->strides[d] = (int)st;
        if (dims[d] > INT_MAX / st)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the zero-padded input exceeds INT_MAX elements");
        st *= dims[d];
    }
    for (int d = 0; d < rank; d++) x->dims[d] = (int)dims[d];
    return CUDNN_STATUS_SUCCESS;
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
    const bool asym = ocd_graph_conv_asymmetric(c);
    if (asym && op->t[OCD_GT_CONV_X].vect_count > 1)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "a vectorized tensor padded differently before and after");
    for (int64_t i = 0; i < c->nsp; i++) { /* the sum fits: the op's finalize bounded x + pre + post */
        if (c->pre[i] + c->post[i] > INT_MAX || c->stride[i] > INT_MAX || c->dilation[i] > INT_MAX)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "spatial dim %lld: a padding, stride or dilation exceeds INT_MAX",
                            (long long)i);
        conv.pad[i] = asym ? 0 : (int)c->pre[i];
        conv.stride[i] = (int)c->stride[i];
        conv.dilation[i] = (int)c->dilation[i];
    }
    if (asym) OCD_TRY(padded_tensor(c, &x));
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
