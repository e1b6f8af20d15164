/* engine.c: the engines of the backend API as the descriptor layer sees them (graph.h hooks).

   This is the placeholder the descriptor layer is built and tested against: one engine (global
   index 0) claims every graph, offers no knobs and carries no notes, heuristics list it, and a
   plan cannot be built yet (NOT_SUPPORTED, logged). The engine list, heuristics, plans and
   execution replace it. */
#include "graph/graph.h"

#include <stdlib.h>

int64_t ocd_graph_engine_count(const struct ocd_graph *g)
{
    (void)g;
    return 1;
}

cudnnStatus_t ocd_graph_engine_describe(const struct ocd_graph *g, int64_t index,
                                        struct ocd_graph_engine_info *info)
{
    if (index < 0 || index >= ocd_graph_engine_count(g))
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "engine index %lld is not in [0, %lld)",
                        (long long)index, (long long)ocd_graph_engine_count(g));
    *info = (struct ocd_graph_engine_info){0};
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

cudnnStatus_t ocd_graph_heuristics(const struct ocd_graph *g, cudnnBackendHeurMode_t mode,
                                   struct ocd_graph_config *out, int64_t cap, int64_t *count)
{
    (void)g;
    (void)mode;
    if (cap > 0) out[0] = (struct ocd_graph_config){.engine = 0};
    *count = 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_graph_plan_build(cudnnHandle_t handle, struct ocd_graph *g,
                                   const struct ocd_graph_config *cfg, struct ocd_graph_plan **plan,
                                   int64_t *workspace_bytes)
{
    (void)handle;
    (void)g;
    (void)workspace_bytes;
    *plan = NULL;
    return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "engine %lld cannot build plans yet",
                    (long long)cfg->engine);
}

void ocd_graph_plan_free(struct ocd_graph_plan *plan)
{
    free(plan);
}
