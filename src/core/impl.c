/* impl.c: the implementation-table walker and its registry-coverage record (see impl.h). */
#include "core/impl.h"

#include "core/platform.h"
#include "core/reasons.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ocd_impl_unproven(void)
{
    const char *on = getenv("OPENCUDNN_UNPROVEN");
    return on != NULL && strcmp(on, "1") == 0 ? NULL : OCD_REASON_UNPROVEN;
}

bool ocd_impl_disabled(const char *name)
{
    const char *list = getenv("OPENCUDNN_DISABLE");
    if (list == NULL) return false;
    while (*list) {
        size_t len = strcspn(list, ",");
        if (len > 0 && list[len - 1] == '*') {
            if (strncmp(name, list, len - 1) == 0) return true;
        } else if (len == strlen(name) && strncmp(name, list, len) == 0) {
            return true;
        }
        list += len + (list[len] == ',');
    }
    return false;
}

/* One object, so that the walker can tell this reason (never logged) by its address. */
static const char reason_backend[] = OCD_REASON_BACKEND;

/* The entry's verdict from its plan, computed into plan. */
static const char *make_plan(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                             struct ocd_impl_plan *plan)
{
    plan->impl = NULL;
    plan->why = impl->planned->plan(handle, problem, plan->u.bytes);
    plan->impl = impl;
    return plan->why;
}

const char *ocd_impl_rejects(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                             struct ocd_impl_plan *plan)
{
    if (impl->backend != ocd_handle_kind(handle)) return reason_backend;
    if (ocd_impl_disabled(impl->name)) return OCD_REASON_DISABLED;
    if (impl->planned == NULL) return impl->applies ? impl->applies(handle, problem) : NULL;
    struct ocd_impl_plan own;
    return make_plan(handle, impl, problem, plan != NULL ? plan : &own);
}

/* The plan of a planned entry: the caller's when it holds the entry's, else computed into own. */
static const struct ocd_impl_plan *plan_of(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                                           const struct ocd_impl_plan *plan, struct ocd_impl_plan *own)
{
    if (plan != NULL && plan->impl == impl) return plan;
    make_plan(handle, impl, problem, own);
    return own;
}

size_t ocd_impl_workspace(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                          const struct ocd_impl_plan *plan)
{
    if (impl->planned == NULL) return impl->workspace ? impl->workspace(handle, problem) : 0;
    if (impl->planned->workspace == NULL) return 0;
    struct ocd_impl_plan own;
    const struct ocd_impl_plan *pl = plan_of(handle, impl, problem, plan, &own);
    return pl->why == NULL ? impl->planned->workspace(handle, problem, pl->u.bytes) : 0;
}

cudnnStatus_t ocd_impl_exec(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                            const struct ocd_impl_plan *plan, void *workspace, size_t workspace_bytes)
{
    if (impl->planned == NULL) return impl->run(handle, problem, workspace, workspace_bytes);
    struct ocd_impl_plan own;
    const struct ocd_impl_plan *pl = plan_of(handle, impl, problem, plan, &own);
    if (pl->why != NULL) /* the walker chose it, so this is a caller's mistake */
        return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "%s run on a problem it does not serve: %s", impl->name, pl->why);
    return impl->planned->run(handle, problem, pl->u.bytes, workspace, workspace_bytes);
}

/* ---- registry coverage (OPENCUDNN_IMPL_COVERAGE) --------------------------------------------------
   Static storage only: the record must not take part in the allocation-failure sweeps. */

#define COVERAGE_TABLES 128
#define COVERAGE_COUNTERS 2048

struct coverage_table {
    struct ocd_impl_table t;
    unsigned long *counts; /* t.count counters in coverage_counters */
};

static ocd_once_t coverage_once = OCD_ONCE_INIT;
static const char *coverage_path; /* NULL: the record is off */
static ocd_mutex_t coverage_lock = OCD_MUTEX_INIT;
static struct coverage_table coverage_tables[COVERAGE_TABLES];
static size_t coverage_table_count, coverage_counters_used;
static unsigned long coverage_counters[COVERAGE_COUNTERS];

/* Writes every entry of every table walked, with the times the walker chose it. */
static void coverage_write(void)
{
    char file[1024];
    snprintf(file, sizeof file, "%s.%llu", coverage_path, ocd_process_id());
    FILE *f = fopen(file, "w");
    if (f == NULL) return;
    ocd_mutex_lock(&coverage_lock);
    for (size_t i = 0; i < coverage_table_count; i++) {
        const struct coverage_table *c = &coverage_tables[i];
        for (size_t e = 0; e < c->t.count; e++) {
            const struct ocd_impl *impl = ocd_impl_at(c->t, e);
            fprintf(f, "%s\t%s\t%lu\n", impl->name, impl->backend == OCD_BACKEND_CUDA ? "cuda" : "host",
                    c->counts[e]);
        }
    }
    ocd_mutex_unlock(&coverage_lock);
    fclose(f);
}

static void coverage_init(void)
{
    const char *path = getenv("OPENCUDNN_IMPL_COVERAGE");
    if (path == NULL || *path == '\0') return;
    coverage_path = path;
    atexit(coverage_write);
}

/* Counts a choice of entry `index` of table t, remembering the table on its first walk. */
static void coverage_note(struct ocd_impl_table t, size_t index)
{
    ocd_once(&coverage_once, coverage_init);
    if (coverage_path == NULL) return;
    ocd_mutex_lock(&coverage_lock);
    struct coverage_table *c = NULL;
    for (size_t i = 0; i < coverage_table_count && c == NULL; i++)
        if (coverage_tables[i].t.entries == t.entries) c = &coverage_tables[i];
    if (c == NULL && coverage_table_count < COVERAGE_TABLES && coverage_counters_used + t.count <= COVERAGE_COUNTERS) {
        c = &coverage_tables[coverage_table_count++];
        c->t = t;
        c->counts = &coverage_counters[coverage_counters_used];
        coverage_counters_used += t.count;
    }
    if (c != NULL) c->counts[index]++;
    ocd_mutex_unlock(&coverage_lock);
}

/* ---- the walker ------------------------------------------------------------------------------------ */

/* Why the entry cannot serve the query, or NULL. */
static const char *entry_rejects(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                                 const struct ocd_impl_query *q, struct ocd_impl_plan *plan)
{
    const char *why = ocd_impl_rejects(handle, impl, problem, plan);
    if (why == NULL && q->rejects != NULL) why = q->rejects(handle, impl, problem, plan, q->algo);
    return why;
}

static bool takes_part(const struct ocd_impl *impl, int algo)
{
    return algo < 0 || (algo < 32 && (impl->algos & (1u << algo)));
}

const struct ocd_impl *ocd_impl_walk(cudnnHandle_t handle, struct ocd_impl_table table, const void *problem,
                                     const struct ocd_impl_query *query, char *why, size_t why_size)
{
    const bool verbose = (ocd_log_mask & CUDNN_SEV_INFO_EN) != 0;
    struct ocd_impl_plan own;
    struct ocd_impl_plan *plan = query->plan != NULL ? query->plan : &own;
    plan->impl = NULL; /* a caller compares it with the entry chosen, which may be unplanned */
    for (size_t i = 0; i < table.count; i++) {
        const struct ocd_impl *impl = ocd_impl_at(table, i);
        if (!takes_part(impl, query->algo)) continue;
        const char *r = entry_rejects(handle, impl, problem, query, plan);
        if (r == NULL) {
            if (verbose) ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s: impl %s chosen", query->op, impl->name);
            coverage_note(table, i);
            return impl;
        }
        if (verbose && r != reason_backend)
            ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s: impl %s skipped: %s", query->op, impl->name, r);
    }
    /* None serves it: only now are the reasons worth formatting (this is off the call path). */
    size_t used = 0;
    if (why_size > 0) why[0] = '\0';
    for (size_t i = 0; i < table.count; i++) {
        const struct ocd_impl *impl = ocd_impl_at(table, i);
        if (!takes_part(impl, query->algo)) continue;
        const char *r = entry_rejects(handle, impl, problem, query, plan);
        if (r == NULL || r == reason_backend || used >= why_size) continue;
        used += (size_t)snprintf(why + used, why_size - used, "%s%s: %s", used ? "; " : "", impl->name, r);
    }
    return NULL;
}

const struct ocd_impl *ocd_impl_select(cudnnHandle_t handle, const struct ocd_impl *table, size_t count,
                                       const void *problem, const char *op, struct ocd_impl_plan *plan)
{
    char reasons[1024];
    const struct ocd_impl_query query = {op, -1, NULL, plan};
    const struct ocd_impl_table t = {table, count, sizeof *table};
    const struct ocd_impl *impl = ocd_impl_walk(handle, t, problem, &query, reasons, sizeof reasons);
    if (impl == NULL)
        ocd_fail(CUDNN_STATUS_NOT_SUPPORTED, op, __FILE__, __LINE__,
                 "no implementation on the %s backend serves this problem (%s)", handle->backend->name,
                 reasons[0] ? reasons : "none exists");
    return impl;
}

cudnnStatus_t ocd_impl_run(cudnnHandle_t handle, const struct ocd_impl *table, size_t count,
                           const void *problem, const char *op)
{
    struct ocd_impl_plan plan;
    const struct ocd_impl *impl = ocd_impl_select(handle, table, count, problem, op, &plan);
    if (impl == NULL) return CUDNN_STATUS_NOT_SUPPORTED;
    return ocd_impl_exec(handle, impl, problem, &plan, NULL, 0);
}
