/* gemm_engine.h: the host's packed GEMM engine, shared by every GEMM-shaped kernel of the host
   backend (the plain GEMM of problem/gemm.h in host/gemm.c, the convolutions of host/conv_gemm.c).

   It computes C[M x N] = A[M x K] * B[K x N] for each of `groups` independent problems, in float
   or double, and hands each finished tile of C to the caller's store function, which owns the
   epilogue (alpha/beta, bias, activation, the destination's layout and type). Operands come in
   two forms:
     dense   element (r, c) of group g at base_g + r * rs + c * cs, where base_g is ptrs[g] when
             ptrs is set, else base + g * group_stride (any transposition, strided batches,
             arrays of batch pointers);
     tabled  element (r, c) at base + row_off[r] + col_off[c], through index tables that the
             caller's slice function provides: a table entry holds a scalar offset and up to
             OCD_HOST_GEMM_MAX_POS positions, and the element is zero unless, for every checked
             position d < nchk, t = row_pos[d] + col_pos[d] falls inside [0, lim[d]) (when
             strided: t is a multiple of div[d] and t / div[d] < lim[d], whose offset t / div[d]
             * str[d] is then added). This is how a convolution's operands are read in place:
             im2col without the copy, padding and strides by the position checks.
   Operands of another data type than the compute type are converted as they are packed.

   Blocking: MC x KC blocks of A and KC x NC blocks of B are packed into micro-panels of MR rows
   and NR columns (zero-padded at the edges, so the micro-kernel always computes a full tile); C
   accumulates in an MC x NC tile in compute precision and goes to the store once. The reduction
   (K) is never split, so results do not depend on the number of threads. Tasks (group, M block,
   N block) run on the worker pool (host/parallel.h). The micro-kernel is written with the GNU
   vector extension and compiled twice on x86-64, for the baseline and for AVX2 + FMA, picked at
   run time (gemm_engine.c; gemm_engine_typed.h holds the typed half). */
#ifndef OCD_HOST_GEMM_ENGINE_H
#define OCD_HOST_GEMM_ENGINE_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_HOST_GEMM_MAX_POS 3

/* Entries of an index table: offsets, and OCD_HOST_GEMM_MAX_POS positions per entry. */
struct ocd_host_gemm_table {
    int64_t *off;
    int32_t *pos;
};

struct ocd_host_gemm_operand {
    const void *base;
    cudnnDataType_t dtype;
    bool dense;
    /* dense */
    int64_t rs, cs, group_stride;
    const void *const *ptrs; /* per-group base pointers, or NULL */
    /* tabled */
    int nchk;
    bool strided;
    int32_t lim[OCD_HOST_GEMM_MAX_POS], div[OCD_HOST_GEMM_MAX_POS];
    int64_t str[OCD_HOST_GEMM_MAX_POS];
};

/* The tables of tabled operands: entries [e0, e1) of table `which` (0: rows of A, 1: columns of
   A, 2: rows of B, 3: columns of B) of group `group`, either pointing into tables the caller
   keeps or filled into scratch, which has room for e1 - e0 entries. */
typedef struct ocd_host_gemm_table (*ocd_host_gemm_slice_fn)(const void *ctx, int which, int64_t group, int64_t e0,
                                                           int64_t e1, struct ocd_host_gemm_table scratch);

/* Stores a finished tile: acc (float, or double when the engine computes in double) holds rows
   [m0, m0 + mc) and columns [n0, n0 + nc) of group `group`'s C, row-major with leading dimension
   ldacc. scratch is two tables with room for mc and nc entries, for a store that indexes its
   destination through tables of its own. */
typedef void (*ocd_host_gemm_store_fn)(const void *ctx, const void *acc, int64_t ldacc, int64_t group, int64_t m0,
                                       int64_t n0, int64_t mc, int64_t nc, struct ocd_host_gemm_table scratch[2]);

struct ocd_host_gemm {
    int64_t m, n, k, groups;
    bool dbl; /* computes in double, else in float */
    struct ocd_host_gemm_operand a, b;
    bool prepack_b; /* packs all of B once before the tiles: worth it when many M tiles reuse it */
    const void *ctx; /* the caller's, passed to slice and store */
    ocd_host_gemm_slice_fn slice; /* NULL when no operand is tabled */
    ocd_host_gemm_store_fn store;
    void *tile_scratch; /* optional: ocd_host_gemm_tile_scratch_bytes(dbl) that the tiles use; NULL: allocated */
};

/* Bytes of the tiles' scratch of a run, the same for every problem of a compute type. */
size_t ocd_host_gemm_tile_scratch_bytes(bool dbl);

/* The tile scratch a host handle keeps for ocd_gemm (host/gemm.c, ocd_host_gemm_reserve), made
   and released with the handle. */
cudnnStatus_t ocd_host_gemm_open(cudnnHandle_t handle);
void ocd_host_gemm_close(cudnnHandle_t handle);

/* Bytes of the packed copy of B (0 without prepack_b). */
size_t ocd_host_gemm_prepack_bytes(const struct ocd_host_gemm *g);

/* Runs the GEMM. prepack_ws: ocd_host_gemm_prepack_bytes of workspace for the packed B, or NULL
   to allocate it. ALLOC_FAILED (logged) when scratch cannot be allocated. */
cudnnStatus_t ocd_host_gemm_run(const struct ocd_host_gemm *g, void *prepack_ws);

/* Materialises operand A (which 0) or B (1) of every group densely at dst (row-major, groups x
   rows x columns in the compute type: ocd_host_gemm_gather_bytes) and makes it a dense operand;
   ALLOC_FAILED (logged) when a task cannot allocate its tables. */
size_t ocd_host_gemm_gather_bytes(const struct ocd_host_gemm *g, int which);
cudnnStatus_t ocd_host_gemm_gather(struct ocd_host_gemm *g, int which, void *dst);

/* Bytes of an index table of `entries` entries (offsets and positions, each 64-byte aligned). */
size_t ocd_host_gemm_table_bytes(int64_t entries);
/* The table of `entries` entries laid out at `at`, which has ocd_host_gemm_table_bytes of room. */
struct ocd_host_gemm_table ocd_host_gemm_table_at(void *at, int64_t entries);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_GEMM_ENGINE_H */
