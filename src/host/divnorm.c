/* divnorm.c (host): the reference implementation of divisive normalization, in the three passes
   of problem/divnorm.h, each a parallel loop over the elements. Every tensor of the call has x's
   strides (the API checked it), so one offset serves all; a 4-D tensor is walked as a 5-D one
   with depth 1. Window sums are direct, in double: O(n^d) loads per element. */
#include "problem/divnorm.h"

#include "host/parallel.h"
#include "host/typed.h"

struct pass {
    const struct ocd_divnorm_problem *p;
    int64_t dims[5], strides[5]; /* N C D H W */
    int behind, ahead;
    double scale; /* lrnAlpha / n^d */
    int step;     /* 1, 2, 3 */
};

static void coords(const struct pass *k, int64_t i, int64_t c[5])
{
    for (int d = 4; d >= 0; d--) {
        c[d] = i % k->dims[d];
        i /= k->dims[d];
    }
}

static int64_t offset(const struct pass *k, const int64_t c[5])
{
    int64_t off = 0;
    for (int d = 0; d < 5; d++) off += c[d] * k->strides[d];
    return off;
}

static double load(const struct pass *k, const void *base, int64_t off)
{
    return ocd_host_load(k->p->dtype, base, off);
}

/* Sums f over the spatial window of p: [p - lo, p + hi] in each spatial dimension, in bounds. */
#define WINDOW_SUM(k, c, lo, hi, sum, off, expr)                                                 \
    do {                                                                                         \
        int64_t q_[5] = {(c)[0], (c)[1], 0, 0, 0};                                              \
        for (q_[2] = OCD_MAX(0, (c)[2] - (lo)); q_[2] <= OCD_MIN((k)->dims[2] - 1, (c)[2] + (hi)); q_[2]++)  \
            for (q_[3] = OCD_MAX(0, (c)[3] - (lo)); q_[3] <= OCD_MIN((k)->dims[3] - 1, (c)[3] + (hi)); q_[3]++) \
                for (q_[4] = OCD_MAX(0, (c)[4] - (lo)); q_[4] <= OCD_MIN((k)->dims[4] - 1, (c)[4] + (hi)); q_[4]++) { \
                    int64_t off = offset((k), q_);                                               \
                    (sum) += (expr);                                                             \
                }                                                                                \
    } while (0)

/* s at the element with coordinates c, from temp = u. */
static double s_at(const struct pass *k, const int64_t c[5])
{
    double sum = 0;
    WINDOW_SUM(k, c, k->behind, k->ahead, sum, off, load(k, k->p->temp, off) * load(k, k->p->temp, off));
    return k->p->lrn_k + k->scale * sum;
}

static void elements(void *ctx, int64_t begin, int64_t end)
{
    const struct pass *k = ctx;
    const struct ocd_divnorm_problem *p = k->p;
    for (int64_t i = begin; i < end; i++) {
        int64_t c[5];
        coords(k, i, c);
        int64_t off = offset(k, c);
        if (k->step == 1) {
            double u = load(k, p->x_ptr, off) - (p->means ? load(k, p->means, off) : 0);
            ocd_host_store(p->dtype, p->temp, off, u);
        } else if (k->step == 2) {
            double s = s_at(k, c);
            double v = p->backward ? load(k, p->dy_ptr, off) * load(k, p->temp, off) * pow(s, -p->lrn_beta - 1) : s;
            ocd_host_store(p->dtype, p->temp2, off, v);
        } else if (!p->backward) {
            double r = load(k, p->temp, off) * pow(load(k, p->temp2, off), -p->lrn_beta);
            ocd_host_blend(p->dtype, p->out_ptr, off, p->alpha, p->beta, r);
        } else {
            double sum = 0;
            WINDOW_SUM(k, c, k->ahead, k->behind, sum, q, load(k, p->temp2, q));
            double g = load(k, p->dy_ptr, off) * pow(s_at(k, c), -p->lrn_beta) -
                       2 * p->lrn_beta * k->scale * load(k, p->temp, off) * sum;
            ocd_host_blend(p->dtype, p->out_ptr, off, p->alpha, p->beta, g);
            if (p->dmeans) ocd_host_blend(p->dtype, p->dmeans, off, p->alpha, p->beta, -g);
        }
    }
}

cudnnStatus_t ocd_host_divnorm(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes)
{
    (void)handle;
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_divnorm_problem *p = problem;
    struct pass k = {.p = p};
    int spatial = p->x.rank - 2;
    for (int d = 0; d < 5; d++) {
        int src = d < 2 ? d : d - (5 - p->x.rank); /* 4-D: depth is the missing dimension */
        bool present = d < 2 || src >= 2;
        k.dims[d] = present ? p->x.dims[src] : 1;
        k.strides[d] = present ? p->x.strides[src] : 0;
    }
    ocd_lrn_window(p->n, &k.behind, &k.ahead);
    k.scale = p->lrn_alpha / pow((double)p->n, spatial);
    int64_t total = ocd_view_count(&p->x);
    for (k.step = 1; k.step <= 3; k.step++) ocd_parallel_for(total, 1024, elements, &k);
    return CUDNN_STATUS_SUCCESS;
}
