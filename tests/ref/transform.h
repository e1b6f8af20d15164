/* transform.h: reference for cudnnTransformTensorEx / cudnnTransformFilter padding and folding.

   Written as a scatter from the source (the library gathers), from the documented semantics:
   fold = zero-pad every dimension by padBefore/padAfter, then cut each spatial extent into blocks
   of its factor; the element at padded position (n, c, x...) goes to
   (n, blk * Cp + c, x / f...) with blk the intra-block offsets (x % f...) taken row-major and
   Cp the padded channel count. Unfold is the inverse followed by cutting the padding away. */
#ifndef OCD_TESTS_REF_TRANSFORM_H
#define OCD_TESTS_REF_TRANSFORM_H

#include "ref/tensor_ops.h"

struct ref_fold {
    int rank;
    int pad_before[RT_MAX_DIMS], pad_after[RT_MAX_DIMS];
    int factor[RT_MAX_DIMS]; /* per dimension; 1 for N, C and unfolded dims */
    bool unfold;
};

/* The destination dims of the transform applied to src dims. */
void ref_fold_dims(const struct ref_fold *f, const int src[], int dst[]);

/* want[] (rt_span(dt) scalars) = dst_before everywhere, then every logical destination element
   = quantize(alpha * transformed + beta * dst_before) (dst not read when beta == 0). */
void ref_fold(const struct ref_fold *f, double alpha, const struct rtensor *st, const void *src, double beta,
              const struct rtensor *dt, const void *dst_before, double *want);

#endif /* OCD_TESTS_REF_TRANSFORM_H */
