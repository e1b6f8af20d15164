/* reduce.c: the reduce tensor descriptor, cudnnGetReductionIndicesSize,
   cudnnGetReductionWorkspaceSize and cudnnReduceTensor.

   Main decision: the problem and its plan are built here once (ocd_reduce_build, declared in
   problem/reduce.h), so that the sizes the Get functions report are the ones cudnnReduceTensor
   checks, on either backend.

   Documented rules implemented here (cuDNN 8.2 API reference):
   - C = alpha * reduce(A) + beta * C; each dimension of C equals A's or is 1 (BAD_PARAM), and
     if they all match, nothing is reduced: BAD_PARAM.
   - Types: A and C DOUBLE, the compute type "assumed to be of type double" whatever the
     descriptor holds (another one, such as the FLOAT that programs set for every type, is logged
     at info level); or
     A and C each FLOAT, HALF, BFLOAT16 or INT8 with compute type FLOAT. One of A and C DOUBLE
     and not the other: BAD_PARAM; another compute type for them, or another data type:
     NOT_SUPPORTED.
   - Indices are computed for MIN, MAX and AMAX when the descriptor asks for
     FLATTENED_INDICES, "relative to the reduced dimensions, and flattened", one per element of
     C; only 32-bit indices are supported (NOT_SUPPORTED otherwise). For the other ops the
     request is ignored and the indices size is 0.
   - indicesSizeInBytes or workspaceSizeInBytes below what the Get functions report:
     CUDNN_STATUS_INVALID_VALUE.
   - A and C may have negative strides (reversed views, as NVIDIA's library takes at Set): both
     backends walk the problem's strides as signed 64-bit offsets, and the indices count the
     reduced elements in their logical order whatever the strides. */
#include "ops/tensor_ops.h"

#include "core/dtype.h"
#include "core/impl.h"
#include "problem/reduce.h"

#include <string.h>

struct cudnnReduceTensorStruct {
    struct ocd_object obj; /* a fresh descriptor is zeroed: ADD, FLOAT, no indices, 32-bit */
    cudnnReduceTensorOp_t op;
    cudnnDataType_t comp_type;
    cudnnNanPropagation_t nan_opt;
    cudnnReduceTensorIndices_t indices;
    cudnnIndicesType_t indices_type;
};

static const struct ocd_impl reduce_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:reduce", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_reduce_run),
#endif
    OCD_IMPL_ENTRY("host:reduce", OCD_BACKEND_HOST, NULL, NULL, ocd_host_reduce_run),
};

/* ---- the descriptor ---------------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnCreateReduceTensorDescriptor(cudnnReduceTensorDescriptor_t *reduceTensorDesc)
{
    OCD_LOG_API("reduceTensorDesc=%p", (void *)reduceTensorDesc);
    return ocd_object_create(OCD_OBJ_REDUCE_TENSOR, sizeof(struct cudnnReduceTensorStruct), (void **)reduceTensorDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyReduceTensorDescriptor(cudnnReduceTensorDescriptor_t reduceTensorDesc)
{
    OCD_LOG_API("reduceTensorDesc=%p", (void *)reduceTensorDesc);
    if (reduceTensorDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_REDUCE_TENSOR, reduceTensorDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnSetReduceTensorDescriptor(cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                         cudnnReduceTensorOp_t reduceTensorOp,
                                                         cudnnDataType_t reduceTensorCompType,
                                                         cudnnNanPropagation_t reduceTensorNanOpt,
                                                         cudnnReduceTensorIndices_t reduceTensorIndices,
                                                         cudnnIndicesType_t reduceTensorIndicesType)
{
    OCD_LOG_API("reduceTensorDesc=%p reduceTensorOp=%d reduceTensorCompType=%d reduceTensorNanOpt=%d "
                "reduceTensorIndices=%d reduceTensorIndicesType=%d",
                (void *)reduceTensorDesc, (int)reduceTensorOp, (int)reduceTensorCompType, (int)reduceTensorNanOpt,
                (int)reduceTensorIndices, (int)reduceTensorIndicesType);
    OCD_CHECK_OBJECT(OCD_OBJ_REDUCE_TENSOR, reduceTensorDesc);
    if ((unsigned)reduceTensorOp > CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid reduceTensorOp %d", (int)reduceTensorOp);
    if (!ocd_dtype_valid(reduceTensorCompType))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid reduceTensorCompType %d", (int)reduceTensorCompType);
    if ((unsigned)reduceTensorNanOpt > CUDNN_PROPAGATE_NAN)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid reduceTensorNanOpt %d", (int)reduceTensorNanOpt);
    if ((unsigned)reduceTensorIndices > CUDNN_REDUCE_TENSOR_FLATTENED_INDICES)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid reduceTensorIndices %d", (int)reduceTensorIndices);
    if ((unsigned)reduceTensorIndicesType > CUDNN_8BIT_INDICES)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid reduceTensorIndicesType %d", (int)reduceTensorIndicesType);
    reduceTensorDesc->op = reduceTensorOp;
    reduceTensorDesc->comp_type = reduceTensorCompType;
    reduceTensorDesc->nan_opt = reduceTensorNanOpt;
    reduceTensorDesc->indices = reduceTensorIndices;
    reduceTensorDesc->indices_type = reduceTensorIndicesType;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetReduceTensorDescriptor(const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                         cudnnReduceTensorOp_t *reduceTensorOp,
                                                         cudnnDataType_t *reduceTensorCompType,
                                                         cudnnNanPropagation_t *reduceTensorNanOpt,
                                                         cudnnReduceTensorIndices_t *reduceTensorIndices,
                                                         cudnnIndicesType_t *reduceTensorIndicesType)
{
    OCD_LOG_API("reduceTensorDesc=%p", (void *)reduceTensorDesc);
    OCD_CHECK_OBJECT(OCD_OBJ_REDUCE_TENSOR, reduceTensorDesc);
    OCD_CHECK_NOT_NULL(reduceTensorOp);
    OCD_CHECK_NOT_NULL(reduceTensorCompType);
    OCD_CHECK_NOT_NULL(reduceTensorNanOpt);
    OCD_CHECK_NOT_NULL(reduceTensorIndices);
    OCD_CHECK_NOT_NULL(reduceTensorIndicesType);
    *reduceTensorOp = reduceTensorDesc->op;
    *reduceTensorCompType = reduceTensorDesc->comp_type;
    *reduceTensorNanOpt = reduceTensorDesc->nan_opt;
    *reduceTensorIndices = reduceTensorDesc->indices;
    *reduceTensorIndicesType = reduceTensorDesc->indices_type;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- normalization and plan (see problem/reduce.h) ------------------------------------------------ */

/* Below this many elements per range, a range is not worth its own partial. */
#define MIN_CHUNK 8192
/* Enough parallel ranges to fill a large GPU several times over. */
#define TARGET_RANGES 4096

/* Merges neighbours d, d+1 of a list when every stride array walks them contiguously. */
static int merge(int rank, int64_t dims[], int64_t *strides[], int nstrides)
{
    if (rank == 0) return 0;
    int r = 0;
    for (int d = 1; d < rank; d++) {
        bool ok = true;
        for (int k = 0; k < nstrides; k++) ok &= strides[k][r] == strides[k][d] * dims[d];
        if (ok) {
            dims[r] *= dims[d];
            for (int k = 0; k < nstrides; k++) strides[k][r] = strides[k][d];
        } else {
            r++;
            dims[r] = dims[d];
            for (int k = 0; k < nstrides; k++) strides[k][r] = strides[k][d];
        }
    }
    return r + 1;
}

void ocd_reduce_build(struct ocd_reduce *r, const struct ocd_tensor_view *a, const struct ocd_tensor_view *c)
{
    memset(r, 0, sizeof *r);
    r->a_type = a->dtype;
    r->c_type = c->dtype;
    for (int d = 0; d < a->rank; d++) {
        if (a->dims[d] == 1) continue;
        if (c->dims[d] == 1) {
            r->red_dims[r->red_rank] = a->dims[d];
            r->a_red_strides[r->red_rank++] = a->strides[d];
        } else {
            r->kept_dims[r->kept_rank] = a->dims[d];
            r->a_kept_strides[r->kept_rank] = a->strides[d];
            r->c_strides[r->kept_rank++] = c->strides[d];
        }
    }
    int64_t *kept[2] = {r->a_kept_strides, r->c_strides}, *red[1] = {r->a_red_strides};
    r->kept_rank = merge(r->kept_rank, r->kept_dims, kept, 2);
    r->red_rank = merge(r->red_rank, r->red_dims, red, 1);
    r->outputs = r->reduced = 1;
    for (int d = 0; d < r->kept_rank; d++) r->outputs *= r->kept_dims[d];
    for (int d = 0; d < r->red_rank; d++) r->reduced *= r->red_dims[d];
    int64_t most = OCD_MAX((int64_t)1, TARGET_RANGES / r->outputs);
    r->splits = OCD_MIN(most, (r->reduced + MIN_CHUNK - 1) / MIN_CHUNK);
    if (r->splits < 1) r->splits = 1;
    r->chunk = (r->reduced + r->splits - 1) / r->splits;
    r->splits = (r->reduced + r->chunk - 1) / r->chunk; /* no empty range */
}

size_t ocd_reduce_workspace(const struct ocd_reduce *r)
{
    return r->splits > 1 ? (size_t)(r->outputs * r->splits) * sizeof(struct ocd_reduce_partial) : 0;
}

/* ---- the reduction ---------------------------------------------------------------------------- */

static bool reducible_type(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16 || t == CUDNN_DATA_INT8;
}

/* The argument checks the three calls share (BAD_PARAM), then the problem with its plan. */
static cudnnStatus_t prepare(cudnnHandle_t handle, cudnnReduceTensorDescriptor_t desc, cudnnTensorDescriptor_t aDesc,
                             cudnnTensorDescriptor_t cDesc, struct ocd_reduce *r)
{
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_REDUCE_TENSOR, desc);
    struct ocd_tensor_view av, cv;
    OCD_TRY(ocd_tensor_get_taking(aDesc, "aDesc", OCD_TAKES_REVERSED, &av));
    OCD_TRY(ocd_tensor_get_taking(cDesc, "cDesc", OCD_TAKES_REVERSED, &cv));
    OCD_TRY(ocd_check_broadcast(&cv, "cDesc", &av, "aDesc"));
    if (ocd_view_same_dims(&av, &cv))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "aDesc and cDesc have the same dimensions: nothing is reduced");
    if ((av.dtype == CUDNN_DATA_DOUBLE) != (cv.dtype == CUDNN_DATA_DOUBLE))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "aDesc is %s and cDesc %s: DOUBLE goes with DOUBLE only",
                        ocd_dtype_name(av.dtype), ocd_dtype_name(cv.dtype));
    ocd_reduce_build(r, &av, &cv);
    r->op = desc->op;
    r->propagate_nan = desc->nan_opt == CUDNN_PROPAGATE_NAN;
    r->double_compute = av.dtype == CUDNN_DATA_DOUBLE;
    r->want_indices = desc->indices == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES && ocd_reduce_selects(desc->op);
    return CUDNN_STATUS_SUCCESS;
}

/* What the reduction supports (NOT_SUPPORTED): the types, the compute type, 32-bit indices. */
static cudnnStatus_t check_supported(cudnnReduceTensorDescriptor_t desc, const struct ocd_reduce *r)
{
    if (!r->double_compute && (!reducible_type(r->a_type) || !reducible_type(r->c_type)))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "reductions of %s into %s are not supported",
                        ocd_dtype_name(r->a_type), ocd_dtype_name(r->c_type));
    if (r->double_compute && desc->comp_type != CUDNN_DATA_DOUBLE && (ocd_log_mask & CUDNN_SEV_INFO_EN))
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "compute type %s on DOUBLE data: computed in DOUBLE (the enum is assumed DOUBLE)",
                        ocd_dtype_name(desc->comp_type));
    if (!r->double_compute && desc->comp_type != CUDNN_DATA_FLOAT)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "compute type %s does not fit %s data",
                        ocd_dtype_name(desc->comp_type), ocd_dtype_name(r->a_type));
    if (r->want_indices && desc->indices_type != CUDNN_32BIT_INDICES)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "only 32-bit indices are supported (indices type %d)",
                        (int)desc->indices_type);
    return CUDNN_STATUS_SUCCESS;
}

static size_t indices_bytes(const struct ocd_reduce *r)
{
    return r->want_indices ? (size_t)r->outputs * sizeof(uint32_t) : 0;
}

/* What the two size queries share: the checks, then the size of the indices or the workspace. */
static cudnnStatus_t get_size(cudnnHandle_t handle, cudnnReduceTensorDescriptor_t desc, cudnnTensorDescriptor_t aDesc,
                              cudnnTensorDescriptor_t cDesc, size_t *sizeInBytes, bool workspace)
{
    struct ocd_reduce r;
    OCD_TRY(prepare(handle, desc, aDesc, cDesc, &r));
    OCD_CHECK_NOT_NULL(sizeInBytes);
    OCD_TRY(check_supported(desc, &r));
    *sizeInBytes = workspace ? ocd_reduce_workspace(&r) : indices_bytes(&r);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetReductionIndicesSize(cudnnHandle_t handle,
                                                       const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                       const cudnnTensorDescriptor_t aDesc,
                                                       const cudnnTensorDescriptor_t cDesc, size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p reduceTensorDesc=%p aDesc=%p cDesc=%p sizeInBytes=%p", (void *)handle,
                (void *)reduceTensorDesc, (void *)aDesc, (void *)cDesc, (void *)sizeInBytes);
    return get_size(handle, reduceTensorDesc, aDesc, cDesc, sizeInBytes, false);
}

cudnnStatus_t CUDNNWINAPI cudnnGetReductionWorkspaceSize(cudnnHandle_t handle,
                                                         const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                         const cudnnTensorDescriptor_t aDesc,
                                                         const cudnnTensorDescriptor_t cDesc, size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p reduceTensorDesc=%p aDesc=%p cDesc=%p sizeInBytes=%p", (void *)handle,
                (void *)reduceTensorDesc, (void *)aDesc, (void *)cDesc, (void *)sizeInBytes);
    return get_size(handle, reduceTensorDesc, aDesc, cDesc, sizeInBytes, true);
}

cudnnStatus_t CUDNNWINAPI cudnnReduceTensor(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                            void *indices, size_t indicesSizeInBytes, void *workspace,
                                            size_t workspaceSizeInBytes, const void *alpha,
                                            const cudnnTensorDescriptor_t aDesc, const void *A, const void *beta,
                                            const cudnnTensorDescriptor_t cDesc, void *C)
{
    OCD_LOG_API("handle=%p reduceTensorDesc=%p indices=%p indicesSizeInBytes=%zu workspace=%p "
                "workspaceSizeInBytes=%zu alpha=%p aDesc=%p A=%p beta=%p cDesc=%p C=%p",
                (void *)handle, (void *)reduceTensorDesc, indices, indicesSizeInBytes, workspace,
                workspaceSizeInBytes, alpha, (void *)aDesc, A, beta, (void *)cDesc, C);
    struct ocd_reduce r;
    OCD_TRY(prepare(handle, reduceTensorDesc, aDesc, cDesc, &r));
    OCD_CHECK_NOT_NULL(alpha);
    OCD_CHECK_NOT_NULL(beta);
    OCD_CHECK_NOT_NULL(A);
    OCD_CHECK_NOT_NULL(C);
    OCD_TRY(check_supported(reduceTensorDesc, &r));
    size_t need_indices = indices_bytes(&r), need_workspace = ocd_reduce_workspace(&r);
    if (indicesSizeInBytes < need_indices)
        return OCD_FAIL(CUDNN_STATUS_INVALID_VALUE, "indicesSizeInBytes is %zu; the reduction needs %zu",
                        indicesSizeInBytes, need_indices);
    if (need_indices > 0) OCD_CHECK_NOT_NULL(indices);
    if (workspaceSizeInBytes < need_workspace)
        return OCD_FAIL(CUDNN_STATUS_INVALID_VALUE, "workspaceSizeInBytes is %zu; the reduction needs %zu",
                        workspaceSizeInBytes, need_workspace);
    if (need_workspace > 0) OCD_CHECK_NOT_NULL(workspace);
    r.a = A;
    r.c = C;
    r.indices = need_indices ? indices : NULL;
    r.partials = need_workspace ? workspace : NULL;
    r.alpha = ocd_scaling_value(cDesc->dtype, alpha);
    r.beta = ocd_scaling_value(cDesc->dtype, beta);
    return ocd_reduce_run(handle, &r, "cudnnReduceTensor");
}

cudnnStatus_t ocd_reduce_run(cudnnHandle_t handle, const struct ocd_reduce *r, const char *op)
{
    return ocd_impl_run(handle, reduce_impls, OCD_ARRAY_LEN(reduce_impls), r, op);
}
