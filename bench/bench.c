/* bench.c: the benchmark. One source, built twice: against opencudnn (opencudnn_bench) and against
   another cuDNN (opencudnn_bench_vendor: the vendor's cuDNN 9 on the GPU machine; see
   CMakeLists.txt beside this file), so that both run the same cases through the same API and
   bench/run.sh can put them side by side.

   Main decision: cases are data. A suite is a table of rows {name, timing, problem}; the problem
   string is the canonical description of one API call and names the op that runs it. A new suite
   (convolution, norms, activations...) is a new table, plus one entry in `ops` for each new kind
   of call. The same string given to --problem replays one call; --list prints every case.

   Problem strings: "op=<op> key=value ...", one space between, the keys exactly those the op lists
   and in its order (that makes the string canonical: one call, one spelling). Values:
     dt      the data type of every tensor: f32, f16, bf16, f64
     tensor  DIMS[:LAYOUT][@DT], DIMS as d0xd1x...; LAYOUT nchw (packed, last dim innermost; the
             default) or nhwc (packed channels-last: dim 1 innermost, then the last dims, dim 0
             outermost); DT this tensor's data type where it is not dt's (a converting transform)
     alpha, beta, value...  decimal numbers (value has the tensor's type, as cudnnSetTensor takes it)
   The convolutions (convfwd, convbwdd, convbwdf) take the shape as numbers instead (n c h w k r s
   pad stride dil) and layout=nchw|nhwc; see setup_conv. Suites: ceiling, tensor, resnet50 (its
   convolution shapes at batch 64, three directions, f32 NCHW, f16 and bf16 NHWC, plus one
   host-call case), resnet50_b256 (the same at batch 256), resnet50_host (its 3x3 layers forward
   in f32 NCHW at batch 8: the host backend's suite), nn (activation, softmax, max pooling and
   batch norm, forward and backward, on 64 x 256 x 56 x 56 in f32 NCHW and f16 NHWC, softmax also
   in bf16 NHWC; those ops take x as a tensor spec plus their modes, see the nn ops), adv (the
   CTC loss, op ctc, through cudnnCTCLoss and cudnnCTCLoss_v8).

   Timing: a TIME_DEVICE case runs the call n times between two CUDA events (a host clock on the
   host backend) after warm-up, in --reps batches, and reports the median time per call; n is
   chosen so that a batch lasts about --min-ms. A TIME_HOST_CALL case measures what a call costs
   the calling thread: the device is idle (synchronized) before each call and the clock stops when
   the call returns, so no kernel time is counted; the median over the calls. A device-to-device
   copy measured in the same run gives the bandwidth ceiling that GB/s is compared with. Ops that
   count their arithmetic (the convolutions) also report flops, printed as TFLOP/s; in --tsv it is
   the last column, after problem, so that readers of the older columns keep working. On the host
   backend they are printed as GFLOP/s and as a share of the processor's fp32 FMA peak (see
   host_fma_peak).

   Checks: before timing, each case runs once on fresh random data, seeded by the case name so that
   both builds see the same data, and reports a checksum of its output: S = sum w_i y_i with
   pseudo-random weights w_i in [-1, 1], and N = sqrt(sum (w_i y_i)^2). Two correct results differ
   in S by rounding only (far under 1% of N); a wrong index or an unwritten region moves S by about
   N. bench/run.sh compares the builds that way.

   Only API present in both cuDNN 8 and 9 is used for shared cases; statuses are reported by name
   (cudnnGetErrorString), since cuDNN 9 renumbered cudnnStatus_t. */
#include <cudnn.h>

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_peak.h"
#include "resnet50_shapes.h"

#ifdef BENCH_CUDA
#include <cuda_runtime.h>
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

#ifdef BENCH_CUDA
#define CUDA_TRY(call)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) die("%s: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
    } while (0)
#endif

/* ---- memory and clocks on the benchmark's backend ----------------------------------------------- */

/* true: buffers are device memory and calls are timed with CUDA events on `stream`; false: host
   memory (opencudnn's host backend), timed with the host clock. */
static bool on_device;
#ifdef BENCH_CUDA
static cudaStream_t stream;
#endif

static double host_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void *mem_alloc(size_t bytes)
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

static void mem_free(void *p)
{
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaFree(p));
        return;
    }
#endif
    free(p);
}

static void mem_copy(void *dst, const void *src, size_t bytes, bool to_device)
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
static void device_sync(void)
{
#ifdef BENCH_CUDA
    if (on_device) CUDA_TRY(cudaStreamSynchronize(stream));
#endif
}

struct timer {
#ifdef BENCH_CUDA
    cudaEvent_t start, stop;
#endif
    double t0;
};

static void timer_start(struct timer *t)
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
static double timer_stop(struct timer *t)
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

struct dtype {
    const char *name; /* as problem strings spell it */
    cudnnDataType_t type;
    size_t size;
};

static const struct dtype dtypes[] = {
    {"f32", CUDNN_DATA_FLOAT, 4},
    {"f16", CUDNN_DATA_HALF, 2},
    {"bf16", CUDNN_DATA_BFLOAT16, 2},
    {"f64", CUDNN_DATA_DOUBLE, 8},
};

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Stores one random value of type t at dst: magnitudes between 1/32 and 1, either sign, built
   from bits so that no conversion is needed (and never a zero, NaN or infinity). */
static void random_value(const struct dtype *t, void *dst, uint64_t *rng)
{
    uint64_t r = splitmix(rng);
    double v = ldexp(1.0 + (double)(r >> 12) * 0x1p-52, -(int)(r % 5) - 1) * ((r >> 3) & 1 ? -1 : 1);
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
static double decode(const struct dtype *t, const void *src)
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
    default: memcpy(&f, src, 4); return f;
    }
}

/* Writes v in type t (the number cudnnSetTensor takes): exact for the constants of the tables,
   rounded to nearest otherwise. */
static void encode(const struct dtype *t, double v, void *dst)
{
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, 4);
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

static void fill_random(const struct dtype *t, void *dst, int64_t n, uint64_t *rng)
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

enum { MAX_KEYS = 16 };

struct problem {
    int nkeys;
    char key[MAX_KEYS][16];
    char value[MAX_KEYS][64];
};

/* Splits "k=v k=v ..." into p; NULL or what is wrong. */
static const char *problem_parse(const char *text, struct problem *p)
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
static const char *problem_get(const struct problem *p, const char *key)
{
    for (int i = 0; i < p->nkeys; i++)
        if (strcmp(p->key[i], key) == 0) return p->value[i];
    die("problem has no key %s", key);
}

static double problem_number(const struct problem *p, const char *key)
{
    const char *v = problem_get(p, key);
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end) die("%s=%s is not a number", key, v);
    return d;
}

/* ---- one call: its tensors, buffers and scalars ------------------------------------------------ */

enum { MAX_TENSORS = 8 };

struct tensor {
    int nd;
    int dims[8], strides[8];
    int64_t count; /* elements */
    const struct dtype *dt; /* the call's, but float (double for f64) for batch-norm parameters */
    cudnnTensorDescriptor_t desc;
    void *data; /* NULL in a dry run */
};

/* alpha and beta are float for float, half and bfloat16 data, double for double data. */
struct scaling {
    float f;
    double d;
};

struct call {
    cudnnHandle_t handle;
    const struct dtype *dt;
    bool dry;          /* descriptors only: no buffers, nothing runs (--list) */
    uint64_t rng;      /* the case's random stream */
    int ntensors, out; /* out: the tensor the result lands in */
    struct tensor t[MAX_TENSORS];
    struct scaling alpha, alpha2, beta;
    unsigned char value[8]; /* cudnnSetTensor's value, in the tensor's type */
    cudnnOpTensorDescriptor_t op_desc;
    /* convolutions: the filter (also t[1], for its buffer), the convolution, the algorithm picked
       by cudnnGetConvolution*Algorithm_v7 and its workspace */
    cudnnFilterDescriptor_t filter_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    int algo;
    void *workspace;
    /* activation, pooling; softmax and batch norm keep their modes in mode and algo */
    cudnnActivationDescriptor_t act_desc;
    cudnnPoolingDescriptor_t pool_desc;
    int mode;
    size_t workspace_bytes;
    /* ctc: the loss descriptor; labels, label lengths and input lengths on the host and (api v8)
       on the device */
    cudnnCTCLossDescriptor_t ctc_desc;
    int *ctc_host[3];
    void *ctc_dev[3];
    double bytes; /* the fewest bytes the call must move through memory (each op says how) */
    double flops; /* the arithmetic of the call (0: not counted; the convolutions say how) */
};

static const void *scaling_ptr(const struct call *c, const struct scaling *s)
{
    return c->dt->type == CUDNN_DATA_DOUBLE ? (const void *)&s->d : (const void *)&s->f;
}

static struct scaling scaling_of(double v)
{
    return (struct scaling){(float)v, v};
}

static double tensor_bytes(const struct call *c, int i)
{
    return (double)c->t[i].count * (double)c->t[i].dt->size;
}

/* Parses "d0xd1x...[:layout]" into the packed strides of that layout. */
static const char *parse_tensor(const char *spec, struct tensor *t)
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
    bool nhwc = false;
    if (*s == ':') {
        if (strcmp(s + 1, "nhwc") == 0) nhwc = true;
        else if (strcmp(s + 1, "nchw") != 0) goto bad;
    }
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
    snprintf(why, sizeof why, "bad tensor '%s' (want d0xd1x...[:nchw|:nhwc], 3 to 8 dims)", spec);
    return why;
}

/* Adds the tensor of problem key `key` to the call: its descriptor, and (not in a dry run) its
   buffer filled with random data. */
static const char *add_tensor_dt(struct call *c, const char *spec, const struct dtype *dt)
{
    struct tensor *t = &c->t[c->ntensors];
    const char *why = parse_tensor(spec, t);
    if (why) return why;
    if (c->ntensors == MAX_TENSORS) return "too many tensors";
    t->dt = dt;
    c->ntensors++;
    cudnnStatus_t s = cudnnCreateTensorDescriptor(&t->desc);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnSetTensorNdDescriptor(t->desc, dt->type, t->nd, t->dims, t->strides);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(s);
    if (!c->dry) {
        t->data = mem_alloc((size_t)t->count * dt->size);
        fill_random(dt, t->data, t->count, &c->rng);
    }
    return NULL;
}

/* A tensor spec with its own data type after '@' (see the top) gets that type, else the call's. */
static const char *add_tensor_spec(struct call *c, const char *spec)
{
    const char *at = strchr(spec, '@');
    if (!at) return add_tensor_dt(c, spec, c->dt);
    char dims[256];
    if ((size_t)(at - spec) >= sizeof dims) return "tensor spec too long";
    memcpy(dims, spec, (size_t)(at - spec));
    dims[at - spec] = '\0';
    for (size_t i = 0; i < ARRAY_LEN(dtypes); i++)
        if (strcmp(dtypes[i].name, at + 1) == 0) return add_tensor_dt(c, dims, &dtypes[i]);
    return "unknown data type after '@' (f32, f16, bf16, f64)";
}

static const char *add_tensor(struct call *c, const struct problem *p, const char *key)
{
    return add_tensor_spec(c, problem_get(p, key));
}

static void call_release(struct call *c)
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
    if (c->ctc_desc) cudnnDestroyCTCLossDescriptor(c->ctc_desc);
    for (int i = 0; i < 3; i++) {
        free(c->ctc_host[i]);
        if (c->ctc_dev[i]) mem_free(c->ctc_dev[i]);
        c->ctc_host[i] = NULL;
        c->ctc_dev[i] = NULL;
    }
    c->ctc_desc = NULL;
    c->act_desc = NULL;
    c->pool_desc = NULL;
    c->ntensors = 0;
    c->op_desc = NULL;
    c->filter_desc = NULL;
    c->conv_desc = NULL;
    c->workspace = NULL;
}

/* ---- ops: one entry per kind of call ------------------------------------------------------------ */

/* Each setup reads its problem's keys, adds its tensors (in the order run uses them), sets out,
   alpha/beta and bytes (the formula next to it), and returns NULL or what is wrong. */

/* copy: the device-to-device copy of a buffer the size of y: the bandwidth ceiling.
   bytes = |y| read + |y| written. */
static const char *setup_copy(struct call *c, const struct problem *p)
{
    const char *why = add_tensor(c, p, "y");
    if (!why) why = add_tensor(c, p, "y"); /* the source, of the same size */
    c->bytes = 2 * tensor_bytes(c, 0);
    return why;
}

static cudnnStatus_t run_copy(struct call *c)
{
    size_t bytes = (size_t)c->t[0].count * c->dt->size;
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaMemcpyAsync(c->t[0].data, c->t[1].data, bytes, cudaMemcpyDeviceToDevice, stream));
        return CUDNN_STATUS_SUCCESS;
    }
#endif
    memcpy(c->t[0].data, c->t[1].data, bytes);
    return CUDNN_STATUS_SUCCESS;
}

/* settensor: y = value. bytes = |y| written. */
static const char *setup_settensor(struct call *c, const struct problem *p)
{
    encode(c->dt, problem_number(p, "value"), c->value);
    const char *why = add_tensor(c, p, "y");
    c->bytes = tensor_bytes(c, 0);
    return why;
}

static cudnnStatus_t run_settensor(struct call *c)
{
    return cudnnSetTensor(c->handle, c->t[0].desc, c->t[0].data, c->value);
}

/* scaletensor: y = alpha * y. bytes = |y| read + |y| written. */
static const char *setup_scaletensor(struct call *c, const struct problem *p)
{
    c->alpha = scaling_of(problem_number(p, "alpha"));
    const char *why = add_tensor(c, p, "y");
    c->bytes = 2 * tensor_bytes(c, 0);
    return why;
}

static cudnnStatus_t run_scaletensor(struct call *c)
{
    return cudnnScaleTensor(c->handle, c->t[0].desc, c->t[0].data, scaling_ptr(c, &c->alpha));
}

/* addtensor: y = alpha * x + beta * y, x broadcast where its dims are 1; transform: the same
   between layouts (same dims, other strides). bytes = |x| read + |y| written + |y| read when
   beta != 0. */
static const char *setup_x_into_y(struct call *c, const struct problem *p)
{
    c->alpha = scaling_of(problem_number(p, "alpha"));
    c->beta = scaling_of(problem_number(p, "beta"));
    const char *why = add_tensor(c, p, "x");
    if (!why) why = add_tensor(c, p, "y");
    c->out = 1;
    c->bytes = tensor_bytes(c, 0) + tensor_bytes(c, 1) * (c->beta.d != 0 ? 2 : 1);
    return why;
}

static cudnnStatus_t run_addtensor(struct call *c)
{
    return cudnnAddTensor(c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                          scaling_ptr(c, &c->beta), c->t[1].desc, c->t[1].data);
}

/* optensor: c = op(alpha1 * a, alpha2 * b) + beta * c, b broadcast where its dims are 1; the
   compute type is double for f64 data and float otherwise.
   bytes = |a| + |b| read + |c| written + |c| read when beta != 0. */
static const char *setup_optensor(struct call *c, const struct problem *p)
{
    static const struct {
        const char *name;
        cudnnOpTensorOp_t op;
    } opts[] = {{"add", CUDNN_OP_TENSOR_ADD}, {"mul", CUDNN_OP_TENSOR_MUL}, {"min", CUDNN_OP_TENSOR_MIN},
                {"max", CUDNN_OP_TENSOR_MAX}};
    const char *name = problem_get(p, "opt");
    size_t i = 0;
    while (i < ARRAY_LEN(opts) && strcmp(opts[i].name, name) != 0) i++;
    if (i == ARRAY_LEN(opts)) return "opt must be add, mul, min or max";
    c->alpha = scaling_of(problem_number(p, "alpha1"));
    c->alpha2 = scaling_of(problem_number(p, "alpha2"));
    c->beta = scaling_of(problem_number(p, "beta"));
    cudnnStatus_t s = cudnnCreateOpTensorDescriptor(&c->op_desc);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetOpTensorDescriptor(c->op_desc, opts[i].op,
                                       c->dt->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                                       CUDNN_NOT_PROPAGATE_NAN);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(s);
    const char *why = add_tensor(c, p, "a");
    if (!why) why = add_tensor(c, p, "b");
    if (!why) why = add_tensor(c, p, "c");
    c->out = 2;
    c->bytes = tensor_bytes(c, 0) + tensor_bytes(c, 1) + tensor_bytes(c, 2) * (c->beta.d != 0 ? 2 : 1);
    return why;
}

static cudnnStatus_t run_optensor(struct call *c)
{
    return cudnnOpTensor(c->handle, c->op_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                         scaling_ptr(c, &c->alpha2), c->t[1].desc, c->t[1].data, scaling_ptr(c, &c->beta),
                         c->t[2].desc, c->t[2].data);
}

static cudnnStatus_t run_transform(struct call *c)
{
    return cudnnTransformTensor(c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                scaling_ptr(c, &c->beta), c->t[1].desc, c->t[1].data);
}

/* convfwd, convbwdd, convbwdf: a 2-D convolution (cross-correlation, one group) and its two
   gradients. Keys: layout nchw|nhwc (of x, y and the filter alike), x = n x c x h x w, filter =
   k x c x r x s, pad/stride/dil the same along both spatial dims; y = n x k x p x q with
   p = (h + 2 pad - dil (r - 1) - 1) / stride + 1 (q alike). Tensors, in this order: x (dx for
   convbwdd), the filter (dw for convbwdf), y (dy for the gradients); the result is y, dx or dw.
   alpha 1, beta 0. The compute type is float (double for f64): half and bfloat16 data with float
   accumulation, as training frameworks run them, and tensor-op math allowed for them (default
   math for f32 and f64). algo=auto takes the first algorithm that cudnnGetConvolution*Algorithm_v7
   returns with CUDNN_STATUS_SUCCESS (the library's heuristic choice, no search); any other value
   names the algorithm to force (conv_algo_names), so that one algorithm is compared with the same
   algorithm of the other library. The workspace is what Get*WorkspaceSize asks for (its status,
   such as NOT_SUPPORTED, is the row's status when the algorithm does not apply); not in a dry run.
   flops = 2 N K P Q C R S per group (a multiply and an add for each filter tap of each output;
   each gradient does the same arithmetic); bytes = |x| + |filter| + |y| (each tensor read or
   written once: the fewest possible, far under what a convolution really moves). */
enum { CONV_FWD, CONV_BWD_DATA, CONV_BWD_FILTER };

/* The algorithm names of algo=, indexed by the cudnnConvolution*Algo_t value, one list a direction
   (NULL: a value with no algorithm). */
static const char *const conv_algo_names[3][8] = {
    [CONV_FWD] = {"implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft", "fft_tiling", "winograd",
                  "winograd_nonfused"},
    [CONV_BWD_DATA] = {"algo_0", "algo_1", "fft", "fft_tiling", "winograd", "winograd_nonfused"},
    [CONV_BWD_FILTER] = {"algo_0", "algo_1", "fft", "algo_3", "winograd", "winograd_nonfused", "fft_tiling"},
};

/* The forced algorithm of algo= for direction dir, -1 for auto, -2 for a name not in the list. */
static int conv_algo_of(const char *name, int dir)
{
    if (strcmp(name, "auto") == 0) return -1;
    for (int i = 0; i < 8; i++)
        if (conv_algo_names[dir][i] && strcmp(conv_algo_names[dir][i], name) == 0) return i;
    return -2;
}

static const char *setup_conv(struct call *c, const struct problem *p, int dir)
{
    static char why_buf[128];
    const char *layout = problem_get(p, "layout");
    bool nhwc = strcmp(layout, "nhwc") == 0;
    if (!nhwc && strcmp(layout, "nchw") != 0) return "layout must be nchw or nhwc";
    static const char *const names[] = {"n", "c", "h", "w", "k", "r", "s", "pad", "stride", "dil"};
    int v[ARRAY_LEN(names)];
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        double d = problem_number(p, names[i]);
        if (d != floor(d) || d < (i == 7 ? 0 : 1) || d > INT32_MAX) {
            snprintf(why_buf, sizeof why_buf, "%s must be a whole number >= %d", names[i], i == 7 ? 0 : 1);
            return why_buf;
        }
        v[i] = (int)d;
    }
    int n = v[0], ch = v[1], h = v[2], w = v[3], k = v[4], r = v[5], s = v[6], pad = v[7], stride = v[8], dil = v[9];
    int ph = h + 2 * pad - dil * (r - 1) - 1, qw = w + 2 * pad - dil * (s - 1) - 1;
    if (ph < 0 || qw < 0) return "the filter is larger than the padded input";
    int pp = ph / stride + 1, qq = qw / stride + 1;
    int forced = conv_algo_of(problem_get(p, "algo"), dir);
    if (forced == -2) return "algo must be auto or an algorithm of the direction (see conv_algo_names)";
    const char *lay = nhwc ? ":nhwc" : "";
    char spec[96];
    snprintf(spec, sizeof spec, "%dx%dx%dx%d%s", n, ch, h, w, lay);
    const char *why = add_tensor_spec(c, spec);
    snprintf(spec, sizeof spec, "%dx%dx%dx%d%s", k, ch, r, s, lay);
    if (!why) why = add_tensor_spec(c, spec);
    snprintf(spec, sizeof spec, "%dx%dx%dx%d%s", n, k, pp, qq, lay);
    if (!why) why = add_tensor_spec(c, spec);
    if (why) return why;
    c->out = dir == CONV_FWD ? 2 : dir == CONV_BWD_DATA ? 0 : 1;
    c->alpha = scaling_of(1);
    c->beta = scaling_of(0);
    c->bytes = tensor_bytes(c, 0) + tensor_bytes(c, 1) + tensor_bytes(c, 2);
    c->flops = 2.0 * n * k * pp * qq * (double)ch * r * s;

    bool half = c->dt->type == CUDNN_DATA_HALF || c->dt->type == CUDNN_DATA_BFLOAT16;
    cudnnStatus_t st = cudnnCreateFilterDescriptor(&c->filter_desc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetFilter4dDescriptor(c->filter_desc, c->dt->type, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                        k, ch, r, s);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnCreateConvolutionDescriptor(&c->conv_desc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetConvolution2dDescriptor(c->conv_desc, pad, pad, stride, stride, dil, dil, CUDNN_CROSS_CORRELATION,
                                             c->dt->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetConvolutionMathType(c->conv_desc, half ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH);
    if (st != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(st);
    if (c->dry) return NULL;

    cudnnTensorDescriptor_t x = c->t[0].desc, y = c->t[2].desc;
    cudnnFilterDescriptor_t f = c->filter_desc;
    enum { MAX_ALGOS = 16 };
    int max = 0, got = 0, found = forced;
    st = CUDNN_STATUS_SUCCESS;
    if (forced < 0 && dir == CONV_FWD) {
        cudnnConvolutionFwdAlgoPerf_t perf[MAX_ALGOS];
        st = cudnnGetConvolutionForwardAlgorithmMaxCount(c->handle, &max);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnGetConvolutionForwardAlgorithm_v7(c->handle, x, f, c->conv_desc, y,
                                                        max < MAX_ALGOS ? max : MAX_ALGOS, &got, perf);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && found < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) found = (int)perf[i].algo;
    } else if (forced < 0 && dir == CONV_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[MAX_ALGOS];
        st = cudnnGetConvolutionBackwardDataAlgorithmMaxCount(c->handle, &max);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnGetConvolutionBackwardDataAlgorithm_v7(c->handle, f, y, c->conv_desc, x,
                                                             max < MAX_ALGOS ? max : MAX_ALGOS, &got, perf);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && found < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) found = (int)perf[i].algo;
    } else if (forced < 0) {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[MAX_ALGOS];
        st = cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(c->handle, &max);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnGetConvolutionBackwardFilterAlgorithm_v7(c->handle, x, y, c->conv_desc, f,
                                                               max < MAX_ALGOS ? max : MAX_ALGOS, &got, perf);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && found < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) found = (int)perf[i].algo;
    }
    if (st == CUDNN_STATUS_SUCCESS && found >= 0) {
        if (dir == CONV_FWD)
            st = cudnnGetConvolutionForwardWorkspaceSize(c->handle, x, f, c->conv_desc, y,
                                                         (cudnnConvolutionFwdAlgo_t)found, &c->workspace_bytes);
        else if (dir == CONV_BWD_DATA)
            st = cudnnGetConvolutionBackwardDataWorkspaceSize(c->handle, f, y, c->conv_desc, x,
                                                              (cudnnConvolutionBwdDataAlgo_t)found,
                                                              &c->workspace_bytes);
        else
            st = cudnnGetConvolutionBackwardFilterWorkspaceSize(c->handle, x, y, c->conv_desc, f,
                                                                (cudnnConvolutionBwdFilterAlgo_t)found,
                                                                &c->workspace_bytes);
    }
    if (st != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(st);
    if (found < 0) return "no algorithm with status CUDNN_STATUS_SUCCESS";
    c->algo = found;
    if (c->workspace_bytes > 0) c->workspace = mem_alloc(c->workspace_bytes);
    return NULL;
}

static const char *setup_convfwd(struct call *c, const struct problem *p)
{
    return setup_conv(c, p, CONV_FWD);
}

static const char *setup_convbwdd(struct call *c, const struct problem *p)
{
    return setup_conv(c, p, CONV_BWD_DATA);
}

static const char *setup_convbwdf(struct call *c, const struct problem *p)
{
    return setup_conv(c, p, CONV_BWD_FILTER);
}

static cudnnStatus_t run_convfwd(struct call *c)
{
    return cudnnConvolutionForward(c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data, c->filter_desc,
                                   c->t[1].data, c->conv_desc, (cudnnConvolutionFwdAlgo_t)c->algo, c->workspace,
                                   c->workspace_bytes, scaling_ptr(c, &c->beta), c->t[2].desc, c->t[2].data);
}

static cudnnStatus_t run_convbwdd(struct call *c)
{
    return cudnnConvolutionBackwardData(c->handle, scaling_ptr(c, &c->alpha), c->filter_desc, c->t[1].data,
                                        c->t[2].desc, c->t[2].data, c->conv_desc,
                                        (cudnnConvolutionBwdDataAlgo_t)c->algo, c->workspace, c->workspace_bytes,
                                        scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data);
}

static cudnnStatus_t run_convbwdf(struct call *c)
{
    return cudnnConvolutionBackwardFilter(c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                          c->t[2].desc, c->t[2].data, c->conv_desc,
                                          (cudnnConvolutionBwdFilterAlgo_t)c->algo, c->workspace,
                                          c->workspace_bytes, scaling_ptr(c, &c->beta), c->filter_desc,
                                          c->t[1].data);
}

/* ---- nn ops: activation, softmax, pooling, batch norm ---------------------------------------------
   Each takes x as a tensor spec (a 4-D one for pooling and batch norm); the other data tensors have
   its shape and layout (pooling's y and dy: n x c x p x q, p = (h + 2 pad - win) / stride + 1).
   alpha 1, beta 0 everywhere. A backward op's inputs are made consistent in setup (not in a dry
   run): y (and for batch norm the saved statistics) are computed from x by the forward call, so
   that both builds see the same, meaningful inputs. The byte counts are the fewest the call must
   move (each tensor read or written once); |p| is one parameter vector (C floats, C doubles for
   f64). */

/* The index of problem key `key`'s value in names, or -1. */
static int problem_choice(const struct problem *p, const char *key, const char *const *names, int n)
{
    const char *v = problem_get(p, key);
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) return i;
    return -1;
}

/* Adds `count` more tensors of x's shape and layout (t[0] is x). */
static const char *add_like_x(struct call *c, const char *spec, int count)
{
    const char *why = NULL;
    for (int i = 0; i < count && !why; i++) why = add_tensor_spec(c, spec);
    return why;
}

static void unit_scaling(struct call *c)
{
    c->alpha = scaling_of(1);
    c->beta = scaling_of(0);
}

/* actfwd: y = act(x). Tensors x, y. bytes = |x| read + |y| written.
   actbwd: dx = act'(x) dy. Tensors y, dy, x, dx (y = act(x) computed in setup). bytes = 3 |x|:
   dy and one of x, y read, dx written. mode relu|sigmoid|tanh (no clipping, coef 0). */
static const char *setup_act(struct call *c, const struct problem *p, bool bwd)
{
    static const char *const names[] = {"relu", "sigmoid", "tanh"};
    static const cudnnActivationMode_t modes[] = {CUDNN_ACTIVATION_RELU, CUDNN_ACTIVATION_SIGMOID,
                                                  CUDNN_ACTIVATION_TANH};
    int m = problem_choice(p, "mode", names, (int)ARRAY_LEN(names));
    if (m < 0) return "mode must be relu, sigmoid or tanh";
    const char *spec = problem_get(p, "x");
    const char *why = add_like_x(c, spec, bwd ? 4 : 2);
    if (why) return why;
    unit_scaling(c);
    c->out = bwd ? 3 : 1;
    c->bytes = (bwd ? 3 : 2) * tensor_bytes(c, 0);
    cudnnStatus_t st = cudnnCreateActivationDescriptor(&c->act_desc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetActivationDescriptor(c->act_desc, modes[m], CUDNN_NOT_PROPAGATE_NAN, 0.0);
    if (st == CUDNN_STATUS_SUCCESS && bwd && !c->dry)
        st = cudnnActivationForward(c->handle, c->act_desc, scaling_ptr(c, &c->alpha), c->t[2].desc, c->t[2].data,
                                    scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static const char *setup_actfwd(struct call *c, const struct problem *p)
{
    return setup_act(c, p, false);
}

static const char *setup_actbwd(struct call *c, const struct problem *p)
{
    return setup_act(c, p, true);
}

static cudnnStatus_t run_actfwd(struct call *c)
{
    return cudnnActivationForward(c->handle, c->act_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                  scaling_ptr(c, &c->beta), c->t[1].desc, c->t[1].data);
}

static cudnnStatus_t run_actbwd(struct call *c)
{
    return cudnnActivationBackward(c->handle, c->act_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                   c->t[1].desc, c->t[1].data, c->t[2].desc, c->t[2].data, scaling_ptr(c, &c->beta),
                                   c->t[3].desc, c->t[3].data);
}

/* softmaxfwd: y = softmax(x). Tensors x, y. bytes = |x| read + |y| written.
   softmaxbwd: dx from y and dy. Tensors y, dy, dx (y = softmax of random x, in setup; dx first
   holds that x). bytes = |y| + |dy| read + |dx| written. algo fast|accurate|log; mode
   channel|instance. */
static const char *setup_softmax(struct call *c, const struct problem *p, bool bwd)
{
    static const char *const algos[] = {"fast", "accurate", "log"};
    static const char *const modes[] = {"instance", "channel"};
    int a = problem_choice(p, "algo", algos, (int)ARRAY_LEN(algos));
    int m = problem_choice(p, "mode", modes, (int)ARRAY_LEN(modes));
    if (a < 0) return "algo must be fast, accurate or log";
    if (m < 0) return "mode must be instance or channel";
    c->algo = a == 0 ? CUDNN_SOFTMAX_FAST : a == 1 ? CUDNN_SOFTMAX_ACCURATE : CUDNN_SOFTMAX_LOG;
    c->mode = m == 0 ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL;
    const char *why = add_like_x(c, problem_get(p, "x"), bwd ? 3 : 2);
    if (why) return why;
    unit_scaling(c);
    c->out = bwd ? 2 : 1;
    c->bytes = (bwd ? 3 : 2) * tensor_bytes(c, 0);
    if (!bwd || c->dry) return NULL;
    cudnnStatus_t st = cudnnSoftmaxForward(c->handle, (cudnnSoftmaxAlgorithm_t)c->algo, (cudnnSoftmaxMode_t)c->mode,
                                           scaling_ptr(c, &c->alpha), c->t[2].desc, c->t[2].data,
                                           scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static const char *setup_softmaxfwd(struct call *c, const struct problem *p)
{
    return setup_softmax(c, p, false);
}

static const char *setup_softmaxbwd(struct call *c, const struct problem *p)
{
    return setup_softmax(c, p, true);
}

static cudnnStatus_t run_softmaxfwd(struct call *c)
{
    return cudnnSoftmaxForward(c->handle, (cudnnSoftmaxAlgorithm_t)c->algo, (cudnnSoftmaxMode_t)c->mode,
                               scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data, scaling_ptr(c, &c->beta),
                               c->t[1].desc, c->t[1].data);
}

static cudnnStatus_t run_softmaxbwd(struct call *c)
{
    return cudnnSoftmaxBackward(c->handle, (cudnnSoftmaxAlgorithm_t)c->algo, (cudnnSoftmaxMode_t)c->mode,
                                scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data, c->t[1].desc, c->t[1].data,
                                scaling_ptr(c, &c->beta), c->t[2].desc, c->t[2].data);
}

/* poolfwd: 2-D pooling, a win x win window, the same pad and stride along both dims. Tensors x, y.
   bytes = |x| read + |y| written.
   poolbwd: tensors y, dy, x, dx (y = pool(x) in setup). bytes = |x| + |dy| read + |dx| written
   (y need not be read: the maximum can be found again in x).
   mode max|avg (avg: padding excluded from the count). */
static const char *setup_pool(struct call *c, const struct problem *p, bool bwd)
{
    static char why_buf[96];
    static const char *const names[] = {"max", "avg"};
    int m = problem_choice(p, "mode", names, (int)ARRAY_LEN(names));
    if (m < 0) return "mode must be max or avg";
    static const char *const keys[] = {"win", "pad", "stride"};
    int v[3];
    for (int i = 0; i < 3; i++) {
        double d = problem_number(p, keys[i]);
        if (d != floor(d) || d < (i == 1 ? 0 : 1) || d > 1024) {
            snprintf(why_buf, sizeof why_buf, "%s must be a whole number from %d to 1024", keys[i], i == 1 ? 0 : 1);
            return why_buf;
        }
        v[i] = (int)d;
    }
    const char *spec = problem_get(p, "x");
    struct tensor x;
    const char *why = parse_tensor(spec, &x);
    if (why) return why;
    if (x.nd != 4) return "pooling takes a 4-D x";
    int ph = x.dims[2] + 2 * v[1] - v[0], qw = x.dims[3] + 2 * v[1] - v[0];
    if (ph < 0 || qw < 0 || v[1] >= v[0]) return "the window must be larger than pad and fit the padded input";
    char yspec[96];
    snprintf(yspec, sizeof yspec, "%dx%dx%dx%d%s", x.dims[0], x.dims[1], ph / v[2] + 1, qw / v[2] + 1,
             strstr(spec, ":nhwc") ? ":nhwc" : "");
    if (bwd) {
        why = add_like_x(c, yspec, 2); /* y, dy */
        if (!why) why = add_like_x(c, spec, 2); /* x, dx */
    } else {
        why = add_tensor_spec(c, spec);
        if (!why) why = add_tensor_spec(c, yspec);
    }
    if (why) return why;
    unit_scaling(c);
    int xi = bwd ? 2 : 0, yi = bwd ? 0 : 1;
    c->out = bwd ? 3 : 1;
    c->bytes = (bwd ? 2 : 1) * tensor_bytes(c, xi) + tensor_bytes(c, yi);
    cudnnStatus_t st = cudnnCreatePoolingDescriptor(&c->pool_desc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetPooling2dDescriptor(c->pool_desc,
                                         m == 0 ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                         CUDNN_NOT_PROPAGATE_NAN, v[0], v[0], v[1], v[1], v[2], v[2]);
    if (st == CUDNN_STATUS_SUCCESS && bwd && !c->dry)
        st = cudnnPoolingForward(c->handle, c->pool_desc, scaling_ptr(c, &c->alpha), c->t[2].desc, c->t[2].data,
                                 scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static const char *setup_poolfwd(struct call *c, const struct problem *p)
{
    return setup_pool(c, p, false);
}

static const char *setup_poolbwd(struct call *c, const struct problem *p)
{
    return setup_pool(c, p, true);
}

static cudnnStatus_t run_poolfwd(struct call *c)
{
    return cudnnPoolingForward(c->handle, c->pool_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                               scaling_ptr(c, &c->beta), c->t[1].desc, c->t[1].data);
}

static cudnnStatus_t run_poolbwd(struct call *c)
{
    return cudnnPoolingBackward(c->handle, c->pool_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                c->t[1].desc, c->t[1].data, c->t[2].desc, c->t[2].data, scaling_ptr(c, &c->beta),
                                c->t[3].desc, c->t[3].data);
}

/* Batch norm, epsilon 1e-5, exponential average factor 0.1. mode spatial|per_activation; the
   parameters (scale, bias, means, variances) are 1 x C x 1 x 1 (spatial) or 1 x C x H x W, packed
   NCHW, float (double for f64 data).
   bnfwdinf: tensors x, y, scale, bias, mean, var (mean and var: the running statistics of x,
   computed in setup by a training call with factor 1). bytes = |x| read + |y| written + 4 |p|.
   bnfwdtrain: tensors x, y, scale, bias, running mean, running var, saved mean, saved inverse
   std. bytes = |x| read + |y| written + 2 |p| (scale, bias) + 4 |p| (running read and written)
   + 2 |p| (saved written); an implementation in two passes reads x twice.
   bnbwd: tensors x, dy, dx, scale, dscale, dbias, saved mean, saved inverse std (the saved
   statistics of x from a training call in setup). bytes = |x| + |dy| read + |dx| written + 3 |p|
   read + 2 |p| written; in two passes x and dy are read twice. */
enum { BN_INF, BN_TRAIN, BN_BWD };

static const double bn_epsilon = 1e-5, bn_factor = 0.1;

static cudnnStatus_t bn_train(struct call *c, int x, int y, int scale, int bias, void *rmean, void *rvar,
                              void *smean, void *sinv, double factor)
{
    return cudnnBatchNormalizationForwardTraining(
        c->handle, (cudnnBatchNormMode_t)c->mode, scaling_ptr(c, &c->alpha), scaling_ptr(c, &c->beta), c->t[x].desc,
        c->t[x].data, c->t[y].desc, c->t[y].data, c->t[scale].desc, c->t[scale].data, c->t[bias].data, factor,
        rmean, rvar, bn_epsilon, smean, sinv);
}

static const char *setup_bn(struct call *c, const struct problem *p, int kind)
{
    static const char *const names[] = {"spatial", "per_activation"};
    int m = problem_choice(p, "mode", names, (int)ARRAY_LEN(names));
    if (m < 0) return "mode must be spatial or per_activation";
    c->mode = m == 0 ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_PER_ACTIVATION;
    const char *spec = problem_get(p, "x");
    struct tensor x;
    const char *why = parse_tensor(spec, &x);
    if (why) return why;
    if (x.nd != 4) return "batch norm takes a 4-D x";
    char pspec[64];
    if (m == 0) snprintf(pspec, sizeof pspec, "1x%dx1x1", x.dims[1]);
    else snprintf(pspec, sizeof pspec, "1x%dx%dx%d", x.dims[1], x.dims[2], x.dims[3]);
    const struct dtype *pdt = &dtypes[c->dt->type == CUDNN_DATA_DOUBLE ? 3 : 0];
    int nparams = kind == BN_INF ? 4 : kind == BN_TRAIN ? 6 : 5, nx = kind == BN_BWD ? 3 : 2;
    why = add_like_x(c, spec, nx);
    for (int i = 0; i < nparams && !why; i++) why = add_tensor_dt(c, pspec, pdt);
    if (why) return why;
    unit_scaling(c);
    c->out = kind == BN_BWD ? 2 : 1;
    double px = tensor_bytes(c, 0), pp = tensor_bytes(c, 3);
    c->bytes = kind == BN_INF ? 2 * px + 4 * pp : kind == BN_TRAIN ? 2 * px + 8 * pp : 3 * px + 5 * pp;
    if (c->dry || kind == BN_TRAIN) return NULL;
    cudnnStatus_t st;
    if (kind == BN_INF) {
        /* y as scratch output; running mean and var become x's statistics */
        st = bn_train(c, 0, 1, 2, 3, c->t[4].data, c->t[5].data, NULL, NULL, 1.0);
    } else {
        /* dx as scratch output, dbias as the bias; the running statistics thrown away */
        size_t pbytes = (size_t)c->t[3].count * pdt->size;
        void *rmean = mem_alloc(pbytes), *rvar = mem_alloc(pbytes);
        st = bn_train(c, 0, 2, 3, 5, rmean, rvar, c->t[6].data, c->t[7].data, 1.0);
        device_sync();
        mem_free(rmean);
        mem_free(rvar);
    }
    device_sync();
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static const char *setup_bnfwdinf(struct call *c, const struct problem *p)
{
    return setup_bn(c, p, BN_INF);
}

static const char *setup_bnfwdtrain(struct call *c, const struct problem *p)
{
    return setup_bn(c, p, BN_TRAIN);
}

static const char *setup_bnbwd(struct call *c, const struct problem *p)
{
    return setup_bn(c, p, BN_BWD);
}

static cudnnStatus_t run_bnfwdinf(struct call *c)
{
    return cudnnBatchNormalizationForwardInference(
        c->handle, (cudnnBatchNormMode_t)c->mode, scaling_ptr(c, &c->alpha), scaling_ptr(c, &c->beta), c->t[0].desc,
        c->t[0].data, c->t[1].desc, c->t[1].data, c->t[2].desc, c->t[2].data, c->t[3].data, c->t[4].data,
        c->t[5].data, bn_epsilon);
}

static cudnnStatus_t run_bnfwdtrain(struct call *c)
{
    return bn_train(c, 0, 1, 2, 3, c->t[4].data, c->t[5].data, c->t[6].data, c->t[7].data, bn_factor);
}

static cudnnStatus_t run_bnbwd(struct call *c)
{
    return cudnnBatchNormalizationBackward(
        c->handle, (cudnnBatchNormMode_t)c->mode, scaling_ptr(c, &c->alpha), scaling_ptr(c, &c->beta),
        scaling_ptr(c, &c->alpha), scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data, c->t[1].desc, c->t[1].data,
        c->t[2].desc, c->t[2].data, c->t[3].desc, c->t[3].data, c->t[4].data, c->t[5].data, bn_epsilon, c->t[6].data,
        c->t[7].data);
}

/* ctc: the CTC loss and its gradients (cudnnCTCLoss with api=host: labels in host memory;
   cudnnCTCLoss_v8 with api=v8: labels on the device), SOFTMAX normalization (probs holds the
   activations, as frameworks call it), NaN propagated, algorithm DETERMINISTIC. Every input is t
   steps long; sample i's label length is drawn from [labels / 2, labels], its symbols from
   [1, a - 1], by the case's random stream. Tensors probs (t x n x a), gradients (the output),
   costs (n x 1 x 1). bytes = |probs| read + |gradients| written (the recursion's workspace
   traffic, about as much again per state and step, is not counted: the op is bound by its
   sequential steps, not by memory). */
static const char *setup_ctc(struct call *c, const struct problem *p)
{
    static const char *const apis[] = {"host", "v8"};
    int api = problem_choice(p, "api", apis, (int)ARRAY_LEN(apis));
    double t = problem_number(p, "t"), n = problem_number(p, "n"), a = problem_number(p, "a"),
           l = problem_number(p, "labels");
    if (api < 0) return "api must be host or v8";
    if (c->dt->type != CUDNN_DATA_FLOAT) return "ctc takes dt=f32";
    if (t < 1 || n < 1 || a < 2 || l < 1 || l > 256 || l > t || t * n * a > INT32_MAX)
        return "want t, n >= 1, a >= 2, 1 <= labels <= min(256, t)";
    int T = (int)t, N = (int)n, A = (int)a, L = (int)l;
    char spec[96];
    snprintf(spec, sizeof spec, "%dx%dx%d", T, N, A);
    const char *why = add_tensor_spec(c, spec);
    if (!why) why = add_tensor_spec(c, spec);
    snprintf(spec, sizeof spec, "%dx1x1", N);
    if (!why) why = add_tensor_spec(c, spec);
    if (why) return why;
    c->mode = api;
    c->out = 1;
    c->bytes = 2 * tensor_bytes(c, 0);
    for (int i = 0; i < 3; i++)
        if ((c->ctc_host[i] = malloc(sizeof(int) * (size_t)N * (i == 0 ? L : 1))) == NULL) die("out of host memory");
    int total = 0;
    for (int i = 0; i < N; i++) {
        int len = L / 2 + (int)(splitmix(&c->rng) % (uint64_t)(L - L / 2 + 1));
        for (int j = 0; j < len; j++) c->ctc_host[0][total++] = 1 + (int)(splitmix(&c->rng) % (uint64_t)(A - 1));
        c->ctc_host[1][i] = len;
        c->ctc_host[2][i] = T;
    }
    cudnnStatus_t s = cudnnCreateCTCLossDescriptor(&c->ctc_desc);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetCTCLossDescriptor_v8(c->ctc_desc, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                         CUDNN_PROPAGATE_NAN, L);
    if (s == CUDNN_STATUS_SUCCESS && api == 0)
        s = cudnnGetCTCLossWorkspaceSize(c->handle, c->t[0].desc, c->t[1].desc, c->ctc_host[0], c->ctc_host[1],
                                         c->ctc_host[2], CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c->ctc_desc,
                                         &c->workspace_bytes);
    if (s == CUDNN_STATUS_SUCCESS && api == 1)
        s = cudnnGetCTCLossWorkspaceSize_v8(c->handle, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c->ctc_desc, c->t[0].desc,
                                            c->t[1].desc, &c->workspace_bytes);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(s);
    if (c->dry) return NULL;
    c->workspace = mem_alloc(c->workspace_bytes ? c->workspace_bytes : 1);
    if (api == 1)
        for (int i = 0; i < 3; i++) {
            size_t bytes = sizeof(int) * (size_t)(i == 0 ? total : N);
            c->ctc_dev[i] = mem_alloc(bytes ? bytes : 1);
            mem_copy(c->ctc_dev[i], c->ctc_host[i], bytes, true);
        }
    return NULL;
}

static cudnnStatus_t run_ctc(struct call *c)
{
    if (c->mode == 0)
        return cudnnCTCLoss(c->handle, c->t[0].desc, c->t[0].data, c->ctc_host[0], c->ctc_host[1], c->ctc_host[2],
                            c->t[2].data, c->t[1].desc, c->t[1].data, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c->ctc_desc,
                            c->workspace, c->workspace_bytes);
    return cudnnCTCLoss_v8(c->handle, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c->ctc_desc, c->t[0].desc, c->t[0].data,
                           c->ctc_dev[0], c->ctc_dev[1], c->ctc_dev[2], c->t[2].data, c->t[1].desc, c->t[1].data,
                           c->workspace_bytes, c->workspace);
}

struct op {
    const char *name;
    const char *keys; /* every key after op=, in canonical order */
    const char *(*setup)(struct call *c, const struct problem *p);
    cudnnStatus_t (*run)(struct call *c);
};

static const struct op ops[] = {
    {"copy", "dt y", setup_copy, run_copy},
    {"settensor", "dt y value", setup_settensor, run_settensor},
    {"scaletensor", "dt y alpha", setup_scaletensor, run_scaletensor},
    {"addtensor", "dt x y alpha beta", setup_x_into_y, run_addtensor},
    {"optensor", "opt dt a b c alpha1 alpha2 beta", setup_optensor, run_optensor},
    {"transform", "dt x y alpha beta", setup_x_into_y, run_transform},
#define CONV_KEYS "dt layout n c h w k r s pad stride dil algo"
    {"convfwd", CONV_KEYS, setup_convfwd, run_convfwd},
    {"convbwdd", CONV_KEYS, setup_convbwdd, run_convbwdd},
    {"convbwdf", CONV_KEYS, setup_convbwdf, run_convbwdf},
#undef CONV_KEYS
    {"actfwd", "mode dt x", setup_actfwd, run_actfwd},
    {"actbwd", "mode dt x", setup_actbwd, run_actbwd},
    {"softmaxfwd", "algo mode dt x", setup_softmaxfwd, run_softmaxfwd},
    {"softmaxbwd", "algo mode dt x", setup_softmaxbwd, run_softmaxbwd},
    {"poolfwd", "mode dt x win pad stride", setup_poolfwd, run_poolfwd},
    {"poolbwd", "mode dt x win pad stride", setup_poolbwd, run_poolbwd},
    {"bnfwdinf", "mode dt x", setup_bnfwdinf, run_bnfwdinf},
    {"bnfwdtrain", "mode dt x", setup_bnfwdtrain, run_bnfwdtrain},
    {"bnbwd", "mode dt x", setup_bnbwd, run_bnbwd},
    {"ctc", "api dt t n a labels", setup_ctc, run_ctc},
};

/* The op of a parsed problem, after checking that its keys are the op's, in the op's order. */
static const struct op *problem_op(const struct problem *p, const char **why)
{
    static char msg[640];
    for (size_t i = 0; i < ARRAY_LEN(ops); i++) {
        if (strcmp(ops[i].name, p->value[0]) != 0) continue;
        char keys[256] = "";
        for (int k = 1; k < p->nkeys; k++) {
            strncat(keys, k > 1 ? " " : "", sizeof keys - strlen(keys) - 1);
            strncat(keys, p->key[k], sizeof keys - strlen(keys) - 1);
        }
        if (strcmp(keys, ops[i].keys) != 0) {
            snprintf(msg, sizeof msg, "op=%s takes the keys '%s', in that order (got '%s')", ops[i].name,
                     ops[i].keys, keys);
            *why = msg;
            return NULL;
        }
        return &ops[i];
    }
    snprintf(msg, sizeof msg, "unknown op '%s'", p->value[0]);
    *why = msg;
    return NULL;
}

static const struct dtype *problem_dtype(const struct problem *p)
{
    const char *name = problem_get(p, "dt");
    for (size_t i = 0; i < ARRAY_LEN(dtypes); i++)
        if (strcmp(dtypes[i].name, name) == 0) return &dtypes[i];
    return NULL;
}

/* ---- the suites ----------------------------------------------------------------------------------- */

enum timing {
    TIME_DEVICE,   /* device time per call (CUDA events around a batch) */
    TIME_HOST_CALL /* host time per call, the device idle before each */
};

struct bench_case {
    const char *name; /* unique, short: what --case matches */
    enum timing timing;
    const char *problem;
};

struct suite {
    const char *name;
    const struct bench_case *cases;
    size_t ncases;
};

/* The bandwidth ceiling: always measured first in a run that times anything on the device. */
static const struct bench_case ceiling_cases[] = {
    {"copy", TIME_DEVICE, "op=copy dt=f32 y=32x256x128x128"}, /* 512 MiB read + 512 MiB written */
};

/* The memory-bound tensor ops on large tensors: T is 128 Mi elements (512 MiB in f32, 256 MiB in
   f16), B its per-channel bias. The byte counts follow each op's formula above. */
#define T "32x256x128x128"
#define T_NHWC T ":nhwc"
#define B "1x256x1x1"
static const struct bench_case tensor_cases[] = {
    /* y written: 512 MiB / 256 MiB */
    {"set_f32", TIME_DEVICE, "op=settensor dt=f32 y=" T " value=0.5"},
    {"set_f16", TIME_DEVICE, "op=settensor dt=f16 y=" T " value=0.5"},
    /* y read and written: 1 GiB / 512 MiB. alpha -1: the timed calls repeat on their own output,
       which any other factor would drive towards zero or infinity. */
    {"scale_f32", TIME_DEVICE, "op=scaletensor dt=f32 y=" T " alpha=-1"},
    {"scale_f16", TIME_DEVICE, "op=scaletensor dt=f16 y=" T " alpha=-1"},
    /* x read, y read and written: 1.5 GiB / 768 MiB */
    {"add_same_f32", TIME_DEVICE, "op=addtensor dt=f32 x=" T " y=" T " alpha=1 beta=1"},
    {"add_same_f16", TIME_DEVICE, "op=addtensor dt=f16 x=" T " y=" T " alpha=1 beta=1"},
    /* bias (1 KiB / 512 B) read, y read and written: 1 GiB / 512 MiB */
    {"add_bias_f32", TIME_DEVICE, "op=addtensor dt=f32 x=" B " y=" T " alpha=1 beta=1"},
    {"add_bias_f16", TIME_DEVICE, "op=addtensor dt=f16 x=" B " y=" T " alpha=1 beta=1"},
    {"add_bias_nhwc_f32", TIME_DEVICE, "op=addtensor dt=f32 x=" B ":nhwc y=" T_NHWC " alpha=1 beta=1"},
    {"add_bias_nhwc_f16", TIME_DEVICE, "op=addtensor dt=f16 x=" B ":nhwc y=" T_NHWC " alpha=1 beta=1"},
    /* a and b read, c written (beta 0): 1.5 GiB / 768 MiB */
    {"optensor_add_f32", TIME_DEVICE, "op=optensor opt=add dt=f32 a=" T " b=" T " c=" T " alpha1=1 alpha2=1 beta=0"},
    {"optensor_add_f16", TIME_DEVICE, "op=optensor opt=add dt=f16 a=" T " b=" T " c=" T " alpha1=1 alpha2=1 beta=0"},
    {"optensor_mul_f32", TIME_DEVICE, "op=optensor opt=mul dt=f32 a=" T " b=" T " c=" T " alpha1=1 alpha2=1 beta=0"},
    {"optensor_mul_f16", TIME_DEVICE, "op=optensor opt=mul dt=f16 a=" T " b=" T " c=" T " alpha1=1 alpha2=1 beta=0"},
    /* x read, y written (beta 0): 1 GiB / 512 MiB */
    {"transform_nchw_nhwc_f32", TIME_DEVICE, "op=transform dt=f32 x=" T " y=" T_NHWC " alpha=1 beta=0"},
    {"transform_nchw_nhwc_f16", TIME_DEVICE, "op=transform dt=f16 x=" T " y=" T_NHWC " alpha=1 beta=0"},
    {"transform_nhwc_nchw_f32", TIME_DEVICE, "op=transform dt=f32 x=" T_NHWC " y=" T " alpha=1 beta=0"},
    {"transform_nhwc_nchw_f16", TIME_DEVICE, "op=transform dt=f16 x=" T_NHWC " y=" T " alpha=1 beta=0"},
    /* conversions, x read and y written: 768 MiB */
    {"transform_f32_to_f16", TIME_DEVICE, "op=transform dt=f32 x=" T " y=" T "@f16 alpha=1 beta=0"},
    {"transform_f16_to_f32", TIME_DEVICE, "op=transform dt=f16 x=" T " y=" T "@f32 alpha=1 beta=0"},
    /* The host cost of one small call (the API's overhead): validation, dispatch, launch. */
    {"latency_add_bias_f32", TIME_HOST_CALL, "op=addtensor dt=f32 x=1x16x1x1 y=1x16x8x8 alpha=1 beta=1"},
    /* The floor under every such call: one device-to-device cudaMemcpyAsync, no cuDNN at all. */
    {"latency_floor_memcpy", TIME_HOST_CALL, "op=copy dt=f32 y=1x16x8x8"},
};
#undef T
#undef T_NHWC
#undef B

/* One row: name SHAPE_DIR_DT[SUFFIX], e.g. l2_3x3s2_128_128_bwdf_bf16. */
#define RN50_ROW(N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, st)                          \
    {#name "_" #DIR "_" #DT SUFFIX, TIME_DEVICE,                                                   \
     "op=" #OP " dt=" #DT " layout=" #LAYOUT " n=" #N " c=" #c " h=" #h " w=" #h " k=" #k " r=" #r  \
     " s=" #r " pad=" #pad " stride=" #st " dil=1 algo=auto"},
#define RN50_DIRS(N, DT, LAYOUT, SUFFIX)                                                            \
    RN50_SHAPES(RN50_ROW, N, convfwd, fwd, DT, LAYOUT, SUFFIX)                                     \
    RN50_SHAPES(RN50_ROW, N, convbwdd, bwdd, DT, LAYOUT, SUFFIX)                                   \
    RN50_SHAPES(RN50_ROW, N, convbwdf, bwdf, DT, LAYOUT, SUFFIX)
/* Batch 64: forward, backward data, backward filter in f32 NCHW, f16 NHWC and bf16 NHWC; then the
   host cost of one small forward call (batch 1, the algorithm picked once in setup). */
static const struct bench_case resnet50_cases[] = {
    RN50_DIRS(64, f32, nchw, "") RN50_DIRS(64, f16, nhwc, "") RN50_DIRS(64, bf16, nhwc, "")
    {"latency_conv_1x1_f16", TIME_HOST_CALL,
     "op=convfwd dt=f16 layout=nhwc n=1 c=64 h=56 w=56 k=64 r=1 s=1 pad=0 stride=1 dil=1 algo=auto"},
};
/* Batch 256: the same three directions and three types. Run it on its own (`--suite
   resnet50_b256`): 207 cases of four times the batch-64 work, several minutes per build. */
static const struct bench_case resnet50_b256_cases[] = {
    RN50_DIRS(256, f32, nchw, "_b256") RN50_DIRS(256, f16, nhwc, "_b256") RN50_DIRS(256, bf16, nhwc, "_b256")
};
/* The host backend's suite (a 2-core CPU does a batch-64 layer in seconds): the 3x3 layers
   (r = 3 picks them: RN50_ONLY_<r>), forward, f32 NCHW, batch 8. */
#define RN50_3X3_ROW(N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, st)                      \
    RN50_ONLY_##r(RN50_ROW(N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, st))
static const struct bench_case resnet50_host_cases[] = {
    RN50_SHAPES(RN50_3X3_ROW, 8, convfwd, fwd, f32, nchw, "_b8")
};
#undef RN50_3X3_ROW
#undef RN50_ROW

/* One algorithm forced in every direction where cuDNN 8.2 has it, f32 NCHW, on ResNet-50's stride-1
   3x3 layers at batch 64 and LeNet's two 5x5 layers (MNIST 28x28, 20 and 50 filters) at batch 64,
   with the heuristic's choice (auto) beside them. A row is SHAPE_DIR_f32_ALGO; an algorithm that
   does not apply to a shape shows the status of its workspace query. */
#define ALGO_ROW(OP, DIR, ALGO, name, n, c, k, h, r, pad)                                                 {#name "_" #DIR "_f32_" #ALGO, TIME_DEVICE,                                                           "op=" #OP " dt=f32 layout=nchw n=" #n " c=" #c " h=" #h " w=" #h " k=" #k " r=" #r " s=" #r         " pad=" #pad " stride=1 dil=1 algo=" #ALGO},
#define ALGO_ROWS(...)                                                                                    ALGO_ROW(convfwd, fwd, auto, __VA_ARGS__) ALGO_ROW(convfwd, fwd, fft, __VA_ARGS__)                    ALGO_ROW(convfwd, fwd, fft_tiling, __VA_ARGS__) ALGO_ROW(convfwd, fwd, winograd, __VA_ARGS__)         ALGO_ROW(convfwd, fwd, winograd_nonfused, __VA_ARGS__)                                               ALGO_ROW(convbwdd, bwdd, auto, __VA_ARGS__) ALGO_ROW(convbwdd, bwdd, fft, __VA_ARGS__)                ALGO_ROW(convbwdd, bwdd, fft_tiling, __VA_ARGS__) ALGO_ROW(convbwdd, bwdd, winograd, __VA_ARGS__) \
    ALGO_ROW(convbwdd, bwdd, winograd_nonfused, __VA_ARGS__)                                         \
    ALGO_ROW(convbwdf, bwdf, auto, __VA_ARGS__) ALGO_ROW(convbwdf, bwdf, fft, __VA_ARGS__)            \
    ALGO_ROW(convbwdf, bwdf, fft_tiling, __VA_ARGS__) ALGO_ROW(convbwdf, bwdf, winograd_nonfused, __VA_ARGS__)
static const struct bench_case conv_algo_cases[] = {
    ALGO_ROWS(l1_3x3_64_64, 64, 64, 64, 56, 3, 1) ALGO_ROWS(l2_3x3_128_128, 64, 128, 128, 28, 3, 1)
    ALGO_ROWS(l3_3x3_256_256, 64, 256, 256, 14, 3, 1) ALGO_ROWS(l4_3x3_512_512, 64, 512, 512, 7, 3, 1)
    ALGO_ROWS(lenet_conv1, 64, 1, 20, 28, 5, 0) ALGO_ROWS(lenet_conv2, 64, 20, 50, 12, 5, 0)
};
#undef ALGO_ROWS
#undef ALGO_ROW
#undef RN50_DIRS

/* The memory-bound nn layers on ResNet-50's layer1 activations: X is 64 x 256 x 56 x 56 (49 Mi
   elements: 196 MiB in f32, 98 MiB in f16), f32 NCHW and f16 NHWC; Y is the 3x3 stride 2 pooled
   64 x 256 x 28 x 28 (49 MiB / 24.5 MiB); |p| = 1 KiB (256 floats). Softmax and batch norm run in bf16
   NHWC too (the 16-bit kernels with the other rounding). The byte counts follow each op's formula
   above. */
#define SOFTMAX_ROWS(DT, LAY)                                                                         \
    /* x read, y written: 392 MiB / 196 MiB */                                                        \
    {"softmax_fwd_" #DT, TIME_DEVICE, "op=softmaxfwd algo=accurate mode=channel dt=" #DT " x=64x256x56x56" LAY}, \
    /* y, dy read, dx written: 588 MiB / 294 MiB */                                                   \
    {"softmax_bwd_" #DT, TIME_DEVICE, "op=softmaxbwd algo=accurate mode=channel dt=" #DT " x=64x256x56x56" LAY},
#define NN_ROWS(DT, LAY)                                                                              \
    /* x read, y written: 392 MiB / 196 MiB */                                                        \
    {"relu_fwd_" #DT, TIME_DEVICE, "op=actfwd mode=relu dt=" #DT " x=64x256x56x56" LAY},              \
    /* dy, x read, dx written: 588 MiB / 294 MiB */                                                   \
    {"relu_bwd_" #DT, TIME_DEVICE, "op=actbwd mode=relu dt=" #DT " x=64x256x56x56" LAY},              \
    SOFTMAX_ROWS(DT, LAY)                                                                             \
    /* x read, y written: 245 MiB / 122.5 MiB */                                                      \
    {"maxpool_3x3s2_fwd_" #DT, TIME_DEVICE,                                                          \
     "op=poolfwd mode=max dt=" #DT " x=64x256x56x56" LAY " win=3 pad=1 stride=2"},                    \
    /* x, dy read, dx written: 441 MiB / 220.5 MiB */                                                 \
    {"maxpool_3x3s2_bwd_" #DT, TIME_DEVICE,                                                          \
     "op=poolbwd mode=max dt=" #DT " x=64x256x56x56" LAY " win=3 pad=1 stride=2"},                    \
    BN_ROWS(DT, LAY)
#define BN_ROWS(DT, LAY)                                                                              \
    /* x read, y written: 392 MiB / 196 MiB, + 4 KiB of parameters */                                 \
    {"bn_fwd_inf_" #DT, TIME_DEVICE, "op=bnfwdinf mode=spatial dt=" #DT " x=64x256x56x56" LAY},       \
    /* x read, y written: 392 MiB / 196 MiB, + 8 KiB of parameters */                                 \
    {"bn_fwd_train_" #DT, TIME_DEVICE, "op=bnfwdtrain mode=spatial dt=" #DT " x=64x256x56x56" LAY},   \
    /* x, dy read, dx written: 588 MiB / 294 MiB, + 5 KiB of parameters */                            \
    {"bn_bwd_" #DT, TIME_DEVICE, "op=bnbwd mode=spatial dt=" #DT " x=64x256x56x56" LAY},
static const struct bench_case nn_cases[] = {
    NN_ROWS(f32, "") NN_ROWS(f16, ":nhwc") SOFTMAX_ROWS(bf16, ":nhwc") BN_ROWS(bf16, ":nhwc")
};
#undef NN_ROWS
#undef SOFTMAX_ROWS
#undef BN_ROWS

/* The adv library's ops: the CTC loss at batch 64, 500 steps, an alphabet of 32, labels up to
   100, through both calls. */
static const struct bench_case adv_cases[] = {
    {"ctc_b64_t500_a32_l100", TIME_DEVICE, "op=ctc api=host dt=f32 t=500 n=64 a=32 labels=100"},
    {"ctc_v8_b64_t500_a32_l100", TIME_DEVICE, "op=ctc api=v8 dt=f32 t=500 n=64 a=32 labels=100"},
};

static const struct suite suites[] = {
    {"ceiling", ceiling_cases, ARRAY_LEN(ceiling_cases)},
    {"tensor", tensor_cases, ARRAY_LEN(tensor_cases)},
    {"resnet50", resnet50_cases, ARRAY_LEN(resnet50_cases)},
    {"resnet50_b256", resnet50_b256_cases, ARRAY_LEN(resnet50_b256_cases)},
    {"resnet50_host", resnet50_host_cases, ARRAY_LEN(resnet50_host_cases)},
    {"conv_algo", conv_algo_cases, ARRAY_LEN(conv_algo_cases)},
    {"nn", nn_cases, ARRAY_LEN(nn_cases)},
    {"adv", adv_cases, ARRAY_LEN(adv_cases)},
};

/* ---- running a case --------------------------------------------------------------------------- */

struct options {
    const char *suites; /* comma-separated suite names, NULL: all */
    const char *cases;  /* comma-separated substrings of case names, NULL: all */
    bool list, tsv, strict;
    int reps, iters; /* iters 0: chosen from min_ms */
    double min_ms;
};

struct result {
    const char *status; /* cudnnGetErrorString of the call, or why the case did not run */
    double ms;          /* per call (median), or -1 */
    double bytes;
    double flops; /* 0: not counted */
    double sum, norm; /* the checksum of the output (see the top of this file) */
};

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: n is small */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void checksum(const struct call *c, struct result *r)
{
    const struct tensor *t = &c->t[c->out];
    size_t bytes = (size_t)t->count * t->dt->size;
    char *host = malloc(bytes);
    if (host == NULL) die("out of host memory");
    mem_copy(host, t->data, bytes, false);
    uint64_t w_state = 42;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < t->count; i++) {
        double w = (double)(splitmix(&w_state) >> 11) * 0x1p-52 - 1.0, v = w * decode(t->dt, host + i * t->dt->size);
        sum += v;
        sq += v * v;
    }
    free(host);
    r->sum = sum;
    r->norm = sqrt(sq);
}

/* Runs the call: first once to check status and output, then timed. Exits on a CUDA error:
   after one the device is in an unknown state and no later number would mean anything. */
static void measure(struct call *c, const struct op *op, enum timing timing, const struct options *o,
                    struct result *r)
{
    cudnnStatus_t s = op->run(c);
    device_sync();
    r->status = cudnnGetErrorString(s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    checksum(c, r);

    enum { MAX_SAMPLES = 1001 };
    double samples[MAX_SAMPLES];
    if (timing == TIME_HOST_CALL) {
        int n = o->iters > 0 ? o->iters : 1000;
        if (n > MAX_SAMPLES) n = MAX_SAMPLES;
        for (int i = 0; i < 10; i++) op->run(c); /* warm-up */
        for (int i = 0; i < n; i++) {
            device_sync();
            double t0 = host_ms();
            op->run(c);
            samples[i] = host_ms() - t0;
        }
        device_sync();
        r->ms = median(samples, n);
        return;
    }
    struct timer timer;
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaEventCreate(&timer.start));
        CUDA_TRY(cudaEventCreate(&timer.stop));
    }
#endif
    for (int i = 0; i < 3; i++) op->run(c); /* warm-up */
    int n = o->iters;
    if (n <= 0) { /* as many calls as fill min_ms, from the time of one */
        timer_start(&timer);
        op->run(c);
        double one = timer_stop(&timer);
        n = one > 0 ? (int)ceil(o->min_ms / one) : 1000;
        n = n < 3 ? 3 : n > 10000 ? 10000 : n;
    }
    int reps = o->reps < 1 ? 1 : o->reps > MAX_SAMPLES ? MAX_SAMPLES : o->reps;
    for (int rep = 0; rep < reps; rep++) {
        timer_start(&timer);
        for (int i = 0; i < n; i++) op->run(c);
        samples[rep] = timer_stop(&timer) / n;
    }
    r->ms = median(samples, reps);
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaEventDestroy(timer.start));
        CUDA_TRY(cudaEventDestroy(timer.stop));
    }
#endif
}

/* Sets up, measures and releases one case; r->status says why when it did not run. In a dry run
   (--list) only parses the problem and creates the descriptors. */
static void run_case(cudnnHandle_t handle, const char *name, enum timing timing, const char *text, bool dry,
                     const struct options *o, struct result *r)
{
    memset(r, 0, sizeof *r);
    r->ms = -1;
    struct problem p;
    const char *why = problem_parse(text, &p);
    const struct op *op = why ? NULL : problem_op(&p, &why);
    struct call c = {.handle = handle, .dry = dry, .rng = hash_string(name)};
    if (op != NULL && (c.dt = problem_dtype(&p)) == NULL) why = "dt must be f32, f16, bf16 or f64";
    if (op != NULL && c.dt != NULL) why = op->setup(&c, &p);
    r->bytes = c.bytes;
    r->flops = c.flops;
    if (why != NULL) r->status = why;
    else if (!dry) measure(&c, op, timing, o, r);
    call_release(&c);
}

/* ---- output ---------------------------------------------------------------------------------------- */

static double gbps(const struct result *r)
{
    return r->ms > 0 ? r->bytes / (r->ms * 1e-3) / 1e9 : 0;
}

static double fma_peak; /* GFLOP/s, on the host backend only */

static void print_header(bool tsv)
{
    /* flops is the last column, added after the others so that older readers still work. */
    if (tsv) printf("name\tsuite\ttiming\tstatus\tms\tbytes\tcheck\tproblem\tflops\n");
    else if (!on_device)
        printf("%-26s %10s %9s %6s %8s %6s  %s\n", "case", "ms", "GB/s", "%copy", "GFLOP/s", "%peak", "problem");
    else printf("%-26s %10s %9s %6s %8s  %s\n", "case", "ms", "GB/s", "%copy", "TFLOP/s", "problem");
}

static void print_result(const char *suite, const char *name, enum timing timing, const char *problem,
                         const struct result *r, double ceiling, bool tsv)
{
    if (tsv) {
        printf("%s\t%s\t%s\t%s\t%.6g\t%.0f\t%.9g,%.9g\t%s\t%.0f\n", name, suite,
               timing == TIME_DEVICE ? "device" : "host", r->status, r->ms, r->bytes, r->sum, r->norm, problem,
               r->flops);
    } else if (r->ms < 0) {
        printf("%-26s %10s %9s %6s %8s  %s: %s\n", name, "-", "-", "-", "-", r->status, problem);
    } else if (timing == TIME_HOST_CALL) {
        printf("%-26s %10.5f %9s %6s %8s  %s (host time per call)\n", name, r->ms, "-", "-", "-", problem);
    } else if (!on_device) {
        char pct[16] = "-", gflops[16] = "-", peak[16] = "-";
        double g = r->flops / (r->ms * 1e-3) / 1e9;
        if (ceiling > 0) snprintf(pct, sizeof pct, "%.0f%%", 100 * gbps(r) / ceiling);
        if (r->flops > 0) snprintf(gflops, sizeof gflops, "%.1f", g);
        if (r->flops > 0 && fma_peak > 0) snprintf(peak, sizeof peak, "%.0f%%", 100 * g / fma_peak);
        printf("%-26s %10.4f %9.1f %6s %8s %6s  %s\n", name, r->ms, gbps(r), pct, gflops, peak, problem);
    } else {
        char pct[16] = "-", tflops[16] = "-";
        if (ceiling > 0) snprintf(pct, sizeof pct, "%.0f%%", 100 * gbps(r) / ceiling);
        if (r->flops > 0) snprintf(tflops, sizeof tflops, "%.2f", r->flops / (r->ms * 1e-3) / 1e12);
        printf("%-26s %10.4f %9.1f %6s %8s  %s\n", name, r->ms, gbps(r), pct, tflops, problem);
    }
    fflush(stdout);
}

/* true when `name` is in the comma-separated `list` (exactly, for suites) or contains one of its
   items (for cases); a NULL list takes everything. */
static bool selected(const char *list, const char *name, bool exact)
{
    if (list == NULL) return true;
    for (const char *s = list; *s;) {
        size_t len = strcspn(s, ",");
        if (len > 0) {
            char item[128];
            snprintf(item, sizeof item, "%.*s", (int)len, s);
            if (exact ? strcmp(name, item) == 0 : strstr(name, item) != NULL) return true;
        }
        s += len + (s[len] == ',');
    }
    return false;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--suite S[,S]] [--case SUBSTR[,SUBSTR]] [--problem STRING]... [--latency]\n"
            "          [--list] [--tsv] [--reps N] [--iters N] [--min-ms MS] [--strict]\n"
            "  --suite    run only these suites (--list shows them)\n"
            "  --case     run only cases whose name contains one of these\n"
            "  --problem  run this problem string instead of the tables (repeatable); --latency times\n"
            "             it as host time per call instead of device time\n"
            "  --list     print every case with its problem string (each is parsed and its descriptors\n"
            "             created, which checks the tables without running anything)\n"
            "  --tsv      one tab-separated line per case, for bench/run.sh\n"
            "  --reps     timed batches per case (median reported; default 5)\n"
            "  --iters    calls per batch (default: enough for --min-ms, default 20 ms)\n"
            "  --strict   exit 1 unless every case returned CUDNN_STATUS_SUCCESS\n"
            "Environment: OPENCUDNN_BACKEND=host|cuda picks opencudnn's backend (and where the benchmark\n"
            "puts its data).\n",
            argv0);
    exit(2);
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

static void print_banner(void)
{
    char device[320] = "host";
#ifdef BENCH_CUDA
    if (on_device) {
        struct cudaDeviceProp prop;
        int dev = 0;
        CUDA_TRY(cudaGetDevice(&dev));
        CUDA_TRY(cudaGetDeviceProperties(&prop, dev));
        snprintf(device, sizeof device, "%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor,
                 prop.multiProcessorCount);
    }
#endif
#ifdef BENCH_VENDOR
    const char *build = "vendor";
#else
    const char *build = "opencudnn";
#endif
    /* one line: bench/run.sh takes it as the run's description */
    printf("# %s: cuDNN %zu (headers %d), CUDA runtime %zu, data on %s", build, cudnnGetVersion(), CUDNN_VERSION,
           cudnnGetCudartVersion(), device);
    if (!on_device && fma_peak > 0)
        printf(", fp32 FMA peak %.1f GFLOP/s (%ld processors x /proc/cpuinfo clock x 32 flops per cycle)", fma_peak,
               sysconf(_SC_NPROCESSORS_ONLN));
    printf("\n");
}

int main(int argc, char **argv)
{
    struct options o = {.reps = 5, .min_ms = 20};
    const char *problems[64];
    int nproblems = 0;
    bool latency = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--suite") == 0 && v) o.suites = argv[++i];
        else if (strcmp(a, "--case") == 0 && v) o.cases = argv[++i];
        else if (strcmp(a, "--problem") == 0 && v && nproblems < 64) problems[nproblems++] = argv[++i];
        else if (strcmp(a, "--reps") == 0 && v) o.reps = atoi(argv[++i]);
        else if (strcmp(a, "--iters") == 0 && v) o.iters = atoi(argv[++i]);
        else if (strcmp(a, "--min-ms") == 0 && v) o.min_ms = atof(argv[++i]);
        else if (strcmp(a, "--latency") == 0) latency = true;
        else if (strcmp(a, "--list") == 0) o.list = true;
        else if (strcmp(a, "--tsv") == 0) o.tsv = true;
        else if (strcmp(a, "--strict") == 0) o.strict = true;
        else usage(argv[0]);
    }
    choose_backend();
    if (!on_device) fma_peak = host_fma_peak();
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
    print_banner();

    int bad = 0, ran = 0;
    struct result r;
    if (o.list) {
        for (size_t si = 0; si < ARRAY_LEN(suites); si++)
            for (size_t ci = 0; ci < suites[si].ncases; ci++) {
                const struct bench_case *bc = &suites[si].cases[ci];
                run_case(handle, bc->name, bc->timing, bc->problem, true, &o, &r);
                printf("%-13s %-28s %-6s %s%s%s\n", suites[si].name, bc->name,
                       bc->timing == TIME_DEVICE ? "device" : "host", bc->problem, r.status ? "  ERROR: " : "",
                       r.status ? r.status : "");
                bad += r.status != NULL;
            }
    } else {
        print_header(o.tsv);
        /* The ceiling comes first, whatever the filters, when the tables run: every GB/s figure
           is read against it. (--problem runs only what it is given: add op=copy to compare.) */
        double ceiling = 0;
        if (nproblems == 0) {
            const struct bench_case *cc = &ceiling_cases[0];
            run_case(handle, cc->name, cc->timing, cc->problem, false, &o, &r);
            if (r.ms > 0) ceiling = gbps(&r);
            print_result("ceiling", cc->name, cc->timing, cc->problem, &r, ceiling, o.tsv);
        }
        for (int i = 0; i < nproblems; i++) {
            char name[32];
            snprintf(name, sizeof name, "problem%d", i + 1);
            enum timing timing = latency ? TIME_HOST_CALL : TIME_DEVICE;
            run_case(handle, name, timing, problems[i], false, &o, &r);
            print_result("problem", name, timing, problems[i], &r, ceiling, o.tsv);
            ran++;
            bad += strcmp(r.status, "CUDNN_STATUS_SUCCESS") != 0;
        }
        for (size_t si = 0; nproblems == 0 && si < ARRAY_LEN(suites); si++) {
            if (suites[si].cases == ceiling_cases || !selected(o.suites, suites[si].name, true)) continue;
            for (size_t ci = 0; ci < suites[si].ncases; ci++) {
                const struct bench_case *bc = &suites[si].cases[ci];
                if (!selected(o.cases, bc->name, false)) continue;
                run_case(handle, bc->name, bc->timing, bc->problem, false, &o, &r);
                print_result(suites[si].name, bc->name, bc->timing, bc->problem, &r, ceiling, o.tsv);
                ran++;
                bad += strcmp(r.status, "CUDNN_STATUS_SUCCESS") != 0;
            }
        }
        if (ran == 0) fprintf(stderr, "bench: no case matches the filters\n");
    }
#ifdef BENCH_CUDA
    if (on_device) CUDA_TRY(cudaStreamDestroy(stream));
#endif
    cudnnDestroy(handle);
    if (o.list) return bad ? 1 : 0;
    return (o.strict && bad) || ran == 0 ? 1 : 0;
}
