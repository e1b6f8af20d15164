/* attention.c: tests of cudnnMultiHeadAttnForward, cudnnMultiHeadAttnBackwardData and
   cudnnMultiHeadAttnBackwardWeights against ref/attention.c, on every backend: projections on
   and off, biases on and off, both query maps, beams, attention windows, per-sequence lengths,
   residuals, the padding fill, four axis orders, float / double / half data; inference step by
   step equal to the training forward's rows; gradients (data and weights, ADD and SET) against
   the reference and, in double, by finite differences of the forward; bad input (sizes that do
   not match the descriptors, buffers too small, currIdx out of range) returning the documented
   status with nothing written; on CUDA, a training step captured into a CUDA graph. The weights
   are drawn in the reference's simple form and placed through cudnnGetMultiHeadAttnWeights, so
   the layout it reports is what is tested. The info log's benchmark replay string: logged for a
   call shaped as the benchmark's, not otherwise. */
#include "ref/attention.h"
#include "tensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

struct mha_case {
    const char *name;
    unsigned mode;
    int heads, q, k, v, qp, kp, vp, op;
    int B, M, Tq, Tk;
    int order;      /* axes order, see orders[] */
    bool residual;  /* needs the output size = q */
    bool ragged;    /* random sequence lengths (one of them 0 when there are several) */
    bool windows;   /* random attention windows */
    bool fill;      /* a padding fill on the output */
};

static const cudnnSeqDataAxis_t orders[][4] = {
    {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_VECT_DIM},
    {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_VECT_DIM},
    {CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_VECT_DIM},
    {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_VECT_DIM},
};

#define BIAS CUDNN_ATTN_ENABLE_PROJ_BIASES
#define ONE CUDNN_ATTN_QUERYMAP_ONE_TO_ONE

static const struct mha_case cases[] = {
    {"proj_bias", BIAS, 2, 6, 5, 4, 3, 3, 4, 5, 2, 1, 3, 4, 0, false, false, false, false},
    {"proj_nobias_beams_one", ONE, 3, 5, 4, 3, 2, 2, 3, 4, 2, 2, 3, 5, 1, false, false, false, false},
    {"beams_all_ragged_win", BIAS, 2, 6, 4, 5, 3, 3, 2, 6, 3, 2, 4, 5, 2, true, true, true, true},
    {"no_proj", 0, 2, 4, 4, 3, 0, 0, 0, 0, 2, 1, 3, 3, 3, false, true, false, true},
    {"no_v_no_o", BIAS | ONE, 2, 6, 6, 3, 4, 4, 0, 0, 1, 2, 2, 3, 0, true, false, true, false},
    {"v_proj_only_o", BIAS, 3, 6, 6, 4, 0, 0, 2, 0, 2, 1, 3, 2, 1, true, true, false, false},
    {"one_head_long", BIAS, 1, 8, 8, 8, 8, 8, 8, 8, 1, 1, 9, 11, 0, true, false, false, false},
};

/* ---- one problem on the backend under test ------------------------------------------------------ */

struct seqbuf {
    cudnnSeqDataDescriptor_t desc;
    int T, B, M, V;
    int64_t st, sb, sm, count;
    void *dev;
};

/* Dropout descriptors (attention, post-projection) and copies of their states, uploaded again
   before a forward so that it draws the same masks. */
struct drops {
    cudnnDropoutDescriptor_t d[2];
    void *states[2], *saved[2];
    size_t bytes;
};

struct mha_run {
    const struct mha_case *c;
    cudnnDataType_t dtype;
    struct ref_mha ref;
    int mk, o_size;
    int *len_q, *len_kv, *lo, *hi;
    double *w[8];                 /* simple-form weights (NULL when absent) */
    int64_t wcount[8];
    double *q, *k, *v, *res, *dout; /* canonical, rounded to the type */
    struct seqbuf sq, sk, sv, so;
    cudnnAttnDescriptor_t attn;
    void *dev_len_q, *dev_len_kv, *dev_res, *dev_dout;
    void *weights, *ws, *rs;
    size_t wbytes, wsbytes, rsbytes;
    struct drops *drops; /* dropout whose states are replayed before each forward of a loss */
    int64_t woffset[8]; /* elements */
    int wdims[8][3], wstrides[8][3];
    double fill;
    bool tf32; /* the descriptor lets float products run on TF32 (tensor-op math): wider tolerances */
};

static double *rand_array(cudnnDataType_t t, int64_t n, double lo, double hi)
{
    double *a = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    char tmp[8];
    for (int64_t i = 0; i < n; i++) {
        tstore(t, tmp, 0, trand_uniform(lo, hi));
        a[i] = tload(t, tmp, 0);
    }
    return a;
}

static void seq_init(struct seqbuf *s, cudnnDataType_t t, int order, int T, int B, int M, int V, const int *lengths,
                     const double *fill)
{
    s->T = T, s->B = B, s->M = M, s->V = V;
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = T, dims[CUDNN_SEQDATA_BATCH_DIM] = B, dims[CUDNN_SEQDATA_BEAM_DIM] = M,
    dims[CUDNN_SEQDATA_VECT_DIM] = V;
    int64_t stride[4], at = 1;
    for (int i = 3; i >= 0; i--) stride[orders[order][i]] = at, at *= dims[orders[order][i]];
    s->st = stride[CUDNN_SEQDATA_TIME_DIM], s->sb = stride[CUDNN_SEQDATA_BATCH_DIM],
    s->sm = stride[CUDNN_SEQDATA_BEAM_DIM], s->count = at;
    char fill_bytes[8];
    if (fill != NULL) tstore(t, fill_bytes, 0, *fill);
    CHECK_OK(cudnnCreateSeqDataDescriptor(&s->desc));
    CHECK_OK(cudnnSetSeqDataDescriptor(s->desc, t, 4, dims, orders[order], (size_t)B * M, lengths,
                                       fill != NULL ? fill_bytes : NULL));
    s->dev = NULL;
}

static int64_t seq_at(const struct seqbuf *s, int b, int m, int t)
{
    return b * s->sb + m * s->sm + t * s->st;
}

/* A buffer of s's layout holding canonical values ([b][m][t][e]); NULL values: poison. */
static void *seq_upload(const struct seqbuf *s, cudnnDataType_t t, const double *values)
{
    size_t bytes = (size_t)s->count * tdtype_size(t);
    void *dev = tbuf_alloc(bytes);
    if (values == NULL) return dev;
    char *host = malloc(bytes);
    for (int b = 0; b < s->B; b++)
        for (int m = 0; m < s->M; m++)
            for (int tt = 0; tt < s->T; tt++)
                for (int e = 0; e < s->V; e++)
                    tstore(t, host, seq_at(s, b, m, tt) + e, values[(((int64_t)b * s->M + m) * s->T + tt) * s->V + e]);
    tbuf_upload(dev, host, bytes);
    free(host);
    return dev;
}

static double *seq_download(const struct seqbuf *s, cudnnDataType_t t, const void *dev)
{
    size_t bytes = (size_t)s->count * tdtype_size(t);
    char *host = malloc(bytes);
    double *values = malloc(sizeof(double) * (size_t)s->count);
    tbuf_download(host, dev, bytes);
    for (int b = 0; b < s->B; b++)
        for (int m = 0; m < s->M; m++)
            for (int tt = 0; tt < s->T; tt++)
                for (int e = 0; e < s->V; e++)
                    values[(((int64_t)b * s->M + m) * s->T + tt) * s->V + e] = tload(t, host, seq_at(s, b, m, tt) + e);
    free(host);
    return values;
}

/* Simple-form weights into (and out of) the library's buffer, through the layout it reports. */
static void weights_layout(struct mha_run *r, cudnnHandle_t h)
{
    cudnnTensorDescriptor_t wd;
    CHECK_OK(cudnnCreateTensorDescriptor(&wd));
    for (int kind = 0; kind < 8; kind++) {
        void *addr = NULL;
        CHECK_OK(cudnnGetMultiHeadAttnWeights(h, r->attn, (cudnnMultiHeadAttnWeightKind_t)kind, r->wbytes, r->weights,
                                              wd, &addr));
        r->woffset[kind] = -1;
        if (addr == NULL) continue;
        cudnnDataType_t dt;
        int nb;
        CHECK_OK(cudnnGetTensorNdDescriptor(wd, 3, &dt, &nb, r->wdims[kind], r->wstrides[kind]));
        r->woffset[kind] = ((char *)addr - (char *)r->weights) / (int64_t)tdtype_size(r->dtype);
    }
    cudnnDestroyTensorDescriptor(wd);
}

static int64_t weight_at(const struct mha_run *r, int kind, int64_t i)
{
    const int *d = r->wdims[kind], *s = r->wstrides[kind];
    int64_t a = i / ((int64_t)d[1] * d[2]), b = i / d[2] % d[1], c = i % d[2];
    return r->woffset[kind] + a * s[0] + b * s[1] + c * s[2];
}

static void *weights_upload(const struct mha_run *r, double *const w[8])
{
    void *dev = tbuf_alloc(r->wbytes ? r->wbytes : 1);
    char *host = calloc(r->wbytes ? r->wbytes : 1, 1);
    for (int kind = 0; kind < 8; kind++)
        if (r->woffset[kind] >= 0)
            for (int64_t i = 0; i < r->wcount[kind]; i++) tstore(r->dtype, host, weight_at(r, kind, i), w[kind][i]);
    tbuf_upload(dev, host, r->wbytes);
    free(host);
    return dev;
}

static void weights_download(const struct mha_run *r, const void *dev, double *w[8])
{
    char *host = malloc(r->wbytes ? r->wbytes : 1);
    tbuf_download(host, dev, r->wbytes);
    for (int kind = 0; kind < 8; kind++)
        if (r->woffset[kind] >= 0)
            for (int64_t i = 0; i < r->wcount[kind]; i++) w[kind][i] = tload(r->dtype, host, weight_at(r, kind, i));
    free(host);
}

static void *ints_upload(const int *a, int n)
{
    return tbuf_from(a, sizeof(int) * (size_t)n);
}

static bool run_init(struct mha_run *r, const struct mha_case *c, cudnnDataType_t dtype, cudnnDropoutDescriptor_t drop,
                     cudnnDropoutDescriptor_t post)
{
    memset(r, 0, sizeof *r);
    cudnnHandle_t h = test_handle();
    r->c = c, r->dtype = dtype;
    r->mk = (c->mode & ONE) ? c->M : 1;
    int hv = c->vp > 0 ? c->vp : c->v;
    r->o_size = c->op > 0 ? c->op : c->heads * hv;
    r->len_q = malloc(sizeof(int) * (size_t)c->B * c->M);
    r->len_kv = malloc(sizeof(int) * (size_t)c->B * r->mk);
    for (int i = 0; i < c->B * c->M; i++) r->len_q[i] = c->ragged ? trand_int(1, c->Tq) : c->Tq;
    for (int i = 0; i < c->B * r->mk; i++) r->len_kv[i] = c->ragged ? trand_int(1, c->Tk) : c->Tk;
    if (c->ragged && c->B * c->M > 2) r->len_q[1] = 0;
    r->lo = malloc(sizeof(int) * (size_t)c->Tq);
    r->hi = malloc(sizeof(int) * (size_t)c->Tq);
    for (int i = 0; i < c->Tq; i++) {
        r->lo[i] = c->windows ? trand_int(-1, c->Tk - 1) : 0;
        r->hi[i] = c->windows ? trand_int(r->lo[i], c->Tk + 1) : c->Tk;
    }
    if (c->windows) r->lo[0] = r->hi[0] = 1; /* one empty window */
    int proj[4] = {c->qp, c->kp, c->vp, c->op}, size[4] = {c->q, c->k, c->v, hv};
    for (int kind = 0; kind < 8; kind++) {
        int i = kind % 4;
        if (proj[i] == 0 || (kind >= 4 && !(c->mode & BIAS))) continue;
        r->wcount[kind] = kind < 4 ? (int64_t)c->heads * proj[i] * size[i] : (kind == 7 ? 1 : c->heads) * proj[i];
        double span = kind < 4 ? 1.0 / sqrt(size[i]) : 0.5;
        r->w[kind] = rand_array(dtype, r->wcount[kind], -span, span);
    }
    r->ref = (struct ref_mha){.heads = c->heads, .scaler = 1.0 / sqrt(c->qp > 0 ? c->qp : c->q), .q_size = c->q,
                              .k_size = c->k, .v_size = c->v, .q_proj = c->qp, .k_proj = c->kp, .v_proj = c->vp,
                              .o_proj = c->op, .one_to_one = (c->mode & ONE) != 0, .biases = (c->mode & BIAS) != 0,
                              .B = c->B, .M = c->M, .Tq = c->Tq, .Tk = c->Tk, .len_q = r->len_q, .len_kv = r->len_kv,
                              .lo = r->lo, .hi = r->hi, .wq = r->w[0], .wk = r->w[1], .wv = r->w[2], .wo = r->w[3],
                              .bq = r->w[4], .bk = r->w[5], .bv = r->w[6], .bo = r->w[7]};
    int64_t nq = (int64_t)c->B * c->M * c->Tq, nk = (int64_t)c->B * r->mk * c->Tk;
    r->q = rand_array(dtype, nq * c->q, -1, 1);
    r->k = rand_array(dtype, nk * c->k, -1, 1);
    r->v = rand_array(dtype, nk * c->v, -1, 1);
    r->res = rand_array(dtype, nq * c->q, -1, 1);
    r->dout = rand_array(dtype, nq * r->o_size, -1, 1);
    r->fill = -3.25;
    seq_init(&r->sq, dtype, c->order, c->Tq, c->B, c->M, c->q, r->len_q, NULL);
    seq_init(&r->sk, dtype, c->order, c->Tk, c->B, r->mk, c->k, r->len_kv, NULL);
    seq_init(&r->sv, dtype, c->order, c->Tk, c->B, r->mk, c->v, r->len_kv, NULL);
    seq_init(&r->so, dtype, c->order, c->Tq, c->B, c->M, r->o_size, r->len_q, c->fill ? &r->fill : NULL);
    cudnnDataType_t comp = dtype == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : dtype;
    if (!CHECK_OK(cudnnCreateAttnDescriptor(&r->attn)) ||
        !CHECK_OK(cudnnSetAttnDescriptor(r->attn, c->mode, c->heads, r->ref.scaler, dtype, comp, CUDNN_FMA_MATH, drop,
                                         post, c->q, c->k, c->v, c->qp, c->kp, c->vp, c->op, c->Tq + 1, c->Tk + 2,
                                         c->B + 1, c->M)) ||
        !CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, r->attn, &r->wbytes, &r->wsbytes, &r->rsbytes)))
        return false;
    r->weights = tbuf_alloc(r->wbytes ? r->wbytes : 1);
    weights_layout(r, h);
    tbuf_free(r->weights);
    r->weights = weights_upload(r, r->w);
    r->sq.dev = seq_upload(&r->sq, dtype, r->q);
    r->sk.dev = seq_upload(&r->sk, dtype, r->k);
    r->sv.dev = seq_upload(&r->sv, dtype, r->v);
    r->so.dev = seq_upload(&r->so, dtype, NULL);
    r->dev_res = seq_upload(&r->sq, dtype, r->res);
    r->dev_dout = seq_upload(&r->so, dtype, r->dout);
    r->dev_len_q = ints_upload(r->len_q, c->B * c->M);
    r->dev_len_kv = ints_upload(r->len_kv, c->B * r->mk);
    r->ws = tbuf_alloc(r->wsbytes);
    r->rs = tbuf_alloc(r->rsbytes);
    return true;
}

static void run_free(struct mha_run *r)
{
    struct seqbuf *s[] = {&r->sq, &r->sk, &r->sv, &r->so};
    for (int i = 0; i < 4; i++) {
        cudnnDestroySeqDataDescriptor(s[i]->desc);
        if (s[i]->dev) tbuf_free(s[i]->dev);
    }
    for (int i = 0; i < 8; i++) free(r->w[i]);
    free(r->q), free(r->k), free(r->v), free(r->res), free(r->dout);
    free(r->len_q), free(r->len_kv), free(r->lo), free(r->hi);
    void *dev[] = {r->dev_len_q, r->dev_len_kv, r->dev_res, r->dev_dout, r->weights, r->ws, r->rs};
    for (int i = 0; i < 7; i++)
        if (dev[i]) tbuf_free(dev[i]);
    cudnnDestroyAttnDescriptor(r->attn);
}

static cudnnStatus_t forward(struct mha_run *r, int curr, bool training, void *out)
{
    return cudnnMultiHeadAttnForward(test_handle(), r->attn, curr, r->lo, r->hi, r->dev_len_q, r->dev_len_kv,
                                     r->sq.desc, r->sq.dev, r->c->residual ? r->dev_res : NULL, r->sk.desc, r->sk.dev,
                                     r->sv.desc, r->sv.dev, r->so.desc, out, r->wbytes, r->weights, r->wsbytes, r->ws,
                                     training ? r->rsbytes : 0, training ? r->rs : NULL);
}

static double tol_of(const struct mha_run *r)
{
    const cudnnDataType_t t = r->dtype;
    return t == CUDNN_DATA_DOUBLE ? 1e-10 : t == CUDNN_DATA_FLOAT ? (r->tf32 ? 1e-3 : 2e-5) : 2e-2;
}

/* got against want over the canonical positions of s; positions past a length must hold
   pad (NaN: not checked). */
static bool compare_seq(const char *what, const struct mha_run *r, const struct seqbuf *s, const double *got,
                        const double *want, double tol, double pad)
{
    double scale = 1;
    for (int64_t i = 0; i < s->count; i++) scale = fmax(scale, fabs(want[i]));
    for (int b = 0; b < s->B; b++)
        for (int m = 0; m < s->M; m++) {
            int len = (s == &r->sk || s == &r->sv) ? r->len_kv[b * s->M + m] : r->len_q[b * s->M + m];
            for (int t = 0; t < s->T; t++)
                for (int e = 0; e < s->V; e++) {
                    int64_t i = (((int64_t)b * s->M + m) * s->T + t) * s->V + e;
                    double w = t < len ? want[i] : pad;
                    if (isnan(w)) continue;
                    if (!(fabs(got[i] - w) <= tol * scale)) {
                        FAIL("%s %s (%s): [b %d m %d t %d e %d] = %.9g, want %.9g", r->c->name, what,
                             tdtype_name(r->dtype), b, m, t, e, got[i], w);
                        return false;
                    }
                }
        }
    return true;
}

static bool compare_flat(const char *what, const struct mha_run *r, const double *got, const double *want, int64_t n,
                         double tol)
{
    double scale = 1;
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * scale)) {
            FAIL("%s %s (%s): [%lld] = %.9g, want %.9g", r->c->name, what, tdtype_name(r->dtype), (long long)i, got[i],
                 want[i]);
            return false;
        }
    return true;
}

static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF};

TEST(mha_forward)
{
    for (size_t ci = 0; ci < TLEN(cases); ci++)
        for (size_t ti = 0; ti < TLEN(types); ti++) {
            struct mha_run r;
            if (!run_init(&r, &cases[ci], types[ti], NULL, NULL)) {
                run_free(&r);
                continue;
            }
            double *want = malloc(sizeof(double) * (size_t)r.so.count);
            ref_mha_forward(&r.ref, r.q, r.k, r.v, cases[ci].residual ? r.res : NULL, want);
            /* inference gets exactly the workspace of the inference query (reserve size NULL) */
            size_t wbytes, inf_wsbytes, train_wsbytes = r.wsbytes;
            CHECK_OK(cudnnGetMultiHeadAttnBuffers(test_handle(), r.attn, &wbytes, &inf_wsbytes, NULL));
            CHECK(wbytes == r.wbytes && inf_wsbytes <= train_wsbytes);
            void *train_ws = r.ws, *inf_ws = tbuf_alloc(inf_wsbytes ? inf_wsbytes : 1);
            for (int training = 0; training < 2; training++) {
                r.ws = training ? train_ws : inf_ws, r.wsbytes = training ? train_wsbytes : inf_wsbytes;
                tbuf_poison(r.so.dev, (size_t)r.so.count * tdtype_size(r.dtype));
                if (!CHECK_OK(forward(&r, -1, training, r.so.dev))) break;
                double *got = seq_download(&r.so, r.dtype, r.so.dev);
                compare_seq(training ? "out (training)" : "out (inference)", &r, &r.so, got, want, tol_of(&r),
                            cases[ci].fill ? r.fill : NAN);
                free(got);
            }
            r.ws = train_ws, r.wsbytes = train_wsbytes;
            tbuf_free(inf_ws);
            free(want);
            run_free(&r);
        }
}

/* Inference one query step at a time gives the rows of the forward over all steps; the other
   rows stay as they were. */
TEST(mha_inference_steps)
{
    const struct mha_case *sel[] = {&cases[1], &cases[2], &cases[5]};
    for (size_t ci = 0; ci < TLEN(sel); ci++) {
        struct mha_run r;
        if (!run_init(&r, sel[ci], CUDNN_DATA_FLOAT, NULL, NULL)) {
            run_free(&r);
            continue;
        }
        size_t bytes = (size_t)r.so.count * tdtype_size(r.dtype);
        void *all = tbuf_alloc(bytes);
        CHECK_OK(forward(&r, -1, true, all));
        double *want = seq_download(&r.so, r.dtype, all);
        tbuf_poison(r.so.dev, bytes);
        for (int t = 0; t < sel[ci]->Tq; t++) {
            if (!CHECK_OK(forward(&r, t, false, r.so.dev))) break;
            double *got = seq_download(&r.so, r.dtype, r.so.dev);
            for (int b = 0; b < r.so.B; b++)
                for (int m = 0; m < r.so.M; m++)
                    for (int tt = 0; tt < r.so.T; tt++)
                        for (int e = 0; e < r.so.V; e++) {
                            int64_t i = (((int64_t)b * r.so.M + m) * r.so.T + tt) * r.so.V + e;
                            if (tt > t) {
                                if (!CHECK(isnan(got[i]))) goto next;
                            } else if (!(fabs(got[i] - want[i]) <= 1e-5 * fmax(1, fabs(want[i])))) {
                                FAIL("%s step %d: [b %d m %d t %d e %d] = %.9g, want %.9g", sel[ci]->name, t, b, m, tt,
                                     e, got[i], want[i]);
                                goto next;
                            }
                        }
        next:
            free(got);
        }
        free(want);
        tbuf_free(all);
        run_free(&r);
    }
}

/* The training step the backward tests make: a forward that fills the reserve, backward data
   into dq, dk, dv and backward weights into dw. */
static bool training_step(struct mha_run *r, cudnnWgradMode_t mode, void *dq, void *dk, void *dv, void *dw)
{
    cudnnHandle_t h = test_handle();
    return CHECK_OK(forward(r, -1, true, r->so.dev)) &&
           CHECK_OK(cudnnMultiHeadAttnBackwardData(h, r->attn, r->lo, r->hi, r->dev_len_q, r->dev_len_kv, r->so.desc,
                                                   r->dev_dout, r->sq.desc, dq, r->sq.dev, r->sk.desc, dk, r->sk.dev,
                                                   r->sv.desc, dv, r->sv.dev, r->wbytes, r->weights, r->wsbytes,
                                                   r->ws, r->rsbytes, r->rs)) &&
           CHECK_OK(cudnnMultiHeadAttnBackwardWeights(h, r->attn, mode, r->sq.desc, r->sq.dev, r->sk.desc, r->sk.dev,
                                                      r->sv.desc, r->sv.dev, r->so.desc, r->dev_dout, r->wbytes,
                                                      r->weights, dw, r->wsbytes, r->ws, r->rsbytes, r->rs));
}

#ifdef OCD_TEST_CUDA
/* The training step again, captured into a CUDA graph on a stream of its own and replayed once
   into the poisoned outputs (SET mode: a step's weight gradients do not depend on the last). */
static bool training_step_captured(struct mha_run *r, void *dq, void *dk, void *dv, void *dw)
{
    cudnnHandle_t h = test_handle();
    tbuf_poison(dq, (size_t)r->sq.count * tdtype_size(r->dtype));
    tbuf_poison(dk, (size_t)r->sk.count * tdtype_size(r->dtype));
    tbuf_poison(dv, (size_t)r->sv.count * tdtype_size(r->dtype));
    tbuf_poison(dw, r->wbytes);
    cudaStream_t prior = NULL, st = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    bool ok = CHECK_OK(cudnnGetStream(h, &prior)) &&
              CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess) &&
              CHECK_OK(cudnnSetStream(h, st)) &&
              CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    if (ok) {
        bool calls = training_step(r, CUDNN_WGRAD_MODE_SET, dq, dk, dv, dw);
        ok = CHECK(cudaStreamEndCapture(st, &g) == cudaSuccess) && calls &&
             CHECK(cudaGraphInstantiateWithFlags(&exec, g, 0) == cudaSuccess) &&
             CHECK(cudaGraphLaunch(exec, st) == cudaSuccess) && CHECK(cudaStreamSynchronize(st) == cudaSuccess);
    }
    cudnnSetStream(h, prior);
    if (exec) cudaGraphExecDestroy(exec);
    if (g) cudaGraphDestroy(g);
    if (st) cudaStreamDestroy(st);
    return ok;
}
#endif

/* Backward data and weights against the reference; dweights starts at `start` (ADD) or poison
   (SET). With `captured` (CUDA), the step made directly warms the libraries up, and what is
   compared is the same step captured into a CUDA graph and replayed (SET mode). */
static void check_backward(struct mha_run *r, cudnnWgradMode_t mode, bool captured)
{
    void *dq = seq_upload(&r->sq, r->dtype, NULL), *dk = seq_upload(&r->sk, r->dtype, NULL);
    void *dv = seq_upload(&r->sv, r->dtype, NULL);
    double *start[8] = {0}, *got_w[8] = {0}, *want_w[8] = {0};
    for (int kind = 0; kind < 8; kind++)
        if (r->w[kind]) {
            start[kind] = rand_array(r->dtype, r->wcount[kind], -1, 1);
            got_w[kind] = malloc(sizeof(double) * (size_t)r->wcount[kind]);
            want_w[kind] = malloc(sizeof(double) * (size_t)r->wcount[kind]);
        }
    void *dw = weights_upload(r, start);
    if (mode == CUDNN_WGRAD_MODE_SET) tbuf_poison(dw, r->wbytes);
    double *want_dq = malloc(sizeof(double) * (size_t)r->sq.count), *want_dk = malloc(sizeof(double) * (size_t)r->sk.count);
    double *want_dv = malloc(sizeof(double) * (size_t)r->sv.count);
    ref_mha_backward(&r->ref, r->q, r->k, r->v, r->dout, want_dq, want_dk, want_dv, want_w[0], want_w[1], want_w[2],
                     want_w[3], want_w[4], want_w[5], want_w[6], want_w[7]);
    double tol = tol_of(r) * (r->dtype == CUDNN_DATA_HALF ? 2 : 10);
    bool ok = training_step(r, mode, dq, dk, dv, dw);
#ifdef OCD_TEST_CUDA
    if (ok && captured) ok = training_step_captured(r, dq, dk, dv, dw);
#else
    (void)captured;
#endif
    if (ok) {
        double *g = seq_download(&r->sq, r->dtype, dq);
        compare_seq("dq", r, &r->sq, g, want_dq, tol, 0);
        free(g);
        g = seq_download(&r->sk, r->dtype, dk);
        compare_seq("dk", r, &r->sk, g, want_dk, tol, 0);
        free(g);
        g = seq_download(&r->sv, r->dtype, dv);
        compare_seq("dv", r, &r->sv, g, want_dv, tol, 0);
        free(g);
        weights_download(r, dw, got_w);
        static const char *const names[] = {"dwq", "dwk", "dwv", "dwo", "dbq", "dbk", "dbv", "dbo"};
        for (int kind = 0; kind < 8; kind++)
            if (r->w[kind]) {
                if (mode == CUDNN_WGRAD_MODE_ADD)
                    for (int64_t i = 0; i < r->wcount[kind]; i++) want_w[kind][i] += start[kind][i];
                compare_flat(names[kind], r, got_w[kind], want_w[kind], r->wcount[kind], tol);
            }
    }
    for (int kind = 0; kind < 8; kind++) free(start[kind]), free(got_w[kind]), free(want_w[kind]);
    free(want_dq), free(want_dk), free(want_dv);
    tbuf_free(dq), tbuf_free(dk), tbuf_free(dv), tbuf_free(dw);
}

TEST(mha_backward)
{
    for (size_t ci = 0; ci < TLEN(cases); ci++)
        for (size_t ti = 0; ti < TLEN(types); ti++) {
            struct mha_run r;
            if (run_init(&r, &cases[ci], types[ti], NULL, NULL))
                check_backward(&r, ti == 1 ? CUDNN_WGRAD_MODE_SET : CUDNN_WGRAD_MODE_ADD, false);
            run_free(&r);
        }
}

#ifdef OCD_TEST_CUDA
/* Frameworks capture whole training steps into CUDA graphs: the forward, backward data and
   backward weights through the API, projections included, captured and replayed, give the
   reference's gradients (no call synchronises with the host). */
TEST(mha_stream_capture)
{
    if (test_backend[0] != 'c') return;
    const struct mha_case *sel[] = {&cases[0], &cases[2]};
    static const cudnnDataType_t captured_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF};
    for (size_t ci = 0; ci < TLEN(sel); ci++)
        for (size_t ti = 0; ti < TLEN(captured_types); ti++) {
            struct mha_run r;
            if (run_init(&r, sel[ci], captured_types[ti], NULL, NULL)) check_backward(&r, CUDNN_WGRAD_MODE_SET, true);
            run_free(&r);
        }
}
#endif

/* ---- finite differences ------------------------------------------------------------------------ */

static void drops_init(struct drops *x, float attn_p, float post_p)
{
    cudnnHandle_t h = test_handle();
    CHECK_OK(cudnnDropoutGetStatesSize(h, &x->bytes));
    float p[2] = {attn_p, post_p};
    for (int i = 0; i < 2; i++) {
        x->states[i] = tbuf_alloc(x->bytes);
        CHECK_OK(cudnnCreateDropoutDescriptor(&x->d[i]));
        CHECK_OK(cudnnSetDropoutDescriptor(x->d[i], h, p[i], x->states[i], x->bytes, 1234 + i));
        x->saved[i] = malloc(x->bytes);
        tbuf_download(x->saved[i], x->states[i], x->bytes);
    }
}

static void drops_restore(const struct drops *x)
{
    for (int i = 0; i < 2; i++) tbuf_upload(x->states[i], x->saved[i], x->bytes);
}

static void drops_free(struct drops *x)
{
    for (int i = 0; i < 2; i++) {
        cudnnDestroyDropoutDescriptor(x->d[i]);
        tbuf_free(x->states[i]);
        free(x->saved[i]);
    }
}

/* sum(dout * out) over the valid output positions, out from an inference forward (a training
   forward with the same masks as the one the gradients came from, under dropout). */
static double loss(struct mha_run *r)
{
    if (r->drops != NULL) drops_restore(r->drops);
    if (!CHECK_OK(forward(r, -1, r->drops != NULL, r->so.dev))) return NAN;
    double *out = seq_download(&r->so, r->dtype, r->so.dev), sum = 0;
    for (int b = 0; b < r->so.B; b++)
        for (int m = 0; m < r->so.M; m++)
            for (int t = 0; t < r->len_q[b * r->so.M + m]; t++)
                for (int e = 0; e < r->so.V; e++) {
                    int64_t i = (((int64_t)b * r->so.M + m) * r->so.T + t) * r->so.V + e;
                    sum += r->dout[i] * out[i];
                }
    free(out);
    return sum;
}

/* Uploads a changed x again: a canonical input into s's buffer or, with s NULL, the weights. */
static void upload_again(struct mha_run *r, double *x, struct seqbuf *s)
{
    if (s != NULL) {
        tbuf_free(s->dev);
        s->dev = seq_upload(s, r->dtype, x);
    } else {
        tbuf_free(r->weights);
        r->weights = weights_upload(r, r->w);
    }
}

/* The central difference of the loss along element i of a canonical input (x, uploaded to s)
   or, with s NULL, of a simple-form weight array x (one of r->w). */
static double difference(struct mha_run *r, double *x, struct seqbuf *s, int64_t i)
{
    const double eps = 1e-5;
    double keep = x[i], l[2];
    for (int side = 0; side < 2; side++) {
        x[i] = keep + (side ? -eps : eps);
        upload_again(r, x, s);
        l[side] = loss(r);
    }
    x[i] = keep;
    upload_again(r, x, s);
    return (l[0] - l[1]) / (2 * eps);
}

/* Gradients of a training forward against central differences of the loss along random
   elements of q, k, v and of each weight kind. */
static void check_differences(struct mha_run *r)
{
    cudnnHandle_t h = test_handle();
    void *dq = seq_upload(&r->sq, r->dtype, NULL), *dk = seq_upload(&r->sk, r->dtype, NULL);
    void *dv = seq_upload(&r->sv, r->dtype, NULL), *dw = tbuf_alloc(r->wbytes ? r->wbytes : 1);
    double *gw[8] = {0};
    if (r->drops != NULL) drops_restore(r->drops);
    if (CHECK_OK(forward(r, -1, true, r->so.dev)) &&
        CHECK_OK(cudnnMultiHeadAttnBackwardData(h, r->attn, r->lo, r->hi, r->dev_len_q, r->dev_len_kv, r->so.desc,
                                                r->dev_dout, r->sq.desc, dq, r->sq.dev, r->sk.desc, dk, r->sk.dev,
                                                r->sv.desc, dv, r->sv.dev, r->wbytes, r->weights, r->wsbytes, r->ws,
                                                r->rsbytes, r->rs)) &&
        CHECK_OK(cudnnMultiHeadAttnBackwardWeights(h, r->attn, CUDNN_WGRAD_MODE_SET, r->sq.desc, r->sq.dev,
                                                   r->sk.desc, r->sk.dev, r->sv.desc, r->sv.dev, r->so.desc,
                                                   r->dev_dout, r->wbytes, r->weights, dw, r->wsbytes, r->ws,
                                                   r->rsbytes, r->rs))) {
        double *g[3] = {seq_download(&r->sq, r->dtype, dq), seq_download(&r->sk, r->dtype, dk),
                        seq_download(&r->sv, r->dtype, dv)};
        double *x[3] = {r->q, r->k, r->v};
        struct seqbuf *s[3] = {&r->sq, &r->sk, &r->sv};
        for (int kind = 0; kind < 8; kind++)
            if (r->w[kind]) gw[kind] = malloc(sizeof(double) * (size_t)r->wcount[kind]);
        weights_download(r, dw, gw);
        for (int trial = 0; trial < 6; trial++) {
            int which = trial % 3;
            int64_t i = trand_int(0, (int)s[which]->count - 1);
            double fd = difference(r, x[which], s[which], i);
            if (!(fabs(fd - g[which][i]) <= 1e-6 * fmax(1, fabs(fd))))
                FAIL("%s: d%c[%lld] = %.12g, finite difference %.12g", r->c->name, "qkv"[which], (long long)i,
                     g[which][i], fd);
        }
        for (int kind = 0; kind < 8; kind++)
            if (r->w[kind]) {
                int64_t i = trand_int(0, (int)r->wcount[kind] - 1);
                double fd = difference(r, r->w[kind], NULL, i);
                if (!(fabs(fd - gw[kind][i]) <= 1e-6 * fmax(1, fabs(fd))))
                    FAIL("%s: weight kind %d [%lld] = %.12g, finite difference %.12g", r->c->name, kind,
                         (long long)i, gw[kind][i], fd);
            }
        for (int j = 0; j < 3; j++) free(g[j]);
    }
    for (int kind = 0; kind < 8; kind++) free(gw[kind]);
    tbuf_free(dq), tbuf_free(dk), tbuf_free(dv), tbuf_free(dw);
}

TEST(mha_finite_differences)
{
    const struct mha_case *sel[] = {&cases[0], &cases[2], &cases[3], &cases[4]};
    for (size_t ci = 0; ci < TLEN(sel); ci++) {
        struct mha_run r;
        if (run_init(&r, sel[ci], CUDNN_DATA_DOUBLE, NULL, NULL)) check_differences(&r);
        run_free(&r);
    }
}

/* Attention and post-projection dropout: the training forward differs from the inference one
   (which applies none), and the gradients match
   finite differences of a forward that replays the same masks. The last query step's window
   covers every key: with all windows empty the attention is 0 and dropout has nothing to drop. */
TEST(mha_dropout)
{
    const struct mha_case *sel[] = {&cases[0], &cases[4]};
    for (size_t ci = 0; ci < TLEN(sel); ci++) {
        struct drops drops;
        drops_init(&drops, 0.3f, 0.25f);
        struct mha_run r;
        if (run_init(&r, sel[ci], CUDNN_DATA_DOUBLE, drops.d[0], drops.d[1])) {
            r.lo[sel[ci]->Tq - 1] = 0, r.hi[sel[ci]->Tq - 1] = sel[ci]->Tk;
            double *want = malloc(sizeof(double) * (size_t)r.so.count);
            ref_mha_forward(&r.ref, r.q, r.k, r.v, sel[ci]->residual ? r.res : NULL, want);
            CHECK_OK(forward(&r, -1, false, r.so.dev));
            double *got = seq_download(&r.so, r.dtype, r.so.dev);
            compare_seq("out (inference, dropout off)", &r, &r.so, got, want, 1e-10, NAN);
            free(got);
            CHECK_OK(forward(&r, -1, true, r.so.dev));
            got = seq_download(&r.so, r.dtype, r.so.dev);
            int64_t differ = 0;
            for (int64_t i = 0; i < r.so.count; i++) differ += fabs(got[i] - want[i]) > 1e-9;
            CHECK(differ > 0);
            free(got);
            free(want);
            r.drops = &drops;
            check_differences(&r);
        }
        run_free(&r);
        drops_free(&drops);
    }
}

/* ---- bad input ---------------------------------------------------------------------------------- */

/* A descriptor like s but with one extent changed (axis) to `value`. */
static cudnnSeqDataDescriptor_t changed(const struct seqbuf *s, cudnnDataType_t t, int order, int axis, int value,
                                        int **lengths)
{
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = s->T, dims[CUDNN_SEQDATA_BATCH_DIM] = s->B, dims[CUDNN_SEQDATA_BEAM_DIM] = s->M,
    dims[CUDNN_SEQDATA_VECT_DIM] = s->V;
    dims[axis] = value;
    int n = dims[CUDNN_SEQDATA_BATCH_DIM] * dims[CUDNN_SEQDATA_BEAM_DIM];
    *lengths = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) (*lengths)[i] = dims[CUDNN_SEQDATA_TIME_DIM];
    cudnnSeqDataDescriptor_t d;
    CHECK_OK(cudnnCreateSeqDataDescriptor(&d));
    CHECK_OK(cudnnSetSeqDataDescriptor(d, t, 4, dims, orders[order], (size_t)n, *lengths, NULL));
    return d;
}

TEST(mha_bad_input)
{
    struct mha_run r;
    const struct mha_case *c = &cases[0];
    if (!run_init(&r, c, CUDNN_DATA_FLOAT, NULL, NULL)) {
        run_free(&r);
        return;
    }
    cudnnHandle_t h = test_handle();
    size_t obytes = (size_t)r.so.count * 4;
    void *out = r.so.dev, *before = tbuf_snapshot(out, obytes);
    const struct {
        int axis, value;
        int which; /* 0 q, 1 k, 2 o */
    } bad_dims[] = {{CUDNN_SEQDATA_VECT_DIM, c->q + 1, 0}, {CUDNN_SEQDATA_BATCH_DIM, c->B + 1, 1},
                    {CUDNN_SEQDATA_TIME_DIM, c->Tq + 1, 2}, {CUDNN_SEQDATA_TIME_DIM, c->Tq + 2, 0},
                    {CUDNN_SEQDATA_BEAM_DIM, 2, 1}};
    for (size_t i = 0; i < TLEN(bad_dims); i++) {
        const struct seqbuf *s = bad_dims[i].which == 0 ? &r.sq : bad_dims[i].which == 1 ? &r.sk : &r.so;
        int *len;
        cudnnSeqDataDescriptor_t d = changed(s, CUDNN_DATA_FLOAT, c->order, bad_dims[i].axis, bad_dims[i].value, &len);
        cudnnSeqDataDescriptor_t qd = bad_dims[i].which == 0 ? d : r.sq.desc, kd = bad_dims[i].which == 1 ? d : r.sk.desc;
        cudnnSeqDataDescriptor_t od = bad_dims[i].which == 2 ? d : r.so.desc;
        CHECK_STATUS(cudnnMultiHeadAttnForward(h, r.attn, -1, r.lo, r.hi, r.dev_len_q, r.dev_len_kv, qd, r.sq.dev,
                                               NULL, kd, r.sk.dev, r.sv.desc, r.sv.dev, od, out, r.wbytes, r.weights,
                                               r.wsbytes, r.ws, r.rsbytes, r.rs),
                     CUDNN_STATUS_BAD_PARAM);
        cudnnDestroySeqDataDescriptor(d);
        free(len);
    }
    int *len;
    cudnnSeqDataDescriptor_t dbl = changed(&r.sq, CUDNN_DATA_DOUBLE, c->order, CUDNN_SEQDATA_VECT_DIM, c->q, &len);
    CHECK_STATUS(cudnnMultiHeadAttnForward(h, r.attn, -1, r.lo, r.hi, r.dev_len_q, r.dev_len_kv, dbl, r.sq.dev, NULL,
                                           r.sk.desc, r.sk.dev, r.sv.desc, r.sv.dev, r.so.desc, out, r.wbytes,
                                           r.weights, r.wsbytes, r.ws, r.rsbytes, r.rs),
                 CUDNN_STATUS_BAD_PARAM);
    cudnnDestroySeqDataDescriptor(dbl);
    free(len);
#define FWD(curr, lo, wb, wsb, rsb, rs, q)                                                                             \
    cudnnMultiHeadAttnForward(h, r.attn, curr, lo, r.hi, r.dev_len_q, r.dev_len_kv, r.sq.desc, q, NULL, r.sk.desc,   \
                              r.sk.dev, r.sv.desc, r.sv.dev, r.so.desc, out, wb, r.weights, wsb, r.ws, rsb, rs)
    CHECK_STATUS(FWD(c->Tq, r.lo, r.wbytes, r.wsbytes, 0, NULL, r.sq.dev), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(FWD(0, r.lo, r.wbytes, r.wsbytes, r.rsbytes, r.rs, r.sq.dev), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(FWD(-1, NULL, r.wbytes, r.wsbytes, r.rsbytes, r.rs, r.sq.dev), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(FWD(-1, r.lo, r.wbytes - 1, r.wsbytes, r.rsbytes, r.rs, r.sq.dev), CUDNN_STATUS_BAD_PARAM);
    size_t wbytes, inf_wsbytes; /* the forward needs the inference workspace, in training too */
    CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, r.attn, &wbytes, &inf_wsbytes, NULL));
    CHECK_STATUS(FWD(-1, r.lo, r.wbytes, inf_wsbytes - 1, r.rsbytes, r.rs, r.sq.dev), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(FWD(-1, r.lo, r.wbytes, inf_wsbytes - 1, 0, NULL, r.sq.dev), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(FWD(-1, r.lo, r.wbytes, r.wsbytes, r.rsbytes - 1, r.rs, r.sq.dev), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(FWD(-1, r.lo, r.wbytes, r.wsbytes, r.rsbytes, r.rs, out), CUDNN_STATUS_BAD_PARAM); /* out = queries */
#undef FWD
    tbuf_unchanged(out, before, obytes, "out after rejected forwards");
    free(before);

    /* the backward calls */
    void *dq = seq_upload(&r.sq, r.dtype, NULL), *dk = seq_upload(&r.sk, r.dtype, NULL);
    void *dv = seq_upload(&r.sv, r.dtype, NULL), *dw = tbuf_alloc(r.wbytes);
    CHECK_OK(forward(&r, -1, true, out));
    void *snap_q = tbuf_snapshot(dq, (size_t)r.sq.count * 4), *snap_w = tbuf_snapshot(dw, r.wbytes);
#define BWD(rsb, rs, dk_)                                                                                              \
    cudnnMultiHeadAttnBackwardData(h, r.attn, r.lo, r.hi, r.dev_len_q, r.dev_len_kv, r.so.desc, r.dev_dout,          \
                                   r.sq.desc, dq, r.sq.dev, r.sk.desc, dk_, r.sk.dev, r.sv.desc, dv, r.sv.dev,       \
                                   r.wbytes, r.weights, r.wsbytes, r.ws, rsb, rs)
    CHECK_STATUS(BWD(r.rsbytes, NULL, dk), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(BWD(r.rsbytes - 1, r.rs, dk), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(BWD(r.rsbytes, r.rs, dq), CUDNN_STATUS_BAD_PARAM); /* dkeys = dqueries */
#undef BWD
    tbuf_unchanged(dq, snap_q, (size_t)r.sq.count * 4, "dqueries after rejected backward calls");
#define WGRAD(mode, wsb, dw_)                                                                                          \
    cudnnMultiHeadAttnBackwardWeights(h, r.attn, mode, r.sq.desc, r.sq.dev, r.sk.desc, r.sk.dev, r.sv.desc, r.sv.dev, \
                                      r.so.desc, r.dev_dout, r.wbytes, r.weights, dw_, wsb, r.ws, r.rsbytes, r.rs)
    CHECK_STATUS(WGRAD((cudnnWgradMode_t)7, r.wsbytes, dw), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(WGRAD(CUDNN_WGRAD_MODE_ADD, r.wsbytes - 1, dw), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(WGRAD(CUDNN_WGRAD_MODE_ADD, r.wsbytes, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(WGRAD(CUDNN_WGRAD_MODE_ADD, r.wsbytes, r.weights), CUDNN_STATUS_BAD_PARAM);
#undef WGRAD
    tbuf_unchanged(dw, snap_w, r.wbytes, "dweights after rejected calls");
    free(snap_q), free(snap_w);
    tbuf_free(dq), tbuf_free(dk), tbuf_free(dv), tbuf_free(dw);
    run_free(&r);
}

/* ---- the replay string of the info log (core/check.h) ------------------------------------------ */

/* Replay lines of one forward of case c (float), after its descriptor is set to the benchmark's
   math type when `bench_math`; windows narrowed when `narrow`; at query step curr; with
   `backward`, of a training forward and both backward calls instead. */
static int replay_lines(struct replay_capture *log, const struct mha_case *c, bool bench_math, bool narrow, int curr,
                        bool backward)
{
    struct mha_run r;
    replay_capture_clear(log);
    bool ok = run_init(&r, c, CUDNN_DATA_FLOAT, NULL, NULL);
    if (ok && bench_math)
        ok = CHECK_OK(cudnnSetAttnDescriptor(r.attn, c->mode, c->heads, r.ref.scaler, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                             CUDNN_TENSOR_OP_MATH, NULL, NULL, c->q, c->k, c->v, c->qp, c->kp, c->vp,
                                             c->op, c->Tq + 1, c->Tk + 2, c->B + 1, c->M));
    r.tf32 = bench_math;
    if (ok && narrow) r.hi[c->Tq - 1] = c->Tk - 1;
    if (ok && backward) check_backward(&r, CUDNN_WGRAD_MODE_ADD, false);
    else if (ok) ok = CHECK_OK(forward(&r, curr, curr < 0, r.so.dev));
    run_free(&r);
    return ok ? log->count : -1;
}

/* A call shaped as the benchmark's mha logs its problem string (the forward dir=fwd, either
   backward call dir=bwd); windows narrower than the keys, ragged lengths, residuals, one query
   step or another math type log none. */
TEST(mha_replay_log)
{
    struct replay_capture log;
    replay_capture_start(&log, "mha");
    /* width 8, 2 heads of 4, output projection 8, batch 2, 5 steps, [batch, time, beam, vect] */
    struct mha_case bench = {"bench", BIAS, 2, 8, 8, 8, 4, 4, 4, 8, 2, 1, 5, 5, 3, false, false, false, false};
    struct mha_case residual = bench, ragged = bench;
    residual.residual = true;
    ragged.ragged = true, ragged.B = 3; /* one sequence of length 0 */
    CHECK(replay_lines(&log, &bench, true, false, -1, false) == 1);
    if (!CHECK(strstr(log.last, "cudnnMultiHeadAttnForward on ") != NULL &&
               strstr(log.last, "--problem \"op=mha dir=fwd dt=f32 b=2 heads=2 width=8 seq=5 proj=1\"") != NULL))
        FAIL("%s", log.last);
    CHECK(replay_lines(&log, &bench, true, false, -1, true) == 3);
    static const char *const calls[] = {"cudnnMultiHeadAttnForward", "cudnnMultiHeadAttnBackwardData",
                                        "cudnnMultiHeadAttnBackwardWeights"};
    for (int i = 0; i < 3; i++)
        if (!CHECK(replay_logged(&log, calls[i], i ? "--problem \"op=mha dir=bwd dt=f32 b=2 heads=2 width=8 seq=5 proj=1\""
                                                   : "--problem \"op=mha dir=fwd dt=f32 b=2 heads=2 width=8 seq=5 proj=1\"")))
            FAIL("%s: %s", calls[i], log.lines);
    CHECK(replay_lines(&log, &bench, true, true, -1, false) == 0);
    /* BackwardWeights takes no windows: it logs the call of full windows */
    CHECK(replay_lines(&log, &bench, true, true, -1, true) == 1);
    CHECK(replay_logged(&log, calls[2], "dir=bwd"));
    CHECK(replay_lines(&log, &bench, true, false, 0, false) == 0);
    CHECK(replay_lines(&log, &bench, false, false, -1, false) == 0);
    CHECK(replay_lines(&log, &residual, true, false, -1, false) == 0);
    CHECK(replay_lines(&log, &ragged, true, false, -1, false) == 0);
    replay_capture_stop(&log);
}
