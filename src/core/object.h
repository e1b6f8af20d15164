/* object.h: every handle and descriptor the API hands out is an ocd object: a struct that starts
   with an ocd_object header and is registered, while it lives, in one process-wide set.

   The set is what lets the API reject a destroyed, foreign or mistyped descriptor with BAD_PARAM
   instead of reading freed memory: ocd_object_check() looks the pointer up before anything
   dereferences it. The kind tag then tells a tensor descriptor from a filter descriptor. */
#ifndef OCD_CORE_OBJECT_H
#define OCD_CORE_OBJECT_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ocd_object_kind {
    OCD_OBJ_HANDLE = 0x4f434401,
    OCD_OBJ_TENSOR,
    OCD_OBJ_FILTER,
    OCD_OBJ_OP_TENSOR,
    OCD_OBJ_REDUCE_TENSOR,
    OCD_OBJ_TENSOR_TRANSFORM,
    OCD_OBJ_ACTIVATION,
    OCD_OBJ_POOLING,
    OCD_OBJ_LRN,
    OCD_OBJ_DROPOUT,
    OCD_OBJ_SPATIAL_TRANSFORMER,
    OCD_OBJ_CONVOLUTION,
    OCD_OBJ_ALGORITHM,
    OCD_OBJ_ALGORITHM_PERF,
    OCD_OBJ_FUSED_CONST_PACK,
    OCD_OBJ_FUSED_VARIANT_PACK,
    OCD_OBJ_FUSED_PLAN,
    OCD_OBJ_RNN,
    OCD_OBJ_RNN_DATA,
    OCD_OBJ_SEQ_DATA,
    OCD_OBJ_ATTN,
    OCD_OBJ_CTC_LOSS,
    OCD_OBJ_PERSISTENT_RNN_PLAN,
    OCD_OBJ_BACKEND
};

struct ocd_object {
    enum ocd_object_kind kind;
};

/* Allocates a zeroed object of `size` bytes (its first member an ocd_object), registers it and
   stores it in *out. Returns ALLOC_FAILED when memory is short; BAD_PARAM when out is NULL. */
cudnnStatus_t ocd_object_create(enum ocd_object_kind kind, size_t size, void **out);

/* Unregisters and frees a live object of that kind; BAD_PARAM when it is not one. */
cudnnStatus_t ocd_object_destroy(enum ocd_object_kind kind, void *obj);

/* True when obj is a live object of that kind. */
bool ocd_object_alive(enum ocd_object_kind kind, const void *obj);

/* The check every API entry makes on each descriptor argument: BAD_PARAM, logged with the
   argument's name, when it is NULL, destroyed, or of another kind. */
#define OCD_CHECK_OBJECT(kind, ptr)                                                             \
    do {                                                                                        \
        if (!ocd_object_alive((kind), (ptr)))                                                   \
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", #ptr,                            \
                            (ptr) == NULL ? "NULL" : "not a live descriptor of its type");       \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_OBJECT_H */
