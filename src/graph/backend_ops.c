/* backend_ops.c: the OPERATION_* descriptor kinds: their attribute tables, and finalize, which
   copies the finalized tensors and parameter descriptor each names into the operation's value
   (struct ocd_graph_op) and checks that their shapes form the operation.

   Main decision: one state and one finalize for every operation kind. A tensor attribute's
   table entry carries its slot in ocd_graph_op.t (the getter's parameter), so resolving the
   named tensors, reading them back and the graph's wiring are the same code for all kinds; only
   the shape rules (check_*) are per kind. Statuses: a missing or unfinalized tensor, or shapes
   that do not form the operation, BAD_PARAM; a legal layout this library does not take (a
   grouped convolution with an explicit group dimension, a matmul of rank < 3), NOT_SUPPORTED. */
#include "graph/backend_desc.h"

#include "core/platform.h"

#include <string.h>

struct op_state {
    struct ocd_graph_op op; /* the value */
    cudnnBackendDescriptor_t tensors[OCD_GRAPH_OP_MAX_TENSORS];
    cudnnBackendDescriptor_t param;
};

#define BIT(slot) (1u << (slot))

static unsigned kind_of_mask(uint32_t kinds)
{
    return ocd_lowest_bit(kinds);
}

static cudnnStatus_t get_tensor(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                                int64_t *total, void *out)
{
    const struct ocd_graph_op *op = ocd_bk_state(d);
    *total = 0;
    if (!(op->present & BIT(a->arg))) return CUDNN_STATUS_SUCCESS;
    return ocd_bk_fill_array(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &op->t[a->arg], sizeof op->t[0], 1, req, total, out);
}

static cudnnStatus_t get_param(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                               int64_t *total, void *out)
{
    const struct ocd_graph_op *op = ocd_bk_state(d);
    return ocd_bk_fill_array((cudnnBackendDescriptorType_t)kind_of_mask(a->kinds), &op->p, sizeof op->p, 1, req,
                             total, out);
}

#define TENSOR(NAME, SLOT, FLAGS)                                                               \
    OCD_BK_DESC(NAME, FLAGS, OCD_BK_KIND(CUDNN_BACKEND_TENSOR_DESCRIPTOR), struct op_state, tensors[SLOT], \
                get_tensor, SLOT)
#define PARAM(NAME, KIND)                                                                       \
    OCD_BK_DESC(NAME, OCD_BA_REQUIRED, OCD_BK_KIND(CUDNN_BACKEND_##KIND), struct op_state, param, get_param, 0)
#define REAL(NAME, FIELD) OCD_BK_SCALAR(NAME, DOUBLE, OCD_BA_REAL, struct op_state, op.FIELD)
#define REQ OCD_BA_REQUIRED

/* ---- shape rules ----------------------------------------------------------------------------- */

static bool is_broadcast_of(const struct ocd_graph_tensor *in, const struct ocd_graph_tensor *out)
{
    if (in->rank != out->rank) return false;
    for (int64_t i = 0; i < in->rank; i++) {
        int64_t a = in->dims[i] * (i == 1 ? in->vect_count : 1), b = out->dims[i] * (i == 1 ? out->vect_count : 1);
        if (a != b && a != 1) return false;
    }
    return true;
}

static cudnnStatus_t check_conv(struct ocd_graph_op *op)
{
    const struct ocd_graph_tensor *x = &op->t[OCD_GT_CONV_X], *w = &op->t[OCD_GT_CONV_W], *y = &op->t[OCD_GT_CONV_Y];
    const struct ocd_graph_conv_desc *c = &op->p.conv;
    if (x->rank == c->nsp + 3 && w->rank == c->nsp + 3 && y->rank == c->nsp + 3)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "a grouped convolution with an explicit group dimension");
    if (x->rank != c->nsp + 2 || w->rank != c->nsp + 2 || y->rank != c->nsp + 2)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x, w, y have %lld, %lld, %lld dimensions; %lld spatial dims need %lld",
                        (long long)x->rank, (long long)w->rank, (long long)y->rank, (long long)c->nsp,
                        (long long)c->nsp + 2);
    int64_t cx = ocd_bk_tensor_channels(x), cw = ocd_bk_tensor_channels(w), k = w->dims[0];
    if (cx % cw != 0 || k % (cx / cw) != 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x has %lld channels, w %lld per group and %lld filters: no group count",
                        (long long)cx, (long long)cw, (long long)k);
    if (x->dims[0] != y->dims[0] || ocd_bk_tensor_channels(y) != k)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "y is %lld x %lld, x and w give %lld x %lld", (long long)y->dims[0],
                        (long long)ocd_bk_tensor_channels(y), (long long)x->dims[0], (long long)k);
    for (int64_t i = 0; i < c->nsp; i++) {
        /* the dilated filter's span less one, and the padded input: each must fit 64 bits */
        int64_t reach, padded;
        if (ocd_mul_overflow_i64(w->dims[2 + i] - 1, c->dilation[i], &reach) ||
            ocd_add_overflow_i64(x->dims[2 + i], c->pre[i], &padded) || ocd_add_overflow_i64(padded, c->post[i], &padded))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "spatial dim %lld: the padded input or the dilated filter "
                            "exceeds 64 bits", (long long)i);
        const int64_t room = padded - reach - 1;
        if (room < 0 || room / c->stride[i] + 1 != y->dims[2 + i])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "spatial dim %lld: input %lld, filter %lld, output %lld do not agree",
                            (long long)i, (long long)x->dims[2 + i], (long long)w->dims[2 + i],
                            (long long)y->dims[2 + i]);
    }
    return CUDNN_STATUS_SUCCESS;
}

static bool pw_binary(cudnnPointwiseMode_t m)
{
    return m <= CUDNN_POINTWISE_MAX;
}

static bool pw_backward(cudnnPointwiseMode_t m)
{
    return m >= CUDNN_POINTWISE_RELU_BWD;
}

static cudnnStatus_t check_pointwise(struct ocd_graph_op *op)
{
    cudnnPointwiseMode_t m = op->p.pw.mode;
    uint32_t need = pw_backward(m) ? BIT(OCD_GT_PW_X) | BIT(OCD_GT_PW_DY) | BIT(OCD_GT_PW_DX)
                    : pw_binary(m) ? BIT(OCD_GT_PW_X) | BIT(OCD_GT_PW_B) | BIT(OCD_GT_PW_Y)
                                   : BIT(OCD_GT_PW_X) | BIT(OCD_GT_PW_Y);
    if ((op->present & need) != need)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "pointwise mode %d needs %s", (int)m,
                        pw_backward(m) ? "XDESC, DYDESC and DXDESC"
                        : pw_binary(m) ? "XDESC, BDESC and YDESC"
                                       : "XDESC and YDESC");
    op->present &= need; /* a tensor the mode does not use is not part of the operation */
    int out = pw_backward(m) ? OCD_GT_PW_DX : OCD_GT_PW_Y;
    op->outputs = BIT(out);
    for (int s = 0; s < OCD_GRAPH_OP_MAX_TENSORS; s++) {
        if (s == out || !(op->present & BIT(s))) continue;
        bool ok = s == OCD_GT_PW_DY ? ocd_bk_same_dims(&op->t[s], &op->t[out]) : is_broadcast_of(&op->t[s], &op->t[out]);
        if (!ok)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "pointwise input %d (uid %lld) does not %s the output (uid %lld)",
                            s, (long long)op->t[s].uid, s == OCD_GT_PW_DY ? "have the dims of" : "broadcast to",
                            (long long)op->t[out].uid);
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_matmul(struct ocd_graph_op *op)
{
    const struct ocd_graph_tensor *a = &op->t[OCD_GT_MM_A], *b = &op->t[OCD_GT_MM_B], *c = &op->t[OCD_GT_MM_C];
    if (a->rank < 3 || b->rank < 3 || c->rank < 3)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "matmul tensors have rank %lld, %lld, %lld; 3 or more is taken",
                        (long long)a->rank, (long long)b->rank, (long long)c->rank);
    if (a->rank != b->rank || a->rank != c->rank)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "matmul tensors have ranks %lld, %lld, %lld", (long long)a->rank,
                        (long long)b->rank, (long long)c->rank);
    int64_t r = a->rank, m = a->dims[r - 2], k = a->dims[r - 1], n = b->dims[r - 1];
    if (b->dims[r - 2] != k || c->dims[r - 2] != m || c->dims[r - 1] != n)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "A is %lld x %lld, B %lld x %lld, C %lld x %lld", (long long)m,
                        (long long)k, (long long)b->dims[r - 2], (long long)n, (long long)c->dims[r - 2],
                        (long long)c->dims[r - 1]);
    for (int64_t i = 0; i < r - 2; i++) {
        if ((a->dims[i] != c->dims[i] && a->dims[i] != 1) || (b->dims[i] != c->dims[i] && b->dims[i] != 1))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "batch dim %lld: A %lld, B %lld, C %lld", (long long)i,
                            (long long)a->dims[i], (long long)b->dims[i], (long long)c->dims[i]);
    }
    if (op->irregular_batch_count < 1)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "irregularly strided batch count %lld",
                        (long long)op->irregular_batch_count);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_reduction(struct ocd_graph_op *op)
{
    if (!is_broadcast_of(&op->t[OCD_GT_RED_Y], &op->t[OCD_GT_RED_X]))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "each dim of the reduction's y must be x's or 1");
    return CUDNN_STATUS_SUCCESS;
}

/* A per-channel tensor of x: x's rank, x's channels, every other dim 1. */
static bool per_channel_of(const struct ocd_graph_tensor *t, const struct ocd_graph_tensor *x)
{
    if (t->rank != x->rank || ocd_bk_tensor_channels(t) != ocd_bk_tensor_channels(x)) return false;
    for (int64_t i = 0; i < t->rank; i++)
        if (i != 1 && t->dims[i] != 1) return false;
    return true;
}

static cudnnStatus_t check_per_channel(const struct ocd_graph_op *op, uint32_t slots, const struct ocd_graph_tensor *x)
{
    for (int s = 0; s < OCD_GRAPH_OP_MAX_TENSORS; s++) {
        if ((slots & op->present & BIT(s)) && !per_channel_of(&op->t[s], x))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "tensor uid %lld is not 1 x %lld x 1 ... like its operation's input",
                            (long long)op->t[s].uid, (long long)ocd_bk_tensor_channels(x));
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_gen_stats(struct ocd_graph_op *op)
{
    return check_per_channel(op, BIT(OCD_GT_GS_SUM) | BIT(OCD_GT_GS_SQSUM), &op->t[OCD_GT_GS_X]);
}

static bool is_scalar(const struct ocd_graph_tensor *t)
{
    for (int64_t i = 0; i < t->rank; i++)
        if (t->dims[i] * (i == 1 ? t->vect_count : 1) != 1) return false;
    return true;
}

/* Which optional tensors a finalize needs, pairs set together: the sums and their count (training),
   the running statistics (read in inference, read and updated in training), the updated ones with
   an averaging factor, the saved ones. */
static cudnnStatus_t check_bn_finalize_parts(const struct ocd_graph_op *op)
{
    static const int pairs[][2] = {{OCD_GT_BNF_PREV_MEAN, OCD_GT_BNF_PREV_VAR},
                                   {OCD_GT_BNF_UPDATED_MEAN, OCD_GT_BNF_UPDATED_VAR},
                                   {OCD_GT_BNF_SAVED_MEAN, OCD_GT_BNF_SAVED_INV_STD}};
    for (size_t i = 0; i < OCD_ARRAY_LEN(pairs); i++)
        if (!(op->present & BIT(pairs[i][0])) != !(op->present & BIT(pairs[i][1])))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "BN finalize: the %s mean and variance are set together",
                            i == 0 ? "previous running" : i == 1 ? "updated running" : "saved");
    const bool prev = op->present & BIT(OCD_GT_BNF_PREV_MEAN);
    const uint32_t sums = BIT(OCD_GT_BNF_Y_SUM) | BIT(OCD_GT_BNF_Y_SQ_SUM) | BIT(OCD_GT_BNF_ACCUM_COUNT);
    if (op->p.bn_finalize == CUDNN_BN_FINALIZE_STATISTICS_INFERENCE && !prev)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "BN finalize in inference needs the running mean and variance");
    if (op->p.bn_finalize == CUDNN_BN_FINALIZE_STATISTICS_TRAINING && (op->present & sums) != sums)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "BN finalize in training needs the sums and their element count");
    if ((op->present & BIT(OCD_GT_BNF_UPDATED_MEAN)) &&
        (!prev || !(op->present & BIT(OCD_GT_BNF_EXP_AVG_FACTOR))))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "BN finalize updates the running statistics from the previous ones and an averaging factor");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_bn_finalize(struct ocd_graph_op *op)
{
    OCD_TRY(check_bn_finalize_parts(op));
    uint32_t scalars = BIT(OCD_GT_BNF_ACCUM_COUNT) | BIT(OCD_GT_BNF_EPSILON) | BIT(OCD_GT_BNF_EXP_AVG_FACTOR);
    for (int s = 0; s < OCD_GRAPH_OP_MAX_TENSORS; s++) {
        if (!(op->present & BIT(s))) continue;
        const struct ocd_graph_tensor *t = &op->t[s];
        if ((scalars & BIT(s)) ? !is_scalar(t) : !ocd_bk_same_dims(t, &op->t[OCD_GT_BNF_SCALE]))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "tensor uid %lld: %s", (long long)t->uid,
                            (scalars & BIT(s)) ? "a scalar parameter has more than one element"
                                               : "a per-channel tensor differs from SCALE_DESC");
    }
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_bn_bwd_weights(struct ocd_graph_op *op)
{
    const struct ocd_graph_tensor *x = &op->t[OCD_GT_BNW_X];
    if (!ocd_bk_same_dims(&op->t[OCD_GT_BNW_DY], x))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dy and x differ in dims");
    return check_per_channel(op, op->present & ~(BIT(OCD_GT_BNW_X) | BIT(OCD_GT_BNW_DY)), x);
}

/* ---- the kinds ------------------------------------------------------------------------------- */

/* What finalize does for every kind: copy the named tensors and parameter descriptor, then the
   kind's shape rule. */
struct op_kind {
    uint32_t outputs; /* slots the operation writes */
    cudnnStatus_t (*check)(struct ocd_graph_op *op);
};

static const struct op_kind op_kinds[OCD_BK_KINDS] = {
    [CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR] = {BIT(OCD_GT_CONV_Y), check_conv},
    [CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR] = {BIT(OCD_GT_CONV_X), check_conv},
    [CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR] = {BIT(OCD_GT_CONV_W), check_conv},
    [CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR] = {0, check_pointwise}, /* by mode */
    [CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR] = {BIT(OCD_GT_MM_C), check_matmul},
    [CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR] = {BIT(OCD_GT_RED_Y), check_reduction},
    [CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR] = {BIT(OCD_GT_GS_SUM) | BIT(OCD_GT_GS_SQSUM), check_gen_stats},
    [CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR] =
        {BIT(OCD_GT_BNF_UPDATED_MEAN) | BIT(OCD_GT_BNF_UPDATED_VAR) | BIT(OCD_GT_BNF_SAVED_MEAN) |
             BIT(OCD_GT_BNF_SAVED_INV_STD) | BIT(OCD_GT_BNF_EQ_SCALE) | BIT(OCD_GT_BNF_EQ_BIAS),
         check_bn_finalize},
    [CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR] =
        {BIT(OCD_GT_BNW_DSCALE) | BIT(OCD_GT_BNW_DBIAS) | BIT(OCD_GT_BNW_EQ_DY_SCALE) | BIT(OCD_GT_BNW_EQ_X_SCALE) |
             BIT(OCD_GT_BNW_EQ_BIAS),
         check_bn_bwd_weights},
};

static cudnnStatus_t op_finalize(struct ocd_bk_desc *d)
{
    struct op_state *st = ocd_bk_state(d);
    struct ocd_graph_op *op = &st->op;
    op->present = 0;
    op->outputs = op_kinds[d->type->kind].outputs;
    for (size_t i = 0; i < d->type->n_attrs; i++) {
        const struct ocd_bk_attr *a = &d->type->attrs[i];
        if (a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR || !(d->set >> i & 1u)) continue;
        const void *value;
        if (a->get == get_tensor) {
            OCD_TRY(ocd_bk_child(st->tensors[a->arg], a->kinds, a->label, &value));
            op->t[a->arg] = *(const struct ocd_graph_tensor *)value;
            op->present |= BIT(a->arg);
        } else {
            cudnnBackendDescriptorType_t kind = (cudnnBackendDescriptorType_t)kind_of_mask(a->kinds);
            OCD_TRY(ocd_bk_child(st->param, a->kinds, a->label, &value));
            memcpy(&op->p, value, OCD_MIN(sizeof op->p, ocd_bk_type_value_size(kind)));
        }
    }
    OCD_TRY(op_kinds[d->type->kind].check(op));
    for (int s = 0; s < OCD_GRAPH_OP_MAX_TENSORS; s++) {
        if ((op->outputs & op->present & BIT(s)) && op->t[s].by_value)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "output tensor uid %lld is passed by value", (long long)op->t[s].uid);
    }
    return CUDNN_STATUS_SUCCESS;
}

#define OP_INIT(NAME, KIND, ALPHA, BETA)                                                        \
    static void NAME(void *state)                                                               \
    {                                                                                           \
        struct ocd_graph_op *op = state;                                                        \
        op->kind = CUDNN_BACKEND_##KIND;                                                        \
        op->alpha = (ALPHA);                                                                    \
        op->beta = (BETA);                                                                      \
        op->irregular_batch_count = 1;                                                          \
    }
#define OP_TYPE(KIND, NAME, ATTRS, INIT)                                                        \
    OCD_BK_TYPE(KIND, NAME, struct op_state, struct ocd_graph_op, ATTRS, INIT, op_finalize, NULL, NULL)

/* convolutions: alpha 1, beta 0 */
static const struct ocd_bk_attr conv_fwd_attrs[] = {
    TENSOR(OPERATION_CONVOLUTION_FORWARD_X, OCD_GT_CONV_X, REQ),
    TENSOR(OPERATION_CONVOLUTION_FORWARD_W, OCD_GT_CONV_W, REQ),
    TENSOR(OPERATION_CONVOLUTION_FORWARD_Y, OCD_GT_CONV_Y, REQ),
    PARAM(OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CONVOLUTION_DESCRIPTOR),
    REAL(OPERATION_CONVOLUTION_FORWARD_ALPHA, alpha),
    REAL(OPERATION_CONVOLUTION_FORWARD_BETA, beta),
};
OP_INIT(conv_fwd_init, OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, 1.0, 0.0)
const struct ocd_bk_type ocd_bk_conv_fwd_type =
    OP_TYPE(OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, "OPERATION_CONVOLUTION_FORWARD", conv_fwd_attrs, conv_fwd_init);

static const struct ocd_bk_attr conv_bwd_data_attrs[] = {
    TENSOR(OPERATION_CONVOLUTION_BWD_DATA_DX, OCD_GT_CONV_X, REQ),
    TENSOR(OPERATION_CONVOLUTION_BWD_DATA_W, OCD_GT_CONV_W, REQ),
    TENSOR(OPERATION_CONVOLUTION_BWD_DATA_DY, OCD_GT_CONV_Y, REQ),
    PARAM(OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CONVOLUTION_DESCRIPTOR),
    REAL(OPERATION_CONVOLUTION_BWD_DATA_ALPHA, alpha),
    REAL(OPERATION_CONVOLUTION_BWD_DATA_BETA, beta),
};
OP_INIT(conv_bwd_data_init, OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, 1.0, 0.0)
const struct ocd_bk_type ocd_bk_conv_bwd_data_type = OP_TYPE(
    OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, "OPERATION_CONVOLUTION_BACKWARD_DATA", conv_bwd_data_attrs,
    conv_bwd_data_init);

static const struct ocd_bk_attr conv_bwd_filter_attrs[] = {
    TENSOR(OPERATION_CONVOLUTION_BWD_FILTER_X, OCD_GT_CONV_X, REQ),
    TENSOR(OPERATION_CONVOLUTION_BWD_FILTER_DW, OCD_GT_CONV_W, REQ),
    TENSOR(OPERATION_CONVOLUTION_BWD_FILTER_DY, OCD_GT_CONV_Y, REQ),
    PARAM(OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CONVOLUTION_DESCRIPTOR),
    REAL(OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, alpha),
    REAL(OPERATION_CONVOLUTION_BWD_FILTER_BETA, beta),
};
OP_INIT(conv_bwd_filter_init, OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, 1.0, 0.0)
const struct ocd_bk_type ocd_bk_conv_bwd_filter_type = OP_TYPE(
    OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, "OPERATION_CONVOLUTION_BACKWARD_FILTER", conv_bwd_filter_attrs,
    conv_bwd_filter_init);

/* pointwise: alpha1 (alpha) and alpha2 (beta) both 1; which tensors are needed depends on the mode */
static const struct ocd_bk_attr op_pointwise_attrs[] = {
    PARAM(OPERATION_POINTWISE_PW_DESCRIPTOR, POINTWISE_DESCRIPTOR),
    TENSOR(OPERATION_POINTWISE_XDESC, OCD_GT_PW_X, REQ),
    TENSOR(OPERATION_POINTWISE_BDESC, OCD_GT_PW_B, 0),
    TENSOR(OPERATION_POINTWISE_YDESC, OCD_GT_PW_Y, 0),
    TENSOR(OPERATION_POINTWISE_DYDESC, OCD_GT_PW_DY, 0),
    TENSOR(OPERATION_POINTWISE_DXDESC, OCD_GT_PW_DX, 0),
    REAL(OPERATION_POINTWISE_ALPHA1, alpha),
    REAL(OPERATION_POINTWISE_ALPHA2, beta),
};
OP_INIT(op_pointwise_init, OPERATION_POINTWISE_DESCRIPTOR, 1.0, 1.0)
const struct ocd_bk_type ocd_bk_op_pointwise_type =
    OP_TYPE(OPERATION_POINTWISE_DESCRIPTOR, "OPERATION_POINTWISE", op_pointwise_attrs, op_pointwise_init);

static const struct ocd_bk_attr op_matmul_attrs[] = {
    TENSOR(OPERATION_MATMUL_ADESC, OCD_GT_MM_A, REQ),
    TENSOR(OPERATION_MATMUL_BDESC, OCD_GT_MM_B, REQ),
    TENSOR(OPERATION_MATMUL_CDESC, OCD_GT_MM_C, REQ),
    PARAM(OPERATION_MATMUL_DESC, MATMUL_DESCRIPTOR),
    OCD_BK_SCALAR(OPERATION_MATMUL_IRREGULARLY_STRIDED_BATCH_COUNT, INT64, 0, struct op_state, op.irregular_batch_count),
};
OP_INIT(op_matmul_init, OPERATION_MATMUL_DESCRIPTOR, 1.0, 0.0)
const struct ocd_bk_type ocd_bk_op_matmul_type =
    OP_TYPE(OPERATION_MATMUL_DESCRIPTOR, "OPERATION_MATMUL", op_matmul_attrs, op_matmul_init);

static const struct ocd_bk_attr op_reduction_attrs[] = {
    TENSOR(OPERATION_REDUCTION_XDESC, OCD_GT_RED_X, REQ),
    TENSOR(OPERATION_REDUCTION_YDESC, OCD_GT_RED_Y, REQ),
    PARAM(OPERATION_REDUCTION_DESC, REDUCTION_DESCRIPTOR),
};
OP_INIT(op_reduction_init, OPERATION_REDUCTION_DESCRIPTOR, 1.0, 0.0)
const struct ocd_bk_type ocd_bk_op_reduction_type =
    OP_TYPE(OPERATION_REDUCTION_DESCRIPTOR, "OPERATION_REDUCTION", op_reduction_attrs, op_reduction_init);

static const struct ocd_bk_attr op_gen_stats_attrs[] = {
    OCD_BK_SCALAR(OPERATION_GENSTATS_MODE, GENSTATS_MODE, REQ, struct op_state, op.p.genstats),
    OCD_BK_SCALAR(OPERATION_GENSTATS_MATH_PREC, DATA_TYPE, REQ, struct op_state, op.math_prec),
    TENSOR(OPERATION_GENSTATS_XDESC, OCD_GT_GS_X, REQ),
    TENSOR(OPERATION_GENSTATS_SUMDESC, OCD_GT_GS_SUM, REQ),
    TENSOR(OPERATION_GENSTATS_SQSUMDESC, OCD_GT_GS_SQSUM, REQ),
};
OP_INIT(op_gen_stats_init, OPERATION_GEN_STATS_DESCRIPTOR, 1.0, 0.0)
const struct ocd_bk_type ocd_bk_op_gen_stats_type =
    OP_TYPE(OPERATION_GEN_STATS_DESCRIPTOR, "OPERATION_GEN_STATS", op_gen_stats_attrs, op_gen_stats_init);

static const struct ocd_bk_attr op_bn_finalize_attrs[] = {
    OCD_BK_SCALAR(OPERATION_BN_FINALIZE_STATS_MODE, BN_FINALIZE_STATS_MODE, REQ, struct op_state, op.p.bn_finalize),
    OCD_BK_SCALAR(OPERATION_BN_FINALIZE_MATH_PREC, DATA_TYPE, REQ, struct op_state, op.math_prec),
    TENSOR(OPERATION_BN_FINALIZE_Y_SUM_DESC, OCD_GT_BNF_Y_SUM, 0),
    TENSOR(OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC, OCD_GT_BNF_Y_SQ_SUM, 0),
    TENSOR(OPERATION_BN_FINALIZE_SCALE_DESC, OCD_GT_BNF_SCALE, REQ),
    TENSOR(OPERATION_BN_FINALIZE_BIAS_DESC, OCD_GT_BNF_BIAS, REQ),
    TENSOR(OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC, OCD_GT_BNF_PREV_MEAN, 0),
    TENSOR(OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC, OCD_GT_BNF_PREV_VAR, 0),
    TENSOR(OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC, OCD_GT_BNF_UPDATED_MEAN, 0),
    TENSOR(OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC, OCD_GT_BNF_UPDATED_VAR, 0),
    TENSOR(OPERATION_BN_FINALIZE_SAVED_MEAN_DESC, OCD_GT_BNF_SAVED_MEAN, 0),
    TENSOR(OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC, OCD_GT_BNF_SAVED_INV_STD, 0),
    TENSOR(OPERATION_BN_FINALIZE_EQ_SCALE_DESC, OCD_GT_BNF_EQ_SCALE, REQ),
    TENSOR(OPERATION_BN_FINALIZE_EQ_BIAS_DESC, OCD_GT_BNF_EQ_BIAS, REQ),
    TENSOR(OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC, OCD_GT_BNF_ACCUM_COUNT, 0),
    TENSOR(OPERATION_BN_FINALIZE_EPSILON_DESC, OCD_GT_BNF_EPSILON, REQ),
    TENSOR(OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC, OCD_GT_BNF_EXP_AVG_FACTOR, 0),
};
OP_INIT(op_bn_finalize_init, OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR, 1.0, 0.0)
const struct ocd_bk_type ocd_bk_op_bn_finalize_type =
    OP_TYPE(OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR, "OPERATION_BN_FINALIZE_STATISTICS", op_bn_finalize_attrs,
            op_bn_finalize_init);

static const struct ocd_bk_attr op_bn_bwd_weights_attrs[] = {
    OCD_BK_SCALAR(OPERATION_BN_BWD_WEIGHTS_MATH_PREC, DATA_TYPE, REQ, struct op_state, op.math_prec),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_MEAN_DESC, OCD_GT_BNW_MEAN, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC, OCD_GT_BNW_INVSTD, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC, OCD_GT_BNW_SCALE, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_X_DESC, OCD_GT_BNW_X, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_DY_DESC, OCD_GT_BNW_DY, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC, OCD_GT_BNW_DSCALE, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC, OCD_GT_BNW_DBIAS, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC, OCD_GT_BNW_EQ_DY_SCALE, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC, OCD_GT_BNW_EQ_X_SCALE, REQ),
    TENSOR(OPERATION_BN_BWD_WEIGHTS_EQ_BIAS, OCD_GT_BNW_EQ_BIAS, REQ),
};
OP_INIT(op_bn_bwd_weights_init, OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR, 1.0, 0.0)
const struct ocd_bk_type ocd_bk_op_bn_bwd_weights_type =
    OP_TYPE(OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR, "OPERATION_BN_BWD_WEIGHTS", op_bn_bwd_weights_attrs,
            op_bn_bwd_weights_init);

const char *ocd_graph_op_name(cudnnBackendDescriptorType_t kind)
{
    switch (kind) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR: return "ConvFwd";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR: return "ConvBwdData";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR: return "ConvBwdFilter";
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: return "Pointwise";
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR: return "Matmul";
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR: return "Reduction";
    case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR: return "GenStats";
    case CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR: return "BnFinalizeStats";
    case CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR: return "BnBwdWeights";
    default: return "NotAnOperation";
    }
}
