/* backend_engine.c: the descriptor kinds that choose and build an engine for a finalized graph:
   ENGINE, ENGINECFG, ENGINEHEUR and EXECUTION_PLAN. Each holds a reference to the graph; what
   an engine can do is asked of the engines through the graph.h hooks (describe at ENGINE
   finalize, config check at ENGINECFG finalize, the ranked list at ENGINEHEUR finalize, the plan
   at EXECUTION_PLAN finalize), so Gets only read what finalize stored. A descriptor-valued Get
   (a heuristic result, a configuration's engine, a plan's configuration) fills the caller's
   descriptor with a value that takes its own reference to the graph. */
#include "graph/backend_desc.h"

#include <stdlib.h>
#include <string.h>

/* The values of ENGINE and ENGINECFG: what a filled descriptor of either kind holds. */
struct engine_value {
    struct ocd_graph *g;
    int64_t index;
    struct ocd_graph_engine_info info;
};

struct cfg_value {
    struct ocd_graph *g;
    struct ocd_graph_config cfg;
    struct ocd_graph_engine_info info;
};

/* Both values start with their graph reference. */
static void graph_value_release(void *value)
{
    ocd_graph_unref(*(struct ocd_graph **)value);
}

static void graph_value_retain(void *value)
{
    ocd_graph_ref(*(struct ocd_graph **)value);
}

/* A Get of a descriptor-valued attribute whose value is the graph reference at the attribute's
   offset (ENGINE_OPERATION_GRAPH, ENGINEHEUR_OPERATION_GRAPH): fills an OPERATIONGRAPH. The
   offset is that of the pending descriptor; the graph reference is the state's first member. */
static cudnnStatus_t get_graph(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req, int64_t *total,
                               void *out)
{
    (void)a;
    return ocd_bk_fill_array(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, ocd_bk_state(d), 0, 1, req, total, out);
}

static cudnnStatus_t get_none(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req, int64_t *total,
                              void *out)
{
    (void)d;
    (void)a;
    (void)req;
    (void)out;
    *total = 0;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- ENGINE ---------------------------------------------------------------------------------- */

struct engine_state {
    struct engine_value v;
    cudnnBackendDescriptor_t graph;
};

static cudnnStatus_t engine_finalize(struct ocd_bk_desc *d)
{
    struct engine_state *st = ocd_bk_state(d);
    const void *value;
    OCD_TRY(ocd_bk_child(st->graph, OCD_BK_KIND(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR), "ENGINE_OPERATION_GRAPH",
                         &value));
    struct ocd_graph *g = *(struct ocd_graph *const *)value;
    OCD_TRY(ocd_graph_engine_describe(g, st->v.index, &st->v.info));
    st->v.g = ocd_graph_ref(g);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t get_knob_info(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                                   int64_t *total, void *out)
{
    (void)a;
    const struct engine_value *v = ocd_bk_state(d);
    return ocd_bk_fill_array(CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR, v->info.knobs, sizeof v->info.knobs[0],
                             v->info.n_knobs, req, total, out);
}

static const struct ocd_bk_attr engine_attrs[] = {
    OCD_BK_DESC(ENGINE_OPERATION_GRAPH, OCD_BA_REQUIRED, OCD_BK_KIND(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR),
                struct engine_state, graph, get_graph, 0),
    OCD_BK_SCALAR(ENGINE_GLOBAL_INDEX, INT64, OCD_BA_REQUIRED, struct engine_state, v.index),
    OCD_BK_ENTRY(ENGINE_KNOB_INFO, BACKEND_DESCRIPTOR, OCD_BA_RO, 0, 0, 0, -1,
                 OCD_BK_KIND(CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR), get_knob_info, 0),
    OCD_BK_ARRAY(ENGINE_NUMERICAL_NOTE, NUMERICAL_NOTE, OCD_BA_RO, 0, 0, struct engine_state, v.info.numerical,
                 v.info.n_numerical),
    OCD_BK_ENTRY(ENGINE_LAYOUT_INFO, BACKEND_DESCRIPTOR, OCD_BA_RO, 0, 0, 0, -1,
                 OCD_BK_KIND(CUDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR), get_none, 0),
    OCD_BK_ARRAY(ENGINE_BEHAVIOR_NOTE, BEHAVIOR_NOTE, OCD_BA_RO, 0, 0, struct engine_state, v.info.behavior,
                 v.info.n_behavior),
};

const struct ocd_bk_type ocd_bk_engine_type =
    OCD_BK_TYPE(ENGINE_DESCRIPTOR, "ENGINE", struct engine_state, struct engine_value, engine_attrs, NULL,
                engine_finalize, graph_value_release, graph_value_retain);

/* ---- ENGINECFG ------------------------------------------------------------------------------- */

struct cfg_state {
    struct cfg_value v;
    cudnnBackendDescriptor_t engine;
    cudnnBackendDescriptor_t knobs[OCD_GRAPH_MAX_KNOBS];
    int64_t n_knobs;
};

static cudnnStatus_t cfg_finalize(struct ocd_bk_desc *d)
{
    struct cfg_state *st = ocd_bk_state(d);
    const void *value;
    OCD_TRY(ocd_bk_child(st->engine, OCD_BK_KIND(CUDNN_BACKEND_ENGINE_DESCRIPTOR), "ENGINECFG_ENGINE", &value));
    const struct engine_value *e = value;
    struct ocd_graph_config cfg = {.engine = e->index, .n_knobs = st->n_knobs};
    for (int64_t i = 0; i < st->n_knobs; i++) {
        OCD_TRY(ocd_bk_child(st->knobs[i], OCD_BK_KIND(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR),
                             "an element of ENGINECFG_KNOB_CHOICES", &value));
        cfg.knobs[i] = *(const struct ocd_graph_knob_choice *)value;
        for (int64_t j = 0; j < i; j++)
            if (cfg.knobs[j].type == cfg.knobs[i].type)
                return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "knob type %d is chosen twice", (int)cfg.knobs[i].type);
    }
    OCD_TRY(ocd_graph_config_check(e->g, &cfg));
    st->v.cfg = cfg;
    st->v.info = e->info;
    st->v.g = ocd_graph_ref(e->g);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t get_cfg_engine(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                                    int64_t *total, void *out)
{
    (void)a;
    const struct cfg_value *v = ocd_bk_state(d);
    struct engine_value e = {.g = v->g, .index = v->cfg.engine, .info = v->info};
    return ocd_bk_fill_array(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e, 0, 1, req, total, out);
}

static cudnnStatus_t get_knob_choices(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                                      int64_t *total, void *out)
{
    (void)a;
    const struct cfg_value *v = ocd_bk_state(d);
    return ocd_bk_fill_array(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, v->cfg.knobs, sizeof v->cfg.knobs[0],
                             v->cfg.n_knobs, req, total, out);
}

static const struct ocd_bk_attr cfg_attrs[] = {
    OCD_BK_DESC(ENGINECFG_ENGINE, OCD_BA_REQUIRED, OCD_BK_KIND(CUDNN_BACKEND_ENGINE_DESCRIPTOR), struct cfg_state,
                engine, get_cfg_engine, 0),
    OCD_BK_DESCS(ENGINECFG_KNOB_CHOICES, 0, 0, OCD_GRAPH_MAX_KNOBS, OCD_BK_KIND(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR),
                 struct cfg_state, knobs, n_knobs, get_knob_choices),
    OCD_BK_ENTRY(ENGINECFG_INTERMEDIATE_INFO, BACKEND_DESCRIPTOR, OCD_BA_RO, 0, 0, 0, -1,
                 OCD_BK_KIND(CUDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR), get_none, 0),
};

const struct ocd_bk_type ocd_bk_enginecfg_type =
    OCD_BK_TYPE(ENGINECFG_DESCRIPTOR, "ENGINECFG", struct cfg_state, struct cfg_value, cfg_attrs, NULL, cfg_finalize,
                graph_value_release, graph_value_retain);

/* ---- ENGINEHEUR ------------------------------------------------------------------------------ */

struct heur_state {
    struct ocd_graph *g; /* the value: g, mode, results */
    cudnnBackendHeurMode_t mode;
    int64_t n_results;
    struct cfg_value *results; /* each with g set, so that a fill takes its own reference */
    cudnnBackendDescriptor_t graph;
};

static cudnnStatus_t heur_finalize(struct ocd_bk_desc *d)
{
    struct heur_state *st = ocd_bk_state(d);
    const void *value;
    OCD_TRY(ocd_bk_child(st->graph, OCD_BK_KIND(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR), "ENGINEHEUR_OPERATION_GRAPH",
                         &value));
    struct ocd_graph *g = *(struct ocd_graph *const *)value;
    int64_t n = 0;
    OCD_TRY(ocd_graph_heuristics(g, st->mode, NULL, 0, &n));
    struct ocd_graph_config *cfgs = ocd_calloc((size_t)OCD_MAX(n, 1), sizeof *cfgs);
    struct cfg_value *results = ocd_calloc((size_t)OCD_MAX(n, 1), sizeof *results);
    if (cfgs == NULL || results == NULL) {
        free(cfgs);
        free(results);
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %lld heuristic results", (long long)n);
    }
    int64_t cap = n;
    cudnnStatus_t status = ocd_graph_heuristics(g, st->mode, cfgs, cap, &n);
    int64_t kept = 0;
    for (int64_t i = 0; status == CUDNN_STATUS_SUCCESS && i < OCD_MIN(n, cap); i++) {
        struct cfg_value *r = &results[kept];
        if (ocd_graph_engine_describe(g, cfgs[i].engine, &r->info) != CUDNN_STATUS_SUCCESS) continue;
        r->g = g;
        r->cfg = cfgs[i];
        kept++;
    }
    free(cfgs);
    if (status != CUDNN_STATUS_SUCCESS) {
        free(results);
        return status;
    }
    st->g = ocd_graph_ref(g);
    st->n_results = kept;
    st->results = results;
    return CUDNN_STATUS_SUCCESS;
}

static void heur_release(void *value)
{
    struct heur_state *st = value;
    ocd_graph_unref(st->g);
    free(st->results);
}

static cudnnStatus_t get_results(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                                 int64_t *total, void *out)
{
    (void)a;
    const struct heur_state *st = ocd_bk_state(d);
    return ocd_bk_fill_array(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, st->results, sizeof st->results[0], st->n_results,
                             req, total, out);
}

static const struct ocd_bk_attr heur_attrs[] = {
    OCD_BK_DESC(ENGINEHEUR_OPERATION_GRAPH, OCD_BA_REQUIRED, OCD_BK_KIND(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR),
                struct heur_state, graph, get_graph, 0),
    OCD_BK_SCALAR(ENGINEHEUR_MODE, HEUR_MODE, OCD_BA_REQUIRED, struct heur_state, mode),
    OCD_BK_ENTRY(ENGINEHEUR_RESULTS, BACKEND_DESCRIPTOR, OCD_BA_RO, 0, 0, 0, -1,
                 OCD_BK_KIND(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR), get_results, 0),
};

/* No Get fills an ENGINEHEUR, so its value needs no retain. */
const struct ocd_bk_type ocd_bk_engineheur_type =
    OCD_BK_TYPE(ENGINEHEUR_DESCRIPTOR, "ENGINEHEUR", struct heur_state, struct heur_state, heur_attrs, NULL,
                heur_finalize, heur_release, NULL);

/* ---- EXECUTION_PLAN -------------------------------------------------------------------------- */

#define OCD_GRAPH_MAX_INTERMEDIATES 64
struct plan_state {
    struct ocd_graph_exec exec; /* first: ocd_backend_plan_of reads it */
    struct cfg_value cfg;
    cudnnBackendDescriptor_t cfg_desc;
    int64_t computed[OCD_GRAPH_MAX_INTERMEDIATES], run_only[OCD_GRAPH_MAX_INTERMEDIATES];
    int64_t n_computed, n_run_only;
};

static cudnnStatus_t plan_finalize(struct ocd_bk_desc *d)
{
    struct plan_state *st = ocd_bk_state(d);
    if (!ocd_object_alive(OCD_OBJ_HANDLE, st->exec.handle))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "EXECUTION_PLAN_HANDLE is no longer a live handle");
    const void *value;
    OCD_TRY(ocd_bk_child(st->cfg_desc, OCD_BK_KIND(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR), "EXECUTION_PLAN_ENGINE_CONFIG",
                         &value));
    const struct cfg_value *c = value;
    struct ocd_graph_plan *plan = NULL;
    int64_t ws = 0;
    OCD_TRY(ocd_graph_plan_build(st->exec.handle, c->g, &c->cfg, &plan, &ws));
    st->exec.graph = ocd_graph_ref(c->g);
    st->exec.cfg = c->cfg;
    st->exec.plan = plan;
    st->exec.workspace_bytes = ws;
    ocd_graph_replay(c->g, st->exec.replay, sizeof st->exec.replay);
    st->cfg = *c;
    ocd_graph_ref(c->g);
    return CUDNN_STATUS_SUCCESS;
}

static void plan_release(void *value)
{
    struct plan_state *st = value;
    ocd_graph_plan_free(st->exec.plan);
    ocd_graph_unref(st->exec.graph);
    ocd_graph_unref(st->cfg.g);
}

static cudnnStatus_t get_plan_cfg(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                                  int64_t *total, void *out)
{
    (void)a;
    const struct plan_state *st = ocd_bk_state(d);
    return ocd_bk_fill_array(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &st->cfg, 0, 1, req, total, out);
}

static const struct ocd_bk_attr plan_attrs[] = {
    OCD_BK_SCALAR(EXECUTION_PLAN_HANDLE, HANDLE, OCD_BA_REQUIRED, struct plan_state, exec.handle),
    OCD_BK_DESC(EXECUTION_PLAN_ENGINE_CONFIG, OCD_BA_REQUIRED, OCD_BK_KIND(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
                struct plan_state, cfg_desc, get_plan_cfg, 0),
    OCD_BK_SCALAR(EXECUTION_PLAN_WORKSPACE_SIZE, INT64, OCD_BA_RO, struct plan_state, exec.workspace_bytes),
    OCD_BK_ARRAY(EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS, INT64, 0, 0, OCD_GRAPH_MAX_INTERMEDIATES,
                 struct plan_state, computed, n_computed),
    OCD_BK_ARRAY(EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS, INT64, 0, 0, OCD_GRAPH_MAX_INTERMEDIATES,
                 struct plan_state, run_only, n_run_only),
};

/* No Get fills an EXECUTION_PLAN, so its value needs no retain. */
const struct ocd_bk_type ocd_bk_plan_type =
    OCD_BK_TYPE(EXECUTION_PLAN_DESCRIPTOR, "EXECUTION_PLAN", struct plan_state, struct plan_state, plan_attrs, NULL,
                plan_finalize, plan_release, NULL);
