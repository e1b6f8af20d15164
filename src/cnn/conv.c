/* conv.c: the convolution API of cnn_infer: forward, backward data, the fused
   convolution + bias + activation, their algorithm queries (heuristic, Find, workspace), Im2Col and
   filter reordering; plus the validation and query machinery that conv_train.c (backward filter)
   shares through ocd_conv_* functions. Find's timing and cache are conv_find.c.

   Main decision: every entry point validates its arguments into a struct ocd_conv_problem
   (ocd_conv_problem_init: the documented BAD_PARAM / NOT_SUPPORTED rules of each direction) and
   then goes through the registry (conv.h) for everything else: which algorithms run, the
   workspace they need, Find timings. An insufficient workspace is BAD_PARAM, as cuDNN 8 returns
   in practice (the documentation leaves it open). */
#include "cnn/conv.h"

#include "core/activation_desc.h"
#include "core/argcheck.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/platform.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct ocd_tensor_view *ocd_conv_dst_view(const struct ocd_conv_problem *p)
{
    return p->dir == OCD_CONV_FWD ? &p->y : p->dir == OCD_CONV_BWD_DATA ? &p->x : &p->w;
}

int64_t ocd_conv_spatial(const struct ocd_conv_shape *s, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < s->nsp; d++) n *= dims[d];
    return n;
}

bool ocd_conv_unit_stride(const struct ocd_conv_shape *s)
{
    for (int d = 0; d < s->nsp; d++)
        if (s->stride[d] != 1) return false;
    return true;
}

void ocd_conv_gemm_dims(const struct ocd_conv_problem *p, struct ocd_conv_gemm *g)
{
    const struct ocd_conv_shape *s = &p->s;
    int64_t cg = s->c / s->groups, kg = s->k / s->groups, rs = ocd_conv_spatial(s, s->filt);
    g->groups = s->groups;
    switch (p->dir) {
    case OCD_CONV_FWD:
        g->m = s->n * ocd_conv_spatial(s, s->out), g->n = kg, g->k = cg * rs;
        break;
    case OCD_CONV_BWD_DATA:
        g->m = s->n * ocd_conv_spatial(s, s->in), g->n = cg, g->k = kg * rs;
        break;
    default:
        g->m = kg, g->n = cg * rs, g->k = s->n * ocd_conv_spatial(s, s->out);
        break;
    }
}

/* ---- validation ------------------------------------------------------------------------------ */

static bool float_family(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

static bool int8_family(cudnnDataType_t t)
{
    return t == CUDNN_DATA_INT8 || t == CUDNN_DATA_UINT8 || t == CUDNN_DATA_INT8x4 ||
           t == CUDNN_DATA_UINT8x4 || t == CUDNN_DATA_INT8x32;
}

/* The type of the fused forward's bias: FLOAT for the integer configurations, y's type otherwise. */
static cudnnDataType_t fused_bias_type(const struct ocd_conv_problem *p)
{
    return int8_family(p->x.dtype) ? CUDNN_DATA_FLOAT : p->y.dtype;
}

/* The compute types a floating-point configuration allows: TRUE_HALF and PSEUDO_HALF for half,
   PSEUDO_BFLOAT16 for bfloat16, FLOAT_CONFIG and DOUBLE_CONFIG. */
static bool float_compute_ok(cudnnDataType_t data, cudnnDataType_t compute)
{
    switch (data) {
    case CUDNN_DATA_HALF: return compute == CUDNN_DATA_HALF || compute == CUDNN_DATA_FLOAT;
    case CUDNN_DATA_BFLOAT16: return compute == CUDNN_DATA_FLOAT;
    case CUDNN_DATA_FLOAT: return compute == CUDNN_DATA_FLOAT;
    case CUDNN_DATA_DOUBLE: return compute == CUDNN_DATA_DOUBLE;
    default: return false;
    }
}

/* The data-type configurations of the cuDNN 8.2 tables: types that disagree are BAD_PARAM, a
   combination of agreeing types that no configuration lists is NOT_SUPPORTED. */
static cudnnStatus_t check_config(const struct ocd_conv_problem *p)
{
    cudnnDataType_t xt = p->x.dtype, wt = p->w.dtype, yt = p->y.dtype, ct = p->compute;
    if (p->dir != OCD_CONV_FWD || float_family(xt)) {
        if (xt != wt || xt != yt)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the data types differ (x %s, w %s, y %s)",
                            ocd_dtype_name(xt), ocd_dtype_name(wt), ocd_dtype_name(yt));
        if (!float_family(xt))
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "no configuration of this direction takes %s data",
                            ocd_dtype_name(xt));
        if (!float_compute_ok(xt, ct))
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "%s data with compute type %s is no configuration",
                            ocd_dtype_name(xt), ocd_dtype_name(ct));
        return CUDNN_STATUS_SUCCESS;
    }
    if (!int8_family(xt))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "no convolution configuration takes %s data", ocd_dtype_name(xt));
    /* INT8*, UINT8* (with INT8 or UINT8 filters), INT8x32; output of the same type or FLOAT (EXT).
       UINT8_CONFIG and UINT8x4_CONFIG output the signed type (INT8, INT8x4): the table's y and
       the one NVIDIA's library takes; a y of x's unsigned type is taken too. */
    cudnnDataType_t signed_x = xt == CUDNN_DATA_UINT8 ? CUDNN_DATA_INT8 : xt == CUDNN_DATA_UINT8x4 ? CUDNN_DATA_INT8x4 : xt;
    if (wt != xt && wt != signed_x)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the filter type %s does not go with %s data",
                        ocd_dtype_name(wt), ocd_dtype_name(xt));
    bool ext = yt == CUDNN_DATA_FLOAT;
    if (yt != xt && yt != signed_x && !(ext && xt != CUDNN_DATA_INT8x32))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the output type %s does not go with %s data",
                        ocd_dtype_name(yt), ocd_dtype_name(xt));
    if (ct != CUDNN_DATA_INT32)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "int8 configurations compute in INT32, not %s", ocd_dtype_name(ct));
    if (p->x.vect == 1) {
        /* INT8_CONFIG and friends: NHWC filter, fully packed NHWC x and y, channels by 4 */
        if (p->w_format != CUDNN_TENSOR_NHWC || !ocd_view_is_packed_nhwc(&p->x) || !ocd_view_is_packed_nhwc(&p->y))
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                            "int8 data needs an NHWC filter and fully packed NHWC input and output");
        if (p->x.dims[1] % 4 != 0 || p->w.dims[1] % 4 != 0 || (!ext && p->y.dims[1] % 4 != 0))
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "int8 data needs channel counts that are multiples of 4");
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_conv_problem_init(struct ocd_conv_problem *p, enum ocd_conv_dir dir,
                                    cudnnTensorDescriptor_t x_desc, const char *x_name,
                                    cudnnFilterDescriptor_t w_desc, const char *w_name,
                                    cudnnConvolutionDescriptor_t conv_desc,
                                    cudnnTensorDescriptor_t y_desc, const char *y_name)
{
    struct ocd_tensor_view v;
    OCD_TRY(ocd_tensor_get(x_desc, x_name, &v));
    OCD_TRY(ocd_filter_get(w_desc, w_name, &v));
    OCD_TRY(ocd_conv_desc_get(conv_desc, "convDesc"));
    OCD_TRY(ocd_tensor_get(y_desc, y_name, &v));
    return ocd_conv_problem_of(p, dir, x_desc, x_name, w_desc, w_name, conv_desc, y_desc, y_name);
}

/* A descriptor of fewer spatial dims than the tensors, widened over trailing spatial dims
   where x, w and y all have extent 1 (pad 0, stride 1, dilation 1: the only reading under which
   y's extent there is 1): candle's conv1d sets a 1-D descriptor (cudnnSetConvolutionNdDescriptor,
   arrayLength 1) for N x C x L x 1 tensors and a K x C x k x 1 filter (the 8.2 text asks for
   arrayLength = nbDims - 2). False, *wide untouched, when the dims are not all trivial. */
static bool widen_trivial_dims(const struct cudnnConvolutionStruct *conv, const struct ocd_conv_problem *p,
                               struct cudnnConvolutionStruct *wide)
{
    int nsp = p->x.rank - 2;
    if (conv->array_length >= nsp || p->x.rank != p->w.rank || p->x.rank != p->y.rank) return false;
    for (int d = conv->array_length; d < nsp; d++)
        if (p->x.dims[d + 2] != 1 || p->w.dims[d + 2] != 1 || p->y.dims[d + 2] != 1) return false;
    *wide = *conv;
    for (int d = conv->array_length; d < nsp; d++) wide->pad[d] = 0, wide->stride[d] = 1, wide->dilation[d] = 1;
    wide->array_length = nsp;
    if (ocd_log_mask & CUDNN_SEV_INFO_EN)
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "convDesc has %d spatial dims and the tensors %d: the trailing dims of extent 1 are taken "
                        "with pad 0, stride 1, dilation 1 (the 8.2 text asks for as many)",
                        conv->array_length, nsp);
    return true;
}

cudnnStatus_t ocd_conv_problem_of(struct ocd_conv_problem *p, enum ocd_conv_dir dir,
                                  const struct cudnnTensorStruct *x_desc, const char *x_name,
                                  const struct cudnnFilterStruct *w_desc, const char *w_name,
                                  const struct cudnnConvolutionStruct *conv_desc,
                                  const struct cudnnTensorStruct *y_desc, const char *y_name)
{
    memset(p, 0, sizeof *p);
    p->dir = dir;
    ocd_tensor_view_of(x_desc, &p->x);
    ocd_filter_view_of(w_desc, &p->w);
    ocd_tensor_view_of(y_desc, &p->y);
    p->w_format = w_desc->format;
    p->compute = conv_desc->compute;
    p->math = conv_desc->math;
    p->reorder = conv_desc->reorder;
    if (p->x.rank != p->y.rank || p->x.rank != p->w.rank)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s, %s and %s have %d, %d and %d dims", x_name, w_name, y_name,
                        p->x.rank, p->w.rank, p->y.rank);
    if (p->x.rank < 3) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dims, fewer than 3", x_name, p->x.rank);
    struct cudnnConvolutionStruct wide;
    if (widen_trivial_dims(conv_desc, p, &wide)) conv_desc = &wide;
    if (p->x.rank != conv_desc->array_length + 2)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dims but convDesc %d spatial dims", x_name,
                        p->x.rank, conv_desc->array_length);
    if (p->x.rank != 4 && p->x.rank != 5)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "only 2-D and 3-D convolutions (4-D and 5-D tensors) are supported");
    OCD_TRY(check_config(p));
    int64_t out[OCD_MAX_DIMS];
    OCD_TRY(ocd_conv_output_dims(conv_desc, &p->x, &p->w, out));
    int groups = conv_desc->groups;
    if (p->w.dims[0] % groups != 0)
        return OCD_FAIL(dir == OCD_CONV_BWD_DATA ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_BAD_PARAM,
                        "%lld filters are not a multiple of groupCount %d", (long long)p->w.dims[0], groups);
    if (p->y.dims[0] != p->x.dims[0] || p->y.dims[1] != p->w.dims[0])
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %lld images x %lld channels; expected %lld x %lld", y_name,
                        (long long)p->y.dims[0], (long long)p->y.dims[1], (long long)out[0], (long long)out[1]);
    for (int d = 2; d < p->x.rank; d++)
        if (p->y.dims[d] != out[d])
            return OCD_FAIL(dir == OCD_CONV_FWD ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_BAD_PARAM,
                            "%s spatial dim %d is %lld; the output-dim formula gives %lld", y_name, d - 2,
                            (long long)p->y.dims[d], (long long)out[d]);
    struct ocd_conv_shape *s = &p->s;
    s->nsp = p->x.rank - 2;
    s->n = p->x.dims[0];
    s->c = p->x.dims[1];
    s->k = p->w.dims[0];
    s->groups = groups;
    for (int d = 0; d < s->nsp; d++) {
        s->in[d] = p->x.dims[d + 2];
        s->filt[d] = p->w.dims[d + 2];
        s->out[d] = out[d + 2];
        s->pad[d] = conv_desc->pad[d];
        s->stride[d] = conv_desc->stride[d];
        s->dilation[d] = conv_desc->dilation[d];
    }
    s->flip = conv_desc->mode == CUDNN_CONVOLUTION;
    p->alpha = 1;
    return CUDNN_STATUS_SUCCESS;
}

void ocd_conv_problem_format(const struct ocd_conv_problem *p, char *buf, size_t size)
{
    static const char *const dirs[] = {"fwd", "bwd_data", "bwd_filter"};
    const struct ocd_conv_shape *s = &p->s;
    char x[160], w[160], y[160];
    ocd_view_format(&p->x, x, sizeof x);
    ocd_view_format(&p->w, w, sizeof w);
    ocd_view_format(&p->y, y, sizeof y);
    size_t n = (size_t)snprintf(buf, size, "%s n%lld c%lld k%lld g%lld", dirs[p->dir], (long long)s->n,
                                (long long)s->c, (long long)s->k, (long long)s->groups);
    static const char *const keys[] = {"in", "f", "out", "pad", "str", "dil"};
    for (int f = 0; f < 6 && n < size; f++) {
        n += (size_t)snprintf(buf + n, size - n, " %s", keys[f]);
        for (int d = 0; d < s->nsp && n < size; d++) {
            long long v = f == 0 ? s->in[d] : f == 1 ? s->filt[d] : f == 2 ? s->out[d]
                        : f == 3 ? s->pad[d] : f == 4 ? s->stride[d] : s->dilation[d];
            n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "x" : "", v);
        }
    }
    if (n < size)
        snprintf(buf + n, size - n, " %s compute %s math %d wfmt %d x %s w %s y %s", s->flip ? "conv" : "xcorr",
                 ocd_dtype_name(p->compute), (int)p->math, (int)p->w_format, x, w, y);
}

/* ---- execution and queries --------------------------------------------------------------------- */

/* The calling thread's last choice per direction. A call that repeats the previous one of its
   direction exactly (every byte of the problem: shapes, layouts, pointers, scalars; the handle,
   its backend and device; the algorithm; the environment switches the pick reads; no Find
   verdict recorded since, see ocd_conv_race_epoch) skips the pick
   and the workspace query, which plan every candidate entry: once an application has chosen its
   algorithm, a repeated call goes straight to its entry with the plan kept from the pick (the host cost of a call is a goal of
   issue 4: bench/results.md, latency_conv_1x1_f16). */
#define MEMO_ENV_MAX 128
static const char *const memo_env_names[] = {"OPENCUDNN_DISABLE", "CUDNN_CONV_WSCAP_DBG", "NVIDIA_TF32_OVERRIDE",
                                              "OPENCUDNN_HOST_GEMM", "OPENCUDNN_TEST_CLUSTERS"};
#define MEMO_ENVS ((int)(sizeof memo_env_names / sizeof memo_env_names[0]))

struct conv_memo {
    bool valid;
    cudnnHandle_t handle;
    enum ocd_backend_kind kind;
    int device, algo;
    unsigned epoch;
    struct ocd_conv_problem p;
    char env[MEMO_ENVS][MEMO_ENV_MAX];
    const struct ocd_conv_impl *impl;
    size_t need;
    struct ocd_impl_plan plan; /* impl's plan for p, when impl is planned */
};
static OCD_THREAD_LOCAL struct conv_memo conv_memos[OCD_CONV_DIRS];

/* The switches as now set, into env; false when one is too long to remember. */
static bool memo_env(char env[MEMO_ENVS][MEMO_ENV_MAX])
{
    for (int i = 0; i < MEMO_ENVS; i++) {
        const char *v = getenv(memo_env_names[i]);
        size_t n = v ? strlen(v) : 0;
        if (n >= MEMO_ENV_MAX) return false;
        if (n) memcpy(env[i], v, n);
        env[i][n] = '\0';
    }
    return true;
}

static bool memo_matches(const struct conv_memo *m, cudnnHandle_t handle, const struct ocd_conv_problem *p, int algo,
                         char env[MEMO_ENVS][MEMO_ENV_MAX])
{
    if (!m->valid || m->handle != handle || m->kind != ocd_handle_kind(handle) || m->device != handle->device ||
        m->algo != algo || m->epoch != ocd_conv_race_epoch())
        return false;
    for (int i = 0; i < MEMO_ENVS; i++)
        if (strcmp(m->env[i], env[i]) != 0) return false;
    return memcmp(&m->p, p, sizeof *p) == 0; /* problems are zeroed before they are filled: padding too */
}

/* Every element of a convolution's output sums many elements of each input, so an output that
   overlaps an input would read what it has written: BAD_PARAM (ocd_check_alias). z, added element
   by element, may be y itself (the documentation says so). */
static cudnnStatus_t check_buffers(const struct ocd_conv_problem *p)
{
    static const char *const names[OCD_CONV_DIRS][3] = {{"y", "x", "w"}, {"dx", "dy", "w"}, {"dw", "x", "dy"}};
    const struct ocd_tensor_view *views[3] = {&p->y, &p->x, &p->w};
    const void *data[3] = {p->y_data, p->x_data, p->w_data};
    const int order[OCD_CONV_DIRS][3] = {{0, 1, 2}, {1, 0, 2}, {2, 1, 0}}; /* output, then the inputs */
    const int *o = order[p->dir];
    for (int i = 1; i < 3; i++)
        OCD_TRY(ocd_check_alias(data[o[0]], views[o[0]], names[p->dir][0], data[o[i]], views[o[i]], names[p->dir][i],
                                OCD_READ_MANY));
    if (p->ep.on) OCD_TRY(ocd_check_alias(p->y_data, &p->y, "y", p->ep.z, &p->y, "z", OCD_READ_SAME));
    return CUDNN_STATUS_SUCCESS;
}

/* The call as OPENCUDNN_CHECK sees it (core/check.h): the three tensors (the direction's
   destination written), the epilogue's bias and z, and the benchmark's replay string (its
   convolutions are 2-D with one pad, stride and dilation; others are described all the same;
   the layout is the filter's, and an int8 configuration's output of another type than x's is
   ydt: f32, or i8 for uint8 data). */
static void conv_check_call(struct ocd_check_call *call, const struct ocd_conv_problem *p, int algo, const char *op)
{
    *call = (struct ocd_check_call){.op = op, .problem_size = sizeof *p};
    const struct ocd_tensor_view *dst = ocd_conv_dst_view(p);
    ocd_check_add(call, offsetof(struct ocd_conv_problem, x_data), &p->x, dst == &p->x);
    ocd_check_add(call, offsetof(struct ocd_conv_problem, w_data), &p->w, dst == &p->w);
    ocd_check_add(call, offsetof(struct ocd_conv_problem, y_data), &p->y, dst == &p->y);
    if (p->ep.on) {
        ocd_check_add(call, offsetof(struct ocd_conv_problem, ep.bias), &p->ep.bias_view, false);
        ocd_check_add(call, offsetof(struct ocd_conv_problem, ep.z), &p->y, false);
        if (p->ep.scale_on) ocd_check_add(call, offsetof(struct ocd_conv_problem, ep.scale), &p->ep.scale_view, false);
    }
    /* sums of many products; tensor-core math rounds float data to TF32 (half's mantissa) */
    cudnnDataType_t t = ocd_dtype_scalar(p->x.dtype);
    bool tf32 = t == CUDNN_DATA_FLOAT && ocd_tensor_math_rejects(p->math, t) == NULL;
    call->tolerance = t == CUDNN_DATA_DOUBLE ? 1e-9 : t == CUDNN_DATA_FLOAT && !tf32 ? 1e-4 : 4e-2;
    static const char *const dirs[] = {"convfwd", "convbwdd", "convbwdf"};
    /* the benchmark's math= names (bench/ops_conv.c), by cudnnMathType_t value */
    static const char *const math_names[] = {"default", "tensor_op", "tensor_op_allow_conversion", "fma"};
    const char *name = strstr(ocd_conv_algo_name(p->dir, algo), "ALGO_");
    char lower[32] = "";
    if (name != NULL) {
        name += 5;
        size_t n = 0;
        if (name[0] >= '0' && name[0] <= '9') n = (size_t)snprintf(lower, sizeof lower, "algo_");
        for (; *name && n + 1 < sizeof lower; name++) lower[n++] = (char)(*name >= 'A' && *name <= 'Z' ? *name + 32 : *name);
        lower[n] = '\0';
    }
    const struct ocd_conv_shape *s = &p->s;
    int h = s->nsp - 2;
    const char *layout = p->w_format == CUDNN_TENSOR_NHWC          ? "nhwc"
                         : p->w_format == CUDNN_TENSOR_NCHW_VECT_C ? "nchw_vect_c"
                                                                   : "nchw";
    snprintf(call->replay, sizeof call->replay,
             "op=%s dt=%s layout=%s n=%lld c=%lld h=%lld w=%lld k=%lld r=%lld s=%lld pad=%d stride=%d dil=%d algo=%s "
             "math=%s%s%s",
             dirs[p->dir], ocd_check_dtype_name(p->x.dtype), layout, (long long)s->n, (long long)s->c,
             (long long)s->in[h], (long long)s->in[h + 1], (long long)s->k, (long long)s->filt[h],
             (long long)s->filt[h + 1], s->pad[h], s->stride[h], s->dilation[h], lower,
             (size_t)p->math < OCD_ARRAY_LEN(math_names) ? math_names[p->math] : "default",
             p->y.dtype != p->x.dtype ? " ydt=" : "", p->y.dtype != p->x.dtype ? ocd_check_dtype_name(p->y.dtype) : "");
}

cudnnStatus_t ocd_conv_execute(cudnnHandle_t handle, const struct ocd_conv_problem *p, int algo,
                               void *workspace, size_t workspace_bytes, const char *op)
{
    if (algo < 0 || algo >= ocd_conv_algo_count(p->dir))
        return ocd_fail(CUDNN_STATUS_BAD_PARAM, op, __FILE__, __LINE__, "invalid algorithm %d", algo);
    OCD_TRY(check_buffers(p));
    struct conv_memo *m = &conv_memos[p->dir];
    char env[MEMO_ENVS][MEMO_ENV_MAX];
    const bool rememberable = memo_env(env);
    const struct ocd_conv_impl *impl;
    size_t need;
    struct ocd_impl_plan fresh;
    const struct ocd_impl_plan *plan = &m->plan;
    if (rememberable && memo_matches(m, handle, p, algo, env)) {
        impl = m->impl;
        need = m->need;
    } else {
        char why[1024];
        const unsigned epoch = ocd_conv_race_epoch(); /* before the pick: a verdict during it invalidates */
        impl = ocd_conv_pick(handle, p, algo, why, sizeof why, &fresh);
        if (impl == NULL)
            return ocd_fail(CUDNN_STATUS_NOT_SUPPORTED, op, __FILE__, __LINE__, "%s: %s",
                            ocd_conv_algo_name(p->dir, algo), why);
        need = ocd_conv_impl_workspace(handle, impl, p, &fresh);
        plan = &fresh;
        m->valid = rememberable;
        if (rememberable) {
            m->handle = handle, m->kind = ocd_handle_kind(handle), m->device = handle->device, m->algo = algo;
            m->epoch = epoch;
            memcpy(&m->p, p, sizeof *p);
            memcpy(m->env, env, sizeof env);
            m->impl = impl, m->need = need;
            if (fresh.impl == &impl->base) m->plan = fresh;
            else m->plan.impl = NULL;
        }
    }
    if (workspace_bytes < need || (need > 0 && workspace == NULL))
        return ocd_fail(CUDNN_STATUS_BAD_PARAM, op, __FILE__, __LINE__,
                        "%s needs %zu bytes of workspace; %zu given%s", impl->base.name, need, workspace_bytes,
                        workspace == NULL ? " (NULL)" : "");
    if (ocd_log_mask & CUDNN_SEV_INFO_EN) {
        char desc[1024];
        ocd_conv_problem_format(p, desc, sizeof desc);
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s: %s runs %s", op, impl->base.name, desc);
    }
    if (!ocd_check_enabled()) return ocd_impl_exec(handle, &impl->base, p, plan, workspace, workspace_bytes);
    struct ocd_check_call call;
    conv_check_call(&call, p, algo, op);
    return ocd_check_run(handle, &impl->base, p, plan, workspace, workspace_bytes, &call,
                         ocd_conv_impl_table(p->dir));
}

/* The workspace a plain forward problem reports, by its query and in its Find and Get results:
   the entry's, or more where the fused form (a bias and ReLU after it) needs more.
   cudnnConvolutionBiasActivationForward has no query of its own: programs size its workspace by
   the forward's (dlib), and the entries that run the fused epilogue may need more than those of
   the plain convolution (a 1x1 convolution's cuBLAS entry needs none, the implicit GEMM that
   takes the fused call may need some). */
static size_t reported_workspace(cudnnHandle_t handle, const struct ocd_conv_problem *p, int algo,
                                 const struct ocd_conv_impl *impl, const struct ocd_impl_plan *plan)
{
    size_t need = ocd_conv_impl_workspace(handle, impl, p, plan);
    if (p->dir != OCD_CONV_FWD || p->ep.on) return need;
    struct ocd_conv_problem fused = *p;
    fused.ep.on = true, fused.ep.relu = true;
    struct ocd_tensor_view *b = &fused.ep.bias_view;
    *b = p->y;
    b->dtype = fused_bias_type(p), b->vect = 1;
    for (int d = 0; d < b->rank; d++) b->dims[d] = d == 1 ? p->y.dims[1] : 1, b->strides[d] = d == 1 ? 1 : p->y.dims[1];
    char why[1024];
    struct ocd_impl_plan fused_plan;
    const struct ocd_conv_impl *e = ocd_conv_pick(handle, &fused, algo, why, sizeof why, &fused_plan);
    const size_t fused_need = e != NULL ? ocd_conv_impl_workspace(handle, e, &fused, &fused_plan) : 0;
    return fused_need > need ? fused_need : need;
}

cudnnStatus_t ocd_conv_workspace_query(cudnnHandle_t handle, const struct ocd_conv_problem *p,
                                       int algo, size_t *bytes, const char *op)
{
    char why[1024];
    if (algo < 0 || algo >= ocd_conv_algo_count(p->dir))
        return ocd_fail(CUDNN_STATUS_BAD_PARAM, op, __FILE__, __LINE__, "invalid algorithm %d", algo);
    struct ocd_impl_plan plan;
    const struct ocd_conv_impl *impl = ocd_conv_pick(handle, p, algo, why, sizeof why, &plan);
    if (impl == NULL)
        return ocd_fail(CUDNN_STATUS_NOT_SUPPORTED, op, __FILE__, __LINE__, "%s: %s",
                        ocd_conv_algo_name(p->dir, algo), why);
    *bytes = reported_workspace(handle, p, algo, impl, &plan);
    return CUDNN_STATUS_SUCCESS;
}

struct ocd_conv_perf ocd_conv_perf_of(cudnnHandle_t handle, const struct ocd_conv_problem *p, int algo,
                                      const struct ocd_conv_impl *impl, const struct ocd_impl_plan *plan)
{
    struct ocd_conv_perf r = {algo, CUDNN_STATUS_NOT_SUPPORTED, -1.0f, 0, CUDNN_DETERMINISTIC, p->math};
    if (impl != NULL) {
        r.status = CUDNN_STATUS_SUCCESS;
        r.memory = reported_workspace(handle, p, algo, impl, plan);
        r.determinism = impl->determinism;
        r.math = ocd_conv_reported_math(impl, p);
    }
    return r;
}

int ocd_conv_rank_algorithms(cudnnHandle_t handle, const struct ocd_conv_problem *p, struct ocd_conv_perf *out,
                             const struct ocd_conv_impl **impls)
{
    const struct ocd_conv_table *t = ocd_conv_table(p->dir);
    int count = ocd_conv_algo_count(p->dir), n = 0;
    bool listed[16] = {false};
    char why[1024];
    struct ocd_impl_plan plan;
    int first = ocd_conv_heuristic_first(handle, p);
    if (first >= 0) {
        const struct ocd_conv_impl *impl = ocd_conv_pick(handle, p, first, why, sizeof why, &plan);
        if (impl != NULL) {
            listed[first] = true;
            impls[n] = impl;
            out[n++] = ocd_conv_perf_of(handle, p, first, impl, &plan);
        }
    }
    for (size_t e = 0; e < t->count; e++) {
        for (int a = 0; a < count; a++) {
            if (listed[a] || !(t->impls[e].base.algos & (1u << a))) continue;
            const struct ocd_conv_impl *impl = ocd_conv_pick(handle, p, a, why, sizeof why, &plan);
            if (impl != &t->impls[e]) continue; /* an earlier entry or none serves it */
            listed[a] = true;
            impls[n] = impl;
            out[n++] = ocd_conv_perf_of(handle, p, a, impl, &plan);
        }
    }
    for (int a = 0; a < count; a++) {
        if (listed[a]) continue;
        impls[n] = NULL;
        out[n++] = ocd_conv_perf_of(handle, p, a, NULL, NULL);
    }
    return n;
}

/* Every algorithm once, those that run first in table order (the heuristic), at most `requested`. */
static void heuristic(cudnnHandle_t handle, const struct ocd_conv_problem *p, int requested, int *returned,
                      struct ocd_conv_perf *perf)
{
    struct ocd_conv_perf all[16];
    const struct ocd_conv_impl *impls[16];
    int n = ocd_conv_rank_algorithms(handle, p, all, impls);
    n = OCD_MIN(n, requested);
    memcpy(perf, all, sizeof *perf * (size_t)n);
    *returned = n;
}

/* The three perf structs of the API differ only in the enum type of algo; one layout serves them. */
_Static_assert(sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t) &&
                   sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdFilterAlgoPerf_t) &&
                   offsetof(cudnnConvolutionBwdDataAlgoPerf_t, mathType) == offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType) &&
                   offsetof(cudnnConvolutionBwdFilterAlgoPerf_t, mathType) == offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType),
               "the convolution perf structs share one layout");

void ocd_conv_export_perf(const struct ocd_conv_perf *src, int n, void *dst)
{
    for (int i = 0; i < n; i++) {
        cudnnConvolutionFwdAlgoPerf_t r;
        memset(&r, 0, sizeof r);
        r.algo = (cudnnConvolutionFwdAlgo_t)src[i].algo;
        r.status = src[i].status;
        r.time = src[i].time;
        r.memory = src[i].memory;
        r.determinism = src[i].determinism;
        r.mathType = src[i].math;
        memcpy((char *)dst + (size_t)i * sizeof r, &r, sizeof r);
    }
}

int ocd_conv_preferred_algo(cudnnHandle_t handle, const struct ocd_conv_problem *p)
{
    struct ocd_conv_perf perf[16];
    int n = 0;
    heuristic(handle, p, 1, &n, perf);
    return n > 0 && perf[0].status == CUDNN_STATUS_SUCCESS ? perf[0].algo : -1;
}

cudnnStatus_t ocd_conv_get_algorithms(cudnnHandle_t handle, const struct ocd_conv_problem *p, int requested,
                                      int *returned, void *perf_results)
{
    struct ocd_conv_perf perf[16];
    int n = 0;
    heuristic(handle, p, requested, &n, perf);
    ocd_conv_export_perf(perf, n, perf_results);
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- shared argument checks of the entry points ------------------------------------------------- */

/* The checks the Get/Find entry points share: the handle, the counts and the outputs. */
cudnnStatus_t ocd_conv_check_query_args(cudnnHandle_t handle, int requested, const int *returned, const void *perf)
{
    OCD_CHECK_HANDLE(handle);
    if (returned == NULL || perf == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "returnedAlgoCount or perfResults is NULL");
    if (requested < 1) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "requestedAlgoCount %d is below 1", requested);
    return CUDNN_STATUS_SUCCESS;
}

/* alpha and beta: host pointers, double for double data and float otherwise. */
cudnnStatus_t ocd_conv_set_scaling(struct ocd_conv_problem *p, const void *alpha, const void *beta)
{
    if (alpha == NULL || beta == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "alpha or beta is NULL");
    p->alpha = ocd_scaling_value(p->x.dtype, alpha);
    p->beta = ocd_scaling_value(p->x.dtype, beta);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_conv_max_count(cudnnHandle_t handle, int *count, enum ocd_conv_dir dir)
{
    OCD_CHECK_HANDLE(handle);
    if (count == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "count is NULL");
    *count = ocd_conv_algo_count(dir);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- forward ------------------------------------------------------------------------------------ */

static cudnnStatus_t fwd_problem(struct ocd_conv_problem *p, cudnnTensorDescriptor_t xDesc,
                                 cudnnFilterDescriptor_t wDesc, cudnnConvolutionDescriptor_t convDesc,
                                 cudnnTensorDescriptor_t yDesc)
{
    return ocd_conv_problem_init(p, OCD_CONV_FWD, xDesc, "xDesc", wDesc, "wDesc", convDesc, yDesc, "yDesc");
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    OCD_LOG_API("handle=%p count=%p", (void *)handle, (void *)count);
    return ocd_conv_max_count(handle, count, OCD_CONV_FWD);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc, const cudnnFilterDescriptor_t filterDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t destDesc,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    OCD_LOG_API("handle=%p srcDesc=%p filterDesc=%p convDesc=%p destDesc=%p requestedAlgoCount=%d",
                (void *)handle, (void *)srcDesc, (void *)filterDesc, (void *)convDesc, (void *)destDesc,
                requestedAlgoCount);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(fwd_problem(&p, srcDesc, filterDesc, convDesc, destDesc));
    return ocd_conv_get_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    OCD_LOG_API("handle=%p xDesc=%p wDesc=%p convDesc=%p yDesc=%p requestedAlgoCount=%d", (void *)handle,
                (void *)xDesc, (void *)wDesc, (void *)convDesc, (void *)yDesc, requestedAlgoCount);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(fwd_problem(&p, xDesc, wDesc, convDesc, yDesc));
    return ocd_conv_find_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults, false, NULL, 0,
                                    __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnFilterDescriptor_t wDesc,
    const void *w, const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, void *y,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults,
    void *workSpace, size_t workSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p xDesc=%p x=%p wDesc=%p w=%p convDesc=%p yDesc=%p y=%p requestedAlgoCount=%d "
                "workSpace=%p workSpaceSizeInBytes=%zu",
                (void *)handle, (void *)xDesc, x, (void *)wDesc, w, (void *)convDesc, (void *)yDesc, y,
                requestedAlgoCount, workSpace, workSpaceSizeInBytes);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(fwd_problem(&p, xDesc, wDesc, convDesc, yDesc));
    if (x == NULL || w == NULL || y == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x, w or y is NULL");
    p.x_data = (void *)x, p.w_data = (void *)w, p.y_data = y;
    return ocd_conv_find_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults, true, workSpace, workSpaceSizeInBytes,
                                    __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, cudnnConvolutionFwdAlgo_t algo,
    size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p xDesc=%p wDesc=%p convDesc=%p yDesc=%p algo=%d", (void *)handle, (void *)xDesc,
                (void *)wDesc, (void *)convDesc, (void *)yDesc, (int)algo);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_problem p;
    OCD_TRY(fwd_problem(&p, xDesc, wDesc, convDesc, yDesc));
    if (sizeInBytes == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    return ocd_conv_workspace_query(handle, &p, (int)algo, sizeInBytes, __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                                  const cudnnTensorDescriptor_t xDesc, const void *x,
                                                  const cudnnFilterDescriptor_t wDesc, const void *w,
                                                  const cudnnConvolutionDescriptor_t convDesc,
                                                  cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                                  size_t workSpaceSizeInBytes, const void *beta,
                                                  const cudnnTensorDescriptor_t yDesc, void *y)
{
    OCD_LOG_API("handle=%p xDesc=%p x=%p wDesc=%p w=%p convDesc=%p algo=%d workSpace=%p "
                "workSpaceSizeInBytes=%zu yDesc=%p y=%p",
                (void *)handle, (void *)xDesc, x, (void *)wDesc, w, (void *)convDesc, (int)algo, workSpace,
                workSpaceSizeInBytes, (void *)yDesc, y);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_problem p;
    OCD_TRY(fwd_problem(&p, xDesc, wDesc, convDesc, yDesc));
    if (x == NULL || w == NULL || y == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x, w or y is NULL");
    OCD_TRY(ocd_conv_set_scaling(&p, alpha, beta));
    p.x_data = (void *)x, p.w_data = (void *)w, p.y_data = y;
    return ocd_conv_execute(handle, &p, (int)algo, workSpace, workSpaceSizeInBytes, __func__);
}

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias). The documentation allows RELU and IDENTITY,
   and IDENTITY only with IMPLICIT_PRECOMP_GEMM; z must be described as y is (it may be y itself);
   bias is 1 x K x 1 x 1, FLOAT for the integer configurations and of y's type otherwise. */
cudnnStatus_t CUDNNWINAPI cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void *workSpace, size_t workSpaceSizeInBytes, const void *alpha2,
    const cudnnTensorDescriptor_t zDesc, const void *z, const cudnnTensorDescriptor_t biasDesc, const void *bias,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void *y)
{
    OCD_LOG_API("handle=%p xDesc=%p x=%p wDesc=%p w=%p convDesc=%p algo=%d workSpace=%p "
                "workSpaceSizeInBytes=%zu zDesc=%p z=%p biasDesc=%p bias=%p activationDesc=%p yDesc=%p y=%p",
                (void *)handle, (void *)xDesc, x, (void *)wDesc, w, (void *)convDesc, (int)algo, workSpace,
                workSpaceSizeInBytes, (void *)zDesc, z, (void *)biasDesc, bias, (void *)activationDesc,
                (void *)yDesc, y);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_problem p;
    OCD_TRY(fwd_problem(&p, xDesc, wDesc, convDesc, yDesc));
    if (x == NULL || w == NULL || y == NULL || bias == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x, w, bias or y is NULL");
    if (alpha1 == NULL || alpha2 == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "alpha1 or alpha2 is NULL");
    struct ocd_tensor_view zv, bv;
    OCD_TRY(ocd_tensor_get(zDesc, "zDesc", &zv));
    OCD_TRY(ocd_tensor_get(biasDesc, "biasDesc", &bv));
    struct ocd_activation_params act;
    OCD_TRY(ocd_activation_params(activationDesc, "activationDesc", &act));
    p.ep.alpha2 = ocd_scaling_value(p.x.dtype, alpha2);
    if (zv.dtype != p.y.dtype || !ocd_view_same_dims(&zv, &p.y) ||
        memcmp(zv.strides, p.y.strides, sizeof zv.strides) != 0) {
        /* With alpha2 = 0, z is not read: dlib passes the bias's descriptor and pointer as z. */
        if (p.ep.alpha2 != 0)
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "zDesc does not match yDesc (type, dims and strides)");
        if (ocd_log_mask & CUDNN_SEV_INFO_EN)
            ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                            "zDesc does not match yDesc; alpha2 is 0, so z is not read");
    }
    cudnnDataType_t bias_type = fused_bias_type(&p);
    bool bias_shape = bv.rank == p.y.rank && bv.dims[1] == p.y.dims[1];
    for (int d = 0; d < bv.rank && bias_shape; d++) bias_shape = d == 1 || bv.dims[d] == 1;
    if (!bias_shape || bv.dtype != bias_type)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "biasDesc must be %s 1 x %lld x 1 x 1%s", ocd_dtype_name(bias_type),
                        (long long)p.y.dims[1], p.y.rank == 5 ? " x 1" : "");
    if (act.mode != CUDNN_ACTIVATION_RELU && act.mode != CUDNN_ACTIVATION_IDENTITY)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "activation mode %d: only RELU and IDENTITY are allowed", (int)act.mode);
    if (act.mode == CUDNN_ACTIVATION_IDENTITY && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                        "the IDENTITY activation is only enabled with CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM");
    p.alpha = ocd_scaling_value(p.x.dtype, alpha1);
    p.ep.on = true;
    if (p.ep.alpha2 != 0 && z == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "z is NULL and alpha2 is not 0");
    p.ep.z = p.ep.alpha2 != 0 ? z : NULL;
    p.ep.bias = bias;
    p.ep.bias_view = bv;
    p.ep.relu = act.mode == CUDNN_ACTIVATION_RELU;
    p.x_data = (void *)x, p.w_data = (void *)w, p.y_data = y;
    return ocd_conv_execute(handle, &p, (int)algo, workSpace, workSpaceSizeInBytes, __func__);
}

/* ---- backward data ------------------------------------------------------------------------------- */

static cudnnStatus_t bwd_data_problem(struct ocd_conv_problem *p, cudnnFilterDescriptor_t wDesc,
                                      cudnnTensorDescriptor_t dyDesc, cudnnConvolutionDescriptor_t convDesc,
                                      cudnnTensorDescriptor_t dxDesc)
{
    return ocd_conv_problem_init(p, OCD_CONV_BWD_DATA, dxDesc, "dxDesc", wDesc, "wDesc", convDesc, dyDesc, "dyDesc");
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    OCD_LOG_API("handle=%p count=%p", (void *)handle, (void *)count);
    return ocd_conv_max_count(handle, count, OCD_CONV_BWD_DATA);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t gradDesc,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    OCD_LOG_API("handle=%p filterDesc=%p diffDesc=%p convDesc=%p gradDesc=%p requestedAlgoCount=%d",
                (void *)handle, (void *)filterDesc, (void *)diffDesc, (void *)convDesc, (void *)gradDesc,
                requestedAlgoCount);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(bwd_data_problem(&p, filterDesc, diffDesc, convDesc, gradDesc));
    return ocd_conv_get_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    OCD_LOG_API("handle=%p wDesc=%p dyDesc=%p convDesc=%p dxDesc=%p requestedAlgoCount=%d", (void *)handle,
                (void *)wDesc, (void *)dyDesc, (void *)convDesc, (void *)dxDesc, requestedAlgoCount);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(bwd_data_problem(&p, wDesc, dyDesc, convDesc, dxDesc));
    return ocd_conv_find_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults, false, NULL, 0,
                                    __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t dyDesc,
    const void *dy, const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults,
    void *workSpace, size_t workSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p wDesc=%p w=%p dyDesc=%p dy=%p convDesc=%p dxDesc=%p dx=%p requestedAlgoCount=%d "
                "workSpace=%p workSpaceSizeInBytes=%zu",
                (void *)handle, (void *)wDesc, w, (void *)dyDesc, dy, (void *)convDesc, (void *)dxDesc, dx,
                requestedAlgoCount, workSpace, workSpaceSizeInBytes);
    OCD_TRY(ocd_conv_check_query_args(handle, requestedAlgoCount, returnedAlgoCount, perfResults));
    struct ocd_conv_problem p;
    OCD_TRY(bwd_data_problem(&p, wDesc, dyDesc, convDesc, dxDesc));
    if (w == NULL || dy == NULL || dx == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "w, dy or dx is NULL");
    p.x_data = dx, p.w_data = (void *)w, p.y_data = (void *)dy;
    return ocd_conv_find_algorithms(handle, &p, requestedAlgoCount, returnedAlgoCount, perfResults, true, workSpace, workSpaceSizeInBytes,
                                    __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes)
{
    OCD_LOG_API("handle=%p wDesc=%p dyDesc=%p convDesc=%p dxDesc=%p algo=%d", (void *)handle, (void *)wDesc,
                (void *)dyDesc, (void *)convDesc, (void *)dxDesc, (int)algo);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_problem p;
    OCD_TRY(bwd_data_problem(&p, wDesc, dyDesc, convDesc, dxDesc));
    if (sizeInBytes == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sizeInBytes is NULL");
    return ocd_conv_workspace_query(handle, &p, (int)algo, sizeInBytes, __func__);
}

cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                                       const cudnnFilterDescriptor_t wDesc, const void *w,
                                                       const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                       const cudnnConvolutionDescriptor_t convDesc,
                                                       cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                                       size_t workSpaceSizeInBytes, const void *beta,
                                                       const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    OCD_LOG_API("handle=%p wDesc=%p w=%p dyDesc=%p dy=%p convDesc=%p algo=%d workSpace=%p "
                "workSpaceSizeInBytes=%zu dxDesc=%p dx=%p",
                (void *)handle, (void *)wDesc, w, (void *)dyDesc, dy, (void *)convDesc, (int)algo, workSpace,
                workSpaceSizeInBytes, (void *)dxDesc, dx);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_problem p;
    OCD_TRY(bwd_data_problem(&p, wDesc, dyDesc, convDesc, dxDesc));
    if (w == NULL || dy == NULL || dx == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "w, dy or dx is NULL");
    OCD_TRY(ocd_conv_set_scaling(&p, alpha, beta));
    p.x_data = dx, p.w_data = (void *)w, p.y_data = (void *)dy;
    return ocd_conv_execute(handle, &p, (int)algo, workSpace, workSpaceSizeInBytes, __func__);
}

/* ---- Im2Col and filter reordering ---------------------------------------------------------------- */

/* The im2col matrix of the forward GEMM: N*P*Q rows (n, then p, then q) by C*R*S columns (c, then
   r, then s), dense row-major, of x's type; CONVOLUTION mode reads the mirrored filter position so
   that a GEMM with the unmirrored filter gives the convolution. 2-D only, as documented. */
cudnnStatus_t CUDNNWINAPI cudnnIm2Col(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void *x,
                                      const cudnnFilterDescriptor_t wDesc, const cudnnConvolutionDescriptor_t convDesc,
                                      void *colBuffer)
{
    OCD_LOG_API("handle=%p xDesc=%p x=%p wDesc=%p convDesc=%p colBuffer=%p", (void *)handle, (void *)xDesc, x,
                (void *)wDesc, (void *)convDesc, colBuffer);
    OCD_CHECK_HANDLE(handle);
    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    OCD_TRY(ocd_tensor_get(xDesc, "xDesc", &p.x));
    OCD_TRY(ocd_filter_get(wDesc, "wDesc", &p.w));
    OCD_TRY(ocd_conv_desc_get(convDesc, "convDesc"));
    if (x == NULL || colBuffer == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "x or colBuffer is NULL");
    int64_t out[OCD_MAX_DIMS];
    OCD_TRY(ocd_conv_output_dims(convDesc, &p.x, &p.w, out));
    if (p.x.rank != 4) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnIm2Col supports 2-D convolutions only");
    if (p.x.vect > 1) return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "cudnnIm2Col does not take vector types");
    struct ocd_conv_shape *s = &p.s;
    s->nsp = 2, s->n = p.x.dims[0], s->c = p.x.dims[1], s->k = p.w.dims[0], s->groups = 1;
    for (int d = 0; d < 2; d++) {
        s->in[d] = p.x.dims[d + 2], s->filt[d] = p.w.dims[d + 2], s->out[d] = out[d + 2];
        s->pad[d] = convDesc->pad[d], s->stride[d] = convDesc->stride[d], s->dilation[d] = convDesc->dilation[d];
    }
    s->flip = convDesc->mode == CUDNN_CONVOLUTION;
    p.x_data = (void *)x;
    p.y_data = colBuffer; /* the destination */
    return ocd_impl_run(handle, ocd_conv_im2col_impls, ocd_conv_im2col_impl_count, &p, __func__);
}

/* opencudnn's "reordered" INT8x32 filter and bias layout is the plain layout (its kernels read
   the plain one), so reordering is a copy; round trips through it are exact. */
cudnnStatus_t CUDNNWINAPI cudnnReorderFilterAndBias(cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
                                                    cudnnReorderType_t reorderType, const void *filterData,
                                                    void *reorderedFilterData, int reorderBias,
                                                    const void *biasData, void *reorderedBiasData)
{
    OCD_LOG_API("handle=%p filterDesc=%p reorderType=%d filterData=%p reorderedFilterData=%p reorderBias=%d "
                "biasData=%p reorderedBiasData=%p",
                (void *)handle, (void *)filterDesc, (int)reorderType, filterData, reorderedFilterData, reorderBias,
                biasData, reorderedBiasData);
    OCD_CHECK_HANDLE(handle);
    struct ocd_tensor_view wv;
    OCD_TRY(ocd_filter_get(filterDesc, "filterDesc", &wv));
    if (reorderType != CUDNN_DEFAULT_REORDER && reorderType != CUDNN_NO_REORDER)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid reorder type %d", (int)reorderType);
    if (filterData == NULL || reorderedFilterData == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "filterData or reorderedFilterData is NULL");
    if (reorderBias > 0 && (biasData == NULL || reorderedBiasData == NULL))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "biasData or reorderedBiasData is NULL");
    OCD_TRY(ocd_backend_copy(handle, reorderedFilterData, filterData, (size_t)ocd_view_span_bytes(&wv),
                             OCD_COPY_ON_DEVICE));
    if (reorderBias > 0) /* one float per filter: the bias type of the int8 configurations */
        OCD_TRY(ocd_backend_copy(handle, reorderedBiasData, biasData, (size_t)wv.dims[0] * sizeof(float),
                                 OCD_COPY_ON_DEVICE));
    return CUDNN_STATUS_SUCCESS;
}
