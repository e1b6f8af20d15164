/* rnn_forward.c: the v8 compute API of libcudnn_adv_infer: cudnnGetRNNTempSpaceSizes and
   cudnnRNNForward (inference and training), and the checks every v8 compute call shares
   (ocd_rnn_prepare_v8, also used by the backward calls of rnn_train.c). The pass itself is the
   layer loop of adv/rnn_exec.c; ocd_rnn_run_checked runs it, and the backward passes, with
   OPENCUDNN_CHECK's second opinion (core/check.h's drivers) for the v8 and the legacy calls.

   cuDNN 8.2 rules implemented here (BAD_PARAM, logged, nothing written, unless said otherwise):
   - fwdMode not a cudnnForwardMode_t; x or weightSpace NULL; y NULL in training. In inference y
     may be NULL (ocd_rnn_check_y, in the v8 and the legacy calls): the final states are
     computed, no output sequence is written; Deeplearning4j's lstmLayer passes NULL when it
     returns the last step only (the 8.2 text asks for y); logged at info level.
     devSeqLengths may be NULL (the
     lengths are then xDesc's, copied to the workspace as the legacy calls do): cuDNN 8.9 made it
     optional and programs written for it pass NULL (ROOT's TMVA); logged at info level.
   - xDesc and yDesc must be set RNN data descriptors of the network's data type; xDesc's vector
     is inputSize wide, yDesc's dirs x projSize; both share layout, maxSeqLength, batch and the
     sequence lengths.
   - hDesc (and cDesc for LSTM) is a packed (layers x dirs) x batch x projSize (hiddenSize) tensor
     of the data type (further dims of 1 allowed); hx, cx, hy and cy may be NULL (zero initial states; final states not
     written). A descriptor whose state pointers are all NULL may itself be NULL
     (ocd_rnn_check_states), in the v8 and the legacy calls: the 8.2 text asks for it, NVIDIA's
     library takes it (SharpNet passes hDesc and cDesc NULL with every state NULL, CUDA.jl's
     legacy RNN a NULL descriptor for a zero dhy or dcy); logged at info level.
   - weightSpaceSize below cudnnGetRNNWeightSpaceSize, workSpaceSize below the query's answer,
     or in training reserveSpaceSize below it (or a NULL space that is needed).
   - Dropout between layers (training; inference applies none) needs the dropout descriptor's
     states.
   - The persistent algorithms: NOT_SUPPORTED for variable sequence lengths (and double data
     under PERSIST_STATIC and PERSIST_STATIC_SMALL_H); PERSIST_DYNAMIC without a plan built for
     the batch is INVALID_VALUE (ocd_rnn_check_algo). They compute what STANDARD computes, on the
     same layer loop; an inference on CUDA runs each pseudo-layer's steps as one persistent
     kernel where its weights fit on chip (rnn_exec.c), within rounding of STANDARD's. */
#include "adv/rnn_exec.h"

#include "core/argcheck.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/handle.h"
#include "core/tensor.h"
#include "ops/dropout.h"

#include <stddef.h>
#include <stdio.h>

bool ocd_rnn_trailing_ones(const struct ocd_tensor_view *v, int rank)
{
    if (v->rank < rank) return false;
    for (int i = rank; i < v->rank; i++)
        if (v->dims[i] != 1) return false;
    return true;
}

/* A state tensor: (layers * dirs) x batch x width, packed, of the data type; dims of 1 may
   follow (PyTorch pads these descriptors to 5 dims). */
static cudnnStatus_t check_state(cudnnTensorDescriptor_t desc, const char *name, const struct ocd_rnn_problem *p,
                                 int batch, int width)
{
    struct ocd_tensor_view v;
    OCD_TRY(ocd_tensor_get(desc, name, &v));
    int64_t want[3] = {(int64_t)p->layers * p->dirs, batch, width};
    if (!ocd_rnn_trailing_ones(&v, 3) || v.dims[0] != want[0] || v.dims[1] != want[1] || v.dims[2] != want[2])
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s must be %lld x %lld x %lld (layers x dirs, batch, %s)", name,
                        (long long)want[0], (long long)want[1], (long long)want[2],
                        width == p->hidden_size ? "hiddenSize" : "projSize");
    if (v.strides[2] != 1 || v.strides[1] != width || v.strides[0] != (int64_t)batch * width)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s must be packed", name);
    if (v.dtype != p->dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s holds %s, the network %s", name, ocd_dtype_name(v.dtype),
                        ocd_dtype_name(p->dtype));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_check_data_pair(const struct ocd_rnn_problem *p, const struct ocd_rnn_data *x,
                                      const struct ocd_rnn_data *y)
{
    if (x->dtype != p->dtype || y->dtype != p->dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc and yDesc hold %s and %s, the network %s",
                        ocd_dtype_name(x->dtype), ocd_dtype_name(y->dtype), ocd_dtype_name(p->dtype));
    if (x->vec != p->input_size)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc's vectors are %d wide, inputSize is %d", x->vec, p->input_size);
    if (y->vec != p->dirs * p->proj_size)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "yDesc's vectors are %d wide, not dirs x projSize = %d", y->vec,
                        p->dirs * p->proj_size);
    if (x->layout != y->layout || x->max_seq != y->max_seq || x->batch != y->batch)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc and yDesc differ in layout, maxSeqLength or batch");
    for (int n = 0; n < x->batch; n++)
        if (x->seq_lengths[n] != y->seq_lengths[n])
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "sequence %d is %d long in xDesc, %d in yDesc", n,
                            x->seq_lengths[n], y->seq_lengths[n]);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_check_states(const struct ocd_rnn_problem *p, int batch, cudnnTensorDescriptor_t hDesc,
                                   bool h_used, cudnnTensorDescriptor_t cDesc, bool c_used)
{
    bool lstm = p->cell == CUDNN_LSTM;
    if (hDesc == NULL && !h_used && (ocd_log_mask & CUDNN_SEV_INFO_EN))
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "hDesc and the hidden state's pointers are NULL: that state is neither read nor written "
                        "(the 8.2 text asks for hDesc)");
    if (hDesc != NULL || h_used) OCD_TRY(check_state(hDesc, "hDesc", p, batch, p->proj_size));
    if (lstm && (cDesc != NULL || c_used)) OCD_TRY(check_state(cDesc, "cDesc", p, batch, p->hidden_size));
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_check_y(const void *y, bool training)
{
    if (y != NULL || training) return ocd_check_data(y, "y");
    if (ocd_log_mask & CUDNN_SEV_INFO_EN)
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "y is NULL in inference: the final states are computed, no output sequence is written (the "
                        "8.2 text asks for y)");
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_check_dropout(const struct ocd_rnn_problem *p)
{
    if (ocd_rnn_dropout_on(p) && p->dropout_states == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "dropout %g between layers, but dropoutDesc has no states",
                        (double)p->dropout);
    return CUDNN_STATUS_SUCCESS;
}

/* The persistent algorithms (cuDNN 8.2 "Features of RNN Functions" and the compute calls'
   NOT_SUPPORTED list): none takes variable sequence lengths within the batch; PERSIST_STATIC
   and PERSIST_STATIC_SMALL_H take no double data (PERSIST_DYNAMIC does); PERSIST_DYNAMIC runs
   the plan cudnnBuildRNNDynamic or cudnnSetPersistentRNNPlan made for the batch
   (INVALID_VALUE without one). The LSTM projection, which none takes, is refused when the
   descriptor is set. */
cudnnStatus_t ocd_rnn_check_algo(const struct ocd_rnn_problem *p, const struct ocd_rnn_data *x)
{
    if (p->algo == CUDNN_RNN_ALGO_STANDARD) return CUDNN_STATUS_SUCCESS;
    for (int n = 1; n < x->batch; n++)
        if (x->seq_lengths[n] != x->seq_lengths[0])
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                            "algo %d (persistent) takes no variable sequence lengths: sequence %d is %d long, "
                            "sequence 0 %d",
                            (int)p->algo, n, x->seq_lengths[n], x->seq_lengths[0]);
    if (p->dtype == CUDNN_DATA_DOUBLE && p->algo != CUDNN_RNN_ALGO_PERSIST_DYNAMIC)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "algo %d takes no double data (CUDNN_RNN_ALGO_PERSIST_DYNAMIC does)",
                        (int)p->algo);
    if (p->algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC && p->dynamic_batch != x->batch) {
        if (p->dynamic_batch == 0)
            return OCD_FAIL(CUDNN_STATUS_INVALID_VALUE,
                            "CUDNN_RNN_ALGO_PERSIST_DYNAMIC: call cudnnBuildRNNDynamic (or cudnnSetPersistentRNNPlan) "
                            "for the batch of %d first",
                            x->batch);
        return OCD_FAIL(CUDNN_STATUS_INVALID_VALUE,
                        "CUDNN_RNN_ALGO_PERSIST_DYNAMIC: the plan was built for a batch of %d, the call has %d",
                        p->dynamic_batch, x->batch);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_check_space(const char *name, size_t given, const void *ptr, size_t need)
{
    if (given < need)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%sSize %zu is less than the %zu bytes needed", name, given, need);
    if (need > 0 && ptr == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is NULL", name);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_rnn_prepare_v8(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, const int32_t *devSeqLengths,
                                 cudnnRNNDataDescriptor_t xDesc, cudnnRNNDataDescriptor_t yDesc,
                                 cudnnTensorDescriptor_t hDesc, bool h_used, cudnnTensorDescriptor_t cDesc,
                                 bool c_used, size_t weightSpaceSize, const void *weightSpace,
                                 struct ocd_rnn_problem *p, struct ocd_rnn_call *c)
{
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_rnn_problem_from_desc(rnnDesc, p));
    OCD_TRY(ocd_rnn_data_from_desc(xDesc, &c->x));
    OCD_TRY(ocd_rnn_data_from_desc(yDesc, &c->y));
    OCD_TRY(ocd_rnn_check_data_pair(p, &c->x, &c->y));
    OCD_TRY(ocd_rnn_check_states(p, c->x.batch, hDesc, h_used, cDesc, c_used));
    if (devSeqLengths == NULL && (ocd_log_mask & CUDNN_SEV_INFO_EN))
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "devSeqLengths is NULL: the sequence lengths of xDesc are used (cuDNN 8.9 makes the "
                        "argument optional; the 8.2 text asks for it)");
    OCD_TRY(ocd_rnn_check_space("weightSpace", weightSpaceSize, weightSpace,
                                (size_t)ocd_rnn_weight_elems(p) * ocd_dtype_scalar_size(p->dtype)));
    OCD_TRY(ocd_rnn_check_algo(p, &c->x));
    c->p = p;
    c->dev_lengths = devSeqLengths;
    c->w = weightSpace;
    return CUDNN_STATUS_SUCCESS;
}

/* The benchmark's rnn problem string of a call (bench/ops_rnn.c), or "" where the call has
   something its keys cannot say: the benchmark builds double-bias, linear-input networks without
   projection, clipping or dropout, with its own compute type and math type (float and
   CUDNN_TENSOR_OP_MATH for half and bfloat16 data, else the data type and CUDNN_DEFAULT_MATH), on
   sequence-major data whose sequences all run maxSeqLength steps (ragged lengths and the
   batch-major layout cannot be said). Inference replays as pass=inf, a training forward as pass=fwd,
   either backward call (data: dx set; weights: dw set) as pass=bwd, which times the pair on a
   training forward's reserve; wscale=1 (the weights are drawn afresh). */
static void rnn_replay(const struct ocd_rnn_call *c, char *buf, size_t size)
{
    const struct ocd_rnn_problem *p = c->p;
    const struct ocd_rnn_data *x = &c->x;
    bool low = p->dtype == CUDNN_DATA_HALF || p->dtype == CUDNN_DATA_BFLOAT16;
    buf[0] = '\0';
    if (p->bias_mode != CUDNN_RNN_DOUBLE_BIAS || p->input_mode != CUDNN_LINEAR_INPUT ||
        p->proj_size != p->hidden_size || p->clip_mode != CUDNN_RNN_CLIP_NONE || p->dropout != 0 ||
        p->math_prec != (low ? CUDNN_DATA_FLOAT : p->dtype) ||
        p->math_type != (low ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH) ||
        x->layout == CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED)
        return;
    for (int b = 0; b < x->batch; b++)
        if (x->seq_lengths[b] != x->max_seq) return;
    static const char *const cells[] = {"relu", "tanh", "lstm", "gru"}; /* cudnnRNNMode_t order */
    static const char *const algos[] = {"standard", "persist_static", "persist_dynamic"};
    if ((unsigned)p->cell >= OCD_ARRAY_LEN(cells) || (unsigned)p->algo >= OCD_ARRAY_LEN(algos)) return;
    snprintf(buf, size,
             "op=rnn cell=%s algo=%s dt=%s t=%d n=%d input=%d hidden=%d layers=%d dirs=%d pass=%s wscale=1",
             cells[p->cell], algos[p->algo], ocd_check_dtype_name(p->dtype), x->max_seq, x->batch, p->input_size,
             p->hidden_size, p->layers, p->dirs, c->dx != NULL || c->dw != NULL ? "bwd" : c->training ? "fwd" : "inf");
}

/* The forward pass with the run signature of an implementation entry (core/check.h's drivers). */
static cudnnStatus_t forward_driver(cudnnHandle_t handle, const void *call, void *workspace, size_t workspace_bytes)
{
    (void)workspace, (void)workspace_bytes;
    return ocd_rnn_forward_run(handle, call);
}

cudnnStatus_t ocd_rnn_forward_checked(cudnnHandle_t handle, const struct ocd_rnn_call *c, const char *op)
{
    struct ocd_rnn_call f = *c;
    f.drop_states = c->training && ocd_rnn_dropout_on(c->p) ? c->p->dropout_states : NULL;
    return ocd_rnn_run_checked(handle, &f, op, "rnn_forward", forward_driver);
}

cudnnStatus_t ocd_rnn_run_checked(cudnnHandle_t handle, const struct ocd_rnn_call *c, const char *op, const char *name,
                                  cudnnStatus_t (*run)(cudnnHandle_t handle, const void *call, void *workspace,
                                                       size_t workspace_bytes))
{
    if (!ocd_check_enabled()) return run(handle, c, NULL, 0);
    const struct ocd_rnn_problem *p = c->p;
    const bool forward = c->dx == NULL && c->dw == NULL;
    struct ocd_check_call call = {
        .op = op, .problem_size = sizeof *c,
        .tolerance = ocd_check_driver_tolerance(p->dtype, ocd_rnn_gemm_compute(p) == OCD_GEMM_COMPUTE_TF32)};
    rnn_replay(c, call.replay, sizeof call.replay);
    const int64_t states = (int64_t)p->layers * p->dirs * c->x.batch;
    const int64_t xs = ocd_rnn_data_vectors(&c->x) * c->x.vec, ys = ocd_rnn_data_vectors(&c->y) * c->y.vec;
    const bool lstm = p->cell == CUDNN_LSTM;
    size_t ws, rs;
    ocd_rnn_space_sizes(p, &c->x, c->training, &ws, &rs);
#define FIELD(f) offsetof(struct ocd_rnn_call, f)
#define ADD(f, t, n, out) ocd_check_add_array(&call, FIELD(f), t, n, out)
    /* the outputs first (OPENCUDNN_TEST_BREAK perturbs the first), then every pointer the pass may read */
    ADD(yp, p->dtype, ys, forward);
    ADD(hy, p->dtype, states * p->proj_size, true);
    if (lstm) ADD(cy, p->dtype, states * p->hidden_size, true);
    ADD(dx, p->dtype, xs, true);
    ADD(dhx, p->dtype, states * p->proj_size, true);
    if (lstm) ADD(dcx, p->dtype, states * p->hidden_size, true);
    ADD(dw, p->dtype, ocd_rnn_weight_elems(p), true);
    if (c->drop_states != NULL) ocd_dropout_check_states(&call, FIELD(drop_states));
    ADD(xp, p->dtype, xs, false);
    ADD(hx, p->dtype, states * p->proj_size, false);
    if (lstm) ADD(cx, p->dtype, states * p->hidden_size, false);
    ADD(dy, p->dtype, ys, false);
    ADD(dhy, p->dtype, states * p->proj_size, false);
    if (lstm) ADD(dcy, p->dtype, states * p->hidden_size, false);
    ADD(w, p->dtype, ocd_rnn_weight_elems(p), false);
    ADD(dev_lengths, CUDNN_DATA_INT32, c->x.batch, false);
    ocd_check_add_scratch(&call, FIELD(ws), ws);
    /* the reserve: the forward's to fill; a backward's input, copied (its layout and contents are
       the same on every backend: rnn_exec.h) */
    if (forward && c->training) ocd_check_add_scratch(&call, FIELD(rs), rs);
    if (!forward) ADD(rs, CUDNN_DATA_INT8, (int64_t)rs, false);
#undef ADD
#undef FIELD
    return ocd_check_run_driver(handle, name, run, c, &call);
}

cudnnStatus_t CUDNNWINAPI cudnnGetRNNTempSpaceSizes(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc,
                                                    cudnnForwardMode_t fMode, cudnnRNNDataDescriptor_t xDesc,
                                                    size_t *workSpaceSize, size_t *reserveSpaceSize)
{
    OCD_LOG_API("handle=%p rnnDesc=%p fMode=%d xDesc=%p workSpaceSize=%p reserveSpaceSize=%p", (void *)handle,
                (void *)rnnDesc, (int)fMode, (void *)xDesc, (void *)workSpaceSize, (void *)reserveSpaceSize);
    OCD_CHECK_HANDLE(handle);
    struct ocd_rnn_problem p;
    struct ocd_rnn_data x;
    OCD_TRY(ocd_rnn_problem_from_desc(rnnDesc, &p));
    OCD_TRY(ocd_rnn_data_from_desc(xDesc, &x));
    if ((unsigned)fMode > CUDNN_FWD_MODE_TRAINING)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "fMode %d is not a cudnnForwardMode_t", (int)fMode);
    if (x.vec != p.input_size || x.dtype != p.dtype)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc holds %s vectors of %d, the network %s of %d",
                        ocd_dtype_name(x.dtype), x.vec, ocd_dtype_name(p.dtype), p.input_size);
    if (workSpaceSize == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "workSpaceSize is NULL");
    size_t ws, rs;
    ocd_rnn_space_sizes(&p, &x, fMode == CUDNN_FWD_MODE_TRAINING, &ws, &rs);
    *workSpaceSize = ws;
    if (reserveSpaceSize) *reserveSpaceSize = rs;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnRNNForward(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnForwardMode_t fwdMode,
                                          const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
                                          cudnnRNNDataDescriptor_t yDesc, void *y, cudnnTensorDescriptor_t hDesc,
                                          const void *hx, void *hy, cudnnTensorDescriptor_t cDesc, const void *cx,
                                          void *cy, size_t weightSpaceSize, const void *weightSpace,
                                          size_t workSpaceSize, void *workSpace, size_t reserveSpaceSize,
                                          void *reserveSpace)
{
    OCD_LOG_API("handle=%p rnnDesc=%p fwdMode=%d devSeqLengths=%p xDesc=%p x=%p yDesc=%p y=%p hDesc=%p hx=%p hy=%p "
                "cDesc=%p cx=%p cy=%p weightSpaceSize=%zu weightSpace=%p workSpaceSize=%zu workSpace=%p "
                "reserveSpaceSize=%zu reserveSpace=%p",
                (void *)handle, (void *)rnnDesc, (int)fwdMode, (const void *)devSeqLengths, (void *)xDesc, x,
                (void *)yDesc, y, (void *)hDesc, hx, hy, (void *)cDesc, cx, cy, weightSpaceSize, weightSpace,
                workSpaceSize, workSpace, reserveSpaceSize, reserveSpace);
    struct ocd_rnn_problem p;
    struct ocd_rnn_call c = {0};
    OCD_TRY(ocd_rnn_prepare_v8(handle, rnnDesc, devSeqLengths, xDesc, yDesc, hDesc, hx || hy, cDesc, cx || cy,
                               weightSpaceSize, weightSpace, &p, &c));
    if ((unsigned)fwdMode > CUDNN_FWD_MODE_TRAINING)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "fwdMode %d is not a cudnnForwardMode_t", (int)fwdMode);
    c.training = fwdMode == CUDNN_FWD_MODE_TRAINING;
    if (c.training) OCD_TRY(ocd_rnn_check_dropout(&p));
    OCD_TRY(ocd_check_data(x, "x"));
    OCD_TRY(ocd_rnn_check_y(y, c.training));
    size_t ws, rs;
    ocd_rnn_space_sizes(&p, &c.x, c.training, &ws, &rs);
    OCD_TRY(ocd_rnn_check_space("workSpace", workSpaceSize, workSpace, ws));
    if (c.training) OCD_TRY(ocd_rnn_check_space("reserveSpace", reserveSpaceSize, reserveSpace, rs));
    c.xp = x, c.hx = hx, c.cx = cx;
    c.yp = y, c.hy = hy, c.cy = cy;
    c.ws = workSpace, c.ws_bytes = workSpaceSize;
    c.rs = reserveSpace, c.rs_bytes = reserveSpaceSize;
    return ocd_rnn_forward_checked(handle, &c, "cudnnRNNForward");
}
