/* parity_nn.c: the parity probes of the neural-network layers of ops_infer/ops_train: ReLU and max
   pooling on NaN (NOT_PROPAGATE_NAN against PROPAGATE_NAN) and ReLU of -0; pooling's output dims
   for a window past the input, average windows over padding alone, INT8 averages' rounding;
   softmax (numbers, LOG on infinities, a 3-D tensor); LRN (numbers, an even window, half data
   whose squares overflow half); batch-norm training (numbers, epsilon 0 on a constant channel,
   a batch of one value per channel); dropout (sizes, probability 1). The frame and the line
   format: parity.c. */
#include "parity.h"

/* ---- activation ---------------------------------------------------------------------------------------- */

/* ReLU forward (coefficient 0) of NaN, -0, 0, the infinities and a few numbers, with nan as the
   NaN option: y, and which outputs are -0 (y == 0 with the sign bit). */
static void relu_nan(struct probe_out *o, cudnnNanPropagation_t nan)
{
    enum { N = 8 };
    static const float values[N] = {NAN, -0.0f, 0.0f, -INFINITY, INFINITY, -1.5f, 2.5f, 1e-3f};
    cudnnTensorDescriptor_t x = tensor4(o, 1, 1, 1, N);
    cudnnActivationDescriptor_t act;
    if (x == NULL || !SETUP(o, cudnnCreateActivationDescriptor(&act))) return;
    hold(o, act, HELD_ACTIVATION);
    if (!SETUP(o, cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, nan, 0.0))) return;
    float *xd = dev_floats(o, values, N), *yd = dev_fill(o, N, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnActivationForward(parity_handle, act, &alpha, x, xd, &beta, x, yd);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    put(o, "y", yd, N);
    double y[N], negative_zero[N];
    read_floats(yd, y, N);
    for (int i = 0; i < N; i++) negative_zero[i] = y[i] == 0 && signbit(y[i]);
    put_host(o, "negative_zero", negative_zero, N);
}

static void relu_nan_not_propagate(struct probe_out *o) { relu_nan(o, CUDNN_NOT_PROPAGATE_NAN); }
static void relu_nan_propagate(struct probe_out *o) { relu_nan(o, CUDNN_PROPAGATE_NAN); }

/* ---- pooling ----------------------------------------------------------------------------------------------- */

/* A 2-D pooling forward: x (NCHW, packed) of type, y of the dims cudnnGetPooling2dForwardOutputDim
   gives; x holds values, or (NULL) random floats in [-1, 1] from the probe's stream. */
struct pool {
    cudnnPoolingMode_t mode;
    cudnnNanPropagation_t nan;
    int window[2], pad[2], stride[2];
    int x[4];
    cudnnDataType_t type;
};

static void pool_forward(struct probe_out *o, const struct pool *p, const double *values)
{
    cudnnTensorDescriptor_t x = tensor4_as(o, p->type, p->x[0], p->x[1], p->x[2], p->x[3]);
    cudnnPoolingDescriptor_t pool;
    if (x == NULL || !SETUP(o, cudnnCreatePoolingDescriptor(&pool))) return;
    hold(o, pool, HELD_POOL);
    if (!SETUP(o, cudnnSetPooling2dDescriptor(pool, p->mode, p->nan, p->window[0], p->window[1], p->pad[0], p->pad[1],
                                              p->stride[0], p->stride[1])))
        return;
    int yd4[4];
    if (!SETUP(o, cudnnGetPooling2dForwardOutputDim(pool, x, &yd4[0], &yd4[1], &yd4[2], &yd4[3]))) return;
    cudnnTensorDescriptor_t y = tensor4_as(o, p->type, yd4[0], yd4[1], yd4[2], yd4[3]);
    if (y == NULL) return;
    const size_t nx = (size_t)p->x[0] * p->x[1] * p->x[2] * p->x[3], ny = (size_t)yd4[0] * yd4[1] * yd4[2] * yd4[3];
    double *random = NULL;
    if (values == NULL) {
        if ((random = malloc(nx * sizeof(double))) == NULL) die("out of host memory");
        for (size_t i = 0; i < nx; i++) random[i] = (float)uniform(o, -1, 1);
    }
    void *xd = dev_as(o, p->type, values ? values : random, nx), *yd = dev_poison(o, p->type, ny);
    free(random);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnPoolingForward(parity_handle, pool, &alpha, x, xd, &beta, y, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put_as(o, "y", yd, ny, p->type);
}

/* Average pooling, window 3, pad 1, stride 2, on 1x1x5x5 -> 1x1x3x3. */
static void pool_avg_include_pad(struct probe_out *o)
{
    pool_forward(o, &(struct pool){CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_NOT_PROPAGATE_NAN, {3, 3}, {1, 1},
                                   {2, 2}, {1, 1, 5, 5}, CUDNN_DATA_FLOAT}, NULL);
}
static void pool_avg_exclude_pad(struct probe_out *o)
{
    pool_forward(o, &(struct pool){CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_NOT_PROPAGATE_NAN, {3, 3}, {1, 1},
                                   {2, 2}, {1, 1, 5, 5}, CUDNN_DATA_FLOAT}, NULL);
}

/* Max pooling 2x2, stride 2, of a 4x4 image whose windows hold: NaN first, NaN last, only NaN, no
   NaN (-inf among them). */
static void maxpool_nan(struct probe_out *o, cudnnNanPropagation_t nan)
{
    static const double values[16] = {NAN, 1, 5, 6, 2, 3, 7, NAN, NAN, NAN, -INFINITY, -2, NAN, NAN, -3, -INFINITY};
    pool_forward(o, &(struct pool){CUDNN_POOLING_MAX, nan, {2, 2}, {0, 0}, {2, 2}, {1, 1, 4, 4}, CUDNN_DATA_FLOAT},
                 values);
}

static void maxpool_nan_not_propagate(struct probe_out *o) { maxpool_nan(o, CUDNN_NOT_PROPAGATE_NAN); }
static void maxpool_nan_propagate(struct probe_out *o) { maxpool_nan(o, CUDNN_PROPAGATE_NAN); }

/* EXCLUDE_PADDING average pooling, window 2, pad 2, stride 1 on 1x1x2x2: the corner windows hold
   padding alone (nothing to divide by). Is pad >= window taken; what do those windows give? */
static void pool_avg_exclude_only_padding(struct probe_out *o)
{
    pool_forward(o, &(struct pool){CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_NOT_PROPAGATE_NAN, {2, 2}, {2, 2},
                                   {1, 1}, {1, 1, 2, 2}, CUDNN_DATA_FLOAT}, NULL);
}

/* Average pooling of plain INT8 data, window 1x2, stride 1x2: pairs whose means are 1.5, 2.5,
   -1.5, -2.5 and 126.5 (rounded to nearest even, away from 0, or truncated?). */
static void pool_avg_int8_rounding(struct probe_out *o)
{
    static const double values[10] = {1, 2, 2, 3, -1, -2, -3, -2, 127, 126};
    pool_forward(o, &(struct pool){CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_NOT_PROPAGATE_NAN, {1, 2}, {0, 0},
                                   {1, 2}, {1, 1, 1, 10}, CUDNN_DATA_INT8}, values);
}

/* cudnnGetPooling2dForwardOutputDim, max window 4 over a 3x3 image, no pad, stride 2: the
   window does not fit; 1 + (3 - 4) / 2 is 1 truncating, 0 flooring. Status and dims. */
static void pool_window_past_input(struct probe_out *o)
{
    cudnnTensorDescriptor_t x = tensor4(o, 1, 1, 3, 3);
    cudnnPoolingDescriptor_t pool;
    if (x == NULL || !SETUP(o, cudnnCreatePoolingDescriptor(&pool))) return;
    hold(o, pool, HELD_POOL);
    if (!SETUP(o, cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 4, 4, 0, 0, 2, 2)))
        return;
    int d[4] = {-1, -1, -1, -1};
    cudnnStatus_t s = cudnnGetPooling2dForwardOutputDim(pool, x, &d[0], &d[1], &d[2], &d[3]);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put_host(o, "dims", (const double[]){d[0], d[1], d[2], d[3]}, 4);
}

/* ---- softmax ------------------------------------------------------------------------------------------ */

/* Softmax forward of x (n floats at xd) into a poisoned y of x's shape. */
static void softmax_run(struct probe_out *o, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
                        cudnnTensorDescriptor_t x, const float *xd, size_t n)
{
    float *yd = dev_fill(o, n, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnSoftmaxForward(parity_handle, algo, mode, &alpha, x, xd, &beta, x, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", yd, n);
}

/* Over the channels of 2x5x2x2 (inputs up to +-4, so that ACCURATE's shift matters). */
static void softmax(struct probe_out *o, cudnnSoftmaxAlgorithm_t algo)
{
    cudnnTensorDescriptor_t x = tensor4(o, 2, 5, 2, 2);
    if (x != NULL) softmax_run(o, algo, CUDNN_SOFTMAX_MODE_CHANNEL, x, dev_random(o, 40, -4, 4), 40);
}

static void softmax_accurate(struct probe_out *o) { softmax(o, CUDNN_SOFTMAX_ACCURATE); }
static void softmax_log(struct probe_out *o) { softmax(o, CUDNN_SOFTMAX_LOG); }

/* LOG over the channels of 1x3x1x4 whose four slices are {-inf, 0, 1}, {-inf, -inf, 2}, all -inf,
   and {+inf, 0, 1}. */
static void softmax_log_neg_inf(struct probe_out *o)
{
    static const float values[12] = {-INFINITY, -INFINITY, -INFINITY, INFINITY, 0, -INFINITY, -INFINITY, 0,
                                     1,         2,         -INFINITY, 1};
    cudnnTensorDescriptor_t x = tensor4(o, 1, 3, 1, 4);
    if (x != NULL) softmax_run(o, CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_CHANNEL, x, dev_floats(o, values, 12), 12);
}

/* ACCURATE, CHANNEL mode, on a 3-D tensor 2x5x3 (cudnnSetTensorNdDescriptor): taken, and is dim 1
   the channel? */
static void softmax_3d(struct probe_out *o)
{
    cudnnTensorDescriptor_t x = tensor_nd(o, 3, (const int[]){2, 5, 3}, (const int[]){15, 3, 1});
    if (x != NULL) softmax_run(o, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, x, dev_random(o, 30, -4, 4), 30);
}

/* ---- LRN --------------------------------------------------------------------------------------------- */

/* LRN across channels (descriptor n, alpha, beta, k) of a packed x of type with dims d, random in
   [lo, hi]. */
static void lrn_run(struct probe_out *o, cudnnDataType_t type, const int d[4], unsigned n, double alpha_, double beta_,
                    double k, double lo, double hi)
{
    cudnnTensorDescriptor_t x = tensor4_as(o, type, d[0], d[1], d[2], d[3]);
    cudnnLRNDescriptor_t lrn;
    if (x == NULL || !SETUP(o, cudnnCreateLRNDescriptor(&lrn))) return;
    hold(o, lrn, HELD_LRN);
    if (!SETUP(o, cudnnSetLRNDescriptor(lrn, n, alpha_, beta_, k))) return;
    const size_t count = (size_t)d[0] * d[1] * d[2] * d[3];
    double *v = malloc(count * sizeof(double));
    if (v == NULL) die("out of host memory");
    for (size_t i = 0; i < count; i++) v[i] = (float)uniform(o, lo, hi);
    void *xd = dev_as(o, type, v, count), *yd = dev_poison(o, type, count);
    free(v);
    float alpha = 1, beta = 0;
    cudnnStatus_t s =
        cudnnLRNCrossChannelForward(parity_handle, lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &alpha, x, xd, &beta, x, yd);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put_as(o, "y", yd, count, type);
}

/* n 5, alpha 0.5, beta 0.75, k 2, on 1x7x2x2. */
static void lrn_cross_channel(struct probe_out *o)
{
    lrn_run(o, CUDNN_DATA_FLOAT, (const int[]){1, 7, 2, 2}, 5, 0.5, 0.75, 2.0, -2, 2);
}

/* An even window, n 4 (alpha 1, beta 0.75, k 1, on 1x6x1x2): taken, and which side of a channel
   holds two neighbours? */
static void lrn_even_n(struct probe_out *o)
{
    lrn_run(o, CUDNN_DATA_FLOAT, (const int[]){1, 6, 1, 2}, 4, 1.0, 0.75, 1.0, -2, 2);
}

/* HALF data in [150, 250] (n 5, alpha 1, beta 0.75, k 2, on 1x5x1x2): the window's sum of squares
   (about 2e5) overflows half, the scaled sum (about 4e4) does not. */
static void lrn_half_large(struct probe_out *o)
{
    lrn_run(o, CUDNN_DATA_HALF, (const int[]){1, 5, 1, 2}, 5, 1.0, 0.75, 2.0, 150, 250);
}

/* ---- batch norm ------------------------------------------------------------------------------------- */

/* Batch-norm training forward on x of dims d, random in [-2, 2] (channel 0 held at 0.5 when
   constant): y, the running averages (from 0.1 and 0.9, factor 0.5: the running variance takes
   the unbiased variance) and the saved mean and inverse variance (1 / sqrt(biased variance +
   eps)). */
static void bn_run(struct probe_out *o, cudnnBatchNormMode_t mode, const int d[4], double eps, bool constant)
{
    const int plane = mode == CUDNN_BATCHNORM_SPATIAL ? 1 : d[2] * d[3];
    cudnnTensorDescriptor_t x = tensor4(o, d[0], d[1], d[2], d[3]);
    cudnnTensorDescriptor_t p = x ? (plane == 1 ? tensor4(o, 1, d[1], 1, 1) : tensor4(o, 1, d[1], d[2], d[3])) : NULL;
    if (p == NULL) return;
    const size_t nx = (size_t)d[0] * d[1] * d[2] * d[3], np = (size_t)d[1] * plane;
    float *h = malloc(nx * sizeof(float));
    if (h == NULL) die("out of host memory");
    for (size_t i = 0; i < nx; i++) {
        h[i] = (float)uniform(o, -2, 2);
        if (constant && i / (size_t)(d[2] * d[3]) % (size_t)d[1] == 0) h[i] = 0.5f;
    }
    float *xd = dev_floats(o, h, nx), *yd = dev_fill(o, nx, NAN);
    free(h);
    float *scale = dev_random(o, np, 0.5, 1.5), *bias = dev_random(o, np, -0.5, 0.5);
    float *rmean = dev_fill(o, np, 0.1f), *rvar = dev_fill(o, np, 0.9f);
    float *smean = dev_fill(o, np, NAN), *sinv = dev_fill(o, np, NAN);
    float alpha = 1, beta = 0;
    cudnnStatus_t s = cudnnBatchNormalizationForwardTraining(parity_handle, mode, &alpha, &beta, x, xd, x, yd, p, scale,
                                                             bias, 0.5, rmean, rvar, eps, smean, sinv);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    put(o, "y", yd, nx);
    put(o, "running_mean", rmean, np);
    put(o, "running_var", rvar, np);
    put(o, "save_mean", smean, np);
    put(o, "save_inv_var", sinv, np);
}

static void bn_train_spatial(struct probe_out *o)
{
    bn_run(o, CUDNN_BATCHNORM_SPATIAL, (const int[]){2, 3, 2, 2}, 1e-5, false);
}
static void bn_train_per_activation(struct probe_out *o)
{
    bn_run(o, CUDNN_BATCHNORM_PER_ACTIVATION, (const int[]){2, 3, 2, 2}, 1e-5, false);
}

/* Epsilon 0 (CUDNN_BN_MIN_EPSILON in 8.2) with channel 0 constant (variance 0), SPATIAL on
   2x2x2x2: taken, and what the zero variance gives (y, inverse variance). */
static void bn_eps_zero_constant(struct probe_out *o)
{
    bn_run(o, CUDNN_BATCHNORM_SPATIAL, (const int[]){2, 2, 2, 2}, 0, true);
}

/* One value per channel (SPATIAL on 1x3x1x1): the unbiased variance the running variance takes
   is 0 / 0; taken, and what the running variance becomes. */
static void bn_batch_of_one(struct probe_out *o)
{
    bn_run(o, CUDNN_BATCHNORM_SPATIAL, (const int[]){1, 3, 1, 1}, 1e-5, false);
}

/* ---- dropout ------------------------------------------------------------------------------------------ */

/* The dropout states' size, and the reserve's for a 2x3x4x5 float tensor (sizes: shown only). */
static void dropout_sizes(struct probe_out *o)
{
    size_t states = 0, reserve = 0;
    cudnnStatus_t s = cudnnDropoutGetStatesSize(parity_handle, &states);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    cudnnTensorDescriptor_t x = tensor4(o, 2, 3, 4, 5);
    if (x == NULL || !SETUP(o, cudnnDropoutGetReserveSpaceSize(x, &reserve))) return;
    put_number(o, "info_states_bytes", (double)states);
    put_number(o, "info_reserve_bytes", (double)reserve);
}

/* cudnnDropoutForward with probability 1 (seed 1) on 1x1x2x4: every element dropped; y 0, or
   NaN from the scale 1 / (1 - p)? */
static void dropout_p_one(struct probe_out *o)
{
    cudnnDropoutDescriptor_t d;
    size_t states_bytes = 0, reserve_bytes = 0;
    if (!SETUP(o, cudnnCreateDropoutDescriptor(&d))) return;
    hold(o, d, HELD_DROPOUT);
    if (!SETUP(o, cudnnDropoutGetStatesSize(parity_handle, &states_bytes))) return;
    void *states = dev_bytes(o, states_bytes);
    if (!SETUP(o, cudnnSetDropoutDescriptor(d, parity_handle, 1.0f, states, states_bytes, 1))) return;
    cudnnTensorDescriptor_t x = tensor4(o, 1, 1, 2, 4);
    if (x == NULL || !SETUP(o, cudnnDropoutGetReserveSpaceSize(x, &reserve_bytes))) return;
    float *xd = dev_random(o, 8, -1, 1), *yd = dev_fill(o, 8, NAN);
    cudnnStatus_t s = cudnnDropoutForward(parity_handle, d, x, xd, x, yd, dev_bytes(o, reserve_bytes), reserve_bytes);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put(o, "y", yd, 8);
}

const struct probe parity_nn_probes[] = {
    {"relu_nan_not_propagate", relu_nan_not_propagate},
    {"relu_nan_propagate", relu_nan_propagate},
    {"pool_avg_include_pad", pool_avg_include_pad},
    {"pool_avg_exclude_pad", pool_avg_exclude_pad},
    {"maxpool_nan_not_propagate", maxpool_nan_not_propagate},
    {"maxpool_nan_propagate", maxpool_nan_propagate},
    {"pool_avg_exclude_only_padding", pool_avg_exclude_only_padding},
    {"pool_avg_int8_rounding", pool_avg_int8_rounding},
    {"pool_window_past_input", pool_window_past_input},
    {"softmax_accurate", softmax_accurate},
    {"softmax_log", softmax_log},
    {"softmax_log_neg_inf", softmax_log_neg_inf},
    {"softmax_3d", softmax_3d},
    {"lrn_cross_channel", lrn_cross_channel},
    {"lrn_even_n", lrn_even_n},
    {"lrn_half_large", lrn_half_large},
    {"bn_train_spatial", bn_train_spatial},
    {"bn_train_per_activation", bn_train_per_activation},
    {"bn_eps_zero_constant", bn_eps_zero_constant},
    {"bn_batch_of_one", bn_batch_of_one},
    {"dropout_sizes", dropout_sizes},
    {"dropout_p_one", dropout_p_one},
};
const size_t parity_nn_count = ARRAY_LEN(parity_nn_probes);
