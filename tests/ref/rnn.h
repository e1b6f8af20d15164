/* ref/rnn.h: the reference recurrent networks in double, written from the cuDNN 8.2 API reference
   (cudnnRNNMode_t, cudnnRNNBiasMode_t, cudnnRNNInputMode_t, cudnnDirectionMode_t, the clip and
   projection functions) alone, independent of src/. One sequence at a time, step by step:

     RELU, TANH  h_t = act(W x_t + R h_{t-1} + b_W + b_R)
     LSTM        i, f, o = sigmoid(W_g x_t + R_g h_{t-1} + b_Wg + b_Rg), c' = tanh(... of gate 2)
                 c_t = f c_{t-1} + i c' (clipped to [lclip, rclip] when clipping is on)
                 h_t = o tanh(c_t); with a projection, the output and recurrent state is W_p h_t
                 cy is the last step's cell before the clip (as NVIDIA's library returns it)
     GRU         i (update), r (reset) = sigmoid(W_g x_t + R_g h_{t-1} + b_Wg + b_Rg)
                 h' = tanh(W_h x_t + r (R_h h_{t-1} + b_Rh) + b_Wh)
                 h_t = (1 - i) h' + i h_{t-1}

   Gates are numbered as cuDNN's linLayerID numbers the matrices: LSTM 0 input, 1 forget, 2 cell
   (new memory), 3 output; GRU 0 reset, 1 update, 2 new memory; RELU/TANH one gate. Layer l of a
   bidirectional network reads the outputs of both directions of layer l - 1 (forward first);
   the reverse direction runs over each sequence's own steps, last to first. SKIP input: layer 0
   has no W, x_t itself stands for W_g x_t in every gate (input size = hidden size). Steps at or
   past a sequence's length are neither read nor written; hy and cy are the states after each
   sequence's last step.

   Weights, in the reference's own layout (ref_rnn_param): per pseudo-layer (layer * dirs +
   direction), the G matrices W_g (hidden x in, row-major), the G matrices R_g (hidden x rec,
   row-major, rec = proj), the G vectors b_Wg and b_Rg (hidden), and the projection W_p
   (proj x hidden). Every block is present whatever the modes; a test zeroes what the network
   lacks. Data: x [T][N][input], y [T][N][dirs * proj], hx/hy [layers * dirs][N][proj], cx/cy
   [layers * dirs][N][hidden]; dropout is not applied (inference, or a dropout of 0). */
#ifndef OCD_TESTS_REF_RNN_H
#define OCD_TESTS_REF_RNN_H

#include <stdbool.h>
#include <stdint.h>

#include <cudnn.h>

struct ref_rnn {
    cudnnRNNMode_t mode;
    int layers, dirs, input, hidden, proj; /* proj = hidden without a projection */
    bool skip_input;                       /* CUDNN_SKIP_INPUT */
    bool clip;                             /* CUDNN_RNN_CLIP_MINMAX */
    double lclip, rclip;
    int T, N;
    const int *lengths; /* N lengths in [1, T] */
};

enum ref_rnn_block { REF_RNN_W, REF_RNN_R, REF_RNN_BW, REF_RNN_BR, REF_RNN_WP };

/* Gates of a mode (1, 4 or 3), the parameters in all, and the offset of one block: gate g's
   matrix or bias of the pseudo-layer (g ignored for REF_RNN_WP). Sizes of a block: W hidden x
   in, R hidden x proj, biases hidden, W_p proj x hidden. */
int ref_rnn_gates(cudnnRNNMode_t mode);
int ref_rnn_layer_input(const struct ref_rnn *r, int layer);
int64_t ref_rnn_param_count(const struct ref_rnn *r);
int64_t ref_rnn_param(const struct ref_rnn *r, int pseudo_layer, enum ref_rnn_block block, int g);

/* Forward: fills y, hy, cy (cy only for LSTM; hx, cx NULL: zeros). y at steps past a sequence's
   length is left alone. */
void ref_rnn_forward(const struct ref_rnn *r, const double *w, const double *x, const double *hx,
                     const double *cx, double *y, double *hy, double *cy);

/* Backward through time: given dy, dhy, dcy (NULL: zeros), writes dx (0 at steps past a length),
   dhx, dcx, and adds the weight gradients to dw (ref_rnn_param layout). */
void ref_rnn_backward(const struct ref_rnn *r, const double *w, const double *x, const double *hx,
                      const double *cx, const double *dy, const double *dhy, const double *dcy, double *dx,
                      double *dhx, double *dcx, double *dw);

#endif /* OCD_TESTS_REF_RNN_H */
