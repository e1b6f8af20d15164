/* types.cuh: scalar types and index arithmetic on the device, shared by every CUDA kernel file.

   - Scalars: ocd_cuda_load<T>/ocd_cuda_store<T, C> convert between a storage type and the
     compute type C (float, or double); every store rounds once, to nearest even, and stores to
     integer types saturate, NaN giving 0, as the host backend's ocd_host_store does
     (host/typed.h): the one device store every kernel uses. A double goes to half and bfloat16
     through core/dtype.h's round-to-odd float, so that it is not rounded twice. Kernels that take
     the type at run time (the reference kernels: one instantiation per accumulator type serves
     every storage type and layout) load and store through ocd_cuda_load_as/ocd_cuda_store_as.
   - The one dispatcher: ocd_cuda_dispatch calls a generic lambda with the storage type of a
     cudnnDataType_t, over the floating-point types only (OCD_CUDA_FLOATS, for the ops whose API
     admits no other: no integer kernels are instantiated) or over every type (OCD_CUDA_ALL).
   - 16-byte vectors of a storage type, and the alpha/beta blend.
   - Views and indices: struct ocd_cuda_view is a kernel-argument copy of a host ocd_tensor_view;
     offsets from linear positions or coordinates, the memory order of a view, the offsets of a
     dim group (core/dimgroup.h), fast division by invariant divisors.
   - The ops of problem/ewise.h on the device (the elementwise engine, cuda/tensor_ops.cu, and the
     transpose and fold kernels, cuda/transform.cu).

   Index arithmetic: a tensor holds at most 2^31 - 1 elements and its strides span at most that
   many scalars (core/tensor.c), so element positions and dims fit in 32 bits and are divided as
   such; offsets that sum strides over a view are 64-bit. Division by a tensor extent uses a
   multiply-high by a precomputed magic number instead of the much slower integer division. */
#ifndef OCD_CUDA_TYPES_CUH
#define OCD_CUDA_TYPES_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include <type_traits>

#include "core/dimgroup.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "problem/ewise.h"

/* ---- scalars ----------------------------------------------------------------------------------- */

/* The compute type of a storage type: double for double, float for everything else. */
template <typename T> struct ocd_compute { typedef float type; };
template <> struct ocd_compute<double> { typedef double type; };

/* The compute type of an elementwise kernel that writes Ty from Ta (and reads y back as Ty):
   double when either is double or int32, float otherwise. Through float an int32 would be
   rounded before the result's own rounding (2^24 + 1 to 2^24, and an int32 -> bfloat16
   conversion could meet a tie that its value was not on); double holds every value of every
   storage type exactly. */
template <typename Ty, typename Ta> struct ocd_compute_pair {
    static constexpr bool wide = std::is_same<Ty, double>::value || std::is_same<Ta, double>::value ||
                                 std::is_same<Ty, int32_t>::value || std::is_same<Ta, int32_t>::value;
    typedef typename std::conditional<wide, double, float>::type type;
};

/* Host-callable as well, for the CPU emulations of kernels (tests/emulate): the host branch
   rounds to nearest even (rintf in the default rounding mode) and saturates as the device's
   cvt.rni does. */
template <typename T> __host__ __device__ __forceinline__ typename ocd_compute<T>::type ocd_cuda_load(const T *p)
{
    return (typename ocd_compute<T>::type)(*p);
}
template <> __host__ __device__ __forceinline__ float ocd_cuda_load<__half>(const __half *p)
{
    return __half2float(*p);
}
template <> __host__ __device__ __forceinline__ float ocd_cuda_load<__nv_bfloat16>(const __nv_bfloat16 *p)
{
    return __bfloat162float(*p);
}

/* *p in the compute type C (ocd_compute_pair): exact for every storage type when C is double. */
template <typename C, typename T> __host__ __device__ __forceinline__ C ocd_cuda_load_in(const T *p)
{
    if constexpr (std::is_same<T, int32_t>::value) return (C)*p; /* not through float */
    else return (C)ocd_cuda_load<T>(p);
}

/* v rounded to the nearest integer (ties to even), clamped to [lo, hi], NaN giving 0. */
__host__ __device__ __forceinline__ int ocd_cuda_round_clamp(float v, int lo, int hi)
{
#ifdef __CUDA_ARCH__
    return min(max(__float2int_rn(v), lo), hi);
#else
    if (v != v) return 0;
    float r = rintf(v);
    return r <= (float)lo ? lo : r >= (float)hi ? hi : (int)r;
#endif
}
__host__ __device__ __forceinline__ int ocd_cuda_round_clamp(double v, int lo, int hi)
{
#ifdef __CUDA_ARCH__
    return min(max(__double2int_rn(v), lo), hi); /* saturates to the int range; NaN gives 0 */
#else
    if (v != v) return 0;
    double r = rint(v);
    return r <= (double)lo ? lo : r >= (double)hi ? hi : (int)r;
#endif
}

template <typename T, typename C> __host__ __device__ __forceinline__ void ocd_cuda_store(T *p, C v)
{
    *p = (T)v;
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<__half, float>(__half *p, float v)
{
    *p = __float2half_rn(v);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<__nv_bfloat16, float>(__nv_bfloat16 *p, float v)
{
    *p = __float2bfloat16_rn(v);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<int8_t, float>(int8_t *p, float v)
{
    *p = (int8_t)ocd_cuda_round_clamp(v, -128, 127);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<uint8_t, float>(uint8_t *p, float v)
{
    *p = (uint8_t)ocd_cuda_round_clamp(v, 0, 255);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<int32_t, float>(int32_t *p, float v)
{
#ifdef __CUDA_ARCH__
    *p = __float2int_rn(v); /* saturates in hardware; NaN gives 0 */
#else
    *p = v != v ? 0 : v >= 2147483648.0f ? INT32_MAX : v <= -2147483648.0f ? INT32_MIN : (int32_t)rintf(v);
#endif
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<__half, double>(__half *p, double v)
{
    *p = __float2half_rn(ocd_double_to_float_odd(v));
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<__nv_bfloat16, double>(__nv_bfloat16 *p, double v)
{
    *p = __float2bfloat16_rn(ocd_double_to_float_odd(v));
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<int8_t, double>(int8_t *p, double v)
{
    *p = (int8_t)ocd_cuda_round_clamp(v, -128, 127);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<uint8_t, double>(uint8_t *p, double v)
{
    *p = (uint8_t)ocd_cuda_round_clamp(v, 0, 255);
}
template <> __host__ __device__ __forceinline__ void ocd_cuda_store<int32_t, double>(int32_t *p, double v)
{
    *p = ocd_cuda_round_clamp(v, INT32_MIN, INT32_MAX);
}

/* Scalar i of a buffer of type t, converted to the accumulator type (host-callable too, for the
   emulations). */
template <typename Acc> __host__ __device__ __forceinline__ Acc ocd_cuda_load_as(cudnnDataType_t t, const void *p, int64_t i)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return (Acc)((const float *)p)[i];
    case CUDNN_DATA_DOUBLE: return (Acc)((const double *)p)[i];
    case CUDNN_DATA_HALF: return (Acc)__half2float(((const __half *)p)[i]);
    case CUDNN_DATA_BFLOAT16: return (Acc)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32: return (Acc)((const int8_t *)p)[i];
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: return (Acc)((const uint8_t *)p)[i];
    case CUDNN_DATA_INT32: return (Acc)((const int32_t *)p)[i];
    default: return (Acc)((const int64_t *)p)[i];
    }
}

/* Stores v (a double, or a float: the same value, rounded the same) with one rounding to the
   type and its saturation (ocd_cuda_store from v's type). */
template <typename V> __host__ __device__ __forceinline__ void ocd_cuda_store_as(cudnnDataType_t t, void *p, int64_t i, V v)
{
    static_assert(std::is_same<V, double>::value || std::is_same<V, float>::value, "a float or a double value");
    switch (t) {
    case CUDNN_DATA_DOUBLE: ((double *)p)[i] = (double)v; return;
    case CUDNN_DATA_FLOAT: ((float *)p)[i] = (float)v; return;
    case CUDNN_DATA_HALF: ocd_cuda_store<__half, V>((__half *)p + i, v); return;
    case CUDNN_DATA_BFLOAT16: ocd_cuda_store<__nv_bfloat16, V>((__nv_bfloat16 *)p + i, v); return;
    case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32:
        ocd_cuda_store<int8_t, V>((int8_t *)p + i, v); return;
    case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: ocd_cuda_store<uint8_t, V>((uint8_t *)p + i, v); return;
    case CUDNN_DATA_INT32: ocd_cuda_store<int32_t, V>((int32_t *)p + i, v); return;
    default: ((int64_t *)p)[i] = (int64_t)v; return;
    }
}

/* ---- the type dispatcher ----------------------------------------------------------------------- */

template <typename T> struct ocd_type_tag { typedef T type; };

/* The storage types a dispatch instantiates kernels for. */
enum ocd_cuda_types {
    OCD_CUDA_FLOATS, /* float, double, half, bfloat16 */
    OCD_CUDA_ALL     /* those, int8, uint8 and int32 */
};

/* fn(tag) for one storage type; a status: what fn returns, or SUCCESS when fn returns nothing. */
template <typename T, typename F> static inline cudnnStatus_t ocd_cuda_call_typed(F &fn)
{
    if constexpr (std::is_void<decltype(fn(ocd_type_tag<T>()))>::value) {
        fn(ocd_type_tag<T>());
        return CUDNN_STATUS_SUCCESS;
    } else {
        return fn(ocd_type_tag<T>());
    }
}

/* Calls fn(ocd_type_tag<T>()) for the storage type T of t and returns its status (SUCCESS when
   fn returns void): ocd_cuda_dispatch<OCD_CUDA_FLOATS>(t, [&](auto tag) { typedef typename
   decltype(tag)::type T; ... }). A type outside the set gives NOT_SUPPORTED, fn not called. */
template <ocd_cuda_types Set, typename F> static cudnnStatus_t ocd_cuda_dispatch(cudnnDataType_t t, F &&fn)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return ocd_cuda_call_typed<float>(fn);
    case CUDNN_DATA_DOUBLE: return ocd_cuda_call_typed<double>(fn);
    case CUDNN_DATA_HALF: return ocd_cuda_call_typed<__half>(fn);
    case CUDNN_DATA_BFLOAT16: return ocd_cuda_call_typed<__nv_bfloat16>(fn);
    default: break;
    }
    if constexpr (Set == OCD_CUDA_ALL) {
        switch (t) {
        case CUDNN_DATA_INT8: return ocd_cuda_call_typed<int8_t>(fn);
        case CUDNN_DATA_UINT8: return ocd_cuda_call_typed<uint8_t>(fn);
        case CUDNN_DATA_INT32: return ocd_cuda_call_typed<int32_t>(fn);
        default: break;
        }
    }
    return CUDNN_STATUS_NOT_SUPPORTED;
}

/* Calls fn(tag<Ty>, tag<Ta>) for the (output, input) storage types the API lets through: equal
   types, and the mixed float / half, bfloat16, int8 pairs of cudnnOpTensor's table. Instantiating
   only these keeps the kernels few. False for any other pair, fn not called. */
template <typename F> static bool ocd_cuda_dispatch_pair(cudnnDataType_t ty, cudnnDataType_t ta, F fn)
{
    if (ty == ta) return ocd_cuda_dispatch<OCD_CUDA_ALL>(ty, [&](auto t) { fn(t, t); }) == CUDNN_STATUS_SUCCESS;
    if (ty == CUDNN_DATA_FLOAT)
        return ta != CUDNN_DATA_DOUBLE && ta != CUDNN_DATA_UINT8 && ta != CUDNN_DATA_INT32 &&
               ocd_cuda_dispatch<OCD_CUDA_ALL>(ta, [&](auto t) { fn(ocd_type_tag<float>(), t); }) ==
                   CUDNN_STATUS_SUCCESS;
    if (ta == CUDNN_DATA_FLOAT)
        return ty != CUDNN_DATA_DOUBLE && ty != CUDNN_DATA_UINT8 && ty != CUDNN_DATA_INT32 &&
               ocd_cuda_dispatch<OCD_CUDA_ALL>(ty, [&](auto t) { fn(t, ocd_type_tag<float>()); }) ==
                   CUDNN_STATUS_SUCCESS;
    return false;
}

/* Whether the pair is one the dispatch instantiates. */
static inline bool ocd_cuda_pair_supported(cudnnDataType_t ty, cudnnDataType_t ta)
{
    return ocd_cuda_dispatch_pair(ty, ta, [](auto, auto) {});
}

/* Calls fn(tag<Ty>, tag<Ta>) for any two storage types: the conversions of cudnnTransformTensor
   (and the copies of cudnnAddTensor), which the strided path alone instantiates for every pair. */
template <typename F> static bool ocd_cuda_dispatch_any_pair(cudnnDataType_t ty, cudnnDataType_t ta, F fn)
{
    return ocd_cuda_dispatch<OCD_CUDA_ALL>(ty, [&](auto y) {
               return ocd_cuda_dispatch<OCD_CUDA_ALL>(ta, [&](auto a) { fn(y, a); });
           }) == CUDNN_STATUS_SUCCESS;
}

/* ---- 16-byte vectors and the blend --------------------------------------------------------------- */

/* COUNT values of a type, aligned to their whole size, so that up to 16 bytes of them are one
   access (COUNT a power of two). */
template <typename T, int COUNT> struct alignas(sizeof(T) * COUNT) ocd_vec {
    static constexpr int N = COUNT;
    T v[COUNT];
};

/* 16 bytes of a storage type, loaded and stored as one access. */
template <typename T> using ocd_vec16 = ocd_vec<T, 16 / sizeof(T)>;

/* V consecutive scalars at p (V = 1, or a whole 16-byte vector, V = ocd_vec16<T>::N) in the
   compute type. */
template <typename T, int V>
__device__ __forceinline__ void ocd_cuda_load_n(const T *p, typename ocd_compute<T>::type *out)
{
    if (V == 1) {
        out[0] = ocd_cuda_load(p);
    } else {
        ocd_vec16<T> v = *reinterpret_cast<const ocd_vec16<T> *>(p);
#pragma unroll
        for (int k = 0; k < V; k++) out[k] = ocd_cuda_load(&v.v[k]);
    }
}

static inline bool ocd_cuda_aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* alpha * r + beta * *y, where y is read only when blend (beta != 0). */
template <typename T, typename C> __device__ __forceinline__ void ocd_cuda_blend(T *y, C r, C alpha, C beta, bool blend)
{
    ocd_cuda_store(y, blend ? alpha * r + beta * ocd_cuda_load(y) : alpha * r);
}

/* p[k] = alpha * r[k] + beta * p[k] for k < V (as ocd_cuda_load_n), p read only when blend. */
template <typename T, int V, typename C>
__device__ __forceinline__ void ocd_cuda_blend_n(T *p, const C *r, C alpha, C beta, bool blend)
{
    if (V == 1) {
        ocd_cuda_blend(p, r[0], alpha, beta, blend);
    } else {
        ocd_vec16<T> v;
        if (blend) v = *reinterpret_cast<const ocd_vec16<T> *>(p);
#pragma unroll
        for (int k = 0; k < V; k++) ocd_cuda_blend(&v.v[k], r[k], alpha, beta, blend);
        *reinterpret_cast<ocd_vec16<T> *>(p) = v;
    }
}

/* ---- views and indices ------------------------------------------------------------------------- */

/* A tensor view, by value, for kernel arguments. */
struct ocd_cuda_view {
    int rank, vect;
    int64_t dims[OCD_MAX_DIMS];
    int64_t strides[OCD_MAX_DIMS];
};

static inline ocd_cuda_view ocd_cuda_view_of(const struct ocd_tensor_view *v)
{
    ocd_cuda_view c;
    c.rank = v->rank;
    c.vect = v->vect;
    for (int d = 0; d < OCD_MAX_DIMS; d++) {
        c.dims[d] = d < v->rank ? v->dims[d] : 1;
        c.strides[d] = d < v->rank ? v->strides[d] : 0;
    }
    return c;
}

/* Scalar offset of index i along dim 1 (tensor.h: its vector split). */
__host__ __device__ __forceinline__ int64_t ocd_cuda_dim1_offset(const ocd_cuda_view &v, int64_t i)
{
    return v.vect > 1 ? (i / v.vect) * v.strides[1] + i % v.vect : i * v.strides[1];
}

/* Scalar offset of the element at row-major linear position `linear` of the view's dims. */
__device__ __forceinline__ int64_t ocd_cuda_offset(const ocd_cuda_view &v, int64_t linear)
{
    int64_t off = 0;
    for (int d = v.rank - 1; d >= 0; d--) {
        int64_t i = linear % v.dims[d];
        linear /= v.dims[d];
        off += d == 1 ? ocd_cuda_dim1_offset(v, i) : i * v.strides[d];
    }
    return off;
}

/* Scalar offset of the element at coordinates idx. */
__host__ __device__ __forceinline__ int64_t ocd_cuda_offset_of(const ocd_cuda_view &v, const int64_t *idx)
{
    int64_t off = 0;
    for (int d = 0; d < v.rank; d++) off += d == 1 ? ocd_cuda_dim1_offset(v, idx[1]) : idx[d] * v.strides[d];
    return off;
}

/* The offset of channel c (dim 1) with every other coordinate 0, as ocd_cuda_offset_of gives it
   (a per-channel operand's element), without an index array: kept in local memory where the
   caller is not inlined, as a call's store is (conv_store.cuh). */
__host__ __device__ __forceinline__ int64_t ocd_cuda_channel_offset(const ocd_cuda_view &v, int64_t c)
{
    return v.rank < 2 ? 0 : ocd_cuda_dim1_offset(v, c);
}

/* Coordinates of the element at row-major linear position `linear` of the view's dims. */
__device__ __forceinline__ void ocd_cuda_coords(const ocd_cuda_view &v, int64_t linear, int64_t *idx)
{
    for (int d = v.rank - 1; d >= 0; d--) {
        idx[d] = linear % v.dims[d];
        linear /= v.dims[d];
    }
}

/* Visiting every element of a view in memory order: a kernel that gives one thread per element
   numbers the elements by the order of the view's strides (innermost first), so that consecutive
   threads touch consecutive addresses whatever the layout (NCHW, NHWC, padded); ocd_cuda_coords
   turns that number back into coordinates of the view's own dimensions. */
struct ocd_cuda_order {
    int rank;
    int dim[OCD_MAX_DIMS]; /* dimension indices, innermost first */
    uint32_t ext[OCD_MAX_DIMS];
};

static inline ocd_cuda_order ocd_cuda_order_of(const struct ocd_tensor_view *v)
{
    ocd_cuda_order o;
    o.rank = v->rank;
    for (int d = 0; d < v->rank; d++) {
        int i = d;
        while (i > 0 && v->strides[o.dim[i - 1]] > v->strides[d]) {
            o.dim[i] = o.dim[i - 1];
            i--;
        }
        o.dim[i] = d;
    }
    for (int i = 0; i < v->rank; i++) o.ext[i] = (uint32_t)v->dims[o.dim[i]];
    return o;
}

__device__ __forceinline__ void ocd_cuda_coords(const ocd_cuda_order &o, uint32_t i, int64_t idx[OCD_MAX_DIMS])
{
    for (int k = 0; k < o.rank; k++) {
        idx[o.dim[k]] = i % o.ext[k];
        i /= o.ext[k];
    }
}

/* Offset in tensor t of the element at row-major position `linear` of the group. */
__device__ __forceinline__ int64_t ocd_cuda_group_offset(const ocd_dim_group &g, int t, uint32_t linear)
{
    int64_t off = 0;
    for (int d = g.rank - 1; d >= 0; d--) {
        uint32_t n = (uint32_t)g.dims[d];
        off += (int64_t)(linear % n) * g.strides[t][d];
        linear /= n;
    }
    return off;
}

/* Blocks for n items at `per_block` items a block, at least 1. */
static inline unsigned ocd_cuda_blocks(int64_t n, int64_t per_block)
{
    int64_t b = (n + per_block - 1) / per_block;
    return (unsigned)(b < 1 ? 1 : b);
}

/* A memory-bound pass whose threads each carry ELEMS elements a block width apart (their loads
   issued together): a block covers a span of ELEMS * blockDim.x consecutive elements, and the
   blocks stride over the count. ocd_cuda_span_blocks is its grid (enough blocks to fill the
   device many times over; the kernel strides past them); ocd_cuda_each_span calls f(base) for
   each span of the calling block. */
static inline unsigned ocd_cuda_span_blocks(int64_t count, int elems, int threads)
{
    const unsigned b = ocd_cuda_blocks(count, (int64_t)elems * threads), most = 65535u * 16;
    return b < most ? b : most;
}

template <int ELEMS, class F> __device__ __forceinline__ void ocd_cuda_each_span(int64_t count, F f)
{
    const int64_t span = (int64_t)ELEMS * blockDim.x;
    for (int64_t base = blockIdx.x * span; base < count; base += (int64_t)gridDim.x * span) f(base);
}

/* n / d and n % d for n < 2^31 and 1 <= d < 2^31 (round-up method: with s = ceil(log2 d) and
   m = floor(2^32 * (2^s - d) / d) + 1, n / d = (umulhi(n, m) + n) >> s). */
struct ocd_fastdiv {
    uint32_t d, m, s;
};

static inline ocd_fastdiv ocd_fastdiv_make(uint32_t d)
{
    ocd_fastdiv f;
    f.d = d;
    f.s = 0;
    while ((1ull << f.s) < d) f.s++;
    f.m = (uint32_t)(((1ull << 32) * ((1ull << f.s) - d)) / d + 1);
    return f;
}

/* Host-callable too: kernels whose index arithmetic also runs on the host (the convolution's
   loaders, see cuda/conv_igemm.cuh) share it. */
__host__ __device__ __forceinline__ uint32_t ocd_fastdiv_div(const ocd_fastdiv &f, uint32_t n)
{
#ifdef __CUDA_ARCH__
    return (__umulhi(n, f.m) + n) >> f.s;
#else
    return ((uint32_t)(((uint64_t)n * f.m) >> 32) + n) >> f.s;
#endif
}

/* n / d, with n % d in *rem. */
__host__ __device__ __forceinline__ uint32_t ocd_fastdiv_divmod(const ocd_fastdiv &f, uint32_t n, uint32_t *rem)
{
    uint32_t q = ocd_fastdiv_div(f, n);
    *rem = n - q * f.d;
    return q;
}

/* ---- the elementwise ops of problem/ewise.h ----------------------------------------------------------- */

/* r = op(x, y) for already scaled operands x = alpha1 * a, y = alpha2 * b. Host-callable, as
   are the next two, for the CPU emulation of the elementwise kernels. */
template <typename C> __host__ __device__ __forceinline__ C ocd_cuda_ewise_op(enum ocd_ewise_op op, bool propagate, C x, C y)
{
    switch (op) {
    case OCD_EWISE_ADD: return x + y;
    case OCD_EWISE_MUL: return x * y;
    case OCD_EWISE_MIN:
        if (propagate && (x != x || y != y)) return x + y; /* NaN */
        return x != x ? y : y != y ? x : (x < y ? x : y);
    case OCD_EWISE_MAX:
        if (propagate && (x != x || y != y)) return x + y;
        return x != x ? y : y != y ? x : (x > y ? x : y);
    case OCD_EWISE_SQRT: return sqrt(x);
    case OCD_EWISE_NOT: return C(1) - x;
    default: return x; /* COPY */
    }
}

/* The scalars of an elementwise problem in its compute type. */
template <typename C> struct ocd_cuda_scales {
    C alpha1, alpha2, beta;
    enum ocd_ewise_op op;
    bool propagate;
};

template <typename C> static inline ocd_cuda_scales<C> ocd_cuda_scales_of(const struct ocd_ewise *e)
{
    ocd_cuda_scales<C> s;
    s.alpha1 = (C)e->alpha1;
    s.alpha2 = (C)e->alpha2;
    s.beta = (C)e->beta;
    s.op = e->op;
    s.propagate = e->propagate_nan;
    return s;
}

/* op(alpha1 * a, alpha2 * b) + beta * y, y (the old value) used only when blend, which callers
   set to beta != 0 (b is ignored by the unary ops). Kernels that pass op, or blend, as a
   compile-time constant get the switch, or the test, folded away. */
template <typename C>
__host__ __device__ __forceinline__ C ocd_cuda_ewise_value(enum ocd_ewise_op op, const ocd_cuda_scales<C> &s, C a, C b,
                                                           C y, bool blend)
{
    C r = ocd_cuda_ewise_op<C>(op, s.propagate, s.alpha1 * a, s.alpha2 * b);
    if (blend) r += s.beta * y;
    return r;
}

/* One element: y = op(alpha1 * a, alpha2 * b) + beta * y, y read only when beta != 0. a and b
   are loaded by the caller. */
template <typename Ty, typename C>
__host__ __device__ __forceinline__ void ocd_cuda_ewise_apply(enum ocd_ewise_op op, const ocd_cuda_scales<C> &s, Ty *y,
                                                              C a, C b)
{
    const bool blend = s.beta != C(0);
    ocd_cuda_store<Ty, C>(y, ocd_cuda_ewise_value<C>(op, s, a, b, blend ? ocd_cuda_load_in<C, Ty>(y) : C(0), blend));
}

/* Calls fn(std::integral_constant<int, op>()) for the op, so that kernels can take it as a
   template argument. */
template <typename F> static void ocd_cuda_dispatch_op(enum ocd_ewise_op op, F fn)
{
    switch (op) {
    case OCD_EWISE_ADD: fn(std::integral_constant<int, OCD_EWISE_ADD>()); return;
    case OCD_EWISE_MUL: fn(std::integral_constant<int, OCD_EWISE_MUL>()); return;
    case OCD_EWISE_MIN: fn(std::integral_constant<int, OCD_EWISE_MIN>()); return;
    case OCD_EWISE_MAX: fn(std::integral_constant<int, OCD_EWISE_MAX>()); return;
    case OCD_EWISE_SQRT: fn(std::integral_constant<int, OCD_EWISE_SQRT>()); return;
    case OCD_EWISE_NOT: fn(std::integral_constant<int, OCD_EWISE_NOT>()); return;
    default: fn(std::integral_constant<int, OCD_EWISE_COPY>()); return;
    }
}

#endif /* OCD_CUDA_TYPES_CUH */
