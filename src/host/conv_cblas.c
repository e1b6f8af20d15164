/* conv_cblas.c: the forward convolution as im2col + CBLAS GEMM (cblas_sgemm, cblas_dgemm), built
   only when CMake found a CBLAS library (OPENCUDNN_CBLAS, see the top CMakeLists.txt).

   Main decision: the library only multiplies; the im2col is ours and the scope is narrow. For
   image n and group g, Y[n, g] (K/G x P*Q, rows P*Q apart) = W[g] (K/G x C/G*R*S, the KCRS filter
   as it is) times the column matrix of x (C/G*R*S x P*Q), so x is read through its strides into
   the workspace and the filter and y are handed over in place, alpha and beta included (a 1x1
   filter with unit stride and no padding skips the im2col: x itself is the column matrix). That
   needs NCHW-like y and filter; everything else stays with the packed engine (conv_gemm.c). The
   entry is planned (core/impl.h): that geometry is worked out once per problem, and the walker,
   the race, the workspace query and the run read it from the plan.
   Threads: our pool builds the columns of every image first; then the calling thread runs the
   GEMMs one after another and the library threads each one itself, while our workers sleep. The
   two pools never compete, and no global setting of the library (its thread count) is touched,
   so an application that uses the same library sees it unchanged.
   Whether it runs a problem it can run is a race with the packed engine (ocd_host_conv_cblas_race):
   the library must have won this process's calibration (gemm_cblas.h: a library left
   with generic kernels runs at a third of the packed engine's speed), and the problem must be one
   of the sizes where a good library wins; Find times both and overrules that estimate per problem;
   OPENCUDNN_HOST_GEMM=cblas|builtin decides for every problem. */
#include "host/conv.h"

#include "core/reasons.h"
#include "host/gemm_cblas.h"
#include "host/parallel.h"

#include <cblas.h>
#include <limits.h>
#include <string.h>

/* Sizes where a library with kernels for the processor beats the packed engine (OpenBLAS on a
   2-core Zen 3, bench/archive.md, "Host backend"): from a GEMM per image and group of
   OCD_HOST_CBLAS_MIN_FLOPS, except when the column matrix outgrows the cache while fewer than 128
   filters per group share each of its elements (ResNet-50's 64-channel 56x56 layer at batch 8:
   58 MB of columns, where the packed engine, which gathers as it goes, is faster). */
#define MIN_FILTERS_FOR_LARGE_COLUMNS 128
#define LARGE_COLUMNS_BYTES ((size_t)16 << 20)

/* x itself is the column matrix: a 1x1 filter, unit strides, no padding, rows of x H*W
   contiguous elements and channels at least that far apart. */
static bool is_1x1_direct(const struct ocd_conv_problem *p)
{
    const struct ocd_conv_shape *s = &p->s;
    return s->filt[0] == 1 && s->filt[1] == 1 && s->stride[0] == 1 && s->stride[1] == 1 && s->pad[0] == 0 &&
           s->pad[1] == 0 && p->x.strides[3] == 1 && p->x.strides[2] == s->in[1] &&
           p->x.strides[1] >= s->in[0] * s->in[1];
}

/* The entry is planned (core/impl.h): the plan is the verdict and the GEMM per image and group,
   C (m x n) = A (m x k) B (k x n) with m = K/G, n = P*Q, k = C/G*R*S, and where its B lives. It
   holds no pointer: the run takes the data from the problem. */
struct cblas_plan {
    bool dbl;
    bool direct;            /* x itself is the column matrix (is_1x1_direct) */
    size_t ws_bytes;        /* the column matrices of every image; 0 when direct */
    int m, n, k;            /* the GEMM's sizes */
    int lda, ldb, ldc;      /* the filter's, the column matrix's and y's leading dimensions */
    int64_t image_step, group_step; /* elements between the column matrices of images, of groups */
};
OCD_IMPL_PLAN_FITS(struct cblas_plan);

static const char *plan(cudnnHandle_t handle, const void *problem, void *planned)
{
    const struct ocd_conv_problem *p = problem;
    const struct ocd_conv_shape *s = &p->s;
    struct cblas_plan *pl = planned;
    if (ocd_host_gemm_choice() == OCD_HOST_GEMM_BUILTIN) return "OPENCUDNN_HOST_GEMM=builtin";
    if (p->dir != OCD_CONV_FWD) return "the CBLAS entry runs the forward convolution only";
    if (p->ep.on) return OCD_REASON_MODE;
    if (s->nsp != 2) return OCD_REASON_RANK;
    cudnnDataType_t t = p->x.dtype;
    if ((t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_DOUBLE) || p->w.dtype != t || p->y.dtype != t || p->compute != t)
        return OCD_REASON_DTYPE;
    /* the filter as a K x CRS matrix; channels of y P*Q contiguous elements, at least that far apart */
    int64_t pq = s->out[0] * s->out[1], cg = s->c / s->groups, crs = cg * s->filt[0] * s->filt[1];
    if (p->w_format != CUDNN_TENSOR_NCHW || p->y.strides[3] != 1 || p->y.strides[2] != s->out[1] ||
        p->y.strides[1] < pq)
        return OCD_REASON_LAYOUT;
    /* the GEMM's sizes and leading dimensions are C ints */
    if (p->w.strides[0] > INT_MAX || p->y.strides[1] > INT_MAX || p->x.strides[1] > INT_MAX || pq > INT_MAX)
        return OCD_REASON_SHAPE;
    pl->dbl = t == CUDNN_DATA_DOUBLE;
    pl->direct = is_1x1_direct(p);
    pl->m = (int)(s->k / s->groups), pl->n = (int)pq, pl->k = (int)crs;
    pl->lda = (int)p->w.strides[0], pl->ldc = (int)p->y.strides[1];
    if (pl->direct) {
        pl->ws_bytes = 0;
        pl->ldb = (int)p->x.strides[1], pl->image_step = p->x.strides[0], pl->group_step = cg * p->x.strides[1];
    } else {
        const size_t elem = pl->dbl ? sizeof(double) : sizeof(float);
        pl->ws_bytes = (size_t)(s->n * s->c * s->filt[0] * s->filt[1] * pq) * elem;
        pl->ldb = (int)pq, pl->image_step = s->c * s->filt[0] * s->filt[1] * pq, pl->group_step = crs * pq;
    }
    return NULL;
}

enum ocd_conv_race ocd_host_conv_cblas_race(cudnnHandle_t handle, const struct ocd_conv_problem *p, const void *planned)
{
    const struct cblas_plan *pl = planned;
    if (ocd_host_gemm_choice() == OCD_HOST_GEMM_CBLAS) return OCD_CONV_RACE_FORCED;
    if (2.0 * pl->m * (double)pl->n * (double)pl->k < OCD_HOST_CBLAS_MIN_FLOPS) return OCD_CONV_RACE_LOSES;
    if (pl->m < MIN_FILTERS_FOR_LARGE_COLUMNS && pl->ws_bytes > LARGE_COLUMNS_BYTES) return OCD_CONV_RACE_LOSES;
    return ocd_host_cblas_wins(p->x.dtype) ? OCD_CONV_RACE_WINS : OCD_CONV_RACE_LOSES;
}

static size_t workspace(cudnnHandle_t handle, const void *problem, const void *planned)
{
    return ((const struct cblas_plan *)planned)->ws_bytes;
}

struct im2col_job {
    const struct ocd_conv_problem *p;
    char *cols;
    size_t elem;
};

/* Rows (c, r, s) of the column matrices of images [begin / C, end / C) and their channels: row
   (c, r, s) of image n holds, for each output pixel, the input element tap (r, s) of it reads
   (zero in the padding); taps are mirrored for CUDNN_CONVOLUTION. Output rows are cut into the
   runs before, inside and after the input, so the inside is one strided (usually unit) copy. */
static void im2col_range(void *ctx, int64_t begin, int64_t end)
{
    const struct im2col_job *j = ctx;
    const struct ocd_conv_problem *p = j->p;
    const struct ocd_conv_shape *s = &p->s;
    const int64_t *xs = p->x.strides, H = s->in[0], W = s->in[1], P = s->out[0], Q = s->out[1];
    const int64_t R = s->filt[0], S = s->filt[1];
    size_t elem = j->elem;
    for (int64_t e = begin; e < end; e++) {
        int64_t n = e / s->c, c = e % s->c;
        const char *plane = (const char *)p->x_data + (size_t)(n * xs[0] + c * xs[1]) * elem;
        char *row = j->cols + (size_t)(e * R * S * P * Q) * elem;
        for (int64_t r = 0; r < R; r++) {
            for (int64_t t = 0; t < S; t++, row += (size_t)(P * Q) * elem) {
                int64_t dh = (s->flip ? R - 1 - r : r) * s->dilation[0] - s->pad[0];
                int64_t dw = (s->flip ? S - 1 - t : t) * s->dilation[1] - s->pad[1];
                int64_t st = s->stride[1];
                /* q inside the input: 0 <= q * st + dw < W */
                int64_t q0 = dw >= 0 ? 0 : OCD_MIN(Q, (-dw + st - 1) / st);
                int64_t q1 = W - dw <= 0 ? q0 : OCD_MAX(q0, OCD_MIN(Q, (W - dw + st - 1) / st));
                for (int64_t pp = 0; pp < P; pp++) {
                    char *out = row + (size_t)(pp * Q) * elem;
                    int64_t h = pp * s->stride[0] + dh;
                    if (h < 0 || h >= H) {
                        memset(out, 0, (size_t)Q * elem);
                        continue;
                    }
                    memset(out, 0, (size_t)q0 * elem);
                    const char *in = plane + (size_t)(h * xs[2] + (q0 * st + dw) * xs[3]) * elem;
                    int64_t step = st * xs[3];
                    if (step == 1) memcpy(out + (size_t)q0 * elem, in, (size_t)(q1 - q0) * elem);
                    else if (elem == sizeof(float))
                        for (int64_t q = q0; q < q1; q++) ((float *)out)[q] = ((const float *)in)[(q - q0) * step];
                    else
                        for (int64_t q = q0; q < q1; q++) ((double *)out)[q] = ((const double *)in)[(q - q0) * step];
                    memset(out + (size_t)q1 * elem, 0, (size_t)(Q - q1) * elem);
                }
            }
        }
    }
}

static cudnnStatus_t run(cudnnHandle_t handle, const void *problem, const void *planned, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = problem;
    const struct cblas_plan *pl = planned;
    const size_t elem = pl->dbl ? sizeof(double) : sizeof(float);
    const char *cols = pl->direct ? p->x_data : ws;
    if (!pl->direct) {
        struct im2col_job job = {p, ws, elem};
        ocd_parallel_for(p->s.n * p->s.c, 1, im2col_range, &job);
    }
    const int64_t *ys = p->y.strides;
    for (int64_t n = 0; n < p->s.n; n++) {
        for (int64_t g = 0; g < p->s.groups; g++) {
            const char *a = (const char *)p->w_data + (size_t)(g * pl->m * pl->lda) * elem;
            const char *b = cols + (size_t)(n * pl->image_step + g * pl->group_step) * elem;
            char *c = (char *)p->y_data + (size_t)(n * ys[0] + g * pl->m * ys[1]) * elem;
            if (pl->dbl)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, pl->m, pl->n, pl->k, p->alpha, (const double *)a,
                            pl->lda, (const double *)b, pl->ldb, p->beta, (double *)c, pl->ldc);
            else
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, pl->m, pl->n, pl->k, (float)p->alpha,
                            (const float *)a, pl->lda, (const float *)b, pl->ldb, (float)p->beta, (float *)c, pl->ldc);
        }
    }
    return CUDNN_STATUS_SUCCESS;
}

const struct ocd_impl_planned ocd_host_conv_cblas_planned = {plan, workspace, run};
