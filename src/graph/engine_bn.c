/* engine_bn.c: the stages of the backend API's batch-norm operations, for the plan builder
   (engine_plan.c): OPERATION_BN_FINALIZE_STATISTICS is one channel pass, and
   OPERATION_BN_BWD_WEIGHTS a sums pass followed by a channel pass.

   Main decision: no new math over the data. The sums pass of BN_BWD_WEIGHTS is the batch-norm
   backward problem of the legacy API (problem/batchnorm.h: dscale = sum dy * xhat, dbias = sum dy,
   from the saved mean and invstd) run through its implementation table, whose data gradient goes
   to the plan's workspace, unused: the operation's outputs are the gradient's coefficients, which
   the channel pass (problem/bn_finalize.h) computes from those sums, as it computes the
   statistics, running averages and equivalent scale and bias of BN_FINALIZE_STATISTICS from the
   sums a GEN_STATS pass made. Per-channel tensors are 1 x C x 1 ... of any type the kernels store
   and any channel stride; the scalars (epsilon, the averaging factor, the element count) are
   1 x 1 ... tensors, in device memory or, by value, in host memory read when Execute binds the
   plan. */
#include "graph/engine.h"

#include "core/dtype.h"

#include <string.h>

static const struct ocd_impl bnf_impls[] = {
#ifdef OCD_HAVE_CUDA
    {"cuda:bn_finalize", OCD_BACKEND_CUDA, -1, NULL, NULL, ocd_cuda_bn_finalize, NULL},
#endif
    {"host:bn_finalize", OCD_BACKEND_HOST, -1, NULL, NULL, ocd_host_bn_finalize, NULL},
};

/* The op's tensor slot behind each operand of the channel pass, per operation kind (-1: none). */
static void operand_tensors(const struct ocd_graph_op *op, int tensor_of[OCD_BNF_SLOTS])
{
    for (int s = 0; s < OCD_BNF_SLOTS; s++) tensor_of[s] = -1;
    if (op->kind == CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR) {
        tensor_of[OCD_BNF_SCALE] = OCD_GT_BNW_SCALE;
        tensor_of[OCD_BNF_MEAN] = OCD_GT_BNW_MEAN;
        tensor_of[OCD_BNF_INV_STD] = OCD_GT_BNW_INVSTD;
        tensor_of[OCD_BNF_DSCALE] = OCD_GT_BNW_DSCALE;
        tensor_of[OCD_BNF_DBIAS] = OCD_GT_BNW_DBIAS;
        tensor_of[OCD_BNF_EQ_SCALE] = OCD_GT_BNW_EQ_DY_SCALE;
        tensor_of[OCD_BNF_EQ_X_SCALE] = OCD_GT_BNW_EQ_X_SCALE;
        tensor_of[OCD_BNF_EQ_BIAS] = OCD_GT_BNW_EQ_BIAS;
        return;
    }
    static const int finalize[][2] = {
        {OCD_BNF_SUM, OCD_GT_BNF_Y_SUM}, {OCD_BNF_SQ_SUM, OCD_GT_BNF_Y_SQ_SUM}, {OCD_BNF_SCALE, OCD_GT_BNF_SCALE},
        {OCD_BNF_BIAS, OCD_GT_BNF_BIAS}, {OCD_BNF_PREV_MEAN, OCD_GT_BNF_PREV_MEAN}, {OCD_BNF_PREV_VAR, OCD_GT_BNF_PREV_VAR},
        {OCD_BNF_EPSILON, OCD_GT_BNF_EPSILON}, {OCD_BNF_FACTOR, OCD_GT_BNF_EXP_AVG_FACTOR},
        {OCD_BNF_COUNT, OCD_GT_BNF_ACCUM_COUNT}, {OCD_BNF_UPDATED_MEAN, OCD_GT_BNF_UPDATED_MEAN},
        {OCD_BNF_UPDATED_VAR, OCD_GT_BNF_UPDATED_VAR}, {OCD_BNF_SAVED_MEAN, OCD_GT_BNF_SAVED_MEAN},
        {OCD_BNF_SAVED_INV_STD, OCD_GT_BNF_SAVED_INV_STD}, {OCD_BNF_EQ_SCALE, OCD_GT_BNF_EQ_SCALE},
        {OCD_BNF_EQ_BIAS, OCD_GT_BNF_EQ_BIAS}};
    const bool training = op->p.bn_finalize == CUDNN_BN_FINALIZE_STATISTICS_TRAINING;
    for (size_t i = 0; i < OCD_ARRAY_LEN(finalize); i++) {
        const int s = finalize[i][0];
        /* inference reads only the running statistics, scale, bias and epsilon, and writes only
           the equivalent scale and bias */
        const bool used = training || s == OCD_BNF_SCALE || s == OCD_BNF_BIAS || s == OCD_BNF_PREV_MEAN ||
                          s == OCD_BNF_PREV_VAR || s == OCD_BNF_EPSILON || s == OCD_BNF_EQ_SCALE || s == OCD_BNF_EQ_BIAS;
        if (used && (op->present & (1u << finalize[i][1]))) tensor_of[s] = finalize[i][1];
    }
}

static bool storable(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

static bool scalar_type(cudnnDataType_t t)
{
    return storable(t) || t == CUDNN_DATA_INT32 || t == CUDNN_DATA_INT64;
}

cudnnStatus_t ocd_engine_bnf_problem(const struct ocd_graph_op *op, struct ocd_bnf_problem *p, int tensor_of[OCD_BNF_SLOTS])
{
    memset(p, 0, sizeof *p);
    operand_tensors(op, tensor_of);
    const bool weights = op->kind == CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR;
    p->mode = weights ? OCD_BNF_WEIGHTS
              : op->p.bn_finalize == CUDNN_BN_FINALIZE_STATISTICS_TRAINING ? OCD_BNF_TRAINING
                                                                           : OCD_BNF_INFERENCE;
    const struct ocd_graph_tensor *chan = &op->t[weights ? OCD_GT_BNW_SCALE : OCD_GT_BNF_SCALE];
    p->channels = chan->dims[1] * chan->vect_count;
    if (weights) {
        const struct ocd_graph_tensor *x = &op->t[OCD_GT_BNW_X];
        p->reduced = 1;
        for (int64_t d = 0; d < x->rank; d++) p->reduced *= d == 1 ? 1 : (double)x->dims[d];
    }
    for (int s = 0; s < OCD_BNF_SLOTS; s++) {
        if (tensor_of[s] < 0) continue;
        const struct ocd_graph_tensor *t = &op->t[tensor_of[s]];
        const bool scalar = s == OCD_BNF_EPSILON || s == OCD_BNF_FACTOR || s == OCD_BNF_COUNT;
        if (t->vect_count != 1 || !(scalar ? scalar_type(t->dtype) : storable(t->dtype)))
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s tensor uid %lld: type %s is not supported here",
                            ocd_graph_op_name(op->kind), (long long)t->uid, ocd_dtype_name(t->dtype));
        if (t->by_value && !scalar)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s tensor uid %lld: only the scalars may be passed by value",
                            ocd_graph_op_name(op->kind), (long long)t->uid);
        p->t[s].dtype = t->dtype;
        p->t[s].stride = scalar || t->rank < 2 ? 0 : t->strides[1];
        p->t[s].immediate = t->by_value;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* A by-value scalar of type t at host address v. */
static double host_scalar(cudnnDataType_t t, const void *v)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return *(const float *)v;
    case CUDNN_DATA_DOUBLE: return *(const double *)v;
    case CUDNN_DATA_HALF: return ocd_half_to_float(*(const uint16_t *)v);
    case CUDNN_DATA_BFLOAT16: return ocd_bf16_to_float(*(const uint16_t *)v);
    case CUDNN_DATA_INT32: return *(const int32_t *)v;
    default: return (double)*(const int64_t *)v;
    }
}

void ocd_engine_bnf_bind(struct ocd_bnf_problem *p, void *const ptr[OCD_BNF_SLOTS])
{
    for (int s = 0; s < OCD_BNF_SLOTS; s++) {
        struct ocd_bnf_operand *o = &p->t[s];
        if (o->immediate) o->value = host_scalar(o->dtype, ptr[s]);
        else o->data = ptr[s];
    }
}

cudnnStatus_t ocd_engine_bnf_run(cudnnHandle_t handle, const struct ocd_bnf_problem *p, const char *op)
{
    return ocd_impl_run(handle, bnf_impls, OCD_ARRAY_LEN(bnf_impls), p, op);
}

/* The per-channel view of a tensor of the sums pass: the BN engine takes one view for scale,
   dscale and dbias, one for mean and invstd. */
static cudnnStatus_t same_channels(const struct ocd_graph_op *op, int a, int b)
{
    const struct ocd_graph_tensor *s = &op->t[a], *t = &op->t[b];
    if (s->dtype != t->dtype || (s->dims[1] > 1 && s->strides[1] != t->strides[1]))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "BN_BWD_WEIGHTS: tensors uid %lld and %lld differ in type or channel stride",
                        (long long)s->uid, (long long)t->uid);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_engine_bn_sums_problem(const struct ocd_graph_op *op, const struct ocd_tensor_view *x,
                                         const struct ocd_tensor_view *dy, struct ocd_bn_problem *p)
{
    memset(p, 0, sizeof *p);
    if (x->rank < 4 || x->rank > 5 || x->vect != 1)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "BN_BWD_WEIGHTS runs x of rank 4 or 5, not %d", x->rank);
    if (!storable(x->dtype) || dy->dtype != x->dtype)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "BN_BWD_WEIGHTS runs x and dy of one type of float, double, half "
                        "or bfloat16, not %s and %s", ocd_dtype_name(x->dtype), ocd_dtype_name(dy->dtype));
    const cudnnDataType_t ptype = x->dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    if (op->t[OCD_GT_BNW_SCALE].dtype != ptype || op->t[OCD_GT_BNW_MEAN].dtype != ptype)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "BN_BWD_WEIGHTS of %s data takes %s scale and statistics",
                        ocd_dtype_name(x->dtype), ocd_dtype_name(ptype));
    OCD_TRY(same_channels(op, OCD_GT_BNW_SCALE, OCD_GT_BNW_DSCALE));
    OCD_TRY(same_channels(op, OCD_GT_BNW_SCALE, OCD_GT_BNW_DBIAS));
    OCD_TRY(same_channels(op, OCD_GT_BNW_MEAN, OCD_GT_BNW_INVSTD));
    p->dir = OCD_BN_BACKWARD;
    p->ops = OCD_BN_OPS_NORM;
    p->dtype = x->dtype;
    p->ptype = ptype;
    p->x = *x;
    p->y = *x;
    p->dy = *dy;
    p->dx = *x; /* the unused data gradient, in the workspace in x's layout */
    OCD_TRY(ocd_graph_tensor_view(&op->t[OCD_GT_BNW_SCALE], &p->param));
    OCD_TRY(ocd_graph_tensor_view(&op->t[OCD_GT_BNW_MEAN], &p->stat));
    if (p->param.rank != x->rank || p->stat.rank != x->rank)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "BN_BWD_WEIGHTS: per-channel tensors of x's rank");
    p->alpha = 1, p->beta = 0, p->alpha_param = 1, p->beta_param = 0;
    p->epsilon = CUDNN_BN_MIN_EPSILON; /* unused: the saved statistics are given */
    p->slots = x->dims[1];
    p->reduced = x->dims[0];
    for (int d = 2; d < x->rank; d++) p->reduced *= x->dims[d];
    return CUDNN_STATUS_SUCCESS;
}
