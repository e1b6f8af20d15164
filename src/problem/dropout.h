/* dropout.h: the problem the dropout kernels take, the states buffer and the mask rule that the
   host and CUDA kernels share, and the declarations of the kernels.

   Main decision: the mask is a pure function of (seed, call number, element index), drawn from
   Philox4x32-10 (core/philox.h), so that the same seed gives the same masks on every run and on
   both backends, bit for bit. Element i of a tensor (its row-major position in the descriptor's
   dims, whatever the strides) takes word i % 4 of the Philox block with counter
   (i / 4 low, i / 4 high, call low, call high) and key (seed low, seed high); it is dropped when
   that word is below round(p * 2^32), so p = 0 keeps everything and p = 1 drops everything.
   Kept elements are multiplied by 1 / (1 - p), rounded once to the compute type (float for
   float, half and bfloat16, double for double).

   The states buffer the user gives cudnnSetDropoutDescriptor holds a struct ocd_dropout_state in
   the handle's memory (device memory on the CUDA backend): the seed and the number of forward
   calls made so far, the "call" above. Set writes it; Restore attaches a buffer that Set wrote
   before without touching it; each forward call reads it and advances the call number, on the
   device, so that repeated calls draw fresh masks and a saved copy of the buffer replays them.

   The reserve space holds the mask: bit i % 32 of 32-bit word i / 32 is set when element i was
   kept; bits past the last element are zero. */
#ifndef OCD_PROBLEM_DROPOUT_H
#define OCD_PROBLEM_DROPOUT_H

#include "core/handle.h"
#include "core/philox.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the states buffer holds. */
struct ocd_dropout_state {
    uint64_t seed;     /* the Philox key */
    uint64_t calls;    /* forward calls made with these states: counter words 2 and 3 */
    uint32_t arrivals; /* CUDA: blocks of the running forward that have read `calls`; 0 at rest */
    uint32_t reserved; /* zero */
};

/* One dropout call: forward (x -> y, mask written) or backward (dy -> dx, mask read). */
struct ocd_dropout_problem {
    struct ocd_tensor_view src, dst;  /* x and y, or dy and dx: same type and element count */
    const void *src_data;
    void *dst_data;
    uint32_t *mask;                   /* the reserve space */
    struct ocd_dropout_state *states; /* forward only: the generator, advanced by one call */
    uint64_t threshold;               /* forward: an element whose word is below it is dropped */
    double scale;                     /* 1 / (1 - p); 0 when p == 1 (nothing is kept) */
    int64_t count;                    /* elements */
};

/* Elements per Philox block, and per mask word. */
#define OCD_DROPOUT_BLOCK 4
#define OCD_DROPOUT_WORD 32

/* The keep bits of elements 4 * block .. 4 * block + 3 in call `calls`: bit j is set when element
   4 * block + j is kept (see the file comment). */
OCD_HOST_DEVICE unsigned ocd_dropout_keep4(uint64_t seed, uint64_t calls, uint64_t block,
                                           uint64_t threshold)
{
    struct ocd_philox4 r = ocd_philox4x32_10((uint32_t)block, (uint32_t)(block >> 32),
                                             (uint32_t)calls, (uint32_t)(calls >> 32),
                                             (uint32_t)seed, (uint32_t)(seed >> 32));
    unsigned bits = 0;
    for (int j = 0; j < 4; j++) bits |= (unsigned)(r.v[j] >= threshold) << j;
    return bits;
}

/* Bytes of reserve space for `count` elements: one bit each, in whole 32-bit words. */
size_t ocd_dropout_reserve_bytes(int64_t count);

/* ---- implementations (tables in src/ops/dropout.c, dropout_train.c) ------------------------ */
cudnnStatus_t ocd_host_dropout_fwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_host_dropout_bwd(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_dropout_fwd_vec4(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_dropout_fwd_strided(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_dropout_bwd_vec4(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
cudnnStatus_t ocd_cuda_dropout_bwd_strided(cudnnHandle_t h, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_DROPOUT_H */
