/* conv_winograd.c (host): WINOGRAD and WINOGRAD_NONFUSED in every direction, on the plan of
   problem/conv_winograd.h: the filter-role and input-role transforms into the workspace, the batched
   GEMM of the host engine over the alpha^2 x groups transformed positions, and the output
   transform through the convolution store (alpha, beta, the fused epilogue).

   Main decision: every transform runs on blocks of LANES independent tiles whose transformed
   values are contiguous in the workspace (consecutive tiles t of one channel, or consecutive
   reduction channels of one filter), so the small dense matrix products of a transform run with
   the lanes innermost and vectorise, and each transformed position is written as one contiguous
   run. The gather of a block reads the tensors through their views (any layout; float and half
   data; double is not a Winograd configuration) and zero-fills outside them. Transforms and
   products run in float. */
#include "host/conv.h"

#include "core/platform.h"
#include "problem/conv_winograd.h"
#include "host/parallel.h"
#include "host/typed.h"

#include <stdatomic.h>
#include <string.h>

#define LANES 16
#define SQ (OCD_WINO_MAX_ALPHA * OCD_WINO_MAX_ALPHA)

/* A block of LANES values, one a tile: a GNU vector (gcc and clang lower it to the processor's
   vector instructions), or an array the loops of MAC walk elsewhere. */
#if defined(__GNUC__)
typedef float lanes_t __attribute__((vector_size(LANES * sizeof(float))));
#define LANE(x, l) (x)[l]
#define MAC(acc, s, x) ((acc) += (s) * (x))
#else
typedef struct {
    float v[LANES];
} lanes_t;
#define LANE(x, l) (x).v[l]
#define MAC(acc, s, x)                                                                            \
    for (int l_ = 0; l_ < LANES; l_++) (acc).v[l_] += (s) * (x).v[l_]
#endif

/* out[i][j] = sum_(a,b) mat[i][a] in[a][b] mat[j][b], per lane: mat is rows x cols, in cols x
   cols, out rows x rows. Inlined with constant sizes by apply(), so the loops unroll. */
static OCD_ALWAYS_INLINE void apply_n(const float *mat, int rows, int cols, const lanes_t *in,
                                                           lanes_t *out)
{
    lanes_t tmp[SQ];
    for (int i = 0; i < rows; i++)
        for (int b = 0; b < cols; b++) {
            lanes_t acc;
            memset(&acc, 0, sizeof acc);
            for (int a = 0; a < cols; a++) MAC(acc, mat[i * cols + a], in[a * cols + b]);
            tmp[i * cols + b] = acc;
        }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < rows; j++) {
            lanes_t acc;
            memset(&acc, 0, sizeof acc);
            for (int b = 0; b < cols; b++) MAC(acc, mat[j * cols + b], tmp[i * cols + b]);
            out[i * rows + j] = acc;
        }
}

/* The sizes the plans use, each inlined with constant sizes; the rest by the general loops. */
#define APPLY_SIZES                                                                               \
    switch (rows * 8 + cols) {                                                                    \
        SIZE(4, 4) SIZE(6, 6)                                  /* B^T */                          \
        SIZE(4, 3) SIZE(6, 3) SIZE(6, 5) SIZE(4, 2) SIZE(6, 2) /* G */                            \
        SIZE(2, 4) SIZE(4, 6) SIZE(2, 6) SIZE(3, 4) SIZE(5, 6) /* A^T */                          \
    default: apply_n(mat, rows, cols, in, out);                                                   \
    }
#define SIZE(r_, c_)                                                                              \
    case (r_) * 8 + (c_): apply_n(mat, r_, c_, in, out); return;

static void apply_base(const float *mat, int rows, int cols, const lanes_t *in, lanes_t *out)
{
    APPLY_SIZES
}

/* As conv_gemm.c does for its micro-kernel: on x86-64 with gcc or clang, also compiled for AVX2 +
   FMA and picked at run time, the build itself staying portable. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) static void apply_avx2(const float *mat, int rows, int cols,
                                                            const lanes_t *in, lanes_t *out)
{
    APPLY_SIZES
}

static void apply(const float *mat, int rows, int cols, const lanes_t *in, lanes_t *out)
{
    /* racing threads compute the same answer; atomic, so that their race is defined */
    static atomic_int cached = -1;
    int avx2 = atomic_load_explicit(&cached, memory_order_relaxed);
    if (avx2 < 0) {
        __builtin_cpu_init();
        avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        atomic_store_explicit(&cached, avx2, memory_order_relaxed);
    }
    if (avx2) apply_avx2(mat, rows, cols, in, out);
    else apply_base(mat, rows, cols, in, out);
}
#else
#define apply apply_base
#endif
#undef SIZE
#undef APPLY_SIZES

struct wino_job {
    const struct ocd_conv_problem *p;
    const struct ocd_conv_wino_plan *plan;
    float *u, *v, *m;
    int64_t blocks; /* lane blocks per row of the stage */
};

static inline float load(const struct ocd_tensor_view *v, const void *base, int64_t off)
{
    return v->dtype == CUDNN_DATA_FLOAT ? ((const float *)base)[off] : (float)ocd_host_load(v->dtype, base, off);
}

static int64_t blocks_of(int64_t n)
{
    return (n + LANES - 1) / LANES;
}

/* Image, tile row and tile column of tile index t. */
static void tile_of(const struct ocd_conv_wino_plan *plan, int64_t t, int64_t *n, int64_t *ty, int64_t *tx)
{
    *tx = t % plan->tiles[1];
    *ty = t / plan->tiles[1] % plan->tiles[0];
    *n = t / (plan->tiles[0] * plan->tiles[1]);
}

/* Writes lanes [0, live) of each of the `count` transformed positions to dst + xi * xi_stride. */
static void scatter(const lanes_t *vals, int count, int live, float *dst, int64_t xi_stride)
{
    for (int xi = 0; xi < count; xi++) memcpy(dst + xi * xi_stride, &vals[xi], sizeof(float) * (size_t)live);
}

/* ---- the input role: V[xi][ch][t] = B^T d B ----------------------------------------------------- */

static void input_range(void *ctx, int64_t begin, int64_t end)
{
    const struct wino_job *j = ctx;
    const struct ocd_conv_problem *p = j->p;
    const struct ocd_conv_wino_plan *plan = j->plan;
    const bool dgrad = p->dir == OCD_CONV_BWD_DATA;
    const struct ocd_tensor_view *v = dgrad ? &p->y : &p->x;
    const void *base = dgrad ? p->y_data : p->x_data;
    const int64_t *lim = dgrad ? p->s.out : p->s.in;
    const int alpha = plan->alpha;
    lanes_t in[SQ], out[SQ];
    for (int64_t e = begin; e < end; e++) {
        int64_t ch = e / j->blocks, t0 = e % j->blocks * LANES;
        int live = (int)OCD_MIN(LANES, plan->ntiles - t0);
        memset(in, 0, sizeof in);
        for (int l = 0; l < live; l++) {
            int64_t n, ty, tx;
            tile_of(plan, t0 + l, &n, &ty, &tx);
            int64_t y0 = ty * plan->step - plan->shift[0], x0 = tx * plan->step - plan->shift[1];
            int64_t off = n * v->strides[0] + ch * v->strides[1];
            for (int a = 0; a < alpha; a++) {
                if ((uint64_t)(y0 + a) >= (uint64_t)lim[0]) continue;
                for (int b = 0; b < alpha; b++)
                    if ((uint64_t)(x0 + b) < (uint64_t)lim[1])
                        LANE(in[a * alpha + b], l) = load(v, base, off + (y0 + a) * v->strides[2] + (x0 + b) * v->strides[3]);
            }
        }
        apply(plan->bt, alpha, alpha, in, out);
        scatter(out, alpha * alpha, live, j->v + ch * plan->ntiles + t0, plan->in_ch * plan->ntiles);
    }
}

/* ---- the filter role: U = G g G^T ----------------------------------------------------------------- */

/* Forward and backward data: U[xi][o][i] from w, lanes over the reduction channel i. */
static void filter_range(void *ctx, int64_t begin, int64_t end)
{
    const struct wino_job *j = ctx;
    const struct ocd_conv_problem *p = j->p;
    const struct ocd_conv_wino_plan *plan = j->plan;
    const struct ocd_conv_shape *s = &p->s;
    const int64_t ig = plan->in_ch / s->groups, og = plan->out_ch / s->groups;
    const int r = plan->r, alpha = plan->alpha;
    lanes_t in[SQ], out[SQ];
    for (int64_t e = begin; e < end; e++) {
        int64_t o = e / j->blocks, i0 = e % j->blocks * LANES;
        int live = (int)OCD_MIN(LANES, ig - i0);
        memset(in, 0, sizeof in);
        for (int l = 0; l < live; l++) {
            /* forward: w[o][i]; backward data: w[g*K/G + i][o - g*C/G] */
            int64_t k = o, c = i0 + l;
            if (p->dir == OCD_CONV_BWD_DATA) k = o / og * ig + i0 + l, c = o % og;
            int64_t off = k * p->w.strides[0] + c * p->w.strides[1];
            for (int a = 0; a < r; a++)
                for (int b = 0; b < r; b++) {
                    int64_t fa = plan->rotate ? r - 1 - a : a, fb = plan->rotate ? r - 1 - b : b;
                    LANE(in[a * r + b], l) = load(&p->w, p->w_data, off + fa * p->w.strides[2] + fb * p->w.strides[3]);
                }
        }
        apply(plan->g, alpha, r, in, out);
        scatter(out, alpha * alpha, live, j->u + o * ig + i0, plan->out_ch * ig);
    }
}

/* Filter gradient: U[xi][k][t] from the r x r tiles of dy, lanes over t. */
static void dy_range(void *ctx, int64_t begin, int64_t end)
{
    const struct wino_job *j = ctx;
    const struct ocd_conv_problem *p = j->p;
    const struct ocd_conv_wino_plan *plan = j->plan;
    const int r = plan->r, alpha = plan->alpha;
    lanes_t in[SQ], out[SQ];
    for (int64_t e = begin; e < end; e++) {
        int64_t k = e / j->blocks, t0 = e % j->blocks * LANES;
        int live = (int)OCD_MIN(LANES, plan->ntiles - t0);
        memset(in, 0, sizeof in);
        for (int l = 0; l < live; l++) {
            int64_t n, ty, tx;
            tile_of(plan, t0 + l, &n, &ty, &tx);
            int64_t off = n * p->y.strides[0] + k * p->y.strides[1];
            for (int a = 0; a < r; a++) {
                if (ty * r + a >= p->s.out[0]) break;
                for (int b = 0; b < r && tx * r + b < p->s.out[1]; b++)
                    LANE(in[a * r + b], l) = load(&p->y, p->y_data, off + (ty * r + a) * p->y.strides[2] + (tx * r + b) * p->y.strides[3]);
            }
        }
        apply(plan->g, alpha, r, in, out);
        scatter(out, alpha * alpha, live, j->u + k * plan->ntiles + t0, p->s.k * plan->ntiles);
    }
}

/* ---- the output role: A^T M A ------------------------------------------------------------------ */

/* Gathers lanes [0, live) of every transformed position from src + xi * xi_stride. */
static void gather(lanes_t *vals, int count, int live, const float *src, int64_t xi_stride)
{
    for (int xi = 0; xi < count; xi++) {
        memset(&vals[xi], 0, sizeof vals[xi]);
        memcpy(&vals[xi], src + xi * xi_stride, sizeof(float) * (size_t)live);
    }
}

/* Forward and backward data: m x m output tiles from M[xi][o][t], lanes over t. */
static void output_range(void *ctx, int64_t begin, int64_t end)
{
    const struct wino_job *j = ctx;
    const struct ocd_conv_problem *p = j->p;
    const struct ocd_conv_wino_plan *plan = j->plan;
    const struct ocd_tensor_view *v = ocd_conv_dst_view(p);
    const int64_t *lim = p->dir == OCD_CONV_FWD ? p->s.out : p->s.in;
    const int m = plan->m, alpha = plan->alpha;
    /* float data without beta or the fused epilogue: stored here, else by the convolution store */
    void *dst = p->dir == OCD_CONV_FWD ? p->y_data : p->x_data;
    const bool plain = v->dtype == CUDNN_DATA_FLOAT && !p->ep.on && p->beta == 0;
    const float alpha_f = (float)p->alpha;
    lanes_t in[SQ], out[SQ];
    for (int64_t e = begin; e < end; e++) {
        int64_t o = e / j->blocks, t0 = e % j->blocks * LANES;
        int live = (int)OCD_MIN(LANES, plan->ntiles - t0);
        gather(in, alpha * alpha, live, j->m + o * plan->ntiles + t0, plan->out_ch * plan->ntiles);
        apply(plan->at, m, alpha, in, out);
        for (int l = 0; l < live; l++) {
            int64_t n, ty, tx;
            tile_of(plan, t0 + l, &n, &ty, &tx);
            int64_t off = n * v->strides[0] + o * v->strides[1];
            for (int a = 0; a < m && ty * m + a < lim[0]; a++)
                for (int b = 0; b < m && tx * m + b < lim[1]; b++) {
                    int64_t at = off + (ty * m + a) * v->strides[2] + (tx * m + b) * v->strides[3];
                    if (plain) ((float *)dst)[at] = alpha_f * LANE(out[a * m + b], l);
                    else ocd_host_conv_store(p, at, o, LANE(out[a * m + b], l));
                }
        }
    }
}

/* Filter gradient: the R x R filters from M[xi][k][c], lanes over c. */
static void dw_range(void *ctx, int64_t begin, int64_t end)
{
    const struct wino_job *j = ctx;
    const struct ocd_conv_problem *p = j->p;
    const struct ocd_conv_wino_plan *plan = j->plan;
    const int64_t cg = p->s.c / p->s.groups;
    const int m = plan->m, alpha = plan->alpha;
    lanes_t in[SQ], out[SQ];
    for (int64_t e = begin; e < end; e++) {
        int64_t k = e / j->blocks, c0 = e % j->blocks * LANES;
        int live = (int)OCD_MIN(LANES, cg - c0);
        gather(in, alpha * alpha, live, j->m + k * cg + c0, p->s.k * cg);
        apply(plan->at, m, alpha, in, out);
        for (int l = 0; l < live; l++) {
            int64_t off = k * p->w.strides[0] + (c0 + l) * p->w.strides[1];
            for (int a = 0; a < m; a++)
                for (int b = 0; b < m; b++) {
                    int64_t fa = p->s.flip ? m - 1 - a : a, fb = p->s.flip ? m - 1 - b : b;
                    ocd_host_conv_store(p, off + fa * p->w.strides[2] + fb * p->w.strides[3], 0, LANE(out[a * m + b], l));
                }
        }
    }
}

/* ---- the products ------------------------------------------------------------------------------- */

/* A packed row-major float view of dims d. */
static struct ocd_tensor_view packed_view(const int64_t d[4])
{
    struct ocd_tensor_view v;
    memset(&v, 0, sizeof v);
    v.dtype = CUDNN_DATA_FLOAT;
    v.rank = 4;
    v.vect = 1;
    int64_t stride = 1;
    for (int i = 3; i >= 0; i--) {
        v.dims[i] = d[i];
        v.strides[i] = stride;
        stride *= d[i];
    }
    return v;
}

/* The batched GEMM of the plan on the packed engine (conv_gemm.c), posed as the grouped 1x1
   convolution it is, one group per batch entry b, over a 1 x T plane:
     forward, backward data: M_b = U_b * V_b is the forward convolution of x = V (channels
       b * gk + i, rows of T), filter U (gm x gk per group) into y = M;
     backward filter: M_b = U_b * V_b^T is the filter gradient of x = V (b * cg + c) and dy = U
       (b * kg + k) into dw = M (kg x cg per group).
   The views match the workspace layouts of problem/conv_winograd.h exactly, so the engine reads and
   writes U, V and M in place; alpha 1, beta 0 take its plain store. */
static cudnnStatus_t products(const struct ocd_conv_wino_plan *plan, const struct wino_job *j, bool dw)
{
    struct ocd_conv_problem q;
    memset(&q, 0, sizeof q);
    struct ocd_conv_shape *s = &q.s;
    const int64_t b = plan->batch, t = plan->ntiles;
    q.dir = dw ? OCD_CONV_BWD_FILTER : OCD_CONV_FWD;
    s->nsp = 2, s->n = 1, s->groups = b;
    s->c = b * (dw ? plan->gn : plan->gk), s->k = b * plan->gm;
    s->in[0] = s->out[0] = 1, s->in[1] = s->out[1] = t;
    s->filt[0] = s->filt[1] = 1;
    for (int d = 0; d < 2; d++) s->stride[d] = s->dilation[d] = 1;
    const int64_t xd[4] = {1, s->c, 1, t}, yd[4] = {1, s->k, 1, t}, wd[4] = {s->k, s->c / b, 1, 1};
    q.x = packed_view(xd), q.y = packed_view(yd), q.w = packed_view(wd);
    q.w_format = CUDNN_TENSOR_NCHW;
    q.x_data = j->v;
    q.y_data = dw ? (void *)j->u : j->m;
    q.w_data = dw ? (void *)j->m : j->u;
    q.compute = CUDNN_DATA_FLOAT;
    q.math = CUDNN_FMA_MATH;
    q.alpha = 1;
    return ocd_host_conv_gemm_implicit(&q);
}

/* ---- the entries ---------------------------------------------------------------------------------- */

static const char *plan_fused(cudnnHandle_t handle, const void *problem, void *plan)
{
    return ocd_conv_wino_plan_init(plan, problem, false);
}

static const char *plan_nonfused(cudnnHandle_t handle, const void *problem, void *plan)
{
    return ocd_conv_wino_plan_init(plan, problem, true);
}

static size_t workspace(cudnnHandle_t handle, const void *problem, const void *plan)
{
    return ocd_conv_wino_workspace(plan);
}

static cudnnStatus_t run(cudnnHandle_t handle, const void *problem, const void *planned, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = problem;
    const struct ocd_conv_wino_plan *plan = planned;
    float *base = ws;
    struct wino_job j = {p, plan, base, base + ocd_conv_wino_v_offset(plan), base + ocd_conv_wino_m_offset(plan), 0};
    const struct ocd_conv_shape *s = &p->s;
    if (p->dir == OCD_CONV_BWD_FILTER) {
        j.blocks = blocks_of(plan->ntiles);
        ocd_parallel_for(s->k * j.blocks, 1, dy_range, &j);
    } else {
        j.blocks = blocks_of(plan->in_ch / s->groups);
        ocd_parallel_for(plan->out_ch * j.blocks, 1, filter_range, &j);
    }
    j.blocks = blocks_of(plan->ntiles);
    ocd_parallel_for(plan->in_ch * j.blocks, 1, input_range, &j);
    cudnnStatus_t st = products(plan, &j, p->dir == OCD_CONV_BWD_FILTER);
    if (st != CUDNN_STATUS_SUCCESS) return st;
    if (p->dir == OCD_CONV_BWD_FILTER) {
        j.blocks = blocks_of(s->c / s->groups);
        ocd_parallel_for(s->k * j.blocks, 1, dw_range, &j);
    } else {
        ocd_parallel_for(plan->out_ch * j.blocks, 1, output_range, &j);
    }
    return CUDNN_STATUS_SUCCESS;
}

OCD_IMPL_PLAN_FITS(struct ocd_conv_wino_plan);
const struct ocd_impl_planned ocd_host_conv_winograd_planned = {plan_fused, workspace, run};
const struct ocd_impl_planned ocd_host_conv_winograd_nonfused_planned = {plan_nonfused, workspace, run};
