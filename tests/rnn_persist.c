/* rnn_persist.c: the persistent RNN algorithms and the inference workspace.

   cuDNN 8.2 ("Features of RNN Functions"; the compute calls' NOT_SUPPORTED and INVALID_VALUE
   lists): PERSIST_STATIC, PERSIST_DYNAMIC and PERSIST_STATIC_SMALL_H take half, bfloat16 and
   float data (PERSIST_DYNAMIC also double), every cell, both directions, several layers and
   cell clipping, but no LSTM projection (refused when set: tests/rnn_desc.c) and no variable
   sequence lengths within the batch; PERSIST_DYNAMIC runs the plan cudnnBuildRNNDynamic or
   cudnnSetPersistentRNNPlan made for the batch. Every accepted configuration must give the
   reference's results; training and the backward passes STANDARD's bit for bit (one layer loop
   computes all of them), inference STANDARD's within the data type's tolerance (on CUDA it runs
   the persistent kernel, which sums the recurrent products in its own order; both of its
   forms, the pipelined one against the first); every rejected one its status with nothing
   written.

   Inference keeps two steps of one pseudo-layer's states and two layers' outputs: a call with
   exactly the reported workspace (poison after it) gives the reference's results, and the size
   does not grow with the layers past three. */
#include "rnn_harness.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

static const cudnnRNNAlgo_t persistent[] = {CUDNN_RNN_ALGO_PERSIST_STATIC, CUDNN_RNN_ALGO_PERSIST_DYNAMIC,
                                            CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H};
static const int len_equal[] = {4, 4, 4};
static const int len_varied_unpacked[] = {3, 4, 1};
static const int len_varied_packed[] = {4, 3, 1};

/* Every cell under every persistent algorithm through the three APIs, in every type the
   algorithm takes, against the reference (forward both modes, backward data and weights). */
TEST(rnn_persistent_matches_reference)
{
    static const cudnnRNNMode_t modes[] = {CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_LSTM, CUDNN_GRU};
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_DOUBLE};
    int k = 0;
    for (size_t a = 0; a < TLEN(persistent); a++)
        for (size_t m = 0; m < TLEN(modes); m++, k++) {
            int api = k % 3;
            cudnnDataType_t t = types[k % (persistent[a] == CUDNN_RNN_ALGO_PERSIST_DYNAMIC ? 4 : 3)];
            /* RELU in float: its derivative jumps at 0, and a 16-bit type's rounding of a
               pre-activation near 0 can take the other side from the reference's, changing a
               weight gradient by a whole term (the GRU and LSTM cases take the 16-bit types) */
            if (modes[m] == CUDNN_RNN_RELU) t = CUDNN_DATA_FLOAT;
            cudnnRNNDataLayout_t layout = api == API_LEGACY ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED
                                          : k % 2           ? CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED
                                                            : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
            char name[96];
            snprintf(name, sizeof name, "algo %d mode %d api %d type %d", (int)persistent[a], (int)modes[m], api,
                     (int)t);
            struct rnn_case c = {name, modes[m], 1 + k % 2, k % 4 == 3 ? CUDNN_SKIP_INPUT : CUDNN_LINEAR_INPUT,
                                 CUDNN_RNN_DOUBLE_BIAS, layout, 2, 4, 4, 4, 4, 3, len_equal, t,
                                 modes[m] == CUDNN_LSTM && k % 2, k % 3 != 1, api, persistent[a]};
            if (!rnn_check_case(&c)) return;
        }
}

static bool same_values(const char *what, const double *a, const double *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i])))) {
            FAIL("%s[%lld]: %.17g under the persistent algorithm, %.17g under STANDARD", what, (long long)i, a[i], b[i]);
            return false;
        }
    return true;
}

/* The outputs of a training forward and the backward passes of the run's network, its
   descriptor's algorithm as it stands. */
struct all_out {
    struct fwd_out f;
    double *dx, *dw;
};

static bool run_all(struct rnn_run *u, const double *dy, struct all_out *o)
{
    const struct rnn_case *c = u->c;
    size_t es = tdtype_size(c->dtype);
    int64_t ny = u->pos * c->dirs * c->proj;
    void *py = NULL, *pdy = tvalues_upload(c->dtype, (double *)dy, ny);
    void *pdx = tbuf_alloc((size_t)(u->pos * c->input) * es);
    double *zero = tview_fill(u->wcount, 0);
    void *pdw = tvalues_upload(c->dtype, zero, u->wcount);
    bool ok = rnn_library_forward(u, CUDNN_FWD_MODE_TRAINING, &o->f, &py) &&
              rnn_call_backward(u, py, pdy, NULL, NULL, pdx, NULL, NULL, pdw);
    o->dx = tvalues_download(c->dtype, pdx, u->pos * c->input);
    o->dw = tvalues_download(c->dtype, pdw, u->wcount);
    free(zero);
    tbuf_free(pdy), tbuf_free(pdx), tbuf_free(pdw);
    if (py) tbuf_free(py);
    return ok;
}

static void all_free(struct all_out *o)
{
    rnn_fwd_free(&o->f);
    free(o->dx), free(o->dw);
}

/* Persistent and STANDARD compute the same bits: the same network run under each algorithm
   (switched by cudnnSetRNNAlgorithmDescriptor), forward and backward. */
TEST(rnn_persistent_equals_standard)
{
    for (size_t a = 0; a < TLEN(persistent); a++) {
        struct rnn_case c = {"persistent = standard", a == 1 ? CUDNN_LSTM : CUDNN_GRU, 2, CUDNN_LINEAR_INPUT,
                             CUDNN_RNN_DOUBLE_BIAS, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 2, 3, 5, 5, 4, 3,
                             len_equal, a == 2 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT, a == 1, true, API_V8,
                             persistent[a]};
        struct rnn_run u;
        struct all_out p = {0}, s = {0};
        cudnnAlgorithmDescriptor_t ad = NULL;
        bool ok = rnn_run_init(&u, &c) && CHECK_OK(cudnnCreateAlgorithmDescriptor(&ad));
        double *dy = ok ? rnn_random_data(&c, c.dirs * c.proj) : NULL;
        ok = ok && run_all(&u, dy, &p);
        cudnnAlgorithm_t std_algo = {{.RNNAlgo = CUDNN_RNN_ALGO_STANDARD}};
        ok = ok && CHECK_OK(cudnnSetAlgorithmDescriptor(ad, std_algo)) &&
             CHECK_OK(cudnnSetRNNAlgorithmDescriptor(test_handle(), u.d, ad)) && run_all(&u, dy, &s);
        int64_t hn = (int64_t)c.layers * c.dirs * c.N;
        ok = ok && same_values("y", p.f.y, s.f.y, u.pos * c.dirs * c.proj) && same_values("hy", p.f.hy, s.f.hy, hn * c.proj);
        ok = ok && (c.mode != CUDNN_LSTM || same_values("cy", p.f.cy, s.f.cy, hn * c.hidden));
        ok = ok && same_values("dx", p.dx, s.dx, u.pos * c.input) && same_values("dw", p.dw, s.dw, u.wcount);
        free(dy);
        all_free(&p), all_free(&s);
        if (ad) cudnnDestroyAlgorithmDescriptor(ad);
        rnn_run_free(&u);
        if (!ok) return;
    }
}

/* Inference of the run under its algorithm against the reference, then under STANDARD (the
   run's descriptor switched to it) against the first within the data type's tolerance. */
static bool inference_matches(struct rnn_run *u)
{
    struct fwd_out p = {0}, s = {0}, want = {0};
    cudnnAlgorithmDescriptor_t ad = NULL;
    cudnnAlgorithm_t std_algo = {{.RNNAlgo = CUDNN_RNN_ALGO_STANDARD}};
    rnn_reference_forward(u, &want);
    bool ok = rnn_library_forward(u, CUDNN_FWD_MODE_INFERENCE, &p, NULL) &&
              rnn_check_forward(u, &p, &want, "persistent inference") &&
              CHECK_OK(cudnnCreateAlgorithmDescriptor(&ad)) && CHECK_OK(cudnnSetAlgorithmDescriptor(ad, std_algo)) &&
              CHECK_OK(cudnnSetRNNAlgorithmDescriptor(test_handle(), u->d, ad)) &&
              rnn_library_forward(u, CUDNN_FWD_MODE_INFERENCE, &s, NULL) &&
              rnn_check_forward(u, &p, &s, "persistent vs STANDARD inference");
    if (ad) cudnnDestroyAlgorithmDescriptor(ad);
    rnn_fwd_free(&p), rnn_fwd_free(&s), rnn_fwd_free(&want);
    return ok;
}

/* The wide cases of inference: an LSTM of hidden 512 (float, and half: the cluster form's 16
   blocks) and a GRU of hidden 256 at batch 1, the latency case persistence is for (several
   hidden units per block, long rows of R), an LSTM of hidden 64 over 64 steps in half (h passed
   between the blocks 63 times; hidden 64 because with these weights, uniform in +-0.6, hidden
   512 is chaotic over 64 steps: fp16 rounding parts any two computations by step 10), and a
   batch of 9 (bfloat16: the cluster form's two tiles of sequences). */
static const int len_one[] = {7}, len_nine[] = {3, 3, 3, 3, 3, 3, 3, 3, 3}, len_long[] = {64};
static const struct rnn_case wide_cases[] = {
    {"inference LSTM hidden 512 batch 1", CUDNN_LSTM, 1, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 8, 512, 512, 7, 1, len_one, CUDNN_DATA_FLOAT, true, true, API_V8,
     CUDNN_RNN_ALGO_PERSIST_STATIC},
    {"inference LSTM hidden 512 batch 1 half", CUDNN_LSTM, 1, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 8, 512, 512, 7, 1, len_one, CUDNN_DATA_HALF, true, true, API_V8,
     CUDNN_RNN_ALGO_PERSIST_STATIC},
    {"inference LSTM hidden 64 batch 1 64 steps half", CUDNN_LSTM, 1, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 8, 64, 64, 64, 1, len_long, CUDNN_DATA_HALF, false, true, API_V8,
     CUDNN_RNN_ALGO_PERSIST_STATIC},
    {"inference GRU hidden 256 batch 1", CUDNN_GRU, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 1, 8, 256, 256, 7, 1, len_one, CUDNN_DATA_FLOAT, false, true,
     API_LEGACY, CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H},
    {"inference LSTM batch 9", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
     CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, 2, 16, 96, 96, 3, 9, len_nine, CUDNN_DATA_BFLOAT16, false, true,
     API_V8, CUDNN_RNN_ALGO_PERSIST_DYNAMIC},
};

/* Inference under every persistent algorithm (on CUDA the persistent kernels, adv/rnn_exec.c's
   cuda:rnn_persistent_cluster for 16-bit data, else cuda:rnn_persistent_pipelined) against the
   reference and STANDARD: every cell, clipping, every bias mode, skip input, one and two
   directions over two layers, the three APIs and layouts, the three data types the kernels
   take; then the wide cases. */
TEST(rnn_persistent_inference)
{
    static const cudnnRNNMode_t modes[] = {CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_LSTM, CUDNN_GRU};
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    int k = 0;
    for (size_t a = 0; a < TLEN(persistent); a++)
        for (size_t m = 0; m < TLEN(modes); m++, k++) {
            int api = k % 3;
            cudnnDataType_t t = modes[m] == CUDNN_RNN_RELU ? CUDNN_DATA_FLOAT : types[k % 3];
            cudnnRNNDataLayout_t layout = api == API_LEGACY ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED
                                          : k % 2           ? CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED
                                                            : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED;
            bool skip = k % 4 == 1;
            char name[96];
            snprintf(name, sizeof name, "inference algo %d mode %d api %d type %d", (int)persistent[a], (int)modes[m],
                     api, (int)t);
            struct rnn_case c = {name, modes[m], 1 + k % 2, skip ? CUDNN_SKIP_INPUT : CUDNN_LINEAR_INPUT,
                                 (cudnnRNNBiasMode_t)(k % 4), layout, 2, skip ? 6 : 5, 6, 6, 4, 3, len_equal, t,
                                 modes[m] == CUDNN_LSTM && k % 2, k % 3 != 1, api, persistent[a]};
            struct rnn_run u;
            bool ok = rnn_run_init(&u, &c) && inference_matches(&u);
            rnn_run_free(&u);
            if (!ok) return;
        }
    for (size_t i = 0; i < TLEN(wide_cases); i++) {
        struct rnn_run u;
        bool ok = rnn_run_init(&u, &wide_cases[i]) && inference_matches(&u);
        rnn_run_free(&u);
        if (!ok) return;
    }
}

#ifdef OCD_TEST_CUDA
/* The persistent kernels' three forms, each forced by OPENCUDNN_DISABLE, on the wide cases: the
   first form of src/cuda/rnn_persist.cu (cuda:rnn_persistent, which serves where the others
   decline) against the reference, then its pipelined form (cuda:rnn_persistent_pipelined) and
   the cluster form of src/cuda/rnn_persist_cluster.cu (cuda:rnn_persistent_cluster, which
   serves first: half and bfloat16 data, small batches; where it declines the pipelined one
   serves again) against the first within the data type's tolerance. CUDA pass only. */
TEST(rnn_persistent_forms_agree)
{
    if (test_backend[0] != 'c') return;
    static const struct {
        const char *name, *disable; /* disable: NULL, the variable as it was */
    } forms[] = {{"first form", "cuda:rnn_persistent_cluster,cuda:rnn_persistent_pipelined"},
                 {"pipelined form vs first", "cuda:rnn_persistent_cluster"},
                 {"cluster form vs first", NULL}};
    const char *set = getenv("OPENCUDNN_DISABLE");
    char *prior = set ? strdup(set) : NULL;
    for (size_t i = 0; i < TLEN(wide_cases); i++) {
        struct rnn_run u;
        struct fwd_out got[TLEN(forms)] = {{0}}, want = {0};
        bool ok = rnn_run_init(&u, &wide_cases[i]);
        if (ok) rnn_reference_forward(&u, &want);
        for (size_t f = 0; f < TLEN(forms) && ok; f++) {
            const char *disable = forms[f].disable ? forms[f].disable : prior;
            if (disable) ocd_setenv("OPENCUDNN_DISABLE", disable);
            else ocd_unsetenv("OPENCUDNN_DISABLE");
            ok = rnn_library_forward(&u, CUDNN_FWD_MODE_INFERENCE, &got[f], NULL) &&
                 rnn_check_forward(&u, &got[f], f ? &got[0] : &want, forms[f].name);
        }
        if (prior) ocd_setenv("OPENCUDNN_DISABLE", prior);
        else ocd_unsetenv("OPENCUDNN_DISABLE");
        for (size_t f = 0; f < TLEN(forms); f++) rnn_fwd_free(&got[f]);
        rnn_fwd_free(&want);
        rnn_run_free(&u);
        if (!ok) break;
    }
    free(prior);
}
#endif

#ifdef OCD_TEST_CUDA
/* Frameworks capture inference into CUDA graphs: an inference under PERSIST_STATIC (on CUDA the
   persistent kernel, a cooperative launch on the handle's stream) made once directly, which
   warms the libraries up, then captured on a stream of its own and replayed into poisoned
   outputs, against the reference. CUDA pass only. */
TEST(rnn_persistent_inference_captured)
{
    if (test_backend[0] != 'c') return;
    const struct rnn_case c = {"captured", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                               CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 2, 8, 64, 64, 4, 3, len_equal, CUDNN_DATA_HALF,
                               true, true, API_V8, CUDNN_RNN_ALGO_PERSIST_STATIC};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    struct fwd_out o = {0}, want = {0};
    cudaStream_t prior = NULL, st = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    bool ok = rnn_run_init(&u, &c) && rnn_library_forward(&u, CUDNN_FWD_MODE_INFERENCE, &o, NULL);
    rnn_fwd_free(&o);
    int64_t hn = (int64_t)c.layers * c.dirs * c.N, ny = u.pos * c.dirs * c.proj;
    size_t es = tdtype_size(c.dtype);
    void *py = tbuf_alloc((size_t)ny * es), *phy = tbuf_alloc((size_t)(hn * c.proj) * es);
    void *pcy = tbuf_alloc((size_t)(hn * c.hidden) * es);
    ok = ok && CHECK_OK(cudnnGetStream(h, &prior)) &&
         CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess) && CHECK_OK(cudnnSetStream(h, st)) &&
         CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    if (ok) {
        bool call = rnn_call_forward(&u, CUDNN_FWD_MODE_INFERENCE, py, phy, pcy);
        ok = CHECK(cudaStreamEndCapture(st, &g) == cudaSuccess) && call &&
             CHECK(cudaGraphInstantiateWithFlags(&exec, g, 0) == cudaSuccess) &&
             CHECK(cudaGraphLaunch(exec, st) == cudaSuccess) && CHECK(cudaStreamSynchronize(st) == cudaSuccess);
    }
    cudnnSetStream(h, prior);
    if (ok) {
        o = (struct fwd_out){tvalues_download(c.dtype, py, ny), tvalues_download(c.dtype, phy, hn * c.proj),
                             tvalues_download(c.dtype, pcy, hn * c.hidden)};
        rnn_reference_forward(&u, &want);
        rnn_check_forward(&u, &o, &want, "captured inference");
    }
    rnn_fwd_free(&o), rnn_fwd_free(&want);
    if (exec) cudaGraphExecDestroy(exec);
    if (g) cudaGraphDestroy(g);
    if (st) cudaStreamDestroy(st);
    tbuf_free(py), tbuf_free(phy), tbuf_free(pcy);
    rnn_run_free(&u);
}
#endif

/* A forward call of the run that must be refused with `want`, y and hy left as they were. */
static void expect_forward_refused(struct rnn_run *u, cudnnStatus_t want, const char *what)
{
    const struct rnn_case *c = u->c;
    size_t es = tdtype_size(c->dtype);
    size_t ybytes = (size_t)(u->pos * c->dirs * c->proj) * es, hbytes = (size_t)c->layers * c->dirs * c->N * c->proj * es;
    void *py = tbuf_alloc(ybytes), *phy = tbuf_alloc(hbytes);
    void *ys = tbuf_snapshot(py, ybytes), *hs = tbuf_snapshot(phy, hbytes);
    cudnnHandle_t h = test_handle();
    cudnnStatus_t got;
    if (c->api == API_LEGACY)
        got = cudnnRNNForwardInference(h, u->d, c->T, u->xs, u->px, u->hd, u->phx, u->cd, u->pcx, u->wd, u->pw, u->ys,
                                       py, u->hd, phy, u->cd, NULL, u->pws, u->ws_bytes);
    else
        got = cudnnRNNForward(h, u->d, CUDNN_FWD_MODE_TRAINING, u->plen, u->xd, u->px, u->yd, py, u->hd, u->phx, phy,
                              u->cd, u->pcx, NULL, u->wbytes, u->pw, u->ws_bytes, u->pws, u->rs_bytes, u->prs);
    if (!CHECK(got == want) || !tbuf_unchanged(py, ys, ybytes, what) || !tbuf_unchanged(phy, hs, hbytes, what))
        FAIL("%s: status %d, expected %d", what, (int)got, (int)want);
    free(ys), free(hs);
    tbuf_free(py), tbuf_free(phy);
}

/* What 8.2 refuses: variable sequence lengths under every persistent algorithm (v8 and legacy
   forward, backward data), double data under PERSIST_STATIC and PERSIST_STATIC_SMALL_H, and
   PERSIST_DYNAMIC without a plan for the call's batch (INVALID_VALUE). */
TEST(rnn_persistent_refusals)
{
    for (size_t a = 0; a < TLEN(persistent); a++)
        for (int api = API_V8; api <= API_LEGACY; api++) {
            bool packed = api == API_LEGACY;
            struct rnn_case c = {"varied lengths", CUDNN_LSTM, 1, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                                 packed ? CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED : CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                 1, 3, 4, 4, 4, 3, packed ? len_varied_packed : len_varied_unpacked, CUDNN_DATA_FLOAT,
                                 false, true, api, persistent[a]};
            struct rnn_run u;
            if (rnn_run_init(&u, &c)) expect_forward_refused(&u, CUDNN_STATUS_NOT_SUPPORTED, "varied lengths");
            if (api == API_V8 && a == 0) {
                /* backward data: dx untouched */
                size_t es = tdtype_size(c.dtype), xbytes = (size_t)(u.pos * c.input) * es;
                int64_t ny = u.pos * c.dirs * c.proj;
                void *py = tbuf_alloc((size_t)ny * es), *pdy = tbuf_alloc((size_t)ny * es), *pdx = tbuf_alloc(xbytes);
                void *snap = tbuf_snapshot(pdx, xbytes);
                CHECK_STATUS(cudnnRNNBackwardData_v8(test_handle(), u.d, u.plen, u.yd, py, pdy, u.xd, pdx, u.hd, u.phx,
                                                     NULL, NULL, u.cd, u.pcx, NULL, NULL, u.wbytes, u.pw, u.ws_bytes,
                                                     u.pws, u.rs_bytes, u.prs),
                             CUDNN_STATUS_NOT_SUPPORTED);
                tbuf_unchanged(pdx, snap, xbytes, "backward data, varied lengths");
                free(snap);
                tbuf_free(py), tbuf_free(pdy), tbuf_free(pdx);
            }
            rnn_run_free(&u);
        }
    for (size_t a = 0; a < TLEN(persistent); a++)
        for (int api = API_V8; api <= API_LEGACY; api++) {
            struct rnn_case c = {"double", CUDNN_GRU, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                                 CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 2, 3, 4, 4, 4, 3, len_equal,
                                 CUDNN_DATA_DOUBLE, false, true, api, persistent[a]};
            struct rnn_run u;
            if (rnn_run_init(&u, &c)) {
                if (persistent[a] == CUDNN_RNN_ALGO_PERSIST_DYNAMIC) {
                    struct fwd_out o = {0}, want = {0};
                    rnn_reference_forward(&u, &want);
                    if (rnn_library_forward(&u, CUDNN_FWD_MODE_INFERENCE, &o, NULL))
                        rnn_check_forward(&u, &o, &want, "PERSIST_DYNAMIC double");
                    rnn_fwd_free(&o), rnn_fwd_free(&want);
                } else {
                    expect_forward_refused(&u, CUDNN_STATUS_NOT_SUPPORTED, "double data");
                }
            }
            rnn_run_free(&u);
        }
    /* PERSIST_DYNAMIC: a plan for another batch, then none (the descriptor set again) */
    struct rnn_case c = {"dynamic plan", CUDNN_RNN_TANH, 1, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                         CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 3, 4, 4, 4, 3, len_equal, CUDNN_DATA_FLOAT,
                         false, true, API_V8, CUDNN_RNN_ALGO_PERSIST_DYNAMIC};
    struct rnn_run u;
    if (rnn_run_init(&u, &c) && CHECK_OK(cudnnBuildRNNDynamic(test_handle(), u.d, c.N + 1))) {
        expect_forward_refused(&u, CUDNN_STATUS_INVALID_VALUE, "plan for another batch");
        if (CHECK_OK(cudnnSetRNNDescriptor_v8(u.d, CUDNN_RNN_ALGO_PERSIST_DYNAMIC, c.mode, c.bias,
                                              CUDNN_UNIDIRECTIONAL, c.input_mode, c.dtype, rnn_math_prec(c.dtype),
                                              CUDNN_DEFAULT_MATH, c.input, c.hidden, c.proj, c.layers, NULL,
                                              CUDNN_RNN_PADDED_IO_ENABLED)))
            expect_forward_refused(&u, CUDNN_STATUS_INVALID_VALUE, "no plan");
        /* built again for the batch: accepted */
        struct fwd_out o = {0};
        CHECK(cudnnBuildRNNDynamic(test_handle(), u.d, c.N) == CUDNN_STATUS_SUCCESS &&
              rnn_library_forward(&u, CUDNN_FWD_MODE_INFERENCE, &o, NULL));
        rnn_fwd_free(&o);
    }
    rnn_run_free(&u);
}

/* The legacy plan calls as NVIDIA's RNN sample makes them: Create and Set for PERSIST_DYNAMIC
   (Create NOT_SUPPORTED, Set BAD_PARAM for another algorithm, nothing changed), then the calls
   run after the plan is destroyed (the plan only records the batch). */
TEST(rnn_persistent_legacy_plans)
{
    struct rnn_case c = {"legacy plan", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                         CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 2, 3, 4, 4, 4, 3, len_equal, CUDNN_DATA_FLOAT, false,
                         true, API_LEGACY, CUDNN_RNN_ALGO_STANDARD};
    struct rnn_run u;
    cudnnHandle_t h = test_handle();
    if (rnn_run_init(&u, &c)) {
        cudnnPersistentRNNPlan_t plan = (cudnnPersistentRNNPlan_t)&u, made = NULL;
        CHECK_STATUS(cudnnCreatePersistentRNNPlan(u.d, c.N, c.dtype, &plan), CUDNN_STATUS_NOT_SUPPORTED);
        CHECK(plan == (cudnnPersistentRNNPlan_t)&u);
        bool ok = CHECK_OK(cudnnSetRNNDescriptor_v6(h, u.d, c.hidden, c.layers, NULL, c.input_mode,
                                                    CUDNN_BIDIRECTIONAL, c.mode, CUDNN_RNN_ALGO_PERSIST_DYNAMIC,
                                                    c.dtype)) &&
                  CHECK_OK(cudnnCreatePersistentRNNPlan(u.d, c.N, c.dtype, &made));
        /* a STANDARD descriptor refuses the plan */
        cudnnRNNDescriptor_t other;
        if (ok && CHECK_OK(cudnnCreateRNNDescriptor(&other))) {
            CHECK_OK(cudnnSetRNNDescriptor_v6(h, other, c.hidden, c.layers, NULL, c.input_mode, CUDNN_BIDIRECTIONAL,
                                              c.mode, CUDNN_RNN_ALGO_STANDARD, c.dtype));
            CHECK_STATUS(cudnnSetPersistentRNNPlan(other, made), CUDNN_STATUS_BAD_PARAM);
            cudnnDestroyRNNDescriptor(other);
        }
        expect_forward_refused(&u, CUDNN_STATUS_INVALID_VALUE, "plan made, not set");
        ok = ok && CHECK_OK(cudnnSetPersistentRNNPlan(u.d, made)) && CHECK_OK(cudnnDestroyPersistentRNNPlan(made));
        struct fwd_out o = {0}, want = {0};
        if (ok) {
            rnn_reference_forward(&u, &want);
            if (rnn_library_forward(&u, CUDNN_FWD_MODE_TRAINING, &o, NULL))
                rnn_check_forward(&u, &o, &want, "legacy PERSIST_DYNAMIC");
        }
        rnn_fwd_free(&o), rnn_fwd_free(&want);
    }
    rnn_run_free(&u);
}

/* ---- the inference workspace --------------------------------------------------------------- */

static size_t inference_bytes(const struct rnn_case *c, int layers)
{
    struct rnn_case k = *c;
    k.layers = layers;
    struct rnn_run u;
    size_t ws = 0;
    if (rnn_run_init(&u, &k))
        CHECK_OK(cudnnGetRNNTempSpaceSizes(test_handle(), u.d, CUDNN_FWD_MODE_INFERENCE, u.xd, &ws, NULL));
    rnn_run_free(&u);
    return ws;
}

/* Inference with exactly the workspace cudnnGetRNNTempSpaceSizes (or, legacy,
   cudnnGetRNNWorkspaceSize) reports, in a buffer poisoned past it: the reference's results,
   nothing written past the end. Three layers need what six need (two layers' outputs, one set
   of two steps' states). */
TEST(rnn_inference_workspace_exact)
{
    static const int lens[] = {5, 2, 5, 0};
    const struct rnn_case cases[] = {
        {"LSTM proj 3 layers", CUDNN_LSTM, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
         CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, 3, 3, 5, 3, 5, 4, lens, CUDNN_DATA_FLOAT, true, true, API_V8,
         CUDNN_RNN_ALGO_STANDARD},
        {"GRU 4 layers", CUDNN_GRU, 1, CUDNN_SKIP_INPUT, CUDNN_RNN_SINGLE_INP_BIAS,
         CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 4, 4, 4, 4, 5, 4, lens, CUDNN_DATA_HALF, false, false, API_V8,
         CUDNN_RNN_ALGO_STANDARD},
        {"legacy TANH", CUDNN_RNN_TANH, 2, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
         CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 2, 3, 4, 4, 4, 3, len_equal, CUDNN_DATA_DOUBLE, false, true,
         API_LEGACY, CUDNN_RNN_ALGO_STANDARD},
    };
    cudnnHandle_t h = test_handle();
    for (size_t i = 0; i < TLEN(cases); i++) {
        const struct rnn_case *c = &cases[i];
        struct rnn_run u;
        if (!rnn_run_open(&u, c)) return;
        size_t ws = 0, guard = 4096;
        bool ok = c->api == API_LEGACY ? CHECK_OK(cudnnGetRNNWorkspaceSize(h, u.d, c->T, u.xs, &ws))
                                       : CHECK_OK(cudnnGetRNNTempSpaceSizes(h, u.d, CUDNN_FWD_MODE_INFERENCE, u.xd,
                                                                            &ws, NULL));
        void *big = tbuf_alloc(ws + guard), *snap = tbuf_snapshot((char *)big + ws, guard);
        tbuf_free(u.pws);
        u.pws = big, u.ws_bytes = ws;
        struct fwd_out o = {0}, want = {0};
        rnn_reference_forward(&u, &want);
        ok = ok && rnn_library_forward(&u, CUDNN_FWD_MODE_INFERENCE, &o, NULL) &&
             rnn_check_forward(&u, &o, &want, "exact workspace") &&
             tbuf_unchanged((char *)big + ws, snap, guard, "past the workspace");
        free(snap);
        rnn_fwd_free(&o), rnn_fwd_free(&want);
        rnn_run_free(&u);
        if (!ok) return;
    }
    CHECK(inference_bytes(&cases[0], 3) == inference_bytes(&cases[0], 6));
    CHECK(inference_bytes(&cases[1], 1) < inference_bytes(&cases[1], 3));
}

/* ---- PyTorch's legacy calls ------------------------------------------------------------------ */

static cudnnTensorDescriptor_t padded_desc(cudnnDataType_t t, int a, int b, int c)
{
    /* PyTorch's TensorDescriptor::set(tensor, 5): dims of 1 appended up to 5, their strides 1 */
    int dims[5] = {a, b, c, 1, 1}, strides[5] = {b * c, c, 1, 1, 1};
    cudnnTensorDescriptor_t d;
    cudnnCreateTensorDescriptor(&d);
    if (c == 1) dims[2] = 1, strides[0] = b, strides[1] = 1;
    cudnnSetTensorNdDescriptor(d, t, 5, dims, strides);
    return d;
}

/* What aten/src/ATen/native/cudnn/RNN.cpp does for a half LSTM of equal lengths on a GPU its
   heuristic picks persistence for: cudnnSetRNNDescriptor_v6 with PERSIST_STATIC and float math
   precision, a no-dropout descriptor, TENSOR_OP_MATH, per-step x and y descriptors and the state
   descriptors padded to 5 dims; then the legacy size queries and cudnnRNNForwardTraining and
   cudnnRNNForwardInference. */
TEST(rnn_pytorch_legacy_pattern)
{
    const struct rnn_case c = {"pytorch", CUDNN_LSTM, 1, CUDNN_LINEAR_INPUT, CUDNN_RNN_DOUBLE_BIAS,
                               CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 1, 8, 8, 8, 4, 3, len_equal, CUDNN_DATA_HALF,
                               false, true, API_LEGACY, CUDNN_RNN_ALGO_STANDARD};
    cudnnHandle_t h = test_handle();
    struct rnn_run u;
    cudnnDropoutDescriptor_t drop = NULL;
    cudnnTensorDescriptor_t xs[4], ys[4], hd = padded_desc(c.dtype, 1, c.N, c.hidden);
    for (int t = 0; t < c.T; t++)
        xs[t] = padded_desc(c.dtype, c.N, c.input, 1), ys[t] = padded_desc(c.dtype, c.N, c.hidden, 1);
    bool ok = rnn_run_init(&u, &c) && CHECK_OK(cudnnCreateDropoutDescriptor(&drop)) &&
              CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0, NULL, 0, 0)) &&
              CHECK_OK(cudnnSetRNNDescriptor_v6(h, u.d, c.hidden, c.layers, drop, c.input_mode, CUDNN_UNIDIRECTIONAL,
                                                c.mode, CUDNN_RNN_ALGO_PERSIST_STATIC, CUDNN_DATA_FLOAT)) &&
              CHECK_OK(cudnnSetRNNMatrixMathType(u.d, CUDNN_TENSOR_OP_MATH));
    size_t ws = 0, rs = 0;
    ok = ok && CHECK_OK(cudnnGetRNNWorkspaceSize(h, u.d, c.T, xs, &ws)) &&
         CHECK_OK(cudnnGetRNNTrainingReserveSize(h, u.d, c.T, xs, &rs));
    struct fwd_out want = {0};
    if (ok) rnn_reference_forward(&u, &want);
    for (int train = 0; ok && train < 2; train++) {
        size_t es = tdtype_size(c.dtype), ny = (size_t)u.pos * c.hidden, nh = (size_t)c.N * c.hidden;
        void *pws = tbuf_alloc(ws), *prs = tbuf_alloc(rs ? rs : 1), *py = tbuf_alloc(ny * es);
        void *phy = tbuf_alloc(nh * es), *pcy = tbuf_alloc(nh * es);
        ok = train ? CHECK_OK(cudnnRNNForwardTraining(h, u.d, c.T, xs, u.px, hd, u.phx, hd, u.pcx, u.wd, u.pw, ys, py,
                                                      hd, phy, hd, pcy, pws, ws, prs, rs))
                   : CHECK_OK(cudnnRNNForwardInference(h, u.d, c.T, xs, u.px, hd, u.phx, hd, u.pcx, u.wd, u.pw, ys, py,
                                                       hd, phy, hd, pcy, pws, ws));
        struct fwd_out o = {tvalues_download(c.dtype, py, (int64_t)ny), tvalues_download(c.dtype, phy, (int64_t)nh),
                            tvalues_download(c.dtype, pcy, (int64_t)nh)};
        ok = ok && rnn_check_forward(&u, &o, &want, train ? "pytorch training" : "pytorch inference");
        rnn_fwd_free(&o);
        tbuf_free(pws), tbuf_free(prs), tbuf_free(py), tbuf_free(phy), tbuf_free(pcy);
    }
    rnn_fwd_free(&want);
    for (int t = 0; t < c.T; t++) cudnnDestroyTensorDescriptor(xs[t]), cudnnDestroyTensorDescriptor(ys[t]);
    cudnnDestroyTensorDescriptor(hd);
    if (drop) cudnnDestroyDropoutDescriptor(drop);
    rnn_run_free(&u);
}
