/* parity.c: the parity probe. A list of named probes, each one call sequence with fixed inputs
   (drawn from a generator seeded by the probe's name), built like the benchmark against opencudnn
   (opencudnn_parity) and against another cuDNN (opencudnn_parity_vendor: the vendor's cuDNN 9 on
   the GPU machine), so that tools/parity-compare.py can set what each library answers side by
   side: the questions docs/compatibility.md leaves open, which only NVIDIA's library settles, and
   cheap checks of core numerics.

   Output: one tab-separated line per probe, flushed as it is written:
     NAME  STATUS  KEY[n]=v0,v1,...  KEY[n]~=sum,sum|v|,sum w v,v0..v7  ...  #note
   STATUS is the status of the call the probe asks about, by name (cudnnGetErrorString: cuDNN 9
   renumbered cudnnStatus_t), or SETUP:<call>:<status> when a call before it failed. Each KEY is an output read back after the call: all
   its values (%.9g) up to 256 of them, else (`~=`) its sum, its sum of magnitudes, a sum weighted
   by fixed pseudo-random weights, and its first 8 values. A key starting with `info_` is a size or
   a setting that may differ between correct libraries (shown, not judged). `#` starts a note (the
   vendor's last error message, where cuDNN 9 has one).

   Usage: opencudnn_parity [--list] [--from N] [NAME...]: --list prints the probe names, --from
   skips the first N probes (the compare script restarts the program after a probe that crashes),
   NAMEs choose probes. Where data lives follows the benchmark (open_backend): the device when one
   is present (always, for the vendor's build), else the host backend. Every probe uses only calls
   present in cuDNN 8.2 and 9 (the v8 RNN API; none of the v6/v7 calls cuDNN 9 removed). */
#include "bench.h"

enum { MAX_KEEP = 48, LINE_BYTES = 1 << 16, FULL_VALUES = 256 };

static cudnnHandle_t handle;

/* ---- one probe's output line and the resources it holds ------------------------------------------ */

enum held_kind { HELD_MEMORY, HELD_TENSOR, HELD_FILTER, HELD_CONV, HELD_POOL, HELD_LRN, HELD_DROPOUT, HELD_RNN,
                 HELD_RNN_DATA, HELD_CTC };

struct held {
    void *p;
    enum held_kind kind;
};

struct probe_out {
    char line[LINE_BYTES];
    size_t len;
    bool status_set;
    struct held held[MAX_KEEP];
    int nheld;
    uint64_t rng;
};

static void append(struct probe_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(struct probe_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->line + o->len, sizeof o->line - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof o->line - o->len) die("parity: a probe's line is too long");
    o->len += (size_t)n;
}

/* The status of the call asked about; the first one set is kept. */
static void set_status(struct probe_out *o, cudnnStatus_t s)
{
    if (o->status_set) return;
    append(o, "\t%s", cudnnGetErrorString(s));
    o->status_set = true;
}

/* A call before the one asked about failed: the probe reports which and stops (false). */
static bool setup_ok(struct probe_out *o, const char *call, cudnnStatus_t s)
{
    if (s == CUDNN_STATUS_SUCCESS) return true;
    if (!o->status_set) append(o, "\tSETUP:%.*s:%s", (int)strcspn(call, "("), call, cudnnGetErrorString(s));
    o->status_set = true;
    return false;
}
/* setup_ok on a call, named by its text (the report keeps the function's name). */
#define SETUP(o, call) setup_ok(o, #call, (call))

/* Registers backend memory or a descriptor, released after the probe. */
static void hold(struct probe_out *o, void *p, enum held_kind kind)
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
        }
    }
    o->nheld = 0;
}

/* Backend buffers of n floats: random in [lo, hi] from the probe's stream, or given values. */
static float *dev_floats(struct probe_out *o, const float *values, size_t n)
{
    float *p = mem_alloc(n ? n * sizeof(float) : 1);
    hold(o, p, HELD_MEMORY);
    if (n) mem_copy(p, values, n * sizeof(float), true);
    return p;
}

static double uniform(struct probe_out *o, double lo, double hi)
{
    return lo + (hi - lo) * (double)(splitmix(&o->rng) >> 11) * 0x1p-53;
}

static float *dev_random(struct probe_out *o, size_t n, double lo, double hi)
{
    float *h = malloc(n ? n * sizeof(float) : 1);
    if (h == NULL) die("out of host memory");
    for (size_t i = 0; i < n; i++) h[i] = (float)uniform(o, lo, hi);
    float *p = dev_floats(o, h, n);
    free(h);
    return p;
}

static float *dev_fill(struct probe_out *o, size_t n, float v)
{
    float *h = malloc(n ? n * sizeof(float) : 1);
    if (h == NULL) die("out of host memory");
    for (size_t i = 0; i < n; i++) h[i] = v;
    float *p = dev_floats(o, h, n);
    free(h);
    return p;
}

static void *dev_bytes(struct probe_out *o, size_t bytes)
{
    void *p = mem_alloc(bytes ? bytes : 1);
    hold(o, p, HELD_MEMORY);
    return p;
}

/* Appends host values as a KEY field (see the top for the two forms). */
static void put_host(struct probe_out *o, const char *key, const double *v, size_t n)
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

/* Appends n floats read back from backend memory as a KEY field. */
static void put(struct probe_out *o, const char *key, const void *dev, size_t n)
{
    device_sync();
    float *f = malloc(n ? n * sizeof(float) : 1);
    double *d = malloc(n ? n * sizeof(double) : 1);
    if (f == NULL || d == NULL) die("out of host memory");
    if (n) mem_copy(f, dev, n * sizeof(float), false);
    for (size_t i = 0; i < n; i++) d[i] = f[i];
    put_host(o, key, d, n);
    free(f);
    free(d);
}

static void put_number(struct probe_out *o, const char *key, double v)
{
    put_host(o, key, &v, 1);
}

/* ---- descriptors ---------------------------------------------------------------------------------- */

static cudnnTensorDescriptor_t tensor_nd(struct probe_out *o, int nd, const int *dims, const int *strides)
{
    cudnnTensorDescriptor_t d = NULL;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&d))) return NULL;
    hold(o, d, HELD_TENSOR);
    if (!SETUP(o, cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, nd, dims, strides))) return NULL;
    return d;
}

/* A packed float NCHW tensor. */
static cudnnTensorDescriptor_t tensor4(struct probe_out *o, int n, int c, int h, int w)
{
    return tensor_nd(o, 4, (int[]){n, c, h, w}, (int[]){c * h * w, h * w, w, 1});
}

/* ---- RNN: a small LSTM through the v8 API --------------------------------------------------------- */

/* One layer, unidirectional, input 3, hidden 4, T 5, batch 2, float with DEFAULT_MATH (the compare
   script turns TF32 off), double bias, SEQ_MAJOR_UNPACKED data: ragged, lengths 5 and 3 with
   padded I/O and the padding filled with 0; else both 5, no padded I/O and no fill (the
   benchmark's form, which the vendor's persistent algorithms take). Every LSTM probe draws the
   same inputs. Weights are filled matrix by matrix through cudnnGetRNNWeightParams, so
   that a library's weight-space layout does not matter; the cell's values grow past the clip
   range within the sequence. */
enum { RNN_T = 5, RNN_N = 2, RNN_IN = 3, RNN_H = 4 };

struct lstm {
    cudnnRNNDescriptor_t desc;
    cudnnRNNDataDescriptor_t x_desc, y_desc;
    cudnnTensorDescriptor_t h_desc;
    int *dev_lengths;
    size_t weight_bytes, work_bytes, reserve_bytes;
    float *x, *y, *hx, *cx, *hy, *cy, *w;
    void *work, *reserve;
};

static bool rnn_data(struct probe_out *o, cudnnRNNDataDescriptor_t *d, int vector, const int *lengths, bool padded)
{
    float fill = 0;
    if (!SETUP(o, cudnnCreateRNNDataDescriptor(d))) return false;
    hold(o, *d, HELD_RNN_DATA);
    return SETUP(o, cudnnSetRNNDataDescriptor(*d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, RNN_T,
                                              RNN_N, vector, lengths, padded ? &fill : NULL));
}

/* Every matrix and bias of the weight space at base, in the order (linLayerID 0..7, matrix then
   bias): filled from the probe's stream when fill, else read back as KEY. */
static bool rnn_weights(struct probe_out *o, struct lstm *r, float *base, bool fill, const char *key)
{
    cudnnTensorDescriptor_t m = NULL, b = NULL;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&m))) return false;
    hold(o, m, HELD_TENSOR);
    if (!SETUP(o, cudnnCreateTensorDescriptor(&b))) return false;
    hold(o, b, HELD_TENSOR);
    double *all = NULL;
    size_t nall = 0;
    bool ok = true;
    for (int id = 0; id < 8 && ok; id++) {
        void *addr[2] = {NULL, NULL};
        ok = SETUP(o, cudnnGetRNNWeightParams(handle, r->desc, 0, r->weight_bytes, base, id, m, &addr[0], b, &addr[1]));
        for (int k = 0; k < 2 && ok; k++) {
            cudnnDataType_t dt;
            int nd = 0, dims[8], strides[8];
            ok = SETUP(o, cudnnGetTensorNdDescriptor(k ? b : m, 8, &dt, &nd, dims, strides));
            size_t n = 1;
            for (int i = 0; i < nd; i++) n *= (size_t)dims[i];
            if (!ok || addr[k] == NULL) continue;
            float *h = malloc(n * sizeof(float));
            if (h == NULL || (all = realloc(all, (nall + n) * sizeof(double))) == NULL) die("out of host memory");
            if (fill) {
                for (size_t i = 0; i < n; i++) h[i] = (float)uniform(o, -0.9, 0.9);
                mem_copy(addr[k], h, n * sizeof(float), true);
            } else {
                device_sync();
                mem_copy(h, addr[k], n * sizeof(float), false);
                for (size_t i = 0; i < n; i++) all[nall + i] = h[i];
                nall += n;
            }
            free(h);
        }
    }
    if (ok && !fill) put_host(o, key, all, nall);
    free(all);
    return ok;
}

/* The descriptors, buffers and weights of the LSTM; clip [lclip, rclip] when lclip < rclip. */
static bool lstm_setup(struct probe_out *o, struct lstm *r, cudnnRNNAlgo_t algo, bool ragged, double lclip,
                       double rclip, cudnnForwardMode_t mode)
{
    const int lengths[RNN_N] = {RNN_T, ragged ? 3 : RNN_T};
    cudnnDropoutDescriptor_t dropout;
    size_t states_bytes = 0;
    if (!SETUP(o, cudnnCreateDropoutDescriptor(&dropout))) return false;
    hold(o, dropout, HELD_DROPOUT);
    if (!SETUP(o, cudnnDropoutGetStatesSize(handle, &states_bytes))) return false;
    void *states = dev_bytes(o, states_bytes);
    if (!SETUP(o, cudnnSetDropoutDescriptor(dropout, handle, 0.0f, states, states_bytes, 1))) return false;
    if (!SETUP(o, cudnnCreateRNNDescriptor(&r->desc))) return false;
    hold(o, r->desc, HELD_RNN);
    cudnnStatus_t s = cudnnSetRNNDescriptor_v8(r->desc, algo, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
                                               CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                               CUDNN_DEFAULT_MATH, RNN_IN, RNN_H, RNN_H, 1, dropout,
                                               ragged ? CUDNN_RNN_PADDED_IO_ENABLED : CUDNN_RNN_PADDED_IO_DISABLED);
    if (!setup_ok(o, "cudnnSetRNNDescriptor_v8", s)) return false;
    if (lclip < rclip &&
        !SETUP(o, cudnnRNNSetClip_v8(r->desc, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, lclip, rclip)))
        return false;
    if (!rnn_data(o, &r->x_desc, RNN_IN, lengths, ragged) || !rnn_data(o, &r->y_desc, RNN_H, lengths, ragged))
        return false;
    r->h_desc = tensor_nd(o, 3, (int[]){1, RNN_N, RNN_H}, (int[]){RNN_N * RNN_H, RNN_H, 1});
    if (r->h_desc == NULL) return false;
    r->dev_lengths = dev_bytes(o, sizeof lengths);
    mem_copy(r->dev_lengths, lengths, sizeof lengths, true);
    if (!SETUP(o, cudnnGetRNNWeightSpaceSize(handle, r->desc, &r->weight_bytes))) return false;
    r->w = dev_bytes(o, r->weight_bytes);
    if (!rnn_weights(o, r, r->w, true, NULL)) return false;
    r->x = dev_random(o, RNN_T * RNN_N * RNN_IN, -1, 1);
    r->hx = dev_random(o, RNN_N * RNN_H, -0.5, 0.5);
    r->cx = dev_random(o, RNN_N * RNN_H, -0.5, 0.5);
    r->y = dev_fill(o, RNN_T * RNN_N * RNN_H, NAN);
    r->hy = dev_fill(o, RNN_N * RNN_H, NAN);
    r->cy = dev_fill(o, RNN_N * RNN_H, NAN);
    if (!SETUP(o, cudnnGetRNNTempSpaceSizes(handle, r->desc, mode, r->x_desc, &r->work_bytes, &r->reserve_bytes)))
        return false;
    r->work = dev_bytes(o, r->work_bytes);
    r->reserve = dev_bytes(o, r->reserve_bytes);
    return true;
}

static cudnnStatus_t lstm_forward(struct lstm *r, cudnnForwardMode_t mode)
{
    return cudnnRNNForward(handle, r->desc, mode, r->dev_lengths, r->x_desc, r->x, r->y_desc, r->y, r->h_desc, r->hx,
                           r->hy, r->h_desc, r->cx, r->cy, r->weight_bytes, r->w, r->work_bytes, r->work,
                           mode == CUDNN_FWD_MODE_TRAINING ? r->reserve_bytes : 0,
                           mode == CUDNN_FWD_MODE_TRAINING ? r->reserve : NULL);
}

static void put_forward(struct probe_out *o, struct lstm *r)
{
    put(o, "y", r->y, RNN_T * RNN_N * RNN_H);
    put(o, "hy", r->hy, RNN_N * RNN_H);
    put(o, "cy", r->cy, RNN_N * RNN_H);
}

enum lstm_pass { PASS_INFERENCE, PASS_TRAINING, PASS_BWD_DATA, PASS_BWD_WEIGHTS };

/* The ragged LSTM, clipped to [lclip, rclip] when lclip < rclip, through one pass (the backward
   passes after a training forward; backward weights after backward data, as the API orders). */
static void lstm_probe(struct probe_out *o, double lclip, double rclip, enum lstm_pass pass)
{
    struct lstm r = {0};
    o->rng = hash_string("lstm"); /* one set of inputs for every LSTM probe */
    cudnnForwardMode_t mode = pass == PASS_INFERENCE ? CUDNN_FWD_MODE_INFERENCE : CUDNN_FWD_MODE_TRAINING;
    if (!lstm_setup(o, &r, CUDNN_RNN_ALGO_STANDARD, true, lclip, rclip, mode)) return;
    cudnnStatus_t s = lstm_forward(&r, mode);
    if (pass <= PASS_TRAINING) {
        set_status(o, s);
        if (s == CUDNN_STATUS_SUCCESS) put_forward(o, &r);
        return;
    }
    if (!setup_ok(o, "cudnnRNNForward", s)) return;
    float *dy = dev_random(o, RNN_T * RNN_N * RNN_H, -1, 1);
    float *dhy = dev_random(o, RNN_N * RNN_H, -0.5, 0.5), *dcy = dev_random(o, RNN_N * RNN_H, -0.5, 0.5);
    float *dx = dev_fill(o, RNN_T * RNN_N * RNN_IN, NAN);
    float *dhx = dev_fill(o, RNN_N * RNN_H, NAN), *dcx = dev_fill(o, RNN_N * RNN_H, NAN);
    s = cudnnRNNBackwardData_v8(handle, r.desc, r.dev_lengths, r.y_desc, r.y, dy, r.x_desc, dx, r.h_desc, r.hx, dhy,
                                dhx, r.h_desc, r.cx, dcy, dcx, r.weight_bytes, r.w, r.work_bytes, r.work,
                                r.reserve_bytes, r.reserve);
    if (pass == PASS_BWD_DATA) {
        set_status(o, s);
        if (s != CUDNN_STATUS_SUCCESS) return;
        put(o, "dx", dx, RNN_T * RNN_N * RNN_IN);
        put(o, "dhx", dhx, RNN_N * RNN_H);
        put(o, "dcx", dcx, RNN_N * RNN_H);
        return;
    }
    if (!setup_ok(o, "cudnnRNNBackwardData_v8", s)) return;
    float *dw = dev_fill(o, r.weight_bytes / sizeof(float), 0);
    s = cudnnRNNBackwardWeights_v8(handle, r.desc, CUDNN_WGRAD_MODE_ADD, r.dev_lengths, r.x_desc, r.x, r.h_desc, r.hx,
                                   r.y_desc, r.y, r.weight_bytes, dw, r.work_bytes, r.work, r.reserve_bytes,
                                   r.reserve);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) rnn_weights(o, &r, dw, false, "dw");
}

/* The clip range of the probes: the cell leaves it within the sequence. */
#define CLIP_LO (-0.4)
#define CLIP_HI 0.5

static void lstm_fwd(struct probe_out *o) { lstm_probe(o, 0, 0, PASS_TRAINING); }
static void lstm_clip_fwd(struct probe_out *o) { lstm_probe(o, CLIP_LO, CLIP_HI, PASS_TRAINING); }
static void lstm_clip_inference(struct probe_out *o) { lstm_probe(o, CLIP_LO, CLIP_HI, PASS_INFERENCE); }
static void lstm_bwd_data(struct probe_out *o) { lstm_probe(o, 0, 0, PASS_BWD_DATA); }
static void lstm_clip_bwd_data(struct probe_out *o) { lstm_probe(o, CLIP_LO, CLIP_HI, PASS_BWD_DATA); }
static void lstm_bwd_weights(struct probe_out *o) { lstm_probe(o, 0, 0, PASS_BWD_WEIGHTS); }
static void lstm_clip_bwd_weights(struct probe_out *o) { lstm_probe(o, CLIP_LO, CLIP_HI, PASS_BWD_WEIGHTS); }

/* PERSIST_DYNAMIC (full lengths, inference): the descriptor's status, the forward without
   cudnnBuildRNNDynamic, and the forward after it. */
static void persist_dynamic(struct probe_out *o, int stage)
{
    struct lstm r = {0};
    o->rng = hash_string("lstm");
    if (!lstm_setup(o, &r, CUDNN_RNN_ALGO_PERSIST_DYNAMIC, false, 0, 0, CUDNN_FWD_MODE_INFERENCE)) return;
    if (stage == 0) {
        set_status(o, CUDNN_STATUS_SUCCESS);
        return;
    }
    if (stage == 2 && !SETUP(o, cudnnBuildRNNDynamic(handle, r.desc, RNN_N))) return;
    cudnnStatus_t s = lstm_forward(&r, CUDNN_FWD_MODE_INFERENCE);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put_forward(o, &r);
}

static void persist_dynamic_set(struct probe_out *o) { persist_dynamic(o, 0); }
static void persist_dynamic_unbuilt(struct probe_out *o) { persist_dynamic(o, 1); }
static void persist_dynamic_built(struct probe_out *o) { persist_dynamic(o, 2); }

/* cudnnSetRNNDataDescriptor with seqLengthArray NULL; where accepted, the lengths read back. */
static void rnn_data_null_lengths(struct probe_out *o, cudnnRNNDataLayout_t layout)
{
    cudnnRNNDataDescriptor_t d;
    if (!SETUP(o, cudnnCreateRNNDataDescriptor(&d))) return;
    hold(o, d, HELD_RNN_DATA);
    cudnnStatus_t s = cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, layout, RNN_T, RNN_N, RNN_IN, NULL, NULL);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    cudnnDataType_t dt;
    cudnnRNNDataLayout_t l;
    int T = 0, N = 0, V = 0, lengths[RNN_N] = {-1, -1};
    if (!SETUP(o, cudnnGetRNNDataDescriptor(d, &dt, &l, &T, &N, &V, RNN_N, lengths, NULL))) return;
    double v[RNN_N] = {lengths[0], lengths[1]};
    put_host(o, "lengths", v, RNN_N);
}

static void rnn_data_null_lengths_unpacked(struct probe_out *o)
{
    rnn_data_null_lengths(o, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED);
}
static void rnn_data_null_lengths_packed(struct probe_out *o)
{
    rnn_data_null_lengths(o, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED);
}

/* ---- negative strides: a reversed view read by cudnnTransformTensor and cudnnAddTensor ------------ */

/* The view: 1 x 1 x 2 x 3 with strides 6, 6, -3, -1 over a buffer of 0..5, starting at its last
   element (both dims reversed); or (one_dim) 3 x 1 x 1 x 1 with stride -2 over 0..4, from its last. */
static void negative_strides(struct probe_out *o, int op, bool one_dim)
{
    const int *dims = one_dim ? (const int[]){3, 1, 1, 1} : (const int[]){1, 1, 2, 3};
    const int *strides = one_dim ? (const int[]){-2, 1, 1, 1} : (const int[]){6, 6, -3, -1};
    const int n = one_dim ? 3 : 6, span = one_dim ? 5 : 6;
    cudnnTensorDescriptor_t x;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&x))) return;
    hold(o, x, HELD_TENSOR);
    cudnnStatus_t s = cudnnSetTensorNdDescriptor(x, CUDNN_DATA_FLOAT, 4, dims, strides);
    if (op == 0) {
        set_status(o, s);
        return;
    }
    if (!setup_ok(o, "cudnnSetTensorNdDescriptor", s)) return;
    float base[6] = {0, 1, 2, 3, 4, 5};
    float *buf = dev_floats(o, base, (size_t)span);
    cudnnTensorDescriptor_t y = tensor_nd(o, 4, dims, one_dim ? (const int[]){1, 1, 1, 1} : (const int[]){6, 6, 3, 1});
    if (y == NULL) return;
    float *out = op == 1 ? dev_fill(o, (size_t)n, NAN) : dev_fill(o, (size_t)n, 10);
    float alpha = 1, beta = op == 1 ? 0 : 1;
    s = op == 1 ? cudnnTransformTensor(handle, &alpha, x, buf + span - 1, &beta, y, out)
                : cudnnAddTensor(handle, &alpha, x, buf + span - 1, &beta, y, out);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", out, (size_t)n);
}

static void negstride_set(struct probe_out *o) { negative_strides(o, 0, false); }
static void negstride_transform(struct probe_out *o) { negative_strides(o, 1, false); }
static void negstride_addtensor(struct probe_out *o) { negative_strides(o, 2, false); }
static void negstride_transform_1d(struct probe_out *o) { negative_strides(o, 1, true); }

/* ---- core numerics --------------------------------------------------------------------------------- */

/* Forward convolution, IMPLICIT_GEMM, float, FMA math: x 2x3x7x7, w 4x3x3x3, pad 1, stride 2. */
static void conv_fwd_implicit_gemm(struct probe_out *o)
{
    cudnnTensorDescriptor_t x = tensor4(o, 2, 3, 7, 7), y = x ? tensor4(o, 2, 4, 4, 4) : NULL;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    if (y == NULL || !SETUP(o, cudnnCreateFilterDescriptor(&w))) return;
    hold(o, w, HELD_FILTER);
    if (!SETUP(o, cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3))) return;
    if (!SETUP(o, cudnnCreateConvolutionDescriptor(&conv))) return;
    hold(o, conv, HELD_CONV);
    if (!SETUP(o, cudnnSetConvolution2dDescriptor(conv, 1, 1, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)))
        return;
    if (!SETUP(o, cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH))) return;
    size_t ws = 0;
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    if (!SETUP(o, cudnnGetConvolutionForwardWorkspaceSize(handle, x, w, conv, y, algo, &ws))) return;
    float *xd = dev_random(o, 2 * 3 * 7 * 7, -1, 1), *wd = dev_random(o, 4 * 3 * 3 * 3, -1, 1);
    float *yd = dev_fill(o, 2 * 4 * 4 * 4, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnConvolutionForward(handle, &alpha, x, xd, w, wd, conv, algo, dev_bytes(o, ws), ws, &beta,
                                              y, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", yd, 2 * 4 * 4 * 4);
}

/* Softmax forward over channels of 2x5x2x2 (inputs up to +-4, so that ACCURATE's shift matters). */
static void softmax(struct probe_out *o, cudnnSoftmaxAlgorithm_t algo)
{
    cudnnTensorDescriptor_t x = tensor4(o, 2, 5, 2, 2);
    if (x == NULL) return;
    float *xd = dev_random(o, 40, -4, 4), *yd = dev_fill(o, 40, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnSoftmaxForward(handle, algo, CUDNN_SOFTMAX_MODE_CHANNEL, &alpha, x, xd, &beta, x, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", yd, 40);
}

static void softmax_accurate(struct probe_out *o) { softmax(o, CUDNN_SOFTMAX_ACCURATE); }
static void softmax_log(struct probe_out *o) { softmax(o, CUDNN_SOFTMAX_LOG); }

/* LRN across channels, n 5, alpha 0.5, beta 0.75, k 2, on 1x7x2x2. */
static void lrn_cross_channel(struct probe_out *o)
{
    cudnnTensorDescriptor_t x = tensor4(o, 1, 7, 2, 2);
    cudnnLRNDescriptor_t lrn;
    if (x == NULL || !SETUP(o, cudnnCreateLRNDescriptor(&lrn))) return;
    hold(o, lrn, HELD_LRN);
    if (!SETUP(o, cudnnSetLRNDescriptor(lrn, 5, 0.5, 0.75, 2.0))) return;
    float *xd = dev_random(o, 28, -2, 2), *yd = dev_fill(o, 28, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnLRNCrossChannelForward(handle, lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &alpha, x, xd, &beta, x,
                                                  yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", yd, 28);
}

/* Average pooling, window 3, pad 1, stride 2, on 1x1x5x5 -> 1x1x3x3. */
static void pool_average(struct probe_out *o, cudnnPoolingMode_t mode)
{
    cudnnTensorDescriptor_t x = tensor4(o, 1, 1, 5, 5), y = x ? tensor4(o, 1, 1, 3, 3) : NULL;
    cudnnPoolingDescriptor_t pool;
    if (y == NULL || !SETUP(o, cudnnCreatePoolingDescriptor(&pool))) return;
    hold(o, pool, HELD_POOL);
    if (!SETUP(o, cudnnSetPooling2dDescriptor(pool, mode, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 2, 2))) return;
    float *xd = dev_random(o, 25, -1, 1), *yd = dev_fill(o, 9, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnPoolingForward(handle, pool, &alpha, x, xd, &beta, y, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", yd, 9);
}

static void pool_avg_include_pad(struct probe_out *o) { pool_average(o, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING); }
static void pool_avg_exclude_pad(struct probe_out *o) { pool_average(o, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING); }

/* Batch-norm training forward on 2x3x2x2: y, the running averages (from 0.1 and 0.9, factor
   0.5: the running variance takes the unbiased variance) and the saved mean and inverse
   variance (1 / sqrt(biased variance + eps)). */
static void bn_train(struct probe_out *o, cudnnBatchNormMode_t mode)
{
    cudnnTensorDescriptor_t x = tensor4(o, 2, 3, 2, 2), p;
    size_t np = mode == CUDNN_BATCHNORM_SPATIAL ? 3 : 12;
    p = x ? (mode == CUDNN_BATCHNORM_SPATIAL ? tensor4(o, 1, 3, 1, 1) : tensor4(o, 1, 3, 2, 2)) : NULL;
    if (p == NULL) return;
    float *xd = dev_random(o, 24, -2, 2), *yd = dev_fill(o, 24, NAN);
    float *scale = dev_random(o, np, 0.5, 1.5), *bias = dev_random(o, np, -0.5, 0.5);
    float *rmean = dev_fill(o, np, 0.1f), *rvar = dev_fill(o, np, 0.9f);
    float *smean = dev_fill(o, np, NAN), *sinv = dev_fill(o, np, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnBatchNormalizationForwardTraining(handle, mode, &alpha, &beta, x, xd, x, yd, p, scale, bias,
                                                             0.5, rmean, rvar, 1e-5, smean, sinv);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    put(o, "y", yd, 24);
    put(o, "running_mean", rmean, np);
    put(o, "running_var", rvar, np);
    put(o, "save_mean", smean, np);
    put(o, "save_inv_var", sinv, np);
}

static void bn_train_spatial(struct probe_out *o) { bn_train(o, CUDNN_BATCHNORM_SPATIAL); }
static void bn_train_per_activation(struct probe_out *o) { bn_train(o, CUDNN_BATCHNORM_PER_ACTIVATION); }

/* The dropout states' size, and the reserve's for a 2x3x4x5 float tensor (sizes: shown only). */
static void dropout_sizes(struct probe_out *o)
{
    size_t states = 0, reserve = 0;
    cudnnStatus_t s = cudnnDropoutGetStatesSize(handle, &states);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    cudnnTensorDescriptor_t x = tensor4(o, 2, 3, 4, 5);
    if (x == NULL || !SETUP(o, cudnnDropoutGetReserveSpaceSize(x, &reserve))) return;
    put_number(o, "info_states_bytes", (double)states);
    put_number(o, "info_reserve_bytes", (double)reserve);
}

/* cudnnCTCLoss, DETERMINISTIC, SOFTMAX normalization: T 6, batch 2, alphabet 5 (0 the blank),
   labels {1, 2} over 6 steps and {3, 3, 4} (a repeat) over 5; costs and gradients. */
static void ctc_loss(struct probe_out *o)
{
    enum { T = 6, N = 2, A = 5 };
    const int labels[] = {1, 2, 3, 3, 4}, label_lengths[N] = {2, 3}, input_lengths[N] = {6, 5};
    cudnnTensorDescriptor_t probs = tensor_nd(o, 3, (int[]){T, N, A}, (int[]){N * A, A, 1});
    cudnnTensorDescriptor_t grads = probs ? tensor_nd(o, 3, (int[]){T, N, A}, (int[]){N * A, A, 1}) : NULL;
    cudnnCTCLossDescriptor_t ctc;
    if (grads == NULL || !SETUP(o, cudnnCreateCTCLossDescriptor(&ctc))) return;
    hold(o, ctc, HELD_CTC);
    if (!SETUP(o, cudnnSetCTCLossDescriptor_v8(ctc, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                               CUDNN_PROPAGATE_NAN, 3)))
        return;
    size_t ws = 0;
    if (!SETUP(o, cudnnGetCTCLossWorkspaceSize(handle, probs, grads, labels, label_lengths, input_lengths,
                                               CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, ctc, &ws)))
        return;
    float *pd = dev_random(o, T * N * A, -2, 2), *gd = dev_fill(o, T * N * A, NAN), *cd = dev_fill(o, N, NAN);
    cudnnStatus_t s = cudnnCTCLoss(handle, probs, pd, labels, label_lengths, input_lengths, cd, grads, gd,
                                   CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, ctc, dev_bytes(o, ws), ws);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    put(o, "costs", cd, N);
    put(o, "gradients", gd, T * N * A);
}

/* ---- the list and main ------------------------------------------------------------------------------ */

struct probe {
    const char *name;
    void (*run)(struct probe_out *o);
};

static const struct probe probes[] = {
    {"lstm_fwd", lstm_fwd},
    {"lstm_clip_fwd", lstm_clip_fwd},
    {"lstm_clip_inference", lstm_clip_inference},
    {"lstm_bwd_data", lstm_bwd_data},
    {"lstm_clip_bwd_data", lstm_clip_bwd_data},
    {"lstm_bwd_weights", lstm_bwd_weights},
    {"lstm_clip_bwd_weights", lstm_clip_bwd_weights},
    {"persist_dynamic_set", persist_dynamic_set},
    {"persist_dynamic_unbuilt", persist_dynamic_unbuilt},
    {"persist_dynamic_built", persist_dynamic_built},
    {"rnn_data_null_lengths_unpacked", rnn_data_null_lengths_unpacked},
    {"rnn_data_null_lengths_packed", rnn_data_null_lengths_packed},
    {"negstride_set", negstride_set},
    {"negstride_transform", negstride_transform},
    {"negstride_addtensor", negstride_addtensor},
    {"negstride_transform_1d", negstride_transform_1d},
    {"conv_fwd_implicit_gemm", conv_fwd_implicit_gemm},
    {"softmax_accurate", softmax_accurate},
    {"softmax_log", softmax_log},
    {"lrn_cross_channel", lrn_cross_channel},
    {"pool_avg_include_pad", pool_avg_include_pad},
    {"pool_avg_exclude_pad", pool_avg_exclude_pad},
    {"bn_train_spatial", bn_train_spatial},
    {"bn_train_per_activation", bn_train_per_activation},
    {"dropout_sizes", dropout_sizes},
    {"ctc_loss", ctc_loss},
};

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
    const char *names[ARRAY_LEN(probes)];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) list = true;
        else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) from = (size_t)atoi(argv[++i]);
        else if (argv[i][0] != '-' && nnames < (int)ARRAY_LEN(names)) names[nnames++] = argv[i];
        else {
            fprintf(stderr, "usage: %s [--list] [--from N] [PROBE...]\n", argv[0]);
            return 2;
        }
    }
    if (list) {
        for (size_t i = 0; i < ARRAY_LEN(probes); i++) printf("%s\n", probes[i].name);
        return 0;
    }
    handle = open_backend();
    for (size_t i = from; i < ARRAY_LEN(probes); i++) {
        bool chosen = nnames == 0;
        for (int k = 0; k < nnames; k++) chosen |= strcmp(names[k], probes[i].name) == 0;
        if (chosen) run_probe(&probes[i]);
    }
    close_backend(handle);
    return 0;
}
