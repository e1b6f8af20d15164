/* ops_attn.c: multi-head attention (the adv library's cudnnMultiHeadAttn* calls).

   mha: self-attention shaped as a transformer layer: b sequences of seq tokens of `width` values,
   `heads` heads of width / heads values, Q, K, V and O projections with biases (proj=1), ALL_TO_ONE,
   beam 1, full windows, every sequence full length; or, with proj=0 (and heads=1), the attention
   core alone: no projections, one head of `width` values, softmax scaler 1/sqrt(width); sequence data [batch, time, beam, vect] (the
   b x seq x width tensors frameworks hold); computePrec FLOAT (double for f64), TENSOR_OP_MATH.
   dir=fwd times a training forward (cudnnMultiHeadAttnForward with currIdx -1 and a reserve);
   dir=bwd times cudnnMultiHeadAttnBackwardData followed by cudnnMultiHeadAttnBackwardWeights
   (ADD), after one forward in setup filled the reserve. Tensors: queries, keys, values, out
   (fwd: the output); bwd adds dout, dqueries (the output), dkeys, dvalues.
   flops (fwd) = 4 projections x 2 tokens width^2 (proj=1) + 2 x 2 b seq^2 width (scores and
   weighted sum); bwd counts twice that. bytes = the tensors' bytes (weights and the reserve not counted). */
#include "bench.h"

/* The call's state: the descriptors, weights (and their gradient), buffers and lengths. */
struct mha_state {
    cudnnAttnDescriptor_t attn;
    cudnnSeqDataDescriptor_t seq[2]; /* queries/keys/values, output (the same shapes) */
    void *weights, *dweights, *ws, *rs, *len;
    size_t wbytes, wsbytes, rsbytes;
    int *lo, *hi;
};

static void release_mha(struct call *c)
{
    struct mha_state *st = c->state;
    if (st->attn) cudnnDestroyAttnDescriptor(st->attn);
    for (int i = 0; i < 2; i++)
        if (st->seq[i]) cudnnDestroySeqDataDescriptor(st->seq[i]);
    void *dev[] = {st->weights, st->dweights, st->ws, st->rs, st->len};
    for (size_t i = 0; i < ARRAY_LEN(dev); i++)
        if (dev[i]) mem_free(dev[i]);
    free(st->lo);
    free(st->hi);
    free(st);
}

static cudnnStatus_t forward(struct call *c)
{
    const struct mha_state *st = c->state;
    return cudnnMultiHeadAttnForward(c->handle, st->attn, -1, st->lo, st->hi, st->len, st->len, st->seq[0],
                                     c->t[0].data, NULL, st->seq[0], c->t[1].data, st->seq[0], c->t[2].data,
                                     st->seq[1], c->t[3].data, st->wbytes, st->weights, st->wsbytes, st->ws,
                                     st->rsbytes, st->rs);
}

static const char *setup_mha(struct call *c, const struct problem *p)
{
    static const char *const dirs[] = {"fwd", "bwd"};
    int dir = problem_choice(p, "dir", dirs, (int)ARRAY_LEN(dirs));
    double b = problem_number(p, "b"), h = problem_number(p, "heads"), w = problem_number(p, "width"),
           s = problem_number(p, "seq"), proj = problem_number(p, "proj");
    if (dir < 0) return "dir must be fwd or bwd";
    if (proj != 0 && proj != 1) return "proj must be 0 or 1";
    if (proj == 0 && h != 1) return "proj=0 (the attention core alone) takes heads=1";
    if (c->dt->type != CUDNN_DATA_HALF && c->dt->type != CUDNN_DATA_FLOAT && c->dt->type != CUDNN_DATA_DOUBLE)
        return "mha takes dt=f16, f32 or f64";
    if (b < 1 || h < 1 || w < 1 || s < 1 || (int)w % (int)h != 0 || b * s * w > INT32_MAX)
        return "want b, heads, width, seq >= 1 and heads dividing width";
    int B = (int)b, H = (int)h, W = (int)w, S = (int)s;
    char spec[96];
    snprintf(spec, sizeof spec, "%dx%dx%d", B, S, W);
    const char *why = NULL;
    for (int i = 0; i < (dir == 0 ? 4 : 8) && why == NULL; i++) why = add_tensor_spec(c, spec);
    if (why) return why;
    struct mha_state *st = calloc(1, sizeof *st);
    if (st == NULL) die("out of host memory");
    c->state = st;
    c->release = release_mha;
    c->mode = dir;
    c->out = dir == 0 ? 3 : 5;
    double tokens = (double)B * S, attn = 4.0 * B * (double)S * S * W;
    c->flops = (4 * 2 * tokens * W * W * proj + attn) * (dir == 0 ? 1 : 2);
    c->bytes = 0;
    for (int i = 0; i < c->ntensors; i++) c->bytes += tensor_bytes(c, i);

    cudnnDataType_t comp = c->dt->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = S, dims[CUDNN_SEQDATA_BATCH_DIM] = B, dims[CUDNN_SEQDATA_BEAM_DIM] = 1,
    dims[CUDNN_SEQDATA_VECT_DIM] = W;
    cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                  CUDNN_SEQDATA_VECT_DIM};
    int *lengths = malloc(sizeof(int) * (size_t)B);
    st->lo = calloc((size_t)S, sizeof(int));
    st->hi = malloc(sizeof(int) * (size_t)S);
    if (lengths == NULL || st->lo == NULL || st->hi == NULL) die("out of host memory");
    for (int i = 0; i < B; i++) lengths[i] = S;
    for (int i = 0; i < S; i++) st->hi[i] = S;
    cudnnStatus_t r = cudnnCreateAttnDescriptor(&st->attn);
    for (int i = 0; i < 2 && r == CUDNN_STATUS_SUCCESS; i++) {
        r = cudnnCreateSeqDataDescriptor(&st->seq[i]);
        if (r == CUDNN_STATUS_SUCCESS)
            r = cudnnSetSeqDataDescriptor(st->seq[i], c->dt->type, 4, dims, axes, (size_t)B, lengths, NULL);
    }
    const int P = (int)proj; /* heads is 1 where P is 0 */
    if (r == CUDNN_STATUS_SUCCESS)
        r = cudnnSetAttnDescriptor(st->attn, CUDNN_ATTN_QUERYMAP_ALL_TO_ONE | (P ? CUDNN_ATTN_ENABLE_PROJ_BIASES : 0),
                                   H, 1.0 / sqrt(W / H), c->dt->type, comp, CUDNN_TENSOR_OP_MATH, NULL, NULL, W, W,
                                   W, P * W / H, P * W / H, P * W / H, P * W, S, S, B, 1);
    if (r == CUDNN_STATUS_SUCCESS)
        r = cudnnGetMultiHeadAttnBuffers(c->handle, st->attn, &st->wbytes, &st->wsbytes, &st->rsbytes);
    if (r != CUDNN_STATUS_SUCCESS) {
        free(lengths);
        return cudnnGetErrorString(r);
    }
    if (c->dry) {
        free(lengths);
        return NULL;
    }
    st->weights = mem_alloc(st->wbytes ? st->wbytes : 1); /* proj=0: no weights */
    fill_random(c->dt, st->weights, (int64_t)(st->wbytes / c->dt->size), &c->rng);
    st->ws = mem_alloc(st->wsbytes ? st->wsbytes : 1);
    st->rs = mem_alloc(st->rsbytes ? st->rsbytes : 1);
    st->len = mem_alloc(sizeof(int) * (size_t)B);
    mem_copy(st->len, lengths, sizeof(int) * (size_t)B, true);
    free(lengths);
    if (dir == 1) {
        st->dweights = mem_alloc(st->wbytes ? st->wbytes : 1);
        fill_random(c->dt, st->dweights, (int64_t)(st->wbytes / c->dt->size), &c->rng);
        r = forward(c);
        if (r != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(r);
    }
    return NULL;
}

static cudnnStatus_t run_mha(struct call *c)
{
    const struct mha_state *st = c->state;
    if (c->mode == 0) return forward(c);
    cudnnStatus_t r = cudnnMultiHeadAttnBackwardData(
        c->handle, st->attn, st->lo, st->hi, st->len, st->len, st->seq[1], c->t[4].data, st->seq[0], c->t[5].data,
        c->t[0].data, st->seq[0], c->t[6].data, c->t[1].data, st->seq[0], c->t[7].data, c->t[2].data, st->wbytes,
        st->weights, st->wsbytes, st->ws, st->rsbytes, st->rs);
    if (r != CUDNN_STATUS_SUCCESS) return r;
    return cudnnMultiHeadAttnBackwardWeights(c->handle, st->attn, CUDNN_WGRAD_MODE_ADD, st->seq[0], c->t[0].data,
                                             st->seq[0], c->t[1].data, st->seq[0], c->t[2].data, st->seq[1],
                                             c->t[4].data, st->wbytes, st->weights, st->dweights, st->wsbytes,
                                             st->ws, st->rsbytes, st->rs);
}

static const struct op ops[] = {
    {"mha", "dir dt b heads width seq proj", setup_mha, run_mha},
};

const struct op_family ops_attn = {ops, ARRAY_LEN(ops)};
