/* reversed_views.c: tests of tensors with negative strides (reversed views, the data pointer at
   element (0,...,0) and the view reaching below it), which NVIDIA's library takes at Set and
   reads right in cudnnTransformTensor and cudnnAddTensor (bench/parity.c, the negstride
   probes).

   The calls that take them (cudnnTransformTensor, cudnnAddTensor, cudnnOpTensor,
   cudnnScaleTensor, cudnnSetTensor) run on views of 1 to 5 dims (3-D descriptors padded with 1s
   below 3), every dim or some reversed, inputs and outputs alike or not, packed and with gaps,
   against the double references of ref/tensor_ops.c over the outputs' whole spans (poisoned
   when beta == 0: the gaps must keep their bytes). Every other call declines them:
   NOT_SUPPORTED, the reason logged, nothing written. */
#include "tensors.h"

#include <stdlib.h>
#include <string.h>

/* ---- layouts --------------------------------------------------------------------------------- */

/* A view of `logical` dims (1 to 5) of extents from ext[], in a descriptor of at least 3 dims
   (trailing 1s); kind 0 packed row-major (NCHW_VECT_C for a vector type), 1 channels-last with a
   gap of 1 after each dim; then the dims whose bit is set in flip reversed. */
static void reversed_layout(struct rtensor *t, cudnnDataType_t dt, int logical, const int ext[], int kind,
                            unsigned flip)
{
    int rank = logical < 3 ? 3 : logical, dims[RT_MAX_DIMS], last[RT_MAX_DIMS];
    for (int d = 0; d < rank; d++) dims[d] = d < logical ? ext[d] : 1;
    last[0] = 0;
    for (int d = 2; d < rank; d++) last[d - 1] = d;
    last[rank - 1] = 1;
    if (kind == 0) rt_packed(t, dt, rt_vect(dt) > 1 ? CUDNN_TENSOR_NCHW_VECT_C : CUDNN_TENSOR_NCHW, rank, dims);
    else rt_gapped(t, dt, rank, dims, last, 1);
    for (int d = 0; d < rank; d++)
        if (flip >> d & 1) t->strides[d] = -t->strides[d];
}

/* The pointer cuDNN is given for a buffer holding t's span: element (0,...,0). */
static void *first_element(const struct rtensor *t, void *buf)
{
    return (char *)buf + rt_origin(t) * (int64_t)tdtype_size(t->dtype);
}

static void value_range(cudnnDataType_t t, double *lo, double *hi)
{
    switch (t) {
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: *lo = -20; *hi = 20; return;
    default: *lo = -2; *hi = 2; return;
    }
}

#define ALL 0xffu

/* Reversal patterns (a bit per dim) of (input, output): the input alone, the output alone, both
   alike, and each reversed where the other is not. */
static const unsigned flips[][2] = {{ALL, 0}, {0, ALL}, {ALL, ALL}, {0x5, 0x2}, {0x2, 0x5}};

static const int extents[] = {3, 4, 5, 2, 3};

/* ---- cudnnTransformTensor, cudnnAddTensor, cudnnOpTensor ------------------------------------- */

/* One call C = op(alpha1 * A, alpha2 * B) + beta * C through the API (ref_op's op: REF_COPY with
   add true is cudnnAddTensor, with add false cudnnTransformTensor; B NULL for those), checked
   over C's span against ref_ewise. */
struct ewise_case {
    int op;
    bool add;
    const struct rtensor *at, *bt, *ct;
    double alpha1, alpha2, beta;
};

static void run_ewise(const struct ewise_case *k, const char *what)
{
    double lo, hi;
    value_range(k->at->dtype, &lo, &hi);
    if (k->op == CUDNN_OP_TENSOR_SQRT) lo = 0;
    void *a = thost_random(k->at, lo, hi), *b = k->bt ? thost_random(k->bt, lo, hi) : NULL;
    void *c = k->beta != 0 ? thost_random(k->ct, lo, hi) : thost_poison(k->ct);
    void *da = tbuf_from(a, rt_bytes(k->at)), *db = b ? tbuf_from(b, rt_bytes(k->bt)) : NULL;
    void *dc = tbuf_from(c, rt_bytes(k->ct));
    cudnnTensorDescriptor_t ad = tdesc(k->at), bd = k->bt ? tdesc(k->bt) : NULL, cd = tdesc(k->ct);
    cudnnDataType_t st = k->ct->dtype;
    struct tscale s1, s2, sb;
    cudnnStatus_t s;
    if (k->op == REF_COPY && k->add)
        s = cudnnAddTensor(test_handle(), tscale(&s1, st, k->alpha1), ad, first_element(k->at, da),
                           tscale(&sb, st, k->beta), cd, first_element(k->ct, dc));
    else if (k->op == REF_COPY)
        s = cudnnTransformTensor(test_handle(), tscale(&s1, st, k->alpha1), ad, first_element(k->at, da),
                                 tscale(&sb, st, k->beta), cd, first_element(k->ct, dc));
    else {
        cudnnOpTensorDescriptor_t od;
        CHECK_OK(cudnnCreateOpTensorDescriptor(&od));
        CHECK_OK(cudnnSetOpTensorDescriptor(od, (cudnnOpTensorOp_t)k->op,
                                            st == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                                            CUDNN_NOT_PROPAGATE_NAN));
        s = cudnnOpTensor(test_handle(), od, tscale(&s1, st, k->alpha1), ad, first_element(k->at, da),
                          tscale(&s2, st, k->alpha2), bd, k->bt ? first_element(k->bt, db) : NULL,
                          tscale(&sb, st, k->beta), cd,
                          first_element(k->ct, dc));
        cudnnDestroyOpTensorDescriptor(od);
    }
    if (CHECK_OK(s)) {
        double *want = malloc(sizeof(double) * (size_t)rt_span(k->ct));
        ref_ewise(k->op, false, k->alpha1, k->at, a, k->alpha2, k->bt, b, k->beta, k->ct, c, want);
        tcompare_span(k->ct, dc, want, -1, what);
        free(want);
    } else {
        FAIL("%s: refused", what);
    }
    free(a), free(b), free(c);
    tbuf_free(da), tbuf_free(db), tbuf_free(dc);
    cudnnDestroyTensorDescriptor(ad);
    if (bd) cudnnDestroyTensorDescriptor(bd);
    cudnnDestroyTensorDescriptor(cd);
}

TEST(transform_reversed_views_every_rank)
{
    static const cudnnDataType_t types[][2] = {{CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
                                               {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},
                                               {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},
                                               {CUDNN_DATA_INT8, CUDNN_DATA_INT8}};
    int n = 0;
    for (int logical = 1; logical <= 5; logical++)
        for (size_t f = 0; f < TLEN(flips); f++, n++) {
            const cudnnDataType_t *t = types[n % TLEN(types)];
            struct rtensor xt, yt;
            reversed_layout(&xt, t[0], logical, extents, n % 2, flips[f][0]);
            reversed_layout(&yt, t[1], logical, extents, (n / 2) % 2, flips[f][1]);
            struct ewise_case k = {REF_COPY, false, &xt, NULL, &yt, n % 3 ? 1.0 : 0.5, 0, n % 4 == 1 ? 0.5 : 0.0};
            char what[128];
            snprintf(what, sizeof what, "cudnnTransformTensor %d-D %s->%s flips x %#x y %#x", logical,
                     tdtype_name(t[0]), tdtype_name(t[1]), flips[f][0], flips[f][1]);
            run_ewise(&k, what);
        }
}

/* Shapes that reach the CUDA fast paths: x and y reversed alike (one packed run after the
   normalization: the vectorized path), x reversed along N only (its rows forward), and x NCHW
   reversed along N into a packed NHWC y (the tiled transpose, its batch stride negative). */
TEST(transform_reversed_views_fast_path_shapes)
{
    const int dims[] = {2, 16, 8, 9};
    struct { int xkind; unsigned xflip, yflip; bool nhwc; } cases[] = {
        {0, 0xf, 0xf, false}, {0, 0x1, 0, false}, {0, 0x1, 0, true}, {0, 0x6, 0, true}, {1, 0xf, 0x1, false},
    };
    for (size_t i = 0; i < TLEN(cases); i++) {
        struct rtensor xt, yt;
        reversed_layout(&xt, CUDNN_DATA_FLOAT, 4, dims, cases[i].xkind, cases[i].xflip);
        if (cases[i].nhwc) rt_packed(&yt, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 4, dims);
        else reversed_layout(&yt, CUDNN_DATA_FLOAT, 4, dims, 0, cases[i].yflip);
        struct ewise_case k = {REF_COPY, false, &xt, NULL, &yt, 1.0, 0, i % 2 ? 0.25 : 0.0};
        char what[128];
        snprintf(what, sizeof what, "cudnnTransformTensor 2x16x8x9 case %zu", i);
        run_ewise(&k, what);
    }
}

/* A vector type's channels reversed by whole vectors (the lanes of a vector stay in order), into
   a packed INT8x4 and from one. */
TEST(transform_reversed_views_vector_type)
{
    const int dims[] = {2, 8, 3, 5};
    const unsigned flip[][2] = {{0x2, 0}, {0xa, 0}, {0, 0xf}};
    for (size_t i = 0; i < TLEN(flip); i++) {
        struct rtensor xt, yt;
        reversed_layout(&xt, CUDNN_DATA_INT8x4, 4, dims, 0, flip[i][0]);
        reversed_layout(&yt, CUDNN_DATA_INT8x4, 4, dims, 0, flip[i][1]);
        struct ewise_case k = {REF_COPY, false, &xt, NULL, &yt, 1.0, 0, 0.0};
        char what[96];
        snprintf(what, sizeof what, "cudnnTransformTensor int8x4 flips x %#x y %#x", flip[i][0], flip[i][1]);
        run_ewise(&k, what);
    }
}

/* cudnnAddTensor with A of C's shape and broadcast (a per-channel bias, one value, N x 1 x ...),
   either reversed. */
TEST(add_tensor_reversed_views_every_rank)
{
    static const unsigned patterns[] = {0x0, 0x1d /* 1xCx1x1x1 */, 0x1f /* all 1 */, 0x2 /* Nx1x... */};
    int n = 0;
    for (int logical = 1; logical <= 5; logical++)
        for (size_t f = 0; f < TLEN(flips); f++)
            for (size_t p = 0; p < TLEN(patterns); p++, n++) {
                int adims[5];
                for (int d = 0; d < 5; d++) adims[d] = patterns[p] >> d & 1 ? 1 : extents[d];
                struct rtensor at, ct;
                reversed_layout(&at, CUDNN_DATA_FLOAT, logical, adims, n % 2, flips[f][0]);
                reversed_layout(&ct, CUDNN_DATA_FLOAT, logical, extents, (n / 2) % 2, flips[f][1]);
                struct ewise_case k = {REF_COPY, true, &at, NULL, &ct, 0.75, 0, n % 3 ? 1.0 : 0.0};
                char what[128];
                snprintf(what, sizeof what, "cudnnAddTensor %d-D pattern %#x flips a %#x c %#x", logical, patterns[p],
                         flips[f][0], flips[f][1]);
                run_ewise(&k, what);
            }
}

/* cudnnOpTensor: A, B (of C's shape or broadcast) and C each reversed or not, in float, half
   and double. */
TEST(op_tensor_reversed_views_every_rank)
{
    static const int ops[] = {CUDNN_OP_TENSOR_ADD, CUDNN_OP_TENSOR_MUL, CUDNN_OP_TENSOR_MAX, CUDNN_OP_TENSOR_SQRT};
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_DOUBLE};
    int n = 0;
    for (int logical = 1; logical <= 5; logical++)
        for (size_t f = 0; f < TLEN(flips); f++, n++) {
            const int op = ops[n % TLEN(ops)];
            const cudnnDataType_t t = types[n % TLEN(types)];
            int bdims[5];
            for (int d = 0; d < 5; d++) bdims[d] = n % 2 && d != 1 ? 1 : extents[d];
            struct rtensor at, bt, ct;
            reversed_layout(&at, t, logical, extents, n % 2, flips[f][0]);
            reversed_layout(&bt, t, logical, bdims, (n + 1) % 2, flips[(f + 1) % TLEN(flips)][0]);
            reversed_layout(&ct, t, logical, extents, (n / 2) % 2, flips[f][1]);
            const bool unary = op == CUDNN_OP_TENSOR_SQRT;
            struct ewise_case k = {op, false, &at, unary ? NULL : &bt, &ct, unary ? 1.0 : 0.75, -1.25,
                                   n % 3 ? 0.5 : 0.0};
            char what[128];
            snprintf(what, sizeof what, "cudnnOpTensor op %d %s %d-D flips a %#x c %#x", op, tdtype_name(t), logical,
                     flips[f][0], flips[f][1]);
            run_ewise(&k, what);
        }
}

/* ---- cudnnScaleTensor and cudnnSetTensor ----------------------------------------------------- */

TEST(scale_and_set_tensor_reversed_views_every_rank)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_INT8, CUDNN_DATA_DOUBLE};
    static const unsigned yflips[] = {ALL, 0x5, 0x2};
    int n = 0;
    for (int logical = 1; logical <= 5; logical++)
        for (size_t f = 0; f < TLEN(yflips); f++, n++) {
            const cudnnDataType_t t = types[n % TLEN(types)];
            struct rtensor yt;
            reversed_layout(&yt, t, logical, extents, n % 2, yflips[f]);
            double lo, hi;
            value_range(t, &lo, &hi);
            char what[128];
            /* scale: y = alpha * y in place; the gaps keep their random bytes */
            void *y0 = thost_random(&yt, lo, hi), *dy = tbuf_from(y0, rt_bytes(&yt));
            cudnnTensorDescriptor_t yd = tdesc(&yt);
            struct tscale s;
            double *want = malloc(sizeof(double) * (size_t)rt_span(&yt));
            snprintf(what, sizeof what, "cudnnScaleTensor %s %d-D flips %#x", tdtype_name(t), logical, yflips[f]);
            if (CHECK_OK(cudnnScaleTensor(test_handle(), yd, first_element(&yt, dy), tscale(&s, t, -1.5)))) {
                ref_ewise(REF_COPY, false, -1.5, &yt, y0, 0, NULL, NULL, 0, &yt, y0, want);
                tcompare_span(&yt, dy, want, -1, what);
            }
            /* set: every element the value, the gaps poisoned still */
            unsigned char value[8];
            tstore(t, value, 0, trand_uniform(lo, hi));
            free(y0);
            y0 = thost_poison(&yt);
            tbuf_upload(dy, y0, rt_bytes(&yt));
            snprintf(what, sizeof what, "cudnnSetTensor %s %d-D flips %#x", tdtype_name(t), logical, yflips[f]);
            if (CHECK_OK(cudnnSetTensor(test_handle(), yd, first_element(&yt, dy), value))) {
                for (int64_t i = 0; i < rt_span(&yt); i++) want[i] = tload(t, y0, i);
                int idx[RT_MAX_DIMS] = {0};
                do want[rt_origin(&yt) + rt_offset(&yt, idx)] = tload(t, value, 0);
                while (rt_next(yt.rank, yt.dims, idx));
                tcompare_span(&yt, dy, want, -1, what);
            }
            free(want);
            free(y0);
            tbuf_free(dy);
            cudnnDestroyTensorDescriptor(yd);
        }
}

/* cudnnOpTensor in place on a reversed C (C is A): allowed, as for any layout alike. */
TEST(op_tensor_reversed_in_place)
{
    struct rtensor ct;
    reversed_layout(&ct, CUDNN_DATA_FLOAT, 4, extents, 1, 0x9);
    void *c = thost_random(&ct, -2, 2), *dc = tbuf_from(c, rt_bytes(&ct));
    cudnnTensorDescriptor_t cd = tdesc(&ct);
    cudnnOpTensorDescriptor_t od;
    CHECK_OK(cudnnCreateOpTensorDescriptor(&od));
    CHECK_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    const float a1 = 2, a2 = 1, beta = 0.5f;
    void *p = first_element(&ct, dc);
    if (CHECK_OK(cudnnOpTensor(test_handle(), od, &a1, cd, p, &a2, cd, p, &beta, cd, p))) {
        double *want = malloc(sizeof(double) * (size_t)rt_span(&ct));
        ref_ewise(CUDNN_OP_TENSOR_MUL, false, 2, &ct, c, 1, &ct, c, 0.5, &ct, c, want);
        tcompare_span(&ct, dc, want, -1, "cudnnOpTensor in place, reversed");
        free(want);
    }
    free(c);
    tbuf_free(dc);
    cudnnDestroyTensorDescriptor(cd);
    cudnnDestroyOpTensorDescriptor(od);
}

/* ---- overlap through a reversed view --------------------------------------------------------- */

/* The bytes a reversed view covers lie below its pointer: x of 6 floats reversed from buf + 5
   covers buf[0..5], so y at buf + 6 is apart (taken) and y at buf + 3 overlaps it (BAD_PARAM,
   nothing written). */
TEST(transform_reversed_view_overlap)
{
    float host[12];
    for (int i = 0; i < 12; i++) host[i] = (float)i;
    float *buf = tbuf_from(host, sizeof host);
    cudnnTensorDescriptor_t xd, yd;
    CHECK_OK(cudnnCreateTensorDescriptor(&xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&yd));
    CHECK_OK(cudnnSetTensorNdDescriptor(xd, CUDNN_DATA_FLOAT, 4, (int[]){1, 1, 2, 3}, (int[]){6, 6, -3, -1}));
    CHECK_OK(cudnnSetTensorNdDescriptor(yd, CUDNN_DATA_FLOAT, 4, (int[]){1, 1, 2, 3}, (int[]){6, 6, 3, 1}));
    const float one = 1, zero = 0;
    CHECK_STATUS(cudnnTransformTensor(test_handle(), &one, xd, buf + 5, &zero, yd, buf + 3), CUDNN_STATUS_BAD_PARAM);
    tbuf_unchanged(buf, host, sizeof host, "overlapping transform");
    if (CHECK_OK(cudnnTransformTensor(test_handle(), &one, xd, buf + 5, &zero, yd, buf + 6))) {
        const double want[12] = {0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0}; /* the parity probe's result */
        tvalues_check(CUDNN_DATA_FLOAT, buf, want, 12, 0, "reversed copy beside its source");
    }
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    tbuf_free(buf);
}

/* ---- the calls that decline them ------------------------------------------------------------- */

struct reason_log {
    int count;
};

static void count_reason(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg)
{
    (void)sev, (void)dbg;
    if (strstr(msg, "negative stride") != NULL) ((struct reason_log *)udata)->count++;
}

/* Each call given a reversed view where it takes a plain one returns NOT_SUPPORTED, logs why
   and writes nothing. */
TEST(reversed_views_declined_elsewhere)
{
    cudnnHandle_t h = test_handle();
    const int dims[] = {2, 3, 4, 5}, packed[] = {60, 20, 5, 1}, rev[] = {60, 20, -5, -1};
    const size_t bytes = 120 * sizeof(float);
    float host[120];
    for (int i = 0; i < 120; i++) host[i] = (float)(i % 7) - 3;
    void *dx = tbuf_from(host, bytes), *dy = tbuf_from(host, bytes);
    /* element (0,...,0) of the reversed view: its H and W reach 3 * 5 + 4 floats below it */
    void *x = (char *)dx + 19 * sizeof(float), *y = (char *)dy + 19 * sizeof(float);
    cudnnTensorDescriptor_t plain, reversed, pooled;
    CHECK_OK(cudnnCreateTensorDescriptor(&plain));
    CHECK_OK(cudnnCreateTensorDescriptor(&reversed));
    CHECK_OK(cudnnCreateTensorDescriptor(&pooled));
    CHECK_OK(cudnnSetTensorNdDescriptor(plain, CUDNN_DATA_FLOAT, 4, dims, packed));
    CHECK_OK(cudnnSetTensorNdDescriptor(reversed, CUDNN_DATA_FLOAT, 4, dims, rev));
    CHECK_OK(cudnnSetTensorNdDescriptor(pooled, CUDNN_DATA_FLOAT, 4, (int[]){2, 3, 2, 2}, (int[]){12, 4, -2, -1}));
    cudnnActivationDescriptor_t act;
    cudnnPoolingDescriptor_t pool;
    cudnnTensorTransformDescriptor_t tr;
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    CHECK_OK(cudnnCreatePoolingDescriptor(&pool));
    CHECK_OK(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
    CHECK_OK(cudnnCreateTensorTransformDescriptor(&tr));
    CHECK_OK(cudnnSetTensorTransformDescriptor(tr, 4, CUDNN_TENSOR_NCHW, NULL, NULL, NULL, CUDNN_TRANSFORM_FOLD));
    /* the pooled output's element (0,...,0) sits 3 floats into dy (its reversed dims reach 3 below) */
    void *yp = (char *)dy + 3 * sizeof(float);
    struct reason_log log = {0};
    struct log_hook hook;
    log_hook_install(&hook, CUDNN_SEV_ERROR_EN | CUDNN_SEV_WARNING_EN | CUDNN_SEV_INFO_EN, &log, count_reason);
    const float one = 1, zero = 0;
    struct { cudnnStatus_t got; const char *what; } calls[] = {
        {cudnnActivationForward(h, act, &one, reversed, x, &zero, plain, dy), "activation, reversed x"},
        {cudnnActivationForward(h, act, &one, plain, dx, &zero, reversed, y), "activation, reversed y"},
        {cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, reversed, x, &zero, plain,
                             dy), "softmax, reversed x"},
        {cudnnPoolingForward(h, pool, &one, plain, dx, &zero, pooled, yp), "pooling, reversed y"},
        {cudnnTransformTensorEx(h, tr, &one, reversed, x, &zero, plain, dy), "cudnnTransformTensorEx, reversed src"},
    };
    log_hook_restore(&hook);
    for (size_t i = 0; i < TLEN(calls); i++)
        if (calls[i].got != CUDNN_STATUS_NOT_SUPPORTED)
            FAIL("%s: %s, expected NOT_SUPPORTED", calls[i].what, cudnnGetErrorString(calls[i].got));
    if (log.count < (int)TLEN(calls)) FAIL("%d of %zu refusals logged the negative stride", log.count, TLEN(calls));
    tbuf_unchanged(dy, host, bytes, "the outputs of the declined calls");
    tbuf_unchanged(dx, host, bytes, "the inputs of the declined calls");
    /* the queries take them: the size is the span, the pooling output's dims those of its input's */
    size_t size = 0;
    int out[4] = {0};
    CHECK_OK(cudnnGetTensorSizeInBytes(reversed, &size));
    CHECK(size == bytes);
    CHECK_OK(cudnnGetPoolingNdForwardOutputDim(pool, reversed, 4, out));
    CHECK(out[0] == 2 && out[1] == 3 && out[2] == 2 && out[3] == 2);
    cudnnDestroyTensorTransformDescriptor(tr);
    cudnnDestroyPoolingDescriptor(pool);
    cudnnDestroyActivationDescriptor(act);
    cudnnDestroyTensorDescriptor(plain);
    cudnnDestroyTensorDescriptor(reversed);
    cudnnDestroyTensorDescriptor(pooled);
    tbuf_free(dx);
    tbuf_free(dy);
}
