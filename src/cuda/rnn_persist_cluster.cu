/* rnn_persist_cluster.cu: the persistent recurrence of RNN inference in one thread-block cluster
   (sm_90; ocd_cuda_rnn_cluster, problem/rnn_kernels.h): the recurrent weights held in registers
   as tensor-core fragments, h passed from block to block through the cluster's shared memory,
   one mbarrier wait and two block barriers a step. It serves before the cooperative kernel of
   cuda/rnn_persist.cu where a cluster holds the weights: 16-bit data, small batches, hidden
   sizes up to about 512 for LSTM. Every phase is __host__ __device__ or has its per-lane
   addressing in __host__ __device__ helpers, so that tests/emulate/rnn_persist_cluster.cu runs
   every block, warp and thread on the CPU.

   Why a cluster. The cooperative kernel passes h through L2 (tagged words that the readers
   poll), and a step costs about 2.2 us at batch 1, hidden 512 on an H100 (bench: t64 - t16 over
   48 steps), most of it the L2 round trip of the exchange and the products on CUDA cores from
   shared memory. Within a cluster a block stores into its peers' shared memory directly
   (st.async, which completes its bytes on the peer's mbarrier), a few hundred cycles from store
   to the waiter's wake-up, and 16 blocks of 512 threads hold the 2 MB of an fp16 LSTM of hidden
   512 in their registers (64 a thread), so a step's products are 16 tensor-core mma a warp.

   The geometry (cluster_geom_of). Block b owns U units (a multiple of 8: the blocks pass h in
   16-byte pieces of 8 units) and the G U rows of R of their gates, row g U + u holding gate g
   of unit b U + u (zero past H and past G U up to 16-row tiles). Its 16 warps split those rows into `mt` tiles of 16
   and each tile's K (P = H columns in 16-column tiles) into `splits` slices of at most
   CLUSTER_KPER tiles; warp w takes tile w % mt, slice w / mt and holds that slice's A fragments
   (mma.m16n8k16, row-major) in registers for the whole sequence. h_{t-1} lies in shared memory
   as the B operand, [np][hs] in the data type (np = N rounded up to 8, the mma's n; each row
   padded by 8 elements, so that a fragment's 8 rows fall in different banks; the columns past P
   and the rows past N stay zero). The products of a step: per 8-sequence tile, each warp's
   slice into two accumulators (alternate k tiles, so that consecutive mma do not wait on each
   other), their sum to the partial sums [splits][np][ps] (ps = mt 16 + 4: a warp's stores fall
   in different banks), two buffers alternating by step.

   A step t (the kernel's loop):
     prefetch  each cell thread (thread i < N U: sequence i / U, unit i % U) loads its gate
               inputs W x + b_W (position from its length), not waiting for them;
     wait      every thread waits for the phase of h_{t-1} on the mbarrier of its slot (t-1) % 2
               (step 0 reads hx, staged by the prologue into slot 1); thread 0 then announces
               the bytes of h_{t+1}, which reuse that barrier;
     products  the warps' mma into the partial sums of buffer t % 2; a block barrier;
     cells     each cell thread sums its G gates' partial sums, adds b_R, runs ocd_rnn_cell_fwd,
               writes y (and hy, cy at the last step) and stages h, rounded to the data type (as
               the step loop's next GEMM reads it), in the block's row [N][U] (zero past H);
     stores    unless t is the last step, a block barrier, then the block's threads store its
               staged h into slot t % 2 of every block of the cluster, this one included, 16
               bytes (8 units) a store (st.async), each completing its bytes on that block's
               barrier, which expects N ceil(H / 8) 16 bytes a phase. A piece a store rather
               than a unit: every store's completion updates the one mbarrier word of its
               phase, one after another, so the fewer the better.
   Why no other barrier is needed. A block stores h_t into slot t % 2 of a peer only after it
   has seen h_{t-1} of every block, the peer's included, and the peer published its h_{t-1} only
   after its products of step t-1 (the block barrier before its cells), the last reads of h_{t-2}
   in that slot. The partial sums of buffer t % 2 are read by the cells of step t and written
   next by the products of step t + 2, with the block barrier of step t + 1 between; the staged
   h is read by the stores of step t and written next by the cells of step t + 1, after its
   first barrier. A barrier's
   bytes of h_{t+1} are announced after its phase of h_{t-1} completed and before this block
   publishes h_t, so before any peer can store h_{t+1}. The blocks synchronise as a cluster once
   after the prologue (barriers initialized, h buffers cleared and hx staged in every block
   before any peer stores into them) and once before they exit (no store into a block that has
   exited: the last step publishes nothing).

   The blocks of a cluster are at least two: st.async needs a peer (compute-sanitizer's memcheck
   faults it in a cluster of one block). Where one block holds every unit, the second owns none
   and idles from the prologue to the last cluster barrier: no store goes to it and it waits for
   none (a block that waited for no bytes of its own could not keep the steps' causality).

   The cost model of a step (LSTM, H = 512, batch 1: 16 blocks of 32 units): the wait, an
   st.async's trip to the peer (hundreds of cycles); 16 mma a warp (8 a chain); the block
   barrier; a cell's partial sums (2 G loads), its sigmoids and tanh; the second barrier and 64
   stores a block (one a thread), 64 completions on each block's barrier. */
#include "core/reasons.h"
#include "cuda/bulk.cuh"
#include "cuda/check.cuh"
#include "cuda/launch.cuh"
#include "cuda/mma.cuh"
#include "cuda/rnn_unit.cuh"

#include <cstring>

namespace {

constexpr int CLUSTER_THREADS = 512;
constexpr int CLUSTER_WARP = 32;
constexpr int CLUSTER_WARPS = CLUSTER_THREADS / CLUSTER_WARP;
constexpr int CLUSTER_KPER = 16;   /* k tiles of A a warp holds: 64 registers a thread */
constexpr int CLUSTER_BATCH = 16;  /* the most sequences: two n tiles of the mma */
constexpr int CLUSTER_CTAS = 16;   /* the largest cluster (non-portable above 8) */

/* What the phases take from the shapes and the plan: gates, units of a block, blocks with units
   (the rest of the cluster idle), rows of R; m tiles, K slices (warps a tile), k tiles of P, k
   tiles of a slice; the h buffers' rows and row stride (elements), the partial sums' row stride
   (floats); the stores of a block's h a step; the shared memory's offsets (h buffers, two;
   partial sums, two; b_W and b_R of the rows, float; the staged h of the block's units, [N][U]
   in the data type; the stores' table, one cluster_store each; the two mbarriers) and total.
   Computed on the host and passed as a __grid_constant__ parameter: the kernel reads it from
   the constant bank, no registers held across the steps. */
struct cluster_geom {
    int G, U, blocks, rows, mt, splits, kt, kper, np, hs, ps, stores;
    int h, h_slot, part, part_buf, bias, stage, table, bar, total; /* 32 bits: fewer registers */
};

/* A store of a block's staged h (cluster_store_of): the piece at byte src of its shared memory
   into the block of rank `rank` at byte dst of slot 0 (+ h_slot for slot 1); rank -1: none. */
struct cluster_store {
    int src, dst, rank, pad; /* 16 bytes: one shared-memory load */
};

__host__ __device__ inline int cluster_align(int bytes)
{
    return (bytes + 15) / 16 * 16;
}

__host__ __device__ inline cluster_geom cluster_geom_of(const ocd_rnn_step &s, int units)
{
    cluster_geom g;
    g.G = ocd_rnn_gates(s.mode), g.U = units, g.blocks = (s.H + units - 1) / units, g.rows = g.G * units;
    g.mt = (g.rows + 15) / 16;
    g.splits = g.mt <= CLUSTER_WARPS ? CLUSTER_WARPS / g.mt : 1;
    g.kt = (s.P + 15) / 16;
    g.kper = (g.kt + g.splits - 1) / g.splits;
    g.np = (s.N + 7) / 8 * 8;
    g.hs = g.kt * 16 + 8, g.ps = g.mt * 16 + 4;
    g.stores = s.N * (units / 8) * g.blocks; /* N rows of U / 8 pieces, to every block with units */
    g.h = 0, g.h_slot = cluster_align(g.np * g.hs * 2);
    g.part = g.h + 2 * g.h_slot, g.part_buf = cluster_align(g.splits * g.np * g.ps * (int)sizeof(float));
    g.bias = g.part + 2 * g.part_buf;
    g.stage = g.bias + cluster_align(2 * g.rows * (int)sizeof(float));
    g.table = g.stage + cluster_align(s.N * units * 2);
    g.bar = g.table + g.stores * (int)sizeof(cluster_store);
    g.total = g.bar + 2 * (int)sizeof(uint64_t);
    return g;
}

/* The bytes of one step's h that every block receives: N rows of ceil(H / 8) pieces of 16. */
__host__ __device__ inline unsigned cluster_phase_bytes(const ocd_rnn_step &s)
{
    return (unsigned)(s.N * ((s.H + 7) / 8) * 16);
}

/* The launch for s on a device whose blocks take up to smem_max bytes: the smallest cluster
   (two blocks or more) whose blocks hold their units' rows in the warps' fragments, their cells
   in the threads and their buffers in shared memory. NULL, or why none does. */
const char *cluster_shape(const ocd_rnn_step &s, size_t smem_max, ocd_rnn_cluster_plan *pl)
{
    if (s.P != s.H) return "a state size other than the hidden size";
    if (s.H % 2 != 0) return "an odd hidden size (the fragments take rows of R two elements at a time)";
    if (s.N > CLUSTER_BATCH) return "a batch above 16 (the cluster form's two mma tiles of sequences)";
    for (int c = 2; c <= CLUSTER_CTAS; c++) {
        const int units = ((s.H + c - 1) / c + 7) / 8 * 8;
        const cluster_geom g = cluster_geom_of(s, units);
        if (g.mt > CLUSTER_WARPS || g.kper > CLUSTER_KPER || s.N * units > CLUSTER_THREADS || (size_t)g.total > smem_max)
            continue;
        pl->units = units, pl->ctas = g.blocks, pl->smem = (size_t)g.total;
        if (pl->ctas < 2) pl->ctas = 2;
        return NULL;
    }
    return "the recurrent weights exceed the registers of a cluster of 16 blocks";
}

/* ---- the operands' fragments (mma.m16n8k16: lane = 4 gid + tig) ---- */

/* Two 16-bit elements at p (4-byte aligned) as one register: one 4-byte load (memcpy from a
   16-bit pointer compiles to four byte loads and three byte permutes on the device). */
template <typename T> __host__ __device__ __forceinline__ uint32_t cluster_pair(const T *p)
{
#ifdef __CUDA_ARCH__
    return *(const uint32_t *)p;
#else
    OCD_EMULATED_ALIGNED(p, 4);
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
}

/* The B fragment of n tile nt, k tile kt for lane from the h buffer h ([np][hs]): column (the
   sequence) nt 8 + gid, rows (k) kt 16 + 2 tig and + 8, two elements each. */
template <typename T>
__host__ __device__ inline void cluster_b_frag(const T *h, const cluster_geom &g, int nt, int kt, int lane,
                                               uint32_t b[2])
{
    const T *p = h + (int64_t)(nt * 8 + lane / 4) * g.hs + kt * 16 + 2 * (lane % 4);
    b[0] = cluster_pair(p);
    b[1] = cluster_pair(p + 8);
}

/* The accumulators d of m tile mi, slice si, n tile nt, for lane, into the partial sums part
   ([splits][np][ps]): d[e] is row mi 16 + gid (+ 8 for e >= 2), sequence nt 8 + 2 tig + e % 2. */
__host__ __device__ inline void cluster_part_store(float *part, const cluster_geom &g, int mi, int si, int nt,
                                                   int lane, const float d[4])
{
    for (int e = 0; e < 4; e++)
        part[((int64_t)si * g.np + nt * 8 + 2 * (lane % 4) + e % 2) * g.ps + mi * 16 + lane / 4 + 8 * (e / 2)] = d[e];
}

template <typename T> __host__ __device__ inline T *cluster_h(unsigned char *smem, const cluster_geom &g, int slot)
{
    return (T *)(smem + g.h + slot * g.h_slot);
}

__host__ __device__ inline float *cluster_part(unsigned char *smem, const cluster_geom &g, int buf)
{
    return (float *)(smem + g.part + buf * g.part_buf);
}

/* ---- a thread's state ---- */

/* What a thread keeps in registers for the whole sequence: its warp's A fragments; as a cell
   thread (thread n U + u of the block: sequence n, unit u) its sequence, its unit's index u and
   its index j in H (-1: no cell, past N U or past H), its sequence's length, its cell, h_{t-1}
   of its unit, and the step's W x and position (prefetched). Computed once, so that a step
   divides nothing. */
struct cluster_thread {
    uint32_t a[CLUSTER_KPER][4];
    float c, hn, x[4];
    int n, u, j, len;
    persist_seq_at at;
};

/* Store i of block b (i < g.stores; the ranks vary fastest, so that a warp's stores spread over
   the blocks with units): the piece at byte *src of the block's shared memory (its staged h)
   into the block of rank *rank at byte *dst of slot 0. false for a piece past H (none of its
   units exists). */
__host__ __device__ inline bool cluster_store_of(const ocd_rnn_step &s, const cluster_geom &g, int b, int i, int *src,
                                                 int *dst, int *rank)
{
    const int pieces = g.U / 8, piece = i / g.blocks % pieces, n = i / g.blocks / pieces, u = 8 * piece;
    *rank = i % g.blocks;
    *src = g.stage + (n * g.U + u) * 2;
    *dst = g.h + (n * g.hs + b * g.U + u) * 2;
    return b * g.U + u < s.H;
}

/* ---- the phases ---- */

/* Thread tid's part of block b's shared memory: both h buffers cleared, hx (data [N][P], NULL:
   zero) staged into slot 1, where step 0 reads h_{-1}, b_W and b_R of the block's rows, its
   staged h cleared (the units past H stay zero: their pieces land in the columns past P), and
   the stores' table. */
template <typename T>
__host__ __device__ void cluster_stage(const ocd_rnn_seq &q, const cluster_geom &g, int b, int tid, int threads,
                                       unsigned char *smem)
{
    const ocd_rnn_step &s = q.step;
    const int count = g.np * g.hs;
    for (int i = tid; i < 2 * g.rows; i += threads) {
        const int row = i % g.rows, j = b * g.U + row % g.U;
        const void *bias = i < g.rows ? s.bw[row / g.U] : s.br[row / g.U];
        ((float *)(smem + g.bias))[i] = j < s.H ? load_bias<T, float>(bias, j) : 0.0f;
    }
    for (int i = tid; i < g.stores; i += threads) {
        cluster_store st = {0, 0, -1, 0};
        if (!cluster_store_of(s, g, b, i, &st.src, &st.dst, &st.rank)) st.rank = -1;
        ((cluster_store *)(smem + g.table))[i] = st;
    }
    for (int i = tid; i < s.N * g.U; i += threads) memset(smem + g.stage + i * 2, 0, 2);
    for (int i = tid; i < 2 * count; i += threads) {
        const int slot = i / count, n = i % count / g.hs, k = i % g.hs;
        T v;
        ocd_cuda_store(&v, slot == 1 && n < s.N && k < s.P && q.hx ? ocd_cuda_load((const T *)q.hx + (int64_t)n * s.P + k)
                                                                   : 0.0f);
        cluster_h<T>(smem, g, slot)[(int64_t)n * g.hs + k] = v;
    }
}

/* The A fragments of warp `warp` of block b into th->a (lane's registers; none for a warp past
   the tiles' slices): register q of k tile kt (mma.m16n8k16, lane = 4 gid + tig) holds row
   mi 16 + gid (+ 8 for q odd), columns kt 16 + 2 tig (+ 8 for q >= 2) and the next: two
   elements of block b's row of R (r: data [G H][P]; row g U + u is gate g of unit b U + u), zero
   past its gates' rows, past H and past P. A lane's two rows are found once. */
template <typename T>
__host__ __device__ void cluster_load_fragments(const ocd_rnn_seq &q, const cluster_geom &g, int b, int warp, int lane,
                                                cluster_thread *th)
{
    const ocd_rnn_step &s = q.step;
    const int mi = warp % g.mt, si = warp / g.mt;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int row = mi * 16 + lane / 4 + 8 * half, j = b * g.U + row % g.U;
        const bool valid = si < g.splits && row < g.rows && j < s.H;
        const T *r = (const T *)q.r + ((int64_t)(row / g.U) * s.H + j) * s.P;
#pragma unroll
        for (int k = 0; k < CLUSTER_KPER; k++) /* constant indices: registers */
#pragma unroll
            for (int hi = 0; hi < 2; hi++) {
                const int col = (si * g.kper + k) * 16 + 2 * (lane % 4) + 8 * hi;
                /* P even: col < P holds col + 1, and the pair is 4-byte aligned */
                th->a[k][2 * hi + half] = valid && k < g.kper && col < s.P ? cluster_pair(r + col) : 0;
            }
    }
}

/* Thread tid's cell (none past N U or past H) and its state: cx (data [N][H], NULL: zero) for
   LSTM, h_{-1} of its unit. */
template <typename T>
__host__ __device__ void cluster_cell_init(const ocd_rnn_seq &q, const cluster_geom &g, int b, int tid,
                                           cluster_thread *th)
{
    const ocd_rnn_step &s = q.step;
    th->c = th->hn = 0, th->len = 0, th->at.on = 0;
    for (int gi = 0; gi < 4; gi++) th->x[gi] = 0;
    th->n = tid / g.U, th->u = tid % g.U, th->j = b * g.U + th->u;
    if (tid >= s.N * g.U || th->j >= s.H) {
        th->j = -1;
        return;
    }
    if (s.mode == CUDNN_LSTM && q.cx) th->c = ocd_cuda_load((const T *)q.cx + (int64_t)th->n * s.H + th->j);
    if (q.hx) th->hn = ocd_cuda_load((const T *)q.hx + (int64_t)th->n * s.P + th->j);
    th->len = s.lengths[th->n];
}

/* The thread's W x of step t (a cell thread's whose sequence is active), loads issued before
   the wait for h_{t-1}: nothing waits on them until the cells. */
template <typename T>
__host__ __device__ inline void cluster_prefetch(const ocd_rnn_seq &q, const cluster_geom &g, int t, cluster_thread *th)
{
    const ocd_rnn_step &s = q.step;
    if (th->j < 0) return;
    th->at = persist_seq_of(s, t, th->n, th->len);
    if (th->at.on)
#pragma unroll
        for (int gi = 0; gi < 4; gi++)
            if (gi < g.G) th->x[gi] = gate_product<T>(s, th->at.pos, gi, th->j);
}

#ifdef __CUDA_ARCH__
/* The products of step t by warp `warp`: its slice of its m tile times h_{t-1} (slot (t + 1) %
   2), per n tile, into the partial sums of buffer t % 2. */
template <typename T>
__device__ inline void cluster_products(const cluster_geom &g, int t, int warp, int lane, unsigned char *smem,
                                        const cluster_thread &th)
{
    const int mi = warp % g.mt, si = warp / g.mt;
    if (si >= g.splits) return;
    const T *h = cluster_h<T>(smem, g, (t + 1) & 1);
    float *part = cluster_part(smem, g, t & 1);
    const int k0 = si * g.kper;
    for (int nt = 0; nt < g.np / 8; nt++) {
        float acc[2][4] = {};
#pragma unroll
        for (int k = 0; k < CLUSTER_KPER; k++)
            if (k < g.kper && k0 + k < g.kt) {
                uint32_t bf[2];
                cluster_b_frag(h, g, nt, k0 + k, lane, bf);
                ocd_mma_elem<T>::mma(acc[k & 1], th.a[k], bf);
            }
        float d[4];
#pragma unroll
        for (int e = 0; e < 4; e++) d[e] = acc[0][e] + acc[1][e];
        cluster_part_store(part, g, mi, si, nt, lane, d);
    }
}
#endif

/* The thread's cell at step t from the partial sums of buffer t % 2, W x, b_W and b_R: y where its
   sequence is active (else the states carried), at the last step hy and cy (data type; where
   given), its cell and h kept (h rounded to the data type), h staged. */
template <typename T>
__host__ __device__ inline void cluster_cell(const ocd_rnn_seq &q, const cluster_geom &g, int t, unsigned char *smem,
                                             cluster_thread *th)
{
    const ocd_rnn_step &s = q.step;
    const int n = th->n, u = th->u, j = th->j;
    if (j < 0) return;
    const float *part = cluster_part(smem, g, t & 1) + n * g.ps + u, *bias = (const float *)(smem + g.bias) + u;
    float ax[4] = {0, 0, 0, 0}, ah[4] = {0, 0, 0, 0};
#pragma unroll
    for (int gi = 0; gi < 4; gi++)
        if (gi < g.G) {
            ax[gi] = th->x[gi] + bias[gi * g.U], ah[gi] = bias[g.rows + gi * g.U];
            for (int si = 0; si < g.splits; si++) ah[gi] += part[si * g.np * g.ps + gi * g.U];
        }
    T h;
    ocd_cuda_store(&h, th->hn);
    if (th->at.on) {
        float saved[5], hn = th->hn;
        ocd_rnn_cell_fwd<float>(s.mode, ax, ah, th->c, hn, s.clip, (float)s.lclip, (float)s.rclip, s.clip_nan,
                                th->at.last, saved, &th->c, &hn);
        ocd_cuda_store(&h, hn);
        th->hn = ocd_cuda_load(&h);
        ((T *)s.y)[th->at.pos * s.y_stride + (int64_t)s.dir * s.P + j] = h;
    }
    if (t == s.T - 1 && q.hy) ((T *)q.hy)[(int64_t)n * s.P + j] = h; /* a finished sequence carried its states */
    if (t == s.T - 1 && q.cy && s.mode == CUDNN_LSTM) ocd_cuda_store((T *)q.cy + (int64_t)n * s.H + j, th->c);
    ((T *)(smem + g.stage))[n * g.U + u] = h;
}


template <typename T>
__global__ void __launch_bounds__(CLUSTER_THREADS, 1)
    cluster_kernel(const __grid_constant__ ocd_rnn_seq q, const __grid_constant__ cluster_geom g)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(16) unsigned char cluster_shared[];
    const ocd_rnn_step &s = q.step;
    const int b = (int)ocd_cluster_rank(), tid = (int)threadIdx.x, warp = tid / CLUSTER_WARP,
              lane = tid % CLUSTER_WARP;
    uint64_t *bar = (uint64_t *)(cluster_shared + g.bar);
    if (tid == 0) {
        ocd_mbar_init(bar, 1);
        ocd_mbar_init(bar + 1, 1);
        ocd_mbar_init_fence();
        for (int k = 0; k < 2 && k < s.T - 1; k++) ocd_mbar_arrive_expect_tx(bar + k, cluster_phase_bytes(s));
    }
    cluster_thread th;
    cluster_stage<T>(q, g, b, tid, CLUSTER_THREADS, cluster_shared);
    cluster_load_fragments<T>(q, g, b, warp, lane, &th);
    cluster_cell_init<T>(q, g, b, tid, &th);
    ocd_cluster_sync();
    for (int t = 0; t < (b < g.blocks ? s.T : 0); t++) { /* a block without units idles */
        cluster_prefetch<T>(q, g, t, &th);
        if (t > 0) {
            ocd_mbar_wait_cluster(bar + ((t - 1) & 1), ((t - 1) >> 1) & 1);
            if (tid == 0 && t + 1 < s.T - 1) ocd_mbar_arrive_expect_tx(bar + ((t + 1) & 1), cluster_phase_bytes(s));
        }
        cluster_products<T>(g, t, warp, lane, cluster_shared, th);
        __syncthreads();
        cluster_cell<T>(q, g, t, cluster_shared, &th);
        if (t == s.T - 1) continue;
        __syncthreads(); /* the block's h staged */
        for (int i = tid; i < g.stores; i += CLUSTER_THREADS) {
            const cluster_store st = ((const cluster_store *)(cluster_shared + g.table))[i];
            if (st.rank >= 0)
                ocd_st_async_cluster(cluster_shared + st.dst + (t & 1) * g.h_slot,
                                     *(const uint4 *)(cluster_shared + st.src), bar + (t & 1), (unsigned)st.rank);
        }
    }
    ocd_cluster_sync();
#endif
}

typedef void (*cluster_fn)(const ocd_rnn_seq, const cluster_geom);

cluster_fn cluster_kernel_of(cudnnDataType_t t)
{
    switch (t) {
    case CUDNN_DATA_HALF: return cluster_kernel<__half>;
    case CUDNN_DATA_BFLOAT16: return cluster_kernel<__nv_bfloat16>;
    default: return NULL;
    }
}

cudaLaunchConfig_t cluster_config(const ocd_rnn_cluster_plan &pl, cudaStream_t stream, cudaLaunchAttribute *attr)
{
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = (unsigned)pl.ctas, attr->val.clusterDim.y = 1, attr->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)pl.ctas);
    cfg.blockDim = dim3(CLUSTER_THREADS);
    cfg.dynamicSmemBytes = pl.smem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

/* Per kernel (0 half, 1 bfloat16): its opt-ins, a bit per device (ocd_smem_opt_in), and the
   clusters of each size that fit each device at once (ocd_active_clusters' caches). */
unsigned long long cluster_opted[2];
int cluster_counts[2][CLUSTER_CTAS + 1][64];

} // namespace

extern "C" const char *ocd_cuda_rnn_cluster_plan(cudnnHandle_t handle, const ocd_rnn_seq *q,
                                                 ocd_rnn_cluster_plan *plan)
{
    cluster_fn kernel = cluster_kernel_of(q->step.dtype);
    if (kernel == NULL) return "the cluster form's tensor cores take half and bfloat16 data";
    if (handle->cc_major < 9) return "thread-block clusters need compute capability 9.0";
    if ((uintptr_t)q->r % 4 != 0) return OCD_REASON_ALIGNMENT; /* R's columns are loaded in pairs */
    int optin = 0, clusters = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, handle->device) != cudaSuccess) {
        (void)cudaGetLastError(); /* not a launch's error */
        return "the device's attributes cannot be read";
    }
    if (const char *why = cluster_shape(q->step, (size_t)optin, plan)) return why;
    if (!ocd_test_clusters(&clusters)) {
        const int k = q->step.dtype == CUDNN_DATA_BFLOAT16;
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = cluster_config(*plan, handle->stream, &attr);
        /* the opt-in maximum, so that any plan's shared memory may be launched */
        if (ocd_smem_opt_in(kernel, (size_t)optin, true, &cluster_opted[k], handle->device) != CUDNN_STATUS_SUCCESS ||
            ocd_active_clusters(kernel, cfg, handle->device, cluster_counts[k][plan->ctas], &clusters) !=
                CUDNN_STATUS_SUCCESS) {
            (void)cudaGetLastError(); /* not a launch's error */
            return "the cluster occupancy query failed (cudaOccupancyMaxActiveClusters)";
        }
    }
    return clusters >= 1 ? NULL : "no cluster of the plan's size fits the GPU (MIG or MPS)";
}

extern "C" cudnnStatus_t ocd_cuda_rnn_cluster(cudnnHandle_t handle, const ocd_rnn_seq *q,
                                              const ocd_rnn_cluster_plan *plan)
{
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_config(*plan, handle->stream, &attr);
    const cluster_geom g = cluster_geom_of(q->step, plan->units);
    OCD_CUDA_TRY(cudaLaunchKernelEx(&cfg, cluster_kernel_of(q->step.dtype), *q, g));
    return CUDNN_STATUS_SUCCESS;
}
