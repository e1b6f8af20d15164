/* softmax_cols.cu: softmax over slices strided over a contiguous inner dim on the GPU (CHANNEL
   over NCHW; softmax.cuh says what the kernels share). Entries, most specialised first:
   - cuda:softmax_cols_regs: float slices of 32 to 256 elements whose rows are whole aligned
     16-byte vectors: a block takes 32 inner columns, 8 lanes along them with a vector of 4 each
     and the rest of its threads splitting the slice, every element in a register from its one
     load to its store (rather than moved through shared memory, as tile_vec does).
   - cuda:softmax_tile_vec: slices whose rows are whole aligned 16-byte vectors (inner dim and
     strides multiples of 4 floats or 8 halves) and whose 128-byte-wide column tile, all of C,
     fits in 80 KiB of shared memory (C <= 640 forward, 320 backward, any type; half that before
     sm_80): a block moves its tile in with 8 vector loads in flight per thread and source (32 KiB
     a block for C = 256 floats), reduces the columns there and writes with vector stores.
   - cuda:softmax_tile: any slice strided over a contiguous inner dim: a block takes 32
     neighbouring slices, its threads along the inner dim (coalesced, 4 scalar loads in flight),
     and keeps the tile in shared memory between its two passes when it fits. */
#include "cuda/softmax.cuh"

namespace {

/* ---- tiles of slices strided over a contiguous inner dim ---------------------------------------- */

constexpr int TILE_X = 32, TILE_Y = 8;

/* Block b takes inner columns (b % tiles) * 32 .. + 31 of outer index b / tiles; thread (x, y)
   takes column x and slice elements y, y + 8, ..., loading U of them at once. SMEM keeps the tile
   (the sources, as stored) between the passes, and for float and double the forward replaces it
   by the exponentials (one e^x per element); otherwise the second pass reads the tile again. */
template <typename T, bool BWD, bool SMEM>
__global__ void __launch_bounds__(TILE_X *TILE_Y)
tile(sm_args<T> a, ocd_dim_group outer, uint32_t inner, uint32_t tiles)
{
    typedef typename ocd_compute<T>::type C;
    constexpr int U = 4;
    constexpr bool KEEP_EXP = SMEM && !BWD && sizeof(T) >= 4;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *t0 = reinterpret_cast<T *>(smem_raw), *t1 = t0 + (size_t)a.len * TILE_X;
    __shared__ C red_m[TILE_Y][TILE_X + 1], red_s[TILE_Y][TILE_X + 1];
    uint32_t tx = threadIdx.x % TILE_X, ty = threadIdx.x / TILE_X;
    uint32_t o = blockIdx.x / tiles, col = (blockIdx.x % tiles) * TILE_X + tx;
    bool valid = col < inner;
    int dt = BWD ? 2 : 1;
    const T *s0 = a.src0 + ocd_cuda_group_offset(outer, 0, o) + col;
    const T *s1 = BWD ? a.src1 + ocd_cuda_group_offset(outer, 1, o) + col : nullptr;
    T *d = a.dst + ocd_cuda_group_offset(outer, dt, o) + col;
    int64_t l0 = a.slice.strides[0][0], l1 = a.slice.strides[BWD ? 1 : 0][0], ld = a.slice.strides[dt][0];

    /* pass 1: load; backward sums, forward takes the maximum (SMEM) or running statistics */
    stat<C> st{neg_inf<C>(), (C)0};
    for (uint32_t first = ty; valid && first < a.len; first += TILE_Y * U) {
        T x[U], y[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            uint32_t l = first + u * TILE_Y;
            if (l >= a.len) continue;
            x[u] = s0[l * l0];
            if (BWD) y[u] = s1[l * l1];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            uint32_t l = first + u * TILE_Y;
            if (l >= a.len) continue;
            if (SMEM) t0[l * TILE_X + tx] = x[u];
            C xv = ocd_cuda_load(&x[u]);
            if (BWD) {
                if (SMEM) t1[l * TILE_X + tx] = y[u];
                st.s += dot_term(a.log, xv, ocd_cuda_load(&y[u]));
            } else if (SMEM) {
                st.m = xv > st.m ? xv : st.m;
            } else {
                add<T>(st, xv);
            }
        }
    }
    red_m[ty][tx] = st.m;
    __syncthreads();
    stat<C> all{neg_inf<C>(), (C)0};
    if (!BWD && SMEM) { /* the column's maximum, then its exponentials from the tile */
#pragma unroll
        for (int y = 0; y < TILE_Y; y++) all.m = red_m[y][tx] > all.m ? red_m[y][tx] : all.m;
        for (uint32_t l = ty; valid && l < a.len; l += TILE_Y) {
            C e = term<T>(ocd_cuda_load(&t0[l * TILE_X + tx]), all.m);
            st.s += e;
            if (KEEP_EXP && !a.log) ocd_cuda_store(&t0[l * TILE_X + tx], e);
        }
        red_s[ty][tx] = st.s;
        __syncthreads();
#pragma unroll
        for (int y = 0; y < TILE_Y; y++) all.s += red_s[y][tx];
    } else {
        red_s[ty][tx] = st.s;
        __syncthreads();
#pragma unroll
        for (int y = 0; y < TILE_Y; y++) {
            if (BWD) {
                all.s += red_s[y][tx];
            } else {
                C m = red_m[y][tx] > all.m ? red_m[y][tx] : all.m;
                all = stat<C>{m, rescale<T>(all.s, all.m, m) + rescale<T>(red_s[y][tx], red_m[y][tx], m)};
            }
        }
    }
    stat<C> fin = finish<BWD>(all, a.log);
    if (!valid) return;
    for (uint32_t l = ty; l < a.len; l += TILE_Y) {
        C x = SMEM ? ocd_cuda_load(&t0[l * TILE_X + tx]) : ocd_cuda_load(s0 + l * l0);
        C y = BWD ? (SMEM ? ocd_cuda_load(&t1[l * TILE_X + tx]) : ocd_cuda_load(s1 + l * l1)) : (C)0;
        C r = KEEP_EXP ? result<T, BWD, true>(fin, a.log, x, y) : result<T, BWD, false>(fin, a.log, x, y);
        ocd_cuda_blend(d + l * ld, r, a.alpha, a.beta, a.blend);
    }
}

/* ---- columns of slices strided over a contiguous inner dim, in registers ------------------------ */

/* cuda:softmax_cols_regs: CR_LANES lanes along the inner dim (128 contiguous bytes of floats), the
   other lanes and warps of a block split the slice dim; slices of CR_MIN to CR_MAX elements (at
   least half the threads of a block busy). */
constexpr int CR_LANES = 8, CR_MIN = 32, CR_MAX = 256;

/* Threads of a block: the forward holds one source, the backward two. */
template <bool BWD> __host__ __device__ constexpr int cr_threads()
{
    return BWD ? 512 : 256;
}

/* Block b takes inner columns (b % tiles) * COLS .. + COLS - 1 (COLS = CR_LANES * N) of outer
   index b / tiles over the whole slice dim; its thread at (h, g) holds the vectors of columns
   h * N .. + N - 1 at slice elements g + k * G, k < CPT (CPT * G >= len), in registers: every
   source is read once with CPT 16-byte loads in flight per thread and source (128 bytes,
   128 KiB a multiprocessor at the 4 and 2 blocks the launch bounds ask for), and the forward
   takes e^(x - m) once an element. A column's statistics meet over the warp's lanes by shuffles,
   over the warps through shared memory (forward: the maximum, then the sum; backward: the sum).
   An element past the slice or a column past inner holds -inf forward (0 backward), which
   weighs nothing, and is never stored. The caller has checked what vector_cols checks. */
template <bool BWD, int CPT>
__global__ void __launch_bounds__(cr_threads<BWD>(), BWD ? 2 : 4)
cols_regs(sm_args<float> a, ocd_dim_group outer, uint32_t inner, uint32_t tiles)
{
    typedef float C;
    constexpr int N = ocd_vec16<float>::N, THREADS = cr_threads<BWD>(), G = THREADS / CR_LANES;
    constexpr int WARPS = THREADS / 32, COLS = CR_LANES * N;
    __shared__ ocd_vec16<C> red_m[WARPS][CR_LANES], red_s[WARPS][CR_LANES];
    uint32_t h = threadIdx.x % CR_LANES, g = threadIdx.x / CR_LANES, warp = threadIdx.x / 32;
    uint32_t o = blockIdx.x / tiles, col = (blockIdx.x % tiles) * COLS + h * N;
    bool valid = col < inner;
    int dt = BWD ? 2 : 1;
    const float *s0 = a.src0 + ocd_cuda_group_offset(outer, 0, o) + col;
    const float *s1 = BWD ? a.src1 + ocd_cuda_group_offset(outer, 1, o) + col : nullptr;
    float *d = a.dst + ocd_cuda_group_offset(outer, dt, o) + col;
    int64_t l0 = a.slice.strides[0][0], l1 = a.slice.strides[BWD ? 1 : 0][0], ld = a.slice.strides[dt][0];

    C va[CPT * N], vb[CPT * N];
#pragma unroll
    for (int k = 0; k < CPT; k++) {
        uint32_t l = g + k * G;
#pragma unroll
        for (int v = 0; v < N; v++) va[k * N + v] = BWD ? (C)0 : neg_inf<C>();
        if (BWD)
#pragma unroll
            for (int v = 0; v < N; v++) vb[k * N + v] = 0;
        if (!valid || l >= a.len) continue;
        ocd_cuda_load_n<float, N>(s0 + l * l0, &va[k * N]);
        if (BWD) ocd_cuda_load_n<float, N>(s1 + l * l1, &vb[k * N]);
    }
    bool leader = threadIdx.x % 32 < CR_LANES; /* the lanes that publish their warp's columns */
    stat<C> st[N];
#pragma unroll
    for (int v = 0; v < N; v++) st[v] = stat<C>{neg_inf<C>(), (C)0};
    ocd_vec16<C> w;
    if (!BWD) {
#pragma unroll
        for (int v = 0; v < N; v++) {
#pragma unroll
            for (int k = 0; k < CPT; k++) st[v].m = va[k * N + v] > st[v].m ? va[k * N + v] : st[v].m;
            w.v[v] = warp_max<32, CR_LANES>(st[v].m);
        }
        if (leader) red_m[warp][h] = w;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < WARPS; i++) {
            w = red_m[i][h];
#pragma unroll
            for (int v = 0; v < N; v++) st[v].m = w.v[v] > st[v].m ? w.v[v] : st[v].m;
        }
    }
#pragma unroll
    for (int v = 0; v < N; v++) {
#pragma unroll
        for (int k = 0; k < CPT; k++) {
            if (BWD) {
                st[v].s += dot_term(a.log, va[k * N + v], vb[k * N + v]);
            } else {
                C e = term<float>(va[k * N + v], st[v].m);
                st[v].s += e;
                if (!a.log) va[k * N + v] = e;
            }
        }
        w.v[v] = warp_sum<32, CR_LANES>(st[v].s);
    }
    if (leader) red_s[warp][h] = w;
    __syncthreads();
    stat<C> fin[N];
#pragma unroll
    for (int v = 0; v < N; v++) st[v].s = 0;
#pragma unroll
    for (int i = 0; i < WARPS; i++) {
        w = red_s[i][h];
#pragma unroll
        for (int v = 0; v < N; v++) st[v].s += w.v[v];
    }
#pragma unroll
    for (int v = 0; v < N; v++) fin[v] = finish<BWD>(st[v], a.log);
    if (!valid) return;
#pragma unroll
    for (int k = 0; k < CPT; k++) {
        uint32_t l = g + k * G;
        if (l >= a.len) continue;
        C r[N];
#pragma unroll
        for (int v = 0; v < N; v++)
            r[v] = result<float, BWD, true>(fin[v], a.log, va[k * N + v], BWD ? vb[k * N + v] : (C)0);
        ocd_cuda_blend_n<float, N>(d + l * ld, r, a.alpha, a.beta, a.blend);
    }
}

/* ---- whole column tiles in shared memory, 16-byte vectors ---------------------------------------- */

constexpr int VT_THREADS = 256, VT_BATCH = 8; /* threads; 16-byte loads in flight per thread and source */
constexpr int VT_ROW_BYTES = 128;              /* a tile's width along the inner dim */

/* Block b takes the COLS = 128 / sizeof(T) inner columns (b % tiles) * COLS .. + COLS - 1 of outer
   index b / tiles over the whole slice dim. Each source's tile moves into shared memory with
   16-byte loads, VT_BATCH of them in flight per thread (tile's loop keeps 4 scalars in flight),
   so that every source is read from memory once; vector q of a tile is slice element q / VPR,
   columns (q % VPR) * N ... Thread (x, y) then takes the statistics of column x over slice
   elements y, y + TY, ..., and the output leaves with 16-byte stores. As in tile, the forward of
   float and double keeps the exponentials in the tile; 16-bit data compute them again. The
   caller has checked that vectors never straddle a row: inner, the slice and outer strides are
   multiples of N and the pointers 16-byte aligned. The blocks a multiprocessor that the launch
   bounds ask registers for match what sm_90's shared memory holds of C = 256 float tiles (32 KiB
   forward, 64 KiB backward), 128 and 192 KiB of loads in flight a multiprocessor. */
template <typename T, bool BWD>
__global__ void __launch_bounds__(VT_THREADS, BWD ? 3 : 4)
tile_vec(sm_args<T> a, ocd_dim_group outer, uint32_t inner, uint32_t tiles)
{
    typedef typename ocd_compute<T>::type C;
    typedef ocd_vec16<T> vec;
    constexpr uint32_t N = vec::N, COLS = VT_ROW_BYTES / sizeof(T), VPR = COLS / N, TY = VT_THREADS / COLS;
    constexpr bool KEEP_EXP = !BWD && sizeof(T) >= 4;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    vec *t0 = reinterpret_cast<vec *>(smem_raw), *t1 = t0 + (size_t)a.len * VPR;
    __shared__ C red_m[TY][COLS + 1], red_s[TY][COLS + 1], fin_m[COLS], fin_s[COLS];
    uint32_t o = blockIdx.x / tiles, col0 = (blockIdx.x % tiles) * COLS, total = a.len * VPR;
    int dt = BWD ? 2 : 1;
    const T *s0 = a.src0 + ocd_cuda_group_offset(outer, 0, o) + col0;
    const T *s1 = BWD ? a.src1 + ocd_cuda_group_offset(outer, 1, o) + col0 : nullptr;
    T *d = a.dst + ocd_cuda_group_offset(outer, dt, o) + col0;
    int64_t l0 = a.slice.strides[0][0], l1 = a.slice.strides[BWD ? 1 : 0][0], ld = a.slice.strides[dt][0];

    for (uint32_t q0 = 0; q0 < total; q0 += VT_THREADS * VT_BATCH) {
        vec v0[VT_BATCH], v1[VT_BATCH];
#pragma unroll
        for (int k = 0; k < VT_BATCH; k++) {
            uint32_t q = q0 + k * VT_THREADS + threadIdx.x, l = q / VPR, c = q % VPR * N;
            if (q >= total || col0 + c >= inner) continue;
            v0[k] = *reinterpret_cast<const vec *>(s0 + l * l0 + c);
            if (BWD) v1[k] = *reinterpret_cast<const vec *>(s1 + l * l1 + c);
        }
#pragma unroll
        for (int k = 0; k < VT_BATCH; k++) {
            uint32_t q = q0 + k * VT_THREADS + threadIdx.x;
            if (q >= total || col0 + q % VPR * N >= inner) continue;
            t0[q] = v0[k];
            if (BWD) t1[q] = v1[k];
        }
    }
    __syncthreads();

    /* statistics per column; a column past inner computes garbage that is never stored */
    T *x0 = reinterpret_cast<T *>(t0), *x1 = reinterpret_cast<T *>(t1);
    uint32_t tx = threadIdx.x % COLS, ty = threadIdx.x / COLS;
    stat<C> st{neg_inf<C>(), (C)0};
    if (BWD) {
        for (uint32_t l = ty; l < a.len; l += TY)
            st.s += dot_term(a.log, ocd_cuda_load(&x0[l * COLS + tx]), ocd_cuda_load(&x1[l * COLS + tx]));
    } else {
        for (uint32_t l = ty; l < a.len; l += TY) {
            C x = ocd_cuda_load(&x0[l * COLS + tx]);
            st.m = x > st.m ? x : st.m;
        }
        red_m[ty][tx] = st.m;
        __syncthreads();
#pragma unroll
        for (uint32_t y = 0; y < TY; y++) st.m = red_m[y][tx] > st.m ? red_m[y][tx] : st.m;
        for (uint32_t l = ty; l < a.len; l += TY) {
            C e = term<T>(ocd_cuda_load(&x0[l * COLS + tx]), st.m);
            st.s += e;
            if (KEEP_EXP && !a.log) ocd_cuda_store(&x0[l * COLS + tx], e);
        }
    }
    red_s[ty][tx] = st.s;
    __syncthreads();
    if (ty == 0) {
        stat<C> all{st.m, (C)0};
#pragma unroll
        for (uint32_t y = 0; y < TY; y++) all.s += red_s[y][tx];
        stat<C> fin = finish<BWD>(all, a.log);
        fin_m[tx] = fin.m;
        fin_s[tx] = fin.s;
    }
    __syncthreads();

    for (uint32_t q = threadIdx.x; q < total; q += VT_THREADS) {
        uint32_t l = q / VPR, c = q % VPR * N;
        if (col0 + c >= inner) continue;
        C x[N], y[N], r[N];
        ocd_cuda_load_n<T, N>(x0 + (size_t)q * N, x);
        if (BWD) ocd_cuda_load_n<T, N>(x1 + (size_t)q * N, y);
#pragma unroll
        for (uint32_t v = 0; v < N; v++)
            r[v] = result<T, BWD, KEEP_EXP>(stat<C>{fin_m[c + v], fin_s[c + v]}, a.log, x[v], BWD ? y[v] : (C)0);
        ocd_cuda_blend_n<T, N>(d + l * ld + c, r, a.alpha, a.beta, a.blend);
    }
}

/* ---- launchers ---------------------------------------------------------------------------------- */

/* The grid of the column kernels: a block per `cols` inner columns (a tile) of an outer index. */
struct col_grid {
    ocd_dim_group outer; /* the batch dims but the contiguous inner one */
    uint32_t inner, tiles, blocks;
};

col_grid col_grid_of(const ocd_softmax_problem *p, uint32_t cols)
{
    col_grid c;
    c.outer = p->batch;
    c.outer.rank--;
    c.inner = (uint32_t)p->batch.dims[p->batch.rank - 1];
    c.tiles = (c.inner + cols - 1) / cols;
    c.blocks = (uint32_t)(ocd_dim_group_size(&p->batch) / c.inner * c.tiles);
    return c;
}

template <typename T, bool BWD, bool SMEM>
cudnnStatus_t launch_tile(cudnnHandle_t h, const ocd_softmax_problem *p, const sm_args<T> &a, size_t smem)
{
    col_grid c = col_grid_of(p, TILE_X);
    auto kernel = tile<T, BWD, SMEM>;
    if (SMEM && smem > 48 * 1024)
        OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<c.blocks, TILE_X * TILE_Y, SMEM ? smem : 0, h->stream>>>(a, c.outer, c.inner, c.tiles);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

constexpr size_t TILE_SMEM_MAX = 96 * 1024;

/* Dynamic shared memory of tile_vec: a 128-byte row per slice element and source. Its bound
   leaves room for the static arrays on every sm_80+ part (99 KiB a block at least) and for two
   blocks a multiprocessor on sm_90; sm_75 (64 KiB a block) takes half. */
size_t tile_vec_smem(const ocd_softmax_problem *p)
{
    return (size_t)ocd_dim_group_size(&p->slice) * VT_ROW_BYTES * p->io.nsrc;
}

size_t tile_vec_smem_max(cudnnHandle_t h)
{
    return (h->cc_major >= 8 ? 80 : 40) * 1024;
}

template <typename T, bool BWD> cudnnStatus_t launch_tile_vec(cudnnHandle_t h, const ocd_softmax_problem *p, const sm_args<T> &a)
{
    col_grid c = col_grid_of(p, VT_ROW_BYTES / sizeof(T));
    size_t smem = tile_vec_smem(p);
    auto kernel = tile_vec<T, BWD>;
    if (smem > 48 * 1024)
        OCD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<c.blocks, VT_THREADS, smem, h->stream>>>(a, c.outer, c.inner, c.tiles);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <bool BWD, int CPT> cudnnStatus_t launch_cols_regs(cudnnHandle_t h, const ocd_softmax_problem *p)
{
    col_grid c = col_grid_of(p, CR_LANES * ocd_vec16<float>::N);
    cols_regs<BWD, CPT><<<c.blocks, cr_threads<BWD>(), 0, h->stream>>>(args_of<float>(p), c.outer, c.inner, c.tiles);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

/* The fewest slice elements a thread (CPT, a power of two) that hold the slice. */
template <bool BWD> cudnnStatus_t pick_cols_regs(cudnnHandle_t h, const ocd_softmax_problem *p)
{
    constexpr uint32_t G = cr_threads<BWD>() / CR_LANES;
    static_assert(CR_MAX == (BWD ? 4 : 8) * G, "the longest slice fills the largest CPT");
    uint32_t len = (uint32_t)ocd_dim_group_size(&p->slice);
    if (len <= G) return launch_cols_regs<BWD, 1>(h, p);
    if (len <= 2 * G) return launch_cols_regs<BWD, 2>(h, p);
    if constexpr (!BWD)
        if (len > 4 * G) return launch_cols_regs<BWD, 8>(h, p);
    return launch_cols_regs<BWD, 4>(h, p);
}

} // namespace

/* ---- entries ---------------------------------------------------------------------------------- */

extern "C" const char *ocd_cuda_softmax_tile_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (not_int8(p) != NULL) return not_int8(p);
    if (p->slice.rank != 1) return "slices span more than one strided dim";
    if (p->batch.rank < 1) return OCD_REASON_SHAPE;
    for (int t = 0; t <= p->io.nsrc; t++)
        if (p->batch.strides[t][p->batch.rank - 1] != 1) return "no contiguous dim beside the slices";
    return NULL;
}

/* What the vector column kernels need: slices strided over a contiguous inner dim, read as
   16-byte vectors that never straddle a row (inner, the slice and outer strides multiples of a
   vector, 16-byte aligned pointers). */
static const char *vector_cols(cudnnHandle_t handle, const ocd_softmax_problem *p)
{
    const char *why = ocd_cuda_softmax_tile_applies(handle, p);
    if (why != NULL) return why;
    int64_t n = 16 / (int64_t)ocd_dtype_scalar_size(p->io.dtype);
    if (p->batch.dims[p->batch.rank - 1] % n != 0) return OCD_REASON_ALIGNMENT;
    for (int t = 0; t <= p->io.nsrc; t++) {
        if (!ocd_cuda_aligned16(t < p->io.nsrc ? p->io.src[t] : p->io.dst)) return OCD_REASON_ALIGNMENT;
        if (p->slice.strides[t][0] % n != 0) return OCD_REASON_ALIGNMENT;
        for (int d = 0; d < p->batch.rank - 1; d++)
            if (p->batch.strides[t][d] % n != 0) return OCD_REASON_ALIGNMENT;
    }
    return NULL;
}

extern "C" const char *ocd_cuda_softmax_cols_regs_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (p->io.dtype != CUDNN_DATA_FLOAT) return OCD_REASON_DTYPE;
    const char *why = vector_cols(handle, p);
    if (why != NULL) return why;
    int64_t len = ocd_dim_group_size(&p->slice);
    return len >= CR_MIN && len <= CR_MAX ? NULL : "slices outside 32 to 256 elements";
}

extern "C" const char *ocd_cuda_softmax_tile_vec_applies(cudnnHandle_t handle, const void *problem)
{
    const ocd_softmax_problem *p = problem_of(problem);
    if (not_int8(p) != NULL) return not_int8(p);
    const char *why = vector_cols(handle, p);
    if (why != NULL) return why;
    return tile_vec_smem(p) <= tile_vec_smem_max(handle) ? NULL : "tile larger than shared memory";
}

extern "C" cudnnStatus_t ocd_cuda_softmax_tile(cudnnHandle_t handle, const void *problem, void *ws,
                                                   size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        sm_args<T> a = args_of<T>(p);
        size_t smem = (size_t)a.len * TILE_X * sizeof(T) * p->io.nsrc;
        bool fits = smem <= TILE_SMEM_MAX;
        if (p->backward) return fits ? launch_tile<T, true, true>(handle, p, a, smem) : launch_tile<T, true, false>(handle, p, a, 0);
        return fits ? launch_tile<T, false, true>(handle, p, a, smem) : launch_tile<T, false, false>(handle, p, a, 0);
    });
}

extern "C" cudnnStatus_t ocd_cuda_softmax_cols_regs(cudnnHandle_t handle, const void *problem, void *ws,
                                                        size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return p->backward ? pick_cols_regs<true>(handle, p) : pick_cols_regs<false>(handle, p);
}

extern "C" cudnnStatus_t ocd_cuda_softmax_tile_vec(cudnnHandle_t handle, const void *problem, void *ws,
                                                       size_t ws_bytes)
{
    const ocd_softmax_problem *p = problem_of(problem);
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(p->io.dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        sm_args<T> a = args_of<T>(p);
        return p->backward ? launch_tile_vec<T, true>(handle, p, a) : launch_tile_vec<T, false>(handle, p, a);
    });
}

