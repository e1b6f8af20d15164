/* conv_gemm.c: the host's packed-GEMM convolution, for every direction, type and layout.

   Main decision: a convolution is the GEMM of ocd_conv_gemm_dims (per group), whose operands are
   read straight from the tensors through index tables. A table gives, for each row (or column) of
   an operand, a scalar offset and up to three spatial positions; element (i, j) lives at
   row_off[i] + col_off[j] and is zero when a position sum falls into the padding (for the data
   gradient with strides: when it is not a multiple of the stride). Tables describe any strided
   layout, NHWC, the vector types' split channels, groups and mirrored filters alike, so one
   engine serves everything; fast paths are only per data type. The three cuDNN strategies differ
   in where the tables and operands live:
     implicit          tables built per block in the task's scratch; no workspace;
     implicit precomp  tables for the whole problem built once in the workspace;
     explicit (GEMM)   precomputed tables, and the gathered operand (the im2col matrix, or its
                       analogue for the gradients) materialised densely in the workspace.
   The GEMM itself is the shared packed engine (host/gemm_engine.h) with tabled operands; this
   file builds the tables and stores C through the convolution's epilogue. float data, half and
   bfloat16 compute in float; double and the int8 configurations in double (exact for int8
   products). */
#include "host/conv.h"

#include "core/dtype.h"
#include "host/gemm_engine.h"
#include "host/parallel.h"

#include <stdlib.h>
#include <string.h>

/* ---- index tables ------------------------------------------------------------------------------ */

/* The problem's views a table addresses. */
enum { VIEW_X, VIEW_W, VIEW_Y };

static const struct ocd_tensor_view *view_of(const struct ocd_conv_problem *p, int view)
{
    return view == VIEW_X ? &p->x : view == VIEW_W ? &p->w : &p->y;
}

/* How to enumerate a table: entry e = (lead, i_0, ..., i_{nsp-1}) in row-major order; its offset
   addresses view v (of the problem) at index lead_base + lead of dim lead_dim, plus, when pos_in_off, position_d
   times the view's stride of spatial dim d; position_d = (i_d, or ext_d - 1 - i_d when flip) *
   mul_d + add_d. */
struct table_spec {
    int view; /* VIEW_X, VIEW_W or VIEW_Y */
    int lead_dim;
    int64_t lead_base;
    int64_t group_step; /* lead_base of group g is g * group_step */
    int nsp;
    int64_t ext[OCD_CONV_MAX_SPATIAL];
    int mul[OCD_CONV_MAX_SPATIAL], add[OCD_CONV_MAX_SPATIAL];
    bool flip, pos_in_off;
};

static int64_t dim_offset(const struct ocd_tensor_view *v, int d, int64_t i)
{
    return d == 1 && v->vect > 1 ? (i / v->vect) * v->strides[1] + i % v->vect : i * v->strides[d];
}

static void fill_table(const struct table_spec *t, const struct ocd_tensor_view *v, int64_t group, int64_t e0, int64_t e1,
                       struct ocd_host_gemm_table out)
{
    for (int64_t e = e0; e < e1; e++) {
        int64_t rest = e, off = 0;
        int32_t *pos = out.pos + (e - e0) * OCD_HOST_GEMM_MAX_POS;
        for (int d = t->nsp - 1; d >= 0; d--) {
            int64_t i = rest % t->ext[d];
            rest /= t->ext[d];
            int64_t q = (t->flip ? t->ext[d] - 1 - i : i) * t->mul[d] + t->add[d];
            pos[d] = (int32_t)q;
            if (t->pos_in_off) off += q * v->strides[d + 2];
        }
        out.off[e - e0] = off + dim_offset(v, t->lead_dim, t->lead_base + group * t->group_step + rest);
    }
}

/* ---- the GEMM of a problem ------------------------------------------------------------------- */

/* Tables of the GEMM: rows and columns of A, of B and of C, in the engine's order (A rows, A
   columns, B rows, B columns) followed by C's. */
enum { A_ROWS, A_COLS, B_ROWS, B_COLS, C_ROWS, C_COLS, NSPECS };

_Static_assert(OCD_CONV_MAX_SPATIAL <= OCD_HOST_GEMM_MAX_POS, "a table entry holds every spatial position");

struct tables {
    struct ocd_host_gemm_table t[NSPECS];
};

/* The GEMM of a problem: C = A * B for each group, A and B read through tables (the engine's
   tabled operands), C written through the epilogue. The entries are planned (core/impl.h): the
   plan is kept apart from the problem and its own address, so p and e.ctx are bound when it
   runs (bind). */
struct gemm_plan {
    const struct ocd_conv_problem *p; /* bound */
    struct ocd_conv_gemm dims;
    struct ocd_host_gemm e;
    struct table_spec spec[NSPECS];
    const struct tables *pre; /* the tables precomputed in the workspace, or NULL: built per block */
    bool c_channel_cols;      /* the forward: column j of C is output channel g * N + j */
};

static struct table_spec spec(int view, int lead_dim, int64_t group_step)
{
    struct table_spec t;
    memset(&t, 0, sizeof t);
    t.view = view;
    t.lead_dim = lead_dim;
    t.group_step = group_step;
    return t;
}

/* Spatial part of a spec: extents ext, position = index * mul + add. */
static void spatial(struct table_spec *t, int nsp, const int64_t *ext, const int *mul, int mul1, const int *add,
                    int add_sign, bool flip, bool pos_in_off)
{
    t->nsp = nsp;
    for (int d = 0; d < nsp; d++) {
        t->ext[d] = ext[d];
        t->mul[d] = mul ? mul[d] * mul1 : mul1;
        t->add[d] = add ? add[d] * add_sign : 0;
    }
    t->flip = flip;
    t->pos_in_off = pos_in_off;
}

static void check_positions(struct ocd_host_gemm_operand *o, int nsp, const int64_t *lim, const int *div,
                            const struct ocd_tensor_view *v)
{
    o->nchk = nsp;
    for (int d = 0; d < nsp; d++) {
        o->lim[d] = (int32_t)lim[d];
        o->div[d] = div ? div[d] : 1;
        o->str[d] = v->strides[d + 2];
        o->strided |= div != NULL && div[d] != 1;
    }
}

/* ---- precomputed tables in the workspace -------------------------------------------------------- */

static int64_t spec_count(const struct gemm_plan *g, int i)
{
    /* rows and columns of A (M, K), B (K, N), C (M, N) */
    static const int which[NSPECS] = {0, 2, 2, 1, 0, 1};
    const int64_t dims[3] = {g->dims.m, g->dims.n, g->dims.k};
    return dims[which[i]];
}

/* Entries of table i over all groups (one group's worth when it does not depend on the group). */
static int64_t spec_total(const struct gemm_plan *g, int i)
{
    return spec_count(g, i) * (g->spec[i].group_step ? g->dims.groups : 1);
}

/* Tables of all specs, laid out one after the other. */
static size_t precomp_bytes(const struct gemm_plan *g)
{
    size_t bytes = 0;
    for (int i = 0; i < NSPECS; i++) bytes += ocd_host_gemm_table_bytes(spec_total(g, i));
    return bytes;
}

struct fill_job {
    const struct gemm_plan *g;
    struct tables *tabs;
};

static void fill_range(void *ctx, int64_t begin, int64_t end)
{
    struct fill_job *j = ctx;
    for (int64_t job = begin; job < end; job++) {
        int i = (int)(job % NSPECS);
        int64_t group = job / NSPECS;
        const struct table_spec *t = &j->g->spec[i];
        if (group > 0 && t->group_step == 0) continue;
        int64_t n = spec_count(j->g, i);
        struct ocd_host_gemm_table out = {j->tabs->t[i].off + group * n, j->tabs->t[i].pos + group * n * OCD_HOST_GEMM_MAX_POS};
        fill_table(t, view_of(j->g->p, t->view), group, 0, n, out);
    }
}

static void *precompute(const struct gemm_plan *g, void *ws, struct tables *tabs)
{
    char *at = ws;
    for (int i = 0; i < NSPECS; i++) {
        int64_t n = spec_total(g, i);
        tabs->t[i] = ocd_host_gemm_table_at(at, n);
        at += ocd_host_gemm_table_bytes(n);
    }
    struct fill_job job = {g, tabs};
    ocd_parallel_for(NSPECS * g->dims.groups, 1, fill_range, &job);
    return at;
}

/* The slice of table i for group `group` starting at entry e0: from the precomputed tables, or
   built into `scratch` (which has room for e1 - e0 entries). The engine's slice function. */
static struct ocd_host_gemm_table slice(const void *ctx, int i, int64_t group, int64_t e0, int64_t e1,
                                        struct ocd_host_gemm_table scratch)
{
    const struct gemm_plan *g = ctx;
    if (g->pre != NULL) {
        int64_t base = (g->spec[i].group_step ? group * spec_count(g, i) : 0) + e0;
        struct ocd_host_gemm_table t = {g->pre->t[i].off + base, g->pre->t[i].pos + base * OCD_HOST_GEMM_MAX_POS};
        return t;
    }
    fill_table(&g->spec[i], view_of(g->p, g->spec[i].view), group, e0, e1, scratch);
    return scratch;
}

/* The engine's store: a tile of C through the convolution's epilogue, at the destination's
   offsets. */
static void store(const void *ctx, const void *acc, int64_t ldacc, int64_t group, int64_t m0, int64_t n0,
                  int64_t mc, int64_t nc, struct ocd_host_gemm_table scratch[2])
{
    const struct gemm_plan *g = ctx;
    const struct ocd_conv_problem *p = g->p;
    struct ocd_host_gemm_table cr = slice(g, C_ROWS, group, m0, m0 + mc, scratch[0]);
    struct ocd_host_gemm_table cc = slice(g, C_COLS, group, n0, n0 + nc, scratch[1]);
    const struct ocd_tensor_view *v = ocd_conv_dst_view(p);
    void *dst = p->dir == OCD_CONV_FWD ? p->y_data : p->dir == OCD_CONV_BWD_DATA ? p->x_data : p->w_data;
    bool dbl = g->e.dbl;
    bool plain = !p->ep.on && !p->relu_grad && p->beta == 0 && v->dtype == (dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT);
    const float *accf = acc;
    const double *accd = acc;
    /* walk the destination along its smaller stride (channels outer for NCHW outputs, pixels
       outer for NHWC), so that stores stream instead of striding */
    int64_t rs = mc > 1 ? cr.off[1] - cr.off[0] : 0, cs = nc > 1 ? cc.off[1] - cc.off[0] : 0;
    bool cols_outer = (cs < 0 ? -cs : cs) > (rs < 0 ? -rs : rs);
    int64_t outer = cols_outer ? nc : mc, inner = cols_outer ? mc : nc;
    for (int64_t a = 0; a < outer; a++) {
        for (int64_t b = 0; b < inner; b++) {
            int64_t i = cols_outer ? b : a, j = cols_outer ? a : b, off = cr.off[i] + cc.off[j], at = i * ldacc + j;
            if (plain && dbl) ((double *)dst)[off] = p->alpha * accd[at];
            else if (plain) ((float *)dst)[off] = (float)p->alpha * accf[at];
            else ocd_host_conv_store(p, off, g->c_channel_cols ? group * g->dims.n + n0 + j : 0, dbl ? accd[at] : accf[at]);
        }
    }
}

static void plan_gemm(const struct ocd_conv_problem *p, struct gemm_plan *g)
{
    const struct ocd_conv_shape *s = &p->s;
    int64_t cg = s->c / s->groups, kg = s->k / s->groups;
    int nsp = s->nsp;
    memset(g, 0, sizeof *g);
    g->p = p;
    ocd_conv_gemm_dims(p, &g->dims);
    cudnnDataType_t scalar = ocd_dtype_scalar(p->x.dtype);
    struct ocd_host_gemm *e = &g->e;
    e->m = g->dims.m, e->n = g->dims.n, e->k = g->dims.k, e->groups = g->dims.groups;
    e->dbl = scalar == CUDNN_DATA_DOUBLE || scalar == CUDNN_DATA_INT8 || scalar == CUDNN_DATA_UINT8;
    /* B is the filter forward and for the data gradient: every M tile reuses it */
    e->prepack_b = p->dir != OCD_CONV_BWD_FILTER;
    e->ctx = g;
    e->slice = slice;
    e->store = store;
    struct ocd_host_gemm_operand *a = &e->a, *b = &e->b;
    struct table_spec *ar = &g->spec[A_ROWS], *ac = &g->spec[A_COLS], *br = &g->spec[B_ROWS];
    struct table_spec *bc = &g->spec[B_COLS], *cr = &g->spec[C_ROWS], *cc = &g->spec[C_COLS];
    switch (p->dir) {
    case OCD_CONV_FWD:
        /* A = im2col(x): rows output pixels, columns (c, taps); B = filter (c, taps) x k; C = y */
        a->base = p->x_data, a->dtype = p->x.dtype;
        *ar = spec(VIEW_X, 0, 0);
        spatial(ar, nsp, s->out, s->stride, 1, s->pad, -1, false, true);
        *ac = spec(VIEW_X, 1, cg);
        spatial(ac, nsp, s->filt, s->dilation, 1, NULL, 0, false, true);
        check_positions(a, nsp, s->in, NULL, &p->x);
        b->base = p->w_data, b->dtype = p->w.dtype;
        *br = spec(VIEW_W, 1, 0);
        spatial(br, nsp, s->filt, NULL, 1, NULL, 0, s->flip, true);
        *bc = spec(VIEW_W, 0, kg);
        *cr = spec(VIEW_Y, 0, 0);
        spatial(cr, nsp, s->out, NULL, 1, NULL, 0, false, true);
        *cc = spec(VIEW_Y, 1, kg);
        g->c_channel_cols = true;
        break;
    case OCD_CONV_BWD_DATA: {
        /* A = dy gathered: rows input pixels, columns (k, taps); B = filter (k, taps) x c; C = dx.
           Input position i meets output o at tap r when o = (i + pad - r * dilation) / stride. */
        bool strided = false;
        for (int d = 0; d < nsp; d++) strided |= s->stride[d] != 1;
        a->base = p->y_data, a->dtype = p->y.dtype;
        *ar = spec(VIEW_Y, 0, 0);
        spatial(ar, nsp, s->in, NULL, 1, s->pad, 1, false, !strided);
        *ac = spec(VIEW_Y, 1, kg);
        spatial(ac, nsp, s->filt, s->dilation, -1, NULL, 0, false, !strided);
        check_positions(a, nsp, s->out, strided ? s->stride : NULL, &p->y);
        b->base = p->w_data, b->dtype = p->w.dtype;
        *br = spec(VIEW_W, 0, kg);
        spatial(br, nsp, s->filt, NULL, 1, NULL, 0, s->flip, true);
        *bc = spec(VIEW_W, 1, 0);
        *cr = spec(VIEW_X, 0, 0);
        spatial(cr, nsp, s->in, NULL, 1, NULL, 0, false, true);
        *cc = spec(VIEW_X, 1, cg);
        break;
    }
    default:
        /* A = dy: rows k, columns output pixels; B = im2col(x) transposed: rows output pixels,
           columns (c, taps); C = dw, columns stored at the (mirrored) taps */
        a->base = p->y_data, a->dtype = p->y.dtype;
        *ar = spec(VIEW_Y, 1, kg);
        *ac = spec(VIEW_Y, 0, 0);
        spatial(ac, nsp, s->out, NULL, 1, NULL, 0, false, true);
        b->base = p->x_data, b->dtype = p->x.dtype;
        *br = spec(VIEW_X, 0, 0);
        spatial(br, nsp, s->out, s->stride, 1, s->pad, -1, false, true);
        *bc = spec(VIEW_X, 1, cg);
        spatial(bc, nsp, s->filt, s->dilation, 1, NULL, 0, false, true);
        check_positions(b, nsp, s->in, NULL, &p->x);
        *cr = spec(VIEW_W, 0, kg);
        *cc = spec(VIEW_W, 1, 0);
        spatial(cc, nsp, s->filt, NULL, 1, NULL, 0, s->flip, true);
        break;
    }
}

/* The operand whose elements are gathered through the padding (materialised by the explicit
   strategy): A forward and for the data gradient, B for the filter gradient. */
static int gathered(const struct ocd_conv_problem *p)
{
    return p->dir == OCD_CONV_BWD_FILTER ? 1 : 0;
}

/* A plan bound to the problem it runs (and to its own copy). */
static void bind(struct gemm_plan *g, const struct ocd_conv_problem *p)
{
    g->p = p;
    g->e.ctx = g;
}

/* ---- the three strategies ------------------------------------------------------------------------ */

enum { IMPLICIT, PRECOMP, EXPLICIT };

static cudnnStatus_t run(const struct ocd_conv_problem *p, struct gemm_plan *g, void *ws, int strategy)
{
    bind(g, p);
    if (strategy == IMPLICIT) return ocd_host_gemm_run(&g->e, NULL);
    struct tables pre;
    char *rest = precompute(g, ws, &pre);
    g->pre = &pre;
    if (strategy == EXPLICIT) OCD_TRY(ocd_host_gemm_gather(&g->e, gathered(p), rest + ocd_host_gemm_prepack_bytes(&g->e)));
    return ocd_host_gemm_run(&g->e, rest);
}

cudnnStatus_t ocd_host_conv_gemm_implicit(const struct ocd_conv_problem *p)
{
    struct gemm_plan g;
    plan_gemm(p, &g);
    return run(p, &g, NULL, IMPLICIT);
}

static const char *plan(cudnnHandle_t handle, const void *problem, void *planned)
{
    plan_gemm(problem, planned);
    return NULL;
}

static size_t precomp_workspace(cudnnHandle_t handle, const void *problem, const void *planned)
{
    const struct gemm_plan *g = planned;
    return precomp_bytes(g) + ocd_host_gemm_prepack_bytes(&g->e);
}

static size_t explicit_workspace(cudnnHandle_t handle, const void *problem, const void *planned)
{
    const struct gemm_plan *g = planned;
    return precomp_workspace(handle, problem, planned) + ocd_host_gemm_gather_bytes(&g->e, gathered(problem));
}

#define STRATEGY_RUN(name_, strategy_)                                                           \
    static cudnnStatus_t name_(cudnnHandle_t handle, const void *problem, const void *planned, void *ws, \
                               size_t ws_bytes)                                                  \
    {                                                                                            \
        struct gemm_plan g = *(const struct gemm_plan *)planned;                                 \
        return run(problem, &g, ws, strategy_);                                                  \
    }
STRATEGY_RUN(run_implicit, IMPLICIT)
STRATEGY_RUN(run_precomp, PRECOMP)
STRATEGY_RUN(run_explicit, EXPLICIT)
#undef STRATEGY_RUN

OCD_IMPL_PLAN_FITS(struct gemm_plan);
const struct ocd_impl_planned ocd_host_conv_gemm_implicit_planned = {plan, NULL, run_implicit};
const struct ocd_impl_planned ocd_host_conv_gemm_precomp_planned = {plan, precomp_workspace, run_precomp};
const struct ocd_impl_planned ocd_host_conv_gemm_explicit_planned = {plan, explicit_workspace, run_explicit};
