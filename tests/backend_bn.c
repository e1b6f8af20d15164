/* backend_bn.c: the backend API's batch-norm operations on the backend under test, against
   tests/ref/batchnorm.c with outputs poisoned first:
   - BN_FINALIZE_STATISTICS in training as cudnn-frontend's "BN Finalize" sample builds it (every
     tensor 1 x C x 1 x 1 float, epsilon and the averaging factor double and the count int64, all
     three by value), in inference (epsilon a float tensor in device memory, the equivalent scale
     and bias half), and after a GEN_STATS whose sums are virtual (the statistics then checked
     against x's own);
   - BN_BWD_WEIGHTS (float NHWC, half NCHW): dscale, dbias and the coefficients of
     dx = eq_dy_scale * dy + eq_x_scale * x + eq_bias, that dx compared with the reference's
     backward pass and, with dscale and dbias, with finite differences of the reference's forward
     pass;
   - operations without the tensors their mode needs fail at finalize with BAD_PARAM, and a
     per-channel tensor passed by value leaves the graph without an engine (NOT_SUPPORTED). */
#include "backend_util.h"
#include "ref/batchnorm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define C 5

/* A 1 x 1 x 1 x 1 tensor; by value, its pack pointer is host memory. */
static bdesc scalar_tensor(int64_t uid, cudnnDataType_t dt, bool by_value)
{
    bdesc t = bt_make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t one[4] = {1, 1, 1, 1};
    bool bv = by_value;
    bt_set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    bt_set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, one);
    bt_set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, one);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
    if (by_value) bt_set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &bv);
    CHECK_OK(cudnnBackendFinalize(t));
    return t;
}

/* ---- BN_FINALIZE_STATISTICS ------------------------------------------------------------------- */

/* The tensors of a finalize, in its attributes' order. */
enum { F_SUM, F_SQ_SUM, F_SCALE, F_BIAS, F_PREV_MEAN, F_PREV_VAR, F_UPD_MEAN, F_UPD_VAR, F_SAVED_MEAN, F_SAVED_INV_STD,
       F_EQ_SCALE, F_EQ_BIAS, F_COUNT, F_EPSILON, F_FACTOR, F_TENSORS };

static const cudnnBackendAttributeName_t bnf_attrs[F_TENSORS] = {
    CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC,
    CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC};

/* A finalize of the tensors t (NULL: not set); its finalize status in *st. */
static bdesc bnf_op(cudnnBnFinalizeStatsMode_t mode, bdesc const t[F_TENSORS], cudnnStatus_t *st)
{
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    bt_set(op, CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE, CUDNN_TYPE_BN_FINALIZE_STATS_MODE, 1, &mode);
    bt_set(op, CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    for (int i = 0; i < F_TENSORS; i++)
        if (t[i]) bt_set_desc(op, bnf_attrs[i], t[i]);
    *st = cudnnBackendFinalize(op);
    return op;
}

/* Engine 0's plan of a one-op graph, run with the pack. */
static void run_one(bdesc op, const int64_t *uids, void *const *ptrs, int n)
{
    bdesc g = bt_graph(&op, 1);
    int64_t ws = -1, first = -1;
    CHECK(bt_engine_count(g) == 1);
    CHECK(bt_heuristic_engines(g, &first, 1) == 1 && first == 0);
    bdesc plan = bt_plan_of_engine(g, 0, &ws);
    if (CHECK(plan != NULL)) {
        CHECK_OK(bt_run(plan, ws, uids, ptrs, n));
        cudnnBackendDestroyDescriptor(plan);
    }
    cudnnBackendDestroyDescriptor(g);
}

/* The frontend's "BN Finalize" sample: training, sums given, scalars by value. */
TEST(backend_bn_finalize_training)
{
    const int cd[4] = {1, C, 1, 1};
    const double count = 25, eps = 0.05, factor = 0.9;
    struct bt_gt t[F_COUNT];
    for (int i = 0; i < F_COUNT; i++) {
        const bool out = i >= F_UPD_MEAN;
        bt_gt_init(&t[i], 100 + i, CUDNN_DATA_FLOAT, 4, cd, TV_NCHW, false, out ? 0 : i == F_PREV_VAR ? 0.5 : -1,
                   out ? 0 : 1.5);
    }
    /* sums of count values of mean m and biased variance v: sum = m n, sq_sum = (v + m^2) n */
    double mean[C], var[C];
    for (int c = 0; c < C; c++) {
        mean[c] = 0.8 * t[F_SUM].val[c];
        var[c] = 0.6 + 0.5 * t[F_SQ_SUM].val[c];
        t[F_SUM].val[c] = mean[c] * count;
        t[F_SQ_SUM].val[c] = (var[c] + mean[c] * mean[c]) * count;
    }
    tview_store(&t[F_SUM].v, t[F_SUM].buf, t[F_SUM].val);
    tview_store(&t[F_SQ_SUM].v, t[F_SQ_SUM].buf, t[F_SQ_SUM].val);
    for (int c = 0; c < C; c++) { /* what the float sums say */
        mean[c] = t[F_SUM].val[c] / count;
        var[c] = t[F_SQ_SUM].val[c] / count - mean[c] * mean[c];
    }
    bdesc d[F_TENSORS];
    for (int i = 0; i < F_COUNT; i++) d[i] = t[i].d;
    d[F_COUNT] = scalar_tensor(300, CUDNN_DATA_INT64, true);
    d[F_EPSILON] = scalar_tensor(301, CUDNN_DATA_DOUBLE, true);
    d[F_FACTOR] = scalar_tensor(302, CUDNN_DATA_DOUBLE, true);
    cudnnStatus_t st;
    bdesc op = bnf_op(CUDNN_BN_FINALIZE_STATISTICS_TRAINING, d, &st);
    CHECK_OK(st);
    int64_t n = (int64_t)count, uids[F_TENSORS];
    void *ptrs[F_TENSORS];
    for (int i = 0; i < F_COUNT; i++) uids[i] = t[i].uid, ptrs[i] = t[i].buf;
    uids[F_COUNT] = 300, uids[F_EPSILON] = 301, uids[F_FACTOR] = 302;
    ptrs[F_COUNT] = &n, ptrs[F_EPSILON] = (void *)&eps, ptrs[F_FACTOR] = (void *)&factor;
    run_one(op, uids, ptrs, F_TENSORS);
    double invstd[C], eqs[C], eqb[C], um[C], uv[C];
    ref_bn_finalize(C, mean, var, count, t[F_SCALE].val, t[F_BIAS].val, t[F_PREV_MEAN].val, t[F_PREV_VAR].val, eps,
                    factor, invstd, eqs, eqb, um, uv);
    bt_check_tol(&t[F_SAVED_MEAN].v, t[F_SAVED_MEAN].buf, mean, 1e-5, "saved mean");
    bt_check_tol(&t[F_SAVED_INV_STD].v, t[F_SAVED_INV_STD].buf, invstd, 1e-5, "saved invstd");
    bt_check_tol(&t[F_EQ_SCALE].v, t[F_EQ_SCALE].buf, eqs, 1e-5, "eq scale");
    bt_check_tol(&t[F_EQ_BIAS].v, t[F_EQ_BIAS].buf, eqb, 1e-5, "eq bias");
    bt_check_tol(&t[F_UPD_MEAN].v, t[F_UPD_MEAN].buf, um, 1e-5, "updated running mean");
    bt_check_tol(&t[F_UPD_VAR].v, t[F_UPD_VAR].buf, uv, 1e-5, "updated running variance");
    cudnnBackendDestroyDescriptor(op);
    bt_destroy_all(&d[F_COUNT], 3);
    for (int i = 0; i < F_COUNT; i++) bt_gt_free(&t[i]);
}

/* Inference: the running statistics give the equivalent scale and bias (half); epsilon is a float
   tensor in device memory; the sums are set but not read (no pointer for them). */
TEST(backend_bn_finalize_inference)
{
    const int cd[4] = {1, C, 1, 1};
    struct bt_gt t[F_COUNT], eps;
    bdesc d[F_TENSORS] = {0};
    for (int i = 0; i < F_COUNT; i++) {
        const bool used = i == F_SCALE || i == F_BIAS || i == F_PREV_MEAN || i == F_PREV_VAR || i == F_EQ_SCALE ||
                          i == F_EQ_BIAS || i == F_SUM || i == F_SQ_SUM;
        if (!used) continue;
        const bool out = i == F_EQ_SCALE || i == F_EQ_BIAS;
        bt_gt_init(&t[i], 100 + i, out ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT, 4, cd, TV_NCHW, false,
                   out ? 0 : i == F_PREV_VAR ? 0.5 : -1, out ? 0 : 1.5);
        d[i] = t[i].d;
    }
    const int one[4] = {1, 1, 1, 1};
    bt_gt_init(&eps, 301, CUDNN_DATA_FLOAT, 4, one, TV_NCHW, false, 0.001, 0.01);
    d[F_EPSILON] = eps.d;
    cudnnStatus_t st;
    bdesc op = bnf_op(CUDNN_BN_FINALIZE_STATISTICS_INFERENCE, d, &st);
    CHECK_OK(st);
    static const int used[] = {F_SCALE, F_BIAS, F_PREV_MEAN, F_PREV_VAR, F_EQ_SCALE, F_EQ_BIAS};
    int64_t uids[7];
    void *ptrs[7];
    for (int k = 0; k < 6; k++) uids[k] = t[used[k]].uid, ptrs[k] = t[used[k]].buf;
    uids[6] = eps.uid, ptrs[6] = eps.buf;
    run_one(op, uids, ptrs, 7);
    double invstd[C], eqs[C], eqb[C];
    ref_bn_finalize(C, t[F_PREV_MEAN].val, t[F_PREV_VAR].val, 1, t[F_SCALE].val, t[F_BIAS].val, NULL, NULL,
                    eps.val[0], 0, invstd, eqs, eqb, NULL, NULL);
    bt_check_tol(&t[F_EQ_SCALE].v, t[F_EQ_SCALE].buf, eqs, 2e-3, "eq scale (half)");
    bt_check_tol(&t[F_EQ_BIAS].v, t[F_EQ_BIAS].buf, eqb, 2e-3, "eq bias (half)");
    cudnnBackendDestroyDescriptor(op);
    for (int k = 0; k < 6; k++) bt_gt_free(&t[used[k]]);
    bt_gt_free(&t[F_SUM]), bt_gt_free(&t[F_SQ_SUM]), bt_gt_free(&eps);
}

/* GEN_STATS -> BN_FINALIZE_STATISTICS with virtual sums, x float NHWC: the statistics of x. */
TEST(backend_bn_genstats_finalize)
{
    const int xd[4] = {2, C, 3, 3}, cd[4] = {1, C, 1, 1};
    struct bt_gt x, t[F_COUNT];
    bt_gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, false, -1, 2);
    bdesc d[F_TENSORS] = {0};
    for (int i = 0; i < F_COUNT; i++) {
        const bool out = i >= F_UPD_MEAN, virt = i == F_SUM || i == F_SQ_SUM;
        bt_gt_init(&t[i], 100 + i, CUDNN_DATA_FLOAT, 4, cd, TV_NCHW, virt, out ? 0 : i == F_PREV_VAR ? 0.5 : -1,
                   out ? 0 : 1.5);
        d[i] = t[i].d;
    }
    d[F_COUNT] = scalar_tensor(300, CUDNN_DATA_INT64, true);
    d[F_EPSILON] = scalar_tensor(301, CUDNN_DATA_DOUBLE, true);
    d[F_FACTOR] = scalar_tensor(302, CUDNN_DATA_FLOAT, true);
    bdesc ops[2];
    ops[0] = bt_make(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
    cudnnGenStatsMode_t gmode = CUDNN_GENSTATS_SUM_SQSUM;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    bt_set(ops[0], CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, 1, &gmode);
    bt_set(ops[0], CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    bt_set_desc(ops[0], CUDNN_ATTR_OPERATION_GENSTATS_XDESC, x.d);
    bt_set_desc(ops[0], CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, t[F_SUM].d);
    bt_set_desc(ops[0], CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, t[F_SQ_SUM].d);
    CHECK_OK(cudnnBackendFinalize(ops[0]));
    cudnnStatus_t st;
    ops[1] = bnf_op(CUDNN_BN_FINALIZE_STATISTICS_TRAINING, d, &st);
    CHECK_OK(st);
    bdesc g = bt_graph(ops, 2);
    int64_t ws = -1, n = 18;
    double eps = 1e-3;
    float factor = 0.25f;
    bdesc plan = bt_plan_of_engine(g, 0, &ws);
    if (CHECK(plan != NULL)) {
        int64_t uids[F_TENSORS + 1] = {'x', 300, 301, 302};
        void *ptrs[F_TENSORS + 1] = {x.buf, &n, &eps, &factor};
        int np = 4;
        for (int i = F_SCALE; i < F_COUNT; i++) uids[np] = t[i].uid, ptrs[np++] = t[i].buf;
        CHECK_OK(bt_run(plan, ws, uids, ptrs, np));
        struct ref_bn_shape sh = {2, C, 9, false};
        double mean[C], var[C], invstd[C], eqs[C], eqb[C], um[C], uv[C];
        ref_bn_stats(&sh, x.val, mean, var);
        ref_bn_finalize(C, mean, var, 18, t[F_SCALE].val, t[F_BIAS].val, t[F_PREV_MEAN].val, t[F_PREV_VAR].val, eps,
                        factor, invstd, eqs, eqb, um, uv);
        bt_check_tol(&t[F_SAVED_MEAN].v, t[F_SAVED_MEAN].buf, mean, 1e-5, "mean of x");
        bt_check_tol(&t[F_SAVED_INV_STD].v, t[F_SAVED_INV_STD].buf, invstd, 1e-4, "invstd of x");
        bt_check_tol(&t[F_EQ_SCALE].v, t[F_EQ_SCALE].buf, eqs, 1e-4, "eq scale");
        bt_check_tol(&t[F_EQ_BIAS].v, t[F_EQ_BIAS].buf, eqb, 1e-4, "eq bias");
        bt_check_tol(&t[F_UPD_MEAN].v, t[F_UPD_MEAN].buf, um, 1e-5, "updated running mean");
        bt_check_tol(&t[F_UPD_VAR].v, t[F_UPD_VAR].buf, uv, 1e-4, "updated running variance");
        cudnnBackendDestroyDescriptor(plan);
    }
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(ops, 2);
    bt_destroy_all(&d[F_COUNT], 3);
    bt_gt_free(&x);
    for (int i = 0; i < F_COUNT; i++) bt_gt_free(&t[i]);
}

/* ---- BN_BWD_WEIGHTS ---------------------------------------------------------------------------- */

enum { W_MEAN, W_INVSTD, W_SCALE, W_X, W_DY, W_DSCALE, W_DBIAS, W_EQ_DY, W_EQ_X, W_EQ_BIAS, W_TENSORS };

static const cudnnBackendAttributeName_t bnw_attrs[W_TENSORS] = {
    CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC,
    CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC,
    CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC,
    CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC,
    CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS};

static bdesc bnw_op(bdesc const t[W_TENSORS], cudnnStatus_t *st)
{
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR);
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    bt_set(op, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    for (int i = 0; i < W_TENSORS; i++)
        if (t[i]) bt_set_desc(op, bnw_attrs[i], t[i]);
    *st = cudnnBackendFinalize(op);
    return op;
}

/* L = sum dy * bn(x) with x's batch statistics: the function whose gradients the op gives. */
static double bn_loss(const struct ref_bn_shape *sh, const double *x, const double *dy, const double *scale,
                      const double *bias, double eps)
{
    const int64_t total = sh->n * sh->c * sh->s;
    double mean[C], var[C], *out = malloc(sizeof(double) * (size_t)total), l = 0;
    ref_bn_stats(sh, x, mean, var);
    ref_bn_forward(sh, x, NULL, scale, bias, mean, var, eps, -1, 0, NULL, out);
    for (int64_t i = 0; i < total; i++) l += dy[i] * out[i];
    free(out);
    return l;
}

TEST(backend_bn_bwd_weights)
{
    const int xd[4] = {2, C, 3, 3}, cd[4] = {1, C, 1, 1};
    const double eps = 1e-3;
    const struct ref_bn_shape sh = {2, C, 9, false};
    for (int half = 0; half < 2; half++) {
        const cudnnDataType_t dt = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        const double tol = half ? 2e-2 : 1e-4;
        struct bt_gt t[W_TENSORS];
        bt_gt_init(&t[W_X], 'x', dt, 4, xd, half ? TV_NCHW : TV_NHWC, false, -1, 2);
        bt_gt_init(&t[W_DY], 'y', dt, 4, xd, half ? TV_NCHW : TV_NHWC, false, -1, 1);
        bt_gt_init(&t[W_SCALE], 's', CUDNN_DATA_FLOAT, 4, cd, TV_NCHW, false, 0.5, 1.5);
        double mean[C], var[C], invstd[C], bias[C] = {0};
        ref_bn_stats(&sh, t[W_X].val, mean, var);
        for (int c = 0; c < C; c++) invstd[c] = 1 / sqrt(var[c] + eps);
        bt_gt_init(&t[W_MEAN], 'm', CUDNN_DATA_FLOAT, 4, cd, TV_NCHW, false, 0, 0);
        bt_gt_init(&t[W_INVSTD], 'i', CUDNN_DATA_FLOAT, 4, cd, TV_NCHW, false, 0, 0);
        tview_store(&t[W_MEAN].v, t[W_MEAN].buf, mean);
        tview_store(&t[W_INVSTD].v, t[W_INVSTD].buf, invstd);
        for (int i = W_DSCALE; i < W_TENSORS; i++)
            bt_gt_init(&t[i], 200 + i, CUDNN_DATA_FLOAT, 4, cd, TV_NCHW, false, 0, 0);
        bdesc d[W_TENSORS];
        int64_t uids[W_TENSORS];
        void *ptrs[W_TENSORS];
        for (int i = 0; i < W_TENSORS; i++) d[i] = t[i].d, uids[i] = t[i].uid, ptrs[i] = t[i].buf;
        cudnnStatus_t st;
        bdesc op = bnw_op(d, &st);
        CHECK_OK(st);
        run_one(op, uids, ptrs, W_TENSORS);
        /* the reference's backward pass at the statistics the op was given */
        const int64_t total = 2 * C * 9;
        double *dx = malloc(sizeof(double) * total), *dpre = malloc(sizeof(double) * total), ds[C], db[C];
        ref_bn_backward(&sh, t[W_X].val, t[W_DY].val, NULL, -1, 0, t[W_SCALE].val, mean, var, eps, dpre, dx, ds, db);
        bt_check_tol(&t[W_DSCALE].v, t[W_DSCALE].buf, ds, tol, "dscale");
        bt_check_tol(&t[W_DBIAS].v, t[W_DBIAS].buf, db, tol, "dbias");
        double a[C], b[C], k[C], want_a[C];
        tview_download(&t[W_EQ_DY].v, t[W_EQ_DY].buf, a);
        tview_download(&t[W_EQ_X].v, t[W_EQ_X].buf, b);
        tview_download(&t[W_EQ_BIAS].v, t[W_EQ_BIAS].buf, k);
        for (int c = 0; c < C; c++) want_a[c] = t[W_SCALE].val[c] * invstd[c];
        bt_check_tol(&t[W_EQ_DY].v, t[W_EQ_DY].buf, want_a, 1e-5, "eq dy scale");
        /* dx from the coefficients: against the reference and finite differences of L */
        const double h = 1e-4;
        double *xp = malloc(sizeof(double) * total);
        memcpy(xp, t[W_X].val, sizeof(double) * total);
        for (int64_t i = 0; i < total; i++) {
            const int c = (int)(i / 9 % C);
            const double got = a[c] * t[W_DY].val[i] + b[c] * t[W_X].val[i] + k[c];
            xp[i] = t[W_X].val[i] + h;
            double up = bn_loss(&sh, xp, t[W_DY].val, t[W_SCALE].val, bias, eps);
            xp[i] = t[W_X].val[i] - h;
            double down = bn_loss(&sh, xp, t[W_DY].val, t[W_SCALE].val, bias, eps);
            xp[i] = t[W_X].val[i];
            const double fd = (up - down) / (2 * h);
            if (!CHECK(fabs(got - dx[i]) <= tol * fmax(1, fabs(dx[i])) && fabs(got - fd) <= 1e-3 + tol * fabs(fd)))
                FAIL("%s dx[%lld] from the coefficients %.7g, reference %.7g, finite differences %.7g",
                     half ? "half" : "float", (long long)i, got, dx[i], fd);
        }
        for (int c = 0; c < C; c++) { /* dscale and dbias: derivatives of L in scale and bias */
            double sp[C], bp[C];
            memcpy(sp, t[W_SCALE].val, sizeof sp);
            memset(bp, 0, sizeof bp);
            sp[c] += h;
            double up = bn_loss(&sh, t[W_X].val, t[W_DY].val, sp, bias, eps);
            sp[c] -= 2 * h;
            double down = bn_loss(&sh, t[W_X].val, t[W_DY].val, sp, bias, eps);
            bp[c] = h;
            double bup = bn_loss(&sh, t[W_X].val, t[W_DY].val, t[W_SCALE].val, bp, eps);
            CHECK(fabs((up - down) / (2 * h) - ds[c]) < 1e-5);
            CHECK(fabs((bup - bn_loss(&sh, t[W_X].val, t[W_DY].val, t[W_SCALE].val, bias, eps)) / h - db[c]) < 1e-5);
        }
        free(dx), free(dpre), free(xp);
        cudnnBackendDestroyDescriptor(op);
        for (int i = 0; i < W_TENSORS; i++) bt_gt_free(&t[i]);
    }
}

/* ---- bad operations ------------------------------------------------------------------------------ */

TEST(backend_bn_bad_operations)
{
    const int cd[4] = {1, C, 1, 1}, xd[4] = {2, C, 3, 3}, od[4] = {2, C, 3, 4};
    struct bt_gt t[F_COUNT];
    bdesc d[F_TENSORS] = {0};
    for (int i = 0; i < F_COUNT; i++) {
        bt_gt_init(&t[i], 100 + i, CUDNN_DATA_FLOAT, 4, cd, TV_NCHW, false, 0, 0);
        d[i] = t[i].d;
    }
    bdesc eps = scalar_tensor(301, CUDNN_DATA_DOUBLE, true), cnt = scalar_tensor(300, CUDNN_DATA_INT64, true);
    d[F_EPSILON] = eps, d[F_COUNT] = cnt;
    cudnnStatus_t st;
    /* updated running statistics without an averaging factor */
    bdesc op = bnf_op(CUDNN_BN_FINALIZE_STATISTICS_TRAINING, d, &st);
    CHECK_STATUS(st, CUDNN_STATUS_BAD_PARAM);
    cudnnBackendDestroyDescriptor(op);
    /* only one of the saved pair */
    d[F_UPD_MEAN] = d[F_UPD_VAR] = d[F_SAVED_INV_STD] = NULL;
    op = bnf_op(CUDNN_BN_FINALIZE_STATISTICS_TRAINING, d, &st);
    CHECK_STATUS(st, CUDNN_STATUS_BAD_PARAM);
    cudnnBackendDestroyDescriptor(op);
    /* inference without the running statistics */
    d[F_SAVED_MEAN] = d[F_PREV_MEAN] = d[F_PREV_VAR] = NULL;
    op = bnf_op(CUDNN_BN_FINALIZE_STATISTICS_INFERENCE, d, &st);
    CHECK_STATUS(st, CUDNN_STATUS_BAD_PARAM);
    cudnnBackendDestroyDescriptor(op);
    /* a per-channel tensor passed by value: the op finalizes, no engine runs it */
    bdesc byval = bt_make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    {
        int64_t dims[4] = {1, C, 1, 1}, strides[4] = {C, 1, 1, 1};
        cudnnDataType_t dt = CUDNN_DATA_FLOAT;
        bool yes = true;
        bt_set(byval, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
        bt_set(byval, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
        bt_set(byval, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
        bt_set_i64(byval, CUDNN_ATTR_TENSOR_UNIQUE_ID, 400);
        bt_set_i64(byval, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 4);
        bt_set(byval, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes);
        CHECK_OK(cudnnBackendFinalize(byval));
    }
    d[F_PREV_MEAN] = t[F_PREV_MEAN].d, d[F_PREV_VAR] = t[F_PREV_VAR].d, d[F_SCALE] = byval;
    op = bnf_op(CUDNN_BN_FINALIZE_STATISTICS_INFERENCE, d, &st);
    CHECK_OK(st);
    bdesc g = bt_make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnHandle_t h = test_handle();
    bt_set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    bt_set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    CHECK_STATUS(cudnnBackendFinalize(g), CUDNN_STATUS_NOT_SUPPORTED);
    bt_destroy_all((bdesc[]){g, op, byval, eps, cnt}, 5);
    /* BN_BWD_WEIGHTS: dy of other dims than x */
    struct bt_gt x, dy;
    bt_gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, false, 0, 0);
    bt_gt_init(&dy, 'y', CUDNN_DATA_FLOAT, 4, od, TV_NCHW, false, 0, 0);
    bdesc w[W_TENSORS] = {t[0].d, t[1].d, t[2].d, x.d, dy.d, t[3].d, t[4].d, t[5].d, t[6].d, t[7].d};
    op = bnw_op(w, &st);
    CHECK_STATUS(st, CUDNN_STATUS_BAD_PARAM);
    cudnnBackendDestroyDescriptor(op);
    bt_gt_free(&x), bt_gt_free(&dy);
    for (int i = 0; i < F_COUNT; i++) bt_gt_free(&t[i]);
}
