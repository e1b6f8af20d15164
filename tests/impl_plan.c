/* impl_plan.c: plans computed once per problem (core/impl.h, "Plans"), on a table of two planned
   entries made here: the walker plans each entry it asks into the caller's storage, the
   workspace query and the run take the chosen entry's plan from it, and only storage holding
   another entry's plan, or none, makes them plan again. The walker is not an API function: the
   test reaches it as ocd_ symbols of libcudnn_ops_infer.so.8, as tests/gemm.c reaches ocd_gemm. */
#include "core/impl.h"
#include "test.h"

#include <string.h>

typedef const struct ocd_impl *(*select_fn)(cudnnHandle_t, const struct ocd_impl *, size_t, const void *, const char *,
                                             struct ocd_impl_plan *);
typedef size_t (*workspace_fn)(cudnnHandle_t, const struct ocd_impl *, const void *, const struct ocd_impl_plan *);
typedef cudnnStatus_t (*exec_fn)(cudnnHandle_t, const struct ocd_impl *, const void *, const struct ocd_impl_plan *,
                                 void *, size_t);

static void *ops_symbol(const char *name)
{
    void *lib = ocd_dl_open(OCD_LIB_DIR "/" OCD_LIBRARY_FILE("cudnn_ops_infer"), NULL, 0);
    return lib ? ocd_dl_symbol(lib, name) : NULL;
}

/* The problem: a number. Entry "even" serves even numbers, "any" every number; each plan is the
   number times the entry's factor, which its workspace reports and its run writes back. */
struct problem {
    long value;
    long ran; /* what the run wrote: the plan it was given */
};
struct plan {
    long product;
};
static int plans_made[2];

static const char *plan_even(cudnnHandle_t h, const void *problem, void *plan)
{
    plans_made[0]++;
    const struct problem *p = problem;
    ((struct plan *)plan)->product = p->value * 2;
    return p->value % 2 == 0 ? NULL : "odd";
}

static const char *plan_any(cudnnHandle_t h, const void *problem, void *plan)
{
    plans_made[1]++;
    ((struct plan *)plan)->product = ((const struct problem *)problem)->value * 3;
    return NULL;
}

static size_t workspace(cudnnHandle_t h, const void *problem, const void *plan)
{
    return (size_t)((const struct plan *)plan)->product;
}

static cudnnStatus_t run(cudnnHandle_t h, const void *problem, const void *plan, void *ws, size_t ws_bytes)
{
    ((struct problem *)(uintptr_t)problem)->ran = ((const struct plan *)plan)->product;
    return CUDNN_STATUS_SUCCESS;
}

static const struct ocd_impl_planned even_hooks = {plan_even, workspace, run};
static const struct ocd_impl_planned any_hooks = {plan_any, workspace, run};

TEST(impl_plan_once_per_problem)
{
    select_fn select = NULL;
    workspace_fn ws = NULL;
    exec_fn exec = NULL;
    *(void **)&select = ops_symbol("ocd_impl_select");
    *(void **)&ws = ops_symbol("ocd_impl_workspace");
    *(void **)&exec = ops_symbol("ocd_impl_exec");
    if (!CHECK(select != NULL && ws != NULL && exec != NULL)) return;
    cudnnHandle_t h = test_handle();
    /* the entries run on the backend of this pass */
    static struct ocd_impl table[2];
    const struct ocd_impl even = {"host:test_plan_even", ocd_handle_kind(h), 0, NULL, NULL, NULL, &even_hooks};
    const struct ocd_impl any = {"host:test_plan_any", ocd_handle_kind(h), 0, NULL, NULL, NULL, &any_hooks};
    table[0] = even, table[1] = any;

    /* 4: "even" is asked first and chosen, planned once for the walk, workspace and run */
    struct ocd_impl_plan storage;
    struct problem p = {4, 0};
    memset(plans_made, 0, sizeof plans_made);
    const struct ocd_impl *chosen = select(h, table, 2, &p, "impl_plan", &storage);
    CHECK(chosen == &table[0]);
    CHECK(ws(h, chosen, &p, &storage) == 8);
    CHECK_OK(exec(h, chosen, &p, &storage, NULL, 0));
    CHECK(p.ran == 8);
    CHECK(plans_made[0] == 1 && plans_made[1] == 0);

    /* 5: "even" declines, "any" is chosen; its plan is what the storage holds after the walk */
    p.value = 5;
    memset(plans_made, 0, sizeof plans_made);
    chosen = select(h, table, 2, &p, "impl_plan", &storage);
    CHECK(chosen == &table[1]);
    CHECK(storage.impl == chosen && storage.why == NULL);
    CHECK(ws(h, chosen, &p, &storage) == 15);
    CHECK_OK(exec(h, chosen, &p, &storage, NULL, 0));
    CHECK(p.ran == 15);
    CHECK(plans_made[0] == 1 && plans_made[1] == 1);

    /* no storage, or another entry's: planned where needed */
    CHECK(ws(h, chosen, &p, NULL) == 15);
    storage.impl = &table[0];
    CHECK_OK(exec(h, chosen, &p, &storage, NULL, 0));
    CHECK(plans_made[1] == 3);
}
