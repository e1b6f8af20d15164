/* alloc_fault.c: out of memory. For representative calls of every sub-library, each allocation
   the call makes, host and device, is made to fail in turn (the library's hook, core/alloc.h,
   reached by dlsym): the call must return CUDNN_STATUS_ALLOC_FAILED, write none of its outputs, and
   the same call must then succeed on the same handle. Leaks are LeakSanitizer's to find: the suite
   runs under AddressSanitizer in CI (tools/test.sh).

   The sweep: arm the hook for allocation n (n = 1, 2, ...), make the call, disarm it; the hook says
   how many allocations the call made, and the sweep ends at the first n the call did not reach
   (that call must have succeeded). */
#include "test.h"

#include "core/platform.h"

#include <stdlib.h>
#include <string.h>

enum { FAULT_HOST, FAULT_DEVICE }; /* enum ocd_alloc_kind */

typedef long (*fault_set_fn)(int kind, long nth);

static fault_set_fn fault_set(void)
{
    static fault_set_fn fn;
    if (fn == NULL) {
        void *lib = ocd_dl_open(OCD_LIB_DIR "/" OCD_LIBRARY_FILE("cudnn_ops_infer"), NULL, 0);
        if (lib != NULL) *(void **)&fn = ocd_dl_symbol(lib, "ocd_alloc_fault_set");
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

static bool all_poison(const void *dev, size_t bytes)
{
    unsigned char *host = malloc(bytes);
    tbuf_download(host, dev, bytes);
    bool ok = true;
    for (size_t i = 0; i < bytes && ok; i++) ok = host[i] == 0xFF;
    free(host);
    return ok;
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
