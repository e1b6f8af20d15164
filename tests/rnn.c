/* rnn.c: tests of the RNN compute API against ref/rnn.c: cudnnRNNForward (both modes),
   cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8 and cudnnGetRNNTempSpaceSizes on every
   cell mode x direction x data layout x bias mode x input mode at small sizes, projection,
   clipping, zero and unequal sequence lengths, the padding fill and every data type; the legacy
   calls (per-step descriptor arrays) and their Ex forms, their size queries, MaxCount and Find;
   gradients also by finite differences of the forward on tiny double networks, dropout between
   layers included (its stream replayed); bad input (documented status, nothing written); the
   info log's benchmark replay string (logged where the benchmark can express the call). Each
   case runs through rnn_harness.c. */
#include "rnn_harness.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

static const int len_unpacked[] = {3, 4, 1};
static const int len_packed[] = {4, 3, 1};

/* Every mode x direction x layout x bias mode x input mode (float); LSTM alternates a
   projection, the layers alternate 1 and 2, the states alternate given and NULL. */
TEST(rnn_matches_reference)
{
    static const cudnnRNNMode_t modes[] = {CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_LSTM, CUDNN_GRU};
    static const cudnnRNNDataLayout_t layouts[] = {CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                                   CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                                   CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED};
    static const cudnnRNNBiasMode_t biases[] = {CUDNN_RNN_NO_BIAS, CUDNN_RNN_SINGLE_INP_BIAS, CUDNN_RNN_SINGLE_REC_BIAS,
                                                CUDNN_RNN_DOUBLE_BIAS};
    int k = 0;
    for (size_t m = 0; m < TLEN(modes); m++)
        for (int dirs = 1; dirs <= 2; dirs++)
            for (size_t l = 0; l < TLEN(layouts); l++)
                for (size_t b = 0; b < TLEN(biases); b++)
                    for (int skip = 0; skip < 2; skip++, k++) {
                        char name[96];
                        snprintf(name, sizeof name, "mode %d dirs %d layout %d bias %d %s", (int)modes[m], dirs,
                                 (int)layouts[l], (int)biases[b], skip ? "skip" : "linear");
                        bool proj = modes[m] == CUDNN_LSTM && k % 2;
                        struct rnn_case c = {name, modes[m], dirs, skip ? CUDNN_SKIP_INPUT : CUDNN_LINEAR_INPUT,
                                             biases[b], layouts[l], 1 + k % 2, skip ? 4 : 3, 4, proj ? 3 : 4, 4, 3,
                                             layouts[l] == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? len_packed
                                                                                                 : len_unpacked,
                                             CUDNN_DATA_FLOAT, false, k % 3 != 0, API_V8, CUDNN_RNN_ALGO_STANDARD};
                        if (!rnn_check_case(&c)) return;
                    }
}

/* Every data type, LSTM with projection and clipping, GRU with a sequence of length 0. */
TEST(rnn_types_and_edges)
{
    static const int len_zero[] = {2, 0, 5, 5};
    static const cudnnDataType_t types[] = {CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT};
    for (size_t i = 0; i < TLEN(types); i++) {
        struct rnn_case lstm = {"LSTM proj clip", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                                CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 2, 5, 6, 4, 5, 4, len_zero, types[i], true,
                                true, API_V8, CUDNN_RNN_ALGO_STANDARD};
        struct rnn_case gru = {"GRU zero length", CUDNN_GRU, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                               CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, 3, 3, 5, 5, 5, 4, len_zero, types[i],
                               false, true, API_V8, CUDNN_RNN_ALGO_STANDARD};
        if (!rnn_check_case(&lstm) || !rnn_check_case(&gru)) return;
    }
}

/* The legacy calls (per-step descriptor arrays: the packed layout) and their Ex forms (any
   layout) give what the reference gives, through the same weight layout. */
TEST(rnn_legacy_api)
{
    for (int api = API_LEGACY; api <= API_EX; api++) {
        cudnnRNNDataLayout_t layout = api == API_LEGACY ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED
                                                        : CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED;
        const int *lens = api == API_LEGACY ? len_packed : len_unpacked;
        struct rnn_case lstm = {"legacy LSTM", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS, layout, 2, 3,
                                4, 3, 4, 3, lens, CUDNN_DATA_FLOAT, false, true, api, CUDNN_RNN_ALGO_STANDARD};
        struct rnn_case gru = {"legacy GRU", CUDNN_GRU, 1, CUDNN_SKIP_INPUT, CUDNN_RNN_SINGLE_REC_BIAS, layout, 2, 4,
                               4, 4, 4, 3, lens, CUDNN_DATA_FLOAT, false, false, api, CUDNN_RNN_ALGO_STANDARD};
        if (!rnn_check_case(&lstm) || !rnn_check_case(&gru)) return;
    }
}

/* ---- gradients by finite differences ------------------------------------------------------- */

/* Dropout p between the layers: the descriptor set again with a dropout descriptor whose
   states are kept (restore_states puts them back, so that every call draws the same masks). */
static bool set_dropout(struct rnn_run *u, float p)
{
    const struct rnn_case *c = u->c;
    cudnnHandle_t h = test_handle();
    cudnnCreateDropoutDescriptor(&u->dd);
    bool ok = CHECK_OK(cudnnDropoutGetStatesSize(h, &u->states_bytes));
    u->pstates = tbuf_alloc(u->states_bytes);
    ok = ok && CHECK_OK(cudnnSetDropoutDescriptor(u->dd, h, p, u->pstates, u->states_bytes, 1234));
    ok = ok && CHECK_OK(cudnnSetRNNDescriptor_v8(
                   u->d, CUDNN_RNN_ALGO_STANDARD, c->mode, c->bias, c->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                   c->input_mode, c->dtype, rnn_math_prec(c->dtype), CUDNN_DEFAULT_MATH, c->input, c->hidden, c->proj,
                   c->layers, u->dd, rnn_unpacked(c->layout) ? CUDNN_RNN_PADDED_IO_ENABLED : 0));
    size_t ws = 0, rs = 0;
    ok = ok && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, u->d, CUDNN_FWD_MODE_TRAINING, u->xd, &ws, &rs));
    if (ok && rs > u->rs_bytes) {
        tbuf_free(u->prs);
        u->prs = tbuf_alloc(rs);
        u->rs_bytes = rs;
    }
    u->states_snap = tbuf_snapshot(u->pstates, u->states_bytes);
    return ok;
}

static void restore_states(struct rnn_run *u)
{
    if (u->pstates) tbuf_upload(u->pstates, u->states_snap, u->states_bytes);
}

/* L = sum dy y + dhy hy + dcy cy over the valid outputs, from the library's forward (training
   with dropout, its masks replayed; inference otherwise). */
static double loss(struct rnn_run *u, const double *dyr, const double *dhy, const double *dcy)
{
    const struct rnn_case *c = u->c;
    struct fwd_out o = {0};
    double s = 0;
    restore_states(u);
    if (rnn_library_forward(u, u->dd ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE, &o, NULL)) {
        double *yr = rnn_to_ref(c, o.y, c->dirs * c->proj);
        int64_t hn = (int64_t)c->layers * c->dirs * c->N;
        for (int64_t i = 0; i < (int64_t)c->T * c->N * c->dirs * c->proj; i++) s += dyr[i] * yr[i];
        for (int64_t i = 0; i < hn * c->proj; i++) s += dhy[i] * o.hy[i];
        if (c->mode == CUDNN_LSTM)
            for (int64_t i = 0; i < hn * c->hidden; i++) s += dcy[i] * o.cy[i];
        free(yr);
    }
    rnn_fwd_free(&o);
    return s;
}

/* d L / d v[i] by central differences, v uploaded to *dev after each change. */
static double central(struct rnn_run *u, double *v, int64_t n, void **dev, int64_t i, const double *dyr,
                      const double *dhy, const double *dcy)
{
    const double h = 1e-6;
    double keep = v[i], side[2];
    for (int k = 0; k < 2; k++) {
        v[i] = keep + (k ? -h : h);
        tbuf_free(*dev);
        *dev = tvalues_upload(u->c->dtype, v, n);
        side[k] = loss(u, dyr, dhy, dcy);
    }
    v[i] = keep;
    tbuf_free(*dev);
    *dev = tvalues_upload(u->c->dtype, v, n);
    return (side[0] - side[1]) / (2 * h);
}

static bool fd_close(const char *what, int64_t i, double got, double fd)
{
    if (fabs(got - fd) <= 1e-6 * fmax(1, fabs(fd))) return true;
    FAIL("%s[%lld]: gradient %.9g, finite difference %.9g", what, (long long)i, got, fd);
    return false;
}

/* The backward calls' dx, dhx, dcx and dw against central differences of the forward, on a
   two-layer bidirectional LSTM with a projection, unclipped and clipped (cy the last cell before
   the clip), and a GRU with skip input (double data). */
TEST(rnn_finite_differences)
{
    static const int lens[] = {3, 2};
    const struct rnn_case cases[] = {
        {"fd LSTM", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 2,
         3, 3, 2, 3, 2, lens, CUDNN_DATA_DOUBLE, false, true, API_V8, CUDNN_RNN_ALGO_STANDARD},
        {"fd GRU", CUDNN_GRU, 2, CUDNN_SKIP_INPUT, CUDNN_RNN_DOUBLE_BIAS, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 2, 3,
         3, 3, 3, 2, lens, CUDNN_DATA_DOUBLE, false, true, API_V8, CUDNN_RNN_ALGO_STANDARD},
        {"fd dropout", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
         CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, 3, 3, 4, 4, 3, 2, lens, CUDNN_DATA_DOUBLE, false, true, API_V8, CUDNN_RNN_ALGO_STANDARD},
        {"fd LSTM clip", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
         2, 3, 3, 2, 3, 2, lens, CUDNN_DATA_DOUBLE, true, true, API_V8, CUDNN_RNN_ALGO_STANDARD},
    };
    for (size_t ci = 0; ci < TLEN(cases); ci++) {
        const struct rnn_case *c = &cases[ci];
        struct rnn_run u;
        bool dropout = ci == 2;
        if (!rnn_run_init(&u, c) || (dropout && !set_dropout(&u, 0.4f))) {
            rnn_run_free(&u);
            return;
        }
        int64_t hn = (int64_t)c->layers * c->dirs * c->N, ny = u.pos * c->dirs * c->proj;
        double *dy = rnn_random_data(c, c->dirs * c->proj), *dyr = rnn_to_ref(c, dy, c->dirs * c->proj);
        double *dhy = tview_random(hn * c->proj, -1, 1), *dcy = tview_random(hn * c->hidden, -1, 1);
        void *pdy = tvalues_upload(c->dtype, dy, ny), *pdhy = tvalues_upload(c->dtype, dhy, hn * c->proj);
        void *pdcy = tvalues_upload(c->dtype, dcy, hn * c->hidden);
        void *py = tbuf_alloc((size_t)ny * 8), *pdx = tbuf_alloc((size_t)(u.pos * c->input) * 8);
        void *pdhx = tbuf_alloc((size_t)(hn * c->proj) * 8), *pdcx = tbuf_alloc((size_t)(hn * c->hidden) * 8);
        double *zero = tview_fill(u.wcount, 0);
        void *pdw = tvalues_upload(c->dtype, zero, u.wcount);
        restore_states(&u);
        bool ok = CHECK_OK(cudnnRNNForward(test_handle(), u.d, CUDNN_FWD_MODE_TRAINING, u.plen, u.xd, u.px, u.yd, py,
                                           u.hd, u.phx, NULL, u.cd, u.pcx, NULL, u.wbytes, u.pw, u.ws_bytes, u.pws,
                                           u.rs_bytes, u.prs)) &&
                  CHECK_OK(cudnnRNNBackwardData_v8(test_handle(), u.d, u.plen, u.yd, py, pdy, u.xd, pdx, u.hd, u.phx,
                                                   pdhy, pdhx, u.cd, u.pcx, pdcy, pdcx, u.wbytes, u.pw, u.ws_bytes,
                                                   u.pws, u.rs_bytes, u.prs)) &&
                  CHECK_OK(cudnnRNNBackwardWeights_v8(test_handle(), u.d, CUDNN_WGRAD_MODE_ADD, u.plen, u.xd, u.px,
                                                      u.hd, u.phx, u.yd, py, u.wbytes, pdw, u.ws_bytes, u.pws,
                                                      u.rs_bytes, u.prs));
        double *dx = tvalues_download(c->dtype, pdx, u.pos * c->input);
        double *dhx = tvalues_download(c->dtype, pdhx, hn * c->proj);
        double *dcx = tvalues_download(c->dtype, pdcx, hn * c->hidden);
        double *dw = tvalues_download(c->dtype, pdw, u.wcount);
        for (int64_t i = 0; ok && i < u.pos * c->input; i++)
            ok = fd_close("dx", i, dx[i], central(&u, u.x, u.pos * c->input, &u.px, i, dyr, dhy, dcy));
        for (int64_t i = 0; ok && i < hn * c->proj; i++)
            ok = fd_close("dhx", i, dhx[i], central(&u, u.hx, hn * c->proj, &u.phx, i, dyr, dhy, dcy));
        for (int64_t i = 0; ok && c->mode == CUDNN_LSTM && i < hn * c->hidden; i++)
            ok = fd_close("dcx", i, dcx[i], central(&u, u.cx, hn * c->hidden, &u.pcx, i, dyr, dhy, dcy));
        for (int64_t i = ci; ok && i < u.wcount; i += 3)
            ok = fd_close("dw", i, dw[i], central(&u, u.w_space, u.wcount, &u.pw, i, dyr, dhy, dcy));
        if (ok && dropout) {
            /* the training forward drops (inference does not) */
            struct fwd_out a = {0}, b = {0};
            restore_states(&u);
            ok = rnn_library_forward(&u, CUDNN_FWD_MODE_TRAINING, &a, NULL) &&
                 rnn_library_forward(&u, CUDNN_FWD_MODE_INFERENCE, &b, NULL);
            bool differ = false;
            for (int64_t i = 0; ok && i < ny; i++) differ |= !isnan(a.y[i]) && a.y[i] != b.y[i];
            CHECK(differ);
            rnn_fwd_free(&a), rnn_fwd_free(&b);
        }
        free(dy), free(dyr), free(dhy), free(dcy), free(zero), free(dx), free(dhx), free(dcx), free(dw);
        void *bufs[] = {pdy, pdhy, pdcy, py, pdx, pdhx, pdcx, pdw};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        rnn_run_free(&u);
        if (!ok) return;
    }
}

/* ---- bad input --------------------------------------------------------------------------------- */

/* The arguments of one call, each changed in turn. */
struct bad {
    cudnnForwardMode_t mode;
    const int *lengths;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd;
    const void *x;
    void *y;
    size_t wbytes, ws_bytes, rs_bytes;
};

static void expect_forward_rejected(struct rnn_run *u, const struct bad *b, void *py, size_t ybytes,
                                    cudnnStatus_t want, const char *what)
{
    void *snap = tbuf_snapshot(py, ybytes);
    if (!CHECK_STATUS(cudnnRNNForward(test_handle(), u->d, b->mode, b->lengths, b->xd, b->x, b->yd, b->y, b->hd, u->phx,
                                      NULL, b->cd, u->pcx, NULL, b->wbytes, u->pw, b->ws_bytes, u->pws, b->rs_bytes,
                                      u->prs),
                      want) ||
        !tbuf_unchanged(py, snap, ybytes, what))
        FAIL("case: %s", what);
    free(snap);
}

/* Documented statuses, nothing written: a wrong mode, NULL pointers, spaces too small, data
   descriptors that disagree with the network or each other, or were never set, state tensors
   of other shapes; backward: too small a reserve, addGrad SET (NOT_SUPPORTED). */
TEST(rnn_bad_input)
{
    static const int lens[] = {3, 2};
    static const int other[] = {3, 1};
    const struct rnn_case c = {"bad input", CUDNN_LSTM, 1, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                               CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 3, 4, 4, 3, 2, lens, CUDNN_DATA_FLOAT,
                               false, true, API_V8, CUDNN_RNN_ALGO_STANDARD};
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    size_t ybytes = (size_t)(u.pos * c.proj) * 4, train_ws = 0, train_rs = 0;
    void *py = tbuf_alloc(ybytes);
    CHECK_OK(cudnnGetRNNTempSpaceSizes(test_handle(), u.d, CUDNN_FWD_MODE_TRAINING, u.xd, &train_ws, &train_rs));
    const struct bad good = {CUDNN_FWD_MODE_TRAINING, u.plen, u.xd, u.yd, u.hd, u.cd, u.px, py, u.wbytes, u.ws_bytes,
                             u.rs_bytes};
    struct bad b;
    cudnnRNNDataDescriptor_t yl, yv, xt, unset;
    cudnnCreateRNNDataDescriptor(&yl), cudnnCreateRNNDataDescriptor(&yv), cudnnCreateRNNDataDescriptor(&xt);
    cudnnCreateRNNDataDescriptor(&unset);
    cudnnSetRNNDataDescriptor(yl, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.proj, other, NULL);
    cudnnSetRNNDataDescriptor(yv, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.proj + 1, lens, NULL);
    cudnnSetRNNDataDescriptor(xt, CUDNN_DATA_DOUBLE, c.layout, c.T, c.N, c.input, lens, NULL);
    cudnnTensorDescriptor_t h3 = rnn_state_desc(CUDNN_DATA_FLOAT, 1, c.N + 1, c.proj);
    cudnnTensorDescriptor_t c3 = rnn_state_desc(CUDNN_DATA_FLOAT, 1, c.N, c.hidden + 1);

    b = good, b.mode = (cudnnForwardMode_t)2;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "fwdMode 2");
    b = good, b.x = NULL;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "x NULL");
    b = good, b.wbytes = u.wbytes - 1;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "weight space too small");
    b = good, b.ws_bytes = train_ws - 1;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "workspace too small");
    b = good, b.rs_bytes = u.rs_bytes - 1;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "reserve too small");
    b = good, b.yd = yl;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "x and y lengths differ");
    b = good, b.yd = yv;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "y vector not dirs x projSize");
    b = good, b.xd = xt;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "x of another data type");
    b = good, b.xd = unset;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "x descriptor never set");
    b = good, b.hd = h3;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "hDesc of another batch");
    b = good, b.cd = c3;
    expect_forward_rejected(&u, &b, py, ybytes, CUDNN_STATUS_BAD_PARAM, "cDesc of another width");

    /* the size query */
    size_t ws = 5, rs = 5;
    CHECK_STATUS(cudnnGetRNNTempSpaceSizes(test_handle(), u.d, (cudnnForwardMode_t)2, u.xd, &ws, &rs),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNTempSpaceSizes(test_handle(), u.d, CUDNN_FWD_MODE_TRAINING, u.xd, NULL, &rs),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNTempSpaceSizes(test_handle(), u.d, CUDNN_FWD_MODE_TRAINING, u.yd, &ws, &rs),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(ws == 5 && rs == 5);

    /* backward: after a good forward */
    CHECK_OK(cudnnRNNForward(test_handle(), u.d, CUDNN_FWD_MODE_TRAINING, u.plen, u.xd, u.px, u.yd, py, u.hd, u.phx,
                             NULL, u.cd, u.pcx, NULL, u.wbytes, u.pw, u.ws_bytes, u.pws, u.rs_bytes, u.prs));
    size_t xbytes = (size_t)(u.pos * c.input) * 4, wb = u.wbytes;
    void *pdx = tbuf_alloc(xbytes), *pdw = tbuf_alloc(wb);
    void *sx = tbuf_snapshot(pdx, xbytes), *sw = tbuf_snapshot(pdw, wb);
    CHECK_STATUS(cudnnRNNBackwardData_v8(test_handle(), u.d, u.plen, u.yd, py, py, u.xd, pdx, u.hd, u.phx, NULL, NULL,
                                         u.cd, u.pcx, NULL, NULL, u.wbytes, u.pw, u.ws_bytes, u.pws, u.rs_bytes - 1,
                                         u.prs),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRNNBackwardData_v8(test_handle(), u.d, u.plen, u.yd, py, NULL, u.xd, pdx, u.hd, u.phx, NULL,
                                         NULL, u.cd, u.pcx, NULL, NULL, u.wbytes, u.pw, u.ws_bytes, u.pws, u.rs_bytes,
                                         u.prs),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRNNBackwardData_v8(test_handle(), u.d, u.plen, u.yd, py, py, u.xd, pdx, h3, u.phx, NULL, NULL,
                                         u.cd, u.pcx, NULL, NULL, u.wbytes, u.pw, u.ws_bytes, u.pws, u.rs_bytes, u.prs),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRNNBackwardWeights_v8(test_handle(), u.d, CUDNN_WGRAD_MODE_SET, u.plen, u.xd, u.px, u.hd, u.phx,
                                            u.yd, py, u.wbytes, pdw, u.ws_bytes, u.pws, u.rs_bytes, u.prs),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnRNNBackwardWeights_v8(test_handle(), u.d, CUDNN_WGRAD_MODE_ADD, u.plen, u.xd, u.px, u.hd, u.phx,
                                            u.yd, py, u.wbytes - 1, pdw, u.ws_bytes, u.pws, u.rs_bytes, u.prs),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRNNBackwardWeights_v8(test_handle(), u.d, CUDNN_WGRAD_MODE_ADD, u.plen, u.xd, u.px, u.hd, u.phx,
                                            u.yd, py, u.wbytes, pdw, u.ws_bytes, u.pws, 0, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(tbuf_unchanged(pdx, sx, xbytes, "dx") && tbuf_unchanged(pdw, sw, wb, "dw"));
    free(sx), free(sw);
    tbuf_free(pdx), tbuf_free(pdw), tbuf_free(py);
    cudnnDestroyRNNDataDescriptor(yl), cudnnDestroyRNNDataDescriptor(yv), cudnnDestroyRNNDataDescriptor(xt);
    cudnnDestroyRNNDataDescriptor(unset);
    cudnnDestroyTensorDescriptor(h3), cudnnDestroyTensorDescriptor(c3);
    rnn_run_free(&u);
}

/* The algorithm queries: one algorithm (the descriptor's), MaxCount 1; each Find runs its call
   and reports it in perfResults[0] (status, time, the legacy workspace). */
TEST(rnn_legacy_find)
{
    const struct rnn_case c = {"find", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                               CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 2, 3, 4, 4, 4, 3, len_packed, CUDNN_DATA_FLOAT,
                               false, true, API_LEGACY, CUDNN_RNN_ALGO_STANDARD};
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    cudnnHandle_t h = test_handle();
    int counts[4] = {0, 0, 0, 0};
    CHECK_OK(cudnnGetRNNForwardInferenceAlgorithmMaxCount(h, u.d, &counts[0]));
    CHECK_OK(cudnnGetRNNForwardTrainingAlgorithmMaxCount(h, u.d, &counts[1]));
    CHECK_OK(cudnnGetRNNBackwardDataAlgorithmMaxCount(h, u.d, &counts[2]));
    CHECK_OK(cudnnGetRNNBackwardWeightsAlgorithmMaxCount(h, u.d, &counts[3]));
    CHECK(counts[0] == 1 && counts[1] == 1 && counts[2] == 1 && counts[3] == 1);
    CHECK_STATUS(cudnnGetRNNForwardInferenceAlgorithmMaxCount(h, u.d, NULL), CUDNN_STATUS_BAD_PARAM);
    int64_t hn = (int64_t)c.layers * c.dirs * c.N;
    size_t ybytes = (size_t)(u.pos * c.dirs * c.proj) * 4;
    void *py = tbuf_alloc(ybytes), *pdy = tbuf_alloc(ybytes), *phy = tbuf_alloc((size_t)(hn * c.proj) * 4);
    void *pcy = tbuf_alloc((size_t)(hn * c.hidden) * 4), *pdx = tbuf_alloc((size_t)(u.pos * c.input) * 4);
    double *zero = tview_fill(u.wcount, 0), *dyv = tview_fill(u.pos * c.dirs * c.proj, 0.5);
    void *pdw = tvalues_upload(c.dtype, zero, u.wcount);
    tbuf_free(pdy);
    pdy = tvalues_upload(c.dtype, dyv, u.pos * c.dirs * c.proj);
    cudnnAlgorithmPerformance_t perf;
    CHECK_OK(cudnnCreateAlgorithmPerformance(&perf, 1));
    int got = 0;
    for (int which = 0; which < 4; which++) {
        got = 0;
        cudnnStatus_t s;
        switch (which) {
        case 0:
            s = cudnnFindRNNForwardInferenceAlgorithmEx(h, u.d, c.T, u.xs, u.px, u.hd, u.phx, u.cd, u.pcx, u.wd, u.pw,
                                                        u.ys, py, u.hd, phy, u.cd, pcy, 1.0f, 1, &got, &perf, u.pws,
                                                        u.ws_bytes);
            break;
        case 1:
            s = cudnnFindRNNForwardTrainingAlgorithmEx(h, u.d, c.T, u.xs, u.px, u.hd, u.phx, u.cd, u.pcx, u.wd, u.pw,
                                                       u.ys, py, u.hd, phy, u.cd, pcy, 1.0f, 1, &got, &perf, u.pws,
                                                       u.ws_bytes, u.prs, u.rs_bytes);
            break;
        case 2:
            s = cudnnFindRNNBackwardDataAlgorithmEx(h, u.d, c.T, u.ys, py, u.ys, pdy, u.hd, NULL, u.cd, NULL, u.wd,
                                                    u.pw, u.hd, u.phx, u.cd, u.pcx, u.xs, pdx, u.hd, NULL, u.cd, NULL,
                                                    1.0f, 1, &got, &perf, u.pws, u.ws_bytes, u.prs, u.rs_bytes);
            break;
        default:
            s = cudnnFindRNNBackwardWeightsAlgorithmEx(h, u.d, c.T, u.xs, u.px, u.hd, u.phx, u.ys, py, 1.0f, 1, &got,
                                                       &perf, u.pws, u.ws_bytes, u.wd, pdw, u.prs, u.rs_bytes);
            break;
        }
        cudnnAlgorithmDescriptor_t ad;
        cudnnStatus_t st;
        float ms = -1;
        size_t mem = 0;
        cudnnAlgorithm_t algo;
        if (!CHECK_OK(s) || !CHECK(got == 1) || !CHECK_OK(cudnnGetAlgorithmPerformance(perf, &ad, &st, &ms, &mem)) ||
            !CHECK_OK(cudnnGetAlgorithmDescriptor(ad, &algo)) ||
            !CHECK(st == CUDNN_STATUS_SUCCESS && ms >= 0 && mem == u.ws_bytes && algo.algo.RNNAlgo == CUDNN_RNN_ALGO_STANDARD))
            FAIL("Find %d", which);
    }
    got = 7;
    CHECK_STATUS(cudnnFindRNNForwardInferenceAlgorithmEx(h, u.d, c.T, u.xs, u.px, u.hd, u.phx, u.cd, u.pcx, u.wd, u.pw,
                                                         u.ys, py, u.hd, phy, u.cd, pcy, 1.0f, 0, &got, &perf, u.pws,
                                                         u.ws_bytes),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(got == 7);
    CHECK_OK(cudnnDestroyAlgorithmPerformance(&perf, 1));
    free(zero), free(dyv);
    void *bufs[] = {py, pdy, phy, pcy, pdx, pdw};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    rnn_run_free(&u);
}

#ifdef OCD_TEST_CUDA
/* A training step (forward, backward data, backward weights) captured into a CUDA graph gives
   what the same calls give directly: no call synchronises with the host (after a direct call
   of the same shape has warmed the GEMM library up, as frameworks do). */
TEST(rnn_stream_capture)
{
    if (test_backend[0] != 'c') return;
    static const int lens[] = {4, 2, 3};
    const struct rnn_case c = {"capture", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                               CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 2, 3, 4, 3, 4, 3, lens, CUDNN_DATA_FLOAT,
                               false, true, API_V8, CUDNN_RNN_ALGO_STANDARD};
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    cudnnHandle_t h = test_handle();
    int64_t ny = u.pos * c.dirs * c.proj, nx = u.pos * c.input, hn = (int64_t)c.layers * c.dirs * c.N;
    double *dyv = rnn_random_data(&c, c.dirs * c.proj), *zero = tview_fill(u.wcount, 0);
    void *pdy = tvalues_upload(c.dtype, dyv, ny), *py[2], *pdx[2], *pdw[2], *phy[2], *pcy[2];
    for (int k = 0; k < 2; k++) {
        py[k] = tbuf_alloc((size_t)ny * 4), pdx[k] = tbuf_alloc((size_t)nx * 4);
        phy[k] = tbuf_alloc((size_t)(hn * c.proj) * 4), pcy[k] = tbuf_alloc((size_t)(hn * c.hidden) * 4);
        pdw[k] = tvalues_upload(c.dtype, zero, u.wcount);
    }
    bool ok = rnn_call_forward(&u, CUDNN_FWD_MODE_TRAINING, py[0], phy[0], pcy[0]) &&
              rnn_call_backward(&u, py[0], pdy, NULL, NULL, pdx[0], NULL, NULL, pdw[0]);
    ok = ok && CHECK(cudaDeviceSynchronize() == cudaSuccess);
    cudaStream_t s = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    ok = ok && CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) && CHECK_OK(cudnnSetStream(h, s));
    if (ok && CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess)) {
        bool calls = rnn_call_forward(&u, CUDNN_FWD_MODE_TRAINING, py[1], phy[1], pcy[1]) &&
                     rnn_call_backward(&u, py[1], pdy, NULL, NULL, pdx[1], NULL, NULL, pdw[1]);
        ok = CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess) && calls &&
             CHECK(cudaGraphInstantiateWithFlags(&exec, g, 0) == cudaSuccess) &&
             CHECK(cudaGraphLaunch(exec, s) == cudaSuccess) && CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    }
    cudnnSetStream(h, NULL);
    if (ok) {
        struct { void *const *buf; int64_t n; const char *what; } outs[] = {
            {py, ny, "y"}, {phy, hn * c.proj, "hy"}, {pcy, hn * c.hidden, "cy"}, {pdx, nx, "dx"}, {pdw, u.wcount, "dw"}};
        for (size_t i = 0; ok && i < TLEN(outs); i++) {
            double *a = tvalues_download(c.dtype, outs[i].buf[0], outs[i].n);
            double *b = tvalues_download(c.dtype, outs[i].buf[1], outs[i].n);
            ok = rnn_compare(outs[i].what, &c, b, a, outs[i].n, 1e-5);
            free(a), free(b);
        }
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (g) cudaGraphDestroy(g);
    if (s) cudaStreamDestroy(s);
    free(dyv), free(zero);
    tbuf_free(pdy);
    for (int k = 0; k < 2; k++) tbuf_free(py[k]), tbuf_free(pdx[k]), tbuf_free(phy[k]), tbuf_free(pcy[k]), tbuf_free(pdw[k]);
    rnn_run_free(&u);
}
#endif

/* ---- the replay string of the info log (core/check.h) ------------------------------------------ */

/* A call the benchmark can express logs its problem string (inference pass=inf, training
   pass=fwd, either backward call pass=bwd; the legacy calls alike); ragged lengths or a
   projection log none. */
TEST(rnn_replay_log)
{
    struct replay_capture r;
    replay_capture_start(&r, "rnn");
    static const int len_full[] = {3, 3};
    struct rnn_case v8 = {"replay v8", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                          CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 3, 4, 4, 3, 2, len_full, CUDNN_DATA_FLOAT,
                          false, true, API_V8, CUDNN_RNN_ALGO_STANDARD};
    struct rnn_case legacy = v8;
    legacy.name = "replay legacy", legacy.mode = CUDNN_GRU, legacy.dirs = 1, legacy.api = API_LEGACY;
    legacy.layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
    struct rnn_case ragged = v8, proj = v8;
    ragged.name = "replay ragged", ragged.T = 4, ragged.N = 3, ragged.lengths = len_unpacked;
    proj.name = "replay projection", proj.proj = 3;
    bool ok = rnn_check_case(&v8);
    /* inference, training, backward data and weights, each logged once */
    CHECK(r.count == 4);
    static const char lstm[] = "--problem \"op=rnn cell=lstm algo=standard dt=f32 t=3 n=2 input=3 hidden=4 layers=1 "
                               "dirs=2 pass=";
    static const char *const v8_calls[][2] = {{"cudnnRNNForward", "inf"},
                                              {"cudnnRNNForward", "fwd"},
                                              {"cudnnRNNBackwardData_v8", "bwd"},
                                              {"cudnnRNNBackwardWeights_v8", "bwd"}};
    for (int i = 0; i < 4; i++) {
        char want[256];
        snprintf(want, sizeof want, "%s%s wscale=1\"", lstm, v8_calls[i][1]);
        if (!CHECK(replay_logged(&r, v8_calls[i][0], want))) FAIL("%s: %s", v8_calls[i][0], r.lines);
    }
    replay_capture_clear(&r);
    ok = ok && rnn_check_case(&legacy);
    CHECK(r.count == 4);
    static const char gru[] = "\"op=rnn cell=gru algo=standard dt=f32 t=3 n=2 input=3 hidden=4 layers=1 dirs=1 pass=";
    static const char *const legacy_calls[][2] = {{"cudnnRNNForwardInference", "inf"},
                                                  {"cudnnRNNForwardTraining", "fwd"},
                                                  {"cudnnRNNBackwardData", "bwd"},
                                                  {"cudnnRNNBackwardWeights", "bwd"}};
    for (int i = 0; i < 4; i++) {
        char want[256];
        snprintf(want, sizeof want, "%s%s wscale=1\"", gru, legacy_calls[i][1]);
        if (!CHECK(replay_logged(&r, legacy_calls[i][0], want))) FAIL("%s: %s", legacy_calls[i][0], r.lines);
    }
    replay_capture_clear(&r);
    ok = ok && rnn_check_case(&ragged) && rnn_check_case(&proj);
    if (!CHECK(r.count == 0)) FAIL("%s", r.last);
    CHECK(ok);
    replay_capture_stop(&r);
}
