/* lrn.c (host): the reference implementation of cross-channel LRN, forward and backward (the
   formulas are in problem/lrn.h). Threads take ranges of columns (one image, one spatial position,
   all channels); every window sum is recomputed from x, in double, so that no buffer is needed
   whatever the channel count: O(n) loads per forward output, O(n^2) per backward output. */
#include "problem/lrn.h"

#include "host/parallel.h"
#include "host/typed.h"

/* Offset of channel 0 of column col (image col / spatial, position col % spatial). */
static int64_t column_offset(const struct ocd_tensor_view *v, int64_t col, int64_t spatial)
{
    int64_t s = col % spatial, off = (col / spatial) * v->strides[0];
    for (int d = v->rank - 1; d >= 2; d--) {
        off += (s % v->dims[d]) * v->strides[d];
        s /= v->dims[d];
    }
    return off;
}

struct column {
    const struct ocd_lrn_problem *p;
    const char *x; /* channel 0 of the column's x, in bytes */
    int64_t cstride;
    int64_t channels;
    int behind, ahead;
};

static double load_x(const struct column *k, int64_t c)
{
    return ocd_host_load(k->p->dtype, k->x, c * k->cstride);
}

/* s(c) = k + alpha/n * sum of x^2 over the window of c. */
static double window_s(const struct column *k, int64_t c)
{
    double sum = 0;
    for (int64_t j = OCD_MAX(0, c - k->behind); j <= OCD_MIN(k->channels - 1, c + k->ahead); j++) {
        double v = load_x(k, j);
        sum += v * v;
    }
    return k->p->lrn_k + k->p->lrn_alpha / k->p->n * sum;
}

static void columns(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_lrn_problem *p = ctx;
    size_t es = ocd_dtype_scalar_size(p->dtype);
    int64_t spatial = 1;
    for (int d = 2; d < p->x.rank; d++) spatial *= p->x.dims[d];
    struct column k = {.p = p, .cstride = p->x.strides[1], .channels = p->x.dims[1]};
    ocd_lrn_window(p->n, &k.behind, &k.ahead);
    const struct ocd_tensor_view *out = p->backward ? &p->dx : &p->y;
    void *out_ptr = p->backward ? p->dx_ptr : p->y_ptr;
    for (int64_t col = begin; col < end; col++) {
        k.x = (const char *)p->x_ptr + column_offset(&p->x, col, spatial) * (int64_t)es;
        int64_t o0 = column_offset(out, col, spatial), dy0 = p->backward ? column_offset(&p->dy, col, spatial) : 0;
        for (int64_t c = 0; c < k.channels; c++) {
            double r, x = load_x(&k, c);
            if (!p->backward) {
                r = x * pow(window_s(&k, c), -p->lrn_beta);
            } else {
                double sum = 0;
                for (int64_t j = OCD_MAX(0, c - k.ahead); j <= OCD_MIN(k.channels - 1, c + k.behind); j++)
                    sum += ocd_host_load(p->dtype, p->dy_ptr, dy0 + j * p->dy.strides[1]) * load_x(&k, j) *
                           pow(window_s(&k, j), -p->lrn_beta - 1);
                r = ocd_host_load(p->dtype, p->dy_ptr, dy0 + c * p->dy.strides[1]) * pow(window_s(&k, c), -p->lrn_beta) -
                    2 * p->lrn_alpha * p->lrn_beta / p->n * x * sum;
            }
            ocd_host_blend(p->dtype, out_ptr, o0 + c * out->strides[1], p->alpha, p->beta, r);
        }
    }
}

cudnnStatus_t ocd_host_lrn(cudnnHandle_t handle, const void *problem, void *workspace, size_t workspace_bytes)
{
    (void)handle;
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_lrn_problem *p = problem;
    int64_t cols = ocd_view_count(&p->x) / p->x.dims[1];
    ocd_parallel_for(cols, OCD_MAX(1, 4096 / p->x.dims[1]), columns, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}
