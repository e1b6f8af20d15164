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

   Plans. Many entries first derive a plan from the problem (a tile and split choice, transform
   sizes, a workspace layout) on which their verdict, their workspace size and their run all
   rest. Such an entry is planned: its `planned` hooks replace applies, workspace and run, and
   the plan is computed once per problem into storage the caller provides (struct
   ocd_impl_plan). The walker computes the plan of each planned entry it asks into the query's
   storage, so that after a walk that storage holds the chosen entry's plan (and its verdict),
   tagged with the entry; ocd_impl_workspace and ocd_impl_exec take it from there and plan again
   only for storage that holds another entry's plan, or none (NULL). A plan depends on the
   problem and the handle alone, and may hold the problem's data pointers but never a pointer
   into the problem struct or into itself: it stays valid for a byte-equal problem on the same
   handle, so that convolution keeps it with its per-thread memo of the last choice and a
   repeated call runs without planning at all. Every call of an entry goes through
   ocd_impl_rejects, ocd_impl_workspace and ocd_impl_exec, which serve plain and planned
   entries alike.

   Unproven entries. CUDA code written while no GPU could run it (compiled, and its per-thread
   logic emulated on the CPU under tests/emulate, but never launched) must not reach a user's
   results before the suite has passed on a GPU. Such an entry's applies (or plan) asks
   ocd_impl_unproven() first, which rejects it with OCD_REASON_UNPROVEN unless
   OPENCUDNN_UNPROVEN=1; the test suite sets that switch, so its GPU run exercises them, and the
   call is removed from an entry once that run has passed (docs/engines.md lists them).

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

/* The largest plan an entry may have (OCD_IMPL_PLAN_FITS checks each plan type against it). */
#define OCD_IMPL_PLAN_BYTES 2560
#ifdef __cplusplus
#define OCD_IMPL_PLAN_FITS(type) static_assert(sizeof(type) <= OCD_IMPL_PLAN_BYTES, #type " exceeds OCD_IMPL_PLAN_BYTES")
#else
#define OCD_IMPL_PLAN_FITS(type) _Static_assert(sizeof(type) <= OCD_IMPL_PLAN_BYTES, #type " exceeds OCD_IMPL_PLAN_BYTES")
#endif

/* Workspaces are cut into parts of whole 256-byte blocks: the bytes a part of v bytes takes, and
   a caller's workspace pointer rounded up to the first block (an entry that does so asks for 256
   bytes more than its parts). */
static inline size_t ocd_ws_round(size_t v)
{
    return (v + 255) & ~(size_t)255;
}

static inline char *ocd_ws_aligned(void *workspace)
{
    return (char *)(((uintptr_t)workspace + 255) & ~(uintptr_t)255);
}

/* The hooks of a planned entry (see "Plans" above). */
struct ocd_impl_planned {
    /* Computes the plan into plan (at most OCD_IMPL_PLAN_BYTES); returns NULL when the entry can
       serve the problem, else a reason, as applies does. */
    const char *(*plan)(cudnnHandle_t handle, const void *problem, void *plan);
    /* Workspace bytes it needs with that plan; optional: NULL means none. */
    size_t (*workspace)(cudnnHandle_t handle, const void *problem, const void *plan);
    /* Does the work with that plan. */
    cudnnStatus_t (*run)(cudnnHandle_t handle, const void *problem, const void *plan, void *workspace,
                         size_t workspace_bytes);
};

/* Storage for one entry's plan. */
struct ocd_impl_plan {
    const struct ocd_impl *impl; /* the entry whose plan `u` holds; NULL: none */
    const char *why;             /* that entry's verdict on the problem: NULL when it serves it */
    union {
        max_align_t align;
        unsigned char bytes[OCD_IMPL_PLAN_BYTES];
    } u;
};

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
    /* A planned entry sets this and leaves applies, workspace and run NULL. */
    const struct ocd_impl_planned *planned;
};

/* An entry that serves no algorithm and has no plan: applies (NULL: always), workspace (NULL:
   none) and run. Tables use it, so that a field added to struct ocd_impl is added here once. */
#define OCD_IMPL_ENTRY(name, backend, applies, workspace, run)                                  \
    {(name), (backend), 0, (applies), (workspace), (run), NULL}

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
    /* Optional: why an entry that applies may still not serve (NULL when it may); plan holds
       the entry's plan when it is planned. */
    const char *(*rejects)(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                           const struct ocd_impl_plan *plan, int algo);
    /* Optional: storage for the plans the walk computes; after a walk that chose a planned entry
       it holds that entry's plan, and its impl is never left unset (NULL when the walk planned
       nothing). NULL: the walk plans in storage of its own. */
    struct ocd_impl_plan *plan;
};

/* OCD_REASON_UNPROVEN unless OPENCUDNN_UNPROVEN=1, else NULL (see "Unproven entries"). */
const char *ocd_impl_unproven(void);

/* True when OPENCUDNN_DISABLE names the entry. */
bool ocd_impl_disabled(const char *name);

/* Why `impl` cannot serve the problem on this handle (backend, switch, applies or its plan), or
   NULL. A planned entry's plan is computed into plan (NULL: into storage of its own). */
const char *ocd_impl_rejects(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                             struct ocd_impl_plan *plan);

/* Workspace bytes `impl` needs for the problem; plan: NULL, or storage that may hold the entry's
   plan for this problem (computed here when it holds another's). */
size_t ocd_impl_workspace(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                          const struct ocd_impl_plan *plan);

/* Runs `impl`, which serves the problem, with its plan taken from plan as ocd_impl_workspace
   does. */
cudnnStatus_t ocd_impl_exec(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                            const struct ocd_impl_plan *plan, void *workspace, size_t workspace_bytes);

/* The walker: the first entry of the table that serves the query, or NULL with the reasons of
   every entry that was passed over on this backend in why ("" when the backend has none). */
const struct ocd_impl *ocd_impl_walk(cudnnHandle_t handle, struct ocd_impl_table table, const void *problem,
                                     const struct ocd_impl_query *query, char *why, size_t why_size);

/* The first entry that can serve the problem, or NULL after logging NOT_SUPPORTED with every
   reason (op names the operation in the log, e.g. "cudnnAddTensor"); plan (optional) then
   holds the entry's plan when it is planned. */
const struct ocd_impl *ocd_impl_select(cudnnHandle_t handle, const struct ocd_impl *table, size_t count,
                                       const void *problem, const char *op, struct ocd_impl_plan *plan);

/* Selects and runs an entry that needs no workspace: the usual path of a simple op. */
cudnnStatus_t ocd_impl_run(cudnnHandle_t handle, const struct ocd_impl *table, size_t count,
                           const void *problem, const char *op);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_IMPL_H */
