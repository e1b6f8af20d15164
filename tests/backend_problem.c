/* backend_problem.c: the legacy convolution problem built from a finalized graph convolution
   (ocd_graph_conv_problem, src/graph/graph_problem.c): shape, groups, padding, stride and
   filter layout as the legacy API would derive them from equivalent descriptors, and the
   refusals (a filter layout no legacy format spells); asymmetric padding as the problem of the
   zero-padded input.

   ocd_graph_conv_problem is not an API function: the test reaches it as an ocd_ symbol of
   libcudnn_cnn_infer.so.8 under the private version node, as tests/gemm.c reaches ocd_gemm. */
#include "cnn/conv.h"
#include "graph/graph.h"

#include "test.h"

#include <string.h>

typedef cudnnStatus_t (*problem_fn)(const struct ocd_graph_op *, struct ocd_conv_problem *);

static problem_fn problem_entry(void)
{
    static problem_fn fn;
    if (fn == NULL) {
        *(void **)&fn = test_lib_symbol(OCD_LIBRARY_FILE("cudnn_cnn_infer"), "ocd_graph_conv_problem");
    }
    return fn;
}

/* A packed tensor: NCHW row-major, or channels last when nhwc. */
static struct ocd_graph_tensor packed(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w, bool nhwc)
{
    struct ocd_graph_tensor t = {.uid = uid, .dtype = CUDNN_DATA_FLOAT, .alignment = 4, .rank = 4,
                                 .dims = {n, c, h, w}, .n_strides = 4, .vect_count = 1, .vect_dim = -1};
    if (nhwc) {
        int64_t s[4] = {h * w * c, 1, w * c, c};
        memcpy(t.strides, s, sizeof s);
    } else {
        int64_t s[4] = {c * h * w, h * w, w, 1};
        memcpy(t.strides, s, sizeof s);
    }
    return t;
}

static struct ocd_graph_op conv_fwd(bool nhwc)
{
    struct ocd_graph_op op = {.kind = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                              .present = 7, .outputs = 1u << OCD_GT_CONV_Y, .alpha = 2.0, .beta = 0.5};
    /* x 2x8x9x9, w 6x4x3x3 (2 groups), pad 1, stride 2 -> y 2x6x5x5 */
    op.t[OCD_GT_CONV_X] = packed('x', 2, 8, 9, 9, nhwc);
    op.t[OCD_GT_CONV_W] = packed('w', 6, 4, 3, 3, nhwc);
    op.t[OCD_GT_CONV_Y] = packed('y', 2, 6, 5, 5, nhwc);
    op.p.conv = (struct ocd_graph_conv_desc){.comp = CUDNN_DATA_FLOAT, .mode = CUDNN_CONVOLUTION, .nsp = 2,
                                             .pre = {1, 1}, .post = {1, 1}, .dilation = {1, 1}, .stride = {2, 2},
                                             .n_pre = 2, .n_post = 2, .n_dilation = 2, .n_stride = 2};
    return op;
}

TEST_ONCE(backend_conv_problem_of_graph_op)
{
    problem_fn fn = problem_entry();
    if (!CHECK(fn != NULL)) return;
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        struct ocd_graph_op op = conv_fwd(nhwc);
        struct ocd_conv_problem p;
        if (!CHECK_OK(fn(&op, &p))) continue;
        const struct ocd_conv_shape *s = &p.s;
        CHECK(p.dir == OCD_CONV_FWD && s->nsp == 2 && s->n == 2 && s->c == 8 && s->k == 6 && s->groups == 2);
        CHECK(s->in[0] == 9 && s->filt[1] == 3 && s->out[0] == 5 && s->pad[1] == 1 && s->stride[0] == 2 && s->flip);
        CHECK(p.w_format == (nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW));
        CHECK(p.alpha == 2.0 && p.beta == 0.5 && p.x_data == NULL);
        CHECK(p.x.strides[1] == (nhwc ? 1 : 81));
    }
    struct ocd_graph_op op = conv_fwd(false);
    struct ocd_conv_problem p;
    op.kind = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
    CHECK_OK(fn(&op, &p));
    CHECK(p.dir == OCD_CONV_BWD_DATA);
    /* pre padding 1, post padding 2: the legacy problem has one padding per dim, so the problem is
       the unpadded convolution of x zero-padded to 2x8x12x11 (packed in x's order; the plan pads) */
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        op = conv_fwd(nhwc);
        op.p.conv.post[0] = 2;
        if (!CHECK_OK(fn(&op, &p))) continue;
        CHECK(p.s.in[0] == 12 && p.s.in[1] == 11 && p.s.pad[0] == 0 && p.s.pad[1] == 0 && p.s.out[0] == 5);
        CHECK(nhwc ? p.x.strides[1] == 1 && p.x.strides[3] == 8 && p.x.strides[2] == 88
                   : p.x.strides[1] == 132 && p.x.strides[2] == 11);
    }
    /* padded to 2x8x2^30x2^30 (2^64 elements, which wrap to 0 in 64 bits), stride 2^30: y 2x6x1x1 */
    op = conv_fwd(false);
    op.p.conv.pre[0] = op.p.conv.pre[1] = 0;
    op.p.conv.post[0] = op.p.conv.post[1] = (1 << 30) - 9;
    op.p.conv.stride[0] = op.p.conv.stride[1] = 1 << 30;
    op.t[OCD_GT_CONV_Y] = packed('y', 2, 6, 1, 1, false);
    CHECK_STATUS(fn(&op, &p), CUDNN_STATUS_NOT_SUPPORTED);
    /* a filter whose strides are neither packed NCHW nor NHWC */
    op = conv_fwd(false);
    op.t[OCD_GT_CONV_W].strides[0] = 100;
    CHECK_STATUS(fn(&op, &p), CUDNN_STATUS_NOT_SUPPORTED);
    /* not a convolution */
    op.kind = CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR;
    CHECK_STATUS(fn(&op, &p), CUDNN_STATUS_BAD_PARAM);
}

TEST_ONCE(backend_conv_problem_of_vectorized_op)
{
    problem_fn fn = problem_entry();
    if (!CHECK(fn != NULL)) return;
    /* INT8 x 4 on the channels: 8 channels as 2 vectors, 4 filters */
    struct ocd_graph_op op = conv_fwd(false);
    op.t[OCD_GT_CONV_X] = packed('x', 2, 2, 9, 9, false);
    op.t[OCD_GT_CONV_W] = packed('w', 4, 2, 3, 3, false);
    op.t[OCD_GT_CONV_Y] = packed('y', 2, 1, 5, 5, false);
    for (int s = 0; s < 3; s++) {
        op.t[s].dtype = CUDNN_DATA_INT8;
        op.t[s].vect_count = 4;
        op.t[s].vect_dim = 1;
    }
    op.p.conv.comp = CUDNN_DATA_INT32;
    struct ocd_conv_problem p;
    if (!CHECK_OK(fn(&op, &p))) return;
    CHECK(p.s.c == 8 && p.s.k == 4 && p.s.groups == 1 && p.w_format == CUDNN_TENSOR_NCHW_VECT_C);
    CHECK(p.x.dtype == CUDNN_DATA_INT8x4 && p.x.dims[1] == 8 && p.x.strides[1] == 81 * 4);
}
