/* alloc_fault.c: out of memory. For representative calls of every sub-library (descriptors,
   convolution, pooling, batch norm, dropout, CTC, RNN and attention forward and backward, a graph
   built and executed), each allocation the call makes, host and device, is made to fail in turn (the library's hook, core/alloc.h,
   reached by dlsym): the call must return CUDNN_STATUS_ALLOC_FAILED, write none of its outputs, and
   the same call must then succeed on the same handle. Leaks are LeakSanitizer's to find: the suite
   runs under AddressSanitizer in CI (tools/test.sh).

   The sweep: arm the hook for allocation n (n = 1, 2, ...), make the call, disarm it; the hook says
   how many allocations the call made, and the sweep ends at the first n the call did not reach
   (that call must have succeeded). */
#include "test.h"

#include "core/platform.h"

#include <cudnn_backend.h>

#include <stdlib.h>
#include <string.h>

enum { FAULT_HOST, FAULT_DEVICE }; /* enum ocd_alloc_kind */

typedef long (*fault_set_fn)(int kind, long nth);

static fault_set_fn fault_set(void)
{
    static fault_set_fn fn;
    if (fn == NULL) {
        *(void **)&fn = test_lib_symbol(OCD_LIBRARY_FILE("cudnn_ops_infer"), "ocd_alloc_fault_set");
    }
    return fn;
}

/* One call under test: `call` polls its outputs first (or leaves them poisoned) and makes the call;
   `untouched` says whether the outputs still hold what they held before; `undo` releases what a
   successful call made (a handle, a descriptor), so that the next round starts alike; `fresh`,
   where present, runs before each round (Find: a cache the call would otherwise hit). Find may
   also absorb a failed allocation and succeed: an algorithm whose memory failed is either served
   by another implementation of it or reported with the status ALLOC_FAILED in its entry, as cuDNN
   documents; `degraded` says the latter, which the same call without a fault must not repeat (a
   passing shortage is not remembered). */
struct fault_case {
    const char *name;
    cudnnStatus_t (*call)(void *ctx);
    bool (*untouched)(void *ctx);
    void (*undo)(void *ctx);
    void *ctx;
    void (*fresh)(void *ctx);
    bool (*degraded)(void *ctx);
};

/* Sweeps every allocation of each kind that the call reaches; returns the rounds run. */
static int sweep(const struct fault_case *c)
{
    fault_set_fn set = fault_set();
    if (!CHECK(set != NULL)) return 0;
    int rounds = 0;
    for (int kind = FAULT_HOST; kind <= FAULT_DEVICE; kind++) {
        for (long n = 1;; n++) {
            if (c->fresh) c->fresh(c->ctx);
            set(kind, n);
            cudnnStatus_t s = c->call(c->ctx);
            long made = set(kind, 0);
            rounds++;
            if (made < n) {
                if (s != CUDNN_STATUS_SUCCESS)
                    FAIL("%s: %s allocation %ld was not reached, yet the call returned %s", c->name,
                         kind == FAULT_HOST ? "host" : "device", n, cudnnGetErrorString(s));
                else if (c->undo)
                    c->undo(c->ctx);
                break;
            }
            bool absorbed = s == CUDNN_STATUS_SUCCESS && c->degraded != NULL;
            if (s != CUDNN_STATUS_ALLOC_FAILED && !absorbed)
                FAIL("%s: %s allocation %ld of %ld failed, the call returned %s", c->name,
                     kind == FAULT_HOST ? "host" : "device", n, made, cudnnGetErrorString(s));
            if (s == CUDNN_STATUS_SUCCESS && c->undo) c->undo(c->ctx);
            if (s != CUDNN_STATUS_SUCCESS && c->untouched && !c->untouched(c->ctx))
                FAIL("%s: %s allocation %ld failed and the call wrote an output", c->name,
                     kind == FAULT_HOST ? "host" : "device", n);
            /* the handle keeps working: the same call, no fault */
            cudnnStatus_t again = c->call(c->ctx);
            if (again != CUDNN_STATUS_SUCCESS)
                FAIL("%s: after allocation %ld failed, the call then returned %s", c->name, n,
                     cudnnGetErrorString(again));
            else if (c->degraded && c->degraded(c->ctx))
                FAIL("%s: after allocation %ld failed, the call without a fault still reports it", c->name, n);
            else if (c->undo)
                c->undo(c->ctx);
            if (current_test_failed()) return rounds;
        }
    }
    return rounds;
}

/* ---- outputs ---------------------------------------------------------------------------------- */

/* Whether every byte of a device buffer is `value`. */
static bool all_bytes(const void *dev, size_t bytes, unsigned char value)
{
    unsigned char *host = malloc(bytes);
    tbuf_download(host, dev, bytes);
    bool ok = true;
    for (size_t i = 0; i < bytes && ok; i++) ok = host[i] == value;
    free(host);
    return ok;
}

static bool all_poison(const void *dev, size_t bytes)
{
    return all_bytes(dev, bytes, 0xFF);
}

/* A device buffer of zero bytes. */
static void device_zero(void *dev, size_t bytes)
{
    void *zeros = calloc(1, bytes);
    tbuf_upload(dev, zeros, bytes);
    free(zeros);
}

static float *random_floats(size_t n, float lo, float hi)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (float)trand_uniform(lo, hi);
    return v;
}

static void *device_random(size_t n, float lo, float hi)
{
    float *v = random_floats(n, lo, hi);
    void *d = tbuf_from(v, n * sizeof *v);
    free(v);
    return d;
}

/* A new handle of the backend under test in *h (the previous one destroyed): made before each
   round, so that what a handle keeps after its first call (the host's GEMM scratch) is allocated
   inside every round. */
static void new_handle(cudnnHandle_t *h)
{
    if (*h != NULL) CHECK_OK(cudnnDestroy(*h));
    CHECK_OK(cudnnCreate(h));
}

/* ---- core: handle and descriptors ----------------------------------------------------------------- */

#define POISON_PTR ((void *)(uintptr_t)0xdeadbeefULL)

struct created {
    void *obj;
    cudnnStatus_t (*create)(void **);
    cudnnStatus_t (*destroy)(void *);
};

static cudnnStatus_t create_call(void *ctx)
{
    struct created *c = ctx;
    c->obj = POISON_PTR;
    return c->create(&c->obj);
}
static bool create_untouched(void *ctx)
{
    return ((struct created *)ctx)->obj == POISON_PTR;
}
static void create_undo(void *ctx)
{
    struct created *c = ctx;
    CHECK_OK(c->destroy(c->obj));
}

TEST(alloc_fault_handle_and_descriptors)
{
    /* the creators take a pointer to their own type: called through void ** here */
#define CREATOR(kind) {NULL, (cudnnStatus_t(*)(void **))cudnnCreate##kind, (cudnnStatus_t(*)(void *))cudnnDestroy##kind}
    struct created cases[] = {
        {NULL, (cudnnStatus_t(*)(void **))cudnnCreate, (cudnnStatus_t(*)(void *))cudnnDestroy},
        CREATOR(TensorDescriptor),         CREATOR(FilterDescriptor),  CREATOR(ConvolutionDescriptor),
        CREATOR(PoolingDescriptor),        CREATOR(ActivationDescriptor), CREATOR(DropoutDescriptor),
        CREATOR(LRNDescriptor),            CREATOR(OpTensorDescriptor), CREATOR(ReduceTensorDescriptor),
        CREATOR(SpatialTransformerDescriptor), CREATOR(CTCLossDescriptor), CREATOR(TensorTransformDescriptor),
    };
#undef CREATOR
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fault_case c = {.name = "create", .call = create_call, .untouched = create_untouched, .undo = create_undo,
                              .ctx = &cases[i]};
        sweep(&c);
    }
}

/* ---- convolution (cnn_infer): Find, and forward with every algorithm ---------------------------------- */

struct conv {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t x_desc, y_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv;
    void *x, *w, *y, *ws;
    size_t y_bytes, ws_bytes;
    cudnnConvolutionFwdAlgo_t algo;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned;
};

enum { CN = 2, CC = 3, CH = 9, CW = 9, CK = 4, CR = 3 };

static void conv_init(struct conv *c)
{
    c->h = test_handle();
    CHECK_OK(cudnnCreateTensorDescriptor(&c->x_desc));
    CHECK_OK(cudnnCreateTensorDescriptor(&c->y_desc));
    CHECK_OK(cudnnCreateFilterDescriptor(&c->w_desc));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&c->conv));
    CHECK_OK(cudnnSetTensor4dDescriptor(c->x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, CN, CC, CH, CW));
    CHECK_OK(cudnnSetTensor4dDescriptor(c->y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, CN, CK, CH, CW));
    CHECK_OK(cudnnSetFilter4dDescriptor(c->w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CK, CC, CR, CR));
    CHECK_OK(cudnnSetConvolution2dDescriptor(c->conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    c->x = device_random((size_t)CN * CC * CH * CW, -1, 1);
    c->w = device_random((size_t)CK * CC * CR * CR, -1, 1);
    c->y_bytes = (size_t)CN * CK * CH * CW * sizeof(float);
    c->y = tbuf_alloc(c->y_bytes);
}

static void conv_destroy(struct conv *c)
{
    cudnnDestroyTensorDescriptor(c->x_desc);
    cudnnDestroyTensorDescriptor(c->y_desc);
    cudnnDestroyFilterDescriptor(c->w_desc);
    cudnnDestroyConvolutionDescriptor(c->conv);
    tbuf_free(c->x), tbuf_free(c->w), tbuf_free(c->y);
}

static cudnnStatus_t find_call(void *ctx)
{
    struct conv *c = ctx;
    memset(c->perf, 0xFF, sizeof c->perf);
    c->returned = -1;
    return cudnnFindConvolutionForwardAlgorithm(c->h, c->x_desc, c->w_desc, c->conv, c->y_desc,
                                                CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &c->returned, c->perf);
}
static bool find_untouched(void *ctx)
{
    struct conv *c = ctx;
    unsigned char poison[sizeof c->perf];
    memset(poison, 0xFF, sizeof poison);
    return c->returned == -1 && memcmp(poison, c->perf, sizeof poison) == 0;
}

/* Find keeps its results per problem and per value of OPENCUDNN_DISABLE: a value of its own for
   each round (naming no implementation) makes each round's Find time every algorithm again. */
static void find_fresh(void *ctx)
{
    static unsigned round;
    char value[64];
    (void)ctx;
    snprintf(value, sizeof value, "alloc_fault_round_%u", round++);
    ocd_setenv("OPENCUDNN_DISABLE", value);
}

/* An entry of Find's results whose algorithm could not get its memory. */
static bool find_degraded(void *ctx)
{
    struct conv *c = ctx;
    for (int i = 0; i < c->returned; i++)
        if (c->perf[i].status == CUDNN_STATUS_ALLOC_FAILED) return true;
    return false;
}

static cudnnStatus_t forward_call(void *ctx)
{
    struct conv *c = ctx;
    const float one = 1, zero = 0;
    tbuf_poison(c->y, c->y_bytes);
    return cudnnConvolutionForward(c->h, &one, c->x_desc, c->x, c->w_desc, c->w, c->conv, c->algo, c->ws,
                                   c->ws_bytes, &zero, c->y_desc, c->y);
}
static bool forward_untouched(void *ctx)
{
    struct conv *c = ctx;
    return all_poison(c->y, c->y_bytes);
}

TEST(alloc_fault_convolution)
{
    struct conv c = {0};
    conv_init(&c);
    struct fault_case find = {.name = "cudnnFindConvolutionForwardAlgorithm", .call = find_call,
                              .untouched = find_untouched, .ctx = &c, .fresh = find_fresh, .degraded = find_degraded};
    sweep(&find);
    ocd_unsetenv("OPENCUDNN_DISABLE");
    for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT && !current_test_failed(); a++) {
        c.algo = (cudnnConvolutionFwdAlgo_t)a;
        if (cudnnGetConvolutionForwardWorkspaceSize(c.h, c.x_desc, c.w_desc, c.conv, c.y_desc, c.algo, &c.ws_bytes) !=
            CUDNN_STATUS_SUCCESS)
            continue;
        c.ws = c.ws_bytes ? tbuf_alloc(c.ws_bytes) : NULL;
        if (forward_call(&c) == CUDNN_STATUS_SUCCESS) {
            struct fault_case fwd = {.name = "cudnnConvolutionForward", .call = forward_call, .untouched = forward_untouched,
                                     .ctx = &c};
            sweep(&fwd);
        }
        tbuf_free(c.ws);
    }
    conv_destroy(&c);
}

/* ---- ops_infer / ops_train: pooling, batch norm, dropout ---------------------------------------------- */

struct nn {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t x_desc, p_desc, bn_desc;
    cudnnPoolingDescriptor_t pool;
    cudnnDropoutDescriptor_t dropout;
    void *x, *dy, *dp, *scale, *bias, *y, *dx, *stats, *states, *reserve;
    size_t x_bytes, p_bytes, states_bytes, reserve_bytes;
};

enum { NN_N = 4, NN_C = 32, NN_H = 7, NN_W = 7, NN_P = 4 }; /* n x c > the pooling backward's grain: several tasks */

static cudnnStatus_t pool_backward_call(void *ctx)
{
    struct nn *t = ctx;
    const float one = 1, zero = 0;
    tbuf_poison(t->dx, t->x_bytes);
    return cudnnPoolingBackward(t->h, t->pool, &one, t->p_desc, t->dp, t->p_desc, t->dp, t->x_desc, t->x, &zero,
                                t->x_desc, t->dx);
}
static bool dx_untouched(void *ctx)
{
    struct nn *t = ctx;
    return all_poison(t->dx, t->x_bytes);
}

static cudnnStatus_t bn_call(void *ctx)
{
    struct nn *t = ctx;
    const float one = 1, zero = 0;
    size_t cb = NN_C * sizeof(float);
    tbuf_poison(t->y, t->x_bytes);
    tbuf_poison(t->stats, 2 * cb);
    cudnnStatus_t s = cudnnBatchNormalizationForwardTraining(
        t->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, t->x_desc, t->x, t->x_desc, t->y, t->bn_desc, t->scale, t->bias,
        1.0, NULL, NULL, 1e-5, t->stats, (char *)t->stats + cb);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    tbuf_poison(t->dx, t->x_bytes);
    return cudnnBatchNormalizationBackward(t->h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, t->x_desc, t->x,
                                           t->x_desc, t->dy, t->x_desc, t->dx, t->bn_desc, t->scale,
                                           (char *)t->stats + 2 * cb, (char *)t->stats + 3 * cb, 1e-5, t->stats,
                                           (char *)t->stats + cb);
}
static bool bn_untouched(void *ctx)
{
    struct nn *t = ctx;
    /* the forward's outputs when it failed, else the backward's */
    return all_poison(t->y, t->x_bytes) || all_poison(t->dx, t->x_bytes);
}

static cudnnStatus_t dropout_call(void *ctx)
{
    struct nn *t = ctx;
    tbuf_poison(t->y, t->x_bytes);
    cudnnStatus_t s = cudnnSetDropoutDescriptor(t->dropout, t->h, 0.25f, t->states, t->states_bytes, 7);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    return cudnnDropoutForward(t->h, t->dropout, t->x_desc, t->x, t->x_desc, t->y, t->reserve, t->reserve_bytes);
}
static bool y_untouched(void *ctx)
{
    struct nn *t = ctx;
    return all_poison(t->y, t->x_bytes);
}

TEST(alloc_fault_nn_ops)
{
    struct nn t = {.h = test_handle()};
    CHECK_OK(cudnnCreateTensorDescriptor(&t.x_desc));
    CHECK_OK(cudnnCreateTensorDescriptor(&t.p_desc));
    CHECK_OK(cudnnCreateTensorDescriptor(&t.bn_desc));
    CHECK_OK(cudnnCreatePoolingDescriptor(&t.pool));
    CHECK_OK(cudnnCreateDropoutDescriptor(&t.dropout));
    CHECK_OK(cudnnSetTensor4dDescriptor(t.x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, NN_N, NN_C, NN_H, NN_W));
    CHECK_OK(cudnnSetTensor4dDescriptor(t.p_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, NN_N, NN_C, NN_P, NN_P));
    CHECK_OK(cudnnDeriveBNTensorDescriptor(t.bn_desc, t.x_desc, CUDNN_BATCHNORM_SPATIAL));
    CHECK_OK(cudnnSetPooling2dDescriptor(t.pool, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_NOT_PROPAGATE_NAN,
                                         3, 3, 1, 1, 2, 2));
    CHECK_OK(cudnnDropoutGetStatesSize(t.h, &t.states_bytes));
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(t.x_desc, &t.reserve_bytes));
    size_t xn = (size_t)NN_N * NN_C * NN_H * NN_W, pn = (size_t)NN_N * NN_C * NN_P * NN_P;
    t.x_bytes = xn * sizeof(float);
    t.p_bytes = pn * sizeof(float);
    t.x = device_random(xn, -1, 1);
    t.dy = device_random(xn, -1, 1);
    t.dp = device_random(pn, -1, 1);
    t.scale = device_random(NN_C, 0.5f, 1.5f);
    t.bias = device_random(NN_C, -0.5f, 0.5f);
    t.y = tbuf_alloc(t.x_bytes);
    t.dx = tbuf_alloc(t.x_bytes);
    t.stats = tbuf_alloc(4 * NN_C * sizeof(float));
    t.states = tbuf_alloc(t.states_bytes);
    t.reserve = tbuf_alloc(t.reserve_bytes);

    const struct fault_case cases[] = {
        {.name = "cudnnPoolingBackward", .call = pool_backward_call, .untouched = dx_untouched, .ctx = &t},
        {.name = "cudnnBatchNormalization (forward training, backward)", .call = bn_call, .untouched = bn_untouched, .ctx = &t},
        {.name = "cudnnSetDropoutDescriptor, cudnnDropoutForward", .call = dropout_call, .untouched = y_untouched, .ctx = &t},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) sweep(&cases[i]);

    void *bufs[] = {t.x, t.dy, t.dp, t.scale, t.bias, t.y, t.dx, t.stats, t.states, t.reserve};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    cudnnDestroyTensorDescriptor(t.x_desc);
    cudnnDestroyTensorDescriptor(t.p_desc);
    cudnnDestroyTensorDescriptor(t.bn_desc);
    cudnnDestroyPoolingDescriptor(t.pool);
    cudnnDestroyDropoutDescriptor(t.dropout);
}

/* ---- adv_train: CTC loss --------------------------------------------------------------------------- */

struct ctc {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t probs_desc, grads_desc;
    cudnnCTCLossDescriptor_t desc;
    void *probs, *costs, *grads, *ws;
    size_t ws_bytes, grads_bytes;
};

enum { CTC_T = 6, CTC_N = 2, CTC_A = 4 };
static const int ctc_labels[] = {1, 2, 3, 1}, ctc_label_lengths[] = {2, 2}, ctc_input_lengths[] = {CTC_T, CTC_T - 1};

static cudnnStatus_t ctc_call(void *ctx)
{
    struct ctc *c = ctx;
    tbuf_poison(c->costs, CTC_N * sizeof(float));
    tbuf_poison(c->grads, c->grads_bytes);
    return cudnnCTCLoss(c->h, c->probs_desc, c->probs, ctc_labels, ctc_label_lengths, ctc_input_lengths, c->costs,
                        c->grads_desc, c->grads, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c->desc, c->ws, c->ws_bytes);
}
static bool ctc_untouched(void *ctx)
{
    struct ctc *c = ctx;
    return all_poison(c->costs, CTC_N * sizeof(float)) && all_poison(c->grads, c->grads_bytes);
}

TEST(alloc_fault_ctc_loss)
{
    struct ctc c = {.h = test_handle()};
    const int dims[3] = {CTC_T, CTC_N, CTC_A}, strides[3] = {CTC_N * CTC_A, CTC_A, 1};
    CHECK_OK(cudnnCreateTensorDescriptor(&c.probs_desc));
    CHECK_OK(cudnnCreateTensorDescriptor(&c.grads_desc));
    CHECK_OK(cudnnCreateCTCLossDescriptor(&c.desc));
    CHECK_OK(cudnnSetTensorNdDescriptor(c.probs_desc, CUDNN_DATA_FLOAT, 3, dims, strides));
    CHECK_OK(cudnnSetTensorNdDescriptor(c.grads_desc, CUDNN_DATA_FLOAT, 3, dims, strides));
    CHECK_OK(cudnnSetCTCLossDescriptor(c.desc, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnGetCTCLossWorkspaceSize(c.h, c.probs_desc, c.grads_desc, ctc_labels, ctc_label_lengths,
                                          ctc_input_lengths, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c.desc, &c.ws_bytes));
    c.grads_bytes = (size_t)CTC_T * CTC_N * CTC_A * sizeof(float);
    c.probs = device_random((size_t)CTC_T * CTC_N * CTC_A, 0.1f, 1.0f);
    c.costs = tbuf_alloc(CTC_N * sizeof(float));
    c.grads = tbuf_alloc(c.grads_bytes);
    c.ws = tbuf_alloc(c.ws_bytes ? c.ws_bytes : 1);
    struct fault_case fc = {.name = "cudnnCTCLoss", .call = ctc_call, .untouched = ctc_untouched, .ctx = &c};
    sweep(&fc);
    tbuf_free(c.probs), tbuf_free(c.costs), tbuf_free(c.grads), tbuf_free(c.ws);
    cudnnDestroyTensorDescriptor(c.probs_desc);
    cudnnDestroyTensorDescriptor(c.grads_desc);
    cudnnDestroyCTCLossDescriptor(c.desc);
}

/* ---- adv: RNN forward and backward (v8 API) --------------------------------------------------------- */

/* The call runs in stages (a setter, then the computations in order); `stage` says which one failed,
   and only that one's outputs are checked: the earlier ones succeeded and wrote theirs. */
struct rnn {
    cudnnHandle_t h;
    cudnnRNNDescriptor_t d;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd;
    void *x, *y, *dy, *dx, *hx, *hy, *cx, *cy, *w, *dw, *ws, *rs, *lengths;
    size_t x_bytes, y_bytes, s_bytes, w_bytes, ws_bytes, rs_bytes;
    int stage;
};

enum { RNN_T = 3, RNN_N = 2, RNN_IN = 4, RNN_HID = 5 };
static const int rnn_lengths[RNN_N] = {RNN_T, RNN_T - 1};

static cudnnStatus_t rnn_call(void *ctx)
{
    struct rnn *r = ctx;
    tbuf_poison(r->y, r->y_bytes), tbuf_poison(r->hy, r->s_bytes), tbuf_poison(r->cy, r->s_bytes);
    tbuf_poison(r->dx, r->x_bytes);
    device_zero(r->dw, r->w_bytes);
    r->stage = 0;
    cudnnStatus_t s = cudnnSetRNNDataDescriptor(r->xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                                RNN_T, RNN_N, RNN_IN, rnn_lengths, NULL);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    r->stage = 1;
    s = cudnnRNNForward(r->h, r->d, CUDNN_FWD_MODE_TRAINING, r->lengths, r->xd, r->x, r->yd, r->y, r->hd, r->hx, r->hy,
                        r->hd, r->cx, r->cy, r->w_bytes, r->w, r->ws_bytes, r->ws, r->rs_bytes, r->rs);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    r->stage = 2;
    s = cudnnRNNBackwardData_v8(r->h, r->d, r->lengths, r->yd, r->y, r->dy, r->xd, r->dx, r->hd, r->hx, NULL, NULL,
                                r->hd, r->cx, NULL, NULL, r->w_bytes, r->w, r->ws_bytes, r->ws, r->rs_bytes, r->rs);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    r->stage = 3;
    return cudnnRNNBackwardWeights_v8(r->h, r->d, CUDNN_WGRAD_MODE_ADD, r->lengths, r->xd, r->x, r->hd, r->hx, r->yd,
                                      r->y, r->w_bytes, r->dw, r->ws_bytes, r->ws, r->rs_bytes, r->rs);
}

static void rnn_fresh(void *ctx)
{
    new_handle(&((struct rnn *)ctx)->h);
}

static bool rnn_untouched(void *ctx)
{
    struct rnn *r = ctx;
    switch (r->stage) {
    case 1: return all_poison(r->y, r->y_bytes) && all_poison(r->hy, r->s_bytes) && all_poison(r->cy, r->s_bytes);
    case 2: return all_poison(r->dx, r->x_bytes);
    case 3: return all_bytes(r->dw, r->w_bytes, 0);
    default: return true; /* a descriptor setter: its descriptor is checked by the calls after it */
    }
}

TEST(alloc_fault_rnn)
{
    struct rnn r = {0};
    new_handle(&r.h);
    CHECK_OK(cudnnCreateRNNDescriptor(&r.d));
    CHECK_OK(cudnnCreateRNNDataDescriptor(&r.xd));
    CHECK_OK(cudnnCreateRNNDataDescriptor(&r.yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&r.hd));
    CHECK_OK(cudnnSetRNNDescriptor_v8(r.d, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                      CUDNN_DEFAULT_MATH, RNN_IN, RNN_HID, RNN_HID, 1, NULL,
                                      CUDNN_RNN_PADDED_IO_ENABLED));
    CHECK_OK(cudnnSetRNNDataDescriptor(r.xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, RNN_T, RNN_N,
                                       RNN_IN, rnn_lengths, NULL));
    CHECK_OK(cudnnSetRNNDataDescriptor(r.yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, RNN_T, RNN_N,
                                       RNN_HID, rnn_lengths, NULL));
    const int sdims[3] = {1, RNN_N, RNN_HID}, sstrides[3] = {RNN_N * RNN_HID, RNN_HID, 1};
    CHECK_OK(cudnnSetTensorNdDescriptor(r.hd, CUDNN_DATA_FLOAT, 3, sdims, sstrides));
    CHECK_OK(cudnnGetRNNWeightSpaceSize(r.h, r.d, &r.w_bytes));
    CHECK_OK(cudnnGetRNNTempSpaceSizes(r.h, r.d, CUDNN_FWD_MODE_TRAINING, r.xd, &r.ws_bytes, &r.rs_bytes));
    size_t xn = (size_t)RNN_T * RNN_N * RNN_IN, yn = (size_t)RNN_T * RNN_N * RNN_HID, sn = (size_t)RNN_N * RNN_HID;
    r.x_bytes = xn * sizeof(float), r.y_bytes = yn * sizeof(float), r.s_bytes = sn * sizeof(float);
    r.x = device_random(xn, -1, 1);
    r.dy = device_random(yn, -1, 1);
    r.hx = device_random(sn, -1, 1);
    r.cx = device_random(sn, -1, 1);
    r.w = device_random(r.w_bytes / sizeof(float), -0.5f, 0.5f);
    r.y = tbuf_alloc(r.y_bytes), r.dx = tbuf_alloc(r.x_bytes), r.hy = tbuf_alloc(r.s_bytes), r.cy = tbuf_alloc(r.s_bytes);
    r.dw = tbuf_alloc(r.w_bytes);
    r.ws = tbuf_alloc(r.ws_bytes ? r.ws_bytes : 1), r.rs = tbuf_alloc(r.rs_bytes ? r.rs_bytes : 1);
    r.lengths = tbuf_from(rnn_lengths, sizeof rnn_lengths);
    struct fault_case c = {.name = "cudnnRNNForward, cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8",
                           .call = rnn_call, .untouched = rnn_untouched, .ctx = &r, .fresh = rnn_fresh};
    sweep(&c);
    void *bufs[] = {r.x, r.dy, r.hx, r.cx, r.w, r.y, r.dx, r.hy, r.cy, r.dw, r.ws, r.rs, r.lengths};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    cudnnDestroyRNNDescriptor(r.d);
    cudnnDestroyRNNDataDescriptor(r.xd);
    cudnnDestroyRNNDataDescriptor(r.yd);
    cudnnDestroyTensorDescriptor(r.hd);
    cudnnDestroy(r.h);
}

/* ---- adv: multi-head attention forward and backward --------------------------------------------------- */

struct attn {
    cudnnHandle_t h;
    cudnnAttnDescriptor_t d;
    cudnnSeqDataDescriptor_t qd, kd, od;
    void *q, *k, *o, *dout, *dq, *dk, *dv, *w, *dw, *ws, *rs, *len_q, *len_kv;
    size_t q_bytes, k_bytes, o_bytes, w_bytes, ws_bytes, rs_bytes;
    int stage;
};

enum { ATTN_HEADS = 2, ATTN_V = 4, ATTN_PROJ = 2, ATTN_TQ = 3, ATTN_TK = 4, ATTN_B = 2 };
static const int attn_len_q[ATTN_B] = {ATTN_TQ, ATTN_TQ - 1}, attn_len_kv[ATTN_B] = {ATTN_TK, ATTN_TK - 2};
static const int attn_lo[ATTN_TQ] = {0, 0, 0}, attn_hi[ATTN_TQ] = {ATTN_TK, ATTN_TK, ATTN_TK};

static cudnnSeqDataDescriptor_t attn_seq(int T, const int *lengths)
{
    static const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM,
                                               CUDNN_SEQDATA_VECT_DIM};
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = T, dims[CUDNN_SEQDATA_BATCH_DIM] = ATTN_B, dims[CUDNN_SEQDATA_BEAM_DIM] = 1,
    dims[CUDNN_SEQDATA_VECT_DIM] = ATTN_V;
    cudnnSeqDataDescriptor_t d = NULL;
    CHECK_OK(cudnnCreateSeqDataDescriptor(&d));
    CHECK_OK(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, ATTN_B, lengths, NULL));
    return d;
}

static cudnnStatus_t attn_call(void *ctx)
{
    struct attn *a = ctx;
    tbuf_poison(a->o, a->o_bytes), tbuf_poison(a->dq, a->q_bytes), tbuf_poison(a->dk, a->k_bytes);
    tbuf_poison(a->dv, a->k_bytes), tbuf_poison(a->dw, a->w_bytes);
    a->stage = 0;
    cudnnStatus_t s = cudnnMultiHeadAttnForward(a->h, a->d, -1, attn_lo, attn_hi, a->len_q, a->len_kv, a->qd, a->q,
                                                NULL, a->kd, a->k, a->kd, a->k, a->od, a->o, a->w_bytes, a->w,
                                                a->ws_bytes, a->ws, a->rs_bytes, a->rs);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    a->stage = 1;
    s = cudnnMultiHeadAttnBackwardData(a->h, a->d, attn_lo, attn_hi, a->len_q, a->len_kv, a->od, a->dout, a->qd, a->dq,
                                       a->q, a->kd, a->dk, a->k, a->kd, a->dv, a->k, a->w_bytes, a->w, a->ws_bytes,
                                       a->ws, a->rs_bytes, a->rs);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    a->stage = 2;
    return cudnnMultiHeadAttnBackwardWeights(a->h, a->d, CUDNN_WGRAD_MODE_SET, a->qd, a->q, a->kd, a->k, a->kd, a->k,
                                             a->od, a->dout, a->w_bytes, a->w, a->dw, a->ws_bytes, a->ws, a->rs_bytes,
                                             a->rs);
}

static void attn_fresh(void *ctx)
{
    new_handle(&((struct attn *)ctx)->h);
}

static bool attn_untouched(void *ctx)
{
    struct attn *a = ctx;
    switch (a->stage) {
    case 0: return all_poison(a->o, a->o_bytes);
    case 1: return all_poison(a->dq, a->q_bytes) && all_poison(a->dk, a->k_bytes) && all_poison(a->dv, a->k_bytes);
    default: return all_poison(a->dw, a->w_bytes);
    }
}

TEST(alloc_fault_attention)
{
    struct attn a = {0};
    new_handle(&a.h);
    CHECK_OK(cudnnCreateAttnDescriptor(&a.d));
    CHECK_OK(cudnnSetAttnDescriptor(a.d, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES, ATTN_HEADS,
                                    0.5, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, NULL, NULL, ATTN_V,
                                    ATTN_V, ATTN_V, ATTN_PROJ, ATTN_PROJ, ATTN_PROJ, ATTN_V, ATTN_TQ, ATTN_TK, ATTN_B, 1));
    a.qd = attn_seq(ATTN_TQ, attn_len_q);
    a.kd = attn_seq(ATTN_TK, attn_len_kv);
    a.od = attn_seq(ATTN_TQ, attn_len_q);
    CHECK_OK(cudnnGetMultiHeadAttnBuffers(a.h, a.d, &a.w_bytes, &a.ws_bytes, &a.rs_bytes));
    a.q_bytes = a.o_bytes = (size_t)ATTN_TQ * ATTN_B * ATTN_V * sizeof(float);
    a.k_bytes = (size_t)ATTN_TK * ATTN_B * ATTN_V * sizeof(float);
    a.q = device_random(a.q_bytes / sizeof(float), -1, 1);
    a.k = device_random(a.k_bytes / sizeof(float), -1, 1);
    a.dout = device_random(a.o_bytes / sizeof(float), -1, 1);
    a.w = device_random(a.w_bytes / sizeof(float), -0.5f, 0.5f);
    a.o = tbuf_alloc(a.o_bytes), a.dq = tbuf_alloc(a.q_bytes), a.dk = tbuf_alloc(a.k_bytes), a.dv = tbuf_alloc(a.k_bytes);
    a.dw = tbuf_alloc(a.w_bytes), a.ws = tbuf_alloc(a.ws_bytes ? a.ws_bytes : 1), a.rs = tbuf_alloc(a.rs_bytes);
    a.len_q = tbuf_from(attn_len_q, sizeof attn_len_q);
    a.len_kv = tbuf_from(attn_len_kv, sizeof attn_len_kv);
    struct fault_case c = {.name = "cudnnMultiHeadAttnForward, BackwardData, BackwardWeights", .call = attn_call,
                           .untouched = attn_untouched, .ctx = &a, .fresh = attn_fresh};
    sweep(&c);
    void *bufs[] = {a.q, a.k, a.dout, a.w, a.o, a.dq, a.dk, a.dv, a.dw, a.ws, a.rs, a.len_q, a.len_kv};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    cudnnDestroySeqDataDescriptor(a.qd);
    cudnnDestroySeqDataDescriptor(a.kd);
    cudnnDestroySeqDataDescriptor(a.od);
    cudnnDestroyAttnDescriptor(a.d);
    cudnnDestroy(a.h);
}

/* ---- the graph API: a convolution with a ReLU, built, planned and executed ------------------------------ */

/* Every descriptor the call makes, in the order made; all destroyed at the end of the call, whatever
   its status. With scale_in_y the ReLU is a MUL by a tensor s (UID 5) passed in y's own buffer,
   which y holds beforehand (S_BYTE in every byte): the execution then allocates the convolution's
   intermediate (engine_exec.c, separate_in_place). */
struct graph {
    cudnnHandle_t h;
    void *x, *w, *y, *ws;
    size_t y_bytes;
    cudnnBackendDescriptor_t made[16];
    int count;
    bool executing; /* the failure came from cudnnBackendExecute: y must be untouched */
    bool scale_in_y;
};

enum { S_BYTE = 0x3F }; /* s = 0.747f */

enum { G_N = 1, G_C = 2, G_H = 5, G_K = 3, G_R = 3 };

#define G_TRY(expr)                                                                                        \
    do {                                                                                                   \
        cudnnStatus_t s_ = (expr);                                                                         \
        if (s_ != CUDNN_STATUS_SUCCESS) return s_;                                                         \
    } while (0)

static cudnnStatus_t g_make(struct graph *g, cudnnBackendDescriptorType_t kind, cudnnBackendDescriptor_t *d)
{
    *d = NULL;
    G_TRY(cudnnBackendCreateDescriptor(kind, d));
    g->made[g->count++] = *d;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t g_set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                           cudnnBackendAttributeType_t type, int64_t n, const void *v)
{
    return cudnnBackendSetAttribute(d, name, type, n, v);
}

static cudnnStatus_t g_tensor(struct graph *g, int64_t uid, int64_t n, int64_t c, int64_t hw, bool virt,
                              cudnnBackendDescriptor_t *t)
{
    const int64_t dims[4] = {n, c, hw, hw}, strides[4] = {c * hw * hw, hw * hw, hw, 1}, align = 16;
    const cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    G_TRY(g_make(g, CUDNN_BACKEND_TENSOR_DESCRIPTOR, t));
    G_TRY(g_set(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
    G_TRY(g_set(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
    G_TRY(g_set(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
    G_TRY(g_set(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    G_TRY(g_set(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
    if (virt) G_TRY(g_set(*t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt));
    return cudnnBackendFinalize(*t);
}

static cudnnStatus_t graph_build_run(struct graph *g)
{
    cudnnBackendDescriptor_t x, w, t, y, sc = NULL, conv, conv_op, relu, relu_op, graph, heur, cfg, plan, pack;
    G_TRY(g_tensor(g, 1, G_N, G_C, G_H, false, &x));
    G_TRY(g_tensor(g, 2, G_K, G_C, G_R, false, &w));
    G_TRY(g_tensor(g, 3, G_N, G_K, G_H, true, &t));
    G_TRY(g_tensor(g, 4, G_N, G_K, G_H, false, &y));
    if (g->scale_in_y) G_TRY(g_tensor(g, 5, G_N, G_K, G_H, false, &sc));
    const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t nsp = 2, pad[2] = {1, 1}, one[2] = {1, 1};
    G_TRY(g_make(g, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv));
    G_TRY(g_set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
    G_TRY(g_set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
    G_TRY(g_set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp));
    G_TRY(g_set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    G_TRY(g_set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    G_TRY(g_set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one));
    G_TRY(g_set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one));
    G_TRY(cudnnBackendFinalize(conv));
    const float alpha = 1, beta = 0;
    G_TRY(g_make(g, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &conv_op));
    G_TRY(g_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
    G_TRY(g_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w));
    G_TRY(g_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t));
    G_TRY(g_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
    G_TRY(g_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
    G_TRY(g_set(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
    G_TRY(cudnnBackendFinalize(conv_op));
    const cudnnPointwiseMode_t pw = g->scale_in_y ? CUDNN_POINTWISE_MUL : CUDNN_POINTWISE_RELU_FWD;
    G_TRY(g_make(g, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &relu));
    G_TRY(g_set(relu, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &pw));
    G_TRY(g_set(relu, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &comp));
    G_TRY(cudnnBackendFinalize(relu));
    G_TRY(g_make(g, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &relu_op));
    G_TRY(g_set(relu_op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &relu));
    G_TRY(g_set(relu_op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t));
    if (g->scale_in_y) G_TRY(g_set(relu_op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &sc));
    G_TRY(g_set(relu_op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y));
    G_TRY(cudnnBackendFinalize(relu_op));
    const cudnnBackendDescriptor_t ops[2] = {conv_op, relu_op};
    G_TRY(g_make(g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
    G_TRY(g_set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, ops));
    G_TRY(g_set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &g->h));
    G_TRY(cudnnBackendFinalize(graph));
    const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_INSTANT;
    G_TRY(g_make(g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    G_TRY(g_set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
    G_TRY(g_set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode));
    G_TRY(cudnnBackendFinalize(heur));
    G_TRY(g_make(g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg));
    int64_t got = 0;
    G_TRY(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &cfg));
    G_TRY(g_make(g, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
    G_TRY(g_set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg));
    G_TRY(g_set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &g->h));
    G_TRY(cudnnBackendFinalize(plan));
    int64_t ws_bytes = 0;
    G_TRY(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got, &ws_bytes));
    if (!CHECK((size_t)ws_bytes <= 1 << 20)) return CUDNN_STATUS_INTERNAL_ERROR;
    const int64_t uids[4] = {1, 2, 4, 5}, npack = g->scale_in_y ? 4 : 3;
    void *const ptrs[4] = {g->x, g->w, g->y, g->y};
    G_TRY(g_make(g, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    G_TRY(g_set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, npack, uids));
    G_TRY(g_set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, npack, ptrs));
    G_TRY(g_set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &g->ws));
    G_TRY(cudnnBackendFinalize(pack));
    g->executing = true;
    return cudnnBackendExecute(g->h, plan, pack);
}

static cudnnStatus_t graph_call(void *ctx)
{
    struct graph *g = ctx;
    if (g->scale_in_y) {
        unsigned char *s = malloc(g->y_bytes);
        memset(s, S_BYTE, g->y_bytes);
        tbuf_upload(g->y, s, g->y_bytes);
        free(s);
    } else {
        tbuf_poison(g->y, g->y_bytes);
    }
    g->count = 0;
    g->executing = false;
    cudnnStatus_t s = graph_build_run(g);
    while (g->count > 0) CHECK_OK(cudnnBackendDestroyDescriptor(g->made[--g->count]));
    return s;
}

static bool graph_untouched(void *ctx)
{
    struct graph *g = ctx;
    return all_bytes(g->y, g->y_bytes, g->scale_in_y ? S_BYTE : 0xFF);
}

static void graph_fresh(void *ctx)
{
    new_handle(&((struct graph *)ctx)->h);
}

TEST(alloc_fault_graph)
{
    struct graph g = {0};
    new_handle(&g.h);
    g.x = device_random((size_t)G_N * G_C * G_H * G_H, -1, 1);
    g.w = device_random((size_t)G_K * G_C * G_R * G_R, -1, 1);
    g.y_bytes = (size_t)G_N * G_K * G_H * G_H * sizeof(float);
    g.y = tbuf_alloc(g.y_bytes);
    g.ws = tbuf_alloc(1 << 20);
    struct fault_case c = {.name = "graph: conv + ReLU, heuristics, plan, execute", .call = graph_call,
                           .untouched = graph_untouched, .ctx = &g, .fresh = graph_fresh};
    sweep(&c);
    g.scale_in_y = true;
    c.name = "graph: conv * s with s in y's buffer, heuristics, plan, execute";
    sweep(&c);
    tbuf_free(g.x), tbuf_free(g.w), tbuf_free(g.y), tbuf_free(g.ws);
    cudnnDestroy(g.h);
}
