/* unimplemented.h: the body of every API function listed in api/unimplemented.txt.

   tools/gen_api.py writes those functions (build/gen/stubs_<sublibrary>.c); each one logs
   "not implemented yet: <name>" and returns CUDNN_STATUS_NOT_SUPPORTED. A test calls every listed
   function and checks exactly that, and the linker keeps the list honest the other way: a listed
   function that is also implemented is defined twice and the build fails. */
#ifndef OCD_CORE_UNIMPLEMENTED_H
#define OCD_CORE_UNIMPLEMENTED_H

#include "core/ocd.h"

cudnnStatus_t ocd_unimplemented(const char *func);

#endif /* OCD_CORE_UNIMPLEMENTED_H */
