/* common.c: what every op of the benchmark uses: memory and clocks on the benchmark's backend,
   data types and random data, problem strings, one call's tensors, and the names of the
   implementations that serve it, read from the library's info messages (see bench.h). */
#include "bench.h"

#include <time.h>

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* ---- memory and clocks on the benchmark's backend ----------------------------------------------- */

bool on_device;
#ifdef BENCH_CUDA
cudaStream_t stream;
#endif

double host_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Picks where data lives and tells opencudnn the same, so the handle and the buffers agree: the
   device when built with CUDA and one is present (unless OPENCUDNN_BACKEND=host), else host. The
   vendor's cuDNN has no host backend: its build always takes the device. */
static void choose_backend(void)
{
#ifdef BENCH_VENDOR
    const char *forced = "cuda";
#else
    const char *forced = getenv("OPENCUDNN_BACKEND");
#endif
    on_device = false;
#ifdef BENCH_CUDA
    int count = 0;
    if (!(forced && strcmp(forced, "host") == 0)) {
        if (cudaGetDeviceCount(&count) != cudaSuccess) cudaGetLastError();
        on_device = count > 0;
    }
#endif
    if (forced && strcmp(forced, on_device ? "cuda" : "host") != 0)
        die("OPENCUDNN_BACKEND=%s, but the benchmark's data would be in %s memory", forced,
            on_device ? "device" : "host");
    setenv("OPENCUDNN_BACKEND", on_device ? "cuda" : "host", 1);
}

cudnnHandle_t open_backend(void)
{
    choose_backend();
    cudnnHandle_t handle;
    cudnnStatus_t s = cudnnCreate(&handle);
    if (s != CUDNN_STATUS_SUCCESS) die("cudnnCreate: %s", cudnnGetErrorString(s));
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        s = cudnnSetStream(handle, stream);
        if (s != CUDNN_STATUS_SUCCESS) die("cudnnSetStream: %s", cudnnGetErrorString(s));
    }
#endif
    return handle;
}

void close_backend(cudnnHandle_t handle)
{
#ifdef BENCH_CUDA
    if (on_device) CUDA_TRY(cudaStreamDestroy(stream));
#endif
    cudnnDestroy(handle);
}

void *mem_alloc(size_t bytes)
{
    void *p = NULL;
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaMalloc(&p, bytes));
        return p;
    }
#endif
    p = malloc(bytes);
    if (p == NULL) die("out of host memory (%zu bytes)", bytes);
    return p;
}

void mem_free(void *p)
{
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaFree(p));
        return;
    }
#endif
    free(p);
}

void mem_copy(void *dst, const void *src, size_t bytes, bool to_device)
{
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
        return;
    }
#endif
    (void)to_device;
    memcpy(dst, src, bytes);
}

/* Waits until the device is idle. */
void device_sync(void)
{
#ifdef BENCH_CUDA
    if (on_device) CUDA_TRY(cudaStreamSynchronize(stream));
#endif
}

void timer_start(struct timer *t)
{
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaEventRecord(t->start, stream));
        return;
    }
#endif
    t->t0 = host_ms();
}

/* Milliseconds since timer_start, once the work enqueued in between has finished. */
double timer_stop(struct timer *t)
{
#ifdef BENCH_CUDA
    if (on_device) {
        float ms = 0;
        CUDA_TRY(cudaEventRecord(t->stop, stream));
        CUDA_TRY(cudaEventSynchronize(t->stop));
        CUDA_TRY(cudaEventElapsedTime(&ms, t->start, t->stop));
        return ms;
    }
#endif
    return host_ms() - t->t0;
}

/* ---- data types and random data ----------------------------------------------------------------- */

const struct dtype dtypes[] = {
    {"f32", CUDNN_DATA_FLOAT, 4, 1},
    {"f16", CUDNN_DATA_HALF, 2, 1},
    {"bf16", CUDNN_DATA_BFLOAT16, 2, 1},
    {"f64", CUDNN_DATA_DOUBLE, 8, 1},
    {"i8", CUDNN_DATA_INT8, 1, 1},
    {"u8", CUDNN_DATA_UINT8, 1, 1},
    {"i8x4", CUDNN_DATA_INT8x4, 1, 4},
    {"i8x32", CUDNN_DATA_INT8x32, 1, 32},
};
const size_t ndtypes = ARRAY_LEN(dtypes);

const struct dtype *dtype_named(const char *name)
{
    for (size_t i = 0; i < ndtypes; i++)
        if (strcmp(dtypes[i].name, name) == 0) return &dtypes[i];
    return NULL;
}

const struct dtype *dtype_of(cudnnDataType_t type)
{
    for (size_t i = 0; i < ndtypes; i++)
        if (dtypes[i].type == type) return &dtypes[i];
    return NULL;
}

bool dtype_is_int8(const struct dtype *t)
{
    return t->type == CUDNN_DATA_INT8 || t->type == CUDNN_DATA_UINT8 || t->type == CUDNN_DATA_INT8x4 ||
           t->type == CUDNN_DATA_INT8x32;
}

uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Stores one random value of type t at dst: magnitudes between 1/32 and 1, either sign, built
   from bits so that no conversion is needed (and never a zero, NaN or infinity). The 8-bit
   integers: -1 or 1 (uint8: 1 or 2), so that a convolution's sum over a few thousand taps
   seldom saturates an int8 output and the checksum still sees the values. */
static void random_value(const struct dtype *t, void *dst, uint64_t *rng)
{
    uint64_t r = splitmix(rng);
    double v = ldexp(1.0 + (double)(r >> 12) * 0x1p-52, -(int)(r % 5) - 1) * ((r >> 3) & 1 ? -1 : 1);
    if (dtype_is_int8(t)) {
        const int bit = (int)((r >> 3) & 1);
        *(signed char *)dst = (signed char)(t->type == CUDNN_DATA_UINT8 ? 1 + bit : bit ? -1 : 1);
        return;
    }
    switch (t->type) {
    case CUDNN_DATA_DOUBLE: memcpy(dst, &v, 8); return;
    case CUDNN_DATA_HALF: { /* sign, exponent 10..14 (2^-5..2^-1), 10 random mantissa bits */
        uint16_t h = (uint16_t)(((r >> 3) & 1) << 15 | (10 + r % 5) << 10 | ((r >> 20) & 0x3ff));
        memcpy(dst, &h, 2);
        return;
    }
    case CUDNN_DATA_BFLOAT16: { /* sign, exponent 122..126, 7 random mantissa bits */
        uint16_t b = (uint16_t)(((r >> 3) & 1) << 15 | (122 + r % 5) << 7 | ((r >> 20) & 0x7f));
        memcpy(dst, &b, 2);
        return;
    }
    default: {
        float f = (float)v;
        memcpy(dst, &f, 4);
        return;
    }
    }
}

/* The value at src of type t, as a double. */
double decode(const struct dtype *t, const void *src)
{
    uint16_t h;
    float f;
    switch (t->type) {
    case CUDNN_DATA_DOUBLE: {
        double d;
        memcpy(&d, src, 8);
        return d;
    }
    case CUDNN_DATA_HALF: {
        memcpy(&h, src, 2);
        int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        double mag = e == 0x1f ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(m | 0x400, e - 25);
        return h & 0x8000 ? -mag : mag;
    }
    case CUDNN_DATA_BFLOAT16: {
        memcpy(&h, src, 2);
        uint32_t bits = (uint32_t)h << 16;
        memcpy(&f, &bits, 4);
        return f;
    }
    case CUDNN_DATA_UINT8: return *(const unsigned char *)src;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_INT8x4:
    case CUDNN_DATA_INT8x32: return *(const signed char *)src;
    default: memcpy(&f, src, 4); return f;
    }
}

/* Writes v in type t (the number cudnnSetTensor takes): exact for the constants of the tables,
   rounded to nearest otherwise (the 8-bit integers also saturated). */
void encode(const struct dtype *t, double v, void *dst)
{
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    if (dtype_is_int8(t)) {
        const double lo = t->type == CUDNN_DATA_UINT8 ? 0 : -128, hi = t->type == CUDNN_DATA_UINT8 ? 255 : 127;
        const long q = lrint(v < lo ? lo : v > hi ? hi : v);
        if (t->type == CUDNN_DATA_UINT8) *(unsigned char *)dst = (unsigned char)q;
        else *(signed char *)dst = (signed char)q;
        return;
    }
    switch (t->type) {
    case CUDNN_DATA_DOUBLE: memcpy(dst, &v, 8); return;
    case CUDNN_DATA_HALF: {
        int e;
        double m = frexp(fabs(v), &e); /* |v| = m * 2^e, m in [0.5, 1) */
        if (v != 0 && (e + 14 < 1 || e + 14 > 30)) die("%g is not a normal half value", v);
        uint32_t q = v == 0 ? 0 : (uint32_t)((e + 14) << 10) + (uint32_t)llround((m * 2 - 1) * 1024);
        uint16_t h = (uint16_t)((v < 0 ? 0x8000 : 0) | q);
        memcpy(dst, &h, 2);
        return;
    }
    case CUDNN_DATA_BFLOAT16: {
        uint16_t b = (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
        memcpy(dst, &b, 2);
        return;
    }
    default: memcpy(dst, &f, 4); return;
    }
}

/* Fills n values of type t at dst (on the backend) with random data. The host staging buffer
   holds FILL_PERIOD values and is uploaded over and over: a period that is not a power of two, so
   that the repetition does not line up with tensor dims. */
enum { FILL_PERIOD = 4000037 };

void fill_random(const struct dtype *t, void *dst, int64_t n, uint64_t *rng)
{
    int64_t period = n < FILL_PERIOD ? n : FILL_PERIOD;
    char *stage = malloc((size_t)period * t->size);
    if (stage == NULL) die("out of host memory");
    for (int64_t i = 0; i < period; i++) random_value(t, stage + i * t->size, rng);
    for (int64_t done = 0; done < n; done += period) {
        int64_t chunk = n - done < period ? n - done : period;
        mem_copy((char *)dst + done * t->size, stage, (size_t)chunk * t->size, true);
    }
    free(stage);
#ifdef BENCH_CUDA
    /* A copy from pageable memory may still be in flight when cudaMemcpy returns, and the calls
       run on a non-blocking stream that does not wait for it. */
    if (on_device) CUDA_TRY(cudaDeviceSynchronize());
#endif
}

/* ---- problem strings ---------------------------------------------------------------------------- */

/* Splits "k=v k=v ..." into p; NULL or what is wrong. */
const char *problem_parse(const char *text, struct problem *p)
{
    static char why[128];
    p->nkeys = 0;
    for (const char *s = text; *s;) {
        while (*s == ' ') s++;
        if (!*s) break;
        size_t len = strcspn(s, " "), eq = strcspn(s, "=");
        if (p->nkeys == MAX_KEYS) return "too many keys";
        if (eq >= len || eq == 0 || eq >= sizeof p->key[0] || len - eq - 1 >= sizeof p->value[0]) {
            snprintf(why, sizeof why, "bad token '%.*s' (want key=value)", (int)len, s);
            return why;
        }
        memcpy(p->key[p->nkeys], s, eq);
        p->key[p->nkeys][eq] = '\0';
        memcpy(p->value[p->nkeys], s + eq + 1, len - eq - 1);
        p->value[p->nkeys][len - eq - 1] = '\0';
        p->nkeys++;
        s += len;
    }
    return p->nkeys > 0 && strcmp(p->key[0], "op") == 0 ? NULL : "a problem starts with op=";
}

/* The value of key in p (present: the op's key list was checked before setup runs). */
const char *problem_get(const struct problem *p, const char *key)
{
    for (int i = 0; i < p->nkeys; i++)
        if (strcmp(p->key[i], key) == 0) return p->value[i];
    die("problem has no key %s", key);
}

const char *problem_get_or(const struct problem *p, const char *key, const char *fallback)
{
    for (int i = 0; i < p->nkeys; i++)
        if (strcmp(p->key[i], key) == 0) return p->value[i];
    return fallback;
}

double problem_number(const struct problem *p, const char *key)
{
    const char *v = problem_get(p, key);
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end) die("%s=%s is not a number", key, v);
    return d;
}

int problem_choice(const struct problem *p, const char *key, const char *const *names, int n)
{
    const char *v = problem_get(p, key);
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) return i;
    return -1;
}

/* Adds `count` more tensors of x's shape and layout (t[0] is x). */
const char *add_like_x(struct call *c, const char *spec, int count)
{
    const char *why = NULL;
    for (int i = 0; i < count && !why; i++) why = add_tensor_spec(c, spec);
    return why;
}

void unit_scaling(struct call *c)
{
    c->alpha = scaling_of(1);
    c->beta = scaling_of(0);
}
const void *scaling_ptr(const struct call *c, const struct scaling *s)
{
    return c->dt->type == CUDNN_DATA_DOUBLE ? (const void *)&s->d : (const void *)&s->f;
}

struct scaling scaling_of(double v)
{
    return (struct scaling){(float)v, v};
}

double tensor_bytes(const struct call *c, int i)
{
    return (double)c->t[i].count * (double)c->t[i].dt->size;
}

/* Parses "d0xd1x...[:layout]" into the packed strides of that layout (NCHW_VECT_C: NCHW's; the
   descriptor gets the format instead, see add_tensor_dt). */
const char *parse_tensor(const char *spec, struct tensor *t)
{
    static char why[128];
    const char *s = spec;
    t->nd = 0;
    t->count = 1;
    while (*s && *s != ':') {
        char *end;
        long d = strtol(s, &end, 10);
        if (end == s || d <= 0 || d > INT32_MAX || t->nd == 8) goto bad;
        t->dims[t->nd++] = (int)d;
        t->count *= d;
        s = end;
        if (*s == 'x') s++;
        else if (*s && *s != ':') goto bad;
    }
    t->format = CUDNN_TENSOR_NCHW;
    if (*s == ':') {
        if (strcmp(s + 1, "nhwc") == 0) t->format = CUDNN_TENSOR_NHWC;
        else if (strcmp(s + 1, "nchw_vect_c") == 0) t->format = CUDNN_TENSOR_NCHW_VECT_C;
        else if (strcmp(s + 1, "nchw") != 0) goto bad;
    }
    const bool nhwc = t->format == CUDNN_TENSOR_NHWC;
    if (t->nd < 3) goto bad;
    /* Strides, innermost dim first: nchw: d-1, ..., 1, 0; nhwc: 1, d-1, ..., 2, 0. */
    int order[8], k = 0;
    if (nhwc) order[k++] = 1;
    for (int i = t->nd - 1; i >= 1; i--)
        if (!(nhwc && i == 1)) order[k++] = i;
    order[k++] = 0;
    int64_t stride = 1;
    for (int i = 0; i < t->nd; i++) {
        if (stride > INT32_MAX) goto bad;
        t->strides[order[i]] = (int)stride;
        stride *= t->dims[order[i]];
    }
    return NULL;
bad:
    snprintf(why, sizeof why, "bad tensor '%s' (want d0xd1x...[:nchw|:nhwc|:nchw_vect_c], 3 to 8 dims)", spec);
    return why;
}

/* Adds the tensor of problem key `key` to the call: its descriptor, and (not in a dry run) its
   buffer filled with random data. The vector types (i8x4, i8x32) go with layout nchw_vect_c, set
   by format (the setters with strides read a vector type's strides in vectors); the others by
   their strides. */
const char *add_tensor_dt(struct call *c, const char *spec, const struct dtype *dt)
{
    struct tensor *t = &c->t[c->ntensors];
    const char *why = parse_tensor(spec, t);
    if (why) return why;
    if (c->ntensors == MAX_TENSORS) return "too many tensors";
    if ((t->format == CUDNN_TENSOR_NCHW_VECT_C) != (dt->vect > 1))
        return "the layout nchw_vect_c goes with the vector types (i8x4, i8x32), and they with it";
    t->dt = dt;
    c->ntensors++;
    cudnnStatus_t s = cudnnCreateTensorDescriptor(&t->desc);
    if (s == CUDNN_STATUS_SUCCESS && dt->vect > 1)
        s = cudnnSetTensorNdDescriptorEx(t->desc, t->format, dt->type, t->nd, t->dims);
    else if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetTensorNdDescriptor(t->desc, dt->type, t->nd, t->dims, t->strides);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(s);
    if (!c->dry) {
        t->data = mem_alloc((size_t)t->count * dt->size);
        fill_random(dt, t->data, t->count, &c->rng);
    }
    return NULL;
}

/* A tensor spec with its own data type after '@' (see the top) gets that type, else the call's. */
const char *add_tensor_spec(struct call *c, const char *spec)
{
    const char *at = strchr(spec, '@');
    if (!at) return add_tensor_dt(c, spec, c->dt);
    char dims[256];
    if ((size_t)(at - spec) >= sizeof dims) return "tensor spec too long";
    memcpy(dims, spec, (size_t)(at - spec));
    dims[at - spec] = '\0';
    const struct dtype *dt = dtype_named(at + 1);
    return dt ? add_tensor_dt(c, dims, dt) : "unknown data type after '@' (" DTYPE_NAMES ")";
}

const char *add_tensor(struct call *c, const struct problem *p, const char *key)
{
    return add_tensor_spec(c, problem_get(p, key));
}

void call_release(struct call *c)
{
    for (int i = 0; i < c->ntensors; i++) {
        cudnnDestroyTensorDescriptor(c->t[i].desc);
        if (c->t[i].data) mem_free(c->t[i].data);
    }
    if (c->op_desc) cudnnDestroyOpTensorDescriptor(c->op_desc);
    if (c->filter_desc) cudnnDestroyFilterDescriptor(c->filter_desc);
    if (c->conv_desc) cudnnDestroyConvolutionDescriptor(c->conv_desc);
    if (c->workspace) mem_free(c->workspace);
    if (c->act_desc) cudnnDestroyActivationDescriptor(c->act_desc);
    if (c->pool_desc) cudnnDestroyPoolingDescriptor(c->pool_desc);
    if (c->release) c->release(c);
    c->release = NULL;
    c->state = NULL;
    c->act_desc = NULL;
    c->pool_desc = NULL;
    c->ntensors = 0;
    c->op_desc = NULL;
    c->filter_desc = NULL;
    c->conv_desc = NULL;
    c->workspace = NULL;
}
/* ---- which implementations serve a call ------------------------------------------------------------ */

/* opencudnn names the entry that serves a call in three info messages: the walker's pick,
   "<query>: impl <name> chosen"; a convolution repeating its previous call, which skips the pick,
   "<op>: <name> runs <problem>"; and a graph's execution plan when it is finalized,
   "plan of N stage(s), ...: conv <name> ... -> conv <name> ...". Names are "backend:approach".
   The vendor's build leaves its library's logging alone. */
#ifdef BENCH_VENDOR
void impl_watch_start(struct call *c)
{
    (void)c;
}

void impl_watch_end(void)
{
}
#else
/* The library's logging settings while a watch is on. */
static struct {
    unsigned mask;
    void *udata;
    cudnnCallback_t fptr;
} saved_log;

/* Adds the name at `name` (up to a space) to c->impl, once; anything without a backend prefix is
   no name. */
static void add_impl(struct call *c, const char *name)
{
    size_t n = strcspn(name, " ");
    if (n == 0 || memchr(name, ':', n) == NULL) return;
    for (const char *at = c->impl; *at;) {
        size_t len = strcspn(at, "+");
        if (len == n && strncmp(at, name, n) == 0) return;
        at += len + (at[len] == '+');
    }
    size_t used = strlen(c->impl);
    if (used + 1 + n < sizeof c->impl)
        snprintf(c->impl + used, sizeof c->impl - used, "%s%.*s", used ? "+" : "", (int)n, name);
}

static void note_impl(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    (void)sev, (void)dbg;
    struct call *c = udata;
    const char *at = strstr(msg, ": impl ");
    if (at != NULL) {
        at += strlen(": impl ");
        const char *tail = at + strcspn(at, " ");
        if (strcmp(tail, " chosen") == 0) add_impl(c, at);
    } else if (strncmp(msg, "plan of ", strlen("plan of ")) == 0) {
        for (at = strstr(msg, " conv "); at != NULL; at = strstr(at + 1, " conv ")) add_impl(c, at + strlen(" conv "));
    } else if ((at = strstr(msg, ": ")) != NULL) {
        at += 2;
        if (strncmp(at + strcspn(at, " "), " runs ", strlen(" runs ")) == 0) add_impl(c, at);
    }
}

void impl_watch_start(struct call *c)
{
    cudnnGetCallback(&saved_log.mask, &saved_log.udata, &saved_log.fptr);
    cudnnSetCallback(CUDNN_SEV_INFO_EN, c, note_impl);
}

void impl_watch_end(void)
{
    cudnnSetCallback(saved_log.mask, saved_log.udata, saved_log.fptr);
}
#endif
