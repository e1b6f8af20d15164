/* tlayout.c: test tensors in any layout (see tlayout.h). */
#include "tlayout.h"

#include <stdlib.h>
#include <string.h>

const char *tl_layout_name(int layout)
{
    static const char *const names[] = {"NCHW", "NHWC", "NCHW+gaps", "NHWC+gaps", "strided"};
    return layout >= 0 && layout < TL_LAYOUTS ? names[layout] : "?";
}

void tl_init(struct tl_tensor *t, cudnnDataType_t dtype, int rank, const int dims[], int layout)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->rank = rank;
    t->count = 1;
    for (int d = 0; d < rank; d++) {
        t->dims[d] = dims[d];
        t->count *= dims[d];
    }
    int64_t spatial = t->count / ((int64_t)dims[0] * dims[1]);
    int64_t s = 1;
    switch (layout) {
    case TL_NHWC:
    case TL_NHWC_GAPS:
        t->strides[1] = 1;
        s = dims[1];
        for (int d = rank - 1; d >= 2; d--) {
            t->strides[d] = (int)s;
            s *= dims[d];
        }
        t->strides[0] = (int)(layout == TL_NHWC_GAPS ? s + 7 : s);
        break;
    case TL_NCHW_GAPS:
        for (int d = rank - 1; d >= 2; d--) {
            t->strides[d] = (int)s;
            s *= dims[d];
        }
        t->strides[1] = (int)(spatial + 3);
        t->strides[0] = (int)((spatial + 3) * dims[1] + 5);
        break;
    default: /* NCHW, and STRIDED: the same order, each dimension padded */
        s = layout == TL_STRIDED ? 2 : 1;
        for (int d = rank - 1; d >= 0; d--) {
            t->strides[d] = (int)s;
            s = s * dims[d] + (layout == TL_STRIDED ? 1 : 0);
        }
        break;
    }
    int64_t last = 0;
    for (int d = 0; d < rank; d++) last += (int64_t)(dims[d] - 1) * t->strides[d];
    t->span = last + 1;
    if (cudnnCreateTensorDescriptor(&t->desc) != CUDNN_STATUS_SUCCESS ||
        cudnnSetTensorNdDescriptor(t->desc, dtype, rank, t->dims, t->strides) != CUDNN_STATUS_SUCCESS)
        FAIL("cannot describe a %s tensor", tl_layout_name(layout));
}

void tl_destroy(struct tl_tensor *t)
{
    cudnnDestroyTensorDescriptor(t->desc);
    t->desc = NULL;
}

size_t tl_bytes(const struct tl_tensor *t)
{
    return (size_t)t->span * tdtype_size(t->dtype);
}

int64_t tl_offset(const struct tl_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->rank - 1; d >= 0; d--) {
        off += (i % t->dims[d]) * t->strides[d];
        i /= t->dims[d];
    }
    return off;
}

void tl_random(cudnnDataType_t dtype, double *values, int64_t n, double lo, double hi)
{
    unsigned char scalar[8];
    for (int64_t i = 0; i < n; i++) {
        tstore(dtype, scalar, 0, trand_uniform(lo, hi));
        values[i] = tload(dtype, scalar, 0);
    }
}

void *tl_upload(const struct tl_tensor *t, const double *values)
{
    size_t bytes = tl_bytes(t);
    unsigned char *img = malloc(bytes);
    memset(img, 0xff, bytes);
    if (values)
        for (int64_t i = 0; i < t->count; i++) tstore(t->dtype, img, tl_offset(t, i), values[i]);
    void *buf = tbuf_from(img, bytes);
    free(img);
    return buf;
}

bool tl_download(const struct tl_tensor *t, const void *buf, double *values)
{
    size_t bytes = tl_bytes(t), es = tdtype_size(t->dtype);
    unsigned char *img = malloc(bytes), *mark = calloc((size_t)t->span, 1);
    tbuf_download(img, buf, bytes);
    for (int64_t i = 0; i < t->count; i++) {
        int64_t off = tl_offset(t, i);
        values[i] = tload(t->dtype, img, off);
        mark[off] = 1;
    }
    bool clean = true;
    for (int64_t o = 0; o < t->span && clean; o++)
        for (size_t b = 0; b < es && !mark[o]; b++) clean = img[o * es + b] == 0xff;
    free(img);
    free(mark);
    if (!clean) FAIL("a byte between the elements of a tensor was written");
    return clean;
}

bool tl_check(const struct tl_tensor *t, const void *buf, const double *want, double tol, const char *what)
{
    double *got = malloc((size_t)t->count * sizeof *got);
    bool ok = tl_download(t, buf, got);
    ok = tcompare(CUDNN_DATA_DOUBLE, got, want, t->count, tol, what) && ok;
    free(got);
    return ok;
}

void *tl_snapshot(const struct tl_tensor *t, const void *buf)
{
    void *img = malloc(tl_bytes(t));
    tbuf_download(img, buf, tl_bytes(t));
    return img;
}

bool tl_unchanged(const struct tl_tensor *t, const void *buf, const void *snapshot)
{
    void *now = tl_snapshot(t, buf);
    bool same = memcmp(now, snapshot, tl_bytes(t)) == 0;
    free(now);
    return same;
}

const void *tl_scalar(cudnnDataType_t t, double v, double storage[1])
{
    if (t == CUDNN_DATA_DOUBLE) {
        storage[0] = v;
    } else {
        float f = (float)v;
        memcpy(storage, &f, sizeof f);
    }
    return storage;
}
