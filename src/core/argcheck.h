/* argcheck.h: argument checks that many API entry points make, each returning the documented
   status with a logged reason (or SUCCESS), so that every op words them the same way. */
#ifndef OCD_CORE_ARGCHECK_H
#define OCD_CORE_ARGCHECK_H

#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BAD_PARAM when alpha or beta is NULL. */
cudnnStatus_t ocd_check_scaling(const void *alpha, const void *beta);

/* BAD_PARAM naming the pointer when ptr is NULL. */
cudnnStatus_t ocd_check_data(const void *ptr, const char *name);

/* NOT_SUPPORTED unless the view holds float, double, half or bfloat16 data: the types of the
   floating-point ops (activation, softmax, pooling, ...). */
cudnnStatus_t ocd_check_float_type(const struct ocd_tensor_view *v, const char *name);

/* `status` (the op's documented one) unless the views have the same dims / the same data type. */
cudnnStatus_t ocd_check_same_dims(cudnnStatus_t status, const struct ocd_tensor_view *a, const char *a_name,
                                  const struct ocd_tensor_view *b, const char *b_name);
cudnnStatus_t ocd_check_same_type(cudnnStatus_t status, const struct ocd_tensor_view *a, const char *a_name,
                                  const struct ocd_tensor_view *b, const char *b_name);

/* Whether the byte ranges [a, a + an) and [b, b + bn) intersect (a NULL pointer meets nothing). */
bool ocd_bytes_meet(const void *a, size_t an, const void *b, size_t bn);
/* Whether the byte ranges a tensor at a and one at b can touch intersect (a view with negative
   strides reaches below its pointer: core/tensor.h). */
bool ocd_spans_meet(const void *a, const struct ocd_tensor_view *av, const void *b, const struct ocd_tensor_view *bv);

/* How a call reads an input while it writes an output (ocd_check_alias). */
enum ocd_read {
    OCD_READ_NONE, /* the call does not read the input (a mode that needs another tensor) */
    OCD_READ_SAME, /* output element i reads input element i and nothing else of it */
    OCD_READ_MANY, /* an output element reads several input elements (windows, slices, sums) */
};

/* The aliasing rule of every op: an output may share memory with an input wherever the result
   stays right, and only there. OCD_READ_NONE: accepted; an overlap is logged at info level (the
   8.2 text forbids some of these calls, NVIDIA's library runs them and programs make them, see
   docs/compatibility.md). OCD_READ_SAME: the same address with the same strides and data type
   is the in-place call the documentation allows ("allowed only if the descriptors are
   identical"); the same address laid out otherwise is BAD_PARAM (only the address is compared:
   tensors interleaved in each other's gaps stay legal). OCD_READ_MANY: BAD_PARAM when the byte
   ranges the two can touch intersect, since a written element would be read again as input.
   A NULL pointer aliases nothing. */
cudnnStatus_t ocd_check_alias(const void *out, const struct ocd_tensor_view *out_view, const char *out_name,
                              const void *in, const struct ocd_tensor_view *in_view, const char *in_name,
                              enum ocd_read read);

/* The checks of an op that maps x to a y of the same shape (activation and softmax forward): both
   descriptors live and set, both pointers given, the same dims and data type (BAD_PARAM), y on x
   only with the same strides (BAD_PARAM), a floating-point type (NOT_SUPPORTED). Fills the views.
   ocd_check_map_any_type: the same without the floating-point check, for an op taking more types. */
cudnnStatus_t ocd_check_map(cudnnTensorDescriptor_t xDesc, const void *x, cudnnTensorDescriptor_t yDesc, const void *y,
                            struct ocd_tensor_view *xv, struct ocd_tensor_view *yv);
cudnnStatus_t ocd_check_map_any_type(cudnnTensorDescriptor_t xDesc, const void *x, cudnnTensorDescriptor_t yDesc,
                                     const void *y, struct ocd_tensor_view *xv, struct ocd_tensor_view *yv);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_ARGCHECK_H */
