/* conv.c: tests of the convolution API: descriptors, forward, backward data, backward filter,
   backward bias, the fused bias + activation forward, Im2Col, filter reordering, the algorithm
   queries, and bad inputs.

   Numeric tests run a list of named shapes (odd sizes, strides, asymmetric padding, dilation,
   groups, depthwise, 1x1, large filters, 3-D, CONVOLUTION mode, GEMM block edges) through every
   data-type configuration of the cuDNN 8.2 tables and every algorithm: each algorithm the
   heuristic reports as runnable must run and match tests/ref/conv.c; an algorithm it reports as
   NOT_SUPPORTED must be refused with NOT_SUPPORTED by the execution call (listed, not failed).
   Layouts rotate through packed NCHW, packed NHWC, padded strides (with poisoned gaps) and the
   vector layouts. */
#include "test.h"

#include "ref/conv.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

/* ---- tensors in a chosen layout -------------------------------------------------------------- */

enum layout { L_NCHW, L_NHWC, L_STRIDED, L_VECT };

struct ttensor {
    cudnnTensorDescriptor_t desc;
    cudnnDataType_t dtype;
    int rank, vect;
    int dims[5], strides[5]; /* strides in elements (vectors for vector types) */
    size_t bytes;
};

static int vect_of(cudnnDataType_t t)
{
    return t == CUDNN_DATA_INT8x4 || t == CUDNN_DATA_UINT8x4 ? 4 : t == CUDNN_DATA_INT8x32 ? 32 : 1;
}

static bool make_tensor(struct ttensor *t, cudnnDataType_t dtype, enum layout l, int rank, const int *dims)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype, t->rank = rank, t->vect = vect_of(dtype);
    memcpy(t->dims, dims, sizeof(int) * (size_t)rank);
    if (!CHECK_OK(cudnnCreateTensorDescriptor(&t->desc))) return false;
    long span = 1;
    if (l == L_NHWC) {
        int s = 1;
        t->strides[1] = s, s *= dims[1];
        for (int d = rank - 1; d >= 2; d--) t->strides[d] = s, s *= dims[d];
        t->strides[0] = s;
        span = s * (long)dims[0];
        if (!CHECK_OK(cudnnSetTensorNdDescriptorEx(t->desc, CUDNN_TENSOR_NHWC, dtype, rank, dims))) return false;
    } else if (l == L_VECT) {
        int s = 1;
        for (int d = rank - 1; d >= 0; d--) t->strides[d] = s, s *= d == 1 ? dims[1] / t->vect : dims[d];
        span = s;
        if (!CHECK_OK(cudnnSetTensorNdDescriptorEx(t->desc, CUDNN_TENSOR_NCHW_VECT_C, dtype, rank, dims))) return false;
    } else {
        int s = 1;
        for (int d = rank - 1; d >= 0; d--) {
            t->strides[d] = s;
            s = s * dims[d] + (l == L_STRIDED ? (d == rank - 1 ? 1 : d + 1) : 0);
        }
        span = s;
        if (!CHECK_OK(cudnnSetTensorNdDescriptor(t->desc, dtype, rank, dims, t->strides))) return false;
    }
    t->bytes = (size_t)span * (size_t)t->vect * tdtype_size(dtype);
    return true;
}

/* Scalar offset of logical element (row-major over dims) `i`. */
static long tensor_offset(const struct ttensor *t, long i)
{
    long off = 0;
    for (int d = t->rank - 1; d >= 0; d--) {
        long idx = i % t->dims[d];
        i /= t->dims[d];
        off += d == 1 ? (idx / t->vect) * t->strides[1] * t->vect + idx % t->vect : idx * t->strides[d] * t->vect;
    }
    return off;
}

static long count_of(int rank, const int *dims)
{
    long n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    return n;
}

/* Writes logical values into device buffer dev in t's layout; gaps are poisoned. */
static void fill_tensor(const struct ttensor *t, void *dev, const double *logical)
{
    unsigned char *host = malloc(t->bytes);
    memset(host, 0xff, t->bytes);
    for (long i = 0; i < count_of(t->rank, t->dims); i++) tstore(t->dtype, host, tensor_offset(t, i), logical[i]);
    tbuf_upload(dev, host, t->bytes);
    free(host);
}

static void *upload_tensor(const struct ttensor *t, const double *logical)
{
    void *dev = tbuf_alloc(t->bytes);
    fill_tensor(t, dev, logical);
    return dev;
}

static void download_tensor(const struct ttensor *t, const void *dev, void *logical_typed)
{
    unsigned char *host = malloc(t->bytes);
    tbuf_download(host, dev, t->bytes);
    for (long i = 0; i < count_of(t->rank, t->dims); i++)
        tstore(t->dtype, logical_typed, i, tload(t->dtype, host, tensor_offset(t, i)));
    free(host);
}

struct tfilter {
    cudnnFilterDescriptor_t desc;
    cudnnDataType_t dtype;
    cudnnTensorFormat_t format;
    int rank, vect, dims[5];
    size_t bytes;
};

static bool make_filter(struct tfilter *f, cudnnDataType_t dtype, cudnnTensorFormat_t format, int rank, const int *dims)
{
    memset(f, 0, sizeof *f);
    f->dtype = dtype, f->format = format, f->rank = rank, f->vect = vect_of(dtype);
    memcpy(f->dims, dims, sizeof(int) * (size_t)rank);
    f->bytes = (size_t)count_of(rank, dims) * tdtype_size(dtype);
    return CHECK_OK(cudnnCreateFilterDescriptor(&f->desc)) &&
           CHECK_OK(cudnnSetFilterNdDescriptor(f->desc, dtype, format, rank, dims));
}

/* Scalar offset of logical filter element i (k, c, spatial) in the filter's format. */
static long filter_offset(const struct tfilter *f, long i)
{
    int idx[5];
    for (int d = f->rank - 1; d >= 0; d--) idx[d] = (int)(i % f->dims[d]), i /= f->dims[d];
    long sp = 0;
    for (int d = 2; d < f->rank; d++) sp = sp * f->dims[d] + idx[d];
    long spatial = count_of(f->rank - 2, f->dims + 2), k = idx[0], c = idx[1], C = f->dims[1];
    if (f->format == CUDNN_TENSOR_NHWC) return (k * spatial + sp) * C + c;
    if (f->format == CUDNN_TENSOR_NCHW_VECT_C)
        return ((k * (C / f->vect) + c / f->vect) * spatial + sp) * f->vect + c % f->vect;
    return (k * C + c) * spatial + sp;
}

static void fill_filter(const struct tfilter *f, void *dev, const double *logical)
{
    unsigned char *host = malloc(f->bytes);
    for (long i = 0; i < count_of(f->rank, f->dims); i++) tstore(f->dtype, host, filter_offset(f, i), logical[i]);
    tbuf_upload(dev, host, f->bytes);
    free(host);
}

static void *upload_filter(const struct tfilter *f, const double *logical)
{
    void *dev = tbuf_alloc(f->bytes);
    fill_filter(f, dev, logical);
    return dev;
}

static void download_filter(const struct tfilter *f, const void *dev, void *logical_typed)
{
    unsigned char *host = malloc(f->bytes);
    tbuf_download(host, dev, f->bytes);
    for (long i = 0; i < count_of(f->rank, f->dims); i++)
        tstore(f->dtype, logical_typed, i, tload(f->dtype, host, filter_offset(f, i)));
    free(host);
}

/* Random values of type t, rounded to it, in [lo, hi]. */
static double *random_values(cudnnDataType_t t, long n, double lo, double hi)
{
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    unsigned char tmp[8];
    for (long i = 0; i < n; i++) {
        tstore(t, tmp, 0, trand_uniform(lo, hi));
        v[i] = tload(t, tmp, 0);
    }
    return v;
}

/* ---- shapes and configurations ------------------------------------------------------------------ */

struct shape {
    const char *name;
    int nsp, n, c, k, groups;
    int in[3], filt[3], pad[3], stride[3], dil[3];
    bool convolution;
};

static const struct shape shapes[] = {
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
static const struct shape int8_shapes[] = {
    {"int8_3x3", 2, 2, 4, 8, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
    {"int8_stride2_groups", 2, 1, 8, 8, 2, {6, 7}, {3, 3}, {1, 0}, {2, 2}, {1, 1}, true},
};
static const struct shape int8x32_shape = {"int8x32", 2, 1, 32, 32, 1, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false};

struct config {
    const char *name;
    cudnnDataType_t x, w, y, compute;
    cudnnMathType_t math;
    enum layout layout; /* int8: the fixed layout; L_NCHW for float types (they rotate) */
    bool fixed;         /* float types: x and y both in `layout` instead of rotating */
};

#define F CUDNN_DATA_FLOAT
static const struct config float_configs[] = {
    {"float", F, F, F, F, CUDNN_DEFAULT_MATH, L_NCHW, false},
    {"float_tf32", F, F, F, F, CUDNN_TENSOR_OP_MATH, L_NCHW, false},
    {"double", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH, L_NCHW, false},
    {"pseudo_half", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, F, CUDNN_DEFAULT_MATH, L_NCHW, false},
    {"true_half", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DEFAULT_MATH, L_NCHW, false},
    {"bfloat16", CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, F, CUDNN_DEFAULT_MATH, L_NCHW, false},
};
static const struct config int8_configs[] = {
    {"int8", CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, L_NHWC, false},
    {"int8_ext", CUDNN_DATA_INT8, CUDNN_DATA_INT8, F, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, L_NHWC, false},
    {"uint8", CUDNN_DATA_UINT8, CUDNN_DATA_INT8, CUDNN_DATA_UINT8, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, L_NHWC, false},
    {"int8x4", CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x4, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, L_VECT, false},
    {"int8x4_ext", CUDNN_DATA_INT8x4, CUDNN_DATA_INT8x4, F, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, L_VECT, false},
};
static const struct config int8x32_config = {"int8x32", CUDNN_DATA_INT8x32, CUDNN_DATA_INT8x32, CUDNN_DATA_INT8x32,
                                             CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, L_VECT, false};

/* Shapes for the CUDA backend's tensor-core entries: channels and filters per group multiples of
   8 (the implicit-GEMM kernels' 16-byte chunks), x and y in one packed layout (the cuBLAS
   entries), small enough for the host pass. tc_channel_tail is what the kernels decline and
   im2col + cuBLAS serves; tc_split_k makes the filter gradient split its long K. */
static const struct shape tc_shapes[] = {
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
};

#define F CUDNN_DATA_FLOAT
static const struct config tc_configs[] = {
    {"half_nhwc", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, F, CUDNN_DEFAULT_MATH, L_NHWC, true},
    {"bfloat16_nhwc", CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, F, CUDNN_DEFAULT_MATH, L_NHWC, true},
    {"float_nhwc", F, F, F, F, CUDNN_DEFAULT_MATH, L_NHWC, true},
    {"half_nchw", CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, F, CUDNN_TENSOR_OP_MATH, L_NCHW, true},
    {"float_nchw_fma", F, F, F, F, CUDNN_FMA_MATH, L_NCHW, true},
    {"double_nhwc", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH,
     L_NHWC, true},
};
#undef F
#undef F

enum dir { FWD, BWD_DATA, BWD_FILTER };

/* Everything of one problem: descriptors, logical host data, device buffers. */
struct problem {
    struct ref_conv r;
    struct ttensor x, y;
    struct tfilter w;
    cudnnConvolutionDescriptor_t conv;
    const struct config *cf;
};

static bool is_int(cudnnDataType_t t)
{
    return t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_DOUBLE && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16;
}

static bool make_problem(struct problem *p, const struct shape *sh, const struct config *cf, int variant)
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
    int rank = sh->nsp + 2, xd[5] = {r->n, r->c}, yd[5] = {r->n, r->k}, wd[5] = {r->k, r->c / r->groups};
    for (int d = 0; d < sh->nsp; d++) xd[d + 2] = r->in[d], yd[d + 2] = r->out[d], wd[d + 2] = r->filt[d];
    static const enum layout rot[3] = {L_NCHW, L_NHWC, L_STRIDED};
    enum layout xl = cf->layout, yl = cf->layout;
    cudnnTensorFormat_t wf = cf->layout == L_NHWC ? CUDNN_TENSOR_NHWC : cf->layout == L_VECT ? CUDNN_TENSOR_NCHW_VECT_C
                                                                                            : CUDNN_TENSOR_NCHW;
    if (!is_int(cf->x)) {
        if (!cf->fixed) xl = rot[variant % 3], yl = rot[(variant + 1) % 3];
        wf = variant % 2 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    } else if (cf->layout == L_VECT && cf->y == CUDNN_DATA_FLOAT) {
        yl = variant % 2 ? L_NHWC : L_NCHW;
    }
    int pad[3], stride[3], dil[3];
    for (int d = 0; d < sh->nsp; d++) pad[d] = r->pad[d], stride[d] = r->stride[d], dil[d] = r->dil[d];
    return make_tensor(&p->x, cf->x, xl, rank, xd) && make_tensor(&p->y, cf->y, yl, rank, yd) &&
           make_filter(&p->w, cf->w, wf, rank, wd) && CHECK_OK(cudnnCreateConvolutionDescriptor(&p->conv)) &&
           CHECK_OK(cudnnSetConvolutionNdDescriptor(p->conv, sh->nsp, pad, stride, dil,
                                                    sh->convolution ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                                    cf->compute)) &&
           CHECK_OK(cudnnSetConvolutionGroupCount(p->conv, sh->groups)) &&
           CHECK_OK(cudnnSetConvolutionMathType(p->conv, cf->math));
}

static void free_problem(struct problem *p)
{
    cudnnDestroyTensorDescriptor(p->x.desc);
    cudnnDestroyTensorDescriptor(p->y.desc);
    cudnnDestroyFilterDescriptor(p->w.desc);
    cudnnDestroyConvolutionDescriptor(p->conv);
}

static int algo_count(enum dir d)
{
    return d == FWD ? CUDNN_CONVOLUTION_FWD_ALGO_COUNT : d == BWD_DATA ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                                                                       : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
}

/* One perf result, whatever the direction. */
struct perf {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
};

#define COPY_PERF(dst, src, n)                                                                  \
    for (int i_ = 0; i_ < (n); i_++)                                                            \
    (dst)[i_] = (struct perf){(int)(src)[i_].algo, (src)[i_].status, (src)[i_].time, (src)[i_].memory, \
                              (src)[i_].determinism, (src)[i_].mathType}

/* cudnnGet*Algorithm_v7 for the direction. */
static int heuristic(const struct problem *p, enum dir d, int requested, struct perf *out)
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

static cudnnStatus_t workspace_size(const struct problem *p, enum dir d, int algo, size_t *bytes)
{
    cudnnHandle_t h = test_handle();
    if (d == FWD)
        return cudnnGetConvolutionForwardWorkspaceSize(h, p->x.desc, p->w.desc, p->conv, p->y.desc, algo, bytes);
    if (d == BWD_DATA)
        return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p->w.desc, p->y.desc, p->conv, p->x.desc, algo, bytes);
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p->x.desc, p->y.desc, p->conv, p->w.desc, algo, bytes);
}

/* Runs direction d with algorithm `algo` on device buffers (x, w, y: the forward names). */
static cudnnStatus_t execute(const struct problem *p, enum dir d, int algo, void *x, void *w, void *y, void *ws,
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

static double saturate_for(cudnnDataType_t t, double v)
{
    double lo = t == CUDNN_DATA_UINT8 || t == CUDNN_DATA_UINT8x4 ? 0 : -128, hi = lo == 0 ? 255 : 127;
    if (!is_int(t)) return v;
    return v < lo ? lo : v > hi ? hi : v;
}

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
static void check_direction(struct problem *p, enum dir d, const char *label)
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
    void *dx = upload_tensor(&p->x, x), *dw = upload_filter(&p->w, w), *dy = upload_tensor(&p->y, y);
    size_t dst_bytes = d == FWD ? p->y.bytes : d == BWD_DATA ? p->x.bytes : p->w.bytes;
    void *got = malloc(dst_bytes > (size_t)ndst * 8 ? dst_bytes : (size_t)ndst * 8);
    double *expect = malloc(sizeof *expect * (size_t)ndst);
    struct perf perf[16];
    int n = heuristic(p, d, 16, perf), ran = 0;
    CHECK(n == algo_count(d));
    for (int i = 0; i < n; i++) {
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
            if (beta != 0) {
                if (d == FWD) fill_tensor(&p->y, dst, old);
                else if (d == BWD_DATA) fill_tensor(&p->x, dst, old);
                else fill_filter(&p->w, dst, old);
            } else {
                tbuf_poison(dst, dst_bytes); /* NaN in the output must not leak through beta = 0 */
            }
            for (long e = 0; e < ndst; e++) expect[e] = saturate_for(dst_type, alpha * want[e] + beta * old[e]);
            if (!CHECK_OK(execute(p, d, perf[i].algo, dx, dw, dy, ws, ws_bytes, alpha, beta))) {
                printf("      (%s)\n", what);
                continue;
            }
            if (d == FWD) download_tensor(&p->y, dy, got);
            else if (d == BWD_DATA) download_tensor(&p->x, dx, got);
            else download_filter(&p->w, dw, got);
            snprintf(what, sizeof what, "%s algo %d beta %g", label, perf[i].algo, beta);
            tcompare(dst_type, got, expect, ndst, algo_tolerance(d, perf[i].algo, cf->x, dst_type, perf[i].math), what);
        }
        if (ws) tbuf_free(ws);
        ran++;
    }
    if (getenv("CONV_VERBOSE")) printf("      %s: %d of %d ran\n", label, ran, n);
    if (!CHECK(ran > 0)) printf("      (%s: no algorithm ran)\n", label);
    tbuf_free(dx), tbuf_free(dw), tbuf_free(dy);
    free(x), free(w), free(y), free(old), free(want), free(got), free(expect);
}

static void run_shapes(enum dir d, const struct shape *shp, size_t nshapes, const struct config *cfs, size_t nconfigs)
{
    static const char *const dirs[] = {"fwd", "bwd_data", "bwd_filter"};
    for (size_t s = 0; s < nshapes; s++) {
        for (size_t c = 0; c < nconfigs; c++) {
            struct problem p;
            char label[160];
            snprintf(label, sizeof label, "%s %s %s", dirs[d], shp[s].name, cfs[c].name);
            if (make_problem(&p, &shp[s], &cfs[c], (int)(s + c))) check_direction(&p, d, label);
            free_problem(&p);
        }
    }
}

static void run_matrix(enum dir d)
{
    run_shapes(d, shapes, sizeof shapes / sizeof shapes[0], float_configs, sizeof float_configs / sizeof float_configs[0]);
}

TEST(conv_fwd_every_float_config_shape_and_algo)
{
    run_matrix(FWD);
}

TEST(conv_bwd_data_every_config_shape_and_algo)
{
    run_matrix(BWD_DATA);
}

TEST(conv_bwd_filter_every_config_shape_and_algo)
{
    run_matrix(BWD_FILTER);
}

/* The shapes and layouts the CUDA backend's tensor-core entries take (implicit GEMM, cuBLAS GEMMs),
   every direction and algorithm; on the host pass they are more edge shapes. */
TEST(conv_tensor_core_shapes_every_direction_and_algo)
{
    for (int d = FWD; d <= BWD_FILTER; d++)
        run_shapes((enum dir)d, tc_shapes, sizeof tc_shapes / sizeof tc_shapes[0], tc_configs,
                   sizeof tc_configs / sizeof tc_configs[0]);
}

/* OPENCUDNN_DISABLE as it was before a test set its own, to put back afterwards. */
struct disable_list {
    char value[256];
};

static struct disable_list disable_saved(void)
{
    struct disable_list d;
    const char *v = getenv("OPENCUDNN_DISABLE");
    snprintf(d.value, sizeof d.value, "%s", v ? v : "");
    return d;
}

static void disable_restore(const struct disable_list *d)
{
    setenv("OPENCUDNN_DISABLE", d->value, 1);
}

/* Which implementation ran, from the INFO log line "<op>: <impl> runs <problem>". */
struct ran_impl {
    char name[128];
};

static void capture_impl(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    struct ran_impl *r = udata;
    const char *runs = strstr(msg, " runs ");
    const char *start = NULL; /* the last ": " before " runs " */
    for (const char *at = msg; runs && (at = strstr(at, ": ")) != NULL && at < runs; at++) start = at;
    if (start) snprintf(r->name, sizeof r->name, "%.*s", (int)(runs - start - 2), start + 2);
}

/* One call (alpha 1, beta 0) with the INFO log captured: r gets the implementation that ran; the
   caller's callback is restored afterwards. */
static cudnnStatus_t execute_capturing(const struct problem *p, enum dir d, int algo, void *dx, void *dw, void *dy, void *ws,
                                       size_t ws_bytes, struct ran_impl *r)
{
    unsigned mask;
    void *udata;
    cudnnCallback_t fn;
    CHECK_OK(cudnnGetCallback(&mask, &udata, &fn));
    r->name[0] = '\0';
    CHECK_OK(cudnnSetCallback(CUDNN_SEV_INFO_EN, r, capture_impl));
    cudnnStatus_t status = execute(p, d, algo, dx, dw, dy, ws, ws_bytes, 1, 0);
    CHECK_OK(cudnnSetCallback(mask, udata, fn));
    return status;
}

/* On the CUDA pass, the algorithms that have a tensor-core entry reach it: the implicit GEMM for
   NHWC half data (also with groups, strides, dilation, 3-D), the 1x1 GEMM, im2col + GEMM for a
   channel tail, TF32 for float data under DEFAULT_MATH and plain cuBLAS under FMA_MATH. */
/* Whether the library can load cuBLAS (the names cuda/cublas_loader.cu tries). */
static bool cublas_loadable(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so", "libcublas.so.12", "libcublas.so.11"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            dlclose(lib);
            return true;
        }
    }
    return false;
}

TEST(conv_cuda_tensor_core_entries_are_reached)
{
    if (test_backend[0] != 'c') return;
#ifdef OCD_TEST_CUDA
    int dev = 0, major = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (major < 8) {
        printf("      (sm_%d0: the tensor-core entries need sm_80)\n", major);
        return;
    }
#endif
    bool blas = cublas_loadable();
    if (!blas) printf("      (cuBLAS does not load here: its entries are not checked)\n");
    static const struct {
        int shape, config;
        enum dir d;
        int algo;
        const char *prefix;
        const char *disable; /* OPENCUDNN_DISABLE for the case: the entries ahead of the one wanted */
    } cases[] = {
        {0, 0, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_tc_", NULL},
        {1, 1, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "cuda:dgrad_igemm_tc_", NULL},
        {2, 0, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_igemm_tc_", NULL},
        {4, 0, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_tc_", NULL},
        {6, 0, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_igemm_tc_", NULL},
        {0, 2, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_tf32_", NULL},
        {1, 2, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "cuda:dgrad_igemm_tf32_", NULL},
        {0, 3, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "cuda:fwd_igemm_tc_", NULL},
        /* small 1x1 GEMMs go to the implicit GEMM when it needs no workspace; here the filter
           (KCRS) must be packed, so cuBLAS keeps it */
        {3, 0, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, "cuda:fwd_gemm1x1_cublas_tc", "cuda:fwd_igemm*"},
        {3, 0, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_gemm1x1_cublas_tc", "cuda:wgrad_igemm*"},
        /* NCHW filter gradients, 1x1 or not, grouped or not: one GEMM per group over re-laid operands */
        {3, 3, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas_tc", "cuda:wgrad_igemm*"},
        {1, 3, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas_tc", "cuda:wgrad_igemm*"},
        {0, 4, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas", NULL},
        {7, 4, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas", NULL},
        {7, 3, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, "cuda:wgrad_im2col_gemm_cublas_tc", "cuda:wgrad_igemm*"},
        {5, 0, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "cuda:dgrad_im2col_gemm_cublas_tc", NULL},
        {0, 4, FWD, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, "cuda:fwd_im2col_gemm_cublas", NULL},
        {0, 5, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, "cuda:wgrad_im2col_gemm_cublas", NULL},
    };
    const struct disable_list saved = disable_saved();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!blas && strstr(cases[i].prefix, "cublas")) continue;
        struct problem p;
        if (!make_problem(&p, &tc_shapes[cases[i].shape], &tc_configs[cases[i].config], 0)) {
            free_problem(&p);
            continue;
        }
        long nx = ref_conv_x_count(&p.r), nw = ref_conv_w_count(&p.r), ny = ref_conv_y_count(&p.r);
        double *x = random_values(p.cf->x, nx, -1, 1), *w = random_values(p.cf->w, nw, -1, 1);
        double *y = random_values(p.cf->y, ny, -1, 1);
        void *dx = upload_tensor(&p.x, x), *dw = upload_filter(&p.w, w), *dy = upload_tensor(&p.y, y);
        if (cases[i].disable) setenv("OPENCUDNN_DISABLE", cases[i].disable, 1);
        size_t ws_bytes = 0;
        CHECK_OK(workspace_size(&p, cases[i].d, cases[i].algo, &ws_bytes));
        void *ws = ws_bytes ? tbuf_alloc(ws_bytes) : NULL;
        struct ran_impl r;
        CHECK_OK(execute_capturing(&p, cases[i].d, cases[i].algo, dx, dw, dy, ws, ws_bytes, &r));
        if (cases[i].disable) disable_restore(&saved);
        if (!CHECK(strncmp(r.name, cases[i].prefix, strlen(cases[i].prefix)) == 0))
            printf("      (%s %s dir %d algo %d: ran \"%s\", expected %s...)\n", tc_shapes[cases[i].shape].name,
                   tc_configs[cases[i].config].name, (int)cases[i].d, cases[i].algo, r.name, cases[i].prefix);
        /* and what it computed */
        enum dir d = cases[i].d;
        long ndst = d == FWD ? ny : d == BWD_DATA ? nx : nw;
        double *want = malloc(sizeof *want * (size_t)ndst);
        void *got = malloc(8 * (size_t)ndst); /* in the destination's type, at most 8 bytes each */
        if (d == FWD) ref_conv_fwd(&p.r, x, w, want), download_tensor(&p.y, dy, got);
        else if (d == BWD_DATA) ref_conv_bwd_data(&p.r, y, w, want), download_tensor(&p.x, dx, got);
        else ref_conv_bwd_filter(&p.r, x, y, want), download_filter(&p.w, dw, got);
        cudnnDataType_t dst_type = d == FWD ? p.cf->y : d == BWD_DATA ? p.cf->x : p.cf->w;
        cudnnMathType_t math = strstr(r.name, "_tc") || strstr(r.name, "_tf32") ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
        tcompare(dst_type, got, want, ndst, tconv_tolerance(p.cf->x, dst_type, math), r.name);
        free(want), free(got);
        if (ws) tbuf_free(ws);
        tbuf_free(dx), tbuf_free(dw), tbuf_free(dy);
        free(x), free(w), free(y);
        free_problem(&p);
    }
}

/* The host's CBLAS entry (a build with OPENCUDNN_CBLAS): forward GEMM reaches host:fwd_gemm_cblas
   on the NCHW float and double problems it takes when OPENCUDNN_HOST_GEMM=cblas overrides the
   calibration (tests/conv_timing.c tests the race itself), and the packed engine (host:fwd_gemm)
   with the entry switched off; every algorithm is checked against the reference both ways. The shapes
   are above the size under which the entry leaves the work to the packed engine (a GEMM per
   image and group of 64 x 196 x 576) and cover padding, stride, CONVOLUTION mode, groups, a
   strided x and a 1x1 filter that multiplies x in place (GEMM takes no dilation). */
TEST(conv_host_cblas_entry_and_packed_engine)
{
    if (test_backend[0] != 'h') return;
    static const struct shape cblas_shapes[] = {
        {"cblas_3x3", 2, 2, 64, 64, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
        {"cblas_stride2_convolution_mode", 2, 1, 64, 72, 1, {31, 30}, {3, 3}, {2, 1}, {2, 2}, {1, 1}, true},
        {"cblas_groups2", 2, 1, 128, 128, 2, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
        {"cblas_1x1", 2, 2, 576, 64, 1, {14, 14}, {1, 1}, {0, 0}, {1, 1}, {1, 1}, false},
    };
    /* variant 2 of a rotating config: x padded-strided, y and the filter NCHW */
    static const struct {
        struct config cf;
        int variant;
    } cfs[] = {
        {{"float_nchw", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, L_NCHW,
          true}, 0},
        {{"double_nchw", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH,
          L_NCHW, true}, 0},
        {{"float_x_strided", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH,
          L_NCHW, false}, 2},
    };
#ifdef OCD_TEST_CBLAS
    const char *want = "host:fwd_gemm_cblas";
#else
    const char *want = "host:fwd_gemm";
#endif
    const struct disable_list saved = disable_saved();
    const char *gemm = getenv("OPENCUDNN_HOST_GEMM");
    char gemm_saved[64];
    snprintf(gemm_saved, sizeof gemm_saved, "%s", gemm ? gemm : "");
    for (size_t s = 0; s < sizeof cblas_shapes / sizeof cblas_shapes[0]; s++)
        for (size_t c = 0; c < sizeof cfs / sizeof cfs[0]; c++)
            for (int off = 0; off < 2; off++) {
                struct problem p;
                char label[160];
                snprintf(label, sizeof label, "fwd %s %s%s", cblas_shapes[s].name, cfs[c].cf.name,
                         off ? " cblas off" : "");
                if (off) setenv("OPENCUDNN_DISABLE", "host:fwd_gemm_cblas", 1);
                else setenv("OPENCUDNN_HOST_GEMM", "cblas", 1);
                if (make_problem(&p, &cblas_shapes[s], &cfs[c].cf, cfs[c].variant)) {
                    /* which entry serves GEMM: run it once on poisoned data */
                    size_t ws_bytes = 0;
                    CHECK_OK(workspace_size(&p, FWD, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, &ws_bytes));
                    void *ws = ws_bytes ? tbuf_alloc(ws_bytes) : NULL;
                    void *dx = tbuf_alloc(p.x.bytes), *dw = tbuf_alloc(p.w.bytes), *dy = tbuf_alloc(p.y.bytes);
                    struct ran_impl r;
                    CHECK_OK(execute_capturing(&p, FWD, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, dx, dw, dy, ws, ws_bytes, &r));
                    const char *expect = off ? "host:fwd_gemm" : want;
                    if (!CHECK(strcmp(r.name, expect) == 0))
                        printf("      (%s: GEMM ran \"%s\", expected %s)\n", label, r.name, expect);
                    tbuf_free(dx), tbuf_free(dw), tbuf_free(dy);
                    if (ws) tbuf_free(ws);
                    check_direction(&p, FWD, label);
                }
                free_problem(&p);
                if (off) disable_restore(&saved);
                else setenv("OPENCUDNN_HOST_GEMM", gemm_saved, 1);
            }
}

TEST(conv_fwd_int8_configs)
{
    for (size_t s = 0; s < sizeof int8_shapes / sizeof int8_shapes[0]; s++) {
        for (size_t c = 0; c < sizeof int8_configs / sizeof int8_configs[0]; c++) {
            for (int variant = 0; variant < 2; variant++) {
                struct problem p;
                char label[160];
                snprintf(label, sizeof label, "fwd %s %s v%d", int8_shapes[s].name, int8_configs[c].name, variant);
                if (make_problem(&p, &int8_shapes[s], &int8_configs[c], variant)) check_direction(&p, FWD, label);
                free_problem(&p);
            }
        }
    }
    struct problem p;
    if (make_problem(&p, &int8x32_shape, &int8x32_config, 0)) check_direction(&p, FWD, "fwd int8x32");
    free_problem(&p);
}

/* ---- finite differences: the backward directions are the gradients of the forward one -------- */

/* sum(g * conv(x, w)) through the library's forward in double precision. */
static double loss(struct problem *p, const double *x, const double *w, const double *g)
{
    long ny = ref_conv_y_count(&p->r);
    void *dx = upload_tensor(&p->x, x), *dw = upload_filter(&p->w, w), *dy = tbuf_alloc(p->y.bytes);
    double *y = malloc(sizeof *y * (size_t)ny), sum = 0;
    CHECK_OK(execute(p, FWD, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, dx, dw, dy, NULL, 0, 1, 0));
    download_tensor(&p->y, dy, y);
    for (long i = 0; i < ny; i++) sum += g[i] * y[i];
    tbuf_free(dx), tbuf_free(dw), tbuf_free(dy), free(y);
    return sum;
}

TEST(conv_backward_matches_finite_differences)
{
    static const struct config dbl = {"double", CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE,
                                      CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH, L_NCHW, false};
    static const int picks[] = {1, 2, 3, 12}; /* strided, dilated, grouped, 3-D grouped CONVOLUTION */
    for (size_t s = 0; s < sizeof picks / sizeof picks[0]; s++) {
        struct problem p;
        if (!make_problem(&p, &shapes[picks[s]], &dbl, (int)s)) {
            free_problem(&p);
            continue;
        }
        long nx = ref_conv_x_count(&p.r), nw = ref_conv_w_count(&p.r), ny = ref_conv_y_count(&p.r);
        double *x = random_values(CUDNN_DATA_DOUBLE, nx, -1, 1), *w = random_values(CUDNN_DATA_DOUBLE, nw, -1, 1);
        double *g = random_values(CUDNN_DATA_DOUBLE, ny, -1, 1), *gx = malloc(sizeof *gx * (size_t)nx);
        double *gw = malloc(sizeof *gw * (size_t)nw);
        void *dx = tbuf_alloc(p.x.bytes), *dw = upload_filter(&p.w, w), *dy = upload_tensor(&p.y, g);
        size_t ws = 0;
        CHECK_OK(workspace_size(&p, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, &ws));
        void *wsp = tbuf_alloc(ws);
        CHECK_OK(execute(&p, BWD_DATA, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, dx, dw, dy, wsp, ws, 1, 0));
        download_tensor(&p.x, dx, gx);
        tbuf_free(dx), tbuf_free(wsp);
        dx = upload_tensor(&p.x, x);
        CHECK_OK(workspace_size(&p, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, &ws));
        wsp = tbuf_alloc(ws);
        CHECK_OK(execute(&p, BWD_FILTER, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, dx, dw, dy, wsp, ws, 1, 0));
        download_filter(&p.w, dw, gw);
        const double h = 1e-3;
        for (int t = 0; t < 6; t++) {
            long i = (long)(trand_u64() % (uint64_t)nx), j = (long)(trand_u64() % (uint64_t)nw);
            double keep = x[i];
            x[i] = keep + h;
            double up = loss(&p, x, w, g);
            x[i] = keep - h;
            double down = loss(&p, x, w, g);
            x[i] = keep;
            double fd = (up - down) / (2 * h);
            if (!CHECK(fabs(fd - gx[i]) <= 1e-7 * fmax(1, fabs(fd))))
                printf("      %s dx[%ld]: finite difference %.12g, backward data %.12g\n", shapes[picks[s]].name, i, fd, gx[i]);
            keep = w[j];
            w[j] = keep + h;
            up = loss(&p, x, w, g);
            w[j] = keep - h;
            down = loss(&p, x, w, g);
            w[j] = keep;
            fd = (up - down) / (2 * h);
            if (!CHECK(fabs(fd - gw[j]) <= 1e-7 * fmax(1, fabs(fd))))
                printf("      %s dw[%ld]: finite difference %.12g, backward filter %.12g\n", shapes[picks[s]].name, j, fd, gw[j]);
        }
        tbuf_free(dx), tbuf_free(dw), tbuf_free(dy), tbuf_free(wsp);
        free(x), free(w), free(g), free(gx), free(gw);
        free_problem(&p);
    }
}

/* ---- the reference entries: every direction through the plain loops alone ----------------------- */

/* A repeated call reuses its choice (ocd_conv_execute's memo), but still follows the switches:
   the same call with the entry that served it switched off runs another, and back again. */
TEST(conv_repeated_call_follows_the_switches)
{
    struct problem p;
    if (!make_problem(&p, &shapes[0], &float_configs[0], 0)) {
        free_problem(&p);
        return;
    }
    const int algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    const struct disable_list saved = disable_saved();
    char first[128];
    void *dx = tbuf_alloc(p.x.bytes), *dw = tbuf_alloc(p.w.bytes), *dy = tbuf_alloc(p.y.bytes);
    size_t ws_bytes = 0;
    CHECK_OK(workspace_size(&p, FWD, algo, &ws_bytes));
    size_t ws_cap = ws_bytes + ((size_t)1 << 20); /* room for the entry that serves it next */
    void *ws = tbuf_alloc(ws_cap);
    struct ran_impl r;
    CHECK_OK(execute_capturing(&p, FWD, algo, dx, dw, dy, ws, ws_cap, &r));
    snprintf(first, sizeof first, "%s", r.name);
    CHECK(first[0] != '\0');
    CHECK_OK(execute_capturing(&p, FWD, algo, dx, dw, dy, ws, ws_cap, &r));
    CHECK(strcmp(r.name, first) == 0);
    setenv("OPENCUDNN_DISABLE", first, 1);
    CHECK_OK(execute_capturing(&p, FWD, algo, dx, dw, dy, ws, ws_cap, &r));
    if (!CHECK(r.name[0] != '\0' && strcmp(r.name, first) != 0))
        printf("      (with %s switched off, %s ran)\n", first, r.name);
    disable_restore(&saved);
    CHECK_OK(execute_capturing(&p, FWD, algo, dx, dw, dy, ws, ws_cap, &r));
    CHECK(strcmp(r.name, first) == 0);
    /* the remembered workspace size still guards the call */
    if (ws_bytes > 0)
        CHECK_STATUS(execute(&p, FWD, algo, dx, dw, dy, ws, ws_bytes - 1, 1, 0), CUDNN_STATUS_BAD_PARAM);
    tbuf_free(ws), tbuf_free(dx), tbuf_free(dw), tbuf_free(dy);
    free_problem(&p);
}

TEST(conv_reference_entries_alone)
{
    const struct disable_list saved = disable_saved();
    /* switch off everything but the direct kernels: the heuristic then serves each GEMM-family
       algorithm with the reference entry */
    setenv("OPENCUDNN_DISABLE",
           "host:fwd_implicit_precomp_gemm,host:fwd_implicit_gemm,host:fwd_gemm,host:dgrad_implicit_precomp_gemm,"
           "host:dgrad_implicit_gemm,host:wgrad_gemm,host:wgrad_implicit_precomp_gemm,host:wgrad_implicit_gemm,"
           "cuda:fwd_gemm1x1*,cuda:fwd_igemm*,cuda:fwd_im2col*,cuda:dgrad_gemm1x1*,cuda:dgrad_igemm*,"
           "cuda:dgrad_im2col*,cuda:wgrad_gemm1x1*,cuda:wgrad_igemm*,cuda:wgrad_im2col*",
           1);
    static const int picks[] = {0, 3, 12};
    for (size_t s = 0; s < sizeof picks / sizeof picks[0]; s++)
        for (int d = FWD; d <= BWD_FILTER; d++) {
            struct problem p;
            char label[128];
            snprintf(label, sizeof label, "reference %d %s", d, shapes[picks[s]].name);
            if (make_problem(&p, &shapes[picks[s]], &float_configs[0], (int)s)) check_direction(&p, d, label);
            free_problem(&p);
        }
    disable_restore(&saved);
}

/* ---- descriptors --------------------------------------------------------------------------------- */

TEST_ONCE(conv_descriptor_set_get_and_defaults)
{
    cudnnConvolutionDescriptor_t c;
    CHECK_STATUS(cudnnCreateConvolutionDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(cudnnCreateConvolutionDescriptor(&c))) return;
    int groups = 0;
    cudnnMathType_t math = CUDNN_FMA_MATH;
    cudnnReorderType_t reorder = CUDNN_NO_REORDER;
    CHECK_OK(cudnnGetConvolutionGroupCount(c, &groups));
    CHECK(groups == 1);
    CHECK_OK(cudnnGetConvolutionMathType(c, &math));
    CHECK(math == CUDNN_DEFAULT_MATH);
    CHECK_OK(cudnnGetConvolutionReorderType(c, &reorder));
    CHECK(reorder == CUDNN_DEFAULT_REORDER);
    /* cudnnSetConvolution2dDescriptor: negative padding, stride or dilation <= 0, a bad mode */
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(c, -1, 0, 1, 1, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(c, 0, 0, 0, 1, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 0, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 1, (cudnnConvolutionMode_t)7, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolution2dDescriptor(NULL, 0, 0, 1, 1, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    int v[8];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t ct;
    /* never set: Get refuses */
    CHECK_STATUS(cudnnGetConvolution2dDescriptor(c, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &mode, &ct), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolution2dDescriptor(c, 0, 2, 3, 4, 5, 6, CUDNN_CONVOLUTION, CUDNN_DATA_HALF));
    CHECK_OK(cudnnGetConvolution2dDescriptor(c, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &mode, &ct));
    CHECK(v[0] == 0 && v[1] == 2 && v[2] == 3 && v[3] == 4 && v[4] == 5 && v[5] == 6);
    CHECK(mode == CUDNN_CONVOLUTION && ct == CUDNN_DATA_HALF);
    int pad[3] = {1, 2, 3}, stride[3] = {1, 1, 2}, dil[3] = {2, 1, 1}, len = 0, gp[3], gs[3], gd[3];
    CHECK_OK(cudnnSetConvolutionNdDescriptor(c, 3, pad, stride, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_DOUBLE));
    CHECK_OK(cudnnGetConvolutionNdDescriptor(c, 3, &len, gp, gs, gd, &mode, &ct));
    CHECK(len == 3 && gp[2] == 3 && gs[2] == 2 && gd[0] == 2 && mode == CUDNN_CROSS_CORRELATION && ct == CUDNN_DATA_DOUBLE);
    /* a 3-d descriptor has no 2-d view */
    CHECK_STATUS(cudnnGetConvolution2dDescriptor(c, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &mode, &ct), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolutionNdDescriptor(c, 0, pad, stride, dil, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolutionNdDescriptor(c, 3, pad, stride, dil, CUDNN_CONVOLUTION, CUDNN_DATA_INT8), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetConvolutionGroupCount(c, 0), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolutionGroupCount(c, 4));
    CHECK_OK(cudnnGetConvolutionGroupCount(c, &groups));
    CHECK(groups == 4);
    CHECK_STATUS(cudnnSetConvolutionMathType(c, (cudnnMathType_t)9), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolutionMathType(c, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
    CHECK_OK(cudnnGetConvolutionMathType(c, &math));
    CHECK(math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
    CHECK_STATUS(cudnnSetConvolutionReorderType(c, (cudnnReorderType_t)5), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolutionReorderType(c, CUDNN_NO_REORDER));
    CHECK_OK(cudnnGetConvolutionReorderType(c, &reorder));
    CHECK(reorder == CUDNN_NO_REORDER);
    CHECK_STATUS(cudnnGetConvolutionReorderType(c, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyConvolutionDescriptor(c));
    CHECK_OK(cudnnDestroyConvolutionDescriptor(NULL));
    CHECK_STATUS(cudnnSetConvolutionGroupCount(c, 1), CUDNN_STATUS_BAD_PARAM); /* destroyed */
}

TEST_ONCE(conv_forward_output_dims)
{
    struct ttensor x;
    struct tfilter w;
    cudnnConvolutionDescriptor_t c;
    int xd[4] = {2, 6, 11, 8}, wd[4] = {5, 3, 3, 2};
    if (!make_tensor(&x, CUDNN_DATA_FLOAT, L_NCHW, 4, xd) || !make_filter(&w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, wd)) return;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&c));
    CHECK_OK(cudnnSetConvolution2dDescriptor(c, 1, 0, 2, 3, 2, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    int n, k, h, wo;
    /* 6 channels = 3 per group x 2 groups: a mismatch without the group count */
    CHECK_STATUS(cudnnGetConvolution2dForwardOutputDim(c, x.desc, w.desc, &n, &k, &h, &wo), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetConvolutionGroupCount(c, 2));
    CHECK_OK(cudnnGetConvolution2dForwardOutputDim(c, x.desc, w.desc, &n, &k, &h, &wo));
    /* 1 + (11 + 2 - 5) / 2 = 5 and 1 + (8 - 2) / 3 = 3 */
    CHECK(n == 2 && k == 5 && h == 5 && wo == 3);
    int out[4];
    CHECK_OK(cudnnGetConvolutionNdForwardOutputDim(c, x.desc, w.desc, 4, out));
    CHECK(out[0] == 2 && out[1] == 5 && out[2] == 5 && out[3] == 3);
    CHECK_STATUS(cudnnGetConvolutionNdForwardOutputDim(c, x.desc, w.desc, 5, out), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetConvolution2dForwardOutputDim(c, x.desc, w.desc, NULL, &k, &h, &wo), CUDNN_STATUS_BAD_PARAM);
    /* a dilated filter larger than the padded input */
    CHECK_OK(cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 6, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_STATUS(cudnnGetConvolution2dForwardOutputDim(c, x.desc, w.desc, &n, &k, &h, &wo), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyConvolutionDescriptor(c);
    cudnnDestroyTensorDescriptor(x.desc);
    cudnnDestroyFilterDescriptor(w.desc);
}

/* ---- bad inputs: the documented status, and nothing written ------------------------------------- */

/* True when the device buffer still holds the 0xAB pattern. */
static bool untouched(const void *dev, size_t bytes)
{
    unsigned char *host = malloc(bytes);
    tbuf_download(host, dev, bytes);
    bool same = true;
    for (size_t i = 0; i < bytes; i++) same &= host[i] == 0xAB;
    free(host);
    return same;
}

static void *patterned(size_t bytes)
{
    unsigned char *host = malloc(bytes);
    memset(host, 0xAB, bytes);
    void *dev = tbuf_from(host, bytes);
    free(host);
    return dev;
}

TEST(conv_bad_inputs_exact_status_nothing_written)
{
    cudnnHandle_t h = test_handle();
    struct problem p;
    if (!make_problem(&p, &shapes[0], &float_configs[0], 0)) return; /* n2 c4 k6 5x5, 3x3 pad 1 */
    void *x = patterned(p.x.bytes), *w = patterned(p.w.bytes), *y = patterned(p.y.bytes);
    float one = 1, zero = 0;
    size_t ws_need = 0;
    CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, p.x.desc, p.w.desc, p.conv, p.y.desc,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &ws_need));
    void *ws = tbuf_alloc(ws_need);
#define FWD_CALL(algo, wsp, wsb, xd, wd, cd, yd)                                                \
    cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, wsp, wsb, &zero, yd, y)
    /* a workspace smaller than the algorithm needs: BAD_PARAM (the host's precomputed-index GEMM
       needs one; the CUDA reference kernel does not) */
    if (ws_need > 0) {
        CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, ws, ws_need - 1, p.x.desc, p.w.desc, p.conv,
                              p.y.desc),
                     CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, NULL, ws_need, p.x.desc, p.w.desc, p.conv,
                              p.y.desc),
                     CUDNN_STATUS_BAD_PARAM);
    } else {
        CHECK(test_backend[0] == 'c');
    }
    /* an algorithm whose documented restrictions exclude the problem: WINOGRAD_NONFUSED on 3x3
       with stride 2, FFT with dilation: NOT_SUPPORTED; an invalid enum: BAD_PARAM */
    cudnnConvolutionDescriptor_t strided;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&strided));
    CHECK_OK(cudnnSetConvolution2dDescriptor(strided, 1, 1, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    struct ttensor y3;
    int y3d[4] = {2, 6, 3, 3};
    make_tensor(&y3, CUDNN_DATA_FLOAT, L_NCHW, 4, y3d);
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, ws, ws_need, p.x.desc, p.w.desc, strided, y3.desc),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(FWD_CALL((cudnnConvolutionFwdAlgo_t)8, ws, ws_need, p.x.desc, p.w.desc, p.conv, p.y.desc), CUDNN_STATUS_BAD_PARAM);
    /* the output dims disagree with the formula: NOT_SUPPORTED for the forward */
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, p.w.desc, strided, p.y.desc),
                 CUDNN_STATUS_NOT_SUPPORTED);
    /* mismatched channels: x has 4, the filter 3 x 1 group */
    struct tfilter w3;
    int w3d[4] = {6, 3, 3, 3};
    make_filter(&w3, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, w3d);
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, w3.desc, p.conv, p.y.desc),
                 CUDNN_STATUS_BAD_PARAM);
    /* mismatched types: a double filter */
    struct tfilter wd;
    int wdd[4] = {6, 4, 3, 3};
    make_filter(&wd, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 4, wdd);
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, wd.desc, p.conv, p.y.desc),
                 CUDNN_STATUS_BAD_PARAM);
    /* float data with a double compute type: no such configuration */
    cudnnConvolutionDescriptor_t dbl;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&dbl));
    CHECK_OK(cudnnSetConvolution2dDescriptor(dbl, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_DOUBLE));
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, p.w.desc, dbl, p.y.desc),
                 CUDNN_STATUS_NOT_SUPPORTED);
    /* NULL data, NULL scaling factors */
    CHECK_STATUS(cudnnConvolutionForward(h, &one, p.x.desc, NULL, p.w.desc, w, p.conv, 0, NULL, 0, &zero, p.y.desc, y),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionForward(h, NULL, p.x.desc, x, p.w.desc, w, p.conv, 0, NULL, 0, &zero, p.y.desc, y),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionForward(NULL, &one, p.x.desc, x, p.w.desc, w, p.conv, 0, NULL, 0, &zero, p.y.desc, y),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(untouched(y, p.y.bytes));
    /* the data gradient: K not a multiple of the group count is NOT_SUPPORTED there (BAD_PARAM
       forward), dy dims off the formula are BAD_PARAM */
    cudnnConvolutionDescriptor_t g4;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&g4));
    CHECK_OK(cudnnSetConvolution2dDescriptor(g4, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetConvolutionGroupCount(g4, 4));
    struct tfilter w1;
    int w1d[4] = {6, 1, 3, 3};
    make_filter(&w1, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, w1d);
    CHECK_STATUS(cudnnConvolutionBackwardData(h, &one, w1.desc, w, p.y.desc, y, g4, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0,
                                              &zero, p.x.desc, x),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(FWD_CALL(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, p.x.desc, w1.desc, g4, p.y.desc),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionBackwardData(h, &one, p.w.desc, w, y3.desc, y, p.conv, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL,
                                              0, &zero, p.x.desc, x),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionBackwardFilter(h, &one, p.x.desc, x, y3.desc, y, p.conv, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
                                                NULL, 0, &zero, p.w.desc, w),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnConvolutionBackwardFilter(h, &one, p.x.desc, x, p.y.desc, y, p.conv,
                                                CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, NULL, 0, &zero, p.w.desc, w),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK(untouched(x, p.x.bytes));
    CHECK(untouched(w, p.w.bytes));
    CHECK(untouched(y, p.y.bytes));
    /* int8 data with an NCHW filter: the int8 configurations need NHWC (wrong filter layout) */
    struct ttensor xi, yi;
    struct tfilter wi;
    int xid[4] = {1, 4, 5, 5}, yid[4] = {1, 4, 5, 5}, wid[4] = {4, 4, 3, 3};
    make_tensor(&xi, CUDNN_DATA_INT8, L_NHWC, 4, xid);
    make_tensor(&yi, CUDNN_DATA_INT8, L_NHWC, 4, yid);
    make_filter(&wi, CUDNN_DATA_INT8, CUDNN_TENSOR_NCHW, 4, wid);
    cudnnConvolutionDescriptor_t ci;
    CHECK_OK(cudnnCreateConvolutionDescriptor(&ci));
    CHECK_OK(cudnnSetConvolution2dDescriptor(ci, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_INT32));
    CHECK_STATUS(cudnnConvolutionForward(h, &one, xi.desc, x, wi.desc, w, ci, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                         &zero, yi.desc, y),
                 CUDNN_STATUS_NOT_SUPPORTED);
    /* int8 data has no backward configuration */
    CHECK_STATUS(cudnnConvolutionBackwardData(h, &one, wi.desc, w, yi.desc, y, ci, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0,
                                              &zero, xi.desc, x),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK(untouched(x, p.x.bytes));
    CHECK(untouched(y, p.y.bytes));
#undef FWD_CALL
    cudnnDestroyTensorDescriptor(y3.desc), cudnnDestroyTensorDescriptor(xi.desc), cudnnDestroyTensorDescriptor(yi.desc);
    cudnnDestroyFilterDescriptor(w3.desc), cudnnDestroyFilterDescriptor(wd.desc), cudnnDestroyFilterDescriptor(w1.desc);
    cudnnDestroyFilterDescriptor(wi.desc);
    cudnnDestroyConvolutionDescriptor(strided), cudnnDestroyConvolutionDescriptor(dbl);
    cudnnDestroyConvolutionDescriptor(g4), cudnnDestroyConvolutionDescriptor(ci);
    tbuf_free(x), tbuf_free(w), tbuf_free(y), tbuf_free(ws);
    free_problem(&p);
}

/* ---- algorithm queries ---------------------------------------------------------------------------- */

static void check_perf_list(const struct perf *perf, int n, int requested, enum dir d, bool timed)
{
    int count = algo_count(d);
    CHECK(n >= 1 && n <= requested && n <= count);
    bool seen[16] = {false}, failing = false;
    for (int i = 0; i < n; i++) {
        CHECK(perf[i].algo >= 0 && perf[i].algo < count && !seen[perf[i].algo]);
        seen[perf[i].algo] = true;
        if (perf[i].status != CUDNN_STATUS_SUCCESS) failing = true;
        else CHECK(!failing); /* runnable algorithms come first */
        if (perf[i].status == CUDNN_STATUS_SUCCESS && timed) {
            CHECK(perf[i].time >= 0);
            if (i > 0 && perf[i - 1].status == CUDNN_STATUS_SUCCESS) CHECK(perf[i - 1].time <= perf[i].time);
        }
        CHECK(perf[i].determinism == CUDNN_DETERMINISTIC || perf[i].determinism == CUDNN_NON_DETERMINISTIC);
    }
}

TEST(conv_algorithm_queries)
{
    cudnnHandle_t h = test_handle();
    int count = 0;
    CHECK_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
    CHECK(count == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
    CHECK_OK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
    CHECK(count == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
    CHECK_OK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
    CHECK(count == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
    CHECK_STATUS(cudnnGetConvolutionForwardAlgorithmMaxCount(h, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetConvolutionForwardAlgorithmMaxCount(NULL, &count), CUDNN_STATUS_BAD_PARAM);
    struct problem p;
    if (!make_problem(&p, &shapes[0], &float_configs[0], 0)) return;
    for (int d = FWD; d <= BWD_FILTER; d++) {
        struct perf perf[16];
        int n = heuristic(&p, d, 3, perf);
        check_perf_list(perf, n, 3, d, false);
        n = heuristic(&p, d, 16, perf);
        check_perf_list(perf, n, 16, d, false);
        CHECK(n == algo_count(d));
        for (int i = 0; i < n; i++) {
            size_t bytes = 0;
            cudnnStatus_t s = workspace_size(&p, d, perf[i].algo, &bytes);
            CHECK(s == perf[i].status);
            if (s == CUDNN_STATUS_SUCCESS) CHECK(bytes == perf[i].memory);
            CHECK(perf[i].math == CUDNN_DEFAULT_MATH || test_backend[0] == 'c');
        }
    }
    /* CUDNN_CONV_WSCAP_DBG=0 (MiB): no algorithm may ask for a workspace */
    setenv("CUDNN_CONV_WSCAP_DBG", "0", 1);
    for (int d = FWD; d <= BWD_FILTER; d++) {
        struct perf capped[16];
        int n = heuristic(&p, d, 16, capped);
        for (int i = 0; i < n; i++) CHECK(capped[i].status != CUDNN_STATUS_SUCCESS || capped[i].memory == 0);
    }
    unsetenv("CUDNN_CONV_WSCAP_DBG");
    /* Find: timed, sorted, each runnable one really runs; the result is cached per problem */
    cudnnConvolutionFwdAlgoPerf_t fr[16], fr2[16];
    int n = 0, n2 = 0;
    CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, p.x.desc, p.w.desc, p.conv, p.y.desc, 16, &n, fr));
    struct perf perf[16];
    COPY_PERF(perf, fr, n);
    check_perf_list(perf, n, 16, FWD, true);
    CHECK(fr[0].status == CUDNN_STATUS_SUCCESS);
    CHECK_OK(cudnnFindConvolutionForwardAlgorithm(h, p.x.desc, p.w.desc, p.conv, p.y.desc, 16, &n2, fr2));
    CHECK(n2 == n && memcmp(fr, fr2, sizeof fr[0] * (size_t)n) == 0);
    cudnnConvolutionBwdDataAlgoPerf_t dr[16];
    CHECK_OK(cudnnFindConvolutionBackwardDataAlgorithm(h, p.w.desc, p.y.desc, p.conv, p.x.desc, 2, &n, dr));
    CHECK(n == 2 && dr[0].status == CUDNN_STATUS_SUCCESS);
    cudnnConvolutionBwdFilterAlgoPerf_t wr[16];
    CHECK_OK(cudnnFindConvolutionBackwardFilterAlgorithm(h, p.x.desc, p.y.desc, p.conv, p.w.desc, 16, &n, wr));
    COPY_PERF(perf, wr, n);
    check_perf_list(perf, n, 16, BWD_FILTER, true);
    /* FindEx without a workspace: algorithms needing one report ALLOC_FAILED, after the others */
    void *x = tbuf_alloc(p.x.bytes), *w = tbuf_alloc(p.w.bytes), *y = tbuf_alloc(p.y.bytes);
    void *zx = calloc(p.x.bytes, 1), *zw = calloc(p.w.bytes, 1);
    tbuf_upload(x, zx, p.x.bytes), tbuf_upload(w, zw, p.w.bytes);
    CHECK_OK(cudnnFindConvolutionForwardAlgorithmEx(h, p.x.desc, x, p.w.desc, w, p.conv, p.y.desc, y, 16, &n, fr, NULL, 0));
    bool saw_alloc = false;
    for (int i = 0; i < n; i++) {
        if (fr[i].status == CUDNN_STATUS_SUCCESS) CHECK(fr[i].memory == 0 && !saw_alloc);
        saw_alloc |= fr[i].status == CUDNN_STATUS_ALLOC_FAILED;
    }
    CHECK(saw_alloc || test_backend[0] == 'c'); /* the host GEMM algorithms need a workspace */
    CHECK_STATUS(cudnnFindConvolutionForwardAlgorithmEx(h, p.x.desc, NULL, p.w.desc, w, p.conv, p.y.desc, y, 16, &n, fr, NULL, 0),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnFindConvolutionForwardAlgorithm(h, p.x.desc, p.w.desc, p.conv, p.y.desc, 0, &n, fr), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetConvolutionForwardAlgorithm_v7(h, p.x.desc, p.w.desc, p.conv, p.y.desc, 4, NULL, fr),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p.x.desc, p.y.desc, p.conv, p.w.desc,
                                                                CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    free(zx), free(zw);
    tbuf_free(x), tbuf_free(w), tbuf_free(y);
    free_problem(&p);
}

/* ---- backward bias ----------------------------------------------------------------------------- */

TEST(conv_backward_bias)
{
    cudnnHandle_t h = test_handle();
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    for (size_t t = 0; t < 4; t++) {
        for (int rank = 4; rank <= 5; rank++) {
            int dyd[5] = {3, 5, 4, 3, 2}, dbd[5] = {1, 5, 1, 1, 1};
            struct ttensor dy, db;
            make_tensor(&dy, types[t], rank == 4 ? L_STRIDED : L_NHWC, rank, dyd);
            make_tensor(&db, types[t], L_NCHW, rank, dbd);
            long n = count_of(rank, dyd), per = n / (dyd[0] * dyd[1]);
            double *v = random_values(types[t], n, -1, 1), *old = random_values(types[t], 5, -1, 1), want[5];
            for (int k = 0; k < 5; k++) {
                double sum = 0;
                for (int i = 0; i < dyd[0]; i++)
                    for (long j = 0; j < per; j++) sum += v[((long)i * 5 + k) * per + j];
                want[k] = 2 * sum + 0.5 * old[k];
            }
            void *ddy = upload_tensor(&dy, v), *ddb = upload_tensor(&db, old);
            double a = 2, b = 0.5;
            float af = 2, bf = 0.5;
            bool dbl = types[t] == CUDNN_DATA_DOUBLE;
            CHECK_OK(cudnnConvolutionBackwardBias(h, dbl ? (void *)&a : &af, dy.desc, ddy, dbl ? (void *)&b : &bf, db.desc, ddb));
            double got[5];
            download_tensor(&db, ddb, got);
            tcompare(types[t], got, want, 5, ttolerance(types[t]) * 8 * (types[t] == CUDNN_DATA_HALF ? 4 : 1), "bias gradient");
            /* db must be 1 x C x 1 x 1: a wrong shape is BAD_PARAM and writes nothing */
            struct ttensor bad;
            int badd[5] = {1, 4, 1, 1, 1};
            make_tensor(&bad, types[t], L_NCHW, rank, badd);
            tbuf_poison(ddb, db.bytes);
            CHECK_STATUS(cudnnConvolutionBackwardBias(h, dbl ? (void *)&a : &af, dy.desc, ddy, dbl ? (void *)&b : &bf, bad.desc, ddb),
                         CUDNN_STATUS_BAD_PARAM);
            cudnnDestroyTensorDescriptor(bad.desc), cudnnDestroyTensorDescriptor(dy.desc), cudnnDestroyTensorDescriptor(db.desc);
            tbuf_free(ddy), tbuf_free(ddb), free(v), free(old);
        }
    }
}

/* ---- Im2Col and filter reordering ---------------------------------------------------------------- */

TEST(conv_im2col_matches_reference)
{
    cudnnHandle_t h = test_handle();
    static const int picks[] = {1, 2, 7}; /* strided asymmetric, dilated, CONVOLUTION mode */
    for (size_t s = 0; s < 3; s++) {
        struct problem p;
        if (!make_problem(&p, &shapes[picks[s]], &float_configs[0], (int)s)) continue;
        long nx = ref_conv_x_count(&p.r);
        long rows = (long)p.r.n * p.r.out[0] * p.r.out[1], cols = (long)p.r.c * p.r.filt[0] * p.r.filt[1];
        double *x = random_values(CUDNN_DATA_FLOAT, nx, -1, 1), *want = malloc(sizeof *want * (size_t)(rows * cols));
        ref_conv_im2col(&p.r, x, want);
        void *dx = upload_tensor(&p.x, x), *col = tbuf_alloc((size_t)(rows * cols) * 4);
        CHECK_OK(cudnnIm2Col(h, p.x.desc, dx, p.w.desc, p.conv, col));
        float *got = malloc((size_t)(rows * cols) * 4);
        tbuf_download(got, col, (size_t)(rows * cols) * 4);
        tcompare(CUDNN_DATA_FLOAT, got, want, rows * cols, 1e-30, shapes[picks[s]].name); /* exact */
        tbuf_free(dx), tbuf_free(col), free(x), free(want), free(got);
        free_problem(&p);
    }
    struct problem p3;
    if (make_problem(&p3, &shapes[11], &float_configs[0], 0)) {
        void *x = tbuf_alloc(p3.x.bytes), *col = patterned(64);
        CHECK_STATUS(cudnnIm2Col(h, p3.x.desc, x, p3.w.desc, p3.conv, col), CUDNN_STATUS_NOT_SUPPORTED); /* 3-D */
        CHECK(untouched(col, 64));
        tbuf_free(x), tbuf_free(col);
    }
    free_problem(&p3);
}

TEST(conv_reorder_filter_and_bias_round_trip)
{
    cudnnHandle_t h = test_handle();
    struct tfilter w;
    int wd[4] = {32, 32, 3, 3};
    if (!make_filter(&w, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, 4, wd)) return;
    double *v = random_values(CUDNN_DATA_INT8, 32 * 32 * 9, -100, 100), *bias = random_values(CUDNN_DATA_FLOAT, 32, -1, 1);
    void *src = upload_filter(&w, v), *dst = tbuf_alloc(w.bytes);
    float fb[32], got_b[32];
    for (int i = 0; i < 32; i++) fb[i] = (float)bias[i];
    void *bsrc = tbuf_from(fb, sizeof fb), *bdst = tbuf_alloc(sizeof fb);
    CHECK_OK(cudnnReorderFilterAndBias(h, w.desc, CUDNN_DEFAULT_REORDER, src, dst, 1, bsrc, bdst));
    signed char *a = malloc(w.bytes), *b = malloc(w.bytes);
    tbuf_download(a, src, w.bytes);
    tbuf_download(b, dst, w.bytes);
    CHECK(memcmp(a, b, w.bytes) == 0); /* opencudnn's reordered layout is the plain one */
    tbuf_download(got_b, bdst, sizeof got_b);
    CHECK(memcmp(fb, got_b, sizeof fb) == 0);
    CHECK_STATUS(cudnnReorderFilterAndBias(h, w.desc, (cudnnReorderType_t)3, src, dst, 0, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnReorderFilterAndBias(h, w.desc, CUDNN_DEFAULT_REORDER, src, dst, 1, NULL, bdst), CUDNN_STATUS_BAD_PARAM);
    free(a), free(b), free(v), free(bias);
    tbuf_free(src), tbuf_free(dst), tbuf_free(bsrc), tbuf_free(bdst);
    cudnnDestroyFilterDescriptor(w.desc);
}

/* ---- the fused convolution + bias + activation forward --------------------------------------------- */

static void check_bias_activation(const struct shape *sh, const struct config *cf, cudnnActivationMode_t mode,
                                  bool in_place, int variant)
{
    cudnnHandle_t h = test_handle();
    struct problem p;
    if (!make_problem(&p, sh, cf, variant)) {
        free_problem(&p);
        return;
    }
    cudnnActivationDescriptor_t act;
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnSetActivationDescriptor(act, mode, CUDNN_NOT_PROPAGATE_NAN, 0));
    bool int8 = is_int(cf->x);
    cudnnDataType_t bt = int8 ? CUDNN_DATA_FLOAT : cf->y;
    struct ttensor bias;
    int bd[5] = {1, sh->k, 1, 1, 1};
    make_tensor(&bias, bt, L_NCHW, sh->nsp + 2, bd);
    long nx = ref_conv_x_count(&p.r), nw = ref_conv_w_count(&p.r), ny = ref_conv_y_count(&p.r);
    double *x = random_values(cf->x, nx, int8 ? -4 : -1, int8 ? 4 : 1), *w = random_values(cf->w, nw, int8 ? -3 : -1, int8 ? 3 : 1);
    double *z = random_values(cf->y, ny, int8 ? -20 : -1, int8 ? 20 : 1), *b = random_values(bt, sh->k, -2, 2);
    double *want = malloc(sizeof *want * (size_t)ny), *got = malloc(sizeof(double) * (size_t)ny);
    double alpha1 = int8 && is_int(cf->y) ? 0.25 : 0.75, alpha2 = 0.5;
    ref_conv_fwd(&p.r, x, w, want);
    long per = ny / ((long)sh->n * sh->k);
    for (long i = 0; i < ny; i++) {
        double v = alpha1 * want[i] + alpha2 * z[i] + b[i / per % sh->k];
        want[i] = saturate_for(cf->y, mode == CUDNN_ACTIVATION_RELU && v < 0 ? 0 : v);
    }
    void *dx = upload_tensor(&p.x, x), *dw = upload_filter(&p.w, w), *dz = upload_tensor(&p.y, z);
    void *dy = in_place ? dz : tbuf_alloc(p.y.bytes), *db = upload_tensor(&bias, b);
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    size_t ws_bytes = 0;
    CHECK_OK(cudnnGetConvolutionForwardWorkspaceSize(h, p.x.desc, p.w.desc, p.conv, p.y.desc, algo, &ws_bytes));
    void *ws = tbuf_alloc(ws_bytes);
    float a1f = (float)alpha1, a2f = (float)alpha2;
    bool dbl = cf->x == CUDNN_DATA_DOUBLE;
    const void *a1 = dbl ? (const void *)&alpha1 : &a1f, *a2 = dbl ? (const void *)&alpha2 : &a2f;
    if (CHECK_OK(cudnnConvolutionBiasActivationForward(h, a1, p.x.desc, dx, p.w.desc, dw, p.conv, algo, ws, ws_bytes, a2,
                                                       p.y.desc, dz, bias.desc, db, act, p.y.desc, dy))) {
        download_tensor(&p.y, dy, got);
        char what[128];
        snprintf(what, sizeof what, "bias activation %s %s mode %d%s", sh->name, cf->name, (int)mode, in_place ? " in place" : "");
        /* the perf result is not at hand: any math type but FMA may have used tensor cores */
        tcompare(cf->y, got, want, ny, tconv_tolerance(cf->x, cf->y, cf->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
                 what);
    }
    if (mode == CUDNN_ACTIVATION_IDENTITY) /* IDENTITY is only enabled with IMPLICIT_PRECOMP_GEMM */
        CHECK_STATUS(cudnnConvolutionBiasActivationForward(h, a1, p.x.desc, dx, p.w.desc, dw, p.conv,
                                                           CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, a2, p.y.desc,
                                                           dz, bias.desc, db, act, p.y.desc, dy),
                     CUDNN_STATUS_NOT_SUPPORTED);
    cudnnDestroyActivationDescriptor(act);
    cudnnDestroyTensorDescriptor(bias.desc);
    tbuf_free(dx), tbuf_free(dw), tbuf_free(dz), tbuf_free(db), tbuf_free(ws);
    if (!in_place) tbuf_free(dy);
    free(x), free(w), free(z), free(b), free(want), free(got);
    free_problem(&p);
}

TEST(conv_bias_activation_forward)
{
    cudnnActivationDescriptor_t probe = NULL;
    cudnnStatus_t s = cudnnCreateActivationDescriptor(&probe);
    cudnnDestroyActivationDescriptor(probe);
    if (s == CUDNN_STATUS_NOT_SUPPORTED) {
        /* activation descriptors are not implemented in this build: only the argument checks */
        struct problem p;
        if (make_problem(&p, &shapes[0], &float_configs[0], 0)) {
            float one = 1;
            CHECK_STATUS(cudnnConvolutionBiasActivationForward(test_handle(), &one, p.x.desc, &one, p.w.desc, &one, p.conv,
                                                               CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, NULL, 0,
                                                               &one, p.y.desc, &one, p.y.desc, &one, NULL, p.y.desc, &one),
                         CUDNN_STATUS_BAD_PARAM);
        }
        free_problem(&p);
        printf("      (activation descriptors are not implemented: numeric checks skipped)\n");
        return;
    }
    for (int v = 0; v < 3; v++) {
        check_bias_activation(&shapes[v * 3], &float_configs[v == 2 ? 3 : v * 2], CUDNN_ACTIVATION_RELU, v == 1, v);
        check_bias_activation(&shapes[v * 4], &float_configs[v], CUDNN_ACTIVATION_IDENTITY, v == 0, v);
    }
    check_bias_activation(&shapes[12], &float_configs[0], CUDNN_ACTIVATION_RELU, false, 1);
    /* the implicit-GEMM epilogue (bias, z, ReLU) on the CUDA pass; in place and with groups too */
    check_bias_activation(&tc_shapes[0], &tc_configs[0], CUDNN_ACTIVATION_RELU, false, 1);
    check_bias_activation(&tc_shapes[1], &tc_configs[1], CUDNN_ACTIVATION_RELU, true, 0);
    check_bias_activation(&tc_shapes[4], &tc_configs[2], CUDNN_ACTIVATION_IDENTITY, false, 1);
    check_bias_activation(&tc_shapes[2], &tc_configs[3], CUDNN_ACTIVATION_RELU, true, 1);
    check_bias_activation(&int8_shapes[0], &int8_configs[0], CUDNN_ACTIVATION_RELU, false, 0);
    check_bias_activation(&int8_shapes[1], &int8_configs[4], CUDNN_ACTIVATION_RELU, true, 1);
}
