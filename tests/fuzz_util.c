/* fuzz_util.c: what the random-descriptor tests (fuzz.c, fuzz_adv.c, fuzz_backend.c) share:
   random parameters that are mostly odd, tensor descriptors set from them, buffers between guards
   of random bytes, and the check of a call's invariants (fuzz_util.h). */
#include "fuzz_util.h"

#include <stdlib.h>
#include <string.h>

int fz_dim(void)
{
    int r = trand_int(0, 99);
    return r < 3 ? trand_int(-1, 0) : r < 5 ? 1 << 20 : trand_int(1, 5);
}

/* A value in [lo, hi], now and then (1 in 20) one below lo. */
int fz_int(int lo, int hi)
{
    return trand_int(0, 19) == 0 ? lo - 1 : trand_int(lo, hi);
}

/* One of n enum values, now and then (1 in 20) one out of range. */
int fz_mode(int n)
{
    return trand_int(0, 19) == 0 ? n + trand_int(0, 5) : trand_int(0, n - 1);
}

cudnnDataType_t fz_type(void)
{
    static const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,  CUDNN_DATA_HALF,
                                            CUDNN_DATA_BFLOAT16, CUDNN_DATA_DOUBLE, CUDNN_DATA_INT8,
                                            CUDNN_DATA_INT32, CUDNN_DATA_UINT8, CUDNN_DATA_INT8x4,
                                            (cudnnDataType_t)42};
    return types[trand_int(0, (int)TLEN(types) - 1)];
}

/* t's type, rank, dims and strides (5 at most each) as its descriptor has them now; false when
   it has none or was never set, the type then FLOAT. */
bool fz_shape(const struct fz_tensor *t, cudnnDataType_t *dtype, int *rank, int dims[5], int strides[5])
{
    bool set = t->desc != NULL && cudnnGetTensorNdDescriptor(t->desc, 5, dtype, rank, dims, strides) ==
                                      CUDNN_STATUS_SUCCESS;
    if (!set) *dtype = CUDNN_DATA_FLOAT;
    return set;
}

cudnnDataType_t fz_dtype(const struct fz_tensor *t)
{
    cudnnDataType_t dtype;
    int n, dims[5], strides[5];
    fz_shape(t, &dtype, &n, dims, strides);
    return dtype;
}

/* Sets t's descriptor from random parameters; given `like`, three times in four its rank, dims
   and type (now and then one dim changed), half of those times its strides too. */
void fz_set(struct fz_tensor *t, const struct fz_tensor *like)
{
    int rank = trand_int(0, 9) == 0 ? 5 : 4, dims[5], strides[5];
    cudnnDataType_t dtype = fz_type();
    for (int i = 0; i < rank; i++) dims[i] = fz_dim();
    if (like != NULL && trand_int(0, 3) > 0) {
        int n = 0;
        cudnnDataType_t lt;
        int ld[5], ls[5];
        if (fz_shape(like, &lt, &n, ld, ls) && n >= 4) {
            bool near_miss = trand_int(0, 7) == 0;
            if (near_miss) ld[trand_int(0, n - 1)] = fz_dim();
            if (trand_int(0, 1) == 0) {
                cudnnSetTensorNdDescriptor(t->desc, lt, n, ld, ls);
                return;
            }
            rank = n;
            dtype = lt;
            memcpy(dims, ld, sizeof ld);
        }
    }
    const int layout = trand_int(0, 3);
    if (layout < 3) { /* packed row-major (0) or channels last (1); padded (2): twice row-major */
        int64_t s = 1;
        for (int i = rank - 1; i >= 0; i--) {
            int at = layout != 1 ? i : i == rank - 1 ? 1 : i == 0 ? 0 : i + 1; /* channels last: C innermost */
            strides[at] = (int)s;
            s *= dims[at] > 0 ? dims[at] : 1;
            if (s > 1 << 28) s = 1 << 28; /* past any buffer here: the set call or the size check refuses it */
        }
        if (layout == 2)
            for (int i = 0; i < rank; i++) strides[i] *= 2;
        if (trand_int(0, 3) == 0) /* a reversed view */
            for (int i = 0; i < rank; i++)
                if (trand_int(0, 1)) strides[i] = -strides[i];
    } else { /* anything small: overlapping, zero or out of order */
        for (int i = 0; i < rank; i++) strides[i] = trand_int(0, 40);
    }
    cudnnSetTensorNdDescriptor(t->desc, dtype, rank, dims, strides);
}

/* Creates t's descriptor from random parameters (fz_set). */
void fz_tensor_init(struct fz_tensor *t, const struct fz_tensor *like)
{
    memset(t, 0, sizeof *t);
    if (cudnnCreateTensorDescriptor(&t->desc) == CUDNN_STATUS_SUCCESS) fz_set(t, like);
}

/* The size a query gave, or 16 bytes where it refused (the call must then refuse too). */
void fz_queried(cudnnStatus_t s, size_t *size)
{
    if (s != CUDNN_STATUS_SUCCESS) *size = 16;
}

/* t's buffer memory: the backend's (tbuf_*), or the host's when t->host is set. */
static unsigned char *buf_alloc(const struct fz_tensor *t, size_t bytes)
{
    return t->host ? malloc(bytes) : tbuf_alloc(bytes);
}
static void buf_upload(const struct fz_tensor *t, size_t bytes)
{
    if (t->host) memcpy(t->base, t->snap, bytes);
    else tbuf_upload(t->base, t->snap, bytes);
}
static void buf_download(const struct fz_tensor *t, unsigned char *to, size_t bytes)
{
    if (t->host) memcpy(to, t->base, bytes);
    else tbuf_download(to, t->base, bytes);
}
static void buf_free(struct fz_tensor *t)
{
    if (t->host) free(t->base);
    else if (t->base) tbuf_free(t->base);
}

/* A buffer of `bytes` between guards for t (a tensor's, or one without a descriptor: indices,
   workspace), its data `shift` bytes after the first guard; false when bytes passes MAX_BYTES
   (the iteration is skipped: a call that succeeded would write past any buffer worth
   allocating). */
bool fz_buffer(struct fz_tensor *t, size_t bytes, size_t shift)
{
    if (bytes > MAX_BYTES) return false;
    t->bytes = bytes;
    t->lead = GUARD + shift;
    t->below = 0;
    size_t all = t->lead + bytes + GUARD;
    t->snap = malloc(all);
    /* the bytes from one draw (splitmix64), so that under the libFuzzer harness, where each draw
       takes input bytes while they last, the input steers the choices rather than the poison */
    uint64_t z = trand_u64();
    for (size_t i = 0; i < all; i++) {
        uint64_t r = (z += 0x9E3779B97F4A7C15ull);
        r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ull;
        r = (r ^ (r >> 27)) * 0x94D049BB133111EBull;
        t->snap[i] = (unsigned char)(r ^ (r >> 31));
    }
    t->base = buf_alloc(t, all);
    if (t->base == NULL) abort();
    buf_upload(t, all);
    return true;
}

/* n buffers of `bytes` each (fz_buffer), data aligned: false when any passes MAX_BYTES. */
bool fz_buffers(struct fz_tensor *t, int n, size_t bytes)
{
    for (int i = 0; i < n; i++)
        if (!fz_buffer(&t[i], bytes, 0)) return false;
    return true;
}

/* t's buffer, of its descriptor's size (fz_buffer); one time in four its data 1 to 3 elements
   past an aligned address (vector types excepted), which the vectorized kernels must notice. */
/* Bytes of t's span below its element (0,...,0): the reach of its negative strides (the API
   counts a vector type's strides in vectors along C, where it steps C / vector width times). */
static size_t below_bytes(const struct fz_tensor *t)
{
    cudnnDataType_t dtype;
    int n, dims[5], strides[5];
    if (!fz_shape(t, &dtype, &n, dims, strides)) return 0;
    const int vect = rt_vect(dtype);
    int64_t below = 0;
    for (int d = 0; d < n && d < 5; d++) {
        const int64_t steps = (d == 1 ? dims[d] / vect : dims[d]) - 1;
        if (strides[d] < 0 && steps > 0) below += steps * -(int64_t)strides[d] * vect;
    }
    return (size_t)below * tdtype_size(dtype);
}

bool fz_tensor_alloc(struct fz_tensor *t)
{
    size_t bytes = 0, shift = 0, below = 0;
    if (t->desc == NULL) return false;
    if (cudnnGetTensorSizeInBytes(t->desc, &bytes) != CUDNN_STATUS_SUCCESS) bytes = 0;
    else below = below_bytes(t);
    const cudnnDataType_t dtype = fz_dtype(t);
    bool vector = dtype == CUDNN_DATA_INT8x4 || dtype == CUDNN_DATA_UINT8x4 || dtype == CUDNN_DATA_INT8x32;
    if (!vector && trand_int(0, 3) == 0) shift = (size_t)trand_int(1, 3) * tdtype_size(dtype);
    if (below > bytes || !fz_buffer(t, bytes, shift + below)) return false;
    t->below = below;
    return true;
}

bool fz_buffer_of(struct fz_tensor *t, const void *data, size_t bytes)
{
    if (!fz_buffer(t, bytes, 0)) return false;
    memcpy(t->snap + t->lead, data, bytes);
    buf_upload(t, t->lead + bytes + GUARD);
    return true;
}

void fz_drop(struct fz_tensor *t)
{
    buf_free(t);
    free(t->snap);
    t->base = t->snap = NULL;
    t->bytes = 0;
}

void *fz_opt(const struct fz_tensor *t)
{
    return t->base != NULL ? fz_at(t) : NULL;
}

void fz_tensor_free(struct fz_tensor *t)
{
    buf_free(t);
    free(t->snap);
    if (t->desc) cudnnDestroyTensorDescriptor(t->desc);
}

void *fz_at(const struct fz_tensor *t)
{
    return t->base + t->lead;
}

/* Outputs and inputs without a buffer (base NULL: an optional one left out) are skipped. */
void fz_check_with(const char *op, int iteration, cudnnStatus_t s, cudnnStatus_t also, struct fz_tensor *const *out,
                   int nout, struct fz_tensor *const *in, int nin)
{
    if (s != CUDNN_STATUS_SUCCESS && s != CUDNN_STATUS_BAD_PARAM && s != CUDNN_STATUS_NOT_SUPPORTED &&
        s != CUDNN_STATUS_INVALID_VALUE && s != also) {
        FAIL("iteration %d, %s: status %s", iteration, op, cudnnGetErrorString(s));
        return;
    }
    for (int o = 0; o < nout; o++) {
        if (out[o]->base == NULL) continue;
        /* the span starts `below` bytes before the data (a reversed view) */
        size_t first = out[o]->lead - out[o]->below, end = first + out[o]->bytes, all = out[o]->lead + out[o]->bytes + GUARD;
        unsigned char *now = malloc(all);
        buf_download(out[o], now, all);
        const unsigned char *was = out[o]->snap;
        bool ok = s != CUDNN_STATUS_SUCCESS ? memcmp(now, was, all) == 0 /* a failure: the whole buffer */
                                            : memcmp(now, was, first) == 0 &&
                                                  memcmp(now + end, was + end, all - end) == 0; /* the guards */
        if (!ok)
            FAIL("iteration %d, %s: %s %d", iteration, op,
                 s == CUDNN_STATUS_SUCCESS ? "wrote outside its output" : "failed but wrote its output", o);
        free(now);
    }
    for (int i = 0; i < nin; i++) {
        if (in[i]->base == NULL) continue;
        size_t n = in[i]->lead + in[i]->bytes + GUARD;
        unsigned char *b = malloc(n);
        buf_download(in[i], b, n);
        if (memcmp(b, in[i]->snap, n) != 0) FAIL("iteration %d, %s: wrote input %d", iteration, op, i);
        free(b);
    }
}

void fz_check(const char *op, int iteration, cudnnStatus_t s, struct fz_tensor *const *out, int nout,
              struct fz_tensor *const *in, int nin)
{
    fz_check_with(op, iteration, s, CUDNN_STATUS_SUCCESS, out, nout, in, nin);
}

/* alpha or beta for an output of type t: a double for DOUBLE, a float otherwise. */
const void *fz_scale(struct tscale *s, const struct fz_tensor *out)
{
    static const double values[] = {1, 0, 0.5, -2};
    return tscale(s, fz_dtype(out), values[trand_int(0, 3)]);
}
