/* batchnorm.c: the normalization engine's front half (batchnorm.h): argument validation shared
   by every batch-normalization and 8.x normalization call, the implementation table, and the
   inference-library entry points cudnnDeriveBNTensorDescriptor and
   cudnnBatchNormalizationForwardInference.

   Validation follows the cuDNN 8.2 lists (research notes, nn-ops.md 7.4 and 8.2): BAD_PARAM for
   a NULL required pointer, x/y/dy/dx ranks outside [4,5], dims or types that differ between the
   data tensors, per-slot descriptors of the wrong shape for the mode, a save or running pair with
   exactly one NULL, epsilon below CUDNN_BN_MIN_EPSILON (0 in 8.2); NOT_SUPPORTED for data types
   the op does not take. Beyond the lists: an output that aliases an input must have its strides
   (BAD_PARAM), and the fused ops need their activation descriptor, z / dz and a large enough
   reserve space (BAD_PARAM), except the activation's backward, which rebuilds a reserve it is
   not given (rebuild_reserve). */
#include "ops/batchnorm.h"

#include "core/argcheck.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/reasons.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const struct ocd_impl bn_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:bn_channels_last_flat", OCD_BACKEND_CUDA, ocd_cuda_bn_flat_applies,
                   ocd_cuda_bn_flat_workspace, ocd_cuda_bn_flat),
    OCD_IMPL_ENTRY("cuda:bn_channels_last", OCD_BACKEND_CUDA, ocd_cuda_bn_channels_last_applies,
                   ocd_cuda_bn_channels_last_workspace, ocd_cuda_bn_channels_last),
    OCD_IMPL_ENTRY("cuda:bn_channels_first", OCD_BACKEND_CUDA, ocd_cuda_bn_channels_first_applies,
                   ocd_cuda_bn_channels_first_workspace, ocd_cuda_bn_channels_first),
    OCD_IMPL_ENTRY("cuda:bn_strided", OCD_BACKEND_CUDA, NULL, ocd_cuda_bn_strided_workspace,
                   ocd_cuda_bn_strided),
#endif
    OCD_IMPL_ENTRY("host:bn_reference", OCD_BACKEND_HOST, NULL, NULL, ocd_host_bn),
};

/* ---- checks ---------------------------------------------------------------------------------- */

static bool data_type_supported(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF ||
           t == CUDNN_DATA_BFLOAT16;
}

/* The type of the per-slot tensors for data of type t. */
static cudnnDataType_t slot_type(cudnnDataType_t t)
{
    return t == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

/* A data tensor: live, set, rank 4 or 5, and (when x is given) of x's dims and type. */
static cudnnStatus_t get_data(cudnnTensorDescriptor_t desc, const char *name,
                              const struct ocd_tensor_view *x, struct ocd_tensor_view *v)
{
    OCD_TRY(ocd_tensor_get(desc, name, v));
    if (v->rank < 4 || v->rank > 5)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dimensions; normalization takes 4 or 5",
                        name, v->rank);
    if (x == NULL) return CUDNN_STATUS_SUCCESS;
    if (!ocd_view_same_dims(x, v))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the dimensions of %s differ from xDesc's", name);
    if (v->dtype != x->dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the data type of %s (%s) differs from xDesc's (%s)",
                        name, ocd_dtype_name(v->dtype), ocd_dtype_name(x->dtype));
    return CUDNN_STATUS_SUCCESS;
}

/* A per-slot tensor: 1xCx1x1(x1) per channel, 1xCxHxW (1xCxDxHxW) per activation. */
static cudnnStatus_t get_slots(cudnnTensorDescriptor_t desc, const char *name,
                               const struct ocd_tensor_view *x, bool per_activation,
                               struct ocd_tensor_view *v)
{
    OCD_TRY(ocd_tensor_get(desc, name, v));
    bool ok = v->rank == x->rank && v->dims[0] == 1 && v->dims[1] == x->dims[1];
    for (int d = 2; ok && d < v->rank; d++) ok = v->dims[d] == (per_activation ? x->dims[d] : 1);
    if (!ok) {
        char got[160];
        ocd_view_format(v, got, sizeof got);
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s; the %s mode needs 1x%lldx%s", name, got,
                        per_activation ? "per-activation" : "spatial", (long long)x->dims[1],
                        per_activation ? "(x's spatial dims)" : "1x1(x1)");
    }
    if (v->dtype != slot_type(x->dtype))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s is %s; %s data takes %s parameters", name,
                        ocd_dtype_name(v->dtype), ocd_dtype_name(x->dtype),
                        ocd_dtype_name(slot_type(x->dtype)));
    return CUDNN_STATUS_SUCCESS;
}

/* The normalization API's mean/variance descriptor, NULL where the call is given none of the
   statistics it describes (CUDA.jl's cudnnNormalizationForward without running averages passes
   C_NULL for it to the workspace query and the training call; the 8.2 text asks for it). Nothing
   is read through it then: the slots take the scale's layout. Inference always reads the
   estimates, so it needs the descriptor. */
static cudnnStatus_t get_stat_slots(const struct ocd_bn_args *a, struct ocd_bn_problem *p)
{
    bool unused = a->dir == OCD_BN_TRAINING ? !a->run_mean && !a->run_var && !a->save_mean && !a->save_invstd
                : a->dir == OCD_BN_BACKWARD ? !a->saved_mean && !a->saved_invstd : false;
    if (a->stat_desc != NULL || !unused)
        return get_slots(a->stat_desc, "the mean/variance descriptor", &p->x, a->per_activation, &p->stat);
    if (ocd_log_mask & CUDNN_SEV_INFO_EN)
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "normMeanVarDesc is NULL and no statistic is given: nothing is read through it (the 8.2 "
                        "text asks for the descriptor)");
    p->stat = p->param;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t need(const void *p, const char *name)
{
    return p != NULL ? CUDNN_STATUS_SUCCESS : OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
}

static cudnnStatus_t need_pair(const void *a, const void *b, const char *names)
{
    if ((a == NULL) != (b == NULL))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "exactly one of %s is NULL: both or neither", names);
    return CUDNN_STATUS_SUCCESS;
}

/* A dense layout with the dimension order of v (innermost = smallest stride): the reserve space. */
static void dense_like(const struct ocd_tensor_view *v, struct ocd_tensor_view *out)
{
    int order[OCD_MAX_DIMS];
    for (int d = 0; d < v->rank; d++) {
        int i = d;
        while (i > 0 && v->strides[order[i - 1]] < v->strides[d]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = d; /* order: outermost first, ties keep dimension order */
    }
    *out = *v;
    int64_t s = 1;
    for (int i = v->rank - 1; i >= 0; i--) {
        out->strides[order[i]] = s;
        s *= v->dims[order[i]];
    }
}

static int64_t reserve_bytes_of(const struct ocd_tensor_view *x, int ops)
{
    if (ops == OCD_BN_OPS_NORM) return 0;
    return ocd_view_count(x) * (int64_t)ocd_dtype_scalar_size(x->dtype);
}

static cudnnStatus_t check_ops(const struct ocd_bn_args *a, struct ocd_bn_problem *p)
{
    p->ops = a->ops;
    if (a->ops == OCD_BN_OPS_NORM) return CUDNN_STATUS_SUCCESS;
    struct ocd_activation_params act;
    OCD_TRY(ocd_activation_params(a->act_desc, "activationDesc", &act));
    p->act_mode = act.mode;
    p->act_nan = act.nan_opt;
    p->act_coef = act.coef;
    p->act_swish = act.swish_beta;
    return CUDNN_STATUS_SUCCESS;
}

/* Validates everything; with sizes_only, data pointers and the reserve space are not needed. */
static cudnnStatus_t check(const struct ocd_bn_args *a, bool sizes_only, struct ocd_bn_problem *p)
{
    memset(p, 0, sizeof *p);
    p->dir = a->dir;
    p->per_activation = a->per_activation;
    bool backward = a->dir == OCD_BN_BACKWARD, ptrs = !sizes_only;
    if (ptrs) {
        OCD_TRY(need(a->alpha, backward ? "alphaDataDiff" : "alpha"));
        OCD_TRY(need(a->beta, backward ? "betaDataDiff" : "beta"));
        if (backward) {
            OCD_TRY(need(a->alpha_param, "alphaParamDiff"));
            OCD_TRY(need(a->beta_param, "betaParamDiff"));
        }
    }
    OCD_TRY(get_data(a->x_desc, "xDesc", NULL, &p->x));
    if (ptrs) OCD_TRY(need(a->x, "x"));
    const struct ocd_tensor_view *x = &p->x;
    bool add = a->ops == OCD_BN_OPS_ADD_ACT, act = a->ops != OCD_BN_OPS_NORM;
    if (!backward) {
        OCD_TRY(get_data(a->y_desc, "yDesc", x, &p->y));
        if (ptrs) OCD_TRY(need(a->y, "y"));
        if (add) {
            OCD_TRY(get_data(a->z_desc, "zDesc", x, &p->z));
            if (ptrs) OCD_TRY(need(a->z, "z"));
        }
    } else {
        OCD_TRY(get_data(a->dy_desc, "dyDesc", x, &p->dy));
        OCD_TRY(get_data(a->dx_desc, "dxDesc", x, &p->dx));
        if (ptrs) {
            OCD_TRY(need(a->dy, "dy"));
            OCD_TRY(need(a->dx, "dx"));
        }
        if (act) { /* the forward output belongs to the fused ops' backward signature */
            struct ocd_tensor_view y;
            OCD_TRY(get_data(a->y_desc, "yDesc", x, &y));
            if (ptrs) OCD_TRY(need(a->y_in, "yData"));
        }
        if (add) {
            OCD_TRY(get_data(a->dz_desc, "dzDesc", x, &p->dz));
            if (ptrs) OCD_TRY(need(a->dz, "dz"));
        }
    }
    if (!data_type_supported(x->dtype))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported by normalization",
                        ocd_dtype_name(x->dtype));
    p->dtype = x->dtype;
    p->ptype = slot_type(x->dtype);
    OCD_TRY(get_slots(a->param_desc, backward ? "dBnScaleBiasDesc" : "the scale/bias descriptor", x,
                      a->per_activation, &p->param));
    OCD_TRY(get_stat_slots(a, p));
    if (ptrs) {
        OCD_TRY(need(a->scale, "the scale"));
        if (!backward || act) OCD_TRY(need(a->bias, "the bias"));
        if (a->dir == OCD_BN_INFERENCE) {
            OCD_TRY(need(a->est_mean, "estimatedMean"));
            OCD_TRY(need(a->est_var, "estimatedVariance"));
        } else if (a->dir == OCD_BN_TRAINING) {
            OCD_TRY(need_pair(a->run_mean, a->run_var, "resultRunningMean and resultRunningVariance"));
            OCD_TRY(need_pair(a->save_mean, a->save_invstd, "resultSaveMean and resultSaveInvVariance"));
        } else {
            OCD_TRY(need(a->dscale, "the scale gradient"));
            OCD_TRY(need(a->dbias, "the bias gradient"));
            OCD_TRY(need_pair(a->saved_mean, a->saved_invstd, "savedMean and savedInvVariance"));
            if (a->persist && a->saved_mean == NULL)
                return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                                "CUDNN_NORM_ALGO_PERSIST needs savedMean and savedInvVariance");
        }
    }
    if (!(a->epsilon >= CUDNN_BN_MIN_EPSILON))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "epsilon %g is below CUDNN_BN_MIN_EPSILON (%g)",
                        a->epsilon, CUDNN_BN_MIN_EPSILON);
    OCD_TRY(check_ops(a, p));
    dense_like(x, &p->reserve);
    if (act && a->dir != OCD_BN_INFERENCE && ptrs) {
        int64_t want = reserve_bytes_of(x, a->ops);
        /* the activation's backward without a reserve rebuilds it (rebuild_reserve) */
        bool rebuilt = backward && !add && a->reserve == NULL && a->reserve_bytes == 0;
        if (!rebuilt && (a->reserve == NULL || a->reserve_bytes < (size_t)want))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the fused activation needs a reserve space of %lld bytes (%zu given%s)",
                            (long long)want, a->reserve_bytes, a->reserve ? "" : ", NULL");
        p->reserve_ptr = a->reserve;
    }
    if (ptrs) {
        if (!backward) {
            OCD_TRY(ocd_check_alias(a->y, &p->y, "y", a->x, x, "x", OCD_READ_SAME));
            if (add) OCD_TRY(ocd_check_alias(a->y, &p->y, "y", a->z, &p->z, "z", OCD_READ_SAME));
        } else {
            OCD_TRY(ocd_check_alias(a->dx, &p->dx, "dx", a->dy, &p->dy, "dy", OCD_READ_SAME));
            OCD_TRY(ocd_check_alias(a->dx, &p->dx, "dx", a->x, x, "x", OCD_READ_SAME));
            if (add) OCD_TRY(ocd_check_alias(a->dz, &p->dz, "dz", a->dy, &p->dy, "dy", OCD_READ_SAME));
        }
    }
    p->slots = x->dims[1];
    p->reduced = x->dims[0];
    for (int d = 2; d < x->rank; d++) {
        if (a->per_activation) p->slots *= x->dims[d];
        else p->reduced *= x->dims[d];
    }
    p->epsilon = a->epsilon;
    p->factor = a->factor;
    return CUDNN_STATUS_SUCCESS;
}

static void fill_pointers(const struct ocd_bn_args *a, struct ocd_bn_problem *p)
{
    p->x_ptr = a->x;
    p->z_ptr = a->ops == OCD_BN_OPS_ADD_ACT ? a->z : NULL;
    p->dy_ptr = a->dy;
    p->y_ptr = a->y;
    p->dx_ptr = a->dx;
    p->dz_ptr = a->ops == OCD_BN_OPS_ADD_ACT ? a->dz : NULL;
    p->scale = a->scale;
    p->bias = a->bias;
    p->dscale = a->dscale;
    p->dbias = a->dbias;
    p->est_mean = a->est_mean;
    p->est_var = a->est_var;
    p->run_mean = a->run_mean;
    p->run_var = a->run_var;
    p->save_mean = a->save_mean;
    p->save_invstd = a->save_invstd;
    p->saved_mean = a->saved_mean;
    p->saved_invstd = a->saved_invstd;
    p->alpha = ocd_scaling_value(p->dtype, a->alpha);
    p->beta = ocd_scaling_value(p->dtype, a->beta);
    if (a->dir == OCD_BN_BACKWARD) {
        p->alpha_param = ocd_scaling_value(p->dtype, a->alpha_param);
        p->beta_param = ocd_scaling_value(p->dtype, a->beta_param);
    }
}

/* The call as OPENCUDNN_CHECK sees it (core/check.h): every tensor and per-slot array the problem
   points at (the running averages both read and written), the benchmark's bn* replay string. */
static void bn_check_call(struct ocd_check_call *call, const struct ocd_bn_problem *p, const char *op)
{
    *call = (struct ocd_check_call){.op = op, .problem_size = sizeof *p};
    call->tolerance = p->dtype == CUDNN_DATA_DOUBLE ? 1e-9 : p->dtype == CUDNN_DATA_FLOAT ? 1e-4 : 0;
#define BN_BUFFER(field, view, output) ocd_check_add(call, offsetof(struct ocd_bn_problem, field), &p->view, output)
    BN_BUFFER(x_ptr, x, false);
    BN_BUFFER(z_ptr, z, false);
    BN_BUFFER(dy_ptr, dy, false);
    BN_BUFFER(y_ptr, y, true);
    BN_BUFFER(dx_ptr, dx, true);
    BN_BUFFER(dz_ptr, dz, true);
    BN_BUFFER(reserve_ptr, reserve, true);
    BN_BUFFER(scale, param, false);
    BN_BUFFER(bias, param, false);
    BN_BUFFER(dscale, param, true);
    BN_BUFFER(dbias, param, true);
    BN_BUFFER(est_mean, stat, false);
    BN_BUFFER(est_var, stat, false);
    BN_BUFFER(run_mean, stat, true);
    BN_BUFFER(run_var, stat, true);
    BN_BUFFER(save_mean, stat, true);
    BN_BUFFER(save_invstd, stat, true);
    BN_BUFFER(saved_mean, stat, false);
    BN_BUFFER(saved_invstd, stat, false);
#undef BN_BUFFER
    static const char *const dirs[] = {"bnfwdinf", "bnfwdtrain", "bnbwd"};
    char spec[96];
    ocd_check_tensor_spec(&p->x, spec, sizeof spec);
    snprintf(call->replay, sizeof call->replay, "op=%s mode=%s dt=%s x=%s", dirs[p->dir],
             p->per_activation ? "per_activation" : "spatial", ocd_check_dtype_name(p->dtype), spec);
}

/* ---- the activation's backward without the forward's reserve --------------------------------

   The backward of CUDNN_BATCHNORM_OPS_BN_ACTIVATION reads the pre-activations the forward left in
   its reserve. A call that passes no reserve (NULL, 0 bytes: NVIDIA Apex passes it only when z
   was added) gets them rebuilt: the training forward runs again on x (the same batch statistics,
   so the same values) into the workspace, which the backward's size query counts for these ops:
   [the backward's (or that forward's) own workspace | the pre-activations | a scratch y]. With
   z added the pre-activations depend on z, which the backward does not get: the reserve stays
   required. */
struct rebuild_layout {
    size_t impl, pre_at, y_at, total;
};

static size_t align_256(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

static bool rebuilds_reserve(const struct ocd_bn_args *a)
{
    return a->dir == OCD_BN_BACKWARD && a->ops == OCD_BN_OPS_ACT;
}

/* The forward that rebuilds the pre-activations: training on x, no running averages, no saved
   statistics, y and the reserve in the workspace (set by the caller). */
static struct ocd_bn_args rebuild_args(const struct ocd_bn_args *a, const void *one, const void *zero)
{
    return (struct ocd_bn_args){.dir = OCD_BN_TRAINING, .per_activation = a->per_activation, .ops = a->ops,
                                .act_desc = a->act_desc, .alpha = one, .beta = zero, .x_desc = a->x_desc,
                                .y_desc = a->x_desc, .param_desc = a->param_desc, .stat_desc = a->stat_desc,
                                .x = a->x, .scale = a->scale, .bias = a->bias, .epsilon = a->epsilon};
}

static cudnnStatus_t rebuild_layout_of(cudnnHandle_t handle, const struct ocd_bn_args *a,
                                       const struct ocd_bn_problem *bwd, size_t bwd_workspace, const char *op,
                                       struct rebuild_layout *l)
{
    struct ocd_bn_args f = rebuild_args(a, NULL, NULL);
    struct ocd_bn_problem fp;
    OCD_TRY(check(&f, true, &fp));
    size_t fwd_workspace = ocd_bn_problem_workspace(handle, &fp, op);
    l->impl = align_256(fwd_workspace > bwd_workspace ? fwd_workspace : bwd_workspace);
    l->pre_at = l->impl;
    l->y_at = l->pre_at + align_256((size_t)reserve_bytes_of(&bwd->x, a->ops));
    l->total = l->y_at + align_256((size_t)ocd_view_span_bytes(&bwd->x));
    return CUDNN_STATUS_SUCCESS;
}

/* Rebuilds p's pre-activations in the workspace (see above); *impl_bytes: the part of the
   workspace the backward's implementation may use. */
static cudnnStatus_t rebuild_reserve(cudnnHandle_t handle, const struct ocd_bn_args *a, struct ocd_bn_problem *p,
                                     const char *op, size_t *impl_bytes)
{
    struct rebuild_layout l;
    OCD_TRY(rebuild_layout_of(handle, a, p, ocd_bn_problem_workspace(handle, p, op), op, &l));
    if (a->workspace == NULL || a->workspace_bytes < l.total)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM,
                        "without the forward's reserve space the activation's backward needs a workspace of %zu "
                        "bytes to rebuild it (%zu given)",
                        l.total, a->workspace_bytes);
    if (ocd_log_mask & CUDNN_SEV_INFO_EN)
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "no reserve space for the activation's backward: the forward's pre-activations are rebuilt "
                        "from x in the workspace");
    const float one_f = 1, zero_f = 0;
    const double one_d = 1, zero_d = 0;
    const bool dbl = p->dtype == CUDNN_DATA_DOUBLE;
    char *ws = a->workspace;
    struct ocd_bn_args f = rebuild_args(a, dbl ? (const void *)&one_d : &one_f, dbl ? (const void *)&zero_d : &zero_f);
    f.y = ws + l.y_at;
    f.reserve = ws + l.pre_at;
    f.reserve_bytes = l.y_at - l.pre_at;
    struct ocd_bn_problem fp;
    OCD_TRY(check(&f, false, &fp));
    fill_pointers(&f, &fp);
    OCD_TRY(ocd_bn_run_problem(handle, &fp, ws, l.impl, op));
    p->reserve_ptr = ws + l.pre_at;
    *impl_bytes = l.impl;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_bn_run(cudnnHandle_t handle, const struct ocd_bn_args *args, const char *op)
{
    OCD_CHECK_HANDLE(handle);
    struct ocd_bn_problem p;
    OCD_TRY(check(args, false, &p));
    fill_pointers(args, &p);
    size_t workspace_bytes = args->workspace_bytes;
    if (rebuilds_reserve(args) && p.reserve_ptr == NULL) OCD_TRY(rebuild_reserve(handle, args, &p, op, &workspace_bytes));
    struct ocd_impl_plan plan;
    const struct ocd_impl *impl = ocd_impl_select(handle, bn_impls, OCD_ARRAY_LEN(bn_impls), &p, op, &plan);
    if (impl == NULL) return CUDNN_STATUS_NOT_SUPPORTED;
    if (!ocd_check_enabled()) return ocd_impl_exec(handle, impl, &p, &plan, args->workspace, workspace_bytes);
    struct ocd_check_call call;
    bn_check_call(&call, &p, op);
    return ocd_check_run(handle, impl, &p, &plan, args->workspace, workspace_bytes, &call,
                         OCD_IMPL_TABLE(bn_impls));
}

cudnnStatus_t ocd_bn_run_problem(cudnnHandle_t handle, const struct ocd_bn_problem *p, void *workspace,
                                 size_t workspace_bytes, const char *op)
{
    struct ocd_impl_plan plan;
    const struct ocd_impl *impl = ocd_impl_select(handle, bn_impls, OCD_ARRAY_LEN(bn_impls), p, op, &plan);
    if (impl == NULL) return CUDNN_STATUS_NOT_SUPPORTED;
    return ocd_impl_exec(handle, impl, p, &plan, workspace, workspace_bytes);
}

size_t ocd_bn_problem_workspace(cudnnHandle_t handle, const struct ocd_bn_problem *p, const char *op)
{
    struct ocd_impl_plan plan;
    const struct ocd_impl *impl = ocd_impl_select(handle, bn_impls, OCD_ARRAY_LEN(bn_impls), p, op, &plan);
    return impl ? ocd_impl_workspace(handle, impl, p, &plan) : 0;
}

cudnnStatus_t ocd_bn_workspace_size(cudnnHandle_t handle, const struct ocd_bn_args *args,
                                    const char *op, size_t *size)
{
    OCD_CHECK_HANDLE(handle);
    struct ocd_bn_problem p;
    OCD_TRY(check(args, true, &p));
    OCD_TRY(need(size, "sizeInBytes"));
    struct ocd_impl_plan plan;
    const struct ocd_impl *impl = ocd_impl_select(handle, bn_impls, OCD_ARRAY_LEN(bn_impls), &p, op, &plan);
    if (impl == NULL) return CUDNN_STATUS_NOT_SUPPORTED;
    *size = ocd_impl_workspace(handle, impl, &p, &plan);
    if (rebuilds_reserve(args)) { /* room to rebuild the reserve the call may not pass */
        struct rebuild_layout l;
        OCD_TRY(rebuild_layout_of(handle, args, &p, *size, op, &l));
        *size = l.total;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_bn_reserve_size(cudnnHandle_t handle, const struct ocd_bn_args *args,
                                  const char *op, size_t *size)
{
    (void)op;
    OCD_CHECK_HANDLE(handle);
    struct ocd_bn_problem p;
    memset(&p, 0, sizeof p);
    OCD_TRY(get_data(args->x_desc, "xDesc", NULL, &p.x));
    if (!data_type_supported(p.x.dtype))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported by normalization",
                        ocd_dtype_name(p.x.dtype));
    OCD_TRY(check_ops(args, &p));
    OCD_TRY(need(size, "sizeInBytes"));
    *size = (size_t)reserve_bytes_of(&p.x, args->ops);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_bn_derive(cudnnTensorDescriptor_t derived, cudnnTensorDescriptor_t x_desc,
                            bool per_activation)
{
    struct ocd_tensor_view x;
    OCD_TRY(get_data(x_desc, "xDesc", NULL, &x));
    OCD_CHECK_OBJECT(OCD_OBJ_TENSOR, derived);
    if (!data_type_supported(x.dtype))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "data type %s is not supported by normalization",
                        ocd_dtype_name(x.dtype));
    int dims[OCD_MAX_DIMS], strides[OCD_MAX_DIMS];
    dims[0] = 1;
    dims[1] = (int)x.dims[1];
    for (int d = 2; d < x.rank; d++) dims[d] = per_activation ? (int)x.dims[d] : 1;
    ocd_packed_strides(CUDNN_TENSOR_NCHW, x.rank, dims, 1, strides);
    derived->dtype = slot_type(x.dtype);
    derived->format = CUDNN_TENSOR_NCHW;
    derived->nb_dims = x.rank;
    for (int d = 0; d < x.rank; d++) {
        derived->dims[d] = dims[d];
        derived->strides[d] = strides[d];
    }
    derived->set = true;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- API ------------------------------------------------------------------------------------- */

/* The batch-normalization mode as the engine takes it; BAD_PARAM for an invalid enumerant.
   SPATIAL_PERSISTENT computes exactly what SPATIAL does (its range limits are not imposed). */
cudnnStatus_t ocd_bn_mode(cudnnBatchNormMode_t mode, bool *per_activation)
{
    switch (mode) {
    case CUDNN_BATCHNORM_PER_ACTIVATION: *per_activation = true; return CUDNN_STATUS_SUCCESS;
    case CUDNN_BATCHNORM_SPATIAL:
    case CUDNN_BATCHNORM_SPATIAL_PERSISTENT: *per_activation = false; return CUDNN_STATUS_SUCCESS;
    }
    return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid batch-normalization mode %d", (int)mode);
}

cudnnStatus_t CUDNNWINAPI cudnnDeriveBNTensorDescriptor(cudnnTensorDescriptor_t derivedBnDesc,
                                                        const cudnnTensorDescriptor_t xDesc,
                                                        cudnnBatchNormMode_t mode)
{
    OCD_LOG_API("derivedBnDesc=%p xDesc=%p mode=%d", (void *)derivedBnDesc, (void *)xDesc, (int)mode);
    bool per_activation;
    OCD_TRY(ocd_bn_mode(mode, &per_activation));
    return ocd_bn_derive(derivedBnDesc, xDesc, per_activation);
}

cudnnStatus_t CUDNNWINAPI cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
    const void *estimatedMean, const void *estimatedVariance, double epsilon)
{
    OCD_LOG_API("handle=%p mode=%d xDesc=%p x=%p yDesc=%p y=%p bnScaleBiasMeanVarDesc=%p epsilon=%g",
                (void *)handle, (int)mode, (void *)xDesc, x, (void *)yDesc, y,
                (void *)bnScaleBiasMeanVarDesc, epsilon);
    struct ocd_bn_args a = {.dir = OCD_BN_INFERENCE, .alpha = alpha, .beta = beta,
                            .x_desc = xDesc, .x = x, .y_desc = yDesc, .y = y,
                            .param_desc = bnScaleBiasMeanVarDesc, .stat_desc = bnScaleBiasMeanVarDesc,
                            .scale = bnScale, .bias = bnBias, .est_mean = estimatedMean,
                            .est_var = estimatedVariance, .epsilon = epsilon};
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_bn_mode(mode, &a.per_activation));
    return ocd_bn_run(handle, &a, "cudnnBatchNormalizationForwardInference");
}

cudnnStatus_t ocd_bn_ops(int ops)
{
    if (ops != OCD_BN_OPS_NORM && ops != OCD_BN_OPS_ACT && ops != OCD_BN_OPS_ADD_ACT)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid normalization ops %d", ops);
    return CUDNN_STATUS_SUCCESS;
}
