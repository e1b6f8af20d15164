/* parity.c: the parity probe. A list of named probes, each one call sequence with fixed inputs
   (drawn from a generator seeded by the probe's name), built like the benchmark against opencudnn
   (opencudnn_parity) and against another cuDNN (opencudnn_parity_vendor: the vendor's cuDNN 9 on
   the GPU machine), so that tools/parity-compare.py can set what each library answers side by
   side: the questions docs/compatibility.md leaves open, which only NVIDIA's library settles, and
   cheap checks of core numerics.

   Output: one tab-separated line per probe, flushed as it is written:
     NAME  STATUS  KEY[n]=v0,v1,...  KEY[n]~=sum,sum|v|,sum w v,v0..v7  ...  #note
   STATUS is the status of the call the probe asks about, by name (cudnnGetErrorString: cuDNN 9
   renumbered cudnnStatus_t), or SETUP:<call>:<status> when a call before it failed. Each KEY is
   an output read back after the call: all its values (%.9g) up to 256 of them, else (`~=`) its
   sum, its sum of magnitudes, a sum weighted by fixed pseudo-random weights, and its first 8
   values. A key starting with `info_` is a size or a setting that may differ between correct
   libraries (shown, not judged). `#` starts a note (the vendor's last error message, where cuDNN 9
   has one).

   Usage: opencudnn_parity [--list] [--from N] [NAME...]: --list prints the probe names, --from
   skips the first N probes (the compare script restarts the program after a probe that crashes),
   NAMEs choose probes. Where data lives follows the benchmark (open_backend): the device when one
   is present (always, for the vendor's build), else the host backend. Every probe uses only calls
   present in cuDNN 8.2 and 9 (the v8 RNN API; none of the v6/v7 calls cuDNN 9 removed).

   This file is the frame the probes share (parity.h says what it offers); the probes themselves
   live by subject in parity_<subject>.c. */
#include "bench.h"
#include "parity.h"

cudnnHandle_t parity_handle;

/* ---- one probe's output line and the resources it holds ------------------------------------------ */

void append(struct probe_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->line + o->len, sizeof o->line - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof o->line - o->len) die("parity: a probe's line is too long");
    o->len += (size_t)n;
}

void set_status(struct probe_out *o, cudnnStatus_t s)
{
    if (o->status_set) return;
    append(o, "\t%s", cudnnGetErrorString(s));
    o->status_set = true;
}

bool setup_ok(struct probe_out *o, const char *call, cudnnStatus_t s)
{
    if (s == CUDNN_STATUS_SUCCESS) return true;
    if (!o->status_set) append(o, "\tSETUP:%.*s:%s", (int)strcspn(call, "("), call, cudnnGetErrorString(s));
    o->status_set = true;
    return false;
}

void hold(struct probe_out *o, void *p, enum held_kind kind)
{
    if (o->nheld == MAX_KEEP) die("parity: a probe holds too much");
    o->held[o->nheld++] = (struct held){p, kind};
}

static void release_all(struct probe_out *o)
{
    for (int i = o->nheld - 1; i >= 0; i--) {
        void *p = o->held[i].p;
        switch (o->held[i].kind) {
        case HELD_MEMORY: mem_free(p); break;
        case HELD_TENSOR: cudnnDestroyTensorDescriptor(p); break;
        case HELD_FILTER: cudnnDestroyFilterDescriptor(p); break;
        case HELD_CONV: cudnnDestroyConvolutionDescriptor(p); break;
        case HELD_POOL: cudnnDestroyPoolingDescriptor(p); break;
        case HELD_LRN: cudnnDestroyLRNDescriptor(p); break;
        case HELD_DROPOUT: cudnnDestroyDropoutDescriptor(p); break;
        case HELD_RNN: cudnnDestroyRNNDescriptor(p); break;
        case HELD_RNN_DATA: cudnnDestroyRNNDataDescriptor(p); break;
        case HELD_CTC: cudnnDestroyCTCLossDescriptor(p); break;
        case HELD_ACTIVATION: cudnnDestroyActivationDescriptor(p); break;
        case HELD_OP_TENSOR: cudnnDestroyOpTensorDescriptor(p); break;
        case HELD_REDUCE: cudnnDestroyReduceTensorDescriptor(p); break;
        }
    }
    o->nheld = 0;
}

/* ---- values in the data types the probes use ------------------------------------------------------ */

/* common.c's codec of t (a type of its table: float, half, bfloat16, double, the int8 types). */
static const struct dtype *codec(cudnnDataType_t t)
{
    const struct dtype *c = dtype_of(t);
    if (c == NULL) die("parity: no codec for data type %d", (int)t);
    return c;
}

/* ---- backend buffers ------------------------------------------------------------------------------ */

void *dev_bytes(struct probe_out *o, size_t bytes)
{
    void *p = mem_alloc(bytes ? bytes : 1);
    hold(o, p, HELD_MEMORY);
    return p;
}

void *dev_as(struct probe_out *o, cudnnDataType_t t, const double *values, size_t n)
{
    const struct dtype *c = codec(t);
    size_t size = c->size;
    unsigned char *h = malloc(n ? n * size : 1);
    if (h == NULL) die("out of host memory");
    for (size_t i = 0; i < n; i++) encode(c, values[i], h + i * size);
    void *p = dev_bytes(o, n * size);
    if (n) mem_copy(p, h, n * size, true);
    free(h);
    return p;
}

void *dev_poison(struct probe_out *o, cudnnDataType_t t, size_t n)
{
    double *v = malloc(n ? n * sizeof(double) : 1);
    if (v == NULL) die("out of host memory");
    for (size_t i = 0; i < n; i++) v[i] = t == CUDNN_DATA_INT8 ? -7 : NAN;
    void *p = dev_as(o, t, v, n);
    free(v);
    return p;
}

float *dev_floats(struct probe_out *o, const float *values, size_t n)
{
    float *p = dev_bytes(o, n * sizeof(float));
    if (n) mem_copy(p, values, n * sizeof(float), true);
    return p;
}

double uniform(struct probe_out *o, double lo, double hi)
{
    return lo + (hi - lo) * (double)(splitmix(&o->rng) >> 11) * 0x1p-53;
}

float *dev_random(struct probe_out *o, size_t n, double lo, double hi)
{
    float *h = malloc(n ? n * sizeof(float) : 1);
    if (h == NULL) die("out of host memory");
    for (size_t i = 0; i < n; i++) h[i] = (float)uniform(o, lo, hi);
    float *p = dev_floats(o, h, n);
    free(h);
    return p;
}

float *dev_fill(struct probe_out *o, size_t n, float v)
{
    float *h = malloc(n ? n * sizeof(float) : 1);
    if (h == NULL) die("out of host memory");
    for (size_t i = 0; i < n; i++) h[i] = v;
    float *p = dev_floats(o, h, n);
    free(h);
    return p;
}

/* ---- outputs --------------------------------------------------------------------------------------- */

void put_host(struct probe_out *o, const char *key, const double *v, size_t n)
{
    if (n <= FULL_VALUES) {
        append(o, "\t%s[%zu]=", key, n);
        for (size_t i = 0; i < n; i++) append(o, i ? ",%.9g" : "%.9g", v[i]);
        return;
    }
    double sum = 0, mag = 0, weighted = 0;
    uint64_t w = 12345;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        mag += fabs(v[i]);
        weighted += v[i] * ((double)(splitmix(&w) >> 11) * 0x1p-52 - 1);
    }
    append(o, "\t%s[%zu]~=%.9g,%.9g,%.9g", key, n, sum, mag, weighted);
    for (size_t i = 0; i < 8; i++) append(o, ",%.9g", v[i]);
}

/* n values of type t at dev, as host doubles. */
static void read_as(const void *dev, double *out, size_t n, cudnnDataType_t t)
{
    const struct dtype *c = codec(t);
    size_t size = c->size;
    unsigned char *h = malloc(n ? n * size : 1);
    if (h == NULL) die("out of host memory");
    device_sync();
    if (n) mem_copy(h, dev, n * size, false);
    for (size_t i = 0; i < n; i++) out[i] = decode(c, h + i * size);
    free(h);
}

void read_floats(const void *dev, double *out, size_t n)
{
    read_as(dev, out, n, CUDNN_DATA_FLOAT);
}

void put_as(struct probe_out *o, const char *key, const void *dev, size_t n, cudnnDataType_t t)
{
    double *d = malloc(n ? n * sizeof(double) : 1);
    if (d == NULL) die("out of host memory");
    read_as(dev, d, n, t);
    put_host(o, key, d, n);
    free(d);
}

void put(struct probe_out *o, const char *key, const void *dev, size_t n)
{
    put_as(o, key, dev, n, CUDNN_DATA_FLOAT);
}

void put_number(struct probe_out *o, const char *key, double v)
{
    put_host(o, key, &v, 1);
}

/* ---- descriptors ---------------------------------------------------------------------------------- */

/* A held tensor descriptor of type t from cudnnSetTensorNdDescriptor; NULL after a SETUP failure. */
static cudnnTensorDescriptor_t tensor_typed(struct probe_out *o, cudnnDataType_t t, int nd, const int *dims,
                                            const int *strides)
{
    cudnnTensorDescriptor_t d = NULL;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&d))) return NULL;
    hold(o, d, HELD_TENSOR);
    if (!SETUP(o, cudnnSetTensorNdDescriptor(d, t, nd, dims, strides))) return NULL;
    return d;
}

cudnnTensorDescriptor_t tensor_nd(struct probe_out *o, int nd, const int *dims, const int *strides)
{
    return tensor_typed(o, CUDNN_DATA_FLOAT, nd, dims, strides);
}

cudnnTensorDescriptor_t tensor4_as(struct probe_out *o, cudnnDataType_t t, int n, int c, int h, int w)
{
    return tensor_typed(o, t, 4, (int[]){n, c, h, w}, (int[]){c * h * w, h * w, w, 1});
}

cudnnTensorDescriptor_t tensor4(struct probe_out *o, int n, int c, int h, int w)
{
    return tensor4_as(o, CUDNN_DATA_FLOAT, n, c, h, w);
}

/* ---- the list and main ------------------------------------------------------------------------------ */

enum { MAX_PROBES = 128 };

static const struct probe *probes[MAX_PROBES];
static size_t nprobes;

/* Every subject's probes, in one list. */
static void list_probes(void)
{
    const struct probe *tables[] = {parity_adv_probes, parity_tensor_probes, parity_conv_probes, parity_nn_probes};
    const size_t counts[] = {parity_adv_count, parity_tensor_count, parity_conv_count, parity_nn_count};
    for (size_t t = 0; t < ARRAY_LEN(tables); t++)
        for (size_t i = 0; i < counts[t]; i++) {
            if (nprobes == MAX_PROBES) die("parity: more than %d probes", MAX_PROBES);
            probes[nprobes++] = &tables[t][i];
        }
}

/* cuDNN 9 keeps the last error's message (cuDNN 8 has no such call): read and cleared before a
   probe, read again after it. */
static void last_error(char *message, size_t size)
{
    message[0] = 0;
#if CUDNN_MAJOR >= 9
    cudnnGetLastErrorString(message, size);
    for (char *c = message; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
#else
    (void)size;
#endif
}

static void run_probe(const struct probe *p)
{
    static struct probe_out o;
    char message[512];
    memset(&o, 0, sizeof o);
    o.rng = hash_string(p->name);
    fprintf(stderr, "parity: %s\n", p->name);
    append(&o, "%s", p->name);
    last_error(message, sizeof message);
    p->run(&o);
    if (!o.status_set) die("parity: probe %s set no status", p->name);
    last_error(message, sizeof message);
    if (message[0]) append(&o, "\t#%s", message);
    release_all(&o);
    printf("%s\n", o.line);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    size_t from = 0;
    bool list = false;
    int nnames = 0;
    const char *names[MAX_PROBES];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) list = true;
        else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) from = (size_t)atoi(argv[++i]);
        else if (argv[i][0] != '-' && nnames < (int)ARRAY_LEN(names)) names[nnames++] = argv[i];
        else {
            fprintf(stderr, "usage: %s [--list] [--from N] [PROBE...]\n", argv[0]);
            return 2;
        }
    }
    list_probes();
    if (list) {
        for (size_t i = 0; i < nprobes; i++) printf("%s\n", probes[i]->name);
        return 0;
    }
    parity_handle = open_backend();
    for (size_t i = from; i < nprobes; i++) {
        bool chosen = nnames == 0;
        for (int k = 0; k < nnames; k++) chosen |= strcmp(names[k], probes[i]->name) == 0;
        if (chosen) run_probe(probes[i]);
    }
    close_backend(parity_handle);
    return 0;
}
