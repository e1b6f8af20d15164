/* dynload.h: a shared library of the CUDA toolkit opened at run time (cuBLAS, cuFFT).

   The libraries never link them: they must load and run where the toolkit's libraries are not
   installed (the entries that need one then say so). ocd_dynload tries a list of file names in
   order and takes the first that opens and exports every required function; it never aborts and
   reports, for each name tried, why it was passed over. The header is C and C++. */
#ifndef OCD_CUDA_DYNLOAD_H
#define OCD_CUDA_DYNLOAD_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A function to resolve: its exported name and where its address goes (the address of a function
   pointer, cast: POSIX guarantees that dlsym's data pointer converts to a function pointer). */
struct ocd_dynload_sym {
    const char *name;
    void **slot;
    bool optional; /* missing: its slot is NULL and the library is still taken */
};

/* Opens the first of names[0..count) that loads and has every required symbol, fills every slot
   and returns that name; the library stays open for the life of the process. NULL when none
   qualifies: every slot is then NULL and why holds, per name, the loader's error or the missing
   function. */
const char *ocd_dynload(const char *const names[], size_t count, const struct ocd_dynload_sym syms[], size_t nsyms,
                        char *why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_DYNLOAD_H */
