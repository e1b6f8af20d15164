/* activation.c (host): activation forward and backward, run by run over the dim group on the
   worker threads, computed in double with the shared math of problem/activation.h. */
#include "problem/activation.h"

#include "core/dtype.h"
#include "host/walk.h"

static void activation_run(void *ctx, const struct ocd_host_run *run)
{
    const struct ocd_activation_problem *p = ctx;
    const struct ocd_activation_params *a = &p->act;
    bool nan = a->nan_opt == CUDNN_PROPAGATE_NAN;
    size_t size = ocd_dtype_scalar_size(p->io.dtype);
    double v[OCD_HOST_RUN_MAX], dy[OCD_HOST_RUN_MAX], r[OCD_HOST_RUN_MAX];
    ocd_host_load_run(p->io.dtype, (const char *)p->io.src[0] + run->off[0] * (int64_t)size, run->stride[0], run->len, v);
    if (p->backward) {
        ocd_host_load_run(p->io.dtype, (const char *)p->io.src[1] + run->off[1] * (int64_t)size, run->stride[1], run->len, dy);
        for (int64_t i = 0; i < run->len; i++)
            r[i] = ocd_act_backward(a->mode, nan, a->coef, a->swish_beta, v[i], dy[i]);
    } else {
        for (int64_t i = 0; i < run->len; i++) r[i] = ocd_act_forward(a->mode, nan, a->coef, a->swish_beta, v[i]);
    }
    int d = p->io.nsrc;
    ocd_host_blend_run(p->io.dtype, (char *)p->io.dst + run->off[d] * (int64_t)size, run->stride[d], run->len, r,
                       p->io.alpha, p->io.beta);
}

cudnnStatus_t ocd_host_activation(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    ocd_host_walk(&((const struct ocd_activation_problem *)problem)->g, activation_run, (void *)problem);
    return CUDNN_STATUS_SUCCESS;
}
