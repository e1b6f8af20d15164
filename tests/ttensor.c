/* ttensor.c: test tensors of every layout (see ttensor.h). */
#include "ttensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A value no op produces from the tests' inputs: the gaps hold it, so a stray write shows. */
#define SENTINEL (-12345.0)

const char *tlayout_name(enum tlayout l)
{
    static const char *const names[] = {"NCHW", "NHWC", "gaps", "NHWC+gaps"};
    return names[l];
}

void ttensor_init(struct ttensor *t, cudnnDataType_t dtype, int rank, const int dims[], enum tlayout layout)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->layout = layout;
    t->rank = rank;
    t->count = 1;
    for (int d = 0; d < rank; d++) {
        t->dims[d] = dims[d];
        t->count *= dims[d];
    }
    bool last = (layout == TL_NHWC || layout == TL_NHWC_GAPS) && rank >= 3;
    /* The order of dims from innermost to outermost. */
    int order[8], n = 0;
    if (last) {
        order[n++] = 1;
        for (int d = rank - 1; d >= 2; d--) order[n++] = d;
        order[n++] = 0;
    } else {
        for (int d = rank - 1; d >= 0; d--) order[n++] = d;
    }
    int64_t s = 1;
    for (int i = 0; i < n; i++) {
        int d = order[i];
        if (layout == TL_GAPS) s = i == 0 ? 2 : s + 1;
        if (layout == TL_NHWC_GAPS && i == 1) s += 3;
        t->strides[d] = (int)s;
        s *= dims[d];
    }
    t->span = 1;
    for (int d = 0; d < rank; d++) t->span += (int64_t)(dims[d] - 1) * t->strides[d];
    if (cudnnCreateTensorDescriptor(&t->desc) != CUDNN_STATUS_SUCCESS ||
        cudnnSetTensorNdDescriptor(t->desc, dtype, rank, t->dims, t->strides) != CUDNN_STATUS_SUCCESS)
        FAIL("cannot set a %s tensor descriptor of rank %d", tlayout_name(layout), rank);
}

void ttensor_free(struct ttensor *t)
{
    cudnnDestroyTensorDescriptor(t->desc);
    t->desc = NULL;
}

int64_t ttensor_offset(const struct ttensor *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->rank - 1; d >= 0; d--) {
        off += (i % t->dims[d]) * t->strides[d];
        i /= t->dims[d];
    }
    return off;
}

static size_t buffer_bytes(const struct ttensor *t)
{
    return (size_t)(t->span + t->shift) * tdtype_size(t->dtype);
}

static char *base_of(const struct ttensor *t, const void *ptr)
{
    return (char *)ptr - t->shift * (int64_t)tdtype_size(t->dtype);
}

void ttensor_release(const struct ttensor *t, void *ptr)
{
    tbuf_free(base_of(t, ptr));
}

const void *tscale(cudnnDataType_t t, double v, union tscalar *store)
{
    if (t == CUDNN_DATA_DOUBLE) store->d = v;
    else store->f = (float)v;
    return store;
}

void *ttensor_upload(const struct ttensor *t, double *logical)
{
    char *host = malloc(buffer_bytes(t));
    for (int64_t i = 0; i < t->span + t->shift; i++) tstore(t->dtype, host, i, SENTINEL);
    for (int64_t i = 0; i < t->count; i++) {
        int64_t off = ttensor_offset(t, i) + t->shift;
        tstore(t->dtype, host, off, logical[i]);
        logical[i] = tload(t->dtype, host, off);
    }
    char *dev = tbuf_from(host, buffer_bytes(t));
    free(host);
    return dev + t->shift * (int64_t)tdtype_size(t->dtype);
}

static bool read_back(const struct ttensor *t, const void *dev, double *logical, const char *what,
                      const double *expect)
{
    int64_t total = t->span + t->shift;
    char *host = malloc(buffer_bytes(t));
    char *touched = calloc((size_t)total, 1);
    tbuf_download(host, base_of(t, dev), buffer_bytes(t));
    bool ok = true;
    for (int64_t i = 0; i < t->count; i++) {
        int64_t off = ttensor_offset(t, i) + t->shift;
        touched[off] = 1;
        double v = tload(t->dtype, host, off);
        if (logical) logical[i] = v;
        if (expect && ok && !(v == expect[i] || (isnan(v) && isnan(expect[i])))) {
            FAIL("%s: element %lld changed from %g to %g", what, (long long)i, expect[i], v);
            ok = false;
        }
    }
    char probe[8]; /* the sentinel as the type stores it */
    tstore(t->dtype, probe, 0, SENTINEL);
    for (int64_t i = 0; i < total && ok; i++) {
        if (touched[i]) continue;
        double v = tload(t->dtype, host, i);
        if (v != tload(t->dtype, probe, 0)) {
            FAIL("%s: a gap between elements was written (scalar %lld of %lld holds %g)", what, (long long)i,
                 (long long)total, v);
            ok = false;
        }
    }
    free(touched);
    free(host);
    return ok;
}

bool ttensor_download(const struct ttensor *t, const void *dev, double *logical, const char *what)
{
    return read_back(t, dev, logical, what, NULL);
}

bool ttensor_unchanged(const struct ttensor *t, const void *dev, const double *logical, const char *what)
{
    return read_back(t, dev, NULL, what, logical);
}

double *trandom_values(int64_t n, double lo, double hi)
{
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = trand_uniform(lo, hi);
    return v;
}

double *tconst_values(int64_t n, double c)
{
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = c;
    return v;
}
