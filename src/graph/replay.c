/* replay.c: the benchmark's problem string of an operation graph (ocd_graph_replay), which
   cudnnBackendExecute logs at info level as the legacy calls log theirs (core/check.h), so that
   `opencudnn_bench --replay LOG` runs an executed graph again.

   Main decision: a graph has a string only when it is exactly one of the graphs the benchmark
   builds (bench/ops_graph.c; a row of `forms` each): an anchor (a forward or backward-data
   convolution, a matmul) writing a virtual tensor, or none, then a chain of pointwise ops, each
   taking the running value (X; DY for RELU_BWD) and at most one input of the graph (B; X for
   RELU_BWD), the intermediates virtual tensors of the output's dims in the compute type (float,
   double for f64 data), the last writing the output. Every tensor of the graph is distinct and
   packed in one layout (NCHW or NHWC; row-major for the matmul), every stored one of the output's
   data type; the parameters are the ones the benchmark sets (cross-correlation, 2-D, one pad,
   stride and dilation for both dims, one group, alpha 1 and beta 0 for the anchor, alphas 1 and
   default ReLU clips and NaN propagation for the pointwise ops, batch 1 for the matmul). Anything
   else (another op, mode, type, layout, scaling) would replay as another computation: no string.
   The string is made once, when an execution plan is finalized. */
#include "core/check.h"
#include "graph/graph.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

enum anchor { ANCHOR_NONE, ANCHOR_CONV_FWD, ANCHOR_CONV_BWD_DATA, ANCHOR_MATMUL };

/* A chain step's second operand: none, per channel (1 x C x 1 x 1 of a 4-D output, 1 x 1 x n of
   the matmul's), or shaped as the output. */
enum operand { OPERAND_NONE, OPERAND_CHANNEL, OPERAND_FULL };

#define MAX_STEPS 4

struct form {
    const char *name; /* the benchmark's op= */
    enum anchor anchor;
    int nsteps;
    struct {
        cudnnPointwiseMode_t mode;
        enum operand operand;
    } steps[MAX_STEPS];
};

/* relu(v * scale + bias + z), after a convolution or alone */
#define SCALE_BIAS_ADD_ACT                                                                                  \
    {{CUDNN_POINTWISE_MUL, OPERAND_CHANNEL},                                                                \
     {CUDNN_POINTWISE_ADD, OPERAND_CHANNEL},                                                                \
     {CUDNN_POINTWISE_ADD, OPERAND_FULL},                                                                   \
     {CUDNN_POINTWISE_RELU_FWD, OPERAND_NONE}}

/* bench/ops_graph.c's graphs, with the operands of its setup functions */
static const struct form forms[] = {
    {"convbiasact_graph", ANCHOR_CONV_FWD, 2,
     {{CUDNN_POINTWISE_ADD, OPERAND_CHANNEL}, {CUDNN_POINTWISE_RELU_FWD, OPERAND_NONE}}},
    {"convscalebiasaddact_graph", ANCHOR_CONV_FWD, 4, SCALE_BIAS_ADD_ACT},
    {"convbiasscaleact_graph", ANCHOR_CONV_FWD, 3,
     {{CUDNN_POINTWISE_ADD, OPERAND_CHANNEL},
      {CUDNN_POINTWISE_MUL, OPERAND_CHANNEL},
      {CUDNN_POINTWISE_RELU_FWD, OPERAND_NONE}}},
    {"matmulbiasact_graph", ANCHOR_MATMUL, 2,
     {{CUDNN_POINTWISE_ADD, OPERAND_CHANNEL}, {CUDNN_POINTWISE_RELU_FWD, OPERAND_NONE}}},
    {"matmulbiasact_graph", ANCHOR_MATMUL, 2,
     {{CUDNN_POINTWISE_ADD, OPERAND_CHANNEL}, {CUDNN_POINTWISE_GELU_FWD, OPERAND_NONE}}},
    {"scalebiasaddact_graph", ANCHOR_NONE, 4, SCALE_BIAS_ADD_ACT},
    {"dgraddrelu_graph", ANCHOR_CONV_BWD_DATA, 1, {{CUDNN_POINTWISE_RELU_BWD, OPERAND_FULL}}},
};
#undef SCALE_BIAS_ADD_ACT

static const cudnnBackendDescriptorType_t anchor_kinds[] = {
    [ANCHOR_CONV_FWD] = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
    [ANCHOR_CONV_BWD_DATA] = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
    [ANCHOR_MATMUL] = CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
};

/* What a match fixes: the output, its data type, the compute type and the layout. */
struct match {
    const struct ocd_graph_tensor *out;
    cudnnDataType_t dt, comp;
    bool nhwc;
};

static bool same_dims(const struct ocd_graph_tensor *t, const int64_t *dims, int64_t rank)
{
    if (t->rank != rank) return false;
    for (int64_t d = 0; d < rank; d++)
        if (t->dims[d] != dims[d]) return false;
    return true;
}

/* A tensor with memory, of the match's type, packed in its layout. */
static bool stored(const struct match *m, const struct ocd_graph_tensor *t, int64_t rank)
{
    struct ocd_tensor_view v;
    if (t->is_virtual || t->by_value || t->rank != rank || t->dtype != m->dt ||
        ocd_graph_tensor_view(t, &v) != CUDNN_STATUS_SUCCESS)
        return false;
    return m->nhwc ? ocd_view_is_packed_nhwc(&v) : ocd_view_is_packed_rowmajor(&v);
}

/* An intermediate: virtual, of the output's dims, in the compute type. */
static bool intermediate(const struct match *m, const struct ocd_graph_tensor *t)
{
    return t->is_virtual && t->dtype == m->comp && same_dims(t, m->out->dims, m->out->rank);
}

/* A chain operand of its role, shaped from the output (the channel: dim 1, the matmul's last). */
static bool operand(const struct match *m, const struct ocd_graph_tensor *t, enum operand role, int chan)
{
    int64_t dims[OCD_MAX_DIMS];
    for (int64_t d = 0; d < m->out->rank; d++)
        dims[d] = role == OPERAND_FULL || d == chan ? m->out->dims[d] : 1;
    return stored(m, t, m->out->rank) && same_dims(t, dims, m->out->rank);
}

static bool has(const struct ocd_graph_op *op, int slot)
{
    return (op->present >> slot) & 1u;
}

/* The anchor op: its stored inputs and its virtual output *running. */
static bool anchor_matches(const struct match *m, const struct ocd_graph_op *op, enum anchor a, int64_t *running)
{
    if (a == ANCHOR_MATMUL) {
        const struct ocd_graph_tensor *A = &op->t[OCD_GT_MM_A], *B = &op->t[OCD_GT_MM_B], *C = &op->t[OCD_GT_MM_C];
        *running = C->uid;
        return op->p.mm.comp == m->comp && op->irregular_batch_count == 1 && stored(m, A, 3) && stored(m, B, 3) &&
               intermediate(m, C) && A->dims[0] == 1 && B->dims[0] == 1;
    }
    const struct ocd_graph_conv_desc *c = &op->p.conv;
    const bool fwd = a == ANCHOR_CONV_FWD;
    const struct ocd_graph_tensor *x = &op->t[OCD_GT_CONV_X], *w = &op->t[OCD_GT_CONV_W], *y = &op->t[OCD_GT_CONV_Y];
    *running = fwd ? y->uid : x->uid;
    const bool one_pad = c->pre[0] == c->pre[1] && c->post[0] == c->pre[0] && c->post[1] == c->pre[0];
    return c->comp == m->comp && c->mode == CUDNN_CROSS_CORRELATION && c->nsp == 2 && one_pad &&
           c->stride[0] == c->stride[1] && c->dilation[0] == c->dilation[1] && op->alpha == 1 && op->beta == 0 &&
           stored(m, w, 4) && w->dims[1] == x->dims[1] &&
           (fwd ? stored(m, x, 4) && intermediate(m, y) : stored(m, y, 4) && intermediate(m, x));
}

/* Whether g is form f, laid out as m->nhwc says; m's other fields are set from g's output. */
static bool form_matches(const struct ocd_graph *g, const struct form *f, struct match *m)
{
    const int a = f->anchor != ANCHOR_NONE;
    if (g->n_ops != a + f->nsteps || (m->nhwc && f->anchor == ANCHOR_MATMUL)) return false;
    const struct ocd_graph_op *last = &g->ops[g->n_ops - 1];
    const bool last_bwd = last->kind == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR &&
                          last->p.pw.mode == CUDNN_POINTWISE_RELU_BWD;
    m->out = &last->t[last_bwd ? OCD_GT_PW_DX : OCD_GT_PW_Y];
    m->dt = m->out->dtype;
    m->comp = m->dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    const int64_t rank = f->anchor == ANCHOR_MATMUL ? 3 : 4;
    const int chan = f->anchor == ANCHOR_MATMUL ? 2 : 1;
    int64_t running = g->ops[0].t[OCD_GT_PW_X].uid;
    int tensors = a ? 3 : 1; /* the anchor's, or the chain's first input */
    if (!stored(m, m->out, rank)) return false;
    if (a && (g->ops[0].kind != anchor_kinds[f->anchor] || !anchor_matches(m, &g->ops[0], f->anchor, &running)))
        return false;
    if (!a && !operand(m, &g->ops[0].t[OCD_GT_PW_X], OPERAND_FULL, chan)) return false;
    for (int i = 0; i < f->nsteps; i++) {
        const struct ocd_graph_op *op = &g->ops[a + i];
        const struct ocd_graph_pointwise_desc *pw = &op->p.pw;
        if (op->kind != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR || pw->mode != f->steps[i].mode ||
            pw->math_prec != m->comp || pw->nan != CUDNN_NOT_PROPAGATE_NAN || pw->relu_lower != 0 ||
            pw->relu_upper < DBL_MAX || pw->relu_slope != 0 || op->alpha != 1)
            return false;
        const bool bwd = pw->mode == CUDNN_POINTWISE_RELU_BWD;
        const int in = bwd ? OCD_GT_PW_DY : OCD_GT_PW_X, second = bwd ? OCD_GT_PW_X : OCD_GT_PW_B;
        const int dst = bwd ? OCD_GT_PW_DX : OCD_GT_PW_Y;
        const enum operand role = f->steps[i].operand;
        if (op->t[in].uid != running || has(op, second) != (role != OPERAND_NONE)) return false;
        if (role != OPERAND_NONE && (op->beta != 1 || !operand(m, &op->t[second], role, chan))) return false;
        if (i + 1 < f->nsteps && !intermediate(m, &op->t[dst])) return false;
        running = op->t[dst].uid;
        tensors += (role != OPERAND_NONE) + 1;
    }
    /* one node per tensor named: no tensor is two of the form's */
    return g->n_nodes == tensors;
}

/* The form's string of the matched graph g: its length, as snprintf counts it. */
static int format(const struct ocd_graph *g, const struct form *f, const struct match *m, char *buf, size_t size)
{
    const char *dt = ocd_check_dtype_name(m->dt);
    const struct ocd_graph_op *a = &g->ops[0];
    if (f->anchor == ANCHOR_MATMUL) {
        const int64_t *A = a->t[OCD_GT_MM_A].dims, *B = a->t[OCD_GT_MM_B].dims;
        return snprintf(buf, size, "op=%s dt=%s m=%lld n=%lld k=%lld act=%s", f->name, dt, (long long)A[1],
                        (long long)B[2], (long long)A[2],
                        f->steps[1].mode == CUDNN_POINTWISE_GELU_FWD ? "gelu" : "relu");
    }
    if (f->anchor == ANCHOR_NONE) {
        struct ocd_tensor_view x;
        char spec[96];
        ocd_graph_tensor_view(&a->t[OCD_GT_PW_X], &x);
        ocd_check_tensor_spec(&x, spec, sizeof spec);
        return snprintf(buf, size, "op=%s dt=%s x=%s", f->name, dt, spec);
    }
    const int64_t *x = a->t[OCD_GT_CONV_X].dims, *w = a->t[OCD_GT_CONV_W].dims;
    const struct ocd_graph_conv_desc *c = &a->p.conv;
    return snprintf(buf, size,
                    "op=%s dt=%s layout=%s n=%lld c=%lld h=%lld w=%lld k=%lld r=%lld s=%lld pad=%lld stride=%lld "
                    "dil=%lld algo=auto",
                    f->name, dt, m->nhwc ? "nhwc" : "nchw", (long long)x[0], (long long)x[1], (long long)x[2],
                    (long long)x[3], (long long)w[0], (long long)w[2], (long long)w[3], (long long)c->pre[0],
                    (long long)c->stride[0], (long long)c->dilation[0]);
}

void ocd_graph_replay(const struct ocd_graph *g, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t i = 0; i < OCD_ARRAY_LEN(forms); i++)
        for (int nhwc = 0; nhwc < 2; nhwc++) {
            struct match m = {.nhwc = nhwc};
            if (form_matches(g, &forms[i], &m)) {
                if (format(g, &forms[i], &m, buf, size) >= (int)size) buf[0] = '\0'; /* cut short: none */
                return;
            }
        }
}
