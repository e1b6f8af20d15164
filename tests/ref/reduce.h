/* reduce.h: reference for cudnnReduceTensor: C = alpha * reduce(A) + beta * C. */
#ifndef OCD_TESTS_REF_REDUCE_H
#define OCD_TESTS_REF_REDUCE_H

#include "ref/tensor_ops.h"

/* Buffers hold their layouts' spans from the start (rt_origin: a reversed view's element
   (0,...,0) lies inside). want[] (rt_span(ct) scalars) = c_before everywhere, then every logical
   element of C =
   quantize(alpha * reduce + beta * c_before) (C not read when beta == 0). The reduced set of an
   output is every element of A that agrees with it on the dims where C is not 1, visited
   row-major; index[o] (o: C's logical row-major position; NULL: not wanted) receives the position
   in that visit of the element MIN, MAX or AMAX chose (the first among equals). */
void ref_reduce(cudnnReduceTensorOp_t op, bool propagate_nan, double alpha, const struct rtensor *at, const void *a,
                double beta, const struct rtensor *ct, const void *c_before, double *want, uint32_t *index);

#endif /* OCD_TESTS_REF_REDUCE_H */
