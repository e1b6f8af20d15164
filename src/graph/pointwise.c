/* pointwise.c: normalizing a pointwise chain (problem/pointwise.h) and its implementation table:
   on CUDA one kernel (a thread per element interpreting the chain's steps), on the host a
   parallel loop doing the same. Both serve every chain; the table exists so that the walker
   logs, honours OPENCUDNN_DISABLE and picks by backend like every other op. */
#include "problem/pointwise.h"

#include "core/dimgroup.h"

#include <math.h>
#include <string.h>

static const struct ocd_impl pw_chain_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:pw_chain", OCD_BACKEND_CUDA, NULL, NULL, ocd_cuda_pw_chain),
#endif
    OCD_IMPL_ENTRY("host:pw_chain", OCD_BACKEND_HOST, NULL, NULL, ocd_host_pw_chain),
};

void ocd_pw_step_defaults(struct ocd_pw_step *s, cudnnPointwiseMode_t mode, int x, int b)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->x = x;
    s->b = ocd_pw_binary(mode) ? b : -1;
    s->alpha1 = s->alpha2 = 1;
    s->upper_clip = INFINITY;
    s->elu_alpha = s->softplus_beta = s->swish_beta = 1;
}

void ocd_pw_chain_build(struct ocd_pw_chain *c, const struct ocd_pw_chain_desc *d)
{
    memset(c, 0, sizeof *c);
    const int nops = d->noutputs + d->ninputs; /* outputs first: the first output orders the dims */
    int64_t dims[OCD_MAX_DIMS], strides[OCD_PW_MAX_OPERANDS][OCD_MAX_DIMS];
    const int rank = d->shape.rank;
    for (int k = 0; k < rank; k++) {
        dims[k] = d->shape.dims[k];
        for (int t = 0; t < nops; t++) {
            const struct ocd_tensor_view *v = t < d->noutputs ? &d->out[t] : &d->in[t - d->noutputs];
            strides[t][k] = v->dims[k] == 1 && dims[k] != 1 ? 0 : v->strides[k];
        }
    }
    int r = ocd_dims_sort_merge(rank, nops, dims, &strides[0][0], OCD_MAX_DIMS);
    if (r == 0) { /* a single element */
        r = 1;
        dims[0] = 1;
        for (int t = 0; t < nops; t++) strides[t][0] = 1;
    }
    c->rank = r;
    c->count = 1;
    for (int k = 0; k < r; k++) {
        c->dims[k] = dims[k];
        c->count *= dims[k];
    }
    c->double_compute = d->double_compute;
    c->ninputs = d->ninputs, c->nsteps = d->nsteps, c->noutputs = d->noutputs;
    for (int t = 0; t < nops; t++) {
        struct ocd_pw_operand *o = t < d->noutputs ? &c->out[t] : &c->in[t - d->noutputs];
        const struct ocd_tensor_view *v = t < d->noutputs ? &d->out[t] : &d->in[t - d->noutputs];
        o->dtype = v->dtype;
        if (v->dtype == CUDNN_DATA_DOUBLE) c->double_compute = true;
        for (int k = 0; k < r; k++) o->strides[k] = strides[t][k];
    }
    memcpy(c->out_slot, d->out_slot, sizeof c->out_slot);
    memcpy(c->steps, d->steps, sizeof c->steps);
}

cudnnStatus_t ocd_pw_chain_run(cudnnHandle_t handle, const struct ocd_pw_chain *c, const char *op)
{
    return ocd_impl_run(handle, pw_chain_impls, OCD_ARRAY_LEN(pw_chain_impls), c, op);
}
