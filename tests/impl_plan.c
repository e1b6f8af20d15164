/* impl_plan.c: plans computed once per problem (core/impl.h, "Plans"), on a table of two planned
   entries made here: the walker plans each entry it asks into the caller's storage, the
   workspace query and the run take the chosen entry's plan from it, and only storage holding
   another entry's plan, or none, makes them plan again. Then a real planned entry, the host's
   CBLAS convolution, wrapped in hooks that count: one plan for its walk, workspace and run; and
   every convolution entry but the direct references is planned, as are the CUDA tile pooling
   entries. The walker, the convolution tables and the problem builder are not API functions:
   the test reaches them as ocd_ symbols of libcudnn_ops_infer.so.8 and libcudnn_cnn_infer.so.8,
   as tests/gemm.c reaches ocd_gemm. */
#include "desc_util.h"
#include "problem/conv.h"
#include "ref/conv.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

typedef const struct ocd_impl *(*select_fn)(cudnnHandle_t, const struct ocd_impl *, size_t, const void *, const char *,
                                             struct ocd_impl_plan *);
typedef size_t (*workspace_fn)(cudnnHandle_t, const struct ocd_impl *, const void *, const struct ocd_impl_plan *);
typedef cudnnStatus_t (*exec_fn)(cudnnHandle_t, const struct ocd_impl *, const void *, const struct ocd_impl_plan *,
                                 void *, size_t);

static void *ops_symbol(const char *name)
{
    return test_lib_symbol(OCD_LIBRARY_FILE("cudnn_ops_infer"), name);
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

/* ---- a real planned entry: the host's CBLAS convolution ------------------------------------------- */

typedef struct ocd_impl_table (*conv_table_fn)(enum ocd_conv_dir);
typedef cudnnStatus_t (*conv_problem_fn)(struct ocd_conv_problem *, enum ocd_conv_dir, cudnnTensorDescriptor_t,
                                         const char *, cudnnFilterDescriptor_t, const char *,
                                         cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, const char *);

/* The entry's own hooks, and counting hooks around them. */
static const struct ocd_impl_planned *cblas_hooks;
static int cblas_plans;

static const char *count_plan(cudnnHandle_t h, const void *problem, void *plan)
{
    cblas_plans++;
    return cblas_hooks->plan(h, problem, plan);
}

static size_t pass_workspace(cudnnHandle_t h, const void *problem, const void *plan)
{
    return cblas_hooks->workspace(h, problem, plan);
}

static cudnnStatus_t pass_run(cudnnHandle_t h, const void *problem, const void *plan, void *ws, size_t ws_bytes)
{
    return cblas_hooks->run(h, problem, plan, ws, ws_bytes);
}

static const struct ocd_impl_planned counting_hooks = {count_plan, pass_workspace, pass_run};

/* The forward convolution of t (float, NCHW, one group) through `entry`: planned once for the
   walk, the workspace query (columns bytes, or 0 where x is read in place) and the run, and the
   reference's result. */
static void check_cblas_plan(cudnnHandle_t h, conv_problem_fn problem_of, const struct ocd_impl *entry,
                             struct ref_conv t, size_t columns)
{
    select_fn select = NULL;
    workspace_fn ws = NULL;
    exec_fn exec = NULL;
    *(void **)&select = ops_symbol("ocd_impl_select");
    *(void **)&ws = ops_symbol("ocd_impl_workspace");
    *(void **)&exec = ops_symbol("ocd_impl_exec");
    if (!CHECK(select != NULL && ws != NULL && exec != NULL && ref_conv_out_dims(&t))) return;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    tconv_descs_create(&xd, &yd, NULL, &wd, &cd);
    CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, t.n, t.c, t.in[0], t.in[1]));
    CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, t.n, t.k, t.out[0], t.out[1]));
    CHECK_OK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, t.k, t.c, t.filt[0], t.filt[1]));
    CHECK_OK(cudnnSetConvolution2dDescriptor(cd, t.pad[0], t.pad[1], t.stride[0], t.stride[1], t.dil[0], t.dil[1],
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    struct ocd_conv_problem p;
    if (CHECK_OK(problem_of(&p, OCD_CONV_FWD, xd, "x", wd, "w", cd, yd, "y"))) {
        long nx = ref_conv_x_count(&t), nw = ref_conv_w_count(&t), ny = ref_conv_y_count(&t);
        double *x = malloc(sizeof *x * (size_t)nx), *w = malloc(sizeof *w * (size_t)nw);
        double *want = malloc(sizeof *want * (size_t)ny);
        float *xf = malloc(sizeof *xf * (size_t)nx), *wf = malloc(sizeof *wf * (size_t)nw);
        float *y = tbuf_alloc(sizeof *y * (size_t)ny);
        for (long i = 0; i < nx; i++) xf[i] = (float)trand_uniform(-1, 1), x[i] = xf[i];
        for (long i = 0; i < nw; i++) wf[i] = (float)trand_uniform(-1, 1), w[i] = wf[i];
        ref_conv_fwd(&t, x, w, want);
        p.x_data = xf, p.w_data = wf, p.y_data = y, p.alpha = 1, p.beta = 0;

        struct ocd_impl_plan storage;
        cblas_plans = 0;
        CHECK(select(h, entry, 1, &p, "impl_plan", &storage) == entry);
        size_t bytes = ws(h, entry, &p, &storage);
        CHECK(bytes == columns);
        void *work = bytes ? malloc(bytes) : NULL;
        CHECK_OK(exec(h, entry, &p, &storage, work, bytes));
        CHECK(cblas_plans == 1);
        const double tol = tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH);
        CHECK(tcompare(CUDNN_DATA_FLOAT, y, want, ny, tol, "host:fwd_gemm_cblas"));
        free(work), free(x), free(w), free(want), free(xf), free(wf), tbuf_free(y);
    }
    tconv_descs_destroy(xd, yd, NULL, wd, cd);
}

/* The host pass of a build with a CBLAS library (OPENCUDNN_CBLAS): the entry is planned (no
   applies, workspace or run of its own), and a 3x3 problem and a 1x1 one that reads x in place
   plan it once each. */
TEST(impl_plan_conv_cblas_once_per_problem)
{
    cudnnHandle_t h = test_handle();
    if (ocd_handle_kind(h) != OCD_BACKEND_HOST) return;
    const char *cnn = OCD_LIBRARY_FILE("cudnn_cnn_infer");
    conv_table_fn table_of = NULL;
    conv_problem_fn problem_of = NULL;
    *(void **)&table_of = test_lib_symbol(cnn, "ocd_conv_impl_table");
    *(void **)&problem_of = test_lib_symbol(cnn, "ocd_conv_problem_init");
    if (!CHECK(table_of != NULL && problem_of != NULL)) return;
    const struct ocd_impl_table fwd = table_of(OCD_CONV_FWD);
    const struct ocd_impl *found = NULL;
    for (size_t i = 0; i < fwd.count; i++)
        if (strcmp(ocd_impl_at(fwd, i)->name, "host:fwd_gemm_cblas") == 0) found = ocd_impl_at(fwd, i);
    if (found == NULL) return; /* built without a CBLAS library */
    if (!CHECK(found->planned != NULL && found->applies == NULL && found->workspace == NULL && found->run == NULL))
        return;
    const char *forced = getenv("OPENCUDNN_HOST_GEMM"); /* builtin would switch the entry off */
    char saved[64] = "";
    if (forced) snprintf(saved, sizeof saved, "%s", forced);
    ocd_unsetenv("OPENCUDNN_HOST_GEMM");
    cblas_hooks = found->planned;
    /* static: the coverage record (OPENCUDNN_IMPL_COVERAGE) reads the tables walked at exit */
    static struct ocd_impl entry;
    entry = *found;
    entry.planned = &counting_hooks;
    /* 2 x 3 x 9 x 8 by 4 3x3 filters, pad 1, stride 2: columns of 2 images, 27 rows, 5 x 4 pixels */
    const struct ref_conv t3 = {2, 2, 3, 4, 1, {9, 8}, {3, 3}, {0}, {1, 1}, {2, 2}, {1, 1}, false};
    check_cblas_plan(h, problem_of, &entry, t3, sizeof(float) * 2 * 27 * 5 * 4);
    const struct ref_conv t1 = {2, 2, 5, 3, 1, {4, 6}, {1, 1}, {0}, {0, 0}, {1, 1}, {1, 1}, false};
    check_cblas_plan(h, problem_of, &entry, t1, 0);
    if (forced) ocd_setenv("OPENCUDNN_HOST_GEMM", saved);
}

/* Every convolution entry of either backend (the CUDA ones in a CUDA build, GPU or not) is
   planned but the direct references, which have nothing to plan. */
TEST_ONCE(impl_plan_conv_entries_are_planned)
{
    conv_table_fn table_of = NULL;
    *(void **)&table_of = test_lib_symbol(OCD_LIBRARY_FILE("cudnn_cnn_infer"), "ocd_conv_impl_table");
    if (!CHECK(table_of != NULL)) return;
    for (int dir = 0; dir < OCD_CONV_DIRS; dir++) {
        const struct ocd_impl_table t = table_of((enum ocd_conv_dir)dir);
        for (size_t i = 0; i < t.count; i++) {
            const struct ocd_impl *e = ocd_impl_at(t, i);
            const size_t len = strlen(e->name);
            const bool direct = len > 7 && strcmp(e->name + len - 7, "_direct") == 0;
            if (direct) continue;
            if (!CHECK(e->planned != NULL && e->applies == NULL && e->workspace == NULL && e->run == NULL))
                printf("      (%s is not planned)\n", e->name);
        }
    }
}

/* The tile pooling entries of a CUDA build (cuda/pooling_tile.cu) are planned, without workspace:
   their hooks are the planned entries' of the ops_infer library's pooling table. */
TEST_ONCE(impl_plan_pooling_tile_entries_are_planned)
{
#ifdef OCD_TEST_CUDA
    static const char *const names[] = {"ocd_cuda_pooling_tile_nhwc_planned", "ocd_cuda_pooling_tile_nchw_planned"};
    for (int i = 0; i < 2; i++) {
        const struct ocd_impl_planned *hooks = ops_symbol(names[i]);
        if (!CHECK(hooks != NULL && hooks->plan != NULL && hooks->workspace == NULL && hooks->run != NULL))
            printf("      (%s)\n", names[i]);
    }
#endif
}
