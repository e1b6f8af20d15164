/* batchnorm.cuh: the normalization engine on CUDA (problem/batchnorm.h), in implementations that
   differ only in how they walk the tensors:

     channels last   the slots are the contiguous dimension (NHWC spatial; any dense x per
                     activation): a block is TX threads along the slots, each holding V slots as
                     one 16-byte vector, times TY threads along the rows (n and the spatial
                     positions), so that every warp reads whole rows;
     flat            its common case: the rows at one stride (packed NHWC), whole vectors and
                     16-byte aligned pointers: the same kernels on a layout that finds a row
                     with one multiply instead of a division (a separate entry);
     channels first  spatial mode with the spatial dims contiguous (NCHW): a block serves one
                     channel and its threads walk that channel's elements, V at a time;
     strided         anything else: every tensor with its own strides, one slot per thread.

   Every direction is at most three kernels, the reductions being two-level and atomic-free:
     reduce   each block sums, for its slots over its split of the rows, two quantities:
              statistics: x - shift and (x - shift)^2, where shift is the slot's first x (all
              blocks use the same, so partial sums just add; the shift keeps the variance free
              of cancellation); gradient: dp and dp * (x - mean) about the saved mean; backward
              without saved statistics: all four in one pass, dp * (x - shift) for the gradient
              (Pass). Partials go to the workspace (or the handle's scratch, cuda/scratch.cuh),
              [2 or 4][splits][slots];
     finish   up to FINISH_LANES threads per slot add the splits' partials (a few each, loads in
              flight together), in a fixed order, and one derives what the slot needs (mean,
              1/std, saved and running statistics, the parameter gradients), then the slot's
              coefficients of the element pass;
     apply    y = alpha * act(a*x + b (+ z)) + beta * y, or dx = alpha * (A*dp + B*x + C) + ...
   Results are deterministic: the splits depend only on the shape and the device.
   Scheduling: the rows reductions keep one wave of blocks resident (RowRounds::BLOCKS per SM)
   that stride over chunks of ROWS*TY rows; the rows element passes run a block per chunk, as
   many resident as their registers allow. Each thread keeps 4 vectors of loads in flight
   (RowRounds): more warps with fewer loads each, so that some load while others compute. The
   element pass reads its per-lane coefficients from shared memory, and the fused-op passes are
   kernels of their own, so that the plain kernels hold no registers for the activation (no
   spills: check with -Xptxas -v). Channels-first kernels run several waves of (channel, split)
   blocks. Forward training moves x twice and y once; backward x and dy
   twice, dx once (without saved statistics too: the statistics come with the gradient sums, at
   one row of x and dy in flight a round for 16-bit vectors, for the registers of the four sums):
   the element pass visits the work in the reverse order of the reduction, so
   that what the reduction read last is still in L2 when the element pass starts.

   Every rows block issues its first round's loads before its prologue (the shift or mean of a
   reduction, the coefficients of a plain float-compute element pass), and the finish loads a
   slot's operands before its partials, so that no latency waits alone. The reductions' block
   tree is free of bank conflicts, the element pass reads its coefficients in groups of 4 lanes
   (coef_slot), and the finish and element pass are launched early (cuda/launch.cuh). The
   statistics reduction of whole packed rows on sm_90 is fed by bulk copies (k_reduce_bulk: a ring
   of 2 stages of 8 KB a block, 3 blocks an SM), so that its loads in flight hold no registers;
   more in flight (more stages or blocks) is slower. The reductions run as kernels of their own,
   before the finish, which adds the splits' partials in a fixed order: results stay
   deterministic, and a finish folded into the reduction's last blocks would add its partials one
   L2 round trip after another in a single block. The element pass is at the copy ceiling with
   plain loads.

   Files: batchnorm.cuh (this one) holds what the planner, batchnorm.cu, needs: the kinds, the
   constants, the layouts and the plan. batchnorm_kernels.cuh holds the kernels and their launcher
   (run_typed), instantiated a data type each by batchnorm_{float,double,half,bfloat16}.cu, so
   that the four compile in parallel. */
#ifndef OCD_CUDA_BATCHNORM_CUH
#define OCD_CUDA_BATCHNORM_CUH

#include "cuda/check.cuh"
#include "cuda/types.cuh"
#include "problem/batchnorm.h"

#include <stdint.h>
#include <string.h>

namespace ocd_bn {

enum { T_X, T_Y, T_Z, T_DY, T_DX, T_DZ, T_RES, NTENS };
enum Kind { FLAT, CHANNELS_LAST, CHANNELS_FIRST, STRIDED };
/* What a reduction sums (see the top): the statistics, the gradient sums about the saved mean, or
   both in one pass (backward without saved statistics), the gradient's about the shift. */
enum Pass { P_STATS, P_GRAD, P_BOTH };
/* partial sums a slot's block writes */
template <int P> struct Sums {
    static const int N = P == P_BOTH ? 4 : 2;
};

const int THREADS = 256;
const int MIN_BLOCKS = 3; /* resident per SM: __launch_bounds__ caps the registers for it */
/* the same for the plain rows kernels (see RowRounds); sm_75 holds at most 1024 threads an SM */
const int ROW_REDUCE_BLOCKS = 4;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
const int ROW_APPLY_BLOCKS = 4;
#else
const int ROW_APPLY_BLOCKS = 5;
#endif
const int UNROLL = 4;     /* channels first: vectors per thread per split, at least */
const int ROWS = 8;       /* rows kernels: rows per thread per chunk */
/* k_reduce_bulk: rows a thread a stage of its ring of shared memory, the stages, and the blocks
   resident per SM (the plan's splits: 396 on an H200) */
const int BULK_ROWS = 2, BULK_STAGES = 2, BULK_BLOCKS = 3;
/* finish: threads a block; lanes (threads adding one slot's partials) at most, and the partials
   each adds at most where the splits allow */
const int FINISH_THREADS = 256, FINISH_LANES = 128, FINISH_PER_LANE = 8;

/* Slot j -> the offsets of its parameters (scale, bias, gradients) and statistics. */
struct SlotMap {
    int nd;
    uint32_t ext[4]; /* innermost first, in the order the layout numbers slots */
    int64_t pstr[4], sstr[4];
    __device__ void offsets(uint32_t j, int64_t &po, int64_t &so) const
    {
        po = so = 0;
        for (int d = 0; d < nd; d++) {
            uint32_t c = j % ext[d];
            j /= ext[d];
            po += c * pstr[d];
            so += c * sstr[d];
        }
    }
};

/* Rows layouts give a row a position (Pos), from which at() gives any tensor's offset of a slot. */

/* Channels last: slot j of row r at (r / S) * sN + (r % S) * sS + j in every tensor; a position is
   the row's offset. */
struct LayRows {
    typedef int64_t Pos;
    static const bool WHOLE = false; /* see LayFlat */
    uint32_t S;
    int64_t sN, sS;
    __device__ __forceinline__ Pos pos(uint32_t r) const
    {
        uint32_t n = r / S;
        return n * sN + (int64_t)(r - n * S) * sS;
    }
    __device__ __forceinline__ int64_t at(Pos p, int, uint32_t j) const { return p + j; }
};

/* Channels last with all the rows at one stride (packed NHWC, one image, or no spatial dims):
   slot j of row r at r * sR + j; no division per row. */
struct LayFlat {
    typedef int64_t Pos;
    /* K is whole vectors: a thread has all V lanes or none, so that its loads and stores need no
       test of the lanes it has (lanes()) */
    static const bool WHOLE = true;
    int64_t sR;
    __device__ __forceinline__ Pos pos(uint32_t r) const { return (int64_t)r * sR; }
    __device__ __forceinline__ int64_t at(Pos p, int, uint32_t j) const { return p + j; }
};

/* Strided: each tensor with its strides; rows and slots decompose over their dimensions. A
   position is the row number. */
struct LayStrided {
    typedef uint32_t Pos;
    static const bool WHOLE = false;
    int nr, ns;
    uint32_t rext[5], sext[4]; /* innermost first */
    int64_t rstr[NTENS][5], sstr[NTENS][4];
    __device__ __forceinline__ Pos pos(uint32_t r) const { return r; }
    __device__ int64_t at(uint32_t r, int t, uint32_t j) const
    {
        int64_t o = 0;
        for (int d = 0; d < nr; d++) {
            o += (r % rext[d]) * rstr[t][d];
            r /= rext[d];
        }
        for (int d = 0; d < ns; d++) {
            o += (j % sext[d]) * sstr[t][d];
            j /= sext[d];
        }
        return o;
    }
};

/* The lanes of a rows thread that has n > 0 of them: all V where the layout says so, a constant,
   so that its loads need no test of the lanes it has (fewer instructions in the 16-bit statistics
   reduction). */
template <class L, int V> __device__ __forceinline__ int lanes(int n)
{
    return L::WHOLE ? V : n;
}

/* Channels first: element i of channel c at c * sC + (i / S) * sN + i % S in every tensor. */
struct LayChan {
    uint32_t S;
    int64_t sC, sN;
    __device__ __forceinline__ int64_t off(uint32_t c, uint32_t i) const
    {
        uint32_t n = i / S;
        return c * sC + n * sN + (i - n * S);
    }
};

/* ---- plans ----------------------------------------------------------------------------------- */

struct Plan {
    Kind kind;
    int vec;        /* V the strides allow; 1 when they do not */
    bool bulk;      /* the statistics reduction may take k_reduce_bulk (Runner::bulk_reduction) */
    int G;          /* blocks along y (see Args) */
    uint32_t per_split;
    LayRows rows;
    LayFlat flat;
    LayChan chan;
    LayStrided strided;
    SlotMap sm;
    size_t workspace;
};

inline uint32_t div_up(int64_t a, int64_t b)
{
    return (uint32_t)((a + b - 1) / b);
}

/* Threads along the slots of a rows block for V lanes each: a power of two up to 32. */
inline int block_tx(int64_t slots, int v)
{
    int tx = 1;
    while (tx < 32 && (int64_t)tx * v < slots) tx *= 2;
    return tx;
}

inline bool aligned(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* True when every data pointer of the problem is 16-byte aligned (a NULL one is: the size
   queries have none). */
inline bool pointers_aligned(const struct ocd_bn_problem *p)
{
    const void *ptrs[] = {p->x_ptr, p->z_ptr, p->dy_ptr, p->y_ptr, p->dx_ptr, p->dz_ptr, p->reserve_ptr};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (!aligned(ptrs[i])) return false;
    return true;
}

/* The launcher of data type T (batchnorm_kernels.cuh). */
template <typename T>
cudnnStatus_t run_typed(cudnnHandle_t h, const struct ocd_bn_problem *p, const Plan *pl, void *ws);

} // namespace ocd_bn

/* The instantiation of run_typed for data type T: `extern OCD_BN_RUN_TYPED(T);` declares it
   (batchnorm.cu), `OCD_BN_RUN_TYPED(T);` makes it (batchnorm_<type>.cu). */
#define OCD_BN_RUN_TYPED(T)                                                                            \
    template cudnnStatus_t ocd_bn::run_typed<T>(cudnnHandle_t, const struct ocd_bn_problem *,              \
                                                const ocd_bn::Plan *, void *)

#endif
