/* transform.h: the entry-layer helper of the tensor transform descriptor (src/ops/transform.c)
   that callers inside the library use: ocd_transform_desc_set fills one for the folded
   convolution of cnn_infer. The padding and folding problem is in problem/transform.h. */
#ifndef OCD_OPS_TRANSFORM_H
#define OCD_OPS_TRANSFORM_H

#include "problem/transform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What cudnnSetTensorTransformDescriptor does once the descriptor is known to be live: the same
   checks and statuses (logged), nothing changed in t on failure. */
cudnnStatus_t ocd_transform_desc_set(cudnnTensorTransformDescriptor_t t, uint32_t nbDims,
                                     cudnnTensorFormat_t destFormat, const int32_t padBeforeA[],
                                     const int32_t padAfterA[], const uint32_t foldA[],
                                     cudnnFoldingDirection_t direction);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_TRANSFORM_H */
