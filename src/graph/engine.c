/* engine.c: the engines of the backend API (the graph.h hooks the descriptor layer calls): the
   global index of each engine, what an engine says of itself for a graph (knobs, numerical and
   behaviour notes), whether it runs the graph, and the heuristics.

   Main decision: the engines are the convolution registry, not a second list of kernels. Index
   0 runs what the registry's heuristic order picks without workspace, indices 1.. are the cuDNN
   algorithms through the legacy pick, and the rest pin one registry implementation each, by name,
   in the append-only list below (docs/engines.md). A registry entry added later is appended
   here; the test backend_engine_list_complete fails until it is. The heuristics (INSTANT and B
   alike: one model) list the implementations that run the graph in registry order, which is the
   convolution heuristic's order, so a graph gets the same first choice from the backend API as
   from cudnnGetConvolution*Algorithm_v7. No engine has knobs: the tile and stage choices of our
   kernels are separate implementations, each an engine of its own. */
#include "graph/engine.h"

#include <stdio.h>
#include <string.h>

/* The pinned implementations, per direction, in index order. Append only; never reorder or
   reuse a name (an index a program pinned must keep its meaning). A retired implementation keeps
   its index, which then serves no graph: cuda:fwd_winograd_nonfused_tc and
   cuda:dgrad_winograd_nonfused_tc (their 6x6 tiles lose too much in 10-bit operands). */
static const char *const fwd_entries[] = {
    "host:fwd_gemm_cblas", "host:fwd_implicit_precomp_gemm", "host:fwd_implicit_gemm", "host:fwd_gemm",
    "host:fwd_winograd", "host:fwd_winograd_nonfused", "host:fwd_fft", "host:fwd_fft_tiling", "host:fwd_direct",
    "cuda:fwd_gemm1x1_cublas_tc", "cuda:fwd_gemm1x1_cublas", "cuda:fwd_igemm_tc_128x128x32_s3",
    "cuda:fwd_igemm_tc_128x64x32_s4", "cuda:fwd_igemm_tc_64x64x32_s4", "cuda:fwd_igemm_tf32_128x128x16_s3",
    "cuda:fwd_igemm_tf32_128x64x16_s4", "cuda:fwd_igemm_tf32_64x64x16_s4", "cuda:fwd_im2col_gemm_cublas_tc",
    "cuda:fwd_im2col_gemm_cublas", "cuda:fwd_winograd_tc", "cuda:fwd_winograd", "cuda:fwd_winograd_nonfused_tc",
    "cuda:fwd_winograd_nonfused", "cuda:fwd_fft", "cuda:fwd_fft_tiling", "cuda:fwd_direct",
    "cuda:fwd_igemm_wgmma_128x256x64_s4", "cuda:fwd_igemm_wgmma_128x128x64_s5",
    "cuda:fwd_igemm_wgmma_256x128x64_s4", "cuda:fwd_igemm_wgmma_128x64x64_s6", "cuda:fwd_stem_tc_128x64",
    "cuda:fwd_igemm_tma_128x256x64_s4", "cuda:fwd_igemm_tma_256x128x64_s4",
    "cuda:fwd_igemm_tma_c2_128x256x64_s4", "cuda:fwd_igemm_tma_c2_256x128x64_s4",
    "cuda:fwd_igemm_tma_tf32_128x256x32_s4", "cuda:fwd_igemm_tma_tf32_256x128x32_s4",
    "cuda:fwd_igemm_tma_c2_tf32_128x256x32_s4", "cuda:fwd_igemm_tma_c2_tf32_256x128x32_s4",
    "cuda:fwd_igemm_tma_128x128x64_s7", "cuda:fwd_igemm_tma_256x64x64_s5", "cuda:fwd_igemm_tma_128x64x64_s9",
    "cuda:fwd_igemm_tma_tf32_128x128x32_s7", "cuda:fwd_igemm_tma_tf32_256x64x32_s5",
    "cuda:fwd_igemm_tma_tf32_128x64x32_s9", "cuda:fwd_igemm_int8_128x128x64_s3",
    "cuda:fwd_igemm_int8_128x64x64_s4", "cuda:fwd_igemm_int8_64x64x64_s4", "cuda:fwd_igemm_gather_64x128x16_s3",
};
static const char *const dgrad_entries[] = {
    "host:dgrad_implicit_precomp_gemm", "host:dgrad_implicit_gemm", "host:dgrad_winograd",
    "host:dgrad_winograd_nonfused", "host:dgrad_fft", "host:dgrad_fft_tiling", "host:dgrad_direct",
    "cuda:dgrad_gemm1x1_cublas_tc", "cuda:dgrad_gemm1x1_cublas", "cuda:dgrad_igemm_tc_phases",
    "cuda:dgrad_igemm_tf32_phases", "cuda:dgrad_igemm_tc_128x128x32_s3", "cuda:dgrad_igemm_tc_128x64x32_s4",
    "cuda:dgrad_igemm_tc_64x64x32_s4", "cuda:dgrad_igemm_tf32_128x128x16_s3", "cuda:dgrad_igemm_tf32_128x64x16_s4",
    "cuda:dgrad_igemm_tf32_64x64x16_s4", "cuda:dgrad_im2col_gemm_cublas_tc", "cuda:dgrad_im2col_gemm_cublas",
    "cuda:dgrad_winograd_tc", "cuda:dgrad_winograd", "cuda:dgrad_winograd_nonfused_tc",
    "cuda:dgrad_winograd_nonfused", "cuda:dgrad_fft", "cuda:dgrad_fft_tiling", "cuda:dgrad_direct",
    "cuda:dgrad_igemm_wgmma_128x256x64_s4", "cuda:dgrad_igemm_wgmma_128x128x64_s5",
    "cuda:dgrad_igemm_wgmma_256x128x64_s4", "cuda:dgrad_igemm_wgmma_128x64x64_s6", "cuda:dgrad_stem_tc_128x8",
    "cuda:dgrad_igemm_tma_128x256x64_s4", "cuda:dgrad_igemm_tma_256x128x64_s4",
    "cuda:dgrad_igemm_tma_c2_128x256x64_s4", "cuda:dgrad_igemm_tma_c2_256x128x64_s4",
    "cuda:dgrad_igemm_tma_phases",
    "cuda:dgrad_igemm_tma_tf32_128x256x32_s4", "cuda:dgrad_igemm_tma_tf32_256x128x32_s4",
    "cuda:dgrad_igemm_tma_tf32_phases",
    "cuda:dgrad_igemm_tma_c2_tf32_128x256x32_s4", "cuda:dgrad_igemm_tma_c2_tf32_256x128x32_s4",
    "cuda:dgrad_igemm_tma_128x128x64_s7", "cuda:dgrad_igemm_tma_256x64x64_s5", "cuda:dgrad_igemm_tma_128x64x64_s9",
    "cuda:dgrad_igemm_tma_tf32_128x128x32_s7", "cuda:dgrad_igemm_tma_tf32_256x64x32_s5",
    "cuda:dgrad_igemm_tma_tf32_128x64x32_s9", "cuda:dgrad_gemm1x1_strided_cublas_tc",
    "cuda:dgrad_igemm_gather_64x128x16_s3",
};
static const char *const wgrad_entries[] = {
    "host:wgrad_gemm", "host:wgrad_implicit_precomp_gemm", "host:wgrad_implicit_gemm",
    "host:wgrad_winograd_nonfused", "host:wgrad_fft", "host:wgrad_fft_tiling", "host:wgrad_direct",
    "cuda:wgrad_gemm1x1_cublas_tc", "cuda:wgrad_gemm1x1_cublas", "cuda:wgrad_igemm_tc_128x128x32_s3",
    "cuda:wgrad_igemm_tc_128x64x32_s4", "cuda:wgrad_igemm_tc_64x64x32_s4", "cuda:wgrad_im2col_gemm_cublas_tc",
    "cuda:wgrad_im2col_gemm_cublas", "cuda:wgrad_winograd_nonfused_tc", "cuda:wgrad_winograd_nonfused",
    "cuda:wgrad_fft", "cuda:wgrad_fft_tiling", "cuda:wgrad_direct",
    "cuda:wgrad_igemm_wgmma_128x256x64_s4", "cuda:wgrad_igemm_wgmma_128x128x64_s5",
    "cuda:wgrad_igemm_wgmma_256x128x64_s4", "cuda:wgrad_igemm_wgmma_128x64x64_s6",
    "cuda:wgrad_nchw_tf32_64x128x16_s3", "cuda:wgrad_stem_tc_64x256",
    "cuda:wgrad_igemm_tma_128x256x64_s4", "cuda:wgrad_igemm_tma_256x128x64_s4",
    "cuda:wgrad_igemm_tma_c2_128x256x64_s4", "cuda:wgrad_igemm_tma_c2_256x128x64_s4",
    "cuda:wgrad_igemm_tma_64x256x64_s5", "cuda:wgrad_igemm_tma_64x64x64_s8",
    "cuda:wgrad_nchw_gemm_cublas_tc", "cuda:wgrad_nchw_gemm_cublas",
    "cuda:wgrad_igemm_tma_tf32_128x256x32_s4", "cuda:wgrad_igemm_tma_tf32_256x128x32_s4",
    "cuda:wgrad_igemm_tma_tf32_64x256x32_s5", "cuda:wgrad_igemm_tma_tf32_64x64x32_s8",
    "host:wgrad_s2d", "cuda:wgrad_s2d", "cuda:wgrad_igemm_gather_64x128x16_s3",
};

static const struct {
    const char *const *names;
    int count;
} entry_lists[OCD_CONV_DIRS] = {
    {fwd_entries, (int)OCD_ARRAY_LEN(fwd_entries)},
    {dgrad_entries, (int)OCD_ARRAY_LEN(dgrad_entries)},
    {wgrad_entries, (int)OCD_ARRAY_LEN(wgrad_entries)},
};

/* ---- indices ---------------------------------------------------------------------------------- */

static bool is_conv(cudnnBackendDescriptorType_t kind)
{
    return kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR ||
           kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR ||
           kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
}

static int conv_dir(cudnnBackendDescriptorType_t kind)
{
    return kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR         ? OCD_CONV_FWD
           : kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR ? OCD_CONV_BWD_DATA
                                                                                   : OCD_CONV_BWD_FILTER;
}

int ocd_engine_graph_dir(const struct ocd_graph *g)
{
    int dir = -1;
    for (int i = 0; i < g->n_ops; i++) {
        if (!is_conv(g->ops[i].kind)) continue;
        int d = conv_dir(g->ops[i].kind);
        if (dir >= 0 && d != dir) return -2;
        dir = d;
    }
    return dir;
}

static int64_t count_of(int dir)
{
    return dir < 0 ? 1 : 1 + ocd_conv_algo_count((enum ocd_conv_dir)dir) + entry_lists[dir].count;
}

bool ocd_engine_decode(int dir, int64_t index, struct ocd_engine_id *id)
{
    memset(id, 0, sizeof *id);
    id->dir = dir;
    if (index < 0 || index >= count_of(dir)) return false;
    if (index == 0) {
        id->kind = OCD_ENGINE_AUTO;
        return true;
    }
    const int algos = ocd_conv_algo_count((enum ocd_conv_dir)dir);
    if (index <= algos) {
        id->kind = OCD_ENGINE_ALGO;
        id->algo = (int)index - 1;
    } else {
        id->kind = OCD_ENGINE_ENTRY;
        id->name = entry_lists[dir].names[index - 1 - algos];
    }
    return true;
}

/* ---- which implementation runs ---------------------------------------------------------------- */

#define BIT(a) (1u << (a))

const char *ocd_engine_conv_rejects(cudnnHandle_t handle, const struct ocd_conv_impl *e,
                                    const struct ocd_conv_problem *p, struct ocd_impl_plan *plan)
{
    bool documented = false;
    for (int a = 0; a < ocd_conv_algo_count(p->dir) && !documented; a++)
        documented = (e->base.algos & BIT(a)) && ocd_conv_algo_rejects(p, a) == NULL;
    if (!documented) return "the documented restrictions of its algorithms rule the problem out";
    const char *r = ocd_impl_rejects(handle, &e->base, p, plan);
    return r != NULL ? r : ocd_conv_entry_row_rejects(e, p);
}

const struct ocd_conv_impl *ocd_engine_conv_pick(cudnnHandle_t handle, const struct ocd_engine_id *id,
                                                 const struct ocd_conv_problem *p, char *why, size_t why_size)
{
    const struct ocd_conv_table *t = ocd_conv_table(p->dir);
    struct ocd_impl_plan plan;
    switch (id->kind) {
    case OCD_ENGINE_ALGO: return ocd_conv_pick(handle, p, id->algo, why, why_size, NULL);
    case OCD_ENGINE_AUTO:
        for (size_t i = 0; i < t->count; i++) {
            const struct ocd_conv_impl *e = &t->impls[i];
            if (ocd_engine_conv_rejects(handle, e, p, &plan) != NULL) continue;
            if (e->race != NULL && e->race(handle, p, plan.u.bytes) == OCD_CONV_RACE_LOSES) continue;
            if (ocd_conv_impl_workspace(handle, e, p, &plan) == 0) return e;
        }
        snprintf(why, why_size, "no implementation runs the convolution without workspace");
        return NULL;
    default:
        for (size_t i = 0; i < t->count; i++) {
            if (strcmp(t->impls[i].base.name, id->name) != 0) continue;
            const char *r = ocd_engine_conv_rejects(handle, &t->impls[i], p, &plan);
            if (r == NULL) return &t->impls[i];
            snprintf(why, why_size, "%s: %s", id->name, r);
            return NULL;
        }
        snprintf(why, why_size, "%s is not built into this library, or retired", id->name);
        return NULL;
    }
}

cudnnStatus_t ocd_engine_conv_rebind(cudnnHandle_t handle, const struct ocd_conv_impl **impl,
                                     const struct ocd_conv_problem *p, size_t scratch, struct ocd_impl_plan *plan,
                                     const char *why)
{
    const struct ocd_conv_impl *chosen = *impl;
    const struct ocd_conv_table *t = ocd_conv_table(p->dir);
    for (size_t i = 0; i < t->count; i++) {
        const struct ocd_conv_impl *e = &t->impls[i];
        if (e == chosen || (e->tensor_ops && !chosen->tensor_ops)) continue;
        if (e->determinism == CUDNN_NON_DETERMINISTIC && chosen->determinism != CUDNN_NON_DETERMINISTIC) continue;
        if (ocd_engine_conv_rejects(handle, e, p, plan) != NULL || ocd_conv_impl_workspace(handle, e, p, plan) > scratch)
            continue;
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s declines the variant pack's pointers (%s); %s runs the call",
                        chosen->base.name, why, e->base.name);
        *impl = e;
        return CUDNN_STATUS_SUCCESS;
    }
    return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s declines the variant pack's pointers (%s) and no other implementation "
                    "takes them", chosen->base.name, why);
}

cudnnStatus_t ocd_engine_conv_problem(const struct ocd_graph_op *op, struct ocd_conv_problem *p)
{
    struct ocd_graph_op copy = *op;
    const int dst = op->kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR         ? OCD_GT_CONV_Y
                    : op->kind == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR ? OCD_GT_CONV_X
                                                                                               : OCD_GT_CONV_W;
    const int src = dst == OCD_GT_CONV_X ? OCD_GT_CONV_Y : OCD_GT_CONV_X;
    /* a virtual output is stored in its producer's data type, but int8 data keeps a FLOAT output
       as declared (the INT8_EXT configurations): stored in int8 it would saturate before the next
       op reads it (PyTorch's quantized convolution requantizes a virtual float output) */
    const bool int8_ext = (copy.t[src].dtype == CUDNN_DATA_INT8 || copy.t[src].dtype == CUDNN_DATA_UINT8) &&
                          copy.t[dst].dtype == CUDNN_DATA_FLOAT;
    if (copy.t[dst].is_virtual && !int8_ext) copy.t[dst].dtype = copy.t[src].dtype;
    OCD_TRY(ocd_graph_conv_problem(&copy, p));
    p->math = CUDNN_DEFAULT_MATH; /* the backend API has no math type: the engines' notes say it */
    if (copy.t[dst].is_virtual) p->beta = 0;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- matmul operands ------------------------------------------------------------------------- */

bool ocd_engine_blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans, int64_t *ld)
{
    if (rs == 1 || rows == 1) { /* column-major */
        *trans = false;
        *ld = cols == 1 ? rows : OCD_MAX(cs, rows);
        return cols == 1 || cs >= rows;
    }
    if (cs == 1 || cols == 1) { /* row-major: the transposed column-major matrix */
        *trans = true;
        *ld = rows == 1 ? cols : OCD_MAX(rs, cols);
        return rows == 1 || rs >= cols;
    }
    return false;
}

bool ocd_engine_row_major_c(const struct ocd_tensor_view *c)
{
    return c->strides[2] == 1 && !(c->strides[1] == 1 && c->dims[1] > 1);
}

/* ---- the hooks -------------------------------------------------------------------------------- */

int64_t ocd_graph_engine_count(const struct ocd_graph *g)
{
    const int dir = ocd_engine_graph_dir(g);
    if (dir == -2) {
        OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "the graph mixes convolutions of different directions");
        return 0;
    }
    struct ocd_engine_id id;
    ocd_engine_decode(dir, 0, &id);
    struct ocd_graph_plan *plan;
    int64_t ws;
    cudnnStatus_t s = ocd_engine_plan(g->handle, (struct ocd_graph *)g, &id, &plan, &ws);
    if (s != CUDNN_STATUS_SUCCESS) return s == CUDNN_STATUS_ALLOC_FAILED ? -1 : 0;
    ocd_graph_plan_free(plan);
    return count_of(dir);
}

/* The notes of implementation e on problem p (graph.h: at most one of each). */
static void add_notes(const struct ocd_conv_impl *e, const struct ocd_conv_problem *p, struct ocd_graph_engine_info *info)
{
    bool has[CUDNN_NUMERICAL_NOTE_TYPE_COUNT] = {false};
    for (int i = 0; i < info->n_numerical; i++) has[info->numerical[i]] = true;
    if (e->tensor_ops) {
        has[CUDNN_NUMERICAL_NOTE_TENSOR_CORE] = true;
        if (p->x.dtype == CUDNN_DATA_FLOAT) has[CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS] = true; /* TF32 */
    }
    static const int fft[OCD_CONV_DIRS][2] = {
        {CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING},
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING},
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING}};
    static const int wino[OCD_CONV_DIRS][2] = {
        {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED},
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED},
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED}};
    if (e->base.algos & (BIT(fft[p->dir][0]) | BIT(fft[p->dir][1]))) has[CUDNN_NUMERICAL_NOTE_FFT] = true;
    if (e->base.algos & (BIT(wino[p->dir][0]) | BIT(wino[p->dir][1]))) has[CUDNN_NUMERICAL_NOTE_WINOGRAD] = true;
    if (e->determinism == CUDNN_NON_DETERMINISTIC) has[CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC] = true;
    info->n_numerical = 0;
    for (int n = 0; n < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; n++)
        if (has[n]) info->numerical[info->n_numerical++] = (cudnnBackendNumericalNote_t)n;
}

cudnnStatus_t ocd_graph_engine_describe(const struct ocd_graph *g, int64_t index, struct ocd_graph_engine_info *info)
{
    const int dir = ocd_engine_graph_dir(g);
    struct ocd_engine_id id;
    if (dir == -2 || !ocd_engine_decode(dir, index, &id))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "engine index %lld is not in [0, %lld)", (long long)index,
                        (long long)(dir == -2 ? 0 : count_of(dir)));
    *info = (struct ocd_graph_engine_info){0};
    for (int i = 0; i < g->n_ops; i++) {
        if (!is_conv(g->ops[i].kind)) continue;
        struct ocd_conv_problem p;
        OCD_TRY(ocd_engine_conv_problem(&g->ops[i], &p));
        char why[1024];
        const struct ocd_conv_impl *e = ocd_engine_conv_pick(g->handle, &id, &p, why, sizeof why);
        if (e == NULL)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "engine %lld does not run the graph's %s: %s", (long long)index,
                            ocd_graph_op_name(g->ops[i].kind), why);
        add_notes(e, &p, info);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_graph_config_check(const struct ocd_graph *g, const struct ocd_graph_config *cfg)
{
    struct ocd_graph_engine_info info;
    OCD_TRY(ocd_graph_engine_describe(g, cfg->engine, &info));
    if (cfg->n_knobs > 0)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "engine %lld offers no knob (knob type %d chosen)",
                        (long long)cfg->engine, (int)cfg->knobs[0].type);
    return CUDNN_STATUS_SUCCESS;
}

/* The stages of engine `index`'s plan for the graph (its workspace in *ws), 0 when it builds none,
   or -1 when memory ran out while planning (logged): the heuristic then fails rather than leave
   the engine out. */
static int plan_stages(const struct ocd_graph *g, int dir, int64_t index, int64_t *ws)
{
    struct ocd_engine_id id;
    struct ocd_graph_plan *plan;
    ocd_engine_decode(dir, index, &id);
    cudnnStatus_t s = ocd_engine_plan(g->handle, (struct ocd_graph *)g, &id, &plan, ws);
    if (s != CUDNN_STATUS_SUCCESS) return s == CUDNN_STATUS_ALLOC_FAILED ? -1 : 0;
    int n = ocd_engine_plan_stages(plan);
    ocd_graph_plan_free(plan);
    return n;
}

/* Below this many multiply-adds the graph's convolutions run in microseconds, where a pass that
   fills a workspace (im2col, precomputed indices, transforms) costs more than it saves. */
#define SMALL_CONV_MACS ((int64_t)1 << 23)

static bool small_convolutions(const struct ocd_graph *g)
{
    int64_t macs = 0;
    for (int i = 0; i < g->n_ops; i++) {
        struct ocd_conv_problem p;
        if (!is_conv(g->ops[i].kind) || ocd_engine_conv_problem(&g->ops[i], &p) != CUDNN_STATUS_SUCCESS) continue;
        struct ocd_conv_gemm gm;
        ocd_conv_gemm_dims(&p, &gm);
        macs += gm.groups * gm.m * gm.n * gm.k;
    }
    return macs < SMALL_CONV_MACS;
}

/* The pinned implementations that run the graph, ordered by predicted speed: fewer passes over
   memory first (an implementation that takes a fused epilogue saves one over the output; on
   small convolutions a workspace counts as a pass), then registry order, which is the
   convolution heuristic's. So a small graph's first configuration runs without workspace, as
   cudnn-frontend's backward-data fallback sample expects (it executes it with a NULL one). */
cudnnStatus_t ocd_graph_heuristics(const struct ocd_graph *g, cudnnBackendHeurMode_t mode, struct ocd_graph_config *out,
                                   int64_t cap, int64_t *count)
{
    (void)mode; /* INSTANT and B share one model */
    const int dir = ocd_engine_graph_dir(g);
    int64_t found[64], n = 0;
    int stages[64];
    if (dir >= 0) {
        const struct ocd_conv_table *t = ocd_conv_table((enum ocd_conv_dir)dir);
        const int base = 1 + ocd_conv_algo_count((enum ocd_conv_dir)dir);
        const bool small = small_convolutions(g);
        for (size_t i = 0; i < t->count; i++)
            for (int j = 0; j < entry_lists[dir].count && n < 64; j++) {
                if (strcmp(entry_lists[dir].names[j], t->impls[i].base.name) != 0) continue;
                int64_t ws = 0;
                int k = plan_stages(g, dir, base + j, &ws);
                if (k < 0) return CUDNN_STATUS_ALLOC_FAILED;
                if (k == 0) continue;
                if (small && ws > 0) k++;
                int at = (int)n++; /* insertion keeps registry order among equal stage counts */
                while (at > 0 && stages[at - 1] > k) {
                    found[at] = found[at - 1], stages[at] = stages[at - 1];
                    at--;
                }
                found[at] = base + j, stages[at] = k;
            }
    }
    if (n == 0 && dir != -2) {
        int64_t ws;
        int k = plan_stages(g, dir, 0, &ws);
        if (k < 0) return CUDNN_STATUS_ALLOC_FAILED;
        if (k > 0) found[n++] = 0;
    }
    for (int64_t i = 0; i < n && i < cap; i++) out[i] = (struct ocd_graph_config){.engine = found[i]};
    *count = n;
    return CUDNN_STATUS_SUCCESS;
}

int ocd_engine_entry_count(int dir)
{
    return entry_lists[dir].count;
}

const char *ocd_engine_entry_name(int dir, int j)
{
    return entry_lists[dir].names[j];
}
