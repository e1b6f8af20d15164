/* rnn.cu: the pointwise steps and auxiliary passes of the recurrent networks on CUDA
   (problem/rnn_kernels.h): a thread per unit of a sequence ((n, j) of the batch), the cell math
   of rnn_kernels.h in the compute type (float, double for double data); and the persistent
   recurrence of inference (ocd_cuda_rnn_persist: one cooperative kernel for every step of a
   pseudo-layer, the recurrent weights held in shared memory, the same per-unit cell code as
   the step kernel). Every launch goes on the handle's stream and none waits for the host, so a
   whole RNN call can be captured.

   What one thread does (fwd_unit and its fwd_cell, bwd_unit, proj_unit, skip_dx_unit,
   offsets_unit, and the persistent kernel's phases) is __host__ __device__, so that
   tests/emulate/rnn.cu and tests/emulate/rnn_persist.cu run every thread on the CPU. */
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/rnn_kernels.h"

#include <cooperative_groups.h>

namespace {

constexpr int THREADS = 256;

__host__ __device__ __forceinline__ bool step_active(const ocd_rnn_step &s, int n, int *t)
{
    int len = s.lengths[n];
    *t = s.dir ? len - 1 - s.s : s.s;
    return s.s < len;
}

__host__ __device__ __forceinline__ int64_t step_pos(const ocd_rnn_step &s, int t, int n)
{
    return ocd_rnn_pos(s.layout, s.T, s.N, s.offsets, t, n);
}

template <typename T, typename C> __host__ __device__ __forceinline__ C load_bias(const void *b, int j)
{
    return b ? (C)ocd_cuda_load((const T *)b + j) : (C)0;
}

/* Unit j of sequence n of a forward step; rec[g rec_stride]: R_g h of the unit's gate g (the
   recurrent product without its bias), read only where the sequence is active. */
template <typename T>
__host__ __device__ void fwd_cell(const ocd_rnn_step &s, int n, int j, const typename ocd_compute<T>::type *rec,
                                  int64_t rec_stride)
{
    typedef typename ocd_compute<T>::type C;
    const int G = ocd_rnn_gates(s.mode), S = ocd_rnn_saved_gates(s.mode), H = s.H, P = s.P;
    const C *gx = (const C *)s.gx, *cprev = (const C *)s.cprev;
    C *cnext = (C *)s.cnext, *saved_out = (C *)s.saved;
    int t;
    int64_t i = (int64_t)n * H + j, hi = (int64_t)n * P + j;
    bool on = step_active(s, n, &t);
    C cp = s.mode == CUDNN_LSTM ? cprev[i] : (C)0;
    if (!on) {
        if (s.mode == CUDNN_LSTM) cnext[i] = cp;
        if (s.proj) ocd_cuda_store((T *)s.hfull + i, (C)0);
        else ((T *)s.hnext)[hi] = ((const T *)s.hprev)[hi];
        return;
    }
    int64_t pos = step_pos(s, t, n);
    C ax[4], ah[4], saved[5], c = 0, h;
    for (int g = 0; g < G; g++) {
        ax[g] = (gx ? gx[pos * G * H + g * H + j] : (C)ocd_cuda_load((const T *)s.x + pos * s.x_stride + j)) +
                load_bias<T, C>(s.bw[g], j);
        ah[g] = rec[g * rec_stride] + load_bias<T, C>(s.br[g], j);
    }
    C hprev = s.mode == CUDNN_GRU ? (C)ocd_cuda_load((const T *)s.hprev + hi) : (C)0;
    ocd_rnn_cell_fwd<C>(s.mode, ax, ah, cp, hprev, s.clip, (C)s.lclip, (C)s.rclip, s.clip_nan,
                        ocd_rnn_last_step(&s, n), saved, &c, &h);
    if (s.mode == CUDNN_LSTM) cnext[i] = c;
    if (saved_out)
        for (int g = 0; g < S; g++) saved_out[((int64_t)n * S + g) * H + j] = saved[g];
    if (s.proj) {
        ocd_cuda_store((T *)s.hfull + i, h);
    } else {
        ocd_cuda_store((T *)s.hnext + hi, h);
        ocd_cuda_store((T *)s.y + pos * s.y_stride + (int64_t)s.dir * P + j, h);
    }
}

/* Unit i = n H + j of a forward step, its recurrent products in gh. */
template <typename T> __host__ __device__ void fwd_unit(const ocd_rnn_step &s, int64_t i)
{
    typedef typename ocd_compute<T>::type C;
    int n = (int)(i / s.H), j = (int)(i % s.H);
    fwd_cell<T>(s, n, j, (const C *)s.gh + (int64_t)n * ocd_rnn_gates(s.mode) * s.H + j, s.H);
}

/* Unit i = n H + j of a backward step. */
template <typename T> __host__ __device__ void bwd_unit(const ocd_rnn_step &s, int64_t i)
{
    typedef typename ocd_compute<T>::type C;
    const int G = ocd_rnn_gates(s.mode), S = ocd_rnn_saved_gates(s.mode), H = s.H, P = s.P;
    const bool lstm = s.mode == CUDNN_LSTM, unpacked = s.layout != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED;
    const C *dhin = (const C *)s.dh, *dcin = (const C *)s.dc, *saved_in = (const C *)s.saved;
    C *dhprev = (C *)s.dhprev, *dcprev = (C *)s.dcprev;
    T *dpre_x = (T *)s.dpre_x, *dpre_h = (T *)s.dpre_h;
    int n = (int)(i / H), j = (int)(i % H), t;
    int64_t hi = (int64_t)n * P + j;
    if (!step_active(s, n, &t)) {
        for (int g = 0; g < G; g++) {
            ocd_cuda_store(dpre_h + ((int64_t)n * G + g) * H + j, (C)0);
            if (unpacked) ocd_cuda_store(dpre_x + step_pos(s, s.s, n) * G * H + g * H + j, (C)0);
        }
        if (lstm) dcprev[i] = dcin[i];
        if (!s.proj) dhprev[hi] = dhin[hi];
        return;
    }
    int64_t pos = step_pos(s, t, n);
    C dh = dhin[s.proj ? i : hi];
    if (!s.proj) dh += (C)ocd_cuda_load((const T *)s.dy + pos * s.y_stride + (int64_t)s.dir * P + j);
    C saved[5], dax[4], dah[4], dcp, dhp;
    for (int g = 0; g < S; g++) saved[g] = saved_in[((int64_t)n * S + g) * H + j];
    C dc = lstm ? dcin[i] : (C)0, cp = lstm ? ((const C *)s.cprev)[i] : (C)0;
    C hprev = s.mode == CUDNN_GRU ? (C)ocd_cuda_load((const T *)s.hprev + hi) : (C)0;
    ocd_rnn_cell_bwd<C>(s.mode, dh, dc, saved, cp, hprev, s.clip, (C)s.lclip, (C)s.rclip, s.clip_nan,
                        ocd_rnn_last_step(&s, n), dax, dah, &dcp, &dhp);
    for (int g = 0; g < G; g++) {
        ocd_cuda_store(dpre_x + pos * G * H + g * H + j, dax[g]);
        ocd_cuda_store(dpre_h + ((int64_t)n * G + g) * H + j, dah[g]);
    }
    if (lstm) dcprev[i] = dcp;
    if (!s.proj) dhprev[hi] = dhp;
}

/* A grid-stride loop of a unit over [0, n). */
#define RNN_UNITS(n, body)                                                                                \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x) \
        body

template <typename T> __global__ void fwd_step_kernel(const ocd_rnn_step s)
{
    RNN_UNITS((int64_t)s.N * s.H, fwd_unit<T>(s, i));
}

template <typename T> __global__ void bwd_step_kernel(const ocd_rnn_step s)
{
    RNN_UNITS((int64_t)s.N * s.H, bwd_unit<T>(s, i));
}

/* ---- auxiliary passes ---------------------------------------------------------------------- */

__global__ void convert_kernel(const ocd_rnn_aux a)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.count; i += (int64_t)gridDim.x * blockDim.x)
        ocd_cuda_store_as(a.dst_type, a.dst, i, a.src ? ocd_cuda_load_as<double>(a.src_type, a.src, i) : a.value);
}

/* A thread per (t, n, j) of the padding rows. */
__global__ void pad_fill_kernel(const ocd_rnn_aux a)
{
    const ocd_rnn_step &s = a.step;
    int64_t total = (int64_t)s.T * s.N * a.count;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t j = i % a.count, tn = i / a.count;
        int t = (int)(tn / s.N), n = (int)(tn % s.N);
        if (t >= s.lengths[n]) ocd_cuda_store_as(a.dst_type, a.dst, step_pos(s, t, n) * a.stride + j, a.value);
    }
}

__host__ __device__ inline void offsets_unit(const ocd_rnn_aux &a, int t)
{
    int64_t at = 0;
    for (int n = 0; n < a.step.N; n++) at += a.step.lengths[n] < t ? a.step.lengths[n] : t;
    ((int32_t *)a.dst)[t] = (int32_t)at;
}

__global__ void offsets_kernel(const ocd_rnn_aux a)
{
    RNN_UNITS(a.step.T, offsets_unit(a, (int)i));
}

template <typename T> __host__ __device__ void proj_unit(const ocd_rnn_aux &a, int64_t i)
{
    typedef typename ocd_compute<T>::type C;
    const ocd_rnn_step &s = a.step;
    int n = (int)(i / s.P), j = (int)(i % s.P), t;
    bool on = step_active(s, n, &t);
    int64_t yi = on ? step_pos(s, t, n) * s.y_stride + (int64_t)s.dir * s.P + j : 0;
    if (a.op == OCD_RNN_PROJ_STORE) {
        T v = on ? ((const T *)a.src)[i] : ((const T *)s.hprev)[i];
        ((T *)s.hnext)[i] = v;
        if (on) ((T *)s.y)[yi] = v;
    } else {
        C dh = ((const C *)s.dh)[i];
        ocd_cuda_store((T *)a.dst + i, on ? dh + (C)ocd_cuda_load((const T *)s.dy + yi) : (C)0);
        ((C *)s.dhprev)[i] = on ? (C)0 : dh;
    }
}

template <typename T> __global__ void proj_kernel(const ocd_rnn_aux a)
{
    RNN_UNITS((int64_t)a.step.N * a.step.P, proj_unit<T>(a, i));
}

template <typename T> __host__ __device__ void skip_dx_unit(const ocd_rnn_aux &a, int64_t i)
{
    typedef typename ocd_compute<T>::type C;
    const ocd_rnn_step &s = a.step;
    const int G = ocd_rnn_gates(s.mode);
    int64_t p = i / a.count, j = i % a.count;
    C v = a.add ? (C)ocd_cuda_load((const T *)a.dst + i) : (C)0;
    for (int g = 0; g < G; g++) v += (C)ocd_cuda_load((const T *)a.src + p * G * s.H + g * s.H + j);
    ocd_cuda_store((T *)a.dst + i, v);
}

template <typename T> __global__ void skip_dx_kernel(const ocd_rnn_aux a)
{
    RNN_UNITS(a.rows * a.count, skip_dx_unit<T>(a, i));
}

unsigned grid_for(int64_t n)
{
    int64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

/* ---- the persistent recurrence (inference) --------------------------------------------------

   One cooperative kernel walks every step of a pseudo-layer. Block b owns the hidden units
   [b U, (b + 1) U) (U = plan.units) and holds their rows of R, every gate's, in shared memory
   for the whole sequence. Per step it computes its rows' products with h_{t-1} for every
   sequence, `chunk` sequences at a time, in four phases with a block barrier after each:
     stage   h_{t-1} of the chunk (global memory, where the other blocks wrote it) into shared
             memory, in the compute type;
     dots    PERSIST_SPLIT threads per (row, sequence), each summing every PERSIST_SPLIT-th
             column, so that the threads of a warp read consecutive words of both operands;
     reduce  the partial sums of each product;
     cell    fwd_cell of each unit and sequence: the step loop's math, stores and inactive
             sequences (which carry their states) exactly.
   Then the whole grid synchronises (cooperative_groups::grid_group::sync, which also makes
   every block's h_t visible to the others) before step t + 1. The states alternate between two
   slots (ocd_rnn_seq), so a step never writes what another block may still read in it.

   Each phase is a __host__ __device__ function of (block, thread), so that
   tests/emulate/rnn_persist.cu runs every block and thread on the CPU, the grid barrier
   standing between steps run block by block in several orders. */

constexpr int PERSIST_THREADS = 256;
constexpr int PERSIST_SPLIT = 32;

/* The most multiply-adds of R h a step may take for the kernel to serve it (N G H P). Its
   products run on the CUDA cores at about two shared-memory loads per multiply-add, where the
   step loop's GEMM runs on tensor cores but costs two launches and a GEMM's ramp per step: an
   estimate (2^25 is some microseconds of the kernel on an H100-class GPU, what a step of the
   loop costs at small sizes) until the benchmark's persistent rows set it. */
constexpr int64_t PERSIST_WORK_MAX = (int64_t)1 << 25;

/* Byte offsets of a block's shared memory: R's rows (data [G U][P]: row g U + u holds gate g of
   unit u, zero past H), the staged states (compute [chunk][P]), the partial sums (compute
   [PERSIST_SPLIT][chunk G U]: split k of product d at k chunk G U + d) and the products
   (compute [chunk][G U]). */
struct persist_smem {
    size_t h, partial, rec, total;
};

__host__ __device__ inline size_t persist_align(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

__host__ __device__ inline persist_smem persist_smem_of(int G, int units, int P, int chunk, size_t e, size_t ce)
{
    persist_smem m;
    size_t dots = (size_t)chunk * G * units;
    m.h = persist_align((size_t)G * units * P * e);
    m.partial = m.h + persist_align((size_t)chunk * P * ce);
    m.rec = m.partial + persist_align(PERSIST_SPLIT * dots * ce);
    m.total = m.rec + persist_align(dots * ce);
    return m;
}

/* The launch for q's shapes on `sms` multiprocessors whose blocks take up to smem_max bytes:
   units spread over at most one block per multiprocessor, and as many sequences per chunk as
   fit (all, else halved until they do). NULL, or why not: the weights of a block's units and
   the smallest chunk exceed smem_max. */
const char *persist_shape(const ocd_rnn_step &s, size_t e, size_t ce, int sms, size_t smem_max,
                          ocd_rnn_persist_plan *pl)
{
    const int G = ocd_rnn_gates(s.mode);
    pl->threads = PERSIST_THREADS;
    pl->units = (s.H + sms - 1) / sms;
    pl->blocks = (s.H + pl->units - 1) / pl->units;
    pl->chunk = s.N;
    while (pl->chunk > 1 && persist_smem_of(G, pl->units, s.P, pl->chunk, e, ce).total > smem_max)
        pl->chunk = (pl->chunk + 1) / 2;
    pl->smem = persist_smem_of(G, pl->units, s.P, pl->chunk, e, ce).total;
    return pl->smem > smem_max ? "the recurrent weights of a block's hidden units exceed its shared memory" : NULL;
}

/* Runs one phase of a block: on the device the calling thread's part, then a block barrier;
   on the host (tests/emulate) every thread's part in turn. f(tid) strides by `count`. */
struct persist_threads {
    int count;
    template <class F> __host__ __device__ void operator()(F f) const
    {
#ifdef __CUDA_ARCH__
        f((int)threadIdx.x);
        __syncthreads();
#else
        for (int tid = 0; tid < count; tid++) f(tid);
#endif
    }
};

/* Step t's fields: the slots it reads and writes (ocd_rnn_seq). */
__host__ __device__ inline ocd_rnn_step persist_step_at(const ocd_rnn_seq &q, int t)
{
    ocd_rnn_step s = q.step;
    const bool odd = t & 1;
    s.s = t;
    s.hprev = odd ? q.step.hnext : q.step.hprev;
    s.hnext = odd ? (void *)q.step.hprev : q.step.hnext;
    s.cprev = odd ? q.step.cnext : q.step.cprev;
    s.cnext = odd ? (void *)q.step.cprev : q.step.cnext;
    return s;
}

/* Block b loads its rows of R into shared memory. */
template <typename T>
__host__ __device__ void persist_load(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl, int b,
                                      unsigned char *smem, persist_threads each)
{
    typedef typename ocd_compute<T>::type C;
    const int G = ocd_rnn_gates(q.step.mode), H = q.step.H, P = q.step.P, U = pl.units;
    const T *r = (const T *)q.r;
    T *w = (T *)smem;
    each([&](int tid) {
        for (int64_t i = tid; i < (int64_t)G * U * P; i += pl.threads) {
            int row = (int)(i / P), c = (int)(i % P), g = row / U, j = b * U + row % U;
            if (j < H) w[i] = r[((int64_t)g * H + j) * P + c];
            else ocd_cuda_store(w + i, (C)0);
        }
    });
}

/* Block b's part of step t (its four phases). */
template <typename T>
__host__ __device__ void persist_step(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl, int b, int t,
                                      unsigned char *smem, persist_threads each)
{
    typedef typename ocd_compute<T>::type C;
    const ocd_rnn_step s = persist_step_at(q, t);
    const int G = ocd_rnn_gates(s.mode), H = s.H, P = s.P, U = pl.units, rows = G * U;
    const persist_smem m = persist_smem_of(G, U, P, pl.chunk, sizeof(T), sizeof(C));
    const T *w = (const T *)smem;
    C *h = (C *)(smem + m.h), *partial = (C *)(smem + m.partial), *rec = (C *)(smem + m.rec);
    for (int n0 = 0; n0 < s.N; n0 += pl.chunk) {
        const int nc = s.N - n0 < pl.chunk ? s.N - n0 : pl.chunk, dots = nc * rows;
        each([&](int tid) {
            for (int i = tid; i < nc * P; i += pl.threads)
                h[i] = (C)ocd_cuda_load((const T *)s.hprev + (int64_t)n0 * P + i);
        });
        each([&](int tid) {
            for (int i = tid; i < dots * PERSIST_SPLIT; i += pl.threads) {
                int k = i % PERSIST_SPLIT, d = i / PERSIST_SPLIT, row = d % rows, nl = d / rows;
                C sum = 0;
                for (int c = k; c < P; c += PERSIST_SPLIT) sum += (C)ocd_cuda_load(w + (int64_t)row * P + c) * h[nl * P + c];
                partial[k * dots + d] = sum;
            }
        });
        each([&](int tid) {
            for (int d = tid; d < dots; d += pl.threads) {
                C sum = 0;
                for (int k = 0; k < PERSIST_SPLIT; k++) sum += partial[k * dots + d];
                rec[d] = sum;
            }
        });
        each([&](int tid) {
            for (int i = tid; i < nc * U; i += pl.threads) {
                int u = i % U, nl = i / U, j = b * U + u;
                if (j < H) fwd_cell<T>(s, n0 + nl, j, rec + nl * rows + u, U);
            }
        });
    }
}

template <typename T>
__global__ void __launch_bounds__(PERSIST_THREADS) persist_kernel(const ocd_rnn_seq q, const ocd_rnn_persist_plan pl)
{
    extern __shared__ __align__(16) unsigned char persist_shared[];
    const persist_threads each = {pl.threads};
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    persist_load<T>(q, pl, (int)blockIdx.x, persist_shared, each);
    for (int t = 0; t < q.step.T; t++) {
        persist_step<T>(q, pl, (int)blockIdx.x, t, persist_shared, each);
        grid.sync();
    }
}

typedef void (*persist_fn)(const ocd_rnn_seq, const ocd_rnn_persist_plan);

/* The kernel of a data type; NULL for double (refused: its weights take twice the shared
   memory, and PERSIST_DYNAMIC's double runs the step loop). */
persist_fn persist_kernel_of(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return persist_kernel<float>;
    case CUDNN_DATA_HALF: return persist_kernel<__half>;
    case CUDNN_DATA_BFLOAT16: return persist_kernel<__nv_bfloat16>;
    default: return NULL;
    }
}

} // namespace

extern "C" cudnnStatus_t ocd_cuda_rnn_fwd_step(cudnnHandle_t handle, const ocd_rnn_step *s)
{
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(s->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        fwd_step_kernel<T><<<grid_for((int64_t)s->N * s->H), THREADS, 0, handle->stream>>>(*s);
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    });
}

extern "C" cudnnStatus_t ocd_cuda_rnn_bwd_step(cudnnHandle_t handle, const ocd_rnn_step *s)
{
    return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(s->dtype, [&](auto tag) {
        typedef typename decltype(tag)::type T;
        bwd_step_kernel<T><<<grid_for((int64_t)s->N * s->H), THREADS, 0, handle->stream>>>(*s);
        OCD_CUDA_LAUNCHED();
        return CUDNN_STATUS_SUCCESS;
    });
}

extern "C" cudnnStatus_t ocd_cuda_rnn_aux(cudnnHandle_t handle, const ocd_rnn_aux *a)
{
    cudaStream_t st = handle->stream;
    const ocd_rnn_step &s = a->step;
    switch (a->op) {
    case OCD_RNN_CONVERT:
        convert_kernel<<<grid_for(a->count), THREADS, 0, st>>>(*a);
        break;
    case OCD_RNN_PAD_FILL:
        pad_fill_kernel<<<grid_for((int64_t)s.T * s.N * a->count), THREADS, 0, st>>>(*a);
        break;
    case OCD_RNN_OFFSETS:
        offsets_kernel<<<grid_for(s.T), THREADS, 0, st>>>(*a);
        break;
    case OCD_RNN_PROJ_STORE:
    case OCD_RNN_PROJ_DTOT:
        return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(s.dtype, [&](auto tag) {
            typedef typename decltype(tag)::type T;
            proj_kernel<T><<<grid_for((int64_t)s.N * s.P), THREADS, 0, st>>>(*a);
            OCD_CUDA_LAUNCHED();
            return CUDNN_STATUS_SUCCESS;
        });
    case OCD_RNN_SKIP_DX:
        return ocd_cuda_dispatch<OCD_CUDA_FLOATS>(s.dtype, [&](auto tag) {
            typedef typename decltype(tag)::type T;
            skip_dx_kernel<T><<<grid_for(a->rows * a->count), THREADS, 0, st>>>(*a);
            OCD_CUDA_LAUNCHED();
            return CUDNN_STATUS_SUCCESS;
        });
    }
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

extern "C" const char *ocd_cuda_rnn_persist_plan(cudnnHandle_t handle, const ocd_rnn_seq *q,
                                                 ocd_rnn_persist_plan *plan)
{
    persist_fn kernel = persist_kernel_of(q->step.dtype);
    if (kernel == NULL) return OCD_REASON_DTYPE;
    int coop = 0, optin = 0, per_sm = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, handle->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, handle->device) != cudaSuccess) {
        (void)cudaGetLastError(); /* not a launch's error */
        return "the device's attributes cannot be read";
    }
    if (!coop) return "the device takes no cooperative launch";
    const ocd_rnn_step &s = q->step;
    if ((int64_t)s.N * ocd_rnn_gates(s.mode) * s.H * s.P > PERSIST_WORK_MAX)
        return "the recurrent product of a step is large enough for the step loop's GEMM to be faster";
    const char *why = persist_shape(s, ocd_dtype_scalar_size(s.dtype), sizeof(float), handle->sm_count, (size_t)optin,
                                    plan);
    if (why != NULL) return why;
    /* the opt-in maximum once, so that any plan's shared memory may be launched */
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, plan->threads, plan->smem) != cudaSuccess) {
        (void)cudaGetLastError();
        return "the kernel's occupancy cannot be queried";
    }
    if ((int64_t)per_sm * handle->sm_count < plan->blocks) return "the grid would not be co-resident";
    return NULL;
}

extern "C" cudnnStatus_t ocd_cuda_rnn_persist(cudnnHandle_t handle, const ocd_rnn_seq *q,
                                              const ocd_rnn_persist_plan *plan)
{
    ocd_rnn_seq qa = *q;
    ocd_rnn_persist_plan pa = *plan;
    void *args[] = {&qa, &pa};
    OCD_CUDA_TRY(cudaLaunchCooperativeKernel((const void *)persist_kernel_of(q->step.dtype), dim3((unsigned)plan->blocks),
                                             dim3((unsigned)plan->threads), args, plan->smem, handle->stream));
    return CUDNN_STATUS_SUCCESS;
}
