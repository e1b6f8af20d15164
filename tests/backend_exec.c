/* backend_exec.c: the backend API's engines, heuristics, plans and execution, through the public
   cudnnBackend* calls as cudnn-frontend makes them: every pointwise mode, matmul, reduction,
   statistics, the three convolution directions, and the fusion patterns of the frontend's
   samples in small sizes (ConvBiasAct, ConvScaleBiasAddAct, ConvBiasScaleAct, MatmulBiasAct,
   DgradDrelu, conv + reduction), each against the double references of tests/ref on the backend
   under test; bad variant packs fail with BAD_PARAM and write nothing. */
#include "backend_util.h"
#include "conv_harness.h"
#include "cnn/conv.h"
#include "ref/conv.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- pointwise ------------------------------------------------------------------------------- */

static const cudnnPointwiseMode_t all_modes[] = {
    CUDNN_POINTWISE_ADD, CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_MIN, CUDNN_POINTWISE_MAX, CUDNN_POINTWISE_SQRT,
    CUDNN_POINTWISE_RELU_FWD, CUDNN_POINTWISE_TANH_FWD, CUDNN_POINTWISE_SIGMOID_FWD, CUDNN_POINTWISE_ELU_FWD,
    CUDNN_POINTWISE_GELU_FWD, CUDNN_POINTWISE_SOFTPLUS_FWD, CUDNN_POINTWISE_SWISH_FWD, CUDNN_POINTWISE_RELU_BWD,
    CUDNN_POINTWISE_TANH_BWD, CUDNN_POINTWISE_SIGMOID_BWD, CUDNN_POINTWISE_ELU_BWD, CUDNN_POINTWISE_GELU_BWD,
    CUDNN_POINTWISE_SOFTPLUS_BWD, CUDNN_POINTWISE_SWISH_BWD};

/* Parameters away from their defaults, so that each is seen to act. */
static struct ref_pw mode_params(cudnnPointwiseMode_t mode)
{
    struct ref_pw p = ref_pw_mode(mode);
    if ((int)mode < 200) p.alpha1 = 0.75, p.alpha2 = 1.25;
    if (mode == CUDNN_POINTWISE_RELU_FWD || mode == CUDNN_POINTWISE_RELU_BWD)
        p.lower_clip = -0.5, p.upper_clip = 1.5, p.slope = 0.1;
    p.elu_alpha = 0.7, p.softplus_beta = 1.5, p.swish_beta = 0.8;
    return p;
}

/* The reference's backward modes are the derivatives of its forward ones (finite differences). */
TEST_ONCE(backend_pointwise_reference_derivatives)
{
    for (size_t m = 12; m < TLEN(all_modes); m++) {
        struct ref_pw b = mode_params(all_modes[m]);
        struct ref_pw f = b;
        f.mode = (cudnnPointwiseMode_t)((int)b.mode - 100);
        f.alpha1 = f.alpha2 = 1;
        for (double x = -1.9; x < 2; x += 0.3) {
            const double h = 1e-6, dy = 0.7;
            double fd = dy * (ref_pw(&f, x + h, 0) - ref_pw(&f, x - h, 0)) / (2 * h);
            if (!CHECK(fabs(fd - ref_pw(&b, x, dy)) < 1e-6)) FAIL("mode %d at x %g", (int)b.mode, x);
        }
    }
}

/* y = mode(x[, b]) for every mode: x 2x3x4x5, b broadcast per channel for the binary forward
   modes and full for the backward ones (dy); float NCHW and half NHWC. */
TEST(backend_pointwise_modes)
{
    const int dims[4] = {2, 3, 4, 5}, bdims[4] = {1, 3, 1, 1};
    for (int layout = 0; layout < 2; layout++)
        for (size_t m = 0; m < TLEN(all_modes); m++) {
            const cudnnPointwiseMode_t mode = all_modes[m];
            const bool bwd = (int)mode >= 200, binary = ref_pw_binary(mode);
            const cudnnDataType_t dt = layout ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
            const int lay = layout ? TV_NHWC : TV_NCHW;
            struct tview xv, bv, yv;
            tview_init(&xv, dt, 4, dims, lay);
            tview_init(&bv, dt, 4, bwd ? dims : bdims, lay);
            tview_init(&yv, dt, 4, dims, lay);
            double *x = tview_random(xv.count, mode == CUDNN_POINTWISE_SQRT ? 0.1 : -2, 2);
            double *b = tview_random(bv.count, -2, 2), *want = malloc(sizeof(double) * (size_t)yv.count);
            void *px = tview_upload(&xv, x), *pb = tview_upload(&bv, b), *py = tview_upload(&yv, NULL);
            struct ref_pw p = mode_params(mode);
            for (int64_t i = 0; i < yv.count; i++) {
                int64_t c = i / 20 % 3;
                want[i] = ref_pw(&p, x[i], binary ? b[bwd ? i : c] : 0);
            }
            bdesc t[3] = {bt_tensor('x', &xv, false), bt_tensor('b', &bv, false), bt_tensor('y', &yv, false)};
            bdesc op = bt_pw_op(&p, t[0], t[1], t[2]), g = bt_graph(&op, 1);
            int64_t ws = -1, idx[4];
            CHECK(bt_engine_count(g) == 1);
            CHECK(bt_heuristic_engines(g, idx, 4) == 1 && idx[0] == 0);
            bdesc plan = bt_plan_of_engine(g, 0, &ws);
            if (CHECK(plan != NULL) && CHECK(ws == 0)) {
                int64_t uids[3] = {'x', 'b', 'y'};
                void *ptrs[3] = {px, pb, py};
                CHECK_OK(bt_run(plan, ws, uids, ptrs, 3));
                char what[64];
                snprintf(what, sizeof what, "mode %d %s", (int)mode, layout ? "half NHWC" : "float NCHW");
                tview_check(&yv, py, want, what);
                cudnnBackendDestroyDescriptor(plan);
            }
            cudnnBackendDestroyDescriptor(op);
            cudnnBackendDestroyDescriptor(g);
            bt_destroy_all(t, 3);
            tview_free(&xv, px), tview_free(&bv, pb), tview_free(&yv, py);
            free(x), free(b), free(want);
            tview_destroy(&xv), tview_destroy(&bv), tview_destroy(&yv);
        }
}

/* ---- convolution graphs ------------------------------------------------------------------------ */

/* conv -> [add z (alpha2 0.5) ->] add bias -> relu (the frontend's ConvBiasAct sample) of rc in
   type dt and layout lay, every engine against the reference; where `needle` is given, an info
   log line holding it must come. */
static void conv_bias_act(const struct ref_conv *rc0, cudnnDataType_t dt, int lay, bool with_z, const char *what,
                          const char *needle)
{
    struct ref_conv rc = *rc0;
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    const int bd[4] = {1, rc.k, 1, 1};
    struct bt_gt x, w, z, b, c, a, s, y;
    bt_gt_init(&x, 'x', dt, 4, xd, lay, false, -1, 1);
    bt_gt_init(&w, 'w', dt, 4, wd, lay, false, -1, 1);
    bt_gt_init(&z, 'z', dt, 4, yd, lay, false, -1, 1);
    bt_gt_init(&b, 'b', dt, 4, bd, lay, false, -1, 1);
    bt_gt_init(&c, 'C', CUDNN_DATA_FLOAT, 4, yd, lay, true, 0, 0);
    bt_gt_init(&a, 'A', CUDNN_DATA_FLOAT, 4, yd, lay, true, 0, 0);
    bt_gt_init(&s, 'B', CUDNN_DATA_FLOAT, 4, yd, lay, true, 0, 0);
    bt_gt_init(&y, 'y', dt, 4, yd, lay, false, 0, 0);
    const int64_t pad[2] = {rc.pad[0], rc.pad[1]}, stride[2] = {rc.stride[0], rc.stride[1]};
    bdesc cd = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), add_half = add, relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD);
    add_half.alpha2 = 0.5;
    bdesc ops[4];
    int nops = 0;
    ops[nops++] = bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, c.d, cd);
    if (with_z) ops[nops++] = bt_pw_op(&add_half, c.d, z.d, a.d);
    ops[nops++] = bt_pw_op(&add, with_z ? a.d : c.d, b.d, s.d);
    ops[nops++] = bt_pw_op(&relu, s.d, NULL, y.d);
    bdesc g = bt_graph(ops, nops);
    double *want = malloc(sizeof(double) * (size_t)y.v.count);
    ref_conv_fwd(&rc, x.val, w.val, want);
    for (int64_t i = 0; i < y.v.count; i++)
        want[i] = fmax(0, want[i] + (with_z ? 0.5 * z.val[i] : 0) + b.val[i / (yd[2] * yd[3]) % rc.k]);
    struct bt_gt *io[] = {&x, &w, &b, &y, &z};
    struct replay_capture log;
    if (needle) log_capture_start(&log, needle);
    bt_run_all_engines(g, io, with_z ? 5 : 4, &y, want, bt_graph_tol(dt), what);
    if (needle) {
        replay_capture_stop(&log);
        if (!CHECK(log.count >= 1)) printf("      (%s: no log line \"%s\")\n", what, needle);
    }
    free(want);
    bt_destroy_all(ops, nops);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    struct bt_gt *all[] = {&x, &w, &z, &b, &c, &a, &s, &y};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

/* ConvBiasAct with z, float NCHW, a 3x3 filter with padding. */
TEST(backend_conv_bias_act)
{
    const struct ref_conv rc = {2, 2, 8, 8, 1, {6, 6}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    conv_bias_act(&rc, CUDNN_DATA_FLOAT, TV_NCHW, true, "ConvBiasAct", NULL);
}

/* On the CUDA pass, ConvBiasAct without z (the bench's cbag graphs), half NHWC, on a 1x1 filter
   large enough for the cuBLAS entry (2^27 multiply-adds): every engine, and the cuBLAS entry's
   epilogue in cuBLASLt's matmul (conv_cublas.cu's log line; C is y at beta 0). */
TEST(backend_conv_bias_act_1x1_cublaslt)
{
    if (test_backend[0] != 'c') return;
    const struct ref_conv rc = {2, 8, 128, 128, 1, {32, 32}, {1, 1}, {0}, {0, 0}, {1, 1}, {1, 1}, false};
    conv_bias_act(&rc, CUDNN_DATA_HALF, TV_NHWC, false, "ConvBiasAct 1x1 half NHWC",
                  "cuBLAS fused forward epilogue: cuBLASLt");
}

/* On the CUDA pass, ConvBiasAct without z on a 3x3 half NHWC layer of 137 tiles of 128x256 (the
   TMA kernel's staged store, in its bias form: unproven, which the suite's OPENCUDNN_UNPROVEN=1
   lets serve), every engine against the reference. */
TEST(backend_conv_bias_act_3x3_staged)
{
    if (test_backend[0] != 'c') return;
    const struct ref_conv rc = {2, 1, 32, 256, 1, {132, 132}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    conv_bias_act(&rc, CUDNN_DATA_HALF, TV_NHWC, false, "ConvBiasAct 3x3 half NHWC", NULL);
}

/* conv -> mul scale -> add bias -> add a -> act (ConvScaleBiasAddAct), half NHWC, stride 2; and
   conv -> add bias -> mul scale -> act (ConvBiasScaleAct), float NHWC. act is a forward mode with
   the parameters of mode_params, or the default RELU_FWD when plain. The host folds every such
   chain into the convolution's epilogue (the plan log says so), and so do the CUDA entries (the
   implicit GEMM in its kernels' own store, or from its partial sums in a second pass). */
static void conv_chain(bool scale_first, cudnnPointwiseMode_t act, bool plain, int c)
{
    const cudnnDataType_t dt = scale_first ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    const int st = scale_first ? 2 : 1;
    struct ref_conv rc = {2, 2, c, 8, 1, {5, 5}, {3, 3}, {0}, {1, 1}, {st, st}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    const int cd1[4] = {1, rc.k, 1, 1};
    struct bt_gt x, w, sc, b, a, v1, v2, v3, v4, y;
    bt_gt_init(&x, 101, dt, 4, xd, TV_NHWC, false, -1, 1);
    bt_gt_init(&w, 102, dt, 4, wd, TV_NHWC, false, -1, 1);
    bt_gt_init(&sc, 103, dt, 4, cd1, TV_NHWC, false, 0.5, 1.5);
    bt_gt_init(&b, 104, dt, 4, cd1, TV_NHWC, false, -1, 1);
    bt_gt_init(&a, 105, dt, 4, yd, TV_NHWC, false, -1, 1);
    bt_gt_init(&v1, 201, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&v2, 202, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&v3, 203, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&v4, 204, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&y, 301, dt, 4, yd, TV_NHWC, false, 0, 0);
    const int64_t pad[2] = {1, 1}, stride[2] = {st, st};
    bdesc cdsc = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), mul = ref_pw_mode(CUDNN_POINTWISE_MUL),
                  relu = plain ? ref_pw_mode(act) : mode_params(act);
    bdesc ops[5];
    int nops;
    ops[0] = bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, v1.d, cdsc);
    if (scale_first) {
        ops[1] = bt_pw_op(&mul, v1.d, sc.d, v2.d);
        ops[2] = bt_pw_op(&add, v2.d, b.d, v3.d);
        ops[3] = bt_pw_op(&add, v3.d, a.d, v4.d);
        ops[4] = bt_pw_op(&relu, v4.d, NULL, y.d);
        nops = 5;
    } else {
        ops[1] = bt_pw_op(&add, v1.d, b.d, v2.d);
        ops[2] = bt_pw_op(&mul, v2.d, sc.d, v3.d);
        ops[3] = bt_pw_op(&relu, v3.d, NULL, y.d);
        nops = 4;
    }
    bdesc g = bt_graph(ops, nops);
    double *want = malloc(sizeof(double) * (size_t)y.v.count);
    ref_conv_fwd(&rc, x.val, w.val, want);
    for (int64_t i = 0; i < y.v.count; i++) {
        int k = (int)(i / (yd[2] * yd[3]) % 8);
        double r = scale_first ? want[i] * sc.val[k] + b.val[k] + a.val[i] : (want[i] + b.val[k]) * sc.val[k];
        want[i] = ref_pw(&relu, r, 0);
    }
    struct bt_gt *io[] = {&x, &w, &sc, &b, &a, &y};
    char what[64];
    snprintf(what, sizeof what, "%s, mode %d", scale_first ? "ConvScaleBiasAddAct" : "ConvBiasScaleAct", (int)act);
    struct replay_capture log;
    log_capture_start(&log, "with its epilogue (scale, ");
    bt_run_all_engines(g, io, 6, &y, want, bt_graph_tol(dt), what);
    replay_capture_stop(&log);
    if (CHECK(log.count >= 1)) CHECK(strstr(log.last, plain ? ", relu)" : ", activation)") != NULL);
    free(want);
    bt_destroy_all(ops, nops);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cdsc);
    struct bt_gt *all[] = {&x, &w, &sc, &b, &a, &v1, &v2, &v3, &v4, &y};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

TEST(backend_conv_scale_bias_add_act)
{
    conv_chain(true, CUDNN_POINTWISE_RELU_FWD, true, 8);
}

TEST(backend_conv_bias_scale_act)
{
    conv_chain(false, CUDNN_POINTWISE_RELU_FWD, true, 8);
}

/* Three input channels: the few-channel (stem) kernel's typed scale and activation too. */
TEST(backend_conv_chains_three_channels)
{
    conv_chain(true, CUDNN_POINTWISE_SWISH_FWD, false, 3);
    conv_chain(false, CUDNN_POINTWISE_ELU_FWD, false, 3);
}

TEST(backend_conv_scale_bias_add_activations)
{
    const cudnnPointwiseMode_t modes[] = {CUDNN_POINTWISE_TANH_FWD, CUDNN_POINTWISE_GELU_FWD, CUDNN_POINTWISE_SWISH_FWD,
                                          CUDNN_POINTWISE_RELU_FWD};
    for (size_t i = 0; i < TLEN(modes); i++) conv_chain(true, modes[i], false, 8);
}

TEST(backend_conv_bias_scale_activations)
{
    const cudnnPointwiseMode_t modes[] = {CUDNN_POINTWISE_SIGMOID_FWD, CUDNN_POINTWISE_ELU_FWD,
                                          CUDNN_POINTWISE_SOFTPLUS_FWD};
    for (size_t i = 0; i < TLEN(modes); i++) conv_chain(false, modes[i], false, 8);
}

/* relu(x * scale + bias + z) alone (the bench's ScaleBiasAddAct chain, no anchor), half NHWC,
   scale and bias per channel: on CUDA the pointwise-chain engine, whose fast form takes 16
   channels as whole vectors and 5 channels element by element, with a count that is not a
   multiple of its groups (a partial last group). */
static void scale_bias_add_act(int n, int c, int h, int w)
{
    const int xd[4] = {n, c, h, w}, cd[4] = {1, c, 1, 1};
    const cudnnDataType_t dt = CUDNN_DATA_HALF;
    struct bt_gt x, sc, b, z, v[3], y; /* v: the virtual intermediates, in float */
    bt_gt_init(&x, 101, dt, 4, xd, TV_NHWC, false, -2, 2);
    bt_gt_init(&sc, 102, dt, 4, cd, TV_NHWC, false, 0.5, 1.5);
    bt_gt_init(&b, 103, dt, 4, cd, TV_NHWC, false, -1, 1);
    bt_gt_init(&z, 104, dt, 4, xd, TV_NHWC, false, -2, 2);
    for (int k = 0; k < 3; k++) bt_gt_init(&v[k], 201 + k, CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, true, 0, 0);
    bt_gt_init(&y, 301, dt, 4, xd, TV_NHWC, false, 0, 0);
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), mul = ref_pw_mode(CUDNN_POINTWISE_MUL),
                  relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD);
    bdesc ops[4] = {bt_pw_op(&mul, x.d, sc.d, v[0].d), bt_pw_op(&add, v[0].d, b.d, v[1].d),
                    bt_pw_op(&add, v[1].d, z.d, v[2].d), bt_pw_op(&relu, v[2].d, NULL, y.d)};
    bdesc g = bt_graph(ops, 4);
    double *want = malloc(sizeof(double) * (size_t)y.v.count);
    for (int64_t i = 0; i < y.v.count; i++) {
        const int k = (int)(i / (h * w) % c);
        want[i] = fmax(0.0, x.val[i] * sc.val[k] + b.val[k] + z.val[i]);
    }
    struct bt_gt *io[] = {&x, &sc, &b, &z, &y};
    char what[64];
    snprintf(what, sizeof what, "ScaleBiasAddAct half NHWC %dx%dx%dx%d", n, c, h, w);
    bt_run_all_engines(g, io, 5, &y, want, bt_graph_tol(dt), what);
    free(want);
    bt_destroy_all(ops, 4);
    cudnnBackendDestroyDescriptor(g);
    struct bt_gt *all[] = {&x, &sc, &b, &z, &v[0], &v[1], &v[2], &y};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

TEST(backend_scale_bias_add_act)
{
    scale_bias_add_act(2, 16, 3, 5);
    scale_bias_add_act(3, 5, 3, 7);
}

/* backward data -> RELU_BWD with the forward input (DgradDrelu): the gradient kept where the
   forward input is above 0. With the RELU_BWD's defaults every backend folds the gradient into
   the stores of some engine's backward data (the plan log says so), the implicit GEMM's tiles on
   CUDA where the channels allow; with a clip moved it runs as a separate chain. */
struct drelu_case {
    cudnnDataType_t dt;
    int layout;
    int n, c, k, h, w;
    bool clipped; /* RELU_BWD's lower clip at 0.25: not folded */
};

static const struct drelu_case drelu_cases[] = {
    {CUDNN_DATA_HALF, TV_NHWC, 2, 8, 8, 4, 4, false},
    {CUDNN_DATA_HALF, TV_NHWC, 2, 64, 64, 10, 9, false},   /* ResNet's 64-channel 3x3 in small */
    {CUDNN_DATA_BFLOAT16, TV_NHWC, 1, 32, 48, 7, 7, false},
    {CUDNN_DATA_FLOAT, TV_NCHW, 2, 16, 32, 6, 7, false},  /* TF32 tiles on CUDA, NCHW */
    {CUDNN_DATA_HALF, TV_NHWC, 2, 16, 16, 5, 5, true},
};

static void dgrad_drelu(const struct drelu_case *dc)
{
    struct ref_conv rc = {2, dc->n, dc->c, dc->k, 1, {dc->h, dc->w}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    struct bt_gt dy, w, dx, bx, out;
    bt_gt_init(&dy, 301, dc->dt, 4, yd, dc->layout, false, -1, 1);
    bt_gt_init(&w, 102, dc->dt, 4, wd, dc->layout, false, -1, 1);
    bt_gt_init(&dx, 1001, CUDNN_DATA_FLOAT, 4, xd, dc->layout, true, 0, 0);
    bt_gt_init(&bx, 201, dc->dt, 4, xd, dc->layout, false, -1, 1);
    bt_gt_init(&out, 101, dc->dt, 4, xd, dc->layout, false, 0, 0);
    const int64_t pad[2] = {1, 1}, stride[2] = {1, 1};
    bdesc cd = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw drelu = ref_pw_mode(CUDNN_POINTWISE_RELU_BWD);
    if (dc->clipped) drelu.lower_clip = 0.25;
    bdesc ops[2] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, dx.d, w.d, dy.d, cd),
                    bt_pw_op(&drelu, bx.d, dx.d, out.d)};
    bdesc g = bt_graph(ops, 2);
    double *want = malloc(sizeof(double) * (size_t)out.v.count);
    ref_conv_bwd_data(&rc, dy.val, w.val, want);
    for (int64_t i = 0; i < out.v.count; i++) want[i] = ref_pw(&drelu, bx.val[i], want[i]);
    struct bt_gt *io[] = {&dy, &w, &bx, &out};
    char what[96];
    snprintf(what, sizeof what, "DgradDrelu %s %s %dx%dx%dx%d, K %d%s", tdtype_name(dc->dt),
             dc->layout == TV_NHWC ? "NHWC" : "NCHW", dc->n, dc->c, dc->h, dc->w, dc->k, dc->clipped ? ", clipped" : "");
    struct replay_capture log;
    log_capture_start(&log, "with the ReLU gradient in its stores");
    bt_run_all_engines(g, io, 4, &out, want, bt_graph_tol(dc->dt), what);
    replay_capture_stop(&log);
    if (!CHECK(dc->clipped ? log.count == 0 : log.count >= 1)) FAIL("%s: %d plan(s) folded the gradient", what, log.count);
    free(want);
    bt_destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    struct bt_gt *all[] = {&dy, &w, &dx, &bx, &out};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

TEST(backend_dgrad_drelu)
{
    for (size_t i = 0; i < TLEN(drelu_cases); i++) dgrad_drelu(&drelu_cases[i]);
}

static bdesc reduction_op(cudnnReduceTensorOp_t red, bdesc x, bdesc y)
{
    bdesc rd = bt_make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    bt_set(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    bt_set(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &red);
    CHECK_OK(cudnnBackendFinalize(rd));
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
    CHECK_OK(cudnnBackendFinalize(op));
    cudnnBackendDestroyDescriptor(rd);
    return op;
}

/* conv -> column sums (ConvColReduction): half NHWC 1x1 convolution, float sums per channel. */
TEST(backend_conv_reduction)
{
    struct ref_conv rc = {2, 2, 8, 16, 1, {3, 3}, {1, 1}, {0}, {0, 0}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    const int xd[4] = {2, 8, 3, 3}, wd[4] = {16, 8, 1, 1}, yd[4] = {2, 16, 3, 3}, rd[4] = {1, 16, 1, 1};
    struct bt_gt x, w, y, r;
    bt_gt_init(&x, 'x', CUDNN_DATA_HALF, 4, xd, TV_NHWC, false, -1, 1);
    bt_gt_init(&w, 'w', CUDNN_DATA_HALF, 4, wd, TV_NHWC, false, -1, 1);
    bt_gt_init(&y, 'y', CUDNN_DATA_HALF, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&r, 'r', CUDNN_DATA_FLOAT, 4, rd, TV_NHWC, false, 0, 0);
    const int64_t pad[2] = {0, 0}, stride[2] = {1, 1};
    bdesc cd = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    bdesc ops[2] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, y.d, cd),
                    reduction_op(CUDNN_REDUCE_TENSOR_ADD, y.d, r.d)};
    bdesc g = bt_graph(ops, 2);
    double *conv = malloc(sizeof(double) * (size_t)y.v.count), want[16] = {0};
    ref_conv_fwd(&rc, x.val, w.val, conv);
    for (int64_t i = 0; i < y.v.count; i++) want[i / 9 % 16] += conv[i];
    struct bt_gt *io[] = {&x, &w, &r};
    bt_run_all_engines(g, io, 3, &r, want, 2e-2, "ConvColReduction");
    free(conv);
    bt_destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    struct bt_gt *all[] = {&x, &w, &y, &r};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

/* One convolution of each direction, every engine, float NCHW with stride and padding. */
TEST(backend_conv_directions)
{
    struct ref_conv rc = {2, 2, 6, 4, 1, {7, 6}, {3, 3}, {0}, {1, 0}, {2, 1}, {1, 1}, true};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    const int64_t pad[2] = {1, 0}, stride[2] = {2, 1};
    static const cudnnBackendDescriptorType_t kinds[3] = {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                                          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                                          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
    for (int dir = 0; dir < 3; dir++) {
        struct bt_gt x, w, y;
        bt_gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, dir == 1, dir == 1 ? 0 : -1, 1);
        bt_gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NCHW, dir == 2, dir == 2 ? 0 : -1, 1);
        bt_gt_init(&y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, dir == 0, dir == 0 ? 0 : -1, 1);
        /* the written tensor is a real output: re-make it non-virtual with a poisoned buffer */
        struct bt_gt *dst = dir == 0 ? &y : dir == 1 ? &x : &w;
        cudnnBackendDestroyDescriptor(dst->d);
        dst->d = bt_tensor(dst->uid, &dst->v, false);
        dst->buf = tview_upload(&dst->v, NULL);
        bdesc cd = bt_conv_desc(2, pad, stride, CUDNN_CONVOLUTION);
        bdesc op = bt_conv_op(kinds[dir], x.d, w.d, y.d, cd), g = bt_graph(&op, 1);
        double *want = malloc(sizeof(double) * (size_t)dst->v.count);
        if (dir == 0) ref_conv_fwd(&rc, x.val, w.val, want);
        else if (dir == 1) ref_conv_bwd_data(&rc, y.val, w.val, want);
        else ref_conv_bwd_filter(&rc, x.val, y.val, want);
        struct bt_gt *io[] = {&x, &w, &y};
        static const char *const names[3] = {"conv fwd", "conv bwd data", "conv bwd filter"};
        bt_run_all_engines(g, io, 3, dst, want, bt_graph_tol(CUDNN_DATA_FLOAT), names[dir]);
        free(want);
        cudnnBackendDestroyDescriptor(op);
        cudnnBackendDestroyDescriptor(g);
        cudnnBackendDestroyDescriptor(cd);
        bt_gt_free(&x), bt_gt_free(&w), bt_gt_free(&y);
    }
}

/* ---- matmul, statistics ------------------------------------------------------------------------- */

/* matmul -> add bias -> act (MatmulBiasAct) and its variants: a [batch, M, K] times b [1, K, N]
   (shared by the batches), C and the output row-major or column-major, the bias per row
   ([1, M, 1]) or per column ([1, 1, N]) or none, the ADD's alphas, a forward activation or none.
   Both backends fold every chain whose bias is added unscaled into the GEMM's epilogue (the plan
   log says so). */
struct mm_case {
    cudnnDataType_t dt;
    int batch;
    bool col_major;           /* C and the output stored column-major (NHWC order of [b, M, N]) */
    int bias;                 /* 0: none, 1: per row, 2: per column */
    double add_a1, add_a2;    /* the ADD's alphas on C and on the bias */
    cudnnPointwiseMode_t act; /* a forward mode, or ADD: none */
    bool plain;               /* act with its default parameters, else those of mode_params */
};

static const struct mm_case mm_cases[] = {
    {CUDNN_DATA_HALF, 1, false, 2, 1, 1, CUDNN_POINTWISE_GELU_FWD, true}, /* the frontend's sample */
    {CUDNN_DATA_FLOAT, 2, true, 1, 1, 1, CUDNN_POINTWISE_SOFTPLUS_FWD, false},
    {CUDNN_DATA_FLOAT, 2, false, 1, 0.5, 1, CUDNN_POINTWISE_RELU_FWD, true},
    {CUDNN_DATA_HALF, 2, false, 2, 1, 1, CUDNN_POINTWISE_RELU_FWD, false}, /* clips and slope */
    {CUDNN_DATA_HALF, 1, true, 0, 1, 1, CUDNN_POINTWISE_TANH_FWD, false},
    {CUDNN_DATA_FLOAT, 2, false, 1, 1, 1, CUDNN_POINTWISE_SIGMOID_FWD, true},
    {CUDNN_DATA_HALF, 1, true, 2, 1, 1, CUDNN_POINTWISE_ELU_FWD, false},
    {CUDNN_DATA_FLOAT, 1, false, 0, 1, 1, CUDNN_POINTWISE_SWISH_FWD, false},
    {CUDNN_DATA_FLOAT, 1, true, 2, 1, 1, CUDNN_POINTWISE_ADD, false},
    {CUDNN_DATA_FLOAT, 1, false, 2, 1, 2, CUDNN_POINTWISE_GELU_FWD, true}, /* a scaled bias: not folded */
};

static void matmul_chain(const struct mm_case *mc)
{
    const cudnnDataType_t dt = mc->dt;
    const int B = mc->batch, M = 16, K = 8, N = 12, lay = mc->col_major ? TV_NHWC : TV_NCHW;
    const bool act = mc->act != CUDNN_POINTWISE_ADD;
    const int ad[3] = {B, M, K}, bd[3] = {1, K, N}, cd[3] = {B, M, N}, zd[3] = {1, mc->bias == 1 ? M : 1, mc->bias == 2 ? N : 1};
    struct bt_gt a, b, c, z, t, out;
    bt_gt_init(&a, 'a', dt, 3, ad, TV_NCHW, false, -1, 1);
    bt_gt_init(&b, 'b', dt, 3, bd, TV_NCHW, false, -1, 1);
    bt_gt_init(&c, 'c', CUDNN_DATA_FLOAT, 3, cd, lay, true, 0, 0);
    bt_gt_init(&z, 'z', dt, 3, zd, lay, false, -1, 1);
    bt_gt_init(&t, 't', CUDNN_DATA_FLOAT, 3, cd, lay, true, 0, 0);
    bt_gt_init(&out, 'o', dt, 3, cd, lay, false, 0, 0);
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), f = act && !mc->plain ? mode_params(mc->act) : ref_pw_mode(mc->act);
    add.alpha1 = mc->add_a1, add.alpha2 = mc->add_a2;
    bdesc ops[3] = {bt_matmul_op(a.d, b.d, c.d, CUDNN_DATA_FLOAT), NULL, NULL};
    int nops = 1;
    if (mc->bias) ops[nops++] = bt_pw_op(&add, c.d, z.d, act ? t.d : out.d);
    if (act) ops[nops++] = bt_pw_op(&f, mc->bias ? t.d : c.d, NULL, out.d);
    bdesc g = bt_graph(ops, nops);
    double *want = malloc(sizeof(double) * (size_t)out.v.count);
    for (int bb = 0; bb < B; bb++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += a.val[(bb * M + i) * K + k] * b.val[k * N + j];
                if (mc->bias) s = ref_pw(&add, s, z.val[mc->bias == 1 ? i : j]);
                want[(bb * M + i) * N + j] = act ? ref_pw(&f, s, 0) : s;
            }
    struct bt_gt *io[] = {&a, &b, &out, &z};
    char what[96];
    snprintf(what, sizeof what, "MatmulBiasAct %s, batch %d, %s, bias %d, act %d", mc->dt == CUDNN_DATA_HALF ? "half" : "float",
             B, mc->col_major ? "column-major" : "row-major", mc->bias, (int)mc->act);
    struct replay_capture log;
    log_capture_start(&log, "gemm with its epilogue (");
    bt_run_all_engines(g, io, mc->bias ? 4 : 3, &out, want, bt_graph_tol(dt), what);
    replay_capture_stop(&log);
    const bool folds = mc->add_a2 == 1;
    if (!CHECK(folds ? log.count >= 1 : log.count == 0)) FAIL("%s: %d plan(s) folded the chain", what, log.count);
    if (log.count >= 1)
        CHECK(strstr(log.last, !act ? "(bias)" : mc->act == CUDNN_POINTWISE_RELU_FWD && mc->plain ? "relu)" : "activation)") != NULL);
    free(want);
    bt_destroy_all(ops, nops);
    cudnnBackendDestroyDescriptor(g);
    struct bt_gt *all[] = {&a, &b, &c, &z, &t, &out};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

TEST(backend_matmul_bias_act)
{
    for (size_t i = 0; i < TLEN(mm_cases); i++) matmul_chain(&mm_cases[i]);
}

/* A plain float matmul of 2 batches whose B is shared (batch extent 1). */
TEST(backend_matmul)
{
    const int B = 2, M = 16, K = 8, N = 12;
    const int ad[3] = {B, M, K}, bd[3] = {1, K, N}, cd[3] = {B, M, N};
    struct bt_gt a, b, c;
    bt_gt_init(&a, 'a', CUDNN_DATA_FLOAT, 3, ad, TV_NCHW, false, -1, 1);
    bt_gt_init(&b, 'b', CUDNN_DATA_FLOAT, 3, bd, TV_NCHW, false, -1, 1);
    bt_gt_init(&c, 'c', CUDNN_DATA_FLOAT, 3, cd, TV_NCHW, false, 0, 0);
    bdesc op = bt_matmul_op(a.d, b.d, c.d, CUDNN_DATA_FLOAT), g = bt_graph(&op, 1);
    double *want = malloc(sizeof(double) * (size_t)c.v.count);
    for (int bb = 0; bb < B; bb++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += a.val[(bb * M + i) * K + k] * b.val[k * N + j];
                want[(bb * M + i) * N + j] = s;
            }
    struct bt_gt *io[] = {&a, &b, &c};
    bt_run_all_engines(g, io, 3, &c, want, bt_graph_tol(CUDNN_DATA_FLOAT), "matmul");
    free(want);
    cudnnBackendDestroyDescriptor(op);
    cudnnBackendDestroyDescriptor(g);
    bt_gt_free(&a), bt_gt_free(&b), bt_gt_free(&c);
}

/* matmul -> c*, c* * s -> o with s passed in o's own buffer: the plan writes the GEMM straight
   into o and runs the multiply in place, so this pack runs with the GEMM's result in a temporary
   (engine_exec.c, separate_in_place); compat_backend_output_over_chain_input has the convolution. */
TEST(backend_matmul_output_over_chain_input)
{
    const int M = 16, K = 8, N = 12;
    const int ad[3] = {1, M, K}, bd[3] = {1, K, N}, cd[3] = {1, M, N};
    struct bt_gt a, b, c, sc, out;
    bt_gt_init(&a, 'a', CUDNN_DATA_FLOAT, 3, ad, TV_NCHW, false, -1, 1);
    bt_gt_init(&b, 'b', CUDNN_DATA_FLOAT, 3, bd, TV_NCHW, false, -1, 1);
    bt_gt_init(&c, 'c', CUDNN_DATA_FLOAT, 3, cd, TV_NCHW, true, 0, 0);
    bt_gt_init(&sc, 's', CUDNN_DATA_FLOAT, 3, cd, TV_NCHW, false, 0.5, 1.5);
    bt_gt_init(&out, 'o', CUDNN_DATA_FLOAT, 3, cd, TV_NCHW, false, 0, 0);
    struct ref_pw mul = ref_pw_mode(CUDNN_POINTWISE_MUL);
    bdesc ops[2] = {bt_matmul_op(a.d, b.d, c.d, CUDNN_DATA_FLOAT), bt_pw_op(&mul, c.d, sc.d, out.d)};
    bdesc g = bt_graph(ops, 2);
    double *want = malloc(sizeof(double) * (size_t)out.v.count);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += a.val[i * K + k] * b.val[k * N + j];
            want[i * N + j] = s * sc.val[i * N + j];
        }
    const int64_t uids[4] = {'a', 'b', 's', 'o'};
    void *const ptrs[4] = {a.buf, b.buf, out.buf, out.buf};
    int ran = 0;
    for (int64_t e = 0; e < bt_engine_count(g); e++) {
        int64_t ws = -1;
        bdesc plan = bt_plan_of_engine(g, e, &ws);
        if (plan == NULL) continue;
        tview_store(&out.v, out.buf, sc.val);
        if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 4)))
            bt_check_tol(&out.v, out.buf, want, bt_graph_tol(CUDNN_DATA_FLOAT), "matmul * s, s in the output's buffer"), ran++;
        cudnnBackendDestroyDescriptor(plan);
    }
    CHECK(ran >= 1);
    free(want);
    bt_destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    struct bt_gt *all[] = {&a, &b, &c, &sc, &out};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

/* Channel sums and sums of squares (GEN_STATS SUM_SQSUM), float NHWC. */
TEST(backend_genstats)
{
    const int xd[4] = {2, 4, 3, 3}, sd[4] = {1, 4, 1, 1};
    struct bt_gt x, sum, sq;
    bt_gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, false, -1, 1);
    bt_gt_init(&sum, 's', CUDNN_DATA_FLOAT, 4, sd, TV_NCHW, false, 0, 0);
    bt_gt_init(&sq, 'q', CUDNN_DATA_FLOAT, 4, sd, TV_NCHW, false, 0, 0);
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
    cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    bt_set(op, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, 1, &mode);
    bt_set(op, CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, x.d);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, sum.d);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, sq.d);
    CHECK_OK(cudnnBackendFinalize(op));
    bdesc g = bt_graph(&op, 1);
    double ws[4] = {0}, wq[4] = {0};
    for (int64_t i = 0; i < x.v.count; i++) ws[i / 9 % 4] += x.val[i], wq[i / 9 % 4] += x.val[i] * x.val[i];
    int64_t wsz = -1;
    bdesc plan = bt_plan_of_engine(g, 0, &wsz);
    if (CHECK(plan != NULL)) {
        int64_t uids[3] = {'x', 's', 'q'};
        void *ptrs[3] = {x.buf, sum.buf, sq.buf};
        CHECK_OK(bt_run(plan, wsz, uids, ptrs, 3));
        bt_check_tol(&sum.v, sum.buf, ws, 1e-5, "sum");
        bt_check_tol(&sq.v, sq.buf, wq, 1e-5, "square sum");
        cudnnBackendDestroyDescriptor(plan);
    }
    cudnnBackendDestroyDescriptor(op);
    cudnnBackendDestroyDescriptor(g);
    bt_gt_free(&x), bt_gt_free(&sum), bt_gt_free(&sq);
}

/* ---- plans and variant packs --------------------------------------------------------------------- */

/* A plan runs again with other pointers; a pack without a UID, a NULL workspace the plan needs, a
   pointer not aligned to its elements and a missing plan are BAD_PARAM with nothing written (a
   pointer below its declared BYTE_ALIGNMENT runs: compat_backend_pytorch_alignment_overstated). */
TEST(backend_execute_packs)
{
    const int xd[4] = {2, 4, 3, 3}, wd[4] = {8, 4, 1, 1}, yd[4] = {2, 8, 3, 3}, rd[4] = {1, 8, 1, 1};
    struct bt_gt x, w, y, r, x2, r2;
    bt_gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, false, -1, 1);
    bt_gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NCHW, false, -1, 1);
    bt_gt_init(&y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, true, 0, 0);
    bt_gt_init(&r, 'r', CUDNN_DATA_FLOAT, 4, rd, TV_NCHW, false, 0, 0);
    bt_gt_init(&x2, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, false, -1, 1);
    bt_gt_init(&r2, 'r', CUDNN_DATA_FLOAT, 4, rd, TV_NCHW, false, 0, 0);
    const int64_t pad[2] = {0, 0}, stride[2] = {1, 1};
    bdesc cd = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    bdesc ops[2] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, y.d, cd),
                    reduction_op(CUDNN_REDUCE_TENSOR_MAX, y.d, r.d)};
    bdesc g = bt_graph(ops, 2);
    int64_t ws = -1;
    bdesc plan = bt_plan_of_engine(g, 0, &ws);
    if (!CHECK(plan != NULL) || !CHECK(ws > 0)) return; /* the convolution's output lives in the workspace */
    struct ref_conv rc = {2, 2, 4, 8, 1, {3, 3}, {1, 1}, {0}, {0, 0}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    double conv[144], want[8], want2[8];
    struct bt_gt *xs[2] = {&x, &x2};
    double *wants[2] = {want, want2};
    for (int k = 0; k < 2; k++) {
        ref_conv_fwd(&rc, xs[k]->val, w.val, conv);
        for (int c = 0; c < 8; c++) wants[k][c] = -INFINITY;
        for (int i = 0; i < 144; i++) wants[k][i / 9 % 8] = fmax(wants[k][i / 9 % 8], conv[i]);
    }
    void *work = tbuf_alloc((size_t)ws);
    int64_t uids[3] = {'x', 'w', 'r'};
    void *ptrs[3] = {x.buf, w.buf, r.buf}, *ptrs2[3] = {x2.buf, w.buf, r2.buf};
    bdesc vp = bt_pack(uids, ptrs, 3, work), vp2 = bt_pack(uids, ptrs2, 3, work);
    CHECK_OK(cudnnBackendExecute(test_handle(), plan, vp));
    CHECK_OK(cudnnBackendExecute(test_handle(), plan, vp2));
    bt_check_tol(&r.v, r.buf, want, bt_graph_tol(CUDNN_DATA_FLOAT), "first pack");
    bt_check_tol(&r2.v, r2.buf, want2, bt_graph_tol(CUDNN_DATA_FLOAT), "second pack");
    tbuf_poison(r.buf, tview_bytes(&r.v));
    void *snap = tbuf_snapshot(r.buf, tview_bytes(&r.v));
    bdesc bad[3] = {bt_pack(uids, ptrs, 2, work), bt_pack(uids, ptrs, 3, NULL), NULL};
    void *misaligned[3] = {(char *)x.buf + 2, w.buf, r.buf};
    bad[2] = bt_pack(uids, misaligned, 3, work);
    for (int i = 0; i < 3; i++) {
        CHECK_STATUS(cudnnBackendExecute(test_handle(), plan, bad[i]), CUDNN_STATUS_BAD_PARAM);
        tbuf_unchanged(r.buf, snap, tview_bytes(&r.v), "r after a bad pack");
        cudnnBackendDestroyDescriptor(bad[i]);
    }
    CHECK_STATUS(cudnnBackendExecute(test_handle(), NULL, vp), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnBackendExecute(test_handle(), vp, vp), CUDNN_STATUS_BAD_PARAM);
    free(snap);
    tbuf_free(work);
    cudnnBackendDestroyDescriptor(vp);
    cudnnBackendDestroyDescriptor(vp2);
    cudnnBackendDestroyDescriptor(plan);
    bt_destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    struct bt_gt *all[] = {&x, &w, &y, &r, &x2, &r2};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

/* One plan, executed by four threads at once, each on its own tensors, three times each. */
struct plan_thread {
    bdesc plan;
    int64_t ws;
    void *x, *w, *y, *work;
    cudnnStatus_t status;
};

/* The threads run detached (core/platform.h); the test waits until none is left. */
static ocd_mutex_t plan_threads_lock = OCD_MUTEX_INIT;
static ocd_cond_t plan_threads_done = OCD_COND_INIT;
static int plan_threads_left;

static void plan_thread_run(void *arg)
{
    struct plan_thread *t = arg;
    int64_t uids[3] = {'x', 'w', 'y'};
    void *ptrs[3] = {t->x, t->w, t->y};
    bdesc vp = NULL;
    t->status = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp);
    if (t->status == CUDNN_STATUS_SUCCESS)
        t->status = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    if (t->status == CUDNN_STATUS_SUCCESS)
        t->status = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    if (t->status == CUDNN_STATUS_SUCCESS)
        t->status = cudnnBackendSetAttribute(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &t->work);
    if (t->status == CUDNN_STATUS_SUCCESS) t->status = cudnnBackendFinalize(vp);
    for (int k = 0; k < 3 && t->status == CUDNN_STATUS_SUCCESS; k++)
        t->status = cudnnBackendExecute(test_handle(), t->plan, vp);
    cudnnBackendDestroyDescriptor(vp);
    ocd_mutex_lock(&plan_threads_lock);
    if (--plan_threads_left == 0) ocd_cond_broadcast(&plan_threads_done);
    ocd_mutex_unlock(&plan_threads_lock);
}

TEST(backend_plan_threads)
{
    struct ref_conv rc = {2, 1, 4, 6, 1, {5, 5}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    const int xd[4] = {1, 4, 5, 5}, wd[4] = {6, 4, 3, 3}, yd[4] = {1, 6, 5, 5};
    struct bt_gt x[4], w, c, y[4];
    bt_gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NHWC, false, -1, 1);
    bt_gt_init(&c, 'c', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    for (int i = 0; i < 4; i++) {
        bt_gt_init(&x[i], 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, false, -1, 1);
        bt_gt_init(&y[i], 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0, 0);
    }
    const int64_t pad[2] = {1, 1}, stride[2] = {1, 1};
    bdesc cd = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw tanh_fwd = ref_pw_mode(CUDNN_POINTWISE_TANH_FWD);
    bdesc ops[2] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x[0].d, w.d, c.d, cd),
                    bt_pw_op(&tanh_fwd, c.d, NULL, y[0].d)};
    bdesc g = bt_graph(ops, 2);
    int64_t ws = -1;
    bdesc plan = bt_plan_of_engine(g, 0, &ws);
    if (CHECK(plan != NULL)) {
        struct plan_thread t[4];
        plan_threads_left = 4;
        for (int i = 0; i < 4; i++)
            t[i] = (struct plan_thread){plan, ws, x[i].buf, w.buf, y[i].buf, ws > 0 ? tbuf_alloc((size_t)ws) : NULL,
                                        CUDNN_STATUS_SUCCESS};
        for (int i = 0; i < 4; i++)
            if (!ocd_thread_start(plan_thread_run, &t[i])) plan_thread_run(&t[i]); /* no thread: run here */
        ocd_mutex_lock(&plan_threads_lock);
        while (plan_threads_left > 0) ocd_cond_wait(&plan_threads_done, &plan_threads_lock);
        ocd_mutex_unlock(&plan_threads_lock);
        for (int i = 0; i < 4; i++) {
            CHECK_OK(t[i].status);
            double want[150];
            ref_conv_fwd(&rc, x[i].val, w.val, want);
            for (int k = 0; k < 150; k++) want[k] = tanh(want[k]);
            bt_check_tol(&y[i].v, y[i].buf, want, bt_graph_tol(CUDNN_DATA_FLOAT), "a thread's result");
            if (t[i].work) tbuf_free(t[i].work);
        }
        cudnnBackendDestroyDescriptor(plan);
    }
    bt_destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    bt_gt_free(&w), bt_gt_free(&c);
    for (int i = 0; i < 4; i++) bt_gt_free(&x[i]), bt_gt_free(&y[i]);
}

/* Every implementation of the convolution registry has a global engine index (docs/engines.md):
   the append-only list of engine.c names each entry of each direction's table. */
TEST_ONCE(backend_engine_list_complete)
{
    const char *cnn = OCD_LIBRARY_FILE("cudnn_cnn_infer");
    const struct ocd_conv_table *(*table)(enum ocd_conv_dir);
    int (*count)(int);
    const char *(*name)(int, int);
    *(void **)&table = test_lib_symbol(cnn, "ocd_conv_table");
    *(void **)&count = test_lib_symbol(cnn, "ocd_engine_entry_count");
    *(void **)&name = test_lib_symbol(cnn, "ocd_engine_entry_name");
    if (!CHECK(table && count && name)) return;
    for (int dir = 0; dir < OCD_CONV_DIRS; dir++) {
        const struct ocd_conv_table *t = table((enum ocd_conv_dir)dir);
        for (size_t i = 0; i < t->count; i++) {
            const char *entry = t->impls[i].base.name;
            bool found = false;
            for (int j = 0; j < count(dir) && !found; j++) found = strcmp(name(dir, j), entry) == 0;
            if (!CHECK(found)) FAIL("%s has no engine index: append it to engine.c and docs/engines.md", entry);
        }
    }
}
