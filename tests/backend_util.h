/* backend_util.h: what the backend API tests (backend_exec.c, backend_bn.c, backend_frontend.c)
   share: building descriptors through the public cudnnBackend* calls as cudnn-frontend makes
   them, plans of an engine or of the heuristic's choice, variant packs and execution, and test
   tensors (values, buffers on the backend under test, descriptors) checked against the double
   references of tests/ref. A call that must succeed is CHECK_OK'd where it is made. */
#ifndef OCD_TESTS_BACKEND_UTIL_H
#define OCD_TESTS_BACKEND_UTIL_H

#include "ref/pointwise.h"
#include "tensors.h"

#include <cudnn_backend.h>

typedef cudnnBackendDescriptor_t bdesc;

bdesc bt_make(cudnnBackendDescriptorType_t kind);
void bt_set(bdesc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t n, const void *v);
void bt_set_i64(bdesc d, cudnnBackendAttributeName_t name, int64_t v);
void bt_set_desc(bdesc d, cudnnBackendAttributeName_t name, bdesc v);
void bt_set_f(bdesc d, cudnnBackendAttributeName_t name, float v);
/* A finalized TENSOR of a tview's dims and strides (alignment 16). */
bdesc bt_tensor(int64_t uid, const struct tview *v, bool virt);
/* The same of given dims and strides (DATA_TYPE, DIMENSIONS, STRIDES, UNIQUE_ID, BYTE_ALIGNMENT 16,
   IS_VIRTUAL when virtual, in that order). */
bdesc bt_tensor_dims(int64_t uid, cudnnDataType_t dt, int rank, const int64_t *dims, const int64_t *strides, bool virt);
/* A CONVOLUTION of FLOAT compute, the same padding before and after, unit dilations. */
bdesc bt_conv_desc(int nsp, const int64_t *pad, const int64_t *stride, cudnnConvolutionMode_t mode);
/* A CONVOLUTION with every attribute given (set in the order CONV_MODE, COMP_TYPE, SPATIAL_DIMS,
   PRE_PADDINGS, POST_PADDINGS, DILATIONS, FILTER_STRIDES), finalized. */
bdesc bt_conv_desc_full(cudnnConvolutionMode_t mode, cudnnDataType_t comp, int nsp, const int64_t *pre,
                        const int64_t *post, const int64_t *stride, const int64_t *dil);
/* A 2-D CROSS_CORRELATION of a compute type, pre and post paddings alike per dim (COMP_TYPE,
   CONV_MODE, SPATIAL_DIMS, FILTER_STRIDES, PRE_PADDINGS, POST_PADDINGS, DILATIONS, in that
   order), finalized. */
bdesc bt_conv_desc_2d(cudnnDataType_t comp, const int64_t pad[2], const int64_t stride[2], const int64_t dil[2]);
/* A forward convolution op of tensors x, w, y: ALPHA 1 and BETA 0 as DOUBLE for double data,
   FLOAT otherwise. */
bdesc bt_conv_fwd_op_typed(const bdesc t[3], bdesc conv, cudnnDataType_t dt);
/* A convolution op of a direction; x, w, y named for the forward op. */
bdesc bt_conv_op(cudnnBackendDescriptorType_t kind, bdesc x, bdesc w, bdesc y, bdesc conv);
/* A MATMUL op c = a b of a compute type (its MATMUL descriptor destroyed once the op holds it). */
bdesc bt_matmul_op(bdesc a, bdesc b, bdesc c, cudnnDataType_t comp);
/* A pointwise op: y = mode(x[, b]); for *_BWD modes b is dy and y is dx. */
bdesc bt_pw_op(const struct ref_pw *p, bdesc x, bdesc b, bdesc y);
/* A finalized OPERATIONGRAPH of the ops on the test handle. */
bdesc bt_graph(bdesc *ops, int n);
int64_t bt_engine_count(bdesc g);
/* A plan of engine `index` (its workspace in *ws), or NULL when the engine does not run the
   graph (NOT_SUPPORTED at ENGINE or PLAN finalize, the only failure allowed). */
bdesc bt_plan_of_engine(bdesc g, int64_t index, int64_t *ws);
/* The heuristic's configurations (INSTANT): their engines' global indices, best first. */
int bt_heuristic_engines(bdesc g, int64_t *out, int cap);
/* A tensor of a tview's dims and the given strides (NULL: the tview's), not virtual, of a byte
   alignment (DIMENSIONS, STRIDES, UNIQUE_ID, BYTE_ALIGNMENT, DATA_TYPE, in that order). */
bdesc bt_tensor_aligned(int64_t uid, const struct tview *v, const int64_t *strides, int64_t align);
/* INSTANT's configurations of a graph, counted, then fetched into cap targets made here: the
   count written. */
int bt_heuristics(bdesc g, bdesc *cfgs, int cap);
/* A plan of a configuration on the test handle, its workspace in *ws; NULL when none builds. */
bdesc bt_plan_of_cfg(bdesc cfg, int64_t *ws);
/* The same on a given handle. */
bdesc bt_plan_on(cudnnHandle_t h, bdesc cfg, int64_t *ws);
/* Executes a plan on the test handle with a pack of n (uid, pointer) pairs and a workspace. */
cudnnStatus_t bt_execute(bdesc plan, const int64_t *uids, void *const *ptrs, int n, void *ws);
/* The same on a given handle. */
cudnnStatus_t bt_execute_on(cudnnHandle_t h, bdesc plan, const int64_t *uids, void *const *ptrs, int n, void *ws);
/* A variant pack of n (uid, pointer) pairs and a workspace. */
bdesc bt_pack(const int64_t *uids, void *const *ptrs, int n, void *ws);
/* Runs a plan with the pack's pointers and a fresh workspace of its size. */
cudnnStatus_t bt_run(bdesc plan, int64_t ws, const int64_t *uids, void *const *ptrs, int n);
void bt_destroy_all(bdesc *d, int n);
/* Reads a tview back and compares with want: |got - want| <= tol * max(1, |want|). */
bool bt_check_tol(const struct tview *v, const void *buf, const double *want, double tol, const char *what);
/* The tolerance of a graph's results: float data may run on TF32 tensor cores on CUDA. */
double bt_graph_tol(cudnnDataType_t t);

/* One tensor of a test graph: its layout, values, buffer and descriptor. */
struct bt_gt {
    struct tview v;
    double *val;
    void *buf;
    bdesc d;
    int64_t uid;
};

/* Values random in [lo, hi] (none, and a poisoned buffer, when lo >= hi; no buffer when virtual). */
void bt_gt_init(struct bt_gt *t, int64_t uid, cudnnDataType_t dt, int rank, const int *dims, int layout, bool virt,
                double lo, double hi);
void bt_gt_free(struct bt_gt *t);
/* Runs every engine of the graph that builds (at least engine 0 and the heuristic's first must),
   each on a fresh output, and compares out with want. */
void bt_run_all_engines(bdesc g, struct bt_gt *const *io, int n, const struct bt_gt *out, const double *want,
                        double tol, const char *what);

#endif /* OCD_TESTS_BACKEND_UTIL_H */
