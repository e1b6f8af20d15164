/* bench.h: what the benchmark's files share. The benchmark is built twice from the same sources: against opencudnn (opencudnn_bench) and against
   another cuDNN (opencudnn_bench_vendor: the vendor's cuDNN 9 on the GPU machine; see
   CMakeLists.txt beside this file), so that both run the same cases through the same API and
   bench/run.sh can put them side by side.

   Files: bench.c runs the cases and prints them (main); common.c holds memory, clocks, random
   data, problem strings, a call's tensors and the watch on which implementations serve it; ops_tensor.c, ops_conv.c, ops_nn.c, ops_adv.c,
   ops_rnn.c, ops_attn.c and ops_graph.c (the backend API) each hold one family of ops (a setup and a run per op, and the
   family's op table); suites.c holds the suite tables. parity.c and parity_*.c, the parity probe (a
   program of its own, parity.md), share common.c.

   Main decision: cases are data. A suite is a table of rows {name, timing, problem}; the problem
   string is the canonical description of one API call and names the op that runs it. A new suite
   (convolution, norms, activations...) is a new table in suites.c, plus one op entry in its
   family's file (or a new ops_<family>.c listed in bench.c's op_families) for each new kind of
   call; an op keeps what only it needs in the call's `state`, freed by its `release`. The same string given to --problem replays one call; --list prints every case.

   Problem strings: "op=<op> key=value ...", one space between, the keys exactly those the op lists
   and in its order (that makes the string canonical: one call, one spelling). Values:
     dt      the data type of every tensor: f32, f16, bf16, f64; and for the int8 convolutions
             i8, u8 (INT8, UINT8), i8x4, i8x32 (INT8x4, INT8x32: 1 byte a scalar)
     tensor  DIMS[:LAYOUT][@DT], DIMS as d0xd1x...; LAYOUT nchw (packed, last dim innermost; the
             default), nhwc (packed channels-last: dim 1 innermost, then the last dims, dim 0
             outermost) or nchw_vect_c (the vector types' layout, and theirs only); DT this
             tensor's data type where it is not dt's (a converting transform)
     alpha, beta, value...  decimal numbers (value has the tensor's type, as cudnnSetTensor takes it)
   The convolutions (convfwd, convbwdd, convbwdf) take the shape as numbers instead (n c h w k r s
   pad stride dil) and layout=nchw|nhwc|nchw_vect_c; see setup_conv. Suites: ceiling, tensor, resnet50 (its
   convolution shapes at batch 64, three directions, f32 NCHW, f16 and bf16 NHWC, plus one
   host-call case), resnet50_b256 (the same at batch 256), resnet50_host (its 3x3 layers forward
   in f32 NCHW at batch 8: the host backend's suite), nn (activation, softmax, max pooling and
   batch norm, forward and backward, on 64 x 256 x 56 x 56 in f32 NCHW and f16 NHWC, softmax also
   in bf16 NHWC; those ops take x as a tensor spec plus their modes, see the nn ops), adv (the
   CTC loss, op ctc, through cudnnCTCLoss and cudnnCTCLoss_v8), rnn (LSTM and GRU training
   forward and backward, LSTM inference latency at batch 1, op rnn, through the v8 RNN API), attn (multi-head attention, op
   mha, forward and backward at batch 32, 16 heads, width 1024, sequence 512, f16), graph (fused
   graphs through the backend API: ConvBiasAct, op convbiasact_graph, beside the legacy fused
   call, op convbiasact, on the ResNet-50 shapes at batch 64 in f16 NHWC; ConvScaleBiasAddAct and
   ConvBiasScaleAct on two of its 3x3 layers; MatmulBiasAct with ReLU and GELU on a transformer
   MLP's two GEMMs; pointwise chains that run on their own: ScaleBiasAddAct alone on ResNet-50's
   layer1 output in f16 and f32 NHWC, DgradDrelu on two 3x3 layers; see ops_graph.c), int8 (the int8 configurations' forward convolution, INT8,
   INT8_EXT, INT8x4 and INT8x32, on two ResNet-50 3x3 layers at batch 64 and 256, and the
   cudnn-frontend IMMA sample's shape).

   Timing: a TIME_DEVICE case runs the call n times between two CUDA events (a host clock on the
   host backend) after warm-up, in --reps batches, and reports the median time per call; n is
   chosen so that a batch lasts about --min-ms. A TIME_HOST_CALL case measures what a call costs
   the calling thread: the device is idle (synchronized) before each call and the clock stops when
   the call returns, so no kernel time is counted; the median over the calls. A device-to-device
   copy measured in the same run gives the bandwidth ceiling that GB/s is compared with. Ops that
   count their arithmetic (the convolutions, matmul graphs) also report flops, printed as TFLOP/s; in --tsv it is
   the last column, after problem, so that readers of the older columns keep working. On the host
   backend they are printed as GFLOP/s and as a share of the processor's fp32 FMA peak (see
   host_fma_peak).

   Checks: before timing, each case runs once on fresh random data, seeded by the case name so that
   both builds see the same data, and reports a checksum of its output: S = sum w_i y_i with
   pseudo-random weights w_i in [-1, 1], and N = sqrt(sum (w_i y_i)^2). Two correct results differ
   in S by rounding only (far under 1% of N); a wrong index or an unwritten region moves S by about
   N. bench/run.sh compares the builds that way.

   Implementations: each row of ours names the library's entries that served the case (the
   --tsv column impl, after flops: distinct names joined by "+", "-" when none is known). During
   the warm-up, never the timed calls, a callback (cudnnSetCallback) takes the info messages in
   which opencudnn names the entry a call runs (impl_watch_start, common.c); a graph op also
   listens while its plan is finalized, where the plan picks its convolutions. A log the user
   asked for (CUDNN_LOGINFO_DBG) misses the warm-up's messages, which repeat the checked call's.
   The vendor's build installs nothing: its library names its engines otherwise. The run's banner
   (its first line) names the switches that change which of our entries serve
   (OPENCUDNN_UNPROVEN=1, OPENCUDNN_DISABLE), so that a table says what it measured.

   Only API present in both cuDNN 8 and 9 is used for shared cases; statuses are reported by name
   (cudnnGetErrorString), since cuDNN 9 renumbered cudnnStatus_t. */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <cudnn.h>

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_CUDA
#include <cuda_runtime.h>
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#ifdef BENCH_CUDA
#define CUDA_TRY(call)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) die("%s: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
    } while (0)
#endif

/* ---- memory and clocks on the benchmark's backend (common.c) ------------------------------------ */

/* true: buffers are device memory and calls are timed with CUDA events on `stream`; false: host
   memory (opencudnn's host backend), timed with the host clock. */
extern bool on_device;
#ifdef BENCH_CUDA
extern cudaStream_t stream;
#endif

/* Picks where data lives and tells opencudnn the same (see common.c), then creates the handle
   (on `stream` when on the device); close_backend undoes both. */
cudnnHandle_t open_backend(void);
void close_backend(cudnnHandle_t handle);
double host_ms(void);
void *mem_alloc(size_t bytes);
void mem_free(void *p);
void mem_copy(void *dst, const void *src, size_t bytes, bool to_device);
/* Waits until the device is idle. */
void device_sync(void);

struct timer {
#ifdef BENCH_CUDA
    cudaEvent_t start, stop;
#endif
    double t0;
};
void timer_start(struct timer *t);
/* Milliseconds since timer_start, once the work enqueued in between has finished. */
double timer_stop(struct timer *t);

/* ---- data types and random data (common.c) ------------------------------------------------------ */

struct dtype {
    const char *name; /* as problem strings spell it */
    cudnnDataType_t type;
    size_t size; /* bytes a scalar (the vector types: an element of the vector) */
    int vect;    /* the vector width: 4 for INT8x4, 32 for INT8x32 (layout nchw_vect_c), else 1 */
};
extern const struct dtype dtypes[];
extern const size_t ndtypes;
/* Every name of the table, for messages. */
#define DTYPE_NAMES "f32, f16, bf16, f64, i8, u8, i8x4, i8x32"
/* The type named name, or of value type, or NULL. */
const struct dtype *dtype_named(const char *name);
const struct dtype *dtype_of(cudnnDataType_t type);
/* Whether t is one of the int8 configurations' data types (i8, u8, i8x4, i8x32). */
bool dtype_is_int8(const struct dtype *t);

uint64_t splitmix(uint64_t *state);
uint64_t hash_string(const char *s);
/* The value at src of type t, as a double. */
double decode(const struct dtype *t, const void *src);
/* Writes v in type t (the number cudnnSetTensor takes): exact for the constants of the tables,
   rounded to nearest otherwise. */
void encode(const struct dtype *t, double v, void *dst);
/* Fills n values of type t at dst (on the backend) with random data: magnitudes between 1/32 and
   1, either sign, never a zero, NaN or infinity. */
void fill_random(const struct dtype *t, void *dst, int64_t n, uint64_t *rng);

/* ---- problem strings (common.c) ----------------------------------------------------------------- */

enum { MAX_KEYS = 16 };

struct problem {
    int nkeys;
    char key[MAX_KEYS][16];
    char value[MAX_KEYS][64];
};

/* Splits "k=v k=v ..." into p; NULL or what is wrong. */
const char *problem_parse(const char *text, struct problem *p);
/* The value of key in p (present: the op's key list was checked before setup runs). */
const char *problem_get(const struct problem *p, const char *key);
/* The value of key in p, or fallback where p leaves the (optional) key out. */
const char *problem_get_or(const struct problem *p, const char *key, const char *fallback);
double problem_number(const struct problem *p, const char *key);
/* The index of problem key `key`'s value in names, or -1. */
int problem_choice(const struct problem *p, const char *key, const char *const *names, int n);

/* ---- one call: its tensors, buffers and scalars (common.c) ---------------------------------------- */

enum { MAX_TENSORS = 8, IMPL_NAMES_MAX = 256 };

struct tensor {
    int nd;
    int dims[8], strides[8];
    cudnnTensorFormat_t format; /* the layout of the spec */
    int64_t count; /* elements */
    const struct dtype *dt; /* the call's, but float (double for f64) for batch-norm parameters */
    cudnnTensorDescriptor_t desc;
    void *data; /* NULL in a dry run */
};

/* alpha and beta are float for float, half and bfloat16 data, double for double data. */
struct scaling {
    float f;
    double d;
};

struct call {
    cudnnHandle_t handle;
    const struct dtype *dt;
    bool dry;          /* descriptors only: no buffers, nothing runs (--list) */
    uint64_t rng;      /* the case's random stream */
    int ntensors, out; /* out: the tensor the result lands in */
    struct tensor t[MAX_TENSORS];
    struct scaling alpha, alpha2, beta;
    unsigned char value[8]; /* cudnnSetTensor's value, in the tensor's type */
    cudnnOpTensorDescriptor_t op_desc;
    /* convolutions: the filter (also t[1], for its buffer), the convolution, the algorithm picked
       by cudnnGetConvolution*Algorithm_v7 and its workspace */
    cudnnFilterDescriptor_t filter_desc;
    cudnnConvolutionDescriptor_t conv_desc;
    int algo;
    void *workspace;
    /* activation, pooling; softmax and batch norm keep their modes in mode and algo */
    cudnnActivationDescriptor_t act_desc;
    cudnnPoolingDescriptor_t pool_desc;
    int mode;
    size_t workspace_bytes;
    /* what only one op needs (its own struct), freed by release (set with it, in setup) */
    void *state;
    void (*release)(struct call *c);
    double bytes; /* the fewest bytes the call must move through memory (each op says how) */
    double flops; /* the arithmetic of the call (0: not counted; the convolutions say how) */
    /* the names of the library's implementations that serve the call, distinct, joined by "+"
       (impl_watch_start); "" while unknown */
    char impl[IMPL_NAMES_MAX];
};

const void *scaling_ptr(const struct call *c, const struct scaling *s);
struct scaling scaling_of(double v);
double tensor_bytes(const struct call *c, int i);
/* Adds a tensor to the call: its descriptor, and (not in a dry run) its buffer filled with random
   data. A spec "DIMS[:LAYOUT][@DT]" (see the top); add_tensor takes problem key `key`'s. */
const char *add_tensor_spec(struct call *c, const char *spec);
/* The same with the data type given (dims and layout only in spec). */
const char *add_tensor_dt(struct call *c, const char *spec, const struct dtype *dt);
/* Parses "d0xd1x...[:layout]" into the packed strides of that layout and its format (no
   descriptor, no buffer). */
const char *parse_tensor(const char *spec, struct tensor *t);
const char *add_tensor(struct call *c, const struct problem *p, const char *key);
/* Adds `count` more tensors of spec's shape and layout. */
const char *add_like_x(struct call *c, const char *spec, int count);
/* alpha 1, beta 0. */
void unit_scaling(struct call *c);
/* Frees what the call holds (the op's state through its release) and empties it. */
void call_release(struct call *c);

/* ---- which implementations serve a call (common.c) ---------------------------------------------- */

/* Until impl_watch_end restores the library's logging as it was, opencudnn's info messages go to
   a callback that adds to c->impl the implementations they name as serving a call (other
   messages are dropped). One watch at a time. Nothing happens in the vendor's build, whose
   library names its engines otherwise. */
void impl_watch_start(struct call *c);
void impl_watch_end(void);

/* ---- ops (ops_<family>.c) ----------------------------------------------------------------------- */

/* Each setup reads its problem's keys, adds its tensors (in the order run uses them), sets out,
   alpha/beta and bytes (the formula next to it), and returns NULL or what is wrong. */
struct op {
    const char *name;
    const char *keys; /* every key after op=, in canonical order; optional trailing ones in [ ] */
    const char *(*setup)(struct call *c, const struct problem *p);
    cudnnStatus_t (*run)(struct call *c);
};

/* The convolution of direction dir (0 forward, 1 backward data, 2 backward filter) described by
   p as convfwd, convbwdd and convbwdf take it: tensors x, filter, y, the descriptors, the
   algorithm and its workspace (ops_conv.c). */
const char *setup_conv(struct call *c, const struct problem *p, int dir);

struct op_family {
    const struct op *ops;
    size_t nops;
};
extern const struct op_family ops_tensor, ops_conv, ops_nn, ops_adv, ops_rnn, ops_attn, ops_graph;

/* ---- suites (suites.c) -------------------------------------------------------------------------- */

enum timing {
    TIME_DEVICE,   /* device time per call (CUDA events around a batch) */
    TIME_HOST_CALL /* host time per call, the device idle before each */
};

struct bench_case {
    const char *name; /* unique, short: what --case matches */
    enum timing timing;
    const char *problem;
};

struct suite {
    const char *name;
    const struct bench_case *cases;
    size_t ncases;
};

/* The bandwidth ceiling: always measured first in a run that times anything on the device. */
extern const struct bench_case ceiling_cases[];
extern const struct suite suites[];
extern const size_t nsuites;

#endif /* BENCH_BENCH_H */
