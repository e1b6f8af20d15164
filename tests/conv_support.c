/* conv_support.c: see conv_support.h. */
#include "conv_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool conv_setup_init(struct conv_setup *s, const struct conv_shape *sh, const struct conv_config *cf, int x_layout,
                     int y_layout, bool nhwc_filter)
{
    memset(s, 0, sizeof *s);
    s->cf = cf;
    struct ref_conv *r = &s->r;
    r->nsp = sh->nsp, r->n = sh->n, r->c = sh->c, r->k = sh->k, r->groups = sh->groups ? sh->groups : 1;
    r->convolution = sh->convolution;
    int pad[3], stride[3], dil[3];
    for (int d = 0; d < sh->nsp; d++) {
        r->in[d] = sh->in[d], r->filt[d] = sh->filt[d], r->pad[d] = pad[d] = sh->pad[d];
        r->stride[d] = stride[d] = sh->stride[d] ? sh->stride[d] : 1;
        r->dil[d] = dil[d] = sh->dil[d] ? sh->dil[d] : 1;
    }
    if (!CHECK(ref_conv_out_dims(r))) return false;
    int rank = sh->nsp + 2, xd[5] = {r->n, r->c}, yd[5] = {r->n, r->k}, wd[5] = {r->k, r->c / r->groups};
    for (int d = 0; d < sh->nsp; d++) xd[d + 2] = r->in[d], yd[d + 2] = r->out[d], wd[d + 2] = r->filt[d];
    tview_init(&s->x, cf->data, rank, xd, x_layout);
    tview_init(&s->y, cf->data, rank, yd, y_layout);
    tview_init(&s->w, cf->data, rank, wd, nhwc_filter ? TV_NHWC : TV_NCHW);
    s->xv = tview_random(s->x.count, -1, 1);
    s->wv = tview_random(s->w.count, -1, 1);
    s->yv = tview_random(s->y.count, -1, 1);
    s->xb = tview_upload(&s->x, s->xv); /* rounds the values to the type */
    s->wb = tview_upload(&s->w, s->wv);
    s->yb = tview_upload(&s->y, s->yv);
    for (int d = 0; d < CONV_DIRS; d++) s->want[d] = malloc(sizeof(double) * (size_t)conv_setup_dst_count(s, d));
    ref_conv_fwd(r, s->xv, s->wv, s->want[CONV_FWD]);
    ref_conv_bwd_data(r, s->yv, s->wv, s->want[CONV_BWD_DATA]);
    ref_conv_bwd_filter(r, s->xv, s->yv, s->want[CONV_BWD_FILTER]);
    return CHECK_OK(cudnnCreateFilterDescriptor(&s->wdesc)) &&
           CHECK_OK(cudnnSetFilterNdDescriptor(s->wdesc, cf->data, nhwc_filter ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                               rank, wd)) &&
           CHECK_OK(cudnnCreateConvolutionDescriptor(&s->conv)) &&
           CHECK_OK(cudnnSetConvolutionNdDescriptor(s->conv, sh->nsp, pad, stride, dil,
                                                    sh->convolution ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                                    cf->compute)) &&
           CHECK_OK(cudnnSetConvolutionGroupCount(s->conv, r->groups)) &&
           CHECK_OK(cudnnSetConvolutionMathType(s->conv, cf->math));
}

void conv_setup_free(struct conv_setup *s)
{
    if (s->xb) tview_free(&s->x, s->xb);
    if (s->wb) tview_free(&s->w, s->wb);
    if (s->yb) tview_free(&s->y, s->yb);
    tview_destroy(&s->x);
    tview_destroy(&s->y);
    tview_destroy(&s->w);
    cudnnDestroyFilterDescriptor(s->wdesc);
    cudnnDestroyConvolutionDescriptor(s->conv);
    free(s->xv), free(s->wv), free(s->yv);
    for (int d = 0; d < CONV_DIRS; d++) free(s->want[d]);
}

static const struct tview *dst_view(const struct conv_setup *s, enum conv_dir d)
{
    return d == CONV_FWD ? &s->y : d == CONV_BWD_DATA ? &s->x : &s->w;
}

int64_t conv_setup_dst_count(const struct conv_setup *s, enum conv_dir d)
{
    return dst_view(s, d)->count;
}

double conv_setup_result_scale(const struct conv_setup *s, enum conv_dir d)
{
    double scale = 1;
    for (int64_t i = 0; i < dst_view(s, d)->count; i++) scale = fmax(scale, fabs(s->want[d][i]));
    return scale;
}

cudnnStatus_t conv_setup_workspace(const struct conv_setup *s, enum conv_dir d, int algo, size_t *bytes)
{
    cudnnHandle_t h = test_handle();
    if (d == CONV_FWD)
        return cudnnGetConvolutionForwardWorkspaceSize(h, s->x.desc, s->wdesc, s->conv, s->y.desc, algo, bytes);
    if (d == CONV_BWD_DATA)
        return cudnnGetConvolutionBackwardDataWorkspaceSize(h, s->wdesc, s->y.desc, s->conv, s->x.desc, algo, bytes);
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, s->x.desc, s->y.desc, s->conv, s->wdesc, algo, bytes);
}

cudnnStatus_t conv_setup_run(struct conv_setup *s, enum conv_dir d, int algo, double alpha, double beta, double tol,
                             double *err, const char *what)
{
    cudnnHandle_t h = test_handle();
    const struct tview *v = dst_view(s, d);
    double *prior = beta != 0 ? tview_random(v->count, -1, 1) : NULL;
    void *dst = tview_upload(v, prior); /* NULL prior: every scalar poisoned */
    void *xb = d == CONV_BWD_DATA ? dst : s->xb, *wb = d == CONV_BWD_FILTER ? dst : s->wb;
    void *yb = d == CONV_FWD ? dst : s->yb;
    size_t ws_bytes = 0;
    cudnnStatus_t st = conv_setup_workspace(s, d, algo, &ws_bytes);
    if (st == CUDNN_STATUS_SUCCESS) {
        void *ws = ws_bytes ? tbuf_alloc(ws_bytes) : NULL;
        struct tscale a, b;
        const void *pa = tscale(&a, s->cf->data, alpha), *pb = tscale(&b, s->cf->data, beta);
        if (d == CONV_FWD)
            st = cudnnConvolutionForward(h, pa, s->x.desc, xb, s->wdesc, wb, s->conv, algo, ws, ws_bytes, pb, s->y.desc,
                                         yb);
        else if (d == CONV_BWD_DATA)
            st = cudnnConvolutionBackwardData(h, pa, s->wdesc, wb, s->y.desc, yb, s->conv, algo, ws, ws_bytes, pb,
                                              s->x.desc, xb);
        else
            st = cudnnConvolutionBackwardFilter(h, pa, s->x.desc, xb, s->y.desc, yb, s->conv, algo, ws, ws_bytes, pb,
                                                s->wdesc, wb);
        if (ws) tbuf_free(ws);
    }
    if (st == CUDNN_STATUS_SUCCESS) {
        const double *want = s->want[d];
        tview_check_blend(v, dst, want, prior, alpha, beta, tol, what);
        if (err != NULL) {
            double *got = malloc(sizeof(double) * (size_t)v->count), worst = 0;
            const double scale = fmax(1, fabs(alpha) * conv_setup_result_scale(s, d));
            tview_download(v, dst, got);
            for (int64_t i = 0; i < v->count; i++) {
                double e = fabs(got[i] - alpha * want[i] - (beta == 0 ? 0 : beta * prior[i]));
                worst = isnan(e) ? INFINITY : fmax(worst, e);
            }
            *err = worst / scale;
            free(got);
        }
    }
    tview_free(v, dst);
    free(prior);
    return st;
}

/* One perf result, whatever the direction (the three perf structs share a layout). */
#define TAKE(res, n, algos, status, memory)                                                       \
    for (int i_ = 0; i_ < (n); i_++) {                                                        \
        algos[i_] = (int)(res)[i_].algo;                                                      \
        status[i_] = (res)[i_].status;                                                        \
        if (memory) memory[i_] = (res)[i_].memory;                                            \
    }

static int query(const struct conv_setup *s, enum conv_dir d, bool find, int *algos, cudnnStatus_t *status,
                 size_t *memory)
{
    cudnnHandle_t h = test_handle();
    int n = 0;
    if (d == CONV_FWD) {
        cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        CHECK_OK(find ? cudnnFindConvolutionForwardAlgorithm(h, s->x.desc, s->wdesc, s->conv, s->y.desc, TLEN(r), &n, r)
                      : cudnnGetConvolutionForwardAlgorithm_v7(h, s->x.desc, s->wdesc, s->conv, s->y.desc, TLEN(r), &n, r));
        TAKE(r, n, algos, status, memory);
    } else if (d == CONV_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        CHECK_OK(find ? cudnnFindConvolutionBackwardDataAlgorithm(h, s->wdesc, s->y.desc, s->conv, s->x.desc, TLEN(r), &n, r)
                      : cudnnGetConvolutionBackwardDataAlgorithm_v7(h, s->wdesc, s->y.desc, s->conv, s->x.desc, TLEN(r),
                                                                    &n, r));
        TAKE(r, n, algos, status, memory);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        CHECK_OK(find ? cudnnFindConvolutionBackwardFilterAlgorithm(h, s->x.desc, s->y.desc, s->conv, s->wdesc, TLEN(r),
                                                                    &n, r)
                      : cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, s->x.desc, s->y.desc, s->conv, s->wdesc,
                                                                      TLEN(r), &n, r));
        TAKE(r, n, algos, status, memory);
    }
    return n;
}

int conv_setup_heuristic(const struct conv_setup *s, enum conv_dir d, int *algos, cudnnStatus_t *status, size_t *memory)
{
    return query(s, d, false, algos, status, memory);
}

int conv_setup_find(const struct conv_setup *s, enum conv_dir d, int *algos, cudnnStatus_t *status, size_t *memory)
{
    return query(s, d, true, algos, status, memory);
}

/* The helper itself, on the algorithms every backend runs: each direction matches the reference
   in two layouts, beta 0 (poisoned output) and beta != 0. */
TEST(conv_support_checks_every_direction)
{
    static const struct conv_shape shape = {"3x3_pad1", 2, 2, 3, 4, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};
    /* FMA_MATH: the float products exact on every backend (DEFAULT_MATH may take TF32 on CUDA) */
    static const struct conv_config cf = {"float", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH};
    static const int algos[CONV_DIRS] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
                                         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0};
    for (int layout = 0; layout < 2; layout++) {
        struct conv_setup s;
        if (conv_setup_init(&s, &shape, &cf, layout ? TV_NHWC : TV_NCHW, TV_PADDED, layout == 1))
            for (int d = 0; d < CONV_DIRS; d++) {
                double err = -1;
                CHECK_OK(conv_setup_run(&s, d, algos[d], 0.5, d == 1 ? 0.25 : 0, 1e-4, &err, layout ? "conv_support nhwc" : "conv_support nchw"));
                CHECK(err >= 0 && err < 1e-5);
            }
        conv_setup_free(&s);
    }
}
