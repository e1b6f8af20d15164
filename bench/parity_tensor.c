/* parity_tensor.c: the parity probes of tensor descriptors and the tensor ops: views with negative
   strides (read by cudnnTransformTensor, cudnnAddTensor, cudnnOpTensor, cudnnReduceTensor, a ReLU
   and a softmax; written by cudnnScaleTensor and cudnnSetTensor) and with stride 0 on a dim
   longer than 1 (a broadcast written as strides) read by cudnnTransformTensor and
   cudnnAddTensor, the bytes cudnnGetTensorSizeInBytes counts for views that are not packed and
   for reversed ones, a dim of 0, the rounding and saturation of a float -> INT8 transform, and
   two calls the 8.2 text forbids whose result is defined: cudnnAddTensor of a float bias onto
   half data, cudnnOpTensor with C on B but not on A.
   The frame and the line format: parity.c. */
#include "parity.h"

/* ---- negative strides: a reversed view through the tensor ops and two NN ops ------------------------ */

/* What the probe does with the reversed view: Set alone, or a call reading (or writing) it. */
enum reversed_call { REV_SET, REV_TRANSFORM, REV_ADD, REV_OP_TENSOR, REV_SCALE, REV_FILL, REV_REDUCE, REV_RELU,
                     REV_SOFTMAX };

/* The call asked about on the view x (data at xd, element (0,0,0,0)) into y (packed, at out; for
   REV_REDUCE the dims 1 x 1 x 2 x 1); REV_SCALE and REV_FILL write x itself. A call before it
   that fails is reported (SETUP) and its status is then not read. */
static cudnnStatus_t reversed_call(struct probe_out *o, enum reversed_call call, cudnnTensorDescriptor_t x, float *xd,
                                   cudnnTensorDescriptor_t y, float *out)
{
    float alpha = 1, beta = call == REV_ADD ? 1 : 0, two = 2, fill = 7, zero = 0;
    switch (call) {
    case REV_TRANSFORM: return cudnnTransformTensor(parity_handle, &alpha, x, xd, &beta, y, out);
    case REV_ADD: return cudnnAddTensor(parity_handle, &alpha, x, xd, &beta, y, out);
    case REV_SCALE: return cudnnScaleTensor(parity_handle, x, xd, &two);
    case REV_FILL: return cudnnSetTensor(parity_handle, x, xd, &fill);
    case REV_OP_TENSOR: { /* A + 0 * B, B one zero */
        cudnnOpTensorDescriptor_t op;
        cudnnTensorDescriptor_t b = tensor4(o, 1, 1, 1, 1);
        if (b == NULL || !SETUP(o, cudnnCreateOpTensorDescriptor(&op))) return CUDNN_STATUS_SUCCESS;
        hold(o, op, HELD_OP_TENSOR);
        if (!SETUP(o, cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN)))
            return CUDNN_STATUS_SUCCESS;
        return cudnnOpTensor(parity_handle, op, &alpha, x, xd, &zero, b, dev_fill(o, 1, 0), &beta, y, out);
    }
    case REV_REDUCE: { /* ADD over W */
        cudnnReduceTensorDescriptor_t red;
        if (!SETUP(o, cudnnCreateReduceTensorDescriptor(&red))) return CUDNN_STATUS_SUCCESS;
        hold(o, red, HELD_REDUCE);
        if (!SETUP(o, cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT,
                                                     CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                                     CUDNN_32BIT_INDICES)))
            return CUDNN_STATUS_SUCCESS;
        size_t ws = 0;
        if (!SETUP(o, cudnnGetReductionWorkspaceSize(parity_handle, red, x, y, &ws))) return CUDNN_STATUS_SUCCESS;
        return cudnnReduceTensor(parity_handle, red, NULL, 0, dev_bytes(o, ws), ws, &alpha, x, xd, &beta, y, out);
    }
    case REV_RELU: {
        cudnnActivationDescriptor_t act;
        if (!SETUP(o, cudnnCreateActivationDescriptor(&act))) return CUDNN_STATUS_SUCCESS;
        hold(o, act, HELD_ACTIVATION);
        if (!SETUP(o, cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0)))
            return CUDNN_STATUS_SUCCESS;
        return cudnnActivationForward(parity_handle, act, &alpha, x, xd, &beta, y, out);
    }
    case REV_SOFTMAX: /* over C, H and W of the one image: each value's place shows */
        return cudnnSoftmaxForward(parity_handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &alpha, x, xd,
                                   &beta, y, out);
    case REV_SET: break;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* The view: 1 x 1 x 2 x 3 with strides 6, 6, -3, -1 over a buffer of 0..5, starting at its last
   element (both dims reversed); or (one_dim) 3 x 1 x 1 x 1 with stride -2 over 0..4, from its last.
   The output y (packed, poisoned; 10s where added to); the scale and the fill report the whole
   buffer of the view. */
static void negative_strides(struct probe_out *o, enum reversed_call call, bool one_dim)
{
    const int *dims = one_dim ? (const int[]){3, 1, 1, 1} : (const int[]){1, 1, 2, 3};
    const int *strides = one_dim ? (const int[]){-2, 1, 1, 1} : (const int[]){6, 6, -3, -1};
    const int span = one_dim ? 5 : 6;
    int n = one_dim ? 3 : 6;
    cudnnTensorDescriptor_t x;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&x))) return;
    hold(o, x, HELD_TENSOR);
    cudnnStatus_t s = cudnnSetTensorNdDescriptor(x, CUDNN_DATA_FLOAT, 4, dims, strides);
    if (call == REV_SET) {
        set_status(o, s);
        return;
    }
    if (!setup_ok(o, "cudnnSetTensorNdDescriptor", s)) return;
    float base[6] = {0, 1, 2, 3, 4, 5};
    float *buf = dev_floats(o, base, (size_t)span);
    cudnnTensorDescriptor_t y;
    if (call == REV_REDUCE) {
        n = 2;
        y = tensor4(o, 1, 1, 2, 1);
    } else {
        y = tensor_nd(o, 4, dims, one_dim ? (const int[]){1, 1, 1, 1} : (const int[]){6, 6, 3, 1});
    }
    if (y == NULL) return;
    float *out = call == REV_ADD ? dev_fill(o, (size_t)n, 10) : dev_fill(o, (size_t)n, NAN);
    s = reversed_call(o, call, x, buf + span - 1, y, out);
    if (o->status_set) return; /* a call before the one asked about failed */
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    if (call == REV_SCALE || call == REV_FILL) put(o, "buffer", buf, (size_t)span);
    else put(o, "y", out, (size_t)n);
}

static void negstride_set(struct probe_out *o) { negative_strides(o, REV_SET, false); }
static void negstride_transform(struct probe_out *o) { negative_strides(o, REV_TRANSFORM, false); }
static void negstride_addtensor(struct probe_out *o) { negative_strides(o, REV_ADD, false); }
static void negstride_transform_1d(struct probe_out *o) { negative_strides(o, REV_TRANSFORM, true); }
static void negstride_optensor(struct probe_out *o) { negative_strides(o, REV_OP_TENSOR, false); }
static void negstride_scale_1d(struct probe_out *o) { negative_strides(o, REV_SCALE, true); }
static void negstride_settensor_1d(struct probe_out *o) { negative_strides(o, REV_FILL, true); }
static void negstride_reduce(struct probe_out *o) { negative_strides(o, REV_REDUCE, false); }
static void negstride_relu(struct probe_out *o) { negative_strides(o, REV_RELU, false); }
static void negstride_softmax(struct probe_out *o) { negative_strides(o, REV_SOFTMAX, false); }

/* ---- stride 0: a broadcast view ----------------------------------------------------------------------- */

/* The view: 1 x 3 x 2 x 2 with strides 4, 0, 2, 1 over a buffer of 1..4 (the three channels one
   plane); transformed into a packed tensor (add: added onto a packed tensor of 10s, beta 1). The
   8.2 text asks for positive strides; ours takes 0 only on a dim of extent 1. */
static void broadcast_view(struct probe_out *o, bool add)
{
    const int dims[4] = {1, 3, 2, 2};
    cudnnTensorDescriptor_t x;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&x))) return;
    hold(o, x, HELD_TENSOR);
    if (!SETUP(o, cudnnSetTensorNdDescriptor(x, CUDNN_DATA_FLOAT, 4, dims, (const int[]){4, 0, 2, 1}))) return;
    cudnnTensorDescriptor_t y = tensor4(o, 1, 3, 2, 2);
    if (y == NULL) return;
    float *xd = dev_floats(o, (const float[]){1, 2, 3, 4}, 4), *yd = dev_fill(o, 12, add ? 10 : NAN);
    float alpha = 1, beta = add ? 1 : 0;
    cudnnStatus_t s = add ? cudnnAddTensor(parity_handle, &alpha, x, xd, &beta, y, yd)
                          : cudnnTransformTensor(parity_handle, &alpha, x, xd, &beta, y, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", yd, 12);
}

static void stride0_transform(struct probe_out *o) { broadcast_view(o, false); }
static void stride0_addtensor(struct probe_out *o) { broadcast_view(o, true); }

/* ---- sizes ------------------------------------------------------------------------------------------- */

/* A view of 2 x 3 x 4 x 5 floats, by its strides, and the key its size is put under. */
struct sized_view {
    const char *key;
    int strides[4];
};

/* cudnnGetTensorSizeInBytes of each view; the status is the first view's. */
static void sizes_of(struct probe_out *o, const struct sized_view views[], size_t count)
{
    for (size_t i = 0; i < count; i++) {
        cudnnTensorDescriptor_t d = tensor_nd(o, 4, (const int[]){2, 3, 4, 5}, views[i].strides);
        size_t bytes = 0;
        if (d == NULL) return;
        cudnnStatus_t s = cudnnGetTensorSizeInBytes(d, &bytes);
        if (i == 0) set_status(o, s);
        else if (!setup_ok(o, "cudnnGetTensorSizeInBytes", s)) return;
        if (s != CUDNN_STATUS_SUCCESS) return;
        put_number(o, views[i].key, (double)bytes);
    }
}

/* Views that are not packed: rows padded to 7 (strides 84, 28, 7, 1), images spaced by 100
   (100, 20, 5, 1), channels-last written as strides (60, 1, 15, 3), and every stride 1 (elements
   shared). The last element's end, or N times the outermost stride? */
static void size_in_bytes_views(struct probe_out *o)
{
    static const struct sized_view views[] = {
        {"bytes_padded_rows", {84, 28, 7, 1}},
        {"bytes_spaced_images", {100, 20, 5, 1}},
        {"bytes_channels_last", {60, 1, 15, 3}},
        {"bytes_overlapping", {1, 1, 1, 1}},
    };
    sizes_of(o, views, ARRAY_LEN(views));
}

/* Reversed views (negative strides, the pointer at element (0,0,0,0)): H and W reversed
   (60, 20, -5, -1), every dim reversed, and W reversed with padded rows (84, 28, 7, -1). The
   span from the lowest element to the highest (480, 480, 664 bytes), or something else? */
static void size_in_bytes_reversed(struct probe_out *o)
{
    static const struct sized_view views[] = {
        {"bytes_reversed_hw", {60, 20, -5, -1}},
        {"bytes_reversed_all", {-60, -20, -5, -1}},
        {"bytes_reversed_padded_rows", {84, 28, 7, -1}},
    };
    sizes_of(o, views, ARRAY_LEN(views));
}

/* cudnnSetTensor4dDescriptor with N = 0 (an empty batch); where taken, the size it counts. */
static void tensor_zero_dim(struct probe_out *o)
{
    cudnnTensorDescriptor_t d;
    size_t bytes = 0;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&d))) return;
    hold(o, d, HELD_TENSOR);
    cudnnStatus_t s = cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 0, 3, 4, 5);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS && SETUP(o, cudnnGetTensorSizeInBytes(d, &bytes)))
        put_number(o, "bytes", (double)bytes);
}

/* ---- conversions ------------------------------------------------------------------------------------ */

/* cudnnTransformTensor from float to plain INT8 (1 x 1 x 1 x 12, alpha 1, beta 0): halves (to
   nearest even, or away from 0?), values past the range (saturated, or wrapped?), NaN and the
   infinities. */
static void transform_to_int8(struct probe_out *o)
{
    enum { N = 12 };
    static const float values[N] = {2.5f, -2.5f, 3.5f, 0.5f, -0.5f, 1.49f, 127.6f, 300, -300, NAN, INFINITY, -INFINITY};
    cudnnTensorDescriptor_t x = tensor4(o, 1, 1, 1, N), y = x ? tensor4_as(o, CUDNN_DATA_INT8, 1, 1, 1, N) : NULL;
    if (y == NULL) return;
    float *xd = dev_floats(o, values, N);
    void *yd = dev_poison(o, CUDNN_DATA_INT8, N);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnTransformTensor(parity_handle, &alpha, x, xd, &beta, y, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put_as(o, "y", yd, N, CUDNN_DATA_INT8);
}

/* ---- calls the 8.2 text forbids, with a defined result ------------------------------------------------- */

/* cudnnAddTensor of a float 1x3x1x1 bias onto half 1x3x2x2 data (alpha 1, beta 1): the text says
   BAD_PARAM for different types; ours converts (docs/compatibility.md). */
static void addtensor_float_onto_half(struct probe_out *o)
{
    cudnnTensorDescriptor_t a = tensor4(o, 1, 3, 1, 1), c = a ? tensor4_as(o, CUDNN_DATA_HALF, 1, 3, 2, 2) : NULL;
    if (c == NULL) return;
    double prior[12];
    for (int i = 0; i < 12; i++) prior[i] = uniform(o, -1, 1);
    float *ad = dev_floats(o, (const float[]){0.5f, -1.25f, 3}, 3);
    void *cd = dev_as(o, CUDNN_DATA_HALF, prior, 12);
    float alpha = 1, beta = 1;
    cudnnStatus_t s = cudnnAddTensor(parity_handle, &alpha, a, ad, &beta, c, cd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put_as(o, "c", cd, 12, CUDNN_DATA_HALF);
}

/* cudnnOpTensor ADD (alpha1 1, alpha2 2, beta 0) on 1x1x2x3 with C the buffer of B and A another:
   the text asks A to be C too when B is; element by element the result is defined. */
static void optensor_c_on_b(struct probe_out *o)
{
    cudnnTensorDescriptor_t t = tensor4(o, 1, 1, 2, 3);
    cudnnOpTensorDescriptor_t op;
    if (t == NULL || !SETUP(o, cudnnCreateOpTensorDescriptor(&op))) return;
    hold(o, op, HELD_OP_TENSOR);
    if (!SETUP(o, cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN)))
        return;
    float *a = dev_random(o, 6, -1, 1), *b = dev_random(o, 6, -1, 1);
    float alpha1 = 1, alpha2 = 2, beta = 0;
    cudnnStatus_t s = cudnnOpTensor(parity_handle, op, &alpha1, t, a, &alpha2, t, b, &beta, t, b);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "c", b, 6);
}

const struct probe parity_tensor_probes[] = {
    {"negstride_set", negstride_set},
    {"negstride_transform", negstride_transform},
    {"negstride_addtensor", negstride_addtensor},
    {"negstride_transform_1d", negstride_transform_1d},
    {"negstride_optensor", negstride_optensor},
    {"negstride_scale_1d", negstride_scale_1d},
    {"negstride_settensor_1d", negstride_settensor_1d},
    {"negstride_reduce", negstride_reduce},
    {"negstride_relu", negstride_relu},
    {"negstride_softmax", negstride_softmax},
    {"stride0_transform", stride0_transform},
    {"stride0_addtensor", stride0_addtensor},
    {"size_in_bytes_views", size_in_bytes_views},
    {"size_in_bytes_reversed", size_in_bytes_reversed},
    {"tensor_zero_dim", tensor_zero_dim},
    {"transform_to_int8", transform_to_int8},
    {"addtensor_float_onto_half", addtensor_float_onto_half},
    {"optensor_c_on_b", optensor_c_on_b},
};
const size_t parity_tensor_count = ARRAY_LEN(parity_tensor_probes);
