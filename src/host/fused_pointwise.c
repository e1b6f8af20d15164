/* fused_pointwise.c: the host engine of pointwise chains (problem/pointwise.h).

   Main decision: a chain runs in blocks of BLOCK elements along its innermost dimension, one
   step at a time over the whole block: each input is loaded into a double buffer, each step
   fills its slot's buffer from earlier ones (a loop the compiler keeps tight, the mode switch
   taken once per block, not per element), and each output is stored with one rounding. Rows
   are split into tiles spread over the worker threads. */
#include "problem/pointwise.h"

#include "host/parallel.h"
#include "host/typed.h"

#define BLOCK 256
#define TILE 8192

struct job {
    const struct ocd_pw_chain *c;
    int64_t row_len, tiles_per_row, tile;
};

/* Scalar offset of element (row, col) of operand o, rows numbered over the outer dims. */
static int64_t offset_of(const struct ocd_pw_chain *c, const struct ocd_pw_operand *o, int64_t row, int64_t col)
{
    int64_t off = col * o->strides[c->rank - 1];
    for (int d = c->rank - 2; d >= 0; d--) {
        off += (row % c->dims[d]) * o->strides[d];
        row /= c->dims[d];
    }
    return off;
}

static void run_block(const struct ocd_pw_chain *c, int64_t row, int64_t col, int n)
{
    double slots[OCD_PW_MAX_SLOTS][BLOCK];
    const int inner = c->rank - 1;
    for (int t = 0; t < c->ninputs; t++) {
        const struct ocd_pw_operand *o = &c->in[t];
        int64_t off = offset_of(c, o, row, col), st = o->strides[inner];
        for (int i = 0; i < n; i++) slots[t][i] = ocd_host_load(o->dtype, o->data, off + i * st);
    }
    for (int s = 0; s < c->nsteps; s++) {
        const struct ocd_pw_step *step = &c->steps[s];
        double *dst = slots[c->ninputs + s];
        const double *x = slots[step->x], *b = step->b >= 0 ? slots[step->b] : x;
        for (int i = 0; i < n; i++) dst[i] = ocd_pw_apply(step, x[i], b[i]);
    }
    for (int t = 0; t < c->noutputs; t++) {
        const struct ocd_pw_operand *o = &c->out[t];
        int64_t off = offset_of(c, o, row, col), st = o->strides[inner];
        const double *v = slots[c->out_slot[t]];
        for (int i = 0; i < n; i++) ocd_host_store(o->dtype, (void *)o->data, off + i * st, v[i]);
    }
}

static void run_tiles(void *ctx, int64_t begin, int64_t end)
{
    const struct job *j = (const struct job *)ctx;
    for (int64_t t = begin; t < end; t++) {
        int64_t row = t / j->tiles_per_row, col0 = (t % j->tiles_per_row) * j->tile;
        int64_t col_end = col0 + j->tile < j->row_len ? col0 + j->tile : j->row_len;
        for (int64_t col = col0; col < col_end; col += BLOCK)
            run_block(j->c, row, col, (int)(col_end - col < BLOCK ? col_end - col : BLOCK));
    }
}

cudnnStatus_t ocd_host_pw_chain(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes)
{
    (void)handle, (void)ws, (void)ws_bytes;
    const struct ocd_pw_chain *c = (const struct ocd_pw_chain *)problem;
    struct job j = {c, c->dims[c->rank - 1], 0, TILE};
    j.tiles_per_row = (j.row_len + TILE - 1) / TILE;
    int64_t rows = c->count / j.row_len;
    ocd_parallel_for(rows * j.tiles_per_row, 1, run_tiles, &j);
    return CUDNN_STATUS_SUCCESS;
}
