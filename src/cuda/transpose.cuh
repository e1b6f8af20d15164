/* transpose.cuh: the tiled transpose of the two innermost dimensions, shared by the layout
   changes (transform.cu: NCHW <-> NHWC copies of cudnnTransformTensor and friends) and the
   implicit GEMM's operand copies (conv_igemm.cu: an NCHW activation into packed NHWC).

   y walks the last dimension q with unit stride, x the one before it, p. A block moves one tile
   through shared memory, reading x and writing y along their unit strides, so both sides are
   coalesced; the extra column of the tile keeps the column accesses free of bank conflicts.
   Elements move as words of V (2 for 4-byte and 2-byte types, 4 for 1-byte ones, where every
   extent and stride allows), transposed in registers, so that each access is 4 to 8 bytes wide
   and each thread keeps 16 loads in flight. Dims in front of the two are a batch, decomposed by
   fast division once per tile. What a store does with a word (scale it, blend it with y, round
   it) is the caller's: the Put functor. */
#ifndef OCD_CUDA_TRANSPOSE_CUH
#define OCD_CUDA_TRANSPOSE_CUH

#include "cuda/types.cuh"

#include <stdint.h>
#include <string.h>

#define OCD_TRANSPOSE_TILE 32     /* words per tile side */
#define OCD_TRANSPOSE_TILE_ROWS 4 /* blockDim.y: each thread moves TILE / TILE_ROWS rows of words */

struct ocd_transpose_args {
    uint32_t p, q;              /* x is unit-stride along p, y along q */
    uint32_t tiles_p, tiles_q;
    int64_t x_q, y_p;           /* the other strides of the two dims */
    int batch_rank;
    ocd_fastdiv batch_dims[OCD_EWISE_MAX_DIMS];
    int64_t x_batch[OCD_EWISE_MAX_DIMS], y_batch[OCD_EWISE_MAX_DIMS];
    ocd_fastdiv div_tiles_p, div_tiles_q;
};

/* The arguments of a p x q transpose without batch dims (batch_rank 0: the caller adds any, then
   picks the word with ocd_transpose_words). */
static inline ocd_transpose_args ocd_transpose_plan(uint32_t p, uint32_t q, int64_t x_q, int64_t y_p)
{
    ocd_transpose_args g;
    memset(&g, 0, sizeof g);
    g.p = p, g.q = q, g.x_q = x_q, g.y_p = y_p;
    for (int d = 0; d < OCD_EWISE_MAX_DIMS; d++) g.batch_dims[d] = ocd_fastdiv_make(1);
    return g;
}

/* The widest word, of vmax elements down to 1, that every extent and stride of g and both bases
   (elements of esize bytes) are whole words of, with g's tiles of it; returns it. */
static inline int ocd_transpose_words(ocd_transpose_args *g, const void *x, const void *y, size_t esize, int vmax)
{
    int v = vmax;
    for (; v > 1; v /= 2) {
        bool ok = g->p % v == 0 && g->q % v == 0 && g->x_q % v == 0 && g->y_p % v == 0 &&
                  (uintptr_t)x % (v * esize) == 0 && (uintptr_t)y % (v * esize) == 0;
        for (int d = 0; d < g->batch_rank; d++) ok = ok && g->x_batch[d] % v == 0 && g->y_batch[d] % v == 0;
        if (ok) break;
    }
    g->tiles_p = (g->p + OCD_TRANSPOSE_TILE * v - 1) / (OCD_TRANSPOSE_TILE * v);
    g->tiles_q = (g->q + OCD_TRANSPOSE_TILE * v - 1) / (OCD_TRANSPOSE_TILE * v);
    g->div_tiles_p = ocd_fastdiv_make(g->tiles_p);
    g->div_tiles_q = ocd_fastdiv_make(g->tiles_q);
    return v;
}

/* One tile per block; launch tiles_p * tiles_q * (the batch's elements) blocks of
   (OCD_TRANSPOSE_TILE, OCD_TRANSPOSE_TILE_ROWS). A word is V consecutive elements: the loads
   read words of x along p, each thread transposes the V x V block of its V words in registers,
   and put(dst, word) stores words of y along q. */
template <typename T, int V, typename Put>
__global__ void ocd_transpose_tiled(ocd_transpose_args g, Put put, T *y, const T *x)
{
    typedef ocd_vec<T, V> W;
    const int TILE = OCD_TRANSPOSE_TILE, ROWS = OCD_TRANSPOSE_TILE_ROWS;
    __shared__ W tile[TILE * V][TILE + 1];
    uint32_t t = blockIdx.x;
    uint32_t rest = ocd_fastdiv_div(g.div_tiles_p, t), tp = t - rest * g.tiles_p;
    uint32_t b = ocd_fastdiv_div(g.div_tiles_q, rest), tq = rest - b * g.tiles_q;
    int64_t xo = 0, yo = 0;
    for (int d = g.batch_rank - 1; d >= 0; d--) {
        uint32_t q = d > 0 ? ocd_fastdiv_div(g.batch_dims[d], b) : 0, r = b - q * g.batch_dims[d].d;
        b = q;
        xo += (int64_t)r * g.x_batch[d];
        yo += (int64_t)r * g.y_batch[d];
    }
    const uint32_t p0 = tp * TILE * V, q0 = tq * TILE * V, pb = p0 + threadIdx.x * V;
#pragma unroll
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        W in[V];
#pragma unroll
        for (int i = 0; i < V; i++) {
            uint32_t q = q0 + j * V + i;
            if (pb < g.p && q < g.q) in[i] = *reinterpret_cast<const W *>(x + xo + pb + (int64_t)q * g.x_q);
        }
#pragma unroll
        for (int k = 0; k < V; k++) {
            W w;
#pragma unroll
            for (int i = 0; i < V; i++) w.v[i] = in[i].v[k];
            tile[threadIdx.x * V + k][j] = w;
        }
    }
    __syncthreads();
    const uint32_t qb = q0 + threadIdx.x * V;
#pragma unroll
    for (int r = threadIdx.y; r < TILE * V; r += ROWS) {
        uint32_t p = p0 + r;
        if (p >= g.p || qb >= g.q) continue;
        put(y + yo + (int64_t)p * g.y_p + qb, tile[r][threadIdx.x]);
    }
}

#endif
