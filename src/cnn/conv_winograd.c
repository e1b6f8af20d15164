/* conv_winograd.c: the Winograd plan (see conv_winograd.h): tile choice, roles, GEMM shapes,
   workspace, and the transform matrices.

   The matrices, by the Toom-Cook construction. The correlation y_j = sum_k g_k d_(j+k) (j < m,
   k < r, d of length alpha = m + r - 1) is the transpose of the linear convolution s = h * g of
   a length-m h with g: s = T(g) h with the alpha x m Toeplitz matrix T(g)[l][j] = g_(l-j), and
   y = T(g)^T d. Compute s by evaluation and interpolation at alpha - 1 finite points a_i and at
   infinity: with A[i][j] = a_i^j (A's infinity row picks the leading coefficient h_(m-1)) and
   G[i][k] = a_i^k / f_i, f_i = prod_(j != i) (a_i - a_j) (infinity row: g_(r-1)),
     s(x) = s_(alpha-1) M(x) + sum_i h(a_i) g(a_i) / f_i * N_i(x),
     M(x) = prod_j (x - a_j),   N_i(x) = prod_(j != i) (x - a_j),
   because s - s_(alpha-1) M has degree alpha - 2 and takes the value h(a_i) g(a_i) at each a_i
   (where M vanishes), which is what the Lagrange term interpolates. Writing C for the alpha x
   alpha matrix whose column i holds the coefficients of N_i (power = row) and whose last column
   holds those of M, s = C [(A h) (.) (G g)], so T(g) = C diag(G g) A and
     y = A^T [ (G g) (.) (C^T d) ],   that is  B^T = C^T:  B^T[i][l] = coefficient l of N_i (or M).
   Nesting the 1-D algorithm in both dims gives the 2-D form of conv_winograd.h.

   Worked example, F(2, 3) on the points 0, 1, -1 (f = -1, 2, 2):
     A^T = | 1 1  1 0 |    G = | -1    0    0   |    B^T = | -1  0 1 0 |   N_0 = x^2 - 1
           | 0 1 -1 1 |        | 1/2  1/2  1/2  |          |  0  1 1 0 |   N_1 = x^2 + x
                               | 1/2 -1/2  1/2  |          |  0 -1 1 0 |   N_2 = x^2 - x
                               |  0    0    1   |          |  0 -1 0 1 |   M   = x^3 - x
   (the textbook F(2, 3) up to the signs of row 0 of G and B^T and of the infinity column).
   For alpha 6 the points are 0, 1, -1, 1/2, -2: against 0, +-1, +-2 this halves the fp32 error
   of F(4x4, 3x3) (measured on 64 channels: 2.3e-6 of the largest output against 4.6e-6; the
   references of tests/conv_winograd.c); every entry of G and B^T stays at most 5/2 in magnitude. */
#include "problem/conv_winograd.h"

#include <string.h>

static const double points[OCD_WINO_MAX_ALPHA - 1] = {0, 1, -1, 0.5, -2};

/* Coefficients (power = index) of prod over the first n points except `skip` (-1: none) of
   (x - a_j). */
static void poly_of_points(int n, int skip, double coef[OCD_WINO_MAX_ALPHA])
{
    memset(coef, 0, sizeof(double) * OCD_WINO_MAX_ALPHA);
    coef[0] = 1;
    int deg = 0;
    for (int j = 0; j < n; j++) {
        if (j == skip) continue;
        for (int l = deg + 1; l > 0; l--) coef[l] = coef[l - 1] - points[j] * coef[l];
        coef[0] = -points[j] * coef[0];
        deg++;
    }
}

static void derive_matrices(struct ocd_conv_wino_plan *plan)
{
    const int m = plan->m, r = plan->r, alpha = plan->alpha, fin = alpha - 1;
    memset(plan->at, 0, sizeof plan->at);
    memset(plan->g, 0, sizeof plan->g);
    memset(plan->bt, 0, sizeof plan->bt);
    for (int i = 0; i < fin; i++) {
        double f = 1, pw = 1, coef[OCD_WINO_MAX_ALPHA];
        for (int j = 0; j < fin; j++)
            if (j != i) f *= points[i] - points[j];
        for (int j = 0; j < m; j++, pw *= points[i]) plan->at[j * alpha + i] = (float)pw;
        pw = 1;
        for (int k = 0; k < r; k++, pw *= points[i]) plan->g[i * r + k] = (float)(pw / f);
        poly_of_points(fin, i, coef);
        for (int l = 0; l < alpha; l++) plan->bt[i * alpha + l] = (float)coef[l];
    }
    double coef[OCD_WINO_MAX_ALPHA];
    poly_of_points(fin, -1, coef);
    for (int l = 0; l < alpha; l++) plan->bt[fin * alpha + l] = (float)coef[l];
    plan->at[(m - 1) * alpha + fin] = 1;
    plan->g[fin * r + r - 1] = 1;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

const char *ocd_conv_wino_plan_init(struct ocd_conv_wino_plan *plan, const struct ocd_conv_problem *p, bool nonfused)
{
    const struct ocd_conv_shape *s = &p->s;
    memset(plan, 0, sizeof *plan);
    if (s->nsp != 2 || s->filt[0] != s->filt[1] || (s->filt[0] != 3 && s->filt[0] != 5))
        return "the Winograd entries run 3x3 and 5x5 2-D filters only";
    const int f = (int)s->filt[0];
    const int64_t cg = s->c / s->groups, kg = s->k / s->groups;
    /* the tiled plane: the output role's for forward and backward data, dy's for dw */
    const int64_t *plane = p->dir == OCD_CONV_BWD_DATA ? s->in : s->out;
    if (p->dir == OCD_CONV_BWD_FILTER) {
        plan->m = f, plan->r = 2;
        plan->step = plan->r;
    } else {
        plan->m = f == 3 && nonfused ? 4 : 2, plan->r = f;
        plan->step = plan->m;
    }
    plan->alpha = plan->m + plan->r - 1;
    for (int d = 0; d < 2; d++) {
        plan->tiles[d] = ceil_div(plane[d], plan->step);
        plan->shift[d] = p->dir == OCD_CONV_BWD_DATA ? f - 1 - s->pad[d] : s->pad[d];
    }
    plan->ntiles = s->n * plan->tiles[0] * plan->tiles[1];
    plan->rotate = (p->dir == OCD_CONV_BWD_DATA) != s->flip;
    plan->in_ch = p->dir == OCD_CONV_BWD_DATA ? s->k : s->c;
    plan->out_ch = p->dir == OCD_CONV_BWD_DATA ? s->c : s->k;
    const int64_t xi = (int64_t)plan->alpha * plan->alpha, t = plan->ntiles;
    plan->batch = xi * s->groups;
    if (p->dir == OCD_CONV_BWD_FILTER) {
        plan->gm = kg, plan->gn = cg, plan->gk = t;
        plan->trans_b = true;
        plan->lda = t, plan->ldb = t, plan->ldc = cg;
        plan->stride_a = kg * t, plan->stride_b = cg * t, plan->stride_c = kg * cg;
        plan->u_elems = xi * s->k * t, plan->v_elems = xi * s->c * t, plan->m_elems = xi * s->k * cg;
    } else {
        const int64_t og = plan->out_ch / s->groups, ig = plan->in_ch / s->groups;
        plan->gm = og, plan->gn = t, plan->gk = ig;
        plan->lda = ig, plan->ldb = t, plan->ldc = t;
        plan->stride_a = og * ig, plan->stride_b = ig * t, plan->stride_c = og * t;
        plan->u_elems = xi * plan->out_ch * ig, plan->v_elems = xi * plan->in_ch * t;
        plan->m_elems = xi * plan->out_ch * t;
    }
    derive_matrices(plan);
    return NULL;
}

static int64_t aligned(int64_t floats)
{
    return (floats + 63) / 64 * 64;
}

int64_t ocd_conv_wino_v_offset(const struct ocd_conv_wino_plan *plan)
{
    return aligned(plan->u_elems);
}

int64_t ocd_conv_wino_m_offset(const struct ocd_conv_wino_plan *plan)
{
    return aligned(plan->u_elems) + aligned(plan->v_elems);
}

size_t ocd_conv_wino_workspace(const struct ocd_conv_wino_plan *plan)
{
    return (size_t)(ocd_conv_wino_m_offset(plan) + aligned(plan->m_elems)) * sizeof(float);
}
