/* fuzz_util.h: what the random-descriptor tests share (tests/fuzz_util.c): fuzz.c (the tensor, NN
   and convolution ops), fuzz_adv.c (RNN, attention, CTC) and fuzz_backend.c (the graph API).

   Random parameters are mostly odd (dims of 0 and below, huge dims, out-of-range modes); tensors
   and other buffers lie between guards of random bytes, snapshotted before a call; fz_check then
   holds a call to the invariants of "bad input never crashes": a defined status, nothing written
   by a call that fails, nothing outside its outputs' spans (and no input) by one that succeeds.
   The libFuzzer harness (tests/libfuzzer) builds these files with FUZZ_HARNESS, its input then
   the randomness (trand_bytes), and runs fewer iterations per input. */
#ifndef OCD_TESTS_FUZZ_UTIL_H
#define OCD_TESTS_FUZZ_UTIL_H

#include "tensors.h"

/* A test's iterations: `plain` in the suite, 16 per input under the libFuzzer harness (whose
   inputs decide how many draws are made, so a test does not count those that ran there). */
#ifdef FUZZ_HARNESS
#define FZ_ITERATIONS(plain) 16
#else
#define FZ_ITERATIONS(plain) (plain)
#endif

enum { GUARD = 256, MAX_BYTES = 1 << 20 };

/* A tensor descriptor, set from random parameters (or left unset when the set call refuses
   them), with a buffer of its size between guards of random bytes; or such a buffer alone
   (desc NULL: indices, workspaces, parameters, RNN and sequence data). */
struct fz_tensor {
    cudnnTensorDescriptor_t desc;
    size_t bytes;          /* cudnnGetTensorSizeInBytes, 0 when it fails */
    size_t lead;           /* bytes before the data: GUARD, and for a tensor now and then a few elements more,
                              and the part of its span below the data (below) */
    size_t below;          /* bytes of a reversed view's span below its element (0,...,0), the data pointer */
    unsigned char *base;   /* lead + bytes + GUARD bytes on the backend under test, or on the host */
    unsigned char *snap;   /* the buffer's bytes before the call, on the host */
    bool host;             /* set before fz_buffer: base in host memory whatever the backend (arrays
                              the API reads or writes on the host, such as attribute values) */
};

/* A dim: mostly 1 to 5, now and then 0 or -1, or 1 << 20. */
int fz_dim(void);
/* A value in [lo, hi], now and then (1 in 20) one below lo. */
int fz_int(int lo, int hi);
/* One of n enum values, now and then (1 in 20) one out of range. */
int fz_mode(int n);
/* One of the data types, now and then one that is none. */
cudnnDataType_t fz_type(void);

/* t's type, rank, dims and strides (5 at most each) as its descriptor has them now; false when
   it has none or was never set, the type then FLOAT. */
bool fz_shape(const struct fz_tensor *t, cudnnDataType_t *dtype, int *rank, int dims[5], int strides[5]);
cudnnDataType_t fz_dtype(const struct fz_tensor *t);
/* Sets t's descriptor from random parameters; given `like`, three times in four its rank, dims
   and type (now and then one dim changed), half of those times its strides too. One packed or
   padded layout in four has some dims reversed (negative strides). */
void fz_set(struct fz_tensor *t, const struct fz_tensor *like);
/* Creates t's descriptor from random parameters (fz_set). */
void fz_tensor_init(struct fz_tensor *t, const struct fz_tensor *like);
/* The size a query gave, or 16 bytes where it refused (the call must then refuse too). */
void fz_queried(cudnnStatus_t s, size_t *size);
/* A buffer of `bytes` between guards for t (a tensor's, or one without a descriptor), its data
   `shift` bytes after the first guard; false when bytes passes MAX_BYTES (the iteration is
   skipped: a call that succeeded would write past any buffer worth allocating). */
bool fz_buffer(struct fz_tensor *t, size_t bytes, size_t shift);
/* n buffers of `bytes` each (fz_buffer), data aligned: false when any passes MAX_BYTES. */
bool fz_buffers(struct fz_tensor *t, int n, size_t bytes);
/* t's buffer, of its descriptor's size (fz_buffer); one time in four its data 1 to 3 elements
   past an aligned address (vector types excepted), which the vectorized kernels must notice; the
   data pointer at element (0,...,0), the part of a reversed view's span below it in the buffer. */
bool fz_tensor_alloc(struct fz_tensor *t);
/* A buffer (fz_buffer) whose data are `bytes` bytes copied from data. */
bool fz_buffer_of(struct fz_tensor *t, const void *data, size_t bytes);
/* Frees t's buffer, keeping its descriptor: the call then gets NULL (fz_opt) and fz_check skips it. */
void fz_drop(struct fz_tensor *t);
/* t's data, or NULL when it has no buffer. */
void *fz_opt(const struct fz_tensor *t);
/* Frees t's buffer and descriptor (either may be missing). */
void fz_tensor_free(struct fz_tensor *t);
void *fz_at(const struct fz_tensor *t);
/* After a call: its status is SUCCESS, BAD_PARAM, NOT_SUPPORTED or INVALID_VALUE (a workspace
   smaller than asked for), or `also` (another that the call documents); each output's guards
   (or, when the call failed, all of it) and the inputs are as they were. */
void fz_check_with(const char *op, int iteration, cudnnStatus_t s, cudnnStatus_t also, struct fz_tensor *const *out,
                   int nout, struct fz_tensor *const *in, int nin);
void fz_check(const char *op, int iteration, cudnnStatus_t s, struct fz_tensor *const *out, int nout,
              struct fz_tensor *const *in, int nin);
/* alpha or beta for an output of type t: a double for DOUBLE, a float otherwise. */
const void *fz_scale(struct tscale *s, const struct fz_tensor *out);

#endif /* OCD_TESTS_FUZZ_UTIL_H */
