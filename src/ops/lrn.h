/* lrn.h: the LRN descriptor (shared by LRN and divisive normalization) and the entry-layer
   helpers of an LRN call (descriptor and tensor checks, the run through the implementation
   table). The problem, the window and the implementations are in problem/lrn.h. */
#ifndef OCD_OPS_LRN_H
#define OCD_OPS_LRN_H

#include "core/argcheck.h"
#include "core/impl.h"
#include "problem/lrn.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cudnnLRNStruct {
    struct ocd_object obj;
    unsigned n;
    double alpha, beta, k;
};

/* Checks an LRN descriptor argument: live (BAD_PARAM). Shared with divisive normalization. */
cudnnStatus_t ocd_lrn_get(cudnnLRNDescriptor_t desc, const struct cudnnLRNStruct **out);

/* The checks of an LRN call before its tensors: handle, descriptor, mode, alpha and beta; fills
   the descriptor's parameters into p. */
cudnnStatus_t ocd_lrn_prepare(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc, cudnnLRNMode_t mode,
                              const void *alpha, const void *beta, struct ocd_lrn_problem *p);

/* A tensor argument of an LRN call. */
struct ocd_lrn_tensor {
    cudnnTensorDescriptor_t desc;
    const void *ptr;
    const char *name;
    struct ocd_tensor_view *view; /* filled */
    enum ocd_read read;           /* how the output reads it (inputs only): ocd_check_alias */
};

/* The documented rules over an LRN call's tensors (x first, the output last); fills the views,
   the data type and the blending factors of p. */
cudnnStatus_t ocd_lrn_check_tensors(const struct ocd_lrn_tensor *t, int count, const void *alpha,
                                    const void *beta, struct ocd_lrn_problem *p);

/* Runs a validated LRN problem through the implementation table. */
cudnnStatus_t ocd_lrn_run(cudnnHandle_t handle, const struct ocd_lrn_problem *p, const char *op);

#ifdef __cplusplus
}
#endif

#endif /* OCD_OPS_LRN_H */
