/* fused_pointwise.cu: the CUDA engine of pointwise chains (problem/pointwise.h).

   Main decision: one kernel interprets any chain: the chain (at most a few KB) is a kernel
   parameter, so every thread reads the same steps from the constant bank, and the mode switch
   is uniform across a warp. A chain is memory-bound: it reads its inputs and writes its outputs
   once, which is the whole point of fusing it, provided the interpretation stays a few
   instructions an element and each thread keeps enough loads in flight. Compute is float, or
   double for a double chain. Two forms:

   - The general form (pw_chain_lanes) serves every chain: a thread carries PW_ELEMS elements a
     block width apart (a warp's loads of one input are consecutive), issues all their loads
     into registers before the first step, and splits each element number over the normalized
     dims (a packed chain has one) by 32-bit multiply-high division (types.cuh's ocd_fastdiv; a
     64-bit division is about a hundred instructions); each operand's offset is then a dot
     product with its strides, its load and store a switch on its type. Each step runs over all
     of a thread's elements at once (pw_step_lanes): one switch, each case ocd_pw_apply with its
     mode a constant (the other modes' code folded away, the parameters converted once), a
     slot's values for the thread's elements one vector access of local memory, the outputs
     rounded once from the compute type. Still several times a step's own math an element.
   - The fast form (pw_fast_groups, taken before the general form) serves the common chains,
     linear ones whose operands are each shaped like the output and packed in its order, a
     scalar, or per-channel-like (see "the fast form" below): no coordinates, no slots in memory,
     typed 16-byte accesses, a switch on an operand's type once per 8 elements (ScaleBiasAddAct in
     half on an H100: 0.21 ms, the general form 1.60). */
#include "problem/pointwise.h"

#include "core/dtype.h"
#include "core/handle.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"

#include <string.h>

/* A chain as the kernel takes it: the chain and a fast divisor per dim (element numbers fit in
   32 bits: a tensor holds fewer than 2^31 elements, core/tensor.c). */
struct pw_chain_launch {
    ocd_pw_chain c;
    ocd_fastdiv div[OCD_MAX_DIMS];
};

/* Elements a thread carries at once: their loads are all issued before the first step, so that
   each thread keeps PW_ELEMS loads of every input in flight. */
#define PW_ELEMS 4

/* Scalar offset in operand o of the element at coordinates idx (rank 1: idx[0] alone). The dim
   loops run to OCD_MAX_DIMS, unrolled, so that idx stays in registers. */
static __host__ __device__ __forceinline__ int64_t pw_offset(const ocd_pw_chain &c, const ocd_pw_operand &o,
                                                             const uint32_t *idx)
{
    int64_t off = 0;
#pragma unroll
    for (int d = 0; d < OCD_MAX_DIMS; d++)
        if (d < c.rank) off += (int64_t)idx[d] * o.strides[d];
    return off;
}

/* The coordinates of element i, by the multiply-high divisions. */
static __host__ __device__ __forceinline__ void pw_coords(const pw_chain_launch &l, uint32_t i, uint32_t *idx)
{
#pragma unroll
    for (int d = OCD_MAX_DIMS - 1; d > 0; d--)
        if (d < l.c.rank) i = ocd_fastdiv_divmod(l.div[d], i, &idx[d]);
    idx[0] = i;
}

/* One slot's values for a thread's PW_ELEMS elements: one vector access of local memory. */
template <typename C> using pw_lane = ocd_vec<C, PW_ELEMS>;

/* Step st with its mode m (a constant where m is). */
static __host__ __device__ __forceinline__ ocd_pw_step pw_step_as(const ocd_pw_step *st, cudnnPointwiseMode_t m)
{
    ocd_pw_step k = *st;
    k.mode = m;
    return k;
}

/* A step of mode m with every parameter at its default (alphas 1, clips 0 and +inf, slope 0,
   betas 1), as constants: ocd_pw_apply on it folds them away (a scale by 1 is no multiply, a
   plain ReLU one comparison). */
static __host__ __device__ __forceinline__ ocd_pw_step pw_step_plain(cudnnPointwiseMode_t m, bool propagate_nan)
{
    ocd_pw_step k;
    k.mode = m, k.x = 0, k.b = 0;
    k.alpha1 = k.alpha2 = 1;
    k.propagate_nan = propagate_nan;
    k.lower_clip = 0, k.upper_clip = (double)INFINITY, k.clip_slope = 0;
    k.elu_alpha = k.softplus_beta = k.swish_beta = 1;
    return k;
}

/* Whether step s has every parameter at its default (pw_step_plain). */
static bool pw_step_is_plain(const ocd_pw_step *s)
{
    return s->alpha1 == 1 && s->alpha2 == 1 && s->lower_clip == 0 && s->upper_clip == (double)INFINITY &&
           s->clip_slope == 0 && s->elu_alpha == 1 && s->softplus_beta == 1 && s->swish_beta == 1;
}

/* One step over N elements (a thread's elements in the general form, its groups' in the fast form):
   the mode's switch taken once for all of them, each case ocd_pw_apply with its mode a constant
   (its switch folded away, the step's parameters read and converted once; with PLAIN, for a step
   whose parameters are the defaults, those too constants). */
template <typename C, int N, bool PLAIN = false>
static __host__ __device__ __forceinline__ void pw_step_lanes(const ocd_pw_step *st, const ocd_vec<C, N> &x_,
                                                              const ocd_vec<C, N> &b_, ocd_vec<C, N> &out)
{
    const ocd_vec<C, N> x = x_, b = b_; /* whole vectors in, and out below */
    ocd_vec<C, N> r;
    switch (st->mode) {
#define PW_MODE_CASE(m)                                                                            \
    case m: {                                                                                      \
        const ocd_pw_step k = PLAIN ? pw_step_plain(m, st->propagate_nan) : pw_step_as(st, m);     \
        _Pragma("unroll") for (int e = 0; e < N; e++) r.v[e] = ocd_pw_apply<C>(&k, x.v[e], b.v[e]); \
        break;                                                                                     \
    }
        PW_MODE_CASE(CUDNN_POINTWISE_ADD)
        PW_MODE_CASE(CUDNN_POINTWISE_MUL)
        PW_MODE_CASE(CUDNN_POINTWISE_MIN)
        PW_MODE_CASE(CUDNN_POINTWISE_MAX)
        PW_MODE_CASE(CUDNN_POINTWISE_SQRT)
        PW_MODE_CASE(CUDNN_POINTWISE_RELU_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_TANH_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SIGMOID_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_ELU_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_GELU_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SOFTPLUS_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SWISH_FWD)
        PW_MODE_CASE(CUDNN_POINTWISE_RELU_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_TANH_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SIGMOID_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_ELU_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_GELU_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SOFTPLUS_BWD)
        PW_MODE_CASE(CUDNN_POINTWISE_SWISH_BWD)
#undef PW_MODE_CASE
    default:
#pragma unroll
        for (int e = 0; e < N; e++) r.v[e] = ocd_pw_apply<C>(st, x.v[e], b.v[e]);
    }
    out = r;
}

/* What a thread does for the elements first, first + stride, ... (PW_ELEMS of them, those below
   the chain's count): every input of every element loaded into registers, then step by step
   over all the elements at once, the slots in local memory (a step's operands are slots chosen
   at run time), a slot's values for the thread's elements one vector access; then the outputs
   are stored (the coordinates found again: cheaper than keeping them), rounded once from the
   compute type. An element reads and writes only its own positions, so a chain may write an
   output over an input it reads (the graph runs its tails in place). Elements past the count
   compute on zeros and store nothing. Host-callable: tests/emulate/fused_pointwise.cu runs it. */
template <typename C>
static __host__ __device__ __forceinline__ void pw_chain_lanes(const pw_chain_launch &l, uint32_t first,
                                                               uint32_t stride)
{
    const ocd_pw_chain &c = l.c;
    const uint32_t count = (uint32_t)c.count;
    C in[OCD_PW_MAX_INPUTS][PW_ELEMS];
#pragma unroll
    for (int e = 0; e < PW_ELEMS; e++) {
        const uint32_t i = first + e * stride;
        const bool live = i < count;
        uint32_t idx[OCD_MAX_DIMS];
        pw_coords(l, live ? i : 0, idx);
#pragma unroll
        for (int t = 0; t < OCD_PW_MAX_INPUTS; t++)
            if (t < c.ninputs)
                in[t][e] = live ? ocd_cuda_load_as<C>(c.in[t].dtype, c.in[t].data, pw_offset(c, c.in[t], idx)) : (C)0;
    }
    pw_lane<C> slots[OCD_PW_MAX_SLOTS];
#pragma unroll
    for (int t = 0; t < OCD_PW_MAX_INPUTS; t++)
        if (t < c.ninputs) {
#pragma unroll
            for (int e = 0; e < PW_ELEMS; e++) slots[t].v[e] = in[t][e];
        }
    for (int s = 0; s < c.nsteps; s++) {
        const ocd_pw_step *st = &c.steps[s];
        pw_step_lanes<C, PW_ELEMS>(st, slots[st->x], slots[st->b >= 0 ? st->b : st->x], slots[c.ninputs + s]);
    }
#pragma unroll
    for (int e = 0; e < PW_ELEMS; e++) {
        const uint32_t i = first + e * stride;
        if (i >= count) break;
        uint32_t idx[OCD_MAX_DIMS];
        pw_coords(l, i, idx);
        for (int t = 0; t < c.noutputs; t++)
            ocd_cuda_store_as(c.out[t].dtype, (void *)c.out[t].data, pw_offset(c, c.out[t], idx),
                              slots[c.out_slot[t]].v[e]);
    }
}

/* ---- the fast form: typed vector accesses of operands in the output's order ---------------------

   The common chains (a convolution's or matmul's tail run apart, a normalization's apply, a
   backward activation) are linear, and each of their operands is laid out simply in the
   normalized dims: shaped like the output and packed in its order (FULL: the offset of element
   i is i), a scalar, or broadcast along all but one block of neighbouring dims packed within it
   (periodic, the offset (i / inner) % period: a per-channel operand, inner 1 in NHWC and H * W in
   NCHW). pw_fast_plan recognizes such a chain on the host, once a launch, and the kernel then
   runs it with none of the general form's costs. A thread carries PW_FAST_U groups of
   PW_FAST_G consecutive elements (a block width of groups apart, so that a warp's accesses are
   consecutive). The first two FULL inputs the chain reads are streamed: their groups are loaded
   before the first step, as stored (one 16-byte access a group of a 16-bit type, two of float),
   and converted at the step that reads them. The chain's running value is a register vector of
   the groups' elements (acc); each step takes the inputs it reads from the streamed packs or
   loads them there, the operand's storage type switched on once a group: a FULL one as the
   streamed ones, a periodic one with inner 1 (period a multiple of the group) the same at
   i % period, one whose inner is a multiple of the group (or a scalar) one value broadcast over
   the group, any other element by element. The step then runs over all the elements
   (pw_step_lanes; a step whose parameters are all the defaults, as a graph's bias add or ReLU,
   with them as constants, so that its case is the bare operation), and an output that stores
   the step's value is written with one access a 16-byte vector, rounded once from float. The
   last group, when the count is not a multiple of the group, is run by one thread element by
   element (TAIL). Any mix of half, bfloat16 and float operands is served this way (the
   backward-data convolution's float result and a half x, say); a chain with double data or
   compute keeps the general form.

   Linear: step 0 reads inputs only, and every later step reads the previous step's value or an
   input, as x or b; every output stores a step's value. An output that overlaps an input read by
   a later step than the one it stores would be read after it is written, so such a chain keeps
   the general form (in place over an input read by the storing step or earlier is fine: an
   element's loads come before its stores). */

/* Elements of a group: one 16-byte access of a 16-bit type (two of float). */
#define PW_FAST_G 8
/* Groups a thread carries (each step's loads of them issued together). This and
   PW_FAST_MIN_BLOCKS are the fast form's tunables (-D at the build, for a GPU A/B): with 1 and 4
   the kernel takes 64 registers and no local memory; 2 groups spill at 4 blocks. */
#ifndef PW_FAST_U
#define PW_FAST_U 1
#endif
/* Inputs streamed: loaded, as stored, for all the thread's groups before the first step. */
#define PW_FAST_STREAMS 2
/* Threads of a block, and the blocks an SM keeps at least (registers capped at 64 by 4: the heavy
   modes' cases would take 72, which would cost a quarter of the warps). */
#define PW_FAST_THREADS 256
#ifndef PW_FAST_MIN_BLOCKS
#define PW_FAST_MIN_BLOCKS 4
#endif

enum pw_fast_kind { PW_FAST_FULL, PW_FAST_SCALAR, PW_FAST_ROW, PW_FAST_BCAST, PW_FAST_EACH };

/* An operand as the fast form reads or writes it: ROW a periodic operand with inner 1 and a
   period a multiple of the group, aligned (loaded as vectors at i % period); BCAST a periodic one
   whose inner is a multiple of the group (one value a group); EACH any other periodic one
   (element by element). */
struct pw_fast_operand {
    const void *data;
    cudnnDataType_t dtype;
    int kind;
    ocd_fastdiv inner, period;
};

/* What step s reads: x and b an input's index, PW_FAST_ACC for the previous step's value (b:
   PW_FAST_NONE for a unary mode); stores: bit t set when output t stores the step's value. */
#define PW_FAST_ACC (-1)
#define PW_FAST_NONE (-2)
struct pw_fast_step {
    int x, b;
    unsigned stores;
    bool plain; /* every parameter at its default (pw_step_is_plain) */
};

struct pw_fast_launch {
    int nsteps, noutputs;
    int stream[PW_FAST_STREAMS]; /* the streamed inputs, -1 for none */
    uint32_t count, groups; /* groups: the whole groups, count / PW_FAST_G */
    ocd_pw_step steps[OCD_PW_MAX_STEPS];
    pw_fast_step reads[OCD_PW_MAX_STEPS];
    pw_fast_operand in[OCD_PW_MAX_INPUTS], out[OCD_PW_MAX_OUTPUTS];
};

/* The values of a thread's groups, group u at lanes u * PW_FAST_G ... */
typedef ocd_vec<float, PW_FAST_G * PW_FAST_U> pw_fast_lanes;

/* The offset of element i in operand o. */
static __host__ __device__ __forceinline__ uint32_t pw_fast_offset(const pw_fast_operand &o, uint32_t i)
{
    if (o.kind == PW_FAST_FULL) return i;
    if (o.kind == PW_FAST_SCALAR) return 0;
    uint32_t r;
    ocd_fastdiv_divmod(o.period, ocd_fastdiv_div(o.inner, i), &r);
    return r;
}

/* A group's elements as stored: 8 words, of which a 16-bit type fills the first 4. Streamed
   inputs wait in these until their step, so that a thread's loads of them are all in flight at
   once and the registers they hold are those of the stored bytes, not of floats. */
typedef ocd_vec<uint32_t, 8> pw_fast_pack;
typedef ocd_vec<uint32_t, 4> pw_fast_half_pack;

/* The group at scalar offset off of operand o (16-byte aligned), as stored. */
static __host__ __device__ __forceinline__ void pw_fast_load_pack(const pw_fast_operand &o, uint32_t off,
                                                                  pw_fast_pack &p)
{
    const size_t esize = o.dtype == CUDNN_DATA_FLOAT ? 4 : 2;
    const pw_fast_half_pack *q = reinterpret_cast<const pw_fast_half_pack *>((const char *)o.data + off * esize);
    const pw_fast_half_pack a = q[0];
#pragma unroll
    for (int k = 0; k < 4; k++) p.v[k] = a.v[k];
    if (o.dtype == CUDNN_DATA_FLOAT) {
        const pw_fast_half_pack b = q[1];
#pragma unroll
        for (int k = 0; k < 4; k++) p.v[4 + k] = b.v[k];
    }
}

/* A pack's elements of storage type T in float, its words copied as T (memcpy: reading the words
   through a T pointer would break the host compiler's aliasing rules in the emulation; on the
   device the copy is register renaming). */
template <typename T> static __host__ __device__ __forceinline__ void pw_fast_unpack_as(const pw_fast_pack &p, float *w)
{
    ocd_vec<T, PW_FAST_G> t;
    memcpy(&t, p.v, sizeof t);
#pragma unroll
    for (int e = 0; e < PW_FAST_G; e++) w[e] = ocd_cuda_load(&t.v[e]);
}

/* The group at p (16-byte aligned) of storage type T, in float. */
template <typename T> static __host__ __device__ __forceinline__ void pw_fast_load_group(const void *p, float *w)
{
    constexpr int V = ocd_vec16<T>::N;
#pragma unroll
    for (int k = 0; k < PW_FAST_G / V; k++) {
        const ocd_vec16<T> v = reinterpret_cast<const ocd_vec16<T> *>(p)[k];
#pragma unroll
        for (int e = 0; e < V; e++) w[k * V + e] = ocd_cuda_load(&v.v[e]);
    }
}

/* fn called with a value of the storage type of t, one of the fast form's (half, bfloat16 or
   float): the switch on an operand's type that its loads and stores share. */
template <typename F> static __host__ __device__ __forceinline__ void pw_fast_typed(cudnnDataType_t t, F &&fn)
{
    switch (t) {
    case CUDNN_DATA_HALF: fn(__half()); return;
    case CUDNN_DATA_BFLOAT16: fn(__nv_bfloat16()); return;
    default: fn(float()); return;
    }
}

/* The group at scalar offset off of a FULL or ROW operand, in float (typed first: through a
   pack of float's size, a 16-bit group would hold registers it does not use). */
static __host__ __device__ __forceinline__ void pw_fast_load_run(const pw_fast_operand &o, uint32_t off, float *w)
{
    pw_fast_typed(o.dtype, [&](auto tag) {
        typedef decltype(tag) T;
        pw_fast_load_group<T>((const T *)o.data + off, w);
    });
}

/* Output group at p (16-byte aligned) of storage type T, from float. */
template <typename T> static __host__ __device__ __forceinline__ void pw_fast_store_group(void *p, const float *w)
{
    constexpr int V = ocd_vec16<T>::N;
#pragma unroll
    for (int k = 0; k < PW_FAST_G / V; k++) {
        ocd_vec16<T> v;
#pragma unroll
        for (int e = 0; e < V; e++) ocd_cuda_store<T, float>(&v.v[e], w[k * V + e]);
        reinterpret_cast<ocd_vec16<T> *>(p)[k] = v;
    }
}

/* Whether lane group u of the thread's groups (first + u * stride) is one to run. */
template <bool TAIL>
static __host__ __device__ __forceinline__ bool pw_fast_live(const pw_fast_launch &l, uint32_t first, uint32_t stride,
                                                             int u)
{
    return TAIL ? u == 0 : first + u * stride < l.groups;
}

/* Operand o's values at the thread's groups (zeros in groups not run, and past the count). */
template <bool TAIL>
static __host__ __device__ __forceinline__ void pw_fast_load(const pw_fast_launch &l, const pw_fast_operand &o,
                                                             uint32_t first, uint32_t stride, pw_fast_lanes &v)
{
#pragma unroll
    for (int u = 0; u < PW_FAST_U; u++) {
        float *w = &v.v[u * PW_FAST_G];
        const uint32_t i = (first + u * stride) * PW_FAST_G;
        if (!pw_fast_live<TAIL>(l, first, stride, u)) {
#pragma unroll
            for (int e = 0; e < PW_FAST_G; e++) w[e] = 0;
        } else if (!TAIL && o.kind == PW_FAST_FULL) {
            pw_fast_load_run(o, i, w);
        } else if (!TAIL && o.kind == PW_FAST_ROW) {
            uint32_t r;
            ocd_fastdiv_divmod(o.period, i, &r);
            pw_fast_load_run(o, r, w);
        } else if (!TAIL && (o.kind == PW_FAST_BCAST || o.kind == PW_FAST_SCALAR)) {
            const float x = ocd_cuda_load_as<float>(o.dtype, o.data, pw_fast_offset(o, i));
#pragma unroll
            for (int e = 0; e < PW_FAST_G; e++) w[e] = x;
        } else {
#pragma unroll
            for (int e = 0; e < PW_FAST_G; e++)
                w[e] = !TAIL || i + e < l.count ? ocd_cuda_load_as<float>(o.dtype, o.data, pw_fast_offset(o, i + e))
                                                : 0.f;
        }
    }
}

/* Input t's values at the thread's groups: from the packs loaded ahead when it is streamed
   (never in the tail), else loaded now. The streamed pack is chosen word by word, only the words
   of its type (a choice of array by a run-time index would put the packs in local memory). */
typedef pw_fast_pack pw_fast_streams[PW_FAST_STREAMS][PW_FAST_U];

template <typename T>
static __host__ __device__ __forceinline__ void pw_fast_unpack_streamed(const pw_fast_streams &streamed, int u,
                                                                        bool second, float *w)
{
    static_assert(PW_FAST_STREAMS == 2, "the choice below is between two streams");
    pw_fast_pack p;
#pragma unroll
    for (int k = 0; k < (int)sizeof(T) * PW_FAST_G / 4; k++)
        p.v[k] = second ? streamed[1][u].v[k] : streamed[0][u].v[k];
    pw_fast_unpack_as<T>(p, w);
}

template <bool TAIL>
static __host__ __device__ __forceinline__ void pw_fast_input(const pw_fast_launch &l, int t,
                                                              const pw_fast_streams &streamed, uint32_t first,
                                                              uint32_t stride, pw_fast_lanes &v)
{
    if (TAIL || (t != l.stream[0] && t != l.stream[1])) {
        pw_fast_load<TAIL>(l, l.in[t], first, stride, v);
        return;
    }
    const bool second = t == l.stream[1];
#pragma unroll
    for (int u = 0; u < PW_FAST_U; u++) {
        float *w = &v.v[u * PW_FAST_G];
        if (!pw_fast_live<TAIL>(l, first, stride, u)) {
#pragma unroll
            for (int e = 0; e < PW_FAST_G; e++) w[e] = 0;
            continue;
        }
        pw_fast_typed(l.in[t].dtype,
                      [&](auto tag) { pw_fast_unpack_streamed<decltype(tag)>(streamed, u, second, w); });
    }
}

/* Output o (FULL, aligned) written from the thread's groups that run (in the tail, the elements
   below the count). */
template <bool TAIL>
static __host__ __device__ __forceinline__ void pw_fast_store(const pw_fast_launch &l, const pw_fast_operand &o,
                                                              uint32_t first, uint32_t stride, const pw_fast_lanes &v)
{
#pragma unroll
    for (int u = 0; u < PW_FAST_U; u++) {
        if (!pw_fast_live<TAIL>(l, first, stride, u)) continue;
        const float *w = &v.v[u * PW_FAST_G];
        const uint32_t i = (first + u * stride) * PW_FAST_G;
        void *p = (void *)o.data;
        if (TAIL) {
#pragma unroll
            for (int e = 0; e < PW_FAST_G; e++)
                if (i + e < l.count) ocd_cuda_store_as(o.dtype, p, i + e, w[e]);
            continue;
        }
        pw_fast_typed(o.dtype, [&](auto tag) {
            typedef decltype(tag) T;
            pw_fast_store_group<T>((T *)p + i, w);
        });
    }
}

/* What a thread of the fast form does for the groups first, first + stride, ... (PW_FAST_U of
   them, those below the whole groups; TAIL: the partial group `first` alone): step by step, the
   step's inputs loaded, the step run over all the elements, its outputs stored. Host-callable:
   tests/emulate/fused_pointwise.cu runs it. */
template <bool TAIL>
static __host__ __device__ __forceinline__ void pw_fast_groups(const pw_fast_launch &l, uint32_t first, uint32_t stride)
{
    pw_fast_streams streamed;
    if (!TAIL) {
#pragma unroll
        for (int k = 0; k < PW_FAST_STREAMS; k++)
            if (l.stream[k] >= 0) {
#pragma unroll
                for (int u = 0; u < PW_FAST_U; u++)
                    if (pw_fast_live<TAIL>(l, first, stride, u))
                        pw_fast_load_pack(l.in[l.stream[k]], (first + u * stride) * PW_FAST_G, streamed[k][u]);
            }
    }
    pw_fast_lanes acc;
    for (int s = 0; s < l.nsteps; s++) {
        const pw_fast_step &r = l.reads[s];
        pw_fast_lanes x, b;
        if (r.x == PW_FAST_ACC) x = acc;
        else pw_fast_input<TAIL>(l, r.x, streamed, first, stride, x);
        if (r.b == PW_FAST_ACC) b = acc;
        else if (r.b == PW_FAST_NONE) b = x;
        else pw_fast_input<TAIL>(l, r.b, streamed, first, stride, b);
        if (r.plain) pw_step_lanes<float, PW_FAST_G * PW_FAST_U, true>(&l.steps[s], x, b, acc);
        else pw_step_lanes<float, PW_FAST_G * PW_FAST_U>(&l.steps[s], x, b, acc);
        for (int t = 0; t < l.noutputs; t++)
            if (r.stores >> t & 1) pw_fast_store<TAIL>(l, l.out[t], first, stride, acc);
    }
}

/* The fast form's kernel: the whole groups a block width of groups apart, blocks striding; the
   last block's first thread runs the partial group, if any. */
__global__ void __launch_bounds__(PW_FAST_THREADS, PW_FAST_MIN_BLOCKS)
    pw_fast_kernel(const __grid_constant__ pw_fast_launch l)
{
    const uint32_t span = PW_FAST_U * blockDim.x;
    for (uint32_t base = blockIdx.x * span; base < l.groups; base += gridDim.x * span)
        pw_fast_groups<false>(l, base + threadIdx.x, blockDim.x);
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 && l.groups * PW_FAST_G < l.count)
        pw_fast_groups<true>(l, l.groups, 0);
}

/* Operand o of chain c as the fast form reads it, and the scalars it spans; false when it is
   neither FULL, a scalar nor periodic, or an output (as_output) that is not FULL and aligned. */
static bool pw_fast_operand_of(const ocd_pw_chain *c, const ocd_pw_operand *o, bool as_output, pw_fast_operand *f,
                               int64_t *span)
{
    if (o->dtype != CUDNN_DATA_HALF && o->dtype != CUDNN_DATA_BFLOAT16 && o->dtype != CUDNN_DATA_FLOAT) return false;
    int lo = c->rank, hi = -1; /* the block of dims with a stride */
    for (int d = 0; d < c->rank; d++)
        if (o->strides[d] != 0) lo = d < lo ? d : lo, hi = d;
    int64_t period = 1, inner = 1;
    for (int d = hi; d >= lo && d >= 0; d--) {
        if (o->strides[d] != period) return false; /* not packed in the block (or a hole in it) */
        period *= c->dims[d];
    }
    for (int d = hi + 1; d < c->rank; d++) inner *= c->dims[d];
    const bool aligned = ocd_cuda_aligned16(o->data);
    f->data = o->data, f->dtype = o->dtype;
    f->inner = ocd_fastdiv_make((uint32_t)inner), f->period = ocd_fastdiv_make((uint32_t)period);
    if (hi < 0) f->kind = PW_FAST_SCALAR;
    else if (period == c->count && aligned) f->kind = PW_FAST_FULL;
    else if (inner == 1 && period % PW_FAST_G == 0 && aligned) f->kind = PW_FAST_ROW;
    else if (inner % PW_FAST_G == 0) f->kind = PW_FAST_BCAST;
    else f->kind = PW_FAST_EACH;
    *span = hi < 0 ? 1 : period;
    return !as_output || f->kind == PW_FAST_FULL;
}

/* Whether the byte ranges of two operands (data and span in scalars) overlap. */
static bool pw_fast_overlap(const pw_fast_operand &a, int64_t na, const pw_fast_operand &b, int64_t nb)
{
    const char *pa = (const char *)a.data, *pb = (const char *)b.data;
    const int64_t ea = (int64_t)ocd_dtype_scalar_size(a.dtype), eb = (int64_t)ocd_dtype_scalar_size(b.dtype);
    return pa < pb + nb * eb && pb < pa + na * ea;
}

/* The fast form's launch of chain c, when it takes the chain (see above). */
static bool pw_fast_plan(const ocd_pw_chain *c, pw_fast_launch *l)
{
    if (c->double_compute || c->nsteps < 1) return false;
    memset(l, 0, sizeof *l);
    l->nsteps = c->nsteps, l->noutputs = c->noutputs;
    l->count = (uint32_t)c->count, l->groups = (uint32_t)(c->count / PW_FAST_G);
    memcpy(l->steps, c->steps, sizeof l->steps);
    int64_t in_span[OCD_PW_MAX_INPUTS], out_span[OCD_PW_MAX_OUTPUTS];
    for (int t = 0; t < c->ninputs; t++)
        if (!pw_fast_operand_of(c, &c->in[t], false, &l->in[t], &in_span[t])) return false;
    for (int t = 0; t < c->noutputs; t++)
        if (!pw_fast_operand_of(c, &c->out[t], true, &l->out[t], &out_span[t])) return false;
    int last_read[OCD_PW_MAX_INPUTS]; /* the last step reading each input */
    for (int t = 0; t < c->ninputs; t++) last_read[t] = -1;
    for (int k = 0; k < PW_FAST_STREAMS; k++) l->stream[k] = -1;
    int nstreams = 0;
    for (int s = 0; s < c->nsteps; s++) {
        const ocd_pw_step *st = &c->steps[s];
        l->reads[s].plain = pw_step_is_plain(st);
        int *r[2] = {&l->reads[s].x, &l->reads[s].b};
        const int slot[2] = {st->x, st->b};
        for (int k = 0; k < 2; k++) {
            if (slot[k] < 0 && k == 1) *r[k] = PW_FAST_NONE;
            else if (slot[k] >= 0 && slot[k] < c->ninputs) {
                *r[k] = slot[k];
                if (last_read[slot[k]] < 0 && l->in[slot[k]].kind == PW_FAST_FULL && nstreams < PW_FAST_STREAMS)
                    l->stream[nstreams++] = slot[k]; /* the first FULL inputs read */
                last_read[slot[k]] = s;
            }
            else if (s > 0 && slot[k] == c->ninputs + s - 1) *r[k] = PW_FAST_ACC;
            else return false; /* an older step's value: not linear */
        }
    }
    for (int t = 0; t < c->noutputs; t++) {
        const int s = c->out_slot[t] - c->ninputs;
        if (s < 0 || s >= c->nsteps) return false; /* an output of an input slot */
        l->reads[s].stores |= 1u << t;
        for (int k = 0; k < c->ninputs; k++)
            if (last_read[k] > s && pw_fast_overlap(l->out[t], out_span[t], l->in[k], in_span[k])) return false;
    }
    return true;
}

template <typename C> __global__ void pw_chain_kernel(const __grid_constant__ pw_chain_launch l)
{
    ocd_cuda_each_span<PW_ELEMS>(l.c.count,
                                 [&](int64_t base) { pw_chain_lanes<C>(l, (uint32_t)base + threadIdx.x, blockDim.x); });
}

/* The launch of chain c: its divisors. */
static pw_chain_launch pw_chain_launch_of(const ocd_pw_chain *c)
{
    pw_chain_launch l;
    l.c = *c;
    for (int d = 0; d < OCD_MAX_DIMS; d++) l.div[d] = ocd_fastdiv_make(d < c->rank ? (uint32_t)c->dims[d] : 1);
    return l;
}

cudnnStatus_t ocd_cuda_pw_chain(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws, (void)ws_bytes;
    const struct ocd_pw_chain *c = (const struct ocd_pw_chain *)problem;
    pw_fast_launch f;
    if (pw_fast_plan(c, &f)) {
        const unsigned blocks = ocd_cuda_span_blocks(f.groups, PW_FAST_U, PW_FAST_THREADS);
        pw_fast_kernel<<<blocks, PW_FAST_THREADS, 0, handle->stream>>>(f);
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    }
    const pw_chain_launch l = pw_chain_launch_of(c);
    const int block = 256;
    const unsigned blocks = ocd_cuda_span_blocks(l.c.count, PW_ELEMS, block);
    if (l.c.double_compute) pw_chain_kernel<double><<<blocks, block, 0, handle->stream>>>(l);
    else pw_chain_kernel<float><<<blocks, block, 0, handle->stream>>>(l);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
