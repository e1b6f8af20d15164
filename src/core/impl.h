/* impl.h: implementation tables, and the walker that picks from them.

   Each op direction keeps one table (a plain array of struct ocd_impl), most specialised entry
   first and a plain reference implementation of each backend last, so that list order is the
   heuristic. The API entry validates the user's arguments (BAD_PARAM, nothing written) and
   builds a problem struct; the walker then takes the first entry that runs on the handle's
   backend, is not switched off, and applies. Every skipped entry is logged with its reason; when
   none applies the call returns NOT_SUPPORTED, logged with all the reasons.

   OPENCUDNN_DISABLE=name[,name...] switches entries off by name; a name ending in '*' is a
   prefix (OPENCUDNN_DISABLE='cuda:*' leaves only what a host entry could serve, i.e. nothing on
   a CUDA handle). Names are "backend:approach[_config]" and are never reused for other code. */
#ifndef OCD_CORE_IMPL_H
#define OCD_CORE_IMPL_H

#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_impl {
    const char *name;              /* "host:reference", "cuda:elementwise_vec4", ... */
    enum ocd_backend_kind backend; /* the backend it runs on */
    int algo;                      /* the cuDNN algorithm enum it serves, or -1 */
    /* NULL when the entry can serve the problem, else a reason (a string from reasons.h or a
       literal); optional: NULL means it always applies. */
    const char *(*applies)(cudnnHandle_t handle, const void *problem);
    /* Workspace bytes it needs; optional: NULL means none. */
    size_t (*workspace)(cudnnHandle_t handle, const void *problem);
    /* Does the work. The API has validated everything; run only fails on device errors. */
    cudnnStatus_t (*run)(cudnnHandle_t handle, const void *problem, void *workspace,
                         size_t workspace_bytes);
};

/* True when OPENCUDNN_DISABLE names the entry. */
bool ocd_impl_disabled(const char *name);

/* Why `impl` cannot serve the problem on this handle, or NULL when it can. */
const char *ocd_impl_rejects(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem);

/* The first entry that can serve the problem, or NULL after logging NOT_SUPPORTED with every
   reason (op names the operation in the log, e.g. "cudnnAddTensor"). */
const struct ocd_impl *ocd_impl_select(cudnnHandle_t handle, const struct ocd_impl *table,
                                       size_t count, const void *problem, const char *op);

/* Selects and runs an entry that needs no workspace: the usual path of a simple op. */
cudnnStatus_t ocd_impl_run(cudnnHandle_t handle, const struct ocd_impl *table, size_t count,
                           const void *problem, const char *op);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_IMPL_H */
