/* platform.h: the one place where opencudnn meets the operating system. POSIX (Linux) and
   Windows (mingw-w64 today, MSVC in mind) behind one set of names, so that no other file of src/,
   tests/ or tools/ includes a system header beyond ISO C or tests for _WIN32:

     locks, condition variables, once-only initialisation, detached threads, thread-local storage
     clocks (monotonic seconds, wall time), process and thread ids, processor count
     setting the environment (tests), run-time loading (dlopen / LoadLibrary) and the file names
     of the seven libraries, the directory a loaded module lives in, a load-time constructor

   Windows uses Win32 primitives (SRWLOCK, CONDITION_VARIABLE, INIT_ONCE, _beginthreadex), not a
   pthreads emulation: the DLLs need nothing but the system's and the C runtime's. <windows.h> is
   included by platform.c alone (its macros would leak into every file otherwise): here the
   Win32 lock types are pointer-sized structs of the same layout, their functions in platform.c.
   The rest (thread start, clocks, module lookup, the loader's dependency report) is in
   platform.c, which ops_infer and the front, the test runner and the doctor compile. */
#ifndef OCD_CORE_PLATFORM_H
#define OCD_CORE_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(_WIN32)
#  include <pthread.h>
#endif

#ifdef __cplusplus
extern "C" { /* the CUDA backend's .cu files include it too */
#endif

/* ---- file names of the libraries -------------------------------------------------------------
   OCD_LIBRARY_FILE("cudnn_ops_infer") is "libcudnn_ops_infer.so.8" on Linux and
   "cudnn_ops_infer64_8.dll" on Windows (cuDNN 8's names on each). */
#if defined(_WIN32)
#  define OCD_LIBRARY_FILE(stem) stem "64_8.dll"
#  define OCD_LOADER_SEARCH "the DLL search path (the application's folder, the system folders, PATH)"
#else
#  define OCD_LIBRARY_FILE(stem) "lib" stem ".so.8"
#  define OCD_LOADER_SEARCH "the loader's search path (LD_LIBRARY_PATH, run path, system directories)"
#endif

/* ---- compiler ------------------------------------------------------------------------------ */
#if defined(_MSC_VER) && !defined(__clang__)
#  define OCD_THREAD_LOCAL __declspec(thread)
/* A function run when the library is loaded: a pointer to it in the C runtime's initializer section. */
#  pragma section(".CRT$XCU", read)
#  define OCD_CONSTRUCTOR(fn)                                                                  \
    static void fn(void);                                                                      \
    __declspec(allocate(".CRT$XCU")) void (*const fn##_at_load)(void) = fn;                    \
    __pragma(comment(linker, "/include:" #fn "_at_load")) static void fn(void)
#else
#  define OCD_THREAD_LOCAL _Thread_local
#  define OCD_CONSTRUCTOR(fn) __attribute__((constructor)) static void fn(void)
#endif

/* Overflow-checked 64-bit arithmetic (true, *r unspecified, when the exact result does not
   fit), the index of the lowest set bit of a nonzero word, and a forced inline: gcc's and
   clang's built-ins where they exist, plain C elsewhere (MSVC). */
#if defined(__GNUC__) || defined(__clang__)
#  define OCD_ALWAYS_INLINE inline __attribute__((always_inline))
static inline bool ocd_mul_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}
static inline bool ocd_add_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_add_overflow(a, b, r);
}
static inline unsigned ocd_lowest_bit(uint32_t v)
{
    return (unsigned)__builtin_ctz(v);
}
#else
#  define OCD_ALWAYS_INLINE __forceinline
static inline bool ocd_mul_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    bool over = a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
                      : (b > 0 ? a < INT64_MIN / b : a != 0 && b < INT64_MAX / a);
    if (!over) *r = a * b;
    return over;
}
static inline bool ocd_add_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    bool over = (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
    if (!over) *r = a + b;
    return over;
}
static inline unsigned ocd_lowest_bit(uint32_t v)
{
    unsigned n = 0;
    while (!(v & 1u)) v >>= 1, n++;
    return n;
}
#endif

/* ---- locks, condition variables, once ------------------------------------------------------ */
#if defined(_WIN32)
/* SRWLOCK, CONDITION_VARIABLE and INIT_ONCE: one pointer each, zero when initialised statically */
typedef struct { void *opaque; } ocd_mutex_t;
typedef struct { void *opaque; } ocd_cond_t;
typedef struct { void *opaque; } ocd_once_t;
#  define OCD_MUTEX_INIT {0}
#  define OCD_COND_INIT {0}
#  define OCD_ONCE_INIT {0}
void ocd_mutex_lock(ocd_mutex_t *m);
void ocd_mutex_unlock(ocd_mutex_t *m);
bool ocd_mutex_trylock(ocd_mutex_t *m);
void ocd_cond_wait(ocd_cond_t *c, ocd_mutex_t *m);
void ocd_cond_broadcast(ocd_cond_t *c);
#else
typedef pthread_mutex_t ocd_mutex_t;
typedef pthread_cond_t ocd_cond_t;
typedef pthread_once_t ocd_once_t;
#  define OCD_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#  define OCD_COND_INIT PTHREAD_COND_INITIALIZER
#  define OCD_ONCE_INIT PTHREAD_ONCE_INIT
static inline void ocd_mutex_lock(ocd_mutex_t *m) { pthread_mutex_lock(m); }
static inline void ocd_mutex_unlock(ocd_mutex_t *m) { pthread_mutex_unlock(m); }
static inline bool ocd_mutex_trylock(ocd_mutex_t *m) { return pthread_mutex_trylock(m) == 0; }
static inline void ocd_cond_wait(ocd_cond_t *c, ocd_mutex_t *m) { pthread_cond_wait(c, m); }
static inline void ocd_cond_broadcast(ocd_cond_t *c) { pthread_cond_broadcast(c); }
#endif

/* Runs fn exactly once per `once`, whichever threads race to it; the others wait until it ended. */
void ocd_once(ocd_once_t *once, void (*fn)(void));

/* Starts a detached thread running fn(arg); false when none could be started. */
bool ocd_thread_start(void (*fn)(void *), void *arg);

/* ---- clocks, ids, processors ---------------------------------------------------------------- */
/* Seconds on a monotonic clock (differences only). */
double ocd_seconds(void);
/* The wall-clock time: seconds since 1970 and the microseconds within the second. */
void ocd_wall_time(unsigned long long *sec, unsigned *usec);
unsigned long long ocd_process_id(void);
unsigned long long ocd_thread_id(void);
/* Logical processors this process may run on (at least 1). */
int ocd_processor_count(void);

/* ---- environment ---------------------------------------------------------------------------- */
/* setenv (overwriting) and unsetenv; Windows keeps one environment per C runtime, which the DLLs
   and the programs built by the same tool chain share. */
void ocd_setenv(const char *name, const char *value);
void ocd_unsetenv(const char *name);

/* ---- run-time loading ----------------------------------------------------------------------- */
/* Loads the library at `path` (a full path: its own dependencies are then looked for in its
   directory first, on Windows as on Linux through $ORIGIN) or by bare name through the loader's
   search; NULL on failure, with the loader's reason in err (which may be NULL). */
void *ocd_dl_open(const char *path, char *err, size_t err_size);
/* The library if it is loaded already (release it with ocd_dl_close), else NULL: nothing is loaded. */
void *ocd_dl_loaded(const char *name);
void *ocd_dl_symbol(void *lib, const char *name);
void ocd_dl_close(void *lib);
/* The full path of the module (executable or library) holding `address`, and its directory with a
   trailing separator; false when unknown. */
bool ocd_module_path(const void *address, char *path, size_t size);
bool ocd_module_directory(const void *address, char *dir, size_t size);
/* Appends to out (comma separated) the libraries that the library file at `path` imports and the
   loader cannot load (ELF DT_NEEDED on Linux, the PE import table on Windows). */
void ocd_dl_missing_dependencies(const char *path, char *out, size_t size);
/* Calls fn(path, data) for every module (executable, library) loaded in the process. */
void ocd_for_each_module(void (*fn)(const char *path, void *data), void *data);
/* The absolute path of `path` with links and "." / ".." resolved (as given when that fails). */
void ocd_real_path(const char *path, char *out, size_t size);
/* Whether two directory paths name the same directory as text: '/' and '\' alike, and on
   Windows letters of either case alike. */
bool ocd_same_directory(const char *a, const char *b);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_PLATFORM_H */
