/* ops_graph.c: fused graphs through the backend (graph) API, and ConvBiasAct through the legacy
   cudnnConvolutionBiasActivationForward, so that our fused graphs are timed beside the same graphs
   and the same legacy call of the other cuDNN (the vendor's cuDNN 9 keeps both APIs), and beside
   the plain convolution rows of the same shapes.

   A graph op is an anchor (a forward or backward-data convolution, or a matmul) into a virtual
   tensor, or no anchor (the chain starts from the call's first tensor), then a chain of pointwise
   ops, each taking the running value and at most one of the call's tensors, the last writing the
   output; the intermediates are virtual tensors of the output's shape in float
   (double for f64), as cudnn-frontend builds them. Every tensor of the call is a graph tensor
   (UID: its index + 1) and in the variant pack. The engine is the first configuration of the
   INSTANT heuristic whose plan builds, with its workspace (what a framework takes without
   autotuning); a graph no configuration builds has its status as the row's. The plan names the
   convolution entries it runs when it is finalized, not when it executes: the row's impl is
   taken there (impl_watch_start), and the warm-up adds whatever its execution picks (a matmul).
   - convbiasact_graph: relu(conv(x, w) + bias);
   - convscalebiasaddact_graph: relu(conv(x, w) * scale + bias + z) (ConvScaleBiasAddAct);
   - convbiasscaleact_graph: relu((conv(x, w) + bias) * scale) (ConvBiasScaleAct).
     They take convfwd's keys and tensors (setup_conv: x, filter, y, cross-correlation, one group,
     compute float, or double for f64) plus bias and scale, 1 x K x 1 x 1 in y's layout and type,
     and z shaped as y; algo= is not used by the graphs (setup_conv's legacy choice only sizes the
     legacy workspace). flops as convfwd's (the chain is not counted); bytes = |x| + |filter| +
     |y| + each operand's.
   - matmulbiasact_graph: act(A B + bias), keys dt m n k act (relu|gelu): A = 1 x m x k, B = 1 x
     k x n, C = 1 x m x n, all row-major, bias 1 x 1 x n (one per column), compute float; GELU
     is the pointwise GELU_FWD (the erf form). flops = 2 m n k; bytes = |A| + |B| + |C| + |bias|.
   - scalebiasaddact_graph: relu(x * scale + bias + z), pointwise ops only, keys dt x (a tensor
     spec): z and y shaped as x, scale and bias 1 x C x 1 x 1, all in x's layout and type; bytes
     = |x| + |z| + |y| + |scale| + |bias|.
   - dgraddrelu_graph: relu_bwd(conv_bwd_data(dy, w), x) (DgradDrelu: the ReLU gradient with the
     forward input x), convbwdd's keys and tensors (setup_conv: dx, filter, dy) plus x shaped as
     dx; flops as convbwdd's; bytes = |dx| + |filter| + |dy| + |x|. No epilogue takes either
     chain: ours runs it as a pointwise-chain pass of its own.
   - convbiasact calls cudnnConvolutionBiasActivationForward with alpha1 1, alpha2 0 (z = y, not
     read), ReLU, and setup_conv's algorithm (algo=auto: the v7 heuristic's first).
   The library's cudnnBackendExecute logs the problem string of a graph that is exactly one of
   these (src/graph/replay.c, which knows each graph as built here: a change to one changes what
   it must recognize; tests/check_replay.py runs each form through both). */
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

/* A pointwise op on the running value in, with the call tensor operand (NULL: none), into out.
   RELU_BWD takes in as its gradient dy and operand as the forward input x, and writes dx. */
static cudnnStatus_t pointwise(struct scratch *s, cudnnPointwiseMode_t mode, cudnnDataType_t comp,
                               cudnnBackendDescriptor_t in, cudnnBackendDescriptor_t operand,
                               cudnnBackendDescriptor_t out, cudnnBackendDescriptor_t *op)
{
    cudnnBackendDescriptor_t pw;
    TRY(make(s, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw));
    SET(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    SET(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    TRY(cudnnBackendFinalize(pw));
    TRY(make(s, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, op));
    const bool bwd = mode == CUDNN_POINTWISE_RELU_BWD;
    float one = 1;
    SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
    SET(*op, bwd ? CUDNN_ATTR_OPERATION_POINTWISE_DYDESC : CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in);
    SET(*op, bwd ? CUDNN_ATTR_OPERATION_POINTWISE_DXDESC : CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &out);
    SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
    SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
    if (operand)
        SET(*op, bwd ? CUDNN_ATTR_OPERATION_POINTWISE_XDESC : CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &operand);
    return cudnnBackendFinalize(*op);
}

/* A chain step: the pointwise mode, and the call tensor it takes as its second operand (-1: none). */
struct step {
    cudnnPointwiseMode_t mode;
    int operand;
};

/* The anchors. Each writes the virtual tensor v, of the output's shape. A convolution's tensors
   are setup_conv's (x, filter, y): forward reads x and writes y's shape, backward data reads y (as
   dy) and writes x's shape (dx). */
static cudnnStatus_t convolution(struct scratch *s, bool dgrad, const cudnnBackendDescriptor_t *t,
                                 cudnnBackendDescriptor_t v, cudnnDataType_t comp, const int sp[3],
                                 cudnnBackendDescriptor_t *op)
{
    cudnnBackendDescriptor_t conv;
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
    /* per direction: the attributes of x, w, y, the convolution, alpha and beta */
    static const cudnnBackendAttributeName_t attr[2][6] = {
        {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA}};
    const cudnnBackendAttributeName_t *a = attr[dgrad];
    const cudnnBackendDescriptor_t x = dgrad ? v : t[0], y = dgrad ? t[2] : v;
    TRY(make(s, dgrad ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                      : CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
             op));
    float one = 1, zero = 0;
    SET(*op, a[0], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    SET(*op, a[1], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t[1]);
    SET(*op, a[2], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    SET(*op, a[3], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv);
    SET(*op, a[4], CUDNN_TYPE_FLOAT, 1, &one);
    SET(*op, a[5], CUDNN_TYPE_FLOAT, 1, &zero);
    return cudnnBackendFinalize(*op);
}

static cudnnStatus_t conv_anchor(struct scratch *s, const cudnnBackendDescriptor_t *t,
                                 cudnnBackendDescriptor_t v, cudnnDataType_t comp, const int sp[3],
                                 cudnnBackendDescriptor_t *op)
{
    return convolution(s, false, t, v, comp, sp, op);
}

static cudnnStatus_t dgrad_anchor(struct scratch *s, const cudnnBackendDescriptor_t *t,
                                  cudnnBackendDescriptor_t v, cudnnDataType_t comp, const int sp[3],
                                  cudnnBackendDescriptor_t *op)
{
    return convolution(s, true, t, v, comp, sp, op);
}

static cudnnStatus_t matmul_anchor(struct scratch *s, const cudnnBackendDescriptor_t *t,
                                   cudnnBackendDescriptor_t v, cudnnDataType_t comp, const int sp[3],
                                   cudnnBackendDescriptor_t *op)
{
    (void)sp;
    cudnnBackendDescriptor_t mm;
    TRY(make(s, CUDNN_BACKEND_MATMUL_DESCRIPTOR, &mm));
    SET(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    TRY(cudnnBackendFinalize(mm));
    TRY(make(s, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, op));
    SET(*op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t[0]);
    SET(*op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t[1]);
    SET(*op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
    SET(*op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
    return cudnnBackendFinalize(*op);
}

typedef cudnnStatus_t (*anchor_fn)(struct scratch *s, const cudnnBackendDescriptor_t *t,
                                   cudnnBackendDescriptor_t v, cudnnDataType_t comp, const int sp[3],
                                   cudnnBackendDescriptor_t *op);

enum { MAX_STEPS = 4 };

/* The graph (the anchor's tensors into the anchor, the chain into t[c->out]; without an anchor,
   anchor NULL, the chain starts from t[0]), the heuristic's first configuration that builds, its
   plan and variant pack. */
static cudnnStatus_t build(struct call *c, struct scratch *s, anchor_fn anchor, const int sp[3],
                           const struct step *steps, int nsteps)
{
    struct graph_state *gs = c->state;
    const cudnnDataType_t comp = c->dt->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t t[MAX_TENSORS], v[MAX_STEPS + 1], ops[MAX_STEPS + 1];
    int64_t uids[MAX_TENSORS];
    void *ptrs[MAX_TENSORS];
    for (int i = 0; i < c->ntensors; i++) {
        uids[i] = i + 1, ptrs[i] = c->t[i].data;
        TRY(graph_tensor(s, &c->t[i], uids[i], false, c->t[i].dt->type, &t[i]));
    }
    const int a = anchor != NULL; /* ops before the chain */
    v[0] = t[0];
    for (int i = 1 - a; i < nsteps; i++) TRY(graph_tensor(s, &c->t[c->out], 100 + i, true, comp, &v[i]));
    v[nsteps] = t[c->out];
    if (a) TRY(anchor(s, t, v[0], comp, sp, &ops[0]));
    for (int i = 0; i < nsteps; i++)
        TRY(pointwise(s, steps[i].mode, comp, v[i], steps[i].operand >= 0 ? t[steps[i].operand] : NULL, v[i + 1],
                      &ops[a + i]));
    cudnnBackendDescriptor_t g, heur;
    TRY(make(s, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g));
    SET(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, a + nsteps, ops);
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
        /* the plan picks its convolutions here (its execution logs none): the case's names */
        c->impl[0] = '\0';
        impl_watch_start(c);
        st = cudnnBackendFinalize(gs->plan);
        impl_watch_end();
    }
    if (st != CUDNN_STATUS_SUCCESS) {
        c->impl[0] = '\0';
        return st;
    }
    int64_t ws = 0;
    TRY(cudnnBackendGetAttribute(gs->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws));
    if (ws > 0) gs->workspace = mem_alloc((size_t)ws);
    TRY(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &gs->pack));
    SET(gs->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, c->ntensors, ptrs);
    SET(gs->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, c->ntensors, uids);
    SET(gs->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &gs->workspace);
    return cudnnBackendFinalize(gs->pack);
}

/* Builds the graph op's plan into the call's state (not in a dry run); NULL or the status. */
static const char *setup_graph(struct call *c, anchor_fn anchor, const int sp[3], const struct step *steps,
                               int nsteps)
{
    if (c->dry) return NULL;
    struct graph_state *gs = calloc(1, sizeof *gs);
    if (gs == NULL) return "out of memory";
    c->state = gs;
    c->release = graph_release;
    struct scratch sc = {0};
    cudnnStatus_t st = build(c, &sc, anchor, sp, steps, nsteps);
    for (int i = sc.n - 1; i >= 0; i--) cudnnBackendDestroyDescriptor(sc.d[i]);
    return st == CUDNN_STATUS_SUCCESS ? NULL : cudnnGetErrorString(st);
}

static cudnnStatus_t run_graph(struct call *c)
{
    const struct graph_state *gs = c->state;
    return cudnnBackendExecute(c->handle, gs->plan, gs->pack);
}

/* Adds a chain operand shaped as tensor like (per_channel: 1 x C x 1 x 1, C its dim 1), in its
   layout, and counts its bytes. */
static const char *add_operand(struct call *c, int like, bool per_channel)
{
    const struct tensor *t = &c->t[like];
    char spec[96];
    snprintf(spec, sizeof spec, "%dx%dx%dx%d%s", per_channel ? 1 : t->dims[0], t->dims[1], per_channel ? 1 : t->dims[2],
             per_channel ? 1 : t->dims[3], t->format == CUDNN_TENSOR_NHWC ? ":nhwc" : "");
    /* int8 data take a float bias (cuDNN 8.2's int8 configurations of the fused forward) */
    const struct dtype *dt = per_channel && dtype_is_int8(c->dt) ? dtype_of(CUDNN_DATA_FLOAT) : c->dt;
    const char *why = add_tensor_dt(c, spec, dt);
    if (!why) c->bytes += tensor_bytes(c, c->ntensors - 1);
    return why;
}

/* The convolution of p (setup_conv: x, filter, y, the legacy descriptors and algorithm) plus the
   first n of its chain operands: bias (t[3]) and scale (t[4]), 1 x K x 1 x 1 in y's layout, and z
   (t[5]) shaped as y. */
enum { BIAS = 3, SCALE, Z };
static const char *setup_conv_operands(struct call *c, const struct problem *p, int n)
{
    const char *why = setup_conv(c, p, 0);
    for (int i = BIAS; i < BIAS + n && !why; i++) why = add_operand(c, 2, i != Z);
    return why;
}

static const int *conv_spatial(const struct problem *p, int sp[3])
{
    sp[0] = (int)problem_number(p, "pad"), sp[1] = (int)problem_number(p, "stride"), sp[2] = (int)problem_number(p, "dil");
    return sp;
}

/* A convolution graph op: its operands and its chain. */
static const char *setup_conv_graph(struct call *c, const struct problem *p, int noperands, const struct step *steps,
                                    int nsteps)
{
    int sp[3];
    const char *why = setup_conv_operands(c, p, noperands);
    return why ? why : setup_graph(c, conv_anchor, conv_spatial(p, sp), steps, nsteps);
}

static const char *setup_convbiasact_graph(struct call *c, const struct problem *p)
{
    static const struct step steps[] = {{CUDNN_POINTWISE_ADD, BIAS}, {CUDNN_POINTWISE_RELU_FWD, -1}};
    return setup_conv_graph(c, p, 1, steps, ARRAY_LEN(steps));
}

static const char *setup_convscalebiasaddact_graph(struct call *c, const struct problem *p)
{
    static const struct step steps[] = {{CUDNN_POINTWISE_MUL, SCALE},
                                        {CUDNN_POINTWISE_ADD, BIAS},
                                        {CUDNN_POINTWISE_ADD, Z},
                                        {CUDNN_POINTWISE_RELU_FWD, -1}};
    return setup_conv_graph(c, p, 3, steps, ARRAY_LEN(steps));
}

static const char *setup_convbiasscaleact_graph(struct call *c, const struct problem *p)
{
    static const struct step steps[] = {
        {CUDNN_POINTWISE_ADD, BIAS}, {CUDNN_POINTWISE_MUL, SCALE}, {CUDNN_POINTWISE_RELU_FWD, -1}};
    return setup_conv_graph(c, p, 2, steps, ARRAY_LEN(steps));
}

/* The chain alone: relu(x * scale + bias + z), x (t[0]), z (t[1]) and y (t[2]) of x's spec, bias
   (t[3]) and scale (t[4]) per channel. */
static const char *setup_scalebiasaddact_graph(struct call *c, const struct problem *p)
{
    const char *why = add_tensor(c, p, "x");
    if (!why && c->t[0].nd != 4) why = "x must have 4 dims (N x C x H x W)";
    if (!why) c->bytes = tensor_bytes(c, 0);
    for (int i = 1; i <= SCALE && !why; i++) why = add_operand(c, 0, i >= BIAS); /* z, y, bias, scale */
    if (why) return why;
    c->out = 2;
    static const struct step steps[] = {
        {CUDNN_POINTWISE_MUL, SCALE}, {CUDNN_POINTWISE_ADD, BIAS}, {CUDNN_POINTWISE_ADD, 1}, {CUDNN_POINTWISE_RELU_FWD, -1}};
    return setup_graph(c, NULL, NULL, steps, ARRAY_LEN(steps));
}

/* Backward data, then the ReLU gradient with the forward input (t[3], shaped as dx = t[0]). */
static const char *setup_dgraddrelu_graph(struct call *c, const struct problem *p)
{
    int sp[3];
    const char *why = setup_conv(c, p, 1);
    if (!why) why = add_operand(c, 0, false);
    if (why) return why;
    static const struct step steps[] = {{CUDNN_POINTWISE_RELU_BWD, 3}};
    return setup_graph(c, dgrad_anchor, conv_spatial(p, sp), steps, ARRAY_LEN(steps));
}

static const char *setup_matmulbiasact_graph(struct call *c, const struct problem *p)
{
    static const char *const acts[] = {"relu", "gelu"};
    const int act = problem_choice(p, "act", acts, 2);
    if (act < 0) return "act must be relu or gelu";
    const long m = (long)problem_number(p, "m"), n = (long)problem_number(p, "n"), k = (long)problem_number(p, "k");
    char spec[4][64];
    snprintf(spec[0], sizeof spec[0], "1x%ldx%ld", m, k);
    snprintf(spec[1], sizeof spec[1], "1x%ldx%ld", k, n);
    snprintf(spec[2], sizeof spec[2], "1x%ldx%ld", m, n);
    snprintf(spec[3], sizeof spec[3], "1x1x%ld", n);
    const char *why = NULL;
    for (int i = 0; i < 4 && !why; i++) {
        why = add_tensor_spec(c, spec[i]);
        if (!why) c->bytes += tensor_bytes(c, i);
    }
    if (why) return why;
    c->out = 2;
    c->flops = 2.0 * (double)m * (double)n * (double)k;
    const struct step steps[] = {{CUDNN_POINTWISE_ADD, 3},
                                 {act == 0 ? CUDNN_POINTWISE_RELU_FWD : CUDNN_POINTWISE_GELU_FWD, -1}};
    return setup_graph(c, matmul_anchor, NULL, steps, ARRAY_LEN(steps));
}

static const char *setup_convbiasact(struct call *c, const struct problem *p)
{
    const char *why = setup_conv_operands(c, p, 1);
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

#define CONV_BIAS_KEYS "dt layout n c h w k r s pad stride dil algo [math]"
static const struct op ops[] = {
    {"convbiasact_graph", CONV_BIAS_KEYS, setup_convbiasact_graph, run_graph},
    {"convscalebiasaddact_graph", CONV_BIAS_KEYS, setup_convscalebiasaddact_graph, run_graph},
    {"convbiasscaleact_graph", CONV_BIAS_KEYS, setup_convbiasscaleact_graph, run_graph},
    {"matmulbiasact_graph", "dt m n k act", setup_matmulbiasact_graph, run_graph},
    {"scalebiasaddact_graph", "dt x", setup_scalebiasaddact_graph, run_graph},
    {"dgraddrelu_graph", CONV_BIAS_KEYS, setup_dgraddrelu_graph, run_graph},
    {"convbiasact", CONV_BIAS_KEYS, setup_convbiasact, run_convbiasact},
};

const struct op_family ops_graph = {ops, ARRAY_LEN(ops)};
