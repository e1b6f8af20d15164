/* support.c: buffers on the backend under test, random data and typed comparisons for the
   tests (see test.h). Independent of src/: its half and bfloat16 conversions are its own. */
#include "test.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

#ifdef OCD_TEST_CUDA
static bool on_cuda(void)
{
    return strcmp(test_backend, "cuda") == 0;
}
#endif

int test_compute_capability(void)
{
#ifdef OCD_TEST_CUDA
    if (on_cuda()) {
        int dev = 0, major = 0, minor = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
        return 10 * major + minor;
    }
#endif
    return 0;
}

size_t test_l2_bytes(void)
{
#ifdef OCD_TEST_CUDA
    if (on_cuda()) {
        int dev = 0, bytes = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, dev);
        return (size_t)bytes;
    }
#endif
    return 0;
}

static void die(const char *what)
{
    fprintf(stderr, "test support: %s\n", what);
    exit(2);
}

void *tbuf_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0) bytes = 1;
#ifdef OCD_TEST_CUDA
    if (on_cuda()) {
        if (cudaMalloc(&p, bytes) != cudaSuccess) die("cudaMalloc failed");
        tbuf_poison(p, bytes);
        return p;
    }
#endif
    p = malloc(bytes);
    if (p == NULL) die("malloc failed");
    tbuf_poison(p, bytes);
    return p;
}

void tbuf_free(void *p)
{
#ifdef OCD_TEST_CUDA
    if (on_cuda()) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

void tbuf_poison(void *p, size_t bytes)
{
#ifdef OCD_TEST_CUDA
    if (on_cuda()) {
        if (cudaMemset(p, 0xff, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
            die("cudaMemset failed");
        return;
    }
#endif
    memset(p, 0xff, bytes);
}

void tbuf_upload(void *dst, const void *src, size_t bytes)
{
#ifdef OCD_TEST_CUDA
    if (on_cuda()) {
        if (cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
            cudaDeviceSynchronize() != cudaSuccess)
            die("upload failed");
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

void tbuf_download(void *dst, const void *src, size_t bytes)
{
#ifdef OCD_TEST_CUDA
    if (on_cuda()) {
        if (cudaDeviceSynchronize() != cudaSuccess) die("a kernel failed (cudaDeviceSynchronize)");
        if (cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) die("download failed");
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

void *tbuf_from(const void *src, size_t bytes)
{
    void *p = tbuf_alloc(bytes);
    tbuf_upload(p, src, bytes);
    return p;
}

/* ---- random: xoshiro256** seeded by splitmix64 ------------------------------------------------ */

static uint64_t rng[4];

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void trand_seed(uint64_t seed)
{
    for (int i = 0; i < 4; i++) rng[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* The libFuzzer harness's source (tests/libfuzzer/ops.c): while input bytes remain, each draw is
   the next two of them, repeated in the top and the bottom 16 bits (so that a small range takes
   them as they are, and trand_uniform spreads them); then the generator, seeded by a hash of the
   whole input, so that a run stays a function of its input. */
static const uint8_t *byte_src;
static size_t byte_left;

void trand_bytes(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ size;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ULL;
    trand_seed(h);
    byte_src = data;
    byte_left = size;
}

uint64_t trand_u64(void)
{
    if (byte_left >= 2) {
        uint64_t b = (uint64_t)byte_src[0] | (uint64_t)byte_src[1] << 8;
        byte_src += 2, byte_left -= 2;
        return b << 48 | b;
    }
    uint64_t r = rotl(rng[1] * 5, 7) * 9, t = rng[1] << 17;
    rng[2] ^= rng[0];
    rng[3] ^= rng[1];
    rng[1] ^= rng[2];
    rng[0] ^= rng[3];
    rng[2] ^= t;
    rng[3] = rotl(rng[3], 45);
    return r;
}

double trand_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(trand_u64() >> 11) * 0x1.0p-53;
}

int trand_int(int lo, int hi)
{
    return lo + (int)(trand_u64() % (uint64_t)(hi - lo + 1));
}

/* ---- typed scalars ------------------------------------------------------------------------------ */

size_t tdtype_size(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE: case CUDNN_DATA_INT64: return 8;
    case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: return 4;
    case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
    default: return 1;
    }
}

static double half_decode(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 31) return m ? NAN : sign * INFINITY;
    if (e == 0) return sign * ldexp((double)m, -24);
    return sign * ldexp((double)(m + 1024), e - 25);
}

/* Rounds to the nearest half by search: exact decode of both neighbours, pick the closer. */
static uint16_t half_encode(double v)
{
    if (isnan(v)) return 0x7e00;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    double a = fabs(v);
    if (a >= 65520.0) return sign | 0x7c00;
    uint16_t lo = 0, hi = 0x7bff; /* largest finite */
    while (lo < hi) {              /* smallest code with decode >= a */
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (half_decode(mid) >= a) hi = mid;
        else lo = (uint16_t)(mid + 1);
    }
    uint16_t best = lo;
    if (lo > 0) {
        double dlo = a - half_decode((uint16_t)(lo - 1)), dhi = half_decode(lo) - a;
        if (dlo < dhi || (dlo == dhi && ((lo - 1) & 1) == 0)) best = (uint16_t)(lo - 1);
    }
    return sign | best;
}

static double bf16_decode(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Rounds to the nearest bfloat16 (ties to even) in one step from the double: 8 significant bits,
   a fixed quantum of 2^-133 below 2^-126 (the subnormals), infinity beyond the largest finite. */
static uint16_t bf16_encode(double v)
{
    if (isnan(v)) return 0x7fc0;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isinf(a)) return sign | 0x7f80;
    int e;
    frexp(a, &e); /* a = m 2^e, m in [0.5, 1) */
    int q = e - 8 < -133 ? -133 : e - 8;
    double r = ldexp(nearbyint(ldexp(a, -q)), q);
    if (r > 0x1.fep127) return sign | 0x7f80;
    float f = (float)r; /* exact */
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return (uint16_t)(sign | (bits >> 16));
}

const char *tdtype_name(cudnnDataType_t t)
{
    static const char *const names[] = {"float", "double", "half", "int8", "int32", "int8x4",
                                        "uint8", "uint8x4", "int8x32", "bfloat16", "int64"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

double tload(cudnnDataType_t t, const void *base, int64_t i)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return ((const float *)base)[i];
    case CUDNN_DATA_DOUBLE: return ((const double *)base)[i];
    case CUDNN_DATA_HALF: return half_decode(((const uint16_t *)base)[i]);
    case CUDNN_DATA_BFLOAT16: return bf16_decode(((const uint16_t *)base)[i]);
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32: return ((const int8_t *)base)[i];
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: return ((const uint8_t *)base)[i];
    case CUDNN_DATA_INT32: return ((const int32_t *)base)[i];
    case CUDNN_DATA_INT64: return (double)((const int64_t *)base)[i];
    }
    return NAN;
}

static double saturate(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    v = nearbyint(v);
    return v < lo ? lo : v > hi ? hi : v;
}

void tstore(cudnnDataType_t t, void *base, int64_t i, double v)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: ((float *)base)[i] = (float)v; return;
    case CUDNN_DATA_DOUBLE: ((double *)base)[i] = v; return;
    case CUDNN_DATA_HALF: ((uint16_t *)base)[i] = half_encode(v); return;
    case CUDNN_DATA_BFLOAT16: ((uint16_t *)base)[i] = bf16_encode(v); return;
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32:
        ((int8_t *)base)[i] = (int8_t)saturate(v, -128, 127); return;
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: ((uint8_t *)base)[i] = (uint8_t)saturate(v, 0, 255); return;
    case CUDNN_DATA_INT32: ((int32_t *)base)[i] = (int32_t)saturate(v, -2147483648.0, 2147483647.0); return;
    case CUDNN_DATA_INT64: ((int64_t *)base)[i] = (int64_t)saturate(v, -9.2e18, 9.2e18); return;
    }
}

void tfill_random(cudnnDataType_t t, void *base, int64_t n, double lo, double hi)
{
    for (int64_t i = 0; i < n; i++) tstore(t, base, i, trand_uniform(lo, hi));
}

double ttolerance(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_DOUBLE: return 1e-12;
    case CUDNN_DATA_FLOAT: return 1e-5;
    case CUDNN_DATA_HALF: return 1e-2;
    case CUDNN_DATA_BFLOAT16: return 2e-2;
    default: return 0; /* integers: exact, up to the rounding of the result */
    }
}

bool ttf32_may_apply(cudnnDataType_t x, cudnnMathType_t math)
{
    if (x != CUDNN_DATA_FLOAT || math == CUDNN_FMA_MATH) return false;
    if (math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return true;
    const char *off = getenv("NVIDIA_TF32_OVERRIDE");
    return strcmp(test_backend, "cuda") == 0 && !(off != NULL && strcmp(off, "0") == 0);
}

double ttf32_bound(const double *want, const double *const *rounded, int nrounded, int64_t n)
{
    double worst = 0;
    for (int k = 0; k < nrounded; k++)
        for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs(rounded[k][i] - want[i]));
    return TTF32_SAFETY * worst;
}

double tconv_tolerance(cudnnDataType_t x, cudnnDataType_t out, cudnnMathType_t math)
{
    if (ttolerance(out) == 0) return 0; /* integers */
    return (ttf32_may_apply(x, math) ? ttolerance(CUDNN_DATA_HALF) : ttolerance(out)) * 4;
}

/* Whether value g passes against the reference w. (A separate function: GCC 13 at -O3 unswitched
   the loop below with this test inlined into it and flagged equal values as wrong.) */
static bool close_enough(double g, double w, double tol)
{
    if (isnan(w)) return isnan(g);
    if (isnan(g)) return false;
    if (isinf(w)) return g == w;
    /* integers: rounded either way, from a value the library may compute in float (a reference of
       63.4999987 may come out as 63.5000001 there and round to 64) */
    double lim = tol == 0 ? 0.5 + 8 * FLT_EPSILON * fmax(1.0, fabs(w)) : tol * fmax(1.0, fabs(w));
    return fabs(g - w) <= lim;
}

bool tcompare(cudnnDataType_t t, const void *got, const double *want, int64_t n, double tol,
              const char *what)
{
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
        if (close_enough(tload(t, got, i), want[i], tol)) continue;
        if (first < 0) first = i;
        bad++;
    }
    if (bad) {
        FAIL("%s: %lld of %lld values wrong; first at %lld: got %.9g, want %.9g (tolerance %g)", what,
             (long long)bad, (long long)n, (long long)first, tload(t, got, first), want[first], tol);
        return false;
    }
    return true;
}

/* ---- the log callback ---------------------------------------------------------------------- */

void log_hook_install(struct log_hook *h, unsigned mask, void *udata, cudnnCallback_t fn)
{
    CHECK_OK(cudnnGetCallback(&h->mask0, &h->udata0, &h->fn0));
    CHECK_OK(cudnnSetCallback(mask, udata, fn));
}

void log_hook_restore(const struct log_hook *h)
{
    CHECK_OK(cudnnSetCallback(h->mask0, h->udata0, h->fn0));
}

/* ---- the info log's replay lines ------------------------------------------------------------ */

static void replay_capture_line(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    struct replay_capture *c = udata;
    (void)sev, (void)dbg;
    if (strstr(msg, c->needle) == NULL) return;
    c->count++;
    snprintf(c->last, sizeof c->last, "%s", msg);
    size_t n = strlen(c->lines);
    snprintf(c->lines + n, sizeof c->lines - n, "%s\n", msg);
}

bool replay_logged(const struct replay_capture *c, const char *call, const char *problem)
{
    char want[512];
    snprintf(want, sizeof want, "%s on ", call);
    for (const char *line = c->lines; *line != '\0';) {
        const char *end = strchr(line, '\n'), *at = strstr(line, want), *p = strstr(line, problem);
        if (end == NULL) end = line + strlen(line);
        if (at != NULL && at < end && p != NULL && p < end) return true;
        line = *end ? end + 1 : end;
    }
    return false;
}

void log_capture_start(struct replay_capture *c, const char *needle)
{
    memset(c, 0, sizeof *c);
    snprintf(c->needle, sizeof c->needle, "%s", needle);
    log_hook_install(&c->hook, CUDNN_SEV_INFO_EN, c, replay_capture_line);
}

void replay_capture_start(struct replay_capture *c, const char *op)
{
    char needle[64];
    snprintf(needle, sizeof needle, "replay: opencudnn_bench --problem \"op=%s ", op);
    log_capture_start(c, needle);
}

void replay_capture_clear(struct replay_capture *c)
{
    c->count = 0;
    c->last[0] = c->lines[0] = '\0';
}

void replay_capture_stop(const struct replay_capture *c)
{
    log_hook_restore(&c->hook);
}
