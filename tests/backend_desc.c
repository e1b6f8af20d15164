/* backend_desc.c: tests of the backend API's descriptor layer (src/graph/backend_*.c): every
   descriptor kind's attribute rules (set, get, count-only get, get before and after finalize,
   wrong attribute type, wrong element count, set after finalize), finalize validation of
   tensors, parameter descriptors, operations and operation graphs (mismatched shapes, dangling
   virtual tensors, tensors without a unique id, one id for two tensors), the engine-side
   descriptors as far as the descriptor layer owns them, and bad pointers. Statuses follow the
   cuDNN 8.2 reference (../shared/api/backend-8.2.md section 2.1). */
#include "test.h"

#include <cudnn_backend.h>
#include <float.h>
#include <string.h>

typedef cudnnBackendDescriptor_t bdesc;

static bdesc mk(cudnnBackendDescriptorType_t kind)
{
    bdesc d = NULL;
    CHECK_OK(cudnnBackendCreateDescriptor(kind, &d));
    return d;
}

static cudnnStatus_t set_i64(bdesc d, cudnnBackendAttributeName_t name, int64_t n, const int64_t *v)
{
    return cudnnBackendSetAttribute(d, name, CUDNN_TYPE_INT64, n, v);
}

static cudnnStatus_t set_one(bdesc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                             const void *v)
{
    return cudnnBackendSetAttribute(d, name, type, 1, v);
}

static cudnnStatus_t set_desc(bdesc d, cudnnBackendAttributeName_t name, bdesc v)
{
    return cudnnBackendSetAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

/* A tensor of float with packed row-major strides, not finalized. */
static bdesc tensor_unfinalized(int64_t uid, int rank, const int64_t *dims, bool is_virtual)
{
    bdesc t = mk(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t strides[8], align = 4;
    strides[rank - 1] = 1;
    for (int i = rank - 2; i >= 0; i--) strides[i] = strides[i + 1] * dims[i + 1];
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    CHECK_OK(set_one(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_DIMENSIONS, rank, dims));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_STRIDES, rank, strides));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, 1, &uid));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 1, &align));
    if (is_virtual) CHECK_OK(set_one(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual));
    return t;
}

static bdesc tensor(int64_t uid, int rank, const int64_t *dims, bool is_virtual)
{
    bdesc t = tensor_unfinalized(uid, rank, dims, is_virtual);
    CHECK_OK(cudnnBackendFinalize(t));
    return t;
}

#define T4(uid, a, b, c, d, virt) tensor((uid), 4, (const int64_t[]){(a), (b), (c), (d)}, (virt))

/* A finalized 2-D cross-correlation of the given paddings and dilations, stride 1. */
static bdesc conv_desc_of(const int64_t pre[2], const int64_t post[2], const int64_t dilation[2])
{
    bdesc c = mk(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t nsp = 2, ones[2] = {1, 1};
    CHECK_OK(set_one(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp));
    CHECK_OK(set_one(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 1, &nsp));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 2, pre));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, 2, post));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, 2, dilation));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 2, ones));
    CHECK_OK(cudnnBackendFinalize(c));
    return c;
}

/* A finalized 2-D cross-correlation with the given symmetric padding, stride 1. */
static bdesc conv_desc(int64_t pad)
{
    const int64_t pads[2] = {pad, pad}, ones[2] = {1, 1};
    return conv_desc_of(pads, pads, ones);
}

/* A forward convolution op of x, w, y (not finalized), alpha 1 beta 0 as FLOAT. */
static bdesc conv_op(bdesc x, bdesc w, bdesc y, bdesc conv)
{
    bdesc op = mk(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    float alpha = 1, beta = 0;
    CHECK_OK(set_desc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x));
    CHECK_OK(set_desc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w));
    CHECK_OK(set_desc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y));
    CHECK_OK(set_desc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv));
    CHECK_OK(set_one(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha));
    CHECK_OK(set_one(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta));
    return op;
}

static bdesc pw_desc(cudnnPointwiseMode_t mode)
{
    bdesc p = mk(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    CHECK_OK(set_one(p, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode));
    CHECK_OK(set_one(p, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec));
    CHECK_OK(cudnnBackendFinalize(p));
    return p;
}

/* A pointwise op y = mode(x[, b]) (b NULL for unary modes), ALPHA2 FLOAT 0.5 as the frontend sends
   for every mode; its finalize is expected to return want. */
static bdesc pw_op(cudnnPointwiseMode_t mode, bdesc x, bdesc b, bdesc y, cudnnStatus_t want)
{
    bdesc op = mk(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR), p = pw_desc(mode);
    float alpha2 = 0.5f;
    CHECK_OK(set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, p));
    CHECK_OK(set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x));
    if (b != NULL) CHECK_OK(set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b));
    CHECK_OK(set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y));
    CHECK_OK(set_one(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, &alpha2));
    CHECK_STATUS(cudnnBackendFinalize(op), want);
    CHECK_OK(cudnnBackendDestroyDescriptor(p)); /* a finalized op keeps a copy */
    return op;
}

static void destroy_all(bdesc *d, int n)
{
    for (int i = 0; i < n; i++)
        if (d[i] != NULL) CHECK_OK(cudnnBackendDestroyDescriptor(d[i]));
}

/* A graph of ops (finalized or not), with the test's handle; its finalize status is returned. */
static cudnnStatus_t graph_of(bdesc *ops, int n, bdesc *graph)
{
    cudnnHandle_t h = test_handle();
    *graph = mk(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    CHECK_OK(cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops));
    CHECK_OK(set_one(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h));
    return cudnnBackendFinalize(*graph);
}

/* ---- the generic rules -------------------------------------------------------------------------- */

TEST_ONCE(backend_create_destroy_every_kind)
{
    for (int k = CUDNN_BACKEND_POINTWISE_DESCRIPTOR; k <= CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR; k++) {
        bdesc d = NULL;
        if (!CHECK_OK(cudnnBackendCreateDescriptor((cudnnBackendDescriptorType_t)k, &d))) continue;
        CHECK(d != NULL);
        CHECK_OK(cudnnBackendInitialize(d));
        CHECK_OK(cudnnBackendDestroyDescriptor(d));
        /* destroyed: every entry refuses it */
        CHECK_STATUS(cudnnBackendDestroyDescriptor(d), CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(cudnnBackendFinalize(d), CUDNN_STATUS_BAD_PARAM);
    }
    bdesc d = NULL;
    CHECK_STATUS(cudnnBackendCreateDescriptor((cudnnBackendDescriptorType_t)24, &d), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnBackendCreateDescriptor((cudnnBackendDescriptorType_t)-1, &d), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, NULL), CUDNN_STATUS_BAD_PARAM);
    int not_a_descriptor[16] = {0};
    CHECK_STATUS(cudnnBackendDestroyDescriptor(not_a_descriptor), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendDestroyDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendInitialize(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendFinalize(not_a_descriptor), CUDNN_STATUS_BAD_PARAM);
    int64_t v = 1, n = 0;
    CHECK_STATUS(set_i64(not_a_descriptor, CUDNN_ATTR_TENSOR_UNIQUE_ID, 1, &v), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendGetAttribute(NULL, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &v),
                 CUDNN_STATUS_BAD_PARAM);
}

TEST_ONCE(backend_tensor_attributes)
{
    bdesc t = tensor_unfinalized(0xD0D0CACA, 4, (const int64_t[]){4, 32, 32, 32}, false);
    int64_t v = 0, n = -1, dims[8] = {0};
    /* nothing is readable before finalize */
    CHECK_STATUS(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &v),
                 CUDNN_STATUS_NOT_INITIALIZED);
    /* wrong attribute type, count, kind and values */
    float f = 1;
    CHECK_STATUS(set_one(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_FLOAT, &f), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, 2, dims), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(set_i64(t, CUDNN_ATTR_TENSOR_DIMENSIONS, 9, dims), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(set_i64(t, CUDNN_ATTR_TENSOR_DIMENSIONS, 0, dims), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(set_i64(t, CUDNN_ATTR_TENSOR_DIMENSIONS, 4, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(set_i64(t, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 1, &v), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(set_i64(t, (cudnnBackendAttributeName_t)99999, 1, &v), CUDNN_STATUS_BAD_PARAM);
    int bad_type = 77;
    CHECK_STATUS(set_one(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &bad_type), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendFinalize(t));
    CHECK_STATUS(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);
    /* set after finalize */
    CHECK_STATUS(set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, 1, &v), CUDNN_STATUS_NOT_INITIALIZED);

    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &v));
    CHECK(n == 1 && v == 0xD0D0CACA);
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, NULL, &v));
    /* count only, then a partial and a full read */
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 0, &n, NULL));
    CHECK(n == 4);
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 2, &n, dims));
    CHECK(n == 2 && dims[0] == 32768 && dims[1] == 1024 && dims[2] == 0);
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 8, &n, dims));
    CHECK(n == 4 && dims[0] == 4 && dims[3] == 32);
    /* defaults of the optional attributes */
    bool b = true;
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &n, &b));
    CHECK(!b);
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_VECTOR_COUNT, CUDNN_TYPE_INT64, 1, &n, &v));
    CHECK(v == 1);
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION, CUDNN_TYPE_INT64, 1, &n, &v));
    CHECK(v == -1);
    cudnnDataType_t dt = CUDNN_DATA_HALF;
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &n, &dt));
    CHECK(dt == CUDNN_DATA_FLOAT);
    /* Get's own argument rules */
    CHECK_STATUS(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_DOUBLE, 1, &n, &v),
                 CUDNN_STATUS_BAD_PARAM);
    /* a NULL array is a count query, whatever the requested count (cudnn-frontend 1.x's note
       queries); with no count pointer either, nothing could be returned */
    n = -1;
    CHECK_OK(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, NULL));
    CHECK(n == 1);
    CHECK_STATUS(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, NULL, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, -1, &n, &v),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendGetAttribute(t, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &n, &v),
                 CUDNN_STATUS_BAD_PARAM);
    /* Initialize: a fresh descriptor of the same kind */
    CHECK_OK(cudnnBackendInitialize(t));
    CHECK_STATUS(cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &v),
                 CUDNN_STATUS_NOT_INITIALIZED);
    CHECK_STATUS(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(t));
}

/* Sets one attribute of a fresh valid tensor to a bad value and expects finalize's status; then a
   fix of that attribute finalizes (a failed finalize leaves the descriptor settable). */
static void expect_tensor_finalize(cudnnBackendAttributeName_t name, int64_t n, const int64_t *bad, int64_t fix_n,
                                   const int64_t *fix, cudnnStatus_t want)
{
    bdesc t = tensor_unfinalized(1, 4, (const int64_t[]){2, 3, 4, 5}, false);
    CHECK_OK(set_i64(t, name, n, bad));
    CHECK_STATUS(cudnnBackendFinalize(t), want);
    CHECK_OK(set_i64(t, name, fix_n, fix));
    CHECK_OK(cudnnBackendFinalize(t));
    CHECK_OK(cudnnBackendDestroyDescriptor(t));
}

TEST_ONCE(backend_tensor_finalize_rules)
{
    const int64_t strides[4] = {60, 20, 5, 1};
    expect_tensor_finalize(CUDNN_ATTR_TENSOR_STRIDES, 3, strides + 1, 4, strides, CUDNN_STATUS_BAD_PARAM);
    expect_tensor_finalize(CUDNN_ATTR_TENSOR_DIMENSIONS, 4, (const int64_t[]){2, 0, 4, 5}, 4,
                           (const int64_t[]){2, 3, 4, 5}, CUDNN_STATUS_BAD_PARAM);
    expect_tensor_finalize(CUDNN_ATTR_TENSOR_STRIDES, 4, (const int64_t[]){60, 20, -5, 1}, 4, strides,
                           CUDNN_STATUS_BAD_PARAM);
    expect_tensor_finalize(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 1, (const int64_t[]){3}, 1, (const int64_t[]){16},
                           CUDNN_STATUS_BAD_PARAM);
    expect_tensor_finalize(CUDNN_ATTR_TENSOR_STRIDES, 4, (const int64_t[]){INT64_MAX / 2, 20, 5, 1}, 4, strides,
                           CUDNN_STATUS_BAD_PARAM);

    /* a tensor without its unique id (virtual or not) */
    bdesc t = mk(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int64_t dims[2] = {2, 3}, str[2] = {3, 1}, align = 4;
    CHECK_OK(set_one(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_DIMENSIONS, 2, dims));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_STRIDES, 2, str));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 1, &align));
    CHECK_STATUS(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);

    /* the packed vector types are refused; INT8 vectorized by VECTOR_COUNT is taken */
    dt = CUDNN_DATA_INT8x4;
    int64_t uid = 5;
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, 1, &uid));
    CHECK_OK(set_one(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt));
    CHECK_STATUS(cudnnBackendFinalize(t), CUDNN_STATUS_NOT_SUPPORTED);
    dt = CUDNN_DATA_INT8;
    int64_t count = 8, vdim = 1;
    CHECK_OK(set_one(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_VECTOR_COUNT, 1, &count));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION, 1, &vdim));
    CHECK_STATUS(cudnnBackendFinalize(t), CUDNN_STATUS_NOT_SUPPORTED);
    count = 4;
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_VECTOR_COUNT, 1, &count));
    CHECK_OK(cudnnBackendFinalize(t));
    CHECK_OK(cudnnBackendDestroyDescriptor(t));
}

TEST_ONCE(backend_parameter_descriptors)
{
    bdesc c = mk(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CONVOLUTION;
    int64_t nsp = 2, pads[3] = {1, 2, 3}, ones[2] = {1, 1}, zeros[2] = {0, 0}, n = 0, got[6];
    CHECK_STATUS(cudnnBackendFinalize(c), CUDNN_STATUS_BAD_PARAM); /* nothing set */
    CHECK_OK(set_one(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp));
    CHECK_OK(set_one(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 3, pads)); /* before SPATIAL_DIMS: checked at finalize */
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, 1, &nsp));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, 2, pads));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, 2, zeros));
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 2, ones));
    CHECK_STATUS(cudnnBackendFinalize(c), CUDNN_STATUS_BAD_PARAM); /* 3 pre paddings for 2 dims */
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 2, pads));
    CHECK_STATUS(cudnnBackendFinalize(c), CUDNN_STATUS_BAD_PARAM); /* dilation 0 */
    CHECK_OK(set_i64(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, 2, ones));
    CHECK_OK(cudnnBackendFinalize(c));
    CHECK_OK(cudnnBackendGetAttribute(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 6, &n, got));
    CHECK(n == 2 && got[0] == 1 && got[1] == 2);
    CHECK_OK(cudnnBackendGetAttribute(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &n, &mode));
    CHECK(mode == CUDNN_CONVOLUTION);
    CHECK_OK(cudnnBackendDestroyDescriptor(c));

    bdesc p = mk(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    int bad_mode = 5;
    CHECK_STATUS(set_one(p, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &bad_mode), CUDNN_STATUS_BAD_PARAM);
    cudnnPointwiseMode_t pm = CUDNN_POINTWISE_RELU_FWD;
    CHECK_OK(set_one(p, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &pm));
    CHECK_STATUS(cudnnBackendFinalize(p), CUDNN_STATUS_BAD_PARAM); /* MATH_PREC missing */
    CHECK_OK(set_one(p, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &comp));
    float upper = FLT_MAX; /* FLOAT and DOUBLE are both taken for the clips */
    CHECK_OK(set_one(p, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_FLOAT, &upper));
    int64_t i64 = 1;
    CHECK_STATUS(set_i64(p, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, 1, &i64), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendFinalize(p));
    double alpha = 0;
    float falpha = 0;
    CHECK_OK(cudnnBackendGetAttribute(p, CUDNN_ATTR_POINTWISE_ELU_ALPHA, CUDNN_TYPE_DOUBLE, 1, &n, &alpha));
    CHECK_OK(cudnnBackendGetAttribute(p, CUDNN_ATTR_POINTWISE_SWISH_BETA, CUDNN_TYPE_FLOAT, 1, &n, &falpha));
    CHECK(alpha == 1.0 && falpha == 1.0f);
    CHECK_OK(cudnnBackendGetAttribute(p, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_FLOAT, 1, &n, &falpha));
    CHECK(falpha == FLT_MAX);
    CHECK_OK(cudnnBackendDestroyDescriptor(p));

    bdesc m = mk(CUDNN_BACKEND_MATMUL_DESCRIPTOR), r = mk(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    CHECK_STATUS(cudnnBackendFinalize(m), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_one(m, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp));
    CHECK_OK(cudnnBackendFinalize(m));
    cudnnReduceTensorOp_t rop = CUDNN_REDUCE_TENSOR_ADD;
    int bad_op = 9;
    CHECK_STATUS(set_one(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &bad_op),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_one(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &rop));
    CHECK_STATUS(cudnnBackendFinalize(r), CUDNN_STATUS_BAD_PARAM); /* COMP_TYPE missing */
    CHECK_OK(set_one(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp));
    CHECK_OK(cudnnBackendFinalize(r));
    destroy_all((bdesc[]){m, r}, 2);

    /* KNOB_CHOICE needs both attributes; the library-filled kinds are read-only */
    bdesc k = mk(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR), ki = mk(CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR);
    cudnnBackendKnobType_t kt = CUDNN_KNOB_TYPE_SPLIT_K;
    CHECK_OK(set_one(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, &kt));
    CHECK_STATUS(cudnnBackendFinalize(k), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_i64(k, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, 1, &i64));
    CHECK_OK(cudnnBackendFinalize(k));
    CHECK_STATUS(set_one(ki, CUDNN_ATTR_KNOB_INFO_TYPE, CUDNN_TYPE_KNOB_TYPE, &kt), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendFinalize(ki), CUDNN_STATUS_BAD_PARAM);
    destroy_all((bdesc[]){k, ki}, 2);
}

/* ---- operations --------------------------------------------------------------------------------- */

TEST_ONCE(backend_conv_op_rules)
{
    bdesc x = T4('x', 2, 8, 6, 6, false), w = T4('w', 16, 4, 3, 3, false), y = T4('y', 2, 16, 4, 4, false);
    bdesc bad_y = T4('y', 2, 16, 5, 4, false), conv = conv_desc(0);
    /* grouped: 8 input channels, 4 per group */
    bdesc op = conv_op(x, w, y, conv);
    CHECK_OK(cudnnBackendFinalize(op));
    float alpha = 0;
    double beta = 1;
    int64_t n = 0;
    CHECK_OK(cudnnBackendGetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &n,
                                      &alpha));
    CHECK_OK(cudnnBackendGetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_DOUBLE, 1, &n,
                                      &beta));
    CHECK(alpha == 1 && beta == 0);
    /* a tensor read back is a finalized copy */
    bdesc back = mk(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                      &n, &back));
    int64_t uid = 0, dims[4] = {0};
    CHECK_OK(cudnnBackendGetAttribute(back, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &uid));
    CHECK_OK(cudnnBackendGetAttribute(back, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, &n, dims));
    CHECK(uid == 'w' && dims[0] == 16 && dims[3] == 3);
    /* into a descriptor of the wrong kind */
    CHECK_STATUS(cudnnBackendGetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &conv),
                 CUDNN_STATUS_BAD_PARAM);
    bdesc cback = mk(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cback));
    CHECK_OK(cudnnBackendGetAttribute(cback, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &n, &uid));
    CHECK(uid == 2);

    /* shapes that do not form the convolution */
    bdesc op2 = conv_op(x, w, bad_y, conv);
    CHECK_STATUS(cudnnBackendFinalize(op2), CUDNN_STATUS_BAD_PARAM);
    bdesc op3 = conv_op(x, T4('v', 16, 3, 3, 3, false), y, conv); /* 8 channels, 3 per group */
    CHECK_STATUS(cudnnBackendFinalize(op3), CUDNN_STATUS_BAD_PARAM);
    /* a descriptor of the wrong kind, an unfinalized and a destroyed tensor */
    CHECK_STATUS(set_desc(op2, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, conv), CUDNN_STATUS_BAD_PARAM);
    bdesc loose = tensor_unfinalized('y', 4, (const int64_t[]){2, 16, 4, 4}, false);
    CHECK_OK(set_desc(op2, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, loose));
    CHECK_STATUS(cudnnBackendFinalize(op2), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(loose));
    CHECK_STATUS(cudnnBackendFinalize(op2), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_desc(op2, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y));
    CHECK_OK(cudnnBackendFinalize(op2));
    /* an op without its filter */
    bdesc op4 = mk(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    CHECK_OK(set_desc(op4, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x));
    CHECK_OK(set_desc(op4, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y));
    CHECK_OK(set_desc(op4, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv));
    CHECK_STATUS(cudnnBackendFinalize(op4), CUDNN_STATUS_BAD_PARAM);
    destroy_all((bdesc[]){x, w, y, bad_y, conv, op, back, cback, op2, op3, op4}, 11);
}

/* Paddings and dilations whose sums pass 64 bits: 5 rows padded by INT64_MAX before and
   INT64_MAX - 1 after (wrapping to 2 rows), or a filter of 3 rows dilated by INT64_MAX (its span
   wrapping to -1, so 7 rows out), would agree with y; finalize refuses both. */
TEST_ONCE(backend_conv_op_sizes_past_64_bits)
{
    const int64_t zero[2] = {0, 0}, one[2] = {1, 1};
    bdesc x = T4('x', 1, 1, 5, 5, false), w1 = T4('w', 1, 1, 1, 1, false), w3 = T4('v', 1, 1, 3, 1, false);
    bdesc y2 = T4('y', 1, 1, 2, 5, false), y7 = T4('z', 1, 1, 7, 5, false);
    bdesc pads = conv_desc_of((const int64_t[]){INT64_MAX, 0}, (const int64_t[]){INT64_MAX - 1, 0}, one);
    bdesc dilated = conv_desc_of(zero, zero, (const int64_t[]){INT64_MAX, 1});
    bdesc op1 = conv_op(x, w1, y2, pads), op2 = conv_op(x, w3, y7, dilated);
    CHECK_STATUS(cudnnBackendFinalize(op1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendFinalize(op2), CUDNN_STATUS_BAD_PARAM);
    destroy_all((bdesc[]){x, w1, w3, y2, y7, pads, dilated, op1, op2}, 9);
}

TEST_ONCE(backend_conv_backward_ops)
{
    bdesc dx = T4(1, 1, 4, 5, 5, false), w = T4(2, 8, 4, 3, 3, false), dy = T4(3, 1, 8, 5, 5, false);
    bdesc conv = conv_desc(1);
    bdesc data = mk(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
    CHECK_OK(set_desc(data, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, dx));
    CHECK_OK(set_desc(data, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w));
    CHECK_OK(set_desc(data, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, dy));
    CHECK_OK(set_desc(data, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv));
    CHECK_OK(cudnnBackendFinalize(data));
    bdesc filt = mk(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
    CHECK_OK(set_desc(filt, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, dx));
    CHECK_OK(set_desc(filt, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w));
    CHECK_OK(set_desc(filt, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, w)); /* not dy's shape */
    CHECK_OK(set_desc(filt, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv));
    CHECK_STATUS(cudnnBackendFinalize(filt), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_desc(filt, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, dy));
    CHECK_OK(cudnnBackendFinalize(filt));
    destroy_all((bdesc[]){dx, w, dy, conv, data, filt}, 6);
}

TEST_ONCE(backend_pointwise_matmul_reduction_ops)
{
    bdesc x = T4(1, 2, 8, 3, 3, false), bias = T4(2, 1, 8, 1, 1, false), y = T4(3, 2, 8, 3, 3, false);
    bdesc wide = T4(4, 2, 8, 3, 4, false);
    bdesc add = pw_op(CUDNN_POINTWISE_ADD, x, bias, y, CUDNN_STATUS_SUCCESS);
    /* a binary mode without BDESC; b that does not broadcast to y */
    bdesc no_b = pw_op(CUDNN_POINTWISE_ADD, x, NULL, y, CUDNN_STATUS_BAD_PARAM);
    bdesc no_bcast = pw_op(CUDNN_POINTWISE_MUL, x, wide, y, CUDNN_STATUS_BAD_PARAM);
    bdesc relu = pw_op(CUDNN_POINTWISE_RELU_FWD, x, NULL, y, CUDNN_STATUS_SUCCESS); /* ALPHA2 is accepted */
    float a2 = 0;
    int64_t n = -1;
    CHECK_OK(cudnnBackendGetAttribute(relu, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &n, &a2));
    CHECK(a2 == 0.5f);
    bdesc back = mk(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(relu, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                      &back));
    CHECK(n == 0);
    /* the backward modes take x, dy and dx */
    bdesc bwd = mk(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR), p = pw_desc(CUDNN_POINTWISE_RELU_BWD);
    CHECK_OK(set_desc(bwd, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, p));
    CHECK_OK(set_desc(bwd, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x));
    CHECK_OK(set_desc(bwd, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, y));
    CHECK_STATUS(cudnnBackendFinalize(bwd), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_desc(bwd, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, wide));
    CHECK_STATUS(cudnnBackendFinalize(bwd), CUDNN_STATUS_BAD_PARAM); /* dx and dy differ */
    CHECK_OK(set_desc(bwd, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, T4(5, 2, 8, 3, 3, false)));
    CHECK_OK(cudnnBackendFinalize(bwd));

    /* matmul: [b, m, k] x [b, k, n] -> [b, m, n]; rank 2 is not taken */
    bdesc mm = mk(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    CHECK_OK(set_one(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp));
    CHECK_OK(cudnnBackendFinalize(mm));
    bdesc a = tensor(10, 3, (const int64_t[]){1, 4, 6}, false), b = tensor(11, 3, (const int64_t[]){1, 6, 5}, false);
    bdesc c = tensor(12, 3, (const int64_t[]){1, 4, 5}, false), c_bad = tensor(13, 3, (const int64_t[]){1, 5, 4}, false);
    bdesc a2d = tensor(14, 2, (const int64_t[]){4, 6}, false);
    bdesc mop = mk(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    CHECK_OK(set_desc(mop, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a));
    CHECK_OK(set_desc(mop, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b));
    CHECK_OK(set_desc(mop, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c_bad));
    CHECK_OK(set_desc(mop, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm));
    CHECK_STATUS(cudnnBackendFinalize(mop), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_desc(mop, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a2d));
    CHECK_STATUS(cudnnBackendFinalize(mop), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_OK(set_desc(mop, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a));
    CHECK_OK(set_desc(mop, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c));
    CHECK_OK(cudnnBackendFinalize(mop));

    /* reduction: each y extent is x's or 1 */
    bdesc red = mk(CUDNN_BACKEND_REDUCTION_DESCRIPTOR), rop = mk(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    cudnnReduceTensorOp_t add_op = CUDNN_REDUCE_TENSOR_ADD;
    CHECK_OK(set_one(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &add_op));
    CHECK_OK(set_one(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp));
    CHECK_OK(cudnnBackendFinalize(red));
    CHECK_OK(set_desc(rop, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red));
    CHECK_OK(set_desc(rop, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x));
    CHECK_OK(set_desc(rop, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, wide));
    CHECK_STATUS(cudnnBackendFinalize(rop), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_desc(rop, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, bias));
    CHECK_OK(cudnnBackendFinalize(rop));
    destroy_all((bdesc[]){x, bias, y, wide, add, no_b, no_bcast, relu, back, bwd, p, mm, a, b, c, c_bad, a2d, mop, red,
                          rop},
                20);
}

TEST_ONCE(backend_statistics_ops)
{
    bdesc x = T4(1, 2, 8, 3, 3, false), sum = T4(2, 1, 8, 1, 1, false), sq = T4(3, 1, 8, 1, 1, false);
    bdesc gs = mk(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
    cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    CHECK_OK(set_one(gs, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, &mode));
    CHECK_OK(set_one(gs, CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec));
    CHECK_OK(set_desc(gs, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, x));
    CHECK_OK(set_desc(gs, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, sum));
    CHECK_OK(set_desc(gs, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, x)); /* not per channel */
    CHECK_STATUS(cudnnBackendFinalize(gs), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_desc(gs, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, sq));
    CHECK_OK(cudnnBackendFinalize(gs));

    /* BN finalize: per-channel tensors like Y_SUM, scalars of one element */
    bdesc bnf = mk(CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR);
    cudnnBnFinalizeStatsMode_t bmode = CUDNN_BN_FINALIZE_STATISTICS_TRAINING;
    CHECK_OK(set_one(bnf, CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE, CUDNN_TYPE_BN_FINALIZE_STATS_MODE, &bmode));
    CHECK_OK(set_one(bnf, CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec));
    const cudnnBackendAttributeName_t chans[] = {
        CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC,    CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC,
        CUDNN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC,    CUDNN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC,
        CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC};
    bdesc ts[8];
    for (int i = 0; i < 6; i++) {
        ts[i] = T4(10 + i, 1, 8, 1, 1, false);
        CHECK_OK(set_desc(bnf, chans[i], ts[i]));
    }
    ts[6] = T4(20, 1, 1, 1, 1, false);
    ts[7] = T4(21, 1, 2, 1, 1, false);
    CHECK_OK(set_desc(bnf, CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC, ts[6]));
    CHECK_OK(set_desc(bnf, CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC, ts[7]));
    CHECK_STATUS(cudnnBackendFinalize(bnf), CUDNN_STATUS_BAD_PARAM); /* epsilon has two elements */
    CHECK_OK(set_desc(bnf, CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC, ts[6]));
    CHECK_OK(cudnnBackendFinalize(bnf));

    /* BN backward weights */
    bdesc bnw = mk(CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR);
    CHECK_OK(set_one(bnw, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec));
    const cudnnBackendAttributeName_t per_channel[] = {
        CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC,        CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC,
        CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC,    CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC,
        CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC,    CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC,
        CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC,  CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS};
    for (size_t i = 0; i < sizeof per_channel / sizeof per_channel[0]; i++)
        CHECK_OK(set_desc(bnw, per_channel[i], sum));
    CHECK_OK(set_desc(bnw, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC, x));
    CHECK_STATUS(cudnnBackendFinalize(bnw), CUDNN_STATUS_BAD_PARAM); /* DY missing */
    CHECK_OK(set_desc(bnw, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC, x));
    CHECK_OK(cudnnBackendFinalize(bnw));
    destroy_all(ts, 8);
    destroy_all((bdesc[]){x, sum, sq, gs, bnf, bnw}, 6);
}

/* ---- operation graphs --------------------------------------------------------------------------- */

/* conv(x, w) -> c* ; c* + bias -> a* ; relu(a*) -> y (virtual tensors starred) */
struct conv_bias_relu {
    bdesc x, w, c, bias, a, y, conv, ops[3];
};

static void conv_bias_relu_make(struct conv_bias_relu *g, bool c_virtual)
{
    g->x = T4('x', 1, 4, 6, 6, false);
    g->w = T4('w', 8, 4, 3, 3, false);
    g->c = T4('c', 1, 8, 4, 4, c_virtual);
    g->bias = T4('b', 1, 8, 1, 1, false);
    g->a = T4('a', 1, 8, 4, 4, true);
    g->y = T4('y', 1, 8, 4, 4, false);
    g->conv = conv_desc(0);
    g->ops[0] = conv_op(g->x, g->w, g->c, g->conv);
    CHECK_OK(cudnnBackendFinalize(g->ops[0]));
    g->ops[1] = pw_op(CUDNN_POINTWISE_ADD, g->c, g->bias, g->a, CUDNN_STATUS_SUCCESS);
    g->ops[2] = pw_op(CUDNN_POINTWISE_RELU_FWD, g->a, NULL, g->y, CUDNN_STATUS_SUCCESS);
}

static void conv_bias_relu_free(struct conv_bias_relu *g)
{
    destroy_all(&g->x, 10);
}

TEST_ONCE(backend_graph_attributes)
{
    struct conv_bias_relu g;
    conv_bias_relu_make(&g, true);
    /* given out of order: the graph orders them */
    bdesc given[3] = {g.ops[2], g.ops[0], g.ops[1]}, graph;
    CHECK_OK(graph_of(given, 3, &graph));
    conv_bias_relu_free(&g); /* the graph holds copies */
    int64_t count = 0, n = -1;
    CHECK_OK(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, NULL,
                                      &count));
    CHECK(count >= 1);
    CHECK_STATUS(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1,
                                          &count),
                 CUDNN_STATUS_NOT_INITIALIZED);
    CHECK_OK(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    CHECK(n == 3);
    bdesc back[3] = {mk(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR),
                     mk(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR), mk(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)};
    CHECK_OK(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, &n, back));
    CHECK(n == 3);
    /* the last op is the ReLU writing y */
    bdesc y = mk(CUDNN_BACKEND_TENSOR_DESCRIPTOR), pw = mk(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    int64_t uid = 0;
    CHECK_OK(cudnnBackendGetAttribute(back[2], CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                      &n, &y));
    CHECK_OK(cudnnBackendGetAttribute(y, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &n, &uid));
    CHECK(uid == 'y');
    CHECK_OK(cudnnBackendGetAttribute(back[2], CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &pw));
    cudnnPointwiseMode_t mode = CUDNN_POINTWISE_ADD;
    CHECK_OK(cudnnBackendGetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &n, &mode));
    CHECK(mode == CUDNN_POINTWISE_RELU_FWD);
    /* ops read back into descriptors of the wrong kinds */
    bdesc wrong[3] = {back[1], back[0], back[2]};
    CHECK_STATUS(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, &n,
                                          wrong),
                 CUDNN_STATUS_BAD_PARAM);
    cudnnHandle_t h = NULL;
    CHECK_OK(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &n, &h));
    CHECK(h == test_handle());
    destroy_all(back, 3);
    destroy_all((bdesc[]){y, pw, graph}, 3);
}

TEST_ONCE(backend_graph_finalize_rules)
{
    struct conv_bias_relu g;
    conv_bias_relu_make(&g, true);
    bdesc graph = NULL;
    /* dangling virtual tensors: c* written and never read, a* read and never written */
    CHECK_STATUS(graph_of((bdesc[]){g.ops[0], g.ops[2]}, 2, &graph), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    /* c* is written and never read */
    CHECK_STATUS(graph_of((bdesc[]){g.ops[0]}, 1, &graph), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    /* one op twice: a tensor written twice */
    CHECK_STATUS(graph_of((bdesc[]){g.ops[0], g.ops[1], g.ops[2], g.ops[2]}, 4, &graph), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    /* an unfinalized op */
    bdesc loose = conv_op(g.x, g.w, g.c, g.conv);
    CHECK_STATUS(graph_of((bdesc[]){loose, g.ops[1], g.ops[2]}, 3, &graph), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    /* uid 'y' for two different tensors */
    bdesc other_y = T4('y', 1, 8, 1, 1, false), z = T4('z', 1, 8, 1, 1, false);
    bdesc other_relu = pw_op(CUDNN_POINTWISE_RELU_FWD, other_y, NULL, z, CUDNN_STATUS_SUCCESS);
    CHECK_STATUS(graph_of((bdesc[]){g.ops[0], g.ops[1], g.ops[2], other_relu}, 4, &graph), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    /* two graphs in one: a second, unconnected ReLU */
    bdesc p = T4('p', 1, 8, 1, 1, false), q = T4('q', 1, 8, 1, 1, false), lone =
        pw_op(CUDNN_POINTWISE_RELU_FWD, p, NULL, q, CUDNN_STATUS_SUCCESS);
    CHECK_STATUS(graph_of((bdesc[]){g.ops[0], g.ops[1], g.ops[2], lone}, 4, &graph), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    /* a cycle: y = relu(conv(x) + bias) and bias = sum of y over the image */
    bdesc red = mk(CUDNN_BACKEND_REDUCTION_DESCRIPTOR), back_edge = mk(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    cudnnReduceTensorOp_t add_op = CUDNN_REDUCE_TENSOR_ADD;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    CHECK_OK(set_one(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &add_op));
    CHECK_OK(set_one(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &comp));
    CHECK_OK(cudnnBackendFinalize(red));
    CHECK_OK(set_desc(back_edge, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red));
    CHECK_OK(set_desc(back_edge, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, g.y));
    CHECK_OK(set_desc(back_edge, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, g.bias));
    CHECK_OK(cudnnBackendFinalize(back_edge));
    CHECK_STATUS(graph_of((bdesc[]){g.ops[0], g.ops[1], g.ops[2], back_edge}, 4, &graph), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    /* no handle; no ops; a handle that is not one */
    graph = mk(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    CHECK_OK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, g.ops));
    CHECK_STATUS(cudnnBackendFinalize(graph), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, g.ops),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g.x),
                 CUDNN_STATUS_BAD_PARAM); /* a tensor is not an operation */
    int not_a_handle = 0;
    cudnnHandle_t bad = (cudnnHandle_t)&not_a_handle;
    CHECK_STATUS(set_one(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &bad), CUDNN_STATUS_BAD_PARAM);
    int64_t n;
    CHECK_STATUS(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1,
                                          &n, &n),
                 CUDNN_STATUS_NOT_INITIALIZED);
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    /* the whole chain is fine; with c not virtual too (a graph output read by the next op) */
    CHECK_OK(graph_of(g.ops, 3, &graph));
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    destroy_all((bdesc[]){loose, other_y, z, other_relu, p, q, lone, red, back_edge}, 9);
    conv_bias_relu_free(&g);
    conv_bias_relu_make(&g, false);
    CHECK_OK(graph_of(g.ops, 3, &graph));
    CHECK_OK(cudnnBackendDestroyDescriptor(graph));
    conv_bias_relu_free(&g);
}

/* ---- engines, configurations, heuristics, plans, variant packs ---------------------------------- */

/* A finalized graph of one forward convolution. */
static bdesc conv_graph(void)
{
    bdesc x = T4('x', 1, 4, 6, 6, false), w = T4('w', 8, 4, 3, 3, false), y = T4('y', 1, 8, 4, 4, false);
    bdesc conv = conv_desc(0), op = conv_op(x, w, y, conv), graph = NULL;
    CHECK_OK(cudnnBackendFinalize(op));
    CHECK_OK(graph_of(&op, 1, &graph));
    destroy_all((bdesc[]){x, w, y, conv, op}, 5);
    return graph;
}

TEST_ONCE(backend_engine_and_config)
{
    bdesc graph = conv_graph(), engine = mk(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t count = 0, index = 0, n = -1;
    CHECK_OK(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &n,
                                      &count));
    CHECK_STATUS(cudnnBackendFinalize(engine), CUDNN_STATUS_BAD_PARAM); /* no graph */
    CHECK_OK(set_desc(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph));
    CHECK_OK(set_i64(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 1, &count)); /* one past the last */
    CHECK_STATUS(cudnnBackendFinalize(engine), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_OK(set_i64(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 1, &index));
    CHECK_OK(cudnnBackendFinalize(engine));
    CHECK_OK(cudnnBackendDestroyDescriptor(graph)); /* the engine keeps the graph */

    /* what the frontend reads of an engine */
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    cudnnBackendBehaviorNote_t behavior[1];
    int64_t n_notes = -1, n_behavior = -1, n_knobs = -1;
    CHECK_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                      CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n_notes, notes));
    CHECK_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, 1, &n_behavior,
                                      behavior));
    CHECK(n_notes >= 0 && n_notes <= CUDNN_NUMERICAL_NOTE_TYPE_COUNT && n_behavior >= 0 && n_behavior <= 1);
    CHECK_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_KNOB_INFO, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n_knobs,
                                      NULL));
    CHECK(n_knobs >= 0 && n_knobs <= CUDNN_KNOB_TYPE_COUNTS);
    bdesc infos[CUDNN_KNOB_TYPE_COUNTS];
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; i++) infos[i] = mk(CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_KNOB_INFO, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                      CUDNN_KNOB_TYPE_COUNTS, &n, infos));
    CHECK(n == n_knobs);
    for (int64_t i = 0; i < n; i++) {
        int64_t lo = 0, hi = -1;
        CHECK_OK(cudnnBackendGetAttribute(infos[i], CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE, CUDNN_TYPE_INT64, 1, NULL, &lo));
        CHECK_OK(cudnnBackendGetAttribute(infos[i], CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE, CUDNN_TYPE_INT64, 1, NULL, &hi));
        CHECK(lo <= hi);
    }
    destroy_all(infos, CUDNN_KNOB_TYPE_COUNTS);
    CHECK_STATUS(set_i64(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, 1, &index), CUDNN_STATUS_NOT_INITIALIZED);
    bdesc graph_back = mk(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                      &graph_back));
    CHECK_OK(cudnnBackendGetAttribute(graph_back, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1,
                                      NULL, &n));
    CHECK(n == count);

    /* a configuration without knobs; a knob chosen twice */
    bdesc cfg = mk(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR), k[2] = {mk(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR),
                                                                mk(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)};
    cudnnBackendKnobType_t kt = CUDNN_KNOB_TYPE_STAGES;
    for (int i = 0; i < 2; i++) {
        CHECK_OK(set_one(k[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, &kt));
        CHECK_OK(set_i64(k[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, 1, &index));
        CHECK_OK(cudnnBackendFinalize(k[i]));
    }
    CHECK_OK(set_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, engine));
    CHECK_OK(cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, k));
    CHECK_STATUS(cudnnBackendFinalize(cfg), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, NULL));
    CHECK_OK(cudnnBackendFinalize(cfg));
    CHECK_OK(cudnnBackendDestroyDescriptor(engine));
    bdesc engine_back = mk(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                      &engine_back));
    CHECK_OK(cudnnBackendGetAttribute(engine_back, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &count));
    CHECK(n == 1 && count == index);
    CHECK_OK(cudnnBackendGetAttribute(engine_back, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 0, &n,
                                      NULL));
    CHECK(n == n_notes);
    CHECK_OK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n,
                                      NULL));
    CHECK(n == 0);
    destroy_all((bdesc[]){graph_back, cfg, k[0], k[1], engine_back}, 5);
}

TEST_ONCE(backend_heuristics_results)
{
    bdesc graph = conv_graph(), heur = mk(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    int bad_mode = CUDNN_HEUR_MODES_COUNT;
    CHECK_STATUS(set_one(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &bad_mode), CUDNN_STATUS_BAD_PARAM);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;
    CHECK_OK(set_one(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode));
    CHECK_STATUS(cudnnBackendFinalize(heur), CUDNN_STATUS_BAD_PARAM); /* no graph */
    CHECK_OK(set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph));
    CHECK_OK(cudnnBackendFinalize(heur));
    int64_t n = 0, m = -1, count = 0;
    CHECK_OK(cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, NULL,
                                      &count));
    CHECK_OK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    if (!CHECK(n >= 1 && n <= 64)) return;
    bdesc cfgs[64];
    for (int64_t i = 0; i < n; i++) cfgs[i] = mk(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &m, cfgs));
    CHECK(m == n);
    destroy_all(&heur, 1);
    destroy_all(&graph, 1);
    for (int64_t i = 0; i < n; i++) { /* each result is a finalized config that outlives the heuristic */
        bdesc e = mk(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        int64_t index = -1;
        CHECK_OK(cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &m, &e));
        CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &m, &index));
        CHECK(index >= 0 && index < count);
        destroy_all(&e, 1);
    }
    destroy_all(cfgs, (int)n);
}

TEST_ONCE(backend_plan_and_variant_pack_rules)
{
    bdesc graph = conv_graph(), engine = mk(CUDNN_BACKEND_ENGINE_DESCRIPTOR), cfg = mk(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t zero = 0, n = 0;
    CHECK_OK(set_desc(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph));
    CHECK_OK(set_i64(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 1, &zero));
    CHECK_OK(cudnnBackendFinalize(engine));
    CHECK_OK(set_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, engine));
    bdesc plan = mk(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    CHECK_STATUS(set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, engine), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg));
    cudnnHandle_t h = test_handle();
    CHECK_OK(set_one(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h));
    CHECK_STATUS(cudnnBackendFinalize(plan), CUDNN_STATUS_BAD_PARAM); /* the config is not finalized */
    CHECK_STATUS(set_i64(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, 1, &zero), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, NULL,
                                          &n),
                 CUDNN_STATUS_NOT_INITIALIZED);
    bdesc no_handle = mk(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    CHECK_OK(cudnnBackendFinalize(cfg));
    CHECK_OK(set_desc(no_handle, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg));
    CHECK_STATUS(cudnnBackendFinalize(no_handle), CUDNN_STATUS_BAD_PARAM);
    destroy_all((bdesc[]){graph, engine, cfg, plan, no_handle}, 5);

    /* variant pack: as many pointers as ids, each id once; an empty pack is legal */
    bdesc pack = mk(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    int64_t uids[3] = {'x', 'w', 'x'};
    float buf[3];
    void *ptrs[3] = {&buf[0], &buf[1], &buf[2]}, *ws = NULL;
    CHECK_OK(set_i64(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, 3, uids));
    CHECK_OK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 2, ptrs));
    CHECK_OK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws));
    CHECK_STATUS(cudnnBackendFinalize(pack), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs));
    CHECK_STATUS(cudnnBackendFinalize(pack), CUDNN_STATUS_BAD_PARAM); /* 'x' twice */
    uids[2] = 'y';
    CHECK_OK(set_i64(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, 3, uids));
    CHECK_OK(cudnnBackendFinalize(pack));
    void *got[3] = {NULL};
    CHECK_OK(cudnnBackendGetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, &n, got));
    CHECK(n == 3 && got[2] == &buf[2]);
    CHECK_OK(cudnnBackendInitialize(pack));
    CHECK_OK(set_i64(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, 0, NULL));
    CHECK_OK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 0, NULL));
    CHECK_OK(cudnnBackendFinalize(pack));
    destroy_all(&pack, 1);
}

/* INT8 tensors vectorized on the channels (the frontend's DP4A and IMMA samples): dims count
   vectors, the convolution counts scalar channels. */
static bdesc int8_tensor_strided(int64_t uid, const int64_t dims[4], const int64_t strides[4], int64_t vect)
{
    bdesc t = mk(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    cudnnDataType_t dt = CUDNN_DATA_INT8;
    int64_t align = 16, vdim = 1;
    CHECK_OK(set_one(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_DIMENSIONS, 4, dims));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_STRIDES, 4, strides));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, 1, &uid));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 1, &align));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_VECTOR_COUNT, 1, &vect));
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION, 1, &vdim));
    return t;
}

static bdesc int8_tensor(int64_t uid, const int64_t dims[4], int64_t vect)
{
    const int64_t strides[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
    bdesc t = int8_tensor_strided(uid, dims, strides, vect);
    CHECK_OK(cudnnBackendFinalize(t));
    return t;
}

TEST_ONCE(backend_vectorized_conv_ops)
{
    bdesc conv = conv_desc(0);
    /* DP4A: 64 channels as 16 vectors of 4 in, 64 filters, 64 channels out */
    bdesc x = int8_tensor('x', (const int64_t[]){4, 16, 224, 224}, 4), w = int8_tensor('w', (const int64_t[]){64, 16, 3, 3}, 4);
    bdesc y = int8_tensor('y', (const int64_t[]){4, 16, 222, 222}, 4), y64 = int8_tensor('y', (const int64_t[]){4, 64, 222, 222}, 4);
    bdesc op = conv_op(x, w, y, conv), bad = conv_op(x, w, y64, conv);
    CHECK_OK(cudnnBackendFinalize(op));
    CHECK_STATUS(cudnnBackendFinalize(bad), CUDNN_STATUS_BAD_PARAM);
    /* IMMA: 64 channels as 2 vectors of 32 in, 32 filters, 1 vector of 32 out */
    bdesc xi = int8_tensor('x', (const int64_t[]){7, 2, 21, 21}, 32), wi = int8_tensor('w', (const int64_t[]){32, 2, 3, 3}, 32);
    bdesc yi = int8_tensor('y', (const int64_t[]){7, 1, 19, 19}, 32), opi = conv_op(xi, wi, yi, conv);
    CHECK_OK(cudnnBackendFinalize(opi));
    destroy_all((bdesc[]){conv, x, w, y, y64, op, bad, xi, wi, yi, opi}, 11);
}

/* A size-1 dimension's stride adds nothing to the tensor's extent, but the library's scalar view
   scales it by the vector count and addressing by the element size: its stride in bytes must fit
   64 bits, or finalize refuses the tensor (BAD_PARAM) and stays settable. */
static void expect_vect_stride(int64_t stride0, int64_t vect, cudnnStatus_t want)
{
    int64_t strides[4] = {stride0, 64, 8, 1};
    bdesc t = int8_tensor_strided('x', (const int64_t[]){1, 16, 8, 8}, strides, vect);
    cudnnStatus_t got = cudnnBackendFinalize(t);
    CHECK_STATUS(got, want);
    if (got == CUDNN_STATUS_SUCCESS) {
        /* the tensor goes through a convolution graph's engines (its scalar view) */
        bdesc conv = conv_desc(0), w = int8_tensor('w', (const int64_t[]){16 * vect, 16, 3, 3}, vect);
        bdesc y = int8_tensor('y', (const int64_t[]){1, 16, 6, 6}, vect), op = conv_op(t, w, y, conv), g = NULL;
        CHECK_OK(cudnnBackendFinalize(op));
        cudnnStatus_t st = graph_of(&op, 1, &g);
        CHECK(st == CUDNN_STATUS_SUCCESS || st == CUDNN_STATUS_NOT_SUPPORTED);
        destroy_all((bdesc[]){conv, w, y, op, g}, 5);
    } else {
        strides[0] = 1024;
        CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_STRIDES, 4, strides));
        CHECK_OK(cudnnBackendFinalize(t));
    }
    CHECK_OK(cudnnBackendDestroyDescriptor(t));
}

TEST_ONCE(backend_tensor_stride_in_bytes)
{
    expect_vect_stride(INT64_MAX / 2, 4, CUDNN_STATUS_BAD_PARAM);
    expect_vect_stride(INT64_MAX / 4, 4, CUDNN_STATUS_SUCCESS);
    expect_vect_stride(INT64_MAX / 32 + 1, 32, CUDNN_STATUS_BAD_PARAM);
    expect_vect_stride(INT64_MAX / 32, 32, CUDNN_STATUS_SUCCESS);
    /* FLOAT, 4 bytes an element */
    bdesc t = tensor_unfinalized(1, 4, (const int64_t[]){1, 3, 4, 5}, false);
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_STRIDES, 4, (const int64_t[]){INT64_MAX / 4 + 1, 20, 5, 1}));
    CHECK_STATUS(cudnnBackendFinalize(t), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_i64(t, CUDNN_ATTR_TENSOR_STRIDES, 4, (const int64_t[]){INT64_MAX / 4, 20, 5, 1}));
    CHECK_OK(cudnnBackendFinalize(t));
    CHECK_OK(cudnnBackendDestroyDescriptor(t));
}
