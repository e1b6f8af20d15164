/* check.c: OPENCUDNN_CHECK, the second opinion (see check.h).

   Main decision: the check works on the op's own problem struct. The call's description says
   where each data pointer sits in it; a copy of the struct with those pointers moved to host
   copies of the data is exactly the problem a host entry takes, so no op needs code of its own
   beyond naming its buffers. Everything the check allocates is freed before it returns; a check
   that cannot run (memory short, no host entry applies) is logged and the call's status stays the
   first run's. */
#include "core/check.h"

#include "core/dimgroup.h"
#include "core/dtype.h"
#include "core/platform.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- when ---------------------------------------------------------------------------------------- */

/* The share of calls checked: 0 (off), 1 (all), or a fraction. */
static double check_rate(void)
{
    const char *v = getenv("OPENCUDNN_CHECK");
    if (v == NULL || *v == '\0') return 0;
    double r = strtod(v, NULL);
    return r > 1 ? 1 : r > 0 ? r : 0;
}

bool ocd_check_replay_wanted(void)
{
    ocd_log_init();
    return (ocd_log_mask & CUDNN_SEV_INFO_EN) != 0;
}

bool ocd_check_enabled(void)
{
    return ocd_check_replay_wanted() || check_rate() > 0;
}

void ocd_check_log_replay(const char *op, const char *entry, const char *replay)
{
    if (replay[0] != '\0' && ocd_check_replay_wanted())
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s on %s: replay: opencudnn_bench --problem \"%s\"", op,
                        entry, replay);
}

/* True on a thread while it runs a second run: the calls inside it (a driver's GEMMs) are not
   checked again. */
static OCD_THREAD_LOCAL bool in_second_run;

/* Call k (counted over all checked ops) is sampled when floor((k + 1) r) > floor(k r): evenly
   spaced, exactly the share r in the long run. */
static bool sampled(void)
{
    static atomic_ullong calls;
    double r = check_rate();
    if (r >= 1) return true;
    if (r <= 0) return false;
    unsigned long long k = atomic_fetch_add(&calls, 1);
    return floor((double)(k + 1) * r) > floor((double)k * r);
}

/* ---- the description ------------------------------------------------------------------------------- */

void ocd_check_add(struct ocd_check_call *call, size_t field, const struct ocd_tensor_view *view, bool output)
{
    if (call->count < OCD_CHECK_BUFFERS)
        call->buffers[call->count++] = (struct ocd_check_buffer){.field = field, .view = *view, .output = output};
}

void ocd_check_add_array(struct ocd_check_call *call, size_t field, cudnnDataType_t t, int64_t count, bool output)
{
    struct ocd_tensor_view v = {.dtype = t, .rank = 1, .vect = 1, .dims = {count}, .strides = {1}};
    ocd_check_add(call, field, &v, output);
}

void ocd_check_add_exact(struct ocd_check_call *call, size_t field, cudnnDataType_t t, int64_t count)
{
    int at = call->count;
    ocd_check_add_array(call, field, t, count, true);
    if (call->count > at) call->buffers[at].exact = true;
}

void ocd_check_add_scratch(struct ocd_check_call *call, size_t field, size_t bytes)
{
    int at = call->count;
    ocd_check_add_array(call, field, CUDNN_DATA_INT8, (int64_t)bytes, false);
    if (call->count > at) call->buffers[at].scratch = true;
}

void ocd_check_map_io(struct ocd_check_call *call, size_t io_field, int nsrc, const struct ocd_tensor_view *const views[])
{
    for (int k = 0; k < nsrc; k++)
        ocd_check_add(call, io_field + offsetof(struct ocd_map_io, src) + (size_t)k * sizeof(void *), views[k], false);
    ocd_check_add(call, io_field + offsetof(struct ocd_map_io, dst), views[nsrc], true);
}

const char *ocd_check_dtype_name(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return "f32";
    case CUDNN_DATA_HALF: return "f16";
    case CUDNN_DATA_BFLOAT16: return "bf16";
    case CUDNN_DATA_DOUBLE: return "f64";
    case CUDNN_DATA_INT8: return "i8";
    case CUDNN_DATA_UINT8: return "u8";
    case CUDNN_DATA_INT8x4: return "i8x4";
    case CUDNN_DATA_INT8x32: return "i8x32";
    default: return ocd_dtype_name(t);
    }
}

void ocd_check_tensor_spec(const struct ocd_tensor_view *v, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < v->rank && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "x" : "", (long long)v->dims[d]);
    if (n < size && v->rank > 2 && !ocd_view_is_packed_rowmajor(v) && ocd_view_is_packed_nhwc(v))
        snprintf(buf + n, size - n, ":nhwc");
}

/* ---- scalars ------------------------------------------------------------------------------------------ */

static double load(cudnnDataType_t t, const void *base, int64_t i)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return ((const float *)base)[i];
    case CUDNN_DATA_DOUBLE: return ((const double *)base)[i];
    case CUDNN_DATA_HALF: return ocd_half_to_float(((const uint16_t *)base)[i]);
    case CUDNN_DATA_BFLOAT16: return ocd_bf16_to_float(((const uint16_t *)base)[i]);
    case CUDNN_DATA_INT32: return ((const int32_t *)base)[i];
    case CUDNN_DATA_INT64: return (double)((const int64_t *)base)[i];
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: return ((const uint8_t *)base)[i];
    default: return ((const int8_t *)base)[i];
    }
}

static void store(cudnnDataType_t t, void *base, int64_t i, double v)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: ((float *)base)[i] = (float)v; break;
    case CUDNN_DATA_DOUBLE: ((double *)base)[i] = v; break;
    case CUDNN_DATA_HALF: ((uint16_t *)base)[i] = ocd_double_to_half(v); break;
    case CUDNN_DATA_BFLOAT16: ((uint16_t *)base)[i] = ocd_double_to_bf16(v); break;
    case CUDNN_DATA_INT32: ((int32_t *)base)[i] = (int32_t)v; break;
    case CUDNN_DATA_INT64: ((int64_t *)base)[i] = (int64_t)v; break;
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: ((uint8_t *)base)[i] = (uint8_t)v; break;
    default: ((int8_t *)base)[i] = (int8_t)v; break;
    }
}

/* The relative tolerance of results of type t computed two ways (DESIGN.md 5). */
static double default_tolerance(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return 1e-5;
    case CUDNN_DATA_DOUBLE: return 1e-10;
    case CUDNN_DATA_HALF: return 1e-2;
    case CUDNN_DATA_BFLOAT16: return 2e-2;
    default: return 0;
    }
}

double ocd_check_driver_tolerance(cudnnDataType_t t, bool tf32)
{
    if (t != CUDNN_DATA_FLOAT) return default_tolerance(t);
    return tf32 ? 1e-2 : 1e-4;
}

/* ---- the host side ----------------------------------------------------------------------------------- */

static cudnnHandle_t host_handle;
static ocd_once_t host_once = OCD_ONCE_INIT;

/* The handle the host entries of a CUDA call run on: one per process, made on first need (a
   host handle holds nothing that calls share, so threads may use it together). */
static void make_host_handle(void)
{
    cudnnHandle_t h;
    if (ocd_object_create(OCD_OBJ_HANDLE, sizeof(struct cudnnContext), (void **)&h) != CUDNN_STATUS_SUCCESS) return;
    h->backend = &ocd_backend_host;
    h->device = -1;
    if (ocd_backend_host.open(h) != CUDNN_STATUS_SUCCESS) {
        ocd_object_destroy(OCD_OBJ_HANDLE, h);
        return;
    }
    host_handle = h;
}

/* The host entry that gives the second opinion on `primary` (see check.h), or NULL. */
static const struct ocd_impl *second_entry(cudnnHandle_t host, struct ocd_impl_table e, const void *problem,
                                           const struct ocd_impl *primary, struct ocd_impl_plan *plan)
{
    if (primary->backend != OCD_BACKEND_HOST) {
        for (size_t i = 0; i < e.count; i++)
            if (ocd_impl_rejects(host, ocd_impl_at(e, i), problem, plan) == NULL) return ocd_impl_at(e, i);
        return NULL;
    }
    for (size_t i = e.count; i-- > 0;)
        if (ocd_impl_rejects(host, ocd_impl_at(e, i), problem, plan) == NULL) return ocd_impl_at(e, i);
    return NULL;
}

static void **field_of(const void *problem, size_t field)
{
    return (void **)((char *)problem + field);
}

/* ---- the check -------------------------------------------------------------------------------------- */

struct copies {
    int count;
    void *before[OCD_CHECK_BUFFERS]; /* the data before the first run: the second run's buffers */
    void *after[OCD_CHECK_BUFFERS];  /* the outputs after the first run */
    size_t bytes[OCD_CHECK_BUFFERS];
    bool shared[OCD_CHECK_BUFFERS];  /* before[i] is an earlier buffer's (the same memory) */
};

static void copies_free(struct copies *c)
{
    for (int i = 0; i < c->count; i++) {
        if (!c->shared[i]) free(c->before[i]);
        free(c->after[i]);
    }
}

static bool same_view(const struct ocd_tensor_view *a, const struct ocd_tensor_view *b)
{
    return a->dtype == b->dtype && a->vect == b->vect && ocd_view_same_dims(a, b) && ocd_view_same_strides(a, b);
}

/* The earlier buffer that is buffer i's very memory (same pointer, same view: an in-place call,
   two dropout descriptors with one states buffer), or -1. The second run then shares one copy
   between them, so that it sees the call as the first run did. */
static int same_memory(const void *problem, const struct ocd_check_call *call, int i)
{
    const struct ocd_check_buffer *b = &call->buffers[i];
    for (int k = 0; k < i; k++) {
        const struct ocd_check_buffer *a = &call->buffers[k];
        if (!a->scratch && !b->scratch && *field_of(problem, a->field) == *field_of(problem, b->field) &&
            same_view(&a->view, &b->view))
            return k;
    }
    return -1;
}

/* Host copies of every buffer's span as it is now (outputs get a second, empty, copy). */
static cudnnStatus_t snapshot(cudnnHandle_t handle, const void *problem, const struct ocd_check_call *call,
                              struct copies *c)
{
    for (int i = 0; i < call->count; i++) {
        const struct ocd_check_buffer *b = &call->buffers[i];
        c->count = i + 1;
        if (*field_of(problem, b->field) == NULL) continue; /* an argument the call does not use */
        c->bytes[i] = (size_t)ocd_view_span_bytes(&b->view);
        const int k = same_memory(problem, call, i);
        c->shared[i] = k >= 0 && c->before[k] != NULL;
        c->before[i] = c->shared[i] ? c->before[k] : ocd_malloc(c->bytes[i] ? c->bytes[i] : 1);
        c->after[i] = b->output ? ocd_malloc(c->bytes[i] ? c->bytes[i] : 1) : NULL;
        if (c->before[i] == NULL || (b->output && c->after[i] == NULL))
            return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "OPENCUDNN_CHECK: cannot copy the data of %s", call->op);
        if (c->shared[i]) continue; /* holds the earlier buffer's data already */
        if (b->scratch)
            memset(c->before[i], 0, c->bytes[i]);
        else
            OCD_TRY(ocd_backend_copy(handle, c->before[i], *field_of(problem, b->field), c->bytes[i], OCD_COPY_TO_HOST));
    }
    return CUDNN_STATUS_SUCCESS;
}

/* OPENCUDNN_TEST_BREAK: perturbs the first scalar of the first output of the named entry. */
static cudnnStatus_t test_break(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                                const struct ocd_check_call *call)
{
    const char *name = getenv("OPENCUDNN_TEST_BREAK");
    if (name == NULL || strcmp(name, impl->name) != 0) return CUDNN_STATUS_SUCCESS;
    for (int i = 0; i < call->count; i++) {
        const struct ocd_check_buffer *b = &call->buffers[i];
        if (!b->output || *field_of(problem, b->field) == NULL) continue;
        cudnnDataType_t t = ocd_dtype_scalar(b->view.dtype);
        unsigned char scalar[8];
        void *dev = *field_of(problem, b->field);
        OCD_TRY(ocd_backend_copy(handle, scalar, dev, ocd_dtype_scalar_size(t), OCD_COPY_TO_HOST));
        store(t, scalar, 0, load(t, scalar, 0) + 1);
        return ocd_backend_copy(handle, dev, scalar, ocd_dtype_scalar_size(t), OCD_COPY_FROM_HOST);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Compares the outputs of the two runs and logs the verdict. */
static void compare(const struct ocd_check_call *call, const struct copies *c, const struct ocd_impl *first,
                    const struct ocd_impl *second)
{
    int64_t bad = 0, first_bad = -1, worst_at = -1;
    int bad_output = -1, worst_output = -1;
    double worst = 0, got0 = 0, want0 = 0;
    for (int i = 0; i < call->count; i++) {
        const struct ocd_check_buffer *b = &call->buffers[i];
        if (!b->output || c->after[i] == NULL) continue;
        cudnnDataType_t t = ocd_dtype_scalar(b->view.dtype);
        double tol = call->tolerance > 0 ? call->tolerance : default_tolerance(t);
        size_t size = ocd_dtype_scalar_size(t);
        int64_t n = (int64_t)(c->bytes[i] / size);
        for (int64_t e = 0; e < n; e++) {
            double got = load(t, c->after[i], e), want = load(t, c->before[i], e);
            size_t at = (size_t)e * size;
            bool differs = b->exact && memcmp((char *)c->after[i] + at, (char *)c->before[i] + at, size) != 0;
            if (isnan(got) && isnan(want) && !differs) continue;
            double diff = fabs(got - want);
            if (isnan(diff)) diff = INFINITY;
            if (got == want) diff = 0; /* equal infinities */
            double rel = diff / fmax(1.0, fabs(want));
            if (rel > worst) worst = rel, worst_at = e, worst_output = i;
            if (b->exact ? differs : rel > tol) {
                if (bad++ == 0) first_bad = e, bad_output = i, got0 = got, want0 = want;
            }
        }
    }
    if (bad == 0) {
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "OPENCUDNN_CHECK: %s: %s agrees with %s (largest relative difference %.3g)", call->op,
                        first->name, second->name, worst);
        return;
    }
    ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_SUCCESS,
                    "OPENCUDNN_CHECK: %s: %s differs from %s in %lld values: first at buffer %d element %lld "
                    "(%.9g, %s: %.9g), largest relative difference %.3g at buffer %d element %lld; replay: %s",
                    call->op, first->name, second->name, (long long)bad, bad_output, (long long)first_bad, got0,
                    second->name, want0, worst, worst_output, (long long)worst_at,
                    call->replay[0] ? call->replay : "(no benchmark form)");
}

cudnnStatus_t ocd_impl_run_checked(cudnnHandle_t handle, const struct ocd_impl *table, size_t count,
                                   const void *problem, const struct ocd_check_call *call)
{
    struct ocd_impl_plan plan;
    const struct ocd_impl *impl =
        ocd_impl_select(handle, table, count, problem, call ? call->op : "a checked call", &plan);
    if (impl == NULL) return CUDNN_STATUS_NOT_SUPPORTED;
    return ocd_check_run(handle, impl, problem, &plan, NULL, 0, call,
                         (struct ocd_impl_table){table, count, sizeof *table});
}

/* The second run: the problem copied, its pointers moved to the host copies, on a host entry. */
static void second_run(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                       const struct ocd_check_call *call, struct ocd_impl_table entries, struct copies *c)
{
    cudnnHandle_t host = handle;
    if (ocd_handle_kind(handle) != OCD_BACKEND_HOST) {
        ocd_once(&host_once, make_host_handle);
        host = host_handle;
    }
    void *copy = ocd_malloc(call->problem_size), *ws = NULL;
    const struct ocd_impl *second = NULL;
    struct ocd_impl_plan plan; /* the second entry's */
    size_t ws_bytes = 0;
    if (host != NULL && copy != NULL) {
        memcpy(copy, problem, call->problem_size);
        for (int i = 0; i < call->count; i++) *field_of(copy, call->buffers[i].field) = c->before[i];
        second = second_entry(host, entries, copy, impl, &plan);
        ws_bytes = second != NULL ? ocd_impl_workspace(host, second, copy, &plan) : 0;
        ws = ws_bytes ? ocd_malloc(ws_bytes) : NULL;
    }
    if (second == NULL || (ws_bytes > 0 && ws == NULL))
        ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_SUCCESS, "OPENCUDNN_CHECK: %s: %s could not be checked (%s)",
                        call->op, impl->name, second != NULL || copy == NULL || host == NULL ? "memory is short" : "no host entry applies");
    else {
        in_second_run = true;
        cudnnStatus_t s = ocd_impl_exec(host, second, copy, &plan, ws, ws_bytes);
        in_second_run = false;
        if (s != CUDNN_STATUS_SUCCESS)
            ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_SUCCESS, "OPENCUDNN_CHECK: %s: the host entry %s failed",
                            call->op, second->name);
        else
            compare(call, c, impl, second);
    }
    free(ws);
    free(copy);
}

cudnnStatus_t ocd_check_run(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                            const struct ocd_impl_plan *plan, void *workspace, size_t workspace_bytes,
                            const struct ocd_check_call *call, struct ocd_impl_table entries)
{
    if (call == NULL || in_second_run) return ocd_impl_exec(handle, impl, problem, plan, workspace, workspace_bytes);
    ocd_check_log_replay(call->op, impl->name, call->replay);
    if (!sampled()) return ocd_impl_exec(handle, impl, problem, plan, workspace, workspace_bytes);
    struct copies c = {0};
    cudnnStatus_t s = snapshot(handle, problem, call, &c);
    if (s != CUDNN_STATUS_SUCCESS) {
        copies_free(&c);
        return ocd_impl_exec(handle, impl, problem, plan, workspace, workspace_bytes);
    }
    s = ocd_impl_exec(handle, impl, problem, plan, workspace, workspace_bytes);
    if (s == CUDNN_STATUS_SUCCESS) s = test_break(handle, impl, problem, call);
    for (int i = 0; i < call->count && s == CUDNN_STATUS_SUCCESS; i++)
        if (c.after[i] != NULL)
            s = ocd_backend_copy(handle, c.after[i], *field_of(problem, call->buffers[i].field), c.bytes[i],
                                 OCD_COPY_TO_HOST);
    if (s == CUDNN_STATUS_SUCCESS) second_run(handle, impl, problem, call, entries, &c);
    copies_free(&c);
    return s;
}

cudnnStatus_t ocd_check_run_driver(cudnnHandle_t handle, const char *name,
                                   cudnnStatus_t (*run)(cudnnHandle_t handle, const void *problem, void *workspace,
                                                        size_t workspace_bytes),
                                   const void *problem, const struct ocd_check_call *call)
{
    char first_name[64], second_name[64];
    snprintf(first_name, sizeof first_name, "%s:%s", handle->backend->name, name);
    snprintf(second_name, sizeof second_name, "host:%s", name);
    const struct ocd_impl first = {first_name, ocd_handle_kind(handle), 0, NULL, NULL, run, NULL};
    const struct ocd_impl second = OCD_IMPL_ENTRY(second_name, OCD_BACKEND_HOST, NULL, NULL, run);
    return ocd_check_run(handle, &first, problem, NULL, NULL, 0, call,
                         (struct ocd_impl_table){&second, 1, sizeof second});
}
