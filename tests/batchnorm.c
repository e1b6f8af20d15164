/* batchnorm.c: tests of batch normalization (cudnnBatchNormalization*, cudnnDeriveBNTensorDescriptor):
   every data type, layouts NCHW / NHWC / padded / strided / mixed, the three modes, alpha and
   beta (beta = 0 over NaN), running averages over several steps, saved statistics or none, the
   fused Ex ops with each activation, edge shapes, finite-difference gradients, and every bad
   input with its exact status and nothing written. */
#include "bn_harness.h"

#include "ref/batchnorm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

static const cudnnDataType_t all_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                            CUDNN_DATA_BFLOAT16};

TEST_ONCE(bn_derive_descriptor)
{
    cudnnTensorDescriptor_t x, d;
    CHECK_OK(cudnnCreateTensorDescriptor(&x));
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    static const struct { cudnnDataType_t in, out; } types[] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT}, {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},
        {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT}, {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT}};
    int dims5[5] = {2, 3, 4, 5, 6}, strides5[5] = {360, 120, 30, 6, 1};
    for (size_t t = 0; t < 4; t++) {
        for (int rank = 4; rank <= 5; rank++) {
            int *dims = rank == 5 ? dims5 : (int[]){2, 3, 5, 6};
            int *strides = rank == 5 ? strides5 : (int[]){90, 30, 6, 1};
            CHECK_OK(cudnnSetTensorNdDescriptor(x, types[t].in, rank, dims, strides));
            for (int mode = 0; mode < 3; mode++) {
                CHECK_OK(cudnnDeriveBNTensorDescriptor(d, x, (cudnnBatchNormMode_t)mode));
                cudnnDataType_t dt;
                int nb, gd[8], gs[8];
                CHECK_OK(cudnnGetTensorNdDescriptor(d, 8, &dt, &nb, gd, gs));
                CHECK(dt == types[t].out && nb == rank && gd[0] == 1 && gd[1] == 3);
                for (int i = 2; i < rank; i++) CHECK(gd[i] == (mode == 0 ? dims[i] : 1));
                CHECK(gs[rank - 1] == 1);
            }
        }
    }
    /* bad inputs leave the derived descriptor as it was */
    int d4[4] = {2, 3, 5, 6}, s4[4] = {90, 30, 6, 1};
    CHECK_OK(cudnnSetTensorNdDescriptor(x, CUDNN_DATA_FLOAT, 4, d4, s4));
    CHECK_OK(cudnnDeriveBNTensorDescriptor(d, x, CUDNN_BATCHNORM_SPATIAL));
    CHECK_STATUS(cudnnDeriveBNTensorDescriptor(d, x, (cudnnBatchNormMode_t)3), CUDNN_STATUS_BAD_PARAM);
    int d3[3] = {2, 3, 5}, s3[3] = {15, 5, 1};
    cudnnTensorDescriptor_t x3;
    CHECK_OK(cudnnCreateTensorDescriptor(&x3));
    CHECK_OK(cudnnSetTensorNdDescriptor(x3, CUDNN_DATA_FLOAT, 3, d3, s3));
    CHECK_STATUS(cudnnDeriveBNTensorDescriptor(d, x3, CUDNN_BATCHNORM_SPATIAL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnDeriveBNTensorDescriptor(NULL, x, CUDNN_BATCHNORM_SPATIAL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetTensorNdDescriptor(x3, CUDNN_DATA_INT32, 3, d3, s3));
    CHECK_OK(cudnnSetTensorNdDescriptor(x, CUDNN_DATA_INT32, 4, d4, s4));
    CHECK_STATUS(cudnnDeriveBNTensorDescriptor(d, x, CUDNN_BATCHNORM_SPATIAL), CUDNN_STATUS_NOT_SUPPORTED);
    cudnnDataType_t dt;
    int nb, gd[8], gs[8];
    CHECK_OK(cudnnGetTensorNdDescriptor(d, 8, &dt, &nb, gd, gs));
    CHECK(dt == CUDNN_DATA_FLOAT && nb == 4 && gd[1] == 3 && gd[2] == 1 && gd[3] == 1);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(x3);
    cudnnDestroyTensorDescriptor(d);
}

/* Every type and layout, the three modes, blending on and off. */
TEST(bn_types_layouts_modes)
{
    int dims[4] = {2, 16, 3, 4};
    for (size_t t = 0; t < 4; t++) {
        for (int layout = 0; layout < TV_LAYOUTS; layout++) {
            for (int mode = 0; mode < 3; mode++) {
                struct bn_case c = bn_case_default(BN_API_PLAIN, all_types[t], 4, dims);
                c.layout = c.out_layout = layout;
                c.per_activation = mode == 0;
                c.persistent = mode == 2;
                if ((layout + mode) % 2) {
                    c.alpha = 0.5;
                    c.beta = 0.75;
                    c.alpha_param = 2;
                    c.beta_param = 0.5;
                }
                c.use_saved = mode != 1 || layout % 2 == 0;
                bn_check_case(&c);
            }
        }
    }
}

/* Edge shapes: batch 1 (one element per slot per activation), 1x1 images, channel counts that
   leave vector tails, 5-D tensors, mixed layouts between inputs and outputs, strided per-slot
   tensors, no statistics outputs. */
TEST(bn_edge_shapes)
{
    static const struct { int rank, dims[5]; } shapes[] = {
        {4, {1, 3, 1, 1}}, {4, {1, 5, 2, 3}}, {4, {3, 12, 1, 1}}, {4, {2, 9, 5, 3}},
        {4, {2, 24, 2, 4}}, {5, {2, 4, 2, 3, 2}}, {5, {1, 8, 3, 1, 4}},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (size_t t = 0; t < 4; t++) {
            for (int mode = 0; mode < 2; mode++) {
                struct bn_case c = bn_case_default(BN_API_PLAIN, all_types[t], shapes[i].rank, shapes[i].dims);
                c.per_activation = mode == 0;
                c.layout = (int)(i + t) % 2 ? TV_NHWC : TV_NCHW;
                c.out_layout = i == 3 ? TV_NHWC + TV_NCHW - c.layout : c.layout;
                c.slot_strided = i == 4;
                c.save = c.use_saved = i != 2;
                c.running = i != 1;
                c.steps = 3;
                bn_check_case(&c);
            }
        }
    }
}

/* Shapes large enough for the CUDA rows kernels (channels last) to split the rows over several
   blocks of chunks and leave a partial one: packed NHWC with C a multiple of 8 but not a power of
   two (whole vectors, rows at one stride: the flat entry; idle threads along the slots), with C =
   256 (a warp per row), per activation over NCHW (rows = images), and NHWC with C = 12 (vector
   tails). Plain, blended (alpha/beta), and fused add + ReLU through the Ex API. */
TEST(bn_rows_split)
{
    static const struct { int dims[4]; int layout; bool per_activation; } shapes[] = {
        {{5, 40, 37, 29}, TV_NHWC, false}, {{3, 256, 9, 7}, TV_NHWC, false},
        {{67, 8, 4, 4}, TV_NCHW, true},    {{4, 12, 31, 17}, TV_NHWC, false},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (size_t t = 0; t < 4; t++) {
            for (int variant = 0; variant < 3; variant++) {
                if (variant == 2 && !bn_activations_exist()) continue;
                struct bn_case c = bn_case_default(variant == 2 ? BN_API_EX : BN_API_PLAIN, all_types[t], 4,
                                                   shapes[i].dims);
                c.layout = c.out_layout = shapes[i].layout;
                c.per_activation = shapes[i].per_activation;
                if (variant == 1) {
                    c.alpha = 0.5;
                    c.beta = 0.75;
                    c.alpha_param = 2;
                    c.beta_param = 0.5;
                    c.use_saved = false;
                }
                if (variant == 2) {
                    c.ops = CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
                    c.act_mode = CUDNN_ACTIVATION_RELU;
                }
                bn_check_case(&c);
            }
        }
    }
}

/* The Ex ops: BN + activation and BN + add + activation for each activation, with and without a
   workspace. */
TEST(bn_ex_fused_ops)
{
    static const struct { cudnnActivationMode_t mode; double coef; } acts[] = {
        {CUDNN_ACTIVATION_RELU, 0}, {CUDNN_ACTIVATION_CLIPPED_RELU, 1.25}, {CUDNN_ACTIVATION_ELU, 0.7},
        {CUDNN_ACTIVATION_SIGMOID, 0}, {CUDNN_ACTIVATION_TANH, 0}, {CUDNN_ACTIVATION_IDENTITY, 0},
        {CUDNN_ACTIVATION_SWISH, 1.5}};
    int dims[4] = {2, 8, 3, 2};
    for (size_t t = 0; t < 4; t++) {
        for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
            /* a clipping ceiling in half precision rounds pre-activations onto it: float types only */
            if (acts[a].mode == CUDNN_ACTIVATION_CLIPPED_RELU && tdtype_size(all_types[t]) == 2) continue;
            for (int ops = 0; ops < 3; ops++) {
                struct bn_case c = bn_case_default(BN_API_EX, all_types[t], 4, dims);
                c.ops = ops;
                c.act_mode = acts[a].mode;
                c.act_coef = acts[a].coef;
                c.layout = c.out_layout = (int)(a + t) % 2 ? TV_NHWC : TV_NCHW;
                c.per_activation = a == 2;
                c.persistent = a == 3;
                c.no_workspace = a == 4;
                c.beta = ops == 2 ? 0.5 : 0;
                bn_check_case(&c);
            }
        }
    }
}

/* ---- finite differences ---------------------------------------------------------------------- */

/* L = sum dy * act(BN(x) + z), the statistics being those of x; z may be NULL. */
struct fd_problem {
    struct ref_bn_shape sh;
    double *x, *z, *scale, *bias, *dy;
    int act;
    double eps;
};

static double loss(const struct fd_problem *f)
{
    int64_t k = ref_bn_slots(&f->sh), n = f->sh.n * f->sh.c * f->sh.s;
    double *mean = malloc((size_t)k * sizeof *mean), *var = malloc((size_t)k * sizeof *var);
    double *out = malloc((size_t)n * sizeof *out), l = 0;
    ref_bn_stats(&f->sh, f->x, mean, var);
    ref_bn_forward(&f->sh, f->x, f->z, f->scale, f->bias, mean, var, f->eps, f->act, 0, NULL, out);
    for (int64_t i = 0; i < n; i++) l += f->dy[i] * out[i];
    free(mean);
    free(var);
    free(out);
    return l;
}

/* dL/dv[i] by central differences (v is one of the problem's arrays). */
static double central_difference(const struct fd_problem *f, double *v, int64_t i)
{
    const double h = 1e-5, keep = v[i];
    v[i] = keep + h;
    double lp = loss(f);
    v[i] = keep - h;
    double lm = loss(f);
    v[i] = keep;
    return (lp - lm) / (2 * h);
}

static void fd_compare(const double *got, const double *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        if (fabs(got[i] - want[i]) > 1e-6 * fmax(1.0, fabs(want[i]))) {
            FAIL("%s[%lld]: library %.12g, finite differences %.12g", what, (long long)i, got[i], want[i]);
            return;
        }
    }
}

/* The library's double-precision backward against central differences of the reference forward:
   dx, dscale, dbias and dz, with and without the fused add + tanh. */
TEST(bn_backward_finite_differences)
{
    cudnnHandle_t h = test_handle();
    int dims[4] = {3, 2, 2, 3};
    const double eps = 1e-3;
    const bool acts = bn_activations_exist(); /* the fused case needs an activation descriptor */
    for (int mode = 0; mode < 2; mode++) {
        for (int ops = 0; ops <= (acts ? 2 : 0); ops += 2) {
            struct ref_bn_shape sh = {3, 2, 6, mode == 0};
            int64_t n = 36, k = ref_bn_slots(&sh);
            int act = ops ? CUDNN_ACTIVATION_TANH : -1;
            struct tview xt, pt;
            int pdims[4] = {1, 2, mode == 0 ? 2 : 1, mode == 0 ? 3 : 1};
            tview_init(&xt, CUDNN_DATA_DOUBLE, 4, dims, TV_NCHW);
            tview_init(&pt, CUDNN_DATA_DOUBLE, 4, pdims, TV_NCHW);
            double x[36], z[36], dy[36], scale[12], bias[12], dx[36], dz[36], ds[12], db[12];
            tfill_random(CUDNN_DATA_DOUBLE, x, n, -2, 2);
            tfill_random(CUDNN_DATA_DOUBLE, z, n, -1, 1);
            tfill_random(CUDNN_DATA_DOUBLE, dy, n, -1, 1);
            tfill_random(CUDNN_DATA_DOUBLE, scale, k, 0.5, 1.5);
            tfill_random(CUDNN_DATA_DOUBLE, bias, k, -0.5, 0.5);
            void *bx = tview_upload(&xt, x), *bz = tview_upload(&xt, z), *bdy = tview_upload(&xt, dy);
            void *by = tview_upload(&xt, NULL), *bdx = tview_upload(&xt, NULL), *bdz = tview_upload(&xt, NULL);
            void *bs = tview_upload(&pt, scale), *bb = tview_upload(&pt, bias);
            void *bsm = tview_upload(&pt, NULL), *bsi = tview_upload(&pt, NULL);
            void *bds = tview_upload(&pt, NULL), *bdb = tview_upload(&pt, NULL);
            cudnnActivationDescriptor_t ad = NULL;
            if (ops) {
                CHECK_OK(cudnnCreateActivationDescriptor(&ad));
                CHECK_OK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_TANH, CUDNN_PROPAGATE_NAN, 0));
            }
            size_t rbytes = 0;
            cudnnBatchNormMode_t bm = mode == 0 ? CUDNN_BATCHNORM_PER_ACTIVATION : CUDNN_BATCHNORM_SPATIAL;
            CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, bm, ops, ad, xt.desc, &rbytes));
            void *res = tbuf_alloc(rbytes);
            double one = 1, zero = 0;
            CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, bm, ops, &one, &zero, xt.desc, bx, xt.desc, bz,
                                                              xt.desc, by, pt.desc, bs, bb, 1, NULL, NULL, eps,
                                                              bsm, bsi, ad, NULL, 0, res, rbytes));
            CHECK_OK(cudnnBatchNormalizationBackwardEx(h, bm, ops, &one, &zero, &one, &zero, xt.desc, bx, xt.desc,
                                                       by, xt.desc, bdy, xt.desc, bdz, xt.desc, bdx, pt.desc, bs,
                                                       bb, bds, bdb, eps, bsm, bsi, ad, NULL, 0, res, rbytes));
            tview_download(&xt, bdx, dx);
            tview_download(&pt, bds, ds);
            tview_download(&pt, bdb, db);
            double fx[36], fz[36], fs[12], fb[12];
            struct fd_problem f = {sh, x, ops ? z : NULL, scale, bias, dy, act, eps};
            for (int64_t i = 0; i < n; i++) {
                fx[i] = central_difference(&f, x, i);
                fz[i] = ops ? central_difference(&f, z, i) : 0;
            }
            for (int64_t j = 0; j < k; j++) {
                fs[j] = central_difference(&f, scale, j);
                fb[j] = central_difference(&f, bias, j);
            }
            fd_compare(dx, fx, n, "dx");
            fd_compare(ds, fs, k, "dscale");
            fd_compare(db, fb, k, "dbias");
            if (ops) {
                tview_download(&xt, bdz, dz);
                fd_compare(dz, fz, n, "dz");
            }
            void *bufs[] = {bx, bz, bdy, by, bdx, bdz, bs, bb, bsm, bsi, bds, bdb, res};
            for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
            cudnnDestroyActivationDescriptor(ad);
            tview_destroy(&xt);
            tview_destroy(&pt);
        }
    }
}

/* ---- sizes ----------------------------------------------------------------------------------- */

TEST(bn_ex_size_queries)
{
    cudnnHandle_t h = test_handle();
    struct tview x, p, y16;
    int dims[4] = {2, 8, 3, 3}, pd[4] = {1, 8, 1, 1};
    tview_init(&x, CUDNN_DATA_HALF, 4, dims, TV_NHWC);
    tview_init(&y16, CUDNN_DATA_FLOAT, 4, dims, TV_NHWC);
    tview_init(&p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
    cudnnActivationDescriptor_t act = NULL;
    if (bn_activations_exist()) {
        CHECK_OK(cudnnCreateActivationDescriptor(&act));
        CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
    }
    size_t sz = 12345;
    CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                   CUDNN_BATCHNORM_OPS_BN, NULL, x.desc, &sz));
    CHECK(sz == 0);
    if (act) {
        CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                       CUDNN_BATCHNORM_OPS_BN_ACTIVATION, act, x.desc, &sz));
        CHECK(sz >= (size_t)x.count * 2);
        CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL_PERSISTENT,
                                                                           CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, x.desc,
                                                                           x.desc, x.desc, p.desc, act, &sz));
    }
    sz = 12345;
    CHECK_STATUS(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                       CUDNN_BATCHNORM_OPS_BN_ACTIVATION, NULL,
                                                                       x.desc, &sz), CUDNN_STATUS_BAD_PARAM);
    CHECK(sz == 12345);
    CHECK_STATUS(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                       (cudnnBatchNormOps_t)3, NULL, x.desc, &sz),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                       CUDNN_BATCHNORM_OPS_BN, NULL, x.desc, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                CUDNN_BATCHNORM_OPS_BN, x.desc, NULL, x.desc,
                                                                NULL, x.desc, p.desc, NULL, &sz));
    sz = 12345;
    /* y of another type than x, a missing z for the add op */
    CHECK_STATUS(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                           CUDNN_BATCHNORM_OPS_BN, x.desc, NULL,
                                                                           y16.desc, p.desc, NULL, &sz),
                 CUDNN_STATUS_BAD_PARAM);
    if (act)
        CHECK_STATUS(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, CUDNN_BATCHNORM_SPATIAL,
                                                                               CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION,
                                                                               x.desc, NULL, x.desc, p.desc, act, &sz),
                     CUDNN_STATUS_BAD_PARAM);
    CHECK(sz == 12345);
    cudnnDestroyActivationDescriptor(act);
    tview_destroy(&x);
    tview_destroy(&y16);
    tview_destroy(&p);
}

/* ---- bad inputs ------------------------------------------------------------------------------ */

struct bad_env {
    cudnnHandle_t h;
    struct tview x, y, p, p_wrong, x3, x_int, y_other, y_strided, p_half;
    void *bx, *by, *bs, *bb, *brm, *brv, *bsm, *bsi, *bdx, *bds, *bdb, *res;
    void *snap_y, *snap_rm, *snap_sm, *snap_dx, *snap_ds;
};

static void bad_env_init(struct bad_env *e)
{
    e->h = test_handle();
    int dims[4] = {2, 3, 2, 2}, pd[4] = {1, 3, 1, 1}, pw[4] = {1, 3, 2, 2}, d3[3] = {2, 3, 4};
    int dother[4] = {2, 3, 2, 3};
    tview_init(&e->x, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    tview_init(&e->y, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    tview_init(&e->y_strided, CUDNN_DATA_FLOAT, 4, dims, TV_NHWC);
    tview_init(&e->y_other, CUDNN_DATA_FLOAT, 4, dother, TV_NCHW);
    tview_init(&e->x_int, CUDNN_DATA_INT32, 4, dims, TV_NCHW);
    tview_init(&e->x3, CUDNN_DATA_FLOAT, 3, d3, TV_NCHW);
    tview_init(&e->p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
    tview_init(&e->p_half, CUDNN_DATA_HALF, 4, pd, TV_NCHW);
    tview_init(&e->p_wrong, CUDNN_DATA_FLOAT, 4, pw, TV_NCHW);
    double v[24];
    tfill_random(CUDNN_DATA_DOUBLE, v, 24, -1, 1);
    e->bx = tview_upload(&e->x, v);
    e->by = tview_upload(&e->y, v);
    e->bdx = tview_upload(&e->y, v);
    void **slots[] = {&e->bs, &e->bb, &e->brm, &e->brv, &e->bsm, &e->bsi, &e->bds, &e->bdb};
    for (size_t i = 0; i < 8; i++) *slots[i] = tview_upload(&e->p, v + i);
    e->res = tbuf_alloc(1024);
    e->snap_y = tbuf_snapshot(e->by, tview_bytes(&e->y));
    e->snap_dx = tbuf_snapshot(e->bdx, tview_bytes(&e->y));
    e->snap_rm = tbuf_snapshot(e->brm, tview_bytes(&e->p));
    e->snap_sm = tbuf_snapshot(e->bsm, tview_bytes(&e->p));
    e->snap_ds = tbuf_snapshot(e->bds, tview_bytes(&e->p));
}

static void bad_env_free(struct bad_env *e)
{
    void *bufs[] = {e->bx, e->by, e->bs, e->bb, e->brm, e->brv, e->bsm, e->bsi, e->bdx, e->bds, e->bdb, e->res};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    void *snaps[] = {e->snap_y, e->snap_rm, e->snap_sm, e->snap_dx, e->snap_ds};
    for (size_t i = 0; i < 5; i++) free(snaps[i]);
    struct tview *ts[] = {&e->x, &e->y, &e->p, &e->p_wrong, &e->x3, &e->x_int, &e->y_other, &e->y_strided,
                              &e->p_half};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tview_destroy(ts[i]);
}

/* Nothing written: outputs are byte for byte what they were. */
static bool untouched(const struct bad_env *e)
{
    return tbuf_unchanged(e->by, e->snap_y, tview_bytes(&e->y), "an output") && tbuf_unchanged(e->bdx, e->snap_dx, tview_bytes(&e->y), "an output") &&
           tbuf_unchanged(e->brm, e->snap_rm, tview_bytes(&e->p), "an output") && tbuf_unchanged(e->bsm, e->snap_sm, tview_bytes(&e->p), "an output") &&
           tbuf_unchanged(e->bds, e->snap_ds, tview_bytes(&e->p), "an output");
}

#define EXPECT(call, status)                                                                     \
    do {                                                                                         \
        CHECK_STATUS(call, status);                                                              \
        if (!untouched(&e)) FAIL("an output was written by: %s", #call);                         \
    } while (0)

TEST(bn_bad_inputs)
{
    struct bad_env e;
    bad_env_init(&e);
    float one = 1, zero = 0;
    cudnnHandle_t h = e.h;
    cudnnTensorDescriptor_t x = e.x.desc, y = e.y.desc, p = e.p.desc;
    const cudnnBatchNormMode_t S = CUDNN_BATCHNORM_SPATIAL;
    /* forward training */
    EXPECT(cudnnBatchNormalizationForwardTraining(NULL, S, &one, &zero, x, e.bx, y, e.by, p, e.bs, e.bb, 0.5,
                                                  e.brm, e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, (cudnnBatchNormMode_t)3, &one, &zero, x, e.bx, y, e.by, p,
                                                  e.bs, e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, NULL, &zero, x, e.bx, y, e.by, p, e.bs, e.bb, 0.5, e.brm,
                                                  e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, NULL, x, e.bx, y, e.by, p, e.bs, e.bb, 0.5, e.brm,
                                                  e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, NULL, y, e.by, p, e.bs, e.bb, 0.5, e.brm,
                                                  e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, NULL, p, e.bs, e.bb, 0.5, e.brm,
                                                  e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, e.by, p, NULL, e.bb, 0.5, e.brm,
                                                  e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, e.by, p, e.bs, NULL, 0.5, e.brm,
                                                  e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, e.x3.desc, e.bx, y, e.by, p, e.bs, e.bb, 0.5,
                                                  e.brm, e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, e.y_other.desc, e.by, p, e.bs, e.bb,
                                                  0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, e.x_int.desc, e.by, p, e.bs, e.bb,
                                                  0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, e.x_int.desc, e.bx, e.x_int.desc, e.by, p,
                                                  e.bs, e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi),
           CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, e.by, e.p_wrong.desc, e.bs, e.bb,
                                                  0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_PER_ACTIVATION, &one, &zero, x, e.bx, y, e.by,
                                                  p, e.bs, e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, e.by, e.p_half.desc, e.bs, e.bb,
                                                  0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_NOT_SUPPORTED);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, e.by, p, e.bs, e.bb, 0.5, e.brm,
                                                  NULL, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, e.by, p, e.bs, e.bb, 0.5, e.brm,
                                                  e.brv, 1e-5, NULL, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, e.by, p, e.bs, e.bb, 0.5, e.brm,
                                                  e.brv, -1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, e.y_strided.desc, e.bx, p, e.bs, e.bb,
                                                  0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTraining(h, S, &one, &zero, x, e.bx, y, e.by, (cudnnTensorDescriptor_t)e.bx,
                                                  e.bs, e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi),
           CUDNN_STATUS_BAD_PARAM);
    /* inference */
    EXPECT(cudnnBatchNormalizationForwardInference(h, S, &one, &zero, x, e.bx, y, e.by, p, e.bs, e.bb, NULL, e.brv,
                                                   1e-5), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardInference(h, S, &one, &zero, x, e.bx, y, e.by, p, e.bs, e.bb, e.brm, NULL,
                                                   1e-5), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardInference(h, S, &one, &zero, x, e.bx, y, e.by, p, e.bs, e.bb, e.brm, e.brv,
                                                   -1), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardInference(h, S, &one, &zero, x, e.bx, e.y_other.desc, e.by, p, e.bs, e.bb,
                                                   e.brm, e.brv, 1e-5), CUDNN_STATUS_BAD_PARAM);
    /* backward */
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, NULL, &zero, x, e.bx, x, e.bx, y, e.bdx, p, e.bs,
                                           e.bds, e.bdb, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, &one, NULL, x, e.bx, x, e.bx, y, e.bdx, p, e.bs,
                                           e.bds, e.bdb, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, &one, &zero, x, e.bx, x, e.bx, y, NULL, p, e.bs,
                                           e.bds, e.bdb, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, &one, &zero, x, e.bx, x, e.bx, y, e.bdx, p, e.bs,
                                           NULL, e.bdb, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, &one, &zero, x, e.bx, x, e.bx, y, e.bdx, p, e.bs,
                                           e.bds, e.bdb, 1e-5, e.bsm, NULL), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, &one, &zero, x, e.bx, e.y_other.desc, e.bx, y, e.bdx,
                                           p, e.bs, e.bds, e.bdb, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, &one, &zero, x, e.bx, x, e.bx, e.x3.desc, e.bdx, p,
                                           e.bs, e.bds, e.bdb, 1e-5, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, &one, &zero, x, e.bx, x, e.bx, y, e.bdx,
                                           e.p_wrong.desc, e.bs, e.bds, e.bdb, 1e-5, e.bsm, e.bsi),
           CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationBackward(h, S, &one, &zero, &one, &zero, x, e.bx, x, e.bx, y, e.bdx, p, e.bs,
                                           e.bds, e.bdb, -1, e.bsm, e.bsi), CUDNN_STATUS_BAD_PARAM);
    /* Ex: ops, activation, z, reserve */
    const cudnnBatchNormOps_t A = CUDNN_BATCHNORM_OPS_BN_ACTIVATION, AA = CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    EXPECT(cudnnBatchNormalizationForwardTrainingEx(h, S, (cudnnBatchNormOps_t)3, &one, &zero, x, e.bx, NULL,
                                                    NULL, y, e.by, p, e.bs, e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm,
                                                    e.bsi, NULL, NULL, 0, e.res, 1024), CUDNN_STATUS_BAD_PARAM);
    EXPECT(cudnnBatchNormalizationForwardTrainingEx(h, S, A, &one, &zero, x, e.bx, NULL, NULL, y, e.by, p, e.bs,
                                                    e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi, NULL, NULL, 0,
                                                    e.res, 1024), CUDNN_STATUS_BAD_PARAM);
    if (bn_activations_exist()) { /* the other rules of the fused ops, with a valid activation */
        cudnnActivationDescriptor_t act;
        CHECK_OK(cudnnCreateActivationDescriptor(&act));
        CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
        EXPECT(cudnnBatchNormalizationForwardTrainingEx(h, S, AA, &one, &zero, x, e.bx, NULL, NULL, y, e.by, p, e.bs,
                                                        e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi, act, NULL, 0,
                                                        e.res, 1024), CUDNN_STATUS_BAD_PARAM);
        EXPECT(cudnnBatchNormalizationForwardTrainingEx(h, S, AA, &one, &zero, x, e.bx, x, NULL, y, e.by, p, e.bs,
                                                        e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi, act, NULL, 0,
                                                        e.res, 1024), CUDNN_STATUS_BAD_PARAM);
        EXPECT(cudnnBatchNormalizationForwardTrainingEx(h, S, A, &one, &zero, x, e.bx, NULL, NULL, y, e.by, p, e.bs,
                                                        e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi, act, NULL, 0,
                                                        e.res, 10), CUDNN_STATUS_BAD_PARAM);
        EXPECT(cudnnBatchNormalizationForwardTrainingEx(h, S, A, &one, &zero, x, e.bx, NULL, NULL, y, e.by, p, e.bs,
                                                        e.bb, 0.5, e.brm, e.brv, 1e-5, e.bsm, e.bsi, act, NULL, 0,
                                                        NULL, 0), CUDNN_STATUS_BAD_PARAM);
        EXPECT(cudnnBatchNormalizationBackwardEx(h, S, AA, &one, &zero, &one, &zero, x, e.bx, y, e.by, x, e.bx, NULL,
                                                 NULL, y, e.bdx, p, e.bs, e.bb, e.bds, e.bdb, 1e-5, e.bsm, e.bsi, act,
                                                 NULL, 0, e.res, 1024), CUDNN_STATUS_BAD_PARAM);
        EXPECT(cudnnBatchNormalizationBackwardEx(h, S, A, &one, &zero, &one, &zero, x, e.bx, y, e.by, x, e.bx, NULL,
                                                 NULL, y, e.bdx, p, e.bs, NULL, e.bds, e.bdb, 1e-5, e.bsm, e.bsi, act,
                                                 NULL, 0, e.res, 1024), CUDNN_STATUS_BAD_PARAM);
        EXPECT(cudnnBatchNormalizationBackwardEx(h, S, A, &one, &zero, &one, &zero, x, e.bx, NULL, NULL, x, e.bx, NULL,
                                                 NULL, y, e.bdx, p, e.bs, e.bb, e.bds, e.bdb, 1e-5, e.bsm, e.bsi, act,
                                                 NULL, 0, e.res, 1024), CUDNN_STATUS_BAD_PARAM);
        EXPECT(cudnnBatchNormalizationBackwardEx(h, S, A, &one, &zero, &one, &zero, x, e.bx, y, e.by, x, e.bx, NULL,
                                                 NULL, y, e.bdx, p, e.bs, e.bb, e.bds, e.bdb, 1e-5, e.bsm, e.bsi, act,
                                                 NULL, 0, e.res, 8), CUDNN_STATUS_BAD_PARAM);
        cudnnDestroyActivationDescriptor(act);
    }
    bad_env_free(&e);
}

#ifdef OCD_TEST_CUDA
/* One set of a training step's and backward's outputs, on the device. */
struct bn_step_out {
    void *y, *dx;
    float *run_mean, *run_var, *save_mean, *save_invstd, *dscale, *dbias;
};

static void bn_step_out_alloc(struct bn_step_out *o, size_t data_bytes, int ch)
{
    size_t pb = (size_t)ch * sizeof(float);
    o->y = tbuf_alloc(data_bytes);
    o->dx = tbuf_alloc(data_bytes);
    float *zeros = calloc((size_t)ch, sizeof(float)), *ones = malloc(pb);
    for (int i = 0; i < ch; i++) ones[i] = 1;
    o->run_mean = tbuf_from(zeros, pb);
    o->run_var = tbuf_from(ones, pb);
    o->save_mean = tbuf_alloc(pb);
    o->save_invstd = tbuf_alloc(pb);
    o->dscale = tbuf_alloc(pb);
    o->dbias = tbuf_alloc(pb);
    free(zeros);
    free(ones);
}

enum { BN_STEP_OUTPUTS = 8 }; /* y and dx first, then the per-channel floats */

/* The buffers of a set, in the order of bn_step_out_same's names. */
static void bn_step_out_list(const struct bn_step_out *o, void *all[BN_STEP_OUTPUTS])
{
    void *list[BN_STEP_OUTPUTS] = {o->y,         o->dx,           o->run_mean, o->run_var,
                                   o->save_mean, o->save_invstd, o->dscale,   o->dbias};
    memcpy(all, list, sizeof list);
}

static void bn_step_out_free(struct bn_step_out *o)
{
    void *all[BN_STEP_OUTPUTS];
    bn_step_out_list(o, all);
    for (int i = 0; i < BN_STEP_OUTPUTS; i++) tbuf_free(all[i]);
}

/* A training step (running averages, factor 0.5) then the backward from its saved statistics. */
static cudnnStatus_t bn_step(cudnnHandle_t h, const struct tview *v, const struct tview *p, const void *x,
                             const void *dy, const float *scale, const float *bias, struct bn_step_out *o)
{
    const float one = 1, zero = 0;
    cudnnStatus_t s = cudnnBatchNormalizationForwardTraining(
        h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, v->desc, x, v->desc, o->y, p->desc, scale, bias, 0.5,
        o->run_mean, o->run_var, 1e-5, o->save_mean, o->save_invstd);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    return cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, v->desc, x,
                                           v->desc, dy, v->desc, o->dx, p->desc, scale, o->dscale, o->dbias,
                                           1e-5, o->save_mean, o->save_invstd);
}

/* Every output of two sets holds the same bytes. */
static void bn_step_out_same(const struct bn_step_out *a, const struct bn_step_out *b, size_t data_bytes, int ch,
                             const char *what)
{
    void *pa[BN_STEP_OUTPUTS], *pb[BN_STEP_OUTPUTS];
    static const char *names[BN_STEP_OUTPUTS] = {"y", "dx", "running mean", "running variance", "saved mean",
                                                 "saved inverse std", "dscale", "dbias"};
    bn_step_out_list(a, pa);
    bn_step_out_list(b, pb);
    unsigned char *ha = malloc(data_bytes), *hb = malloc(data_bytes);
    for (int i = 0; i < BN_STEP_OUTPUTS; i++) {
        size_t bytes = i < 2 ? data_bytes : (size_t)ch * sizeof(float);
        tbuf_download(ha, pa[i], bytes);
        tbuf_download(hb, pb[i], bytes);
        if (memcmp(ha, hb, bytes) != 0) FAIL("%s: %s differs between the direct calls and the graph", what, names[i]);
    }
    free(ha);
    free(hb);
}

/* A training step and its backward on a tensor whose partial sums need more than the 1 MiB the
   handle's scratch starts at (on a GPU of 64 SMs or more), so that a larger buffer replaces the
   one a capture used. */
static void bn_grow_scratch(cudnnHandle_t h)
{
    enum { CH = 256 };
    struct tview v, p;
    int dims[4] = {64, CH, 24, 24}, pdims[4] = {1, CH, 1, 1};
    tview_init(&v, CUDNN_DATA_HALF, 4, dims, TV_NHWC);
    tview_init(&p, CUDNN_DATA_FLOAT, 4, pdims, TV_NCHW);
    double *xv = tview_random(v.count, -1, 1);
    void *x = tview_upload(&v, xv);
    float ones[CH];
    for (int i = 0; i < CH; i++) ones[i] = 1;
    float *scale = tbuf_from(ones, sizeof ones);
    struct bn_step_out o;
    bn_step_out_alloc(&o, tview_bytes(&v), CH);
    CHECK_OK(bn_step(h, &v, &p, x, x, scale, scale, &o));
    bn_step_out_free(&o);
    tbuf_free(scale);
    tview_free(&v, x);
    free(xv);
    tview_destroy(&v);
    tview_destroy(&p);
}

/* Frameworks capture cuDNN calls into CUDA graphs and replay them. Batch-norm training and
   backward, captured on a stream other than the one the handle's scratch was last used on, then
   replayed three times, give the direct calls' results bit for bit (the engine is deterministic;
   each replay reads the running averages the one before wrote), the third after a larger call
   has replaced the scratch the graph uses. Both engine paths: rows (NHWC half) and channels
   first (NCHW float). A handle of its own, so that its scratch starts empty. */
TEST(bn_stream_capture)
{
    if (test_backend[0] != 'c') return;
    static const struct { cudnnDataType_t dtype; int dims[4]; int layout; } cases[] = {
        {CUDNN_DATA_HALF, {4, 64, 9, 11}, TV_NHWC},
        {CUDNN_DATA_FLOAT, {3, 16, 13, 7}, TV_NCHW},
    };
    cudnnHandle_t h = NULL;
    if (!CHECK_OK(cudnnCreate(&h))) return;
    for (size_t k = 0; k < TLEN(cases); k++) {
        struct tview v, p;
        int ch = cases[k].dims[1], pdims[4] = {1, ch, 1, 1};
        tview_init(&v, cases[k].dtype, 4, cases[k].dims, cases[k].layout);
        tview_init(&p, CUDNN_DATA_FLOAT, 4, pdims, TV_NCHW);
        double *xv = tview_random(v.count, -2, 3), *dyv = tview_random(v.count, -1, 1);
        void *x = tview_upload(&v, xv), *dy = tview_upload(&v, dyv);
        float *hs = malloc((size_t)ch * sizeof(float)), *hb = malloc((size_t)ch * sizeof(float));
        for (int i = 0; i < ch; i++) {
            hs[i] = (float)trand_uniform(0.5, 2);
            hb[i] = (float)trand_uniform(-1, 1);
        }
        float *scale = tbuf_from(hs, (size_t)ch * sizeof(float)), *bias = tbuf_from(hb, (size_t)ch * sizeof(float));
        size_t bytes = tview_bytes(&v);
        struct bn_step_out direct, graph;
        bn_step_out_alloc(&direct, bytes, ch);
        bn_step_out_alloc(&graph, bytes, ch);

        cudaStream_t s = NULL;
        cudaGraph_t g = NULL;
        cudaGraphExec_t exec = NULL;
        CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
        CHECK_OK(cudnnSetStream(h, NULL));
        CHECK_OK(bn_step(h, &v, &p, x, dy, scale, bias, &direct));
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        CHECK_OK(cudnnSetStream(h, s));
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
        CHECK_OK(bn_step(h, &v, &p, x, dy, scale, bias, &graph));
        bool captured = CHECK(cudaStreamEndCapture(s, &g) == cudaSuccess) &&
                        CHECK(cudaGraphInstantiateWithFlags(&exec, g, 0) == cudaSuccess);
        static const char *steps[] = {"first step", "second step", "after the scratch grew"};
        for (int step = 0; captured && step < 3; step++) {
            if (step > 0) { /* the direct calls' next step, on the default stream */
                CHECK_OK(cudnnSetStream(h, NULL));
                CHECK_OK(bn_step(h, &v, &p, x, dy, scale, bias, &direct));
                if (step == 2) bn_grow_scratch(h);
                CHECK_OK(cudnnSetStream(h, s));
            }
            CHECK(cudaGraphLaunch(exec, s) == cudaSuccess);
            CHECK(cudaDeviceSynchronize() == cudaSuccess);
            bn_step_out_same(&direct, &graph, bytes, ch, steps[step]);
        }
        CHECK_OK(cudnnSetStream(h, NULL));
        if (exec) cudaGraphExecDestroy(exec);
        if (g) cudaGraphDestroy(g);
        if (s) cudaStreamDestroy(s);
        bn_step_out_free(&direct);
        bn_step_out_free(&graph);
        tbuf_free(scale);
        tbuf_free(bias);
        free(hs);
        free(hb);
        tview_free(&v, x);
        tview_free(&v, dy);
        free(xv);
        free(dyv);
        tview_destroy(&v);
        tview_destroy(&p);
    }
    cudnnDestroy(h);
}
#endif
