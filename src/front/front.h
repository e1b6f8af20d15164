/* front.h: libcudnn.so.8, the front library. It exports every API function; each forwards to the
   sub-library that implements it, loaded on the first call that needs it (DESIGN.md 1). The
   forwarders and the function-to-library table are generated from the manifest by
   tools/gen_api.py (build/gen/front_table.c). */
#ifndef OCD_FRONT_FRONT_H
#define OCD_FRONT_FRONT_H

#include <stdatomic.h>
#include <stddef.h>

#include <cudnn.h>

struct ocd_front_entry {
    const char *name; /* the API function */
    int library;      /* index into ocd_front_libraries */
};

#define OCD_FRONT_NLIBS 6
extern const char *const ocd_front_libraries[OCD_FRONT_NLIBS];
extern const struct ocd_front_entry ocd_front_entries[];
extern const int ocd_front_nfuncs;
extern _Atomic(void *) ocd_front_cache[];

/* The address of API function `index` in its sub-library, or NULL (after printing why once)
   when the sub-library cannot be loaded or lacks the symbol. */
void *ocd_front_resolve(int index);

#endif /* OCD_FRONT_FRONT_H */
