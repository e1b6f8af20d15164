/* descriptors.c: tests of the tensor and filter descriptors (src/core/tensor.c): what the
   setters store and the getters return for NCHW, NHWC and NCHW_VECT_C, the size in bytes, and
   every refusal with its exact status, the descriptor keeping its previous layout. */
#include "test.h"

#include <string.h>

static cudnnTensorDescriptor_t new_tensor(void)
{
    cudnnTensorDescriptor_t t = NULL;
    CHECK_OK(cudnnCreateTensorDescriptor(&t));
    return t;
}

/* The descriptor reads back as (type, dims, strides) and occupies `bytes`. */
static void expect_layout(cudnnTensorDescriptor_t t, cudnnDataType_t type, int rank, const int dims[],
                          const int strides[], size_t bytes, const char *what)
{
    cudnnDataType_t gt = (cudnnDataType_t)-1;
    int nb = -1, gd[8], gs[8];
    size_t size = 0;
    bool ok = CHECK_OK(cudnnGetTensorNdDescriptor(t, 8, &gt, &nb, gd, gs)) &&
              CHECK_OK(cudnnGetTensorSizeInBytes(t, &size));
    ok = ok && gt == type && nb == rank && memcmp(gd, dims, sizeof(int) * (size_t)rank) == 0 &&
         memcmp(gs, strides, sizeof(int) * (size_t)rank) == 0 && size == bytes;
    if (!ok) {
        FAIL("%s: read back type %d rank %d size %zu", what, (int)gt, nb, size);
        return;
    }
    if (rank == 4) {
        int n, c, h, w, sn, sc, sh, sw;
        CHECK_OK(cudnnGetTensor4dDescriptor(t, &gt, &n, &c, &h, &w, &sn, &sc, &sh, &sw));
        CHECK(gt == type && n == dims[0] && c == dims[1] && h == dims[2] && w == dims[3] && sn == strides[0] &&
              sc == strides[1] && sh == strides[2] && sw == strides[3]);
    }
}

TEST_ONCE(tensor_4d_packed_formats)
{
    cudnnTensorDescriptor_t t = new_tensor();
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5));
    expect_layout(t, CUDNN_DATA_FLOAT, 4, (int[]){2, 3, 4, 5}, (int[]){60, 20, 5, 1}, 480, "NCHW float 2x3x4x5");
    /* NHWC: channels innermost; 1x2x5x5 float -> (50, 1, 10, 2), 200 bytes */
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 1, 2, 5, 5));
    expect_layout(t, CUDNN_DATA_FLOAT, 4, (int[]){1, 2, 5, 5}, (int[]){50, 1, 10, 2}, 200, "NHWC float 1x2x5x5");
    /* NCHW_VECT_C: logical dims, strides counted in vectors */
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 1, 16, 5, 5));
    expect_layout(t, CUDNN_DATA_INT8x4, 4, (int[]){1, 16, 5, 5}, (int[]){100, 25, 5, 1}, 400, "INT8x4 1x16x5x5");
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 2, 8, 3, 5));
    expect_layout(t, CUDNN_DATA_INT8x4, 4, (int[]){2, 8, 3, 5}, (int[]){30, 15, 5, 1}, 240, "INT8x4 2x8x3x5");
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_UINT8x4, 2, 8, 3, 5));
    expect_layout(t, CUDNN_DATA_UINT8x4, 4, (int[]){2, 8, 3, 5}, (int[]){30, 15, 5, 1}, 240, "UINT8x4 2x8x3x5");
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x32, 2, 64, 3, 5));
    expect_layout(t, CUDNN_DATA_INT8x32, 4, (int[]){2, 64, 3, 5}, (int[]){30, 15, 5, 1}, 1920, "INT8x32 2x64x3x5");
    /* the size of one element of every scalar type */
    const struct { cudnnDataType_t t; size_t bytes; } sizes[] = {
        {CUDNN_DATA_FLOAT, 4}, {CUDNN_DATA_DOUBLE, 8}, {CUDNN_DATA_HALF, 2}, {CUDNN_DATA_BFLOAT16, 2},
        {CUDNN_DATA_INT8, 1},  {CUDNN_DATA_UINT8, 1},  {CUDNN_DATA_INT32, 4}, {CUDNN_DATA_INT64, 8}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t size = 0;
        CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, sizes[i].t, 1, 3, 2, 7));
        CHECK_OK(cudnnGetTensorSizeInBytes(t, &size));
        CHECK(size == 42 * sizes[i].bytes);
    }
    CHECK_OK(cudnnDestroyTensorDescriptor(t));
}

TEST_ONCE(tensor_explicit_strides)
{
    cudnnTensorDescriptor_t t = new_tensor();
    CHECK_OK(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 1, 2, 5, 5, 50, 25, 5, 1));
    expect_layout(t, CUDNN_DATA_FLOAT, 4, (int[]){1, 2, 5, 5}, (int[]){50, 25, 5, 1}, 200, "4dEx packed");
    /* gaps between dims: the size spans them, to one past the last element */
    CHECK_OK(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_HALF, 2, 3, 4, 5, 100, 1, 24, 4));
    expect_layout(t, CUDNN_DATA_HALF, 4, (int[]){2, 3, 4, 5}, (int[]){100, 1, 24, 4}, (100 + 2 + 72 + 16 + 1) * 2,
                  "4dEx gapped NHWC-like");
    /* a vector type with explicit strides is NCHW_VECT_C, strides in vectors: what Get4d returns
       for a VECT_C descriptor can be set again */
    CHECK_OK(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_INT8x4, 1, 16, 5, 5, 100, 25, 5, 1));
    expect_layout(t, CUDNN_DATA_INT8x4, 4, (int[]){1, 16, 5, 5}, (int[]){100, 25, 5, 1}, 400, "4dEx INT8x4");
    /* Nd with 3 to 8 dims */
    for (int rank = 3; rank <= 8; rank++) {
        int dims[8], strides[8], s = 1;
        for (int d = rank - 1; d >= 0; d--) {
            dims[d] = d % 3 + 1;
            strides[d] = s;
            s *= dims[d];
        }
        CHECK_OK(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_DOUBLE, rank, dims, strides));
        expect_layout(t, CUDNN_DATA_DOUBLE, rank, dims, strides, (size_t)s * 8, "Nd packed");
    }
    /* the requested count bounds what is written; *nbDims is the real rank */
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 16, 5, 5));
    cudnnDataType_t dt;
    int nb = 0, gd[4] = {-7, -7, -7, -7}, gs[4] = {-7, -7, -7, -7};
    CHECK_OK(cudnnGetTensorNdDescriptor(t, 2, &dt, &nb, gd, gs));
    CHECK(nb == 4 && gd[0] == 1 && gd[1] == 16 && gs[0] == 400 && gs[1] == 25 && gd[2] == -7 && gs[2] == -7);
    CHECK_OK(cudnnGetTensorNdDescriptor(t, 0, &dt, &nb, NULL, NULL));
    CHECK(nb == 4 && dt == CUDNN_DATA_FLOAT);
    CHECK_OK(cudnnDestroyTensorDescriptor(t));
}

TEST_ONCE(tensor_nd_ex_formats)
{
    cudnnTensorDescriptor_t t = new_tensor();
    CHECK_OK(cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, (int[]){1, 4, 5, 5}));
    expect_layout(t, CUDNN_DATA_FLOAT, 4, (int[]){1, 4, 5, 5}, (int[]){100, 25, 5, 1}, 400, "NdEx NCHW");
    CHECK_OK(cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 4, (int[]){1, 16, 5, 5}));
    expect_layout(t, CUDNN_DATA_INT8x4, 4, (int[]){1, 16, 5, 5}, (int[]){100, 25, 5, 1}, 400, "NdEx VECT_C");
    /* NDHWC: channels innermost, then W, H, D, N */
    CHECK_OK(cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 5, (int[]){2, 3, 4, 5, 6}));
    expect_layout(t, CUDNN_DATA_HALF, 5, (int[]){2, 3, 4, 5, 6}, (int[]){360, 1, 90, 18, 3}, 720 * 2, "NdEx NDHWC");
    CHECK_OK(cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 3, (int[]){2, 3, 4}));
    expect_layout(t, CUDNN_DATA_FLOAT, 3, (int[]){2, 3, 4}, (int[]){12, 1, 3}, 96, "NdEx 3-D NHWC");
    CHECK_OK(cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x32, 5, (int[]){1, 64, 2, 3, 4}));
    expect_layout(t, CUDNN_DATA_INT8x32, 5, (int[]){1, 64, 2, 3, 4}, (int[]){48, 24, 12, 4, 1}, 1536, "NdEx INT8x32");
    CHECK_OK(cudnnDestroyTensorDescriptor(t));
}

/* Negative strides (reversed views, the data pointer at element (0,...,0)) are set and read back
   as given, as NVIDIA's library takes them (bench/parity.c, negstride_set); the size in bytes is
   the span from the lowest element to one past the highest, part of it below the pointer. A
   stride of 0 stays refused on a dim of extent above 1 and taken on one of extent 1. */
TEST_ONCE(tensor_negative_strides)
{
    cudnnTensorDescriptor_t t = new_tensor();
    /* the parity probe's view: 1x1x2x3 over 0..5, both inner dims reversed: span 6 floats */
    CHECK_OK(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, (int[]){1, 1, 2, 3}, (int[]){6, 6, -3, -1}));
    expect_layout(t, CUDNN_DATA_FLOAT, 4, (int[]){1, 1, 2, 3}, (int[]){6, 6, -3, -1}, 24, "Nd reversed H and W");
    /* one dim reversed, one with a gap: offsets 0..4*2 forward along W, 0, -20 along H: span 20 + 8 + 1 */
    CHECK_OK(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_HALF, 1, 1, 2, 5, 40, 40, -20, 2));
    expect_layout(t, CUDNN_DATA_HALF, 4, (int[]){1, 1, 2, 5}, (int[]){40, 40, -20, 2}, 29 * 2, "4dEx mixed");
    /* the 1-D probe: 3 elements two apart from the last of 0..4 */
    CHECK_OK(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, (int[]){3, 1, 1, 1}, (int[]){-2, 1, 1, 1}));
    expect_layout(t, CUDNN_DATA_FLOAT, 4, (int[]){3, 1, 1, 1}, (int[]){-2, 1, 1, 1}, 5 * 4, "Nd 1-D reversed");
    /* negative strides on dims of extent 1 are never stepped: the size is one element's */
    CHECK_OK(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_DOUBLE, 3, (int[]){1, 1, 1}, (int[]){-7, -1, 0}));
    expect_layout(t, CUDNN_DATA_DOUBLE, 3, (int[]){1, 1, 1}, (int[]){-7, -1, 0}, 8, "extent-1 dims");
    /* a vector type: strides in vectors, C reversed by whole vectors: 2 vectors of 4 and 3 pixels */
    CHECK_OK(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_INT8x4, 1, 8, 1, 3, 6, -3, 3, 1));
    expect_layout(t, CUDNN_DATA_INT8x4, 4, (int[]){1, 8, 1, 3}, (int[]){6, -3, 3, 1}, 24, "INT8x4 reversed C");
    /* every dim reversed, 5-D: span as if packed */
    CHECK_OK(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 5, (int[]){2, 3, 2, 2, 2}, (int[]){-24, -8, -4, -2, -1}));
    expect_layout(t, CUDNN_DATA_FLOAT, 5, (int[]){2, 3, 2, 2, 2}, (int[]){-24, -8, -4, -2, -1}, 48 * 4, "5-D reversed");
    CHECK_OK(cudnnDestroyTensorDescriptor(t));
}

/* A refused call: the status it returned, the one the documentation gives, and what it was. */
struct refusal {
    cudnnStatus_t got, want;
    const char *what;
};

static void check_refusal(const struct refusal *r)
{
    if (r->got != r->want)
        FAIL("%s: returned %s, expected %s", r->what, cudnnGetErrorString(r->got), cudnnGetErrorString(r->want));
}

/* Each refusal: its status, and the descriptor still reads back as the NCHW float 2x3x4x5. */
TEST_ONCE(tensor_refusals_leave_the_descriptor_unchanged)
{
    cudnnTensorDescriptor_t t = new_tensor(), dead = new_tensor();
    CHECK_OK(cudnnDestroyTensorDescriptor(dead));
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM, NS = CUDNN_STATUS_NOT_SUPPORTED;
    CHECK_OK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5));
    const int four[] = {2, 3, 4, 5}, packed[] = {60, 20, 5, 1};
    struct refusal cases[] = {
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 4, 5), BAD, "negative n"},
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 0, 4, 5), BAD, "zero c"},
        {cudnnSetTensor4dDescriptor(t, (cudnnTensorFormat_t)3, CUDNN_DATA_FLOAT, 2, 3, 4, 5), BAD, "bad format"},
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, (cudnnDataType_t)42, 2, 3, 4, 5), BAD, "bad type"},
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8, 2, 8, 4, 5), BAD, "VECT_C int8"},
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 2, 6, 4, 5), BAD, "C % 4"},
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x32, 2, 16, 4, 5), BAD, "C % 32"},
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_INT8x4, 2, 8, 4, 5), BAD, "INT8x4 in NCHW"},
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_UINT8x4, 2, 8, 4, 5), BAD, "UINT8x4 in NHWC"},
        {cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2048, 1024, 1024, 1), NS, "2^31 elements"},
        {cudnnSetTensor4dDescriptor(NULL, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5), BAD, "NULL descriptor"},
        {cudnnSetTensor4dDescriptor(dead, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5), BAD, "destroyed"},
        {cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 2, 3, 4, 5, 60, 20, 5, 0), BAD, "zero stride"},
        {cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 2, 3, 4, -5, 60, 20, 5, 1), BAD, "negative w"},
        {cudnnSetTensor4dDescriptorEx(t, (cudnnDataType_t)-1, 2, 3, 4, 5, 60, 20, 5, 1), BAD, "4dEx bad type"},
        {cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_INT8x4, 2, 6, 4, 5, 60, 20, 5, 1), BAD, "4dEx C % 4"},
        {cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 3, 3, 4, 5, 1 << 30, 20, 5, 1), NS, "strides span 2^31"},
        {cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 3, 3, 4, 5, -(1 << 30), 20, 5, 1), NS,
         "negative strides span 2^31"},
        {cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 2, 3, 4, 5, 60, 20, 0, -1), BAD, "zero stride beside a negative"},
        {cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 2, four, packed), NS, "Nd with 2 dims"},
        {cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 0, four, packed), NS, "Nd with 0 dims"},
        {cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 9, four, packed), NS, "Nd with 9 dims"},
        {cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, NULL, packed), BAD, "Nd NULL dims"},
        {cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, four, NULL), BAD, "Nd NULL strides"},
        {cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, (int[]){2, 3, 0, 5}, packed), BAD, "Nd zero dim"},
        {cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, four), BAD, "NdEx 2 dims"},
        {cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 9, four), NS, "NdEx 9 dims"},
        {cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 4, NULL), BAD, "NdEx NULL dims"},
        {cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_HALF, 4, four), BAD, "NdEx VECT_C half"},
        {cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 4, (int[]){2, -3, 4, 5}), BAD,
         "NdEx negative"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_refusal(&cases[i]);
        expect_layout(t, CUDNN_DATA_FLOAT, 4, four, packed, 480, cases[i].what);
    }
    /* getters: bad arguments, nothing written */
    cudnnDataType_t dt = (cudnnDataType_t)-9;
    int n = -9, nb = -9, x = -9, dims[8] = {-9}, strides[8] = {-9};
    size_t size = 99;
    CHECK_STATUS(cudnnGetTensor4dDescriptor(t, &dt, &n, NULL, &x, &x, &x, &x, &x, &x), BAD);
    CHECK_STATUS(cudnnGetTensor4dDescriptor(NULL, &dt, &n, &x, &x, &x, &x, &x, &x, &x), BAD);
    CHECK_STATUS(cudnnGetTensorNdDescriptor(t, -1, &dt, &nb, dims, strides), BAD);
    CHECK_STATUS(cudnnGetTensorNdDescriptor(t, 4, &dt, NULL, dims, strides), BAD);
    CHECK_STATUS(cudnnGetTensorNdDescriptor(t, 4, NULL, &nb, dims, strides), BAD);
    CHECK_STATUS(cudnnGetTensorNdDescriptor(dead, 4, &dt, &nb, dims, strides), BAD);
    CHECK_STATUS(cudnnGetTensorSizeInBytes(t, NULL), BAD);
    CHECK_STATUS(cudnnGetTensorSizeInBytes(dead, &size), BAD);
    CHECK(dt == (cudnnDataType_t)-9 && n == -9 && nb == -9 && x == -9 && dims[0] == -9 && size == 99);
    /* a 5-D descriptor has no 4-D view; an unset one has no layout */
    CHECK_OK(cudnnSetTensorNdDescriptorEx(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 5, (int[]){1, 2, 3, 4, 5}));
    CHECK_STATUS(cudnnGetTensor4dDescriptor(t, &dt, &n, &x, &x, &x, &x, &x, &x, &x), BAD);
    /* (dead first: a descriptor created after it may get its address) */
    CHECK_STATUS(cudnnDestroyTensorDescriptor(dead), BAD);
    cudnnTensorDescriptor_t unset = new_tensor();
    CHECK_STATUS(cudnnGetTensorSizeInBytes(unset, &size), BAD);
    CHECK_STATUS(cudnnGetTensorNdDescriptor(unset, 4, &dt, &nb, dims, strides), BAD);
    CHECK_STATUS(cudnnCreateTensorDescriptor(NULL), BAD);
    CHECK_OK(cudnnDestroyTensorDescriptor(NULL));
    CHECK_OK(cudnnDestroyTensorDescriptor(unset));
    CHECK_OK(cudnnDestroyTensorDescriptor(t));
}

/* ---- filters ------------------------------------------------------------------------------------ */

static void expect_filter(cudnnFilterDescriptor_t f, cudnnDataType_t type, cudnnTensorFormat_t format, int rank,
                          const int dims[], size_t bytes, const char *what)
{
    cudnnDataType_t gt;
    cudnnTensorFormat_t gf;
    int nb = -1, gd[8];
    size_t size = 0;
    bool ok = CHECK_OK(cudnnGetFilterNdDescriptor(f, 8, &gt, &gf, &nb, gd)) && CHECK_OK(cudnnGetFilterSizeInBytes(f, &size));
    if (!ok || gt != type || gf != format || nb != rank || memcmp(gd, dims, sizeof(int) * (size_t)rank) != 0 ||
        size != bytes) {
        FAIL("%s: read back type %d format %d rank %d size %zu", what, (int)gt, (int)gf, nb, size);
        return;
    }
    if (rank == 4) {
        int k, c, h, w;
        CHECK_OK(cudnnGetFilter4dDescriptor(f, &gt, &gf, &k, &c, &h, &w));
        CHECK(gt == type && gf == format && k == dims[0] && c == dims[1] && h == dims[2] && w == dims[3]);
    }
}

TEST_ONCE(filter_descriptors)
{
    cudnnFilterDescriptor_t f, dead;
    CHECK_STATUS(cudnnCreateFilterDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnCreateFilterDescriptor(&f));
    CHECK_OK(cudnnCreateFilterDescriptor(&dead));
    CHECK_OK(cudnnDestroyFilterDescriptor(dead));
    /* argument order: dataType before format */
    CHECK_OK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 3, 3, 3));
    expect_filter(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, (int[]){2, 3, 3, 3}, 216, "KCRS float");
    CHECK_OK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 8, 4, 1, 1));
    expect_filter(f, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 4, (int[]){8, 4, 1, 1}, 64, "KRSC half");
    CHECK_OK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, 32, 32, 3, 3));
    expect_filter(f, CUDNN_DATA_INT8x32, CUDNN_TENSOR_NCHW_VECT_C, 4, (int[]){32, 32, 3, 3}, 9216, "INT8x32 filter");
    CHECK_OK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW_VECT_C, 4, 8, 2, 2));
    expect_filter(f, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW_VECT_C, 4, (int[]){4, 8, 2, 2}, 128, "INT8x4 filter");
    CHECK_OK(cudnnSetFilterNdDescriptor(f, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 3, (int[]){4, 5, 6}));
    expect_filter(f, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 3, (int[]){4, 5, 6}, 4 * 5 * 6 * 8, "3-D filter");
    CHECK_OK(cudnnSetFilterNdDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 5, (int[]){2, 3, 2, 3, 4}));
    expect_filter(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 5, (int[]){2, 3, 2, 3, 4}, 144 * 4, "5-D KDRSC filter");
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int nb = 0, dims[3] = {-7, -7, -7};
    CHECK_OK(cudnnGetFilterNdDescriptor(f, 2, &dt, &fmt, &nb, dims));
    CHECK(nb == 5 && dims[0] == 2 && dims[1] == 3 && dims[2] == -7);
    /* refusals keep the 5-D float filter */
    const cudnnStatus_t BAD = CUDNN_STATUS_BAD_PARAM, NS = CUDNN_STATUS_NOT_SUPPORTED;
    const int dims5[] = {2, 3, 2, 3, 4};
    struct refusal cases[] = {
        {cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, -2, 3, 3, 3), BAD, "negative k"},
        {cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 3, 0, 3), BAD, "zero h"},
        {cudnnSetFilter4dDescriptor(f, (cudnnDataType_t)50, CUDNN_TENSOR_NCHW, 2, 3, 3, 3), BAD, "bad type"},
        {cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, (cudnnTensorFormat_t)5, 2, 3, 3, 3), BAD, "bad format"},
        {cudnnSetFilter4dDescriptor(f, CUDNN_DATA_INT8, CUDNN_TENSOR_NCHW_VECT_C, 8, 8, 3, 3), BAD, "VECT_C int8"},
        {cudnnSetFilter4dDescriptor(f, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW, 8, 8, 3, 3), BAD, "INT8x4 NCHW"},
        {cudnnSetFilter4dDescriptor(f, CUDNN_DATA_INT8x4, CUDNN_TENSOR_NCHW_VECT_C, 8, 6, 3, 3), BAD, "C % 4"},
        {cudnnSetFilter4dDescriptor(NULL, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 3, 3, 3), BAD, "NULL"},
        {cudnnSetFilter4dDescriptor(dead, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 3, 3, 3), BAD, "destroyed"},
        {cudnnSetFilterNdDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, dims5), BAD, "2 dims"},
        {cudnnSetFilterNdDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 9, dims5), NS, "9 dims"},
        {cudnnSetFilterNdDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, NULL), BAD, "NULL dims"},
        {cudnnSetFilterNdDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, (int[]){2, -3, 3, 3}), BAD, "negative"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_refusal(&cases[i]);
        expect_filter(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, 5, dims5, 144 * 4, cases[i].what);
    }
    int k = -9;
    size_t size = 99;
    CHECK_STATUS(cudnnGetFilter4dDescriptor(f, &dt, &fmt, &k, &k, &k, &k), BAD); /* 5-D */
    CHECK_STATUS(cudnnGetFilterNdDescriptor(f, -1, &dt, &fmt, &nb, dims), BAD);
    CHECK_STATUS(cudnnGetFilterNdDescriptor(f, 3, &dt, &fmt, NULL, dims), BAD);
    CHECK_STATUS(cudnnGetFilterSizeInBytes(f, NULL), BAD);
    CHECK_STATUS(cudnnGetFilterSizeInBytes(dead, &size), BAD);
    CHECK(k == -9 && size == 99);
    CHECK_STATUS(cudnnDestroyFilterDescriptor(dead), BAD); /* before a new one can take its address */
    cudnnFilterDescriptor_t unset;
    CHECK_OK(cudnnCreateFilterDescriptor(&unset));
    CHECK_STATUS(cudnnGetFilterSizeInBytes(unset, &size), BAD);
    CHECK_OK(cudnnDestroyFilterDescriptor(unset));
    CHECK_OK(cudnnDestroyFilterDescriptor(NULL));
    CHECK_OK(cudnnDestroyFilterDescriptor(f));
}
