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

cudnnStatus_t ocd_check_in_place(const void *out, const struct ocd_tensor_view *out_view, const char *out_name,
                                 const void *in, const struct ocd_tensor_view *in_view, const char *in_name)
{
    if (out == in && !ocd_view_same_strides(out_view, in_view))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s in place but their strides differ", out_name, in_name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_check_map(cudnnTensorDescriptor_t xDesc, const void *x, cudnnTensorDescriptor_t yDesc, const void *y,
                            struct ocd_tensor_view *xv, struct ocd_tensor_view *yv)
{
    OCD_TRY(ocd_tensor_get(xDesc, "xDesc", xv));
    OCD_TRY(ocd_tensor_get(yDesc, "yDesc", yv));
    OCD_TRY(ocd_check_data(x, "x"));
    OCD_TRY(ocd_check_data(y, "y"));
    OCD_TRY(ocd_check_same_dims(CUDNN_STATUS_BAD_PARAM, xv, "xDesc", yv, "yDesc"));
    OCD_TRY(ocd_check_same_type(CUDNN_STATUS_BAD_PARAM, xv, "xDesc", yv, "yDesc"));
    OCD_TRY(ocd_check_in_place(y, yv, "y", x, xv, "x"));
    return ocd_check_float_type(xv, "xDesc");
}
