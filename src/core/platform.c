/* platform.c: the stateful half of platform.h: threads, clocks, ids, run-time loading and the
   loader's dependency report, once for POSIX (Linux) and once for Windows. It is compiled into
   ops_infer (for the library) and into the front, the test runner and the doctor, which do not
   link ops_infer. */
#if !defined(_WIN32)
#  ifndef _GNU_SOURCE
#    define _GNU_SOURCE /* dladdr, dl_iterate_phdr, syscall */
#  endif
#endif
#include "core/platform.h"
#include "core/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  ifndef NOMINMAX
#    define NOMINMAX
#  endif
#  include <windows.h>
#  include <process.h>
#  include <tlhelp32.h>
#else
#  include <dlfcn.h>
#  include <elf.h>
#  include <limits.h>
#  include <link.h>
#  include <sys/time.h>
#  include <time.h>
#  include <unistd.h>
#  if defined(__linux__)
#    include <sys/syscall.h>
#  endif
#endif

struct thread_start {
    void (*fn)(void *);
    void *arg;
};

#if defined(_WIN32)

/* ---- Windows -------------------------------------------------------------------------------- */

_Static_assert(sizeof(ocd_mutex_t) == sizeof(SRWLOCK) && sizeof(ocd_cond_t) == sizeof(CONDITION_VARIABLE) &&
                   sizeof(ocd_once_t) == sizeof(INIT_ONCE),
               "platform.h's lock types must match Win32's");

void ocd_mutex_lock(ocd_mutex_t *m) { AcquireSRWLockExclusive((PSRWLOCK)m); }
void ocd_mutex_unlock(ocd_mutex_t *m) { ReleaseSRWLockExclusive((PSRWLOCK)m); }
bool ocd_mutex_trylock(ocd_mutex_t *m) { return TryAcquireSRWLockExclusive((PSRWLOCK)m) != 0; }
void ocd_cond_wait(ocd_cond_t *c, ocd_mutex_t *m) { SleepConditionVariableSRW((PCONDITION_VARIABLE)c, (PSRWLOCK)m, INFINITE, 0); }
void ocd_cond_broadcast(ocd_cond_t *c) { WakeAllConditionVariable((PCONDITION_VARIABLE)c); }

/* INIT_ONCE passes one pointer: the function travels in a small struct on the caller's stack. */
struct once_call {
    void (*fn)(void);
};

static BOOL CALLBACK once_trampoline(PINIT_ONCE once, PVOID param, PVOID *context)
{
    (void)once;
    (void)context;
    ((struct once_call *)param)->fn();
    return TRUE;
}

void ocd_once(ocd_once_t *once, void (*fn)(void))
{
    struct once_call call = {fn};
    InitOnceExecuteOnce((PINIT_ONCE)once, once_trampoline, &call, NULL);
}

static unsigned __stdcall thread_trampoline(void *param)
{
    struct thread_start start = *(struct thread_start *)param;
    free(param);
    start.fn(start.arg);
    return 0;
}

bool ocd_thread_start(void (*fn)(void *), void *arg)
{
    struct thread_start *start = ocd_malloc(sizeof *start);
    if (start == NULL) return false;
    start->fn = fn;
    start->arg = arg;
    uintptr_t h = _beginthreadex(NULL, 0, thread_trampoline, start, 0, NULL);
    if (h == 0) {
        free(start);
        return false;
    }
    CloseHandle((HANDLE)h);
    return true;
}

double ocd_seconds(void)
{
    LARGE_INTEGER count, frequency;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&frequency);
    return (double)count.QuadPart / (double)frequency.QuadPart;
}

void ocd_wall_time(unsigned long long *sec, unsigned *usec)
{
    FILETIME ft;
    GetSystemTimeAsFileTime(&ft);
    /* 100 ns ticks since 1601-01-01; 11644473600 s lie between 1601 and 1970 */
    unsigned long long ticks = ((unsigned long long)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
    unsigned long long us = ticks / 10 - 11644473600ULL * 1000000ULL;
    *sec = us / 1000000;
    *usec = (unsigned)(us % 1000000);
}

unsigned long long ocd_process_id(void) { return GetCurrentProcessId(); }
unsigned long long ocd_thread_id(void) { return GetCurrentThreadId(); }

int ocd_processor_count(void)
{
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    return n > 0 ? (int)n : 1;
}

static void last_error_text(char *err, size_t size)
{
    if (err == NULL || size == 0) return;
    DWORD code = GetLastError();
    int n = snprintf(err, size, "error %lu: ", (unsigned long)code);
    if (n < 0 || (size_t)n >= size) return;
    DWORD len = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0,
                               err + n, (DWORD)(size - (size_t)n), NULL);
    while (len > 0 && (err[n + len - 1] == '\n' || err[n + len - 1] == '\r' || err[n + len - 1] == ' '))
        err[n + --len] = '\0';
    if (len == 0) snprintf(err + n, size - (size_t)n, "(no text)");
}

static bool is_full_path(const char *path)
{
    return (path[0] != '\0' && path[1] == ':') || path[0] == '\\' || path[0] == '/';
}

void *ocd_dl_open(const char *path, char *err, size_t err_size)
{
    /* A full path: LOAD_WITH_ALTERED_SEARCH_PATH looks for the DLL's own imports in its folder
       first, as $ORIGIN does on Linux; it wants backslashes. Error dialogs are never shown: a
       failure is a status. */
    char native[4096];
    snprintf(native, sizeof native, "%s", path);
    for (char *c = native; *c; c++)
        if (*c == '/') *c = '\\';
    UINT old_mode = SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
    HMODULE h = LoadLibraryExA(native, NULL, is_full_path(native) ? LOAD_WITH_ALTERED_SEARCH_PATH : 0);
    if (h == NULL) last_error_text(err, err_size);
    SetErrorMode(old_mode);
    return (void *)h;
}

void *ocd_dl_loaded(const char *name)
{
    HMODULE h = NULL;
    return GetModuleHandleExA(0, name, &h) ? (void *)h : NULL; /* counted: ocd_dl_close releases it */
}

void *ocd_dl_symbol(void *lib, const char *name)
{
    FARPROC fn = GetProcAddress((HMODULE)lib, name);
    void *p;
    memcpy(&p, &fn, sizeof p); /* a function address as data, without a cast ISO C leaves undefined */
    return p;
}

void ocd_dl_close(void *lib) { FreeLibrary((HMODULE)lib); }

bool ocd_module_path(const void *address, char *path, size_t size)
{
    HMODULE module = NULL;
    if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            (LPCSTR)address, &module))
        return false;
    DWORD n = GetModuleFileNameA(module, path, (DWORD)size);
    return n > 0 && n < size;
}

/* The PE import table's DLL names, each one loaded (from the file's folder, then by the search
   path) to see whether it can be, and released again. */
static bool read_at(FILE *f, long offset, void *buf, size_t n)
{
    return fseek(f, offset, SEEK_SET) == 0 && fread(buf, 1, n, f) == n;
}

void ocd_dl_missing_dependencies(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return;
    IMAGE_DOS_HEADER dos;
    IMAGE_NT_HEADERS64 nt;
    IMAGE_SECTION_HEADER sections[96];
    if (!read_at(f, 0, &dos, sizeof dos) || dos.e_magic != IMAGE_DOS_SIGNATURE ||
        !read_at(f, dos.e_lfanew, &nt, sizeof nt) || nt.Signature != IMAGE_NT_SIGNATURE ||
        nt.OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC || nt.FileHeader.NumberOfSections > 96 ||
        !read_at(f, dos.e_lfanew + (long)offsetof(IMAGE_NT_HEADERS64, OptionalHeader) + nt.FileHeader.SizeOfOptionalHeader,
                 sections, sizeof sections[0] * nt.FileHeader.NumberOfSections)) {
        fclose(f);
        return;
    }
    int nsec = nt.FileHeader.NumberOfSections;
    /* file offset of a relative virtual address, through the section holding it */
#define RVA_OFFSET(rva, result)                                                                      \
    do {                                                                                             \
        result = -1;                                                                                 \
        for (int s_ = 0; s_ < nsec; s_++)                                                            \
            if ((rva) >= sections[s_].VirtualAddress &&                                              \
                (rva) < sections[s_].VirtualAddress + sections[s_].SizeOfRawData)                    \
                result = (long)((rva) - sections[s_].VirtualAddress + sections[s_].PointerToRawData); \
    } while (0)
    DWORD import_rva = nt.OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT].VirtualAddress;
    long offset;
    RVA_OFFSET(import_rva, offset);
    char dir[MAX_PATH] = "";
    const char *slash = strrchr(path, '\\'), *fslash = strrchr(path, '/');
    if (fslash > slash) slash = fslash;
    if (slash != NULL && (size_t)(slash - path + 1) < sizeof dir) memcpy(dir, path, (size_t)(slash - path + 1));
    for (int i = 0; import_rva != 0 && offset >= 0 && i < 256; i++) {
        IMAGE_IMPORT_DESCRIPTOR d;
        if (!read_at(f, offset + (long)(i * sizeof d), &d, sizeof d) || d.Name == 0) break;
        long name_offset;
        RVA_OFFSET(d.Name, name_offset);
        char name[256];
        if (name_offset < 0 || fseek(f, name_offset, SEEK_SET) != 0 || fgets(name, sizeof name, f) == NULL) continue;
        name[strnlen(name, sizeof name - 1)] = '\0';
        char beside[MAX_PATH + 256];
        snprintf(beside, sizeof beside, "%s%s", dir, name);
        void *h = ocd_dl_loaded(name);
        if (h == NULL) h = ocd_dl_open(beside, NULL, 0);
        if (h == NULL) h = ocd_dl_open(name, NULL, 0);
        if (h != NULL) {
            ocd_dl_close(h);
            continue;
        }
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", used ? ", " : "", name);
    }
#undef RVA_OFFSET
    fclose(f);
}

void ocd_for_each_module(void (*fn)(const char *path, void *data), void *data)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPMODULE, GetCurrentProcessId());
    if (snap == INVALID_HANDLE_VALUE) return;
    MODULEENTRY32 m;
    m.dwSize = sizeof m;
    for (BOOL ok = Module32First(snap, &m); ok; ok = Module32Next(snap, &m)) fn(m.szExePath, data);
    CloseHandle(snap);
}

void ocd_real_path(const char *path, char *out, size_t size)
{
    if (_fullpath(out, path, size) == NULL) snprintf(out, size, "%s", path);
}

#else

/* ---- POSIX ---------------------------------------------------------------------------------- */

void ocd_once(ocd_once_t *once, void (*fn)(void)) { pthread_once(once, fn); }

static void *thread_trampoline(void *param)
{
    struct thread_start start = *(struct thread_start *)param;
    free(param);
    start.fn(start.arg);
    return NULL;
}

bool ocd_thread_start(void (*fn)(void *), void *arg)
{
    struct thread_start *start = ocd_malloc(sizeof *start);
    if (start == NULL) return false;
    start->fn = fn;
    start->arg = arg;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, thread_trampoline, start);
    pthread_attr_destroy(&attr);
    if (rc != 0) free(start);
    return rc == 0;
}

double ocd_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void ocd_wall_time(unsigned long long *sec, unsigned *usec)
{
    struct timeval now;
    gettimeofday(&now, NULL);
    *sec = (unsigned long long)now.tv_sec;
    *usec = (unsigned)now.tv_usec;
}

unsigned long long ocd_process_id(void) { return (unsigned long long)getpid(); }

unsigned long long ocd_thread_id(void)
{
#if defined(__linux__)
    return (unsigned long long)syscall(SYS_gettid);
#else
    return (unsigned long long)(uintptr_t)pthread_self();
#endif
}

int ocd_processor_count(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

void *ocd_dl_open(const char *path, char *err, size_t err_size)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL && err != NULL && err_size > 0) {
        const char *why = dlerror();
        snprintf(err, err_size, "%s", why != NULL ? why : path);
    }
    return h;
}

void *ocd_dl_loaded(const char *name) { return dlopen(name, RTLD_NOW | RTLD_NOLOAD); }

void *ocd_dl_symbol(void *lib, const char *name) { return dlsym(lib, name); }

void ocd_dl_close(void *lib) { dlclose(lib); }

bool ocd_module_path(const void *address, char *path, size_t size)
{
    Dl_info info;
    if (dladdr(address, &info) == 0 || info.dli_fname == NULL || strlen(info.dli_fname) >= size) return false;
    snprintf(path, size, "%s", info.dli_fname);
    return true;
}

/* The ELF file's DT_NEEDED entries, each tried with dlopen. */
void ocd_dl_missing_dependencies(const char *path, char *out, size_t size)
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

struct module_visit {
    void (*fn)(const char *path, void *data);
    void *data;
};

static int visit_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const struct module_visit *v = data;
    if (info->dlpi_name != NULL && info->dlpi_name[0] != '\0') v->fn(info->dlpi_name, v->data);
    return 0;
}

void ocd_for_each_module(void (*fn)(const char *path, void *data), void *data)
{
    struct module_visit v = {fn, data};
    dl_iterate_phdr(visit_module, &v);
}

void ocd_real_path(const char *path, char *out, size_t size)
{
    char full[PATH_MAX];
    snprintf(out, size, "%s", realpath(path, full) != NULL ? full : path);
}

#endif

bool ocd_same_directory(const char *a, const char *b)
{
    for (;; a++, b++) {
        char x = *a == '\\' ? '/' : *a, y = *b == '\\' ? '/' : *b;
#if defined(_WIN32)
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
#endif
        if (x == '\0' || y == '\0') {
            /* a trailing separator on one side only still names the same directory */
            if (x == '/' && a[1] == '\0') x = '\0';
            if (y == '/' && b[1] == '\0') y = '\0';
            return x == y;
        }
        if (x != y) return false;
    }
}

void ocd_setenv(const char *name, const char *value)
{
#if defined(_WIN32)
    _putenv_s(name, value);
#else
    setenv(name, value, 1);
#endif
}

void ocd_unsetenv(const char *name)
{
#if defined(_WIN32)
    _putenv_s(name, ""); /* an empty value removes the variable on Windows */
#else
    unsetenv(name);
#endif
}

bool ocd_module_directory(const void *address, char *dir, size_t size)
{
    if (!ocd_module_path(address, dir, size)) {
        if (size > 0) dir[0] = '\0';
        return false;
    }
    char *slash = strrchr(dir, '/');
#if defined(_WIN32)
    char *backslash = strrchr(dir, '\\');
    if (backslash > slash) slash = backslash;
#endif
    if (slash == NULL) {
        dir[0] = '\0';
        return false;
    }
    slash[1] = '\0';
    return true;
}
