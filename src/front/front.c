/* front.c: the loader of libcudnn.so.8 (see front.h).

   A sub-library is looked for first in the directory the front itself was loaded from, then by
   the dynamic loader's own search (LD_LIBRARY_PATH, the run path, the system directories). When
   both fail the front prints one message to stderr, once per sub-library, naming the file, every
   place tried, the loader's error and which of the file's own dependencies cannot be loaded;
   the call then returns CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING. It never aborts. */
#define _GNU_SOURCE
#include "front/front.h"

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static void *library_handles[OCD_FRONT_NLIBS];
static int library_failed[OCD_FRONT_NLIBS]; /* 1 once the failure has been reported */

/* The directory of this library, with a trailing '/', or "" when it cannot be found. */
static void own_directory(char *dir, size_t size)
{
    Dl_info info;
    dir[0] = '\0';
    if (dladdr((void *)&ocd_front_resolve, &info) == 0 || info.dli_fname == NULL) return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash == NULL) return;
    size_t n = (size_t)(slash - info.dli_fname) + 1;
    if (n >= size) return;
    memcpy(dir, info.dli_fname, n);
    dir[n] = '\0';
}

/* Appends to `out` the DT_NEEDED entries of the ELF file at `path` that the loader cannot open. */
static void missing_dependencies(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return;
    Elf64_Ehdr eh;
    Elf64_Phdr ph[64];
    if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phnum > 64 ||
        fseek(f, (long)eh.e_phoff, SEEK_SET) != 0 || fread(ph, sizeof ph[0], eh.e_phnum, f) != eh.e_phnum) {
        fclose(f);
        return;
    }
    Elf64_Dyn dyn[512];
    size_t ndyn = 0;
    for (int i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type != PT_DYNAMIC) continue;
        ndyn = ph[i].p_filesz / sizeof(Elf64_Dyn);
        if (ndyn > 512) ndyn = 512;
        if (fseek(f, (long)ph[i].p_offset, SEEK_SET) != 0 || fread(dyn, sizeof dyn[0], ndyn, f) != ndyn) ndyn = 0;
    }
    Elf64_Addr strtab = 0;
    for (size_t i = 0; i < ndyn; i++)
        if (dyn[i].d_tag == DT_STRTAB) strtab = dyn[i].d_un.d_ptr;
    long strtab_offset = -1; /* the file offset of the string table, through the PT_LOAD holding it */
    for (int i = 0; i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && strtab >= ph[i].p_vaddr && strtab < ph[i].p_vaddr + ph[i].p_filesz)
            strtab_offset = (long)(strtab - ph[i].p_vaddr + ph[i].p_offset);
    for (size_t i = 0; i < ndyn && strtab_offset >= 0; i++) {
        char name[256];
        if (dyn[i].d_tag != DT_NEEDED || fseek(f, strtab_offset + (long)dyn[i].d_un.d_val, SEEK_SET) != 0 ||
            fgets(name, sizeof name, f) == NULL)
            continue;
        name[strnlen(name, sizeof name - 1)] = '\0';
        void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
        if (h != NULL) {
            dlclose(h);
            continue;
        }
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", used ? ", " : "", name);
    }
    fclose(f);
}

static void report_failure(int lib, const char *own_path, const char *own_error, const char *search_error)
{
    char missing[512] = "";
    FILE *probe = fopen(own_path, "rb");
    if (probe != NULL) {
        fclose(probe);
        missing_dependencies(own_path, missing, sizeof missing);
    }
    fprintf(stderr,
            "opencudnn: cannot load %s, needed by libcudnn.so.8.\n"
            "  tried %s: %s\n"
            "  tried the loader's search path (LD_LIBRARY_PATH, run path, system directories): %s\n"
            "  dependencies of %s that cannot be loaded: %s\n"
            "  The API call returns CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING.\n",
            ocd_front_libraries[lib], own_path, own_error, search_error, ocd_front_libraries[lib],
            probe == NULL ? "(the file was not found, so none could be checked)"
                          : missing[0] ? missing : "none found missing");
}

static void *load_library(int lib)
{
    if (library_handles[lib] != NULL || library_failed[lib]) return library_handles[lib];
    char path[PATH_MAX], own_error[512], search_error[512];
    own_directory(path, sizeof path);
    strncat(path, ocd_front_libraries[lib], sizeof path - strlen(path) - 1);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(own_error, sizeof own_error, "%s", dlerror());
        h = dlopen(ocd_front_libraries[lib], RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            snprintf(search_error, sizeof search_error, "%s", dlerror());
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
    pthread_mutex_lock(&load_lock);
    void *h = load_library(e->library);
    if (h != NULL) {
        fn = dlsym(h, e->name);
        if (fn == NULL) fprintf(stderr, "opencudnn: %s does not define %s\n", ocd_front_libraries[e->library], e->name);
    }
    pthread_mutex_unlock(&load_lock);
    if (fn != NULL) atomic_store_explicit(&ocd_front_cache[index], fn, memory_order_release);
    return fn;
}
