/* argcheck.c: argument checks shared by the API entry points (see argcheck.h). */
#include "core/argcheck.h"

#include "core/dtype.h"

cudnnStatus_t ocd_check_scaling(const void *alpha, const void *beta)
{
    if (alpha == NULL || beta == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", alpha == NULL ? "alpha" : "beta");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_check_data(const void *ptr, const char *name)
{
    if (ptr == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_check_float_type(const struct ocd_tensor_view *v, const char *name)
{
    switch (v->dtype) {
    case CUDNN_DATA_FLOAT: case CUDNN_DATA_DOUBLE: case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16:
        return CUDNN_STATUS_SUCCESS;
    default:
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s has data type %s; this op takes float, double, half and bfloat16",
                        name, ocd_dtype_name(v->dtype));
    }
}

cudnnStatus_t ocd_check_same_dims(cudnnStatus_t status, const struct ocd_tensor_view *a, const char *a_name,
                                  const struct ocd_tensor_view *b, const char *b_name)
{
    if (ocd_view_same_dims(a, b)) return CUDNN_STATUS_SUCCESS;
    char fa[256], fb[256];
    ocd_view_format(a, fa, sizeof fa);
    ocd_view_format(b, fb, sizeof fb);
    return OCD_FAIL(status, "the dims of %s (%s) and %s (%s) differ", a_name, fa, b_name, fb);
}

cudnnStatus_t ocd_check_same_type(cudnnStatus_t status, const struct ocd_tensor_view *a, const char *a_name,
                                  const struct ocd_tensor_view *b, const char *b_name)
{
    if (a->dtype == b->dtype) return CUDNN_STATUS_SUCCESS;
    return OCD_FAIL(status, "%s holds %s but %s holds %s", a_name, ocd_dtype_name(a->dtype), b_name,
                    ocd_dtype_name(b->dtype));
}

bool ocd_bytes_meet(const void *a, size_t an, const void *b, size_t bn)
{
    if (a == NULL || b == NULL) return false;
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a0 < b0 + bn && b0 < a0 + an;
}

bool ocd_spans_meet(const void *a, const struct ocd_tensor_view *av, const void *b, const struct ocd_tensor_view *bv)
{
    /* Each span starts below its pointer where the view has negative strides. */
    if (a == NULL || b == NULL) return false;
    const uintptr_t a0 = (uintptr_t)a - (uintptr_t)ocd_view_below_bytes(av);
    const uintptr_t b0 = (uintptr_t)b - (uintptr_t)ocd_view_below_bytes(bv);
    return a0 < b0 + (uintptr_t)ocd_view_span_bytes(bv) && b0 < a0 + (uintptr_t)ocd_view_span_bytes(av);
}

cudnnStatus_t ocd_check_alias(const void *out, const struct ocd_tensor_view *out_view, const char *out_name,
                              const void *in, const struct ocd_tensor_view *in_view, const char *in_name,
                              enum ocd_read read)
{
    if (out == NULL || in == NULL) return CUDNN_STATUS_SUCCESS;
    switch (read) {
    case OCD_READ_NONE:
        if ((ocd_log_mask & CUDNN_SEV_INFO_EN) && ocd_spans_meet(out, out_view, in, in_view))
            ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s overlaps %s, which this call does not read",
                            out_name, in_name);
        return CUDNN_STATUS_SUCCESS;
    case OCD_READ_SAME:
        if (out == in && (out_view->dtype != in_view->dtype || !ocd_view_same_strides(out_view, in_view)))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s in place but their strides or data types differ",
                            out_name, in_name);
        return CUDNN_STATUS_SUCCESS;
    case OCD_READ_MANY:
        if (ocd_spans_meet(out, out_view, in, in_view))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                            "%s overlaps %s, of which each %s element reads several: the result would be wrong",
                            out_name, in_name, out_name);
        return CUDNN_STATUS_SUCCESS;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_check_map_any_type(cudnnTensorDescriptor_t xDesc, const void *x, cudnnTensorDescriptor_t yDesc,
                                     const void *y, struct ocd_tensor_view *xv, struct ocd_tensor_view *yv)
{
    OCD_TRY(ocd_tensor_get(xDesc, "xDesc", xv));
    OCD_TRY(ocd_tensor_get(yDesc, "yDesc", yv));
    OCD_TRY(ocd_check_data(x, "x"));
    OCD_TRY(ocd_check_data(y, "y"));
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_BAD_PARAM, xv, "xDesc", yv, "yDesc"));
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_BAD_PARAM, xv, "xDesc", yv, "yDesc"));
    return ocd_check_alias(y, yv, "y", x, xv, "x", OCD_READ_SAME);
}

cudnnStatus_t ocd_check_map(cudnnTensorDescriptor_t xDesc, const void *x, cudnnTensorDescriptor_t yDesc, const void *y,
                            struct ocd_tensor_view *xv, struct ocd_tensor_view *yv)
{
    OCD_TRY(ocd_check_map_any_type(xDesc, x, yDesc, y, xv, yv));
    return ocd_check_float_type(xv, "xDesc");
}
