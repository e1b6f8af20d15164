/* compat_rnn.c: call patterns of real programs (docs/compatibility.md) for the RNN calls that the
   RNN tests do not make, each as the program makes it (TensorFlow, CUDA.jl, SharpNet, ONNX
   Runtime, Korali, ROOT's TMVA, Flashlight), its result against the double reference of
   tests/ref/rnn.c; compat_rnn_more.c holds the rest of the callers, compat_rnn_sample.c NVIDIA's
   RNN samples. */
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
    trnn_data_descs_create(&xd, &yd, &hd, NULL);
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
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * H, RNN_TOL, "y (padding filled with 0)");
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, phy, hy, N * H, RNN_TOL, "hy");
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pcy, cy, N * H, RNN_TOL, "cy");
        tbuf_free(pws);
        tbuf_free(prs);
    }
    void *bufs[] = {px, phx, pcx, pw, plen, py, phy, pcy};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(x), free(hx), free(cx), free(y), free(hy), free(cy), free(wref), free(space);
    trnn_data_descs_destroy(xd, yd, hd, NULL);
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
    void *states;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.0f, 0, &states);
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
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
    double *y = malloc(sizeof(double) * N * H), *hy = malloc(sizeof(double) * N * H);
    double *cy = malloc(sizeof(double) * N * H), *dx = malloc(sizeof(double) * N * IN);
    double *dhx = malloc(sizeof(double) * N * H), *dcx = malloc(sizeof(double) * N * H);
    double *dwref = tview_fill(nref, 0), *dblob = malloc(sizeof(double) * (size_t)len);
    ref_rnn_forward(&r, wref, x, hx, cx, y, hy, cy);
    ref_rnn_backward(&r, wref, x, hx, cx, dy, NULL, NULL, dx, dhx, dcx, dwref);
    for (int g = 0; g < G; g++)
        for (int row = 0; row < H; row++) {
            for (int i = 0; i < IN; i++)
                dblob[(g * H + row) * IN + i] = dwref[ref_rnn_param(&r, 0, REF_RNN_W, g) + row * IN + i];
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
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, N * H, RNN_TOL, "y") &&
         tvalues_check(CUDNN_DATA_FLOAT, phy, hy, N * H, RNN_TOL, "hy") &&
         tvalues_check(CUDNN_DATA_FLOAT, pcy, cy, N * H, RNN_TOL, "cy");
    ok = ok && CHECK_OK(cudnnRNNBackwardData(h, rnn, 1, &yd, py, &yd, pdy, NULL, NULL, NULL, NULL, wd, pw, hd, phx, hd,
                                             pcx, &xd, pdx, hd, pdhx, hd, pdcx, pws, ws, prs, rs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, N * IN, RNN_TOL, "dx") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdhx, dhx, N * H, RNN_TOL, "dhx") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdcx, dcx, N * H, RNN_TOL, "dcx");
    ok = ok && CHECK_OK(cudnnRNNBackwardWeights(h, rnn, 1, &xd, px, hd, phx, &yd, py, pws, ws, wd, pdw, prs, rs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdw, dblob, len, RNN_TOL, "dw (the blob's order)");
    void *bufs[] = {pw, px, phx, pcx, pdy, pdw, py, phy, pcy, pdx, pdhx, pdcx, pws, prs};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {wref, blob, x, hx, cx, dy, y, hy, cy, dx, dhx, dcx, dwref, dblob, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(hd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyRNNDescriptor(rnn);
    tdropout_free(drop, states);
}

/* ---- SharpNet's RNN layer (SharpNet/Layers/RecurrentLayer.cs) ------------------------------------ */

/* The weights of a one-layer unidirectional network of G gates (at most 4) for the v8 calls: for
   every matrix and bias of pseudo-layer 0, its offset (elements) in the weight space and in the
   reference's layout and its element count (0 for a parameter the network lacks), through
   cudnnGetRNNWeightParams; random values in [-range, range] (rounded to float) written at both
   places; the gradients' arrays zeroed, v8_weights_dw putting dwref's values at dwspace's places.
   pairs: the pairs mapped (4 G), or -1 when a query failed. */
struct v8_weights {
    int64_t nref, nw; /* elements of the reference's layout and of the weight space */
    int pairs;
    int64_t map[16][3]; /* per pair: the weight space's offset, the reference's, the count */
    double *wref, *wspace, *dwref, *dwspace;
};

static void v8_weights_init(struct v8_weights *v, cudnnHandle_t h, cudnnRNNDescriptor_t rnn,
                            const struct ref_rnn *r, int G, size_t wbytes, double range)
{
    v->nref = ref_rnn_param_count(r), v->nw = (int64_t)(wbytes / sizeof(float));
    v->wref = tview_fill(v->nref, 0), v->wspace = tview_fill(v->nw, 0);
    v->dwref = tview_fill(v->nref, 0), v->dwspace = tview_fill(v->nw, 0);
    float *space = calloc((size_t)v->nw, sizeof(float));
    cudnnTensorDescriptor_t md, bd;
    cudnnCreateTensorDescriptor(&md);
    cudnnCreateTensorDescriptor(&bd);
    int64_t(*map)[3] = v->map;
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
    free(space);
    v->pairs = n;
    for (int i = 0; i < n; i++)
        for (int64_t j = 0; j < map[i][2]; j++)
            v->wspace[map[i][0] + j] = v->wref[map[i][1] + j] = (float)trand_uniform(-range, range);
}

static void v8_weights_dw(struct v8_weights *v)
{
    for (int i = 0; i < v->pairs; i++)
        for (int64_t j = 0; j < v->map[i][2]; j++) v->dwspace[v->map[i][0] + j] = v->dwref[v->map[i][1] + j];
}

static void v8_weights_free(struct v8_weights *v)
{
    free(v->wref), free(v->wspace), free(v->dwref), free(v->dwspace);
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
    void *states;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.0f, 7, &states);
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
    CHECK_OK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                      CUDNN_DEFAULT_MATH, IN, H, H, 1, drop, CUDNN_RNN_PADDED_IO_ENABLED));
    struct ref_rnn r = {.mode = CUDNN_LSTM, .layers = 1, .dirs = 1, .input = IN, .hidden = H, .proj = H,
                        .T = T, .N = N, .lengths = lengths};
    size_t wbytes = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, rnn, &wbytes));
    struct v8_weights v;
    v8_weights_init(&v, h, rnn, &r, G, wbytes, 0.6);
    cudnnRNNDataDescriptor_t xd, yd;
    trnn_data_descs_create(&xd, &yd, NULL, NULL);
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
    ref_rnn_forward(&r, v.wref, x, NULL, NULL, y, hy, cy);
    ref_rnn_backward(&r, v.wref, x, NULL, NULL, dy, NULL, NULL, dx, dhx, dcx, v.dwref);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            for (int e = 0; e < H; e++) yb[(n * T + t) * H + e] = y[(t * N + n) * H + e];
            for (int e = 0; e < IN; e++) dxb[(n * T + t) * IN + e] = dx[(t * N + n) * IN + e];
        }
    v8_weights_dw(&v);
    double *zeros = tview_fill(v.nw, 0);
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, v.wspace, v.nw), *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, v.nw);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, xb, T * N * IN), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dyb, T * N * H);
    void *py = tbuf_alloc(sizeof(float) * T * N * H), *pdx = tbuf_alloc(sizeof(float) * T * N * IN);
    void *plen = tbuf_from(lengths, sizeof lengths);
    size_t ws = 0, rs = 0;
    bool ok = v.pairs == 4 * G && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs));
    void *pws = tbuf_alloc(ws ? ws : 1), *prs = tbuf_alloc(rs ? rs : 1);
    ok = ok && CHECK_OK(cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_TRAINING, plen, xd, px, yd, py, NULL, NULL, NULL, NULL,
                                        NULL, NULL, wbytes, pw, ws, pws, rs, prs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, yb, T * N * H, RNN_TOL, "y");
    ok = ok && CHECK_OK(cudnnRNNBackwardData_v8(h, rnn, plen, yd, py, pdy, xd, pdx, NULL, NULL, NULL, NULL, NULL, NULL,
                                                NULL, NULL, wbytes, pw, ws, pws, rs, prs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdx, dxb, T * N * IN, RNN_TOL, "dx");
    ok = ok && CHECK_OK(cudnnRNNBackwardWeights_v8(h, rnn, CUDNN_WGRAD_MODE_ADD, plen, xd, px, NULL, NULL, yd, py,
                                                   wbytes, pdw, ws, pws, rs, prs));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdw, v.dwspace, v.nw, RNN_TOL, "dweightSpace");
    void *bufs[] = {pw, pdw, px, pdy, py, pdx, plen, pws, prs};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {x, dy, xb, dyb, y, yb, dx, dxb, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    v8_weights_free(&v);
    trnn_data_descs_destroy(xd, yd, NULL, NULL);
    cudnnDestroyRNNDescriptor(rnn);
    tdropout_free(drop, states);
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
    void *states;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0.0f, 1, &states);
    CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
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
            double *w_ = wref + ref_rnn_param(&r, d, REF_RNN_W, g), *r_ = wref + ref_rnn_param(&r, d, REF_RNN_R, g);
            double *bw = wref + ref_rnn_param(&r, d, REF_RNN_BW, g), *br = wref + ref_rnn_param(&r, d, REF_RNN_BR, g);
            for (int i = 0; i < H * IN; i++)
                onnx_w[(d * G + o) * H * IN + i] = (float)(w_[i] = (float)trand_uniform(-0.7, 0.7));
            for (int i = 0; i < H * H; i++)
                onnx_r[(d * G + o) * H * H + i] = (float)(r_[i] = (float)trand_uniform(-0.7, 0.7));
            for (int i = 0; i < H; i++) {
                onnx_b[(d * 2 * G + o) * H + i] = (float)(bw[i] = (float)trand_uniform(-0.5, 0.5));
                onnx_b[(d * 2 * G + G + o) * H + i] = (float)(br[i] = (float)trand_uniform(-0.5, 0.5));
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
            trnn_data_descs_create(&xdd, &ydd, NULL, NULL);
            CHECK_OK(cudnnSetRNNDataDescriptor(xdd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, IN,
                                               ragged, &fill));
            CHECK_OK(cudnnSetRNNDataDescriptor(ydd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N,
                                               D * H, ragged, &fill));
            ok = CHECK_OK(cudnnRNNForwardInferenceEx(h, rnn, xdd, px, hd, NULL, hd, NULL, wd, pw, ydd, py, hd, phy, hd,
                                                     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, pws, ws));
            trnn_data_descs_destroy(xdd, ydd, NULL, NULL);
        }
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * D * H, RNN_TOL, with_lengths ? "Ex y" : "y") &&
             tvalues_check(CUDNN_DATA_FLOAT, phy, hy, D * N * H, RNN_TOL, with_lengths ? "Ex hy" : "hy");
    }
    void *bufs[] = {pw, px, py, phy, pws};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(wref), free(x), free(y);
    for (int i = 0; i < 4; i++) cudnnDestroyTensorDescriptor(*descs[i]);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyFilterDescriptor(region);
    cudnnDestroyRNNDescriptor(rnn);
    tdropout_free(drop, states);
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
    struct v8_weights v;
    v8_weights_init(&v, h, rnn, &r, G, wbytes, 0.7);
    for (int i = 0; i < v.pairs; i++)
        CHECK((v.map[i][2] == 0) == (i % 2 == 1 && i < 2 * G)); /* only b_W is absent under SINGLE_REC_BIAS */
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd;
    trnn_data_descs_create(&xd, &yd, &hd, NULL);
    CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 1, N, C, ones, NULL));
    CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 1, N, C, ones, NULL));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, (const int[]){1, N, C}, (const int[]){N * C, C, 1}));
    double *x = tview_random(T * N * C, -1, 1), *dy = tview_random(T * N * C, -1, 1);
    double *y = malloc(sizeof(double) * T * N * C), *dx = malloc(sizeof(double) * T * N * C);
    double hy[N * C], dhx[N * C], *zeros = tview_fill(v.nw, 0);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * C), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, T * N * C);
    ref_rnn_forward(&r, v.wref, x, NULL, NULL, y, hy, NULL);
    ref_rnn_backward(&r, v.wref, x, NULL, NULL, dy, NULL, NULL, dx, dhx, NULL, v.dwref);
    v8_weights_dw(&v);
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, v.wspace, v.nw), *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, v.nw);
    void *py = tbuf_alloc(sizeof(float) * T * N * C), *pdx = tbuf_alloc(sizeof(float) * T * N * C);
    void *plen = tbuf_from(ones, sizeof ones), *hs[T], *dh[T], *ws[T], *rs[T];
    size_t wsb = 0, rsb = 0;
    bool ok = v.pairs == 4 * G && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_TRAINING, xd, &wsb, &rsb));
    const size_t step = sizeof(float) * N * C;
    for (int t = 0; t < T; t++) {
        hs[t] = tbuf_alloc(step), dh[t] = tbuf_alloc(step);
        ws[t] = tbuf_alloc(wsb ? wsb : 1), rs[t] = tbuf_alloc(rsb ? rsb : 1);
    }
    for (int t = 0; t < T && ok; t++)
        ok = CHECK_OK(cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_TRAINING, plen, xd, (char *)px + t * step, yd,
                                      (char *)py + t * step, hd, t ? hs[t - 1] : NULL, hs[t], NULL, NULL, NULL, wbytes,
                                      pw, wsb, ws[t], rsb, rs[t]));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * C, RNN_TOL, "y, step by step") &&
         tvalues_check(CUDNN_DATA_FLOAT, hs[T - 1], hy, N * C, RNN_TOL, "the last step's hy");
    for (int t = T - 1; t >= 0 && ok; t--)
        ok = CHECK_OK(cudnnRNNBackwardData_v8(h, rnn, plen, yd, (char *)py + t * step, (char *)pdy + t * step, xd,
                                              (char *)pdx + t * step, hd, t ? hs[t - 1] : NULL,
                                              t == T - 1 ? NULL : dh[t], t ? dh[t - 1] : NULL, NULL, NULL, NULL, NULL,
                                              wbytes, pw, wsb, ws[t], rsb, rs[t])) &&
             CHECK_OK(cudnnRNNBackwardWeights_v8(h, rnn, CUDNN_WGRAD_MODE_ADD, plen, xd, (char *)px + t * step, hd,
                                                 t ? hs[t - 1] : NULL, yd, (char *)py + t * step, wbytes, pdw, wsb,
                                                 ws[t], rsb, rs[t]));
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, T * N * C, RNN_TOL, "dx through time, step by step") &&
         tvalues_check(CUDNN_DATA_FLOAT, pdw, v.dwspace, v.nw, RNN_TOL, "dweightSpace summed over the steps");
    for (int t = 0; t < T; t++) tbuf_free(hs[t]), tbuf_free(dh[t]), tbuf_free(ws[t]), tbuf_free(rs[t]);
    void *bufs[] = {px, pdy, pw, pdw, py, pdx, plen};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {x, dy, y, dx, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    v8_weights_free(&v);
    trnn_data_descs_destroy(xd, yd, hd, NULL);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(drop);
}

/* ---- TensorFlow's v8 path (openxla/xla xla/stream_executor/cuda/cuda_dnn.cc) ---------------------- */

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
    trnn_data_descs_create(&xd, &yd, &hd, &cd);
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
    ok = ok && tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * P, RNN_TOL, "y (projected)") &&
         tvalues_check(CUDNN_DATA_FLOAT, phy, hy, N * P, RNN_TOL, "hy") &&
         tvalues_check(CUDNN_DATA_FLOAT, pcy, cy, N * H, RNN_TOL, "cy");
    void *bufs[] = {pw, px, py, phy, pcy, plen, pws};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(wref), free(wspace), free(x), free(y);
    cudnnDestroyTensorDescriptor(md);
    cudnnDestroyTensorDescriptor(bd);
    trnn_data_descs_destroy(xd, yd, hd, cd);
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
    trnn_data_descs_create(&xd, &yd, &hd, NULL);
    CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, IN, full,
                                       &fill));
    CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, H, full,
                                       &fill));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, (const int[]){1, N, H}, (const int[]){N * H, H, 1}));
    size_t wbytes = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, rnn, &wbytes));
    struct ref_rnn r = {.mode = CUDNN_LSTM, .layers = 1, .dirs = 1, .input = IN, .hidden = H, .proj = H,
                        .T = T, .N = N, .lengths = full};
    struct v8_weights v;
    v8_weights_init(&v, h, rnn, &r, G, wbytes, 0.7);
    for (int i = 0; i < v.pairs; i++)
        CHECK((v.map[i][2] == 0) == (i % 2 == 1 && i >= 2 * G)); /* only b_R is absent under SINGLE_INP_BIAS */
    double *x = tview_random(T * N * IN, -1, 1), *dy = tview_random(T * N * H, -1, 1);
    double *y = malloc(sizeof(double) * T * N * H), *dx = malloc(sizeof(double) * T * N * IN), hy[N * H], cy[N * H];
    double dhx[N * H], dcx[N * H], *zeros = tview_fill(v.nw, 0);
    ref_rnn_forward(&r, v.wref, x, NULL, NULL, y, hy, cy);
    ref_rnn_backward(&r, v.wref, x, NULL, NULL, dy, NULL, NULL, dx, dhx, dcx, v.dwref);
    v8_weights_dw(&v);
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, v.wspace, v.nw), *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, v.nw);
    void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * IN), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, T * N * H);
    void *py = tbuf_alloc(sizeof(float) * T * N * H), *pdx = tbuf_alloc(sizeof(float) * T * N * IN);
    size_t fws = 0, rs = 0, iws = 0, unused = 0;
    bool ok = v.pairs == 4 * G && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_TRAINING, xd, &fws, &rs)) &&
              CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_INFERENCE, xd, &iws, &unused));
    void *pfws = tbuf_alloc(fws ? fws : 1), *pis = tbuf_alloc(iws ? iws : 1), *prs = tbuf_alloc(rs ? rs : 1);
    for (int training = 0; training < 2 && ok; training++) {
        tbuf_poison(py, sizeof(float) * T * N * H);
        ok = CHECK_OK(cudnnRNNForward(h, rnn, training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE, NULL, xd,
                                      px, yd, py, hd, NULL, NULL, hd, NULL, NULL, wbytes, pw, training ? fws : iws,
                                      training ? pfws : pis, rs, prs)) &&
             tvalues_check(CUDNN_DATA_FLOAT, py, y, T * N * H, RNN_TOL, training ? "y (training)" : "y (inference)");
    }
    ok = ok && CHECK_OK(cudnnRNNBackwardData_v8(h, rnn, NULL, yd, py, pdy, xd, pdx, hd, NULL, NULL, NULL, hd, NULL, NULL,
                                                NULL, wbytes, pw, fws, pfws, rs, prs)) &&
         tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, T * N * IN, RNN_TOL, "dx");
    ok = ok && CHECK_OK(cudnnRNNBackwardWeights_v8(h, rnn, CUDNN_WGRAD_MODE_ADD, NULL, xd, px, hd, NULL, yd, py, wbytes,
                                                   pdw, fws, pfws, rs, prs)) &&
         tvalues_check(CUDNN_DATA_FLOAT, pdw, v.dwspace, v.nw, RNN_TOL, "dweightSpace");
    void *bufs[] = {pw, pdw, px, pdy, py, pdx, pfws, pis, prs};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {x, dy, y, dx, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    v8_weights_free(&v);
    trnn_data_descs_destroy(xd, yd, hd, NULL);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(drop);
}

/* ---- Flashlight (flashlight/fl/autograd/backend/cuda/RNN.cpp, CudnnUtils.cpp) ----------------- */

/* Flashlight's 4-D descriptors: ArrayFire's dims (d0, d1, d2, d3) reversed into packed
   {d3, d2, d1, d0} (TensorDescriptor, FilterDescriptor). */
static cudnnTensorDescriptor_t flashlight_tensor(int d0, int d1, int d2, int d3)
{
    cudnnTensorDescriptor_t t;
    const int dims[4] = {d3, d2, d1, d0}, strides[4] = {d2 * d1 * d0, d1 * d0, d0, 1};
    CHECK_OK(cudnnCreateTensorDescriptor(&t));
    CHECK_OK(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, dims, strides));
    return t;
}

/* Flashlight's RNN descriptor: a dropout descriptor on the thread's one states buffer (set with
   seed 0 the first time, cudnnRestoreDropoutDescriptor every later time), then
   cudnnSetRNNDescriptor_v6 (LINEAR_INPUT, ALGO_STANDARD) and cudnnSetRNNMatrixMathType. */
static cudnnRNNDescriptor_t flashlight_rnn(const struct rnn_case *c, bool first, void *states, size_t bytes,
                                           cudnnDropoutDescriptor_t *dd)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    CHECK_OK(cudnnCreateDropoutDescriptor(dd));
    if (first) CHECK_OK(cudnnSetDropoutDescriptor(*dd, h, 0, states, bytes, 0));
    else CHECK_OK(cudnnRestoreDropoutDescriptor(*dd, h, 0, states, bytes, 0));
    CHECK_OK(cudnnCreateRNNDescriptor(&d));
    CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, c->hidden, c->layers, *dd, CUDNN_LINEAR_INPUT,
                                      c->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, c->mode,
                                      CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetRNNMatrixMathType(d, CUDNN_DEFAULT_MATH));
    return d;
}

/* Flashlight's rnn and rnnBackward: the legacy calls with every descriptor 4-D as its helpers
   make them: the step tensors {batch, size, 1, 1}, the states {layers * dirs, batch, hidden, 1}
   given even where the state is absent (hx, cx NULL; a GRU's cxDesc and cyDesc too), the weights
   a filter {1, 1, 1, count}; the backward builds a second RNN descriptor on a second dropout
   descriptor restored onto the same states buffer, and runs cudnnRNNBackwardData and
   cudnnRNNBackwardWeights through it with the forward's reserve. The descriptors replace the
   harness's own in a run it set up; the network's dropout is 0 here, so that the results can be
   held to the reference. */
TEST(compat_rnn_flashlight_4d_descriptors_second_rnn_descriptor)
{
    static const int lengths[3] = {4, 4, 4};
    static const cudnnRNNMode_t modes[] = {CUDNN_LSTM, CUDNN_GRU};
    cudnnHandle_t h = test_handle();
    size_t bytes = 0;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &bytes));
    void *states = tbuf_alloc(bytes);
    for (size_t m = 0; m < TLEN(modes); m++) {
        const struct rnn_case c = {.name = "flashlight", .mode = modes[m], .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                                   .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                   .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 4, .N = 3, .lengths = lengths,
                                   .dtype = CUDNN_DATA_FLOAT, .api = API_LEGACY};
        struct rnn_run u;
        cudnnDropoutDescriptor_t bwd_drop = NULL;
        if (rnn_run_init(&u, &c)) {
            cudnnDestroyRNNDescriptor(u.d);
            u.d = flashlight_rnn(&c, m == 0, states, bytes, &u.dd);
            u.d_bwd = flashlight_rnn(&c, false, states, bytes, &bwd_drop);
            for (int t = 0; t < c.T; t++) {
                cudnnDestroyTensorDescriptor(u.xs[t]);
                cudnnDestroyTensorDescriptor(u.ys[t]);
                u.xs[t] = flashlight_tensor(1, 1, c.input, c.N);
                u.ys[t] = flashlight_tensor(1, 1, c.dirs * c.hidden, c.N);
            }
            cudnnDestroyTensorDescriptor(u.hd);
            cudnnDestroyTensorDescriptor(u.cd);
            u.hd = flashlight_tensor(1, c.hidden, c.N, c.layers * c.dirs);
            u.cd = flashlight_tensor(1, c.hidden, c.N, c.layers * c.dirs);
            size_t params = 0;
            CHECK_OK(cudnnGetRNNParamsSize(h, u.d, u.xs[0], &params, CUDNN_DATA_FLOAT));
            CHECK(params == u.wbytes);
            const int wdims[4] = {1, 1, 1, (int)(params / sizeof(float))};
            CHECK_OK(cudnnSetFilterNdDescriptor(u.wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, wdims));
            rnn_check_run(&u);
        }
        rnn_run_free(&u);
        cudnnDestroyDropoutDescriptor(bwd_drop);
    }
    tbuf_free(states);
}
