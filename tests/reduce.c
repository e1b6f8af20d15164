/* reduce.c: tests of cudnnReduceTensor, its descriptor and size queries, against ref/reduce.c.

   Every op, every documented type combination, reductions over each kind of dimension set, NCHW,
   NHWC and gapped layouts, beta == 0 on a NaN-poisoned C, indices for MIN, MAX and AMAX (with many
   equal values, so that the first one must win), NaN propagation, and reductions long enough to
   be split into ranges that need a workspace. */
#include "ref/reduce.h"
#include "tensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct red_case {
    cudnnReduceTensorOp_t op;
    cudnnNanPropagation_t nan;
    const struct rtensor *at, *ct;
    double alpha, beta, lo, hi;
    bool indices;
};

static bool selects(cudnnReduceTensorOp_t op)
{
    return op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX || op == CUDNN_REDUCE_TENSOR_AMAX;
}

/* Runs one reduction with fresh data (a: given, or random in [lo, hi]) and checks C and indices. */
static void run_reduce(const struct red_case *k, const void *a_given, const char *what)
{
    cudnnHandle_t h = test_handle();
    void *a = a_given ? (void *)a_given : thost_random(k->at, k->lo, k->hi);
    void *c = k->beta != 0 ? thost_random(k->ct, -2, 2) : thost_poison(k->ct);
    void *da = tbuf_from(a, rt_bytes(k->at)), *dc = tbuf_from(c, rt_bytes(k->ct));
    cudnnTensorDescriptor_t ad = tdesc(k->at), cd = tdesc(k->ct);
    cudnnReduceTensorDescriptor_t rd;
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd));
    cudnnDataType_t comp = k->at->dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    CHECK_OK(cudnnSetReduceTensorDescriptor(rd, k->op, comp, k->nan,
                                            k->indices ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES
                                                       : CUDNN_REDUCE_TENSOR_NO_INDICES,
                                            CUDNN_32BIT_INDICES));
    size_t ibytes = 1, wbytes = 1;
    CHECK_OK(cudnnGetReductionIndicesSize(h, rd, ad, cd, &ibytes));
    CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, ad, cd, &wbytes));
    int64_t outputs = rt_count(k->ct);
    bool want_indices = k->indices && selects(k->op);
    CHECK(ibytes == (want_indices ? (size_t)outputs * 4 : 0));
    void *di = tbuf_alloc(ibytes), *dw = tbuf_alloc(wbytes);
    struct tscale sa, sb;
    /* the pointers at elements (0,...,0): into the buffer where a view is reversed */
    void *a0 = (char *)da + rt_origin(k->at) * (int64_t)tdtype_size(k->at->dtype);
    void *c0 = (char *)dc + rt_origin(k->ct) * (int64_t)tdtype_size(k->ct->dtype);
    CHECK_OK(cudnnReduceTensor(h, rd, ibytes ? di : NULL, ibytes, wbytes ? dw : NULL, wbytes,
                               tscale(&sa, k->ct->dtype, k->alpha), ad, a0, tscale(&sb, k->ct->dtype, k->beta), cd, c0));
    double *want = malloc(sizeof(double) * (size_t)rt_span(k->ct));
    uint32_t *want_idx = malloc(sizeof(uint32_t) * (size_t)outputs), *got_idx = malloc(ibytes + 4);
    ref_reduce(k->op, k->nan == CUDNN_PROPAGATE_NAN, k->alpha, k->at, a, k->beta, k->ct, c, want, want_idx);
    /* a sum of many rounded terms: float output within 1e-5 of the double reference, scaled */
    double tol = k->ct->dtype == CUDNN_DATA_FLOAT ? 1e-5 * (1 + rt_count(k->at) / outputs / 64) : -1;
    tcompare_span(k->ct, dc, want, tol, what);
    if (want_indices) {
        tbuf_download(got_idx, di, ibytes);
        for (int64_t o = 0; o < outputs; o++)
            if (got_idx[o] != want_idx[o]) {
                FAIL("%s: index of output %lld is %u, want %u", what, (long long)o, got_idx[o], want_idx[o]);
                break;
            }
    }
    free(got_idx);
    free(want_idx);
    free(want);
    if (!a_given) free(a);
    free(c);
    tbuf_free(da);
    tbuf_free(dc);
    tbuf_free(di);
    tbuf_free(dw);
    cudnnDestroyTensorDescriptor(ad);
    cudnnDestroyTensorDescriptor(cd);
    cudnnDestroyReduceTensorDescriptor(rd);
}

/* The documented (A, C) pairs: DOUBLE with DOUBLE, and FLOAT, HALF, BFLOAT16, INT8 mixed. */
static const cudnnDataType_t type_pairs[][2] = {
    {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT}, {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE}, {CUDNN_DATA_HALF, CUDNN_DATA_HALF},
    {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16}, {CUDNN_DATA_INT8, CUDNN_DATA_INT8}, {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},
    {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF}, {CUDNN_DATA_INT8, CUDNN_DATA_FLOAT}, {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8},
    {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
};

/* Which dims of C are 1, a bit per dim of A = [2, 3, 4, 5]. */
static const unsigned reduce_patterns[] = {0x1 /* N */, 0x2 /* C */, 0xc /* HW */, 0xf /* all */,
                                           0x8 /* W */, 0x5 /* N and H */, 0xe /* CHW */};

static void value_range(cudnnReduceTensorOp_t op, cudnnDataType_t t, double *lo, double *hi)
{
    bool integer = t == CUDNN_DATA_INT8;
    if (op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS) {
        *lo = integer ? -2 : 0.6;
        *hi = integer ? 2 : 1.4;
    } else {
        *lo = integer ? -9 : -2;
        *hi = integer ? 9 : 2;
    }
}

TEST(reduce_every_op_type_pattern_and_layout)
{
    const int adims[] = {2, 3, 4, 5};
    const int order_a[] = {0, 2, 3, 1}, order_c[] = {3, 2, 1, 0};
    int n = 0;
    for (int op = CUDNN_REDUCE_TENSOR_ADD; op <= CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS; op++) {
        for (size_t ti = 0; ti < sizeof type_pairs / sizeof type_pairs[0]; ti++) {
            for (size_t p = 0; p < sizeof reduce_patterns / sizeof reduce_patterns[0]; p++, n++) {
                int cdims[4];
                for (int d = 0; d < 4; d++) cdims[d] = (reduce_patterns[p] >> d) & 1 ? 1 : adims[d];
                struct rtensor at, ct;
                cudnnDataType_t ta = type_pairs[ti][0], tc = type_pairs[ti][1];
                if (n % 3 == 0) rt_packed(&at, ta, CUDNN_TENSOR_NCHW, 4, adims);
                else if (n % 3 == 1) rt_packed(&at, ta, CUDNN_TENSOR_NHWC, 4, adims);
                else rt_gapped(&at, ta, 4, adims, order_a, 2);
                if (n % 2 == 0) rt_packed(&ct, tc, n % 4 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, 4, cdims);
                else rt_gapped(&ct, tc, 4, cdims, order_c, 1);
                struct red_case k = {(cudnnReduceTensorOp_t)op, n % 2 ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                     &at, &ct, n % 5 ? 1.0 : -0.5, n % 3 ? 0.0 : 0.25, 0, 0, n % 2 == 0};
                value_range(k.op, ta, &k.lo, &k.hi);
                char what[128];
                snprintf(what, sizeof what, "reduce op %d types %d->%d pattern %zu", op, (int)ta, (int)tc, p);
                run_reduce(&k, NULL, what);
            }
        }
    }
}

/* Reversed views (negative strides), as NVIDIA's library takes them at Set: A reversed along
   some dims, C along others or not at all, each reduction pattern; indices count the reduced
   elements in their logical order. */
TEST(reduce_reversed_views)
{
    const int adims[] = {2, 3, 4, 5};
    static const unsigned flips[][2] = {{0xf, 0}, {0x5, 0xa}, {0, 0xf}, {0xa, 0xf}};
    static const cudnnReduceTensorOp_t ops[] = {CUDNN_REDUCE_TENSOR_ADD, CUDNN_REDUCE_TENSOR_MAX,
                                                CUDNN_REDUCE_TENSOR_AVG, CUDNN_REDUCE_TENSOR_AMAX,
                                                CUDNN_REDUCE_TENSOR_NORM2};
    int n = 0;
    for (size_t f = 0; f < TLEN(flips); f++)
        for (size_t p = 0; p < TLEN(reduce_patterns); p++, n++) {
            int cdims[4];
            for (int d = 0; d < 4; d++) cdims[d] = (reduce_patterns[p] >> d) & 1 ? 1 : adims[d];
            struct rtensor at, ct;
            rt_packed(&at, CUDNN_DATA_FLOAT, n % 2 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, 4, adims);
            rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, cdims);
            for (int d = 0; d < 4; d++) {
                if (flips[f][0] >> d & 1) at.strides[d] = -at.strides[d];
                if (flips[f][1] >> d & 1) ct.strides[d] = -ct.strides[d];
            }
            const cudnnReduceTensorOp_t op = ops[n % TLEN(ops)];
            struct red_case k = {op, CUDNN_NOT_PROPAGATE_NAN, &at, &ct, 1.0, n % 3 ? 0.0 : 0.5, 0, 0, true};
            value_range(op, CUDNN_DATA_FLOAT, &k.lo, &k.hi);
            char what[128];
            snprintf(what, sizeof what, "reduce op %d, flips A %#x C %#x, pattern %zu", (int)op, flips[f][0],
                     flips[f][1], p);
            run_reduce(&k, NULL, what);
        }
}

TEST(reduce_5d_and_8d)
{
    const int a5[] = {2, 3, 2, 3, 4}, c5[] = {2, 1, 2, 1, 1}, a8[] = {2, 1, 3, 1, 2, 2, 1, 3},
              c8[] = {1, 1, 3, 1, 1, 2, 1, 1};
    struct rtensor at, ct;
    for (int op = CUDNN_REDUCE_TENSOR_ADD; op <= CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS; op++) {
        struct red_case k = {(cudnnReduceTensorOp_t)op, CUDNN_NOT_PROPAGATE_NAN, &at, &ct, 1.5, 0, 0, 0, true};
        value_range(k.op, CUDNN_DATA_FLOAT, &k.lo, &k.hi);
        rt_packed(&at, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 5, a5);
        rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, c5);
        run_reduce(&k, NULL, "5-D reduction");
        rt_packed(&at, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 8, a8);
        rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 8, c8);
        run_reduce(&k, NULL, "8-D reduction");
    }
}

/* Integer data with many equal values: MIN, MAX and AMAX must report the first occurrence. */
TEST(reduce_indices_first_of_equals)
{
    const int adims[] = {3, 4, 5, 6};
    const unsigned patterns[] = {0x1, 0x6, 0xa, 0xf, 0x9};
    for (int op = CUDNN_REDUCE_TENSOR_MIN; op <= CUDNN_REDUCE_TENSOR_AMAX; op++) {
        for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
            int cdims[4];
            for (int d = 0; d < 4; d++) cdims[d] = (patterns[p] >> d) & 1 ? 1 : adims[d];
            struct rtensor at, ct;
            rt_packed(&at, CUDNN_DATA_INT8, p % 2 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, 4, adims);
            rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, cdims);
            struct red_case k = {(cudnnReduceTensorOp_t)op, CUDNN_NOT_PROPAGATE_NAN, &at, &ct, 1, 0, -3, 3, true};
            run_reduce(&k, NULL, "indices of equal values");
        }
    }
}

TEST(reduce_nan_propagation)
{
    const int adims[] = {2, 3, 1, 8}, cdims[] = {2, 3, 1, 1};
    struct rtensor at, ct;
    rt_packed(&at, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, adims);
    rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, cdims);
    float a[48];
    for (int i = 0; i < 48; i++) a[i] = (float)trand_uniform(-2, 2);
    a[3] = NAN;                                             /* one NaN in row 0 */
    a[8] = a[13] = NAN;                                     /* two in row 1 */
    for (int i = 16; i < 24; i++) a[i] = NAN;               /* row 2: all NaN */
    for (int op = CUDNN_REDUCE_TENSOR_ADD; op <= CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS; op++)
        for (int nan = 0; nan < 2; nan++) {
            struct red_case k = {(cudnnReduceTensorOp_t)op, (cudnnNanPropagation_t)nan, &at, &ct, 1, 0, 0, 0, true};
            run_reduce(&k, a, nan ? "NaN propagated" : "NaN not propagated");
        }
}

/* Long reductions are split into ranges combined through the workspace. */
TEST(reduce_long_ranges_use_the_workspace)
{
    struct {
        int a[4], c[4];
    } shapes[] = {
        {{1, 1, 150, 200}, {1, 1, 1, 1}},   /* everything: 30000 elements */
        {{20000, 2, 1, 1}, {1, 2, 1, 1}},   /* across the unit stride (columns) */
        {{2, 3, 1, 9000}, {2, 3, 1, 1}},    /* along the unit stride (rows) */
        {{1, 5, 7, 3001}, {1, 1, 7, 1}},    /* two reduced dims, 15005 each */
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct rtensor at, ct;
        rt_packed(&at, CUDNN_DATA_INT8, CUDNN_TENSOR_NCHW, 4, shapes[s].a);
        rt_packed(&ct, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, shapes[s].c);
        cudnnTensorDescriptor_t ad = tdesc(&at), cd = tdesc(&ct);
        cudnnReduceTensorDescriptor_t rd;
        CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd));
        size_t wbytes = 0;
        CHECK_OK(cudnnGetReductionWorkspaceSize(test_handle(), rd, ad, cd, &wbytes));
        CHECK(wbytes > 0);
        cudnnDestroyTensorDescriptor(ad);
        cudnnDestroyTensorDescriptor(cd);
        cudnnDestroyReduceTensorDescriptor(rd);
        for (int op = CUDNN_REDUCE_TENSOR_ADD; op <= CUDNN_REDUCE_TENSOR_NORM2; op++) {
            if (op == CUDNN_REDUCE_TENSOR_MUL) continue; /* a product of 10^4 terms says little */
            struct red_case k = {(cudnnReduceTensorOp_t)op, CUDNN_PROPAGATE_NAN, &at, &ct, 0.5, 0, -3, 3, true};
            run_reduce(&k, NULL, "long reduction");
        }
    }
}

/* ---- the descriptor --------------------------------------------------------------------------- */

TEST_ONCE(reduce_descriptor_set_get_and_bad_values)
{
    cudnnReduceTensorDescriptor_t rd;
    CHECK_STATUS(cudnnCreateReduceTensorDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd));
    cudnnReduceTensorOp_t op;
    cudnnDataType_t comp;
    cudnnNanPropagation_t nan;
    cudnnReduceTensorIndices_t ind;
    cudnnIndicesType_t it;
    CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_AMAX, CUDNN_DATA_DOUBLE, CUDNN_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_16BIT_INDICES));
    CHECK_OK(cudnnGetReduceTensorDescriptor(rd, &op, &comp, &nan, &ind, &it));
    CHECK(op == CUDNN_REDUCE_TENSOR_AMAX && comp == CUDNN_DATA_DOUBLE && nan == CUDNN_PROPAGATE_NAN &&
          ind == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES && it == CUDNN_16BIT_INDICES);
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM;
    CHECK_STATUS(cudnnSetReduceTensorDescriptor(rd, (cudnnReduceTensorOp_t)9, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                                CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES), BAD);
    CHECK_STATUS(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, (cudnnDataType_t)77, CUDNN_PROPAGATE_NAN,
                                                CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES), BAD);
    CHECK_STATUS(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, (cudnnNanPropagation_t)2,
                                                CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES), BAD);
    CHECK_STATUS(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                                (cudnnReduceTensorIndices_t)2, CUDNN_32BIT_INDICES), BAD);
    CHECK_STATUS(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                                CUDNN_REDUCE_TENSOR_NO_INDICES, (cudnnIndicesType_t)4), BAD);
    CHECK_STATUS(cudnnSetReduceTensorDescriptor(NULL, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
                                                CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES), BAD);
    CHECK_OK(cudnnGetReduceTensorDescriptor(rd, &op, &comp, &nan, &ind, &it));
    CHECK(op == CUDNN_REDUCE_TENSOR_AMAX && it == CUDNN_16BIT_INDICES); /* unchanged */
    CHECK_STATUS(cudnnGetReduceTensorDescriptor(rd, NULL, &comp, &nan, &ind, &it), BAD);
    CHECK_STATUS(cudnnGetReduceTensorDescriptor(rd, &op, &comp, &nan, &ind, NULL), BAD);
    CHECK_STATUS(cudnnGetReduceTensorDescriptor(NULL, &op, &comp, &nan, &ind, &it), BAD);
    CHECK_OK(cudnnDestroyReduceTensorDescriptor(rd));
    CHECK_STATUS(cudnnGetReduceTensorDescriptor(rd, &op, &comp, &nan, &ind, &it), BAD);
    CHECK_OK(cudnnDestroyReduceTensorDescriptor(NULL));
}

/* ---- bad inputs -------------------------------------------------------------------------------- */

TEST(reduce_bad_inputs)
{
    cudnnHandle_t h = test_handle();
    const int ad4[] = {1, 2, 3, 30000}, cd4[] = {1, 2, 3, 1}, bad4[] = {1, 2, 2, 1}, d5[] = {1, 2, 3, 30000, 1};
    struct rtensor a, c, wrong, a5, ad_, cd_, ai32, ci32;
    rt_packed(&a, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, ad4);
    rt_packed(&c, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, cd4);
    rt_packed(&wrong, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, bad4);
    rt_packed(&a5, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, d5);
    rt_packed(&ad_, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 4, ad4);
    rt_packed(&cd_, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 4, cd4);
    rt_packed(&ai32, CUDNN_DATA_INT32, CUDNN_TENSOR_NCHW, 4, ad4);
    rt_packed(&ci32, CUDNN_DATA_INT32, CUDNN_TENSOR_NCHW, 4, cd4);
    cudnnTensorDescriptor_t A = tdesc(&a), C = tdesc(&c), W = tdesc(&wrong), A5 = tdesc(&a5), AD = tdesc(&ad_),
                            CD = tdesc(&cd_), AI = tdesc(&ai32), CI = tdesc(&ci32), dead;
    CHECK_OK(cudnnCreateTensorDescriptor(&dead));
    CHECK_OK(cudnnDestroyTensorDescriptor(dead));
    cudnnReduceTensorDescriptor_t rd, rdead;
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&rd));
    CHECK_OK(cudnnCreateReduceTensorDescriptor(&rdead));
    CHECK_OK(cudnnDestroyReduceTensorDescriptor(rdead));
    CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    size_t ibytes = 0, wbytes = 0;
    CHECK_OK(cudnnGetReductionIndicesSize(h, rd, A, C, &ibytes));
    CHECK_OK(cudnnGetReductionWorkspaceSize(h, rd, A, C, &wbytes));
    CHECK(ibytes == 6 * 4 && wbytes > 0);
    void *host_a = thost_random(&a, -1, 1), *da = tbuf_from(host_a, rt_bytes(&a)), *dc, *di, *dw;
    free(host_a);
    unsigned char pattern[64 * 8];
    for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (unsigned char)(i * 29 + 5);
    dc = tbuf_from(pattern, sizeof pattern);
    di = tbuf_from(pattern, sizeof pattern);
    dw = tbuf_alloc(wbytes);
    float one = 1, zero = 0;
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM, NS = CUDNN_STATUS_NOT_SUPPORTED, INV = CUDNN_STATUS_INVALID_VALUE;
#define UNTOUCHED(call, status)                                                                             \
    do {                                                                                                    \
        CHECK_STATUS(call, status);                                                                         \
        tbuf_unchanged(dc, pattern, sizeof pattern, #call);                                                 \
        tbuf_unchanged(di, pattern, sizeof pattern, #call);                                                 \
    } while (0)
    /* sizes too small: CUDNN_STATUS_INVALID_VALUE */
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes - 1, dw, wbytes, &one, A, da, &zero, C, dc), INV);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes - 1, &one, A, da, &zero, C, dc), INV);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, NULL, 0, &one, A, da, &zero, C, dc), INV);
    UNTOUCHED(cudnnReduceTensor(h, rd, NULL, ibytes, dw, wbytes, &one, A, da, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, NULL, wbytes, &one, A, da, &zero, C, dc), BAD);
    /* shapes: C neither A's nor 1, ranks differ, nothing reduced */
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, A, da, &zero, W, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, A5, da, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, C, da, &zero, C, dc), BAD);
    /* types: DOUBLE with DOUBLE only (under any compute type: compat_reduce_thor_batch_reduce); no INT32 */
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, AD, da, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, A, da, &zero, CD, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, AI, da, &zero, CI, dc), NS);
    /* pointers and descriptors */
    UNTOUCHED(cudnnReduceTensor(NULL, rd, di, ibytes, dw, wbytes, &one, A, da, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, NULL, di, ibytes, dw, wbytes, &one, A, da, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rdead, di, ibytes, dw, wbytes, &one, A, da, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, NULL, A, da, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, A, da, NULL, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, A, NULL, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, dead, da, &zero, C, dc), BAD);
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, A, da, &zero, dead, dc), BAD);
    /* indices other than 32-bit */
    CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_64BIT_INDICES));
    UNTOUCHED(cudnnReduceTensor(h, rd, di, 64, dw, wbytes, &one, A, da, &zero, C, dc), NS);
    size_t size = 12345;
    CHECK_STATUS(cudnnGetReductionIndicesSize(h, rd, A, C, &size), NS);
    CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_DOUBLE, CUDNN_NOT_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    UNTOUCHED(cudnnReduceTensor(h, rd, di, ibytes, dw, wbytes, &one, A, da, &zero, C, dc), NS);
    /* the size queries check their arguments too, and write nothing on failure */
    CHECK_STATUS(cudnnGetReductionIndicesSize(h, rd, A, W, &size), BAD);
    CHECK_STATUS(cudnnGetReductionWorkspaceSize(h, rd, A, C, NULL), BAD);
    CHECK_STATUS(cudnnGetReductionWorkspaceSize(NULL, rd, A, C, &size), BAD);
    CHECK_STATUS(cudnnGetReductionIndicesSize(h, rdead, A, C, &size), BAD);
    CHECK(size == 12345);
    /* indices requested for an op without them: ignored, size 0 */
    CHECK_OK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                            CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_64BIT_INDICES));
    CHECK_OK(cudnnGetReductionIndicesSize(h, rd, A, C, &size));
    CHECK(size == 0);
#undef UNTOUCHED
    cudnnTensorDescriptor_t all[] = {A, C, W, A5, AD, CD, AI, CI};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudnnDestroyTensorDescriptor(all[i]);
    cudnnDestroyReduceTensorDescriptor(rd);
    tbuf_free(da);
    tbuf_free(dc);
    tbuf_free(di);
    tbuf_free(dw);
}
