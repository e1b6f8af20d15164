/* check.h: OPENCUDNN_CHECK, the built-in second opinion (DESIGN.md 5, issue 26).

   With OPENCUDNN_CHECK=1 every call of an op that takes part is run twice: by the entry the
   walker picks (core/impl.h), then on copies of the same inputs (and of the outputs' prior
   contents, which beta may blend) by a host entry of the same table: for a CUDA handle the host
   entry the host backend would pick, for a host handle the last applicable host entry (the
   reference where the table has one). The outputs are compared within the op's tolerance; a
   mismatch is logged as a warning naming both entries, the first and the largest difference, and
   the call as the benchmark replays it (`opencudnn_bench --problem "<replay>"`); an agreement is
   logged at info level with the largest difference. OPENCUDNN_CHECK=<fraction below 1> checks that
   share of the calls (0.01: one in a hundred, evenly spaced). The user's outputs are those of the
   first run, whatever the check finds.

   The mechanism is one: an op takes part by describing its call (struct ocd_check_call: where the
   data pointers sit in its problem struct, the view each points at, which ones it writes, the
   replay string) and running through ocd_impl_run_checked instead of ocd_impl_run (or
   ocd_check_run with an entry it chose, or ocd_check_run_driver for code that is not a table).
   It builds that description only when ocd_check_enabled() says so, so that it costs nothing
   otherwise.

   Taking part: convolution, activation, softmax, pooling, batch norm, dropout (forward: y, and
   byte for byte the mask and the states; backward: dx), ocd_gemm (so the GEMMs inside RNN,
   attention and the graph API's matmul), the CTC loss (costs and gradients; a _v8 call with a
   label length outside [0, 256] is not checked), and as drivers the RNN forward (inference and
   training: y, hy, cy) and the multi-head attention forward (out), training with dropout
   included; the RNN backward calls (v8 and legacy: dx, dhx, dcx; the weight gradients) and the
   multi-head attention backward calls (dq, dk, dv; the weight gradients), dropout included.
   Calls made inside a second run (the GEMMs of a driver's host run) are not checked again;
   those of a first run are.

   Dropout in a forward. The masks are a pure function of the seed and the call number held in
   the dropout states buffer (struct ocd_dropout_state, the same layout on every backend) and of
   the element, through the one Philox rule both backends compile (problem/dropout.h,
   problem/attn_core.h). So the second run gets a copy of the states as they were before the
   first run, draws the same masks, and advances its copy as the first run advanced the
   original; the states (and cudnnDropoutForward's mask) are compared byte for byte
   (ocd_check_add_exact). Two buffers at one address with one view (an in-place call, attention's
   two dropout descriptors sharing a states buffer) share one copy in the second run.

   The backward calls read the reserve the training forward wrote (and RNN and attention
   BackwardData write gradients into it for BackwardWeights). Their second run gets a copy of
   it like any input, not a recomputation: the reserve is backend-independent. Its layout is
   defined once above the backends (problem/attention.h and problem/attn_core.h; the RNN's in
   adv/rnn_exec.h), and its contents are the same quantities on both backends up to rounding:
   RNN states and saved gate values from the shared cell math (problem/rnn_kernels.h), the
   attention core's per-row log-sum-exp in the compute type (the fused CUDA kernels store it
   too, no probabilities), projected buffers from the shared GEMMs, and dropout masks and
   attention's saved Philox seed and offset, bit-identical by definition (problem/dropout.h).
   tests/check.c (check_reserve_portable_*) runs a backend's backward calls on a host-written
   reserve and on its own. A weight gradient in ADD mode is compared with the host's
   accumulation onto a copy of the starting gradient (an output's prior contents are copied).

   OPENCUDNN_TEST_BREAK=<entry name> (for tests of the checker only, honoured while a call is
   checked): after the named entry runs, the first scalar of its first output is increased by 1,
   as a broken kernel would leave it. */
#ifndef OCD_CORE_CHECK_H
#define OCD_CORE_CHECK_H

#include "core/impl.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_CHECK_BUFFERS 20

struct ocd_check_buffer {
    size_t field;                   /* offsetof the data pointer within the problem struct (NULL there: skipped) */
    struct ocd_tensor_view view;    /* what it points at (its span is copied) */
    bool output;                    /* written by the call (compared) */
    bool scratch;                   /* a workspace or reserve: the second run gets zeroed host memory of its span */
    bool exact;                     /* an output both runs must write byte for byte alike, whatever the tolerance */
};

struct ocd_check_call {
    const char *op;      /* the API function, for the log */
    size_t problem_size; /* sizeof the problem struct */
    double tolerance;    /* relative: |a - b| <= tolerance * max(1, |b|); 0: the dtype's default */
    int count;
    struct ocd_check_buffer buffers[OCD_CHECK_BUFFERS];
    char replay[320]; /* the bench problem string ("op=... dt=... x=..."), or empty */
};

/* True when a call should describe itself: OPENCUDNN_CHECK asks for checks (a call may still not
   be sampled), or info logging is on, where each described call with a replay string logs it as
   "<op> on <entry>: replay: opencudnn_bench --problem "<string>"" (the benchmark's --replay reads
   these lines back from a log). */
bool ocd_check_enabled(void);

/* True when info logging is on, so that a call should log its replay string. */
bool ocd_check_replay_wanted(void);

/* Logs "<op> on <entry>: replay: opencudnn_bench --problem "<replay>"" at info level (when it is
   on and replay is not empty): the line the benchmark's --replay reads back. Calls that are not
   checked (a CTC loss call with an invalid label length, attention BackwardWeights without
   weights, cudnnBackendExecute of one of the benchmark's graphs) call it themselves with their
   problem string;
   described calls log through ocd_check_run. */
void ocd_check_log_replay(const char *op, const char *entry, const char *replay);

/* Adds a buffer to the description (the view is copied). */
void ocd_check_add(struct ocd_check_call *call, size_t field, const struct ocd_tensor_view *view, bool output);

/* Adds a buffer of `count` packed scalars of type t (an RNN's data, a sequence length array). */
void ocd_check_add_array(struct ocd_check_call *call, size_t field, cudnnDataType_t t, int64_t count, bool output);

/* Adds an output of `count` packed scalars of type t that both runs must leave byte for byte alike
   (a dropout mask, a dropout states buffer: problem/dropout.h), whatever the call's tolerance. */
void ocd_check_add_exact(struct ocd_check_call *call, size_t field, cudnnDataType_t t, int64_t count);

/* Adds a workspace or reserve of `bytes`: nothing of it is copied or compared; the second run
   gets its own. */
void ocd_check_add_scratch(struct ocd_check_call *call, size_t field, size_t bytes);

/* The buffers of an op on a struct ocd_map_io (core/dimgroup.h) at io_field of its problem:
   sources views[0..nsrc-1] (read), destination views[nsrc] (written). */
void ocd_check_map_io(struct ocd_check_call *call, size_t io_field, int nsrc, const struct ocd_tensor_view *const views[]);

/* The benchmark's spelling of a data type (f32, f16, bf16, f64, i8, u8, i8x4, i8x32, or the
   cuDNN name) and of a tensor (2x3x5x5, with ":nhwc" for a packed channels-last one). */
const char *ocd_check_dtype_name(cudnnDataType_t t);
void ocd_check_tensor_spec(const struct ocd_tensor_view *v, char *buf, size_t size);

/* ocd_impl_run, with the second opinion when `call` is not NULL and this call is sampled. */
cudnnStatus_t ocd_impl_run_checked(cudnnHandle_t handle, const struct ocd_impl *table, size_t count,
                                   const void *problem, const struct ocd_check_call *call);

/* A call that is not a table walk but a driver (the adv library's RNN and multi-head attention
   calls: one backend-independent code whose GEMMs and kernels run on the handle's backend) runs
   through this, `run` in place of an entry's (its workspace arguments NULL and 0: the driver's
   spaces are buffers of the description, the scratch ones among them). The first run is `run` on
   the handle, named "<backend>:<name>" in the log (OPENCUDNN_TEST_BREAK takes that name); the
   second is `run` again, on the process's host handle (the handle itself when it is a host one)
   with the copies. A driver that reads the handle from its problem takes it from the argument. */
cudnnStatus_t ocd_check_run_driver(cudnnHandle_t handle, const char *name,
                                   cudnnStatus_t (*run)(cudnnHandle_t handle, const void *problem, void *workspace,
                                                        size_t workspace_bytes),
                                   const void *problem, const struct ocd_check_call *call);

/* The relative tolerance of a driver's results, which chain GEMMs and pointwise steps through
   time steps, layers or heads: 1e-4 for float data (1e-2 when its GEMMs run in TF32), else the
   data type's default. */
double ocd_check_driver_tolerance(cudnnDataType_t t, bool tf32);

/* Runs `impl` (already chosen; plan as for ocd_impl_exec) on the problem and its workspace, with
   the second opinion from `entries` (the table impl came from) when `call` is not NULL and this
   call is sampled. The second run gets a host workspace of the size its entry asks for. */
cudnnStatus_t ocd_check_run(cudnnHandle_t handle, const struct ocd_impl *impl, const void *problem,
                            const struct ocd_impl_plan *plan, void *workspace, size_t workspace_bytes,
                            const struct ocd_check_call *call, struct ocd_impl_table entries);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_CHECK_H */
