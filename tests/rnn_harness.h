/* rnn_harness.h: one RNN case run end to end against tests/ref/rnn.c (tests/rnn_harness.c):
   the descriptors of the v8, legacy or Ex API, weights written through the addresses the API
   returns, forward in both modes, backward data and weights; and the buffers and checks of a
   training pass that a test drives through a program's own calls. Used by tests/rnn.c,
   tests/rnn_persist.c and the compat_rnn* replays. */
#ifndef OCD_TESTS_RNN_HARNESS_H
#define OCD_TESTS_RNN_HARNESS_H

#include "ref/rnn.h"
#include "tensors.h"

struct rnn_case {
    const char *name;
    cudnnRNNMode_t mode;
    int dirs;
    cudnnRNNInputMode_t input_mode;
    cudnnRNNBiasMode_t bias;
    cudnnRNNDataLayout_t layout;
    int layers, input, hidden, proj, T, N;
    const int *lengths;
    cudnnDataType_t dtype;
    bool clip, states; /* states: hx, cx, dhy, dcy given (else NULL) */
    int api;           /* API_V8, API_LEGACY (packed layout only), API_EX */
    cudnnRNNAlgo_t algo; /* STANDARD when left out; PERSIST_DYNAMIC gets its plan built */
};

enum { API_V8, API_LEGACY, API_EX };

/* Everything one case needs: descriptors, the reference network, buffers (host values, device
   copies). Data tensors are kept as [position][vector] values. */
struct rnn_run {
    const struct rnn_case *c;
    struct ref_rnn r;
    cudnnRNNDescriptor_t d;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd;
    int G, D, P;
    int64_t pos, wcount;       /* positions; weight space elements */
    size_t wbytes, ws_bytes, rs_bytes;
    double *w_ref;             /* ref_rnn_param layout */
    double *w_space;           /* the weight space's values */
    int64_t *ref_of;           /* for each weight space element, its ref index (-1: none) */
    double *x, *hx, *cx;       /* x: [pos][input] (NaN at padding) */
    void *pw, *px, *phx, *pcx, *plen, *pws, *prs;
    double fill;
    cudnnTensorDescriptor_t *xs, *ys; /* legacy: the per-step descriptors */
    cudnnFilterDescriptor_t wd;
    cudnnDropoutDescriptor_t dd;      /* with dropout: the descriptor and its states */
    void *pstates, *states_snap;
    size_t states_bytes;
    cudnnPersistentRNNPlan_t plan;    /* legacy PERSIST_DYNAMIC */
    cudnnRNNDescriptor_t d_bwd;       /* not NULL: the backward calls' descriptor (a program's second
                                         one for the same network); rnn_run_free destroys it */
};

/* The forward outputs: y [pos][D P], hy, cy. */
struct fwd_out {
    double *y, *hy, *cy;
};

bool rnn_unpacked(cudnnRNNDataLayout_t l);
/* [pos][vec] values to the reference's [T][N][vec] (0 past a length). */
double *rnn_to_ref(const struct rnn_case *c, const double *v, int vec);
/* Random data at the valid positions, NaN at the padding. */
double *rnn_random_data(const struct rnn_case *c, int vec);
cudnnDataType_t rnn_math_prec(cudnnDataType_t t);
cudnnTensorDescriptor_t rnn_state_desc(cudnnDataType_t t, int a, int b, int w);
/* The case's descriptors, weights, inputs and spaces (the workspace fits every call). */
bool rnn_run_init(struct rnn_run *u, const struct rnn_case *c);
/* rnn_run_init, the run freed when it fails (nothing left to free then). */
bool rnn_run_open(struct rnn_run *u, const struct rnn_case *c);
/* Replaces the run's workspace and reserve with buffers of these sizes (a caller that sized
   them its own way, as a program's legacy calls do). */
void rnn_run_spaces(struct rnn_run *u, size_t ws_bytes, size_t rs_bytes);
void rnn_run_free(struct rnn_run *u);
double rnn_tol_of(cudnnDataType_t t);
double rnn_case_tol(const struct rnn_case *c);
bool rnn_compare(const char *what, const struct rnn_case *c, const double *got, const double *want, int64_t n,
                 double tol);
void rnn_fwd_free(struct fwd_out *o);
void rnn_reference_forward(const struct rnn_run *u, struct fwd_out *o);
/* One forward call through the case's API. */
bool rnn_call_forward(struct rnn_run *u, cudnnForwardMode_t mode, void *py, void *phy, void *pcy);
/* Backward data and weights through the case's API (the weights' gradients added to pdw). */
bool rnn_call_backward(struct rnn_run *u, void *py, void *pdy, void *pdhy, void *pdcy, void *pdx, void *pdhx,
                       void *pdcx, void *pdw);
/* One forward call; y, hy, cy poisoned first and read back (py_out: y kept on the backend). */
bool rnn_library_forward(struct rnn_run *u, cudnnForwardMode_t mode, struct fwd_out *o, void **py_out);
bool rnn_check_forward(const struct rnn_run *u, const struct fwd_out *got, const struct fwd_out *want,
                       const char *mode);
/* Forward (both modes), then backward data and weights against the reference, on a run set up
   by rnn_run_init (whose descriptors a test may have replaced by equivalent ones). */
bool rnn_check_run(struct rnn_run *u);
/* rnn_check_run on the case's own run. */
bool rnn_check_case(const struct rnn_case *c);

/* The buffers of one float training pass that a test drives through its program's own calls,
   with every state: y, dx, hy, cy, dhx, dcx (poisoned outputs), the output gradients dy, dhy and
   dcy (dcy only for LSTM: NULL otherwise) and a zeroed dw, host values and device copies. */
struct rnn_train_bufs {
    double *dy, *dhy, *dcy, *zeros;
    void *py, *pdx, *phy, *pcy, *pdhx, *pdcx, *pdy, *pdhy, *pdcy, *pdw;
};

void rnn_train_bufs_init(struct rnn_train_bufs *b, const struct rnn_run *u);
void rnn_train_bufs_free(struct rnn_train_bufs *b);
/* A training forward's y in b (projection-free: dirs x hidden values a position) against the
   reference's. */
bool rnn_train_y_matches(const struct rnn_run *u, const struct rnn_train_bufs *b, const double *want_y,
                         const char *what);
/* The backward passes of a float run checked against the reference: dx (the positions read back
   into the reference's order) from dy and the final states' gradients dhy, dcy (NULL: zero), and
   the weight gradient added to `base` (the values pdw held before the call). */
void rnn_check_train_backward(const struct rnn_run *u, const double *dy, const double *dhy, const double *dcy,
                              const void *pdx, const void *pdw, double *base, const char *who);

#endif /* OCD_TESTS_RNN_HARNESS_H */
