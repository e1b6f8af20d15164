/* tensor_ops.c: cudnnSetTensor, cudnnScaleTensor, cudnnAddTensor, cudnnOpTensor and the op
   tensor descriptor; and the elementwise implementation table that these and
   cudnnTransformTensor share.

   Main decision: the four operations are one elementwise problem (problem/ewise.h) with different
   ops, so each backend has one engine for them: a vectorized path for packed tensors, a generic
   strided path for everything else, and on CUDA a tiled transpose for layout changes.

   Documented rules implemented here (cuDNN 8.2 API reference):
   - cudnnSetTensor: the value has y's data type (for the vector types, one scalar of the
     vector's scalar type); every addressed element is written.
   - cudnnAddTensor: "each dimension of A must match the corresponding dimension of C or be 1";
     more than 5 dimensions: NOT_SUPPORTED. The text returns BAD_PARAM when A and C differ in
     data type; but the call is cudnnTransformTensor's with a broadcast, which converts (a float
     bias onto half data is well defined), so any two types it takes are accepted here too and
     logged at info level (INT64: NOT_SUPPORTED).
   - cudnnOpTensor: C = op(alpha1 * A, alpha2 * B) + beta * C; A's dims equal C's, B's equal
     C's or are 1 (BAD_PARAM); A and B of one type (BAD_PARAM); B is ignored by SQRT and NOT; the
     supported (compType, A/B, C) combinations are the table below, anything else and more than
     5 dimensions are NOT_SUPPORTED (so are the vector types, "NCHW_VECT_C is not supported as
     an input tensor format"). NOT computes 1 - alpha1 * A, as the real library does.
   - Negative strides (reversed views, the pointer at element (0,...,0)): taken by all four and
     by cudnnTransformTensor, as NVIDIA's library takes them (measured for cudnnTransformTensor
     and cudnnAddTensor); the elementwise normalization turns y's reversed dims around
     (problem/ewise.h).
   - In place (both): C may be A or B when laid out alike, element i reading element i; the 8.2
     text's "if B is the same tensor as C, A must also be the same tensor as C" is not enforced
     (the result is right either way; logged at info level). C on an input broadcast into it,
     or on one laid out otherwise, is BAD_PARAM (ocd_check_alias). */
#include "ops/tensor_ops.h"

#include "core/argcheck.h"
#include "core/dtype.h"
#include "core/impl.h"
#include "core/reasons.h"

#include <string.h>

#define MAX_OP_DIMS 5 /* cudnnAddTensor and cudnnOpTensor: "up to dimension 5" */

/* ---- the elementwise implementation table ------------------------------------------------------- */

static const struct ocd_impl ewise_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:transpose_tiled", OCD_BACKEND_CUDA, ocd_cuda_ewise_transpose_applies, NULL,
                   ocd_cuda_ewise_transpose_run),
    OCD_IMPL_ENTRY("cuda:ewise_vec16", OCD_BACKEND_CUDA, ocd_cuda_ewise_vec_applies, NULL, ocd_cuda_ewise_vec_run),
    OCD_IMPL_ENTRY("cuda:ewise_strided", OCD_BACKEND_CUDA, ocd_cuda_ewise_strided_applies, NULL,
                   ocd_cuda_ewise_strided_run),
#endif
    OCD_IMPL_ENTRY("host:ewise", OCD_BACKEND_HOST, NULL, NULL, ocd_host_ewise_run),
};

cudnnStatus_t ocd_ewise_run(cudnnHandle_t handle, const struct ocd_ewise *e, const char *op)
{
    return ocd_impl_run(handle, ewise_impls, OCD_ARRAY_LEN(ewise_impls), e, op);
}

/* A copy of float or double data into its own type with alpha 1 and beta 0 moves bits, as
   NVIDIA's library does: Caffe2 transposes int32 and int64 tensors declared FLOAT and DOUBLE
   (transpose_op_cudnn.cc), whose small values are subnormal patterns and whose negative ones
   near zero are NaN patterns, which arithmetic would quiet or canonicalise. Such a copy is run
   as one of int32 scalars, exact on every engine (the CUDA kernels compute int32 in double),
   an eight-byte scalar as two of them (an innermost dimension of 2); the scaling factors stay
   1 and 0. Every other copy, and one whose views have no room for the extra dimension, keeps
   its views. */
static void int32_copy_views(const void *alpha, const void *beta, struct ocd_tensor_view *xv, struct ocd_tensor_view *yv)
{
    cudnnDataType_t t = yv->dtype;
    if (xv->dtype != t || (t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_DOUBLE)) return;
    if (ocd_scaling_value(t, alpha) != 1.0 || ocd_scaling_value(t, beta) != 0.0) return;
    if (t == CUDNN_DATA_DOUBLE) {
        if (yv->rank >= OCD_MAX_DIMS) return;
        struct ocd_tensor_view *v[2] = {xv, yv};
        for (int k = 0; k < 2; k++) {
            for (int d = 0; d < v[k]->rank; d++) v[k]->strides[d] *= 2;
            v[k]->dims[v[k]->rank] = 2;
            v[k]->strides[v[k]->rank] = 1;
            v[k]->rank++;
        }
    }
    xv->dtype = yv->dtype = CUDNN_DATA_INT32;
}

cudnnStatus_t ocd_ewise_copy(cudnnHandle_t handle, const void *alpha, const struct ocd_tensor_view *xv, const void *x,
                             const void *beta, const struct ocd_tensor_view *yv, void *y, const char *op)
{
    struct ocd_tensor_view xb = *xv, yb = *yv;
    int32_copy_views(alpha, beta, &xb, &yb);
    struct ocd_ewise e;
    ocd_ewise_build(&e, OCD_EWISE_COPY, &yb, &xb, NULL);
    ocd_ewise_bind(&e, y, x, NULL);
    e.alpha1 = ocd_scaling_value(yv->dtype, alpha);
    e.beta = ocd_scaling_value(yv->dtype, beta);
    return ocd_ewise_run(handle, &e, op);
}

/* ---- checks shared with transform.c and reduce.c ------------------------------------------------- */

cudnnStatus_t ocd_check_blend_args(cudnnHandle_t handle, const void *alpha, cudnnTensorDescriptor_t xDesc,
                                   const char *x_name, const void *x, const void *beta,
                                   cudnnTensorDescriptor_t yDesc, const char *y_name, const void *y,
                                   struct ocd_tensor_view *xv, struct ocd_tensor_view *yv)
{
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_tensor_get_taking(xDesc, x_name, OCD_TAKES_SHARED | OCD_TAKES_REVERSED, xv)); /* only read */
    OCD_TRY(ocd_tensor_get_taking(yDesc, y_name, OCD_TAKES_REVERSED, yv));
    OCD_CHECK_NOT_NULL(alpha);
    OCD_CHECK_NOT_NULL(beta);
    if (x == NULL || y == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the data of %s is NULL", x == NULL ? x_name : y_name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_check_compute_type(const struct ocd_tensor_view *v, const char *name)
{
    if (v->dtype == CUDNN_DATA_INT64)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s: data type %s is not supported by tensor operations",
                        name, ocd_dtype_name(v->dtype));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_check_broadcast(const struct ocd_tensor_view *small, const char *small_name,
                                  const struct ocd_tensor_view *big, const char *big_name)
{
    if (small->rank != big->rank)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dimensions and %s %d", small_name, small->rank,
                        big_name, big->rank);
    for (int d = 0; d < big->rank; d++)
        if (small->dims[d] != big->dims[d] && small->dims[d] != 1)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dimension %d of %s (%lld) is neither %s's (%lld) nor 1", d,
                            small_name, (long long)small->dims[d], big_name, (long long)big->dims[d]);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_check_no_overlap(const struct ocd_tensor_view *xv, const void *x,
                                   const struct ocd_tensor_view *yv, const void *y)
{
    return ocd_check_alias(y, yv, "the destination", x, xv, "the source", OCD_READ_MANY);
}

static cudnnStatus_t check_rank(const struct ocd_tensor_view *v, const char *name)
{
    if (v->rank > MAX_OP_DIMS)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s has %d dimensions; this operation supports up to %d",
                        name, v->rank, MAX_OP_DIMS);
    return CUDNN_STATUS_SUCCESS;
}

/* How C's elements read an input of C's shape or broadcast into it (ocd_check_alias): a
   broadcast element is read by many of C's, so C may lie on it only when the shapes are one. */
static enum ocd_read read_of(const struct ocd_tensor_view *in, const struct ocd_tensor_view *c)
{
    return ocd_view_same_dims(in, c) ? OCD_READ_SAME : OCD_READ_MANY;
}

/* ---- cudnnSetTensor, cudnnScaleTensor, cudnnAddTensor ------------------------------------------------ */

cudnnStatus_t CUDNNWINAPI cudnnSetTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y,
                                         const void *valuePtr)
{
    OCD_LOG_API("handle=%p yDesc=%p y=%p valuePtr=%p", (void *)handle, (void *)yDesc, y, valuePtr);
    OCD_CHECK_HANDLE(handle);
    struct ocd_tensor_view yv;
    OCD_TRY(ocd_tensor_get_taking(yDesc, "yDesc", OCD_TAKES_REVERSED, &yv));
    OCD_CHECK_NOT_NULL(y);
    OCD_CHECK_NOT_NULL(valuePtr);
    uint64_t fill = 0;
    memcpy(&fill, valuePtr, ocd_dtype_scalar_size(yv.dtype));
    return ocd_ewise_fill(handle, &yv, y, fill, "cudnnSetTensor");
}

cudnnStatus_t ocd_ewise_fill(cudnnHandle_t handle, const struct ocd_tensor_view *yv, void *y, uint64_t fill,
                             const char *op)
{
    struct ocd_ewise e;
    ocd_ewise_build(&e, OCD_EWISE_FILL, yv, NULL, NULL);
    ocd_ewise_bind(&e, y, NULL, NULL);
    e.fill = fill;
    return ocd_ewise_run(handle, &e, op);
}

cudnnStatus_t CUDNNWINAPI cudnnScaleTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y,
                                           const void *alpha)
{
    OCD_LOG_API("handle=%p yDesc=%p y=%p alpha=%p", (void *)handle, (void *)yDesc, y, alpha);
    OCD_CHECK_HANDLE(handle);
    struct ocd_tensor_view yv;
    OCD_TRY(ocd_tensor_get_taking(yDesc, "yDesc", OCD_TAKES_REVERSED, &yv));
    OCD_CHECK_NOT_NULL(y);
    OCD_CHECK_NOT_NULL(alpha);
    OCD_TRY(ocd_check_compute_type(&yv, "yDesc"));
    /* y = alpha * y, as a copy of y onto itself: each element is read before it is written. */
    struct ocd_ewise e;
    ocd_ewise_build(&e, OCD_EWISE_COPY, &yv, &yv, NULL);
    ocd_ewise_bind(&e, y, y, NULL);
    e.alpha1 = ocd_scaling_value(yv.dtype, alpha);
    return ocd_ewise_run(handle, &e, "cudnnScaleTensor");
}

cudnnStatus_t CUDNNWINAPI cudnnAddTensor(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t aDesc,
                                         const void *A, const void *beta, const cudnnTensorDescriptor_t cDesc,
                                         void *C)
{
    OCD_LOG_API("handle=%p alpha=%p aDesc=%p A=%p beta=%p cDesc=%p C=%p", (void *)handle, alpha, (void *)aDesc,
                A, beta, (void *)cDesc, C);
    struct ocd_tensor_view av, cv;
    OCD_TRY(ocd_check_blend_args(handle, alpha, aDesc, "aDesc", A, beta, cDesc, "cDesc", C, &av, &cv));
    OCD_TRY(ocd_check_broadcast(&av, "aDesc", &cv, "cDesc"));
    OCD_TRY(check_rank(&cv, "cDesc"));
    OCD_TRY(ocd_check_compute_type(&av, "aDesc"));
    OCD_TRY(ocd_check_compute_type(&cv, "cDesc"));
    OCD_TRY(ocd_check_alias(C, &cv, "C", A, &av, "A", read_of(&av, &cv)));
    if (ocd_dtype_scalar(av.dtype) != ocd_dtype_scalar(cv.dtype))
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "adding %s to %s (the 8.2 text asks for one type)",
                        ocd_dtype_name(av.dtype), ocd_dtype_name(cv.dtype));
    return ocd_ewise_copy(handle, alpha, &av, A, beta, &cv, C, "cudnnAddTensor");
}

/* ---- the op tensor descriptor ----------------------------------------------------------------- */

struct cudnnOpTensorStruct {
    struct ocd_object obj;
    cudnnOpTensorOp_t op;   /* a fresh descriptor is zeroed: ADD, FLOAT, NOT_PROPAGATE_NAN */
    cudnnDataType_t comp_type;
    cudnnNanPropagation_t nan_opt;
};

cudnnStatus_t CUDNNWINAPI cudnnCreateOpTensorDescriptor(cudnnOpTensorDescriptor_t *opTensorDesc)
{
    OCD_LOG_API("opTensorDesc=%p", (void *)opTensorDesc);
    return ocd_object_create(OCD_OBJ_OP_TENSOR, sizeof(struct cudnnOpTensorStruct), (void **)opTensorDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyOpTensorDescriptor(cudnnOpTensorDescriptor_t opTensorDesc)
{
    OCD_LOG_API("opTensorDesc=%p", (void *)opTensorDesc);
    if (opTensorDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_OP_TENSOR, opTensorDesc);
}

/* The compute type is any valid data type here: whether the operation supports it is decided by
   cudnnOpTensor (NOT_SUPPORTED there), which sees the tensors' types too. */
cudnnStatus_t CUDNNWINAPI cudnnSetOpTensorDescriptor(cudnnOpTensorDescriptor_t opTensorDesc,
                                                     cudnnOpTensorOp_t opTensorOp, cudnnDataType_t opTensorCompType,
                                                     cudnnNanPropagation_t opTensorNanOpt)
{
    OCD_LOG_API("opTensorDesc=%p opTensorOp=%d opTensorCompType=%d opTensorNanOpt=%d", (void *)opTensorDesc,
                (int)opTensorOp, (int)opTensorCompType, (int)opTensorNanOpt);
    OCD_CHECK_OBJECT(OCD_OBJ_OP_TENSOR, opTensorDesc);
    if ((unsigned)opTensorOp > CUDNN_OP_TENSOR_NOT)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid opTensorOp %d", (int)opTensorOp);
    if (!ocd_dtype_valid(opTensorCompType))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid opTensorCompType %d", (int)opTensorCompType);
    if ((unsigned)opTensorNanOpt > CUDNN_PROPAGATE_NAN)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid opTensorNanOpt %d", (int)opTensorNanOpt);
    opTensorDesc->op = opTensorOp;
    opTensorDesc->comp_type = opTensorCompType;
    opTensorDesc->nan_opt = opTensorNanOpt;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetOpTensorDescriptor(const cudnnOpTensorDescriptor_t opTensorDesc,
                                                     cudnnOpTensorOp_t *opTensorOp, cudnnDataType_t *opTensorCompType,
                                                     cudnnNanPropagation_t *opTensorNanOpt)
{
    OCD_LOG_API("opTensorDesc=%p", (void *)opTensorDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_OP_TENSOR, opTensorDesc);
    OCD_CHECK_NOT_NULL(opTensorOp);
    OCD_CHECK_NOT_NULL(opTensorCompType);
    OCD_CHECK_NOT_NULL(opTensorNanOpt);
    *opTensorOp = opTensorDesc->op;
    *opTensorCompType = opTensorDesc->comp_type;
    *opTensorNanOpt = opTensorDesc->nan_opt;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- cudnnOpTensor -------------------------------------------------------------------------------- */

/* The (compType, A and B, C) combinations of the cuDNN 8.2 cudnnOpTensor table (the same set a
   real caller checks before it calls: OpenVINO's NVIDIA plugin, cudnn_tensor_op_base.cpp). */
static const cudnnDataType_t op_tensor_types[][3] = {
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_HALF},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, CUDNN_DATA_INT8},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16},
};

static bool op_tensor_types_supported(cudnnDataType_t comp, cudnnDataType_t ab, cudnnDataType_t c)
{
    for (size_t i = 0; i < OCD_ARRAY_LEN(op_tensor_types); i++)
        if (op_tensor_types[i][0] == comp && op_tensor_types[i][1] == ab && op_tensor_types[i][2] == c) return true;
    return false;
}

cudnnStatus_t CUDNNWINAPI cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t opTensorDesc,
                                        const void *alpha1, const cudnnTensorDescriptor_t aDesc, const void *A,
                                        const void *alpha2, const cudnnTensorDescriptor_t bDesc, const void *B,
                                        const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    OCD_LOG_API("handle=%p opTensorDesc=%p alpha1=%p aDesc=%p A=%p alpha2=%p bDesc=%p B=%p beta=%p cDesc=%p C=%p",
                (void *)handle, (void *)opTensorDesc, alpha1, (void *)aDesc, A, alpha2, (void *)bDesc, B, beta,
                (void *)cDesc, C);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_OP_TENSOR, opTensorDesc);
    static const enum ocd_ewise_op ops[] = {OCD_EWISE_ADD, OCD_EWISE_MUL, OCD_EWISE_MIN,
                                            OCD_EWISE_MAX, OCD_EWISE_SQRT, OCD_EWISE_NOT};
    enum ocd_ewise_op op = ops[opTensorDesc->op];
    bool binary = ocd_ewise_inputs(op) == 2; /* B is ignored by SQRT and NOT */
    struct ocd_tensor_view av, bv, cv;
    OCD_TRY(ocd_tensor_get_taking(aDesc, "aDesc", OCD_TAKES_REVERSED, &av));
    if (binary) OCD_TRY(ocd_tensor_get_taking(bDesc, "bDesc", OCD_TAKES_REVERSED, &bv));
    OCD_TRY(ocd_tensor_get_taking(cDesc, "cDesc", OCD_TAKES_REVERSED, &cv));
    OCD_CHECK_NOT_NULL(alpha1);
    OCD_CHECK_NOT_NULL(beta);
    OCD_CHECK_NOT_NULL(A);
    OCD_CHECK_NOT_NULL(C);
    if (binary) {
        OCD_CHECK_NOT_NULL(alpha2);
        OCD_CHECK_NOT_NULL(B);
    }
    if (!ocd_view_same_dims(&av, &cv))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "aDesc's dimensions differ from cDesc's");
    if (binary) {
        OCD_TRY(ocd_check_broadcast(&bv, "bDesc", &cv, "cDesc"));
        if (av.dtype != bv.dtype)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "aDesc is %s and bDesc %s: A and B must be of one type",
                            ocd_dtype_name(av.dtype), ocd_dtype_name(bv.dtype));
        OCD_TRY(ocd_check_alias(C, &cv, "C", B, &bv, "B", read_of(&bv, &cv)));
        if (B == C && A != C && (ocd_log_mask & CUDNN_SEV_INFO_EN))
            ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                            "B is C but A is not (the 8.2 text asks for A too): element by element, the result is right");
    }
    OCD_TRY(ocd_check_alias(C, &cv, "C", A, &av, "A", OCD_READ_SAME));
    OCD_TRY(check_rank(&cv, "cDesc"));
    if (!op_tensor_types_supported(opTensorDesc->comp_type, av.dtype, cv.dtype))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "compute type %s with A %s and C %s is not a supported combination",
                        ocd_dtype_name(opTensorDesc->comp_type), ocd_dtype_name(av.dtype), ocd_dtype_name(cv.dtype));
    struct ocd_ewise e;
    ocd_ewise_build(&e, op, &cv, &av, binary ? &bv : NULL);
    e.propagate_nan = opTensorDesc->nan_opt == CUDNN_PROPAGATE_NAN;
    ocd_ewise_bind(&e, C, A, binary ? B : NULL);
    e.alpha1 = ocd_scaling_value(cv.dtype, alpha1);
    e.alpha2 = binary ? ocd_scaling_value(cv.dtype, alpha2) : 0;
    e.beta = ocd_scaling_value(cv.dtype, beta);
    return ocd_ewise_run(handle, &e, "cudnnOpTensor");
}
