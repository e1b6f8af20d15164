/* conv_direct.c: the host reference convolution (all directions, every type and layout), Im2Col
   and the bias gradient.

   Main decision: one output element per iteration, accumulated in double straight from the
   formulas of the cuDNN documentation (cross-correlation; CONVOLUTION mirrors the filter), so
   the code reads as the specification: it is the last entry of every host table and the second
   opinion for faster entries. Iterations run in parallel over output elements. */
#include "host/conv.h"

#include "host/parallel.h"
#include "host/typed.h"

#include <string.h>

void ocd_host_conv_store(const struct ocd_conv_problem *p, int64_t off, int64_t channel, double acc)
{
    const struct ocd_tensor_view *v = ocd_conv_dst_view(p);
    void *dst = p->dir == OCD_CONV_FWD ? p->y_data : p->dir == OCD_CONV_BWD_DATA ? p->x_data : p->w_data;
    double r = p->alpha * acc;
    if (p->ep.on) {
        const struct ocd_conv_epilogue *ep = &p->ep;
        int64_t cidx[OCD_MAX_DIMS] = {0};
        cidx[1] = channel;
        const struct ocd_tensor_view *sv = &ep->scale_view, *bv = &ep->bias_view;
        const double s = ep->scale_on ? ocd_host_load(sv->dtype, ep->scale, ocd_view_offset_of(sv, cidx)) : 1;
        r *= s;
        if (ep->z != NULL) r += (ep->scale_z ? s : 1) * ep->alpha2 * ocd_host_load(v->dtype, ep->z, off);
        r += (ep->scale_bias ? s : 1) * ocd_host_load(bv->dtype, ep->bias, ocd_view_offset_of(bv, cidx));
        if (ep->act_on) r = ocd_pw_apply(&ep->act, r, 0);
        else if (ep->relu && r < 0) r = 0;
    } else if (p->beta != 0) {
        r += p->beta * ocd_host_load(v->dtype, dst, off);
    }
    if (p->relu_grad && !(ocd_host_load(v->dtype, p->relu_x, off) > 0)) r = 0;
    ocd_host_store(v->dtype, dst, off, r);
}

/* Coordinates (n or k, c, spatial...) of element `linear` of a view, and its scalar offset. */
static int64_t element(const struct ocd_tensor_view *v, int64_t linear, int64_t idx[])
{
    ocd_view_coords(v, linear, idx);
    return ocd_view_offset_of(v, idx);
}

/* Spatial filter index stored for tap r of dim d: mirrored in CONVOLUTION mode. */
static int64_t tap(const struct ocd_conv_shape *s, int d, int64_t r)
{
    return s->flip ? s->filt[d] - 1 - r : r;
}

/* Advances a spatial counter over extents ext[0..n-1]; false when it wrapped around. */
static bool next_index(int n, const int64_t ext[], int64_t idx[])
{
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < ext[d]) return true;
        idx[d] = 0;
    }
    return false;
}

static void fwd_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_conv_problem *p = ctx;
    const struct ocd_conv_shape *s = &p->s;
    int64_t cg = s->c / s->groups, kg = s->k / s->groups;
    for (int64_t e = begin; e < end; e++) {
        int64_t yi[OCD_MAX_DIMS] = {0}, xi[OCD_MAX_DIMS] = {0}, wi[OCD_MAX_DIMS] = {0};
        int64_t off = element(&p->y, e, yi);
        int64_t g = yi[1] / kg;
        double acc = 0;
        xi[0] = yi[0];
        wi[0] = yi[1];
        for (int64_t c = 0; c < cg; c++) {
            xi[1] = g * cg + c;
            wi[1] = c;
            int64_t r[OCD_CONV_MAX_SPATIAL] = {0};
            do {
                bool inside = true;
                for (int d = 0; d < s->nsp; d++) {
                    xi[d + 2] = yi[d + 2] * s->stride[d] - s->pad[d] + r[d] * s->dilation[d];
                    inside &= xi[d + 2] >= 0 && xi[d + 2] < s->in[d];
                    wi[d + 2] = tap(s, d, r[d]);
                }
                if (inside)
                    acc += ocd_host_load(p->x.dtype, p->x_data, ocd_view_offset_of(&p->x, xi)) *
                           ocd_host_load(p->w.dtype, p->w_data, ocd_view_offset_of(&p->w, wi));
            } while (next_index(s->nsp, s->filt, r));
        }
        ocd_host_conv_store(p, off, yi[1], acc);
    }
}

static void bwd_data_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_conv_problem *p = ctx;
    const struct ocd_conv_shape *s = &p->s;
    int64_t cg = s->c / s->groups, kg = s->k / s->groups;
    for (int64_t e = begin; e < end; e++) {
        int64_t xi[OCD_MAX_DIMS] = {0}, yi[OCD_MAX_DIMS] = {0}, wi[OCD_MAX_DIMS] = {0};
        int64_t off = element(&p->x, e, xi);
        int64_t g = xi[1] / cg;
        double acc = 0;
        yi[0] = xi[0];
        wi[1] = xi[1] - g * cg;
        for (int64_t k = 0; k < kg; k++) {
            yi[1] = g * kg + k;
            wi[0] = g * kg + k;
            int64_t r[OCD_CONV_MAX_SPATIAL] = {0};
            do {
                bool inside = true;
                for (int d = 0; d < s->nsp; d++) {
                    /* x position i meets output o at tap r when o * stride - pad + r * dilation == i */
                    int64_t t = xi[d + 2] + s->pad[d] - r[d] * s->dilation[d];
                    inside &= t >= 0 && t % s->stride[d] == 0 && t / s->stride[d] < s->out[d];
                    yi[d + 2] = t / s->stride[d];
                    wi[d + 2] = tap(s, d, r[d]);
                }
                if (inside)
                    acc += ocd_host_load(p->y.dtype, p->y_data, ocd_view_offset_of(&p->y, yi)) *
                           ocd_host_load(p->w.dtype, p->w_data, ocd_view_offset_of(&p->w, wi));
            } while (next_index(s->nsp, s->filt, r));
        }
        ocd_host_conv_store(p, off, xi[1], acc);
    }
}

static void bwd_filter_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_conv_problem *p = ctx;
    const struct ocd_conv_shape *s = &p->s;
    int64_t cg = s->c / s->groups, kg = s->k / s->groups;
    for (int64_t e = begin; e < end; e++) {
        int64_t wi[OCD_MAX_DIMS] = {0}, xi[OCD_MAX_DIMS] = {0}, yi[OCD_MAX_DIMS] = {0};
        int64_t off = element(&p->w, e, wi);
        int64_t g = wi[0] / kg;
        double acc = 0;
        yi[1] = wi[0];
        xi[1] = g * cg + wi[1];
        for (int64_t n = 0; n < s->n; n++) {
            xi[0] = yi[0] = n;
            int64_t o[OCD_CONV_MAX_SPATIAL] = {0};
            do {
                bool inside = true;
                for (int d = 0; d < s->nsp; d++) {
                    xi[d + 2] = o[d] * s->stride[d] - s->pad[d] + tap(s, d, wi[d + 2]) * s->dilation[d];
                    inside &= xi[d + 2] >= 0 && xi[d + 2] < s->in[d];
                    yi[d + 2] = o[d];
                }
                if (inside)
                    acc += ocd_host_load(p->y.dtype, p->y_data, ocd_view_offset_of(&p->y, yi)) *
                           ocd_host_load(p->x.dtype, p->x_data, ocd_view_offset_of(&p->x, xi));
            } while (next_index(s->nsp, s->out, o));
        }
        ocd_host_conv_store(p, off, wi[0], acc);
    }
}

cudnnStatus_t ocd_host_conv_direct(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = problem;
    static const ocd_range_fn fns[OCD_CONV_DIRS] = {fwd_range, bwd_data_range, bwd_filter_range};
    ocd_parallel_for(ocd_view_count(ocd_conv_dst_view(p)), 16, fns[p->dir], (void *)p);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- Im2Col ------------------------------------------------------------------------------------ */

static void im2col_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_conv_problem *p = ctx;
    const struct ocd_conv_shape *s = &p->s;
    int64_t cols = s->c * s->filt[0] * s->filt[1];
    for (int64_t row = begin; row < end; row++) {
        int64_t q = row % s->out[1], pp = row / s->out[1] % s->out[0], n = row / (s->out[0] * s->out[1]);
        for (int64_t col = 0; col < cols; col++) {
            int64_t sc = col % s->filt[1], r = col / s->filt[1] % s->filt[0], c = col / (s->filt[0] * s->filt[1]);
            int64_t xi[4] = {n, c, pp * s->stride[0] - s->pad[0] + tap(s, 0, r) * s->dilation[0],
                             q * s->stride[1] - s->pad[1] + tap(s, 1, sc) * s->dilation[1]};
            double v = 0;
            if (xi[2] >= 0 && xi[2] < s->in[0] && xi[3] >= 0 && xi[3] < s->in[1])
                v = ocd_host_load(p->x.dtype, p->x_data, ocd_view_offset_of(&p->x, xi));
            ocd_host_store(p->x.dtype, p->y_data, row * cols + col, v);
        }
    }
}

cudnnStatus_t ocd_host_conv_im2col(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = problem;
    ocd_parallel_for(p->s.n * p->s.out[0] * p->s.out[1], 8, im2col_range, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- bias gradient ------------------------------------------------------------------------------- */

static void bias_grad_range(void *ctx, int64_t begin, int64_t end)
{
    const struct ocd_conv_bias_problem *p = ctx;
    int64_t per_image = ocd_view_count(&p->dy) / (p->dy.dims[0] * p->dy.dims[1]);
    for (int64_t k = begin; k < end; k++) {
        int64_t idx[OCD_MAX_DIMS] = {0};
        double acc = 0, sq = 0;
        for (int64_t n = 0; n < p->dy.dims[0]; n++) {
            idx[0] = n;
            idx[1] = k;
            for (int64_t i = 0; i < per_image; i++) {
                int64_t rest = i;
                for (int d = p->dy.rank - 1; d >= 2; d--) {
                    idx[d] = rest % p->dy.dims[d];
                    rest /= p->dy.dims[d];
                }
                double v = ocd_host_load(p->dy.dtype, p->dy_data, ocd_view_offset_of(&p->dy, idx));
                acc += v;
                sq += v * v;
            }
        }
        int64_t bidx[OCD_MAX_DIMS] = {0};
        bidx[1] = k;
        int64_t off = ocd_view_offset_of(&p->db, bidx);
        double r = p->alpha * acc, r2 = p->alpha * sq;
        if (p->beta != 0) r += p->beta * ocd_host_load(p->db.dtype, p->db_data, off);
        ocd_host_store(p->db.dtype, p->db_data, off, r);
        if (p->sq_data != NULL) {
            if (p->beta != 0) r2 += p->beta * ocd_host_load(p->db.dtype, p->sq_data, off);
            ocd_host_store(p->db.dtype, p->sq_data, off, r2);
        }
    }
}

cudnnStatus_t ocd_host_conv_bias_grad(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_bias_problem *p = problem;
    ocd_parallel_for(p->dy.dims[1], 1, bias_grad_range, (void *)p);
    return CUDNN_STATUS_SUCCESS;
}
