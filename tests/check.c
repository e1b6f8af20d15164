/* check.c: OPENCUDNN_CHECK, the built-in second opinion (src/core/check.h), on every backend
   (activation, softmax, pooling, batch norm, convolution in every direction, dropout, the GEMMs
   inside an LSTM and a multi-head attention call, and as whole calls the RNN forward and
   backward, the multi-head attention forward and backward, dropout in training included, and
   the CTC loss)
   present: each checked call logs its verdict (info: agreement; warning: a mismatch with the
   benchmark's replay string); OPENCUDNN_TEST_BREAK, which perturbs the output of the entry it
   names, must be caught; OPENCUDNN_CHECK=0.25 checks one call in four; the user's results stay
   those of the first run. */
#include "desc_util.h"
#include "test.h"

#include "core/platform.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct verdicts {
    const char *only;  /* when set, the verdicts on first-run entries whose name holds it, no other */
    int agree, differ;
    char entry[64];    /* the first run's entry, from the first agreement */
    char differs[768]; /* the last mismatch line */
};

static void capture(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    struct verdicts *v = udata;
    (void)dbg;
    const char *at = strstr(msg, "OPENCUDNN_CHECK: ");
    if (at == NULL) return;
    /* "OPENCUDNN_CHECK: <op>: <entry> agrees with ..." (or "differs from") */
    const char *name = strstr(at + 17, ": ");
    if (name == NULL) return;
    name += 2;
    char entry[64];
    snprintf(entry, sizeof entry, "%.*s", (int)strcspn(name, " "), name);
    if (v->only != NULL && strstr(entry, v->only) == NULL) return;
    if (strstr(at, " agrees with ") != NULL) {
        v->agree++;
        if (v->entry[0] == '\0') snprintf(v->entry, sizeof v->entry, "%s", entry);
    } else if (sev == CUDNN_SEV_WARNING && strstr(at, " differs from ") != NULL) {
        v->differ++;
        snprintf(v->differs, sizeof v->differs, "%s", at);
    }
}

enum { CN = 2, CC = 3, CH = 5, CW = 5, CP = 3 };
#define C_ELEMS ((size_t)CN * CC * CH * CW)
#define P_ELEMS ((size_t)CN * CC * CP * CP)

struct calls {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t x_desc, p_desc;
    cudnnActivationDescriptor_t act;
    cudnnPoolingDescriptor_t pool;
    void *x, *dy, *y, *dx, *py, *pdy;
};

static void calls_init(struct calls *c)
{
    c->h = test_handle();
    cudnnCreateTensorDescriptor(&c->x_desc);
    cudnnCreateTensorDescriptor(&c->p_desc);
    cudnnCreateActivationDescriptor(&c->act);
    cudnnCreatePoolingDescriptor(&c->pool);
    CHECK_OK(cudnnSetTensor4dDescriptor(c->x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, CN, CC, CH, CW));
    CHECK_OK(cudnnSetTensor4dDescriptor(c->p_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, CN, CC, CP, CP));
    CHECK_OK(cudnnSetActivationDescriptor(c->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    CHECK_OK(cudnnSetPooling2dDescriptor(c->pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 2, 2));
    float host[C_ELEMS];
    for (size_t i = 0; i < C_ELEMS; i++) host[i] = (float)trand_uniform(-1, 1);
    c->x = tbuf_from(host, sizeof host);
    for (size_t i = 0; i < C_ELEMS; i++) host[i] = (float)trand_uniform(-1, 1);
    c->dy = tbuf_from(host, sizeof host);
    c->pdy = tbuf_from(host, P_ELEMS * sizeof(float));
    c->y = tbuf_alloc(C_ELEMS * sizeof(float));
    c->dx = tbuf_alloc(C_ELEMS * sizeof(float));
    c->py = tbuf_alloc(P_ELEMS * sizeof(float));
}

static void calls_destroy(struct calls *c)
{
    void *bufs[] = {c->x, c->dy, c->y, c->dx, c->py, c->pdy};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    cudnnDestroyTensorDescriptor(c->x_desc);
    cudnnDestroyTensorDescriptor(c->p_desc);
    cudnnDestroyActivationDescriptor(c->act);
    cudnnDestroyPoolingDescriptor(c->pool);
}

static const float one = 1, zero = 0;

static void activation_forward(struct calls *c)
{
    CHECK_OK(cudnnActivationForward(c->h, c->act, &one, c->x_desc, c->x, &zero, c->x_desc, c->y));
}

/* Every op that takes part, forward and backward: 6 calls. */
static void all_calls(struct calls *c)
{
    activation_forward(c);
    CHECK_OK(cudnnActivationBackward(c->h, c->act, &one, c->x_desc, c->y, c->x_desc, c->dy, c->x_desc, c->x, &zero,
                                     c->x_desc, c->dx));
    CHECK_OK(cudnnSoftmaxForward(c->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, c->x_desc, c->x,
                                 &zero, c->x_desc, c->y));
    CHECK_OK(cudnnSoftmaxBackward(c->h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, c->x_desc, c->y,
                                  c->x_desc, c->dy, &zero, c->x_desc, c->dx));
    CHECK_OK(cudnnPoolingForward(c->h, c->pool, &one, c->x_desc, c->x, &zero, c->p_desc, c->py));
    CHECK_OK(cudnnPoolingBackward(c->h, c->pool, &one, c->p_desc, c->py, c->p_desc, c->pdy, c->x_desc, c->x, &zero,
                                  c->x_desc, c->dx));
}

TEST(check_second_opinion)
{
    struct verdicts v = {0};
    struct log_hook hook;
    log_hook_install(&hook, CUDNN_SEV_INFO_EN | CUDNN_SEV_WARNING_EN, &v, capture);
    struct calls c = {0};
    calls_init(&c);

    /* off: no verdicts */
    ocd_unsetenv("OPENCUDNN_CHECK");
    all_calls(&c);
    CHECK(v.agree == 0 && v.differ == 0);

    /* every call: every op agrees with the host */
    ocd_setenv("OPENCUDNN_CHECK", "1");
    all_calls(&c);
    CHECK(v.agree == 6);
    if (!CHECK(v.differ == 0)) FAIL("%s", v.differs);

    /* a broken entry is caught, the replay string names the call */
    v = (struct verdicts){0};
    activation_forward(&c);
    CHECK(v.entry[0] != '\0');
    ocd_setenv("OPENCUDNN_TEST_BREAK", v.entry);
    activation_forward(&c);
    ocd_unsetenv("OPENCUDNN_TEST_BREAK");
    CHECK(v.differ == 1);
    CHECK(strstr(v.differs, "differs from host:") != NULL);
    if (!CHECK(strstr(v.differs, "replay: op=actfwd mode=relu dt=f32 x=2x3x5x5") != NULL)) FAIL("%s", v.differs);
    /* the user sees the first run's result: the perturbed one */
    float y0 = 0, x0 = 0;
    tbuf_download(&y0, c.y, sizeof y0);
    tbuf_download(&x0, c.x, sizeof x0);
    CHECK(y0 == (x0 > 0 ? x0 : 0) + 1);

    /* a quarter of the calls (evenly spaced: 2 of any 8 in a row) */
    ocd_setenv("OPENCUDNN_CHECK", "0.25");
    v = (struct verdicts){0};
    for (int i = 0; i < 8; i++) activation_forward(&c);
    CHECK(v.agree == 2);

    ocd_unsetenv("OPENCUDNN_CHECK");
    calls_destroy(&c);
    log_hook_restore(&hook);
}

/* Convolution, every direction, through its own table: agreement, then a broken entry caught. */
TEST(check_convolution)
{
    struct verdicts v = {0};
    struct log_hook hook;
    log_hook_install(&hook, CUDNN_SEV_INFO_EN | CUDNN_SEV_WARNING_EN, &v, capture);
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnCreateTensorDescriptor(&xd);
    cudnnCreateTensorDescriptor(&yd);
    cudnnCreateFilterDescriptor(&wd);
    cudnnCreateConvolutionDescriptor(&cd);
    CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 6, 6));
    CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 6, 6));
    CHECK_OK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
    CHECK_OK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    float host[2 * 4 * 6 * 6];
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) host[i] = (float)trand_uniform(-1, 1);
    void *x = tbuf_from(host, 2 * 3 * 6 * 6 * sizeof(float)), *w = tbuf_from(host, 4 * 3 * 3 * 3 * sizeof(float));
    void *dy = tbuf_from(host, sizeof host), *y = tbuf_alloc(sizeof host), *dx = tbuf_alloc(2 * 3 * 6 * 6 * sizeof(float));
    void *dw = tbuf_alloc(4 * 3 * 3 * 3 * sizeof(float));
    size_t ws_bytes = 0, b = 0;
    cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &b);
    ws_bytes = b > ws_bytes ? b : ws_bytes;
    cudnnGetConvolutionBackwardDataWorkspaceSize(h, wd, yd, cd, xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, &b);
    ws_bytes = b > ws_bytes ? b : ws_bytes;
    cudnnGetConvolutionBackwardFilterWorkspaceSize(h, xd, yd, cd, wd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &b);
    ws_bytes = b > ws_bytes ? b : ws_bytes;
    void *ws = tbuf_alloc(ws_bytes ? ws_bytes : 1);

    ocd_setenv("OPENCUDNN_CHECK", "1");
    for (int round = 0; round < 2; round++) {
        CHECK_OK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, ws,
                                         ws_bytes, &zero, yd, y));
        if (round == 1) break;
        CHECK_OK(cudnnConvolutionBackwardData(h, &one, wd, w, yd, dy, cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, ws,
                                              ws_bytes, &zero, xd, dx));
        CHECK_OK(cudnnConvolutionBackwardFilter(h, &one, xd, x, yd, dy, cd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, ws,
                                                ws_bytes, &zero, wd, dw));
        CHECK(v.agree == 3);
        if (!CHECK(v.differ == 0)) FAIL("%s", v.differs);
        ocd_setenv("OPENCUDNN_TEST_BREAK", v.entry); /* the forward's entry */
    }
    ocd_unsetenv("OPENCUDNN_TEST_BREAK");
    ocd_unsetenv("OPENCUDNN_CHECK");
    CHECK(v.differ == 1);
    if (!CHECK(strstr(v.differs, "replay: op=convfwd dt=f32 layout=nchw n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=1 stride=1 "
                                 "dil=1 algo=implicit_gemm math=default") != NULL))
        FAIL("%s", v.differs);

    void *bufs[] = {x, w, dy, y, dx, dw, ws};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    log_hook_restore(&hook);
}

/* Batch norm, training forward (running averages read and written) and backward. */
TEST(check_batchnorm)
{
    struct verdicts v = {0};
    struct log_hook hook;
    log_hook_install(&hook, CUDNN_SEV_INFO_EN | CUDNN_SEV_WARNING_EN, &v, capture);
    struct calls c = {0};
    calls_init(&c);
    cudnnTensorDescriptor_t bn;
    cudnnCreateTensorDescriptor(&bn);
    CHECK_OK(cudnnDeriveBNTensorDescriptor(bn, c.x_desc, CUDNN_BATCHNORM_SPATIAL));
    float params[CC];
    for (int i = 0; i < CC; i++) params[i] = (float)trand_uniform(0.5, 1.5);
    void *scale = tbuf_from(params, sizeof params), *bias = tbuf_from(params, sizeof params);
    void *mean = tbuf_from(params, sizeof params), *var = tbuf_from(params, sizeof params);
    void *stats = tbuf_alloc(4 * sizeof params);
    char *s = stats;
    ocd_setenv("OPENCUDNN_CHECK", "1");
    CHECK_OK(cudnnBatchNormalizationForwardTraining(c.h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, c.x_desc, c.x,
                                                    c.x_desc, c.y, bn, scale, bias, 0.25, mean, var, 1e-5, s,
                                                    s + sizeof params));
    CHECK_OK(cudnnBatchNormalizationBackward(c.h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, c.x_desc, c.x,
                                             c.x_desc, c.dy, c.x_desc, c.dx, bn, scale, s + 2 * sizeof params,
                                             s + 3 * sizeof params, 1e-5, s, s + sizeof params));
    ocd_unsetenv("OPENCUDNN_CHECK");
    CHECK(v.agree == 2);
    if (!CHECK(v.differ == 0)) FAIL("%s", v.differs);
    void *bufs[] = {scale, bias, mean, var, stats};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    cudnnDestroyTensorDescriptor(bn);
    calls_destroy(&c);
    log_hook_restore(&hook);
}

/* The float LSTM of the adv checks: `layers` layers of width V (input, hidden and projection)
   over T steps of B sequences of lengths len, dropout dd between the layers (NULL: none); x and y
   padded sequence-major, the states 3-D. */
static void lstm_descriptors(int T, int B, int V, int layers, const int *len, cudnnDropoutDescriptor_t dd,
                             cudnnRNNDescriptor_t *d, cudnnRNNDataDescriptor_t *xd, cudnnTensorDescriptor_t *hd)
{
    const int hdims[3] = {layers, B, V}, hstrides[3] = {B * V, V, 1};
    cudnnCreateRNNDescriptor(d);
    cudnnCreateRNNDataDescriptor(xd);
    cudnnCreateTensorDescriptor(hd);
    CHECK_OK(cudnnSetTensorNdDescriptor(*hd, CUDNN_DATA_FLOAT, 3, hdims, hstrides));
    CHECK_OK(cudnnSetRNNDescriptor_v8(*d, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                      CUDNN_DEFAULT_MATH, V, V, V, layers, dd, CUDNN_RNN_PADDED_IO_ENABLED));
    CHECK_OK(cudnnSetRNNDataDescriptor(*xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B, V, len,
                                       NULL));
}

static void lstm_descriptors_destroy(cudnnRNNDescriptor_t d, cudnnRNNDataDescriptor_t xd, cudnnTensorDescriptor_t hd)
{
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyRNNDescriptor(d);
}

/* An LSTM forward (inference) and a multi-head attention forward: their GEMMs take part (the
   projections, the gates); a broken GEMM entry is caught inside either call. */
static void rnn_forward(cudnnHandle_t h, void *const buf[4])
{
    enum { T = 3, B = 2, V = 4 };
    static const int len[B] = {T, T - 1};
    cudnnRNNDescriptor_t d;
    cudnnRNNDataDescriptor_t xd;
    cudnnTensorDescriptor_t hd;
    lstm_descriptors(T, B, V, 1, len, NULL, &d, &xd, &hd);
    size_t wbytes = 0, ws = 0, rs = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &wbytes));
    CHECK_OK(cudnnGetRNNTempSpaceSizes(h, d, CUDNN_FWD_MODE_INFERENCE, xd, &ws, &rs));
    if (CHECK(wbytes <= 4096 && ws <= 4096)) {
        void *lengths = tbuf_from(len, sizeof len);
        CHECK_OK(cudnnRNNForward(h, d, CUDNN_FWD_MODE_INFERENCE, lengths, xd, buf[0], xd, buf[1], hd, NULL, NULL, hd,
                                 NULL, NULL, wbytes, buf[2], ws, buf[3], 0, NULL));
        tbuf_free(lengths);
    }
    lstm_descriptors_destroy(d, xd, hd);
}

static void attention_forward(cudnnHandle_t h, void *const buf[4])
{
    enum { T = 3, B = 2, V = 4 };
    static const int len[B] = {T, T - 1}, lo[T] = {0, 0, 0}, hi[T] = {T, T, T};
    static const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                               CUDNN_SEQDATA_VECT_DIM};
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = T, dims[CUDNN_SEQDATA_BATCH_DIM] = B, dims[CUDNN_SEQDATA_BEAM_DIM] = 1,
    dims[CUDNN_SEQDATA_VECT_DIM] = V;
    cudnnAttnDescriptor_t d;
    cudnnSeqDataDescriptor_t sd;
    cudnnCreateAttnDescriptor(&d);
    cudnnCreateSeqDataDescriptor(&sd);
    CHECK_OK(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, dims, axes, B, len, NULL));
    CHECK_OK(cudnnSetAttnDescriptor(d, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_DISABLE_PROJ_BIASES, 2, 0.5,
                                    CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, NULL, NULL, V, V, V, 2, 2,
                                    2, V, T, T, B, 1));
    size_t wbytes = 0, ws = 0, rs = 0;
    CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, d, &wbytes, &ws, &rs));
    if (CHECK(wbytes <= 4096 && ws <= 4096)) {
        void *lengths = tbuf_from(len, sizeof len);
        CHECK_OK(cudnnMultiHeadAttnForward(h, d, -1, lo, hi, lengths, lengths, sd, buf[0], NULL, sd, buf[0], sd,
                                           buf[0], sd, buf[1], wbytes, buf[2], ws, buf[3], 0, NULL));
        tbuf_free(lengths);
    }
    cudnnDestroySeqDataDescriptor(sd);
    cudnnDestroyAttnDescriptor(d);
}

TEST(check_rnn_attention)
{
    cudnnHandle_t h = test_handle();
    float host[1024];
    for (size_t i = 0; i < 1024; i++) host[i] = (float)trand_uniform(-0.5, 0.5);
    /* x, y, weights, workspace: 4 KiB each, more than either call needs (checked) */
    void *const buf[4] = {tbuf_from(host, sizeof host), tbuf_alloc(sizeof host), tbuf_from(host, sizeof host),
                          tbuf_alloc(sizeof host)};
    void (*const calls[2])(cudnnHandle_t, void *const[4]) = {rnn_forward, attention_forward};
    for (int c = 0; c < 2; c++) {
        struct verdicts v = {0};
        struct log_hook hook;
        log_hook_install(&hook, CUDNN_SEV_INFO_EN | CUDNN_SEV_WARNING_EN, &v, capture);
        ocd_setenv("OPENCUDNN_CHECK", "1");
        calls[c](h, buf);
        CHECK(v.agree > 0);
        if (!CHECK(v.differ == 0)) FAIL("%s", v.differs);
        ocd_setenv("OPENCUDNN_TEST_BREAK", v.entry); /* the entry of the first GEMM */
        calls[c](h, buf);
        ocd_unsetenv("OPENCUDNN_TEST_BREAK");
        ocd_unsetenv("OPENCUDNN_CHECK");
        if (!CHECK(v.differ > 0)) FAIL("%s: a broken %s went unnoticed", c ? "attention" : "RNN", v.entry);
        log_hook_restore(&hook);
    }
    for (int i = 0; i < 4; i++) tbuf_free(buf[i]);
}

/* ---- the adv library: RNN and multi-head attention, forward and backward; CTC loss ------------- */

/* The passes an adv call runs: inference, a training forward, or a training forward then both
   backward calls (BackwardWeights adding to a starting gradient); DROPOUT: those of a two-layer
   network with dropout between the layers, or of attention with both dropouts (the forward's
   masks from the dropout states, the backward's from the reserve); SHARED_STATES: attention's
   two dropout descriptors on one states buffer. */
enum { INFER, TRAIN, BACKWARD, DROPOUT, SHARED_STATES };

/* An LSTM shaped as the benchmark's (every sequence full, states given and returned). */
static void rnn_call(cudnnHandle_t h, int pass)
{
    enum { T = 3, B = 2, V = 4 };
    static const int len[B] = {T, T};
    const int L = pass == DROPOUT ? 2 : 1;
    cudnnRNNDescriptor_t d;
    cudnnRNNDataDescriptor_t xd;
    cudnnTensorDescriptor_t hd;
    void *states = NULL;
    cudnnDropoutDescriptor_t dd = pass == DROPOUT ? tdropout_make(h, 0.3f, 1234, &states) : NULL;
    lstm_descriptors(T, B, V, L, len, dd, &d, &xd, &hd);
    bool training = pass != INFER;
    cudnnForwardMode_t mode = training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
    size_t wbytes = 0, ws = 0, rs = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &wbytes));
    CHECK_OK(cudnnGetRNNTempSpaceSizes(h, d, mode, xd, &ws, &rs));
    float host[T * B * V];
    for (int i = 0; i < T * B * V; i++) host[i] = (float)trand_uniform(-0.5, 0.5);
    float *wh = malloc(wbytes);
    for (size_t i = 0; wh != NULL && i < wbytes / sizeof(float); i++) wh[i] = (float)trand_uniform(-0.5, 0.5);
    void *x = tbuf_from(host, sizeof host), *y = tbuf_alloc(sizeof host), *w = tbuf_from(wh, wbytes);
    const size_t sbytes = (size_t)L * B * V * sizeof(float); /* a state tensor: within host */
    void *hx = tbuf_from(host, sbytes), *cx = tbuf_from(host + B * V, sbytes);
    void *hy = tbuf_alloc(sbytes), *cy = tbuf_alloc(sbytes);
    void *wsp = tbuf_alloc(ws ? ws : 1), *rsp = tbuf_alloc(rs ? rs : 1), *lengths = tbuf_from(len, sizeof len);
    CHECK_OK(cudnnRNNForward(h, d, mode, lengths, xd, x, xd, y, hd, hx, hy, hd, cx, cy, wbytes, w, ws, wsp,
                             training ? rs : 0, training ? rsp : NULL));
    void *dx = tbuf_alloc(sizeof host), *dhx = tbuf_alloc(sbytes), *dcx = tbuf_alloc(sbytes);
    void *dw = tbuf_from(wh, wbytes);
    if (pass >= BACKWARD) {
        /* dy = x, dhy = hx, dcy = cx: any values serve */
        CHECK_OK(cudnnRNNBackwardData_v8(h, d, lengths, xd, y, x, xd, dx, hd, hx, hx, dhx, hd, cx, cx, dcx, wbytes, w,
                                         ws, wsp, rs, rsp));
        CHECK_OK(cudnnRNNBackwardWeights_v8(h, d, CUDNN_WGRAD_MODE_ADD, lengths, xd, x, hd, hx, xd, y, wbytes, dw, ws,
                                            wsp, rs, rsp));
    }
    void *bufs[] = {x, y, w, hx, cx, hy, cy, wsp, rsp, lengths, dx, dhx, dcx, dw};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    free(wh);
    tdropout_free(dd, states);
    lstm_descriptors_destroy(d, xd, hd);
}

/* A multi-head attention shaped as the benchmark's (projections with biases, full lengths and
   windows, [batch, time, beam, vect]); DROPOUT, SHARED_STATES: with dropout on the attention
   weights and after the output projection. */
static void mha_call(cudnnHandle_t h, int pass)
{
    enum { T = 3, B = 2, W = 8, H = 2 };
    static const int len[B] = {T, T}, lo[T] = {0, 0, 0}, hi[T] = {T, T, T};
    static const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                               CUDNN_SEQDATA_VECT_DIM};
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = T, dims[CUDNN_SEQDATA_BATCH_DIM] = B, dims[CUDNN_SEQDATA_BEAM_DIM] = 1,
    dims[CUDNN_SEQDATA_VECT_DIM] = W;
    cudnnAttnDescriptor_t d;
    cudnnSeqDataDescriptor_t sd;
    void *states[2] = {NULL, NULL};
    cudnnDropoutDescriptor_t attn_drop = pass >= DROPOUT ? tdropout_make(h, 0.25f, 1234, &states[0]) : NULL;
    cudnnDropoutDescriptor_t post_drop = pass == DROPOUT ? tdropout_make(h, 0.25f, 1234, &states[1]) : NULL;
    if (pass == SHARED_STATES) {
        size_t bytes = 0;
        CHECK_OK(cudnnDropoutGetStatesSize(h, &bytes));
        cudnnCreateDropoutDescriptor(&post_drop);
        CHECK_OK(cudnnRestoreDropoutDescriptor(post_drop, h, 0.25f, states[0], bytes, 1234));
    }
    cudnnCreateAttnDescriptor(&d);
    cudnnCreateSeqDataDescriptor(&sd);
    CHECK_OK(cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, dims, axes, B, len, NULL));
    CHECK_OK(cudnnSetAttnDescriptor(d, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES, H, 0.5,
                                    CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, attn_drop, post_drop, W,
                                    W, W, W / H, W / H, W / H, W, T, T, B, 1));
    size_t wbytes = 0, ws = 0, rs = 0;
    CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, d, &wbytes, &ws, &rs));
    float host[T * B * W];
    for (int i = 0; i < T * B * W; i++) host[i] = (float)trand_uniform(-0.5, 0.5);
    float *wh = malloc(wbytes);
    for (size_t i = 0; wh != NULL && i < wbytes / sizeof(float); i++) wh[i] = (float)trand_uniform(-0.5, 0.5);
    void *q = tbuf_from(host, sizeof host), *out = tbuf_alloc(sizeof host), *w = tbuf_from(wh, wbytes);
    void *wsp = tbuf_alloc(ws ? ws : 1), *rsp = tbuf_alloc(rs ? rs : 1), *lengths = tbuf_from(len, sizeof len);
    bool training = pass != INFER;
    CHECK_OK(cudnnMultiHeadAttnForward(h, d, -1, lo, hi, lengths, lengths, sd, q, NULL, sd, q, sd, q, sd, out, wbytes,
                                       w, ws, wsp, training ? rs : 0, training ? rsp : NULL));
    void *dq = tbuf_alloc(sizeof host), *dk = tbuf_alloc(sizeof host), *dv = tbuf_alloc(sizeof host);
    void *dw = tbuf_from(wh, wbytes);
    if (pass >= BACKWARD) {
        /* dout = q: any values serve */
        CHECK_OK(cudnnMultiHeadAttnBackwardData(h, d, lo, hi, lengths, lengths, sd, q, sd, dq, q, sd, dk, q, sd, dv, q,
                                                wbytes, w, ws, wsp, rs, rsp));
        CHECK_OK(cudnnMultiHeadAttnBackwardWeights(h, d, CUDNN_WGRAD_MODE_ADD, sd, q, sd, q, sd, q, sd, q, wbytes, w,
                                                   dw, ws, wsp, rs, rsp));
    }
    void *bufs[] = {q, out, w, wsp, rsp, lengths, dq, dk, dv, dw};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    free(wh);
    tdropout_free(attn_drop, states[0]);
    if (pass == SHARED_STATES)
        cudnnDestroyDropoutDescriptor(post_drop);
    else
        tdropout_free(post_drop, states[1]);
    cudnnDestroySeqDataDescriptor(sd);
    cudnnDestroyAttnDescriptor(d);
}

/* A CTC loss shaped as the benchmark's: cudnnCTCLoss (host labels), or cudnnCTCLoss_v8. */
static void ctc_call(cudnnHandle_t h, int v8)
{
    enum { T = 8, N = 2, A = 5 };
    static const int labels[] = {1, 2, 3, 4, 4}, label_len[N] = {3, 2}, input_len[N] = {T, T};
    static const int pdims[3] = {T, N, A}, pstrides[3] = {N * A, A, 1};
    cudnnTensorDescriptor_t pd;
    cudnnCTCLossDescriptor_t cd;
    cudnnCreateTensorDescriptor(&pd);
    cudnnCreateCTCLossDescriptor(&cd);
    CHECK_OK(cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, pdims, pstrides));
    if (v8)
        CHECK_OK(cudnnSetCTCLossDescriptor_v8(cd, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                              CUDNN_PROPAGATE_NAN, 3));
    else
        CHECK_OK(cudnnSetCTCLossDescriptorEx(cd, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                             CUDNN_PROPAGATE_NAN));
    size_t ws = 0;
    if (v8)
        CHECK_OK(cudnnGetCTCLossWorkspaceSize_v8(h, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, pd, pd, &ws));
    else
        CHECK_OK(cudnnGetCTCLossWorkspaceSize(h, pd, pd, labels, label_len, input_len,
                                              CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, &ws));
    float host[T * N * A];
    for (int i = 0; i < T * N * A; i++) host[i] = (float)trand_uniform(-1, 1);
    void *probs = tbuf_from(host, sizeof host), *grads = tbuf_alloc(sizeof host), *costs = tbuf_alloc(N * sizeof(float));
    void *wsp = tbuf_alloc(ws ? ws : 1);
    if (v8) {
        void *dl = tbuf_from(labels, sizeof labels), *dll = tbuf_from(label_len, sizeof label_len);
        void *dil = tbuf_from(input_len, sizeof input_len);
        CHECK_OK(cudnnCTCLoss_v8(h, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, pd, probs, dl, dll, dil, costs, pd, grads,
                                 ws, wsp));
        tbuf_free(dl), tbuf_free(dll), tbuf_free(dil);
    } else {
        CHECK_OK(cudnnCTCLoss(h, pd, probs, labels, label_len, input_len, costs, pd, grads,
                              CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, wsp, ws));
    }
    void *bufs[] = {probs, grads, costs, wsp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    cudnnDestroyTensorDescriptor(pd);
    cudnnDestroyCTCLossDescriptor(cd);
}

/* Each call agrees with the host (its own verdict, besides those of its GEMMs); a broken first
   run is caught, and the mismatch line carries the benchmark's replay string. */
TEST(check_adv_calls)
{
    static const struct {
        void (*call)(cudnnHandle_t, int);
        int pass; /* INFER ... SHARED_STATES; the CTC loss: 1 for cudnnCTCLoss_v8 */
        const char *entry; /* the first run's entry, without the backend */
        const char *replay;
    } cases[] = {
        {rnn_call, INFER, "rnn_forward",
         "op=rnn cell=lstm algo=standard dt=f32 t=3 n=2 input=4 hidden=4 layers=1 dirs=1 pass=inf wscale=1"},
        {rnn_call, TRAIN, "rnn_forward",
         "op=rnn cell=lstm algo=standard dt=f32 t=3 n=2 input=4 hidden=4 layers=1 dirs=1 pass=fwd wscale=1"},
        {rnn_call, BACKWARD, "rnn_backward_data",
         "op=rnn cell=lstm algo=standard dt=f32 t=3 n=2 input=4 hidden=4 layers=1 dirs=1 pass=bwd wscale=1"},
        {rnn_call, BACKWARD, "rnn_backward_weights",
         "op=rnn cell=lstm algo=standard dt=f32 t=3 n=2 input=4 hidden=4 layers=1 dirs=1 pass=bwd wscale=1"},
        {rnn_call, DROPOUT, "rnn_forward", "(no benchmark form)"},
        {rnn_call, DROPOUT, "rnn_backward_data", "(no benchmark form)"},
        {rnn_call, DROPOUT, "rnn_backward_weights", "(no benchmark form)"},
        {mha_call, INFER, "mha_forward", "op=mha dir=fwd dt=f32 b=2 heads=2 width=8 seq=3 proj=1"},
        {mha_call, TRAIN, "mha_forward", "op=mha dir=fwd dt=f32 b=2 heads=2 width=8 seq=3 proj=1"},
        {mha_call, BACKWARD, "mha_backward_data", "op=mha dir=bwd dt=f32 b=2 heads=2 width=8 seq=3 proj=1"},
        {mha_call, BACKWARD, "mha_backward_weights", "op=mha dir=bwd dt=f32 b=2 heads=2 width=8 seq=3 proj=1"},
        {mha_call, DROPOUT, "mha_forward", "(no benchmark form)"},
        {mha_call, SHARED_STATES, "mha_forward", "(no benchmark form)"},
        {mha_call, DROPOUT, "mha_backward_data", "(no benchmark form)"},
        {mha_call, DROPOUT, "mha_backward_weights", "(no benchmark form)"},
        {ctc_call, 0, "ctc", "op=ctc api=host dt=f32 t=8 n=2 a=5 labels=3"},
        {ctc_call, 1, "ctc", "op=ctc api=v8 dt=f32 t=8 n=2 a=5 labels=3"},
    };
    cudnnHandle_t h = test_handle();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct verdicts v = {.only = cases[i].entry};
        struct log_hook hook;
        log_hook_install(&hook, CUDNN_SEV_INFO_EN | CUDNN_SEV_WARNING_EN, &v, capture);
        ocd_setenv("OPENCUDNN_CHECK", "1");
        cases[i].call(h, cases[i].pass);
        if (!CHECK(v.agree == 1 && v.differ == 0))
            FAIL("%s: %d agreements, %d mismatches: %s", cases[i].replay, v.agree, v.differ, v.differs);
        if (!CHECK(strncmp(v.entry, test_backend, strlen(test_backend)) == 0)) FAIL("%s", v.entry);
        ocd_setenv("OPENCUDNN_TEST_BREAK", v.entry);
        cases[i].call(h, cases[i].pass);
        ocd_unsetenv("OPENCUDNN_TEST_BREAK");
        ocd_unsetenv("OPENCUDNN_CHECK");
        if (!CHECK(v.differ == 1)) FAIL("%s: a broken %s went unnoticed", cases[i].replay, v.entry);
        char want[256];
        snprintf(want, sizeof want, "replay: %s", cases[i].replay);
        if (!CHECK(strstr(v.differs, want) != NULL)) FAIL("%s", v.differs);
        log_hook_restore(&hook);
    }
}

/* ---- dropout: the masks come from the states, which the host run copies ------------------------- */

enum { DROP_N = 2 * 3 * 5 * 7 }; /* a partial Philox block and a partial mask word */
enum { DROP_FORWARD, DROP_IN_PLACE, DROP_BACKWARD };

struct drop {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t xd;
    cudnnDropoutDescriptor_t dd;
    void *states, *x, *y, *dx, *rs;
    size_t rs_bytes;
};

static void drop_init(struct drop *d)
{
    d->h = test_handle();
    d->dd = tdropout_make(d->h, 0.4f, 1234, &d->states);
    cudnnCreateTensorDescriptor(&d->xd);
    CHECK_OK(cudnnSetTensor4dDescriptor(d->xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 5, 7));
    CHECK_OK(cudnnDropoutGetReserveSpaceSize(d->xd, &d->rs_bytes));
    float host[DROP_N];
    for (int i = 0; i < DROP_N; i++) host[i] = (float)trand_uniform(-1, 1);
    d->x = tbuf_from(host, sizeof host);
    d->y = tbuf_alloc(sizeof host);
    d->dx = tbuf_alloc(sizeof host);
    d->rs = tbuf_alloc(d->rs_bytes);
}

static void drop_destroy(struct drop *d)
{
    void *bufs[] = {d->x, d->y, d->dx, d->rs};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    cudnnDestroyTensorDescriptor(d->xd);
    tdropout_free(d->dd, d->states);
}

static void drop_call(struct drop *d, int kind)
{
    if (kind == DROP_BACKWARD)
        CHECK_OK(cudnnDropoutBackward(d->h, d->dd, d->xd, d->y, d->xd, d->dx, d->rs, d->rs_bytes));
    else
        CHECK_OK(cudnnDropoutForward(d->h, d->dd, d->xd, d->x, d->xd, kind == DROP_IN_PLACE ? d->x : d->y, d->rs,
                                     d->rs_bytes));
}

/* Forward (the host run draws the first run's masks from a copy of the states), in place, and
   backward: each agrees, a broken first run is caught; the user's outputs and states are the
   first run's alone (the states advanced once a call). */
TEST(check_dropout)
{
    struct drop d;
    drop_init(&d);
    for (int kind = DROP_FORWARD; kind <= DROP_BACKWARD; kind++) {
        struct verdicts v = {0};
        struct log_hook hook;
        log_hook_install(&hook, CUDNN_SEV_INFO_EN | CUDNN_SEV_WARNING_EN, &v, capture);
        ocd_setenv("OPENCUDNN_CHECK", "1");
        drop_call(&d, kind);
        if (!CHECK(v.agree == 1 && v.differ == 0)) FAIL("call %d: %d agreements: %s", kind, v.agree, v.differs);
        ocd_setenv("OPENCUDNN_TEST_BREAK", v.entry);
        drop_call(&d, kind);
        ocd_unsetenv("OPENCUDNN_TEST_BREAK");
        ocd_unsetenv("OPENCUDNN_CHECK");
        if (!CHECK(v.differ == 1)) FAIL("call %d: a broken %s went unnoticed", kind, v.entry);
        CHECK(strstr(v.differs, "replay: (no benchmark form)") != NULL);
        log_hook_restore(&hook);
    }
    size_t bytes = 0;
    CHECK_OK(cudnnDropoutGetStatesSize(d.h, &bytes));
    unsigned char y[2][DROP_N * sizeof(float)], states[2][64], mask[2][64];
    if (CHECK(bytes <= sizeof states[0] && d.rs_bytes <= sizeof mask[0]))
        for (int checked = 0; checked < 2; checked++) {
            if (checked) ocd_setenv("OPENCUDNN_CHECK", "1");
            CHECK_OK(cudnnSetDropoutDescriptor(d.dd, d.h, 0.4f, d.states, bytes, 99));
            drop_call(&d, DROP_FORWARD);
            drop_call(&d, DROP_FORWARD);
            ocd_unsetenv("OPENCUDNN_CHECK");
            tbuf_download(y[checked], d.y, sizeof y[0]);
            tbuf_download(states[checked], d.states, bytes);
            tbuf_download(mask[checked], d.rs, d.rs_bytes);
        }
    CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0);
    CHECK(memcmp(states[0], states[1], bytes) == 0);
    CHECK(memcmp(mask[0], mask[1], d.rs_bytes) == 0);
    drop_destroy(&d);
}

/* ---- the reserve is the same on every backend ---------------------------------------------------- */

/* The second opinion on a backward call copies the forward's reserve to the host run, which is
   sound only when the reserve's layout and contents do not depend on the backend that wrote it.
   Here the forward runs on the backend under test and on a host handle; each reserve then feeds
   the backward calls on the backend under test, which must give the same gradients (and the
   space queries the same sizes) either way. On the host pass both are host runs; the CUDA pass
   feeds a host-written reserve to the CUDA kernels (the check itself, check_adv_calls, feeds a
   CUDA-written one to the host). */

/* A buffer on the backend under test, or (host) in host memory for the host handle. */
static void *side_from(bool host, const void *src, size_t bytes)
{
    if (!host) return src ? tbuf_from(src, bytes) : tbuf_alloc(bytes ? bytes : 1);
    void *p = calloc(1, bytes ? bytes : 1);
    if (p != NULL && src != NULL) memcpy(p, src, bytes);
    return p;
}

static void side_free(bool host, void *p)
{
    if (host) free(p);
    else tbuf_free(p);
}

static cudnnHandle_t host_handle(void)
{
    cudnnHandle_t h = NULL;
    ocd_setenv("OPENCUDNN_BACKEND", "host");
    CHECK_OK(cudnnCreate(&h));
    ocd_setenv("OPENCUDNN_BACKEND", test_backend);
    return h;
}

enum { RT = 3, RB = 2, RV = 4, RS = RB * RV };

struct rnn_net {
    cudnnRNNDescriptor_t d;
    cudnnRNNDataDescriptor_t xd;
    cudnnTensorDescriptor_t hd;
    size_t wbytes, ws, rs;
    float x[RT * RB * RV], hx[RS], cx[RS], *w;
};

static const int rnn_len[RB] = {RT, RT - 1};

static void rnn_net_init(cudnnHandle_t h, struct rnn_net *n)
{
    lstm_descriptors(RT, RB, RV, 1, rnn_len, NULL, &n->d, &n->xd, &n->hd);
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, n->d, &n->wbytes));
    CHECK_OK(cudnnGetRNNTempSpaceSizes(h, n->d, CUDNN_FWD_MODE_TRAINING, n->xd, &n->ws, &n->rs));
    for (int i = 0; i < RT * RB * RV; i++) n->x[i] = (float)trand_uniform(-0.5, 0.5);
    for (int i = 0; i < RS; i++) n->hx[i] = (float)trand_uniform(-0.5, 0.5), n->cx[i] = (float)trand_uniform(-0.5, 0.5);
    n->w = malloc(n->wbytes);
    for (size_t i = 0; n->w != NULL && i < n->wbytes / sizeof(float); i++) n->w[i] = (float)trand_uniform(-0.5, 0.5);
}

static void rnn_net_destroy(struct rnn_net *n)
{
    free(n->w);
    lstm_descriptors_destroy(n->d, n->xd, n->hd);
}

/* The reserve a training forward on h (host memory when host) leaves, into rs (host memory). */
static void rnn_reserve(cudnnHandle_t h, bool host, const struct rnn_net *n, void *rs)
{
    void *x = side_from(host, n->x, sizeof n->x), *y = side_from(host, NULL, sizeof n->x);
    void *hx = side_from(host, n->hx, sizeof n->hx), *cx = side_from(host, n->cx, sizeof n->cx);
    void *w = side_from(host, n->w, n->wbytes), *len = side_from(host, rnn_len, sizeof rnn_len);
    void *ws = side_from(host, NULL, n->ws), *r = side_from(host, NULL, n->rs);
    CHECK_OK(cudnnRNNForward(h, n->d, CUDNN_FWD_MODE_TRAINING, len, n->xd, x, n->xd, y, n->hd, hx, NULL, n->hd, cx,
                             NULL, n->wbytes, w, n->ws, ws, n->rs, r));
    if (host) memcpy(rs, r, n->rs);
    else tbuf_download(rs, r, n->rs);
    void *bufs[] = {x, y, hx, cx, w, len, ws, r};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) side_free(host, bufs[i]);
}

/* The backward calls on the backend under test from reserve rs (host memory): dx, dhx, dcx and
   dw (added to the weights as a starting gradient) into g. */
static void rnn_gradients(const struct rnn_net *n, const void *rs, float *g)
{
    void *x = tbuf_from(n->x, sizeof n->x), *y = tbuf_alloc(sizeof n->x), *r = tbuf_from(rs, n->rs);
    void *hx = tbuf_from(n->hx, sizeof n->hx), *cx = tbuf_from(n->cx, sizeof n->cx), *w = tbuf_from(n->w, n->wbytes);
    void *len = tbuf_from(rnn_len, sizeof rnn_len), *ws = tbuf_alloc(n->ws), *dw = tbuf_from(n->w, n->wbytes);
    void *dx = tbuf_alloc(sizeof n->x), *dhx = tbuf_alloc(sizeof n->hx), *dcx = tbuf_alloc(sizeof n->cx);
    cudnnHandle_t h = test_handle();
    /* dy = x, dhy = hx, dcy = cx: any values serve; y is not read */
    CHECK_OK(cudnnRNNBackwardData_v8(h, n->d, len, n->xd, y, x, n->xd, dx, n->hd, hx, hx, dhx, n->hd, cx, cx, dcx,
                                     n->wbytes, w, n->ws, ws, n->rs, r));
    CHECK_OK(cudnnRNNBackwardWeights_v8(h, n->d, CUDNN_WGRAD_MODE_ADD, len, n->xd, x, n->hd, hx, n->xd, y, n->wbytes,
                                        dw, n->ws, ws, n->rs, r));
    tbuf_download(g, dx, sizeof n->x);
    tbuf_download(g + RT * RB * RV, dhx, sizeof n->hx);
    tbuf_download(g + RT * RB * RV + RS, dcx, sizeof n->cx);
    tbuf_download(g + RT * RB * RV + 2 * RS, dw, n->wbytes);
    void *bufs[] = {x, y, r, hx, cx, w, len, ws, dw, dx, dhx, dcx};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
}

/* Largest |a - b| / max(1, |b|) over n values of type t. */
static double largest_difference(cudnnDataType_t t, const void *a, const void *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double x = tload(t, a, (int64_t)i), y = tload(t, b, (int64_t)i);
        double d = fabs(x - y) / fmax(1.0, fabs(y));
        if (!(d <= worst)) worst = d; /* NaN counts as the worst */
    }
    return worst;
}

TEST(check_reserve_portable_rnn)
{
    cudnnHandle_t host = host_handle();
    struct rnn_net n;
    rnn_net_init(test_handle(), &n);
    size_t ws = 0, rs = 0;
    CHECK_OK(cudnnGetRNNTempSpaceSizes(host, n.d, CUDNN_FWD_MODE_TRAINING, n.xd, &ws, &rs));
    CHECK(ws == n.ws && rs == n.rs);
    size_t count = RT * RB * RV + 2 * RS + n.wbytes / sizeof(float);
    void *rs_own = malloc(n.rs), *rs_host = malloc(n.rs);
    float *g_own = malloc(count * sizeof(float)), *g_host = malloc(count * sizeof(float));
    if (CHECK(n.w && rs_own && rs_host && g_own && g_host)) {
        rnn_reserve(test_handle(), false, &n, rs_own);
        rnn_reserve(host, true, &n, rs_host);
        rnn_gradients(&n, rs_own, g_own);
        rnn_gradients(&n, rs_host, g_host);
        double d = largest_difference(CUDNN_DATA_FLOAT, g_host, g_own, count);
        if (!CHECK(d <= 1e-4)) FAIL("gradients from a host-written reserve differ by %.3g", d);
    }
    free(rs_own), free(rs_host), free(g_own), free(g_host);
    rnn_net_destroy(&n);
    cudnnDestroy(host);
}

enum { AT = 3, AB = 2 };

/* Self-attention (q = k = v) of width W in H heads, projections with biases: float with heads of
   4 (the row kernels on CUDA), half with one head of 64 (the fused flash kernels on CUDA, whose
   reserve holds the log-sum-exp their forward computed). */
struct mha_net {
    cudnnAttnDescriptor_t d;
    cudnnSeqDataDescriptor_t sd;
    cudnnDataType_t t;
    size_t qbytes, wbytes, ws, rs;
    void *q, *w; /* host values */
};

static const int mha_len[AB] = {AT, AT - 1}, mha_lo[AT] = {0, 0, 0}, mha_hi[AT] = {AT, AT, AT};

static void *random_values(cudnnDataType_t t, size_t bytes)
{
    size_t e = t == CUDNN_DATA_FLOAT ? 4 : 2;
    void *v = malloc(bytes ? bytes : 1);
    for (size_t i = 0; v != NULL && i < bytes / e; i++) tstore(t, v, (int64_t)i, trand_uniform(-0.5, 0.5));
    return v;
}

static void mha_net_init(cudnnHandle_t h, struct mha_net *n, cudnnDataType_t t, int W, int H)
{
    static const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                               CUDNN_SEQDATA_VECT_DIM};
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = AT, dims[CUDNN_SEQDATA_BATCH_DIM] = AB, dims[CUDNN_SEQDATA_BEAM_DIM] = 1,
    dims[CUDNN_SEQDATA_VECT_DIM] = W;
    n->t = t;
    cudnnCreateAttnDescriptor(&n->d);
    cudnnCreateSeqDataDescriptor(&n->sd);
    CHECK_OK(cudnnSetSeqDataDescriptor(n->sd, t, 4, dims, axes, AB, mha_len, NULL));
    /* float under FMA math: the host's and the GPU's forwards then agree to float rounding, so
       that the gradients compare tightly (DEFAULT math would run the GPU's products on TF32) */
    CHECK_OK(cudnnSetAttnDescriptor(n->d, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES, H,
                                    1 / sqrt(W / H), t, CUDNN_DATA_FLOAT,
                                    t == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH, NULL, NULL, W, W,
                                    W, W / H, W / H, W / H, W, AT, AT, AB, 1));
    CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, n->d, &n->wbytes, &n->ws, &n->rs));
    n->qbytes = (size_t)AT * AB * W * (t == CUDNN_DATA_FLOAT ? 4 : 2);
    n->q = random_values(t, n->qbytes);
    n->w = random_values(t, n->wbytes);
}

static void mha_net_destroy(struct mha_net *n)
{
    free(n->q);
    free(n->w);
    cudnnDestroySeqDataDescriptor(n->sd);
    cudnnDestroyAttnDescriptor(n->d);
}

/* The reserve a training forward on h leaves, into rs (host memory). */
static void mha_reserve(cudnnHandle_t h, bool host, const struct mha_net *n, void *rs)
{
    void *q = side_from(host, n->q, n->qbytes), *out = side_from(host, NULL, n->qbytes);
    void *w = side_from(host, n->w, n->wbytes), *len = side_from(host, mha_len, sizeof mha_len);
    void *ws = side_from(host, NULL, n->ws), *r = side_from(host, NULL, n->rs);
    CHECK_OK(cudnnMultiHeadAttnForward(h, n->d, -1, mha_lo, mha_hi, len, len, n->sd, q, NULL, n->sd, q, n->sd, q, n->sd,
                                       out, n->wbytes, w, n->ws, ws, n->rs, r));
    if (host) memcpy(rs, r, n->rs);
    else tbuf_download(rs, r, n->rs);
    void *bufs[] = {q, out, w, len, ws, r};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) side_free(host, bufs[i]);
}

/* The backward calls on the backend under test from reserve rs: dq, dk, dv and dweights (added
   to the weights as a starting gradient) into g (3 qbytes + wbytes). */
static void mha_gradients(const struct mha_net *n, const void *rs, unsigned char *g)
{
    void *q = tbuf_from(n->q, n->qbytes), *w = tbuf_from(n->w, n->wbytes), *dw = tbuf_from(n->w, n->wbytes);
    void *len = tbuf_from(mha_len, sizeof mha_len), *ws = tbuf_alloc(n->ws), *r = tbuf_from(rs, n->rs);
    void *dq = tbuf_alloc(n->qbytes), *dk = tbuf_alloc(n->qbytes), *dv = tbuf_alloc(n->qbytes);
    cudnnHandle_t h = test_handle();
    /* dout = q: any values serve */
    CHECK_OK(cudnnMultiHeadAttnBackwardData(h, n->d, mha_lo, mha_hi, len, len, n->sd, q, n->sd, dq, q, n->sd, dk, q,
                                            n->sd, dv, q, n->wbytes, w, n->ws, ws, n->rs, r));
    CHECK_OK(cudnnMultiHeadAttnBackwardWeights(h, n->d, CUDNN_WGRAD_MODE_ADD, n->sd, q, n->sd, q, n->sd, q, n->sd, q,
                                               n->wbytes, w, dw, n->ws, ws, n->rs, r));
    tbuf_download(g, dq, n->qbytes);
    tbuf_download(g + n->qbytes, dk, n->qbytes);
    tbuf_download(g + 2 * n->qbytes, dv, n->qbytes);
    tbuf_download(g + 3 * n->qbytes, dw, n->wbytes);
    void *bufs[] = {q, w, dw, len, ws, r, dq, dk, dv};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
}

TEST(check_reserve_portable_mha)
{
    static const struct {
        cudnnDataType_t t;
        int W, H;
    } cases[] = {{CUDNN_DATA_FLOAT, 8, 2}, {CUDNN_DATA_HALF, 64, 1}};
    cudnnHandle_t host = host_handle();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct mha_net n;
        mha_net_init(test_handle(), &n, cases[c].t, cases[c].W, cases[c].H);
        size_t wbytes = 0, ws = 0, rs = 0;
        CHECK_OK(cudnnGetMultiHeadAttnBuffers(host, n.d, &wbytes, &ws, &rs));
        CHECK(wbytes == n.wbytes && ws == n.ws && rs == n.rs);
        size_t bytes = 3 * n.qbytes + n.wbytes, e = n.t == CUDNN_DATA_FLOAT ? 4 : 2;
        void *rs_own = malloc(n.rs), *rs_host = malloc(n.rs);
        unsigned char *g_own = malloc(bytes), *g_host = malloc(bytes);
        if (CHECK(n.q && n.w && rs_own && rs_host && g_own && g_host)) {
            mha_reserve(test_handle(), false, &n, rs_own);
            mha_reserve(host, true, &n, rs_host);
            mha_gradients(&n, rs_own, g_own);
            mha_gradients(&n, rs_host, g_host);
            double worst = largest_difference(n.t, g_host, g_own, bytes / e);
            double tol = n.t == CUDNN_DATA_FLOAT ? 1e-4 : 2 * ttolerance(n.t);
            if (!CHECK(worst <= tol))
                FAIL("%s: gradients from a host-written reserve differ by %.3g", c ? "half" : "float", worst);
        }
        free(rs_own), free(rs_host), free(g_own), free(g_host);
        mha_net_destroy(&n);
    }
    cudnnDestroy(host);
}
