/* tensors.h: the tests' tensors, in two forms that share one module.

   - struct tview: values live in logical row-major order (N, C, then the spatial dims) in double
     arrays; a tview stores them, rounded to its type, at the strides of a layout on the backend
     under test, and reads them back. Scalars of the buffer that hold no element stay poisoned
     (0xFF); tview_gaps_intact checks that an op wrote none of them. A shift puts the first element
     that many scalars into the buffer, to misalign pointers. Most op tests use this form.
   - struct rtensor (ref/tensor_ops.h): a layout as the references of the tensor operations see
     it, vector types (INT8x4, INT8x32) included, compared over its whole span, gaps and all:
     tdesc, rt_bytes, thost_random, thost_poison, tcompare_span.
   Both share: scaling factors of the right width (tscale), flat arrays of values (tvalues_*), and
   the check that a failed call wrote nothing (tbuf_snapshot, tbuf_unchanged). */
#ifndef OCD_TESTS_TENSORS_H
#define OCD_TESTS_TENSORS_H

#include "ref/tensor_ops.h"
#include "test.h"

enum tview_layout {
    TV_NCHW,   /* packed row-major */
    TV_NHWC,   /* packed, channels last */
    TV_PADDED, /* row-major order with a gap after every dimension (innermost stride 2) */
    TV_NHWC_PADDED, /* channels last, each pixel's channels followed by a gap of 3 scalars */
    TV_NCHW_PADDED, /* row-major, spatial dims packed, a gap of 3 after each channel and 5 after each image */
    TV_LAYOUTS,     /* the count of the layouts above, which every type takes (tests rotate through them) */
    TV_NCHW_VECT = TV_LAYOUTS /* packed NCHW_VECT_C, the int8 vector types only: C in vectors of 4 or 32 */
};

#define TLEN(a) (sizeof(a) / sizeof((a)[0]))

struct tview {
    cudnnDataType_t dtype;
    int rank, dims[8], strides[8]; /* strides in scalars; with TV_NCHW_VECT strides[1] steps a vector */
    int vect;                      /* scalars per vector along dim 1 (TV_NCHW_VECT), else 1 */
    int64_t count; /* elements */
    int64_t span;  /* scalars from the first element to one past the last */
    int64_t shift; /* scalars of gap before the first element: 0 after tview_init */
    cudnnTensorDescriptor_t desc;
};

const char *tview_layout_name(int layout);
/* Sets up v and creates its descriptor (cudnnSetTensorNdDescriptor) for the dims and layout. */
void tview_init(struct tview *v, cudnnDataType_t dtype, int rank, const int dims[], int layout);
void tview_destroy(struct tview *v);
size_t tview_bytes(const struct tview *v);
/* Scalar offset of logical element i. */
int64_t tview_offset(const struct tview *v, int64_t i);
/* A buffer on the backend under test holding values (rounded to the type; values is updated to
   what was stored); NULL values: all poison. Returns the first element's address; free it with
   tview_free (tbuf_free too while shift is 0). */
void *tview_upload(const struct tview *v, double *values);
void tview_free(const struct tview *v, void *buf);
/* Stores values into an existing buffer of the view (the gaps poisoned), as tview_upload does. */
void tview_store(const struct tview *v, void *buf, double *values);
/* Reads the elements back. */
void tview_download(const struct tview *v, const void *buf, double *values);
/* True when no scalar of the buffer outside the elements (the gaps and the shift) was written. */
bool tview_gaps_intact(const struct tview *v, const void *buf, const char *what);
/* True when the elements hold exactly values (NaN matching NaN): an input left alone, or an
   output left unchanged by a call that failed. */
bool tview_holds(const struct tview *v, const void *buf, const double *values, const char *what);
/* The check of an op's blended output: the elements hold alpha * raw + beta * prior (prior left
   out when beta == 0: it may be NaN that must not leak) within tol, and no gap was written. */
bool tview_check_blend(const struct tview *v, const void *buf, const double *raw, const double *prior, double alpha,
                       double beta, double tol, const char *what);
/* Reads the elements back and compares them with want at the type's tolerance. */
bool tview_check(const struct tview *v, const void *buf, const double *want, const char *what);
/* n random values in [lo, hi]; n copies of value. */
double *tview_random(int64_t n, double lo, double hi);
double *tview_fill(int64_t n, double value);

/* The tensors of a bad-input test of an op that maps x to a y of the same shape: 2x3x4x5 float
   NCHW (f), the same in NHWC, in double and in int8, and other dims (4 and 5 swapped); buffers
   x (random) and y (3.0 everywhere: a rejected call must leave it so) in f's layout, and y in
   int8. */
struct tbad {
    struct tview f, nhwc, dbl, other, i8;
    double *x, *y;
    void *px, *py, *pi;
};
void tbad_init(struct tbad *b);
void tbad_free(struct tbad *b);

/* A copy of a buffer's bytes on the host, and the check that the buffer still holds them. */
void *tbuf_snapshot(const void *buf, size_t bytes);
bool tbuf_unchanged(const void *buf, const void *snapshot, size_t bytes, const char *what);

/* ---- flat arrays of values ------------------------------------------------------------------ */

/* A device buffer of n packed scalars of type t from v (rounded; v is updated to what was
   stored), and n scalars read back as a malloc'ed array of doubles. */
void *tvalues_upload(cudnnDataType_t t, double *v, int64_t n);
double *tvalues_download(cudnnDataType_t t, const void *dev, int64_t n);
/* Compares n device scalars of type t with want at tolerance tol. */
bool tvalues_check(cudnnDataType_t t, const void *dev, const double *want, int64_t n, double tol, const char *what);

/* alpha and beta: a double for DOUBLE data, a float otherwise. */
struct tscale {
    float f;
    double d;
};
const void *tscale(struct tscale *s, cudnnDataType_t data_type, double v);

/* ---- reference layouts (struct rtensor) ---------------------------------------------------- */

/* A descriptor of the layout (cudnnSetTensorNdDescriptor); destroy with cudnnDestroyTensorDescriptor. */
cudnnTensorDescriptor_t tdesc(const struct rtensor *t);
/* Bytes of the layout's span. */
size_t rt_bytes(const struct rtensor *t);
/* A malloc'ed host buffer of the layout's span, every scalar random in [lo, hi]. */
void *thost_random(const struct rtensor *t, double lo, double hi);
/* A malloc'ed host buffer of the layout's span, every byte 0xFF (NaN for float types). */
void *thost_poison(const struct rtensor *t);
/* Downloads the layout's span from dev and compares every scalar with want (rt_span(t)
   values) at the type's tolerance, or tol when tol >= 0. */
bool tcompare_span(const struct rtensor *t, const void *dev, const double *want, double tol, const char *what);

#endif /* OCD_TESTS_TENSORS_H */
