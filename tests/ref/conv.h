/* ref/conv.h: reference convolutions in double, written from the formulas of the cuDNN
   documentation, independent of src/. Tensors are packed logical arrays: x is n x c x in...,
   w is k x c/groups x filt..., y is n x k x out... (row-major, spatial dims last). */
#ifndef OCD_TESTS_REF_CONV_H
#define OCD_TESTS_REF_CONV_H

#include <stdbool.h>

struct ref_conv {
    int nsp; /* 2 or 3 */
    int n, c, k, groups;
    int in[3], filt[3], out[3];
    int pad[3], stride[3], dil[3];
    bool convolution; /* CUDNN_CONVOLUTION: the filter is mirrored */
};

/* Fills out[] from the output-dim formula; false when the filter does not fit. */
bool ref_conv_out_dims(struct ref_conv *t);
long ref_conv_x_count(const struct ref_conv *t);
long ref_conv_w_count(const struct ref_conv *t);
long ref_conv_y_count(const struct ref_conv *t);

/* y = conv(x, w) (overwritten). */
void ref_conv_fwd(const struct ref_conv *t, const double *x, const double *w, double *y);
/* dx = the adjoint of x -> conv(x, w), applied to dy (overwritten), computed by scattering. */
void ref_conv_bwd_data(const struct ref_conv *t, const double *dy, const double *w, double *dx);
/* dw = the gradient of sum(dy * conv(x, w)) with respect to w (overwritten), by scattering. */
void ref_conv_bwd_filter(const struct ref_conv *t, const double *x, const double *dy, double *dw);
/* The im2col matrix of a 2-D convolution: rows (n, p, q), columns (c, r, s). */
void ref_conv_im2col(const struct ref_conv *t, const double *x, double *col);

#endif
