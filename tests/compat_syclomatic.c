/* compat_syclomatic.c: the cuDNN test programs of Intel's SYCLomatic migration suite
   (oneapi-src/SYCLomatic-test, features/feature_case/dnn/cudnn-*.cu) as they run: each calls the
   library with fixed inputs and compares with a table of expected values (NVIDIA's library's
   results), which the replays spot-check before checking fresh random inputs against the double
   references of tests/ref/: normalization (normp1-3), RNN (rnn), reduction (reduction), LRN (lrn),
   convolution (convp1-6), tensor operations (binary),
   softmax (softmax), pooling (pooling), activation (activation). */
#include "ref/batchnorm.h"
#include "ref/conv.h"
#include "ref/lrn.h"
#include "ref/pooling.h"
#include "ref/reduce.h"
#include "rnn_harness.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* The normalization programs' tensors: 2x4x5x5 float NCHW x and y (cudnnSetTensor4dDescriptor),
   one descriptor for every per-slot array ({1, C, H, W} per activation, {1, C, 1, 1} per
   channel) and a RELU activation (NaN propagated), which NORM never applies. */
enum { SN_N = 2, SN_C = 4, SN_H = 5, SN_W = 5, SN_E = SN_N * SN_C * SN_H * SN_W };

struct sycl_norm {
    int slots;
    struct ref_bn_shape shape;
    cudnnTensorDescriptor_t xd, yd, sd;
    cudnnActivationDescriptor_t act;
};

static bool sycl_norm_open(struct sycl_norm *s, bool per_channel)
{
    const int sh = per_channel ? 1 : SN_H, sw = per_channel ? 1 : SN_W;
    s->slots = SN_C * sh * sw;
    s->shape = (struct ref_bn_shape){SN_N, SN_C, SN_H * SN_W, !per_channel};
    CHECK_OK(cudnnCreateTensorDescriptor(&s->xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&s->yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&s->sd));
    CHECK_OK(cudnnCreateActivationDescriptor(&s->act));
    return CHECK_OK(cudnnSetTensor4dDescriptor(s->xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, SN_N, SN_C, SN_H, SN_W)) &&
           CHECK_OK(cudnnSetTensor4dDescriptor(s->yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, SN_N, SN_C, SN_H, SN_W)) &&
           CHECK_OK(cudnnSetTensor4dDescriptor(s->sd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, SN_C, sh, sw)) &&
           CHECK_OK(cudnnSetActivationDescriptor(s->act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
}

static void sycl_norm_close(struct sycl_norm *s)
{
    cudnnDestroyTensorDescriptor(s->xd);
    cudnnDestroyTensorDescriptor(s->yd);
    cudnnDestroyTensorDescriptor(s->sd);
    cudnnDestroyActivationDescriptor(s->act);
}

/* count per-slot arrays: the program's (each element its slot's index) or random ones (the
   fourth, a variance, positive). */
static void sycl_norm_slots(const struct sycl_norm *s, bool program, int count, double **slot)
{
    for (int k = 0; k < count; k++) {
        slot[k] = program ? tview_fill(s->slots, 0) : tview_random(s->slots, k == 3 ? 0.2 : -1, 1.5);
        for (int i = 0; program && i < s->slots; i++) slot[k][i] = i;
    }
}

/* SYCLomatic's cuDNN normalization test (oneapi-src/SYCLomatic-test, features/feature_case/cudnn
   cudnn-normp1.cu; its expected values those of NVIDIA's library): cudnnNormalizationForwardInference
   with **CUDNN_NORM_OPS_NORM but a z tensor and a RELU activation descriptor given** (zDesc the
   data descriptor), the scale/bias and mean/variance descriptors one 4-D NCHW descriptor (1, C,
   H, W per activation, 1, C, 1, 1 per channel), alpha 2.5 and beta 1.5 over an output of 1s, eps
   1, groupCnt 1. Its own values first (x = i + 4, z = 10, every per-slot array = slot index),
   spot-checked against its table; then fresh random values, signed, with z NaN and the output
   poisoned under beta 0: NORM reads neither z nor the activation. */
TEST(compat_norm_syclomatic_inference_ignores_z_and_activation)
{
    enum { E = SN_E };
    cudnnHandle_t h = test_handle();
    for (int per_channel = 0; per_channel < 2; per_channel++) {
        const cudnnNormMode_t mode = per_channel ? CUDNN_NORM_PER_CHANNEL : CUDNN_NORM_PER_ACTIVATION;
        struct sycl_norm sn;
        const bool opened = sycl_norm_open(&sn, per_channel);
        const cudnnTensorDescriptor_t xd = sn.xd, yd = sn.yd, sd = sn.sd;
        const cudnnActivationDescriptor_t act = sn.act;
        const int S = sn.slots;
        bool ok = opened;
        const struct ref_bn_shape shape = sn.shape;
        for (int pass = 0; ok && pass < 2; pass++) {
            const bool program = pass == 0;
            double *x = program ? tview_fill(E, 0) : tview_random(E, -3, 3);
            double *z = tview_fill(E, program ? 10 : NAN), *prior = tview_fill(E, 1);
            double *slot[4]; /* scale, bias, mean, var */
            sycl_norm_slots(&sn, program, 4, slot);
            for (int i = 0; program && i < E; i++) x[i] = i + 4;
            const float alpha = 2.5f, beta = program ? 1.5f : 0.0f;
            void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, E), *pz = tvalues_upload(CUDNN_DATA_FLOAT, z, E);
            void *py = program ? tvalues_upload(CUDNN_DATA_FLOAT, prior, E) : tbuf_alloc(sizeof(float) * E);
            void *ps[4];
            for (int k = 0; k < 4; k++) ps[k] = tvalues_upload(CUDNN_DATA_FLOAT, slot[k], S);
            double *want = malloc(sizeof(double) * E);
            ref_bn_forward(&shape, x, NULL, slot[0], slot[1], slot[2], slot[3], 1.0, -1, 0, NULL, want);
            for (int i = 0; i < E; i++) want[i] = alpha * want[i] + beta * prior[i];
            ok = CHECK_OK(cudnnNormalizationForwardInference(h, mode, CUDNN_NORM_OPS_NORM, CUDNN_NORM_ALGO_STANDARD,
                                                            &alpha, &beta, xd, px, sd, ps[0], ps[1], sd, ps[2], ps[3],
                                                            xd, pz, act, yd, py, 1.0, 1)) &&
                 tvalues_check(CUDNN_DATA_FLOAT, py, want, E, 1e-5, program ? "SYCLomatic y" : "random y");
            if (ok && program) {
                /* the program's table: y[1], y[101] per activation; y[25], y[125] per channel */
                static const double table[2][2] = {{11.0711, 187.848}, {53.4975, 230.274}};
                const int at[2][2] = {{1, 101}, {25, 125}};
                double *got = tvalues_download(CUDNN_DATA_FLOAT, py, E);
                for (int k = 0; k < 2; k++)
                    CHECK(fabs(got[at[per_channel][k]] - table[per_channel][k]) < 1e-1 && got[0] == 1.5);
                free(got);
            }
            tbuf_free(px), tbuf_free(pz), tbuf_free(py);
            for (int k = 0; k < 4; k++) tbuf_free(ps[k]), free(slot[k]);
            free(x), free(z), free(prior), free(want);
        }
        sycl_norm_close(&sn);
    }
}

/* SYCLomatic's training and backward tests (cudnn-normp2.cu and cudnn-normp3.cu, their tables
   NVIDIA's library's values): cudnnGetNormalizationForwardTrainingWorkspaceSize with **zDesc the
   data descriptor and the RELU activation given** under CUDNN_NORM_OPS_NORM,
   cudnnGetNormalizationTrainingReserveSpaceSize with **the activation NULL**,
   cudnnGetNormalizationBackwardWorkspaceSize with yDesc, dyDesc and **dzDesc given** and the
   activation; cudnnNormalizationForwardTraining with z and the activation given, factor 0.5, eps
   1, alpha 2.5, beta 1.5 over an output of 1s; then cudnnNormalizationBackward with **y, dz and
   the activation given**, alpha 2.5 and beta 0 for the data and the parameter gradients (dx,
   dscale, dbias never written before: normp3's copies run the wrong way), the forward's saved
   mean and inverse deviation and its reserve; per activation and per channel. normp2's negative
   outputs (channel 3 per channel) show the RELU is not applied. The programs' values (x = i + 4,
   z = 10, dy = 100 i, every per-slot array its slot's index) spot-checked, then fresh random
   values with z NaN and the outputs poisoned: y, the running averages (unbiased variance), the
   saved statistics, dx and the parameter gradients against the reference. */
TEST(compat_norm_syclomatic_training_ignores_z_and_activation)
{
    enum { E = SN_E };
    cudnnHandle_t h = test_handle();
    for (int per_channel = 0; per_channel < 2; per_channel++) {
        const cudnnNormMode_t mode = per_channel ? CUDNN_NORM_PER_CHANNEL : CUDNN_NORM_PER_ACTIVATION;
        const cudnnNormOps_t ops = CUDNN_NORM_OPS_NORM;
        const cudnnNormAlgo_t algo = CUDNN_NORM_ALGO_STANDARD;
        struct sycl_norm sn;
        const bool opened = sycl_norm_open(&sn, per_channel);
        const cudnnTensorDescriptor_t xd = sn.xd, yd = sn.yd, sd = sn.sd;
        const cudnnActivationDescriptor_t act = sn.act;
        const int S = sn.slots;
        size_t ws = 0, rs = 0, bws = 0;
        bool ok = opened &&
                  CHECK_OK(cudnnGetNormalizationForwardTrainingWorkspaceSize(h, mode, ops, algo, xd, xd, yd, sd, act,
                                                                             sd, &ws, 1)) &&
                  CHECK_OK(cudnnGetNormalizationTrainingReserveSpaceSize(h, mode, ops, algo, NULL, xd, &rs, 1)) &&
                  CHECK_OK(cudnnGetNormalizationBackwardWorkspaceSize(h, mode, ops, algo, xd, yd, yd, yd, xd, sd, act,
                                                                      sd, &bws, 1));
        const struct ref_bn_shape shape = sn.shape;
        const double factor = 0.5, eps = 1.0, M = (double)ref_bn_reduced(&shape);
        for (int pass = 0; ok && pass < 2; pass++) {
            const bool program = pass == 0;
            double *x = program ? tview_fill(E, 0) : tview_random(E, -3, 3);
            double *dy = program ? tview_fill(E, 0) : tview_random(E, -2, 2);
            double *z = tview_fill(E, program ? 10 : NAN), *prior = tview_fill(E, 1);
            double *slot[6]; /* scale, bias, running mean, running var, saved mean, saved inv var */
            sycl_norm_slots(&sn, program, 6, slot);
            for (int i = 0; program && i < E; i++) x[i] = i + 4, dy[i] = 100.0 * i;
            const float alpha = 2.5f, beta = program ? 1.5f : 0.0f, zero = 0.0f;
            void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, E), *pz = tvalues_upload(CUDNN_DATA_FLOAT, z, E);
            void *py = program ? tvalues_upload(CUDNN_DATA_FLOAT, prior, E) : tbuf_alloc(sizeof(float) * E);
            void *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, E), *pdz = tbuf_alloc(sizeof(float) * E);
            void *pdx = tbuf_alloc(sizeof(float) * E), *pds = tbuf_alloc(sizeof(float) * S);
            void *pdb = tbuf_alloc(sizeof(float) * S), *pbws = tbuf_alloc(bws ? bws : 4);
            void *ps[6], *pws = tbuf_alloc(ws ? ws : 4), *prs = tbuf_alloc(rs ? rs : 4);
            for (int k = 0; k < 6; k++) ps[k] = tvalues_upload(CUDNN_DATA_FLOAT, slot[k], S);
            if (!program) tbuf_poison(ps[4], sizeof(float) * S), tbuf_poison(ps[5], sizeof(float) * S);
            double *mean = malloc(sizeof(double) * S), *var = malloc(sizeof(double) * S);
            double *pre = malloc(sizeof(double) * E), *want = malloc(sizeof(double) * E), *rm = malloc(sizeof(double) * S);
            double *rv = malloc(sizeof(double) * S), *inv = malloc(sizeof(double) * S);
            double *dpre = malloc(sizeof(double) * E), *dx = malloc(sizeof(double) * E);
            double *ds = malloc(sizeof(double) * S), *db = malloc(sizeof(double) * S);
            ref_bn_stats(&shape, x, mean, var);
            ref_bn_forward(&shape, x, NULL, slot[0], slot[1], mean, var, eps, -1, 0, pre, pre);
            ref_bn_backward(&shape, x, dy, pre, -1, 0, slot[0], mean, var, eps, dpre, dx, ds, db);
            for (int i = 0; i < E; i++) want[i] = alpha * pre[i] + beta * prior[i], dx[i] *= alpha;
            for (int i = 0; i < S; i++) {
                rm[i] = factor * mean[i] + (1 - factor) * slot[2][i];
                rv[i] = factor * var[i] * M / (M - 1) + (1 - factor) * slot[3][i];
                inv[i] = 1 / sqrt(var[i] + eps);
                ds[i] *= alpha, db[i] *= alpha;
            }
            ok = CHECK_OK(cudnnNormalizationForwardTraining(h, mode, ops, algo, &alpha, &beta, xd, px, sd, ps[0], ps[1],
                                                           factor, sd, ps[2], ps[3], eps, ps[4], ps[5], act, xd, pz, yd,
                                                           py, pws, ws, prs, rs, 1)) &&
                 tvalues_check(CUDNN_DATA_FLOAT, py, want, E, 1e-4, "training y") &&
                 tvalues_check(CUDNN_DATA_FLOAT, ps[2], rm, S, 1e-5, "running mean") &&
                 tvalues_check(CUDNN_DATA_FLOAT, ps[3], rv, S, 1e-5, "running variance") &&
                 tvalues_check(CUDNN_DATA_FLOAT, ps[4], mean, S, 1e-5, "saved mean") &&
                 tvalues_check(CUDNN_DATA_FLOAT, ps[5], inv, S, 1e-5, "saved inverse deviation") &&
                 CHECK_OK(cudnnNormalizationBackward(h, mode, ops, algo, &alpha, &zero, &alpha, &zero, xd, px, yd, py,
                                                     yd, pdy, yd, pdz, xd, pdx, sd, ps[0], ps[1], pds, pdb, eps, sd,
                                                     ps[4], ps[5], act, pbws, bws, prs, rs, 1)) &&
                 tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, E, program ? 1e-3 : 1e-5, "backward dx") &&
                 tvalues_check(CUDNN_DATA_FLOAT, pds, ds, S, program ? 1e-3 : 1e-5, "backward dscale") &&
                 tvalues_check(CUDNN_DATA_FLOAT, pdb, db, S, 1e-5, "backward dbias");
            if (ok && program) {
                /* normp2's table: y[1], y[75], the first running mean and variance; normp3's: dx[1],
                   dx[25], dscale[0], dbias[1] */
                static const double y_at[2][2] = {{1.5005, 1.5375}, {1.5, -0.202961}}, stats[2][2] = {{27, 2500}, {33, 0}};
                static const double t[2][4] = {{-0.0999556, -2.49889, 24995, 25500}, {0, -0.120178, 631343, 1.0875e6}};
                double *got = tvalues_download(CUDNN_DATA_FLOAT, py, E), *grm = tvalues_download(CUDNN_DATA_FLOAT, ps[2], S);
                double *grv = tvalues_download(CUDNN_DATA_FLOAT, ps[3], S), *gx = tvalues_download(CUDNN_DATA_FLOAT, pdx, E);
                double *gs = tvalues_download(CUDNN_DATA_FLOAT, pds, S), *gb = tvalues_download(CUDNN_DATA_FLOAT, pdb, S);
                CHECK(fabs(got[1] - y_at[per_channel][0]) < 1e-1 && fabs(got[75] - y_at[per_channel][1]) < 1e-1);
                CHECK(fabs(grm[0] - stats[per_channel][0]) < 1e-1 && (per_channel || fabs(grv[0] - stats[0][1]) < 1e-1));
                CHECK(fabs(gx[1] - t[per_channel][0]) < 1e-2 && fabs(gx[25] - t[per_channel][1]) < 1e-2);
                CHECK(fabs(gs[0] - t[per_channel][2]) < 1 && fabs(gb[1] - t[per_channel][3]) < 1);
                free(got), free(grm), free(grv), free(gx), free(gs), free(gb);
            }
            void *bufs[] = {px, pz, py, pdy, pdz, pdx, pds, pdb, pbws, pws, prs};
            for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
            for (int k = 0; k < 6; k++) tbuf_free(ps[k]), free(slot[k]);
            double *hv[] = {x, dy, z, prior, mean, var, pre, want, rm, rv, inv, dpre, dx, ds, db};
            for (size_t i = 0; i < sizeof hv / sizeof hv[0]; i++) free(hv[i]);
        }
        sycl_norm_close(&sn);
    }
}

/* cudnn-rnn.cu: cudnnSetRNNDescriptor_v8 for a three-layer RELU network (hidden 2 = projSize, input
   2, SINGLE_INP_BIAS, no dropout descriptor, PADDED_IO_ENABLED) on **SEQ_MAJOR_PACKED data** (T 4,
   batch 3, every length 4, no fill), **cDesc, cx and cy given to a cell-less network**, the
   weight space, x and hx all 1s (written without the getters), cudnnRNNForward in TRAINING with
   the lengths on the device, one and two directions: y against the program's table (exact
   integers), then the same network on fresh random values through the harness (forward in both
   modes, backward data and weights) against the reference. */
TEST(compat_rnn_syclomatic_relu_all_ones)
{
    enum { L = 3, H = 2, IN = 2, N = 3, T = 4 };
    /* y per step: one direction; two directions, the forward then the backward value */
    static const double uni[T] = {29, 165, 661, 2229}, bi[T][2] = {{3719, 47275}, {9739, 21779}, {21779, 9739},
                                                                   {47275, 3719}};
    static const int lengths[N] = {T, T, T};
    cudnnHandle_t h = test_handle();
    for (int dirs = 1; dirs <= 2; dirs++) {
        cudnnRNNDescriptor_t d;
        cudnnRNNDataDescriptor_t xd, yd;
        cudnnTensorDescriptor_t hd, cd;
        CHECK_OK(cudnnCreateRNNDescriptor(&d));
        CHECK_OK(cudnnCreateRNNDataDescriptor(&xd));
        CHECK_OK(cudnnCreateRNNDataDescriptor(&yd));
        CHECK_OK(cudnnCreateTensorDescriptor(&hd));
        CHECK_OK(cudnnCreateTensorDescriptor(&cd));
        const int sdims[3] = {dirs * L, N, H}, sstrides[3] = {N * H, H, 1};
        size_t wbytes = 0, ws = 0, rs = 0;
        bool ok = CHECK_OK(cudnnSetTensorNdDescriptor(hd, CUDNN_DATA_FLOAT, 3, sdims, sstrides)) &&
                  CHECK_OK(cudnnSetTensorNdDescriptor(cd, CUDNN_DATA_FLOAT, 3, sdims, sstrides)) &&
                  CHECK_OK(cudnnSetRNNDescriptor_v8(d, CUDNN_RNN_ALGO_STANDARD, CUDNN_RNN_RELU,
                                                    CUDNN_RNN_SINGLE_INP_BIAS,
                                                    dirs == 1 ? CUDNN_UNIDIRECTIONAL : CUDNN_BIDIRECTIONAL,
                                                    CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                                    CUDNN_DEFAULT_MATH, IN, H, H, L, NULL, CUDNN_RNN_PADDED_IO_ENABLED)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, N,
                                                     IN, lengths, NULL)) &&
                  CHECK_OK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, N,
                                                     dirs * H, lengths, NULL)) &&
                  CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &wbytes)) &&
                  CHECK_OK(cudnnGetRNNTempSpaceSizes(h, d, CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs));
        const int ny = T * N * dirs * H, ns = dirs * L * N * H, nw = (int)(wbytes / sizeof(float));
        double *ones = tview_fill(ny > nw ? ny : nw, 1);
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, ones, T * N * IN), *pw = tvalues_upload(CUDNN_DATA_FLOAT, ones, nw);
        void *phx = tvalues_upload(CUDNN_DATA_FLOAT, ones, ns), *pcx = tvalues_upload(CUDNN_DATA_FLOAT, ones, ns);
        void *py = tvalues_upload(CUDNN_DATA_FLOAT, ones, ny), *phy = tvalues_upload(CUDNN_DATA_FLOAT, ones, ns);
        void *pcy = tvalues_upload(CUDNN_DATA_FLOAT, ones, ns), *pws = tbuf_alloc(ws ? ws : 4);
        void *prs = tbuf_alloc(rs ? rs : 4), *plen = tbuf_from(lengths, sizeof lengths);
        ok = ok && CHECK_OK(cudnnRNNForward(h, d, CUDNN_FWD_MODE_TRAINING, plen, xd, px, yd, py, hd, phx, phy, cd, pcx,
                                            pcy, wbytes, pw, ws, pws, rs, prs));
        if (ok) {
            double *want = malloc(sizeof(double) * ny);
            for (int t = 0; t < T; t++)
                for (int n = 0; n < N; n++)
                    for (int k = 0; k < dirs * H; k++)
                        want[(t * N + n) * dirs * H + k] = dirs == 1 ? uni[t] : bi[t][k / H];
            tvalues_check(CUDNN_DATA_FLOAT, py, want, ny, 1e-3, dirs == 1 ? "one direction y" : "two directions y");
            free(want);
        }
        void *bufs[] = {px, pw, phx, pcx, py, phy, pcy, pws, prs, plen};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
        free(ones);
        cudnnDestroyTensorDescriptor(hd);
        cudnnDestroyTensorDescriptor(cd);
        cudnnDestroyRNNDataDescriptor(xd);
        cudnnDestroyRNNDataDescriptor(yd);
        cudnnDestroyRNNDescriptor(d);
        const struct rnn_case c = {.name = "syclomatic", .mode = CUDNN_RNN_RELU, .dirs = dirs,
                                   .input_mode = CUDNN_LINEAR_INPUT, .bias = CUDNN_RNN_SINGLE_INP_BIAS,
                                   .layout = CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, .layers = L, .input = IN,
                                   .hidden = H, .proj = H, .T = T, .N = N, .lengths = lengths,
                                   .dtype = CUDNN_DATA_FLOAT, .states = true, .api = API_V8};
        if (ok) rnn_check_case(&c);
    }
}

/* cudnn-reduction.cu: cudnnReduceTensor with FLOAT compute, NaN not propagated, no indices
   (**indices 0 and size 0**), the workspace from cudnnGetReductionWorkspaceSize, alpha 2.5 and
   beta 1.5 over an output holding its own positions, on a 2x2x6x6 NCHW float tensor of i - 25
   (cudnnSetTensor4dDescriptor): ADD over W, then ADD, NORM1 and NORM2 over C and W, then
   MUL_NO_ZEROS over C and W of (i - 60) / 50 (a zero among them). The program's tables (its first
   and last values of each), then fresh random values (signed, a zero planted in every reduced
   set of MUL_NO_ZEROS) with C poisoned under beta 0, against the reference. */
TEST(compat_reduce_syclomatic_ops_over_c_and_w)
{
    static const struct {
        cudnnReduceTensorOp_t op;
        int oc;
        double first, last;
    } cases[] = {{CUDNN_REDUCE_TENSOR_ADD, 2, -337.5, 1767},     {CUDNN_REDUCE_TENSOR_ADD, 1, -135, 2941.5},
                 {CUDNN_REDUCE_TENSOR_NORM1, 1, 540, 2941.5},    {CUDNN_REDUCE_TENSOR_NORM2, 1, 161.361, 875.271},
                 {CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS, 1, 0.0357702, 38.0143}};
    cudnnHandle_t h = test_handle();
    cudnnReduceTensorDescriptor_t rd;
    if (!CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd))) return;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int ad[4] = {2, 2, 6, 6}, cd[4] = {2, cases[k].oc, 6, 1};
        struct rtensor at, ct;
        rt_packed(&at, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, ad);
        rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, cd);
        cudnnTensorDescriptor_t A, C;
        CHECK_OK(cudnnCreateTensorDescriptor(&A));
        CHECK_OK(cudnnCreateTensorDescriptor(&C));
        size_t ws = 0;
        bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(A, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 2, 6, 6)) &&
                  CHECK_OK(cudnnSetTensor4dDescriptor(C, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, cases[k].oc, 6, 1)) &&
                  CHECK_OK(cudnnSetReduceTensorDescriptor(rd, cases[k].op, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                                          CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES)) &&
                  CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, A, C, &ws));
        const int na = (int)rt_count(&at), nc = (int)rt_count(&ct);
        for (int pass = 0; ok && pass < 2; pass++) {
            const bool program = pass == 0;
            float *ha = malloc(sizeof(float) * na), *hc = malloc(sizeof(float) * nc);
            for (int i = 0; i < na; i++)
                ha[i] = program ? (cases[k].op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS ? (i - 60.f) / 50 : i - 25.f)
                                : (float)trand_uniform(-2, 2);
            if (!program && cases[k].op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS)
                for (int i = 0; i < na; i += 6) ha[i] = 0; /* the first of every row of W */
            for (int i = 0; i < nc; i++) hc[i] = (float)i;
            const float alpha = 2.5f, beta = program ? 1.5f : 0.0f;
            void *pa = tbuf_from(ha, sizeof(float) * na), *pc = tbuf_from(hc, sizeof(float) * nc);
            if (!program) tbuf_poison(pc, sizeof(float) * nc);
            void *pws = ws ? tbuf_alloc(ws) : NULL;
            double *want = malloc(sizeof(double) * nc);
            ref_reduce(cases[k].op, false, alpha, &at, ha, beta, &ct, hc, want, NULL);
            ok = CHECK_OK(cudnnReduceTensor(h, rd, 0, 0, pws, ws, &alpha, A, pa, &beta, C, pc)) &&
                 tcompare_span(&ct, pc, want, 1e-5, program ? "SYCLomatic reduction" : "random reduction");
            if (ok && program) {
                float got[24];
                tbuf_download(got, pc, sizeof(float) * nc);
                CHECK(fabs(got[0] - cases[k].first) < 1e-3 * (1 + fabs(cases[k].first)) &&
                      fabs(got[nc - 1] - cases[k].last) < 1e-3 * (1 + fabs(cases[k].last)));
            }
            tbuf_free(pa), tbuf_free(pc), tbuf_free(pws), free(ha), free(hc), free(want);
        }
        cudnnDestroyTensorDescriptor(A);
        cudnnDestroyTensorDescriptor(C);
    }
    cudnnDestroyReduceTensorDescriptor(rd);
}

/* cudnn-lrn.cu: an LRN descriptor (3, 1.5, 1.5, 1) on a 1x2x5x5 NCHW float tensor of i; the
   forward with alpha 2 and beta 1.5 over an output of i; then the forward with alpha 1.5 and
   beta 0 and **the backward given that scaled output as y**, dy 1s, alpha 2000 and beta 0. The
   program's table is the true gradient of the unscaled LRN (the backward does not take y's
   values). Its values spot-checked, then fresh random values with y NaN in the backward and the
   outputs poisoned, against the reference. */
TEST(compat_lrn_syclomatic_backward_not_reading_y)
{
    enum { C = 2, S = 25, E = C * S };
    const struct ref_lrn_params q = {3, 1.5, 1.5, 1.0};
    cudnnHandle_t h = test_handle();
    cudnnLRNDescriptor_t ld;
    cudnnTensorDescriptor_t d;
    CHECK_OK(cudnnCreateLRNDescriptor(&ld));
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    bool ok = CHECK_OK(cudnnSetLRNDescriptor(ld, 3, 1.5, 1.5, 1.0)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, C, 5, 5));
    for (int pass = 0; ok && pass < 2; pass++) {
        const bool program = pass == 0;
        double *x = program ? tview_fill(E, 0) : tview_random(E, -3, 3), *prior = tview_fill(E, 0);
        double *dy = program ? tview_fill(E, 1) : tview_random(E, -1, 1);
        for (int i = 0; i < E; i++) prior[i] = i, x[i] = program ? i : x[i];
        double *y = malloc(sizeof(double) * E), *dx = malloc(sizeof(double) * E), *want = malloc(sizeof(double) * E);
        ref_lrn_forward(1, C, S, &q, x, y);
        ref_lrn_backward(1, C, S, &q, x, dy, dx);
        for (int i = 0; i < E; i++) want[i] = 2 * y[i] + (program ? 1.5 * prior[i] : 0);
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, E), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, E);
        void *py = program ? tvalues_upload(CUDNN_DATA_FLOAT, prior, E) : tbuf_alloc(sizeof(float) * E);
        void *pdx = program ? tvalues_upload(CUDNN_DATA_FLOAT, prior, E) : tbuf_alloc(sizeof(float) * E);
        float alpha = 2.0f, beta = program ? 1.5f : 0.0f;
        ok = CHECK_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &alpha, d, px, &beta, d, py)) &&
             tvalues_check(CUDNN_DATA_FLOAT, py, want, E, 1e-4, program ? "SYCLomatic LRN y" : "random LRN y");
        if (ok && program) {
            double *got = tvalues_download(CUDNN_DATA_FLOAT, py, E);
            CHECK(fabs(got[1] - 1.50032) < 1e-3 && fabs(got[25] - 37.509) < 1e-3);
            free(got);
        }
        alpha = 1.5f, beta = 0.0f;
        ok = ok && CHECK_OK(cudnnLRNCrossChannelForward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &alpha, d, px, &beta, d, py));
        if (!program) tbuf_poison(py, sizeof(float) * E); /* y: NaN */
        alpha = 2000.0f;
        for (int i = 0; i < E; i++) want[i] = 2000 * dx[i];
        ok = ok && CHECK_OK(cudnnLRNCrossChannelBackward(h, ld, CUDNN_LRN_CROSS_CHANNEL_DIM1, &alpha, d, py, d, pdy, d,
                                                         px, &beta, d, pdx)) &&
             tvalues_check(CUDNN_DATA_FLOAT, pdx, want, E, program ? 1e-3 : 1e-4, "LRN dx");
        if (ok && program) {
            double *got = tvalues_download(CUDNN_DATA_FLOAT, pdx, E);
            CHECK(fabs(got[0] - 0.360308) < 1e-3 && fabs(got[25] - -0.717169) < 1e-3 && fabs(got[49] - -0.0905342) < 1e-3);
            free(got);
        }
        tbuf_free(px), tbuf_free(pdy), tbuf_free(py), tbuf_free(pdx);
        free(x), free(prior), free(dy), free(y), free(dx), free(want);
    }
    cudnnDestroyTensorDescriptor(d);
    cudnnDestroyLRNDescriptor(ld);
}

/* The convolution programs' descriptors: 2x4x5x5 x and 2x4x4x4 y (float NCHW,
   cudnnSetTensor4dDescriptor), a {1, 4, 1, 1} bias by cudnnSetTensorNdDescriptor with strides
   {4, 1, 1, 1}, a 4 x 4/groups x 2 x 2 filter by cudnnSetFilterNdDescriptor in the given format,
   and cudnnSetConvolution2dDescriptor (no padding, stride and dilation 1, CROSS_CORRELATION,
   FLOAT) with cudnnSetConvolutionGroupCount when grouped; t: the reference's geometry. */
struct sycl_conv {
    struct ref_conv t;
    long nx, nw, ny;
    cudnnTensorDescriptor_t xd, yd, bd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
};

static bool sycl_conv_open(struct sycl_conv *v, int groups, cudnnTensorFormat_t filter_format)
{
    v->t = (struct ref_conv){.nsp = 2, .n = 2, .c = 4, .k = 4, .groups = groups, .in = {5, 5}, .filt = {2, 2},
                             .pad = {0, 0}, .stride = {1, 1}, .dil = {1, 1}};
    ref_conv_out_dims(&v->t);
    v->nx = ref_conv_x_count(&v->t), v->nw = ref_conv_w_count(&v->t), v->ny = ref_conv_y_count(&v->t);
    const int fdim[4] = {4, 4 / groups, 2, 2}, bdim[4] = {1, 4, 1, 1}, bstride[4] = {4, 1, 1, 1};
    CHECK_OK(cudnnCreateTensorDescriptor(&v->xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&v->yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&v->bd));
    CHECK_OK(cudnnCreateFilterDescriptor(&v->wd));
    CHECK_OK(cudnnCreateConvolutionDescriptor(&v->cd));
    return CHECK_OK(cudnnSetTensor4dDescriptor(v->xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 5, 5)) &&
           CHECK_OK(cudnnSetTensor4dDescriptor(v->yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 4, 4)) &&
           CHECK_OK(cudnnSetTensorNdDescriptor(v->bd, CUDNN_DATA_FLOAT, 4, bdim, bstride)) &&
           CHECK_OK(cudnnSetFilterNdDescriptor(v->wd, CUDNN_DATA_FLOAT, filter_format, 4, fdim)) &&
           CHECK_OK(cudnnSetConvolution2dDescriptor(v->cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                    CUDNN_DATA_FLOAT)) &&
           (groups == 1 || CHECK_OK(cudnnSetConvolutionGroupCount(v->cd, groups)));
}

static void sycl_conv_close(struct sycl_conv *v)
{
    cudnnDestroyTensorDescriptor(v->xd);
    cudnnDestroyTensorDescriptor(v->yd);
    cudnnDestroyTensorDescriptor(v->bd);
    cudnnDestroyFilterDescriptor(v->wd);
    cudnnDestroyConvolutionDescriptor(v->cd);
}

/* cudnn-convp1.cu: a 2x4x5x5 NCHW float x (cudnnSetTensor4dDescriptor), a 2x2 filter set by
   cudnnSetFilterNdDescriptor (NCHW, 4 dims), cudnnSetConvolution2dDescriptor (no padding, stride
   and dilation 1, CROSS_CORRELATION, FLOAT), **CUDNN_CONVOLUTION_FWD_ALGO_GEMM** with its
   cudnnGetConvolutionForwardWorkspaceSize, alpha 2.5 and beta 1.5 over an output of i; then the
   same with **cudnnSetConvolutionGroupCount(2)** (the filter 4x2x2x2) and ALGO_GEMM again. x, w
   and y's prior all i. The program's tables (first and last values) spot-checked, then fresh
   random values with y poisoned under beta 0, against the reference. */
TEST(compat_conv_syclomatic_gemm_algo_grouped)
{
    static const double first[2] = {17260, 1640}, last[2] = {357170, 101670};
    cudnnHandle_t h = test_handle();
    for (int grouped = 0; grouped < 2; grouped++) {
        struct sycl_conv v;
        const bool opened = sycl_conv_open(&v, grouped ? 2 : 1, CUDNN_TENSOR_NCHW);
        const struct ref_conv t = v.t;
        const long nx = v.nx, nw = v.nw, ny = v.ny;
        size_t ws = 0;
        bool ok = opened &&
                  CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, v.xd, v.wd, v.cd, v.yd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
                                                                   &ws));
        for (int pass = 0; ok && pass < 2; pass++) {
            const bool program = pass == 0;
            double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *prior = tview_fill(ny, 0);
            for (long i = 0; program && i < nx; i++) x[i] = (double)i;
            for (long i = 0; program && i < nw; i++) w[i] = (double)i;
            for (long i = 0; i < ny; i++) prior[i] = (double)i;
            double *want = malloc(sizeof(double) * ny);
            ref_conv_fwd(&t, x, w, want);
            const float alpha = 2.5f, beta = program ? 1.5f : 0.0f;
            for (long i = 0; i < ny; i++) want[i] = alpha * want[i] + beta * prior[i];
            void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, nx), *pw = tvalues_upload(CUDNN_DATA_FLOAT, w, nw);
            void *py = program ? tvalues_upload(CUDNN_DATA_FLOAT, prior, ny) : tbuf_alloc(sizeof(float) * ny);
            void *pws = tbuf_alloc(ws ? ws : 4);
            ok = CHECK_OK(cudnnConvolutionForward(h, &alpha, v.xd, px, v.wd, pw, v.cd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, pws, ws,
                                                  &beta, v.yd, py)) &&
                 tvalues_check(CUDNN_DATA_FLOAT, py, want, ny, tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH),
                                 program ? "SYCLomatic conv y" : "random conv y");
            if (ok && program) {
                double *got = tvalues_download(CUDNN_DATA_FLOAT, py, ny);
                CHECK(fabs(got[0] - first[grouped]) < 1 && fabs(got[ny - 1] - last[grouped]) < 1);
                free(got);
            }
            tbuf_free(px), tbuf_free(pw), tbuf_free(py), tbuf_free(pws);
            free(x), free(w), free(prior), free(want);
        }
        sycl_conv_close(&v);
    }
}

/* cudnn-convp2.cu: cudnnConvolutionBiasActivationForward with **CUDNN_CONVOLUTION_FWD_ALGO_GEMM**,
   a RELU activation (NaN not propagated), **a filter set by cudnnSetFilterNdDescriptor with
   CUDNN_TENSOR_NHWC (K, R, S, C in memory) while x, z and y are NCHW** (4-D, cudnnSetTensor4d),
   the bias {1, C, 1, 1} by cudnnSetTensorNdDescriptor with strides {C, 1, 1, 1}, alpha1 2.5 and
   alpha2 1.5, z a separate buffer; ungrouped, then with cudnnSetConvolutionGroupCount(2). x, w, z,
   bias and y's prior all i. The program's tables (first values and last; they are those of the
   filter read as KRSC) spot-checked, then fresh random values with y poisoned, against the
   reference. */
TEST(compat_conv_syclomatic_bias_act_nhwc_filter_nchw_data)
{
    static const double first[2] = {13840, 1320}, second_k[2] = {39785, 3825}, last[2] = {353754, 101354};
    enum { K = 4, R = 2, S = 2 };
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t act;
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    for (int grouped = 0; grouped < 2; grouped++) {
        const int C = grouped ? 2 : 4; /* the filter's input channels */
        struct sycl_conv v;
        const bool opened = sycl_conv_open(&v, grouped ? 2 : 1, CUDNN_TENSOR_NHWC);
        const struct ref_conv t = v.t;
        const long nx = v.nx, nw = v.nw, ny = v.ny, hw = ny / (2 * K);
        size_t ws = 0;
        bool ok = opened &&
                  CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, v.xd, v.wd, v.cd, v.yd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
                                                                   &ws));
        for (int pass = 0; ok && pass < 2; pass++) {
            const bool program = pass == 0;
            double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *z = tview_random(ny, -1, 1);
            double *bias = tview_random(K, -1, 1), *krsc = malloc(sizeof(double) * nw);
            for (long i = 0; program && i < nx; i++) x[i] = (double)i;
            for (long i = 0; program && i < ny; i++) z[i] = (double)i;
            for (int i = 0; program && i < K; i++) bias[i] = i;
            /* the filter in memory, K R S C; the reference's K C R S from it */
            for (int k = 0; k < K; k++)
                for (int c = 0; c < C; c++)
                    for (int r = 0; r < R; r++)
                        for (int q = 0; q < S; q++) {
                            long at = ((long)(k * R + r) * S + q) * C + c, lg = ((long)(k * C + c) * R + r) * S + q;
                            if (program) w[lg] = (double)at;
                            krsc[at] = w[lg];
                        }
            double *want = malloc(sizeof(double) * ny);
            ref_conv_fwd(&t, x, w, want);
            for (long i = 0; i < ny; i++) {
                double v = 2.5 * want[i] + 1.5 * z[i] + bias[(i / hw) % K];
                want[i] = v > 0 ? v : 0;
            }
            const float alpha1 = 2.5f, alpha2 = 1.5f;
            void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, nx), *pw = tvalues_upload(CUDNN_DATA_FLOAT, krsc, nw);
            void *pz = tvalues_upload(CUDNN_DATA_FLOAT, z, ny), *pb = tvalues_upload(CUDNN_DATA_FLOAT, bias, K);
            void *py = tbuf_alloc(sizeof(float) * ny), *pws = tbuf_alloc(ws ? ws : 4);
            ok = CHECK_OK(cudnnConvolutionBiasActivationForward(h, &alpha1, v.xd, px, v.wd, pw, v.cd,
                                                                CUDNN_CONVOLUTION_FWD_ALGO_GEMM, pws, ws, &alpha2, v.yd, pz,
                                                                v.bd, pb, act, v.yd, py)) &&
                 tvalues_check(CUDNN_DATA_FLOAT, py, want, ny, tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH),
                                 program ? "SYCLomatic fused y" : "random fused y");
            if (ok && program) {
                double *got = tvalues_download(CUDNN_DATA_FLOAT, py, ny);
                CHECK(fabs(got[0] - first[grouped]) < 1 && fabs(got[16] - second_k[grouped]) < 1 &&
                      fabs(got[ny - 1] - last[grouped]) < 1);
                free(got);
            }
            tbuf_free(px), tbuf_free(pw), tbuf_free(pz), tbuf_free(pb), tbuf_free(py), tbuf_free(pws);
            free(x), free(w), free(z), free(bias), free(krsc), free(want);
        }
        sycl_conv_close(&v);
    }
    cudnnDestroyActivationDescriptor(act);
}

/* cudnn-convp3.cu to convp6.cu, on convp1's 2x4x5x5 x, 2x2 filters and 2x4x4x4 y (NCHW, the
   filter by cudnnSetFilterNdDescriptor): cudnnConvolutionBackwardData with BWD_DATA_ALGO_0 and its
   workspace query, alpha 2.5, beta 1.5; cudnnConvolutionBackwardFilter with BWD_FILTER_ALGO_0,
   alpha 1.5, beta 1.5; each ungrouped and with cudnnSetConvolutionGroupCount(2);
   cudnnConvolutionBackwardBias into a {1, C, 1, 1} bias set by cudnnSetTensorNdDescriptor, alpha
   2.5, beta 1.5; and cudnnFindConvolutionForwardAlgorithm asked for one result, **then
   cudnnSetConvolutionMathType(FMA)**, the workspace of the found algorithm and the forward with
   it. Every buffer i. The programs' first and last values, then fresh random values with the
   output poisoned under beta 0, against the reference. */
TEST(compat_conv_syclomatic_backward_and_found_forward)
{
    enum { BWD_DATA, BWD_FILTER, BWD_BIAS, FOUND_FWD };
    static const struct {
        int op, groups;
        double alpha, beta, first, last;
    } cases[] = {{BWD_DATA, 1, 2.5, 1.5, 8960, 43668.5},      {BWD_DATA, 2, 2.5, 1.5, 320, 16523.5},
                 {BWD_FILTER, 1, 1.5, 1.5, 189924, 666154},   {BWD_FILTER, 2, 1.5, 1.5, 189924, 666106},
                 {BWD_BIAS, 1, 2.5, 1.5, 3160, 7004.5},        {FOUND_FWD, 1, 2.5, 1.5, 17260, 357170}};
    cudnnHandle_t h = test_handle();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int g = cases[k].groups, op = cases[k].op;
        struct sycl_conv v;
        bool ok = sycl_conv_open(&v, g, CUDNN_TENSOR_NCHW);
        const struct ref_conv t = v.t;
        const long nx = v.nx, nw = v.nw, ny = v.ny;
        const long nout = op == BWD_DATA ? nx : op == BWD_FILTER ? nw : op == BWD_BIAS ? 4 : ny;
        for (int pass = 0; ok && pass < 2; pass++) {
            const bool program = pass == 0;
            double *x = tview_random(nx, -1, 1), *w = tview_random(nw, -1, 1), *y = tview_random(ny, -1, 1);
            double *prior = tview_fill(nout, 0), *want = malloc(sizeof(double) * nout);
            for (long i = 0; program && i < nx; i++) x[i] = (double)i;
            for (long i = 0; program && i < nw; i++) w[i] = (double)i;
            for (long i = 0; program && i < ny; i++) y[i] = (double)i;
            for (long i = 0; i < nout; i++) prior[i] = (double)i;
            if (op == BWD_DATA) ref_conv_bwd_data(&t, y, w, want);
            else if (op == BWD_FILTER) ref_conv_bwd_filter(&t, x, y, want);
            else if (op == FOUND_FWD) ref_conv_fwd(&t, x, w, want);
            else
                for (int c = 0; c < 4; c++) {
                    want[c] = 0;
                    for (long i = 0; i < ny; i++) want[c] += (i / 16) % 4 == c ? y[i] : 0;
                }
            const float alpha = (float)cases[k].alpha, beta = program ? (float)cases[k].beta : 0.0f;
            for (long i = 0; i < nout; i++) want[i] = alpha * want[i] + beta * prior[i];
            void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, nx), *pw = tvalues_upload(CUDNN_DATA_FLOAT, w, nw);
            void *py = tvalues_upload(CUDNN_DATA_FLOAT, y, ny);
            void *pout = program ? tvalues_upload(CUDNN_DATA_FLOAT, prior, nout) : tbuf_alloc(sizeof(float) * nout);
            size_t ws = 0;
            void *pws = NULL;
            if (op == BWD_DATA) {
                ok = CHECK_OK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, v.wd, v.yd, v.cd, v.xd,
                                                                           CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, &ws));
                pws = tbuf_alloc(ws ? ws : 4);
                ok = ok && CHECK_OK(cudnnConvolutionBackwardData(h, &alpha, v.wd, pw, v.yd, py, v.cd,
                                                                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, pws, ws, &beta, v.xd,
                                                                 pout));
            } else if (op == BWD_FILTER) {
                ok = CHECK_OK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, v.xd, v.yd, v.cd, v.wd,
                                                                             CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, &ws));
                pws = tbuf_alloc(ws ? ws : 4);
                ok = ok && CHECK_OK(cudnnConvolutionBackwardFilter(h, &alpha, v.xd, px, v.yd, py, v.cd,
                                                                   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, pws, ws, &beta,
                                                                   v.wd, pout));
            } else if (op == BWD_BIAS) {
                ok = CHECK_OK(cudnnConvolutionBackwardBias(h, &alpha, v.yd, py, &beta, v.bd, pout));
            } else {
                cudnnConvolutionFwdAlgoPerf_t perf;
                int got = 0;
                ok = CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, v.xd, v.wd, v.cd, v.yd, 1, &got, &perf)) &&
                     CHECK(got == 1 && perf.status == CUDNN_STATUS_SUCCESS) &&
                     CHECK_OK(cudnnSetConvolutionMathType(v.cd, CUDNN_FMA_MATH)) &&
                     CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, v.xd, v.wd, v.cd, v.yd, perf.algo, &ws));
                pws = tbuf_alloc(ws ? ws : 4);
                ok = ok && CHECK_OK(cudnnConvolutionForward(h, &alpha, v.xd, px, v.wd, pw, v.cd, perf.algo, pws, ws, &beta,
                                                            v.yd, pout));
            }
            /* the backward passes run under DEFAULT_MATH: their products may be TF32 */
            const double tol = op == BWD_DATA || op == BWD_FILTER
                                   ? tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH)
                                   : 1e-5;
            ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pout, want, nout, tol, program ? "SYCLomatic" : "random");
            if (ok && program) {
                double *got = tvalues_download(CUDNN_DATA_FLOAT, pout, nout);
                CHECK(fabs(got[0] - cases[k].first) < 1 && fabs(got[nout - 1] - cases[k].last) < 1);
                free(got);
            }
            tbuf_free(px), tbuf_free(pw), tbuf_free(py), tbuf_free(pout), tbuf_free(pws);
            free(x), free(w), free(y), free(prior), free(want);
        }
        sycl_conv_close(&v);
    }
}

/* cudnn-binary.cu: cudnnOpTensor **in place, A and C the same buffer and descriptor**, B another
   (2x2x5x5 NCHW float, cudnnSetTensor4dDescriptor), FLOAT compute, NaN propagated, alpha1 1.5,
   alpha2 2.5, beta 2, for ADD, MUL, MIN, MAX and the unary SQRT and NOT (B given, unused; NOT is
   1 - alpha1 A). A = C = i, B = 0.5 i + 5. The program's tables (values 1 and 99), then fresh
   random values (A positive for SQRT), against the formula. */
TEST(compat_op_tensor_syclomatic_in_place_on_a)
{
    enum { E = 100 };
    static const struct {
        cudnnOpTensorOp_t op;
        double at1, at99;
    } cases[] = {{CUDNN_OP_TENSOR_ADD, 17.25, 482.75}, {CUDNN_OP_TENSOR_MUL, 22.625, 20431.1},
                 {CUDNN_OP_TENSOR_MIN, 3.5, 334.25},   {CUDNN_OP_TENSOR_MAX, 15.75, 346.5},
                 {CUDNN_OP_TENSOR_SQRT, 3.22474, 210.186}, {CUDNN_OP_TENSOR_NOT, 1.5, 50.5}};
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t ad, bd;
    cudnnOpTensorDescriptor_t od;
    CHECK_OK(cudnnCreateTensorDescriptor(&ad));
    CHECK_OK(cudnnCreateTensorDescriptor(&bd));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&od));
    bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(ad, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 2, 5, 5)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 2, 5, 5));
    for (size_t k = 0; ok && k < sizeof cases / sizeof cases[0]; k++) {
        const cudnnOpTensorOp_t op = cases[k].op;
        ok = CHECK_OK(cudnnSetOpTensorDescriptor(od, op, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN));
        for (int pass = 0; ok && pass < 2; pass++) {
            const bool program = pass == 0;
            double *a = tview_random(E, op == CUDNN_OP_TENSOR_SQRT ? 0 : -2, 2), *b = tview_random(E, -2, 2);
            for (int i = 0; program && i < E; i++) a[i] = i, b[i] = 0.5 * i + 5;
            const float alpha1 = 1.5f, alpha2 = 2.5f, beta = 2.0f;
            void *pa = tvalues_upload(CUDNN_DATA_FLOAT, a, E), *pb = tvalues_upload(CUDNN_DATA_FLOAT, b, E);
            double *want = malloc(sizeof(double) * E);
            for (int i = 0; i < E; i++) {
                const double x = alpha1 * a[i], y = alpha2 * b[i];
                const double r = op == CUDNN_OP_TENSOR_ADD   ? x + y
                                 : op == CUDNN_OP_TENSOR_MUL ? x * y
                                 : op == CUDNN_OP_TENSOR_MIN ? (x < y ? x : y)
                                 : op == CUDNN_OP_TENSOR_MAX ? (x > y ? x : y)
                                 : op == CUDNN_OP_TENSOR_SQRT ? sqrt(x)
                                                              : 1 - x;
                want[i] = r + beta * a[i];
            }
            ok = CHECK_OK(cudnnOpTensor(h, od, &alpha1, ad, pa, &alpha2, bd, pb, &beta, ad, pa)) &&
                 tvalues_check(CUDNN_DATA_FLOAT, pa, want, E, 1e-5, program ? "SYCLomatic op tensor" : "random op tensor");
            if (ok && program) {
                double *got = tvalues_download(CUDNN_DATA_FLOAT, pa, E);
                CHECK(fabs(got[1] - cases[k].at1) < 1e-1 && fabs(got[99] - cases[k].at99) < 1e-1);
                free(got);
            }
            tbuf_free(pa), tbuf_free(pb), free(a), free(b), free(want);
        }
    }
    cudnnDestroyOpTensorDescriptor(od);
    cudnnDestroyTensorDescriptor(ad);
    cudnnDestroyTensorDescriptor(bd);
}

/* softmax (ACCURATE, FAST or LOG) over the channels (mode CHANNEL) or each image (INSTANCE) of a
   packed NCHW tensor: y = alpha * f(x) + beta * y. */
static void sycl_softmax(cudnnSoftmaxAlgorithm_t algo, bool instance, int n, int c, int s, const double *x,
                         double alpha, double beta, double *y)
{
    const int groups = instance ? n : n * s, len = instance ? c * s : c, step = instance ? 1 : s;
    for (int g = 0; g < groups; g++) {
        const long base = instance ? (long)g * c * s : (long)(g / s) * c * s + g % s;
        double m = -INFINITY, sum = 0;
        for (int i = 0; i < len; i++) m = fmax(m, x[base + (long)i * step]);
        for (int i = 0; i < len; i++) sum += exp(x[base + (long)i * step] - m);
        for (int i = 0; i < len; i++) {
            const long at = base + (long)i * step;
            const double v = algo == CUDNN_SOFTMAX_LOG ? x[at] - m - log(sum) : exp(x[at] - m) / sum;
            y[at] = alpha * v + beta * y[at];
        }
    }
}

/* Its backward from the y given: dx = alpha * y (dy - sum dy y), or for LOG alpha (dy - exp(y)
   sum dy), + beta * dx. */
static void sycl_softmax_bwd(cudnnSoftmaxAlgorithm_t algo, bool instance, int n, int c, int s, const double *y,
                             const double *dy, double alpha, double beta, double *dx)
{
    const int groups = instance ? n : n * s, len = instance ? c * s : c, step = instance ? 1 : s;
    for (int g = 0; g < groups; g++) {
        const long base = instance ? (long)g * c * s : (long)(g / s) * c * s + g % s;
        double dot = 0;
        for (int i = 0; i < len; i++) {
            const long at = base + (long)i * step;
            dot += algo == CUDNN_SOFTMAX_LOG ? dy[at] : dy[at] * y[at];
        }
        for (int i = 0; i < len; i++) {
            const long at = base + (long)i * step;
            const double v = algo == CUDNN_SOFTMAX_LOG ? dy[at] - exp(y[at]) * dot : y[at] * (dy[at] - dot);
            dx[at] = alpha * v + beta * dx[at];
        }
    }
}

/* cudnn-softmax.cu: cudnnSoftmaxForward with alpha 2 and beta 1.5 over a prior output (x = 10 i,
   CHANNEL); then four forward-backward pairs where **the backward is given the forward's output
   scaled by its alpha 1.5** as y: ACCURATE over the channels and over each image (INSTANCE, two
   images), LOG (the backward's beta 3) and FAST (beta 1.5), alpha 2, dy 1s, dx's prior i, 1 or 2 x
   2x5x5 NCHW float tensors by cudnnSetTensor4dDescriptor. NVIDIA's tables follow the formulas
   on the y given: y (dy - sum dy y), and for LOG dy - exp(y) sum dy. The program's values (two of
   each table), then fresh random values with the outputs poisoned under beta 0, against the
   formulas. */
TEST(compat_softmax_syclomatic_backward_on_a_scaled_y)
{
    static const struct {
        cudnnSoftmaxAlgorithm_t algo;
        bool instance, backward;
        int n;
        double beta_bwd, at[2][2]; /* {index, value} x 2 */
    } cases[] = {{CUDNN_SOFTMAX_ACCURATE, false, false, 1, 0, {{1, 1.5}, {25, 39.5}}},
                 {CUDNN_SOFTMAX_ACCURATE, false, true, 1, 0, {{0, -0.113787}, {25, -1.38621}}},
                 {CUDNN_SOFTMAX_ACCURATE, true, true, 2, 0, {{0, -0.00107016}, {99, -0.143712}}},
                 {CUDNN_SOFTMAX_LOG, false, true, 1, 3, {{0, 1.91643}, {49, 145.446}}},
                 {CUDNN_SOFTMAX_FAST, false, true, 1, 1.5, {{0, -0.113787}, {25, 36.1138}}}};
    enum { C = 2, S = 25 };
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t d;
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int n = cases[k].n, e = n * C * S;
        const cudnnSoftmaxMode_t mode = cases[k].instance ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL;
        bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, C, 5, 5));
        for (int pass = 0; ok && pass < 2; pass++) {
            const bool program = pass == 0;
            double *x = tview_random(e, -3, 3), *y = tview_fill(e, 0), *dy = program ? tview_fill(e, 1) : tview_random(e, -1, 1);
            double *dx = tview_fill(e, 0);
            for (int i = 0; i < e; i++) {
                if (program) x[i] = cases[k].backward ? 0.1 * i : 10.0 * i;
                if (program) y[i] = dx[i] = i;
            }
            const float fa = cases[k].backward ? 1.5f : 2.0f, fb = cases[k].backward || !program ? 0.0f : 1.5f;
            sycl_softmax(cases[k].algo, cases[k].instance, n, C, S, x, fa, fb, y);
            void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, e), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, e);
            double *prior = tview_fill(e, 0);
            for (int i = 0; i < e; i++) prior[i] = i;
            void *py = program && !cases[k].backward ? tvalues_upload(CUDNN_DATA_FLOAT, prior, e) : tbuf_alloc(sizeof(float) * e);
            ok = CHECK_OK(cudnnSoftmaxForward(h, cases[k].algo, mode, &fa, d, px, &fb, d, py)) &&
                 tvalues_check(CUDNN_DATA_FLOAT, py, y, e, 1e-5, "softmax y");
            void *pout = py;
            void *pdx = NULL;
            if (ok && cases[k].backward) {
                const float ba = 2.0f, bb = program ? (float)cases[k].beta_bwd : 0.0f;
                double *given = tvalues_download(CUDNN_DATA_FLOAT, py, e);
                sycl_softmax_bwd(cases[k].algo, cases[k].instance, n, C, S, given, dy, ba, bb, dx);
                free(given);
                pdx = program ? tvalues_upload(CUDNN_DATA_FLOAT, prior, e) : tbuf_alloc(sizeof(float) * e);
                ok = CHECK_OK(cudnnSoftmaxBackward(h, cases[k].algo, mode, &ba, d, py, d, pdy, &bb, d, pdx)) &&
                     tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, e, 1e-5, "softmax dx");
                pout = pdx;
            }
            if (ok && program) {
                double *got = tvalues_download(CUDNN_DATA_FLOAT, pout, e);
                for (int j = 0; j < 2; j++)
                    CHECK(fabs(got[(int)cases[k].at[j][0]] - cases[k].at[j][1]) < 1e-3);
                free(got);
            }
            tbuf_free(px), tbuf_free(pdy), tbuf_free(py), tbuf_free(pdx);
            free(x), free(y), free(dy), free(dx), free(prior);
        }
    }
    cudnnDestroyTensorDescriptor(d);
}

/* cudnn-pooling.cu: cudnnSetPooling2dDescriptor MAX, NaN not propagated, **a 4x4 window with
   padding 3** and stride 2 on 1x2x5x5 float NCHW x, the output dims from
   cudnnGetPooling2dForwardOutputDim (1x2x4x4); the forward with alpha 1 and beta 0, then a forward
   with alpha 1.5 and beta 1 over an output of i, and **cudnnPoolingBackward given that blended
   y**, which no element of x equals, dy 1s, alpha 1.5 and beta 1 over a dx of i. NVIDIA's table
   routes every dy to its window's maximum in x. The program's values, then fresh random values
   with y NaN in the backward and the outputs poisoned under beta 0, against the reference. */
TEST(compat_pool_syclomatic_max_backward_on_a_blended_y)
{
    static const double fwd_at[2][2] = {{1, 2}, {31, 49}}, bwd_at[3][2] = {{0, 1.5}, {4, 7}, {49, 55}};
    const struct ref_pool rp = {CUDNN_POOLING_MAX, false, 2, {4, 4}, {3, 3}, {2, 2}};
    cudnnHandle_t h = test_handle();
    cudnnPoolingDescriptor_t pd;
    cudnnTensorDescriptor_t xd, yd;
    CHECK_OK(cudnnCreatePoolingDescriptor(&pd));
    CHECK_OK(cudnnCreateTensorDescriptor(&xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&yd));
    int on = 0, oc = 0, oh = 0, ow = 0;
    bool ok = CHECK_OK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 4, 4, 3, 3, 2, 2)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 5, 5)) &&
              CHECK_OK(cudnnGetPooling2dForwardOutputDim(pd, xd, &on, &oc, &oh, &ow)) &&
              CHECK(on == 1 && oc == 2 && oh == 4 && ow == 4) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow));
    const int in[2] = {5, 5}, out[2] = {4, 4}, nx = 50, ny = 32;
    for (int pass = 0; ok && pass < 2; pass++) {
        const bool program = pass == 0;
        double *x = tview_random(nx, -3, 3), *dy = program ? tview_fill(ny, 1) : tview_random(ny, -1, 1);
        double *yprior = tview_fill(ny, 0), *dxprior = tview_fill(nx, 0);
        for (int i = 0; i < ny; i++) yprior[i] = i;
        for (int i = 0; i < nx; i++) dxprior[i] = i, x[i] = program ? i : x[i];
        double *y = malloc(sizeof(double) * ny), *dx = malloc(sizeof(double) * nx);
        ref_pooling_forward(&rp, 1, 2, in, out, x, y);
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, nx), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, ny);
        void *py = tbuf_alloc(sizeof(float) * ny);
        float alpha = 1.0f, beta = 0.0f;
        ok = CHECK_OK(cudnnPoolingForward(h, pd, &alpha, xd, px, &beta, yd, py)) &&
             tvalues_check(CUDNN_DATA_FLOAT, py, y, ny, 1e-6, "pooling y");
        if (ok && program) {
            double *got = tvalues_download(CUDNN_DATA_FLOAT, py, ny);
            for (int j = 0; j < 2; j++) CHECK(fabs(got[(int)fwd_at[j][0]] - fwd_at[j][1]) < 1e-3);
            free(got);
        }
        /* program: x of 0.1 i, y blended over i; random: y NaN */
        for (int i = 0; program && i < nx; i++) x[i] = 0.1 * i;
        tbuf_free(px);
        px = tvalues_upload(CUDNN_DATA_FLOAT, x, nx);
        void *pdx = program ? tvalues_upload(CUDNN_DATA_FLOAT, dxprior, nx) : tbuf_alloc(sizeof(float) * nx);
        alpha = 1.5f, beta = program ? 1.0f : 0.0f;
        if (program) {
            tbuf_free(py);
            py = tvalues_upload(CUDNN_DATA_FLOAT, yprior, ny);
            ok = ok && CHECK_OK(cudnnPoolingForward(h, pd, &alpha, xd, px, &beta, yd, py));
        } else {
            tbuf_poison(py, sizeof(float) * ny);
        }
        ref_pooling_backward(&rp, 1, 2, in, out, x, dy, dx);
        for (int i = 0; i < nx; i++) dx[i] = 1.5 * dx[i] + beta * dxprior[i];
        ok = ok && CHECK_OK(cudnnPoolingBackward(h, pd, &alpha, yd, py, yd, pdy, xd, px, &beta, xd, pdx)) &&
             tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, nx, 1e-5, "pooling dx");
        if (ok && program) {
            double *got = tvalues_download(CUDNN_DATA_FLOAT, pdx, nx);
            for (int j = 0; j < 3; j++) CHECK(fabs(got[(int)bwd_at[j][0]] - bwd_at[j][1]) < 1e-3);
            free(got);
        }
        tbuf_free(px), tbuf_free(pdy), tbuf_free(py), tbuf_free(pdx);
        free(x), free(dy), free(yprior), free(dxprior), free(y), free(dx);
    }
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyPoolingDescriptor(pd);
}

/* cudnn-activation.cu: SIGMOID (NaN not propagated) forward with alpha 2 and beta 1.5 over an
   output of i (x = i); then SIGMOID (NaN propagated) forward with alpha 1.5, beta 0 and
   **cudnnActivationBackward given that scaled output as y**, dy 1s, alpha 2, beta 0, 1x2x5x5 NCHW
   float. The backward's table (printed by the program, not checked by it) is alpha dy y (1 - y)
   of the y given: 0.375 where the gradient of the sigmoid at 0 gives 0.5. The program's values,
   then fresh random values with dx poisoned, against the formulas. */
TEST(compat_act_syclomatic_sigmoid_backward_on_a_scaled_y)
{
    enum { E = 50 };
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t ad;
    cudnnTensorDescriptor_t d;
    CHECK_OK(cudnnCreateActivationDescriptor(&ad));
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    bool ok = CHECK_OK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 5, 5));
    for (int pass = 0; ok && pass < 2; pass++) {
        const bool program = pass == 0;
        double *x = tview_random(E, -4, 4), *dy = program ? tview_fill(E, 1) : tview_random(E, -1, 1);
        double *prior = tview_fill(E, 0), *y = malloc(sizeof(double) * E), *dx = malloc(sizeof(double) * E);
        for (int i = 0; i < E; i++) prior[i] = i, x[i] = program ? i : x[i];
        for (int i = 0; i < E; i++) y[i] = 2 / (1 + exp(-x[i])) + (program ? 1.5 * prior[i] : 0);
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, E), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, E);
        void *py = program ? tvalues_upload(CUDNN_DATA_FLOAT, prior, E) : tbuf_alloc(sizeof(float) * E);
        float alpha = 2.0f, beta = program ? 1.5f : 0.0f;
        ok = CHECK_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_SIGMOID, CUDNN_NOT_PROPAGATE_NAN, 0.0)) &&
             CHECK_OK(cudnnActivationForward(h, ad, &alpha, d, px, &beta, d, py)) &&
             tvalues_check(CUDNN_DATA_FLOAT, py, y, E, 1e-5, "sigmoid y");
        if (ok && program) {
            double *got = tvalues_download(CUDNN_DATA_FLOAT, py, E);
            CHECK(fabs(got[1] - 2.96212) < 1e-3 && fabs(got[49] - 75.5) < 1e-3);
            free(got);
        }
        /* the backward's forward: x of 0.1 i in the program, y = 1.5 sigmoid(x) */
        for (int i = 0; program && i < E; i++) x[i] = 0.1 * i;
        tbuf_free(px);
        px = tvalues_upload(CUDNN_DATA_FLOAT, x, E);
        for (int i = 0; i < E; i++) {
            const double yy = 1.5 / (1 + exp(-x[i]));
            dx[i] = 2 * dy[i] * yy * (1 - yy);
        }
        void *pdx = tbuf_alloc(sizeof(float) * E);
        alpha = 1.5f, beta = 0.0f;
        ok = ok && CHECK_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_SIGMOID, CUDNN_PROPAGATE_NAN, 0.0)) &&
             CHECK_OK(cudnnActivationForward(h, ad, &alpha, d, px, &beta, d, py));
        alpha = 2.0f;
        ok = ok && CHECK_OK(cudnnActivationBackward(h, ad, &alpha, d, py, d, pdy, d, px, &beta, d, pdx)) &&
             tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, E, 1e-5, "sigmoid dx");
        if (ok && program) {
            double *got = tvalues_download(CUDNN_DATA_FLOAT, pdx, E);
            CHECK(fabs(got[0] - 0.375) < 1e-3 && fabs(got[7] - -0.00457374) < 1e-3 && fabs(got[49] - -1.4559) < 1e-3);
            free(got);
        }
        tbuf_free(px), tbuf_free(pdy), tbuf_free(py), tbuf_free(pdx);
        free(x), free(dy), free(prior), free(y), free(dx);
    }
    cudnnDestroyTensorDescriptor(d);
    cudnnDestroyActivationDescriptor(ad);
}
