/* parity_conv.c: the parity probes of the convolution: a plain forward's numbers, and the edges
   the 8.2 text leaves open: padding larger than the filter, a dilated convolution through
   cudnnFindConvolutionForwardAlgorithm, cudnnGetConvolutionForwardAlgorithm_v7 asked for no
   result, and a group count that does not divide the channels. The frame and the line format:
   parity.c. */
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

const struct probe parity_conv_probes[] = {
    {"conv_fwd_implicit_gemm", conv_fwd_implicit_gemm},
    {"conv_pad_over_filter", conv_pad_over_filter},
    {"conv_find_dilated", conv_find_dilated},
    {"conv_groups_not_dividing", conv_groups_not_dividing},
    {"conv_get_v7_zero_requested", conv_get_v7_zero_requested},
};
const size_t parity_conv_count = ARRAY_LEN(parity_conv_probes);
