/* backend_replay.c: the info log's replay line of cudnnBackendExecute (src/graph/replay.c). A
   graph that is exactly one of the benchmark's graphs (bench/ops_graph.c), built here as
   cudnn-frontend builds it (its own UIDs and order of attributes), logs the problem string the
   benchmark parses, once per execution; a graph differing in anything that string does not carry
   (a scaling, a clip, the intermediates' type, padding per dim, one tensor in two roles, another
   activation or operand, a batched matmul) logs none. tests/check_replay.py runs the strings the
   benchmark's own graphs log back through the benchmark. */
#include "backend_util.h"
#include "conv_harness.h"
#include "ref/conv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REPLAY_NEEDLE "replay: opencudnn_bench --problem "

/* Executes the plan of engine 0 of g once with info logging captured: want (NULL: none) must be
   the only replay line, quoted whole. */
static void expect_replay(bdesc g, struct bt_gt *const *io, int n, const char *want, const char *what)
{
    int64_t ws = 0, uids[16];
    void *ptrs[16];
    for (int i = 0; i < n; i++) uids[i] = io[i]->uid, ptrs[i] = io[i]->buf;
    bdesc plan = bt_plan_of_engine(g, 0, &ws);
    if (!CHECK(plan != NULL)) return;
    struct replay_capture log;
    log_capture_start(&log, REPLAY_NEEDLE);
    CHECK_OK(bt_run(plan, ws, uids, ptrs, n));
    replay_capture_stop(&log);
    char quoted[256];
    snprintf(quoted, sizeof quoted, "\"%s\"", want ? want : "");
    if (want ? !CHECK(log.count == 1 && replay_logged(&log, "cudnnBackendExecute", quoted)) : !CHECK(log.count == 0))
        FAIL("%s: want %s, logged %d line(s): %s", what, want ? quoted : "no replay line", log.count, log.lines);
    cudnnBackendDestroyDescriptor(plan);
}

/* ---- convolution chains --------------------------------------------------------------------- */

/* A chain step: the pointwise mode and its second operand (-1: none). */
enum { BIAS, SCALE, Z, NOPERANDS };
struct step {
    cudnnPointwiseMode_t mode;
    int operand;
};

struct conv_case {
    const char *what;
    cudnnDataType_t dt, mid; /* the stored tensors', the intermediates' */
    int layout;
    int pad[2];
    int nsteps;
    struct step steps[4];
    double alpha2;     /* the first step's */
    double upper_clip; /* the activation's */
    bool shared;       /* SCALE is BIAS's tensor */
    const char *want;
};

#define CBA {{CUDNN_POINTWISE_ADD, BIAS}, {CUDNN_POINTWISE_RELU_FWD, -1}}
#define CSBAA                                                                                              \
    {{CUDNN_POINTWISE_MUL, SCALE}, {CUDNN_POINTWISE_ADD, BIAS}, {CUDNN_POINTWISE_ADD, Z},                  \
     {CUDNN_POINTWISE_RELU_FWD, -1}}
#define F32 CUDNN_DATA_FLOAT
#define F16 CUDNN_DATA_HALF
#define INF INFINITY
static const struct conv_case conv_cases[] = {
    {"ConvBiasAct", F32, F32, TV_NCHW, {1, 1}, 2, CBA, 1, INF, false,
     "op=convbiasact_graph dt=f32 layout=nchw n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=1 stride=1 dil=1 algo=auto"},
    {"ConvScaleBiasAddAct", F16, F32, TV_NHWC, {0, 0}, 4, CSBAA, 1, INF, false,
     "op=convscalebiasaddact_graph dt=f16 layout=nhwc n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=0 stride=1 dil=1 algo=auto"},
    {"ConvBiasScaleAct", F32, F32, TV_NHWC, {1, 1}, 3,
     {{CUDNN_POINTWISE_ADD, BIAS}, {CUDNN_POINTWISE_MUL, SCALE}, {CUDNN_POINTWISE_RELU_FWD, -1}}, 1, INF, false,
     "op=convbiasscaleact_graph dt=f32 layout=nhwc n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=1 stride=1 dil=1 algo=auto"},
    {"ConvBiasAct, the bias scaled by 0.5", F32, F32, TV_NCHW, {1, 1}, 2, CBA, 0.5, INF, false, NULL},
    {"ConvBiasAct, ReLU clipped at 6", F32, F32, TV_NCHW, {1, 1}, 2, CBA, 1, 6, false, NULL},
    {"ConvBiasAct, half intermediates", F16, F16, TV_NHWC, {1, 1}, 2, CBA, 1, INF, false, NULL},
    {"ConvBiasAct, padding 1 x 0", F32, F32, TV_NCHW, {1, 0}, 2, CBA, 1, INF, false, NULL},
    {"ConvBiasAct with GELU", F32, F32, TV_NCHW, {1, 1}, 2,
     {{CUDNN_POINTWISE_ADD, BIAS}, {CUDNN_POINTWISE_GELU_FWD, -1}}, 1, INF, false, NULL},
    {"ConvBiasAct adding z", F32, F32, TV_NCHW, {1, 1}, 2,
     {{CUDNN_POINTWISE_ADD, Z}, {CUDNN_POINTWISE_RELU_FWD, -1}}, 1, INF, false, NULL},
    {"ConvScaleBiasAddAct, scale and bias one tensor", F16, F32, TV_NHWC, {0, 0}, 4, CSBAA, 1, INF, true, NULL},
};
#undef CBA
#undef CSBAA
#undef F32
#undef F16
#undef INF

/* conv (x 2 x 3 x 6 x 6, 4 filters 3 x 3, stride 1) -> the case's chain. */
static void conv_replay(const struct conv_case *cc)
{
    struct ref_conv rc = {2, 2, 3, 4, 1, {6, 6}, {3, 3}, {0}, {cc->pad[0], cc->pad[1]}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    const int chan[4] = {1, rc.k, 1, 1};
    struct bt_gt x, w, y, opd[NOPERANDS], mid[4];
    bt_gt_init(&x, 11, cc->dt, 4, xd, cc->layout, false, -1, 1);
    bt_gt_init(&w, 12, cc->dt, 4, wd, cc->layout, false, -1, 1);
    bt_gt_init(&y, 13, cc->dt, 4, yd, cc->layout, false, 0, 0);
    for (int i = 0; i < NOPERANDS; i++)
        bt_gt_init(&opd[i], 20 + (cc->shared && i == SCALE ? BIAS : i), cc->dt, 4, i == Z ? yd : chan, cc->layout,
                   false, -1, 1);
    for (int i = 0; i < cc->nsteps; i++) bt_gt_init(&mid[i], 30 + i, cc->mid, 4, yd, cc->layout, true, 0, 0);
    const int64_t pad[2] = {cc->pad[0], cc->pad[1]}, stride[2] = {1, 1};
    bdesc cd = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION), ops[5];
    ops[0] = bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, mid[0].d, cd);
    for (int i = 0; i < cc->nsteps; i++) {
        struct ref_pw p = ref_pw_mode(cc->steps[i].mode);
        if (i == 0) p.alpha2 = cc->alpha2;
        if (i + 1 == cc->nsteps) p.upper_clip = cc->upper_clip;
        const int o = cc->steps[i].operand;
        ops[1 + i] = bt_pw_op(&p, mid[i].d, o >= 0 ? opd[o].d : NULL, i + 1 < cc->nsteps ? mid[i + 1].d : y.d);
    }
    bdesc g = bt_graph(ops, 1 + cc->nsteps);
    struct bt_gt *io[3 + NOPERANDS] = {&x, &w, &y};
    int n = 3;
    for (int i = 0; i < NOPERANDS; i++)
        if (!(cc->shared && i == SCALE)) io[n++] = &opd[i];
    expect_replay(g, io, n, cc->want, cc->what);
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(ops, 1 + cc->nsteps);
    cudnnBackendDestroyDescriptor(cd);
    bt_gt_free(&x), bt_gt_free(&w), bt_gt_free(&y);
    for (int i = 0; i < NOPERANDS; i++) bt_gt_free(&opd[i]);
    for (int i = 0; i < cc->nsteps; i++) bt_gt_free(&mid[i]);
}

TEST(backend_replay_conv_chains)
{
    for (size_t i = 0; i < TLEN(conv_cases); i++) conv_replay(&conv_cases[i]);
}

/* ---- matmul --------------------------------------------------------------------------------- */

/* a [batch, 3, 4] b [batch, 4, 5] -> add bias [1, 1, 5] -> GELU: the benchmark's MatmulBiasAct at
   batch 1 only. */
static void matmul_replay(int batch, const char *want)
{
    const int ad[3] = {batch, 3, 4}, bd[3] = {batch, 4, 5}, cd[3] = {batch, 3, 5}, biasd[3] = {1, 1, 5};
    struct bt_gt a, b, bias, c, s, y;
    bt_gt_init(&a, 1, CUDNN_DATA_FLOAT, 3, ad, TV_NCHW, false, -1, 1);
    bt_gt_init(&b, 2, CUDNN_DATA_FLOAT, 3, bd, TV_NCHW, false, -1, 1);
    bt_gt_init(&bias, 3, CUDNN_DATA_FLOAT, 3, biasd, TV_NCHW, false, -1, 1);
    bt_gt_init(&c, 4, CUDNN_DATA_FLOAT, 3, cd, TV_NCHW, true, 0, 0);
    bt_gt_init(&s, 5, CUDNN_DATA_FLOAT, 3, cd, TV_NCHW, true, 0, 0);
    bt_gt_init(&y, 6, CUDNN_DATA_FLOAT, 3, cd, TV_NCHW, false, 0, 0);
    const struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), gelu = ref_pw_mode(CUDNN_POINTWISE_GELU_FWD);
    bdesc ops[3] = {bt_matmul_op(a.d, b.d, c.d, CUDNN_DATA_FLOAT), bt_pw_op(&add, c.d, bias.d, s.d),
                    bt_pw_op(&gelu, s.d, NULL, y.d)};
    bdesc g = bt_graph(ops, 3);
    struct bt_gt *io[] = {&a, &b, &bias, &y};
    expect_replay(g, io, 4, want, batch == 1 ? "MatmulBiasAct" : "MatmulBiasAct, 2 batches");
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(ops, 3);
    struct bt_gt *all[] = {&a, &b, &bias, &c, &s, &y};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

TEST(backend_replay_matmul)
{
    matmul_replay(1, "op=matmulbiasact_graph dt=f32 m=3 n=5 k=4 act=gelu");
    matmul_replay(2, NULL);
}
