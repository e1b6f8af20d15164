/* tensor_ops.cu: the CUDA elementwise engine (problem/ewise.h says what it computes).

   Two entries of the elementwise table live here:
   - cuda:ewise_vec16, for problems whose innermost dimension y walks with unit stride and each
     input with unit stride or 0 (every packed set, scale, add, op tensor and same-layout
     transform, and the broadcasts along rows such as a per-channel bias): each thread moves
     up to four packs of 16 bytes of its widest operand per step in a grid-stride loop (unroll_for),
     the op and y's blend (beta != 0) being template arguments, a block's step covering a segment
     of consecutive packs; how a pack's offsets are found is the launch's form (rows_form): a
     segment's row decoded once when the segment lies in one row, a copy's one value a row held as
     one value, or, with at most one row dimension, each pack's row by one division and no state
     (the fewer registers a thread holds, the more blocks an SM keeps and the more bytes it keeps
     in flight: the 16-bit scale in place and bias adds keep 8, 5 and 6 blocks an SM this way, 4
     with a decoding state per thread). Loaded packs wait in registers as stored, converted
     only when used (raw_pack); half and bfloat16 results are rounded two at a time; a single
     row's leftover tail goes element by element. The per-thread code is host-callable
     (rows_thread) so that a CPU emulation runs every thread of a launch
     (tests/emulate/ewise_rows.cu). Bytes moved:
     inputs read once, y written once, y read once more only when beta != 0.
   - cuda:ewise_strided, for everything else: one thread per element in y's order (so writes
     are coalesced whenever y's fastest dimension is packed), offsets from the linear index by
     fast division as signed 64-bit products, broadcast operands walking stride 0 and reversed
     inputs negative strides (the vectorized path's 32-bit row offsets decline those). It alone is instantiated for every pair
     of storage types (the conversions of cudnnTransformTensor and cudnnAddTensor); the
     vectorized path keeps the pairs of cudnnOpTensor's table.
   Both compute in the pair's compute type (ocd_compute_pair), so that a conversion rounds once.
   cudnnSetTensor's fill writes raw bit patterns of the element size, so it is exact for every
   type and needs no conversion. */
#include "problem/ewise.h"

#include "core/dtype.h"
#include "core/handle.h"
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"

#include <atomic>

#define THREADS 256

/* Enough resident blocks to fill every multiprocessor (2048 threads each) for grid-stride loops. */
static unsigned grid_for(cudnnHandle_t h, int64_t work)
{
    int64_t want = (work + THREADS - 1) / THREADS, most = (int64_t)h->sm_count * (2048 / THREADS);
    return (unsigned)(want < 1 ? 1 : want < most ? want : most);
}

/* ---- the strided path ------------------------------------------------------------------------- */

struct strided_args {
    int rank;
    uint32_t count;
    ocd_fastdiv dims[OCD_EWISE_MAX_DIMS];
    int64_t strides[3][OCD_EWISE_MAX_DIMS]; /* y, a, b */
};

static strided_args strided_args_of(const struct ocd_ewise *e)
{
    strided_args g;
    g.rank = e->rank;
    g.count = (uint32_t)e->count;
    const struct ocd_ewise_operand *ops[3] = {&e->y, &e->a, &e->b};
    for (int d = 0; d < OCD_EWISE_MAX_DIMS; d++) {
        g.dims[d] = ocd_fastdiv_make(d < e->rank ? (uint32_t)e->dims[d] : 1);
        for (int k = 0; k < 3; k++) g.strides[k][d] = d < e->rank ? ops[k]->strides[d] : 0;
    }
    return g;
}

/* Offsets of element i (in y's order) in y, a and b. */
__device__ __forceinline__ void strided_offsets(const strided_args &g, uint32_t i, int64_t off[3])
{
    off[0] = off[1] = off[2] = 0;
#pragma unroll
    for (int d = OCD_EWISE_MAX_DIMS - 1; d >= 0; d--) {
        if (d >= g.rank) continue;
        uint32_t q = d > 0 ? ocd_fastdiv_div(g.dims[d], i) : 0, r = i - q * g.dims[d].d;
        i = q;
#pragma unroll
        for (int k = 0; k < 3; k++) off[k] += (int64_t)r * g.strides[k][d];
    }
}

template <typename Ty, typename Ta>
__global__ void ewise_strided(strided_args g, ocd_cuda_scales<typename ocd_compute_pair<Ty, Ta>::type> s, Ty *y,
                              const Ta *a, const Ta *b, bool binary)
{
    typedef typename ocd_compute_pair<Ty, Ta>::type C;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < g.count; i += gridDim.x * blockDim.x) {
        int64_t off[3];
        strided_offsets(g, i, off);
        C av = ocd_cuda_load_in<C, Ta>(a + off[1]), bv = binary ? ocd_cuda_load_in<C, Ta>(b + off[2]) : C(0);
        ocd_cuda_ewise_apply<Ty, C>(s.op, s, y + off[0], av, bv);
    }
}

template <typename U> __global__ void fill_strided(strided_args g, U *y, U value)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < g.count; i += gridDim.x * blockDim.x) {
        int64_t off[3];
        strided_offsets(g, i, off);
        y[off[0]] = value;
    }
}

/* Calls fn(tag<U>) with the unsigned type of the fill's element size. */
template <typename F> static void dispatch_bits(cudnnDataType_t t, F fn)
{
    switch (ocd_dtype_scalar_size(t)) {
    case 1: fn(ocd_type_tag<uint8_t>()); return;
    case 2: fn(ocd_type_tag<uint16_t>()); return;
    case 4: fn(ocd_type_tag<uint32_t>()); return;
    default: fn(ocd_type_tag<uint64_t>()); return;
    }
}

template <typename U> static U fill_value(const struct ocd_ewise *e)
{
    U v;
    memcpy(&v, &e->fill, sizeof v);
    return v;
}

extern "C" const char *ocd_cuda_ewise_strided_applies(cudnnHandle_t handle, const void *problem)
{
    (void)handle;
    const struct ocd_ewise *e = (const struct ocd_ewise *)problem;
    if (e->op != OCD_EWISE_FILL && !ocd_cuda_dispatch_any_pair(e->y.dtype, e->a.dtype, [](auto, auto) {}))
        return OCD_REASON_DTYPE;
    return NULL;
}

extern "C" cudnnStatus_t ocd_cuda_ewise_strided_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                                    size_t workspace_bytes)
{
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_ewise *e = (const struct ocd_ewise *)problem;
    strided_args g = strided_args_of(e);
    unsigned grid = grid_for(handle, e->count);
    if (e->op == OCD_EWISE_FILL) {
        dispatch_bits(e->y.dtype, [&](auto u) {
            typedef typename decltype(u)::type U;
            fill_strided<U><<<grid, THREADS, 0, handle->stream>>>(g, (U *)e->y.data, fill_value<U>(e));
        });
    } else {
        ocd_cuda_dispatch_any_pair(e->y.dtype, e->a.dtype, [&](auto ty, auto ta) {
            typedef typename decltype(ty)::type Ty;
            typedef typename decltype(ta)::type Ta;
            typedef typename ocd_compute_pair<Ty, Ta>::type C;
            ewise_strided<Ty, Ta><<<grid, THREADS, 0, handle->stream>>>(
                g, ocd_cuda_scales_of<C>(e), (Ty *)e->y.data, (const Ta *)e->a.data, (const Ta *)e->b.data,
                ocd_ewise_inputs(e->op) == 2);
        });
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the vectorized path ---------------------------------------------------------------------- */

/* Rows of the problem: every dim but the last is a row; along the last, y and each input that
   is not broadcast (stride 0) have unit stride, so a row is walked in packs of N elements.
   Offsets are 32-bit (cuda/types.cuh). */
struct rows_args {
    uint32_t packs;       /* packs per row (inner / N) */
    uint32_t total;       /* packs in all rows */
    uint32_t inner;       /* elements per row: for a single row, a tail may follow the packs */
    int outer_rank;
    ocd_fastdiv div_packs, outer_dims[OCD_EWISE_MAX_DIMS];
    uint32_t outer[3][OCD_EWISE_MAX_DIMS]; /* y, a, b strides of the row dims, in elements */
    bool a_bcast, b_bcast;                 /* the input is one value per row */
};

/* Offsets of the first element of row r in y, a and b. */
__host__ __device__ __forceinline__ void row_offsets(const rows_args &g, uint32_t r, uint32_t off[3])
{
    if (g.outer_rank == 1) { /* one row dimension (a channels-last bias, say): no division, no loop */
#pragma unroll
        for (int k = 0; k < 3; k++) off[k] = r * g.outer[k][0];
        return;
    }
    off[0] = off[1] = off[2] = 0;
    for (int d = g.outer_rank - 1; d >= 0; d--) {
        uint32_t q = d > 0 ? ocd_fastdiv_div(g.outer_dims[d], r) : 0, i = r - q * g.outer_dims[d].d;
        r = q;
#pragma unroll
        for (int k = 0; k < 3; k++) off[k] += i * g.outer[k][d];
    }
}

/* How a launch finds its operands' packs, decided once a call (rows_form_of):
   - ROWS_ANY: by the rows' strides, a segment's row decoded once when the segment lies in one row;
   - ROWS_VALUE: the same, a copy's input being one value per row (a per-channel bias over NCHW
     rows), held as that one value, so that a pack's registers are y's alone;
   - ROWS_FLAT: at most one row dimension and no input broadcast along rows (the scale in place,
     a copy between tensors of one layout, a per-channel bias over NHWC rows): pack p at its row
     p / packs times the row's stride plus its column, no segment state (a thread's registers
     decide how many blocks fit an SM, and so how many bytes are in flight). */
enum rows_form { ROWS_ANY, ROWS_VALUE, ROWS_FLAT };

/* A block step covers a segment of `seg` consecutive packs, pack u * threads + t of it going to
   thread t (so that each load is coalesced). When the segment lies in one row, which is the rule
   for rows longer than a segment, the row is decoded once for all of them; otherwise pack by pack. */
struct rows_segment {
    uint32_t first, col0; /* the segment's first pack, and its column in packs */
    bool one_row;
    uint32_t off[3];      /* one_row: the row's offsets */
};

template <int FORM>
__host__ __device__ __forceinline__ rows_segment rows_segment_at(const rows_args &g, uint32_t first, uint32_t seg)
{
    rows_segment sg;
    sg.first = first;
    if (FORM == ROWS_FLAT) return sg; /* pack by pack (rows_pack_offsets) */
    const uint32_t r = ocd_fastdiv_div(g.div_packs, first);
    sg.col0 = first - r * g.packs;
    sg.one_row = sg.col0 + seg <= g.packs;
    row_offsets(g, sg.one_row ? r : 0, sg.off);
    return sg;
}

/* Offsets in y, a and b of pack i of the segment (first + i < total): a broadcast input stays at
   its row's value. */
template <int FORM>
__host__ __device__ __forceinline__ void rows_pack_offsets(const rows_args &g, const rows_segment &sg, uint32_t i, int n,
                                                           uint32_t off[3])
{
    uint32_t col;
    if (FORM == ROWS_FLAT) {
        const uint32_t v = sg.first + i, r = ocd_fastdiv_div(g.div_packs, v);
        col = (v - r * g.packs) * n;
#pragma unroll
        for (int k = 0; k < 3; k++) off[k] = r * g.outer[k][0] + col;
        return;
    }
    if (sg.one_row) {
        off[0] = sg.off[0], off[1] = sg.off[1], off[2] = sg.off[2];
        col = (sg.col0 + i) * n;
    } else {
        const uint32_t v = sg.first + i, r = ocd_fastdiv_div(g.div_packs, v);
        row_offsets(g, r, off);
        col = (v - r * g.packs) * n;
    }
    off[0] += col;
    off[1] += g.a_bcast ? 0 : col;
    off[2] += g.b_bcast ? 0 : col;
}

/* A pack as stored, in 32-bit words: how it waits in registers between its load and its use
   (converted only when used, so that the registers holding the loads in flight are as few as
   their bytes). Words, not elements, so that a broadcast pack and a loaded one fill the same
   registers the same way: with 16-bit elements the compiler merged the two element by element
   right after the load, waiting for it before the next pack's load was issued. */
template <typename T, int N> struct raw_pack {
    static_assert(sizeof(T) * N % 4 == 0, "packs are whole words");
    ocd_vec<uint32_t, sizeof(T) * N / 4> w;

    /* Element k in the compute type C (a compile-time index: a register array indexed at run
       time goes to local memory). */
    template <typename C> __host__ __device__ __forceinline__ C at(int k) const
    {
        return ocd_cuda_load_in<C, T>(reinterpret_cast<const T *>(w.v) + k);
    }
};

/* An input's pack at p: the whole pack, or a broadcast input's one value in every element. */
template <typename T, int N>
__host__ __device__ __forceinline__ void load_pack(const T *p, bool broadcast, raw_pack<T, N> &out)
{
    typedef ocd_vec<uint32_t, sizeof(T) * N / 4> words;
    if (broadcast) {
        ocd_vec<T, N> x;
        const T v = *p;
#pragma unroll
        for (int k = 0; k < N; k++) x.v[k] = v;
        out.w = *reinterpret_cast<const words *>(&x);
    } else {
        out.w = *reinterpret_cast<const words *>(p);
    }
}

/* N results to storage: half and bfloat16 two at a time (one cvt.rn.f16x2.f32 or .bf16x2 for
   two elements, each rounded to nearest even as ocd_cuda_store rounds one). */
template <typename T, typename C, int N> struct store_pack {
    static __host__ __device__ __forceinline__ void to(ocd_vec<T, N> &out, const C r[N])
    {
#pragma unroll
        for (int k = 0; k < N; k++) ocd_cuda_store<T, C>(&out.v[k], r[k]);
    }
};
template <int N> struct store_pack<__half, float, N> {
    static __host__ __device__ __forceinline__ void to(ocd_vec<__half, N> &out, const float r[N])
    {
#pragma unroll
        for (int k = 0; k < N; k += 2) *reinterpret_cast<__half2 *>(&out.v[k]) = __floats2half2_rn(r[k], r[k + 1]);
    }
};
template <int N> struct store_pack<__nv_bfloat16, float, N> {
    static __host__ __device__ __forceinline__ void to(ocd_vec<__nv_bfloat16, N> &out, const float r[N])
    {
#pragma unroll
        for (int k = 0; k < N; k += 2)
            *reinterpret_cast<__nv_bfloat162 *>(&out.v[k]) = __floats2bfloat162_rn(r[k], r[k + 1]);
    }
};

/* Packs per thread and step, all loaded before any is stored, to keep enough bytes in flight
   without spilling: 4 packs of 4 or fewer elements, 1 of 16; of 8 elements, 2 when two operands
   are streamed from memory (measured best on an H200: more ran slower) and 4 when one alone is
   (scale, per-channel bias: with 2 they had half the bytes in flight of the two-operand ops). */
static constexpr __host__ __device__ int unroll_for(int n, int streamed)
{
    return n >= 16 ? 1 : n >= 8 ? (streamed <= 1 ? 4 : 2) : 4;
}

/* Whether op reads b: ocd_ewise_inputs(op) == 2, at compile time (COPY, SQRT and NOT are unary). */
static constexpr __host__ __device__ bool rows_binary(int op)
{
    return op != OCD_EWISE_COPY && op != OCD_EWISE_SQRT && op != OCD_EWISE_NOT;
}

/* One thread's share of a block step: packs u * threads + t (u < UNROLL) of the segment sg, all
   loaded before any is stored, found as FORM says (rows_form); y is read only when BLEND
   (beta != 0). */
template <typename Ty, typename Ta, int N, int OP, int UNROLL, int FORM, bool BLEND>
__host__ __device__ __forceinline__ void rows_step(const rows_args &g,
                                                   const ocd_cuda_scales<typename ocd_compute_pair<Ty, Ta>::type> &s,
                                                   Ty *y, const Ta *a, const Ta *b, const rows_segment &sg,
                                                   uint32_t threads, uint32_t t)
{
    typedef typename ocd_compute_pair<Ty, Ta>::type C;
    constexpr bool binary = rows_binary(OP);
    raw_pack<Ta, N> av[UNROLL], bv[UNROLL];
    raw_pack<Ty, N> yv[UNROLL];
    C a1[UNROLL]; /* ROWS_VALUE: a's value */
    uint32_t yo[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        const uint32_t i = u * threads + t;
        if (sg.first + i >= g.total) continue;
        uint32_t off[3];
        rows_pack_offsets<FORM>(g, sg, i, N, off);
        yo[u] = off[0];
        if (FORM == ROWS_VALUE) a1[u] = ocd_cuda_load_in<C, Ta>(a + off[1]);
        else load_pack<Ta, N>(a + off[1], g.a_bcast, av[u]);
        if (binary) load_pack<Ta, N>(b + off[2], g.b_bcast, bv[u]);
        if (BLEND) load_pack<Ty, N>(y + yo[u], false, yv[u]);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        if (sg.first + u * threads + t >= g.total) continue;
        C r[N];
#pragma unroll
        for (int k = 0; k < N; k++)
            r[k] = ocd_cuda_ewise_value<C>((enum ocd_ewise_op)OP, s, FORM == ROWS_VALUE ? a1[u] : av[u].template at<C>(k),
                                           binary ? bv[u].template at<C>(k) : C(0),
                                           BLEND ? yv[u].template at<C>(k) : C(0), BLEND);
        ocd_vec<Ty, N> out;
        store_pack<Ty, C, N>::to(out, r);
        *reinterpret_cast<ocd_vec<Ty, N> *>(y + yo[u]) = out;
    }
}

/* Thread t of block `block` (of `blocks`, `threads` threads each): its packs of every block step,
   then for a single row an element of the tail of fewer than N that follows the packs. The
   kernel's whole per-thread code, host-callable so that a CPU emulation can run every thread.
   BLEND (beta != 0) is the kernel's, not decided per step: the registers a blend's loads take
   would otherwise be every launch's. */
template <typename Ty, typename Ta, int N, int OP, int UNROLL, int FORM, bool BLEND>
__host__ __device__ __forceinline__ void rows_thread(const rows_args &g,
                                                     const ocd_cuda_scales<typename ocd_compute_pair<Ty, Ta>::type> &s,
                                                     Ty *y, const Ta *a, const Ta *b, uint32_t block, uint32_t blocks,
                                                     uint32_t threads, uint32_t t)
{
    typedef typename ocd_compute_pair<Ty, Ta>::type C;
    const uint32_t seg = UNROLL * threads;
    for (uint32_t first = block * seg; first < g.total; first += blocks * seg)
        rows_step<Ty, Ta, N, OP, UNROLL, FORM, BLEND>(g, s, y, a, b, rows_segment_at<FORM>(g, first, seg), threads, t);
    constexpr bool binary = rows_binary(OP);
    const uint32_t i = g.packs * N + block * threads + t;
    if (g.total == g.packs && i < g.inner) {
        C av = ocd_cuda_load_in<C, Ta>(a + (g.a_bcast ? 0 : i));
        C bv = binary ? ocd_cuda_load_in<C, Ta>(b + (g.b_bcast ? 0 : i)) : C(0);
        ocd_cuda_ewise_apply<Ty, C>((enum ocd_ewise_op)OP, s, y + i, av, bv);
    }
}

/* OP is a compile-time op so that the element loop is straight-line code. */
template <typename Ty, typename Ta, int N, int OP, int UNROLL, int FORM, bool BLEND>
__global__ void __launch_bounds__(THREADS) ewise_rows(rows_args g,
                                                      ocd_cuda_scales<typename ocd_compute_pair<Ty, Ta>::type> s, Ty *y,
                                                      const Ta *a, const Ta *b)
{
    rows_thread<Ty, Ta, N, OP, UNROLL, FORM, BLEND>(g, s, y, a, b, blockIdx.x, gridDim.x, blockDim.x, threadIdx.x);
}

template <typename U> __global__ void fill_vec(uint32_t n, U *y, U value)
{
    const int N = 16 / sizeof(U);
    const uint32_t nvec = n / N, step = gridDim.x * blockDim.x, tid = blockIdx.x * blockDim.x + threadIdx.x;
    ocd_vec<U, N> out;
#pragma unroll
    for (int k = 0; k < N; k++) out.v[k] = value;
    for (uint32_t v = tid; v < nvec; v += step) reinterpret_cast<ocd_vec<U, N> *>(y)[v] = out;
    uint32_t i = nvec * N + tid;
    if (i < n) y[i] = value;
}

/* Elements per pack: 16 bytes of the widest operand. */
static int vec_width(const struct ocd_ewise *e)
{
    size_t widest = ocd_dtype_scalar_size(e->y.dtype);
    if (e->op != OCD_EWISE_FILL) widest = OCD_MAX(widest, ocd_dtype_scalar_size(e->a.dtype));
    return (int)(16 / widest);
}

/* Whether an operand can be read or written in packs of n: aligned base, unit stride along the
   row (or, for an input, stride 0), and row strides that keep every row's start aligned. */
static bool packable(const struct ocd_ewise *e, const struct ocd_ewise_operand *o, int n, bool input)
{
    int last = e->rank - 1;
    if (input && o->strides[last] == 0) return true; /* one value per row: scalar loads */
    if (o->strides[last] != 1 || (uintptr_t)o->data % (n * ocd_dtype_scalar_size(o->dtype)) != 0) return false;
    for (int d = 0; d < last; d++)
        if (o->strides[d] % n != 0) return false;
    return true;
}

/* Whether an operand walks a row dimension backwards (an input reversed where y is not): the
   rows' offsets are unsigned 32-bit (rows_args), so such a problem goes to the strided path. */
static bool reversed_rows(const struct ocd_ewise *e, const struct ocd_ewise_operand *o)
{
    for (int d = 0; d < e->rank; d++)
        if (o->strides[d] < 0) return true;
    return false;
}

/* The same-type pairs of every op's table entry, and the mixed ones cudnnOpTensor allows; ops
   other than COPY only for cudnnOpTensor's pairs (the API lets no other through). */
static bool op_pair_supported(const struct ocd_ewise *e)
{
    if (!ocd_cuda_pair_supported(e->y.dtype, e->a.dtype)) return false;
    return e->op == OCD_EWISE_COPY || (e->y.dtype != CUDNN_DATA_UINT8 && e->y.dtype != CUDNN_DATA_INT32);
}

extern "C" const char *ocd_cuda_ewise_vec_applies(cudnnHandle_t handle, const void *problem)
{
    (void)handle;
    const struct ocd_ewise *e = (const struct ocd_ewise *)problem;
    int n = vec_width(e), inputs = ocd_ewise_inputs(e->op);
    if (e->op == OCD_EWISE_FILL) {
        if (e->rank != 1 || e->y.strides[0] != 1) return OCD_REASON_NOT_PACKED;
        return (uintptr_t)e->y.data % 16 ? OCD_REASON_ALIGNMENT : NULL;
    }
    if (!op_pair_supported(e)) return OCD_REASON_DTYPE;
    if (reversed_rows(e, &e->a) || (inputs >= 2 && reversed_rows(e, &e->b))) return OCD_REASON_LAYOUT;
    if (e->y.strides[e->rank - 1] != 1) return OCD_REASON_NOT_PACKED;
    if (e->rank > 1 && e->dims[e->rank - 1] % n != 0) return OCD_REASON_SHAPE;
    if (!packable(e, &e->y, n, false) || (inputs >= 1 && !packable(e, &e->a, n, true)) ||
        (inputs >= 2 && !packable(e, &e->b, n, true)))
        return OCD_REASON_ALIGNMENT;
    return NULL;
}

/* The operands a call streams from memory: y when blended, and each input of y's shape (a
   broadcast one, a per-channel bias say, stays in cache). */
static int streamed_operands(const struct ocd_ewise *e)
{
    const struct ocd_ewise_operand *in[2] = {&e->a, &e->b};
    int streamed = e->beta != 0;
    for (int k = 0; k < ocd_ewise_inputs(e->op); k++) {
        bool broadcast = false;
        for (int d = 0; d < e->rank; d++) broadcast = broadcast || (e->dims[d] > 1 && in[k]->strides[d] == 0);
        streamed += !broadcast;
    }
    return streamed;
}

/* The kernel's arguments for problem e in packs of n (the launch's, and the CPU emulation's). */
static rows_args rows_args_of(const struct ocd_ewise *e, int n)
{
    rows_args g;
    memset(&g, 0, sizeof g);
    int last = e->rank - 1;
    g.inner = (uint32_t)e->dims[last];
    g.packs = g.inner / n;
    g.total = (uint32_t)(e->count / e->dims[last]) * g.packs;
    g.div_packs = ocd_fastdiv_make(g.packs > 0 ? g.packs : 1);
    g.outer_rank = last;
    const struct ocd_ewise_operand *ops[3] = {&e->y, &e->a, &e->b};
    for (int d = 0; d < OCD_EWISE_MAX_DIMS; d++) {
        g.outer_dims[d] = ocd_fastdiv_make(d < last ? (uint32_t)e->dims[d] : 1);
        for (int k = 0; k < 3; k++) g.outer[k][d] = d < last ? (uint32_t)ops[k]->strides[d] : 0;
    }
    g.a_bcast = e->a.strides[last] == 0;
    g.b_bcast = e->b.strides[last] == 0;
    return g;
}

template <typename Ty, typename Ta, int N, int OP, int UNROLL, int FORM, bool BLEND>
static void launch_rows_kernel(cudnnHandle_t handle, const struct ocd_ewise *e)
{
    typedef typename ocd_compute_pair<Ty, Ta>::type C;
    const rows_args g = rows_args_of(e, N);
    /* No more blocks than are resident at once (the kernel's registers decide how many fit on a
       multiprocessor): the grid-stride loop then runs as one full wave, where a grid of 8 blocks a
       multiprocessor ran a partial last wave, short of bytes in flight, for kernels that fit 3 or
       5. Queried once per kernel (threads racing to it store the same answer); it sets the speed
       only, never the result. */
    static std::atomic<int> cached_per_sm{0};
    int per_sm = cached_per_sm.load(std::memory_order_relaxed);
    if (per_sm == 0) {
        auto kernel = ewise_rows<Ty, Ta, N, OP, UNROLL, FORM, BLEND>;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, 0) != cudaSuccess || per_sm < 1) {
            (void)cudaGetLastError(); /* not this launch's error */
            per_sm = 2048 / THREADS;
        }
        cached_per_sm.store(per_sm, std::memory_order_relaxed);
    }
    const int64_t want = ((int64_t)(g.total + UNROLL - 1) / UNROLL + 1 + THREADS - 1) / THREADS;
    const unsigned grid = (unsigned)OCD_MIN(want, (int64_t)handle->sm_count * per_sm);
    ewise_rows<Ty, Ta, N, OP, UNROLL, FORM, BLEND><<<grid, THREADS, 0, handle->stream>>>(
        g, ocd_cuda_scales_of<C>(e), (Ty *)e->y.data, (const Ta *)e->a.data, (const Ta *)e->b.data);
}

/* The form a launch takes (rows_form): for a copy (the scale, the bias adds, a transform),
   ROWS_VALUE when its input is one value per row, ROWS_FLAT when there is at most one row
   dimension; ROWS_ANY for the rest. The binary ops keep ROWS_ANY alone: streaming two inputs,
   they keep bytes enough in flight with it (94-96% of copy on an H200), and each form is another
   kernel for every op and type. */
static int rows_form_of(const struct ocd_ewise *e)
{
    if (e->op != OCD_EWISE_COPY) return ROWS_ANY;
    if (e->a.strides[e->rank - 1] == 0) return ROWS_VALUE;
    return e->rank <= 2 ? ROWS_FLAT : ROWS_ANY;
}

/* Calls fn(unroll, form, blend), each a std::integral_constant, with the kernel that takes problem
   e into y of Ty in packs of N: rows_form_of's form, unroll_for's packs a step, blend when beta
   is not 0 in the compute type (as the kernel sees it). The launch's choice, and the CPU
   emulation's. */
template <typename Ty, typename Ta, int N, int OP, typename F> static void rows_kernel_for(const struct ocd_ewise *e, F fn)
{
    typedef typename ocd_compute_pair<Ty, Ta>::type C;
    typedef std::integral_constant<int, unroll_for(N, 1)> one;
    typedef std::integral_constant<int, unroll_for(N, 2)> more;
    const bool blend = ocd_cuda_scales_of<C>(e).beta != C(0);
    const bool single = streamed_operands(e) <= 1;
    auto with_blend = [&](auto unroll, auto form) {
        if (blend) fn(unroll, form, std::true_type());
        else fn(unroll, form, std::false_type());
    };
    auto with_unroll = [&](auto form) {
        if (one::value != more::value && single) with_blend(one(), form);
        else with_blend(more(), form);
    };
    if constexpr (OP == OCD_EWISE_COPY) { /* the forms of a copy alone (rows_form_of) */
        switch (rows_form_of(e)) {
        case ROWS_VALUE: with_blend(one(), std::integral_constant<int, ROWS_VALUE>()); return; /* 1 streamed */
        case ROWS_FLAT: with_unroll(std::integral_constant<int, ROWS_FLAT>()); return;
        default: break;
        }
    }
    with_unroll(std::integral_constant<int, ROWS_ANY>());
}

template <typename Ty, typename Ta, int N, int OP>
static void launch_rows(cudnnHandle_t handle, const struct ocd_ewise *e)
{
    rows_kernel_for<Ty, Ta, N, OP>(e, [&](auto unroll, auto form, auto blend) {
        launch_rows_kernel<Ty, Ta, N, OP, decltype(unroll)::value, decltype(form)::value, decltype(blend)::value>(
            handle, e);
    });
}

extern "C" cudnnStatus_t ocd_cuda_ewise_vec_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                                size_t workspace_bytes)
{
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_ewise *e = (const struct ocd_ewise *)problem;
    if (e->op == OCD_EWISE_FILL) {
        uint32_t n = (uint32_t)e->count;
        dispatch_bits(e->y.dtype, [&](auto u) {
            typedef typename decltype(u)::type U;
            fill_vec<U><<<grid_for(handle, n / (16 / sizeof(U)) + 1), THREADS, 0, handle->stream>>>(
                n, (U *)e->y.data, fill_value<U>(e));
        });
    } else {
        ocd_cuda_dispatch_pair(e->y.dtype, e->a.dtype, [&](auto ty, auto ta) {
            typedef typename decltype(ty)::type Ty;
            typedef typename decltype(ta)::type Ta;
            const int N = 16 / (sizeof(Ty) > sizeof(Ta) ? sizeof(Ty) : sizeof(Ta));
            /* uint8 and int32 outputs come from copies only (op_pair_supported) */
            if (std::is_same<Ty, uint8_t>::value || std::is_same<Ty, int32_t>::value)
                launch_rows<Ty, Ta, N, OCD_EWISE_COPY>(handle, e);
            else
                ocd_cuda_dispatch_op(e->op, [&](auto op) { launch_rows<Ty, Ta, N, decltype(op)::value>(handle, e); });
        });
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
