/* ctc.h: the CTC loss problem (cudnnCTCLoss, cudnnCTCLoss_v8), its workspace layout and the
   per-sample rules both backends share.

   Data: probs is a T x N x A float tensor (step, sample, symbol; any strides), symbol 0 the
   blank. Labels are concatenated: sample n's L_n labels follow those of samples 0..n-1. A sample
   uses its first T_n steps. The extended label l' of a sample is blank, l1, blank, l2, ...,
   blank: S_n = 2 L_n + 1 states, state s holding l'(s) = blank for even s, label (s - 1) / 2 for
   odd s. A path may move from s - 2 to s when l'(s) is not blank and differs from l'(s - 2).

   Math (Graves et al. 2006), in log space: y_t(k) is the probability of symbol k at step t,
   softmax of the row when the normalization mode is SOFTMAX (probs holds activations), the value
   itself when it is NONE (probs holds probabilities already). alpha_t(s) is the log-probability of
   the prefixes of paths in state s at step t (y_t included), beta_t(s) that of the suffixes after
   step t from state s (y_t excluded), so that alpha_t(s) + beta_t(s) is the log-probability of the
   paths through (t, s) for every t, and log P = alpha_{T-1}(S-1) (+) alpha_{T-1}(S-2) ((+) is
   log-sum-exp). The cost is -log P. The gradient, in both modes with respect to the
   activations before the softmax (the documented "inconsistent interface" of NONE), is
     grad_t(k) = y_t(k) - sum over s with l'(s) = k of exp(alpha_t(s) + beta_t(s) - log P)
   for t < T_n, and 0 for the steps t >= T_n.

   Samples the API could not check (cudnnCTCLoss_v8 reads labels and lengths on the device) are
   checked per sample by the kernels (ocd_ctc_sample_valid): an invalid one gets a NaN cost. A
   sample whose cost is not finite (an invalid one, a label needing more steps than T_n for its
   repeats, NaN inputs) gets NaN gradients on all its steps under CUDNN_PROPAGATE_NAN and zero
   gradients under CUDNN_NOT_PROPAGATE_NAN.

   Both backends lay the workspace out alike (ocd_ctc_layout), in 4-byte words: the row
   normalizers, log P and the label offsets per sample, alpha and beta for T x S_max states per
   sample and the shifts of each of their steps, and for cudnnCTCLoss the copies of the host's
   label arrays (the host backend uses the normalizers, the offsets and alpha). */
#ifndef OCD_PROBLEM_CTC_H
#define OCD_PROBLEM_CTC_H

#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The documented cap on a label's length. */
#define OCD_CTC_MAX_LABEL 256

struct ocd_ctc_problem {
    int T, N, A;                /* steps, samples, symbols (blank included) */
    int64_t probs_stride[3];    /* in floats: step, sample, symbol */
    int64_t grads_stride[3];
    const float *probs;
    float *costs, *grads;       /* N costs; gradients of probs' dims */
    bool softmax;               /* CUDNN_LOSS_NORMALIZATION_SOFTMAX */
    bool propagate_nan;         /* CUDNN_PROPAGATE_NAN */
    int max_label;              /* the workspace holds 2 max_label + 1 states a step */
    /* Concatenated labels and the N lengths: host memory when host_labels (cudnnCTCLoss, already
       checked by the API), else the backend's memory (cudnnCTCLoss_v8, checked per sample). */
    const int *labels, *label_lengths, *input_lengths;
    bool host_labels;
    int64_t label_total;        /* host_labels: the number of labels (sum of the lengths) */
};

/* Offsets into the workspace, in 4-byte words, each region starting on a 256-byte boundary. */
struct ocd_ctc_layout {
    int64_t lse;     /* T x N floats: the log of each row's normalizer (SOFTMAX), [t * N + n] */
    int64_t logp;    /* N doubles: log P of each sample (NaN when invalid) */
    int64_t offset;  /* N ints: where each sample's labels start */
    int64_t alpha;   /* N x T x S floats, [(n * T + t) * S + s] */
    int64_t beta;    /* the same for beta */
    int64_t alpha_shift, beta_shift; /* N x T doubles each, [n * T + t]: what alpha and beta hold
                                        less than the log-probabilities (CUDA; see cuda/ctc.cu) */
    int64_t labels;  /* host_labels: label_total ints, then the label and input lengths (N each) */
    int64_t label_lengths, input_lengths;
    int64_t words;   /* the total */
    int S;           /* states a step: 2 max_label + 1 */
};

static inline int64_t ocd_ctc_round(int64_t words)
{
    return (words + 63) / 64 * 64;
}

static inline void ocd_ctc_layout_of(const struct ocd_ctc_problem *p, struct ocd_ctc_layout *l)
{
    int64_t at = 0, states = (int64_t)p->N * p->T * (2 * p->max_label + 1);
    l->S = 2 * p->max_label + 1;
    l->lse = at, at += ocd_ctc_round((int64_t)p->T * p->N);
    l->logp = at, at += ocd_ctc_round(2 * (int64_t)p->N);
    l->offset = at, at += ocd_ctc_round(p->N);
    l->alpha = at, at += ocd_ctc_round(states);
    l->beta = at, at += ocd_ctc_round(states);
    l->alpha_shift = at, at += ocd_ctc_round(2 * (int64_t)p->N * p->T);
    l->beta_shift = at, at += ocd_ctc_round(2 * (int64_t)p->N * p->T);
    int64_t copies = p->host_labels ? p->label_total : 0;
    l->labels = at, at += ocd_ctc_round(copies);
    l->label_lengths = at, at += p->host_labels ? ocd_ctc_round(p->N) : 0;
    l->input_lengths = at, at += p->host_labels ? ocd_ctc_round(p->N) : 0;
    l->words = at;
}

static inline size_t ocd_ctc_workspace_bytes(const struct ocd_ctc_problem *p)
{
    struct ocd_ctc_layout l;
    ocd_ctc_layout_of(p, &l);
    return (size_t)l.words * 4;
}

#ifdef __CUDACC__
#define OCD_CTC_HD __host__ __device__
#else
#define OCD_CTC_HD
#endif

/* True when a sample's lengths fit the problem: 0 <= T_n <= T, 0 <= L_n <= max_label and
   L_n <= T_n (every label needs a step of its own). Its labels are checked apart
   (ocd_ctc_label_valid). */
static inline OCD_CTC_HD bool ocd_ctc_lengths_valid(int input_length, int label_length, int T, int max_label)
{
    return input_length >= 0 && input_length <= T && label_length >= 0 && label_length <= max_label &&
           label_length <= input_length;
}

/* True when k names a symbol other than the blank. */
static inline OCD_CTC_HD bool ocd_ctc_label_valid(int k, int A)
{
    return k >= 1 && k < A;
}

/* The start of each sample's labels: the sum of the lengths before it, a negative length (of an
   invalid _v8 sample) counting 0, capped at INT32_MAX (N is at most 2^23, so only invalid
   lengths reach it). */
static inline void ocd_ctc_offsets(const int *label_lengths, int N, int *offset)
{
    int64_t at = 0;
    for (int n = 0; n < N; n++) {
        offset[n] = at < INT32_MAX ? (int)at : INT32_MAX;
        at += label_lengths[n] > 0 ? label_lengths[n] : 0;
    }
}

/* Implementations: the host's per-sample recursion (host/ctc.c) and the CUDA kernels
   (cuda/ctc.cu). Both serve DETERMINISTIC and NON_DETERMINISTIC: their results are reproducible.
   Both take the workspace of ocd_ctc_workspace_bytes. */
cudnnStatus_t ocd_ctc_run_host(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_ctc_run_cuda(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_CTC_H */
