/* rnn_persist.cu: the persistent recurrence of RNN inference on CUDA (ocd_cuda_rnn_persist,
   problem/rnn_kernels.h): one cooperative kernel for every step of a pseudo-layer, the recurrent
   weights held in shared memory, h passed from block to block in tagged words with no grid
   barrier per step, the cell math of rnn_kernels.h (the step loop's kernels are cuda/rnn.cu's).
   Every phase is __host__ __device__, so that tests/emulate/rnn_persist.cu runs every block and
   thread on the CPU. */
#include "core/reasons.h"
#include "cuda/check.cuh"
#include "cuda/rnn_unit.cuh"

#include <cooperative_groups.h>
#include <cstring>

namespace {

/* ---- the persistent recurrence (inference) --------------------------------------------------

   One cooperative kernel walks every step of a pseudo-layer. Block b owns the hidden units
   [b U, (b + 1) U) (U = plan.units) and keeps in shared memory, for the whole sequence, their
   rows of R (every gate's), their b_R and their cells (LSTM) of every sequence. The blocks pass
   the state h from step to step through the exchange (ocd_rnn_seq.exchange): h_t of unit j of
   sequence n is the 8-byte word [t % 2][n][j], h in float in its low half and the tag t + 1 in
   its high half. The block owning j stores the word whole (one relaxed store at GPU scope); a
   block that needs h_{t-1} polls each word (relaxed loads) until its tag reads t. A word is
   written and read in one access, so a word with the right tag holds that step's h: no fence, no
   flag beside the data and no barrier of the grid between steps; each block waits for exactly
   the words it reads. h stays in float from step to step, as the cells do (in shared memory):
   y and hy are rounded to the data type, never the state the next step reads (whether NVIDIA's
   persistent kernel does the same, bench/suites.c's lstm_b1_t64_h512_inf_f16_persist_wsmall
   against the vendor's tells).

   Slot reuse: a block writes slot t % 2 of a sequence's words at step t only after it has read
   every unit's h_{t-1} of that sequence; each block published its h_{t-1} of it only after it
   had read all of h_{t-2} of it (its stage, a block barrier, then its cells). So no block still
   reads h_{t-2} from the words being overwritten.

   Prologue: each block clears its own words of both slots (tag 0: the workspace holds whatever
   an earlier call left there, tags of the same steps included), loads its rows of R, its b_R
   and its cells (cx), and the grid synchronises once (cooperative_groups::grid_group::sync), so
   that no block polls a word its owner has not yet cleared. Step 0 reads hx. The first form
   takes hx and cx from state slot 0 (the caller converts them there) and leaves the final states
   in slot T % 2; the pipelined form reads the call's hx and cx and writes its hy and cy itself
   (data type; zero initial states where not given), saving the caller's copies and conversions
   around the kernel.

   Each step takes `chunk` sequences at a time, in one of two forms (plan.pipelined). The first,
   in three phases with a block barrier after each:
     stage   what the block's cells take besides R h (W x + b_W from gx, or x with skip input;
             the position, whether the sequence is active and at its last step), first since
             it does not wait, then h_{t-1} of the chunk: each thread polls up to PERSIST_POLL
             words at once, into shared memory;
     dots    a warp per product (row, sequence) of R h: each lane sums every 32nd column, then
             the warp's butterfly of shuffles sums the lanes (no partial sums in shared memory);
     cells   ocd_rnn_cell_fwd per unit and sequence: the cell back to shared memory, the h word
             stored, y in the data type; a sequence past its length carries its states. At the
             last step the final states go to state slot T % 2 (hy in the data type, cy), as
             the step loop leaves them.
   Its stage stores each gate input to shared memory as it loads it, so a step waits for the
   lengths, then the positions, then the gate inputs (dependent loads from L2), and only then
   starts polling: their latencies add to the exchange's.

   The pipelined form keeps a step's critical path to the exchange's round trip and the unit's
   products, with one block barrier:
     stage   each thread computes the positions from the lengths (copied to shared memory by
             the prologue, with b_W) and issues the loads of up to PERSIST_INPUTS gate inputs
             into registers, then polls its words of h_{t-1} as the first form does; only once
             they are all seen does it store h and the gate inputs (+ b_W) to shared memory: the
             inputs' latency runs under the exchange's. A block barrier.
     units   a warp per unit and sequence: each lane sums its columns of all G gates' rows at
             once (G independent sums, h read once per column; pairs of columns, one access
             each, where P is even, so that a warp's 16-bit weights fill a shared-memory
             wavefront), the butterflies sum them, and lane 0 runs the cell as the first form's
             cells do (its other operands read before the products), publishing its h word
             (at the last step also hy and cy). No barrier: a warp goes on to the next stage
             (its loads and polls) while the others finish their units.
   What a stage writes (h, the gate inputs, the sequences' positions) lies in two buffers, the
   stage of the (step, chunk) numbered k using buffer k % 2: the stage of k + 1 may run while
   warps still read buffer k % 2 in the units of k, and buffer (k + 1) % 2 was last read by the
   units of k - 1, which every warp finished before the barrier of stage k. A unit's cell is read
   and written only by lane 0 of the warp that owns the unit (the same at every step): the
   shuffles between the products and the cell order no shared memory, so another lane's read of
   it would be unordered with lane 0's write (racecheck reports such a pair). Warps
   polling for words that their own block's other warps have yet to publish wait on no barrier
   of those warps, so the block goes on.

   The cost model of a step (the bench's LSTM, H = P = 512, batch 1, on an H100's 132 SMs: U = 4,
   128 blocks of 256 threads):
     moved   per block: P = 512 words (4 KB) of h_{t-1} read from L2, 512 KB for the grid, some
             0.1 us of the L2's bandwidth; its G U P = 8192 weights (16 KB) from shared memory,
             about 128 cycles of its bandwidth; the cells' gx (16 floats), U words and U values
             of y written. Nothing in HBM but gx and y; R, b_R and c are read once a sequence.
     synced  no grid barrier: the last word of h_{t-1} stored to L2, then seen by the pollers
             (one L2 round trip after the store lands: 0.5 to 0.7 us at H100 latencies of
             about 300 to 600 cycles at 1.7 GHz), then one block barrier (three in the first
             form).
     compute the products: P / 32 = 16 columns per lane, G = 4 independent multiply-adds per
             column, 4 x 5 shuffles (about 0.2 us); the cell: three sigmoids and two tanh
             (0.1 us).
   About 1 us a step, most of it the exchange's L2 latency; one grid barrier and the loads of R
   per call (a few us, which the 1-step case shows). The bench's rows (--suite rnn --case
   persist) measure a step as (t64 - t16) / 48 and the call's fixed part as t1. Each phase is a
   __host__ __device__ function of (block, thread), so that tests/emulate/rnn_persist.cu runs
   every block and thread on the CPU, its polls answering "not yet" instead of spinning, under
   schedules where blocks run at different speeds (and, pipelined, a block's next stage runs
   between its warps' units). */

constexpr int PERSIST_THREADS = 256;
constexpr int PERSIST_WARP = 32;
constexpr int PERSIST_POLL = 4;   /* exchange words a thread polls at once */
constexpr int PERSIST_INPUTS = 4; /* gate inputs a thread of the pipelined stage holds in registers */
constexpr int PERSIST_ROW_LOADS = 16; /* loads of R a thread of the pipelined prologue keeps in flight */

/* The most multiply-adds of R h a step may take for the kernel to serve it (N G H P). Its
   products run on the CUDA cores at about two shared-memory loads per multiply-add, where the
   step loop's GEMM runs on tensor cores but costs two launches and a GEMM's ramp per step: an
   estimate (2^25 is some microseconds of the kernel on an H100-class GPU, what a step of the
   loop costs at small sizes) until the benchmark's persistent rows set it. */
constexpr int64_t PERSIST_WORK_MAX = (int64_t)1 << 25;

/* Byte offsets of a block's shared memory: R's rows at 0 (data [G U][P]: row g U + u holds gate g
   of unit u, zero past H), the staged states (compute [chunk][P]), the products (compute
   [chunk][G U]; the first form only), the cells' W x + b_W (compute [chunk][G U]), b_R (compute
   [G U]), b_W (compute [G U]; pipelined only), the cells (compute [N][U]), the lengths (int32
   [N]; pipelined only) and the sequences (persist_seq_at [chunk]). The pipelined form has two
   buffers of the staged states, the W x + b_W and the sequences, `*_step` bytes apart. */
struct persist_smem {
    size_t h, rec, ax, br, bw, cell, len, seq, total;
    size_t h_step, ax_step, seq_step;
};

__host__ __device__ inline size_t persist_align(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

__host__ __device__ inline persist_smem persist_smem_of(int G, int units, int P, int chunk, int N, size_t e, size_t ce,
                                                        bool pipelined)
{
    persist_smem m;
    const size_t rows = (size_t)G * units, bufs = pipelined ? 2 : 1;
    m.h_step = persist_align((size_t)chunk * P * ce);
    m.ax_step = persist_align((size_t)chunk * rows * ce);
    m.seq_step = persist_align((size_t)chunk * sizeof(persist_seq_at));
    m.h = persist_align(rows * P * e);
    m.rec = m.h + bufs * m.h_step;
    m.ax = m.rec + (pipelined ? 0 : m.ax_step);
    m.br = m.ax + bufs * m.ax_step;
    m.bw = m.br + persist_align(rows * ce);
    m.cell = m.bw + (pipelined ? persist_align(rows * ce) : 0);
    m.len = m.cell + persist_align((size_t)N * units * ce);
    m.seq = m.len + (pipelined ? persist_align((size_t)N * sizeof(int32_t)) : 0);
    m.total = m.seq + bufs * m.seq_step;
    return m;
}

/* The launch for q's shapes on `sms` multiprocessors whose blocks take up to smem_max bytes:
   units spread over at most one block per multiprocessor, and as many sequences per chunk as
   fit (all, else halved until they do; pipelined, also until a chunk's gate inputs are at most
   PERSIST_INPUTS a thread). NULL, or why not: the weights and cells of a block's units and the
   smallest chunk exceed smem_max, or (pipelined) one sequence's gate inputs of a block exceed
   what its threads hold. */
const char *persist_shape(const ocd_rnn_step &s, size_t e, size_t ce, int sms, size_t smem_max, bool pipelined,
                          ocd_rnn_persist_plan *pl)
{
    const int G = ocd_rnn_gates(s.mode);
    pl->threads = PERSIST_THREADS;
    pl->pipelined = pipelined;
    pl->units = (s.H + sms - 1) / sms;
    pl->blocks = (s.H + pl->units - 1) / pl->units;
    const int64_t inputs_max = pipelined ? (int64_t)PERSIST_INPUTS * pl->threads : INT64_MAX;
    pl->chunk = s.N;
    while (pl->chunk > 1 && (persist_smem_of(G, pl->units, s.P, pl->chunk, s.N, e, ce, pipelined).total > smem_max ||
                             (int64_t)pl->chunk * G * pl->units > inputs_max))
        pl->chunk = (pl->chunk + 1) / 2;
    pl->smem = persist_smem_of(G, pl->units, s.P, pl->chunk, s.N, e, ce, pipelined).total;
    if (pl->smem > smem_max) return "the recurrent weights of a block's hidden units exceed its shared memory";
    if ((int64_t)pl->chunk * G * pl->units > inputs_max)
        return "a block's gate inputs of one sequence exceed what its threads hold while they wait";
    return NULL;
}

/* Runs one phase of a block: on the device the calling thread's part, then a block barrier;
   on the host (tests/emulate) the parts of threads [lo, hi) in turn. f(tid) strides by count. */
struct persist_threads {
    int count, lo, hi;
    template <class F> __host__ __device__ void operator()(F f) const
    {
#ifdef __CUDA_ARCH__
        f((int)threadIdx.x);
        __syncthreads();
#else
        for (int tid = lo; tid < hi; tid++) f(tid);
#endif
    }
};

__host__ __device__ inline persist_threads persist_all(int count)
{
    return persist_threads{count, 0, count};
}

/* ---- the exchange's words ---- */

__host__ __device__ inline uint64_t persist_word(float h, uint32_t tag)
{
    uint32_t bits;
    memcpy(&bits, &h, sizeof bits);
    return (uint64_t)tag << 32 | bits;
}

__host__ __device__ inline float persist_word_h(uint64_t w)
{
    uint32_t bits = (uint32_t)w;
    float h;
    memcpy(&h, &bits, sizeof h);
    return h;
}

__host__ __device__ inline uint64_t persist_read(const uint64_t *p)
{
#ifdef __CUDA_ARCH__
    uint64_t v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return *p;
#endif
}

__host__ __device__ inline void persist_write(uint64_t *p, uint64_t v)
{
#ifdef __CUDA_ARCH__
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    *p = v;
#endif
}

/* The words of step t's h of sequence n (slot t % 2). */
__host__ __device__ inline uint64_t *persist_words(const ocd_rnn_seq &q, int t, int n)
{
    return (uint64_t *)q.exchange + ((int64_t)(t & 1) * q.step.N + n) * q.step.P;
}

/* The state slot (0 or 1) of a buffer of two: h (data [N][P]) or c (compute [N][H]). */
template <typename V> __host__ __device__ inline V *persist_slot(const void *slot0, const void *slot1, int slot)
{
    return (V *)(slot ? slot1 : slot0);
}

/* ---- the phases ---- */

/* What the phases take from the plan at step t, sequences of the chunk at n0: gates, units, rows
   of R, sequences of the chunk, the shared memory's offsets and those of the chunk's buffer
   (h, ax, seq: buffer k % 2 of the (step, chunk) numbered k when pipelined). */
struct persist_dims {
    int G, U, rows, nc;
    persist_smem m;
    size_t h, ax, seq;
};

template <typename T>
__host__ __device__ inline persist_dims persist_dims_of(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl, int t,
                                                        int n0)
{
    typedef typename ocd_compute<T>::type C;
    const ocd_rnn_step &s = q.step;
    persist_dims d;
    d.G = ocd_rnn_gates(s.mode), d.U = pl.units, d.rows = d.G * d.U;
    d.nc = s.N - n0 < pl.chunk ? s.N - n0 : pl.chunk;
    d.m = persist_smem_of(d.G, d.U, s.P, pl.chunk, s.N, sizeof(T), sizeof(C), pl.pipelined);
    const int chunks = (s.N + pl.chunk - 1) / pl.chunk;
    const size_t buf = pl.pipelined ? (size_t)(((int64_t)t * chunks + n0 / pl.chunk) & 1) : 0;
    d.h = d.m.h + buf * d.m.h_step, d.ax = d.m.ax + buf * d.m.ax_step, d.seq = d.m.seq + buf * d.m.seq_step;
    return d;
}

/* Thread tid's part of block b's rows of R (data [G U][P]) into w, BATCH loads in flight at once
   (each gate's U rows lie contiguous in R: [g H + b U][P]; zero past H). */
template <int BATCH, typename T>
__host__ __device__ inline void persist_load_rows(const T *r, int G, int H, int P, int U, int b, T *w, int tid,
                                                  int threads)
{
    const int UP = U * P, count = G * UP, valid = (H - b * U < U ? H - b * U : U) * P; /* shared memory: int */
    T zero;
    ocd_cuda_store(&zero, 0.0f);
    for (int e0 = tid; e0 < count; e0 += threads * BATCH) {
        T v[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; k++) {
            const int e = e0 + k * threads, i = e % UP;
            if (e < count) v[k] = i < valid ? r[((int64_t)(e / UP) * H + b * U) * P + i] : zero;
        }
#pragma unroll
        for (int k = 0; k < BATCH; k++)
            if (e0 + k * threads < count) w[e0 + k * threads] = v[k];
    }
}

/* Block b's prologue: its rows of R and its b_R into shared memory (pipelined: also b_W and the
   lengths, and the rows PERSIST_ROW_LOADS loads of a thread at once), its cells (from state
   slot 0), and its words of both slots cleared. */
template <typename T>
__host__ __device__ void persist_prologue(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl, int b,
                                          unsigned char *smem, persist_threads each)
{
    typedef typename ocd_compute<T>::type C;
    const ocd_rnn_step &s = q.step;
    const persist_dims d = persist_dims_of<T>(q, pl, 0, 0);
    const int G = d.G, H = s.H, P = s.P, U = d.U;
    const persist_smem &m = d.m;
    const T *r = (const T *)q.r;
    T *w = (T *)smem;
    C *br = (C *)(smem + m.br), *bw = (C *)(smem + m.bw), *cell = (C *)(smem + m.cell);
    int32_t *len = (int32_t *)(smem + m.len);
    each([&](int tid) {
        if (pl.pipelined) persist_load_rows<PERSIST_ROW_LOADS>(r, G, H, P, U, b, w, tid, pl.threads);
        else persist_load_rows<1>(r, G, H, P, U, b, w, tid, pl.threads);
        for (int i = tid; i < G * U; i += pl.threads) {
            int j = b * U + i % U;
            br[i] = j < H ? load_bias<T, C>(s.br[i / U], j) : (C)0;
            if (pl.pipelined) bw[i] = j < H ? load_bias<T, C>(s.bw[i / U], j) : (C)0;
        }
        for (int i = tid; i < s.N * U; i += pl.threads) {
            int n = i / U, j = b * U + i % U;
            if (pl.pipelined && i % U == 0) len[n] = s.lengths[n];
            if (j >= H) continue;
            cell[i] = s.mode != CUDNN_LSTM ? (C)0
                      : !pl.pipelined  ? ((const C *)s.cprev)[(int64_t)n * H + j]
                      : q.cx           ? (C)ocd_cuda_load((const T *)q.cx + (int64_t)n * H + j)
                                       : (C)0;
            for (int slot = 0; slot < 2; slot++) persist_write(persist_words(q, slot, n) + j, 0);
        }
    });
}

/* Thread tid's part of staging h_{t-1} of sequences [n0, n0 + nc) into h (compute [nc][P]): at
   step 0 from hx (data type [N][P]: state slot 0 in the first form, the call's in the pipelined
   one; NULL: zero); else its words of the exchange, PERSIST_POLL at once, each batch loaded
   whole, then polled again until every tag reads t. On the host false as soon as a word is not
   yet published. */
template <typename T, typename C>
__host__ __device__ inline bool persist_stage_h(const ocd_rnn_seq &q, const T *hx, int t, int n0, int nc, C *h,
                                                int tid, int threads)
{
    const ocd_rnn_step &s = q.step;
    const int words = nc * s.P;
    if (t == 0) {
        for (int i = tid; i < words; i += threads) h[i] = hx ? (C)ocd_cuda_load(hx + (int64_t)n0 * s.P + i) : (C)0;
        return true;
    }
    const uint64_t *src = persist_words(q, t - 1, n0);
    for (int i0 = tid; i0 < words; i0 += threads * PERSIST_POLL) {
        uint64_t v[PERSIST_POLL];
        bool waiting;
        do {
            waiting = false;
#pragma unroll
            for (int k = 0; k < PERSIST_POLL; k++)
                if (i0 + k * threads < words) v[k] = persist_read(src + i0 + k * threads);
#pragma unroll
            for (int k = 0; k < PERSIST_POLL; k++)
                if (i0 + k * threads < words && (uint32_t)(v[k] >> 32) != (uint32_t)t) waiting = true;
#ifndef __CUDA_ARCH__
            if (waiting) return false;
#endif
        } while (waiting);
        for (int k = 0; k < PERSIST_POLL; k++)
            if (i0 + k * threads < words) h[i0 + k * threads] = persist_word_h(v[k]);
    }
    return true;
}

/* Step t of block b, sequences [n0, n0 + chunk): the stage of the first form. On the device
   each thread waits for its words; on the host false when a word of h_{t-1} is not yet published
   (the phase is then run again: it writes only shared memory). */
template <typename T>
__host__ __device__ bool persist_stage(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl, int b, int t, int n0,
                                       unsigned char *smem, persist_threads each)
{
    typedef typename ocd_compute<T>::type C;
    const ocd_rnn_step &s = q.step;
    const persist_dims d = persist_dims_of<T>(q, pl, t, n0);
    const int G = d.G, H = s.H, U = d.U, rows = d.rows, nc = d.nc;
    C *h = (C *)(smem + d.h), *ax = (C *)(smem + d.ax);
    persist_seq_at *seq = (persist_seq_at *)(smem + d.seq);
    bool ready = true;
    each([&](int tid) {
        for (int i = tid; i < nc * U; i += pl.threads) {
            int u = i % U, nl = i / U, n = n0 + nl, j = b * U + u;
            persist_seq_at a = persist_seq_of(s, t, n, s.lengths[n]);
            if (u == 0) seq[nl] = a;
            if (a.on && j < H)
                for (int g = 0; g < G; g++) ax[nl * rows + g * U + u] = gate_input<T>(s, a.pos, g, j);
        }
        if (!persist_stage_h(q, (const T *)s.hprev, t, n0, nc, h, tid, pl.threads)) ready = false;
    });
    return ready;
}

/* The stage of the pipelined form: thread tid's gate inputs e = tid + k threads (k <
   PERSIST_INPUTS; e = nl G U + g U + u) loaded into registers (positions from the lengths in
   shared memory), then its words of h_{t-1} polled, then both stored (the inputs with b_W, and
   the sequences by the threads of their first input). d: persist_dims_of (t, n0), which the
   caller computes once for the stage and the units. On the host false, with neither inputs nor
   sequences stored, when a word is not yet published. */
template <typename T>
__host__ __device__ bool persist_stage_pipelined(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl,
                                                 const persist_dims &d, int b, int t, int n0, unsigned char *smem,
                                                 persist_threads each)
{
    typedef typename ocd_compute<T>::type C;
    const ocd_rnn_step &s = q.step;
    const int H = s.H, U = d.U, rows = d.rows, nc = d.nc, GH = d.G * H;
    C *h = (C *)(smem + d.h), *ax = (C *)(smem + d.ax);
    const C *bw = (const C *)(smem + d.m.bw);
    const int32_t *len = (const int32_t *)(smem + d.m.len);
    persist_seq_at *seq = (persist_seq_at *)(smem + d.seq);
    bool ready = true;
    each([&](int tid) {
        C in_gx[PERSIST_INPUTS] = {};
        T in_x[PERSIST_INPUTS] = {};
        persist_seq_at in_seq[PERSIST_INPUTS];
#pragma unroll
        for (int k = 0; k < PERSIST_INPUTS; k++) { /* constant indices: registers */
            const int e = tid + k * pl.threads, nl = e / rows, r = e % rows, j = b * U + r % U;
            in_seq[k].on = 0;
            if (e >= nc * rows) continue;
            in_seq[k] = persist_seq_of(s, t, n0 + nl, len[n0 + nl]);
            if (!in_seq[k].on || j >= H) continue;
            if (s.gx) in_gx[k] = ((const C *)s.gx)[in_seq[k].pos * GH + r / U * H + j];
            else in_x[k] = ((const T *)s.x)[in_seq[k].pos * s.x_stride + j];
        }
        /* nothing above waits for a load's value: the loads are in flight while the thread polls */
        if (!persist_stage_h(q, (const T *)q.hx, t, n0, nc, h, tid, pl.threads)) {
            ready = false;
            return;
        }
#pragma unroll
        for (int k = 0; k < PERSIST_INPUTS; k++) {
            const int e = tid + k * pl.threads, nl = e / rows, r = e % rows;
            if (e >= nc * rows) continue;
            if (r == 0) seq[nl] = in_seq[k];
            if (in_seq[k].on && b * U + r % U < H)
                ax[e] = (s.gx ? in_gx[k] : (C)ocd_cuda_load(in_x + k)) + bw[r];
        }
    });
    return ready;
}

/* One lane's part of G products at once: row g at w + g gate_stride times h, the lane's columns
   in groups of V (columns V lane + 32 V k + e, e < V: P a multiple of V), into sum[g] (each
   summed in column order). V = 2 reads two weights and two states an access: for 16-bit data a
   warp's access then fills a shared-memory wavefront (128 bytes) instead of half of one. */
template <int V, typename T>
__host__ __device__ inline void persist_lane_dots(const T *w, int64_t gate_stride, int G, const float *h, int P, int lane,
                                                  float *sum)
{
    float acc[4] = {0, 0, 0, 0};
#pragma unroll 4
    for (int c = V * lane; c < P; c += V * PERSIST_WARP) {
        const ocd_vec<float, V> hc = *(const ocd_vec<float, V> *)(h + c);
#pragma unroll
        for (int g = 0; g < 4; g++)
            if (g < G) {
                const ocd_vec<T, V> x = *(const ocd_vec<T, V> *)(w + g * gate_stride + c);
#pragma unroll
                for (int e = 0; e < V; e++) acc[g] += (float)ocd_cuda_load(x.v + e) * hc.v[e];
            }
    }
#pragma unroll
    for (int g = 0; g < 4; g++) /* constant indices: registers */
        if (g < G) sum[g] = acc[g];
}

#ifndef __CUDA_ARCH__
/* The warp's butterfly of shuffles on the host: the lanes' sums v[32] added as lane 0 ends with
   them ((l0 + l16) + (l8 + l24) ...). */
inline float persist_butterfly(float *v)
{
    float sum[PERSIST_WARP];
    for (int off = PERSIST_WARP / 2; off > 0; off /= 2) {
        for (int lane = 0; lane < PERSIST_WARP; lane++) sum[lane] = v[lane] + v[lane ^ off];
        memcpy(v, sum, sizeof sum);
    }
    return v[0];
}
#endif

/* The dots of the first form: product d = nl G U + row of the chunk's nc sequences by warp
   d % warps; the lanes' sums added by a butterfly. */
template <typename T>
__host__ __device__ void persist_dots(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl, int t, int n0,
                                      unsigned char *smem)
{
    typedef typename ocd_compute<T>::type C;
    const persist_dims k = persist_dims_of<T>(q, pl, t, n0);
    const int P = q.step.P, rows = k.rows, dots = k.nc * rows;
    const T *w = (const T *)smem;
    const C *h = (const C *)(smem + k.h);
    C *rec = (C *)(smem + k.m.rec);
#ifdef __CUDA_ARCH__
    const int lane = (int)threadIdx.x % PERSIST_WARP;
    for (int d = (int)threadIdx.x / PERSIST_WARP; d < dots; d += pl.threads / PERSIST_WARP) {
        float v;
        persist_lane_dots<1>(w + (int64_t)(d % rows) * P, 0, 1, h + (int64_t)(d / rows) * P, P, lane, &v);
        for (int off = PERSIST_WARP / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == 0) rec[d] = v;
    }
    __syncthreads();
#else
    for (int d = 0; d < dots; d++) {
        float v[PERSIST_WARP];
        for (int lane = 0; lane < PERSIST_WARP; lane++)
            persist_lane_dots<1>(w + (int64_t)(d % rows) * P, 0, 1, h + (int64_t)(d / rows) * P, P, lane, &v[lane]);
        rec[d] = persist_butterfly(v);
    }
#endif
}

/* The cell of unit j (owned as u) of sequence n at step t: x[g] W x + b_W, ah[g] R h + b_R, hn
   h_{t-1} of the unit; the new cell to *cell, y, its h word of slot t % 2, at the last step the
   final states (the first form: to state slot T % 2, h in the data type, c in the compute type;
   the pipelined one: to hy and cy where given, both in the data type). */
template <typename T>
__host__ __device__ inline void persist_cell(const ocd_rnn_seq &q, bool pipelined, int t, int n, int j,
                                             const persist_seq_at &a,
                                             const typename ocd_compute<T>::type *x,
                                             const typename ocd_compute<T>::type *ah, typename ocd_compute<T>::type *cell,
                                             typename ocd_compute<T>::type hn)
{
    typedef typename ocd_compute<T>::type C;
    const ocd_rnn_step &s = q.step;
    const int H = s.H, P = s.P;
    C c = *cell;
    if (a.on) {
        C saved[5];
        ocd_rnn_cell_fwd<C>(s.mode, x, ah, c, hn, s.clip, (C)s.lclip, (C)s.rclip, s.clip_nan, a.last, saved, &c, &hn);
        ocd_cuda_store((T *)s.y + a.pos * s.y_stride + (int64_t)s.dir * P + j, hn);
    }
    *cell = c;
    persist_write(persist_words(q, t, n) + j, persist_word(hn, (uint32_t)t + 1));
    if (t == s.T - 1 && !pipelined) {
        ocd_cuda_store(persist_slot<T>(s.hprev, s.hnext, s.T & 1) + (int64_t)n * P + j, hn);
        if (s.mode == CUDNN_LSTM) persist_slot<C>(s.cprev, s.cnext, s.T & 1)[(int64_t)n * H + j] = c;
    }
    if (t == s.T - 1 && pipelined) {
        if (q.hy) ocd_cuda_store((T *)q.hy + (int64_t)n * P + j, hn);
        if (q.cy && s.mode == CUDNN_LSTM) ocd_cuda_store((T *)q.cy + (int64_t)n * H + j, c);
    }
}

/* The cells of the first form at step t of block b, sequences [n0, n0 + chunk). */
template <typename T>
__host__ __device__ void persist_cells(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl, int b, int t, int n0,
                                       unsigned char *smem, persist_threads each)
{
    typedef typename ocd_compute<T>::type C;
    const persist_dims d = persist_dims_of<T>(q, pl, t, n0);
    const int P = q.step.P, U = d.U, rows = d.rows;
    const C *h = (const C *)(smem + d.h), *rec = (const C *)(smem + d.m.rec), *ax = (const C *)(smem + d.ax),
            *br = (const C *)(smem + d.m.br);
    C *cell = (C *)(smem + d.m.cell);
    const persist_seq_at *seq = (const persist_seq_at *)(smem + d.seq);
    each([&](int tid) {
        for (int i = tid; i < d.nc * U; i += pl.threads) {
            int u = i % U, nl = i / U, j = b * U + u;
            if (j >= q.step.H) continue;
            C x[4], ah[4];
#pragma unroll
            for (int g = 0; g < 4; g++) /* constant indices: registers */
                if (g < d.G) {
                    x[g] = ax[nl * rows + g * U + u];
                    ah[g] = rec[nl * rows + g * U + u] + br[g * U + u];
                }
            persist_cell<T>(q, false, t, n0 + nl, j, seq[nl], x, ah, cell + (n0 + nl) * U + u, h[nl * P + j]);
        }
    });
}

/* Which units of a chunk a call of persist_units runs: on the device the calling warp's, i =
   warp + k warps from the first, lo = warp (u0 = lo % U, nl0 = lo / U), stepping u by du and
   nl by dnl (warps = dnl U + du); computed once a kernel, so that a step divides nothing. On the
   host units [lo, hi). */
struct persist_unit_range {
    int lo, hi, u0, nl0, du, dnl;
};

__host__ __device__ inline persist_unit_range persist_warp_units(const ocd_rnn_persist_plan &pl, int warp)
{
    const int warps = pl.threads / PERSIST_WARP, U = pl.units;
    return persist_unit_range{warp, 0, warp % U, warp / U, warps % U, warps / U};
}

/* The warp's next unit (i + warps) from unit (u, nl) of i: u += du, nl += dnl, carried once. */
__host__ __device__ inline void persist_next_unit(const persist_unit_range &r, int U, int *u, int *nl)
{
    *u += r.du, *nl += r.dnl;
    if (*u >= U) *u -= U, ++*nl;
}

/* The units of the pipelined form at step t of block b, sequences [n0, n0 + chunk): unit
   i = nl U + u by warp i % warps, its G products (persist_lane_dots, two columns an access
   where P is even; a butterfly each) and its cell by lane 0, whose other operands every lane
   reads before the products. No block barrier after it. What follows the stage's barrier
   computes no division: d comes from the caller and the warp's units from r. */
template <typename T>
__host__ __device__ void persist_units(const ocd_rnn_seq &q, const ocd_rnn_persist_plan &pl, const persist_dims &d,
                                       int b, int t, int n0, unsigned char *smem, const persist_unit_range &r)
{
    typedef typename ocd_compute<T>::type C;
    const int G = d.G, P = q.step.P, U = d.U, rows = d.rows, units = d.nc * U;
    const T *w = (const T *)smem;
    const C *h = (const C *)(smem + d.h), *ax = (const C *)(smem + d.ax), *br = (const C *)(smem + d.m.br);
    C *cell = (C *)(smem + d.m.cell);
    const persist_seq_at *seq = (const persist_seq_at *)(smem + d.seq);
    /* what the cell of unit u of sequence nl of the chunk takes besides its products, read
       before them; the cell itself only where `runs` (lane 0, which alone writes it back: no
       other lane's read to order before that write) */
    struct operands {
        C x[4], br[4], c, hn;
        persist_seq_at a;
    };
    auto operands_of = [&](int u, int nl, bool runs) {
        operands o;
#pragma unroll
        for (int g = 0; g < 4; g++) /* constant indices: registers */
            if (g < G) o.x[g] = ax[nl * rows + g * U + u], o.br[g] = br[g * U + u];
        o.c = runs ? cell[(n0 + nl) * U + u] : (C)0, o.hn = h[nl * P + b * U + u], o.a = seq[nl];
        return o;
    };
    /* a lane's part of the unit's products: pairs of columns an access where P is even */
    auto lane_dots = [&](int u, int nl, int lane, float *sum) {
        const T *wu = w + (int64_t)u * P;
        const float *hs = h + (int64_t)nl * P;
        if (P % 2 == 0) persist_lane_dots<2>(wu, (int64_t)U * P, G, hs, P, lane, sum);
        else persist_lane_dots<1>(wu, (int64_t)U * P, G, hs, P, lane, sum);
    };
    /* the cell of the unit from its products v[g] */
    auto cell_of = [&](int u, int nl, operands &o, const float *v) {
        C ah[4];
#pragma unroll
        for (int g = 0; g < 4; g++)
            if (g < G) ah[g] = v[g] + o.br[g];
        persist_cell<T>(q, true, t, n0 + nl, b * U + u, o.a, o.x, ah, &o.c, o.hn);
        cell[(n0 + nl) * U + u] = o.c;
    };
#ifdef __CUDA_ARCH__
    const int lane = (int)threadIdx.x % PERSIST_WARP, warps = pl.threads / PERSIST_WARP;
    for (int i = r.lo, u = r.u0, nl = r.nl0; i < units; i += warps, persist_next_unit(r, U, &u, &nl)) {
        if (b * U + u >= q.step.H) continue; /* the warp's unit: the whole warp skips */
        operands o = operands_of(u, nl, lane == 0); /* broadcasts, in flight during the products */
        float v[4] = {0, 0, 0, 0};
        lane_dots(u, nl, lane, v);
        for (int off = PERSIST_WARP / 2; off > 0; off /= 2)
#pragma unroll
            for (int g = 0; g < 4; g++) /* four butterflies interleaved, without branches (zero past G) */
                v[g] += __shfl_xor_sync(0xffffffffu, v[g], off);
        if (lane == 0) cell_of(u, nl, o, v);
    }
#else
    for (int i = r.lo; i < r.hi && i < units; i++) {
        const int u = i % U, nl = i / U;
        if (b * U + u >= q.step.H) continue;
        float lanes[4][PERSIST_WARP], v[4];
        for (int lane = 0; lane < PERSIST_WARP; lane++) {
            float sum[4];
            lane_dots(u, nl, lane, sum);
            for (int g = 0; g < G; g++) lanes[g][lane] = sum[g];
        }
        for (int g = 0; g < G; g++) v[g] = persist_butterfly(lanes[g]);
        operands o = operands_of(u, nl, true);
        cell_of(u, nl, o, v);
    }
#endif
}

template <typename T, bool PIPELINED>
__global__ void __launch_bounds__(PERSIST_THREADS) persist_kernel(const ocd_rnn_seq q, const ocd_rnn_persist_plan pl)
{
    extern __shared__ __align__(16) unsigned char persist_shared[];
    const persist_threads each = persist_all(pl.threads);
    const int b = (int)blockIdx.x;
    const persist_unit_range units = persist_warp_units(pl, (int)threadIdx.x / PERSIST_WARP);
    persist_prologue<T>(q, pl, b, persist_shared, each);
    cooperative_groups::this_grid().sync();
    for (int t = 0; t < q.step.T; t++)
        for (int n0 = 0; n0 < q.step.N; n0 += pl.chunk) {
            if (PIPELINED) {
                const persist_dims d = persist_dims_of<T>(q, pl, t, n0);
                persist_stage_pipelined<T>(q, pl, d, b, t, n0, persist_shared, each);
                persist_units<T>(q, pl, d, b, t, n0, persist_shared, units);
            } else {
                persist_stage<T>(q, pl, b, t, n0, persist_shared, each);
                persist_dots<T>(q, pl, t, n0, persist_shared);
                persist_cells<T>(q, pl, b, t, n0, persist_shared, each);
            }
        }
}

typedef void (*persist_fn)(const ocd_rnn_seq, const ocd_rnn_persist_plan);

/* The kernel of a data type and form; NULL for double (refused: its weights take twice the
   shared memory, and PERSIST_DYNAMIC's double runs the step loop). */
persist_fn persist_kernel_of(cudnnDataType_t t, bool pipelined)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: return pipelined ? persist_kernel<float, true> : persist_kernel<float, false>;
    case CUDNN_DATA_HALF: return pipelined ? persist_kernel<__half, true> : persist_kernel<__half, false>;
    case CUDNN_DATA_BFLOAT16:
        return pipelined ? persist_kernel<__nv_bfloat16, true> : persist_kernel<__nv_bfloat16, false>;
    default: return NULL;
    }
}

} // namespace

extern "C" const char *ocd_cuda_rnn_persist_plan(cudnnHandle_t handle, const ocd_rnn_seq *q, bool pipelined,
                                                 ocd_rnn_persist_plan *plan)
{
    persist_fn kernel = persist_kernel_of(q->step.dtype, pipelined);
    if (kernel == NULL) return OCD_REASON_DTYPE;
    int coop = 0, optin = 0, per_sm = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, handle->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, handle->device) != cudaSuccess) {
        (void)cudaGetLastError(); /* not a launch's error */
        return "the device's attributes cannot be read";
    }
    if (!coop) return "the device takes no cooperative launch";
    if ((uintptr_t)q->exchange % sizeof(uint64_t) != 0) return OCD_REASON_ALIGNMENT; /* the exchange's words */
    const ocd_rnn_step &s = q->step;
    if ((int64_t)s.N * ocd_rnn_gates(s.mode) * s.H * s.P > PERSIST_WORK_MAX)
        return "the recurrent product of a step is large enough for the step loop's GEMM to be faster";
    const char *why = persist_shape(s, ocd_dtype_scalar_size(s.dtype), sizeof(float), handle->sm_count, (size_t)optin,
                                    pipelined, plan);
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
    OCD_CUDA_TRY(cudaLaunchCooperativeKernel((const void *)persist_kernel_of(q->step.dtype, plan->pipelined != 0), dim3((unsigned)plan->blocks),
                                             dim3((unsigned)plan->threads), args, plan->smem, handle->stream));
    return CUDNN_STATUS_SUCCESS;
}
