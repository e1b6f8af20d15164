/* rnn_exec.c: the layer loop's shared parts (adv/rnn_exec.h): the workspace and reserve layouts,
   a call's resolved pointers, the backend's pointwise kernels, the GEMM helper, and the forward
   pass (inference and training). */
#include "adv/rnn_exec.h"

#include "core/dtype.h"
#include "core/impl.h"
#include "ops/dropout.h"

#define RNN_ALIGN 256

static size_t region(size_t *at, size_t bytes)
{
    size_t start = *at;
    *at += (bytes + RNN_ALIGN - 1) / RNN_ALIGN * RNN_ALIGN;
    return start;
}

void ocd_rnn_layout_of(const struct ocd_rnn_problem *p, const struct ocd_rnn_data *x, bool training,
                       struct ocd_rnn_layout *l)
{
    l->L = p->layers, l->D = p->dirs, l->G = p->gates, l->S = ocd_rnn_saved_gates(p->cell);
    l->H = p->hidden_size, l->P = p->proj_size, l->T = x->max_seq, l->N = x->batch;
    l->pos = ocd_rnn_data_vectors(x);
    l->e = ocd_dtype_scalar_size(p->dtype);
    l->ce = p->dtype == CUDNN_DATA_DOUBLE ? 8 : 4;
    size_t T = (size_t)l->T, N = (size_t)l->N, H = (size_t)l->H, P = (size_t)l->P, G = (size_t)l->G;
    size_t pos = (size_t)l->pos, e = l->e, ce = l->ce;
    bool lstm = p->cell == CUDNN_LSTM, proj = ocd_rnn_has_projection(p);

    /* the reserve (or, in inference, the states part of the workspace). Training keeps every
       step's states of every pseudo-layer for the backward; inference runs the pseudo-layers one
       after the other and a step reads only the previous step's states, so it keeps one set of
       two slots (ping-pong) and the outputs of two layers (the input being read, the output
       being written), the last layer's among them: where an inference call passes y NULL, the
       last layer writes its output there. */
    l->state_slots = training ? l->T + 1 : 2;
    l->hfull_slots = training ? l->T : 1;
    l->out_slots = training ? l->L - 1 : l->L < 2 ? l->L : 2;
    size_t at = 0;
    l->rs_hs = region(&at, (size_t)l->state_slots * N * P * e);
    l->rs_cs = region(&at, lstm ? (size_t)l->state_slots * N * H * ce : 0);
    l->rs_saved = region(&at, training ? T * N * (size_t)l->S * H * ce : 0);
    l->rs_hfull = region(&at, proj ? (size_t)l->hfull_slots * N * H * e : 0);
    l->rs_dpre_x = region(&at, training ? pos * G * H * e : 0);
    l->rs_dpre_h = region(&at, training ? T * N * G * H * e : 0);
    l->rs_dtot = region(&at, training && proj ? T * N * P * e : 0);
    l->rs_pseudo = training ? at : 0;
    if (training) at *= (size_t)l->L * l->D;
    l->rs_out_stride = (pos * (size_t)l->D * P * e + RNN_ALIGN - 1) / RNN_ALIGN * RNN_ALIGN;
    l->rs_outs = at;
    at += (size_t)l->out_slots * l->rs_out_stride;
    bool drop = training && ocd_rnn_dropout_on(p);
    size_t mask = ocd_dropout_reserve_bytes(l->pos * l->D * l->P);
    l->rs_mask_stride = (mask + RNN_ALIGN - 1) / RNN_ALIGN * RNN_ALIGN;
    l->rs_drops = at;
    at += drop ? (size_t)(l->L - 1) * l->rs_out_stride : 0;
    l->rs_masks = at;
    at += drop ? (size_t)(l->L - 1) * l->rs_mask_stride : 0;
    l->rs_xcopy = region(&at, training ? pos * (size_t)p->input_size * e : 0);
    l->rs_total = at;

    /* the workspace */
    at = 0;
    l->ws_gx = region(&at, pos * G * H * ce);
    size_t gh = N * G * H * ce, exchange = training ? 0 : ocd_rnn_persist_exchange_bytes(l->N, l->P);
    l->ws_gh = region(&at, gh > exchange ? gh : exchange); /* inference: also the persistent kernel's exchange */
    l->ws_rtmp = region(&at, proj ? N * P * e : 0);
    l->ws_offsets = region(&at, T * 4);
    l->ws_lengths = region(&at, N * 4);
    for (int i = 0; i < 2; i++) {
        l->ws_dh[i] = region(&at, training ? N * P * ce : 0);
        l->ws_dc[i] = region(&at, training && lstm ? N * H * ce : 0);
        l->ws_dout[i] = region(&at, training && l->L > 1 ? pos * (size_t)l->D * P * e : 0);
    }
    l->ws_dhfull = region(&at, training && proj ? N * H * ce : 0);
    l->ws_ones = region(&at, training ? (pos > T * N ? pos : T * N) * e : 0);
    l->ws_states = region(&at, training ? 0 : l->rs_total);
    l->ws_total = at;
}

void ocd_rnn_space_sizes(const struct ocd_rnn_problem *p, const struct ocd_rnn_data *x, bool training, size_t *ws,
                         size_t *rs)
{
    struct ocd_rnn_layout l;
    ocd_rnn_layout_of(p, x, training, &l);
    *ws = l.ws_total;
    *rs = training ? l.rs_total : 0;
}

/* ---- the context and the backend's kernels -------------------------------------------------- */

cudnnStatus_t ocd_rnn_fwd_step(const struct ocd_rnn_ctx *x, const struct ocd_rnn_step *s)
{
#ifdef OCD_HAVE_CUDA
    if (ocd_handle_kind(x->h) == OCD_BACKEND_CUDA) return ocd_cuda_rnn_fwd_step(x->h, s);
#endif
    return ocd_host_rnn_fwd_step(x->h, s);
}

cudnnStatus_t ocd_rnn_bwd_step(const struct ocd_rnn_ctx *x, const struct ocd_rnn_step *s)
{
#ifdef OCD_HAVE_CUDA
    if (ocd_handle_kind(x->h) == OCD_BACKEND_CUDA) return ocd_cuda_rnn_bwd_step(x->h, s);
#endif
    return ocd_host_rnn_bwd_step(x->h, s);
}

cudnnStatus_t ocd_rnn_aux(const struct ocd_rnn_ctx *x, const struct ocd_rnn_aux *a)
{
#ifdef OCD_HAVE_CUDA
    if (ocd_handle_kind(x->h) == OCD_BACKEND_CUDA) return ocd_cuda_rnn_aux(x->h, a);
#endif
    return ocd_host_rnn_aux(x->h, a);
}

struct ocd_rnn_step ocd_rnn_step_of(const struct ocd_rnn_ctx *x, int pl)
{
    const struct ocd_rnn_problem *p = x->p;
    struct ocd_rnn_step s = {0};
    s.mode = p->cell;
    s.dtype = p->dtype;
    s.layout = x->c->x.layout;
    s.T = x->l.T, s.N = x->l.N, s.H = x->l.H, s.P = x->l.P;
    s.dir = pl % p->dirs;
    s.proj = ocd_rnn_has_projection(p);
    s.lengths = x->lengths;
    s.offsets = x->offsets;
    s.clip = p->cell == CUDNN_LSTM && p->clip_mode == CUDNN_RNN_CLIP_MINMAX;
    s.clip_nan = p->clip_nan == CUDNN_PROPAGATE_NAN;
    s.lclip = p->lclip, s.rclip = p->rclip;
    s.y_stride = (int64_t)p->dirs * p->proj_size;
    for (int g = 0; g < p->gates; g++) {
        struct ocd_rnn_param bw = ocd_rnn_bias(p, pl, g), br = ocd_rnn_bias(p, pl, p->gates + g);
        s.bw[g] = bw.rows ? ocd_rnn_weight(x, bw) : NULL;
        s.br[g] = br.rows ? ocd_rnn_weight(x, br) : NULL;
    }
    return s;
}

/* The GEMMs' compute type: FP32 for float data unless the math type asks for conversions
   (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: TF32 where allowed, under STANDARD only: the 8.2
   guide has the persistent algorithms ignore the tensor-op math types), FP64 for double. */
enum ocd_gemm_compute ocd_rnn_gemm_compute(const struct ocd_rnn_problem *p)
{
    if (p->dtype == CUDNN_DATA_FLOAT &&
        (p->math_type != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION || p->algo != CUDNN_RNN_ALGO_STANDARD))
        return OCD_GEMM_COMPUTE_F32;
    return ocd_gemm_compute_for(p->dtype, p->math_type);
}

cudnnStatus_t ocd_rnn_ctx_init(cudnnHandle_t handle, const struct ocd_rnn_call *c, bool training,
                               struct ocd_rnn_ctx *x)
{
    x->h = handle;
    x->c = c;
    x->p = c->p;
    ocd_rnn_layout_of(c->p, &c->x, training, &x->l);
    x->ws = c->ws;
    x->rs = training ? c->rs : x->ws + x->l.ws_states;
    x->ct = c->p->dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    x->gemm_compute = ocd_rnn_gemm_compute(c->p);
    OCD_TRY(ocd_gemm_reserve(handle, x->gemm_compute)); /* the passes' GEMMs then cannot fail for memory */
    x->lengths = c->dev_lengths;
    if (x->lengths == NULL) {
        int32_t *dst = (int32_t *)(x->ws + x->l.ws_lengths);
        OCD_TRY(ocd_backend_copy(handle, dst, c->x.seq_lengths, sizeof(int32_t) * (size_t)x->l.N, OCD_COPY_FROM_HOST));
        x->lengths = dst;
    }
    x->offsets = NULL;
    if (c->x.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) {
        struct ocd_rnn_aux a = {.op = OCD_RNN_OFFSETS, .dst = x->ws + x->l.ws_offsets};
        a.step = ocd_rnn_step_of(x, 0);
        OCD_TRY(ocd_rnn_aux(x, &a));
        x->offsets = (const int32_t *)a.dst;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_gemm(const struct ocd_rnn_ctx *x, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                           const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                           cudnnDataType_t c_type, double beta)
{
    struct ocd_gemm_problem g = {0};
    g.m = m, g.n = n, g.k = k;
    g.trans_a = ta, g.trans_b = tb;
    g.lda = lda, g.ldb = ldb, g.ldc = ldc;
    g.batch = 1;
    g.ab_type = x->p->dtype;
    g.c_type = c_type;
    g.compute = x->gemm_compute;
    g.alpha = 1;
    g.beta = beta;
    return ocd_gemm(x->h, &g, a, b, c, NULL, "rnn");
}

bool ocd_rnn_dropout_on(const struct ocd_rnn_problem *p)
{
    return p->dropout > 0 && p->layers > 1;
}

cudnnStatus_t ocd_rnn_dropout(const struct ocd_rnn_ctx *x, int layer, bool forward, void *grad)
{
    const struct ocd_rnn_problem *p = x->p;
    const struct ocd_rnn_layout *l = &x->l;
    struct ocd_dropout_problem d = {0};
    d.count = l->pos * l->D * l->P;
    d.src = (struct ocd_tensor_view){.dtype = p->dtype, .rank = 1, .vect = 1, .dims = {d.count}, .strides = {1}};
    d.dst = d.src;
    d.mask = (uint32_t *)(x->rs + l->rs_masks + (size_t)layer * l->rs_mask_stride);
    d.states = x->c->drop_states;
    d.threshold = (uint64_t)((double)p->dropout * 4294967296.0 + 0.5);
    d.scale = p->dropout < 1 ? 1.0 / (1.0 - (double)p->dropout) : 0.0;
    d.src_data = forward ? ocd_rnn_layer_out(x, layer) : grad;
    d.dst_data = forward ? x->rs + l->rs_drops + (size_t)layer * l->rs_out_stride : grad;
#ifdef OCD_HAVE_CUDA
    if (ocd_handle_kind(x->h) == OCD_BACKEND_CUDA)
        return forward ? ocd_cuda_dropout_fwd_strided(x->h, &d, NULL, 0) : ocd_cuda_dropout_bwd_strided(x->h, &d, NULL, 0);
#endif
    return forward ? ocd_host_dropout_fwd(x->h, &d, NULL, 0) : ocd_host_dropout_bwd(x->h, &d, NULL, 0);
}

/* ---- forward ------------------------------------------------------------------------------------ */

/* dst (count elements of type dt) = src converted from st, or 0 when src is NULL. */
static cudnnStatus_t convert(const struct ocd_rnn_ctx *x, void *dst, cudnnDataType_t dt, const void *src,
                             cudnnDataType_t st, int64_t count)
{
    struct ocd_rnn_aux a = {.op = OCD_RNN_CONVERT, .dst = dst, .src = src, .dst_type = dt, .src_type = st,
                            .count = count};
    return ocd_rnn_aux(x, &a);
}

/* Unpacked layouts: the padding rows of a tensor of `width` values a vector set to value. */
static cudnnStatus_t pad_fill(const struct ocd_rnn_ctx *x, void *dst, int64_t width, double value)
{
    if (x->c->x.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) return CUDNN_STATUS_SUCCESS;
    struct ocd_rnn_aux a = {.op = OCD_RNN_PAD_FILL, .dst = dst, .dst_type = x->p->dtype, .count = width,
                            .stride = width, .value = value};
    a.step = ocd_rnn_step_of(x, 0);
    return ocd_rnn_aux(x, &a);
}

/* ---- the recurrence of a pseudo-layer: its implementations ------------------------------------ */

/* What the recurrence of one pseudo-layer (every step after the input projection) works on: s
   holds what every step shares (ocd_rnn_step_of, with the input, the output and the
   projection's buffers), hs and cs the pseudo-layer's state slots, the initial states in slot 0. */
struct rnn_recurrence {
    const struct ocd_rnn_ctx *x;
    int pl;
    struct ocd_rnn_step s;
    char *hs, *cs;
};

/* A call's state tensor (hx, cx, hy or cy: [pseudo-layer][N][width], NULL when not given) at
   pseudo-layer pl, `bytes` a pseudo-layer's; NULL when not given. */
static char *pl_state(const void *base, int pl, size_t bytes)
{
    return base ? (char *)base + (size_t)pl * bytes : NULL;
}

/* The pseudo-layer's initial states into state slot 0 (hx in the data type, cx in the compute
   type; zero where not given), where the step loop and the persistent kernel's first form read
   them. */
static cudnnStatus_t states_in(const struct rnn_recurrence *r)
{
    const struct ocd_rnn_ctx *x = r->x;
    const struct ocd_rnn_problem *p = x->p;
    const struct ocd_rnn_layout *l = &x->l;
    int64_t H = l->H, P = l->P, N = l->N;
    OCD_TRY(convert(x, r->hs, p->dtype, pl_state(x->c->hx, r->pl, (size_t)(N * P) * l->e), p->dtype, N * P));
    if (p->cell == CUDNN_LSTM)
        OCD_TRY(convert(x, r->cs, x->ct, pl_state(x->c->cx, r->pl, (size_t)(N * H) * l->e), p->dtype, N * H));
    return CUDNN_STATUS_SUCCESS;
}

/* The final states, where the step loop and the first form leave them (state slot T % slots), to
   hy and cy where given. */
static cudnnStatus_t states_out(const struct rnn_recurrence *r)
{
    const struct ocd_rnn_ctx *x = r->x;
    const struct ocd_rnn_problem *p = x->p;
    const struct ocd_rnn_layout *l = &x->l;
    int64_t H = l->H, P = l->P, N = l->N;
    size_t last = (size_t)(l->T % l->state_slots), hb = (size_t)(N * P) * l->e;
    char *hy = pl_state(x->c->hy, r->pl, hb), *cy = pl_state(x->c->cy, r->pl, (size_t)(N * H) * l->e);
    if (hy) OCD_TRY(ocd_backend_copy(x->h, hy, r->hs + last * hb, hb, OCD_COPY_ON_DEVICE));
    if (cy && p->cell == CUDNN_LSTM)
        OCD_TRY(convert(x, cy, p->dtype, r->cs + last * (size_t)(N * H) * l->ce, x->ct, N * H));
    return CUDNN_STATUS_SUCCESS;
}

/* The step loop: per step the recurrent GEMM over the batch, the backend's pointwise step, and
   with a projection its GEMM and store; the states through the slots (states_in, states_out). */
static cudnnStatus_t recurrence_steps(cudnnHandle_t handle, const void *problem, void *workspace,
                                      size_t workspace_bytes)
{
    (void)handle, (void)workspace, (void)workspace_bytes;
    const struct rnn_recurrence *r = problem;
    const struct ocd_rnn_ctx *x = r->x;
    const struct ocd_rnn_problem *p = x->p;
    const struct ocd_rnn_layout *l = &x->l;
    int64_t G = l->G, H = l->H, P = l->P, N = l->N;
    size_t e = l->e, ce = l->ce;
    bool proj = ocd_rnn_has_projection(p);
    struct ocd_rnn_param R = ocd_rnn_matrix(p, r->pl, p->gates), Wp = ocd_rnn_matrix(p, r->pl, OCD_RNN_PROJECTION_ID);
    struct ocd_rnn_step s = r->s;
    char *gh = x->ws + l->ws_gh; /* s.gh */
    OCD_TRY(states_in(r));
    for (int t = 0; t < l->T; t++) {
        size_t now = (size_t)(t % l->state_slots), next = (size_t)((t + 1) % l->state_slots);
        s.s = t;
        s.hprev = r->hs + now * N * P * e;
        s.hnext = r->hs + next * N * P * e;
        s.cprev = r->cs + now * N * H * ce;
        s.cnext = r->cs + next * N * H * ce;
        s.saved = x->c->training ? ocd_rnn_rs(x, l->rs_saved, r->pl) + (size_t)t * N * l->S * H * ce : NULL;
        s.hfull = proj ? ocd_rnn_rs(x, l->rs_hfull, r->pl) + (size_t)(t % l->hfull_slots) * N * H * e : NULL;
        OCD_TRY(ocd_rnn_gemm(x, true, false, G * H, N, P, ocd_rnn_weight(x, R), P, s.hprev, P, gh, G * H, x->ct, 0));
        OCD_TRY(ocd_rnn_fwd_step(x, &s));
        if (proj) {
            char *rtmp = x->ws + l->ws_rtmp;
            OCD_TRY(ocd_rnn_gemm(x, true, false, P, N, H, ocd_rnn_weight(x, Wp), H, s.hfull, H, rtmp, P, p->dtype, 0));
            struct ocd_rnn_aux a = {.op = OCD_RNN_PROJ_STORE, .src = rtmp, .step = s};
            OCD_TRY(ocd_rnn_aux(x, &a));
        }
    }
    return states_out(r);
}

#ifdef OCD_HAVE_CUDA
/* The persistent kernel's problem: the inference layout's two state slots (slot 1 as hnext), the
   call's states of the pseudo-layer (the pipelined form's), the exchange in the step loop's gh
   region (ocd_rnn_layout_of sizes it for both). */
static struct ocd_rnn_seq persistent_seq(const struct rnn_recurrence *r)
{
    const struct ocd_rnn_layout *l = &r->x->l;
    const struct ocd_rnn_call *c = r->x->c;
    size_t hb = (size_t)(l->N * l->P) * l->e, cb = (size_t)(l->N * l->H) * l->e;
    struct ocd_rnn_seq q = {.step = r->s, .r = ocd_rnn_weight(r->x, ocd_rnn_matrix(r->x->p, r->pl, r->x->p->gates)),
                            .exchange = r->x->ws + l->ws_gh, .hx = pl_state(c->hx, r->pl, hb),
                            .cx = pl_state(c->cx, r->pl, cb), .hy = pl_state(c->hy, r->pl, hb),
                            .cy = pl_state(c->cy, r->pl, cb)};
    q.step.hprev = r->hs;
    q.step.hnext = r->hs + (size_t)l->N * l->P * l->e;
    q.step.cprev = r->cs;
    q.step.cnext = r->cs + (size_t)l->N * l->H * l->ce;
    return q;
}

/* The persistent algorithms' kernels (cuDNN 8.2: PERSIST_STATIC, PERSIST_DYNAMIC and
   PERSIST_STATIC_SMALL_H keep the recurrent weights on chip for the whole sequence), in
   inference; training keeps every step's gates for the backward, which the step loop saves. The
   descriptor refuses a projection under these algorithms and PERSIST_DYNAMIC's plan was made for
   the call's batch (ocd_rnn_check_algo), which the kernels' grids and chunks then cover. NULL
   where a persistent kernel may serve the recurrence r, else why not. */
static const char *persistent_refusal(const struct rnn_recurrence *r)
{
    const struct ocd_rnn_problem *p = r->x->p;
    if (p->algo == CUDNN_RNN_ALGO_STANDARD) return "CUDNN_RNN_ALGO_STANDARD runs the step loop";
    if (r->x->c->training) return "a training forward saves every step's gates (the step loop)";
    if (ocd_rnn_has_projection(p)) return "LSTM projection";
    return NULL;
}

/* The cluster form (cuda:rnn_persistent_cluster: sm_90, 16-bit data, batches up to 16, the
   weights in one cluster's registers) serves first; it reads hx and cx and writes hy and cy
   itself. */
static const char *cluster_plan(cudnnHandle_t handle, const void *problem, void *plan)
{
    const char *why = ocd_impl_unproven();
    if (why == NULL) why = persistent_refusal(problem);
    if (why != NULL) return why;
    struct ocd_rnn_seq q = persistent_seq(problem);
    return ocd_cuda_rnn_cluster_plan(handle, &q, plan);
}
static cudnnStatus_t cluster_run(cudnnHandle_t handle, const void *problem, const void *plan, void *workspace,
                                 size_t workspace_bytes)
{
    (void)workspace, (void)workspace_bytes;
    struct ocd_rnn_seq q = persistent_seq(problem);
    return ocd_cuda_rnn_cluster(handle, &q, plan);
}

/* The cooperative kernel: its pipelined form (cuda:rnn_persistent_pipelined) next, its first
   form (cuda:rnn_persistent) where the pipelined one declines: a block's gate inputs of one
   sequence beyond what its threads hold while they wait, or shared memory short of its second
   buffers. */
static const char *persistent_plan_of(cudnnHandle_t handle, const void *problem, void *plan, bool pipelined)
{
    const char *why = persistent_refusal(problem);
    if (why != NULL) return why;
    struct ocd_rnn_seq q = persistent_seq(problem);
    return ocd_cuda_rnn_persist_plan(handle, &q, pipelined, plan);
}
static const char *pipelined_plan(cudnnHandle_t handle, const void *problem, void *plan)
{
    return persistent_plan_of(handle, problem, plan, true);
}
static const char *first_form_plan(cudnnHandle_t handle, const void *problem, void *plan)
{
    return persistent_plan_of(handle, problem, plan, false);
}

/* The first form takes and leaves the states in the slots; the pipelined one reads hx and cx and
   writes hy and cy itself. */
static cudnnStatus_t persistent_run(cudnnHandle_t handle, const void *problem, const void *plan, void *workspace,
                                    size_t workspace_bytes)
{
    (void)workspace, (void)workspace_bytes;
    const struct rnn_recurrence *r = problem;
    const struct ocd_rnn_persist_plan *pl = plan;
    struct ocd_rnn_seq q = persistent_seq(r);
    if (!pl->pipelined) OCD_TRY(states_in(r));
    OCD_TRY(ocd_cuda_rnn_persist(handle, &q, pl));
    return pl->pipelined ? CUDNN_STATUS_SUCCESS : states_out(r);
}

static const struct ocd_impl_planned cluster_hooks = {cluster_plan, NULL, cluster_run};
OCD_IMPL_PLAN_FITS(struct ocd_rnn_cluster_plan);
static const struct ocd_impl_planned pipelined_hooks = {pipelined_plan, NULL, persistent_run};
static const struct ocd_impl_planned first_form_hooks = {first_form_plan, NULL, persistent_run};
OCD_IMPL_PLAN_FITS(struct ocd_rnn_persist_plan);
#endif

/* The recurrence's implementations: the persistent kernel where it serves, else the step loop
   (which every backend runs on its GEMM and pointwise kernels). */
static const struct ocd_impl recurrence_impls[] = {
#ifdef OCD_HAVE_CUDA
    {"cuda:rnn_persistent_cluster", OCD_BACKEND_CUDA, 0, NULL, NULL, NULL, &cluster_hooks},
    {"cuda:rnn_persistent_pipelined", OCD_BACKEND_CUDA, 0, NULL, NULL, NULL, &pipelined_hooks},
    {"cuda:rnn_persistent", OCD_BACKEND_CUDA, 0, NULL, NULL, NULL, &first_form_hooks},
    OCD_IMPL_ENTRY("cuda:rnn_steps", OCD_BACKEND_CUDA, NULL, NULL, recurrence_steps),
#endif
    OCD_IMPL_ENTRY("host:rnn_steps", OCD_BACKEND_HOST, NULL, NULL, recurrence_steps),
};

/* One direction of one layer: lin is the layer's input (in wide), out its output. */
static cudnnStatus_t forward_pseudo(const struct ocd_rnn_ctx *x, int layer, int pl, const char *lin, void *out)
{
    const struct ocd_rnn_problem *p = x->p;
    const struct ocd_rnn_layout *l = &x->l;
    int64_t G = l->G, H = l->H, in = ocd_rnn_layer_input(p, layer);
    struct ocd_rnn_param W = ocd_rnn_matrix(p, pl, 0);
    struct rnn_recurrence r = {.x = x, .pl = pl, .hs = ocd_rnn_rs(x, l->rs_hs, pl), .cs = ocd_rnn_rs(x, l->rs_cs, pl)};
    char *gx = x->ws + l->ws_gx;
    if (W.rows && l->pos > 0) /* no positions: every sequence is empty */
        OCD_TRY(ocd_rnn_gemm(x, true, false, G * H, l->pos, in, ocd_rnn_weight(x, W), in, lin, in, gx, G * H, x->ct,
                             0));
    r.s = ocd_rnn_step_of(x, pl);
    r.s.gx = W.rows ? gx : NULL;
    r.s.x = lin;
    r.s.x_stride = in;
    r.s.gh = x->ws + l->ws_gh;
    r.s.y = out;
    struct ocd_impl_plan plan;
    const struct ocd_impl *impl = ocd_impl_select(x->h, recurrence_impls, OCD_ARRAY_LEN(recurrence_impls), &r,
                                                  "RNN recurrence", &plan);
    if (impl == NULL) return CUDNN_STATUS_NOT_SUPPORTED;
    return ocd_impl_exec(x->h, impl, &r, &plan, NULL, 0);
}

/* A layer's input: x (training: its copy with the padding zeroed) or the layer below's output. */
const char *ocd_rnn_layer_data(const struct ocd_rnn_ctx *x, int layer)
{
    if (layer > 0 && x->c->training && ocd_rnn_dropout_on(x->p))
        return x->rs + x->l.rs_drops + (size_t)(layer - 1) * x->l.rs_out_stride;
    if (layer > 0) return ocd_rnn_layer_out(x, layer - 1);
    return x->c->training ? x->rs + x->l.rs_xcopy : (const char *)x->c->xp;
}

cudnnStatus_t ocd_rnn_forward_run(cudnnHandle_t handle, const struct ocd_rnn_call *c)
{
    struct ocd_rnn_ctx x;
    OCD_TRY(ocd_rnn_ctx_init(handle, c, c->training, &x));
    const struct ocd_rnn_problem *p = c->p;
    const struct ocd_rnn_layout *l = &x.l;
    if (c->training) {
        OCD_TRY(ocd_backend_copy(handle, x.rs + l->rs_xcopy, c->xp, (size_t)l->pos * p->input_size * l->e,
                                 OCD_COPY_ON_DEVICE));
        OCD_TRY(pad_fill(&x, x.rs + l->rs_xcopy, p->input_size, 0));
    }
    for (int layer = 0; layer < p->layers; layer++) {
        bool last = layer == p->layers - 1;
        void *out = last && c->yp != NULL ? c->yp : ocd_rnn_layer_out(&x, layer); /* y NULL: inference */
        for (int d = 0; d < p->dirs; d++)
            OCD_TRY(forward_pseudo(&x, layer, layer * p->dirs + d, ocd_rnn_layer_data(&x, layer), out));
        if (!last) OCD_TRY(pad_fill(&x, out, (int64_t)p->dirs * p->proj_size, 0));
        if (!last && c->training && ocd_rnn_dropout_on(p)) OCD_TRY(ocd_rnn_dropout(&x, layer, true, NULL));
        else if (c->y.has_fill) OCD_TRY(pad_fill(&x, out, (int64_t)p->dirs * p->proj_size, c->y.fill));
    }
    return CUDNN_STATUS_SUCCESS;
}
