/* conv_harness.c: the convolution API tests' problems and the check of a direction through
   every algorithm (see conv_harness.h). */
#include "conv_harness.h"
#include "desc_util.h"

#include <stdlib.h>
#include <string.h>

/* ---- shapes and configurations ------------------------------------------------------------------ */

const struct shape shapes[] = {
    {"3x3_pad1_odd", 2, 2, 4, 6, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"stride2_asymmetric", 2, 1, 3, 4, 1, {7, 6}, {3, 2}, {1, 0}, {2, 1}, {1, 1}, false},
    {"dilated", 2, 2, 2, 3, 1, {8, 7}, {3, 3}, {2, 1}, {1, 1}, {2, 3}, false},
    {"groups3", 2, 2, 6, 9, 3, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"depthwise_stride2", 2, 1, 5, 5, 5, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {1, 1}, false},
    {"1x1", 2, 3, 7, 5, 1, {4, 3}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false},
    {"7x7_large_filter", 2, 1, 2, 3, 1, {9, 9}, {7, 7}, {3, 3}, {1, 1}, {1, 1}, false},
    {"convolution_mode", 2, 1, 3, 2, 1, {6, 5}, {3, 2}, {1, 1}, {1, 1}, {1, 1}, true},
    {"single_output", 2, 1, 1, 1, 1, {3, 3}, {3, 3}, {0, 0}, {1, 1}, {1, 1}, false},
    {"gemm_block_edges", 2, 2, 32, 20, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"wide_n", 2, 1, 4, 264, 1, {3, 2}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false},
    {"3d", 3, 1, 3, 4, 1, {4, 5, 4}, {3, 3, 2}, {1, 1, 0}, {1, 2, 1}, {1, 1, 1}, false},
    {"3d_groups_dilated_conv", 3, 2, 4, 4, 2, {5, 4, 5}, {2, 3, 3}, {1, 1, 1}, {1, 1, 2}, {2, 1, 1}, true},
};

/* int8 configurations need C and K multiples of 4 (32 for INT8x32), 2-D and unit dilation. */
const struct shape int8_shapes[] = {
    {"int8_3x3", 2, 2, 4, 8, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"int8_stride2_groups", 2, 1, 8, 8, 2, {6, 7}, {3, 3}, {1, 0}, {2, 2}, {1, 1}, true},
};
const struct shape int8x32_shape = {"int8x32", 2, 1, 32, 32, 1, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};

#define F CUDNN_DATA_FLOAT
const struct config float_configs[] = {
    {"float", F, F, F, F, CUDNN_DEFAULT_MATH, TV_NCHW, false},
    {"float_tf32", F, F, F, F, CUDNN_TENSOR_OP_MATH, TV_NCHW, false},
    {"double", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH, TV_NCHW, false},
    {"pseudo_half", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, F, CUDNN_DEFAULT_MATH, TV_NCHW, false},
    {"true_half", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DEFAULT_MATH, TV_NCHW, false},
    {"bfloat16", CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, F, CUDNN_DEFAULT_MATH, TV_NCHW, false},
};
const struct config int8_configs[] = {
    {"int8", CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, TV_NHWC, false},
    {"int8_ext", CUDNN_DATA_INT8, CUDNN_DATA_INT8, F, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, TV_NHWC, false},
    {"uint8", CUDNN_DATA_UINT8, CUDNN_DATA_INT8, CUDNN_DATA_UINT8, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, TV_NHWC, false},
    {"int8x4", CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x4, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, TV_NCHW_VECT, false},
    {"int8x4_ext", CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x4, F, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, TV_NCHW_VECT, false},
    /* UINT8_CONFIG and UINT8x4_CONFIG as the 8.2 table has them: unsigned data, a signed output */
    {"uint8_int8y", CUDNN_DATA_UINT8, CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, TV_NHWC, false},
    {"uint8x4", CUDNN_DATA_UINT8x4, CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x4, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH,
     TV_NCHW_VECT, false},
};
const struct config int8x32_config = {"int8x32", CUDNN_DATA_INT8x32, CUDNN_DATA_INT8x32, CUDNN_DATA_INT8x32,
                                             CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, TV_NCHW_VECT, false};

/* Shapes for the CUDA backend's tensor-core entries: channels and filters per group multiples of
   8 (the implicit-GEMM kernels' 16-byte chunks), x and y in one packed layout (the cuBLAS
   entries), small enough for the host pass. tc_channel_tail is what the kernels decline and
   im2col + cuBLAS serves; tc_split_k makes the filter gradient split its long K. */
const struct shape tc_shapes[] = {
    {"tc_3x3", 2, 2, 16, 24, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"tc_stride2_groups2", 2, 3, 32, 16, 2, {7, 8}, {3, 3}, {1, 1}, {2, 2}, {1, 1}, false},
    {"tc_dilated_convolution_mode", 2, 2, 8, 40, 1, {10, 9}, {3, 2}, {2, 1}, {1, 2}, {2, 3}, true},
    {"tc_1x1", 2, 3, 24, 16, 1, {5, 7}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false},
    {"tc_3d", 3, 2, 8, 16, 1, {4, 5, 6}, {3, 2, 3}, {1, 0, 1}, {1, 2, 1}, {1, 1, 2}, true},
    {"tc_channel_tail", 2, 2, 12, 10, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"tc_split_k", 2, 4, 8, 8, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    /* deep enough (N*P*Q = 4489) for the cuBLAS NCHW filter gradient to cut K in two chunks, the
       second shorter */
    {"tc_wgrad_chunks", 2, 1, 8, 8, 1, {67, 67}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    /* a 1x1 filter with stride 2 (ResNet's downsampling): three of backward data's four stride
       phases have no taps (dx zeroed at beta 0, scaled otherwise) */
    {"tc_1x1_stride2", 2, 2, 16, 8, 1, {7, 6}, {1, 1}, {0, 0}, {2, 2}, {1, 1}, false},
    /* backward data's stride phases in CONVOLUTION mode: each phase reads its taps mirrored,
       through a filter view with negative strides */
    {"tc_stride2_convolution_mode", 2, 2, 16, 16, 1, {9, 8}, {3, 3}, {1, 0}, {2, 1}, {1, 1}, true},
};

#define F CUDNN_DATA_FLOAT
const struct config tc_configs[] = {
    {"half_nhwc", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, F, CUDNN_DEFAULT_MATH, TV_NHWC, true},
    {"bfloat16_nhwc", CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, F, CUDNN_DEFAULT_MATH, TV_NHWC, true},
    {"float_nhwc", F, F, F, F, CUDNN_DEFAULT_MATH, TV_NHWC, true},
    {"half_nchw", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, F, CUDNN_TENSOR_OP_MATH, TV_NCHW, true},
    {"float_nchw_fma", F, F, F, F, CUDNN_FMA_MATH, TV_NCHW, true},
    {"double_nhwc", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH,
     TV_NHWC, true},
};
#undef F

const size_t nshapes = TLEN(shapes), nfloat_configs = TLEN(float_configs), nint8_shapes = TLEN(int8_shapes),
             nint8_configs = TLEN(int8_configs), ntc_shapes = TLEN(tc_shapes), ntc_configs = TLEN(tc_configs);

/* ---- descriptors -------------------------------------------------------------------------------- */

bool make_filter(struct tfilter *f, cudnnDataType_t dtype, cudnnTensorFormat_t format, int rank, const int *dims)
{
    memset(f, 0, sizeof *f);
    tview_init(&f->v, dtype, rank, dims,
               format == CUDNN_TENSOR_NHWC ? TV_NHWC : format == CUDNN_TENSOR_NCHW_VECT_C ? TV_NCHW_VECT : TV_NCHW);
    return CHECK_OK(cudnnCreateFilterDescriptor(&f->desc)) &&
           CHECK_OK(cudnnSetFilterNdDescriptor(f->desc, dtype, format, rank, dims));
}

void free_filter(struct tfilter *f)
{
    tview_destroy(&f->v);
    cudnnDestroyFilterDescriptor(f->desc);
}

bool is_int(cudnnDataType_t t)
{
    return t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_DOUBLE && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16;
}

int tconv_dims(const struct ref_conv *rc, int xd[5], int wd[5], int yd[5])
{
    xd[0] = rc->n, xd[1] = rc->c, wd[0] = rc->k, wd[1] = rc->c / rc->groups, yd[0] = rc->n, yd[1] = rc->k;
    for (int d = 0; d < rc->nsp; d++) xd[d + 2] = rc->in[d], wd[d + 2] = rc->filt[d], yd[d + 2] = rc->out[d];
    return rc->nsp + 2;
}

void tconv_views(const struct ref_conv *rc, cudnnDataType_t t, int layout, int wlayout, struct tview *x,
                 struct tview *w, struct tview *y)
{
    int xd[5], wd[5], yd[5];
    const int rank = tconv_dims(rc, xd, wd, yd);
    if (x) tview_init(x, t, rank, xd, layout);
    if (w) tview_init(w, t, rank, wd, wlayout);
    if (y) tview_init(y, t, rank, yd, layout);
}

bool make_problem(struct problem *p, const struct shape *sh, const struct config *cf, int variant)
{
    memset(p, 0, sizeof *p);
    p->cf = cf;
    struct ref_conv *r = &p->r;
    r->nsp = sh->nsp, r->n = sh->n, r->c = sh->c, r->k = sh->k, r->groups = sh->groups, r->convolution = sh->convolution;
    for (int d = 0; d < sh->nsp; d++) {
        r->in[d] = sh->in[d], r->filt[d] = sh->filt[d], r->pad[d] = sh->pad[d];
        r->stride[d] = sh->stride[d], r->dil[d] = sh->dil[d];
    }
    if (!CHECK(ref_conv_out_dims(r))) return false;
    int xd[5], wd[5], yd[5];
    const int rank = tconv_dims(r, xd, wd, yd);
    static const int rot[3] = {TV_NCHW, TV_NHWC, TV_PADDED};
    int xl = cf->layout, yl = cf->layout;
    cudnnTensorFormat_t wf = cf->layout == TV_NHWC        ? CUDNN_TENSOR_NHWC
                             : cf->layout == TV_NCHW_VECT ? CUDNN_TENSOR_NCHW_VECT_C
                                                          : CUDNN_TENSOR_NCHW;
    if (!is_int(cf->x)) {
        if (!cf->fixed) xl = rot[variant % 3], yl = rot[(variant + 1) % 3];
        wf = variant % 2 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    } else if (cf->layout == TV_NCHW_VECT && cf->y == CUDNN_DATA_FLOAT) {
        yl = variant % 2 ? TV_NHWC : TV_NCHW;
    }
    tview_init(&p->x, cf->x, rank, xd, xl);
    tview_init(&p->y, cf->y, rank, yd, yl);
    int pad[3], stride[3], dil[3];
    for (int d = 0; d < sh->nsp; d++) pad[d] = r->pad[d], stride[d] = r->stride[d], dil[d] = r->dil[d];
    return make_filter(&p->w, cf->w, wf, rank, wd) && CHECK_OK(cudnnCreateConvolutionDescriptor(&p->conv)) &&
           CHECK_OK(cudnnSetConvolutionNdDescriptor(p->conv, sh->nsp, pad, stride, dil,
                                                    sh->convolution ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                                    cf->compute)) &&
           CHECK_OK(cudnnSetConvolutionGroupCount(p->conv, sh->groups)) &&
           CHECK_OK(cudnnSetConvolutionMathType(p->conv, cf->math));
}

void free_problem(struct problem *p)
{
    tview_destroy(&p->x);
    tview_destroy(&p->y);
    free_filter(&p->w);
    cudnnDestroyConvolutionDescriptor(p->conv);
}

/* ---- calls -------------------------------------------------------------------------------------- */

int algo_count(enum dir d)
{
    return d == FWD ? CUDNN_CONVOLUTION_FWD_ALGO_COUNT : d == BWD_DATA ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                                                                       : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
}

int heuristic(const struct problem *p, enum dir d, int requested, struct perf *out)
{
    cudnnHandle_t h = test_handle();
    int n = -1;
    if (d == FWD) {
        cudnnConvolutionFwdAlgoPerf_t r[16];
        CHECK_OK(cudnnGetConvolutionForwardAlgorithm_v7(h, p->x.desc, p->w.desc, p->conv, p->y.desc, requested, &n, r));
        COPY_PERF(out, r, n);
    } else if (d == BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t r[16];
        CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p->w.desc, p->y.desc, p->conv, p->x.desc, requested, &n, r));
        COPY_PERF(out, r, n);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t r[16];
        CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p->x.desc, p->y.desc, p->conv, p->w.desc, requested, &n, r));
        COPY_PERF(out, r, n);
    }
    return n;
}

cudnnStatus_t workspace_size(const struct problem *p, enum dir d, int algo, size_t *bytes)
{
    cudnnHandle_t h = test_handle();
    if (d == FWD)
        return cudnnGetConvolutionForwardWorkspaceSize(h, p->x.desc, p->w.desc, p->conv, p->y.desc, algo, bytes);
    if (d == BWD_DATA)
        return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p->w.desc, p->y.desc, p->conv, p->x.desc, algo, bytes);
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p->x.desc, p->y.desc, p->conv, p->w.desc, algo, bytes);
}

cudnnStatus_t execute(const struct problem *p, enum dir d, int algo, void *x, void *w, void *y, void *ws,
                      size_t ws_bytes, double alpha, double beta)
{
    cudnnHandle_t h = test_handle();
    float af = (float)alpha, bf = (float)beta;
    bool dbl = p->cf->x == CUDNN_DATA_DOUBLE;
    const void *a = dbl ? (const void *)&alpha : &af, *b = dbl ? (const void *)&beta : &bf;
    if (d == FWD)
        return cudnnConvolutionForward(h, a, p->x.desc, x, p->w.desc, w, p->conv, algo, ws, ws_bytes, b, p->y.desc, y);
    if (d == BWD_DATA)
        return cudnnConvolutionBackwardData(h, a, p->w.desc, w, p->y.desc, y, p->conv, algo, ws, ws_bytes, b, p->x.desc, x);
    return cudnnConvolutionBackwardFilter(h, a, p->x.desc, x, p->y.desc, y, p->conv, algo, ws, ws_bytes, b, p->w.desc, w);
}

double *random_values(cudnnDataType_t t, long n, double lo, double hi)
{
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    unsigned char tmp[8];
    for (long i = 0; i < n; i++) {
        tstore(t, tmp, 0, trand_uniform(lo, hi));
        v[i] = tload(t, tmp, 0);
    }
    return v;
}

double saturate_for(cudnnDataType_t t, double v)
{
    double lo = t == CUDNN_DATA_UINT8 || t == CUDNN_DATA_UINT8x4 ? 0 : -128, hi = lo == 0 ? 255 : 127;
    if (!is_int(t)) return v;
    return v < lo ? lo : v > hi ? hi : v;
}

/* ---- the check of a direction ------------------------------------------------------------------- */

/* The tolerance of an algorithm's result: the Winograd algorithms' transforms add rounding
   (tests/conv_winograd.c bounds it), so they get 8 times the direct methods' tolerance. */
static double algo_tolerance(enum dir d, int algo, cudnnDataType_t x, cudnnDataType_t out, cudnnMathType_t math)
{
    bool winograd = d == FWD ? algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD || algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED
                    : d == BWD_DATA ? algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
                                          algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED
                                    : algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
    return tconv_tolerance(x, out, math) * (winograd ? 8 : 1);
}

/* Checks every algorithm of direction d on problem p against the reference. */
void check_direction(struct problem *p, enum dir d, int only, const char *label)
{
    const struct config *cf = p->cf;
    long nx = ref_conv_x_count(&p->r), nw = ref_conv_w_count(&p->r), ny = ref_conv_y_count(&p->r);
    bool int8 = is_int(cf->x);
    double lo = int8 ? (cf->x == CUDNN_DATA_UINT8 ? 0 : -4) : -1, hi = int8 ? 4 : 1;
    double *x = random_values(cf->x, nx, lo, hi), *w = random_values(cf->w, nw, int8 ? -3 : -1, int8 ? 3 : 1);
    double *y = random_values(cf->y, ny, -1, 1);
    long ndst = d == FWD ? ny : d == BWD_DATA ? nx : nw;
    cudnnDataType_t dst_type = d == FWD ? cf->y : d == BWD_DATA ? cf->x : cf->w;
    double *old = random_values(dst_type, ndst, int8 ? -20 : -1, int8 ? 20 : 1), *want = malloc(sizeof *want * (size_t)ndst);
    double alpha = int8 && !is_int(cf->y) ? 1.0 : int8 ? 0.25 : 0.75;
    if (d == FWD) ref_conv_fwd(&p->r, x, w, want);
    else if (d == BWD_DATA) ref_conv_bwd_data(&p->r, y, w, want);
    else ref_conv_bwd_filter(&p->r, x, y, want);
    void *dx = tview_upload(&p->x, x), *dw = tview_upload(&p->w.v, w), *dy = tview_upload(&p->y, y);
    const struct tview *dst_view = d == FWD ? &p->y : d == BWD_DATA ? &p->x : &p->w.v;
    size_t dst_bytes = tview_bytes(dst_view);
    double *got = malloc(sizeof *got * (size_t)ndst);
    double *expect = malloc(sizeof *expect * (size_t)ndst);
    struct perf perf[16];
    int n = heuristic(p, d, 16, perf), ran = 0;
    CHECK(n == algo_count(d));
    for (int i = 0; i < n; i++) {
        if (only >= 0 && perf[i].algo != only) continue;
        char what[256];
        snprintf(what, sizeof what, "%s algo %d", label, perf[i].algo);
        if (perf[i].status != CUDNN_STATUS_SUCCESS) {
            /* listed as not supported by the registry: execution must agree and write nothing */
            CHECK(perf[i].status == CUDNN_STATUS_NOT_SUPPORTED);
            tbuf_poison(d == FWD ? dy : d == BWD_DATA ? dx : dw, dst_bytes);
            if (!CHECK_STATUS(execute(p, d, perf[i].algo, dx, dw, dy, NULL, 0, 1, 0), CUDNN_STATUS_NOT_SUPPORTED))
                printf("      (%s)\n", what);
            continue;
        }
        size_t ws_bytes = (size_t)-1;
        CHECK_OK(workspace_size(p, d, perf[i].algo, &ws_bytes));
        CHECK(ws_bytes == perf[i].memory);
        void *ws = ws_bytes ? tbuf_alloc(ws_bytes) : NULL;
        for (int variant = 0; variant < 2; variant++) {
            double beta = variant ? 0.5 : 0;
            void *dst = d == FWD ? dy : d == BWD_DATA ? dx : dw;
            if (beta != 0) tview_store(dst_view, dst, old);
            else tbuf_poison(dst, dst_bytes); /* NaN in the output must not leak through beta = 0 */
            for (long e = 0; e < ndst; e++) expect[e] = saturate_for(dst_type, alpha * want[e] + beta * old[e]);
            if (!CHECK_OK(execute(p, d, perf[i].algo, dx, dw, dy, ws, ws_bytes, alpha, beta))) {
                printf("      (%s)\n", what);
                continue;
            }
            tview_download(dst_view, dst, got);
            snprintf(what, sizeof what, "%s algo %d beta %g", label, perf[i].algo, beta);
            tview_gaps_intact(dst_view, dst, what);
            tcompare(CUDNN_DATA_DOUBLE, got, expect, ndst, algo_tolerance(d, perf[i].algo, cf->x, dst_type, perf[i].math), what);
        }
        if (ws) tbuf_free(ws);
        ran++;
    }
    if (getenv("CONV_VERBOSE")) printf("      %s: %d of %d ran\n", label, ran, n);
    if (!CHECK(ran > 0)) printf("      (%s: no algorithm ran)\n", label);
    tbuf_free(dx), tbuf_free(dw), tbuf_free(dy);
    free(x), free(w), free(y), free(old), free(want), free(got), free(expect);
}

struct subset subset_start(void)
{
    const char *v = getenv("OPENCUDNN_TEST_SUBSET");
    struct subset s = {v ? strtoull(v, NULL, 10) : 1, 0};
    if (s.every > 1) s.pick = trand_u64() % s.every;
    return s;
}

bool subset_keeps(const struct subset *s, size_t index)
{
    return s->every <= 1 || index % s->every == s->pick;
}

void run_shapes(enum dir d, const struct shape *shp, size_t nshp, const struct config *cfs, size_t ncfs)
{
    static const char *const dirs[] = {"fwd", "bwd_data", "bwd_filter"};
    const struct subset sub = subset_start();
    for (size_t s = 0; s < nshp; s++) {
        for (size_t c = 0; c < ncfs; c++) {
            if (!subset_keeps(&sub, s * ncfs + c)) continue;
            struct problem p;
            char label[160];
            snprintf(label, sizeof label, "%s %s %s", dirs[d], shp[s].name, cfs[c].name);
            if (make_problem(&p, &shp[s], &cfs[c], (int)(s + c))) check_direction(&p, d, -1, label);
            free_problem(&p);
        }
    }
}

/* ---- switches, logs and patterns ---------------------------------------------------------------- */

struct disable_list disable_saved(void)
{
    struct disable_list d;
    const char *v = getenv("OPENCUDNN_DISABLE");
    snprintf(d.value, sizeof d.value, "%s", v ? v : "");
    return d;
}

void disable_restore(const struct disable_list *d)
{
    ocd_setenv("OPENCUDNN_DISABLE", d->value);
}

static void capture_impl(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    struct ran_impl *r = udata;
    const char *runs = strstr(msg, " runs ");
    const char *start = NULL; /* the last ": " before " runs " */
    for (const char *at = msg; runs && (at = strstr(at, ": ")) != NULL && at < runs; at++) start = at;
    if (start) snprintf(r->name, sizeof r->name, "%.*s", (int)(runs - start - 2), start + 2);
    static const char epilogue[] = "cuBLAS fused forward epilogue: ";
    const char *ep = strstr(msg, epilogue);
    if (ep) snprintf(r->epilogue, sizeof r->epilogue, "%s", ep + strlen(epilogue));
}

void ran_impl_start(struct log_hook *hook, struct ran_impl *r)
{
    r->name[0] = r->epilogue[0] = '\0';
    log_hook_install(hook, CUDNN_SEV_INFO_EN, r, capture_impl);
}

void ran_impl_stop(struct log_hook *hook)
{
    log_hook_restore(hook);
}

cudnnStatus_t execute_capturing(const struct problem *p, enum dir d, int algo, void *dx, void *dw, void *dy, void *ws,
                                size_t ws_bytes, struct ran_impl *r)
{
    struct log_hook hook;
    ran_impl_start(&hook, r);
    cudnnStatus_t status = execute(p, d, algo, dx, dw, dy, ws, ws_bytes, 1, 0);
    ran_impl_stop(&hook);
    return status;
}

bool untouched(const void *dev, size_t bytes)
{
    unsigned char *host = malloc(bytes);
    tbuf_download(host, dev, bytes);
    bool same = true;
    for (size_t i = 0; i < bytes; i++) same &= host[i] == 0xAB;
    free(host);
    return same;
}

void *patterned(size_t bytes)
{
    unsigned char *host = malloc(bytes);
    memset(host, 0xAB, bytes);
    void *dev = tbuf_from(host, bytes);
    free(host);
    return dev;
}

void tconv_run_init(struct tconv_run *r, const struct ref_conv *rc, cudnnDataType_t t)
{
    const size_t es = tdtype_size(t);
    r->nx = ref_conv_x_count(rc), r->nw = ref_conv_w_count(rc), r->ny = ref_conv_y_count(rc);
    r->x = tview_random(r->nx, -1, 1), r->w = tview_random(r->nw, -1, 1), r->dy = tview_random(r->ny, -1, 1);
    r->px = tvalues_upload(t, r->x, r->nx), r->pw = tvalues_upload(t, r->w, r->nw);
    r->pdy = tvalues_upload(t, r->dy, r->ny);
    r->py = tbuf_alloc(es * (size_t)r->ny), r->pdx = tbuf_alloc(es * (size_t)r->nx);
    r->pdw = tbuf_alloc(es * (size_t)r->nw);
    r->y = malloc(sizeof(double) * (size_t)r->ny), r->dx = malloc(sizeof(double) * (size_t)r->nx);
    r->dw = malloc(sizeof(double) * (size_t)r->nw);
    ref_conv_fwd(rc, r->x, r->w, r->y);
    ref_conv_bwd_data(rc, r->dy, r->w, r->dx);
    ref_conv_bwd_filter(rc, r->x, r->dy, r->dw);
    tconv_descs_create(&r->xd, &r->yd, NULL, &r->wd, &r->cd);
}

void tconv_run_free(struct tconv_run *r)
{
    void *bufs[] = {r->px, r->pw, r->pdy, r->py, r->pdx, r->pdw};
    for (size_t i = 0; i < TLEN(bufs); i++) tbuf_free(bufs[i]);
    free(r->x), free(r->w), free(r->dy), free(r->y), free(r->dx), free(r->dw);
    tconv_descs_destroy(r->xd, r->yd, NULL, r->wd, r->cd);
}

bool conv_tensor_core_pass(void)
{
    if (test_backend[0] != 'c') return false;
    const int cc = test_compute_capability();
    if (cc < 80) {
        printf("      (sm_%d: the tensor-core entries need sm_80)\n", cc);
        return false;
    }
    return true;
}
