/* dropout.c: the dropout descriptor and cudnnDropoutForward (ops_infer), with the checks that
   cudnnDropoutBackward (dropout_train.c) shares.

   Main decision: the random state lives in the user's states buffer, not in the descriptor
   (problem/dropout.h), so that cudnnRestoreDropoutDescriptor can re-attach a buffer, as frameworks
   do before every call, without re-initialising it and without a device round trip. The
   descriptor keeps only what Get reports: the probability, the buffer and the seed. */
#include "ops/dropout.h"

#include "core/argcheck.h"
#include "core/dtype.h"
#include "core/reasons.h"

#include <math.h>
#include <stddef.h>

cudnnStatus_t CUDNNWINAPI cudnnCreateDropoutDescriptor(cudnnDropoutDescriptor_t *dropoutDesc)
{
    OCD_LOG_API("dropoutDesc=%p", (void *)dropoutDesc);
    return ocd_object_create(OCD_OBJ_DROPOUT, sizeof(struct cudnnDropoutStruct), (void **)dropoutDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc)
{
    OCD_LOG_API("dropoutDesc=%p", (void *)dropoutDesc);
    if (dropoutDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_DROPOUT, dropoutDesc);
}

/* The states hold one struct ocd_dropout_state, whatever the device. */
cudnnStatus_t CUDNNWINAPI cudnnDropoutGetStatesSize(cudnnHandle_t handle, size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p sizeInBytes=%p", (void *)handle, (void *)sizeInBytes);
    OCD_CHECK_HANDLE(handle);
    if (sizeInBytes == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    *sizeInBytes = sizeof(struct ocd_dropout_state);
    return CUDNN_STATUS_SUCCESS;
}

size_t ocd_dropout_reserve_bytes(int64_t count)
{
    return (size_t)((count + OCD_DROPOUT_WORD - 1) / OCD_DROPOUT_WORD) * sizeof(uint32_t);
}

cudnnStatus_t CUDNNWINAPI cudnnDropoutGetReserveSpaceSize(cudnnTensorDescriptor_t xdesc,
                                                          size_t *sizeInBytes)
{
    OCD_LOG_API("xdesc=%p sizeInBytes=%p", (void *)xdesc, (void *)sizeInBytes);
    struct ocd_tensor_view x;
    OCD_TRY(ocd_tensor_get(xdesc, "xdesc", &x));
    if (sizeInBytes == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    *sizeInBytes = ocd_dropout_reserve_bytes(ocd_view_count(&x));
    return CUDNN_STATUS_SUCCESS;
}

/* The checks Set and Restore share. A probability outside [0, 1] (or NaN) is not documented;
   it is rejected as BAD_PARAM. A buffer smaller than cudnnDropoutGetStatesSize is the
   documented INVALID_VALUE. The buffer must hold a struct ocd_dropout_state, hence the 8-byte
   alignment (every allocator of device memory gives at least 256). */
static cudnnStatus_t check_set_args(cudnnDropoutDescriptor_t desc, cudnnHandle_t handle,
                                    float dropout, const void *states, size_t bytes)
{
    OCD_CHECK_OBJECT(OCD_OBJ_DROPOUT, desc);
    OCD_CHECK_HANDLE(handle);
    if (!(dropout >= 0.0f && dropout <= 1.0f))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dropout %g is not a probability in [0, 1]", (double)dropout);
    if (states == NULL) return CUDNN_STATUS_SUCCESS;
    if (bytes < sizeof(struct ocd_dropout_state))
        return OCD_FAIL(CUDNN_STATUS_INVALID_VALUE,
                        "stateSizeInBytes %zu is below cudnnDropoutGetStatesSize (%zu)", bytes,
                        sizeof(struct ocd_dropout_state));
    if ((uintptr_t)states % 8 != 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "states %p is not aligned to 8 bytes", states);
    return CUDNN_STATUS_SUCCESS;
}

static void attach(cudnnDropoutDescriptor_t desc, float dropout, void *states, unsigned long long seed)
{
    desc->dropout = dropout;
    desc->states = states;
    desc->seed = seed;
}

/* With states, initialises them from the seed (the call number starts at 0) in the handle's
   memory; without, sets only the probability, as documented, keeping any states attached. */
cudnnStatus_t CUDNNWINAPI cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc,
                                                    cudnnHandle_t handle, float dropout,
                                                    void *states, size_t stateSizeInBytes,
                                                    unsigned long long seed)
{
    OCD_LOG_API("dropoutDesc=%p handle=%p dropout=%g states=%p stateSizeInBytes=%zu seed=%llu",
                (void *)dropoutDesc, (void *)handle, (double)dropout, states, stateSizeInBytes, seed);
    OCD_TRY(check_set_args(dropoutDesc, handle, dropout, states, stateSizeInBytes));
    if (states == NULL) {
        dropoutDesc->dropout = dropout;
        return CUDNN_STATUS_SUCCESS;
    }
    struct ocd_dropout_state init = {seed, 0, 0, 0};
    OCD_TRY(ocd_backend_copy(handle, states, &init, sizeof init, OCD_COPY_FROM_HOST));
    attach(dropoutDesc, dropout, states, seed);
    return CUDNN_STATUS_SUCCESS;
}

/* Attaches states that cudnnSetDropoutDescriptor initialised earlier, as they are now: the masks
   continue from the call number the buffer holds. The seed is only recorded for Get. */
cudnnStatus_t CUDNNWINAPI cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc,
                                                        cudnnHandle_t handle, float dropout,
                                                        void *states, size_t stateSizeInBytes,
                                                        unsigned long long seed)
{
    OCD_LOG_API("dropoutDesc=%p handle=%p dropout=%g states=%p stateSizeInBytes=%zu seed=%llu",
                (void *)dropoutDesc, (void *)handle, (double)dropout, states, stateSizeInBytes, seed);
    OCD_TRY(check_set_args(dropoutDesc, handle, dropout, states, stateSizeInBytes));
    if (states == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "states is NULL");
    attach(dropoutDesc, dropout, states, seed);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetDropoutDescriptor(cudnnDropoutDescriptor_t dropoutDesc,
                                                    cudnnHandle_t handle, float *dropout,
                                                    void **states, unsigned long long *seed)
{
    OCD_LOG_API("dropoutDesc=%p handle=%p", (void *)dropoutDesc, (void *)handle);
    OCD_CHECK_OBJECT(OCD_OBJ_DROPOUT, dropoutDesc);
    OCD_CHECK_HANDLE(handle);
    if (dropout == NULL || states == NULL || seed == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dropout, states or seed is NULL");
    *dropout = dropoutDesc->dropout;
    *states = dropoutDesc->states;
    *seed = dropoutDesc->seed;
    return CUDNN_STATUS_SUCCESS;
}

/* In-place use needs the two tensors to address the same memory element by element: identical
   dims and strides, or both packed row-major (then the shapes may differ, the counts agree). */
static bool same_layout(const struct ocd_tensor_view *a, const struct ocd_tensor_view *b)
{
    if (ocd_view_is_packed_rowmajor(a) && ocd_view_is_packed_rowmajor(b)) return true;
    if (!ocd_view_same_dims(a, b)) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->strides[d] != b->strides[d]) return false;
    return true;
}

/* The buffers a call writes may not overlap what it reads or writes elsewhere: the mask the
   forward writes (the reserve space's first bytes) against x, y and the states, y against the
   states the forward advances, and dx against the mask the backward reads. Each would leave a
   wrong result (Gorgonia's dropout passes its states buffer as the reserve: the state update
   then overwrites the mask the backward reads). BAD_PARAM, nothing written. */
static cudnnStatus_t check_overlaps(const struct ocd_dropout_problem *p, const void *reserve, size_t mask_bytes,
                                    bool forward)
{
    const void *states = p->states;
    const size_t src_bytes = (size_t)ocd_view_span_bytes(&p->src), dst_bytes = (size_t)ocd_view_span_bytes(&p->dst);
    const size_t state_bytes = sizeof(struct ocd_dropout_state);
    if (ocd_bytes_meet(reserve, mask_bytes, p->dst_data, dst_bytes))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the mask in reserveSpace overlaps the output: the result would be wrong");
    if (!forward) return CUDNN_STATUS_SUCCESS;
    if (ocd_bytes_meet(reserve, mask_bytes, p->src_data, src_bytes))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the mask written to reserveSpace overlaps x: the result would be wrong");
    if (ocd_bytes_meet(reserve, mask_bytes, states, state_bytes))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "reserveSpace overlaps the dropout states: advancing the states would overwrite the mask");
    if (ocd_bytes_meet(p->dst_data, dst_bytes, states, state_bytes))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "y overlaps the dropout states: the result would be wrong");
    return CUDNN_STATUS_SUCCESS;
}

/* cuDNN 8.2 documents BAD_PARAM for cudnnDropoutForward/Backward when the element counts or the
   data types of the two tensors differ, when the strides differ in place, when the reserve
   space is smaller than cudnnDropoutGetReserveSpaceSize, and when cudnnSetDropoutDescriptor was
   never called with non-NULL states. NULL pointers are rejected the same way, and overlaps that
   would give a wrong result (check_overlaps). */
cudnnStatus_t ocd_dropout_problem_init(cudnnHandle_t handle, cudnnDropoutDescriptor_t desc,
                                       cudnnTensorDescriptor_t src_desc, const void *src,
                                       cudnnTensorDescriptor_t dst_desc, void *dst,
                                       void *reserve, size_t reserve_bytes, bool forward,
                                       struct ocd_dropout_problem *p)
{
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_DROPOUT, desc);
    OCD_TRY(ocd_tensor_get(src_desc, "the input descriptor", &p->src));
    OCD_TRY(ocd_tensor_get(dst_desc, "the output descriptor", &p->dst));
    if (src == NULL || dst == NULL || reserve == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the input, the output or reserveSpace is NULL");
    if (desc->states == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "dropoutDesc has no states: cudnnSetDropoutDescriptor was never given any");
    p->count = ocd_view_count(&p->src);
    if (ocd_view_count(&p->dst) != p->count)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the input has %lld elements, the output %lld",
                        (long long)p->count, (long long)ocd_view_count(&p->dst));
    if (p->src.dtype != p->dst.dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the input is %s, the output %s",
                        ocd_dtype_name(p->src.dtype), ocd_dtype_name(p->dst.dtype));
    if (src == dst && !same_layout(&p->src, &p->dst))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "in place, but the two layouts differ");
    size_t need = ocd_dropout_reserve_bytes(p->count);
    if (reserve_bytes < need)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "reserveSpaceSizeInBytes %zu is below %zu",
                        reserve_bytes, need);
    p->src_data = src;
    p->dst_data = dst;
    p->mask = reserve;
    p->states = forward ? desc->states : NULL; /* the backward draws nothing */
    OCD_TRY(check_overlaps(p, reserve, need, forward));
    ocd_dropout_set_rate(p, desc->dropout);
    return CUDNN_STATUS_SUCCESS;
}

void ocd_dropout_set_rate(struct ocd_dropout_problem *p, float prob)
{
    /* prob * 2^32 is exact in double (prob is a float); 2^32 drops every element. */
    p->threshold = (uint64_t)(prob * 4294967296.0 + 0.5);
    p->scale = prob < 1.0f ? 1.0 / (1.0 - prob) : 0.0;
}

const char *ocd_dropout_applies(cudnnHandle_t handle, const void *problem)
{
    const struct ocd_dropout_problem *p = problem;
    switch (p->src.dtype) {
    case CUDNN_DATA_FLOAT: case CUDNN_DATA_DOUBLE: case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16:
        return NULL;
    default:
        return OCD_REASON_DTYPE;
    }
}

const char *ocd_dropout_applies_vec4(cudnnHandle_t handle, const void *problem)
{
    const struct ocd_dropout_problem *p = problem;
    const char *why = ocd_dropout_applies(handle, problem);
    if (why != NULL) return why;
    if (!ocd_view_is_packed_rowmajor(&p->src) || !ocd_view_is_packed_rowmajor(&p->dst))
        return OCD_REASON_NOT_PACKED;
    size_t vec = OCD_DROPOUT_BLOCK * ocd_dtype_scalar_size(p->src.dtype);
    if ((uintptr_t)p->src_data % vec != 0 || (uintptr_t)p->dst_data % vec != 0)
        return OCD_REASON_ALIGNMENT;
    return NULL;
}

static const struct ocd_impl forward_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:dropout_vec4", OCD_BACKEND_CUDA, ocd_dropout_applies_vec4, NULL, ocd_cuda_dropout_fwd_vec4),
    OCD_IMPL_ENTRY("cuda:dropout_strided", OCD_BACKEND_CUDA, ocd_dropout_applies, NULL, ocd_cuda_dropout_fwd_strided),
#endif
    OCD_IMPL_ENTRY("host:dropout", OCD_BACKEND_HOST, ocd_dropout_applies, NULL, ocd_host_dropout_fwd),
};

cudnnStatus_t CUDNNWINAPI cudnnDropoutForward(cudnnHandle_t handle,
                                              const cudnnDropoutDescriptor_t dropoutDesc,
                                              const cudnnTensorDescriptor_t xdesc, const void *x,
                                              const cudnnTensorDescriptor_t ydesc, void *y,
                                              void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p dropoutDesc=%p xdesc=%p x=%p ydesc=%p y=%p reserveSpace=%p "
                "reserveSpaceSizeInBytes=%zu",
                (void *)handle, (void *)dropoutDesc, (void *)xdesc, x, (void *)ydesc, y,
                reserveSpace, reserveSpaceSizeInBytes);
    struct ocd_dropout_problem p;
    OCD_TRY(ocd_dropout_problem_init(handle, dropoutDesc, xdesc, x, ydesc, y, reserveSpace,
                                     reserveSpaceSizeInBytes, true, &p));
    return ocd_dropout_forward_run(handle, &p, "cudnnDropoutForward");
}

void ocd_dropout_check_states(struct ocd_check_call *call, size_t field)
{
    ocd_check_add_exact(call, field, CUDNN_DATA_INT64, (int64_t)(sizeof(struct ocd_dropout_state) / sizeof(int64_t)));
}

void ocd_dropout_describe(const struct ocd_dropout_problem *p, bool forward, const char *op,
                          struct ocd_check_call *call)
{
    *call = (struct ocd_check_call){.op = op, .problem_size = sizeof *p};
    int64_t words = (int64_t)(ocd_dropout_reserve_bytes(p->count) / sizeof(uint32_t));
#define FIELD(f) offsetof(struct ocd_dropout_problem, f)
    ocd_check_add(call, FIELD(dst_data), &p->dst, true);
    ocd_check_add(call, FIELD(src_data), &p->src, false);
    if (forward) {
        ocd_check_add_exact(call, FIELD(mask), CUDNN_DATA_INT32, words);
        ocd_dropout_check_states(call, FIELD(states));
    } else {
        ocd_check_add_array(call, FIELD(mask), CUDNN_DATA_INT32, words, false);
    }
#undef FIELD
}

cudnnStatus_t ocd_dropout_forward_run(cudnnHandle_t handle, const struct ocd_dropout_problem *p, const char *op)
{
    if (!ocd_check_enabled()) return ocd_impl_run(handle, forward_impls, OCD_ARRAY_LEN(forward_impls), p, op);
    struct ocd_check_call call;
    ocd_dropout_describe(p, true, op, &call);
    return ocd_impl_run_checked(handle, forward_impls, OCD_ARRAY_LEN(forward_impls), p, &call);
}
