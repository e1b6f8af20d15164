/* transform.c: reference padding and folding (see transform.h). */
#include "ref/transform.h"

#include "test.h"

#include <stdlib.h>

static int blocks_of(const struct ref_fold *f)
{
    int b = 1;
    for (int d = 2; d < f->rank; d++) b *= f->factor[d];
    return b;
}

void ref_fold_dims(const struct ref_fold *f, const int src[], int dst[])
{
    int blocks = blocks_of(f);
    for (int d = 0; d < f->rank; d++) {
        int pad = f->pad_before[d] + f->pad_after[d];
        if (!f->unfold) dst[d] = d == 1 ? (src[d] + pad) * blocks : (src[d] + pad + f->factor[d] - 1) / f->factor[d];
        else dst[d] = d == 1 ? src[d] / blocks - pad : src[d] * f->factor[d] - pad;
    }
}

void ref_fold(const struct ref_fold *f, double alpha, const struct rtensor *st, const void *src, double beta,
              const struct rtensor *dt, const void *dst_before, double *want)
{
    int64_t span = rt_span(dt);
    for (int64_t i = 0; i < span; i++) want[i] = tload(dt->dtype, dst_before, i);
    /* the transformed value of every destination element: 0 (padding) unless a source lands there */
    int64_t count = rt_count(dt);
    double *value = calloc((size_t)count, sizeof(double));
    int blocks = blocks_of(f), idx[RT_MAX_DIMS] = {0};
    int cp = f->unfold ? st->dims[1] / blocks : st->dims[1] + f->pad_before[1] + f->pad_after[1];
    do {
        int to[RT_MAX_DIMS], blk = 0;
        bool inside = true;
        if (!f->unfold) {
            for (int d = 2; d < f->rank; d++) {
                int xp = idx[d] + f->pad_before[d];
                to[d] = xp / f->factor[d];
                blk = blk * f->factor[d] + xp % f->factor[d];
            }
            to[0] = idx[0] + f->pad_before[0];
            to[1] = blk * cp + idx[1] + f->pad_before[1];
        } else {
            blk = idx[1] / cp;
            for (int d = f->rank - 1; d >= 2; d--) {
                to[d] = idx[d] * f->factor[d] + blk % f->factor[d] - f->pad_before[d];
                blk /= f->factor[d];
            }
            to[0] = idx[0] - f->pad_before[0];
            to[1] = idx[1] % cp - f->pad_before[1];
        }
        int64_t linear = 0;
        for (int d = 0; d < f->rank; d++) {
            inside &= to[d] >= 0 && to[d] < dt->dims[d];
            linear = linear * dt->dims[d] + to[d];
        }
        if (inside) value[linear] = tload(st->dtype, src, rt_offset(st, idx));
    } while (rt_next(st->rank, st->dims, idx));
    int64_t linear = 0;
    do {
        int64_t o = rt_offset(dt, idx);
        double v = alpha * value[linear++];
        if (beta != 0) v += beta * tload(dt->dtype, dst_before, o);
        want[o] = ref_quantize(dt->dtype, v);
    } while (rt_next(dt->rank, dt->dims, idx));
    free(value);
}
