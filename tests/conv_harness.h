/* conv_harness.h: the problems of the convolution API tests (conv.c, conv_backward.c,
   conv_entries.c, conv_api.c): named shapes (odd sizes, strides, asymmetric padding, dilation,
   groups, depthwise, 1x1, large filters, 3-D, CONVOLUTION mode, GEMM block edges), every
   data-type configuration of the cuDNN 8.2 tables (float, TF32, double, pseudo and true half,
   bfloat16, the int8 family), their descriptors on the shared tensor views (tensors.h), and the
   check of one direction through every algorithm: each algorithm the heuristic reports as
   runnable must run and match tests/ref/conv.c at beta 0 (output poisoned) and beta 0.5; an
   algorithm it reports as NOT_SUPPORTED must be refused with NOT_SUPPORTED by the execution
   call. Layouts rotate through packed NCHW, packed NHWC and padded strides (with poisoned gaps);
   the int8 vector types use NCHW_VECT_C.

   For the compat tests that replay a program's calls (compat_*.c): tconv_views makes a
   convolution's x, w and y as views in a layout, and struct tconv_run holds one problem's data
   and references.

   conv_support.h is the other convolution harness: one forced algorithm family (FFT, Winograd) on
   one data type, with errors measured against the reference. */
#ifndef OCD_TESTS_CONV_HARNESS_H
#define OCD_TESTS_CONV_HARNESS_H

#include "ref/conv.h"
#include "tensors.h"

struct shape {
    const char *name;
    int nsp, n, c, k, groups;
    int in[3], filt[3], pad[3], stride[3], dil[3];
    bool convolution;
};

/* A data-type configuration. layout: the layout of x and y when fixed (and for the int8 types,
   whose layouts the tables fix); float types otherwise rotate with the problem's variant. */
struct config {
    const char *name;
    cudnnDataType_t x, w, y, compute;
    cudnnMathType_t math;
    int layout; /* a tview layout */
    bool fixed;
};

/* The shapes every float configuration runs (shapes[0] is n2 c4 k6 5x5, 3x3 pad 1). */
extern const struct shape shapes[];
extern const size_t nshapes;
extern const struct config float_configs[];
extern const size_t nfloat_configs;
/* int8: C and K multiples of 4 (32 for INT8x32), 2-D and unit dilation. */
extern const struct shape int8_shapes[];
extern const size_t nint8_shapes;
extern const struct config int8_configs[];
extern const size_t nint8_configs;
extern const struct shape int8x32_shape;
extern const struct config int8x32_config;
/* The CUDA backend's tensor-core entries' shapes (channels per group multiples of 8) and
   configurations (x and y in one packed layout). */
extern const struct shape tc_shapes[];
extern const size_t ntc_shapes;
extern const struct config tc_configs[];
extern const size_t ntc_configs;

enum dir { FWD, BWD_DATA, BWD_FILTER };

/* A filter: its buffer's layout as a packed view of its dims (NCHW, NHWC or NCHW_VECT_C after
   its format) and its descriptor. */
struct tfilter {
    struct tview v;
    cudnnFilterDescriptor_t desc;
};
bool make_filter(struct tfilter *f, cudnnDataType_t dtype, cudnnTensorFormat_t format, int rank, const int *dims);
void free_filter(struct tfilter *f);

/* The dims of convolution rc's tensors (rc->out filled by ref_conv_out_dims) in cuDNN's order:
   x {N, C, in...}, w {K, C / groups, filt...} and y {N, K, out...}. Returns their rank, nsp + 2. */
int tconv_dims(const struct ref_conv *rc, int xd[5], int wd[5], int yd[5]);
/* rc's tensors as views of type t (tview_init on tconv_dims): x and y in layout, w in wlayout; a
   NULL view is skipped. tview_destroy each. */
void tconv_views(const struct ref_conv *rc, cudnnDataType_t t, int layout, int wlayout, struct tview *x,
                 struct tview *w, struct tview *y);

/* Everything of one problem: the reference's shape and the descriptors. */
struct problem {
    struct ref_conv r;
    struct tview x, y;
    struct tfilter w;
    cudnnConvolutionDescriptor_t conv;
    const struct config *cf;
};

bool is_int(cudnnDataType_t t);
/* Whether the CUDA pass runs on a GPU with tensor cores (sm_80 and newer); says why not. */
bool conv_tensor_core_pass(void);
/* Sets p up for the shape and configuration; variant picks the rotating layouts and the filter
   format. false (failure recorded) when a descriptor call fails; free_problem either way. */
bool make_problem(struct problem *p, const struct shape *sh, const struct config *cf, int variant);
void free_problem(struct problem *p);
int algo_count(enum dir d);

/* One perf result, whatever the direction. */
struct perf {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
};
#define COPY_PERF(dst, src, n)                                                                  \
    for (int i_ = 0; i_ < (n); i_++)                                                            \
    (dst)[i_] = (struct perf){(int)(src)[i_].algo, (src)[i_].status, (src)[i_].time, (src)[i_].memory, \
                              (src)[i_].determinism, (src)[i_].mathType}

/* cudnnGet*Algorithm_v7 of the direction: the count returned. */
int heuristic(const struct problem *p, enum dir d, int requested, struct perf *out);
cudnnStatus_t workspace_size(const struct problem *p, enum dir d, int algo, size_t *bytes);
/* Runs direction d with `algo` on buffers named for the forward op (x, w, y). */
cudnnStatus_t execute(const struct problem *p, enum dir d, int algo, void *x, void *w, void *y, void *ws,
                      size_t ws_bytes, double alpha, double beta);
/* Random values of type t, rounded to it, in [lo, hi]. */
double *random_values(cudnnDataType_t t, long n, double lo, double hi);
/* v clamped to the range of an integer type t (unchanged for floating types). */
double saturate_for(cudnnDataType_t t, double v);

/* Checks every algorithm of direction d on p against the reference (see the top), or only
   algorithm `only` when it is not negative. */
void check_direction(struct problem *p, enum dir d, int only, const char *label);
/* check_direction over every shape x configuration, the variant rotating; with
   OPENCUDNN_TEST_SUBSET=k over one pair in k (struct subset). */
void run_shapes(enum dir d, const struct shape *shp, size_t nshp, const struct config *cfs, size_t ncfs);

/* OPENCUDNN_TEST_SUBSET=k (the sanitizer run sets it): a matrix of cases runs one in k, the
   k-th chosen afresh for each matrix by the run's seed, so that successive runs cover every
   case. subset_start begins a matrix; subset_keeps says whether its case `index` runs. */
struct subset {
    uint64_t every, pick;
};
struct subset subset_start(void);
bool subset_keeps(const struct subset *s, size_t index);

/* OPENCUDNN_DISABLE as it was before a test set its own, to put back afterwards. */
struct disable_list {
    char value[256];
};
struct disable_list disable_saved(void);
void disable_restore(const struct disable_list *d);

/* Which implementation ran, from the INFO log line "<op>: <impl> runs <problem>". */
struct ran_impl {
    char name[128];
    char epilogue[192]; /* the cuBLAS entries' fused forward: the way its plan chose, and why */
};
/* Captures into r the implementation of the calls made until ran_impl_stop, which restores the
   caller's callback, and the last "cuBLAS fused forward epilogue: " line's rest. */
void ran_impl_start(struct log_hook *hook, struct ran_impl *r);
void ran_impl_stop(struct log_hook *hook);
/* One call (alpha 1, beta 0) with the INFO log captured into r; the caller's callback is restored. */
cudnnStatus_t execute_capturing(const struct problem *p, enum dir d, int algo, void *x, void *w, void *y, void *ws,
                                size_t ws_bytes, struct ran_impl *r);

/* A device buffer filled with the byte 0xAB, and the check that it still holds only that. */
void *patterned(size_t bytes);
bool untouched(const void *dev, size_t bytes);

/* One convolution rc on data of type t for the three directions: x, w and dy random in
   [-1, 1] (rounded to t), the references y, dx and dw (tests/ref/conv.c), device copies of the
   inputs, poisoned device outputs and the convolution's descriptors, created and not set;
   tconv_run_free releases them all. */
struct tconv_run {
    long nx, nw, ny;
    double *x, *w, *dy, *y, *dx, *dw;
    void *px, *pw, *pdy, *py, *pdx, *pdw;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
};
void tconv_run_init(struct tconv_run *r, const struct ref_conv *rc, cudnnDataType_t t);
void tconv_run_free(struct tconv_run *r);

#endif /* OCD_TESTS_CONV_HARNESS_H */
