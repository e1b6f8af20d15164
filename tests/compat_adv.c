/* compat_adv.c: call patterns of real programs (docs/compatibility.md) for the RNN, attention
   and CTC calls that the ops' own tests do not make, each as the program makes it, its result
   against the double references of tests/ref/. */
#include "ref/attention.h"
#include "ref/ctc.h"
#include "ref/rnn.h"
#include "tensors.h"
#include "test.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- TensorFlow's RNN (tensorflow/stream_executor/cuda/cuda_dnn.cc) ------------------------ */

/* TensorFlow sets the network with cudnnSetRNNDescriptor_v8 (projSize = hiddenSize when there is
   no projection, FMA math for float, PADDED_IO, and a dropout descriptor created but never set
   when the dropout is 0), reads it back through the legacy getters (cudnnGetRNNDescriptor_v6,
   cudnnGetRNNProjectionLayers), learns each parameter region's offset from the legacy
   cudnnGetRNNParamsSize / cudnnGetRNNLinLayerMatrixParams / BiasParams with w = NULL, an xDesc
   {1, input, 1} and a {params, 1, 1} filter, the region's size from cudnnGetFilterNdDescriptor
   with 3 dims requested; then runs cudnnRNNForward over RNN data descriptors in the sequence-major
   unpacked layout with sequence lengths and a float 0 padding fill, hx / cx described as
   {layers, batch, hidden}. The weights are written at the offsets learnt. */
TEST(compat_rnn_tensorflow_regions_and_forward)
{
    enum { IN = 3, H = 4, T = 4, N = 3, G = 4 };
    static const int lengths[N] = {4, 2, 3};
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t drop;
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop)); /* TensorFlow's "empty" descriptor: never set */
    if (!CHECK_OK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                           CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                                           CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, IN, H, H, 1, drop,
                                           CUDNN_RNN_PADDED_IO_ENABLED))) {
        cudnnDestroyRNNDescriptor(rnn);
        cudnnDestroyDropoutDescriptor(drop);
        return;
    }
    int hidden = 0, layers = 0, rec_proj = 0, out_proj = -1;
    cudnnDropoutDescriptor_t got_drop = NULL;
    cudnnRNNInputMode_t in_mode;
    cudnnDirectionMode_t dir;
    cudnnRNNMode_t mode;
    cudnnRNNAlgo_t algo;
    cudnnDataType_t prec;
    CHECK_OK(cudnnGetRNNDescriptor_v6(h, rnn, &hidden, &layers, &got_drop, &in_mode, &dir, &mode, &algo, &prec));
    CHECK(hidden == H && layers == 1 && got_drop == drop && mode == CUDNN_LSTM && prec == CUDNN_DATA_FLOAT);
    CHECK_OK(cudnnGetRNNProjectionLayers(h, rnn, &rec_proj, &out_proj));
    CHECK(rec_proj == hidden && out_proj == 0); /* TensorFlow asks for region 8 only when they differ */

    /* the regions, as offsets from w = NULL */
    cudnnTensorDescriptor_t xd1;
    cudnnFilterDescriptor_t wd, region;
    CHECK_OK(cudnnCreateTensorDescriptor(&xd1));
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    CHECK_OK(cudnnCreateFilterDescriptor(&region));
    CHECK_OK(cudnnSetTensorNdDescriptor(xd1, CUDNN_DATA_FLOAT, 3, (const int[]){1, IN, 1}, (const int[]){IN, 1, 1}));
    size_t params = 0;
    CHECK_OK(cudnnGetRNNParamsSize(h, rnn, xd1, &params, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3,
                                        (const int[]){(int)(params / sizeof(float)), 1, 1}));
    struct ref_rnn r = {.mode = CUDNN_LSTM, .layers = 1, .dirs = 1, .input = IN, .hidden = H, .proj = H,
                        .T = T, .N = N, .lengths = lengths};
    int64_t nref = ref_rnn_param_count(&r);
    double *wref = tview_random(nref, -0.6, 0.6);
    float *space = calloc(params / sizeof(float) + 1, sizeof(float));
    bool ok = true;
    int64_t covered = 0;
    for (int id = 0; id < 2 * G && ok; id++)
        for (int bias = 0; bias < 2 && ok; bias++) {
            void *at = (void *)1;
            ok = bias ? CHECK_OK(cudnnGetRNNLinLayerBiasParams(h, rnn, 0, xd1, wd, NULL, id, region, &at))
                      : CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, rnn, 0, xd1, wd, NULL, id, region, &at));
            int dims[3] = {1, 1, 1}, nd = 0;
            cudnnDataType_t t;
            cudnnTensorFormat_t f;
            ok = ok && CHECK_OK(cudnnGetFilterNdDescriptor(region, 3, &t, &f, &nd, dims));
            int rows = dims[1], cols = dims[2];
            ok = ok && CHECK(nd == 3 && dims[0] == 1 && rows == H && cols == (bias ? 1 : id < G ? IN : H));
            size_t off = (size_t)(uintptr_t)at;
            ok = ok && CHECK(off % sizeof(float) == 0 && off + sizeof(float) * (size_t)(rows * cols) <= params);
            if (!ok) break;
            enum ref_rnn_block blk = bias ? (id < G ? REF_RNN_BW : REF_RNN_BR) : (id < G ? REF_RNN_W : REF_RNN_R);
            int64_t base = ref_rnn_param(&r, 0, blk, id % G);
            for (int i = 0; i < rows * cols; i++) space[off / sizeof(float) + (size_t)i] = (float)wref[base + i];
            covered += rows * cols;
        }
    CHECK(covered * (int64_t)sizeof(float) == (int64_t)params);
    for (int64_t i = 0; i < nref; i++) wref[i] = (float)wref[i];

    /* the forward over RNN data descriptors */
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd;
    CHECK_OK(cudnnCreateRNNDataDescriptor(&xd));
    CHECK_OK(cudnnCreateRNNDataDescriptor(&yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&hd));
    float fill = 0.0f;
    CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, IN,
                                       lengths, &fill));
    CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, H,
                                       lengths, &fill));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, (const int[]){1, N, H}, (const int[]){N * H, H, 1}));
    double *x = tview_random(T * N * IN, -1, 1), *hx = tview_random(N * H, -1, 1), *cx = tview_random(N * H, -1, 1);
    double *y = tview_fill(T * N * H, 0), *hy = malloc(sizeof(double) * N * H), *cy = malloc(sizeof(double) * N * H);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * IN), *phx = tvalues_upload(CUDNN_DATA_FLOAT, hx, N * H);
    void *pcx = tvalues_upload(CUDNN_DATA_FLOAT, cx, N * H);
    void *pw = tbuf_from(space, params), *plen = tbuf_from(lengths, sizeof lengths);
    void *py = tbuf_alloc(sizeof(float) * T * N * H), *phy = tbuf_alloc(sizeof(float) * N * H);
    void *pcy = tbuf_alloc(sizeof(float) * N * H);
    ref_rnn_forward(&r, wref, x, hx, cx, y, hy, cy);
    const cudnnForwardMode_t modes[] = {CUDNN_FWD_MODE_INFERENCE, CUDNN_FWD_MODE_TRAINING};
    for (size_t m = 0; m < TLEN(modes) && ok; m++) {
        size_t ws = 0, rs = 0;
        ok = CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, modes[m], xd, &ws, &rs));
        void *pws = ws ? tbuf_alloc(ws) : NULL, *prs = rs ? tbuf_alloc(rs) : NULL;
        tbuf_poison(py, sizeof(float) * T * N * H);
        ok = ok && CHECK_OK(cudnnRNNForward(h, rnn, modes[m], plen, xd, px, yd, py, hd, phx, phy, hd, pcx, pcy, params,
                                            pw, ws, pws, rs, prs));
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * H, 1e-5, "y (padding filled with 0)");
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, phy, hy, N * H, 1e-5, "hy");
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pcy, cy, N * H, 1e-5, "cy");
        if (pws) tbuf_free(pws);
        if (prs) tbuf_free(prs);
    }
    void *bufs[] = {px, phx, pcx, pw, plen, py, phy, pcy};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(x), free(hx), free(cx), free(y), free(hy), free(cy), free(wref), free(space);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyTensorDescriptor(xd1);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyFilterDescriptor(region);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(drop);
}

/* ---- CUDA.jl's legacy RNN (lib/cudnn/rnn.jl) --------------------------------------------------- */

/* CUDA.jl's legacy RNN layer: cudnnSetRNNDescriptor_v6 with a dropout of 0, one step per call
   (seqLength 1, xDesc {batch, input, 1}, states {1, batch, hidden}, the weights a {len, 1, 1}
   filter read as one blob: every gate's input matrix, every gate's recurrent matrix, then the
   input biases, the recurrent biases left 0), cudnnRNNForwardTraining, then
   cudnnRNNBackwardData with the final states' gradients not given: their descriptors and
   pointers both NULL (its hDesc(0)), and cudnnRNNBackwardWeights into zeroed gradients. */
TEST(compat_rnn_cudajl_legacy_step_null_state_gradients)
{
    enum { IN = 2, H = 3, N = 2, G = 4 };
    static const int lengths[N] = {1, 1};
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t drop;
    size_t states_bytes = 0;
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop));
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    void *states = tbuf_alloc(states_bytes);
    CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.0f, states, states_bytes, 0));
    CHECK_OK(cudnnSetRNNDescriptor_v6(h, rnn, H, 1, drop, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM,
                                      CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    cudnnTensorDescriptor_t xd, yd, hd;
    cudnnFilterDescriptor_t wd;
    CHECK_OK(cudnnCreateTensorDescriptor(&xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&hd));
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    CHECK_OK(cudnnSetTensorNdDescriptor(xd, CUDNN_DATA_FLOAT, 3, (const int[]){N, IN, 1}, (const int[]){IN, 1, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(yd, CUDNN_DATA_FLOAT, 3, (const int[]){N, H, 1}, (const int[]){H, 1, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, (const int[]){1, N, H}, (const int[]){N * H, H, 1}));
    size_t params = 0;
    CHECK_OK(cudnnGetRNNParamsSize(h, rnn, xd, &params, CUDNN_DATA_FLOAT));
    const int len = (int)(params / sizeof(float));
    CHECK(len == G * H * (IN + H) + 2 * G * H);
    CHECK_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, (const int[]){len, 1, 1}));

    /* the blob as CUDA.jl reads it, and the same weights in the reference's layout */
    struct ref_rnn r = {.mode = CUDNN_LSTM, .layers = 1, .dirs = 1, .input = IN, .hidden = H, .proj = H,
                        .T = 1, .N = N, .lengths = lengths};
    int64_t nref = ref_rnn_param_count(&r);
    double *wref = tview_fill(nref, 0), *blob = tview_fill(len, 0);
    for (int g = 0; g < G; g++)
        for (int row = 0; row < H; row++) {
            for (int i = 0; i < IN; i++)
                blob[(g * H + row) * IN + i] = wref[ref_rnn_param(&r, 0, REF_RNN_W, g) + row * IN + i] =
                    (float)trand_uniform(-0.7, 0.7);
            for (int i = 0; i < H; i++)
                blob[G * H * IN + (g * H + row) * H + i] = wref[ref_rnn_param(&r, 0, REF_RNN_R, g) + row * H + i] =
                    (float)trand_uniform(-0.7, 0.7);
            blob[G * H * (IN + H) + g * H + row] = wref[ref_rnn_param(&r, 0, REF_RNN_BW, g) + row] =
                (float)trand_uniform(-0.5, 0.5);
        }
    double *x = tview_random(N * IN, -1, 1), *hx = tview_random(N * H, -1, 1), *cx = tview_random(N * H, -1, 1);
    double *dy = tview_random(N * H, -1, 1);
    double *y = malloc(sizeof(double) * N * H), *hy = malloc(sizeof(double) * N * H), *cy = malloc(sizeof(double) * N * H);
    double *dx = malloc(sizeof(double) * N * IN), *dhx = malloc(sizeof(double) * N * H), *dcx = malloc(sizeof(double) * N * H);
    double *dwref = tview_fill(nref, 0), *dblob = malloc(sizeof(double) * (size_t)len);
    ref_rnn_forward(&r, wref, x, hx, cx, y, hy, cy);
    ref_rnn_backward(&r, wref, x, hx, cx, dy, NULL, NULL, dx, dhx, dcx, dwref);
    for (int g = 0; g < G; g++)
        for (int row = 0; row < H; row++) {
            for (int i = 0; i < IN; i++) dblob[(g * H + row) * IN + i] = dwref[ref_rnn_param(&r, 0, REF_RNN_W, g) + row * IN + i];
            for (int i = 0; i < H; i++)
                dblob[G * H * IN + (g * H + row) * H + i] = dwref[ref_rnn_param(&r, 0, REF_RNN_R, g) + row * H + i];
            dblob[G * H * (IN + H) + g * H + row] = dwref[ref_rnn_param(&r, 0, REF_RNN_BW, g) + row];
            dblob[G * H * (IN + H) + (G + g) * H + row] = dwref[ref_rnn_param(&r, 0, REF_RNN_BR, g) + row];
        }

    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, blob, len), *px = tvalues_upload(CUDNN_DATA_FLOAT, x, N * IN);
    void *phx = tvalues_upload(CUDNN_DATA_FLOAT, hx, N * H), *pcx = tvalues_upload(CUDNN_DATA_FLOAT, cx, N * H);
    void *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, N * H);
    double *zeros = tview_fill(len, 0);
    void *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, len);
    void *py = tbuf_alloc(sizeof(float) * N * H), *phy = tbuf_alloc(sizeof(float) * N * H);
    void *pcy = tbuf_alloc(sizeof(float) * N * H), *pdx = tbuf_alloc(sizeof(float) * N * IN);
    void *pdhx = tbuf_alloc(sizeof(float) * N * H), *pdcx = tbuf_alloc(sizeof(float) * N * H);
    size_t ws = 0, rs = 0;
    bool ok = CHECK_OK(cudnnGetRNNWorkspaceSize(h, rnn, 1, &xd, &ws)) &&
              CHECK_OK(cudnnGetRNNTrainingReserveSize(h, rnn, 1, &xd, &rs));
    void *pws = tbuf_alloc(ws ? ws : 1), *prs = tbuf_alloc(rs ? rs : 1);
    ok = ok && CHECK_OK(cudnnRNNForwardTraining(h, rnn, 1, &xd, px, hd, phx, hd, pcx, wd, pw, &yd, py, hd, phy, hd,
                                                pcy, pws, ws, prs, rs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, N * H, 1e-5, "y") &&
         tvalues_check(CUDNN_DATA_FLOAT, phy, hy, N * H, 1e-5, "hy") &&
         tvalues_check(CUDNN_DATA_FLOAT, pcy, cy, N * H, 1e-5, "cy");
    ok = ok && CHECK_OK(cudnnRNNBackwardData(h, rnn, 1, &yd, py, &yd, pdy, NULL, NULL, NULL, NULL, wd, pw, hd, phx, hd,
                                             pcx, &xd, pdx, hd, pdhx, hd, pdcx, pws, ws, prs, rs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, N * IN, 1e-5, "dx") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdhx, dhx, N * H, 1e-5, "dhx") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdcx, dcx, N * H, 1e-5, "dcx");
    ok = ok && CHECK_OK(cudnnRNNBackwardWeights(h, rnn, 1, &xd, px, hd, phx, &yd, py, pws, ws, wd, pdw, prs, rs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdw, dblob, len, 1e-5, "dw (the blob's order)");
    void *bufs[] = {pw, px, phx, pcx, pdy, pdw, py, phy, pcy, pdx, pdhx, pdcx, pws, prs, states};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {wref, blob, x, hx, cx, dy, y, hy, cy, dx, dhx, dcx, dwref, dblob, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(drop);
}

/* ---- PyTorch's CTC loss (aten/src/ATen/native/cudnn/LossCTC.cpp) ------------------------------- */

/* PyTorch hands cuDNN log-probabilities (log_softmax already applied) under
   CUDNN_LOSS_NORMALIZATION_SOFTMAX with CUDNN_PROPAGATE_NAN: the softmax of a log-softmax is the
   softmax itself. Its probs descriptor takes the tensor's own strides (a T x N x A view of an
   N x T x A tensor, the usual result of transposing a batch-first output), its gradient tensor is
   contiguous: the two descriptors differ in strides. The host-label call (every input length
   T, labels < 256) with cudnnGetCTCLossWorkspaceSize, and the _v8 call with the labels and
   lengths in device memory and cudnnSetCTCLossDescriptor_v8(..., 255). */
TEST(compat_ctc_pytorch_log_probs_transposed)
{
    enum { T = 7, N = 3, A = 5 };
    static const int label_lengths[N] = {3, 0, 2}, input_lengths[N] = {T, T, T};
    static const int labels[] = {1, 1, 4, 2, 3};
    cudnnHandle_t h = test_handle();
    double *x = malloc(sizeof(double) * T * N * A), *stored = malloc(sizeof(double) * T * N * A);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            double z[A], mx = -INFINITY, sum = 0;
            for (int k = 0; k < A; k++) z[k] = trand_uniform(-2, 2), mx = fmax(mx, z[k]);
            for (int k = 0; k < A; k++) sum += exp(z[k] - mx);
            for (int k = 0; k < A; k++) {
                double lp = (float)(z[k] - mx - log(sum));
                x[(t * N + n) * A + k] = lp;               /* T x N x A, the reference's order */
                stored[(n * T + t) * A + k] = lp;          /* N x T x A, the memory's order */
            }
        }
    double costs[N], *grads = malloc(sizeof(double) * T * N * A);
    ref_ctc(T, N, A, true, x, labels, label_lengths, input_lengths, costs, grads);
    cudnnTensorDescriptor_t pd, gd;
    CHECK_OK(cudnnCreateTensorDescriptor(&pd));
    CHECK_OK(cudnnCreateTensorDescriptor(&gd));
    CHECK_OK(cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, (const int[]){T, N, A}, (const int[]){A, T * A, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(gd, CUDNN_DATA_FLOAT, 3, (const int[]){T, N, A}, (const int[]){N * A, A, 1}));
    void *pp = tvalues_upload(CUDNN_DATA_FLOAT, stored, T * N * A), *pg = tbuf_alloc(sizeof(float) * T * N * A);
    void *pc = tbuf_alloc(sizeof(float) * N);
    void *dlabels = tbuf_from(labels, sizeof labels), *dll = tbuf_from(label_lengths, sizeof label_lengths);
    void *dil = tbuf_from(input_lengths, sizeof input_lengths);
    cudnnCTCLossDescriptor_t d;
    CHECK_OK(cudnnCreateCTCLossDescriptor(&d));
    for (int v8 = 0; v8 < 2; v8++) {
        const cudnnCTCLossAlgo_t algo = v8 ? CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC : CUDNN_CTC_LOSS_ALGO_DETERMINISTIC;
        size_t ws = 0;
        bool ok;
        tbuf_poison(pg, sizeof(float) * T * N * A);
        tbuf_poison(pc, sizeof(float) * N);
        if (v8) {
            ok = CHECK_OK(cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                                       CUDNN_PROPAGATE_NAN, 255)) &&
                 CHECK_OK(cudnnGetCTCLossWorkspaceSize_v8(h, algo, d, pd, gd, &ws));
            void *pws = tbuf_alloc(ws ? ws : 1);
            ok = ok && CHECK_OK(cudnnCTCLoss_v8(h, algo, d, pd, pp, dlabels, dll, dil, pc, gd, pg, ws, pws));
            tbuf_free(pws);
        } else {
            ok = CHECK_OK(cudnnSetCTCLossDescriptorEx(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                                      CUDNN_PROPAGATE_NAN)) &&
                 CHECK_OK(cudnnGetCTCLossWorkspaceSize(h, pd, gd, labels, label_lengths, input_lengths, algo, d, &ws));
            void *pws = tbuf_alloc(ws ? ws : 1);
            ok = ok && CHECK_OK(cudnnCTCLoss(h, pd, pp, labels, label_lengths, input_lengths, pc, gd, pg, algo, d, pws,
                                             ws));
            tbuf_free(pws);
        }
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pc, costs, N, 2e-5, v8 ? "_v8 costs" : "costs");
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pg, grads, T * N * A, 2e-5, v8 ? "_v8 gradients" : "gradients");
    }
    cudnnDestroyCTCLossDescriptor(d);
    cudnnDestroyTensorDescriptor(pd);
    cudnnDestroyTensorDescriptor(gd);
    void *bufs[] = {pp, pg, pc, dlabels, dll, dil};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(x), free(stored), free(grads);
}

/* ---- CUDA.jl's multi-head attention (lib/cudnn/multiheadattn.jl) --------------------------------- */

/* Offset of (b, m, t, v) in a sequence buffer laid out as CUDA.jl's default axes give it: Julia
   order VECT, BATCH, TIME, BEAM, which cuDNN reads reversed (BEAM outermost, VECT innermost). */
static int64_t julia_seq_at(int B, int T, int V, int b, int m, int t, int v)
{
    return (((int64_t)m * T + t) * B + b) * V + v;
}

/* CUDA.jl's defaults: no projections (every projection size 0, CUDNN_ATTN_DISABLE_PROJ_BIASES,
   ALL_TO_ONE), both dropout descriptors NULL, smScaler 1, its axes (cuDNN's BEAM, TIME, BATCH,
   VECT), the buffers queried with reserveSpaceSizeInBytes NULL (no gradients planned) and the
   call made with the weights NULL (0 bytes), no workspace when none is needed, no reserve,
   residuals NULL, currIdx -1, loWinIdx 0 and hiWinIdx typemax(Cint) for every query step; the
   output zeroed before the call. */
TEST(compat_mha_cudajl_defaults_no_projections)
{
    enum { HEADS = 2, QS = 4, VS = 3, B = 2, M = 2, TQ = 3, TK = 4, OS = HEADS * VS };
    cudnnHandle_t h = test_handle();
    cudnnAttnDescriptor_t attn;
    CHECK_OK(cudnnCreateAttnDescriptor(&attn));
    if (!CHECK_OK(cudnnSetAttnDescriptor(attn, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_DISABLE_PROJ_BIASES, HEADS,
                                         1.0, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, NULL, NULL, QS,
                                         QS, VS, 0, 0, 0, 0, TQ, TK, B, M))) {
        cudnnDestroyAttnDescriptor(attn);
        return;
    }
    size_t wbytes = 1, wsbytes = 1;
    CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, attn, &wbytes, &wsbytes, NULL));
    CHECK(wbytes == 0);
    const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM,
                                        CUDNN_SEQDATA_VECT_DIM};
    int qlen[B * M], klen[B];
    for (int i = 0; i < B * M; i++) qlen[i] = TQ;
    for (int i = 0; i < B; i++) klen[i] = TK;
    cudnnSeqDataDescriptor_t qd, kd, vd, od;
    cudnnSeqDataDescriptor_t *descs[] = {&qd, &kd, &vd, &od};
    const int T_of[] = {TQ, TK, TK, TQ}, M_of[] = {M, 1, 1, M}, V_of[] = {QS, QS, VS, OS};
    for (int i = 0; i < 4; i++) {
        int dims[4];
        dims[CUDNN_SEQDATA_TIME_DIM] = T_of[i], dims[CUDNN_SEQDATA_BATCH_DIM] = B;
        dims[CUDNN_SEQDATA_BEAM_DIM] = M_of[i], dims[CUDNN_SEQDATA_VECT_DIM] = V_of[i];
        CHECK_OK(cudnnCreateSeqDataDescriptor(descs[i]));
        CHECK_OK(cudnnSetSeqDataDescriptor(*descs[i], CUDNN_DATA_FLOAT, 4, dims, axes, (size_t)B * M_of[i],
                                           M_of[i] == M ? qlen : klen, NULL));
    }
    /* canonical values (the reference's order) and the buffers in CUDA.jl's order */
    double *q = tview_random(B * M * TQ * QS, -1, 1), *k = tview_random(B * TK * QS, -1, 1);
    double *v = tview_random(B * TK * VS, -1, 1), *want = malloc(sizeof(double) * B * M * TQ * OS);
    double *qm = malloc(sizeof(double) * B * M * TQ * QS), *km = malloc(sizeof(double) * B * TK * QS);
    double *vm = malloc(sizeof(double) * B * TK * VS), *wantm = malloc(sizeof(double) * B * M * TQ * OS);
    for (int b = 0; b < B; b++)
        for (int m = 0; m < M; m++)
            for (int t = 0; t < TQ; t++)
                for (int e = 0; e < QS; e++)
                    q[((b * M + m) * TQ + t) * QS + e] = qm[julia_seq_at(B, TQ, QS, b, m, t, e)] =
                        (float)q[((b * M + m) * TQ + t) * QS + e];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < TK; t++) {
            for (int e = 0; e < QS; e++)
                k[(b * TK + t) * QS + e] = km[julia_seq_at(B, TK, QS, b, 0, t, e)] = (float)k[(b * TK + t) * QS + e];
            for (int e = 0; e < VS; e++)
                v[(b * TK + t) * VS + e] = vm[julia_seq_at(B, TK, VS, b, 0, t, e)] = (float)v[(b * TK + t) * VS + e];
        }
    int lo[TQ], hi[TQ];
    for (int t = 0; t < TQ; t++) lo[t] = 0, hi[t] = INT_MAX;
    struct ref_mha r = {.heads = HEADS, .scaler = 1.0, .q_size = QS, .k_size = QS, .v_size = VS, .B = B, .M = M,
                        .Tq = TQ, .Tk = TK, .len_q = qlen, .len_kv = klen, .lo = lo, .hi = hi};
    ref_mha_forward(&r, q, k, v, NULL, want);
    for (int b = 0; b < B; b++)
        for (int m = 0; m < M; m++)
            for (int t = 0; t < TQ; t++)
                for (int e = 0; e < OS; e++)
                    wantm[julia_seq_at(B, TQ, OS, b, m, t, e)] = want[((b * M + m) * TQ + t) * OS + e];
    double *zeros = tview_fill(B * M * TQ * OS, 0);
    void *pq = tvalues_upload(CUDNN_DATA_FLOAT, qm, B * M * TQ * QS), *pk = tvalues_upload(CUDNN_DATA_FLOAT, km, B * TK * QS);
    void *pv = tvalues_upload(CUDNN_DATA_FLOAT, vm, B * TK * VS), *po = tvalues_upload(CUDNN_DATA_FLOAT, zeros, B * M * TQ * OS);
    void *dq = tbuf_from(qlen, sizeof qlen), *dk = tbuf_from(klen, sizeof klen);
    void *ws = wsbytes ? tbuf_alloc(wsbytes) : NULL;
    if (CHECK_OK(cudnnMultiHeadAttnForward(h, attn, -1, lo, hi, dq, dk, qd, pq, NULL, kd, pk, vd, pv, od, po, 0, NULL,
                                           wsbytes, ws, 0, NULL)))
        tvalues_check(CUDNN_DATA_FLOAT, po, wantm, B * M * TQ * OS, 1e-5, "out");
    if (ws) tbuf_free(ws);
    void *bufs[] = {pq, pk, pv, po, dq, dk};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {q, k, v, want, qm, km, vm, wantm, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    for (int i = 0; i < 4; i++) cudnnDestroySeqDataDescriptor(*descs[i]);
    cudnnDestroyAttnDescriptor(attn);
}

/* ---- SharpNet's RNN layer (SharpNet/Layers/RecurrentLayer.cs) ------------------------------------ */

/* For every matrix and bias of pseudo-layer 0 of a one-layer unidirectional network of G gates,
   the offset (elements) of the weight space and of the reference's layout and the element
   count (0 for a parameter the network lacks), through cudnnGetRNNWeightParams; count of the
   pairs, or -1 when a query failed. */
static int v8_param_map(cudnnHandle_t h, cudnnRNNDescriptor_t rnn, const struct ref_rnn *r, int G, size_t wbytes,
                        void *space, int64_t (*map)[3])
{
    cudnnTensorDescriptor_t md, bd;
    cudnnCreateTensorDescriptor(&md);
    cudnnCreateTensorDescriptor(&bd);
    int n = 0;
    for (int id = 0; id < 2 * G && n >= 0; id++) {
        void *ma = NULL, *ba = NULL;
        if (!CHECK_OK(cudnnGetRNNWeightParams(h, rnn, 0, wbytes, space, id, md, &ma, bd, &ba))) {
            n = -1;
            break;
        }
        bool in = id < G;
        map[n][0] = ma ? ((char *)ma - (char *)space) / (int64_t)sizeof(float) : 0;
        map[n][1] = ref_rnn_param(r, 0, in ? REF_RNN_W : REF_RNN_R, id % G);
        map[n++][2] = ma ? (int64_t)r->hidden * (in ? r->input : r->proj) : 0;
        map[n][0] = ba ? ((char *)ba - (char *)space) / (int64_t)sizeof(float) : 0;
        map[n][1] = ref_rnn_param(r, 0, in ? REF_RNN_BW : REF_RNN_BR, id % G);
        map[n++][2] = ba ? r->hidden : 0;
    }
    cudnnDestroyTensorDescriptor(md);
    cudnnDestroyTensorDescriptor(bd);
    return n;
}

/* SharpNet runs its recurrent layers without initial or final states: cudnnRNNForward (training),
   cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8 each with hDesc and cDesc NULL and every
   state pointer NULL, over batch-major unpacked data of full lengths (PADDED_IO, a dropout
   descriptor of 0 with states). */
TEST(compat_rnn_sharpnet_v8_without_states)
{
    enum { IN = 3, H = 2, T = 3, N = 2, G = 4 };
    static const int lengths[N] = {T, T};
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t drop;
    size_t states_bytes = 0;
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop));
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    void *states = tbuf_alloc(states_bytes);
    CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.0f, states, states_bytes, 7));
    CHECK_OK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                      CUDNN_DEFAULT_MATH, IN, H, H, 1, drop, CUDNN_RNN_PADDED_IO_ENABLED));
    struct ref_rnn r = {.mode = CUDNN_LSTM, .layers = 1, .dirs = 1, .input = IN, .hidden = H, .proj = H,
                        .T = T, .N = N, .lengths = lengths};
    size_t wbytes = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, rnn, &wbytes));
    int64_t nref = ref_rnn_param_count(&r), nw = (int64_t)(wbytes / sizeof(float));
    float *space = calloc((size_t)nw, sizeof(float));
    int64_t map[4 * G][3];
    int pairs = v8_param_map(h, rnn, &r, G, wbytes, space, map);
    double *wref = tview_fill(nref, 0), *wspace = tview_fill(nw, 0);
    for (int i = 0; i < pairs; i++)
        for (int64_t j = 0; j < map[i][2]; j++)
            wspace[map[i][0] + j] = wref[map[i][1] + j] = (float)trand_uniform(-0.6, 0.6);
    cudnnRNNDataDescriptor_t xd, yd;
    CHECK_OK(cudnnCreateRNNDataDescriptor(&xd));
    CHECK_OK(cudnnCreateRNNDataDescriptor(&yd));
    CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, T, N, IN,
                                       lengths, NULL));
    CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, T, N, H,
                                       lengths, NULL));
    /* the reference's [T][N][vec] and the buffers' [N][T][vec] */
    double *x = tview_random(T * N * IN, -1, 1), *dy = tview_random(T * N * H, -1, 1);
    double *xb = malloc(sizeof(double) * T * N * IN), *dyb = malloc(sizeof(double) * T * N * H);
    double *y = malloc(sizeof(double) * T * N * H), *yb = malloc(sizeof(double) * T * N * H);
    double *dx = malloc(sizeof(double) * T * N * IN), *dxb = malloc(sizeof(double) * T * N * IN);
    double hy[N * H], cy[N * H], dhx[N * H], dcx[N * H];
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            for (int e = 0; e < IN; e++) xb[(n * T + t) * IN + e] = x[(t * N + n) * IN + e] = (float)x[(t * N + n) * IN + e];
            for (int e = 0; e < H; e++) dyb[(n * T + t) * H + e] = dy[(t * N + n) * H + e] = (float)dy[(t * N + n) * H + e];
        }
    double *dwref = tview_fill(nref, 0), *dwspace = tview_fill(nw, 0);
    ref_rnn_forward(&r, wref, x, NULL, NULL, y, hy, cy);
    ref_rnn_backward(&r, wref, x, NULL, NULL, dy, NULL, NULL, dx, dhx, dcx, dwref);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            for (int e = 0; e < H; e++) yb[(n * T + t) * H + e] = y[(t * N + n) * H + e];
            for (int e = 0; e < IN; e++) dxb[(n * T + t) * IN + e] = dx[(t * N + n) * IN + e];
        }
    for (int i = 0; i < pairs; i++)
        for (int64_t j = 0; j < map[i][2]; j++) dwspace[map[i][0] + j] = dwref[map[i][1] + j];
    double *zeros = tview_fill(nw, 0);
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, wspace, nw), *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, nw);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, xb, T * N * IN), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dyb, T * N * H);
    void *py = tbuf_alloc(sizeof(float) * T * N * H), *pdx = tbuf_alloc(sizeof(float) * T * N * IN);
    void *plen = tbuf_from(lengths, sizeof lengths);
    size_t ws = 0, rs = 0;
    bool ok = pairs == 4 * G && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs));
    void *pws = tbuf_alloc(ws ? ws : 1), *prs = tbuf_alloc(rs ? rs : 1);
    ok = ok && CHECK_OK(cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_TRAINING, plen, xd, px, yd, py, NULL, NULL, NULL, NULL,
                                        NULL, NULL, wbytes, pw, ws, pws, rs, prs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, yb, T * N * H, 1e-5, "y");
    ok = ok && CHECK_OK(cudnnRNNBackwardData_v8(h, rnn, plen, yd, py, pdy, xd, pdx, NULL, NULL, NULL, NULL, NULL, NULL,
                                                NULL, NULL, wbytes, pw, ws, pws, rs, prs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdx, dxb, T * N * IN, 1e-5, "dx");
    ok = ok && CHECK_OK(cudnnRNNBackwardWeights_v8(h, rnn, CUDNN_WGRAD_MODE_ADD, plen, xd, px, NULL, NULL, yd, py,
                                                   wbytes, pdw, ws, pws, rs, prs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdw, dwspace, nw, 1e-5, "dweightSpace");
    void *bufs[] = {pw, pdw, px, pdy, py, pdx, plen, pws, prs, states};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {wref, wspace, x, dy, xb, dyb, y, yb, dx, dxb, dwref, dwspace, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    free(space);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(drop);
}

/* ---- ONNX Runtime's RNN operators (onnxruntime/core/providers/cuda/rnn/cudnn_rnn_base.cc) ------ */

/* ONNX Runtime's GRU: ONNX's W (z, r, h gates), R and B arrays copied into a zeroed weight buffer
   through the legacy getters in its linear-layer order (W ids 1, 0, 2 with their biases, then R
   ids 4, 3, 5), xDesc {1, input, 1}, the filter {dirs * 3H (input + H + 2), 1, 1}; then
   cudnnSetRNNPaddingMode(PADDED_IO_ENABLED) and, without sequence lengths, the array form
   cudnnRNNForwardInference (hx NULL, every state descriptor given); with lengths,
   cudnnRNNForwardInferenceEx over sequence-major unpacked data with a float 0 fill (a length 0
   raised to 1 by the caller). Bidirectional. */
TEST(compat_rnn_onnxruntime_gru_padding_mode)
{
    enum { IN = 3, H = 2, T = 4, N = 3, D = 2, G = 3 };
    static const int full[N] = {T, T, T}, ragged[N] = {T, 2, 1};
    static const int w_ids[G] = {1, 0, 2}, r_ids[G] = {4, 3, 5};
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t drop;
    size_t states_bytes = 0;
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop));
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    void *states = tbuf_alloc(states_bytes);
    CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.0f, states, states_bytes, 1));
    CHECK_OK(cudnnSetRNNDescriptor_v6(h, rnn, H, 1, drop, CUDNN_LINEAR_INPUT, CUDNN_BIDIRECTIONAL, CUDNN_GRU,
                                      CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetRNNMatrixMathType(rnn, CUDNN_DEFAULT_MATH));
    cudnnTensorDescriptor_t x1, xd, yd, hd;
    cudnnFilterDescriptor_t wd, region;
    cudnnTensorDescriptor_t *descs[] = {&x1, &xd, &yd, &hd};
    for (int i = 0; i < 4; i++) CHECK_OK(cudnnCreateTensorDescriptor(descs[i]));
    CHECK_OK(cudnnCreateFilterDescriptor(&wd));
    CHECK_OK(cudnnCreateFilterDescriptor(&region));
    CHECK_OK(cudnnSetTensorNdDescriptor(x1, CUDNN_DATA_FLOAT, 3, (const int[]){1, IN, 1}, (const int[]){IN, 1, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(xd, CUDNN_DATA_FLOAT, 3, (const int[]){N, IN, 1}, (const int[]){IN, 1, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(yd, CUDNN_DATA_FLOAT, 3, (const int[]){N, D * H, 1}, (const int[]){D * H, 1, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, (const int[]){D, N, H}, (const int[]){N * H, H, 1}));
    const int w_size = D * G * H * (IN + H + 2);
    CHECK_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, (const int[]){w_size, 1, 1}));

    /* the reference's weights, and ONNX's arrays W [D][zrh][H][IN], R [D][zrh][H][H], B [D][W zrh, R zrh][H] */
    struct ref_rnn r = {.mode = CUDNN_GRU, .layers = 1, .dirs = D, .input = IN, .hidden = H, .proj = H,
                        .T = T, .N = N, .lengths = full};
    int64_t nref = ref_rnn_param_count(&r);
    double *wref = tview_fill(nref, 0);
    float onnx_w[D * G * H * IN], onnx_r[D * G * H * H], onnx_b[D * 2 * G * H];
    static const int cudnn_gate_of_onnx[G] = {1, 0, 2}; /* z = update, r = reset, h = new */
    for (int d = 0; d < D; d++)
        for (int o = 0; o < G; o++) {
            int g = cudnn_gate_of_onnx[o];
            for (int i = 0; i < H * IN; i++)
                onnx_w[(d * G + o) * H * IN + i] = (float)(wref[ref_rnn_param(&r, d, REF_RNN_W, g) + i] = (float)trand_uniform(-0.7, 0.7));
            for (int i = 0; i < H * H; i++)
                onnx_r[(d * G + o) * H * H + i] = (float)(wref[ref_rnn_param(&r, d, REF_RNN_R, g) + i] = (float)trand_uniform(-0.7, 0.7));
            for (int i = 0; i < H; i++) {
                onnx_b[(d * 2 * G + o) * H + i] = (float)(wref[ref_rnn_param(&r, d, REF_RNN_BW, g) + i] = (float)trand_uniform(-0.5, 0.5));
                onnx_b[(d * 2 * G + G + o) * H + i] = (float)(wref[ref_rnn_param(&r, d, REF_RNN_BR, g) + i] = (float)trand_uniform(-0.5, 0.5));
            }
        }
    void *pw = tbuf_alloc(sizeof(float) * (size_t)w_size);
    float *zero_w = calloc((size_t)w_size, sizeof(float));
    tbuf_upload(pw, zero_w, sizeof(float) * (size_t)w_size);
    free(zero_w);
    bool ok = true;
    int w_off = 0, r_off = 0, b_off = 0;
    for (int layer = 0; layer < D && ok; layer++)
        for (int pass = 0; pass < 2 && ok; pass++)
            for (int k = 0; k < G && ok; k++)
                for (int bias = 0; bias < 2 && ok; bias++) {
                    int id = pass ? r_ids[k] : w_ids[k];
                    void *at = NULL;
                    ok = bias ? CHECK_OK(cudnnGetRNNLinLayerBiasParams(h, rnn, layer, x1, wd, pw, id, region, &at))
                              : CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, rnn, layer, x1, wd, pw, id, region, &at));
                    int dims[3], nd;
                    cudnnDataType_t t;
                    cudnnTensorFormat_t f;
                    ok = ok && CHECK_OK(cudnnGetFilterNdDescriptor(region, 3, &t, &f, &nd, dims));
                    if (!ok) break;
                    int count = dims[0] * dims[1] * dims[2];
                    const float *src = bias ? onnx_b + b_off : pass ? onnx_r + r_off : onnx_w + w_off;
                    tbuf_upload(at, src, sizeof(float) * (size_t)count);
                    *(bias ? &b_off : pass ? &r_off : &w_off) += count;
                }
    CHECK(w_off == D * G * H * IN && r_off == D * G * H * H && b_off == D * 2 * G * H);
    CHECK_OK(cudnnSetRNNPaddingMode(rnn, CUDNN_RNN_PADDED_IO_ENABLED));

    double *x = tview_random(T * N * IN, -1, 1), *y = malloc(sizeof(double) * T * N * D * H), hy[D * N * H];
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * IN), *py = tbuf_alloc(sizeof(float) * T * N * D * H);
    void *phy = tbuf_alloc(sizeof(float) * D * N * H);
    cudnnTensorDescriptor_t xs[T], ys[T];
    for (int t = 0; t < T; t++) xs[t] = xd, ys[t] = yd;
    size_t ws = 0;
    ok = ok && CHECK_OK(cudnnGetRNNWorkspaceSize(h, rnn, T, xs, &ws));
    void *pws = tbuf_alloc(ws ? ws : 1);
    for (int with_lengths = 0; with_lengths < 2 && ok; with_lengths++) {
        r.lengths = with_lengths ? ragged : full;
        for (int64_t i = 0; i < T * N * D * H; i++) y[i] = 0; /* the padding fill */
        ref_rnn_forward(&r, wref, x, NULL, NULL, y, hy, NULL);
        tbuf_poison(py, sizeof(float) * T * N * D * H);
        if (!with_lengths) {
            ok = CHECK_OK(cudnnRNNForwardInference(h, rnn, T, xs, px, hd, NULL, hd, NULL, wd, pw, ys, py, hd, phy, hd,
                                                   NULL, pws, ws));
        } else {
            cudnnRNNDataDescriptor_t xdd, ydd;
            float fill = 0.0f;
            CHECK_OK(cudnnCreateRNNDataDescriptor(&xdd));
            CHECK_OK(cudnnCreateRNNDataDescriptor(&ydd));
            CHECK_OK(cudnnSetRNNDataDescriptor(xdd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, IN,
                                               ragged, &fill));
            CHECK_OK(cudnnSetRNNDataDescriptor(ydd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N,
                                               D * H, ragged, &fill));
            ok = CHECK_OK(cudnnRNNForwardInferenceEx(h, rnn, xdd, px, hd, NULL, hd, NULL, wd, pw, ydd, py, hd, phy, hd,
                                                     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, pws, ws));
            cudnnDestroyRNNDataDescriptor(xdd);
            cudnnDestroyRNNDataDescriptor(ydd);
        }
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * D * H, 1e-5, with_lengths ? "Ex y" : "y") &&
             tvalues_check(CUDNN_DATA_FLOAT, phy, hy, D * N * H, 1e-5, with_lengths ? "Ex hy" : "hy");
    }
    void *bufs[] = {pw, px, py, phy, pws, states};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(wref), free(x), free(y);
    for (int i = 0; i < 4; i++) cudnnDestroyTensorDescriptor(*descs[i]);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyFilterDescriptor(region);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(drop);
}

/* ---- Korali's recurrent layers (source/modules/neuralNetwork/layer/recurrent) ------------------- */

/* Korali runs a GRU one time step per call: cudnnSetRNNDescriptor_v8 with SINGLE_REC_BIAS and a
   dropout descriptor set to 0 with no states (NULL, 0 bytes), sequence-major packed data of
   maxSeqLength 1 and no fill, cDesc / cx / cy NULL (no cell), a reserve per step; cudnnRNNForward
   (training) with hx NULL at the first step and each step's hy the next step's hx;
   cudnnRNNBackwardData_v8 from the last step back with dhy NULL at the last step and dhx NULL at
   the first; cudnnRNNBackwardWeights_v8 per step (hx NULL at the first). Chained, the steps give
   the whole sequence's forward and backward through time. */
TEST(compat_rnn_korali_gru_one_step_per_call)
{
    enum { C = 3, T = 3, N = 2, G = 3 };
    static const int ones[N] = {1, 1}, full[N] = {T, T};
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t drop;
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop));
    CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.0f, NULL, 0, 1234));
    CHECK_OK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_GRU, CUDNN_RNN_SINGLE_REC_BIAS,
                                      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                      CUDNN_DEFAULT_MATH, C, C, C, 1, drop, CUDNN_RNN_PADDED_IO_DISABLED));
    size_t wbytes = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, rnn, &wbytes));
    CHECK(wbytes == sizeof(float) * (G * C * C * 2 + G * C)); /* Korali's count: one bias set */
    struct ref_rnn r = {.mode = CUDNN_GRU, .layers = 1, .dirs = 1, .input = C, .hidden = C, .proj = C,
                        .T = T, .N = N, .lengths = full};
    int64_t nref = ref_rnn_param_count(&r), nw = (int64_t)(wbytes / sizeof(float));
    float *space = calloc((size_t)nw, sizeof(float));
    int64_t map[4 * G][3];
    int pairs = v8_param_map(h, rnn, &r, G, wbytes, space, map);
    double *wref = tview_fill(nref, 0), *wspace = tview_fill(nw, 0);
    for (int i = 0; i < pairs; i++) {
        CHECK((map[i][2] == 0) == (i % 2 == 1 && i < 2 * G)); /* only b_W is absent under SINGLE_REC_BIAS */
        for (int64_t j = 0; j < map[i][2]; j++)
            wspace[map[i][0] + j] = wref[map[i][1] + j] = (float)trand_uniform(-0.7, 0.7);
    }
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd;
    CHECK_OK(cudnnCreateRNNDataDescriptor(&xd));
    CHECK_OK(cudnnCreateRNNDataDescriptor(&yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&hd));
    CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 1, N, C, ones, NULL));
    CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 1, N, C, ones, NULL));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, (const int[]){1, N, C}, (const int[]){N * C, C, 1}));
    double *x = tview_random(T * N * C, -1, 1), *dy = tview_random(T * N * C, -1, 1);
    double *y = malloc(sizeof(double) * T * N * C), *dx = malloc(sizeof(double) * T * N * C);
    double hy[N * C], dhx[N * C], *dwref = tview_fill(nref, 0), *dwspace = tview_fill(nw, 0), *zeros = tview_fill(nw, 0);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * C), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, T * N * C);
    ref_rnn_forward(&r, wref, x, NULL, NULL, y, hy, NULL);
    ref_rnn_backward(&r, wref, x, NULL, NULL, dy, NULL, NULL, dx, dhx, NULL, dwref);
    for (int i = 0; i < pairs; i++)
        for (int64_t j = 0; j < map[i][2]; j++) dwspace[map[i][0] + j] = dwref[map[i][1] + j];
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, wspace, nw), *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, nw);
    void *py = tbuf_alloc(sizeof(float) * T * N * C), *pdx = tbuf_alloc(sizeof(float) * T * N * C);
    void *plen = tbuf_from(ones, sizeof ones), *hs[T], *dh[T], *ws[T], *rs[T];
    size_t wsb = 0, rsb = 0;
    bool ok = pairs == 4 * G && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_TRAINING, xd, &wsb, &rsb));
    const size_t step = sizeof(float) * N * C;
    for (int t = 0; t < T; t++)
        hs[t] = tbuf_alloc(step), dh[t] = tbuf_alloc(step), ws[t] = tbuf_alloc(wsb ? wsb : 1), rs[t] = tbuf_alloc(rsb ? rsb : 1);
    for (int t = 0; t < T && ok; t++)
        ok = CHECK_OK(cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_TRAINING, plen, xd, (char *)px + t * step, yd,
                                      (char *)py + t * step, hd, t ? hs[t - 1] : NULL, hs[t], NULL, NULL, NULL, wbytes,
                                      pw, wsb, ws[t], rsb, rs[t]));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * C, 1e-5, "y, step by step") &&
         tvalues_check(CUDNN_DATA_FLOAT, hs[T - 1], hy, N * C, 1e-5, "the last step's hy");
    for (int t = T - 1; t >= 0 && ok; t--)
        ok = CHECK_OK(cudnnRNNBackwardData_v8(h, rnn, plen, yd, (char *)py + t * step, (char *)pdy + t * step, xd,
                                              (char *)pdx + t * step, hd, t ? hs[t - 1] : NULL,
                                              t == T - 1 ? NULL : dh[t], t ? dh[t - 1] : NULL, NULL, NULL, NULL, NULL,
                                              wbytes, pw, wsb, ws[t], rsb, rs[t])) &&
             CHECK_OK(cudnnRNNBackwardWeights_v8(h, rnn, CUDNN_WGRAD_MODE_ADD, plen, xd, (char *)px + t * step, hd,
                                                 t ? hs[t - 1] : NULL, yd, (char *)py + t * step, wbytes, pdw, wsb,
                                                 ws[t], rsb, rs[t]));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, T * N * C, 1e-5, "dx through time, step by step") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdw, dwspace, nw, 1e-5, "dweightSpace summed over the steps");
    for (int t = 0; t < T; t++) tbuf_free(hs[t]), tbuf_free(dh[t]), tbuf_free(ws[t]), tbuf_free(rs[t]);
    void *bufs[] = {px, pdy, pw, pdw, py, pdx, plen};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {wref, wspace, x, dy, y, dx, dwref, dwspace, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    free(space);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(drop);
}

/* TensorFlow's v8 path (openxla/xla xla/stream_executor/cuda/cuda_dnn.cc,
   CheckAndFetchProjectionWeights): cudnnGetRNNDescriptor_v8 asked for some fields only (NULL
   for biasMode, dataType, mathType, inputSize and auxFlags); when recurrent projection differs
   from the hidden size, the projection's region from cudnnGetRNNWeightParams with
   weightSpace NULL (the address taken as the offset) and its size from
   cudnnGetTensorNdDescriptor. Every region so learnt, the weights written there and an LSTM with
   a projection run through cudnnRNNForward. */
TEST(compat_rnn_tensorflow_v8_projection_region)
{
    enum { IN = 3, H = 4, P = 2, T = 3, N = 2, G = 4 };
    static const int lengths[N] = {T, 2};
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t rnn;
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
    CHECK_OK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                      CUDNN_FMA_MATH, IN, H, P, 1, NULL, CUDNN_RNN_PADDED_IO_ENABLED));
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t mode;
    cudnnDirectionMode_t dir;
    cudnnRNNInputMode_t in_mode;
    cudnnDataType_t prec;
    int hidden = 0, proj = 0, layers = 0;
    cudnnDropoutDescriptor_t drop = (cudnnDropoutDescriptor_t)1;
    bool ok = CHECK_OK(cudnnGetRNNDescriptor_v8(rnn, &algo, &mode, NULL, &dir, &in_mode, NULL, &prec, NULL, NULL,
                                                &hidden, &proj, &layers, &drop, NULL));
    ok = ok && CHECK(hidden == H && proj == P && layers == 1 && mode == CUDNN_LSTM && drop == NULL);
    size_t wbytes = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, rnn, &wbytes));
    struct ref_rnn r = {.mode = CUDNN_LSTM, .layers = 1, .dirs = 1, .input = IN, .hidden = H, .proj = P,
                        .T = T, .N = N, .lengths = lengths};
    int64_t nref = ref_rnn_param_count(&r), nw = (int64_t)(wbytes / sizeof(float));
    double *wref = tview_fill(nref, 0), *wspace = tview_fill(nw, 0);
    cudnnTensorDescriptor_t md, bd;
    CHECK_OK(cudnnCreateTensorDescriptor(&md));
    CHECK_OK(cudnnCreateTensorDescriptor(&bd));
    int64_t covered = 0;
    for (int id = 0; id <= 2 * G && ok; id++) {
        int lin = id < 2 * G ? id : 8; /* the projection last, as TensorFlow fetches it */
        void *m_ptr = (void *)1, *b_ptr = (void *)1;
        ok = CHECK_OK(cudnnGetRNNWeightParams(h, rnn, 0, wbytes, NULL, lin, md, &m_ptr, bd, &b_ptr));
        for (int bias = 0; bias < 2 && ok; bias++) {
            /* offsets from NULL: the first matrix is at address 0; a missing parameter has 0 dims */
            void *at = bias ? b_ptr : m_ptr;
            int dims[3], strides[3], nd = -1;
            cudnnDataType_t dt;
            ok = CHECK_OK(cudnnGetTensorNdDescriptor(bias ? bd : md, 3, &dt, &nd, dims, strides));
            if (ok && nd == 0) {
                ok = CHECK(lin == 8 && bias && at == NULL); /* the projection has no bias */
                continue;
            }
            int64_t count = (int64_t)dims[0] * dims[1] * dims[2], off = (int64_t)(uintptr_t)at / (int64_t)sizeof(float);
            ok = ok && CHECK(nd == 3 && off + count <= nw);
            enum ref_rnn_block blk = lin == 8 ? REF_RNN_WP
                                     : bias  ? (lin < G ? REF_RNN_BW : REF_RNN_BR)
                                             : (lin < G ? REF_RNN_W : REF_RNN_R);
            int64_t base = ref_rnn_param(&r, 0, blk, lin % G);
            for (int64_t j = 0; j < count && ok; j++)
                wspace[off + j] = wref[base + j] = (float)trand_uniform(-0.6, 0.6);
            covered += count;
        }
    }
    ok = ok && CHECK(covered == nw);
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd;
    CHECK_OK(cudnnCreateRNNDataDescriptor(&xd));
    CHECK_OK(cudnnCreateRNNDataDescriptor(&yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&hd));
    CHECK_OK(cudnnCreateTensorDescriptor(&cd));
    float fill = 0.0f;
    CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, IN,
                                       lengths, &fill));
    CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, P,
                                       lengths, &fill));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, (const int[]){1, N, P}, (const int[]){N * P, P, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(cd, CUDNN_DATA_FLOAT, 3, (const int[]){1, N, H}, (const int[]){N * H, H, 1}));
    double *x = tview_random(T * N * IN, -1, 1), *y = tview_fill(T * N * P, 0), hy[N * P], cy[N * H];
    ref_rnn_forward(&r, wref, x, NULL, NULL, y, hy, cy);
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, wspace, nw), *px = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * IN);
    void *py = tbuf_alloc(sizeof(float) * T * N * P), *phy = tbuf_alloc(sizeof(float) * N * P);
    void *pcy = tbuf_alloc(sizeof(float) * N * H);
    void *plen = tbuf_from(lengths, sizeof lengths);
    size_t ws = 0, rs = 0;
    ok = ok && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_INFERENCE, xd, &ws, &rs));
    void *pws = tbuf_alloc(ws ? ws : 1);
    ok = ok && CHECK_OK(cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_INFERENCE, plen, xd, px, yd, py, hd, NULL, phy, cd, NULL,
                                        pcy, wbytes, pw, ws, pws, 0, NULL));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * P, 1e-5, "y (projected)") &&
         tvalues_check(CUDNN_DATA_FLOAT, phy, hy, N * P, 1e-5, "hy") &&
         tvalues_check(CUDNN_DATA_FLOAT, pcy, cy, N * H, 1e-5, "cy");
    void *bufs[] = {pw, px, py, phy, pcy, plen, pws};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(wref), free(wspace), free(x), free(y);
    cudnnDestroyTensorDescriptor(md);
    cudnnDestroyTensorDescriptor(bd);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyTensorDescriptor(cd);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyRNNDescriptor(rnn);
}

/* ---- ROOT's TMVA recurrent layers (tmva/tmva/src/DNN/Architectures/Cudnn/RecurrentPropagation.cu) */

/* ROOT's TMVA, written for cuDNN 8.9, passes devSeqLengths NULL to cudnnRNNForward,
   cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8 ("should be null for versions >= 8.9"),
   with an LSTM of SINGLE_INP_BIAS and PADDED_IO, a dropout descriptor set to 0 with states NULL
   but their size given, sequence-major unpacked data of full lengths with a typed 0 fill, hx, hy,
   cx, cy, dhy, dhx, dcy, dcx all NULL with the hidden state's descriptor given for both hDesc and
   cDesc, separate workspaces for training and inference (the training reserve passed to both). */
TEST(compat_rnn_root_tmva_null_sequence_lengths)
{
    enum { IN = 3, H = 2, T = 3, N = 2, G = 4 };
    static const int full[N] = {T, T};
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t rnn;
    cudnnDropoutDescriptor_t drop;
    size_t states_bytes = 0;
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop));
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.0f, NULL, states_bytes, 42));
    CHECK_OK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
                                      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                      CUDNN_DEFAULT_MATH, IN, H, H, 1, drop, CUDNN_RNN_PADDED_IO_ENABLED));
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd;
    float fill = 0;
    CHECK_OK(cudnnCreateRNNDataDescriptor(&xd));
    CHECK_OK(cudnnCreateRNNDataDescriptor(&yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&hd));
    CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, IN, full,
                                       &fill));
    CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, H, full,
                                       &fill));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, (const int[]){1, N, H}, (const int[]){N * H, H, 1}));
    size_t wbytes = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, rnn, &wbytes));
    struct ref_rnn r = {.mode = CUDNN_LSTM, .layers = 1, .dirs = 1, .input = IN, .hidden = H, .proj = H,
                        .T = T, .N = N, .lengths = full};
    int64_t nref = ref_rnn_param_count(&r), nw = (int64_t)(wbytes / sizeof(float));
    float *space = calloc((size_t)nw, sizeof(float));
    int64_t map[4 * G][3];
    int pairs = v8_param_map(h, rnn, &r, G, wbytes, space, map);
    double *wref = tview_fill(nref, 0), *wspace = tview_fill(nw, 0);
    for (int i = 0; i < pairs; i++) {
        CHECK((map[i][2] == 0) == (i % 2 == 1 && i >= 2 * G)); /* only b_R is absent under SINGLE_INP_BIAS */
        for (int64_t j = 0; j < map[i][2]; j++)
            wspace[map[i][0] + j] = wref[map[i][1] + j] = (float)trand_uniform(-0.7, 0.7);
    }
    double *x = tview_random(T * N * IN, -1, 1), *dy = tview_random(T * N * H, -1, 1);
    double *y = malloc(sizeof(double) * T * N * H), *dx = malloc(sizeof(double) * T * N * IN), hy[N * H], cy[N * H];
    double dhx[N * H], dcx[N * H], *dwref = tview_fill(nref, 0), *dwspace = tview_fill(nw, 0), *zeros = tview_fill(nw, 0);
    ref_rnn_forward(&r, wref, x, NULL, NULL, y, hy, cy);
    ref_rnn_backward(&r, wref, x, NULL, NULL, dy, NULL, NULL, dx, dhx, dcx, dwref);
    for (int i = 0; i < pairs; i++)
        for (int64_t j = 0; j < map[i][2]; j++) dwspace[map[i][0] + j] = dwref[map[i][1] + j];
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, wspace, nw), *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, nw);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * IN), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, T * N * H);
    void *py = tbuf_alloc(sizeof(float) * T * N * H), *pdx = tbuf_alloc(sizeof(float) * T * N * IN);
    size_t fws = 0, rs = 0, iws = 0, unused = 0;
    bool ok = pairs == 4 * G && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_TRAINING, xd, &fws, &rs)) &&
              CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_INFERENCE, xd, &iws, &unused));
    void *pfws = tbuf_alloc(fws ? fws : 1), *pis = tbuf_alloc(iws ? iws : 1), *prs = tbuf_alloc(rs ? rs : 1);
    for (int training = 0; training < 2 && ok; training++) {
        tbuf_poison(py, sizeof(float) * T * N * H);
        ok = CHECK_OK(cudnnRNNForward(h, rnn, training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE, NULL, xd,
                                      px, yd, py, hd, NULL, NULL, hd, NULL, NULL, wbytes, pw, training ? fws : iws,
                                      training ? pfws : pis, rs, prs)) &&
             tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * H, 1e-5, training ? "y (training)" : "y (inference)");
    }
    ok = ok && CHECK_OK(cudnnRNNBackwardData_v8(h, rnn, NULL, yd, py, pdy, xd, pdx, hd, NULL, NULL, NULL, hd, NULL, NULL,
                                                NULL, wbytes, pw, fws, pfws, rs, prs)) &&
         tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, T * N * IN, 1e-5, "dx");
    ok = ok && CHECK_OK(cudnnRNNBackwardWeights_v8(h, rnn, CUDNN_WGRAD_MODE_ADD, NULL, xd, px, hd, NULL, yd, py, wbytes,
                                                   pdw, fws, pfws, rs, prs)) &&
         tvalues_check(CUDNN_DATA_FLOAT, pdw, dwspace, nw, 1e-5, "dweightSpace");
    void *bufs[] = {pw, pdw, px, pdy, py, pdx, pfws, pis, prs};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {wref, wspace, x, dy, y, dx, dwref, dwspace, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    free(space);
    cudnnDestroyRNNDataDescriptor(xd);
    cudnnDestroyRNNDataDescriptor(yd);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(drop);
}

/* Knet's attention (the AutoGrad rules that call cudnnMultiHeadAttnBackwardData / Weights) with
   no projections: the training buffers asked for (reserve given), the forward in training with
   the reserve, then cudnnMultiHeadAttnBackwardData with the weights NULL and 0 bytes; no weight
   gradients are asked for (there are none). Julia's axes, windows 0 and typemax(Cint). */
TEST(compat_mha_knet_backward_without_weights)
{
    enum { HEADS = 2, QS = 4, VS = 3, B = 2, TQ = 3, TK = 4, OS = HEADS * VS };
    cudnnHandle_t h = test_handle();
    cudnnAttnDescriptor_t attn;
    CHECK_OK(cudnnCreateAttnDescriptor(&attn));
    CHECK_OK(cudnnSetAttnDescriptor(attn, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_DISABLE_PROJ_BIASES, HEADS, 1.0,
                                    CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, NULL, NULL, QS, QS, VS, 0, 0,
                                    0, 0, TQ, TK, B, 1));
    size_t wbytes = 1, wsbytes = 0, rsbytes = 0;
    bool ok = CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, attn, &wbytes, &wsbytes, &rsbytes)) && CHECK(wbytes == 0);
    const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM,
                                        CUDNN_SEQDATA_VECT_DIM};
    int qlen[B], klen[B];
    for (int i = 0; i < B; i++) qlen[i] = TQ, klen[i] = TK;
    cudnnSeqDataDescriptor_t qd, kd, vd, od;
    cudnnSeqDataDescriptor_t *descs[] = {&qd, &kd, &vd, &od};
    const int T_of[] = {TQ, TK, TK, TQ}, V_of[] = {QS, QS, VS, OS};
    for (int i = 0; i < 4; i++) {
        int dims[4];
        dims[CUDNN_SEQDATA_TIME_DIM] = T_of[i], dims[CUDNN_SEQDATA_BATCH_DIM] = B;
        dims[CUDNN_SEQDATA_BEAM_DIM] = 1, dims[CUDNN_SEQDATA_VECT_DIM] = V_of[i];
        CHECK_OK(cudnnCreateSeqDataDescriptor(descs[i]));
        CHECK_OK(cudnnSetSeqDataDescriptor(*descs[i], CUDNN_DATA_FLOAT, 4, dims, axes, B, i % 3 ? klen : qlen, NULL));
    }
    /* canonical arrays [b][t][vect] (one beam) and the buffers in Julia's order */
    const int sizes[5] = {TQ * QS, TK * QS, TK * VS, TQ * OS, TQ * OS}, Ts[5] = {TQ, TK, TK, TQ, TQ};
    const int Vs[5] = {QS, QS, VS, OS, OS};
    double *canon[5], *mem[5];
    for (int a = 0; a < 5; a++) {
        canon[a] = tview_random(B * sizes[a], -1, 1);
        mem[a] = malloc(sizeof(double) * (size_t)(B * sizes[a]));
        for (int b = 0; b < B; b++)
            for (int t = 0; t < Ts[a]; t++)
                for (int e = 0; e < Vs[a]; e++) {
                    double *c = &canon[a][((int64_t)b * Ts[a] + t) * Vs[a] + e];
                    *c = (float)*c;
                    mem[a][julia_seq_at(B, Ts[a], Vs[a], b, 0, t, e)] = *c;
                }
    }
    int lo[TQ], hi[TQ];
    for (int t = 0; t < TQ; t++) lo[t] = 0, hi[t] = INT_MAX;
    struct ref_mha r = {.heads = HEADS, .scaler = 1.0, .q_size = QS, .k_size = QS, .v_size = VS, .B = B, .M = 1,
                        .Tq = TQ, .Tk = TK, .len_q = qlen, .len_kv = klen, .lo = lo, .hi = hi};
    double *out = malloc(sizeof(double) * B * TQ * OS), *dq = malloc(sizeof(double) * B * TQ * QS);
    double *dk = malloc(sizeof(double) * B * TK * QS), *dv = malloc(sizeof(double) * B * TK * VS);
    ref_mha_forward(&r, canon[0], canon[1], canon[2], NULL, out);
    ref_mha_backward(&r, canon[0], canon[1], canon[2], canon[4], dq, dk, dv, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                     NULL);
    double *want[4] = {out, dq, dk, dv};
    const int wa[4] = {3, 0, 1, 2}; /* the array each result is laid out like */
    double *wantm[4];
    for (int i = 0; i < 4; i++) {
        int a = wa[i];
        wantm[i] = malloc(sizeof(double) * (size_t)(B * sizes[a]));
        for (int b = 0; b < B; b++)
            for (int t = 0; t < Ts[a]; t++)
                for (int e = 0; e < Vs[a]; e++)
                    wantm[i][julia_seq_at(B, Ts[a], Vs[a], b, 0, t, e)] = want[i][((int64_t)b * Ts[a] + t) * Vs[a] + e];
    }
    void *pq = tvalues_upload(CUDNN_DATA_FLOAT, mem[0], B * sizes[0]), *pk = tvalues_upload(CUDNN_DATA_FLOAT, mem[1], B * sizes[1]);
    void *pv = tvalues_upload(CUDNN_DATA_FLOAT, mem[2], B * sizes[2]), *pdo = tvalues_upload(CUDNN_DATA_FLOAT, mem[4], B * sizes[4]);
    void *po = tbuf_alloc(sizeof(float) * B * sizes[3]), *pdq = tbuf_alloc(sizeof(float) * B * sizes[0]);
    void *pdk = tbuf_alloc(sizeof(float) * B * sizes[1]), *pdv = tbuf_alloc(sizeof(float) * B * sizes[2]);
    void *dql = tbuf_from(qlen, sizeof qlen), *dkl = tbuf_from(klen, sizeof klen);
    void *ws = wsbytes ? tbuf_alloc(wsbytes) : NULL, *rs = tbuf_alloc(rsbytes ? rsbytes : 1);
    ok = ok && CHECK_OK(cudnnMultiHeadAttnForward(h, attn, -1, lo, hi, dql, dkl, qd, pq, NULL, kd, pk, vd, pv, od, po, 0,
                                                  NULL, wsbytes, ws, rsbytes, rs)) &&
         tvalues_check(CUDNN_DATA_FLOAT, po, wantm[0], B * sizes[3], 1e-5, "out (training)");
    ok = ok && CHECK_OK(cudnnMultiHeadAttnBackwardData(h, attn, lo, hi, dql, dkl, od, pdo, qd, pdq, pq, kd, pdk, pk, vd,
                                                       pdv, pv, 0, NULL, wsbytes, ws, rsbytes, rs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdq, wantm[1], B * sizes[0], 1e-5, "dqueries") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdk, wantm[2], B * sizes[1], 1e-5, "dkeys") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdv, wantm[3], B * sizes[2], 1e-5, "dvalues");
    if (ws) tbuf_free(ws);
    void *bufs[] = {pq, pk, pv, pdo, po, pdq, pdk, pdv, dql, dkl, rs};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    for (int a = 0; a < 5; a++) free(canon[a]), free(mem[a]);
    for (int i = 0; i < 4; i++) free(want[i]), free(wantm[i]);
    for (int i = 0; i < 4; i++) cudnnDestroySeqDataDescriptor(*descs[i]);
    cudnnDestroyAttnDescriptor(attn);
}
