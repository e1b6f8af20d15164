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
   The engine packs blocks of A (MC x KC) and B (KC x NC) into micro-panels and runs an MR x NR
   micro-kernel written for gcc's auto-vectoriser; on x86-64 it is also compiled for AVX2 + FMA
   and picked at run time, so the portable build still uses FMA where the processor has it (the
   file is compiled with -ffp-contract=fast so that a*b+c becomes one FMA). Tasks (group, M block, N block) run on the worker pool.
   float data, half and bfloat16 compute in float; double and the int8 configurations in double
   (exact for int8 products). */
#include "host/conv.h"

#include "host/parallel.h"
#include "host/typed.h"

#include <stdlib.h>
#include <string.h>

/* The micro-kernel is compiled twice on x86-64 with gcc or clang: for the baseline and for
   AVX2 + FMA, chosen once at run time; the build itself stays portable (OPENCUDNN_NATIVE=ON
   compiles everything for the build machine instead). */
#if defined(__x86_64__) && defined(__GNUC__)
#define OCD_GEMM_X86_DISPATCH 1
static bool have_avx2_fma(void)
{
    static int cached = -1; /* racing threads compute the same answer */
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return cached;
}
#else
#define OCD_GEMM_X86_DISPATCH 0
#endif

/* ---- index tables ------------------------------------------------------------------------------ */

/* How to enumerate a table: entry e = (lead, i_0, ..., i_{nsp-1}) in row-major order; its offset
   addresses view v at index lead_base + lead of dim lead_dim, plus, when pos_in_off, position_d
   times the view's stride of spatial dim d; position_d = (i_d, or ext_d - 1 - i_d when flip) *
   mul_d + add_d. */
struct table_spec {
    const struct ocd_tensor_view *v;
    int lead_dim;
    int64_t lead_base;
    int64_t group_step; /* lead_base of group g is g * group_step */
    int nsp;
    int64_t ext[OCD_CONV_MAX_SPATIAL];
    int mul[OCD_CONV_MAX_SPATIAL], add[OCD_CONV_MAX_SPATIAL];
    bool flip, pos_in_off;
};

struct table {
    int64_t *off;
    int32_t *pos; /* OCD_CONV_MAX_SPATIAL per entry */
};

static int64_t dim_offset(const struct ocd_tensor_view *v, int d, int64_t i)
{
    return d == 1 && v->vect > 1 ? (i / v->vect) * v->strides[1] + i % v->vect : i * v->strides[d];
}

static void fill_table(const struct table_spec *t, int64_t group, int64_t e0, int64_t e1, struct table out)
{
    for (int64_t e = e0; e < e1; e++) {
        int64_t rest = e, off = 0;
        int32_t *pos = out.pos + (e - e0) * OCD_CONV_MAX_SPATIAL;
        for (int d = t->nsp - 1; d >= 0; d--) {
            int64_t i = rest % t->ext[d];
            rest /= t->ext[d];
            int64_t q = (t->flip ? t->ext[d] - 1 - i : i) * t->mul[d] + t->add[d];
            pos[d] = (int32_t)q;
            if (t->pos_in_off) off += q * t->v->strides[d + 2];
        }
        out.off[e - e0] = off + dim_offset(t->v, t->lead_dim, t->lead_base + group * t->group_step + rest);
    }
}

/* ---- operands ---------------------------------------------------------------------------------- */

/* A GEMM operand: rows and columns enumerated by two table specs, or a dense row-major matrix in
   the workspace (ld > 0). Positions are checked in nchk spatial dims against lim (divided by div
   first when strided). */
struct operand {
    const void *base;
    cudnnDataType_t dtype;
    struct table_spec rows, cols;
    int nchk;
    bool strided;
    int32_t lim[OCD_CONV_MAX_SPATIAL], div[OCD_CONV_MAX_SPATIAL];
    int64_t str[OCD_CONV_MAX_SPATIAL];
    int64_t ld;            /* dense: elements per row, else 0 */
    int64_t dense_group;   /* dense: elements per group */
};

/* The GEMM of a problem: C = A * B for each group, C written through the epilogue. */
struct gemm_plan {
    const struct ocd_conv_problem *p;
    struct ocd_conv_gemm dims;
    struct operand a, b, c;
    bool c_channel_cols; /* the forward: column j of C is output channel g * N + j */
    bool dbl;            /* computes in double */
};

static struct table_spec spec(const struct ocd_tensor_view *v, int lead_dim, int64_t group_step)
{
    struct table_spec t;
    memset(&t, 0, sizeof t);
    t.v = v;
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

static void check_positions(struct operand *o, int nsp, const int64_t *lim, const int *div,
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

static void plan_gemm(const struct ocd_conv_problem *p, struct gemm_plan *g)
{
    const struct ocd_conv_shape *s = &p->s;
    int64_t cg = s->c / s->groups, kg = s->k / s->groups;
    int nsp = s->nsp;
    memset(g, 0, sizeof *g);
    g->p = p;
    ocd_conv_gemm_dims(p, &g->dims);
    cudnnDataType_t scalar = ocd_dtype_scalar(p->x.dtype);
    g->dbl = scalar == CUDNN_DATA_DOUBLE || scalar == CUDNN_DATA_INT8 || scalar == CUDNN_DATA_UINT8;
    struct operand *a = &g->a, *b = &g->b, *c = &g->c;
    switch (p->dir) {
    case OCD_CONV_FWD:
        /* A = im2col(x): rows output pixels, columns (c, taps); B = filter (c, taps) x k; C = y */
        a->base = p->x_data, a->dtype = p->x.dtype;
        a->rows = spec(&p->x, 0, 0);
        spatial(&a->rows, nsp, s->out, s->stride, 1, s->pad, -1, false, true);
        a->cols = spec(&p->x, 1, cg);
        spatial(&a->cols, nsp, s->filt, s->dilation, 1, NULL, 0, false, true);
        check_positions(a, nsp, s->in, NULL, &p->x);
        b->base = p->w_data, b->dtype = p->w.dtype;
        b->rows = spec(&p->w, 1, 0);
        spatial(&b->rows, nsp, s->filt, NULL, 1, NULL, 0, s->flip, true);
        b->cols = spec(&p->w, 0, kg);
        c->rows = spec(&p->y, 0, 0);
        spatial(&c->rows, nsp, s->out, NULL, 1, NULL, 0, false, true);
        c->cols = spec(&p->y, 1, kg);
        g->c_channel_cols = true;
        break;
    case OCD_CONV_BWD_DATA: {
        /* A = dy gathered: rows input pixels, columns (k, taps); B = filter (k, taps) x c; C = dx.
           Input position i meets output o at tap r when o = (i + pad - r * dilation) / stride. */
        bool strided = false;
        for (int d = 0; d < nsp; d++) strided |= s->stride[d] != 1;
        a->base = p->y_data, a->dtype = p->y.dtype;
        a->rows = spec(&p->y, 0, 0);
        spatial(&a->rows, nsp, s->in, NULL, 1, s->pad, 1, false, !strided);
        a->cols = spec(&p->y, 1, kg);
        spatial(&a->cols, nsp, s->filt, s->dilation, -1, NULL, 0, false, !strided);
        check_positions(a, nsp, s->out, strided ? s->stride : NULL, &p->y);
        b->base = p->w_data, b->dtype = p->w.dtype;
        b->rows = spec(&p->w, 0, kg);
        spatial(&b->rows, nsp, s->filt, NULL, 1, NULL, 0, s->flip, true);
        b->cols = spec(&p->w, 1, 0);
        c->rows = spec(&p->x, 0, 0);
        spatial(&c->rows, nsp, s->in, NULL, 1, NULL, 0, false, true);
        c->cols = spec(&p->x, 1, cg);
        break;
    }
    default:
        /* A = dy: rows k, columns output pixels; B = im2col(x) transposed: rows output pixels,
           columns (c, taps); C = dw, columns stored at the (mirrored) taps */
        a->base = p->y_data, a->dtype = p->y.dtype;
        a->rows = spec(&p->y, 1, kg);
        a->cols = spec(&p->y, 0, 0);
        spatial(&a->cols, nsp, s->out, NULL, 1, NULL, 0, false, true);
        b->base = p->x_data, b->dtype = p->x.dtype;
        b->rows = spec(&p->x, 0, 0);
        spatial(&b->rows, nsp, s->out, s->stride, 1, s->pad, -1, false, true);
        b->cols = spec(&p->x, 1, cg);
        spatial(&b->cols, nsp, s->filt, s->dilation, 1, NULL, 0, false, true);
        check_positions(b, nsp, s->in, NULL, &p->x);
        c->rows = spec(&p->w, 0, kg);
        c->cols = spec(&p->w, 1, 0);
        spatial(&c->cols, nsp, s->filt, NULL, 1, NULL, 0, s->flip, true);
        break;
    }
}

/* The operand whose elements are gathered through the padding (materialised by the explicit
   strategy): A forward and for the data gradient, B for the filter gradient. */
static struct operand *gathered(struct gemm_plan *g)
{
    return g->p->dir == OCD_CONV_BWD_FILTER ? &g->b : &g->a;
}

/* ---- precomputed tables in the workspace -------------------------------------------------------- */

#define NSPECS 6

static const struct table_spec *spec_at(const struct gemm_plan *g, int i)
{
    const struct operand *o[3] = {&g->a, &g->b, &g->c};
    return i % 2 ? &o[i / 2]->cols : &o[i / 2]->rows;
}

static int64_t spec_count(const struct gemm_plan *g, int i)
{
    /* rows and columns of A (M, K), B (K, N), C (M, N) */
    static const int which[NSPECS] = {0, 2, 2, 1, 0, 1};
    const int64_t dims[3] = {g->dims.m, g->dims.n, g->dims.k};
    return dims[which[i]];
}

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static size_t table_bytes(int64_t entries)
{
    return align64((size_t)entries * sizeof(int64_t)) + align64((size_t)entries * OCD_CONV_MAX_SPATIAL * sizeof(int32_t));
}

/* Tables of all specs (per group for those that depend on it), laid out one after the other. */
struct tables {
    struct table t[NSPECS];
};

static size_t precomp_bytes(const struct gemm_plan *g)
{
    size_t bytes = 0;
    for (int i = 0; i < NSPECS; i++)
        bytes += table_bytes(spec_count(g, i) * (spec_at(g, i)->group_step ? g->dims.groups : 1));
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
        const struct table_spec *t = spec_at(j->g, i);
        if (group > 0 && t->group_step == 0) continue;
        int64_t n = spec_count(j->g, i);
        struct table out = {j->tabs->t[i].off + group * n, j->tabs->t[i].pos + group * n * OCD_CONV_MAX_SPATIAL};
        fill_table(t, group, 0, n, out);
    }
}

static void *precompute(const struct gemm_plan *g, void *ws, struct tables *tabs)
{
    char *at = ws;
    for (int i = 0; i < NSPECS; i++) {
        int64_t n = spec_count(g, i) * (spec_at(g, i)->group_step ? g->dims.groups : 1);
        tabs->t[i].off = (int64_t *)at;
        tabs->t[i].pos = (int32_t *)(at + align64((size_t)n * sizeof(int64_t)));
        at += table_bytes(n);
    }
    struct fill_job job = {g, tabs};
    ocd_parallel_for(NSPECS * g->dims.groups, 1, fill_range, &job);
    return at;
}

/* The slice of table i for group `group` starting at entry e0: from the precomputed tables, or
   built into `scratch` (which has room for e1 - e0 entries). */
static struct table slice(const struct gemm_plan *g, const struct tables *pre, int i, int64_t group, int64_t e0,
                          int64_t e1, struct table scratch)
{
    if (pre != NULL) {
        int64_t base = (spec_at(g, i)->group_step ? group * spec_count(g, i) : 0) + e0;
        struct table t = {pre->t[i].off + base, pre->t[i].pos + base * OCD_CONV_MAX_SPATIAL};
        return t;
    }
    fill_table(spec_at(g, i), group, e0, e1, scratch);
    return scratch;
}

/* ---- the typed engine: float and double ----------------------------------------------------------- */

enum { IMPLICIT, PRECOMP, EXPLICIT };

/* Micro-tile widths: two vectors of the widest vector unit dispatched (AVX2: 8 floats, 4 doubles). */
#define F32_NR 16
#define F64_NR 8

/* Bytes of B packed once for the whole problem (forward and data gradient: B is the filter). */
static size_t prepacked_b_bytes(const struct gemm_plan *g)
{
    if (g->p->dir == OCD_CONV_BWD_FILTER) return 0;
    int64_t nr = g->dbl ? F64_NR : F32_NR, npad = (g->dims.n + nr - 1) / nr * nr;
    return align64((size_t)(g->dims.groups * g->dims.k * npad) * (g->dbl ? sizeof(double) : sizeof(float)));
}

#define GEMM_T float
#define GEMM_NATIVE CUDNN_DATA_FLOAT
#define GEMM_SFX f32
#define GEMM_MR 6
#define GEMM_NR F32_NR
#include "host/conv_gemm_engine.h"

#define GEMM_T double
#define GEMM_NATIVE CUDNN_DATA_DOUBLE
#define GEMM_SFX f64
#define GEMM_MR 6
#define GEMM_NR F64_NR
#include "host/conv_gemm_engine.h"

static cudnnStatus_t run(const struct ocd_conv_problem *p, void *ws, int strategy)
{
    struct gemm_plan g;
    plan_gemm(p, &g);
    return g.dbl ? run_f64(&g, ws, strategy) : run_f32(&g, ws, strategy);
}

cudnnStatus_t ocd_host_conv_gemm_implicit(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    return run(problem, NULL, IMPLICIT);
}

cudnnStatus_t ocd_host_conv_gemm_precomp(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    return run(problem, ws, PRECOMP);
}

size_t ocd_host_conv_gemm_precomp_workspace(cudnnHandle_t handle, const void *problem)
{
    struct gemm_plan g;
    plan_gemm(problem, &g);
    return precomp_bytes(&g) + prepacked_b_bytes(&g);
}

cudnnStatus_t ocd_host_conv_gemm_explicit(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    return run(problem, ws, EXPLICIT);
}

size_t ocd_host_conv_gemm_explicit_workspace(cudnnHandle_t handle, const void *problem)
{
    struct gemm_plan g;
    plan_gemm(problem, &g);
    const struct operand *o = gathered(&g);
    int64_t rows = o == &g.a ? g.dims.m : g.dims.k, cols = o == &g.a ? g.dims.k : g.dims.n;
    return precomp_bytes(&g) + prepacked_b_bytes(&g) +
           (size_t)(g.dims.groups * rows * cols) * (g.dbl ? sizeof(double) : sizeof(float));
}
