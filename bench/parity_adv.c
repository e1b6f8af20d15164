/* parity_adv.c: the parity probes of the adv library: a small LSTM through the v8 RNN API (the
   clip and persistent-algorithm questions), RNN data descriptors, and the CTC loss (its numbers,
   and the labels no alignment fits: too long for the input, a repeat with no room for its blank,
   an empty label). The frame and the line format: parity.c. */
#include "parity.h"

/* ---- RNN: a small LSTM through the v8 API --------------------------------------------------------- */

/* One layer, unidirectional, input 3, hidden 4, T 5, batch 2, float with DEFAULT_MATH (the compare
   script turns TF32 off), double bias, SEQ_MAJOR_UNPACKED data: ragged, lengths 5 and 3 with
   padded I/O and the padding filled with 0; else both 5, no padded I/O and no fill (the
   benchmark's form, which the vendor's persistent algorithms take). Every LSTM probe draws the
   same inputs. Weights are filled matrix by matrix through cudnnGetRNNWeightParams, so
   that a library's weight-space layout does not matter; the cell's values grow past the clip
   range within the sequence. */
enum { RNN_T = 5, RNN_N = 2, RNN_IN = 3, RNN_H = 4 };

struct lstm {
    cudnnRNNDescriptor_t desc;
    cudnnRNNDataDescriptor_t x_desc, y_desc;
    cudnnTensorDescriptor_t h_desc;
    int *dev_lengths;
    size_t weight_bytes, work_bytes, reserve_bytes;
    float *x, *y, *hx, *cx, *hy, *cy, *w;
    void *work, *reserve;
};

static bool rnn_data(struct probe_out *o, cudnnRNNDataDescriptor_t *d, int vector, const int *lengths, bool padded)
{
    float fill = 0;
    if (!SETUP(o, cudnnCreateRNNDataDescriptor(d))) return false;
    hold(o, *d, HELD_RNN_DATA);
    return SETUP(o, cudnnSetRNNDataDescriptor(*d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, RNN_T,
                                              RNN_N, vector, lengths, padded ? &fill : NULL));
}

/* Every matrix and bias of the weight space at base, in the order (linLayerID 0..7, matrix then
   bias): filled from the probe's stream when fill, else read back as KEY. */
static bool rnn_weights(struct probe_out *o, struct lstm *r, float *base, bool fill, const char *key)
{
    cudnnTensorDescriptor_t m = NULL, b = NULL;
    if (!SETUP(o, cudnnCreateTensorDescriptor(&m))) return false;
    hold(o, m, HELD_TENSOR);
    if (!SETUP(o, cudnnCreateTensorDescriptor(&b))) return false;
    hold(o, b, HELD_TENSOR);
    double *all = NULL;
    size_t nall = 0;
    bool ok = true;
    for (int id = 0; id < 8 && ok; id++) {
        void *addr[2] = {NULL, NULL};
        ok = SETUP(o, cudnnGetRNNWeightParams(parity_handle, r->desc, 0, r->weight_bytes, base, id, m, &addr[0], b,
                                              &addr[1]));
        for (int k = 0; k < 2 && ok; k++) {
            cudnnDataType_t dt;
            int nd = 0, dims[8], strides[8];
            ok = SETUP(o, cudnnGetTensorNdDescriptor(k ? b : m, 8, &dt, &nd, dims, strides));
            size_t n = 1;
            for (int i = 0; i < nd; i++) n *= (size_t)dims[i];
            if (!ok || addr[k] == NULL) continue;
            float *h = malloc(n * sizeof(float));
            if (h == NULL || (all = realloc(all, (nall + n) * sizeof(double))) == NULL) die("out of host memory");
            if (fill) {
                for (size_t i = 0; i < n; i++) h[i] = (float)uniform(o, -0.9, 0.9);
                mem_copy(addr[k], h, n * sizeof(float), true);
            } else {
                device_sync();
                mem_copy(h, addr[k], n * sizeof(float), false);
                for (size_t i = 0; i < n; i++) all[nall + i] = h[i];
                nall += n;
            }
            free(h);
        }
    }
    if (ok && !fill) put_host(o, key, all, nall);
    free(all);
    return ok;
}

/* The descriptors, buffers and weights of the LSTM; clip [lclip, rclip] when lclip < rclip. */
static bool lstm_setup(struct probe_out *o, struct lstm *r, cudnnRNNAlgo_t algo, bool ragged, double lclip,
                       double rclip, cudnnForwardMode_t mode)
{
    const int lengths[RNN_N] = {RNN_T, ragged ? 3 : RNN_T};
    cudnnDropoutDescriptor_t dropout;
    size_t states_bytes = 0;
    if (!SETUP(o, cudnnCreateDropoutDescriptor(&dropout))) return false;
    hold(o, dropout, HELD_DROPOUT);
    if (!SETUP(o, cudnnDropoutGetStatesSize(parity_handle, &states_bytes))) return false;
    void *states = dev_bytes(o, states_bytes);
    if (!SETUP(o, cudnnSetDropoutDescriptor(dropout, parity_handle, 0.0f, states, states_bytes, 1))) return false;
    if (!SETUP(o, cudnnCreateRNNDescriptor(&r->desc))) return false;
    hold(o, r->desc, HELD_RNN);
    cudnnStatus_t s = cudnnSetRNNDescriptor_v8(r->desc, algo, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
                                               CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                               CUDNN_DEFAULT_MATH, RNN_IN, RNN_H, RNN_H, 1, dropout,
                                               ragged ? CUDNN_RNN_PADDED_IO_ENABLED : CUDNN_RNN_PADDED_IO_DISABLED);
    if (!setup_ok(o, "cudnnSetRNNDescriptor_v8", s)) return false;
    if (lclip < rclip &&
        !SETUP(o, cudnnRNNSetClip_v8(r->desc, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, lclip, rclip)))
        return false;
    if (!rnn_data(o, &r->x_desc, RNN_IN, lengths, ragged) || !rnn_data(o, &r->y_desc, RNN_H, lengths, ragged))
        return false;
    r->h_desc = tensor_nd(o, 3, (int[]){1, RNN_N, RNN_H}, (int[]){RNN_N * RNN_H, RNN_H, 1});
    if (r->h_desc == NULL) return false;
    r->dev_lengths = dev_bytes(o, sizeof lengths);
    mem_copy(r->dev_lengths, lengths, sizeof lengths, true);
    if (!SETUP(o, cudnnGetRNNWeightSpaceSize(parity_handle, r->desc, &r->weight_bytes))) return false;
    r->w = dev_bytes(o, r->weight_bytes);
    if (!rnn_weights(o, r, r->w, true, NULL)) return false;
    r->x = dev_random(o, RNN_T * RNN_N * RNN_IN, -1, 1);
    r->hx = dev_random(o, RNN_N * RNN_H, -0.5, 0.5);
    r->cx = dev_random(o, RNN_N * RNN_H, -0.5, 0.5);
    r->y = dev_fill(o, RNN_T * RNN_N * RNN_H, NAN);
    r->hy = dev_fill(o, RNN_N * RNN_H, NAN);
    r->cy = dev_fill(o, RNN_N * RNN_H, NAN);
    if (!SETUP(o, cudnnGetRNNTempSpaceSizes(parity_handle, r->desc, mode, r->x_desc, &r->work_bytes,
                                            &r->reserve_bytes)))
        return false;
    r->work = dev_bytes(o, r->work_bytes);
    r->reserve = dev_bytes(o, r->reserve_bytes);
    return true;
}

static cudnnStatus_t lstm_forward(struct lstm *r, cudnnForwardMode_t mode)
{
    return cudnnRNNForward(parity_handle, r->desc, mode, r->dev_lengths, r->x_desc, r->x, r->y_desc, r->y, r->h_desc,
                           r->hx, r->hy, r->h_desc, r->cx, r->cy, r->weight_bytes, r->w, r->work_bytes, r->work,
                           mode == CUDNN_FWD_MODE_TRAINING ? r->reserve_bytes : 0,
                           mode == CUDNN_FWD_MODE_TRAINING ? r->reserve : NULL);
}

static void put_forward(struct probe_out *o, struct lstm *r)
{
    put(o, "y", r->y, RNN_T * RNN_N * RNN_H);
    put(o, "hy", r->hy, RNN_N * RNN_H);
    put(o, "cy", r->cy, RNN_N * RNN_H);
}

enum lstm_pass { PASS_INFERENCE, PASS_TRAINING, PASS_BWD_DATA, PASS_BWD_WEIGHTS };

/* The ragged LSTM, clipped to [lclip, rclip] when lclip < rclip, through one pass (the backward
   passes after a training forward; backward weights after backward data, as the API orders). */
static void lstm_probe(struct probe_out *o, double lclip, double rclip, enum lstm_pass pass)
{
    struct lstm r = {0};
    o->rng = hash_string("lstm"); /* one set of inputs for every LSTM probe */
    cudnnForwardMode_t mode = pass == PASS_INFERENCE ? CUDNN_FWD_MODE_INFERENCE : CUDNN_FWD_MODE_TRAINING;
    if (!lstm_setup(o, &r, CUDNN_RNN_ALGO_STANDARD, true, lclip, rclip, mode)) return;
    cudnnStatus_t s = lstm_forward(&r, mode);
    if (pass <= PASS_TRAINING) {
        set_status(o, s);
        if (s == CUDNN_STATUS_SUCCESS) put_forward(o, &r);
        return;
    }
    if (!setup_ok(o, "cudnnRNNForward", s)) return;
    float *dy = dev_random(o, RNN_T * RNN_N * RNN_H, -1, 1);
    float *dhy = dev_random(o, RNN_N * RNN_H, -0.5, 0.5), *dcy = dev_random(o, RNN_N * RNN_H, -0.5, 0.5);
    float *dx = dev_fill(o, RNN_T * RNN_N * RNN_IN, NAN);
    float *dhx = dev_fill(o, RNN_N * RNN_H, NAN), *dcx = dev_fill(o, RNN_N * RNN_H, NAN);
    s = cudnnRNNBackwardData_v8(parity_handle, r.desc, r.dev_lengths, r.y_desc, r.y, dy, r.x_desc, dx, r.h_desc, r.hx,
                                dhy, dhx, r.h_desc, r.cx, dcy, dcx, r.weight_bytes, r.w, r.work_bytes, r.work,
                                r.reserve_bytes, r.reserve);
    if (pass == PASS_BWD_DATA) {
        set_status(o, s);
        if (s != CUDNN_STATUS_SUCCESS) return;
        put(o, "dx", dx, RNN_T * RNN_N * RNN_IN);
        put(o, "dhx", dhx, RNN_N * RNN_H);
        put(o, "dcx", dcx, RNN_N * RNN_H);
        return;
    }
    if (!setup_ok(o, "cudnnRNNBackwardData_v8", s)) return;
    float *dw = dev_fill(o, r.weight_bytes / sizeof(float), 0);
    s = cudnnRNNBackwardWeights_v8(parity_handle, r.desc, CUDNN_WGRAD_MODE_ADD, r.dev_lengths, r.x_desc, r.x, r.h_desc,
                                   r.hx, r.y_desc, r.y, r.weight_bytes, dw, r.work_bytes, r.work, r.reserve_bytes,
                                   r.reserve);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) rnn_weights(o, &r, dw, false, "dw");
}

/* The clip range of the probes: the cell leaves it within the sequence. */
#define CLIP_LO (-0.4)
#define CLIP_HI 0.5

static void lstm_fwd(struct probe_out *o) { lstm_probe(o, 0, 0, PASS_TRAINING); }
static void lstm_clip_fwd(struct probe_out *o) { lstm_probe(o, CLIP_LO, CLIP_HI, PASS_TRAINING); }
static void lstm_clip_inference(struct probe_out *o) { lstm_probe(o, CLIP_LO, CLIP_HI, PASS_INFERENCE); }
static void lstm_bwd_data(struct probe_out *o) { lstm_probe(o, 0, 0, PASS_BWD_DATA); }
static void lstm_clip_bwd_data(struct probe_out *o) { lstm_probe(o, CLIP_LO, CLIP_HI, PASS_BWD_DATA); }
static void lstm_bwd_weights(struct probe_out *o) { lstm_probe(o, 0, 0, PASS_BWD_WEIGHTS); }
static void lstm_clip_bwd_weights(struct probe_out *o) { lstm_probe(o, CLIP_LO, CLIP_HI, PASS_BWD_WEIGHTS); }

/* PERSIST_DYNAMIC (full lengths, inference): the descriptor's status, the forward without
   cudnnBuildRNNDynamic, and the forward after it. */
static void persist_dynamic(struct probe_out *o, int stage)
{
    struct lstm r = {0};
    o->rng = hash_string("lstm");
    if (!lstm_setup(o, &r, CUDNN_RNN_ALGO_PERSIST_DYNAMIC, false, 0, 0, CUDNN_FWD_MODE_INFERENCE)) return;
    if (stage == 0) {
        set_status(o, CUDNN_STATUS_SUCCESS);
        return;
    }
    if (stage == 2 && !SETUP(o, cudnnBuildRNNDynamic(parity_handle, r.desc, RNN_N))) return;
    cudnnStatus_t s = lstm_forward(&r, CUDNN_FWD_MODE_INFERENCE);
    set_status(o, s);
    if (s == CUDNN_STATUS_SUCCESS) put_forward(o, &r);
}

static void persist_dynamic_set(struct probe_out *o) { persist_dynamic(o, 0); }
static void persist_dynamic_unbuilt(struct probe_out *o) { persist_dynamic(o, 1); }
static void persist_dynamic_built(struct probe_out *o) { persist_dynamic(o, 2); }

/* cudnnSetRNNDataDescriptor with seqLengthArray NULL; where accepted, the lengths read back. */
static void rnn_data_null_lengths(struct probe_out *o, cudnnRNNDataLayout_t layout)
{
    cudnnRNNDataDescriptor_t d;
    if (!SETUP(o, cudnnCreateRNNDataDescriptor(&d))) return;
    hold(o, d, HELD_RNN_DATA);
    cudnnStatus_t s = cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, layout, RNN_T, RNN_N, RNN_IN, NULL, NULL);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    cudnnDataType_t dt;
    cudnnRNNDataLayout_t l;
    int T = 0, N = 0, V = 0, lengths[RNN_N] = {-1, -1};
    if (!SETUP(o, cudnnGetRNNDataDescriptor(d, &dt, &l, &T, &N, &V, RNN_N, lengths, NULL))) return;
    double v[RNN_N] = {lengths[0], lengths[1]};
    put_host(o, "lengths", v, RNN_N);
}

static void rnn_data_null_lengths_unpacked(struct probe_out *o)
{
    rnn_data_null_lengths(o, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED);
}
static void rnn_data_null_lengths_packed(struct probe_out *o)
{
    rnn_data_null_lengths(o, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED);
}

/* ---- CTC loss --------------------------------------------------------------------------------------- */

enum { CTC_T = 6, CTC_N = 2, CTC_A = 5 };

/* cudnnCTCLoss, DETERMINISTIC, SOFTMAX normalization: T 6, batch 2, alphabet 5 (0 the blank),
   the logits from the probe's stream, labels the two samples' labels one after the other, the
   descriptor's maximum label length their longest; costs and gradients where the loss succeeds. */
static void ctc_probe(struct probe_out *o, const int *labels, const int *label_lengths, const int *input_lengths)
{
    const int dims[3] = {CTC_T, CTC_N, CTC_A}, strides[3] = {CTC_N * CTC_A, CTC_A, 1};
    cudnnTensorDescriptor_t probs = tensor_nd(o, 3, dims, strides);
    cudnnTensorDescriptor_t grads = probs ? tensor_nd(o, 3, dims, strides) : NULL;
    cudnnCTCLossDescriptor_t ctc;
    int longest = label_lengths[0] > label_lengths[1] ? label_lengths[0] : label_lengths[1];
    if (grads == NULL || !SETUP(o, cudnnCreateCTCLossDescriptor(&ctc))) return;
    hold(o, ctc, HELD_CTC);
    if (!SETUP(o, cudnnSetCTCLossDescriptor_v8(ctc, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                               CUDNN_PROPAGATE_NAN, longest)))
        return;
    size_t ws = 0;
    if (!SETUP(o, cudnnGetCTCLossWorkspaceSize(parity_handle, probs, grads, labels, label_lengths, input_lengths,
                                               CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, ctc, &ws)))
        return;
    const size_t n = CTC_T * CTC_N * CTC_A;
    float *pd = dev_random(o, n, -2, 2), *gd = dev_fill(o, n, NAN), *cd = dev_fill(o, CTC_N, NAN);
    cudnnStatus_t s = cudnnCTCLoss(parity_handle, probs, pd, labels, label_lengths, input_lengths, cd, grads, gd,
                                   CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, ctc, dev_bytes(o, ws), ws);
    set_status(o, s);
    if (s != CUDNN_STATUS_SUCCESS) return;
    put(o, "costs", cd, CTC_N);
    put(o, "gradients", gd, n);
}

/* Labels {1, 2} over 6 steps and {3, 3, 4} (a repeat) over 5. */
static void ctc_loss(struct probe_out *o)
{
    ctc_probe(o, (const int[]){1, 2, 3, 3, 4}, (const int[]){2, 3}, (const int[]){6, 5});
}

/* Sample 0: 4 labels over 3 steps (no alignment; the 8.2 text does not say what it gets). */
static void ctc_label_longer_than_input(struct probe_out *o)
{
    ctc_probe(o, (const int[]){1, 2, 3, 4, 2, 1}, (const int[]){4, 2}, (const int[]){3, 6});
}

/* Sample 1: {3, 3} over 2 steps: no longer than the input, but the repeat needs a blank between
   (no alignment: an infinite cost, or a refusal?). */
static void ctc_repeat_needs_blank(struct probe_out *o)
{
    ctc_probe(o, (const int[]){1, 2, 3, 3}, (const int[]){2, 2}, (const int[]){6, 2});
}

/* Sample 0 has an empty label (its one alignment: blanks throughout). */
static void ctc_label_length_zero(struct probe_out *o)
{
    ctc_probe(o, (const int[]){2, 4}, (const int[]){0, 2}, (const int[]){6, 5});
}

const struct probe parity_adv_probes[] = {
    {"lstm_fwd", lstm_fwd},
    {"lstm_clip_fwd", lstm_clip_fwd},
    {"lstm_clip_inference", lstm_clip_inference},
    {"lstm_bwd_data", lstm_bwd_data},
    {"lstm_clip_bwd_data", lstm_clip_bwd_data},
    {"lstm_bwd_weights", lstm_bwd_weights},
    {"lstm_clip_bwd_weights", lstm_clip_bwd_weights},
    {"persist_dynamic_set", persist_dynamic_set},
    {"persist_dynamic_unbuilt", persist_dynamic_unbuilt},
    {"persist_dynamic_built", persist_dynamic_built},
    {"rnn_data_null_lengths_unpacked", rnn_data_null_lengths_unpacked},
    {"rnn_data_null_lengths_packed", rnn_data_null_lengths_packed},
    {"ctc_loss", ctc_loss},
    {"ctc_label_longer_than_input", ctc_label_longer_than_input},
    {"ctc_repeat_needs_blank", ctc_repeat_needs_blank},
    {"ctc_label_length_zero", ctc_label_length_zero},
};
const size_t parity_adv_count = ARRAY_LEN(parity_adv_probes);
