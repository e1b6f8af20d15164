/* gemm.c: the library's internal GEMM (src/problem/gemm.h) against the double reference
   (ref/gemm.c), on every backend present and every implementation of it, forced one at a time
   with OPENCUDNN_DISABLE: every type combination, the four transpositions, padded leading
   dimensions, strided batches (with gaps, and a stride of 0 that reuses A), arrays of batch
   pointers, and the epilogue (alpha, beta with and without a prior C, a bias per row or per
   column, each activation mode, and each unary forward pointwise step as the activation: GELU,
   SOFTPLUS, a clipped and sloped RELU_FWD, SWISH, TANH, SIGMOID, ELU, which every entry takes:
   cuBLASLt's through its BIAS epilogue and a pass over C). Every entry must serve some
   case with a bias or an activation: cuda:gemm_cublaslt, which computes only a bias per row
   in cuBLASLt's own epilogue, gets such cases on aligned matrices. The host's CBLAS entry (a build with a CBLAS library) is forced
   with OPENCUDNN_HOST_GEMM=cblas, since its calibration may give it nothing. Outputs are poisoned or hold a random prior; the whole span of C
   is compared, so the gaps between columns and batches must come back untouched. Bad problems:
   BAD_PARAM and nothing written.

   ocd_gemm is not an API function: the test reaches it the way the sub-libraries reach each
   other, as an ocd_ symbol of libcudnn_ops_infer.so.8 under the private version node (the
   library the front has loaded from the build directory), so nothing is exported for tests. */
#include "problem/gemm.h"

#include "ref/gemm.h"
#include "ref/pointwise.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

typedef cudnnStatus_t (*gemm_fn)(cudnnHandle_t, const struct ocd_gemm_problem *, const void *, const void *, void *,
                                 const void *, const char *);

static gemm_fn gemm_entry(void)
{
    static gemm_fn fn;
    if (fn == NULL) {
        *(void **)&fn = test_lib_symbol(OCD_LIBRARY_FILE("cudnn_ops_infer"), "ocd_gemm");
    }
    return fn;
}

struct gtype {
    cudnnDataType_t ab, c;
    enum ocd_gemm_compute compute;
};

static const struct gtype gtypes[] = {
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, OCD_GEMM_COMPUTE_F32},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, OCD_GEMM_COMPUTE_TF32},
    {CUDNN_DATA_HALF, CUDNN_DATA_HALF, OCD_GEMM_COMPUTE_F32},
    {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, OCD_GEMM_COMPUTE_F32},
    {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, OCD_GEMM_COMPUTE_F32},
    {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, OCD_GEMM_COMPUTE_F32},
    {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, OCD_GEMM_COMPUTE_F64},
};

/* The implementations of each backend, in table order (src/ops/gemm.c). */
#ifdef OCD_TEST_CBLAS
static const char *const host_entries[] = {"host:gemm_cblas", "host:gemm_packed"};
#else
static const char *const host_entries[] = {"host:gemm_packed"};
#endif
static const char *const cuda_entries[] = {"cuda:gemm_cublaslt", "cuda:gemm_cublas", "cuda:gemm_mma",
                                           "cuda:gemm_plain"};

/* A case, named for what it exercises. */
struct gcase {
    const char *name;
    int m, n, k;
    bool ta, tb;
    int pad;       /* added to each leading dimension */
    int batch;
    bool pointers; /* an array of batch pointers, else strided */
    bool reuse_a;  /* stride_a 0 */
    double alpha, beta;
    enum ocd_gemm_bias bias;
    int act; /* a cudnnActivationMode_t, or -1: none */
    double coef;
    int bias_off; /* the bias this many elements into its buffer: off a 16-byte boundary */
};

static const struct gcase gcases[] = {
    {"one_element", 1, 1, 1, false, false, 0, 1, false, false, 1, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"odd_nn", 7, 5, 3, false, false, 0, 1, false, false, 1, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"odd_tn", 7, 5, 3, true, false, 0, 1, false, false, 1, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"odd_nt", 7, 5, 3, false, true, 0, 1, false, false, 1, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"odd_tt_padded", 9, 6, 11, true, true, 3, 1, false, false, 1, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"k_beyond_a_block", 13, 9, 300, false, true, 1, 1, false, false, 0.75, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"m_n_beyond_a_tile", 101, 70, 5, true, false, 2, 1, false, false, 1, 0.5, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"strided_batch_gaps", 6, 10, 7, false, false, 1, 3, false, false, 1, -0.5, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"strided_batch_reuse_a", 5, 4, 6, true, true, 0, 3, false, true, 2, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"pointer_array", 8, 3, 9, false, true, 2, 2, true, false, 1, 1, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"bias_row_relu", 17, 12, 10, false, false, 0, 2, false, false, 1.5, 0, OCD_GEMM_BIAS_ROW, CUDNN_ACTIVATION_RELU, 0, 0},
    {"bias_col_sigmoid", 12, 17, 10, true, false, 1, 1, false, false, 1, 0.25, OCD_GEMM_BIAS_COL, CUDNN_ACTIVATION_SIGMOID, 0, 0},
    {"tanh", 9, 9, 9, false, false, 0, 1, false, false, 1, 0, OCD_GEMM_BIAS_NONE, CUDNN_ACTIVATION_TANH, 0, 0},
    {"clipped_relu_bias_row", 9, 8, 7, false, true, 0, 1, true, false, 1, 0.5, OCD_GEMM_BIAS_ROW, CUDNN_ACTIVATION_CLIPPED_RELU, 0.5, 0},
    {"elu_bias_col", 8, 9, 7, true, true, 0, 2, false, false, 1, 0, OCD_GEMM_BIAS_COL, CUDNN_ACTIVATION_ELU, 0.3, 0},
    {"swish", 8, 8, 8, false, false, 0, 1, false, false, 1, 0, OCD_GEMM_BIAS_NONE, CUDNN_ACTIVATION_SWISH, 0, 0},
    /* whole 16-byte chunks everywhere (sizes, leading dimensions, batch strides: multiples of 8):
       the tensor-core entry serves these, in partial tiles, several K tiles and batches */
    {"chunks_nn", 72, 40, 48, false, false, 8, 1, false, false, 1, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"chunks_tn_long_k", 64, 72, 264, true, false, 0, 1, false, false, 0.5, 0.5, OCD_GEMM_BIAS_NONE, -1, 0, 0},
    {"chunks_nt_batch", 24, 136, 40, false, true, 8, 2, false, false, 1, 0, OCD_GEMM_BIAS_ROW, -1, 0, 0},
    {"chunks_tt_bias_relu", 48, 16, 72, true, true, 0, 3, false, false, 1, 0, OCD_GEMM_BIAS_COL, CUDNN_ACTIVATION_RELU, 0, 0},
    {"chunks_tn_reuse_a", 8, 8, 8, true, false, 0, 2, false, true, 1, 0, OCD_GEMM_BIAS_NONE, CUDNN_ACTIVATION_TANH, 0, 0},
    /* the epilogues cuBLASLt computes itself (a bias per row, ReLU, both), on 16-byte aligned
       matrices, with a prior C, and in strided batches */
    {"chunks_bias_row_relu_beta", 64, 48, 40, false, true, 8, 1, false, false, 1, 0.5, OCD_GEMM_BIAS_ROW, CUDNN_ACTIVATION_RELU, 0, 0},
    {"chunks_relu_batch", 40, 24, 32, true, false, 8, 2, false, false, 0.5, 0, OCD_GEMM_BIAS_NONE, CUDNN_ACTIVATION_RELU, 0, 0},
    /* aligned matrices, the bias one element into its buffer (attention's biases lie in one
       packed weight buffer): cuBLASLt must refuse it, its epilogue may read the bias 16 bytes
       at a time */
    {"chunks_bias_row_unaligned", 64, 48, 40, false, true, 8, 1, false, false, 1, 0, OCD_GEMM_BIAS_ROW,
     CUDNN_ACTIVATION_RELU, 0, 1},
};

#define NGCASES (sizeof gcases / sizeof gcases[0])

/* Cases whose activation is a pointwise step (parameters of ref_pw_mode_varied). */
struct pw_case {
    struct gcase g;
    cudnnPointwiseMode_t mode;
};

static const struct pw_case pw_cases[] = {
    {{"gelu_bias_row_beta", 9, 7, 5, false, false, 1, 1, false, false, 1, 0.5, OCD_GEMM_BIAS_ROW, -1, 0, 0},
     CUDNN_POINTWISE_GELU_FWD},
    {{"softplus_bias_col_batch", 7, 9, 6, true, true, 0, 2, false, false, 1.5, 0, OCD_GEMM_BIAS_COL, -1, 0, 0},
     CUDNN_POINTWISE_SOFTPLUS_FWD},
    {{"relu_clipped_sloped_pointers", 8, 5, 7, false, true, 0, 2, true, false, 1, 0, OCD_GEMM_BIAS_NONE, -1, 0, 0},
     CUDNN_POINTWISE_RELU_FWD},
    {{"swish_bias_row", 6, 6, 9, true, false, 0, 1, false, false, 1, 0, OCD_GEMM_BIAS_ROW, -1, 0, 0},
     CUDNN_POINTWISE_SWISH_FWD},
    {{"chunks_tn_gelu_bias_row", 64, 40, 72, true, false, 8, 2, false, false, 1, 0, OCD_GEMM_BIAS_ROW, -1, 0, 0},
     CUDNN_POINTWISE_GELU_FWD},
    {{"tanh_bias_col", 7, 6, 5, false, false, 0, 1, false, false, 1, 0, OCD_GEMM_BIAS_COL, -1, 0, 0},
     CUDNN_POINTWISE_TANH_FWD},
    {{"chunks_sigmoid_batch", 16, 24, 32, false, true, 8, 2, false, false, 1, 0.5, OCD_GEMM_BIAS_NONE, -1, 0, 0},
     CUDNN_POINTWISE_SIGMOID_FWD},
    {{"elu_bias_row_pointers", 6, 5, 4, true, true, 1, 2, true, false, 1, 0, OCD_GEMM_BIAS_ROW, -1, 0, 0},
     CUDNN_POINTWISE_ELU_FWD},
};

/* Host values of a stored buffer of `count` scalars: random in [-1, 1] rounded to the type, or
   poison (NaN) for a C that beta == 0 must not read. */
static double *values(cudnnDataType_t t, int64_t count, bool poison)
{
    double *v = malloc(sizeof(double) * (size_t)count);
    void *typed = malloc(tdtype_size(t) * (size_t)count);
    if (poison) memset(typed, 0xFF, tdtype_size(t) * (size_t)count);
    else tfill_random(t, typed, count, -1, 1);
    for (int64_t i = 0; i < count; i++) v[i] = tload(t, typed, i);
    free(typed);
    return v;
}

/* A buffer on the backend under test holding v in type t. */
static void *upload(cudnnDataType_t t, const double *v, int64_t count, bool poison)
{
    void *typed = malloc(tdtype_size(t) * (size_t)count);
    if (poison) memset(typed, 0xFF, tdtype_size(t) * (size_t)count);
    else
        for (int64_t i = 0; i < count; i++) tstore(t, typed, i, v[i]);
    void *buf = tbuf_from(typed, tdtype_size(t) * (size_t)count);
    free(typed);
    return buf;
}

/* Tolerance of a result: the type's, for sums of many products (4x), at least half's when the
   products are rounded to TF32. */
static double tolerance(const struct gtype *t)
{
    double tol = ttolerance(t->c);
    if (t->compute == OCD_GEMM_COMPUTE_TF32 && tol < ttolerance(CUDNN_DATA_HALF)) tol = ttolerance(CUDNN_DATA_HALF);
    return 4 * tol;
}

/* What an entry must do with a case. */
enum expect {
    MAY_RUN, /* run it, or decline with NOT_SUPPORTED (entries ahead of the fallback) */
    MUST_RUN /* the backend's fallback */
};

/* Runs one case of one type, with the pointwise activation pw (NULL: the case's activation
   mode, if any), through the entry forced by `disable`; true when it ran. */
static bool run_case(const struct gtype *t, const struct gcase *c, const struct ref_pw *pw, const char *disable,
                     enum expect expect)
{
    struct ocd_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.m = c->m, p.n = c->n, p.k = c->k, p.trans_a = c->ta, p.trans_b = c->tb;
    int64_t arows = c->ta ? c->k : c->m, acols = c->ta ? c->m : c->k;
    int64_t brows = c->tb ? c->n : c->k, bcols = c->tb ? c->k : c->n;
    p.lda = arows + c->pad, p.ldb = brows + c->pad, p.ldc = c->m + c->pad;
    p.batch = c->batch, p.pointer_array = c->pointers;
    /* strided batches leave a gap between matrices (C's must stay untouched); A's and B's of
       whole 16-byte chunks */
    int64_t amat = p.lda * acols, bmat = p.ldb * bcols, cmat = p.ldc * c->n;
    p.stride_a = c->reuse_a ? 0 : amat + 8, p.stride_b = bmat + 16, p.stride_c = cmat + 3;
    p.ab_type = t->ab, p.c_type = t->c, p.compute = t->compute;
    p.alpha = c->alpha, p.beta = c->beta;
    p.bias = c->bias;
    p.act_on = c->act >= 0;
    if (p.act_on) {
        p.act.mode = (cudnnActivationMode_t)c->act;
        p.act.nan_opt = CUDNN_NOT_PROPAGATE_NAN;
        p.act.coef = c->coef;
        p.act.swish_beta = 1.25;
    }
    p.pw_act_on = pw != NULL;
    if (pw != NULL) {
        p.pw_act.mode = pw->mode, p.pw_act.b = -1;
        p.pw_act.alpha1 = pw->alpha1, p.pw_act.alpha2 = pw->alpha2, p.pw_act.propagate_nan = pw->propagate_nan;
        p.pw_act.lower_clip = pw->lower_clip, p.pw_act.upper_clip = pw->upper_clip, p.pw_act.clip_slope = pw->slope;
        p.pw_act.elu_alpha = pw->elu_alpha, p.pw_act.softplus_beta = pw->softplus_beta;
        p.pw_act.swish_beta = pw->swish_beta;
    }
    int64_t batch = c->batch;
    /* strided: one buffer each; pointers: one matrix (with its gap) per batch */
    int64_t aspan = c->pointers ? amat : (batch - 1) * p.stride_a + amat;
    int64_t bspan = c->pointers ? bmat : (batch - 1) * p.stride_b + bmat;
    int64_t cspan = c->pointers ? cmat : (batch - 1) * p.stride_c + cmat;
    int nbuf = c->pointers ? c->batch : 1;
    int64_t nbias = c->bias == OCD_GEMM_BIAS_ROW ? c->m : c->n;
    double *av[4], *bv[4], *cv[4], *want[4], *bias_buf = values(t->c, nbias + c->bias_off, false);
    void *ad[4], *bd[4], *cd[4];
    void *biasd = c->bias != OCD_GEMM_BIAS_NONE ? upload(t->c, bias_buf, nbias + c->bias_off, false) : NULL;
    const double *bias = bias_buf + c->bias_off;
    const void *bias_at = biasd ? (const char *)biasd + (size_t)c->bias_off * tdtype_size(t->c) : NULL;
    for (int i = 0; i < nbuf; i++) {
        av[i] = values(t->ab, aspan, false), bv[i] = values(t->ab, bspan, false);
        cv[i] = values(t->c, cspan, c->beta == 0);
        ad[i] = upload(t->ab, av[i], aspan, false), bd[i] = upload(t->ab, bv[i], bspan, false);
        cd[i] = upload(t->c, cv[i], cspan, c->beta == 0);
        want[i] = malloc(sizeof(double) * (size_t)cspan);
        memcpy(want[i], cv[i], sizeof(double) * (size_t)cspan);
    }
    struct ref_gemm r = {c->m, c->n, c->k, c->ta, c->tb, (int)p.lda, (int)p.ldb, (int)p.ldc, c->alpha, c->beta,
                         (enum ref_gemm_bias)c->bias, p.act_on, p.act.mode, false, c->coef, 1.25};
    for (int64_t b = 0; b < batch; b++) {
        int i = c->pointers ? (int)b : 0;
        int64_t ao = c->pointers ? 0 : b * p.stride_a, bo = c->pointers ? 0 : b * p.stride_b;
        int64_t co = c->pointers ? 0 : b * p.stride_c;
        ref_gemm(&r, av[i] + ao, bv[i] + bo, bias, want[i] + co);
        if (p.pw_act_on)
            for (int64_t j = 0; j < c->n; j++)
                for (int64_t e = 0; e < c->m; e++) want[i][co + e + j * p.ldc] = ref_pw(pw, want[i][co + e + j * p.ldc], 0);
    }
    const void *a = ad[0], *bb = bd[0];
    void *cc = cd[0];
    void *aptrs = NULL, *bptrs = NULL, *cptrs = NULL;
    if (c->pointers) {
        aptrs = tbuf_from(ad, sizeof(void *) * (size_t)nbuf), bptrs = tbuf_from(bd, sizeof(void *) * (size_t)nbuf);
        cptrs = tbuf_from(cd, sizeof(void *) * (size_t)nbuf);
        a = aptrs, bb = bptrs, cc = cptrs;
    }
    const char *saved = getenv("OPENCUDNN_DISABLE");
    char *prior = saved ? strdup(saved) : NULL;
    ocd_setenv("OPENCUDNN_DISABLE", disable);
    cudnnStatus_t st = gemm_entry()(test_handle(), &p, a, bb, cc, bias_at, "test_gemm");
    if (prior) ocd_setenv("OPENCUDNN_DISABLE", prior);
    else ocd_unsetenv("OPENCUDNN_DISABLE");
    free(prior);
    bool ran = st == CUDNN_STATUS_SUCCESS;
    if (!ran && (expect == MUST_RUN || st != CUDNN_STATUS_NOT_SUPPORTED))
        FAIL("case %s: status %s", c->name, cudnnGetErrorString(st));
    for (int i = 0; i < nbuf; i++) {
        if (ran) {
            void *got = malloc(tdtype_size(t->c) * (size_t)cspan);
            tbuf_download(got, cd[i], tdtype_size(t->c) * (size_t)cspan);
            char what[160];
            snprintf(what, sizeof what, "gemm %s (ab %d, c %d, compute %d) batch buffer %d", c->name, (int)t->ab,
                     (int)t->c, (int)t->compute, i);
            tcompare(t->c, got, want[i], cspan, tolerance(t), what);
            free(got);
        }
        free(av[i]), free(bv[i]), free(cv[i]), free(want[i]);
        tbuf_free(ad[i]), tbuf_free(bd[i]), tbuf_free(cd[i]);
    }
    if (c->pointers) tbuf_free(aptrs), tbuf_free(bptrs), tbuf_free(cptrs);
    if (biasd) tbuf_free(biasd);
    free(bias_buf);
    return ran;
}

TEST(gemm_every_entry)
{
    if (!CHECK(gemm_entry() != NULL)) return;
    bool cuda = strcmp(test_backend, "cuda") == 0;
    const char *const *entries = cuda ? cuda_entries : host_entries;
    int count = cuda ? (int)(sizeof cuda_entries / sizeof *cuda_entries) : (int)(sizeof host_entries / sizeof *host_entries);
    for (int e = 0; e < count; e++) {
        /* force entry e: switch off every other entry of the backend */
        char disable[256] = "";
        for (int o = 0; o < count; o++)
            if (o != e) snprintf(disable + strlen(disable), sizeof disable - strlen(disable), "%s%s",
                                 disable[0] ? "," : "", entries[o]);
        /* the CBLAS entry serves only what the calibration gives it, unless forced */
        const char *host_gemm = getenv("OPENCUDNN_HOST_GEMM");
        char *host_gemm_saved = host_gemm ? strdup(host_gemm) : NULL;
        if (strcmp(entries[e], "host:gemm_cblas") == 0) ocd_setenv("OPENCUDNN_HOST_GEMM", "cblas");
        /* twice on CUDA: cuBLASLt's second pass takes the algorithms its handle remembered from
           the first (cuda/cublaslt_matmul.h), each case's among all the others' */
        int ran = 0, ran_epilogue = 0;
        for (int pass = 0; pass < (cuda ? 2 : 1); pass++) {
            for (size_t t = 0; t < sizeof gtypes / sizeof gtypes[0]; t++)
                for (size_t c = 0; c < NGCASES + sizeof pw_cases / sizeof pw_cases[0]; c++) {
                    const bool pwc = c >= NGCASES;
                    const struct gcase *gc = pwc ? &pw_cases[c - NGCASES].g : &gcases[c];
                    const struct ref_pw pw =
                        ref_pw_mode_varied(pwc ? pw_cases[c - NGCASES].mode : CUDNN_POINTWISE_GELU_FWD);
                    const enum expect x = e == count - 1 ? MUST_RUN : MAY_RUN;
                    const bool r = run_case(&gtypes[t], gc, pwc ? &pw : NULL, disable, x);
                    ran += r;
                    ran_epilogue += r && (gc->bias != OCD_GEMM_BIAS_NONE || gc->act >= 0);
                }
        }
        if (host_gemm_saved) ocd_setenv("OPENCUDNN_HOST_GEMM", host_gemm_saved);
        else ocd_unsetenv("OPENCUDNN_HOST_GEMM");
        free(host_gemm_saved);
        if (ran == 0) FAIL("%s served no case", entries[e]);
        if (ran_epilogue == 0) FAIL("%s served no case with a bias or an activation", entries[e]);
    }
}

/* A float and a double GEMM large enough for the host's CBLAS entry to ask for its calibration
   (gemm_cblas.h: OCD_HOST_CBLAS_MIN_FLOPS), the choice left to the measurement: whichever engine
   wins, the result is the reference's; the calibration runs the built-in engine without a
   handle. */
TEST(gemm_calibrated_choice)
{
    if (!CHECK(gemm_entry() != NULL)) return;
    static const struct gcase big = {"calibrated", 64, 256, 576, false, true, 0, 1, false, false, 1, 0,
                                     OCD_GEMM_BIAS_NONE, -1, 0, 0};
    static const struct gtype types[] = {{CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, OCD_GEMM_COMPUTE_F32},
                                         {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, OCD_GEMM_COMPUTE_F64}};
    const char *host_gemm = getenv("OPENCUDNN_HOST_GEMM");
    char *saved = host_gemm ? strdup(host_gemm) : NULL;
    ocd_unsetenv("OPENCUDNN_HOST_GEMM");
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) CHECK(run_case(&types[t], &big, NULL, "", MUST_RUN));
    if (saved) ocd_setenv("OPENCUDNN_HOST_GEMM", saved);
    free(saved);
}

/* Bad problems: BAD_PARAM, and C left as it was. */
TEST(gemm_bad_input)
{
    if (!CHECK(gemm_entry() != NULL)) return;
    struct ocd_gemm_problem good;
    memset(&good, 0, sizeof good);
    good.m = 4, good.n = 3, good.k = 2, good.lda = 4, good.ldb = 2, good.ldc = 4, good.batch = 1;
    good.ab_type = good.c_type = CUDNN_DATA_FLOAT, good.compute = OCD_GEMM_COMPUTE_F32, good.alpha = 1;
    float host_a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, host_b[6] = {1, 1, 1, 1, 1, 1}, host_c[12], bias_v[4] = {0};
    for (int i = 0; i < 12; i++) host_c[i] = 3;
    void *a = tbuf_from(host_a, sizeof host_a), *b = tbuf_from(host_b, sizeof host_b);
    void *c = tbuf_from(host_c, sizeof host_c), *bias = tbuf_from(bias_v, sizeof bias_v);
    for (int v = 0; v < 14; v++) {
        struct ocd_gemm_problem p = good;
        const void *pa = a, *pbias = NULL;
        switch (v) {
        case 0: p.m = 0; break;
        case 1: p.k = -1; break;
        case 2: p.n = (int64_t)1 << 31; break;
        case 3: p.lda = 3; break;                          /* below m */
        case 4: p.trans_b = true; break;                   /* ldb 2 below n */
        case 5: p.ldc = 2; break;
        case 6: p.batch = 2, p.stride_c = 11; break;       /* output matrices overlap */
        case 7: p.c_type = CUDNN_DATA_HALF; break;         /* float into half */
        case 8: p.compute = OCD_GEMM_COMPUTE_F64; break;   /* float data, double compute */
        case 9: pa = NULL; break;
        case 10: p.bias = OCD_GEMM_BIAS_ROW; break;        /* its pointer missing */
        case 11: p.pw_act_on = true, p.pw_act.mode = CUDNN_POINTWISE_ADD; break; /* not a unary forward mode */
        case 12:                                                                 /* two activations */
            p.pw_act_on = p.act_on = true, p.pw_act.mode = CUDNN_POINTWISE_GELU_FWD;
            p.act.mode = CUDNN_ACTIVATION_RELU;
            break;
        default: pbias = bias; break;                      /* a pointer without a mode */
        }
        CHECK_STATUS(gemm_entry()(test_handle(), &p, pa, b, c, pbias, "test_gemm"), CUDNN_STATUS_BAD_PARAM);
        float got[12];
        tbuf_download(got, c, sizeof got);
        for (int i = 0; i < 12; i++)
            if (got[i] != 3) {
                FAIL("variant %d wrote C", v);
                break;
            }
    }
    tbuf_free(a), tbuf_free(b), tbuf_free(c), tbuf_free(bias);
}
