/* tensor_ops.cu: the CUDA elementwise engine (core/ewise.h says what it computes).

   Two entries of the elementwise table live here:
   - cuda:ewise_vec16, for problems that normalized to one unit-stride dimension (every packed
     set, scale, add, op tensor and same-layout transform): each thread moves 16 bytes of its
     widest operand per step in a grid-stride loop, the other operands as many elements, the
     leftover tail element by element. Bytes moved: inputs read once, y written once, y read
     once more only when beta != 0.
   - cuda:ewise_strided, for everything else: one thread per element in y's order (so writes
     are coalesced whenever y's fastest dimension is packed), offsets from the linear index by
     fast division, broadcast operands walking stride 0.
   cudnnSetTensor's fill writes raw bit patterns of the element size, so it is exact for every
   type and needs no conversion. */
#include "cuda/tensor_ops.h"

#include "core/dtype.h"
#include "cuda/ewise.cuh"

#define THREADS 256

/* Enough resident blocks to fill every multiprocessor (2048 threads each) for grid-stride loops. */
static unsigned grid_for(cudnnHandle_t h, int64_t work)
{
    int64_t want = (work + THREADS - 1) / THREADS, most = (int64_t)h->sm_count * (2048 / THREADS);
    return (unsigned)(want < 1 ? 1 : want < most ? want : most);
}

template <typename T, int N> struct __align__(sizeof(T) * N) pack {
    T v[N];
};

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
__global__ void ewise_strided(strided_args g, ocd_cuda_scales<typename ocd_compute<Ty>::type> s, Ty *y,
                              const Ta *a, const Ta *b, bool binary)
{
    typedef typename ocd_compute<Ty>::type C;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < g.count; i += gridDim.x * blockDim.x) {
        int64_t off[3];
        strided_offsets(g, i, off);
        C av = (C)ocd_cuda_load<Ta>(a + off[1]), bv = binary ? (C)ocd_cuda_load<Ta>(b + off[2]) : C(0);
        ocd_cuda_ewise_apply<Ty, C>(s, y + off[0], av, bv);
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
    if (e->op != OCD_EWISE_FILL && !ocd_cuda_pair_supported(e->y.dtype, e->a.dtype)) return OCD_REASON_DTYPE;
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
        ocd_cuda_dispatch_pair(e->y.dtype, e->a.dtype, [&](auto ty, auto ta) {
            typedef typename decltype(ty)::type Ty;
            typedef typename decltype(ta)::type Ta;
            typedef typename ocd_compute<Ty>::type C;
            ewise_strided<Ty, Ta><<<grid, THREADS, 0, handle->stream>>>(
                g, ocd_cuda_scales_of<C>(e), (Ty *)e->y.data, (const Ta *)e->a.data, (const Ta *)e->b.data,
                ocd_ewise_inputs(e->op) == 2);
        });
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the vectorized path ---------------------------------------------------------------------- */

/* N elements of an input from vector v: a 16-byte-or-narrower load, or one broadcast scalar. */
template <typename T, typename C, int N>
__device__ __forceinline__ void load_pack(const T *p, bool broadcast, uint32_t v, C out[N])
{
    if (broadcast) {
        C x = (C)ocd_cuda_load<T>(p);
#pragma unroll
        for (int k = 0; k < N; k++) out[k] = x;
    } else {
        pack<T, N> in = reinterpret_cast<const pack<T, N> *>(p)[v];
#pragma unroll
        for (int k = 0; k < N; k++) out[k] = (C)ocd_cuda_load<T>(&in.v[k]);
    }
}

template <typename Ty, typename Ta, int N>
__global__ void ewise_vec(uint32_t n, ocd_cuda_scales<typename ocd_compute<Ty>::type> s, Ty *y, const Ta *a,
                          bool a_bcast, const Ta *b, bool b_bcast, bool binary)
{
    typedef typename ocd_compute<Ty>::type C;
    const uint32_t nvec = n / N, step = gridDim.x * blockDim.x, tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (uint32_t v = tid; v < nvec; v += step) {
        C av[N], bv[N];
        load_pack<Ta, C, N>(a, a_bcast, v, av);
        if (binary) load_pack<Ta, C, N>(b, b_bcast, v, bv);
        pack<Ty, N> out;
        if (s.beta != C(0)) out = reinterpret_cast<const pack<Ty, N> *>(y)[v];
#pragma unroll
        for (int k = 0; k < N; k++) ocd_cuda_ewise_apply<Ty, C>(s, &out.v[k], av[k], binary ? bv[k] : C(0));
        reinterpret_cast<pack<Ty, N> *>(y)[v] = out;
    }
    uint32_t i = nvec * N + tid; /* the tail, fewer than N elements */
    if (i < n) {
        C av = (C)ocd_cuda_load<Ta>(a + (a_bcast ? 0 : i));
        C bv = binary ? (C)ocd_cuda_load<Ta>(b + (b_bcast ? 0 : i)) : C(0);
        ocd_cuda_ewise_apply<Ty, C>(s, y + i, av, bv);
    }
}

template <typename U> __global__ void fill_vec(uint32_t n, U *y, U value)
{
    const int N = 16 / sizeof(U);
    const uint32_t nvec = n / N, step = gridDim.x * blockDim.x, tid = blockIdx.x * blockDim.x + threadIdx.x;
    pack<U, N> out;
#pragma unroll
    for (int k = 0; k < N; k++) out.v[k] = value;
    for (uint32_t v = tid; v < nvec; v += step) reinterpret_cast<pack<U, N> *>(y)[v] = out;
    uint32_t i = nvec * N + tid;
    if (i < n) y[i] = value;
}

/* Elements per step: 16 bytes of the widest operand. */
static int vec_width(const struct ocd_ewise *e)
{
    size_t widest = ocd_dtype_scalar_size(e->y.dtype);
    if (e->op != OCD_EWISE_FILL) widest = OCD_MAX(widest, ocd_dtype_scalar_size(e->a.dtype));
    return (int)(16 / widest);
}

static bool aligned(const void *p, size_t bytes)
{
    return (uintptr_t)p % bytes == 0;
}

extern "C" const char *ocd_cuda_ewise_vec_applies(cudnnHandle_t handle, const void *problem)
{
    (void)handle;
    const struct ocd_ewise *e = (const struct ocd_ewise *)problem;
    if (!ocd_ewise_is_linear(e)) return OCD_REASON_NOT_PACKED;
    if (e->op != OCD_EWISE_FILL && !ocd_cuda_pair_supported(e->y.dtype, e->a.dtype)) return OCD_REASON_DTYPE;
    int n = vec_width(e), inputs = ocd_ewise_inputs(e->op);
    if (!aligned(e->y.data, n * ocd_dtype_scalar_size(e->y.dtype))) return OCD_REASON_ALIGNMENT;
    if (inputs >= 1 && e->a.strides[0] && !aligned(e->a.data, n * ocd_dtype_scalar_size(e->a.dtype)))
        return OCD_REASON_ALIGNMENT;
    if (inputs >= 2 && e->b.strides[0] && !aligned(e->b.data, n * ocd_dtype_scalar_size(e->b.dtype)))
        return OCD_REASON_ALIGNMENT;
    return NULL;
}

extern "C" cudnnStatus_t ocd_cuda_ewise_vec_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                                size_t workspace_bytes)
{
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_ewise *e = (const struct ocd_ewise *)problem;
    uint32_t n = (uint32_t)e->count;
    unsigned grid = grid_for(handle, n / vec_width(e) + 1);
    if (e->op == OCD_EWISE_FILL) {
        dispatch_bits(e->y.dtype, [&](auto u) {
            typedef typename decltype(u)::type U;
            fill_vec<U><<<grid, THREADS, 0, handle->stream>>>(n, (U *)e->y.data, fill_value<U>(e));
        });
    } else {
        ocd_cuda_dispatch_pair(e->y.dtype, e->a.dtype, [&](auto ty, auto ta) {
            typedef typename decltype(ty)::type Ty;
            typedef typename decltype(ta)::type Ta;
            typedef typename ocd_compute<Ty>::type C;
            const int N = 16 / (sizeof(Ty) > sizeof(Ta) ? sizeof(Ty) : sizeof(Ta));
            ewise_vec<Ty, Ta, N><<<grid, THREADS, 0, handle->stream>>>(
                n, ocd_cuda_scales_of<C>(e), (Ty *)e->y.data, (const Ta *)e->a.data, e->a.strides[0] == 0,
                (const Ta *)e->b.data, e->b.strides[0] == 0, ocd_ewise_inputs(e->op) == 2);
        });
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
