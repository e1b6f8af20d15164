/* ops_graph.c: ConvBiasAct, y = relu(conv(x, w) + bias), as one fused call: through the backend
   (graph) API, and through the legacy cudnnConvolutionBiasActivationForward, so that our fused
   graph is timed beside the same graph and the same legacy call of the other cuDNN (the vendor's
   cuDNN 9 keeps both APIs), and beside the plain convolution rows of the same shapes.

   Both take convfwd's keys and tensors (setup_conv: x, filter, y, cross-correlation, one group,
   compute float, or double for f64) plus the bias, 1 x K x 1 x 1 in y's layout and type (t[3]).
   - convbiasact_graph builds the graph as cudnn-frontend does: the convolution into a virtual
     tensor, ADD of the bias into another, RELU_FWD into y, the virtual tensors float (double for
     f64); the engine is the first configuration of the INSTANT heuristic whose plan builds, with
     its workspace (what a framework takes without autotuning); algo= is not used (setup_conv's
     legacy choice only sizes the legacy workspace). A graph no configuration builds is the row's
     status.
   - convbiasact calls cudnnConvolutionBiasActivationForward with alpha1 1, alpha2 0 (z = y, not
     read), ReLU, and setup_conv's algorithm (algo=auto: the v7 heuristic's first).
   flops as convfwd's (the bias and the activation are not counted); bytes = |x| + |filter| + |y|
   + |bias|. */
#include "bench.h"

#include <cudnn_backend.h>

struct graph_state {
    cudnnBackendDescriptor_t plan, pack;
    void *workspace;
};

static void graph_release(struct call *c)
{
    struct graph_state *s = c->state;
    if (s->pack) cudnnBackendDestroyDescriptor(s->pack);
    if (s->plan) cudnnBackendDestroyDescriptor(s->plan);
    if (s->workspace) mem_free(s->workspace);
    free(s);
    c->state = NULL;
}

/* Descriptors made while building: destroyed together once the plan is built. */
struct scratch {
    int n;
    cudnnBackendDescriptor_t d[96];
};

static cudnnStatus_t make(struct scratch *s, cudnnBackendDescriptorType_t kind, cudnnBackendDescriptor_t *d)
{
    if (s->n == (int)ARRAY_LEN(s->d)) return CUDNN_STATUS_ALLOC_FAILED;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(kind, d);
    if (st == CUDNN_STATUS_SUCCESS) s->d[s->n++] = *d;
    return st;
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        cudnnStatus_t st_ = (call);                                                                \
        if (st_ != CUDNN_STATUS_SUCCESS) return st_;                                               \
    } while (0)
#define SET(d, name, type, n, v) TRY(cudnnBackendSetAttribute(d, name, type, n, v))

/* A TENSOR of a bench tensor's dims and strides (virtual: of type dt, no data). */
static cudnnStatus_t graph_tensor(struct scratch *s, const struct tensor *t, int64_t uid, bool virt,
                                  cudnnDataType_t dt, cudnnBackendDescriptor_t *d)
{
    TRY(make(s, CUDNN_BACKEND_TENSOR_DESCRIPTOR, d));
    int64_t dims[8], strides[8], align = 16;
    for (int i = 0; i < t->nd; i++) dims[i] = t->dims[i], strides[i] = t->strides[i];
    SET(*d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    SET(*d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, t->nd, dims);
    SET(*d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, t->nd, strides);
    SET(*d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    SET(*d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    if (virt) SET(*d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
    return cudnnBackendFinalize(*d);
}

static cudnnStatus_t pointwise(struct scratch *s, cudnnPointwiseMode_t mode, cudnnDataType_t comp,
                               cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y,
                               cudnnBackendDescriptor_t *op)
{
    cudnnBackendDescriptor_t pw;
    TRY(make(s, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw));
    SET(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    SET(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    TRY(cudnnBackendFinalize(pw));
    TRY(make(s, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, op));
    float one = 1;
    SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
    SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
    SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
    if (b) SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
    return cudnnBackendFinalize(*op);
}

/* The graph, the heuristic's first configuration that builds, its plan and variant pack. */
static cudnnStatus_t build(struct call *c, struct scratch *s, const int sp[3])
{
    struct graph_state *gs = c->state;
    const bool dbl = c->dt->type == CUDNN_DATA_DOUBLE;
    const cudnnDataType_t comp = dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t x, w, b, y, v1, v2, conv, ops[3];
    TRY(graph_tensor(s, &c->t[0], 'x', false, c->dt->type, &x));
    TRY(graph_tensor(s, &c->t[1], 'w', false, c->dt->type, &w));
    TRY(graph_tensor(s, &c->t[2], 'y', false, c->dt->type, &y));
    TRY(graph_tensor(s, &c->t[3], 'b', false, c->dt->type, &b));
    TRY(graph_tensor(s, &c->t[2], 'C', true, comp, &v1));
    TRY(graph_tensor(s, &c->t[2], 'B', true, comp, &v2));
    TRY(make(s, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv));
    int64_t nsp = 2, pad[2] = {sp[0], sp[0]}, stride[2] = {sp[1], sp[1]}, dil[2] = {sp[2], sp[2]};
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    SET(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    SET(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    SET(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp);
    SET(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    SET(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    TRY(cudnnBackendFinalize(conv));
    TRY(make(s, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &ops[0]));
    float one = 1, zero = 0;
    SET(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    SET(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    SET(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v1);
    SET(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
    SET(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &one);
    SET(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &zero);
    TRY(cudnnBackendFinalize(ops[0]));
    TRY(pointwise(s, CUDNN_POINTWISE_ADD, comp, v1, b, v2, &ops[1]));
    TRY(pointwise(s, CUDNN_POINTWISE_RELU_FWD, comp, v2, NULL, y, &ops[2]));
    cudnnBackendDescriptor_t g, heur;
    TRY(make(s, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g));
    SET(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, ops);
    SET(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->handle);
    TRY(cudnnBackendFinalize(g));
    TRY(make(s, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_INSTANT;
    SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
    TRY(cudnnBackendFinalize(heur));
    int64_t n = 0;
    TRY(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    cudnnBackendDescriptor_t cfg[16];
    if (n > 16) n = 16;
    for (int64_t i = 0; i < n; i++) TRY(make(s, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]));
    TRY(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, cfg));
    cudnnStatus_t st = CUDNN_STATUS_NOT_SUPPORTED;
    for (int64_t i = 0; i < n && st != CUDNN_STATUS_SUCCESS; i++) {
        if (gs->plan) cudnnBackendDestroyDescriptor(gs->plan);
        TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &gs->plan));
        SET(gs->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
        SET(gs->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->handle);
        st = cudnnBackendFinalize(gs->plan);
    }
    if (st != CUDNN_STATUS_SUCCESS) return st;
    int64_t ws = 0;
    TRY(cudnnBackendGetAttribute(gs->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws));
    if (ws > 0) gs->workspace = mem_alloc((size_t)ws);
    TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &gs->pack));
    int64_t uids[4] = {'x', 'w', 'y', 'b'};
    void *ptrs[4] = {c->t[0].data, c->t[1].data, c->t[2].data, c->t[3].data};
    SET(gs->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 4, ptrs);
    SET(gs->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 4, uids);
    SET(gs->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &gs->workspace);
    return cudnnBackendFinalize(gs->pack);
}

/* The convolution of p (setup_conv: x, filter, y, the legacy descriptors and algorithm) plus the
   bias, 1 x K x 1 x 1 in y's layout (t[3]). */
static const char *setup_conv_bias(struct call *c, const struct problem *p)
{
    const char *why = setup_conv(c, p, 0);
    if (why) return why;
    char spec[64];
    snprintf(spec, sizeof spec, "1x%dx1x1%s", c->t[2].dims[1], strcmp(problem_get(p, "layout"), "nhwc") == 0 ? ":nhwc" : "");
    if ((why = add_tensor_spec(c, spec))) return why;
    c->bytes += tensor_bytes(c, 3);
    return NULL;
}

static const char *setup_convbiasact_graph(struct call *c, const struct problem *p)
{
    const char *why = setup_conv_bias(c, p);
    if (why || c->dry) return why;
    struct graph_state *gs = calloc(1, sizeof *gs);
    if (gs == NULL) return "out of memory";
    c->state = gs;
    c->release = graph_release;
    struct scratch sc = {0};
    const int sp[3] = {(int)problem_number(p, "pad"), (int)problem_number(p, "stride"), (int)problem_number(p, "dil")};
    cudnnStatus_t st = build(c, &sc, sp);
    for (int i = sc.n - 1; i >= 0; i--) cudnnBackendDestroyDescriptor(sc.d[i]);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static cudnnStatus_t run_convbiasact_graph(struct call *c)
{
    const struct graph_state *gs = c->state;
    return cudnnBackendExecute(c->handle, gs->plan, gs->pack);
}

static const char *setup_convbiasact(struct call *c, const struct problem *p)
{
    const char *why = setup_conv_bias(c, p);
    if (why) return why;
    c->alpha2 = scaling_of(0);
    cudnnStatus_t st = cudnnCreateActivationDescriptor(&c->act_desc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetActivationDescriptor(c->act_desc, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static cudnnStatus_t run_convbiasact(struct call *c)
{
    return cudnnConvolutionBiasActivationForward(
        c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data, c->filter_desc, c->t[1].data, c->conv_desc,
        (cudnnConvolutionFwdAlgo_t)c->algo, c->workspace, c->workspace_bytes, scaling_ptr(c, &c->alpha2), c->t[2].desc,
        c->t[2].data, c->t[3].desc, c->t[3].data, c->act_desc, c->t[2].desc, c->t[2].data);
}

#define CONV_BIAS_KEYS "dt layout n c h w k r s pad stride dil algo"
static const struct op ops[] = {
    {"convbiasact_graph", CONV_BIAS_KEYS, setup_convbiasact_graph, run_convbiasact_graph},
    {"convbiasact", CONV_BIAS_KEYS, setup_convbiasact, run_convbiasact},
};

const struct op_family ops_graph = {ops, ARRAY_LEN(ops)};
