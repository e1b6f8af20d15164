/* backend_util.c: the backend API tests' shared helpers (backend_util.h). */
#include "backend_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- building descriptors ------------------------------------------------------------------- */

bdesc bt_make(cudnnBackendDescriptorType_t kind)
{
    bdesc d = NULL;
    CHECK_OK(cudnnBackendCreateDescriptor(kind, &d));
    return d;
}

void bt_set(bdesc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t n, const void *v)
{
    CHECK_OK(cudnnBackendSetAttribute(d, name, type, n, v));
}

void bt_set_i64(bdesc d, cudnnBackendAttributeName_t name, int64_t v)
{
    bt_set(d, name, CUDNN_TYPE_INT64, 1, &v);
}

void bt_set_desc(bdesc d, cudnnBackendAttributeName_t name, bdesc v)
{
    bt_set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

void bt_set_f(bdesc d, cudnnBackendAttributeName_t name, float v)
{
    bt_set(d, name, CUDNN_TYPE_FLOAT, 1, &v);
}

/* A TENSOR of a tview's dims and strides. */
bdesc bt_tensor(int64_t uid, const struct tview *v, bool virt)
{
    int64_t dims[8], strides[8];
    for (int d = 0; d < v->rank; d++) dims[d] = v->dims[d], strides[d] = v->strides[d];
    return bt_tensor_dims(uid, v->dtype, v->rank, dims, strides, virt);
}

bdesc bt_tensor_dims(int64_t uid, cudnnDataType_t dt, int rank, const int64_t *dims, const int64_t *strides, bool virt)
{
    bdesc t = bt_make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    bool vb = virt;
    bt_set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    bt_set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, dims);
    bt_set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, strides);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
    if (virt) bt_set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &vb);
    CHECK_OK(cudnnBackendFinalize(t));
    return t;
}

bdesc bt_conv_desc(int nsp, const int64_t *pad, const int64_t *stride, cudnnConvolutionMode_t mode)
{
    const int64_t dil[3] = {1, 1, 1};
    return bt_conv_desc_full(mode, CUDNN_DATA_FLOAT, nsp, pad, pad, stride, dil);
}

bdesc bt_conv_desc_full(cudnnConvolutionMode_t mode, cudnnDataType_t comp, int nsp, const int64_t *pre,
                        const int64_t *post, const int64_t *stride, const int64_t *dil)
{
    bdesc c = bt_make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const int64_t n = nsp;
    bt_set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &n);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, n, pre);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, n, post);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, n, dil);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, n, stride);
    CHECK_OK(cudnnBackendFinalize(c));
    return c;
}

bdesc bt_conv_desc_2d(cudnnDataType_t comp, const int64_t pad[2], const int64_t stride[2], const int64_t dil[2])
{
    bdesc c = bt_make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t n = 2;
    bt_set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &n);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    bt_set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    CHECK_OK(cudnnBackendFinalize(c));
    return c;
}

bdesc bt_conv_fwd_op_typed(const bdesc t[3], bdesc conv, cudnnDataType_t dt)
{
    const bool dbl = dt == CUDNN_DATA_DOUBLE;
    const float one = 1, zero = 0;
    const double one_d = 1, zero_d = 0;
    const cudnnBackendAttributeType_t st = dbl ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, t[0]);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, t[1]);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, t[2]);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
    bt_set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, st, 1, dbl ? (const void *)&one_d : &one);
    bt_set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, st, 1, dbl ? (const void *)&zero_d : &zero);
    CHECK_OK(cudnnBackendFinalize(op));
    return op;
}

bdesc bt_matmul_op(bdesc a, bdesc b, bdesc c, cudnnDataType_t comp)
{
    bdesc md = bt_make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    bt_set(md, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    CHECK_OK(cudnnBackendFinalize(md));
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, md);
    CHECK_OK(cudnnBackendFinalize(op));
    cudnnBackendDestroyDescriptor(md);
    return op;
}

/* A convolution op of a direction; x, w, y named for the forward op. */
bdesc bt_conv_op(cudnnBackendDescriptorType_t kind, bdesc x, bdesc w, bdesc y, bdesc conv)
{
    bdesc op = bt_make(kind);
    const bool fwd = kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
    const bool dgrad = kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
    bt_set_desc(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX
                                                                        : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x);
    bt_set_desc(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W
                                                                        : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w);
    bt_set_desc(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY
                                                                        : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y);
    bt_set_desc(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC
                 : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC
                         : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv);
    bt_set_f(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA
                                                                         : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, 1.0f);
    bt_set_f(op, fwd ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA : dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA
                                                                        : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, 0.0f);
    CHECK_OK(cudnnBackendFinalize(op));
    return op;
}

/* A pointwise op: y = mode(x[, b]); for *_BWD modes b is dy and y is dx. */
bdesc bt_pw_op(const struct ref_pw *p, bdesc x, bdesc b, bdesc y)
{
    bdesc pw = bt_make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnPointwiseMode_t mode = p->mode;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    bt_set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    bt_set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    cudnnNanPropagation_t nan = p->propagate_nan ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN;
    double up = isinf(p->upper_clip) ? DBL_MAX : p->upper_clip;
    bt_set(pw, CUDNN_ATTR_POINTWISE_NAN_PROPAGATION, CUDNN_TYPE_NAN_PROPOGATION, 1, &nan);
    bt_set(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_DOUBLE, 1, &p->lower_clip);
    bt_set(pw, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, 1, &up);
    bt_set(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &p->slope);
    bt_set(pw, CUDNN_ATTR_POINTWISE_ELU_ALPHA, CUDNN_TYPE_DOUBLE, 1, &p->elu_alpha);
    bt_set(pw, CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA, CUDNN_TYPE_DOUBLE, 1, &p->softplus_beta);
    bt_set(pw, CUDNN_ATTR_POINTWISE_SWISH_BETA, CUDNN_TYPE_DOUBLE, 1, &p->swish_beta);
    CHECK_OK(cudnnBackendFinalize(pw));
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    const bool bwd = (int)mode >= 200;
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (bwd) {
        bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, b);
        bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, y);
    } else {
        bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
        if (ref_pw_binary(mode)) bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    }
    bt_set_f(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, (float)p->alpha1);
    bt_set_f(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, (float)p->alpha2);
    CHECK_OK(cudnnBackendFinalize(op));
    cudnnBackendDestroyDescriptor(pw);
    return op;
}

bdesc bt_graph(bdesc *ops, int n)
{
    bdesc g = bt_make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnHandle_t h = test_handle();
    bt_set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops);
    bt_set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    CHECK_OK(cudnnBackendFinalize(g));
    return g;
}

int64_t bt_engine_count(bdesc g)
{
    int64_t n = 0;
    CHECK_OK(cudnnBackendGetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, NULL, &n));
    return n;
}

/* A plan of engine `index` (its workspace in *ws), or NULL when the engine does not run the
   graph (NOT_SUPPORTED at ENGINE or PLAN finalize, the only failure allowed). */
bdesc bt_plan_of_engine(bdesc g, int64_t index, int64_t *ws)
{
    bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    bt_set_desc(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, g);
    bt_set_i64(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, index);
    cudnnStatus_t st = cudnnBackendFinalize(e);
    bdesc plan = NULL;
    if (st == CUDNN_STATUS_SUCCESS) {
        bdesc cfg = bt_make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        bt_set_desc(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, e);
        CHECK_OK(cudnnBackendFinalize(cfg));
        plan = bt_make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        cudnnHandle_t h = test_handle();
        bt_set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
        bt_set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
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
int bt_heuristic_engines(bdesc g, int64_t *out, int cap)
{
    bdesc cfgs[64];
    const int n = bt_heuristics(g, cfgs, cap < 64 ? cap : 64);
    CHECK(n >= 1);
    for (int i = 0; i < n; i++) {
        bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
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
    return n;
}

/* A variant pack of n (uid, pointer) pairs and a workspace. */
bdesc bt_pack(const int64_t *uids, void *const *ptrs, int n, void *ws)
{
    bdesc vp = bt_make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    bt_set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    bt_set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs);
    bt_set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    CHECK_OK(cudnnBackendFinalize(vp));
    return vp;
}

/* Runs a plan with the pack's pointers and a fresh workspace of its size. */
cudnnStatus_t bt_run(bdesc plan, int64_t ws, const int64_t *uids, void *const *ptrs, int n)
{
    void *work = ws > 0 ? tbuf_alloc((size_t)ws) : NULL;
    cudnnStatus_t st = bt_execute(plan, uids, ptrs, n, work);
    if (work) tbuf_free(work);
    return st;
}

void bt_destroy_all(bdesc *d, int n)
{
    for (int i = 0; i < n; i++) cudnnBackendDestroyDescriptor(d[i]);
}

/* Reads a tview back and compares with want: |got - want| <= tol * max(1, |want|). */
bool bt_check_tol(const struct tview *v, const void *buf, const double *want, double tol, const char *what)
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
double bt_graph_tol(cudnnDataType_t t)
{
    if (t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16) return 2e-2;
    return strcmp(test_backend, "cuda") == 0 ? 1e-2 : 1e-4;
}


void bt_gt_init(struct bt_gt *t, int64_t uid, cudnnDataType_t dt, int rank, const int *dims, int layout, bool virt,
                    double lo, double hi)
{
    memset(t, 0, sizeof *t);
    tview_init(&t->v, dt, rank, dims, layout);
    t->uid = uid;
    if (!virt) {
        t->val = lo < hi ? tview_random(t->v.count, lo, hi) : NULL;
        t->buf = tview_upload(&t->v, t->val);
    }
    t->d = bt_tensor(uid, &t->v, virt);
}

void bt_gt_free(struct bt_gt *t)
{
    if (t->buf) tview_free(&t->v, t->buf);
    free(t->val);
    cudnnBackendDestroyDescriptor(t->d);
    tview_destroy(&t->v);
}

/* Runs every engine of the graph that builds (at least engine 0 and the heuristic's first must),
   each on a fresh output, and compares out with want. */
void bt_run_all_engines(bdesc g, struct bt_gt *const *io, int n, const struct bt_gt *out, const double *want, double tol,
                            const char *what)
{
    int64_t count = bt_engine_count(g), first = -1, ran = 0;
    CHECK(count >= 1);
    CHECK(bt_heuristic_engines(g, &first, 1) == 1);
    int64_t uids[16];
    void *ptrs[16];
    for (int i = 0; i < n; i++) uids[i] = io[i]->uid, ptrs[i] = io[i]->buf;
    for (int64_t e = 0; e < count; e++) {
        int64_t ws = -1;
        bdesc plan = bt_plan_of_engine(g, e, &ws);
        if (e == 0 || e == first) CHECK(plan != NULL);
        if (plan == NULL) continue;
        CHECK(ws >= 0);
        tbuf_poison(out->buf, tview_bytes(&out->v));
        cudnnStatus_t st = bt_run(plan, ws, uids, ptrs, n);
        char label[96];
        snprintf(label, sizeof label, "%s, engine %lld", what, (long long)e);
        if (CHECK_OK(st)) bt_check_tol(&out->v, out->buf, want, tol, label);
        cudnnBackendDestroyDescriptor(plan);
        ran++;
    }
    CHECK(ran >= 1);
}

bdesc bt_tensor_aligned(int64_t uid, const struct tview *v, const int64_t *strides, int64_t align)
{
    bdesc t = bt_make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t dims[8], st[8];
    for (int d = 0; d < v->rank; d++) dims[d] = v->dims[d], st[d] = strides ? strides[d] : v->strides[d];
    cudnnDataType_t dt = v->dtype;
    bt_set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, v->rank, dims);
    bt_set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, v->rank, st);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
    bt_set_i64(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, align);
    bt_set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    CHECK_OK(cudnnBackendFinalize(t));
    return t;
}

int bt_heuristics(bdesc g, bdesc *cfgs, int cap)
{
    bdesc h = bt_make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;
    bt_set_desc(h, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g);
    bt_set(h, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    CHECK_OK(cudnnBackendFinalize(h));
    int64_t n = 0, got = 0;
    CHECK_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    for (int i = 0; i < cap; i++) cfgs[i] = bt_make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, cap, &got, cfgs));
    for (int i = (int)got; i < cap; i++) cudnnBackendDestroyDescriptor(cfgs[i]);
    cudnnBackendDestroyDescriptor(h);
    return (int)got;
}

bdesc bt_plan_of_cfg(bdesc cfg, int64_t *ws)
{
    return bt_plan_on(test_handle(), cfg, ws);
}

bdesc bt_plan_on(cudnnHandle_t h, bdesc cfg, int64_t *ws)
{
    bdesc plan = bt_make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    bt_set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    bt_set_desc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
    if (cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(plan);
        return NULL;
    }
    CHECK_OK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, NULL, ws));
    return plan;
}

cudnnStatus_t bt_execute_on(cudnnHandle_t h, bdesc plan, const int64_t *uids, void *const *ptrs, int n, void *ws)
{
    bdesc vp = bt_pack(uids, ptrs, n, ws);
    cudnnStatus_t st = cudnnBackendExecute(h, plan, vp);
    cudnnBackendDestroyDescriptor(vp);
    return st;
}

cudnnStatus_t bt_execute(bdesc plan, const int64_t *uids, void *const *ptrs, int n, void *ws)
{
    return bt_execute_on(test_handle(), plan, uids, ptrs, n, ws);
}
