/* impl.c: the implementation-table walker (see impl.h). */
#include "core/impl.h"

#include "core/reasons.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

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

const char *ocd_impl_rejects(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem)
{
    if (impl->backend != ocd_handle_kind(handle)) return OCD_REASON_BACKEND;
    if (ocd_impl_disabled(impl->name)) return OCD_REASON_DISABLED;
    return impl->applies ? impl->applies(handle, problem) : NULL;
}

const struct ocd_impl *ocd_impl_select(cudnnHandle_t handle, const struct ocd_impl *table,
                                       size_t count, const void *problem, const char *op)
{
    char reasons[1024];
    size_t used = 0;
    reasons[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        const char *why = ocd_impl_rejects(handle, &table[i], problem);
        if (why == NULL) return &table[i];
        if (why == (const char *)OCD_REASON_BACKEND) continue; /* not worth a log line */
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s: impl %s skipped: %s", op, table[i].name, why);
        if (used < sizeof reasons)
            used += (size_t)snprintf(reasons + used, sizeof reasons - used, "%s%s: %s", used ? "; " : "",
                                     table[i].name, why);
    }
    ocd_fail(CUDNN_STATUS_NOT_SUPPORTED, op, __FILE__, __LINE__,
             "no implementation on the %s backend serves this problem (%s)", handle->backend->name,
             used ? reasons : "none exists");
    return NULL;
}

cudnnStatus_t ocd_impl_run(cudnnHandle_t handle, const struct ocd_impl *table, size_t count,
                           const void *problem, const char *op)
{
    const struct ocd_impl *impl = ocd_impl_select(handle, table, count, problem, op);
    if (impl == NULL) return CUDNN_STATUS_NOT_SUPPORTED;
    return impl->run(handle, problem, NULL, 0);
}
