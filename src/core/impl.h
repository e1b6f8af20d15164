/* impl.h: implementation tables, and the one walker that picks from them.

   Each op direction keeps one table (an array of entries that start with struct ocd_impl), most
   specialised entry first and a plain reference implementation of each backend last, so that
   list order is the heuristic. The API entry validates the user's arguments (BAD_PARAM, nothing
   written) and builds a problem struct; the walker then takes the first entry that serves the
   asked algorithm (ops with algorithms, as convolution), runs on the handle's backend, is not
   switched off, applies, and passes the op's own further test (convolution: the math type, the
   workspace cap, a measured race). With CUDNN_LOGINFO_DBG on, every skipped entry is logged with
   its reason and the chosen one by name; when none serves, the reasons of all come back to the
   caller (ocd_impl_select logs them with NOT_SUPPORTED).

   OPENCUDNN_DISABLE=name[,name...] switches entries off by name; a name ending in '*' is a
   prefix (OPENCUDNN_DISABLE='cuda:*' leaves only what a host entry could serve, i.e. nothing on
   a CUDA handle). Names are "backend:approach[_config]" and are never reused for other code.

   Registry coverage (a test-only switch): with OPENCUDNN_IMPL_COVERAGE=path, every table the
   process walks is remembered, every entry the walker chooses is counted, and at exit each
   entry of those tables is written to path.<process id> as "name<TAB>backend<TAB>count"
   (tests/check_coverage.py proves that the suite chose every entry). */
#ifndef OCD_CORE_IMPL_H
#define OCD_CORE_IMPL_H

#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_impl {
    const char *name;              /* "host:reference", "cuda:elementwise_vec4", ... */
    enum ocd_backend_kind backend; /* the backend it runs on */
    /* The algorithm enums it serves (bit a: algorithm a), for ops that have algorithms (the
       convolution directions); 0 for the others, whose walks ask for no algorithm. */
    unsigned algos;
    /* NULL when the entry can serve the problem, else a reason (a string from reasons.h or a
       literal); optional: NULL means it always applies. */
    const char *(*applies)(cudnnHandle_t handle, const void *problem);
    /* Workspace bytes it needs; optional: NULL means none. */
    size_t (*workspace)(cudnnHandle_t handle, const void *problem);
    /* Does the work. The API has validated everything; run only fails on device errors. */
    cudnnStatus_t (*run)(cudnnHandle_t handle, const void *problem, void *workspace,
                         size_t workspace_bytes);
};

/* A table as the walker sees it: `count` entries `stride` bytes apart, each starting with a
   struct ocd_impl (a plain table, or one whose entries extend it, as convolution's do). */
struct ocd_impl_table {
    const void *entries;
    size_t count, stride;
};
#define OCD_IMPL_TABLE(array) ((struct ocd_impl_table){(array), OCD_ARRAY_LEN(array), sizeof *(array)})

/* Entry i of a table. */
static inline const struct ocd_impl *ocd_impl_at(struct ocd_impl_table t, size_t i)
{
    return (const struct ocd_impl *)(const void *)((const char *)t.entries + i * t.stride);
}

/* What a walk asks besides the table and the problem. */
struct ocd_impl_query {
    const char *op; /* names the operation in log lines ("cudnnAddTensor", "FWD_ALGO_GEMM") */
    int algo;       /* -1: every entry takes part; else only those whose algos hold it */
    /* Optional: why an entry that applies may still not serve (NULL when it may). */
    const char *(*rejects)(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem, int algo);
};

/* True when OPENCUDNN_DISABLE names the entry. */
bool ocd_impl_disabled(const char *name);

/* Why `impl` cannot serve the problem on this handle (backend, switch, applies), or NULL. */
const char *ocd_impl_rejects(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem);

/* The walker: the first entry of the table that serves the query, or NULL with the reasons of
   every entry that was passed over on this backend in why ("" when the backend has none). */
const struct ocd_impl *ocd_impl_walk(cudnnHandle_t handle, struct ocd_impl_table table, const void *problem,
                                     const struct ocd_impl_query *query, char *why, size_t why_size);

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
