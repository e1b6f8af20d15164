/* compat_rnn_more.c: the RNN call patterns of compat_rnn.c for more programs (Deeplearning4j,
   NNabla, OpenVINO's NVIDIA plugin, CNTK, Theano, CuPy and Chainer, MXNet, MyCaffe, OpenCV's DNN
   module, Jittor, MindSpore, PaddlePaddle's cudnn_lstm), each as the program makes it, against the
   double reference of tests/ref/rnn.c. */
#include "desc_util.h"
#include "ref/rnn.h"
#include "rnn_harness.h"
#include "tensors.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* float results: the RNN tests' tolerance (rnn_harness.c) */
#define RNN_TOL rnn_tol_of(CUDNN_DATA_FLOAT)

/* One cudnnRNNForward in INFERENCE of a float run without a projection into fresh outputs, the
   initial states given when the case has them, ws bytes of workspace and the reserve NULL (rs
   bytes: what the query gave, none); y, hy and cy against the reference. */
static void check_v8_inference(struct rnn_run *u, size_t ws, size_t rs, const char *what)
{
    const struct rnn_case *c = u->c;
    struct fwd_out want, got;
    rnn_reference_forward(u, &want);
    const int64_t hn = (int64_t)c->layers * c->dirs * c->N, ny = u->pos * c->dirs * c->hidden;
    void *py = tbuf_alloc(sizeof(float) * (size_t)ny), *phy = tbuf_alloc(sizeof(float) * (size_t)(hn * c->hidden));
    void *pcy = tbuf_alloc(sizeof(float) * (size_t)(hn * c->hidden)), *pws = ws ? tbuf_alloc(ws) : NULL;
    if (CHECK_OK(cudnnRNNForward(test_handle(), u->d, CUDNN_FWD_MODE_INFERENCE, u->plen, u->xd, u->px, u->yd, py, u->hd,
                                 c->states ? u->phx : NULL, phy, u->cd, c->states ? u->pcx : NULL, pcy, u->wbytes,
                                 u->pw, ws, pws, rs, NULL))) {
        got.y = tvalues_download(CUDNN_DATA_FLOAT, py, ny);
        got.hy = tvalues_download(CUDNN_DATA_FLOAT, phy, hn * c->hidden);
        got.cy = tvalues_download(CUDNN_DATA_FLOAT, pcy, hn * c->hidden);
        rnn_check_forward(u, &got, &want, what);
        rnn_fwd_free(&got);
    }
    rnn_fwd_free(&want);
    tbuf_free(py), tbuf_free(phy), tbuf_free(pcy), tbuf_free(pws);
}

/* ---- Deeplearning4j (libnd4j include/ops/declarable/platform/cudnn/lstmLayer.cu) --------- */

/* libnd4j's copyWeights fills the weight space without asking where anything is ("As returned
   memory addresses using cudnnGetRNNLinLayerMatrixParams linLayerID was contiguous we will map
   directly"): per pseudo-layer its 4 H x input matrices (the op's input weights, transposed) then
   its 4 H x H recurrent ones; after every pseudo-layer's matrices, per pseudo-layer the 4 input
   biases and 4 recurrent biases of 0; whatever remains set to 0. */
static void dl4j_copy_weights(const struct rnn_run *u, float *space)
{
    const struct rnn_case *c = u->c;
    int64_t at = 0;
    memset(space, 0, u->wbytes);
    for (int q = 0; q < c->dirs; q++) {
        for (int g = 0; g < 4; g++)
            for (int64_t e = 0; e < (int64_t)c->hidden * c->input; e++)
                space[at++] = (float)u->w_ref[ref_rnn_param(&u->r, q, REF_RNN_W, g) + e];
        for (int g = 0; g < 4; g++)
            for (int64_t e = 0; e < (int64_t)c->hidden * c->hidden; e++)
                space[at++] = (float)u->w_ref[ref_rnn_param(&u->r, q, REF_RNN_R, g) + e];
    }
    for (int q = 0; q < c->dirs; q++) {
        for (int g = 0; g < 4; g++)
            for (int e = 0; e < c->hidden; e++) space[at++] = (float)u->w_ref[ref_rnn_param(&u->r, q, REF_RNN_BW, g) + e];
        at += 4 * c->hidden;
    }
}

/* libnd4j's cudnn_rnn_v8, the LSTM of its lstmLayer op (one layer; forward, or bidirectional with
   the outputs concatenated): cudnnSetRNNDescriptor_v8 with DOUBLE_BIAS, the data type as math
   precision, FMA math, projSize = hiddenSize, PADDED_IO and a dropout descriptor created but never
   set; the cell clip through the legacy cudnnRNNSetClip(handle, ...) with PROPAGATE_NAN and
   -clip .. clip; RNN data sequence-major ([sL, bS, nIn]) or batch-major ([bS, sL, nIn]) unpacked
   with a float 0 fill and the sequence lengths (all sL when the op has none) on the device too;
   the states {dirs, batch, hidden}; the weight space of cudnnGetRNNWeightSpaceSize filled by
   dl4j_copy_weights; cudnnGetRNNTempSpaceSizes, then cudnnRNNForward in INFERENCE mode with the
   reserve NULL and the size the query gave. */
TEST(compat_rnn_dl4j_weights_copied_without_the_api)
{
    static const int full[2] = {5, 5}, some[2] = {5, 3};
    static const struct { int dirs; cudnnRNNDataLayout_t layout; const int *lengths; bool states; } cases[] = {
        {2, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, full, true},
        {1, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, some, false},
        {2, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, some, true},
    };
    cudnnHandle_t h = test_handle();
    const double clip = 0.6;
    for (size_t k = 0; k < TLEN(cases); k++) {
        const struct rnn_case c = {.name = "dl4j", .mode = CUDNN_LSTM, .dirs = cases[k].dirs,
                                   .input_mode = CUDNN_LINEAR_INPUT, .bias = CUDNN_RNN_DOUBLE_BIAS,
                                   .layout = cases[k].layout, .layers = 1, .input = 4, .hidden = 3, .proj = 3, .T = 5,
                                   .N = 2, .lengths = cases[k].lengths, .dtype = CUDNN_DATA_FLOAT, .clip = true,
                                   .states = cases[k].states, .api = API_V8};
        struct rnn_run u;
        cudnnDropoutDescriptor_t drop = NULL;
        bool ok = rnn_run_init(&u, &c);
        const float zero_fill = 0;
        ok = ok && CHECK_OK(cudnnCreateDropoutDescriptor(&drop)) &&
             CHECK_OK(cudnnSetRNNDescriptor_v8(u.d, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                               c.dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                               CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH,
                                               c.input, c.hidden, c.hidden, 1, drop, CUDNN_RNN_PADDED_IO_ENABLED)) &&
             CHECK_OK(cudnnRNNSetClip(h, u.d, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -clip, clip)) &&
             CHECK_OK(cudnnSetRNNDataDescriptor(u.yd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.dirs * c.hidden,
                                                c.lengths, (void *)&zero_fill));
        u.r.lclip = -clip, u.r.rclip = clip, u.fill = 0;
        size_t wbytes = 0, ws = 0, rs = 1;
        ok = ok && CHECK_OK(cudnnGetRNNWeightSpaceSize(h, u.d, &wbytes)) && CHECK(wbytes == u.wbytes) &&
             CHECK_OK(cudnnGetRNNTempSpaceSizes(h, u.d, CUDNN_FWD_MODE_INFERENCE, u.xd, &ws, &rs));
        if (ok) {
            for (int q = 0; q < c.dirs; q++)
                for (int g = 0; g < 4; g++)
                    for (int e = 0; e < c.hidden; e++) u.w_ref[ref_rnn_param(&u.r, q, REF_RNN_BR, g) + e] = 0;
            float *space = malloc(u.wbytes);
            dl4j_copy_weights(&u, space);
            tbuf_upload(u.pw, space, u.wbytes);
            free(space);
            check_v8_inference(&u, ws, rs, "DL4J inference");
        }
        rnn_run_free(&u);
        cudnnDestroyDropoutDescriptor(drop);
    }
}

/* The op returning the last step only (retFullSeq false, retLastH / retLastC true): libnd4j passes
   y NULL (`outputActivations ? ... : nullptr`) to cudnnRNNForward in INFERENCE (cudnn_rnn_v8) and
   to the legacy cudnnRNNForwardInference (cudnn_rnn_old, the per-step descriptors {batch, width,
   1} and the states {dirs, batch, hidden}), hy and cy given, hx and cx given or NULL. libnd4j's
   network has one layer; two and three (the layers' outputs alternate in the workspace) check
   that the last layer's output finds a free place. A training forward with y NULL stays
   BAD_PARAM, nothing written. */
TEST(compat_rnn_dl4j_last_step_only_y_null)
{
    static const int full[3] = {4, 4, 4}, some[3] = {4, 3, 1};
    static const struct { int api, dirs, layers; const int *lengths; bool states; } cases[] = {
        {API_V8, 2, 1, some, true},     {API_V8, 1, 1, full, false},   {API_LEGACY, 2, 1, some, true},
        {API_LEGACY, 1, 1, full, false}, {API_V8, 1, 2, some, true},   {API_V8, 2, 3, some, false},
        {API_LEGACY, 1, 3, some, true},
    };
    for (size_t k = 0; k < TLEN(cases); k++) {
        bool legacy = cases[k].api == API_LEGACY;
        const struct rnn_case c = {.name = "dl4j last step", .mode = CUDNN_LSTM, .dirs = cases[k].dirs,
                                   .input_mode = CUDNN_LINEAR_INPUT, .bias = CUDNN_RNN_DOUBLE_BIAS,
                                   .layout = legacy ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED
                                                    : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                   .layers = cases[k].layers, .input = 3, .hidden = 4, .proj = 4, .T = 4, .N = 3,
                                   .lengths = cases[k].lengths, .dtype = CUDNN_DATA_FLOAT,
                                   .states = cases[k].states, .api = cases[k].api};
        struct rnn_run u;
        if (!rnn_run_open(&u, &c)) continue;
        struct fwd_out want, got = {0};
        rnn_reference_forward(&u, &want);
        const int64_t hn = (int64_t)c.layers * c.dirs * c.N;
        void *phy = tbuf_alloc(sizeof(float) * (size_t)(hn * c.hidden));
        void *pcy = tbuf_alloc(sizeof(float) * (size_t)(hn * c.hidden));
        if (rnn_call_forward(&u, CUDNN_FWD_MODE_INFERENCE, NULL, phy, pcy)) {
            got.hy = tvalues_download(CUDNN_DATA_FLOAT, phy, hn * c.hidden);
            got.cy = tvalues_download(CUDNN_DATA_FLOAT, pcy, hn * c.hidden);
            CHECK(rnn_compare("DL4J y NULL: hy", &c, got.hy, want.hy, hn * c.hidden, RNN_TOL));
            CHECK(rnn_compare("DL4J y NULL: cy", &c, got.cy, want.cy, hn * c.hidden, RNN_TOL));
        }
        /* training keeps the output for the backward: y is needed there */
        tbuf_poison(phy, sizeof(float) * (size_t)(hn * c.hidden));
        void *snap = tbuf_snapshot(phy, sizeof(float) * (size_t)(hn * c.hidden));
        cudnnStatus_t st = legacy ? cudnnRNNForwardTraining(test_handle(), u.d, c.T, u.xs, u.px, u.hd, u.phx, u.cd,
                                                            u.pcx, u.wd, u.pw, u.ys, NULL, u.hd, phy, u.cd, pcy,
                                                            u.pws, u.ws_bytes, u.prs, u.rs_bytes)
                                  : cudnnRNNForward(test_handle(), u.d, CUDNN_FWD_MODE_TRAINING, u.plen, u.xd, u.px,
                                                    u.yd, NULL, u.hd, u.phx, phy, u.cd, u.pcx, pcy, u.wbytes, u.pw,
                                                    u.ws_bytes, u.pws, u.rs_bytes, u.prs);
        CHECK_STATUS(st, CUDNN_STATUS_BAD_PARAM);
        tbuf_unchanged(phy, snap, sizeof(float) * (size_t)(hn * c.hidden), "hy after a refused training call");
        free(snap);
        rnn_fwd_free(&want), rnn_fwd_free(&got);
        tbuf_free(phy), tbuf_free(pcy);
        rnn_run_free(&u);
    }
}

/* ---- NNabla (sony/nnabla-ext-cuda src/nbla/cuda/cudnn/function/generic/rnn.cu, gru.cu) ------ */

/* NNabla's RNN (tanh, relu) and GRU layers run the legacy calls (cudnnSetRNNDescriptor_v6,
   per-step descriptors {batch, width, 1}, states {layers x dirs, batch, hidden}, the weights a
   {count, 1, 1} filter written at the offsets cudnnGetRNNLinLayer*Params give) with cxDesc,
   cyDesc, dcyDesc and dcxDesc **descriptors created and never set** (the cell state's, which
   these cells do not have) and their pointers NULL, in cudnnRNNForwardTraining and Inference,
   cudnnRNNBackwardData and cudnnRNNBackwardWeights (here cx NULL, the harness's dcy and dcx
   buffers given). Each pass against tests/ref/rnn.c. */
TEST(compat_rnn_nnabla_unset_cell_descriptors)
{
    static const int lengths[3] = {4, 4, 4};
    static const cudnnRNNMode_t modes[] = {CUDNN_RNN_TANH, CUDNN_RNN_RELU, CUDNN_GRU};
    for (size_t k = 0; k < TLEN(modes); k++) {
        const struct rnn_case c = {.name = "nnabla", .mode = modes[k], .dirs = k == 1 ? 1 : 2,
                                   .input_mode = CUDNN_LINEAR_INPUT, .bias = CUDNN_RNN_DOUBLE_BIAS,
                                   .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, .layers = 2, .input = 3,
                                   .hidden = 4, .proj = 4, .T = 4, .N = 3, .lengths = lengths,
                                   .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_LEGACY};
        struct rnn_run u;
        bool ok = rnn_run_init(&u, &c);
        cudnnTensorDescriptor_t set = u.cd, unset = NULL;
        if (ok && CHECK_OK(cudnnCreateTensorDescriptor(&unset))) {
            void *pcx = u.pcx;
            u.cd = unset, u.pcx = NULL; /* the backward's dcy and dcx buffers stay: these cells ignore them */
            rnn_check_run(&u);
            u.cd = set, u.pcx = pcx;
            cudnnDestroyTensorDescriptor(unset);
        }
        rnn_run_free(&u);
    }
}

/* ---- OpenVINO's NVIDIA plugin (openvino_contrib modules/nvidia_plugin/src/ops/rnn_components) -- */

/* The plugin's LSTMSequence (lstm_sequence_cudnn_components.cpp): cudnnSetRNNDescriptor_v8 with
   SINGLE_INP_BIAS, TENSOR_OP_MATH for float data, the dropout descriptor NULL, PADDED_IO for the
   unpacked layouts, RNN data descriptors with paddingFill NULL; it asserts that
   cudnnGetRNNTempSpaceSizes gives no reserve for INFERENCE and that cudnnGetRNNWeightParams
   describes each input matrix as {1, hidden, input} with strides {hidden input, input, 1}, each
   recurrent one as {1, hidden, hidden}, each input bias as {1, hidden, 1} with strides {hidden,
   1, 1}, and gives no recurrent bias (its address NULL, its descriptor left as created); then
   cudnnRNNForward in INFERENCE with the reserve NULL and 0 bytes. */
TEST(compat_rnn_openvino_single_input_bias_asserted_layout)
{
    static const int lengths[2] = {4, 3};
    const struct rnn_case c = {.name = "openvino", .mode = CUDNN_LSTM, .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_SINGLE_INP_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                               .layers = 1, .input = 5, .hidden = 3, .proj = 3, .T = 4, .N = 2, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_V8};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    bool ok = rnn_run_init(&u, &c) &&
              CHECK_OK(cudnnSetRNNDescriptor_v8(u.d, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
                                                CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                                                CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, c.input, c.hidden, c.hidden,
                                                1, NULL, CUDNN_RNN_PADDED_IO_ENABLED)) &&
              CHECK_OK(cudnnSetRNNDataDescriptor(u.xd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, lengths, NULL));
    size_t ws = 0, rs = 1;
    ok = ok && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, u.d, CUDNN_FWD_MODE_INFERENCE, u.xd, &ws, &rs)) && CHECK(rs == 0);
    for (int q = 0; ok && q < c.dirs; q++)
        for (int id = 0; ok && id < 8; id++) {
            cudnnTensorDescriptor_t md, bd;
            CHECK_OK(cudnnCreateTensorDescriptor(&md));
            CHECK_OK(cudnnCreateTensorDescriptor(&bd));
            void *ma = NULL, *ba = NULL;
            const int cols = id < 4 ? c.input : c.hidden;
            int nd = 0, dims[3], strides[3];
            cudnnDataType_t t;
            ok = CHECK_OK(cudnnGetRNNWeightParams(h, u.d, q, u.wbytes, u.pw, id, md, &ma, bd, &ba)) && CHECK(ma) &&
                 CHECK_OK(cudnnGetTensorNdDescriptor(md, 3, &t, &nd, dims, strides)) &&
                 CHECK(nd == 3 && t == CUDNN_DATA_FLOAT && dims[0] == 1 && dims[1] == c.hidden && dims[2] == cols) &&
                 CHECK(strides[0] == c.hidden * cols && strides[1] == cols && strides[2] == 1);
            if (ok && id < 4)
                ok = CHECK(ba) && CHECK_OK(cudnnGetTensorNdDescriptor(bd, 3, &t, &nd, dims, strides)) &&
                     CHECK(nd == 3 && dims[0] == 1 && dims[1] == c.hidden && dims[2] == 1) &&
                     CHECK(strides[0] == c.hidden && strides[1] == 1 && strides[2] == 1);
            else if (ok)
                ok = CHECK(ba == NULL);
            cudnnDestroyTensorDescriptor(md);
            cudnnDestroyTensorDescriptor(bd);
        }
    if (ok) check_v8_inference(&u, ws, 0, "OpenVINO's inference");
    rnn_run_free(&u);
}

/* ---- CNTK (Source/Math/CuDnnRNN.cpp, CuDnnRNN.h), Theano (theano/gpuarray/dnn_rnn_*.c) ------ */

/* CNTK's OptimizedRNNStack: per-step descriptors {sequences in the frame, width, 1} with strides
   {width, 1, 1} (the packed batch shrinking as sequences end), the weights a {count, 1, 1} filter
   from cudnnGetRNNParamsSize, the workspace and reserve sizes rounded up to whole elements; then
   cudnnRNNForwardTraining with **all four state pairs NULL** (hxDesc, hx, cxDesc, cx, hyDesc, hy,
   cyDesc, cy: `0, 0`), cudnnRNNBackwardData with the six state pairs NULL (dhy, dcy, hx, cx, dhx,
   dcx) and cudnnRNNBackwardWeights with hxDesc and hx NULL, adding into the weight gradient. Each
   against the reference with zero initial states. */
TEST(compat_rnn_cntk_legacy_every_state_null)
{
    static const int lengths[3] = {4, 3, 1};
    const struct rnn_case c = {.name = "cntk", .mode = CUDNN_LSTM, .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                               .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 4, .N = 3, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = false, .api = API_LEGACY};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    size_t ws = 0, rs = 0;
    bool ok = CHECK_OK(cudnnGetRNNWorkspaceSize(h, u.d, c.T, u.xs, &ws)) &&
              CHECK_OK(cudnnGetRNNTrainingReserveSize(h, u.d, c.T, u.xs, &rs));
    ws = (ws + 3) / 4 * 4, rs = (rs + 3) / 4 * 4;
    void *pws = tbuf_alloc(ws ? ws : 4), *prs = tbuf_alloc(rs ? rs : 4);
    struct fwd_out want;
    rnn_reference_forward(&u, &want);
    const int64_t ny = u.pos * c.dirs * c.proj, nx = u.pos * c.input;
    void *py = tbuf_alloc(sizeof(float) * (size_t)ny), *pdx = tbuf_alloc(sizeof(float) * (size_t)nx);
    double *dy = rnn_random_data(&c, c.dirs * c.proj), *base = tview_random(u.wcount, -1, 1);
    void *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, ny), *pdw = tvalues_upload(CUDNN_DATA_FLOAT, base, u.wcount);
    ok = ok && CHECK_OK(cudnnRNNForwardTraining(h, u.d, c.T, u.xs, u.px, NULL, NULL, NULL, NULL, u.wd, u.pw, u.ys, py,
                                                NULL, NULL, NULL, NULL, pws, ws, prs, rs)) &&
         tvalues_check(CUDNN_DATA_FLOAT, py, want.y, ny, RNN_TOL, "CNTK training y");
    ok = ok && CHECK_OK(cudnnRNNBackwardData(h, u.d, c.T, u.ys, py, u.ys, pdy, NULL, NULL, NULL, NULL, u.wd, u.pw, NULL,
                                             NULL, NULL, NULL, u.xs, pdx, NULL, NULL, NULL, NULL, pws, ws, prs, rs)) &&
         CHECK_OK(cudnnRNNBackwardWeights(h, u.d, c.T, u.xs, u.px, NULL, NULL, u.ys, py, pws, ws, u.wd, pdw, prs, rs));
    if (ok) rnn_check_train_backward(&u, dy, NULL, NULL, pdx, pdw, base, "CNTK");
    void *bufs[] = {pws, prs, py, pdx, pdy, pdw};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(dy), free(base);
    rnn_fwd_free(&want);
    rnn_run_free(&u);
}

/* Theano's GpuDnnRNNOp: one step descriptor {batch, width, 1} (the last two dims of the
   T x batch x width array) repeated for every step of xDesc, yDesc and dxDesc, the state
   descriptors from the state arrays, the weights a {count, 1, 1} filter; the training forward
   into its own reserve; the input gradient (dnn_rnn_gi.c) given a **copy of that reserve in
   another buffer** (gpudata_move), which it passes on with its result to the weight gradient
   (dnn_rnn_gw.c), computed into a zeroed dw. The forward's own reserve is overwritten here after
   the copy, so a reserve that kept an address would show. */
TEST(compat_rnn_theano_reserve_copied_between_passes)
{
    static const int lengths[2] = {3, 3};
    static const cudnnRNNMode_t modes[] = {CUDNN_GRU, CUDNN_LSTM};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(modes); k++) {
        const struct rnn_case c = {.name = "theano", .mode = modes[k], .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                                   .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                   .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 3, .N = 2,
                                   .lengths = lengths, .dtype = CUDNN_DATA_FLOAT, .states = true,
                                   .api = API_LEGACY};
        struct rnn_run u;
        if (!rnn_run_open(&u, &c)) return;
        cudnnTensorDescriptor_t xl[3] = {u.xs[0], u.xs[0], u.xs[0]}, yl[3] = {u.ys[0], u.ys[0], u.ys[0]};
        cudnnTensorDescriptor_t cdesc = c.mode == CUDNN_LSTM ? u.cd : NULL;
        const int64_t ny = u.pos * c.dirs * c.proj;
        size_t ws = 0, rs = 0;
        bool ok = CHECK_OK(cudnnGetRNNWorkspaceSize(h, u.d, c.T, xl, &ws)) &&
                  CHECK_OK(cudnnGetRNNTrainingReserveSize(h, u.d, c.T, xl, &rs));
        void *pws = tbuf_alloc(ws ? ws : 4), *prs = tbuf_alloc(rs ? rs : 4), *copy = tbuf_alloc(rs ? rs : 4);
        struct fwd_out want;
        rnn_reference_forward(&u, &want);
        struct rnn_train_bufs b;
        rnn_train_bufs_init(&b, &u);
        void *pcx = b.dcy ? u.pcx : NULL;
        ok = ok && CHECK_OK(cudnnRNNForwardTraining(h, u.d, c.T, xl, u.px, u.hd, u.phx, cdesc, pcx, u.wd, u.pw, yl, b.py,
                                                    u.hd, b.phy, cdesc, b.dcy ? b.pcy : NULL, pws, ws, prs, rs)) &&
             tvalues_check(CUDNN_DATA_FLOAT, b.py, want.y, ny, RNN_TOL, "Theano training y");
        if (ok && rs) {
            unsigned char *bytes = malloc(rs);
            tbuf_download(bytes, prs, rs);
            tbuf_upload(copy, bytes, rs);
            free(bytes);
            tbuf_poison(prs, rs);
        }
        ok = ok && CHECK_OK(cudnnRNNBackwardData(h, u.d, c.T, yl, b.py, yl, b.pdy, u.hd, b.pdhy, cdesc, b.pdcy, u.wd,
                                                 u.pw, u.hd, u.phx, cdesc, pcx, xl, b.pdx, u.hd, b.pdhx, cdesc,
                                                 b.dcy ? b.pdcx : NULL, pws, ws, copy, rs)) &&
             CHECK_OK(cudnnRNNBackwardWeights(h, u.d, c.T, xl, u.px, u.hd, u.phx, yl, b.py, pws, ws, u.wd, b.pdw, copy,
                                              rs));
        if (ok) rnn_check_train_backward(&u, b.dy, b.dhy, b.dcy, b.pdx, b.pdw, b.zeros, "Theano");
        rnn_train_bufs_free(&b);
        tbuf_free(pws), tbuf_free(prs), tbuf_free(copy);
        rnn_fwd_free(&want);
        rnn_run_free(&u);
    }
}

/* ---- CuPy (cupy/cuda/cudnn.pyx, cupy/cudnn.pyx: rnn_*_ex), Chainer's n_step_rnn ------------- */

/* CuPy's Ex RNN functions (Chainer's n_step_rnn and n_step_lstm over padded batches) make a
   **fresh RNN descriptor for each call** (cudnnSetRNNDescriptor_v6 on the states' dropout
   descriptor, then cudnnSetRNNPaddingMode(PADDED_IO_ENABLED)); the workspace and the reserve are
   sized by the legacy queries over T copies of one padded step descriptor {batch, input, 1}
   (_make_tensor_descriptor_array_for_padded), while the calls take sequence-major unpacked RNN data
   descriptors with the lengths and paddingFill NULL; a cell-less network passes a size-0 cx, so
   cxDesc, cx, cyDesc, cy, dcyDesc, dcy, dcxDesc and dcx are all NULL (create_tensor_nd_descriptor
   of an empty array); the weight gradient goes into a zeroed dw. y, dx (valid positions) and dw
   against the reference. */
TEST(compat_rnn_cupy_ex_fresh_descriptors_padded_sizes)
{
    static const int lengths[3] = {3, 1, 2};
    static const cudnnRNNMode_t modes[] = {CUDNN_GRU, CUDNN_LSTM};
    cudnnHandle_t h = test_handle();
    void *states = NULL;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.0f, 17, &states);
    for (size_t k = 0; k < TLEN(modes); k++) {
        const bool lstm = modes[k] == CUDNN_LSTM;
        const struct rnn_case c = {.name = "cupy", .mode = modes[k], .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                                   .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                   .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 3, .N = 3,
                                   .lengths = lengths, .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_EX};
        struct rnn_run u;
        if (!rnn_run_open(&u, &c)) break;
        cudnnRNNDescriptor_t d[3] = {NULL, NULL, NULL};
        cudnnRNNDataDescriptor_t xd, yd;
        cudnnTensorDescriptor_t padded, steps[3];
        trnn_data_descs_create(&xd, &yd, NULL, NULL);
        CHECK_OK(cudnnCreateTensorDescriptor(&padded));
        const int pdims[3] = {c.N, c.input, 1}, pstrides[3] = {c.input, 1, 1};
        bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(padded, CUDNN_DATA_FLOAT, 3, pdims, pstrides)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, lengths, NULL)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.dirs * c.hidden,
                                                     lengths, NULL));
        for (int i = 0; i < 3; i++) {
            steps[i] = padded;
            ok = ok && CHECK_OK(cudnnCreateRNNDescriptor(&d[i])) &&
                 CHECK_OK(cudnnSetRNNDescriptor_v6(h, d[i], c.hidden, c.layers, drop, CUDNN_LINEAR_INPUT,
                                                   CUDNN_BIDIRECTIONAL, modes[k], CUDNN_RNN_ALGO_STANDARD,
                                                   CUDNN_DATA_FLOAT)) &&
                 CHECK_OK(cudnnSetRNNPaddingMode(d[i], CUDNN_RNN_PADDED_IO_ENABLED));
        }
        size_t ws = 0, rs = 0;
        ok = ok && CHECK_OK(cudnnGetRNNWorkspaceSize(h, d[0], c.T, steps, &ws)) &&
             CHECK_OK(cudnnGetRNNTrainingReserveSize(h, d[0], c.T, steps, &rs));
        struct fwd_out want;
        rnn_reference_forward(&u, &want);
        struct rnn_train_bufs b;
        rnn_train_bufs_init(&b, &u);
        void *pws = tbuf_alloc(ws ? ws : 4), *prs = tbuf_alloc(rs ? rs : 4), *pcx = lstm ? u.pcx : NULL;
        cudnnTensorDescriptor_t cdesc = lstm ? u.cd : NULL;
        ok = ok && CHECK_OK(cudnnRNNForwardTrainingEx(h, d[0], xd, u.px, u.hd, u.phx, cdesc, pcx, u.wd, u.pw, yd, b.py,
                                                      u.hd, b.phy, cdesc, lstm ? b.pcy : NULL, NULL, NULL, NULL, NULL,
                                                      NULL, NULL, NULL, NULL, pws, ws, prs, rs));
        if (ok) rnn_train_y_matches(&u, &b, want.y, "CuPy training y");
        ok = ok && CHECK_OK(cudnnRNNBackwardDataEx(h, d[1], yd, b.py, yd, b.pdy, NULL, NULL, u.hd, b.pdhy, cdesc, b.pdcy,
                                                   u.wd, u.pw, u.hd, u.phx, cdesc, pcx, xd, b.pdx, u.hd, b.pdhx, cdesc,
                                                   lstm ? b.pdcx : NULL, NULL, NULL, pws, ws, prs, rs)) &&
             CHECK_OK(cudnnRNNBackwardWeightsEx(h, d[2], xd, u.px, u.hd, u.phx, yd, b.py, pws, ws, u.wd, b.pdw, prs, rs));
        if (ok) rnn_check_train_backward(&u, b.dy, b.dhy, b.dcy, b.pdx, b.pdw, b.zeros, "CuPy");
        rnn_train_bufs_free(&b);
        tbuf_free(pws), tbuf_free(prs);
        for (int i = 0; i < 3; i++) cudnnDestroyRNNDescriptor(d[i]);
        cudnnDestroyTensorDescriptor(padded);
        trnn_data_descs_destroy(xd, yd, NULL, NULL);
        rnn_fwd_free(&want);
        rnn_run_free(&u);
        if (!ok) break;
    }
    tdropout_free(drop, states);
}

/* ---- MXNet (src/operator/rnn-inl.h, the cuDNN >= 7.2 path) ------------------------------------ */

/* MXNet's RNN operator: cudnnSetRNNDescriptor_v6 on a dropout descriptor, then before every call
   **cudnnRNNSetClip whatever the cell**: CLIP_NONE with the range 0, 0 (GRU and plain RNNs, and an
   LSTM without lstm_state_clip), CLIP_MINMAX for an LSTM with a state clip, NaN propagation
   inverted from lstm_state_clip_nan; without sequence lengths the data descriptors are
   **SEQ_MAJOR_PACKED with every length T and a paddingFill pointer given**; the Ex calls with
   the attention arguments NULL and **hy and cy NULL** (no state outputs), the backward with dhy
   and dcy NULL and dhx, dcx asked for, the weight gradient into a zeroed dw. The inference call
   too. y, dx and dw against the reference (the LSTM's cell state clamped). */
TEST(compat_rnn_mxnet_clip_every_cell_packed_fill)
{
    static const int lengths[2] = {3, 3};
    static const cudnnRNNMode_t modes[] = {CUDNN_GRU, CUDNN_RNN_TANH, CUDNN_LSTM};
    cudnnHandle_t h = test_handle();
    void *states = NULL;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.0f, 5, &states);
    for (size_t k = 0; k < TLEN(modes); k++) {
        const bool lstm = modes[k] == CUDNN_LSTM;
        const struct rnn_case c = {.name = "mxnet", .mode = modes[k], .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                                   .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                   .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 3, .N = 2,
                                   .lengths = lengths, .dtype = CUDNN_DATA_FLOAT, .clip = lstm, .states = true,
                                   .api = API_EX};
        struct rnn_run u;
        if (!rnn_run_open(&u, &c)) break;
        cudnnRNNDescriptor_t d;
        cudnnRNNDataDescriptor_t xd, yd;
        trnn_data_descs_create(&xd, &yd, NULL, NULL);
        const int all_t[2] = {c.T, c.T};
        float fill = 0;
        bool ok = CHECK_OK(cudnnCreateRNNDescriptor(&d)) &&
                  CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, c.hidden, c.layers, drop, CUDNN_LINEAR_INPUT,
                                                    CUDNN_BIDIRECTIONAL, modes[k], CUDNN_RNN_ALGO_STANDARD,
                                                    CUDNN_DATA_FLOAT)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, all_t, &fill)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.dirs * c.hidden, all_t,
                                                     &fill));
        /* lstm_state_clip_nan false: CUDNN_PROPAGATE_NAN */
        ok = ok && (lstm ? CHECK_OK(cudnnRNNSetClip(h, d, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -0.4, 0.5))
                         : CHECK_OK(cudnnRNNSetClip(h, d, CUDNN_RNN_CLIP_NONE, CUDNN_PROPAGATE_NAN, 0.0, 0.0)));
        size_t ws = 0, rs = 0;
        ok = ok && CHECK_OK(cudnnGetRNNWorkspaceSize(h, d, c.T, u.xs, &ws)) &&
             CHECK_OK(cudnnGetRNNTrainingReserveSize(h, d, c.T, u.xs, &rs));
        const int64_t ny = u.pos * c.dirs * c.hidden;
        struct fwd_out want;
        rnn_reference_forward(&u, &want);
        struct rnn_train_bufs b;
        rnn_train_bufs_init(&b, &u);
        void *pws = tbuf_alloc(ws ? ws : 4), *prs = tbuf_alloc(rs ? rs : 4), *pcx = lstm ? u.pcx : NULL;
        cudnnTensorDescriptor_t cdesc = u.cd;
        ok = ok && CHECK_OK(cudnnRNNForwardInferenceEx(h, d, xd, u.px, u.hd, u.phx, cdesc, pcx, u.wd, u.pw, yd, b.py,
                                                       u.hd, NULL, cdesc, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                                       NULL, NULL, pws, ws)) &&
             tvalues_check(CUDNN_DATA_FLOAT, b.py, want.y, ny, RNN_TOL, "MXNet inference y");
        tbuf_poison(b.py, sizeof(float) * (size_t)ny);
        ok = ok && CHECK_OK(cudnnRNNSetClip(h, d, lstm ? CUDNN_RNN_CLIP_MINMAX : CUDNN_RNN_CLIP_NONE,
                                            CUDNN_PROPAGATE_NAN, lstm ? -0.4 : 0.0, lstm ? 0.5 : 0.0));
        ok = ok && CHECK_OK(cudnnRNNForwardTrainingEx(h, d, xd, u.px, u.hd, u.phx, cdesc, pcx, u.wd, u.pw, yd, b.py,
                                                      u.hd, NULL, cdesc, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                                      NULL, pws, ws, prs, rs)) &&
             tvalues_check(CUDNN_DATA_FLOAT, b.py, want.y, ny, RNN_TOL, "MXNet training y");
        ok = ok && CHECK_OK(cudnnRNNBackwardDataEx(h, d, yd, b.py, yd, b.pdy, NULL, NULL, u.hd, NULL, cdesc, NULL, u.wd,
                                                   u.pw, u.hd, u.phx, cdesc, pcx, xd, b.pdx, u.hd, b.pdhx, cdesc,
                                                   lstm ? b.pdcx : NULL, NULL, NULL, pws, ws, prs, rs)) &&
             CHECK_OK(cudnnRNNBackwardWeightsEx(h, d, xd, u.px, u.hd, u.phx, yd, b.py, pws, ws, u.wd, b.pdw, prs, rs));
        if (ok) rnn_check_train_backward(&u, b.dy, NULL, NULL, b.pdx, b.pdw, b.zeros, "MXNet");
        rnn_train_bufs_free(&b);
        tbuf_free(pws), tbuf_free(prs);
        cudnnDestroyRNNDescriptor(d);
        trnn_data_descs_destroy(xd, yd, NULL, NULL);
        rnn_fwd_free(&want);
        rnn_run_free(&u);
        if (!ok) break;
    }
    tdropout_free(drop, states);
}

/* ---- MyCaffe (MyCaffe.app CudaDnnDll rnn8.cu, rnn8Handle) ---------------------------------------- */

/* MyCaffe's RNN8: cudnnSetRNNDescriptor_v8 with **auxFlags 0 (padded IO not enabled) for an
   unpacked layout** (batch-major here) whose every sequence is T long, the data descriptors'
   paddingFill **a pointer to a double 0 whatever the data type**, the device lengths all T; the
   weights visited through cudnnGetRNNWeightParams over every pseudo-layer and every linear-layer
   id into reused tensor descriptors read back with cudnnGetTensorNdDescriptor(3); cudnnRNNForward
   (training) and the backward calls given **the buffers' whole sizes** (weight space, workspace
   and reserve larger than asked for), dhy and dcy NULL, the weight gradient zeroed and added
   (CUDNN_WGRAD_MODE_ADD). */
TEST(compat_rnn_mycaffe_v8_unpacked_without_padded_io)
{
    static const int lengths[3] = {3, 3, 3};
    static const cudnnRNNMode_t modes[] = {CUDNN_LSTM, CUDNN_GRU};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < TLEN(modes); k++) {
        const bool lstm = modes[k] == CUDNN_LSTM;
        const struct rnn_case c = {.name = "mycaffe", .mode = modes[k], .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                                   .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                                   .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 3, .N = 3,
                                   .lengths = lengths, .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_V8};
        struct rnn_run u;
        if (!rnn_run_open(&u, &c)) break;
        cudnnRNNDescriptor_t d;
        cudnnRNNDataDescriptor_t xd, yd;
        trnn_data_descs_create(&xd, &yd, NULL, NULL);
        double fill = 0; /* a double for float data */
        bool ok = CHECK_OK(cudnnCreateRNNDescriptor(&d)) &&
                  CHECK_OK(cudnnSetRNNDescriptor_v8(d, CUDNN_RNN_ALGO_STANDARD, modes[k], CUDNN_RNN_DOUBLE_BIAS,
                                                    CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                                                    CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, c.input, c.hidden, c.hidden,
                                                    c.layers, NULL, 0)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, lengths, &fill)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.dirs * c.hidden,
                                                     lengths, &fill));
        size_t wbytes = 0, ws = 0, rs = 0;
        ok = ok && CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &wbytes)) && CHECK(wbytes == u.wbytes) &&
             CHECK_OK(cudnnGetRNNTempSpaceSizes(h, d, CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs));
        /* every (pseudo-layer, id) visited as MyCaffe's InitializeWeights does */
        cudnnTensorDescriptor_t wdesc, bdesc;
        CHECK_OK(cudnnCreateTensorDescriptor(&wdesc));
        CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
        const int lin_ids = lstm ? 8 : 6;
        int64_t seen = 0;
        for (int layer = 0; layer < c.layers * c.dirs && ok; layer++)
            for (int id = 0; id < lin_ids && ok; id++) {
                void *mw = NULL, *mb = NULL;
                ok = CHECK_OK(cudnnGetRNNWeightParams(h, d, layer, wbytes, u.pw, id, wdesc, &mw, bdesc, &mb));
                void *ptrs[2] = {mw, mb};
                cudnnTensorDescriptor_t descs[2] = {wdesc, bdesc};
                for (int j = 0; j < 2 && ok; j++) {
                    if (ptrs[j] == NULL) continue;
                    cudnnDataType_t dt;
                    int nb = 0, dim[3] = {0, 0, 0}, str[3] = {0, 0, 0};
                    ok = CHECK_OK(cudnnGetTensorNdDescriptor(descs[j], 3, &dt, &nb, dim, str)) && CHECK(nb == 3) &&
                         CHECK((char *)ptrs[j] >= (char *)u.pw &&
                               (char *)ptrs[j] + sizeof(float) * (size_t)dim[0] * dim[1] * dim[2] <=
                                   (char *)u.pw + wbytes);
                    seen += (int64_t)dim[0] * dim[1] * dim[2];
                }
            }
        ok = ok && CHECK(seen * (int64_t)sizeof(float) == (int64_t)wbytes);
        const size_t extra = 1024; /* MyCaffe passes its buffers' sizes */
        void *pws = tbuf_alloc(ws + extra), *prs = tbuf_alloc(rs + extra);
        struct fwd_out want;
        rnn_reference_forward(&u, &want);
        struct rnn_train_bufs b;
        rnn_train_bufs_init(&b, &u);
        ok = ok && CHECK_OK(cudnnRNNForward(h, d, CUDNN_FWD_MODE_TRAINING, u.plen, xd, u.px, yd, b.py, u.hd, u.phx, b.phy,
                                            u.cd, u.pcx, b.pcy, wbytes, u.pw, ws + extra, pws, rs + extra, prs));
        if (ok) ok = rnn_train_y_matches(&u, &b, want.y, "MyCaffe y");
        ok = ok && CHECK_OK(cudnnRNNBackwardData_v8(h, d, u.plen, yd, b.py, b.pdy, xd, b.pdx, u.hd, u.phx, NULL, b.pdhx,
                                                    u.cd, u.pcx, NULL, b.pdcx, wbytes, u.pw, ws + extra, pws, rs + extra,
                                                    prs)) &&
             CHECK_OK(cudnnRNNBackwardWeights_v8(h, d, CUDNN_WGRAD_MODE_ADD, u.plen, xd, u.px, u.hd, u.phx, yd, b.py,
                                                 wbytes, b.pdw, ws + extra, pws, rs + extra, prs));
        if (ok) rnn_check_train_backward(&u, b.dy, NULL, NULL, b.pdx, b.pdw, b.zeros, "MyCaffe");
        rnn_train_bufs_free(&b);
        tbuf_free(pws), tbuf_free(prs);
        cudnnDestroyTensorDescriptor(wdesc);
        cudnnDestroyTensorDescriptor(bdesc);
        cudnnDestroyRNNDescriptor(d);
        trnn_data_descs_destroy(xd, yd, NULL, NULL);
        rnn_fwd_free(&want);
        rnn_run_free(&u);
        if (!ok) break;
    }
}

/* ---- OpenCV's DNN module (modules/dnn/src/cuda4dnn/csl/cudnn/recurrent.hpp) ----------------- */

/* OpenCV's LSTM layer (cuDNN 8 path): a dropout descriptor of probability 0 on its own states
   (seed 1234), cudnnSetRNNDescriptor_v6 (LINEAR_INPUT, STANDARD, one layer, the data type's
   precision), the weights a {count, 1, 1} filter whose buffer the layer fills **without the
   getters** (recurrent_layers.cpp, initCUDA): per direction the input matrices of the gates in
   cuDNN's order (ONNX's IOFC reordered to IFCO) then the recurrent ones, then per direction the
   input biases and the recurrent biases; per-step descriptors {batch, input, 1}, h0 and c0
   {dirs, batch, hidden}; cudnnGetRNNWorkspaceSize, then cudnnRNNForwardInference with **hyDesc
   and hy NULL** and cyDesc c0's descriptor, cy the second output or NULL when the graph does not
   ask for it. */
TEST(compat_rnn_opencv_lstm_without_hy)
{
    static const int lengths[2] = {3, 3};
    const struct rnn_case c = {.name = "opencv", .mode = CUDNN_LSTM, .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                               .layers = 1, .input = 3, .hidden = 4, .proj = 4, .T = 3, .N = 2, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_LEGACY};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    void *states = NULL;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.0f, 1234, &states);
    bool ok = rnn_run_init(&u, &c) &&
              CHECK_OK(cudnnSetRNNDescriptor_v6(h, u.d, c.hidden, 1, drop, CUDNN_LINEAR_INPUT, CUDNN_BIDIRECTIONAL,
                                                CUDNN_LSTM, CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    const int G = 4, H = c.hidden, I = c.input;
    double *blob = tview_fill(u.wcount, 0), *at = blob;
    for (int dir = 0; dir < c.dirs; dir++)
        for (int block = REF_RNN_W; block <= REF_RNN_R; block++) {
            const int cols = block == REF_RNN_W ? I : H;
            for (int g = 0; g < G; g++, at += H * cols)
                memcpy(at, u.w_ref + ref_rnn_param(&u.r, dir, (enum ref_rnn_block)block, g),
                       sizeof(double) * (size_t)(H * cols));
        }
    for (int dir = 0; dir < c.dirs; dir++)
        for (int block = REF_RNN_BW; block <= REF_RNN_BR; block++)
            for (int g = 0; g < G; g++, at += H)
                memcpy(at, u.w_ref + ref_rnn_param(&u.r, dir, (enum ref_rnn_block)block, g), sizeof(double) * (size_t)H);
    ok = ok && CHECK(at == blob + u.wcount);
    size_t ws = 0;
    ok = ok && CHECK_OK(cudnnGetRNNWorkspaceSize(h, u.d, c.T, u.xs, &ws));
    struct fwd_out want;
    rnn_reference_forward(&u, &want);
    const int64_t ny = u.pos * c.dirs * H, nc = (int64_t)c.dirs * c.N * H;
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, blob, u.wcount), *pws = tbuf_alloc(ws ? ws : 4);
    void *py = tbuf_alloc(sizeof(float) * (size_t)ny), *pcy = tbuf_alloc(sizeof(float) * (size_t)nc);
    for (int with_cy = 1; with_cy >= 0 && ok; with_cy--) {
        tbuf_poison(py, sizeof(float) * (size_t)ny);
        ok = CHECK_OK(cudnnRNNForwardInference(h, u.d, c.T, u.xs, u.px, u.hd, u.phx, u.cd, u.pcx, u.wd, pw, u.ys, py,
                                               NULL, NULL, u.cd, with_cy ? pcy : NULL, pws, ws)) &&
             tvalues_check(CUDNN_DATA_FLOAT, py, want.y, ny, RNN_TOL, "OpenCV y") &&
             (!with_cy || tvalues_check(CUDNN_DATA_FLOAT, pcy, want.cy, nc, RNN_TOL, "OpenCV cy"));
    }
    void *bufs[] = {pw, pws, py, pcy};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(blob);
    rnn_fwd_free(&want);
    rnn_run_free(&u);
    tdropout_free(drop, states);
}

/* ---- Jittor (python/jittor/extern/cuda/cudnn: inc/cudnn_rnn_descriptor.h, ops/cudnn_rnn_op.cc,
        ops/cudnn_rnn_backward_x_op.cc) ------------------------------------------------------ */

/* Jittor's RnnDescriptor: every op builds its own, on its own dropout descriptor: fresh states
   of cudnnDropoutGetStatesSize's size and a new seed when the dropout is above 0, then
   cudnnSetRNNDescriptor_v6 (LINEAR_INPUT, ALGO_STANDARD, FLOAT). */
static cudnnRNNDescriptor_t jittor_rnn(const struct rnn_case *c, float p, unsigned long long seed,
                                       cudnnDropoutDescriptor_t *dd, void **states)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    *dd = tdropout_make(h, p, seed, states);
    CHECK_OK(cudnnCreateRNNDescriptor(&d));
    CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, c->hidden, c->layers, *dd, CUDNN_LINEAR_INPUT,
                                      c->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, c->mode,
                                      CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    return d;
}

/* Jittor's cudnn_rnn op trains with a dropout between the layers: the forward on its own
   descriptor (dropout 0.4, seed A), its reserve a float tensor of the queried *byte* count, so
   four times the size, passed whole; the backward op then builds **another descriptor on another
   dropout descriptor** (fresh states, seed B) for cudnnRNNBackwardData and cudnnRNNBackwardWeights
   (dw zeroed first), with the forward's reserve. The backward must apply the forward's masks,
   which the reserve holds, whatever the second descriptor's states: its results equal those of
   the backward through the forward's own descriptor (held to finite differences by
   rnn_finite_differences), and the training forward did drop (its y is not the inference one). */
TEST(compat_rnn_jittor_backward_on_a_fresh_dropout_descriptor)
{
    static const int lengths[3] = {4, 4, 4};
    const struct rnn_case c = {.name = "jittor", .mode = CUDNN_LSTM, .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                               .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 4, .N = 3, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_LEGACY};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    cudnnDropoutDescriptor_t bwd_drop = NULL;
    void *bwd_states = NULL;
    bool ok = rnn_run_init(&u, &c);
    if (ok) {
        cudnnDestroyRNNDescriptor(u.d);
        u.d = jittor_rnn(&c, 0.4f, 17, &u.dd, &u.pstates);
    }
    size_t ws = 0, rs = 0;
    ok = ok && CHECK_OK(cudnnGetRNNWorkspaceSize(h, u.d, c.T, u.xs, &ws)) &&
         CHECK_OK(cudnnGetRNNTrainingReserveSize(h, u.d, c.T, u.xs, &rs));
    if (ok) rnn_run_spaces(&u, ws, rs * sizeof(float));
    const int64_t hn = (int64_t)c.layers * c.dirs * c.N, nx = u.pos * c.input, ny = u.pos * c.dirs * c.hidden;
    struct rnn_train_bufs a, b;
    rnn_train_bufs_init(&a, &u);
    rnn_train_bufs_init(&b, &u);
    struct fwd_out inference = {0};
    ok = ok && rnn_library_forward(&u, CUDNN_FWD_MODE_INFERENCE, &inference, NULL) &&
         rnn_call_forward(&u, CUDNN_FWD_MODE_TRAINING, a.py, a.phy, a.pcy);
    if (ok) {
        double *y = tvalues_download(CUDNN_DATA_FLOAT, a.py, ny);
        bool differ = false;
        for (int64_t i = 0; i < ny; i++) differ |= y[i] != inference.y[i];
        ok = CHECK(differ);
        free(y);
    }
    /* the backward through the forward's descriptor, then through Jittor's second one */
    ok = ok && rnn_call_backward(&u, a.py, a.pdy, a.pdhy, a.pdcy, a.pdx, a.pdhx, a.pdcx, a.pdw);
    if (ok) u.d_bwd = jittor_rnn(&c, 0.4f, 29, &bwd_drop, &bwd_states);
    ok = ok && rnn_call_backward(&u, a.py, a.pdy, a.pdhy, a.pdcy, b.pdx, b.pdhx, b.pdcx, b.pdw);
    const struct {
        void *want, *got;
        int64_t n;
        const char *what;
    } outs[] = {{a.pdx, b.pdx, nx, "dx"}, {a.pdhx, b.pdhx, hn * c.hidden, "dhx"},
                {a.pdcx, b.pdcx, hn * c.hidden, "dcx"}, {a.pdw, b.pdw, u.wcount, "dw"}};
    for (size_t i = 0; ok && i < TLEN(outs); i++) {
        double *want = tvalues_download(CUDNN_DATA_FLOAT, outs[i].want, outs[i].n);
        double *got = tvalues_download(CUDNN_DATA_FLOAT, outs[i].got, outs[i].n);
        ok = rnn_compare(outs[i].what, &c, got, want, outs[i].n, RNN_TOL);
        free(want), free(got);
    }
    rnn_train_bufs_free(&a), rnn_train_bufs_free(&b);
    rnn_fwd_free(&inference);
    rnn_run_free(&u);
    tdropout_free(bwd_drop, bwd_states);
}

/* ---- MindSpore (mindspore/ccsrc/backend/kernel_compiler/gpu/nn/lstm_gpu_kernel.h) ---------------- */

/* MindSpore's LSTM kernel: at Init, its dropout descriptor set with the layer's dropout but **no
   states** (NULL, 0 bytes, seed 0), cudnnSetRNNDescriptor(_v6) on it (LINEAR_INPUT,
   ALGO_STANDARD), cudnnSetRNNBiasMode(DOUBLE_BIAS), the sizes queried; at the first Launch **the
   same dropout descriptor set again, now on its states** (seed 0), then cudnnRNNForwardTraining.
   The RNN descriptor must use the states set after it: the training forward equals, bit for bit,
   the one through a descriptor whose dropout had those states (seed 0) from the start, and it
   dropped (it differs from the inference output, which matches the reference). */
TEST(compat_rnn_mindspore_dropout_states_set_after_the_rnn)
{
    static const int lengths[3] = {3, 3, 3};
    const struct rnn_case c = {.name = "mindspore", .mode = CUDNN_LSTM, .dirs = 1, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                               .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 3, .N = 3, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_LEGACY};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    cudnnDropoutDescriptor_t ref_dd = NULL;
    void *ref_states = NULL;
    bool ok = rnn_run_init(&u, &c);
    size_t ws = 0, rs = 0;
    if (ok) {
        cudnnDestroyRNNDescriptor(u.d);
        ok = CHECK_OK(cudnnCreateDropoutDescriptor(&u.dd)) &&
             CHECK_OK(cudnnSetDropoutDescriptor(u.dd, h, 0.4f, NULL, 0, 0)) && CHECK_OK(cudnnCreateRNNDescriptor(&u.d)) &&
             CHECK_OK(cudnnSetRNNDescriptor_v6(h, u.d, c.hidden, c.layers, u.dd, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL,
                                               CUDNN_LSTM, CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT)) &&
             CHECK_OK(cudnnSetRNNBiasMode(u.d, CUDNN_RNN_DOUBLE_BIAS)) &&
             CHECK_OK(cudnnGetRNNWorkspaceSize(h, u.d, c.T, u.xs, &ws)) &&
             CHECK_OK(cudnnGetRNNTrainingReserveSize(h, u.d, c.T, u.xs, &rs)) &&
             CHECK_OK(cudnnDropoutGetStatesSize(h, &u.states_bytes));
    }
    if (ok) { /* the first Launch */
        rnn_run_spaces(&u, ws, rs);
        u.pstates = tbuf_alloc(u.states_bytes);
        ok = CHECK_OK(cudnnSetDropoutDescriptor(u.dd, h, 0.4f, u.pstates, u.states_bytes, 0));
    }
    const int64_t ny = u.pos * c.hidden;
    struct rnn_train_bufs a, b;
    rnn_train_bufs_init(&a, &u);
    rnn_train_bufs_init(&b, &u);
    struct fwd_out inference = {0}, want = {0};
    ok = ok && rnn_call_forward(&u, CUDNN_FWD_MODE_TRAINING, a.py, a.phy, a.pcy) &&
         rnn_library_forward(&u, CUDNN_FWD_MODE_INFERENCE, &inference, NULL);
    if (ok) {
        rnn_reference_forward(&u, &want);
        ok = rnn_check_forward(&u, &inference, &want, "MindSpore inference");
    }
    cudnnRNNDescriptor_t own = u.d;
    if (ok) u.d = jittor_rnn(&c, 0.4f, 0, &ref_dd, &ref_states); /* its states set from the start */
    ok = ok && rnn_call_forward(&u, CUDNN_FWD_MODE_TRAINING, b.py, b.phy, b.pcy);
    if (u.d != own) cudnnDestroyRNNDescriptor(u.d), u.d = own;
    if (ok) {
        double *ya = tvalues_download(CUDNN_DATA_FLOAT, a.py, ny), *yb = tvalues_download(CUDNN_DATA_FLOAT, b.py, ny);
        bool same = true, dropped = false;
        for (int64_t i = 0; i < ny; i++) same &= ya[i] == yb[i], dropped |= ya[i] != inference.y[i];
        CHECK(same);
        CHECK(dropped);
        free(ya), free(yb);
    }
    rnn_train_bufs_free(&a), rnn_train_bufs_free(&b);
    rnn_fwd_free(&inference), rnn_fwd_free(&want);
    rnn_run_free(&u);
    tdropout_free(ref_dd, ref_states);
}

/* ---- PaddlePaddle's cudnn_lstm (paddle/phi/kernels/gpu/cudnn_lstm_kernel.cu, cudnn_lstm_utils.h) -- */

/* Paddle's ScopedRNNBase::Create (cuDNN 8 path), built anew by the forward and by the gradient
   kernel: **one {batch, input, 1} descriptor handle repeated for every step** (and one for y),
   the dropout descriptor **set on the op's state tensor the first time and
   cudnnRestoreDropoutDescriptor'd with seed 0 once the state is initialised**,
   cudnnSetRNNDescriptor_v6 (LSTM, STANDARD), **cudnnSetRNNPaddingMode(ENABLED) when sequence
   lengths are given**, the weight size from cudnnGetRNNParamsSize asserted equal to its own
   parameter count, a {count, 1, 1} filter, the workspace and reserve from the legacy
   cudnnGetRNNWorkspaceSize / TrainingReserveSize over the repeated step descriptors **also
   for the padded calls**. Without lengths the legacy cudnnRNNForwardTraining; with them
   SEQ_MAJOR_UNPACKED data descriptors (a 0 padding fill of the data's type) and
   cudnnRNNForwardTrainingEx with the eight attention arguments NULL; the gradient kernel the
   matching Backward(Data|Weights)(Ex) into a zeroed weight gradient. */
static void paddle_lstm_run(const int *lengths, bool has_lengths)
{
    const struct rnn_case c = {.name = "paddle", .mode = CUDNN_LSTM, .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                               .layers = 2, .input = 5, .hidden = 4, .proj = 4, .T = 4, .N = 3, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_V8};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    size_t states_bytes = 0;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    void *state = tbuf_alloc(states_bytes);
    struct rnn_train_bufs b;
    rnn_train_bufs_init(&b, &u);
    struct fwd_out want;
    rnn_reference_forward(&u, &want);
    bool ok = true;
    for (int pass = 0; pass < 2 && ok; pass++) { /* the forward kernel, then the gradient kernel */
        const int xd_dims[3] = {c.N, c.input, 1}, xd_str[3] = {c.input, 1, 1};
        const int yd_dims[3] = {c.N, c.dirs * c.hidden, 1}, yd_str[3] = {c.dirs * c.hidden, 1, 1};
        const int hdims[3] = {c.layers * c.dirs, c.N, c.hidden}, hstr[3] = {c.hidden * c.N, c.hidden, 1};
        cudnnTensorDescriptor_t x1, y1, hd, xs[4], ys[4];
        cudnnDropoutDescriptor_t dd;
        cudnnRNNDescriptor_t d;
        cudnnFilterDescriptor_t wd;
        cudnnRNNDataDescriptor_t xseq, yseq;
        CHECK_OK(cudnnCreateTensorDescriptor(&x1));
        CHECK_OK(cudnnCreateTensorDescriptor(&y1));
        CHECK_OK(cudnnCreateTensorDescriptor(&hd));
        CHECK_OK(cudnnCreateDropoutDescriptor(&dd));
        CHECK_OK(cudnnCreateRNNDescriptor(&d));
        CHECK_OK(cudnnCreateFilterDescriptor(&wd));
        trnn_data_descs_create(&xseq, &yseq, NULL, NULL);
        for (int t = 0; t < c.T; t++) xs[t] = x1, ys[t] = y1;
        size_t wbytes = 0, ws = 0, rs = 0;
        const float fill = 0;
        ok = CHECK_OK(cudnnSetTensorNdDescriptor(x1, CUDNN_DATA_FLOAT, 3, xd_dims, xd_str)) &&
             CHECK_OK(cudnnSetTensorNdDescriptor(y1, CUDNN_DATA_FLOAT, 3, yd_dims, yd_str)) &&
             CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, hdims, hstr)) &&
             (pass == 0 ? CHECK_OK(cudnnSetDropoutDescriptor(dd, h, 0.0f, state, states_bytes, 1234))
                        : CHECK_OK(cudnnRestoreDropoutDescriptor(dd, h, 0.0f, state, states_bytes, 0))) &&
             CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, c.hidden, c.layers, dd, CUDNN_LINEAR_INPUT, CUDNN_BIDIRECTIONAL,
                                               CUDNN_LSTM, CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT)) &&
             (!has_lengths || CHECK_OK(cudnnSetRNNPaddingMode(d, CUDNN_RNN_PADDED_IO_ENABLED))) &&
             CHECK_OK(cudnnGetRNNParamsSize(h, d, xs[0], &wbytes, CUDNN_DATA_FLOAT)) && CHECK(wbytes == u.wbytes) &&
             CHECK_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3,
                                                 (const int[]){(int)(wbytes / sizeof(float)), 1, 1})) &&
             CHECK_OK(cudnnGetRNNWorkspaceSize(h, d, c.T, xs, &ws)) &&
             CHECK_OK(cudnnGetRNNTrainingReserveSize(h, d, c.T, xs, &rs)) &&
             (!has_lengths ||
              (CHECK_OK(cudnnSetRNNDataDescriptor(xseq, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, lengths,
                                                  (void *)&fill)) &&
               CHECK_OK(cudnnSetRNNDataDescriptor(yseq, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.dirs * c.hidden,
                                                  lengths, (void *)&fill))));
        void *pws = tbuf_alloc(ws ? ws : 1);
        if (pass == 0) {
            rnn_run_spaces(&u, u.ws_bytes, rs);
            if (has_lengths)
                ok = ok && CHECK_OK(cudnnRNNForwardTrainingEx(h, d, xseq, u.px, hd, u.phx, hd, u.pcx, wd, u.pw, yseq,
                                                              b.py, hd, b.phy, hd, b.pcy, NULL, NULL, NULL, NULL, NULL,
                                                              NULL, NULL, NULL, pws, ws, u.prs, rs));
            else
                ok = ok && CHECK_OK(cudnnRNNForwardTraining(h, d, c.T, xs, u.px, hd, u.phx, hd, u.pcx, wd, u.pw, ys,
                                                            b.py, hd, b.phy, hd, b.pcy, pws, ws, u.prs, rs));
            ok = ok && rnn_train_y_matches(&u, &b, want.y, has_lengths ? "Paddle's padded y" : "Paddle's y");
        } else {
            if (has_lengths)
                ok = ok && CHECK_OK(cudnnRNNBackwardDataEx(h, d, yseq, b.py, yseq, b.pdy, NULL, NULL, hd, b.pdhy, hd,
                                                           b.pdcy, wd, u.pw, hd, u.phx, hd, u.pcx, xseq, b.pdx, hd,
                                                           b.pdhx, hd, b.pdcx, NULL, NULL, pws, ws, u.prs, rs)) &&
                     CHECK_OK(cudnnRNNBackwardWeightsEx(h, d, xseq, u.px, hd, u.phx, yseq, b.py, pws, ws, wd, b.pdw,
                                                        u.prs, rs));
            else
                ok = ok && CHECK_OK(cudnnRNNBackwardData(h, d, c.T, ys, b.py, ys, b.pdy, hd, b.pdhy, hd, b.pdcy, wd,
                                                         u.pw, hd, u.phx, hd, u.pcx, xs, b.pdx, hd, b.pdhx, hd,
                                                         b.pdcx, pws, ws, u.prs, rs)) &&
                     CHECK_OK(cudnnRNNBackwardWeights(h, d, c.T, xs, u.px, hd, u.phx, ys, b.py, pws, ws, wd, b.pdw,
                                                      u.prs, rs));
            if (ok)
                rnn_check_train_backward(&u, b.dy, b.dhy, b.dcy, b.pdx, b.pdw, b.zeros,
                                         has_lengths ? "Paddle's padded gradient" : "Paddle's gradient");
        }
        tbuf_free(pws);
        trnn_data_descs_destroy(xseq, yseq, NULL, NULL);
        cudnnDestroyFilterDescriptor(wd);
        cudnnDestroyRNNDescriptor(d);
        cudnnDestroyDropoutDescriptor(dd);
        cudnnDestroyTensorDescriptor(hd);
        cudnnDestroyTensorDescriptor(x1);
        cudnnDestroyTensorDescriptor(y1);
    }
    rnn_train_bufs_free(&b);
    rnn_fwd_free(&want);
    tbuf_free(state);
    rnn_run_free(&u);
}

TEST(compat_rnn_paddle_lstm_repeated_step_descriptor)
{
    static const int uniform[3] = {4, 4, 4}, ragged[3] = {4, 1, 3};
    paddle_lstm_run(uniform, false);
    paddle_lstm_run(ragged, true);
}
