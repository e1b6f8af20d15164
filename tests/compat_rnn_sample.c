/* compat_rnn_sample.c: NVIDIA's RNN samples (RNN/RNN_example.cu on the legacy calls,
   RNN_v8.0/RNN_example.cu on the v8 ones) as they run, against the checksums NVIDIA's library
   gave them: the golden files the samples ship (golden_1.txt to golden_4.txt, the same for both
   samples; computed on an M40, so without TF32). */
#include "desc_util.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* The samples' default geometry: two unidirectional layers of 512 inputs and hidden units over
   20 steps of a batch of 64. The batch's sequences are alike and independent (every input 1), so
   each checksum is 64 times that of one sequence: the tests run a batch of 1 and scale. */
enum { T = 20, L = 2, H = 512, B = 1, BATCH = 64 };

/* The checksums of the four golden files: the sums of y, hy, cy, dx, dhx, dcx and the whole dw. */
static const struct golden {
    cudnnRNNMode_t mode;
    int mats; /* linear layers a pseudo-layer has */
    double y, hy, cy, dx, dhx, dcx, dw;
} goldens[] = {
    {CUDNN_RNN_RELU, 2, 1.315793E+06, 1.315212E+05, 0, 6.676003E+01, 6.425050E+01, 0, 1.453750E+09},
    {CUDNN_RNN_TANH, 2, 6.319591E+05, 6.319605E+04, 0, 4.501830E+00, 4.489543E+00, 0, 5.012598E+07},
    {CUDNN_LSTM, 8, 5.749536E+05, 5.774818E+04, 4.365091E+05, 3.842206E+02, 1.182562E+01, 9.323785E+03, 4.313461E+08},
    {CUDNN_GRU, 6, 6.358978E+05, 6.281680E+04, 0, 6.296622E+00, 2.289960E+05, 0, 5.397419E+07},
};

/* The buffers of one run: inputs of ones (x, the initial states, the output gradients: the
   sample's x, hx, cx, dy, dhy, dcy), the outputs, and the weights with their gradient. */
struct sample {
    void *ones, *y, *hy, *cy, *dx, *dhx, *dcx;
    void *w, *dw;
    int64_t nw;     /* weight scalars */
    double *w_host; /* the weights the region getters pointed at, filled */
};

static void sample_init(struct sample *s)
{
    double *ones = tview_fill(T * B * H, 1);
    s->ones = tvalues_upload(CUDNN_DATA_FLOAT, ones, T * B * H);
    free(ones);
    s->y = tbuf_alloc(sizeof(float) * T * B * H), s->dx = tbuf_alloc(sizeof(float) * T * B * H);
    s->hy = tbuf_alloc(sizeof(float) * L * B * H), s->cy = tbuf_alloc(sizeof(float) * L * B * H);
    s->dhx = tbuf_alloc(sizeof(float) * L * B * H), s->dcx = tbuf_alloc(sizeof(float) * L * B * H);
    s->w = s->dw = NULL, s->w_host = NULL, s->nw = 0;
}

/* The weight space of bytes, all 0 on the host side until the regions are filled. */
static void sample_weights(struct sample *s, size_t bytes)
{
    s->nw = (int64_t)(bytes / sizeof(float));
    s->w = tbuf_alloc(bytes);
    s->w_host = tview_fill(s->nw, 0);
}

/* One region the getters reported, at *at with count scalars: a matrix 1 / count each, a bias 1. */
static bool sample_region(struct sample *s, const void *at, int64_t count, bool bias)
{
    const int64_t from = (const float *)at - (const float *)s->w;
    if (!CHECK(from >= 0 && from + count <= s->nw)) return false;
    for (int64_t i = 0; i < count; i++) s->w_host[from + i] = bias ? 1 : 1.0 / (double)count;
    return true;
}

/* The filled weights uploaded, dw zeroed (the samples memset it before the weight gradient). */
static void sample_upload(struct sample *s)
{
    tbuf_free(s->w);
    s->w = tvalues_upload(CUDNN_DATA_FLOAT, s->w_host, s->nw);
    double *zeros = tview_fill(s->nw, 0);
    s->dw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, s->nw);
    free(zeros);
}

/* Every checksum of the run against the golden file's, at its relative tolerance of 1e-3. */
static bool sample_check(const struct sample *s, const struct golden *g, const char *api)
{
    const bool lstm = g->mode == CUDNN_LSTM;
    const struct {
        const void *buf;
        int64_t n;
        double want;
        const char *what;
    } sums[] = {{s->y, T * B * H, g->y, "y"},       {s->hy, L * B * H, g->hy, "hy"},   {s->cy, L * B * H, g->cy, "cy"},
                {s->dx, T * B * H, g->dx, "dx"},    {s->dhx, L * B * H, g->dhx, "dhx"}, {s->dcx, L * B * H, g->dcx, "dcx"},
                {s->dw, s->nw, g->dw, "dw"}};
    for (size_t i = 0; i < TLEN(sums); i++) {
        if (!lstm && (sums[i].buf == s->cy || sums[i].buf == s->dcx)) continue;
        double *v = tvalues_download(CUDNN_DATA_FLOAT, sums[i].buf, sums[i].n), sum = 0;
        for (int64_t k = 0; k < sums[i].n; k++) sum += v[k];
        free(v);
        if (!(fabs(sum * BATCH - sums[i].want) <= 1e-3 * fabs(sums[i].want))) {
            FAIL("%s mode %d: %s checksum %.6E, NVIDIA's golden %.6E", api, (int)g->mode, sums[i].what, sum * BATCH,
                 sums[i].want);
            return false;
        }
    }
    return true;
}

static void sample_free(struct sample *s)
{
    void *bufs[] = {s->ones, s->y, s->hy, s->cy, s->dx, s->dhx, s->dcx, s->w, s->dw};
    for (size_t i = 0; i < TLEN(bufs); i++)
        if (bufs[i]) tbuf_free(bufs[i]);
    free(s->w_host);
}

/* RNN/RNN_example.cu: cudnnSetRNNDescriptor_v6 (LINEAR_INPUT, unidirectional, STANDARD, FLOAT) on
   a dropout descriptor of probability 0 with states (seed 1337); per-step {batch, 512, 1} and
   state {2, batch, 512} descriptors, a {count, 1, 1} filter from cudnnGetRNNParamsSize; each
   region found by cudnnGetRNNLinLayerMatrixParams / BiasParams and sized by
   cudnnGetFilterNdDescriptor (3 dims asked); cudnnRNNForwardTraining, cudnnRNNBackwardData, then
   cudnnRNNBackwardWeights into the zeroed dw. */
TEST(compat_rnn_nvidia_sample_golden_checksums)
{
    cudnnHandle_t h = test_handle();
    const int step[3] = {B, H, 1}, step_strides[3] = {H, 1, 1}, state[3] = {L, B, H}, state_strides[3] = {B * H, H, 1};
    cudnnTensorDescriptor_t xs[T], hd;
    for (int t = 0; t < T; t++) {
        CHECK_OK(cudnnCreateTensorDescriptor(&xs[t]));
        CHECK_OK(cudnnSetTensorNdDescriptor(xs[t], CUDNN_DATA_FLOAT, 3, step, step_strides));
    }
    CHECK_OK(cudnnCreateTensorDescriptor(&hd));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, state, state_strides));
    void *states = NULL;
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0, 1337, &states);
    bool ok = true;
    for (size_t g = 0; g < TLEN(goldens) && ok; g++) {
        struct sample s;
        sample_init(&s);
        cudnnRNNDescriptor_t rnn;
        cudnnFilterDescriptor_t wd, region;
        CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
        CHECK_OK(cudnnCreateFilterDescriptor(&wd));
        CHECK_OK(cudnnCreateFilterDescriptor(&region));
        size_t wbytes = 0, ws = 0, rs = 0;
        ok = CHECK_OK(cudnnSetRNNDescriptor_v6(h, rnn, H, L, drop, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL,
                                               goldens[g].mode, CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT)) &&
             CHECK_OK(cudnnGetRNNParamsSize(h, rnn, xs[0], &wbytes, CUDNN_DATA_FLOAT)) &&
             CHECK_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3,
                                                 (const int[]){(int)(wbytes / sizeof(float)), 1, 1})) &&
             CHECK_OK(cudnnGetRNNWorkspaceSize(h, rnn, T, xs, &ws)) &&
             CHECK_OK(cudnnGetRNNTrainingReserveSize(h, rnn, T, xs, &rs));
        sample_weights(&s, wbytes);
        void *pws = tbuf_alloc(ws ? ws : 4), *prs = tbuf_alloc(rs ? rs : 4);
        for (int layer = 0; layer < L && ok; layer++)
            for (int id = 0; id < goldens[g].mats && ok; id++)
                for (int bias = 0; bias < 2 && ok; bias++) {
                    void *at = NULL;
                    int dims[3], nb = 0;
                    cudnnDataType_t dt;
                    cudnnTensorFormat_t fmt;
                    ok = (bias ? CHECK_OK(cudnnGetRNNLinLayerBiasParams(h, rnn, layer, xs[0], wd, s.w, id, region, &at))
                               : CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, rnn, layer, xs[0], wd, s.w, id, region, &at))) &&
                         CHECK_OK(cudnnGetFilterNdDescriptor(region, 3, &dt, &fmt, &nb, dims)) &&
                         sample_region(&s, at, (int64_t)dims[0] * dims[1] * dims[2], bias);
                }
        sample_upload(&s);
        ok = ok &&
             CHECK_OK(cudnnRNNForwardTraining(h, rnn, T, xs, s.ones, hd, s.ones, hd, s.ones, wd, s.w, xs, s.y, hd, s.hy,
                                              hd, s.cy, pws, ws, prs, rs)) &&
             CHECK_OK(cudnnRNNBackwardData(h, rnn, T, xs, s.y, xs, s.ones, hd, s.ones, hd, s.ones, wd, s.w, hd, s.ones,
                                           hd, s.ones, xs, s.dx, hd, s.dhx, hd, s.dcx, pws, ws, prs, rs)) &&
             CHECK_OK(cudnnRNNBackwardWeights(h, rnn, T, xs, s.ones, hd, s.ones, xs, s.y, pws, ws, wd, s.dw, prs, rs)) &&
             sample_check(&s, &goldens[g], "legacy");
        tbuf_free(pws), tbuf_free(prs);
        sample_free(&s);
        cudnnDestroyFilterDescriptor(region), cudnnDestroyFilterDescriptor(wd), cudnnDestroyRNNDescriptor(rnn);
    }
    for (int t = 0; t < T; t++) cudnnDestroyTensorDescriptor(xs[t]);
    cudnnDestroyTensorDescriptor(hd);
    tdropout_free(drop, states);
}

/* RNN_v8.0/RNN_example.cu with the golden files' flags (-dataType1 -inputMode1 -dirMode0
   -biasMode3 -algorithm0 -mathPrecision1 -mathType0 -projSize512): cudnnSetRNNDescriptor_v8
   (STANDARD, DOUBLE_BIAS, LINEAR_INPUT, FLOAT data and math precision, DEFAULT_MATH, projSize the
   hidden size whatever the cell, auxFlags 0) on the dropout of 0; RNN data descriptors
   SEQ_MAJOR_PACKED with every length 20 and a 0 padding fill, h and c {2, batch, 512};
   cudnnGetRNNWeightSpaceSize, cudnnGetRNNTempSpaceSizes (TRAINING); each region by
   cudnnGetRNNWeightParams, sized by cudnnGetTensorNdDescriptor (3 dims asked); cudnnRNNForward
   (TRAINING), cudnnRNNBackwardData_v8, then cudnnRNNBackwardWeights_v8 (ADD) into the zeroed dw. */
TEST(compat_rnn_nvidia_v8_sample_golden_checksums)
{
    cudnnHandle_t h = test_handle();
    static const int lengths[B] = {T};
    const int state[3] = {L, B, H}, state_strides[3] = {B * H, H, 1};
    float fill = 0;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd;
    trnn_data_descs_create(&xd, &yd, &hd, &cd);
    CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, B, H, lengths, &fill));
    CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, B, H, lengths, &fill));
    CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, state, state_strides));
    CHECK_OK(cudnnSetTensorNdDescriptor(cd, CUDNN_DATA_FLOAT, 3, state, state_strides));
    void *states = NULL, *plen = tbuf_from(lengths, sizeof lengths);
    cudnnDropoutDescriptor_t drop = tdropout_make(h, 0, 1337, &states);
    cudnnTensorDescriptor_t wdesc, bdesc;
    CHECK_OK(cudnnCreateTensorDescriptor(&wdesc));
    CHECK_OK(cudnnCreateTensorDescriptor(&bdesc));
    bool ok = true;
    for (size_t g = 0; g < TLEN(goldens) && ok; g++) {
        struct sample s;
        sample_init(&s);
        cudnnRNNDescriptor_t rnn;
        CHECK_OK(cudnnCreateRNNDescriptor(&rnn));
        size_t wbytes = 0, ws = 0, rs = 0;
        ok = CHECK_OK(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, goldens[g].mode, CUDNN_RNN_DOUBLE_BIAS,
                                               CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                               CUDNN_DEFAULT_MATH, H, H, H, L, drop, 0)) &&
             CHECK_OK(cudnnGetRNNWeightSpaceSize(h, rnn, &wbytes)) &&
             CHECK_OK(cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs));
        sample_weights(&s, wbytes);
        void *pws = tbuf_alloc(ws ? ws : 4), *prs = tbuf_alloc(rs ? rs : 4);
        for (int layer = 0; layer < L && ok; layer++)
            for (int id = 0; id < goldens[g].mats && ok; id++) {
                void *mat = NULL, *bias = NULL;
                int dims[3], strides[3], nb = 0;
                cudnnDataType_t dt;
                ok = CHECK_OK(cudnnGetRNNWeightParams(h, rnn, layer, wbytes, s.w, id, wdesc, &mat, bdesc, &bias));
                if (ok && mat)
                    ok = CHECK_OK(cudnnGetTensorNdDescriptor(wdesc, 3, &dt, &nb, dims, strides)) &&
                         sample_region(&s, mat, (int64_t)dims[0] * dims[1] * dims[2], false);
                if (ok && bias)
                    ok = CHECK_OK(cudnnGetTensorNdDescriptor(bdesc, 3, &dt, &nb, dims, strides)) &&
                         sample_region(&s, bias, (int64_t)dims[0] * dims[1] * dims[2], true);
            }
        sample_upload(&s);
        ok = ok &&
             CHECK_OK(cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_TRAINING, plen, xd, s.ones, yd, s.y, hd, s.ones, s.hy, cd,
                                      s.ones, s.cy, wbytes, s.w, ws, pws, rs, prs)) &&
             CHECK_OK(cudnnRNNBackwardData_v8(h, rnn, plen, yd, s.y, s.ones, xd, s.dx, hd, s.ones, s.ones, s.dhx, cd,
                                              s.ones, s.ones, s.dcx, wbytes, s.w, ws, pws, rs, prs)) &&
             CHECK_OK(cudnnRNNBackwardWeights_v8(h, rnn, CUDNN_WGRAD_MODE_ADD, plen, xd, s.ones, hd, s.ones, yd, s.y,
                                                 wbytes, s.dw, ws, pws, rs, prs)) &&
             sample_check(&s, &goldens[g], "v8");
        tbuf_free(pws), tbuf_free(prs);
        sample_free(&s);
        cudnnDestroyRNNDescriptor(rnn);
    }
    cudnnDestroyTensorDescriptor(wdesc), cudnnDestroyTensorDescriptor(bdesc);
    trnn_data_descs_destroy(xd, yd, hd, cd);
    tbuf_free(plen);
    tdropout_free(drop, states);
}
