/* attn_core.cuh: what the attention core's CUDA kernels share (cuda/attn_core.cu: the prologue
   and the row kernels; cuda/attn_core_flash.cu and attn_core_flash_bwd.cu: the fused
   tensor-core forward and backward).

   Workspace layout (ocd_attn_core_workspace_bytes): lo_win and hi_win copied to the device
   (max_q ints each, the pair rounded up to 256 bytes), then 256 bytes holding the generator words
   {seed, offset} the forward's kernels read, then (backward) D_i = <do_i, o_i> per row in the
   compute type and, for half and bfloat16 from the next 256-byte boundary, the fused backward's
   float accumulators of dq (head_qk per row, rows indexed as the reserve's). The prologue
   enqueues kernels that write the windows from their arguments (so that a call captured into a
   CUDA graph holds their values; no copy from pageable memory) and, with dropout, one thread
   that copies the generator words from rng into the workspace and the reserve and advances rng:
   every later kernel of the call reads the copy, so the advance cannot race with them. */
#ifndef OCD_CUDA_ATTN_CORE_CUH
#define OCD_CUDA_ATTN_CORE_CUH

#include "cuda/check.cuh"
#include "problem/attn_core.h"

#include <string.h>

/* The kernels' argument: the problem with its windows in device memory, and what the prologue
   derived. */
struct ocd_attn_dev {
    struct ocd_attn_core_problem p; /* lo_win, hi_win: the workspace's copies */
    int kv_beams;
    const uint64_t *gen;            /* {seed, offset}: the workspace's (forward) or the reserve's */
    void *lse;                      /* the reserve's row statistics (compute type), or NULL */
    void *D;                        /* backward: the workspace's D_i */
    float *dq_acc;                  /* backward of half or bfloat16: the dq accumulators */
    uint64_t threshold;             /* dropout: a Philox word below it drops its element */
    double drop_scale;              /* kept probabilities are multiplied by it */
};

/* Fills d for a call (no CUDA call: the emulation tests use it too): the windows and generator
   words at their workspace places, the statistics in the reserve. */
static inline void ocd_attn_dev_init(const struct ocd_attn_core_call *c, bool forward, struct ocd_attn_dev *d)
{
    const struct ocd_attn_core_problem *p = c->p;
    memset(d, 0, sizeof *d);
    d->p = *p;
    d->kv_beams = p->kv_shared ? 1 : p->beams;
    d->threshold = ocd_attn_core_threshold(p->dropout);
    d->drop_scale = p->dropout < 1 ? 1 / (1 - p->dropout) : 0;
    if (p->dtype != CUDNN_DATA_DOUBLE) d->drop_scale = (float)d->drop_scale;
    char *ws = (char *)c->workspace;
    size_t win = ((size_t)2 * p->max_q * sizeof(int) + 255) / 256 * 256;
    d->p.lo_win = (const int *)ws, d->p.hi_win = (const int *)ws + p->max_q;
    d->lse = c->reserve ? (char *)c->reserve + 16 : NULL;
    d->D = forward ? NULL : ws + win + 256;
    if (!forward && (p->dtype == CUDNN_DATA_HALF || p->dtype == CUDNN_DATA_BFLOAT16)) {
        size_t rows = (size_t)p->batch * p->beams * p->heads * p->max_q;
        d->dq_acc = (float *)(ws + win + 256 + (rows * 4 + 255) / 256 * 256);
    }
    d->gen = forward ? (const uint64_t *)(ws + win) : (const uint64_t *)c->reserve;
}

/* ocd_attn_dev_init, then the prologue enqueued on the handle's stream. */
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
