/* tensor_ops.c: tests of cudnnSetTensor, cudnnScaleTensor, cudnnAddTensor, cudnnOpTensor and the
   op tensor descriptor, against the double references of ref/tensor_ops.c.

   Every numeric case runs on fresh random data, in packed NCHW (NCHW_VECT_C for the vector
   types), NHWC and two layouts with gaps between dimensions, with the output poisoned (NaN) when
   beta == 0 and random otherwise; gaps must keep their bytes. Scaling factors are dyadic so
   that integer results are exact in float compute too. */
#include "tensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cudnnDataType_t all_types[] = {
    CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,   CUDNN_DATA_BFLOAT16, CUDNN_DATA_INT8,
    CUDNN_DATA_UINT8, CUDNN_DATA_INT32,  CUDNN_DATA_INT8x4, CUDNN_DATA_UINT8x4,  CUDNN_DATA_INT8x32,
};
#define NTYPES (int)(sizeof all_types / sizeof all_types[0])
#define NLAYOUTS 4

static void value_range(cudnnDataType_t t, double *lo, double *hi)
{
    switch (t) {
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32: *lo = -20; *hi = 20; return;
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: *lo = 0; *hi = 40; return;
    case CUDNN_DATA_INT32: *lo = -1000; *hi = 1000; return;
    default: *lo = -2; *hi = 2; return;
    }
}

/* Layout k of the dims: 0 packed NCHW (NCHW_VECT_C for a vector type), 1 NHWC (gapped
   channels-last for a vector type), 2 channels-last with gaps, 3 reversed order with gaps. */
static void layout(int k, cudnnDataType_t t, int rank, const int dims[], struct rtensor *rt)
{
    int last[RT_MAX_DIMS], reversed[RT_MAX_DIMS];
    last[0] = 0;
    for (int d = 2; d < rank; d++) last[d - 1] = d;
    last[rank - 1] = 1;
    for (int d = 0; d < rank; d++) reversed[d] = rank - 1 - d;
    if (k == 0) rt_packed(rt, t, rt_vect(t) > 1 ? CUDNN_TENSOR_NCHW_VECT_C : CUDNN_TENSOR_NCHW, rank, dims);
    else if (k == 1 && rt_vect(t) == 1) rt_packed(rt, t, CUDNN_TENSOR_NHWC, rank, dims);
    else if (k <= 2) rt_gapped(rt, t, rank, dims, last, k);
    else rt_gapped(rt, t, rank, dims, reversed, 3);
}

/* ---- cudnnSetTensor -------------------------------------------------------------------------------- */

TEST(set_tensor_every_type_and_layout)
{
    const int dims4[] = {2, 32, 3, 5}, dims5[] = {2, 32, 2, 1, 3};
    for (int ti = 0; ti <= NTYPES; ti++) {
        cudnnDataType_t t = ti < NTYPES ? all_types[ti] : CUDNN_DATA_INT64;
        for (int k = 0; k < NLAYOUTS * 2; k++) {
            struct rtensor yt;
            layout(k % NLAYOUTS, t, k < NLAYOUTS ? 4 : 5, k < NLAYOUTS ? dims4 : dims5, &yt);
            double lo, hi;
            value_range(t, &lo, &hi);
            unsigned char value[8];
            tstore(t, value, 0, trand_uniform(lo, hi));
            void *y0 = thost_poison(&yt), *dy = tbuf_from(y0, rt_bytes(&yt));
            cudnnTensorDescriptor_t yd = tdesc(&yt);
            CHECK_OK(cudnnSetTensor(test_handle(), yd, dy, value));
            double *want = malloc(sizeof(double) * (size_t)rt_span(&yt));
            for (int64_t i = 0; i < rt_span(&yt); i++) want[i] = tload(t, y0, i);
            int idx[RT_MAX_DIMS] = {0};
            do want[rt_offset(&yt, idx)] = tload(t, value, 0);
            while (rt_next(yt.rank, yt.dims, idx));
            char what[96];
            snprintf(what, sizeof what, "cudnnSetTensor %s layout %d", tdtype_name(t), k);
            tcompare_span(&yt, dy, want, -1, what);
            free(want);
            free(y0);
            tbuf_free(dy);
            cudnnDestroyTensorDescriptor(yd);
        }
    }
}

/* ---- cudnnScaleTensor ------------------------------------------------------------------------------- */

static void run_scale(const struct rtensor *yt, double alpha, const char *what)
{
    double lo, hi;
    value_range(yt->dtype, &lo, &hi);
    void *y0 = thost_random(yt, lo, hi), *dy = tbuf_from(y0, rt_bytes(yt));
    cudnnTensorDescriptor_t yd = tdesc(yt);
    struct tscale s;
    CHECK_OK(cudnnScaleTensor(test_handle(), yd, dy, tscale(&s, yt->dtype, alpha)));
    double *want = malloc(sizeof(double) * (size_t)rt_span(yt));
    ref_ewise(REF_COPY, false, alpha, yt, y0, 0, NULL, NULL, 0, yt, y0, want);
    tcompare_span(yt, dy, want, -1, what);
    free(want);
    free(y0);
    tbuf_free(dy);
    cudnnDestroyTensorDescriptor(yd);
}

TEST(scale_tensor_every_type_and_layout)
{
    const int dims[] = {2, 32, 3, 5};
    for (int ti = 0; ti < NTYPES; ti++) {
        cudnnDataType_t t = all_types[ti];
        for (int k = 0; k < NLAYOUTS; k++) {
            struct rtensor yt;
            layout(k, t, 4, dims, &yt);
            char what[96];
            snprintf(what, sizeof what, "cudnnScaleTensor %s layout %d", tdtype_name(t), k);
            run_scale(&yt, k % 2 ? -1.5 : 0.75, what);
        }
    }
}

/* ---- cudnnAddTensor ------------------------------------------------------------------------------------ */

static void run_add(const struct rtensor *at, const struct rtensor *ct, double alpha, double beta, const char *what)
{
    double lo, hi, alo, ahi;
    value_range(ct->dtype, &lo, &hi);
    value_range(at->dtype, &alo, &ahi);
    void *a = thost_random(at, alo, ahi), *c = beta != 0 ? thost_random(ct, lo, hi) : thost_poison(ct);
    void *da = tbuf_from(a, rt_bytes(at)), *dc = tbuf_from(c, rt_bytes(ct));
    cudnnTensorDescriptor_t ad = tdesc(at), cd = tdesc(ct);
    struct tscale sa, sb;
    CHECK_OK(cudnnAddTensor(test_handle(), tscale(&sa, ct->dtype, alpha), ad, da, tscale(&sb, ct->dtype, beta), cd, dc));
    double *want = malloc(sizeof(double) * (size_t)rt_span(ct));
    ref_ewise(REF_COPY, false, alpha, at, a, 0, NULL, NULL, beta, ct, c, want);
    tcompare_span(ct, dc, want, -1, what);
    free(want);
    free(a);
    free(c);
    tbuf_free(da);
    tbuf_free(dc);
    cudnnDestroyTensorDescriptor(ad);
    cudnnDestroyTensorDescriptor(cd);
}

/* Broadcast patterns of A for C = [N, C, spatial...]: which dims of A are 1 (a bit per dim). */
static const unsigned add_patterns[] = {0x0, 0xd /* 1xCx1x1 */, 0xf /* all 1 */, 0x2 /* Nx1xHxW */,
                                        0x1 /* 1xCxHxW */, 0xc /* NxCx1x1 */, 0xb /* 1x1xHx1 */};

TEST(add_tensor_every_type_broadcast_and_layout)
{
    const int dims4[] = {2, 32, 3, 5}, dims5[] = {2, 32, 2, 3, 2};
    int n = 0;
    for (int ti = 0; ti < NTYPES; ti++) {
        cudnnDataType_t t = all_types[ti];
        for (size_t p = 0; p < sizeof add_patterns / sizeof add_patterns[0]; p++) {
            for (int rank = 4; rank <= 5; rank++) {
                const int *cdims = rank == 4 ? dims4 : dims5;
                int adims[RT_MAX_DIMS];
                for (int d = 0; d < rank; d++) adims[d] = (add_patterns[p] >> (rank == 4 ? d : d * 4 / 5)) & 1 ? 1 : cdims[d];
                if (rt_vect(t) > 1) adims[1] = cdims[1]; /* a vector type keeps its channels */
                int kc = n % NLAYOUTS, ka = (n / NLAYOUTS + 1) % NLAYOUTS;
                n++;
                struct rtensor at, ct;
                layout(ka, t, rank, adims, &at);
                layout(kc, t, rank, cdims, &ct);
                for (int b = 0; b < 2; b++) {
                    char what[128];
                    snprintf(what, sizeof what, "cudnnAddTensor %s pattern %zu rank %d layouts %d/%d beta %s",
                             tdtype_name(t), p, rank, ka, kc, b ? "-0.5" : "0");
                    run_add(&at, &ct, b ? 1.25 : -0.75, b ? -0.5 : 0.0, what);
                }
            }
        }
    }
}

/* Rows long enough that a block's step of packs lies in one row for some steps and spans two
   for others (NCHW, the bias one value per row), rows of 256 channels that a step spans many of
   (NHWC), and the same tensors scaled: the vectorized kernel's one-row and row-by-row paths, with
   one operand streamed (4 packs a thread for 16-bit types) or two. */
TEST(add_tensor_bias_long_rows)
{
    const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE,
                                     CUDNN_DATA_INT8};
    const int cdims[] = {2, 3, 96, 96}, bdims[] = {1, 3, 1, 1}, nhwc_c[] = {2, 256, 3, 5}, nhwc_b[] = {1, 256, 1, 1};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        for (int k = 0; k < 2; k++) {
            cudnnTensorFormat_t f = k ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
            struct rtensor ct, bt;
            rt_packed(&ct, types[ti], f, 4, k ? nhwc_c : cdims);
            rt_packed(&bt, types[ti], f, 4, k ? nhwc_b : bdims);
            char what[128];
            for (int b = 0; b < 2; b++) {
                snprintf(what, sizeof what, "cudnnAddTensor %s bias, long rows, layout %d, beta %d",
                         tdtype_name(types[ti]), k, b);
                run_add(&bt, &ct, 1.25, b ? 1.0 : 0.0, what);
            }
            snprintf(what, sizeof what, "cudnnAddTensor %s long rows, layout %d", tdtype_name(types[ti]), k);
            run_add(&ct, &ct, -0.75, 0.5, what);
            snprintf(what, sizeof what, "cudnnScaleTensor %s long rows, layout %d", tdtype_name(types[ti]), k);
            run_scale(&ct, -1, what);
        }
    }
}

/* A and C of different types (the 8.2 text says BAD_PARAM; it is cudnnTransformTensor's
   conversion with a broadcast, accepted): a float bias onto half or bfloat16 data and back,
   integer and vector types, double, in both layouts, blended and not. */
TEST(add_tensor_mixed_types)
{
    const cudnnDataType_t pairs[][2] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF},  {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16}, {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_INT8, CUDNN_DATA_FLOAT},  {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_FLOAT}, {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE},
        {CUDNN_DATA_INT32, CUDNN_DATA_HALF},  {CUDNN_DATA_UINT8, CUDNN_DATA_INT32},
        {CUDNN_DATA_INT8x4, CUDNN_DATA_FLOAT}, {CUDNN_DATA_HALF, CUDNN_DATA_INT8x32},
    };
    const int cdims[] = {2, 32, 3, 5}, bias[] = {1, 32, 1, 1};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        for (int k = 0; k < 4; k++) {
            struct rtensor at, ct;
            layout(k, pairs[i][0], 4, k % 2 ? bias : cdims, &at);
            layout((k + 1) % NLAYOUTS, pairs[i][1], 4, cdims, &ct);
            char what[128];
            snprintf(what, sizeof what, "cudnnAddTensor %s onto %s, layouts %d/%d%s", tdtype_name(pairs[i][0]),
                     tdtype_name(pairs[i][1]), k, (k + 1) % NLAYOUTS, k % 2 ? ", bias" : "");
            run_add(&at, &ct, k < 2 ? 1.0 : -0.75, k < 2 ? 0.0 : 1.0, what);
        }
}

TEST(add_tensor_in_place_doubles)
{
    /* A and C the same tensor: C = (alpha + beta) C */
    const int dims[] = {3, 4, 5, 6};
    struct rtensor ct;
    rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 4, dims);
    void *c = thost_random(&ct, -2, 2), *dc = tbuf_from(c, rt_bytes(&ct));
    cudnnTensorDescriptor_t cd = tdesc(&ct);
    float one = 1;
    CHECK_OK(cudnnAddTensor(test_handle(), &one, cd, dc, &one, cd, dc));
    double *want = malloc(sizeof(double) * (size_t)rt_span(&ct));
    ref_ewise(REF_COPY, false, 2.0, &ct, c, 0, NULL, NULL, 0, &ct, c, want);
    tcompare_span(&ct, dc, want, -1, "cudnnAddTensor in place");
    free(want);
    free(c);
    tbuf_free(dc);
    cudnnDestroyTensorDescriptor(cd);
}

/* ---- cudnnOpTensor --------------------------------------------------------------------------------- */

/* The documented (compType, A and B, C) combinations. */
static const cudnnDataType_t op_combos[][3] = {
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},       {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},        {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_HALF},         {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, CUDNN_DATA_INT8},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8},        {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16},
};

struct op_case {
    cudnnOpTensorOp_t op;
    cudnnNanPropagation_t nan;
    cudnnDataType_t comp;
    const struct rtensor *at, *bt, *ct;
    double alpha1, alpha2, beta;
    bool a_is_c; /* A is C's buffer (same layout): in place */
    bool b_is_c; /* B is C's buffer (same shape and layout) */
};

static void run_op(const struct op_case *k, const char *what)
{
    bool unary = k->op == CUDNN_OP_TENSOR_SQRT || k->op == CUDNN_OP_TENSOR_NOT;
    double lo, hi;
    value_range(k->at->dtype, &lo, &hi);
    if (k->op == CUDNN_OP_TENSOR_SQRT) lo = 0;
    void *a = thost_random(k->at, lo, hi), *b = thost_random(k->bt, lo, hi);
    void *c = k->beta != 0 || k->a_is_c || k->b_is_c ? thost_random(k->ct, lo, hi) : thost_poison(k->ct);
    if (k->a_is_c) memcpy(a, c, rt_bytes(k->ct));
    if (k->b_is_c) memcpy(b, c, rt_bytes(k->ct));
    void *da = tbuf_from(a, rt_bytes(k->at)), *db = tbuf_from(b, rt_bytes(k->bt)), *dc = tbuf_from(c, rt_bytes(k->ct));
    cudnnTensorDescriptor_t ad = tdesc(k->at), bd = tdesc(k->bt), cd = tdesc(k->ct);
    cudnnOpTensorDescriptor_t od;
    CHECK_OK(cudnnCreateOpTensorDescriptor(&od));
    CHECK_OK(cudnnSetOpTensorDescriptor(od, k->op, k->comp, k->nan));
    struct tscale s1, s2, sb;
    cudnnDataType_t st = k->ct->dtype;
    CHECK_OK(cudnnOpTensor(test_handle(), od, tscale(&s1, st, k->alpha1), ad, k->a_is_c ? dc : da,
                           tscale(&s2, st, k->alpha2), unary ? NULL : bd, unary ? NULL : k->b_is_c ? dc : db,
                           tscale(&sb, st, k->beta),
                           cd, dc));
    double *want = malloc(sizeof(double) * (size_t)rt_span(k->ct));
    ref_ewise((int)k->op, k->nan == CUDNN_PROPAGATE_NAN, k->alpha1, k->at, a, k->alpha2, unary ? NULL : k->bt, b,
              k->beta, k->ct, c, want);
    tcompare_span(k->ct, dc, want, -1, what);
    free(want);
    free(a);
    free(b);
    free(c);
    tbuf_free(da);
    tbuf_free(db);
    tbuf_free(dc);
    cudnnDestroyTensorDescriptor(ad);
    cudnnDestroyTensorDescriptor(bd);
    cudnnDestroyTensorDescriptor(cd);
    cudnnDestroyOpTensorDescriptor(od);
}

TEST(op_tensor_every_op_type_combination_and_broadcast)
{
    const int dims[] = {2, 8, 3, 5};
    const unsigned b_patterns[] = {0x0, 0xd, 0xf, 0x2};
    int n = 0;
    for (int op = CUDNN_OP_TENSOR_ADD; op <= CUDNN_OP_TENSOR_NOT; op++) {
        for (size_t ci = 0; ci < sizeof op_combos / sizeof op_combos[0]; ci++) {
            for (size_t p = 0; p < sizeof b_patterns / sizeof b_patterns[0]; p++, n++) {
                int bdims[4];
                for (int d = 0; d < 4; d++) bdims[d] = (b_patterns[p] >> d) & 1 ? 1 : dims[d];
                struct rtensor at, bt, ct;
                layout(n % NLAYOUTS, op_combos[ci][1], 4, dims, &at);
                layout((n + 1) % NLAYOUTS, op_combos[ci][1], 4, bdims, &bt);
                layout((n + 2) % NLAYOUTS, op_combos[ci][2], 4, dims, &ct);
                struct op_case k = {(cudnnOpTensorOp_t)op, n % 2 ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                    op_combos[ci][0], &at, &bt, &ct, 0.75, -1.25, n % 3 ? 0.5 : 0.0, false, false};
                char what[128];
                snprintf(what, sizeof what, "cudnnOpTensor op %d %s->%s B pattern %zu beta %g", op,
                         tdtype_name(op_combos[ci][1]), tdtype_name(op_combos[ci][2]), p, k.beta);
                run_op(&k, what);
            }
        }
    }
}

TEST(op_tensor_rank5_and_in_place)
{
    const int dims[] = {2, 3, 4, 2, 5}, bdims[] = {1, 3, 1, 1, 1};
    struct rtensor at, bt, ct;
    rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, dims);
    rt_packed(&bt, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 5, bdims);
    at = ct;
    for (int op = CUDNN_OP_TENSOR_ADD; op <= CUDNN_OP_TENSOR_NOT; op++) {
        /* A is C */
        struct op_case k = {(cudnnOpTensorOp_t)op, CUDNN_NOT_PROPAGATE_NAN, CUDNN_DATA_FLOAT, &at, &bt, &ct,
                            1.5, 0.5, op % 2 ? 0.0 : 2.0, true, false};
        run_op(&k, "cudnnOpTensor 5-D in place (A is C)");
        /* B is C and A is not: the 8.2 text asks for A too, but element by element the result
           is right, so it is accepted (docs/compatibility.md) */
        struct op_case kb = {(cudnnOpTensorOp_t)op, CUDNN_NOT_PROPAGATE_NAN, CUDNN_DATA_FLOAT, &at, &ct, &ct,
                             1.5, 0.5, op % 2 ? 0.0 : 2.0, false, true};
        run_op(&kb, "cudnnOpTensor 5-D, B is C");
    }
}

/* MIN and MAX with NaNs in A and B: propagated, or ignored in favour of the other operand. */
TEST(op_tensor_min_max_nan_propagation)
{
    const int dims[] = {1, 2, 3, 4};
    struct rtensor t;
    rt_packed(&t, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, dims);
    float a[24], b[24];
    for (int i = 0; i < 24; i++) {
        a[i] = (float)trand_uniform(-2, 2);
        b[i] = (float)trand_uniform(-2, 2);
    }
    a[3] = NAN;
    b[7] = NAN;
    a[11] = b[11] = NAN;
    void *da = tbuf_from(a, sizeof a), *db = tbuf_from(b, sizeof b), *dc = tbuf_alloc(sizeof a);
    cudnnTensorDescriptor_t d = tdesc(&t);
    cudnnOpTensorDescriptor_t od;
    CHECK_OK(cudnnCreateOpTensorDescriptor(&od));
    float one = 1, zero = 0, got[24];
    for (int op = CUDNN_OP_TENSOR_MIN; op <= CUDNN_OP_TENSOR_MAX; op++) {
        for (int nan = 0; nan < 2; nan++) {
            CHECK_OK(cudnnSetOpTensorDescriptor(od, (cudnnOpTensorOp_t)op, CUDNN_DATA_FLOAT, (cudnnNanPropagation_t)nan));
            tbuf_poison(dc, sizeof a);
            CHECK_OK(cudnnOpTensor(test_handle(), od, &one, d, da, &one, d, db, &zero, d, dc));
            tbuf_download(got, dc, sizeof got);
            double want[24];
            for (int i = 0; i < 24; i++) want[i] = ref_op(op, nan, a[i], b[i]);
            CHECK((isnan(want[3]) != 0) == (nan == 1) && !isnan(want[0])); /* isnan: any nonzero */
            tcompare(CUDNN_DATA_FLOAT, got, want, 24, 1e-6, op == CUDNN_OP_TENSOR_MIN ? "MIN with NaN" : "MAX with NaN");
        }
    }
    tbuf_free(da);
    tbuf_free(db);
    tbuf_free(dc);
    cudnnDestroyTensorDescriptor(d);
    cudnnDestroyOpTensorDescriptor(od);
}

/* A large packed problem, so that the vectorized paths run many steps and a tail. */
TEST(op_tensor_large_packed_tail)
{
    const int dims[] = {3, 7, 61, 67}; /* 85827 elements: not a multiple of any vector width */
    cudnnDataType_t types[][2] = {{CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT}, {CUDNN_DATA_HALF, CUDNN_DATA_HALF},
                                  {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT}, {CUDNN_DATA_INT8, CUDNN_DATA_INT8},
                                  {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        struct rtensor at, ct, bt;
        const int bdims[] = {1, 7, 1, 1};
        rt_packed(&at, types[i][0], CUDNN_TENSOR_NCHW, 4, dims);
        rt_packed(&bt, types[i][0], CUDNN_TENSOR_NCHW, 4, bdims);
        rt_packed(&ct, types[i][1], CUDNN_TENSOR_NCHW, 4, dims);
        struct op_case k = {CUDNN_OP_TENSOR_ADD, CUDNN_NOT_PROPAGATE_NAN, CUDNN_DATA_FLOAT, &at, &at, &ct,
                            0.5, 2.0, i % 2 ? 0.0 : -1.0, false, false};
        run_op(&k, "cudnnOpTensor large packed");
        k.bt = &bt;
        k.op = CUDNN_OP_TENSOR_MUL;
        run_op(&k, "cudnnOpTensor large, per-channel B");
        run_add(&at, &at, 0.25, i % 2 ? 1.0 : 0.0, "cudnnAddTensor large packed");
    }
}

/* ---- the op tensor descriptor ------------------------------------------------------------------------ */

TEST_ONCE(op_tensor_descriptor_set_get_and_bad_values)
{
    cudnnOpTensorDescriptor_t od;
    CHECK_STATUS(cudnnCreateOpTensorDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnCreateOpTensorDescriptor(&od));
    cudnnOpTensorOp_t op = (cudnnOpTensorOp_t)-1;
    cudnnDataType_t comp = (cudnnDataType_t)-1;
    cudnnNanPropagation_t nan = (cudnnNanPropagation_t)-1;
    CHECK_OK(cudnnGetOpTensorDescriptor(od, &op, &comp, &nan)); /* zero-initialized */
    CHECK(op == CUDNN_OP_TENSOR_ADD && comp == CUDNN_DATA_FLOAT && nan == CUDNN_NOT_PROPAGATE_NAN);
    CHECK_OK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_SQRT, CUDNN_DATA_DOUBLE, CUDNN_PROPAGATE_NAN));
    CHECK_OK(cudnnGetOpTensorDescriptor(od, &op, &comp, &nan));
    CHECK(op == CUDNN_OP_TENSOR_SQRT && comp == CUDNN_DATA_DOUBLE && nan == CUDNN_PROPAGATE_NAN);
    /* bad values leave the descriptor as it was */
    CHECK_STATUS(cudnnSetOpTensorDescriptor(od, (cudnnOpTensorOp_t)6, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_ADD, (cudnnDataType_t)99, CUDNN_NOT_PROPAGATE_NAN),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, (cudnnNanPropagation_t)2),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetOpTensorDescriptor(od, &op, &comp, &nan));
    CHECK(op == CUDNN_OP_TENSOR_SQRT && comp == CUDNN_DATA_DOUBLE && nan == CUDNN_PROPAGATE_NAN);
    CHECK_STATUS(cudnnGetOpTensorDescriptor(od, NULL, &comp, &nan), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetOpTensorDescriptor(od, &op, NULL, &nan), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetOpTensorDescriptor(od, &op, &comp, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetOpTensorDescriptor(NULL, &op, &comp, &nan), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyOpTensorDescriptor(od));
    CHECK_STATUS(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN),
                 CUDNN_STATUS_BAD_PARAM); /* destroyed */
    CHECK_STATUS(cudnnDestroyOpTensorDescriptor(od), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyOpTensorDescriptor(NULL));
}

/* ---- bad inputs: exact status, nothing written ------------------------------------------------------ */

struct bad_env {
    cudnnHandle_t h, dead_handle;
    cudnnTensorDescriptor_t c, a5, c5, c6, half, unset, dead, i8x4, i64, a_wrong, b_bcast;
    cudnnOpTensorDescriptor_t op, op_dead;
    void *dc, *da, *pattern;
    size_t bytes;
};

static cudnnTensorDescriptor_t desc_nd(cudnnDataType_t t, int rank, const int dims[])
{
    struct rtensor rt;
    rt_packed(&rt, t, rt_vect(t) > 1 ? CUDNN_TENSOR_NCHW_VECT_C : CUDNN_TENSOR_NCHW, rank, dims);
    return tdesc(&rt);
}

static void bad_env_open(struct bad_env *e)
{
    memset(e, 0, sizeof *e);
    e->h = test_handle();
    CHECK_OK(cudnnCreate(&e->dead_handle));
    CHECK_OK(cudnnDestroy(e->dead_handle));
    const int d4[] = {2, 4, 3, 5}, d5[] = {2, 4, 3, 5, 1}, d6[] = {2, 4, 3, 5, 1, 1}, wrong[] = {2, 3, 3, 5},
              bc[] = {1, 4, 1, 1};
    e->c = desc_nd(CUDNN_DATA_FLOAT, 4, d4);
    e->a5 = desc_nd(CUDNN_DATA_FLOAT, 5, d5);
    e->c5 = desc_nd(CUDNN_DATA_FLOAT, 5, d5);
    e->c6 = desc_nd(CUDNN_DATA_FLOAT, 6, d6);
    e->half = desc_nd(CUDNN_DATA_HALF, 4, d4);
    e->i8x4 = desc_nd(CUDNN_DATA_INT8x4, 4, d4);
    e->i64 = desc_nd(CUDNN_DATA_INT64, 4, d4);
    e->a_wrong = desc_nd(CUDNN_DATA_FLOAT, 4, wrong);
    e->b_bcast = desc_nd(CUDNN_DATA_FLOAT, 4, bc);
    CHECK_OK(cudnnCreateTensorDescriptor(&e->unset));
    e->dead = desc_nd(CUDNN_DATA_FLOAT, 4, d4);
    CHECK_OK(cudnnDestroyTensorDescriptor(e->dead));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&e->op));
    CHECK_OK(cudnnCreateOpTensorDescriptor(&e->op_dead));
    CHECK_OK(cudnnDestroyOpTensorDescriptor(e->op_dead));
    e->bytes = 2 * 4 * 3 * 5 * 8;
    e->pattern = malloc(e->bytes);
    for (size_t i = 0; i < e->bytes; i++) ((unsigned char *)e->pattern)[i] = (unsigned char)(i * 7 + 3);
    e->dc = tbuf_from(e->pattern, e->bytes);
    e->da = tbuf_from(e->pattern, e->bytes);
}

static void bad_env_close(struct bad_env *e)
{
    cudnnTensorDescriptor_t all[] = {e->c, e->a5, e->c5, e->c6, e->half, e->i8x4, e->i64, e->a_wrong, e->b_bcast, e->unset};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudnnDestroyTensorDescriptor(all[i]);
    cudnnDestroyOpTensorDescriptor(e->op);
    tbuf_free(e->dc);
    tbuf_free(e->da);
    free(e->pattern);
}

#define EXPECT_UNTOUCHED(call, status)                                                                      \
    do {                                                                                                    \
        CHECK_STATUS(call, status);                                                                         \
        tbuf_unchanged(e.dc, e.pattern, e.bytes, #call);                                                    \
    } while (0)

TEST(set_scale_add_bad_inputs)
{
    struct bad_env e;
    bad_env_open(&e);
    float one = 1, value = 2;
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM, NS = CUDNN_STATUS_NOT_SUPPORTED;
    /* cudnnSetTensor: "a provided pointer is NULL" and invalid descriptors */
    EXPECT_UNTOUCHED(cudnnSetTensor(NULL, e.c, e.dc, &value), BAD);
    EXPECT_UNTOUCHED(cudnnSetTensor(e.dead_handle, e.c, e.dc, &value), BAD);
    EXPECT_UNTOUCHED(cudnnSetTensor(e.h, NULL, e.dc, &value), BAD);
    EXPECT_UNTOUCHED(cudnnSetTensor(e.h, e.dead, e.dc, &value), BAD);
    EXPECT_UNTOUCHED(cudnnSetTensor(e.h, e.unset, e.dc, &value), BAD);
    EXPECT_UNTOUCHED(cudnnSetTensor(e.h, e.c, e.dc, NULL), BAD);
    CHECK_STATUS(cudnnSetTensor(e.h, e.c, NULL, &value), BAD);
    /* cudnnScaleTensor */
    EXPECT_UNTOUCHED(cudnnScaleTensor(NULL, e.c, e.dc, &one), BAD);
    EXPECT_UNTOUCHED(cudnnScaleTensor(e.h, e.dead, e.dc, &one), BAD);
    EXPECT_UNTOUCHED(cudnnScaleTensor(e.h, e.unset, e.dc, &one), BAD);
    EXPECT_UNTOUCHED(cudnnScaleTensor(e.h, e.c, e.dc, NULL), BAD);
    EXPECT_UNTOUCHED(cudnnScaleTensor(e.h, e.i64, e.dc, &one), NS);
    CHECK_STATUS(cudnnScaleTensor(e.h, e.c, NULL, &one), BAD);
    /* cudnnAddTensor: dims neither equal nor 1, a type no tensor operation takes (others may
       differ: add_tensor_mixed_types), ranks, pointers, > 5 dims */
    EXPECT_UNTOUCHED(cudnnAddTensor(NULL, &one, e.c, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.a_wrong, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.i64, e.da, &one, e.c, e.dc), NS);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.a5, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, NULL, e.c, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.c, e.da, NULL, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.c, NULL, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.dead, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.c6, e.da, &one, e.c6, e.dc), NS);
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.i64, e.da, &one, e.i64, e.dc), NS);
    CHECK_STATUS(cudnnAddTensor(e.h, &one, e.c, e.da, &one, e.c, NULL), BAD);
    /* C on a broadcast A: each A element is read by many of C's (ocd_check_alias) */
    EXPECT_UNTOUCHED(cudnnAddTensor(e.h, &one, e.b_bcast, e.dc, &one, e.c, e.dc), BAD);
    bad_env_close(&e);
}

TEST(op_tensor_bad_inputs)
{
    struct bad_env e;
    bad_env_open(&e);
    float one = 1;
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM, NS = CUDNN_STATUS_NOT_SUPPORTED;
    cudnnHandle_t h = e.h;
    cudnnOpTensorDescriptor_t op = e.op;
    EXPECT_UNTOUCHED(cudnnOpTensor(NULL, op, &one, e.c, e.da, &one, e.c, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, NULL, &one, e.c, e.da, &one, e.c, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, e.op_dead, &one, e.c, e.da, &one, e.c, e.da, &one, e.c, e.dc), BAD);
    /* A's dims must equal C's: broadcasting is for B only */
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.b_bcast, e.da, &one, e.c, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, &one, e.a_wrong, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, &one, e.a5, e.da, &one, e.c, e.dc), BAD);
    /* A and B of different types */
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, &one, e.half, e.da, &one, e.c, e.dc), BAD);
    /* C on a broadcast B: each B element is read by many of C's (ocd_check_alias) */
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, &one, e.b_bcast, e.dc, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, NULL, e.c, e.da, &one, e.c, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, NULL, e.c, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, &one, e.c, e.da, NULL, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, NULL, &one, e.c, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, &one, e.c, NULL, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, &one, NULL, e.da, &one, e.c, e.dc), BAD);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.unset, e.da, &one, e.c, e.da, &one, e.c, e.dc), BAD);
    /* unsupported: more than 5 dims, a combination outside the table, vector types */
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c6, e.da, &one, e.c6, e.da, &one, e.c6, e.dc), NS);
    CHECK_OK(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_DOUBLE, CUDNN_NOT_PROPAGATE_NAN));
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.c, e.da, &one, e.c, e.da, &one, e.c, e.dc), NS);
    CHECK_OK(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.i8x4, e.da, &one, e.i8x4, e.da, &one, e.i8x4, e.dc), NS);
    EXPECT_UNTOUCHED(cudnnOpTensor(h, op, &one, e.half, e.da, &one, e.half, e.da, &one, e.i8x4, e.dc), NS);
    /* SQRT and NOT ignore B: NULL is fine */
    CHECK_OK(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_NOT, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    CHECK_OK(cudnnOpTensor(h, op, &one, e.c, e.da, NULL, NULL, NULL, &one, e.c, e.dc));
    bad_env_close(&e);
}
