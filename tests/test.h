/* test.h: the test suite's framework: registration, checks, device buffers, random data.

   A test is `TEST(name) { ... }` in any .c file of tests/; it registers itself. The runner runs
   each test once per backend present (host always, cuda when a device is usable) unless it is
   declared with TEST_ONCE (backend-independent: descriptors, headers, loading). Checks record a
   failure with file:line and go on; CHECK_STATUS compares statuses by name.

   Device buffers: tbuf_* allocate on the backend under test (host memory or cudaMalloc), are
   filled from host arrays and read back to host arrays. Outputs are poisoned (all bytes 0xFF: NaN
   for float types, -1 for integers) before each call, so a result that was not written shows. */
#ifndef OCD_TESTS_TEST_H
#define OCD_TESTS_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include <cudnn.h>

#include "core/platform.h"

typedef void (*test_fn)(void);

void test_register(const char *name, test_fn fn, bool once, const char *file);

#define TEST_DEFINE_(name, once)                                                               \
    static void name(void);                                                                    \
    OCD_CONSTRUCTOR(register_##name)                                                           \
    {                                                                                          \
        test_register(#name, name, once, __FILE__);                                            \
    }                                                                                          \
    static void name(void)
#define TEST(name) TEST_DEFINE_(name, false)
#define TEST_ONCE(name) TEST_DEFINE_(name, true)

/* Records a failure; returns cond so that a test can stop early: if (!CHECK(x)) return; */
bool test_check(bool cond, const char *expr, const char *file, int line);
#define CHECK(cond) test_check((cond), #cond, __FILE__, __LINE__)
bool test_check_status(cudnnStatus_t got, cudnnStatus_t want, const char *expr, const char *file, int line);
#define CHECK_STATUS(call, want) test_check_status((call), (want), #call, __FILE__, __LINE__)
#define CHECK_OK(call) CHECK_STATUS(call, CUDNN_STATUS_SUCCESS)
bool current_test_failed(void);
void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define FAIL(...) test_fail(__FILE__, __LINE__, __VA_ARGS__)

/* The backend of this pass: "host" or "cuda". */
extern const char *test_backend;
/* A handle on the backend under test (created per test, destroyed after it). */
cudnnHandle_t test_handle(void);
/* The current device's compute capability, 10 major + minor (90 for sm_90), on the cuda pass;
   0 on the host pass and in a build without CUDA. */
int test_compute_capability(void);
/* The current device's L2 cache in bytes on the cuda pass; 0 otherwise. */
size_t test_l2_bytes(void);
/* Symbol `name` of the sub-library file `file` (OCD_LIBRARY_FILE("cudnn_ops_infer"), say: an
   internal entry a test calls directly), or NULL: the file in this build's directory
   (OCD_LIB_DIR), else the one the dynamic loader finds by its name, for a runner moved away from
   its build with its libraries (a GPU pack: tools/gpu-variants.sh). */
void *test_lib_symbol(const char *file, const char *name);

/* ---- buffers on the backend under test -------------------------------------------------------- */
void *tbuf_alloc(size_t bytes);                  /* poisoned; never NULL (aborts the test run) */
void tbuf_free(void *p);                        /* NULL: nothing */
/* Uploads and poisoning have landed when they return (CUDA: a pageable upload returns once staged
   and a cudaMemset of device memory at once, on the legacy default stream, which a stream created
   cudaStreamNonBlocking does not wait for; these wait for the device). */
void tbuf_upload(void *dst, const void *src, size_t bytes);
void tbuf_download(void *dst, const void *src, size_t bytes);
void tbuf_poison(void *p, size_t bytes);
/* A device copy of host data. */
void *tbuf_from(const void *src, size_t bytes);

/* ---- random data ---------------------------------------------------------------------------- */
uint64_t trand_u64(void);
double trand_uniform(double lo, double hi);
int trand_int(int lo, int hi); /* inclusive */
/* Draws from these bytes first (two a draw), then from the generator seeded by their hash: the
   libFuzzer harness's randomness (tests/libfuzzer/ops.c). */
void trand_bytes(const uint8_t *data, size_t size);

/* ---- typed host arrays -------------------------------------------------------------------- */
size_t tdtype_size(cudnnDataType_t t); /* bytes of one scalar (1 for the int8 vector types) */
const char *tdtype_name(cudnnDataType_t t); /* "float", "int8x4", ... */
double tload(cudnnDataType_t t, const void *base, int64_t i);          /* scalar i, as double */
void tstore(cudnnDataType_t t, void *base, int64_t i, double v);       /* rounds to the type */
/* Fills n scalars of type t with random values in [lo, hi] (integers rounded). */
void tfill_random(cudnnDataType_t t, void *base, int64_t n, double lo, double hi);
/* Relative tolerance for results of type t (DESIGN.md 5). */
double ttolerance(cudnnDataType_t t);
/* Whether products of data of type x may run on TF32 tensor cores under math: float data under
   TENSOR_OP_MATH*, or under DEFAULT_MATH on the CUDA backend (cuDNN 8 permits TF32 there on
   compute capability 8.0 and newer, unless NVIDIA_TF32_OVERRIDE=0). */
bool ttf32_may_apply(cudnnDataType_t x, cudnnMathType_t math);
/* How far TF32 products may move a result, from the problem's own sensitivity rather than a
   fixed tolerance: want is the reference, rounded[0..nrounded) the same reference evaluated with
   every operand of every product that may run on TF32 rounded to TF32 (to nearest and toward
   zero). Rounding an operand to 10 mantissa bits perturbs it by at most 2^-11 relative (2^-10
   toward zero); to first order the result moves by the problem's sensitivity to its operands
   times those perturbations, which the rounded evaluations measure, conditioning included (a
   softmax over large logits amplifies their rounding by the logits' size). The device rounds
   other values in another order, so the bound is taken over the whole result (the largest
   change of any of its n values, not each value's own, which may cancel by chance) and times
   TTF32_SAFETY for the spread between roundings of the same size; second-order terms (2^-22)
   are negligible. The caller adds its FP32 tolerance. */
#define TTF32_SAFETY 4
double ttf32_bound(const double *want, const double *const *rounded, int nrounded, int64_t n);
/* Relative tolerance for a convolution's results of type out from data of type x under math: where
   TF32 may apply (ttf32_may_apply), its 10-bit mantissa is half's, so half's tolerance applies.
   Sums of many products: 4x. */
double tconv_tolerance(cudnnDataType_t x, cudnnDataType_t out, cudnnMathType_t math);
/* Compares n results against a double reference: |got - want| <= tol * max(1, |want|) for every
   element; NaN where want is not NaN fails. Reports the first bad index. */
bool tcompare(cudnnDataType_t t, const void *got, const double *want, int64_t n, double tol,
              const char *what);

/* ---- the log callback ---------------------------------------------------------------------- */
/* log_hook_install puts fn (receiving udata) in place of the callback installed before, for the
   severities of mask; log_hook_restore puts that one back. */
struct log_hook {
    unsigned mask0;
    void *udata0;
    cudnnCallback_t fn0;
};
void log_hook_install(struct log_hook *h, unsigned mask, void *udata, cudnnCallback_t fn);
void log_hook_restore(const struct log_hook *h);

/* ---- the info log's replay lines (core/check.h) ---------------------------------------------- */
/* log_capture_start installs a log callback that counts the info lines containing needle and
   keeps the last (and every one, as far as `lines` holds them); replay_capture_start does so for
   the lines "replay: opencudnn_bench --problem \"op=<op> ..."; replay_logged says whether a
   line of the API function `call` logged `problem`; replay_capture_clear empties the record;
   replay_capture_stop restores the callback installed before. */
struct replay_capture {
    char needle[64];
    int count;
    char last[512];
    char lines[4096]; /* the lines captured, each ending in a newline */
    struct log_hook hook;
};
bool replay_logged(const struct replay_capture *c, const char *call, const char *problem);
void log_capture_start(struct replay_capture *c, const char *needle);
void replay_capture_start(struct replay_capture *c, const char *op);
void replay_capture_clear(struct replay_capture *c);
void replay_capture_stop(const struct replay_capture *c);

#endif /* OCD_TESTS_TEST_H */
