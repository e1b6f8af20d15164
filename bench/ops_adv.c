/* ops_adv.c: the adv library's ops: the CTC loss. */
#include "bench.h"

/* ctc: the CTC loss and its gradients (cudnnCTCLoss with api=host: labels in host memory;
   cudnnCTCLoss_v8 with api=v8: labels on the device), SOFTMAX normalization (probs holds the
   activations, as frameworks call it), NaN propagated, algorithm DETERMINISTIC. Every input is t
   steps long; sample i's label length is drawn from [labels / 2, labels], its symbols from
   [1, a - 1], by the case's random stream. Tensors probs (t x n x a), gradients (the output),
   costs (n x 1 x 1). bytes = |probs| read + |gradients| written (the recursion's workspace
   traffic, about as much again per state and step, is not counted: the op is bound by its
   sequential steps, not by memory). */
/* The call's state: the loss descriptor; labels, label lengths and input lengths on the host
   and (api v8) on the device. */
struct ctc_state {
    cudnnCTCLossDescriptor_t desc;
    int *host[3];
    void *dev[3];
};

static void release_ctc(struct call *c)
{
    struct ctc_state *st = c->state;
    if (st->desc) cudnnDestroyCTCLossDescriptor(st->desc);
    for (int i = 0; i < 3; i++) {
        free(st->host[i]);
        if (st->dev[i]) mem_free(st->dev[i]);
    }
    free(st);
}

static const char *setup_ctc(struct call *c, const struct problem *p)
{
    static const char *const apis[] = {"host", "v8"};
    int api = problem_choice(p, "api", apis, (int)ARRAY_LEN(apis));
    double t = problem_number(p, "t"), n = problem_number(p, "n"), a = problem_number(p, "a"),
           l = problem_number(p, "labels");
    if (api < 0) return "api must be host or v8";
    if (c->dt->type != CUDNN_DATA_FLOAT) return "ctc takes dt=f32";
    if (t < 1 || n < 1 || a < 2 || l < 1 || l > 256 || l > t || t * n * a > INT32_MAX)
        return "want t, n >= 1, a >= 2, 1 <= labels <= min(256, t)";
    int T = (int)t, N = (int)n, A = (int)a, L = (int)l;
    char spec[96];
    snprintf(spec, sizeof spec, "%dx%dx%d", T, N, A);
    const char *why = add_tensor_spec(c, spec);
    if (!why) why = add_tensor_spec(c, spec);
    snprintf(spec, sizeof spec, "%dx1x1", N);
    if (!why) why = add_tensor_spec(c, spec);
    if (why) return why;
    struct ctc_state *st = calloc(1, sizeof *st);
    if (st == NULL) die("out of host memory");
    c->state = st;
    c->release = release_ctc;
    c->mode = api;
    c->out = 1;
    c->bytes = 2 * tensor_bytes(c, 0);
    for (int i = 0; i < 3; i++)
        if ((st->host[i] = malloc(sizeof(int) * (size_t)N * (i == 0 ? L : 1))) == NULL) die("out of host memory");
    int total = 0;
    for (int i = 0; i < N; i++) {
        int len = L / 2 + (int)(splitmix(&c->rng) % (uint64_t)(L - L / 2 + 1));
        for (int j = 0; j < len; j++) st->host[0][total++] = 1 + (int)(splitmix(&c->rng) % (uint64_t)(A - 1));
        st->host[1][i] = len;
        st->host[2][i] = T;
    }
    cudnnStatus_t s = cudnnCreateCTCLossDescriptor(&st->desc);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetCTCLossDescriptor_v8(st->desc, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                         CUDNN_PROPAGATE_NAN, L);
    if (s == CUDNN_STATUS_SUCCESS && api == 0)
        s = cudnnGetCTCLossWorkspaceSize(c->handle, c->t[0].desc, c->t[1].desc, st->host[0], st->host[1],
                                         st->host[2], CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, st->desc,
                                         &c->workspace_bytes);
    if (s == CUDNN_STATUS_SUCCESS && api == 1)
        s = cudnnGetCTCLossWorkspaceSize_v8(c->handle, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, st->desc, c->t[0].desc,
                                            c->t[1].desc, &c->workspace_bytes);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(s);
    if (c->dry) return NULL;
    c->workspace = mem_alloc(c->workspace_bytes ? c->workspace_bytes : 1);
    if (api == 1)
        for (int i = 0; i < 3; i++) {
            size_t bytes = sizeof(int) * (size_t)(i == 0 ? total : N);
            st->dev[i] = mem_alloc(bytes ? bytes : 1);
            mem_copy(st->dev[i], st->host[i], bytes, true);
        }
    return NULL;
}

static cudnnStatus_t run_ctc(struct call *c)
{
    const struct ctc_state *st = c->state;
    if (c->mode == 0)
        return cudnnCTCLoss(c->handle, c->t[0].desc, c->t[0].data, st->host[0], st->host[1], st->host[2],
                            c->t[2].data, c->t[1].desc, c->t[1].data, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, st->desc,
                            c->workspace, c->workspace_bytes);
    return cudnnCTCLoss_v8(c->handle, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, st->desc, c->t[0].desc, c->t[0].data,
                           st->dev[0], st->dev[1], st->dev[2], c->t[2].data, c->t[1].desc, c->t[1].data,
                           c->workspace_bytes, c->workspace);
}

static const struct op ops[] = {
    {"ctc", "api dt t n a labels", setup_ctc, run_ctc},
};

const struct op_family ops_adv = {ops, ARRAY_LEN(ops)};
