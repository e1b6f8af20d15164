/* tensor_ops.c: the host elementwise engine (see problem/ewise.h for the problem it takes).

   Main decision: work in blocks of BLOCK elements along the innermost dimension, in three
   simple loops per block: load each input into a double buffer (one loop per storage type and
   stride kind, so the conversion loops vectorize), compute the op over the buffers, then blend
   with y (only when beta != 0) and store with rounding. Every type, stride and broadcast pattern
   goes through the same code; a packed problem is one long unit-stride row. Work is split into
   tiles of at most TILE elements of one row, spread over the worker threads. Compute is in
   double, which is exact for every storage type's conversions and at least as precise as the
   float compute type the API documents. */
#include "problem/ewise.h"

#include "host/parallel.h"
#include "host/typed.h"

#include <math.h>
#include <string.h>

#define BLOCK 256
#define TILE 8192

/* ---- typed block access -------------------------------------------------------------------- */

#define LOAD_LOOP(T, CONV)                                                                      \
    do {                                                                                        \
        const T *p = (const T *)base + off;                                                     \
        if (stride == 1)                                                                        \
            for (int i = 0; i < n; i++) out[i] = CONV(p[i]);                                    \
        else                                                                                    \
            for (int i = 0; i < n; i++) out[i] = CONV(p[(int64_t)i * stride]);                  \
    } while (0)
#define AS_DOUBLE(x) ((double)(x))

/* out[i] = element (off + i * stride) of base, as double (stride 0: one value repeated). */
static void load_block(cudnnDataType_t t, const void *base, int64_t off, int64_t stride, int n, double *out)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: LOAD_LOOP(float, AS_DOUBLE); return;
    case CUDNN_DATA_DOUBLE: LOAD_LOOP(double, AS_DOUBLE); return;
    case CUDNN_DATA_HALF: LOAD_LOOP(uint16_t, ocd_half_to_float); return;
    case CUDNN_DATA_BFLOAT16: LOAD_LOOP(uint16_t, ocd_bf16_to_float); return;
    case CUDNN_DATA_INT8: LOAD_LOOP(int8_t, AS_DOUBLE); return;
    case CUDNN_DATA_UINT8: LOAD_LOOP(uint8_t, AS_DOUBLE); return;
    case CUDNN_DATA_INT32: LOAD_LOOP(int32_t, AS_DOUBLE); return;
    default: /* the API admits no other scalar type here */
        for (int i = 0; i < n; i++) out[i] = ocd_host_load(t, base, off + (int64_t)i * stride);
        return;
    }
}

static void store_block(cudnnDataType_t t, void *base, int64_t off, int64_t stride, int n, const double *in)
{
    switch (t) {
    case CUDNN_DATA_FLOAT: {
        float *p = (float *)base + off;
        if (stride == 1)
            for (int i = 0; i < n; i++) p[i] = (float)in[i];
        else
            for (int i = 0; i < n; i++) p[(int64_t)i * stride] = (float)in[i];
        return;
    }
    case CUDNN_DATA_DOUBLE: {
        double *p = (double *)base + off;
        for (int i = 0; i < n; i++) p[(int64_t)i * stride] = in[i];
        return;
    }
    default:
        for (int i = 0; i < n; i++) ocd_host_store(t, base, off + (int64_t)i * stride, in[i]);
        return;
    }
}

#define FILL_LOOP(T)                                                                            \
    do {                                                                                        \
        T v;                                                                                    \
        memcpy(&v, &bits, sizeof v);                                                            \
        T *p = (T *)base + off;                                                                 \
        for (int64_t i = 0; i < n; i++) p[i * stride] = v;                                      \
    } while (0)

/* Stores n copies of the bit pattern (of the type's scalar size) at off + i * stride. */
static void fill_run(cudnnDataType_t t, void *base, int64_t off, int64_t stride, int64_t n, uint64_t bits)
{
    switch (ocd_dtype_scalar_size(t)) {
    case 1: FILL_LOOP(uint8_t); return;
    case 2: FILL_LOOP(uint16_t); return;
    case 4: FILL_LOOP(uint32_t); return;
    default: FILL_LOOP(uint64_t); return;
    }
}

/* ---- the ops ----------------------------------------------------------------------------------- */

static double nan_min(double x, double y, bool propagate)
{
    if (propagate && (isnan(x) || isnan(y))) return NAN;
    return fmin(x, y); /* fmin returns the other operand when one is NaN */
}

static double nan_max(double x, double y, bool propagate)
{
    if (propagate && (isnan(x) || isnan(y))) return NAN;
    return fmax(x, y);
}

/* r = op(alpha1 * a, alpha2 * b) over a block. */
static void compute_block(const struct ocd_ewise *e, int n, const double *a, const double *b, double *r)
{
    const double s1 = e->alpha1, s2 = e->alpha2;
    switch (e->op) {
    case OCD_EWISE_FILL: return; /* not reached: fills never compute */
    case OCD_EWISE_COPY: for (int i = 0; i < n; i++) r[i] = s1 * a[i]; return;
    case OCD_EWISE_ADD: for (int i = 0; i < n; i++) r[i] = s1 * a[i] + s2 * b[i]; return;
    case OCD_EWISE_MUL: for (int i = 0; i < n; i++) r[i] = (s1 * a[i]) * (s2 * b[i]); return;
    case OCD_EWISE_MIN: for (int i = 0; i < n; i++) r[i] = nan_min(s1 * a[i], s2 * b[i], e->propagate_nan); return;
    case OCD_EWISE_MAX: for (int i = 0; i < n; i++) r[i] = nan_max(s1 * a[i], s2 * b[i], e->propagate_nan); return;
    case OCD_EWISE_SQRT: for (int i = 0; i < n; i++) r[i] = sqrt(s1 * a[i]); return;
    case OCD_EWISE_NOT: for (int i = 0; i < n; i++) r[i] = 1.0 - s1 * a[i]; return;
    }
}

/* ---- tiles ----------------------------------------------------------------------------------- */

struct job {
    const struct ocd_ewise *e;
    int64_t inner, tiles_per_row;
};

/* Offsets, in scalars, of the first element of row `row` (the dims before the innermost). */
static void row_offsets(const struct ocd_ewise *e, int64_t row, int64_t off[3])
{
    off[0] = off[1] = off[2] = 0;
    for (int d = e->rank - 2; d >= 0; d--) {
        int64_t i = row % e->dims[d];
        row /= e->dims[d];
        off[0] += i * e->y.strides[d];
        off[1] += i * e->a.strides[d];
        off[2] += i * e->b.strides[d];
    }
}

static void run_segment(const struct ocd_ewise *e, const int64_t row_off[3], int64_t begin, int64_t end)
{
    const int inputs = ocd_ewise_inputs(e->op);
    const int rd = e->rank - 1;
    void *y = (void *)e->y.data;
    if (e->op == OCD_EWISE_FILL) {
        fill_run(e->y.dtype, y, row_off[0] + begin * e->y.strides[rd], e->y.strides[rd], end - begin, e->fill);
        return;
    }
    double a[BLOCK], b[BLOCK], r[BLOCK], old[BLOCK];
    for (int64_t i = begin; i < end; i += BLOCK) {
        int n = (int)OCD_MIN((int64_t)BLOCK, end - i);
        int64_t yo = row_off[0] + i * e->y.strides[rd];
        load_block(e->a.dtype, e->a.data, row_off[1] + i * e->a.strides[rd], e->a.strides[rd], n, a);
        if (inputs == 2)
            load_block(e->b.dtype, e->b.data, row_off[2] + i * e->b.strides[rd], e->b.strides[rd], n, b);
        compute_block(e, n, a, b, r);
        if (e->beta != 0) { /* beta == 0: y is not read, so NaN already there cannot leak */
            load_block(e->y.dtype, y, yo, e->y.strides[rd], n, old);
            for (int k = 0; k < n; k++) r[k] += e->beta * old[k];
        }
        store_block(e->y.dtype, y, yo, e->y.strides[rd], n, r);
    }
}

static void run_tiles(void *ctx, int64_t begin, int64_t end)
{
    const struct job *j = ctx;
    int64_t off[3], row = -1;
    for (int64_t t = begin; t < end; t++) {
        int64_t r = t / j->tiles_per_row, first = (t % j->tiles_per_row) * TILE;
        if (r != row) {
            row = r;
            row_offsets(j->e, row, off);
        }
        run_segment(j->e, off, first, OCD_MIN(first + TILE, j->inner));
    }
}

cudnnStatus_t ocd_host_ewise_run(cudnnHandle_t handle, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)handle;
    (void)workspace;
    (void)workspace_bytes;
    const struct ocd_ewise *e = problem;
    struct job j = {e, e->dims[e->rank - 1], 0};
    j.tiles_per_row = (j.inner + TILE - 1) / TILE;
    int64_t tiles = e->count / j.inner * j.tiles_per_row;
    /* About 16k elements per thread at least: below that, threads cost more than they save. */
    int64_t per_tile = OCD_MIN(j.inner, (int64_t)TILE);
    ocd_parallel_for(tiles, OCD_MAX((int64_t)1, 16384 / per_tile), run_tiles, &j);
    return CUDNN_STATUS_SUCCESS;
}
