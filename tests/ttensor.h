/* ttensor.h: test tensors of every layout: a descriptor, its strides, and moving logical values
   (a dense row-major double array over the dims) into and out of a buffer laid out by the strides.

   Layouts: NCHW and NHWC packed, and two with gaps between elements (NCHW order with every stride
   padded, the innermost one 2; channels-last with each pixel padded by 3 scalars), so that tests
   see strides other than the packed ones. The gaps are filled with a sentinel by ttensor_upload;
   ttensor_download reports any gap that changed, the check that an op wrote nothing outside its
   tensor. */
#ifndef OCD_TESTS_TTENSOR_H
#define OCD_TESTS_TTENSOR_H

#include "test.h"

#define TLEN(a) (sizeof(a) / sizeof((a)[0]))

enum tlayout { TL_NCHW, TL_NHWC, TL_GAPS, TL_NHWC_GAPS, TL_COUNT };

struct ttensor {
    cudnnDataType_t dtype;
    enum tlayout layout;
    int rank, dims[8], strides[8];
    int64_t count; /* elements */
    int64_t span;  /* scalars from the first element to the last */
    int64_t shift; /* scalars of gap before the first element (0 after init): misaligns pointers */
    cudnnTensorDescriptor_t desc;
};

const char *tlayout_name(enum tlayout l);
/* Sets up the tensor and its descriptor (cudnnSetTensorNdDescriptor). */
void ttensor_init(struct ttensor *t, cudnnDataType_t dtype, int rank, const int dims[], enum tlayout layout);
void ttensor_free(struct ttensor *t);
/* Scalar offset of the element at row-major position i. */
int64_t ttensor_offset(const struct ttensor *t, int64_t i);

/* A device buffer holding `logical` (rounded to the type) with sentinels in the gaps; `logical`
   is then updated to the values actually stored (after rounding). Returns the pointer of the
   first element, to be passed to the op and, at the end, to ttensor_release. */
void *ttensor_upload(const struct ttensor *t, double *logical);
void ttensor_release(const struct ttensor *t, void *ptr);
/* Reads the tensor back into `logical`; returns false (and records a failure) when a gap lost its
   sentinel. */
bool ttensor_download(const struct ttensor *t, const void *dev, double *logical, const char *what);
/* alpha/beta as the op takes them for data of type t: double for double data, else float. */
union tscalar {
    float f;
    double d;
};
const void *tscale(cudnnDataType_t t, double v, union tscalar *store);

/* Random logical values in [lo, hi]. */
double *trandom_values(int64_t n, double lo, double hi);
/* n copies of v. */
double *tconst_values(int64_t n, double v);
/* True when the device buffer still holds exactly what ttensor_upload put there (inputs untouched,
   outputs of a failed call unchanged). */
bool ttensor_unchanged(const struct ttensor *t, const void *dev, const double *logical, const char *what);

#endif /* OCD_TESTS_TTENSOR_H */
