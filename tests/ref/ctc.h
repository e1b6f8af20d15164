/* ref/ctc.h: reference CTC loss in double, written from the cuDNN documentation and Graves et al.
   (2006) alone (independent of src/): the forward-backward recursion in probability space, each
   step's variables rescaled to sum 1 (the paper's scheme), the log of the scales summed for the
   cost. Blank is symbol 0; labels are concatenated; x is T x N x A dense row-major. softmax: x
   holds activations and y is their softmax per (t, n); otherwise x holds y. Gradients are with
   respect to the activations before the softmax in both cases: y - occupancy per symbol, 0 for
   t >= input length. A sample whose label cannot be aligned in its steps gets an infinite cost and
   NaN gradients on its steps. */
#ifndef OCD_TESTS_REF_CTC_H
#define OCD_TESTS_REF_CTC_H

#include <stdbool.h>

void ref_ctc(int T, int N, int A, bool softmax, const double *x, const int *labels, const int *label_lengths,
             const int *input_lengths, double *costs, double *grads);

#endif /* OCD_TESTS_REF_CTC_H */
