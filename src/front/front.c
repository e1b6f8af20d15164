/* front.c: the loader of the front library (libcudnn.so.8, cudnn64_8.dll; see front.h).

   A sub-library is looked for first in the directory the front itself was loaded from (by its
   full path: on Windows LoadLibraryEx then finds the sub-library's own imports in that folder
   too), then by the loader's own search (LD_LIBRARY_PATH and the run path; on Windows the
   application's folder, the system folders and PATH). When both fail the front prints one
   message to stderr, once per sub-library, naming the file, every place tried, the loader's
   error and which of the file's own dependencies cannot be loaded; the call then returns
   CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING. It never aborts. The system calls are
   core/platform.h's. */
#include "front/front.h"

#include "core/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ocd_mutex_t load_lock = OCD_MUTEX_INIT;
static void *library_handles[OCD_FRONT_NLIBS];
static int library_failed[OCD_FRONT_NLIBS]; /* 1 once the failure has been reported */

static void report_failure(int lib, const char *own_path, const char *own_error, const char *search_error)
{
    char missing[512] = "";
    FILE *probe = fopen(own_path, "rb");
    if (probe != NULL) {
        fclose(probe);
        ocd_dl_missing_dependencies(own_path, missing, sizeof missing);
    }
    fprintf(stderr,
            "opencudnn: cannot load %s, needed by %s.\n"
            "  tried %s: %s\n"
            "  tried " OCD_LOADER_SEARCH ": %s\n"
            "  dependencies of %s that cannot be loaded: %s\n"
            "  The API call returns CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING.\n",
            ocd_front_libraries[lib], OCD_LIBRARY_FILE("cudnn"), own_path, own_error, search_error,
            ocd_front_libraries[lib],
            probe == NULL ? "(the file was not found, so none could be checked)"
                          : missing[0] ? missing : "none found missing");
}

static void *load_library(int lib)
{
    if (library_handles[lib] != NULL || library_failed[lib]) return library_handles[lib];
    char path[4096], own_error[512], search_error[512];
    ocd_module_directory((const void *)&load_lock, path, sizeof path);
    strncat(path, ocd_front_libraries[lib], sizeof path - strlen(path) - 1);
    void *h = ocd_dl_open(path, own_error, sizeof own_error);
    if (h == NULL) {
        h = ocd_dl_open(ocd_front_libraries[lib], search_error, sizeof search_error);
        if (h == NULL) {
            report_failure(lib, path, own_error, search_error);
            library_failed[lib] = 1;
        }
    }
    library_handles[lib] = h;
    return h;
}

void *ocd_front_resolve(int index)
{
    void *fn = atomic_load_explicit(&ocd_front_cache[index], memory_order_acquire);
    if (fn != NULL) return fn;
    const struct ocd_front_entry *e = &ocd_front_entries[index];
    ocd_mutex_lock(&load_lock);
    void *h = load_library(e->library);
    if (h != NULL) {
        fn = ocd_dl_symbol(h, e->name);
        if (fn == NULL) fprintf(stderr, "opencudnn: %s does not define %s\n", ocd_front_libraries[e->library], e->name);
    }
    ocd_mutex_unlock(&load_lock);
    if (fn != NULL) atomic_store_explicit(&ocd_front_cache[index], fn, memory_order_release);
    return fn;
}
