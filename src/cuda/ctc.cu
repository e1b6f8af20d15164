/* ctc.cu: the CTC loss on CUDA (math and workspace layout in problem/ctc.h), in four launches,
   none with atomics, so that both algorithms give the same bits on every run:

   1. offsets: one block scans the label lengths into each sample's label start.
   2. rows: a warp per (t, n) row computes the row's log normalizer (SOFTMAX) and writes the
      row's gradient as y (0 for the steps t >= T_n): the part of the gradient every symbol has.
   3. recursion: two blocks per sample, one running alpha forwards, one beta backwards, a thread
      per state s, one barrier per step (the previous step's row double-buffered in shared
      memory); each step's values go to the workspace, shifted to stay near 0 (the shifts in
      double beside them). The loads of y for the next 8 steps are issued before the current 8
      are computed, so that one step waits for arithmetic and the barrier, not for memory. The
      alpha block writes log P and the cost.
   4. labels: a block per sample and a few steps subtracts, for each symbol of the sample's
      label, the occupancies exp(alpha + beta - log P) of its states: the blank's (every even
      state) by a warp in a fixed order, each other symbol's by the thread of its first state
      along the chain of its repeats. Samples whose cost is not finite, or that are invalid, get
      their rows set by the NaN mode instead.

   The per-thread steps (ctc_alpha_next, ctc_beta_next, ctc_shift, the state rules) are __host__
   __device__, so that tests/emulate/ctc.cu runs the recursion of every thread on the CPU. */
#include "cuda/check.cuh"
#include "problem/ctc.h"

#include <math.h>

namespace {

/* Steps whose loads are in flight ahead of the one computed. */
constexpr int AHEAD = 8;
/* Threads of the recursion block: one per state, a whole number of warps. */
constexpr int MAX_STATES = 2 * OCD_CTC_MAX_LABEL + 1;
constexpr int MAX_THREADS = (MAX_STATES + 31) / 32 * 32;
/* Label kernel: threads and steps a block. */
constexpr int LABEL_THREADS = 256;
constexpr int LABEL_ROWS = 4;
constexpr int ROW_WARPS = 8;

struct CtcArgs {
    int T, N, A, S; /* S: states a step in the workspace */
    int64_t ps[3], gs[3];
    const float *probs;
    float *costs, *grads;
    bool softmax, propagate_nan;
    int max_label;
    const int *labels, *label_lengths, *input_lengths;
    float *lse, *alpha, *beta;
    double *logp, *alpha_shift, *beta_shift;
    int *offset;
};

} // namespace

/* ---- per-thread rules, shared with the emulation ------------------------------------------- */

/* log(e^a + e^b) and log(e^a + e^b + e^c), NaN-propagating, -inf when every term is. */
static inline OCD_CTC_HD float ctc_lse2(float a, float b)
{
    float m = a > b ? a : b, d = a > b ? b : a;
    if (m == -INFINITY || a != a || b != b) return a + b;
    return m + log1pf(expf(d - m));
}

static inline OCD_CTC_HD float ctc_lse3(float a, float b, float c)
{
    float m = a > b ? a : b;
    m = m > c ? m : c;
    if (m == -INFINITY || a != a || b != b || c != c) return a + b + c;
    return m + logf(expf(a - m) + expf(b - m) + expf(c - m));
}

/* The symbol of state s of a label, and whether a path may enter s from s - 2. */
static inline OCD_CTC_HD int ctc_symbol(const int *lab, int s)
{
    return s & 1 ? lab[s >> 1] : 0;
}

static inline OCD_CTC_HD bool ctc_skip_into(const int *lab, int s)
{
    return (s & 1) && s >= 3 && lab[s >> 1] != lab[(s >> 1) - 1];
}

/* alpha_t(s) from alpha_{t-1} (prev) and log y_t(l'(s)). */
static inline OCD_CTC_HD float ctc_alpha_next(const float *prev, int s, bool skip, float logy)
{
    float v = s == 0 ? prev[0] : skip ? ctc_lse3(prev[s], prev[s - 1], prev[s - 2]) : ctc_lse2(prev[s], prev[s - 1]);
    return v + logy;
}

/* beta_t(s) from c(s') = beta_{t+1}(s') + log y_{t+1}(l'(s')); skip: s + 2 may be entered from s. */
static inline OCD_CTC_HD float ctc_beta_next(const float *c, int s, int S, bool skip)
{
    return s + 1 >= S ? c[s] : skip ? ctc_lse3(c[s], c[s + 1], c[s + 2]) : ctc_lse2(c[s], c[s + 1]);
}

/* alpha at step 0, beta at the last step. */
static inline OCD_CTC_HD float ctc_alpha_first(int s, int S, float logy)
{
    return s < 2 && s < S ? logy : -INFINITY;
}

static inline OCD_CTC_HD float ctc_beta_last(int s, int S)
{
    return s < S && s >= S - 2 ? 0.0f : -INFINITY;
}

/* The shift of a step: the largest value of the step before, or 0 when that is not finite (every
   state unreachable, or NaN). */
static inline OCD_CTC_HD float ctc_shift(float row_max)
{
    return row_max > -INFINITY && row_max < INFINITY ? row_max : 0.0f;
}

/* log P from alpha at the last step (less its shift). */
static inline OCD_CTC_HD float ctc_log_p(const float *last, int S)
{
    return S > 1 ? ctc_lse2(last[S - 1], last[S - 2]) : last[0];
}

/* The next state after s with the same symbol, or -1; and whether s is its symbol's first. */
static inline OCD_CTC_HD int ctc_next_same(const int *lab, int L, int s)
{
    if (!(s & 1)) return s + 2 < 2 * L + 1 ? s + 2 : -1;
    for (int j = (s >> 1) + 1; j < L; j++)
        if (lab[j] == lab[s >> 1]) return 2 * j + 1;
    return -1;
}

static inline OCD_CTC_HD bool ctc_first_of_symbol(const int *lab, int s)
{
    if (!(s & 1)) return s == 0;
    for (int j = 0; j < s >> 1; j++)
        if (lab[j] == lab[s >> 1]) return false;
    return true;
}

/* ---- kernels ---------------------------------------------------------------------------------- */

namespace {

__device__ __forceinline__ float load_prob(const CtcArgs &a, int t, int n, int k)
{
    return __ldg(a.probs + t * a.ps[0] + n * a.ps[1] + k * a.ps[2]);
}

__device__ __forceinline__ float log_y(const CtcArgs &a, float x, float lse)
{
    return a.softmax ? x - lse : logf(x);
}

/* Launch 1: label starts (ocd_ctc_offsets, in parallel): each thread sums a run of samples, the
   block scans the sums, each thread writes its run. */
__global__ void offsets_kernel(const CtcArgs a)
{
    __shared__ long long part[1024];
    int per = (a.N + blockDim.x - 1) / blockDim.x, begin = threadIdx.x * per, end = min(begin + per, a.N);
    long long sum = 0;
    for (int n = begin; n < end; n++) sum += max(a.label_lengths[n], 0);
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int d = 1; d < (int)blockDim.x; d *= 2) {
        long long v = threadIdx.x >= (unsigned)d ? part[threadIdx.x - d] : 0;
        __syncthreads();
        part[threadIdx.x] += v;
        __syncthreads();
    }
    long long at = part[threadIdx.x] - sum;
    for (int n = begin; n < end; n++) {
        a.offset[n] = at < INT32_MAX ? (int)at : INT32_MAX;
        at += max(a.label_lengths[n], 0);
    }
}

/* Launch 2: a warp per row (t, n). */
__global__ void rows_kernel(const CtcArgs a)
{
    int64_t row = (int64_t)blockIdx.x * ROW_WARPS + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= (int64_t)a.T * a.N) return;
    int t = (int)(row / a.N), n = (int)(row % a.N);
    int tn = min(max(a.input_lengths[n], 0), a.T);
    float *g = a.grads + t * a.gs[0] + n * a.gs[1];
    if (t >= tn) {
        for (int k = lane; k < a.A; k += 32) g[k * a.gs[2]] = 0.0f;
        return;
    }
    float lse = 0.0f;
    if (a.softmax) {
        float m = -INFINITY, sum = 0.0f;
        for (int k = lane; k < a.A; k += 32) m = fmaxf(m, load_prob(a, t, n, k));
        for (int d = 16; d > 0; d /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
        for (int k = lane; k < a.A; k += 32) sum += expf(load_prob(a, t, n, k) - m);
        for (int d = 16; d > 0; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
        lse = m + logf(sum);
        if (lane == 0) a.lse[row] = lse;
    }
    for (int k = lane; k < a.A; k += 32) {
        float x = load_prob(a, t, n, k);
        g[k * a.gs[2]] = a.softmax ? expf(x - lse) : x;
    }
}

/* A sample's lengths and labels, checked as problem/ctc.h says; lab: the labels in shared
   memory. Every thread of the block gets the same answer. */
__device__ bool load_sample(const CtcArgs &a, int n, int *lab, int *tn, int *len)
{
    *tn = a.input_lengths[n];
    *len = a.label_lengths[n];
    if (!ocd_ctc_lengths_valid(*tn, *len, a.T, a.max_label)) return false;
    bool bad = false;
    const int *src = a.labels + a.offset[n];
    for (int j = threadIdx.x; j < *len; j += blockDim.x) {
        lab[j] = src[j];
        bad |= !ocd_ctc_label_valid(lab[j], a.A);
    }
    return !__syncthreads_or(bad);
}

/* Loads x and the row normalizer of the steps of one chunk: step(u) for u < AHEAD. */
struct Chunk {
    float x[AHEAD], lse[AHEAD];
};

__device__ __forceinline__ void load_chunk(const CtcArgs &a, int n, int sym, int first, int dir, int lo, int hi,
                                           Chunk &c)
{
#pragma unroll
    for (int u = 0; u < AHEAD; u++) {
        int t = first + dir * u;
        if (t >= lo && t < hi) {
            c.x[u] = load_prob(a, t, n, sym);
            c.lse[u] = a.softmax ? __ldg(a.lse + (int64_t)t * a.N + n) : 0.0f;
        }
    }
}

/* The largest of a warp's values (states past the label hold -inf), for every lane. */
__device__ __forceinline__ float warp_max(float v)
{
    for (int d = 16; d > 0; d /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d));
    return v;
}

/* Launch 3: block 2n runs alpha of sample n, block 2n + 1 beta. Each step's values are stored
   shifted down by the largest value of the step before (its warps' maxima, published in shared
   memory with the row), so that they stay near 0 however long the input: the shifts, summed in
   double, go to the workspace per step, and log P to the cost in double. */
__global__ void recursion_kernel(const CtcArgs a)
{
    __shared__ int lab[OCD_CTC_MAX_LABEL];
    __shared__ float row[2][MAX_THREADS];
    __shared__ float maxima[2][MAX_THREADS / 32];
    const int n = blockIdx.x >> 1, s = threadIdx.x, warps = blockDim.x / 32;
    const bool forward = !(blockIdx.x & 1);
    int tn, len;
    if (!load_sample(a, n, lab, &tn, &len)) {
        if (forward && s == 0) a.logp[n] = NAN, a.costs[n] = NAN;
        return;
    }
    if (tn == 0) {
        if (forward && s == 0) a.logp[n] = 0.0, a.costs[n] = -0.0f;
        return;
    }
    const int S = 2 * len + 1, sym = s < S ? ctc_symbol(lab, s) : 0;
    float *out = (forward ? a.alpha : a.beta) + (int64_t)n * a.T * a.S + s;
    double *shifts = (forward ? a.alpha_shift : a.beta_shift) + (int64_t)n * a.T;
    const int dir = forward ? 1 : -1, start = forward ? 0 : tn - 1;
    const bool skip = forward ? s < S && ctc_skip_into(lab, s) : s + 2 < S && ctc_skip_into(lab, s + 2);

    Chunk cur, next;
    load_chunk(a, n, sym, start, dir, 0, tn, cur);
    float v = forward ? ctc_alpha_first(s, S, log_y(a, cur.x[0], cur.lse[0])) : ctc_beta_last(s, S);
    double shift = 0;
    if (s < S) out[(int64_t)start * a.S] = v;
    if (s == 0) shifts[start] = 0;
    row[start & 1][s] = forward ? v : v + log_y(a, cur.x[0], cur.lse[0]);
    float m = warp_max(s < S ? v : -INFINITY);
    if (s % 32 == 0) maxima[start & 1][s / 32] = m;
    for (int first = start; first >= 0 && first < tn; first += dir * AHEAD) {
        load_chunk(a, n, sym, first + dir * AHEAD, dir, 0, tn, next);
#pragma unroll
        for (int u = 0; u < AHEAD; u++) {
            int t = first + dir * u;
            if (t == start || t < 0 || t >= tn) continue;
            __syncthreads();
            float ly = log_y(a, cur.x[u], cur.lse[u]);
            m = -INFINITY;
            for (int w = 0; w < warps; w++) m = fmaxf(m, maxima[(t - dir) & 1][w]);
            m = ctc_shift(m);
            shift += m;
            if (forward) {
                v = s < S ? ctc_alpha_next(row[(t - 1) & 1], s, skip, ly) - m : -INFINITY;
                row[t & 1][s] = v;
            } else {
                v = s < S ? ctc_beta_next(row[(t + 1) & 1], s, S, skip) - m : -INFINITY;
                row[t & 1][s] = v + ly;
            }
            if (s < S) out[(int64_t)t * a.S] = v;
            if (s == 0) shifts[t] = shift;
            float wm = warp_max(s < S ? v : -INFINITY);
            if (s % 32 == 0) maxima[t & 1][s / 32] = wm;
        }
        cur = next;
    }
    if (forward) {
        __syncthreads();
        if (s == 0) {
            double lp = (double)ctc_log_p(row[(tn - 1) & 1], S) + shift;
            a.logp[n] = lp;
            a.costs[n] = (float)-lp;
        }
    }
}

/* Launch 4: block (n, y), for the chunks of LABEL_ROWS steps y, y + gridDim.y, ... */
__global__ void labels_kernel(const CtcArgs a)
{
    __shared__ int lab[OCD_CTC_MAX_LABEL];
    __shared__ int next_same[MAX_STATES];
    __shared__ bool first[MAX_STATES];
    __shared__ float occ[MAX_STATES];
    const int n = blockIdx.x;
    int tn, len;
    bool valid = load_sample(a, n, lab, &tn, &len);
    double lp = valid ? a.logp[n] : 0.0;
    if (!valid || !isfinite(lp)) {
        /* the whole sample when invalid, its steps otherwise */
        int end = valid ? tn : a.T;
        float fill = a.propagate_nan ? NAN : 0.0f;
        for (int t = blockIdx.y * LABEL_ROWS; t < end; t += gridDim.y * LABEL_ROWS)
            for (int u = 0; u < LABEL_ROWS && t + u < end; u++)
                for (int k = threadIdx.x; k < a.A; k += blockDim.x)
                    a.grads[(t + u) * a.gs[0] + n * a.gs[1] + k * a.gs[2]] = fill;
        return;
    }
    const int S = 2 * len + 1;
    for (int s = threadIdx.x; s < S; s += blockDim.x) {
        next_same[s] = ctc_next_same(lab, len, s);
        first[s] = ctc_first_of_symbol(lab, s);
    }
    const int64_t base = (int64_t)n * a.T * a.S;
    for (int t0 = blockIdx.y * LABEL_ROWS; t0 < tn; t0 += gridDim.y * LABEL_ROWS)
        for (int t = t0; t < min(t0 + LABEL_ROWS, tn); t++) {
            __syncthreads(); /* the chains are built; the previous step's sums are done */
            const float shift = (float)(a.alpha_shift[(int64_t)n * a.T + t] + a.beta_shift[(int64_t)n * a.T + t] - lp);
            for (int s = threadIdx.x; s < S; s += blockDim.x)
                occ[s] = expf(a.alpha[base + (int64_t)t * a.S + s] + a.beta[base + (int64_t)t * a.S + s] + shift);
            __syncthreads();
            float *g = a.grads + t * a.gs[0] + n * a.gs[1];
            const float lse = a.softmax ? a.lse[(int64_t)t * a.N + n] : 0.0f;
            if (threadIdx.x < 32) {
                /* the blank: lane i sums the even states 2 (i + 32 m) in order, then a fixed tree */
                float sum = 0.0f;
                for (int s = 2 * threadIdx.x; s < S; s += 64) sum += occ[s];
                for (int d = 16; d > 0; d /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, d);
                if (threadIdx.x == 0) {
                    float x = load_prob(a, t, n, 0);
                    g[0] = (a.softmax ? expf(x - lse) : x) - sum;
                }
            } else {
                for (int s = 2 * (threadIdx.x - 32) + 1; s < S; s += 2 * (blockDim.x - 32)) {
                    if (!first[s]) continue;
                    float sum = 0.0f;
                    for (int q = s; q >= 0; q = next_same[q]) sum += occ[q];
                    int k = lab[s >> 1];
                    float x = load_prob(a, t, n, k);
                    g[k * a.gs[2]] = (a.softmax ? expf(x - lse) : x) - sum;
                }
            }
        }
}

CtcArgs args_of(const ocd_ctc_problem *p, void *ws)
{
    ocd_ctc_layout l;
    ocd_ctc_layout_of(p, &l);
    float *w = (float *)ws;
    CtcArgs a;
    a.T = p->T, a.N = p->N, a.A = p->A, a.S = l.S;
    for (int i = 0; i < 3; i++) a.ps[i] = p->probs_stride[i], a.gs[i] = p->grads_stride[i];
    a.probs = p->probs, a.costs = p->costs, a.grads = p->grads;
    a.softmax = p->softmax, a.propagate_nan = p->propagate_nan, a.max_label = p->max_label;
    a.lse = w + l.lse, a.alpha = w + l.alpha, a.beta = w + l.beta;
    a.logp = (double *)(w + l.logp);
    a.alpha_shift = (double *)(w + l.alpha_shift), a.beta_shift = (double *)(w + l.beta_shift);
    a.offset = (int *)ws + l.offset;
    if (p->host_labels) {
        a.labels = (const int *)ws + l.labels;
        a.label_lengths = (const int *)ws + l.label_lengths;
        a.input_lengths = (const int *)ws + l.input_lengths;
    } else {
        a.labels = p->labels, a.label_lengths = p->label_lengths, a.input_lengths = p->input_lengths;
    }
    return a;
}

} // namespace

extern "C" cudnnStatus_t ocd_ctc_run_cuda(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    const ocd_ctc_problem *p = (const ocd_ctc_problem *)problem;
    CtcArgs a = args_of(p, ws);
    if (p->host_labels) {
        size_t lengths = sizeof(int) * (size_t)p->N;
        if (p->label_total > 0)
            OCD_TRY(ocd_backend_copy(handle, (void *)a.labels, p->labels, sizeof(int) * (size_t)p->label_total,
                                     OCD_COPY_FROM_HOST));
        OCD_TRY(ocd_backend_copy(handle, (void *)a.label_lengths, p->label_lengths, lengths, OCD_COPY_FROM_HOST));
        OCD_TRY(ocd_backend_copy(handle, (void *)a.input_lengths, p->input_lengths, lengths, OCD_COPY_FROM_HOST));
    }
    cudaStream_t st = handle->stream;
    offsets_kernel<<<1, 1024, 0, st>>>(a);
    OCD_CUDA_LAUNCHED();
    int64_t rows = (int64_t)p->T * p->N;
    rows_kernel<<<(unsigned)((rows + ROW_WARPS - 1) / ROW_WARPS), 32 * ROW_WARPS, 0, st>>>(a);
    OCD_CUDA_LAUNCHED();
    int threads = (2 * p->max_label + 1 + 31) / 32 * 32;
    recursion_kernel<<<2 * p->N, threads, 0, st>>>(a);
    OCD_CUDA_LAUNCHED();
    unsigned chunks = (unsigned)((p->T + LABEL_ROWS - 1) / LABEL_ROWS);
    labels_kernel<<<dim3(p->N, chunks < 65535 ? chunks : 65535), LABEL_THREADS, 0, st>>>(a);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}
