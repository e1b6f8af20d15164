/* stress_work.c: the threads-and-streams stress workload (see stress_work.h).

   Main decision: every case is deterministic on its own, so that any difference between a thread's
   output and the single-threaded run is a bug of the library (a race, state shared between handles,
   a stream mix-up), never noise. Hence: the convolution runs the algorithm Find returned and is
   compared with the reference run of that same algorithm (FMA math, so the algorithm alone decides
   the bits); batch norm's running averages start from the same values in every case; dropout's
   descriptor is set again (same seed) before each forward, on states owned by the thread's handle.

   What is shared read-only between the threads: every tensor, filter, convolution, pooling,
   activation and softmax descriptor, and the input data (one device copy). What each thread owns:
   its handle, its dropout descriptor and states, its output and workspace buffers. With CUDA the
   threads share a few non-blocking streams: a thread puts its handle on one of them before each
   case, and on another between the calls of a case (after waiting for the first), so that every
   stream serves several handles and every handle several streams. On the host backend the streams
   are made-up values (the host accepts and ignores them) and the threads meet in the worker pool.

   A case is a row of `cases`: a function that makes its calls on the thread's handle and names the
   outputs to compare. The RNN (an LSTM, forward training and both v8 backward passes) and
   multi-head attention (forward, backward data and weights) cases read slices of the same shared
   inputs; their descriptors, weights and sequence lengths are shared too, their workspaces and
   reserves the thread's. */
#include "stress_work.h"

#include <cudnn.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(OCD_TEST_CUDA) || defined(BENCH_CUDA)
#define STRESS_CUDA 1
#include <cuda_runtime.h>
#endif

#define NSTREAMS 4
#define MAX_OUTPUTS 5

/* The convolution's filters are R x R (pad 1, stride 1: y has x's image size); max pooling is
   POOL x POOL, pad 1, stride 2. */
enum { R = 3, POOL = 3 };

/* The problem of each size (enum stress_size). x is n x c x h x w, the convolution has k filters;
   the LSTM: t steps of batch n, input and hidden widths rh; attention: heads, widths av,
   projections ap, at query and at + 1 key steps of batch n. The LSTM's and the attention's inputs
   and weights are the first elements of x, dx_in, dp_in and w (setup_adv checks that they fit).
   The small size keeps every width (the channels a multiple of 8) and shrinks the batch, the image
   and the sequences, so that a kernel launch has a few blocks: compute-sanitizer's racecheck
   follows every shared-memory access, and the hazards it looks for come with the kernels, not
   with the problem's size. n is at most 4 (the sequence lengths of setup_adv). */
struct stress_dims {
    int n, c, h, w, k, t, rh, heads, av, ap, at;
};
static const struct stress_dims stress_dims[] = {
    [STRESS_FULL] = {.n = 4, .c = 8, .h = 12, .w = 12, .k = 16, .t = 6, .rh = 8, .heads = 2, .av = 8, .ap = 4, .at = 5},
    [STRESS_SMALL] = {.n = 2, .c = 8, .h = 8, .w = 8, .k = 8, .t = 3, .rh = 8, .heads = 2, .av = 8, .ap = 4, .at = 3},
};
#define MAX_AT 8 /* the attention's query steps, at most */

struct output {
    void *dev;
    size_t bytes;
};

struct shared {
    bool cuda;
    struct stress_dims d;
    size_t x_elems, y_elems, w_elems, p_elems; /* x's, y's, the filter's and the pooled output's */
    int pooled;                                /* the pooled output's height and width */
    int attn_lo[MAX_AT], attn_hi[MAX_AT];      /* the attention's windows: every key step */
    cudnnTensorDescriptor_t x_desc, y_desc, p_desc, bn_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv;
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t act;
    cudnnRNNDescriptor_t rnn;
    cudnnRNNDataDescriptor_t rnn_x, rnn_y;
    cudnnTensorDescriptor_t rnn_h;
    cudnnAttnDescriptor_t attn;
    cudnnSeqDataDescriptor_t seq_q, seq_k;
    /* inputs on the device, read by every thread */
    void *x, *w, *dx_in, *dp_in, *scale, *bias, *mean0, *var0, *rnn_len, *len_q, *len_k;
    size_t reserve_bytes, states_bytes, rnn_w_bytes, attn_w_bytes, adv_ws_bytes, adv_rs_bytes;
#ifdef STRESS_CUDA
    cudaStream_t streams[NSTREAMS];
#endif
    /* reference outputs of each case (and of each convolution algorithm), host copies */
    unsigned char *ref[16][CUDNN_CONVOLUTION_FWD_ALGO_COUNT][MAX_OUTPUTS];
    /* counters and the first error, under lock */
    pthread_mutex_t lock;
    struct stress_result *result;
    FILE *log;
};

struct worker {
    struct shared *s;
    int id;
    cudnnHandle_t handle;
    unsigned stream_turn, conv_turn;
    cudnnDropoutDescriptor_t dropout;
    void *states, *reserve, *workspace, *adv_ws, *adv_rs; /* adv_*: the RNN's and attention's */
    size_t workspace_bytes;
    void *out[MAX_OUTPUTS]; /* each large enough for any output (y_elems floats) */
    void *host;             /* a host buffer as large */
    long calls;
};

/* ---- memory on the backend under test ------------------------------------------------------- */

static void *dev_alloc(const struct shared *s, size_t bytes)
{
#ifdef STRESS_CUDA
    if (s->cuda) {
        void *p = NULL;
        return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
    }
#endif
    (void)s;
    return malloc(bytes);
}

static void dev_free(const struct shared *s, void *p)
{
    if (p == NULL) return;
#ifdef STRESS_CUDA
    if (s->cuda) {
        cudaFree(p);
        return;
    }
#endif
    (void)s;
    free(p);
}

/* The stream a handle is on now (NULL on the host backend). */
static cudaStream_t current_stream(cudnnHandle_t h)
{
    cudaStream_t st = NULL;
    cudnnGetStream(h, &st);
    return st;
}

static bool copy_bytes(const struct shared *s, cudnnHandle_t h, void *dst, const void *src, size_t bytes,
                       bool to_device)
{
#ifdef STRESS_CUDA
    if (s->cuda) {
        cudaStream_t st = current_stream(h);
        return cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                               st) == cudaSuccess &&
               cudaStreamSynchronize(st) == cudaSuccess;
    }
#endif
    (void)s, (void)h, (void)to_device;
    memcpy(dst, src, bytes);
    return true;
}

static void *dev_from(struct shared *s, const void *host, size_t bytes)
{
    void *d = dev_alloc(s, bytes);
    if (d == NULL) return NULL;
#ifdef STRESS_CUDA
    if (s->cuda) return cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess ? d : NULL;
#endif
    memcpy(d, host, bytes);
    return d;
}

/* Puts the handle on the next stream of its turn; with CUDA, after the work already on its current
   stream has finished (the outputs of one call are the inputs of the next). */
static bool switch_stream(struct worker *w)
{
    unsigned turn = w->stream_turn++;
    cudaStream_t next = (cudaStream_t)(uintptr_t)(0x1000 + 16 * ((turn + (unsigned)w->id) % NSTREAMS));
#ifdef STRESS_CUDA
    if (w->s->cuda) {
        if (cudaStreamSynchronize(current_stream(w->handle)) != cudaSuccess) return false;
        next = w->s->streams[(turn + (unsigned)w->id) % NSTREAMS];
    }
#endif
    if (cudnnSetStream(w->handle, next) != CUDNN_STATUS_SUCCESS) return false;
    return current_stream(w->handle) == next;
}

/* ---- bookkeeping ------------------------------------------------------------------------------ */

static void report(struct shared *s, long *counter, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(struct shared *s, long *counter, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&s->lock);
    (*counter)++;
    if (s->result->first_error[0] == '\0') snprintf(s->result->first_error, sizeof s->result->first_error, "%s", line);
    if (s->log) fprintf(s->log, "stress: %s\n", line);
    pthread_mutex_unlock(&s->lock);
}

#define CALL(w, what, call)                                                                        \
    do {                                                                                           \
        cudnnStatus_t st_ = (call);                                                                \
        (w)->calls++;                                                                              \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                         \
            report((w)->s, &(w)->s->result->failures, "thread %d: %s returned %s", (w)->id, what,  \
                   cudnnGetErrorString(st_));                                                      \
            return 0;                                                                              \
        }                                                                                          \
    } while (0)

/* ---- the cases --------------------------------------------------------------------------------- */

/* A case makes its calls on w's handle, stores in outs[] the outputs to compare and returns how
   many (0 after a failure, reported), and in *variant which reference they are compared with
   (the convolution algorithm; 0 elsewhere). */
typedef int (*case_fn)(struct worker *w, struct output *outs, int *variant);

static const float one = 1.0f, zero = 0.0f;

static int case_conv_find(struct worker *w, struct output *outs, int *variant)
{
    struct shared *s = w->s;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    CALL(w, "cudnnFindConvolutionForwardAlgorithm",
         cudnnFindConvolutionForwardAlgorithm(w->handle, s->x_desc, s->w_desc, s->conv, s->y_desc,
                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
    int usable = 0;
    while (usable < returned && perf[usable].status == CUDNN_STATUS_SUCCESS) usable++;
    if (usable == 0) {
        report(s, &s->result->failures, "thread %d: Find returned no usable algorithm", w->id);
        return 0;
    }
    /* the threads take different algorithms of the list, each in turn */
    cudnnConvolutionFwdAlgo_t algo = perf[((unsigned)w->id + w->conv_turn++) % (unsigned)usable].algo;
    size_t ws = 0;
    CALL(w, "cudnnGetConvolutionForwardWorkspaceSize",
         cudnnGetConvolutionForwardWorkspaceSize(w->handle, s->x_desc, s->w_desc, s->conv, s->y_desc, algo, &ws));
    if (ws > w->workspace_bytes) {
        dev_free(s, w->workspace);
        w->workspace = dev_alloc(s, ws);
        w->workspace_bytes = w->workspace ? ws : 0;
        if (w->workspace == NULL) {
            report(s, &s->result->failures, "thread %d: no memory for a workspace of %zu bytes", w->id, ws);
            return 0;
        }
    }
    if (!switch_stream(w)) return 0;
    CALL(w, "cudnnConvolutionForward",
         cudnnConvolutionForward(w->handle, &one, s->x_desc, s->x, s->w_desc, s->w, s->conv, algo, w->workspace,
                                 ws, &zero, s->y_desc, w->out[0]));
    outs[0] = (struct output){w->out[0], s->y_elems * sizeof(float)};
    *variant = (int)algo;
    return 1;
}

static int case_pooling(struct worker *w, struct output *outs, int *variant)
{
    struct shared *s = w->s;
    CALL(w, "cudnnPoolingForward",
         cudnnPoolingForward(w->handle, s->pool, &one, s->x_desc, s->x, &zero, s->p_desc, w->out[0]));
    if (!switch_stream(w)) return 0;
    CALL(w, "cudnnPoolingBackward",
         cudnnPoolingBackward(w->handle, s->pool, &one, s->p_desc, w->out[0], s->p_desc, s->dp_in, s->x_desc, s->x,
                              &zero, s->x_desc, w->out[1]));
    outs[0] = (struct output){w->out[0], s->p_elems * sizeof(float)};
    outs[1] = (struct output){w->out[1], s->x_elems * sizeof(float)};
    *variant = 0;
    return 2;
}

static int case_batchnorm(struct worker *w, struct output *outs, int *variant)
{
    struct shared *s = w->s;
    const size_t cb = (size_t)s->d.c * sizeof(float);
    void *mean = w->out[2], *var = (char *)w->out[2] + cb, *save_mean = (char *)w->out[2] + 2 * cb,
         *save_inv = (char *)w->out[2] + 3 * cb, *dscale = w->out[3], *dbias = (char *)w->out[3] + cb;
    /* running averages start where the reference's did */
    if (!copy_bytes(s, w->handle, w->host, s->mean0, cb, false) || !copy_bytes(s, w->handle, mean, w->host, cb, true) ||
        !copy_bytes(s, w->handle, w->host, s->var0, cb, false) || !copy_bytes(s, w->handle, var, w->host, cb, true)) {
        report(s, &s->result->failures, "thread %d: a copy failed", w->id);
        return 0;
    }
    CALL(w, "cudnnBatchNormalizationForwardTraining",
         cudnnBatchNormalizationForwardTraining(w->handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->x_desc, s->x,
                                                s->x_desc, w->out[0], s->bn_desc, s->scale, s->bias, 0.25, mean,
                                                var, 1e-5, save_mean, save_inv));
    if (!switch_stream(w)) return 0;
    CALL(w, "cudnnBatchNormalizationBackward",
         cudnnBatchNormalizationBackward(w->handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, s->x_desc,
                                         s->x, s->x_desc, s->dx_in, s->x_desc, w->out[1], s->bn_desc, s->scale,
                                         dscale, dbias, 1e-5, save_mean, save_inv));
    outs[0] = (struct output){w->out[0], s->x_elems * sizeof(float)};
    outs[1] = (struct output){w->out[1], s->x_elems * sizeof(float)};
    outs[2] = (struct output){w->out[2], 4 * cb};
    outs[3] = (struct output){w->out[3], 2 * cb};
    *variant = 0;
    return 4;
}

static int case_softmax(struct worker *w, struct output *outs, int *variant)
{
    struct shared *s = w->s;
    CALL(w, "cudnnSoftmaxForward",
         cudnnSoftmaxForward(w->handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, s->x_desc, s->x,
                             &zero, s->x_desc, w->out[0]));
    if (!switch_stream(w)) return 0;
    CALL(w, "cudnnSoftmaxBackward",
         cudnnSoftmaxBackward(w->handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, s->x_desc,
                              w->out[0], s->x_desc, s->dx_in, &zero, s->x_desc, w->out[1]));
    outs[0] = (struct output){w->out[0], s->x_elems * sizeof(float)};
    outs[1] = (struct output){w->out[1], s->x_elems * sizeof(float)};
    *variant = 0;
    return 2;
}

static int case_activation(struct worker *w, struct output *outs, int *variant)
{
    struct shared *s = w->s;
    CALL(w, "cudnnActivationForward",
         cudnnActivationForward(w->handle, s->act, &one, s->x_desc, s->x, &zero, s->x_desc, w->out[0]));
    outs[0] = (struct output){w->out[0], s->x_elems * sizeof(float)};
    *variant = 0;
    return 1;
}

static int case_dropout(struct worker *w, struct output *outs, int *variant)
{
    struct shared *s = w->s;
    CALL(w, "cudnnSetDropoutDescriptor",
         cudnnSetDropoutDescriptor(w->dropout, w->handle, 0.3f, w->states, s->states_bytes, 2026));
    CALL(w, "cudnnDropoutForward",
         cudnnDropoutForward(w->handle, w->dropout, s->x_desc, s->x, s->x_desc, w->out[0], w->reserve,
                             s->reserve_bytes));
    if (!switch_stream(w)) return 0;
    CALL(w, "cudnnDropoutBackward",
         cudnnDropoutBackward(w->handle, w->dropout, s->x_desc, s->dx_in, s->x_desc, w->out[1], w->reserve,
                              s->reserve_bytes));
    outs[0] = (struct output){w->out[0], s->x_elems * sizeof(float)};
    outs[1] = (struct output){w->out[1], s->x_elems * sizeof(float)};
    *variant = 0;
    return 2;
}

/* An output set to zero before a case. */
static bool zero_output(struct worker *w, void *dev, size_t bytes)
{
    memset(w->host, 0, bytes);
    if (copy_bytes(w->s, w->handle, dev, w->host, bytes, true)) return true;
    report(w->s, &w->s->result->failures, "thread %d: a copy failed", w->id);
    return false;
}

static int case_rnn(struct worker *w, struct output *outs, int *variant)
{
    struct shared *s = w->s;
    const struct stress_dims *d = &s->d;
    const size_t y_bytes = (size_t)d->t * d->n * d->rh * sizeof(float), h_bytes = (size_t)d->n * d->rh * sizeof(float);
    /* the padding of y and dx is not written (no fill value), and dw is added to */
    if (!zero_output(w, w->out[0], y_bytes) || !zero_output(w, w->out[3], y_bytes) ||
        !zero_output(w, w->out[4], s->rnn_w_bytes))
        return 0;
    CALL(w, "cudnnRNNForward",
         cudnnRNNForward(w->handle, s->rnn, CUDNN_FWD_MODE_TRAINING, s->rnn_len, s->rnn_x, s->x, s->rnn_y, w->out[0],
                         s->rnn_h, s->dx_in, w->out[1], s->rnn_h, s->dp_in, w->out[2], s->rnn_w_bytes, s->w,
                         s->adv_ws_bytes, w->adv_ws, s->adv_rs_bytes, w->adv_rs));
    if (!switch_stream(w)) return 0;
    CALL(w, "cudnnRNNBackwardData_v8",
         cudnnRNNBackwardData_v8(w->handle, s->rnn, s->rnn_len, s->rnn_y, w->out[0], s->dx_in, s->rnn_x, w->out[3],
                                 s->rnn_h, s->dx_in, NULL, NULL, s->rnn_h, s->dp_in, NULL, NULL, s->rnn_w_bytes, s->w,
                                 s->adv_ws_bytes, w->adv_ws, s->adv_rs_bytes, w->adv_rs));
    CALL(w, "cudnnRNNBackwardWeights_v8",
         cudnnRNNBackwardWeights_v8(w->handle, s->rnn, CUDNN_WGRAD_MODE_ADD, s->rnn_len, s->rnn_x, s->x, s->rnn_h,
                                    s->dx_in, s->rnn_y, w->out[0], s->rnn_w_bytes, w->out[4], s->adv_ws_bytes,
                                    w->adv_ws, s->adv_rs_bytes, w->adv_rs));
    outs[0] = (struct output){w->out[0], y_bytes};
    outs[1] = (struct output){w->out[1], h_bytes};
    outs[2] = (struct output){w->out[2], h_bytes};
    outs[3] = (struct output){w->out[3], y_bytes}; /* dx: input width rh too */
    outs[4] = (struct output){w->out[4], s->rnn_w_bytes};
    *variant = 0;
    return 5;
}

static int case_attention(struct worker *w, struct output *outs, int *variant)
{
    struct shared *s = w->s;
    const struct stress_dims *d = &s->d;
    const size_t q_bytes = (size_t)d->at * d->n * d->av * sizeof(float),
                 k_bytes = (size_t)(d->at + 1) * d->n * d->av * sizeof(float);
    CALL(w, "cudnnMultiHeadAttnForward",
         cudnnMultiHeadAttnForward(w->handle, s->attn, -1, s->attn_lo, s->attn_hi, s->len_q, s->len_k, s->seq_q, s->x,
                                   NULL, s->seq_k, s->dx_in, s->seq_k, s->dp_in, s->seq_q, w->out[0], s->attn_w_bytes,
                                   s->w, s->adv_ws_bytes, w->adv_ws, s->adv_rs_bytes, w->adv_rs));
    if (!switch_stream(w)) return 0;
    CALL(w, "cudnnMultiHeadAttnBackwardData",
         cudnnMultiHeadAttnBackwardData(w->handle, s->attn, s->attn_lo, s->attn_hi, s->len_q, s->len_k, s->seq_q,
                                        s->dx_in, s->seq_q, w->out[1], s->x, s->seq_k,
                                        w->out[2], s->dx_in, s->seq_k, w->out[3], s->dp_in, s->attn_w_bytes, s->w,
                                        s->adv_ws_bytes, w->adv_ws, s->adv_rs_bytes, w->adv_rs));
    CALL(w, "cudnnMultiHeadAttnBackwardWeights",
         cudnnMultiHeadAttnBackwardWeights(w->handle, s->attn, CUDNN_WGRAD_MODE_SET, s->seq_q, s->x, s->seq_k,
                                           s->dx_in, s->seq_k, s->dp_in, s->seq_q, s->dx_in, s->attn_w_bytes, s->w,
                                           w->out[4], s->adv_ws_bytes, w->adv_ws, s->adv_rs_bytes, w->adv_rs));
    outs[0] = (struct output){w->out[0], q_bytes};
    outs[1] = (struct output){w->out[1], q_bytes};
    outs[2] = (struct output){w->out[2], k_bytes};
    outs[3] = (struct output){w->out[3], k_bytes};
    outs[4] = (struct output){w->out[4], s->attn_w_bytes};
    *variant = 0;
    return 5;
}

static const struct {
    const char *name;
    case_fn fn;
} cases[] = {
    {"conv_find", case_conv_find}, {"pooling", case_pooling}, {"batchnorm", case_batchnorm},
    {"softmax", case_softmax},     {"activation", case_activation}, {"dropout", case_dropout},
    {"rnn", case_rnn},             {"attention", case_attention},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* ---- threads ------------------------------------------------------------------------------------ */

static bool worker_open(struct worker *w)
{
    struct shared *s = w->s;
    if (cudnnCreate(&w->handle) != CUDNN_STATUS_SUCCESS) return false;
    if (cudnnCreateDropoutDescriptor(&w->dropout) != CUDNN_STATUS_SUCCESS) return false;
    w->states = dev_alloc(s, s->states_bytes);
    w->reserve = dev_alloc(s, s->reserve_bytes);
    w->host = malloc(s->y_elems * sizeof(float));
    w->adv_ws = dev_alloc(s, s->adv_ws_bytes ? s->adv_ws_bytes : 1);
    w->adv_rs = dev_alloc(s, s->adv_rs_bytes ? s->adv_rs_bytes : 1);
    bool ok = w->states != NULL && w->reserve != NULL && w->host != NULL && w->adv_ws != NULL && w->adv_rs != NULL;
    for (int i = 0; i < MAX_OUTPUTS; i++) ok &= (w->out[i] = dev_alloc(s, s->y_elems * sizeof(float))) != NULL;
    return ok && switch_stream(w);
}

static void worker_close(struct worker *w)
{
    struct shared *s = w->s;
#ifdef STRESS_CUDA
    if (w->handle && s->cuda) cudaStreamSynchronize(current_stream(w->handle));
#endif
    for (int i = 0; i < MAX_OUTPUTS; i++) dev_free(s, w->out[i]), w->out[i] = NULL;
    dev_free(s, w->states), dev_free(s, w->reserve), dev_free(s, w->workspace);
    dev_free(s, w->adv_ws), dev_free(s, w->adv_rs);
    free(w->host);
    w->states = w->reserve = w->workspace = w->host = w->adv_ws = w->adv_rs = NULL;
    w->workspace_bytes = 0;
    if (w->dropout) cudnnDestroyDropoutDescriptor(w->dropout);
    if (w->handle) cudnnDestroy(w->handle);
    w->dropout = NULL;
    w->handle = NULL;
}

/* Runs case c on w and either records its outputs as the reference (record) or compares them. */
static void run_case(struct worker *w, int c, bool record)
{
    struct shared *s = w->s;
    struct output outs[MAX_OUTPUTS];
    int variant = 0;
    int n = cases[c].fn(w, outs, &variant);
#ifdef STRESS_CUDA
    if (s->cuda && cudaStreamSynchronize(current_stream(w->handle)) != cudaSuccess) {
        report(s, &s->result->failures, "thread %d: %s: the stream failed", w->id, cases[c].name);
        return;
    }
#endif
    for (int i = 0; i < n; i++) {
        if (!copy_bytes(s, w->handle, w->host, outs[i].dev, outs[i].bytes, false)) {
            report(s, &s->result->failures, "thread %d: %s: reading output %d failed", w->id, cases[c].name, i);
            return;
        }
        unsigned char **ref = &s->ref[c][variant][i];
        if (record && *ref == NULL) {
            *ref = malloc(outs[i].bytes);
            if (*ref) memcpy(*ref, w->host, outs[i].bytes);
        } else if (*ref == NULL) {
            report(s, &s->result->mismatches, "thread %d: %s variant %d has no single-threaded run", w->id,
                   cases[c].name, variant);
        } else if (memcmp(*ref, w->host, outs[i].bytes) != 0) {
            report(s, &s->result->mismatches, "thread %d: %s variant %d: output %d differs from the single-threaded run",
                   w->id, cases[c].name, variant, i);
        }
    }
}

struct thread_args {
    struct worker w;
    const struct stress_options *o;
    double deadline;
    long cases;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *thread_main(void *arg)
{
    struct thread_args *a = arg;
    struct worker *w = &a->w;
    if (!worker_open(w)) {
        report(w->s, &w->s->result->failures, "thread %d: cannot create its handle and buffers", w->id);
        worker_close(w);
        return NULL;
    }
    for (long i = 0; a->o->iterations > 0 ? i < a->o->iterations : now_s() < a->deadline; i++) {
        if (a->o->recreate > 0 && i > 0 && i % a->o->recreate == 0) {
            worker_close(w);
            if (!worker_open(w)) {
                report(w->s, &w->s->result->failures, "thread %d: cannot recreate its handle", w->id);
                break;
            }
        }
        run_case(w, (int)((i + w->id) % NCASES), false);
        a->cases++;
    }
    worker_close(w);
    return NULL;
}

/* ---- setup -------------------------------------------------------------------------------------- */

static void fill(float *p, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        p[i] = lo + (hi - lo) * (float)((seed >> 40) * (1.0 / 16777216.0));
    }
}

/* The LSTM's and the attention's descriptors, lengths and buffer sizes (the handle asked for the
   sizes); false when their inputs, weights or outputs would not fit the shared buffers. The batch's
   sequences have different lengths: the first n of the patterns below. */
static bool setup_adv(struct shared *s, cudnnHandle_t h)
{
    const struct stress_dims *d = &s->d;
    const int rnn_len[4] = {d->t, d->t - 1, d->t, 2}, len_q[4] = {d->at, d->at - 2, d->at, 1},
              len_k[4] = {d->at + 1, d->at, 2, d->at + 1};
    if (d->n > 4 || d->t < 2 || d->at < 3 || d->at > MAX_AT) return false;
    for (int i = 0; i < d->at; i++) s->attn_lo[i] = 0, s->attn_hi[i] = d->at + 1;
    bool ok = cudnnCreateRNNDescriptor(&s->rnn) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateRNNDataDescriptor(&s->rnn_x) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateRNNDataDescriptor(&s->rnn_y) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateTensorDescriptor(&s->rnn_h) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateAttnDescriptor(&s->attn) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateSeqDataDescriptor(&s->seq_q) == CUDNN_STATUS_SUCCESS &&
              cudnnCreateSeqDataDescriptor(&s->seq_k) == CUDNN_STATUS_SUCCESS;
    if (!ok) return false;
    const int hdims[3] = {1, d->n, d->rh}, hstrides[3] = {d->n * d->rh, d->rh, 1};
    ok &= cudnnSetRNNDescriptor_v8(s->rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                   CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                   CUDNN_FMA_MATH, d->rh, d->rh, d->rh, 1, NULL,
                                   CUDNN_RNN_PADDED_IO_ENABLED) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetRNNDataDescriptor(s->rnn_x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, d->t, d->n,
                                    d->rh, rnn_len, NULL) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetRNNDataDescriptor(s->rnn_y, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, d->t, d->n,
                                    d->rh, rnn_len, NULL) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetTensorNdDescriptor(s->rnn_h, CUDNN_DATA_FLOAT, 3, hdims, hstrides) == CUDNN_STATUS_SUCCESS;
    static const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                               CUDNN_SEQDATA_VECT_DIM};
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = d->at, dims[CUDNN_SEQDATA_BATCH_DIM] = d->n, dims[CUDNN_SEQDATA_BEAM_DIM] = 1,
    dims[CUDNN_SEQDATA_VECT_DIM] = d->av;
    ok &= cudnnSetSeqDataDescriptor(s->seq_q, CUDNN_DATA_FLOAT, 4, dims, axes, d->n, len_q, NULL) ==
          CUDNN_STATUS_SUCCESS;
    dims[CUDNN_SEQDATA_TIME_DIM] = d->at + 1;
    ok &= cudnnSetSeqDataDescriptor(s->seq_k, CUDNN_DATA_FLOAT, 4, dims, axes, d->n, len_k, NULL) ==
          CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetAttnDescriptor(s->attn, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES, d->heads,
                                 0.5, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, NULL, NULL, d->av, d->av,
                                 d->av, d->ap, d->ap, d->ap, d->av, d->at, d->at + 1, d->n, 1) == CUDNN_STATUS_SUCCESS;
    size_t rnn_ws = 0, rnn_rs = 0, attn_ws = 0, attn_rs = 0;
    ok = ok && cudnnGetRNNWeightSpaceSize(h, s->rnn, &s->rnn_w_bytes) == CUDNN_STATUS_SUCCESS &&
         cudnnGetRNNTempSpaceSizes(h, s->rnn, CUDNN_FWD_MODE_TRAINING, s->rnn_x, &rnn_ws, &rnn_rs) ==
             CUDNN_STATUS_SUCCESS &&
         cudnnGetMultiHeadAttnBuffers(h, s->attn, &s->attn_w_bytes, &attn_ws, &attn_rs) == CUDNN_STATUS_SUCCESS;
    s->adv_ws_bytes = rnn_ws > attn_ws ? rnn_ws : attn_ws;
    s->adv_rs_bytes = rnn_rs > attn_rs ? rnn_rs : attn_rs;
    s->rnn_len = dev_from(s, rnn_len, (size_t)d->n * sizeof(int));
    s->len_q = dev_from(s, len_q, (size_t)d->n * sizeof(int));
    s->len_k = dev_from(s, len_k, (size_t)d->n * sizeof(int));
    /* sequences are read from x, dx_in and dp_in; weights from w; every output fits y */
    const size_t rnn_seq = (size_t)d->t * d->n * d->rh, attn_seq = (size_t)(d->at + 1) * d->n * d->av;
    const size_t in_room = (s->x_elems < s->p_elems ? s->x_elems : s->p_elems) * sizeof(float);
    const size_t w_room = (s->w_elems < s->y_elems ? s->w_elems : s->y_elems) * sizeof(float);
    return ok && s->rnn_len && s->len_q && s->len_k && s->rnn_w_bytes <= w_room && s->attn_w_bytes <= w_room &&
           rnn_seq * sizeof(float) <= in_room && attn_seq * sizeof(float) <= in_room &&
           rnn_seq <= s->y_elems && attn_seq <= s->y_elems;
}

static bool setup_shared(struct shared *s, cudnnHandle_t h)
{
    const struct stress_dims *d = &s->d;
    s->pooled = (d->h + 2 - POOL) / 2 + 1;
    s->x_elems = (size_t)d->n * d->c * d->h * d->w;
    s->y_elems = (size_t)d->n * d->k * d->h * d->w;
    s->w_elems = (size_t)d->k * d->c * R * R;
    s->p_elems = (size_t)d->n * d->c * s->pooled * s->pooled;
    if (d->k < d->c) return false; /* y's buffers hold every output */
    bool ok = true;
    ok &= cudnnCreateTensorDescriptor(&s->x_desc) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateTensorDescriptor(&s->y_desc) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateTensorDescriptor(&s->p_desc) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateTensorDescriptor(&s->bn_desc) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateFilterDescriptor(&s->w_desc) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateConvolutionDescriptor(&s->conv) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreatePoolingDescriptor(&s->pool) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnCreateActivationDescriptor(&s->act) == CUDNN_STATUS_SUCCESS;
    if (!ok) return false;
    ok &= cudnnSetTensor4dDescriptor(s->x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, d->n, d->c, d->h, d->w) ==
          CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetTensor4dDescriptor(s->y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, d->n, d->k, d->h, d->w) ==
          CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetTensor4dDescriptor(s->p_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, d->n, d->c, s->pooled,
                                     s->pooled) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnDeriveBNTensorDescriptor(s->bn_desc, s->x_desc, CUDNN_BATCHNORM_SPATIAL) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetFilter4dDescriptor(s->w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, d->k, d->c, R, R) ==
          CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetConvolution2dDescriptor(s->conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT) ==
          CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetConvolutionMathType(s->conv, CUDNN_FMA_MATH) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetPooling2dDescriptor(s->pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, POOL, POOL, 1, 1, 2, 2) ==
          CUDNN_STATUS_SUCCESS;
    ok &= cudnnSetActivationDescriptor(s->act, CUDNN_ACTIVATION_ELU, CUDNN_PROPAGATE_NAN, 0.5) == CUDNN_STATUS_SUCCESS;
    ok &= cudnnDropoutGetReserveSpaceSize(s->x_desc, &s->reserve_bytes) == CUDNN_STATUS_SUCCESS;
    if (!ok) return false;

    const size_t cb = (size_t)d->c * sizeof(float);
    float *host = malloc(s->y_elems * sizeof(float));
    if (host == NULL) return false;
    fill(host, s->x_elems, 1, -2.0f, 2.0f);
    s->x = dev_from(s, host, s->x_elems * sizeof(float));
    fill(host, s->w_elems, 2, -0.5f, 0.5f);
    s->w = dev_from(s, host, s->w_elems * sizeof(float));
    fill(host, s->x_elems, 3, -1.0f, 1.0f);
    s->dx_in = dev_from(s, host, s->x_elems * sizeof(float));
    fill(host, s->p_elems, 4, -1.0f, 1.0f);
    s->dp_in = dev_from(s, host, s->p_elems * sizeof(float));
    fill(host, (size_t)d->c, 5, 0.5f, 1.5f);
    s->scale = dev_from(s, host, cb);
    fill(host, (size_t)d->c, 6, -0.5f, 0.5f);
    s->bias = dev_from(s, host, cb);
    fill(host, (size_t)d->c, 7, -0.1f, 0.1f);
    s->mean0 = dev_from(s, host, cb);
    fill(host, (size_t)d->c, 8, 0.9f, 1.1f);
    s->var0 = dev_from(s, host, cb);
    free(host);
#ifdef STRESS_CUDA
    for (int i = 0; i < NSTREAMS && s->cuda; i++)
        ok &= cudaStreamCreateWithFlags(&s->streams[i], cudaStreamNonBlocking) == cudaSuccess;
#endif
    return ok && s->x && s->w && s->dx_in && s->dp_in && s->scale && s->bias && s->mean0 && s->var0 &&
           setup_adv(s, h);
}

static void teardown_shared(struct shared *s)
{
    cudnnDestroyTensorDescriptor(s->x_desc);
    cudnnDestroyTensorDescriptor(s->y_desc);
    cudnnDestroyTensorDescriptor(s->p_desc);
    cudnnDestroyTensorDescriptor(s->bn_desc);
    cudnnDestroyFilterDescriptor(s->w_desc);
    cudnnDestroyConvolutionDescriptor(s->conv);
    cudnnDestroyPoolingDescriptor(s->pool);
    cudnnDestroyActivationDescriptor(s->act);
    if (s->rnn) cudnnDestroyRNNDescriptor(s->rnn);
    if (s->rnn_x) cudnnDestroyRNNDataDescriptor(s->rnn_x);
    if (s->rnn_y) cudnnDestroyRNNDataDescriptor(s->rnn_y);
    if (s->rnn_h) cudnnDestroyTensorDescriptor(s->rnn_h);
    if (s->attn) cudnnDestroyAttnDescriptor(s->attn);
    if (s->seq_q) cudnnDestroySeqDataDescriptor(s->seq_q);
    if (s->seq_k) cudnnDestroySeqDataDescriptor(s->seq_k);
    void *bufs[] = {s->x, s->w, s->dx_in, s->dp_in, s->scale, s->bias, s->mean0, s->var0, s->rnn_len, s->len_q, s->len_k};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) dev_free(s, bufs[i]);
#ifdef STRESS_CUDA
    for (int i = 0; i < NSTREAMS && s->cuda; i++)
        if (s->streams[i]) cudaStreamDestroy(s->streams[i]);
#endif
    for (int c = 0; c < 16; c++)
        for (int v = 0; v < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; v++)
            for (int i = 0; i < MAX_OUTPUTS; i++) free(s->ref[c][v][i]);
    pthread_mutex_destroy(&s->lock);
}

/* The single-threaded run: every case once, and the convolution once per algorithm Find lists. */
static bool record_references(struct shared *s)
{
    struct worker w = {.s = s, .id = 0};
    bool ok = worker_open(&w);
    if (!ok) {
        worker_close(&w);
        return false;
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    ok = cudnnFindConvolutionForwardAlgorithm(w.handle, s->x_desc, s->w_desc, s->conv, s->y_desc,
                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf) == CUDNN_STATUS_SUCCESS;
    for (int c = 0; c < NCASES && ok; c++) {
        /* the convolution takes the next algorithm of Find's list at each run: run it for each */
        int runs = cases[c].fn == case_conv_find ? returned : 1;
        for (int r = 0; r < runs; r++) {
            run_case(&w, c, true);
            ok &= s->result->failures == 0;
        }
    }
    worker_close(&w);
    return ok;
}

int stress_run(const struct stress_options *o, struct stress_result *r)
{
    memset(r, 0, sizeof *r);
    struct shared *s = calloc(1, sizeof *s);
    struct thread_args *args = calloc((size_t)o->threads, sizeof *args);
    pthread_t *tids = calloc((size_t)o->threads, sizeof *tids);
    if (s == NULL || args == NULL || tids == NULL) {
        snprintf(r->first_error, sizeof r->first_error, "out of memory");
        free(s), free(args), free(tids);
        return 1;
    }
    s->cuda = o->cuda;
    s->d = stress_dims[o->size];
    s->result = r;
    s->log = o->log;
    pthread_mutex_init(&s->lock, NULL);
    int rc = 0;
    cudnnHandle_t probe = NULL;
    if (cudnnCreate(&probe) != CUDNN_STATUS_SUCCESS ||
        cudnnDropoutGetStatesSize(probe, &s->states_bytes) != CUDNN_STATUS_SUCCESS || !setup_shared(s, probe)) {
        snprintf(r->first_error, sizeof r->first_error, "cannot set up the shared descriptors and inputs");
        rc = 1;
    }
    if (probe) cudnnDestroy(probe);
    if (rc == 0 && !record_references(s)) {
        if (r->first_error[0] == '\0') snprintf(r->first_error, sizeof r->first_error, "the single-threaded run failed");
        rc = 1;
    }
    if (rc == 0) {
        double deadline = now_s() + o->seconds;
        int started = 0;
        for (int t = 0; t < o->threads; t++) {
            args[t] = (struct thread_args){.w = {.s = s, .id = t + 1}, .o = o, .deadline = deadline};
            if (pthread_create(&tids[t], NULL, thread_main, &args[t]) != 0) break;
            started++;
        }
        for (int t = 0; t < started; t++) {
            pthread_join(tids[t], NULL);
            r->cases += args[t].cases;
            r->calls += args[t].w.calls;
        }
        if (started < o->threads) {
            snprintf(r->first_error, sizeof r->first_error, "only %d of %d threads started", started, o->threads);
            rc = 1;
        }
        if (o->log)
            fprintf(o->log, "stress: %d threads, %ld cases, %ld calls: %ld mismatches, %ld failures\n", started,
                    r->cases, r->calls, r->mismatches, r->failures);
    }
    teardown_shared(s);
    free(s), free(args), free(tids);
    return rc;
}
