/* compat_rnn_v8.c: the v8 RNN calls (cudnnRNNForward, cudnnRNNBackwardData_v8,
   cudnnRNNBackwardWeights_v8) as more programs make them (JAX's RNN custom call, CUDA.jl's
   cudnnRNNForward with its defaults and its test matrix, ccv's LSTM command), each as the
   program makes it, against the double reference of tests/ref/rnn.c. (compat_rnn.c,
   compat_rnn_more.c: the other RNN patterns.) */
#include "desc_util.h"
#include "ref/rnn.h"
#include "rnn_harness.h"
#include "tensors.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

/* float results: the RNN tests' tolerance (rnn_harness.c) */
#define RNN_TOL rnn_tol_of(CUDNN_DATA_FLOAT)

/* ---- JAX (jaxlib/gpu/rnn_kernels.cc, jax.experimental.rnn) ------------------------------------ */

/* JAX's RNN descriptor as every one of its calls builds it anew: a dropout descriptor set with
   **states NULL and stateSizeInBytes the cudnnDropoutGetStatesSize** (seed 123, JAX's default
   probability 0), cudnnSetRNNDescriptor_v8 (STANDARD, LSTM, DOUBLE_BIAS, LINEAR_INPUT, FLOAT data
   and math precision, FMA_MATH without TF32, projSize = hiddenSize, PADDED_IO_ENABLED). */
static bool jax_rnn_desc(cudnnHandle_t h, const struct rnn_case *c, cudnnRNNDescriptor_t d, cudnnDropoutDescriptor_t dd)
{
    size_t state_size = 0;
    return CHECK_OK(cudnnDropoutGetStatesSize(h, &state_size)) &&
           CHECK_OK(cudnnSetDropoutDescriptor(dd, h, 0.0f, NULL, state_size, 123)) &&
           CHECK_OK(cudnnSetRNNDescriptor_v8(d, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                             c->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                             CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH,
                                             c->input, c->hidden, c->hidden, c->layers, dd,
                                             CUDNN_RNN_PADDED_IO_ENABLED));
}

/* jaxlib's LSTM custom calls: the workspace and reserve sizes computed once, ahead of the calls,
   from a data descriptor whose sequences are **all max_seq_length long** and "rounded up" by
   `size += size % 4` (larger than asked for); at run time the sequence lengths copied from the
   device to the host for the BATCH_MAJOR_UNPACKED data descriptors (paddingFill a float 0) and the
   device copy passed as devSeqLengths; h and c described by **two descriptors** of
   {dirs layers, batch, hidden} with packed strides; cudnnRNNForward in TRAINING with every state
   (h_n and c_n always asked for), then in the backward custom call cudnnRNNBackwardData_v8 given
   dh_n and dc_n and cudnnRNNBackwardWeights_v8 ADDing into a zeroed dw, each on a descriptor built
   again. The weights are the flat buffer jax.experimental.rnn packs itself (per layer and
   direction W_ih then W_hh, the biases after all of them): the layout the getters report here.
   y's padding is the fill, 0. */
TEST(compat_rnn_jax_padded_batch_major_null_states)
{
    static const int lengths[3] = {4, 2, 3};
    const struct rnn_case c = {.name = "jax", .mode = CUDNN_LSTM, .dirs = 2, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                               .layers = 2, .input = 3, .hidden = 4, .proj = 4, .T = 4, .N = 3, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_V8};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    const int width = c.dirs * c.hidden, hn = c.layers * c.dirs * c.N;
    /* RnnComputeWorkspaceReserveSpaceSizes: its own descriptors, every sequence max_seq_length */
    cudnnRNNDescriptor_t d;
    cudnnDropoutDescriptor_t dd;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd;
    trnn_data_descs_create(&xd, &yd, &hd, &cd);
    CHECK_OK(cudnnCreateRNNDescriptor(&d));
    CHECK_OK(cudnnCreateDropoutDescriptor(&dd));
    const int full[3] = {c.T, c.T, c.T};
    float padding = 0.0f;
    size_t ws = 0, rs = 0, wbytes = 0;
    bool ok = jax_rnn_desc(h, &c, d, dd) &&
              CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, full, &padding)) &&
              CHECK_OK(cudnnGetRNNTempSpaceSizes(h, d, CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs));
    ws += ws % 4, rs += rs % 4;
    /* the forward custom call: the descriptors again, the lengths the batch has */
    const int dims[3] = {hn / c.N, c.N, c.hidden}, strides[3] = {c.N * c.hidden, c.hidden, 1};
    ok = ok && jax_rnn_desc(h, &c, d, dd) &&
         CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, lengths, &padding)) &&
         CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, width, lengths, &padding)) &&
         CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, dims, strides)) &&
         CHECK_OK(cudnnSetTensorNdDescriptor(cd, CUDNN_DATA_FLOAT, 3, dims, strides)) &&
         CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &wbytes)) && CHECK(wbytes == u.wbytes);
    void *pws = tbuf_alloc(ws ? ws : 1), *prs = tbuf_alloc(rs ? rs : 1);
    struct fwd_out want;
    rnn_reference_forward(&u, &want);
    struct rnn_train_bufs b;
    rnn_train_bufs_init(&b, &u);
    ok = ok && CHECK_OK(cudnnRNNForward(h, d, CUDNN_FWD_MODE_TRAINING, u.plen, xd, u.px, yd, b.py, hd, u.phx, b.phy,
                                        cd, u.pcx, b.pcy, wbytes, u.pw, ws, pws, rs, prs));
    if (ok) {
        ok = rnn_train_y_matches(&u, &b, want.y, "JAX y");
        double *y = tvalues_download(CUDNN_DATA_FLOAT, b.py, (int64_t)c.T * c.N * width);
        bool fill = true;
        for (int n = 0; n < c.N; n++)
            for (int t = lengths[n]; t < c.T; t++)
                for (int v = 0; v < width; v++) fill = fill && y[((int64_t)n * c.T + t) * width + v] == 0;
        CHECK(fill);
        double *hy = tvalues_download(CUDNN_DATA_FLOAT, b.phy, (int64_t)hn * c.hidden);
        double *cy = tvalues_download(CUDNN_DATA_FLOAT, b.pcy, (int64_t)hn * c.hidden);
        ok = ok && CHECK(rnn_compare("JAX h_n", &c, hy, want.hy, (int64_t)hn * c.hidden, RNN_TOL)) &&
             CHECK(rnn_compare("JAX c_n", &c, cy, want.cy, (int64_t)hn * c.hidden, RNN_TOL));
        free(y), free(hy), free(cy);
    }
    /* the backward custom call: the descriptors built again */
    ok = ok && jax_rnn_desc(h, &c, d, dd) &&
         CHECK_OK(cudnnRNNBackwardData_v8(h, d, u.plen, yd, b.py, b.pdy, xd, b.pdx, hd, u.phx, b.pdhy, b.pdhx, cd,
                                          u.pcx, b.pdcy, b.pdcx, wbytes, u.pw, ws, pws, rs, prs)) &&
         CHECK_OK(cudnnRNNBackwardWeights_v8(h, d, CUDNN_WGRAD_MODE_ADD, u.plen, xd, u.px, hd, u.phx, yd, b.py, wbytes,
                                             b.pdw, ws, pws, rs, prs));
    if (ok) rnn_check_train_backward(&u, b.dy, b.dhy, b.dcy, b.pdx, b.pdw, b.zeros, "JAX");
    rnn_train_bufs_free(&b);
    tbuf_free(pws), tbuf_free(prs);
    cudnnDestroyRNNDescriptor(d);
    cudnnDestroyDropoutDescriptor(dd);
    trnn_data_descs_destroy(xd, yd, hd, cd);
    rnn_fwd_free(&want);
    rnn_run_free(&u);
}

/* ---- CUDA.jl's v8 RNN (lib/cudnn/src/rnn.jl, cudnnRNNForward with its defaults) ------------- */

/* CUDA.jl's cudnnGetRNNWeightParams(w, rnnDesc): the descriptor read back with
   cudnnGetRNNDescriptor_v8 (every output asked for), then for every pseudo-layer **every
   parameter id 0..8 of an LSTM, the projection's 8 included without a projection**, into one
   matrix and one bias descriptor reused throughout; **each read back with
   cudnnGetTensorNdDescriptor whether or not its address is NULL**, and the types asserted equal
   to the data's. The present ones tile the weight space. */
static bool cudajl_weight_params(cudnnHandle_t h, const struct rnn_run *u)
{
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias;
    cudnnDirectionMode_t dir;
    cudnnRNNInputMode_t input_mode;
    cudnnDataType_t dt, prec;
    cudnnMathType_t math;
    int32_t input, hidden, proj, layers;
    cudnnDropoutDescriptor_t drop;
    uint32_t aux;
    bool ok = CHECK_OK(cudnnGetRNNDescriptor_v8(u->d, &algo, &cell, &bias, &dir, &input_mode, &dt, &prec, &math, &input,
                                                &hidden, &proj, &layers, &drop, &aux)) &&
              CHECK(cell == CUDNN_LSTM && proj == hidden && aux == CUDNN_RNN_PADDED_IO_ENABLED);
    cudnnTensorDescriptor_t md, bd;
    CHECK_OK(cudnnCreateTensorDescriptor(&md));
    CHECK_OK(cudnnCreateTensorDescriptor(&bd));
    const int pseudo = layers * (dir == CUDNN_BIDIRECTIONAL ? 2 : 1);
    int64_t covered = 0;
    for (int l = 0; l < pseudo && ok; l++)
        for (int id = 0; id < 9 && ok; id++) {
            void *ma = NULL, *ba = NULL;
            cudnnDataType_t mt, bt;
            int mn = -1, bn = -1, mdims[8], bdims[8], mstr[8], bstr[8];
            ok = CHECK_OK(cudnnGetRNNWeightParams(h, u->d, l, u->wbytes, u->pw, id, md, &ma, bd, &ba)) &&
                 CHECK_OK(cudnnGetTensorNdDescriptor(md, 8, &mt, &mn, mdims, mstr)) &&
                 CHECK_OK(cudnnGetTensorNdDescriptor(bd, 8, &bt, &bn, bdims, bstr)) &&
                 CHECK(mt == CUDNN_DATA_FLOAT && bt == CUDNN_DATA_FLOAT);
            if (ok && id == 8) ok = CHECK(ma == NULL && ba == NULL);
            if (ok && ma != NULL) covered += (int64_t)mdims[0] * mdims[1] * mdims[2];
            if (ok && ba != NULL) covered += (int64_t)bdims[0] * bdims[1] * bdims[2];
        }
    cudnnDestroyTensorDescriptor(md);
    cudnnDestroyTensorDescriptor(bd);
    return ok && CHECK(covered == u->wcount);
}

/* CUDA.jl's cudnnRNNForward with its defaults: SEQ_MAJOR_UNPACKED data (a Julia [X, B, T] array)
   of uniform lengths, **paddingFill C_NULL**, PADDED_IO_ENABLED, mathPrec the data type; h and c
   described by **cudnnSetTensorNdDescriptorEx(NCHW, 3 dims)**; **hx, cx, hy and cy CU_NULL**
   unless given or asked for; the weight array's whole size passed; workspace and reserve from
   cudnnGetRNNTempSpaceSizes, **CU_NULL with size 0** when not needed (the reserve in inference).
   Inference with every state NULL, then a training forward asked for hy and cy (hx, cx still
   NULL). */
TEST(compat_rnn_cudajl_v8_defaults_null_states)
{
    static const int lengths[3] = {4, 4, 4};
    const struct rnn_case c = {.name = "cuda.jl", .mode = CUDNN_LSTM, .dirs = 1, .input_mode = CUDNN_LINEAR_INPUT,
                               .bias = CUDNN_RNN_DOUBLE_BIAS, .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                               .layers = 2, .input = 3, .hidden = 5, .proj = 5, .T = 4, .N = 3, .lengths = lengths,
                               .dtype = CUDNN_DATA_FLOAT, .states = false, .api = API_V8};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd;
    trnn_data_descs_create(&xd, &yd, &hd, &cd);
    const int hdims[3] = {c.layers, c.N, c.hidden};
    bool ok = cudajl_weight_params(h, &u) &&
              CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, lengths, NULL)) &&
              CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.hidden, lengths, NULL)) &&
              CHECK_OK(cudnnSetTensorNdDescriptorEx(hd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 3, hdims)) &&
              CHECK_OK(cudnnSetTensorNdDescriptorEx(cd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 3, hdims));
    struct fwd_out want;
    rnn_reference_forward(&u, &want);
    const int64_t ny = (int64_t)c.T * c.N * c.hidden, nh = (int64_t)c.layers * c.N * c.hidden;
    const size_t whole = u.wbytes + 256; /* sizeof(w): the array may be larger */
    void *pw = tbuf_alloc(whole);
    void *host_w = malloc(u.wbytes);
    tbuf_download(host_w, u.pw, u.wbytes);
    tbuf_upload(pw, host_w, u.wbytes);
    free(host_w);
    for (int train = 0; train < 2 && ok; train++) {
        const cudnnForwardMode_t mode = train ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
        size_t ws = 0, rs = 0;
        ok = CHECK_OK(cudnnGetRNNTempSpaceSizes(h, u.d, mode, xd, &ws, &rs)) && CHECK(train || rs == 0);
        void *pws = ws ? tbuf_alloc(ws) : NULL, *prs = rs ? tbuf_alloc(rs) : NULL;
        void *py = tbuf_alloc(sizeof(float) * (size_t)ny);
        void *phy = train ? tbuf_alloc(sizeof(float) * (size_t)nh) : NULL;
        void *pcy = train ? tbuf_alloc(sizeof(float) * (size_t)nh) : NULL;
        ok = ok && CHECK_OK(cudnnRNNForward(h, u.d, mode, u.plen, xd, u.px, yd, py, hd, NULL, phy, cd, NULL, pcy,
                                            whole, pw, ws, pws, rs, prs));
        if (ok) {
            double *y = tvalues_download(CUDNN_DATA_FLOAT, py, ny), *yr = rnn_to_ref(&c, y, c.hidden);
            double *wr = rnn_to_ref(&c, want.y, c.hidden);
            ok = CHECK(rnn_compare(train ? "CUDA.jl training y" : "CUDA.jl inference y", &c, yr, wr, ny, RNN_TOL));
            free(y), free(yr), free(wr);
        }
        if (ok && train) {
            double *hy = tvalues_download(CUDNN_DATA_FLOAT, phy, nh), *cy = tvalues_download(CUDNN_DATA_FLOAT, pcy, nh);
            ok = CHECK(rnn_compare("CUDA.jl hy", &c, hy, want.hy, nh, RNN_TOL)) &&
                 CHECK(rnn_compare("CUDA.jl cy", &c, cy, want.cy, nh, RNN_TOL));
            free(hy), free(cy);
        }
        void *bufs[] = {pws, prs, py, phy, pcy};
        for (size_t i = 0; i < TLEN(bufs); i++)
            if (bufs[i]) tbuf_free(bufs[i]);
    }
    tbuf_free(pw);
    trnn_data_descs_destroy(xd, yd, hd, cd);
    rnn_fwd_free(&want);
    rnn_run_free(&u);
}

/* One rnntest() call of CUDA.jl's RNN test suite (lib/cudnn/test/rnn.jl, run on NVIDIA's
   library): X = H = 8, B = 4, T = 2 floats, the keyword arguments' descriptor. */
struct cudajl_rnn {
    bool hx, cx, hy, cy;
    cudnnRNNDataLayout_t layout;
    const int *lengths;
    cudnnForwardMode_t mode;
    int hidden, proj, layers, dirs;
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias;
    cudnnRNNInputMode_t input_mode;
    cudnnMathType_t math;
    float dropout;
    uint32_t aux;
};

/* cudnnRNNForward as CUDA.jl's rnntest makes it: its own descriptor (the dropout descriptor
   CUDA.jl keeps for the probability, on states of cudnnDropoutGetStatesSize), **the weights a
   10000-float array** (its size passed), data descriptors with paddingFill NULL, 3-D state
   descriptors by cudnnSetTensorNdDescriptorEx, **each of hx, cx, hy and cy given or NULL on its
   own** (hx without cx, cy without hy), workspace and reserve of cudnnGetRNNTempSpaceSizes (NULL
   when 0). y, and hy and cy when asked for, against tests/ref/rnn.c. */
static void cudajl_rnn_run(const struct cudajl_rnn *k)
{
    enum { X = 8, B = 4, T = 2, WN = 10000 };
    static const int full[B] = {T, T, T, T};
    const int proj = k->proj ? k->proj : k->hidden;
    const struct rnn_case c = {.name = "cuda.jl rnntest", .mode = k->cell, .dirs = k->dirs,
                               .input_mode = k->input_mode, .bias = k->bias, .layout = k->layout,
                               .layers = k->layers, .input = X, .hidden = k->hidden, .proj = proj, .T = T, .N = B,
                               .lengths = k->lengths ? k->lengths : full, .dtype = CUDNN_DATA_FLOAT, .states = true,
                               .api = API_V8, .algo = k->algo};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    if (!rnn_run_open(&u, &c)) return;
    size_t states_bytes = 0, wbytes = 0, ws = 0, rs = 0;
    cudnnDropoutDescriptor_t drop;
    cudnnRNNDescriptor_t d;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd;
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop));
    CHECK_OK(cudnnCreateRNNDescriptor(&d));
    trnn_data_descs_create(&xd, &yd, &hd, &cd);
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    void *states = tbuf_alloc(states_bytes);
    const int hn = c.layers * c.dirs, hdims[3] = {hn, B, proj}, cdims[3] = {hn, B, c.hidden};
    bool ok = CHECK_OK(cudnnSetDropoutDescriptor(drop, h, k->dropout, states, states_bytes, 0)) &&
              CHECK_OK(cudnnSetRNNDescriptor_v8(d, k->algo, k->cell, k->bias,
                                                k->dirs == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                                k->input_mode, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, k->math, X, k->hidden,
                                                proj, k->layers, drop, k->aux)) &&
              CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, T, B, X, c.lengths, NULL)) &&
              CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, c.layout, T, B, c.dirs * proj, c.lengths,
                                                 NULL)) &&
              CHECK_OK(cudnnSetTensorNdDescriptorEx(hd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 3, hdims)) &&
              CHECK_OK(cudnnSetTensorNdDescriptorEx(cd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 3, cdims)) &&
              CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &wbytes)) && CHECK(wbytes == u.wbytes) &&
              CHECK(wbytes <= sizeof(float) * WN) && CHECK_OK(cudnnGetRNNTempSpaceSizes(h, d, k->mode, xd, &ws, &rs));
    /* the 10000-float array, the run's weights at its start */
    void *pw = tbuf_alloc(sizeof(float) * WN), *host = malloc(u.wbytes ? u.wbytes : 1);
    tbuf_download(host, u.pw, u.wbytes);
    tbuf_upload(pw, host, u.wbytes);
    free(host);
    const int64_t ny = u.pos * c.dirs * proj, nh = (int64_t)hn * B * proj, nc = (int64_t)hn * B * c.hidden;
    void *py = tbuf_alloc(sizeof(float) * (size_t)ny), *phy = k->hy ? tbuf_alloc(sizeof(float) * (size_t)nh) : NULL;
    void *pcy = k->cy ? tbuf_alloc(sizeof(float) * (size_t)nc) : NULL;
    void *pws = ws ? tbuf_alloc(ws) : NULL, *prs = rs ? tbuf_alloc(rs) : NULL;
    ok = ok && CHECK_OK(cudnnRNNForward(h, d, k->mode, u.plen, xd, u.px, yd, py, hd, k->hx ? u.phx : NULL, phy, cd,
                                        k->cx ? u.pcx : NULL, pcy, sizeof(float) * WN, pw, ws, pws, rs, prs));
    if (ok) {
        const double tol = k->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? 1e-2
                           : k->math == CUDNN_TENSOR_OP_MATH                ? 2e-3
                                                                            : rnn_case_tol(&c);
        const int64_t nref = (int64_t)T * B * c.dirs * proj;
        double *xr = rnn_to_ref(&c, u.x, X), *yr = calloc((size_t)nref, sizeof(double));
        double *hy = malloc(sizeof(double) * (size_t)nh), *cy = malloc(sizeof(double) * (size_t)nc);
        ref_rnn_forward(&u.r, u.w_ref, xr, k->hx ? u.hx : NULL, k->cx ? u.cx : NULL, yr, hy, cy);
        double *got = tvalues_download(CUDNN_DATA_FLOAT, py, ny), *got_ref = rnn_to_ref(&c, got, c.dirs * proj);
        CHECK(rnn_compare("CUDA.jl rnntest y", &c, got_ref, yr, nref, tol));
        if (phy) {
            double *g = tvalues_download(CUDNN_DATA_FLOAT, phy, nh);
            CHECK(rnn_compare("CUDA.jl rnntest hy", &c, g, hy, nh, tol));
            free(g);
        }
        if (pcy && c.mode == CUDNN_LSTM) {
            double *g = tvalues_download(CUDNN_DATA_FLOAT, pcy, nc);
            CHECK(rnn_compare("CUDA.jl rnntest cy", &c, g, cy, nc, tol));
            free(g);
        }
        free(xr), free(yr), free(hy), free(cy), free(got), free(got_ref);
    }
    if (ok && k->mode == CUDNN_FWD_MODE_TRAINING && !k->hx && !k->cx) {
        /* Knet's AutoGrad rule (src/cudnn/rnn.jl, cudnnRNNBackward): dw similar(w), zeroed, its
           size passed; hx, dhy, dhx, cx, dcy and dcx CU_NULL as the forward had no states */
        double *dy = rnn_random_data(&c, c.dirs * proj), *zeros = tview_fill(WN, 0);
        void *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, ny), *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, WN);
        void *pdx = tbuf_alloc(sizeof(float) * (size_t)(u.pos * X));
        if (CHECK_OK(cudnnRNNBackwardData_v8(h, d, u.plen, yd, py, pdy, xd, pdx, hd, NULL, NULL, NULL, cd, NULL, NULL,
                                             NULL, sizeof(float) * WN, pw, ws, pws, rs, prs)) &&
            CHECK_OK(cudnnRNNBackwardWeights_v8(h, d, CUDNN_WGRAD_MODE_ADD, u.plen, xd, u.px, hd, NULL, yd, py,
                                                sizeof(float) * WN, pdw, ws, pws, rs, prs))) {
            double *hx = u.hx, *cx = u.cx;
            u.hx = NULL, u.cx = NULL;
            rnn_check_train_backward(&u, dy, NULL, NULL, pdx, pdw, zeros, "Knet's backward without states");
            u.hx = hx, u.cx = cx;
        }
        tbuf_free(pdy), tbuf_free(pdw), tbuf_free(pdx);
        free(dy), free(zeros);
    }
    void *bufs[] = {pw, py, phy, pcy, pws, prs, states};
    for (size_t i = 0; i < TLEN(bufs); i++)
        if (bufs[i]) tbuf_free(bufs[i]);
    cudnnDestroyRNNDescriptor(d);
    cudnnDestroyDropoutDescriptor(drop);
    trnn_data_descs_destroy(xd, yd, hd, cd);
    rnn_run_free(&u);
}

/* CUDA.jl's rnntest matrix: each of hx, cx, hy and cy alone; the packed and batch-major layouts
   (PADDED_IO_ENABLED whatever the layout); unsorted ragged lengths; training; a hidden size of
   16; PERSIST_STATIC; the RELU, TANH and GRU cells; the three other bias modes;
   bidirectional; SKIP_INPUT; every math type on float data; a projection of 4; two layers;
   dropout 0.5 on one layer; and **PADDED_IO_DISABLED with the (uniform) sequence-major unpacked
   layout**. The training case goes on through Knet's backward rule, every state NULL. */
TEST(compat_rnn_cudajl_test_matrix)
{
    static const int ragged[4] = {1, 2, 1, 2};
    const struct cudajl_rnn base = {.layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, .mode = CUDNN_FWD_MODE_INFERENCE,
                                    .hidden = 8, .layers = 1, .dirs = 1, .algo = CUDNN_RNN_ALGO_STANDARD,
                                    .cell = CUDNN_LSTM, .bias = CUDNN_RNN_DOUBLE_BIAS, .input_mode = CUDNN_LINEAR_INPUT,
                                    .math = CUDNN_DEFAULT_MATH, .aux = CUDNN_RNN_PADDED_IO_ENABLED};
    struct cudajl_rnn k[32];
    int n = 0;
    k[n++] = base;
    k[n] = base, k[n++].hx = true;
    k[n] = base, k[n++].cx = true;
    k[n] = base, k[n++].hy = true;
    k[n] = base, k[n++].cy = true;
    k[n] = base, k[n++].layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
    k[n] = base, k[n++].layout = CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED;
    k[n] = base, k[n++].lengths = ragged;
    k[n] = base, k[n++].mode = CUDNN_FWD_MODE_TRAINING;
    k[n] = base, k[n++].hidden = 16;
    k[n] = base, k[n++].algo = CUDNN_RNN_ALGO_PERSIST_STATIC;
    static const cudnnRNNMode_t cells[] = {CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_GRU};
    for (size_t i = 0; i < TLEN(cells); i++) k[n] = base, k[n++].cell = cells[i];
    static const cudnnRNNBiasMode_t biases[] = {CUDNN_RNN_NO_BIAS, CUDNN_RNN_SINGLE_INP_BIAS,
                                                CUDNN_RNN_SINGLE_REC_BIAS};
    for (size_t i = 0; i < TLEN(biases); i++) k[n] = base, k[n++].bias = biases[i];
    k[n] = base, k[n++].dirs = 2;
    k[n] = base, k[n++].input_mode = CUDNN_SKIP_INPUT;
    static const cudnnMathType_t maths[] = {CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION};
    for (size_t i = 0; i < TLEN(maths); i++) k[n] = base, k[n++].math = maths[i];
    k[n] = base, k[n++].proj = 4;
    k[n] = base, k[n++].layers = 2;
    k[n] = base, k[n++].dropout = 0.5f;
    k[n] = base, k[n++].aux = CUDNN_RNN_PADDED_IO_DISABLED;
    for (int i = 0; i < n; i++) cudajl_rnn_run(&k[i]);
}

/* ---- ccv's LSTM (lib/nnc/cmd/rnn/gpu/ccv_nnc_lstm_gpu_cudnn.cu) -------------------------------- */

/* ccv's LSTM command on cuDNN: cudnnSetRNNDescriptor_v8 (DOUBLE_BIAS, DEFAULT math for float,
   no dropout descriptor at probability 0, PADDED_IO_ENABLED), the data descriptors SEQ_MAJOR or,
   batch-first, BATCH_MAJOR_UNPACKED with **paddingFill NULL**; **h and c described as 4-D
   {layers dirs, batch, proj (hidden), 1} by cudnnSetTensor4dDescriptorEx** with strides
   {batch proj, proj, 1, 1}; without a lengths input the uniform lengths copied to the device
   **right after the workspace in the same allocation**; cudnnRNNForward with each state given or
   NULL as the command's tensors are (inference: hx, cx and cy NULL, no reserve); training:
   the reserve a larger tensor, cudnnRNNBackwardData_v8 with **dhy NULL** and dcy given,
   dw zeroed by cudnnSetTensor before cudnnRNNBackwardWeights_v8 ADDs into it. */
TEST(compat_rnn_ccv_4d_states_lengths_after_workspace)
{
    static const int lengths[3] = {3, 3, 3};
    static const cudnnRNNDataLayout_t layouts[2] = {CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                                    CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED};
    cudnnHandle_t h = test_handle();
    for (int train = 1; train >= 0; train--) {
        const struct rnn_case c = {.name = "ccv", .mode = CUDNN_LSTM, .dirs = train ? 2 : 1,
                                   .input_mode = CUDNN_LINEAR_INPUT, .bias = CUDNN_RNN_DOUBLE_BIAS,
                                   .layout = layouts[!train], .layers = 2, .input = 5, .hidden = 4, .proj = 4,
                                   .T = 3, .N = 3, .lengths = lengths, .dtype = CUDNN_DATA_FLOAT, .states = true,
                                   .api = API_V8};
        struct rnn_run u;
        if (!rnn_run_open(&u, &c)) return;
        const cudnnForwardMode_t mode = train ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
        const int hn = c.layers * c.dirs, width = c.dirs * c.hidden;
        cudnnRNNDescriptor_t d;
        cudnnRNNDataDescriptor_t xd, yd;
        cudnnTensorDescriptor_t hd, cd, dwd;
        CHECK_OK(cudnnCreateRNNDescriptor(&d));
        CHECK_OK(cudnnCreateTensorDescriptor(&dwd));
        trnn_data_descs_create(&xd, &yd, &hd, &cd);
        size_t ws = 0, rs = 0, wbytes = 0;
        bool ok = CHECK_OK(cudnnSetRNNDescriptor_v8(d, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                                    train ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                                    CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                                    CUDNN_DEFAULT_MATH, c.input, c.hidden, c.hidden, c.layers, NULL,
                                                    CUDNN_RNN_PADDED_IO_ENABLED)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, c.input, lengths, NULL)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, c.layout, c.T, c.N, width, lengths, NULL)) &&
                  CHECK_OK(cudnnSetTensor4dDescriptorEx(hd, CUDNN_DATA_FLOAT, hn, c.N, c.hidden, 1, c.N * c.hidden,
                                                        c.hidden, 1, 1)) &&
                  CHECK_OK(cudnnSetTensor4dDescriptorEx(cd, CUDNN_DATA_FLOAT, hn, c.N, c.hidden, 1, c.N * c.hidden,
                                                        c.hidden, 1, 1)) &&
                  CHECK_OK(cudnnGetRNNTempSpaceSizes(h, d, mode, xd, &ws, &rs)) &&
                  CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &wbytes)) && CHECK(wbytes == u.wbytes);
        /* the workspace with the device lengths after it; the reserve a larger tensor */
        char *work = tbuf_alloc(ws + sizeof lengths);
        tbuf_upload(work + ws, lengths, sizeof lengths);
        const int *dev_len = (const int *)(work + ws);
        void *prs = train ? tbuf_alloc(rs + 64) : NULL;
        struct fwd_out want;
        rnn_reference_forward(&u, &want);
        struct rnn_train_bufs b;
        rnn_train_bufs_init(&b, &u);
        ok = ok && CHECK_OK(cudnnRNNForward(h, d, mode, dev_len, xd, u.px, yd, b.py, hd, train ? u.phx : NULL, b.phy, cd,
                                            train ? u.pcx : NULL, train ? b.pcy : NULL, wbytes, u.pw, ws,
                                            ws ? work : NULL, train ? rs : 0, prs));
        if (ok && train) {
            ok = rnn_train_y_matches(&u, &b, want.y, "ccv training y");
            double *hy = tvalues_download(CUDNN_DATA_FLOAT, b.phy, (int64_t)hn * c.N * c.hidden);
            double *cy = tvalues_download(CUDNN_DATA_FLOAT, b.pcy, (int64_t)hn * c.N * c.hidden);
            ok = ok && CHECK(rnn_compare("ccv hy", &c, hy, want.hy, (int64_t)hn * c.N * c.hidden, RNN_TOL)) &&
                 CHECK(rnn_compare("ccv cy", &c, cy, want.cy, (int64_t)hn * c.N * c.hidden, RNN_TOL));
            free(hy), free(cy);
            const int wdims[4] = {1, 1, 1, (int)u.wcount};
            const float zero = 0;
            ok = ok &&
                 CHECK_OK(cudnnRNNBackwardData_v8(h, d, dev_len, yd, b.py, b.pdy, xd, b.pdx, hd, u.phx, NULL, b.pdhx,
                                                  cd, u.pcx, b.pdcy, b.pdcx, wbytes, u.pw, ws, ws ? work : NULL, rs,
                                                  prs)) &&
                 CHECK_OK(cudnnSetTensor4dDescriptor(dwd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, wdims[0], wdims[1],
                                                     wdims[2], wdims[3])) &&
                 CHECK_OK(cudnnSetTensor(h, dwd, b.pdw, &zero)) &&
                 CHECK_OK(cudnnRNNBackwardWeights_v8(h, d, CUDNN_WGRAD_MODE_ADD, dev_len, xd, u.px, hd, u.phx, yd,
                                                     b.py, wbytes, b.pdw, ws, ws ? work : NULL, rs, prs));
            if (ok) rnn_check_train_backward(&u, b.dy, NULL, b.dcy, b.pdx, b.pdw, b.zeros, "ccv");
        } else if (ok) {
            /* inference without initial states: the reference again from zero states */
            double *hx = u.hx, *cx = u.cx;
            u.hx = NULL, u.cx = NULL;
            struct fwd_out zero_state;
            rnn_reference_forward(&u, &zero_state);
            u.hx = hx, u.cx = cx;
            ok = rnn_train_y_matches(&u, &b, zero_state.y, "ccv inference y");
            double *hy = tvalues_download(CUDNN_DATA_FLOAT, b.phy, (int64_t)hn * c.N * c.hidden);
            CHECK(rnn_compare("ccv inference hy", &c, hy, zero_state.hy, (int64_t)hn * c.N * c.hidden, RNN_TOL));
            free(hy);
            rnn_fwd_free(&zero_state);
        }
        rnn_train_bufs_free(&b);
        tbuf_free(work);
        if (prs) tbuf_free(prs);
        cudnnDestroyRNNDescriptor(d);
        cudnnDestroyTensorDescriptor(dwd);
        trnn_data_descs_destroy(xd, yd, hd, cd);
        rnn_fwd_free(&want);
        rnn_run_free(&u);
    }
}
