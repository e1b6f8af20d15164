/* reasons.h: the shared vocabulary of "why an implementation does not apply" (see impl.h).
   One wording per reason keeps logs greppable; add a reason here before using a new one twice. */
#ifndef OCD_CORE_REASONS_H
#define OCD_CORE_REASONS_H

#define OCD_REASON_BACKEND "runs on another backend"
#define OCD_REASON_DISABLED "switched off by OPENCUDNN_DISABLE"
#define OCD_REASON_DTYPE "data type not supported by this implementation"
#define OCD_REASON_LAYOUT "tensor layout not supported by this implementation"
#define OCD_REASON_NOT_PACKED "tensors are not densely packed"
#define OCD_REASON_ALIGNMENT "pointers or sizes not aligned for vector access"
#define OCD_REASON_RANK "number of dimensions not supported by this implementation"
#define OCD_REASON_SHAPE "shape not supported by this implementation"
#define OCD_REASON_ARCH "needs a newer GPU architecture"
#define OCD_REASON_WORKSPACE "needs more workspace than given"
#define OCD_REASON_MATH "math type not supported by this implementation"
#define OCD_REASON_MODE "mode not supported by this implementation"
#define OCD_REASON_UNPROVEN "not yet run on a GPU (OPENCUDNN_UNPROVEN=1 enables it)"

#endif /* OCD_CORE_REASONS_H */
