/* tensors.h: test helpers between reference layouts (ref/tensor_ops.h) and the API: descriptors
   for a layout, host buffers of a layout, scaling factors of the right width, and the comparison
   of a whole span, gaps included. (tview.h's tbuf_unchanged checks that a failed call wrote
   nothing.) */
#ifndef OCD_TESTS_TENSORS_H
#define OCD_TESTS_TENSORS_H

#include "ref/tensor_ops.h"
#include "test.h"
#include "tview.h"

/* A descriptor of the layout (cudnnSetTensorNdDescriptor); destroy with cudnnDestroyTensorDescriptor. */
cudnnTensorDescriptor_t tdesc(const struct rtensor *t);
/* Bytes of the layout's span. */
size_t rt_bytes(const struct rtensor *t);
/* A malloc'ed host buffer of the layout's span, every scalar random in [lo, hi]. */
void *thost_random(const struct rtensor *t, double lo, double hi);
/* A malloc'ed host buffer of the layout's span, every byte 0xFF (NaN for float types). */
void *thost_poison(const struct rtensor *t);

/* alpha and beta: a double for DOUBLE data, a float otherwise. */
struct tscale {
    float f;
    double d;
};
const void *tscale(struct tscale *s, cudnnDataType_t data_type, double v);

/* Downloads the layout's span from dev and compares every scalar with want (rt_span(t)
   values) at the type's tolerance, or tol when tol >= 0. */
bool tcompare_span(const struct rtensor *t, const void *dev, const double *want, double tol, const char *what);

#endif /* OCD_TESTS_TENSORS_H */
