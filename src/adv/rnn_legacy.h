/* rnn_legacy.h: the translation of the legacy (v6/v7) RNN calls into the v8 call of
   adv/rnn_exec.h (rnn_legacy.c), shared by the infer and train libraries' legacy entry points. */
#ifndef OCD_ADV_RNN_LEGACY_H
#define OCD_ADV_RNN_LEGACY_H

#include "adv/rnn_exec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A legacy call: the problem, the v8 call built from it, and the lengths the call owns (array
   forms: derived from the per-step batch sizes). Free with ocd_rnn_legacy_free. */
struct ocd_rnn_legacy {
    struct ocd_rnn_problem p;
    struct ocd_rnn_call c;
    int *lengths;
};

/* The array forms: seqLength per-step descriptors of x (and of y, or NULL for a size query). */
cudnnStatus_t ocd_rnn_legacy_arrays(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int seqLength,
                                    const cudnnTensorDescriptor_t *xDesc, const cudnnTensorDescriptor_t *yDesc,
                                    struct ocd_rnn_legacy *g);
/* The Ex forms: RNN data descriptors (nothing to free). */
cudnnStatus_t ocd_rnn_legacy_data(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnRNNDataDescriptor_t xDesc,
                                  cudnnRNNDataDescriptor_t yDesc, struct ocd_rnn_legacy *g);
void ocd_rnn_legacy_free(struct ocd_rnn_legacy *g);
/* Another array of per-step descriptors of the same call (dy, dx, ...): the same batches, the
   output's width (output) or the input's. */
cudnnStatus_t ocd_rnn_legacy_steps(const struct ocd_rnn_legacy *g, const cudnnTensorDescriptor_t *desc,
                                   const char *name, bool output);

/* The weight filter (name: "wDesc" or "dwDesc") and its pointer. */
cudnnStatus_t ocd_rnn_legacy_weights(struct ocd_rnn_legacy *g, cudnnFilterDescriptor_t wDesc, const void *w,
                                     const char *name);
/* The legacy workspace (every pass) and reserve sizes. */
void ocd_rnn_legacy_sizes(const struct ocd_rnn_legacy *g, size_t *ws, size_t *rs);
/* Checks the spaces against those sizes (the reserve when training) and puts them in the call. */
cudnnStatus_t ocd_rnn_legacy_spaces(struct ocd_rnn_legacy *g, bool training, void *ws, size_t ws_bytes, void *rs,
                                    size_t rs_bytes);
/* NOT_SUPPORTED unless every one of the reserved attention arguments is NULL. */
cudnnStatus_t ocd_rnn_legacy_attention(const void *const *args, int count);
/* The *AlgorithmMaxCount queries: 1. */
cudnnStatus_t ocd_rnn_legacy_max_count(cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, int *count);

/* A Find call: requestedAlgoCount >= 1, the outputs given (BAD_PARAM); work (the call itself,
   validating its arguments) timed once and reported in perfResults[0] as the descriptor's
   algorithm with the legacy workspace size; returnedAlgoCount 1. */
cudnnStatus_t ocd_rnn_legacy_find(cudnnHandle_t handle, const struct ocd_rnn_legacy *g, int requested, int *returned,
                                  cudnnAlgorithmPerformance_t *perf, ocd_timed_work work, void *ctx);

/* A forward call in either mode, after the data were translated. */
cudnnStatus_t ocd_rnn_legacy_forward(cudnnHandle_t handle, struct ocd_rnn_legacy *g, const void *x,
                                     cudnnTensorDescriptor_t hxDesc, const void *hx, cudnnTensorDescriptor_t cxDesc,
                                     const void *cx, cudnnFilterDescriptor_t wDesc, const void *w, void *y,
                                     cudnnTensorDescriptor_t hyDesc, void *hy, cudnnTensorDescriptor_t cyDesc, void *cy,
                                     bool training, void *ws, size_t ws_bytes, void *rs, size_t rs_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_ADV_RNN_LEGACY_H */
