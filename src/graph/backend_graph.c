/* backend_graph.c: the OPERATIONGRAPH descriptor kind and the finalized graph (struct ocd_graph).

   Finalize copies the finalized operations and wires them by tensor UID: a UID an operation
   writes is produced there, every other occurrence is a use. It refuses (BAD_PARAM, logged) two
   different tensors under one UID, a UID written by two operations, a virtual tensor that no
   operation writes or none reads, a virtual output read back by beta, operations that do not
   form one connected graph, and cycles; it then orders the operations so that each comes after
   the producers of its inputs (keeping the given order where it already is one) and asks the
   engines how many global indices the graph has: none is NOT_SUPPORTED. */
#include "graph/backend_desc.h"

#include <stdlib.h>
#include <string.h>

struct graph_state {
    struct ocd_graph *g; /* the value */
    cudnnHandle_t handle;
    cudnnBackendDescriptor_t ops[OCD_GRAPH_MAX_OPS];
    int64_t n_ops;
};

struct ocd_graph *ocd_graph_ref(struct ocd_graph *g)
{
    __atomic_fetch_add(&g->refs, 1, __ATOMIC_RELAXED);
    return g;
}

void ocd_graph_unref(struct ocd_graph *g)
{
    if (g == NULL || __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    free(g->ops);
    free(g->nodes);
    free(g);
}

const struct ocd_graph_node *ocd_graph_find(const struct ocd_graph *g, int64_t uid)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].t.uid == uid) return &g->nodes[i];
    return NULL;
}

static struct ocd_graph_node *node_of(struct ocd_graph *g, int64_t uid)
{
    return (struct ocd_graph_node *)ocd_graph_find(g, uid);
}

/* ---- wiring ---------------------------------------------------------------------------------- */

static int root(int *parent, int i)
{
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

/* Adds the ops' tensors to g->nodes and checks the rules of the file's comment. */
static cudnnStatus_t wire(struct ocd_graph *g)
{
    int parent[OCD_GRAPH_MAX_OPS], first_op[OCD_GRAPH_MAX_OPS * OCD_GRAPH_OP_MAX_TENSORS];
    for (int i = 0; i < g->n_ops; i++) parent[i] = i;
    for (int i = 0; i < g->n_ops; i++) {
        const struct ocd_graph_op *op = &g->ops[i];
        for (int s = 0; s < OCD_GRAPH_OP_MAX_TENSORS; s++) {
            if (!(op->present & (1u << s))) continue;
            const struct ocd_graph_tensor *t = &op->t[s];
            struct ocd_graph_node *n = node_of(g, t->uid);
            if (n == NULL) {
                first_op[g->n_nodes] = i;
                n = &g->nodes[g->n_nodes++];
                n->t = *t;
                n->producer = -1;
            } else if (!ocd_bk_same_tensor(&n->t, t)) {
                return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "two different tensors have the unique id %lld",
                                (long long)t->uid);
            }
            int ni = (int)(n - g->nodes);
            parent[root(parent, i)] = root(parent, first_op[ni]);
            if (op->outputs & (1u << s)) {
                if (n->producer >= 0)
                    return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "tensor %lld is written by operations %d and %d",
                                    (long long)t->uid, n->producer, i);
                n->producer = i;
                bool conv = op->kind <= CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR &&
                            op->kind >= CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
                if (conv && t->is_virtual && op->beta != 0.0)
                    return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "operation %d blends (beta %g) into virtual tensor %lld",
                                    i, op->beta, (long long)t->uid);
            } else {
                n->consumers++;
            }
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ocd_graph_node *n = &g->nodes[i];
        if (n->t.is_virtual && (n->producer < 0 || n->consumers == 0))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "virtual tensor %lld is %s", (long long)n->t.uid,
                            n->producer < 0 ? "read but never written" : "written but never read");
    }
    for (int i = 1; i < g->n_ops; i++) {
        if (root(parent, i) != root(parent, 0))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "operation %d shares no tensor with operation 0's graph", i);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Orders g->ops so that every op comes after the producers of its inputs (the lowest ready index
   first, so a given topological order is kept), and renumbers the producers. */
static cudnnStatus_t order(struct ocd_graph *g)
{
    int waiting[OCD_GRAPH_MAX_OPS] = {0}, new_index[OCD_GRAPH_MAX_OPS], done = 0;
    bool placed[OCD_GRAPH_MAX_OPS] = {false};
    for (int i = 0; i < g->n_ops; i++) {
        const struct ocd_graph_op *op = &g->ops[i];
        for (int s = 0; s < OCD_GRAPH_OP_MAX_TENSORS; s++)
            if ((op->present & ~op->outputs & (1u << s)) && ocd_graph_find(g, op->t[s].uid)->producer >= 0)
                waiting[i]++;
    }
    struct ocd_graph_op *sorted = ocd_malloc((size_t)g->n_ops * sizeof *sorted);
    if (sorted == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %d operations", g->n_ops);
    while (done < g->n_ops) {
        int next = -1;
        for (int i = 0; i < g->n_ops && next < 0; i++)
            if (!placed[i] && waiting[i] == 0) next = i;
        if (next < 0) {
            free(sorted);
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "the operations form a cycle");
        }
        placed[next] = true;
        new_index[next] = done;
        sorted[done++] = g->ops[next];
        for (int i = 0; i < g->n_ops; i++) {
            const struct ocd_graph_op *op = &g->ops[i];
            for (int s = 0; s < OCD_GRAPH_OP_MAX_TENSORS; s++)
                if ((op->present & ~op->outputs & (1u << s)) && ocd_graph_find(g, op->t[s].uid)->producer == next)
                    waiting[i]--;
        }
    }
    memcpy(g->ops, sorted, (size_t)g->n_ops * sizeof *sorted);
    free(sorted);
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].producer >= 0) g->nodes[i].producer = new_index[g->nodes[i].producer];
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t build(struct graph_state *st, struct ocd_graph *g)
{
    g->refs = 1;
    g->handle = st->handle;
    g->ops = ocd_calloc((size_t)st->n_ops, sizeof *g->ops);
    g->nodes = ocd_calloc((size_t)st->n_ops * OCD_GRAPH_OP_MAX_TENSORS, sizeof *g->nodes);
    if (g->ops == NULL || g->nodes == NULL)
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate a graph of %lld operations", (long long)st->n_ops);
    if (!ocd_object_alive(OCD_OBJ_HANDLE, st->handle))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "OPERATIONGRAPH_HANDLE is no longer a live handle");
    for (int64_t i = 0; i < st->n_ops; i++) {
        const void *value;
        OCD_TRY(ocd_bk_child(st->ops[i], OCD_BK_ANY_OPERATION, "an element of OPERATIONGRAPH_OPS", &value));
        g->ops[g->n_ops++] = *(const struct ocd_graph_op *)value;
    }
    OCD_TRY(wire(g));
    OCD_TRY(order(g));
    g->engine_count = ocd_graph_engine_count(g);
    if (g->engine_count < 0) return CUDNN_STATUS_ALLOC_FAILED; /* logged where it ran out */
    if (g->engine_count == 0)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "no engine runs this graph of %d operations", g->n_ops);
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t graph_finalize(struct ocd_bk_desc *d)
{
    struct graph_state *st = ocd_bk_state(d);
    struct ocd_graph *g = ocd_calloc(1, sizeof *g);
    if (g == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate a graph");
    cudnnStatus_t status = build(st, g);
    if (status != CUDNN_STATUS_SUCCESS) {
        ocd_graph_unref(g);
        return status;
    }
    st->g = g;
    return CUDNN_STATUS_SUCCESS;
}

static void graph_release(void *value)
{
    ocd_graph_unref(*(struct ocd_graph **)value);
}

static void graph_retain(void *value)
{
    ocd_graph_ref(*(struct ocd_graph **)value);
}

/* ---- getters ------------------------------------------------------------------------------------ */

static cudnnStatus_t get_handle(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                                int64_t *total, void *out)
{
    (void)a;
    const struct graph_state *st = ocd_bk_state(d);
    if (req > 0) memcpy(out, &st->g->handle, sizeof st->g->handle);
    *total = 1;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t get_ops(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req, int64_t *total,
                             void *out)
{
    (void)a;
    const struct ocd_graph *g = ((const struct graph_state *)ocd_bk_state(d))->g;
    int64_t w = ocd_bk_written(g->n_ops, req);
    cudnnBackendDescriptor_t *targets = out;
    for (int64_t i = 0; i < w; i++) /* each target must be of its op's kind; all are checked first */
        OCD_TRY(ocd_bk_check_target(targets[i], g->ops[i].kind, i));
    for (int64_t i = 0; i < w; i++) OCD_TRY(ocd_bk_fill(targets[i], g->ops[i].kind, &g->ops[i]));
    *total = g->n_ops;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t get_engine_count(const struct ocd_bk_desc *d, const struct ocd_bk_attr *a, int64_t req,
                                      int64_t *total, void *out)
{
    (void)a;
    const struct graph_state *st = ocd_bk_state(d);
    if (req > 0) memcpy(out, &st->g->engine_count, sizeof(int64_t));
    *total = 1;
    return CUDNN_STATUS_SUCCESS;
}

static const struct ocd_bk_attr graph_attrs[] = {
    OCD_BK_ENTRY(OPERATIONGRAPH_HANDLE, HANDLE, OCD_BA_REQUIRED, 1, 1, offsetof(struct graph_state, handle), -1, 0,
                 get_handle, 0),
    OCD_BK_DESCS(OPERATIONGRAPH_OPS, OCD_BA_REQUIRED, 1, OCD_GRAPH_MAX_OPS, OCD_BK_ANY_OPERATION, struct graph_state,
                 ops, n_ops, get_ops),
    OCD_BK_COMPUTED(OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, INT64, get_engine_count),
};

const struct ocd_bk_type ocd_bk_graph_type =
    OCD_BK_TYPE(OPERATIONGRAPH_DESCRIPTOR, "OPERATIONGRAPH", struct graph_state, struct ocd_graph *, graph_attrs, NULL,
                graph_finalize, graph_release, graph_retain);
