/* parity_conv.c: the parity probes of the convolution: a plain forward's numbers, and the edges
   the 8.2 text leaves open: padding larger than the filter, a dilated convolution through
   cudnnFindConvolutionForwardAlgorithm, cudnnGetConvolutionForwardAlgorithm_v7 asked for no
   result, a group count that does not divide the channels, and INT8x32's filter reordering (the
   bytes cudnnReorderFilterAndBias writes, and what each reorder type convolves). The frame and
   the line format: parity.c. */
#include "parity.h"

/* One 2-D cross-correlation, float, FMA math: x and w (NCHW) from dims, square pad, stride and
   dilation, groups. */
struct conv {
    int x[4], w[4];
    int pad, stride, dilation, groups;
};

/* The first algorithm cudnnFindConvolutionForwardAlgorithm reports as successful. */
static bool find_forward(struct probe_out *o, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                         cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t *algo)
{
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    if (!SETUP(o, cudnnFindConvolutionForwardAlgorithm(parity_handle, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                       &returned, perf)))
        return false;
    for (int i = 0; i < returned; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) {
            *algo = perf[i].algo;
            return true;
        }
    return setup_ok(o, "cudnnFindConvolutionForwardAlgorithm (no successful result)", CUDNN_STATUS_NOT_SUPPORTED);
}

/* The forward of c with algo (find: the first Find reports successful, shown), y shaped by
   cudnnGetConvolution2dForwardOutputDim: its status and y. */
static void conv_forward(struct probe_out *o, const struct conv *c, cudnnConvolutionFwdAlgo_t algo, bool find)
{
    cudnnTensorDescriptor_t x = tensor4(o, c->x[0], c->x[1], c->x[2], c->x[3]);
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    if (x == NULL || !SETUP(o, cudnnCreateFilterDescriptor(&w))) return;
    hold(o, w, HELD_FILTER);
    const int *k = c->w;
    if (!SETUP(o, cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k[0], k[1], k[2], k[3]))) return;
    if (!SETUP(o, cudnnCreateConvolutionDescriptor(&conv))) return;
    hold(o, conv, HELD_CONV);
    if (!SETUP(o, cudnnSetConvolution2dDescriptor(conv, c->pad, c->pad, c->stride, c->stride, c->dilation, c->dilation,
                                                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)))
        return;
    if (!SETUP(o, cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH))) return;
    if (c->groups != 1 && !SETUP(o, cudnnSetConvolutionGroupCount(conv, c->groups))) return;
    int yd4[4];
    if (!SETUP(o, cudnnGetConvolution2dForwardOutputDim(conv, x, w, &yd4[0], &yd4[1], &yd4[2], &yd4[3]))) return;
    cudnnTensorDescriptor_t y = tensor4(o, yd4[0], yd4[1], yd4[2], yd4[3]);
    if (y == NULL || (find && !find_forward(o, x, w, conv, y, &algo))) return;
    size_t ws = 0;
    if (!SETUP(o, cudnnGetConvolutionForwardWorkspaceSize(parity_handle, x, w, conv, y, algo, &ws))) return;
    const size_t nx = (size_t)c->x[0] * c->x[1] * c->x[2] * c->x[3], nw = (size_t)c->w[0] * c->w[1] * c->w[2] * c->w[3];
    const size_t ny = (size_t)yd4[0] * yd4[1] * yd4[2] * yd4[3];
    float *xd = dev_random(o, nx, -1, 1), *wd = dev_random(o, nw, -1, 1), *yd = dev_fill(o, ny, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnConvolutionForward(parity_handle, &alpha, x, xd, w, wd, conv, algo, dev_bytes(o, ws), ws,
                                              &beta, y, yd);
    set_status(o, s);
    if (find) put_number(o, "info_algo", (double)algo);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", yd, ny);
}

/* x 2x3x7x7, w 4x3x3x3, pad 1, stride 2, IMPLICIT_GEMM. */
static void conv_fwd_implicit_gemm(struct probe_out *o)
{
    conv_forward(o, &(struct conv){{2, 3, 7, 7}, {4, 3, 3, 3}, 1, 2, 1, 1}, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                 false);
}

/* Pad 4 around a 3x3 filter (x 1x2x4x4 -> y 1x3x10x10, the outer ring of outputs all padding):
   taken, by IMPLICIT_GEMM? */
static void conv_pad_over_filter(struct probe_out *o)
{
    conv_forward(o, &(struct conv){{1, 2, 4, 4}, {3, 2, 3, 3}, 4, 1, 1, 1}, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                 false);
}

/* Dilation 2 (x 1x2x9x9, w 3x2x3x3, pad 2) through cudnnFindConvolutionForwardAlgorithm, then the
   forward with the first algorithm it found working (shown, not judged). */
static void conv_find_dilated(struct probe_out *o)
{
    conv_forward(o, &(struct conv){{1, 2, 9, 9}, {3, 2, 3, 3}, 2, 1, 2, 1}, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                 true);
}

/* Group count 2 over 3 channels (w 4x1x3x3, as C / groups rounds down; x 1x3x5x5, pad 1): which
   call refuses it, the output-dim query or the forward? */
static void conv_groups_not_dividing(struct probe_out *o)
{
    conv_forward(o, &(struct conv){{1, 3, 5, 5}, {4, 1, 3, 3}, 1, 1, 1, 2}, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                 false);
}

/* cudnnGetConvolutionForwardAlgorithm_v7 with requestedAlgoCount 0 (x 1x2x5x5, w 3x2x3x3, pad 1):
   BAD_PARAM, or SUCCESS with none returned? returnedAlgoCount (poisoned to -1) read back. */
static void conv_get_v7_zero_requested(struct probe_out *o)
{
    cudnnTensorDescriptor_t x = tensor4(o, 1, 2, 5, 5), y = x ? tensor4(o, 1, 3, 5, 5) : NULL;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    if (y == NULL || !SETUP(o, cudnnCreateFilterDescriptor(&w))) return;
    hold(o, w, HELD_FILTER);
    if (!SETUP(o, cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, 2, 3, 3))) return;
    if (!SETUP(o, cudnnCreateConvolutionDescriptor(&conv))) return;
    hold(o, conv, HELD_CONV);
    if (!SETUP(o, cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)))
        return;
    cudnnConvolutionFwdAlgoPerf_t perf[1];
    int returned = -1;
    cudnnStatus_t s = cudnnGetConvolutionForwardAlgorithm_v7(parity_handle, x, w, conv, y, 0, &returned, perf);
    set_status(o, s);
    put_number(o, "returned", returned);
}

/* ---- INT8x32: cudnnReorderFilterAndBias and the convolution's reorder type ---------------------
   NVIDIA's reorder permutes an INT8x32 filter (and its float bias) into the order its kernels
   read; a convolution set to CUDNN_NO_REORDER reads that order, one at CUDNN_DEFAULT_REORDER the
   plain NCHW_VECT_C layout. Ours copies, and reads the plain layout under both
   (docs/compatibility.md). */

/* A held INT8x32 NCHW_VECT_C tensor (n, c, h, w) or filter (k, c, r, s); NULL after a SETUP
   failure. */
static cudnnTensorDescriptor_t tensor_x32(struct probe_out *o, int n, int c, int h, int w)
{
    cudnnTensorDescriptor_t d = NULL;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&d))) return NULL;
    hold(o, d, HELD_TENSOR);
    if (!SETUP(o, cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x32, n, c, h, w))) return NULL;
    return d;
}

static cudnnFilterDescriptor_t filter_x32(struct probe_out *o, int k, int c, int r, int s)
{
    cudnnFilterDescriptor_t d = NULL;
    if (!SETUP(o, cudnnCreateFilterDescriptor(&d))) return NULL;
    hold(o, d, HELD_FILTER);
    if (!SETUP(o, cudnnSetFilter4dDescriptor(d, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, k, c, r, s))) return NULL;
    return d;
}

/* The permutation of cudnnReorderFilterAndBias (CUDNN_DEFAULT_REORDER) on a 32 x 64 x 1 x 2
   INT8x32 filter (4096 bytes: four blocks of 8 filters, two of 32 channels, two taps): the filter
   holds its own byte offsets, the low byte (minus 128) in one call and the high byte in another,
   so that reordered byte d came from offset 256 (hi[d]) + lo[d] + 128; keys lo0..lo15 and
   hi0..hi15 are the reordered bytes 256 at a time. The float bias 0, 1, ..., 31 is reordered with
   the first call (key bias). Ours: the identity. */
static void conv_reorder_filter_int8x32(struct probe_out *o)
{
    enum { K = 32, BYTES = 4096, KEYS = BYTES / FULL_VALUES };
    cudnnFilterDescriptor_t w = filter_x32(o, K, 64, 1, 2);
    if (w == NULL) return;
    static double v[BYTES];
    double b[K];
    for (int j = 0; j < K; j++) b[j] = j;
    float *bias = dev_as(o, CUDNN_DATA_FLOAT, b, K), *rbias = dev_fill(o, K, NAN);
    void *lo = dev_poison(o, CUDNN_DATA_INT8, BYTES), *hi = dev_poison(o, CUDNN_DATA_INT8, BYTES);
    for (int i = 0; i < BYTES; i++) v[i] = (i & 255) - 128;
    cudnnStatus_t s = cudnnReorderFilterAndBias(parity_handle, w, CUDNN_DEFAULT_REORDER,
                                                dev_as(o, CUDNN_DATA_INT8, v, BYTES), lo, 1, bias, rbias);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    for (int i = 0; i < BYTES; i++) v[i] = i >> 8;
    if (!SETUP(o, cudnnReorderFilterAndBias(parity_handle, w, CUDNN_DEFAULT_REORDER,
                                            dev_as(o, CUDNN_DATA_INT8, v, BYTES), hi, 0, NULL, NULL)))
        return;
    for (int part = 0; part < 2; part++)
        for (int k = 0; k < KEYS; k++) {
            char key[8];
            snprintf(key, sizeof key, "%s%d", part ? "hi" : "lo", k);
            put_as(o, key, (const signed char *)(part ? hi : lo) + k * FULL_VALUES, FULL_VALUES, CUDNN_DATA_INT8);
        }
    put(o, "bias", rbias, K);
}

/* An INT8x32 forward (x 1x64x2x2, w 32x64x1x1, INT32 compute, tensor-op math,
   IMPLICIT_PRECOMP_GEMM, alpha 1, beta 0; x and w in -2..2, the same in each probe) with the
   filter as given (reorder false) or passed through cudnnReorderFilterAndBias first, under the
   reorder type `type`: its status and y. */
static void conv_int8x32_reorder(struct probe_out *o, bool reorder, cudnnReorderType_t type)
{
    enum { NX = 64 * 2 * 2, NW = 32 * 64, NY = 32 * 2 * 2 };
    cudnnTensorDescriptor_t x = tensor_x32(o, 1, 64, 2, 2), y = x ? tensor_x32(o, 1, 32, 2, 2) : NULL;
    cudnnFilterDescriptor_t w = y ? filter_x32(o, 32, 64, 1, 1) : NULL;
    cudnnConvolutionDescriptor_t conv;
    if (w == NULL || !SETUP(o, cudnnCreateConvolutionDescriptor(&conv))) return;
    hold(o, conv, HELD_CONV);
    if (!SETUP(o, cudnnSetConvolution2dDescriptor(conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_INT32)))
        return;
    if (!SETUP(o, cudnnSetConvolutionMathType(conv, CUDNN_TENSOR_OP_MATH))) return;
    if (!SETUP(o, cudnnSetConvolutionReorderType(conv, type))) return;
    o->rng = hash_string("conv_int8x32"); /* one set of inputs for the three probes */
    static double xv[NX], wv[NW];
    for (int i = 0; i < NX; i++) xv[i] = floor(uniform(o, -2, 3));
    for (int i = 0; i < NW; i++) wv[i] = floor(uniform(o, -2, 3));
    void *xd = dev_as(o, CUDNN_DATA_INT8, xv, NX), *wd = dev_as(o, CUDNN_DATA_INT8, wv, NW);
    void *yd = dev_poison(o, CUDNN_DATA_INT8, NY);
    if (reorder) {
        void *rw = dev_poison(o, CUDNN_DATA_INT8, NW);
        if (!SETUP(o, cudnnReorderFilterAndBias(parity_handle, w, CUDNN_DEFAULT_REORDER, wd, rw, 0, NULL, NULL)))
            return;
        wd = rw;
    }
    const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    size_t ws = 0;
    if (!SETUP(o, cudnnGetConvolutionForwardWorkspaceSize(parity_handle, x, w, conv, y, algo, &ws))) return;
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnConvolutionForward(parity_handle, &alpha, x, xd, w, wd, conv, algo, dev_bytes(o, ws), ws,
                                              &beta, y, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put_as(o, "y", yd, NY, CUDNN_DATA_INT8);
}

/* The plain filter under CUDNN_DEFAULT_REORDER: the convolution of the filter, on both. */
static void conv_int8x32_plain_default(struct probe_out *o)
{
    conv_int8x32_reorder(o, false, CUDNN_DEFAULT_REORDER);
}

/* The reordered filter under CUDNN_NO_REORDER (NVIDIA's conv_sample): the same y as the plain
   filter's, on both. */
static void conv_int8x32_reordered_no_reorder(struct probe_out *o)
{
    conv_int8x32_reorder(o, true, CUDNN_NO_REORDER);
}

/* The reordered filter under CUDNN_DEFAULT_REORDER (what bench/ops_conv.c once did): ours gives
   the plain filter's y; NVIDIA's, that of the permuted filter? */
static void conv_int8x32_reordered_default(struct probe_out *o)
{
    conv_int8x32_reorder(o, true, CUDNN_DEFAULT_REORDER);
}

const struct probe parity_conv_probes[] = {
    {"conv_fwd_implicit_gemm", conv_fwd_implicit_gemm},
    {"conv_pad_over_filter", conv_pad_over_filter},
    {"conv_find_dilated", conv_find_dilated},
    {"conv_groups_not_dividing", conv_groups_not_dividing},
    {"conv_get_v7_zero_requested", conv_get_v7_zero_requested},
    {"conv_reorder_filter_int8x32", conv_reorder_filter_int8x32},
    {"conv_int8x32_plain_default", conv_int8x32_plain_default},
    {"conv_int8x32_reordered_no_reorder", conv_int8x32_reordered_no_reorder},
    {"conv_int8x32_reordered_default", conv_int8x32_reordered_default},
};
const size_t parity_conv_count = ARRAY_LEN(parity_conv_probes);
