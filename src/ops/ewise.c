/* ewise.c: normalization of elementwise problems (problem/ewise.h), which every elementwise
   call builds before it walks the elementwise table (src/ops/tensor_ops.c).

   The one subtle step is the vector split. A vector type (INT8x4, UINT8x4, INT8x32) addresses
   channel c at (c / v) * stride + c % v, which is not linear in c. Splitting C into sub-dimensions
   whose extents are multiples of every operand's vector width makes it linear in each of them:
   with widths {4} C becomes (C/4, 4); with {32} (C/32, 32); with {4, 32} (C/32, 8, 4). A scalar
   operand walks the same sub-dimensions with its channel stride times each sub-dimension's
   unit. After the split, every dimension y walks backwards (a reversed view) is turned around
   in all operands (turn_reversed), so that y's strides are never negative; the pointers the
   caller gives for elements (0,...,0) are moved to where the walk begins by ocd_ewise_bind. */
#include "problem/ewise.h"

#include "core/dimgroup.h"
#include "core/dtype.h"

#include <string.h>

int ocd_ewise_inputs(enum ocd_ewise_op op)
{
    switch (op) {
    case OCD_EWISE_FILL: return 0;
    case OCD_EWISE_COPY: case OCD_EWISE_SQRT: case OCD_EWISE_NOT: return 1;
    default: return 2;
    }
}

/* Working form: up to three operands over dims in the views' logical order. */
struct shape {
    int rank, nops;
    int64_t dims[OCD_EWISE_MAX_DIMS];
    int64_t strides[3][OCD_EWISE_MAX_DIMS];
};

/* Channel sub-dimensions for the vector widths present: their extents' units (scalars of C
   per step), outermost first. Returns their number (1 when no operand is a vector type). */
static int channel_units(int widest, int narrowest, int64_t units[3])
{
    if (widest == 1) {
        units[0] = 1;
        return 1;
    }
    if (widest == narrowest) {
        units[0] = widest;
        units[1] = 1;
        return 2;
    }
    units[0] = widest;
    units[1] = narrowest;
    units[2] = 1;
    return 3;
}

static void expand(struct shape *s, const struct ocd_tensor_view *const views[3], int nops,
                   const struct ocd_tensor_view *y)
{
    int widest = 1, narrowest = 64;
    for (int k = 0; k < nops; k++) {
        int v = views[k]->vect;
        if (v > widest) widest = v;
        if (v > 1 && v < narrowest) narrowest = v;
    }
    int64_t units[3];
    int nunits = y->rank >= 2 ? channel_units(widest, narrowest, units) : 1;
    s->rank = 0;
    s->nops = nops;
    for (int d = 0; d < y->rank; d++) {
        int parts = d == 1 ? nunits : 1;
        for (int j = 0; j < parts; j++) {
            int at = s->rank++;
            int64_t unit = parts == 1 ? 1 : units[j];
            int64_t outer = j == 0 ? y->dims[d] : units[j - 1];
            s->dims[at] = parts == 1 ? y->dims[d] : outer / unit;
            for (int k = 0; k < nops; k++) {
                const struct ocd_tensor_view *v = views[k];
                int64_t st;
                if (v->dims[d] == 1 && y->dims[d] != 1) st = 0; /* broadcast */
                else if (v->vect > 1 && d == 1) st = unit >= v->vect ? unit / v->vect * v->strides[d] : unit;
                else st = unit * v->strides[d];
                s->strides[k][at] = st;
            }
        }
    }
}

/* Turns around every dim that y walks backwards, in every operand (element i of the dim
   becomes element n-1-i of each, so that the op still pairs the same elements), moving each
   operand's origin to the element its walk now begins at. */
static void turn_reversed(struct shape *s, int64_t origin[3])
{
    for (int k = 0; k < s->nops; k++) origin[k] = 0;
    for (int d = 0; d < s->rank; d++) {
        if (s->strides[0][d] >= 0) continue;
        for (int k = 0; k < s->nops; k++) {
            origin[k] += (s->dims[d] - 1) * s->strides[k][d];
            s->strides[k][d] = -s->strides[k][d];
        }
    }
}

void ocd_ewise_build(struct ocd_ewise *e, enum ocd_ewise_op op, const struct ocd_tensor_view *y,
                     const struct ocd_tensor_view *a, const struct ocd_tensor_view *b)
{
    memset(e, 0, sizeof *e);
    e->op = op;
    const struct ocd_tensor_view *views[3] = {y, a, b};
    int nops = 1 + ocd_ewise_inputs(op);
    struct shape s;
    expand(&s, views, nops, y);
    int64_t origin[3];
    turn_reversed(&s, origin);
    s.rank = ocd_dims_sort_merge(s.rank, nops, s.dims, &s.strides[0][0], OCD_EWISE_MAX_DIMS);
    if (s.rank == 0) { /* a single element */
        s.rank = 1;
        s.dims[0] = 1;
        for (int k = 0; k < nops; k++) s.strides[k][0] = 1;
    }
    e->rank = s.rank;
    e->count = 1;
    for (int d = 0; d < s.rank; d++) {
        e->dims[d] = s.dims[d];
        e->count *= s.dims[d];
    }
    struct ocd_ewise_operand *ops[3] = {&e->y, &e->a, &e->b};
    for (int k = 0; k < 3; k++) ops[k]->dtype = k < nops ? ocd_dtype_scalar(views[k]->dtype) : CUDNN_DATA_FLOAT;
    for (int k = 0; k < nops; k++) {
        ops[k]->origin = origin[k];
        for (int d = 0; d < s.rank; d++) ops[k]->strides[d] = s.strides[k][d];
    }
}

static const void *moved(const struct ocd_ewise_operand *o, const void *p)
{
    return p == NULL ? NULL : (const char *)p + o->origin * (int64_t)ocd_dtype_scalar_size(o->dtype);
}

void ocd_ewise_bind(struct ocd_ewise *e, void *y, const void *a, const void *b)
{
    e->y.data = moved(&e->y, y);
    e->a.data = moved(&e->a, a);
    e->b.data = moved(&e->b, b);
}
