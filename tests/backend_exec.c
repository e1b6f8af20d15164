/* backend_exec.c: the backend API's engines, heuristics, plans and execution, through the public
   cudnnBackend* calls as cudnn-frontend makes them: every pointwise mode, matmul, reduction,
   statistics, the three convolution directions, and the fusion patterns of the frontend's
   samples in small sizes (ConvBiasAct, ConvScaleBiasAddAct, ConvBiasScaleAct, MatmulBiasAct,
   DgradDrelu, conv + reduction), each against the double references of tests/ref on the backend
   under test; bad variant packs fail with BAD_PARAM and write nothing. */
#include "cnn/conv.h"
#include "ref/conv.h"
#include "ref/pointwise.h"
#include "tensors.h"

#include <cudnn_backend.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef cudnnBackendDescriptor_t bdesc;

/* ---- building descriptors ------------------------------------------------------------------- */

static bdesc make(cudnnBackendDescriptorType_t kind)
{
    bdesc d = NULL;
    CHECK_OK(cudnnBackendCreateDescriptor(kind, &d));
    return d;
}

static void set(bdesc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t n, const void *v)
{
    CHECK_OK(cudnnBackendSetAttribute(d, name, type, n, v));
}

static void set_i64(bdesc d, cudnnBackendAttributeName_t name, int64_t v)
{
    set(d, name, CUDNN_TYPE_INT64, 1, &v);
}

static void set_desc(bdesc d, cudnnBackendAttributeName_t name, bdesc v)
{
    set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

static void set_f(bdesc d, cudnnBackendAttributeName_t name, float v)
{
    set(d, name, CUDNN_TYPE_FLOAT, 1, &v);
}

/* A TENSOR of a tview's dims and strides. */
static bdesc tensor(int64_t uid, const struct tview *v, bool virt)
{
    bdesc t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t dims[8], strides[8], align = 16;
    for (int d = 0; d < v->rank; d++) dims[d] = v->dims[d], strides[d] = v->strides[d];
    cudnnDataType_t dt = v->dtype;
    bool vb = virt;
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, v->rank, dims);
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, v->rank, strides);
    set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
    set_i64(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, align);
    if (virt) set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &vb);
    CHECK_OK(cudnnBackendFinalize(t));
    return t;
}

static bdesc conv_desc(int nsp, const int64_t *pad, const int64_t *stride, cudnnConvolutionMode_t mode)
{
    bdesc c = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    int64_t n = nsp, dil[3] = {1, 1, 1};
    set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &n);
    set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, nsp, pad);
    set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, nsp, pad);
    set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, nsp, dil);
    set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, nsp, stride);
    CHECK_OK(cudnnBackendFinalize(c));
    return c;
}

/* A convolution op of a direction; x, w, y named for the forward op. */
static bdesc conv_op(cudnnBackendDescriptorType_t kind, bdesc x, bdesc w, bdesc y, bdesc conv)
{
    bdesc op = make(kind);
    const bool fwd = kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
    const bool dgrad = kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
    set_desc(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX
                                                                        : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x);
    set_desc(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W
                                                                        : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w);
    set_desc(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY
                                                                        : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y);
    set_desc(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC
                 : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC
                         : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv);
    set_f(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA
                                                                         : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, 1.0f);
    set_f(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA
                                                                        : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, 0.0f);
    CHECK_OK(cudnnBackendFinalize(op));
    return op;
}

/* A pointwise op: y = mode(x[, b]); for *_BWD modes b is dy and y is dx. */
static bdesc pw_op(const struct ref_pw *p, bdesc x, bdesc b, bdesc y)
{
    bdesc pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnPointwiseMode_t mode = p->mode;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    cudnnNanPropagation_t nan = p->propagate_nan ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN;
    double up = isinf(p->upper_clip) ? DBL_MAX : p->upper_clip;
    set(pw, CUDNN_ATTR_POINTWISE_NAN_PROPAGATION, CUDNN_TYPE_NAN_PROPOGATION, 1, &nan);
    set(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_DOUBLE, 1, &p->lower_clip);
    set(pw, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, 1, &up);
    set(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &p->slope);
    set(pw, CUDNN_ATTR_POINTWISE_ELU_ALPHA, CUDNN_TYPE_DOUBLE, 1, &p->elu_alpha);
    set(pw, CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA, CUDNN_TYPE_DOUBLE, 1, &p->softplus_beta);
    set(pw, CUDNN_ATTR_POINTWISE_SWISH_BETA, CUDNN_TYPE_DOUBLE, 1, &p->swish_beta);
    CHECK_OK(cudnnBackendFinalize(pw));
    bdesc op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    const bool bwd = (int)mode >= 200;
    set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (bwd) {
        set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, b);
        set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, y);
    } else {
        set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
        if (ref_pw_binary(mode)) set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    }
    set_f(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, (float)p->alpha1);
    set_f(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, (float)p->alpha2);
    CHECK_OK(cudnnBackendFinalize(op));
    cudnnBackendDestroyDescriptor(pw);
    return op;
}

static bdesc graph(bdesc *ops, int n)
{
    bdesc g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnHandle_t h = test_handle();
    set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops);
    set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    CHECK_OK(cudnnBackendFinalize(g));
    return g;
}

static int64_t engine_count(bdesc g)
{
    int64_t n = 0;
    CHECK_OK(cudnnBackendGetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, NULL, &n));
    return n;
}

/* A plan of engine `index` (its workspace in *ws), or NULL when the engine does not run the
   graph (NOT_SUPPORTED at ENGINE or PLAN finalize, the only failure allowed). */
static bdesc plan_of_engine(bdesc g, int64_t index, int64_t *ws)
{
    bdesc e = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    set_desc(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, g);
    set_i64(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, index);
    cudnnStatus_t st = cudnnBackendFinalize(e);
    bdesc plan = NULL;
    if (st == CUDNN_STATUS_SUCCESS) {
        bdesc cfg = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        set_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, e);
        CHECK_OK(cudnnBackendFinalize(cfg));
        plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        cudnnHandle_t h = test_handle();
        set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
        set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
        st = cudnnBackendFinalize(plan);
        cudnnBackendDestroyDescriptor(cfg);
        if (st == CUDNN_STATUS_SUCCESS) {
            CHECK_OK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, NULL, ws));
        } else {
            cudnnBackendDestroyDescriptor(plan);
            plan = NULL;
        }
    }
    CHECK(st == CUDNN_STATUS_SUCCESS || st == CUDNN_STATUS_NOT_SUPPORTED);
    cudnnBackendDestroyDescriptor(e);
    return plan;
}

/* The heuristic's configurations (INSTANT): their engines' global indices, best first. */
static int heuristic_engines(bdesc g, int64_t *out, int cap)
{
    bdesc h = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;
    set_desc(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g);
    set(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    CHECK_OK(cudnnBackendFinalize(h));
    int64_t n = 0;
    CHECK_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    CHECK(n >= 1);
    if (n > cap) n = cap;
    bdesc cfgs[64];
    for (int i = 0; i < n; i++) cfgs[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t got = 0;
    CHECK_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, cfgs));
    for (int i = 0; i < n; i++) {
        bdesc e = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        int64_t cnt = 0;
        CHECK_OK(cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cnt, &e));
        out[i] = -1;
        CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &cnt, &out[i]));
        cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
        CHECK_OK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                          CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &cnt, notes));
        cudnnBackendDestroyDescriptor(e);
        cudnnBackendDestroyDescriptor(cfgs[i]);
    }
    cudnnBackendDestroyDescriptor(h);
    return (int)n;
}

/* A variant pack of n (uid, pointer) pairs and a workspace. */
static bdesc pack(const int64_t *uids, void *const *ptrs, int n, void *ws)
{
    bdesc vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs);
    set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    CHECK_OK(cudnnBackendFinalize(vp));
    return vp;
}

/* Runs a plan with the pack's pointers and a fresh workspace of its size. */
static cudnnStatus_t run(bdesc plan, int64_t ws, const int64_t *uids, void *const *ptrs, int n)
{
    void *work = ws > 0 ? tbuf_alloc((size_t)ws) : NULL;
    bdesc vp = pack(uids, ptrs, n, work);
    cudnnStatus_t st = cudnnBackendExecute(test_handle(), plan, vp);
    cudnnBackendDestroyDescriptor(vp);
    if (work) tbuf_free(work);
    return st;
}

static void destroy_all(bdesc *d, int n)
{
    for (int i = 0; i < n; i++) cudnnBackendDestroyDescriptor(d[i]);
}

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
            bdesc t[3] = {tensor('x', &xv, false), tensor('b', &bv, false), tensor('y', &yv, false)};
            bdesc op = pw_op(&p, t[0], t[1], t[2]), g = graph(&op, 1);
            int64_t ws = -1, idx[4];
            CHECK(engine_count(g) == 1);
            CHECK(heuristic_engines(g, idx, 4) == 1 && idx[0] == 0);
            bdesc plan = plan_of_engine(g, 0, &ws);
            if (CHECK(plan != NULL) && CHECK(ws == 0)) {
                int64_t uids[3] = {'x', 'b', 'y'};
                void *ptrs[3] = {px, pb, py};
                CHECK_OK(run(plan, ws, uids, ptrs, 3));
                char what[64];
                snprintf(what, sizeof what, "mode %d %s", (int)mode, layout ? "half NHWC" : "float NCHW");
                tview_check(&yv, py, want, what);
                cudnnBackendDestroyDescriptor(plan);
            }
            cudnnBackendDestroyDescriptor(op);
            cudnnBackendDestroyDescriptor(g);
            destroy_all(t, 3);
            tview_free(&xv, px), tview_free(&bv, pb), tview_free(&yv, py);
            free(x), free(b), free(want);
            tview_destroy(&xv), tview_destroy(&bv), tview_destroy(&yv);
        }
}

/* ---- convolution graphs ------------------------------------------------------------------------ */

/* Reads a tview back and compares with want: |got - want| <= tol * max(1, |want|). */
static bool check_tol(const struct tview *v, const void *buf, const double *want, double tol, const char *what)
{
    double *got = malloc(sizeof(double) * (size_t)v->count);
    tview_download(v, buf, got);
    bool ok = true;
    for (int64_t i = 0; i < v->count && ok; i++)
        if (!(fabs(got[i] - want[i]) <= tol * fmax(1.0, fabs(want[i])))) {
            FAIL("%s: element %lld is %.9g, want %.9g", what, (long long)i, got[i], want[i]);
            ok = false;
        }
    free(got);
    return ok;
}

/* The tolerance of a graph's results: float data may run on TF32 tensor cores on CUDA. */
static double graph_tol(cudnnDataType_t t)
{
    if (t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16) return 2e-2;
    return strcmp(test_backend, "cuda") == 0 ? 1e-2 : 1e-4;
}

/* One tensor of a test graph: its layout, values, buffer and descriptor. */
struct gt {
    struct tview v;
    double *val;
    void *buf;
    bdesc d;
    int64_t uid;
};

static void gt_init(struct gt *t, int64_t uid, cudnnDataType_t dt, int rank, const int *dims, int layout, bool virt,
                    double lo, double hi)
{
    memset(t, 0, sizeof *t);
    tview_init(&t->v, dt, rank, dims, layout);
    t->uid = uid;
    if (!virt) {
        t->val = lo < hi ? tview_random(t->v.count, lo, hi) : NULL;
        t->buf = tview_upload(&t->v, t->val);
    }
    t->d = tensor(uid, &t->v, virt);
}

static void gt_free(struct gt *t)
{
    if (t->buf) tview_free(&t->v, t->buf);
    free(t->val);
    cudnnBackendDestroyDescriptor(t->d);
    tview_destroy(&t->v);
}

/* Runs every engine of the graph that builds (at least engine 0 and the heuristic's first must),
   each on a fresh output, and compares out with want. */
static void run_all_engines(bdesc g, struct gt *const *io, int n, const struct gt *out, const double *want, double tol,
                            const char *what)
{
    int64_t count = engine_count(g), first = -1, ran = 0;
    CHECK(count >= 1);
    CHECK(heuristic_engines(g, &first, 1) == 1);
    int64_t uids[16];
    void *ptrs[16];
    for (int i = 0; i < n; i++) uids[i] = io[i]->uid, ptrs[i] = io[i]->buf;
    for (int64_t e = 0; e < count; e++) {
        int64_t ws = -1;
        bdesc plan = plan_of_engine(g, e, &ws);
        if (e == 0 || e == first) CHECK(plan != NULL);
        if (plan == NULL) continue;
        CHECK(ws >= 0);
        tbuf_poison(out->buf, tview_bytes(&out->v));
        cudnnStatus_t st = run(plan, ws, uids, ptrs, n);
        char label[96];
        snprintf(label, sizeof label, "%s, engine %lld", what, (long long)e);
        if (CHECK_OK(st)) check_tol(&out->v, out->buf, want, tol, label);
        cudnnBackendDestroyDescriptor(plan);
        ran++;
    }
    CHECK(ran >= 1);
}

/* conv -> add z (alpha2 0.5) -> add bias -> relu (the frontend's ConvBiasAct sample), float NCHW. */
TEST(backend_conv_bias_act)
{
    struct ref_conv rc = {2, 2, 8, 8, 1, {6, 6}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    const int xd[4] = {2, 8, 6, 6}, wd[4] = {8, 8, 3, 3}, yd[4] = {2, 8, rc.out[0], rc.out[1]}, bd[4] = {1, 8, 1, 1};
    struct gt x, w, z, b, c, a, s, y;
    gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, false, -1, 1);
    gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NCHW, false, -1, 1);
    gt_init(&z, 'z', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, false, -1, 1);
    gt_init(&b, 'b', CUDNN_DATA_FLOAT, 4, bd, TV_NCHW, false, -1, 1);
    gt_init(&c, 'C', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, true, 0, 0);
    gt_init(&a, 'A', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, true, 0, 0);
    gt_init(&s, 'B', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, true, 0, 0);
    gt_init(&y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, false, 0, 0);
    const int64_t pad[2] = {1, 1}, stride[2] = {1, 1};
    bdesc cd = conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), add_half = add, relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD);
    add_half.alpha2 = 0.5;
    bdesc ops[4] = {conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, c.d, cd),
                    pw_op(&add_half, c.d, z.d, a.d), pw_op(&add, a.d, b.d, s.d), pw_op(&relu, s.d, NULL, y.d)};
    bdesc g = graph(ops, 4);
    double *want = malloc(sizeof(double) * (size_t)y.v.count);
    ref_conv_fwd(&rc, x.val, w.val, want);
    for (int64_t i = 0; i < y.v.count; i++) want[i] = fmax(0, want[i] + 0.5 * z.val[i] + b.val[i / (yd[2] * yd[3]) % 8]);
    struct gt *io[] = {&x, &w, &z, &b, &y};
    run_all_engines(g, io, 5, &y, want, graph_tol(CUDNN_DATA_FLOAT), "ConvBiasAct");
    free(want);
    destroy_all(ops, 4);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    struct gt *all[] = {&x, &w, &z, &b, &c, &a, &s, &y};
    for (size_t i = 0; i < TLEN(all); i++) gt_free(all[i]);
}

/* conv -> mul scale -> add bias -> add a -> relu (ConvScaleBiasAddAct), half NHWC, stride 2; and
   conv -> add bias -> mul scale -> relu (ConvBiasScaleAct), float NHWC. */
static void conv_chain(bool scale_first)
{
    const cudnnDataType_t dt = scale_first ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    const int st = scale_first ? 2 : 1;
    struct ref_conv rc = {2, 2, 8, 8, 1, {5, 5}, {3, 3}, {0}, {1, 1}, {st, st}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    const int xd[4] = {2, 8, 5, 5}, wd[4] = {8, 8, 3, 3}, yd[4] = {2, 8, rc.out[0], rc.out[1]}, cd1[4] = {1, 8, 1, 1};
    struct gt x, w, sc, b, a, v1, v2, v3, v4, y;
    gt_init(&x, 101, dt, 4, xd, TV_NHWC, false, -1, 1);
    gt_init(&w, 102, dt, 4, wd, TV_NHWC, false, -1, 1);
    gt_init(&sc, 103, dt, 4, cd1, TV_NHWC, false, 0.5, 1.5);
    gt_init(&b, 104, dt, 4, cd1, TV_NHWC, false, -1, 1);
    gt_init(&a, 105, dt, 4, yd, TV_NHWC, false, -1, 1);
    gt_init(&v1, 201, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    gt_init(&v2, 202, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    gt_init(&v3, 203, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    gt_init(&v4, 204, CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    gt_init(&y, 301, dt, 4, yd, TV_NHWC, false, 0, 0);
    const int64_t pad[2] = {1, 1}, stride[2] = {st, st};
    bdesc cdsc = conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), mul = ref_pw_mode(CUDNN_POINTWISE_MUL),
                  relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD);
    bdesc ops[5];
    int nops;
    ops[0] = conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, v1.d, cdsc);
    if (scale_first) {
        ops[1] = pw_op(&mul, v1.d, sc.d, v2.d);
        ops[2] = pw_op(&add, v2.d, b.d, v3.d);
        ops[3] = pw_op(&add, v3.d, a.d, v4.d);
        ops[4] = pw_op(&relu, v4.d, NULL, y.d);
        nops = 5;
    } else {
        ops[1] = pw_op(&add, v1.d, b.d, v2.d);
        ops[2] = pw_op(&mul, v2.d, sc.d, v3.d);
        ops[3] = pw_op(&relu, v3.d, NULL, y.d);
        nops = 4;
    }
    bdesc g = graph(ops, nops);
    double *want = malloc(sizeof(double) * (size_t)y.v.count);
    ref_conv_fwd(&rc, x.val, w.val, want);
    for (int64_t i = 0; i < y.v.count; i++) {
        int k = (int)(i / (yd[2] * yd[3]) % 8);
        double r = scale_first ? want[i] * sc.val[k] + b.val[k] + a.val[i] : (want[i] + b.val[k]) * sc.val[k];
        want[i] = fmax(0, r);
    }
    struct gt *io[] = {&x, &w, &sc, &b, &a, &y};
    run_all_engines(g, io, 6, &y, want, graph_tol(dt), scale_first ? "ConvScaleBiasAddAct" : "ConvBiasScaleAct");
    free(want);
    destroy_all(ops, nops);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cdsc);
    struct gt *all[] = {&x, &w, &sc, &b, &a, &v1, &v2, &v3, &v4, &y};
    for (size_t i = 0; i < TLEN(all); i++) gt_free(all[i]);
}

TEST(backend_conv_scale_bias_add_act)
{
    conv_chain(true);
}

TEST(backend_conv_bias_scale_act)
{
    conv_chain(false);
}

/* backward data -> RELU_BWD with the forward input (DgradDrelu), half NHWC. */
TEST(backend_dgrad_drelu)
{
    struct ref_conv rc = {2, 2, 8, 8, 1, {4, 4}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    const int xd[4] = {2, 8, 4, 4}, wd[4] = {8, 8, 3, 3}, yd[4] = {2, 8, rc.out[0], rc.out[1]};
    struct gt dy, w, dx, bx, out;
    gt_init(&dy, 301, CUDNN_DATA_HALF, 4, yd, TV_NHWC, false, -1, 1);
    gt_init(&w, 102, CUDNN_DATA_HALF, 4, wd, TV_NHWC, false, -1, 1);
    gt_init(&dx, 1001, CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, true, 0, 0);
    gt_init(&bx, 201, CUDNN_DATA_HALF, 4, xd, TV_NHWC, false, -1, 1);
    gt_init(&out, 101, CUDNN_DATA_HALF, 4, xd, TV_NHWC, false, 0, 0);
    const int64_t pad[2] = {1, 1}, stride[2] = {1, 1};
    bdesc cd = conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw drelu = ref_pw_mode(CUDNN_POINTWISE_RELU_BWD);
    bdesc ops[2] = {conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, dx.d, w.d, dy.d, cd),
                    pw_op(&drelu, bx.d, dx.d, out.d)};
    bdesc g = graph(ops, 2);
    double *want = malloc(sizeof(double) * (size_t)out.v.count);
    ref_conv_bwd_data(&rc, dy.val, w.val, want);
    for (int64_t i = 0; i < out.v.count; i++) want[i] = bx.val[i] > 0 ? want[i] : 0;
    struct gt *io[] = {&dy, &w, &bx, &out};
    run_all_engines(g, io, 4, &out, want, graph_tol(CUDNN_DATA_HALF), "DgradDrelu");
    free(want);
    destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    struct gt *all[] = {&dy, &w, &dx, &bx, &out};
    for (size_t i = 0; i < TLEN(all); i++) gt_free(all[i]);
}

static bdesc reduction_op(cudnnReduceTensorOp_t red, bdesc x, bdesc y)
{
    bdesc rd = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    set(rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    set(rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &red);
    CHECK_OK(cudnnBackendFinalize(rd));
    bdesc op = make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd);
    set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
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
    struct gt x, w, y, r;
    gt_init(&x, 'x', CUDNN_DATA_HALF, 4, xd, TV_NHWC, false, -1, 1);
    gt_init(&w, 'w', CUDNN_DATA_HALF, 4, wd, TV_NHWC, false, -1, 1);
    gt_init(&y, 'y', CUDNN_DATA_HALF, 4, yd, TV_NHWC, true, 0, 0);
    gt_init(&r, 'r', CUDNN_DATA_FLOAT, 4, rd, TV_NHWC, false, 0, 0);
    const int64_t pad[2] = {0, 0}, stride[2] = {1, 1};
    bdesc cd = conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    bdesc ops[2] = {conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, y.d, cd),
                    reduction_op(CUDNN_REDUCE_TENSOR_ADD, y.d, r.d)};
    bdesc g = graph(ops, 2);
    double *conv = malloc(sizeof(double) * (size_t)y.v.count), want[16] = {0};
    ref_conv_fwd(&rc, x.val, w.val, conv);
    for (int64_t i = 0; i < y.v.count; i++) want[i / 9 % 16] += conv[i];
    struct gt *io[] = {&x, &w, &r};
    run_all_engines(g, io, 3, &r, want, 2e-2, "ConvColReduction");
    free(conv);
    destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    struct gt *all[] = {&x, &w, &y, &r};
    for (size_t i = 0; i < TLEN(all); i++) gt_free(all[i]);
}

/* One convolution of each direction, every engine, float NCHW with stride and padding. */
TEST(backend_conv_directions)
{
    struct ref_conv rc = {2, 2, 6, 4, 1, {7, 6}, {3, 3}, {0}, {1, 0}, {2, 1}, {1, 1}, true};
    ref_conv_out_dims(&rc);
    const int xd[4] = {2, 6, 7, 6}, wd[4] = {4, 6, 3, 3}, yd[4] = {2, 4, rc.out[0], rc.out[1]};
    const int64_t pad[2] = {1, 0}, stride[2] = {2, 1};
    static const cudnnBackendDescriptorType_t kinds[3] = {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                                          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                                          CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
    for (int dir = 0; dir < 3; dir++) {
        struct gt x, w, y;
        gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, dir == 1, dir == 1 ? 0 : -1, 1);
        gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NCHW, dir == 2, dir == 2 ? 0 : -1, 1);
        gt_init(&y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, dir == 0, dir == 0 ? 0 : -1, 1);
        /* the written tensor is a real output: re-make it non-virtual with a poisoned buffer */
        struct gt *dst = dir == 0 ? &y : dir == 1 ? &x : &w;
        cudnnBackendDestroyDescriptor(dst->d);
        dst->d = tensor(dst->uid, &dst->v, false);
        dst->buf = tview_upload(&dst->v, NULL);
        bdesc cd = conv_desc(2, pad, stride, CUDNN_CONVOLUTION);
        bdesc op = conv_op(kinds[dir], x.d, w.d, y.d, cd), g = graph(&op, 1);
        double *want = malloc(sizeof(double) * (size_t)dst->v.count);
        if (dir == 0) ref_conv_fwd(&rc, x.val, w.val, want);
        else if (dir == 1) ref_conv_bwd_data(&rc, y.val, w.val, want);
        else ref_conv_bwd_filter(&rc, x.val, y.val, want);
        struct gt *io[] = {&x, &w, &y};
        static const char *const names[3] = {"conv fwd", "conv bwd data", "conv bwd filter"};
        run_all_engines(g, io, 3, dst, want, graph_tol(CUDNN_DATA_FLOAT), names[dir]);
        free(want);
        cudnnBackendDestroyDescriptor(op);
        cudnnBackendDestroyDescriptor(g);
        cudnnBackendDestroyDescriptor(cd);
        gt_free(&x), gt_free(&w), gt_free(&y);
    }
}

/* ---- matmul, statistics ------------------------------------------------------------------------- */

static bdesc matmul_op(bdesc a, bdesc b, bdesc c)
{
    bdesc md = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    set(md, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    CHECK_OK(cudnnBackendFinalize(md));
    bdesc op = make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
    set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, md);
    CHECK_OK(cudnnBackendFinalize(op));
    cudnnBackendDestroyDescriptor(md);
    return op;
}

/* matmul -> add a bias row -> GELU (MatmulBiasAct), half; and a plain float matmul of 2 batches
   whose B is shared (batch extent 1). */
TEST(backend_matmul_bias_act)
{
    for (int fused = 1; fused >= 0; fused--) {
        const cudnnDataType_t dt = fused ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        const int B = fused ? 1 : 2, M = 16, K = 8, N = 12;
        const int ad[3] = {B, M, K}, bd[3] = {1, K, N}, cd[3] = {B, M, N}, zd[3] = {1, 1, N};
        struct gt a, b, c, z, t, out;
        gt_init(&a, 'a', dt, 3, ad, TV_NCHW, false, -1, 1);
        gt_init(&b, 'b', dt, 3, bd, TV_NCHW, false, -1, 1);
        gt_init(&c, 'c', fused ? CUDNN_DATA_FLOAT : dt, 3, cd, TV_NCHW, fused, 0, 0);
        gt_init(&z, 'z', dt, 3, zd, TV_NCHW, false, -1, 1);
        gt_init(&t, 't', CUDNN_DATA_FLOAT, 3, cd, TV_NCHW, true, 0, 0);
        gt_init(&out, 'o', dt, 3, cd, TV_NCHW, false, 0, 0);
        struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), gelu = ref_pw_mode(CUDNN_POINTWISE_GELU_FWD);
        bdesc ops[3] = {matmul_op(a.d, b.d, c.d), pw_op(&add, c.d, z.d, t.d), pw_op(&gelu, t.d, NULL, out.d)};
        int nops = fused ? 3 : 1;
        bdesc g = graph(ops, nops);
        double *want = malloc(sizeof(double) * (size_t)out.v.count);
        for (int bb = 0; bb < B; bb++)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double s = 0;
                    for (int k = 0; k < K; k++) s += a.val[(bb * M + i) * K + k] * b.val[k * N + j];
                    if (fused) s = ref_pw(&gelu, s + z.val[j], 0);
                    want[(bb * M + i) * N + j] = s;
                }
        struct gt *io[] = {&a, &b, fused ? &z : &c, &out};
        const struct gt *res = fused ? &out : &c;
        run_all_engines(g, io, fused ? 4 : 3, res, want, graph_tol(dt), fused ? "MatmulBiasAct" : "matmul");
        free(want);
        destroy_all(ops, 3);
        cudnnBackendDestroyDescriptor(g);
        struct gt *all[] = {&a, &b, &c, &z, &t, &out};
        for (size_t i = 0; i < TLEN(all); i++) gt_free(all[i]);
    }
}

/* Channel sums and sums of squares (GEN_STATS SUM_SQSUM), float NHWC. */
TEST(backend_genstats)
{
    const int xd[4] = {2, 4, 3, 3}, sd[4] = {1, 4, 1, 1};
    struct gt x, sum, sq;
    gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, false, -1, 1);
    gt_init(&sum, 's', CUDNN_DATA_FLOAT, 4, sd, TV_NCHW, false, 0, 0);
    gt_init(&sq, 'q', CUDNN_DATA_FLOAT, 4, sd, TV_NCHW, false, 0, 0);
    bdesc op = make(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
    cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    set(op, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, 1, &mode);
    set(op, CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    set_desc(op, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, x.d);
    set_desc(op, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, sum.d);
    set_desc(op, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, sq.d);
    CHECK_OK(cudnnBackendFinalize(op));
    bdesc g = graph(&op, 1);
    double ws[4] = {0}, wq[4] = {0};
    for (int64_t i = 0; i < x.v.count; i++) ws[i / 9 % 4] += x.val[i], wq[i / 9 % 4] += x.val[i] * x.val[i];
    int64_t wsz = -1;
    bdesc plan = plan_of_engine(g, 0, &wsz);
    if (CHECK(plan != NULL)) {
        int64_t uids[3] = {'x', 's', 'q'};
        void *ptrs[3] = {x.buf, sum.buf, sq.buf};
        CHECK_OK(run(plan, wsz, uids, ptrs, 3));
        check_tol(&sum.v, sum.buf, ws, 1e-5, "sum");
        check_tol(&sq.v, sq.buf, wq, 1e-5, "square sum");
        cudnnBackendDestroyDescriptor(plan);
    }
    cudnnBackendDestroyDescriptor(op);
    cudnnBackendDestroyDescriptor(g);
    gt_free(&x), gt_free(&sum), gt_free(&sq);
}

/* ---- plans and variant packs --------------------------------------------------------------------- */

/* A plan runs again with other pointers; a pack without a UID, a NULL workspace the plan needs, a
   misaligned pointer and a missing plan are BAD_PARAM with nothing written. */
TEST(backend_execute_packs)
{
    const int xd[4] = {2, 4, 3, 3}, wd[4] = {8, 4, 1, 1}, yd[4] = {2, 8, 3, 3}, rd[4] = {1, 8, 1, 1};
    struct gt x, w, y, r, x2, r2;
    gt_init(&x, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, false, -1, 1);
    gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NCHW, false, -1, 1);
    gt_init(&y, 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NCHW, true, 0, 0);
    gt_init(&r, 'r', CUDNN_DATA_FLOAT, 4, rd, TV_NCHW, false, 0, 0);
    gt_init(&x2, 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NCHW, false, -1, 1);
    gt_init(&r2, 'r', CUDNN_DATA_FLOAT, 4, rd, TV_NCHW, false, 0, 0);
    const int64_t pad[2] = {0, 0}, stride[2] = {1, 1};
    bdesc cd = conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    bdesc ops[2] = {conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x.d, w.d, y.d, cd),
                    reduction_op(CUDNN_REDUCE_TENSOR_MAX, y.d, r.d)};
    bdesc g = graph(ops, 2);
    int64_t ws = -1;
    bdesc plan = plan_of_engine(g, 0, &ws);
    if (!CHECK(plan != NULL) || !CHECK(ws > 0)) return; /* the convolution's output lives in the workspace */
    struct ref_conv rc = {2, 2, 4, 8, 1, {3, 3}, {1, 1}, {0}, {0, 0}, {1, 1}, {1, 1}, false};
    ref_conv_out_dims(&rc);
    double conv[144], want[8], want2[8];
    struct gt *xs[2] = {&x, &x2};
    double *wants[2] = {want, want2};
    for (int k = 0; k < 2; k++) {
        ref_conv_fwd(&rc, xs[k]->val, w.val, conv);
        for (int c = 0; c < 8; c++) wants[k][c] = -INFINITY;
        for (int i = 0; i < 144; i++) wants[k][i / 9 % 8] = fmax(wants[k][i / 9 % 8], conv[i]);
    }
    void *work = tbuf_alloc((size_t)ws);
    int64_t uids[3] = {'x', 'w', 'r'};
    void *ptrs[3] = {x.buf, w.buf, r.buf}, *ptrs2[3] = {x2.buf, w.buf, r2.buf};
    bdesc vp = pack(uids, ptrs, 3, work), vp2 = pack(uids, ptrs2, 3, work);
    CHECK_OK(cudnnBackendExecute(test_handle(), plan, vp));
    CHECK_OK(cudnnBackendExecute(test_handle(), plan, vp2));
    check_tol(&r.v, r.buf, want, graph_tol(CUDNN_DATA_FLOAT), "first pack");
    check_tol(&r2.v, r2.buf, want2, graph_tol(CUDNN_DATA_FLOAT), "second pack");
    tbuf_poison(r.buf, tview_bytes(&r.v));
    void *snap = tbuf_snapshot(r.buf, tview_bytes(&r.v));
    bdesc bad[3] = {pack(uids, ptrs, 2, work), pack(uids, ptrs, 3, NULL), NULL};
    void *misaligned[3] = {(char *)x.buf + 4, w.buf, r.buf};
    bad[2] = pack(uids, misaligned, 3, work);
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
    destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    struct gt *all[] = {&x, &w, &y, &r, &x2, &r2};
    for (size_t i = 0; i < TLEN(all); i++) gt_free(all[i]);
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
    struct gt x[4], w, c, y[4];
    gt_init(&w, 'w', CUDNN_DATA_FLOAT, 4, wd, TV_NHWC, false, -1, 1);
    gt_init(&c, 'c', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, true, 0, 0);
    for (int i = 0; i < 4; i++) {
        gt_init(&x[i], 'x', CUDNN_DATA_FLOAT, 4, xd, TV_NHWC, false, -1, 1);
        gt_init(&y[i], 'y', CUDNN_DATA_FLOAT, 4, yd, TV_NHWC, false, 0, 0);
    }
    const int64_t pad[2] = {1, 1}, stride[2] = {1, 1};
    bdesc cd = conv_desc(2, pad, stride, CUDNN_CROSS_CORRELATION);
    struct ref_pw tanh_fwd = ref_pw_mode(CUDNN_POINTWISE_TANH_FWD);
    bdesc ops[2] = {conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, x[0].d, w.d, c.d, cd),
                    pw_op(&tanh_fwd, c.d, NULL, y[0].d)};
    bdesc g = graph(ops, 2);
    int64_t ws = -1;
    bdesc plan = plan_of_engine(g, 0, &ws);
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
            check_tol(&y[i].v, y[i].buf, want, graph_tol(CUDNN_DATA_FLOAT), "a thread's result");
            if (t[i].work) tbuf_free(t[i].work);
        }
        cudnnBackendDestroyDescriptor(plan);
    }
    destroy_all(ops, 2);
    cudnnBackendDestroyDescriptor(g);
    cudnnBackendDestroyDescriptor(cd);
    gt_free(&w), gt_free(&c);
    for (int i = 0; i < 4; i++) gt_free(&x[i]), gt_free(&y[i]);
}

/* Every implementation of the convolution registry has a global engine index (docs/engines.md):
   the append-only list of engine.c names each entry of each direction's table. */
TEST_ONCE(backend_engine_list_complete)
{
    void *lib = ocd_dl_open(OCD_LIB_DIR "/" OCD_LIBRARY_FILE("cudnn_cnn_infer"), NULL, 0);
    if (!CHECK(lib != NULL)) return;
    const struct ocd_conv_table *(*table)(enum ocd_conv_dir);
    int (*count)(int);
    const char *(*name)(int, int);
    *(void **)&table = ocd_dl_symbol(lib, "ocd_conv_table");
    *(void **)&count = ocd_dl_symbol(lib, "ocd_engine_entry_count");
    *(void **)&name = ocd_dl_symbol(lib, "ocd_engine_entry_name");
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
