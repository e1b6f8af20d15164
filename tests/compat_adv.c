/* compat_adv.c: call patterns of real programs (docs/compatibility.md) for the CTC and attention
   calls that the ops' own tests do not make (PyTorch's, Marian's, Deeplearning4j's,
   TensorFlow's and PaddlePaddle's CTC loss, cudnnxx's CTC workspace query, CUDA.jl's attention and its test matrix, Knet's
   attention, NVIDIA's multiHeadAttention sample), each as the program makes it, its result
   against the double references of tests/ref/. (compat_rnn.c, compat_rnn_more.c,
   compat_rnn_v8.c: the RNN patterns.) */
#include "ref/attention.h"
#include "ref/ctc.h"
#include "tensors.h"
#include "test.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- PyTorch's CTC loss (aten/src/ATen/native/cudnn/LossCTC.cpp) ------------------------------- */

/* PyTorch hands cuDNN log-probabilities (log_softmax already applied) under
   CUDNN_LOSS_NORMALIZATION_SOFTMAX with CUDNN_PROPAGATE_NAN: the softmax of a log-softmax is the
   softmax itself. Its probs descriptor takes the tensor's own strides (a T x N x A view of an
   N x T x A tensor, the usual result of transposing a batch-first output), its gradient tensor is
   contiguous: the two descriptors differ in strides. The host-label call (every input length
   T, labels < 256) with cudnnGetCTCLossWorkspaceSize, and the _v8 call with the labels and
   lengths in device memory and cudnnSetCTCLossDescriptor_v8(..., 255). A Marian fork
   (jindrahelcl/marian-dev src/ctc/cudnn_ctc.cu) makes the _v8 calls on packed T x N x A probabilities, the one
   descriptor for them and the gradients, NaN not propagated, a maximum label length of 256. */
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
    /* Marian's probs: packed T x N x A, described as the gradients are */
    void *packed = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * A);
    cudnnCTCLossDescriptor_t d;
    CHECK_OK(cudnnCreateCTCLossDescriptor(&d));
    for (int variant = 0; variant < 3; variant++) {
        const bool v8 = variant > 0, marian = variant == 2;
        const cudnnCTCLossAlgo_t algo = v8 ? CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC : CUDNN_CTC_LOSS_ALGO_DETERMINISTIC;
        size_t ws = 0;
        bool ok;
        tbuf_poison(pg, sizeof(float) * T * N * A);
        tbuf_poison(pc, sizeof(float) * N);
        if (v8) {
            cudnnTensorDescriptor_t probs = marian ? gd : pd;
            ok = CHECK_OK(cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                                       marian ? CUDNN_NOT_PROPAGATE_NAN : CUDNN_PROPAGATE_NAN,
                                                       marian ? 256 : 255)) &&
                 CHECK_OK(cudnnGetCTCLossWorkspaceSize_v8(h, algo, d, probs, gd, &ws));
            void *pws = tbuf_alloc(ws ? ws : 1);
            ok = ok && CHECK_OK(cudnnCTCLoss_v8(h, algo, d, probs, marian ? packed : pp, dlabels, dll, dil, pc, gd, pg,
                                                ws, pws));
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
        static const char *const costs_of[] = {"costs", "_v8 costs", "Marian's costs"};
        static const char *const grads_of[] = {"gradients", "_v8 gradients", "Marian's gradients"};
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pc, costs, N, 2e-5, costs_of[variant]);
        ok = ok && tvalues_check(CUDNN_DATA_FLOAT, pg, grads, T * N * A, 5e-5, grads_of[variant]);
    }
    cudnnDestroyCTCLossDescriptor(d);
    cudnnDestroyTensorDescriptor(pd);
    cudnnDestroyTensorDescriptor(gd);
    void *bufs[] = {pp, pg, pc, dlabels, dll, dil, packed};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(x), free(stored), free(grads);
}

/* ---- Deeplearning4j's CTC loss (libnd4j include/ops/declarable/platform/cudnn/ctcloss.cu) ---- */

/* libnd4j's cudnnCtcLoss: the op's B x T x C logits permuted to T x B x C, so probs (and, for
   the gradient op, the gradients) described with the permuted array's strides {C, T C, 1};
   cudnnSetCTCLossDescriptorEx(FLOAT, SOFTMAX, PROPAGATE_NAN), DETERMINISTIC, the labels
   concatenated on the host, each sample's input length its own. The loss op asks for no
   gradients: gradientsDesc NULL (CudnnTensor gradsDesc(nullptr)) in cudnnGetCTCLossWorkspaceSize
   and gradientsDesc and gradients NULL in cudnnCTCLoss; the gradient op passes both and a
   temporary for the losses. Gradients given without their descriptor are BAD_PARAM, nothing
   written. */
TEST(compat_ctc_dl4j_loss_without_gradients)
{
    enum { T = 6, B = 3, C = 4 };
    static const int label_lengths[B] = {2, 3, 1}, input_lengths[B] = {6, 5, 3};
    static const int labels[] = {1, 2, 3, 1, 3, 2};
    cudnnHandle_t h = test_handle();
    double *x = malloc(sizeof(double) * T * B * C), *stored = malloc(sizeof(double) * T * B * C);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < B; n++)
            for (int k = 0; k < C; k++) {
                double v = (float)trand_uniform(-2, 2);
                x[(t * B + n) * C + k] = v;      /* T x B x C, the reference's order */
                stored[(n * T + t) * C + k] = v; /* B x T x C, the op's array */
            }
    double costs[B], *grads = malloc(sizeof(double) * T * B * C), *stored_grads = malloc(sizeof(double) * T * B * C);
    ref_ctc(T, B, C, true, x, labels, label_lengths, input_lengths, costs, grads);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < B; n++)
            for (int k = 0; k < C; k++) stored_grads[(n * T + t) * C + k] = grads[(t * B + n) * C + k];
    cudnnTensorDescriptor_t pd;
    CHECK_OK(cudnnCreateTensorDescriptor(&pd));
    CHECK_OK(cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, (const int[]){T, B, C}, (const int[]){C, T * C, 1}));
    cudnnCTCLossDescriptor_t d;
    CHECK_OK(cudnnCreateCTCLossDescriptor(&d));
    CHECK_OK(cudnnSetCTCLossDescriptorEx(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_PROPAGATE_NAN));
    const cudnnCTCLossAlgo_t algo = CUDNN_CTC_LOSS_ALGO_DETERMINISTIC;
    void *pp = tvalues_upload(CUDNN_DATA_FLOAT, stored, T * B * C), *pc = tbuf_alloc(sizeof(float) * B);
    void *pg = tbuf_alloc(sizeof(float) * T * B * C);
    for (int with_grads = 0; with_grads < 2; with_grads++) {
        cudnnTensorDescriptor_t gd = with_grads ? pd : NULL;
        size_t ws = 0;
        tbuf_poison(pc, sizeof(float) * B);
        tbuf_poison(pg, sizeof(float) * T * B * C);
        if (!CHECK_OK(cudnnGetCTCLossWorkspaceSize(h, pd, gd, labels, label_lengths, input_lengths, algo, d, &ws)))
            continue;
        void *pws = tbuf_alloc(ws ? ws : 1);
        if (!with_grads) {
            void *snap = tbuf_snapshot(pc, sizeof(float) * B);
            CHECK_STATUS(cudnnCTCLoss(h, pd, pp, labels, label_lengths, input_lengths, pc, NULL, pg, algo, d, pws, ws),
                         CUDNN_STATUS_BAD_PARAM);
            tbuf_unchanged(pc, snap, sizeof(float) * B, "costs after gradients without their descriptor");
            free(snap);
        }
        if (CHECK_OK(cudnnCTCLoss(h, pd, pp, labels, label_lengths, input_lengths, pc, gd, with_grads ? pg : NULL, algo,
                                  d, pws, ws))) {
            tvalues_check(CUDNN_DATA_FLOAT, pc, costs, B, 2e-5, with_grads ? "DL4J's gradient op, costs"
                                                                           : "DL4J's loss op, costs");
            if (with_grads) tvalues_check(CUDNN_DATA_FLOAT, pg, stored_grads, T * B * C, 5e-5, "DL4J's gradients");
        }
        tbuf_free(pws);
    }
    cudnnDestroyCTCLossDescriptor(d);
    cudnnDestroyTensorDescriptor(pd);
    tbuf_free(pp), tbuf_free(pc), tbuf_free(pg);
    free(x), free(stored), free(grads), free(stored_grads);
}

/* ---- TensorFlow's CTC loss (core/kernels/ctc_loss_op.cc CTCLossOpGPU, stream_executor cuda_dnn.cc) -- */

/* TensorFlow's CTCLossV2 GPU kernel: the time-major max_time x batch x num_classes **logits**
   (not log-softmax: the SOFTMAX normalization applies the softmax) described twice, for probs and
   for the gradients, as CudnnRnnStateTensorDescriptor does ({T, N, A}, packed strides, 3 dims);
   cudnnSetCTCLossDescriptorEx(FLOAT, SOFTMAX, **NOT_PROPAGATE_NAN**); the labels, their lengths
   (a histogram of the sparse indices' batch column: a sample with no label gets length 0) and the
   sequence lengths (each sample's own, shorter than max_time) all in host memory; the workspace
   asked for with NON_DETERMINISTIC first when determinism is not required and with
   DETERMINISTIC when that query fails (or always, under TF_DETERMINISTIC_OPS), the algorithm that
   answered used for cudnnCTCLoss with the scratch of that size; costs and gradients always. */
TEST(compat_ctc_tensorflow_logits_host_lengths)
{
    enum { T = 8, N = 4, A = 5 };
    static const int label_lengths[N] = {3, 0, 2, 1}, input_lengths[N] = {8, 5, 6, 3};
    static const int labels[] = {2, 2, 4, 1, 3, 4};
    cudnnHandle_t h = test_handle();
    double *x = malloc(sizeof(double) * T * N * A), costs[N], *grads = malloc(sizeof(double) * T * N * A);
    for (int i = 0; i < T * N * A; i++) x[i] = (float)trand_uniform(-4, 6); /* unnormalized logits */
    ref_ctc(T, N, A, true, x, labels, label_lengths, input_lengths, costs, grads);
    cudnnTensorDescriptor_t pd, gd;
    CHECK_OK(cudnnCreateTensorDescriptor(&pd));
    CHECK_OK(cudnnCreateTensorDescriptor(&gd));
    CHECK_OK(cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, (const int[]){T, N, A}, (const int[]){N * A, A, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(gd, CUDNN_DATA_FLOAT, 3, (const int[]){T, N, A}, (const int[]){N * A, A, 1}));
    cudnnCTCLossDescriptor_t d;
    CHECK_OK(cudnnCreateCTCLossDescriptor(&d));
    CHECK_OK(cudnnSetCTCLossDescriptorEx(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                         CUDNN_NOT_PROPAGATE_NAN));
    void *pp = tvalues_upload(CUDNN_DATA_FLOAT, x, T * N * A), *pg = tbuf_alloc(sizeof(float) * T * N * A);
    void *pc = tbuf_alloc(sizeof(float) * N);
    for (int deterministic = 0; deterministic < 2; deterministic++) {
        cudnnCTCLossAlgo_t algo = deterministic ? CUDNN_CTC_LOSS_ALGO_DETERMINISTIC
                                                : CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC;
        size_t ws = 0;
        cudnnStatus_t st = cudnnGetCTCLossWorkspaceSize(h, pd, gd, labels, label_lengths, input_lengths, algo, d, &ws);
        if (st != CUDNN_STATUS_SUCCESS && !deterministic) {
            algo = CUDNN_CTC_LOSS_ALGO_DETERMINISTIC;
            st = cudnnGetCTCLossWorkspaceSize(h, pd, gd, labels, label_lengths, input_lengths, algo, d, &ws);
        }
        if (!CHECK_STATUS(st, CUDNN_STATUS_SUCCESS)) continue;
        void *pws = tbuf_alloc(ws ? ws : 1);
        tbuf_poison(pg, sizeof(float) * T * N * A);
        tbuf_poison(pc, sizeof(float) * N);
        if (CHECK_OK(cudnnCTCLoss(h, pd, pp, labels, label_lengths, input_lengths, pc, gd, pg, algo, d, pws, ws))) {
            tvalues_check(CUDNN_DATA_FLOAT, pc, costs, N, 2e-5, deterministic ? "deterministic costs" : "costs");
            tvalues_check(CUDNN_DATA_FLOAT, pg, grads, T * N * A, 5e-5,
                          deterministic ? "deterministic gradients" : "gradients");
        }
        tbuf_free(pws);
    }
    cudnnDestroyCTCLossDescriptor(d);
    cudnnDestroyTensorDescriptor(pd);
    cudnnDestroyTensorDescriptor(gd);
    tbuf_free(pp), tbuf_free(pg), tbuf_free(pc);
    free(x), free(grads);
}

/* ---- cudnnxx's CTC workspace test (cudnnxx/ctc_loss_test.cc, CTCLossTest.TestGetWorkspaceSize) -- */

/* cudnnxx's test of its CTCLoss wrapper, run on NVIDIA's library, which throws unless the call
   returns SUCCESS: cudnnSetCTCLossDescriptorEx(FLOAT, NONE, NOT_PROPAGATE_NAN); probs and
   gradients {T 50, N 16, C 20} with packed strides (cudnnSetTensorNdDescriptor); label lengths
   0, 1, ..., 15, the labels 0, 1, ..., 119 (**the blank and symbols past the alphabet**), the
   input lengths {T, 0, 0, ...} (**labels longer than their inputs**); cudnnGetCTCLossWorkspaceSize
   with DETERMINISTIC. The size serves a loss of that geometry: cudnnCTCLoss with valid labels of
   the same lengths and every input length T runs in a workspace of that size. */
TEST(compat_ctc_cudnnxx_workspace_query_any_labels)
{
    enum { T = 50, C = 20, N = 16, L = N * (N - 1) / 2 };
    int label_lengths[N], input_lengths[N] = {T}, labels[L], good_labels[L], full[N];
    for (int i = 0; i < N; i++) label_lengths[i] = i, full[i] = T;
    for (int i = 0; i < L; i++) labels[i] = i, good_labels[i] = 1 + (i * 7) % (C - 1);
    cudnnHandle_t h = test_handle();
    cudnnTensorDescriptor_t pd, gd;
    cudnnCTCLossDescriptor_t d;
    CHECK_OK(cudnnCreateTensorDescriptor(&pd));
    CHECK_OK(cudnnCreateTensorDescriptor(&gd));
    CHECK_OK(cudnnCreateCTCLossDescriptor(&d));
    size_t ws = 0;
    bool ok = CHECK_OK(cudnnSetCTCLossDescriptorEx(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE,
                                                   CUDNN_NOT_PROPAGATE_NAN)) &&
              CHECK_OK(cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, (const int[]){T, N, C},
                                                  (const int[]){N * C, C, 1})) &&
              CHECK_OK(cudnnSetTensorNdDescriptor(gd, CUDNN_DATA_FLOAT, 3, (const int[]){T, N, C},
                                                  (const int[]){N * C, C, 1})) &&
              CHECK_OK(cudnnGetCTCLossWorkspaceSize(h, pd, gd, labels, label_lengths, input_lengths,
                                                    CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, &ws));
    /* probabilities (normalization NONE): each step's softmax of random activations */
    double *y = malloc(sizeof(double) * T * N * C), costs[N], *grads = malloc(sizeof(double) * T * N * C);
    for (int tn = 0; tn < T * N; tn++) {
        double sum = 0;
        for (int a = 0; a < C; a++) sum += y[tn * C + a] = exp(trand_uniform(-3, 3));
        for (int a = 0; a < C; a++) y[tn * C + a] /= sum;
    }
    ref_ctc(T, N, C, false, y, good_labels, label_lengths, full, costs, grads);
    void *pp = tvalues_upload(CUDNN_DATA_FLOAT, y, T * N * C), *pg = tbuf_alloc(sizeof(float) * T * N * C);
    void *pc = tbuf_alloc(sizeof(float) * N), *pws = tbuf_alloc(ws ? ws : 1);
    if (ok && CHECK_OK(cudnnCTCLoss(h, pd, pp, good_labels, label_lengths, full, pc, gd, pg,
                                    CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, pws, ws))) {
        tvalues_check(CUDNN_DATA_FLOAT, pc, costs, N, 2e-5, "costs in the workspace cudnnxx's query sized");
        tvalues_check(CUDNN_DATA_FLOAT, pg, grads, T * N * C, 5e-5, "gradients");
    }
    /* the loss itself refuses cudnnxx's labels, writing nothing */
    tbuf_poison(pc, sizeof(float) * N);
    void *snap = tbuf_snapshot(pc, sizeof(float) * N);
    CHECK_STATUS(cudnnCTCLoss(h, pd, pp, labels, label_lengths, input_lengths, pc, gd, pg,
                              CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, pws, ws),
                 CUDNN_STATUS_BAD_PARAM);
    tbuf_unchanged(pc, snap, sizeof(float) * N, "costs after cudnnxx's labels were refused");
    free(snap);
    cudnnDestroyCTCLossDescriptor(d);
    cudnnDestroyTensorDescriptor(pd);
    cudnnDestroyTensorDescriptor(gd);
    tbuf_free(pp), tbuf_free(pg), tbuf_free(pc), tbuf_free(pws);
    free(y), free(grads);
}

/* ---- PaddlePaddle's warpctc op on cuDNN (paddle/fluid/operators/warpctc_cudnn_op.cu.cc) ------- */

/* Paddle's CudnnCTCKernel: the LoD logits put through its own softmax first ("cudnn takes
   softmax input"), then padded to a T x N x C array with **0 past each sequence's length**;
   probs and gradients described by ScopedTensorDescriptor (3 dims, packed strides); the loss
   descriptor set by **cudnnSetCTCLossDescriptor(FLOAT)** alone (normalization NONE, NaN not
   propagated); the labels and both lengths on the host, each sequence its own length;
   DETERMINISTIC; the gradients (with respect to the activations before the softmax) unpadded
   afterwards. */
TEST(compat_ctc_paddle_softmax_input_padded)
{
    enum { T = 6, N = 3, C = 5 };
    static const int label_lengths[N] = {2, 3, 1}, input_lengths[N] = {4, 6, 2};
    static const int labels[] = {3, 1, 2, 2, 4, 1};
    cudnnHandle_t h = test_handle();
    double *act = malloc(sizeof(double) * T * N * C), *probs = calloc(T * N * C, sizeof(double));
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            double *a = &act[(t * N + n) * C], *p = &probs[(t * N + n) * C], mx = -INFINITY, sum = 0;
            for (int k = 0; k < C; k++) a[k] = trand_uniform(-3, 3), mx = fmax(mx, a[k]);
            if (t >= input_lengths[n]) continue; /* the padding stays 0 */
            for (int k = 0; k < C; k++) sum += exp(a[k] - mx);
            for (int k = 0; k < C; k++) p[k] = (float)(exp(a[k] - mx) / sum);
        }
    double costs[N], *grads = malloc(sizeof(double) * T * N * C);
    ref_ctc(T, N, C, false, probs, labels, label_lengths, input_lengths, costs, grads);
    cudnnTensorDescriptor_t pd, gd;
    CHECK_OK(cudnnCreateTensorDescriptor(&pd));
    CHECK_OK(cudnnCreateTensorDescriptor(&gd));
    CHECK_OK(cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, (const int[]){T, N, C}, (const int[]){N * C, C, 1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(gd, CUDNN_DATA_FLOAT, 3, (const int[]){T, N, C}, (const int[]){N * C, C, 1}));
    cudnnCTCLossDescriptor_t d;
    CHECK_OK(cudnnCreateCTCLossDescriptor(&d));
    CHECK_OK(cudnnSetCTCLossDescriptor(d, CUDNN_DATA_FLOAT));
    void *pp = tvalues_upload(CUDNN_DATA_FLOAT, probs, T * N * C), *pg = tbuf_alloc(sizeof(float) * T * N * C);
    void *pc = tbuf_alloc(sizeof(float) * N);
    size_t ws = 0;
    if (CHECK_OK(cudnnGetCTCLossWorkspaceSize(h, pd, gd, labels, label_lengths, input_lengths,
                                              CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, &ws))) {
        void *pws = tbuf_alloc(ws ? ws : 1);
        if (CHECK_OK(cudnnCTCLoss(h, pd, pp, labels, label_lengths, input_lengths, pc, gd, pg,
                                  CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, d, pws, ws))) {
            tvalues_check(CUDNN_DATA_FLOAT, pc, costs, N, 2e-5, "Paddle's costs");
            tvalues_check(CUDNN_DATA_FLOAT, pg, grads, T * N * C, 5e-5, "Paddle's padded gradients");
        }
        tbuf_free(pws);
    }
    cudnnDestroyCTCLossDescriptor(d);
    cudnnDestroyTensorDescriptor(pd);
    cudnnDestroyTensorDescriptor(gd);
    tbuf_free(pp), tbuf_free(pg), tbuf_free(pc);
    free(act), free(probs), free(grads);
}

/* ---- multi-head attention under DEFAULT_MATH: TF32 bounds ---------------------------------------- */

/* Whether got passes against want: within an FP32 tolerance rel (relative, at least 1) plus the
   TF32 bound tf32 (absolute, ttf32_bound). */
static bool mha_close(double got, double want, double rel, double tf32)
{
    return fabs(got - want) <= tf32 + rel * fmax(1, fabs(want));
}

/* The TF32 bounds (ttf32_bound) of the attention r computes from q, k, v and res (NULL: none):
   of its output in b[0] and, when dout is given (r without biases), of the gradients of q, k and
   v in b[1..3] and of the Q, K, V and O weights in b[4..7]; all 0 where math keeps float products
   off TF32 (ttf32_may_apply: the host backend, FMA_MATH, NVIDIA_TF32_OVERRIDE=0). */
static void mha_tf32_bounds(const struct ref_mha *r, cudnnMathType_t math, const double *q, const double *k,
                            const double *v, const double *res, const double *dout, double b[8])
{
    for (int i = 0; i < 8; i++) b[i] = 0;
    if (!ttf32_may_apply(CUDNN_DATA_FLOAT, math)) return;
    const int64_t H = r->heads, nq = (int64_t)r->B * r->M * r->Tq, nk = (int64_t)r->B * ref_mha_kv_beams(r) * r->Tk;
    const int64_t n[8] = {nq * ref_mha_o_size(r),    nq * r->q_size,
                          nk * r->k_size,            nk * r->v_size,
                          H * r->q_proj * r->q_size, H * r->k_proj * r->k_size,
                          H * r->v_proj * r->v_size, H * r->o_proj * ref_mha_head_v(r)};
    const int outputs = dout != NULL ? 8 : 1;
    double *val[3][8]; /* exact, TF32 to nearest, TF32 toward zero */
    static const enum ref_tf32 modes[3] = {REF_TF32_OFF, REF_TF32_NEAREST, REF_TF32_ZERO};
    for (int m = 0; m < 3; m++) {
        struct ref_mha t = *r;
        t.tf32 = modes[m];
        for (int i = 0; i < outputs; i++) val[m][i] = calloc((size_t)(n[i] > 0 ? n[i] : 1), sizeof(double));
        ref_mha_forward(&t, q, k, v, res, val[m][0]);
        if (dout != NULL)
            ref_mha_backward(&t, q, k, v, dout, val[m][1], val[m][2], val[m][3], val[m][4], val[m][5], val[m][6],
                             val[m][7], NULL, NULL, NULL, NULL);
    }
    for (int i = 0; i < outputs; i++) {
        const double *rounded[2] = {val[1][i], val[2][i]};
        b[i] = ttf32_bound(val[0][i], rounded, 2, n[i]);
        for (int m = 0; m < 3; m++) free(val[m][i]);
    }
}

/* The n floats at dev against want (mha_close). */
static bool mha_check(const void *dev, const double *want, int64_t n, double rel, double tf32, const char *what)
{
    double *got = tvalues_download(CUDNN_DATA_FLOAT, dev, n);
    int64_t bad = 0;
    for (int64_t i = 0; i < n && !bad; i++)
        if (!mha_close(got[i], want[i], rel, tf32)) {
            FAIL("%s: [%lld] got %g want %g (FP32 tolerance %g, TF32 bound %g)", what, (long long)i, got[i], want[i],
                 rel, tf32);
            bad++;
        }
    free(got);
    return bad == 0;
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
    double tf32[8];
    mha_tf32_bounds(&r, CUDNN_DEFAULT_MATH, q, k, v, NULL, NULL, tf32);
    for (int b = 0; b < B; b++)
        for (int m = 0; m < M; m++)
            for (int t = 0; t < TQ; t++)
                for (int e = 0; e < OS; e++)
                    wantm[julia_seq_at(B, TQ, OS, b, m, t, e)] = want[((b * M + m) * TQ + t) * OS + e];
    double *zeros = tview_fill(B * M * TQ * OS, 0);
    void *pq = tvalues_upload(CUDNN_DATA_FLOAT, qm, B * M * TQ * QS);
    void *pk = tvalues_upload(CUDNN_DATA_FLOAT, km, B * TK * QS);
    void *pv = tvalues_upload(CUDNN_DATA_FLOAT, vm, B * TK * VS);
    void *po = tvalues_upload(CUDNN_DATA_FLOAT, zeros, B * M * TQ * OS);
    void *dq = tbuf_from(qlen, sizeof qlen), *dk = tbuf_from(klen, sizeof klen);
    void *ws = wsbytes ? tbuf_alloc(wsbytes) : NULL;
    if (CHECK_OK(cudnnMultiHeadAttnForward(h, attn, -1, lo, hi, dq, dk, qd, pq, NULL, kd, pk, vd, pv, od, po, 0, NULL,
                                           wsbytes, ws, 0, NULL)))
        mha_check(po, wantm, B * M * TQ * OS, 2e-5, tf32[0], "out");
    tbuf_free(ws);
    void *bufs[] = {pq, pk, pv, po, dq, dk};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    double *arrays[] = {q, k, v, want, qm, km, vm, wantm, zeros};
    for (size_t i = 0; i < TLEN(arrays); i++) free(arrays[i]);
    for (int i = 0; i < 4; i++) cudnnDestroySeqDataDescriptor(*descs[i]);
    cudnnDestroyAttnDescriptor(attn);
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
    double tf32[8];
    mha_tf32_bounds(&r, CUDNN_DEFAULT_MATH, canon[0], canon[1], canon[2], NULL, canon[4], tf32);
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
    void *pq = tvalues_upload(CUDNN_DATA_FLOAT, mem[0], B * sizes[0]);
    void *pk = tvalues_upload(CUDNN_DATA_FLOAT, mem[1], B * sizes[1]);
    void *pv = tvalues_upload(CUDNN_DATA_FLOAT, mem[2], B * sizes[2]);
    void *pdo = tvalues_upload(CUDNN_DATA_FLOAT, mem[4], B * sizes[4]);
    void *po = tbuf_alloc(sizeof(float) * B * sizes[3]), *pdq = tbuf_alloc(sizeof(float) * B * sizes[0]);
    void *pdk = tbuf_alloc(sizeof(float) * B * sizes[1]), *pdv = tbuf_alloc(sizeof(float) * B * sizes[2]);
    void *dql = tbuf_from(qlen, sizeof qlen), *dkl = tbuf_from(klen, sizeof klen);
    void *ws = wsbytes ? tbuf_alloc(wsbytes) : NULL, *rs = tbuf_alloc(rsbytes ? rsbytes : 1);
    ok = ok && CHECK_OK(cudnnMultiHeadAttnForward(h, attn, -1, lo, hi, dql, dkl, qd, pq, NULL, kd, pk, vd, pv, od, po, 0,
                                                  NULL, wsbytes, ws, rsbytes, rs)) &&
         mha_check(po, wantm[0], B * sizes[3], 2e-5, tf32[0], "out (training)");
    ok = ok && CHECK_OK(cudnnMultiHeadAttnBackwardData(h, attn, lo, hi, dql, dkl, od, pdo, qd, pdq, pq, kd, pdk, pk, vd,
                                                       pdv, pv, 0, NULL, wsbytes, ws, rsbytes, rs));
    ok = ok && mha_check(pdq, wantm[1], B * sizes[0], 2e-4, tf32[1], "dqueries") &&
         mha_check(pdk, wantm[2], B * sizes[1], 2e-4, tf32[2], "dkeys") &&
         mha_check(pdv, wantm[3], B * sizes[2], 2e-4, tf32[3], "dvalues");
    tbuf_free(ws);
    void *bufs[] = {pq, pk, pv, pdo, po, pdq, pdk, pdv, dql, dkl, rs};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    for (int a = 0; a < 5; a++) free(canon[a]), free(mem[a]);
    for (int i = 0; i < 4; i++) free(want[i]), free(wantm[i]);
    for (int i = 0; i < 4; i++) cudnnDestroySeqDataDescriptor(*descs[i]);
    cudnnDestroyAttnDescriptor(attn);
}

/* ---- NVIDIA's multiHeadAttention sample (multiHeadAttention.cpp) -------------------------------- */

/* The sample's data layouts (-attnDataLayout0..5): the first three axes, VECT last. */
static const cudnnSeqDataAxis_t nv_layouts[6][4] = {
    {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_VECT_DIM},
    {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_VECT_DIM},
    {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_VECT_DIM},
    {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_VECT_DIM},
    {CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_VECT_DIM},
    {CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_VECT_DIM},
};

/* A sequence buffer as the sample's saveData strides it (packed, VECT innermost, then the axes
   from the third to the first) to or from the reference's canonical [b][m][t][v] order. */
static double *nv_relayout(const int dims[4], const cudnnSeqDataAxis_t axes[4], const double *from, bool to_canon)
{
    int64_t st[4], stride = dims[CUDNN_SEQDATA_VECT_DIM];
    st[CUDNN_SEQDATA_VECT_DIM] = 1;
    for (int i = 2; i >= 0; i--) st[axes[i]] = stride, stride *= dims[axes[i]];
    double *out = malloc(sizeof(double) * (size_t)stride);
    const int B = dims[CUDNN_SEQDATA_BATCH_DIM], M = dims[CUDNN_SEQDATA_BEAM_DIM], T = dims[CUDNN_SEQDATA_TIME_DIM];
    const int V = dims[CUDNN_SEQDATA_VECT_DIM];
    for (int b = 0; b < B; b++)
        for (int m = 0; m < M; m++)
            for (int t = 0; t < T; t++)
                for (int v = 0; v < V; v++) {
                    int64_t canon = (((int64_t)b * M + m) * T + t) * V + v;
                    int64_t at = b * st[CUDNN_SEQDATA_BATCH_DIM] + m * st[CUDNN_SEQDATA_BEAM_DIM] +
                                 t * st[CUDNN_SEQDATA_TIME_DIM] + v;
                    if (to_canon) out[canon] = from[at];
                    else out[at] = from[canon];
                }
    return out;
}

/* Device values of a sequence buffer against the canonical want (mha_close), at the valid time
   steps only. */
static bool nv_check_seq(const int dims[4], const cudnnSeqDataAxis_t axes[4], const void *dev, const double *want,
                         const int *lengths, double tol, double tf32, const char *what)
{
    const int B = dims[CUDNN_SEQDATA_BATCH_DIM], M = dims[CUDNN_SEQDATA_BEAM_DIM], T = dims[CUDNN_SEQDATA_TIME_DIM];
    const int V = dims[CUDNN_SEQDATA_VECT_DIM];
    double *got = tvalues_download(CUDNN_DATA_FLOAT, dev, (int64_t)B * M * T * V);
    double *canon = nv_relayout(dims, axes, got, true);
    bool ok = true;
    for (int b = 0; b < B && ok; b++)
        for (int m = 0; m < M && ok; m++)
            for (int t = 0; t < lengths[b * M + m] && ok; t++)
                for (int v = 0; v < V && ok; v++) {
                    int64_t i = (((int64_t)b * M + m) * T + t) * V + v;
                    ok = mha_close(canon[i], want[i], tol, tf32);
                    if (!ok)
                        FAIL("%s: (%d, %d, %d, %d) got %g want %g (FP32 tolerance %g, TF32 bound %g)", what, b, m, t,
                             v, canon[i], want[i], tol, tf32);
                }
    free(got), free(canon);
    return ok;
}

/* NVIDIA's multiHeadAttention sample with its defaults scaled down (2 heads, beam 3,
   ALL_TO_ONE without biases, projections of 8 for every input and the output, smScaler 1):
   setup() sets a dropout descriptor of rate 0 on states of cudnnDropoutGetStatesSize as the
   attention dropout (postDropoutDesc NULL) and the attention descriptor, and run() **sets both
   again** before cudnnGetMultiHeadAttnBuffers (reserveSpaceSizeInBytes NULL in inference); the
   sequence descriptors in the -attnDataLayout axes order, K and V of one beam;
   cudnnGetSeqDataDescriptor with **dataType, seqLengthArraySize, seqLengthArray and paddingFill
   NULL and 0 lengths requested** (its file dump); the weights reached through
   cudnnGetMultiHeadAttnWeights into an unset tensor descriptor read back with
   cudnnGetTensorNdDescriptor (3 dims asserted); the output memset to NaN. Inference (-attnTrain0,
   -attnSweep0): **one cudnnMultiHeadAttnForward per currIdx 0..seqLenQ-1**, residuals NULL, no
   reserve. Training: the reserve filled with NaN, the forward with currIdx -1, backward data,
   backward weights ADD into a zeroed dW. With -attnRandGeom1: each sequence's length and each
   step's window [lo, hi] drawn at random (lo in [0, seqLenK - 1], hi in [lo, seqLenK]). Checked at
   the valid steps against tests/ref/attention.c, on CUDA within the TF32 bound (mha_tf32_bounds). */
TEST(compat_mha_nvidia_sample_steps_and_training)
{
    enum { H = 2, BEAM = 3, BATCH = 2, VS = 16, P = 8, TQ = 5, TK = 4, NQ = BATCH * BEAM };
    static const struct { bool train; int layout; bool rand_geom; } runs[] = {
        {false, 0, false}, {false, 4, true}, {true, 5, true}, {true, 1, false}};
    static const cudnnMultiHeadAttnWeightKind_t kinds[4] = {CUDNN_MH_ATTN_Q_WEIGHTS, CUDNN_MH_ATTN_K_WEIGHTS,
                                                           CUDNN_MH_ATTN_V_WEIGHTS, CUDNN_MH_ATTN_O_WEIGHTS};
    const int64_t wcount[4] = {H * P * VS, H * P * VS, H * P * VS, H * P * P}; /* Q K V: H x 8 x 16, O: H x 8 x 8 */
    const int64_t wtotal = wcount[0] + wcount[1] + wcount[2] + wcount[3];
    cudnnHandle_t h = test_handle();
    cudnnAttnDescriptor_t attn;
    cudnnDropoutDescriptor_t drop;
    cudnnSeqDataDescriptor_t sd[4]; /* q k v o */
    CHECK_OK(cudnnCreateAttnDescriptor(&attn));
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop));
    for (int i = 0; i < 4; i++) CHECK_OK(cudnnCreateSeqDataDescriptor(&sd[i]));
    size_t states_bytes = 0;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    void *states = tbuf_alloc(states_bytes);
    for (int call = 0; call < 2; call++) /* setup(), then run() */
        if (CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.0f, states, states_bytes, 0)))
            CHECK_OK(cudnnSetAttnDescriptor(attn, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | CUDNN_ATTN_DISABLE_PROJ_BIASES, H,
                                            1.0, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, drop, NULL, VS,
                                            VS, VS, P, P, P, P, TQ, TK, BATCH, BEAM));
    for (size_t k = 0; k < TLEN(runs); k++) {
        const bool train = runs[k].train;
        const cudnnSeqDataAxis_t *axes = nv_layouts[runs[k].layout];
        int qlen[NQ], klen[BATCH], lo[TQ], hi[TQ];
        for (int i = 0; i < NQ; i++) qlen[i] = runs[k].rand_geom ? trand_int(1, TQ) : TQ;
        for (int i = 0; i < BATCH; i++) klen[i] = runs[k].rand_geom ? trand_int(1, TK) : TK;
        for (int t = 0; t < TQ; t++) {
            lo[t] = runs[k].rand_geom ? trand_int(0, TK - 1) : 0;
            hi[t] = runs[k].rand_geom ? trand_int(lo[t], TK) : TK;
        }
        size_t wbytes = 0, wsbytes = 0, rsbytes = 0;
        bool ok = CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, attn, &wbytes, &wsbytes, train ? &rsbytes : NULL)) &&
                  CHECK(wbytes == sizeof(float) * (size_t)wtotal);
        int dims[4][4];
        const int T_of[4] = {TQ, TK, TK, TQ}, M_of[4] = {BEAM, 1, 1, BEAM}, V_of[4] = {VS, VS, VS, P};
        for (int i = 0; i < 4 && ok; i++) {
            dims[i][CUDNN_SEQDATA_TIME_DIM] = T_of[i], dims[i][CUDNN_SEQDATA_BATCH_DIM] = BATCH;
            dims[i][CUDNN_SEQDATA_BEAM_DIM] = M_of[i], dims[i][CUDNN_SEQDATA_VECT_DIM] = V_of[i];
            ok = CHECK_OK(cudnnSetSeqDataDescriptor(sd[i], CUDNN_DATA_FLOAT, 4, dims[i], axes,
                                                    (size_t)BATCH * M_of[i], M_of[i] == BEAM ? qlen : klen, NULL));
            int nb = 0, got_dims[4];
            cudnnSeqDataAxis_t got_axes[4];
            ok = ok && CHECK_OK(cudnnGetSeqDataDescriptor(sd[i], NULL, &nb, 4, got_dims, got_axes, NULL, 0, NULL,
                                                          NULL)) &&
                 CHECK(nb == 4 && memcmp(got_dims, dims[i], sizeof got_dims) == 0 &&
                       memcmp(got_axes, axes, sizeof got_axes) == 0);
        }
        /* weights: drawn in the reference's form, placed where the getters say */
        double *w[4];
        float *host_w = calloc((size_t)wtotal, sizeof(float));
        int64_t woff[4];
        int wdims[4][3], wstr[4][3];
        void *pw = tbuf_alloc(wbytes ? wbytes : 1);
        cudnnTensorDescriptor_t wd;
        CHECK_OK(cudnnCreateTensorDescriptor(&wd));
        for (int i = 0; i < 4; i++) {
            w[i] = tview_random(wcount[i], -1.2, 1.2);
            for (int64_t j = 0; j < wcount[i]; j++) w[i][j] = (float)w[i][j];
            void *addr = NULL;
            cudnnDataType_t dt;
            int nb = 0;
            ok = ok && CHECK_OK(cudnnGetMultiHeadAttnWeights(h, attn, kinds[i], wbytes, pw, wd, &addr)) &&
                 CHECK_OK(cudnnGetTensorNdDescriptor(wd, 3, &dt, &nb, wdims[i], wstr[i])) && CHECK(nb == 3) &&
                 CHECK((int64_t)wdims[i][0] * wdims[i][1] * wdims[i][2] == wcount[i]);
            woff[i] = ok ? ((char *)addr - (char *)pw) / (int64_t)sizeof(float) : 0;
            for (int64_t j = 0; ok && j < (int64_t)wdims[i][0] * wdims[i][1] * wdims[i][2]; j++) {
                int64_t a = j / ((int64_t)wdims[i][1] * wdims[i][2]), b = j / wdims[i][2] % wdims[i][1];
                int64_t c = j % wdims[i][2];
                host_w[woff[i] + a * wstr[i][0] + b * wstr[i][1] + c * wstr[i][2]] = (float)w[i][j];
            }
        }
        cudnnDestroyTensorDescriptor(wd);
        tbuf_upload(pw, host_w, sizeof(float) * (size_t)wtotal);
        /* data: canonical values, the buffers in the layout */
        const int64_t nq = (int64_t)NQ * TQ * VS, nk = (int64_t)BATCH * TK * VS, no = (int64_t)NQ * TQ * P;
        double *q = tview_random(nq, -1.2, 1.2), *kk = tview_random(nk, -1.2, 1.2), *v = tview_random(nk, -1.2, 1.2);
        double *dout = tview_random(no, -1.2, 1.2);
        double *canon[4] = {q, kk, v, dout};
        const int64_t count[4] = {nq, nk, nk, no};
        void *dev[4];
        for (int i = 0; i < 4; i++) {
            for (int64_t j = 0; j < count[i]; j++) canon[i][j] = (float)canon[i][j];
            double *laid = nv_relayout(dims[i], axes, canon[i], false);
            dev[i] = tvalues_upload(CUDNN_DATA_FLOAT, laid, count[i]);
            free(laid);
        }
        struct ref_mha r = {.heads = H, .scaler = 1.0, .q_size = VS, .k_size = VS, .v_size = VS, .q_proj = P,
                            .k_proj = P, .v_proj = P, .o_proj = P, .B = BATCH, .M = BEAM, .Tq = TQ, .Tk = TK,
                            .len_q = qlen, .len_kv = klen, .lo = lo, .hi = hi, .wq = w[0], .wk = w[1], .wv = w[2],
                            .wo = w[3]};
        double *want = malloc(sizeof(double) * (size_t)no);
        ref_mha_forward(&r, q, kk, v, NULL, want);
        void *po = tbuf_alloc(sizeof(float) * (size_t)no), *ws = tbuf_alloc(wsbytes ? wsbytes : 1);
        void *rs = tbuf_alloc(rsbytes ? rsbytes : 1);
        void *dql = tbuf_from(qlen, sizeof qlen), *dkl = tbuf_from(klen, sizeof klen);
        tbuf_poison(po, sizeof(float) * (size_t)no);
        if (rsbytes) tbuf_poison(rs, rsbytes);
        /* DEFAULT_MATH: the products may run on TF32 (ttf32_may_apply); the sample's logits reach
           about 10, where the softmax amplifies TF32's rounding of the projections: bounded by
           how far that rounding moves this problem's reference (mha_tf32_bounds) */
        const double out_tol = 1e-4, grad_tol = 5e-4;
        double tf32[8];
        mha_tf32_bounds(&r, CUDNN_DEFAULT_MATH, q, kk, v, NULL, train ? dout : NULL, tf32);
        if (!train) {
            for (int cur = 0; cur < TQ && ok; cur++)
                ok = CHECK_OK(cudnnMultiHeadAttnForward(h, attn, cur, lo, hi, dql, dkl, sd[0], dev[0], NULL, sd[1],
                                                        dev[1], sd[2], dev[2], sd[3], po, wbytes, pw, wsbytes, ws, 0,
                                                        NULL));
            ok = ok && nv_check_seq(dims[3], axes, po, want, qlen, out_tol, tf32[0],
                                    "the sample's inference steps: out");
        } else {
            double *dq = malloc(sizeof(double) * (size_t)nq), *dk = malloc(sizeof(double) * (size_t)nk);
            double *dv = malloc(sizeof(double) * (size_t)nk), *dw[4];
            for (int i = 0; i < 4; i++) dw[i] = calloc((size_t)wcount[i], sizeof(double));
            ref_mha_backward(&r, q, kk, v, dout, dq, dk, dv, dw[0], dw[1], dw[2], dw[3], NULL, NULL, NULL, NULL);
            void *pdq = tbuf_alloc(sizeof(float) * (size_t)nq), *pdk = tbuf_alloc(sizeof(float) * (size_t)nk);
            void *pdv = tbuf_alloc(sizeof(float) * (size_t)nk);
            double *zeros = tview_fill(wtotal, 0);
            void *pdw = tvalues_upload(CUDNN_DATA_FLOAT, zeros, wtotal);
            ok = ok && CHECK_OK(cudnnMultiHeadAttnForward(h, attn, -1, lo, hi, dql, dkl, sd[0], dev[0], NULL, sd[1],
                                                          dev[1], sd[2], dev[2], sd[3], po, wbytes, pw, wsbytes, ws,
                                                          rsbytes, rs)) &&
                 nv_check_seq(dims[3], axes, po, want, qlen, out_tol, tf32[0], "the sample's training forward: out");
            ok = ok && CHECK_OK(cudnnMultiHeadAttnBackwardData(h, attn, lo, hi, dql, dkl, sd[3], dev[3], sd[0], pdq,
                                                               dev[0], sd[1], pdk, dev[1], sd[2], pdv, dev[2], wbytes,
                                                               pw, wsbytes, ws, rsbytes, rs)) &&
                 CHECK_OK(cudnnMultiHeadAttnBackwardWeights(h, attn, CUDNN_WGRAD_MODE_ADD, sd[0], dev[0], sd[1],
                                                            dev[1], sd[2], dev[2], sd[3], dev[3], wbytes, pw, pdw,
                                                            wsbytes, ws, rsbytes, rs));
            if (ok) {
                nv_check_seq(dims[0], axes, pdq, dq, qlen, grad_tol, tf32[1], "the sample's dq");
                nv_check_seq(dims[1], axes, pdk, dk, klen, grad_tol, tf32[2], "the sample's dk");
                nv_check_seq(dims[2], axes, pdv, dv, klen, grad_tol, tf32[3], "the sample's dv");
                double *got_w = tvalues_download(CUDNN_DATA_FLOAT, pdw, wtotal);
                for (int i = 0; i < 4; i++)
                    for (int64_t j = 0; j < (int64_t)wdims[i][0] * wdims[i][1] * wdims[i][2]; j++) {
                        int64_t a = j / ((int64_t)wdims[i][1] * wdims[i][2]), b = j / wdims[i][2] % wdims[i][1];
                        int64_t at = woff[i] + a * wstr[i][0] + b * wstr[i][1] + j % wdims[i][2] * wstr[i][2];
                        if (!mha_close(got_w[at], dw[i][j], grad_tol, tf32[4 + i])) {
                            FAIL("the sample's dW kind %d element %lld: got %g want %g (TF32 bound %g)", i,
                                 (long long)j, got_w[at], dw[i][j], tf32[4 + i]);
                            break;
                        }
                    }
                free(got_w);
            }
            void *bufs[] = {pdq, pdk, pdv, pdw};
            for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
            for (int i = 0; i < 4; i++) free(dw[i]);
            free(dq), free(dk), free(dv), free(zeros);
        }
        void *bufs[] = {pw, po, ws, rs, dql, dkl, dev[0], dev[1], dev[2], dev[3]};
        for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
        for (int i = 0; i < 4; i++) free(w[i]), free(canon[i]);
        free(host_w), free(want);
    }
    tbuf_free(states);
    for (int i = 0; i < 4; i++) cudnnDestroySeqDataDescriptor(sd[i]);
    cudnnDestroyDropoutDescriptor(drop);
    cudnnDestroyAttnDescriptor(attn);
}

/* ---- CUDA.jl's attention test matrix (lib/cudnn/test/multiheadattn.jl) ------------------------- */

/* One mhatest() call of CUDA.jl's test suite, which runs on NVIDIA's library: a Julia array of
   Q = K = 6, V = 5, B = 4, T = 3 floats, the descriptor's maxima, windows and projections as the
   keyword arguments set them. */
struct cudajl_mha {
    unsigned mode;
    int heads;
    double scaler;
    cudnnMathType_t math;
    int qp, kp, vp, op;
    int qo_max, kv_max, batch_max, beam_max;
    int layout;          /* nv_layouts[]: 4 the default axes, 5 [VECT, TIME, BATCH, BEAM] */
    int beams, v_size;   /* query beams (keys 1); the values' vector (the residuals case: Q) */
    const int *len_q, *len_kv;
    int lo, hi;          /* each step's window (hi -1: kvMaxSeqLength) */
    int curr;
    bool residuals;
};

/* cudnnMultiHeadAttnForward as CUDA.jl's cudnnMultiHeadAttnForwardAD makes it: the attention
   descriptor without dropout descriptors, the data's type as compute precision; the buffers
   queried with reserveSpaceSizeInBytes NULL; **the weights a 100-float array whatever the
   projections need** (sizeof(weights) passed), its values read back through
   cudnnGetMultiHeadAttnWeights for the reference; **windows of qoMaxSeqLength entries**, hi
   kvMaxSeqLength by default (**past the keys' length when the maximum is larger**); the output
   zeroed first (currIdx >= 0 fills one step); the workspace only when one is needed. */
static void cudajl_mha_run(const struct cudajl_mha *c)
{
    enum { Q = 6, K = 6, B = 4, T = 3, WN = 100 };
    const int V = c->v_size, M = c->beams, vproj = c->vp ? c->vp : V, O = c->op ? c->op : c->heads * vproj;
    cudnnHandle_t h = test_handle();
    cudnnAttnDescriptor_t attn;
    CHECK_OK(cudnnCreateAttnDescriptor(&attn));
    size_t wbytes = 0, wsbytes = 0;
    bool ok = CHECK_OK(cudnnSetAttnDescriptor(attn, c->mode, c->heads, c->scaler, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                              c->math, NULL, NULL, Q, K, V, c->qp, c->kp, c->vp, c->op, c->qo_max,
                                              c->kv_max, c->batch_max, c->beam_max)) &&
              CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, attn, &wbytes, &wsbytes, NULL)) &&
              CHECK(wbytes <= sizeof(float) * WN);
    /* the weights: 100 random floats; the reference's simple form read through the getters */
    double *wv = tview_random(WN, -1, 1), *w[8] = {NULL};
    void *pw = tvalues_upload(CUDNN_DATA_FLOAT, wv, WN);
    cudnnTensorDescriptor_t wd;
    CHECK_OK(cudnnCreateTensorDescriptor(&wd));
    for (int kind = 0; kind < 8 && ok; kind++) {
        void *addr = NULL;
        ok = CHECK_OK(cudnnGetMultiHeadAttnWeights(h, attn, (cudnnMultiHeadAttnWeightKind_t)kind, sizeof(float) * WN,
                                                   pw, wd, &addr));
        if (!ok || addr == NULL) continue;
        cudnnDataType_t dt;
        int nb = 0, d[3], st[3];
        ok = CHECK_OK(cudnnGetTensorNdDescriptor(wd, 3, &dt, &nb, d, st)) && CHECK(nb == 3);
        const int64_t off = ((char *)addr - (char *)pw) / (int64_t)sizeof(float), n = (int64_t)d[0] * d[1] * d[2];
        w[kind] = malloc(sizeof(double) * (size_t)n);
        for (int64_t j = 0; ok && j < n; j++)
            w[kind][j] = wv[off + j / ((int64_t)d[1] * d[2]) * st[0] + j / d[2] % d[1] * st[1] + j % d[2] * st[2]];
    }
    cudnnDestroyTensorDescriptor(wd);
    const cudnnSeqDataAxis_t *axes = nv_layouts[c->layout];
    const int T_of[4] = {T, T, T, T}, M_of[4] = {M, 1, 1, M}, V_of[4] = {Q, K, V, O};
    int dims[4][4], full_q[B * 2], full_kv[B];
    for (int i = 0; i < B * M; i++) full_q[i] = T;
    for (int i = 0; i < B; i++) full_kv[i] = T;
    const int *len_q = c->len_q ? c->len_q : full_q, *len_kv = c->len_kv ? c->len_kv : full_kv;
    cudnnSeqDataDescriptor_t sd[4];
    for (int i = 0; i < 4; i++) {
        dims[i][CUDNN_SEQDATA_TIME_DIM] = T_of[i], dims[i][CUDNN_SEQDATA_BATCH_DIM] = B;
        dims[i][CUDNN_SEQDATA_BEAM_DIM] = M_of[i], dims[i][CUDNN_SEQDATA_VECT_DIM] = V_of[i];
        CHECK_OK(cudnnCreateSeqDataDescriptor(&sd[i]));
        ok = ok && CHECK_OK(cudnnSetSeqDataDescriptor(sd[i], CUDNN_DATA_FLOAT, 4, dims[i], axes, (size_t)B * M_of[i],
                                                      M_of[i] == M ? len_q : len_kv, NULL));
    }
    const int64_t count[4] = {(int64_t)B * M * T * Q, (int64_t)B * T * K, (int64_t)B * T * V, (int64_t)B * M * T * O};
    double *canon[3], *res = c->residuals ? tview_random(count[0], -1, 1) : NULL;
    void *dev[4], *pres = NULL;
    for (int i = 0; i < 3; i++) {
        canon[i] = tview_random(count[i], -1, 1);
        for (int64_t j = 0; j < count[i]; j++) canon[i][j] = (float)canon[i][j];
        double *laid = nv_relayout(dims[i], axes, canon[i], false);
        dev[i] = tvalues_upload(CUDNN_DATA_FLOAT, laid, count[i]);
        free(laid);
    }
    if (res) {
        for (int64_t j = 0; j < count[0]; j++) res[j] = (float)res[j];
        double *laid = nv_relayout(dims[0], axes, res, false);
        pres = tvalues_upload(CUDNN_DATA_FLOAT, laid, count[0]);
        free(laid);
    }
    double *zeros = tview_fill(count[3], 0);
    dev[3] = tvalues_upload(CUDNN_DATA_FLOAT, zeros, count[3]);
    int lo[16], hi[16];
    for (int t = 0; t < c->qo_max; t++) lo[t] = c->lo, hi[t] = c->hi < 0 ? c->kv_max : c->hi;
    struct ref_mha r = {.heads = c->heads, .scaler = c->scaler, .q_size = Q, .k_size = K, .v_size = V, .q_proj = c->qp,
                        .k_proj = c->kp, .v_proj = c->vp, .o_proj = c->op,
                        .biases = (c->mode & CUDNN_ATTN_ENABLE_PROJ_BIASES) != 0, .B = B, .M = M, .Tq = T, .Tk = T,
                        .len_q = len_q, .len_kv = len_kv, .lo = lo, .hi = hi, .wq = w[0], .wk = w[1], .wv = w[2],
                        .wo = w[3], .bq = w[4], .bk = w[5], .bv = w[6], .bo = w[7]};
    double *want = malloc(sizeof(double) * (size_t)count[3]);
    ref_mha_forward(&r, canon[0], canon[1], canon[2], res, want);
    void *dql = tbuf_from(len_q, sizeof(int) * (size_t)(B * M)), *dkl = tbuf_from(len_kv, sizeof(int) * B);
    void *ws = wsbytes ? tbuf_alloc(wsbytes) : NULL;
    double tf32[8];
    mha_tf32_bounds(&r, c->math, canon[0], canon[1], canon[2], res, NULL, tf32);
    int step[2 * B];
    for (int i = 0; i < B * M; i++) step[i] = len_q[i] > c->curr ? c->curr + 1 : 0; /* the steps to check */
    if (ok && CHECK_OK(cudnnMultiHeadAttnForward(h, attn, c->curr, lo, hi, dql, dkl, sd[0], dev[0], pres, sd[1],
                                                 dev[1], sd[2], dev[2], sd[3], dev[3], sizeof(float) * WN, pw, wsbytes,
                                                 ws, 0, NULL))) {
        if (c->curr < 0) nv_check_seq(dims[3], axes, dev[3], want, len_q, 1e-4, tf32[0], "CUDA.jl's mhatest out");
        else nv_check_seq(dims[3], axes, dev[3], want, step, 1e-4, tf32[0], "CUDA.jl's mhatest out at currIdx");
    }
    void *bufs[] = {pw, dev[0], dev[1], dev[2], dev[3], pres, dql, dkl, ws};
    for (size_t i = 0; i < TLEN(bufs); i++)
        if (bufs[i]) tbuf_free(bufs[i]);
    for (int i = 0; i < 8; i++) free(w[i]);
    for (int i = 0; i < 3; i++) free(canon[i]);
    for (int i = 0; i < 4; i++) cudnnDestroySeqDataDescriptor(sd[i]);
    free(wv), free(res), free(zeros), free(want);
    cudnnDestroyAttnDescriptor(attn);
}

/* CUDA.jl's mhatest matrix: projection biases with only the value projection, ragged query and
   key lengths, two heads, smScaler 2, every math type on float data, each projection alone (q and
   k together), **the descriptor's maxima larger than the data** (qoMaxSeqLength, kvMaxSeqLength,
   maxBatchSize, maxBeamSize 7; the windows as long as qoMaxSeqLength, hi 7 past the keys),
   windows starting at 1 and ending at 1, currIdx 0, residuals (values of the queries' size), the
   axes [VECT, TIME, BATCH, BEAM] and two query beams. */
TEST(compat_mha_cudajl_test_matrix)
{
    static const int ragged[8] = {1, 2, 3, 1};
    const struct cudajl_mha base = {.mode = CUDNN_ATTN_QUERYMAP_ALL_TO_ONE, .heads = 1, .scaler = 1,
                                    .math = CUDNN_DEFAULT_MATH, .qo_max = 3, .kv_max = 3, .batch_max = 4,
                                    .beam_max = 1, .layout = 4, .beams = 1, .v_size = 5, .lo = 0, .hi = -1,
                                    .curr = -1};
    struct cudajl_mha cases[22];
    int n = 0;
    cases[n++] = base;
    cases[n] = base, cases[n].mode |= CUDNN_ATTN_ENABLE_PROJ_BIASES, cases[n++].vp = 7;
    cases[n] = base, cases[n++].len_q = ragged;
    cases[n] = base, cases[n++].len_kv = ragged;
    cases[n] = base, cases[n++].heads = 2;
    cases[n] = base, cases[n++].scaler = 2;
    static const cudnnMathType_t maths[] = {CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
                                            CUDNN_FMA_MATH};
    for (size_t i = 0; i < TLEN(maths); i++) cases[n] = base, cases[n++].math = maths[i];
    cases[n] = base, cases[n].kp = 7, cases[n++].qp = 7;
    cases[n] = base, cases[n++].vp = 7;
    cases[n] = base, cases[n++].op = 7;
    cases[n] = base, cases[n++].qo_max = 7;
    cases[n] = base, cases[n++].kv_max = 7;
    cases[n] = base, cases[n++].batch_max = 7;
    cases[n] = base, cases[n++].beam_max = 7;
    cases[n] = base, cases[n++].lo = 1;
    cases[n] = base, cases[n++].hi = 1;
    cases[n] = base, cases[n++].curr = 0;
    cases[n] = base, cases[n].v_size = 6, cases[n++].residuals = true;
    cases[n] = base, cases[n++].layout = 5;
    cases[n] = base, cases[n].beams = 2, cases[n++].beam_max = 2;
    for (int i = 0; i < n; i++) cudajl_mha_run(&cases[i]);
}
