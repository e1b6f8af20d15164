/* tview.c: see tview.h. */
#include "tview.h"

#include <stdlib.h>
#include <string.h>

const char *tview_layout_name(int layout)
{
    static const char *names[] = {"NCHW", "NHWC", "padded"};
    return layout >= 0 && layout < TV_LAYOUTS ? names[layout] : "?";
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
    int64_t s = layout == TV_PADDED ? 2 : 1;
    if (layout == TV_NHWC && rank >= 3) { /* C innermost, then the spatial dims, N outermost */
        v->strides[1] = (int)s;
        s *= dims[1];
        for (int d = rank - 1; d >= 2; d--) {
            v->strides[d] = (int)s;
            s *= dims[d];
        }
        v->strides[0] = (int)s;
    } else {
        for (int d = rank - 1; d >= 0; d--) {
            v->strides[d] = (int)s;
            s = s * dims[d] + (layout == TV_PADDED ? 1 : 0);
        }
    }
    v->span = 1;
    for (int d = 0; d < rank; d++) v->span += (int64_t)(dims[d] - 1) * v->strides[d];
    if (cudnnCreateTensorDescriptor(&v->desc) != CUDNN_STATUS_SUCCESS ||
        cudnnSetTensorNdDescriptor(v->desc, dtype, rank, v->dims, v->strides) != CUDNN_STATUS_SUCCESS)
        FAIL("cannot set a %s tensor descriptor", tview_layout_name(layout));
}

void tview_destroy(struct tview *v)
{
    cudnnDestroyTensorDescriptor(v->desc);
}

size_t tview_bytes(const struct tview *v)
{
    return (size_t)v->span * tdtype_size(v->dtype);
}

int64_t tview_offset(const struct tview *v, int64_t i)
{
    int64_t off = 0;
    for (int d = v->rank - 1; d >= 0; d--) {
        off += i % v->dims[d] * v->strides[d];
        i /= v->dims[d];
    }
    return off;
}

void *tview_upload(const struct tview *v, double *values)
{
    size_t bytes = tview_bytes(v);
    unsigned char *host = malloc(bytes);
    memset(host, 0xff, bytes);
    for (int64_t i = 0; values != NULL && i < v->count; i++) {
        tstore(v->dtype, host, tview_offset(v, i), values[i]);
        values[i] = tload(v->dtype, host, tview_offset(v, i));
    }
    void *buf = tbuf_from(host, bytes);
    free(host);
    return buf;
}

void tview_download(const struct tview *v, const void *buf, double *values)
{
    size_t bytes = tview_bytes(v);
    unsigned char *host = malloc(bytes);
    tbuf_download(host, buf, bytes);
    for (int64_t i = 0; i < v->count; i++) values[i] = tload(v->dtype, host, tview_offset(v, i));
    free(host);
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
