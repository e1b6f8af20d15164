/* backend_frontend.c: the call sequences of cudnn-frontend v0.4.1 (the header-only C++ wrapper
   frameworks reach the backend API through) replayed in C against the library, as its samples
   make them (docs/compatibility.md lists each pattern): the builders' Set order and attribute
   types, the engine count read with a NULL element count, heuristics counted then fetched into
   configurations the caller created (and used after the heuristics object is gone), an engine's
   25 KNOB_INFO targets, an engine configuration's 25 KNOB_CHOICEs, the plan's tag and note
   queries through ENGINECFG_ENGINE, the workspace size read with a NULL element count, the
   fallback scan over global indices beyond the graph's count (failures skipped), the numerical
   note filters, cudnnFindPlan's warm-up run of every plan with a pack whose workspace is NULL,
   and variant packs set pointers first. Every call the frontend checks must succeed; the results
   are compared with tests/ref as the samples do. Shapes are the samples' where the host runs them
   in a few milliseconds and smaller otherwise. */
#include "backend_util.h"
#include "conv_harness.h"
#include "ref/conv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KNOBS CUDNN_KNOB_TYPE_COUNTS

/* ---- the frontend's builders -------------------------------------------------------------------- */

struct fe_knob {
    int64_t type, min, max, stride;
};

/* EngineHeuristics_v8 and getEngineConfig: count, create that many ENGINECFGs, fetch. The
   heuristics object is destroyed before the configurations are used. */
static int fe_heuristics(bdesc g, cudnnBackendHeurMode_t mode, bdesc *cfgs, int cap)
{
    bdesc h = bt_make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    bt_set_desc(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g);
    bt_set(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    CHECK_OK(cudnnBackendFinalize(h));
    int64_t n = 0, got = 0;
    CHECK_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    if (n > cap) n = cap;
    for (int64_t i = 0; i < n; i++) cfgs[i] = bt_make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, cfgs));
    CHECK(got == n);
    cudnnBackendDestroyDescriptor(h);
    return (int)n;
}

/* Engine_v8: GLOBAL_INDEX, then (on every move of the object) its knobs through 25 KNOB_INFO
   targets. NULL when the engine does not finalize (the fallback scan's try/catch). */
static bdesc fe_engine(bdesc g, int64_t index, int *nknobs, struct fe_knob *knobs)
{
    bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    bt_set_desc(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, g);
    bt_set_i64(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, index);
    cudnnStatus_t st = cudnnBackendFinalize(e);
    CHECK(st == CUDNN_STATUS_SUCCESS || st == CUDNN_STATUS_NOT_SUPPORTED);
    if (st != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(e);
        return NULL;
    }
    bdesc info[KNOBS];
    for (int i = 0; i < KNOBS; i++) info[i] = bt_make(CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR);
    int64_t k = -1;
    CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_KNOB_INFO, CUDNN_TYPE_BACKEND_DESCRIPTOR, KNOBS, &k, info));
    CHECK(k >= 0 && k <= KNOBS);
    *nknobs = (int)k;
    for (int64_t i = 0; i < k; i++) {
        cudnnBackendKnobType_t type;
        int64_t cnt;
        CHECK_OK(cudnnBackendGetAttribute(info[i], CUDNN_ATTR_KNOB_INFO_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &cnt, &type));
        knobs[i].type = type;
        CHECK_OK(cudnnBackendGetAttribute(info[i], CUDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE, CUDNN_TYPE_INT64, 1, &cnt, &knobs[i].max));
        CHECK_OK(cudnnBackendGetAttribute(info[i], CUDNN_ATTR_KNOB_INFO_MINIMUM_VALUE, CUDNN_TYPE_INT64, 1, &cnt, &knobs[i].min));
        CHECK_OK(cudnnBackendGetAttribute(info[i], CUDNN_ATTR_KNOB_INFO_STRIDE, CUDNN_TYPE_INT64, 1, &cnt, &knobs[i].stride));
    }
    bt_destroy_all(info, KNOBS);
    return e;
}

/* EngineConfig_v8 over a built engine: 25 KNOB_CHOICEs made up front, one set per knob the
   engine reports (value: the knob's minimum + first_plus for the first knob, 0 for the others, as
   the samples choose), then ENGINE and KNOB_CHOICES. */
static bdesc fe_engine_config(bdesc g, int64_t index, int64_t first_plus)
{
    struct fe_knob knobs[KNOBS];
    int nk = 0;
    bdesc e = fe_engine(g, index, &nk, knobs);
    if (e == NULL) return NULL;
    bdesc choice[KNOBS];
    for (int i = 0; i < KNOBS; i++) choice[i] = bt_make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    for (int i = 0; i < nk; i++) {
        cudnnBackendKnobType_t type = (cudnnBackendKnobType_t)knobs[i].type;
        bt_set(choice[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
        bt_set_i64(choice[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, i == 0 ? knobs[i].min + first_plus : 0);
        CHECK_OK(cudnnBackendFinalize(choice[i]));
    }
    bdesc cfg = bt_make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    bt_set_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, e);
    if (nk > 0) bt_set(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, nk, choice);
    cudnnStatus_t st = cudnnBackendFinalize(cfg);
    CHECK_OK(st);
    bt_destroy_all(choice, KNOBS);
    cudnnBackendDestroyDescriptor(e);
    if (st != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(cfg);
        return NULL;
    }
    return cfg;
}

/* The config's numerical notes through a fresh ENGINE (the hasNumericalNote filters); false when
   any note of `avoid` (bits) is present. */
static bool fe_notes_allow(bdesc cfg, unsigned avoid)
{
    bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t n = 0;
    CHECK_OK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e));
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                      CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes));
    cudnnBackendDestroyDescriptor(e);
    bool ok = true;
    for (int64_t i = 0; i < n; i++) ok = ok && !(avoid & (1u << notes[i]));
    return ok;
}

/* ExecutionPlan_v8: ENGINE_CONFIG, HANDLE, finalize; then the tag (the config's engine through
   ENGINECFG_ENGINE, its GLOBAL_INDEX, the knob choices through 25 targets with NULL counts), the
   notes (errors throw), and the workspace size read with a NULL count. NULL when the plan does
   not finalize (NOT_SUPPORTED, the only failure a candidate may have). *index: the engine's. */
static bdesc fe_plan(bdesc cfg, int64_t *ws, int64_t *index)
{
    bdesc plan = bt_make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    cudnnHandle_t h = test_handle();
    bt_set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
    bt_set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    cudnnStatus_t st = cudnnBackendFinalize(plan);
    CHECK(st == CUDNN_STATUS_SUCCESS || st == CUDNN_STATUS_NOT_SUPPORTED);
    if (st != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(plan);
        return NULL;
    }
    bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR), choice[KNOBS];
    int64_t n = 0, k = -1;
    CHECK_OK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e));
    for (int i = 0; i < KNOBS; i++) choice[i] = bt_make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, index));
    CHECK_OK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, KNOBS, &k,
                                      choice));
    for (int64_t i = 0; i < k; i++) {
        cudnnBackendKnobType_t type;
        int64_t value;
        CHECK_OK(cudnnBackendGetAttribute(choice[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, NULL, &type));
        CHECK_OK(cudnnBackendGetAttribute(choice[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, NULL, &value));
    }
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    cudnnBackendBehaviorNote_t behavior[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                      CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes));
    CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                      CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, behavior));
    CHECK(n == 0); /* no engine compiles at run time */
    bt_destroy_all(choice, KNOBS);
    cudnnBackendDestroyDescriptor(e);
    *ws = -1;
    CHECK_OK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, NULL, ws));
    CHECK(*ws >= 0);
    return plan;
}

/* VariantPackBuilder_v8 (pointers, UIDs, workspace) and cudnnBackendExecute. */
static cudnnStatus_t fe_execute(bdesc plan, const int64_t *uids, void *const *ptrs, int n, void *ws)
{
    bdesc vp = bt_make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    bt_set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs);
    bt_set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    bt_set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    CHECK_OK(cudnnBackendFinalize(vp));
    cudnnStatus_t st = cudnnBackendExecute(test_handle(), plan, vp);
    cudnnBackendDestroyDescriptor(vp);
    return st;
}

/* ---- the samples' convolutions ------------------------------------------------------------------ */

/* One convolution of a direction (1x1 filters, float NCHW, CONVOLUTION mode as conv_sample.cpp
   sets it), its tensors and the reference result of the written one. */
struct fe_conv {
    struct ref_conv rc;
    struct bt_gt x, w, y;
    struct bt_gt *dst;
    bdesc cd, op, g;
    double *want;
    int64_t uids[3];
    void *ptrs[3];
};

static void fe_conv_init(struct fe_conv *f, int dir, int n)
{
    static const cudnnBackendDescriptorType_t kinds[3] = {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                                          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                                          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
    f->rc = (struct ref_conv){2, n, 32, 32, 1, {4, 4}, {1, 1}, {0}, {0, 0}, {1, 1}, {1, 1}, true};
    ref_conv_out_dims(&f->rc);
    const int xd[4] = {n, 32, 4, 4}, wd[4] = {32, 32, 1, 1}, yd[4] = {n, 32, 4, 4};
    bt_gt_init(&f->x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, false, dir == 1 ? 0 : -1, dir == 1 ? 0 : 1);
    bt_gt_init(&f->w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NCHW, false, dir == 2 ? 0 : -1, dir == 2 ? 0 : 1);
    bt_gt_init(&f->y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, false, dir == 0 ? 0 : -1, dir == 0 ? 0 : 1);
    f->dst = dir == 0 ? &f->y : dir == 1 ? &f->x : &f->w;
    const int64_t pad[2] = {0, 0}, stride[2] = {1, 1};
    f->cd = bt_conv_desc(2, pad, stride, CUDNN_CONVOLUTION);
    f->op = bt_conv_op(kinds[dir], f->x.d, f->w.d, f->y.d, f->cd);
    f->g = bt_graph(&f->op, 1);
    f->want = malloc(sizeof(double) * (size_t)f->dst->v.count);
    if (dir == 0) ref_conv_fwd(&f->rc, f->x.val, f->w.val, f->want);
    else if (dir == 1) ref_conv_bwd_data(&f->rc, f->y.val, f->w.val, f->want);
    else ref_conv_bwd_filter(&f->rc, f->x.val, f->y.val, f->want);
    struct bt_gt *io[3] = {&f->x, &f->w, &f->y};
    for (int i = 0; i < 3; i++) f->uids[i] = io[i]->uid, f->ptrs[i] = io[i]->buf;
}

static void fe_conv_free(struct fe_conv *f)
{
    free(f->want);
    cudnnBackendDestroyDescriptor(f->op);
    cudnnBackendDestroyDescriptor(f->g);
    cudnnBackendDestroyDescriptor(f->cd);
    bt_gt_free(&f->x), bt_gt_free(&f->w), bt_gt_free(&f->y);
}

/* Executes a plan on a poisoned output with a workspace of ws bytes (NULL when none is passed)
   and checks the result as the samples do (2e-2). */
static void fe_run_check(struct fe_conv *f, bdesc plan, int64_t ws, bool pass_ws, const char *what)
{
    void *work = pass_ws && ws > 0 ? tbuf_alloc((size_t)ws) : NULL;
    tbuf_poison(f->dst->buf, tview_bytes(&f->dst->v));
    if (CHECK_OK(fe_execute(plan, f->uids, f->ptrs, 3, work))) bt_check_tol(&f->dst->v, f->dst->buf, f->want, 2e-2, what);
    if (work) tbuf_free(work);
}

/* "Use global(index) for execution" (wgrad, engine 0, first knob min+1, NULL workspace) and the
   errata sample's engine 20 of the same graph (its plan must build where the engine exists). */
TEST(backend_frontend_global_index)
{
    struct fe_conv f;
    fe_conv_init(&f, 2, 1);
    bdesc cfg = fe_engine_config(f.g, 0, 1);
    int64_t ws = -1, index = -1;
    bdesc plan = cfg ? fe_plan(cfg, &ws, &index) : NULL;
    if (CHECK(plan != NULL)) {
        CHECK(index == 0 && ws == 0);
        fe_run_check(&f, plan, ws, false, "wgrad engine 0, NULL workspace");
        cudnnBackendDestroyDescriptor(plan);
    }
    cudnnBackendDestroyDescriptor(cfg);
    CHECK(bt_engine_count(f.g) > 20);
    /* index 20 is a CUDA entry (cuda:wgrad_im2col_gemm_cublas_tc), absent from the host backend's
       engines; the errata sample needs its plan to build on the GPU */
    cfg = fe_engine_config(f.g, 20, 1);
    if (strcmp(test_backend, "cuda") == 0) CHECK(cfg != NULL);
    if (cfg) {
        plan = fe_plan(cfg, &ws, &index);
        if (CHECK(plan != NULL)) CHECK(index == 20), cudnnBackendDestroyDescriptor(plan);
        cudnnBackendDestroyDescriptor(cfg);
    }
    fe_conv_free(&f);
}

/* "Use heuristics for execution" and "Use DNN based heuristics": the first configuration whose
   plan builds runs (workspace allocated); every configuration builds. */
TEST(backend_frontend_heuristics)
{
    for (int mode = 0; mode < 2; mode++) {
        struct fe_conv f;
        fe_conv_init(&f, 0, 8);
        bdesc cfgs[64];
        int n = fe_heuristics(f.g, mode ? CUDNN_HEUR_MODE_B : CUDNN_HEUR_MODE_INSTANT, cfgs, 64);
        CHECK(n >= 1);
        bool ran = false;
        for (int i = 0; i < n; i++) {
            int64_t ws, index;
            bdesc plan = fe_plan(cfgs[i], &ws, &index);
            if (!CHECK(plan != NULL)) continue;
            if (!ran) fe_run_check(&f, plan, ws, true, mode ? "heuristics B" : "heuristics INSTANT");
            ran = true;
            cudnnBackendDestroyDescriptor(plan);
        }
        bt_destroy_all(cfgs, n);
        fe_conv_free(&f);
    }
}

/* The fallback list: global indices 0 .. max - 1 built inside try/catch (the frontend's fallback
   lists run past a graph's count), configurations without an avoided note kept. */
static int fe_fallback(bdesc g, int max, unsigned avoid, bdesc *out, int cap)
{
    int n = 0;
    for (int i = 0; i < max && n < cap; i++) {
        bdesc cfg = fe_engine_config(g, i, 0);
        if (cfg == NULL) continue;
        if (fe_notes_allow(cfg, avoid)) out[n++] = cfg;
        else cudnnBackendDestroyDescriptor(cfg);
    }
    return n;
}

#define AVOID_DGRAD ((1u << CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) | (1u << CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS))

/* "Use fallback for execution" (dgrad): INSTANT's configurations without the NONDETERMINISTIC or
   DOWN_CONVERT_INPUTS notes, then the 8.2 fallback list 0..60 without NONDETERMINISTIC; the plan
   of the first is built without a try and run with a NULL workspace. */
TEST(backend_frontend_fallback)
{
    struct fe_conv f;
    fe_conv_init(&f, 1, 1);
    bdesc cfgs[64], kept[160];
    int n = fe_heuristics(f.g, CUDNN_HEUR_MODE_INSTANT, cfgs, 64), nk = 0;
    for (int i = 0; i < n; i++)
        if (fe_notes_allow(cfgs[i], AVOID_DGRAD)) kept[nk++] = cfgs[i];
        else cudnnBackendDestroyDescriptor(cfgs[i]);
    nk += fe_fallback(f.g, 61, 1u << CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC, kept + nk, 160 - nk);
    if (CHECK(nk >= 1)) {
        int64_t ws, index;
        bdesc plan = fe_plan(kept[0], &ws, &index);
        if (CHECK(plan != NULL) && CHECK(ws == 0)) fe_run_check(&f, plan, ws, false, "dgrad, first kept config");
        if (plan) cudnnBackendDestroyDescriptor(plan);
    }
    bt_destroy_all(kept, nk);
    fe_conv_free(&f);
}

/* cudnnFindPlan / cudnnGetPlan: INSTANT's configurations and the forward fallback list 0..49
   without NONDETERMINISTIC, every plan built (failures skipped), a predicate on the workspace,
   then cudnnFindPlan's warm-up: each plan run once with a pack that has no workspace (a plan that
   needs one must fail with BAD_PARAM, not fault); every plan that ran is checked. */
TEST(backend_frontend_find_plan)
{
    struct fe_conv f;
    fe_conv_init(&f, 0, 8);
    bdesc cfgs[128];
    int n = fe_heuristics(f.g, CUDNN_HEUR_MODE_INSTANT, cfgs, 64);
    n += fe_fallback(f.g, 50, 1u << CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC, cfgs + n, 128 - n);
    int built = 0, ran = 0;
    for (int i = 0; i < n; i++) {
        int64_t ws, index;
        bdesc plan = fe_plan(cfgs[i], &ws, &index);
        if (plan == NULL) continue;
        built++;
        tbuf_poison(f.dst->buf, tview_bytes(&f.dst->v));
        cudnnStatus_t st = fe_execute(plan, f.uids, f.ptrs, 3, NULL);
        if (ws > 0) {
            CHECK_STATUS(st, CUDNN_STATUS_BAD_PARAM);
        } else if (CHECK_OK(st)) {
            char what[64];
            snprintf(what, sizeof what, "FindPlan, engine %lld", (long long)index);
            bt_check_tol(&f.dst->v, f.dst->buf, f.want, 2e-2, what);
            ran++;
        }
        cudnnBackendDestroyDescriptor(plan);
    }
    CHECK(built >= 1 && ran >= 1);
    bt_destroy_all(cfgs, n);
    fe_conv_free(&f);
}

/* ---- the fusion samples --------------------------------------------------------------------------- */

/* A fusion graph built with engine 0 (first knob min+1, or every knob 0), its plan's workspace
   allocated; returns the execution status. */
static cudnnStatus_t fe_run_engine0(bdesc g, int64_t first_plus, const int64_t *uids, void *const *ptrs, int n)
{
    bdesc cfg = fe_engine_config(g, 0, first_plus);
    int64_t ws = -1, index = -1;
    bdesc plan = cfg ? fe_plan(cfg, &ws, &index) : NULL;
    cudnnStatus_t st = CUDNN_STATUS_NOT_SUPPORTED;
    if (CHECK(plan != NULL)) {
        void *work = ws > 0 ? tbuf_alloc((size_t)ws) : NULL;
        st = fe_execute(plan, uids, ptrs, n, work);
        if (work) tbuf_free(work);
        cudnnBackendDestroyDescriptor(plan);
    }
    cudnnBackendDestroyDescriptor(cfg);
    return st;
}

/* ConvScaleBiasAddAct (the sample's shapes at 2 images: half NHWC, 9x9 filter, pad 3, stride 7,
   every knob 0), MatmulBiasAct (half, GELU) and ConvColReduction (half conv, float column sums,
   4 images): engine 0 builds and runs, and the results match the references. */
TEST(backend_frontend_fusion_samples)
{
    /* ConvScaleBiasAddAct */
    struct ref_conv rc = {2, 2, 24, 32, 1, {31, 31}, {9, 9}, {0}, {3, 3}, {7, 7}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    const int cd1[4] = {1, rc.k, 1, 1};
    struct bt_gt x, w, s, b, a, c1, c2, c3, c4, y;
    bt_gt_init(&x, 101, CUDNN_DATA_HALF, 4, xd, TV_NHWC, false, -1, 1);
    bt_gt_init(&w, 102, CUDNN_DATA_HALF, 4, wd, TV_NHWC, false, -0.2, 0.2);
    bt_gt_init(&s, 103, CUDNN_DATA_HALF, 4, cd1, TV_NHWC, false, 0.5, 1.5);
    bt_gt_init(&b, 104, CUDNN_DATA_HALF, 4, cd1, TV_NHWC, false, -1, 1);
    bt_gt_init(&a, 105, CUDNN_DATA_HALF, 4, yd, TV_NHWC, false, -1, 1);
    bt_gt_init(&c1, 201, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&c2, 202, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&c3, 203, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&c4, 204, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&y, 301, CUDNN_DATA_HALF, 4, yd, TV_NHWC, false, 0, 0);
    const int64_t pad[2] = {3, 3}, stride[2] = {7, 7};
    bdesc conv = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw mul = ref_pw_mode(CUDNN_POINTWISE_MUL), add = ref_pw_mode(CUDNN_POINTWISE_ADD),
                  relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD);
    bdesc ops[5] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, c1.d, conv),
                    bt_pw_op(&mul, c1.d, s.d, c2.d), bt_pw_op(&add, c2.d, b.d, c3.d), bt_pw_op(&add, c3.d, a.d, c4.d),
                    bt_pw_op(&relu, c4.d, NULL, y.d)};
    bdesc g = bt_graph(ops, 5);
    int64_t uids[6] = {101, 102, 103, 104, 105, 301};
    void *ptrs[6] = {x.buf, w.buf, s.buf, b.buf, a.buf, y.buf};
    if (CHECK_OK(fe_run_engine0(g, 0, uids, ptrs, 6))) {
        double *want = malloc(sizeof(double) * (size_t)y.v.count);
        ref_conv_fwd(&rc, x.val, w.val, want);
        const int64_t pq = (int64_t)rc.out[0] * rc.out[1];
        for (int64_t i = 0; i < y.v.count; i++) {
            const int64_t k = i / pq % 32;
            want[i] = fmax(0, want[i] * s.val[k] + b.val[k] + a.val[i]);
        }
        bt_check_tol(&y.v, y.buf, want, 2e-2, "ConvScaleBiasAddAct");
        free(want);
    }
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(ops, 5);
    cudnnBackendDestroyDescriptor(conv);
    struct bt_gt *all[] = {&x, &w, &s, &b, &a, &c1, &c2, &c3, &c4, &y};
    for (size_t i = 0; i < TLEN(all); i++) bt_gt_free(all[i]);

    /* MatmulBiasAct: A 1x64x32, B 1x32x64, C 1x64x64 (virtual, float), z 1x1x64, GELU */
    const int ad[3] = {1, 64, 32}, bd[3] = {1, 32, 64}, mcd[3] = {1, 64, 64}, zd[3] = {1, 1, 64};
    struct bt_gt ma, mb, mc, mz, mt, mo;
    bt_gt_init(&ma, 'a', CUDNN_DATA_HALF, 3, ad, TV_NCHW, false, -1, 1);
    bt_gt_init(&mb, 'b', CUDNN_DATA_HALF, 3, bd, TV_NCHW, false, -1, 1);
    bt_gt_init(&mc, 'c', CUDNN_DATA_FLOAT, 3, mcd, TV_NCHW, true, 0, 0);
    bt_gt_init(&mz, 'z', CUDNN_DATA_HALF, 3, zd, TV_NCHW, false, -1, 1);
    bt_gt_init(&mt, 't', CUDNN_DATA_FLOAT, 3, mcd, TV_NCHW, true, 0, 0);
    bt_gt_init(&mo, 'o', CUDNN_DATA_HALF, 3, mcd, TV_NCHW, false, 0, 0);
    bdesc md = bt_make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    bt_set(md, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    CHECK_OK(cudnnBackendFinalize(md));
    bdesc mm = bt_make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    bt_set_desc(mm, CUDNN_ATTR_OPERATION_MATMUL_ADESC, ma.d);
    bt_set_desc(mm, CUDNN_ATTR_OPERATION_MATMUL_BDESC, mb.d);
    bt_set_desc(mm, CUDNN_ATTR_OPERATION_MATMUL_CDESC, mc.d);
    bt_set_desc(mm, CUDNN_ATTR_OPERATION_MATMUL_DESC, md);
    CHECK_OK(cudnnBackendFinalize(mm));
    struct ref_pw gelu = ref_pw_mode(CUDNN_POINTWISE_GELU_FWD);
    bdesc mops[3] = {mm, bt_pw_op(&add, mc.d, mz.d, mt.d), bt_pw_op(&gelu, mt.d, NULL, mo.d)};
    g = bt_graph(mops, 3);
    int64_t muids[4] = {'a', 'b', 'z', 'o'};
    void *mptrs[4] = {ma.buf, mb.buf, mz.buf, mo.buf};
    if (CHECK_OK(fe_run_engine0(g, 0, muids, mptrs, 4))) {
        double want[64 * 64];
        for (int i = 0; i < 64; i++)
            for (int j = 0; j < 64; j++) {
                double acc = 0;
                for (int k = 0; k < 32; k++) acc += ma.val[i * 32 + k] * mb.val[k * 64 + j];
                want[i * 64 + j] = ref_pw(&gelu, acc + mz.val[j], 0);
            }
        bt_check_tol(&mo.v, mo.buf, want, 2e-2, "MatmulBiasAct");
    }
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(mops, 3);
    cudnnBackendDestroyDescriptor(md);
    struct bt_gt *mall[] = {&ma, &mb, &mc, &mz, &mt, &mo};
    for (size_t i = 0; i < TLEN(mall); i++) bt_gt_free(mall[i]);

    /* ConvColReduction: half conv 4x32x7x7 * 256x32x1x1 into a virtual y, ADD over N, H, W */
    struct ref_conv rr = {2, 4, 32, 256, 1, {7, 7}, {1, 1}, {0}, {0, 0}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rr);
    const int rxd[4] = {4, 32, 7, 7}, rwd[4] = {256, 32, 1, 1}, ryd[4] = {4, 256, 7, 7}, rd[4] = {1, 256, 1, 1};
    struct bt_gt rx, rw, ry, rs;
    bt_gt_init(&rx, 'x', CUDNN_DATA_HALF, 4, rxd, TV_NHWC, false, -1, 1);
    bt_gt_init(&rw, 'w', CUDNN_DATA_HALF, 4, rwd, TV_NHWC, false, -1, 1);
    bt_gt_init(&ry, 'y', CUDNN_DATA_HALF, 4, ryd, TV_NHWC, true, 0, 0);
    bt_gt_init(&rs, 'r', CUDNN_DATA_FLOAT, 4, rd, TV_NHWC, false, 0, 0);
    const int64_t zero[2] = {0, 0}, one[2] = {1, 1};
    conv = bt_conv_desc(2, zero, one, CUDNN_CROSS_CORRELATION);
    bdesc red = bt_make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    cudnnReduceTensorOp_t rop = CUDNN_REDUCE_TENSOR_ADD;
    bt_set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    bt_set(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &rop);
    CHECK_OK(cudnnBackendFinalize(red));
    bdesc rop_d = bt_make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    bt_set_desc(rop_d, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red);
    bt_set_desc(rop_d, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, ry.d);
    bt_set_desc(rop_d, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, rs.d);
    CHECK_OK(cudnnBackendFinalize(rop_d));
    bdesc rops[2] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, rx.d, rw.d, ry.d, conv), rop_d};
    g = bt_graph(rops, 2);
    int64_t ruids[3] = {'x', 'w', 'r'};
    void *rptrs[3] = {rx.buf, rw.buf, rs.buf};
    if (CHECK_OK(fe_run_engine0(g, 0, ruids, rptrs, 3))) {
        double *full = malloc(sizeof(double) * (size_t)ry.v.count), want[256] = {0};
        ref_conv_fwd(&rr, rx.val, rw.val, full);
        /* y is virtual and stored in its producer's type, half (engine_plan.c) */
        for (int64_t i = 0; i < ry.v.count; i++) want[i / 49 % 256] += ref_quantize(CUDNN_DATA_HALF, full[i]);
        bt_check_tol(&rs.v, rs.buf, want, 2e-2, "ConvColReduction");
        free(full);
    }
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(rops, 2);
    cudnnBackendDestroyDescriptor(red);
    cudnnBackendDestroyDescriptor(conv);
    bt_gt_free(&rx), bt_gt_free(&rw), bt_gt_free(&ry), bt_gt_free(&rs);
}

/* ---- the int8 samples ------------------------------------------------------------------------------- */

/* An INT8 tensor vectorized along dim 1 as the samples build it (VECTOR_COUNT, VECTORIZED_DIMENSION
   1; dims and strides counted in vectors) over a NCHW_VECT_C tview. */
static bdesc fe_int8_tensor(int64_t uid, const struct tview *v)
{
    bdesc t = bt_make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t dims[8], strides[8], vect = v->vect, vdim = 1;
    cudnnDataType_t dt = CUDNN_DATA_INT8;
    for (int d = 0; d < v->rank; d++) dims[d] = d == 1 ? v->dims[d] / vect : v->dims[d], strides[d] = v->strides[d] / vect;
    bt_set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    bt_set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, v->rank, dims);
    bt_set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, v->rank, strides);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_VECTOR_COUNT, vect);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION, vdim);
    CHECK_OK(cudnnBackendFinalize(t));
    return t;
}

/* "DP4A execution with cudnnFindPlan" and "IMMA execution with manual autotuning" at small sizes:
   INT8x4 (and INT8x32) x, filter and y, INT32 compute; INSTANT's configurations and the forward
   fallback list, every plan warmed up with no workspace in the pack; the plans that ran (one at
   least) give the saturated reference. The IMMA sample's filter is in the plain NCHW_VECT_C32
   layout here (8.2's backend API has no reorder attribute; the sample reorders it with the legacy
   cudnnReorderFilterAndBias and checks statuses only). */
static void int8_find_plan(int vect)
{
    const int c = vect == 4 ? 16 : 64, k = vect == 4 ? 16 : 32;
    struct ref_conv rc = {2, 1, c, k, 1, {6, 6}, {3, 3}, {0}, {0, 0}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    const int xd[4] = {1, c, 6, 6}, wd[4] = {k, c, 3, 3}, yd[4] = {1, k, 4, 4};
    const cudnnDataType_t vt = vect == 4 ? CUDNN_DATA_INT8x4 : CUDNN_DATA_INT8x32;
    struct tview xv, wv, yv;
    tview_init(&xv, vt, 4, xd, TV_NCHW_VECT);
    tview_init(&wv, vt, 4, wd, TV_NCHW_VECT);
    tview_init(&yv, vt, 4, yd, TV_NCHW_VECT);
    double *x = tview_random(xv.count, -2, 2), *w = tview_random(wv.count, -2, 2), *want = malloc(sizeof(double) * yv.count);
    void *px = tview_upload(&xv, x), *pw = tview_upload(&wv, w), *py = tview_upload(&yv, NULL);
    ref_conv_fwd(&rc, x, w, want);
    for (int64_t i = 0; i < yv.count; i++) want[i] = fmin(127, fmax(-128, nearbyint(want[i])));
    bdesc t[3] = {fe_int8_tensor('x', &xv), fe_int8_tensor('w', &wv), fe_int8_tensor('y', &yv)};
    bdesc cd = bt_make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_INT32;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t nsp = 2, zero[2] = {0, 0}, one[2] = {1, 1};
    bt_set(cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    bt_set(cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    bt_set(cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp);
    bt_set(cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, zero);
    bt_set(cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, zero);
    bt_set(cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one);
    bt_set(cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one);
    CHECK_OK(cudnnBackendFinalize(cd));
    bdesc op = bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, t[0], t[1], t[2], cd);
    bdesc g = bt_graph(&op, 1);
    bdesc cfgs[128];
    int n = fe_heuristics(g, CUDNN_HEUR_MODE_INSTANT, cfgs, 64), ran = 0;
    n += fe_fallback(g, 50, 1u << CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC, cfgs + n, 128 - n);
    int64_t uids[3] = {'x', 'w', 'y'};
    void *ptrs[3] = {px, pw, py};
    for (int i = 0; i < n; i++) {
        int64_t ws, index;
        bdesc plan = fe_plan(cfgs[i], &ws, &index);
        if (plan == NULL) continue;
        tbuf_poison(py, tview_bytes(&yv));
        cudnnStatus_t st = fe_execute(plan, uids, ptrs, 3, NULL);
        if (ws > 0) {
            CHECK_STATUS(st, CUDNN_STATUS_BAD_PARAM);
        } else if (CHECK_OK(st)) {
            char what[64];
            snprintf(what, sizeof what, "%s, engine %lld", vect == 4 ? "DP4A" : "IMMA", (long long)index);
            bt_check_tol(&yv, py, want, 0, what);
            ran++;
        }
        cudnnBackendDestroyDescriptor(plan);
    }
    CHECK(ran >= 1);
    bt_destroy_all(cfgs, n);
    bt_destroy_all((bdesc[]){g, op, cd, t[0], t[1], t[2]}, 6);
    tview_free(&xv, px), tview_free(&wv, pw), tview_free(&yv, py);
    free(x), free(w), free(want);
    tview_destroy(&xv), tview_destroy(&wv), tview_destroy(&yv);
}

TEST(backend_frontend_dp4a_imma)
{
    int8_find_plan(4);
    int8_find_plan(32);
}

/* ConvDrelu: conv (half NHWC) into a virtual tensor, then RELU_BWD with it as dy and another tensor
   as x (the forward input of the ReLU), engine 0 with its first knob at min+1. */
TEST(backend_frontend_conv_drelu)
{
    struct ref_conv rc = {2, 2, 8, 16, 1, {9, 9}, {3, 3}, {0}, {1, 1}, {2, 2}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    int xd[5], wd[5], yd[5];
    tconv_dims(&rc, xd, wd, yd);
    struct bt_gt x, w, c, r, dx;
    bt_gt_init(&x, 101, CUDNN_DATA_HALF, 4, xd, TV_NHWC, false, -1, 1);
    bt_gt_init(&w, 102, CUDNN_DATA_HALF, 4, wd, TV_NHWC, false, -1, 1);
    bt_gt_init(&c, 1001, CUDNN_DATA_HALF, 4, yd, TV_NHWC, true, 0, 0);
    bt_gt_init(&r, 201, CUDNN_DATA_HALF, 4, yd, TV_NHWC, false, -1, 1);
    bt_gt_init(&dx, 301, CUDNN_DATA_HALF, 4, yd, TV_NHWC, false, 0, 0);
    const int64_t pad[2] = {1, 1}, stride[2] = {2, 2};
    bdesc cd = bt_conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw drelu = ref_pw_mode(CUDNN_POINTWISE_RELU_BWD);
    bdesc ops[2] = {bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, c.d, cd),
                    bt_pw_op(&drelu, r.d, c.d, dx.d)};
    bdesc g = bt_graph(ops, 2);
    int64_t uids[4] = {101, 102, 201, 301};
    void *ptrs[4] = {x.buf, w.buf, r.buf, dx.buf};
    if (CHECK_OK(fe_run_engine0(g, 1, uids, ptrs, 4))) {
        double *want = malloc(sizeof(double) * (size_t)dx.v.count);
        ref_conv_fwd(&rc, x.val, w.val, want);
        /* the virtual conv output is stored in half, its producer's type */
        for (int64_t i = 0; i < dx.v.count; i++) want[i] = ref_pw(&drelu, r.val[i], ref_quantize(CUDNN_DATA_HALF, want[i]));
        bt_check_tol(&dx.v, dx.buf, want, 2e-2, "ConvDrelu");
        free(want);
    }
    cudnnBackendDestroyDescriptor(g);
    bt_destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(cd);
    bt_gt_free(&x), bt_gt_free(&w), bt_gt_free(&c), bt_gt_free(&r), bt_gt_free(&dx);
}
