/* compat_backend.c: the backend (graph) API as the cuDNN 8.2-era frameworks drive it beyond
   cudnn-frontend v0.4.1's samples (backend_frontend.c): PyTorch's Conv_v8.cpp (the plan search
   over INSTANT's configurations filtered by its deterministic / TF32 flags, engine 0 as the last
   resort, the plan or the configuration cached and used on other tensors after every other
   descriptor is gone, the compute types it sends, the byte alignment its getAlignment derives
   from the data pointer), PyTorch's quantized cuDNN
   convolution (int8 channels-last tensors, a float output that a requantizing multiply reads,
   the plan run with no workspace), TensorFlow's fused convolution (conv, side input, bias,
   activation; the output buffer passed as the side input when its scale is 0), the
   frontend's count-then-fetch of heuristic results with more targets than results, and hidet's
   direct calls (engine 0, the data's own compute type, double scalars for double data). Each
   replays the call sequence in C; docs/compatibility.md lists the sources. (compat_graph.c: the
   graphs of OpenVINO's NVIDIA plugin.) */
#include "backend_util.h"
#include "conv_harness.h"
#include "ref/conv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PyTorch 1.10-1.12 Conv_v8.cpp's getAlignment, as written there: doubles while the address is a
   multiple, so an address aligned to exactly 2^k (k < 4) is declared 2^(k+1). */
static int64_t pt_alignment(const void *p)
{
    int64_t a = 1;
    while ((uintptr_t)p % (uintptr_t)a == 0 && a < 16) a *= 2;
    return a;
}

/* PyTorch's getConvDescriptor: unit strides and dilations, one padding. */
static bdesc pt_conv_desc(cudnnDataType_t comp, int64_t pad)
{
    const int64_t p[2] = {pad, pad}, one[2] = {1, 1};
    return bt_conv_desc_2d(comp, p, one, one);
}

/* The heuristic's configurations: counted, then fetched into cap targets the caller created
   (more than there are results when cap exceeds the count, as the frontend's getEngineConfig(n)
   may ask). Returns the count written. */
static int heuristics(bdesc g, bdesc *cfgs, int cap)
{
    bdesc h = bt_make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;
    bt_set_desc(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g);
    bt_set(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    CHECK_OK(cudnnBackendFinalize(h));
    int64_t n = 0, got = -1;
    CHECK_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    for (int i = 0; i < cap; i++) cfgs[i] = bt_make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, cap, &got, cfgs));
    CHECK(got == (n < cap ? n : cap));
    cudnnBackendDestroyDescriptor(h);
    return (int)got;
}

/* cudnn_frontend::hasNumericalNote over a configuration's engine: any of the `avoid` bits. */
static bool has_note(bdesc cfg, unsigned avoid)
{
    bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int64_t n = 0;
    bool hit = false;
    if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) ==
            CUDNN_STATUS_SUCCESS &&
        cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes) == CUDNN_STATUS_SUCCESS)
        for (int64_t i = 0; i < n; i++) hit = hit || (avoid & (1u << notes[i]));
    cudnnBackendDestroyDescriptor(e);
    return hit;
}

/* ---- PyTorch Conv_v8.cpp -------------------------------------------------------------------------- */

/* One convolution of a direction as Conv_v8 sets it up: x, y, w (UIDs 'x', 'y', 'w'; for the
   backward directions x is grad_input or input and y grad_output), float, 3x3, pad 1. */
struct pt_conv {
    struct ref_conv rc;
    struct tview v[3];   /* x y w */
    double *val[3];
    void *buf[3];
    double *want;
    int dst;             /* the written one */
};

static const int64_t pt_uids[3] = {'x', 'y', 'w'};

static void pt_values(struct pt_conv *c)
{
    for (int i = 0; i < 3; i++) {
        free(c->val[i]);
        c->val[i] = i == c->dst ? NULL : tview_random(c->v[i].count, -1, 1);
        tview_store(&c->v[i], c->buf[i], c->val[i]);
    }
    if (c->dst == 0) ref_conv_bwd_data(&c->rc, c->val[1], c->val[2], c->want);
    else if (c->dst == 1) ref_conv_fwd(&c->rc, c->val[0], c->val[2], c->want);
    else ref_conv_bwd_filter(&c->rc, c->val[0], c->val[1], c->want);
}

/* x and w of type xt, y of type yt (for the backward directions the written one is x or w: all
   three share xt there). */
static void pt_conv_init_types(struct pt_conv *c, int dir, int layout, cudnnDataType_t xt, cudnnDataType_t yt);

static void pt_conv_init(struct pt_conv *c, int dir, int layout)
{
    pt_conv_init_types(c, dir, layout, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT);
}

static void pt_conv_init_types(struct pt_conv *c, int dir, int layout, cudnnDataType_t xt, cudnnDataType_t yt)
{
    memset(c, 0, sizeof *c);
    c->rc = (struct ref_conv){2, 2, 4, 6, 1, {5, 5}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&c->rc);
    tconv_views(&c->rc, xt, layout, layout, &c->v[0], &c->v[2], NULL);
    tconv_views(&c->rc, yt, layout, layout, NULL, NULL, &c->v[1]);
    c->dst = dir == 0 ? 1 : dir == 1 ? 0 : 2;
    for (int i = 0; i < 3; i++) c->buf[i] = tview_upload(&c->v[i], NULL);
    c->want = malloc(sizeof(double) * (size_t)c->v[c->dst].count);
    pt_values(c);
}

static void pt_conv_free(struct pt_conv *c)
{
    for (int i = 0; i < 3; i++) tview_free(&c->v[i], c->buf[i]), tview_destroy(&c->v[i]), free(c->val[i]);
    free(c->want);
}

/* The graph of one direction (tensors, conv descriptor and op destroyed once it is finalized,
   as the frontend objects go out of scope). */
static bdesc pt_graph_comp(const struct pt_conv *c, int dir, const void *const ptrs[3], cudnnDataType_t comp,
                           cudnnStatus_t expect);

static bdesc pt_graph(const struct pt_conv *c, int dir, const void *const ptrs[3])
{
    return pt_graph_comp(c, dir, ptrs, CUDNN_DATA_FLOAT, CUDNN_STATUS_SUCCESS);
}

/* The graph of a COMP_TYPE; NULL when its finalize gives `expect`, a failure. */
static bdesc pt_graph_comp(const struct pt_conv *c, int dir, const void *const ptrs[3], cudnnDataType_t comp,
                           cudnnStatus_t expect)
{
    static const cudnnBackendDescriptorType_t kinds[3] = {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                                          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                                          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
    bdesc t[3];
    for (int i = 0; i < 3; i++) t[i] = bt_tensor_aligned(pt_uids[i], &c->v[i], NULL, pt_alignment(ptrs[i]));
    bdesc cd = pt_conv_desc(comp, 1);
    bdesc op = bt_conv_op(kinds[dir], t[0], t[2], t[1], cd);
    bdesc g = bt_make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnHandle_t h = test_handle();
    bt_set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    bt_set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    if (CHECK_STATUS(cudnnBackendFinalize(g), expect) && expect != CUDNN_STATUS_SUCCESS) cudnnBackendDestroyDescriptor(g), g = NULL;
    bt_destroy_all((bdesc[]){op, cd, t[0], t[1], t[2]}, 5);
    return g;
}

/* The graph of a float forward convolution of the tensors t (x, y, w, as pt_uids), its
   convolution and operation descriptors into d[0] and d[1] (for bt_destroy_all with the graph). */
static bdesc pt_conv_fwd_graph(const bdesc t[3], bdesc d[2])
{
    d[0] = pt_conv_desc(CUDNN_DATA_FLOAT, 1);
    d[1] = bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, t[0], t[2], t[1], d[0]);
    return bt_graph(&d[1], 1);
}

#define PT_DETERMINISTIC (1u << CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC)
#define PT_NO_TF32 ((1u << CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) | (1u << CUDNN_NUMERICAL_NOTE_TENSOR_CORE))

/* get_execplan_from_heuristics_else_fall_back with filterEngineConfigs (deterministic, TF32 off):
   INSTANT's configurations without NONDETERMINISTIC, DOWN_CONVERT_INPUTS or TENSOR_CORE, the
   first whose plan builds (that configuration kept in *kept when asked for); engine 0 when none
   does. */
static bdesc pt_find_plan(bdesc g, int64_t *ws, bdesc *kept_cfg)
{
    bdesc cfgs[64];
    int n = heuristics(g, cfgs, 64), chosen = -1;
    bdesc plan = NULL;
    int kept = 0;
    for (int i = 0; i < n && plan == NULL; i++)
        if (!has_note(cfgs[i], PT_DETERMINISTIC | PT_NO_TF32)) kept++, plan = bt_plan_of_cfg(cfgs[i], ws), chosen = i;
    if (plan && kept_cfg) *kept_cfg = cfgs[chosen], cfgs[chosen] = NULL;
    for (int i = 0; i < 64; i++)
        if (cfgs[i]) cudnnBackendDestroyDescriptor(cfgs[i]);
    CHECK(kept >= 1);
    return plan ? plan : bt_plan_of_engine(g, 0, ws);
}

/* Conv_v8's plan search and cache, each direction, NCHW and channels-last: the plan found for
   the first tensors is kept with every other descriptor destroyed, then runs again on the same
   buffers holding new values (a cache hit), on the handle of another thread (the cache is
   global, getCudnnHandle() per thread); 1.10's configuration cache builds a plan of the kept
   configuration on that other handle. Each gives the reference. */
TEST(compat_backend_pytorch_conv_v8_plan_cache)
{
    cudnnHandle_t other = NULL; /* another thread's handle: the caches are global, handles per thread */
    if (!CHECK_OK(cudnnCreate(&other))) return;
    for (int dir = 0; dir < 3; dir++)
        for (int layout = TV_NCHW; layout <= TV_NHWC; layout++) {
            struct pt_conv c;
            pt_conv_init(&c, dir, layout);
            bdesc g = pt_graph(&c, dir, (const void *const *)c.buf);
            int64_t ws = -1;
            bdesc cfg = NULL, plan = pt_find_plan(g, &ws, &cfg);
            cudnnBackendDestroyDescriptor(g);
            if (CHECK(plan != NULL)) {
                void *work = ws > 0 ? tbuf_alloc((size_t)ws) : NULL;
                for (int run = 0; run < 2; run++) {
                    if (run) pt_values(&c);
                    char what[64];
                    snprintf(what, sizeof what, "Conv_v8 dir %d %s run %d", dir, tview_layout_name(layout), run);
                    if (CHECK_OK(bt_execute_on(run ? other : test_handle(), plan, pt_uids, c.buf, 3, work)))
                        bt_check_tol(&c.v[c.dst], c.buf[c.dst], c.want, bt_graph_tol(CUDNN_DATA_FLOAT), what);
                }
                if (work) tbuf_free(work);
                cudnnBackendDestroyDescriptor(plan);
            }
            /* 1.10's engine_cache keeps the configuration and builds a plan of it on every call */
            if (cfg != NULL) {
                pt_values(&c);
                bdesc again = bt_plan_on(other, cfg, &ws);
                if (CHECK(again != NULL)) {
                    void *work = ws > 0 ? tbuf_alloc((size_t)ws) : NULL;
                    if (CHECK_OK(bt_execute_on(other, again, pt_uids, c.buf, 3, work)))
                        bt_check_tol(&c.v[c.dst], c.buf[c.dst], c.want, bt_graph_tol(CUDNN_DATA_FLOAT),
                                     "Conv_v8, a plan of the cached configuration");
                    if (work) tbuf_free(work);
                    cudnnBackendDestroyDescriptor(again);
                }
                cudnnBackendDestroyDescriptor(cfg);
            }
            pt_conv_free(&c);
        }
    cudnnDestroy(other);
}

/* Conv_v8.cpp of 1.10 (built with USE_EXPERIMENTAL_CUDNN_V8_API) sets the convolution's
   COMP_TYPE to the input's data type: HALF for half tensors, in every direction and layout, with
   no note filter for them (TF32 allowed); later releases send FLOAT for half and bfloat16. Both
   run (computed in float, as the legacy API's half configurations are). BFLOAT16 as COMP_TYPE is
   refused when the graph finalizes (cuDNN 8.2 refused Conv_v8's bfloat16 convolutions then:
   pytorch/pytorch#58861), as is FLOAT for int8 data, which the first quantized convolution sent
   before it moved to INT32 ("operator datatype needs to be int32 for int8 convolution"), and
   int8 NCHW tensors, not vectorized, which it then made channels-last: the int8 convolutions
   that run are compat_backend_pytorch_quantized_conv's. */
TEST(compat_backend_pytorch_conv_v8_compute_types)
{
    static const struct {
        cudnnDataType_t xt, yt, comp;
        cudnnStatus_t status;
        int dirs, layout; /* layout -1: NCHW and channels-last by turns */
    } cases[] = {
        {CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_STATUS_SUCCESS, 3, -1},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_STATUS_SUCCESS, 3, -1},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_STATUS_NOT_SUPPORTED, 1, TV_NCHW},
        {CUDNN_DATA_INT8, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_STATUS_NOT_SUPPORTED, 1, TV_NHWC},
        {CUDNN_DATA_INT8, CUDNN_DATA_FLOAT, CUDNN_DATA_INT32, CUDNN_STATUS_NOT_SUPPORTED, 1, TV_NCHW},
    };
    for (size_t k = 0; k < TLEN(cases); k++)
        for (int dir = 0; dir < cases[k].dirs; dir++) {
            const int layout = cases[k].layout >= 0 ? cases[k].layout : dir % 2 ? TV_NHWC : TV_NCHW;
            struct pt_conv c;
            pt_conv_init_types(&c, dir, layout, cases[k].xt, cases[k].yt);
            bdesc g = pt_graph_comp(&c, dir, (const void *const *)c.buf, cases[k].comp, cases[k].status);
            bdesc cfgs[64];
            int n = g ? heuristics(g, cfgs, 64) : 0;
            bool ran = false;
            for (int i = 0; i < n && !ran; i++) {
                int64_t ws = -1;
                bdesc plan = bt_plan_of_cfg(cfgs[i], &ws);
                if (plan == NULL) continue;
                char what[80];
                snprintf(what, sizeof what, "Conv_v8 %s, %s compute, dir %d", tdtype_name(cases[k].xt),
                         tdtype_name(cases[k].comp), dir);
                const double tol = cases[k].xt == CUDNN_DATA_INT8 ? 0 : bt_graph_tol(cases[k].xt);
                if (CHECK_OK(bt_run(plan, ws, pt_uids, c.buf, 3)))
                    bt_check_tol(&c.v[c.dst], c.buf[c.dst], c.want, tol, what);
                ran = true;
                cudnnBackendDestroyDescriptor(plan);
            }
            CHECK(ran == (g != NULL));
            if (g) bt_destroy_all(cfgs, 64), cudnnBackendDestroyDescriptor(g);
            pt_conv_free(&c);
        }
}

/* Conv_v8 passes a tensor's sizes and strides as they are: channels-last with one channel gives
   the channel dim stride 1 beside W's stride 1 (a depthwise filter K x 1 x 3 x 3 is strided
   {9, 1, 3, 1}, an image of one channel {H*W, 1, W, 1}). Both run, groups taken from the
   channels (depthwise: x's 4 channels over the filter's 1). */
TEST(compat_backend_pytorch_size_one_strides)
{
    for (int depthwise = 0; depthwise < 2; depthwise++) {
        const int c = depthwise ? 4 : 1;
        struct ref_conv rc = {2, 2, c, 4, depthwise ? 4 : 1, {5, 5}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
        ref_conv_out_dims(&rc);
        struct tview v[3]; /* x y w; w NCHW, {4, 1, 3, 3}: the same memory as channels-last */
        tconv_views(&rc, CUDNN_DATA_FLOAT, TV_NHWC, TV_NCHW, &v[0], &v[2], &v[1]);
        const int64_t x_st[4] = {25 * c, 1, 5 * c, c}, w_st[4] = {9, 1, 3, 1};
        double *x = tview_random(v[0].count, -1, 1), *w = tview_random(v[2].count, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)v[1].count);
        void *ptrs[3] = {tview_upload(&v[0], x), tview_upload(&v[1], NULL), tview_upload(&v[2], w)};
        ref_conv_fwd(&rc, x, w, want);
        bdesc t[3] = {bt_tensor_aligned('x', &v[0], x_st, 16), bt_tensor_aligned('y', &v[1], NULL, 16),
                      bt_tensor_aligned('w', &v[2], w_st, 16)};
        bdesc d[2], g = pt_conv_fwd_graph(t, d);
        int64_t ws = -1;
        bdesc plan = pt_find_plan(g, &ws, NULL);
        if (CHECK(plan != NULL)) {
            if (CHECK_OK(bt_run(plan, ws, pt_uids, ptrs, 3)))
                bt_check_tol(&v[1], ptrs[1], want, bt_graph_tol(CUDNN_DATA_FLOAT),
                             depthwise ? "depthwise filter {9, 1, 3, 1}" : "one channel {25, 1, 5, 1}");
            cudnnBackendDestroyDescriptor(plan);
        }
        bt_destroy_all((bdesc[]){g, d[1], d[0], t[0], t[1], t[2]}, 6);
        for (int i = 0; i < 3; i++) tview_free(&v[i], ptrs[i]), tview_destroy(&v[i]);
        free(x), free(w), free(want);
    }
}

/* getAlignment's overstatement: a batch slice x[1:] of a float tensor of 4 x 5 x 5 images
   starts 100 floats (400 bytes, a multiple of 16) in; of 3 x 5 x 5 images, 75 floats (300 bytes:
   4-aligned, declared 8). The plan of the declared alignment runs on the pointer as it is. A
   pointer that is not even aligned to its element size stays BAD_PARAM, nothing written. */
TEST(compat_backend_pytorch_alignment_overstated)
{
    struct ref_conv rc = {2, 2, 3, 4, 1, {5, 5}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    struct tview v[3]; /* x y w */
    tconv_views(&rc, CUDNN_DATA_FLOAT, TV_NCHW, TV_NCHW, &v[0], &v[2], &v[1]);
    const size_t image = 3 * 5 * 5 * sizeof(float);
    char *whole = tbuf_alloc(image * 3 + 8); /* x of 3 images; the slice x[1:] */
    void *ptrs[3] = {whole + image, tview_upload(&v[1], NULL), tview_upload(&v[2], NULL)};
    double *x = tview_random(v[0].count, -1, 1), *w = tview_random(v[2].count, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)v[1].count);
    tview_store(&v[0], ptrs[0], x);
    tview_store(&v[2], ptrs[2], w);
    ref_conv_fwd(&rc, x, w, want);
    const int64_t align = pt_alignment(ptrs[0]);
    CHECK(align == 8 && (uintptr_t)ptrs[0] % 8 == 4);
    bdesc t[3];
    for (int i = 0; i < 3; i++) t[i] = bt_tensor_aligned(pt_uids[i], &v[i], NULL, i == 0 ? align : 16);
    bdesc d[2], g = pt_conv_fwd_graph(t, d);
    int64_t ws = -1;
    bdesc plan = pt_find_plan(g, &ws, NULL);
    if (CHECK(plan != NULL)) {
        void *work = ws > 0 ? tbuf_alloc((size_t)ws) : NULL;
        if (CHECK_OK(bt_execute(plan, pt_uids, ptrs, 3, work)))
            bt_check_tol(&v[1], ptrs[1], want, bt_graph_tol(CUDNN_DATA_FLOAT), "x[1:] declared 8-aligned");
        /* 2 bytes further: not a float address at all */
        void *odd[3] = {(char *)ptrs[0] + 2, ptrs[1], ptrs[2]};
        tbuf_poison(ptrs[1], tview_bytes(&v[1]));
        CHECK_STATUS(bt_execute(plan, pt_uids, odd, 3, work), CUDNN_STATUS_BAD_PARAM);
        double *poison = tview_fill(v[1].count, NAN);
        tview_holds(&v[1], ptrs[1], poison, "y after a refused execute");
        free(poison);
        if (work) tbuf_free(work);
        cudnnBackendDestroyDescriptor(plan);
    }
    bt_destroy_all((bdesc[]){g, d[1], d[0], t[0], t[1], t[2]}, 6);
    tbuf_free(whole), tview_free(&v[1], ptrs[1]), tview_free(&v[2], ptrs[2]);
    for (int i = 0; i < 3; i++) tview_destroy(&v[i]);
    free(x), free(w), free(want);
}

/* ---- PyTorch's quantized cuDNN convolution ---------------------------------------------------- */

/* quantized::conv2d_cudnn (aten/src/ATen/native/quantized/cudnn/Conv.cpp, 2021-22): int8
   activation and weight in channels-last, not vectorized, INT32 compute into a float output 'y'
   that is not virtual and that the next op reads; with a bias, b * c -> d and y + d -> e (all full
   size float tensors, channels-last); then e (or y) times the requantize multiplier s (a full
   size float tensor) into the int8 output 'r'. INSTANT's configurations are tried in order, each
   run with the data pointer of an empty tensor (NULL) as workspace; the first that runs must give
   y and the rounded, saturated r. Later releases declare y virtual (still FLOAT) and allocate the
   plan's workspace: y must then stay float between the ops, not int8 like the data. */
static void quantized_conv(bool bias, bool virt)
{
    struct ref_conv rc = {2, 2, 8, 8, 1, {5, 5}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    struct bt_gt x, w, y, s, r, b, c, d, e;
    bt_gt_init(&x, 'x', CUDNN_DATA_INT8, 4, xd, TV_NHWC, false, -4, 4);
    bt_gt_init(&w, 'w', CUDNN_DATA_INT8, 4, wd, TV_NHWC, false, -4, 4);
    bt_gt_init(&y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, virt, 0, 0);
    bt_gt_init(&r, 'r', CUDNN_DATA_INT8, 4, yd, TV_NHWC, false, 0, 0);
    /* 0.2: y * 0.2 never ends in .5, so rounding ties cannot blur the check */
    bt_gt_init(&s, 's', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0, 0);
    s.val = tview_fill(s.v.count, 0.2);
    tview_store(&s.v, s.buf, s.val);
    bt_gt_init(&b, 'b', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, -20, 20);
    bt_gt_init(&c, 'c', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0, 0);
    c.val = tview_fill(c.v.count, 1.0);
    tview_store(&c.v, c.buf, c.val);
    for (int64_t i = 0; i < b.v.count; i++) b.val[i] = nearbyint(b.val[i]);
    tview_store(&b.v, b.buf, b.val);
    bt_gt_init(&d, 'd', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0, 0);
    bt_gt_init(&e, 'e', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0, 0);
    bdesc cd = pt_conv_desc(CUDNN_DATA_INT32, 1);
    struct ref_pw mul = ref_pw_mode(CUDNN_POINTWISE_MUL), add = ref_pw_mode(CUDNN_POINTWISE_ADD);
    bdesc ops[4];
    int nops = 0;
    ops[nops++] = bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, y.d, cd);
    if (bias) {
        ops[nops++] = bt_pw_op(&mul, b.d, c.d, d.d);
        ops[nops++] = bt_pw_op(&add, y.d, d.d, e.d);
    }
    ops[nops++] = bt_pw_op(&mul, bias ? e.d : y.d, s.d, r.d);
    bdesc g = bt_graph(ops, nops);
    double *want_y = malloc(sizeof(double) * (size_t)y.v.count), *want_r = malloc(sizeof(double) * (size_t)r.v.count);
    ref_conv_fwd(&rc, x.val, w.val, want_y);
    for (int64_t i = 0; i < r.v.count; i++) {
        const double v = (want_y[i] + (bias ? b.val[i] * c.val[i] : 0)) * s.val[i];
        want_r[i] = fmin(127, fmax(-128, nearbyint(v)));
    }
    int64_t uids[9] = {'x', 'r', 'w', 's', 'y', 'b', 'c', 'd', 'e'}; /* y last of the first five: left out when virtual */
    void *ptrs[9] = {x.buf, r.buf, w.buf, s.buf, y.buf, b.buf, c.buf, d.buf, e.buf};
    bdesc cfgs[64];
    int n = heuristics(g, cfgs, 64);
    bool ran = false;
    for (int i = 0; i < n && !ran; i++) {
        int64_t ws = -1;
        bdesc plan = bt_plan_of_cfg(cfgs[i], &ws);
        if (plan == NULL) continue;
        void *work = virt && ws > 0 ? tbuf_alloc((size_t)ws) : NULL;
        ran = bt_execute(plan, uids, ptrs, bias ? 9 : 5 - virt, work) == CUDNN_STATUS_SUCCESS;
        if (work) tbuf_free(work);
        cudnnBackendDestroyDescriptor(plan);
    }
    if (CHECK(ran)) {
        if (!virt) bt_check_tol(&y.v, y.buf, want_y, 0, bias ? "quantized conv y, bias" : "quantized conv y");
        bt_check_tol(&r.v, r.buf, want_r, 0, bias ? "quantized conv r, bias" : "quantized conv r");
    }
    free(want_y), free(want_r);
    bt_destroy_all(cfgs, 64);
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(ops, nops);
    cudnnBackendDestroyDescriptor(cd);
    struct bt_gt *all[] = {&x, &w, &y, &s, &r, &b, &c, &d, &e};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

TEST(compat_backend_pytorch_quantized_conv)
{
    quantized_conv(false, false);
    quantized_conv(true, false);
    quantized_conv(false, true);
    quantized_conv(true, true);
}

/* ---- TensorFlow's fused convolution ------------------------------------------------------------ */

/* GetCudnnFusedOperationGraph (TF 2.6-2.8 cuda_dnn.cc, the frontend path of
   FusedConv2DBiasActivation): conv(x, w) -> C*, add(C*, z; alpha1 the conv scale, alpha2 the side
   input scale) -> A*, add(A*, bias 1xKx1x1) -> B*, ReLU -> y; UIDs 'x' 'w' 'z' 'b' 'y' 'C' 'A'
   'B'. With no side input TF passes the output buffer as z with scale 0: y holds NaN then and
   must not leak. With a side input in its own buffer, alpha2 scales it. The side input in the
   output's own buffer (the legacy call's "z may be y") is right whatever the plan: fused into
   the convolution's epilogue, or with the convolution's result in a temporary where the plan
   would write it into y before the add reads z (separate_in_place in engine_exec.c). With the
   IDENTITY activation (`bias_out_desc = ... IDENTITY ? tensor_y : tensor_bias`) the graph has
   three ops and the bias add writes y itself; TFRT's DnnBuildFusedConvolution (the same graph)
   builds its plan from the autotuned **engine's global index alone** (EngineBuilder
   setGlobalEngineIdx, the knobs of the autotune map set on the ones the engine reports, here
   none), executed with the pack 'x' 'y' 'w' 'z' 'b'. The other activations of TensorFlow's
   dnn::ActivationMode as cuDNN graphs express them: relu6 as RELU_FWD clipped to [0, 6], elu as
   ELU_FWD, leakyrelu as RELU_FWD with a lower-clip slope. */
static void tf_fused(double conv_scale, double side_scale, bool z_is_y, const struct ref_pw *act)
{
    const bool relu = act != NULL;
    struct ref_conv rc = {2, 2, 4, 6, 1, {5, 5}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    const int bd[4] = {1, rc.k, 1, 1};
    struct bt_gt x, w, z, b, y, cv, a, bb;
    bt_gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, false, -1, 1);
    bt_gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NHWC, false, -1, 1);
    bt_gt_init(&z, 'z', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, -1, 1);
    bt_gt_init(&b, 'b', CUDNN_DATA_FLOAT, 4, bd, TV_NHWC, false, -1, 1);
    bt_gt_init(&y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0, 0);
    bt_gt_init(&cv, 'C', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&a, 'A', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&bb, 'B', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bdesc cd = pt_conv_desc(CUDNN_DATA_FLOAT, 1);
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), side = add;
    side.alpha1 = conv_scale, side.alpha2 = side_scale;
    const int nops = relu ? 4 : 3;
    bdesc ops[4] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, cv.d, cd),
                    bt_pw_op(&side, cv.d, z.d, a.d), bt_pw_op(&add, a.d, b.d, relu ? bb.d : y.d),
                    relu ? bt_pw_op(act, bb.d, NULL, y.d) : NULL};
    bdesc g = bt_graph(ops, nops);
    double *want = malloc(sizeof(double) * (size_t)y.v.count);
    ref_conv_fwd(&rc, x.val, w.val, want);
    for (int64_t i = 0; i < y.v.count; i++) {
        const double zi = side_scale != 0 ? side_scale * z.val[i] : 0;
        want[i] = conv_scale * want[i] + zi + b.val[i / 25 % 6];
        if (relu) want[i] = ref_pw(act, want[i], 0);
    }
    int64_t uids[5] = {'x', 'w', 'z', 'b', 'y'};
    void *ptrs[5] = {x.buf, w.buf, z_is_y ? y.buf : z.buf, b.buf, y.buf};
    bdesc cfgs[64];
    int n = heuristics(g, cfgs, 64), ran = 0;
    for (int i = 0; i < n; i++) {
        int64_t ws = -1;
        bdesc plan = bt_plan_of_cfg(cfgs[i], &ws);
        if (plan == NULL) continue;
        if (z_is_y && side_scale != 0) tview_store(&y.v, y.buf, z.val);
        else tbuf_poison(y.buf, tview_bytes(&y.v));
        char what[96];
        snprintf(what, sizeof what, "TF fused conv%s, side scale %g%s, config %d", relu ? "" : " (identity)", side_scale,
                 z_is_y ? " (z is y)" : "", i);
        if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 5)))
            bt_check_tol(&y.v, y.buf, want, bt_graph_tol(CUDNN_DATA_FLOAT), what), ran++;
        cudnnBackendDestroyDescriptor(plan);
    }
    CHECK(ran >= 1);
    /* TFRT: the first configuration's engine rebuilt from its global index, the pack in its order */
    int64_t index = -1, count = 0, ws = -1;
    bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    if (n > 0 && CHECK_OK(cudnnBackendGetAttribute(cfgs[0], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                   &count, &e)) &&
        CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count, &index))) {
        bdesc plan = bt_plan_of_engine(g, index, &ws);
        const int64_t tfrt_uids[5] = {'x', 'y', 'w', 'z', 'b'};
        void *tfrt_ptrs[5] = {x.buf, y.buf, w.buf, z_is_y ? y.buf : z.buf, b.buf};
        if (z_is_y && side_scale != 0) tview_store(&y.v, y.buf, z.val);
        else tbuf_poison(y.buf, tview_bytes(&y.v));
        if (CHECK(plan != NULL) && CHECK_OK(bt_run(plan, ws, tfrt_uids, tfrt_ptrs, 5)))
            bt_check_tol(&y.v, y.buf, want, bt_graph_tol(CUDNN_DATA_FLOAT), "TFRT's plan by engine index");
        if (plan) cudnnBackendDestroyDescriptor(plan);
    }
    cudnnBackendDestroyDescriptor(e);
    free(want);
    bt_destroy_all(cfgs, 64);
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(ops, nops);
    cudnnBackendDestroyDescriptor(cd);
    struct bt_gt *all[] = {&x, &w, &z, &b, &y, &cv, &a, &bb};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

TEST(compat_backend_tf_fused_conv_side_input)
{
    struct ref_pw relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD), relu6 = relu, leaky = relu;
    struct ref_pw elu = ref_pw_mode(CUDNN_POINTWISE_ELU_FWD);
    relu6.upper_clip = 6, leaky.slope = 0.2;
    tf_fused(1.0, 0.0, true, &relu);
    tf_fused(0.5, 0.0, true, &relu);
    tf_fused(1.0, 0.75, false, &relu);
    tf_fused(1.0, 0.75, true, &relu);
    tf_fused(1.0, 0.0, true, NULL);
    tf_fused(0.5, 0.75, false, NULL);
    tf_fused(4.0, 0.75, false, &relu6);
    tf_fused(1.0, 0.5, true, &elu);
    tf_fused(1.0, 0.0, true, &leaky);
}

/* ---- the frontend's heuristics against 8.2 -------------------------------------------------------- */

/* EngineHeuristics_v8::getEngineConfig(n) of frontend 0.5-0.7 creates n ENGINECFG targets and
   fetches n whatever the count (callers pass getEngineConfigCount() or a fixed number): the
   fetch succeeds with the count written, the targets past it stay unfinalized, and a plan or a
   note query over one of them fails cleanly (the frontend's try/catch and hasNumericalNote skip
   it). A program built with 8.3+ headers may ask for CUDNN_HEUR_MODE_FALLBACK (2) or
   CUDNN_HEUR_MODE_A (3), which 8.2 does not have: BAD_PARAM at the Set, and the heuristics
   object then lacks its mode (BAD_PARAM at finalize), as cuDNN 8.2 answers. */
TEST(compat_backend_frontend_heuristics_overfetch)
{
    struct pt_conv c;
    pt_conv_init(&c, 0, TV_NCHW);
    bdesc g = pt_graph(&c, 0, (const void *const *)c.buf);
    bdesc cfgs[64];
    int n = heuristics(g, cfgs, 64);
    if (CHECK(n >= 1 && n < 64)) {
        int64_t ws = -1, cnt = -1;
        bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        CHECK_STATUS(cudnnBackendGetAttribute(cfgs[n], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                              &cnt, &e),
                     CUDNN_STATUS_NOT_INITIALIZED);
        cudnnBackendDestroyDescriptor(e);
        CHECK(!has_note(cfgs[n], ~0u));
        CHECK(bt_plan_of_cfg(cfgs[n], &ws) == NULL);
        bdesc plan = bt_plan_of_cfg(cfgs[0], &ws);
        if (CHECK(plan != NULL)) cudnnBackendDestroyDescriptor(plan);
    }
    bt_destroy_all(cfgs, 64);
    for (int mode = 2; mode <= 3; mode++) {
        bdesc h = bt_make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        bt_set_desc(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g);
        CHECK_STATUS(cudnnBackendSetAttribute(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode),
                     CUDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(cudnnBackendFinalize(h), CUDNN_STATUS_BAD_PARAM);
        cudnnBackendDestroyDescriptor(h);
    }
    cudnnBackendDestroyDescriptor(g);
    pt_conv_free(&c);
}

/* ---- an output over an input of the chain -------------------------------------------------------- */

/* conv -> C*, C* * s -> y with s passed in y's own buffer (an elementwise op in place, which
   cuDNN computes from its separate intermediate): every engine gives conv * s, those whose plan
   writes the convolution straight into y through a temporary for this pack (separate_in_place
   in engine_exec.c). No caller was seen doing this; it guards the in-place plans. */
TEST(compat_backend_output_over_chain_input)
{
    struct ref_conv rc = {2, 2, 4, 6, 1, {5, 5}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    struct bt_gt x, w, sc, y, cv;
    bt_gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, false, -1, 1);
    bt_gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NHWC, false, -1, 1);
    bt_gt_init(&sc, 's', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0.5, 1.5);
    bt_gt_init(&y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0, 0);
    bt_gt_init(&cv, 'C', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bdesc cd = pt_conv_desc(CUDNN_DATA_FLOAT, 1);
    struct ref_pw mul = ref_pw_mode(CUDNN_POINTWISE_MUL);
    bdesc ops[2] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, cv.d, cd),
                    bt_pw_op(&mul, cv.d, sc.d, y.d)};
    bdesc g = bt_graph(ops, 2);
    double *want = malloc(sizeof(double) * (size_t)y.v.count);
    ref_conv_fwd(&rc, x.val, w.val, want);
    for (int64_t i = 0; i < y.v.count; i++) want[i] *= sc.val[i];
    int64_t uids[4] = {'x', 'w', 's', 'y'};
    void *ptrs[4] = {x.buf, w.buf, y.buf, y.buf};
    const int64_t n = bt_engine_count(g);
    int ran = 0;
    for (int64_t e = 0; e < n; e++) {
        int64_t ws = -1;
        bdesc plan = bt_plan_of_engine(g, e, &ws);
        if (plan == NULL) continue;
        tview_store(&y.v, y.buf, sc.val);
        char what[64];
        snprintf(what, sizeof what, "s in y's buffer, engine %lld", (long long)e);
        if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 4)))
            bt_check_tol(&y.v, y.buf, want, bt_graph_tol(CUDNN_DATA_FLOAT), what), ran++;
        cudnnBackendDestroyDescriptor(plan);
    }
    CHECK(ran >= 1);
    free(want);
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(cd);
    struct bt_gt *all[] = {&x, &w, &sc, &y, &cv};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);
}

/* ---- hidet (src/hidet/runtime/cuda/cudnn.cpp hidet_cudnn_conv2d, tests/cuda/test_cudnn.py) ------ */

/* hidet calls the backend API itself, without the frontend and without heuristics: packed NCHW
   x, w and y of one type (UIDs 'x', 'w', 'y', BYTE_ALIGNMENT 8), a CONVOLUTION descriptor whose
   COMP_TYPE is the data's own type (HALF for half, DOUBLE for double), pre and post paddings
   alike per dim, ALPHA 1 and BETA 0 of the compute type's attribute type (FLOAT for half and
   float, **DOUBLE for double**), then **engine 0 by its global index** straight into a
   configuration and a plan, the workspace read with a NULL count, the variant pack given it.
   test_cudnn.py's second case: batch 2, 3 channels 32 x 32, 12 filters 7 x 7, padding {1, 2},
   stride {2, 3}, dilation {2, 3}; half, float and double. Against tests/ref/conv.c. */
TEST(compat_backend_hidet_engine_zero_own_compute_type)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE};
    const int64_t pad[2] = {1, 2}, stride[2] = {2, 3}, dil[2] = {2, 3};
    struct ref_conv rc = {2, 2, 3, 12, 1, {32, 32}, {7, 7}, {0}, {1, 2}, {2, 3}, {2, 3}, false};
    if (!CHECK(ref_conv_out_dims(&rc))) return;
    const int64_t uids[3] = {'x', 'w', 'y'};
    for (size_t k = 0; k < TLEN(types); k++) {
        const cudnnDataType_t t = types[k];
        const bool dbl = t == CUDNN_DATA_DOUBLE;
        struct tview v[3];
        tconv_views(&rc, t, TV_NCHW, TV_NCHW, &v[0], &v[1], &v[2]);
        double *x = tview_random(v[0].count, -1, 1), *w = tview_random(v[1].count, -1, 1);
        double *want = malloc(sizeof(double) * (size_t)v[2].count);
        void *ptrs[3] = {tview_upload(&v[0], x), tview_upload(&v[1], w), tview_upload(&v[2], NULL)};
        ref_conv_fwd(&rc, x, w, want);
        bdesc td[3];
        for (int i = 0; i < 3; i++) td[i] = bt_tensor_aligned(uids[i], &v[i], NULL, 8);
        bdesc cd = bt_conv_desc_2d(t, pad, stride, dil);
        bdesc op = bt_conv_fwd_op_typed(td, cd, t);
        bdesc g = bt_graph(&op, 1);
        int64_t ws = -1;
        bdesc plan = bt_plan_of_engine(g, 0, &ws);
        if (CHECK(plan != NULL)) {
            if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 3)))
                bt_check_tol(&v[2], ptrs[2], want, dbl ? 1e-10 : bt_graph_tol(t),
                             dbl ? "double, DOUBLE alpha and beta" : t == CUDNN_DATA_HALF ? "half, HALF compute" : "float");
            cudnnBackendDestroyDescriptor(plan);
        }
        bt_destroy_all((bdesc[]){g, op, cd, td[0], td[1], td[2]}, 6);
        for (int i = 0; i < 3; i++) tview_free(&v[i], ptrs[i]), tview_destroy(&v[i]);
        free(x), free(w), free(want);
    }
}
