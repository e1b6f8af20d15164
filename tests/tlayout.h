/* tlayout.h: test tensors in any layout. Tests keep values in logical row-major order
   (N, C, then the spatial dims) as double arrays; a tl_tensor stores them at the strides of a
   chosen layout, on the backend under test, and reads them back. Bytes of the buffer that hold
   no element stay poisoned (0xFF), so a kernel that writes outside the tensor shows. */
#ifndef OCD_TESTS_TLAYOUT_H
#define OCD_TESTS_TLAYOUT_H

#include "test.h"

enum tl_layout {
    TL_NCHW,      /* packed row-major */
    TL_NHWC,      /* packed, channels last */
    TL_NCHW_GAPS, /* spatial packed, gaps between channels and between images */
    TL_NHWC_GAPS, /* channels last, a gap between images */
    TL_STRIDED,   /* row-major order, every dimension padded */
    TL_LAYOUTS
};

struct tl_tensor {
    cudnnDataType_t dtype;
    int rank;
    int dims[8], strides[8];
    int64_t count; /* elements */
    int64_t span;  /* scalars from the first element to one past the last */
    cudnnTensorDescriptor_t desc;
};

const char *tl_layout_name(int layout);
/* Sets up t (and creates its descriptor) for the dims and layout given. */
void tl_init(struct tl_tensor *t, cudnnDataType_t dtype, int rank, const int dims[], int layout);
void tl_destroy(struct tl_tensor *t);
size_t tl_bytes(const struct tl_tensor *t);
/* Scalar offset of logical element i. */
int64_t tl_offset(const struct tl_tensor *t, int64_t i);
/* n random values in [lo, hi], rounded to dtype so that references see what is stored. */
void tl_random(cudnnDataType_t dtype, double *values, int64_t n, double lo, double hi);
/* A buffer on the backend under test holding the values (NULL: all poison). */
void *tl_upload(const struct tl_tensor *t, const double *values);
/* Reads the values back; returns false (and records a failure) when a byte outside the
   elements is no longer poison. */
bool tl_download(const struct tl_tensor *t, const void *buf, double *values);
/* Compares a buffer's values against want with relative tolerance tol (ttolerance of the data
   type the results were computed from). */
bool tl_check(const struct tl_tensor *t, const void *buf, const double *want, double tol, const char *what);
/* A scaling factor (alpha, beta) of the type the API reads for data of type t: double for
   double, float otherwise; storage holds it. */
const void *tl_scalar(cudnnDataType_t t, double v, double storage[1]);
/* The whole buffer, as raw bytes, for "nothing written" checks. */
void *tl_snapshot(const struct tl_tensor *t, const void *buf);
bool tl_unchanged(const struct tl_tensor *t, const void *buf, const void *snapshot);

#endif
