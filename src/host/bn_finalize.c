/* bn_finalize.c: the host engine of the batch-norm channel pass (problem/bn_finalize.h): a loop
   over the channels, each loading its inputs, computing in double and storing its outputs with one
   rounding to their types. A pass is a few values per channel, so it runs on the calling thread. */
#include "problem/bn_finalize.h"

#include "host/typed.h"

static double load(const struct ocd_bnf_operand *o, int64_t c)
{
    if (o->immediate) return o->value;
    return o->data ? ocd_host_load(o->dtype, o->data, c * o->stride) : 0;
}

cudnnStatus_t ocd_host_bn_finalize(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    (void)handle, (void)ws, (void)ws_bytes;
    const struct ocd_bnf_problem *p = problem;
    for (int64_t c = 0; c < p->channels; c++) {
        double in[OCD_BNF_INPUTS], out[OCD_BNF_SLOTS];
        for (int s = 0; s < OCD_BNF_INPUTS; s++) in[s] = load(&p->t[s], c);
        ocd_bnf_channel(p, in, out);
        for (int s = OCD_BNF_INPUTS; s < OCD_BNF_SLOTS; s++)
            if (p->t[s].data) ocd_host_store(p->t[s].dtype, p->t[s].data, c * p->t[s].stride, out[s]);
    }
    return CUDNN_STATUS_SUCCESS;
}
