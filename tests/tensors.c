/* tensors.c: see tensors.h. */
#include "tensors.h"

#include <stdlib.h>
#include <string.h>

/* A descriptor of explicit dims and strides; a failure is recorded by CHECK_OK. */
static cudnnTensorDescriptor_t desc_nd(cudnnDataType_t dtype, int rank, const int dims[], const int strides[])
{
    cudnnTensorDescriptor_t d = NULL;
    CHECK_OK(cudnnCreateTensorDescriptor(&d));
    CHECK_OK(cudnnSetTensorNdDescriptor(d, dtype, rank, dims, strides));
    return d;
}

/* A malloc'ed host buffer, every byte 0xFF. */
static void *poisoned(size_t bytes)
{
    void *p = malloc(bytes);
    memset(p, 0xff, bytes);
    return p;
}

/* ---- tview ---------------------------------------------------------------------------------- */

const char *tview_layout_name(int layout)
{
    static const char *names[] = {"NCHW", "NHWC", "padded", "NHWC padded", "NCHW padded", "NCHW_VECT_C"};
    return layout >= 0 && layout <= TV_NCHW_VECT ? names[layout] : "?";
}

void tview_init(struct tview *v, cudnnDataType_t dtype, int rank, const int dims[], int layout)
{
    memset(v, 0, sizeof *v);
    v->dtype = dtype;
    v->rank = rank;
    v->count = 1;
    for (int d = 0; d < rank; d++) {
        v->dims[d] = dims[d];
        v->count *= dims[d];
    }
    v->vect = 1;
    if (layout == TV_NCHW_VECT) { /* N, C / vect, the spatial dims, then the vector's scalars */
        v->vect = dtype == CUDNN_DATA_INT8x32 ? 32 : 4;
        int64_t s = v->vect;
        for (int d = rank - 1; d >= 2; d--) {
            v->strides[d] = (int)s;
            s *= dims[d];
        }
        v->strides[1] = (int)s;
        v->strides[0] = (int)(s * (dims[1] / v->vect));
        v->span = v->count;
        CHECK_OK(cudnnCreateTensorDescriptor(&v->desc));
        CHECK_OK(cudnnSetTensorNdDescriptorEx(v->desc, CUDNN_TENSOR_NCHW_VECT_C, dtype, rank, v->dims));
        return;
    }
    int64_t s = layout == TV_PADDED ? 2 : 1;
    bool last = (layout == TV_NHWC || layout == TV_NHWC_PADDED) && rank >= 3;
    if (last) { /* C innermost, then the spatial dims, N outermost */
        v->strides[1] = (int)s;
        s = s * dims[1] + (layout == TV_NHWC_PADDED ? 3 : 0);
        for (int d = rank - 1; d >= 2; d--) {
            v->strides[d] = (int)s;
            s *= dims[d];
        }
        v->strides[0] = (int)s;
    } else {
        for (int d = rank - 1; d >= 0; d--) {
            v->strides[d] = (int)s;
            int64_t gap = layout == TV_PADDED ? 1 : layout == TV_NCHW_PADDED && d == 2 ? 3 : layout == TV_NCHW_PADDED && d == 1 ? 5 : 0;
            s = s * dims[d] + gap;
        }
    }
    v->span = 1;
    for (int d = 0; d < rank; d++) v->span += (int64_t)(dims[d] - 1) * v->strides[d];
    v->desc = desc_nd(dtype, rank, v->dims, v->strides);
}

void tview_destroy(struct tview *v)
{
    cudnnDestroyTensorDescriptor(v->desc);
}

size_t tview_bytes(const struct tview *v)
{
    return (size_t)(v->span + v->shift) * tdtype_size(v->dtype);
}

/* The buffer's start, from the first element's address. */
static unsigned char *base_of(const struct tview *v, const void *buf)
{
    return (unsigned char *)buf - v->shift * (int64_t)tdtype_size(v->dtype);
}

void tview_free(const struct tview *v, void *buf)
{
    tbuf_free(base_of(v, buf));
}

int64_t tview_offset(const struct tview *v, int64_t i)
{
    int64_t off = 0;
    for (int d = v->rank - 1; d >= 0; d--) {
        int64_t idx = i % v->dims[d];
        off += d == 1 && v->vect > 1 ? idx / v->vect * v->strides[1] + idx % v->vect : idx * v->strides[d];
        i /= v->dims[d];
    }
    return off;
}

/* The host image of a view's buffer holding values (rounded; values updated), gaps poisoned. */
static unsigned char *host_image(const struct tview *v, double *values)
{
    unsigned char *host = poisoned(tview_bytes(v));
    for (int64_t i = 0; values != NULL && i < v->count; i++) {
        tstore(v->dtype, host, v->shift + tview_offset(v, i), values[i]);
        values[i] = tload(v->dtype, host, v->shift + tview_offset(v, i));
    }
    return host;
}

void *tview_upload(const struct tview *v, double *values)
{
    unsigned char *host = host_image(v, values);
    unsigned char *buf = tbuf_from(host, tview_bytes(v));
    free(host);
    return buf + v->shift * (int64_t)tdtype_size(v->dtype);
}

void tview_store(const struct tview *v, void *buf, double *values)
{
    unsigned char *host = host_image(v, values);
    tbuf_upload(base_of(v, buf), host, tview_bytes(v));
    free(host);
}

void tview_download(const struct tview *v, const void *buf, double *values)
{
    unsigned char *host = tbuf_snapshot(base_of(v, buf), tview_bytes(v));
    for (int64_t i = 0; i < v->count; i++) values[i] = tload(v->dtype, host, v->shift + tview_offset(v, i));
    free(host);
}

bool tview_gaps_intact(const struct tview *v, const void *buf, const char *what)
{
    size_t bytes = tview_bytes(v), size = tdtype_size(v->dtype);
    unsigned char *host = tbuf_snapshot(base_of(v, buf), bytes);
    for (int64_t i = 0; i < v->count; i++) /* mark the elements as poison too, then look at all */
        memset(host + (v->shift + tview_offset(v, i)) * (int64_t)size, 0xff, size);
    size_t bad = 0;
    while (bad < bytes && host[bad] == 0xff) bad++;
    free(host);
    if (bad < bytes) FAIL("%s: scalar %zu of the buffer lies outside the tensor and was written", what, bad / size);
    return bad == bytes;
}

bool tview_holds(const struct tview *v, const void *buf, const double *values, const char *what)
{
    double *now = malloc(sizeof(double) * (size_t)v->count);
    tview_download(v, buf, now);
    int64_t i = 0;
    while (i < v->count && (now[i] == values[i] || (now[i] != now[i] && values[i] != values[i]))) i++;
    if (i < v->count) FAIL("%s: element %lld changed from %g to %g", what, (long long)i, values[i], now[i]);
    free(now);
    return i == v->count;
}

bool tview_check(const struct tview *v, const void *buf, const double *want, const char *what)
{
    double *got = malloc(sizeof(double) * (size_t)v->count);
    tview_download(v, buf, got);
    /* tcompare reads typed scalars: hand it the values as doubles */
    bool ok = tcompare(CUDNN_DATA_DOUBLE, got, want, v->count, ttolerance(v->dtype), what);
    free(got);
    return ok;
}

double *tview_random(int64_t n, double lo, double hi)
{
    double *values = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) values[i] = trand_uniform(lo, hi);
    return values;
}

bool tview_check_blend(const struct tview *v, const void *buf, const double *raw, const double *prior, double alpha,
                       double beta, double tol, const char *what)
{
    double *want = malloc(sizeof(double) * (size_t)v->count), *got = malloc(sizeof(double) * (size_t)v->count);
    for (int64_t i = 0; i < v->count; i++) want[i] = alpha * raw[i] + (beta == 0 ? 0 : beta * prior[i]);
    tview_download(v, buf, got);
    bool ok = tview_gaps_intact(v, buf, what) && tcompare(CUDNN_DATA_DOUBLE, got, want, v->count, tol, what);
    free(want);
    free(got);
    return ok;
}

double *tview_fill(int64_t n, double value)
{
    double *values = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) values[i] = value;
    return values;
}

void tbad_init(struct tbad *b)
{
    const int dims[4] = {2, 3, 4, 5}, other[4] = {2, 3, 5, 4};
    tview_init(&b->f, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    tview_init(&b->nhwc, CUDNN_DATA_FLOAT, 4, dims, TV_NHWC);
    tview_init(&b->dbl, CUDNN_DATA_DOUBLE, 4, dims, TV_NCHW);
    tview_init(&b->other, CUDNN_DATA_FLOAT, 4, other, TV_NCHW);
    tview_init(&b->i8, CUDNN_DATA_INT8, 4, dims, TV_NCHW);
    b->x = tview_random(120, -1, 1);
    b->y = tview_fill(120, 3.0);
    b->px = tview_upload(&b->f, b->x);
    b->py = tview_upload(&b->f, b->y);
    b->pi = tview_upload(&b->i8, b->y);
}

void tbad_free(struct tbad *b)
{
    tview_free(&b->f, b->px);
    tview_free(&b->f, b->py);
    tview_free(&b->i8, b->pi);
    struct tview *all[] = {&b->f, &b->nhwc, &b->dbl, &b->other, &b->i8};
    for (int i = 0; i < 5; i++) tview_destroy(all[i]);
    free(b->x);
    free(b->y);
}

void *tbuf_snapshot(const void *buf, size_t bytes)
{
    void *host = malloc(bytes);
    tbuf_download(host, buf, bytes);
    return host;
}

bool tbuf_unchanged(const void *buf, const void *snapshot, size_t bytes, const char *what)
{
    void *now = tbuf_snapshot(buf, bytes);
    bool same = memcmp(now, snapshot, bytes) == 0;
    free(now);
    if (!same) FAIL("%s: written by a call that failed", what);
    return same;
}

/* ---- flat arrays of values ------------------------------------------------------------------ */

void *tvalues_upload(cudnnDataType_t t, double *v, int64_t n)
{
    size_t bytes = (size_t)n * tdtype_size(t);
    unsigned char *host = malloc(bytes + 1);
    for (int64_t i = 0; i < n; i++) {
        tstore(t, host, i, v[i]);
        v[i] = tload(t, host, i);
    }
    void *dev = tbuf_from(host, bytes);
    free(host);
    return dev;
}

double *tvalues_download(cudnnDataType_t t, const void *dev, int64_t n)
{
    unsigned char *host = tbuf_snapshot(dev, (size_t)n * tdtype_size(t));
    double *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = tload(t, host, i);
    free(host);
    return v;
}

bool tvalues_check(cudnnDataType_t t, const void *dev, const double *want, int64_t n, double tol, const char *what)
{
    double *got = tvalues_download(t, dev, n);
    /* tcompare reads typed scalars: hand it the values as doubles */
    bool ok = tcompare(CUDNN_DATA_DOUBLE, got, want, n, tol, what);
    free(got);
    return ok;
}

const void *tscale(struct tscale *s, cudnnDataType_t data_type, double v)
{
    s->f = (float)v;
    s->d = v;
    return data_type == CUDNN_DATA_DOUBLE ? (const void *)&s->d : (const void *)&s->f;
}

/* ---- reference layouts ---------------------------------------------------------------------- */

cudnnTensorDescriptor_t tdesc(const struct rtensor *t)
{
    return desc_nd(t->dtype, t->rank, t->dims, t->strides);
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
    return poisoned(rt_bytes(t));
}

bool tcompare_span(const struct rtensor *t, const void *dev, const double *want, double tol, const char *what)
{
    void *got = tbuf_snapshot(dev, rt_bytes(t));
    bool ok = tcompare(t->dtype, got, want, rt_span(t), tol >= 0 ? tol : ttolerance(t->dtype), what);
    free(got);
    return ok;
}
