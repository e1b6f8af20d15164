/* ops_nn.c: the nn ops: activation, softmax, pooling and batch norm, forward and backward. */
#include "bench.h"

/* ---- nn ops: activation, softmax, pooling, batch norm ---------------------------------------------
   Each takes x as a tensor spec (a 4-D one for pooling and batch norm); the other data tensors have
   its shape and layout (pooling's y and dy: n x c x p x q, p = (h + 2 pad - win) / stride + 1).
   alpha 1, beta 0 everywhere. A backward op's inputs are made consistent in setup (not in a dry
   run): y (and for batch norm the saved statistics) are computed from x by the forward call, so
   that both builds see the same, meaningful inputs. The byte counts are the fewest the call must
   move (each tensor read or written once); |p| is one parameter vector (C floats, C doubles for
   f64). */

/* The index of problem key `key`'s value in names, or -1. */

/* actfwd: y = act(x). Tensors x, y. bytes = |x| read + |y| written.
   actbwd: dx = act'(x) dy. Tensors y, dy, x, dx (y = act(x) computed in setup). bytes = 3 |x|:
   dy and one of x, y read, dx written. mode relu|sigmoid|tanh (no clipping, coef 0). */
static const char *setup_act(struct call *c, const struct problem *p, bool bwd)
{
    static const char *const names[] = {"relu", "sigmoid", "tanh"};
    static const cudnnActivationMode_t modes[] = {CUDNN_ACTIVATION_RELU, CUDNN_ACTIVATION_SIGMOID,
                                                  CUDNN_ACTIVATION_TANH};
    int m = problem_choice(p, "mode", names, (int)ARRAY_LEN(names));
    if (m < 0) return "mode must be relu, sigmoid or tanh";
    const char *spec = problem_get(p, "x");
    const char *why = add_like_x(c, spec, bwd ? 4 : 2);
    if (why) return why;
    unit_scaling(c);
    c->out = bwd ? 3 : 1;
    c->bytes = (bwd ? 3 : 2) * tensor_bytes(c, 0);
    cudnnStatus_t st = cudnnCreateActivationDescriptor(&c->act_desc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetActivationDescriptor(c->act_desc, modes[m], CUDNN_NOT_PROPAGATE_NAN, 0.0);
    if (st == CUDNN_STATUS_SUCCESS && bwd && !c->dry)
        st = cudnnActivationForward(c->handle, c->act_desc, scaling_ptr(c, &c->alpha), c->t[2].desc, c->t[2].data,
                                    scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static const char *setup_actfwd(struct call *c, const struct problem *p)
{
    return setup_act(c, p, false);
}

static const char *setup_actbwd(struct call *c, const struct problem *p)
{
    return setup_act(c, p, true);
}

static cudnnStatus_t run_actfwd(struct call *c)
{
    return cudnnActivationForward(c->handle, c->act_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                  scaling_ptr(c, &c->beta), c->t[1].desc, c->t[1].data);
}

static cudnnStatus_t run_actbwd(struct call *c)
{
    return cudnnActivationBackward(c->handle, c->act_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                   c->t[1].desc, c->t[1].data, c->t[2].desc, c->t[2].data, scaling_ptr(c, &c->beta),
                                   c->t[3].desc, c->t[3].data);
}

/* softmaxfwd: y = softmax(x). Tensors x, y. bytes = |x| read + |y| written.
   softmaxbwd: dx from y and dy. Tensors y, dy, dx (y = softmax of random x, in setup; dx first
   holds that x). bytes = |y| + |dy| read + |dx| written. algo fast|accurate|log; mode
   channel|instance. */
static const char *setup_softmax(struct call *c, const struct problem *p, bool bwd)
{
    static const char *const algos[] = {"fast", "accurate", "log"};
    static const char *const modes[] = {"instance", "channel"};
    int a = problem_choice(p, "algo", algos, (int)ARRAY_LEN(algos));
    int m = problem_choice(p, "mode", modes, (int)ARRAY_LEN(modes));
    if (a < 0) return "algo must be fast, accurate or log";
    if (m < 0) return "mode must be instance or channel";
    c->algo = a == 0 ? CUDNN_SOFTMAX_FAST : a == 1 ? CUDNN_SOFTMAX_ACCURATE : CUDNN_SOFTMAX_LOG;
    c->mode = m == 0 ? CUDNN_SOFTMAX_MODE_INSTANCE : CUDNN_SOFTMAX_MODE_CHANNEL;
    const char *why = add_like_x(c, problem_get(p, "x"), bwd ? 3 : 2);
    if (why) return why;
    unit_scaling(c);
    c->out = bwd ? 2 : 1;
    c->bytes = (bwd ? 3 : 2) * tensor_bytes(c, 0);
    if (!bwd || c->dry) return NULL;
    cudnnStatus_t st = cudnnSoftmaxForward(c->handle, (cudnnSoftmaxAlgorithm_t)c->algo, (cudnnSoftmaxMode_t)c->mode,
                                           scaling_ptr(c, &c->alpha), c->t[2].desc, c->t[2].data,
                                           scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static const char *setup_softmaxfwd(struct call *c, const struct problem *p)
{
    return setup_softmax(c, p, false);
}

static const char *setup_softmaxbwd(struct call *c, const struct problem *p)
{
    return setup_softmax(c, p, true);
}

static cudnnStatus_t run_softmaxfwd(struct call *c)
{
    return cudnnSoftmaxForward(c->handle, (cudnnSoftmaxAlgorithm_t)c->algo, (cudnnSoftmaxMode_t)c->mode,
                               scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data, scaling_ptr(c, &c->beta),
                               c->t[1].desc, c->t[1].data);
}

static cudnnStatus_t run_softmaxbwd(struct call *c)
{
    return cudnnSoftmaxBackward(c->handle, (cudnnSoftmaxAlgorithm_t)c->algo, (cudnnSoftmaxMode_t)c->mode,
                                scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data, c->t[1].desc, c->t[1].data,
                                scaling_ptr(c, &c->beta), c->t[2].desc, c->t[2].data);
}

/* poolfwd: 2-D pooling, a win x win window, the same pad and stride along both dims. Tensors x, y.
   bytes = |x| read + |y| written.
   poolbwd: tensors y, dy, x, dx (y = pool(x) in setup). bytes = |x| + |dy| read + |dx| written
   (y need not be read: the maximum can be found again in x).
   mode max|avg (avg: padding excluded from the count). */
static const char *setup_pool(struct call *c, const struct problem *p, bool bwd)
{
    static char why_buf[96];
    static const char *const names[] = {"max", "avg"};
    int m = problem_choice(p, "mode", names, (int)ARRAY_LEN(names));
    if (m < 0) return "mode must be max or avg";
    static const char *const keys[] = {"win", "pad", "stride"};
    int v[3];
    for (int i = 0; i < 3; i++) {
        double d = problem_number(p, keys[i]);
        if (d != floor(d) || d < (i == 1 ? 0 : 1) || d > 1024) {
            snprintf(why_buf, sizeof why_buf, "%s must be a whole number from %d to 1024", keys[i], i == 1 ? 0 : 1);
            return why_buf;
        }
        v[i] = (int)d;
    }
    const char *spec = problem_get(p, "x");
    struct tensor x;
    const char *why = parse_tensor(spec, &x);
    if (why) return why;
    if (x.nd != 4) return "pooling takes a 4-D x";
    int ph = x.dims[2] + 2 * v[1] - v[0], qw = x.dims[3] + 2 * v[1] - v[0];
    if (ph < 0 || qw < 0 || v[1] >= v[0]) return "the window must be larger than pad and fit the padded input";
    char yspec[96];
    snprintf(yspec, sizeof yspec, "%dx%dx%dx%d%s", x.dims[0], x.dims[1], ph / v[2] + 1, qw / v[2] + 1,
             strstr(spec, ":nhwc") ? ":nhwc" : "");
    if (bwd) {
        why = add_like_x(c, yspec, 2); /* y, dy */
        if (!why) why = add_like_x(c, spec, 2); /* x, dx */
    } else {
        why = add_tensor_spec(c, spec);
        if (!why) why = add_tensor_spec(c, yspec);
    }
    if (why) return why;
    unit_scaling(c);
    int xi = bwd ? 2 : 0, yi = bwd ? 0 : 1;
    c->out = bwd ? 3 : 1;
    c->bytes = (bwd ? 2 : 1) * tensor_bytes(c, xi) + tensor_bytes(c, yi);
    cudnnStatus_t st = cudnnCreatePoolingDescriptor(&c->pool_desc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetPooling2dDescriptor(c->pool_desc,
                                         m == 0 ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                         CUDNN_NOT_PROPAGATE_NAN, v[0], v[0], v[1], v[1], v[2], v[2]);
    if (st == CUDNN_STATUS_SUCCESS && bwd && !c->dry)
        st = cudnnPoolingForward(c->handle, c->pool_desc, scaling_ptr(c, &c->alpha), c->t[2].desc, c->t[2].data,
                                 scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static const char *setup_poolfwd(struct call *c, const struct problem *p)
{
    return setup_pool(c, p, false);
}

static const char *setup_poolbwd(struct call *c, const struct problem *p)
{
    return setup_pool(c, p, true);
}

static cudnnStatus_t run_poolfwd(struct call *c)
{
    return cudnnPoolingForward(c->handle, c->pool_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                               scaling_ptr(c, &c->beta), c->t[1].desc, c->t[1].data);
}

static cudnnStatus_t run_poolbwd(struct call *c)
{
    return cudnnPoolingBackward(c->handle, c->pool_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                c->t[1].desc, c->t[1].data, c->t[2].desc, c->t[2].data, scaling_ptr(c, &c->beta),
                                c->t[3].desc, c->t[3].data);
}

/* Batch norm, epsilon 1e-5, exponential average factor 0.1. mode spatial|per_activation; the
   parameters (scale, bias, means, variances) are 1 x C x 1 x 1 (spatial) or 1 x C x H x W, packed
   NCHW, float (double for f64 data).
   bnfwdinf: tensors x, y, scale, bias, mean, var (mean and var: the running statistics of x,
   computed in setup by a training call with factor 1). bytes = |x| read + |y| written + 4 |p|.
   bnfwdtrain: tensors x, y, scale, bias, running mean, running var, saved mean, saved inverse
   std. bytes = |x| read + |y| written + 2 |p| (scale, bias) + 4 |p| (running read and written)
   + 2 |p| (saved written); an implementation in two passes reads x twice.
   bnbwd: tensors x, dy, dx, scale, dscale, dbias, saved mean, saved inverse std (the saved
   statistics of x from a training call in setup). bytes = |x| + |dy| read + |dx| written + 3 |p|
   read + 2 |p| written; in two passes x and dy are read twice. */
enum { BN_INF, BN_TRAIN, BN_BWD };

static const double bn_epsilon = 1e-5, bn_factor = 0.1;

static cudnnStatus_t bn_train(struct call *c, int x, int y, int scale, int bias, void *rmean, void *rvar,
                              void *smean, void *sinv, double factor)
{
    return cudnnBatchNormalizationForwardTraining(
        c->handle, (cudnnBatchNormMode_t)c->mode, scaling_ptr(c, &c->alpha), scaling_ptr(c, &c->beta), c->t[x].desc,
        c->t[x].data, c->t[y].desc, c->t[y].data, c->t[scale].desc, c->t[scale].data, c->t[bias].data, factor,
        rmean, rvar, bn_epsilon, smean, sinv);
}

static const char *setup_bn(struct call *c, const struct problem *p, int kind)
{
    static const char *const names[] = {"spatial", "per_activation"};
    int m = problem_choice(p, "mode", names, (int)ARRAY_LEN(names));
    if (m < 0) return "mode must be spatial or per_activation";
    c->mode = m == 0 ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_PER_ACTIVATION;
    const char *spec = problem_get(p, "x");
    struct tensor x;
    const char *why = parse_tensor(spec, &x);
    if (why) return why;
    if (x.nd != 4) return "batch norm takes a 4-D x";
    char pspec[64];
    if (m == 0) snprintf(pspec, sizeof pspec, "1x%dx1x1", x.dims[1]);
    else snprintf(pspec, sizeof pspec, "1x%dx%dx%d", x.dims[1], x.dims[2], x.dims[3]);
    const struct dtype *pdt = &dtypes[c->dt->type == CUDNN_DATA_DOUBLE ? 3 : 0];
    int nparams = kind == BN_INF ? 4 : kind == BN_TRAIN ? 6 : 5, nx = kind == BN_BWD ? 3 : 2;
    why = add_like_x(c, spec, nx);
    for (int i = 0; i < nparams && !why; i++) why = add_tensor_dt(c, pspec, pdt);
    if (why) return why;
    unit_scaling(c);
    c->out = kind == BN_BWD ? 2 : 1;
    double px = tensor_bytes(c, 0), pp = tensor_bytes(c, 3);
    c->bytes = kind == BN_INF ? 2 * px + 4 * pp : kind == BN_TRAIN ? 2 * px + 8 * pp : 3 * px + 5 * pp;
    if (c->dry || kind == BN_TRAIN) return NULL;
    cudnnStatus_t st;
    if (kind == BN_INF) {
        /* y as scratch output; running mean and var become x's statistics */
        st = bn_train(c, 0, 1, 2, 3, c->t[4].data, c->t[5].data, NULL, NULL, 1.0);
    } else {
        /* dx as scratch output, dbias as the bias; the running statistics thrown away */
        size_t pbytes = (size_t)c->t[3].count * pdt->size;
        void *rmean = mem_alloc(pbytes), *rvar = mem_alloc(pbytes);
        st = bn_train(c, 0, 2, 3, 5, rmean, rvar, c->t[6].data, c->t[7].data, 1.0);
        device_sync();
        mem_free(rmean);
        mem_free(rvar);
    }
    device_sync();
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static const char *setup_bnfwdinf(struct call *c, const struct problem *p)
{
    return setup_bn(c, p, BN_INF);
}

static const char *setup_bnfwdtrain(struct call *c, const struct problem *p)
{
    return setup_bn(c, p, BN_TRAIN);
}

static const char *setup_bnbwd(struct call *c, const struct problem *p)
{
    return setup_bn(c, p, BN_BWD);
}

static cudnnStatus_t run_bnfwdinf(struct call *c)
{
    return cudnnBatchNormalizationForwardInference(
        c->handle, (cudnnBatchNormMode_t)c->mode, scaling_ptr(c, &c->alpha), scaling_ptr(c, &c->beta), c->t[0].desc,
        c->t[0].data, c->t[1].desc, c->t[1].data, c->t[2].desc, c->t[2].data, c->t[3].data, c->t[4].data,
        c->t[5].data, bn_epsilon);
}

static cudnnStatus_t run_bnfwdtrain(struct call *c)
{
    return bn_train(c, 0, 1, 2, 3, c->t[4].data, c->t[5].data, c->t[6].data, c->t[7].data, bn_factor);
}

static cudnnStatus_t run_bnbwd(struct call *c)
{
    return cudnnBatchNormalizationBackward(
        c->handle, (cudnnBatchNormMode_t)c->mode, scaling_ptr(c, &c->alpha), scaling_ptr(c, &c->beta),
        scaling_ptr(c, &c->alpha), scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data, c->t[1].desc, c->t[1].data,
        c->t[2].desc, c->t[2].data, c->t[3].desc, c->t[3].data, c->t[4].data, c->t[5].data, bn_epsilon, c->t[6].data,
        c->t[7].data);
}

static const struct op ops[] = {
    {"actfwd", "mode dt x", setup_actfwd, run_actfwd},
    {"actbwd", "mode dt x", setup_actbwd, run_actbwd},
    {"softmaxfwd", "algo mode dt x", setup_softmaxfwd, run_softmaxfwd},
    {"softmaxbwd", "algo mode dt x", setup_softmaxbwd, run_softmaxbwd},
    {"poolfwd", "mode dt x win pad stride", setup_poolfwd, run_poolfwd},
    {"poolbwd", "mode dt x win pad stride", setup_poolbwd, run_poolbwd},
    {"bnfwdinf", "mode dt x", setup_bnfwdinf, run_bnfwdinf},
    {"bnfwdtrain", "mode dt x", setup_bnfwdtrain, run_bnfwdtrain},
    {"bnbwd", "mode dt x", setup_bnbwd, run_bnbwd},
};

const struct op_family ops_nn = {ops, ARRAY_LEN(ops)};
