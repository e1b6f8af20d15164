/* tensors.c: see tensors.h. */
#include "tensors.h"

#include <stdlib.h>
#include <string.h>

cudnnTensorDescriptor_t tdesc(const struct rtensor *t)
{
    cudnnTensorDescriptor_t d = NULL;
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    CHECK_OK(cudnnSetTensorNdDescriptor(d, t->dtype, t->rank, t->dims, t->strides));
    return d;
}

size_t rt_bytes(const struct rtensor *t)
{
    return (size_t)rt_span(t) * tdtype_size(t->dtype);
}

void *thost_random(const struct rtensor *t, double lo, double hi)
{
    void *p = malloc(rt_bytes(t));
    tfill_random(t->dtype, p, rt_span(t), lo, hi);
    return p;
}

void *thost_poison(const struct rtensor *t)
{
    void *p = malloc(rt_bytes(t));
    memset(p, 0xff, rt_bytes(t));
    return p;
}

const void *tscale(struct tscale *s, cudnnDataType_t data_type, double v)
{
    s->f = (float)v;
    s->d = v;
    return data_type == CUDNN_DATA_DOUBLE ? (const void *)&s->d : (const void *)&s->f;
}

bool tcompare_span(const struct rtensor *t, const void *dev, const double *want, double tol, const char *what)
{
    void *got = malloc(rt_bytes(t));
    tbuf_download(got, dev, rt_bytes(t));
    bool ok = tcompare(t->dtype, got, want, rt_span(t), tol >= 0 ? tol : ttolerance(t->dtype), what);
    free(got);
    return ok;
}
