/* ops_rnn.c: the RNN ops of the adv libraries, through the v8 API (present in cuDNN 8 and 9).

   rnn: a stack of `layers` RNN layers of one cell (lstm, gru, relu, tanh), `dirs` 1 or 2, on t
   steps of n sequences of full length (SEQ_MAJOR_UNPACKED data, devSeqLengths all t), input
   vectors of `input`, hidden size `hidden` (no projection), double bias, linear input. Half and
   bfloat16 data compute in float (mathPrec FLOAT, CUDNN_TENSOR_OP_MATH); float and double in
   their own type. algo: standard, persist_static or persist_dynamic (built for n). A dropout
   descriptor of probability 0 (some libraries refuse a NULL one). wscale multiplies the random
   weights (1: as drawn, magnitudes 1/32 to 1, which saturate the gates of wide layers; small
   ones keep the recurrence contractive, so that rounding differences between two libraries
   stay small instead of growing step by step). pass:
     inf  cudnnRNNForward in inference mode (y, hy and cy written)
     fwd  cudnnRNNForward in training mode (also the reserve space)
     bwd  cudnnRNNBackwardData_v8 then cudnnRNNBackwardWeights_v8 (ADD), on the reserve space of
          one training forward made at setup; one call of the case is the pair.
   Tensors, in order: x (t x n x input), y (t x n x hidden*dirs), hx and cx (layers*dirs x n x
   hidden), w (the weight space, random like the data), then for bwd dy, dx and dw. The checksum
   is taken of y (inf, fwd) or dx (bwd).

   flops: the GEMMs (pointwise work not counted). A layer's forward is 2 t n G hidden (in + hidden)
   per direction, G the gates (LSTM 4, GRU 3, else 1), in the layer's input width; backward data
   and weights are as much again each, so bwd counts twice the forward. bytes: x, y, the weights
   and the states once (a floor far below the traffic of the recurrence, which is bound by its
   sequential steps). */
#include "bench.h"

struct rnn_state {
    cudnnRNNDescriptor_t desc;
    cudnnDropoutDescriptor_t dropout;
    cudnnRNNDataDescriptor_t x_desc, y_desc;
    cudnnTensorDescriptor_t h_desc;
    void *dropout_states, *seq_lengths, *reserve;
    size_t weight_bytes, reserve_bytes;
    bool lstm;
    int pass; /* 0 inf, 1 fwd, 2 bwd */
};

static void release_rnn(struct call *c)
{
    struct rnn_state *st = c->state;
    if (st->desc) cudnnDestroyRNNDescriptor(st->desc);
    if (st->dropout) cudnnDestroyDropoutDescriptor(st->dropout);
    if (st->x_desc) cudnnDestroyRNNDataDescriptor(st->x_desc);
    if (st->y_desc) cudnnDestroyRNNDataDescriptor(st->y_desc);
    if (st->h_desc) cudnnDestroyTensorDescriptor(st->h_desc);
    void *bufs[] = {st->dropout_states, st->seq_lengths, st->reserve};
    for (size_t i = 0; i < ARRAY_LEN(bufs); i++)
        if (bufs[i]) mem_free(bufs[i]);
    free(st);
}

static cudnnStatus_t forward(struct call *c, cudnnForwardMode_t mode)
{
    const struct rnn_state *st = c->state;
    return cudnnRNNForward(c->handle, st->desc, mode, st->seq_lengths, st->x_desc, c->t[0].data, st->y_desc,
                           c->t[1].data, st->h_desc, c->t[2].data, NULL, st->h_desc, st->lstm ? c->t[3].data : NULL,
                           NULL, st->weight_bytes, c->t[4].data, c->workspace_bytes, c->workspace,
                           mode == CUDNN_FWD_MODE_TRAINING ? st->reserve_bytes : 0,
                           mode == CUDNN_FWD_MODE_TRAINING ? st->reserve : NULL);
}

/* The descriptors: RNN (and dropout), x and y data, h and c states. */
static cudnnStatus_t describe(struct call *c, struct rnn_state *st, int cell, int algo, int T, int N, int in, int H,
                              int L, int D)
{
    static const cudnnRNNMode_t cells[] = {CUDNN_LSTM, CUDNN_GRU, CUDNN_RNN_RELU, CUDNN_RNN_TANH};
    static const cudnnRNNAlgo_t algos[] = {CUDNN_RNN_ALGO_STANDARD, CUDNN_RNN_ALGO_PERSIST_STATIC,
                                           CUDNN_RNN_ALGO_PERSIST_DYNAMIC};
    cudnnDataType_t dt = c->dt->type;
    bool low = dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16;
    size_t states_bytes = 0;
    cudnnStatus_t s = cudnnCreateDropoutDescriptor(&st->dropout);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnDropoutGetStatesSize(c->handle, &states_bytes);
    if (s == CUDNN_STATUS_SUCCESS && !c->dry) st->dropout_states = mem_alloc(states_bytes ? states_bytes : 1);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetDropoutDescriptor(st->dropout, c->handle, 0.0f, st->dropout_states, c->dry ? 0 : states_bytes, 1);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnCreateRNNDescriptor(&st->desc);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetRNNDescriptor_v8(st->desc, algos[algo], cells[cell], CUDNN_RNN_DOUBLE_BIAS,
                                     D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, dt,
                                     low ? CUDNN_DATA_FLOAT : dt, low ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH, in,
                                     H, H, L, st->dropout, 0);
    if (s == CUDNN_STATUS_SUCCESS && algos[algo] == CUDNN_RNN_ALGO_PERSIST_DYNAMIC)
        s = cudnnBuildRNNDynamic(c->handle, st->desc, N);
    int *lengths = malloc(sizeof(int) * (size_t)N);
    if (lengths == NULL) die("out of host memory");
    for (int i = 0; i < N; i++) lengths[i] = T;
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnCreateRNNDataDescriptor(&st->x_desc);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetRNNDataDescriptor(st->x_desc, dt, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, in, lengths,
                                      NULL);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnCreateRNNDataDescriptor(&st->y_desc);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetRNNDataDescriptor(st->y_desc, dt, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, H * D, lengths,
                                      NULL);
    if (s == CUDNN_STATUS_SUCCESS && !c->dry) {
        st->seq_lengths = mem_alloc(sizeof(int) * (size_t)N);
        mem_copy(st->seq_lengths, lengths, sizeof(int) * (size_t)N, true);
    }
    free(lengths);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnCreateTensorDescriptor(&st->h_desc);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetTensorNdDescriptor(st->h_desc, dt, 3, (int[]){L * D, N, H}, (int[]){N * H, H, 1});
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnGetRNNWeightSpaceSize(c->handle, st->desc, &st->weight_bytes);
    return s;
}

/* Tensor i's values (on the backend) times scale, through the host. */
static void scale_tensor(struct call *c, int i, double scale)
{
    struct tensor *t = &c->t[i];
    size_t bytes = (size_t)t->count * t->dt->size;
    unsigned char *host = malloc(bytes ? bytes : 1);
    if (host == NULL) die("out of host memory");
    mem_copy(host, t->data, bytes, false);
    for (int64_t k = 0; k < t->count; k++) {
        unsigned char *v = host + (size_t)k * t->dt->size;
        encode(t->dt, decode(t->dt, v) * scale, v);
    }
    mem_copy(t->data, host, bytes, true);
    free(host);
}

static const char *setup_rnn(struct call *c, const struct problem *p)
{
    static const char *const cells[] = {"lstm", "gru", "relu", "tanh"};
    static const char *const algos[] = {"standard", "persist_static", "persist_dynamic"};
    static const char *const passes[] = {"inf", "fwd", "bwd"};
    int cell = problem_choice(p, "cell", cells, (int)ARRAY_LEN(cells));
    int algo = problem_choice(p, "algo", algos, (int)ARRAY_LEN(algos));
    int pass = problem_choice(p, "pass", passes, (int)ARRAY_LEN(passes));
    double t = problem_number(p, "t"), n = problem_number(p, "n"), in = problem_number(p, "input"),
           h = problem_number(p, "hidden"), l = problem_number(p, "layers"), d = problem_number(p, "dirs"),
           wscale = problem_number(p, "wscale");
    if (cell < 0 || algo < 0 || pass < 0) return "cell lstm|gru|relu|tanh, algo standard|persist_static|"
                                                 "persist_dynamic, pass inf|fwd|bwd";
    if (t < 1 || n < 1 || in < 1 || h < 1 || l < 1 || (d != 1 && d != 2) || t * n * (in > h * d ? in : h * d) > INT32_MAX ||
        !(wscale > 0))
        return "want t, n, input, hidden, layers >= 1, dirs 1 or 2 and wscale > 0";
    int T = (int)t, N = (int)n, IN = (int)in, H = (int)h, L = (int)l, D = (int)d;
    struct rnn_state *st = calloc(1, sizeof *st);
    if (st == NULL) die("out of host memory");
    c->state = st;
    c->release = release_rnn;
    st->lstm = cell == 0;
    st->pass = pass;
    cudnnStatus_t s = describe(c, st, cell, algo, T, N, IN, H, L, D);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(s);

    char spec[96];
    const char *why = NULL;
    snprintf(spec, sizeof spec, "%dx%dx%d", T, N, IN);
    if (!why) why = add_tensor_spec(c, spec); /* x */
    snprintf(spec, sizeof spec, "%dx%dx%d", T, N, H * D);
    if (!why) why = add_tensor_spec(c, spec); /* y */
    snprintf(spec, sizeof spec, "%dx%dx%d", L * D, N, H);
    if (!why) why = add_like_x(c, spec, 2);   /* hx, cx */
    snprintf(spec, sizeof spec, "%zux1x1", st->weight_bytes / c->dt->size);
    if (!why) why = add_tensor_spec(c, spec); /* w */
    if (!why && pass == 2) {
        snprintf(spec, sizeof spec, "%dx%dx%d", T, N, H * D);
        why = add_tensor_spec(c, spec); /* dy */
        snprintf(spec, sizeof spec, "%dx%dx%d", T, N, IN);
        if (!why) why = add_tensor_spec(c, spec); /* dx */
        snprintf(spec, sizeof spec, "%zux1x1", st->weight_bytes / c->dt->size);
        if (!why) why = add_tensor_spec(c, spec); /* dw */
    }
    if (why) return why;
    c->out = pass == 2 ? 6 : 1;

    int gates = cell == 0 ? 4 : cell == 1 ? 3 : 1;
    double gemm = 0;
    for (int layer = 0; layer < L; layer++) gemm += 2.0 * T * N * gates * H * ((layer ? H * D : IN) + H) * D;
    c->flops = pass == 2 ? 2 * gemm : gemm;
    c->bytes = tensor_bytes(c, 0) + tensor_bytes(c, 1) + tensor_bytes(c, 4) + 2 * tensor_bytes(c, 2);

    if (c->dry) return NULL;
    if (wscale != 1) scale_tensor(c, 4, wscale);
    s = cudnnGetRNNTempSpaceSizes(c->handle, st->desc, pass == 0 ? CUDNN_FWD_MODE_INFERENCE : CUDNN_FWD_MODE_TRAINING,
                                  st->x_desc, &c->workspace_bytes, &st->reserve_bytes);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(s);
    c->workspace = mem_alloc(c->workspace_bytes ? c->workspace_bytes : 1);
    if (pass > 0) st->reserve = mem_alloc(st->reserve_bytes ? st->reserve_bytes : 1);
    if (pass == 2 && (s = forward(c, CUDNN_FWD_MODE_TRAINING)) != CUDNN_STATUS_SUCCESS)
        return cudnnGetErrorString(s);
    return NULL;
}

static cudnnStatus_t run_rnn(struct call *c)
{
    const struct rnn_state *st = c->state;
    if (st->pass < 2) return forward(c, st->pass == 0 ? CUDNN_FWD_MODE_INFERENCE : CUDNN_FWD_MODE_TRAINING);
    void *cx = st->lstm ? c->t[3].data : NULL;
    cudnnStatus_t s = cudnnRNNBackwardData_v8(c->handle, st->desc, st->seq_lengths, st->y_desc, c->t[1].data,
                                              c->t[5].data, st->x_desc, c->t[6].data, st->h_desc, c->t[2].data, NULL,
                                              NULL, st->h_desc, cx, NULL, NULL, st->weight_bytes, c->t[4].data,
                                              c->workspace_bytes, c->workspace, st->reserve_bytes, st->reserve);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    return cudnnRNNBackwardWeights_v8(c->handle, st->desc, CUDNN_WGRAD_MODE_ADD, st->seq_lengths, st->x_desc,
                                      c->t[0].data, st->h_desc, c->t[2].data, st->y_desc, c->t[1].data,
                                      st->weight_bytes, c->t[7].data, c->workspace_bytes, c->workspace,
                                      st->reserve_bytes, st->reserve);
}

static const struct op ops[] = {
    {"rnn", "cell algo dt t n input hidden layers dirs pass wscale", setup_rnn, run_rnn},
};

const struct op_family ops_rnn = {ops, ARRAY_LEN(ops)};
