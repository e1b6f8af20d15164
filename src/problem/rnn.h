/* rnn.h: the RNN problem (what an RNN descriptor and an RNN data descriptor say, with no API
   struct in it), the layout of RNN data, and the layout of the weight space, which every RNN
   entry point and both backends share.

   Cells (cuDNN 8.2): RELU and TANH have 1 gate, LSTM 4 (i, f, g, o), GRU 3 (r, z, n). A layer runs
   per direction ("pseudo-layer" layer * dirs + dir); linear-layer IDs 0 .. G-1 are the input
   matrices W of the gates (rows = hidden, cols = the layer's input), IDs G .. 2G-1 the recurrent
   matrices R (rows = hidden, cols = proj), and for LSTM with a recurrent projection (proj <
   hidden) ID 8 the projection (rows = proj, cols = hidden). The first layer's input is
   input_size wide, a deeper layer's proj * dirs (both directions' outputs side by side). Under
   CUDNN_SKIP_INPUT the first layer has no input matrices (its input, input_size == hidden wide,
   enters each gate as it is); its input biases remain.

   Biases, one hidden-long vector per linear-layer ID: DOUBLE has both sets (IDs 0 .. 2G-1),
   SINGLE_INP only the input set (0 .. G-1), SINGLE_REC only the recurrent set (G .. 2G-1), NO
   none. The projection has no bias.

   The weight space, in elements of the data type, without padding: first the matrices of every
   pseudo-layer (pseudo-layer 0, 1, ...; within one, in linear-layer ID order: W of every gate,
   R of every gate, the projection), then the biases of every pseudo-layer (in the same order).
   Within a pseudo-layer the W matrices are thus one contiguous (G * hidden) x cols block, gate by
   gate, and likewise the R matrices and each bias set: what programs written for cuDNN rely on
   (PyTorch views a layer's W as one tensor; MXNet and TensorFlow's canonical form concatenate all
   matrices before all biases). A matrix is row-major: element (r, c) at offset + r * cols + c.

   Data (cudnnRNNDataDescriptor_t): vectors of vec elements, packed; at step t of sequence b:
   SEQ_MAJOR_UNPACKED at vector t * batch + b, BATCH_MAJOR_UNPACKED at b * max_seq + t,
   SEQ_MAJOR_PACKED (lengths non-increasing) at the number of vectors of the steps before t,
   plus b. Hidden and cell states are (layers * dirs) x batch x proj and x hidden, packed. */
#ifndef OCD_PROBLEM_RNN_H
#define OCD_PROBLEM_RNN_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The linear-layer ID of the LSTM recurrent projection. */
#define OCD_RNN_PROJECTION_ID 8

struct ocd_rnn_problem {
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias_mode;
    cudnnDirectionMode_t dir_mode;
    cudnnRNNInputMode_t input_mode;
    cudnnDataType_t dtype;     /* of data, states and weights */
    cudnnDataType_t math_prec; /* the compute type */
    cudnnMathType_t math_type;
    int dirs;                  /* 1 or 2 */
    int layers;
    int gates;                 /* 1, 1, 4, 3 */
    int input_size;            /* the first layer's input vector */
    int hidden_size;
    int proj_size;             /* == hidden_size when there is no projection */
    /* Cell clipping (LSTM; cudnnRNNSetClip_v8): the cell state is clamped to [lclip, rclip] when
       clip_mode is MINMAX; a NaN stays NaN under CUDNN_PROPAGATE_NAN. */
    cudnnRNNClipMode_t clip_mode;
    cudnnNanPropagation_t clip_nan;
    double lclip, rclip;
    uint32_t aux_flags;        /* CUDNN_RNN_PADDED_IO_ENABLED or 0 */
    bool padded_io;            /* aux_flags has CUDNN_RNN_PADDED_IO_ENABLED */
    /* Dropout on the input of every layer but the first (the descriptor's, read when the
       problem is built). dropout_desc is NULL when none was given. */
    cudnnDropoutDescriptor_t dropout_desc;
    float dropout;             /* probability; 0 when none */
    void *dropout_states;      /* the states buffer (problem/dropout.h), NULL when none */
    /* PERSIST_DYNAMIC: the mini batch its plan was built for (cudnnBuildRNNDynamic or a
       persistent plan); 0 when none was built. */
    int dynamic_batch;
};

/* What an RNN data descriptor says. seq_lengths is the descriptor's own host copy (batch ints),
   valid while the descriptor lives. */
struct ocd_rnn_data {
    cudnnDataType_t dtype;
    cudnnRNNDataLayout_t layout;
    int max_seq, batch, vec;
    const int *seq_lengths;
    bool has_fill;   /* paddingFill was given: padding positions of an output take `fill` */
    double fill;
};

/* A matrix or bias of the weight space: offset in elements from its start, and the shape. A
   missing one (SKIP input, a bias the mode lacks, no projection) has rows == cols == 0. */
struct ocd_rnn_param {
    int64_t offset;
    int rows, cols;
};

/* ---- building problems from descriptors (adv/rnn_desc.c) ---------------------------------- */

/* The problem of a set RNN descriptor. BAD_PARAM, logged, when it is not a live descriptor or
   was never set. */
cudnnStatus_t ocd_rnn_problem_from_desc(cudnnRNNDescriptor_t desc, struct ocd_rnn_problem *p);

/* The legacy calls' problem: the descriptor's, with the input size and data type of the first
   step's input xDesc (batch x input_size [x 1], packed). BAD_PARAM, logged, when xDesc is not a
   set tensor of at least 2 dims, or under SKIP input its width differs from the hidden size. */
cudnnStatus_t ocd_rnn_problem_from_legacy(cudnnRNNDescriptor_t desc, cudnnTensorDescriptor_t xDesc,
                                          struct ocd_rnn_problem *p);

/* The layout of a set RNN data descriptor. BAD_PARAM, logged, when it is not a live descriptor
   or was never set. */
cudnnStatus_t ocd_rnn_data_from_desc(cudnnRNNDataDescriptor_t desc, struct ocd_rnn_data *d);

/* ---- sizes ---------------------------------------------------------------------------------- */

static inline int ocd_rnn_gates_of(cudnnRNNMode_t cell)
{
    return cell == CUDNN_LSTM ? 4 : cell == CUDNN_GRU ? 3 : 1;
}

static inline bool ocd_rnn_has_projection(const struct ocd_rnn_problem *p)
{
    return p->cell == CUDNN_LSTM && p->proj_size < p->hidden_size;
}

/* The width of one direction's output of a layer (y holds dirs of them side by side). */
static inline int ocd_rnn_out_size(const struct ocd_rnn_problem *p)
{
    return p->proj_size;
}

/* The width of a layer's input vector. */
static inline int ocd_rnn_layer_input(const struct ocd_rnn_problem *p, int layer)
{
    return layer == 0 ? p->input_size : p->proj_size * p->dirs;
}

/* True when linear-layer ID `id` names a matrix of this cell (whether or not it is present). */
static inline bool ocd_rnn_id_valid(const struct ocd_rnn_problem *p, int id)
{
    return (id >= 0 && id < 2 * p->gates) || (p->cell == CUDNN_LSTM && id == OCD_RNN_PROJECTION_ID);
}

/* Whether the bias set of the input (rec false) or recurrent (rec true) matrices exists. */
static inline bool ocd_rnn_has_bias(const struct ocd_rnn_problem *p, bool rec)
{
    switch (p->bias_mode) {
    case CUDNN_RNN_DOUBLE_BIAS: return true;
    case CUDNN_RNN_SINGLE_INP_BIAS: return !rec;
    case CUDNN_RNN_SINGLE_REC_BIAS: return rec;
    default: return false;
    }
}

/* The shape of matrix `id` of a pseudo-layer (rows == cols == 0 when it is missing). */
static inline void ocd_rnn_matrix_shape(const struct ocd_rnn_problem *p, int pseudo, int id, int *rows, int *cols)
{
    int layer = pseudo / p->dirs;
    *rows = *cols = 0;
    if (id == OCD_RNN_PROJECTION_ID && p->cell == CUDNN_LSTM) {
        if (ocd_rnn_has_projection(p)) *rows = p->proj_size, *cols = p->hidden_size;
    } else if (id >= 0 && id < p->gates) {
        if (layer > 0 || p->input_mode != CUDNN_SKIP_INPUT)
            *rows = p->hidden_size, *cols = ocd_rnn_layer_input(p, layer);
    } else if (id >= p->gates && id < 2 * p->gates) {
        *rows = p->hidden_size, *cols = p->proj_size;
    }
}

/* Elements of a pseudo-layer's matrices, and of its biases. */
static inline int64_t ocd_rnn_pseudo_matrix_elems(const struct ocd_rnn_problem *p, int pseudo)
{
    int64_t n = 0;
    int rows, cols;
    for (int id = 0; id < 2 * p->gates; id++) {
        ocd_rnn_matrix_shape(p, pseudo, id, &rows, &cols);
        n += (int64_t)rows * cols;
    }
    ocd_rnn_matrix_shape(p, pseudo, OCD_RNN_PROJECTION_ID, &rows, &cols);
    return n + (int64_t)rows * cols;
}

static inline int64_t ocd_rnn_pseudo_bias_elems(const struct ocd_rnn_problem *p)
{
    return ((int64_t)ocd_rnn_has_bias(p, false) + ocd_rnn_has_bias(p, true)) * p->gates * p->hidden_size;
}

/* Elements of the whole weight space (multiply by the data type's size for bytes). */
static inline int64_t ocd_rnn_weight_elems(const struct ocd_rnn_problem *p)
{
    int64_t n = 0, pseudo_layers = (int64_t)p->layers * p->dirs;
    for (int q = 0; q < pseudo_layers; q++) n += ocd_rnn_pseudo_matrix_elems(p, q);
    return n + pseudo_layers * ocd_rnn_pseudo_bias_elems(p);
}

/* Matrix `id` of a pseudo-layer (the caller has checked ocd_rnn_id_valid and the range of
   pseudo): where it lies and its shape. */
static inline struct ocd_rnn_param ocd_rnn_matrix(const struct ocd_rnn_problem *p, int pseudo, int id)
{
    struct ocd_rnn_param m = {0, 0, 0};
    for (int q = 0; q < pseudo; q++) m.offset += ocd_rnn_pseudo_matrix_elems(p, q);
    int last = id == OCD_RNN_PROJECTION_ID ? 2 * p->gates : id;
    for (int k = 0; k < last; k++) {
        int rows, cols;
        ocd_rnn_matrix_shape(p, pseudo, k, &rows, &cols);
        m.offset += (int64_t)rows * cols;
    }
    ocd_rnn_matrix_shape(p, pseudo, id, &m.rows, &m.cols);
    if (m.rows == 0) m.offset = 0;
    return m;
}

/* Bias `id` of a pseudo-layer (same preconditions): hidden rows, one column; missing (0 x 0)
   when the bias mode lacks its set and for the projection. */
static inline struct ocd_rnn_param ocd_rnn_bias(const struct ocd_rnn_problem *p, int pseudo, int id)
{
    struct ocd_rnn_param b = {0, 0, 0};
    if (id < 0 || id >= 2 * p->gates) return b;
    bool rec = id >= p->gates;
    if (!ocd_rnn_has_bias(p, rec)) return b;
    int64_t pseudo_layers = (int64_t)p->layers * p->dirs;
    for (int q = 0; q < pseudo_layers; q++) b.offset += ocd_rnn_pseudo_matrix_elems(p, q);
    b.offset += pseudo * ocd_rnn_pseudo_bias_elems(p);
    int before = rec && ocd_rnn_has_bias(p, false) ? id : id - (rec ? p->gates : 0);
    b.offset += (int64_t)before * p->hidden_size;
    b.rows = p->hidden_size;
    b.cols = 1;
    return b;
}

/* ---- data layout ------------------------------------------------------------------------------ */

/* Vectors the data holds: the sum of the lengths when packed, max_seq * batch otherwise. */
static inline int64_t ocd_rnn_data_vectors(const struct ocd_rnn_data *d)
{
    if (d->layout != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED) return (int64_t)d->max_seq * d->batch;
    int64_t n = 0;
    for (int b = 0; b < d->batch; b++) n += d->seq_lengths[b];
    return n;
}

/* SEQ_MAJOR_PACKED: starts[t] = the vectors of the steps before t (the sequences still running
   at a step are the first ones, lengths being non-increasing), for t = 0 .. max_seq. */
static inline void ocd_rnn_data_packed_starts(const struct ocd_rnn_data *d, int64_t *starts)
{
    starts[0] = 0;
    for (int t = 0; t < d->max_seq; t++) {
        int running = 0;
        while (running < d->batch && d->seq_lengths[running] > t) running++;
        starts[t + 1] = starts[t] + running;
    }
}

/* The vector of step t of sequence b (t < its length for packed data; starts from
   ocd_rnn_data_packed_starts, unused otherwise). */
static inline int64_t ocd_rnn_data_vector(const struct ocd_rnn_data *d, const int64_t *starts, int t, int b)
{
    switch (d->layout) {
    case CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED: return starts[t] + b;
    case CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED: return (int64_t)b * d->max_seq + t;
    default: return (int64_t)t * d->batch + b;
    }
}

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_RNN_H */
