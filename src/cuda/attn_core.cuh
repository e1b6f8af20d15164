/* attn_core.cuh: what the attention core's CUDA kernels share (cuda/attn_core.cu: the prologue
   and the row kernels; cuda/attn_core_flash.cu: the fused tensor-core forward).

   Workspace layout (ocd_attn_core_workspace_bytes): lo_win and hi_win copied to the device
   (max_q ints each, the pair rounded up to 256 bytes), then 256 bytes holding the generator words
   {seed, offset} the forward's kernels read, then (backward) D_i = <do_i, o_i> per row in the
   compute type. The prologue enqueues the copies of the windows and, with dropout, one thread
   that copies the generator words from rng into the workspace and the reserve and advances rng:
   every later kernel of the call reads the copy, so the advance cannot race with them. */
#ifndef OCD_CUDA_ATTN_CORE_CUH
#define OCD_CUDA_ATTN_CORE_CUH

#include "cuda/check.cuh"
#include "problem/attn_core.h"

/* The kernels' argument: the problem with its windows in device memory, and what the prologue
   derived. */
struct ocd_attn_dev {
    struct ocd_attn_core_problem p; /* lo_win, hi_win: the workspace's copies */
    int kv_beams;
    const uint64_t *gen;            /* {seed, offset}: the workspace's (forward) or the reserve's */
    void *lse;                      /* the reserve's row statistics (compute type), or NULL */
    void *D;                        /* backward: the workspace's D_i */
    uint64_t threshold;             /* dropout: a Philox word below it drops its element */
    double drop_scale;              /* kept probabilities are multiplied by it */
};

/* Fills d and enqueues the prologue on the handle's stream. */
cudnnStatus_t ocd_cuda_attn_prologue(cudnnHandle_t handle, const struct ocd_attn_core_call *c, bool forward,
                                     struct ocd_attn_dev *d);

/* Row r's index in the reserve's statistics (and the mask's row): ((b * beams + m) * heads + h)
   * max_q + i. */
__host__ __device__ __forceinline__ int64_t ocd_attn_row_index(const struct ocd_attn_core_problem &p, int b, int m,
                                                                int h, int i)
{
    return (((int64_t)b * p.beams + m) * p.heads + h) * p.max_q + i;
}

/* The dropout factor of mask element e: drop_scale when kept, 0 when dropped, 1 without dropout. */
template <typename C> __host__ __device__ __forceinline__ C ocd_attn_drop(const struct ocd_attn_dev &d, uint64_t e)
{
    if (d.p.dropout == 0) return C(1);
    return ocd_attn_core_keep(d.gen[0], d.gen[1], d.threshold, e) ? C(d.drop_scale) : C(0);
}

#endif /* OCD_CUDA_ATTN_CORE_CUH */
