/* pooling.c: tests of the pooling descriptor, the output-dimension queries, cudnnPoolingForward and
   cudnnPoolingBackward against ref/pooling.c, by finite differences, and on bad input. */
#include "ref/pooling.h"
#include "test.h"
#include "tensors.h"

#include <math.h>
#include <stdlib.h>
#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

static const cudnnDataType_t float_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                              CUDNN_DATA_BFLOAT16};
static const cudnnPoolingMode_t modes[] = {CUDNN_POOLING_MAX, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                           CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                           CUDNN_POOLING_MAX_DETERMINISTIC};

/* A pooling problem; the output has the advised extent plus `extra` in each spatial dim. */
struct pcase {
    const char *name;
    int nb, n, c, in[3], window[3], pad[3], stride[3], extra;
};
static const struct pcase cases[] = {
    {"2x2 stride 2", 2, 2, 3, {4, 6}, {2, 2}, {0, 0}, {2, 2}, 0},
    {"3x3 stride 2 pad 1, odd", 2, 2, 5, {7, 5}, {3, 3}, {1, 1}, {2, 2}, 0},
    {"padding over half the window", 2, 1, 4, {5, 6}, {3, 2}, {2, 1}, {1, 1}, 0},
    {"stride beyond the window", 2, 2, 3, {8, 7}, {2, 2}, {0, 0}, {3, 3}, 0},
    {"1x1 image", 2, 3, 2, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 0},
    {"1x1 image, 3x3 window pad 1", 2, 2, 3, {1, 1}, {3, 3}, {1, 1}, {1, 1}, 0},
    {"padding wider than the window", 2, 1, 2, {4, 3}, {2, 2}, {3, 3}, {2, 2}, 0},
    {"output larger than advised", 2, 1, 2, {3, 3}, {2, 2}, {0, 0}, {2, 2}, 2},
    {"3-D 2x2x2 stride 2", 3, 2, 3, {4, 5, 3}, {2, 2, 2}, {0, 0, 0}, {2, 2, 2}, 0},
    {"3-D 3x3x3 pad 1, strides 1 2 1", 3, 1, 2, {3, 4, 5}, {3, 3, 3}, {1, 1, 1}, {1, 2, 1}, 0},
    {"1-D", 1, 2, 3, {9}, {3}, {1}, {2}, 0},
};

static void out_dims(const struct pcase *pc, int out[])
{
    for (int i = 0; i < pc->nb; i++)
        out[i] = 1 + (pc->in[i] + 2 * pc->pad[i] - pc->window[i]) / pc->stride[i] + pc->extra;
}

static cudnnPoolingDescriptor_t make_desc(const struct pcase *pc, cudnnPoolingMode_t mode, cudnnNanPropagation_t nan)
{
    cudnnPoolingDescriptor_t d = NULL;
    CHECK_OK(cudnnCreatePoolingDescriptor(&d));
    CHECK_OK(cudnnSetPoolingNdDescriptor(d, mode, nan, pc->nb, pc->window, pc->pad, pc->stride));
    return d;
}

static struct ref_pool ref_of(const struct pcase *pc, cudnnPoolingMode_t mode, bool propagate)
{
    struct ref_pool r = {mode, propagate, pc->nb, {0}, {0}, {0}};
    for (int i = 0; i < pc->nb; i++) {
        r.window[i] = pc->window[i];
        r.pad[i] = pc->pad[i];
        r.stride[i] = pc->stride[i];
    }
    return r;
}

/* The tensors of a case: x and y in their layouts. */
static void tensors(const struct pcase *pc, cudnnDataType_t t, enum tview_layout lx, enum tview_layout ly, struct tview *tx,
                    struct tview *ty)
{
    int xd[5] = {pc->n, pc->c}, yd[5] = {pc->n, pc->c}, out[3];
    out_dims(pc, out);
    for (int i = 0; i < pc->nb; i++) {
        xd[2 + i] = pc->in[i];
        yd[2 + i] = out[i];
    }
    tview_init(tx, t, pc->nb + 2, xd, lx);
    tview_init(ty, t, pc->nb + 2, yd, ly);
}

/* Destroys a check's pooling descriptor, its buffers on x's view (x and dx) and on y's (y and
   dy), NULL ones skipped, and the two views. */
static void release(cudnnPoolingDescriptor_t d, struct tview *tx, void *px, void *pdx, struct tview *ty, void *py,
                    void *pdy)
{
    cudnnDestroyPoolingDescriptor(d);
    void *on_x[2] = {px, pdx}, *on_y[2] = {py, pdy};
    for (int i = 0; i < 2; i++) {
        if (on_x[i]) tview_free(tx, on_x[i]);
        if (on_y[i]) tview_free(ty, on_y[i]);
    }
    tview_destroy(tx);
    tview_destroy(ty);
}

/* ---- descriptor and output dims ------------------------------------------------------------------ */

TEST_ONCE(pooling_descriptor_set_get_destroy)
{
    cudnnPoolingDescriptor_t d;
    CHECK_STATUS(cudnnCreatePoolingDescriptor(NULL), CUDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(cudnnCreatePoolingDescriptor(&d))) return;
    cudnnPoolingMode_t mode;
    cudnnNanPropagation_t nan;
    int v[6], nb = -1, win[8], pad[8], str[8];
    /* never set */
    CHECK_STATUS(cudnnGetPooling2dDescriptor(d, &mode, &nan, v, v + 1, v + 2, v + 3, v + 4, v + 5), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_PROPAGATE_NAN, 3, 2, 1,
                                         -1, 2, 1)); /* negative padding crops: allowed */
    CHECK_OK(cudnnGetPooling2dDescriptor(d, &mode, &nan, v, v + 1, v + 2, v + 3, v + 4, v + 5));
    CHECK(mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING && nan == CUDNN_PROPAGATE_NAN);
    CHECK(v[0] == 3 && v[1] == 2 && v[2] == 1 && v[3] == -1 && v[4] == 2 && v[5] == 1);
    CHECK_OK(cudnnGetPoolingNdDescriptor(d, 8, &mode, &nan, &nb, win, pad, str));
    CHECK(nb == 2 && win[0] == 3 && win[1] == 2 && pad[1] == -1 && str[0] == 2);
    /* Bad settings: BAD_PARAM, descriptor unchanged. */
    CHECK_STATUS(cudnnSetPooling2dDescriptor(d, (cudnnPoolingMode_t)4, CUDNN_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, (cudnnNanPropagation_t)5, 2, 2, 0, 0, 2, 2),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, -2, 2, 0, 0, 2, 2),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, 0, 0, 0, 2, 2),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, 2, 0, 0, -1, 2),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 2, 2, 0, 0, 2, 0),
                 CUDNN_STATUS_BAD_PARAM);
    const int w3[3] = {2, 2, 2}, p3[3] = {0, 0, 0}, s3[3] = {1, 1, 1};
    CHECK_STATUS(cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 0, w3, p3, s3),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 7, w3, p3, s3),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 3, NULL, p3, s3),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetPooling2dDescriptor(d, &mode, &nan, v, v + 1, v + 2, v + 3, v + 4, v + 5));
    CHECK(mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING && v[0] == 3 && v[3] == -1);
    /* Nd with 3 dims: Get2d refuses it, GetNd returns as many as asked. */
    CHECK_OK(cudnnSetPoolingNdDescriptor(d, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_NOT_PROPAGATE_NAN, 3, w3, p3, s3));
    CHECK_STATUS(cudnnGetPooling2dDescriptor(d, &mode, &nan, v, v + 1, v + 2, v + 3, v + 4, v + 5), CUDNN_STATUS_BAD_PARAM);
    win[1] = -7;
    CHECK_OK(cudnnGetPoolingNdDescriptor(d, 1, &mode, &nan, &nb, win, pad, str));
    CHECK(nb == 3 && win[0] == 2 && win[1] == -7 && mode == CUDNN_POOLING_MAX_DETERMINISTIC);
    CHECK_STATUS(cudnnGetPoolingNdDescriptor(d, 9, &mode, &nan, &nb, win, pad, str), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetPoolingNdDescriptor(d, 3, &mode, &nan, NULL, win, pad, str), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetPooling2dDescriptor(NULL, &mode, &nan, v, v + 1, v + 2, v + 3, v + 4, v + 5),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyPoolingDescriptor(d));
    CHECK_STATUS(cudnnGetPoolingNdDescriptor(d, 3, &mode, &nan, &nb, win, pad, str), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyPoolingDescriptor(NULL));
}

TEST_ONCE(pooling_output_dims)
{
    for (size_t k = 0; k < TLEN(cases); k++) {
        const struct pcase *pc = &cases[k];
        if (pc->extra) continue;
        struct tview tx, ty;
        tensors(pc, CUDNN_DATA_FLOAT, TV_NCHW, TV_NCHW, &tx, &ty);
        cudnnPoolingDescriptor_t d = make_desc(pc, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN);
        int got[5] = {0};
        if (CHECK_OK(cudnnGetPoolingNdForwardOutputDim(d, tx.desc, pc->nb + 2, got)))
            for (int i = 0; i < pc->nb + 2; i++)
                if (got[i] != ty.dims[i]) FAIL("%s: output dim %d is %d, want %d", pc->name, i, got[i], ty.dims[i]);
        if (pc->nb == 2) {
            int n, c, h, w;
            if (CHECK_OK(cudnnGetPooling2dForwardOutputDim(d, tx.desc, &n, &c, &h, &w)))
                CHECK(n == ty.dims[0] && c == ty.dims[1] && h == ty.dims[2] && w == ty.dims[3]);
        } else {
            int n;
            CHECK_STATUS(cudnnGetPooling2dForwardOutputDim(d, tx.desc, &n, &n, &n, &n), CUDNN_STATUS_BAD_PARAM);
        }
        /* nbDims must be the input's rank and the descriptor's dims + 2 */
        CHECK_STATUS(cudnnGetPoolingNdForwardOutputDim(d, tx.desc, pc->nb + 1, got), CUDNN_STATUS_BAD_PARAM);
        cudnnDestroyPoolingDescriptor(d);
        tview_destroy(&tx);
        tview_destroy(&ty);
    }
    /* The window must fit the padded input; the output pointers must be there. */
    const int dims[4] = {1, 1, 2, 5};
    struct tview t;
    tview_init(&t, CUDNN_DATA_FLOAT, 4, dims, TV_NCHW);
    cudnnPoolingDescriptor_t d;
    cudnnCreatePoolingDescriptor(&d);
    int n = -1, c = -1, h = -1, w = -1, out[4] = {-1, -1, -1, -1};
    CHECK_STATUS(cudnnGetPooling2dForwardOutputDim(d, t.desc, &n, &c, &h, &w), CUDNN_STATUS_BAD_PARAM); /* unset */
    cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 0, 0, 1, 1);
    CHECK_STATUS(cudnnGetPooling2dForwardOutputDim(d, t.desc, &n, &c, &h, &w), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetPoolingNdForwardOutputDim(d, t.desc, 4, out), CUDNN_STATUS_BAD_PARAM);
    CHECK(n == -1 && h == -1 && out[0] == -1);
    cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 0, 1, 2);
    CHECK_OK(cudnnGetPooling2dForwardOutputDim(d, t.desc, &n, &c, &h, &w));
    CHECK(n == 1 && c == 1 && h == 2 && w == 2);
    CHECK_STATUS(cudnnGetPooling2dForwardOutputDim(d, t.desc, &n, &c, NULL, &w), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetPoolingNdForwardOutputDim(d, t.desc, 4, NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyPoolingDescriptor(d);
    tview_destroy(&t);
}

/* ---- forward and backward against the reference ------------------------------------------------ */

static bool check_forward(cudnnDataType_t t, cudnnPoolingMode_t mode, const struct pcase *pc, enum tview_layout lx,
                          enum tview_layout ly, double alpha, double beta)
{
    char what[192];
    snprintf(what, sizeof what, "forward %s type %d mode %d x %s y %s beta %g", pc->name, (int)t, (int)mode,
             tview_layout_name(lx), tview_layout_name(ly), beta);
    struct tview tx, ty;
    tensors(pc, t, lx, ly, &tx, &ty);
    double *x = tview_random(tx.count, -3, 3), *y = beta == 0 ? tview_fill(ty.count, NAN) : tview_random(ty.count, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)ty.count);
    void *px = tview_upload(&tx, x), *py = tview_upload(&ty, y);
    struct ref_pool r = ref_of(pc, mode, false);
    ref_pooling_forward(&r, pc->n, pc->c, tx.dims + 2, ty.dims + 2, x, want);
    cudnnPoolingDescriptor_t d = make_desc(pc, mode, CUDNN_NOT_PROPAGATE_NAN);
    struct tscale a, b;
    bool ok = CHECK_OK(cudnnPoolingForward(test_handle(), d, tscale(&a, t, alpha), tx.desc, px, tscale(&b, t, beta),
                                           ty.desc, py));
    ok = ok && tview_check_blend(&ty, py, want, y, alpha, beta, ttolerance(t), what);
    ok = ok && tview_holds(&tx, px, x, what);
    release(d, &tx, px, NULL, &ty, py, NULL);
    free(x), free(y), free(want);
    return ok;
}

/* x and dx in layout lx, y and dy in ly (the API wants each pair alike). */
static bool check_backward(cudnnDataType_t t, cudnnPoolingMode_t mode, const struct pcase *pc, enum tview_layout lx,
                           enum tview_layout ly, double alpha, double beta)
{
    char what[192];
    snprintf(what, sizeof what, "backward %s type %d mode %d x %s y %s beta %g", pc->name, (int)t, (int)mode,
             tview_layout_name(lx), tview_layout_name(ly), beta);
    struct tview tx, ty;
    tensors(pc, t, lx, ly, &tx, &ty);
    double *x = tview_random(tx.count, -3, 3), *g = tview_random(ty.count, -1, 1);
    double *y = malloc(sizeof(double) * (size_t)ty.count);
    double *dx0 = beta == 0 ? tview_fill(tx.count, NAN) : tview_random(tx.count, -1, 1);
    double *want = malloc(sizeof(double) * (size_t)tx.count);
    void *px = tview_upload(&tx, x), *pg = tview_upload(&ty, g), *pdx = tview_upload(&tx, dx0);
    struct ref_pool r = ref_of(pc, mode, false);
    ref_pooling_forward(&r, pc->n, pc->c, tx.dims + 2, ty.dims + 2, x, y);
    void *py = tview_upload(&ty, y);
    ref_pooling_backward(&r, pc->n, pc->c, tx.dims + 2, ty.dims + 2, x, g, want);
    cudnnPoolingDescriptor_t d = make_desc(pc, mode, CUDNN_NOT_PROPAGATE_NAN);
    struct tscale a, b;
    bool ok = CHECK_OK(cudnnPoolingBackward(test_handle(), d, tscale(&a, t, alpha), ty.desc, py, ty.desc, pg, tx.desc,
                                            px, tscale(&b, t, beta), tx.desc, pdx));
    ok = ok && tview_check_blend(&tx, pdx, want, dx0, alpha, beta, ttolerance(t), what);
    ok = ok && tview_holds(&tx, px, x, what) && tview_holds(&ty, pg, g, what);
    release(d, &tx, px, pdx, &ty, py, pg);
    free(x), free(g), free(y), free(dx0), free(want);
    return ok;
}

TEST(pooling_forward_matches_reference)
{
    for (size_t ti = 0; ti < TLEN(float_types); ti++)
        for (size_t m = 0; m < TLEN(modes); m++)
            for (size_t k = 0; k < TLEN(cases); k++)
                for (int l = 0; l < TV_LAYOUTS; l++)
                    if (!check_forward(float_types[ti], modes[m], &cases[k], (enum tview_layout)l,
                                       (enum tview_layout)((l + k) % TV_LAYOUTS), k == 3 ? -2.0 : 1.0, l % 2 ? 0.0 : 0.5))
                        return;
}

TEST(pooling_backward_matches_reference)
{
    for (size_t ti = 0; ti < TLEN(float_types); ti++)
        for (size_t m = 0; m < TLEN(modes); m++)
            for (size_t k = 0; k < TLEN(cases); k++)
                for (int l = 0; l < TV_LAYOUTS; l++)
                    if (!check_backward(float_types[ti], modes[m], &cases[k], (enum tview_layout)l,
                                        (enum tview_layout)((l + k) % TV_LAYOUTS), k == 2 ? 0.5 : 1.0, l % 2 ? 0.0 : 0.25))
                        return;
}

/* Channel counts that are and are not multiples of a 16-byte vector, for the NHWC paths. */
TEST(pooling_channel_tails)
{
    static const struct pcase wide[] = {
        {"NHWC, 16 channels", 2, 2, 16, {6, 6}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"NHWC, 24 channels, 3-D", 3, 1, 24, {3, 4, 4}, {2, 2, 2}, {0, 1, 0}, {1, 2, 2}, 0},
        {"NHWC, 13 channels", 2, 2, 13, {5, 4}, {2, 2}, {0, 0}, {2, 2}, 0},
    };
    for (size_t ti = 0; ti < TLEN(float_types); ti++)
        for (size_t m = 0; m < TLEN(modes); m++)
            for (size_t k = 0; k < TLEN(wide); k++)
                if (!check_forward(float_types[ti], modes[m], &wide[k], TV_NHWC, TV_NHWC, 1.0, m % 2 ? 0.5 : 0.0) ||
                    !check_backward(float_types[ti], modes[m], &wide[k], TV_NHWC, TV_NHWC, 1.0, m % 2 ? 0.0 : 0.5))
                    return;
}

/* Forward and backward of each case, every float type and mode, NCHW and NHWC alike: the
   forward blends (beta 0.5) on the cases of parity `blended`, the backward on the others; the
   forward's alpha is odd_alpha on the odd cases, 1 elsewhere; the backward's odd_alpha on every
   other case it does not blend (alpha 1 without blending has kernels of its own). */
static void check_kernel_edges(const struct pcase *cases, size_t n, size_t blended, double odd_alpha)
{
    for (size_t ti = 0; ti < TLEN(float_types); ti++)
        for (size_t m = 0; m < TLEN(modes); m++)
            for (size_t k = 0; k < n; k++)
                for (int l = TV_NCHW; l <= TV_NHWC; l++) {
                    enum tview_layout lay = (enum tview_layout)l;
                    bool fwd_blends = k % 2 == blended;
                    if (!check_forward(float_types[ti], modes[m], &cases[k], lay, lay, k % 2 ? odd_alpha : 1.0,
                                       fwd_blends ? 0.5 : 0.0) ||
                        !check_backward(float_types[ti], modes[m], &cases[k], lay, lay,
                                        fwd_blends && k % 4 == blended ? odd_alpha : 1.0, fwd_blends ? 0.0 : 0.5))
                        return;
                }
}

/* Shapes at the edges of the CUDA tile kernels (cuda/pooling_tile.cu): rows too wide for one band in
   shared memory (bands of rows, the last one short), a last chunk of channel groups that is
   partial, and planes small enough that a block takes several; in both layouts. */
TEST(pooling_tile_edges)
{
    static const struct pcase edges[] = {
        {"wide rows, bands of rows", 2, 1, 3, {23, 1001}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"wide rows, 16 channels", 2, 1, 16, {13, 301}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"24 channels, a partial chunk", 2, 2, 24, {7, 5}, {2, 2}, {0, 0}, {2, 2}, 0},
        {"small planes, odd channels", 2, 2, 13, {7, 5}, {3, 3}, {1, 1}, {2, 2}, 1},
    };
    check_kernel_edges(edges, TLEN(edges), 1, 1.0);
}

/* Shapes at the edges of the fixed-window CUDA kernels (cuda/pooling_fixed.cu: 3x3 stride 2 pad 1 and
   2x2 stride 2; in NCHW 4 x 4 outputs a thread forward, 4 inputs backward; NHWC 2 x 2 forward): W a
   multiple of 4 (16-byte loads and stores along W) or not, strips cut by the right border, steps
   and groups of rows cut by the bottom, an output larger than advised, tiny images, images tall
   enough that backward threads walk several chunks of steps, channels a multiple of a 16-byte
   vector (NHWC) or not. */
TEST(pooling_fixed_windows)
{
    static const struct pcase fixed[] = {
        {"3x3/2 pad 1, W 16", 2, 2, 8, {9, 16}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"3x3/2 pad 1, odd W", 2, 1, 16, {12, 19}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"3x3/2 pad 1, W 32, 3 groups of rows", 2, 1, 8, {19, 32}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"3x3/2 pad 1, W 12: half of a strip of 8 columns", 2, 1, 8, {9, 12}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"3x3/2 pad 1, W 20", 1, 2, 8, {7, 20}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"3x3/2 pad 1, larger output", 2, 1, 8, {7, 8}, {3, 3}, {1, 1}, {2, 2}, 2},
        {"3x3/2 pad 1, 2x1 image", 2, 2, 16, {2, 1}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"2x2/2, W 24", 2, 2, 8, {10, 24}, {2, 2}, {0, 0}, {2, 2}, 0},
        {"2x2/2, odd H and W", 2, 1, 24, {11, 13}, {2, 2}, {0, 0}, {2, 2}, 0},
        {"2x2/2, larger output", 2, 1, 8, {4, 4}, {2, 2}, {0, 0}, {2, 2}, 1},
        {"3x3/2 pad 1, tall: chunks of steps, the last short", 2, 2, 8, {37, 6}, {3, 3}, {1, 1}, {2, 2}, 0},
        {"2x2/2, tall, odd W", 2, 1, 16, {35, 5}, {2, 2}, {0, 0}, {2, 2}, 0},
    };
    check_kernel_edges(fixed, TLEN(fixed), 0, 2.0);
}

/* The channels-last max backward in half and bfloat16 (cuda/pooling_fixed_pairs.cu) walks whole columns of
   cells when its columns (images x groups of 8 channels x pairs of image columns) fill at least
   3/4 of the threads resident on the device (512 an SM), chunks of steps otherwise: an image count
   that fills them on the device under test (on the host backend, on 2 SMs' worth), alpha 1 without
   blending and blended. */
TEST(pooling_fixed_whole_columns)
{
    int sms = 2;
#ifdef OCD_TEST_CUDA
    int dev = 0;
    if (test_backend[0] == 'c' && (cudaGetDevice(&dev) != cudaSuccess ||
                                   cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess))
        sms = 2;
#endif
    const int columns_per_image = 8 * 7; /* 8 groups of channels (64), 7 pairs of columns (14) */
    const int n = sms * 512 / columns_per_image;
    struct pcase pc = {"3x3/2 pad 1, whole columns", 2, n, 64, {9, 14}, {3, 3}, {1, 1}, {2, 2}, 0};
    const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    for (size_t ti = 0; ti < TLEN(types); ti++)
        for (int blend = 0; blend < 2; blend++) {
            const double alpha = blend ? 2.0 : 1.0, beta = blend ? 0.5 : 0.0;
            if (!check_backward(types[ti], CUDNN_POOLING_MAX, &pc, TV_NHWC, TV_NHWC, alpha, beta)) return;
        }
}

/* Ties and NaN in 3x3 stride 2 windows that overlap (the fixed kernels scan windows that cross
   the border as those inside, from a best value nothing loses to): the first maximum takes the
   gradient, NaN dropped or propagated, in both layouts and half and bfloat16 precision, W odd or a
   multiple of 4 (16-byte vectors along W). */
static void check_ties_nan(const struct pcase *pc, int nan, cudnnDataType_t t, enum tview_layout l)
{
    struct tview tx, ty;
    tensors(pc, t, l, l, &tx, &ty);
    double *x = tview_random(tx.count, -2, 2), *y = malloc(sizeof(double) * (size_t)ty.count);
    double *want = malloc(sizeof(double) * (size_t)tx.count);
    for (int64_t i = 0; i < tx.count; i++) x[i] = i % 11 == 3 ? NAN : (double)(int)(x[i] * 1.5); /* ties */
    for (int64_t i = 0; i < 2 * pc->in[1]; i++) x[i] = NAN; /* channel 0: two rows of NaN, windows of NaN only */
    double *g = tview_random(ty.count, -1, 1), *z = tview_fill(tx.count, 0);
    void *px = tview_upload(&tx, x), *py = tview_upload(&ty, g), *pg = tview_upload(&ty, g),
         *pdx = tview_upload(&tx, z);
    cudnnPoolingDescriptor_t d = make_desc(pc, CUDNN_POOLING_MAX, (cudnnNanPropagation_t)nan);
    struct ref_pool r = ref_of(pc, CUDNN_POOLING_MAX, nan);
    float one = 1, zero = 0;
    char what[128];
    snprintf(what, sizeof what, "%s and NaN, propagate %d, type %d, %s", pc->name, nan, (int)t, tview_layout_name(l));
    ref_pooling_forward(&r, pc->n, pc->c, tx.dims + 2, ty.dims + 2, x, y);
    CHECK_OK(cudnnPoolingForward(test_handle(), d, &one, tx.desc, px, &zero, ty.desc, py));
    tview_check_blend(&ty, py, y, y, 1, 0, ttolerance(t), what);
    ref_pooling_backward(&r, pc->n, pc->c, tx.dims + 2, ty.dims + 2, x, g, want);
    CHECK_OK(cudnnPoolingBackward(test_handle(), d, &one, ty.desc, py, ty.desc, pg, tx.desc, px, &zero, tx.desc, pdx));
    tview_check_blend(&tx, pdx, want, want, 1, 0, ttolerance(t), what);
    release(d, &tx, px, pdx, &ty, py, pg);
    free(x), free(y), free(want), free(g), free(z);
}

TEST(pooling_fixed_ties_nan)
{
    static const struct pcase shapes[] = {{"ties", 2, 1, 8, {7, 9}, {3, 3}, {1, 1}, {2, 2}, 0},
                                          {"ties, W 16", 2, 1, 8, {9, 16}, {3, 3}, {1, 1}, {2, 2}, 0}};
    const cudnnDataType_t types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};
    for (size_t k = 0; k < TLEN(shapes); k++)
        for (int nan = 0; nan < 2; nan++)
            for (int ti = 0; ti < 3; ti++)
                for (int l = TV_NCHW; l <= TV_NHWC; l++)
                    check_ties_nan(&shapes[k], nan, types[ti], (enum tview_layout)l);
}

/* Calls in sequence on one stream, no host wait between them (the channels-last max backward is
   launched early, cuda/launch.cuh): x written by a scale just before the backward reads it, then
   a second backward blending into the first's dx. dx = the gradients of dy1 and dy2 at 2 x. */
TEST(pooling_backward_in_sequence)
{
    static const struct pcase pc = {"3x3/2 pad 1", 2, 8, 64, {28, 28}, {3, 3}, {1, 1}, {2, 2}, 0};
    const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT};
    for (size_t ti = 0; ti < TLEN(types); ti++) {
        const cudnnDataType_t t = types[ti];
        struct tview tx, ty;
        tensors(&pc, t, TV_NHWC, TV_NHWC, &tx, &ty);
        double *x = tview_random(tx.count, -3, 3), *g1 = tview_random(ty.count, -1, 1);
        double *g2 = tview_random(ty.count, -1, 1), *nan = tview_fill(tx.count, NAN);
        double *want = malloc(sizeof(double) * (size_t)tx.count), *more = malloc(sizeof(double) * (size_t)tx.count);
        double *y = malloc(sizeof(double) * (size_t)ty.count);
        void *px = tview_upload(&tx, x), *pg1 = tview_upload(&ty, g1), *pg2 = tview_upload(&ty, g2),
             *pdx = tview_upload(&tx, nan);
        for (int64_t i = 0; i < tx.count; i++) x[i] *= 2; /* exact in every type */
        struct ref_pool r = ref_of(&pc, CUDNN_POOLING_MAX, false);
        ref_pooling_forward(&r, pc.n, pc.c, tx.dims + 2, ty.dims + 2, x, y); /* y of the scaled x */
        void *py = tview_upload(&ty, y);
        ref_pooling_backward(&r, pc.n, pc.c, tx.dims + 2, ty.dims + 2, x, g1, want);
        ref_pooling_backward(&r, pc.n, pc.c, tx.dims + 2, ty.dims + 2, x, g2, more);
        for (int64_t i = 0; i < tx.count; i++) want[i] += more[i];
        cudnnPoolingDescriptor_t d = make_desc(&pc, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN);
        struct tscale two, one, zero;
        char what[96];
        snprintf(what, sizeof what, "backward in sequence, type %d", (int)t);
        bool ok = CHECK_OK(cudnnScaleTensor(test_handle(), tx.desc, px, tscale(&two, t, 2)));
        ok = ok && CHECK_OK(cudnnPoolingBackward(test_handle(), d, tscale(&one, t, 1), ty.desc, py, ty.desc, pg1,
                                                 tx.desc, px, tscale(&zero, t, 0), tx.desc, pdx));
        ok = ok && CHECK_OK(cudnnPoolingBackward(test_handle(), d, tscale(&one, t, 1), ty.desc, py, ty.desc, pg2,
                                                 tx.desc, px, tscale(&one, t, 1), tx.desc, pdx));
        if (ok) tview_check_blend(&tx, pdx, want, want, 1, 0, 2 * ttolerance(t), what);
        tview_free(&ty, pg2);
        release(d, &tx, px, pdx, &ty, py, pg1);
        free(x), free(y), free(g1), free(g2), free(nan), free(want), free(more);
    }
}

/* The averaging backward never reads x or y, so frameworks pass the forward's y buffer as dy
   and x's as dx (docs/compatibility.md): dx = alpha * g + beta * (what x held), as without
   aliasing. The MAX modes read x and are refused on it. */
TEST(pooling_backward_average_aliased)
{
    static const struct pcase pc = {"3x3 stride 2 pad 1", 2, 2, 16, {7, 9}, {3, 3}, {1, 1}, {2, 2}, 0};
    const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    const cudnnPoolingMode_t avg[] = {CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                      CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING};
    for (size_t ti = 0; ti < TLEN(types); ti++)
        for (size_t m = 0; m < TLEN(avg); m++)
            for (int l = 0; l < 2; l++) {
                const cudnnDataType_t t = types[ti];
                const enum tview_layout lay = l ? TV_NHWC : TV_NCHW;
                const double beta = l ? 0.5 : 0.0;
                char what[128];
                snprintf(what, sizeof what, "aliased average backward type %d mode %d %s beta %g", (int)t,
                         (int)avg[m], tview_layout_name(lay), beta);
                struct tview tx, ty;
                tensors(&pc, t, lay, lay, &tx, &ty);
                double *xs = tview_random(tx.count, -1, 1), *g = tview_random(ty.count, -1, 1);
                double *want = malloc(sizeof(double) * (size_t)tx.count);
                void *pxdx = tview_upload(&tx, xs), *pydy = tview_upload(&ty, g);
                struct ref_pool r = ref_of(&pc, avg[m], false);
                ref_pooling_backward(&r, pc.n, pc.c, tx.dims + 2, ty.dims + 2, xs, g, want);
                cudnnPoolingDescriptor_t d = make_desc(&pc, avg[m], CUDNN_NOT_PROPAGATE_NAN);
                struct tscale a, b;
                if (CHECK_OK(cudnnPoolingBackward(test_handle(), d, tscale(&a, t, 1.5), ty.desc, pydy, ty.desc, pydy,
                                                  tx.desc, pxdx, tscale(&b, t, beta), tx.desc, pxdx)))
                    tview_check_blend(&tx, pxdx, want, xs, 1.5, beta, ttolerance(t), what);
                release(d, &tx, pxdx, NULL, &ty, pydy, NULL);
                free(xs), free(g), free(want);
            }
}

/* n values in [-3, 3], no two within 1e-4 of each other: max pooling's gradient goes to a window's
   largest value, and two values closer than the central difference's step trade places within it,
   the difference then mixing their gradients (about 1 seed in 1,000 with plain draws). */
static double *distinct_random(int64_t n)
{
    double *x = tview_random(n, -3, 3);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < j; i++)
            if (fabs(x[i] - x[j]) < 1e-4) {
                x[j] = trand_uniform(-3, 3);
                i = -1; /* check the new value against every earlier one */
            }
    return x;
}

/* dx is the gradient of sum(dy * y(x)): central differences of the library's forward, double. */
TEST(pooling_backward_finite_differences)
{
    const double h = 1e-6, one = 1, zero = 0;
    for (size_t m = 0; m < TLEN(modes); m++)
        for (size_t k = 0; k < TLEN(cases); k += 2) {
            const struct pcase *pc = &cases[k];
            struct tview tx, ty;
            tensors(pc, CUDNN_DATA_DOUBLE, TV_NCHW, TV_NCHW, &tx, &ty);
            double *x = distinct_random(tx.count), *g = tview_random(ty.count, -1, 1);
            double *z = tview_fill(tx.count, 0), *y = malloc(sizeof(double) * (size_t)ty.count);
            double *dx = malloc(sizeof(double) * (size_t)tx.count), *fd = malloc(sizeof(double) * (size_t)tx.count);
            cudnnPoolingDescriptor_t d = make_desc(pc, modes[m], CUDNN_NOT_PROPAGATE_NAN);
            void *px = tview_upload(&tx, x), *pg = tview_upload(&ty, g), *py = tview_upload(&ty, g),
                 *pdx = tview_upload(&tx, z);
            CHECK_OK(cudnnPoolingForward(test_handle(), d, &one, tx.desc, px, &zero, ty.desc, py));
            CHECK_OK(cudnnPoolingBackward(test_handle(), d, &one, ty.desc, py, ty.desc, pg, tx.desc, px, &zero, tx.desc,
                                          pdx));
            tview_download(&tx, pdx, dx);
            for (int64_t j = 0; j < tx.count; j++) {
                double l[2], save = x[j];
                for (int s = 0; s < 2; s++) {
                    x[j] = save + (s ? h : -h);
                    void *pxh = tview_upload(&tx, x);
                    CHECK_OK(cudnnPoolingForward(test_handle(), d, &one, tx.desc, pxh, &zero, ty.desc, py));
                    tview_download(&ty, py, y);
                    l[s] = 0;
                    for (int64_t i = 0; i < ty.count; i++) l[s] += g[i] * y[i];
                    tview_free(&tx, pxh);
                }
                x[j] = save;
                fd[j] = (l[1] - l[0]) / (2 * h);
            }
            char what[128];
            snprintf(what, sizeof what, "finite differences, %s, mode %d", pc->name, (int)modes[m]);
            tcompare(CUDNN_DATA_DOUBLE, dx, fd, tx.count, 1e-7, what);
            release(d, &tx, px, pdx, &ty, py, pg);
            free(x), free(g), free(z), free(y), free(dx), free(fd);
        }
}

/* NaN in a max window: dropped (NOT_PROPAGATE) or the result (PROPAGATE), the gradient following. */
TEST(pooling_max_nan)
{
    const struct pcase pc = {"nan", 2, 1, 2, {4, 4}, {2, 2}, {0, 0}, {2, 2}, 0};
    for (int nan = 0; nan < 2; nan++) {
        struct tview tx, ty;
        tensors(&pc, CUDNN_DATA_FLOAT, TV_NCHW, TV_NCHW, &tx, &ty);
        double *x = tview_random(32, -2, 2), y[8], want[32], got[32];
        x[0] = NAN;           /* first in its window */
        x[6] = x[7] = NAN;    /* half of another */
        x[16] = x[17] = x[20] = x[21] = NAN; /* a whole window */
        double *g = tview_fill(8, 1), *z = tview_fill(32, 0);
        void *px = tview_upload(&tx, x), *py = tview_upload(&ty, g), *pg = tview_upload(&ty, g),
             *pdx = tview_upload(&tx, z);
        cudnnPoolingDescriptor_t d = make_desc(&pc, CUDNN_POOLING_MAX, (cudnnNanPropagation_t)nan);
        struct ref_pool r = ref_of(&pc, CUDNN_POOLING_MAX, nan);
        float one = 1, zero = 0;
        ref_pooling_forward(&r, 1, 2, tx.dims + 2, ty.dims + 2, x, y);
        CHECK_OK(cudnnPoolingForward(test_handle(), d, &one, tx.desc, px, &zero, ty.desc, py));
        tview_download(&ty, py, got);
        tcompare(CUDNN_DATA_DOUBLE, got, y, 8, 1e-6, nan ? "forward, NaN propagated" : "forward, NaN dropped");
        ref_pooling_backward(&r, 1, 2, tx.dims + 2, ty.dims + 2, x, g, want);
        CHECK_OK(cudnnPoolingBackward(test_handle(), d, &one, ty.desc, py, ty.desc, pg, tx.desc, px, &zero, tx.desc, pdx));
        tview_download(&tx, pdx, got);
        tcompare(CUDNN_DATA_DOUBLE, got, want, 32, 1e-6, nan ? "backward, NaN propagated" : "backward, NaN dropped");
        release(d, &tx, px, pdx, &ty, py, pg);
        free(x), free(g), free(z);
    }
}

/* ---- bad input: the documented status, and nothing written ------------------------------------ */

TEST(pooling_bad_inputs)
{
    const struct pcase pc = {"bad", 2, 2, 3, {4, 4}, {2, 2}, {0, 0}, {2, 2}, 0};
    struct tview tx, ty, tyn, tyd, tyc, tx5, ti, tyi;
    tensors(&pc, CUDNN_DATA_FLOAT, TV_NCHW, TV_NCHW, &tx, &ty);
    const int yn[4] = {2, 3, 2, 2}, yc[4] = {2, 4, 2, 2}, x5[5] = {2, 3, 4, 4, 1};
    tview_init(&tyn, CUDNN_DATA_FLOAT, 4, yn, TV_NHWC);
    tview_init(&tyd, CUDNN_DATA_DOUBLE, 4, yn, TV_NCHW);
    tview_init(&tyc, CUDNN_DATA_FLOAT, 4, yc, TV_NCHW);
    tview_init(&tx5, CUDNN_DATA_FLOAT, 5, x5, TV_NCHW);
    tensors(&pc, CUDNN_DATA_INT8, TV_NCHW, TV_NCHW, &ti, &tyi);
    double *x = tview_random(96, -1, 1), *y = tview_fill(96, 3.0);
    void *px = tview_upload(&tx, x), *py = tview_upload(&ty, y), *pg = tview_upload(&ty, x);
    void *pdx = tview_upload(&tx, y), *pi = tview_upload(&ti, y), *pyi = tview_upload(&tyi, y);
    cudnnPoolingDescriptor_t d = make_desc(&pc, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN), unset;
    cudnnCreatePoolingDescriptor(&unset);
    const int w4[4] = {1, 1, 1, 1}, p4[4] = {0}, s4[4] = {1, 1, 1, 1};
    cudnnPoolingDescriptor_t four;
    cudnnCreatePoolingDescriptor(&four);
    cudnnSetPoolingNdDescriptor(four, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 4, w4, p4, s4);
    const int x6[6] = {1, 1, 2, 2, 2, 2};
    struct tview t6;
    tview_init(&t6, CUDNN_DATA_FLOAT, 6, x6, TV_NCHW);
    void *p6 = tview_upload(&t6, y);
    cudnnHandle_t h = test_handle();
    float one = 1, zero = 0;
#define FWD(handle, desc, al, xd, xp, be, yd, yp, status)                                                     \
    CHECK_STATUS(cudnnPoolingForward(handle, desc, al, xd, xp, be, yd, yp), status);                        \
    tview_holds(&ty, py, y, "y after a rejected forward")
    FWD(NULL, d, &one, tx.desc, px, &zero, ty.desc, py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, NULL, &one, tx.desc, px, &zero, ty.desc, py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, unset, &one, tx.desc, px, &zero, ty.desc, py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, NULL, tx.desc, px, &zero, ty.desc, py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, tx.desc, px, NULL, ty.desc, py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, tx.desc, NULL, &zero, ty.desc, py, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, tx.desc, px, &zero, ty.desc, NULL, CUDNN_STATUS_BAD_PARAM);
    FWD(h, d, &one, tx.desc, px, &zero, tyc.desc, py, CUDNN_STATUS_BAD_PARAM); /* C differs */
    FWD(h, d, &one, tx.desc, px, &zero, tyd.desc, py, CUDNN_STATUS_BAD_PARAM); /* types differ */
    FWD(h, d, &one, tx5.desc, px, &zero, ty.desc, py, CUDNN_STATUS_BAD_PARAM); /* rank vs descriptor */
    FWD(h, d, &one, ty.desc, py, &zero, ty.desc, py, CUDNN_STATUS_BAD_PARAM);  /* in place */
    /* int8 pools forward (compat_pooling_mxnet_quantized_int8); uint8 does not */
    struct tview tu, tyu;
    tensors(&pc, CUDNN_DATA_UINT8, TV_NCHW, TV_NCHW, &tu, &tyu);
    void *pu = tview_upload(&tu, y), *pyu = tview_upload(&tyu, y);
    CHECK_STATUS(cudnnPoolingForward(h, d, &one, tu.desc, pu, &zero, tyu.desc, pyu), CUDNN_STATUS_NOT_SUPPORTED);
    tview_holds(&tyu, pyu, y, "uint8 y after NOT_SUPPORTED");
    tview_free(&tu, pu), tview_free(&tyu, pyu);
    tview_destroy(&tu), tview_destroy(&tyu);
    CHECK_STATUS(cudnnPoolingForward(h, four, &one, t6.desc, p6, &zero, t6.desc, py), CUDNN_STATUS_NOT_SUPPORTED);
    tview_holds(&ty, py, y, "y after NOT_SUPPORTED");

#define BWD(yd, dyd, xd, dxd, xp, dxp, status)                                                                \
    CHECK_STATUS(cudnnPoolingBackward(h, d, &one, yd, py, dyd, pg, xd, xp, &zero, dxd, dxp), status);       \
    tview_holds(&tx, pdx, y, "dx after a rejected backward")
    BWD(ty.desc, tyn.desc, tx.desc, tx.desc, px, pdx, CUDNN_STATUS_BAD_PARAM);  /* strides of y, dy differ */
    BWD(ty.desc, tyc.desc, tx.desc, tx.desc, px, pdx, CUDNN_STATUS_BAD_PARAM);  /* dims of y, dy differ */
    BWD(ty.desc, ty.desc, tx.desc, ty.desc, px, pdx, CUDNN_STATUS_BAD_PARAM);   /* dims of x, dx differ */
    BWD(ty.desc, tyd.desc, tx.desc, tx.desc, px, pdx, CUDNN_STATUS_BAD_PARAM);  /* types differ */
    BWD(ty.desc, ty.desc, tx.desc, tx.desc, NULL, pdx, CUDNN_STATUS_BAD_PARAM); /* x NULL for MAX */
    BWD(ty.desc, ty.desc, tx.desc, tx.desc, px, px, CUDNN_STATUS_BAD_PARAM);    /* dx on x (MAX reads x) */
    BWD(ty.desc, ty.desc, tx.desc, tx.desc, px, (char *)pg + 4, CUDNN_STATUS_BAD_PARAM); /* dx overlaps dy */
    BWD(tyc.desc, tyc.desc, tx.desc, tx.desc, px, pdx, CUDNN_STATUS_BAD_PARAM); /* C of x, y differ */
    void *pdi = tview_upload(&ti, y);
    CHECK_STATUS(cudnnPoolingBackward(h, d, &one, tyi.desc, pyi, tyi.desc, pyi, ti.desc, pi, &zero, ti.desc, pdi),
                 CUDNN_STATUS_NOT_SUPPORTED);
    tview_holds(&ti, pdi, y, "int8 dx after NOT_SUPPORTED");
    tview_free(&ti, pdi);
#undef FWD
#undef BWD
    cudnnDestroyPoolingDescriptor(d);
    cudnnDestroyPoolingDescriptor(unset);
    cudnnDestroyPoolingDescriptor(four);
    void *bufs[] = {px, py, pg, pdx};
    struct tview *owners[] = {&tx, &ty, &ty, &tx};
    for (int i = 0; i < 4; i++) tview_free(owners[i], bufs[i]);
    tview_free(&ti, pi);
    tview_free(&tyi, pyi);
    tview_free(&t6, p6);
    struct tview *all[] = {&tx, &ty, &tyn, &tyd, &tyc, &tx5, &ti, &tyi, &t6};
    for (int i = 0; i < 9; i++) tview_destroy(all[i]);
    free(x);
    free(y);
}
