/* rnn.cu: the pointwise steps and auxiliary passes of the recurrent networks' step loop on
   CUDA (problem/rnn_kernels.h): a thread per unit of a sequence ((n, j) of the batch), the cell
   math of rnn_kernels.h in the compute type (float, double for double data). Every launch goes
   on the handle's stream and none waits for the host, so a whole RNN call can be captured. The
   persistent recurrence of inference is cuda/rnn_persist.cu's.

   What one thread does (fwd_unit and its fwd_cell, bwd_unit, proj_unit, skip_dx_unit,
   offsets_unit) is __host__ __device__, so that tests/emulate/rnn.cu runs every thread on the
   CPU. */
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/rnn_unit.cuh"

namespace {

constexpr int THREADS = 256;

__host__ __device__ __forceinline__ bool step_active(const ocd_rnn_step &s, int n, int *t)
{
    return step_active_at(s, s.s, s.lengths[n], t);
}

/* Unit j of sequence n of a forward step; rec[g rec_stride]: R_g h of the unit's gate g (the
   recurrent product without its bias), read only where the sequence is active. */
template <typename T>
__host__ __device__ void fwd_cell(const ocd_rnn_step &s, int n, int j, const typename ocd_compute<T>::type *rec,
                                  int64_t rec_stride)
{
    typedef typename ocd_compute<T>::type C;
    const int G = ocd_rnn_gates(s.mode), S = ocd_rnn_saved_gates(s.mode), H = s.H, P = s.P;
    const C *cprev = (const C *)s.cprev;
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
        ax[g] = gate_input<T>(s, pos, g, j);
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
