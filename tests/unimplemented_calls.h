/* unimplemented_calls.h: the table tools/gen_api.py writes (build/gen/unimplemented_calls.c):
   every function of api/unimplemented.txt, called with zeroed arguments. */
#ifndef OCD_TESTS_UNIMPLEMENTED_CALLS_H
#define OCD_TESTS_UNIMPLEMENTED_CALLS_H

#include <cudnn.h>

struct unimplemented_call {
    const char *name;
    cudnnStatus_t (*call)(void);
};

extern const struct unimplemented_call unimplemented_calls[];

#endif
