/* dynload.cu: see dynload.h. A .cu file only because src/cuda holds the CUDA backend's sources;
   nothing here runs on the device. */
#include "cuda/dynload.h"

#include "core/platform.h"

#include <stdarg.h>
#include <stdio.h>

/* Appends a "; "-separated note to why. */
static void note(char *why, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size) return;
    if (*used > 0) *used += (size_t)snprintf(why + *used, size - *used, "; ");
    if (*used >= size) return;
    va_list ap;
    va_start(ap, fmt);
    *used += (size_t)vsnprintf(why + *used, size - *used, fmt, ap);
    va_end(ap);
}

const char *ocd_dynload(const char *const names[], size_t count, const struct ocd_dynload_sym syms[], size_t nsyms,
                        char *why, size_t why_size)
{
    size_t used = 0;
    if (why_size > 0) why[0] = '\0';
    for (size_t s = 0; s < nsyms; s++) *syms[s].slot = NULL;
    for (size_t i = 0; i < count; i++) {
        char err[512];
        void *lib = ocd_dl_open(names[i], err, sizeof err);
        if (lib == NULL) {
            note(why, why_size, &used, "%s", err);
            continue;
        }
        const char *missing = NULL;
        for (size_t s = 0; s < nsyms && missing == NULL; s++)
            if (!syms[s].optional && ocd_dl_symbol(lib, syms[s].name) == NULL) missing = syms[s].name;
        if (missing != NULL) {
            note(why, why_size, &used, "%s: no %s", names[i], missing);
            ocd_dl_close(lib);
            continue;
        }
        for (size_t s = 0; s < nsyms; s++) *syms[s].slot = ocd_dl_symbol(lib, syms[s].name);
        return names[i];
    }
    return NULL;
}
