/* dropout.c (host): dropout forward and backward on the host backend.

   The work is split by mask word (32 elements), so that each thread owns the words it writes.
   The keep bits come from the Philox rule of problem/dropout.h (forward) or from the mask (backward);
   the product x * scale is formed exactly in double and rounded once to the data type, which is
   the single float (or double) multiplication the CUDA kernels do: both backends give the same
   bits. */
#include "problem/dropout.h"

#include "host/parallel.h"
#include "host/typed.h"

struct job {
    const struct ocd_dropout_problem *p;
    bool forward, packed;
    uint64_t seed, calls;
    double scale;
};

static int64_t offset_of(const struct ocd_tensor_view *v, bool packed, int64_t i)
{
    if (packed) return i;
    int64_t idx[OCD_MAX_DIMS];
    ocd_view_coords(v, i, idx);
    return ocd_view_offset_of(v, idx);
}

static void run_words(void *ctx, int64_t w0, int64_t w1)
{
    const struct job *j = ctx;
    const struct ocd_dropout_problem *p = j->p;
    cudnnDataType_t t = p->src.dtype;
    for (int64_t w = w0; w < w1; w++) {
        int64_t first = w * OCD_DROPOUT_WORD, last = OCD_MIN(first + OCD_DROPOUT_WORD, p->count);
        uint32_t word = 0;
        if (j->forward) {
            for (int64_t b = first / OCD_DROPOUT_BLOCK; b * OCD_DROPOUT_BLOCK < last; b++)
                word |= (uint32_t)ocd_dropout_keep4(j->seed, j->calls, (uint64_t)b, p->threshold)
                        << (b * OCD_DROPOUT_BLOCK - first);
            /* bits past the last element stay zero (problem/dropout.h) */
            if (last - first < OCD_DROPOUT_WORD) word &= (1u << (last - first)) - 1;
            p->mask[w] = word;
        } else {
            word = p->mask[w];
        }
        for (int64_t i = first; i < last; i++) {
            bool keep = (word >> (i - first)) & 1;
            double v = keep ? ocd_host_load(t, p->src_data, offset_of(&p->src, j->packed, i)) * j->scale : 0.0;
            ocd_host_store(t, p->dst_data, offset_of(&p->dst, j->packed, i), v);
        }
    }
}

static cudnnStatus_t run(const struct ocd_dropout_problem *p, bool forward)
{
    struct job j = {p, forward, ocd_view_is_packed_rowmajor(&p->src) && ocd_view_is_packed_rowmajor(&p->dst), 0, 0,
                    p->src.dtype == CUDNN_DATA_DOUBLE ? p->scale : (double)(float)p->scale};
    if (forward) {
        j.seed = p->states->seed;
        j.calls = p->states->calls;
    }
    ocd_parallel_for((p->count + OCD_DROPOUT_WORD - 1) / OCD_DROPOUT_WORD, 256, run_words, &j);
    if (forward) p->states->calls = j.calls + 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_host_dropout_fwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes)
{
    return run(problem, true);
}

cudnnStatus_t ocd_host_dropout_bwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes)
{
    return run(problem, false);
}
