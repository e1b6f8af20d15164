/* pooling.h: the problem the pooling kernels take, the window math every backend shares, and the
   declarations of the pooling implementations.

   Windows: output o of a spatial dim covers inputs [o * stride - pad, o * stride - pad + window),
   clipped to the input; padding is never read (it counts as -inf for MAX and as 0 for the
   averages). MAX and MAX_DETERMINISTIC both take the first maximum in scan order (d, h, w), so
   the backward is deterministic in both modes; the NaN option works as fmax does
   (CUDNN_NOT_PROPAGATE_NAN: a NaN loses to any number) or propagates NaN. AVERAGE_COUNT_INCLUDE_
   PADDING divides by the number of the window's taps inside the padded input [-pad, in + pad):
   the window's volume, except for the windows of an output longer than the floor formula gives
   (ceil mode), which hang over the padding's end and count only their taps up to it, as Caffe
   and PyTorch do and as NVIDIA's library answers (ONNX Runtime pull request 29631 quotes its
   results: k 7, stride 3, pad 0 over 1..9 gives 4, 6.5, 8). AVERAGE_COUNT_EXCLUDE_PADDING divides
   by the number of inputs in the window. A window that holds no input at all (padding wider than
   the window, or an output tensor larger than the input needs) gives 0 and takes no gradient. */
#ifndef OCD_PROBLEM_POOLING_H
#define OCD_PROBLEM_POOLING_H

#include "core/handle.h"
#include "core/impl.h"
#include "core/hostdev.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_POOL_DIMS 3 /* spatial dims the kernels take (D, H, W) */

/* One pooling call, in three spatial dims (fewer are padded in front with extent 1, window 1).
   Forward reads x and writes y; backward reads x (MAX modes only) and dy, writes dx. x and dx
   share the strides xs, y and dy the strides ys (the API checks that); strides are [n, c, d, h, w]
   in scalars. */
struct ocd_pooling_problem {
    cudnnPoolingMode_t mode;
    bool propagate_nan;
    bool backward;
    cudnnDataType_t dtype;
    double alpha, beta;
    int64_t n, c;
    int64_t in[OCD_POOL_DIMS], out[OCD_POOL_DIMS];
    int window[OCD_POOL_DIMS], pad[OCD_POOL_DIMS], stride[OCD_POOL_DIMS];
    int64_t xs[5], ys[5];
    const void *x, *dy;
    void *y, *dx;
};

/* ---- implementations (table in src/ops/pooling.c) ------------------------------------------- */
cudnnStatus_t ocd_host_pooling(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
const char *ocd_cuda_pooling_fixed_nhwc_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_pooling_fixed_nhwc(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
const char *ocd_cuda_pooling_fixed_nchw_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_pooling_fixed_nchw(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
/* the tile kernels (pooling_tile.cu) are planned entries (core/impl.h) */
extern const struct ocd_impl_planned ocd_cuda_pooling_tile_nhwc_planned;
extern const struct ocd_impl_planned ocd_cuda_pooling_tile_nchw_planned;
const char *ocd_cuda_pooling_nhwc_vec_applies(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_pooling_nhwc_vec(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_pooling(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

/* ---- window math (core/hostdev.h) ------------------------------------------------------------ */

/* The inputs [*lo, *hi) that output o's window covers in one dim. */
OCD_HOST_DEVICE void ocd_pool_window(int64_t o, int stride, int pad, int window, int64_t in, int64_t *lo, int64_t *hi)
{
    int64_t s = o * stride - pad;
    *lo = s < 0 ? 0 : s;
    *hi = s + window < in ? s + window : in;
}

/* The taps of output o's window inside the padded input [-pad, in + pad) in one dim (the window
   starts at o * stride - pad >= -pad): the window's extent unless it hangs over the padding's end;
   0 for a window past it. AVERAGE_COUNT_INCLUDE_PADDING's divisor is the product over dims. */
OCD_HOST_DEVICE int64_t ocd_pool_padded_taps(int64_t o, int stride, int pad, int window, int64_t in)
{
    int64_t s = o * stride - pad, end = in + pad;
    int64_t hi = s + window < end ? s + window : end;
    return hi > s ? hi - s : 0;
}

/* floor(a / b) for b > 0. */
OCD_HOST_DEVICE int64_t ocd_pool_floordiv(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The outputs [*lo, *hi) whose windows cover input i in one dim. */
OCD_HOST_DEVICE void ocd_pool_covering(int64_t i, int stride, int pad, int window, int64_t out, int64_t *lo, int64_t *hi)
{
    /* o * stride - pad <= i < o * stride - pad + window */
    int64_t first = ocd_pool_floordiv(i + pad - window, stride) + 1, last = ocd_pool_floordiv(i + pad, stride);
    *lo = first < 0 ? 0 : first;
    *hi = last + 1 < out ? last + 1 : out;
}

/* True when v, met after `best` in scan order, becomes the window's maximum: NaN propagated, a
   larger number or a NaN beats a number and nothing beats a NaN; else a larger number beats a
   number, any number beats a NaN and a NaN beats nothing. !(v <= best) is v > best or either NaN:
   two comparisons an element in the kernels' scans. */
OCD_REAL_TEMPLATE OCD_HOST_DEVICE bool ocd_pool_better(OCD_R v, OCD_R best, bool propagate_nan)
{
    return (propagate_nan ? best == best : v == v) && !(v <= best);
}

#endif /* OCD_PROBLEM_POOLING_H */
